"""``pimc-net``: pimc with a trained policy as its prior, and the policy agents' ``evaluate`` behind it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allfives_env.agents import PlayerView, make_agent
from allfives_env.agents.search import PIMC_NET_POLICY_WEIGHT, PIMCAgent
from allfives_env.core import Rules
from allfives_env.match import play_game
from allfives_env.policy import PolicyError
from tests.helpers import positions


def test_policy_evaluate_is_centred_log_probability_in_the_policys_order() -> None:
    agent = make_agent("ppo-2p")
    for game in positions(Rules(num_players=2), seed=3, count=10):
        view = PlayerView(game, game.current)
        legal = view.legal
        values = agent.evaluate(view, legal)
        assert math.isclose(sum(values), 0.0, abs_tol=1e-9)
        # a softmax of the values gives back probabilities: exp(values) / sum is the policy's distribution
        p = np.exp(values) / np.exp(values).sum()
        assert math.isclose(p.sum(), 1.0) and (p > 0).all()
        # the best-valued move is the one the policy plays
        assert legal[int(np.argmax(values))] == agent.act(view)
        assert agent.evaluate(view, legal[::-1]) == values[::-1]
    with pytest.raises(PolicyError, match="not legal here"):
        agent.evaluate(view, [max(legal) + 1])


def test_pimc_net_is_pimc_with_the_policy_prior() -> None:
    agent = make_agent("pimc-net", seed=0, samples=4)
    assert isinstance(agent, PIMCAgent) and agent.policy_weight == PIMC_NET_POLICY_WEIGHT
    assert agent.spec() == "pimc-net:samples=4"
    assert make_agent(agent.spec() + ",policy_weight=7").spec() == "pimc-net:policy_weight=7,samples=4"
    games = positions(Rules(num_players=2), seed=5, count=12)
    # one guess stream and the same rollouts: with policy weight 0 pimc-net is pimc itself
    for game in games:
        view = PlayerView(game, game.current)
        assert (make_agent("pimc-net", seed=0, samples=4, policy_weight=0).act(view)
                == make_agent("pimc", seed=0, samples=4).act(view))
    # and a heavy policy weight makes it play the policy's move
    policy = make_agent("ppo-2p")
    for game in games:
        view = PlayerView(game, game.current)
        assert make_agent("pimc-net", seed=0, samples=2, policy_weight=1e4).act(view) == policy.act(view)
    with pytest.raises(ValueError, match="policy_weight=-1"):
        make_agent("pimc-net:policy_weight=-1")
    with pytest.raises(ValueError, match="not a trained policy agent"):
        make_agent("pimc-net:policy=greedy")


@pytest.mark.parametrize("players, prior", [(2, "ppo-2p"), (3, "ppo-3p"), (4, "ppo-4p")])
def test_pimc_net_plays_legally_and_deterministically(players: int, prior: str) -> None:
    rules = Rules(num_players=players)
    games = positions(rules, seed=11, count=8)
    first = []
    for game in games:
        action = make_agent("pimc-net", seed=5, samples=4, policy=prior).act(PlayerView(game, game.current))
        assert action in game.legal
        first.append(action)
    again = [make_agent("pimc-net", seed=5, samples=4, policy=prior).act(PlayerView(g, g.current)) for g in games]
    assert first == again
    result = play_game(Rules(num_players=players, target=60),
                       [make_agent("pimc-net", samples=3, policy=prior)] + [make_agent("greedy")] * (players - 1),
                       seed=2, agent_seeds=list(range(players)))
    assert sum(result.decisions) > 0


def test_pimc_net_refuses_a_game_its_prior_was_not_trained_for() -> None:
    game = positions(Rules(num_players=3), seed=1, count=1)[0]
    with pytest.raises(PolicyError, match="num_players"):
        make_agent("pimc-net", samples=2).act(PlayerView(game, game.current))
