"""A masked actor-critic RLModule for RLlib's new API stack, and its export to a policy file.

Written on RLlib's public classes (``TorchRLModule`` and ``ValueFunctionAPI``): RLlib's own masking
module lives under ``ray.rllib.examples`` and is not public API. The networks are the stable-baselines3
recipe's, built from the same torch pieces, so what learns there learns here:

* the actor and critic MLPs are SB3's ``MlpExtractor`` (separate trunks), or, with ``action_scorer``, the
  :class:`~allfives_training.scorer_policy.ScoredMlpExtractor` of the SB3 runs: one small network shared by
  every placement's feature row whose scores join the actor's latent, the trunks optionally without the
  feature rows (``trunk_reads_features``);
* a linear action head over that latent and a linear value head; every layer starts as SB3 starts it
  (orthogonal, gain sqrt(2) in the extractor, 0.01 on the action head, 1 on the value head), and with
  ``score_gain`` the head's block from the scores to their own logits starts at ``score_gain`` times the
  identity: logit_a = trunk_a + gain * g(row_a) from the first step (why that matters:
  :mod:`allfives_training.scorer_policy`);
* illegal actions get the lowest float logit, so neither exploration nor inference can pick them and their
  probability is zero in the PPO loss.

:func:`export_module` writes the actor, scorer included, to the same safe ``.npz`` policy file
(:mod:`allfives_env.policy`) as the SB3 exporter, so the numpy ``ppo`` agent plays it and the evaluation
harness measures it.

``model_config``: ``hidden`` (list of ints, default [128, 128]), ``activation`` (tanh | relu | elu |
leaky_relu | silu, default relu), and optionally ``action_scorer``: a
:func:`~allfives_training.scorer_policy.scorer_spec` dict (rows, hidden sizes, ``trunk_reads_features``,
``score_gain``); see :func:`model_config`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from allfives_env.core.rules import Rules
from allfives_env.policy import write_policy_file
from allfives_training.export import torch_activation, torch_linear_stack
from allfives_training.scorer_policy import ScoredMlpExtractor, scorer_spec

__all__ = ["MaskedPPOModule", "export_module", "model_config", "observation_part"]

DEFAULT_HIDDEN = (128, 128)
DEFAULT_ACTIVATION = "relu"
#: SB3's orthogonal starting gains (ActorCriticPolicy with ortho_init): trunks, action head, value head
EXTRACTOR_GAIN, ACTION_GAIN, VALUE_GAIN = float(np.sqrt(2)), 0.01, 1.0


def model_config(rules: Rules, hidden: Sequence[int], activation: str, action_scorer: Optional[Sequence[int]] = None,
                 trunk_reads_features: bool = True, score_gain: Optional[float] = 1.0) -> dict[str, Any]:
    """The module's ``model_config``: the SB3 config's ``network`` section in RLlib's terms; the scorer's
    rows are where the observation encoder of ``rules`` puts the placements' feature rows."""
    config: dict[str, Any] = {"hidden": [int(h) for h in hidden], "activation": str(activation)}
    if action_scorer is not None:
        from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder

        enc = ObservationEncoder(rules, action_features=True)
        config["action_scorer"] = scorer_spec(enc.slices["features"].start, 4 * enc.T, len(ACTION_FEATURES),
                                              action_scorer, trunk_reads_features, score_gain)
    return config


def observation_part(space: Any) -> Any:
    """The observation proper of a ``{"observations", "action_mask"}`` space (or batch)."""
    return space["observations"]


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic for PPO over ``{"observations", "action_mask"}`` observations (see the module doc)."""

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        hidden = [int(h) for h in cfg.get("hidden", DEFAULT_HIDDEN)]
        activation = torch_activation(cfg.get("activation", DEFAULT_ACTIVATION))
        obs_dim = int(observation_part(self.observation_space).shape[0])
        n_actions = int(self.action_space.n)
        arch = {"pi": hidden, "vf": hidden}
        spec = cfg.get("action_scorer")
        if spec is None:
            self.extractor: MlpExtractor = MlpExtractor(obs_dim, arch, activation, "cpu")
        else:
            rows = {k: v for k, v in dict(spec).items() if k != "score_gain"}
            self.extractor = ScoredMlpExtractor(obs_dim, arch, activation, "cpu", n_actions=n_actions, **rows)
        self.pi_head = nn.Linear(self.extractor.latent_dim_pi, n_actions)
        # the critic is built on env runners too, so that learner and runner weights have the same keys
        self.vf_head = nn.Linear(self.extractor.latent_dim_vf, 1)
        for part, gain in ((self.extractor, EXTRACTOR_GAIN), (self.pi_head, ACTION_GAIN), (self.vf_head, VALUE_GAIN)):
            part.apply(functools.partial(ActorCriticPolicy.init_weights, gain=gain))
        gain = None if spec is None else spec.get("score_gain")
        if gain is not None:  # each score to its own logit (allfives_training.scorer_policy's module doc)
            with torch.no_grad():
                self.pi_head.weight[:, self.extractor.latent_dim_pi - n_actions:] = float(gain) * torch.eye(n_actions)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi_head(self.extractor.forward_actor(observation_part(obs)))
        logits = logits.masked_fill(obs["action_mask"] <= 0, FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Optional[Any] = None) -> torch.Tensor:
        return self.vf_head(self.extractor.forward_critic(observation_part(batch[Columns.OBS]))).squeeze(-1)


def export_module(module: MaskedPPOModule, path: Union[str, Path], rules: Union[Rules, Mapping[str, Any]],
                  metadata: Optional[Mapping[str, Any]] = None) -> Path:
    """Write the actor of ``module`` (and its placement scorer) to a policy file (``make_agent("ppo",
    path=...)`` plays it): the layout the SB3 exporter writes, a first layer that skips the feature rows
    widened with zero columns."""
    name = dict(module.model_config or {}).get("activation", DEFAULT_ACTIVATION)
    act = torch_activation(name)
    extractor = module.extractor
    layers, params = torch_linear_stack(extractor.policy_net, name, act, "the RLModule's actor", False)
    head = module.pi_head
    action = (head.weight.detach().cpu().numpy().astype("float32"), head.bias.detach().cpu().numpy().astype("float32"))
    scorer, scorer_layers = None, []
    if isinstance(extractor, ScoredMlpExtractor):
        layers[0] = (extractor.full_width_first_layer(layers[0][0]), layers[0][1])
        scorer_layers, _ = torch_linear_stack(extractor.scorer, name, act, "the RLModule's action scorer", True)
        offset, placements, features = extractor.rows
        scorer = {"offset": int(offset), "placements": int(placements), "features": int(features),
                  "hidden": [int(b.shape[0]) for _, b in scorer_layers[:-1]]}
    obs_shape = tuple(observation_part(module.observation_space).shape)
    return write_policy_file(path, rules, layers, action, name, params, obs_shape, int(module.action_space.n),
                             metadata, algorithm="RLlib PPO", scorer=scorer, scorer_layers=scorer_layers)
