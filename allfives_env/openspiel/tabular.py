"""Tabular policies over the miniature's information states: the file format, and ``miniature-cfr``, the agent that
plays the shipped CFR+ solution (``allfives_env/policies/miniature_cfr.json``).

A tabular policy is a JSON file: a header (format, version, the game's parameters, the solver, its NashConv) and
``table``, information-state string -> {action id: probability}. It is read as data, never unpickled, and checked
entry by entry: a file that was cut, edited into nonsense or made for another game is refused with its name.

The agent finds its information state as OpenSpiel would write it: it rebuilds a ``python_allfives`` state that
agrees with its view (:func:`~allfives_env.openspiel.position.state_for_view`; on the miniature the string is
the same for every consistent guess, which the tests check over every information state) and looks the string
up. It samples from the row (``sample=true``, the default: an equilibrium is a mixed strategy) or plays its most
likely action.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ..agents.base import Agent, PlayerView
from ..core.errors import AgentError, short_repr
from ..regular_file import read_json_file
from .errors import OpenSpielStateError
from .miniature import MINIATURE
from .position import state_for_view

__all__ = ["MINIATURE_POLICY", "TABULAR_FORMAT", "MiniatureCFRAgent", "read_tabular_policy", "write_tabular_policy"]

TABULAR_FORMAT = "allfives-tabular-policy"
#: The shipped CFR+ solution of the miniature.
MINIATURE_POLICY = Path(__file__).resolve().parent.parent / "policies" / "miniature_cfr.json"
_MAX_BYTES = 1 << 26


def write_tabular_policy(path: Union[str, Path], table: dict[str, dict[int, float]], header: dict[str, Any]) -> Path:
    """Write ``table`` (information state -> {action: probability}) with ``header`` as a tabular policy file."""
    doc = {"format": TABULAR_FORMAT, "version": 1, **header,
           "table": {key: {str(a): round(float(p), 6) for a, p in row.items() if p > 0} for key, row in table.items()}}
    target = Path(path)
    target.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    return target


def read_tabular_policy(path: Union[str, Path]) -> tuple[dict[str, Any], dict[str, dict[int, float]]]:
    """The header and the table of a tabular policy file, every row checked (probabilities summing to 1)."""
    where = Path(path)
    doc = read_json_file(where, _MAX_BYTES, OpenSpielStateError, "tabular policy")
    if not isinstance(doc, dict) or doc.get("format") != TABULAR_FORMAT or doc.get("version") != 1:
        raise OpenSpielStateError(f"{where}: not a tabular policy (no \"format\": \"{TABULAR_FORMAT}\", version 1)")
    raw = doc.get("table")
    if not isinstance(raw, dict) or not raw:
        raise OpenSpielStateError(f"{where}: a tabular policy holds a non-empty \"table\"")
    table: dict[str, dict[int, float]] = {}
    for key, row in raw.items():
        try:
            parsed = {int(a): float(p) for a, p in row.items()}
        except (AttributeError, TypeError, ValueError):
            raise OpenSpielStateError(f"{where}: the row of {short_repr(key)} is not {{action: probability}}") from None
        if not parsed or any(not math.isfinite(p) or p < 0 for p in parsed.values()) \
                or abs(sum(parsed.values()) - 1.0) > 1e-3:
            raise OpenSpielStateError(f"{where}: the row of {short_repr(key)} is not a probability distribution")
        table[key] = parsed
    header = {k: v for k, v in doc.items() if k != "table"}
    return header, table


class MiniatureCFRAgent(Agent):
    """Plays the shipped CFR+ solution of the miniature (see the module docstring); only the miniature's rules."""

    name = "miniature-cfr"

    def __init__(self, seed: Optional[int] = None, sample: bool = True) -> None:
        super().__init__(seed, sample=bool(sample))
        self.sample = bool(sample)
        self.header, self.table = read_tabular_policy(MINIATURE_POLICY)
        self._search_rng = np.random.default_rng(0)  # the guess behind the state; the string does not depend on it

    def check_rules(self, rules: Any) -> None:
        """Refuse rules other than the miniature's (evaluations call this before any game)."""
        wanted = {"num_players": MINIATURE["players"], "max_pip": MINIATURE["max_pip"],
                  "hand_size": MINIATURE["hand_size"], "boneyard_reserve": MINIATURE["boneyard_reserve"]}
        found = {k: getattr(rules, k) for k in wanted}
        if found != wanted:
            raise AgentError(f"agent miniature-cfr plays the miniature only ({wanted}); this game has {found}")

    def action_probabilities(self, view: PlayerView) -> dict[int, float]:
        """The solution's probability of each action here (its row of the table)."""
        self.check_rules(view.rules)
        state = state_for_view(view, self._search_rng, 1.0)
        key = None if state is None else state.information_state_string(view.seat)
        if key is None or key not in self.table:
            raise AgentError("agent miniature-cfr has no row for this position: the solution covers the miniature's "
                             "first hand from a zero score only")
        return self.table[key]

    def act(self, view: PlayerView) -> int:
        row = self.action_probabilities(view)
        actions = sorted(row)
        if not self.sample:
            return max(actions, key=lambda a: (row[a], -a))
        p = np.array([row[a] for a in actions])
        return int(actions[int(self.rng.choice(len(actions), p=p / p.sum()))])
