"""Load on the web game (``allfives serve``): many games played to the end at once through its HTTP API, on
loopback, with the latency of the person's moves.

A real server is started as its own process (``python -m allfives_env serve`` on a free loopback port, no
background warm-up), so the client here does not share its interpreter. ``--games`` games run concurrently
(asyncio streams, one keep-alive connection per game): each creates a game against ``--opponents`` (fast agents: ``random``, ``greedy``) and plays
it out, the person's moves drawn from the legal ones with a seeded generator, the agents' moves asked with
``POST .../ai``. The latency reported is that of ``POST .../move`` alone, the person's move: parse, the
engine's step, the new frames and the answer, with no agent thinking in it (agents move in their own
requests). Then every game's replay is downloaded and verified by re-simulation (``load_replay``).

With ``--large-fetchers K`` the same load runs a second time, on a fresh server, while K clients (in a
process of their own, so their parsing does not slow the timed client) each fetch the largest game a web
game may be, page by page from its first frame, over and over: 4 players, double-twelve, drawing allowed,
the highest target and the most hands allowed, played to its end first. The person's moves of the other
games are timed as before: a server that built those frames on its event loop, or in one answer, would
stall them. Its figures go under ``"with_large_fetches"`` in the JSON.

Bounded: the run stops by itself after ``--deadline`` seconds, and fails (exit 1) if a game did not finish,
a request failed or a replay did not verify.

Run::

    python benchmarks/serve_load.py                          # 50 games, target 100, random/greedy
    python benchmarks/serve_load.py --games 50 --json serve_load.json
    python benchmarks/serve_load.py --large-fetchers 2 --json benchmarks/results/serve_load.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import queue
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np

#: How long the server process may take to answer its first request, in seconds.
START_SECONDS = 60.0
#: The largest web game (the hands and target are the web game's caps): 4 players on a double-twelve set,
#: drawing allowed (a random player draws often: more frames a hand), scores counted in fives (so the
#: target is far and the game lasts every hand allowed), the person and the agents playing at random.
LARGEST_GAME = {"players": 4, "seat": 0, "opponents": ["random"],
                "rules": {"max_pip": 12, "may_draw_when_able": True, "score_unit": 5}}


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

    fetch: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        ms = np.asarray(self.move_ms) if self.move_ms else np.zeros(1)
        out = {k: v for k, v in asdict(self).items() if k not in ("move_ms", "fetch")}
        out.update(moves=len(self.move_ms), move_p50_ms=round(float(np.percentile(ms, 50)), 2),
                   move_p95_ms=round(float(np.percentile(ms, 95)), 2),
                   move_p99_ms=round(float(np.percentile(ms, 99)), 2), move_max_ms=round(float(ms.max()), 2),
                   requests_per_second=round(self.requests / self.seconds, 1) if self.seconds else 0.0)
        out["errors"] = self.errors[:10]
        out.update(self.fetch)
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
        self.received = 0  # the bytes of the last answer's body

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
        self.received = length
        return int(status_line.split()[1]), json.loads(await reader.readexactly(length))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _play(conn: Connection, k: int, opponent: str, target: int, seed: int, report: LoadReport) -> Optional[dict]:
    """Play game ``k`` to its end; returns its replay record (None after an error, which is noted)."""
    settings = {"players": 2, "opponents": [opponent], "rules": {"target": target}, "seed": seed * 1000 + k}
    gid = await _play_out(conn, k, settings, seed, report)
    if gid is None:
        return None
    status, record = await conn.request("GET", f"/api/games/{gid}/replay.json")
    report.requests += 1
    return record if status == 200 else None


async def _play_out(conn: Connection, k: int, settings: dict[str, Any], seed: int, report: LoadReport,
                    timed: bool = True) -> Optional[str]:
    """Start game ``k`` with ``settings`` and play it to its end (the person's moves timed unless not
    ``timed``); returns its id (None after an error, which is noted)."""
    rng = np.random.default_rng([seed, k])
    status, state = await conn.request("POST", "/api/games", settings)
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
            if timed:
                report.move_ms.append((time.perf_counter() - start) * 1000)
        else:
            status, state = await conn.request("POST", f"/api/games/{gid}/ai", {"since": total})
        report.requests += 1
        if status != 200:
            report.errors.append(f"game {k}: answered {status} {str(state)[:200]}")
            return None
        total = state["total"]
    if timed:
        report.finished += 1
    return gid


# ---------------------------------------------------------------------------------------------- the largest game
async def _build_largest(url: str, count: int, seed: int, hands: Optional[int]) -> tuple[list[str], LoadReport]:
    """Play ``count`` of the largest web games to their end (``hands``: fewer hands than the cap, for a
    quicker test); returns their ids and the report of their building (errors only)."""
    from allfives_env.serve.schemas import MAX_SERVED_HANDS, MAX_SERVED_TARGET

    report = LoadReport(count)
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    conns = [Connection(host, int(port)) for _ in range(count)]
    rules = {**LARGEST_GAME["rules"], "target": MAX_SERVED_TARGET, "max_hands": hands or MAX_SERVED_HANDS}
    try:
        games = [{**LARGEST_GAME, "rules": rules, "seed": seed + k} for k in range(count)]
        gids = await asyncio.gather(*[_play_out(conns[k], 10_000 + k, games[k], seed, report, timed=False)
                                      for k in range(count)])
    finally:
        for conn in conns:
            conn.close()
    return [g for g in gids if g is not None], report


async def _fetch_loop(url: str, gid: str, stop: Any, out: dict[str, Any]) -> None:
    """Fetch game ``gid`` whole, page by page from its first frame, until ``stop`` is set; note each
    whole fetch's time and size, and check the pages make the game (every frame once, in order)."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    conn = Connection(host, int(port))
    try:
        while not stop.is_set():
            start, since, size, frames, pages = time.perf_counter(), 0, 0, 0, 0
            while True:
                status, page = await conn.request("GET", f"/api/games/{gid}?since={since}")
                size, pages = size + conn.received, pages + 1
                first = page["frames"][0]["step"] if status == 200 and page["frames"] else since + 1
                if status != 200 or page["since"] != since or first != since + 1:
                    out["errors"].append(f"fetch of {gid} from {since}: answered {status} {str(page)[:200]}")
                    return
                frames += len(page["frames"])
                if page["next"] >= page["total"]:
                    break
                since = page["next"]
            if frames != page["total"]:
                out["errors"].append(f"fetch of {gid}: {frames} frames in the pages, {page['total']} in the game")
                return
            out["ms"].append((time.perf_counter() - start) * 1000)
            out.update(frames=frames, bytes=size, pages=pages)
    finally:
        conn.close()


def _fetchers(url: str, gids: list[str], stop: Any, results: Any) -> None:
    """The fetching clients' process: one loop per game until ``stop``; their figures go to ``results``."""
    outs = [{"ms": [], "errors": []} for _ in gids]

    async def run() -> None:
        await asyncio.gather(*[_fetch_loop(url, gid, stop, out) for gid, out in zip(gids, outs)])

    asyncio.run(run())
    results.put(outs)


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
             seed: int = 0, deadline: float = 50.0, large_fetchers: int = 0,
             large_hands: Optional[int] = None) -> LoadReport:
    """Play ``games`` games at once against the server at ``url``; verify every replay. With
    ``large_fetchers``, that many clients loop-fetch a largest web game each meanwhile (``large_hands``:
    that game's hands, default the web game's cap)."""
    from allfives_env.core.errors import ReplayError
    from allfives_env.core.replay import load_replay

    report = LoadReport(games)
    fetching = None
    if large_fetchers:
        built = time.perf_counter()
        try:
            gids, building = asyncio.run(asyncio.wait_for(_build_largest(url, large_fetchers, seed, large_hands),
                                                          deadline))
        except asyncio.TimeoutError:
            report.errors.append(f"the largest games were not played out within the {deadline:g} s deadline")
            return report
        report.errors.extend(building.errors)
        report.fetch["large_build_seconds"] = round(time.perf_counter() - built, 1)
        stop, results = multiprocessing.Event(), multiprocessing.Queue()
        fetching = multiprocessing.Process(target=_fetchers, args=(url, gids, stop, results), daemon=True)
        fetching.start()
        time.sleep(0.5)  # the fetchers are under way before the timed load starts
    start = time.perf_counter()
    try:
        records = asyncio.run(_run(url, games, list(opponents), target, seed, deadline, report))
    finally:
        report.seconds = round(time.perf_counter() - start, 2)
        if fetching is not None:
            stop.set()
            try:
                report.fetch.update(_fetch_summary(results.get(timeout=START_SECONDS), large_fetchers, report))
            except queue.Empty:
                report.errors.append(f"the fetching clients sent no figures (exit code {fetching.exitcode})")
            fetching.join(START_SECONDS)
    for k, record in enumerate(records):
        try:
            if record is not None and load_replay(record).over:
                report.verified += 1
        except ReplayError as exc:
            report.errors.append(f"game {k}: replay does not verify: {exc}")
    return report


def _fetch_summary(outs: list[dict[str, Any]], fetchers: int, report: LoadReport) -> dict[str, Any]:
    """The fetching clients' figures: how many whole fetches of the largest game, how long one took, its size."""
    for out in outs:
        report.errors.extend(out["errors"])
    ms = np.asarray([m for out in outs for m in out["ms"]] or [0.0])
    first = next((out for out in outs if "frames" in out), {})
    return {"large_fetchers": fetchers, "large_game_frames": first.get("frames", 0),
            "large_game_pages": first.get("pages", 0), "large_game_mb": round(first.get("bytes", 0) / 1e6, 2),
            "large_fetches": sum(len(out["ms"]) for out in outs),
            "large_fetch_p50_ms": round(float(np.percentile(ms, 50)), 1)}


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
        # every game comes from this one address: its new-game budget covers them all
        self.command = [sys.executable, "-m", "allfives_env", "serve", "--port", str(self.port), "--no-warm-up",
                        "--max-games", str(max_games), "--new-game-burst", str(max_games)]
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
    parser.add_argument("--large-fetchers", type=int, default=0, metavar="K",
                        help="run the load again while K clients loop-fetch the largest web game (default 0: not)")
    parser.add_argument("--json", metavar="F", help="write the summary as JSON here")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]  # before the run: what else the machine was doing
    with ServerProcess(max_games=max(100, 2 * args.games)) as server:
        report = run_load(server.url, args.games, tuple(args.opponents), args.target, args.seed, args.deadline)
    summary = {**report.summary(), "command": " ".join(["python", "benchmarks/serve_load.py", *(argv or sys.argv[1:])]),
               "cpus": os.cpu_count(), "machine": f"{platform.machine()} {platform.system()}, Python "
                                                  f"{platform.python_version()}",
               "date": time.strftime("%Y-%m-%d"), "load_at_start": round(load, 2)}
    ok = report.ok
    if args.large_fetchers:
        with ServerProcess(max_games=max(100, 2 * args.games + args.large_fetchers)) as server:
            fetched = run_load(server.url, args.games, tuple(args.opponents), args.target, args.seed, args.deadline,
                               large_fetchers=args.large_fetchers)
        summary["with_large_fetches"] = fetched.summary()
        ok = ok and fetched.ok and fetched.fetch.get("large_fetches", 0) > 0
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(summary, out, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
