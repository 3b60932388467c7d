"""Suite-wide guards: a test module must leave the process as it found it.

Importing some libraries changes process-wide state: torchrl, for one, sets multiprocessing's start method to
"spawn", and the evaluation runner's tests register agents that only forked workers see. A module that
changes the start method fails here, naming itself, instead of breaking an unrelated test later in the run.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _start_method_unchanged(request: pytest.FixtureRequest) -> Iterator[None]:
    before = multiprocessing.get_start_method()  # fixes the platform's default if nothing has yet, as any use does
    yield
    after = multiprocessing.get_start_method()
    if after != before:
        multiprocessing.set_start_method(before, force=True)
        pytest.fail(f"{request.module.__name__} changed multiprocessing's start method from {before!r} to {after!r}")


#: What the whole suite costs on the reference machine (2 cores, CPU only), said before the first test; the
#: README gives the same figure. Compiling the numba kernels on a fresh install is part of it.
SUITE_MINUTES = "11-20"
_STARTED = pytest.StashKey[float]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Say at once that collecting has begun: importing every test module (torch, Ray, the examples'
    libraries) takes a while before the first test, and a silent terminal reads as a hang."""
    session.config.stash[_STARTED] = time.monotonic()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("allfives tests: collecting (importing torch, Ray and the examples' libraries)...")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collecting imports every test module: none of them may change the start method at import either.
    Then say how many tests run and about how long the whole suite takes, before the first one."""
    method = multiprocessing.get_start_method(allow_none=True)
    if method not in (None, multiprocessing.get_all_start_methods()[0]):  # the platform's default is no change
        multiprocessing.set_start_method(None, force=True)
        raise pytest.UsageError(f"a test module changed multiprocessing's start method to {method!r} when it was "
                                "imported (an import of torchrl does): import such libraries inside the tests")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and len(session.items) > 100:  # the whole suite, not one file being worked on
        took = time.monotonic() - session.config.stash.get(_STARTED, time.monotonic())
        reporter.write_line(f"allfives tests: {len(session.items)} tests collected in {took:.0f} s; the whole suite "
                            f"takes about {SUITE_MINUTES} minutes on 2 CPU cores (more on a busy machine); "
                            "[done/total] shows at the end of each line")
