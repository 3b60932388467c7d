"""The self-play learner's network: an actor the numpy policy format plays as it is, and a critic that may see
every hand.

The actor is the project's placement-scorer policy (``allfives_training/scorer_policy.py`` explains the idea):
an MLP over the position (the observation without the per-placement feature rows) gives ``h``; one small
network ``g`` scores each legal placement's feature row (with ``scorer_context``, the row and ``h``: a scorer
that reads only the row cannot weigh ``p_lose`` or ``domino`` differently when a side is ten points from the
target); the logits layer reads ``[h, scores]``, its score
block starting at ``score_gain`` times the identity so each score reaches its own logit whole from the first
update. That is exactly the shape :class:`allfives_env.policy.NumpyPolicy` plays (its first layer widened to
the whole observation with zero weights on the feature rows), so :func:`export_actor` writes a policy file
that the numpy ``ppo`` agent, the batch policy opponent and ``allfives evaluate`` play without torch.

The critic is used in training only, so it may read what no player sees (PerfectDou's "perfect-information
distillation"): with ``critic: full`` it reads the full state (every hand and the boneyard, the self-play env's
privileged ``state`` output) plus a one-hot of the seat it values; with ``critic: own`` it reads that seat's
own position, as the actor does. Knowing the hands removes most of the noise in the value of a deal, which
is what lets a small batch of games train a useful critic. A seat's value is asked both for the seat to act
and, at a rollout's end, for every learner seat of every game (its trajectory's bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from torch import nn

from allfives_env.core.rules import Rules
from allfives_env.encoding import feature_names, observation_shape
from allfives_env.policy import write_policy_file

__all__ = ["NetShape", "SelfPlayNet", "export_actor"]

#: The gap below the best legal logit at which illegal actions sit in the softmax: e^-80 is nothing next to
#: any legal probability, and a finite gap keeps torch's exp on its fast path.
MASK_GAP = 80.0


@dataclass(frozen=True)
class NetShape:
    """Where the parts of an observation are, for the rules (with action features): the feature rows
    ``[offset, end)``, one row of ``width`` per placement id, ``placements`` of them; the observation and
    state sizes; the seats."""

    obs_size: int
    offset: int
    end: int
    width: int
    placements: int
    num_actions: int
    state_size: int
    players: int
    obs_version: int = 1

    @classmethod
    def of(cls, rules: Rules, obs_version: int = 1) -> "NetShape":
        """The shape of ``rules``' observation with action features, under observation version ``obs_version``."""
        shape = observation_shape(rules, True, obs_version)
        features = shape.slices["features"]
        width = len(feature_names(obs_version))
        P = rules.num_players
        T = (features.stop - features.start) // (4 * width)
        return cls(shape.size, features.start, features.stop, width, (features.stop - features.start) // width,
                   shape.num_actions, T * P + T + shape.size + P, P, obs_version)

    @property
    def position_size(self) -> int:
        return self.obs_size - (self.end - self.offset)


def _linear(inputs: int, out: int, std: float) -> nn.Linear:
    """A linear layer with CleanRL's orthogonal start."""
    layer = nn.Linear(inputs, out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


def _trunk(inputs: int, hidden: int) -> nn.Sequential:
    """Two ReLU layers of ``hidden`` units."""
    return nn.Sequential(_linear(inputs, hidden, np.sqrt(2)), nn.ReLU(), _linear(hidden, hidden, np.sqrt(2)), nn.ReLU())


class SelfPlayNet(nn.Module):
    """Actor (position MLP + shared placement scorer, logits over ``[h, scores]``) and critic (``full``: state
    and seat; ``own``: the seat's position)."""

    def __init__(self, shape: NetShape, hidden: int = 128, scorer_hidden: int = 32, critic: str = "full",
                 score_gain: float = 1.0, scorer_context: bool = False) -> None:
        super().__init__()
        if critic not in ("full", "own"):
            raise ValueError(f"critic={critic!r}: choose 'full' (every hand, training only) or 'own' (the seat's view)")
        self.shape, self.critic_kind = shape, critic
        s = shape
        self.trunk = _trunk(s.position_size, hidden)
        self.head = _linear(hidden + s.num_actions, s.num_actions, 0.01)
        with torch.no_grad():
            self.head.weight[:, hidden:] = float(score_gain) * torch.eye(s.num_actions)
        self.scorer_context = bool(scorer_context)
        scorer_inputs = s.width + (hidden if self.scorer_context else 0)
        self.scorer = nn.Sequential(nn.Linear(scorer_inputs, scorer_hidden), nn.ReLU(), nn.Linear(scorer_hidden, 1))
        critic_inputs = s.state_size + s.players if critic == "full" else s.position_size
        self.critic = nn.Sequential(*_trunk(critic_inputs, hidden), _linear(hidden, 1, 1.0))

    # ------------------------------------------------------------------ actor
    def position(self, obs: torch.Tensor) -> torch.Tensor:
        """The observation without the feature rows (what the trunk reads)."""
        s = self.shape
        return torch.cat([obs[:, :s.offset], obs[:, s.end:]], dim=1)

    def scores(self, obs: torch.Tensor, mask: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """``(B, num_actions)``: ``g(row_a)`` for the legal placements, ``g(0)`` for the other placement ids (their
        rows are zero), 0 past the placements; ``g`` runs on the legal rows only. With ``scorer_context``, ``g``
        reads ``[row_a, h]`` (``h``: the trunk's output for that observation), so it can weigh a placement's
        features by the position (how close each side is to the target), and ``g(0)`` is one per observation."""
        s = self.shape
        rows = obs[:, s.offset:s.end].reshape(-1, s.placements, s.width)
        legal = mask[:, :s.placements]
        where = legal.nonzero(as_tuple=True)
        if self.scorer_context:
            zero = self.scorer(torch.cat([rows.new_zeros(len(obs), s.width), h], dim=1))  # (B, 1)
            scores = zero.expand(legal.shape).clone()
            found = self.scorer(torch.cat([rows[where], h[where[0]]], dim=1)).squeeze(1)
        else:
            scores = self.scorer(rows.new_zeros(1, s.width)).reshape(()).expand(legal.shape).clone()
            found = self.scorer(rows[where]).squeeze(1)
        scores = scores.index_put(where, found)
        if s.num_actions > s.placements:
            scores = nn.functional.pad(scores, (0, s.num_actions - s.placements))
        return scores

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.trunk(self.position(obs))
        return self.head(torch.cat([h, self.scores(obs, mask, h)], dim=1))

    def log_probs(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probabilities over the actions, illegal ones :data:`MASK_GAP` below the best legal logit."""
        logits = self.logits(obs, mask)
        best = torch.where(mask, logits, -1e8).max(1, keepdim=True).values.detach()
        return torch.where(mask, logits - best, -MASK_GAP).log_softmax(1)

    def sample(self, obs: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """(actions, their log-probabilities): Gumbel-max over the legal actions only."""
        logp = self.log_probs(obs, mask)
        u = torch.rand(logp.shape, generator=generator).clamp_(1e-20, 1.0)
        action = torch.where(mask, logp - torch.log(-torch.log(u)), -torch.inf).argmax(1)
        return action, logp.gather(1, action[:, None]).squeeze(1)

    # ------------------------------------------------------------------ critic
    def critic_input(self, obs: Optional[torch.Tensor], state: Optional[torch.Tensor],
                     seats: torch.Tensor) -> torch.Tensor:
        """What the critic reads for ``seats``: ``[state, one-hot seat]`` (full) or the seat's position (own)."""
        if self.critic_kind == "full":
            assert state is not None
            return torch.cat([state, nn.functional.one_hot(seats, self.shape.players).float()], dim=1)
        assert obs is not None
        return self.position(obs)

    def value(self, critic_input: torch.Tensor) -> torch.Tensor:
        return self.critic(critic_input).squeeze(1)


def export_actor(net: SelfPlayNet, rules: Rules, path: Path, metadata: Optional[dict[str, Any]] = None) -> Path:
    """The actor as a numpy policy file (the header records the rules and ``metadata``); returns its path."""
    s = net.shape
    linears = [m for m in net.trunk if isinstance(m, nn.Linear)]
    arrays = [(m.weight.detach().numpy().astype(np.float32), m.bias.detach().numpy().astype(np.float32))
              for m in linears]
    first = np.zeros((arrays[0][0].shape[0], s.obs_size), np.float32)
    first[:, :s.offset], first[:, s.end:] = arrays[0][0][:, :s.offset], arrays[0][0][:, s.offset:]
    layers = [(first, arrays[0][1])] + arrays[1:]
    action = (net.head.weight.detach().numpy().astype(np.float32), net.head.bias.detach().numpy().astype(np.float32))
    scorer = [(m.weight.detach().numpy().astype(np.float32), m.bias.detach().numpy().astype(np.float32))
              for m in net.scorer if isinstance(m, nn.Linear)]
    spec: dict[str, Any] = {"offset": s.offset, "placements": s.placements, "features": s.width,
                            "hidden": [w.shape[0] for w, _ in scorer[:-1]]}
    if net.scorer_context:
        spec["context"] = True
    return write_policy_file(path, rules, layers, action, "relu", {}, (s.obs_size,), s.num_actions,
                             metadata=metadata, algorithm="selfplay-ppo", scorer=spec, scorer_layers=scorer,
                             obs_version=s.obs_version)
