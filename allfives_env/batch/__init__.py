"""A compiled batch engine: ``n`` games of All Fives in arrays, advanced in lockstep (numba).

:class:`BatchGame` is the engine; the batch agents, the batched observation and the SB3 vector env
are built on it. The Python core stays the reference: replays of batch games verify against it.
"""

from .cache import prepare_cache

prepare_cache()  # before any kernel module is imported: the cache must be fresh and intact before numba reads it

from .engine import BatchGame  # noqa: E402

__all__ = ["BatchGame"]
