"""``allfives_v0`` as an RLlib ``MultiAgentEnv`` (new API stack), action mask kept.

Turn-based: each ``step`` returns an observation only for the learning agent that acts next, as RLlib's
turn-based examples do. Rewards are collected per agent from every AEC step (also the other seats'
moves) and handed to an agent with its next observation, so nothing is lost between its turns; when the
game ends every learning agent gets its final observation and the rest of its reward.

Observations are ``{"observations": Box, "action_mask": Box(0, 1, float32)}``; the mask is read by
:class:`allfives_training.rllib.module.MaskedPPOModule`, which puts ``-inf`` on illegal actions.

Who learns (``learners``): ``"all"`` seats (self-play), or ``"one_side"``: each episode draws one side
(a player, or a partnership's two seats) to be played by RLlib, and every other seat is played inside the
env by an agent from the registry, drawn from the ``opponents`` mixture (spec -> weight) afresh per
episode. So baselines are fixed opponents without an RLModule of their own, and they see exactly what a
seat may see (:class:`~allfives_env.agents.PlayerView`).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from allfives_env import allfives_v0
from allfives_env.core.actions import is_action_id
from allfives_env.core.errors import IllegalActionError, RulesError, short_repr
from allfives_env.core.rules import Rules, rules_from
from allfives_env.seat_setup import build_opponent, either, opponent_mixture

LEARNERS = ("all", "one_side")


class AllFivesMultiAgentEnv(MultiAgentEnv):
    """RLlib multi-agent env over ``allfives_v0.raw_env``. ``config`` keys: ``rules`` (a mapping of rules
    options or a :class:`Rules`), ``reward``, ``episode``, ``action_features`` (as for the PettingZoo env),
    ``learners`` ("all" | "one_side"), ``opponents`` ({spec: weight}, used with "one_side")."""

    def __init__(self, config: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - {"rules", "reward", "episode", "action_features", "learners", "opponents"})
        if unknown:
            raise RulesError(f"AllFivesMultiAgentEnv: unknown config key(s) {unknown}; allowed: rules, reward, "
                             "episode, action_features, learners, opponents")
        rules = config.get("rules") or {}
        # a mapping of rules options, as the vector env's RLlib creator takes them; a Rules as it is
        self.rules = rules_from(None, rules) if isinstance(rules, Mapping) else rules_from(rules, {})
        self.learners = config.get("learners", "all")
        if self.learners not in LEARNERS:
            raise RulesError(f"learners={short_repr(self.learners)} is not allowed: choose {either(LEARNERS)}")
        opponents = config.get("opponents")
        if opponents is None:
            opponents = {"random": 1.0}
        # the envs' one checker of a mixture: a spec -> weight mapping here, or a spec or list as elsewhere
        specs, self._opponent_weights = (opponent_mixture(list(opponents), list(opponents.values()))
                                         if isinstance(opponents, Mapping) else opponent_mixture(opponents))
        self._opponent_specs = list(specs)
        # bad specs, and policies for other rules, fail here (the single-seat env's builder)
        self._opponent_pool = [build_opponent(spec, self.rules) for spec in self._opponent_specs]
        # reward, episode and action_features are checked by the PettingZoo env, with the envs' one message each
        self.raw = allfives_v0.raw_env(rules=self.rules, reward=config.get("reward", "win"),
                                       episode=config.get("episode", "game"),
                                       action_features=config.get("action_features", False))
        self.possible_agents = list(self.raw.possible_agents)
        self.agents = list(self.possible_agents)
        inner = self.raw.observation_space(self.possible_agents[0])["observation"]
        n_actions = self.raw.action_space(self.possible_agents[0]).n
        space = gym.spaces.Dict({
            "observations": inner,
            "action_mask": gym.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(n_actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._seated: dict[str, Any] = {}  # agent id -> registry agent, for seats RLlib does not play
        self._pending: dict[str, float] = {}

    # ------------------------------------------------------------------ RLlib API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.raw.reset(seed=int(self._rng.integers(2**31 - 1)))
        self._seated = {}
        if self.learners == "one_side":
            n_sides = self.rules.num_players if not self.rules.partnership else 2
            side = int(self._rng.integers(n_sides))
            for seat, agent_id in enumerate(self.possible_agents):
                if self.rules.side_of(seat) != side:
                    bot = self._opponent_pool[int(self._rng.choice(len(self._opponent_pool), p=self._opponent_weights))]
                    bot.reset(int(self._rng.integers(2**31 - 1)))
                    self._seated[agent_id] = bot
        self.agents = [a for a in self.possible_agents if a not in self._seated]
        self._pending = {a: 0.0 for a in self.agents}
        self._play_bots()
        if self._over():  # only possible if a bot could end the game before any learner acts
            return {a: self._observe(a) for a in self.agents}, {}
        current = self.raw.agent_selection
        return {current: self._observe(current)}, {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        current = self.raw.agent_selection
        if not isinstance(action_dict, Mapping) or current not in action_dict:
            raise IllegalActionError(f"it is {current}'s turn: give its action as {{{current!r}: action id}}, got "
                                     f"{short_repr(action_dict)}")
        action = action_dict[current]
        if not is_action_id(action, self.action_spaces[current].n):  # RLlib's actions are numpy integers
            raise IllegalActionError(f"action {short_repr(action)} of {current} is not an action id: give an integer "
                                     f"0..{self.action_spaces[current].n - 1}")
        self.raw.step(int(action))  # an illegal action raises IllegalActionError, naming the legal ones
        self._collect()
        self._play_bots()
        if self._over():
            truncated = bool(self.raw.game.truncated)
            obs = {a: self._observe(a) for a in self.agents}
            rewards = {a: self._pending.pop(a) for a in self.agents}
            return (obs, rewards, {"__all__": not truncated, **{a: not truncated for a in self.agents}},
                    {"__all__": truncated, **{a: truncated for a in self.agents}}, {})
        nxt = self.raw.agent_selection
        reward = self._pending[nxt]
        self._pending[nxt] = 0.0
        return {nxt: self._observe(nxt)}, {nxt: reward}, {"__all__": False}, {"__all__": False}, {}

    # ------------------------------------------------------------------ internals
    def _over(self) -> bool:
        return self.raw.game.over

    def _observe(self, agent_id: str) -> dict[str, np.ndarray]:
        seen = self.raw.observe(agent_id)
        return {"observations": seen["observation"], "action_mask": seen["action_mask"].astype(np.float32)}

    def _collect(self) -> None:
        for agent_id, reward in self.raw.rewards.items():
            if agent_id in self._pending:
                self._pending[agent_id] += float(reward)

    def _play_bots(self) -> None:
        """Let the registry agents move until a learner is to act or the game is over."""
        raw = self.raw
        while not raw.game.over and raw.agent_selection in self._seated:
            agent_id = raw.agent_selection
            raw.step(self._seated[agent_id].act(raw.player_view(agent_id)))
            self._collect()


def policy_for(agent_id: str, rules: Rules, policies: str) -> str:
    """The RLModule id that plays ``agent_id``: ``"shared"``, or ``"team_<side>"`` with per-team policies."""
    if policies == "shared":
        return "shared"
    return f"team_{rules.side_of(int(agent_id.rsplit('_', 1)[1]))}"
