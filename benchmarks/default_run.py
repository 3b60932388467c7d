"""The README's headline: the default training run (``allfives train --config configs/default.yaml``) and its
final evaluation, written as JSON for the generated table (docs/gen_tables.py).

It runs the config exactly as the README's first command does (in a scratch run directory, which is deleted
afterwards unless ``--keep``), then writes the final evaluation's rows, the run's speed and wall time, and
the date, machine and the load average at the start, so the published table is what a run measured.

    python benchmarks/default_run.py --json benchmarks/results/default_run_evaluation.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = "configs/default.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, required=True, help="where to write the figures")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directory here")
    args = parser.parse_args()
    from allfives_training.config import load_config
    from allfives_training.train import train

    load = os.getloadavg()[0]
    scratch = Path(tempfile.mkdtemp(prefix="allfives-default-run-"))
    run_dir = args.keep if args.keep is not None else scratch / "default"
    try:
        summary = train(str(ROOT / CONFIG), run_dir=str(run_dir), progress=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    cfg = load_config(ROOT / CONFIG)
    import torch

    figures = {
        "run": CONFIG, "command": f"allfives train --config {CONFIG}", "date": date.today().isoformat(),
        "machine": (f"{platform.machine()} Linux, {os.cpu_count()} cores, Python {platform.python_version()}, "
                    f"torch {torch.__version__}"),
        "load": f"{load:.1f} (1-minute load average at the start)",
        "wall_minutes": round(summary["wall_seconds"] / 60, 1),
        "learning_minutes": round(summary["train_seconds"] / 60, 1),
        "env_steps_per_second": round(summary["steps_per_second"]),
        "steps": summary["steps"], "games": cfg.evaluation.final_games, "seed": cfg.evaluation.seed,
        "source": "benchmarks/default_run.py: the run's own final evaluation",
        "results": [{k: r[k] for k in ("baseline", "games", "win_rate", "win_rate_lo", "win_rate_hi",
                                       "points_per_hand", "points_per_hand_lo", "points_per_hand_hi")}
                    for r in summary["final"]],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures["results"], indent=1))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
