"""A trained policy file against each baseline of a run's ``evaluation`` section: the one loop both trainers use.

``allfives train`` and ``allfives train-rllib`` measure their policies the same way, so that their curves
and final tables compare: the exported numpy policy (``ppo:path=...``) plays every baseline on the same
duplicate deals (``evaluation.seed``), and the final evaluation saves ``evaluation.replays`` games per
baseline. Each trainer decides when to evaluate, what to export and where its rows go.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from allfives_training.report import history_row
from allfives_training.sections import EvaluationConfig

__all__ = ["play_baselines"]


def play_baselines(policy: Path, rules: Any, ev: EvaluationConfig, step: int, final: bool,
                   replays_of: Callable[[str], Path], *, progress: bool = False, mp_context: Optional[str] = None,
                   on_baseline: Optional[Callable[[int, str], None]] = None) -> list[dict[str, Any]]:
    """The history rows (:func:`~allfives_training.report.history_row`) of ``policy`` against each baseline, in
    order: ``ev.games`` games each, or ``ev.final_games`` with ``final``, which also saves ``ev.replays`` games
    of each in ``replays_of(baseline)``. ``on_baseline(i, baseline)`` is told before the ``i``-th (from 1)
    starts, so a progress bar can say what the wait is."""
    from allfives_env.evaluation import evaluate, save_sample_games

    rows = []
    for i, baseline in enumerate(ev.baselines, 1):
        if on_baseline is not None:
            on_baseline(i, baseline)
        players = [f"ppo:path={policy}", baseline]
        match = evaluate(players, rules, games=ev.final_games if final else ev.games, seed=ev.seed,
                         processes=ev.processes, progress=progress, mp_context=mp_context)
        rows.append(history_row(step, baseline, match, final))
        if final and ev.replays:
            save_sample_games(players, rules, replays_of(baseline), ev.replays, seed=ev.seed)
    return rows
