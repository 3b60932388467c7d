"""Evaluation runs that never hang and always say what went wrong: a worker that dies, an agent that never
returns (the move time limit), an agent's own or unpicklable exception, Ctrl-C and SIGTERM of the command.

Everything that could hang on a broken runner is bounded: command lines run in a subprocess with a
timeout, and the in-process tests first import what only the hardened runner has (so on the old code they
fail at once instead of waiting for a lost task). The misbehaving agents are in ``workers_agents``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import workers_agents  # noqa: F401  (registers the test-* agents, here and in forked workers)
from allfives_env.agents import AgentError
from allfives_env.core.errors import GameOverError
from allfives_env.evaluation import EvaluationError, agent_seeds, evaluate, set_seeds, tournament

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The longest a command line may take here; a hang on the old code shows as a failure after this.
TIMEOUT = 60
SEED = 3
#: A long match-up (it would take minutes), to be interrupted while it runs.
LONG = ["evaluate", "expert", "greedy", "--games", "20000", "--processes", "2", "--no-progress"]

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer") or sys.platform == "win32",
                                reason="POSIX signals and /proc")


def _command(argv: list[str], **popen: object) -> subprocess.Popen[str]:
    """``allfives ARGV`` in a new process that has the test agents registered."""
    code = "import sys, workers_agents; from allfives_env.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", code, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env, **popen)  # type: ignore[call-overload]


def _finish(proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> tuple[int, str, str]:
    """The exit status, stdout and stderr of ``proc``; a process that hangs is killed and fails the test."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in [proc.pid, *_children(proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        out, err = proc.communicate()
        pytest.fail(f"the command hung for {timeout} s; stderr: {err[-2000:]}")
    return proc.returncode, out, err


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _workers(proc: subprocess.Popen[str], count: int = 2, timeout: float = TIMEOUT) -> list[int]:
    """The pids of the ``count`` worker processes of ``proc``, once they all exist."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = _children(proc.pid)
        if len(kids) >= count:
            return kids
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"no {count} workers appeared (found {_children(proc.pid)})")


def _busy(pid: int, cpu_seconds: float = 0.5, timeout: float = TIMEOUT) -> None:
    """Wait until worker ``pid`` has spent ``cpu_seconds`` of CPU: it is then playing a set (a fixed sleep is
    not enough on a loaded machine, where a worker may still be starting when it is killed)."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= cpu_seconds:  # utime + stime
            return
        time.sleep(0.05)
    pytest.fail(f"worker {pid} did not start playing within {timeout} s")


def _gone(pids: list[int], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]
                   for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _seeds_of(set_index: int, game: int, seat: int) -> dict[str, int]:
    """The seeds :func:`evaluate` with ``SEED`` gives the agent in ``seat`` of game ``game`` of a set."""
    game_seed, deal_seed = set_seeds(SEED, set_index)
    return {"game": game_seed, "deal": deal_seed, "agent": agent_seeds(SEED, set_index, game, 2)[seat]}


# ------------------------------------------------------------------------------------------- a worker dies
def test_a_killed_worker_ends_the_command_at_once_naming_it() -> None:
    """``kill -9`` of a worker: the command used to wait forever for the lost sets."""
    proc = _command(LONG)
    victim = _workers(proc)[0]
    _busy(victim)
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    code, _, err = _finish(proc)
    assert code == 2 and time.monotonic() - start < 15, err
    assert f"worker process {victim} died (killed by SIGKILL) while playing duplicate set" in err, err
    assert "of 10000 duplicate sets" in err and "had finished" in err and "Traceback" not in err, err


def test_a_worker_that_exits_ends_the_command(tmp_path: Path) -> None:
    """An agent that ends its worker process (``os._exit``, as the out-of-memory killer would)."""
    when = _seeds_of(4, 0, 0)["agent"]
    code, _, err = _finish(_command(["evaluate", f"test-exit:at=3,when_seed={when}", "greedy", "--games", "40",
                                     "--processes", "2", "--no-progress", "--seed", str(SEED)]))
    assert code == 2, err
    assert "died (exit code 7) while playing duplicate set 4 of test-exit" in err and "Traceback" not in err, err


def test_worker_died_error_names_the_set_and_keeps_what_finished() -> None:
    from allfives_env.evaluation import WorkerDiedError  # first: the old runner has none and would hang below

    when = _seeds_of(5, 1, 1)["agent"]  # set 5, game 1 (seats swapped): the first agent is in seat 1
    with pytest.raises(WorkerDiedError) as info:
        evaluate([f"test-exit:at=2,when_seed={when}", "greedy"], games=40, seed=SEED, processes=2, progress=False)
    exc = info.value
    assert exc.exitcode == 7 and exc.pid is not None and exc.sets == [(0, 5)]
    assert f"worker process {exc.pid} died (exit code 7) while playing duplicate set 5" in str(exc)
    assert exc.total_sets == 20 and len(exc.finished) == 1
    records = exc.finished[0]
    finished_sets = sorted({r.set_index for r in records})
    assert 5 not in finished_sets and len(finished_sets) == exc.finished_sets
    assert len(records) == exc.finished_games == 2 * exc.finished_sets
    assert [r.set_index for r in records] == sorted(r.set_index for r in records)  # ordered by set
    assert f"{exc.finished_sets} of 20 duplicate sets ({exc.finished_games} of 40 games) had finished" in str(exc)
    assert multiprocessing.active_children() == []  # the pool is gone


def test_ctrl_c_inside_a_worker_interrupts_the_command() -> None:
    """A KeyboardInterrupt inside a worker used to kill it and lose its task: the command hung."""
    code, _, err = _finish(_command(["evaluate", "test-interrupt:at=3", "greedy", "--games", "40", "--processes",
                                     "2", "--no-progress"]))
    assert code == 130 and "interrupted" in err and "Traceback" not in err, err


# ------------------------------------------------------------------------------------- an agent's exception
@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("name, kind", [("test-raise", "RuntimeError: the agent broke"),
                                        ("test-unpicklable", "Unpicklable: cannot be pickled")])
def test_an_agents_exception_is_an_agent_error_naming_where(name: str, kind: str, processes: int) -> None:
    seeds = _seeds_of(3, 1, 1)  # set 3, game 1: the first agent plays seat 1
    spec = f"{name}:at=4,when_seed={seeds['agent']}"
    with pytest.raises(AgentError) as info:
        evaluate([spec, "greedy"], games=20, seed=SEED, processes=processes, progress=False)
    exc = info.value
    text = str(exc)
    assert type(exc) is AgentError, type(exc)
    assert f"agent '{spec}' in seat 1 raised {kind} at move " in text, text
    assert f"game seed {seeds['game']}, deal seed {seeds['deal']}, agent seed {seeds['agent']}" in text, text
    assert (exc.agent, exc.seat, exc.seeds) == (spec, 1, seeds)  # type: ignore[attr-defined]
    assert exc.move >= 7  # type: ignore[attr-defined]  # its 4th move, the other seat moving in between
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("processes", [1, 2])
def test_the_packages_own_errors_from_an_agent_pass_unchanged(processes: int) -> None:
    with pytest.raises(GameOverError, match="a typed error from the agent"):
        evaluate(["test-typed:at=2", "greedy"], games=8, processes=processes, progress=False)


def test_an_agents_exception_on_the_command_line_is_one_line() -> None:
    code, _, err = _finish(_command(["evaluate", "test-unpicklable:at=2", "greedy", "--games", "20", "--processes",
                                     "2", "--no-progress"]))
    assert code == 2 and "Traceback" not in err and "MaybeEncodingError" not in err, err
    assert "error: agent 'test-unpicklable:at=2' in seat 0 raised Unpicklable" in err, err


# ------------------------------------------------------------------------------------------ move time limit
@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("name", ["test-sleep", "test-swallow"])
def test_a_move_over_the_time_limit_ends_the_run(name: str, processes: int) -> None:
    from allfives_env.evaluation import MoveTimeLimitError  # first: the old code has none

    seeds = _seeds_of(2, 0, 0)
    spec = f"{name}:at=3,when_seed={seeds['agent']}"
    start = time.monotonic()
    with pytest.raises(MoveTimeLimitError) as info:
        evaluate([spec, "greedy"], games=12, seed=SEED, processes=processes, progress=False, move_time_limit=0.2)
    assert time.monotonic() - start < 10
    exc = info.value
    assert isinstance(exc, AgentError)
    assert (exc.agent, exc.seat, exc.seeds, exc.limit) == (spec, 0, seeds, 0.2)  # type: ignore[attr-defined]
    assert f"in seat 0 took longer than the move time limit of 0.2 s at move {exc.move} of the game" in str(exc)  # type: ignore[attr-defined]
    assert multiprocessing.active_children() == []


def test_the_time_limit_leaves_results_and_the_callers_alarm_alone() -> None:
    previous = signal.getsignal(signal.SIGALRM)
    free = evaluate(["greedy", "random"], games=20, seed=1, progress=False)
    timed = evaluate(["greedy", "random"], games=20, seed=1, progress=False, move_time_limit=30)
    pooled = tournament(["greedy", "random"], games_per_pair=20, seed=1, progress=False, processes=2, bootstrap=0,
                        move_time_limit=30)
    assert [r.gains for r in timed.records] == [r.gains for r in free.records] == [r.gains for r in pooled.matches[0].records]
    assert signal.getsignal(signal.SIGALRM) is previous and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    signal.setitimer(signal.ITIMER_REAL, 100.0)  # the caller's own alarm survives a timed run
    try:
        evaluate(["greedy", "random"], games=4, progress=False, move_time_limit=30)
        assert 90 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_a_time_limit_off_the_main_thread_plays_in_a_worker() -> None:
    from allfives_env.evaluation import MoveTimeLimitError

    caught: list[BaseException] = []

    def run() -> None:
        try:
            evaluate(["test-sleep:at=2", "greedy"], games=2, progress=False, move_time_limit=0.2)
        except BaseException as exc:  # noqa: BLE001  (handed to the test's thread)
            caught.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive() and len(caught) == 1 and isinstance(caught[0], MoveTimeLimitError), caught


def test_a_move_stuck_in_native_code_ends_its_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba code never lets the SIGALRM handler run: the CPU-time backstop ends the worker."""
    from allfives_env.evaluation import WorkerDiedError, runner

    monkeypatch.setattr(runner, "NATIVE_OVERRUN_GRACE", 0.2)  # the forked workers inherit it
    workers_agents.spin(1)  # compiled here, before the workers fork
    when = _seeds_of(1, 0, 0)["agent"]
    start = time.monotonic()
    with pytest.raises(WorkerDiedError) as info:
        evaluate([f"test-spin:at=2,when_seed={when}", "greedy"], games=8, seed=SEED, processes=2, progress=False,
                 move_time_limit=0.05)
    assert time.monotonic() - start < 30
    assert "killed by SIGVTALRM: a move kept it busy far past the move time limit of 0.05 s" in str(info.value)
    assert info.value.sets == [(0, 1)]


def test_the_move_time_limit_flag() -> None:
    code, _, err = _finish(_command(["evaluate", "test-sleep:at=3", "greedy", "--games", "4", "--no-progress",
                                     "--move-time-limit", "0.2"]))
    assert code == 2 and "Traceback" not in err, err
    assert "error: agent 'test-sleep:at=3' in seat 0 took longer than the move time limit of " \
           "0.2 s at move 5 of the game (game seed" in err, err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc", "1e9"])
def test_a_bad_move_time_limit_flag_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main

    with pytest.raises(SystemExit) as info:
        main(["evaluate", "greedy", "random", "--move-time-limit", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --move-time-limit:" in err and "give a number of seconds from 0.001 to 86400" in err, err


@pytest.mark.parametrize("value", [0, -0.5, float("nan"), float("inf"), True, "1", 10**400])
def test_a_bad_move_time_limit_is_refused(value: object) -> None:
    with pytest.raises(EvaluationError, match="move_time_limit=.* is not allowed"):
        evaluate(["greedy", "random"], games=2, progress=False, move_time_limit=value)  # type: ignore[arg-type]


# -------------------------------------------------------------------------- Ctrl-C and SIGTERM of the command
def test_sigterm_of_the_command_leaves_no_worker_traceback() -> None:
    proc = _command(LONG)
    workers = _workers(proc)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    code, _, err = _finish(proc)
    assert code == -signal.SIGTERM and "Traceback" not in err, err
    assert _gone(workers), "the workers outlived the command"


def test_ctrl_c_leaves_no_worker_traceback() -> None:
    proc = _command(LONG, start_new_session=True)
    workers = _workers(proc)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    code, _, err = _finish(proc)
    assert code == 130 and err.strip() == "allfives: interrupted", err
    assert _gone(workers)
