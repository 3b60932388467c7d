"""Worker processes that end when the process that started them dies.

Why: a trainer or an evaluation killed with ``kill -9`` (or by the out-of-memory killer) cannot close its
workers, and they do not notice on their own. The vec env workers wait on a pipe whose other end is still open in their sibling
workers (they were forked from the same parent, which held every pipe), and pool workers hold their own
queue's write end, so neither ever reads end-of-file: each lived on with parent 1, holding its memory.

:func:`exit_with_parent`, called first thing in a worker, makes the worker go down with its parent in two
ways: on Linux the kernel sends it ``SIGKILL`` when the parent dies (``prctl(PR_SET_PDEATHSIG)``, through
ctypes), and everywhere a daemon thread checks every :data:`POLL_SECONDS` whether the parent is still its
parent (``os.getppid()``) and ends the process when it is not. The parent's death is checked once more after
the kernel hook is set, so a parent that died while the worker was starting is caught too.

``PR_SET_PDEATHSIG`` fires when the *thread* that started the worker ends, so the parent takes a
:func:`parent_token` (its pid, and whether it is in its main thread) before it starts workers, and the kernel
hook is set only for workers started from the main thread; the watcher thread covers the others.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional

__all__ = ["exit_with_parent", "parent_token", "GuardedEnvFn", "POLL_SECONDS"]

POLL_SECONDS = 0.5
#: (this process, the parent it watches) once a watcher runs: a second call in the same worker is a no-op,
#: and a process forked from a watched worker (its own pid differs) sets up its own.
_WATCHING: Optional[tuple[int, int]] = None
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _kernel_hook() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; whether that worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError, ValueError):
        return False


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (POSIX; elsewhere assumed alive: Windows has no signal 0)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


def _gone(parent: int, direct: bool) -> bool:
    """Whether the parent died: a direct child is handed to another process then (os.getppid changes); a
    worker of a fork server (not the parent's child) asks whether the parent's pid still exists."""
    return os.getppid() != parent if direct else not _alive(parent)


def _end_now() -> None:
    """End this process at once: no exit handlers, no traceback from a pipe whose other end is gone; there
    is no cleanup to run, since whatever the worker held was the dead parent's."""
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


def _watch(parent: int, direct: bool, poll: float) -> None:
    while True:
        time.sleep(poll)
        if _gone(parent, direct):
            _end_now()


def parent_token() -> tuple[int, bool]:
    """Taken in the parent before it starts workers, and handed to them: its pid, and whether it is starting
    them from its main thread (only then is the kernel hook safe: it would fire when another thread ended)."""
    return os.getpid(), threading.current_thread() is threading.main_thread()


def exit_with_parent(token: Optional[tuple[int, bool]] = None, poll: float = POLL_SECONDS) -> None:
    """Make this worker process end when its parent dies. ``token`` is the parent's :func:`parent_token`
    (default: the process that started this one through multiprocessing, without the kernel hook). A no-op
    in the parent itself or in a process multiprocessing did not start; safe to call more than once."""
    if token is None:
        started_by = mp.parent_process()
        if started_by is None or started_by.pid is None:
            return
        token = (started_by.pid, False)
    parent, kernel = token
    global _WATCHING
    if parent == os.getpid() or _WATCHING == (os.getpid(), parent):
        return
    direct = os.getppid() == parent
    if kernel and direct:
        _kernel_hook()
    if _gone(parent, direct):  # it died before the hook was set
        _end_now()
    threading.Thread(target=_watch, args=(parent, direct, poll), name="exit-with-parent", daemon=True).start()
    _WATCHING = (os.getpid(), parent)


class GuardedEnvFn:
    """An env factory that first ties the process calling it to the process that made the factory (for
    stable-baselines3's ``SubprocVecEnv``, whose worker function is not ours: it calls the factory first
    thing in the worker). In the process that made it, it only builds the env."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.token = parent_token()

    def __call__(self) -> Any:
        exit_with_parent(self.token)
        return self.fn()
