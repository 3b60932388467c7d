"""One agent registry: an agent registered once, with its batch twin, is what make_agent builds, what the vector
env seats, what the listings show (describe_agents, ``allfives agents``, the web game's catalog); an agent
without a twin is refused by the vector env with the registry's own list of those that have one."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np
import pytest

from allfives_env.agents import (
    Agent, AgentError, BatchTwin, PlayerView, agent_names, batch_agent_names, batch_twin, describe_agents,
    has_batch_twin, make_agent, register_agent, unregister_agent,
)
from allfives_env.agents import registry
from allfives_env.batch_opponents import POLICY_TWIN, batch_spec_problem, make_batch_opponent
from allfives_env.cli import main
from allfives_env.core import Rules
from allfives_env.core.game import Game
from allfives_env.serve.catalog import catalog
from allfives_env.vector import AllFivesVectorEnv

TWIN = "test-first-legal"
NO_TWIN = "test-no-twin"


class FirstLegalAgent(Agent):
    """Plays the first legal action: simple enough that its batch twin is obviously the same agent."""

    def act(self, view: PlayerView) -> int:
        return view.legal[0]


class FirstLegalBatch:
    """The batch twin: the first legal action of every live game; counts the games it chose for."""

    def __init__(self, n: int, seed: int) -> None:
        self.n, self.seed, self.chosen = n, seed, 0

    def reset(self, seed: int) -> None:
        self.seed = seed

    def act(self, batch: Any, where: Optional[np.ndarray] = None) -> np.ndarray:
        live = batch.current >= 0
        rows = live if where is None else live & where
        out = np.where(rows, np.argmax(batch.legal_mask(), axis=1), -1)
        self.chosen += int(rows.sum())
        return out.astype(np.int64)


BUILT: list[FirstLegalBatch] = []


def build_first_legal(name: str, params: dict[str, Any], rules: Any, n: int, seed: int) -> FirstLegalBatch:
    assert name == TWIN and params == {}
    BUILT.append(FirstLegalBatch(n, seed))
    return BUILT[-1]


@pytest.fixture
def registered() -> Iterator[None]:
    """The throwaway agents registered (one line each), and taken out again afterwards."""
    register_agent(TWIN, FirstLegalAgent, "the first legal action", batch=build_first_legal)
    register_agent(NO_TWIN, FirstLegalAgent, "the first legal action, no batch twin")
    catalog.cache_clear()
    BUILT.clear()
    try:
        yield
    finally:
        unregister_agent(TWIN)
        unregister_agent(NO_TWIN)
        catalog.cache_clear()


def test_one_registration_line_makes_an_agent_everywhere(registered: None, capsys: pytest.CaptureFixture[str]) -> None:
    game = Game(Rules.from_options({"num_players": 2}), seed=3)
    view = PlayerView(game, game.current_player)
    assert make_agent(TWIN, seed=0).act(view) == view.legal[0]
    assert TWIN in agent_names() and describe_agents()[TWIN] == "the first legal action"
    assert has_batch_twin(TWIN) and not has_batch_twin(NO_TWIN) and TWIN in batch_agent_names()
    assert batch_spec_problem(TWIN) is None

    env = AllFivesVectorEnv(num_envs=3, opponents=[TWIN], num_players=2)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(6):
        masks = env.action_masks()
        env.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks], dtype=np.int64))
    assert len(BUILT) == 1 and BUILT[0].n == 3 and BUILT[0].chosen > 0
    assert env.seated_specs(0).count(TWIN) == 1

    assert main(["agents"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith(TWIN + " "))
    assert "the first legal action" in line and "[vector env]" in line
    offered = {entry["name"]: entry for entry in catalog()["agents"]}
    assert offered[TWIN]["players"] == [2, 3, 4] and offered[NO_TWIN]["players"] == [2, 3, 4]


def test_an_agent_without_a_batch_twin_is_refused_with_the_registrys_list(registered: None) -> None:
    with pytest.raises(AgentError, match="no batch implementation") as refused:
        AllFivesVectorEnv(num_envs=2, opponents=[NO_TWIN])
    listed = ", ".join(batch_agent_names())
    assert listed in str(refused.value) and TWIN in listed and NO_TWIN not in listed
    assert batch_spec_problem(NO_TWIN) == str(refused.value)
    with pytest.raises(AgentError, match="no batch implementation"):
        make_batch_opponent(NO_TWIN, Rules.from_options({}), 2, 0)


def test_the_shipped_agents_twins_come_from_their_registration() -> None:
    """random, greedy, expert: the compiled twins; ppo and the shipped policies: the batched forward pass;
    every other agent: none. The vector env's list of opponents is exactly the registry's."""
    assert batch_agent_names() == ["expert", "greedy", "ppo", "ppo-2p", "ppo-3p", "ppo-4p", "random"]
    from allfives_env.batch.agents import build_batch_twin

    assert all(batch_twin(name) == BatchTwin(build_batch_twin) for name in ("random", "greedy", "expert"))
    assert all(batch_twin(name) is POLICY_TWIN for name in ("ppo", "ppo-2p", "ppo-3p", "ppo-4p"))
    assert all(batch_twin(name) is None for name in ("pimc", "defensive", "oracle", "openspiel-ismcts"))
    assert type(make_batch_opponent("expert:w_deny=2", Rules.from_options({}), 2, 0)).__name__ == "BatchAgent"
    assert make_batch_opponent("expert:w_deny=2", Rules.from_options({}), 2, 0).weights == {"w_deny": 2.0}


def test_refused_registrations_change_nothing() -> None:
    before = dict(registry._REGISTRY)
    for bad in ("allfives_env.batch.agents", "no module:build", 42, BatchTwin(42)):  # type: ignore[arg-type]
        with pytest.raises(AgentError, match="batch twin .*not allowed"):
            register_agent("test-bad-twin", FirstLegalAgent, batch=bad)  # type: ignore[arg-type]
    for name in ("", "a:b", "a,b", 7):
        with pytest.raises(AgentError, match="agent name .* not allowed"):
            register_agent(name, FirstLegalAgent)  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="unknown agent 'test-never-registered'"):
        unregister_agent("test-never-registered")
    assert registry._REGISTRY == before


def test_a_batch_twin_registered_by_a_bad_path_is_refused_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # registrations undone after the test
    register_agent("test-lost-twin", FirstLegalAgent, batch="allfives_env.batch.agents:no_such_twin")
    assert has_batch_twin("test-lost-twin")  # answered without importing the twin's module
    problem = batch_spec_problem("test-lost-twin")
    assert problem is not None and "has no 'no_such_twin'" in problem
    register_agent("test-odd-twin", FirstLegalAgent, batch="allfives_env.batch.agents:BATCH_AGENTS")
    with pytest.raises(AgentError, match="neither a BatchTwin nor a callable"):
        batch_twin("test-odd-twin")


def test_a_twin_that_fails_plainly_is_an_agent_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only typed errors leave the vector env: a registered twin's plain ValueError names the agent."""
    def broken(name: str, params: dict[str, Any], rules: Any, n: int, seed: int) -> Any:
        raise ValueError("no such table")

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_agent("test-broken-twin", FirstLegalAgent, batch=broken)
    with pytest.raises(AgentError, match="batch twin of agent 'test-broken-twin' with {}: no such table"):
        make_batch_opponent("test-broken-twin", Rules.from_options({}), 2, 0)
    with pytest.raises(AgentError, match="no such table"):
        AllFivesVectorEnv(num_envs=2, opponents=["test-broken-twin"])


class IllegalBatch(FirstLegalBatch):
    """A buggy twin: an action that is in range but illegal (the first legal action's id plus one that is not
    legal), the mistake a user's twin can make."""

    def act(self, batch: Any, where: Optional[np.ndarray] = None) -> np.ndarray:
        live = batch.current >= 0
        rows = live if where is None else live & where
        masks = batch.legal_mask()
        out = np.where(rows, np.argmin(masks, axis=1), -1)  # the first action id that is NOT legal
        return out.astype(np.int64)


def test_a_users_twin_is_checked_while_the_librarys_own_are_trusted() -> None:
    """The library's compiled agents choose from the legal lists, so the vector env applies their moves
    without a second scan; a user's twin is checked as a public step is: its illegal move is an
    IllegalActionError naming the game, not a corrupted game."""
    register_agent("test-illegal-twin", FirstLegalAgent, batch=lambda name, params, rules, n, seed: IllegalBatch(n, seed))
    try:
        with pytest.raises(Exception) as refused:
            env = AllFivesVectorEnv(num_envs=4, opponents=["test-illegal-twin"], num_players=2, seat=1)
            env.reset(seed=1)  # seat 0 is the twin's, and it leads first in some games
            for _ in range(4):
                masks = env.action_masks()
                env.step(np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks], dtype=np.int64))
        assert type(refused.value).__name__ == "IllegalActionError" and "is not legal" in str(refused.value)
    finally:
        unregister_agent("test-illegal-twin")
    env = AllFivesVectorEnv(num_envs=2, opponents=["random", "expert", "ppo-2p"], num_players=2)
    trusted = dict(zip(env.pool.specs, env.pool.legal_by_construction))
    assert trusted == {"random": True, "expert": True, "ppo-2p": False}
