"""The web game (``allfives_env.serve``) against clients that misbehave: refused requests change nothing, one
client cannot push out the others' games or start games without end, a long game comes in bounded pages
built off the event loop, a client that hangs up mid-body costs one log line, the Host check reads the
whole header, no answer may be framed by another site, and a lead is named as one. Time is a fake clock.
"""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from typing import Any, Iterator

import pytest

pytest.importorskip("starlette", reason="the web game needs the [play] extra: pip install -e '.[play]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx: pip install -e '.[play]'")

with warnings.catch_warnings():  # Starlette's note on httpx vs httpx2
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

from allfives_env.core.actions import parse_action
from allfives_env.core.game import Game
from allfives_env.serve import app as app_module
from allfives_env.serve import create_app
from allfives_env.serve.app import host_name
from allfives_env.serve.schemas import MAX_SERVED_HANDS, SettingsError
from test_serve_api import new_game, play_out


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def client() -> Iterator[TestClient]:
    """A server whose clock stands still (no game goes idle, no token refills) and whose one client may
    start as many games as a test needs."""
    with TestClient(create_app(new_game_burst=100, clock=Clock())) as c:
        yield c


def _game(client: TestClient, gid: str) -> Game:
    return client.app.state.store.sessions[gid].game  # type: ignore[attr-defined]


def _snapshot(client: TestClient, gid: str) -> tuple[Any, ...]:
    """What a refused request must leave as it was: the events, frames, turn, scores and the end."""
    session = client.app.state.store.sessions[gid]  # type: ignore[attr-defined]
    game = session.game
    return len(game.events), len(session.table.frames), game.current, list(game.scores), game.over


def _game_at(client: TestClient, mine: bool) -> dict[str, Any]:
    """A new game where it is the person's turn (``mine``) with more than one legal move, or an agent's."""
    for seed in range(1, 40):
        state = new_game(client, seed=seed)
        if state["your_turn"] == mine and (not mine or len(state["legal"]) > 1):
            return state
    raise AssertionError("no seed of 1..39 starts that way")


# ---------------------------------------------------------------------------------------------- refusals change nothing
def _post(client: TestClient, path: str, body: Any, content_type: str = "application/json") -> Any:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(path, content=content, headers={"content-type": content_type})


def test_a_refused_move_changes_nothing(client: TestClient) -> None:
    state = _game_at(client, mine=True)
    gid, total = state["id"], state["total"]
    legal = state["legal"][0]["action"]
    illegal = next(a for a in range(28 * 4) if a not in {m["action"] for m in state["legal"]})
    before = _snapshot(client, gid)
    bad = [
        {"action": legal, "since": total + 1}, {"action": legal, "since": 10**9}, {"action": legal, "since": -1},
        {"action": legal, "since": "0"}, {"action": legal, "since": 1.5}, {"action": legal, "since": True},
        {"action": illegal}, {"action": "3"}, {"action": 10**6}, {"since": 0}, {"action": legal, "x": 1},
        [legal], b"{", b'{"action": ' + str(legal).encode(),
    ]
    for body in bad:
        r = _post(client, f"/api/games/{gid}/move", body)
        assert 400 <= r.status_code < 500 and r.json()["error"], (body, r.text)
        assert _snapshot(client, gid) == before, body
    r = _post(client, f"/api/games/{gid}/move", {"action": legal}, content_type="text/plain")
    assert r.status_code == 415 and _snapshot(client, gid) == before
    r = _post(client, f"/api/games/{gid}/ai", {"since": 0})  # the person's turn: no agent may move
    assert r.status_code == 409 and _snapshot(client, gid) == before
    # and the same move, asked properly, is played
    assert _post(client, f"/api/games/{gid}/move", {"action": legal, "since": total}).status_code == 200
    assert _snapshot(client, gid) != before


def test_a_refused_agent_move_changes_nothing(client: TestClient) -> None:
    state = _game_at(client, mine=False)
    gid, total = state["id"], state["total"]
    before = _snapshot(client, gid)
    for body in ({"since": total + 1}, {"since": 1_000_000_000}, {"since": -1}, {"since": "1"}, {"since": None, "x": 0},
                 {"action": 0}, [], b"{", b"\xff"):
        r = _post(client, f"/api/games/{gid}/ai", body)
        assert 400 <= r.status_code < 500 and r.json()["error"], (body, r.text)
        assert _snapshot(client, gid) == before, body
    r = _post(client, f"/api/games/{gid}/move", {"action": 0, "since": 0})  # the agent's turn: not the person's
    assert r.status_code == 409 and _snapshot(client, gid) == before
    r = _post(client, f"/api/games/{gid}/hint", {})
    assert r.status_code == 409 and _snapshot(client, gid) == before
    assert _post(client, f"/api/games/{gid}/ai", {"since": total}).status_code == 200
    assert _snapshot(client, gid) != before


def test_a_refused_hint_or_new_game_changes_nothing(client: TestClient) -> None:
    state = _game_at(client, mine=True)
    gid = state["id"]
    before, games = _snapshot(client, gid), set(client.app.state.store.sessions)  # type: ignore[attr-defined]
    for body in ({"agent": "greedy"}, {"agent": 7}, {"agent": "oracle"}, {"agent": "pimc:samples=9"}, {"x": 1}, b"["):
        r = _post(client, f"/api/games/{gid}/hint", body)
        assert 400 <= r.status_code < 500, (body, r.text)
        assert _snapshot(client, gid) == before
        assert not client.app.state.store.sessions[gid].analysts  # type: ignore[attr-defined]
    limit = client.app.state.limit  # type: ignore[attr-defined]
    tokens = limit.level("testclient")
    for body in ({"players": 9}, {"opponents": ["nobody"]}, {"rules": {"target": 0}}, {"rules": {"max_hands": None}},
                 {"rules": {"hand_end": "nope"}}, b"{"):
        r = _post(client, "/api/games", body)
        assert 400 <= r.status_code < 500, (body, r.text)
        assert set(client.app.state.store.sessions) == games  # type: ignore[attr-defined]
        assert limit.level("testclient") == tokens  # a refusal costs no new-game token either
    assert _snapshot(client, gid) == before


# ---------------------------------------------------------------------------------------------- room for everyone
def test_one_client_cannot_push_out_the_others_games() -> None:
    app = create_app(cap=3)
    with TestClient(app, client=("10.0.0.1", 5000)) as player, TestClient(app, client=("10.0.0.9", 5000)) as flood:
        mine = new_game(player, seed=1)
        codes = [flood.post("/api/games", json={"opponents": ["greedy"]}).status_code for _ in range(5)]
        assert codes == [201, 201, 503, 503, 503]
        assert player.get(f"/api/games/{mine['id']}").status_code == 200


def test_active_games_are_never_dropped_for_a_new_one() -> None:
    clock = Clock()
    app = create_app(cap=3, active=60, new_game_burst=100, clock=clock)
    with TestClient(app) as client:
        games = [new_game(client, seed=k) for k in range(3)]
        for _ in range(5):  # one client starting games as fast as it can
            r = client.post("/api/games", json={"opponents": ["greedy"]})
            assert r.status_code == 503 and "full" in r.json()["error"] and r.json()["status"] == 503
            assert r.headers["retry-after"] == "60"
        assert all(client.get(f"/api/games/{g['id']}").status_code == 200 for g in games)
        clock.now = 45.0
        client.get(f"/api/games/{games[1]['id']}")  # viewed: active again for the window
        r = client.post("/api/games", json={"opponents": ["greedy"]})
        assert r.status_code == 503 and r.headers["retry-after"] == "15"  # games 0 and 2 go idle at 60
        clock.now = 61.0
        assert client.post("/api/games", json={"opponents": ["greedy"]}).status_code == 201
        assert client.get(f"/api/games/{games[0]['id']}").status_code == 404  # the least recently used idle one
        assert client.get(f"/api/games/{games[1]['id']}").status_code == 200


def test_finished_games_make_room_before_idle_ones() -> None:
    clock = Clock()
    app = create_app(cap=3, active=60, new_game_burst=100, clock=clock)
    with TestClient(app) as client:
        idle, playing, done = new_game(client, seed=1), new_game(client, seed=2), new_game(client, seed=3)
        play_out(client, done)  # used after the idle game: the idle one is the least recently used
        clock.now = 100.0
        client.get(f"/api/games/{playing['id']}")
        new_game(client, seed=4)
        assert client.get(f"/api/games/{done['id']}").status_code == 404  # the finished game went first
        assert client.get(f"/api/games/{idle['id']}").status_code == 200  # viewed: active again now
        clock.now = 200.0
        kept = new_game(client, seed=5)  # room again: every game is idle, the least recently used goes
        assert client.get(f"/api/games/{playing['id']}").status_code == 404
        assert client.get(f"/api/games/{kept['id']}").status_code == 200


def test_a_refused_new_game_drops_no_idle_game() -> None:
    clock = Clock()
    app = create_app(cap=1, active=10, clock=clock)
    with TestClient(app) as client:
        idle = new_game(client, seed=1)
        clock.now = 20.0
        bad_rules = {"opponents": ["greedy"], "rules": {"hand_end": "nope"}}  # the engine refuses them
        r = client.post("/api/games", json=bad_rules)
        assert r.status_code == 422 and list(app.state.store.sessions) == [idle["id"]]
        assert new_game(client, seed=2)["id"] in app.state.store.sessions  # a game that starts takes its place


def test_a_game_with_a_request_in_flight_is_never_dropped() -> None:
    """A hint still running holds its game: neither the cap nor the expiry drops it meanwhile."""
    clock = Clock()
    app = create_app(cap=1, expiry=60, active=10, clock=clock)
    with TestClient(app) as client:
        state = new_game(client, seed=1)
        session = app.state.store.sessions[state["id"]]
        with session.claim():
            clock.now = 1000.0  # long past the active window and the expiry
            r = client.post("/api/games", json={"opponents": ["greedy"]})
            assert r.status_code == 503 and r.headers["retry-after"] == "10"
            assert state["id"] in app.state.store.sessions
        assert client.post("/api/games", json={"opponents": ["greedy"]}).status_code == 201  # now it may go
        assert client.get(f"/api/games/{state['id']}").status_code == 404


def test_each_client_starts_games_at_a_bounded_rate() -> None:
    clock = Clock()
    app = create_app(new_game_burst=2, new_games_per_minute=6, clock=clock)  # then one every 10 s
    body = {"opponents": ["greedy"], "rules": {"target": 50}}
    with TestClient(app) as one, TestClient(app, client=("10.0.0.2", 5000)) as other:
        assert [one.post("/api/games", json=body).status_code for _ in range(2)] == [201, 201]
        r = one.post("/api/games", json=body)
        assert r.status_code == 429 and r.headers["retry-after"] == "10" and "too many new games" in r.json()["error"]
        assert other.post("/api/games", json=body).status_code == 201  # another address has its own budget
        clock.now = 4.0
        assert one.post("/api/games", json=body).headers["retry-after"] == "6"
        clock.now = 10.0
        assert one.post("/api/games", json=body).status_code == 201
        assert one.post("/api/games", json=body).status_code == 429
        assert len(app.state.store) == 4
    with pytest.raises(SettingsError, match="burst"):
        create_app(new_game_burst=0)
    with pytest.raises(SettingsError, match="per minute"):
        create_app(new_games_per_minute=float("inf"))


def test_the_command_line_sets_the_limits(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import uvicorn

    from allfives_env.cli import main

    made: list[dict[str, Any]] = []
    real = app_module.create_app
    monkeypatch.setattr(app_module, "create_app", lambda **kw: made.append(kw) or real(**kw))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, *a, **k: None)
    assert main(["serve", "--port", "8765", "--no-warm-up", "--max-games", "7", "--active-minutes", "3",
                 "--new-game-burst", "4", "--new-games-per-minute", "0.5"]) == 0
    assert made[-1]["cap"] == 7 and made[-1]["active"] == 180
    assert made[-1]["new_game_burst"] == 4 and made[-1]["new_games_per_minute"] == 0.5
    assert "3 minutes" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["serve", "--new-games-per-minute", "0"])
    assert "--new-games-per-minute" in capsys.readouterr().err


def test_the_help_states_the_limits_the_server_applies(capsys: pytest.CaptureFixture) -> None:
    from allfives_env.cli import main
    from allfives_env.serve.limits import DEFAULT_BURST, DEFAULT_PER_MINUTE
    from allfives_env.serve.schemas import MAX_SERVED_TARGET
    from allfives_env.serve.sessions import DEFAULT_ACTIVE

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in (f"at most {MAX_SERVED_HANDS} hands", f"target of at most {MAX_SERVED_TARGET}",
                  f"at most {app_module.PAGE_FRAMES} frames", f"make room (default {DEFAULT_ACTIVE // 60})",
                  f"at once (default {DEFAULT_BURST})", f"after the burst (default {DEFAULT_PER_MINUTE:g})",
                  "503 and Retry-After", "429 and Retry-After", "X-Frame-Options: DENY", "frame-ancestors 'none'"):
        assert words in text, words


# ---------------------------------------------------------------------------------------------- long games
def test_frames_come_in_bounded_pages(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    state, frames = play_out(client, new_game(client, seed=3))
    gid = state["id"]
    assert len(frames) > 40
    monkeypatch.setattr(app_module, "PAGE_FRAMES", 16)
    pages, since = [], 0
    while True:
        page = client.get(f"/api/games/{gid}?since={since}").json()
        assert page["since"] == since and len(page["frames"]) <= 16 and page["total"] == len(frames)
        pages.extend(page["frames"])
        assert page["next"] == since + len(page["frames"])
        if page["next"] == page["total"]:
            break
        since = page["next"]
    assert pages == frames  # the pages are the whole game, in order, nothing twice
    session = client.app.state.store.sessions[gid]  # type: ignore[attr-defined]
    assert client.get(f"/api/games/{gid}?since=5").json() == app_module.game_state(session, 5)  # written whole


def test_long_pages_are_built_off_the_event_loop(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long game's page takes a while to build: it must not be built on the loop that serves the others."""
    state, frames = play_out(client, new_game(client, seed=2))
    assert len(frames) > 2 * app_module.INLINE_FRAMES
    on_loop: list[bool] = []
    real = app_module.game_state

    def watched(*args: Any) -> Any:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:  # a worker thread runs no event loop
            on_loop.append(False)
        return real(*args)

    monkeypatch.setattr(app_module, "game_state", watched)
    for since in (0, len(frames) - app_module.INLINE_FRAMES - 1):
        assert client.get(f"/api/games/{state['id']}?since={since}").status_code == 200
    assert on_loop == [False, False]


def test_a_web_game_has_a_bounded_length(client: TestClient) -> None:
    state = new_game(client, rules={"target": 1000})
    assert state["rules"]["options"]["max_hands"] == MAX_SERVED_HANDS
    r = client.post("/api/games", json={"opponents": ["greedy"], "rules": {"target": 10000}})
    assert r.status_code == 400 and "from 1 to 1000" in r.json()["error"]
    r = client.post("/api/games", json={"opponents": ["greedy"], "rules": {"max_hands": 200}})
    assert r.status_code == 400 and f"from 1 to {MAX_SERVED_HANDS}" in r.json()["error"]


# ---------------------------------------------------------------------------------------------- hang-ups, hosts, frames
def test_a_client_that_hangs_up_mid_body_is_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    app = create_app()
    sent: list[dict[str, Any]] = []
    cut_short = [{"type": "http.request", "body": b'{"players": ', "more_body": True}, {"type": "http.disconnect"}]
    parts: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/api/games", "raw_path": b"/api/games", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
             "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000)}
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            parts[:] = cut_short
            asyncio.run(app(scope, receive, send))  # no exception escapes to the server, which would log a traceback
    lines = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(lines) == 3 and all(r.exc_info is None for r in caplog.records)
    assert len(app.state.store) == 0


@pytest.mark.parametrize("host", ["localhost:evil", "[::1]evil", "127.0.0.1:1@evil.com", "localhost:", "localhost:0",
                                  "localhost:65536", "localhost:99999999", "localhost:８０", "[::1", "[::1]:x",
                                  "127.0.0.1:80:80", "evil.com", "127.0.0.1.evil.com", "localhost.", ""])
def test_the_host_check_refuses_a_host_that_only_starts_like_ours(client: TestClient, host: str) -> None:
    assert host_name(host) not in app_module.LOOPBACK_HOSTS
    r = client.get("/api/options", headers={"host": host.encode("utf-8")})
    assert r.status_code == 400 and "is not served here" in r.json()["error"]
    assert r.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST:80", "[::1]", "[::1]:65535",
                                  "testserver"])
def test_the_host_check_takes_our_hosts_with_a_port(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"host": host}).status_code == 200


def test_no_answer_may_be_framed_by_another_site(client: TestClient) -> None:
    state = new_game(client, seed=1)
    answers = [client.get("/"), client.get("/assets/play.js"), client.get("/assets/draw.js"),
               client.get("/api/options"), client.get(f"/api/games/{state['id']}"), client.get("/api/games/nope"),
               client.get("/nowhere"), client.delete("/api/games"),
               client.post("/api/games", content=b"{", headers={"content-type": "application/json"}),
               client.get("/", headers={"host": "evil.example"})]
    for r in answers:
        assert r.headers["x-frame-options"] == "DENY", r.request.url
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"], r.request.url
        assert r.headers["x-content-type-options"] == "nosniff"
    page_csp = answers[0].headers["content-security-policy"]
    assert "script-src 'self'" in page_csp and "connect-src 'self'" in page_csp  # the page's own rules stay


def test_a_bug_answers_with_the_security_headers_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    with TestClient(create_app(), raise_server_exceptions=False) as client:
        state = new_game(client, seed=1)
        monkeypatch.setattr(app_module, "game_state", broken)
        r = client.get(f"/api/games/{state['id']}")
        assert r.status_code == 500 and r.headers["x-frame-options"] == "DENY"


# ---------------------------------------------------------------------------------------------- a lead's name
def test_a_lead_is_named_as_a_lead_in_the_moves_and_the_hint(client: TestClient) -> None:
    state = next(s for s in (new_game(client, seed=k) for k in range(1, 40))
                 if s["your_turn"] and s["frames"][-1]["placed"] == 0 and len(s["legal"]) > 1)
    tiles = _game(client, state["id"]).tiles
    for m in state["legal"]:
        assert m["end"] is None and m["name"].endswith(" lead") and "@" not in m["name"], m
        assert parse_action(m["name"], tiles) == m["action"]  # the name reads back as the same move
    hint = _post(client, f"/api/games/{state['id']}/hint", {"agent": "pimc"}).json()
    assert hint["best_name"].endswith(" lead") and all(m["name"].endswith(" lead") for m in hint["moves"])
    r = _post(client, f"/api/games/{state['id']}/move", {"action": state["legal"][0]["action"] + 1})  # an end: none yet
    assert r.status_code == 422 and all(f"{m['name']} ({m['action']})" in r.json()["error"] for m in state["legal"])
    state = _post(client, f"/api/games/{state['id']}/move", {"action": state["legal"][0]["action"]}).json()
    while not state["your_turn"]:
        state = _post(client, f"/api/games/{state['id']}/ai", {"since": state["total"]}).json()
    assert _game(client, state["id"]).board.size > 0
    assert all(m["tile"] is None or "@" in m["name"] for m in state["legal"])  # on a table with ends, an end
