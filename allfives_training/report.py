"""What a run writes about itself: the evaluation history, the final table and the learning curve."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

HISTORY_FIELDS = ["step", "baseline", "games", "win_rate", "win_rate_lo", "win_rate_hi", "points_per_hand",
                  "points_per_hand_lo", "points_per_hand_hi", "final"]


def tag(spec: str) -> str:
    """A TensorBoard-friendly name for an agent spec (``pimc:samples=50`` -> ``pimc_samples_50``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_")


def history_row(step: int, baseline: str, match: Any, final: bool = False) -> dict[str, Any]:
    """One row of the evaluation history from a :class:`~allfives_env.evaluation.MatchResult`."""
    return {
        "step": int(step), "baseline": baseline, "games": int(match.games), "win_rate": float(match.win_rate),
        "win_rate_lo": float(match.win_rate_ci[0]), "win_rate_hi": float(match.win_rate_ci[1]),
        "points_per_hand": float(match.points_per_hand), "points_per_hand_lo": float(match.points_per_hand_ci[0]),
        "points_per_hand_hi": float(match.points_per_hand_ci[1]), "final": bool(final),
    }


def _fmt(x: float, digits: int = 3) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A Markdown table of final-evaluation rows."""
    lines = ["| baseline | games | win rate | 95% CI | points/hand | 95% CI |", "|---|---:|---:|---|---:|---|"]
    for r in rows:
        lines.append(
            f"| {r['baseline']} | {r['games']} | {_fmt(r['win_rate'])} | [{_fmt(r['win_rate_lo'])}, "
            f"{_fmt(r['win_rate_hi'])}] | {_fmt(r['points_per_hand'], 2)} | [{_fmt(r['points_per_hand_lo'], 2)}, "
            f"{_fmt(r['points_per_hand_hi'], 2)}] |"
        )
    return "\n".join(lines)


def format_line(step: int, rows: Sequence[Mapping[str, Any]], at: Optional[str] = None) -> str:
    """One log line for an evaluation during training; ``at`` names the point (default ``N steps``)."""
    parts = [f"{r['baseline']} {r['win_rate']:.3f} [{r['win_rate_lo']:.2f}, {r['win_rate_hi']:.2f}]" for r in rows]
    return f"eval @ {at or f'{step:,} steps'}, win rate vs " + ", ".join(parts)


def write_history(path: Path, history: Sequence[Mapping[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        w.writeheader()
        for row in history:
            w.writerow({k: row.get(k) for k in HISTORY_FIELDS})


def write_final(run_dir: Path, rows: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> str:
    """``evaluation.md``, ``evaluation.csv`` and ``evaluation.json`` in the run directory; returns the text."""
    text = format_table(rows)
    intro = (f"Evaluation of {header['policy']} after {header['steps']:,} steps: duplicate deals, "
             f"{header['games']} games per baseline, seed {header['seed']}; the win rate counts draws half.")
    (run_dir / "evaluation.md").write_text(intro + "\n\n" + text + "\n")
    with open(run_dir / "evaluation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        w.writeheader()
        for row in rows:
            w.writerow({k: row.get(k) for k in HISTORY_FIELDS})
    (run_dir / "evaluation.json").write_text(json.dumps({**header, "results": list(rows)}, indent=2) + "\n")
    return intro + "\n\n" + text



def play_line(label: str, path: Path) -> str:
    """The line that ends a run's report: where a policy file is and how to play it."""
    return f"{label}: {path}   (play it: allfives evaluate ppo:path={path} greedy)"

def plot_learning_curve(path: Path, history: Sequence[Mapping[str, Any]], title: str) -> Optional[str]:
    """Win rate against each baseline vs steps (95% bands), as a PNG. Returns why not when it cannot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib, or the project's [train] extra)"
    baselines: list[str] = []
    for r in history:
        if r["baseline"] not in baselines:
            baselines.append(r["baseline"])
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for i, b in enumerate(baselines):
        color = f"C{i}"
        pts = sorted((r for r in history if r["baseline"] == b and not r["final"]), key=lambda r: r["step"])
        if pts:
            x = [r["step"] for r in pts]
            ax.plot(x, [r["win_rate"] for r in pts], marker="o", ms=3, color=color, label=f"vs {b}")
            ax.fill_between(x, [r["win_rate_lo"] for r in pts], [r["win_rate_hi"] for r in pts], color=color,
                            alpha=0.15, linewidth=0)
        for r in (r for r in history if r["baseline"] == b and r["final"]):
            ax.errorbar([r["step"]], [r["win_rate"]], yerr=[[r["win_rate"] - r["win_rate_lo"]],
                                                            [r["win_rate_hi"] - r["win_rate"]]],
                        fmt="D", color=color, ms=5, capsize=3, label=None if pts else f"vs {b}")
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=0.8)
    ax.set_ylim(-0.02, 1.02)  # a line at 0% or 100% stays in view, not cut by the frame
    ax.set_xlabel("env steps (learner decisions)")
    ax.set_ylabel("win rate (duplicate deals)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None
