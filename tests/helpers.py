"""Small helpers shared by several test modules."""

from __future__ import annotations

import numpy as np

from allfives_env.agents import PlayerView
from allfives_env.agents.search import sample_hidden
from allfives_env.core import Game
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
    """A random valid rule set over every option of RULES.md §8, the bigger sets and deal sizes too, with
    small targets and hand caps so that games stay short (invalid draws are retried)."""
    from allfives_env.core import Rules, RulesError
    from allfives_env.core.rules import _BOOL_OPTIONS, CHOICES

    while True:
        options = {name: str(rng.choice(allowed)) for name, allowed in CHOICES.items()}
        options.update({name: bool(rng.integers(2)) for name in _BOOL_OPTIONS})
        options["num_players"] = int(rng.integers(2, 5))
        options["max_pip"] = int(rng.choice(max_pips))
        options["hand_size"] = [None, "five_always", "seven_five"][int(rng.integers(3))] if options["max_pip"] == 6 else None
        options["score_unit"] = int(rng.choice([1, 1, 5]))
        options["max_draws_per_turn"] = [None, 1, 2][int(rng.integers(3))]
        options["boneyard_reserve"] = int(rng.choice([0, 0, 1, 2]))
        options["min_first_score"] = int(rng.choice([0, 0, 10]))
        options["target"] = int(rng.choice([30, 60, 100, 150])) // options["score_unit"]
        options["max_hands"] = [3, 20, 50][int(rng.integers(3))]
        if rng.random() < 0.25:
            options["partnership"] = False
        try:
            return Rules.from_options(options)
        except RulesError:
            continue
