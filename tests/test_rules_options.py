"""Targeted behaviour of the rules options (docs/rules.md §2-§8), on fixed deals.

Most scenarios use tiny hands and a ``boneyard_reserve`` equal to the whole boneyard, so that nobody
can draw and a hand is over in two or three moves; the numbers are worked out in each test.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import pytest

from allfives_env import allfives_v0
from allfives_env.core import Deal, Rules
from allfives_env.core.actions import parse_action
from allfives_env.core.events import Draw, GameOver, HandStart, Pass, Play, Settlement
from allfives_env.core.game import Game
from allfives_env.core.options import HAND_SIZE_PRESETS, OPTIONS, HandSizePreset
from allfives_env.core.rules import _option_fields
from allfives_env.core.tiles import tile_set

T6 = tile_set(6)


def tid(name: str) -> int:
    return T6.parse(name)


def make(hands: Sequence[Sequence[str]], boneyard: Optional[Sequence[str]] = None, leader: Optional[int] = 0,
         scores: Optional[Sequence[int]] = None, opening_drawer: Optional[int] = None, seed: int = 0,
         no_draws: bool = False, **options) -> Game:
    """A game whose first hand is fixed. ``no_draws`` reserves the whole boneyard (nobody may draw)."""
    n = len(hands)
    options.setdefault("num_players", n)
    options.setdefault("hand_size", len(hands[0]))
    if no_draws:
        options["boneyard_reserve"] = T6.size - n * len(hands[0])
    rules = Rules.from_options(options)
    deal = Deal.from_tiles(rules, hands, boneyard, leader, np.random.default_rng(seed), opening_drawer)
    return Game(rules, seed, deals=[deal], scores=scores)


def act(game: Game, *names: str) -> None:
    for name in names:
        game.step(parse_action(name, game.tiles))


def names(game: Game) -> list[str]:
    return game.action_names(game.legal_actions())


def events_of(game: Game, kind) -> list:
    return [e for e in game.events if type(e) is kind]


def hand_events(game: Game, hand: int = 1) -> list:
    """The events of one hand (from its HandStart up to the next)."""
    out, current = [], 0
    for e in game.events:
        if type(e) is HandStart:
            current = e.hand
        if current == hand:
            out.append(e)
    return out


def last_play(game: Game) -> Play:
    return [e for e in game.events if type(e) is Play][-1]


def settlement(game: Game, hand: int = 1) -> Settlement:
    return next(e for e in game.events if type(e) is Settlement and e.hand == hand)


# ====================================================================== first leader
class TestFirstLeader:
    HANDS = [["3-3", "6-1", "4-2", "5-0", "2-1"], ["5-5", "6-2", "4-1", "3-0", "1-0"]]

    def test_highest_double_holder_leads_and_must_lead_it(self):
        game = make(self.HANDS, leader=None, first_leader="highest_double")
        assert game.current_player == 1  # 5-5 beats 3-3; 6-6 and 4-4 are in the boneyard
        assert names(game) == ["5-5@W"]
        assert game.events[0] == HandStart(1, 1, (0, 0))

    def test_highest_double_without_must_lead_it(self):
        game = make(self.HANDS, leader=None, first_leader="highest_double", must_lead_it=False)
        assert game.current_player == 1
        assert len(names(game)) == 5 and all(n.endswith("@W") for n in names(game))
        act(game, "6-2@W")  # any tile may lead

    @pytest.mark.parametrize("num_players", [3, 4])
    def test_highest_double_more_players(self, num_players):
        hands = [["1-1", "6-1"], ["2-0", "6-2"], ["4-4", "3-0"], ["2-2", "5-1"]][:num_players]
        game = make(hands, leader=None, first_leader="highest_double")
        assert game.current_player == 2 and names(game) == ["4-4@W"]

    def test_random_first_leader_is_the_default_and_varies(self):
        leaders = {make(self.HANDS, leader=None, seed=s).current_player for s in range(30)}
        assert leaders == {0, 1}

    def test_highest_double_only_fixes_the_first_lead(self):
        game = make(DOMINO, no_draws=True, first_leader="highest_double")
        act(game, "6-4@W", "4-1@E")  # seat 0 dominoes and leads hand 2 with any tile
        assert game.hand_number == 2 and game.leader == 0
        assert len(game.legal_actions()) == 2 and all(n.endswith("@W") for n in names(game))

    def test_heaviest_tile_fallback(self):
        hands = [["6-3", "5-1", "4-0", "3-1", "2-0"], ["6-4", "5-2", "4-1", "3-2", "2-1"]]
        # no double dealt; 6-5 (11 pips) is in the boneyard, so 6-4 (10 pips) is the heaviest dealt tile
        game = make(hands, boneyard=["6-5"], leader=None, first_leader="highest_double",
                    no_double_fallback="heaviest_tile")
        assert game.current_player == 1 and names(game) == ["6-4@W"]

    def test_heaviest_tile_breaks_pip_ties_by_the_higher_pip(self):
        hands = [["5-4", "3-1", "2-0", "1-0", "3-0"], ["6-3", "4-1", "2-1", "4-0", "6-0"]]
        # 6-3 and 5-4 both hold 9 pips: 6-3 has the higher pip
        game = make(hands, boneyard=["6-5", "6-4", "5-3"], leader=None, first_leader="highest_double")
        assert game.current_player == 1 and names(game) == ["6-3@W"]

    def test_draw_until_double(self):
        hands = [["6-3", "5-1", "4-0", "3-1", "2-0"], ["6-4", "5-2", "4-1", "3-2", "2-1"]]
        game = make(hands, boneyard=["6-5", "1-0", "4-4", "5-5"], leader=None, opening_drawer=1,
                    first_leader="highest_double", no_double_fallback="draw_until_double")
        # seat 1 draws 6-5, seat 0 draws 1-0, seat 1 draws 4-4: the first double; seat 1 leads it
        assert game.events[:4] == [
            HandStart(1, 1, (0, 0)), Draw(1, tid("6-5"), False), Draw(0, tid("1-0"), False), Draw(1, tid("4-4"), False),
        ]
        assert game.current_player == 1 and names(game) == ["4-4@W"]
        assert game.hand_sizes() == [6, 7]
        assert game.boneyard()[0] == tid("5-5")

    def test_draw_until_double_through_env_reset(self):
        env = allfives_v0.raw_env(hand_size="five_always", first_leader="highest_double",
                                  no_double_fallback="draw_until_double")
        hands = [["6-3", "5-1", "4-0", "3-1", "2-0"], ["6-4", "5-2", "4-1", "3-2", "2-1"]]
        env.reset(seed=0, options={"hands": hands, "boneyard": ["0-0"], "opening_drawer": 0})
        assert env.agent_selection == "player_0"
        assert env.game.action_names(env.game.legal_actions()) == ["0-0@W"]

    def test_redeal_until_a_double_is_dealt(self):
        rules = Rules(num_players=4, hand_size=1, first_leader="highest_double", no_double_fallback="redeal")
        redealt = 0
        for seed in range(40):
            game = Game(rules, seed)
            record = game.hand_records[0]
            redealt += record.redeals > 0
            doubles = [s for s in range(4) if any(T6.is_double[t] for t in game.hand(s))]
            assert doubles and game.current_player in doubles
            held = [T6.low[t] for s in doubles for t in game.hand(s) if T6.is_double[t]]
            assert names(game) == [f"{max(held)}-{max(held)}@W"]
        assert redealt > 0  # 4 tiles hold no double about 6 times in 10


# ====================================================================== after a blocked hand
BLOCK_HANDS = [["6-5", "0-0"], ["1-1", "3-2"]]  # lead 6-5: nobody holds a 6 or a 5, nobody may draw


class TestAfterBlock:
    def _blocked(self, **options) -> Game:
        game = make(BLOCK_HANDS, no_draws=True, **options)
        act(game, "6-5@W")
        s = settlement(game)
        assert s.result == "blocked" and s.pips == (0, 7)
        return game

    def test_blocked_hand_is_settled(self):
        game = self._blocked()
        assert events_of(game, Pass) == [Pass(1), Pass(0)]
        assert settlement(game).deltas == (0, -5)  # round5(7) = 5; a blocked hand deducts too
        assert game.hand_number == 2

    def test_lowest_pips(self):
        assert self._blocked(after_block="lowest_pips").leader == 0

    def test_rotate(self):
        assert self._blocked(after_block="rotate").leader == 1
        game = make(BLOCK_HANDS, leader=1, no_draws=True, after_block="rotate")
        # seat 1 leads: 1-1 or 3-2; lead 3-2 (count 5): seat 0 holds 6-5 / 0-0: no 3, no 2
        act(game, "3-2@W")
        assert settlement(game).result == "blocked" and game.leader == 0

    def test_lowest_pips_tie_is_random_among_the_tied(self):
        leaders = set()
        for seed in range(30):
            game = make([["6-5", "1-1"], ["2-0", "0-0"]], no_draws=True, after_block="lowest_pips", seed=seed)
            act(game, "6-5@W")
            assert settlement(game).pips == (2, 2)
            leaders.add(game.leader)
        assert leaders == {0, 1}

    def test_rotate_three_players(self):
        game = make([["6-5", "1-1"], ["2-0", "3-3"], ["4-4", "6-1"]], leader=1, no_draws=True, after_block="rotate")
        act(game, "2-0@W")  # nobody holds a 2 or a 0: blocked at once
        assert events_of(game, Pass) == [Pass(2), Pass(0), Pass(1)]
        assert settlement(game).result == "blocked" and game.leader == 2

    def test_random(self):
        leaders = {self._blocked(after_block="random", seed=s).leader for s in range(30)}
        assert leaders == {0, 1}

    def test_domino_winner_leads_next_whatever_after_block_says(self):
        for after in ("random", "lowest_pips", "rotate"):
            game = make([["6-4", "4-1"], ["3-3", "5-2"]], no_draws=True, after_block=after)
            act(game, "6-4@W", "4-1@E")
            assert settlement(game).result == "domino"
            assert game.leader == 0 and game.current_player == 0


# ====================================================================== drawing
class TestDrawing:
    HANDS = [["6-6", "5-5", "4-4", "3-3", "2-2"], ["0-1", "0-2", "0-3", "1-2", "1-3"]]
    HANDS_6 = [["6-6", "6-5", "4-4", "3-3", "2-2"], ["0-1", "0-2", "0-3", "1-2", "1-3"]]  # seat 0 can follow

    def test_forced_draw_until_playable_then_must_play_it(self):
        game = make(self.HANDS, boneyard=["5-4", "1-1", "6-0", "6-1"])
        act(game, "6-6@W")
        assert hand_events(game)[-3:] == [Draw(1, tid("5-4"), True), Draw(1, tid("1-1"), True), Draw(1, tid("6-0"), True)]
        assert game.current_player == 1 and names(game) == ["6-0@W", "6-0@E"]

    def test_may_draw_when_able(self):
        game = make(self.HANDS, boneyard=["4-1", "6-0", "6-1"], may_draw_when_able=True, boneyard_reserve=16)
        draw = 4 * T6.size
        assert game.draw_action == draw == 112
        act(game, "2-2@W")  # seat 1 holds 0-2 and 1-2: it may play, or draw
        assert draw in game.legal_actions() and names(game)[-1] == "draw"
        game.step(draw)
        assert game.events[-1] == Draw(1, tid("4-1"), False)
        assert game.current_player == 1 and draw in game.legal_actions()
        game.step(draw)
        assert game.events[-1] == Draw(1, tid("6-0"), False)
        # 18 - 16 = 2 drawable tiles are gone: no more drawing, the seat must play
        assert game.boneyard_size == 16 and draw not in game.legal_actions()
        assert names(game) == ["2-0@W", "2-0@E", "2-1@W", "2-1@E"]

    def test_may_draw_when_able_with_max_draws(self):
        game = make(self.HANDS, boneyard=["4-1", "6-0", "6-1"], may_draw_when_able=True, max_draws_per_turn=1)
        act(game, "2-2@W")
        game.step(game.draw_action)
        assert game.draw_action not in game.legal_actions()  # one draw a turn
        act(game, "2-1@E")  # W 2, E 1; seat 0 holds only doubles 6..3: one forced draw (6-0), then it passes
        assert hand_events(game)[-2:] == [Draw(0, tid("6-0"), True), Pass(0)]
        assert game.current_player == 1

    def test_draw_action_absent_by_default(self):
        game = make(self.HANDS)
        act(game, "2-2@W")
        assert 112 not in game.legal_actions()
        env = allfives_v0.raw_env(hand_size="five_always")
        assert env.action_space("player_0").n == 112

    def test_may_draw_when_able_in_env_mask(self):
        env = allfives_v0.raw_env(hand_size="five_always", may_draw_when_able=True)
        env.reset(seed=0, options={"hands": self.HANDS, "leader": 0})
        env.step(parse_action("2-2@W", T6))
        mask = env.observe("player_1")["action_mask"]
        assert mask.shape == (113,) and mask[112] == 1
        env.step(112)
        assert type(env.game.events[-1]) is Draw and env.agent_selection == "player_1"

    def test_voids_stay_true_after_a_chosen_draw(self):
        """A forced draw finds a playable tile, the seat then chooses to draw again and plays the new tile:
        it still holds the first one, so it must not be marked void in the old open value."""
        game = make(self.HANDS, boneyard=["6-0", "6-1"], may_draw_when_able=True)
        act(game, "6-6@W")
        assert game.events[-1] == Draw(1, tid("6-0"), True)
        game.step(game.draw_action)
        act(game, "6-1@E")
        assert tid("6-0") in game.hand(1)
        assert not (game.voids[1] >> 6) & 1, "seat 1 holds 6-0 but is marked void in 6"

    def test_max_draws_per_turn(self):
        game = make(self.HANDS_6, boneyard=["4-1", "1-1", "6-0", "6-1"], max_draws_per_turn=2)
        act(game, "6-6@W")
        # seat 1 draws twice (no 6), then passes although the boneyard still holds 6-0
        assert hand_events(game)[2:5] == [Draw(1, tid("4-1"), True), Draw(1, tid("1-1"), True), Pass(1)]
        assert game.current_player == 0 and names(game) == ["6-5@W", "6-5@E"]
        assert game.boneyard()[0] == tid("6-0")
        assert game.voids[1] >> 6 & 1  # it showed it holds no 6

    def test_max_draws_per_turn_resets_each_turn(self):
        hands = [["6-6", "5-5", "4-4", "3-3", "2-2"], ["0-1", "0-2", "0-3", "1-2", "1-3"]]
        game = make(hands, boneyard=["4-1", "1-1", "0-0", "6-1"], max_draws_per_turn=2)
        act(game, "6-6@W")
        # seat 1 draws 4-1 and 1-1 and passes; seat 0 has no 6 either: its own two draws find 6-1
        assert hand_events(game)[2:7] == [
            Draw(1, tid("4-1"), True), Draw(1, tid("1-1"), True), Pass(1),
            Draw(0, tid("0-0"), True), Draw(0, tid("6-1"), True),
        ]
        assert game.current_player == 0 and names(game) == ["6-1@W", "6-1@E"]

    def test_boneyard_reserve_is_never_drawn(self):
        game = make(self.HANDS_6, boneyard=["4-1", "1-1", "6-0", "6-1"], boneyard_reserve=16)
        act(game, "6-6@W")
        # 18 in the boneyard, 16 reserved: seat 1 draws 4-1 and 1-1, then must pass; 6-0 stays put
        assert hand_events(game)[2:5] == [Draw(1, tid("4-1"), True), Draw(1, tid("1-1"), True), Pass(1)]
        assert game.boneyard_size == 16 and game.drawable == 0
        assert game.boneyard()[:2] == [tid("6-0"), tid("6-1")]


# ====================================================================== spinner options
class TestSpinner:
    HANDS = [["6-6", "5-5", "4-4", "3-3", "2-2"], ["6-3", "6-1", "6-2", "0-1", "0-2"]]

    def test_sides_first_default(self):
        game = make(self.HANDS)
        act(game, "6-6@W")
        assert names(game) == ["6-1@W", "6-1@E", "6-2@W", "6-2@E", "6-3@W", "6-3@E"]

    def test_sides_first_false_opens_n_and_s_at_once(self):
        game = make(self.HANDS, spinner_sides_first=False)
        act(game, "6-6@W")
        assert set(names(game)) == {f"6-{x}@{s}" for x in (1, 2, 3) for s in "WENS"}
        act(game, "6-3@N")
        # the spinner still counts 2 x 6 (no side is filled), plus the N arm's 3
        assert game.events[-1] == Play(1, tid("6-3"), 2, 15, 15)
        assert game.board.spinner_counts()

    def test_sides_first_false_spinner_stops_after_both_sides(self):
        hands = [["6-6", "6-0", "6-5", "4-4", "2-2"], ["6-3", "6-1", "6-2", "0-1", "0-2"]]
        game = make(hands, spinner_sides_first=False)
        act(game, "6-6@W", "6-3@N")  # SP 12 + N 3 = 15
        assert game.events[-1].points == 15
        act(game, "6-0@W")  # one side filled: SP 12 + W 0 + N 3 = 15
        assert game.events[-1] == Play(0, tid("6-0"), 0, 15, 15)
        act(game, "6-1@E")  # both sides filled, the spinner stops: W 0 + E 1 + N 3 = 4
        assert game.events[-1].count == 4 and not game.board.spinner_counts()

    def test_default_n_s_open_once_both_sides_hold_a_tile(self):
        hands = [["6-6", "6-0", "6-5", "4-4", "2-2"], ["6-3", "6-1", "6-2", "0-1", "0-2"]]
        game = make(hands)
        act(game, "6-6@W", "6-3@E")  # SP 12 + 3 = 15
        assert not any(n.endswith(("@N", "@S")) for n in names(game))
        act(game, "6-0@W")  # W 0 + E 3 = 3
        assert game.events[-1].count == 3
        assert {"6-1@N", "6-1@S", "6-2@N", "6-2@S"} <= set(names(game))

    @pytest.mark.parametrize("spinner_count, count, points", [("allfives", 7, 0), ("sniff", 15, 15)])
    def test_sniff_counts_uncovered_spinner_ends(self, spinner_count, count, points):
        hands = [["4-4", "4-1", "2-2"], ["6-4", "3-3", "5-5"]]
        game = make(hands, no_draws=True, spinner_count=spinner_count)
        act(game, "4-4@W", "6-4@E")  # SP 8 + 6 = 14 either way
        assert game.events[-1].count == 14
        act(game, "4-1@W")  # default: W 1 + E 6; sniff adds the uncovered N and S ends, 4 + 4
        assert last_play(game) == Play(0, tid("4-1"), 0, count, points)


# ====================================================================== end of hand
DOMINO = [["6-4", "4-1"], ["3-3", "5-2"]]  # lead 6-4 (10), seat 1 passes, 4-1@E dominoes (count 7)


class TestHandEnd:
    def test_deduct_own_domino(self):
        game = make(DOMINO, no_draws=True)
        act(game, "6-4@W", "4-1@E")
        s = settlement(game)
        assert s.result == "domino" and s.pips == (0, 13) and s.deltas == (0, -15) and s.scores == (10, -15)

    def test_winner_takes_domino(self):
        game = make(DOMINO, no_draws=True, hand_end="winner_takes")
        act(game, "6-4@W", "4-1@E")
        assert settlement(game).deltas == (15, 0) and game.scores == [25, 0]

    # E11: seat 0 dominoes; seat 1 holds 14 pips, seat 2 (partner) 3, seat 3 8
    E11 = [["6-4", "4-1"], ["5-5", "3-1"], ["3-0", "0-0"], ["5-2", "1-0"]]

    @pytest.mark.parametrize(
        "options, deltas",
        [({}, (-5, -25)), ({"hand_end": "winner_takes"}, (20, 0)),
         ({"hand_end": "winner_takes", "bonus_round": "round_each"}, (25, 0))],
        ids=["deduct_own", "sum_then_round", "round_each"],
    )
    def test_partnership_settlement_e11(self, options, deltas):
        game = make(self.E11, no_draws=True, **options)
        act(game, "6-4@W")  # 10 for team 0+2; seats 1, 2 and 3 hold no 6 or 4
        assert events_of(game, Pass) == [Pass(1), Pass(2), Pass(3)]
        act(game, "4-1@E")  # seat 0 dominoes (6 + 1 = 7)
        s = settlement(game)
        assert s.result == "domino" and s.pips == (0, 14, 3, 8) and s.deltas == deltas
        assert game.scores == [10 + deltas[0], deltas[1]]
        assert game.leader == 0

    def test_partnership_individual_leads_next(self):
        hands = [self.E11[3], self.E11[1], self.E11[0], self.E11[2]]  # the same tiles, seat 2 dominoes
        game = make(hands, leader=2, no_draws=True)
        act(game, "6-4@W", "4-1@E")
        s = settlement(game)
        assert s.result == "domino" and s.pips == (8, 14, 0, 3)
        # team 0+2: 10 - (round5(8) + 0) = 0; team 1+3: -(round5(14) + round5(3)) = -20
        assert s.deltas == (-10, -20) and game.scores == [0, -20]
        assert game.leader == 2 and game.current_player == 2

    def test_blocked_opponents_total_and_difference(self):
        hands = [["5-0", "4-3"], ["6-3", "2-1"]]  # lead 5-0 (5); nobody holds 5 or 0; pips 7 vs 12
        base = make(hands, no_draws=True)
        act(base, "5-0@W")
        s = settlement(base)
        assert s.result == "blocked" and s.pips == (7, 12) and s.deltas == (-5, -10)
        total = make(hands, no_draws=True, hand_end="winner_takes")
        act(total, "5-0@W")
        assert settlement(total).deltas == (10, 0)
        diff = make(hands, no_draws=True, hand_end="winner_takes", blocked_award="difference")
        act(diff, "5-0@W")
        assert settlement(diff).deltas == (5, 0)  # round5(12 - 7)

    def test_blocked_tie_two_players(self):
        hands = [["5-0", "6-3"], ["4-3", "1-1"]]  # 9 pips each after the lead
        game = make(hands, no_draws=True)
        act(game, "5-0@W")
        assert settlement(game).pips == (9, 9) and settlement(game).deltas == (-10, -10)
        game = make(hands, no_draws=True, hand_end="winner_takes")
        act(game, "5-0@W")
        assert settlement(game).deltas == (0, 0)

    def test_blocked_three_player_split_tie(self):
        hands = [["5-0", "6-6"], ["4-4", "3-1"], ["6-4", "6-2"]]  # pips 12, 12, 18 after the lead
        game = make(hands, no_draws=True, hand_end="winner_takes")
        act(game, "5-0@W")
        s = settlement(game)
        assert s.result == "blocked" and s.pips == (12, 12, 18)
        assert s.deltas == (10, 10, 0)  # round5(18) = 20, halved: 10 each
        game = make(hands, no_draws=True, hand_end="winner_takes", blocked_award="difference")
        act(game, "5-0@W")
        assert settlement(game).deltas == (0, 0, 0)  # round5(18 - 12 = 6) = 5, halved 2 -> 0

    def test_blocked_three_player_split_rounds_down_to_five(self):
        hands = [["5-0", "6-6"], ["4-4", "3-1"], ["6-4", "3-3"]]  # pips 12, 12, 16 -> 15 -> 7.5 -> 5
        game = make(hands, no_draws=True, hand_end="winner_takes")
        act(game, "5-0@W")
        assert settlement(game).deltas == (5, 5, 0)

    @pytest.mark.parametrize("bonus, expected", [("sum_then_round", 15), ("round_each", 10)])
    def test_bonus_round_three_players(self, bonus, expected):
        hands = [["6-4", "4-1"], ["5-0", "2-0"], ["3-3", "1-0"]]  # seats 1 and 2 hold 7 pips each
        game = make(hands, no_draws=True, hand_end="winner_takes", bonus_round=bonus)
        act(game, "6-4@W", "4-1@E")
        s = settlement(game)
        assert s.pips == (0, 7, 7) and s.deltas == (expected, 0, 0)  # round5(14) = 15; 5 + 5 = 10

    def test_allow_negative_false(self):
        game = make(DOMINO, no_draws=True, allow_negative=False)
        act(game, "6-4@W", "4-1@E")
        s = settlement(game)
        assert s.deltas == (0, 0) and s.scores == (10, 0)
        game = make(DOMINO, no_draws=True, allow_negative=False, scores=[0, 10])
        act(game, "6-4@W", "4-1@E")
        assert settlement(game).deltas == (0, -10) and game.scores == [10, 0]

    def test_negative_scores_allowed_by_default(self):
        game = make(DOMINO, no_draws=True)
        act(game, "6-4@W", "4-1@E")
        assert game.scores == [10, -15]

    def test_rounding_options(self):
        for rounding, expected in (("nearest", -15), ("down", -10), ("none", -13)):
            game = make(DOMINO, no_draws=True, rounding=rounding)
            act(game, "6-4@W", "4-1@E")
            assert settlement(game).deltas == (0, expected)


# ====================================================================== winning
class TestWinning:
    def test_immediate_win_ends_the_game_mid_hand(self):
        game = make(DOMINO, no_draws=True, scores=[240, 0])
        act(game, "6-4@W")  # 10 points: 250 >= 250
        assert game.over and game.winner == 0 and not game.truncated
        s = settlement(game)
        assert s.result == "target" and s.deltas == (0, 0) and game.scores == [250, 0]
        assert game.events[-1] == GameOver(0, (250, 0), False)

    def test_end_of_hand_win_check_goes_on(self):
        hands = [["6-4", "3-3"], ["4-2", "2-1"]]
        # 6-4 (10 -> 250), 4-2@E (6+2 = 8), seat 0 passes, 2-1@E (7): seat 1 dominoes, seat 0 holds 6 -> -5
        game = make(hands, no_draws=True, scores=[240, 0], win_check="end_of_hand")
        act(game, "6-4@W")
        assert not game.over and game.scores == [250, 0]
        act(game, "4-2@E", "2-1@E")
        s = settlement(game)
        assert s.result == "domino" and s.deltas == (-5, 0) and game.scores == [245, 0]
        assert not game.over and game.hand_number == 2 and game.leader == 1
        # under the default the same lead wins at once
        game = make(hands, no_draws=True, scores=[240, 0])
        act(game, "6-4@W")
        assert game.over and game.winner == 0

    def test_end_of_hand_win_after_settlement(self):
        game = make(DOMINO, no_draws=True, scores=[240, 0], win_check="end_of_hand")
        act(game, "6-4@W", "4-1@E")
        assert game.over and game.winner == 0 and game.scores == [250, -15]

    def test_winner_takes_settlement_can_win(self):
        game = make(DOMINO, no_draws=True, scores=[230, 0], hand_end="winner_takes")
        act(game, "6-4@W")
        assert not game.over and game.scores == [240, 0]
        act(game, "4-1@E")
        assert game.over and game.winner == 0 and game.scores == [255, 0]

    def test_tied_top_score_plays_on(self):
        # a start tied at the target is a position play can reach (a tie at the top is no win);
        # a unique top score at the target is refused, since that game would be won before it starts
        game = make([["6-3", "3-1"], ["2-2", "5-2"]], no_draws=True, scores=[250, 250])
        act(game, "6-3@W")  # count 9: nothing scored, still tied at the top, play goes on
        assert not game.over and game.scores == [250, 250]
        act(game, "3-1@E")  # seat 0 dominoes; seat 1 loses round5(11) = 10: now seat 0 alone is on top
        assert game.over and game.winner == 0 and game.scores == [250, 240]

    def test_exact_target(self):
        rules = dict(score_unit=5, target=61, exact_target=True, no_draws=True)
        game = make(DOMINO, scores=[59, 0], **rules)
        act(game, "6-4@W")  # count 10 = 2 units: exactly 61
        assert game.over and game.winner == 0 and game.scores == [61, 0]
        game = make(DOMINO, scores=[60, 0], **rules)
        act(game, "6-4@W")  # 62 > 61: void
        assert last_play(game) == Play(0, tid("6-4"), 0, 10, 0)
        assert not game.over and game.scores == [60, 0]

    def test_exact_target_voids_a_settlement_bonus(self):
        game = make(DOMINO, scores=[58, 0], score_unit=5, target=61, exact_target=True, hand_end="winner_takes",
                    no_draws=True)
        act(game, "6-4@W")  # 60
        act(game, "4-1@E")  # bonus round5(13) = 15 = 3 units: 63 > 61, void
        assert settlement(game).deltas == (0, 0) and game.scores == [60, 0] and not game.over

    def test_max_hands_truncation_core(self):
        game = make(DOMINO, no_draws=True, max_hands=1)
        act(game, "6-4@W", "4-1@E")
        assert game.over and game.truncated and game.winner == 0  # 10 vs -15: the higher score wins
        assert game.events[-1] == GameOver(0, (10, -15), True)

    def test_max_hands_truncation_draw(self):
        game = make(BLOCK_HANDS, no_draws=True, max_hands=1, scores=[0, 5])
        act(game, "6-5@W")  # blocked: 0 - 0 and 5 - 5: equal scores
        assert game.over and game.truncated and game.winner is None
        assert game.events[-1] == GameOver(None, (0, 0), True)

    def test_max_hands_truncation_env(self):
        env = allfives_v0.raw_env(max_hands=1, num_players=2, hand_size=2, boneyard_reserve=24)
        env.reset(seed=0, options={"hands": DOMINO, "leader": 0})
        env.step(parse_action("6-4@W", T6))
        env.step(parse_action("4-1@E", T6))
        assert all(env.truncations.values()) and not any(env.terminations.values())
        assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


# ====================================================================== scoring options
class TestScoring:
    def test_score_unit_five_targets(self):
        assert Rules(score_unit=5).target == 50
        assert Rules(score_unit=5, num_players=3).target == 40
        assert Rules(score_unit=5, num_players=4).target == 40
        assert Rules(score_unit=5, target=61).target == 61
        assert Rules().target == 250 and Rules(num_players=3).target == 200 and Rules(num_players=4).target == 200

    def test_score_unit_five_points(self):
        game = make(DOMINO, no_draws=True, score_unit=5)
        act(game, "6-4@W", "4-1@E")
        assert [e.points for e in events_of(game, Play)] == [2, 0]  # count 10 -> 2 units
        assert settlement(game).deltas == (0, -3)  # 13 pips -> 15 -> 3 units
        assert game.scores == [2, -3]

    def test_score_unit_five_e15(self):
        rules = Rules(score_unit=5)
        assert rules.pips_to_points(33) == 7 and rules.pips_to_points(7) == 1 and rules.pips_to_points(2) == 0

    def test_min_first_score(self):
        hands = [["5-0", "5-5", "1-1"], ["0-3", "2-2", "4-4"]]
        game = make(hands, no_draws=True, min_first_score=10)
        act(game, "5-0@W")  # count 5: not credited, seat 0 is not "in"
        assert last_play(game) == Play(0, tid("5-0"), 0, 5, 0) and game.scores == [0, 0]
        assert not game.is_in[0]

    def test_min_first_score_then_any_five(self):
        hands = [["6-4", "6-1", "3-3"], ["2-2", "0-0", "5-5"]]
        game = make(hands, no_draws=True, min_first_score=10)
        act(game, "6-4@W")  # 10: credited, seat 0 is in
        assert game.scores == [10, 0] and game.is_in[0]
        act(game, "6-1@W")  # seat 1 holds no 6 or 4 and passes; W 1 + E 4 = 5 now counts
        assert last_play(game) == Play(0, tid("6-1"), 0, 5, 5)
        # then the hand blocks: 15 - round5(6) for seat 0, -round5(14) for seat 1
        assert settlement(game).scores == (10, -15)

    def test_lead_scores_false(self):
        game = make(DOMINO, no_draws=True, lead_scores=False)
        act(game, "6-4@W")
        assert last_play(game) == Play(0, tid("6-4"), 0, 10, 0) and game.scores == [0, 0]


# ---------------------------------------------------------------- the types of the fields
def holds(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the type ``hint`` (a class, a ``Literal`` or a ``Union``): exactly, so that
    ``True`` is no ``int`` and ``np.int64(3)`` none either."""
    origin = typing.get_origin(hint)
    if origin is Literal:
        return type(value) is str and value in typing.get_args(hint)
    if origin is Union:
        return any(holds(value, arg) for arg in typing.get_args(hint))
    return type(value) is hint


#: Every value of every option's domain, "auto" and preset spellings and numpy scalars included.
RULES_CASES = [case for o in OPTIONS for case in o.cases(Rules())] + [
    {"num_players": 4, "partnership": "auto"}, {"target": "auto"}, {"hand_size": "default"},
    {"num_players": np.int64(3), "hand_size": np.int32(6), "must_lead_it": np.bool_(False)},
]


@pytest.mark.parametrize("options", RULES_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_a_resolved_field_holds_a_value_of_its_type(options: dict) -> None:
    """The fields' types are the resolved ones (``partnership`` a bool, ``hand_size`` and ``target``
    integers, never None or a name), and every value construction leaves is of them."""
    rules = Rules.from_options(options)
    hints = typing.get_type_hints(Rules)
    for o in OPTIONS:
        assert holds(getattr(rules, o.name), hints[o.name]), f"{o.name}={getattr(rules, o.name)!r} is no {hints[o.name]}"
    assert [name for name, hint in hints.items() if type(None) in typing.get_args(hint)] == [
        "max_draws_per_turn", "max_hands"]  # None stays None only where it means "no limit"


def test_the_hand_size_names_are_its_presets() -> None:
    assert list(typing.get_args(HandSizePreset)) == list(HAND_SIZE_PRESETS)


def test_the_rules_class_must_declare_the_option_table() -> None:
    """Rules' fields and constructor are written out (a type checker reads them), and checked against the
    table when the class is made: a field, a parameter or a default that differs is refused."""
    names = [o.name for o in OPTIONS]

    def made(annotations: list[str], defaults: dict[str, Any]) -> type:
        def __init__(self: Any, **options: Any) -> None:
            pass
        keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
        __init__.__signature__ = inspect.Signature(
            [inspect.Parameter("self", keyword)] + [inspect.Parameter(k, keyword, default=v) for k, v in defaults.items()])
        return _option_fields(type("R", (), {"__annotations__": dict.fromkeys(annotations, "int"), "__init__": __init__}))

    table = {o.name: o.default for o in OPTIONS}
    assert made(names, table).target is None  # the table's defaults become the fields' defaults
    with pytest.raises(TypeError, match="must declare the options of the table"):
        made(names[:-1], table)
    with pytest.raises(TypeError, match="must declare the options of the table"):
        made(names, {**table, "max_hands": 100})
    with pytest.raises(TypeError, match="must declare the options of the table"):
        made(names, dict(reversed(table.items())))
