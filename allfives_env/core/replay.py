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
from .errors import DealError, IllegalActionError, ReplayError, RulesError, SeedError, short_repr
from .events import Draw, Event, HandStart, Play, event_from_dict, event_to_dict
from .deal import Deal
from .game import Game
from .rules import Rules
from .seeds import check_seed
from .tiles import tile_set

REPLAY_FORMAT = "allfives-replay"
REPLAY_VERSION = 1


def _recorded_seed(seed: Any) -> Optional[int]:
    """The seed a replay may hold, as a plain int (numpy integers accepted), or None: the library's one seed
    rule (:func:`~allfives_env.core.seeds.check_seed`: an integer from 0 to 2**63-1), applied both when a
    replay is written and when it is read, so that every replay written loads. :class:`SeedError` otherwise."""
    return check_seed(seed, "replay seed")


def game_record(game: Game, seed: Optional[int] = None) -> dict[str, Any]:
    """The JSON-ready replay record of ``game`` (finished or not); ``seed`` as :func:`save_replay` takes it."""
    seed = _recorded_seed(seed)
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
                **({"leader_fixed": True} if rec.leader_fixed else {}),
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
    """Write a game (or a record of :func:`game_record`) as JSON to ``path``.

    ``seed`` (with a game; a record carries its own ``"seed"``) is None or an integer from 0 to 2**63-1,
    numpy integers included (written as plain integers): exactly the seeds :func:`load_replay` reads back.
    Anything else is refused before the file is touched -- :class:`SeedError` for a seed,
    :class:`ReplayError` for a source that is not a game or a JSON-ready record -- so no replay is ever
    written that would not load for its seed.
    """
    if isinstance(source, Game):
        record = game_record(source, seed)
    elif isinstance(source, dict):
        if seed is not None:
            raise ReplayError(f"seed={short_repr(seed)} was given with a record, which carries its own \"seed\"; "
                              "pass seed= only with a Game")
        record = {**source, "seed": _recorded_seed(source.get("seed"))}
    else:
        raise ReplayError(f"a replay is saved from a Game or a record dict, got {type(source).__name__} "
                          f"{short_repr(source)}")
    try:
        text = json.dumps(record, indent=1)
    except (TypeError, ValueError, RecursionError) as exc:  # numpy values, a cycle, nesting too deep
        raise ReplayError(f"the record cannot be written as JSON ({short_repr(str(exc))}); a record holds JSON "
                          "types only (dicts, lists, strings, Python ints, bools, null)") from None
    path = Path(path)
    path.write_text(text)
    return path


#: The largest replay file read: a 200-hand 4-player game (the default max_hands cap) saves to under 1 MB
#: (0.94 MB at most over 30 random games, target 10,000), so this leaves room for any real game
#: while a stream without end (``/dev/zero``) or a giant file is refused instead of filling memory.
MAX_REPLAY_BYTES = 64 * 1024 * 1024
#: The most digits an integer of a replay may have: replays hold seats, tiles, counts and scores only.
_MAX_INT_DIGITS = 24


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ReplayError(f"replay holds an integer of {len(text)} digits; replays hold small integers only")
    return int(text)


def _refuse_float(text: str) -> float:
    raise ReplayError(f"replay holds the number {text[:40]}; replays hold integers only")


def _read_text(path: Path) -> str:
    """The file's text, read with a size limit, as UTF-8; every failure is a :class:`ReplayError`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REPLAY_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise ReplayError(f"cannot read replay file {short_repr(str(path))}: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > MAX_REPLAY_BYTES:
        raise ReplayError(
            f"{str(path)!r} is larger than {MAX_REPLAY_BYTES // (1024 * 1024)} MiB, far more than any All Fives "
            "replay; not read"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"{str(path)!r} is not a UTF-8 text file, so not an All Fives replay") from None


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL byte
        return False


def read_record(source: Union[str, Path, dict[str, Any]]) -> dict[str, Any]:
    """Load a record from a dict, a JSON string or a file path, checking that it is ours.

    A string names a file when such a file exists (even one whose name starts with ``{``), and is read
    as JSON text otherwise when it starts with ``{``. Files are read up to :data:`MAX_REPLAY_BYTES`.
    """
    if isinstance(source, dict):
        record: Any = source
    elif isinstance(source, (str, Path)):
        text = str(source)
        if isinstance(source, str) and text.lstrip().startswith("{") and not _is_file(text):
            pass  # JSON text
        else:
            text = _read_text(Path(source))
        try:
            record = json.loads(text, parse_int=_parse_int, parse_float=_refuse_float, parse_constant=_refuse_float)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"replay is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        except RecursionError:
            raise ReplayError("replay JSON is nested too deeply to be an All Fives replay") from None
        except ValueError as exc:  # the number checks above, or a decoder limit
            raise ReplayError(str(exc) if isinstance(exc, ReplayError) else f"replay is not valid JSON: {exc}") from None
    else:
        raise ReplayError(
            f"a replay is a file path, JSON text or a record dict, got {type(source).__name__} {short_repr(source)}"
        )
    if not isinstance(record, dict) or record.get("format") != REPLAY_FORMAT:
        raise ReplayError(
            f"not an All Fives replay: expected a JSON object with \"format\": \"{REPLAY_FORMAT}\""
        )
    version = record.get("version")
    if type(version) is not int or version != REPLAY_VERSION:
        raise ReplayError(
            f"replay version {short_repr(version)} is not supported: this library reads version {REPLAY_VERSION} "
            "(the integer)"
        )
    for key in ("rules", "hands"):
        if key not in record:
            raise ReplayError(f"replay lacks the field {key!r}")
    try:
        _recorded_seed(record.get("seed"))
    except SeedError as exc:
        raise ReplayError(str(exc)) from None
    return record


def load_replay(source: Union[str, Path, dict[str, Any]]) -> Game:
    """Re-simulate a replay and return the resulting :class:`Game`; raise :class:`ReplayError` at the
    first event that does not follow from the rules, or at a summary field that contradicts them."""
    record = read_record(source)
    if not isinstance(record["rules"], dict):
        raise ReplayError(f"replay 'rules' must be an object of rules options, got {short_repr(record['rules'])}")
    try:
        rules = Rules.from_options(record["rules"])
    except RulesError as exc:  # Rules refuses every bad value with a RulesError (a property test holds it to that)
        raise ReplayError(f"replay rules are invalid: {exc}") from None
    tiles = tile_set(rules.max_pip)
    hands = record["hands"]
    if not isinstance(hands, list) or not hands:
        raise ReplayError("replay has no hands: 'hands' must be a non-empty list")
    deals = []
    flat: list[tuple[int, int, Event]] = []
    for h, hand in enumerate(hands, start=1):
        deals.append(_read_deal(rules, hand, h))
        flat.extend((h, i, event_from_dict(data, tiles, f"hand {h}, event {i}")) for i, data in enumerate(hand["events"]))
    first_scores = hands[0].get("scores_before")
    stop_after_hand = record.get("stop_after_hand", False)
    if not isinstance(stop_after_hand, bool):
        raise ReplayError(f"stop_after_hand must be true or false, got {short_repr(stop_after_hand)}")
    try:
        game = Game(rules, 0, deals=deals, scores=first_scores, stop_after_hand=stop_after_hand, check_leaders=True)
    except DealError as exc:
        raise ReplayError(_in_hand(1, exc)) from None
    _replay_events(game, flat)
    _check_summary(game, record, hands)
    return game


def _in_hand(hand: int, exc: Exception) -> str:
    """An engine message placed in a hand, without saying the hand twice."""
    text = str(exc)
    return text if text.startswith("hand ") else f"hand {hand}: {text}"


def _read_deal(rules: Rules, hand: Any, h: int) -> Deal:
    """Hand ``h`` of a record as a :class:`Deal`, with its fields checked."""
    where = f"hand {h}"
    if not isinstance(hand, dict) or not isinstance(hand.get("deal"), dict) or not isinstance(hand.get("events"), list):
        raise ReplayError(f"{where}: expected an object with 'deal' and 'events'")
    if hand.get("hand") != h or type(hand.get("hand")) is not int:
        raise ReplayError(f"{where}: its 'hand' number is {short_repr(hand.get('hand'))}; hands are numbered 1, 2, ... in order")
    scores = hand.get("scores_before")
    if scores is not None and (not isinstance(scores, list) or not all(type(x) is int for x in scores)):
        raise ReplayError(f"{where}: scores_before must be a list of integers, got {short_repr(scores)}")
    fixed = hand.get("leader_fixed", False)
    if not isinstance(fixed, bool):
        raise ReplayError(f"{where}: leader_fixed must be true or false, got {short_repr(fixed)}")
    try:
        deal = Deal.from_tiles(
            rules, hand["deal"].get("hands"), hand["deal"].get("boneyard"), hand.get("leader"), None,
            hand.get("opening_drawer"),
        )
    except DealError as exc:
        raise ReplayError(f"{where}: invalid deal: {exc}") from None
    if deal.leader is None:
        raise ReplayError(f"{where}: the record lacks the leader")
    return deal._replace(leader_fixed=fixed)


def _check_summary(game: Game, record: dict[str, Any], hands: list[dict[str, Any]]) -> None:
    """The fields beside the events must agree with the re-simulated game, and each hand's events must
    be the ones that hand produced (not merely the right sequence split at other places)."""
    if len(hands) != len(game.hand_records):
        raise ReplayError(f"the record lists {len(hands)} hands but its events play {len(game.hand_records)}")
    records = game.hand_records
    for h, (hand, rec) in enumerate(zip(hands, records), start=1):
        if "scores_before" in hand and hand["scores_before"] != list(rec.scores):
            raise ReplayError(
                f"hand {h}: scores_before {short_repr(hand['scores_before'])} differ from the re-simulated {list(rec.scores)}"
            )
        end = records[h].first_event if h < len(records) else len(game.events)
        if len(hand["events"]) != end - rec.first_event:
            raise ReplayError(
                f"hand {h}: the record lists {len(hand['events'])} events for this hand, but it has "
                f"{end - rec.first_event}; events are grouped under the wrong hand"
            )
        if hand.get("leader_fixed", False) != rec.leader_fixed:
            raise ReplayError(f"hand {h}: leader_fixed is set, but the leader is the one the rules give")
    expected = {
        "over": game.over,
        "winner": game.winner,
        "truncated": game.truncated,
        "final_scores": list(game.scores),
    }
    for key, value in expected.items():
        if key in record and (record[key] != value or type(record[key]) is not type(value)):
            name = key.replace("_", " ")
            raise ReplayError(f"the record's {name} ({short_repr(record[key])}) does not match what its events give ({value!r})")


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
            raise ReplayError(_in_hand(h, exc)) from None
        except IllegalActionError as exc:
            raise ReplayError(f"hand {h}, event {k}: {exc}") from None
    if gi < len(game.events):
        h, k = (flat[-1][0], flat[-1][1]) if flat else (1, -1)
        raise ReplayError(
            f"hand {h}: the record ends after event {k}, but the rules go on with {_describe(game.events[gi], tiles)}"
        )


def _describe(event: Event, tiles: Any) -> str:
    """An event in words for an error message; numbers from the record are shown bounded (they may be
    anything a hostile file holds)."""
    n = short_repr
    if type(event) is Play:
        return (f"play {action_name(event.tile * 4 + event.slot, tiles)} by seat {n(event.seat)} "
                f"(count {n(event.count)}, points {n(event.points)})")
    if type(event) is Draw:
        tile = tiles.name(event.tile) if event.tile >= 0 else "?"
        return f"draw {tile} by seat {n(event.seat)}{' (forced)' if event.forced else ''}"
    if type(event) is HandStart:
        return f"hand {n(event.hand)} start (leader {n(event.leader)}, scores {n(list(event.scores))})"
    fields = ", ".join(f"{name}={n(list(v) if isinstance(v, tuple) else v)}" for name, v in zip(event._fields, event))
    return f"{event.kind} ({fields})"
