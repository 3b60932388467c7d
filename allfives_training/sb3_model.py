"""The stable-baselines3 model of a run: built from its config, restored from and saved to checkpoints.

:class:`~allfives_training.train.Trainer` composes these with the envs, the evaluations and the schedule;
here is only what touches ``MaskablePPO`` itself: its policy class and network (``network``), its
hyper-parameters (``ppo``), its logger (``output.tensorboard``), and the checkpoint tensors of its policy
and optimizer (read and written without pickle, :mod:`allfives_training.checkpoint`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allfives_training.runs import (
    CHECKPOINT_FILE, CHECKPOINT_STATE, CHECKPOINTS, check_snapshots, not_resumed, resume_seed,
)
from allfives_training.sections import NetworkConfig
from allfives_training.threads import one_torch_thread

__all__ = ["build_model", "make_logger", "read_resume", "restore_model", "save_model", "diverged"]


def _policy_kwargs(net: NetworkConfig, rules: Any) -> dict:
    from allfives_training.export import torch_activation

    kwargs = {"net_arch": {"pi": list(net.hidden), "vf": list(net.hidden)},
              "activation_fn": torch_activation(net.activation)}
    if net.action_scorer is not None:
        from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder

        from allfives_training.scorer_policy import scorer_spec

        enc = ObservationEncoder(rules, action_features=True)
        kwargs["action_scorer"] = scorer_spec(enc.slices["features"].start, 4 * enc.T, len(ACTION_FEATURES),
                                              net.action_scorer, net.trunk_reads_features, net.score_gain)
    return kwargs


def _policy_class(net: NetworkConfig) -> Any:
    """``MlpPolicy`` (with the fast masked distribution of :mod:`allfives_training.masked_distribution`), or the
    policy with a shared placement scorer (``network.action_scorer``)."""
    if net.action_scorer is None:
        from allfives_training.masked_distribution import FastMaskablePolicy

        return FastMaskablePolicy
    from allfives_training.scorer_policy import ScoredMaskablePolicy

    return ScoredMaskablePolicy


def build_model(cfg: Any, rules: Any, vec_env: Any) -> Any:
    """A fresh ``MaskablePPO`` of the config (a :class:`~allfives_training.config.TrainConfig`) on ``vec_env``,
    on the CPU with one torch thread."""
    from sb3_contrib import MaskablePPO

    one_torch_thread()  # the trainer reports the inf/nan weights the skipped distribution checks would catch
    return MaskablePPO(_policy_class(cfg.network), vec_env, policy_kwargs=_policy_kwargs(cfg.network, rules),
                       seed=cfg.seed, device="cpu", verbose=0, **cfg.ppo.to_dict())


def make_logger(tensorboard: bool, run_dir: Path) -> Any:
    """SB3's logger: TensorBoard logs in ``<run>/tb``, or none."""
    from stable_baselines3.common.logger import Logger, configure

    if tensorboard:
        return configure(str(run_dir / "tb"), ["tensorboard"])
    return Logger(folder=None, output_formats=[])


def read_resume(league: Any, rules: Any, run_dir: Path, step: int, tensors_path: Path, state: dict) -> dict:
    """Everything a resume reads besides its state file, read and checked before any env, worker or model
    exists: the league snapshots the run will play, and the tensors (their SHA-256 against the state's).
    A damaged file is a CheckpointError naming it and the run's older checkpoints."""
    from allfives_training.checkpoint import CheckpointError, read_tensors

    json_path = tensors_path.with_suffix(".json")
    try:
        check_snapshots(league, rules, json_path)
        return read_tensors(tensors_path, state["model"]["sha256"], json_path)
    except CheckpointError as exc:
        raise not_resumed(exc, run_dir, step) from None


def restore_model(model: Any, tensors: dict, step: int, tensors_path: Path, state: dict, seed: int) -> None:
    """Copy a checkpoint's checked ``tensors`` (read before any env started) into the freshly built model: the
    policy's weights, the optimizer's state, SB3's counters, and generators reseeded from ``seed`` and the
    step (:func:`~allfives_training.runs.resume_seed`)."""
    from allfives_training.checkpoint import CheckpointError, check_module, optimizer_state_spec, restore_optimizer

    json_path = tensors_path.with_suffix(".json")
    saved = state["model"]
    stray = sorted(n for n in tensors if not n.startswith(("policy/", "optimizer/")))
    if stray:
        raise CheckpointError(f"{tensors_path}: unexpected tensors {stray[:5]}")
    policy = model.policy
    weights = check_module(policy.state_dict(), tensors, "policy/", tensors_path, "the policy the config builds")
    optimizer = policy.optimizer
    params = [p for group in optimizer.param_groups for p in group["params"]]
    # each PPO update (an epoch over one rollout) takes at most one optimizer step per sample of the rollout
    opt_state = restore_optimizer(optimizer.state_dict(), params, tensors, saved["optimizer"], "optimizer/",
                                  tensors_path, json_path, spec=optimizer_state_spec(optimizer),
                                  stepped=saved["n_updates"] > 0, max_step=saved["n_updates"] * max(step, 1))
    policy.load_state_dict(weights, strict=True)
    optimizer.load_state_dict(opt_state)
    model.num_timesteps = step
    model._n_updates = saved["n_updates"]
    model._episode_num = saved["episode_num"]
    model.set_random_seed(resume_seed(seed, step))


def save_model(model: Any, run_dir: Path, step: int, state: dict, keep: int) -> Path:
    """Checkpoint ``model`` at ``step`` in ``<run>/checkpoints``: its policy's and optimizer's tensors, and the
    run ``state`` with the model's counters; keeps the newest ``keep``. The tensors file's path."""
    from allfives_training.checkpoint import commit_checkpoint, module_tensors, split_optimizer

    policy = model.policy
    opt_tensors, opt_meta = split_optimizer(policy.optimizer.state_dict(), "optimizer/")
    tensors = {**module_tensors(policy.state_dict(), "policy/"), **opt_tensors}

    def with_model(name: str, digest: str) -> dict:
        return {**state, "model": {"tensors": name, "sha256": digest, "num_timesteps": int(step),
                                   "n_updates": int(model._n_updates), "episode_num": int(model._episode_num),
                                   "optimizer": opt_meta}}

    return commit_checkpoint(run_dir / CHECKPOINTS, f"step_{step:010d}", tensors, with_model, CHECKPOINT_STATE,
                             CHECKPOINT_FILE, keep)


def diverged(model: Any) -> bool:
    """Whether the policy holds inf/nan (PPO then fails inside torch's distribution checks)."""
    import torch

    return any(not bool(torch.isfinite(p).all()) for p in model.policy.parameters())

