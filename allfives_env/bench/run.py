"""Running the bench: :func:`run_bench` plays a track's suite against every opponent and writes the card.

Opponents are played one after another, each over the suite's deals (in a pool of ``processes`` workers),
so that a failure names its opponent and the progress bar says who is being played. Every finished deal is
journalled (:mod:`.journal`) when the card goes to a file, so a run that stops resumes where it stopped.
An agent that crashes or exceeds the move time limit ends the run with :class:`BenchError` naming the
opponent, the deal and the move; nothing is written as a card until every deal is in.
"""

from __future__ import annotations

import datetime
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

from .. import __version__
from ..agents import make_agent
from ..agents.policy import policy_file_of
from ..core.errors import AllFivesError, short_repr
from ..core.rules import Rules
from ..evaluation.checks import check_agents, check_run_args
from ..evaluation.results import GameRecord, first_score, summarize_match
from ..evaluation.runner import play_sets
from ..evaluation.scheduling import SetDeal, duplicate_orders
from . import protocol
from .card import CARD_FORMAT, CARD_VERSION, read_card, write_card
from .errors import BenchError
from .journal import Journal, journal_path
from .rating import agent_rating
from .suites import SUITE_SEED, Suite, load_suite

__all__ = ["BOOTSTRAP", "run_bench"]

#: Bootstrap resamples of the deals behind a card's rating interval.
BOOTSTRAP = 2000


def _agent_moves(records: list[GameRecord]) -> list[float]:
    """The benched agent's (agent index 0's) think time of each of its moves in ``records``, in every seat it
    held (both partners' seats in 4p)."""
    moves: list[float] = []
    for record in records:
        per_seat = record.move_seconds or []
        for seat, who in enumerate(record.seats):
            if who == 0 and seat < len(per_seat):
                moves.extend(per_seat[seat])
    return moves


def _stopped(exc: AllFivesError, agent: str, opponent: str, suite: Suite, resumable: bool) -> BenchError:
    """The error that ends a run: what went wrong, against whom, on which deal of the suite, and whether the
    finished deals are kept."""
    deal = ""
    seeds = getattr(exc, "seeds", None)
    if isinstance(seeds, dict):
        found = [d.index for d in suite.deals if d.game_seed == seeds.get("game") and d.deal_seed == seeds.get("deal")]
        if found:
            deal = f" on deal {found[0]} of suite {suite.track.suite_name}"
    kept = (" The finished deals are journalled: run the same command again to resume." if resumable
            else " No card was written.")
    return BenchError(f"the bench of {agent} stopped against {opponent}{deal}: {exc}.{kept}")


def _bootstrap_rating(per_set: np.ndarray, games: np.ndarray, anchors: list[float], k: int) -> tuple[float, float]:
    """95% percentile interval of the rating over resamples of the deals (the same deals for every opponent)."""
    deals = per_set.shape[1]
    rng = np.random.default_rng(np.random.SeedSequence(SUITE_SEED, spawn_key=(2**32 - 1,)))
    counts = rng.multinomial(deals, np.full(deals, 1.0 / deals), size=BOOTSTRAP).astype(float)  # (B, deals)
    ratings = agent_rating(counts @ per_set.T, counts @ games.T, anchors, k)
    low, high = np.percentile(ratings, [2.5, 97.5])
    return float(low), float(high)


def run_bench(agent: str, track: str = "2p", *, quick: bool = False, json_path: Optional[Union[str, Path]] = None,
              processes: int = 1, progress: bool = True, mp_context: Optional[str] = None,
              log: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
    """Bench ``agent`` (a spec string) on ``track`` and return its card; with ``json_path`` also write the card
    there, journalling the run beside it (``json_path + ".journal"``) so that running it again resumes.

    ``quick`` plays the suite's first deals only (a sanity check; the card says so). The numbers depend on the
    agent and the suite only, never on ``processes`` (think times excepted)."""
    t = protocol.TRACKS.get(track) if isinstance(track, str) else None
    if t is None:
        raise BenchError(f"track={short_repr(track)} is not a bench track; the tracks are {', '.join(protocol.TRACKS)}")
    check_run_args(processes, 1, "games")
    if not isinstance(agent, str) or not agent.strip():
        raise BenchError(f"agent={short_repr(agent)}: give an agent spec string such as 'expert' or "
                         "'ppo:path=runs/default/policy.npz'")
    rules = Rules.from_options(dict(t.rules))
    try:
        (spec,) = check_agents([agent], rules)
    except AllFivesError as exc:
        raise BenchError(f"agent {agent!r} cannot play track {t.name}: {exc}") from None
    anchors = protocol.ANCHORS[t.name]
    if set(anchors) != set(protocol.OPPONENTS):
        raise BenchError(f"protocol {protocol.PROTOCOL_VERSION} has no anchors for every opponent of track {t.name}")
    suite = load_suite(t.name)
    deals: tuple[SetDeal, ...] = suite.deals[:t.quick_sets if quick else t.sets]
    policy = policy_file_of(make_agent(spec))
    card_path = None if json_path is None else Path(json_path)
    header = {"protocol": protocol.PROTOCOL_VERSION, "track": t.name, "quick": quick, "agent": spec,
              "policy_sha256": None if policy is None else policy["sha256"], "suite_sha256": suite.sha256}
    say = log or (lambda _text: None)
    if card_path is not None and (card_path.exists() or card_path.is_symlink()):
        done = _finished_card(card_path, header)
        say(f"{card_path} already holds this run's card: nothing to play (delete it to bench again)")
        return done
    journal = Journal(None if card_path is None else journal_path(card_path), header)
    if journal.finished:
        say(f"resuming from {journal.path}: {len(journal.finished)} of {len(deals) * len(protocol.OPPONENTS)} "
            "deals already played")
    orders = duplicate_orders(rules, 2)
    journal.add_part(_where(processes))
    started = time.perf_counter()
    completed = False
    try:
        results: dict[str, list[GameRecord]] = {}
        for opponent in protocol.OPPONENTS:
            todo = [d for d in deals if (opponent, d.index) not in journal.finished]

            def note(_m: int, deal: SetDeal, records: list[GameRecord], opponent: str = opponent) -> None:
                journal.add(opponent, deal.index, records, _agent_moves(records))

            try:
                play_sets(rules, [((spec, opponent), orders)], todo, processes, progress, f"{spec} vs {opponent}",
                          mp_context, protocol.MOVE_TIME_LIMIT, move_times=True, on_set=note)
            except BenchError:
                raise
            except AllFivesError as exc:  # an agent's error or time limit, a worker that died: finished deals are kept
                raise _stopped(exc, spec, opponent, suite, card_path is not None) from None
            results[opponent] = [r for d in deals for r in journal.finished[(opponent, d.index)][0]]
        card = _card(spec, t, quick, suite, deals, rules, orders, policy, results, journal, anchors,
                     time.perf_counter() - started)
        if card_path is not None:
            write_card(card, card_path)
        completed = True
        return card
    finally:
        journal.close(delete=completed)


def _finished_card(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    """The complete card at ``path`` when it is this run's (same protocol, track, quick, agent, policy file and
    suite); any other file there is refused rather than overwritten."""
    try:
        card = read_card(path)
    except BenchError as exc:
        raise BenchError(f"--json {path} exists and is not a bench card of this run ({exc}); choose another file "
                         "or delete it") from None
    found = {"protocol": card["protocol"], "track": card["track"], "quick": card["quick"], "agent": card["agent"],
             "policy_sha256": (card.get("policy") or {}).get("sha256"), "suite_sha256": card["suite"]["sha256"]}
    for key, value in header.items():
        if found[key] != value:
            raise BenchError(f"{path} holds the card of another bench run: its {key} is {short_repr(found[key])}, "
                             f"this run's is {short_repr(value)}; choose another --json file, or delete it")
    return card


def _card(spec: str, t: protocol.Track, quick: bool, suite: Suite, deals: tuple[SetDeal, ...], rules: Rules,
          orders: list[tuple[int, ...]], policy: Optional[dict[str, str]], results: dict[str, list[GameRecord]],
          journal: Journal, anchors: dict[str, float], seconds: float) -> dict[str, Any]:
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    rows = []
    per_set = np.zeros((len(protocol.OPPONENTS), len(deals)))
    games = np.zeros_like(per_set)
    position = {d.index: i for i, d in enumerate(deals)}
    for o, opponent in enumerate(protocol.OPPONENTS):
        records = results[opponent]
        match = summarize_match([spec, opponent], rules, 0, False, orders, records)
        for r in records:
            per_set[o, position[r.set_index]] += first_score(r, side_of)
            games[o, position[r.set_index]] += 1
        rows.append({"opponent": opponent, "games": match.games, "wins": match.wins, "draws": match.draws,
                     "losses": match.losses, "win_rate": match.win_rate, "win_rate_ci": list(match.win_rate_ci),
                     "even_win_rate": match.even_win_rate, "points_per_hand": match.points_per_hand,
                     "points_per_hand_ci": list(match.points_per_hand_ci), "mean_hands": match.mean_hands})
    anchor_list = [anchors[o] for o in protocol.OPPONENTS]
    elo = float(agent_rating(per_set.sum(axis=1), games.sum(axis=1), anchor_list, t.opposing_sides))
    ci = _bootstrap_rating(per_set, games, anchor_list, t.opposing_sides)
    moves = np.array([m for o in protocol.OPPONENTS for d in deals for m in journal.finished[(o, d.index)][1]])
    return {
        "format": CARD_FORMAT, "version": CARD_VERSION, "protocol": protocol.PROTOCOL_VERSION, "track": t.name,
        "quick": quick, "agent": spec, "policy": policy,
        "suite": {"name": t.suite_name, "sha256": suite.sha256, "deals": len(deals)},
        "package_version": __version__, "rules": rules.to_dict(), "move_time_limit": protocol.MOVE_TIME_LIMIT,
        "opponents": rows,
        "rating": {"elo": elo, "ci": list(ci), "bootstrap": BOOTSTRAP, "anchors": dict(anchors),
                   "scale": "Elo, random = 0", "opposing_sides": t.opposing_sides},
        "think_ms": {"median": float(np.median(moves)) * 1e3 if moves.size else 0.0,
                     "p99": float(np.percentile(moves, 99)) * 1e3 if moves.size else 0.0, "moves": int(moves.size)},
        # parts: each part of a resumed run, where it was played; seconds: the last part's wall time
        "run": {"date": journal.parts[-1]["date"], "seconds": round(seconds, 1), "parts": journal.parts},
    }


def _where(processes: int) -> dict[str, Any]:
    """Where a part of a run is played: the date, the machine, Python, the CPUs it may use, its processes."""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "machine": platform.machine(),
            "python": f"{platform.python_implementation()} {platform.python_version()}", "cpus": _cpus(),
            "processes": processes}


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
