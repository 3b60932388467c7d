"""Guessing the hidden past of a hand: deals and draws that agree with everything one seat has seen.

A determinizing search (OpenSpiel's ISMCTS, through ``resample_from_infostate``) needs whole histories,
not only a guess of the current hidden tiles: the OpenSpiel state is its chance and action history. A
history agrees with what seat ``p`` saw when replaying it gives ``p`` the same observations: its own
deal and draws, every play, every draw and pass of the others. Those constrain the others' tiles:

* a seat that drew because it could not play, or passed, held no tile showing an open value then;
* a forced draw the seat then acted on (it did not draw again or pass) showed an open value;
* a tile a seat played was in its hand before: dealt, or drawn earlier.

So each tile a seat ever held has a window for when it can have come into that hand (after the last
such check it would have failed, before it was played), and the seat's deal and draws are slots in
time. A guess is a matching of tiles to slots inside their windows. :func:`sample_hand` deals the unseen
tiles to the other seats' current hands, then each seat's tiles to its deal and its draws, at random,
checking at each choice that the rest can still be matched (earliest deadline first), and so never
dead-ends on the default rules. Rules options it does not model (the leader rules' inference
when ``must_lead_it`` is off, chosen draws) are caught by the caller's replay check and retried.

No pyspiel here: the bridge and the bots both use it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core.board import Board
from ..core.events import Draw, Event, HandStart, Pass, Play, TurnEvent
from ..core.rules import Rules
from ..core.tiles import tile_set

_DEAL = -1.0  # the time of the deal in a seat's timeline (events are 0, 1, 2, ...)
_NEVER = float("inf")


@dataclass(frozen=True)
class HandTranscript:
    """What ``seat`` knows of the current hand: its deal, and the hand's events as it saw them (other
    seats' drawn tiles are -1). ``first_hand`` matters only for the highest-double leader rule."""

    rules: Rules
    seat: int
    leader: int
    own_deal: tuple[int, ...]
    events: tuple[TurnEvent, ...]
    first_hand: bool


@dataclass
class HandGuess:
    """A guessed past: each seat's dealt tiles (the observer's own included) and the tile of every draw
    event (by event index; the observer's own draws as they were)."""

    deals: list[tuple[int, ...]]
    draws: dict[int, int]


def transcript_from_events(rules: Rules, seat: int, events: Sequence[Event], hand: Sequence[int]) -> HandTranscript:
    """The transcript of the last hand in ``events`` (a public log as ``seat`` sees it) given ``seat``'s
    current ``hand``: the deal is the hand plus what it played minus what it drew since."""
    start, head = [(i, e) for i, e in enumerate(events) if type(e) is HandStart][-1]
    body = tuple(e for e in events[start + 1:] if isinstance(e, (Play, Draw, Pass)))
    played = {e.tile for e in body if type(e) is Play and e.seat == seat}
    drawn = {e.tile for e in body if type(e) is Draw and e.seat == seat}
    deal = (set(hand) | played) - drawn
    return HandTranscript(rules, seat, head.leader, tuple(sorted(deal)), body, head.hand == 1)


def _deal_forbidden(tr: HandTranscript) -> set[int]:
    """Tiles no seat can have been dealt, read off the lead under ``first_leader="highest_double"`` with
    ``must_lead_it``: no higher double, or (no double dealt at all) no heavier tile."""
    r = tr.rules
    if not (tr.first_hand and r.first_leader == "highest_double" and r.must_lead_it and tr.events):
        return set()
    lead = tr.events[0]
    if type(lead) is not Play:
        return set()
    tiles = tile_set(r.max_pip)
    t = lead.tile
    if tiles.is_double[t]:
        return {d for d in tiles.double_id if tiles.pips[d] > tiles.pips[t]}
    key = (tiles.pips[t], tiles.high[t])
    return {x for x in range(tiles.size) if tiles.is_double[x] or (tiles.pips[x], tiles.high[x]) > key}


class _SeatPlan:
    """One other seat's timeline: deal slots, draw slots (with the values a matched draw must show),
    the checks where it held no open value, and the tiles it played (and when)."""

    def __init__(self, hand_size: int) -> None:
        self.deal_slots = hand_size
        self.draws: list[tuple[float, int]] = []  # (event index, mask a matched draw must meet, or 0)
        self.checks: list[tuple[float, int]] = []  # (time, open values it held none of)
        self.played: dict[int, float] = {}  # tile -> event index
        self.size_now = hand_size

    def window(self, tile: int, pip_bits: Sequence[int], forbidden: set[int]) -> tuple[float, float]:
        """(after, before): the tile came into this hand strictly between these times."""
        release = self.played.get(tile, _NEVER)
        after = _DEAL - 1.0
        bits = pip_bits[tile]
        for time, mask in self.checks:
            if time < release and bits & mask and time > after:
                after = time
        if tile in forbidden and after < _DEAL:
            after = _DEAL
        return after, release

    def feasible(self, windows: dict[int, tuple[float, float]], pip_bits: Sequence[int]) -> bool:
        """Whether these tiles fit distinct slots inside their windows (earliest deadline first; a partial
        set may leave slots empty)."""
        order = sorted(windows.items(), key=lambda kv: kv[1][0])
        heap: list[tuple[float, int]] = []
        i = 0
        slots = [(_DEAL, 0)] * self.deal_slots + self.draws
        for time, need in slots:
            while i < len(order) and order[i][1][0] < time:
                tile, (_, release) = order[i]
                heapq.heappush(heap, (release, tile))
                i += 1
            while heap and heap[0][0] <= time:
                return False  # a tile whose window closed unplaced
            if heap:
                if need:
                    skipped = []
                    while heap and not pip_bits[heap[0][1]] & need:
                        skipped.append(heapq.heappop(heap))
                    if heap:
                        heapq.heappop(heap)
                    for item in skipped:
                        heapq.heappush(heap, item)
                else:
                    heapq.heappop(heap)
        return not heap and i == len(order)


def _plans(tr: HandTranscript) -> tuple[dict[int, _SeatPlan], list[int], set[int], dict[int, int]]:
    """Per other seat its plan; the unseen pool; the tiles on the table; the observer's own draws."""
    r = tr.rules
    tiles = tile_set(r.max_pip)
    h = r.hand_size
    n = r.num_players
    board = Board(tiles, r.spinner_sides_first, r.spinner_count)
    plans = {s: _SeatPlan(h) for s in range(n) if s != tr.seat}
    own = set(tr.own_deal)
    on_table: set[int] = set()
    own_draws: dict[int, int] = {}
    events = tr.events
    for i, e in enumerate(events):
        if type(e) is Play:
            board.place(e.tile, e.slot)
            on_table.add(e.tile)
            if e.seat == tr.seat:
                own.discard(e.tile)
            else:
                plans[e.seat].played[e.tile] = float(i)
                plans[e.seat].size_now -= 1
            continue
        if e.seat == tr.seat:
            if type(e) is Draw:
                own.add(e.tile)
                own_draws[i] = e.tile
            continue
        plan = plans[e.seat]
        opens = board.open_values_mask()
        if type(e) is Pass:
            plan.checks.append((float(i), opens))
            continue
        plan.size_now += 1
        need = 0
        if e.forced:
            plan.checks.append((i - 0.5, opens))
            nxt = events[i + 1] if i + 1 < len(events) else None
            again = nxt is not None and nxt.seat == e.seat and (type(nxt) is Pass or (type(nxt) is Draw and nxt.forced))
            if not again:
                need = opens
        plan.draws.append((float(i), need))
    pool = [t for t in range(tiles.size) if t not in own and t not in on_table]
    return plans, pool, on_table, own_draws


def sample_hand(tr: HandTranscript, rng: np.random.Generator, tries: int = 30) -> Optional[HandGuess]:
    """A random past of the hand that agrees with ``tr`` (None if none was found in ``tries``)."""
    r = tr.rules
    tiles = tile_set(r.max_pip)
    pip_bits = tiles.pip_bits
    plans, pool, _, own_draws = _plans(tr)
    forbidden = _deal_forbidden(tr)
    others = sorted(plans)
    windows = {s: {t: plans[s].window(t, pip_bits, forbidden) for t in list(pool) + list(plans[s].played)}
               for s in others}
    # a held tile must still fit the seat's hand now: its window is open to the end
    for _ in range(tries):
        order = [pool[i] for i in rng.permutation(len(pool)).tolist()]
        held: dict[int, list[int]] = {}
        ok = True
        for s in sorted(others, key=lambda s: sum(1 for t in pool if windows[s][t][0] < _DEAL) - plans[s].size_now):
            chosen = {t: windows[s][t] for t in plans[s].played}
            need = plans[s].size_now
            mine: list[int] = []
            rest: list[int] = []
            for t in order:
                if need:
                    chosen[t] = windows[s][t]
                    if plans[s].feasible(chosen, pip_bits):
                        mine.append(t)
                        need -= 1
                        continue
                    del chosen[t]
                rest.append(t)
            if need:
                ok = False
                break
            held[s] = mine
            order = rest
        if not ok:
            continue
        deals: list[tuple[int, ...]] = [()] * r.num_players
        deals[tr.seat] = tuple(sorted(tr.own_deal))
        draws: dict[int, int] = dict(own_draws)
        for s in others:
            assigned = _assign(plans[s], {t: windows[s][t] for t in held[s] + list(plans[s].played)}, pip_bits, rng)
            if assigned is None:
                ok = False
                break
            dealt, drawn = assigned
            deals[s] = tuple(sorted(dealt))
            draws.update(drawn)
        if ok:
            return HandGuess(deals, draws)
    return None


def _assign(plan: _SeatPlan, windows: dict[int, tuple[float, float]], pip_bits: Sequence[int],
            rng: np.random.Generator) -> Optional[tuple[list[int], dict[int, int]]]:
    """Which of a seat's tiles came at each draw (latest first, at random among those that leave the
    rest matchable); the remaining tiles were dealt."""
    left = dict(windows)
    drawn: dict[int, int] = {}
    saved = plan.draws
    try:
        for k in range(len(saved) - 1, -1, -1):
            time, need = saved[k]
            plan.draws = saved[:k]
            candidates = [t for t, (after, before) in left.items()
                          if after < time < before and (not need or pip_bits[t] & need)]
            for j in rng.permutation(len(candidates)).tolist():
                t = candidates[j]
                window = left.pop(t)
                if plan.feasible(left, pip_bits):
                    drawn[int(time)] = t
                    break
                left[t] = window
            else:
                return None
    finally:
        plan.draws = saved
    if len(left) != plan.deal_slots or any(after >= _DEAL for after, _ in left.values()):
        return None
    return list(left), drawn


def hand_actions(tr: HandTranscript, guess: HandGuess, picks: Sequence[int], draw_action: int) -> list[int]:
    """The OpenSpiel actions of the hand under ``guess``: the deal (each seat's tiles ascending, seat 0
    first), the leader pick(s), then the plays, chosen draws and drawn tiles in order."""
    out: list[int] = []
    for hand in guess.deals:
        out.extend(sorted(hand))
    out.extend(picks)
    for i, e in enumerate(tr.events):
        if type(e) is Play:
            out.append(e.tile * 4 + e.slot)
        elif type(e) is Draw:
            if not e.forced:
                out.append(draw_action)
            out.append(guess.draws[i])
    return out


def replay_a_guess(tr: HandTranscript, rng: np.random.Generator, tries: int, new_state: Callable[[], Any],
                   picks: Sequence[int], draw_action: int, agrees: Callable[[Any], bool]) -> Optional[Any]:
    """The first of up to ``tries`` guesses of the hand (:func:`sample_hand`) that replays from a fresh
    ``new_state()`` through :func:`hand_actions` and gives a state that ``agrees`` with what the seat saw;
    None if none did. A guess can fail to replay under rules the sampler does not model (its module doc):
    the core refuses an action with ``IllegalActionError``, a ``ValueError``, and the next guess is tried."""
    for _ in range(tries):
        guess = sample_hand(tr, rng)
        if guess is None:
            continue
        state = new_state()
        try:
            for action in hand_actions(tr, guess, picks, draw_action):
                state.apply_action(action)
        except ValueError:
            continue
        if agrees(state):
            return state
    return None
