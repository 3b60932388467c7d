"""The agent protocol: how an agent answers (:class:`Agent`), given what its seat may see.

Every agent, scripted or learned, is an object with ``act(view) -> action id`` and ``reset(seed)``.
The view is a :class:`~allfives_env.core.view.PlayerView` (re-exported here): the seat's window on the
game, with public accessors only, so an agent cannot read another seat's tiles or the boneyard order.
Only :class:`~allfives_env.core.view.OracleView`, which the harness hands to agents that declare
``uses_hidden_information = True`` (analysis only), exposes the game itself.

Agents own a seeded ``numpy.random.Generator`` (``self.rng``) and never touch global randomness, so a
match is reproducible from its seeds.
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from typing import Any, Optional, Protocol, runtime_checkable

import numpy as np

from ..core.view import OracleView, PlayerView

__all__ = ["Agent", "Analyst", "Evaluator", "SearchingAgent", "OracleView", "PlayerView"]


@runtime_checkable
class Evaluator(Protocol):
    """An agent that values placements (the expert, a trained policy): what a search takes as its prior.
    ``isinstance(agent, Evaluator)`` asks whether it has the method."""

    def evaluate(self, view: PlayerView, actions: list[int]) -> list[float]: ...


@runtime_checkable
class Analyst(Protocol):
    """An agent that values every legal move (a search): what the web game's hints ask of it.
    ``isinstance(agent, Analyst)`` asks whether it has the method."""

    def move_scores(self, view: PlayerView, legal: list[int]) -> list[float]: ...


class Agent:
    """Base class of every agent. Subclasses implement :meth:`act`.

    ``name`` is the registry name; ``params`` the keyword arguments it was built with that differ from
    the subclass's defaults (so a worker process can rebuild it from :meth:`spec`, and specs stay short):
    subclasses pass every parameter to ``super().__init__`` and the defaults are dropped here.
    ``uses_hidden_information`` is True only for analysis oracles.
    """

    name = "agent"
    uses_hidden_information = False

    def __init__(self, seed: Optional[int] = None, **params: Any) -> None:
        self.params: dict[str, Any] = {}
        self._record_params(**params)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def _record_params(self, **params: Any) -> None:
        """Add parameters to :attr:`params`, leaving out those equal to the class's defaults: for a
        subclass whose base's ``__init__`` does not know all its parameters (``pimc-net``'s over ``pimc``)."""
        defaults = _init_defaults(type(self))  # type: ignore[arg-type]  # a class hashes; mypy misreads type(self)'s __hash__
        self.params.update({k: v for k, v in params.items() if k not in defaults or defaults[k] != v})

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game; reseed the agent's own generator (None keeps it running)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, view: PlayerView) -> int:
        """Return a legal action id for ``view.seat``."""
        raise NotImplementedError

    def __call__(self, view: PlayerView) -> int:
        return self.act(view)

    def spec(self) -> str:
        """A string that :func:`allfives_env.agents.make_agent` turns back into this agent."""
        if not self.params:
            return self.name
        return self.name + ":" + ",".join(f"{k}={_spec_value(v)}" for k, v in sorted(self.params.items()))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"


class SearchingAgent(Agent):
    """An agent that thinks before it moves: a seat with one legal action plays it at once, every other
    decision goes to :meth:`search`, and ``seconds_per_move`` reports the mean think time of those
    searched decisions (what the think-time tables compare; forced moves would flatter it)."""

    def __init__(self, seed: Optional[int] = None, **params: Any) -> None:
        super().__init__(seed, **params)
        self.moves = 0
        self.seconds = 0.0

    @property
    def seconds_per_move(self) -> float:
        """Average think time of the decisions searched so far (forced moves excluded)."""
        return self.seconds / self.moves if self.moves else 0.0

    def act(self, view: PlayerView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        action = self.search(view, legal)
        self.moves += 1
        self.seconds += time.perf_counter() - start
        return action

    def search(self, view: PlayerView, legal: list[int]) -> int:
        """The chosen action among ``legal`` (two or more) for ``view.seat``."""
        raise NotImplementedError


@functools.lru_cache(maxsize=None)
def _init_defaults(cls: type) -> dict[str, Any]:
    """The keyword defaults of ``cls.__init__``."""
    return {
        # ignore: mypy warns that calling __init__ on an instance is unsound; this reads a signature only
        name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()  # type: ignore[misc]
        if p.default is not inspect.Parameter.empty
    }


def _spec_value(value: Any) -> str:
    """A parameter as the registry reads it back: JSON for numbers, booleans and null, strings as they are."""
    return value if isinstance(value, str) else json.dumps(value)
