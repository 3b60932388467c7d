"""The batch kernels' decorator: numba's ``njit``, caching to disk only where :mod:`.cache` found it safe.

Every batch module defines its kernels with ``@njit(cache=True)`` from here rather than from numba, so
that a read-only install with no writable cache directory compiles them in memory instead of failing
at import (numba raises ``cannot cache function ...: no locator available`` for ``cache=True``).
"""

from __future__ import annotations

from typing import Any

from numba import njit as numba_njit

from .cache import prepare_cache


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with the same arguments, except that ``cache=True`` holds only when
    :func:`~.cache.prepare_cache` found a writable cache it has made fresh and intact."""
    if options.get("cache"):
        options["cache"] = prepare_cache()
    return numba_njit(*args, **options)
