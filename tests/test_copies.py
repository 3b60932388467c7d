"""Copies of games and environments continue exactly like the original.

Search and multiprocessing copy positions with ``pickle``, ``copy.deepcopy`` and :meth:`Game.fork`; a
copy that plays differently from its original silently corrupts every result built on it. Each test
takes random mid-game points over many random rule sets, copies there, and drives the original and the
copy with the same actions, comparing everything observable at every step.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, Callable

import numpy as np
import pytest

from allfives_env import allfives_v0
from allfives_env.core import Game, Rules, RulesError
from allfives_env.core.options import CHOICES, SWITCHES
from allfives_env.single_seat import AllFivesSingleSeatEnv


def random_rules(rng: np.random.Generator) -> Rules:
    """A random valid rule set: every choice and switch of docs/rules.md §8 drawn at random (invalid draws retried)."""
    while True:
        options: dict[str, Any] = {name: str(rng.choice(allowed)) for name, allowed in CHOICES.items()}
        options.update({name: bool(rng.integers(2)) for name in SWITCHES})
        options["num_players"] = int(rng.integers(2, 5))
        options["score_unit"] = int(rng.choice([1, 1, 5]))
        options["max_draws_per_turn"] = [None, 1, 2][int(rng.integers(3))]
        options["boneyard_reserve"] = int(rng.choice([0, 0, 2]))
        options["min_first_score"] = int(rng.choice([0, 0, 10]))
        options["target"] = int(rng.choice([50, 100, 150])) // options["score_unit"]
        if rng.random() < 0.25:
            options["partnership"] = False
        try:
            return Rules.from_options(options)
        except RulesError:
            continue


def game_trace(game: Game) -> tuple:
    """Everything observable about a game now."""
    return (game.current, game.legal_actions(), list(game.scores), game.over, game.winner, game.truncated,
            game.hand_number, [game.hand(s) for s in range(game.num_players)], game.boneyard(), game.count())


def play_both(a: Game, b: Game, rng: np.random.Generator, new_events_from: tuple[int, int]) -> None:
    """Drive ``a`` and ``b`` with the same actions to the end, checking they agree at every step."""
    start_a, start_b = new_events_from
    while True:
        assert game_trace(a) == game_trace(b)
        assert a.events[start_a:] == b.events[start_b:]
        if a.over:
            assert b.over
            return
        action = a.legal[int(rng.integers(len(a.legal)))]
        a.step(action)
        b.step(action)


COPIERS: dict[str, Callable[[Game], Game]] = {
    "pickle": lambda g: pickle.loads(pickle.dumps(g)),
    "deepcopy": copy.deepcopy,
    "clone": Game.clone,
}


@pytest.mark.parametrize("how", list(COPIERS))
def test_game_copies_continue_like_the_original(how: str) -> None:
    rng = np.random.default_rng(2024)
    for trial in range(60):
        rules = random_rules(rng)
        game = Game(rules, seed=int(rng.integers(2**32)))
        for _ in range(int(rng.integers(0, 60))):  # a random point of the game, often after a spinner
            if game.over:
                break
            game.step(game.legal[int(rng.integers(len(game.legal)))])
        other = COPIERS[how](game)
        assert other.events == game.events
        play_both(game, other, np.random.default_rng(trial), (len(game.events), len(other.events)))


def test_forks_play_the_hand_like_the_original() -> None:
    # a fork stops at the end of the hand and logs only what happens after it was made
    rng = np.random.default_rng(7)
    for trial in range(80):
        rules = random_rules(rng)
        game = Game(rules, seed=int(rng.integers(2**32)))
        for _ in range(int(rng.integers(0, 25))):
            if game.over:
                break
            game.step(game.legal[int(rng.integers(len(game.legal)))])
        if game.over:
            continue
        fork = pickle.loads(pickle.dumps(game.fork()))  # a pickled fork too: search workers send them
        hand, start = game.hand_number, len(game.events)
        moves = np.random.default_rng(trial)
        while not fork.over:
            assert fork.legal_actions() == game.legal_actions() and fork.scores == game.scores
            action = fork.legal[int(moves.integers(len(fork.legal)))]
            fork.step(action)
            game.step(action)
        # the fork's log is the original's from the fork point to the end of that hand
        end = next((i for i, e in enumerate(game.events) if i >= start and getattr(e, "kind", "") == "settlement"
                    and e.hand == hand), None)
        assert end is not None
        assert fork.events[: end + 1 - start] == game.events[start: end + 1]


def play_env_both(a: Any, b: Any, rng: np.random.Generator) -> None:
    """Step two AEC envs with the same actions to the end, comparing what each agent sees."""
    for agent in a.agent_iter():
        assert agent == b.agent_selection
        obs_a, rew_a, term_a, trunc_a, info_a = a.last()
        obs_b, rew_b, term_b, trunc_b, info_b = b.last()
        assert np.array_equal(obs_a["observation"], obs_b["observation"])
        assert np.array_equal(obs_a["action_mask"], obs_b["action_mask"])
        assert (rew_a, term_a, trunc_a, info_a) == (rew_b, term_b, trunc_b, info_b)
        action = None if term_a or trunc_a else int(rng.choice(np.flatnonzero(obs_a["action_mask"])))
        a.step(action)
        b.step(action)
    assert not b.agents
    assert a.unwrapped.replay() == b.unwrapped.replay()


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("make", [allfives_v0.raw_env, allfives_v0.env], ids=["raw_env", "env"])
def test_env_copies_carry_the_game(make: Callable[..., Any], how: str) -> None:
    copier = (lambda e: pickle.loads(pickle.dumps(e))) if how == "pickle" else copy.deepcopy
    rng = np.random.default_rng(11)
    for trial in range(12):
        env = make(rules=random_rules(rng), reward=["win", "points"][trial % 2])
        env.reset(seed=trial)
        for _ in range(int(rng.integers(0, 40))):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not env.agents or env.terminations[env.agent_selection]:
            continue
        other = copier(env)
        assert other.unwrapped.game.events == env.unwrapped.game.events
        play_env_both(env, other, np.random.default_rng(trial))
        # both generators moved on alike: the next game deals the same
        env.reset()
        other.reset()
        assert env.unwrapped.game.hands == other.unwrapped.game.hands


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_single_seat_copies_continue_like_the_original(how: str) -> None:
    copier = (lambda e: pickle.loads(pickle.dumps(e))) if how == "pickle" else copy.deepcopy
    rng = np.random.default_rng(5)
    for trial in range(10):
        rules = random_rules(rng)
        env = AllFivesSingleSeatEnv(opponents=["greedy", "expert", "random"], rules=rules, reward="points")
        obs, _ = env.reset(seed=trial)
        for _ in range(int(rng.integers(0, 20))):
            obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            if term or trunc:
                obs, _ = env.reset()
        other = copier(env)
        moves = np.random.default_rng(trial)
        for _ in range(200):
            mask = env.action_masks()
            assert np.array_equal(mask, other.action_masks())
            action = int(moves.choice(np.flatnonzero(mask)))
            out_a, out_b = env.step(action), other.step(action)
            assert np.array_equal(out_a[0], out_b[0]) and out_a[1:4] == out_b[1:4]
            info_a, info_b = out_a[4], out_b[4]
            assert np.array_equal(info_a.pop("action_mask"), info_b.pop("action_mask")) and info_a == info_b
            if out_a[2] or out_a[3]:
                assert np.array_equal(env.reset()[0], other.reset()[0])
