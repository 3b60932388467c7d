"""Game parameters of ``python_allfives``: their defaults, their checks, and the bounds OpenSpiel asks for.

OpenSpiel parameters are typed (int, float, bool, string) and every one needs a default, so the rules
options that are "auto" or "null" in :class:`~allfives_env.core.rules.Rules` get a spelling here:
``partnership="auto"`` (or ``"on"``/``"off"``; OpenSpiel reads the strings "true"/"false" as
booleans), ``hand_size=0`` and ``target=0`` (the default for the player count),
``max_draws_per_turn=0`` (unlimited). ``max_hands`` must be a number: OpenSpiel needs a finite game.

OpenSpiel keeps integer parameters and the game's lengths in C++ ``int`` (32 bits): every integer
parameter lies in ``-2**31 .. 2**31-1``, and a whole-game episode's history -- ``max_hands`` times the
decisions and chance nodes of one hand -- must fit one too (:func:`max_hands_limit`: 37,675,151 hands of
the double-six set without chosen draws). ``point_scale`` must leave the utility bounds finite
(:func:`utility_bounds`). Each is refused up front with a :class:`RulesError` naming the allowed range.

Beyond the rules, four parameters shape the episode:

* ``episode``: ``"game"`` (to the target, the default) or ``"hand"`` (one hand);
* ``returns``: ``"win"`` (+1 for the winning side, the losers share -1; 0 each on a draw) or
  ``"points"`` (each side's points gained minus the mean gained by the other sides; zero-sum);
* ``point_scale``: ``"points"`` returns are divided by it (search constants such as UCT's c assume
  returns of about +-1);
* ``scores`` / ``scored``: the sides' scores when the episode starts (``"120,85"``; empty: zeros) and
  which sides have scored already (``"1,0"``; matters under ``min_first_score``; empty: the sides
  whose score is not 0). A hand episode from the middle of a game is how the search agents model a
  position.

Nothing here imports pyspiel: this module is the pure half of the game definition.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..core.errors import RulesError, short_repr
from ..core.outcome import EPISODE_MODES as EPISODES, REWARD_MODES as RETURNS
from ..core.options import OPTION, OPTIONS, Option, Param, top_scoring_count
from ..core.rules import Rules
from ..core.tiles import tile_set

#: Every parameter with its default (OpenSpiel's parameter_specification): the rules options' parameters,
#: from the option table (:data:`~allfives_env.core.options.OPTIONS`), then the episode's.
DEFAULTS: dict[str, Any] = {
    **{o.openspiel.name: o.default if o.openspiel.default is None else o.openspiel.default
       for o in OPTIONS if o.openspiel is not None},
    "episode": "game",
    "returns": "win",
    "point_scale": 1.0,
    "scores": "",
    "scored": "",
}

#: The largest value of OpenSpiel's C++ ``int``: integer parameters, ``MaxGameLength``,
#: ``MaxChanceNodesInHistory`` and their sum ``MaxHistoryLength`` are all of that type.
INT_MAX = 2**31 - 1

@dataclass(frozen=True)
class GameConfig:
    """A checked parameter set: the rules, the episode, the returns and the starting scores."""

    rules: Rules
    episode: str
    returns: str
    point_scale: float
    scores: tuple[int, ...]
    scored: tuple[bool, ...]
    params: tuple[tuple[str, Any], ...]  # every parameter, defaults filled in, sorted by name

    @property
    def hands(self) -> int:
        """The most hands an episode can last."""
        if self.episode == "hand":
            return 1
        cap = self.rules.max_hands
        assert cap is not None, "a python_allfives game always has a hand cap (OpenSpiel needs a finite game)"
        return cap

    def as_dict(self) -> dict[str, Any]:
        """The parameters as OpenSpiel takes them."""
        return dict(self.params)


def _check_type(name: str, value: Any) -> Any:
    """``value`` as the type of the parameter's default (OpenSpiel checks types when it loads a game,
    but a config built in Python does not go through OpenSpiel)."""
    default = DEFAULTS[name]
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not -INT_MAX - 1 <= value <= INT_MAX:
            raise RulesError(f"parameter {name}={short_repr(value)} is not allowed: OpenSpiel's integer parameters "
                             f"run from {-INT_MAX - 1} to {INT_MAX}")
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, str)
    if not ok:
        raise RulesError(f"parameter {name}={short_repr(value)} is not allowed: give {type(default).__name__} "
                         f"(default {default!r})")
    return value


def _int_list(name: str, text: str, length: int) -> Optional[tuple[int, ...]]:
    """``"120,-5"`` as integers (exactly ``length`` of them), or None for an empty string."""
    if not text.strip():
        return None
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise RulesError(f"parameter {name}={text!r} is not allowed: give {length} comma-separated integers, "
                         f"one per side (e.g. {','.join(['0'] * length)}), or an empty string") from None
    if len(values) != length:
        raise RulesError(f"parameter {name}={text!r} is not allowed: give {length} comma-separated integers, "
                         f"one per side, got {len(values)}")
    return values


def _option_value(param: Param, value: Any) -> Any:
    """The rules option a parameter value (type-checked) stands for, by the parameter's spelling."""
    if param.spelling == "auto_on_off":
        spelled = value.lower()
        if spelled not in ("auto", "on", "off"):
            raise RulesError(f"parameter {param.name}={value!r} is not allowed: choose 'auto', 'on' (teams "
                             "0+2 vs 1+3, 4 players) or 'off'")
        return None if spelled == "auto" else spelled == "on"
    if param.spelling == "zero_is_none":
        if value < 0:
            raise RulesError(f"parameter {param.name}={value} is not allowed: give a positive integer, or 0 for "
                             f"{param.zero_means}")
        return value or None
    if param.spelling == "positive" and value < 1:
        raise RulesError(f"parameter {param.name}={value} is not allowed: give a positive integer "
                         "(OpenSpiel needs a finite game)")
    return value


def param_value(option: Option, value: Any) -> Any:
    """The ``python_allfives`` parameter value that stands for ``value`` of a rules option with a parameter
    (the inverse of :func:`_option_value`; ``None`` is ``"auto"`` or 0, and a ``max_hands`` of None, which
    OpenSpiel cannot take, the parameter's default)."""
    param = option.openspiel
    if param is None:
        raise RulesError(f"rules option {option.name} has no python_allfives parameter (it has one value)")
    if param.spelling == "auto_on_off":
        return "auto" if value is None else "on" if value else "off"
    if param.spelling == "zero_is_none":
        return int(value or 0)
    if param.spelling == "positive" and value is None:
        return DEFAULTS[param.name]
    return value


def rules_params(rules: Rules) -> dict[str, Any]:
    """The ``python_allfives`` parameters of a rules object (the inverse of :func:`make_config`)."""
    return {o.openspiel.name: param_value(o, getattr(rules, o.name)) for o in OPTIONS if o.openspiel is not None}


def make_config(params: Optional[Mapping[str, Any]] = None) -> GameConfig:
    """Check OpenSpiel parameters and turn them into a :class:`GameConfig`.

    Raises :class:`RulesError` naming the parameter and what it allows, for an unknown parameter, a
    value of the wrong type, a rules option the core refuses, or a combination this game cannot offer:
    ``no_double_fallback`` ``redeal`` and ``draw_until_double`` under ``first_leader="highest_double"``
    (a redeal or an opening draw loop has no bound on its chance nodes, and OpenSpiel needs one).
    """
    given = dict(params or {})
    unknown = sorted(str(k) for k in given if k not in DEFAULTS)
    if unknown:
        raise RulesError(f"unknown parameter(s) {unknown} for python_allfives; allowed: {sorted(DEFAULTS)}")
    merged = {name: _check_type(name, given.get(name, default)) for name, default in DEFAULTS.items()}
    players = merged["players"]
    if players not in OPTION["num_players"].choices:  # named as the parameter, not as the option
        raise RulesError(f"parameter players={players} is not allowed: {OPTION['num_players'].allowed}")
    options = {o.name: _option_value(o.openspiel, merged[o.openspiel.name]) for o in OPTIONS if o.openspiel is not None}
    rules = Rules.from_options(options)
    if merged["episode"] == "game" and merged["max_hands"] > max_hands_limit(rules):
        raise RulesError(f"parameter max_hands={merged['max_hands']} is not allowed: give 1 to "
                         f"{max_hands_limit(rules)} for these rules (OpenSpiel counts a game's decisions and chance "
                         f"nodes, up to {history_per_hand(rules)} a hand, in a 32-bit int), or episode='hand'")
    if rules.first_leader == "highest_double" and rules.no_double_fallback != "heaviest_tile":
        raise RulesError(
            f"parameter no_double_fallback={rules.no_double_fallback!r} is not offered by python_allfives: a redeal "
            "or an opening draw loop has no bound on its chance nodes; use 'heaviest_tile' (or first_leader='random')"
        )
    episode, returns = merged["episode"], merged["returns"]
    if episode not in EPISODES:
        raise RulesError(f"parameter episode={episode!r} is not allowed: choose one of {list(EPISODES)}")
    if returns not in RETURNS:
        raise RulesError(f"parameter returns={returns!r} is not allowed: choose one of {list(RETURNS)}")
    if not merged["point_scale"] > 0:
        raise RulesError(f"parameter point_scale={merged['point_scale']} is not allowed: give a positive number")
    sides = rules.num_sides
    scores = _int_list("scores", merged["scores"], sides) or (0,) * sides
    bound = 2 * rules.target
    if any(not -bound <= s <= bound for s in scores):
        raise RulesError(f"parameter scores={merged['scores']!r} is not allowed: scores run from {-bound} to {bound}")
    scored_ints = _int_list("scored", merged["scored"], sides)
    if scored_ints is not None and any(v not in (0, 1) for v in scored_ints):
        raise RulesError(f"parameter scored={merged['scored']!r} is not allowed: give 0 or 1 per side")
    scored = tuple(bool(v) for v in scored_ints) if scored_ints is not None else tuple(s != 0 for s in scores)
    config = GameConfig(rules, episode, returns, float(merged["point_scale"]), scores, scored,
                        tuple(sorted(merged.items())))
    _check_point_scale(config)
    return config


def _check_point_scale(config: GameConfig) -> None:
    """``points`` returns are divided by ``point_scale``: it must leave the largest one a finite float."""
    if config.returns != "points":
        return
    points = points_bound(config)
    if not math.isfinite(points / config.point_scale):
        least = 1.01 * points / sys.float_info.max  # 1% above the limit: the 3 digits shown round up to it
        raise RulesError(f"parameter point_scale={config.point_scale!r} is not allowed: returns of up to {points} "
                         f"points divided by it overflow a float; give a number of at least {least:.3g} "
                         "(about 1 to 100 keeps returns near +-1)")


# ------------------------------------------------------------------------------------------------ bounds
def num_distinct_actions(rules: Rules) -> int:
    """4 per tile (tile x end W/E/N/S), plus "draw" when drawing is a choice."""
    return 4 * rules.tile_count + (1 if rules.may_draw_when_able else 0)


def max_chance_outcomes(rules: Rules) -> int:
    """Chance outcomes are tile ids (deals and draws), then ``tile_count + i`` for a leader pick i."""
    return rules.tile_count + rules.num_players


def decisions_per_hand(rules: Rules) -> int:
    """Player decisions in a hand: at most one play per tile, plus one chosen draw per boneyard tile."""
    return rules.tile_count + (rules.boneyard_size if rules.may_draw_when_able else 0)


def chance_nodes_per_hand(rules: Rules) -> int:
    """Chance nodes in a hand: one per dealt or drawn tile (each tile at most once), one leader pick."""
    return rules.tile_count + 1


def history_per_hand(rules: Rules) -> int:
    """The most actions (decisions and chance outcomes) one hand adds to a history."""
    return decisions_per_hand(rules) + chance_nodes_per_hand(rules)


def max_hands_limit(rules: Rules) -> int:
    """The largest ``max_hands`` of a whole-game episode: OpenSpiel's ``MaxHistoryLength`` (the game length
    plus the chance nodes, a C++ int) must not overflow."""
    return INT_MAX // history_per_hand(rules)


def max_game_length(config: GameConfig) -> int:
    """Player decisions: :func:`decisions_per_hand` for every hand."""
    return config.hands * decisions_per_hand(config.rules)


def max_chance_nodes(config: GameConfig) -> int:
    """Chance nodes: :func:`chance_nodes_per_hand` for every hand."""
    return config.hands * chance_nodes_per_hand(config.rules)


def points_bound(config: GameConfig) -> int:
    """The most points (before ``point_scale``) a ``points`` return can be, either way: a side gains at most
    one top scoring count per tile a hand plus a bonus of every pip on the table, and loses at most every
    pip (each hand rounded up); the bound on the zero-sum share is their sum over the episode's hands."""
    r = config.rules
    tiles = tile_set(r.max_pip)
    all_pips = sum(tiles.pips) + 5 * r.num_players
    top = top_scoring_count(r.max_pip)
    gain = r.tile_count * top // r.score_unit + (all_pips // r.score_unit if r.hand_end == "winner_takes" else 0)
    loss = all_pips // r.score_unit if r.hand_end == "deduct_own" else 0
    return config.hands * (gain + loss)


def utility_bounds(config: GameConfig) -> tuple[float, float]:
    """(min, max) of any player's return. ``win``: +1, and -1 shared by the losing sides. ``points``:
    :func:`points_bound` over ``point_scale`` (finite: :func:`make_config` checks the scale)."""
    if config.returns == "win":
        return -1.0 / (config.rules.num_sides - 1), 1.0
    bound = points_bound(config) / config.point_scale
    return -float(bound), float(bound)
