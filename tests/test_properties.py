"""Property tests over random games (docs/rules.md §2-§8, DESIGN.md "Testing layers" 1).

Hypothesis draws a rules object (every player count, partnership on and off, and most options of
docs/rules.md §8) and a seed; a seeded ``numpy`` generator then plays random legal actions on the core
:class:`Game` (or the PettingZoo ``raw_env``), and after every step we check the invariants:

* tiles are conserved: hands, board and boneyard partition the whole set, and the boneyard never
  goes below the reserve;
* every ``Play`` scores ``count`` (or ``count / 5``) when the count is a positive multiple of 5, else 0,
  at most 35 (7 under ``score_unit=5``), and the count itself is bounded (36 for double-six);
* the count and the legal placements agree with an independent reading of the layout's arms;
* scores change only by play points and settlement deltas (reconstructed from the event log);
* the seat to act has a non-empty legal list; in the env its mask equals the legal list and every
  other agent's mask is all zeros; hand sizes in observations are the real ones;
* known voids are true (a seat marked void in ``v`` holds no tile showing ``v``);
* every game ends, within ``max_hands`` hands.
"""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allfives_env import allfives_v0
from allfives_env.core import Rules
from allfives_env.core.board import E, N, S, W
from allfives_env.core.events import Draw, GameOver, HandStart, Pass, Play, Settlement
from allfives_env.core.game import Game
from allfives_env.core.rules import HAND_SIZE_PRESETS
from allfives_env.core.tiles import tile_set

PROPS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)
STEP_CAP = 20_000  # far above any real game; only guards the test against an endless loop


# ====================================================================== strategies
@st.composite
def rules_options(draw, num_players: Optional[int] = None, partnership: Optional[bool] = None) -> dict:
    """A valid mapping of rules options, drawn over the whole option space."""
    n = draw(st.sampled_from([2, 3, 4])) if num_players is None else num_players
    opts: dict = {"num_players": n}
    if n == 4:
        opts["partnership"] = draw(st.booleans()) if partnership is None else partnership
    max_pip = draw(st.sampled_from([6, 6, 6, 9, 12]))
    opts["max_pip"] = max_pip
    size = tile_set(max_pip).size
    if max_pip == 6:
        hand_size = draw(st.one_of(st.sampled_from([None, "default", "five_always", "seven_five"]),
                                   st.integers(1, size // n)))
    else:
        hand_size = draw(st.one_of(st.none(), st.integers(1, min(12, size // n))))
    opts["hand_size"] = hand_size
    if hand_size is None or hand_size == "default":
        hs = HAND_SIZE_PRESETS["default"][n] if max_pip == 6 else {9: 7, 12: 9}[max_pip]
    elif isinstance(hand_size, str):
        hs = HAND_SIZE_PRESETS[hand_size][n]
    else:
        hs = hand_size
    undealt = size - n * hs
    opts["boneyard_reserve"] = draw(st.integers(0, min(undealt, 3)))
    opts["first_leader"] = draw(st.sampled_from(["random", "highest_double"]))
    opts["no_double_fallback"] = draw(st.sampled_from(["heaviest_tile", "redeal", "draw_until_double"]))
    opts["must_lead_it"] = draw(st.booleans())
    opts["after_block"] = draw(st.sampled_from(["random", "lowest_pips", "rotate"]))
    opts["may_draw_when_able"] = draw(st.booleans())
    opts["max_draws_per_turn"] = draw(st.sampled_from([None, None, 1, 2, 3]))
    opts["spinner_sides_first"] = draw(st.booleans())
    opts["spinner_count"] = draw(st.sampled_from(["allfives", "sniff"]))
    opts["lead_scores"] = draw(st.sampled_from([True, True, False]))
    score_unit = draw(st.sampled_from([1, 5]))
    opts["score_unit"] = score_unit
    opts["rounding"] = draw(st.sampled_from(["nearest", "down"] + (["none"] if score_unit == 1 else [])))
    opts["min_first_score"] = draw(st.sampled_from([0, 0, 10, 15]))
    opts["hand_end"] = draw(st.sampled_from(["deduct_own", "winner_takes"]))
    opts["bonus_round"] = draw(st.sampled_from(["sum_then_round", "round_each"]))
    opts["blocked_award"] = draw(st.sampled_from(["opponents_total", "difference"]))
    opts["allow_negative"] = draw(st.booleans())
    opts["win_check"] = draw(st.sampled_from(["immediate", "end_of_hand"]))
    opts["exact_target"] = draw(st.booleans())
    if score_unit == 5:
        opts["target"] = draw(st.sampled_from([None, 20, 40, 61]))
    else:
        opts["target"] = draw(st.sampled_from([None, 60, 100, 150, 250]))
    opts["max_hands"] = draw(st.integers(1, 5))
    return opts


# ====================================================================== independent readings of the board
def arm_chain_ok(board) -> None:
    """The arm lists are chains: each tile's inner pip is the previous tile's outer pip."""
    tiles = board.tiles
    if board.spinner < 0:
        if board.lead is None:
            assert board.size == 0
            return
        t, wpip, epip = board.lead
        assert {wpip, epip} == {tiles.low[t], tiles.high[t]} and wpip >= epip
        starts = {W: wpip, E: epip}
        assert not board.arms[N] and not board.arms[S]
    else:
        v = board.spinner
        assert board.spinner_tile == tiles.double_id[v]
        starts = {W: v, E: v, N: v, S: v}
    for slot, start in starts.items():
        prev = start
        for t, inner, outer in board.arms[slot]:
            assert {inner, outer} == {tiles.low[t], tiles.high[t]}
            assert inner == prev, f"arm {slot} breaks at tile {tiles.name(t)}"
            if board.spinner < 0:
                assert inner != outer, "a double in the line before a spinner exists"
            prev = outer


def open_values(board) -> dict[int, int]:
    """Open slot -> open value, from the arm lists (not from ``board.ends``)."""
    if board.size == 0:
        return {}
    if board.spinner < 0:
        _, wpip, epip = board.lead
        w = board.arms[W][-1][2] if board.arms[W] else wpip
        e = board.arms[E][-1][2] if board.arms[E] else epip
        return {W: w, E: e}
    v = board.spinner
    out = {slot: (board.arms[slot][-1][2] if board.arms[slot] else v) for slot in (W, E)}
    if not board.sides_first or (board.arms[W] and board.arms[E]):
        for slot in (N, S):
            out[slot] = board.arms[slot][-1][2] if board.arms[slot] else v
    return out


def independent_count(board) -> int:
    """docs/rules.md §5.1 (and §5.3 for sniff), computed from the arm lists."""
    if board.size == 0:
        return 0
    tiles = board.tiles
    if board.spinner < 0:
        ov = open_values(board)
        return ov[W] + ov[E]
    total = 0
    for slot in (W, E, N, S):
        arm = board.arms[slot]
        if arm:
            t, _, outer = arm[-1]
            total += 2 * outer if tiles.is_double[t] else outer
    v = board.spinner
    if not (board.arms[W] and board.arms[E]):
        total += 2 * v
    elif board.sniff:
        total += v * ((not board.arms[N]) + (not board.arms[S]))
    return total


def independent_placements(board, hand: list[int]) -> set[int]:
    tiles = board.tiles
    if board.size == 0:
        return {t * 4 for t in hand}
    out = set()
    for slot, value in open_values(board).items():
        for t in hand:
            if tiles.low[t] == value or tiles.high[t] == value:
                out.add(t * 4 + slot)
    return out


# ====================================================================== the invariant checker
class Checker:
    """Follows one game event by event and checks every invariant after each step."""

    def __init__(self, game: Game) -> None:
        self.game = game
        r = game.rules
        self.rules = r
        self.tiles = tile_set(r.max_pip)
        self.scores = list(game.scores)
        self.seen = 0
        self.hands_started = 0
        self.plays_in_hand = 0
        self.max_count = 36 if r.max_pip == 6 else 8 * r.max_pip
        self.prev_boneyard: list[int] = []
        self.last_play_seat = -1
        self.check()

    def check(self) -> None:
        game, r, tiles = self.game, self.rules, self.tiles
        new = game.events[self.seen:]
        self.seen = len(game.events)
        last_play_index = None
        for i, ev in enumerate(new):
            if type(ev) is HandStart:
                self.hands_started += 1
                assert ev.hand == self.hands_started
                assert list(ev.scores) == self.scores, "hand starts with scores that differ from the log"
                self.plays_in_hand = 0
                last_play_index = None
            elif type(ev) is Play:
                self._check_play(ev)
                last_play_index = i
            elif type(ev) is Settlement:
                assert ev.result in ("domino", "blocked", "target")
                assert len(ev.deltas) == r.num_sides and len(ev.pips) == r.num_players
                if ev.result == "target":
                    assert not any(ev.deltas)
                if ev.result == "domino":
                    assert 0 in ev.pips
                if ev.result == "blocked":
                    assert game.over or game.hand_number == ev.hand + 1
                if r.hand_end == "deduct_own" and ev.result != "target":
                    assert all(d <= 0 for d in ev.deltas), "deduct_own never gains at hand end"
                if r.hand_end == "winner_takes":
                    assert all(d >= 0 for d in ev.deltas), "winner_takes never deducts"
                assert list(ev.deltas) == self._expected_deltas(ev), "settlement differs from docs/rules.md §6.2/§6.3"
                for side, d in enumerate(ev.deltas):
                    self.scores[side] += d
                assert list(ev.scores) == self.scores
                if not r.allow_negative:
                    assert all(s >= 0 or d == 0 for s, d in zip(ev.scores, ev.deltas))
                last_play_index = None
            elif type(ev) is GameOver:
                assert game.over
                assert list(ev.scores) == self.scores
                assert ev.winner == game.winner and ev.truncated == game.truncated
            elif type(ev) is Draw:
                assert 0 <= ev.tile < tiles.size
            else:
                assert type(ev) is Pass
        assert list(game.scores) == self.scores, "scores moved by something other than plays and settlements"

        # the count of the last play, read independently, if that play's layout is still on the table
        if last_play_index is not None:
            assert new[last_play_index].count == independent_count(game.board)

        if game.over:
            assert game.current_player == -1 and game.legal_actions() == []
            assert game.hands_completed <= (r.max_hands or 10**9)
            if game.winner is not None:
                assert 0 <= game.winner < r.num_sides
                if not game.truncated:
                    assert game.scores[game.winner] >= r.target or game.stop_after_hand
                    assert game.scores.count(max(game.scores)) == 1
            return

        self._check_tiles()
        self._check_board()
        self._check_voids()
        self._check_draws_and_passes(new)
        seat = game.current_player
        legal = game.legal_actions()
        assert 0 <= seat < r.num_players
        assert legal, "the seat to act has no legal action"
        assert legal == sorted(set(legal)) or (game.draw_action >= 0 and legal[-1] == game.draw_action)
        placements = {a for a in legal if a != game.draw_action}
        expected = independent_placements(game.board, game.hand(seat))
        if game.board.size == 0 and len(placements) == 1 and r.first_leader == "highest_double":
            # a designated opening tile (the highest double, or the heaviest tile)
            assert placements <= expected
        else:
            assert placements == expected, "legal placements differ from an independent reading of the board"
        if game.draw_action in legal:
            assert r.may_draw_when_able and game.boneyard_size > r.boneyard_reserve

    def _expected_deltas(self, ev: Settlement) -> list[int]:
        """The settlement of docs/rules.md §6.2 / §6.3, worked out independently of the engine."""
        r = self.rules
        k = r.num_sides
        if ev.result == "target":
            return [0] * k

        def points(pips: int) -> int:
            if r.rounding == "nearest":
                pips = 5 * ((pips + 2) // 5)
            elif r.rounding == "down":
                pips = 5 * (pips // 5)
            return pips // r.score_unit

        raw = [0] * k
        if r.hand_end == "deduct_own":
            for seat, p in enumerate(ev.pips):
                raw[r.side_of(seat)] -= points(p)
        else:
            def award(parts: list[int]) -> int:
                if r.bonus_round == "sum_then_round":
                    return points(sum(parts))
                return sum(points(x) for x in parts)

            if ev.result == "domino":
                w = r.side_of(self.last_play_seat)
                assert ev.pips[self.last_play_seat] == 0, "the seat that dominoed holds tiles"
                raw[w] = award([p for seat, p in enumerate(ev.pips) if r.side_of(seat) != w])
            else:
                side_pips = [0] * k
                for seat, p in enumerate(ev.pips):
                    side_pips[r.side_of(seat)] += p
                low = min(side_pips)
                tied = [x for x in range(k) if side_pips[x] == low]
                if len(tied) == 1:
                    w = tied[0]
                    if r.blocked_award == "opponents_total":
                        raw[w] = award([p for seat, p in enumerate(ev.pips) if r.side_of(seat) != w])
                    else:
                        raw[w] = award([side_pips[x] - low for x in range(k) if x != w])
                elif len(tied) == 2 and r.num_players == 3:
                    third = next(x for x in range(3) if x not in tied)
                    total = side_pips[third] - (low if r.blocked_award == "difference" else 0)
                    rounded = points(total) * r.score_unit  # in pips, rounded
                    half = 5 * ((rounded // 2) // 5)
                    for x in tied:
                        raw[x] = half // r.score_unit
        out = []
        for side, delta in enumerate(raw):
            before = self.scores[side]
            if delta > 0 and r.exact_target and before + delta > r.target:
                delta = 0
            if not r.allow_negative and before + delta < 0:
                delta = -before if before > 0 else 0
            out.append(delta)
        return out

    def _check_play(self, ev: Play) -> None:
        r = self.rules
        assert 0 <= ev.count <= self.max_count
        if ev.points:
            assert ev.count % 5 == 0 and ev.count > 0
            assert ev.points == ev.count // r.score_unit
            if r.score_unit == 1:
                assert ev.points % 5 == 0
            # docs/rules.md §5.2: the largest score of one play is 35 with double-six (7 units of 5)
            if r.max_pip == 6:
                assert ev.points <= 35 // r.score_unit
        elif ev.count and ev.count % 5 == 0:
            # a scoring count goes uncredited only for a lead under lead_scores=False, before a side is
            # "in" under min_first_score, or past the target under exact_target
            lead = self.plays_in_hand == 0
            assert (lead and not r.lead_scores) or r.min_first_score > 0 or r.exact_target
        self.plays_in_hand += 1
        self.last_play_seat = ev.seat
        self.scores[self.rules.side_of(ev.seat)] += ev.points

    def _check_tiles(self) -> None:
        game, tiles = self.game, self.tiles
        held = [t for seat in range(self.rules.num_players) for t in game.hand(seat)]
        board = game.board.tiles_on_board()
        bone = game.boneyard()
        everything = held + board + bone
        assert len(everything) == len(set(everything)), "a tile is in two places"
        assert sorted(everything) == list(range(tiles.size)), "tiles are missing"
        assert len(board) == game.board.size
        assert game.hand_sizes() == [len(game.hand(s)) for s in range(self.rules.num_players)]
        assert len(bone) >= self.rules.boneyard_reserve

    def _check_board(self) -> None:
        board = self.game.board
        arm_chain_ok(board)
        ov = open_values(board)
        assert set(ov) == set(board.open_slots) or board.size == 0
        for slot, value in ov.items():
            assert board.ends[slot] == value
        assert self.game.count() == independent_count(board)

    def _check_draws_and_passes(self, new: list) -> None:
        """docs/rules.md §3 step 3: a seat draws only when it cannot play, draws from the top of the boneyard,
        stops at the first playable tile, and passes only when it may not draw any more."""
        game, r = self.game, self.rules
        board = game.board
        # draws come off the top of the boneyard, in order (within one hand)
        if not any(type(e) is HandStart for e in new):
            drawn = [e.tile for e in new if type(e) is Draw]
            assert drawn == self.prev_boneyard[:len(drawn)], "tiles were not drawn from the top of the boneyard"
        self.prev_boneyard = game.boneyard()
        # the events since the board last changed (the last play, or the start of this hand)
        events = game.events
        start = len(events)
        while start > 0 and type(events[start - 1]) not in (Play, HandStart):
            start -= 1
        tail = events[start:]
        def held_at(seat: int, index: int) -> list[int]:
            """The seat's hand just before ``tail[index]``: its hand now, less what it drew since."""
            later = {f.tile for f in tail[index:] if type(f) is Draw and f.seat == seat}
            return [t for t in game.hand(seat) if t not in later]

        for i, e in enumerate(tail):
            if type(e) is Pass:
                assert not independent_placements(board, held_at(e.seat, i)), f"seat {e.seat} passed but could play"
                if r.max_draws_per_turn is None:
                    assert game.boneyard_size <= r.boneyard_reserve, f"seat {e.seat} passed but could draw"
            elif type(e) is Draw and e.forced:
                assert not independent_placements(board, held_at(e.seat, i)), f"seat {e.seat} drew although it could play"
                following = next((f for f in tail[i + 1:] if type(f) in (Draw, Pass) and f.seat == e.seat), None)
                if following is not None and (type(following) is Pass or following.forced):
                    assert not independent_placements(board, [e.tile]), (
                        f"seat {e.seat} drew on after a playable tile {self.tiles.name(e.tile)}"
                    )

    def _check_voids(self) -> None:
        game, tiles = self.game, self.tiles
        for seat in range(self.rules.num_players):
            voids = game.voids[seat]
            hand = game.hand(seat)
            for v in range(tiles.num_values):
                if voids >> v & 1:
                    holding = [tiles.name(t) for t in hand if tiles.low[t] == v or tiles.high[t] == v]
                    assert not holding, f"seat {seat} is marked void in {v} but holds {holding}"


def play_random_game(rules: Rules, seed: int, check_every_step: bool = True) -> Game:
    rng = np.random.default_rng(seed)  # one seeded generator for the deals and the random actions
    game = Game(rules, rng)
    checker = Checker(game)
    steps = 0
    while not game.over:
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
        steps += 1
        assert steps < STEP_CAP, "the game does not end"
        if check_every_step:
            checker.check()
    checker.check()
    assert game.hands_completed >= 1
    if rules.max_hands is not None:
        assert game.hands_completed <= rules.max_hands
    return game


# ====================================================================== core property tests
@settings(PROPS, max_examples=400)
@given(opts=rules_options(), seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(opts, seed):
    play_random_game(Rules.from_options(opts), seed)


@pytest.mark.parametrize(
    "num_players, partnership", [(2, False), (3, False), (4, True), (4, False)], ids=["2p", "3p", "4p-team", "4p-cut"]
)
@settings(PROPS, max_examples=100)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_every_player_count(num_players, partnership, data, seed):
    opts = data.draw(rules_options(num_players, partnership))
    play_random_game(Rules.from_options(opts), seed)


@pytest.mark.parametrize("num_players", [2, 3, 4])
@settings(PROPS, max_examples=15)
@given(seed=st.integers(0, 2**32 - 1))
def test_default_rules_play_to_the_end(num_players, seed):
    """Seed rules with no cap on hands: the game still ends, with a winner at or above the target."""
    rules = Rules(num_players=num_players, max_hands=None)
    game = play_random_game(rules, seed, check_every_step=False)
    assert not game.truncated
    assert game.winner is not None and game.scores[game.winner] >= rules.target


@settings(PROPS, max_examples=80)
@given(opts=rules_options(), seed=st.integers(0, 2**32 - 1))
def test_clone_is_independent(opts, seed):
    """A clone plays on without touching the original, and replays the same future from the same actions."""
    rules = Rules.from_options(opts)
    rng = np.random.default_rng(seed)  # picks the actions; the game has its own generator
    game = Game(rules, np.random.default_rng(seed + 1))
    for _ in range(int(rng.integers(0, 30))):
        if game.over:
            break
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    if game.over:
        return
    snapshot = (list(game.events), list(game.scores), game.legal_actions(), [game.hand(s) for s in range(rules.num_players)])
    twin = game.clone()
    actions = []
    while not twin.over and len(actions) < 200:
        legal = twin.legal_actions()
        a = legal[int(rng.integers(len(legal)))]
        actions.append(a)
        twin.step(a)
    assert snapshot == (list(game.events), list(game.scores), game.legal_actions(),
                        [game.hand(s) for s in range(rules.num_players)])
    for a in actions:
        game.step(a)
    assert game.events == twin.events and game.scores == twin.scores


@settings(PROPS, max_examples=200)
@given(opts=rules_options())
def test_rules_round_trip_through_json(opts):
    """rules.py: a Rules value is fully resolved, and ``Rules(**rules.to_dict()) == rules``."""
    rules = Rules.from_options(opts)
    assert Rules(**rules.to_dict()) == rules
    assert Rules.from_options(json.loads(json.dumps(rules.to_dict()))) == rules
    assert isinstance(rules.hand_size, int) and isinstance(rules.partnership, bool) and isinstance(rules.target, int)
    assert hash(rules) == hash(Rules(**rules.to_dict()))


# ====================================================================== env property tests
def _env_check(env, game: Game) -> None:
    enc = env.encoder
    n = env.rules.num_players
    sl = enc.slices
    T = enc.T
    acting = env.agent_selection
    for i, agent in enumerate(env.possible_agents):
        obs = env.observe(agent)
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (enc.num_actions,)
        assert env.observation_space(agent).contains(obs), f"observation of {agent} outside its space"
        o = obs["observation"]
        # hand sizes: own hand slice, and the other seats' sizes (relative seats 1..n-1)
        assert int(o[sl["hand"]].sum()) == len(game.hand(i))
        np.testing.assert_allclose(
            o[sl["hand_sizes"]] * T, [len(game.hand((i + k) % n)) for k in range(1, n)], atol=1e-4
        )
        assert np.flatnonzero(o[sl["hand"]]).tolist() == game.hand(i)
        board_rows = o[sl["board"]].reshape(T, n)
        assert int(board_rows.sum()) == len(game.board.tiles_on_board())
        for t in game.board.tiles_on_board():
            assert board_rows[t].sum() == 1
        assert o[sl["lead"]][0] == float(game.board.size == 0)
        assert o[sl["boneyard"]][0] * T == pytest.approx(game.boneyard_size)
        side = env.rules.side_of(i)
        assert o[sl["partners"]].tolist() == [float(env.rules.side_of((i + k) % n) == side) for k in range(n)]
        # voids of the others, as the engine knows them
        voids = o[sl["voids"]].reshape(n - 1, enc.V)
        for k in range(1, n):
            expected = [(game.voids[(i + k) % n] >> v) & 1 for v in range(enc.V)]
            assert voids[k - 1].tolist() == expected
        if game.over:
            assert not mask.any()
        elif agent == acting:
            assert mask.any(), "the acting agent's mask is all zeros"
            assert np.flatnonzero(mask).tolist() == sorted(game.legal_actions())
        else:
            assert not mask.any(), f"{agent} is not to act but its mask is not all zeros"


@pytest.mark.parametrize(
    "num_players, partnership", [(2, False), (3, False), (4, True), (4, False)], ids=["2p", "3p", "4p-team", "4p-cut"]
)
@settings(PROPS, max_examples=40)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), reward=st.sampled_from(["win", "points"]))
def test_env_masks_and_observations(num_players, partnership, data, seed, reward):
    opts = data.draw(rules_options(num_players, partnership))
    env = allfives_v0.raw_env(reward=reward, **opts)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game = env.game
    checker = Checker(game)
    steps = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while not (all(env.terminations.values()) or all(env.truncations.values())):
        _env_check(env, game)
        agent = env.agent_selection
        assert env.possible_agents.index(agent) == game.current_player
        mask = env.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        env.step(int(legal[rng.integers(len(legal))]))
        for a in env.possible_agents:
            totals[a] += env.rewards[a]
        checker.check()
        steps += 1
        assert steps < STEP_CAP
    _env_check(env, game)
    assert game.over
    assert any(env.truncations.values()) == game.truncated
    if env.rules.num_players == 2 or reward == "points":
        assert abs(sum(totals.values())) < 1e-6
    if env.rules.partnership:
        assert abs(totals["player_0"] - totals["player_2"]) < 1e-9
        assert abs(totals["player_1"] - totals["player_3"]) < 1e-9
