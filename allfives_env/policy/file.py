"""Policy files on disk: reading one whole and checked (:func:`load_policy`), and writing one.

A policy file is one ``.npz`` archive (no pickle anywhere) holding

* ``header``: UTF-8 JSON bytes (a ``uint8`` array) -- ``format`` (``"allfives-policy"``), ``version``,
  ``obs_layout_version`` (the observation version it reads: 1, :data:`allfives_env.encoding.OBS_LAYOUT_VERSION`,
  or 2), ``obs_size``,
  ``num_actions``, ``action_features`` (whether the observation carries the per-placement ``features``
  slice), the full ``rules`` it was trained under, the ``activation``, the layer sizes and free
  ``metadata`` (training step, config name, ...); see :mod:`allfives_env.policy.header`;
* ``hidden_{i}_weight`` / ``hidden_{i}_bias`` for each hidden layer and ``action_weight`` /
  ``action_bias`` for the logits layer (and ``scorer_{i}_*`` for the shared placement scorer), ``float32``,
  weights shaped ``(out, in)`` as in torch.

:func:`load_policy` reads a file and checks the whole of it before it returns: every header field, the
exact set of arrays, their dtypes (real floats) and shapes (read from each ``.npy`` header before its
data), finite values, and that no observation of those rules can overflow float32 on the way to the
logits. So a policy that loads plays a whole game; anything else is a :class:`PolicyError` naming the file
and what was wrong, at load. Nothing is ever unpickled (the archive is read member by member with
``allow_pickle=False``), and files and headers are bounded (:data:`MAX_FILE_BYTES`,
:data:`~allfives_env.policy.header.MAX_HEADER_BYTES`). :func:`write_policy_file` is the common end of
every exporter (the torch ones live in ``allfives_training/``): it writes only what would load.
"""

from __future__ import annotations

import io
import os
import struct
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ..core.errors import short_repr as _r
from ..core.rules import Rules
from ..encoding import OBS_LAYOUT_VERSION, ObservationEncoder, check_obs_version
from ..regular_file import open_regular_file
from .activations import ACTIVATIONS
from .errors import PolicyError
from .header import (
    MAX_HEADER_BYTES, MAX_PARAMETERS, POLICY_FORMAT, POLICY_VERSION, check_header, header_bytes, parse_header_json,
)
from .network import NumpyPolicy, Pair, check_dtype, check_shapes

PathLike = Union[str, "os.PathLike[str]"]

#: A file larger than this is refused before its zip directory is read: weights at the limit (float32),
#: and room for the header twice over (the archive's own overhead is far smaller).
MAX_FILE_BYTES = np.dtype(np.float32).itemsize * MAX_PARAMETERS + 2 * MAX_HEADER_BYTES
#: How many loaded policies :func:`load_policy` keeps (the oldest is dropped first).
CACHE_SIZE = 64
# At most this many unexpected array names are listed in an error.
_LISTED_NAMES = 8
_NPY = ".npy"
#: What reading a damaged or foreign ``.npz`` archive or ``.npy`` member can raise (zipfile, zlib and
#: numpy.lib.format do not wrap their errors). Here each becomes a PolicyError naming the file and the member;
#: the imitation warm start's recorded parts (``allfives_training/imitation.py``) catch the same set. An ``.npy``
#: header is Python literal text that numpy parses with ``ast.literal_eval`` and, when that fails, again
#: after ``tokenize`` (for Python 2 headers), so a crafted header also raises ``SyntaxError`` (with
#: ``IndentationError``), ``tokenize.TokenError``, ``RecursionError`` and ``MemoryError`` (the parser's
#: stack limit on deep nesting; a real allocation is sized only from a checked header), and the Python 2
#: path's ``UserWarning`` where warnings are errors.
NPZ_READ_ERRORS = (OSError, EOFError, ValueError, TypeError, ArithmeticError, RecursionError, RuntimeError,
                   NotImplementedError, KeyError, IndexError, SyntaxError, MemoryError, tokenize.TokenError,
                   UserWarning, zipfile.BadZipFile, zlib.error, struct.error)


# ---------------------------------------------------------------------------------------------- opening
def _why(exc: BaseException) -> str:
    """A read error in words, bounded; its type where it has no message (a parser's ``MemoryError``)."""
    return _r(str(exc) or type(exc).__name__)


def _policy_path(path: Any) -> str:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise PolicyError(f"a policy path must be a file name (str or os.PathLike), got {type(path).__name__} "
                          f"{_r(path)}")
    try:
        where = os.fsdecode(os.fspath(path))
    except (TypeError, ValueError, UnicodeError) as exc:
        raise PolicyError(f"policy path {_r(path)} is not a usable file name ({exc})") from None
    if not where:
        raise PolicyError("the policy path is empty; give the .npz file of a policy")
    if "\0" in where:
        raise PolicyError(f"policy path {_r(where)} contains a null byte, which no file name may hold")
    return where


def _open_file(where: str) -> Any:
    """The open policy file; only a regular file of at most MAX_FILE_BYTES (:mod:`allfives_env.regular_file`:
    a named pipe must not block the open, a device is never read)."""
    try:
        fd = open_regular_file(where, MAX_FILE_BYTES, PolicyError, "a policy file (.npz)")
    except FileNotFoundError:
        raise PolicyError(f"policy file {where} does not exist") from None
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _open_zip(fh: Any, where: str) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """The archive and its members by array name; refuses non-zips, members that are not .npy, duplicates."""
    try:
        empty = os.fstat(fh.fileno()).st_size == 0
    except OSError:
        empty = False
    try:
        zf = zipfile.ZipFile(fh)
        infos = zf.infolist()
    except NPZ_READ_ERRORS as exc:
        reason = "the file is empty" if empty else f"not a zip (.npz) archive ({_why(exc)})"
        raise PolicyError(f"{where} is not a readable policy file (.npz without pickled objects): {reason}") from None
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        if not name.endswith(_NPY):
            zf.close()
            raise PolicyError(f"{where}: archive member {_r(name)} is not an .npy array; a policy file holds only "
                              "the header and weight arrays")
        key = name[:-len(_NPY)]
        if key in members:
            zf.close()
            raise PolicyError(f"{where}: the archive holds array {_r(key)} twice; each array may appear once")
        members[key] = info
    return zf, members


# ---------------------------------------------------------------------------------------------- reading
def _npy_info(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, name: str) -> tuple[tuple, np.dtype]:
    """Shape and dtype from an .npy member's own header, read before any of its data."""
    try:
        with zf.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f".npy format version {version}, policy files use 1.0 or 2.0")
    except NPZ_READ_ERRORS as exc:
        raise PolicyError(f"{where}: array {name!r} is not a readable .npy array ({_why(exc)})") from None
    if dtype.hasobject:
        check_dtype(where, name, dtype)
    return tuple(shape), dtype


def _npy_read(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, name: str) -> np.ndarray:
    try:
        with zf.open(info) as f:
            return np.lib.format.read_array(f, allow_pickle=False)
    except NPZ_READ_ERRORS as exc:
        raise PolicyError(f"{where}: array {name!r} cannot be read, the file is damaged ({_why(exc)})") from None


def _read_header(zf: zipfile.ZipFile, members: Mapping[str, zipfile.ZipInfo], where: str) -> Any:
    info = members.get("header")
    if info is None:
        raise PolicyError(f"{where} is not an All Fives policy file: it has no JSON header")
    shape, dtype = _npy_info(zf, info, where, "header")
    if dtype != np.uint8 or len(shape) != 1:
        raise PolicyError(f"{where} is not an All Fives policy file: it has no JSON header (its 'header' array is "
                          f"{dtype} of shape {shape}, not one row of UTF-8 bytes)")
    if shape[0] > MAX_HEADER_BYTES:
        raise PolicyError(f"{where}: the header is {shape[0]} bytes, larger than the {MAX_HEADER_BYTES} bytes a "
                          "policy header may have")
    return parse_header_json(_npy_read(zf, info, where, "header").tobytes(), where)


def read_policy_header(path: PathLike) -> dict[str, Any]:
    """The JSON header of a policy file, every field checked (format, version, observation layout, types,
    agreement with its rules); :func:`load_policy` also checks the arrays."""
    where = _policy_path(path)
    with _open_file(where) as fh:
        zf, members = _open_zip(fh, where)
        with zf:
            header = _read_header(zf, members, where)
    check_header(header, where)
    return header


def _read_policy(fh: Any, where: str) -> NumpyPolicy:
    """The whole file, checked before a weight is read: header, then the set of arrays, their dtypes and
    shapes (from each .npy header, so a lying shape cannot make us allocate), then the data."""
    zf, members = _open_zip(fh, where)
    with zf:
        header = _read_header(zf, members, where)
        layout = check_header(header, where)
        expected = layout.shapes()
        missing = [n for n in expected if n not in members]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise PolicyError(f"{where}: missing weight array {missing[0]!r}{more}; the header's layers need "
                              f"{list(expected)}")
        extra = sorted(set(members) - set(expected) - {"header"})
        if extra:
            raise PolicyError(f"{where}: unexpected array(s) {', '.join(_r(n) for n in extra[:_LISTED_NAMES])}"
                              f"{' ...' if len(extra) > _LISTED_NAMES else ''}; the header's layers "
                              f"(hidden={list(layout.hidden)}{'' if layout.scorer is None else ', action_scorer'}) "
                              f"need exactly {list(expected)}")
        infos = {n: _npy_info(zf, members[n], where, n) for n in expected}
        for n, (_, dtype) in infos.items():
            check_dtype(where, n, dtype)
        check_shapes(where, layout, {n: shape for n, (shape, _) in infos.items()})
        arrays = {n: _npy_read(zf, members[n], where, n) for n in expected}
    return NumpyPolicy.from_checked_arrays(header, layout, arrays, where)  # header, dtypes and shapes checked above


_CACHE: dict[tuple[str, int, int, int, int], NumpyPolicy] = {}


def load_policy(path: PathLike, rules: Union[Rules, Mapping[str, Any], None] = None) -> NumpyPolicy:
    """Read a policy file (see the module docstring); with ``rules``, also check that it fits them.

    The whole file is checked here -- every header field, every array's dtype, shape and values, and that
    no observation can overflow -- so a policy that loads plays; anything else is a :class:`PolicyError`
    naming the file and what was wrong. Nothing is unpickled.

    Files are cached by path, device, inode, size and modification time (of the file actually read), so many
    agents built from one file share its arrays (read-only) and a rewritten file is read again.
    """
    where = _policy_path(path)
    with _open_file(where) as fh:
        try:
            st = os.fstat(fh.fileno())
            key: Optional[tuple] = (os.path.realpath(where), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except (OSError, ValueError):
            key = None
        policy = _CACHE.get(key) if key is not None else None
        if policy is None:
            policy = _read_policy(fh, where)
            if key is not None:
                if len(_CACHE) >= CACHE_SIZE:
                    del _CACHE[next(iter(_CACHE))]  # the oldest
                _CACHE[key] = policy
    if rules is not None:
        policy.check_rules(rules)
    return policy


# ---------------------------------------------------------------------------------------------- writing
def _encoder_of(rules: Rules, obs_shape: tuple, n_actions: int, obs_version: int = OBS_LAYOUT_VERSION) -> ObservationEncoder:
    """The encoder whose spaces the model has: the rules' own under ``obs_version``, with the action features if
    the observation is that long; a model for other rules is refused."""
    enc = ObservationEncoder(rules, False, obs_version)
    if obs_shape != (enc.size,):  # trained with the action features (or for other rules: refused below)
        with_features = ObservationEncoder(rules, True, obs_version)
        if obs_shape == (with_features.size,):
            enc = with_features
    if obs_shape != (enc.size,) or n_actions != enc.num_actions:
        raise PolicyError(f"the model's spaces (observation {obs_shape}, {n_actions} actions) do not match "
                          f"the rules under observation layout version {obs_version} (observation ({enc.size},), "
                          f"{enc.num_actions} actions)")
    return enc


def _header_array(header: Mapping[str, Any]) -> np.ndarray:
    """The header's stored bytes, refused if they are not JSON or are too long."""
    try:
        raw = header_bytes(header)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PolicyError(f"the policy header cannot be written as JSON (metadata must hold JSON types): "
                          f"{exc}") from None
    if raw.size > MAX_HEADER_BYTES:
        raise PolicyError(f"the policy header is {raw.size} bytes, larger than the {MAX_HEADER_BYTES} a policy header "
                          "may have; keep metadata small")
    return raw


def _write_atomically(path: PathLike, arrays: Mapping[str, np.ndarray]) -> Path:
    """``np.savez`` to a temporary file beside ``path``, then a rename: readers never see half a file."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    # ignore: numpy's stub fears a key named allow_pickle (a bool keyword there); the keys are array names,
    # and passing allow_pickle=False would store it as an array under numpy < 2.1
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, out)
    return out


def write_policy_file(path: PathLike, rules: Union[Rules, Mapping[str, Any]], layers: Sequence[Pair], action: Pair,
                      activation: str, activation_params: Mapping[str, float], obs_shape: tuple,
                      n_actions: int, metadata: Optional[Mapping[str, Any]] = None, algorithm: Optional[str] = None,
                      scorer: Optional[Mapping[str, Any]] = None, scorer_layers: Sequence[Pair] = (),
                      obs_version: int = OBS_LAYOUT_VERSION) -> Path:
    """Write an actor given as arrays (``(out, in)`` float32 weights, as in torch) to a policy file.

    The common end of every exporter (stable-baselines3 and RLlib, in ``allfives_training/``): checks the
    model's observation shape and action count against ``rules`` (with or without the action features),
    builds the header and writes the ``.npz`` atomically. What it writes loads: the same checks as
    :func:`load_policy` run first, on the header as it will be read back. ``obs_version`` is the observation
    layout version the model was trained with (recorded as ``obs_layout_version``; its agents encode with it).
    """
    try:
        obs_version = check_obs_version(obs_version)
    except ValueError as exc:
        raise PolicyError(str(exc)) from None
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise PolicyError(f"unknown activation {_r(activation)}; known: {sorted(ACTIVATIONS)}")
    if not isinstance(rules, (Rules, Mapping)):
        raise PolicyError(f"rules must be a Rules or a mapping of rules options, got {type(rules).__name__}")
    r = rules if isinstance(rules, Rules) else Rules.from_options(dict(rules))
    try:
        obs_shape = tuple(obs_shape)
        hidden = [int(np.shape(b)[0]) for _, b in layers]
    except (TypeError, ValueError, IndexError):
        raise PolicyError("obs_shape must be a shape, and layers (weight, bias) pairs of arrays with 1-D "
                          "biases") from None
    enc = _encoder_of(r, obs_shape, n_actions, obs_version)
    raw = _header_array({
        "format": POLICY_FORMAT, "version": POLICY_VERSION, "obs_layout_version": obs_version,
        "obs_size": enc.size, "num_actions": enc.num_actions, "action_features": enc.action_features,
        "action_scorer": None if scorer is None else dict(scorer), "rules": r.to_dict(),
        "activation": activation, "activation_params": dict(activation_params),
        "hidden": hidden, "algorithm": algorithm, "metadata": dict(metadata or {}),
    })
    policy = NumpyPolicy(parse_header_json(raw.tobytes(), "the policy to write"), layers, action, scorer=scorer_layers)
    arrays: dict[str, np.ndarray] = {"header": raw}
    for i, (w, b) in enumerate(policy.layers):
        arrays[f"hidden_{i}_weight"], arrays[f"hidden_{i}_bias"] = w, b
    arrays["action_weight"], arrays["action_bias"] = policy.action
    for i, (w, b) in enumerate(policy.scorer):
        arrays[f"scorer_{i}_weight"], arrays[f"scorer_{i}_bias"] = w, b
    return _write_atomically(path, arrays)
