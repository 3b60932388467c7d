"""A MaskablePPO policy with a shared per-placement scorer over the observation's action features.

Why: with ``action_features`` the observation holds one row of features per placement (what it scores,
what it leaves the opponent, ...). A plain MLP has to learn what those rows mean once for each of the
112 placement ids, from the few positions where that id is legal. This policy adds a small network
``g`` that reads one row and gives one number, *the same network for every placement*, so what it
learns about a play transfers to every tile and end. The actor's latent is the usual MLP output
followed by the scores ``g(row_a)`` of every action (0 for the draw action), and the linear action head
turns both into logits: it can use the scores directly and still correct them from the whole position.

How that head starts matters more than anything else in learning from scratch. SB3 starts the action
head orthogonal at gain 0.01, so each score reaches its own logit through one weight of about 0.001 (and
every other logit through weights just as large): the scorer's gradient is damped a thousandfold and PPO
learns the placements one id at a time, as if the scorer were not there (7.5% against ``greedy`` after
300k steps). ``score_gain`` (``network.score_gain``, default 1) starts that block of the head as ``gain``
times the identity instead: logit_a = trunk_a + gain * g(row_a) from the first step, the scorer's
gradient arrives whole, and the same run reaches 82% against ``greedy``. The weights stay free to learn.

Configured by ``network.action_scorer: [hidden, ...]`` (needs ``env.action_features: true``). The
exported policy file stores the scorer too (``action_scorer`` in its header), and the numpy ``ppo``
agent plays it without torch.

Two things keep PPO's update cheap (it is most of a training step with this policy):

* **Only non-zero rows are scored.** The encoder writes a row for each *legal* placement and leaves the
  others zero, so a position has a handful of non-zero rows among 112. The scorer runs on those rows and
  once on a zero row, whose score every all-zero row shares: the same function (``g(0)`` is what a zero
  row scores), about a tenth of the work.
* **``network.trunk_reads_features: false``** builds the actor and critic MLPs over the position slices
  only, without the feature rows, which the scorer reads anyway. The feature rows are 90% of a 2-player
  observation, so the trunks' first layers shrink about tenfold. The exported file keeps one format: its
  first layer gets zero weights for the feature columns, so the numpy agent is unchanged.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from allfives_training.masked_distribution import FastMaskablePolicy

__all__ = ["ScoredMlpExtractor", "ScoredMaskablePolicy", "scorer_spec"]


def scorer_spec(offset: int, placements: int, features: int, hidden: Sequence[int],
                trunk_reads_features: bool = True, score_gain: Optional[float] = None) -> dict[str, Any]:
    """The ``action_scorer`` policy argument: where the feature rows are, the scorer's hidden sizes,
    whether the actor and critic MLPs read the feature rows too (``trunk_reads_features``), and the action
    head's starting weight from each score to its own logit (``score_gain``; None: SB3's start)."""
    return {"offset": int(offset), "placements": int(placements), "features": int(features),
            "hidden": [int(h) for h in hidden], "trunk_reads_features": bool(trunk_reads_features),
            "score_gain": None if score_gain is None else float(score_gain)}


class ScoredMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose actor latent also carries one score per action."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type[nn.Module], device: Any,
                 n_actions: int, offset: int, placements: int, features: int, hidden: Sequence[int],
                 trunk_reads_features: bool = True) -> None:
        end = offset + placements * features
        if end > feature_dim or n_actions < placements:
            raise ValueError(f"action scorer rows [{offset}, {end}) do not fit an "
                             f"observation of {feature_dim} with {n_actions} actions")
        self.trunk_reads_features = bool(trunk_reads_features)
        self.feature_dim = feature_dim
        super().__init__(feature_dim if self.trunk_reads_features else feature_dim - (end - offset), net_arch,
                         activation_fn, device)
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

    def trunk_input(self, features: torch.Tensor) -> torch.Tensor:
        """What the actor and critic MLPs read: the whole observation, or it without the feature rows."""
        if self.trunk_reads_features:
            return features
        offset, placements, width = self.rows
        end = offset + placements * width
        if end == features.shape[1]:  # the encoder's layout: the feature rows come last
            return features[:, :offset]
        return torch.cat([features[:, :offset], features[:, end:]], dim=1)

    def action_scores(self, features: torch.Tensor) -> torch.Tensor:
        """``(batch, n_actions)``: the scorer applied to each placement's row; 0 for other actions.

        Rows that are all zero (the placements that are not legal) all score ``g(0)``: the scorer runs on
        the non-zero rows and once on a zero row, and the zero rows share that score (also in the
        gradient). Same values as scoring every row, a fraction of the work."""
        offset, placements, width = self.rows
        rows = features[:, offset:offset + placements * width].reshape(-1, width)
        # a row is zero iff its absolute values sum to 0; a matrix-vector product finds that ~4x faster
        # than rows.ne(0).any(1), which was a tenth of the update
        live = (rows.abs() @ rows.new_ones(width)).nonzero().squeeze(1)
        zero_score = self.scorer(rows.new_zeros(1, width)).reshape(())
        scores = zero_score.expand(rows.shape[0]).index_put((live,), self.scorer(rows[live]).squeeze(1))
        scores = scores.reshape(-1, placements)
        if self.n_actions > placements:
            scores = nn.functional.pad(scores, (0, self.n_actions - placements))
        return scores

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(self.trunk_input(features)), self.action_scores(features)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(self.trunk_input(features))

    def full_width_first_layer(self, weight: Any) -> Any:
        """The actor's first-layer weight ``(out, trunk inputs)`` (numpy) widened to the whole observation,
        zero for the feature columns when the trunk does not read them: what the policy file stores."""
        if self.trunk_reads_features:
            return weight
        import numpy as np

        offset, placements, width = self.rows
        end = offset + placements * width
        full = np.zeros((weight.shape[0], self.feature_dim), dtype=weight.dtype)
        full[:, :offset] = weight[:, :offset]
        full[:, end:] = weight[:, offset:]
        return full


class ScoredMaskablePolicy(FastMaskablePolicy):
    """``MaskableActorCriticPolicy`` (MlpPolicy, with the fast masked distribution) with
    :class:`ScoredMlpExtractor`; ``action_scorer`` is a
    :func:`scorer_spec` dict."""

    def __init__(self, *args: Any, action_scorer: dict[str, Any], **kwargs: Any) -> None:
        self.action_scorer = dict(action_scorer)  # read by _build_mlp_extractor during super().__init__
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        rows = {k: v for k, v in self.action_scorer.items() if k != "score_gain"}  # the head's start: _build
        self.mlp_extractor = ScoredMlpExtractor(self.features_dim, net_arch=self.net_arch,
                                                activation_fn=self.activation_fn, device=self.device,
                                                n_actions=int(self.action_space.n), **rows)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        gain = self.action_scorer.get("score_gain")
        if gain is not None:  # each action's score to its own logit, nothing across actions (module doc)
            n = self.mlp_extractor.n_actions
            trunk = self.mlp_extractor.latent_dim_pi - n
            with torch.no_grad():
                self.action_net.weight[:, trunk:] = float(gain) * torch.eye(n)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["action_scorer"] = self.action_scorer
        return data
