"""``python -m allfives_training.selfplay``: train the self-play recipe from a config, or resume a run.

    python -m allfives_training.selfplay --config configs/selfplay_2p.yaml             # a new run
    python -m allfives_training.selfplay --resume runs/selfplay_2p --updates 200       # 200 more updates

``--updates N`` stops after N updates, at the next checkpoint (a chunk's end), so a long run can be trained in
sessions of any length; resuming repeats exactly what an uninterrupted run would have done.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence

from allfives_env.core.errors import AllFivesError
from allfives_env.plain_text import plain_text
from allfives_training.run_plan import ConfigKind, plan_run
from allfives_training.runs import create_run_dir, write_run_config, write_summary
from allfives_training.selfplay.config import validate_selfplay_config

#: How the recipe reads its configs (``plan_run`` finds the run directory; the trainer its checkpoint).
SELFPLAY_RUNS = ConfigKind(validate_selfplay_config, lambda run_dir: None, "a self-play run directory",
                           " (the recipe's config ships as configs/selfplay_2p.yaml)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m allfives_training.selfplay", description=plain_text(__doc__ or ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/selfplay_2p.yaml", help="YAML config")
    parser.add_argument("--resume", nargs="?", const=True, default=None, metavar="RUN_DIR",
                        help="continue a run (the newest of the config's name, or RUN_DIR) from its newest checkpoint")
    parser.add_argument("--run-dir", default=None, help="the run directory (default <output.dir>/<name>[_k])")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key (dotted), e.g. --set ppo.learning_rate=1e-4")
    parser.add_argument("--updates", type=int, default=None, metavar="N",
                        help="stop after N updates, at the next checkpoint (resume later with --resume)")
    args = parser.parse_args(argv)
    if args.updates is not None and args.updates < 1:
        parser.error(f"--updates {args.updates}: give a number of updates >= 1")
    try:
        plan = plan_run(SELFPLAY_RUNS, args.config, args.run_dir, args.resume, args.overrides)
        create_run_dir(plan.run_dir)
        from allfives_training.selfplay.trainer import SelfPlayTrainer

        if not plan.resumed:  # first, so that a run stopped while it clones can be resumed
            write_run_config(plan.run_dir, plan.cfg)
        trainer = SelfPlayTrainer(plan.cfg, plan.run_dir)
        write_run_config(plan.run_dir, plan.cfg)  # a resume's --set, once its checkpoint has loaded
        summary = trainer.train(stop_after=args.updates)
    except AllFivesError as exc:
        print(f"selfplay: error: {exc}", file=sys.stderr)
        return 2
    write_summary(plan.run_dir, summary)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
