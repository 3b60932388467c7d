"""One game of All Fives: deals, turns, forced draws and passes, scoring, settlement and the win check.

The game is a plain object driven by :meth:`Game.step`. It asks a seat to act only when that seat has a
choice to make: a legal placement exists, or (under ``may_draw_when_able``) it may draw. Everything else
(forced draws, passes, blocked hands, settlement, dealing the next hand) happens inside ``step`` and is
written to the public event log :attr:`Game.events`.

Order of operations for a play (docs/rules.md §3 step 5): place the tile, count the ends, credit the points,
check for a win (under ``win_check='immediate'`` the game may end here), settle the hand if the player
dominoed, then pass the turn on.

Randomness: one ``numpy.random.Generator`` per game, used for deals and random leaders only, so a seed
fixes the whole game given the players' actions. With ``chance="explicit"`` there is no generator: the game
stops at each random event (a chance node, :mod:`.chance`) and the caller decides it with
:meth:`Game.apply_chance`. Both ways run the same functions; the seeded game only feeds them its
generator's picks without stopping.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from .actions import action_name
from .board import Board
from .chance import CHANCE, ChanceNode, deal_outcomes, is_deal_outcome
from .deal import Deal, starting_scores
from .errors import DealError, GameOverError, IllegalActionError, RulesError, SeedError, short_repr
from .events import Draw, Event, GameOver, HandStart, Pass, Play, Settlement
from .rules import Rules
from .seeds import check_seed
from .tiles import TileSet, tile_set

SeedLike = Union[None, int, np.random.Generator]
#: builds an event (or another NamedTuple record) from a tuple of all its fields, without the NamedTuple's
#: Python-level __new__: the same value, one Python call less (the engine writes several a turn)
_new_event = tuple.__new__
_INT64 = np.int64


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


def _as_action_id(action: Any) -> Optional[int]:
    """The plain int an integer-like action stands for: a numpy integer (an action sampled from the mask
    is one) or an int subclass, but never a bool; None for anything else, which no legal tuple holds.
    :meth:`Game.step` converts once here instead of trying the action as given first."""
    if isinstance(action, np.integer) or (isinstance(action, int) and not isinstance(action, bool)):
        return int(action)
    return None


def _as_generator(seed: SeedLike) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_seed(seed))


class Game:
    """A whole game to the target (or one hand with ``stop_after_hand``).

    Parameters:
        rules: the rules; default :class:`Rules()` (2 players, seed rules).
        seed: an int, None, or a ``numpy.random.Generator`` used for every deal and random choice.
        deals: fixed deals for the first hands (hand 1 first); later hands are dealt from ``seed``.
        scores: starting score of each side (default zeros).
        stop_after_hand: end the game after the first hand (for ``episode='hand'``).
        deal_seed: when given, hand k is dealt from its own generator seeded ``(deal_seed, k)``, so the
            deals do not depend on what happened in earlier hands: two games with the same
            ``deal_seed`` see the same deals whoever plays them (duplicate evaluation).
        check_leaders: reject a fixed deal whose leader contradicts a rule that fixes the leader (the
            player who dominoed, the highest double, ...). Replays use it; users fixing a deal do not.
        chance: ``"seeded"`` (the default) draws every random event from ``seed``; ``"explicit"`` stops at
            each one instead, so that the caller decides it and knows its probability (OpenSpiel's chance
            nodes, exact enumeration). An explicit game takes no ``seed``, ``deal_seed`` or ``deals``.

    Explicit chance: while :meth:`is_chance_node` is true, :attr:`current` is :data:`~.chance.CHANCE`
    (-2), no seat may act, :attr:`chance_node` says what is being decided, :meth:`chance_outcomes` lists
    ``(outcome, probability)`` with exact :class:`~fractions.Fraction` probabilities summing to 1, and
    :meth:`apply_chance` applies one outcome and runs on to the next node (a chance node, a seat's choice,
    or the end). The nodes are the deal tile by tile (each seat's tiles ascending), each random pick of a
    seat (outcome ``i`` of ``k``: the ``i``-th of the seats it picks among) and each tile drawn from the
    boneyard (uniform); :mod:`.chance` lists them. A seeded game runs through the same functions with its
    generator's picks (a whole permutation for a deal, ``integers(k)`` for a pick, the top of its shuffled
    boneyard for a draw), so giving a seeded game's picks to an explicit game replays it event for event.
    """

    def __init__(
        self,
        rules: Optional[Rules] = None,
        seed: SeedLike = None,
        *,
        deals: Sequence[Deal] = (),
        scores: Optional[Sequence[int]] = None,
        stop_after_hand: bool = False,
        check_leaders: bool = False,
        deal_seed: Optional[int] = None,
        chance: str = "seeded",
    ) -> None:
        if rules is not None and not isinstance(rules, Rules):
            raise RulesError(f"rules must be a Rules object (Rules(...) or Rules.from_options({{...}})), got {short_repr(rules)}")
        self.explicit_chance = _check_chance(chance, seed, deal_seed, deals)
        self.rules = rules if rules is not None else Rules()
        r = self.rules
        self.tiles: TileSet = tile_set(r.max_pip)
        self.rng: Optional[np.random.Generator] = None if self.explicit_chance else _as_generator(seed)
        self.num_players = n = r.num_players
        self.num_sides = r.num_sides
        self.side_of = tuple(r.side_of(s) for s in range(n))
        self.draw_action: int = self.tiles.size * 4 if r.may_draw_when_able else -1
        # the seed rules score a play as its count: a flag lets the hot path skip the variant checks
        self._plain_scoring = r.lead_scores and r.score_unit == 1 and not r.min_first_score and not r.exact_target
        self._immediate_win = r.win_check == "immediate"
        self.stop_after_hand = stop_after_hand
        self.check_leaders = check_leaders
        self.deal_seed = check_seed(deal_seed, "deal_seed")
        if not isinstance(deals, (list, tuple)) or not all(isinstance(d, Deal) for d in deals):
            raise DealError(f"deals must be a list of Deal values (Deal.from_tiles(rules, hands, ...)), got {short_repr(deals)}")
        self._scripted = list(deals)
        self.scores = [0] * self.num_sides if scores is None else starting_scores(r, scores)
        self.is_in = [s != 0 for s in self.scores]  # for min_first_score: has the side scored yet?
        self.events: list[Event] = []
        self.hand_records: list[HandRecord] = []
        self.hand_number = 0
        self.hands_completed = 0
        self.over = False
        self.winner: Optional[int] = None
        self.truncated = False
        self.current = -1
        # a tuple, never the engine's own list: a caller cannot make an unheld tile legal by appending
        self.legal: tuple[int, ...] = ()
        self.leader = -1
        self._last_result: Optional[tuple[str, int, list[int]]] = None  # (result, dominoer, pips) of last hand
        self.chance_node: Optional[ChanceNode] = None  # the chance node an explicit game waits at
        self._start: Optional[_HandStart] = None  # a hand being dealt and opened (between its chance nodes)
        if self.explicit_chance:
            # the position a chance node shows while the first hand is dealt: empty, but complete for copies
            self._install(Board(self.tiles, r.spinner_sides_first, r.spinner_count), [0] * n, [])
        self._new_hand()

    # ================================================================== public queries
    def legal_actions(self) -> list[int]:
        """Legal action ids of the seat to act, ascending (empty once the game is over).

        :attr:`legal` holds the same ids in the engine's own fixed order, without the copy and sort.
        """
        return sorted(self.legal)

    @property
    def current_player(self) -> int:
        """The seat to act, -1 when the game is over, or -2 (:data:`~.chance.CHANCE`) at a chance node."""
        return self.current

    def hand(self, seat: int) -> list[int]:
        """Tile ids in ``seat``'s hand, ascending."""
        return self.tiles.tiles_of(self.hands[seat])

    def hand_sizes(self) -> list[int]:
        """Number of tiles in each seat's hand."""
        return [m.bit_count() for m in self.hands]

    def boneyard(self) -> list[int]:
        """The boneyard, index 0 drawn next (hidden information)."""
        return self._stock[::-1]

    @property
    def stock(self) -> list[int]:
        """The boneyard as the list the game draws from: in a seeded game its last item is the next tile
        drawn (hidden information; :meth:`boneyard` gives it in drawing order). Under explicit chance the
        order means nothing: each draw is a chance node over all of it."""
        return self._stock

    @property
    def boneyard_size(self) -> int:
        """Tiles left in the boneyard."""
        return len(self._stock)

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn (boneyard minus the reserve)."""
        return max(0, len(self._stock) - self.rules.boneyard_reserve)

    def count(self) -> int:
        """The current count of the ends."""
        return self.board.count() if self.board.size else 0

    def action_names(self, actions: Optional[Sequence[int]] = None) -> list[str]:
        """Names of actions (default: the legal ones), e.g. ``["6-4@W", "6-4@E"]``."""
        return [action_name(a, self.tiles) for a in (self.legal if actions is None else actions)]

    # ================================================================== explicit chance
    def is_chance_node(self) -> bool:
        """Whether the game waits for a chance outcome (only ever under ``chance="explicit"``)."""
        return self.chance_node is not None

    def chance_outcomes(self) -> list[tuple[int, Fraction]]:
        """The outcomes of the chance node with their exact probabilities (summing to 1), ascending; empty
        when the game is not at a chance node. See :mod:`.chance` for what the outcomes are."""
        node = self.chance_node
        if node is None:
            return []
        if node.kind == "deal":
            return deal_outcomes(self._start.dealt, self.rules.hand_size, self.tiles.size)  # type: ignore[union-attr]
        if node.kind == "pick":
            return [(i, Fraction(1, node.choices)) for i in range(node.choices)]
        stock = self._stock if node.kind == "draw" else self._start.stock  # type: ignore[union-attr]
        p = Fraction(1, len(stock))
        return [(t, p) for t in sorted(stock)]

    def apply_chance(self, outcome: int) -> None:
        """Decide the chance node with ``outcome`` (one of :meth:`chance_outcomes`) and run on to the next
        node. Raises :class:`IllegalActionError` for anything else (the message lists the outcomes allowed),
        and at a node that is not a chance node, leaving the game as it was."""
        node = self.chance_node
        if node is None:
            where = "the game is over" if self.over else f"seat {self.current} is to act (use step)"
            raise IllegalActionError(f"apply_chance({short_repr(outcome)}): not a chance node: {where}")
        value = _as_action_id(outcome)
        if value is None or not self._is_outcome(node, value):
            allowed = [o for o, _ in self.chance_outcomes()]
            raise IllegalActionError(f"chance outcome {short_repr(outcome)} is not possible at this {node.kind} "
                                     f"node; allowed: {short_repr(allowed)}")
        self.chance_node = None
        kind = node.kind
        if kind == "draw":
            self._drew(node.seat, node.forced, value)
            return
        start = self._start
        assert start is not None
        if kind == "deal":
            start.dealt.append(value)
            h = self.rules.hand_size
            if len(start.dealt) < self.num_players * h:
                self.chance_node = node
                return
            dealt = start.dealt
            rest = sorted(set(range(self.tiles.size)) - set(dealt))
            self._run_start(self._begin(Deal(tuple(tuple(dealt[i:i + h]) for i in range(0, len(dealt), h)), tuple(rest))))
        elif kind == "pick":
            self._run_start(self._picked(value))
        else:
            self._run_start(self._opening_drew(value))

    def _is_outcome(self, node: ChanceNode, value: int) -> bool:
        """Whether ``value`` is an outcome of ``node`` (without listing them all)."""
        if node.kind == "pick":
            return 0 <= value < node.choices
        if node.kind == "deal":
            return is_deal_outcome(self._start.dealt, self.rules.hand_size, self.tiles.size, value)  # type: ignore[union-attr]
        return value in (self._stock if node.kind == "draw" else self._start.stock)  # type: ignore[union-attr]

    def deal_so_far(self) -> tuple[int, ...]:
        """The tiles chance has dealt so far in a hand that has not opened yet (at its deal nodes, and
        after them at its leader pick), in deal order, seat 0's first; empty once the hand is open."""
        start = self._start
        return tuple(start.dealt) if start is not None else ()

    def _await(self, node: ChanceNode) -> None:
        """Stop at chance node ``node``: no seat acts until :meth:`apply_chance` decides it."""
        self.chance_node = node
        self.current = CHANCE
        self.legal = ()

    # ================================================================== copies
    def clone(self) -> "Game":
        """An independent copy sharing nothing mutable (for search). The copy's generator is a copy."""
        other = self._copy_position()
        if self.rng is not None:
            other.rng = np.random.Generator(type(self.rng.bit_generator)())
            other.rng.bit_generator.state = self.rng.bit_generator.state
        other.events = self.events[:]
        other.hand_records = self.hand_records[:]
        other._scripted = self._scripted[:]
        return other

    def fork(self) -> "Game":
        """A cheap copy for search: the same position, an empty event log, and play that stops at the end
        of the current hand. It has no generator (``rng`` is None): a game that stops at hand end never
        draws from one, and any attempt would fail loudly. Search agents replace the hidden parts (other
        hands, the boneyard) of a fork with a sample."""
        other = self._copy_position()
        other.rng = None
        other.deal_seed = None  # it would tell the deals of later hands, which a fork never plays
        other.events = []
        other.hand_records = []
        other._scripted = []
        other.stop_after_hand = True
        return other

    def replace_hidden(self, seat: int, other_hands: Mapping[int, int], boneyard: Sequence[int]) -> None:
        """Replace what ``seat`` cannot see: every other seat's hand by ``other_hands[s]`` (a bit mask of
        the same size) and the boneyard by ``boneyard`` (index 0 drawn next). For search copies (a
        :meth:`fork`) that stand on a guess of the hidden tiles."""
        for s in range(self.num_players):
            if s != seat:
                self.hands[s] = other_hands[s]
        self._stock = list(reversed(boneyard))

    def _copy_position(self) -> "Game":
        """A copy whose mutable position (scores, hands, board, boneyard, voids, ...) is its own; the
        callers decide about the generator and the logs."""
        other = Game.__new__(Game)
        other.__dict__.update(self.__dict__)
        other.scores = self.scores[:]
        other.is_in = self.is_in[:]
        other.board = self.board.copy()
        other.hands = self.hands[:]
        other._stock = self._stock[:]
        other.voids = self.voids[:]
        other.played = self.played[:]
        if self._start is not None:
            other._start = self._start.copy()
        return other

    # ================================================================== stepping
    def step(self, action: int) -> None:
        """Apply the current seat's action; run forced draws, passes and hand ends that follow.

        Raises :class:`IllegalActionError` for an action that is not legal now (the message lists the
        legal ones) and :class:`GameOverError` once the game is over.
        """
        # an int, or numpy's default integer (what sampling from the mask gives) converted here without
        # the general check of _as_action_id
        action_id = action if type(action) is int else int(action) if type(action) is _INT64 else _as_action_id(action)
        if action_id in self.legal:
            if action_id != self.draw_action:
                self._play(action_id)
            elif self.explicit_chance:
                self._await(ChanceNode("draw", self.current, False))
            else:
                self._drew(self.current, False, self._stock[-1])
            return
        if self.over:
            raise GameOverError(f"the game is over (winner: {self.winner}, scores {self.scores}); start a new game")
        if self.chance_node is not None:
            raise IllegalActionError(f"action {short_repr(action)}: no seat acts at a chance node "
                                     f"({self.chance_node.kind}); decide it with apply_chance(outcome)")
        raise IllegalActionError(self.illegal_message(action))

    def illegal_message(self, action: Any) -> str:
        """Why ``action`` is not a legal move now, with the legal ones by name and id (for error messages)."""
        names = ", ".join(self.action_names(sorted(self.legal)))
        limit = self.tiles.size * 4 + (1 if self.draw_action >= 0 else 0)
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
            what = f"action {short_repr(action)} is not an integer action id"
        elif not 0 <= action < limit:
            what = f"action {short_repr(action)} is out of range 0..{limit - 1}"
        else:
            what = f"action {action} ({action_name(int(action), self.tiles)}) is not legal for seat {self.current}"
        return f"{what}; legal actions: {names} (ids {sorted(self.legal)})"

    def _play(self, action: int) -> None:
        tile = action >> 2
        slot = action & 3
        seat = self.current
        board = self.board
        is_lead = board.size == 0
        board.place(tile, slot)
        hands = self.hands
        hands[seat] ^= 1 << tile
        self.played.append((tile, seat))
        self._passes = 0
        if self._pending_void is not None:
            pseat, pmask = self._pending_void
            if pseat == seat:
                self.voids[seat] |= pmask
            self._pending_void = None
        count = board.total  # board.count(), kept by place()
        points = 0
        if count % 5 == 0 and count:
            points = self.points_for_count(seat, count, is_lead)
            if points:
                side = self.side_of[seat]
                self.scores[side] += points
                self.is_in[side] = True
        self.events.append(_new_event(Play, (seat, tile, slot, count, points)))
        if points and self._immediate_win and self._top_side(require_target=True) is not None:
            self._settle("target", -1)
            return
        if not hands[seat]:
            self._settle("domino", seat)
            return
        self._draws_this_turn = 0
        seat += 1
        if seat == self.num_players:
            seat = 0
        acts = board.placements(hands[seat])
        if acts and self.draw_action < 0:  # the common case: the next seat can play, drawing is no choice
            self.current = seat
            self.legal = tuple(acts)
            return
        self._offer(seat, acts)

    def points_for_count(self, seat: int, count: int, is_lead: bool = False) -> int:
        """The points ``seat``'s side would be credited for a play that makes ``count`` now."""
        if count % 5 or not count:
            return 0
        return count if self._plain_scoring else self._gated_points(seat, count, is_lead)

    def _gated_points(self, seat: int, count: int, is_lead: bool) -> int:
        """Points of a scoring count under ``lead_scores``, ``score_unit``, ``min_first_score`` and
        ``exact_target`` (the plain rules skip this call)."""
        r = self.rules
        if is_lead and not r.lead_scores:
            return 0
        side = self.side_of[seat]
        if not self.is_in[side] and count < r.min_first_score:
            return 0
        points = count // r.score_unit
        if r.exact_target and self.scores[side] + points > r.target:
            return 0
        return points

    def _offer(self, seat: int, acts: Optional[list[int]] = None) -> None:
        """Find the next seat with a choice, from ``seat`` on; forced draws and passes happen here.
        ``acts`` are ``seat``'s placements when the caller has already computed them."""
        n = self.num_players
        board = self.board
        reserve = self.rules.boneyard_reserve
        while True:
            if acts is None:
                acts = board.placements(self.hands[seat])
            if acts:
                self._ask(seat, acts)
                return
            # no placement: draw until a playable tile comes up, or pass
            while self._can_draw():
                if self.explicit_chance:
                    self._await(ChanceNode("draw", seat, True))
                    return
                tile = self._stock[-1]
                self._draw(seat, True, tile)
                acts = board.placements(1 << tile)
                if acts:
                    self._ask(seat, acts)
                    return
            self.voids[seat] |= board.open_values_mask()
            self.events.append(_new_event(Pass, (seat,)))
            self._passes += 1
            if self._passes >= n and len(self._stock) <= reserve:
                self._settle("blocked", -1)
                return
            seat = (seat + 1) % n
            self._draws_this_turn = 0
            acts = None

    def _can_draw(self) -> bool:
        """Whether the seat to act may draw now: tiles above the reserve, and under the per-turn cap."""
        cap = self.rules.max_draws_per_turn
        return len(self._stock) > self.rules.boneyard_reserve and (cap is None or self._draws_this_turn < cap)

    def _ask(self, seat: int, acts: list[int]) -> None:
        """Make ``seat`` the one to act with placements ``acts`` (plus "draw" when drawing is a choice)."""
        if self.draw_action >= 0 and self._can_draw():
            acts.append(self.draw_action)
        self.current = seat
        self.legal = tuple(acts)

    def _drew(self, seat: int, forced: bool, tile: int) -> None:
        """``seat`` draws ``tile`` and play goes on: a forced draw's tile is played if it can be (else the
        seat draws again or passes); after a chosen draw the seat chooses again."""
        self._draw(seat, forced, tile)
        self._offer(seat, self.board.placements(1 << tile) if forced else None)

    def _draw(self, seat: int, forced: bool, tile: int) -> None:
        """``seat`` draws ``tile`` from the boneyard (a seeded game its last item, chance any of them)."""
        if self.explicit_chance:
            self._stock.remove(tile)
            if self.hand_records:  # (a fork has none)
                # the hand's record keeps the drawing order, then the rest in no order: it replays the hand
                record = self.hand_records[-1]
                drawn = len(record.boneyard) - len(self._stock) - 1
                order = record.boneyard[:drawn] + (tile,) + tuple(sorted(self._stock))
                self.hand_records[-1] = record._replace(boneyard=order)
        else:
            self._stock.pop()
        self.hands[seat] |= 1 << tile
        self._draws_this_turn += 1
        self.events.append(_new_event(Draw, (seat, tile, forced)))
        if forced:
            open_mask = self.board.open_values_mask()
            tile_bits = self.tiles.pip_bits[tile]
            if open_mask & tile_bits:
                # it will be played at once; until then the seat holds those values
                self.voids[seat] = open_mask & ~tile_bits
                self._pending_void = (seat, open_mask)
            else:
                self.voids[seat] = open_mask
        else:
            self.voids[seat] = 0  # a chosen draw reveals nothing, and the new tile could show any value
            self._pending_void = None

    # ================================================================== hand end and win
    def _top_side(self, require_target: bool) -> Optional[int]:
        """The side with the unique highest score (at or above the target if ``require_target``)."""
        scores = self.scores
        top = max(scores)
        if require_target and top < self.rules.target:
            return None
        if scores.count(top) != 1:
            return None
        return scores.index(top)

    def _settle(self, result: str, dominoer: int) -> None:
        r = self.rules
        pips = [self.tiles.pips_of(h) for h in self.hands]
        deltas = [0] * self.num_sides
        if result != "target":
            if r.hand_end == "deduct_own":
                for seat in range(self.num_players):
                    deltas[self.side_of[seat]] -= r.pips_to_points(pips[seat])
            else:
                self._winner_takes(result, dominoer, pips, deltas)
            for side, delta in enumerate(deltas):
                new = self.scores[side] + delta
                if delta > 0 and r.exact_target and new > r.target:
                    deltas[side] = 0
                    continue
                if not r.allow_negative and new < 0:
                    deltas[side] = -self.scores[side] if self.scores[side] > 0 else 0
                    new = self.scores[side] + deltas[side]
                self.scores[side] = new
        self.events.append(_new_event(Settlement, (self.hand_number, result, tuple(pips), tuple(deltas), tuple(self.scores))))
        self._last_result = (result, dominoer, pips)
        self.hands_completed += 1
        winner = self._top_side(require_target=True)
        if winner is not None:
            self._finish(winner, truncated=False)
        elif self.stop_after_hand:
            self._finish(None, truncated=False)
        elif r.max_hands is not None and self.hands_completed >= r.max_hands:
            self._finish(self._top_side(require_target=False), truncated=True)
        else:
            self._new_hand()

    def _winner_takes(self, result: str, dominoer: int, pips: list[int], deltas: list[int]) -> None:
        """docs/rules.md §6.3: the winner gains the opponents' pips (never a partner's)."""
        r = self.rules
        side_of = self.side_of
        side_pips = [0] * self.num_sides
        for seat, p in enumerate(pips):
            side_pips[side_of[seat]] += p

        def award(winner_side: int, parts: list[int]) -> int:
            if r.bonus_round == "sum_then_round":
                return r.pips_to_points(sum(parts))
            return sum(r.pips_to_points(p) for p in parts)

        if result == "domino":
            w = side_of[dominoer]
            deltas[w] += award(w, [p for seat, p in enumerate(pips) if side_of[seat] != w])
            return
        low = min(side_pips)
        tied = [s for s, p in enumerate(side_pips) if p == low]
        if len(tied) == 1:
            w = tied[0]
            if r.blocked_award == "opponents_total":
                parts = [p for seat, p in enumerate(pips) if side_of[seat] != w]
            else:
                parts = [p - low for s, p in enumerate(side_pips) if s != w]
            deltas[w] += award(w, parts)
        elif len(tied) == 2 and self.num_players == 3:
            third = next(s for s in range(3) if s not in tied)
            total = side_pips[third] - (low if r.blocked_award == "difference" else 0)
            half = 5 * ((r.round_pips(total) // 2) // 5)
            for s in tied:
                deltas[s] += half // r.score_unit
        # any other tie: nobody scores

    def _finish(self, winner: Optional[int], truncated: bool) -> None:
        self.over = True
        self.winner = winner
        self.truncated = truncated
        self.current = -1
        self.legal = ()
        self.events.append(GameOver(winner, tuple(self.scores), truncated))

    # ================================================================== dealing
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
            self._start.dealt = []  # type: ignore[union-attr]
            return _DEAL_NODE
        tiles = self.tiles
        n = self.num_players
        dealer = self._dealer if self._dealer is not None else self.rng
        perm = dealer.permutation(tiles.size).tolist()  # type: ignore[union-attr]
        h = self.rules.hand_size
        # Deal(hands, boneyard) with its defaults, built like the events (no Python-level __new__)
        return self._begin(_new_event(Deal, (tuple([tuple(perm[i * h:(i + 1) * h]) for i in range(n)]),
                                             tuple(perm[n * h:]), None, None, False)))

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
                node = self._picked(int(self.rng.integers(node.choices)))  # type: ignore[union-attr]
            elif node.kind == "opening_draw":
                node = self._opening_drew(self._start.stock[-1])  # type: ignore[union-attr]
            else:
                node = self._deal()

    def _begin(self, deal: Deal) -> Optional[ChanceNode]:
        """A dealt hand: find its leader (the next chance node, if that needs one)."""
        start = self._start
        assert start is not None
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
        start = self._start
        assert start is not None
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
        result, dominoer, pips = self._last_result  # type: ignore[misc]
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
        start = self._start
        assert start is not None
        start.seats, start.role = seats, role
        return ChanceNode("pick", -1, False, len(seats))

    def _picked(self, i: int) -> Optional[ChanceNode]:
        """The pick's outcome ``i``: the ``i``-th of its seats leads, or draws first."""
        start = self._start
        assert start is not None
        seat = start.seats[i]
        if start.role == "drawer":
            return self._opening_from(seat)
        return self._open(seat)

    def _opening_from(self, drawer: int) -> Optional[ChanceNode]:
        start = self._start
        assert start is not None
        start.drawer = start.seat = drawer
        return self._opening_next()

    def _opening_next(self) -> Optional[ChanceNode]:
        """The next opening draw, or the end of the boneyard: a redeal (or the fixed deal's leader)."""
        start = self._start
        assert start is not None
        if len(start.stock) > self.rules.boneyard_reserve:
            return ChanceNode("opening_draw", start.seat, False)
        return self._open(None) if start.deal.leader is not None else self._redeal()

    def _opening_drew(self, tile: int) -> Optional[ChanceNode]:
        """``tile`` drawn by the opening drawer in turn: a double leads, anything else passes the draw on."""
        start = self._start
        assert start is not None
        _take(start.stock, tile)
        seat = start.seat
        start.hands[seat] |= 1 << tile
        start.opening.append(Draw(seat, tile, False))
        if self.tiles.is_double[tile]:
            return self._open(seat, tile if self.rules.must_lead_it else -1)
        start.seat = (seat + 1) % self.num_players
        return self._opening_next()

    def _redeal(self) -> Optional[ChanceNode]:
        start = self._start
        assert start is not None
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
        start = self._start
        assert start is not None
        self._start = None
        deal, hands = start.deal, start.hands
        r = self.rules
        leader = deal.leader if deal.leader is not None else expected
        overridden = deal.leader is not None and expected is not None and deal.leader != expected
        if overridden and self.check_leaders and not deal.leader_fixed:
            raise DealError(f"hand {self.hand_number}: leader {deal.leader} does not follow from the rules, which give seat {expected}")
        if lead_tile >= 0 and not (hands[leader] >> lead_tile) & 1:
            lead_tile = -1  # a user-chosen leader does not hold the designated tile: free lead
        self.leader = leader  # type: ignore[assignment]
        self._install(Board(self.tiles, r.spinner_sides_first, r.spinner_count), hands, start.stock)
        boneyard = deal.boneyard
        if self.explicit_chance:  # the drawing order so far (the opening draws), then the rest in no order
            boneyard = tuple(e.tile for e in start.opening) + tuple(sorted(start.stock))
        self.hand_records.append(
            _new_event(HandRecord, (self.hand_number, deal.hands, boneyard, leader, tuple(self.scores),
                                     len(self.events), start.drawer, start.redeals, overridden))
        )
        self.events.append(_new_event(HandStart, (self.hand_number, leader, tuple(self.scores))))
        self.events.extend(start.opening)
        self.current = leader  # type: ignore[assignment]
        self.legal = (lead_tile << 2,) if lead_tile >= 0 else tuple(self.board.placements(self.hands[leader]))  # type: ignore[index]
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


_DEAL_NODE = ChanceNode("deal")


class _HandStart:
    """A hand between its deal and its lead: what the leader's choice works on (the deal, the hands and
    the boneyard with the opening draws so far), kept on the game between chance nodes."""

    def __init__(self, scripted: Optional[Deal]) -> None:
        self.scripted = scripted is not None
        self.dealt: list[int] = []  # an explicit deal's tiles so far, in deal order
        self.deal: Deal = scripted  # type: ignore[assignment]
        self.hands: list[int] = []
        self.stock: list[int] = []
        self.opening: list[Event] = []
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


def _take(stock: list[int], tile: int) -> None:
    """Remove the drawn ``tile`` from ``stock``: a seeded game draws its last item, chance any of them."""
    if stock[-1] == tile:
        stock.pop()
    else:
        stock.remove(tile)


def _check_chance(chance: Any, seed: SeedLike, deal_seed: Optional[int], deals: Sequence[Deal]) -> bool:
    """Whether ``chance`` asks for explicit chance; refuses an unknown mode, and with explicit chance the
    arguments that would decide what chance decides."""
    if chance == "seeded":
        return False
    if chance != "explicit":
        raise RulesError(f"chance={short_repr(chance)} is not allowed: give 'seeded' (the default: a generator "
                         "decides every random event) or 'explicit' (the caller does, through apply_chance)")
    if seed is not None or deal_seed is not None:
        raise SeedError("chance='explicit' leaves every random event to apply_chance: give no seed or deal_seed")
    if deals:
        raise DealError("chance='explicit' deals every hand through apply_chance: give no fixed deals")
    return True
