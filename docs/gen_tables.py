"""Write the figures tables of README.md and docs/ from the result files, so no published number is typed by hand.

Every table lives between two marker comments in a page::

    <!-- table:NAME begin -->
    ...generated markdown...
    <!-- table:NAME end -->

and ``TABLES[NAME]`` makes its text from a JSON file under ``benchmarks/results`` (or from the package, for
the observation layout). Each results table ends with a caption naming the command, the date, the machine
and the load it was measured under (``SOURCES``: what the JSON files do not record themselves).

Run::

    python docs/gen_tables.py            # rewrite every marked table in README.md and docs/**/*.md
    python docs/gen_tables.py --check    # exit 1 and name the tables that differ (tests/test_docs.py)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MACHINE = "the 2-core x86-64 Linux reference machine (Python 3.11)"
NOT_RECORDED = "not recorded"
MARKER = re.compile(r"<!-- table:([a-z0-9_]+) begin -->\n(.*?)<!-- table:\1 end -->", re.S)


@dataclass(frozen=True)
class Source:
    """Where a results table's figures come from and what they were measured under."""

    file: str
    command: str
    date: str
    machine: str = MACHINE
    load: str = NOT_RECORDED


SOURCES: dict[str, Source] = {
    "strength_ladder": Source(
        "strength_ladder.json",
        "python benchmarks/strength.py --games 1000 --pimc-games 1000 --processes 2 "
        "--json benchmarks/results/strength_ladder.json", "2026-12-01"),
    "tournament_2p": Source(
        "tournament_2p.json",
        "allfives tournament random greedy defensive expert pimc --players 2 --games 100 --seed 1 --processes 2 "
        "--json benchmarks/results/tournament_2p.json", "2026-11-29"),
    "tournament_4p": Source(
        "tournament_4p.json",
        "allfives tournament random greedy defensive expert pimc --players 4 --partnership --games 40 --seed 1 "
        "--processes 2 --json benchmarks/results/tournament_4p.json", "2026-11-29"),
    "pimc_sift": Source(
        "pimc_sift.json",
        "python benchmarks/search_vs_pimc.py pimc-sift --games 1000 --seeds 4242 2026 (the expert rows add "
        "--opponent expert, the pimc-vs-expert row pimc --opponent expert; the 4-player row --players 4 "
        "--games 400 --seeds 2026)", "2026-12-01"),
    "distill_gap": Source(
        "distill_gap.json",
        "python benchmarks/distill_gap.py ppo-2p expert ppo:path=CLONE.npz ppo:path=WIDE.npz --decisions 2000 "
        "--seed 5", "2026-12-01"),
    "openspiel_ladder": Source(
        "openspiel_ladder.json",
        "python benchmarks/openspiel_ladder.py --processes 2 --json benchmarks/results/openspiel_ladder.json "
        "(the ppo-2p rows: --ours ppo-2p --games-100 20 --games-1000 8 --processes 1 --merge; the ppo-4p rows: "
        "--ours ppo-4p --processes 2 --merge)", "2026-12-01",
        load="about 14 falling to 1 during the main run, so its think times are upper bounds; 1.4 at the end "
        "of the ppo-4p rerun"),
    "ppo_2p_final": Source(
        "ppo_2p_final_evaluation.json", "allfives train --config configs/ppo_2p.yaml (its final evaluation)",
        "2026-12-01", load="a benchmark shared the machine for part of the run (not recorded as a number)"),
    "ppo_3p_final": Source(
        "ppo_3p_final_evaluation.json", "allfives train --config configs/ppo_3p.yaml (its final evaluation)",
        "2026-12-01"),
    "ppo_4p_final": Source(
        "ppo_4p_final_evaluation.json", "allfives train --config configs/ppo_4p.yaml (its final evaluation)",
        "2026-12-01"),
    "batch_throughput": Source(
        "batch_throughput.json",
        "python benchmarks/batch_throughput.py --seconds 3 --json benchmarks/results/batch_throughput.json",
        "2026-12-01", load="0.0 (idle; one process pinned to one core)"),
    "throughput": Source(
        "throughput.json", "python benchmarks/throughput.py --seconds 5 --json benchmarks/results/throughput.json",
        "2026-11-29", load="idle apart from the run (one process pinned to one core; not recorded as a number)"),
}


def _load(name: str) -> Any:
    return json.loads((RESULTS / name).read_text())


def _caption(source: Source) -> str:
    return (f"*Measured {source.date} on {source.machine}; load: {source.load}. Command: `{source.command}`. "
            f"Figures: `benchmarks/results/{source.file}`.*")


def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _signed(x: float, digits: int = 2) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def _rows(header: list[str], align: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _final_rows(results: list[dict[str, Any]]) -> str:
    """A training run's final evaluation (rows of allfives_training.report.history_row), as the run prints it."""
    rows = [[r["baseline"], str(r["games"]), f"{r['win_rate']:.3f}", f"[{r['win_rate_lo']:.3f}, {r['win_rate_hi']:.3f}]",
             f"{r['points_per_hand']:.2f}", f"[{r['points_per_hand_lo']:.2f}, {r['points_per_hand_hi']:.2f}]"]
            for r in results]
    return _rows(["baseline", "games", "win rate", "95% CI", "points/hand", "95% CI"],
                 ["---", "---:", "---:", "---", "---:", "---"], rows)


def default_run() -> str:
    """The front page's headline table: the default training run's final evaluation."""
    data = _load("default_run_evaluation.json")
    table = _final_rows(data["results"])
    return table + (f"\n\n*Measured {data['date']} on {data['machine']}; load: {data['load']}. Command: "
                    f"`{data['command']}` ({data['steps']:,} steps, {data['wall_minutes']} min wall, "
                    f"{data['learning_minutes']} of them learning at {data['env_steps_per_second']:,} env steps/s; "
                    f"{data['games']} games per baseline, seed {data['seed']}). Figures: "
                    f"`benchmarks/results/default_run_evaluation.json`.*")


def _final_evaluation(name: str) -> str:
    data = _load(SOURCES[name].file)
    rows = [[f"`{r['baseline']}`", f"{r['games']}", _pct(r["win_rate"]),
             f"[{100 * r['win_rate_lo']:.1f}, {100 * r['win_rate_hi']:.1f}]", _signed(r["points_per_hand"]),
             f"[{_signed(r['points_per_hand_lo'])}, {_signed(r['points_per_hand_hi'])}]"] for r in data["results"]]
    table = _rows(["opponent", "games", "win rate", "Wilson 95%", "points/hand", "95% CI"],
                  ["---", "---:", "---:", "---", "---:", "---"], rows)
    return table + f"\n\n({data['steps']:,} steps, seed {data['seed']}.) " + _caption(SOURCES[name])


def strength_ladder() -> str:
    data = _load(SOURCES["strength_ladder"].file)
    criteria = {"win rate >= 90%": "≥ 90%", "lower 95% > 50%": "lower end > 50%"}
    rows = [[r["match"], str(r["games"]), _pct(r["win_rate"]), f"{100 * r['ci'][0]:.1f} – {_pct(r['ci'][1])}",
             _signed(r["points_per_hand"], 1), f"{criteria.get(r['criterion'], r['criterion'])}: "
             f"{'pass' if r['passed'] else 'FAIL'}"] for r in data["ladder"]]
    table = _rows(["match-up", "games", "win rate", "Wilson 95%", "points per hand", "criterion"],
                  ["---", "---:", "---:", "---", "---:", "---"], rows)
    return table + f"\n\n(Seed {data['seed']}.) " + _caption(SOURCES["strength_ladder"])


def _tournament(name: str) -> str:
    data = _load(SOURCES[name].file)["result"]
    order = sorted(range(len(data["agents"])), key=lambda i: -data["ratings"][i])
    rows = []
    for rank, i in enumerate(order, 1):
        low, high = data["rating_ci"][i]
        anchor = data["agents"][i] == data["anchor"]
        rows.append([str(rank), data["agents"][i], "0" if anchor else f"{data['ratings'][i]:+.0f}",
                     "" if anchor else f"{low:+.0f} .. {high:+.0f}", _pct(data["scores"][i])])
    table = _rows(["rank", "agent", f"rating (Elo scale, {data['anchor']} = 0)", "95% CI", "score"],
                  ["---:", "---", "---:", "---", "---:"], rows)
    return table + "\n\n" + _caption(SOURCES[name])


def pimc_sift() -> str:
    rows_in = _load(SOURCES["pimc_sift"].file)["rows"]
    rows = []
    for r in rows_in[:5]:
        if r["spec"] != "pimc-sift":
            who = f"(`{r['spec']}` vs `{r['opponent']}`, the same deals)"
        elif r["players"] == 4:
            who = f"`{r['opponent']}` team, 4-player partnership"
        else:
            who = f"`{r['opponent']}`"
        rows.append([who, f"fresh, seed {r['seed']}", str(r["games"]), _pct(r["win_rate"]),
                     f"[{100 * r['win_rate_ci'][0]:.1f}, {100 * r['win_rate_ci'][1]:.1f}]", _signed(r["points_per_hand"]),
                     f"[{_signed(r['points_per_hand_ci'][0])}, {_signed(r['points_per_hand_ci'][1])}]",
                     f"{r['think_ms'][0]:.2f}", f"{r['think_ms'][1]:.2f}"])
    table = _rows(["opponent", "deals", "games", "win rate of the first", "Wilson 95%", "points/hand", "95% CI",
                   "ms/move first", "ms/move opponent"],
                  ["---", "---", "---:", "---:", "---", "---:", "---", "---:", "---:"], rows)
    return table + "\n\n" + _caption(SOURCES["pimc_sift"])


DISTILL_NAMES = {
    "pimc-sift": "`pimc-sift`",
    "pimc-sift (second seed)": "`pimc-sift`, another seed",
    "ppo-2p": "`ppo-2p`",
    "expert": "`expert`",
}


def _distill_name(agent: str, index: int) -> str:
    if agent in DISTILL_NAMES:
        return DISTILL_NAMES[agent]
    # the two clones were files of a throwaway training script, named by their recipe here
    return ("clone of 600,000 `pimc-sift` decisions (not shipped)" if "r1_hard" in agent
            else "the same, 4x wider network (not shipped)" if "r5_big" in agent else f"`{agent}`")


def distill_gap() -> str:
    data = _load(SOURCES["distill_gap"].file)
    rows = [[_distill_name(r["agent"], i), "(itself)" if r["agreement"] == 1.0 else _pct(r["agreement"]),
             f"{r['regret']:.2f}", _pct(r["blunders"])] for i, r in enumerate(data["rows"])]
    table = _rows(["agent", f"agrees with `{data['teacher']}`", "regret, points a decision", "regret > 20 points"],
                  ["---", "---:", "---:", "---:"], rows)
    return table + (f"\n\n({data['rows'][0]['decisions']} decisions, seed {data['seed']}, reference search "
                    f"`{data['reference']}` plus `pimc`'s `expert` prior.) " + _caption(SOURCES["distill_gap"]))


def _ms(x: float) -> str:
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def openspiel_ladder() -> str:
    data = _load(SOURCES["openspiel_ladder"].file)
    rows = []
    for r in data["rows"]:
        low, high = r["win_rate_ci"]
        plo, phi = r["points_per_hand_ci"]
        rows.append([r["setup"], f"`{r['ours']}`", f"`{r['opponent']}`", str(r["games"]),
                     f"{_pct(r['win_rate'])} [{_pct(low)}, {_pct(high)}]",
                     f"{r['points_per_hand']:+.2f} [{plo:+.2f}, {phi:+.2f}]", _ms(r["think_ms"][0]), _ms(r["think_ms"][1])])
    table = _rows(["players", "ours", "vs", "games", "win rate of ours [95% CI]",
                   "points/hand, ours minus ISMCTS [95% CI]", "ms/move ours", "ms/move ISMCTS"],
                  ["---", "---", "---", "---:", "---", "---", "---:", "---:"], rows)
    return table + f"\n\n(Seed {data['seed']}.) " + _caption(SOURCES["openspiel_ladder"])


def _k(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k"


def batch_throughput() -> str:
    data = _load(SOURCES["batch_throughput"].file)
    targets = {key.split()[0]: key[len(key.split()[0]):].strip() for key in data["targets"]}
    rows = [
        ["`engine_decisions_per_s` (the Python `core.Game`, same loop)", _k(data["engine_decisions_per_s"]), ""],
        ["`batch_decisions_per_s` (masks + step)", _k(data["batch_decisions_per_s"]), targets.get("batch_decisions_per_s", "")],
        ["`ratio_vs_engine`", f"{data['ratio_vs_engine']:.1f}×", targets.get("ratio_vs_engine", "")],
        ["`batch_obs_decisions_per_s` (also `.observe` of the seat to act)", _k(data["batch_obs_decisions_per_s"]),
         targets.get("batch_obs_decisions_per_s", "")],
        ["`batch_obs_ratio_vs_engine`", f"{data['batch_obs_ratio_vs_engine']:.1f}×", ""],
        ["`cold_start_s` (a fresh process, empty numba cache: import, compile, first step)", f"{data['cold_start_s']:.1f} s",
         "reported"],
        ["`warm_start_s` (a later process, cache on disk)", f"{data['warm_start_s']:.2f} s", targets.get("warm_start_s", "")],
    ]
    table = _rows(["key", "measured", "target"], ["---", "---:", "---:"], rows)
    return table + (f"\n\n({data['players']} players, default rules, random legal play, n = {data['n']}.) "
                    + _caption(SOURCES["batch_throughput"]))


THROUGHPUT_ROWS = [
    ("engine", "(a) engine alone (`Game.step`)"),
    ("raw_env", "(b) AEC loop on `raw_env` (`last()` with observation and mask, sample, `step`)"),
    ("env", "(c) the same loop through `env()` (PettingZoo's wrappers)"),
    ("os_noobs", "OpenSpiel `python_block_dominoes`, no observation"),
    ("os_obs", "OpenSpiel `python_block_dominoes` + `state.observation_tensor()`"),
    ("c4_raw", "PettingZoo `connect_four_v3.raw_env()`"),
    ("c4_env", "PettingZoo `connect_four_v3.env()`"),
]


def throughput() -> str:
    data = _load(SOURCES["throughput"].file)
    rate = {(r["key"], r["players"]): r["rate"] for r in data["results"]}
    rows = [[label, _k(rate[(key, 2)]) if (key, 2) in rate else "",
             _k(rate[(key, 4)]) if (key, 4) in rate else ""] for key, label in THROUGHPUT_ROWS]
    table = _rows(["loop (decisions/s)", "2 players", "4 players"], ["---", "---:", "---:"], rows)
    return table + (f"\n\n(Python {data['python']}, numpy {data['numpy']}, {data['seconds']:.0f} s a loop.) "
                    + _caption(SOURCES["throughput"]))


def _self_described(data: dict[str, Any], file: str) -> str:
    """The caption of a result file that records its own command, date, machine and load."""
    load = data.get("load_at_start", data.get("load", NOT_RECORDED))
    return (f"*Measured {data['date']} on {data.get('machine', MACHINE)}; load: {load}. Command: "
            f"`{data['command']}`. Figures: `benchmarks/results/{file}`.*")


def vector_throughput() -> str:
    """The vector env against Gymnasium's SyncVectorEnv, in one run (benchmarks/vector_throughput.py)."""
    data = _load("vector_throughput.json")
    rows = [[f"vector env, {data['num_envs']} games, `random` opponents", _k(data["vector_steps_per_s"]), "≥ 500k"],
            [f"vector env, {data['num_envs']} games, `expert` opponents", _k(data["vector_steps_per_s_expert"]), ""],
            [f"`SyncVectorEnv` of {data['sync_envs']} one-game envs, `random` opponents",
             f"{data['sync_vector_steps_per_s'] / 1e3:.1f}k", ""],
            ["ratio, vector env / `SyncVectorEnv`", f"{data['ratio_vs_sync']:.1f}×", "≥ 30×"]]
    table = _rows(["learner steps/s (one pinned core)", "measured", "target"], ["---", "---:", "---:"], rows)
    return table + "\n\n" + _self_described(data, "vector_throughput.json")


def selfplay_throughput() -> str:
    """The self-play env's decisions/s against the vector env's learner steps/s, in one run
    (benchmarks/selfplay_throughput.py)."""
    data = _load("selfplay_throughput.json")
    rows = [[f"self-play env, {data['num_envs']} games, every seat acted for (decisions/s)",
             _k(data["selfplay_decisions_per_s"]), f"≥ {_k(data['target_decisions_per_s'])}"],
            [f"vector env, {data['num_envs']} games, `random` opponents (learner steps/s)",
             _k(data["vector_steps_per_s"]), ""],
            ["ratio, self-play env / vector env", f"{data['ratio_vs_vector']:.2f}×", ""],
            ["build and first reset (numba cache warm)", f"{data['first_reset_s']:.2f} s", ""]]
    table = _rows(["one pinned core, observations on", "measured", "target"], ["---", "---:", "---:"], rows)
    return table + "\n\n" + _self_described(data, "selfplay_throughput.json")


def _ci(low: float, high: float) -> str:
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def selfplay_gate() -> str:
    """A self-play run's snapshots against ``pimc`` on fresh duplicate deals, beside the run's own evaluations
    against its baselines (benchmarks/selfplay_gate.py)."""
    data = _load("selfplay_gate.json")
    gate = [[f"{row['update']:,}", f"{row['decisions'] / 1e6:.1f}M", f"{_pct(row['win_rate'])} "
             f"{_ci(row['win_rate_lo'], row['win_rate_hi'])}", str(row["games"])] for row in data["rows"]]
    table = _rows(["update", "learner decisions", f"win rate vs `{data['opponent']}` (95% CI)", "games"],
                  ["---:", "---:", "---", "---:"], gate)
    baselines = sorted({row["baseline"] for row in data["evaluations"]})
    by_step: dict[int, dict[str, dict[str, Any]]] = {}
    for row in data["evaluations"]:
        by_step.setdefault(row["decisions"], {})[row["baseline"]] = row
    curve = [[f"{step / 1e6:.1f}M"] + [(f"{_pct(found[b]['win_rate'])} {_ci(found[b]['win_rate_lo'], found[b]['win_rate_hi'])}"
                                        if b in found else "") for b in baselines]
             for step, found in sorted(by_step.items())]
    games = sorted({row["games"] for row in data["evaluations"]})
    curve_table = _rows(["learner decisions"] + [f"vs `{b}`" for b in baselines], ["---:"] + ["---"] * len(baselines),
                        curve)
    return (table + "\n\n" + _self_described(data, "selfplay_gate.json") + "\n\nThe same run's own evaluations ("
            + "/".join(str(g) for g in games) + " duplicate games on its evaluation seed):\n\n" + curve_table)


def selfplay_ablation() -> str:
    """The recipe with each part switched off in turn, one budget and one final evaluation
    (benchmarks/selfplay_ablation.py)."""
    data = _load("selfplay_ablation.json")
    rows = []
    for row in data["rows"]:
        diff = ("" if "vs_full" not in row else
                f"{_signed(100 * row['vs_full'], 1)} [{_signed(100 * row['vs_full_ci'][0], 1)}, "
                f"{_signed(100 * row['vs_full_ci'][1], 1)}]")
        rows.append([f"`{row['arm']}`", row["meaning"], f"{row['decisions'] / 1e6:.1f}M" if row["decisions"] else "0",
                     f"{_pct(row['win_rate'])} {_ci(*row['win_rate_ci'])}",
                     f"{row['points_per_hand']:.2f}", diff])
    table = _rows(["arm", "what is off", "learner decisions", f"win rate vs `{data['opponent']}` (95% CI)",
                   "points/hand", "minus `full` (win-rate points, 95% CI)"], ["---", "---", "---:", "---", "---:", "---"], rows)
    return (table + f"\n\n*{data['games']:,} duplicate games per arm on seed {data['seed']} (no training game uses "
            f"it); training seed {data['train_seed']}; clones of {data['clone_decisions']:,} positions a round.*\n\n"
            + _self_described(data, "selfplay_ablation.json"))


def torchrl_ppo() -> str:
    """examples/torchrl_ppo.py's run: the trained policy against ``random`` on fresh evaluation seeds."""
    data = _load("torchrl_ppo.json")
    rows = [[f"`random`, evaluation seed {r['eval_seed']}", str(r["games"]), _pct(r["win_rate"]),
             f"[{_pct(r['win_rate_lo'])}, {_pct(r['win_rate_hi'])}]"] for r in data["results"]]
    table = _rows(["opponent", "games", "win rate", "95% CI"], ["---", "---:", "---:", "---"], rows)
    return table + (f"\n\n({data['config']['frames']:,} frames, {data['train_seconds'] / 60:.1f} min of training, "
                    f"{data['wall_seconds'] / 60:.1f} min wall with the evaluations.) "
                    + _self_described(data, "torchrl_ppo.json"))


def _evaluations(evaluations: list[dict[str, Any]]) -> str:
    """An example's evaluation rows: opponent, seed, games, win rate and its Wilson 95% interval."""
    rows = [[f"`{e['opponent']}`", str(e["seed"]), str(e["games"]), _pct(e["win_rate"]),
             f"[{_pct(e['win_rate_ci'][0])}, {_pct(e['win_rate_ci'][1])}]"] for e in evaluations]
    return _rows(["opponent", "evaluation seed", "games", "win rate", "95% CI"], ["---", "---:", "---:", "---:", "---"],
                 rows)


def cleanrl_ppo() -> str:
    """examples/cleanrl_ppo.py's default run (benchmarks/cleanrl_speed.py --full)."""
    data = _load("cleanrl_ppo.json")
    run = data["full_run"]
    load = data["speed"]["loadavg_before_each"][-1][0] if data["speed"].get("loadavg_before_each") else NOT_RECORDED
    return _evaluations(run["evaluations"]) + (
        f"\n\n(`python examples/cleanrl_ppo.py`: {run['global_step']:,} learner steps in {run['train_seconds']:.0f} s of "
        f"training, {run['steps_per_second']:,.0f} env steps/s; {run['process_wall_seconds'] / 60:.1f} min wall with the "
        f"evaluations.) *Measured {data['date']} on {MACHINE}; load: {load} before the run. "
        f"Command: `{data['command']}`. Figures: `benchmarks/results/cleanrl_ppo.json`.*")


def cleanrl_speed() -> str:
    """The example's env steps/s against configs/default.yaml's, alternating rounds in fresh processes."""
    data = _load("cleanrl_ppo.json")
    kinds = data["speed"]["kinds"]
    labels = {"sb3-default": "`configs/default.yaml` (MaskablePPO, 128 games × 64 steps, 128-wide MLPs, 4 epochs)",
              "cleanrl": "`examples/cleanrl_ppo.py` defaults (512 games × 32 steps, 64-wide MLPs, 2 epochs)",
              "cleanrl-sb3-settings": "`examples/cleanrl_ppo.py` with `default.yaml`'s sizes (128 × 64, 128 wide, 4 epochs)"}
    rows = [[labels.get(name, name), f"{k['median']:,.0f}", " / ".join(f"{r:,.0f}" for r in k["rounds"]),
             f"{k['ratio_to_sb3_default_median']:.2f}×"] for name, k in kinds.items()]
    loads = [round(l[0], 1) for l in data["speed"].get("loadavg_before_each", [])]
    table = _rows(["run", "env steps/s (median)", "rounds", "vs `default.yaml`"], ["---", "---:", "---", "---:"], rows)
    return table + (f"\n\n*Measured {data['date']} on {MACHINE}; load before each run: "
                    f"{', '.join(map(str, loads)) or NOT_RECORDED}. Command: `{data['command']}`. "
                    "Figures: `benchmarks/results/cleanrl_ppo.json`.*")


def sb3_vector_example() -> str:
    """examples/sb3_vector.py's default run (benchmarks/cleanrl_speed.py --sb3-example)."""
    data = _load("sb3_vector_example.json")
    run = data["sb3_example"]
    return _evaluations(run["evaluations"]) + (
        f"\n\n(`{run['command']}`: {run['global_step']:,} learner steps in {run['train_seconds']:.0f} s of "
        f"`model.learn`, {run['steps_per_second']:,.0f} env steps/s; {run['process_wall_seconds'] / 60:.1f} min wall "
        f"with the evaluations.) *Measured {data['date']} on {MACHINE}; load: "
        f"{run['loadavg_before'][0]} before the run. Command: `{data['command']}`. "
        "Figures: `benchmarks/results/sb3_vector_example.json`.*")


def _rllib_run(name_start: str) -> dict[str, Any]:
    data = _load("rllib_default_run.json")
    return next(r for r in data["runs"] if r["name"].startswith(name_start))


def rllib_default_run() -> str:
    """``allfives train-rllib`` (configs/rllib_default.yaml as shipped): final evaluation and fresh deals."""
    data = _load("rllib_default_run.json")
    run = _rllib_run("2 env runners")
    table = _final_rows(run["final_evaluation_seed_12345"])
    fresh = "; ".join(f"seed {f['seed']}: {_pct(f['win_rate'])} [{_pct(f['win_rate_ci'][0])}, {_pct(f['win_rate_ci'][1])}]"
                      for f in run["fresh_deals_vs_greedy"])
    return table + (f"\n\n({run['iterations']} iterations, {run['env_steps']:,} learner steps in "
                    f"{run['wall_seconds'] / 60:.1f} min wall, start-up and evaluations included, "
                    f"{run['env_steps_per_second_after_first_iteration']:,.0f} env steps/s after the first iteration. "
                    f"Against `greedy` on fresh deals, 1000 games each: {fresh}.) *Measured {data['date']} on {MACHINE}; "
                    f"load: {run['loadavg_before'].split()[0]} before the run. Command: `allfives train-rllib`; fresh "
                    f"deals: `{data['fresh_deals_command']}`. Figures: `benchmarks/results/rllib_default_run.json`.*")


def rllib_throughput() -> str:
    """Env steps/s of the default RLlib config with 1 and 2 env runners (benchmarks/rllib_throughput.py)."""
    data = _load("rllib_throughput.json")
    rows = [[str(r["env_runners"]), str(r["envs_per_runner"]), f"{r['env_steps_per_s']:,.0f}",
             f"{r['sampling_env_steps_per_s']:,.0f}"] for r in data["rows"]]
    loads = ", ".join(f"{r['loadavg_1min_before']:.1f}" for r in data["rows"])
    table = _rows(["env runners", "games per runner", "training iterations (env steps/s)", "sampling alone (env steps/s)"],
                  ["---:", "---:", "---:", "---:"], rows)
    return table + (f"\n\n*Measured {data['date']} on {MACHINE}; load before each: {loads}. Command: "
                    "`python benchmarks/rllib_throughput.py --iterations 8`. Figures: "
                    "`benchmarks/results/rllib_throughput.json`.*")


def serve_load() -> str:
    """50 web games at once against a real ``allfives serve`` process (benchmarks/serve_load.py)."""
    data = _load("serve_load.json")
    rows = [["games played to the end at once", str(data["games"])], ["finished / replays verified",
             f"{data['finished']} / {data['verified']}"], ["requests (all kinds)", f"{data['requests']:,}"],
            ["the person's moves", f"{data['moves']:,}"],
            ["move latency p50 / p95 / p99", f"{data['move_p50_ms']:.1f} / {data['move_p95_ms']:.1f} / "
                                             f"{data['move_p99_ms']:.1f} ms"],
            ["requests per second", f"{data['requests_per_second']:,.0f}"]]
    large = data.get("with_large_fetches")
    if large:  # the same load again while clients loop-fetch the largest game a web game may be
        rows += [[f"move latency p50 / p95 / p99 while {large['large_fetchers']} clients loop-fetch the largest "
                  "web game", f"{large['move_p50_ms']:.1f} / {large['move_p95_ms']:.1f} / {large['move_p99_ms']:.1f} ms"],
                 ["the largest web game: frames / pages / MB",
                  f"{large['large_game_frames']:,} / {large['large_game_pages']} / {large['large_game_mb']:.1f}"],
                 ["one whole fetch of it, page by page (p50)", f"{large['large_fetch_p50_ms'] / 1000:.1f} s"]]
    table = _rows(["", "measured"], ["---", "---:"], rows)
    return table + "\n\n" + _self_described({**data, "machine": MACHINE}, "serve_load.json")


def training_speed() -> str:
    """SB3 training with the batch vec env against single-seat envs in the training process, alternating
    rounds in fresh processes (benchmarks/training_speed.py --compare dummy,batch)."""
    rows, captions = [], []
    for file in ("training_speed_compare_default.json", "training_speed_compare_ppo_2p.json"):
        data = _load(file)
        base, batch = data["kinds"]["dummy"], data["kinds"]["batch"]
        rows.append([f"`{data['config']}`", f"{base['median']:,.0f}", f"{batch['median']:,.0f}",
                     f"{batch['ratio_median']:.2f}×",
                     " / ".join(f"{b / a:.2f}" for a, b in zip(base["rounds"], batch["rounds"]))])
        captions.append(f"`{data['command']}` (load {data['load_at_start']} at the start)")
    table = _rows(["config", "`dummy` (env steps/s, median)", "`batch` (median)", "ratio (median of rounds)",
                   "ratio per round"], ["---", "---:", "---:", "---:", "---"], rows)
    return table + (f"\n\n*Measured {data['date']} on {MACHINE}, learning alone, {data['steps']:,} env steps a round. "
                    f"Commands: {'; '.join(captions)}. Figures: `benchmarks/results/training_speed_compare_*.json`.*")


def front_ends() -> str:
    """Learner env steps/s of each training vec env kind through SB3's interface (benchmarks/front_ends.py)."""
    data = _load("front_ends.json")
    kinds = [k for k in ("batch", "dummy", "subproc") if any(r["kind"] == k for r in data["results"])]
    figures = {(r["opponent"], r["n_envs"], r["kind"]): r["steps_per_s"] for r in data["results"]}
    cases = sorted({(r["opponent"], r["n_envs"]) for r in data["results"]},
                   key=lambda case: ([r["opponent"] for r in data["results"]].index(case[0]), case[1]))
    rows = [[opponent, str(n_envs)] + [("refused" if figures.get((opponent, n_envs, kind)) is None
                                        else f"{figures[(opponent, n_envs, kind)]:,.0f}") for kind in kinds]
            for opponent, n_envs in cases]
    table = _rows(["opponents", "n_envs"] + [f"`{k}`" for k in kinds], ["---", "---:"] + ["---:"] * len(kinds), rows)
    return table + "\n\n" + _self_described(data, "front_ends.json")


def observation_pieces() -> str:
    """The observation slices, from the one declaration the encoders build from."""
    from allfives_env.encoding import OBSERVATION_PIECES

    rows = [[f"`{p.name}`", p.shape.replace(" x ", " × "), str(p.since), p.meaning.replace("``", "`")]
            for p in OBSERVATION_PIECES]
    return _rows(["slice", "size", "from version", "meaning"], ["---", "---", "---:", "---"], rows)


def observation_offsets() -> str:
    """``allfives layout``'s table for the default 2-player rules, with the action features."""
    from allfives_env.encoding import observation_table

    return "```text\n" + observation_table(action_features=True) + "\n```"


def _bench_agent(card: dict[str, Any]) -> str:
    """A card's agent as the leaderboard shows it: its spec, or the policy file for a ``ppo:path=`` spec."""
    if card["agent"].startswith("ppo:") and card.get("policy"):
        return f"`ppo` ({card['policy']['file']})"
    return f"`{card['agent']}`"


def _bench_leaderboard(track: str) -> str:
    """One track's leaderboard, from the bench cards of ``benchmarks/results/bench/`` (protocol 1, full runs)."""
    from allfives_env.bench import OPPONENTS, load_leaderboard

    cards = load_leaderboard(RESULTS / "bench")[track]
    if not cards:
        return f"*No {track} card yet.*"
    names = [o.split(":")[0] for o in OPPONENTS]
    rows = []
    for rank, card in enumerate(cards, start=1):
        rating = card["rating"]
        by = {row["opponent"]: row for row in card["opponents"]}
        cells = [_pct(by[o]["win_rate"]) for o in OPPONENTS]
        think = card["think_ms"]
        rows.append([str(rank), _bench_agent(card), f"{rating['elo']:.0f} [{rating['ci'][0]:.0f}, {rating['ci'][1]:.0f}]",
                     *cells, f"{think['median']:.3g} / {think['p99']:.3g}"])
    table = _rows(["#", "agent", "rating (95% CI)", *[f"vs `{n}`" for n in names], "think ms (median / p99)"],
                  ["---:", "---", "---", *["---:"] * len(names), "---:"], rows)
    measured = "; ".join(
        f"{_bench_agent(c)} {c['run']['date']} on " + " and ".join(
            sorted({f"{p['machine']} with {p['cpus']} CPUs ({p['python']}, {p['processes']} processes)"
                    for p in c["run"]["parts"]})) for c in cards)
    return (table + f"\n\n*Each row is a bench card in `benchmarks/results/bench/` (`allfives bench AGENT --track {track} "
            f"--json benchmarks/results/bench/AGENT-{track}.json`), protocol 1, {cards[0]['suite']['deals']} deals per "
            f"opponent. Measured: {measured}.*")


def bench_anchors() -> str:
    """The opponents' frozen ratings (the scale of every card), with the round robin they were fitted from."""
    from allfives_env.bench import ANCHORS, OPPONENTS

    data = _load("bench_anchors.json")
    rows = [[f"`{o}`", *[f"{ANCHORS[t][o]:.0f}" for t in ("2p", "3p", "4p")]] for o in OPPONENTS]
    table = _rows(["opponent", "2p", "3p", "4p"], ["---", "---:", "---:", "---:"], rows)
    games = ", ".join(f"{t}: {sum(p['games'] for p in d['pairs']):,} games"
                      for t, d in data["tracks"].items())
    return (table + f"\n\n*Fitted {data['date']} on an {data['machine']} machine with {data['processes']} worker processes "
            f"({data['python']}) from a round robin of the opponents on deals of seed {data['seed']} (no suite's), "
            f"{data['tracks']['2p']['sets']} duplicate sets a pair ({games}). Command: `python benchmarks/bench_anchors.py "
            f"--tracks 2p,3p,4p --sets {data['tracks']['2p']['sets']} --processes {data['processes']} --json "
            "benchmarks/results/bench_anchors.json`. Figures: `benchmarks/results/bench_anchors.json`.*")


def bench_exploit() -> str:
    """Exploitability (``allfives exploit``): each report in ``benchmarks/results/exploit/``."""
    reports = [json.loads(p.read_text()) for p in sorted((RESULTS / "exploit").glob("*.json"))]
    if not reports:
        return "*No exploitability report yet.*"
    rows = [[f"`{r['policy']}`", str(r["players"]), f"{r['steps'] / 1e6:.1f}M", f"{r['games']:,}",
             f"{_pct(r['win_rate'])} [{100 * r['win_rate_ci'][0]:.1f}, {100 * r['win_rate_ci'][1]:.1f}]",
             _signed(100 * r["exploitability"], 1), f"{r['seconds'] / 60:.0f} min"] for r in reports]
    table = _rows(["frozen agent", "players", "best response's training", "games", "best response's win rate (95% CI)",
                   "above the even share (points)", "time"],
                  ["---", "---:", "---:", "---:", "---", "---:", "---:"], rows)
    measured = "; ".join(f"`{r['policy']}` {r['date']} on {r['machine']} ({r['python']})" for r in reports)
    return (table + "\n\n*Each row: `allfives exploit AGENT --steps 5000000 --players 2 --games 2000 --processes 1 "
            "--json benchmarks/results/exploit/AGENT-2p.json`, on the 2-core reference machine while other benchmarks "
            f"shared it. Measured: {measured}. Figures: `benchmarks/results/exploit/`.*")


def nashconv() -> str:
    """Exact NashConv on the miniature (``allfives nashconv``), from ``benchmarks/results/nashconv.json``."""
    data = _load("nashconv.json")
    rows = [[f"`{r['agent']}`" if not r["agent"].startswith("ppo:") else "`ppo` (trained on the miniature)",
             f"{r['nash_conv']:.3f}"] for r in data["agents"]]
    cfr_plus = data.get("cfr_plus")
    if cfr_plus:
        rows.append([f"CFR+, {cfr_plus['iterations']} iterations", f"{cfr_plus['nash_conv']:.4f}"])
    table = _rows(["policy", "NashConv (points)"], ["---", "---:"], rows)
    agents = " ".join(r["agent"] for r in data["agents"])
    command = f"allfives nashconv {agents}" + (f" --cfr-iterations {cfr_plus['iterations']}" if cfr_plus else "")
    return (table + f"\n\n*Measured {data['date']} on {MACHINE} while other benchmarks shared it. Command: "
            f"`{command} --json benchmarks/results/nashconv.json`. Figures: `benchmarks/results/nashconv.json`.*")


def _estimate(stat: dict[str, Any]) -> str:
    return f"{stat['value']:.0f} [{stat['ci'][0]:.0f}, {stat['ci'][1]:.0f}]"


def _last_point(band: list[dict[str, Any]]) -> str:
    if not band:
        return ""
    last = band[-1]
    return f"{_pct(last['iqm'])} [{_pct(last['ci'][0])}, {_pct(last['ci'][1])}]"


def baselines_over_seeds() -> str:
    """The three training recipes over seeds (benchmarks/baselines_over_seeds.py): the final bench rating's IQM
    and mean with rliable's 95% intervals, each seed's rating, the final win rate against ``expert``."""
    data = _load("baselines_over_seeds.json")
    rows = []
    for name, result in data["recipes"].items():
        runs = result["runs"]
        seconds = sorted(r["train_seconds"] for r in runs if r["train_seconds"] is not None)
        rows.append([data["labels"][name], str(len(runs)), _estimate(result["rating"]["iqm"]),
                     _estimate(result["rating"]["mean"]),
                     ", ".join(f"{r['rating']:.0f}" for r in runs),
                     _last_point(result["curves"]["expert"]),
                     f"{seconds[len(seconds) // 2] / 60:.1f}" if seconds else ""])
    table = _rows(["recipe", "seeds", "bench rating IQM (95% CI)", "mean (95% CI)", "each seed's rating",
                   "final win rate vs `expert`, IQM (95% CI)", "training min (median)"],
                  ["---", "---:", "---", "---", "---", "---", "---:"], rows)
    bench = "`allfives bench ppo:path=POLICY --track 2p" + (" --quick`" if data["bench"] == "quick" else "`")
    return (table + f"\n\n*Measured {data['date']} on {MACHINE} ({data['machine']}) while other benchmarks shared it, so the "
            "training times are upper bounds. Command: "
            f"`{data['command']}`; training seeds {', '.join(map(str, data['seeds']))}; each final policy benched "
            f"by {bench}; intervals: rliable's stratified bootstrap over seeds, {data['reps']:,} resamples. The final "
            f"win rate is the recipe's own final evaluation (1000 games, seed {data['curve_seed']}). "
            "Figures: `benchmarks/results/baselines_over_seeds.json`.*")


TABLES: dict[str, Callable[[], str]] = {
    "front_ends": front_ends,
    "default_run": default_run,
    "strength_ladder": strength_ladder,
    "tournament_2p": lambda: _tournament("tournament_2p"),
    "tournament_4p": lambda: _tournament("tournament_4p"),
    "pimc_sift": pimc_sift,
    "distill_gap": distill_gap,
    "openspiel_ladder": openspiel_ladder,
    "ppo_2p_final": lambda: _final_evaluation("ppo_2p_final"),
    "ppo_3p_final": lambda: _final_evaluation("ppo_3p_final"),
    "ppo_4p_final": lambda: _final_evaluation("ppo_4p_final"),
    "batch_throughput": batch_throughput,
    "throughput": throughput,
    "vector_throughput": vector_throughput,
    "selfplay_throughput": selfplay_throughput,
    "selfplay_gate": selfplay_gate,
    "selfplay_ablation": selfplay_ablation,
    "torchrl_ppo": torchrl_ppo,
    "cleanrl_ppo": cleanrl_ppo,
    "cleanrl_speed": cleanrl_speed,
    "sb3_vector_example": sb3_vector_example,
    "rllib_default_run": rllib_default_run,
    "rllib_throughput": rllib_throughput,
    "serve_load": serve_load,
    "training_speed": training_speed,
    "observation_pieces": observation_pieces,
    "observation_offsets": observation_offsets,
    "bench_leaderboard_2p": lambda: _bench_leaderboard("2p"),
    "bench_leaderboard_3p": lambda: _bench_leaderboard("3p"),
    "bench_leaderboard_4p": lambda: _bench_leaderboard("4p"),
    "bench_anchors": bench_anchors,
    "bench_exploit": bench_exploit,
    "nashconv": nashconv,
    "baselines_over_seeds": baselines_over_seeds,
}


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every markdown page of the site."""
    return [root / "README.md"] + sorted((root / "docs").rglob("*.md"))


def published(text: str) -> dict[str, str]:
    """The tables a page publishes: marker name -> the text between its markers."""
    return {m.group(1): m.group(2) for m in MARKER.finditer(text)}


def render(text: str, make: Optional[dict[str, str]] = None) -> str:
    """``text`` with every marked table replaced by what its generator makes now."""
    made = make if make is not None else {}

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise KeyError(f"table:{name} has no generator; known: {', '.join(sorted(TABLES))}")
        if name not in made:
            # blank lines around the table: a marker comment glued to it would swallow it as raw HTML
            made[name] = "\n" + TABLES[name]().strip("\n") + "\n\n"
        return f"<!-- table:{name} begin -->\n{made[name]}<!-- table:{name} end -->"

    return MARKER.sub(one, text)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table differs")
    args = parser.parse_args(argv)
    made: dict[str, str] = {}
    stale = []
    for page in pages():
        text = page.read_text()
        new = render(text, made)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    verb = "differ from their JSON" if args.check else "rewritten"
    print(f"{len(stale)} page(s) {verb}: {', '.join(map(str, stale)) or 'none'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
