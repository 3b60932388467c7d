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

from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from .actions import action_name
from .board import Board
from .chance import ChanceNode, ExplicitChance, check_chance
from .deal import Deal, Dealing, HandRecord, starting_scores, take_tile
from .errors import DealError, GameOverError, IllegalActionError, RulesError, short_repr
from .events import Draw, Event, GameOver, Pass, Play, Settlement
from .rules import Rules
from .seeds import check_seed
from .tiles import TileSet, tile_set

SeedLike = Union[None, int, np.random.Generator]
#: builds an event (or another NamedTuple record) from a tuple of all its fields, without the NamedTuple's
#: Python-level __new__: the same value, one Python call less (the engine writes several a turn)
_new_event = tuple.__new__
_INT64 = np.int64


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


class Game(Dealing, ExplicitChance):
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
        self.explicit_chance = check_chance(chance, seed, deal_seed, deals)
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
        self._start = None  # a hand being dealt and opened (between its chance nodes): see Dealing
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
        take_tile(self._stock, tile)
        if self.explicit_chance:
            if self.hand_records:  # (a fork has none)
                # the hand's record keeps the drawing order, then the rest in no order: it replays the hand
                record = self.hand_records[-1]
                drawn = len(record.boneyard) - len(self._stock) - 1
                order = record.boneyard[:drawn] + (tile,) + tuple(sorted(self._stock))
                self.hand_records[-1] = record._replace(boneyard=order)
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
