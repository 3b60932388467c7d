"""A trained policy's actor in numpy (:class:`NumpyPolicy`): checked weights, the forward pass, its rules.

The network is an MLP from the observation to one logit per action, optionally with a scorer shared by
every placement's feature row (``allfives_training/scorer_policy.py``) whose scores the logits layer also reads.
Building one checks everything: the header, that the arrays are real, finite and chain from the
observation to the actions, and that no observation of the header's rules can drive a value past float32.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ..core.errors import short_repr as _r
from ..core.rules import Rules
from ..encoding import observation_shape
from .activations import ACTIVATION_BOUNDS, ACTIVATIONS
from .errors import PolicyError
from .header import Layout, check_header

#: Rules options that change the observation or the action space (``partnership`` changes what the
#: ``partners`` slice means); a policy refuses rules that differ in any.
OBSERVATION_RULES = ("num_players", "max_pip", "may_draw_when_able", "partnership")
# Largest magnitude an activation or a logit may reach on an observation of the encoder's box: far below
# float32's 3.4e38, so a policy that loads can never turn an observation into inf or NaN.
VALUE_LIMIT = 1e30

Pair = tuple[np.ndarray, np.ndarray]


# ---------------------------------------------------------------------------------------------- the arrays
def check_dtype(where: str, name: str, dtype: np.dtype) -> None:
    """Refuse arrays of Python objects (pickle) and of anything but real floats."""
    if dtype.hasobject:
        raise PolicyError(f"{where}: array {name!r} holds Python objects, which only pickle can read; policy files "
                          "hold float arrays and are never unpickled")
    if dtype.kind != "f":
        raise PolicyError(f"{where}: array {name!r} has dtype {dtype}; policy weights must be real floating-point "
                          "numbers (float32, as export writes them)")


def check_shapes(where: str, layout: Layout, shapes: Mapping[str, tuple]) -> None:
    """Refuse arrays whose shapes do not chain from the observation through the header's layer sizes."""
    expected = layout.shapes()
    for what, layers, _, _ in layout.chains():
        for i, (w, b, _) in enumerate(layers):
            if tuple(shapes[w]) != expected[w] or tuple(shapes[b]) != expected[b]:
                raise PolicyError(f"{where}: {what} {i} has weights {tuple(shapes[w])} and bias {tuple(shapes[b])}, "
                                  f"the header says {expected[w]} and {expected[b]} (arrays {w!r} and {b!r})")


def _as_weights(where: str, name: str, value: Any) -> np.ndarray:
    """A checked float32 copy of one weight array (real floats, finite, within float32): the policy's own,
    so making it read-only never touches the caller's arrays."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PolicyError(f"{where}: array {name!r} is not a numeric array ({exc})") from None
    check_dtype(where, name, a.dtype)
    with np.errstate(over="ignore"):
        f = np.array(a, dtype=np.float32, order="C", copy=True)
    if not np.isfinite(f).all():
        if np.isfinite(a).all():
            raise PolicyError(f"{where}: array {name!r} has values too large for float32 (beyond +-3.4e38)")
        raise PolicyError(f"{where}: array {name!r} has non-finite values (NaN or inf); a policy's weights must all "
                          "be finite numbers")
    return f


def _named_arrays(where: str, layout: Layout, layers: Any, action: Any, scorer: Any) -> dict[str, np.ndarray]:
    """The given (weight, bias) pairs by array name, checked: as many as the header says, real, finite,
    float32 copies, shapes chaining through the layers; read-only."""
    try:
        given = [list(layers), [action], list(scorer)]
    except TypeError:
        raise PolicyError(f"{where}: layers, action and scorer must be (weight, bias) pairs of arrays") from None
    chains = layout.chains()
    n_scorer = 0 if layout.scorer is None else len(chains[1][1])
    if len(given[0]) != len(layout.hidden) or len(given[2]) != n_scorer:
        raise PolicyError(f"{where}: {len(given[0])} hidden and {len(given[2])} scorer layers given, the header "
                          f"describes {len(layout.hidden)} and {n_scorer}")
    named: dict[str, Any] = {}
    for (wn, bn), pair in zip(layout.array_names(), given[0] + given[1] + given[2]):
        try:
            w, b = pair
        except (TypeError, ValueError):
            raise PolicyError(f"{where}: {wn!r}/{bn!r}: each layer must be a (weight, bias) pair of "
                              "arrays") from None
        named[wn], named[bn] = w, b
    arrays = _frozen_weights(where, named)
    check_shapes(where, layout, {n: a.shape for n, a in arrays.items()})
    return arrays


def _frozen_weights(where: str, named: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """:func:`_as_weights` of each array, read-only (shared between agents through the load cache)."""
    arrays = {n: _as_weights(where, n, a) for n, a in named.items()}
    for a in arrays.values():
        a.setflags(write=False)
    return arrays


# ---------------------------------------------------------------------------------------------- the policy
class NumpyPolicy:
    """The actor of a trained policy: an MLP from observation to one logit per action, in numpy.

    ``logits(obs)`` takes one observation ``(obs_size,)`` or a batch ``(n, obs_size)``;
    ``predict(obs, mask)`` is the masked argmax (the first of equal maxima, like torch).

    Construction checks everything: the header (as :func:`~allfives_env.policy.load_policy` does), that
    the arrays are real, finite and chain from the observation to the actions, and that no observation
    of the header's rules can drive a value past float32 -- so a policy that exists always plays.
    """

    def __init__(self, header: dict[str, Any], layers: Sequence[Pair], action: Pair, path: Optional[str] = None,
                 scorer: Sequence[Pair] = ()) -> None:
        where = path or "the policy"
        layout = check_header(header, where)
        self._build(header, layout, _named_arrays(where, layout, layers, action, scorer), path)

    @classmethod
    def from_checked_arrays(cls, header: dict[str, Any], layout: Layout, arrays: Mapping[str, np.ndarray],
                            path: str) -> "NumpyPolicy":
        """The policy of a file whose header, array names, dtypes and shapes the reader has checked already
        (:mod:`allfives_env.policy.file`): only the values are left to check."""
        policy = cls.__new__(cls)
        cls._build(policy, header, layout, _frozen_weights(path, arrays), path)
        return policy

    def _build(self, header: dict[str, Any], layout: Layout, arrays: Mapping[str, np.ndarray],
               path: Optional[str]) -> None:
        where = path or "the policy"
        names = layout.array_names()
        n_hidden = len(layout.hidden)

        self.header = header
        self.path = path
        self.layers = [(arrays[w], arrays[b]) for w, b in names[:n_hidden]]
        self.action = (arrays["action_weight"], arrays["action_bias"])
        self.scorer = [(arrays[w], arrays[b]) for w, b in names[n_hidden + 1:]]
        self._scorer_wt = [w.T for w, _ in self.scorer]
        spec = layout.scorer or {}
        self._rows = (spec.get("offset", 0), spec.get("placements", 0), spec.get("features", 0))
        self.scorer_context = bool(spec.get("context", False))
        self._wt = [w.T for w, _ in self.layers]  # (in, out) views for x @ W^T
        self._action_wt = self.action[0].T
        self.activation = layout.activation
        self._act = ACTIVATIONS[self.activation]
        self._act_params = dict(layout.params)
        self.obs_size = layout.obs_size
        self.num_actions = layout.num_actions
        self.rules = layout.rules.to_dict()  # resolved: every option, defaults filled in
        self.action_features = layout.action_features
        self.obs_version = layout.obs_version  # the observation layout version it reads (its encoder's)
        self._check_bounds(layout.obs_bound, where)

    def _check_bounds(self, obs_bound: np.ndarray, where: str) -> None:
        """Refuse weights so large that some observation of the rules would overflow float32 on the way to the
        logits (interval arithmetic on |values|, in float64)."""
        bound = ACTIVATION_BOUNDS[self.activation]
        params = self._act_params

        def linear(m: np.ndarray, w: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
            with np.errstate(over="ignore", invalid="ignore"):
                out = np.abs(w.astype(np.float64)) @ m + np.abs(b.astype(np.float64))
            top = float(np.max(out, initial=0.0))
            if not top < VALUE_LIMIT:  # NaN fails too
                raise PolicyError(f"{where}: its weights are so large that {what} can overflow float32 on an "
                                  f"observation of its rules (bound {top:.3g}); a trained policy stays far below "
                                  f"{VALUE_LIMIT:.0e}")
            return out

        m = obs_bound
        for i, (w, b) in enumerate(self.layers):
            m = bound(linear(m, w, b, f"layer {i}"), params)
        if self.scorer:
            offset, placements, width = self._rows
            rows = obs_bound[offset:offset + placements * width].reshape(placements, width).max(axis=0)
            if self.scorer_context:
                rows = np.concatenate([rows, m])
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
        return self.forward(x)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """:meth:`logits` without the input checks, for a float32 observation (or batch) already known to be
        finite and of the right size: the per-move path of :class:`~allfives_env.agents.PolicyAgent`, whose
        encoder makes them so. Anything else should go through :meth:`logits`."""
        act, params = self._act, self._act_params
        h = x
        for wt, (_, b) in zip(self._wt, self.layers):
            h = act(h @ wt + b, params)
        if self.scorer:  # allfives_training.scorer_policy: one shared scorer per placement row, then the head reads both
            h = np.concatenate([h, self._action_scores(x, h)], axis=-1)
        return h @ self._action_wt + self.action[1]

    def _action_scores(self, x: np.ndarray, h: np.ndarray) -> np.ndarray:
        """Each placement's score; with ``context`` the first layer reads the row and ``h`` (the MLP's last hidden
        layer), computed as the row's part per placement plus ``h``'s part once per observation."""
        offset, placements, width = self._rows
        rows = x[..., offset:offset + placements * width].reshape(x.shape[:-1] + (placements, width))
        act, params = self._act, self._act_params
        last = len(self.scorer) - 1
        for i, (wt, (_, b)) in enumerate(zip(self._scorer_wt, self.scorer)):
            if i == 0 and self.scorer_context:
                rows = rows @ wt[:width] + (h @ wt[width:] + b)[..., None, :]
            else:
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
        (and the same partnership setting). Other options (target, scoring variants) do not change the
        spaces and are allowed: playing a policy under rules it was not trained on is a legitimate experiment."""
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
        enc = observation_shape(r, self.action_features, self.obs_version)
        if (enc.size, enc.num_actions) != (self.obs_size, self.num_actions):
            raise PolicyError(
                f"{where} expects observations of {self.obs_size} and {self.num_actions} actions, but this game has "
                f"{enc.size} and {enc.num_actions}"
            )
