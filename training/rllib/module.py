"""A masked actor-critic RLModule for RLlib's new API stack, and its export to a policy file.

Written on RLlib's public classes (``TorchRLModule`` and ``ValueFunctionAPI``): RLlib's own masking
module lives under ``ray.rllib.examples`` and is not public API. The actor is an MLP over
``obs["observations"]`` and a linear head; illegal actions get the lowest float logit, so neither
exploration nor inference can pick them and their probability is zero in the PPO loss. The critic is a
separate MLP. The actor has exactly the layout of a stable-baselines3 ``MlpPolicy`` actor, so
:func:`export_module` writes the same safe ``.npz`` policy file (:mod:`allfives_env.policy`) that the
numpy ``ppo`` agent plays and the evaluation harness measures.

``model_config``: ``hidden`` (list of ints, default [128, 128]) and ``activation`` (tanh | relu | elu |
leaky_relu | silu, default relu).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Union

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from allfives_env.core.rules import Rules
from allfives_env.policy import write_policy_file
from allfives_training.export import torch_activation, torch_linear_stack

DEFAULT_HIDDEN = (128, 128)
DEFAULT_ACTIVATION = "relu"
INITIAL_LOGIT_SCALE = 0.01  # the actor head's initial weights are scaled by this: near-uniform first logits


def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        layers += [nn.Linear(fan_in, fan_out), activation()]
    return nn.Sequential(*layers)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic for PPO over ``{"observations", "action_mask"}`` observations (see the module doc)."""

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        hidden = [int(h) for h in cfg.get("hidden", DEFAULT_HIDDEN)]
        activation = torch_activation(cfg.get("activation", DEFAULT_ACTIVATION))
        obs_dim = int(self.observation_space["observations"].shape[0])
        n_actions = int(self.action_space.n)
        last = hidden[-1] if hidden else obs_dim
        self.pi = _mlp([obs_dim] + hidden, activation)
        self.pi_head = nn.Linear(last, n_actions)
        # the critic is built on env runners too, so that learner and runner weights have the same keys
        self.vf = _mlp([obs_dim] + hidden, activation)
        self.vf_head = nn.Linear(last, 1)
        with torch.no_grad():  # small initial logits: a near-uniform first policy over the legal actions
            self.pi_head.weight.mul_(INITIAL_LOGIT_SCALE)
            self.pi_head.bias.zero_()

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi_head(self.pi(obs["observations"]))
        logits = logits.masked_fill(obs["action_mask"] <= 0, FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Optional[Any] = None) -> torch.Tensor:
        return self.vf_head(self.vf(batch[Columns.OBS]["observations"])).squeeze(-1)


def export_module(module: MaskedPPOModule, path: Union[str, Path], rules: Union[Rules, Mapping[str, Any]],
                  metadata: Optional[Mapping[str, Any]] = None) -> Path:
    """Write the actor of ``module`` to a policy file (``make_agent("ppo", path=...)`` plays it)."""
    name = dict(module.model_config or {}).get("activation", DEFAULT_ACTIVATION)
    layers, params = torch_linear_stack(module.pi, name, torch_activation(name), "the RLModule's actor", False)
    head = module.pi_head
    action = (head.weight.detach().cpu().numpy().astype("float32"), head.bias.detach().cpu().numpy().astype("float32"))
    obs_shape = tuple(module.observation_space["observations"].shape)
    return write_policy_file(path, rules, layers, action, name, params, obs_shape, int(module.action_space.n),
                             metadata, algorithm="RLlib PPO")
