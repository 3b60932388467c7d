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
builds, that every value is finite, and that the file's SHA-256 is the one the JSON recorded. Both files
are read by :func:`allfives_env.regular_file.read_regular_file` (a named pipe or a device is refused, never waited on
or read without end). The optimizer's state must be the one the config's optimizer would have: the same
hyper-parameters (only the learning rate may differ, and the config's is used), and per parameter exactly
the tensors it keeps, with whole step counts (:func:`restore_optimizer`). Anything
else (a missing, truncated, tampered or foreign file, a malformed JSON field, a config that builds a
different network) is a :class:`CheckpointError` naming the file and what was expected. Checksums
catch damage and mismatched pairs; they are not a signature (whoever can write the directory can write
both files), and they do not need to be one: nothing in either file is ever executed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Pattern, Sequence, Union

from allfives_env.core.errors import short_repr
from allfives_env.core.values import is_finite_number, is_integer, is_real
from allfives_env.regular_file import read_regular_file
from allfives_training.schema import ConfigError

__all__ = ["FORMAT", "CheckpointError", "atomic_write", "write_tensors", "read_tensors", "write_json", "read_json",
           "newest_state", "prune", "commit_checkpoint", "need", "check_header", "split_optimizer", "restore_optimizer",
           "module_tensors", "check_module", "old_format_error", "optimizer_state_spec"]

FORMAT = "allfives-checkpoint/1"
MAX_JSON_BYTES = 256 << 20
MAX_TENSOR_BYTES = 16 << 30
MAX_INT_DIGITS = 20  # 2**64 has 20 digits; every integer of a run state is below 2**63


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


def read_tensors(path: Path, sha256: Optional[str], named_by: Path,
                 limit: int = MAX_TENSOR_BYTES) -> dict[str, Any]:
    """The tensors of ``path`` (torch, CPU), after checking its SHA-256 against what ``named_by`` recorded.

    Read by :func:`allfives_env.regular_file.read_regular_file`: a named pipe, a device or a link to one is refused, and
    at most ``limit`` bytes are read, counted as they arrive."""
    from safetensors.torch import load

    path = Path(path)
    try:
        data = read_regular_file(path, limit, CheckpointError, "a checkpoint's tensors file")
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing: {named_by} names it as its tensors file") from None
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


class _LongInteger(Exception):
    """An integer literal too long for a run state (raised inside ``json.loads``, reworded by read_json)."""


def _parse_int(text: str) -> int:
    """A JSON integer, refused past :data:`MAX_INT_DIGITS` digits: no count in a run state comes near, and
    Python refuses to convert more than 4,300 digits anyway (with a bare ValueError)."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInteger(len(text.lstrip("-")))
    return int(text)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; anything else is a CheckpointError naming the file (a missing file raises
    FileNotFoundError)."""
    path = Path(path)
    data = read_regular_file(path, MAX_JSON_BYTES, CheckpointError, "a run state (a JSON file)")
    try:
        value = json.loads(data.decode("utf-8"), parse_int=_parse_int)
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path}: not UTF-8 text (byte {exc.start}); a run state is a UTF-8 JSON file") \
            from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); the "
                              "file is damaged or was edited") from None
    except _LongInteger as exc:
        raise CheckpointError(f"{path}: holds an integer of {exc.args[0]:,} digits; a run state's integers have at "
                              f"most {MAX_INT_DIGITS} (the file is damaged or was edited)") from None
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



def commit_checkpoint(folder: Path, stem: str, tensors: Mapping[str, Any], state: Callable[[str, str], dict],
                      state_name: Pattern[str], file_name: Pattern[str], keep: int) -> Path:
    """Write one checkpoint of either trainer and keep the newest ``keep``: ``<stem>.safetensors`` first, then
    ``<stem>.json``, the run state ``state(tensors file name, its SHA-256)``, whose presence marks the pair
    complete (a run killed between the two leaves no half checkpoint for a resume to read); the tensors
    file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.safetensors"
    digest = write_tensors(path, tensors)
    write_json(folder / f"{stem}.json", state(path.name, digest))
    prune(folder, state_name, file_name, keep)
    return path


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
    """The evaluation history of a run state (rows of :func:`allfives_training.report.history_row`)."""
    from allfives_training.report import HISTORY_FIELDS

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


#: Hyper-parameters a resumed run may change through its config (``--set ppo.learning_rate=...``): the saved
#: value only has to be a number > 0, and the config's value is loaded. Every other one must be the config's.
CONFIG_MAY_CHANGE = frozenset({"lr"})
#: Per-parameter optimizer values that are never negative (Adam's step count and squared-gradient averages:
#: a negative one makes the update nan, which would look like a learning rate far too high).
NON_NEGATIVE = frozenset({"step", "exp_avg_sq", "max_exp_avg_sq"})

StateSpec = Mapping[int, Mapping[str, tuple[tuple[int, ...], Any]]]


def _same(fresh: Any, saved: Any) -> bool:
    """Whether a saved hyper-parameter (read from JSON) is the value ``fresh`` the config builds: the same
    kind (a bool is never a number, null only null) and the same value."""
    if isinstance(fresh, bool) or fresh is None or isinstance(saved, bool) or saved is None:
        return type(fresh) is type(saved) and fresh == saved
    if hasattr(fresh, "item") and getattr(fresh, "ndim", 1) == 0:  # a 0-dim tensor hyper-parameter
        fresh = fresh.item()
    if is_real(fresh):
        return is_finite_number(saved) and float(saved) == float(fresh)
    if isinstance(fresh, (tuple, list)):
        return isinstance(saved, list) and len(saved) == len(fresh) and all(map(_same, fresh, saved))
    return isinstance(fresh, str) and saved == fresh


def _restore_group(g: int, group: Any, ref: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Parameter group ``g`` to load: the config's (``ref``), after checking that the saved ``group`` lists the
    same parameters and the same hyper-parameters (a key it lacks, as one a newer torch added, is the
    config's)."""
    if not isinstance(group, dict) or group.get("params") != list(ref["params"]):
        raise CheckpointError(f"{where}: optimizer parameter group {g} does not list the parameters "
                              f"{list(ref['params'])[:8]}...; the checkpoint was written for another network")
    unknown = sorted(set(group) - set(ref))
    if unknown:
        raise CheckpointError(f"{where}: optimizer parameter group {g} has hyper-parameters the config's optimizer "
                              f"does not have: {short_repr(unknown)} (it has {sorted(k for k in ref if k != 'params')})")
    for key, value in ref.items():
        if key == "params" or key not in group:
            continue
        saved = group[key]
        if key in CONFIG_MAY_CHANGE:
            if not (is_finite_number(saved) and saved > 0):
                raise CheckpointError(f"{where}: optimizer hyper-parameter {key!r} must be a finite number > 0, got "
                                      f"{short_repr(saved)}")
        elif not _same(value, saved):
            raise CheckpointError(f"{where}: optimizer hyper-parameter {key!r} is {short_repr(saved)}, but the run's "
                                  f"config builds the optimizer with {_jsonable(value)!r}; a checkpoint's optimizer "
                                  "settings are the config's (the file was edited or comes from another setup)")
    return dict(ref)


def optimizer_state_spec(optimizer: Any) -> dict[int, dict[str, tuple[tuple[int, ...], Any]]]:
    """What the optimizer keeps per parameter once it has stepped: ``{param index: {name: (shape, dtype)}}``.

    Found by stepping a copy of it (same class, same parameter groups) on zero tensors shaped like its
    parameters, so the check follows the optimizer the config builds (Adam's ``exp_avg``, ``exp_avg_sq``
    and ``step``; ``max_exp_avg_sq`` with amsgrad) instead of a hand-kept list. The optimizer itself and
    its parameters are not touched."""
    import torch

    groups = []
    for group in optimizer.param_groups:
        clones = [torch.zeros_like(p, requires_grad=True) for p in group["params"]]
        groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": clones})
    probe = type(optimizer)(groups)  # every group carries all its hyper-parameters
    for group in probe.param_groups:
        for p in group["params"]:
            p.grad = torch.zeros_like(p)
    probe.step()
    spec: dict[int, dict[str, tuple[tuple[int, ...], Any]]] = {}
    for idx, entry in probe.state_dict()["state"].items():
        spec[int(idx)] = {name: (tuple(torch.as_tensor(v).shape), torch.as_tensor(v).dtype)
                          for name, v in entry.items()}
    return spec


def _number(value: Any) -> Optional[float]:
    """A per-parameter scalar (a 0-dim tensor or a JSON number) as a float, or None if it is not one."""
    if hasattr(value, "is_floating_point"):  # a tensor
        if value.ndim or value.is_complex() or str(value.dtype) == "torch.bool":
            return None
        return float(value.item())
    return float(value) if is_finite_number(value) else None


def _check_entry(idx: int, entry: Mapping[str, Any], params: Sequence[Any], spec: Optional[StateSpec],
                 max_step: Optional[int], path: Path) -> None:
    """One parameter's saved state: the names, shapes and dtypes ``spec`` says; a whole step count from 1 to
    ``max_step``; no negative squared averages."""
    import torch

    if spec is not None:
        wanted = spec.get(idx, {})
        if set(entry) != set(wanted):
            raise CheckpointError(f"{path}: the optimizer state of parameter {idx} holds {sorted(entry)}, but the "
                                  f"config's optimizer keeps {sorted(wanted)}; not loaded")
        for name, (shape, dtype) in wanted.items():
            value = entry[name]
            if not torch.is_tensor(value):  # a JSON scalar (RLlib hands the step over as a float)
                if shape != () or _number(value) is None:
                    raise CheckpointError(f"{path}: optimizer value {idx}/{name} must be a {dtype} tensor of shape "
                                          f"{shape}, got {short_repr(value)}")
                continue
            _check_tensor(f"optimizer/{idx}/{name}", value, shape, dtype, path, "the config's optimizer")
    for name, value in entry.items():
        if torch.is_tensor(value) and value.ndim:
            if spec is None:
                param = torch.as_tensor(params[idx])
                _check_tensor(f"optimizer/{idx}/{name}", value, param.shape, param.dtype, path,
                              "the parameter the config builds")
            if name in NON_NEGATIVE and value.is_floating_point() and bool((value < 0).any()):
                raise CheckpointError(f"{path}: optimizer tensor {idx}/{name} holds negative values; it is an "
                                      "average of squares, never negative (the file was edited); not loaded")
            continue
        number = _number(value)
        if number is None or not math.isfinite(number):
            raise CheckpointError(f"{path}: optimizer value {idx}/{name} must be a finite number, got "
                                  f"{short_repr(value)}")
        if name == "step" and (number != int(number) or number < 1 or (max_step is not None and number > max_step)):
            bound = "" if max_step is None else f" to {max_step:,} (the checkpoint's updates allow no more)"
            raise CheckpointError(f"{path}: optimizer step count of parameter {idx} is {number:g}; it must be a "
                                  f"whole number from 1{bound}; not loaded")
        if name in NON_NEGATIVE and number < 0:
            raise CheckpointError(f"{path}: optimizer value {idx}/{name} is {number:g}; it is never negative")


def restore_optimizer(fresh: Mapping[str, Any], params: Sequence[Any], tensors: Mapping[str, Any],
                      meta: Any, prefix: str, path: Path, json_path: Path, spec: Optional[StateSpec] = None,
                      stepped: Optional[bool] = None, max_step: Optional[int] = None) -> dict[str, Any]:
    """The state dict to load into an optimizer, checked against the one the config builds.

    ``fresh`` is the new optimizer's state dict and ``params`` its parameters by index. Parameter groups
    list the same parameters and carry the config's hyper-parameters (only the learning rate may differ,
    and the config's is loaded). The per-parameter state has, when ``spec`` is given
    (:func:`optimizer_state_spec`), exactly the names, shapes and dtypes the optimizer keeps; it is there
    for every parameter or for none, and ``stepped`` says which the checkpoint needs (True: the run has
    updated, so an empty state is damage, not a fresh optimizer; None: either). Step counts are whole
    numbers from 1 to ``max_step``."""
    where = str(json_path)
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where}: the optimizer state must be an object, got {short_repr(meta)}")
    groups = need(meta, "param_groups", "list", where, "optimizer.")
    scalars = need(meta, "scalars", "dict", where, "optimizer.")
    fresh_groups = list(fresh["param_groups"])
    if len(groups) != len(fresh_groups):
        raise CheckpointError(f"{where}: the optimizer has {len(groups)} parameter groups, the model the config "
                              f"builds has {len(fresh_groups)}")
    out_groups = [_restore_group(g, group, ref, where) for g, (group, ref) in enumerate(zip(groups, fresh_groups))]
    known = {int(i) for ref in fresh_groups for i in ref["params"]}
    state: dict[int, dict[str, Any]] = {}
    for name, t in tensors.items():
        if not name.startswith(prefix):
            continue
        idx_text, _, key = name[len(prefix):].partition("/")
        if not idx_text.isdigit() or int(idx_text) not in known or not key or int(idx_text) >= len(params):
            raise CheckpointError(f"{path}: unexpected optimizer tensor {name!r}")
        state.setdefault(int(idx_text), {})[key] = t
    for name, value in scalars.items():
        idx_text, _, key = str(name).partition("/")
        if not idx_text.isdigit() or int(idx_text) not in known or not key or not is_finite_number(value):
            raise CheckpointError(f"{where}: unexpected optimizer value {short_repr(name)}: {short_repr(value)}")
        if key in state.get(int(idx_text), {}):
            raise CheckpointError(f"{where}: optimizer value {short_repr(name)} is also a tensor in {path}")
        state.setdefault(int(idx_text), {})[key] = value
    if stepped is True and len(state) != len(known):
        raise CheckpointError(f"{path}: the optimizer state is incomplete: {len(known) - len(state)} of {len(known)} "
                              f"parameters have none, but {where} says the run has already updated its network "
                              f"(model.n_updates); resuming would silently restart the optimizer: not loaded")
    if stepped is False and state:
        raise CheckpointError(f"{path}: holds optimizer state, but {where} says the run has not updated its network "
                              "yet: not loaded")
    names = {frozenset(entry) for entry in state.values()}
    if len(names) > 1 or (state and len(state) != len(known)):
        raise CheckpointError(f"{path}: the optimizer state is incomplete (some parameters lack some of "
                              f"{sorted(set().union(*names))}); not loaded")
    for idx, entry in sorted(state.items()):
        _check_entry(idx, entry, params, spec, max_step, path)
    return {"state": state, "param_groups": out_groups}
