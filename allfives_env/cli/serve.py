"""``allfives serve``: start the web game (:mod:`allfives_env.serve`) on a local port, optionally opening it.

Starlette and uvicorn (the ``[play]`` extra) are imported only when the command runs, so ``allfives --help``
and every other command work without them; without them the command says what to install.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import sys
import threading
from typing import Any

from ..core.errors import AllFivesError
from .options import int_type, read_float, shorten

__all__ = ["add_serve_parser", "run_serve"]

#: What to install when Starlette or uvicorn is missing.
INSTALL_PLAY = 'the web game needs the [play] extra: pip install -e ".[play]"'


class ServeError(AllFivesError, RuntimeError):
    """The web game cannot start (a missing extra)."""


#: The most new games per minute ``--new-games-per-minute`` may allow one address.
MAX_PER_MINUTE = 10_000.0


def _per_minute_type(text: str) -> float:
    """``--new-games-per-minute``: a finite number above 0 (a rate of 0 would refuse every game for ever)."""
    allowed = f"give a number above 0 and at most {MAX_PER_MINUTE:g}"
    value = read_float(text, allowed)
    if not (math.isfinite(value) and 0 < value <= MAX_PER_MINUTE):
        raise argparse.ArgumentTypeError(f"{shorten(text)} is out of range: {allowed}")
    return value


def add_serve_parser(sub: Any) -> None:
    """``allfives serve``: the web game on ``--host``:``--port``."""
    p = sub.add_parser(
        "serve", help="play in the browser: a local web app against the agents",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve the web game: play All Fives in a browser against the registered agents, with a hint "
                    "from a search agent, and the finished game in the replay viewer. Binds to the loopback "
                    "address unless --host says otherwise.",
        epilog="limits:\n"
               "  A game moved or viewed in the last --active-minutes (or with a request in flight) is being\n"
               "  played and is never dropped to make room. At --max-games an idle game makes room (a finished\n"
               "  one first); when every game is being played a new game is refused with 503 and Retry-After.\n"
               "  Each client address may start --new-game-burst games at once, then --new-games-per-minute\n"
               "  (429 and Retry-After beyond). A web game lasts at most 50 hands with a target of at most\n"
               "  1000 (400 beyond). An answer carries at most 200 frames (the page fetches the rest from\n"
               "  'next'). No answer may be shown in another site's frame (X-Frame-Options: DENY,\n"
               "  Content-Security-Policy: frame-ancestors 'none').")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this computer only)")
    p.add_argument("--port", type=int_type(1, 65535, "a port from 1 to 65535"), default=8000,
                   help="port (default 8000)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--max-games", type=int_type(1, 100_000, "an integer from 1 to 100000"), default=None,
                   help="games kept in memory at most (default 100); past it an idle game makes room")
    p.add_argument("--expiry-minutes", type=int_type(1, 7 * 24 * 60, "minutes from 1 to 10080"), default=None,
                   help="a game untouched this long is dropped (default 120)")
    p.add_argument("--active-minutes", type=int_type(1, 7 * 24 * 60, "minutes from 1 to 10080"), default=None,
                   help="a game moved or viewed within this many minutes is being played: never dropped to make "
                        "room (default 10)")
    p.add_argument("--new-game-burst", type=int_type(1, 100_000, "an integer from 1 to 100000"), default=None,
                   help="new games one client address may start at once (default 10)")
    p.add_argument("--new-games-per-minute", type=_per_minute_type, default=None,
                   help="new games one client address may start per minute after the burst (default 2)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="do not compile the search in the background at start (the first hint then waits for it)")
    p.set_defaults(handler=run_serve)


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or name (then the server answers loopback Host headers only)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    """Run the server until Ctrl-C."""
    try:
        import uvicorn

        from ..serve import app as serve_app
        from ..serve.limits import DEFAULT_BURST, DEFAULT_PER_MINUTE
        from ..serve.sessions import DEFAULT_ACTIVE, DEFAULT_CAP, DEFAULT_EXPIRY
    except ImportError as exc:
        raise ServeError(f"{INSTALL_PLAY} ({exc})") from None
    cap = args.max_games or DEFAULT_CAP
    expiry = args.expiry_minutes * 60 if args.expiry_minutes else DEFAULT_EXPIRY
    active = args.active_minutes * 60 if args.active_minutes else DEFAULT_ACTIVE
    burst = args.new_game_burst or DEFAULT_BURST
    per_minute = args.new_games_per_minute or DEFAULT_PER_MINUTE
    app = serve_app.create_app(cap=cap, expiry=expiry, active=active, new_game_burst=burst,
                               new_games_per_minute=per_minute,
                               hosts=serve_app.LOOPBACK_HOSTS if _loopback(args.host) else None)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{args.port}/"
    if not _loopback(args.host):
        print(f"allfives serve: bound to {args.host}, reachable from other machines", file=sys.stderr)
    print(f"All Fives web game on {url} (Ctrl-C stops it); up to {cap} games, each kept for {expiry // 60:g} idle "
          f"minutes and never dropped while played in the last {active / 60:g} minutes; {burst} new games at once "
          f"per address, then {per_minute:g} a minute")
    if args.open:
        threading.Thread(target=_open_when_up, args=(server, url), daemon=True).start()
    if not args.no_warm_up:
        threading.Thread(target=_warm_up, daemon=True).start()
    server.run()
    return 0


def _open_when_up(server: Any, url: str) -> None:
    """Open ``url`` in the browser once the server listens."""
    import time
    import webbrowser

    for _ in range(100):
        if server.started:
            webbrowser.open(url)
            return
        time.sleep(0.1)


def _warm_up() -> None:
    """Compile the search once in the background, so the first hint does not wait for it."""
    from ..serve.catalog import warm_up

    warm_up()
