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

:func:`load_policy` reads a file, refusing anything that is not a policy file of this format and
version, or that was made for another observation layout. :meth:`NumpyPolicy.check_rules` refuses rules
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
import os
import zipfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from .agents.base import Agent, PlayerView
from .agents.registry import register_agent
from .core.errors import AllFivesError
from .core.rules import Rules
from .encoding import OBS_LAYOUT_VERSION, ObservationEncoder

POLICY_FORMAT = "allfives-policy"
POLICY_VERSION = 1
#: Rules options that change the observation or the action space; a policy refuses rules that differ in any.
OBSERVATION_RULES = ("num_players", "max_pip", "may_draw_when_able", "partnership")

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "NumpyPolicy", "OBSERVATION_RULES", "POLICY_FORMAT", "POLICY_VERSION", "PolicyAgent", "PolicyError",
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
    return x / (np.float32(1) + np.exp(-x))


def _sigmoid(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------------- the policy
class NumpyPolicy:
    """The actor of a trained policy: an MLP from observation to one logit per action, in numpy.

    ``logits(obs)`` takes one observation ``(obs_size,)`` or a batch ``(n, obs_size)``;
    ``predict(obs, mask)`` is the masked argmax (the first of equal maxima, like torch).
    """

    def __init__(self, header: dict[str, Any], layers: Sequence[tuple[np.ndarray, np.ndarray]],
                 action: tuple[np.ndarray, np.ndarray], path: Optional[str] = None,
                 scorer: Sequence[tuple[np.ndarray, np.ndarray]] = ()) -> None:
        self.header = header
        self.path = path
        self.layers = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in layers]
        self.action = (np.ascontiguousarray(action[0], np.float32), np.ascontiguousarray(action[1], np.float32))
        self.scorer = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in scorer]
        self._scorer_wt = [w.T for w, _ in self.scorer]
        spec = header.get("action_scorer") or {}
        self._rows = (int(spec.get("offset", 0)), int(spec.get("placements", 0)), int(spec.get("features", 0)))
        for w, b in self.layers + [self.action] + self.scorer:  # shared between agents through the cache: never written
            w.setflags(write=False)
            b.setflags(write=False)
        self._wt = [w.T for w, _ in self.layers]  # (in, out) views for x @ W^T
        self._action_wt = self.action[0].T
        self.activation = str(header["activation"])
        self._act = ACTIVATIONS[self.activation]
        self._act_params = dict(header.get("activation_params") or {})
        self.obs_size = int(header["obs_size"])
        self.num_actions = int(header["num_actions"])
        self.rules = dict(header["rules"])
        self.action_features = bool(header.get("action_features", False))

    def __repr__(self) -> str:
        sizes = [self.obs_size] + [b.shape[0] for _, b in self.layers] + [self.num_actions]
        return f"<NumpyPolicy {'x'.join(map(str, sizes))} {self.activation} {self.path or ''}>".replace(" >", ">")

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Logits for one observation or a batch (float32)."""
        x = np.asarray(obs, dtype=np.float32)
        if x.shape[-1] != self.obs_size:
            raise PolicyError(
                f"observation has {x.shape[-1]} entries, the policy {self.path or ''} expects {self.obs_size}"
            )
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
        masked = np.where(np.asarray(mask).astype(bool), logits, -np.inf)
        return np.argmax(masked, axis=-1)

    def check_rules(self, rules: Union[Rules, Mapping[str, Any]]) -> None:
        """Raise :class:`PolicyError` unless ``rules`` give the observation and action spaces of this policy
        (and the same partnership setting)."""
        given = rules.to_dict() if isinstance(rules, Rules) else dict(rules)
        where = f"policy {self.path}" if self.path else "the policy"
        for key in OBSERVATION_RULES:
            if key in given and key in self.rules and given[key] != self.rules[key]:
                raise PolicyError(
                    f"{where} was trained for {key}={self.rules[key]!r}, but this game has {key}={given[key]!r}; "
                    f"a policy only plays games with the same {', '.join(OBSERVATION_RULES)}"
                )
        r = rules if isinstance(rules, Rules) else Rules.from_options(given)
        enc = ObservationEncoder(r, self.action_features)
        if (enc.size, enc.num_actions) != (self.obs_size, self.num_actions):
            raise PolicyError(
                f"{where} expects observations of {self.obs_size} and {self.num_actions} actions, but this game has "
                f"{enc.size} and {enc.num_actions}"
            )


# ---------------------------------------------------------------------------------------------- files
def _header_bytes(header: Mapping[str, Any]) -> np.ndarray:
    return np.frombuffer(json.dumps(header, sort_keys=True).encode("utf-8"), dtype=np.uint8)


def _check_header(header: Any, where: str) -> dict[str, Any]:
    if not isinstance(header, dict) or header.get("format") != POLICY_FORMAT:
        got = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise PolicyError(f"{where} is not an All Fives policy file: its header format is {got!r}, "
                          f"expected {POLICY_FORMAT!r}")
    if header.get("version") != POLICY_VERSION:
        raise PolicyError(f"{where} has policy file version {header.get('version')!r}; this library reads version "
                          f"{POLICY_VERSION} (re-export the policy with this version)")
    if header.get("obs_layout_version") != OBS_LAYOUT_VERSION:
        raise PolicyError(f"{where} was made for observation layout version {header.get('obs_layout_version')!r}, "
                          f"but this library encodes observations with layout version {OBS_LAYOUT_VERSION}; "
                          "retrain or re-export the policy for this layout")
    for key in ("obs_size", "num_actions", "rules", "activation", "hidden"):
        if key not in header:
            raise PolicyError(f"{where}: the header lacks {key!r}")
    if header["activation"] not in ACTIVATIONS:
        raise PolicyError(f"{where}: unknown activation {header['activation']!r}; known: {sorted(ACTIVATIONS)}")
    return header


def _open_npz(path: PathLike) -> tuple[dict[str, np.ndarray], str]:
    where = os.fspath(path)
    try:
        with np.load(where, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise PolicyError(f"policy file {where} does not exist") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise PolicyError(f"{where} is not a readable policy file (.npz without pickled objects): {exc}") from None
    return arrays, where


def _parse_header(arrays: Mapping[str, np.ndarray], where: str) -> dict[str, Any]:
    raw = arrays.get("header")
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise PolicyError(f"{where} is not an All Fives policy file: it has no JSON header")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyError(f"{where}: the header is not valid JSON ({exc})") from None
    return _check_header(header, where)


def read_policy_header(path: PathLike) -> dict[str, Any]:
    """The JSON header of a policy file (checked for format, version and observation layout)."""
    arrays, where = _open_npz(path)
    return _parse_header(arrays, where)


_CACHE: dict[tuple[str, int, int, int], NumpyPolicy] = {}
_CACHE_SIZE = 64


def load_policy(path: PathLike, rules: Union[Rules, Mapping[str, Any], None] = None) -> NumpyPolicy:
    """Read a policy file (see the module docstring); with ``rules``, also check that it fits them.

    Files are cached by path, inode, size and modification time, so many agents built from one file share
    its arrays (read-only) and a rewritten file is read again.
    """
    where = os.fspath(path)
    try:
        st = os.stat(where)
        key: Optional[tuple[str, int, int, int]] = (os.path.realpath(where), st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    policy = _CACHE.get(key) if key is not None else None
    if policy is None:
        arrays, where = _open_npz(where)
        header = _parse_header(arrays, where)
        hidden = [int(h) for h in header["hidden"]]
        scorer = header.get("action_scorer")
        n_actions = int(header["num_actions"])
        try:
            layers = [(arrays[f"hidden_{i}_weight"], arrays[f"hidden_{i}_bias"]) for i in range(len(hidden))]
            action = (arrays["action_weight"], arrays["action_bias"])
            scorer_layers = [] if scorer is None else [
                (arrays[f"scorer_{i}_weight"], arrays[f"scorer_{i}_bias"]) for i in range(len(scorer["hidden"]) + 1)]
        except KeyError as exc:
            raise PolicyError(f"{where}: missing weight array {exc.args[0]!r}") from None
        except (TypeError, AttributeError):
            raise PolicyError(f"{where}: the header's action_scorer is malformed: {scorer!r}") from None
        # the action head reads the last hidden layer, then one score per action when there is a scorer
        _check_shapes(where, "layer", layers + [action], hidden + [n_actions], int(header["obs_size"]),
                      extra_last=0 if scorer is None else n_actions)
        if scorer is not None:
            _check_shapes(where, "scorer layer", scorer_layers, [int(h) for h in scorer["hidden"]] + [1],
                          int(scorer["features"]))
        policy = NumpyPolicy(header, layers, action, path=where, scorer=scorer_layers)
        if key is not None:
            if len(_CACHE) >= _CACHE_SIZE:
                del _CACHE[next(iter(_CACHE))]  # the oldest
            _CACHE[key] = policy
    if rules is not None:
        policy.check_rules(rules)
    return policy


def _check_shapes(where: str, what: str, layers: Sequence[tuple[np.ndarray, np.ndarray]], sizes: Sequence[int],
                  fan_in: int, extra_last: int = 0) -> None:
    """Refuse weights whose shapes do not chain from ``fan_in`` through ``sizes`` (the last layer reads
    ``extra_last`` more inputs)."""
    for i, ((w, b), size) in enumerate(zip(layers, sizes)):
        if i == len(layers) - 1:
            fan_in += extra_last
        if w.shape != (size, fan_in) or b.shape != (size,) or not np.issubdtype(w.dtype, np.floating):
            raise PolicyError(f"{where}: {what} {i} has weights {w.shape} and bias {b.shape}, the header says "
                              f"{(size, fan_in)} and {(size,)}")
        fan_in = size


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
    if activation not in ACTIVATIONS:
        raise PolicyError(f"unknown activation {activation!r}; known: {sorted(ACTIVATIONS)}")
    r = rules if isinstance(rules, Rules) else Rules.from_options(dict(rules))
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
        "hidden": [int(b.shape[0]) for _, b in layers], "algorithm": algorithm, "metadata": dict(metadata or {}),
    }
    arrays: dict[str, np.ndarray] = {"header": _header_bytes(header)}
    for i, (w, b) in enumerate(layers):
        arrays[f"hidden_{i}_weight"], arrays[f"hidden_{i}_bias"] = w, b
    arrays["action_weight"], arrays["action_bias"] = action
    for i, (w, b) in enumerate(scorer_layers):
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
        if path is None or str(path).strip() == "":
            raise PolicyError("agent 'ppo' needs path=FILE.npz (a policy exported by training), "
                              "e.g. make_agent('ppo', path='runs/default/policy.npz') or 'ppo:path=runs/default/policy.npz'")
        if not isinstance(sample, (bool, np.bool_)):
            raise PolicyError(f"agent 'ppo': sample={sample!r} must be true or false")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
            raise PolicyError(f"agent 'ppo': temperature={temperature!r} must be a number > 0")
        super().__init__(seed, path=str(path), sample=bool(sample), temperature=float(temperature))
        self.path = str(path)
        self.sample = bool(sample)
        self.temperature = float(temperature)
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
        z = logits.astype(np.float64) / self.temperature
        p = np.exp(z - z.max())
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
    if name not in SHIPPED_POLICIES:
        raise PolicyError(f"no shipped policy {name!r}; shipped: {sorted(SHIPPED_POLICIES)}")
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
