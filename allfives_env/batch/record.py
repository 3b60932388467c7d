"""A batch game's replay: the compiled engine's event rows as the core's replay record.

The rows come from the batch engine re-running one game with logging on (:meth:`BatchGame.replay`);
here they become the core's event values and the JSON record of :func:`allfives_env.core.replay.
game_record`, so that :func:`~allfives_env.core.replay.load_replay` can re-simulate the game with the
Python core and verify every event: the differential test of the two engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.events import Draw, Event, GameOver, HandStart, Pass, Play, Settlement, event_to_dict
from ..core.replay import REPLAY_FORMAT, REPLAY_VERSION
from ..core.rules import Rules
from ..core.tiles import TileSet
from .layout import EV_DEAL, EV_DRAW, EV_GAME_OVER, EV_HAND_START, EV_PASS, EV_PLAY, RESULT_NAMES


def event_of(row: np.ndarray, players: int, sides: int) -> Event:
    """The core event of one logged row (:mod:`.layout` gives the row formats)."""
    kind = int(row[0])
    f = [int(x) for x in row]
    if kind == EV_HAND_START:
        return HandStart(f[1], f[2], tuple(f[3:3 + sides]))
    if kind == EV_PLAY:
        return Play(f[1], f[2], f[3], f[4], f[5])
    if kind == EV_DRAW:
        return Draw(f[1], f[2], bool(f[3]))
    if kind == EV_PASS:
        return Pass(f[1])
    if kind == EV_GAME_OVER:
        return GameOver(None if f[1] < 0 else f[1], tuple(f[3:3 + sides]), bool(f[2]))
    return Settlement(f[1], RESULT_NAMES[f[2]], tuple(f[3:3 + players]), tuple(f[7:7 + sides]), tuple(f[11:11 + sides]))


def replay_record(rules: Rules, tiles: TileSet, game: Any, stop_after_hand: bool, rows: np.ndarray) -> dict[str, Any]:
    """The replay record of one re-run game under ``rules`` (played with ``tiles``, their set): its final
    record ``game`` and its log ``rows`` (each hand opens with an ``EV_DEAL`` row: the deal as dealt, the
    leader, the opening drawer)."""
    pairs = tiles.pairs
    T, P, h, sides = tiles.size, rules.num_players, int(rules.hand_size), rules.num_sides
    hands: list[dict[str, Any]] = []
    for row in rows:
        if row[0] != EV_DEAL:
            hands[-1]["events"].append(event_to_dict(event_of(row, P, sides), tiles))
            continue
        deal = [int(t) for t in row[4:4 + T]]
        hands.append({
            "hand": int(row[1]),
            "leader": int(row[2]),
            "scores_before": None,
            "opening_drawer": None if row[3] < 0 else int(row[3]),
            "deal": {
                "hands": [[list(pairs[t]) for t in deal[s * h:(s + 1) * h]] for s in range(P)],
                "boneyard": [list(pairs[t]) for t in deal[P * h:]],
            },
            "events": [],
        })
    for hand in hands:
        hand["scores_before"] = hand["events"][0]["scores"]  # the hand_start event's
    return {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "rules": rules.to_dict(),
        "seed": None,
        "hands": hands,
        "final_scores": [int(x) for x in game["scores"][:sides]],
        "winner": None if game["winner"] < 0 else int(game["winner"]),
        "truncated": bool(game["truncated"]),
        "over": bool(game["over"]),
        "stop_after_hand": stop_after_hand,
    }
