"""The CleanRL-style example (examples/cleanrl_ppo.py) against the project's SB3 training: speed and a full run.

Two measurements, written to one JSON (``--json``):

* ``--rounds R``: env steps per second of learning, in alternating rounds, each in a fresh process (the shared
  machine is noisy; alternation spreads its load over every kind):

  - ``sb3-default``: ``configs/default.yaml`` (MaskablePPO, 128 games of the batch vec env, the placement
    scorer) timed by ``benchmarks/training_speed.py`` (``model.learn`` alone, after one warm-up rollout);
  - ``cleanrl``: the example with its defaults (512 games x 32 steps, 64-wide MLPs, 2 epochs), timed by the
    example itself (the training loop alone, its first rollout included; no evaluation);
  - ``cleanrl-sb3-settings``: the example with default.yaml's sizes (128 games x 64 steps, 128-wide MLPs,
    4 epochs of 1024-step minibatches, learning rate 3e-4): the same work per step, the loop's own cost.

  It prints every round, the median per kind and the median of the per-round ratios to ``sb3-default``.
* ``--full``: the example's default run (training, then the evaluations on its two fresh seeds), its wall time
  from start to exit as this script sees it, and what it printed.
* ``--sb3-example``: the same for ``examples/sb3_vector.py`` (MaskablePPO through the SB3 adapter), its
  figures read off its output lines.

    python benchmarks/cleanrl_speed.py --rounds 3 --steps 200000 --full --json benchmarks/results/cleanrl_ppo.json
    python benchmarks/cleanrl_speed.py --rounds 0 --sb3-example --json benchmarks/results/sb3_vector_example.json

Run it alone on the machine (``flock /tmp/heavy.lock`` on the shared one); the load average before each
part is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cleanrl_ppo.py"
SB3_EXAMPLE = ROOT / "examples" / "sb3_vector.py"
EVAL_LINE = re.compile(r"^eval vs (\w+) \(seed (\d+), (\d+) games\): win rate (\d+\.\d)% "
                       r"\[95% CI (\d+\.\d)% - (\d+\.\d)%\]$", re.M)
TRAINED_LINE = re.compile(r"^trained ([\d,]+) steps in (\d+) s: ([\d,]+) env steps/s$", re.M)
SB3_SETTINGS = ["--num-envs", "128", "--num-steps", "64", "--hidden", "128", "--update-epochs", "4",
                "--num-minibatches", "8", "--learning-rate", "3e-4"]


def loadavg() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty where the system has none)."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def git_state() -> dict:
    """The commit measured, and whether the example differed from it (a figure must name the code it measured)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()

    return {"git_commit": git("rev-parse", "HEAD"),
            "example_modified": bool(git("status", "--porcelain", "--", str(EXAMPLE.relative_to(ROOT))))}


def run_example(extra: list[str]) -> dict:
    """Run the example with ``extra`` arguments and ``--json-out``; its JSON, its output, the wall seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [sys.executable, str(EXAMPLE), *extra, "--json-out", str(out), "--export", str(Path(tmp) / "policy.npz")]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        if proc.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(out.read_text())
    result["process_wall_seconds"] = round(wall, 1)
    result["stdout"] = [line for line in proc.stdout.splitlines() if not line.startswith("iter ")]
    return result


def run_sb3_example() -> dict:
    """examples/sb3_vector.py with its defaults: its wall time and the figures of its output lines."""
    cmd = [sys.executable, str(SB3_EXAMPLE)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    steps, seconds, sps = TRAINED_LINE.search(proc.stdout).groups()
    evaluations = [{"opponent": o, "seed": int(seed), "games": int(g), "win_rate": float(r) / 100,
                    "win_rate_ci": [float(lo) / 100, float(hi) / 100]}
                   for o, seed, g, r, lo, hi in EVAL_LINE.findall(proc.stdout)]
    return {"command": "python examples/sb3_vector.py", "global_step": int(steps.replace(",", "")),
            "train_seconds": int(seconds), "steps_per_second": float(sps.replace(",", "")),
            "process_wall_seconds": round(wall, 1), "evaluations": evaluations, "stdout": proc.stdout.splitlines()}


def sb3_speed(steps: int) -> float:
    """configs/default.yaml's env steps/s, measured by benchmarks/training_speed.py in a fresh process."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "training_speed.py"), "--config", "configs/default.yaml",
           "--steps", str(steps), "--quiet-json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return float(json.loads(out.strip().splitlines()[-1])["steps_per_second"])


def speed_rounds(rounds: int, steps: int) -> dict:
    """Alternating rounds of the three kinds (module docstring); every round and the medians."""
    kinds = {
        "sb3-default": lambda: sb3_speed(steps),
        "cleanrl": lambda: run_example(["--total-timesteps", str(2 * steps), "--eval-games", "0"])["steps_per_second"],
        "cleanrl-sb3-settings": lambda: run_example(SB3_SETTINGS + ["--total-timesteps", str(steps),
                                                                    "--eval-games", "0"])["steps_per_second"],
    }
    per_kind: dict[str, list[float]] = {k: [] for k in kinds}
    loads = []
    for r in range(rounds):
        for kind, measure in kinds.items():
            loads.append(loadavg())
            per_kind[kind].append(measure())
            print(f"round {r + 1} {kind:>21}: {per_kind[kind][-1]:,.0f} env steps/s (load before {loads[-1]})",
                  flush=True)
    base = per_kind["sb3-default"]
    summary = {k: {"rounds": v, "median": statistics.median(v),
                   "ratio_to_sb3_default_median": statistics.median(x / b for x, b in zip(v, base))}
               for k, v in per_kind.items()}
    for k, v in summary.items():
        print(f"{k:>21}: median {v['median']:,.0f} env steps/s, {v['ratio_to_sb3_default_median']:.2f}x sb3-default")
    return {"rounds": rounds, "steps_sb3": steps, "steps_cleanrl": 2 * steps, "steps_cleanrl_sb3_settings": steps,
            "cleanrl_sb3_settings_args": SB3_SETTINGS, "loadavg_before_each": loads, "kinds": summary}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3, help="alternating speed rounds (0: none)")
    p.add_argument("--steps", type=int, default=200_000, help="env steps per SB3 speed round (the example: twice)")
    p.add_argument("--full", action="store_true", help="also run the example's default run with its evaluations")
    p.add_argument("--sb3-example", action="store_true", help="also run examples/sb3_vector.py with its defaults")
    p.add_argument("--json", help="write the results to this JSON file")
    args = p.parse_args()
    result: dict = {"date": time.strftime("%Y-%m-%d"), "machine": {"cpus": os.cpu_count(),
                    "python": platform.python_version(), "platform": platform.platform()},
                    "command": "python benchmarks/cleanrl_speed.py " + " ".join(sys.argv[1:]), **git_state()}
    if args.rounds:
        result["speed"] = speed_rounds(args.rounds, args.steps)
    if args.full:
        load = loadavg()
        full = run_example([])
        full["loadavg_before"] = load
        full["command"] = "python examples/cleanrl_ppo.py"
        result["full_run"] = full
        print("\n".join(full["stdout"]))
        print(f"full run: {full['process_wall_seconds']:.0f} s wall from start to exit (load before {load})")
    if args.sb3_example:
        load = loadavg()
        result["sb3_example"] = {**run_sb3_example(), "loadavg_before": load}
        print("\n".join(result["sb3_example"]["stdout"]))
        print(f"sb3 example: {result['sb3_example']['process_wall_seconds']:.0f} s wall (load before {load})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
