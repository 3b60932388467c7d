"""Persistence: results saved as JSON or CSV and loaded back, and sample games of a match-up saved as replays."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from ..agents import make_agent
from ..core.errors import short_repr
from ..core.game import Game
from ..core.replay import game_record, save_replay
from ..match import play_game
from ..core.seeds import check_seed
from .checks import AgentLike, RulesLike, check_agents, check_run_args, resolve_rules
from .errors import EvaluationError
from .results import MatchResult, Result, TournamentResult
from .scheduling import agent_seeds, duplicate_orders, set_seeds

RESULT_FORMAT = "allfives-evaluation"
RESULT_VERSION = 1


def save_json(result: Result, path: Union[str, Path], include_games: bool = True) -> Path:
    """Write ``result`` as JSON (with its per-game records unless ``include_games=False``)."""
    kind = "match" if isinstance(result, MatchResult) else "tournament"
    doc = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "kind": kind, "result": result.to_dict(include_games)}
    path = Path(path)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def load_result(path: Union[str, Path]) -> Result:
    """Read a result written by :func:`save_json`."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise EvaluationError(f"{path}: not a text file, so not an All Fives evaluation result") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5000-digit number, nesting too deep
        raise EvaluationError(f"{path}: not JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != RESULT_FORMAT:
        raise EvaluationError(f"{path}: not an All Fives evaluation result (no \"format\": \"{RESULT_FORMAT}\")")
    if doc.get("version") != RESULT_VERSION:
        raise EvaluationError(f"{path}: result version {doc.get('version')!r} is not supported (only {RESULT_VERSION})")
    try:
        if doc.get("kind") == "match":
            return _checked_match(MatchResult.from_dict(doc["result"]))
        if doc.get("kind") == "tournament":
            return _checked_tournament(TournamentResult.from_dict(doc["result"]))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError) as exc:
        raise EvaluationError(f"{path}: corrupt evaluation result ({type(exc).__name__}: {exc})") from None
    raise EvaluationError(f"{path}: unknown result kind {doc.get('kind')!r} (expected 'match' or 'tournament')")


def _checked_match(result: MatchResult) -> MatchResult:
    """``result`` if its fields have the shapes a saved match-up has, else a ValueError saying which."""
    if not result.agents or not all(isinstance(a, str) for a in result.agents):
        raise ValueError(f"agents must be a list of spec strings, got {short_repr(result.agents)}")
    for name in ("win_rate_ci", "points_per_hand_ci"):
        if len(getattr(result, name)) != 2:
            raise ValueError(f"{name} must be [low, high]")
    return result


def _checked_tournament(result: TournamentResult) -> TournamentResult:
    """``result`` if its tables fit its agents and its match-ups are well formed, else a ValueError."""
    n = len(result.agents)
    for name in ("ratings", "rating_ci", "win_rates", "scores", "games"):
        if len(getattr(result, name)) != n:
            raise ValueError(f"{len(getattr(result, name))} {name} for {n} agents")
    if any(len(row) != n for row in result.win_rates):
        raise ValueError(f"win_rates is not a {n} x {n} matrix")
    for m in result.matches:
        _checked_match(m)
    return result


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)


def save_csv(result: Result, path: Union[str, Path]) -> list[Path]:
    """Write the tables of ``result`` as CSV; returns the files written.

    A match-up: one summary row at ``path``. A tournament: the rating table at ``path``, the pairwise
    win-rate matrix at ``<stem>-matrix.csv`` and one row per pair at ``<stem>-pairs.csv``.
    """
    path = Path(path)
    if isinstance(result, MatchResult):
        _write_csv(path, [result.summary_row()])
        return [path]
    _write_csv(path, result.rating_table())
    matrix = path.with_name(path.stem + "-matrix" + path.suffix)
    _write_csv(matrix, [
        {"agent": a, **{b: ("" if x is None else x) for b, x in zip(result.agents, row)}}
        for a, row in zip(result.agents, result.win_rates)
    ])
    pairs = path.with_name(path.stem + "-pairs" + path.suffix)
    _write_csv(pairs, [m.summary_row() for m in result.matches])
    return [path, matrix, pairs]


def save_sample_games(
    agents: Sequence[AgentLike],
    rules: RulesLike,
    out_dir: Union[str, Path],
    count: int = 2,
    *,
    num_players: Optional[int] = None,
    seed: int = 0,
    balanced: bool = False,
) -> list[Path]:
    """Replay files of the first ``count`` games that :func:`~allfives_env.evaluation.evaluate` with the
    same agents, rules and ``seed`` plays (same seeds, same seat orders, so the same games), to watch them
    (``allfives replay FILE --html OUT.html``). Each record also lists the agent spec of every seat
    under ``"agents"``. Files: ``<out_dir>/game_<set>_<k>.json``."""
    r = resolve_rules(rules, num_players)
    seed = check_seed(seed, allow_none=False)
    check_run_args(1, count, "count")
    specs = check_agents(agents, r)
    orders = duplicate_orders(r, len(specs), balanced)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for index in range(count):
        set_index, g = divmod(index, len(orders))
        game_seed, deal_seed = set_seeds(seed, set_index)
        order = orders[g]
        game = Game(r, game_seed, deal_seed=deal_seed)
        play_game(r, [make_agent(specs[who]) for who in order], seed=game_seed, game=game,
                  agent_seeds=agent_seeds(seed, set_index, g, r.num_players))
        record = game_record(game, seed=game_seed)
        record["agents"] = [specs[who] for who in order]
        paths.append(save_replay(record, folder / f"game_{set_index:04d}_{g}.json"))
    return paths
