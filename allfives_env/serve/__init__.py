"""``allfives serve``: a local web app for playing All Fives against the agents in a browser.

The game runs on the exact core engine on the server (:mod:`allfives_env.core`); the page draws the
frames the replay viewer draws, with the viewer's own drawing code (``viewer_assets/draw.js``), and asks
the server for everything else: the legal moves, the agents' moves, a search agent's analysis, the replay.
Needs the ``[play]`` extra (Starlette, uvicorn): ``pip install -e ".[play]"``. :func:`create_app` builds
the ASGI app (:mod:`allfives_env.serve.app` lists its routes).
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
