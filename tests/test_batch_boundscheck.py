"""The batch suite again with numba's bounds checks on (``NUMBA_BOUNDSCHECK=1``).

The compiled kernels index arrays without checks, so an index one past the end corrupts memory quietly
instead of failing. With ``NUMBA_BOUNDSCHECK=1`` numba compiles every index with a check that raises
``IndexError``; this test runs the batch test modules so compiled, in a separate process and with a
cache directory of their own: numba's cache key does not include the bounds-check setting, so sharing
the ordinary cache would load kernels compiled without checks (``test_batch_hostile`` proves the checks
are on by calling a kernel out of bounds directly). The cache lives in pytest's cache directory, so a
second run on the same checkout starts from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BATCH_SUITE = ("test_batch_engine.py", "test_batch_coverage.py", "test_batch_observe.py", "test_batch_agents.py",
               "test_batch_search.py",
               "test_batch_hostile.py", "test_vector_env.py", "test_vector_hostile.py", "test_selfplay_env.py",
               "test_observation_v2.py")
TIME_LIMIT = 1500  # seconds: a cold compile of every kernel with checks on a slow machine, and the tests


def test_the_batch_suite_passes_with_numba_bounds_checks(request: pytest.FixtureRequest) -> None:
    pytest_cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    cache = pytest_cache.mkdir("numba-boundscheck") if pytest_cache is not None else None
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    else:  # pragma: no cover - pytest run with -p no:cacheprovider: a fresh directory, compiled cold
        env["NUMBA_CACHE_DIR"] = str(request.getfixturevalue("tmp_path"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-rs",
                             *(str(HERE / name) for name in BATCH_SUITE)],
                            cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=TIME_LIMIT)
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"the bounds-checked batch suite failed:\n{tail}"
    assert "the boundscheck run" not in tail, "the bounds-check proof was skipped: NUMBA_BOUNDSCHECK did not reach it"
