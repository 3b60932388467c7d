"""A fixed start for a game: a dealt hand (:class:`Deal`), starting scores, and reset options naming them.

Users fix deals to set up positions (tests, puzzles, "what if seat 1 leads") and replays fix every deal
of a recorded game; both come through here, so a deal or a score is checked once, with errors that say
what was wrong and what is allowed, before any game starts on it.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from .errors import DealError, short_repr
from .rules import Rules
from .tiles import TileLike, tile_set
from .values import is_integer


class Deal(NamedTuple):
    """A fixed deal for one hand: each seat's tiles, the boneyard (index 0 is drawn first), the leader.

    ``leader`` None lets the rules choose (random, highest double, the player who dominoed, ...).
    ``opening_drawer`` is only used by ``no_double_fallback='draw_until_double'``: the seat that draws
    first (None: chosen at random). ``leader_fixed`` says that ``leader`` was chosen by hand against the
    rules (a user's fixed deal): a replay records it, so that verifying the game does not reject it.
    """

    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    leader: Optional[int] = None
    opening_drawer: Optional[int] = None
    leader_fixed: bool = False

    @staticmethod
    def from_tiles(
        rules: Rules,
        hands: Sequence[Sequence[TileLike]],
        boneyard: Optional[Sequence[TileLike]] = None,
        leader: Optional[int] = None,
        rng: Optional[np.random.Generator] = None,
        opening_drawer: Optional[int] = None,
    ) -> "Deal":
        """Validate a deal given as tiles (``[a, b]``, ``"a-b"`` or ids).

        Each hand must hold exactly ``hand_size`` tiles; no tile may appear twice. ``boneyard`` may list
        only the top of the boneyard: the remaining tiles follow in an order drawn from ``rng``.
        """
        tiles = tile_set(rules.max_pip)
        n = rules.num_players
        if not _is_sequence(hands) or len(hands) != n:
            got = f"{len(hands)} hands" if _is_sequence(hands) else short_repr(hands)
            raise DealError(f"a deal needs one hand per player: a list of {n} hands for num_players={n}, got {got}")
        seen: dict[int, str] = {}

        def take(tile: TileLike, where: str) -> int:
            tid = tiles.parse(tile)
            if tid in seen:
                raise DealError(f"tile {tiles.name(tid)} appears twice: in {seen[tid]} and in {where}")
            seen[tid] = where
            return tid

        parsed_hands = []
        for seat, hand in enumerate(hands):
            if not _is_sequence(hand):
                raise DealError(f"hand of seat {seat} must be a list of tiles like [[6, 4], [5, 5]], got {short_repr(hand)}")
            if len(hand) != rules.hand_size:
                raise DealError(
                    f"hand of seat {seat} has {len(hand)} tiles; with hand_size={rules.hand_size} every hand "
                    f"must hold exactly {rules.hand_size}"
                )
            parsed_hands.append(tuple(take(t, f"hand {seat}") for t in hand))
        if boneyard is not None and not _is_sequence(boneyard):
            raise DealError(f"boneyard must be a list of tiles (index 0 drawn first), got {short_repr(boneyard)}")
        top = [take(t, "the boneyard") for t in (boneyard or ())]
        rest = [t for t in range(tiles.size) if t not in seen]
        if rest:
            if rng is None:
                raise DealError(
                    f"the deal leaves {len(rest)} tiles unlisted: list the whole boneyard, or pass a generator "
                    "to shuffle the rest"
                )
            rest = [rest[i] for i in rng.permutation(len(rest)).tolist()]
        for name, seat in (("leader", leader), ("opening_drawer", opening_drawer)):
            if seat is not None and not (is_integer(seat) and 0 <= seat < n):
                raise DealError(f"{name}={short_repr(seat)} is not a seat: give an integer 0..{n - 1} (or null)")
        return Deal(
            tuple(parsed_hands), tuple(top + rest), None if leader is None else int(leader),
            None if opening_drawer is None else int(opening_drawer),
        )


#: The keys of a fixed start, as reset options of both environments take them.
START_OPTION_KEYS = ("hands", "boneyard", "leader", "scores", "opening_drawer")


def fixed_start(
    rules: Rules, options: Any, rng: Optional[np.random.Generator], warn_unknown: bool = False
) -> tuple[list[Deal], Optional[list[int]]]:
    """The first deal and starting scores that reset options fix (``hands``, ``boneyard``, ``leader``,
    ``opening_drawer``, ``scores``; see :data:`START_OPTION_KEYS`), checked, for ``Game(deals=...,
    scores=...)``. Unknown keys are refused, or only warned about with ``warn_unknown`` (PettingZoo's
    ``api_test`` resets the AEC env with arbitrary options and expects them to be ignored).
    """
    if options is None:
        return [], None
    if not isinstance(options, Mapping):
        raise DealError(f"reset options must be a dict with keys from {list(START_OPTION_KEYS)}, got {short_repr(options)}")
    unknown = sorted(str(k) for k in options if k not in START_OPTION_KEYS)
    if unknown and warn_unknown:
        # stacklevel 3: the warning points at the caller of the env's reset()
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; allowed: {list(START_OPTION_KEYS)}", stacklevel=3)
    elif unknown:
        raise DealError(f"unknown reset option(s) {short_repr(unknown)}; allowed: {list(START_OPTION_KEYS)}")
    deals = []
    if any(k in options for k in ("hands", "boneyard", "leader", "opening_drawer")):
        if "hands" not in options:
            raise DealError("reset options 'boneyard'/'leader'/'opening_drawer' fix a deal and need 'hands' too")
        deals.append(
            Deal.from_tiles(rules, options["hands"], options.get("boneyard"), options.get("leader"), rng,
                            options.get("opening_drawer"))
        )
    scores = options.get("scores")
    return deals, None if scores is None else starting_scores(rules, scores)


def starting_scores(rules: Rules, scores: Any) -> list[int]:
    """Validate starting scores (one integer per side) and return them as Python ints.

    Refused, because each would silently mean something else: a mapping (its keys would be read),
    bools and floats (``6.9`` would become 6), a score below zero under ``allow_negative=False``, a
    unique top score at or above the target (the game would be won before it starts; a tie at the top
    plays on, as in play), scores beyond twice the target or below minus the target, and under
    ``exact_target`` a score past the target or off the grid of score changes (that side could never
    reach the target exactly).
    """
    sides = rules.num_sides
    who = "team (seats 0+2, 1+3)" if rules.partnership else "player"
    if not _is_sequence(scores) or len(scores) != sides or not all(is_integer(x) for x in scores):
        raise DealError(f"scores={short_repr(scores)} is not allowed: give a list of {sides} integers, one per {who}")
    values = [int(x) for x in scores]
    low = 0 if not rules.allow_negative else -rules.target
    high = rules.target if rules.exact_target else 2 * rules.target - 1
    for side, value in enumerate(values):
        if not low <= value <= high:
            floor = "0 (allow_negative=False)" if not rules.allow_negative else f"{low}"
            raise DealError(
                f"scores={values} is not allowed: side {side} has {value}; starting scores run from {floor} to {high}"
            )
        if rules.exact_target and (rules.target - value) % rules.score_step:
            raise DealError(
                f"scores={values} is not allowed under exact_target: side {side} at {value} could never reach "
                f"exactly {rules.target}, since scores move in steps of {rules.score_step}"
            )
    top = max(values)
    if top >= rules.target and values.count(top) == 1:
        raise DealError(
            f"scores={values} is not allowed: side {values.index(top)} would have won before the game starts "
            f"(a unique top score at or above the target {rules.target}); a tie at the top plays on"
        )
    return values


def _is_sequence(value: Any) -> bool:
    """A list or tuple (or array): strings and mappings do not count as a sequence of tiles."""
    return isinstance(value, (list, tuple, np.ndarray))
