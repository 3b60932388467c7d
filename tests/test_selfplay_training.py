"""The self-play recipe (allfives_training/selfplay/): its config, the league's seating, the actor's export and
start, a short run end to end, and a resume that repeats an uninterrupted run exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from allfives_env.core import Rules
from allfives_env.policy import load_policy
from allfives_training.schema import ConfigError
from allfives_training.selfplay.__main__ import main as selfplay_main
from allfives_training.selfplay.config import load_selfplay_config, selfplay_config_from
from allfives_training.selfplay.league import League
from allfives_training.selfplay.network import NetShape, SelfPlayNet, export_actor
from allfives_training.selfplay.trainer import SelfPlayTrainer, load_actor

ROOT = Path(__file__).resolve().parent.parent


def tiny(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    """A run of a few seconds: 8 games x 6 steps an update, small networks, a tiny win table."""
    raw: dict[str, Any] = {
        "name": "tiny_selfplay", "seed": 3, "total_steps": 10**6, "rules": {"num_players": 2, "target": 60},
        "env": {"num_envs": 8, "steps": 6, "potential_games": 20},
        "network": {"hidden": 16, "scorer_hidden": 8},
        "ppo": {"minibatches": 2, "epochs": 1},
        "league": {"self_play": 0.5, "opponents": {"greedy": 1.0, "random": 1.0}, "snapshot_every": 2,
                   "max_snapshots": 2},
        "evaluation": {"every": 0, "games": 2, "final_games": 2, "baselines": ["random"], "processes": 1},
        "checkpoint": {"every": 2, "keep": 2},
        "output": {"dir": str(tmp_path / "runs")},
    }
    for key, value in changes.items():
        section, _, name = key.partition(".")
        if name:
            raw[section][name] = value
        else:
            raw[section] = value
    return raw


def test_the_shipped_recipe_config_loads_and_bad_keys_are_refused() -> None:
    for path in sorted((ROOT / "configs").glob("selfplay_*.yaml")):
        assert load_selfplay_config(path).name == path.stem
    with pytest.raises(ConfigError, match="did you mean 'num_envs'"):
        selfplay_config_from({"env": {"num_envz": 8}})
    with pytest.raises(ConfigError, match="network.critic: must be one of"):
        selfplay_config_from({"network": {"critic": "oracle"}})
    with pytest.raises(ConfigError, match="no batch implementation"):
        selfplay_config_from({"league": {"opponents": {"pimc": 1.0}}})
    with pytest.raises(ConfigError, match="start: .* is not a file"):
        selfplay_config_from({"start": "/no/such/policy.npz"})


@pytest.mark.parametrize("players, partnership", [(2, False), (3, False), (4, True)])
def test_the_league_seats_one_side_or_every_seat(players: int, partnership: bool) -> None:
    rules = Rules(num_players=players, partnership=partnership)
    cfg = selfplay_config_from({"rules": rules.to_dict(), "league": {"self_play": 0.3,
                                                                       "opponents": {"greedy": 1.0, "random": 1.0}}})
    league = League(cfg.league, rules, 400)
    league.restart(np.random.default_rng(0))
    side_of = np.array([rules.side_of(s) for s in range(players)])
    everyone = league.learner.all(axis=1)
    assert 0.2 < everyone.mean() < 0.4
    for game in np.flatnonzero(~everyone):
        learner_sides = set(side_of[league.learner[game]].tolist())
        assert len(learner_sides) == 1  # one whole side: both partners in a partnership
        for side in set(range(rules.num_sides)) - learner_sides:
            assert len(set(league.opponent[game, side_of == side].tolist())) == 1  # one opponent per side
    assert (league.opponent[everyone] == -1).all() and (league.opponent[~league.learner] >= 0).all()


@pytest.mark.parametrize("context", [False, True])
def test_an_exported_actor_plays_as_the_network_and_starts_a_new_one(tmp_path: Path, context: bool) -> None:
    """The numpy policy plays the torch actor's logits, with the scorer reading the position (context) or not;
    the torch scorer's shortcut (legal rows only, one zero-row score) equals scoring every row."""
    rules = Rules(num_players=2)
    shape = NetShape.of(rules)
    torch.manual_seed(0)
    net = SelfPlayNet(shape, 16, 8, scorer_context=context)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.1 * torch.randn_like(p))
    from allfives_env.batch import BatchGame

    batch = BatchGame(rules, 32, seed=5)
    obs = batch.observe(action_features=True)
    mask = batch.legal_mask()
    path = export_actor(net, rules, tmp_path / "actor.npz")
    expected = net.logits(torch.from_numpy(obs), torch.from_numpy(mask)).detach().numpy()
    np.testing.assert_allclose(load_policy(str(path)).logits(obs), expected, atol=1e-5)
    assert load_policy(str(path)).header["action_scorer"].get("context", False) is context
    o, m = torch.from_numpy(obs), torch.from_numpy(mask)
    h = net.trunk(net.position(o))
    rows = o[:, shape.offset:shape.end].reshape(-1, shape.placements, shape.width)
    every = (net.scorer(torch.cat([rows, h[:, None, :].expand(-1, shape.placements, -1)], 2)) if context
             else net.scorer(rows)).squeeze(2)
    np.testing.assert_allclose(net.scores(o, m, h)[:, :shape.placements].detach().numpy(), every.detach().numpy(),
                               atol=1e-6)
    other = SelfPlayNet(shape, 16, 8, scorer_context=context)
    load_actor(other, str(path))
    np.testing.assert_allclose(other.logits(o, m).detach().numpy(), expected, atol=1e-5)
    with pytest.raises(Exception, match="network.hidden must match"):
        load_actor(SelfPlayNet(shape, 32, 8, scorer_context=context), str(path))
    with pytest.raises(Exception, match="scorer_context"):
        load_actor(SelfPlayNet(shape, 16, 8, scorer_context=not context), str(path))


def _weights(trainer: SelfPlayTrainer) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in trainer.net.state_dict().items()}


@pytest.mark.parametrize("critic", ["full", "own"])
def test_a_resumed_run_repeats_the_uninterrupted_one_exactly(tmp_path: Path, critic: str) -> None:
    straight = SelfPlayTrainer(selfplay_config_from(tiny(tmp_path, **{"network.critic": critic})),
                               tmp_path / "straight", log=lambda line: None)
    straight.train(stop_after=4)
    first = SelfPlayTrainer(selfplay_config_from(tiny(tmp_path, **{"network.critic": critic})), tmp_path / "cut",
                            log=lambda line: None)
    first.train(stop_after=2)
    del first
    resumed = SelfPlayTrainer(selfplay_config_from(tiny(tmp_path, **{"network.critic": critic})), tmp_path / "cut",
                              log=lambda line: None)
    assert resumed.update == 2
    resumed.train(stop_after=2)
    assert resumed.update == straight.update == 4 and resumed.steps == straight.steps > 0
    a, b = _weights(straight), _weights(resumed)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert [row["decisions"] for row in resumed.curve] == [row["decisions"] for row in straight.curve]
    assert len(resumed.league.snapshots) == 2 and all(Path(s[9:]).is_file() for s in resumed.league.snapshots)


def test_a_short_run_trains_evaluates_and_writes_its_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    config = tmp_path / "selfplay_tiny.yaml"
    config.write_text(yaml.safe_dump(tiny(tmp_path, total_steps=100)))
    assert selfplay_main(["--config", str(config), "--run-dir", str(tmp_path / "run")]) == 0
    run = tmp_path / "run"
    for name in ("config.yaml", "policy.npz", "history.csv", "win_table.json", "curve.json", "summary.json"):
        assert (run / name).is_file(), name
    policy = load_policy(str(run / "policy.npz"))
    assert policy.header["metadata"]["recipe"] == "selfplay-ppo"
    out = capsys.readouterr().out
    assert "] " in out and "update 1 |" in out and "eval @ update" in out and '"finished": true' in out
    assert selfplay_main(["--config", str(config), "--set", "env.num_envs=0"]) == 2
    assert "env.num_envs: must be" in capsys.readouterr().err


def test_the_clone_learns_the_search_targets_and_reuses_recorded_rounds(tmp_path: Path) -> None:
    """Two tiny rounds (expert play, then the student's own); a second build reads the recorded rounds instead of
    playing them again and makes the same clone."""
    from allfives_training.selfplay.clone import CloneRecord, build_clone, soft_targets

    np.testing.assert_allclose(soft_targets([10.0, 8.0, -np.inf], 2.0), [1 / (1 + np.exp(-1)), np.exp(-1) /
                                                                         (1 + np.exp(-1)), 0.0])
    rules = Rules(num_players=2, target=60)
    shape = NetShape.of(rules)
    made = []
    for attempt in range(2):
        torch.manual_seed(0)
        net = SelfPlayNet(shape, 16, 8)
        lines: list[str] = []
        path = build_clone(net, rules, tmp_path / "clone", "pimc-sift:min_samples=0,samples=4", 40, 2, 2.0, 2, 1e-3,
                           5, 1, lines.append)
        made.append(load_policy(str(path)).action[0].copy())
        assert len(lines) == 2 and "held-out agreement" in lines[1]
    np.testing.assert_array_equal(made[0], made[1])
    record = CloneRecord.load(tmp_path / "clone" / "round_1.npz", shape.obs_size, shape.num_actions)
    assert record is not None and len(record) == 40
    np.testing.assert_allclose(record.targets.sum(1), 1.0, atol=1e-2)
    assert (record.targets[~record.masks] == 0).all()
    (tmp_path / "clone" / "round_1.npz").write_bytes(b"damaged")
    assert CloneRecord.load(tmp_path / "clone" / "round_1.npz", shape.obs_size, shape.num_actions) is None


def test_a_run_on_observation_version_2_clones_trains_and_exports_version_2(tmp_path: Path) -> None:
    """``env.obs_version: 2``: the clone records version-2 positions, the self-play env and the network read the
    race pieces, the league's snapshots and the exported policy are version-2 files that the numpy agent plays in
    the AEC env (whose observation it encodes itself), and a bad version is refused by the config."""
    from allfives_env.encoding import observation_shape
    from allfives_env.evaluation import evaluate
    from allfives_training.selfplay.clone import CloneRecord

    raw = tiny(tmp_path, start="clone", total_steps=120, **{"env.obs_version": 2, "evaluation.every": 2})
    raw["clone"] = {"teacher": "pimc-sift:min_samples=0,samples=4", "decisions": 20, "rounds": 2, "epochs": 1,
                    "processes": 1}
    trainer = SelfPlayTrainer(selfplay_config_from(raw), tmp_path / "run", log=lambda line: None)
    rules = trainer.rules
    v1, v2 = observation_shape(rules, True, 1), observation_shape(rules, True, 2)
    assert trainer.shape.obs_size == v2.size > v1.size and trainer.shape.width == 14
    record = CloneRecord.load(tmp_path / "run" / "clone" / "round_1.npz", v2.size, v2.num_actions)
    assert record is not None and len(record) == 20
    trainer.train(stop_after=4)
    for path in [tmp_path / "run" / "policy.npz", *sorted((tmp_path / "run" / "league").glob("*.npz"))]:
        policy = load_policy(str(path))
        assert policy.header["obs_layout_version"] == 2 and policy.obs_version == 2, path
    match = evaluate([f"ppo:path={tmp_path / 'run' / 'policy.npz'}", "random"], rules, games=2, seed=1,
                     progress=False)
    assert match.games == 2
    with pytest.raises(ConfigError, match="env.obs_version"):
        selfplay_config_from(tiny(tmp_path, **{"env.obs_version": 3}))


#: What makes a documented self-play command a test-sized run: a tiny batch, networks, clone and evaluation.
TEST_SIZES = ["--set", "env.num_envs=4", "--set", "env.steps=4", "--set", "env.potential_games=10",
              "--set", "network.hidden=8", "--set", "network.scorer_hidden=4", "--set", "total_steps=40",
              "--set", "checkpoint.every=2", "--set", "evaluation.every=0", "--set", "evaluation.final_games=2",
              "--set", "evaluation.baselines=[random]", "--set", "evaluation.processes=1",
              "--set", "clone.decisions=8", "--set", "clone.rounds=1", "--set", "clone.processes=1",
              "--set", "clone.teacher=pimc-sift:min_samples=0,samples=2"]


def documented_selfplay_commands() -> dict[str, list[str]]:
    """Every ``python -m allfives_training.selfplay`` line of the README's and the docs' bash blocks, by page."""
    import re

    found: dict[str, list[str]] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
            joined = re.sub(r"\\\n\s*", "", block)  # a command continued over lines with a backslash
            lines = [line.split(" #")[0].strip() for line in joined.splitlines()
                     if line.startswith("python -m allfives_training.selfplay")]
            if lines:
                found.setdefault(str(page.relative_to(ROOT)), []).extend(lines)
    return found


def test_every_documented_selfplay_command_runs_at_test_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Page by page, each in a scratch folder with the repository's configs, in page order: a new run, then its
    resumes (a documented RUN_DIR is the page's new run's directory); the first run of the README also clones
    its start."""
    import shlex

    pages = documented_selfplay_commands()
    assert {"README.md", "docs/selfplay-training.md", "docs/results/selfplay.md"} <= set(pages)
    for n, (page, commands) in enumerate(pages.items()):
        folder = tmp_path / f"page_{n}"
        folder.mkdir()
        (folder / "configs").symlink_to(ROOT / "configs")
        monkeypatch.chdir(folder)
        for k, command in enumerate(commands):
            clone = ["--set", "start=clone"] if (page, k) == ("README.md", 0) else []
            args = shlex.split(command)[3:] + TEST_SIZES + clone
            assert selfplay_main(args) == 0, f"{page}: {command}"
    assert (tmp_path / "page_0" / "runs" / "selfplay_2p" / "clone" / "clone.npz").is_file()


def test_the_gate_benchmark_plays_a_runs_snapshots(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from allfives_training.runs import write_run_config

    cfg = selfplay_config_from(tiny(tmp_path, **{"evaluation.every": 2}))
    SelfPlayTrainer(cfg, tmp_path / "run", log=lambda line: None).train(stop_after=4)
    write_run_config(tmp_path / "run", cfg)
    out = tmp_path / "gate.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "selfplay_gate.py"), "--run", str(tmp_path / "run"),
                           "--opponent", "random", "--games", "2", "--json", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert [row["update"] for row in report["rows"]] == [2, 4] and report["opponent"] == "random"
    assert all(0 <= row["win_rate_lo"] <= row["win_rate"] <= row["win_rate_hi"] <= 1 for row in report["rows"])
    assert report["command"].startswith("python ") and report["date"] and report["machine"]
    # the run's own evaluations (updates 2 and 4 against random) come along, as numbers
    assert [(row["baseline"], row["games"], row["final"]) for row in report["evaluations"]] == [("random", 2, False)] * 2
    assert report["evaluations"][0]["decisions"] < report["evaluations"][1]["decisions"]


def test_the_ablation_benchmark_trains_its_arms_and_resumes(tmp_path: Path) -> None:
    """Two arms at toy sizes: the second starts from the first's clone, both end with a final evaluation, the
    JSON says how each differs from ``full``, and a second call reads the finished arms instead of training."""
    import json
    import subprocess
    import sys

    out = tmp_path / "arms"
    command = [sys.executable, str(ROOT / "benchmarks" / "selfplay_ablation.py"), "--arms", "full,no_shaping",
               "--decisions", "600", "--games", "4", "--opponent", "random", "--clone-decisions", "40",
               "--out", str(out), "--set", "env.num_envs=8", "--set", "env.steps=8", "--set", "env.potential_games=20",
               "--set", "clone.rounds=1", "--set", "checkpoint.every=2", "--json", str(tmp_path / "a.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "a.json").read_text())
    full, clone, no_shaping = report["rows"]
    assert (full["arm"], clone["arm"], no_shaping["arm"]) == ("full", "full:clone", "no_shaping")
    assert no_shaping["clone_of"] == "full" and clone["decisions"] == 0  # the clone alone, before PPO
    assert full["games"] == clone["games"] == no_shaping["games"] == 4 and full["decisions"] >= 600
    assert "vs_full" not in full and no_shaping["vs_full"] == no_shaping["win_rate"] - full["win_rate"]
    lo, hi = no_shaping["vs_full_ci"]
    assert lo <= no_shaping["vs_full"] <= hi
    shaping = (out / "no_shaping" / "config.yaml").read_text()
    assert "shaping: none" in shaping and str(out / "full" / "clone" / "clone.npz") in shaping
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert [row["seconds_this_call"] for row in json.loads((tmp_path / "a.json").read_text())["rows"]] == [0.0] * 3
    refused = subprocess.run(command[:3] + ["full,nope"], capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "choose among full, no_context" in refused.stderr
