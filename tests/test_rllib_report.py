"""``allfives train-rllib`` ends a run as ``allfives train`` does, through the same functions
(allfives_training/report.py): here the table of several modules, without Ray. The tiny run as a command that checks
the printed table, ``evaluation.md/.csv/.json`` and a stderr without Ray's ``max_restarts`` error line is
``tests/test_rllib_cluster.py``'s (one run serves both, to keep the suite short)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rllib_requirements import require_rllib  # noqa: E402

require_rllib()

from allfives_training.rllib.config import load_rllib_config  # noqa: E402
from allfives_training.rllib.train import RLlibRun  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
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
