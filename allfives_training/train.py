"""Train an All Fives policy with sb3-contrib's ``MaskablePPO`` on the single-seat env.

``allfives train --config configs/default.yaml`` (or ``python -m allfives_training.train --config ...``) runs a
config (:class:`allfives_training.config.TrainConfig`: every key, its default and what it does) in a run
directory ``<output.dir>/<name>`` (``<name>_2``, ``_3``, ... when that exists; or ``--run-dir``)::

    config.yaml          the resolved config
    checkpoints/         step_<N>.safetensors (the policy's weights and the optimizer's tensors) +
                         step_<N>.json (the run's state: evaluation history, league, counters, optimizer
                         hyper-parameters, the tensors file's SHA-256); the newest ``checkpoint.keep``.
                         No pickle anywhere (allfives_training/checkpoint.py): resuming rebuilds the model from
                         config.yaml and copies the checked tensors in. Old step_<N>.zip checkpoints (SB3's
                         pickle-based format) are refused, never loaded.
    league/              snapshot_<N>.npz, frozen snapshots the learner plays (``league.enabled``)
    evals/               policy_<N>.npz, the policy each evaluation played
    tb/                  TensorBoard logs (``tensorboard --logdir runs``)
    eval_history.csv     every evaluation: step, baseline, win rate and points per hand with 95% CIs
    policy.npz           the final policy (numpy; ``make_agent("ppo", path=...)``)
    evaluation.md/.csv/.json  the final evaluation table;  learning_curve.png  win rate vs steps

Evaluations use the duplicate-deal harness (:func:`allfives_env.evaluation.evaluate`) with the same
seed every time, the exported numpy policy against each baseline. ``--resume`` continues the newest
checkpoint of a run (by default the newest run of the config's name) with its step count, evaluation
history, league and optimizer state (the RNGs are reseeded from ``seed`` and the step, and the envs start
fresh games); a killed run loses at most ``checkpoint.every`` steps. Ctrl-C saves a checkpoint. A damaged,
tampered or foreign checkpoint is a ``CheckpointError`` (a ``ConfigError``) naming the file and the older
checkpoints the run could be resumed from instead (move the damaged one away to use them): a resume never
falls back to an older checkpoint or starts over on its own. Everything a resume loads (the state, the
tensors, the league snapshots it will play) is read and checked before any env or worker starts.

The run is a :class:`allfives_training.trainer.Trainer`, which composes the jobs of a run (building the
model, learning, evaluating, checkpointing) from their own modules. Every process uses one torch thread
(:func:`allfives_training.threads.one_torch_thread` says why).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, Sequence, TextIO

from allfives_env.plain_text import plain_text
from allfives_training.config import TRAIN_RUNS
from allfives_training.run_plan import RunPlan, plan_run
from allfives_training.runs import latest_checkpoint
from allfives_training.schema import ConfigError
from allfives_training.trainer import Trainer

__all__ = ["Trainer", "train", "add_train_parser", "run_train", "install_hint", "importable", "main",
           "latest_checkpoint"]


# ---------------------------------------------------------------------------------------------- entry points
def train(config: Any, run_dir: Optional[str] = None, resume: Any = None, overrides: Sequence[str] = (),
          progress: Optional[bool] = None, out: Optional[TextIO] = None) -> dict:
    """Run a training config (a path, a mapping validated like a file, or a :class:`TrainConfig`) and return
    its summary.

    ``resume``: None (a new run), True (the newest run of the config's name, or ``run_dir``), or a run
    directory. ``overrides``: ``--set`` items such as ``"total_steps=50000"``. The arguments become a run in
    :func:`~allfives_training.run_plan.plan_run`, as ``allfives train-rllib``'s do.
    """
    return run_planned(plan_run(TRAIN_RUNS, config, run_dir, resume, overrides), progress, out)


def run_planned(plan: RunPlan, progress: Optional[bool] = None, out: Optional[TextIO] = None) -> dict:
    """Start or continue the run of ``plan``; its summary."""
    if plan.resumed and plan.checkpoint is None:
        print(f"{plan.run_dir}: no checkpoint yet; starting this run from step 0", file=out or sys.stdout)
    return Trainer(plan.cfg, plan.run_dir, plan.checkpoint, progress=progress, out=out).run()


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to an argparse subparsers object (the ``allfives`` CLI)."""
    p = subparsers.add_parser(
        "train", help="train a policy with MaskablePPO from a YAML config",
        description="Train an All Fives policy with sb3-contrib's MaskablePPO on the single-seat env, evaluating "
                    "it against baselines on duplicate deals as it goes. Needs the [train] extra.",
    )
    _add_train_arguments(p)
    return p


def _add_train_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default="configs/default.yaml", help="YAML config (default configs/default.yaml)")
    p.add_argument("--resume", nargs="?", const=True, default=None, metavar="RUN_DIR",
                   help="continue from the newest checkpoint of RUN_DIR (default: the newest run of the config's name)")
    p.add_argument("--run-dir", default=None, help="the run directory (default <output.dir>/<name>[_k])")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set total_steps=50000 --set ppo.learning_rate=1e-4")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--print-config", action="store_true", help="print the resolved config and exit")


def run_train(args: argparse.Namespace) -> int:
    """Run the ``train`` subcommand; returns the exit status. ``--print-config`` prints the config the run
    would use (a resumed run's own, with ``--set`` applied) and starts nothing."""
    needed = ("yaml",) if args.print_config else ("torch", "stable_baselines3", "sb3_contrib", "yaml", "safetensors")
    missing = [m for m in needed if not importable(m)]
    if missing:
        print(f"allfives train needs {', '.join(missing)}. {install_hint('train')}", file=sys.stderr)
        return 2
    plan = plan_run(TRAIN_RUNS, args.config, args.run_dir, args.resume, args.overrides)
    if args.print_config:
        import yaml

        print(yaml.safe_dump(plan.cfg.to_dict(), sort_keys=False), end="")
        return 0
    summary = run_planned(plan, progress=False if args.no_progress else None)
    return 130 if summary.get("interrupted") else 0


def install_hint(extra: str) -> str:
    """How to install an extra: CPU torch first, or pip resolves torch to the multi-GB CUDA build."""
    return (f"Install torch first (the CPU build: pip install torch --index-url https://download.pytorch.org/whl/cpu"
            f"; on a GPU machine the default pip install torch), then: pip install -e '.[{extra}]'")


def importable(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m allfives_training.train``."""
    parser = argparse.ArgumentParser(prog="python -m allfives_training.train", description=plain_text(__doc__ or ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_train_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_train(args)
    except (ConfigError, ValueError) as exc:
        print(f"train: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
