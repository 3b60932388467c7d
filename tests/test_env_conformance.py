"""PettingZoo conformance of ``allfives_v0`` (DESIGN.md "Testing layers" 2).

``api_test`` over many seeds and every player count, ``seed_test``, ``render_test``, pickling, reset
reproducibility, spaces, ``state()``, reward bookkeeping, single-hand episodes, hidden draws in
``infos`` and the ``pettingzoo.make`` registration.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

import allfives_env
from allfives_env import allfives_v0
from allfives_env.core.events import Draw, GameOver, HandStart, Settlement, public_view
from allfives_env.env import raw_env

CONFIGS = [
    pytest.param({"num_players": 2}, id="2p"),
    pytest.param({"num_players": 3}, id="3p"),
    pytest.param({"num_players": 4}, id="4p-team"),
    pytest.param({"num_players": 4, "partnership": False}, id="4p-cut"),
]
SHORT = {"max_hands": 1}  # a game that ends within api_test's cycles

pytestmark = [
    pytest.mark.filterwarnings("ignore:ignoring unknown reset option"),  # api_test passes options={"options": 1}
    # api_test's generic advice for Dict observations (ours follow the classic-env action-mask convention)
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]


class SeedShifted(raw_env):
    """``raw_env`` whose ``reset(seed)`` adds a fixed offset, so that api_test (which always seeds 0)
    plays a different deal for every offset."""

    def __init__(self, shift: int = 0, **kwargs):
        super().__init__(**kwargs)
        self._shift = shift

    def reset(self, seed=None, options=None):
        super().reset(None if seed is None else seed + self._shift, options)


def wrapped(aec):
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


def random_policy(env, rng):
    """A seeded random legal action for the agent to act (None once it is done)."""
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        return None
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(len(legal))])


def play_out(env, seed, policy_seed=0, record=None, max_steps=50_000):
    """Play a whole game (every agent until done); return the sequence of (agent, obs, action)."""
    rng = np.random.default_rng(policy_seed)
    env.reset(seed=seed)
    trace = []
    for steps, agent in enumerate(env.agent_iter()):
        assert steps < max_steps
        obs, reward, term, trunc, info = env.last()
        action = random_policy(env, rng)
        trace.append((agent, obs["observation"].copy(), obs["action_mask"].copy(), reward, term, trunc, action))
        if record is not None:
            record(env, agent)
        env.step(action)
    return trace


def traces_equal(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] != y[0] or x[3:] != y[3:]:
            return False
        if not (np.array_equal(x[1], y[1]) and np.array_equal(x[2], y[2])):
            return False
    return True


# ====================================================================== pettingzoo test suite
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("shift", range(6))
def test_api_test_raw(config, shift):
    opts = {**config, **(SHORT if shift % 2 else {})}
    api_test(SeedShifted(shift, **opts), num_cycles=300)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("shift", range(3))
def test_api_test_wrapped(config, shift):
    opts = {**config, **(SHORT if shift % 2 else {})}
    api_test(wrapped(SeedShifted(shift, **opts)), num_cycles=300)


@pytest.mark.parametrize("config", CONFIGS)
def test_api_test_public_constructors(config):
    api_test(allfives_v0.env(**config), num_cycles=200)
    api_test(allfives_v0.raw_env(**config), num_cycles=200)


@pytest.mark.parametrize(
    "options",
    [
        {"may_draw_when_able": True},
        {"max_pip": 9, "num_players": 3},
        {"max_pip": 12, "num_players": 4, "episode": "hand"},
        {"reward": "points", "hand_end": "winner_takes"},
        {"score_unit": 5, "spinner_count": "sniff", "spinner_sides_first": False, "max_hands": 2},
        {"first_leader": "highest_double", "no_double_fallback": "draw_until_double", "boneyard_reserve": 2},
    ],
    ids=["draw-when-able", "double-nine", "double-twelve-hand", "points", "unit5-sniff", "highest-double"],
)
def test_api_test_option_variants(options):
    api_test(allfives_v0.env(**options), num_cycles=300)


@pytest.mark.parametrize("config", CONFIGS)
def test_seed_test(config):
    seed_test(lambda: allfives_v0.env(**config), num_cycles=200)
    seed_test(lambda: allfives_v0.raw_env(**config), num_cycles=200)


@pytest.mark.parametrize("config", CONFIGS)
def test_render_test(config, capsys):
    render_test(lambda render_mode=None: allfives_v0.env(render_mode=render_mode, **config))
    render_test(lambda render_mode=None: allfives_v0.raw_env(render_mode=render_mode, **config))
    assert "All Fives" in capsys.readouterr().out  # "human" printed the table


def test_render_modes_return_values(capsys):
    env = allfives_v0.raw_env(render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert isinstance(text, str) and "All Fives" in text and "Legal:" in text
    human = allfives_v0.raw_env(render_mode="human")
    human.reset(seed=3)
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out.strip() == text.strip()


# ====================================================================== pickling
@pytest.mark.parametrize("make", [allfives_v0.raw_env, allfives_v0.env], ids=["raw_env", "env"])
@pytest.mark.parametrize("config", CONFIGS)
def test_pickle_round_trip(make, config):
    env = make(reward="points", **config)
    env.reset(seed=11)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.possible_agents == env.possible_agents
    assert clone.unwrapped.rules == env.unwrapped.rules
    assert clone.unwrapped.reward_mode == "points"
    # the copy plays exactly as a fresh environment with the same options
    assert traces_equal(play_out(clone, seed=11), play_out(make(reward="points", **config), seed=11))
    pickle.loads(pickle.dumps(make(**config)))  # before any reset too


# ====================================================================== seeding
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_reset_seed_reproducible(config, seed):
    a = play_out(allfives_v0.env(**config), seed=seed, policy_seed=seed)
    b = play_out(allfives_v0.env(**config), seed=seed, policy_seed=seed)
    assert traces_equal(a, b)
    # the same env object, reseeded, repeats itself too
    env = allfives_v0.raw_env(**config)
    assert traces_equal(play_out(env, seed=seed, policy_seed=seed), play_out(env, seed=seed, policy_seed=seed))


def _deal(env):
    g = env.unwrapped.game
    return tuple(tuple(g.hand(s)) for s in range(g.num_players)), tuple(g.boneyard()), g.leader


@pytest.mark.parametrize("config", CONFIGS)
def test_different_seeds_deal_differently(config):
    env = allfives_v0.raw_env(**config)
    deals = set()
    for seed in range(30):
        env.reset(seed=seed)
        deals.add(_deal(env)[:2])
    assert len(deals) == 30


def test_reset_without_seed_continues_the_generator():
    env = allfives_v0.raw_env()
    env.reset(seed=5)
    first = _deal(env)
    env.reset()
    second = _deal(env)
    env.reset()
    third = _deal(env)
    assert len({first[:2], second[:2], third[:2]}) == 3
    # ... and continuing is itself reproducible
    other = allfives_v0.raw_env()
    other.reset(seed=5)
    assert _deal(other) == first
    other.reset()
    assert _deal(other) == second
    other.reset()
    assert _deal(other) == third


def test_unseeded_envs_differ():
    deals = set()
    for _ in range(5):
        env = allfives_v0.raw_env()
        env.reset()
        deals.add(_deal(env)[:2])
    assert len(deals) == 5


# ====================================================================== spaces and state
@pytest.mark.parametrize("config", CONFIGS)
def test_spaces_are_built_once_and_contain_every_observation(config):
    env = allfives_v0.raw_env(**config)
    spaces_before = {a: env.observation_space(a) for a in env.possible_agents}
    actions_before = {a: env.action_space(a) for a in env.possible_agents}
    n_actions = actions_before["player_0"].n

    def record(e, agent):
        for a in e.possible_agents:
            assert e.observation_space(a) is spaces_before[a]
            assert e.action_space(a) is actions_before[a]
            obs = e.observe(a)
            assert spaces_before[a].contains(obs), f"observation of {a} is outside observation_space"
            assert obs["action_mask"].shape == (n_actions,)
        state = e.state()
        assert state.shape == e.state_space.shape and state.dtype == e.state_space.dtype
        assert e.state_space.contains(state)

    for seed in range(3):
        play_out(env, seed=seed, record=record)
    state = env.state()
    assert state.shape == env.state_space.shape


def test_action_space_size_includes_draw_when_able():
    tiles = 28
    assert allfives_v0.raw_env().action_space("player_0").n == 4 * tiles
    assert allfives_v0.raw_env(may_draw_when_able=True).action_space("player_0").n == 4 * tiles + 1
    assert allfives_v0.raw_env(max_pip=9).action_space("player_0").n == 4 * 55


@pytest.mark.parametrize("config", CONFIGS)
def test_masks_only_for_the_agent_to_act(config):
    env = allfives_v0.raw_env(**config)

    def record(e, agent):
        game = e.game
        for a in e.possible_agents:
            mask = e.observe(a)["action_mask"]
            if game.over:
                assert not mask.any()
            elif a == e.agent_selection:
                assert sorted(np.flatnonzero(mask).tolist()) == game.legal_actions() and mask.any()
            else:
                assert not mask.any()

    play_out(env, seed=4, record=record)


# ====================================================================== rewards
@pytest.mark.parametrize("reward", ["win", "points"])
@pytest.mark.parametrize("seed", range(4))
def test_two_player_rewards_are_zero_sum(reward, seed):
    env = allfives_v0.raw_env(reward=reward, max_hands=3)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    while not all(env.terminations[a] or env.truncations[a] for a in env.possible_agents):
        assert abs(sum(env.rewards.values())) < 1e-9
        for a in env.possible_agents:
            totals[a] += env.rewards[a]
        env.step(random_policy(env, rng))
    for a in env.possible_agents:
        totals[a] += env.rewards[a]
    assert abs(sum(totals.values())) < 1e-9
    game = env.game
    if reward == "win":
        if game.winner is None:
            assert totals == {"player_0": 0.0, "player_1": 0.0}
        else:
            assert totals[f"player_{game.winner}"] == 1.0 and totals[f"player_{1 - game.winner}"] == -1.0
    else:
        # points: the zero-sum score difference over the game, scaled by the target
        d0 = game.scores[0] - game.scores[1]
        assert totals["player_0"] == pytest.approx(d0 / env.rules.target)


@pytest.mark.parametrize("reward", ["win", "points"])
@pytest.mark.parametrize("seed", range(3))
def test_points_and_win_rewards_through_agent_iter(reward, seed):
    """Rewards read through last() add up to the same zero-sum totals, for every player count."""
    for config in ({"num_players": 2}, {"num_players": 3}, {"num_players": 4, "partnership": False}):
        env = allfives_v0.env(reward=reward, max_hands=2, **config)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, r, term, trunc, _ = env.last()
            totals[agent] += r
            env.step(random_policy(env, rng))
        if reward == "points":
            assert abs(sum(totals.values())) < 1e-9
        else:
            assert sorted(totals.values()) in (
                sorted([1.0] + [-1.0] * (len(totals) - 1)), [0.0] * len(totals)
            )


@pytest.mark.parametrize("reward", ["win", "points"])
@pytest.mark.parametrize("seed", range(4))
def test_partners_share_rewards(reward, seed):
    env = allfives_v0.raw_env(num_players=4, reward=reward, max_hands=2)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while True:
        assert env.rewards["player_0"] == env.rewards["player_2"]
        assert env.rewards["player_1"] == env.rewards["player_3"]
        assert env.rewards["player_0"] == -env.rewards["player_1"]
        for a in env.possible_agents:
            totals[a] += env.rewards[a]
        if all(env.terminations.values()) or all(env.truncations.values()):
            break
        env.step(random_policy(env, rng))
    assert totals["player_0"] == totals["player_2"] == -totals["player_1"] == -totals["player_3"]
    if reward == "win" and env.game.winner is not None:
        assert totals[f"player_{env.game.winner}"] == 1.0


def test_points_reward_matches_score_changes():
    env = allfives_v0.raw_env(reward="points")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    game = env.game
    for _ in range(40):
        if game.over:
            break
        before = list(game.scores)
        env.step(random_policy(env, rng))
        d = [now - then for now, then in zip(game.scores, before)]
        assert env.rewards["player_0"] == pytest.approx((d[0] - d[1]) / env.rules.target)
        assert env.rewards["player_1"] == pytest.approx((d[1] - d[0]) / env.rules.target)


# ====================================================================== episodes and truncation
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", range(3))
def test_episode_hand_ends_after_one_hand(config, seed):
    env = allfives_v0.raw_env(episode="hand", **config)
    play_out(env, seed=seed)
    game = env.game
    assert game.over and game.hand_number == 1
    assert sum(type(e) is Settlement for e in game.events) == 1
    assert sum(type(e) is HandStart for e in game.events) == 1
    assert type(game.events[-1]) is GameOver
    assert env.agents == []
    assert all(env.terminations.values()) and not any(env.truncations.values())


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", range(4))
def test_episode_hand_win_reward_goes_to_the_best_hand(config, seed):
    """``episode="hand"``, ``reward="win"``: +1 to the side that gained most in the hand, -1 to the others,
    0 all round on a tie for the best gain (unless the target was reached, which wins outright)."""
    env = allfives_v0.raw_env(episode="hand", **config)
    seen = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for agent in env.agent_iter():
        _, reward, _, _, _ = env.last()
        seen[agent] += reward
        env.step(random_policy(env, rng))
    game = env.game
    gains = list(next(e for e in game.events if type(e) is Settlement).scores)  # every side started at 0
    best = max(gains)
    winner = game.winner if game.winner is not None else (gains.index(best) if gains.count(best) == 1 else None)
    for i, agent in enumerate(env.possible_agents):
        expected = 0.0 if winner is None else (1.0 if env.rules.side_of(i) == winner else -1.0)
        assert seen[agent] == expected


@pytest.mark.parametrize("seed", range(3))
def test_max_hands_truncates(seed):
    env = allfives_v0.raw_env(max_hands=1, target=10_000)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    while not (all(env.truncations.values()) or all(env.terminations.values())):
        env.step(random_policy(env, rng))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.game.truncated and env.game.hands_completed == 1


# ====================================================================== infos
@pytest.mark.parametrize("config", CONFIGS)
def test_infos_hide_other_seats_draws(config):
    env = allfives_v0.raw_env(**config)
    rng = np.random.default_rng(1)
    seen_own = seen_other = 0
    for seed in range(6):
        env.reset(seed=seed)
        while env.agents:
            for agent in env.agents:
                seat = env.possible_agents.index(agent)
                info = env.infos[agent]
                assert set(info) >= {"events", "scores", "hand"}
                for ev in info["events"]:
                    if type(ev) is Draw:
                        if ev.seat == seat:
                            assert ev.tile >= 0, "the drawer must see its own tile"
                            seen_own += 1
                        else:
                            assert ev.tile == -1, f"{agent} sees seat {ev.seat}'s drawn tile"
                            seen_other += 1
            # the acting agent's events are the public view of the log's tail
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            events = env.infos[agent]["events"]
            if events:
                tail = [public_view(e, seat) for e in env.game.events[len(env.game.events) - len(events):]]
                assert events == tail
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
            else:
                env.step(random_policy(env, rng))
    assert seen_own and seen_other, "no draws happened: the test did not exercise hiding"


def test_public_view_hides_only_others():
    ev = Draw(1, 5, True)
    assert public_view(ev, 1) == ev
    assert public_view(ev, 0) == Draw(1, -1, True)
    assert public_view(ev, None) == Draw(1, -1, True)


# ====================================================================== registration
def test_pettingzoo_make_after_import():
    assert allfives_env.ENV_ID == "allfives/allfives_v0"
    env = pettingzoo.make("aec", "allfives/allfives_v0", num_players=3)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert isinstance(env.unwrapped, raw_env)
    env.reset(seed=0)
    trace = play_out(env, seed=0)
    assert trace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(pettingzoo.make("aec", "allfives/allfives_v0"), num_cycles=100)


def test_registration_is_idempotent():
    """Registering again (e.g. ``importlib.reload(allfives_env)``) must not override the entry: the guard
    in ``_register`` is meant to skip an id that is already registered."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pettingzoo warns "Overriding environment ..." on a second register
        allfives_env._register()
    assert pettingzoo.make("aec", "allfives/allfives_v0").possible_agents == ["player_0", "player_1"]
