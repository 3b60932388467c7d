"""Bench cards: the JSON a bench run writes, read back and checked, and shown as a table.

A card says everything that makes its numbers comparable: the protocol and suite (version and hash), the
agent's spec and its policy file's SHA-256, the package version, the rules and the move time limit, and per
opponent the games, the win rate and points per hand with 95% intervals; then the one rating on the fixed
scale with its bootstrap interval, the agent's think time per move (median and 99th percentile) and where
and when it was measured. :func:`read_card` refuses anything else, so a leaderboard never shows a file that
is not a card of the protocol it was built for.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Union

from ..core.errors import short_repr
from ..regular_file import read_json_file
from .errors import BenchError
from .protocol import PROTOCOL_VERSION, TRACKS

__all__ = ["CARD_FORMAT", "CARD_VERSION", "check_leaderboard_card", "format_card", "read_card", "write_card"]

CARD_FORMAT = "allfives-bench-card"
CARD_VERSION = 1
_MAX_BYTES = 1 << 22
# what each opponent's row must hold
_ROW_NUMBERS = ("games", "wins", "draws", "losses", "win_rate", "even_win_rate", "points_per_hand")


def write_card(card: Mapping[str, Any], path: Union[str, Path]) -> Path:
    """Write ``card`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def _number(card_path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BenchError(f"{card_path}: {where} is {short_repr(value)}, not a finite number; not a bench card")
    return float(value)


def read_card(path: Union[str, Path]) -> dict[str, Any]:
    """A bench card read back from ``path``, refused (naming the file and what is wrong) unless it is a
    complete card of a known track, in this package's card format."""
    where = Path(path)
    card = read_json_file(where, _MAX_BYTES, BenchError, "bench card")
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        raise BenchError(f"{where}: not a bench card (no \"format\": \"{CARD_FORMAT}\")")
    if card.get("version") != CARD_VERSION:
        raise BenchError(f"{where}: bench card version {short_repr(card.get('version'))} is not supported "
                         f"(only {CARD_VERSION})")
    if card.get("track") not in TRACKS:
        raise BenchError(f"{where}: track {short_repr(card.get('track'))} is not a bench track ({', '.join(TRACKS)})")
    if not isinstance(card.get("protocol"), int) or isinstance(card.get("protocol"), bool):
        raise BenchError(f"{where}: protocol {short_repr(card.get('protocol'))} is not a protocol version")
    if not isinstance(card.get("agent"), str) or not isinstance(card.get("quick"), bool):
        raise BenchError(f"{where}: a bench card names its agent (a string) and says whether it is quick")
    rows = card.get("opponents")
    if not isinstance(rows, list) or not rows:
        raise BenchError(f"{where}: a bench card lists its opponents' results")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("opponent"), str):
            raise BenchError(f"{where}: opponent row {i} is not a result naming its opponent")
        for key in _ROW_NUMBERS:
            _number(where, f"opponents[{i}].{key}", row.get(key))
    rating = card.get("rating")
    if not isinstance(rating, dict):
        raise BenchError(f"{where}: a bench card holds its rating")
    _number(where, "rating.elo", rating.get("elo"))
    suite = card.get("suite")
    if not isinstance(suite, dict) or not isinstance(suite.get("sha256"), str):
        raise BenchError(f"{where}: a bench card names its deal suite and the suite's SHA-256")
    return card


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_card(card: Mapping[str, Any]) -> str:
    """The card as a readable table."""
    kind = f"quick: the first {card['suite']['deals']} deals" if card["quick"] else f"{card['suite']['deals']} deals"
    lines = [f"bench card: {card['agent']}, track {card['track']}, protocol {card['protocol']} ({kind})"]
    if card.get("policy"):
        lines.append(f"policy file: {card['policy']['file']} (SHA-256 {card['policy']['sha256'][:16]}...)")
    head = f"{'opponent':<20} {'games':>6}  {'win rate (95% CI)':<22} {'points/hand (95% CI)':<22}"
    lines += ["", head, "-" * len(head)]
    for row in card["opponents"]:
        lo, hi = row["win_rate_ci"]
        plo, phi = row["points_per_hand_ci"]
        lines.append(f"{row['opponent']:<20} {row['games']:>6}  {_pct(row['win_rate']) + f' [{100 * lo:.1f}, {100 * hi:.1f}]':<22} "
                     f"{row['points_per_hand']:+.2f} [{plo:+.2f}, {phi:+.2f}]")
    rating = card["rating"]
    lines.append("")
    lines.append(f"rating: {rating['elo']:.0f} [{rating['ci'][0]:.0f}, {rating['ci'][1]:.0f}] "
                 f"(Elo scale, random = 0; protocol {card['protocol']} anchors)")
    think = card["think_ms"]
    lines.append(f"think time per move: median {think['median']:.3g} ms, p99 {think['p99']:.3g} ms "
                 f"({think['moves']:,} moves)")
    if card["quick"]:
        lines.append("(a quick card is a sanity check: it never enters a leaderboard)")
    return "\n".join(lines)


def check_leaderboard_card(card: Mapping[str, Any], path: Union[str, Path], protocol: int = PROTOCOL_VERSION) -> None:
    """Refuse a card that must not join protocol ``protocol``'s leaderboard: another protocol or suite, or quick."""
    from .suites import SUITE_SHA256  # here: suites imports the engine, and reading a card needs none of it

    if card["protocol"] != protocol:
        raise BenchError(f"{path}: a card of protocol {card['protocol']} cannot join the protocol {protocol} "
                         "leaderboard (their deals, opponents and scale differ)")
    if card["suite"]["sha256"] != SUITE_SHA256[card["track"]]:
        raise BenchError(f"{path}: its deal suite (SHA-256 {short_repr(card['suite']['sha256'])}) is not protocol "
                         f"{protocol}'s {card['track']} suite; it cannot join the leaderboard")
    if card["quick"]:
        raise BenchError(f"{path}: a quick card (the first deals only) cannot join the leaderboard; run the full bench")
