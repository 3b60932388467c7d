"""allfives_training/run_plan.py: both trainers turn their arguments into a run the same way, and a refused command
writes nothing. Checked on the plans alone (no model, no Ray), for the stable-baselines3 and RLlib kinds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("yaml")

from allfives_training.config import TRAIN_RUNS  # noqa: E402
from allfives_training.rllib.config import validate_rllib_config  # noqa: E402
from allfives_training.run_plan import ConfigKind, plan_run  # noqa: E402
from allfives_training.runs import latest_checkpoint  # noqa: E402
from allfives_training.schema import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The RLlib kind as train-rllib builds it, without importing its trainer (and Ray): the checkpoint reader
#: only matters for runs that have checkpoints, which these tests do not make.
RLLIB_RUNS = ConfigKind(validate_rllib_config, latest_checkpoint, "an RLlib run directory")
KINDS = {"sb3": (TRAIN_RUNS, "tiny.yaml"), "rllib": (RLLIB_RUNS, "rllib_selfplay.yaml")}


def _config(kind: str, out: Path) -> tuple[ConfigKind, str, list[str]]:
    runs, name = KINDS[kind]
    return runs, str(ROOT / "configs" / name), [f"output.dir={out}", "name=run"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_new_run_takes_the_next_free_directory_and_creates_nothing(tmp_path: Path, kind: str) -> None:
    runs, config, sets = _config(kind, tmp_path)
    first = plan_run(runs, config, overrides=sets)
    assert first.run_dir == tmp_path / "run" and not first.resumed and first.checkpoint is None
    assert not first.run_dir.exists()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("name: run\n")
    assert plan_run(runs, config, overrides=sets).run_dir == tmp_path / "run_2"
    with pytest.raises(ConfigError, match="exists and is not empty"):
        plan_run(runs, config, run_dir=str(tmp_path / "run"), overrides=sets)
    assert plan_run(runs, config, run_dir=str(tmp_path / "fresh"), overrides=sets).run_dir == tmp_path / "fresh"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_resume_reads_the_runs_own_config_and_finds_the_newest_run(tmp_path: Path, kind: str) -> None:
    runs, config, sets = _config(kind, tmp_path)
    cfg = plan_run(runs, config, overrides=sets).cfg
    import yaml

    for name, age in (("run", 100), ("run_2", 0)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.yaml").write_text(yaml.safe_dump({**cfg.to_dict(), "seed": 7}))
        os.utime(folder, (time.time() - age, time.time() - age))
    plan = plan_run(runs, config, resume=True, overrides=sets)
    assert plan.run_dir == tmp_path / "run_2" and plan.resumed and plan.checkpoint is None
    assert plan.cfg.seed == 7  # the run's own config, not the one given
    assert plan_run(runs, None, resume=str(tmp_path / "run"), overrides=["seed=9"]).cfg.seed == 9
    with pytest.raises(ConfigError, match=f"is not {runs.run_directory}"):
        plan_run(runs, None, resume=str(tmp_path))
    with pytest.raises(ConfigError, match="no run of 'other'"):
        plan_run(runs, config, resume=True, overrides=[f"output.dir={tmp_path}", "name=other"])
