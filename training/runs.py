"""Run directories of ``allfives train``: naming, finding and creating them, and reading their newest checkpoint.

A run directory is ``<output.dir>/<name>`` (``<name>_2``, ``_3``, ... when that exists). Its checkpoints
are ``checkpoints/step_<N>.safetensors`` + ``step_<N>.json`` (:mod:`training.checkpoint`); the JSON, the run
state, is checked field by field here before a resume uses it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from allfives_env.core.errors import short_repr
from training.checkpoint import (
    CheckpointError, atomic_write, check_header, check_history, need, newest_state, old_format_error,
)
from training.schema import ConfigError

__all__ = ["CHECKPOINTS", "DEMONSTRATIONS", "TRAINER", "CHECKPOINT_STATE", "CHECKPOINT_FILE", "atomic_write", "run_dirs", "new_run_dir",
           "check_new_run_dir", "latest_checkpoint", "check_state", "resume_seed"]

CHECKPOINTS = "checkpoints"
DEMONSTRATIONS = "demonstrations"  # the imitation warm start's recorded parts (training/imitation.py)
TRAINER = "sb3-maskableppo"  # the "trainer" of a checkpoint's state (RLlib's say "rllib-ppo")
CHECKPOINT_STATE = re.compile(r"^step_(\d+)\.json$")
CHECKPOINT_FILE = re.compile(r"^step_(\d+)\.(?:json|safetensors)(?:\.tmp)?$")
_OLD_CKPT = re.compile(r"^step_(\d+)\.zip$")  # stable-baselines3's pickle-based format: refused
RESEED_MULTIPLIER = 1_000_003  # a prime: (seed, step) pairs map to distinct seeds
SEED_MODULUS = 2**31


def resume_seed(seed: int, step: int) -> int:
    """The seed of a resumed session: the envs start new games, so the generators are reseeded from the
    config's seed and the step (or iteration), not restored, and not the first session's samples again."""
    return (seed * RESEED_MULTIPLIER + step) % SEED_MODULUS


def run_dirs(out_dir: Path, name: str) -> list[Path]:
    """Existing run directories of ``name`` (``name``, ``name_2``, ...), oldest first."""
    found = []
    if (out_dir / name).is_dir():
        found.append((1, out_dir / name))
    if out_dir.is_dir():
        for p in out_dir.iterdir():
            m = re.fullmatch(re.escape(name) + r"_(\d+)", p.name)
            if m and p.is_dir():
                found.append((int(m.group(1)), p))
    return [p for _, p in sorted(found)]


def new_run_dir(out_dir: Path, name: str) -> Path:
    """``out_dir/name``, or the next free ``name_<k>``."""
    candidate = out_dir / name
    k = 1
    while candidate.exists() and (not candidate.is_dir() or any(candidate.iterdir())):
        k += 1
        candidate = out_dir / f"{name}_{k}"
    return candidate


def check_new_run_dir(target: Path) -> Path:
    """``target`` if a new run may start there (missing or empty); a ConfigError if not."""
    if target.exists() and not target.is_dir():
        raise ConfigError(f"the run directory {target} is a file; choose another --run-dir")
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"the run directory {target} exists and is not empty: continue it with --resume "
                          f"{target}, or choose another --run-dir")
    return target


def latest_checkpoint(run_dir: Path) -> Optional[tuple[int, Path, dict]]:
    """(step, tensors file, checked state) of the newest checkpoint of a run, or None when it has none.

    Raises :class:`~training.checkpoint.CheckpointError` for a checkpoint of the old pickle-based format
    (``step_<N>.zip``) and for a state file that is damaged or not of this format; it never unpickles."""
    folder = Path(run_dir) / CHECKPOINTS
    if not folder.is_dir():
        return None
    names = sorted(p.name for p in folder.iterdir())
    old = [n for n in names if _OLD_CKPT.match(n)]
    if old:
        raise old_format_error(folder / old[-1])
    newest = newest_state(folder, CHECKPOINT_STATE)
    if newest is None:
        return None
    step, path, state = newest
    return step, path.with_suffix(".safetensors"), check_state(state, path, step, Path(run_dir))


def _check_league(state: dict, where: str, run_dir: Path) -> None:
    """The league of a run state: snapshots under ``league/`` of the run, each file present."""
    league = need(state, "league", "dict", where)
    snapshots = need(league, "snapshots", "list", where, "league.")
    for i, snap in enumerate(snapshots):
        if not isinstance(snap, dict):
            raise CheckpointError(f"{where}: league.snapshots[{i}] must be an object, got {short_repr(snap)}")
        need(snap, "step", "int>=0", where, f"league.snapshots[{i}].")
        rel = need(snap, "path", "str", where, f"league.snapshots[{i}].")
        parts = Path(rel).parts
        if os.path.isabs(rel) or ".." in parts or "," in rel or not parts or parts[0] != "league":
            raise CheckpointError(f"{where}: league.snapshots[{i}].path must be a file under league/ of the run, "
                                  f"got {short_repr(rel)}")
        if not (run_dir / rel).is_file():
            raise CheckpointError(f"{where}: league snapshot {run_dir / rel} is missing; the league cannot be "
                                  "restored without it")


def _check_model(state: dict, where: str, path: Path, step: int) -> None:
    """The ``model`` entry of a run state: the tensors file, its checksum and SB3's counters."""
    model = need(state, "model", "dict", where)
    if need(model, "tensors", "str", where, "model.") != path.with_suffix(".safetensors").name:
        raise CheckpointError(f"{where}: model.tensors must be {path.with_suffix('.safetensors').name!r}, got "
                              f"{short_repr(model['tensors'])}")
    need(model, "sha256", "sha256", where, "model.")
    if need(model, "num_timesteps", "int>=0", where, "model.") != step:
        raise CheckpointError(f"{where}: model.num_timesteps {model['num_timesteps']} is not the step {step}")
    for key in ("n_updates", "episode_num"):
        need(model, key, "int>=0", where, "model.")
    need(model, "optimizer", "dict", where, "model.")


def check_state(state: dict, path: Path, step: int, run_dir: Path) -> dict:
    """A run state read from ``path`` (``step_<step>.json``), every field checked (CheckpointError if not)."""
    where = str(path)
    if "format" not in state and "history" in state:  # written by the pickle-based version next to a .zip
        raise old_format_error(path)
    check_header(state, where, TRAINER)
    if need(state, "step", "int>=0", where) != step:
        raise CheckpointError(f"{where}: says step {state['step']}, but its name says {step}")
    state["history"] = check_history(state.get("history"), where)
    _check_league(state, where, run_dir)
    need(state, "last_eval_step", "int>=0|null", where)
    for key in ("last_snapshot_step", "last_ckpt_step"):
        need(state, key, "int>=0", where)
    for key in ("train_seconds", "eval_seconds"):
        need(state, key, "seconds", where)
    need(state, "finished", "bool", where)
    need(state, "name", "str", where)
    _check_model(state, where, path, step)
    return state
