"""Baselines over seeds: the project's three training recipes, each trained from several seeds, reported with
``rliable`` (Agarwal et al., "Deep RL at the Edge of the Statistical Precipice").

The recipes, each exactly as shipped apart from its seed:

* ``sb3``: ``allfives train --config configs/default.yaml`` (sb3-contrib MaskablePPO, 2M learner steps);
* ``cleanrl``: ``python examples/cleanrl_ppo.py`` (the CleanRL-style loop, 3M learner steps), with
  ``--curve-every 250000`` so that it evaluates as it goes like the other two;
* ``rllib``: ``allfives train-rllib`` (``configs/rllib_default.yaml``, 1M learner steps), with
  ``evaluation.every=20`` instead of 61 iterations, for the same reason. Evaluating reads the exported
  weights only: it changes nothing of what is learned.

Every run's final policy is benched (``allfives bench ppo:path=POLICY --track 2p --quick``, or the full suite
with ``--bench full``); the **final bench score** is the card's rating. Across the seeds, rliable's stratified
bootstrap gives the IQM (the mean of the middle half of the runs: robust to one lucky or failed seed, and
less noisy than the median) and the mean, each with a 95% interval. The **learning curves** are
the win rates against ``expert`` and ``greedy`` at each recipe's evaluations during training (200 games
each on the duplicate deals of seed 12345, the three recipes' default evaluation seed): at every
evaluation step, the IQM over the seeds with its 95% band.

Every run lives in ``WORK/<recipe>/seed<S>/`` with its log beside it (``seed<S>.log``), and a finished part is
never redone: the same command, after a stop, resumes a run from its newest checkpoint (``sb3``, ``rllib``;
``cleanrl`` runs start over, they take minutes), a bench from its journal, and skips what is done. So it can
run in chunks, e.g. a recipe or a seed at a time (``--recipes``, ``--seeds``), or as two commands side by side
(``--only train`` and ``--only bench``: training runs in one thread, a bench in another process); ``--json``
reports the runs that are finished at that moment. The published figures::

    python benchmarks/baselines_over_seeds.py --seeds 0,1,2,3,4 --bench quick \\
        --json benchmarks/results/baselines_over_seeds.json \\
        --figure benchmarks/results/baselines_learning_curves.png

Needs the ``[train,rllib,examples,stats]`` extras (``stats``: rliable).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.provenance import stamped, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The evaluation seed of all three recipes (their configs' default): every curve point plays these deals.
CURVE_SEED = 12345
#: Games per opponent at each learning-curve point (the SB3 and RLlib configs' ``evaluation.games``).
CURVE_GAMES = 200
CURVE_OPPONENTS = ("greedy", "expert")
#: Bootstrap resamples for every interval (rliable's own default is 50,000; 20,000 keeps the third digit).
REPS = 20_000
#: The one generator of the bootstrap (rliable draws from the numpy RandomState it is handed).
BOOTSTRAP_SEED = 35


@dataclass(frozen=True)
class Recipe:
    """One training recipe: how to start or resume a run of it, and where a finished run keeps its results."""

    name: str
    label: str
    #: (run folder, seed) -> the command that starts the run, or resumes it when it has a checkpoint
    command: Callable[[Path, int], list[str]]
    #: the file whose presence says the run finished
    finished: str
    #: the final policy file in the run folder
    policy: str
    #: run folder -> {opponent: [(learner steps, win rate), ...]}
    curve: Callable[[Path], dict[str, list[tuple[int, float]]]]
    #: whether the command makes the run folder itself (``allfives train`` does); else the driver makes it
    makes_folder: bool = True


def _resumable(run: Path) -> bool:
    """Whether a run of ``allfives train``/``train-rllib`` has a checkpoint to continue from."""
    return any((run / "checkpoints").glob("*")) if (run / "checkpoints").is_dir() else False


def sb3_command(run: Path, seed: int) -> list[str]:
    if _resumable(run):
        return ["allfives", "train", "--resume", str(run), "--no-progress"]
    return ["allfives", "train", "--config", "configs/default.yaml", "--run-dir", str(run), "--set", f"seed={seed}",
            "--no-progress"]


def rllib_command(run: Path, seed: int) -> list[str]:
    if _resumable(run):
        return ["allfives", "train-rllib", "--resume", str(run)]
    return ["allfives", "train-rllib", "--run-dir", str(run), "--set", f"seed={seed}", "--set", "evaluation.every=20"]


def cleanrl_command(run: Path, seed: int) -> list[str]:
    return [sys.executable, "examples/cleanrl_ppo.py", "--seed", str(seed), "--eval-seeds", str(CURVE_SEED),
            "--eval-opponents", *CURVE_OPPONENTS, "--eval-games", "1000", "--curve-every", "250000",
            "--curve-games", str(CURVE_GAMES), "--export", str(run / "policy.npz"), "--json-out",
            str(run / "cleanrl.json")]


def history_curve(path: Path, steps_per_unit: int = 1) -> dict[str, list[tuple[int, float]]]:
    """The curves of an ``eval_history.csv`` (``allfives train`` and ``train-rllib``): each evaluation's win rate
    per opponent; where the final evaluation shares its step with a periodic one, the final (more games) wins."""
    points: dict[str, dict[int, float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["baseline"] in CURVE_OPPONENTS:
                step = int(float(row["step"])) * steps_per_unit
                here = points.setdefault(row["baseline"], {})
                if step not in here or row["final"] == "True":
                    here[step] = float(row["win_rate"])
    return {o: sorted(p.items()) for o, p in points.items()}


def rllib_curve(run: Path) -> dict[str, list[tuple[int, float]]]:
    """RLlib's history counts iterations: one is ``ppo.train_batch_size`` learner steps of the run's config."""
    import yaml

    config = yaml.safe_load((run / "config.yaml").read_text())
    return history_curve(run / "eval_history.csv", int(config["ppo"]["train_batch_size"]))


def cleanrl_curve(run: Path) -> dict[str, list[tuple[int, float]]]:
    """The example's ``curve`` rows, then its final evaluation (1000 games) at ``--total-timesteps``. The example
    counts the steps the learner took, which differ a little between seeds, and takes a point as soon as an
    update passes a multiple of ``--curve-every``: each point is placed at that multiple (the step it was taken
    at is at most one rollout past it), so that every seed's points line up."""
    out = json.loads((run / "cleanrl.json").read_text())
    every = int(out["args"]["curve_every"])
    points: dict[str, dict[int, float]] = {}
    for row in out["curve"]:
        points.setdefault(row["opponent"], {})[int(row["step"]) // every * every] = float(row["win_rate"])
    for row in out["evaluations"]:
        points.setdefault(row["opponent"], {})[int(out["args"]["total_timesteps"])] = float(row["win_rate"])
    return {o: sorted(p.items()) for o, p in points.items()}


RECIPES: dict[str, Recipe] = {
    "sb3": Recipe("sb3", "SB3 MaskablePPO (`allfives train`, configs/default.yaml)", sb3_command,
                  "evaluation.json", "policy.npz", lambda run: history_curve(run / "eval_history.csv")),
    "cleanrl": Recipe("cleanrl", "CleanRL-style PPO (examples/cleanrl_ppo.py)", cleanrl_command,
                      "cleanrl.json", "policy.npz", cleanrl_curve, makes_folder=False),
    "rllib": Recipe("rllib", "RLlib PPO (`allfives train-rllib`, configs/rllib_default.yaml)", rllib_command,
                    "evaluation.json", "policy_default_policy.npz", rllib_curve),
}


def run_logged(command: Sequence[str], log: Path) -> float:
    """Run ``command`` in the repository root with its output appended to ``log``; its wall seconds. A failure
    stops the driver with the log's name (the finished parts stay)."""
    started = time.perf_counter()
    with open(log, "a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        done = subprocess.run(list(command), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"error: {' '.join(command)} failed (exit {done.returncode}): see {log}")
    return time.perf_counter() - started


def bench_command(policy: Path, card: Path, full: bool, processes: int) -> list[str]:
    return ["allfives", "bench", f"ppo:path={policy}", "--track", "2p", *([] if full else ["--quick"]),
            "--processes", str(processes), "--json", str(card), "--no-progress"]


def do_run(recipe: Recipe, seed: int, work: Path, full: bool, processes: int, only: Optional[str] = None) -> None:
    """Train (or resume) one run and bench its final policy, skipping what is already done; ``only`` "train"
    leaves the bench out, "bench" benches a finished run and trains nothing."""
    run = work / recipe.name / f"seed{seed}"
    log = work / recipe.name / f"seed{seed}.log"
    times_file = run / "driver_times.json"
    if not (run / recipe.finished).is_file():
        if only == "bench":
            return
        (run.parent if recipe.makes_folder else run).mkdir(parents=True, exist_ok=True)
        print(f"{recipe.name} seed {seed}: training", flush=True)
        seconds = run_logged(recipe.command(run, seed), log)
        times = json.loads(times_file.read_text()) if times_file.is_file() else {}
        times["train_seconds"] = round(times.get("train_seconds", 0.0) + seconds, 1)
        times_file.write_text(json.dumps(times) + "\n")
    card = run / f"bench-{'full' if full else 'quick'}.json"
    if only == "train":
        return
    if not card.is_file() or (Path(f"{card}.journal")).is_file():
        print(f"{recipe.name} seed {seed}: bench", flush=True)
        run_logged(bench_command(run / recipe.policy, card, full, processes), log)


def run_record(recipe: Recipe, seed: int, work: Path, full: bool) -> Optional[dict[str, Any]]:
    """One finished run's figures (None while it is unfinished): the bench card's rating and win rates, its
    curves and its training time."""
    run = work / recipe.name / f"seed{seed}"
    card_file = run / f"bench-{'full' if full else 'quick'}.json"
    if not (run / recipe.finished).is_file() or not card_file.is_file() or Path(f"{card_file}.journal").is_file():
        return None
    card = json.loads(card_file.read_text())
    return {"seed": seed, "rating": card["rating"]["elo"], "rating_ci": card["rating"]["ci"],
            "win_rates": {o["opponent"]: o["win_rate"] for o in card["opponents"]},
            "curve": recipe.curve(run), "policy_sha256": card["policy"]["sha256"] if card.get("policy") else None,
            "train_seconds": train_seconds(run)}


def train_seconds(run: Path) -> Optional[float]:
    """The run's training wall time as the driver measured it over all its sessions; for a run trained outside
    the driver, the wall time its ``summary.json`` records (``allfives train``/``train-rllib``), else unknown."""
    for name, key in (("driver_times.json", "train_seconds"), ("summary.json", "wall_seconds")):
        if (run / name).is_file():
            value = json.loads((run / name).read_text()).get(key)
            return None if value is None else round(float(value), 1)
    return None


def interval_estimates(scores: dict[str, np.ndarray], reps: int = REPS, seed: int = BOOTSTRAP_SEED
                       ) -> dict[str, dict[str, Any]]:
    """IQM and mean of each recipe's scores (one per run) with rliable's stratified-bootstrap 95% intervals.
    (rliable's median is the median over tasks of the per-task means: with one task it is the mean, so it is
    left out.)"""
    from rliable import metrics

    def aggregates(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x)])

    matrices = {name: np.asarray(s, dtype=float).reshape(-1, 1) for name, s in scores.items()}  # runs x 1 task
    points, intervals = _interval_estimates(matrices, aggregates, reps, seed)
    return {name: {stat: {"value": float(points[name][i]), "ci": [float(intervals[name][0, i]),
                                                                   float(intervals[name][1, i])]}
                   for i, stat in enumerate(("iqm", "mean"))} for name in matrices}


def _interval_estimates(matrices: dict[str, np.ndarray], func: Callable[[np.ndarray], np.ndarray], reps: int,
                        seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's ``get_interval_estimates`` (stratified bootstrap over runs, percentile 95% intervals), drawing
    from one seeded generator. rliable 1.2's own resampling draws from numpy's global generator whatever
    ``random_state`` it is given (``StratifiedBootstrap.update_indices`` calls ``np.random.choice``), so the same
    scores gave other intervals on every call; :class:`_SeededStratifiedBootstrap` draws from the bootstrap's
    generator instead, which is all that differs."""
    points, intervals = {}, {}
    for name, scores in matrices.items():
        bootstrap = _seeded_bootstrap(scores, seed)
        points[name] = func(scores)
        intervals[name] = bootstrap.conf_int(func, reps=reps, size=0.95, method="percentile")
    return points, intervals


def _seeded_bootstrap(scores: np.ndarray, seed: int) -> Any:
    """rliable's stratified bootstrap of ``scores`` (runs x tasks) that resamples runs with its own generator."""
    from rliable import library as rly

    class _SeededStratifiedBootstrap(rly.StratifiedBootstrap):  # type: ignore[misc]
        def update_indices(self) -> tuple[np.ndarray, ...]:
            runs = self.generator.choice(self._num_items, self._args_shape, replace=True)
            return (runs, *self._strata_indices)

    bootstrap = _SeededStratifiedBootstrap(scores)
    bootstrap.generator = np.random.default_rng(seed)
    return bootstrap


def curve_bands(curves: list[dict[str, list[tuple[int, float]]]], opponent: str, reps: int = REPS,
                seed: int = BOOTSTRAP_SEED) -> list[dict[str, Any]]:
    """The IQM over runs of the win rate against ``opponent`` at each step every run evaluated at, with its 95%
    band (rliable's stratified bootstrap over runs, one step a task)."""
    from rliable import metrics

    per_run = [dict(c.get(opponent, [])) for c in curves]
    steps = sorted(set.intersection(*(set(p) for p in per_run))) if per_run else []
    if not steps:
        return []
    matrix = np.array([[p[s] for s in steps] for p in per_run])  # runs x steps

    def iqm_per_step(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x[:, [t]]) for t in range(x.shape[1])])

    points, intervals = _interval_estimates({"c": matrix}, iqm_per_step, reps, seed)
    return [{"step": s, "iqm": float(points["c"][t]), "ci": [float(intervals["c"][0, t]), float(intervals["c"][1, t])]}
            for t, s in enumerate(steps)]


def aggregate(records: dict[str, list[dict[str, Any]]], reps: int = REPS) -> dict[str, dict[str, Any]]:
    """Per recipe: its runs, the interval estimates of their final bench ratings and the curve bands."""
    ratings = {name: np.array([r["rating"] for r in runs]) for name, runs in records.items() if runs}
    estimates = interval_estimates(ratings, reps) if ratings else {}
    return {name: {"runs": runs, "seeds": [r["seed"] for r in runs], "rating": estimates.get(name),
                   "curves": {o: curve_bands([r["curve"] for r in runs], o, reps) for o in CURVE_OPPONENTS}}
            for name, runs in records.items() if runs}


def plot(report: dict[str, Any], path: Path) -> None:
    """The learning curves: per opponent a panel, per recipe the IQM line and its 95% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CURVE_OPPONENTS), figsize=(11, 4), sharex=True)
    for ax, opponent in zip(axes, CURVE_OPPONENTS):
        for name, result in report["recipes"].items():
            band = result["curves"][opponent]
            if not band:
                continue
            steps = np.array([p["step"] for p in band]) / 1e6
            ax.plot(steps, [p["iqm"] for p in band], marker="o", markersize=3,
                    label=f"{name} ({len(result['runs'])} seeds)")
            ax.fill_between(steps, [p["ci"][0] for p in band], [p["ci"][1] for p in band], alpha=0.2)
        ax.set_title(f"win rate against {opponent}")
        ax.set_xlabel("learner steps (millions)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"IQM over seeds, 95% band ({CURVE_GAMES} games a point)")
    axes[-1].legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipes", default="sb3,cleanrl,rllib", help="comma-separated, of: " + ", ".join(RECIPES))
    parser.add_argument("--seeds", default="0,1,2,3,4", help="training seeds, comma-separated (default 0-4)")
    parser.add_argument("--bench", choices=["quick", "full"], default="quick",
                        help="the final bench score from allfives bench --quick (default: 400 games, about a minute "
                             "a policy) or the full suite (8,000 games, 10-15 minutes a policy on one core)")
    parser.add_argument("--work", type=Path, default=Path("runs/baselines"), help="where the runs live")
    parser.add_argument("--processes", type=int, default=2, help="bench worker processes (default 2)")
    parser.add_argument("--only", choices=["train", "bench"],
                        help="train the runs without benching them, or bench the finished runs without training: "
                             "the two can run side by side, since training uses one core and a bench another")
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the finished runs")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--figure", type=Path, help="draw the learning curves here (PNG)")
    args = parser.parse_args(argv)
    unknown = [r for r in args.recipes.split(",") if r not in RECIPES]
    if unknown:
        parser.error(f"--recipes {args.recipes}: unknown {', '.join(unknown)}; allowed: {', '.join(RECIPES)}")
    try:
        args.seed_list = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds {args.seeds}: give integers separated by commas, e.g. 0,1,2,3,4")
    if len(set(args.seed_list)) != len(args.seed_list) or any(s < 0 or s == CURVE_SEED for s in args.seed_list):
        parser.error(f"--seeds {args.seeds}: give distinct seeds >= 0, none equal to the evaluation seed {CURVE_SEED}")
    if args.processes < 1:
        parser.error(f"--processes {args.processes}: must be at least 1")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    full = args.bench == "full"
    recipes = [RECIPES[r] for r in args.recipes.split(",")]
    if not args.report_only:
        for recipe in recipes:
            for seed in args.seed_list:
                do_run(recipe, seed, args.work, full, args.processes, args.only)
    records = {r.name: [rec for s in args.seed_list if (rec := run_record(r, s, args.work, full))] for r in recipes}
    report = stamped({"bench": args.bench, "track": "2p", "seeds": args.seed_list, "reps": REPS,
                      "bootstrap_seed": BOOTSTRAP_SEED, "curve_seed": CURVE_SEED, "curve_games": CURVE_GAMES,
                      "labels": {r.name: r.label for r in recipes},
                      "commands": {r.name: " ".join(r.command(Path("RUN"), 0)).replace(sys.executable, "python")
                                   .replace("seed=0", "seed=SEED").replace("--seed 0", "--seed SEED")
                                   for r in recipes},
                      "recipes": aggregate(records)}, argv)
    for name, result in report["recipes"].items():
        r = result["rating"]["iqm"]
        print(f"{name}: {len(result['runs'])} runs, bench rating IQM {r['value']:.0f} "
              f"[{r['ci'][0]:.0f}, {r['ci'][1]:.0f}]", flush=True)
    write_report(args.json, report)
    if args.figure:
        plot(report, args.figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
