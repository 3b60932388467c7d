"""``resample_from_infostate`` for ``python_allfives``: another history in the same information set.

The current hand's hidden past (the other seats' deals and draws) is guessed again by
:func:`~allfives_env.openspiel.sampler.sample_hand`; the hand is then replayed through OpenSpiel from the
state at its deal (so ``history()`` is right), and the result is checked against what the player saw:
the same events, the same own deal, the same seat to act with the same legal actions. Earlier hands
keep their chance outcomes: they are in the information set as they are, and cannot change what comes
next. A guess that fails the check (a rules option the sampler does not model) is drawn again; after
``tries`` failures the state itself is returned, which is always in the information set.

:func:`resample_from_infostate` is the state method's body: it checks its arguments first (a seat, a
sampler as OpenSpiel passes one, a numpy Generator) and the node, so that a bad call is refused with an
:class:`OpenSpielStateError` before the sampler is drawn from.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..core.errors import short_repr
from ..core.events import Draw, Pass, Play, public_events, public_view
from ..core.values import is_finite_number, is_integer
from .errors import OpenSpielStateError
from .sampler import HandTranscript, replay_a_guess
from .track import Track

#: How many guesses of a hand's hidden past are replayed before the search gives up on guessing (the sampler
#: is exact on the seed rules; this bounds the rules options it does not model): a resample then falls back on
#: the state itself, and a seat's view (:mod:`.position`) gets no search state.
GUESS_TRIES = 20
#: A sampler's value in [0, 1) becomes this many bits of a seed (a float's mantissa holds 52).
_SAMPLE_BITS = 52
_SAMPLER_HINT = ("pyspiel.UniformProbabilitySampler(0., 1.) or another callable taking no arguments that returns "
                 "a number in [0, 1)")


def transcript_of(track: Track, player: int) -> HandTranscript:
    """What ``player`` has seen of the current hand of a track at a decision node."""
    game = track.game
    assert game is not None
    record = game.hand_records[-1]
    turns = (e for e in game.events[record.first_event + 1:] if isinstance(e, (Play, Draw, Pass)))
    events = tuple(public_view(e, player) for e in turns)
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


def _check_decision_node(track: Track) -> None:
    if track.is_chance or track.game.over:
        raise OpenSpielStateError("resample_from_infostate is defined at decision nodes only (not at chance or "
                                  "terminal nodes)")


def _seed_part(sampler: Any) -> int:
    """One draw of OpenSpiel's probability sampler as seed bits; a value outside [0, 1) is refused (it would
    make a negative, infinite or giant seed)."""
    value = sampler()
    if not is_finite_number(value) or not 0 <= value < 1:
        raise OpenSpielStateError(f"probability_sampler returned {short_repr(value)}; give {_SAMPLER_HINT}")
    return int(value * 2**_SAMPLE_BITS)


def resample_from_infostate(state: Any, player_id: Any, probability_sampler: Any = None,
                            rng: Optional[np.random.Generator] = None) -> Any:
    """``state.resample_from_infostate``: the arguments and the node checked, then :func:`resample_track`.

    ``player_id`` is a seat: an integer (Python or numpy), not a bool or a float, which would silently
    stand for another seat (``True``, ``1.5``). ``probability_sampler`` is what OpenSpiel's signature
    takes, a callable with no arguments returning a float (``pyspiel.UniformProbabilitySampler(0., 1.)``);
    two of its draws seed the guess. ``rng``, a numpy Generator, replaces it (reproducible). Every bad
    argument is an :class:`OpenSpielStateError` naming what is allowed; an exception the sampler itself
    raises is the caller's and passes through.
    """
    track: Track = state.track
    seats = track.rules.num_players
    if not is_integer(player_id) or not 0 <= player_id < seats:
        raise OpenSpielStateError(f"player_id={short_repr(player_id)} is not allowed: give a seat, an integer from 0 "
                                  f"to {seats - 1} (not a bool or a float)")
    if probability_sampler is not None and not callable(probability_sampler):
        raise OpenSpielStateError(f"probability_sampler={short_repr(probability_sampler)} is not allowed: give "
                                  f"{_SAMPLER_HINT}, or rng")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise OpenSpielStateError(f"rng={short_repr(rng)} is not allowed: give a numpy Generator "
                                  "(numpy.random.default_rng(seed)) or None")
    if rng is None and probability_sampler is None:
        raise OpenSpielStateError(f"give probability_sampler ({_SAMPLER_HINT}) or rng")
    _check_decision_node(track)
    if rng is None:
        rng = np.random.default_rng([_seed_part(probability_sampler) for _ in range(2)])
    return resample_track(state, int(player_id), rng)


def resample_track(state: Any, player: int, rng: np.random.Generator, tries: int = GUESS_TRIES) -> Any:
    """A new state in ``player``'s information set at ``state`` (see the module doc)."""
    track: Track = state.track
    _check_decision_node(track)
    transcript = transcript_of(track, player)
    target = _seen(track, player)
    draw_action = track.game.draw_action

    def agrees(new: Any) -> bool:
        return not new.track.is_chance and _seen(new.track, player) == target

    new = replay_a_guess(transcript, rng, tries, state.hand_start_state, track.hand_picks, draw_action, agrees)
    return new if new is not None else state.clone()
