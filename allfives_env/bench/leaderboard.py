"""A leaderboard from bench cards: one protocol, full runs only, one table per track, best rating first.

:func:`load_leaderboard` reads every card of a folder (``benchmarks/results/bench/`` for the docs' page) and
refuses a card of another protocol or suite, or a quick one, naming its file: a leaderboard is a list of
numbers measured the same way, or it is nothing. Two cards of the same agent and policy on the same track
are refused too (which one would count?).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from .card import check_leaderboard_card, read_card
from .errors import BenchError
from .protocol import PROTOCOL_VERSION, TRACKS

__all__ = ["load_leaderboard"]


def load_leaderboard(folder: Union[str, Path], protocol: int = PROTOCOL_VERSION) -> dict[str, list[dict[str, Any]]]:
    """The cards of ``folder`` (``*.json``) per track, each track's best rating first."""
    where = Path(folder)
    if not where.is_dir():
        raise BenchError(f"{where}: not a folder of bench cards")
    tracks: dict[str, list[dict[str, Any]]] = {t: [] for t in TRACKS}
    seen: dict[tuple[str, str, Any], Path] = {}
    for path in sorted(where.glob("*.json")):
        card = read_card(path)
        check_leaderboard_card(card, path, protocol)
        key = (card["track"], card["agent"], (card.get("policy") or {}).get("sha256"))
        if key in seen:
            raise BenchError(f"{path} and {seen[key]} are both cards of {card['agent']} on track {card['track']}; "
                             "keep one")
        seen[key] = path
        tracks[card["track"]].append(card)
    for cards in tracks.values():
        cards.sort(key=lambda c: -c["rating"]["elo"])
    return tracks

