"""``allfives nashconv``: exact exploitability on the miniature (OpenSpiel's NashConv), and its CFR+ solution."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy  # noqa: E402

from allfives_env.cli import main  # noqa: E402
from allfives_env.core.errors import AgentError  # noqa: E402
from allfives_env.openspiel.miniature import agent_policy, miniature_game, nash_conv, solve  # noqa: E402


@pytest.fixture(scope="module")
def game():  # type: ignore[no-untyped-def]
    return miniature_game()


def test_random_is_the_uniform_policy_and_the_heuristics_are_less_exploitable(game) -> None:  # type: ignore[no-untyped-def]
    uniform = nash_conv(game, os_policy.UniformRandomPolicy(game))
    assert nash_conv(game, agent_policy(game, "random")) == pytest.approx(uniform)
    greedy = nash_conv(game, agent_policy(game, "greedy"))
    expert = nash_conv(game, agent_policy(game, "expert"))
    assert 0 < expert < greedy < uniform
    assert (uniform, greedy, expert) == pytest.approx((2.001984, 1.25, 0.535714), abs=1e-6)


def test_a_game_without_choices_is_unexploitable() -> None:
    """Worked by hand: with one tile each and nothing to draw, the leader must lead its only tile and is then out,
    so the hand ends on the first move: no player ever has a choice, and every policy is an equilibrium."""
    tiny = miniature_game(hand_size=1, boneyard_reserve=8)
    assert nash_conv(tiny, agent_policy(tiny, "random")) == 0.0
    assert nash_conv(tiny, agent_policy(tiny, "greedy")) == 0.0


def test_cfr_plus_solves_the_miniature_far_below_random(game) -> None:  # type: ignore[no-untyped-def]
    policy, value, seconds = solve(game, 5)
    assert value < 0.2 and value < nash_conv(game, agent_policy(game, "random")) / 10
    assert seconds > 0 and policy.action_probability_array.shape[0] > 1000
    with pytest.raises(ValueError, match="positive integer"):
        solve(game, 0)


def test_refusals(game, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AgentError, match="reads the hidden tiles"):
        agent_policy(game, "oracle")
    assert main(["nashconv"]) == 2
    assert "give at least one AGENT, or --cfr-iterations N" in capsys.readouterr().err
    assert main(["nashconv", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
