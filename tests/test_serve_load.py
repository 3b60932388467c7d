"""A bounded load test of the web game: a real server (``allfives serve`` in its own process on a free
loopback port) plays 50 games to the end at once through its HTTP API against fast agents; nothing is
lost, every replay verifies, and the person's moves stay quick, also while two clients loop-fetch long games.
Each stops by itself (a deadline) and takes about 10 s on the reference machine (2 cores).
``benchmarks/serve_load.py`` is the same run as a benchmark.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the web game needs the [play] extra: pip install -e '.[play]'")
pytest.importorskip("uvicorn", reason="the web game needs the [play] extra: pip install -e '.[play]'")

from benchmarks.serve_load import ServerProcess, run_load

GAMES = 50
#: A generous bound on the 95th percentile of a person's move under this load (about 10 ms measured): it
#: catches a server that stalls (an agent on the event loop, a lock held across games), not noise.
P95_MS = 500.0


def test_fifty_games_at_once_all_finish_and_verify() -> None:
    with ServerProcess(max_games=2 * GAMES) as server:
        report = run_load(server.url, games=GAMES, opponents=("random", "greedy"), target=100, seed=1, deadline=45.0)
    summary = report.summary()
    assert report.errors == [], report.errors
    assert report.finished == report.verified == GAMES
    assert summary["moves"] > 10 * GAMES and report.requests > 2 * summary["moves"]
    assert summary["move_p95_ms"] < P95_MS, summary


def test_moves_stay_quick_while_two_clients_loop_fetch_long_games() -> None:
    """Two clients fetch a long game (4 players, double-twelve, drawing allowed) whole, page by page, over
    and over, while 16 games are played: every page fits its game, and the person's moves stay quick."""
    games = 16
    with ServerProcess(max_games=100) as server:
        report = run_load(server.url, games=games, opponents=("random", "greedy"), target=100, seed=2, deadline=60.0,
                          large_fetchers=2, large_hands=3)
    summary = report.summary()
    assert report.errors == [], report.errors
    assert report.finished == report.verified == games
    assert summary["large_fetches"] >= 2 and summary["large_game_pages"] > 1, summary
    assert summary["move_p95_ms"] < P95_MS, summary
