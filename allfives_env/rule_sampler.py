"""Random valid rule sets, for differential tests and exactness benchmarks that must cover every option.

Two implementations of the rules (the Python core and the compiled batch engine) are only known to agree
where they have been compared; sampling every option of RULES.md §8 at random, with small targets and a
hand cap so that games stay short, is how the tests and ``benchmarks/batch_exactness.py`` compare them.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .core.errors import RulesError
from .core.rules import CHOICES, Rules

_SWITCHES = ("must_lead_it", "may_draw_when_able", "spinner_sides_first", "lead_scores", "allow_negative", "exact_target")


def random_rules(rng: np.random.Generator, max_pips: Sequence[int] = (6, 6, 6, 9, 12)) -> Rules:
    """A random valid :class:`Rules`: every choice and switch drawn at random, 2-4 players, the set from
    ``max_pips``, deal presets, reserves, draw caps, score units, first-score gates, targets of 30-150
    points and a cap of 3-50 hands (combinations the rules refuse are drawn again)."""
    while True:
        options: dict[str, Any] = {name: str(rng.choice(allowed)) for name, allowed in CHOICES.items()}
        options.update({name: bool(rng.integers(2)) for name in _SWITCHES})
        options["num_players"] = int(rng.integers(2, 5))
        options["max_pip"] = int(rng.choice(list(max_pips)))
        presets = [None, "five_always", "seven_five"]
        options["hand_size"] = presets[int(rng.integers(3))] if options["max_pip"] == 6 else None
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
