"""What counts as a number in user input: one definition for every check in the library.

Python and numpy integers are both integers; a bool never is (``True`` would silently become seat 1 or
a score of 1), and a float never is an integer (``6.9`` would silently become 6).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


def is_integer(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A Python or numpy real number (integers included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_finite_number(value: Any) -> bool:
    """A real number that is finite (not NaN or infinite, and an integer small enough for a float)."""
    if not is_real(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond any float
        return False
