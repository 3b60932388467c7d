"""A ``gymnasium.Env`` in which the learner holds one seat and every other seat is played inside the env.

This is the environment single-agent libraries (stable-baselines3, sb3-contrib's ``MaskablePPO``)
train on. The opponents are agents from the registry, given by spec strings (``"expert"``,
``"pimc:samples=50"``), so subprocess workers can rebuild them; a mixture is drawn afresh for every
episode (``opponent_weights``), and :meth:`~AllFivesSingleSeatEnv.set_opponents` replaces it from the next
episode on (the training league does, as it does on the vector env). In a 4-player partnership the partner seat is played by ``partner``
(default: drawn from the opponents' mixture too).

Credit: the reward of a step is everything the learner's side gained or lost since its previous action,
including what happened on the other seats' moves and at the end of the game. With ``reward="win"`` that
is +1 / -1 (0 for a draw) on the step that ends the game, whoever made the last move; with
``reward="points"`` it is the side's score change minus the mean change of the other sides, divided by the
target, summed over everything since the learner last acted. (The usual PettingZoo-to-SB3 recipe drops
the final reward of the side that did not move last, so a loser never sees its loss.)

``action_masks()`` returns the legal actions, which ``MaskablePPO`` reads directly from
Dummy/SubprocVecEnv without wrappers; every info carries the same mask as ``info["action_mask"]``.
Registered as ``gymnasium.make("AllFives-v0", ...)``; ``gymnasium.make_vec("AllFives-v0", num_envs=N,
vectorization_mode="vector_entry_point")`` is the same env for N games of the compiled batch engine
(:mod:`allfives_env.vector`).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from .agents.base import Agent, OracleView, PlayerView
from .core.errors import GameOverError, IllegalActionError, NotResetError
from .core.actions import is_action_id
from .core.deal import fixed_start
from .core.game import Game
from .core.outcome import side_rewards
from .core.rules import Rules
from .core.seeds import MAX_SEED, check_seed
from .encoding import ObservationEncoder
from .render import render_text
from .seat_setup import (OpponentLike, build_opponent, check_illegal_action, check_illegal_reward, check_render_mode,
                         opponent_mixture, seat_setup)

#: Opponents are reseeded each episode from the env's generator with a seed below this (31 bits, the
#: range the agents have always been seeded from, so episodes replay as before).
AGENT_SEED_LIMIT = 2**31 - 1


class AllFivesSingleSeatEnv(gymnasium.Env):
    """All Fives for one learner against agents played inside the env.

    Parameters: ``opponents`` (agent specs or instances; default ``["random"]``), ``opponent_weights``
    (mixture weights, default uniform), ``partner`` (spec for the partner seat in a partnership),
    ``seat`` (the learner's seat; None = random each episode), ``reward`` ("win" | "points"),
    ``episode`` ("game" | "hand"), ``render_mode`` ("ansi", or "rgb_array": an image of the learner's view), ``illegal_action`` ("terminate": an illegal
    action ends the episode with ``illegal_reward`` and ``info["illegal_action"]`` saying why, as
    PettingZoo's classic envs do and gymnasium's env checker needs; "raise": raise
    :class:`IllegalActionError`), ``action_features`` (add the per-placement ``features`` slice to the
    observation, see :mod:`allfives_env.encoding`), and the rules (``rules=Rules(...)`` or the options as keywords).
    Out-of-range and non-integer actions always raise. :meth:`set_opponents` replaces the opponents'
    mixture from the next episode on.
    """

    # typed as gymnasium.Env declares it: its values differ in type, so each entry reads as Any
    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        opponents: Sequence[OpponentLike] = ("random",),
        opponent_weights: Optional[Sequence[float]] = None,
        partner: Optional[OpponentLike] = None,
        seat: Optional[int] = None,
        reward: str = "win",
        episode: str = "game",
        render_mode: Optional[str] = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        action_features: bool = False,
        rules: Optional[Rules] = None,
        obs_version: int = 1,
        **options: Any,
    ) -> None:
        super().__init__()
        setup = seat_setup(opponents, opponent_weights, partner, seat, reward, episode, action_features, rules, options,
                           obs_version)
        self.rules = setup.rules
        n = self.rules.num_players
        self.illegal_action = check_illegal_action(illegal_action)
        self.illegal_reward = check_illegal_reward(illegal_reward)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.opponent_specs = list(setup.opponents)
        self._pool = [build_opponent(o, self.rules) for o in self.opponent_specs]
        self.opponent_weights = setup.weights
        self._next_mixture: Optional[tuple[list[OpponentLike], list[Agent], np.ndarray]] = None
        self._partner = None if setup.partner is None else build_opponent(setup.partner, self.rules)
        self.fixed_seat = setup.seat
        self.reward_mode = setup.reward
        self.episode = setup.episode
        self.encoder = ObservationEncoder(self.rules, setup.action_features, setup.obs_version)
        self.observation_space = spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.encoder.num_actions)
        self.game: Optional[Game] = None
        self._ended_by_illegal = False
        self.seat = 0
        self._seated: list[Optional[Agent]] = [None] * n  # the agent of each seat; None: the learner's
        self._views: list[Optional[PlayerView]] = [None] * n

    def set_opponents(self, opponents: Sequence[OpponentLike], weights: Optional[Sequence[float]] = None) -> None:
        """Draw the opponents from this mixture (``weights`` default uniform) from the next :meth:`reset` on, so
        no episode changes opponents half-way; the league hands every env its new mixture this way
        (``env_method("set_opponents", specs, weights)``), as it does to the vector env.

        Checked now, as the constructor and the vector env check a mixture (:func:`opponent_mixture`), and
        each agent is built now: a bad spec or a policy for other rules is refused here, not at a later reset,
        and a refused call changes nothing. The partner and the env's generator stay as they are, so a run
        goes on reproducibly from its seed."""
        specs, weights_now = opponent_mixture(opponents, weights)
        pool = [build_opponent(o, self.rules) for o in specs]
        self._next_mixture = (list(specs), pool, weights_now)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        """Start a new game. ``options`` may fix the first hand like :meth:`raw_env.reset` does
        (``hands``, ``boneyard``, ``leader``, ``opening_drawer``, ``scores``); unknown keys are refused.

        A game that ends before the learner's first decision (the other seats can win a one-hand episode
        before it moves) is dealt again, seat and opponents included, as the vector env does: an episode
        always holds at least one decision. A fixed deal (``options``) is played as given, even so."""
        seed = check_seed(seed)
        fixed_start(self.rules, options, np.random.default_rng(0))  # checked first: a refused reset changes nothing
        super().reset(seed=seed)
        if self._next_mixture is not None:  # set_opponents: the new mixture from this episode on
            self.opponent_specs, self._pool, self.opponent_weights = self._next_mixture
            self._next_mixture = None
        self._start(options)
        assert self.game is not None  # _start has dealt it
        while self.game.over and not options:
            self._start(None)
        return self._observe(self.game), self._info(self.game)

    def _start(self, options: Optional[dict]) -> None:
        """Deal a game (``self.game``) from the env's generator: the learner's seat, the opponents, and their
        moves until the learner's first turn (or the end)."""
        rng = self.np_random
        n = self.rules.num_players
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        deals, scores = fixed_start(self.rules, options, rng)  # an unlisted rest of the boneyard: seeded order
        self.game = game = Game(self.rules, int(rng.integers(MAX_SEED)), deals=deals, scores=scores,
                                stop_after_hand=self.episode == "hand")
        for s in range(n):
            if s == self.seat:
                self._seated[s] = None
                continue
            partner_seat = self.rules.partnership and self.rules.side_of(s) == self.rules.side_of(self.seat)
            agent = self._partner if (partner_seat and self._partner is not None) else \
                self._pool[int(rng.choice(len(self._pool), p=self.opponent_weights))]
            agent.reset(int(rng.integers(AGENT_SEED_LIMIT)))
            self._seated[s] = agent
            self._views[s] = (OracleView if agent.uses_hidden_information else PlayerView)(game, s)
        self._scores_at_last_action = list(game.scores)
        self._ended_by_illegal = False
        self._play_others(game)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        game = self.game
        if game is None:
            raise NotResetError("call reset() before step()")
        if game.over or self._ended_by_illegal:
            raise GameOverError("the episode is over: call reset() to start a new game")
        # the action space is Discrete(num_actions): the count is read from the encoder, an int (gymnasium
        # types the space as any Space, which has no ``n``, and Discrete's ``n`` as a numpy scalar)
        if not is_action_id(action, self.encoder.num_actions):  # not an action id: always an error
            raise IllegalActionError(game.illegal_message(action))
        try:
            game.step(int(action))  # validates legality; an illegal action changes nothing
        except IllegalActionError as exc:
            if self.illegal_action == "raise":
                raise
            # like PettingZoo's TerminateIllegalWrapper: the episode ends and the learner is penalised
            self._ended_by_illegal = True
            info = self._info(game)
            info["illegal_action"] = str(exc)
            return self._observe(game), self.illegal_reward, True, False, info
        self._play_others(game)
        reward = self._reward(game)
        terminated = game.over and not game.truncated
        truncated = game.truncated
        return self._observe(game), reward, terminated, truncated, self._info(game)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions (all False once the game is over)."""
        mask = np.zeros(self.encoder.num_actions, dtype=bool)
        game = self.game
        if game is not None and game.current == self.seat and not self._ended_by_illegal:
            mask[list(game.legal)] = True
        return mask

    # gymnasium types render() with a type variable that occurs only in its return (RenderFrame), which no
    # concrete frame type can match: this override names the frames it really returns and waives that check
    def render(self) -> Union[str, np.ndarray, None]:  # type: ignore[override]  # return-only TypeVar above
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; create the env with render_mode='ansi' "
                                  "or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            from .render_image import render_rgb

            return render_rgb(self.game, self.seat)
        if self.game is None:
            return "All Fives - call reset() to deal"
        return render_text(self.game, self.seat)

    # ------------------------------------------------------------------ internals
    # each takes the game that reset or step has in hand: the live game, never None
    def _play_others(self, game: Game) -> None:
        """Let the other seats act until it is the learner's turn or the game is over."""
        seated = self._seated
        views = self._views
        while not game.over and game.current != self.seat:
            seat = game.current
            agent, view = seated[seat], views[seat]
            assert agent is not None and view is not None  # _start seats every seat but the learner's (not this)
            game.step(agent.act(view))

    def _reward(self, game: Game) -> float:
        """The learner's side's reward (:func:`side_rewards`): points since its previous action over the
        target, or the result once the game is over (a one-hand episode's gains from the hand's start)."""
        side = game.side_of[self.seat]
        if self.reward_mode == "points":
            before = self._scores_at_last_action
            deltas = [now - then for now, then in zip(game.scores, before)]
            self._scores_at_last_action = list(game.scores)
            return float(side_rewards("points", deltas, scale=self.rules.target)[side])
        if not game.over:
            return 0.0
        winner = game.winner
        gains = [now - then for now, then in zip(game.scores, game.hand_records[0].scores)]
        return float(side_rewards("win", gains, True, -1 if winner is None else winner,
                                  hand=self.episode == "hand")[side])

    def _observe(self, game: Game) -> np.ndarray:
        return self.encoder.encode(game, self.seat)

    def _info(self, game: Game) -> dict[str, Any]:
        """The scores, the learner's seat, the hand, and ``action_mask`` (:meth:`action_masks`: Gymnasium
        users look for the mask in the info)."""
        return {"scores": list(game.scores), "seat": self.seat, "hand": game.hand_number,
                "action_mask": self.action_masks()}
