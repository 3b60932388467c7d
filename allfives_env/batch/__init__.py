"""A compiled batch engine: ``n`` games of All Fives in arrays, advanced in lockstep (numba).

:class:`BatchGame` is the engine; the batch agents, the batched observation and the SB3 vector env
are built on it. The Python core stays the reference: replays of batch games verify against it.
"""

from .cache import clear_stale_cache

clear_stale_cache()  # before any kernel module is imported: numba may load from the cache at import

from .engine import BatchGame  # noqa: E402

__all__ = ["BatchGame"]
