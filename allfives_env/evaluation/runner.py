"""Runner: plays the scheduled duplicate sets of some match-ups, in this process or a pool, with a progress bar.

Workers rebuild agents from their spec strings (:func:`allfives_env.agents.make_agent`), one instance
per seat, and call ``reset(seed)`` before every game: an agent's ``reset`` must forget everything that
could change its play, or its results would depend on which games a worker happened to run before.
Results are put in order of set index, so the numbers depend on the seed only, never on ``processes``.
(Think times are measured, so they vary from run to run.) What a pool runs (:func:`_init_worker`,
:func:`_worker_play_set`) are module-level functions, so that they pickle under any start method.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional, Sequence, TextIO

from ..agents import Agent, make_agent
from ..core.rules import Rules
from ..match import play_game
from .results import GameRecord
from .scheduling import agent_seeds, set_seeds

#: Without tqdm, the plain counter on stderr is redrawn at most this often (seconds), and at the end.
_PLAIN_PROGRESS_SECONDS = 0.5
#: Tasks (duplicate sets) go to the pool in chunks: about _CHUNKS_PER_WORKER chunks per worker, so the
#: load stays balanced, but at most _MAX_CHUNK sets per chunk, so the progress bar keeps moving.
_CHUNKS_PER_WORKER = 8
_MAX_CHUNK = 32


class _Progress:
    """tqdm when it is installed, else a plain counter on stderr; silent when disabled."""

    def __init__(self, total: int, enabled: bool, desc: str, stream: Optional[TextIO] = None) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream  # looked up now: tests and tools swap it
        self._bar: Any = None
        self._last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, desc=desc, unit="game", file=stream, dynamic_ncols=True)

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= _PLAIN_PROGRESS_SECONDS or self.done >= self.total:
            self._last = now
            print(f"\r{self.desc}: {self.done}/{self.total} games", end="", file=self.stream, flush=True)

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            print(file=self.stream, flush=True)


# a task: (match-up index, agent specs, seat orders, set index, base seed)
_Task = tuple[int, tuple[str, ...], tuple[tuple[int, ...], ...], int, int]
_worker_state: dict[str, Any] = {}  # per worker process: the rules and its agents by (spec, seat)


def _init_worker(rules: Rules) -> None:
    _worker_state.clear()
    _worker_state["rules"] = rules
    _worker_state["agents"] = {}


def _play_set(task: _Task, rules: Rules, cache: dict[tuple[str, int], Agent]) -> list[GameRecord]:
    """Play every game of one duplicate set with the same game and deal seeds."""
    _, specs, orders, set_index, seed = task
    game_seed, deal_seed = set_seeds(seed, set_index)
    n = rules.num_players
    records = []
    for g, order in enumerate(orders):
        agents = []
        for seat, who in enumerate(order):
            key = (specs[who], seat)
            if key not in cache:
                cache[key] = make_agent(specs[who])
            agents.append(cache[key])
        result = play_game(rules, agents, seed=game_seed, deal_seed=deal_seed,
                           agent_seeds=agent_seeds(seed, set_index, g, n))
        records.append(GameRecord(set_index, g, tuple(order), result.winner, result.gains, result.hands,
                                  result.truncated, list(result.decisions), list(result.think_seconds)))
    return records


def _worker_play_set(task: _Task) -> tuple[int, int, list[GameRecord]]:
    return task[0], task[3], _play_set(task, _worker_state["rules"], _worker_state["agents"])


@contextmanager
def _played_sets(
    tasks: Sequence[_Task], rules: Rules, processes: int, mp_context: Optional[str],
) -> Iterator[Iterator[tuple[int, int, list[GameRecord]]]]:
    """``(match-up index, set index, records)`` of every task as it is played: here when ``processes``
    is 1, else by a pool that is started on entering (so before the caller's progress bar exists, and
    no tqdm thread exists when workers fork) and stopped on leaving."""
    if processes == 1:
        cache: dict[tuple[str, int], Agent] = {}
        yield ((task[0], task[3], _play_set(task, rules, cache)) for task in tasks)
        return
    ctx = multiprocessing.get_context(mp_context)
    chunksize = max(1, min(_MAX_CHUNK, len(tasks) // (processes * _CHUNKS_PER_WORKER)))
    with ctx.Pool(processes, initializer=_init_worker, initargs=(rules,)) as pool:
        yield pool.imap_unordered(_worker_play_set, tasks, chunksize=chunksize)


def run_matchups(
    rules: Rules, matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]], sets: int, seed: int,
    processes: int, progress: bool, desc: str, mp_context: Optional[str] = None,
) -> list[list[GameRecord]]:
    """Play ``sets`` duplicate sets of every match-up; the records per match-up, ordered by set."""
    tasks: list[_Task] = [
        (m, specs, tuple(orders), s, seed) for s in range(sets) for m, (specs, orders) in enumerate(matchups)
    ]
    total_games = sum(len(orders) for _, orders in matchups) * sets
    results: list[list[Optional[list[GameRecord]]]] = [[None] * sets for _ in matchups]
    with _played_sets(tasks, rules, processes, mp_context) as played:
        bar = _Progress(total_games, progress, desc)
        try:
            for m, s, records in played:
                results[m][s] = records
                bar.update(len(records))
        finally:
            bar.close()
    return [[r for rs in per_matchup for r in rs] for per_matchup in results]  # type: ignore[union-attr]
