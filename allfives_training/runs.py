"""Run directories of ``allfives train``: naming, finding and creating them, and reading their newest checkpoint.

A run directory is ``<output.dir>/<name>`` (``<name>_2``, ``_3``, ... when that exists). Its checkpoints
are ``checkpoints/step_<N>.safetensors`` + ``step_<N>.json`` (:mod:`allfives_training.checkpoint`); the JSON, the run
state, is checked field by field here before a resume uses it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Optional

from allfives_env.core.errors import short_repr
from allfives_training.checkpoint import (
    CheckpointError, atomic_write, check_header, check_history, need, newest_state, old_format_error,
)
from allfives_training.schema import MAX_EPOCHS, ConfigError, check_agent_specs

__all__ = ["CHECKPOINTS", "DEMONSTRATIONS", "TRAINER", "CHECKPOINT_STATE", "CHECKPOINT_FILE", "atomic_write", "run_dirs", "new_run_dir",
           "check_new_run_dir", "latest_checkpoint", "check_state", "resume_seed", "state_numbers", "not_resumed", "checkpoint_folder",
           "check_snapshots", "create_run_dir", "write_run_config", "write_summary"]

CHECKPOINTS = "checkpoints"
DEMONSTRATIONS = "demonstrations"  # the imitation warm start's recorded parts (allfives_training/imitation.py)
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


def run_directory(named: Any, run_dir: Optional[str], resume: Any) -> Path:
    """The directory of a run. A new run (``resume`` None or False): ``run_dir`` if it is missing or empty,
    else ``<output.dir>/<name>`` of the config ``named``, or the next free ``<name>_<k>``. A resume: the
    directory ``resume``, else ``run_dir``, else the newest run of ``named``'s name."""
    if resume is None or resume is False:
        return check_new_run_dir(Path(run_dir)) if run_dir is not None else \
            new_run_dir(Path(named.output.dir), named.name)
    if resume is not True:
        return Path(resume)
    if run_dir is not None:
        return Path(run_dir)
    found = run_dirs(Path(named.output.dir), named.name)
    if not found:
        raise ConfigError(f"--resume: no run of {named.name!r} in {named.output.dir}/ to resume")
    return max(found, key=lambda p: p.stat().st_mtime)


def create_run_dir(run_dir: Path) -> None:
    """Create a run's directory (and its parents); a ConfigError, not an OSError traceback, when it cannot be."""
    try:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the run directory {run_dir}: {exc.strerror or exc}") from None


def write_run_config(run_dir: Path, cfg: Any) -> None:
    """The run's ``config.yaml``: the resolved config a resume rebuilds the run from. A resumed run writes it
    only once its checkpoint has loaded, so that a refused resume changes nothing."""
    import yaml

    atomic_write(Path(run_dir) / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))

def write_summary(run_dir: Path, summary: Any) -> None:
    """``summary.json``: what the run's last session did (steps, speed, the final rows), read by tools."""
    atomic_write(Path(run_dir) / "summary.json", json.dumps(summary, indent=1))


def latest_checkpoint(run_dir: Path) -> Optional[tuple[int, Path, dict]]:
    """(step, tensors file, checked state) of the newest checkpoint of a run, or None when it has none.

    Raises :class:`~allfives_training.checkpoint.CheckpointError` for a ``checkpoints`` that is not a directory, for
    a checkpoint of the old pickle-based format (``step_<N>.zip``), and for a newest state file that is
    damaged or not of this format (naming it, and any older checkpoint the run could resume from instead);
    it never unpickles, and it never skips a damaged newest checkpoint for an older one on its own."""
    folder = checkpoint_folder(run_dir)
    if folder is None:
        return None
    names = sorted(p.name for p in folder.iterdir())
    old = [n for n in names if _OLD_CKPT.match(n)]
    if old:
        raise old_format_error(folder / old[-1])
    try:
        newest = newest_state(folder, CHECKPOINT_STATE)
        if newest is None:
            return None
        step, path, state = newest
        return step, path.with_suffix(".safetensors"), check_state(state, path, step, Path(run_dir))
    except CheckpointError as exc:
        numbers = state_numbers(folder)
        raise not_resumed(exc, Path(run_dir), numbers[-1] if numbers else None) from None


def checkpoint_folder(run_dir: Path) -> Optional[Path]:
    """``run_dir/checkpoints``, or None when there is none yet; a CheckpointError when something else stands
    there (a file, a pipe, a dangling link): a resume must not read that as "no checkpoint" and start over."""
    folder = Path(run_dir) / CHECKPOINTS
    if not os.path.lexists(folder):
        return None
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a directory (a run keeps its checkpoints in the folder "
                              f"{CHECKPOINTS}/); the run cannot be resumed from it, and a new run would not "
                              "be able to checkpoint there: move it away")
    return folder


def state_numbers(folder: Path) -> list[int]:
    """The steps of the checkpoints whose state file is in ``folder``, oldest first."""
    try:
        return sorted(int(m.group(1)) for p in Path(folder).iterdir() if (m := CHECKPOINT_STATE.match(p.name)))
    except OSError:
        return []


def not_resumed(exc: CheckpointError, run_dir: Path, step: Optional[int]) -> CheckpointError:
    """``exc`` (a damaged checkpoint at ``step``), completed with what the user can do: a resume never
    falls back to an older checkpoint by itself, since that would silently train over steps that were
    already trained; it names the older checkpoints and how to resume from the newest of them."""
    folder = Path(run_dir) / CHECKPOINTS
    older = [n for n in state_numbers(folder) if step is None or n < step]
    if step is None:
        return exc
    stem = f"step_{step:010d}"
    if not older:
        return CheckpointError(f"{exc}. The run was not resumed and nothing was changed; it has no older "
                               "checkpoint: restore the damaged file, or start a new run")
    listed = ", ".join(f"step_{n:010d}.json ({n:,} steps)" for n in reversed(older[-3:]))
    return CheckpointError(f"{exc}. The run was not resumed and nothing was changed. Older checkpoints: {listed}; "
                           f"to resume from the newest of them, move {stem}.json and {stem}.safetensors out of "
                           f"{folder} (it is checked the same way)")


def _check_league(state: dict, where: str, run_dir: Path, step: int) -> None:
    """The league of a run state: snapshots under ``league/`` of the run, taken at increasing steps up to the
    checkpoint's, each a regular file (:func:`check_snapshots` loads those a resume plays)."""
    league = need(state, "league", "dict", where)
    extra = sorted(set(league) - {"snapshots"})
    if extra:
        raise CheckpointError(f"{where}: league has unknown fields {short_repr(extra)}")
    snapshots = need(league, "snapshots", "list", where, "league.")
    previous = -1
    for i, snap in enumerate(snapshots):
        if not isinstance(snap, dict) or set(snap) != {"step", "path"}:
            raise CheckpointError(f"{where}: league.snapshots[{i}] must be an object with a step and a path, got "
                                  f"{short_repr(snap)}")
        taken = need(snap, "step", "int>=0", where, f"league.snapshots[{i}].")
        if not previous < taken <= step:
            raise CheckpointError(f"{where}: league.snapshots[{i}].step is {taken:,}; snapshots are taken at "
                                  f"increasing steps up to the checkpoint's {step:,}")
        previous = taken
        rel = need(snap, "path", "str", where, f"league.snapshots[{i}].")
        parts = Path(rel).parts
        if os.path.isabs(rel) or ".." in parts or "," in rel or not parts or parts[0] != "league":
            raise CheckpointError(f"{where}: league.snapshots[{i}].path must be a file under league/ of the run, "
                                  f"got {short_repr(rel)}")
        try:
            mode = os.stat(run_dir / rel).st_mode
        except FileNotFoundError:
            raise CheckpointError(f"{where}: league snapshot {run_dir / rel} is missing; the league cannot be "
                                  "restored without it") from None
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{where}: league snapshot {run_dir / rel} cannot be used: {exc}") from None
        if not stat.S_ISREG(mode):
            raise CheckpointError(f"{where}: league snapshot {run_dir / rel} is not a regular file (a policy .npz)")


def check_snapshots(league: Any, rules: Any, where: Path) -> None:
    """Load every snapshot the resumed league plays (its newest ``max_snapshots``) as the agents the envs will
    build, before any env or worker starts: a damaged or foreign snapshot is a CheckpointError naming it
    (the league of ``where``), not a traceback from a worker process."""
    specs, _ = league.mixture()
    try:
        check_agent_specs([("league snapshot", spec) for spec in specs[len(league.baselines):]], rules, f"{where}: ")
    except ConfigError as exc:
        raise CheckpointError(str(exc)) from None


def _check_model(state: dict, where: str, path: Path, step: int) -> None:
    """The ``model`` entry of a run state: the tensors file, its checksum and SB3's counters (each PPO update
    is one rollout of at least one step, of at most MAX_EPOCHS epochs)."""
    model = need(state, "model", "dict", where)
    extra = sorted(set(model) - {"tensors", "sha256", "num_timesteps", "n_updates", "episode_num", "optimizer"})
    if extra:
        raise CheckpointError(f"{where}: model has unknown fields {short_repr(extra)}")
    if need(model, "tensors", "str", where, "model.") != path.with_suffix(".safetensors").name:
        raise CheckpointError(f"{where}: model.tensors must be {path.with_suffix('.safetensors').name!r}, got "
                              f"{short_repr(model['tensors'])}")
    need(model, "sha256", "sha256", where, "model.")
    if need(model, "num_timesteps", "int>=0", where, "model.") != step:
        raise CheckpointError(f"{where}: model.num_timesteps {model['num_timesteps']} is not the step {step}")
    bounds = {"n_updates": (step * MAX_EPOCHS, f"{MAX_EPOCHS:,} epochs per step"), "episode_num": (step, "one per step")}
    for key, (most, why) in bounds.items():
        if need(model, key, "int>=0", where, "model.") > most:
            raise CheckpointError(f"{where}: model.{key} is {model[key]:,}, more than {step:,} steps allow (at most "
                                  f"{why}: {most:,})")
    extra = sorted(set(need(model, "optimizer", "dict", where, "model.")) - {"param_groups", "scalars"})
    if extra:
        raise CheckpointError(f"{where}: model.optimizer has unknown fields {short_repr(extra)}")


def check_state(state: dict, path: Path, step: int, run_dir: Path) -> dict:
    """A run state read from ``path`` (``step_<step>.json``), every field checked (CheckpointError if not),
    counters included: none may lie past the checkpoint's step (a ``last_ckpt_step`` in the future would
    skip every later checkpoint)."""
    where = str(path)
    if "format" not in state and "history" in state:  # written by the pickle-based version next to a .zip
        raise old_format_error(path)
    check_header(state, where, TRAINER)
    if need(state, "step", "int>=0", where) != step:
        raise CheckpointError(f"{where}: says step {state['step']}, but its name says {step}")
    state["history"] = check_history(state.get("history"), where)
    for i, row in enumerate(state["history"]):
        if row["step"] > step:
            raise CheckpointError(f"{where}: history[{i}].step is {row['step']:,}, after the checkpoint's {step:,}")
    _check_league(state, where, run_dir, step)
    if need(state, "last_ckpt_step", "int>=0", where) != step:
        raise CheckpointError(f"{where}: last_ckpt_step is {state['last_ckpt_step']:,}; a checkpoint records its "
                              f"own step, {step:,}")
    for key, kind in (("last_eval_step", "int>=0|null"), ("last_snapshot_step", "int>=0")):
        value = need(state, key, kind, where)
        if value is not None and value > step:
            raise CheckpointError(f"{where}: {key} is {value:,}, after the checkpoint's step {step:,}")
    for key in ("train_seconds", "eval_seconds"):
        need(state, key, "seconds", where)
    need(state, "finished", "bool", where)
    need(state, "name", "str", where)
    _check_model(state, where, path, step)
    return state
