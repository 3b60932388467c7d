"""Training: a seconds-long smoke run of configs/tiny.yaml, resuming a killed run, config validation and the
league mixture."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]

from allfives_env.agents import make_agent  # noqa: E402
from allfives_env.policy import load_policy  # noqa: E402
from allfives_training.config import ConfigError, load_config, validate_config  # noqa: E402
from allfives_training.league import League  # noqa: E402
from allfives_training.train import latest_checkpoint, train  # noqa: E402

TINY = ROOT / "configs" / "tiny.yaml"


def test_tiny_run_trains_evaluates_and_writes_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    summary = train(TINY, run_dir=str(run), progress=False)
    out = capsys.readouterr().out
    assert summary["steps"] == 1024 and summary["trained_steps"] == 1024
    assert "env steps/s" in out and "| random |" in out and "| greedy |" in out
    for name in ("config.yaml", "policy.npz", "evaluation.md", "evaluation.csv", "evaluation.json",
                 "eval_history.csv", "summary.json"):
        assert (run / name).is_file(), name
    assert list((run / "tb").glob("events.out.tfevents.*")), "TensorBoard logs"
    pytest.importorskip("matplotlib")
    assert (run / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"
    # evaluations at 0, 512 and the final one at 1024, against both baselines
    history = (run / "eval_history.csv").read_text().splitlines()
    assert len(history) == 1 + 3 * 2
    # league snapshots joined the mixture; the newest checkpoint is the finished run
    assert sorted(p.name for p in (run / "league").glob("*.npz")) == [
        "snapshot_0000000256.npz", "snapshot_0000000512.npz", "snapshot_0000000768.npz"]
    step, _, state = latest_checkpoint(run)
    assert step == 1024 and state["finished"] and len(state["league"]["snapshots"]) == 3
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [  # checkpoint.keep; no pickle
        "step_0000000768.json", "step_0000000768.safetensors", "step_0000001024.json", "step_0000001024.safetensors"]
    # sample games of the final evaluation, saved as replays that verify
    from allfives_env.core.replay import load_replay

    for baseline in ("random", "greedy"):
        replays = sorted((run / "replays" / baseline).glob("game_*.json"))
        assert len(replays) == 2 and load_replay(replays[0]).over
    # the exported policy is a user-loadable agent
    agent = make_agent(f"ppo:path={run / 'policy.npz'}")
    assert agent.policy.header["metadata"]["step"] == 1024
    load_policy(run / "policy.npz", {"num_players": 2, "target": 60})
    # resuming a finished run does nothing but show its table
    again = train(TINY, resume=str(run), progress=False)
    assert again.get("already_finished") and "| random |" in capsys.readouterr().out


def test_killed_run_resumes_from_its_last_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "killed"
    cmd = [sys.executable, "-m", "allfives_training.train", "--config", str(TINY), "--run-dir", str(run), "--no-progress",
           "--set", "total_steps=1000000", "--set", "evaluation.every=256", "--set", "output.tensorboard=false"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            latest = latest_checkpoint(run)
            if latest is not None and latest[0] >= 512:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the trainer and its workers, no chance to clean up
        proc.wait()
    step, _, state = latest_checkpoint(run)
    assert step >= 512 and not state["finished"]
    evaluated = sorted({r["step"] for r in state["history"]})
    assert evaluated[:3] == [0, 256, 512]
    target = step + 512
    summary = train(TINY, resume=str(run), overrides=[f"total_steps={target}"], progress=False)
    out = capsys.readouterr().out
    assert f"resuming {run} at {step:,} steps" in out
    assert summary["trained_steps"] == target - step and summary["steps"] == target  # no step lost, none redone
    final = latest_checkpoint(run)[2]
    steps = [r["step"] for r in final["history"] if r["baseline"] == "random" and not r["final"]]
    assert steps == sorted(set(steps)) and set(evaluated) <= set(steps) and max(steps) > step  # history kept
    assert len(final["league"]["snapshots"]) >= len(state["league"]["snapshots"])  # league kept


def _bad(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_config_errors_name_the_key_the_value_and_what_is_allowed(tmp_path: Path) -> None:
    assert "ppo.learning_rat" not in _bad(tmp_path, "ppo: {learning_rat: 0.1}")
    msg = _bad(tmp_path, "ppo: {learning_rat: 0.1}")
    assert "bad.yaml: ppo: unknown key 'learning_rat' (did you mean 'learning_rate'?)" in msg
    assert "unknown key 'totl_steps' (did you mean 'total_steps'?)" in _bad(tmp_path, "totl_steps: 5")
    assert "total_steps: must be an integer from 1 to 1,000,000,000,000, got 'many'" in _bad(tmp_path, "total_steps: many")
    assert "ppo.gamma: must be a number in [0.0, 1.0], got 1.5" in _bad(tmp_path, "ppo: {gamma: 1.5}")
    assert "env.reward: must be one of ['win', 'points'], got 'score'" in _bad(tmp_path, "env: {reward: score}")
    assert "network.activation: must be one of" in _bad(tmp_path, "network: {activation: gelu}")
    assert "network.hidden: must be a non-empty list" in _bad(tmp_path, "network: {hidden: 64}")
    assert "rules: unknown rules option 'num_player' (did you mean 'num_players'?)" in _bad(
        tmp_path, "rules: {num_player: 3}")
    assert "opponents: unknown agent 'gredy' (did you mean 'greedy'?)" in _bad(tmp_path, "opponents: {gredy: 1}")
    assert "opponents.greedy: the weight must be a finite number from 0 to 1e9, got -1" in _bad(
        tmp_path, "opponents: {greedy: -1}")
    assert "evaluation.baselines" in _bad(tmp_path, "evaluation: {baselines: [random, nobody]}")
    assert "ppo.batch_size: 4096 is more than a rollout (n_envs x ppo.n_steps = 256)" in _bad(
        tmp_path, "n_envs: 2\nppo: {n_steps: 128, batch_size: 4096}")
    assert "checkpoint.every: 100 is shorter than a rollout" in _bad(
        tmp_path, "n_envs: 2\nppo: {n_steps: 128, batch_size: 64}\ncheckpoint: {every: 100}")
    assert "league.weight: must be a number in [0.0, 1.0)" in _bad(tmp_path, "league: {weight: 1}")
    assert "env.seat: must be null or 0..1" in _bad(tmp_path, "env: {seat: 2}")
    assert "not valid YAML" in _bad(tmp_path, "ppo: {gamma: [")
    assert "a config must be a mapping" in _bad(tmp_path, "- just\n- a list")
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nowhere.yaml")



def test_too_many_subprocess_envs_are_pointed_at_kinds_that_exist() -> None:
    """The advice names only vec env kinds the config accepts, and a config that follows it loads."""
    from allfives_training.vec_env import VEC_ENV_KINDS

    with pytest.raises(ConfigError, match="one process per env; give at most 256, or vec_env: batch or dummy") as caught:
        validate_config({"vec_env": "subproc", "n_envs": 300})
    advised = str(caught.value).rsplit("vec_env: ", 1)[1].split(" (")[0].split(" or ")
    assert advised == ["batch", "dummy"] and set(advised) <= set(VEC_ENV_KINDS)
    assert validate_config({"vec_env": "dummy", "n_envs": 300}).n_envs == 300
    assert validate_config({"workers": 3}).workers == 3  # the config.yaml of an older run still loads

SB3_NONSENSE = [  # (override, what the one-line error names): the same bounds as the RLlib config's
    ("ppo.learning_rate=1e300", "ppo.learning_rate: must be a number in (0.0, 1.0], got 1e+300"),
    ("imitation.learning_rate=5", "imitation.learning_rate: must be a number in (0.0, 1.0]"),
    ("ppo.clip_range=50", "ppo.clip_range: must be a number in (0.0, 10.0]"),
    ("ppo.ent_coef=1e9", "ppo.ent_coef: must be a number in [0.0, 100.0]"),
    ("ppo.vf_coef=1e9", "ppo.vf_coef: must be a number in [0.0, 100.0]"),
    ("ppo.max_grad_norm=1e9", "ppo.max_grad_norm: must be a number in (0.0, 1000.0]"),
    ("ppo.target_kl=1e9", "ppo.target_kl: must be null or a number in (0.0, 100.0]"),
    ("output.dir=/dev/null", "output.dir: must be a directory the run can write into"),
    ("evaluation.baselines=[pimc:samples=100000000]", "searches 100,000,000 samples per decision"),
    ("opponents=[pimc:samples=20000]", "searches 20,000 samples per decision"),
]


@pytest.mark.parametrize("override,message", SB3_NONSENSE, ids=[o for o, _ in SB3_NONSENSE])
def test_nonsense_values_are_refused_before_training(override: str, message: str, tmp_path: Path) -> None:
    """A value no run could use (an overflowing learning rate, a device as the output folder, a search that
    would never finish an evaluation) is refused with the config, not found out minutes into the run."""
    with pytest.raises(ConfigError) as caught:
        load_config(TINY, [override])
    assert message in str(caught.value) and "\n" not in str(caught.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        load_config(TINY, [f"output.dir={tmp_path / 'file' / 'runs'}"])
    assert load_config(TINY, [f"output.dir={tmp_path / 'new' / 'runs'}"]).output.dir.endswith("runs")


def test_shipped_configs_are_valid() -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if path.name.startswith(("rllib_", "selfplay_")):  # tests/test_rllib.py, tests/test_selfplay_training.py
            continue
        cfg = load_config(path)
        assert cfg.name == path.stem
    default = load_config(ROOT / "configs" / "default.yaml")
    assert default.vec_env == "batch" and default.evaluation.baselines == ["random", "greedy", "expert"]


def _sections(root: type) -> list[type]:
    import dataclasses

    found = [root]
    for f in dataclasses.fields(root):
        if "section" in f.metadata:
            found += _sections(f.metadata["section"])
    return found


def test_typed_configs_round_trip_and_document_every_key() -> None:
    import ast
    import inspect
    import textwrap

    from allfives_training.config import TrainConfig, config_from
    from allfives_training.rllib.config import RLlibConfig, validate_rllib_config

    cfg = load_config(TINY, ["ppo.gamma=0.9", "network.hidden=[8]"])
    assert isinstance(cfg, TrainConfig) and cfg.ppo.gamma == 0.9 and cfg.network.hidden == [8]
    assert validate_config(cfg.to_dict()) == cfg and config_from(cfg) == cfg  # a TrainConfig is checked again
    assert validate_rllib_config({"ppo": {"lambda": 0.5}}).ppo.lambda_ == 0.5  # YAML keys are kept
    assert "lambda" in RLlibConfig().to_dict()["ppo"] and list(TrainConfig().to_dict())[:3] == [
        "name", "seed", "total_steps"]
    for cls in _sections(TrainConfig) + _sections(RLlibConfig):  # one field, one default, one docstring
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
        for node, after in zip(body, body[1:] + [None]):
            if isinstance(node, ast.AnnAssign):
                assert isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant), (cls, node.target.id)


def test_opponent_mixture_forms_and_league_weights() -> None:
    as_list = validate_config({"opponents": ["random", {"agent": "greedy", "weight": 3}]})
    assert as_list.opponents == {"random": 1.0, "greedy": 3.0}
    league = League({"random": 1.0, "greedy": 3.0}, enabled=True, weight=0.5, max_snapshots=2, run_dir=Path("/r"))
    assert league.mixture() == (["random", "greedy"], [0.25, 0.75])
    for step in (100, 200, 300):
        league.add(step, league.snapshot_path(step))
    specs, weights = league.mixture()
    assert specs == ["random", "greedy", "ppo:path=/r/league/snapshot_0000000200.npz",
                     "ppo:path=/r/league/snapshot_0000000300.npz"]
    assert np.allclose(weights, [0.125, 0.375, 0.25, 0.25])


def test_train_subcommand_parser(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from allfives_training.train import add_train_parser, run_train

    parser = argparse.ArgumentParser(prog="allfives")
    add_train_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["train", "--config", str(TINY), "--set", "total_steps=2048", "--print-config"])
    assert args.resume is None and parser.parse_args(["train", "--resume"]).resume is True
    assert run_train(args) == 0
    assert "total_steps: 2048" in capsys.readouterr().out


def test_same_config_and_seed_rebuild_the_same_weights(tmp_path: Path) -> None:
    """A rebuild is reproducible on one machine: the batch env deals from the seed, torch runs one thread,
    so two runs of one config and seed export the same weights (only the run directory differs). The
    default config's set-up: action features, the placement scorer with its identity start."""
    import numpy as np

    overrides = ["vec_env=batch", "env.action_features=true", "network.action_scorer=[8]",
                 "network.trunk_reads_features=false", "league.enabled=false", "total_steps=512",
                 "evaluation.at_start=false", "evaluation.final_games=2", "output.tensorboard=false",
                 "output.plot=false", "evaluation.replays=0"]
    weights = []
    for name in ("a", "b", "c"):
        seed = ["seed=1"] if name == "c" else []
        train(TINY, run_dir=str(tmp_path / name), overrides=overrides + seed, progress=False)
        with np.load(tmp_path / name / "policy.npz", allow_pickle=False) as f:
            weights.append({k: f[k] for k in f.files if k != "header"})
    assert weights[0].keys() == weights[1].keys() and "scorer_0_weight" in weights[0]
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not all(np.array_equal(weights[0][k], weights[2][k]) for k in weights[0])  # the seed matters


def test_the_progress_bar_says_what_the_run_is_doing_before_its_first_step(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before the first step is counted (the evaluation at step 0, the first rollout, where the kernels
    compile on a fresh install) the bar names what is happening instead of sitting silently at 0%."""
    train(TINY, run_dir=str(tmp_path / "run"), progress=True,
          overrides=["total_steps=256", "vec_env=dummy", "league.enabled=false", "evaluation.every=0",
                     "evaluation.final_games=2", "output.tensorboard=false", "output.plot=false"])
    captured = capsys.readouterr()
    assert "evaluating the untrained policy first: 4 games against each of random, greedy" in captured.out
    bar = captured.err
    assert "tiny [evaluating vs random, 1/2]" in bar and "tiny [evaluating vs greedy, 2/2]" in bar
    assert "tiny [collecting the first rollout]" in bar
    later = bar.rsplit("[collecting the first rollout]", 1)[1]
    assert "tiny:" in later and "256/256" in later, "after the first rollout the bar counts steps under the name"
