"""Keeps numba's on-disk cache of the batch kernels true to their source.

numba caches each compiled function next to its module (``__pycache__/*.nbi``, ``*.nbc``) and checks
only that module's own file stamp before reusing it. A kernel that calls a kernel of another module
would therefore keep running the old code after that other module changed (an upgrade, a local edit).
This module stamps the cache with a hash of every source file of the package and wipes it when the
hash differs, so a change anywhere recompiles everything once, and an unchanged package starts from
the cache (a second process starts in well under two seconds).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_STAMP = "allfives_batch.stamp"
#: Modules outside the package whose constants the kernels compile in (the expert's weights and
#: priorities, the analysis' kinds and costs): a change there must recompile too.
_COMPILED_IN = ("expert_weights.py", "analysis.py")


def source_hash() -> str:
    """A hash of every Python source of the batch package and of :data:`_COMPILED_IN` (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.glob("*.py")) + [_PACKAGE.parent / name for name in _COMPILED_IN]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def clear_stale_cache() -> bool:
    """Delete the package's numba cache files when they were compiled from other sources; True if
    anything was deleted. A read-only install is left alone (numba then caches elsewhere)."""
    cache = _PACKAGE / "__pycache__"
    stamp = cache / _STAMP
    current = source_hash()
    try:
        if stamp.is_file() and stamp.read_text() == current:
            return False
        removed = False
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                path.unlink(missing_ok=True)
                removed = True
        cache.mkdir(exist_ok=True)
        stamp.write_text(current)
        return removed
    except OSError:
        return False
