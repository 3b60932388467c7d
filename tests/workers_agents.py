"""Misbehaving agents for the worker-hardening tests, registered under ``test-*`` names on import.

They live in a module of their own so that worker processes (forked from a test, or a command line
started with ``python -c "import workers_agents; ..."``) have them in their registry too. Each plays the
first legal action, and misbehaves at its ``at``-th move of a game (from 1; the default 0 never does, so
that a test module which plays every registered agent by name, after this one registered them, is
unharmed); with ``when_seed``, only in the game where it was reset with that agent seed (so a test picks
the duplicate set, game and seat: :func:`allfives_env.evaluation.agent_seeds`).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Optional

import numba

from allfives_env.agents import Agent, PlayerView, register_agent
from allfives_env.core.errors import GameOverError


class _CountingAgent(Agent):
    """Plays the first legal action; :meth:`misbehave` at its move ``at`` of a game (0: never; only in the
    game with agent seed ``when_seed`` when that is given)."""

    name = "test-counting"

    def __init__(self, seed: Optional[int] = None, at: int = 0, when_seed: int = -1) -> None:
        super().__init__(seed, at=at, when_seed=when_seed)
        self.at = at
        self.when_seed = when_seed
        self.moves = 0
        self.armed = when_seed == -1

    def reset(self, seed: Optional[int] = None) -> None:
        super().reset(seed)
        self.moves = 0
        self.armed = self.when_seed == -1 or seed == self.when_seed

    def act(self, view: PlayerView) -> int:
        self.moves += 1
        if self.armed and self.at and self.moves == self.at:
            self.misbehave()
        return view.legal[0]

    def misbehave(self) -> None:
        raise NotImplementedError


class SleepForeverAgent(_CountingAgent):
    """Never returns (a blocking sleep)."""

    name = "test-sleep"

    def misbehave(self) -> None:
        time.sleep(10**6)


class SwallowingSleeperAgent(_CountingAgent):
    """Never returns, and swallows every exception raised inside it (even BaseException) once."""

    name = "test-swallow"

    def misbehave(self) -> None:
        try:
            time.sleep(10**6)
        except BaseException:
            pass
        time.sleep(10**6)


@numba.njit(cache=False)
def spin(steps: int) -> int:
    """Native code that runs for hours (``steps`` = 10**12) and never returns to the interpreter."""
    x = 1
    for i in range(steps):
        x = (x * 3 + i) % 1000003
    return x


class NativeSpinAgent(_CountingAgent):
    """Keeps the CPU busy in native code (compiled by numba), where no Python signal handler can run."""

    name = "test-spin"

    def misbehave(self) -> None:
        spin(10**12)


class ExitAgent(_CountingAgent):
    """Ends its process at once, like the kernel's out-of-memory killer would (exit code 7)."""

    name = "test-exit"

    def misbehave(self) -> None:
        os._exit(7)


class RaisingAgent(_CountingAgent):
    """Raises an ordinary RuntimeError."""

    name = "test-raise"

    def misbehave(self) -> None:
        raise RuntimeError("the agent broke")


class Unpicklable(Exception):
    """An exception that cannot cross to another process: it holds a lock."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class UnpicklableAgent(_CountingAgent):
    """Raises an exception that does not pickle."""

    name = "test-unpicklable"

    def misbehave(self) -> None:
        raise Unpicklable("cannot be pickled")


class TypedErrorAgent(_CountingAgent):
    """Raises one of the package's own typed errors, which must arrive unchanged."""

    name = "test-typed"

    def misbehave(self) -> None:
        raise GameOverError("a typed error from the agent")


class InterruptAgent(_CountingAgent):
    """Raises KeyboardInterrupt inside the move (Ctrl-C inside a worker)."""

    name = "test-interrupt"

    def misbehave(self) -> None:
        raise KeyboardInterrupt


for _cls in (SleepForeverAgent, SwallowingSleeperAgent, NativeSpinAgent, ExitAgent, RaisingAgent, UnpicklableAgent,
             TypedErrorAgent, InterruptAgent):
    register_agent(_cls.name, _cls, (_cls.__doc__ or "").splitlines()[0])
