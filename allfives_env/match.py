"""Play one game between agents on the core engine, fast, and report what happened.

This is the loop every evaluation runs: no PettingZoo wrappers, one :class:`PlayerView` per decision,
each agent timed. ``deal_seed`` makes the deals independent of play, which is what duplicate
evaluation needs (the same deals replayed with the agents in other seats).

An agent that fails is named: its own exception (any but the package's typed errors, which already say
what was wrong) becomes an :class:`AgentError` naming the agent, its seat, the move and the game's seeds,
so the game can be replayed; a move over the optional time limit raises
:class:`~allfives_env.evaluation.errors.MoveTimeLimitError` with the same details.

How the time limit is kept, and why: ``SIGALRM`` from an interval timer (``signal.setitimer``) armed for
every move, whose handler raises inside the agent. It costs about a microsecond a move, stops Python code
and blocking calls (``sleep``, locks, I/O) wherever they are, needs no extra process, and so works the
same in this process and in every worker of a pool. It needs the main thread of a POSIX process, and it
cannot stop native code that never returns to the interpreter: for that, a worker process may also call
:func:`stop_process_on_native_overrun`, which lets the kernel end the whole process (the pool then reports
the dead worker) if a move keeps burning CPU far past the limit.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Optional, Sequence, overload

from .agents.base import Agent, OracleView, PlayerView
from .agents.registry import AgentError
from .core.errors import AllFivesError, EvaluationError, IllegalActionError, MoveTimeLimitError, short_repr
from .core.game import Game
from .core.rules import Rules

#: The range of a move time limit, in seconds: below a millisecond the interval timer rounds to "off";
#: a day is more than any agent should think about one move.
MIN_MOVE_TIME_LIMIT, MAX_MOVE_TIME_LIMIT = 0.001, 86_400.0
#: A timed move whose agent swallows the timeout (``except BaseException``) is interrupted again every
#: ``max(limit, _REPEAT_SECONDS)`` seconds, so it cannot run on unseen, nor be interrupted in a tight loop.
_REPEAT_SECONDS = 0.05
#: The most characters of an agent's spec shown in an error message.
_NAME_MAX = 200
#: In a process that called :func:`stop_process_on_native_overrun`: the CPU seconds per usable CPU, past the
#: limit, after which a move stuck in native code ends the process. None: never (the default).
_native_grace: Optional[float] = None


@dataclass
class GameResult:
    """The outcome of one game, seen by side (team in a partnership, else player)."""

    winner: Optional[int]
    scores: list[int]
    start_scores: list[int]
    hands: int
    truncated: bool
    decisions: list[int] = field(default_factory=list)  # per seat
    think_seconds: list[float] = field(default_factory=list)  # per seat
    move_seconds: list[list[float]] = field(default_factory=list)  # per seat, each of its moves' think time

    @property
    def gains(self) -> list[int]:
        """Points each side gained over the game (plays and settlements)."""
        return [s - t for s, t in zip(self.scores, self.start_scores)]


def stop_process_on_native_overrun(grace_seconds: float) -> None:
    """For worker processes only: from now on, a timed move that keeps this process busy for more than
    ``(limit + grace_seconds)`` CPU seconds per usable CPU ends the process with ``SIGVTALRM``.

    That is the backstop for native code that never lets the ``SIGALRM`` handler run. It counts CPU time
    (``ITIMER_VIRTUAL``, whose default action ends the process without the interpreter), scaled by the
    CPUs, so a multi-threaded move is never ended before ``limit + grace_seconds`` of wall time; a move
    blocked in native code without using CPU is not caught by it."""
    global _native_grace
    if hasattr(signal, "SIGVTALRM"):
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
        _native_grace = float(grace_seconds)


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class _MoveTimeout(BaseException):
    """Raised by the alarm inside a move that ran past its limit. A BaseException, so that an agent's own
    ``except Exception`` does not swallow it."""


@overload
def check_move_time_limit(limit: float) -> float: ...
@overload
def check_move_time_limit(limit: None) -> None: ...
@overload
def check_move_time_limit(limit: Optional[float]) -> Optional[float]: ...


def check_move_time_limit(limit: Optional[float]) -> Optional[float]:
    """A move time limit in seconds as a float (None: no limit), from :data:`MIN_MOVE_TIME_LIMIT` to
    :data:`MAX_MOVE_TIME_LIMIT`. The limit is kept with ``SIGALRM`` (see
    :func:`play_game`), so it is refused where there is no ``signal.setitimer``."""
    if limit is None:
        return None
    allowed = (f"give a number of seconds from {MIN_MOVE_TIME_LIMIT:g} to {MAX_MOVE_TIME_LIMIT:g}, or None "
               f"for no limit")
    if isinstance(limit, bool) or not isinstance(limit, numbers.Real):
        raise EvaluationError(f"move_time_limit={short_repr(limit)} is not allowed: {allowed}")
    try:
        value = float(limit)
    except OverflowError:  # an integer too large for a float is simply too large
        value = math.inf
    if not MIN_MOVE_TIME_LIMIT <= value <= MAX_MOVE_TIME_LIMIT:
        raise EvaluationError(f"move_time_limit={short_repr(limit)} is not allowed: {allowed}")
    if not hasattr(signal, "setitimer"):
        raise EvaluationError("move_time_limit needs signal.setitimer (POSIX), which this platform lacks: "
                              "run without a move time limit")
    return value


class _MoveClock:
    """The time limit of every move of one game: installs the ``SIGALRM`` handler on entering, arms the timer
    in :meth:`start` and disarms it in :meth:`stop`; on leaving, the caller's handler and what was left of
    the caller's own real-time timer are put back."""

    def __init__(self, limit: float) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise EvaluationError("a move time limit works in the main thread only (it uses SIGALRM); "
                                  "call from the main thread, or let evaluate() play in worker processes")
        self.limit = limit
        self._repeat = max(limit, _REPEAT_SECONDS)
        self._native = None if _native_grace is None else (limit + _native_grace) * _usable_cpus()
        self._in_move = False
        self._previous: Any = None
        self._caller_timer = (0.0, 0.0)
        self._entered = 0.0

    def __enter__(self) -> "_MoveClock":
        self._caller_timer = signal.getitimer(signal.ITIMER_REAL)
        self._entered = time.monotonic()
        self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        signal.signal(signal.SIGALRM, self._previous)
        left, interval = self._caller_timer
        if left > 0:  # the caller's alarm, late rather than lost if it fell due during the game
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - self._entered), 1e-6), interval)

    def _on_alarm(self, signum: int, frame: Optional[FrameType]) -> None:
        if self._in_move:
            raise _MoveTimeout

    def start(self) -> None:
        self._in_move = True
        signal.setitimer(signal.ITIMER_REAL, self.limit, self._repeat)
        if self._native is not None:
            signal.setitimer(signal.ITIMER_VIRTUAL, self._native)

    def stop(self) -> None:
        self._in_move = False  # first: from here on a late alarm raises nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        if self._native is not None:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def _failure(cls: type[AgentError], what: str, agent: Agent, seat: int, move: int, limit: Optional[float],
             seeds: dict[str, Optional[int]]) -> AgentError:
    """``cls`` naming the agent (by its spec, which rebuilds it), its seat, the move and the seeds, with those
    as attributes too."""
    try:
        name = agent.spec()
    except Exception:  # an agent whose spec() fails is still named, by its repr
        name = short_repr(agent)
    shown = repr(name) if len(name) <= _NAME_MAX else repr(name[:_NAME_MAX - 3] + "...")
    when = "before its first move (in reset)" if move == 0 else f"at move {move} of the game"
    seed_text = ", ".join(f"{k} seed {v}" for k, v in seeds.items())
    exc = cls(f"agent {shown} in seat {seat} {what} {when} ({seed_text})")
    # an AgentError carries these only when play raises it (not for an unknown agent): set here, not declared
    exc.agent, exc.seat, exc.move, exc.limit, exc.seeds = name, seat, move, limit, seeds  # type: ignore[attr-defined]
    return exc


def _seeds(seed: int, deal_seed: int, agent_seeds: Optional[Sequence[Optional[int]]],
           seat: int) -> dict[str, Optional[int]]:
    """The seeds that replay a game, as an error names them: the game's, the deals', the seat's agent's."""
    return {"game": seed, "deal": deal_seed, "agent": None if agent_seeds is None else agent_seeds[seat]}


def _described(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # an exception whose own __str__ fails
        text = ""
    text = text if len(text) <= 300 else text[:297] + "..."
    return f"raised {type(exc).__name__}" + (f": {text}" if text else "")


def _check_seats(rules: Rules, agents: Sequence[Agent], agent_seeds: Optional[Sequence[Optional[int]]]) -> None:
    """One :class:`Agent` per seat, and one agent seed per seat when seeds are given."""
    if len(agents) != rules.num_players:
        raise AgentError(f"need one agent per seat: {rules.num_players} agents, got {len(agents)}")
    for seat, agent in enumerate(agents):
        if not isinstance(agent, Agent):
            raise AgentError(f"the agent in seat {seat} is {short_repr(agent)}, not an Agent: build one with "
                             f"make_agent('greedy') or the like")
    if agent_seeds is not None and len(agent_seeds) != rules.num_players:
        raise AgentError(f"need one agent seed per seat: {rules.num_players}, got {len(agent_seeds)}")


def warm_up(agent: Agent, rules: Rules, seat: int) -> None:
    """One untimed move of ``agent`` in ``seat`` of a fixed game (the other seats play their first legal
    action), then a reset: what an agent's first move costs once, such as compiling a search's kernels on a
    cold numba cache, must not be charged to a timed move. An agent error is raised as in a game."""
    game = Game(rules, 0)
    while not game.over and game.current != seat:
        game.step(game.legal[0])
    try:
        agent.reset(0)
        if not game.over:
            agent.act((OracleView if agent.uses_hidden_information else PlayerView)(game, seat))
        agent.reset(None)
    except AllFivesError:
        raise
    except Exception as exc:
        raise AgentError(f"agent {agent.spec()} in seat {seat} failed before the match, on a warm-up move: "
                         f"{_described(exc)}") from exc


def play_game(
    rules: Rules,
    agents: Sequence[Agent],
    seed: int,
    deal_seed: Optional[int] = None,
    agent_seeds: Optional[Sequence[Optional[int]]] = None,
    game: Optional[Game] = None,
    move_time_limit: Optional[float] = None,
) -> GameResult:
    """Play a whole game with ``agents[seat]`` in each seat.

    ``seed`` drives the game's own random choices (random leaders), ``deal_seed`` the deals (default:
    ``seed``), ``agent_seeds[seat]`` reseeds each agent before the game. ``game`` may be given to start
    from a prepared position instead. ``move_time_limit``: seconds an agent may take over one move (None:
    no limit; see this module's docstring for how it is kept); a move over it raises
    :class:`~allfives_env.evaluation.errors.MoveTimeLimitError`. An agent's own exception in ``reset``
    or ``act`` raises :class:`AgentError` (the package's typed errors pass unchanged).
    """
    _check_seats(rules, agents, agent_seeds)
    clock = None
    if move_time_limit is not None:
        clock = _MoveClock(check_move_time_limit(move_time_limit))
    limit = None if clock is None else clock.limit
    if game is None:
        game = Game(rules, seed, deal_seed=seed if deal_seed is None else deal_seed)
    n = rules.num_players
    move = 0
    seeds_of = functools.partial(_seeds, seed, seed if deal_seed is None else deal_seed, agent_seeds)
    for seat, agent in enumerate(agents):
        try:
            agent.reset(None if agent_seeds is None else agent_seeds[seat])
        except AllFivesError:
            raise
        except Exception as exc:
            raise _failure(AgentError, _described(exc), agent, seat, 0, limit, seeds_of(seat)) from exc
    views = [
        (OracleView if agent.uses_hidden_information else PlayerView)(game, seat) for seat, agent in enumerate(agents)
    ]
    decisions = [0] * n
    think = [0.0] * n
    move_seconds: list[list[float]] = [[] for _ in range(n)]
    start_scores = list(game.scores)
    now = time.perf_counter
    with clock if clock is not None else contextlib.nullcontext():
        while not game.over:
            seat = game.current
            agent = agents[seat]
            move += 1
            t0 = now()
            try:
                if clock is None:
                    action = agent.act(views[seat])
                else:
                    clock.start()
                    try:
                        action = agent.act(views[seat])
                    finally:
                        clock.stop()
            except _MoveTimeout:  # raised by the clock only
                assert clock is not None
                clock.stop()
                raise _failure(MoveTimeLimitError, f"took longer than the move time limit of {limit:g} s", agent, seat,
                               move, limit, seeds_of(seat)) from None
            except AllFivesError:
                raise
            except Exception as exc:
                raise _failure(AgentError, _described(exc), agent, seat, move, limit, seeds_of(seat)) from exc
            spent = now() - t0
            think[seat] += spent
            move_seconds[seat].append(spent)
            decisions[seat] += 1
            if action not in game.legal:
                raise IllegalActionError(
                    f"agent {agents[seat]!r} in seat {seat} chose {short_repr(action)} at move {move} of the game (game seed "
                    f"{seed}); legal: {', '.join(game.action_names())}"
                )
            game.step(action)
    return GameResult(game.winner, list(game.scores), start_scores, game.hands_completed, game.truncated, decisions, think,
                      move_seconds)
