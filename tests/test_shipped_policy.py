"""The trained policy shipped in the package: it loads by name with numpy alone and plays legal, hidden-blind
moves; it refuses games it was not trained for. (Its strength is a benchmark: README, "Training".)"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from allfives_env.agents import PlayerView, agent_names, make_agent
from allfives_env.core import Game, Rules
from allfives_env.match import play_game
from allfives_env.encoding import ObservationEncoder
from allfives_env.policy import (
    SHIPPED_POLICIES, PolicyError, ShippedPolicyAgent, load_policy, read_policy_header, shipped_policy_path,
)
from tests.helpers import with_other_hidden_tiles


def test_registered_by_name_with_a_short_spec() -> None:
    assert set(SHIPPED_POLICIES) == {"ppo-2p", "ppo-4p"} and set(SHIPPED_POLICIES) <= set(agent_names())
    for name in SHIPPED_POLICIES:
        agent = make_agent(name, seed=0)
        assert isinstance(agent, ShippedPolicyAgent) and agent.spec() == name and agent.name == name
    assert make_agent("ppo-2p:sample=true").spec() == "ppo-2p:sample=true"
    with pytest.raises(ValueError, match="takes no parameter 'path'"):
        make_agent("ppo-2p:path=x.npz")
    with pytest.raises(PolicyError, match="no shipped policy 'ppo-9p'"):
        shipped_policy_path("ppo-9p")


@pytest.mark.parametrize("name, players", [("ppo-2p", 2), ("ppo-4p", 4)])
def test_the_file_says_how_it_was_made(name: str, players: int) -> None:
    header = read_policy_header(shipped_policy_path(name))
    assert header["rules"]["num_players"] == players and header["action_features"] is True
    meta = header["metadata"]
    assert meta["config"]["name"] == name.replace("-", "_") and meta["step"] > 0


@pytest.mark.parametrize("name, players", [("ppo-2p", 2), ("ppo-4p", 4)])
def test_the_checked_load_plays_the_files_weights_unchanged(name: str, players: int) -> None:
    """Validation at load must not alter what is played: the arrays are the file's, bit for bit, and the
    logits are those of a plain forward pass written out here (relu MLP + shared placement scorer)."""
    path = shipped_policy_path(name)
    policy = load_policy(path)
    with np.load(path, allow_pickle=False) as data:
        raw = {k: data[k] for k in data.files}
    pairs = {f"hidden_{i}": pair for i, pair in enumerate(policy.layers)}
    pairs.update({f"scorer_{i}": pair for i, pair in enumerate(policy.scorer)}, action=policy.action)
    loaded = {f"{name}_{part}": a for name, pair in pairs.items() for part, a in zip(("weight", "bias"), pair)}
    assert set(loaded) == set(raw) - {"header"} and all(np.array_equal(loaded[k], raw[k]) for k in loaded)

    rules = Rules(num_players=players)
    enc = ObservationEncoder(rules, action_features=True)
    game, rng, obs = Game(rules, 7), np.random.default_rng(7), []
    while len(obs) < 40 and not game.over:
        obs.append(enc.encode(game, game.current))
        game.step(game.legal[int(rng.integers(len(game.legal)))])
    x = np.array(obs, np.float32)
    h = x
    for i in range(2):
        h = np.maximum(h @ raw[f"hidden_{i}_weight"].T + raw[f"hidden_{i}_bias"], 0)
    spec = read_policy_header(path)["action_scorer"]
    rows = x[:, spec["offset"]:spec["offset"] + spec["placements"] * spec["features"]]
    rows = rows.reshape(len(x), spec["placements"], spec["features"])
    rows = np.maximum(rows @ raw["scorer_0_weight"].T + raw["scorer_0_bias"], 0)
    scores = (rows @ raw["scorer_1_weight"].T + raw["scorer_1_bias"])[..., 0]
    expected = np.concatenate([h, scores], axis=1) @ raw["action_weight"].T + raw["action_bias"]
    np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-5, atol=1e-4)


def test_the_partnership_policy_plays_four_player_games() -> None:
    rules = Rules(num_players=4)
    for seed in range(2):
        agents = [make_agent("ppo-4p", seed=0), make_agent("expert", seed=1)] * 2
        result = play_game(rules, agents, seed=seed)
        assert result.winner in (0, 1, None) and result.decisions[0] > 0 and result.decisions[2] > 0
    with pytest.raises(PolicyError, match="trained for num_players=4, but this game has num_players=2"):
        play_game(Rules(num_players=2), [make_agent("ppo-4p"), make_agent("random")], seed=0)


def test_plays_whole_games_legally_against_the_ladder() -> None:
    rules = Rules(num_players=2)
    for seed, other in enumerate(["random", "greedy", "expert"]):
        result = play_game(rules, [make_agent("ppo-2p", seed=0), make_agent(other, seed=1)], seed=seed)
        assert result.winner in (0, 1, None) and result.decisions[0] > 0


def test_moves_depend_only_on_what_the_seat_sees() -> None:
    rules = Rules(num_players=2)
    rng = np.random.default_rng(5)
    game = Game(rules, 5)
    agent = make_agent("ppo-2p", seed=0)
    checked = 0
    while checked < 10 and not game.over:
        seat = game.current
        other = with_other_hidden_tiles(game, seat, checked)
        a, b = agent.act(PlayerView(game, seat)), agent.act(PlayerView(other, seat))
        assert a == b and a in game.legal
        checked += 1
        game.step(game.legal[int(rng.integers(len(game.legal)))])


def test_refuses_other_player_counts_clearly() -> None:
    agents = [make_agent("ppo-2p"), make_agent("random"), make_agent("random")]
    with pytest.raises(PolicyError, match="trained for num_players=2, but this game has num_players=3"):
        play_game(Rules(num_players=3), agents, seed=0)


def test_plays_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"
            "from allfives_env.agents import make_agent\nfrom allfives_env.core import Rules\n"
            "from allfives_env.match import play_game\n"
            "r = play_game(Rules(num_players=2), [make_agent('ppo-2p'), make_agent('greedy')], seed=1)\n"
            "print('ok', r.winner)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr
