"""The web game's games in memory: one :class:`Session` per game (the engine's game, the agents in the other
seats, the frames so far, a busy flag), kept by a :class:`SessionStore` with a cap and an idle expiry.

A session is worked on by one request at a time: :meth:`Session.claim` is taken before a move, an agent's
move or an analysis and refused (409) while another holds it, so two moves sent at once for one game can
never interleave, while other games go on (agents think in a thread pool, off the event loop). The store
drops a game nobody has touched for ``expiry`` seconds and, when a new game would pass ``cap``, the least
recently used one; an id that is gone answers 404. Ids are random (``secrets``), never derived from input.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..agents.base import Agent, PlayerView
from ..agents.registry import check_agent_rules, make_agent
from ..core.errors import AgentError, short_repr
from ..core.game import Game
from ..core.replay import game_record
from ..core.rules import Rules
from ..core.seeds import MAX_SEED
from .schemas import NewGame, RequestError
from .table import LiveTable

__all__ = ["DEFAULT_CAP", "DEFAULT_EXPIRY", "Session", "SessionStore", "build_agent", "start_session"]

#: Games kept at most, and how long (seconds) an untouched game is kept: the defaults of ``allfives serve``.
DEFAULT_CAP = 100
DEFAULT_EXPIRY = 2 * 60 * 60
#: The most hands a served game may last (the engine's own default cap): a game's frames stay a few MB.
MAX_SERVED_HANDS = 200
#: The seat name of the person in ``agents`` lists (the replay's "agents" field).
PERSON = "you"


def build_agent(spec: str, seed: int, rules: Rules) -> Agent:
    """The agent ``spec`` seeded ``seed``, checked against ``rules``; an agent that reads hidden tiles (the
    ``oracle``) is refused: it would be no fair opponent, nor a fair adviser."""
    agent = make_agent(spec, seed=seed)
    if agent.uses_hidden_information:
        raise AgentError(f"agent {short_repr(spec)} reads the other hands (analysis only): choose a fair agent")
    check_agent_rules(agent, rules)
    return agent


def agent_seed(seed: int, k: int) -> int:
    """The seed of the ``k``-th agent of a game seeded ``seed`` (agents apart from the deals' stream)."""
    return (seed + 1 + k) % (MAX_SEED + 1)


@dataclass
class Session:
    """One game in play: the person at ``seat``, an agent in every other seat."""

    id: str
    game: Game
    seat: int
    seed: int
    agents: dict[int, Agent]
    table: LiveTable
    touched: float
    analysts: dict[str, Agent] = field(default_factory=dict)
    _busy: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def claim(self) -> Iterator[None]:
        """Hold the game for one request; a second request meanwhile is refused with 409."""
        if not self._busy.acquire(blocking=False):
            raise RequestError(409, "another request for this game is still running (a move or an analysis): "
                                    "wait for its answer, then send the next")
        try:
            yield
        finally:
            self._busy.release()

    @property
    def agent_specs(self) -> list[str]:
        """Who plays each seat: the agents' specs, and "you" for the person."""
        return [PERSON if s == self.seat else self.agents[s].spec() for s in range(self.game.num_players)]

    def record(self) -> dict[str, Any]:
        """The game's replay record (``allfives replay`` verifies it), with who played each seat."""
        return {**game_record(self.game, self.seed), "agents": self.agent_specs}

    def play(self, action: int) -> None:
        """The person's move (the caller has checked that it is their turn); the engine checks it is legal."""
        self.game.step(action)
        self.table.update()

    def agent_move(self) -> None:
        """One decision of the agent to act (forced draws and passes after it happen inside the step)."""
        seat = self.game.current
        self.game.step(self.agents[seat].act(PlayerView(self.game, seat)))
        self.table.update()

    def analyst(self, spec: str) -> Agent:
        """The search agent ``spec`` of this game's analyses (built once, seeded from the game)."""
        if spec not in self.analysts:
            agent = build_agent(spec, agent_seed(self.seed, self.game.num_players + len(self.analysts)), self.game.rules)
            if not callable(getattr(agent, "move_scores", None)):
                raise AgentError(f"agent {short_repr(spec)} gives no value per move: choose a search agent "
                                 "(pimc-sift, pimc, pimc-net)")
            self.analysts[spec] = agent
        return self.analysts[spec]


def start_session(settings: NewGame, seed: int, now: float) -> Session:
    """A new game from checked ``settings``: its rules, its agents (each built and checked now, so no game
    starts that an agent cannot play) and its first frames. Raises the engine's errors for bad rules or
    agents."""
    options = {**settings.rules, "num_players": settings.players}
    if settings.partnership is not None:
        options["partnership"] = settings.partnership
    rules = Rules.from_options(options)
    if rules.max_hands is None or rules.max_hands > MAX_SERVED_HANDS:
        raise RequestError(422, f"max_hands={short_repr(rules.max_hands)} is not allowed here: give 1 to "
                                f"{MAX_SERVED_HANDS} (the server keeps every game in memory)")
    others = [s for s in range(rules.num_players) if s != settings.seat]
    agents = {s: build_agent(spec, agent_seed(seed, s), rules) for s, spec in zip(others, settings.opponents)}
    game = Game(rules, seed)
    return Session(secrets.token_urlsafe(12), game, settings.seat, seed, agents, LiveTable(game), now)


class SessionStore:
    """The games in memory, least recently used first, with a cap and an idle expiry (seconds)."""

    def __init__(self, cap: int = DEFAULT_CAP, expiry: float = DEFAULT_EXPIRY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"cap={short_repr(cap)} is not allowed: give a positive integer")
        if not (isinstance(expiry, (int, float)) and math.isfinite(expiry) and expiry > 0):
            raise ValueError(f"expiry={short_repr(expiry)} is not allowed: give a positive number of seconds")
        self.cap, self.expiry, self.clock = cap, float(expiry), clock
        self.sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self.sessions)

    def now(self) -> float:
        """The store's clock."""
        return self.clock()

    def add(self, session: Session) -> None:
        """Keep ``session``, dropping expired games and then, past the cap, the least recently used."""
        self.purge()
        while len(self.sessions) >= self.cap:
            self.sessions.popitem(last=False)
        self.sessions[session.id] = session

    def get(self, game_id: str) -> Session:
        """The game ``game_id``, marked as just used; 404 when there is none (never was, expired, dropped)."""
        self.purge()
        session = self.sessions.get(game_id) if isinstance(game_id, str) else None
        if session is None:
            raise RequestError(404, f"no game {short_repr(game_id)} on this server: it never existed, or it was "
                                    f"dropped (idle for {self.expiry / 60:g} minutes, or more than {self.cap} games); "
                                    "start a new game")
        session.touched = self.now()
        self.sessions.move_to_end(game_id)
        return session

    def purge(self) -> None:
        """Drop every game untouched for longer than the expiry."""
        limit = self.now() - self.expiry
        for game_id in [k for k, s in self.sessions.items() if s.touched < limit]:
            del self.sessions[game_id]

    def new_seed(self) -> int:
        """A fresh seed for a game whose settings give none (printed on the page, so it can be replayed)."""
        return secrets.randbelow(2**31)
