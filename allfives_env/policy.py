"""Trained policies as small, safe files, and the ``ppo`` agent that plays them with numpy alone.

A policy file is one ``.npz`` archive (no pickle anywhere) holding

* ``header``: UTF-8 JSON bytes (a ``uint8`` array) -- ``format`` (``"allfives-policy"``), ``version``,
  ``obs_layout_version`` (:data:`allfives_env.encoding.OBS_LAYOUT_VERSION`), ``obs_size``,
  ``num_actions``, ``action_features`` (whether the observation carries the per-placement ``features``
  slice), the full ``rules`` it was trained under, the ``activation``, the layer sizes and free
  ``metadata`` (training step, config name, ...);
* ``hidden_{i}_weight`` / ``hidden_{i}_bias`` for each hidden layer and ``action_weight`` /
  ``action_bias`` for the logits layer, ``float32``, weights shaped ``(out, in)`` as in torch.

:func:`export_policy` writes one from a stable-baselines3 / sb3-contrib ``MlpPolicy`` (``MaskablePPO``):
it reads the actor path, ``mlp_extractor.policy_net`` then ``action_net``, with the activation of the
policy's ``policy_kwargs``, so :class:`NumpyPolicy` reproduces the torch logits (to float32 rounding)
and the masked argmax picks the same actions. Exporting needs torch; loading and playing need numpy only.

:func:`load_policy` reads a file and checks the whole of it before it returns: every header field (type,
range, and agreement with the header's own rules: ``obs_size``, ``num_actions``, the action scorer's slice),
the exact set of arrays, their dtypes (real floats) and shapes (read from each ``.npy`` header before its
data), finite values, and that no observation of those rules can overflow float32 on the way to the
logits. So a policy that loads plays a whole game; anything else is a :class:`PolicyError` naming the file
and what was wrong, at load. Nothing is ever unpickled (the archive is read member by member with
``allow_pickle=False``), and headers are bounded (:data:`MAX_HEADER_BYTES`, :data:`MAX_HEADER_DEPTH`). :meth:`NumpyPolicy.check_rules` refuses rules
whose observation or action space differs from the file's (``num_players``, ``max_pip``,
``may_draw_when_able``) or whose ``partnership`` differs (it changes what the ``partners`` slice means);
other options (target, scoring variants) do not change the spaces and are
allowed, since playing a policy under rules it was not trained on is a legitimate experiment.

:class:`PolicyAgent` is registered as ``ppo``: ``make_agent("ppo", path="runs/default/policy.npz")`` or
the spec string ``ppo:path=runs/default/policy.npz`` (also ``sample=true`` to sample from the masked
softmax instead of taking the argmax, and ``temperature``). Paths in spec strings may not contain commas.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from .agents.base import Agent, PlayerView
from .agents.registry import register_agent
from .core.errors import AllFivesError, short_repr as _r
from .core.rules import Rules
from .encoding import ACTION_FEATURES, OBS_LAYOUT_VERSION, ObservationEncoder

POLICY_FORMAT = "allfives-policy"
POLICY_VERSION = 1
#: Rules options that change the observation or the action space; a policy refuses rules that differ in any.
OBSERVATION_RULES = ("num_players", "max_pip", "may_draw_when_able", "partnership")

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "MAX_FILE_BYTES", "MAX_HEADER_BYTES", "MAX_HEADER_DEPTH", "MAX_LAYERS", "MAX_PARAMETERS", "NumpyPolicy",
    "OBSERVATION_RULES", "POLICY_FORMAT", "POLICY_VERSION", "PolicyAgent", "PolicyError",
    "SHIPPED_POLICIES", "ShippedPolicyAgent", "export_policy", "load_policy", "read_policy_header",
    "shipped_policy_path", "torch_activation", "torch_linear_stack", "write_policy_file",
]


class PolicyError(AllFivesError, ValueError):
    """A policy file that cannot be read, is not a policy file, or does not fit the game."""


# ---------------------------------------------------------------------------------------------- activations
def _tanh(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.tanh(x)


def _relu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.maximum(x, np.float32(0))


def _leaky_relu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.where(x >= 0, x, x * np.float32(p.get("negative_slope", 0.01)))


def _elu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    alpha = np.float32(p.get("alpha", 1.0))
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, np.float32(0))))


def _silu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives the right limit, 0
        return x / (np.float32(1) + np.exp(-x))


def _sigmoid(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.float32(1) / (np.float32(1) + np.exp(-x))


def _identity(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return x


ACTIVATIONS = {
    "tanh": _tanh, "relu": _relu, "leaky_relu": _leaky_relu, "elu": _elu, "silu": _silu, "sigmoid": _sigmoid,
    "identity": _identity,
}
# torch module class name -> (our name, the attributes that parametrise it)
_TORCH_ACTIVATIONS = {
    "Tanh": ("tanh", ()), "ReLU": ("relu", ()), "LeakyReLU": ("leaky_relu", ("negative_slope",)),
    "ELU": ("elu", ("alpha",)), "SiLU": ("silu", ()), "Sigmoid": ("sigmoid", ()), "Identity": ("identity", ()),
}


# ---------------------------------------------------------------------------------------------- limits
#: A header longer than this many bytes is refused unread (the shipped ones are about 2 KB).
MAX_HEADER_BYTES = 1 << 20
#: JSON nesting deeper than this is refused (the shipped headers nest 4 deep).
MAX_HEADER_DEPTH = 32
#: At most this many hidden layers (in the MLP, and in the action scorer).
MAX_LAYERS = 64
#: At most this many weights in all, so a header cannot make the loader allocate without bound
#: (the shipped policies have about half a million).
MAX_PARAMETERS = 1 << 26
#: A file larger than this is refused before its zip directory is read (weights at the limit, float32).
MAX_FILE_BYTES = 4 * MAX_PARAMETERS + 2 * MAX_HEADER_BYTES
# Largest magnitude an activation or a logit may reach on an observation of the encoder's box: far below
# float32's 3.4e38, so a policy that loads can never turn an observation into inf or NaN.
_VALUE_LIMIT = 1e30
_FLOAT32_MAX = float(np.finfo(np.float32).max)

def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


# ---------------------------------------------------------------------------------------------- the header
#: Every field of a version-1 header: what it must be. The first five below the format fields are required.
_HEADER_FIELDS = {
    "format": f"the string {POLICY_FORMAT!r}",
    "version": f"the integer {POLICY_VERSION}",
    "obs_layout_version": f"the integer {OBS_LAYOUT_VERSION}",
    "obs_size": "a positive integer",
    "num_actions": "a positive integer",
    "rules": "an object of rules options",
    "activation": f"one of {sorted(ACTIVATIONS)}",
    "hidden": f"a list of at most {MAX_LAYERS} positive integers",
    "action_features": "true or false (default false)",
    "action_scorer": "null or an object with offset, placements, features, hidden",
    "activation_params": "an object of the activation's parameters (default {})",
    "algorithm": "null or a string",
    "metadata": "an object (default {})",
}
_REQUIRED_FIELDS = ("obs_size", "num_actions", "rules", "activation", "hidden")
#: The parameters each activation takes (the torch module's attributes); any other is refused.
_ACTIVATION_PARAMS = {"leaky_relu": ("negative_slope",), "elu": ("alpha",)}
_SCORER_FIELDS = ("offset", "placements", "features", "hidden")
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


@dataclass(frozen=True)
class _Layout:
    """What a checked header says: sizes, activation, rules, and so the name and shape of every array."""

    obs_size: int
    num_actions: int
    action_features: bool
    activation: str
    params: dict
    hidden: tuple
    scorer: Optional[dict]
    rules: Rules
    obs_bound: np.ndarray  # the largest |entry| of each observation entry (the encoder's box)

    def chains(self) -> list[tuple[str, list[tuple[str, str, int]], int, int]]:
        """``(what, [(weight name, bias name, out size)], fan_in, extra inputs of the last layer)`` per chain."""
        main = [(f"hidden_{i}_weight", f"hidden_{i}_bias", h) for i, h in enumerate(self.hidden)]
        main.append(("action_weight", "action_bias", self.num_actions))
        chains = [("layer", main, self.obs_size, 0 if self.scorer is None else self.num_actions)]
        if self.scorer is not None:
            sizes = list(self.scorer["hidden"]) + [1]
            chains.append(("scorer layer", [(f"scorer_{i}_weight", f"scorer_{i}_bias", h) for i, h in enumerate(sizes)],
                           self.scorer["features"], 0))
        return chains

    def shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {}
        for _, layers, fan_in, extra in self.chains():
            for i, (w, b, size) in enumerate(layers):
                shapes[w] = (size, fan_in + (extra if i == len(layers) - 1 else 0))
                shapes[b] = (size,)
                fan_in = size
        return shapes


def _field_error(where: str, field: str, value: Any, rule: str = "") -> PolicyError:
    return PolicyError(f"{where}: header field {field}={_r(value)} is not allowed: it must be "
                       f"{rule or _HEADER_FIELDS[field]}")


def _check_depth(header: Any, where: str) -> None:
    """Refuse JSON nested deeper than MAX_HEADER_DEPTH (iteratively: no recursion to exhaust)."""
    stack, seen = [(header, 1)], 0
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            seen += 1
            if depth > MAX_HEADER_DEPTH or seen > MAX_HEADER_BYTES:
                raise PolicyError(f"{where}: the header nests deeper than {MAX_HEADER_DEPTH} levels (or holds more "
                                  f"than {MAX_HEADER_BYTES} values); a policy header is a small object whose rules and "
                                  "metadata nest a few levels at most")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))


def _positive_int(header: Mapping[str, Any], field: str, where: str) -> int:
    value = header[field]
    if not _is_int(value) or value < 1:
        raise _field_error(where, field, value)
    return int(value)


def _layer_sizes(value: Any, field: str, where: str) -> tuple[int, ...]:
    if (not isinstance(value, (list, tuple)) or len(value) > MAX_LAYERS
            or not all(_is_int(h) and h >= 1 for h in value)):
        raise _field_error(where, field, value, f"a list of at most {MAX_LAYERS} positive integers (layer sizes)")
    return tuple(int(h) for h in value)


def _check_header(header: Any, where: str) -> _Layout:
    """Check every field of a header (types, ranges, agreement with its rules); what it describes."""
    if not isinstance(header, dict) or header.get("format") != POLICY_FORMAT:
        got = (f"its header format is {_r(header.get('format'))}, expected {POLICY_FORMAT!r}"
               if isinstance(header, dict)
               else f"its header is a JSON {_JSON_TYPES.get(type(header), type(header).__name__)}, not a JSON object "
                    f"with format {POLICY_FORMAT!r}")
        raise PolicyError(f"{where} is not an All Fives policy file: {got}")
    version = header.get("version")
    if not (_is_int(version) and version == POLICY_VERSION):
        raise PolicyError(f"{where} has policy file version {_r(version)}; this library reads version "
                          f"{POLICY_VERSION} (re-export the policy with this version)")
    layout_version = header.get("obs_layout_version")
    if not (_is_int(layout_version) and layout_version == OBS_LAYOUT_VERSION):
        raise PolicyError(f"{where} was made for observation layout version {_r(layout_version)}, "
                          f"but this library encodes observations with layout version {OBS_LAYOUT_VERSION}; "
                          "retrain or re-export the policy for this layout")
    _check_depth(header, where)
    unknown = sorted(_r(k) for k in header if k not in _HEADER_FIELDS)
    if unknown:
        raise PolicyError(f"{where}: unknown header field(s) {', '.join(unknown)}; a version-{POLICY_VERSION} "
                          f"policy header has only {sorted(_HEADER_FIELDS)}")
    for key in _REQUIRED_FIELDS:
        if key not in header:
            raise PolicyError(f"{where}: the header lacks {key!r} ({_HEADER_FIELDS[key]})")
    obs_size = _positive_int(header, "obs_size", where)
    num_actions = _positive_int(header, "num_actions", where)
    hidden = _layer_sizes(header["hidden"], "hidden", where)
    activation = header["activation"]
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise PolicyError(f"{where}: unknown activation {_r(activation)} in header field activation; "
                          f"known: {sorted(ACTIVATIONS)}")
    params = header.get("activation_params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _field_error(where, "activation_params", params)
    allowed = _ACTIVATION_PARAMS.get(activation, ())
    for key, value in params.items():
        if key not in allowed:
            raise PolicyError(f"{where}: header field activation_params has {_r(key)}, which {activation} does not "
                              f"take; it takes {list(allowed) or 'no parameters'}")
        try:
            ok = _is_real(value) and abs(float(value)) <= _FLOAT32_MAX
        except OverflowError:
            ok = False
        if not ok:  # NaN fails the comparison
            raise PolicyError(f"{where}: header field activation_params.{key}={_r(value)} is not allowed: it must be a "
                              "finite number (float32)")
    features = header.get("action_features", False)
    if not isinstance(features, (bool, np.bool_)):
        raise _field_error(where, "action_features", features)
    features = bool(features)
    rules = header["rules"]
    if not isinstance(rules, dict):
        raise _field_error(where, "rules", rules, "an object of rules options (Rules.to_dict())")
    try:
        r = Rules.from_options(rules)
        enc = ObservationEncoder(r, features)
    except AllFivesError as exc:
        raise PolicyError(f"{where}: header field rules is not valid rules: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise PolicyError(f"{where}: header field rules={_r(rules)} cannot be read as rules ({exc})") from None
    if obs_size != enc.size:
        raise PolicyError(f"{where}: header field obs_size={_r(obs_size)} does not fit its rules: {r.num_players} "
                          f"players, max_pip={r.max_pip}, {'with' if features else 'without'} the action features, "
                          f"give observations of {enc.size} entries")
    if num_actions != enc.num_actions:
        raise PolicyError(f"{where}: header field num_actions={_r(num_actions)} does not fit its rules: they give "
                          f"{enc.num_actions} actions")
    scorer = _check_scorer(header.get("action_scorer"), enc, where)
    if header.get("algorithm") is not None and not isinstance(header["algorithm"], str):
        raise _field_error(where, "algorithm", header["algorithm"])
    if not isinstance(header.get("metadata", {}), dict):
        raise _field_error(where, "metadata", header["metadata"])
    layout = _Layout(obs_size, num_actions, features, activation, {k: float(v) for k, v in params.items()}, hidden,
                     scorer, r, np.maximum(np.abs(enc.low), np.abs(enc.high)).astype(np.float64))
    total = sum(math.prod(s) for s in layout.shapes().values())
    if total > MAX_PARAMETERS:
        raise PolicyError(f"{where}: the layers of header fields hidden={_r(list(hidden))}"
                          f"{'' if scorer is None else ' and action_scorer.hidden=' + _r(scorer['hidden'])} would hold "
                          f"{total} weights; a policy file may hold at most {MAX_PARAMETERS}")
    return layout


def _check_scorer(spec: Any, enc: ObservationEncoder, where: str) -> Optional[dict]:
    """The action scorer's description: it must read exactly the features slice of the observation."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise _field_error(where, "action_scorer", spec)
    unknown = sorted(_r(k) for k in spec if k not in _SCORER_FIELDS)
    if unknown:
        raise PolicyError(f"{where}: header field action_scorer has unknown field(s) {', '.join(unknown)}; "
                          f"it has only {list(_SCORER_FIELDS)}")
    for key in _SCORER_FIELDS:
        if key not in spec:
            raise PolicyError(f"{where}: header field action_scorer lacks {key!r}; it has {list(_SCORER_FIELDS)}")
    for key in ("offset", "placements", "features"):
        value = spec[key]
        if not _is_int(value) or value < (0 if key == "offset" else 1):
            raise PolicyError(f"{where}: header field action_scorer.{key}={_r(value)} is not allowed: it must be a "
                              f"{'non-negative' if key == 'offset' else 'positive'} integer")
    hidden = _layer_sizes(spec["hidden"], "action_scorer.hidden", where)
    if not enc.action_features:
        raise PolicyError(f"{where}: header field action_scorer needs action_features: true (it scores the "
                          "observation's features slice)")
    want = {"offset": enc.slices["features"].start, "placements": 4 * enc.T, "features": len(ACTION_FEATURES)}
    for key, value in want.items():
        if spec[key] != value:
            raise PolicyError(f"{where}: header field action_scorer.{key}={_r(spec[key])} does not fit the "
                              f"observation: its features slice has offset={want['offset']}, "
                              f"placements={want['placements']}, features={want['features']}")
    return {"offset": int(spec["offset"]), "placements": int(spec["placements"]), "features": int(spec["features"]),
            "hidden": list(hidden)}


def _check_dtype(where: str, name: str, dtype: np.dtype) -> None:
    if dtype.hasobject:
        raise PolicyError(f"{where}: array {name!r} holds Python objects, which only pickle can read; policy files "
                          "hold float arrays and are never unpickled")
    if dtype.kind != "f":
        raise PolicyError(f"{where}: array {name!r} has dtype {dtype}; policy weights must be real floating-point "
                          "numbers (float32, as export writes them)")


def _check_shapes(where: str, layout: _Layout, shapes: Mapping[str, tuple]) -> None:
    """Refuse arrays whose shapes do not chain from the observation through the header's layer sizes."""
    for what, layers, fan_in, extra in layout.chains():
        for i, (w, b, size) in enumerate(layers):
            if i == len(layers) - 1:
                fan_in += extra
            if tuple(shapes[w]) != (size, fan_in) or tuple(shapes[b]) != (size,):
                raise PolicyError(f"{where}: {what} {i} has weights {tuple(shapes[w])} and bias {tuple(shapes[b])}, "
                                  f"the header says {(size, fan_in)} and {(size,)} (arrays {w!r} and {b!r})")
            fan_in = size


def _as_weights(where: str, name: str, value: Any) -> np.ndarray:
    """A checked float32 copy of one weight array (real floats, finite, within float32): the policy's own,
    so making it read-only never touches the caller's arrays."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PolicyError(f"{where}: array {name!r} is not a numeric array ({exc})") from None
    _check_dtype(where, name, a.dtype)
    with np.errstate(over="ignore"):
        f = np.array(a, dtype=np.float32, order="C", copy=True)
    if not np.isfinite(f).all():
        if np.isfinite(a).all():
            raise PolicyError(f"{where}: array {name!r} has values too large for float32 (beyond +-3.4e38)")
        raise PolicyError(f"{where}: array {name!r} has non-finite values (NaN or inf); a policy's weights must all "
                          "be finite numbers")
    return f


# ---------------------------------------------------------------------------------------------- the policy
# bounds on |activation(x)| given |x| <= m (elementwise), to prove at load that no value can overflow
_ACTIVATION_BOUNDS = {
    "tanh": lambda m, p: np.minimum(m, 1.0), "sigmoid": lambda m, p: np.ones_like(m), "relu": lambda m, p: m,
    "identity": lambda m, p: m, "silu": lambda m, p: m,
    "leaky_relu": lambda m, p: m * max(1.0, abs(p.get("negative_slope", 0.01))),
    "elu": lambda m, p: np.maximum(m, abs(p.get("alpha", 1.0))),
}


class NumpyPolicy:
    """The actor of a trained policy: an MLP from observation to one logit per action, in numpy.

    ``logits(obs)`` takes one observation ``(obs_size,)`` or a batch ``(n, obs_size)``;
    ``predict(obs, mask)`` is the masked argmax (the first of equal maxima, like torch).

    Construction checks everything: the header (as :func:`load_policy` does), that the arrays are real,
    finite and chain from the observation to the actions, and that no observation of the header's rules
    can drive a value past float32 -- so a policy that exists always plays.
    """

    def __init__(self, header: dict[str, Any], layers: Sequence[tuple[np.ndarray, np.ndarray]],
                 action: tuple[np.ndarray, np.ndarray], path: Optional[str] = None,
                 scorer: Sequence[tuple[np.ndarray, np.ndarray]] = ()) -> None:
        where = path or "the policy"
        layout = _check_header(header, where)
        named: dict[str, Any] = {}
        try:
            given = [list(layers), [action], list(scorer)]
        except TypeError:
            raise PolicyError(f"{where}: layers, action and scorer must be (weight, bias) pairs of arrays") from None
        chains = layout.chains()
        if len(given[0]) != len(layout.hidden) or len(given[2]) != (0 if layout.scorer is None else len(chains[1][1])):
            raise PolicyError(f"{where}: {len(given[0])} hidden and {len(given[2])} scorer layers given, the header "
                              f"describes {len(layout.hidden)} and "
                              f"{0 if layout.scorer is None else len(chains[1][1])}")
        pairs = given[0] + given[1] + given[2]
        names = [(w, b) for _, chain, _, _ in chains for w, b, _ in chain]
        for (wn, bn), pair in zip(names, pairs):
            try:
                w, b = pair
            except (TypeError, ValueError):
                raise PolicyError(f"{where}: {wn!r}/{bn!r}: each layer must be a (weight, bias) pair of "
                                  "arrays") from None
            named[wn], named[bn] = w, b
        arrays = {n: _as_weights(where, n, a) for n, a in named.items()}
        _check_shapes(where, layout, {n: a.shape for n, a in arrays.items()})
        for a in arrays.values():  # shared between agents through the cache: never written
            a.setflags(write=False)

        self.header = header
        self.path = path
        n_hidden = len(layout.hidden)
        self.layers = [(arrays[w], arrays[b]) for w, b in names[:n_hidden]]
        self.action = (arrays["action_weight"], arrays["action_bias"])
        self.scorer = [(arrays[w], arrays[b]) for w, b in names[n_hidden + 1:]]
        self._scorer_wt = [w.T for w, _ in self.scorer]
        spec = layout.scorer or {}
        self._rows = (spec.get("offset", 0), spec.get("placements", 0), spec.get("features", 0))
        self._wt = [w.T for w, _ in self.layers]  # (in, out) views for x @ W^T
        self._action_wt = self.action[0].T
        self.activation = layout.activation
        self._act = ACTIVATIONS[self.activation]
        self._act_params = dict(layout.params)
        self.obs_size = layout.obs_size
        self.num_actions = layout.num_actions
        self.rules = layout.rules.to_dict()  # resolved: every option, defaults filled in
        self.action_features = layout.action_features
        self._check_bounds(layout.obs_bound, where)

    def _check_bounds(self, obs_bound: np.ndarray, where: str) -> None:
        """Refuse weights so large that some observation of the rules would overflow float32 on the way to the
        logits (interval arithmetic on |values|, in float64)."""
        bound = _ACTIVATION_BOUNDS[self.activation]
        params = self._act_params

        def linear(m: np.ndarray, w: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
            with np.errstate(over="ignore", invalid="ignore"):
                out = np.abs(w.astype(np.float64)) @ m + np.abs(b.astype(np.float64))
            top = float(np.max(out, initial=0.0))
            if not top < _VALUE_LIMIT:  # NaN fails too
                raise PolicyError(f"{where}: its weights are so large that {what} can overflow float32 on an "
                                  f"observation of its rules (bound {top:.3g}); a trained policy stays far below "
                                  f"{_VALUE_LIMIT:.0e}")
            return out

        m = obs_bound
        for i, (w, b) in enumerate(self.layers):
            m = bound(linear(m, w, b, f"layer {i}"), params)
        if self.scorer:
            offset, placements, width = self._rows
            rows = obs_bound[offset:offset + placements * width].reshape(placements, width).max(axis=0)
            last = len(self.scorer) - 1
            for i, (w, b) in enumerate(self.scorer):
                rows = linear(rows, w, b, f"scorer layer {i}")
                if i < last:
                    rows = bound(rows, params)
            scores = np.zeros(self.num_actions)
            scores[:placements] = rows[0]
            m = np.concatenate([m, scores])
        linear(m, *self.action, "the logits")

    def __repr__(self) -> str:
        sizes = [self.obs_size] + [b.shape[0] for _, b in self.layers] + [self.num_actions]
        return f"<NumpyPolicy {'x'.join(map(str, sizes))} {self.activation} {self.path or ''}>".replace(" >", ">")

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Logits for one observation or a batch (float32)."""
        where = self.path or "the policy"
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # values beyond float32 become inf: refused below
                x = np.asarray(obs, dtype=np.float32)
        except (TypeError, ValueError, OverflowError) as exc:
            raise PolicyError(f"the observation for {where} is not an array of numbers ({exc}); give a float array "
                              f"of shape ({self.obs_size},) or (n, {self.obs_size})") from None
        if x.ndim == 0 or x.shape[-1] != self.obs_size:
            raise PolicyError(f"observation of shape {x.shape}: the policy {where} expects ({self.obs_size},) or "
                              f"(n, {self.obs_size})")
        if not np.isfinite(x).all():
            raise PolicyError(f"the observation for {where} has non-finite entries (NaN or inf)")
        act, params = self._act, self._act_params
        h = x
        for wt, (_, b) in zip(self._wt, self.layers):
            h = act(h @ wt + b, params)
        if self.scorer:  # training.scorer_policy: one shared scorer per placement row, then the head reads both
            h = np.concatenate([h, self._action_scores(x)], axis=-1)
        return h @ self._action_wt + self.action[1]

    def _action_scores(self, x: np.ndarray) -> np.ndarray:
        offset, placements, width = self._rows
        rows = x[..., offset:offset + placements * width].reshape(x.shape[:-1] + (placements, width))
        act, params = self._act, self._act_params
        last = len(self.scorer) - 1
        for i, (wt, (_, b)) in enumerate(zip(self._scorer_wt, self.scorer)):
            rows = rows @ wt + b
            if i < last:
                rows = act(rows, params)
        scores = rows[..., 0]
        pad = self.num_actions - placements
        if pad:
            scores = np.concatenate([scores, np.zeros(scores.shape[:-1] + (pad,), np.float32)], axis=-1)
        return scores

    def predict(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The highest-logit legal action of each observation (``mask``: nonzero = legal)."""
        logits = self.logits(obs)
        try:
            legal = np.asarray(mask)
            ok = legal.shape == logits.shape and legal.dtype.kind in "biuf"
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise PolicyError(f"the action mask must be a numeric array of shape {logits.shape} (nonzero = legal), "
                              f"got {_r(mask)}")
        legal = legal.astype(bool)
        if not legal.any(axis=-1).all():
            raise PolicyError("the action mask allows no action (for some observation): nothing can be predicted")
        masked = np.where(legal, logits, -np.inf)
        return np.argmax(masked, axis=-1)

    def check_rules(self, rules: Union[Rules, Mapping[str, Any]]) -> None:
        """Raise :class:`PolicyError` unless ``rules`` give the observation and action spaces of this policy
        (and the same partnership setting)."""
        if isinstance(rules, Rules):
            r = rules
        elif isinstance(rules, Mapping):
            r = Rules.from_options(rules)
        else:
            raise PolicyError(f"rules must be a Rules or a mapping of rules options, got {type(rules).__name__} "
                              f"{_r(rules)}")
        given = r.to_dict()
        where = f"policy {self.path}" if self.path else "the policy"
        for key in OBSERVATION_RULES:
            if given[key] != self.rules[key]:
                raise PolicyError(
                    f"{where} was trained for {key}={self.rules[key]!r}, but this game has {key}={given[key]!r}; "
                    f"a policy only plays games with the same {', '.join(OBSERVATION_RULES)}"
                )
        enc = ObservationEncoder(r, self.action_features)
        if (enc.size, enc.num_actions) != (self.obs_size, self.num_actions):
            raise PolicyError(
                f"{where} expects observations of {self.obs_size} and {self.num_actions} actions, but this game has "
                f"{enc.size} and {enc.num_actions}"
            )


# ---------------------------------------------------------------------------------------------- files
# what reading a damaged or foreign zip/npy member can raise (zipfile, zlib and numpy.lib.format do not
# wrap their errors); each becomes a PolicyError naming the file and the member
_READ_ERRORS = (OSError, EOFError, ValueError, TypeError, ArithmeticError, RecursionError, RuntimeError,
                NotImplementedError, KeyError, IndexError, zipfile.BadZipFile, zlib.error, struct.error)


def _header_bytes(header: Mapping[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(header, sort_keys=True).encode("utf-8"), dtype=np.uint8)


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
    """The open policy file; only a regular file of at most MAX_FILE_BYTES (O_NONBLOCK: a named pipe must not
    block the open)."""
    try:
        fd = os.open(where, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise PolicyError(f"policy file {where} does not exist") from None
    except IsADirectoryError:
        raise PolicyError(f"{where} is a directory, not a policy file (.npz)") from None
    except (OSError, ValueError) as exc:
        raise PolicyError(f"policy file {where} cannot be opened: {exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise PolicyError(f"{where} is a directory, not a policy file (.npz)")
        if not stat.S_ISREG(st.st_mode):
            raise PolicyError(f"{where} is not a regular file (a pipe, socket or device); a policy is an .npz file")
        if st.st_size > MAX_FILE_BYTES:
            raise PolicyError(f"{where} is {st.st_size} bytes, larger than any policy file can be "
                              f"({MAX_FILE_BYTES} bytes)")
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
    except _READ_ERRORS as exc:
        reason = "the file is empty" if empty else f"not a zip (.npz) archive ({_r(str(exc))})"
        raise PolicyError(f"{where} is not a readable policy file (.npz without pickled objects): {reason}") from None
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        if not name.endswith(".npy"):
            zf.close()
            raise PolicyError(f"{where}: archive member {_r(name)} is not an .npy array; a policy file holds only "
                              "the header and weight arrays")
        key = name[:-len(".npy")]
        if key in members:
            zf.close()
            raise PolicyError(f"{where}: the archive holds array {_r(key)} twice; each array may appear once")
        members[key] = info
    return zf, members


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
    except _READ_ERRORS as exc:
        raise PolicyError(f"{where}: array {name!r} is not a readable .npy array ({_r(str(exc))})") from None
    if dtype.hasobject:
        _check_dtype(where, name, dtype)
    return tuple(shape), dtype


def _npy_read(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, name: str) -> np.ndarray:
    try:
        with zf.open(info) as f:
            return np.lib.format.read_array(f, allow_pickle=False)
    except _READ_ERRORS as exc:
        raise PolicyError(f"{where}: array {name!r} cannot be read, the file is damaged ({_r(str(exc))})") from None


def _parse_json(data: bytes, where: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                raise PolicyError(f"{where}: the header gives {_r(key)} twice; each field may appear once")
            obj[key] = value
        return obj

    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=pairs)
    except PolicyError:
        raise
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{where}: the header is not UTF-8 text ({exc})") from None
    except RecursionError:
        raise PolicyError(f"{where}: the header nests too deep to read (headers deeper than {MAX_HEADER_DEPTH} "
                          "levels are refused)") from None
    except ValueError as exc:
        raise PolicyError(f"{where}: the header is not valid JSON ({_r(str(exc))})") from None


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
    return _parse_json(_npy_read(zf, info, where, "header").tobytes(), where)


def read_policy_header(path: PathLike) -> dict[str, Any]:
    """The JSON header of a policy file, every field checked (format, version, observation layout, types,
    agreement with its rules); :func:`load_policy` also checks the arrays."""
    where = _policy_path(path)
    with _open_file(where) as fh:
        zf, members = _open_zip(fh, where)
        with zf:
            header = _read_header(zf, members, where)
    _check_header(header, where)
    return header


def _read_policy(fh: Any, where: str) -> NumpyPolicy:
    """The whole file, checked before a weight is read: header, then the set of arrays, their dtypes and
    shapes (from each .npy header, so a lying shape cannot make us allocate), then the data."""
    zf, members = _open_zip(fh, where)
    with zf:
        header = _read_header(zf, members, where)
        layout = _check_header(header, where)
        expected = layout.shapes()
        missing = [n for n in expected if n not in members]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise PolicyError(f"{where}: missing weight array {missing[0]!r}{more}; the header's layers need "
                              f"{list(expected)}")
        extra = sorted(set(members) - set(expected) - {"header"})
        if extra:
            raise PolicyError(f"{where}: unexpected array(s) {', '.join(_r(n) for n in extra[:8])}"
                              f"{' ...' if len(extra) > 8 else ''}; the header's layers (hidden={list(layout.hidden)}"
                              f"{'' if layout.scorer is None else ', action_scorer'}) need exactly {list(expected)}")
        infos = {n: _npy_info(zf, members[n], where, n) for n in expected}
        for n, (_, dtype) in infos.items():
            _check_dtype(where, n, dtype)
        _check_shapes(where, layout, {n: shape for n, (shape, _) in infos.items()})
        arrays = {n: _npy_read(zf, members[n], where, n) for n in expected}
    names = [(w, b) for _, chain, _, _ in layout.chains() for w, b, _ in chain]
    pairs = [(arrays[w], arrays[b]) for w, b in names]
    n = len(layout.hidden)
    return NumpyPolicy(header, pairs[:n], pairs[n], path=where, scorer=pairs[n + 1:])


_CACHE: dict[tuple[str, int, int, int, int], NumpyPolicy] = {}
_CACHE_SIZE = 64


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
                if len(_CACHE) >= _CACHE_SIZE:
                    del _CACHE[next(iter(_CACHE))]  # the oldest
                _CACHE[key] = policy
    if rules is not None:
        policy.check_rules(rules)
    return policy


def _actor_layers(policy: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray], str, dict]:
    """Weights of ``mlp_extractor.policy_net`` + ``action_net`` of an SB3 ActorCriticPolicy, and its activation."""
    import torch.nn as nn

    extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
    if extractor is None or type(extractor).__name__ != "FlattenExtractor":
        raise PolicyError(f"only MlpPolicy (FlattenExtractor features) can be exported, got {type(extractor).__name__}")
    activation_fn = getattr(policy, "activation_fn", None)
    declared = _TORCH_ACTIVATIONS.get(getattr(activation_fn, "__name__", ""), (None, ()))[0]
    if declared is None:
        raise PolicyError(f"activation {activation_fn!r} cannot be exported; use one of "
                          f"{sorted(n for n in _TORCH_ACTIVATIONS)} in policy_kwargs['activation_fn']")
    layers, params = torch_linear_stack(policy.mlp_extractor.policy_net, declared, activation_fn, "policy_net", False)
    head = policy.action_net
    if not isinstance(head, nn.Linear):
        raise PolicyError(f"action_net must be a Linear layer for a Discrete action space, got {head!r}")
    action = (head.weight.detach().cpu().numpy().astype(np.float32), head.bias.detach().cpu().numpy().astype(np.float32))
    return layers, action, declared, params


def torch_activation(name: str) -> Any:
    """The torch module class of one of our activation names (``relu`` -> ``torch.nn.ReLU``), from the
    same table that export reads, so training code and exporters cannot disagree."""
    import torch.nn as nn

    for torch_name, (ours, _) in _TORCH_ACTIVATIONS.items():
        if ours == name:
            return getattr(nn, torch_name)
    raise PolicyError(f"unknown activation {name!r}; known: {sorted(o for o, _ in _TORCH_ACTIVATIONS.values())}")


def torch_linear_stack(modules: Any, declared: str, activation_fn: Any, what: str,
                       ends_linear: bool) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, float]]:
    """The (weight, bias) arrays of a torch ``Linear, activation, Linear, ...`` sequence, checking that every
    activation is the declared one; it ends with an activation, or with a Linear when ``ends_linear``."""
    import torch.nn as nn

    layers: list[tuple[np.ndarray, np.ndarray]] = []
    params: dict[str, float] = {}
    expect_linear = True
    for module in modules:
        name = type(module).__name__
        if isinstance(module, nn.Linear) and expect_linear:
            layers.append((module.weight.detach().cpu().numpy().astype(np.float32),
                           module.bias.detach().cpu().numpy().astype(np.float32)))
            expect_linear = False
        elif name in _TORCH_ACTIVATIONS and not expect_linear:
            ours, attrs = _TORCH_ACTIVATIONS[name]
            if ours != declared:
                raise PolicyError(f"{what} uses {name} but policy_kwargs declares {activation_fn.__name__}")
            params = {a: float(getattr(module, a)) for a in attrs}
            expect_linear = True
        else:
            raise PolicyError(f"cannot export {what}: unexpected module {module!r} (Linear/activation pairs only)")
    if expect_linear == ends_linear:
        ending = "a Linear layer" if ends_linear else "an activation"
        raise PolicyError(f"cannot export {what}: it must end with {ending}")
    return layers, params


def _scorer_layers(policy: Any, declared: str) -> tuple[Optional[dict[str, Any]], list[tuple[np.ndarray, np.ndarray]]]:
    """The per-placement action scorer of ``training.scorer_policy`` (None, [] for a plain MlpPolicy)."""
    extractor = policy.mlp_extractor
    scorer = getattr(extractor, "scorer", None)
    if scorer is None:
        return None, []
    layers, _ = torch_linear_stack(scorer, declared, policy.activation_fn, "the action scorer", True)
    offset, placements, features = extractor.rows
    spec = {"offset": int(offset), "placements": int(placements), "features": int(features),
            "hidden": [int(b.shape[0]) for _, b in layers[:-1]]}
    return spec, layers


def export_policy(model: Any, path: PathLike, rules: Union[Rules, Mapping[str, Any]],
                  metadata: Optional[Mapping[str, Any]] = None) -> Path:
    """Write the actor of ``model`` (a ``MaskablePPO``/``PPO`` or its ``policy``) to ``path`` (``.npz``).

    ``rules`` are the rules it was trained under (a :class:`Rules` or options); ``metadata`` is stored in
    the header as given (JSON types). The file is written atomically (a temporary file, then a rename).
    Needs torch; the file then loads with numpy alone. Whether the model was trained with the action
    features is read off its observation size and recorded in the header.
    """
    policy = getattr(model, "policy", model)
    layers, action, activation, params = _actor_layers(policy)
    obs_shape = tuple(getattr(policy.observation_space, "shape", ()) or ())
    n_actions = int(getattr(policy.action_space, "n", action[0].shape[0]))
    scorer, scorer_layers = _scorer_layers(policy, activation)
    return write_policy_file(path, rules, layers, action, activation, params, obs_shape, n_actions, metadata,
                             algorithm=type(model).__name__ if model is not policy else None, scorer=scorer,
                             scorer_layers=scorer_layers)


def write_policy_file(path: PathLike, rules: Union[Rules, Mapping[str, Any]],
                      layers: Sequence[tuple[np.ndarray, np.ndarray]], action: tuple[np.ndarray, np.ndarray],
                      activation: str, activation_params: Mapping[str, float], obs_shape: tuple,
                      n_actions: int, metadata: Optional[Mapping[str, Any]] = None, algorithm: Optional[str] = None,
                      scorer: Optional[Mapping[str, Any]] = None,
                      scorer_layers: Sequence[tuple[np.ndarray, np.ndarray]] = ()) -> Path:
    """Write an actor given as arrays (``(out, in)`` float32 weights, as in torch) to a policy file.

    The common end of every exporter (stable-baselines3 here, RLlib in ``training/rllib``): checks the
    model's observation shape and action count against ``rules`` (with or without the action features),
    builds the header and writes the ``.npz`` atomically.
    """
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
    enc = ObservationEncoder(r)
    if tuple(obs_shape) != (enc.size,):  # trained with the action features (or for other rules: refused below)
        with_features = ObservationEncoder(r, action_features=True)
        if tuple(obs_shape) == (with_features.size,):
            enc = with_features
    if tuple(obs_shape) != (enc.size,) or n_actions != enc.num_actions:
        raise PolicyError(f"the model's spaces (observation {tuple(obs_shape)}, {n_actions} actions) do not match "
                          f"the rules (observation ({enc.size},), {enc.num_actions} actions)")
    header = {
        "format": POLICY_FORMAT, "version": POLICY_VERSION, "obs_layout_version": OBS_LAYOUT_VERSION,
        "obs_size": enc.size, "num_actions": enc.num_actions, "action_features": enc.action_features,
        "action_scorer": None if scorer is None else dict(scorer), "rules": r.to_dict(),
        "activation": activation, "activation_params": dict(activation_params),
        "hidden": hidden, "algorithm": algorithm, "metadata": dict(metadata or {}),
    }
    try:
        raw = _header_bytes(header)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PolicyError(f"the policy header cannot be written as JSON (metadata must hold JSON types): "
                          f"{exc}") from None
    if raw.size > MAX_HEADER_BYTES:
        raise PolicyError(f"the policy header is {raw.size} bytes, larger than the {MAX_HEADER_BYTES} a policy header "
                          "may have; keep metadata small")
    # what is written must load: the same checks as load_policy, on the header as it will be read back
    policy = NumpyPolicy(_parse_json(raw.tobytes(), "the policy to write"), layers, action, scorer=scorer_layers)
    arrays: dict[str, np.ndarray] = {"header": raw}
    for i, (w, b) in enumerate(policy.layers):
        arrays[f"hidden_{i}_weight"], arrays[f"hidden_{i}_bias"] = w, b
    arrays["action_weight"], arrays["action_bias"] = policy.action
    for i, (w, b) in enumerate(policy.scorer):
        arrays[f"scorer_{i}_weight"], arrays[f"scorer_{i}_bias"] = w, b
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, out)
    return out


# ---------------------------------------------------------------------------------------------- the agent
class PolicyAgent(Agent):
    """Plays a policy file: the legal action with the highest logit (or a sample with ``sample=True``).

    ``path`` is the ``.npz`` written by :func:`export_policy`; the rules of the first game it plays are
    checked against the file (a mismatch raises :class:`PolicyError`). numpy only.
    """

    name = "ppo"

    def __init__(self, seed: Optional[int] = None, path: Optional[str] = None, sample: bool = False,
                 temperature: float = 1.0) -> None:
        if path is None or (isinstance(path, str) and path.strip() == ""):
            raise PolicyError("agent 'ppo' needs path=FILE.npz (a policy exported by training), "
                              "e.g. make_agent('ppo', path='runs/default/policy.npz') or 'ppo:path=runs/default/policy.npz'")
        if not isinstance(path, (str, os.PathLike)):  # e.g. path=123 in a spec string is read as a number
            raise PolicyError(f"agent 'ppo': path={_r(path)} must be a file name (a string); a file named like a "
                              "number or true/false can be given as ./NAME")
        if not isinstance(sample, (bool, np.bool_)):
            raise PolicyError(f"agent 'ppo': sample={_r(sample)} must be true or false")
        try:
            t = float(temperature) if _is_real(temperature) else math.nan
        except OverflowError:
            t = math.inf
        if not (0 < t < math.inf):
            raise PolicyError(f"agent 'ppo': temperature={_r(temperature)} must be a finite number > 0")
        path = os.fspath(path)
        super().__init__(seed, path=path, sample=bool(sample), temperature=t)
        self.path = path
        self.sample = bool(sample)
        self.temperature = t
        self.policy = load_policy(self.path)
        self._checked: Optional[Rules] = None
        self._encoder: Optional[ObservationEncoder] = None

    def act(self, view: PlayerView) -> int:
        rules = view.rules
        if rules is not self._checked:
            self.policy.check_rules(rules)
            self._checked = rules
            # our own encoder: the policy may need the action features, which the env's may not compute
            self._encoder = ObservationEncoder(rules, self.policy.action_features)
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        logits = self.policy.logits(self._encoder.encode(view._game, view.seat))[legal]
        if not self.sample:
            return legal[int(np.argmax(logits))]
        z = logits.astype(np.float64)
        with np.errstate(over="ignore"):  # a tiny temperature: (z - max) / t is 0 or -inf, never NaN
            p = np.exp((z - z.max()) / self.temperature)
        return legal[int(self.rng.choice(len(legal), p=p / p.sum()))]


register_agent("ppo", PolicyAgent, "a trained policy file (numpy only): path=FILE.npz, sample=false, temperature=1")


# ---------------------------------------------------------------------------------------------- shipped policies
#: Policies shipped inside the package (``allfives_env/policies/``): registry name -> (file, description).
SHIPPED_POLICIES: dict[str, tuple[str, str]] = {
    "ppo-2p": ("ppo_2p.npz", "the shipped 2-player policy (MaskablePPO, configs/ppo_2p.yaml; numpy only)"),
    "ppo-4p": ("ppo_4p.npz", "the shipped 4-player partnership policy (configs/ppo_4p.yaml; numpy only)"),
}


def shipped_policy_path(name: str) -> Path:
    """The file of a shipped policy (see :data:`SHIPPED_POLICIES`), e.g. ``shipped_policy_path("ppo-2p")``."""
    if not isinstance(name, str) or name not in SHIPPED_POLICIES:
        raise PolicyError(f"no shipped policy {_r(name)}; shipped: {sorted(SHIPPED_POLICIES)}")
    path = Path(__file__).resolve().parent / "policies" / SHIPPED_POLICIES[name][0]
    if not path.is_file():
        raise PolicyError(f"the shipped policy {name!r} is missing from the installation ({path}); reinstall the "
                          "package (pip install -e .) or rebuild it with the config named in its README")
    return path


class ShippedPolicyAgent(PolicyAgent):
    """A policy that ships with the package, played like ``ppo`` but named, so specs stay short
    (``make_agent("ppo-2p")``, ``allfives evaluate ppo-2p expert``). Registered as one subclass per
    shipped policy, whose ``name`` picks the file."""

    def __init__(self, seed: Optional[int] = None, sample: bool = False, temperature: float = 1.0) -> None:
        super().__init__(seed, path=str(shipped_policy_path(self.name)), sample=sample, temperature=temperature)
        self.params.pop("path", None)  # implied by the name; spec() must not pin this installation's path


for _name, (_file, _description) in SHIPPED_POLICIES.items():
    register_agent(_name, type(f"ShippedPolicyAgent_{_name.replace('-', '_')}", (ShippedPolicyAgent,),
                               {"name": _name, "__module__": __name__}), _description)
