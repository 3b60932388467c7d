"""Training's worker processes end when the process that started them is killed (``kill -9``, the
out-of-memory killer): stable-baselines3's ``SubprocVecEnv`` workers and the imitation warm start's recording
pool, which would otherwise live on with parent 1.

Each test starts the parent in a subprocess (its own session, so nothing reaches pytest), waits for its
worker children, kills the parent with SIGKILL and gives the workers a few seconds to be gone. Linux only:
the children are found through /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc")

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 90  # the parent imports torch and starts its workers
GONE_SECONDS = 5  # the workers must be gone this soon after the parent is killed


def _stat(pid: int) -> tuple[str, int]:
    """(state, parent pid) of a process, from /proc/<pid>/stat ("X", 0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return "X", 0
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _stat(int(entry))[1] == pid:
            out.append(int(entry))
    return sorted(out)


def _alive(pid: int) -> bool:
    return _stat(pid)[0] not in ("X", "Z")  # a zombie has exited; only its exit status is left


def _kill_parent_and_check_workers(cmd: list[str], workers: int, ready: str = "") -> None:
    """Start ``cmd``, wait for ``workers`` children (and ``ready`` on its stdout, if given), SIGKILL it; the
    children must be gone within GONE_SECONDS."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    found: list[int] = []
    try:
        if ready:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if ready not in line:
                os.kill(proc.pid, signal.SIGKILL)
                pytest.fail(f"the parent did not start: {line!r} {proc.stderr.read()[-3000:]}")  # type: ignore
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and proc.poll() is None:
            found = [c for c in _children(proc.pid) if _alive(c)]
            if len(found) >= workers:
                break
            time.sleep(0.1)
        if proc.poll() is not None or len(found) < workers:
            os.kill(proc.pid, signal.SIGKILL)
            pytest.fail(f"the parent did not start {workers} workers: {found} {proc.stderr.read()[-3000:]}")  # type: ignore
        time.sleep(0.5)  # past their start
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + GONE_SECONDS
        while time.monotonic() < deadline and any(_alive(c) for c in found):
            time.sleep(0.1)
        left = [c for c in found if _alive(c)]
        assert not left, f"workers {left} outlived their parent by {GONE_SECONDS} s (parent now {_stat(left[0])[1]})"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        for c in found:  # only the processes this test started
            if _alive(c):
                os.kill(c, signal.SIGKILL)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _script(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


def test_stable_baselines3_subproc_workers_die_with_their_parent() -> None:
    body = """
        import functools, sys, time
        from allfives_env.core.rules import Rules
        from allfives_training.league import make_env
        from allfives_training.vec_env import make_vec_env
        fn = functools.partial(make_env, {"rules": Rules()}, ["random"], [1.0])
        env = make_vec_env([fn, fn], "subproc")
        env.reset()
        print("ready", flush=True)
        time.sleep(600)
    """
    _kill_parent_and_check_workers(_script(body), workers=2, ready="ready")


def test_the_imitation_recording_pool_dies_with_its_parent() -> None:
    body = """
        from allfives_env.core.rules import Rules
        from allfives_training.imitation import collect_demonstrations
        print("ready", flush=True)
        collect_demonstrations({"rules": Rules()}, {"random": 1.0}, "greedy", 10**6, 0, 0.99, processes=2)
    """
    _kill_parent_and_check_workers(_script(body), workers=2, ready="ready")


def test_exit_with_parent_does_nothing_in_the_parent_itself() -> None:
    from allfives_env.parent_watch import exit_with_parent, parent_token

    exit_with_parent(parent_token())  # the parent's own token: no hook, no watcher, no exit
    exit_with_parent()  # not started by multiprocessing
    assert not any(t.name == "exit-with-parent" for t in threading.enumerate())


def test_without_the_kernel_hook_the_watcher_thread_ends_an_orphaned_worker() -> None:
    """The portable half (no prctl, as on macOS or for workers started from another thread): a daemon
    thread sees the parent change and ends the worker."""
    body = """
        import multiprocessing as mp, os, time
        from allfives_env.parent_watch import exit_with_parent

        def worker(token):
            exit_with_parent((token, False))  # the watcher only
            time.sleep(600)

        if __name__ == "__main__":
            ctx = mp.get_context("fork")
            procs = [ctx.Process(target=worker, args=(os.getpid(),)) for _ in range(2)]
            for p in procs:
                p.start()
            print("ready", flush=True)
            time.sleep(600)
    """
    _kill_parent_and_check_workers(_script(body), workers=2, ready="ready")
