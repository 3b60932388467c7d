"""The PettingZoo AEC environment of All Fives, a thin layer over :class:`allfives_env.core.Game`.

See :mod:`allfives_env.allfives_v0` for the user-facing documentation (spaces, rewards, options).
The environment only translates: agents <-> seats, actions -> ``Game.step``, game state ->
observations (:mod:`allfives_env.encoding`), score changes -> rewards. All rules live in the core.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core.errors import GameOverError, IllegalActionError, NotResetError, short_repr
from .core.events import public_events
from .core.actions import is_action_id
from .core.deal import START_OPTION_KEYS, fixed_start
from .core.game import Game
from .core.outcome import side_rewards
from .core.replay import game_record
from .core.rules import Rules, rules_from
from .core.seeds import check_seed
from .core.view import PlayerView
from .encoding import ObservationEncoder
from .env_args import check_action_features, check_episode, check_obs_version, check_render_mode, check_reward
from .render import render_text


RESET_OPTION_KEYS = START_OPTION_KEYS
#: PettingZoo's default bound on ``agent_iter()``: in effect, until every agent is done.
AGENT_ITER_LIMIT = 2**63


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` wrapped like PettingZoo's classic environments: an illegal move ends the game with
    reward -1 for the offender (``TerminateIllegalWrapper``), an out-of-range action raises
    :class:`IllegalActionError`, and the API order (reset before step, ...) is enforced with
    :class:`NotResetError` (PettingZoo's own wrappers raise a bare ``AssertionError``)."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = _OutOfBoundsChecked(aec)
    aec = _OrderEnforced(aec)
    return aec


class _OutOfBoundsChecked(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's out-of-bounds check, raising this package's :class:`IllegalActionError`."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        live = not (self.terminations.get(agent, True) or self.truncations.get(agent, True))
        n = self.action_space(agent).n
        if live and not is_action_id(action, n):
            raise IllegalActionError(
                f"action {short_repr(action)} is not an action id of {agent}: give an integer 0..{n - 1} "
                f"(None only for an agent that is done)"
            )
        self.env.step(action)


class _OrderEnforced(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcement, raising :class:`NotResetError` instead of ``AssertionError``."""

    def _require_reset(self, what: str) -> None:
        if not self._has_reset:
            raise NotResetError(f"call reset() before {what}")

    def step(self, action: Any) -> None:
        self._require_reset("step()")
        super().step(action)

    def observe(self, agent: str) -> Any:
        self._require_reset("observe()")
        return super().observe(agent)

    def state(self) -> np.ndarray:
        self._require_reset("state()")
        return super().state()

    def render(self) -> Any:
        self._require_reset("render()")
        return super().render()

    def agent_iter(self, max_iter: int = AGENT_ITER_LIMIT) -> Any:
        self._require_reset("agent_iter()")
        return super().agent_iter(max_iter)

    def last(self, observe: bool = True) -> Any:
        self._require_reset("last()")
        return super().last(observe)


class raw_env(AECEnv):
    """All Fives for 2-4 players. Keyword arguments: every rules option of :class:`Rules` (or
    ``rules=Rules(...)``), plus ``reward`` ("win" | "points"), ``episode`` ("game" | "hand"),
    ``render_mode`` ("ansi" | "human" | "rgb_array": an HxWx3 uint8 image, the seat to act's view) and
    ``action_features`` (add the per-placement ``features`` slice
    to the observations, see :mod:`allfives_env.encoding`) and ``obs_version`` (1, the default layout, or 2,
    which adds the needs, pips, bonus and history pieces)."""

    # typed as AECEnv declares it: its values differ in type, so each entry reads as Any
    metadata: dict[str, Any] = {
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
        obs_version: int = 1,
        **options: Any,
    ) -> None:
        super().__init__()
        self.rules = rules_from(rules, options)
        # the checkers every front end shares (seat_setup): one message per argument, whichever env refused it
        self.reward_mode = check_reward(reward)
        self.episode = check_episode(episode)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        action_features = check_action_features(action_features)
        obs_version = check_obs_version(obs_version)
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.encoder = ObservationEncoder(self.rules, action_features, obs_version)
        enc = self.encoder
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=enc.low, high=enc.high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(enc.num_actions,), dtype=np.int8),
            }
        )
        act_space: spaces.Discrete[np.int64] = spaces.Discrete(enc.num_actions)  # Discrete's default dtype
        # one space object per agent, built once: observation_space(agent) is the same object every call
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        state_low = np.concatenate([np.zeros(enc.state_size - enc.size - n, np.float32), enc.low, np.zeros(n, np.float32)])
        state_high = np.concatenate([np.ones(enc.state_size - enc.size - n, np.float32), enc.high, np.ones(n, np.float32)])
        self.state_space = spaces.Box(low=state_low, high=state_high, dtype=np.float32)
        self._rng = np.random.default_rng()
        self._seed: Optional[int] = None
        self.game: Optional[Game] = None

    # ================================================================== copies
    # pickle, copy.deepcopy and multiprocessing carry the whole env, game included, so that a copy
    # continues exactly like the original (PettingZoo's EzPickle would rebuild a fresh, never-reset env
    # from the constructor's arguments instead).
    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``AECEnv.last`` written out, with the reset check: it runs on every step."""
        if self.game is None:  # inline, not _live_game(), for the same reason
            raise NotResetError("call reset() before last()")
        agent = self.agent_selection
        assert agent is not None
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def agent_iter(self, max_iter: int = AGENT_ITER_LIMIT) -> Any:
        self._live_game("agent_iter()")
        return super().agent_iter(max_iter)

    def _live_game(self, what: str) -> Game:
        """The game, or :class:`NotResetError` before the first reset."""
        if self.game is None:
            raise NotResetError(f"call reset() before {what}")
        return self.game

    # ================================================================== spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete[np.int64]:
        return self.action_spaces[agent]

    # ================================================================== reset
    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Start a new game. ``seed`` reseeds the game's generator (None continues it).

        ``options`` may fix the first hand: ``{"hands": [[[a, b], ...], ...], "boneyard": [[a, b], ...],
        "leader": 0, "scores": [...]}``. ``boneyard`` may list just the top tiles (index 0 is drawn first).
        """
        seed = check_seed(seed)
        # everything is checked before anything changes: a refused reset leaves the env as it was
        rng = np.random.default_rng(seed) if seed is not None else self._rng
        deals, scores = fixed_start(self.rules, options, rng, warn_unknown=True)
        self.game = Game(self.rules, rng, deals=deals, scores=scores, stop_after_hand=self.episode == "hand")
        self._rng = rng
        self._seed = seed
        self._start_scores = list(self.game.scores)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._seen = [0] * self.rules.num_players
        self.infos = {a: self._info(self.game, i) for i, a in enumerate(self.agents)}
        self.agent_selection = self.possible_agents[self.game.current]

    # ================================================================== observe / state
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self.game
        if game is None:  # the checks are inline: observe runs on every step
            raise NotResetError("call reset() before observe()")
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            seat = self._seat_of(agent)
        return {
            "observation": self.encoder.encode(game, seat),
            "action_mask": self.encoder.action_mask(game, seat),
        }

    def _seat_of(self, agent: Any) -> int:
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise IllegalActionError(f"{short_repr(agent)} is not an agent of this env: agents are {self.possible_agents}")
        return seat

    def state(self) -> np.ndarray:
        """Full-information state (every hand and the boneyard): for centralized critics only."""
        return self.encoder.state(self._live_game("state()"))

    # ================================================================== step
    def step(self, action: Any) -> None:
        game = self.game
        if game is None:
            raise NotResetError("call reset() before step()")
        if not self.agents:
            raise GameOverError(
                f"the game is over and every agent has stepped out (winner: {game.winner}, scores {game.scores}); "
                "call reset() to start a new game"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(f"{agent} is done: step(None) removes it, got action {short_repr(action)}")
            self._was_dead_step(action)
            return
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
            self._points_rewards(game, scores_before, rewards)
            self._accumulate_rewards()  # skipped when nothing was scored: adding zeros changes nothing
        if game.over:
            if self.reward_mode == "win":
                self._win_rewards(game, rewards)
                self._accumulate_rewards()
            done = dict.fromkeys(self.agents, True)
            if game.truncated:
                self.truncations = done
            else:
                self.terminations = done
            for i, a in enumerate(self.agents):
                self.infos[a] = self._info(game, i)
        else:
            nxt = game.current
            self.agent_selection = nxt_agent = self.possible_agents[nxt]
            self.infos[nxt_agent] = self._info(game, nxt)
        if self.render_mode == "human":
            self.render()

    # the helpers of step and reset take the game they have in hand: the live game, never None
    def _points_rewards(self, game: Game, before: list[int], rewards: dict[str, float]) -> None:
        """Zero-sum points (:func:`side_rewards`): own side's gain minus the mean gain of the other sides,
        / target."""
        shares = side_rewards("points", [now - then for now, then in zip(game.scores, before)],
                              scale=self.rules.target, inverse=True)
        side_of = game.side_of
        for agent in self.agents:
            rewards[agent] = shares[side_of[self._seat[agent]]]

    def _win_rewards(self, game: Game, rewards: dict[str, float]) -> None:
        """+1 to the winning side, -1 to every other side; 0 all round for a draw (:func:`side_rewards`)."""
        winner = game.winner
        results = side_rewards("win", [now - then for now, then in zip(game.scores, self._start_scores)], True,
                               -1 if winner is None else winner, hand=self.episode == "hand")
        side_of = game.side_of
        for agent in self.agents:
            rewards[agent] += results[side_of[self._seat[agent]]]

    def _info(self, game: Game, seat: int) -> dict[str, Any]:
        return {
            "events": public_events(game.events[self._seen[seat]:], seat),
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
        return PlayerView(self._live_game("player_view()"), self._seat_of(agent), self.encoder)

    def replay(self) -> dict[str, Any]:
        """The JSON replay record of the game so far (see :mod:`allfives_env.core.replay`)."""
        return game_record(self._live_game("replay()"), seed=self._seed)

    def close(self) -> None:
        pass
