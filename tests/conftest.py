"""Suite-wide guards: a test module must leave the process as it found it.

Importing some libraries changes process-wide state: torchrl, for one, sets multiprocessing's start method to
"spawn", and the evaluation runner's tests register agents that only forked workers see. A module that
changes the start method fails here, naming itself, instead of breaking an unrelated test later in the run.
"""

from __future__ import annotations

import multiprocessing
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


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collecting imports every test module: none of them may change the start method at import either."""
    method = multiprocessing.get_start_method(allow_none=True)
    if method not in (None, multiprocessing.get_all_start_methods()[0]):  # the platform's default is no change
        multiprocessing.set_start_method(None, force=True)
        raise pytest.UsageError(f"a test module changed multiprocessing's start method to {method!r} when it was "
                                "imported (an import of torchrl does): import such libraries inside the tests")
