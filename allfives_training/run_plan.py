"""Where a training command's arguments become a run, once, for both trainers.

``allfives train`` (stable-baselines3) and ``allfives train-rllib`` take the same arguments: a config (a
YAML path, a mapping, or a config object), ``--set`` overrides, a run directory and ``--resume``.
:func:`plan_run` turns them into a :class:`RunPlan` (the checked config, the run directory, and the
checkpoint a resume continues from) in one pass through the config reader (:mod:`.schema`) and the run
directories (:mod:`.runs`); each trainer then only builds and runs. So the two behave alike by
construction: a new run without ``--run-dir`` goes to ``<output.dir>/<name>``, or ``<name>_2``, ... when
that is taken; ``--run-dir`` must be missing or empty; ``--resume`` reads the run's own ``config.yaml``
(``--set`` applies on top) and continues its newest checkpoint, or starts from the beginning when the run
has none yet. Nothing is created here: a refused command leaves the disk as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Optional, Sequence, TypeVar

from allfives_training.runs import run_directory
from allfives_training.schema import ConfigError, Section, load_checked, read_checked

__all__ = ["Checkpoint", "ConfigKind", "RunPlan", "plan_run"]

S = TypeVar("S", bound=Section)
#: (step or iteration, tensors file, checked state) of a run's newest checkpoint.
Checkpoint = tuple[int, Path, dict]


@dataclass(frozen=True)
class ConfigKind(Generic[S]):
    """What differs between the trainers' runs: how their config is checked (``validate(raw, source)``),
    how a run's newest checkpoint is found and checked, what a run directory is called in messages, and the
    hint for a missing config file."""

    validate: Callable[[Any, str], S]
    latest_checkpoint: Callable[[Path], Optional[Checkpoint]]
    run_directory: str = "a run directory"
    missing_hint: str = ""


@dataclass(frozen=True)
class RunPlan(Generic[S]):
    """A run to start or continue: the checked config, its directory, and (resumed runs) the newest
    checkpoint, None when the run has none yet."""

    cfg: S
    run_dir: Path
    resumed: bool
    checkpoint: Optional[Checkpoint]


def plan_run(kind: ConfigKind[S], config: Any, run_dir: Optional[str] = None, resume: Any = None,
             overrides: Sequence[str] = ()) -> RunPlan[S]:
    """The run a command's arguments ask for. ``resume``: None or False (a new run), True (the newest run of
    the config's name, or ``run_dir``), or a run directory. Raises :class:`ConfigError` (and the checkpoint
    reader's :class:`CheckpointError`) before anything is written.

    The given config is read only when it decides something: for a new run, and for a ``--resume`` that
    looks for the newest run of its name; a resume continues with the run's own ``config.yaml``."""
    overrides = list(overrides)
    resuming = resume is not None and resume is not False
    reads_given = not resuming or (resume is True and run_dir is None)
    named = read_checked(config, overrides, kind.validate, kind.missing_hint) if reads_given else None
    target = run_directory(named, run_dir, resume)
    if not resuming:
        return RunPlan(named, target, False, None)
    saved = target / "config.yaml"
    if not os.path.lexists(saved):  # anything else there (a pipe, a device) is refused by the reader
        raise ConfigError(f"--resume: {target} is not {kind.run_directory} (it has no config.yaml)")
    cfg = load_checked(saved, overrides, kind.validate, kind.missing_hint)
    return RunPlan(cfg, target, True, kind.latest_checkpoint(target))
