"""The web game's HTTP app (Starlette): the page, its assets and a small JSON API over the engine's games.

Routes (every answer of ``/api`` is JSON; every refusal a 4xx/503 ``{"error": "..."}`` saying what was wrong):

=========================================  ================================================================
``GET /``                                   the page (``assets/play.html``)
``GET /assets/NAME``                        the page's files: its own, and the viewer's ``draw.js``/``viewer.css``
``GET /api/options``                        agents (from the registry), analysts, the main rules options
``POST /api/games``                         a new game: ``{players, partnership, seat, opponents, rules, seed}``
``GET /api/games/ID?since=N``               the game as the person's seat sees it, a page of frames from ``N`` on
``POST /api/games/ID/move``                 the person's move ``{action, since}`` (an action id from ``legal``)
``POST /api/games/ID/ai``                   the next agent's one move ``{since}`` (the page paces the agents)
``POST /api/games/ID/hint``                 a search agent's value of every legal move ``{agent}``
``GET /api/games/ID/replay.json``           the finished game's replay (``allfives replay`` verifies it)
``GET /api/games/ID/viewer``                the finished game in the replay viewer
=========================================  ================================================================

A game's answer carries at most :data:`PAGE_FRAMES` frames, from ``since`` to ``next``; the page asks for
the rest from ``next`` until it reaches ``total``. Frames are built and written as JSON in a worker thread,
agents think in a small thread pool, never on the event loop, so a long game's reload or one game's search
does not hold up another game's requests; each game takes one request at a time (:meth:`Session.claim`,
else 409). A refused request changes nothing: the body, ``since``, the action and the turn are all checked
before the game moves. POSTs must say ``Content-Type: application/json`` (a cross-site form cannot, so
another site cannot play moves for a visitor), the ``Host`` header must name the loopback address unless
the server was told to bind elsewhere (a DNS-rebinding page cannot reach it), and no answer may be shown
in another site's frame (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``). Each client address may
start only so many games (429), and a server full of games being played refuses a new one (503); both
say when to try again (``Retry-After``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from importlib import resources
from typing import Any, Callable, Optional

import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core.errors import AllFivesError, short_repr
from ..core.view import PlayerView
from ..replay_frames import result_text
from ..viewer import replay_html, viewer_asset
from .catalog import catalog, check_offered
from .limits import DEFAULT_BURST, DEFAULT_PER_MINUTE, RateLimit
from .schemas import NEW_GAME_FIELDS, RequestError, int_field, new_game, read_body, read_json, spec_field
from .sessions import DEFAULT_ACTIVE, DEFAULT_CAP, DEFAULT_EXPIRY, Session, SessionStore, start_session
from .table import legal_moves, table_names

__all__ = ["DEFAULT_ANALYST", "LOOPBACK_HOSTS", "PAGE_FRAMES", "create_app", "host_name"]

LOG = logging.getLogger(__name__)

#: The search agent a hint asks unless told otherwise.
DEFAULT_ANALYST = "pimc-sift"
#: Host names a server bound to the loopback address answers to ("testserver": Starlette's TestClient).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "testserver")
#: The most frames one answer carries: at most ~3.6 KB each (a full double-twelve table), so an answer
#: stays under ~1 MB and takes tens of milliseconds to build, however long the game.
PAGE_FRAMES = 200
#: The page's own files (name -> media type): the only names ``/assets/`` serves, never a path from a request.
SERVE_ASSETS = {"play.html": "text/html", "play.js": "text/javascript", "play.css": "text/css"}
VIEWER_ASSETS = {"draw.js": "text/javascript", "viewer.css": "text/css"}
#: No answer may be drawn inside another site's frame (clickjacking a move or a new game).
NO_FRAMES = "frame-ancestors 'none'"
#: The page loads only its own files; the viewer page of a finished game only what it inlines.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + NO_FRAMES)
VIEWER_CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; {NO_FRAMES}"
#: Added to every answer that does not set its own (:class:`SecurityHeaders`).
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
                    "X-Frame-Options": "DENY", "Content-Security-Policy": NO_FRAMES}
MOVE_FIELDS, AI_FIELDS, HINT_FIELDS = ("action", "since"), ("since",), ("agent",)


#: Agents and analyses think in at most this many threads at once: each thinking thread takes turns on the GIL
#: with the event loop, so a few keep the other games' requests quick (anyio's default would allow 40).
THINKING_THREADS = 2
#: Long pages of frames are built in one thread at a time, for the same reason: two clients reloading long
#: games take turns with each other, not with every other game's moves.
PAGE_THREADS = 1
#: An answer of at most this many frames (a move's, an agent's move's) is built on the event loop: well
#: under a millisecond, less than a trip to a worker thread and back.
INLINE_FRAMES = 16


def _limiter(request: Request, name: str, threads: int) -> anyio.CapacityLimiter:
    """The app's limiter ``name`` of ``threads`` threads (made anew for each event loop, which owns it)."""
    state = request.app.state
    loop = asyncio.get_running_loop()
    limiters = getattr(state, "limiters", None)
    if limiters is None or limiters[0] is not loop:
        fresh: dict[str, anyio.CapacityLimiter] = {}
        limiters = state.limiters = (loop, fresh)
    if name not in limiters[1]:
        limiters[1][name] = anyio.CapacityLimiter(threads)
    return limiters[1][name]


async def think(request: Request, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a worker thread, at most :data:`THINKING_THREADS` at once, off the event loop. The
    request waits for the thread even if cancelled, so a game is never changed after its claim is let go."""
    limiter = _limiter(request, "thinking", request.app.state.thinking_threads)
    return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)


def _asset(name: str) -> str:
    """The text of one of the page's own files (a fixed name of :data:`SERVE_ASSETS`)."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- answers
def check_since(session: Session, since: int) -> None:
    """400 unless ``since`` is a frame count the game has reached (the page sends how many it holds)."""
    total = len(session.table.frames)
    if since > total:
        raise RequestError(400, f"since={since} is past the game's {total} frames: give 0 to {total}")


def game_state(session: Session, since: int) -> dict[str, Any]:
    """What the page needs of a game: who sits where, a page of frames from ``since`` on (as the person's
    seat sees them; ``next`` is where the following page starts, ``total`` the count), whose turn it is,
    the person's legal moves, and the result once it is over."""
    check_since(session, since)
    game, table = session.game, session.table
    total = len(table.frames)
    frames = table.seat_frames(session.seat, since, since + PAGE_FRAMES)
    rules = game.rules
    return {
        # the seed deals every hand: told once the game is over, like the replay
        "id": session.id, "seat": session.seat, "seed": session.seed if game.over else None, **table_names(table),
        "agents": session.agent_specs,
        "rules": {"players": rules.num_players, "partnership": rules.partnership, "target": rules.target,
                  "max_pip": rules.max_pip, "options": rules.to_dict()},
        "total": total, "since": since, "next": since + len(frames), "frames": frames,
        "turn": None if game.over else game.current, "your_turn": not game.over and game.current == session.seat,
        "legal": legal_moves(game, session.seat), "over": game.over, "scores": list(game.scores),
        "result": result_text(game, table.names),
    }


def _dumps(value: Any) -> str:
    """``value`` as compact JSON, as Starlette's JSONResponse writes it."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def state_json(state: dict[str, Any]) -> bytes:
    """A :func:`game_state` as JSON, its frames written one at a time. One ``json.dumps`` of a long game's
    page holds the GIL for tens of milliseconds (C code is never interrupted), and with it the event loop;
    frame by frame, the loop gets its turn between them, so other games' requests stay quick."""
    frames = ",".join(_dumps(f) for f in state["frames"])
    head = _dumps({k: v for k, v in state.items() if k != "frames"})
    return f'{head[:-1]},"frames":[{frames}]}}'.encode("utf-8")


async def state_answer(request: Request, session: Session, since: int, status: int = 200) -> Response:
    """:func:`game_state` as a JSON answer (:func:`state_json`). A page of more than :data:`INLINE_FRAMES`
    frames takes up to tens of milliseconds: it is built in a worker thread (one at a time), and the event
    loop serves other games' requests meanwhile. The caller holds the game's claim, so no move changes the
    game while the thread reads it, and waits for the thread even if cancelled."""
    if len(session.table.frames) - since <= INLINE_FRAMES:
        body = state_json(game_state(session, since))
    else:
        body = await anyio.to_thread.run_sync(lambda: state_json(game_state(session, since)),
                                              limiter=_limiter(request, "pages", PAGE_THREADS))
    return Response(body, status_code=status, media_type="application/json")


def _error(status: int, message: str, retry_after: Optional[int] = None) -> JSONResponse:
    """A refusal as JSON; with its security headers here too, since a 500 is sent outside the middleware."""
    headers = {**SECURITY_HEADERS, **({} if retry_after is None else {"Retry-After": str(retry_after)})}
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


async def _refused(request: Request, exc: Exception) -> Response:
    """A refusal of ours (its status), the engine's (422: bad rules, agents, moves) or Starlette's (404, 405)."""
    if isinstance(exc, RequestError):
        return _error(exc.status, str(exc), exc.retry_after)
    if isinstance(exc, HTTPException):
        detail = exc.detail if exc.status_code != 404 else f"no such page or API route: {request.url.path[:80]}"
        return _error(exc.status_code, str(detail))
    return _error(422, str(exc))


async def _gone(request: Request, exc: Exception) -> Response:
    """A client that went away before sending its whole body: one line in the log, not a traceback (a
    page closed mid-request is no bug, and a client doing it on purpose must not flood the log)."""
    LOG.warning("client %s went away before sending the whole body of %s %s", _client(request), request.method,
                short_repr(request.url.path[:80]))
    return _error(400, "the request's body ended early: the client went away")


async def _failed(request: Request, exc: Exception) -> Response:
    """A bug of ours: a JSON 500 that says so, and the server goes on."""
    return _error(500, f"internal error ({type(exc).__name__}); the server goes on: please report it")


# ---------------------------------------------------------------------------------------------- request parts
async def _json(request: Request, fields: tuple[str, ...]) -> dict[str, Any]:
    """The request's JSON body, bounded and with only ``fields``."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise RequestError(415, f"send the body as JSON with Content-Type: application/json (got {short_repr(media)})")
    return read_json(await read_body(request.stream(), request.headers.get("content-length")), fields)


def _client(request: Request) -> str:
    """The client's address: the key of its rate limit (a proxy in front makes every client one)."""
    return request.client.host if request.client else "unknown"


def _session(request: Request) -> Session:
    store: SessionStore = request.app.state.store
    return store.get(request.path_params["game_id"])


def _since(data: dict[str, Any]) -> int:
    since = int_field(data, "since", 0, 10**9, default=0)
    assert since is not None
    return since


def _check_turn(session: Session, person: bool) -> None:
    """409 unless the game goes on and it is the person's turn (``person``) or an agent's."""
    game = session.game
    if game.over:
        raise RequestError(409, f"the game is over ({result_text(game, session.table.names)}); start a new game")
    if person and game.current != session.seat:
        raise RequestError(409, f"not your turn: P{game.current} ({session.agents[game.current].spec()}) is to play "
                                f"(POST .../ai plays it)")
    if not person and game.current == session.seat:
        raise RequestError(409, f"it is your turn (P{session.seat}): send your move to POST .../move")


# ---------------------------------------------------------------------------------------------- routes
async def page(request: Request) -> Response:
    return HTMLResponse(_asset("play.html"), headers={"Content-Security-Policy": PAGE_CSP})


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name in SERVE_ASSETS:
        return Response(_asset(name), media_type=SERVE_ASSETS[name])
    if name in VIEWER_ASSETS:
        return Response(viewer_asset(name), media_type=VIEWER_ASSETS[name])
    raise RequestError(404, f"no asset {short_repr(name)}: the page's files are {sorted({**SERVE_ASSETS, **VIEWER_ASSETS})}")


async def options(request: Request) -> Response:
    await run_in_threadpool(catalog)  # built once: the first call builds every agent
    return JSONResponse({**catalog(), "default_analyst": DEFAULT_ANALYST})


async def create(request: Request) -> Response:
    """A new game. The client's rate limit is charged only for a game that starts: a refusal (bad
    settings, the server full) gives its token back, so it changes nothing."""
    settings = new_game(await _json(request, NEW_GAME_FIELDS))
    await run_in_threadpool(catalog)  # built once, off the event loop
    for spec in settings.opponents:
        check_offered(spec, settings.players)
    store: SessionStore = request.app.state.store
    limit: RateLimit = request.app.state.limit
    client = _client(request)
    limit.take(client)
    try:
        store.check_room()  # refuse before building agents when the server is full
        seed = store.new_seed() if settings.seed is None else settings.seed
        session = await think(request, start_session, settings, seed, store.now())
        store.add(session)  # checks again: other games may have started while the agents were built
    except BaseException:
        limit.give_back(client)
        raise
    with session.claim():
        return await state_answer(request, session, 0, status=201)


async def show(request: Request) -> Response:
    session = _session(request)
    text = request.query_params.get("since", "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 9):  # "²" is a digit to isdigit, not to int
        raise RequestError(400, f"since={short_repr(text)} is not allowed: give a frame count (0 for all)")
    with session.claim():
        return await state_answer(request, session, int(text))


async def move(request: Request) -> Response:
    data = await _json(request, MOVE_FIELDS)
    session = _session(request)
    if "action" not in data:
        raise RequestError(400, "give the move as {\"action\": ID}, an action id of the state's legal moves")
    action = int_field(data, "action", 0, session.game.tiles.size * 4)
    since = _since(data)
    with session.claim():
        _check_turn(session, person=True)
        check_since(session, since)
        if action not in session.game.legal:
            names = ", ".join(f"{m['name']} ({m['action']})" for m in legal_moves(session.game, session.seat))
            raise RequestError(422, f"action {action} is not a legal move now; legal: {names}")
        session.play(action)
        return await state_answer(request, session, since)


async def agent_move(request: Request) -> Response:
    since = _since(await _json(request, AI_FIELDS))
    session = _session(request)
    with session.claim():
        _check_turn(session, person=False)
        check_since(session, since)
        await think(request, session.agent_move)
        return await state_answer(request, session, since)


async def hint(request: Request) -> Response:
    data = await _json(request, HINT_FIELDS)
    session = _session(request)
    spec = spec_field(data.get("agent", DEFAULT_ANALYST), "agent")
    await run_in_threadpool(catalog)
    check_offered(spec, session.game.num_players, analyst=True)
    with session.claim():
        _check_turn(session, person=True)
        analyst = await think(request, session.analyst, spec)
        legal = sorted(session.game.legal)
        values = await think(request, analyst.move_scores, PlayerView(session.game, session.seat), legal)
    return JSONResponse(hint_answer(session, analyst.spec(), legal, values))


def hint_answer(session: Session, spec: str, legal: list[int], values: list[float]) -> dict[str, Any]:
    """The analysis as the page shows it: each move's value (null for one the search dropped early as
    clearly worse) and the move the search plays, the best value (the first of ties); moves are named as
    the move buttons name them (a lead as ``3-0 lead``)."""
    names = {m["action"]: m["name"] for m in legal_moves(session.game, session.seat)}
    finite = [v if math.isfinite(v) else None for v in values]
    best = max(range(len(legal)), key=lambda i: -math.inf if not math.isfinite(values[i]) else values[i])
    moves = [{"action": a, "name": names.get(a, str(a)), "value": None if v is None else round(v, 2),
              "dropped": v is None} for a, v in zip(legal, finite)]
    return {"agent": spec, "moves": moves, "best": legal[best], "best_name": names.get(legal[best], str(legal[best]))}


def _finished(request: Request) -> Session:
    session = _session(request)
    if not session.game.over:
        raise RequestError(409, "the replay is ready once the game is over (it shows every hand face up)")
    return session


async def replay(request: Request) -> Response:
    session = _finished(request)  # a finished game changes no more: no claim needed to read it
    headers = {"Content-Disposition": f'attachment; filename="allfives-{session.id}.json"'}
    return await run_in_threadpool(lambda: JSONResponse(session.record(), headers=headers))


async def viewer(request: Request) -> Response:
    session = _finished(request)
    page_html = await run_in_threadpool(lambda: replay_html(session.record(), f"All Fives game {session.id}"))
    return HTMLResponse(page_html, headers={"Content-Security-Policy": VIEWER_CSP})


# ---------------------------------------------------------------------------------------------- the app
def host_name(header: str) -> Optional[str]:
    """The host of a ``Host`` header, lower-cased (an IPv6 address in its brackets), or None unless the
    header is exactly a host and an optional ``:PORT`` (digits, 1 to 65535): ``localhost:evil``,
    ``[::1]evil`` and ``127.0.0.1:1@evil.com`` name no host of ours, however a prefix of them reads."""
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        name, rest = header[: end + 1], header[end + 1:]
    else:
        name, colon, port = header.partition(":")
        rest = colon + port
    if rest:
        port = rest[1:]
        if not (rest[0] == ":" and port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535):
            return None
    return name.lower()


class HostCheck:
    """Refuse (400, JSON) a request whose Host header is not one of ``hosts`` (None: any host)."""

    def __init__(self, app: ASGIApp, hosts: Optional[tuple[str, ...]]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.hosts is not None:
            host = Headers(scope=scope).get("host", "")
            if host_name(host) not in self.hosts:
                response = _error(400, f"host {short_repr(host[:80])} is not served here; open http://127.0.0.1:PORT/")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Add :data:`SECURITY_HEADERS` to every answer that does not set its own (the page and the viewer set
    a fuller Content-Security-Policy, which says ``frame-ancestors 'none'`` as well)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_secured)


def create_app(cap: int = DEFAULT_CAP, expiry: float = DEFAULT_EXPIRY,
               hosts: Optional[tuple[str, ...]] = LOOPBACK_HOSTS, thinking_threads: int = THINKING_THREADS,
               active: float = DEFAULT_ACTIVE, new_game_burst: int = DEFAULT_BURST,
               new_games_per_minute: float = DEFAULT_PER_MINUTE,
               clock: Callable[[], float] = time.monotonic) -> Starlette:
    """The app, keeping at most ``cap`` games, each dropped after ``expiry`` idle seconds and never dropped
    to make room while ``active`` (moved or viewed within ``active`` seconds, or a request working on it);
    each client address may start ``new_game_burst`` games at once, then ``new_games_per_minute``;
    ``hosts`` are the Host header names it answers (None: any, for a server bound beyond the loopback
    address); agents think in at most ``thinking_threads`` threads at once; ``clock`` (seconds) times it
    all. A setting that cannot work raises :class:`~allfives_env.serve.schemas.SettingsError`."""
    game = "/api/games/{game_id}"
    routes = [
        Route("/", page), Route("/assets/{name}", asset), Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]), Route(game, show),
        Route(game + "/move", move, methods=["POST"]), Route(game + "/ai", agent_move, methods=["POST"]),
        Route(game + "/hint", hint, methods=["POST"]), Route(game + "/replay.json", replay),
        Route(game + "/viewer", viewer),
    ]
    store, limit = SessionStore(cap, expiry, active, clock), RateLimit(new_game_burst, new_games_per_minute, clock)
    app = Starlette(routes=routes, exception_handlers={AllFivesError: _refused, HTTPException: _refused,
                                                       ClientDisconnect: _gone, Exception: _failed})
    app.state.store, app.state.limit = store, limit
    app.state.thinking_threads = thinking_threads
    app.add_middleware(HostCheck, hosts=hosts)
    app.add_middleware(SecurityHeaders)  # outermost: a Host refusal carries the headers too
    return app
