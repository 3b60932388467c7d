"""Runner: plays the scheduled duplicate sets of some match-ups, in this process or a pool, with a progress bar.

Workers rebuild agents from their spec strings (:func:`allfives_env.agents.make_agent`), one instance
per seat, and call ``reset(seed)`` before every game: an agent's ``reset`` must forget everything that
could change its play, or its results would depend on which games a worker happened to run before.
Results are put in order of set index, so the numbers depend on the seed only, never on ``processes``.
(Think times are measured, so they vary from run to run.) What a pool runs (:func:`_init_worker`,
:func:`_worker_play_chunk`) are module-level functions, so that they pickle under any start method.

The pool is a :class:`concurrent.futures.ProcessPoolExecutor`, because it notices a worker that dies
(killed, out of memory, ``os._exit``) and fails the run's futures with ``BrokenProcessPool``, where
``multiprocessing.Pool`` silently loses the dead worker's task and waits for it forever. The run then
stops at once with :class:`~allfives_env.evaluation.errors.WorkerDiedError`, naming the worker and the
duplicate set it was playing (each worker notes its pid and current set in a small shared array) and
keeping every set that had finished. An agent's exception arrives as the
:class:`~allfives_env.core.errors.AgentError` that :func:`~allfives_env.match.play_game` raised (one
that does not pickle is turned into one that does). Workers ignore Ctrl-C (the main process stops them)
and leave quietly, without a traceback, when the main process is gone.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO

from ..agents import Agent, AgentError, make_agent
from ..core.errors import AllFivesError
from ..core.rules import Rules
from ..match import play_game, stop_process_on_native_overrun, warm_up
from ..parent_watch import exit_with_parent
from .errors import WorkerDiedError
from .results import GameRecord
from .scheduling import SetDeal, planned_sets

#: Without tqdm, the plain counter on stderr is redrawn at most this often (seconds), and at the end.
_PLAIN_PROGRESS_SECONDS = 0.5
#: Tasks (duplicate sets) go to the pool in chunks: about _CHUNKS_PER_WORKER chunks per worker, so the
#: load stays balanced, but at most _MAX_CHUNK sets per chunk, so the progress bar keeps moving.
_CHUNKS_PER_WORKER = 8
_MAX_CHUNK = 32
#: Chunks handed to the pool ahead of the results, per worker: enough that no worker waits for work.
_CHUNKS_IN_FLIGHT_PER_WORKER = 2
#: How often a worker checks that the main process is still there (seconds).
_PARENT_CHECK_SECONDS = 0.25
#: With a move time limit, a worker whose move keeps it busy this many CPU seconds (per CPU) past the
#: limit, in native code the limit cannot interrupt, is ended (see stop_process_on_native_overrun).
NATIVE_OVERRUN_GRACE = 1.0
#: Per worker, in the shared status array: its pid, then the match-up and set it is playing (-1: none).
_SLOT = 3


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


# a task: (match-up index, agent specs, seat orders, the set's seeds, its place in the run's list of sets)
_Task = tuple[int, tuple[str, ...], tuple[tuple[int, ...], ...], SetDeal, int]
# what playing one task gives: (match-up index, the set's place, records)
_Played = tuple[int, int, list[GameRecord]]
_worker_state: dict[str, Any] = {}  # per worker process: the rules, the limit, its agents by (spec, seat), its slot


def _play_set(task: _Task, rules: Rules, cache: dict[tuple[str, int], Agent],
              move_time_limit: Optional[float], move_times: bool = False) -> list[GameRecord]:
    """Play every game of one duplicate set with the same game and deal seeds."""
    _, specs, orders, deal, _ = task
    game_seed, deal_seed = deal.game_seed, deal.deal_seed
    n = rules.num_players
    records = []
    for g, order in enumerate(orders):
        agents = []
        for seat, who in enumerate(order):
            key = (specs[who], seat)
            if key not in cache:
                cache[key] = make_agent(specs[who])
                if move_time_limit is not None:  # its first move may compile kernels: not a timed move
                    warm_up(cache[key], rules, seat)
            agents.append(cache[key])
        result = play_game(rules, agents, seed=game_seed, deal_seed=deal_seed,
                           agent_seeds=deal.agent_seeds(g, n), move_time_limit=move_time_limit)
        records.append(GameRecord(deal.index, g, tuple(order), result.winner, result.gains, result.hands,
                                  result.truncated, list(result.decisions), list(result.think_seconds),
                                  result.move_seconds if move_times else None))
    return records


def _init_worker(rules: Rules, move_time_limit: Optional[float], move_times: bool, status: Any, next_slot: Any,
                 parent: tuple[int, bool]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the main process handles it
    # the main process killed or sent SIGTERM: end quietly instead of waiting for work or printing a traceback
    exit_with_parent(parent, poll=_PARENT_CHECK_SECONDS)
    if move_time_limit is not None:
        stop_process_on_native_overrun(NATIVE_OVERRUN_GRACE)
    with next_slot.get_lock():
        slot = next_slot.value
        next_slot.value += 1
    _worker_state.clear()
    _worker_state.update(rules=rules, limit=move_time_limit, move_times=move_times, agents={}, status=status,
                         slot=slot if (slot + 1) * _SLOT <= len(status) else None)
    _note(os.getpid(), -1, -1)


def _note(pid: int, matchup: int, set_index: int) -> None:
    """Write this worker's pid and what it is playing into its slot of the shared status array."""
    slot = _worker_state["slot"]
    if slot is not None:
        _worker_state["status"][slot * _SLOT:(slot + 1) * _SLOT] = [pid, matchup, set_index]


def _sendable(exc: AllFivesError) -> AllFivesError:
    """``exc`` if it can cross to the main process, else an :class:`AgentError` with its text. It must
    pickle, and rebuild from its reduction (``copy.copy`` calls the class with its args, as unpickling
    does), or the pool could not read the result back and would break."""
    try:
        pickle.dumps(exc)
        copy.copy(exc)
        return exc
    except Exception:
        return AgentError(f"{type(exc).__name__}: {exc}")


def _worker_play_chunk(chunk: Sequence[_Task]) -> list[_Played]:
    state = _worker_state
    pid = os.getpid()
    played = []
    for task in chunk:
        _note(pid, task[0], task[3].index)
        try:
            played.append((task[0], task[4], _play_set(task, state["rules"], state["agents"], state["limit"],
                                                       state["move_times"])))
        except AllFivesError as exc:
            raise _sendable(exc) from None
    _note(pid, -1, -1)
    return played


class _WorkerDeath(Exception):
    """Inside this module: the pool broke. ``dead``: ``(pid, exit code, (match-up, set) or None)`` of each
    worker that died on its own (empty: the pool cannot tell which); ``sets``: what the workers were playing
    when it cannot; ``cause``: the pool's own reason when no worker died (a result it could not read back)."""

    def __init__(self, dead: list[tuple[int, Optional[int], Optional[tuple[int, int]]]], sets: list[tuple[int, int]],
                 cause: Optional[str]) -> None:
        super().__init__(dead, sets, cause)
        self.dead, self.sets, self.cause = dead, sets, cause


class _Pool:
    """Chunks of tasks played by a process pool, a bounded number in flight; see the module docstring."""

    def __init__(self, tasks: Sequence[_Task], rules: Rules, processes: int, mp_context: Optional[str],
                 move_time_limit: Optional[float], move_times: bool) -> None:
        ctx = multiprocessing.get_context(mp_context)
        size = max(1, min(_MAX_CHUNK, len(tasks) // (processes * _CHUNKS_PER_WORKER)))
        self._chunks = (tasks[i:i + size] for i in range(0, len(tasks), size))
        self._window = processes * _CHUNKS_IN_FLIGHT_PER_WORKER
        self._status = ctx.Array("q", [-1] * (processes * _SLOT), lock=False)
        others = set(multiprocessing.active_children())
        self._executor = ProcessPoolExecutor(
            processes, mp_context=ctx, initializer=_init_worker,
            # the watcher thread only, no kernel hook: the executor may start a worker from another thread
            initargs=(rules, move_time_limit, move_times, self._status, ctx.Value("i", 0), (os.getpid(), False)))
        self._pending: dict[Future[list[_Played]], None] = {}
        # The executor's workers, to stop them at once and to tell which one died: the executor (before
        # Python 3.14) has no public handle on them, but they are this process's new children. The same
        # Process objects get their exit codes when the executor joins them.
        self._workers: dict[int, Any] = {}
        try:
            self._fill()  # starts the workers now, before the caller's progress bar (and its thread) exists
            self._workers = self._started(others)
        except BaseException:  # Ctrl-C while they start: stop what started
            self._workers = self._started(others)
            self.close(finished=False)
            raise

    @staticmethod
    def _started(others: set[Any]) -> dict[int, Any]:
        """This process's children, by pid, that are not in ``others``: the workers the executor started."""
        return {p.pid: p for p in multiprocessing.active_children() if p not in others and p.pid is not None}

    def _fill(self) -> None:
        while len(self._pending) < self._window:
            chunk = next(self._chunks, None)
            if chunk is None:
                return
            self._pending[self._executor.submit(_worker_play_chunk, chunk)] = None

    def played(self) -> Iterator[_Played]:
        while self._pending:
            done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            for future in done:
                del self._pending[future]
                try:
                    results = future.result()
                except BrokenProcessPool as exc:
                    raise self._death(exc) from None
                yield from results
            self._fill()

    def _death(self, exc: BrokenProcessPool) -> _WorkerDeath:
        """Which workers died and what they were playing, once the broken pool has ended the others (with
        SIGTERM: a worker that died of an outside SIGTERM looks the same, and is then told by its set)."""
        self._executor.shutdown(wait=True)  # the pool already ended its workers: this waits until they are gone
        status = list(self._status)
        doing = {status[i]: (status[i + 1], status[i + 2]) for i in range(0, len(status), _SLOT) if status[i] > 0}
        exits = {pid: p.exitcode for pid, p in self._workers.items()}
        sigterm = -int(signal.SIGTERM)
        dead = [pid for pid, code in exits.items() if code not in (None, 0, sigterm)]
        busy = [pid for pid, code in exits.items() if code == sigterm and doing.get(pid, (-1, -1))[1] >= 0]
        if not dead and len(busy) == 1:
            dead = busy
        if dead:
            return _WorkerDeath([(pid, exits[pid], doing[pid] if doing.get(pid, (-1, -1))[1] >= 0 else None)
                                 for pid in dead], [], None)
        cause = None if exc.__cause__ is None else str(exc.__cause__).strip()
        return _WorkerDeath([], [(m, s) for m, s in doing.values() if s >= 0], cause)

    def close(self, finished: bool) -> None:
        """Stop the pool: wait for it when every result is in, else end the workers at once (Ctrl-C, an
        agent's error, a dead worker) rather than wait for the chunks they are playing."""
        if finished:
            self._executor.shutdown(wait=True)
            return
        for process in self._workers.values():
            if process.exitcode is None:  # not yet joined, so its pid is still its own
                process.kill()
        # the pool sees its workers die, fails what was pending and joins them: none is left behind
        self._executor.shutdown(wait=True, cancel_futures=True)


@contextmanager
def _played_sets(tasks: Sequence[_Task], rules: Rules, processes: int, mp_context: Optional[str],
                 move_time_limit: Optional[float], move_times: bool) -> Iterator[Iterator[_Played]]:
    """``(match-up index, set index, records)`` of every task as it is played: here when ``processes``
    is 1, else by a pool that is started on entering (so before the caller's progress bar exists, and
    no tqdm thread exists when workers fork) and stopped on leaving. A time limit outside the main
    thread, where this process cannot take SIGALRM, plays in a pool of one worker."""
    in_main = threading.current_thread() is threading.main_thread()
    if processes == 1 and (move_time_limit is None or in_main):
        cache: dict[tuple[str, int], Agent] = {}
        yield ((task[0], task[4], _play_set(task, rules, cache, move_time_limit, move_times)) for task in tasks)
        return
    pool: Optional[_Pool] = None
    finished = False
    try:
        pool = _Pool(tasks, rules, processes, mp_context, move_time_limit, move_times)
        yield pool.played()
        finished = True
    finally:
        if pool is not None:
            pool.close(finished)


def _set_names(matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]],
               sets: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"duplicate set {s} of {' vs '.join(matchups[m][0])}" for m, s in sets)


def _exit_text(code: Optional[int], move_time_limit: Optional[float]) -> str:
    """How a worker ended, from its exit code (-N: killed by signal N)."""
    if code is None or code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    text = f"killed by {name}"
    if move_time_limit is not None and name == "SIGVTALRM":
        text += (f": a move kept it busy far past the move time limit of {move_time_limit:g} s, in native code "
                 f"that the limit cannot interrupt")
    return text


def _worker_died(death: _WorkerDeath, matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]],
                 results: list[list[Optional[list[GameRecord]]]], total_games: int,
                 move_time_limit: Optional[float]) -> WorkerDiedError:
    """The error of a run whose pool broke: who died, what it was playing, and what had finished."""
    finished = [[r for rs in per_matchup if rs is not None for r in rs] for per_matchup in results]
    done_sets = sum(rs is not None for per_matchup in results for rs in per_matchup)
    all_sets = sum(len(per_matchup) for per_matchup in results)
    done_games = sum(len(f) for f in finished)
    if death.dead:
        who = "; ".join(
            f"worker process {pid} died ({_exit_text(code, move_time_limit)})"
            + (f" while playing {_set_names(matchups, [where])}" if where is not None else "")
            for pid, code, where in death.dead)
        sets = [where for _, _, where in death.dead if where is not None]
    else:
        sets = death.sets
        who = (f"the worker pool broke ({death.cause.splitlines()[-1][:300]})" if death.cause
               else "a worker process died (the pool cannot tell which)")
        if sets:
            who += f"; the workers were playing {_set_names(matchups, sets)}"
    message = (f"{who}. The run stopped: {done_sets} of {all_sets} duplicate sets ({done_games} of {total_games} "
               f"games) had finished (their records: WorkerDiedError.finished)")
    pid, code = (death.dead[0][0], death.dead[0][1]) if death.dead else (None, None)
    return WorkerDiedError(message, pid=pid, exitcode=code, sets=sets, finished_sets=done_sets, total_sets=all_sets,
                           finished_games=done_games, finished=finished)


def run_matchups(
    rules: Rules, matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]], sets: int, seed: int,
    processes: int, progress: bool, desc: str, mp_context: Optional[str] = None,
    move_time_limit: Optional[float] = None,
) -> list[list[GameRecord]]:
    """Play ``sets`` duplicate sets of every match-up; the records per match-up, ordered by set.

    ``move_time_limit`` (seconds, checked by the caller) bounds every move of every agent; see
    :func:`allfives_env.match.play_game`. A worker that dies raises :class:`WorkerDiedError`."""
    return play_sets(rules, matchups, planned_sets(seed, sets), processes, progress, desc, mp_context, move_time_limit)


def play_sets(
    rules: Rules, matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]], deals: Sequence[SetDeal],
    processes: int, progress: bool, desc: str, mp_context: Optional[str] = None,
    move_time_limit: Optional[float] = None, move_times: bool = False,
    on_set: Optional[Callable[[int, SetDeal, list[GameRecord]], None]] = None,
) -> list[list[GameRecord]]:
    """Play the duplicate sets ``deals`` of every match-up; the records per match-up, in the order of ``deals``.

    ``move_times`` keeps each move's think time in the records (``GameRecord.move_seconds``). ``on_set(matchup
    index, deal, records)`` is called in this process as each set finishes, in the order they finish: the
    bench journals them there, so that a run that stops can resume from its finished sets."""
    tasks: list[_Task] = [
        (m, specs, tuple(orders), deal, p) for p, deal in enumerate(deals) for m, (specs, orders) in enumerate(matchups)
    ]
    total_games = sum(len(orders) for _, orders in matchups) * len(deals)
    results: list[list[Optional[list[GameRecord]]]] = [[None] * len(deals) for _ in matchups]
    try:
        with _played_sets(tasks, rules, processes, mp_context, move_time_limit, move_times) as played:
            bar = _Progress(total_games, progress, desc)
            try:
                for m, p, records in played:
                    results[m][p] = records
                    bar.update(len(records))
                    if on_set is not None:
                        on_set(m, deals[p], records)
            finally:
                bar.close()
    except _WorkerDeath as death:
        raise _worker_died(death, matchups, results, total_games, move_time_limit) from None
    # every slot is filled here (played yields each set once, or the run raised): no None is left
    return [[r for rs in per_matchup for r in rs] for per_matchup in results]  # type: ignore[union-attr]
