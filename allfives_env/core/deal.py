"""The start of a hand: a dealt hand (:class:`Deal`), starting scores, reset options naming them, and how a
game deals a hand and finds its leader (:class:`Dealing`).

Users fix deals to set up positions (tests, puzzles, "what if seat 1 leads") and replays fix every deal
of a recorded game; both come through here, so a deal or a score is checked once, with errors that say
what was wrong and what is allowed, before any game starts on it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from .board import Board
from .chance_node import ChanceNode
from .errors import DealError, short_repr
from .events import Draw, Event, HandStart
from .rules import Rules
from .tiles import TileLike, TileSet, tile_set
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
        for name, named in (("leader", leader), ("opening_drawer", opening_drawer)):
            if named is not None and not (is_integer(named) and 0 <= named < n):
                raise DealError(f"{name}={short_repr(named)} is not a seat: give an integer 0..{n - 1} (or null)")
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


class HandRecord(NamedTuple):
    """What a replay needs to re-deal one hand: the deal as dealt, the leader and the first event index."""

    hand: int
    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    leader: int
    scores: tuple[int, ...]
    first_event: int
    opening_drawer: Optional[int] = None
    redeals: int = 0
    leader_fixed: bool = False  # the deal's leader overrode the one the rules give


_DEAL_NODE = ChanceNode("deal")


class Dealing:
    """How :class:`~allfives_env.core.game.Game` deals a hand and opens it (a mixin: it works on the
    game's own attributes). A fixed deal, the generator's permutation or chance's tiles make a
    :class:`Deal`; the rules then give the leader, or ask for a chance node (a random pick, an opening
    draw, a redeal), which a seeded game decides at once with its generator and an explicit game waits
    at. Between chance nodes the hand being opened is kept in ``_start``."""

    # the game's own state this mixin reads and writes (set by Game.__init__ and by _install below)
    rules: Rules
    tiles: TileSet
    num_players: int
    rng: Optional[np.random.Generator]
    explicit_chance: bool
    deal_seed: Optional[int]
    check_leaders: bool
    hand_number: int
    scores: list[int]
    events: list[Event]
    hand_records: list[HandRecord]
    leader: int
    current: int
    legal: tuple[int, ...]
    _scripted: list[Deal]
    _start: Optional[_HandStart]
    _dealer: Optional[np.random.Generator]
    _last_result: Optional[tuple[str, int, list[int]]]

    if TYPE_CHECKING:  # the explicit-chance half of the game (ExplicitChance defines it)
        def _await(self, node: ChanceNode) -> None: ...

    @property
    def _opening_hand(self) -> "_HandStart":
        """The hand being dealt and opened (only ever asked for between its deal and its lead)."""
        start = self._start
        assert start is not None, "no hand is being opened"
        return start

    @property
    def _rng(self) -> np.random.Generator:
        """The game's generator (a seeded game's: an explicit game asks chance instead, and a fork stops at
        its hand's end, so neither asks)."""
        rng = self.rng
        assert rng is not None, "this game has no generator (explicit chance, or a fork)"
        return rng

    def _new_hand(self) -> None:
        """Deal the next hand (a fixed deal, the generator's, or chance's) and open it."""
        self.hand_number += 1
        scripted = self._scripted.pop(0) if self._scripted else None
        self._start = _HandStart(scripted)
        # deal_seed: this hand's own generator, so its deals do not depend on earlier hands
        self._dealer = None if self.deal_seed is None else np.random.default_rng([self.deal_seed, self.hand_number])
        self._run_start(self._begin(scripted) if scripted is not None else self._deal())
        self._dealer = None

    def _deal(self) -> Optional[ChanceNode]:
        """A fresh deal: from the generator (a permutation: the hands in seat order, then the boneyard), or
        the chance nodes of a deal tile by tile."""
        if self.explicit_chance:
            self._opening_hand.dealt = []
            return _DEAL_NODE
        tiles = self.tiles
        n = self.num_players
        dealer = self._dealer if self._dealer is not None else self._rng
        perm = dealer.permutation(tiles.size).tolist()
        h = self.rules.hand_size
        # Deal(hands, boneyard) with its defaults, built without the NamedTuple's Python-level __new__
        return self._begin(tuple.__new__(Deal, (tuple([tuple(perm[i * h:(i + 1) * h]) for i in range(n)]),
                                             tuple(perm[n * h:]), None, None, False)))

    def _deal_tile(self, tile: int) -> None:
        """Chance deals ``tile``; once every seat has its tiles the hand is dealt (the boneyard is the rest,
        in no order: chance decides it draw by draw)."""
        start = self._opening_hand
        dealt = start.dealt
        dealt.append(tile)
        h = self.rules.hand_size
        if len(dealt) < self.num_players * h:
            self._await(_DEAL_NODE)
            return
        rest = sorted(set(range(self.tiles.size)) - set(dealt))
        hands = tuple(tuple(dealt[i:i + h]) for i in range(0, len(dealt), h))
        self._run_start(self._begin(Deal(hands, tuple(rest))))

    def _run_start(self, node: Optional[ChanceNode]) -> None:
        """Carry the hand start on to its first decision: an explicit game stops at ``node``; a seeded game
        decides it with its generator (a pick: ``integers(k)``; an opening draw: its boneyard's top; a
        redeal: a new permutation) through the same functions :meth:`apply_chance` calls."""
        if self.explicit_chance:
            if node is not None:
                self._await(node)
            return
        while node is not None:
            if node.kind == "pick":
                node = self._picked(int(self._rng.integers(node.choices)))
            elif node.kind == "opening_draw":
                node = self._opening_drew(self._opening_hand.stock[-1])
            else:
                node = self._deal()

    def _begin(self, deal: Deal) -> Optional[ChanceNode]:
        """A dealt hand: find its leader (the next chance node, if that needs one)."""
        start = self._opening_hand
        start.deal = deal
        start.hands = [self.tiles.mask_of(hand) for hand in deal.hands]
        start.stock = list(reversed(deal.boneyard))
        start.opening = []
        start.drawer = None
        return self._choose_leader()

    def _choose_leader(self) -> Optional[ChanceNode]:
        """The leader the rules give for the dealt hand, and the tile the leader must lead; a pick or an
        opening draw when chance decides, a redeal when the rules want one."""
        r = self.rules
        tiles = self.tiles
        n = self.num_players
        start = self._opening_hand
        deal, hands = start.deal, start.hands
        fixed = deal.leader is not None
        if self.hand_number == 1:
            if r.first_leader == "random":
                return self._open(None) if fixed else self._pick_among(tuple(range(n)), "leader")
            for v in range(tiles.max_pip, -1, -1):
                d = tiles.double_id[v]
                for seat in range(n):
                    if (hands[seat] >> d) & 1:
                        return self._open(seat, d if r.must_lead_it else -1)
            fallback = r.no_double_fallback
            if fallback == "heaviest_tile":
                best = max((t for seat in range(n) for t in tiles.tiles_of(hands[seat])),
                           key=lambda t: (tiles.pips[t], tiles.high[t]))
                holder = next(seat for seat in range(n) if (hands[seat] >> best) & 1)
                return self._open(holder, best if r.must_lead_it else -1)
            if fallback == "redeal":
                return self._open(None) if fixed else self._redeal()
            # draw_until_double: seats draw in turn from the opening drawer until a double comes up
            if deal.opening_drawer is None:
                return self._pick_among(tuple(range(n)), "drawer")
            return self._opening_from(deal.opening_drawer)
        last = self._last_result
        assert last is not None, "every hand after the first follows a settled one"
        result, dominoer, pips = last
        if result == "domino":
            return self._open(dominoer)
        if r.after_block == "rotate":
            return self._open((self.leader + 1) % n)
        if r.after_block == "lowest_pips":
            low = min(pips)
            tied = [s for s, p in enumerate(pips) if p == low]
            if len(tied) == 1:
                return self._open(tied[0])
            return self._open(None) if fixed else self._pick_among(tuple(tied), "leader")
        return self._open(None) if fixed else self._pick_among(tuple(range(n)), "leader")

    def _pick_among(self, seats: tuple[int, ...], role: str) -> ChanceNode:
        """A uniform pick among ``seats`` of the leader or of the opening drawer: a chance node."""
        start = self._opening_hand
        start.seats, start.role = seats, role
        return ChanceNode("pick", -1, False, len(seats))

    def _picked(self, i: int) -> Optional[ChanceNode]:
        """The pick's outcome ``i``: the ``i``-th of its seats leads, or draws first."""
        start = self._opening_hand
        seat = start.seats[i]
        if start.role == "drawer":
            return self._opening_from(seat)
        return self._open(seat)

    def _opening_from(self, drawer: int) -> Optional[ChanceNode]:
        start = self._opening_hand
        start.drawer = start.seat = drawer
        return self._opening_next()

    def _opening_next(self) -> Optional[ChanceNode]:
        """The next opening draw, or the end of the boneyard: a redeal (or the fixed deal's leader)."""
        start = self._opening_hand
        if len(start.stock) > self.rules.boneyard_reserve:
            return ChanceNode("opening_draw", start.seat, False)
        return self._open(None) if start.deal.leader is not None else self._redeal()

    def _opening_drew(self, tile: int) -> Optional[ChanceNode]:
        """``tile`` drawn by the opening drawer in turn: a double leads, anything else passes the draw on."""
        start = self._opening_hand
        take_tile(start.stock, tile)
        seat = start.seat
        start.hands[seat] |= 1 << tile
        start.opening.append(Draw(seat, tile, False))
        if self.tiles.is_double[tile]:
            return self._open(seat, tile if self.rules.must_lead_it else -1)
        start.seat = (seat + 1) % self.num_players
        return self._opening_next()

    def _redeal(self) -> Optional[ChanceNode]:
        start = self._opening_hand
        if start.scripted:
            raise DealError(
                "the fixed deal holds no double and no_double_fallback='redeal'/'draw_until_double' could "
                "not find one: give a leader, or deal a double"
            )
        start.redeals += 1
        return self._deal()

    def _open(self, expected: Optional[int], lead_tile: int = -1) -> Optional[ChanceNode]:
        """Open the dealt hand: ``expected`` is the leader the rules give (None when a fixed deal's leader
        stands in for a random one), ``lead_tile`` the tile the leader must lead (-1: any). The hand start
        is over, so no chance node follows (None)."""
        start = self._opening_hand
        self._start = None
        deal, hands = start.deal, start.hands
        r = self.rules
        leader = deal.leader if deal.leader is not None else expected
        assert leader is not None, "a hand opens with a leader: the rules' or the fixed deal's"
        overridden = deal.leader is not None and expected is not None and deal.leader != expected
        if overridden and self.check_leaders and not deal.leader_fixed:
            raise DealError(f"hand {self.hand_number}: leader {deal.leader} does not follow from the rules, which give seat {expected}")
        if lead_tile >= 0 and not (hands[leader] >> lead_tile) & 1:
            lead_tile = -1  # a user-chosen leader does not hold the designated tile: free lead
        self.leader = leader
        self._install(Board(self.tiles, r.spinner_sides_first, r.spinner_count), hands, start.stock)
        boneyard = deal.boneyard
        if self.explicit_chance:  # the drawing order so far (the opening draws), then the rest in no order
            boneyard = tuple(e.tile for e in start.opening) + tuple(sorted(start.stock))
        self.hand_records.append(
            tuple.__new__(HandRecord, (self.hand_number, deal.hands, boneyard, leader, tuple(self.scores),
                                     len(self.events), start.drawer, start.redeals, overridden))
        )
        self.events.append(tuple.__new__(HandStart, (self.hand_number, leader, tuple(self.scores))))
        self.events.extend(start.opening)
        self.opening_draws = len(start.opening)  # the draws after the hand start that chose the leader
        self.current = leader
        self.legal = (lead_tile << 2,) if lead_tile >= 0 else tuple(self.board.placements(self.hands[leader]))
        return None

    def _install(self, board: Board, hands: list[int], stock: list[int]) -> None:
        """Make ``board``, ``hands`` and ``stock`` the position of a fresh hand."""
        self.board = board
        self.hands = hands
        self._stock = stock
        self.voids = [0] * self.num_players
        self.played: list[tuple[int, int]] = []  # (tile, seat) on the board, in the order played
        self._passes = 0
        self._draws_this_turn = 0
        self._pending_void: Optional[tuple[int, int]] = None


class _HandStart:
    """A hand between its deal and its lead: what the leader's choice works on (the deal, the hands and
    the boneyard with the opening draws so far), kept on the game between chance nodes."""

    deal: Deal  # the dealt hand, set by Dealing._begin before anything reads it

    def __init__(self, scripted: Optional[Deal]) -> None:
        self.scripted = scripted is not None
        self.dealt: list[int] = []  # an explicit deal's tiles so far, in deal order
        self.hands: list[int] = []
        self.stock: list[int] = []
        self.opening: list[Draw] = []
        self.drawer: Optional[int] = None  # the opening drawer (draw_until_double)
        self.seat = -1  # the seat to draw next in the opening draws
        self.seats: tuple[int, ...] = ()  # what a pick picks among
        self.role = "leader"
        self.redeals = 0

    def copy(self) -> "_HandStart":
        other = _HandStart.__new__(_HandStart)
        other.__dict__.update(self.__dict__)
        other.dealt = self.dealt[:]
        other.hands = self.hands[:]
        other.stock = self.stock[:]
        other.opening = self.opening[:]
        return other


def take_tile(stock: list[int], tile: int) -> None:
    """Remove the drawn ``tile`` from ``stock``: a seeded game draws its last item, chance any of them."""
    if stock[-1] == tile:
        stock.pop()
    else:
        stock.remove(tile)
