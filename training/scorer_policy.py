"""A MaskablePPO policy with a shared per-placement scorer over the observation's action features.

Why: with ``action_features`` the observation holds one row of features per placement (what it scores,
what it leaves the opponent, ...). A plain MLP has to learn what those rows mean once for each of the
112 placement ids, from the few positions where that id is legal. This policy adds a small network
``g`` that reads one row and gives one number, *the same network for every placement*, so what it
learns about a play transfers to every tile and end. The actor's latent is the usual MLP output
followed by the scores ``g(row_a)`` of every action (0 for the draw action), and the linear action head
turns both into logits: it can use the scores directly and still correct them from the whole position.

Configured by ``network.action_scorer: [hidden, ...]`` (needs ``env.action_features: true``). The
exported policy file stores the scorer too (``action_scorer`` in its header), and the numpy ``ppo``
agent plays it without torch.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

__all__ = ["ScoredMlpExtractor", "ScoredMaskablePolicy", "scorer_spec"]


def scorer_spec(offset: int, placements: int, features: int, hidden: Sequence[int]) -> dict[str, Any]:
    """The ``action_scorer`` policy argument: where the feature rows are and the scorer's hidden sizes."""
    return {"offset": int(offset), "placements": int(placements), "features": int(features),
            "hidden": [int(h) for h in hidden]}


class ScoredMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose actor latent also carries one score per action."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type[nn.Module], device: Any,
                 n_actions: int, offset: int, placements: int, features: int, hidden: Sequence[int]) -> None:
        super().__init__(feature_dim, net_arch, activation_fn, device)
        if offset + placements * features > feature_dim or n_actions < placements:
            raise ValueError(f"action scorer rows [{offset}, {offset + placements * features}) do not fit an "
                             f"observation of {feature_dim} with {n_actions} actions")
        layers: list[nn.Module] = []
        last = features
        for size in hidden:
            layers += [nn.Linear(last, size), activation_fn()]
            last = size
        layers.append(nn.Linear(last, 1))
        self.scorer = nn.Sequential(*layers).to(device)
        self.rows = (offset, placements, features)
        self.n_actions = n_actions
        self.latent_dim_pi = self.latent_dim_pi + n_actions

    def action_scores(self, features: torch.Tensor) -> torch.Tensor:
        """``(batch, n_actions)``: the scorer applied to each placement's row; 0 for other actions."""
        offset, placements, width = self.rows
        rows = features[:, offset:offset + placements * width].reshape(-1, placements, width)
        scores = self.scorer(rows).squeeze(-1)
        if self.n_actions > placements:
            scores = nn.functional.pad(scores, (0, self.n_actions - placements))
        return scores

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(features), self.action_scores(features)], dim=1)


class ScoredMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` (MlpPolicy) with :class:`ScoredMlpExtractor`; ``action_scorer`` is a
    :func:`scorer_spec` dict."""

    def __init__(self, *args: Any, action_scorer: dict[str, Any], **kwargs: Any) -> None:
        self.action_scorer = dict(action_scorer)  # read by _build_mlp_extractor during super().__init__
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ScoredMlpExtractor(self.features_dim, net_arch=self.net_arch,
                                                activation_fn=self.activation_fn, device=self.device,
                                                n_actions=int(self.action_space.n), **self.action_scorer)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["action_scorer"] = self.action_scorer
        return data
