"""Export a trained torch actor (stable-baselines3 / sb3-contrib ``MlpPolicy``) to the numpy policy file format.

:func:`export_policy` reads the actor path of an SB3 ``ActorCriticPolicy`` (``MaskablePPO``):
``mlp_extractor.policy_net`` then ``action_net``, with the activation of the policy's ``policy_kwargs``,
and the per-placement action scorer of :mod:`allfives_training.scorer_policy` when it has one. It hands the arrays
to :func:`allfives_env.policy.write_policy_file`, which checks them and writes the ``.npz`` that
:class:`~allfives_env.policy.NumpyPolicy` plays with numpy alone, reproducing the torch logits (to float32
rounding) so the masked argmax picks the same actions. :func:`torch_activation` and
:func:`torch_linear_stack` are shared with the RLlib exporter (:mod:`allfives_training.rllib.module`).

Exporting needs torch; the library (``allfives_env``) never imports this module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from allfives_env.core.rules import Rules
from allfives_env.policy import PolicyError, write_policy_file

__all__ = ["export_policy", "torch_activation", "torch_linear_stack", "TORCH_ACTIVATIONS"]

PathLike = Union[str, "os.PathLike[str]"]
Layers = list[tuple[np.ndarray, np.ndarray]]

#: torch module class name -> (the policy file's activation name, the attributes that parametrise it)
TORCH_ACTIVATIONS = {
    "Tanh": ("tanh", ()), "ReLU": ("relu", ()), "LeakyReLU": ("leaky_relu", ("negative_slope",)),
    "ELU": ("elu", ("alpha",)), "SiLU": ("silu", ()), "Sigmoid": ("sigmoid", ()), "Identity": ("identity", ()),
}


def _arrays(linear: Any) -> tuple[np.ndarray, np.ndarray]:
    """A torch ``Linear`` layer's (weight, bias) as float32 numpy arrays (weights ``(out, in)``)."""
    return (linear.weight.detach().cpu().numpy().astype(np.float32),
            linear.bias.detach().cpu().numpy().astype(np.float32))


def _actor_layers(policy: Any) -> tuple[Layers, tuple[np.ndarray, np.ndarray], str, dict]:
    """Weights of ``mlp_extractor.policy_net`` + ``action_net`` of an SB3 ActorCriticPolicy, and its activation."""
    import torch.nn as nn

    extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
    if extractor is None or type(extractor).__name__ != "FlattenExtractor":
        raise PolicyError(f"only MlpPolicy (FlattenExtractor features) can be exported, got {type(extractor).__name__}")
    activation_fn = getattr(policy, "activation_fn", None)
    declared = TORCH_ACTIVATIONS.get(getattr(activation_fn, "__name__", ""), (None, ()))[0]
    if declared is None:
        raise PolicyError(f"activation {activation_fn!r} cannot be exported; use one of "
                          f"{sorted(n for n in TORCH_ACTIVATIONS)} in policy_kwargs['activation_fn']")
    layers, params = torch_linear_stack(policy.mlp_extractor.policy_net, declared, activation_fn, "policy_net", False)
    widen = getattr(policy.mlp_extractor, "full_width_first_layer", None)  # a trunk that skips the feature rows
    if widen is not None:
        layers[0] = (widen(layers[0][0]), layers[0][1])
    head = policy.action_net
    if not isinstance(head, nn.Linear):
        raise PolicyError(f"action_net must be a Linear layer for a Discrete action space, got {head!r}")
    return layers, _arrays(head), declared, params


def torch_activation(name: str) -> Any:
    """The torch module class of one of our activation names (``relu`` -> ``torch.nn.ReLU``), from the
    same table that export reads, so training code and exporters cannot disagree."""
    import torch.nn as nn

    for torch_name, (ours, _) in TORCH_ACTIVATIONS.items():
        if ours == name:
            return getattr(nn, torch_name)
    raise PolicyError(f"unknown activation {name!r}; known: {sorted(o for o, _ in TORCH_ACTIVATIONS.values())}")


def torch_linear_stack(modules: Any, declared: str, activation_fn: Any, what: str,
                       ends_linear: bool) -> tuple[Layers, dict[str, float]]:
    """The (weight, bias) arrays of a torch ``Linear, activation, Linear, ...`` sequence, checking that every
    activation is the declared one; it ends with an activation, or with a Linear when ``ends_linear``."""
    import torch.nn as nn

    layers: Layers = []
    params: dict[str, float] = {}
    expect_linear = True
    for module in modules:
        name = type(module).__name__
        if isinstance(module, nn.Linear) and expect_linear:
            layers.append(_arrays(module))
            expect_linear = False
        elif name in TORCH_ACTIVATIONS and not expect_linear:
            ours, attrs = TORCH_ACTIVATIONS[name]
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


def _scorer_layers(policy: Any, declared: str) -> tuple[Optional[dict[str, Any]], Layers]:
    """The per-placement action scorer of ``allfives_training.scorer_policy`` (None, [] for a plain MlpPolicy)."""
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
