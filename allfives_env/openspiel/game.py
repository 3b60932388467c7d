"""``python_allfives``: All Fives as an OpenSpiel Python game, registered with pyspiel on import.

The state is a thin shell over :class:`~allfives_env.openspiel.track.Track` (the core game driven by
explicit chance nodes); observations come from :mod:`.observer`; the game parameters, their checks and
the bounds OpenSpiel asks for (``max_game_length``, ``max_chance_outcomes``, utilities) from
:mod:`.params`.

Serialization: ``state.serialize()`` is plain JSON (the parameters and the action history) and
``game.deserialize_state(text)`` replays it, refusing a corrupt or foreign string with
:class:`~allfives_env.core.errors.ReplayError`. OpenSpiel's own C++ ``serialize_game_and_state`` stores
a Python game state's attributes with pickle; this state's only attribute pickles as that same JSON
text and is rebuilt by replaying it, so no live object travels. Still, never unpickle a string from
someone you do not trust: use the JSON methods for those.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pyspiel

from .errors import OpenSpielStateError
from .observer import AllFivesObserver, position_summary
from .params import (
    DEFAULTS, GameConfig, make_config, max_chance_nodes, max_chance_outcomes, max_game_length, num_distinct_actions,
    utility_bounds,
)
from .resample import resample_from_infostate
from .track import Track, parse_state, replay

SHORT_NAME = "python_allfives"

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python All Fives (allfives_env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(DEFAULTS),
)


class AllFivesGame(pyspiel.Game):
    """The game for one parameter set (see :mod:`.params` for every parameter)."""

    def __init__(self, params: Optional[dict[str, Any]] = None) -> None:
        config = make_config(params)
        low, high = utility_bounds(config)
        info = pyspiel.GameInfo(
            num_distinct_actions=num_distinct_actions(config.rules),
            max_chance_outcomes=max_chance_outcomes(config.rules),
            num_players=config.rules.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            max_game_length=max_game_length(config),
        )
        super().__init__(GAME_TYPE, info, config.as_dict())
        self.config: GameConfig = config

    def new_initial_state(self) -> "AllFivesState":
        """The start of an episode: a chance node dealing seat 0's first tile."""
        return AllFivesState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> AllFivesObserver:
        """An observer for OpenSpiel's observation API (see :mod:`.observer`)."""
        return AllFivesObserver(self.config, iig_obs_type, params)

    def max_chance_nodes_in_history(self) -> int:
        """At most one chance node per tile and one leader pick per hand."""
        return max_chance_nodes(self.config)

    def deserialize_state(self, text: str) -> "AllFivesState":
        """The state ``state.serialize()`` wrote; :class:`ReplayError` for a corrupt string or one of a game
        with other parameters."""
        _, history = parse_state(text, expected=self.config)
        replay(self.config, history)  # checks every action before any is applied through OpenSpiel
        state = self.new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


class AllFivesState(pyspiel.State):
    """One node of the game tree. Its only attribute is the :class:`Track` (``track``): the engine,
    public so that observers, resampling and the bots can read it."""

    def __init__(self, game: AllFivesGame) -> None:
        super().__init__(game)
        self.track = Track(game.config)

    # ------------------------------------------------------------------ OpenSpiel's state API
    def current_player(self) -> int:
        game = self.track.game
        if game.chance_node is not None:
            return pyspiel.PlayerId.CHANCE
        if game.over:
            return pyspiel.PlayerId.TERMINAL
        return game.current

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():
            return []
        return self.track.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.track.is_chance:
            raise OpenSpielStateError("chance_outcomes() is defined at chance nodes only")
        return self.track.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self.track.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.track.action_to_string(player, action)

    def is_terminal(self) -> bool:
        return self.track.is_terminal

    def returns(self) -> list[float]:
        return self.track.returns()

    def __str__(self) -> str:
        return position_summary(self.track)

    # ------------------------------------------------------------------ extras
    def serialize(self) -> str:
        """Plain JSON: the game parameters and the action history (see the module doc)."""
        return self.track.serialize()

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None,
                                rng: Optional[np.random.Generator] = None) -> "AllFivesState":
        """A state in ``player_id``'s information set: the current hand's hidden deals and draws guessed
        again (:mod:`.sampler`), replayed and checked; earlier hands are kept as they were (they cannot
        change what comes next). ``rng`` (a numpy Generator) makes it reproducible; otherwise the seed is
        drawn from ``probability_sampler`` (OpenSpiel's sampler, uniform in [0, 1)). Defined at decision
        nodes; raises :class:`OpenSpielStateError` elsewhere, and for a ``player_id`` that is not a seat (an
        int), a sampler that is not callable or returns a number outside [0, 1), an ``rng`` that is not a
        Generator (see :func:`.resample.resample_from_infostate`)."""
        return resample_from_infostate(self, player_id, probability_sampler, rng)

    def hand_start_state(self) -> "AllFivesState":
        """This state as it was when the current hand's deal began (cached; a clone each call)."""
        track = self.track
        cached = track.hand_cache
        if cached is None or cached.track.history != track.history[:track.hand_start]:
            cached = self.get_game().new_initial_state()
            for action in track.history[:track.hand_start]:
                cached.apply_action(action)
            track.hand_cache = cached
        return cached.clone()


def load_game(**params: Any) -> AllFivesGame:
    """``pyspiel.load_game("python_allfives", params)`` with keyword parameters, checked first
    (:func:`.params.make_config`): pyspiel converts them to C++ before the game sees them, so a value
    out of C++'s range would otherwise fail there with a raw error instead of a :class:`RulesError`."""
    make_config(params)
    return pyspiel.load_game(SHORT_NAME, params)


pyspiel.register_game(GAME_TYPE, AllFivesGame)
