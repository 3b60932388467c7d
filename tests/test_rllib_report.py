"""``allfives train-rllib`` ends a run as ``allfives train`` does: the final evaluation table printed and
written to ``evaluation.md`` (+ ``.csv``, ``.json``) by the same functions (training/report.py), and Ray's
start-up no longer logs an ``E ... core_worker.cc ... max_restarts`` line that reads like a failure. One tiny
run as a command (skipped when the [rllib] extra is not installed), and the table of several modules
without Ray."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rllib_requirements import require_rllib  # noqa: E402

require_rllib()

from allfives_training.report import format_table  # noqa: E402
from allfives_training.rllib.config import load_rllib_config  # noqa: E402
from allfives_training.rllib.train import RLlibRun  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the smallest run of tests/test_rllib_vector.py, as a command: one env runner, so Ray creates an actor
TINY = ["iterations=1", "ppo.train_batch_size=256", "ppo.minibatch_size=128", "ppo.num_epochs=1",
        "env_runners.num_env_runners=1", "env_runners.num_envs_per_env_runner=16", "network.hidden=[16]",
        "network.action_scorer=[4]", "evaluation.final_games=4", "evaluation.baselines=[greedy, random]",
        "evaluation.processes=1", "evaluation.replays=0", "opponents={greedy: 1}"]


def test_a_tiny_run_prints_and_writes_the_final_table_and_ray_logs_no_error(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = [sys.executable, "-m", "allfives_env.cli", "train-rllib", "--run-dir", str(run)]
    for override in TINY:
        args += ["--set", override]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    report = (run / "evaluation.md").read_text()
    assert report.startswith(f"Evaluation of {run / 'policy_default_policy.npz'} after ")
    assert report.strip() in done.stdout, done.stdout  # printed as written, table and all
    summary = json.loads((run / "summary.json").read_text())
    table = json.loads((run / "evaluation.json").read_text())
    assert [r["baseline"] for r in table["results"]] == ["greedy", "random"]
    assert table["results"] == summary["final"] and format_table(summary["final"]) in report
    assert table["games"] == 4 and table["steps"] == summary["env_steps"] and table["iterations"] == 1
    with open(run / "evaluation.csv", newline="") as f:
        assert [r["baseline"] for r in csv.DictReader(f)] == ["greedy", "random"]
    assert f"allfives evaluate ppo:path={run / 'policy_default_policy.npz'} greedy" in done.stdout
    for noise in ("max_restarts", "core_worker.cc", "Traceback"):
        assert noise not in done.stderr, done.stderr[-3000:]


def test_several_modules_share_one_table_each_row_naming_its_module(tmp_path: Path) -> None:
    """``policies: per_team``: the report's table has no module column, so each baseline says whose row it is."""
    cfg = load_rllib_config(ROOT / "configs" / "rllib_selfplay.yaml", ["policies=per_team", "evaluation.final_games=8"])
    out = io.StringIO()
    run = RLlibRun(cfg, tmp_path, out)
    run.iteration = 3

    def row(module: str, baseline: str, win_rate: float) -> dict:
        return {"step": 3, "baseline": baseline, "games": 8, "win_rate": win_rate, "win_rate_lo": 0.1,
                "win_rate_hi": 0.9, "points_per_hand": 1.5, "points_per_hand_lo": -1.0, "points_per_hand_hi": 4.0,
                "final": True, "module": module}

    rows = [row("team_0", "random", 0.75), row("team_1", "random", 0.25)]
    run.history = list(rows)
    summary = run._finish(rows, 1234, None, tmp_path / "checkpoints" / "iter_000003.safetensors")
    report = (tmp_path / "evaluation.md").read_text()
    assert "| random [team_0] | 8 | 0.750 |" in report and "| random [team_1] | 8 | 0.250 |" in report
    assert str(tmp_path / "policy_team_0.npz") in report and str(tmp_path / "policy_team_1.npz") in report
    assert report.strip() in out.getvalue() and summary["final"] == rows
    with open(tmp_path / "eval_history.csv", newline="") as f:
        assert [r["baseline"] for r in csv.DictReader(f)] == ["random [team_0]", "random [team_1]"]
    assert json.loads((tmp_path / "summary.json").read_text())["iterations"] == 3
