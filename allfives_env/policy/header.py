"""The policy file's JSON header: its fields and size limits, and the check of every field against its rules.

:func:`check_header` reads a parsed header into a :class:`Layout` (sizes, activation, rules, and so the
name and shape of every weight array) or raises :class:`PolicyError` naming the field. Numbers only,
no arrays: the weights are checked against the layout by :mod:`allfives_env.policy.network`.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from ..core.errors import AllFivesError, short_repr as _r
from ..core.rules import Rules
from ..encoding import OBS_LAYOUT_VERSION, OBS_VERSIONS, ObservationShape, feature_names, observation_shape
from .activations import ACTIVATION_PARAMS, ACTIVATIONS
from .errors import PolicyError

POLICY_FORMAT = "allfives-policy"
POLICY_VERSION = 1

# ---------------------------------------------------------------------------------------------- limits
# Each is far above what a trained policy needs (tests/test_shipped_policy.py checks the shipped ones).
#: A header longer than this many bytes is refused unread.
MAX_HEADER_BYTES = 1 << 20
#: JSON nesting deeper than this is refused.
MAX_HEADER_DEPTH = 32
#: At most this many hidden layers (in the MLP, and in the action scorer).
MAX_LAYERS = 64
#: At most this many weights in all, so a header cannot make the loader allocate without bound.
MAX_PARAMETERS = 1 << 26
FLOAT32_MAX = float(np.finfo(np.float32).max)

#: Every field of a version-1 header: what it must be. The first five below the format fields are required.
HEADER_FIELDS = {
    "format": f"the string {POLICY_FORMAT!r}",
    "version": f"the integer {POLICY_VERSION}",
    "obs_layout_version": f"an observation layout version this library encodes ({' or '.join(map(str, OBS_VERSIONS))})",
    "obs_size": "a positive integer",
    "num_actions": "a positive integer",
    "rules": "an object of rules options",
    "activation": f"one of {sorted(ACTIVATIONS)}",
    "hidden": f"a list of at most {MAX_LAYERS} positive integers",
    "action_features": "true or false (default false)",
    "action_scorer": "null or an object with offset, placements, features, hidden (and optionally context)",
    "activation_params": "an object of the activation's parameters (default {})",
    "algorithm": "null or a string",
    "metadata": "an object (default {})",
}
_REQUIRED_FIELDS = ("obs_size", "num_actions", "rules", "activation", "hidden")
_SCORER_FIELDS = ("offset", "placements", "features", "hidden")
#: The scorer's optional fields: ``context`` (true: its first layer also reads the MLP's last hidden layer).
_SCORER_OPTIONAL = ("context",)
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def is_int(value: Any) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Layout:
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
    obs_version: int = OBS_LAYOUT_VERSION  # the observation layout version the policy reads

    def chains(self) -> list[tuple[str, list[tuple[str, str, int]], int, int]]:
        """``(what, [(weight name, bias name, out size)], fan_in, extra inputs of the last layer)`` per chain."""
        main = [(f"hidden_{i}_weight", f"hidden_{i}_bias", h) for i, h in enumerate(self.hidden)]
        main.append(("action_weight", "action_bias", self.num_actions))
        chains = [("layer", main, self.obs_size, 0 if self.scorer is None else self.num_actions)]
        if self.scorer is not None:
            sizes = list(self.scorer["hidden"]) + [1]
            # with context, the first scorer layer reads [the placement's row, the MLP's last hidden layer]
            fan_in = self.scorer["features"] + (self.hidden[-1] if self.scorer.get("context") else 0)
            chains.append(("scorer layer", [(f"scorer_{i}_weight", f"scorer_{i}_bias", h) for i, h in enumerate(sizes)],
                           fan_in, 0))
        return chains

    def array_names(self) -> list[tuple[str, str]]:
        """``(weight name, bias name)`` of every layer: the hidden layers, the logits layer, the scorer's."""
        return [(w, b) for _, chain, _, _ in self.chains() for w, b, _ in chain]

    def shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {}
        for _, layers, fan_in, extra in self.chains():
            for i, (w, b, size) in enumerate(layers):
                shapes[w] = (size, fan_in + (extra if i == len(layers) - 1 else 0))
                shapes[b] = (size,)
                fan_in = size
        return shapes


# ---------------------------------------------------------------------------------------------- JSON
def header_bytes(header: Mapping[str, Any]) -> np.ndarray:
    """The header as it is stored: UTF-8 JSON, keys sorted, as a ``uint8`` array."""
    return np.frombuffer(json.dumps(header, sort_keys=True).encode("utf-8"), dtype=np.uint8)


def parse_header_json(data: bytes, where: str) -> Any:
    """The JSON value of stored header bytes; a field given twice is refused."""
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


# ---------------------------------------------------------------------------------------------- the checks
def _field_error(where: str, field: str, value: Any, rule: str = "") -> PolicyError:
    return PolicyError(f"{where}: header field {field}={_r(value)} is not allowed: it must be "
                       f"{rule or HEADER_FIELDS[field]}")


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
    if not is_int(value) or value < 1:
        raise _field_error(where, field, value)
    return int(value)


def _layer_sizes(value: Any, field: str, where: str) -> tuple[int, ...]:
    if (not isinstance(value, (list, tuple)) or len(value) > MAX_LAYERS
            or not all(is_int(h) and h >= 1 for h in value)):
        raise _field_error(where, field, value, f"a list of at most {MAX_LAYERS} positive integers (layer sizes)")
    return tuple(int(h) for h in value)


def _check_identity(header: Any, where: str) -> None:
    """A header object of this format, version and observation layout version."""
    if not isinstance(header, dict) or header.get("format") != POLICY_FORMAT:
        got = (f"its header format is {_r(header.get('format'))}, expected {POLICY_FORMAT!r}"
               if isinstance(header, dict)
               else f"its header is a JSON {_JSON_TYPES.get(type(header), type(header).__name__)}, not a JSON object "
                    f"with format {POLICY_FORMAT!r}")
        raise PolicyError(f"{where} is not an All Fives policy file: {got}")
    version = header.get("version")
    if not (is_int(version) and version == POLICY_VERSION):
        raise PolicyError(f"{where} has policy file version {_r(version)}; this library reads version "
                          f"{POLICY_VERSION} (re-export the policy with this version)")
    layout_version = header.get("obs_layout_version")
    if not (is_int(layout_version) and layout_version in OBS_VERSIONS):
        raise PolicyError(f"{where} was made for observation layout version {_r(layout_version)}, "
                          f"but this library encodes observations with layout version "
                          f"{' or '.join(map(str, OBS_VERSIONS))} only; retrain or re-export the policy for one of them")


def _unknown_and_missing(obj: dict, known: Any, required: tuple[str, ...]) -> tuple[str, Optional[str]]:
    """The keys of ``obj`` not in ``known`` (shown, sorted, comma-separated; "" if none) and the first of
    ``required`` that ``obj`` lacks (None if none)."""
    unknown = ", ".join(sorted(_r(k) for k in obj if k not in known))
    return unknown, next((k for k in required if k not in obj), None)


def _check_fields(header: dict, where: str) -> None:
    """Bounded nesting, no unknown field, every required one."""
    _check_depth(header, where)
    unknown, missing = _unknown_and_missing(header, HEADER_FIELDS, _REQUIRED_FIELDS)
    if unknown:
        raise PolicyError(f"{where}: unknown header field(s) {unknown}; a version-{POLICY_VERSION} "
                          f"policy header has only {sorted(HEADER_FIELDS)}")
    if missing is not None:
        raise PolicyError(f"{where}: the header lacks {missing!r} ({HEADER_FIELDS[missing]})")


def _check_activation(header: dict, where: str) -> tuple[str, dict[str, float]]:
    """The activation's name and its parameters (only those it takes, finite float32 numbers)."""
    activation = header["activation"]
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise PolicyError(f"{where}: unknown activation {_r(activation)} in header field activation; "
                          f"known: {sorted(ACTIVATIONS)}")
    params = header.get("activation_params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _field_error(where, "activation_params", params)
    allowed = ACTIVATION_PARAMS.get(activation, ())
    for key, value in params.items():
        if key not in allowed:
            raise PolicyError(f"{where}: header field activation_params has {_r(key)}, which {activation} does not "
                              f"take; it takes {list(allowed) or 'no parameters'}")
        try:
            ok = is_real(value) and abs(float(value)) <= FLOAT32_MAX
        except OverflowError:
            ok = False
        if not ok:  # NaN fails the comparison
            raise PolicyError(f"{where}: header field activation_params.{key}={_r(value)} is not allowed: it must be a "
                              "finite number (float32)")
    return activation, {k: float(v) for k, v in params.items()}


def _check_rules(header: dict, where: str) -> tuple[Rules, ObservationShape]:
    """The header's rules and the shape of its observations (with the action features if it says so)."""
    features = header.get("action_features", False)
    if not isinstance(features, (bool, np.bool_)):
        raise _field_error(where, "action_features", features)
    rules = header["rules"]
    if not isinstance(rules, dict):
        raise _field_error(where, "rules", rules, "an object of rules options (Rules.to_dict())")
    try:
        r = Rules.from_options(rules)
        enc = observation_shape(r, bool(features), int(header["obs_layout_version"]))
    except AllFivesError as exc:
        raise PolicyError(f"{where}: header field rules is not valid rules: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise PolicyError(f"{where}: header field rules={_r(rules)} cannot be read as rules ({exc})") from None
    return r, enc


def _check_spaces(obs_size: int, num_actions: int, enc: ObservationShape, where: str) -> None:
    """``obs_size`` and ``num_actions`` are those of the header's rules."""
    r = enc.rules
    if obs_size != enc.size:
        raise PolicyError(f"{where}: header field obs_size={_r(obs_size)} does not fit its rules: {r.num_players} "
                          f"players, max_pip={r.max_pip}, {'with' if enc.action_features else 'without'} the action "
                          f"features, observation layout version {enc.obs_version}, give observations of {enc.size} "
                          "entries")
    if num_actions != enc.num_actions:
        raise PolicyError(f"{where}: header field num_actions={_r(num_actions)} does not fit its rules: they give "
                          f"{enc.num_actions} actions")


def check_header(header: Any, where: str) -> Layout:
    """Check every field of a header (types, ranges, agreement with its rules); what it describes."""
    _check_identity(header, where)
    _check_fields(header, where)
    obs_size = _positive_int(header, "obs_size", where)
    num_actions = _positive_int(header, "num_actions", where)
    hidden = _layer_sizes(header["hidden"], "hidden", where)
    activation, params = _check_activation(header, where)
    rules, enc = _check_rules(header, where)
    _check_spaces(obs_size, num_actions, enc, where)
    scorer = _check_scorer(header.get("action_scorer"), enc, where)
    if scorer is not None and scorer.get("context") and not hidden:
        raise PolicyError(f"{where}: header field action_scorer.context: true needs a hidden layer to read (hidden is "
                          "empty)")
    if header.get("algorithm") is not None and not isinstance(header["algorithm"], str):
        raise _field_error(where, "algorithm", header["algorithm"])
    if not isinstance(header.get("metadata", {}), dict):
        raise _field_error(where, "metadata", header["metadata"])
    layout = Layout(obs_size, num_actions, enc.action_features, activation, params, hidden, scorer, rules,
                    np.maximum(np.abs(enc.low), np.abs(enc.high)).astype(np.float64), enc.obs_version)
    total = sum(math.prod(s) for s in layout.shapes().values())
    if total > MAX_PARAMETERS:
        raise PolicyError(f"{where}: the layers of header fields hidden={_r(list(hidden))}"
                          f"{'' if scorer is None else ' and action_scorer.hidden=' + _r(scorer['hidden'])} would hold "
                          f"{total} weights; a policy file may hold at most {MAX_PARAMETERS}")
    return layout


def _check_scorer(spec: Any, enc: ObservationShape, where: str) -> Optional[dict]:
    """The action scorer's description: it must read exactly the features slice of the observation."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise _field_error(where, "action_scorer", spec)
    unknown, missing = _unknown_and_missing(spec, _SCORER_FIELDS + _SCORER_OPTIONAL, _SCORER_FIELDS)
    if unknown:
        raise PolicyError(f"{where}: header field action_scorer has unknown field(s) {unknown}; "
                          f"it has only {list(_SCORER_FIELDS + _SCORER_OPTIONAL)}")
    if missing is not None:
        raise PolicyError(f"{where}: header field action_scorer lacks {missing!r}; it has {list(_SCORER_FIELDS)}")
    for key in ("offset", "placements", "features"):
        value = spec[key]
        if not is_int(value) or value < (0 if key == "offset" else 1):
            raise PolicyError(f"{where}: header field action_scorer.{key}={_r(value)} is not allowed: it must be a "
                              f"{'non-negative' if key == 'offset' else 'positive'} integer")
    hidden = _layer_sizes(spec["hidden"], "action_scorer.hidden", where)
    if not enc.action_features:
        raise PolicyError(f"{where}: header field action_scorer needs action_features: true (it scores the "
                          "observation's features slice)")
    rows = enc.slices["features"]
    width = len(feature_names(enc.obs_version))
    want = {"offset": rows.start, "placements": (rows.stop - rows.start) // width, "features": width}
    for key, value in want.items():
        if spec[key] != value:
            raise PolicyError(f"{where}: header field action_scorer.{key}={_r(spec[key])} does not fit the "
                              f"observation: its features slice has offset={want['offset']}, "
                              f"placements={want['placements']}, features={want['features']}")
    context = spec.get("context", False)
    if not isinstance(context, bool):
        raise PolicyError(f"{where}: header field action_scorer.context={_r(context)} is not allowed: it must be true "
                          "(the scorer also reads the MLP's last hidden layer) or false")
    found = {"offset": int(spec["offset"]), "placements": int(spec["placements"]), "features": int(spec["features"]),
             "hidden": list(hidden)}
    return {**found, "context": True} if context else found
