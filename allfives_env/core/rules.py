"""The rules options of All Fives (docs/rules.md §8), validated once, with defaults by player count.

A :class:`Rules` value is immutable and always fully resolved: ``partnership``, ``hand_size`` and
``target`` hold concrete values after construction, whatever "auto" spelling was given. That makes a
rules object safe to hash, to compare and to store in a replay: ``Rules(**rules.to_dict()) == rules``.

Every invalid option or combination fails here, at construction, with a :class:`RulesError` that names
the option, the value and what is allowed, so that no game ever starts on rules it cannot play.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, Mapping, Optional, TypeVar, Union

import numpy as np

from .errors import RulesError, short_repr
from .options import (  # noqa: F401  (CHOICES, the presets, MAX_TARGET and max_count: re-exported)
    BIG_SET_HAND_SIZE, CHOICES, HAND_SIZE_PRESETS, MAX_TARGET, OPTION, OPTIONS, SET_NAMES, SWITCHES, AfterBlock,
    BlockedAward, BonusRound, FirstLeader, HandEnd, HandSizePreset, NoDoubleFallback, Rounding, Spinner,
    SpinnerCount, WinCheck, max_count,
)
from .tiles import SUPPORTED_MAX_PIPS, tile_set  # noqa: F401  (SUPPORTED_MAX_PIPS: re-exported)
from .values import is_integer as _is_int

_short = short_repr


def _plain(value: Any) -> Any:
    """numpy scalars as the Python values they stand for (``np.int64(3)`` -> ``3``), so that rules built
    from arrays compare, hash and serialise to JSON like rules built from literals."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.str_):
        return str(value)
    return value


_R = TypeVar("_R")


def _option_fields(cls: type[_R]) -> type[_R]:
    """``cls`` with the defaults of :data:`.options.OPTIONS` as its field defaults, once checked that its
    fields and its constructor's parameters are the rows of the table, in order, with the table's defaults:
    the option table is the one list of options, and ``Rules`` cannot have an option the table lacks."""
    table = [(o.name, o.default) for o in OPTIONS]
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if list(cls.__annotations__) != [name for name, _ in table] or [(p.name, p.default) for p in parameters] != table:
        raise TypeError(f"{cls.__name__} must declare the options of the table, in order, with their defaults: {table}")
    for name, default in table:
        setattr(cls, name, default)
    return cls


@dataclass(frozen=True, init=False)
@_option_fields
class Rules:
    """All options of docs/rules.md §8: one field per row of the option table (:data:`.options.OPTIONS`), with
    its default and its checks. Defaults are the seed rules; "auto" values resolve by player count.

    ``partnership`` None means "auto" (on for 4 players). ``hand_size`` None means the default by player
    count (9/7/5 for double-six); it also takes ``"five_always"``, ``"seven_five"`` or an integer.
    ``target`` None means 250 for 2 players and 200 for 3-4 (divided by 5 under ``score_unit=5``).
    ``max_hands`` is not a rule but an RL safety cap: after that many hands the game ends as truncated,
    the higher score winning (or a draw). ``None`` disables it.

    The fields have their resolved types (``partnership`` a bool, ``hand_size`` and ``target`` integers, a
    string choice one of its values), and the constructor's parameters the types it accepts, so that code
    reading a rules object needs no cast: the "auto" spellings never outlive construction.
    """

    num_players: int
    partnership: bool
    hand_size: int
    max_pip: int
    boneyard_reserve: int
    first_leader: FirstLeader
    no_double_fallback: NoDoubleFallback
    must_lead_it: bool
    after_block: AfterBlock
    may_draw_when_able: bool
    max_draws_per_turn: Optional[int]
    spinner: Spinner
    spinner_sides_first: bool
    spinner_count: SpinnerCount
    lead_scores: bool
    score_unit: int
    min_first_score: int
    hand_end: HandEnd
    rounding: Rounding
    bonus_round: BonusRound
    blocked_award: BlockedAward
    allow_negative: bool
    target: int
    win_check: WinCheck
    exact_target: bool
    max_hands: Optional[int]

    # ------------------------------------------------------------------ construction
    def __init__(
        self,
        num_players: int = 2,
        partnership: Union[bool, Literal["auto"], None] = None,
        hand_size: Union[int, HandSizePreset, None] = None,
        max_pip: int = 6,
        boneyard_reserve: int = 0,
        first_leader: FirstLeader = "random",
        no_double_fallback: NoDoubleFallback = "heaviest_tile",
        must_lead_it: bool = True,
        after_block: AfterBlock = "random",
        may_draw_when_able: bool = False,
        max_draws_per_turn: Optional[int] = None,
        spinner: Spinner = "first_double",
        spinner_sides_first: bool = True,
        spinner_count: SpinnerCount = "allfives",
        lead_scores: bool = True,
        score_unit: int = 1,
        min_first_score: int = 0,
        hand_end: HandEnd = "deduct_own",
        rounding: Rounding = "nearest",
        bonus_round: BonusRound = "sum_then_round",
        blocked_award: BlockedAward = "opponents_total",
        allow_negative: bool = True,
        target: Union[int, Literal["auto"], None] = None,
        win_check: WinCheck = "immediate",
        exact_target: bool = False,
        max_hands: Optional[int] = 200,
    ) -> None:
        """Every option as given (numpy scalars included), checked and resolved here: a value outside its
        domain raises :class:`RulesError`, whatever its type, because configs arrive from YAML and JSON."""
        given = locals()
        for o in OPTIONS:
            object.__setattr__(self, o.name, given[o.name])
        self._check_choices()
        self._resolve_partnership()
        self._resolve_hand_size()
        self._resolve_scoring()
        self._check_counts()

    def _check_choices(self) -> None:
        """Python values for numpy ones; then every choice and switch of the option table (the player count,
        the set and the score unit are choices of integers)."""
        for f in fields(self):
            value = getattr(self, f.name)
            plain = _plain(value)
            if plain is not value:
                object.__setattr__(self, f.name, plain)
        for o in OPTIONS:
            if o.none_means or o.kind == "count":
                continue  # "auto" values and counts depend on other options: resolved below
            value = getattr(self, o.name)
            if o.kind == "switch":
                ok = isinstance(value, bool)
            else:
                ok = value in o.choices and (isinstance(o.choices[0], str) or _is_int(value))
            if not ok:
                raise RulesError(f"{o.name}={short_repr(value)} is not allowed: {o.allowed}")

    def _resolve_partnership(self) -> None:
        """``partnership``: "auto"/None means on for 4 players; only 4 players can play it."""
        n = self.num_players
        partnership: Any = self.partnership  # as given: None, "auto" or a bool, resolved here
        if partnership is None or partnership == "auto":
            partnership = OPTION["partnership"].auto_value(self)
        if not isinstance(partnership, bool):
            raise RulesError(
                f"partnership={short_repr(self.partnership)} is not allowed: {OPTION['partnership'].allowed}")
        if partnership and n != 4:
            raise RulesError(
                f"partnership=True needs 4 players (seats 0+2 vs 1+3), got num_players={n}; "
                "use partnership=False (or 'auto') for 2 or 3 players"
            )
        object.__setattr__(self, "partnership", partnership)

    def _resolve_hand_size(self) -> None:
        """``hand_size`` by name or number, checked against the set; the reserve and the draw cap."""
        n = self.num_players
        tiles = tile_set(self.max_pip).size
        set_name = SET_NAMES[self.max_pip]
        hand_size: Any = self.hand_size  # as given: None, a preset's name or a number, resolved here
        if hand_size is None or hand_size == "default":
            hand_size = OPTION["hand_size"].auto_value(self)
        elif isinstance(hand_size, str):
            if hand_size not in HAND_SIZE_PRESETS:
                raise RulesError(
                    f"hand_size={short_repr(hand_size)} is not allowed: give a positive integer or one of "
                    f"{list(HAND_SIZE_PRESETS)}"
                )
            hand_size = HAND_SIZE_PRESETS[hand_size][n]
        if not _is_int(hand_size) or hand_size < OPTION["hand_size"].low:
            raise RulesError(
                f"hand_size={short_repr(self.hand_size)} is not allowed: give a positive integer or one of "
                f"{list(HAND_SIZE_PRESETS)}"
            )
        hand_size = int(hand_size)
        if hand_size > OPTION["hand_size"].high(self):
            raise RulesError(
                f"hand_size={_short(hand_size)} is too large: {n} players x {_short(hand_size)} tiles needs "
                f"{_short(n * hand_size)} tiles; "
                f"the {set_name} set has {tiles}"
            )
        object.__setattr__(self, "hand_size", hand_size)

        reserve = self.boneyard_reserve
        undealt = OPTION["boneyard_reserve"].high(self)
        if not _is_int(reserve) or not OPTION["boneyard_reserve"].low <= reserve <= undealt:
            raise RulesError(
                f"boneyard_reserve={short_repr(reserve)} is not allowed: it must be an integer from 0 to {undealt} "
                f"(the boneyard holds {undealt} tiles with {n} players x {hand_size})"
            )
        if self.max_draws_per_turn is not None and (
                not _is_int(self.max_draws_per_turn) or self.max_draws_per_turn < OPTION["max_draws_per_turn"].low):
            raise RulesError(
                f"max_draws_per_turn={short_repr(self.max_draws_per_turn)} is not allowed: give a positive integer or null (unlimited)"
            )

    def _resolve_scoring(self) -> None:
        """The score unit against the rounding, the first-score gate, the target (reachable, and not beyond
        any game that could end) and the hand cap."""
        if self.score_unit == 5 and self.rounding == "none":
            raise RulesError(
                "rounding='none' cannot be combined with score_unit=5: hand pips that are not a multiple of 5 "
                "have no value in units of 5; use rounding='nearest' or 'down'"
            )
        top_count = OPTION["min_first_score"].high(self)
        if not _is_int(self.min_first_score) or not OPTION["min_first_score"].low <= self.min_first_score <= top_count:
            raise RulesError(
                f"min_first_score={_short(self.min_first_score)} is not allowed: give a count from 0 (off) to "
                f"{top_count}, the highest scoring count of the {SET_NAMES[self.max_pip]} set, e.g. 10"
            )
        target: Any = self.target  # as given: None, "auto" or a number, resolved here
        if target is None or target == "auto":
            target = OPTION["target"].auto_value(self)
        top_target = OPTION["target"].high(self)
        if not _is_int(target) or not OPTION["target"].low <= target <= top_target:
            raise RulesError(
                f"target={_short(self.target)} is not allowed: give a positive integer up to {top_target} "
                f"(or null for the default)"
            )
        object.__setattr__(self, "target", int(target))
        if self.exact_target and self.score_step > 1 and target % self.score_step:
            raise RulesError(
                f"exact_target=True with target={target} can never be won: with score_unit=1 and "
                f"rounding={self.rounding!r} every score moves in steps of {self.score_step}; give a target "
                f"that is a multiple of {self.score_step}, or use score_unit=5 (e.g. target 61)"
            )
        if self.max_hands is not None and (not _is_int(self.max_hands) or self.max_hands < OPTION["max_hands"].low):
            raise RulesError(f"max_hands={short_repr(self.max_hands)} is not allowed: give a positive integer or null (no cap)")

    def _check_counts(self) -> None:
        """Every count of the option table within its bounds, once resolved (the resolutions above refuse
        the counts they know first, with what the bound depends on; this catches any other)."""
        for o in OPTIONS:
            value = getattr(self, o.name)
            if o.kind != "count" or (value is None and o.none_means):
                continue
            high = o.high(self)
            if not _is_int(value) or not o.low <= value <= high:
                null = f" (or null: {o.none_means})" if o.none_means else ""
                raise RulesError(f"{o.name}={short_repr(value)} is not allowed: give an integer from {o.low} to "
                                 f"{high}{null}")

    @classmethod
    def from_options(cls, options: Optional[Mapping[str, Any]] = None, **overrides: Any) -> "Rules":
        """Build rules from a mapping (a YAML/JSON config), rejecting unknown keys with a suggestion."""
        if options is not None and not isinstance(options, Mapping):
            raise RulesError(
                f"rules options must be a mapping of option names to values, got {type(options).__name__} "
                f"{_short(options)}"
            )
        merged = dict(options or {})
        merged.update(overrides)
        known = {f.name for f in fields(cls)}
        for key in merged:
            if key not in known:
                close = difflib.get_close_matches(str(key), sorted(known), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise RulesError(f"unknown rules option {short_repr(key)}{hint}; allowed options: {sorted(known)}")
        return cls(**merged)

    def to_dict(self) -> dict[str, Any]:
        """Every option with its resolved value, as plain JSON-friendly types."""
        return asdict(self)

    # ------------------------------------------------------------------ derived facts
    @property
    def score_step(self) -> int:
        """The step every score change is a multiple of: 5 when points are counts and settlements are
        rounded to fives (``score_unit=1``, rounding not ``'none'``), else 1. Starting scores off that
        grid can never meet an ``exact_target``."""
        return 5 if self.score_unit == 1 and self.rounding != "none" else 1

    @property
    def num_sides(self) -> int:
        """Number of scoring sides: 2 teams in partnership, else one per player."""
        return 2 if self.partnership else self.num_players

    def side_of(self, seat: int) -> int:
        """The scoring side of a seat (``seat % 2`` in partnership, else the seat itself)."""
        return seat % 2 if self.partnership else seat

    @property
    def tile_count(self) -> int:
        """Tiles in the set."""
        return tile_set(self.max_pip).size

    @property
    def boneyard_size(self) -> int:
        """Tiles left in the boneyard after the deal."""
        return self.tile_count - self.num_players * self.hand_size

    def round_pips(self, pips: int) -> int:
        """Round a pip total under ``rounding`` (nearest: 0-2 down, 3-4 up; docs/rules.md §6.2)."""
        if self.rounding == "nearest":
            return 5 * ((pips + 2) // 5)
        if self.rounding == "down":
            return 5 * (pips // 5)
        return pips

    def pips_to_points(self, pips: int) -> int:
        """Rounded pips expressed in score units (``score_unit=5`` divides by 5)."""
        return self.round_pips(pips) // self.score_unit


def rules_from(rules: Optional[Rules], options: Mapping[str, Any]) -> Rules:
    """The rules an environment is built on: ``rules=Rules(...)`` or rules options as keywords, not both."""
    if rules is None:
        return Rules.from_options(options)
    if options:
        raise RulesError(f"give either rules=Rules(...) or rules options as keywords, not both (got {sorted(options)})")
    if not isinstance(rules, Rules):
        raise RulesError(
            f"rules={_short(rules)} is not a Rules object: give rules=Rules(...) (or Rules.from_options(dict)), "
            "or the options as keywords"
        )
    return rules
