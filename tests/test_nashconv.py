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
    assert main(["nashconv", "greedy", "--save-policy", "x.json"]) == 2
    assert "--save-policy needs --cfr-iterations N" in capsys.readouterr().err
    assert main(["nashconv", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


# --- the shipped CFR+ solution, and the agent that plays it -------------------------------------------------------

def test_the_shipped_solution_is_near_equilibrium_and_the_agent_plays_it(game) -> None:  # type: ignore[no-untyped-def]
    from allfives_env.openspiel.tabular import MINIATURE_POLICY, read_tabular_policy

    header, table = read_tabular_policy(MINIATURE_POLICY)
    assert header["iterations"] >= 100 and header["nash_conv"] < 0.001 and len(table) > 1000
    value = nash_conv(game, agent_policy(game, "miniature-cfr"))  # its mixed strategy, read through the agent
    assert value < 0.005 and value == pytest.approx(header["nash_conv"], abs=0.002)


def test_every_information_state_is_found_from_the_agent_s_view(game) -> None:  # type: ignore[no-untyped-def]
    """The agent rebuilds OpenSpiel's information-state string from a PlayerView: every one of the tree's."""
    import numpy as np

    from allfives_env.core.view import PlayerView
    from allfives_env.openspiel.miniature import _decision_states
    from allfives_env.openspiel.position import state_for_view

    rng = np.random.default_rng(0)
    for key, state in _decision_states(game).items():
        seat = state.current_player()
        rebuilt = state_for_view(PlayerView(state.track.game, seat), rng, 1.0)
        assert rebuilt is not None and rebuilt.information_state_string(seat) == key


def test_the_agent_plays_games_of_the_miniature_and_refuses_others() -> None:
    from allfives_env.agents import make_agent
    from allfives_env.core import Rules
    from allfives_env.evaluation import evaluate

    rules = Rules(num_players=2, max_pip=3, hand_size=2, boneyard_reserve=6, max_hands=1)
    match = evaluate(["miniature-cfr", "greedy"], rules, games=20, seed=3, progress=False)
    assert match.games == 20
    with pytest.raises(AgentError, match="plays the miniature only"):  # refused before any game
        evaluate(["miniature-cfr", "greedy"], {"num_players": 2}, games=2, seed=3, progress=False)
    assert make_agent("miniature-cfr:sample=false").spec() == "miniature-cfr:sample=false"


def test_a_saved_solution_is_read_back_and_played(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from allfives_env.openspiel.tabular import read_tabular_policy

    assert main(["nashconv", "--cfr-iterations", "1", "--save-policy", str(tmp_path / "p.json")]) == 0
    header, table = read_tabular_policy(tmp_path / "p.json")
    assert header["iterations"] == 1 and len(table) == 1950 and "policy written to" in capsys.readouterr().out


def test_a_damaged_or_foreign_table_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from allfives_env.openspiel.errors import OpenSpielStateError
    from allfives_env.openspiel.tabular import read_tabular_policy, write_tabular_policy

    good = write_tabular_policy(tmp_path / "p.json", {"seat 0": {1: 0.25, 2: 0.75}}, {"game": {}})
    assert read_tabular_policy(good)[1] == {"seat 0": {1: 0.25, 2: 0.75}}
    for text, message in [("{", "not JSON"), ('{"format": "x"}', "not a tabular policy"),
                          ('{"format": "allfives-tabular-policy", "version": 1, "table": {"k": {"1": 0.5}}}',
                           "not a probability distribution"),
                          ('{"format": "allfives-tabular-policy", "version": 1, "table": {"k": [1]}}',
                           "is not {action: probability}")]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(OpenSpielStateError, match=message):
            read_tabular_policy(bad)
    with pytest.raises(OpenSpielStateError, match="no tabular policy at"):
        read_tabular_policy(tmp_path / "none.json")
