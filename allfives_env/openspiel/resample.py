"""``resample_from_infostate`` for ``python_allfives``: another history in the same information set.

The current hand's hidden past (the other seats' deals and draws) is guessed again by
:func:`~allfives_env.openspiel.sampler.sample_hand`; the hand is then replayed through OpenSpiel from the
state at its deal (so ``history()`` is right), and the result is checked against what the player saw:
the same events, the same own deal, the same seat to act with the same legal actions. Earlier hands
keep their chance outcomes: they are in the information set as they are, and cannot change what comes
next. A guess that fails the check (a rules option the sampler does not model) is drawn again; after
``tries`` failures the state itself is returned, which is always in the information set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.events import Draw, Pass, Play, public_events, public_view
from .errors import OpenSpielStateError
from .sampler import HandTranscript, replay_a_guess
from .track import Track

#: How many guesses a resample tries before it falls back on the state itself.
RESAMPLE_TRIES = 20


def transcript_of(track: Track, player: int) -> HandTranscript:
    """What ``player`` has seen of the current hand of a track at a decision node."""
    game = track.game
    assert game is not None
    record = game.hand_records[-1]
    events = tuple(public_view(e, player) for e in game.events[record.first_event + 1:] if type(e) in (Play, Draw, Pass))
    return HandTranscript(track.rules, player, record.leader, tuple(sorted(record.hands[player])), events,
                          record.hand == 1)


def _seen(track: Track, player: int) -> tuple:
    """What must be equal for two tracks to be in one information set of ``player`` (given the same
    earlier hands): this hand's events as it saw them, its deal, the seat to act and the legal actions."""
    game = track.game
    assert game is not None
    record = game.hand_records[-1]
    events = tuple(public_events(game.events[record.first_event:], player))
    return events, tuple(sorted(record.hands[player])), game.current, tuple(sorted(game.legal))


def resample_track(state: Any, player: int, rng: np.random.Generator, tries: int = RESAMPLE_TRIES) -> Any:
    """A new state in ``player``'s information set at ``state`` (see the module doc)."""
    track: Track = state.track
    if track.need is not None or track.game is None or track.game.over:
        raise OpenSpielStateError("resample_from_infostate is defined at decision nodes only (not at chance or "
                                  "terminal nodes)")
    transcript = transcript_of(track, player)
    target = _seen(track, player)
    draw_action = track.game.draw_action

    def agrees(new: Any) -> bool:
        return new.track.need is None and new.track.game is not None and _seen(new.track, player) == target

    new = replay_a_guess(transcript, rng, tries, state.hand_start_state, track.hand_picks, draw_action, agrees)
    return new if new is not None else state.clone()
