"""``pimc-sift`` and what it is made of: ``pimc`` with ``expert`` rollouts and the compiled successive
elimination of candidates (``min_samples``, ``z``, ``delta``), and the expert prior computed inside it.

(The expert rollout's values equal the Python reference's on the same guess:
``tests/test_batch_search.py``; legal, deterministic play under every rules set: ``tests/test_agents.py``.)
"""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.agents import PlayerView, make_agent
from allfives_env.agents.search import PIMCAgent, PIMCSiftAgent
from allfives_env.batch.search import search_values, sifted_values
from allfives_env.core import Rules
from tests.helpers import positions

RULES = [pytest.param(Rules(num_players=2), id="2p"), pytest.param(Rules(num_players=4), id="4p-team"),
         pytest.param(Rules(num_players=3, spinner_count="sniff", score_unit=5), id="3p-sniff-unit5")]


@pytest.mark.parametrize("rules", RULES)
def test_the_expert_prior_inside_the_search_equals_the_expert_agents_values(rules: Rules) -> None:
    expert = make_agent("expert")
    for game in positions(rules, seed=4, count=25):
        view = PlayerView(game, game.current)
        legal = list(view.legal)
        placements = [a for a in legal if a != view.draw_action]
        values = dict(zip(placements, expert.evaluate(view, placements)))
        found = sifted_values(view, legal, [0.5] * len(legal), 2, 2, 2.0, 0.0, expert_weight=3.0)
        assert found.prior.tolist() == [0.5 + 3.0 * values.get(a, 0.0) for a in legal]


@pytest.mark.parametrize("rollout", ["greedy", "expert"])
def test_without_an_elimination_round_the_sifted_means_are_pimcs_totals(rollout: str) -> None:
    # an elimination round only after the last guess: every candidate sees the same guesses as pimc's
    for game in positions(Rules(num_players=2), seed=6, count=12):
        view = PlayerView(game, game.current)
        legal = list(view.legal)
        totals = search_values(view, legal, 6, rollout=rollout, seed=9)
        found = sifted_values(view, legal, [0.0] * len(legal), 6, 6, 2.0, 0.0, rollout=rollout, seed=9)
        assert found.guesses == 6
        assert found.means.tolist() == (totals / 6).tolist()


def test_elimination_drops_clear_losers_early_and_keeps_the_leader() -> None:
    saved = 0
    for game in positions(Rules(num_players=2), seed=8, count=30):
        view = PlayerView(game, game.current)
        legal = list(view.legal)
        found = sifted_values(view, legal, [0.0] * len(legal), 4, 64, 2.0, 1.0, rollout="greedy", seed=1)
        assert 4 <= found.guesses <= 64 and found.alive.any()
        if found.guesses < 64:  # it stopped early: exactly one candidate is left
            assert found.alive.sum() == 1
            saved += 1
    assert saved > 0
    # a huge prior gap settles a decision at the first round, whatever the rollouts say
    view = PlayerView(game, game.current)
    prior = [0.0] * len(legal)
    prior[0] = 1e6
    found = sifted_values(view, legal, prior, 4, 64, 2.0, 0.0, rollout="greedy", seed=1)
    assert found.guesses == 4 and found.alive.tolist() == [True] + [False] * (len(legal) - 1)


def test_pimc_sift_is_pimc_with_expert_rollouts_and_elimination() -> None:
    agent = make_agent("pimc-sift", seed=0)
    assert isinstance(agent, PIMCSiftAgent) and isinstance(agent, PIMCAgent)
    assert (agent.rollout, agent.samples, agent.min_samples, agent.z, agent.delta) == ("expert", 80, 8, 1.5, 1.0)
    assert agent.spec() == "pimc-sift" and make_agent("pimc-sift:z=2").spec() == "pimc-sift:z=2"
    # the same search is reachable from pimc's parameters, choice for choice
    twin = make_agent("pimc:rollout=expert,samples=80,min_samples=8,z=1.5,delta=1", seed=0)
    for game in positions(Rules(num_players=2), seed=12, count=10):
        view = PlayerView(game, game.current)
        assert agent.act(view) == twin.act(view)
    assert agent.guesses == twin.guesses and 0 < agent.guesses <= 80 * agent.moves


def test_pimc_net_sifts_with_its_network_in_the_prior() -> None:
    # the network's term is added in Python, the expert's inside the kernel: weight 0 is pimc-sift itself
    sift = make_agent("pimc-sift", seed=3, samples=16, min_samples=4)
    net = make_agent("pimc-net", seed=3, samples=16, min_samples=4, z=1.5, delta=1, rollout="expert",
                     policy_weight=0)
    heavy = make_agent("pimc-net", seed=3, samples=16, min_samples=4, rollout="expert", policy_weight=1e4)
    policy = make_agent("ppo-2p")
    for game in positions(Rules(num_players=2), seed=13, count=10):
        view = PlayerView(game, game.current)
        assert sift.act(view) == net.act(view)
        assert heavy.act(view) == policy.act(view)


@pytest.mark.parametrize("spec, message", [
    ("pimc:min_samples=-1", "min_samples=-1 is not allowed: give 0 (no elimination) or a positive integer"),
    ("pimc:min_samples=2.5", "min_samples=2.5 is not allowed"),
    ("pimc:min_samples=4,engine=python", "min_samples=4 needs engine='batch'"),
    ("pimc-sift:engine=python", "min_samples=8 needs engine='batch'"),
    ("pimc-sift:z=0", "z=0 is not allowed: give a finite number > 0"),
    ("pimc-sift:z=NaN", "z=NaN is not allowed"),
    ("pimc-sift:delta=-1", "delta=-1 is not allowed: give a finite number >= 0"),
    ("pimc-sift:rollout=clever", "rollout='clever' is not allowed"),
])
def test_bad_elimination_parameters_are_refused_by_name(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)


def test_the_python_engine_plays_expert_rollouts_without_elimination() -> None:
    agent = make_agent("pimc:engine=python,rollout=expert,samples=3", seed=1)
    again = make_agent("pimc:engine=python,rollout=expert,samples=3", seed=1)
    for game in positions(Rules(num_players=2), seed=14, count=6):
        view = PlayerView(game, game.current)
        move = agent.act(view)
        assert move in view.legal and move == again.act(view)
    assert agent.guesses == 3 * agent.moves


@pytest.mark.parametrize("spec", ["pimc:samples=6", "pimc-sift:samples=24,min_samples=4"])
def test_move_scores_are_what_the_search_ranks_by(spec: str) -> None:
    # the same seed draws the same guesses: the move the search plays has the best score, and a move
    # the elimination dropped scores -inf
    searched = 0
    for game in positions(Rules(num_players=2), seed=12, count=15):
        view = PlayerView(game, game.current)
        legal = list(view.legal)
        if len(legal) < 2:
            continue
        searched += 1
        scores = make_agent(spec, seed=3).move_scores(view, legal)
        assert len(scores) == len(legal) and any(np.isfinite(scores))
        assert scores[legal.index(make_agent(spec, seed=3).act(view))] == max(scores)
    assert searched > 5


def test_a_move_score_is_the_mean_rollout_value_plus_the_prior() -> None:
    expert = make_agent("expert")
    for game in positions(Rules(num_players=2), seed=13, count=10):
        view = PlayerView(game, game.current)
        legal = list(view.legal)
        placements = [a for a in legal if a != view.draw_action]
        prior = dict(zip(placements, expert.evaluate(view, placements)))
        with_prior = make_agent("pimc:samples=5,prior_weight=2", seed=4).move_scores(view, legal)
        plain = make_agent("pimc:samples=5,prior=none", seed=4).move_scores(view, legal)
        assert with_prior == pytest.approx([p + 2.0 * prior.get(a, 0.0) for a, p in zip(legal, plain)])
