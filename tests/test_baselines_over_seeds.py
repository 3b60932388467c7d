"""benchmarks/baselines_over_seeds.py: the rliable aggregates of the training recipes over seeds.

The training itself is the recipes' own (tested with them); here: the curves read from each recipe's files,
the IQM and its stratified-bootstrap interval against hand-computed values, the curve bands, the report a
set of finished runs gives, and the refusals of the command line.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rliable", reason="needs the stats extra: pip install -e '.[stats]'")

from benchmarks import baselines_over_seeds as bos  # noqa: E402

FIELDS = ["step", "baseline", "games", "win_rate", "win_rate_lo", "win_rate_hi", "points_per_hand",
          "points_per_hand_lo", "points_per_hand_hi", "final"]


def write_history(path: Path, rows: list[tuple[float, str, float, bool]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for step, baseline, rate, final in rows:
            w.writerow({"step": step, "baseline": baseline, "games": 200, "win_rate": rate, "win_rate_lo": 0,
                        "win_rate_hi": 1, "points_per_hand": 0, "points_per_hand_lo": 0, "points_per_hand_hi": 0,
                        "final": str(final)})


def test_history_curve_keeps_the_curve_opponents_and_prefers_the_final_row(tmp_path: Path) -> None:
    write_history(tmp_path / "h.csv", [(0, "random", 0.2, False), (0, "expert", 0.0, False),
                                       (10, "expert", 0.3, False), (10, "greedy", 0.5, False),
                                       (10, "expert", 0.4, True)])
    assert bos.history_curve(tmp_path / "h.csv") == {"expert": [(0, 0.0), (10, 0.4)], "greedy": [(10, 0.5)]}
    assert bos.history_curve(tmp_path / "h.csv", steps_per_unit=8192)["expert"] == [(0, 0.0), (81920, 0.4)]


def test_cleanrl_curve_ends_with_the_final_evaluation(tmp_path: Path) -> None:
    (tmp_path / "cleanrl.json").write_text(json.dumps({
        "args": {"curve_every": 1000, "total_timesteps": 3000}, "global_step": 2990,
        "curve": [{"step": 0, "opponent": "expert", "win_rate": 0.0},
                  {"step": 1024, "opponent": "expert", "win_rate": 0.25},
                  {"step": 2011, "opponent": "expert", "win_rate": 0.3}],
        "evaluations": [{"opponent": "expert", "seed": 12345, "win_rate": 0.5}]}))
    # each point at the multiple it passed, the final evaluation at the run's budget
    assert bos.cleanrl_curve(tmp_path) == {"expert": [(0, 0.0), (1000, 0.25), (2000, 0.3), (3000, 0.5)]}


def test_iqm_is_the_mean_of_the_middle_half_with_an_interval_around_it() -> None:
    found = bos.interval_estimates({"a": np.array([1.0, 2.0, 3.0, 4.0, 100.0])}, reps=2000)["a"]
    assert found["iqm"]["value"] == pytest.approx(3.0)  # 5 runs: the lowest and the highest trimmed
    assert found["mean"]["value"] == pytest.approx(22.0)
    assert set(found) == {"iqm", "mean"}
    for stat in found.values():
        low, high = stat["ci"]
        assert low <= stat["value"] <= high
    assert 1.0 <= found["iqm"]["ci"][0] and found["iqm"]["ci"][1] <= 100.0
    before = np.random.get_state()[1].copy()
    again = bos.interval_estimates({"a": np.array([1.0, 2.0, 3.0, 4.0, 100.0])}, reps=2000)["a"]
    assert again == found  # one seeded generator, so the same intervals every time
    assert (np.random.get_state()[1] == before).all()  # and numpy's global generator untouched
    same = bos.interval_estimates({"a": np.array([5.0] * 5)}, reps=500)["a"]["iqm"]
    assert same == {"value": 5.0, "ci": [5.0, 5.0]}


def test_curve_bands_use_the_steps_every_run_has() -> None:
    curves = [{"expert": [(0, 0.0), (10, 0.4), (20, 0.5)]}, {"expert": [(0, 0.0), (10, 0.2)]},
              {"expert": [(0, 0.1), (10, 0.3), (30, 0.9)]}]
    band = bos.curve_bands(curves, "expert", reps=500)
    assert [p["step"] for p in band] == [0, 10]
    assert band[1]["iqm"] == pytest.approx(0.3)  # IQM of 3 runs: the middle one (0.2, 0.3, 0.4 trimmed at a quarter)
    assert all(p["ci"][0] <= p["iqm"] <= p["ci"][1] for p in band)
    assert bos.curve_bands(curves, "greedy", reps=500) == []


def fake_run(work: Path, seed: int, elo: float) -> None:
    run = work / "sb3" / f"seed{seed}"
    run.mkdir(parents=True)
    (run / "evaluation.json").write_text("{}")
    (run / "driver_times.json").write_text(json.dumps({"train_seconds": 400.0 + seed}))
    write_history(run / "eval_history.csv", [(0, "expert", 0.0, False), (0, "greedy", 0.0, False),
                                             (100, "expert", elo / 2000, True), (100, "greedy", 0.9, True)])
    (run / "bench-quick.json").write_text(json.dumps({
        "rating": {"elo": elo, "ci": [elo - 40, elo + 40]}, "policy": {"sha256": "ab" * 32},
        "opponents": [{"opponent": "expert", "win_rate": elo / 2000}]}))


def test_report_of_finished_runs_leaves_unfinished_ones_out(tmp_path: Path) -> None:
    for seed, elo in ((0, 1100.0), (1, 1200.0), (2, 1150.0)):
        fake_run(tmp_path, seed, elo)
    journalled = tmp_path / "sb3" / "seed2" / "bench-quick.json.journal"
    journalled.write_text("")  # a bench still under way: that run is not finished
    (tmp_path / "sb3" / "seed3").mkdir()  # a run that has not finished training
    out, figure = tmp_path / "report.json", tmp_path / "curves.png"
    assert bos.main(["--report-only", "--bench", "quick", "--recipes", "sb3", "--seeds", "0,1,2,3", "--work", str(tmp_path),
                     "--json", str(out), "--figure", str(figure)]) == 0
    report = json.loads(out.read_text())
    sb3 = report["recipes"]["sb3"]
    assert sb3["seeds"] == [0, 1]
    assert [r["train_seconds"] for r in sb3["runs"]] == [400.0, 401.0]
    assert sb3["rating"]["mean"]["value"] == pytest.approx(1150.0)
    assert [p["step"] for p in sb3["curves"]["expert"]] == [0, 100]
    assert report["seeds"] == [0, 1, 2, 3] and report["bench"] == "quick" and report["command"].startswith("python ")
    assert "--set seed=SEED" in report["commands"]["sb3"]
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, flag", [
    (["--recipes", "sb3,dqn"], "--recipes"),
    (["--seeds", "0,x"], "--seeds"),
    (["--seeds", "0,0"], "--seeds"),
    (["--seeds", "12345"], "--seeds"),
    (["--processes", "0"], "--processes"),
])
def test_nonsense_is_refused_naming_the_flag(argv: list[str], flag: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        bos.parse_args(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_only_train_never_benches_and_only_bench_never_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[list[str]] = []
    def run_logged(command: list[str], log: Path) -> float:
        ran.append(list(command))
        (tmp_path / "sb3" / "seed7").mkdir(exist_ok=True)  # as a training run makes its folder
        return 1.0

    monkeypatch.setattr(bos, "run_logged", run_logged)
    recipe = bos.RECIPES["sb3"]
    bos.do_run(recipe, 7, tmp_path, full=True, processes=1, only="bench")
    assert ran == []  # not trained yet: nothing to bench
    bos.do_run(recipe, 7, tmp_path, full=True, processes=1, only="train")
    assert [c[:2] for c in ran] == [["allfives", "train"]] and "seed=7" in ran[0]
    (tmp_path / "sb3" / "seed7" / "evaluation.json").write_text("{}")  # the run finished
    ran.clear()
    bos.do_run(recipe, 7, tmp_path, full=True, processes=1, only="train")
    assert ran == []
    bos.do_run(recipe, 7, tmp_path, full=True, processes=1, only="bench")
    assert [c[:2] for c in ran] == [["allfives", "bench"]] and "--quick" not in ran[0]
    assert bos.parse_args([]).bench == "quick"
    assert ran[0][2] == f"ppo:path={tmp_path / 'sb3' / 'seed7' / 'policy.npz'}"


def test_the_driver_makes_the_folder_of_a_recipe_whose_command_does_not(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def run_logged(command: list[str], log: Path) -> float:
        export = Path(command[command.index("--export") + 1])
        assert export.parent.is_dir()  # the example refuses an --export into a folder that does not exist
        return 1.0

    monkeypatch.setattr(bos, "run_logged", run_logged)
    bos.do_run(bos.RECIPES["cleanrl"], 3, tmp_path, full=False, processes=1, only="train")
    assert (tmp_path / "cleanrl" / "seed3" / "driver_times.json").is_file()
