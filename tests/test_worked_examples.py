"""docs/rules.md §9 worked examples E1-E17 as test vectors, driven through the PettingZoo env.

Every example is played on a fixed deal through ``allfives_v0.raw_env``: ``reset(options={"hands": ...})``
then ``step(tile_id * 4 + slot)``. Each scripted move is checked to be legal (in the action mask) before
it is played, and the resulting ``Play`` event gives the (count, points) compared with the spec's table.
The env-level consequences are checked as well: zero-sum rewards under ``reward="points"``, the action
mask (E17), ``infos`` events (E10), terminations and win rewards (E13).

How the deals are built (so that no forced draw disturbs a script):

* Play-by-play examples (E1-E8, E15, E16) hand the scripted tiles out to the seats in turn order; every
  seat then always holds a legal tile (its next scripted one) when its turn comes, so the engine never
  draws or passes for anyone, whatever the filler tiles are. Fillers also keep every seat from dominoing.
* Settlement examples (E9, E11, E12, E13, E14) need seats that keep a given hand. They use a small
  ``hand_size`` and ``boneyard_reserve`` equal to the whole boneyard, which plays exactly like "the boneyard
  is empty": a seat without a legal placement passes at once, keeping its tiles.
* E10 is the spec's own deal, with its draws from the boneyard.

A few direct core-level checks (``Rules.round_pips``, ``Rules.pips_to_points``, ``Board``, ``Game``) sit at
the end, where the env adds nothing.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pytest

from allfives_env import allfives_v0
from allfives_env.core import (
    Board,
    Deal,
    Draw,
    Game,
    GameOver,
    HandStart,
    IllegalActionError,
    Pass,
    Play,
    Rules,
    Settlement,
    parse_action,
    tile_set,
)

TILES = tile_set(6)
SLOT = {"W": 0, "E": 1, "N": 2, "S": 3}
SLOT_NAME = "WENS"


# ====================================================================== helpers
def tile(name: str) -> int:
    return TILES.parse(name)


def pair(tid: int) -> list[int]:
    return list(TILES.pairs[tid])


def action_of(move: str) -> int:
    """``"6-4@E"`` -> action id; a bare ``"6-4"`` is a lead (slot 0)."""
    move = move.strip()
    if "@" not in move:
        return tile(move) * 4
    return parse_action(move, TILES)


def split_move(move: str) -> tuple[int, str]:
    """``"1: 6-4@E"`` -> (1, "6-4@E")."""
    seat, _, rest = move.partition(":")
    return int(seat), rest.strip()


def make_env(**kwargs) -> allfives_v0.raw_env:
    return allfives_v0.raw_env(**kwargs)


def reset(env, hands, boneyard=(), leader: int = 0, scores: Optional[Sequence[int]] = None, seed: int = 0) -> None:
    options = {
        "hands": [[TILES.pairs[tile(t)] if isinstance(t, str) else t for t in h] for h in hands],
        "boneyard": [TILES.pairs[tile(t)] if isinstance(t, str) else t for t in boneyard],
        "leader": leader,
    }
    options["hands"] = [[list(p) for p in h] for h in options["hands"]]
    options["boneyard"] = [list(p) for p in options["boneyard"]]
    if scores is not None:
        options["scores"] = list(scores)
    env.reset(seed=seed, options=options)


def alternating_script(moves: Sequence[str], num_players: int, leader: int = 0) -> list[str]:
    """Give the moves to the seats in turn order: ``["6-6", "6-3@E"]`` -> ``["0: 6-6", "1: 6-3@E"]``."""
    return [f"{(leader + i) % num_players}: {m}" for i, m in enumerate(moves)]


def alternating_deal(script: Sequence[str], num_players: int, hand_size: int) -> list[list[int]]:
    """Hands holding each seat's scripted tiles plus filler tiles (never the last tile: no domino)."""
    scripted: list[list[int]] = [[] for _ in range(num_players)]
    used = set()
    for move in script:
        seat, m = split_move(move)
        t = action_of(m) >> 2
        assert t not in used, f"tile {TILES.name(t)} is scripted twice"
        scripted[seat].append(t)
        used.add(t)
    free = [t for t in range(TILES.size) if t not in used]
    hands = []
    for seat in range(num_players):
        need = hand_size - len(scripted[seat])
        assert need >= 1, f"seat {seat} would domino: {len(scripted[seat])} scripted tiles, hand_size {hand_size}"
        hands.append([pair(t) for t in scripted[seat] + free[:need]])
        free = free[need:]
    return hands


def expected_rewards(env, before: Sequence[int]) -> dict[str, float]:
    """RULES/env doc: own side's gain minus the mean gain of the other sides, divided by the target."""
    game = env.game
    deltas = [a - b for a, b in zip(game.scores, before)]
    k = game.num_sides
    total = sum(deltas)
    out = {}
    for i, agent in enumerate(env.possible_agents):
        d = deltas[game.side_of[i]]
        out[agent] = (d - (total - d) / (k - 1)) / env.rules.target if any(deltas) else 0.0
    return out


def play_script(env, script: Sequence[str]) -> list[tuple[int, int]]:
    """Play ``"seat: a-b@X"`` moves through ``env.step``; return each move's (count, points).

    Before each move: the seat must be the agent to act and the action must be in its mask. After it:
    the first new event is the matching ``Play``, and under ``reward="points"`` the step's rewards are
    the zero-sum score change divided by the target.
    """
    out = []
    for move in script:
        seat, m = split_move(move)
        action = action_of(m)
        agent = f"player_{seat}"
        game = env.game
        assert not game.over, f"game over before {move!r}"
        assert env.agent_selection == agent, f"{move!r}: {env.agent_selection} is to act, not {agent}"
        mask = env.observe(agent)["action_mask"]
        assert mask[action] == 1, f"{move!r} is not legal; legal: {game.action_names()}"
        n_before = len(game.events)
        scores_before = list(game.scores)
        env.step(action)
        ev = game.events[n_before]
        assert type(ev) is Play, ev
        assert (ev.seat, ev.tile, ev.slot) == (seat, action >> 2, action & 3), (move, ev)
        out.append((ev.count, ev.points))
        if env.reward_mode == "points":
            want = expected_rewards(env, scores_before)
            for a in env.possible_agents:
                assert env.rewards[a] == pytest.approx(want[a]), (move, a, env.rewards, want)
            assert sum(env.rewards.values()) == pytest.approx(0.0)
    return out


def counted_ends(board: Board) -> dict[str, int]:
    """The spec's "Counted" column: {"SP": 2v} while the spinner counts, plus each counted end's value."""
    out = {}
    if board.spinner_counts():
        out["SP"] = 2 * board.spinner
    for slot in range(4):
        if board.counted(slot):
            v = board.ends[slot]
            out[SLOT_NAME[slot]] = 2 * v if (board.arm_len[slot] and board.end_double[slot]) else v
    return out


def parse_counted(text: str) -> dict[str, int]:
    """``"SP12 E3"`` -> {"SP": 12, "E": 3}."""
    out = {}
    for part in text.split():
        key = "SP" if part.startswith("SP") else part[0]
        out[key] = int(part[len(key):])
    return out


def legal_ends(board: Board) -> dict[str, int]:
    return {SLOT_NAME[s]: board.ends[s] for s in board.open_slots}


def assert_legal_ends(env, expected: dict[str, int]) -> None:
    """E17: the open ends and values, and the mask of the agent to act is exactly hand x open ends."""
    game = env.game
    assert legal_ends(game.board) == expected
    agent = env.agent_selection
    seat = env.possible_agents.index(agent)
    want = set()
    for t in game.hand(seat):
        lo, hi = TILES.pairs[t]
        for name, v in expected.items():
            if v in (lo, hi):
                want.add(t * 4 + SLOT[name])
    mask = env.observe(agent)["action_mask"]
    assert set(np.flatnonzero(mask).tolist()) == want
    assert want, "the check is empty: the seat to act holds no tile for any open end"
    for other in env.possible_agents:
        if other != agent:
            assert not env.observe(other)["action_mask"].any()
    # a tile on a closed end is refused by the raw env, and nothing changes
    closed = [SLOT[s] for s in "WENS" if s not in expected]
    if closed:
        hand = game.hand(seat)
        slot = closed[0]
        v = game.board.ends[slot]  # the value the closed end would have (the spinner's, for N/S)
        t = next((t for t in hand if v in TILES.pairs[t]), hand[0])
        n = len(game.events)
        with pytest.raises(IllegalActionError):
            env.step(t * 4 + slot)
        assert len(game.events) == n and env.agent_selection == agent


def side_totals(script: Sequence[str], points: Sequence[int], rules: Rules) -> list[int]:
    totals = [0] * rules.num_sides
    for move, p in zip(script, points):
        totals[rules.side_of(split_move(move)[0])] += p
    return totals


# ====================================================================== play-by-play tables
# (move, counted, count, points); a bare tile is the lead.
E2 = [
    ("6-6", "SP12", 12, 0),
    ("6-3@E", "SP12 E3", 15, 15),
    ("6-2@W", "W2 E3", 5, 5),
    ("6-5@N", "W2 E3 N5", 10, 10),
    ("5-5@N", "W2 E3 N10", 15, 15),
    ("3-3@E", "W2 E6 N10", 18, 0),
    ("2-2@W", "W4 E6 N10", 20, 20),
    ("2-4@W", "W4 E6 N10", 20, 20),
    ("6-1@S", "W4 E6 N10 S1", 21, 0),
    ("1-5@S", "W4 E6 N10 S5", 25, 25),
]
E3 = [
    ("6-4", "W6 E4", 10, 10),
    ("4-1@E", "W6 E1", 7, 0),
    ("1-3@E", "W6 E3", 9, 0),
    ("2-6@W", "W2 E3", 5, 5),
    ("5-2@W", "W5 E3", 8, 0),
    ("3-5@E", "W5 E5", 10, 10),
    ("5-5@W", "SP10 E5", 15, 15),
    ("5-0@W", "W0 E5", 5, 5),
    ("0-0@W", "W0 E5", 5, 5),
    ("5-1@N", "W0 E5 N1", 6, 0),
    ("5-4@S", "W0 E5 N1 S4", 10, 10),
]
E4 = [
    ("4-1", "W4 E1", 5, 5),
    ("1-1@E", "W4 SP2", 6, 0),
    ("4-4@W", "W8 SP2", 10, 10),
    ("4-3@W", "W3 SP2", 5, 5),
    ("1-2@E", "W3 E2", 5, 5),
    ("1-5@N", "W3 E2 N5", 10, 10),
    ("5-5@N", "W3 E2 N10", 15, 15),
    ("5-0@N", "W3 E2 N0", 5, 5),
    ("1-6@S", "W3 E2 N0 S6", 11, 0),
]
E5 = [
    ("6-6", "SP12", 12, 0),
    ("6-3@E", "SP12 E3", 15, 15),
    ("3-1@E", "SP12 E1", 13, 0),
    ("6-4@W", "W4 E1", 5, 5),
]
E6 = [
    ("5-5", "SP10", 10, 10),
    ("5-0@E", "SP10 E0", 10, 10),
    ("5-3@W", "W3 E0", 3, 0),
    ("5-2@N", "W3 E0 N2", 5, 5),
    ("5-6@S", "W3 E0 N2 S6", 11, 0),
    ("0-4@E", "W3 E4 N2 S6", 15, 15),
    ("6-6@S", "W3 E4 N2 S12", 21, 0),
    ("3-3@W", "W6 E4 N2 S12", 24, 0),
    ("4-4@E", "W6 E8 N2 S12", 28, 0),
    ("2-2@N", "W6 E8 N4 S12", 30, 30),
]
E7 = [
    ("3-3", "SP6", 6, 0),
    ("3-6@W", "SP6 W6", 12, 0),
    ("3-5@E", "W6 E5", 11, 0),
    ("3-4@N", "W6 E5 N4", 15, 15),
    ("3-2@S", "W6 E5 N4 S2", 17, 0),
    ("6-6@W", "W12 E5 N4 S2", 23, 0),
    ("5-5@E", "W12 E10 N4 S2", 28, 0),
    ("4-4@N", "W12 E10 N8 S2", 32, 0),
    ("2-5@S", "W12 E10 N8 S5", 35, 35),
]
E8_DEFAULT = [
    ("4-4", "SP8", 8, 0),
    ("6-4@E", "SP8 E6", 14, 0),
    ("1-4@W", "W1 E6", 7, 0),
    ("4-2@N", "W1 E6 N2", 9, 0),
    ("4-0@S", "W1 E6 N2 S0", 9, 0),
]
E8_SNIFF = [
    ("4-4", "SP8", 8, 0),
    ("6-4@E", "SP8 E6", 14, 0),
    ("1-4@W", "W1 E6 N4 S4", 15, 15),
    ("4-2@N", "W1 E6 N2 S4", 13, 0),
    ("4-0@S", "W1 E6 N2 S0", 9, 0),
]

PLAY_EXAMPLES = {
    "E2": (E2, {}),
    "E3": (E3, {}),
    "E4": (E4, {}),
    "E5": (E5, {}),
    "E6": (E6, {}),
    "E7": (E7, {}),
    "E8-default": (E8_DEFAULT, {}),
    "E8-sniff": (E8_SNIFF, {"spinner_count": "sniff"}),
}


def run_table(table, num_players: int = 2, reward: str = "points", **rules_options):
    """Deal a table's tiles in turn order, play it through the env checking each row; return the env."""
    env = make_env(num_players=num_players, reward=reward, **rules_options)
    script = alternating_script([row[0] for row in table], num_players)
    reset(env, alternating_deal(script, num_players, env.rules.hand_size))
    for move, (m, counted, count, points) in zip(script, table):
        [(got_count, got_points)] = play_script(env, [move])
        assert (got_count, got_points) == (count, points), f"{m}: count/points {got_count}/{got_points}, spec {count}/{points}"
        assert env.game.board.count() == count
        assert counted_ends(env.game.board) == parse_counted(counted), f"{m}: counted"
    pts = [row[3] // env.rules.score_unit for row in table]
    assert env.game.scores == side_totals(script, pts, env.rules)
    assert not env.game.over
    return env


# ====================================================================== E1
E1 = [
    ("5-5", "SP10", 10, 10),
    ("6-4", "W6 E4", 10, 10),
    ("5-0", "W5 E0", 5, 5),
    ("4-1", "W4 E1", 5, 5),
    ("3-2", "W3 E2", 5, 5),
    ("6-6", "SP12", 12, 0),
    ("4-4", "SP8", 8, 0),
    ("1-1", "SP2", 2, 0),
    ("6-5", "W6 E5", 11, 0),
    ("0-0", "SP0", 0, 0),
]


@pytest.mark.parametrize("lead,counted,count,points", E1, ids=[r[0] for r in E1])
@pytest.mark.parametrize("leader", [0, 1])
def test_e1_leads(lead, counted, count, points, leader):
    env = make_env(reward="points")
    script = [f"{leader}: {lead}"]
    lead_id = tile(lead)
    free = [pair(t) for t in range(TILES.size) if t != lead_id]
    hands = [free[:9], free[9:18]]
    hands[leader] = [pair(lead_id)] + hands[leader][:8]
    reset(env, hands, leader=leader)
    assert env.agent_selection == f"player_{leader}"
    # every tile of the leader's hand may lead, on slot 0 only
    mask = env.observe(f"player_{leader}")["action_mask"]
    assert set(np.flatnonzero(mask).tolist()) == {t * 4 for t in env.game.hand(leader)}
    assert play_script(env, script) == [(count, points)]
    board = env.game.board
    assert counted_ends(board) == parse_counted(counted)
    assert env.game.scores[leader] == points and env.game.scores[1 - leader] == 0
    if lead == "6-4":  # lead orientation: higher pip on W
        assert (board.ends[0], board.ends[1]) == (6, 4)
    # the points reward of the lead: zero-sum, scaled by the target
    assert env.rewards[f"player_{leader}"] == pytest.approx(points / 250)
    assert env.rewards[f"player_{1 - leader}"] == pytest.approx(-points / 250)


# ====================================================================== E2-E8
@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("name", list(PLAY_EXAMPLES))
def test_play_examples(name, num_players):
    table, options = PLAY_EXAMPLES[name]
    run_table(table, num_players=num_players, **options)


def test_e2_spinner_arms_and_closed_ends():
    """E2 notes: N/S closed after #1 and #2, open (value 6) after #3; 2-2 covered after #8."""
    env = make_env(reward="points")
    script = alternating_script([r[0] for r in E2], 2)
    reset(env, alternating_deal(script, 2, 9))
    play_script(env, script[:1])
    assert legal_ends(env.game.board) == {"W": 6, "E": 6}
    play_script(env, script[1:2])
    assert legal_ends(env.game.board) == {"W": 6, "E": 3}
    play_script(env, script[2:3])
    assert legal_ends(env.game.board) == {"W": 2, "E": 3, "N": 6, "S": 6}
    play_script(env, script[3:])
    assert env.game.scores == [0 + 5 + 15 + 20 + 0, 15 + 10 + 0 + 20 + 25]


def test_e3_spinner_takes_line_as_east_arm():
    env = make_env()
    script = alternating_script([r[0] for r in E3], 2)
    reset(env, alternating_deal(script, 2, 9))
    play_script(env, script[:7])
    board = env.game.board
    assert board.spinner == 5
    # the old line 5-2 . 2-6 . 6-4 . 4-1 . 1-3 . 3-5 is now the spinner's E arm; its W side is free
    assert board.arm_len[1] == 6 and board.arm_len[0] == 0
    assert board.ends[1] == 5


def test_e5_one_side_grows_before_the_other():
    env = make_env()
    script = alternating_script([r[0] for r in E5], 2)
    reset(env, alternating_deal(script, 2, 9))
    play_script(env, script[:3])
    assert env.game.board.arm_len[1] == 2 and env.game.board.arm_len[0] == 0
    play_script(env, script[3:])
    assert legal_ends(env.game.board) == {"W": 4, "E": 1, "N": 6, "S": 6}


# ====================================================================== E9
E9_ROWS = [
    ([], 0, 0),
    (["0-1"], 1, 0),
    (["1-1"], 2, 0),
    (["1-2"], 3, 5),
    (["0-4"], 4, 5),
    (["2-5"], 7, 5),
    (["3-5"], 8, 10),
    (["6-6"], 12, 10),
    (["6-6", "0-1"], 13, 15),
    (["5-5", "0-0"], 10, 10),
    (["6-4", "2-0"], 12, 10),
    (["6-5", "4-3"], 18, 20),
    (["6-6", "5-5", "4-4"], 30, 30),
]


def chain_avoiding(hand: Sequence[str], k: int) -> list[str]:
    """k tiles P0 can play alone, each on W, whose pips never match ``hand`` (so P1 always passes)."""
    banned = {v for t in hand for v in TILES.pairs[tile(t)]}
    values = [v for v in range(7) if v not in banned]
    assert len(values) >= k + 1
    tiles = [f"{values[i]}-{values[i + 1]}" for i in range(k)]
    return [f"0: {tiles[0]}"] + [f"0: {t}@W" for t in tiles[1:]]


def settle_scripted(hands, script, num_players=2, leader=0, episode="hand", reward="points", **options):
    """Deal ``hands`` (hand_size = their size, nothing drawable), play ``script``, return (env, Settlement)."""
    k = len(hands[0])
    boneyard = TILES.size - num_players * k
    env = make_env(num_players=num_players, hand_size=k, boneyard_reserve=boneyard, episode=episode,
                   reward=reward, **options)
    reset(env, hands, leader=leader)
    results = play_script(env, script)
    settles = [e for e in env.game.events if type(e) is Settlement]
    assert len(settles) == 1, env.game.events
    return env, settles[0], results


@pytest.mark.parametrize("hand,pips,penalty", E9_ROWS, ids=["-".join(r[0]) or "empty" for r in E9_ROWS])
def test_e9_hand_end_rounding(hand, pips, penalty):
    rules = Rules()
    assert rules.round_pips(pips) == penalty
    assert rules.pips_to_points(pips) == penalty
    if not hand:
        # {} 0 -> 0 is the dominoer's own hand: checked in every row below (seat 0 loses nothing)
        return
    k = len(hand)
    script = chain_avoiding(hand, k)
    p0 = [split_move(m)[1].split("@")[0] for m in script]
    env, settle, results = settle_scripted([p0, hand], script)
    play_points = sum(p for _, p in results)
    assert settle.result == "domino"
    assert settle.pips == (0, pips)
    assert settle.deltas == (0, -penalty)
    assert env.game.scores == [play_points, -penalty]
    assert env.game.over and env.terminations == {"player_0": True, "player_1": True}
    # the final step's points reward includes the settlement, zero-sum over the target
    assert env.rewards["player_1"] == pytest.approx(-(results[-1][1] + penalty) / 250)


@pytest.mark.parametrize("pips", list(range(0, 40)))
def test_e9_round5_formula(pips):
    """docs/rules.md §6.2: round5(p) = 5 * floor((p + 2) / 5): remainders 0-2 down, 3-4 up."""
    r = Rules()
    want = pips - pips % 5 + (5 if pips % 5 >= 3 else 0)
    assert r.round_pips(pips) == want == 5 * ((pips + 2) // 5)


# ====================================================================== E10
E10_HANDS = [["5-5", "5-0", "0-6", "3-1", "5-6"], ["5-3", "6-6", "4-4", "6-2", "1-6"]]
E10_TOP = ["1-1", "2-4", "5-2"]
E10_SCRIPT = [
    # (move, counted, count, points, scores P0/P1)
    ("0: 5-5", "SP10", 10, 10, (10, 0)),
    ("1: 5-3@E", "SP10 E3", 13, 0, (10, 0)),
    ("0: 5-0@W", "W0 E3", 3, 0, (10, 0)),
    ("1: 5-2@N", "W0 E3 N2", 5, 5, (10, 5)),
    ("0: 5-6@S", "W0 E3 N2 S6", 11, 0, (10, 5)),
    ("1: 6-2@N", "W0 E3 N6 S6", 15, 15, (10, 20)),
    ("0: 3-1@E", "W0 E1 N6 S6", 13, 0, (10, 20)),
    ("1: 1-1@E", "W0 E2 N6 S6", 14, 0, (10, 20)),
    ("0: 0-6@W", "W6 E2 N6 S6", 20, 20, (30, 20)),
]


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize(
    "options,final",
    [({}, (30, -15)), ({"hand_end": "winner_takes"}, (65, 20))],
    ids=["deduct_own", "winner_takes"],
)
def test_e10_whole_hand(options, final, seed):
    env = make_env(hand_size="five_always", reward="points", **options)
    assert env.rules.hand_size == 5
    reset(env, E10_HANDS, E10_TOP, leader=0, seed=seed)
    game = env.game
    for i, (move, counted, count, points, scores) in enumerate(E10_SCRIPT):
        if i == 3:
            # P1 had no play on 0/3/5/5: it drew 1-1, 2-4 (no), then 5-2 (yes), and must play that tile now
            draws = [e for e in game.events if type(e) is Draw]
            assert draws == [Draw(1, tile("1-1"), True), Draw(1, tile("2-4"), True), Draw(1, tile("5-2"), True)]
            assert game.current == 1
            assert sorted(game.action_names()) == ["5-2@N", "5-2@S"]
            assert_legal_ends(env, {"W": 0, "E": 3, "N": 5, "S": 5})
            # P1 sees its own draws; P0 (next to act after this move) will see them hidden
            seen = [e for e in env.infos["player_1"]["events"] if type(e) is Draw]
            assert [e.tile for e in seen] == [tile("1-1"), tile("2-4"), tile("5-2")]
        [(c, p)] = play_script(env, [move])
        assert (c, p) == (count, points), move
        if i < len(E10_SCRIPT) - 1:
            assert counted_ends(game.board) == parse_counted(counted), move
            assert tuple(game.scores) == scores, move
        if i == 3:
            seen = [e for e in env.infos["player_0"]["events"] if type(e) is Draw]
            assert [(e.seat, e.tile) for e in seen] == [(1, -1)] * 3
    settle = next(e for e in game.events if type(e) is Settlement)
    assert settle.result == "domino"
    assert settle.pips == (0, 33)  # 6-6, 4-4, 1-6, 2-4
    assert settle.scores == final
    assert tuple(game.scores) == final
    # the game goes on: P0, who dominoed, leads hand 2
    assert not game.over and game.hand_number == 2
    assert [e for e in game.events if type(e) is HandStart][-1] == HandStart(2, 0, final)
    assert env.agent_selection == "player_0"
    # rewards of the last step: P0's 20 play points and the settlement, zero-sum, / 250
    d0, d1 = final[0] - 10, final[1] - 20
    assert env.rewards["player_0"] == pytest.approx((d0 - d1) / 250)
    assert env.rewards["player_1"] == pytest.approx((d1 - d0) / 250)


# ====================================================================== E11
E11_HANDS = [["4-3", "0-2"], ["6-5", "2-1"], ["4-0", "3-0"], ["3-6", "4-4"]]
E11_SCRIPT = ["0: 4-3", "2: 4-0@W", "3: 3-6@E", "0: 0-2@W"]  # seat 1 passes (holds no 4/3/0)


@pytest.mark.parametrize(
    "options,deltas",
    [
        ({}, (-5, -25)),
        ({"hand_end": "winner_takes", "bonus_round": "sum_then_round"}, (20, 0)),
        ({"hand_end": "winner_takes", "bonus_round": "round_each"}, (25, 0)),
    ],
    ids=["deduct_own", "winner_takes-sum_then_round", "winner_takes-round_each"],
)
def test_e11_partnership_settlement(options, deltas):
    env, settle, results = settle_scripted(E11_HANDS, E11_SCRIPT, num_players=4, episode="game", **options)
    assert env.rules.partnership
    assert all(p == 0 for _, p in results)
    assert Pass(1) in env.game.events
    assert settle.result == "domino"
    assert settle.pips == (0, 14, 3, 8)
    assert settle.deltas == deltas
    assert settle.scores == deltas
    # partners share the reward, zero-sum between the teams
    r = env.rewards
    assert r["player_0"] == r["player_2"] == pytest.approx((deltas[0] - deltas[1]) / 200)
    assert r["player_1"] == r["player_3"] == pytest.approx(-(deltas[0] - deltas[1]) / 200)
    # seat 0, who dominoed, leads the next hand
    assert env.game.hand_number == 2
    assert [e for e in env.game.events if type(e) is HandStart][-1].leader == 0
    assert env.agent_selection == "player_0"


# ====================================================================== E12
@pytest.mark.parametrize(
    "hands,options,deltas",
    [
        ([["2-1", "3-4"], ["1-0", "6-6"]], {}, (-5, -10)),
        ([["2-1", "3-4"], ["1-0", "6-6"]], {"hand_end": "winner_takes"}, (10, 0)),
        ([["2-1", "3-4"], ["1-0", "6-6"]], {"hand_end": "winner_takes", "blocked_award": "opponents_total"}, (10, 0)),
        ([["2-1", "3-4"], ["1-0", "6-6"]], {"hand_end": "winner_takes", "blocked_award": "difference"}, (5, 0)),
        ([["2-1", "4-5"], ["1-0", "6-3"]], {}, (-10, -10)),
        ([["2-1", "4-5"], ["1-0", "6-3"]], {"hand_end": "winner_takes"}, (0, 0)),
        ([["2-1", "4-5"], ["1-0", "6-3"]], {"hand_end": "winner_takes", "blocked_award": "difference"}, (0, 0)),
    ],
    ids=["default", "winner_takes", "opponents_total", "difference", "tie-default", "tie-winner_takes",
         "tie-difference"],
)
def test_e12_blocked_hand(hands, options, deltas):
    env, settle, results = settle_scripted(hands, ["0: 2-1", "1: 1-0@E"], episode="game", **options)
    assert results == [(3, 0), (2, 0)]
    game = env.game
    assert [e for e in game.events if type(e) is Pass][:2] == [Pass(0), Pass(1)]
    assert settle.result == "blocked"
    assert settle.pips == tuple(sum(TILES.pips[tile(t)] for t in h[1:]) for h in hands)
    assert settle.deltas == deltas
    assert settle.scores == deltas
    assert tuple(game.scores) == deltas
    assert game.hand_number == 2 and not game.over


def test_e12_next_leader_after_block_is_random():
    leaders = set()
    for seed in range(30):
        env = make_env(hand_size=2, boneyard_reserve=24)
        reset(env, [["2-1", "3-4"], ["1-0", "6-6"]], seed=seed)
        play_script(env, ["0: 2-1", "1: 1-0@E"])
        leaders.add([e for e in env.game.events if type(e) is HandStart][-1].leader)
    assert leaders == {0, 1}


# ====================================================================== E13
E13_HANDS = [["6-3", "5-5", "3-0"], ["6-6", "3-4", "6-2"]]  # P0 keeps 5-5 + 3-0 = 13 pips


def e13_env(win_check: str):
    env = make_env(hand_size=3, boneyard_reserve=22, win_check=win_check)
    reset(env, E13_HANDS, leader=1, scores=[240, 0])
    assert env.rules.target == 250
    return env


def test_e13_immediate_win_mid_hand():
    env = e13_env("immediate")
    assert play_script(env, ["1: 6-6", "0: 6-3@E"]) == [(12, 0), (15, 15)]
    game = env.game
    assert game.over and game.winner == 0
    assert game.scores == [255, 0]  # no deduction although P0 still holds 13 pips
    assert game.tiles.pips_of(game.hands[0]) == 13
    settle = [e for e in game.events if type(e) is Settlement]
    assert len(settle) == 1 and settle[0].result == "target" and settle[0].deltas == (0, 0)
    assert game.events[-1] == GameOver(0, (255, 0), False)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


def test_e13_end_of_hand_no_winner():
    env = e13_env("end_of_hand")
    results = play_script(env, ["1: 6-6", "0: 6-3@E"])
    assert results[-1] == (15, 15)
    assert env.game.scores == [255, 0] and not env.game.over
    # P0 holds only 5-5 and 3-0 (no 6/4): it passes; P1 dominoes
    assert play_script(env, ["1: 3-4@E", "1: 6-2@W"]) == [(16, 0), (6, 0)]
    game = env.game
    assert Pass(0) in game.events
    settle = next(e for e in game.events if type(e) is Settlement)
    assert settle.result == "domino" and settle.pips == (13, 0)
    assert settle.deltas == (-15, 0) and settle.scores == (240, 0)
    assert not game.over and game.winner is None and game.hand_number == 2
    assert [e for e in game.events if type(e) is HandStart][-1] == HandStart(2, 1, (240, 0))
    assert not any(env.terminations.values())
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


# ====================================================================== E14
def test_e14_negative_score():
    env, settle, results = settle_scripted([["4-3", "3-1"], ["6-5", "2-0"]], ["0: 4-3", "0: 3-1@E"], episode="game")
    assert results == [(7, 0), (5, 5)]
    assert settle.pips == (0, 13) and settle.deltas == (0, -15)
    assert env.game.scores == [5, -15]
    assert [e for e in env.game.events if type(e) is HandStart][-1] == HandStart(2, 0, (5, -15))


# ====================================================================== E15
def test_e15_score_unit_5_plays():
    """Count 15 -> 3, count 35 -> 7, count 12 -> 0 (E7's plays under score_unit=5)."""
    env = make_env(score_unit=5, reward="points")
    script = alternating_script([r[0] for r in E7], 2)
    reset(env, alternating_deal(script, 2, 9))
    results = play_script(env, script)
    assert [c for c, _ in results] == [r[2] for r in E7]
    assert [p for _, p in results] == [0, 0, 0, 3, 0, 0, 0, 0, 7]
    assert results[1] == (12, 0)
    assert env.game.scores == [7, 3]


def test_e15_score_unit_5_settlement():
    """E10 under score_unit=5: play points / 5, and 33 pips -> 35 -> 7 deducted."""
    env = make_env(hand_size="five_always", score_unit=5, reward="points")
    reset(env, E10_HANDS, E10_TOP, leader=0)
    results = play_script(env, [r[0] for r in E10_SCRIPT])
    assert [p for _, p in results] == [2, 0, 0, 1, 0, 3, 0, 0, 4]
    settle = next(e for e in env.game.events if type(e) is Settlement)
    assert settle.deltas == (0, -7)
    assert settle.scores == (6, -3)
    assert env.rewards["player_0"] == pytest.approx((4 + 7) / 50)


@pytest.mark.parametrize("pips,units", [(33, 7), (7, 1), (2, 0), (35, 7), (13, 3), (0, 0)])
def test_e15_pips_to_points(pips, units):
    assert Rules(score_unit=5).pips_to_points(pips) == units


def test_e15_settlement_units_through_env():
    """7 pips -> 1 unit; 2 pips -> 0 units, deducted at the end of a hand."""
    for hand, units in [(["2-5"], 1), (["1-1"], 0)]:
        _, settle, _ = settle_scripted([["3-4"], hand], ["0: 3-4"], score_unit=5)
        assert settle.deltas == (0, -units)


@pytest.mark.parametrize("num_players,target", [(2, 50), (3, 40), (4, 40)])
def test_e15_targets(num_players, target):
    assert Rules(num_players=num_players, score_unit=5).target == target
    assert Rules(num_players=num_players).target == target * 5
    assert Rules(num_players=num_players, score_unit=5, target=61).target == 61


# ====================================================================== E16
E16 = ["5-0", "0-4@E", "5-6@W", "4-2@E", "6-3@W"]  # counts 5, 9, 10, 8, 5


@pytest.mark.parametrize(
    "min_first_score,points",
    [(10, [0, 0, 10, 0, 5]), (0, [5, 0, 10, 0, 5])],
    ids=["ten_to_get_in", "default"],
)
def test_e16_min_first_score(min_first_score, points):
    env = make_env(min_first_score=min_first_score, reward="points")
    script = alternating_script(E16, 2)
    reset(env, alternating_deal(script, 2, 9))
    results = play_script(env, script)
    assert [c for c, _ in results] == [5, 9, 10, 8, 5]
    assert [p for _, p in results] == points
    assert env.game.scores == [sum(points), 0]
    if min_first_score:
        assert env.game.scores == [15, 0]


# ====================================================================== E17
@pytest.mark.parametrize(
    "table,after,expected",
    [
        (E3, 7, {"W": 5, "E": 5}),
        (E4, 2, {"W": 4, "E": 1}),
        (E4, 5, {"W": 3, "E": 2, "N": 1, "S": 1}),
        (E2, 1, {"W": 6, "E": 6}),
        (E5, 3, {"W": 6, "E": 1}),
    ],
    ids=["E3#7", "E4#2", "E4#5", "E2#1", "E5#3"],
)
def test_e17_legality(table, after, expected):
    env = make_env()
    script = alternating_script([r[0] for r in table], 2)
    reset(env, alternating_deal(script, 2, 9))
    play_script(env, script[:after])
    assert_legal_ends(env, expected)
    if table is E2:
        # a tile 6-x may go on W or E, never N/S
        mask = env.observe(env.agent_selection)["action_mask"]
        six = [t for t in env.game.hand(1) if 6 in TILES.pairs[t]]
        assert six
        for t in six:
            assert mask[t * 4 + 0] == mask[t * 4 + 1] == 1
            assert mask[t * 4 + 2] == mask[t * 4 + 3] == 0
    # the rest of the example still plays as written
    play_script(env, script[after:])


# ====================================================================== direct core-level checks
@pytest.mark.parametrize("name", list(PLAY_EXAMPLES))
def test_core_game_matches_tables(name):
    """The same tables on a bare core ``Game`` (no env), with the same deal."""
    table, options = PLAY_EXAMPLES[name]
    rules = Rules(**options)
    script = alternating_script([r[0] for r in table], 2)
    hands = alternating_deal(script, 2, rules.hand_size)
    game = Game(rules, seed=3, deals=[Deal.from_tiles(rules, hands, leader=0, rng=np.random.default_rng(3))])
    for move, row in zip(script, table):
        seat, m = split_move(move)
        assert game.current == seat
        game.step(action_of(m))
        ev = [e for e in game.events if type(e) is Play][-1]
        assert (ev.count, ev.points) == (row[2], row[3]), move
        assert game.count() == row[2]


@pytest.mark.parametrize("lead,counted,count,points", E1, ids=[r[0] for r in E1])
def test_core_board_leads(lead, counted, count, points):
    board = Board(TILES)
    assert board.is_empty()
    board.place(tile(lead), 0)
    assert board.count() == count
    assert counted_ends(board) == parse_counted(counted)
    lo, hi = TILES.pairs[tile(lead)]
    assert legal_ends(board) == {"W": hi, "E": lo}
