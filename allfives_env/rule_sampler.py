"""Random valid rule sets, for differential tests and exactness benchmarks that must cover every option.

Two implementations of the rules (the Python core and the compiled batch engine) are only known to agree
where they have been compared; sampling every option of docs/rules.md §8 at random, with small targets and a
hand cap so that games stay short, is how the tests and ``benchmarks/batch_exactness.py`` compare them.
What is drawn, and in which order, is the ``sample`` column of the option table
(:data:`allfives_env.core.options.OPTIONS`): a new option is drawn the day it is added.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .core.errors import RulesError
from .core.options import OPTION, OPTIONS, Draw
from .core.rules import Rules

#: The options in the order they are drawn (by ``Draw.order``, table order within one): the order fixes
#: which rules a seed draws, which tests and benchmarks rely on.
_DRAW_ORDER = tuple(sorted(OPTIONS, key=lambda o: o.sample.order))


def _draw(rng: np.random.Generator, draw: Draw, values: Sequence[Any], drawn: dict[str, Any]) -> tuple[bool, Any]:
    """(drawn?, value) for one option under ``draw``, given the options drawn before it."""
    if draw.when is not None and drawn.get(draw.when[0]) != draw.when[1]:
        return False, None
    if draw.chance is not None:
        return (True, values[0]) if rng.random() < draw.chance else (False, None)
    value = values[int(rng.integers(len(values)))]
    if draw.divide_by is not None:
        value //= drawn[draw.divide_by]
    return True, value


def random_rules(rng: np.random.Generator, max_pips: Sequence[int] = OPTION["max_pip"].sample.values) -> Rules:
    """A random valid :class:`Rules`: every option of the table drawn from its ``sample`` values (every
    choice and switch, 2-4 players, deal presets, reserves, draw caps, score units, first-score gates,
    targets of 30-150 points and a cap of 3-50 hands), the set from ``max_pips``; combinations the rules
    refuse are drawn again."""
    while True:
        options: dict[str, Any] = {}
        for option in _DRAW_ORDER:
            values = tuple(max_pips) if option.name == "max_pip" else option.sample.values
            drawn, value = _draw(rng, option.sample, values, options)
            if drawn:
                options[option.name] = value
        try:
            return Rules.from_options(options)
        except RulesError:
            continue
