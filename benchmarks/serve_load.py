"""Load on the web game (``allfives serve``): many games played to the end at once through its HTTP API, on
loopback, with the latency of the person's moves.

A real server is started as its own process (``python -m allfives_env serve`` on a free loopback port, no
background warm-up), so the client here does not share its interpreter. ``--games`` games run concurrently
(asyncio streams, one keep-alive connection per game): each creates a game against ``--opponents`` (fast agents: ``random``, ``greedy``) and plays
it out, the person's moves drawn from the legal ones with a seeded generator, the agents' moves asked with
``POST .../ai``. The latency reported is that of ``POST .../move`` alone, the person's move: parse, the
engine's step, the new frames and the answer, with no agent thinking in it (agents move in their own
requests). Then every game's replay is downloaded and verified by re-simulation (``load_replay``).

Bounded: the run stops by itself after ``--deadline`` seconds, and fails (exit 1) if a game did not finish,
a request failed or a replay did not verify.

Run::

    python benchmarks/serve_load.py                          # 50 games, target 100, random/greedy
    python benchmarks/serve_load.py --games 50 --json serve_load.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

#: How long the server process may take to answer its first request, in seconds.
START_SECONDS = 60.0


@dataclass
class LoadReport:
    """What a load run saw: games started, finished and verified, requests, and the person's move latencies."""

    games: int
    finished: int = 0
    verified: int = 0
    requests: int = 0
    seconds: float = 0.0
    move_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ms = np.asarray(self.move_ms) if self.move_ms else np.zeros(1)
        out = {k: v for k, v in asdict(self).items() if k != "move_ms"}
        out.update(moves=len(self.move_ms), move_p50_ms=round(float(np.percentile(ms, 50)), 2),
                   move_p95_ms=round(float(np.percentile(ms, 95)), 2),
                   move_p99_ms=round(float(np.percentile(ms, 99)), 2), move_max_ms=round(float(ms.max()), 2),
                   requests_per_second=round(self.requests / self.seconds, 1) if self.seconds else 0.0)
        out["errors"] = self.errors[:10]
        return out

    @property
    def ok(self) -> bool:
        return not self.errors and self.finished == self.verified == self.games


class Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams: a client light enough that 50 of them in one
    process measure the server, not the client (httpx's async client spent twice the server's CPU here)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: Optional[asyncio.StreamReader] = None
        self.writer: Optional[asyncio.StreamWriter] = None

    async def request(self, method: str, path: str, body: Optional[dict] = None) -> tuple[int, Any]:
        """(status, the JSON answer) of one request."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Length: {len(data)}\r\n"
                + ("Content-Type: application/json\r\n" if body is not None else "") + "\r\n")
        self.writer.write(head.encode() + data)
        reader = self.reader
        assert reader is not None
        status_line = await reader.readuntil(b"\r\n")
        headers = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        length = int(headers.split("content-length:", 1)[1].split("\r\n", 1)[0])
        return int(status_line.split()[1]), json.loads(await reader.readexactly(length))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _play(conn: Connection, k: int, opponent: str, target: int, seed: int, report: LoadReport) -> Optional[dict]:
    """Play game ``k`` to its end; returns its replay record (None after an error, which is noted)."""
    rng = np.random.default_rng([seed, k])
    status, state = await conn.request("POST", "/api/games", {"players": 2, "opponents": [opponent],
                                                              "rules": {"target": target}, "seed": seed * 1000 + k})
    report.requests += 1
    if status != 201:
        report.errors.append(f"game {k}: new game answered {status} {str(state)[:200]}")
        return None
    gid, total = state["id"], state["total"]
    while not state["over"]:
        if state["your_turn"]:
            move = state["legal"][int(rng.integers(len(state["legal"])))]
            start = time.perf_counter()
            status, state = await conn.request("POST", f"/api/games/{gid}/move", {"action": move["action"], "since": total})
            report.move_ms.append((time.perf_counter() - start) * 1000)
        else:
            status, state = await conn.request("POST", f"/api/games/{gid}/ai", {"since": total})
        report.requests += 1
        if status != 200:
            report.errors.append(f"game {k}: answered {status} {str(state)[:200]}")
            return None
        total = state["total"]
    report.finished += 1
    status, record = await conn.request("GET", f"/api/games/{gid}/replay.json")
    report.requests += 1
    return record if status == 200 else None


async def _run(url: str, games: int, opponents: list[str], target: int, seed: int, deadline: float,
               report: LoadReport) -> list[Optional[dict]]:
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    conns = [Connection(host, int(port)) for _ in range(games)]
    tasks = [_play(conns[k], k, opponents[k % len(opponents)], target, seed, report) for k in range(games)]
    try:
        return await asyncio.wait_for(asyncio.gather(*tasks), deadline)
    except asyncio.TimeoutError:
        report.errors.append(f"stopped after the {deadline:g} s deadline with {report.finished}/{games} games done")
        return []
    finally:
        for conn in conns:
            conn.close()


def run_load(url: str, games: int = 50, opponents: tuple[str, ...] = ("random", "greedy"), target: int = 100,
             seed: int = 0, deadline: float = 50.0) -> LoadReport:
    """Play ``games`` games at once against the server at ``url``; verify every replay."""
    from allfives_env.core.errors import ReplayError
    from allfives_env.core.replay import load_replay

    report = LoadReport(games)
    start = time.perf_counter()
    records = asyncio.run(_run(url, games, list(opponents), target, seed, deadline, report))
    report.seconds = round(time.perf_counter() - start, 2)
    for k, record in enumerate(records):
        try:
            if record is not None and load_replay(record).over:
                report.verified += 1
        except ReplayError as exc:
            report.errors.append(f"game {k}: replay does not verify: {exc}")
    return report


def free_port() -> int:
    """A free loopback port (bound, read and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """``allfives serve`` in its own process on a free loopback port, stopped on leaving the block."""

    def __init__(self, max_games: int = 1000) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, "-m", "allfives_env", "serve", "--port", str(self.port), "--no-warm-up",
                        "--max-games", str(max_games)]
        self.process: Optional[subprocess.Popen] = None

    def __enter__(self) -> "ServerProcess":
        import httpx

        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        limit = time.monotonic() + START_SECONDS
        while time.monotonic() < limit:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(self.url + "/api/options", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the server did not answer on {self.url} within {START_SECONDS:g} s")

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--opponents", nargs="+", default=["random", "greedy"])
    parser.add_argument("--target", type=int, default=100, help="points that win each game (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deadline", type=float, default=50.0, help="stop after this many seconds (default 50)")
    parser.add_argument("--json", metavar="F", help="write the summary as JSON here")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]  # before the run: what else the machine was doing
    with ServerProcess(max_games=max(100, 2 * args.games)) as server:
        report = run_load(server.url, args.games, tuple(args.opponents), args.target, args.seed, args.deadline)
    summary = {**report.summary(), "command": " ".join(["python", "benchmarks/serve_load.py", *(argv or sys.argv[1:])]),
               "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"),
               "load_at_start": round(load, 2)}
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(summary, out, indent=1)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
