"""``allfives serve``: start the web game (:mod:`allfives_env.serve`) on a local port, optionally opening it.

Starlette and uvicorn (the ``[play]`` extra) are imported only when the command runs, so ``allfives --help``
and every other command work without them; without them the command says what to install.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
import threading
from typing import Any

from ..core.errors import AllFivesError
from .options import int_type

__all__ = ["add_serve_parser", "run_serve"]

#: What to install when Starlette or uvicorn is missing.
INSTALL_PLAY = 'the web game needs the [play] extra: pip install -e ".[play]"'


class ServeError(AllFivesError, RuntimeError):
    """The web game cannot start (a missing extra)."""


def add_serve_parser(sub: Any) -> None:
    """``allfives serve``: the web game on ``--host``:``--port``."""
    p = sub.add_parser("serve", help="play in the browser: a local web app against the agents",
                       description="Serve the web game: play All Fives in a browser against the registered agents, "
                                   "with a hint from a search agent, and the finished game in the replay viewer. "
                                   "Binds to the loopback address unless --host says otherwise.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this computer only)")
    p.add_argument("--port", type=int_type(1, 65535, "a port from 1 to 65535"), default=8000,
                   help="port (default 8000)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--max-games", type=int_type(1, 100_000, "an integer from 1 to 100000"), default=None,
                   help="games kept in memory at most (default 100); past it the least recently used goes")
    p.add_argument("--expiry-minutes", type=int_type(1, 7 * 24 * 60, "minutes from 1 to 10080"), default=None,
                   help="a game untouched this long is dropped (default 120)")
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

        from ..serve.app import LOOPBACK_HOSTS, create_app
        from ..serve.sessions import DEFAULT_CAP, DEFAULT_EXPIRY
    except ImportError as exc:
        raise ServeError(f"{INSTALL_PLAY} ({exc})") from None
    cap = args.max_games or DEFAULT_CAP
    expiry = args.expiry_minutes * 60 if args.expiry_minutes else DEFAULT_EXPIRY
    app = create_app(cap=cap, expiry=expiry, hosts=LOOPBACK_HOSTS if _loopback(args.host) else None)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{args.port}/"
    if not _loopback(args.host):
        print(f"allfives serve: bound to {args.host}, reachable from other machines", file=sys.stderr)
    print(f"All Fives web game on {url} (Ctrl-C stops it); {cap} games kept, each for "
          f"{expiry // 60:g} idle minutes")
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
