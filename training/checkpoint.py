"""Checkpoints that load without pickle: tensors in a ``.safetensors`` file, everything else in JSON.

Why: a checkpoint is a file a user may have been handed, and loading it must never run code.
stable-baselines3's ``.zip`` and RLlib's checkpoint directories unpickle Python objects on load, so a
planted payload runs; ``torch.load`` does too unless ``weights_only``. A checkpoint here is two files:

``<stem>.safetensors``
    named tensors only (the `safetensors <https://github.com/huggingface/safetensors>`_ format: a JSON
    header and raw little-endian arrays, nothing executable): the network's weights (``policy/...`` or
    ``module/<id>/...``) and the optimizer's per-parameter tensors (``optimizer/...``).
``<stem>.json``
    the run state (step, evaluation history, league, counters), the optimizer's hyper-parameters
    (``param_groups``) and the SHA-256 of the tensors file. Written last, so its presence marks a
    complete checkpoint.

Loading rebuilds the model from the run's config (``config.yaml``, read with ``yaml.SafeLoader``) and
copies the tensors in after checking that every name, shape and dtype matches the model the config
builds, that every value is finite, and that the file's SHA-256 is the one the JSON recorded. Anything
else (a missing, truncated, tampered or foreign file, a malformed JSON field, a config that builds a
different network) is a :class:`CheckpointError` naming the file and what was expected. Checksums
catch damage and mismatched pairs; they are not a signature (whoever can write the directory can write
both files), and they do not need to be one: nothing in either file is ever executed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Pattern, Sequence, Union

from allfives_env.core.errors import short_repr
from allfives_env.core.values import is_finite_number, is_integer, is_real
from training.schema import ConfigError

__all__ = ["FORMAT", "CheckpointError", "atomic_write", "write_tensors", "read_tensors", "write_json", "read_json",
           "newest_state", "prune", "need", "check_header", "split_optimizer", "restore_optimizer", "module_tensors",
           "check_module", "old_format_error"]

FORMAT = "allfives-checkpoint/1"
MAX_JSON_BYTES = 256 << 20
MAX_TENSOR_BYTES = 16 << 30


class CheckpointError(ConfigError):
    """A checkpoint that cannot be loaded: missing, damaged, tampered, foreign or of the old format."""


def old_format_error(path: Path) -> CheckpointError:
    """The error for a checkpoint of the old pickle-based format (SB3 ``.zip``, RLlib's own directories)."""
    return CheckpointError(
        f"{path} is a checkpoint of the old pickle-based format; it is not loaded, for safety (unpickling a file "
        "can run any code planted in it). This version saves checkpoints as .safetensors + .json and can only "
        "resume those: start the run again (its config.yaml and exported .npz policies are still usable), or "
        "move the old checkpoints away")


# ---------------------------------------------------------------------------------------------- files
def atomic_write(path: Path, data: Union[bytes, str]) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a synced temporary file and a rename."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_tensors(path: Path, tensors: Mapping[str, Any]) -> str:
    """Write named tensors (torch tensors or numpy arrays) atomically; returns the file's SHA-256."""
    import numpy as np
    import torch
    from safetensors.torch import save

    plain = {}
    for name, value in tensors.items():
        t = torch.from_numpy(np.ascontiguousarray(value)) if isinstance(value, np.ndarray) else value
        plain[name] = t.detach().cpu().contiguous().clone()  # clone: no two entries share memory
    data = save(plain)
    atomic_write(path, data)
    return hashlib.sha256(data).hexdigest()


def read_tensors(path: Path, sha256: Optional[str], named_by: Path) -> dict[str, Any]:
    """The tensors of ``path`` (torch, CPU), after checking its SHA-256 against what ``named_by`` recorded."""
    from safetensors.torch import load

    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_TENSOR_BYTES:
            raise CheckpointError(f"{path}: {size:,} bytes is more than a checkpoint of this project can be")
        data = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing: {named_by} names it as its tensors file") from None
    except OSError as exc:
        raise CheckpointError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CheckpointError(f"{path}: its contents are not the ones {named_by} recorded (SHA-256 differs): the "
                              "file was damaged, truncated or replaced after it was written; not loaded")
    try:
        tensors = load(data)
    except Exception as exc:  # safetensors raises its own SafetensorError (and others on odd input)
        raise CheckpointError(f"{path}: not a readable safetensors file ({short_repr(str(exc))})") from None
    return dict(tensors)


def write_json(path: Path, state: Mapping[str, Any]) -> None:
    """Write a JSON state atomically (the checkpoint's commit point)."""
    atomic_write(path, json.dumps(state, indent=1))


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; anything else is a CheckpointError naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JSON_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CheckpointError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_JSON_BYTES:
        raise CheckpointError(f"{path}: more than {MAX_JSON_BYTES:,} bytes, more than a run state can be")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path}: not UTF-8 text (byte {exc.start}); a run state is a UTF-8 JSON file") \
            from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); the "
                              "file is damaged or was edited") from None
    except RecursionError:
        raise CheckpointError(f"{path}: the JSON is nested too deeply to be a run state") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{path}: a run state is a JSON object, got {type(value).__name__}")
    return value


def newest_state(folder: Path, state_name: Pattern[str]) -> Optional[tuple[int, Path, dict[str, Any]]]:
    """(number, path, unchecked state) of the highest-numbered state file in ``folder`` whose name matches
    ``state_name`` (group 1: the number), skipping one pruned while it was listed; None when there is none."""
    numbered = sorted(((int(m.group(1)), p) for p in Path(folder).iterdir() if (m := state_name.match(p.name))),
                      reverse=True)
    for number, path in numbered:
        try:
            return number, path, read_json(path)
        except FileNotFoundError:  # pruned by a trainer that is still running
            continue
    return None


def prune(folder: Path, state_name: Pattern[str], file_name: Pattern[str], keep: int) -> None:
    """Delete the files (``file_name``, group 1: the number) of all but the newest ``keep`` checkpoints whose
    state file matches ``state_name``."""
    kept = set(sorted(int(m.group(1)) for p in folder.iterdir() if (m := state_name.match(p.name)))[-keep:])
    for p in folder.iterdir():
        m = file_name.match(p.name)
        if m and int(m.group(1)) not in kept:
            p.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------- JSON fields
CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int>=0": (lambda v: is_integer(v) and 0 <= v <= 2**63 - 1, "an integer >= 0"),
    "int>=0|null": (lambda v: v is None or (is_integer(v) and 0 <= v <= 2**63 - 1), "null or an integer >= 0"),
    "seconds": (lambda v: is_finite_number(v) and v >= 0, "a finite number >= 0"),
    "number": (is_real, "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str) and len(v) <= 10_000, "a string"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
    "sha256": (lambda v: isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v),
               "a SHA-256 in hex"),
}


def need(obj: Mapping[str, Any], key: str, kind: str, where: str, dotted: str = "") -> Any:
    """``obj[key]``, checked to be ``kind`` (a key of :data:`CHECKS`); else a CheckpointError naming ``where``."""
    ok, wanted = CHECKS[kind]
    name = f"{dotted}{key}"
    if key not in obj:
        raise CheckpointError(f"{where}: the run state has no {name!r} (must be {wanted}); the file is damaged, "
                              "was edited, or is not a checkpoint of this project")
    value = obj[key]
    if not ok(value):
        raise CheckpointError(f"{where}: {name} must be {wanted}, got {short_repr(value)}")
    return value


def check_header(state: Mapping[str, Any], where: str, trainer: str) -> None:
    """A CheckpointError unless the run state is of this :data:`FORMAT` and written by ``trainer``."""
    if state.get("format") != FORMAT or state.get("trainer") != trainer:
        raise CheckpointError(f"{where}: not a checkpoint of this format (format {short_repr(state.get('format'))}, "
                              f"trainer {short_repr(state.get('trainer'))}; expected {FORMAT!r}, {trainer!r})")


def check_history(rows: Any, where: str) -> list[dict[str, Any]]:
    """The evaluation history of a run state (rows of :func:`training.report.history_row`)."""
    from training.report import HISTORY_FIELDS

    if not isinstance(rows, list):
        raise CheckpointError(f"{where}: history must be a list of evaluation rows, got {short_repr(rows)}")
    kinds = {"step": "int>=0", "baseline": "str", "games": "int>=0", "final": "bool"}
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise CheckpointError(f"{where}: history[{i}] must be an object, got {short_repr(row)}")
        for field in HISTORY_FIELDS:
            need(row, field, kinds.get(field, "number"), where, f"history[{i}].")
        if "module" in row:
            need(row, "module", "str", where, f"history[{i}].")
        extra = set(row) - set(HISTORY_FIELDS) - {"module"}
        if extra:
            raise CheckpointError(f"{where}: history[{i}] has unknown fields {sorted(extra)}")
        out.append(dict(row))
    return out


# ---------------------------------------------------------------------------------------------- tensors
def module_tensors(state_dict: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """A module's state dict under ``prefix`` (``policy/``, ``module/<id>/``)."""
    return {prefix + name: value for name, value in state_dict.items()}


_OTHER_NETWORK = ("the checkpoint was written for another network (resume with the run's own config.yaml; --set "
                  "may not change the network, the rules or the observation)")


def _check_tensor(name: str, saved: Any, shape: Sequence[int], dtype: Any, path: Path, what: str) -> None:
    import torch

    if tuple(saved.shape) != tuple(shape) or saved.dtype != dtype:
        raise CheckpointError(f"{path}: tensor {name!r} is {saved.dtype} {tuple(saved.shape)}, but {what} has "
                              f"{dtype} {tuple(shape)}: {_OTHER_NETWORK}")
    if saved.is_floating_point() and not bool(torch.isfinite(saved).all()):
        raise CheckpointError(f"{path}: tensor {name!r} holds non-finite values (inf or nan); not loaded")


def check_module(fresh: Mapping[str, Any], tensors: Mapping[str, Any], prefix: str, path: Path,
                 what: str) -> dict[str, Any]:
    """The saved tensors under ``prefix`` as a state dict, checked name by name against ``fresh`` (the
    state dict of the model the config builds)."""
    import torch

    saved = {name[len(prefix):]: t for name, t in tensors.items() if name.startswith(prefix)}
    missing = sorted(set(fresh) - set(saved))
    extra = sorted(set(saved) - set(fresh))
    if missing or extra:
        raise CheckpointError(f"{path}: the tensors under {prefix!r} do not match {what}: missing {missing[:5]}, "
                              f"unexpected {extra[:5]}: {_OTHER_NETWORK}")
    out = {}
    for name, ref in fresh.items():
        ref_t = torch.as_tensor(ref)
        _check_tensor(prefix + name, saved[name], ref_t.shape, ref_t.dtype, path, what)
        out[name] = saved[name]
    return out


def _jsonable(value: Any) -> Any:
    import numpy as np

    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # a 0-dim tensor (torch allows a tensor lr)
        return value.item()
    return value


def split_optimizer(state_dict: Mapping[str, Any], prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A torch optimizer state dict as tensors under ``prefix`` (``<prefix><param index>/<name>``) and a
    JSON part: ``param_groups`` (hyper-parameters) and per-parameter scalars (RLlib hands ``step`` over
    as a float)."""
    import numpy as np
    import torch

    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for idx, entry in state_dict["state"].items():
        for name, value in entry.items():
            if torch.is_tensor(value) or isinstance(value, np.ndarray):
                tensors[f"{prefix}{int(idx)}/{name}"] = value
            else:
                scalars[f"{int(idx)}/{name}"] = _jsonable(value)
    groups = [{k: _jsonable(v) for k, v in group.items()} for group in state_dict["param_groups"]]
    return tensors, {"param_groups": groups, "scalars": scalars}


def _coerce(fresh: Any, saved: Any) -> Any:
    """``saved`` in the type of ``fresh`` when it is the same kind of value, else raise ValueError."""
    if isinstance(fresh, bool) or fresh is None or isinstance(saved, bool) or saved is None:
        if type(fresh) is type(saved):
            return saved
        raise ValueError
    if is_real(fresh):
        if is_finite_number(saved):
            return type(fresh)(saved) if isinstance(fresh, float) or is_integer(saved) else float(saved)
        raise ValueError
    if isinstance(fresh, (tuple, list)):
        if isinstance(saved, list) and len(saved) == len(fresh):
            items = [_coerce(f, s) for f, s in zip(fresh, saved)]
            return tuple(items) if isinstance(fresh, tuple) else items
        raise ValueError
    if isinstance(fresh, str) and isinstance(saved, str):
        return saved
    if hasattr(fresh, "item"):  # a tensor hyper-parameter: keep the fresh one (a config value)
        return fresh
    raise ValueError


def restore_optimizer(fresh: Mapping[str, Any], params: Sequence[Any], tensors: Mapping[str, Any],
                      meta: Any, prefix: str, path: Path, json_path: Path) -> dict[str, Any]:
    """The state dict to load into an optimizer: the saved per-parameter state and hyper-parameters,
    checked against ``fresh`` (the new optimizer's state dict) and ``params`` (its parameters, by index)."""
    import torch

    where = str(json_path)
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where}: the optimizer state must be an object, got {short_repr(meta)}")
    groups = need(meta, "param_groups", "list", where, "optimizer.")
    scalars = need(meta, "scalars", "dict", where, "optimizer.")
    fresh_groups = list(fresh["param_groups"])
    if len(groups) != len(fresh_groups):
        raise CheckpointError(f"{where}: the optimizer has {len(groups)} parameter groups, the model the config "
                              f"builds has {len(fresh_groups)}")
    out_groups = []
    for g, (group, ref) in enumerate(zip(groups, fresh_groups)):
        if not isinstance(group, dict) or group.get("params") != list(ref["params"]):
            raise CheckpointError(f"{where}: optimizer parameter group {g} does not list the parameters "
                                  f"{list(ref['params'])[:8]}...; the checkpoint was written for another network")
        new = {}
        for key, value in ref.items():
            if key == "params" or key not in group:
                new[key] = value
                continue
            try:
                new[key] = _coerce(value, group[key])
            except ValueError:
                raise CheckpointError(f"{where}: optimizer hyper-parameter {key!r} must be like {value!r}, got "
                                      f"{short_repr(group[key])}") from None
        out_groups.append(new)
    known = {int(i) for ref in fresh_groups for i in ref["params"]}
    state: dict[int, dict[str, Any]] = {}
    for name, t in tensors.items():
        if not name.startswith(prefix):
            continue
        idx_text, _, key = name[len(prefix):].partition("/")
        if not idx_text.isdigit() or int(idx_text) not in known or not key:
            raise CheckpointError(f"{path}: unexpected optimizer tensor {name!r}")
        idx = int(idx_text)
        param = torch.as_tensor(params[idx]) if idx < len(params) else None
        if param is None:
            raise CheckpointError(f"{path}: optimizer tensor {name!r} is for a parameter the model does not have")
        if t.ndim:
            _check_tensor(name, t, param.shape, param.dtype, path, "the parameter the config builds")
        elif not t.is_floating_point() or not bool(torch.isfinite(t).all()):
            raise CheckpointError(f"{path}: optimizer tensor {name!r} must be a finite number, got {t}")
        state.setdefault(idx, {})[key] = t
    for name, value in scalars.items():
        idx_text, _, key = str(name).partition("/")
        if not idx_text.isdigit() or int(idx_text) not in known or not key or not is_finite_number(value):
            raise CheckpointError(f"{where}: unexpected optimizer value {short_repr(name)}: {short_repr(value)}")
        state.setdefault(int(idx_text), {})[key] = value
    names = {frozenset(entry) for entry in state.values()}
    if len(names) > 1 or (state and len(state) != len(known)):
        raise CheckpointError(f"{path}: the optimizer state is incomplete (some parameters lack some of "
                              f"{sorted(set().union(*names))}); not loaded")
    return {"state": state, "param_groups": out_groups}
