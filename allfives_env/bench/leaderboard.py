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

__all__ = ["leaderboard_rows", "load_leaderboard"]


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
        card["_file"] = path.name
        tracks[card["track"]].append(card)
    for cards in tracks.values():
        cards.sort(key=lambda c: -c["rating"]["elo"])
    return tracks


def leaderboard_rows(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per card: the agent, the rating and its interval, the win rate against each opponent, think time."""
    rows = []
    for card in cards:
        rows.append({
            "agent": card["agent"], "rating": card["rating"]["elo"], "rating_ci": card["rating"]["ci"],
            "win_rates": {row["opponent"]: (row["win_rate"], row["win_rate_ci"]) for row in card["opponents"]},
            "think_ms": card["think_ms"], "date": card["run"]["date"],
            "machines": sorted({f"{p['machine']} ({p['cpus']} CPUs, {p['python']})" for p in card["run"]["parts"]}),
            "package_version": card["package_version"], "file": card.get("_file"),
        })
    return rows
