"""A win-probability potential for reward shaping: how likely a side is to win the game from the points each
side still needs, measured on games of the batch engine's ``expert`` agents.

Why: a game is won at the target, but PPO on ``reward: points`` maximises points, and the search scores
points to the end of the hand; 10 points when the side needs 10 are worth far more than 10 points at the
start. Shaping with a potential ``F = gamma * phi(s') - phi(s)`` (Ng, Harada and Russell, 1999) turns each
score change into the change of the side's chance to win, while leaving the optimal policies of the
game's win/loss reward as they are: the shaping terms telescope over an episode. With ``phi`` the win
probability, a policy trained on ``win`` reward gets a dense signal that already speaks in wins.

The table: ``probability[m, o]`` is the chance that a side needing ``m`` fives (``ceil((target - score) /
5)``; 0 once it has reached the target) wins against the closest other side, needing ``o``. It is estimated
at every decision of ``games`` seeded games with ``expert`` at every seat: each cell's win rate, shrunk
towards a one-parameter logistic curve in ``(o - m) / sqrt(m + o + 1)`` (fitted on the same data) by
``prior_games`` pseudo-games, so a cell that expert play rarely visits (needing 1 against 30) reads the curve,
and a well-visited one its own rate; then made monotone (never lower when the other side needs more or this
side needs less: a potential that falls when a side scores would reward not scoring). With two sides the table is made symmetric (``p[m, o] + p[o, m] = 1``;
whose lead it is next is not part of the state). A draw (possible with ``max_hands``) counts as half a win.

Tables are plain JSON (:func:`save_win_table` / :func:`load_win_table`, never pickle), keyed by the rules that
change the race: the number of players and sides, the target, the score unit and the scoring scheme. Building
one for the default rules from 4,000 games takes a few seconds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from allfives_env.batch import BatchGame
from allfives_env.batch.agents import make_batch_agent
from allfives_env.core.errors import AllFivesError, short_repr
from allfives_env.core.rules import Rules
from allfives_env.core.values import is_integer
from allfives_env.regular_file import read_regular_file

__all__ = ["WinTable", "WinTableError", "build_win_table", "load_win_table", "needs_in_fives", "save_win_table"]

FORMAT = "allfives-win-table"
VERSION = 1
#: The rules options a table depends on: they change how many points a side needs and how fast it gets them.
RACE_OPTIONS = ("num_players", "partnership", "target", "max_pip", "hand_size", "score_unit")
_MAX_FILE_BYTES = 1 << 20


class WinTableError(AllFivesError, ValueError):
    """A win table that cannot be built, read or used: the message says what was wrong and what is allowed."""


def needs_in_fives(scores: np.ndarray, target: int) -> np.ndarray:
    """int64, the shape of ``scores``: the fives each side still needs (0 once it has reached the target)."""
    left = target - np.asarray(scores, dtype=np.int64)
    return np.maximum(0, -(-left // 5))


class WinTable:
    """``probability[m, o]``: a side's chance to win needing ``m`` fives against the closest other side needing
    ``o`` (see the module docstring). :meth:`potential` reads it for every side of a batch of score rows."""

    def __init__(self, rules: Rules, probability: np.ndarray, games: int, seed: int) -> None:
        size = int(needs_in_fives(np.zeros(1), rules.target)[0]) + 1
        table = np.asarray(probability, dtype=np.float64)
        if table.shape != (size, size) or not np.isfinite(table).all() or (table < 0).any() or (table > 1).any():
            raise WinTableError(f"a win table for target {rules.target} is a ({size}, {size}) array of probabilities "
                                f"in [0, 1], got shape {table.shape}")
        self.rules, self.games, self.seed = rules, int(games), int(seed)
        self.probability = table
        self.probability.setflags(write=False)
        self._side_of = np.array([rules.side_of(s) for s in range(rules.num_players)], dtype=np.int64)

    def potential(self, scores: np.ndarray) -> np.ndarray:
        """float64 ``scores.shape``: each side's chance to win from ``scores`` (``(..., sides)``, the sides' points)."""
        # a side below zero (rules that allow negative scores) reads the table's last row, as the build counts it
        need = np.minimum(needs_in_fives(scores, self.rules.target), len(self.probability) - 1)
        sides = need.shape[-1]
        if sides != self.rules.num_sides:
            raise WinTableError(f"scores have {sides} sides, the table's rules have {self.rules.num_sides}")
        others = np.empty_like(need)
        for side in range(sides):
            rest = np.delete(need, side, axis=-1)
            others[..., side] = rest.min(axis=-1)
        return self.probability[need, others]

    def seat_potential(self, scores: np.ndarray) -> np.ndarray:
        """float64 ``(..., players)``: :meth:`potential` of each seat's side."""
        return self.potential(scores)[..., self._side_of]


def _records(rules: Rules, games: int, seed: int, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """(needs, results): for every decision of every game, each side's (own need, closest other need) in
    fives, and its result (1 win, 0.5 draw, 0 loss)."""
    needs: list[np.ndarray] = []
    results: list[np.ndarray] = []
    sides = rules.num_sides
    for first in range(0, games, chunk):
        n = min(chunk, games - first)
        batch = BatchGame(rules, n, seed=seed, first_game=first, record=False)
        agent = make_batch_agent("expert", seed + 1 + first, n)
        seen: list[np.ndarray] = []
        live_rows: list[np.ndarray] = []
        while not batch.done.all():
            live = ~batch.done
            need = needs_in_fives(batch.scores, rules.target)[live]
            seen.append(need)
            live_rows.append(np.flatnonzero(live))
            batch.step_legal(agent.act(batch))
        winner = batch.winner
        outcome = np.where(winner[:, None] == np.arange(sides), 1.0, 0.0)
        outcome[winner < 0] = 0.5  # a draw at the max_hands cap
        for need, rows in zip(seen, live_rows):
            for side in range(sides):
                rest = np.delete(need, side, axis=1).min(axis=1)
                needs.append(np.stack([need[:, side], rest], axis=1))
                results.append(outcome[rows, side])
    return np.concatenate(needs), np.concatenate(results)


def _logistic_scale(x: np.ndarray, y: np.ndarray) -> float:
    """The ``c`` of ``sigmoid(c * x)`` with the largest likelihood of ``y`` (golden-section search on [0, 20])."""
    def loss(c: float) -> float:
        p = np.clip(1.0 / (1.0 + np.exp(-c * x)), 1e-9, 1 - 1e-9)
        return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())

    lo, hi = 0.0, 20.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if loss(a) < loss(b):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def _isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to ``values`` in weighted least squares (pool adjacent violators)."""
    means: list[float] = []
    totals: list[float] = []
    sizes: list[int] = []
    for v, w in zip(values.tolist(), weights.tolist()):
        means.append(v)
        totals.append(w)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            w2, w1 = totals.pop(), totals[-1]
            m2, m1 = means.pop(), means[-1]
            means[-1] = (m1 * w1 + m2 * w2) / (w1 + w2)
            totals[-1] = w1 + w2
            merged = sizes.pop()
            sizes[-1] += merged
    return np.repeat(means, sizes)


def _monotone(table: np.ndarray, weights: np.ndarray, rounds: int = 20) -> np.ndarray:
    """``table`` made non-decreasing along each row (the other side needs more) and non-increasing down each
    column (this side needs more), by alternating weighted isotonic fits: a potential that falls when a side
    scores would reward not scoring."""
    out = table.copy()
    for _ in range(rounds):
        for m in range(out.shape[0]):
            out[m] = _isotonic(out[m], weights[m])
        for o in range(out.shape[1]):
            out[:, o] = _isotonic(out[::-1, o], weights[::-1, o])[::-1]
    return out


def build_win_table(rules: Optional[Rules] = None, games: int = 4000, seed: int = 0,
                    prior_games: float = 20.0) -> WinTable:
    """Play ``games`` seeded games of ``expert`` at every seat under ``rules`` and estimate the table (module
    docstring). The same arguments give the same table."""
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise WinTableError(f"rules must be a Rules object, got {short_repr(rules)}")
    if not is_integer(games) or not 1 <= games <= 10**7:
        raise WinTableError(f"games={short_repr(games)} is not allowed: give an integer 1..10000000")
    if not is_integer(seed) or seed < 0:
        raise WinTableError(f"seed={short_repr(seed)} is not allowed: give a non-negative integer")
    if not isinstance(prior_games, (int, float)) or isinstance(prior_games, bool) or not 0 <= prior_games < 1e9:
        raise WinTableError(f"prior_games={short_repr(prior_games)} is not allowed: give a number >= 0")
    needs, results = _records(rules, int(games), int(seed))
    size = int(needs_in_fives(np.zeros(1), rules.target)[0]) + 1
    m, o = np.minimum(needs[:, 0], size - 1), np.minimum(needs[:, 1], size - 1)
    x = (o - m) / np.sqrt(m + o + 1.0)
    scale = _logistic_scale(x, results)
    grid_m, grid_o = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    prior = 1.0 / (1.0 + np.exp(-scale * (grid_o - grid_m) / np.sqrt(grid_m + grid_o + 1.0)))
    wins = np.zeros((size, size))
    counts = np.zeros((size, size))
    np.add.at(wins, (m, o), results)
    np.add.at(counts, (m, o), 1.0)
    table = (wins + prior_games * prior) / (counts + prior_games) if prior_games else \
        np.where(counts > 0, wins / np.maximum(counts, 1.0), prior)
    table = _monotone(table, counts + prior_games + 1e-9)
    table[0, 1:] = 1.0  # the side has reached the target: it has won
    table[1:, 0] = 0.0
    table[0, 0] = 0.5
    if rules.num_sides == 2:
        table = (table + 1.0 - table.T) / 2
    return WinTable(rules, table, int(games), int(seed))


def _race_rules(rules: Rules) -> dict[str, Any]:
    options = rules.to_dict()
    return {key: options[key] for key in RACE_OPTIONS if key in options}


def save_win_table(table: WinTable, path: Union[str, Path]) -> None:
    """Write ``table`` as JSON (the rules it was made for, how, and the probabilities)."""
    data = {"format": FORMAT, "version": VERSION, "rules": table.rules.to_dict(), "games": table.games,
            "seed": table.seed, "probability": table.probability.tolist()}
    Path(path).write_text(json.dumps(data) + "\n", encoding="utf-8")


def load_win_table(path: Union[str, Path], rules: Optional[Rules] = None) -> WinTable:
    """Read a table written by :func:`save_win_table`; with ``rules``, refuse a table made for rules whose race
    differs (players, sides, target, tile set, hand size, score unit). Every field is checked: a corrupt or
    foreign file is a :class:`WinTableError` naming the problem."""
    where = f"win table {str(path)!r}"
    try:  # a regular file of at most 1 MiB: a named pipe or a device is refused, never waited on
        raw = read_regular_file(Path(path), _MAX_FILE_BYTES, WinTableError, "a win table (a JSON file)")
    except OSError as exc:
        raise WinTableError(f"{where} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise WinTableError(f"{where} is not JSON: a win table is the JSON file save_win_table writes") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise WinTableError(f"{where} is not a win table (its format field must be {FORMAT!r})")
    if data.get("version") != VERSION:
        raise WinTableError(f"{where} has version {short_repr(data.get('version'))}; this library reads {VERSION}")
    try:
        made_for = Rules.from_options(data["rules"])
        games, seed, probability = data["games"], data["seed"], np.asarray(data["probability"], dtype=np.float64)
    except (KeyError, TypeError, ValueError, AllFivesError) as exc:
        raise WinTableError(f"{where} has a bad or missing field ({exc})") from None
    if not (is_integer(games) and is_integer(seed)):
        raise WinTableError(f"{where}: games and seed must be integers")
    if rules is not None and _race_rules(rules) != _race_rules(made_for):
        raise WinTableError(f"{where} was made for {_race_rules(made_for)}, but these rules have {_race_rules(rules)}")
    try:
        return WinTable(made_for, probability, games, seed)
    except WinTableError as exc:
        raise WinTableError(f"{where}: {exc}") from None
