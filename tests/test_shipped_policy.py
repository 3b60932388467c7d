"""The trained policy shipped in the package: it loads by name with numpy alone and plays legal, hidden-blind
moves; it refuses games it was not trained for. (Its strength is a benchmark: README, "Training".)"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import Optional

import numpy as np
import pytest

from allfives_env.agents import Agent, PlayerView, ShippedPolicyAgent, agent_names, make_agent
from allfives_env.core import Game, Rules
from allfives_env.match import play_game
from allfives_env.encoding import ObservationEncoder
from allfives_env.policy import (
    MAX_FILE_BYTES, MAX_HEADER_BYTES, MAX_HEADER_DEPTH, MAX_LAYERS, MAX_PARAMETERS, SHIPPED_POLICIES, PolicyError,
    load_policy, read_policy_header, shipped_policy_path,
)
from tests.helpers import with_other_hidden_tiles

#: each shipped policy and the number of players it was trained for
SHIPPED_PLAYERS = [("ppo-2p", 2), ("ppo-3p", 3), ("ppo-4p", 4)]


def test_registered_by_name_with_a_short_spec() -> None:
    assert set(SHIPPED_POLICIES) == {"ppo-2p", "ppo-3p", "ppo-4p"} and set(SHIPPED_POLICIES) <= set(agent_names())
    for name in SHIPPED_POLICIES:
        agent = make_agent(name, seed=0)
        assert isinstance(agent, ShippedPolicyAgent) and agent.spec() == name and agent.name == name
    assert make_agent("ppo-2p:sample=true").spec() == "ppo-2p:sample=true"
    with pytest.raises(ValueError, match="takes no parameter 'path'"):
        make_agent("ppo-2p:path=x.npz")
    with pytest.raises(PolicyError, match="no shipped policy 'ppo-9p'"):
        shipped_policy_path("ppo-9p")


@pytest.mark.parametrize("name, players", SHIPPED_PLAYERS)
def test_the_file_says_how_it_was_made(name: str, players: int) -> None:
    header = read_policy_header(shipped_policy_path(name))
    assert header["rules"]["num_players"] == players and header["action_features"] is True
    meta = header["metadata"]
    assert meta["config"]["name"] == name.replace("-", "_") and meta["step"] > 0


@pytest.mark.parametrize("name, players", SHIPPED_PLAYERS)
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


@pytest.mark.parametrize("name, seats", [
    ("ppo-3p", ["ppo-3p", "expert", "greedy"]),            # cut-throat: one seat against any two
    ("ppo-4p", ["ppo-4p", "expert", "ppo-4p", "expert"]),  # partnership: both seats of team 0+2
])
def test_the_policies_for_more_players_play_their_games(name: str, seats: list[str]) -> None:
    rules = Rules(num_players=len(seats))
    ours = [s for s, spec in enumerate(seats) if spec == name]
    for seed in range(2):
        result = play_game(rules, [make_agent(spec, seed=s) for s, spec in enumerate(seats)], seed=seed)
        assert result.winner in {rules.side_of(s) for s in range(len(seats))} | {None}
        assert all(result.decisions[s] > 0 for s in ours)
    with pytest.raises(PolicyError, match=f"trained for num_players={len(seats)}, but this game has num_players=2"):
        play_game(Rules(num_players=2), [make_agent(name), make_agent("random")], seed=0)


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


def _fixed_batch(players: int, n: int, seed: int, agent: Optional[Agent] = None
                 ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``n`` observations (with the action features) and masks of the player to move, from random play; and
    what ``agent`` plays in each position (none without an agent)."""
    rules = Rules(num_players=players)
    enc = ObservationEncoder(rules, action_features=True)
    rng = np.random.default_rng(seed)
    obs, masks, moves, game = [], [], [], Game(rules, seed)
    while len(obs) < n:
        if game.over:
            game = Game(rules, int(rng.integers(2**31)))
        obs.append(enc.encode(game, game.current))
        masks.append(enc.action_mask(game, game.current))
        if agent is not None:
            moves.append(agent.act(PlayerView(game, game.current)))
        game.step(game.legal[int(rng.integers(len(game.legal)))])
    return np.array(obs, np.float32), np.array(masks), moves


# sha256 of the int64 actions the shipped files pick on _fixed_batch(players, 1000, 11): a refactor of the
# reader or the forward pass, or of the observation it reads, must not change a single move. A digest is
# recorded again only when its shipped file is rebuilt on purpose (ppo-2p: the faster recipe of
# configs/ppo_2p.yaml, then from random weights with network.score_gain; ppo-4p: score_gain 1, then
# distilled from pimc with imitation.teacher: pimc)
ACTION_DIGESTS = {
    "ppo-2p": "c6ab382cd54ed51f5f4392221247f459db35efc01bb66bd56baa17f295340635",
    "ppo-3p": "0d4b603beee2a781f953a753b9abde1b3fd3b6528e8fe57bb7256fd0eb3f88bc",
    "ppo-4p": "a75235868838e1c5f55ec092489fdf23171c23676010132dc701f32b9df0a569",
}


@pytest.mark.parametrize("name, players", SHIPPED_PLAYERS)
def test_the_shipped_policies_pick_the_recorded_moves(name: str, players: int) -> None:
    obs, masks, _ = _fixed_batch(players, 1000, 11)
    actions = load_policy(shipped_policy_path(name)).predict(obs, masks).astype(np.int64)
    assert all(masks[i, a] for i, a in enumerate(actions))
    assert hashlib.sha256(actions.tobytes()).hexdigest() == ACTION_DIGESTS[name]
    # the agent plays those moves through the public view (its own encoder, the view's legal actions)
    _, _, moves = _fixed_batch(players, 100, 11, make_agent(name))
    assert moves == list(actions[:100])


@pytest.mark.parametrize("name", sorted(SHIPPED_POLICIES))
def test_the_shipped_files_sit_far_inside_the_limits(name: str) -> None:
    """The loader's limits refuse hostile files, not real ones: the shipped policies use a small part."""
    path = shipped_policy_path(name)
    with np.load(path, allow_pickle=False) as data:
        header_bytes = data["header"].size
        weights = sum(data[k].size for k in data.files if k != "header")
    header = read_policy_header(path)

    def depth(value: object) -> int:
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        return 1 + max((depth(v) for v in children), default=0) if isinstance(value, (dict, list)) else 0

    assert header_bytes * 100 < MAX_HEADER_BYTES and depth(header) * 4 < MAX_HEADER_DEPTH
    assert weights * 100 < MAX_PARAMETERS and path.stat().st_size * 100 < MAX_FILE_BYTES
    assert len(header["hidden"]) * 10 < MAX_LAYERS
