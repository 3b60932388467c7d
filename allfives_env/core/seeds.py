"""Seeds: what the library accepts as a seed, checked in one place for the engine, the envs and the CLI."""

from __future__ import annotations

from typing import Any, Literal, Optional, overload

from .errors import SeedError, short_repr
from .values import is_integer

#: Seeds run from 0 to this (2**63 - 1): every such seed is a distinct numpy stream, and it fits the
#: signed 64-bit integer that any JSON reader of our replays and results maps it to.
MAX_SEED = 2**63 - 1


@overload
def check_seed(seed: Any, what: str = ..., *, allow_none: Literal[False]) -> int: ...
@overload
def check_seed(seed: Any, what: str = ..., allow_none: bool = ...) -> Optional[int]: ...


def check_seed(seed: Any, what: str = "seed", allow_none: bool = True) -> Optional[int]:
    """``seed`` as a Python int (numpy integers accepted), or None where allowed.

    Raises :class:`SeedError` for anything else: negative numbers (numpy would refuse them deep inside
    its seeding), floats (``1.5`` would be a different seed than the user meant), strings and bools.
    With ``allow_none=False`` the result is an int, and its type says so (the overloads above).
    """
    if seed is None and allow_none:
        return None
    if is_integer(seed) and 0 <= seed <= MAX_SEED:
        return int(seed)
    allowed = f"an integer from 0 to 2**63-1 ({MAX_SEED})" + (" or None" if allow_none else "")
    raise SeedError(f"{what}={short_repr(seed)} is not allowed: give {allowed}")
