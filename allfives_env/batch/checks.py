"""The one gate between a caller's arrays and the compiled kernels.

numba does no bounds checks: a kernel handed a 1-row ``out`` for a 4096-game batch writes past the end of
that array into whatever memory follows, and a wrongly typed array either fails deep inside numba's
typing with an error that names none of our arguments, or (an F-ordered or strided view) silently
compiles a second version of the kernel for minutes. So every public batch call passes its arrays
through one of these checkers first, and the kernels only ever see arrays of the exact dtype, shape and
C order they were written for, writable where they write.

The checks cost a few attribute reads per *call*, never a pass over the games (the one exception, an
unsigned integer array, needs its maximum to rule out values that wrap to -1 in int64), so a batch
step is as fast with them as without.
"""

from __future__ import annotations

from typing import Any, Type

import numpy as np

from ..core.errors import AllFivesError, BatchError, short_repr

_INT64_MAX = np.iinfo(np.int64).max
#: The most games one batch (and a batch agent) holds: far beyond any machine's use, it keeps a typo
#: (1e9) from reaching the allocation; :func:`allfives_env.batch.engine.memory_needed` checks the rest.
MAX_GAMES = 1 << 22


def _describe(value: np.ndarray) -> str:
    """The properties of ``value`` that a kernel depends on, for an error message."""
    order = "C-contiguous" if value.flags.c_contiguous else "not C-contiguous"
    access = "writable" if value.flags.writeable else "read-only"
    return f"a {access}, {order} {value.dtype} array of shape {value.shape}"


def kernel_buffer(value: Any, name: str, shape: tuple[int, ...], dtype: Any, *,
                  owner: Any = None) -> np.ndarray:
    """``value`` itself, once it is an array a kernel may write into: a numpy array of exactly ``dtype``
    and ``shape``, C-contiguous and writable, and (given ``owner``, the batch's state) sharing no memory
    with the state the kernel reads. Anything else is a :class:`BatchError` that names the argument,
    what it got and what it needs; nothing has been written then."""
    if (type(value) is np.ndarray and value.dtype == dtype and value.shape == shape and value.flags.c_contiguous
            and value.flags.writeable):  # the usual case: no message to build
        if owner is not None and np.may_share_memory(value, owner):
            raise BatchError(f"{name} shares memory with the batch's own state: give a separate array")
        return value
    needed = f"{name} must be a writable, C-contiguous {np.dtype(dtype)} numpy array of shape {shape}"
    if type(value) is not np.ndarray:  # a subclass (a matrix, a masked array) is no plain buffer either
        raise BatchError(f"{needed}; got {short_repr(value) if np.isscalar(value) else type(value).__name__}")
    if (value.dtype != dtype or value.shape != shape or not value.flags.c_contiguous
            or not value.flags.writeable):
        raise BatchError(f"{needed}; got {_describe(value)}")
    return value


def integer_values(value: Any, name: str, shape: tuple[int, ...], *,
                   error: Type[AllFivesError] = BatchError) -> np.ndarray:
    """``value`` (any array-like of integers: numpy arrays of any integer dtype, lists) as a C-contiguous
    int64 array of ``shape``, the form the kernels read. Refuses bools and floats (``True`` would be seat
    1, ``1.5`` an action nobody meant), and unsigned values beyond int64, which would wrap to negative
    numbers and be read as "no move" or "the seat to act". Ranges are the caller's to check."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged lists, objects numpy cannot read
        raise error(f"{name} must be an integer array of shape {shape}; got {short_repr(value)} ({exc})") from None
    if arr.shape != shape:
        raise error(f"{name} must be an integer array of shape {shape}; got shape {arr.shape}")
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise error(f"{name} must be an integer array of shape {shape}; got an array of dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > _INT64_MAX:
        raise error(f"{name} holds {int(arr.max())}, beyond any allowed value (the largest is {_INT64_MAX})")
    return np.ascontiguousarray(arr, dtype=np.int64)


def flag(value: Any, name: str) -> bool:
    """``value`` as a bool when it is one (Python or numpy); a :class:`BatchError` otherwise, since
    ``bool()`` of an array raises numpy's own error and of a string is always True."""
    if not isinstance(value, (bool, np.bool_)):
        raise BatchError(f"{name}={short_repr(value)} is not allowed: give True or False")
    return bool(value)


class KernelBatch:
    """The base of :class:`~allfives_env.batch.engine.BatchGame`: what observers and batch agents accept.

    They hand the batch's state (``S``, ``rules_vector``) straight to their kernels, so they take only
    the engine's own batches. The class lives here, below the engine, so that the checkers can name it
    without an import cycle (the engine imports the observer, which imports the checkers)."""

    __slots__ = ()


def batch_game(value: Any, who: str) -> Any:
    """``value`` when it is a :class:`KernelBatch` (a ``BatchGame``), else a :class:`BatchError`."""
    if not isinstance(value, KernelBatch):
        raise BatchError(f"{who} needs a BatchGame; got {short_repr(value)}")
    return value
