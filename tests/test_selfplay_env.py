"""The self-play env on the batch engine (allfives_env/selfplay.py): the AEC env's semantics for every seat,
proved by playing its games again, deal for deal and decision for decision, in ``raw_env``; its contract
(shapes, dtypes, both autoreset modes, seeding, copies, privileged outputs only when asked for); and typed
refusals of bad input that change nothing."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any, Optional

import numpy as np
import pytest

import allfives_env.env as aec_module
from allfives_env.core import Rules
from allfives_env.core.deal import Deal
from allfives_env.core.errors import BatchError, IllegalActionError, NotResetError, RulesError, SeedError
from allfives_env.env import raw_env
from allfives_env.selfplay import PRIVILEGED_OUTPUTS, AllFivesSelfPlayEnv

PUBLIC_INFO = {"action_mask", "seat", "scores", "hand"}


def _random_actions(env: AllFivesSelfPlayEnv, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per game (0 where a game has none: it is dealt again at this step)."""
    masks = env.action_masks()
    return np.where(masks.any(axis=1), (rng.random(masks.shape) * masks).argmax(axis=1), 0)


def _observed_actions(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A legal action per game that depends on its observation and mask only: two envs that show a game the
    same positions play it the same way, whenever each steps it."""
    key = (obs.astype(np.float64) * np.arange(1, obs.shape[1] + 1)).sum(axis=1)
    noise = np.sin(key[:, None] * 12.9898 + np.arange(masks.shape[1]) * 78.233) + 2.0
    return np.where(masks.any(axis=1), (noise * masks).argmax(axis=1), 0)


# ------------------------------------------------------------------------------ the same as the AEC env
def _episodes(env: AllFivesSelfPlayEnv, count: int, seed: int) -> list[dict[str, Any]]:
    """Random legal play for every seat until ``count`` episodes have ended; for each, what the env showed at
    every decision (seat, observation, mask, state) and returned after it (action, every seat's reward, the
    episode flags), the final row, and the game's replay and decisions, read before it is dealt again."""
    rng = np.random.default_rng(seed)
    privileged = "state" in env.privileged

    def point(obs: np.ndarray, info: dict[str, Any], i: int) -> dict[str, Any]:
        return {"seat": int(info["seat"][i]), "obs": obs[i], "mask": info["action_mask"][i],
                "state": info["state"][i] if privileged else None}

    obs, info = env.reset(seed=seed)
    traces: list[dict[str, Any]] = [{"points": [point(obs, info, i)], "steps": []} for i in range(env.num_envs)]
    finished: list[dict[str, Any]] = []
    while len(finished) < count:
        restarting = ~env.action_masks().any(axis=1)
        actions = _random_actions(env, rng)
        obs, rewards, term, trunc, info = env.step(actions)
        for i in range(env.num_envs):
            if restarting[i]:  # next_step autoreset: the new episode's first position, nothing paid
                assert (rewards[i] == 0.0).all() and not term[i] and not trunc[i]
                traces[i] = {"points": [point(obs, info, i)], "steps": []}
                continue
            trace = traces[i]
            trace["steps"].append((int(actions[i]), rewards[i].tolist(), bool(term[i]), bool(trunc[i])))
            trace["points"].append(point(obs, info, i))
            if term[i] or trunc[i]:
                finished.append({**trace, "replay": env.batch.replay(i), "decisions": env.batch.decisions(i).tolist()})
    return finished


def _replay_in_aec(episode: dict[str, Any], rules: Rules, kwargs: dict[str, Any],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Play the episode's deals and decisions in ``raw_env`` and compare, at every decision, the seat to act,
    its observation and mask (and the state), and after each step every seat's reward and the flags."""
    record = episode["replay"]
    deals = [Deal.from_tiles(rules, hand["deal"]["hands"], hand["deal"]["boneyard"], hand["leader"], None,
                             hand["opening_drawer"]) for hand in record["hands"]]
    scores = record["hands"][0]["scores_before"]
    monkeypatch.setattr(aec_module, "fixed_start", lambda *args, **kw: (list(deals), list(scores)))
    env = raw_env(rules=rules, **kwargs)
    env.reset(seed=0)
    assert [a for a, *_ in episode["steps"]] == episode["decisions"]
    for k, point in enumerate(episode["points"]):
        agent = env.agent_selection
        seen = env.observe(agent)
        assert point["seat"] == env.possible_agents.index(agent), f"decision {k}"
        np.testing.assert_array_equal(point["obs"], seen["observation"], err_msg=f"decision {k}")
        np.testing.assert_array_equal(point["mask"], seen["action_mask"].astype(bool), err_msg=f"decision {k}")
        if point["state"] is not None:
            np.testing.assert_array_equal(point["state"], env.state(), err_msg=f"decision {k}")
        if k == len(episode["steps"]):
            break
        action, rewards, term, trunc = episode["steps"][k]
        env.step(action)
        assert rewards == [env.rewards[a] for a in env.possible_agents], f"decision {k}"
        assert (term, trunc) == (env.terminations[agent], env.truncations[agent]), f"decision {k}"
    assert term or trunc


CASES = {
    "2p win game features": (Rules(num_players=2, target=100), dict(reward="win", episode="game",
                                                                     action_features=True)),
    "3p points hand": (Rules(num_players=3), dict(reward="points", episode="hand")),
    "4p partnership win": (Rules(num_players=4, partnership=True, target=100), dict(reward="win", episode="game")),
    "2p capped points": (Rules(num_players=2, max_hands=2), dict(reward="points", episode="game")),
    "2p double-9 win hand": (Rules(num_players=2, max_pip=9), dict(reward="win", episode="hand")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_episode_plays_again_identically_in_the_aec_env(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rules, kwargs = CASES[case]
    env = AllFivesSelfPlayEnv(6, rules=rules, record=True, privileged=("state",), **kwargs)
    episodes = _episodes(env, 6, seed=3)
    assert len({p["seat"] for e in episodes for p in e["points"]}) == rules.num_players  # every seat acts
    for episode in episodes:
        _replay_in_aec(episode, rules, kwargs, monkeypatch)
    if rules.max_hands == 2:
        assert any(e["steps"][-1][3] for e in episodes)  # the cap was reached: truncated, as the AEC env says


# ---------------------------------------------------------------------------------------------- contract
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_shapes_dtypes_and_autoreset(mode: str) -> None:
    env = AllFivesSelfPlayEnv(16, reward="win", episode="hand", num_players=3, autoreset_mode=mode)
    obs, info = env.reset(seed=1)
    n, A, P = 16, env.num_actions, 3
    assert obs.shape == (n, env.observation_size) and obs.dtype == np.float32
    space = env.single_observation_space
    assert all(row in space for row in obs)
    assert set(info) == PUBLIC_INFO | {f"_{k}" for k in PUBLIC_INFO}
    assert info["seat"].dtype == np.int64 and info["action_mask"].shape == (n, A)
    assert info["action_mask"].dtype == np.bool_ and not info["action_mask"].flags.writeable
    assert (info["action_mask"] == env.action_masks()).all() and env.action_masks().any(axis=1).all()
    rng = np.random.default_rng(0)
    ended = restarted = 0
    for _ in range(80):
        before = env.action_masks()
        obs, rewards, term, trunc, info = env.step(_random_actions(env, rng))
        assert obs.shape == (n, env.observation_size) and obs.dtype == np.float32
        assert rewards.shape == (n, P) and rewards.dtype == np.float64
        assert term.dtype == np.bool_ and trunc.dtype == np.bool_ and term.shape == trunc.shape == (n,)
        done = term | trunc
        assert (rewards[~done] == 0).all() and set(np.unique(rewards[done])) <= {-1.0, 0.0, 1.0}
        assert (rewards[done].sum(axis=1) <= 0).all()  # a win is +1 for one seat, -1 for each other
        live = env.action_masks().any(axis=1)
        assert (info["seat"][live] == env.batch.current[live]).all()
        ended += int(done.sum())
        if mode == "next_step":
            waiting = before.any(axis=1)
            restarted += int((~waiting).sum())
            assert not done[~waiting].any() and (rewards[~waiting] == 0).all()
            assert (live == ~done).all()  # a finished game waits for the next step, to be dealt again
            assert "final_obs" not in info
        else:
            assert live.all()  # every game waits for a decision again
            assert (info.get("_final_obs", np.zeros(n, bool)) == done).all()
            if done.any():
                final = info["final_info"]
                assert info["final_obs"].shape == obs.shape and not info["final_obs"][~done].any()
                assert not final["action_mask"][done].any() and (final["_seat"] == done).all()
                assert set(final) == PUBLIC_INFO | {f"_{k}" for k in PUBLIC_INFO}
    assert ended > 0 and (mode == "same_step" or restarted > 0)


def test_same_step_shows_what_next_step_shows_one_step_sooner() -> None:
    """Both modes play each game the same way when its actions depend on what it shows: the positions and
    returns of every game agree, next_step's finished row is same_step's final_obs / final_info, and
    next_step's restart step is the only extra one."""
    kwargs = dict(reward="points", episode="hand", num_players=2, privileged=("state",))
    nxt, same = (AllFivesSelfPlayEnv(6, autoreset_mode=m, **kwargs) for m in ("next_step", "same_step"))
    logs: dict[str, list[list[Any]]] = {"next": [[] for _ in range(6)], "same": [[] for _ in range(6)]}
    for name, env in (("next", nxt), ("same", same)):
        obs, info = env.reset(seed=11)
        log = logs[name]
        for i in range(6):
            log[i].append(("obs", obs[i].tobytes(), int(info["seat"][i]), info["state"][i].tobytes()))
        for _ in range(120):
            restarting = ~env.action_masks().any(axis=1)
            obs, rewards, term, trunc, info = env.step(_observed_actions(obs, env.action_masks()))
            for i in range(6):
                if restarting[i]:
                    log[i].append(("obs", obs[i].tobytes(), int(info["seat"][i]), info["state"][i].tobytes()))
                    continue
                log[i].append(("step", rewards[i].tolist(), bool(term[i]), bool(trunc[i])))
                if name == "same" and (term[i] or trunc[i]):
                    final = info["final_info"]
                    log[i].append(("final", info["final_obs"][i].tobytes(), int(final["seat"][i]),
                                   final["state"][i].tobytes()))
                elif term[i] or trunc[i]:
                    log[i].append(("final", obs[i].tobytes(), int(info["seat"][i]), info["state"][i].tobytes()))
                    continue
                log[i].append(("obs", obs[i].tobytes(), int(info["seat"][i]), info["state"][i].tobytes()))
    for i in range(6):
        a, b = logs["next"][i], logs["same"][i]
        common = min(len(a), len(b))
        assert common > 40 and a[:common] == b[:common], f"game {i}"
        assert any(entry[0] == "final" for entry in a[:common])


def test_seeding_the_same_seed_deals_the_same_games_and_reset_goes_on_from_the_generator() -> None:
    def run(env: AllFivesSelfPlayEnv, seed: Optional[int]) -> list[Any]:
        rng = np.random.default_rng(9)
        obs, info = env.reset(seed=seed)
        out: list[Any] = [obs, info["seat"], info["state"]]
        for _ in range(30):
            obs, rewards, term, trunc, info = env.step(_random_actions(env, rng))
            out += [obs, rewards, term, trunc, info["seat"], info["state"], info["scores"]]
        return out

    kwargs = dict(reward="points", num_players=3, privileged=("state",))
    a, b = AllFivesSelfPlayEnv(8, **kwargs), AllFivesSelfPlayEnv(8, **kwargs)
    first, again = run(a, 5), run(b, 5)
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert not np.array_equal(run(a, 6)[2], first[2])  # other seed, other deals
    run(b, 6)
    follow_a, follow_b = run(a, None), run(b, None)  # each goes on from its own generator: the same way
    assert all(np.array_equal(x, y) for x, y in zip(follow_a, follow_b))
    assert not np.array_equal(follow_a[2], run(a, 6)[2])
    # game i depends on the seed and i only, not on how many games the batch holds
    small = AllFivesSelfPlayEnv(3, **kwargs)
    _, info = small.reset(seed=5)
    np.testing.assert_array_equal(info["state"], first[2][:3])


def test_copies_continue_exactly_like_the_original() -> None:
    env = AllFivesSelfPlayEnv(8, reward="points", action_features=True, autoreset_mode="same_step",
                              privileged=("state",), num_players=4, partnership=True, target=50, record=True)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(10):
        env.step(_random_actions(env, rng))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    ended = 0
    for _ in range(60):
        actions = _random_actions(env, rng)
        out = env.step(actions)
        ended += int(out[2].sum())
        for twin in copies:
            _assert_same(twin.step(actions), out)
            assert (twin.action_masks() == env.action_masks()).all()
    assert ended > 0  # the copies went through an autoreset too
    follow = env.reset()[0]
    for twin in copies:
        assert np.array_equal(twin.reset()[0], follow)  # and their generators too


def _assert_same(got: Any, want: Any) -> None:
    """Equal step returns, infos (nested) included."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for x, y in zip(got, want):
            _assert_same(x, y)
    elif isinstance(want, dict):
        assert set(got) == set(want)
        for key in want:
            _assert_same(got[key], want[key])
    else:
        np.testing.assert_array_equal(got, want)


def test_privileged_outputs_only_when_asked_for_by_name() -> None:
    """Without ``privileged`` the infos hold the public keys only (and the observations are the AEC env's,
    which the conformance test proves); with it, ``state`` is in the infos and final infos."""
    env = AllFivesSelfPlayEnv(8, episode="hand", autoreset_mode="same_step")
    obs, info = env.reset(seed=0)
    assert set(info) == PUBLIC_INFO | {f"_{k}" for k in PUBLIC_INFO} and env.privileged == ()
    rng = np.random.default_rng(0)
    seen_final = False
    for _ in range(60):
        obs, _, term, trunc, info = env.step(_random_actions(env, rng))
        assert set(info) - {"final_obs", "_final_obs", "final_info", "_final_info"} == \
            PUBLIC_INFO | {f"_{k}" for k in PUBLIC_INFO}
        if "final_info" in info:
            seen_final = True
            assert "state" not in info["final_info"]
    assert seen_final
    with_state = AllFivesSelfPlayEnv(8, episode="hand", privileged=["state", "state"])
    _, info = with_state.reset(seed=0)
    assert with_state.privileged == ("state",) and info["state"].shape == (8, with_state.state_size)
    assert info["state"].dtype == np.float32 and info["_state"].all()
    T, P = 28, 2
    hands = info["state"][:, :T * P].reshape(8, T, P)
    assert (hands.sum(axis=1) == with_state.rules.hand_size).all()  # both seats' hands: no observation holds them
    assert PRIVILEGED_OUTPUTS == ("state",)


def test_a_step_makes_one_batch_step_one_mask_and_one_observation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hot path stays lean: per step (next_step mode, no privileged output) one ``BatchGame.step``, one
    ``legal_mask`` and one ``observe`` of every game, whatever ends or starts again."""
    from allfives_env.batch import BatchGame
    from allfives_env.batch.observe import BatchObserver

    env = AllFivesSelfPlayEnv(32, episode="hand")
    env.reset(seed=0)
    calls: dict[str, int] = {"step": 0, "legal_mask": 0, "observe": 0}
    for cls, name in ((BatchGame, "step"), (BatchGame, "legal_mask"), (BatchObserver, "observe")):
        def counted(self: Any, *args: Any, _name: str = name, _real: Any = getattr(cls, name), **kw: Any) -> Any:
            calls[_name] += 1
            return _real(self, *args, **kw)

        monkeypatch.setattr(cls, name, counted)
    rng = np.random.default_rng(0)
    ended = 0
    for k in range(1, 41):
        ended += int(env.step(_random_actions(env, rng))[2].sum())
        assert calls == {"step": k, "legal_mask": k, "observe": k}
    assert ended > 0


# ----------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("num_envs", [0, -3, 1.5, True, "4", None, 2**40])
def test_a_bad_number_of_games_is_refused(num_envs: Any) -> None:
    with pytest.raises(BatchError, match="num_envs"):
        AllFivesSelfPlayEnv(num_envs)


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(reward="score"), RulesError, "reward"),
    (dict(episode="match"), RulesError, "episode"),
    (dict(action_features="no"), RulesError, "action_features"),
    (dict(autoreset_mode="disabled"), BatchError, "autoreset_mode"),
    (dict(record="yes"), BatchError, "record"),
    (dict(privileged=("state", "hands")), BatchError, r"'hands' is unknown: give a tuple of names from \('state',\)"),
    (dict(privileged="state"), BatchError, "privileged='state' is not allowed"),
    (dict(privileged=5), BatchError, "privileged=5"),
    (dict(num_players=9), RulesError, "num_players"),
    (dict(rules=Rules(), num_players=3), RulesError, "not both"),
])
def test_bad_arguments_get_the_packages_typed_errors(kwargs: dict, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        AllFivesSelfPlayEnv(4, **kwargs)


def test_a_batch_too_large_for_memory_is_refused_before_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_env.vector as vector

    monkeypatch.setattr(vector, "available_memory", lambda: 10**6)
    with pytest.raises(BatchError, match=r"num_envs=4096 needs about .* use num_envs=\d+ or fewer"):
        AllFivesSelfPlayEnv(4096)


def test_bad_actions_are_refused_and_change_nothing() -> None:
    env = AllFivesSelfPlayEnv(4, num_players=3)
    with pytest.raises(NotResetError):
        env.step(np.zeros(4, dtype=np.int64))
    env.reset(seed=4)
    state, masks, seats = env.batch.S.copy(), env.action_masks(), env.seats.copy()
    bad = _random_actions(env, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~masks[2])[0])
    bad[2] = illegal
    seat = int(seats[2])
    legal = np.flatnonzero(masks[2]).tolist()
    words = (rf"game 2: action {illegal} .* is not legal for seat {seat}, the seat to act; legal actions: "
             rf".*\(ids {re.escape(str(legal))}\); nothing was applied")
    with pytest.raises(IllegalActionError, match=words):
        env.step(bad)
    for actions, words in ((np.zeros(3, dtype=np.int64), "shape"), (np.zeros(4, dtype=np.float32), "dtype"),
                           (np.zeros((4, 1), dtype=np.int64), "shape"), ([0, 1, "a", 3], "integer"),
                           (np.array([True] * 4), "dtype bool"), (np.full(4, 10**6), "out of range"),
                           (np.full(4, -1), "not legal")):
        with pytest.raises(IllegalActionError, match=words):
            env.step(actions)
    assert (env.batch.S == state).all() and (env.action_masks() == masks).all() and (env.seats == seats).all()


def test_a_refused_action_after_an_episode_end_does_not_deal_the_finished_game() -> None:
    """next_step mode: a step refused for one game's action leaves a finished game finished (its new deal
    happens only with an accepted step)."""
    env = AllFivesSelfPlayEnv(4, episode="hand")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.restart_next.any():
        env.step(_random_actions(env, rng))
    state, masks = env.batch.S.copy(), env.action_masks()
    live = int(np.flatnonzero(masks.any(axis=1))[0])
    bad = _random_actions(env, rng)
    bad[live] = int(np.flatnonzero(~masks[live])[0])
    with pytest.raises(IllegalActionError, match=f"game {live}:"):
        env.step(bad)
    assert (env.batch.S == state).all()


def test_reset_refuses_options_and_seed_lists_and_changes_nothing() -> None:
    env = AllFivesSelfPlayEnv(4)
    env.reset(seed=1)
    state, rng_state = env.batch.S.copy(), copy.deepcopy(env.rng.bit_generator.state)
    with pytest.raises(BatchError, match="reset options"):
        env.reset(options={"hands": []})
    with pytest.raises(SeedError, match="one non-negative integer"):
        env.reset(seed=[1, 2, 3, 4])
    with pytest.raises(SeedError):
        env.reset(seed=-1)
    assert (env.batch.S == state).all() and env.rng.bit_generator.state == rng_state


def test_close_drops_the_games() -> None:
    env = AllFivesSelfPlayEnv(2)
    env.reset(seed=0)
    env.close()
    with pytest.raises(NotResetError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    assert env.action_masks().any(axis=1).all()
