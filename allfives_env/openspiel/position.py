"""An OpenSpiel state for what one seat knows: how OpenSpiel's bots see a position of our games.

An agent gets a :class:`~allfives_env.core.view.PlayerView`: its own tiles and the public log, never
the hidden tiles. To search with an OpenSpiel bot it needs a ``python_allfives`` state that agrees with
that view. The state is a **one-hand episode** from the current hand's start (its scores and who had
scored are parameters), returns are points (the side's gain minus the mean of the others', divided by
``point_scale``), and its history replays the hand: the deal and the draws of the other seats are a
consistent guess (:func:`~allfives_env.openspiel.sampler.sample_hand`), everything else is what
happened. The bots then resample that guess themselves (``resample_from_infostate``), so the guess
the state starts from does not matter beyond being consistent.

The search game picks the hand's leader by chance whatever the real rules say (the leader is in the
history already); under ``first_leader="highest_double"`` the sampler still uses what the lead tells
(no higher double was dealt).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

import numpy as np

from ..core.events import HandStart, Play
from ..core.rules import Rules
from ..core.view import PlayerView
from .game import SHORT_NAME, AllFivesGame, AllFivesState
from .params import rules_params
from .resample import GUESS_TRIES
from .sampler import replay_a_guess, transcript_from_events


@lru_cache(maxsize=64)
def _search_game(items: tuple[tuple[str, Any], ...]) -> AllFivesGame:
    import pyspiel

    return pyspiel.load_game(SHORT_NAME, dict(items))


def search_game(rules: Rules, scores: tuple[int, ...], scored: tuple[bool, ...], point_scale: float) -> AllFivesGame:
    """The one-hand, points-returns game a search runs on (cached by its parameters)."""
    params = rules_params(rules)
    params.update(first_leader="random", episode="hand", returns="points", point_scale=float(point_scale),
                  scores=",".join(str(s) for s in scores), scored=",".join("1" if x else "0" for x in scored))
    return _search_game(tuple(sorted(params.items())))


def hand_start_scores(view: PlayerView) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """The sides' scores when the current hand began, and which sides had scored by then (public)."""
    events = view.events
    starts = [(i, e) for i, e in enumerate(events) if type(e) is HandStart]
    first, (last_at, last) = starts[0][1], starts[-1]
    scored = [s != 0 for s in first.scores]
    side_of = view.side_of
    for e in events[:last_at]:
        if type(e) is Play and e.points > 0:
            scored[side_of[e.seat]] = True
    return tuple(last.scores), tuple(scored)


def state_for_view(view: PlayerView, rng: np.random.Generator, point_scale: float) -> Optional[AllFivesState]:
    """A search state consistent with ``view`` at its seat's decision, or None if no guess replayed."""
    rules = view.rules
    scores, scored = hand_start_scores(view)
    game = search_game(rules, scores, scored, point_scale)
    transcript = transcript_from_events(rules, view.seat, view.events, view.hand)
    picks = [rules.tile_count + transcript.leader]
    draw_action = 4 * rules.tile_count if rules.may_draw_when_able else -1
    legal = view.legal
    return replay_a_guess(transcript, rng, GUESS_TRIES, game.new_initial_state, picks, draw_action,
                          lambda state: state.current_player() == view.seat and state.legal_actions() == legal)
