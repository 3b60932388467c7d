"""The Gymnasium vector env on the batch engine (allfives_env/vector.py): the single-seat env's semantics,
proved by playing its games again in the single-seat env; Gymnasium's vector API contract (spaces, shapes,
dtypes, both autoreset modes, seeding); copies; and typed refusals of bad input that change nothing."""

from __future__ import annotations

import copy
import pickle
from typing import Any, Optional

import gymnasium
import numpy as np
import pytest

import allfives_env  # noqa: F401  (registers AllFives-v0)
from allfives_env import single_seat
from allfives_env.agents.base import Agent
from allfives_env.core import Rules
from allfives_env.core.deal import Deal
from allfives_env.core.errors import (
    AgentError, BatchError, IllegalActionError, NotResetError, RulesError, SeedError,
)
from allfives_env.single_seat import AllFivesSingleSeatEnv
from allfives_env.vector import AUTORESET_MODES, AllFivesVectorEnv


def _random_actions(env: AllFivesVectorEnv, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game (0 where a game has none: it restarts at this step)."""
    masks = env.action_masks()
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks], dtype=np.int64)


# ------------------------------------------------------------------------------------- the same as one game
class TapeAgent(Agent):
    """Plays the recorded decisions of a game in order (shared by every seat the tape drives)."""

    name = "tape"

    def __init__(self, tape: list[int]) -> None:
        super().__init__()
        self.tape = tape

    def act(self, view: Any) -> int:
        return self.tape.pop(0)


def _episodes(env: AllFivesVectorEnv, count: int, seed: int) -> list[dict[str, Any]]:
    """Play random legal learner moves until ``count`` episodes have ended; each with what the vector env
    returned at every learner step, its seat, its replay and its decisions (read before the game restarts)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    traces: list[dict[str, Any]] = [{"obs": [obs[i]], "mask": [info["action_mask"][i]], "steps": []}
                                    for i in range(env.num_envs)]
    finished: list[dict[str, Any]] = []
    while len(finished) < count:
        restarting = ~env.action_masks().any(axis=1)
        actions = _random_actions(env, rng)
        obs, reward, term, trunc, info = env.step(actions)
        for i in range(env.num_envs):
            if restarting[i]:  # next_step autoreset: the new episode's first observation
                assert reward[i] == 0.0 and not term[i] and not trunc[i]
                traces[i] = {"obs": [obs[i]], "mask": [info["action_mask"][i]], "steps": []}
                continue
            trace = traces[i]
            trace["steps"].append((int(actions[i]), float(reward[i]), bool(term[i]), bool(trunc[i])))
            trace["obs"].append(obs[i])
            trace["mask"].append(info["action_mask"][i])
            if term[i] or trunc[i]:
                finished.append({**trace, "seat": int(info["seat"][i]), "replay": env.batch.replay(i),
                                 "decisions": env.batch.decisions(i).tolist()})
    return finished


def _replay_in_single_seat(episode: dict[str, Any], rules: Rules, kwargs: dict[str, Any],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Play the episode's deals and decisions in the single-seat env and compare every return value."""
    record = episode["replay"]
    deals = [Deal.from_tiles(rules, hand["deal"]["hands"], hand["deal"]["boneyard"], hand["leader"], None,
                             hand["opening_drawer"]) for hand in record["hands"]]
    scores = record["hands"][0]["scores_before"]
    monkeypatch.setattr(single_seat, "fixed_start", lambda *args, **kw: (list(deals), list(scores)))
    tape = list(episode["decisions"])
    agent = TapeAgent(tape)
    partner = {"partner": agent} if kwargs.get("partner") else {}
    env = AllFivesSingleSeatEnv(opponents=[agent], seat=episode["seat"], rules=rules,
                                **{k: v for k, v in kwargs.items() if k not in ("opponents", "partner")}, **partner)
    obs, info = env.reset(seed=0)
    np.testing.assert_array_equal(obs, episode["obs"][0])
    np.testing.assert_array_equal(info["action_mask"], episode["mask"][0])
    np.testing.assert_array_equal(env.action_masks(), episode["mask"][0])
    for k, (action, reward, term, trunc) in enumerate(episode["steps"]):
        assert tape.pop(0) == action  # the learner's turn comes at the same point of the game
        obs, r, t, tr, info = env.step(action)
        assert (r, t, tr) == (reward, term, trunc), f"step {k}"
        np.testing.assert_array_equal(obs, episode["obs"][k + 1])
        np.testing.assert_array_equal(info["action_mask"], episode["mask"][k + 1])
    assert not tape and (term or trunc)


CASES = {
    "2p points game features": (Rules(num_players=2, target=100), dict(reward="points", episode="game",
                                                                       action_features=True,
                                                                       opponents=["greedy", "expert"])),
    "2p win hand": (Rules(num_players=2), dict(reward="win", episode="hand", opponents=["random", "greedy"])),
    "3p points hand 9s": (Rules(num_players=3, max_pip=9), dict(reward="points", episode="hand",
                                                               opponents=["expert", "random"])),
    "4p partnership win": (Rules(num_players=4, partnership=True, target=100),
                           dict(reward="win", episode="game", opponents=["random"], partner="greedy")),
    "2p capped hands": (Rules(num_players=2, max_hands=2), dict(reward="points", episode="game",
                                                               opponents=["expert"])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_episode_plays_again_identically_in_the_single_seat_env(case: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rules, kwargs = CASES[case]
    env = AllFivesVectorEnv(8, rules=rules, record=True, **kwargs)
    episodes = _episodes(env, 12, seed=3)
    assert len({e["seat"] for e in episodes}) > 1  # the learner's seat is drawn per episode
    for episode in episodes:
        _replay_in_single_seat(episode, rules, kwargs, monkeypatch)


# -------------------------------------------------------------------------------- Gymnasium's vector API
def test_make_vec_builds_it_with_the_single_env_keywords() -> None:
    env = gymnasium.make_vec("AllFives-v0", num_envs=16, vectorization_mode="vector_entry_point",
                             opponents=["expert"], reward="points", num_players=3)
    assert isinstance(env, AllFivesVectorEnv) and env.num_envs == 16 and env.rules.num_players == 3
    single = gymnasium.make("AllFives-v0", opponents=["expert"], reward="points", num_players=3)
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space.shape == (16, *single.observation_space.shape)
    assert isinstance(env.action_space, gymnasium.spaces.MultiDiscrete)
    assert env.action_space.nvec.tolist() == [single.action_space.n] * 16


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_the_vector_contract_shapes_dtypes_and_autoreset(mode: str) -> None:
    env = AllFivesVectorEnv(32, opponents=["greedy"], reward="win", episode="hand", autoreset_mode=mode)
    assert env.metadata["autoreset_mode"] is AUTORESET_MODES[mode]
    obs, info = env.reset(seed=1)
    assert obs in env.observation_space and obs.dtype == np.float32
    assert info["action_mask"].shape == (32, env.single_action_space.n) and info["action_mask"].dtype == np.bool_
    assert info["_action_mask"].all() and (info["action_mask"] == env.action_masks()).all()
    rng = np.random.default_rng(0)
    ended = restarted = 0
    for _ in range(60):
        before = env.action_masks()
        obs, reward, term, trunc, info = env.step(_random_actions(env, rng))
        assert obs.shape == (32, env.single_observation_space.shape[0]) and obs.dtype == np.float32
        assert reward.dtype == np.float64 and term.dtype == np.bool_ and trunc.dtype == np.bool_
        assert set(np.unique(reward[term])) <= {-1.0, 0.0, 1.0} and (reward[~term] == 0).all()
        done = term | trunc
        ended += int(done.sum())
        if mode == "next_step":
            waiting = before.any(axis=1)
            restarted += int((~waiting).sum())
            assert not done[~waiting].any() and (reward[~waiting] == 0).all()
            assert not env.action_masks()[done].any()  # their next step restarts them
        else:
            assert env.action_masks().any(axis=1).all()  # every game waits for the learner again
            assert (info.get("_final_obs", np.zeros(32, bool)) == done).all()
            if done.any():
                assert info["final_obs"][done].shape[1] == obs.shape[1]
                assert not info["final_info"]["action_mask"][done].any()
    assert ended > 0 and (mode == "same_step" or restarted > 0)


def test_seeding_a_reset_deals_the_same_games_and_no_seed_deals_new_ones() -> None:
    def run(env: AllFivesVectorEnv, seed: Optional[int]) -> list[np.ndarray]:
        rng = np.random.default_rng(9)
        out = [env.reset(seed=seed)[0]]
        for _ in range(20):
            out.append(env.step(_random_actions(env, rng))[0])
        return out

    a, b = AllFivesVectorEnv(8, opponents=["expert", "random"]), AllFivesVectorEnv(8, opponents=["expert", "random"])
    first, again = run(a, 5), run(b, 5)
    assert all((x == y).all() for x, y in zip(first, again))
    assert not (run(a, 6)[0] == first[0]).all()
    run(b, 6)
    follow_a, follow_b = run(a, None), run(b, None)  # each continues its own generator: the same way
    assert all((x == y).all() for x, y in zip(follow_a, follow_b))
    assert not (follow_a[0] == run(a, 6)[0]).all()


def test_copies_continue_exactly_like_the_original() -> None:
    env = AllFivesVectorEnv(8, opponents=["expert", "ppo-2p"], reward="points", action_features=True)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(5):
        env.step(_random_actions(env, rng))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(15):
        actions = _random_actions(env, rng)
        obs, reward, term, trunc, info = env.step(actions)
        for twin in copies:
            o, r, t, tr, i = twin.step(actions)
            assert (o == obs).all() and (r == reward).all() and (t == term).all() and (tr == trunc).all()
            assert (i["action_mask"] == info["action_mask"]).all()


def test_opponents_can_change_between_episodes() -> None:
    env = AllFivesVectorEnv(6, opponents=["random"], num_players=3)
    env.reset(seed=0)
    env.set_opponents(["greedy"], [1.0], indices=[0, 1])
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for _ in range(200):
        env.step(_random_actions(env, rng))
        seen.update(s for s in env.seated_specs(0) if s is not None)
    assert "greedy" in seen
    assert env.seated_specs(5).count(None) == 1


def test_the_single_env_puts_the_mask_in_its_infos() -> None:
    env = gymnasium.make("AllFives-v0")
    obs, info = env.reset(seed=0)
    assert (info["action_mask"] == env.unwrapped.action_masks()).all() and info["action_mask"].any()
    obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert (info["action_mask"] == env.unwrapped.action_masks()).all()


# ----------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("num_envs", [0, -3, 1.5, True, "4", None, 2**40])
def test_a_bad_number_of_games_is_refused(num_envs: Any) -> None:
    with pytest.raises(BatchError, match="num_envs"):
        AllFivesVectorEnv(num_envs)


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(opponents=["pimc:samples=5"]), AgentError, "no batch implementation"),
    (dict(opponents=["ppo-2p:sample=true"]), AgentError, "greedily"),
    (dict(opponents=[object()]), AgentError, "agent spec"),
    (dict(opponents=[]), AgentError, "at least one"),
    (dict(reward="score"), RulesError, "reward"),
    (dict(seat=2), RulesError, "seat"),
    (dict(autoreset_mode="disabled"), BatchError, "autoreset_mode"),
    (dict(record="yes"), BatchError, "record"),
    (dict(partner="greedy"), AgentError, "partnership"),
    (dict(num_players=9), RulesError, "num_players"),
])
def test_bad_arguments_get_the_packages_typed_errors(kwargs: dict, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        AllFivesVectorEnv(4, **kwargs)


def test_a_registry_agent_object_is_refused_with_the_reason() -> None:
    from allfives_env.agents.registry import make_agent

    with pytest.raises(AgentError, match="no batch implementation|agent spec"):
        AllFivesVectorEnv(4, opponents=[make_agent("pimc")])


def test_bad_actions_are_refused_and_change_nothing() -> None:
    env = AllFivesVectorEnv(4, opponents=["greedy"])
    with pytest.raises(NotResetError):
        env.step(np.zeros(4, dtype=np.int64))
    env.reset(seed=4)
    state = env.batch.S.copy()
    masks = env.action_masks()
    bad = _random_actions(env, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~masks[2])[0])
    bad[2] = illegal
    with pytest.raises(IllegalActionError, match=r"env 2: action .* is not legal .* legal actions: .*ids \[") as info:
        env.step(bad)
    assert "nothing was applied" in str(info.value)
    for actions, words in ((np.zeros(3, dtype=np.int64), "shape"), (np.zeros(4, dtype=np.float32), "dtype"),
                           (np.zeros((4, 1), dtype=np.int64), "shape"), ([0, 1, "a", 3], "integer"),
                           (np.full(4, 10**6), "out of range")):
        with pytest.raises(IllegalActionError, match=words):
            env.step(actions)
    assert (env.batch.S == state).all() and (env.action_masks() == masks).all()


def test_reset_refuses_options_and_per_game_seed_lists() -> None:
    env = AllFivesVectorEnv(4)
    with pytest.raises(BatchError, match="reset options"):
        env.reset(options={"hands": []})
    with pytest.raises(SeedError, match="one non-negative integer"):
        env.reset(seed=[1, 2, 3, 4])
    with pytest.raises(SeedError):
        env.reset(seed=-1)
    with pytest.raises(AgentError, match="must lie in 0..3"):
        env.set_opponents(["greedy"], [1.0], indices=[7])


def test_the_env_builds_one_observation_encoder_and_one_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The env's encoder gives its spaces and memory check; its observer, the policy opponents (their file's
    checks read the observation's shape, not an encoder) and every batch it deals read the declared slices
    and the one :class:`BatchLayout` of its rules, building no encoder of their own."""
    import sys

    from allfives_env import encoding
    from allfives_env.batch import layout

    built: list[str] = []
    init = encoding.ObservationEncoder.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(sys._getframe(1).f_code.co_filename)
        init(self, *args, **kwargs)

    monkeypatch.setattr(encoding.ObservationEncoder, "__init__", counted)
    env = AllFivesVectorEnv(4, opponents=["ppo-2p", "expert"], max_hands=2)
    env.reset(seed=0)
    env.step(_random_actions(env, np.random.default_rng(0)))
    env.reset(seed=1)
    assert len(built) == 1, built
    assert env.batch is not None and env.batch.layout is layout.layout_for(env.rules)


def test_the_policy_twin_refuses_an_agent_that_plays_no_policy_file() -> None:
    """An agent registered with the policy files' batch twin but playing no policy has no policy to batch: the
    vector env refuses it with an AgentError naming it, instead of failing inside the twin."""
    from allfives_env.agents import RandomAgent
    from allfives_env.agents.registry import register_agent, unregister_agent
    from allfives_env.batch_opponents import POLICY_TWIN

    register_agent("not-a-policy", RandomAgent, batch=POLICY_TWIN)
    try:
        with pytest.raises(AgentError, match="'not-a-policy' is registered with the policy batch twin but is a "
                                             "RandomAgent"):
            AllFivesVectorEnv(2, opponents=["not-a-policy"])
    finally:
        unregister_agent("not-a-policy")
