"""The web game's games in memory: one :class:`Session` per game (the engine's game, the agents in the other
seats, the frames so far, a busy flag), kept by a :class:`SessionStore` with a cap and an idle expiry.

A session is worked on by one request at a time: :meth:`Session.claim` is taken before a move, an agent's
move or an analysis and refused (409) while another holds it, so two moves sent at once for one game can
never interleave, while other games go on (agents think in a thread pool, off the event loop).

The store drops a game nobody has touched for ``expiry`` seconds. A game is *active* while a request is
working on it or it was moved or viewed in the last ``active`` seconds; an active game is never dropped,
since a person is playing it. When a new game would pass ``cap``, an inactive game makes room (a finished
one first, then the least recently used); when every game is active the new game is refused (503, with
``Retry-After``), so one client starting games cannot push out the others' games. An id that is gone
answers 404. Ids are random (``secrets``), never derived from input.
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

from ..agents.base import Agent, Analyst, PlayerView
from ..agents.registry import check_agent_rules, make_agent
from ..core.errors import AgentError, short_repr
from ..core.game import Game
from ..core.replay import game_record
from ..core.rules import Rules
from ..core.seeds import MAX_SEED
from .schemas import NewGame, RequestError, SettingsError
from .table import LiveTable

__all__ = ["DEFAULT_ACTIVE", "DEFAULT_CAP", "DEFAULT_EXPIRY", "Session", "SessionStore", "build_agent",
           "start_session"]

#: Games kept at most, how long (seconds) an untouched game is kept, and how long after its last move or
#: view a game counts as being played (never dropped to make room): the defaults of ``allfives serve``.
DEFAULT_CAP = 100
DEFAULT_EXPIRY = 2 * 60 * 60
DEFAULT_ACTIVE = 10 * 60
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
    analysts: dict[str, Analyst] = field(default_factory=dict)
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
    def busy(self) -> bool:
        """Whether a request is working on the game now (a move, an agent's move, an analysis, a view)."""
        return self._busy.locked()

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

    def analyst(self, spec: str) -> Analyst:
        """The search agent ``spec`` of this game's analyses (built once, seeded from the game)."""
        if spec not in self.analysts:
            agent = build_agent(spec, agent_seed(self.seed, self.game.num_players + len(self.analysts)), self.game.rules)
            if not isinstance(agent, Analyst):
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
    rules = Rules.from_options(options)  # the web game's bounds on its size were checked with the request
    others = [s for s in range(rules.num_players) if s != settings.seat]
    agents = {s: build_agent(spec, agent_seed(seed, s), rules) for s, spec in zip(others, settings.opponents)}
    game = Game(rules, seed)
    return Session(secrets.token_urlsafe(12), game, settings.seat, seed, agents, LiveTable(game), now)


class SessionStore:
    """The games in memory, least recently used first, with a cap, an idle expiry and an active window
    (seconds, on ``clock``)."""

    def __init__(self, cap: int = DEFAULT_CAP, expiry: float = DEFAULT_EXPIRY, active: float = DEFAULT_ACTIVE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise SettingsError(f"cap={short_repr(cap)} is not allowed: give a positive integer")
        for name, value in (("expiry", expiry), ("active", active)):
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise SettingsError(f"{name}={short_repr(value)} is not allowed: give a positive number of seconds")
        self.cap, self.expiry, self.active, self.clock = cap, float(expiry), float(active), clock
        self.sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self.sessions)

    def now(self) -> float:
        """The store's clock."""
        return self.clock()

    def is_active(self, session: Session) -> bool:
        """Whether ``session`` is being played: a request works on it, or it was moved or viewed within
        the active window."""
        return session.busy or self.now() - session.touched < self.active

    def check_room(self) -> None:
        """Refuse (503, with the seconds until a game goes idle) unless a new game could be kept now, after
        dropping expired games; nothing else is dropped yet, so a new game refused later changes nothing."""
        self.purge()
        if len(self.sessions) >= self.cap and all(self.is_active(s) for s in self.sessions.values()):
            wait = self.retry_after()
            raise RequestError(503, f"the server is full: all {self.cap} games are being played (moved or viewed "
                                    f"in the last {self.active / 60:g} minutes); try again in {wait} s",
                               retry_after=wait)

    def retry_after(self) -> int:
        """Seconds until the first game stops being active (room for a new game then), at least 1."""
        now = self.now()
        waits = [s.touched + self.active - now for s in self.sessions.values() if not s.busy]
        return max(1, math.ceil(min(waits, default=self.active)))

    def add(self, session: Session) -> None:
        """Keep ``session``, making room at the cap by dropping an inactive game (a finished one first,
        then the least recently used); 503 when every game is active (:meth:`check_room`)."""
        self.check_room()
        while len(self.sessions) >= self.cap:
            idle = [k for k, s in self.sessions.items() if not self.is_active(s)]
            del self.sessions[next((k for k in idle if self.sessions[k].game.over), idle[0])]
        self.sessions[session.id] = session

    def get(self, game_id: str) -> Session:
        """The game ``game_id``, marked as just used; 404 when there is none (never was, expired, dropped)."""
        self.purge()
        session = self.sessions.get(game_id) if isinstance(game_id, str) else None
        if session is None:
            raise RequestError(404, f"no game {short_repr(game_id)} on this server: it never existed, or it was "
                                    f"dropped (idle for {self.expiry / 60:g} minutes, or idle for "
                                    f"{self.active / 60:g} minutes when the server was full); start a new game")
        session.touched = self.now()
        self.sessions.move_to_end(game_id)
        return session

    def purge(self) -> None:
        """Drop every game untouched for longer than the expiry (never one a request is working on)."""
        limit = self.now() - self.expiry
        for game_id in [k for k, s in self.sessions.items() if s.touched < limit and not s.busy]:
            del self.sessions[game_id]

    def new_seed(self) -> int:
        """A fresh seed for a game whose settings give none (printed on the page, so it can be replayed)."""
        return secrets.randbelow(2**31)
