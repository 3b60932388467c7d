"""The agents that play trained policy files: ``ppo`` (any file) and the shipped ``ppo-2p``/``ppo-3p``/``ppo-4p``.

``make_agent("ppo", path="runs/default/policy.npz")`` or the spec string ``ppo:path=runs/default/policy.npz``
(also ``sample=true`` to sample from the masked softmax instead of taking the argmax, and ``temperature``);
paths in spec strings may not contain commas. ``make_agent("ppo-2p")`` plays a shipped policy by name.
numpy only: the file is read by :mod:`allfives_env.policy`, which knows nothing of agents.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Optional

import numpy as np

from ..core.errors import short_repr as _r
from ..core.rules import Rules
from ..encoding import ObservationEncoder
from ..policy import SHIPPED_POLICIES, PolicyError, load_policy, shipped_policy_path
from ..policy.header import is_real
from .base import Agent, PlayerView

__all__ = ["PolicyAgent", "ShippedPolicyAgent", "policy_file_of", "shipped_agent_classes"]


class PolicyAgent(Agent):
    """Plays a policy file: the legal action with the highest logit (or a sample with ``sample=True``).

    ``path`` is a ``.npz`` policy file (written by training's exporters); the rules of the first game it
    plays are checked against the file (a mismatch raises :class:`~allfives_env.policy.PolicyError`). It
    sees only its seat's observation, computed with the encoder the policy was trained with.
    """

    name = "ppo"

    def __init__(self, seed: Optional[int] = None, path: Optional[str] = None, sample: bool = False,
                 temperature: float = 1.0) -> None:
        if path is None or (isinstance(path, str) and path.strip() == ""):
            raise PolicyError("agent 'ppo' needs path=FILE.npz (a policy exported by training), e.g. "
                              "make_agent('ppo', path='runs/default/policy.npz') or 'ppo:path=runs/default/policy.npz'")
        if not isinstance(path, (str, os.PathLike)):  # e.g. path=123 in a spec string is read as a number
            raise PolicyError(f"agent 'ppo': path={_r(path)} must be a file name (a string); a file named like a "
                              "number or true/false can be given as ./NAME")
        if not isinstance(sample, (bool, np.bool_)):
            raise PolicyError(f"agent 'ppo': sample={_r(sample)} must be true or false")
        try:
            t = float(temperature) if is_real(temperature) else math.nan
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

    def _check_rules(self, view: PlayerView) -> None:
        """Check the game's rules against the file (once per rules object) and build our encoder."""
        rules = view.rules
        if rules is not self._checked:
            self.policy.check_rules(rules)
            self._checked = rules
            # our own encoder: the policy may need the action features, which the env's may not compute
            self._encoder = ObservationEncoder(rules, self.policy.action_features, self.policy.obs_version)

    def _legal_logits(self, view: PlayerView) -> np.ndarray:
        """The policy's logits of ``view.legal`` (the rules already checked: :meth:`_check_rules`)."""
        # our encoder's observations are float32, finite and of the policy's size: no need for logits()' checks
        return self.policy.forward(view.observation(self._encoder))[view.legal]

    def evaluate(self, view: PlayerView, actions: list[int]) -> list[float]:
        """How much the policy prefers each of ``actions`` (legal actions of ``view``): its log-probability
        over the legal actions minus their mean, so an even policy gives 0 everywhere. This is what makes a
        policy a search prior (``pimc:prior=ppo-2p``, the ``pimc-net`` agent): ``pimc`` adds
        ``prior_weight`` times these values to each candidate's mean rollout value. The log-probabilities
        are the logits less one log-normaliser shared by all moves, so centred they are the centred logits."""
        self._check_rules(view)
        legal = view.legal
        z = self._legal_logits(view).astype(np.float64)
        centred = dict(zip(legal, (z - z.mean()).tolist()))
        missing = [a for a in actions if a not in centred]
        if missing:
            raise PolicyError(f"agent {self.name!r}: evaluate() got actions {missing} that are not legal here "
                              f"(legal: {legal})")
        return [centred[a] for a in actions]

    def act(self, view: PlayerView) -> int:
        self._check_rules(view)
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        logits = self._legal_logits(view)
        if not self.sample:
            return legal[int(np.argmax(logits))]
        z = logits.astype(np.float64)
        with np.errstate(over="ignore"):  # a tiny temperature: (z - max) / t is 0 or -inf, never NaN
            p = np.exp((z - z.max()) / self.temperature)
        return legal[int(self.rng.choice(len(legal), p=p / p.sum()))]


class ShippedPolicyAgent(PolicyAgent):
    """A policy that ships with the package, played like ``ppo`` but named, so specs stay short
    (``make_agent("ppo-2p")``, ``allfives evaluate ppo-2p expert``). There is one subclass per shipped
    policy (:func:`shipped_agent_classes`), whose ``name`` picks the file."""

    def __init__(self, seed: Optional[int] = None, sample: bool = False, temperature: float = 1.0) -> None:
        super().__init__(seed, path=str(shipped_policy_path(self.name)), sample=sample, temperature=temperature)
        self.params.pop("path", None)  # implied by the name; spec() must not pin this installation's path


def _shipped_class(name: str) -> type[ShippedPolicyAgent]:
    return type(f"ShippedPolicyAgent_{name.replace('-', '_')}", (ShippedPolicyAgent,),
                {"name": name, "__module__": __name__})


# registry name -> the agent class of each shipped policy (SHIPPED_POLICIES)
_SHIPPED_CLASSES = {name: _shipped_class(name) for name in SHIPPED_POLICIES}


def shipped_agent_classes() -> dict[str, tuple[type[ShippedPolicyAgent], str]]:
    """Registry name -> (agent class, description) of every shipped policy, for the agent registry."""
    return {name: (cls, SHIPPED_POLICIES[name][1]) for name, cls in _SHIPPED_CLASSES.items()}


def policy_file_of(agent: Agent) -> Optional[dict[str, str]]:
    """The policy file an agent plays, by name and SHA-256 (None for an agent that plays none): what a bench
    card or an exploitability report records, so that a number is tied to the exact weights behind it."""
    if not isinstance(agent, PolicyAgent):
        return None
    path = Path(agent.path)
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
