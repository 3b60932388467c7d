"""The rules options of All Fives (docs/rules.md §8) as one table, the single list every part of the project reads.

Each row of :data:`OPTIONS` says everything about one option: its name, type and domain, its default (and
how "auto" / ``None`` resolves), a one-line doc, how :func:`allfives_env.rule_sampler.random_rules` draws
it, and its OpenSpiel parameter. From the table come the fields and the checks of
:class:`~allfives_env.core.rules.Rules`, the random rule sets of the differential tests, the parameters of
``python_allfives`` and the coverage tests (every option at every value of its domain, integers at their
bounds, played by the batch engine and by OpenSpiel's ``random_sim_test``). The batch engine keeps its
encoders in ``allfives_env.batch.layout.ENCODERS``, keyed by option name, and refuses rules with an option
it has no encoder for: the core never imports the batch engine.

A new option is one row here, its rule in the core, its encoder and kernel code in the batch engine and
its case in the rules reference; the coverage tests then fail until both engines play it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Optional, get_args

from .tiles import SUPPORTED_MAX_PIPS

# The string choices, as types: a resolved ``Rules`` field holds one of these, and the table's ``choices``
# are read from them (``get_args``), so the type checker and the checks at construction share one list.
FirstLeader = Literal["random", "highest_double"]
NoDoubleFallback = Literal["heaviest_tile", "redeal", "draw_until_double"]
AfterBlock = Literal["random", "lowest_pips", "rotate"]
Spinner = Literal["first_double"]
SpinnerCount = Literal["allfives", "sniff"]
HandEnd = Literal["deduct_own", "winner_takes"]
Rounding = Literal["nearest", "down", "none"]
BonusRound = Literal["sum_then_round", "round_each"]
BlockedAward = Literal["opponents_total", "difference"]
WinCheck = Literal["immediate", "end_of_hand"]
#: The names ``hand_size`` also takes (the keys of :data:`HAND_SIZE_PRESETS`).
HandSizePreset = Literal["default", "five_always", "seven_five"]

#: Deal sizes by player count for the double-six set (docs/rules.md §2): the seed default and its variants.
HAND_SIZE_PRESETS: dict[str, dict[int, int]] = {
    "default": {2: 9, 3: 7, 4: 5},
    "five_always": {2: 5, 3: 5, 4: 5},
    "seven_five": {2: 7, 3: 5, 4: 5},
}
#: Default deal sizes for the bigger sets (a choice of this project: no source gives one, docs/rules.md §2).
BIG_SET_HAND_SIZE = {9: 7, 12: 9}
#: Default deal sizes for the double-three miniature (10 tiles), by player count: a choice of this project, so
#: that a boneyard is left to draw from (docs/rules.md §2).
MINIATURE_HAND_SIZE = {2: 3, 3: 2, 4: 2}
#: The highest target accepted (in points): a game far past any table's target could run for so many
#: hands that its event log would not fit in memory, and with ``max_hands=None`` nothing else ends it.
MAX_TARGET = 10_000
#: The largest value of a count without a bound of its own (``max_draws_per_turn``, ``max_hands``): the
#: engines keep counts in 32-bit integers (OpenSpiel's C++ ``int``), and a replay stores them as JSON.
MAX_COUNT = 2**31 - 1


def max_count(max_pip: int) -> int:
    """The largest count the layout of the double-``max_pip`` set can show: four arms each ending in a
    different double, none of them the spinner's (36 for double-six; 2 x (m + m-1 + m-2 + m-3))."""
    return 2 * (4 * max_pip - 6)


def top_scoring_count(max_pip: int) -> int:
    """The highest count that scores (a multiple of 5) in the double-``max_pip`` set."""
    return 5 * (max_count(max_pip) // 5)


@dataclass(frozen=True)
class Draw:
    """How :func:`~allfives_env.rule_sampler.random_rules` draws an option: ``values[rng.integers(len(values))]``
    (repeat a value to weight it), options in ascending ``order`` (table order within one), so that a seed
    always draws the same rules. ``when=(option, value)``: drawn only if that option was drawn with that value
    (else left out); ``divide_by``: the drawn value is divided by that option's drawn value; ``chance``: set
    to ``values[0]`` when ``rng.random() < chance``, else left out."""

    values: tuple[Any, ...]
    order: int
    when: Optional[tuple[str, Any]] = None
    divide_by: Optional[str] = None
    chance: Optional[float] = None


@dataclass(frozen=True)
class Param:
    """The option's ``python_allfives`` parameter. OpenSpiel parameters are typed and need a default, so
    ``spelling`` says how the option is written there: ``"plain"`` (the option's value and type),
    ``"auto_on_off"`` (a string: ``"auto"`` for ``None``, ``"on"``, ``"off"``), ``"zero_is_none"`` (an
    integer, 0 for ``None``: ``zero_means`` says what that is) or ``"positive"`` (an integer of at least 1;
    ``None`` has no spelling, because OpenSpiel needs a finite game)."""

    name: str
    spelling: str = "plain"
    default: Any = None  # None: the option's own default
    zero_means: str = ""


@dataclass(frozen=True)
class Option:
    """One rules option. ``kind``: ``"choice"`` (one of ``choices``), ``"switch"`` (true/false) or
    ``"count"`` (an integer from ``low`` to ``high``; ``high`` may depend on the other, already resolved
    options). ``none_means``: what ``None`` (or ``"auto"``) stands for, and
    ``auto`` resolves it where it stands for a value. ``refusal``: what the error message says is allowed.
    ``needs``: the other options a value needs to be valid (played with it by the coverage tests)."""

    name: str
    default: Any
    doc: str
    kind: str
    sample: Draw
    openspiel: Optional[Param]
    choices: tuple[Any, ...] = ()
    low: int = 0
    high: Callable[[Any], int] = lambda r: MAX_COUNT
    none_means: str = ""
    auto: Optional[Callable[[Any], Any]] = None
    presets: tuple[str, ...] = ()
    refusal: str = ""
    needs: dict[Any, dict[str, Any]] = field(default_factory=dict, compare=False)

    @property
    def allowed(self) -> str:
        """What the error message for a refused value says is allowed."""
        if self.refusal:
            return self.refusal
        if self.kind == "switch":
            return "it must be true or false"
        return f"choose one of {list(self.choices)}"

    def auto_value(self, context: Any) -> Any:
        """The value ``None`` (or ``"auto"``) stands for under the other, already resolved options of
        ``context``; only options whose ``None`` stands for a value have one."""
        if self.auto is None:
            raise TypeError(f"the option {self.name} has no automatic value ({self.none_means or 'None is not allowed'})")
        return self.auto(context)

    def values(self, context: Any) -> list[Any]:
        """Every value of the domain the coverage tests play: each choice, both switch values, a count at
        its bounds under the resolved rules ``context`` and its presets, and ``None`` where it means
        something."""
        if self.kind == "choice":
            out = list(self.choices)
        elif self.kind == "switch":
            out = [False, True]
        else:
            out = [self.low, self.high(context), *self.presets]
        if self.none_means:
            out.append(None)
        return list(dict.fromkeys(v for v in out if v is not None or self.none_means))

    def cases(self, context: Any) -> list[dict[str, Any]]:
        """One option dictionary per value of :meth:`values`, with what the value ``needs``."""
        return [{**self.needs.get(value, {}), self.name: value} for value in self.values(context)]


def _choice(name: str, literal: object, doc: str, refusal: str = "", param: bool = True) -> Option:
    """A string choice, its values the ``Literal`` type its ``Rules`` field has (the first is the default),
    drawn uniformly by the sampler (with the other choices, first); a plain parameter unless ``param`` is
    false."""
    choices: tuple[str, ...] = get_args(literal)
    return Option(name, choices[0], doc, "choice", Draw(choices, 0), Param(name) if param else None,
                  choices=choices, refusal=refusal)


def _switch(name: str, default: bool, doc: str) -> Option:
    """A true/false option, drawn after the choices, and a plain parameter."""
    return Option(name, default, doc, "switch", Draw((False, True), 1), Param(name))


def _default_hand_size(r: Any) -> int:
    if r.max_pip == 6:
        return HAND_SIZE_PRESETS["default"][r.num_players]
    if r.max_pip == 3:
        return MINIATURE_HAND_SIZE[r.num_players]
    return BIG_SET_HAND_SIZE[r.max_pip]


_DEFAULT = "the default for the player count"

#: Every rules option, in the order of :class:`~allfives_env.core.rules.Rules`' fields.
OPTIONS: tuple[Option, ...] = (
    Option("num_players", 2, "players at the table", "choice", Draw((2, 3, 4), 2), Param("players"),
           choices=(2, 3, 4), refusal="All Fives is played by 2, 3 or 4 players"),
    Option("partnership", None, "teams 0+2 vs 1+3 (4 players only)", "switch",
           Draw((False,), 11, chance=0.25), Param("partnership", "auto_on_off", "auto"),
           none_means="auto: on for 4 players", auto=lambda r: r.num_players == 4,
           refusal="give true, false or 'auto'",
           needs={value: {"num_players": 4} for value in (None, False, True)}),
    Option("hand_size", None, "tiles dealt to each seat", "count",
           Draw((None, "five_always", "seven_five"), 4, when=("max_pip", 6)),
           Param("hand_size", "zero_is_none", 0, _DEFAULT), low=1, high=lambda r: r.tile_count // r.num_players,
           none_means="9/7/5 by player count for double-six, 3/2/2 for double-three, 7 for double-nine, 9 for "
                      "double-twelve",
           auto=_default_hand_size, presets=("five_always", "seven_five")),
    Option("max_pip", 6, "the set: double-six, the double-three miniature, double-nine or double-twelve", "choice",
           Draw((6, 6, 6, 9, 12), 3), Param("max_pip"), choices=SUPPORTED_MAX_PIPS,
           refusal=f"choose one of {SUPPORTED_MAX_PIPS}"),
    Option("boneyard_reserve", 0, "boneyard tiles nobody may draw", "count", Draw((0, 0, 1, 2), 7),
           Param("boneyard_reserve"), low=0, high=lambda r: r.boneyard_size),
    _choice("first_leader", FirstLeader, "who leads the first hand"),
    _choice("no_double_fallback", NoDoubleFallback,
            "first_leader='highest_double' when no double was dealt"),
    _switch("must_lead_it", True, "the first leader must lead the tile that made them leader"),
    _choice("after_block", AfterBlock, "who leads after a blocked hand"),
    _switch("may_draw_when_able", False, "drawing is allowed while holding a playable tile"),
    Option("max_draws_per_turn", None, "draws allowed in one turn", "count", Draw((None, 1, 2), 6),
           Param("max_draws_per_turn", "zero_is_none", 0, "unlimited"), low=1, high=lambda r: MAX_COUNT,
           none_means="unlimited"),
    _choice("spinner", Spinner, "which double becomes the spinner",
            refusal="choose one of ['first_double'] ('none' and 'all_doubles' are family variants outside v1, "
                    "docs/rules.md §4)", param=False),  # one value: python_allfives offers no parameter
    _switch("spinner_sides_first", True, "the spinner's sides are played before its ends"),
    _choice("spinner_count", SpinnerCount, "how the spinner counts on the ends"),
    _switch("lead_scores", True, "the lead tile scores its count"),
    Option("score_unit", 1, "points are counts (1) or counts / 5 (5)", "choice", Draw((1, 1, 5), 5),
           Param("score_unit"), choices=(1, 5), refusal="choose 1 (points = count) or 5 (points = count / 5)"),
    Option("min_first_score", 0, "count a side needs for its first score (0: off)", "count",
           Draw((0, 0, 10), 8), Param("min_first_score"), low=0, high=lambda r: top_scoring_count(r.max_pip)),
    _choice("hand_end", HandEnd, "how a hand is settled"),
    _choice("rounding", Rounding, "how settled pips round to fives"),
    _choice("bonus_round", BonusRound, "round the sum of the hands or each hand"),
    _choice("blocked_award", BlockedAward, "what the low side wins in a blocked hand"),
    _switch("allow_negative", True, "scores may go below zero"),
    Option("target", None, "points that win the game", "count",
           Draw((30, 60, 100, 150), 9, divide_by="score_unit"), Param("target", "zero_is_none", 0, _DEFAULT),
           low=1, high=lambda r: MAX_TARGET // r.score_unit,
           none_means="250 for 2 players, 200 for 3-4 (divided by score_unit)",
           auto=lambda r: (250 if r.num_players == 2 else 200) // r.score_unit),
    _choice("win_check", WinCheck, "when reaching the target ends the game"),
    _switch("exact_target", False, "the target must be hit exactly"),
    Option("max_hands", 200, "an RL safety cap: after that many hands the game ends truncated",
           "count", Draw((3, 20, 50), 10), Param("max_hands", "positive"), low=1, high=lambda r: MAX_COUNT,
           none_means="no cap"),
)

#: The table by option name.
OPTION: dict[str, Option] = {o.name: o for o in OPTIONS}
#: The string choices by option name, from the table (what the tests and tools that list choices read).
CHOICES: dict[str, tuple[str, ...]] = {o.name: o.choices for o in OPTIONS
                                       if o.kind == "choice" and isinstance(o.choices[0], str)}
#: The true/false options with a plain default (``partnership``, which has "auto", is not one).
SWITCHES: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.kind == "switch" and not o.none_means)
#: The sets by their ``max_pip``, as the error messages name them.
SET_NAMES = {3: "double-three", 6: "double-six", 9: "double-nine", 12: "double-twelve"}
