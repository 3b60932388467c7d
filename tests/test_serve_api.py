"""The web game's API (``allfives_env.serve``) through Starlette's TestClient: whole games played over HTTP
whose replays verify, what a seat may and may not see, the hint, sessions (isolation, cap, expiry, reload),
and every kind of bad request answered with a 4xx JSON error naming what was wrong.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from typing import Any, Iterator

import pytest

pytest.importorskip("starlette", reason="the web game needs the [play] extra: pip install -e '.[play]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx: pip install -e '.[play]'")

with warnings.catch_warnings():  # Starlette's note on httpx vs httpx2
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

from allfives_env.core import Game, Rules
from allfives_env.core.replay import load_replay
from allfives_env.serve import create_app
from allfives_env.serve.schemas import MAX_BODY
from allfives_env.serve.schemas import SettingsError
from allfives_env.serve.sessions import SessionStore



@pytest.fixture()
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def new_game(client: TestClient, **settings: Any) -> dict[str, Any]:
    body = {"players": 2, "opponents": ["greedy"], "rules": {"target": 100}, "seed": 1, **settings}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def play_out(client: TestClient, state: dict[str, Any], choose: Any = None) -> tuple[dict[str, Any], list[dict]]:
    """Play the game to its end over the API (the person plays ``choose(legal)``, default the first legal
    move); returns the last state and every frame received, in order."""
    gid, frames = state["id"], list(state["frames"])
    while not state["over"]:
        since = len(frames)
        if state["your_turn"]:
            move = (choose or (lambda legal: legal[0]))(state["legal"])
            r = client.post(f"/api/games/{gid}/move", json={"action": move["action"], "since": since})
        else:
            assert state["legal"] == []
            r = client.post(f"/api/games/{gid}/ai", json={"since": since})
        assert r.status_code == 200, r.text
        state = r.json()
        assert state["since"] == since
        frames.extend(state["frames"])
        assert len(frames) == state["total"]
    return state, frames


# ---------------------------------------------------------------------------------------------- whole games
@pytest.mark.parametrize("settings", [
    pytest.param({}, id="2p-greedy"),
    pytest.param({"players": 3, "seat": 2, "opponents": ["random", "greedy"], "rules": {"target": 60}}, id="3p"),
    pytest.param({"players": 4, "seat": 1, "opponents": ["random"], "partnership": True, "rules": {"target": 60}}, id="4p"),
    pytest.param({"rules": {"target": 60, "may_draw_when_able": True, "max_pip": 9}, "opponents": ["random"]}, id="draw-9"),
])
def test_a_whole_game_over_http_replays_exactly(client: TestClient, settings: dict[str, Any]) -> None:
    state = new_game(client, **settings)
    state, frames = play_out(client, state, choose=lambda legal: legal[-1])
    assert [f["step"] for f in frames] == list(range(1, len(frames) + 1))
    record = client.get(f"/api/games/{state['id']}/replay.json").json()
    game = load_replay(record)  # the engine re-simulates every event
    assert game.over and game.scores == state["scores"] == frames[-1]["scores"]
    assert len(game.events) == len(frames)
    assert record["agents"][state["seat"]] == "you"
    # the same seed and the same person's moves give the same game: the server's engine is the core's
    again = Game(Rules.from_options(record["rules"]), record["seed"])
    assert again.hand_records[0].hands == game.hand_records[0].hands


def test_a_seat_never_sees_other_hands_or_their_draws(client: TestClient) -> None:
    state = new_game(client, rules={"target": 100}, opponents=["random"], seed=4)
    assert state["seed"] is None  # the seed deals every hand: it would show the other hands and the boneyard
    state, frames = play_out(client, state)
    assert state["seed"] == 4
    seat = state["seat"]
    hidden_draws = 0
    for f in frames:
        if f["kind"] in ("settlement", "game_over"):
            assert all(h is not None for h in f["hands"])  # the tally: hands shown face up
            continue
        assert f["hands"][seat] is not None and all(h is None for s, h in enumerate(f["hands"]) if s != seat)
        if f["kind"] == "draw" and f["seat"] != seat:
            hidden_draws += 1
            assert f["tile"] is None and "a tile" in f["text"]
    assert hidden_draws, "this seed has the agent draw: the hiding is tested"


def test_legal_moves_are_the_engines_and_illegal_ones_are_refused(client: TestClient) -> None:
    state = new_game(client, seed=2)
    gid = state["id"]
    while not state["your_turn"]:
        state = client.post(f"/api/games/{gid}/ai", json={"since": state["total"]}).json()
    legal = {m["action"] for m in state["legal"]}
    illegal = next(a for a in range(28 * 4) if a not in legal)
    r = client.post(f"/api/games/{gid}/move", json={"action": illegal})
    assert r.status_code == 422 and "not a legal move" in r.json()["error"]
    assert all(m["name"] in r.json()["error"] for m in state["legal"])
    assert client.get(f"/api/games/{gid}").json()["total"] == state["total"]  # nothing happened


def test_out_of_turn_and_after_the_end(client: TestClient) -> None:
    state = new_game(client, seed=1)
    gid = state["id"]
    turn_is_mine = state["your_turn"]
    r = client.post(f"/api/games/{gid}/ai" if turn_is_mine else f"/api/games/{gid}/move", json={"action": 0})
    assert r.status_code in (400, 409)
    if not turn_is_mine:
        r = client.post(f"/api/games/{gid}/move", json={"action": 0})
        assert r.status_code == 409 and "not your turn" in r.json()["error"]
        r = client.post(f"/api/games/{gid}/hint", json={})
        assert r.status_code == 409
    assert client.get(f"/api/games/{gid}/replay.json").status_code == 409  # the deal stays secret till the end
    assert client.get(f"/api/games/{gid}/viewer").status_code == 409
    state, _ = play_out(client, state)
    for path, body in (("/move", {"action": 0}), ("/ai", {}), ("/hint", {})):
        r = client.post(f"/api/games/{gid}{path}", json=body)
        assert r.status_code == 409 and "over" in r.json()["error"], path
    page = client.get(f"/api/games/{gid}/viewer")
    assert page.status_code == 200 and page.text.startswith("<!DOCTYPE html>") and "replay-data" in page.text


def test_the_hint_values_every_legal_move_with_the_search(client: TestClient) -> None:
    state = new_game(client, seed=6, opponents=["random"])
    gid = state["id"]
    while not (state["your_turn"] and len(state["legal"]) > 1):
        if state["your_turn"]:
            state = client.post(f"/api/games/{gid}/move", json={"action": state["legal"][0]["action"]}).json()
        else:
            state = client.post(f"/api/games/{gid}/ai", json={}).json()
    r = client.post(f"/api/games/{gid}/hint", json={"agent": "pimc"})
    assert r.status_code == 200, r.text
    hint = r.json()
    assert [m["action"] for m in hint["moves"]] == [m["action"] for m in state["legal"]]
    values = {m["action"]: m["value"] for m in hint["moves"]}
    assert all(v is not None for v in values.values())  # plain pimc drops nothing
    assert values[hint["best"]] == max(values.values())
    default = client.post(f"/api/games/{gid}/hint", json={}).json()
    assert default["agent"] == "pimc-sift" and default["best"] in values
    assert any(not m["dropped"] for m in default["moves"])
    r = client.post(f"/api/games/{gid}/move", json={"action": hint["best"]})
    assert r.status_code == 200


# ---------------------------------------------------------------------------------------------- sessions
def test_games_are_isolated_and_survive_a_reload(client: TestClient) -> None:
    a, b = new_game(client, seed=3), new_game(client, seed=3)
    assert a["id"] != b["id"]
    a_state, _ = play_out(client, a)
    b_now = client.get(f"/api/games/{b['id']}?since=0").json()
    assert b_now["total"] == b["total"] and b_now["frames"] == b["frames"]  # untouched by a's game
    again = client.get(f"/api/games/{a['id']}?since=0").json()  # a reload: everything from the start
    assert again["over"] and again["total"] == a_state["total"] and again["scores"] == a_state["scores"]


def test_the_store_caps_and_expires_games() -> None:
    now = [0.0]
    app = create_app(cap=2, expiry=60, active=10, clock=lambda: now[0])
    store = app.state.store
    with TestClient(app) as client:
        first, second = new_game(client), new_game(client)
        now[0] = 20.0  # both idle now
        client.get(f"/api/games/{first['id']}")  # first is being played again
        third = new_game(client)
        assert len(store) == 2
        assert client.get(f"/api/games/{second['id']}").status_code == 404  # the idle one made room
        now[0] = 81.0
        r = client.get(f"/api/games/{third['id']}")
        assert r.status_code == 404 and "dropped" in r.json()["error"] and len(store) == 0
    with pytest.raises(SettingsError):
        SessionStore(cap=0)
    with pytest.raises(SettingsError):
        SessionStore(expiry=float("nan"))
    with pytest.raises(SettingsError):
        SessionStore(active=0)


def test_two_moves_at_once_for_one_game_one_is_refused(client: TestClient) -> None:
    state = new_game(client, seed=1)
    session = client.app.state.store.get(state["id"])  # type: ignore[attr-defined]
    with session.claim():  # a request in flight holds the game
        r = client.post(f"/api/games/{state['id']}/ai", json={})
        assert r.status_code == 409 and "still running" in r.json()["error"]
        other = new_game(client, seed=2)  # other games go on meanwhile
        assert client.get(f"/api/games/{other['id']}").status_code == 200
    assert client.post(f"/api/games/{state['id']}/ai" if not state["your_turn"] else
                       f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["action"]}
                       if state["your_turn"] else {}).status_code == 200


def test_concurrent_requests_for_one_game_never_interleave(client: TestClient) -> None:
    """Threads fire moves at one game at once: each is answered 200 or 409, and the game stays a valid
    replay (no move was applied twice or half)."""
    state = new_game(client, seed=8, opponents=["random"], rules={"target": 60})
    gid = state["id"]
    codes: list[int] = []

    def hammer() -> None:
        for _ in range(30):
            now = client.get(f"/api/games/{gid}")
            if now.status_code != 200:
                codes.append(now.status_code)
                continue
            st = now.json()
            if st["over"]:
                return
            if st["your_turn"]:
                r = client.post(f"/api/games/{gid}/move", json={"action": st["legal"][0]["action"]})
            else:
                r = client.post(f"/api/games/{gid}/ai", json={})
            codes.append(r.status_code)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(codes) <= {200, 409, 422}, codes  # 422: a move chosen on a state another thread had moved on from
    state, _ = play_out(client, client.get(f"/api/games/{gid}").json())
    load_replay(client.get(f"/api/games/{gid}/replay.json").json())


# ---------------------------------------------------------------------------------------------- bad input
BAD_BODIES = [
    (b"{", 400, "not valid JSON"), (b"[1]", 400, "JSON object"), (b"\xff\xfe", 400, "UTF-8"),
    (b'{"action": "3"}', 400, "integer"), (b'{"action": 1.0}', 400, "integer"), (b'{"action": true}', 400, "integer"),
    (b'{"action": -1}', 400, "out of range"), (b'{"action": 10000000000000000000000}', 400, "out of range"),
    (b'{"action": 1, "x": 2}', 400, "unknown field"), (b'{"since": 1}', 400, "action"),
    (b"[" * 100_00 + b"]" * 100_00, 413, "bytes"), (b'{"action": ' + b"1" * 5000 + b"}", 400, "JSON"),
    (b"[" * 5000 + b"]" * 5000, 400, "JSON"),
]


@pytest.mark.parametrize("body,status,words", BAD_BODIES, ids=[f"{s}-{i}" for i, (_, s, _) in enumerate(BAD_BODIES)])
def test_malformed_bodies_get_a_4xx_json_error(client: TestClient, body: bytes, status: int, words: str) -> None:
    state = new_game(client)
    r = client.post(f"/api/games/{state['id']}/move", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status and words in r.json()["error"], r.text


@pytest.mark.parametrize("settings,status,words", [
    ({"players": 5}, 400, "players"), ({"players": "2"}, 400, "players"), ({"seat": 2}, 400, "seat"),
    ({"opponents": "greedy"}, 400, "opponents"), ({"opponents": []}, 400, "opponents"),
    ({"opponents": [1]}, 400, "opponents[0]"), ({"opponents": ["nobody"]}, 422, "not offered"),
    ({"opponents": ["ppo:path=/etc/passwd"]}, 422, "without parameters"),
    ({"opponents": ["pimc:samples=1000000000"]}, 422, "without parameters"),
    ({"opponents": ["oracle"]}, 422, "not offered"), ({"opponents": ["ppo-3p"]}, 422, "not offered"),
    ({"rules": {"target": -1}}, 400, "target"),
    ({"rules": {"target": 1001}}, 400, "1 to 1000"), ({"rules": {"max_hands": 51}}, 400, "1 to 50"), ({"rules": {"nope": 1}}, 422, "nope"),
    ({"rules": {"target": [1]}}, 400, "target"), ({"rules": {"num_players": 3}}, 400, "players"),
    ({"rules": {"max_hands": None}}, 400, "max_hands"), ({"rules": "x"}, 400, "rules"),
    ({"seed": -1}, 400, "seed"), ({"seed": 2**64}, 400, "seed"), ({"partnership": "yes"}, 400, "partnership"),
    ({"players": 2, "partnership": True}, 422, "partnership"), ({"colour": "red"}, 400, "unknown field"),
])
def test_bad_new_games_are_refused_with_the_reason(client: TestClient, settings: dict[str, Any], status: int,
                                                   words: str) -> None:
    body = {"players": 2, "opponents": ["greedy"], **settings}
    r = client.post("/api/games", json=body)
    assert r.status_code == status and words in r.json()["error"], r.text
    assert client.app.state.store.sessions == {}  # type: ignore[attr-defined]


def test_other_bad_requests(client: TestClient) -> None:
    state = new_game(client)
    gid = state["id"]
    cases = [
        client.get("/api/games/no-such-game"), client.post("/api/games/../../etc/passwd/move", json={}),
        client.get("/nowhere"), client.get("/assets/../app.py"), client.get("/assets/app.py"),
        client.delete(f"/api/games/{gid}"), client.get(f"/api/games/{gid}?since=-1"),
        client.get(f"/api/games/{gid}?since=999999"), client.get(f"/api/games/{gid}?since=x"),
        client.get(f"/api/games/{gid}?since=%C2%B2"),
        client.post(f"/api/games/{gid}/move", content=b'{"action": 1}', headers={"content-type": "text/plain"}),
        client.post(f"/api/games/{gid}/move", content=b'{"action": 1}'),
        client.post(f"/api/games/{gid}/hint", json={"agent": "greedy"}),
        client.post(f"/api/games/{gid}/hint", json={"agent": 7}),
        client.get("/", headers={"host": "attacker.example"}),
        client.post(f"/api/games/{gid}/move", content=b"x" * (MAX_BODY + 1),
                    headers={"content-type": "application/json", "content-length": str(MAX_BODY + 1)}),
    ]
    for r in cases:
        assert 400 <= r.status_code < 500, (r.request.url, r.status_code, r.text)
        assert r.json()["error"] and r.json()["status"] == r.status_code
    assert client.get(f"/api/games/{gid}").status_code == 200  # and the server goes on


def test_a_body_without_a_length_is_cut_off(client: TestClient) -> None:
    state = new_game(client)

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 1024

    r = client.post(f"/api/games/{state['id']}/move", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_the_page_and_its_assets(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    for src in ("/assets/draw.js", "/assets/play.js", "/assets/viewer.css", "/assets/play.css"):
        assert src in page.text
        r = client.get(src)
        assert r.status_code == 200 and r.text and r.headers["x-content-type-options"] == "nosniff"
    # the drawing is the viewer's own file, not a copy
    from allfives_env.viewer import viewer_asset

    assert client.get("/assets/draw.js").text == viewer_asset("draw.js")
    assert "function drawTile" not in client.get("/assets/play.js").text


def test_options_list_the_registry(client: TestClient) -> None:
    from allfives_env.agents import agent_names

    options = client.get("/api/options").json()
    assert [a["name"] for a in options["agents"]] == agent_names()
    offered = {a["name"]: a["players"] for a in options["agents"]}
    assert offered["greedy"] == [2, 3, 4] and offered["oracle"] == [] and offered["ppo-2p"] == [2]
    assert "pimc-sift" in options["analysts"] and options["default_analyst"] == "pimc-sift"
    assert {"max_pip", "target", "hand_end"} <= {r["name"] for r in options["rules"]}
    json.dumps(options)


def test_agents_think_off_the_event_loop() -> None:
    """An agent that thinks for a while holds its own game only: another game's request is answered meanwhile."""
    from allfives_env.agents import register_agent
    from allfives_env.agents.basic import GreedyAgent
    from allfives_env.serve import catalog as catalog_module

    class Slow(GreedyAgent):
        name = "slow-test"

        def act(self, view: Any) -> int:
            time.sleep(1.0)
            return super().act(view)

    register_agent("slow-test", Slow, "sleeps a second per move (tests only)")
    catalog_module.catalog.cache_clear()
    try:
        with TestClient(create_app()) as client:
            slow = new_game(client, opponents=["slow-test"], seed=1)
            fast = new_game(client, seed=1)
            while slow["your_turn"]:
                slow = client.post(f"/api/games/{slow['id']}/move", json={"action": slow["legal"][0]["action"]}).json()
            done: list[float] = []
            thread = threading.Thread(target=lambda: (client.post(f"/api/games/{slow['id']}/ai", json={}),
                                                      done.append(time.perf_counter())))
            thread.start()
            time.sleep(0.2)
            start = time.perf_counter()
            assert client.get(f"/api/games/{fast['id']}").status_code == 200
            answered = time.perf_counter()
            thread.join(10)
            assert answered - start < 0.5 and done and done[0] > answered
    finally:
        from allfives_env.agents import registry

        registry._REGISTRY.pop("slow-test", None)  # a test's own registration
        catalog_module.catalog.cache_clear()


def test_a_bug_is_a_json_500_and_the_server_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_env.serve import sessions

    app = create_app()
    with TestClient(app, raise_server_exceptions=False) as client:
        state = new_game(client, seed=1)

        def broken(self: Any) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(sessions.Session, "agent_move", broken)
        monkeypatch.setattr(sessions.Session, "play", broken)
        path = "/move" if state["your_turn"] else "/ai"
        body = {"action": state["legal"][0]["action"]} if state["your_turn"] else {}
        r = client.post(f"/api/games/{state['id']}{path}", json=body)
        assert r.status_code == 500 and "internal error" in r.json()["error"]
        monkeypatch.undo()
        # the claim was let go: the game goes on
        assert client.post(f"/api/games/{state['id']}{path}", json=body).status_code == 200


def test_the_command_line_needs_the_extra_only_to_serve(tmp_path: Any) -> None:
    """``allfives --help`` works without Starlette; ``allfives serve`` then says what to install."""
    import subprocess
    import sys

    block = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None; "
             "from allfives_env.cli import main; ")
    helped = subprocess.run([sys.executable, "-c", block + "main(['--help'])"], capture_output=True, text=True)
    assert helped.returncode == 0 and "serve" in helped.stdout
    served = subprocess.run([sys.executable, "-c", block + "sys.exit(main(['serve', '--port', '8765']))"],
                            capture_output=True, text=True, timeout=60)
    assert served.returncode == 2 and 'pip install -e ".[play]"' in served.stderr


def test_no_body_of_any_shape_is_a_500() -> None:
    """Arbitrary JSON at every POST route, as a hostile client would send it: always a 2xx or a 4xx."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=30)
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10),
                                                                                                 inner, max_size=4),
                          max_leaves=12)
    fields = st.sampled_from(["players", "partnership", "seat", "opponents", "rules", "seed", "action", "since",
                              "agent", "x"])
    bodies = st.dictionaries(fields, values, max_size=5) | values
    with TestClient(create_app()) as client:
        game = new_game(client, seed=9)

        @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
        @given(path=st.sampled_from(["/api/games", f"/api/games/{game['id']}/move", f"/api/games/{game['id']}/ai",
                                     f"/api/games/{game['id']}/hint"]), body=bodies)
        def post(path: str, body: Any) -> None:
            r = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
            assert r.status_code < 500, (path, body, r.text)
            assert r.status_code < 300 or r.json()["error"]

        post()
