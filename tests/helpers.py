"""Small helpers shared by several test modules."""

from __future__ import annotations

import numpy as np

from allfives_env.agents import PlayerView
from allfives_env.agents.search import sample_hidden
from allfives_env.core import Game, Rules
from allfives_env.single_seat import AllFivesSingleSeatEnv


def learner_observations(env: AllFivesSingleSeatEnv, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Real observations and masks of ``n`` learner decisions in ``env``, the learner playing at random."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    observations, masks = [], []
    while len(observations) < n:
        mask = env.action_masks()
        observations.append(obs)
        masks.append(mask)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(observations), np.stack(masks)


def with_other_hidden_tiles(game: Game, seat: int, seed: int) -> Game:
    """A copy of ``game`` in which everything ``seat`` cannot see (other hands, the boneyard) is redrawn."""
    other = game.clone()
    hands, boneyard = sample_hidden(PlayerView(game, seat), np.random.default_rng(seed))
    other.replace_hidden(seat, hands, boneyard)
    return other



def wide_random_rules(rng: np.random.Generator, max_pips: tuple[int, ...] = (6, 6, 6, 9, 12)) -> "Rules":
    """A random valid rule set over every option (:func:`allfives_env.rule_sampler.random_rules`)."""
    from allfives_env.rule_sampler import random_rules

    return random_rules(rng, max_pips)


def positions(rules: Rules, seed: int, count: int, choice_only: bool = True) -> list[Game]:
    """Positions reached by random play (any hand of the game), each a decision point."""
    rng = np.random.default_rng(seed)
    out: list[Game] = []
    game = Game(rules, seed)
    while len(out) < count:
        if game.over:
            game = Game(rules, int(rng.integers(1 << 30)))
        if rng.random() < 0.3 and (len(game.legal) > 1 or not choice_only):
            out.append(game.clone())
        legal = game.legal
        game.step(legal[int(rng.integers(len(legal)))])
    return out


def same_state(a: np.ndarray, b: np.ndarray) -> bool:
    """Two arrays of game records hold the same state: every field equal. Not their raw bytes: the record
    dtype is aligned, and the padding between fields is no part of the state (once, in a full test run, a
    padding byte changed while every field stayed the same)."""
    return a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[f], b[f]) for f in a.dtype.names)
