"""Replays: a whole game as a JSON record, and re-simulation that verifies every event.

Schema (``"format": "allfives-replay"``, ``"version": 1``)::

    {
      "format": "allfives-replay", "version": 1,
      "rules": {...every option of Rules, resolved...},
      "seed": 42,                       # the reset seed, or null
      "hands": [
        {"hand": 1, "leader": 0, "scores_before": [0, 0], "opening_drawer": null,
         "deal": {"hands": [[[a, b], ...], ...],      # as dealt, seat 0 first
                  "boneyard": [[a, b], ...]},        # index 0 is drawn first
         "events": [{"type": "hand_start", ...}, {"type": "play", "seat": 0, "tile": [4, 6],
                     "slot": "W", "count": 10, "points": 10}, ...]}
      ],
      "final_scores": [250, 120], "winner": 0, "truncated": false, "over": true,
      "stop_after_hand": false          # true for single-hand episodes
    }

Event types: ``hand_start`` (hand, leader, scores), ``play`` (seat, tile, slot, count, points),
``draw`` (seat, tile, forced), ``pass`` (seat), ``settlement`` (hand, result, pips, deltas, scores),
``game_over`` (winner, scores, truncated). Tiles are ``[low, high]`` pairs.

Loading (:func:`load_replay`) re-deals each hand from its record and re-plays the decisions (plays
and voluntary draws) through the engine. Every event the engine produces must equal the recorded
one; the first that does not, or a decision that is not legal, raises :class:`ReplayError` naming the
hand and the event index.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

from .actions import action_name
from .errors import DealError, IllegalActionError, ReplayError, RulesError
from .events import Draw, Event, HandStart, Play, event_from_dict, event_to_dict
from .game import Deal, Game
from .rules import Rules
from .tiles import tile_set

REPLAY_FORMAT = "allfives-replay"
REPLAY_VERSION = 1


def game_record(game: Game, seed: Optional[int] = None) -> dict[str, Any]:
    """The JSON-ready replay record of ``game`` (finished or not)."""
    tiles = game.tiles
    pairs = tiles.pairs
    hands = []
    records = game.hand_records
    for i, rec in enumerate(records):
        end = records[i + 1].first_event if i + 1 < len(records) else len(game.events)
        hands.append(
            {
                "hand": rec.hand,
                "leader": rec.leader,
                "scores_before": list(rec.scores),
                "opening_drawer": rec.opening_drawer,
                "deal": {
                    "hands": [[list(pairs[t]) for t in hand] for hand in rec.hands],
                    "boneyard": [list(pairs[t]) for t in rec.boneyard],
                },
                "events": [event_to_dict(e, tiles) for e in game.events[rec.first_event:end]],
            }
        )
    return {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "rules": game.rules.to_dict(),
        "seed": seed,
        "hands": hands,
        "final_scores": list(game.scores),
        "winner": game.winner,
        "truncated": game.truncated,
        "over": game.over,
        "stop_after_hand": game.stop_after_hand,
    }


def save_replay(source: Union[Game, dict[str, Any]], path: Union[str, Path], seed: Optional[int] = None) -> Path:
    """Write a game (or a record) as JSON to ``path``."""
    record = game_record(source, seed) if isinstance(source, Game) else source
    path = Path(path)
    path.write_text(json.dumps(record, indent=1))
    return path


def read_record(source: Union[str, Path, dict[str, Any]]) -> dict[str, Any]:
    """Load a record from a dict, a JSON string or a file path, checking that it is ours."""
    if isinstance(source, dict):
        record = source
    else:
        text = str(source)
        if isinstance(source, Path) or not text.lstrip().startswith("{"):
            try:
                text = Path(source).read_text()
            except OSError as exc:
                raise ReplayError(f"cannot read replay file {str(source)!r}: {exc.strerror or exc}") from None
            except UnicodeDecodeError:
                raise ReplayError(f"{str(source)!r} is not a text file, so not an All Fives replay") from None
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"replay is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(record, dict) or record.get("format") != REPLAY_FORMAT:
        raise ReplayError(
            f"not an All Fives replay: expected a JSON object with \"format\": \"{REPLAY_FORMAT}\""
        )
    if record.get("version") != REPLAY_VERSION:
        raise ReplayError(
            f"replay version {record.get('version')!r} is not supported: this library reads version {REPLAY_VERSION}"
        )
    for key in ("rules", "hands"):
        if key not in record:
            raise ReplayError(f"replay lacks the field {key!r}")
    return record


def load_replay(source: Union[str, Path, dict[str, Any]]) -> Game:
    """Re-simulate a replay and return the resulting :class:`Game`; raise :class:`ReplayError` at the
    first event that does not follow from the rules, or at a summary field that contradicts them."""
    record = read_record(source)
    if not isinstance(record["rules"], dict):
        raise ReplayError(f"replay 'rules' must be an object of rules options, got {record['rules']!r}")
    try:
        rules = Rules.from_options(record["rules"])
    except (RulesError, TypeError, ValueError) as exc:
        raise ReplayError(f"replay rules are invalid: {exc}") from None
    tiles = tile_set(rules.max_pip)
    hands = record["hands"]
    if not isinstance(hands, list) or not hands:
        raise ReplayError("replay has no hands: 'hands' must be a non-empty list")
    deals = []
    flat: list[tuple[int, int, Event]] = []
    for h, hand in enumerate(hands, start=1):
        where = f"hand {h}"
        if not isinstance(hand, dict) or not isinstance(hand.get("deal"), dict) or not isinstance(hand.get("events"), list):
            raise ReplayError(f"{where}: expected an object with 'deal' and 'events'")
        try:
            deal = Deal.from_tiles(
                rules, hand["deal"].get("hands"), hand["deal"].get("boneyard"), hand.get("leader"), None,
                hand.get("opening_drawer"),
            )
        except (DealError, TypeError) as exc:
            raise ReplayError(f"{where}: invalid deal: {exc}") from None
        if deal.leader is None:
            raise ReplayError(f"{where}: the record lacks the leader")
        deals.append(deal)
        for i, data in enumerate(hand["events"]):
            flat.append((h, i, event_from_dict(data, tiles, f"{where}, event {i}")))
    first_scores = hands[0].get("scores_before")
    if first_scores is not None and (
        not isinstance(first_scores, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in first_scores)
    ):
        raise ReplayError(f"hand 1: scores_before must be a list of integers, got {first_scores!r}")
    stop_after_hand = record.get("stop_after_hand", False)
    if not isinstance(stop_after_hand, bool):
        raise ReplayError(f"stop_after_hand must be true or false, got {stop_after_hand!r}")
    try:
        game = Game(rules, 0, deals=deals, scores=first_scores, stop_after_hand=stop_after_hand, check_leaders=True)
    except DealError as exc:
        raise ReplayError(f"hand 1: {exc}") from None
    _replay_events(game, flat)
    _check_summary(game, record, hands)
    return game


def _check_summary(game: Game, record: dict[str, Any], hands: list[dict[str, Any]]) -> None:
    """The fields beside the events must agree with the re-simulated game."""
    for h, (hand, rec) in enumerate(zip(hands, game.hand_records), start=1):
        if "scores_before" in hand and hand["scores_before"] != list(rec.scores):
            raise ReplayError(f"hand {h}: scores_before {hand['scores_before']} differ from the re-simulated {list(rec.scores)}")
    if len(hands) != len(game.hand_records):
        raise ReplayError(f"the record lists {len(hands)} hands but its events play {len(game.hand_records)}")
    expected = {
        "over": game.over,
        "winner": game.winner,
        "truncated": game.truncated,
        "final_scores": list(game.scores),
    }
    for key, value in expected.items():
        if key in record and record[key] != value:
            name = key.replace("_", " ")
            raise ReplayError(f"the record's {name} ({record[key]!r}) does not match what its events give ({value!r})")


def _replay_events(game: Game, flat: list[tuple[int, int, Event]]) -> None:
    tiles = game.tiles
    gi = 0
    i = 0
    while i < len(flat):
        while gi < len(game.events) and i < len(flat):
            h, k, recorded = flat[i]
            produced = game.events[gi]
            if produced != recorded:
                raise ReplayError(
                    f"hand {h}, event {k}: the record has {_describe(recorded, tiles)}, but the rules give "
                    f"{_describe(produced, tiles)}"
                )
            gi += 1
            i += 1
        if i >= len(flat):
            break
        h, k, recorded = flat[i]
        if game.over:
            raise ReplayError(f"hand {h}, event {k}: {_describe(recorded, tiles)} comes after the game is over")
        if type(recorded) is Play:
            action = recorded.tile * 4 + recorded.slot
        elif type(recorded) is Draw and not recorded.forced and game.draw_action >= 0:
            action = game.draw_action
        else:
            raise ReplayError(
                f"hand {h}, event {k}: the record has {_describe(recorded, tiles)}, but seat {game.current} is to "
                f"choose a move (legal: {', '.join(game.action_names())})"
            )
        if (type(recorded) is Play and recorded.seat != game.current) or action not in game.legal:
            raise ReplayError(
                f"hand {h}, event {k}: {_describe(recorded, tiles)} is not legal; seat {game.current} is to act "
                f"with {', '.join(game.action_names())}"
            )
        try:
            game.step(action)
        except DealError as exc:  # the next hand's recorded deal contradicts the rules
            raise ReplayError(str(exc)) from None
        except IllegalActionError as exc:
            raise ReplayError(f"hand {h}, event {k}: {exc}") from None
    if gi < len(game.events):
        h, k = (flat[-1][0], flat[-1][1]) if flat else (1, -1)
        raise ReplayError(
            f"hand {h}: the record ends after event {k}, but the rules go on with {_describe(game.events[gi], tiles)}"
        )


def _describe(event: Event, tiles: Any) -> str:
    if type(event) is Play:
        return (f"play {action_name(event.tile * 4 + event.slot, tiles)} by seat {event.seat} "
                f"(count {event.count}, points {event.points})")
    if type(event) is Draw:
        tile = tiles.name(event.tile) if event.tile >= 0 else "?"
        return f"draw {tile} by seat {event.seat}{' (forced)' if event.forced else ''}"
    if type(event) is HandStart:
        return f"hand {event.hand} start (leader {event.leader}, scores {list(event.scores)})"
    fields = ", ".join(f"{name}={list(v) if isinstance(v, tuple) else v}" for name, v in zip(event._fields, event))
    return f"{event.kind} ({fields})"
