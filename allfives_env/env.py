"""The PettingZoo AEC environment of All Fives, a thin layer over :class:`allfives_env.core.Game`.

See :mod:`allfives_env.allfives_v0` for the user-facing documentation (spaces, rewards, options).
The environment only translates: agents <-> seats, actions -> ``Game.step``, game state ->
observations (:mod:`allfives_env.encoding`), score changes -> rewards. All rules live in the core.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core.errors import IllegalActionError, RulesError
from .core.events import public_view
from .core.game import Deal, Game
from .core.replay import game_record
from .core.rules import Rules
from .encoding import ObservationEncoder
from .render import render_text

if TYPE_CHECKING:  # pragma: no cover
    from .agents.base import PlayerView

REWARD_MODES = ("win", "points")
EPISODE_MODES = ("game", "hand")
RESET_OPTION_KEYS = ("hands", "boneyard", "leader", "scores", "opening_drawer")


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` wrapped like PettingZoo's classic environments: an illegal move ends the game with
    reward -1 for the offender (``TerminateIllegalWrapper``), out-of-range actions assert, and the API
    order (reset before step, ...) is enforced."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    aec = wrappers.OrderEnforcingWrapper(aec)
    return aec


class raw_env(AECEnv, EzPickle):
    """All Fives for 2-4 players. Keyword arguments: every rules option of :class:`Rules` (or
    ``rules=Rules(...)``), plus ``reward`` ("win" | "points"), ``episode`` ("game" | "hand"),
    ``render_mode`` ("ansi" | "human" | "rgb_array": an HxWx3 uint8 image, the seat to act's view) and
    ``action_features`` (add the per-placement ``features`` slice
    to the observations, see :mod:`allfives_env.encoding`)."""

    metadata = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "allfives_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: Optional[str] = None,
        reward: str = "win",
        episode: str = "game",
        action_features: bool = False,
        rules: Optional[Rules] = None,
        **options: Any,
    ) -> None:
        EzPickle.__init__(self, render_mode=render_mode, reward=reward, episode=episode,
                          action_features=action_features, rules=rules, **options)
        super().__init__()
        if rules is not None and options:
            raise RulesError(f"give either rules=Rules(...) or rules options as keywords, not both (got {sorted(options)})")
        self.rules = rules if rules is not None else Rules.from_options(options)
        if reward not in REWARD_MODES:
            raise RulesError(f"reward={reward!r} is not allowed: choose one of {list(REWARD_MODES)}")
        if episode not in EPISODE_MODES:
            raise RulesError(f"episode={episode!r} is not allowed: choose one of {list(EPISODE_MODES)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise RulesError(f"render_mode={render_mode!r} is not allowed: choose one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self.reward_mode = reward
        self.episode = episode
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.encoder = ObservationEncoder(self.rules, action_features)
        enc = self.encoder
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=enc.low, high=enc.high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(enc.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(enc.num_actions)
        # one space object per agent, built once: observation_space(agent) is the same object every call
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        state_low = np.concatenate([np.zeros(enc.state_size - enc.size - n, np.float32), enc.low, np.zeros(n, np.float32)])
        state_high = np.concatenate([np.ones(enc.state_size - enc.size - n, np.float32), enc.high, np.ones(n, np.float32)])
        self.state_space = spaces.Box(low=state_low, high=state_high, dtype=np.float32)
        self._rng = np.random.default_rng()
        self._seed: Optional[int] = None
        self.game: Optional[Game] = None

    # ================================================================== spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ================================================================== reset
    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Start a new game. ``seed`` reseeds the game's generator (None continues it).

        ``options`` may fix the first hand: ``{"hands": [[[a, b], ...], ...], "boneyard": [[a, b], ...],
        "leader": 0, "scores": [...]}``. ``boneyard`` may list just the top tiles (index 0 is drawn first).
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._seed = seed
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTION_KEYS))
        if unknown:
            # PettingZoo's api_test passes arbitrary options and expects them to be ignored, so warn, not raise
            warnings.warn(f"ignoring unknown reset option(s) {unknown}; allowed: {list(RESET_OPTION_KEYS)}", stacklevel=2)
        deals = []
        if any(k in options for k in ("hands", "boneyard", "leader", "opening_drawer")):
            if "hands" not in options:
                raise RulesError("reset options 'boneyard'/'leader' fix a deal and need 'hands' too")
            deals.append(
                Deal.from_tiles(
                    self.rules, options["hands"], options.get("boneyard"), options.get("leader"), self._rng,
                    options.get("opening_drawer"),
                )
            )
        self.game = Game(
            self.rules, self._rng, deals=deals, scores=options.get("scores"), stop_after_hand=self.episode == "hand"
        )
        self._start_scores = list(self.game.scores)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._seen = [0] * self.rules.num_players
        self.infos = {a: self._info(i) for i, a in enumerate(self.agents)}
        self.agent_selection = self.possible_agents[self.game.current]

    # ================================================================== observe / state
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        return {
            "observation": self.encoder.encode(self.game, seat),
            "action_mask": self.encoder.action_mask(self.game, seat),
        }

    def state(self) -> np.ndarray:
        """Full-information state (every hand and the boneyard): for centralized critics only."""
        return self.encoder.state(self.game)

    # ================================================================== step
    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        seat = self._seat[agent]
        first_event = len(game.events)
        scores_before = game.scores[:] if self.reward_mode == "points" else None
        try:
            game.step(action)  # validates the action; an illegal one changes nothing
        except IllegalActionError as exc:
            raise IllegalActionError(f"{exc} [agent {agent}]") from None
        self._cumulative_rewards[agent] = 0.0
        self._seen[seat] = first_event
        self.rewards = rewards = dict.fromkeys(self.agents, 0.0)
        if scores_before is not None and scores_before != game.scores:
            self._points_rewards(scores_before, rewards)
            self._accumulate_rewards()  # skipped when nothing was scored: adding zeros changes nothing
        if game.over:
            if self.reward_mode == "win":
                self._win_rewards(rewards)
                self._accumulate_rewards()
            done = dict.fromkeys(self.agents, True)
            if game.truncated:
                self.truncations = done
            else:
                self.terminations = done
            for i, a in enumerate(self.agents):
                self.infos[a] = self._info(i)
        else:
            nxt = game.current
            self.agent_selection = nxt_agent = self.possible_agents[nxt]
            self.infos[nxt_agent] = self._info(nxt)
        if self.render_mode == "human":
            self.render()

    def _points_rewards(self, before: list[int], rewards: dict[str, float]) -> None:
        """Zero-sum points: own side's gain minus the mean gain of the other sides, / target."""
        game = self.game
        deltas = [now - then for now, then in zip(game.scores, before)]
        if not any(deltas):
            return
        k = game.num_sides
        total = sum(deltas)
        scale = 1.0 / self.rules.target
        for agent in self.agents:
            d = deltas[game.side_of[self._seat[agent]]]
            rewards[agent] = (d - (total - d) / (k - 1)) * scale

    def _win_rewards(self, rewards: dict[str, float]) -> None:
        """+1 to the winning side, -1 to every other side; 0 all round for a draw."""
        game = self.game
        winner = game.winner
        if winner is None and self.episode == "hand":
            gains = [now - then for now, then in zip(game.scores, self._start_scores)]
            best = max(gains)
            winner = gains.index(best) if gains.count(best) == 1 else None
        if winner is None:
            return
        for agent in self.agents:
            rewards[agent] += 1.0 if game.side_of[self._seat[agent]] == winner else -1.0

    def _info(self, seat: int) -> dict[str, Any]:
        game = self.game
        return {
            "events": [public_view(e, seat) for e in game.events[self._seen[seat]:]],
            "scores": list(game.scores),
            "hand": game.hand_number,
        }

    # ================================================================== render / replay
    def render(self) -> Union[str, np.ndarray, None]:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; create the env with render_mode='ansi', "
                                  "'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            from .render_image import render_rgb

            game = self.game
            seat = game.current if game is not None and game.current >= 0 else None  # the seat to act's view
            return render_rgb(game, seat, self.possible_agents)
        if self.game is None:
            text = "All Fives - call reset() to deal"
        else:
            text = render_text(self.game, None, self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def player_view(self, agent: str) -> "PlayerView":
        """What ``agent`` may see, for the scripted agents of :mod:`allfives_env.agents`:
        ``make_agent("expert").act(env.unwrapped.player_view(env.agent_selection))``."""
        from .agents.base import PlayerView

        if self.game is None:
            raise RuntimeError("no game yet: call reset() first")
        return PlayerView(self.game, self._seat[agent], self.encoder)

    def replay(self) -> dict[str, Any]:
        """The JSON replay record of the game so far (see :mod:`allfives_env.core.replay`)."""
        if self.game is None:
            raise RuntimeError("no game yet: call reset() first")
        return game_record(self.game, seed=self._seed)

    def close(self) -> None:
        pass
