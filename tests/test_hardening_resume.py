"""Hardening of ``allfives train --resume`` against damaged run directories: every file a resume loads is read
by one checked reader (regular files only, bytes counted), the run state's counters and the optimizer state
are checked against the checkpoint and the run's config, the league snapshots are loaded before anything
starts, and a resume never starts over silently. Each case here was a raw traceback, a hang, a read that
never ended, or a damaged state accepted without a word.

The run to damage is the tiny one of ``tests/test_hardening_training.py`` (its fixtures and helpers are
imported, not copied); the hang cases run in a thread with a time limit, the read of ``/dev/zero`` in a
subprocess with a memory limit.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
safetensors_torch = pytest.importorskip("safetensors.torch")

from allfives_env.core.errors import AllFivesError  # noqa: E402
from tests.test_hardening_training import (  # noqa: E402,F401 (trained, run: fixtures)
    STEM, TINY, _edit_state, _resume, _rewrite_tensors, _snapshot, _write_state, run, trained,
)
from allfives_training.checkpoint import CheckpointError  # noqa: E402
from allfives_training.train import latest_checkpoint, main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HANG_SECONDS = 20  # a refused file is refused in well under a second; the old code waited forever


def _state_path(run: Path) -> Path:
    return run / "checkpoints" / f"{STEM}.json"


def _refused(run: Path, *needles: str) -> str:
    """Resume ``run``; it must be a CheckpointError holding every needle, with the run directory unchanged."""
    before = _snapshot(run)
    with pytest.raises(CheckpointError) as info:
        _resume(run)
    text = str(info.value)
    for needle in needles:
        assert needle in text, (needle, text)
    assert isinstance(info.value, AllFivesError)
    assert _snapshot(run) == before, "a refused resume changes nothing"
    return text


def _within(seconds: float, call: Callable[[], Any], unblock: Callable[[], None]) -> Any:
    """``call()`` in a thread; its exception (or result) if it ends within ``seconds``. A call still running
    then is a hang: ``unblock`` releases it and the test fails."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unblock()
        thread.join(60)
        pytest.fail(f"hung: still running after {seconds} s")
    return box.get("error", box.get("result"))


def _fifo_in_place_of(path: Path) -> Callable[[], None]:
    """Replace ``path`` with a named pipe; returns what releases a reader blocked on it (a writer of two
    bytes that no reader accepts, so the released call ends at once)."""
    path.unlink()
    os.mkfifo(path)

    def unblock() -> None:  # a writer with bytes that are no config, JSON or tensors: the reader then fails
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"\xff[")
            os.close(fd)
        except OSError:
            pass
    return unblock


# ---------------------------------------------------------------------------------------------- files
@pytest.mark.parametrize("which", ["json", "safetensors"])
def test_a_named_pipe_in_place_of_a_checkpoint_file_is_refused_not_waited_on(run: Path, which: str) -> None:
    path = run / "checkpoints" / f"{STEM}.{which}"
    unblock = _fifo_in_place_of(path)
    error = _within(HANG_SECONDS, lambda: _resume(run), unblock)
    assert isinstance(error, CheckpointError), error
    assert f"{STEM}.{which}" in str(error) and "named pipe (FIFO)" in str(error), str(error)


def _limit_memory() -> None:
    gib = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (6 * gib, 6 * gib))


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_link_to_dev_zero_as_the_tensors_file_is_refused_before_any_read(run: Path) -> None:
    """``st_size`` of /dev/zero is 0, and reading it never ends: the old reader read until memory ran out
    (here a 6 GiB address-space limit turns that into a quick MemoryError)."""
    path = run / "checkpoints" / f"{STEM}.safetensors"
    path.unlink()
    path.symlink_to("/dev/zero")
    proc = subprocess.run([sys.executable, "-m", "allfives_training.train", "--resume", str(run), "--set", "total_steps=1024",
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=_limit_memory)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "/dev/zero" in proc.stderr and "character device" in proc.stderr


def test_checkpoints_being_a_file_is_an_error_not_a_restart(run: Path) -> None:
    folder = run / "checkpoints"
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    _refused(run, "checkpoints is not a directory")


def test_a_run_without_any_checkpoint_still_starts_from_step_0_and_says_so(run: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    """What a run killed before its first checkpoint looks like (the warm start's case): not refused."""
    from allfives_training.train import train

    shutil.rmtree(run / "checkpoints")
    train(TINY, resume=str(run), overrides=["total_steps=256", "output.tensorboard=false", "evaluation.every=0",
                                            "evaluation.final_games=2", "evaluation.replays=0",
                                            "output.plot=false"], progress=False)
    assert "no checkpoint yet; starting this run from step 0" in capsys.readouterr().out
    assert latest_checkpoint(run)[0] == 256


# ---------------------------------------------------------------------------------------------- the run state
def _huge_integer(run: Path) -> None:
    path = _state_path(run)
    text = re.sub(r'"episode_num": \d+', '"episode_num": ' + "9" * 5000, path.read_text())
    path.write_text(text)


def test_a_5000_digit_integer_is_a_checkpoint_error(run: Path, capsys: pytest.CaptureFixture) -> None:
    _huge_integer(run)
    _refused(run, f"{STEM}.json", "an integer of 5,000 digits")
    assert main(["--resume", str(run), "--set", "total_steps=1024", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "5,000 digits" in err and "Traceback" not in err


def _future_snapshot(state: dict) -> None:
    state["league"]["snapshots"][0]["step"] = 10**15


STATE_DAMAGE = {
    "last_ckpt_step far in the future": (lambda s: s.update(last_ckpt_step=10**18), "last_ckpt_step"),
    "last_ckpt_step in the past": (lambda s: s.update(last_ckpt_step=0), "last_ckpt_step"),
    "last_snapshot_step in the future": (lambda s: s.update(last_snapshot_step=10**15), "last_snapshot_step"),
    "last_eval_step in the future": (lambda s: s.update(last_eval_step=10**15), "last_eval_step"),
    "a league snapshot from the future": (_future_snapshot, "league.snapshots[0].step"),
    "absurd n_updates": (lambda s: s["model"].update(n_updates=10**17), "model.n_updates"),
    "unknown model field": (lambda s: s["model"].update(evil=1), "unknown fields"),
}


@pytest.mark.parametrize("damage", list(STATE_DAMAGE))
def test_counters_that_do_not_fit_the_checkpoint_are_refused(run: Path, damage: str) -> None:
    change, needle = STATE_DAMAGE[damage]
    _edit_state(change)(run)
    _refused(run, f"{STEM}.json", needle)


# ---------------------------------------------------------------------------------------------- the optimizer
def _group(change: Callable[[dict], None]) -> Callable[[Path], None]:
    return _edit_state(lambda s: change(s["model"]["optimizer"]["param_groups"][0]))


def _set_step(value: float) -> Callable[[Path], None]:
    return lambda run: _rewrite_tensors(run, lambda t: t.update({"optimizer/0/step": torch.tensor(value)}))


def _drop_optimizer(t: dict) -> None:
    for name in [n for n in t if n.startswith("optimizer/")]:
        del t[name]


def _negative_moments(t: dict) -> None:
    t["optimizer/1/exp_avg_sq"] = -t["optimizer/1/exp_avg_sq"] - 1.0


OPTIMIZER_DAMAGE = {
    "amsgrad switched on": (_group(lambda g: g.update(amsgrad=True)), "json", "'amsgrad'"),
    "maximize switched on": (_group(lambda g: g.update(maximize=True)), "json", "'maximize'"),
    "maximize as a number": (_group(lambda g: g.update(maximize=1)), "json", "'maximize'"),
    "eps tampered": (_group(lambda g: g.update(eps=1.0)), "json", "'eps'"),
    "betas tampered": (_group(lambda g: g.update(betas=[0.0, 2.0])), "json", "'betas'"),
    "weight decay added": (_group(lambda g: g.update(weight_decay=0.5)), "json", "'weight_decay'"),
    "an unknown hyper-parameter": (_group(lambda g: g.update(momentum=0.9)), "json", "momentum"),
    "learning rate not a number": (_group(lambda g: g.update(lr=-1)), "json", "'lr'"),
    "a huge integer hyper-parameter": (_group(lambda g: g.update(weight_decay=10**19)), "json", "'weight_decay'"),
    "step -5": (_set_step(-5.0), "safetensors", "step count"),
    "step 2.5": (_set_step(2.5), "safetensors", "step count"),
    "step 1e18": (_set_step(1e18), "safetensors", "step count"),
    "step of another dtype": (lambda run: _rewrite_tensors(run, lambda t: t.update(
        {"optimizer/0/step": torch.tensor(3, dtype=torch.int64)})), "safetensors", "optimizer/0/step"),
    "every optimizer tensor removed": (lambda run: _rewrite_tensors(run, _drop_optimizer), "safetensors",
                                       "incomplete"),
    "negative squared averages": (lambda run: _rewrite_tensors(run, _negative_moments), "safetensors", "negative"),
    "a moment of rank 0": (lambda run: _rewrite_tensors(run, lambda t: t.update(
        {"optimizer/0/exp_avg": torch.tensor(0.0)})), "safetensors", "optimizer/0/exp_avg"),
    "an extra optimizer tensor": (lambda run: _rewrite_tensors(run, lambda t: t.update(
        {"optimizer/0/max_exp_avg_sq": torch.zeros_like(t["optimizer/0/exp_avg"])})), "safetensors",
        "max_exp_avg_sq"),
}


@pytest.mark.parametrize("damage", list(OPTIMIZER_DAMAGE))
def test_an_optimizer_state_unlike_the_configs_is_refused(run: Path, damage: str) -> None:
    apply, kind, needle = OPTIMIZER_DAMAGE[damage]
    apply(run)
    _refused(run, f"{STEM}.{kind}", needle)


def test_the_learning_rate_may_change_on_resume_and_the_configs_is_loaded(run: Path) -> None:
    """The divergence message advises ``--resume --set ppo.learning_rate=...``: that still works."""
    from allfives_training.config import load_config
    from allfives_training.train import Trainer

    step, tensors_path, state = latest_checkpoint(run)
    cfg = load_config(run / "config.yaml", ["ppo.learning_rate=1e-5"])
    trainer = Trainer(cfg, run, (step, tensors_path, state), progress=False)
    trainer.build()
    try:
        group = trainer.model.policy.optimizer.param_groups[0]
        assert group["lr"] == 1e-5 and group["maximize"] is False and group["amsgrad"] is False
        assert all(float(s["step"]) >= 1 for s in trainer.model.policy.optimizer.state.values())
    finally:
        trainer.vec_env.close()


# ---------------------------------------------------------------------------------------------- the league
def test_a_damaged_league_snapshot_is_refused_before_any_worker_starts(run: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_training.train as sb3_train

    state = json.loads(_state_path(run).read_text())
    snapshot = run / state["league"]["snapshots"][-1]["path"]
    snapshot.write_bytes(snapshot.read_bytes()[:100])

    def no_envs(self: Any) -> Any:
        raise AssertionError("the envs were built before the league was checked")

    monkeypatch.setattr(sb3_train.Trainer, "_make_vec_env", no_envs)
    _refused(run, f"{STEM}.json", snapshot.name)


# ---------------------------------------------------------------------------------------------- what to do
def test_a_damaged_newest_checkpoint_names_the_older_one_and_following_the_advice_resumes(run: Path) -> None:
    older = latest_checkpoint(run)  # the tiny run keeps two checkpoints: 256 and 512 steps
    numbers = sorted(int(p.stem.split("_")[1]) for p in (run / "checkpoints").glob("step_*.json"))
    assert older[0] == 512 and len(numbers) == 2
    _edit_state(lambda s: s.update(last_ckpt_step=10**18))(run)
    text = _refused(run, "not resumed and nothing was changed", f"step_{numbers[0]:010d}.json",
                    f"move {STEM}.json and {STEM}.safetensors out of")
    assert "learning_rate" not in text
    aside = run.parent / "aside"
    aside.mkdir()
    for p in (run / "checkpoints").glob(f"{STEM}.*"):
        p.rename(aside / p.name)
    assert latest_checkpoint(run)[0] == numbers[0]
    summary = _resume(run, "total_steps=512", "evaluation.final_games=2", "evaluation.replays=0", "output.plot=false",
                      "output.tensorboard=false")
    assert summary["steps"] == 512 and summary["trained_steps"] == 512 - numbers[0]


@pytest.mark.parametrize("how", ["--resume", "--config"])
def test_a_named_pipe_as_the_config_is_refused_not_waited_on(run: Path, how: str) -> None:
    from allfives_training.config import ConfigError
    from allfives_training.train import train

    config = run / "config.yaml"
    unblock = _fifo_in_place_of(config)
    if how == "--resume":
        call = lambda: _resume(run)  # noqa: E731
    else:
        call = lambda: train(config, run_dir=str(run.parent / "new"), progress=False)  # noqa: E731
    error = _within(HANG_SECONDS, call, unblock)
    assert isinstance(error, ConfigError) and "config.yaml is a named pipe (FIFO)" in str(error), error


def test_train_rllib_also_refuses_checkpoints_being_a_file(tmp_path: Path) -> None:
    from allfives_training.rllib.train import latest_rllib_checkpoint

    (tmp_path / "checkpoints").write_text("not a folder")
    with pytest.raises(CheckpointError, match="checkpoints is not a directory"):
        latest_rllib_checkpoint(tmp_path)
    assert latest_rllib_checkpoint(tmp_path / "elsewhere") is None  # none yet: a run that starts from 0
