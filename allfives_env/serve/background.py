"""The web game served by uvicorn in a background thread on a free loopback port: for the browser tests, the
load benchmark and the screenshot script, which drive a real server from the same process.

``with BackgroundServer(create_app()) as server: ... server.url ...``; leaving the block stops the server and
waits for its thread. The port is bound before the thread starts (a socket on port 0, handed to uvicorn),
so no other process can take it in between.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any, Optional

__all__ = ["BackgroundServer"]

#: How long to wait for the server to start or to stop, in seconds.
WAIT = 15.0


class BackgroundServer:
    """uvicorn serving ``app`` on ``host`` (loopback) at a free port, in a daemon thread."""

    def __init__(self, app: Any, host: str = "127.0.0.1") -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True,
                                       name="allfives-serve")

    def __enter__(self) -> "BackgroundServer":
        self.thread.start()
        deadline = time.monotonic() + WAIT
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the web game did not start on {self.url}")
            time.sleep(0.02)
        return self

    def __exit__(self, kind: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT)
        self.sock.close()
