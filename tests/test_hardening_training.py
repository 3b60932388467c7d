"""Hardening of training: checkpoints load without pickle, and hostile configs, checkpoints and
``--set`` values fail with a typed error naming the file, the key, the value and what is allowed, before
anything is written.

The checkpoint tests plant a real pickle payload (SB3 would run it on ``MaskablePPO.load``; the payload
creates a marker file) and check that it is refused and never runs; they train one tiny run (seconds)
shared by the module.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path
from typing import Callable

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")
safetensors_torch = pytest.importorskip("safetensors.torch")

ROOT = Path(__file__).resolve().parents[1]

from allfives_env.core.errors import AllFivesError  # noqa: E402
from allfives_training.checkpoint import CheckpointError  # noqa: E402
from allfives_training.config import ConfigError, load_config  # noqa: E402
from allfives_training.train import Trainer, latest_checkpoint, main, train  # noqa: E402

TINY = ROOT / "configs" / "tiny.yaml"
FAST = ["total_steps=512", "vec_env=dummy", "output.tensorboard=false", "output.plot=false",
        "evaluation.replays=0", "evaluation.every=0"]
STEM = "step_0000000512"


class _Payload:
    """Unpickling this creates ``marker``: proof that a loader ran code from the file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (self.marker, "w"))


def _sb3_zip(path: Path, marker: Path) -> None:
    """A ``.zip`` laid out like stable-baselines3's: ``data`` holds a ``:serialized:`` pickle, which
    ``MaskablePPO.load`` unpickles."""
    blob = base64.b64encode(pickle.dumps(_Payload(str(marker)))).decode()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":type:": "<class 'type'>", ":serialized:": blob}}))
        z.writestr("_stable_baselines3_version", "2.9.2")
        z.writestr("system_info.txt", "")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("hardening") / "run"
    train(TINY, run_dir=str(run), overrides=FAST, progress=False, out=io.StringIO())
    return run


@pytest.fixture()
def run(trained: Path, tmp_path: Path) -> Path:
    """A private copy of the trained run, to damage."""
    return Path(shutil.copytree(trained, tmp_path / "run"))


def _resume(run: Path, *overrides: str) -> dict:
    return train(TINY, resume=str(run), overrides=["total_steps=1024", *overrides], progress=False,
                 out=io.StringIO())


def _snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------- pickle payloads
def test_old_pickle_checkpoint_is_refused_and_its_payload_never_runs(run: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "PAYLOAD_RAN"
    folder = run / "checkpoints"
    state = json.loads((folder / f"{STEM}.json").read_text())
    for p in folder.iterdir():
        p.unlink()
    # what the pickle-based version wrote: step_<N>.zip + a state JSON without "format"
    del state["format"], state["model"]
    (folder / f"{STEM}.json").write_text(json.dumps(state))
    _sb3_zip(folder / f"{STEM}.zip", marker)
    before = _snapshot(run)
    with pytest.raises(CheckpointError, match="old pickle-based format") as info:
        _resume(run)
    assert f"{STEM}.zip" in str(info.value) and "not loaded, for safety" in str(info.value)
    assert isinstance(info.value, ConfigError) and isinstance(info.value, AllFivesError)
    assert not marker.exists(), "the checkpoint's pickle ran"
    assert _snapshot(run) == before, "a refused resume changes nothing"
    # the command line: exit status 2 and one line, no traceback
    assert main(["--resume", str(run), "--set", "total_steps=1024", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "old pickle-based format" in err and "Traceback" not in err and not marker.exists()
    # a lone .zip (no state JSON) is refused too, not skipped
    (folder / f"{STEM}.json").unlink()
    with pytest.raises(CheckpointError, match="old pickle-based format"):
        _resume(run)
    assert not marker.exists()


def test_checkpoints_are_safetensors_and_json_only(trained: Path) -> None:
    names = sorted(p.name for p in (trained / "checkpoints").iterdir())
    assert names and all(n.endswith((".json", ".safetensors")) for n in names), names
    for p in (trained / "checkpoints").glob("*.safetensors"):
        names = set(safetensors_torch.load_file(p))
        assert "policy/action_net.weight" in names and "optimizer/0/exp_avg" in names
        assert all(n.startswith(("policy/", "optimizer/")) for n in names)


# ---------------------------------------------------------------------------------------------- resuming
def test_resume_restores_the_exact_state_and_trains_on(run: Path) -> None:
    step, tensors_path, state = latest_checkpoint(run)
    assert step == 512 and tensors_path.name == f"{STEM}.safetensors" and state["finished"]
    cfg = load_config(run / "config.yaml", ["total_steps=1024"])
    trainer = Trainer(cfg, run, (step, tensors_path, state), progress=False, out=io.StringIO())
    assert trainer.history == state["history"] and trainer.league.state() == state["league"]
    assert trainer.last_snapshot == state["last_snapshot_step"] and trainer.last_eval == state["last_eval_step"]
    trainer.build()
    try:
        saved = safetensors_torch.load_file(tensors_path)
        for name, value in trainer.model.policy.state_dict().items():
            assert torch.equal(value, saved[f"policy/{name}"]), name
        opt = trainer.model.policy.optimizer.state_dict()
        assert opt["state"] and all(float(entry["step"]) > 0 for entry in opt["state"].values())
        for idx, entry in opt["state"].items():
            for name, value in entry.items():
                assert torch.equal(value, saved[f"optimizer/{idx}/{name}"]), (idx, name)
        assert opt["param_groups"][0]["betas"] == tuple(state["model"]["optimizer"]["param_groups"][0]["betas"])
        assert trainer.model.num_timesteps == 512
        assert trainer.model._n_updates == state["model"]["n_updates"] > 0
    finally:
        trainer.vec_env.close()
    summary = _resume(run)
    assert summary["steps"] == 1024 and summary["trained_steps"] == 512
    final = latest_checkpoint(run)[2]
    assert final["history"][:len(state["history"])] == [r for r in state["history"]]  # history kept, in order
    assert final["league"]["snapshots"][:len(state["league"]["snapshots"])] == state["league"]["snapshots"]


def _rewrite_tensors(run: Path, change: Callable[[dict], None], fix_checksum: bool = True) -> None:
    path = run / "checkpoints" / f"{STEM}.safetensors"
    tensors = safetensors_torch.load_file(path)
    change(tensors)
    data = safetensors_torch.save(tensors)
    path.write_bytes(data)
    if fix_checksum:
        _set_checksum(run, data)


def _set_checksum(run: Path, data: bytes) -> None:
    state_path = run / "checkpoints" / f"{STEM}.json"
    state = json.loads(state_path.read_text())
    state["model"]["sha256"] = hashlib.sha256(data).hexdigest()
    state_path.write_text(json.dumps(state))


def _truncate(run: Path, fix_checksum: bool) -> None:
    path = run / "checkpoints" / f"{STEM}.safetensors"
    data = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(data)
    if fix_checksum:
        _set_checksum(run, data)


def _huge_header(run: Path) -> None:
    path = run / "checkpoints" / f"{STEM}.safetensors"
    data = (2**62).to_bytes(8, "little") + path.read_bytes()[8:]
    path.write_bytes(data)
    _set_checksum(run, data)


def _edit_state(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        path = run / "checkpoints" / f"{STEM}.json"
        state = json.loads(path.read_text())
        change(state)
        path.write_text(json.dumps(state))
    return edit


def _write_state(data: bytes) -> Callable[[Path], None]:
    return lambda run: (run / "checkpoints" / f"{STEM}.json").write_bytes(data)


def _nan(t: dict) -> None:
    t["policy/action_net.bias"][0] = float("nan")


def _drop_moments(t: dict) -> None:
    for name in [n for n in t if n.startswith("optimizer/0/")]:
        del t[name]


def _league_outside(state: dict) -> None:
    state["league"]["snapshots"][0]["path"] = "/etc/passwd"


DAMAGE = {
    "truncated tensors": (lambda run: _truncate(run, False), "safetensors", "SHA-256 differs"),
    "truncated tensors, checksum updated": (lambda run: _truncate(run, True), "safetensors",
                                            "not a readable safetensors file"),
    "huge safetensors header": (_huge_header, "safetensors", "not a readable safetensors file"),
    "missing tensors file": (lambda run: (run / "checkpoints" / f"{STEM}.safetensors").unlink(), "safetensors",
                             "is missing"),
    "a weight of another shape": (lambda run: _rewrite_tensors(run, lambda t: t.update(
        {"policy/action_net.weight": torch.zeros(3, 3)})), "safetensors", "written for another network"),
    "nan weights": (lambda run: _rewrite_tensors(run, _nan), "safetensors", "non-finite"),
    "an extra weight": (lambda run: _rewrite_tensors(run, lambda t: t.update({"policy/evil": torch.zeros(1)})),
                        "safetensors", "do not match"),
    "optimizer moments of one parameter missing": (lambda run: _rewrite_tensors(run, _drop_moments), "safetensors",
                                                   "incomplete"),
    "malformed JSON": (_write_state(b'{"format": "allfives-checkpoint/1", "step": 5'), "json", "not valid JSON"),
    "JSON not an object": (_write_state(b"[1, 2, 3]"), "json", "a run state is a JSON object"),
    "JSON not UTF-8": (_write_state(b'{"step": "\xff"}'), "json", "not UTF-8"),
    "JSON nested deeply": (_write_state(b"[" * 100_000 + b"]" * 100_000), "json", "nested too deeply"),
    "history not a list": (_edit_state(lambda s: s.update(history="lots")), "json", "history must be a list"),
    "history row of wrong type": (_edit_state(lambda s: s["history"][0].update(win_rate="high")), "json",
                                  "history[0].win_rate must be a number"),
    "league path outside the run": (_edit_state(_league_outside), "json", "must be a file under league/"),
    "step that is not the file's": (_edit_state(lambda s: s.update(step=7)), "json", "says step 7"),
    "foreign format": (_edit_state(lambda s: s.update(format="something-else")), "json",
                       "not a checkpoint of this format"),
    "another trainer's state": (_edit_state(lambda s: s.update(trainer="rllib-ppo")), "json",
                                "not a checkpoint of this format"),
    "counter of wrong type": (_edit_state(lambda s: s.update(last_snapshot_step=True)), "json",
                              "last_snapshot_step must be an integer >= 0, got True"),
    "optimizer hyper-parameter of wrong type": (
        _edit_state(lambda s: s["model"]["optimizer"]["param_groups"][0].update(lr="fast")), "json",
        "optimizer hyper-parameter 'lr'"),
    "checksum not hex": (_edit_state(lambda s: s["model"].update(sha256="x" * 64)), "json", "model.sha256"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_or_tampered_checkpoint_is_a_checkpoint_error_naming_the_file(run: Path, damage: str) -> None:
    apply, file_kind, message = DAMAGE[damage]
    apply(run)
    before = _snapshot(run)
    with pytest.raises(CheckpointError) as info:
        _resume(run)
    text = str(info.value)
    assert message in text and f"{STEM}.{file_kind}" in text, text
    assert isinstance(info.value, ConfigError) and isinstance(info.value, AllFivesError)
    assert _snapshot(run) == before, "a refused resume changes nothing (config.yaml included)"


def test_resume_with_another_network_is_refused_and_keeps_the_config(run: Path) -> None:
    before = _snapshot(run)
    with pytest.raises(CheckpointError, match=r"written for another network .*resume with the run's own config"):
        _resume(run, "network.hidden=[8]")
    assert _snapshot(run) == before


def test_a_diverging_run_stops_with_a_clear_error_and_no_nan_checkpoint(tmp_path: Path) -> None:
    """The config refuses a learning rate over 1, but a run can still diverge inside the bounds (how far
    depends on the model and the rewards): the guard is tested on a config changed after its checks."""
    from allfives_training.run_plan import plan_run
    from allfives_training.train import TRAIN_RUNS, run_planned

    run = tmp_path / "run"
    plan = plan_run(TRAIN_RUNS, TINY, run_dir=str(run), overrides=[*FAST, "league.enabled=false"])
    plan.cfg.ppo.learning_rate, plan.cfg.ppo.max_grad_norm = 1e30, 1e30
    with pytest.raises(ConfigError, match=r"training diverged at .* steps: .*ppo.learning_rate 1e\+30") as info:
        run_planned(plan, progress=False, out=io.StringIO())
    assert "no checkpoint was taken" in str(info.value) or "is intact" in str(info.value)
    for path in (run / "checkpoints").glob("*.safetensors"):  # whatever was saved can be resumed
        assert all(bool(torch.isfinite(t).all()) for t in safetensors_torch.load_file(path).values()), path


# ---------------------------------------------------------------------------------------------- configs
HOSTILE: list[tuple[bytes, list[str], list[str]]] = [
    (b"ppo: {learning_rate: .inf}", [], ["ppo.learning_rate", "got inf", "a number in (0.0, 1.0]"]),
    (b"ppo: {gamma: .nan}", [], ["ppo.gamma", "got nan", "a number in [0.0, 1.0]"]),
    (b"ppo: {clip_range: 1e400}", [], ["ppo.clip_range", "got inf", "a number in (0.0, 10.0]"]),
    (b"opponents: {random: .inf}", [], ["opponents.random", "got inf", "a finite number from 0 to 1e9"]),
    (b"opponents: {random: .nan, greedy: 1}", [], ["opponents.random", "got nan", "finite number"]),
    (b"league: {enabled: true, weight: .nan}", [], ["league.weight", "got nan", "[0.0, 1.0)"]),
    (b"seed: 4294967296", [], ["seed", "got 4294967296", "an integer from 0 to 4,294,967,295"]),
    (b"seed: -1", [], ["seed", "got -1", "an integer from 0 to 4,294,967,295"]),
    (b"evaluation: {seed: 123456789012345678901234567890}", [], ["evaluation.seed", "4,294,967,295"]),
    (b"total_steps: 100000000000000000000000000", [], ["total_steps", "an integer from 1 to 1,000,000,000,000"]),
    (b"n_envs: 100000000", [], ["n_envs", "got 100000000", "an integer from 1 to 4,096"]),
    (b"network: {hidden: [100000000]}", [], ["network.hidden", "65,536"]),
    (b"n_envs: true", [], ["n_envs", "got True", "an integer from 1"]),
    (b"ppo: {learning_rate: false}", [], ["ppo.learning_rate", "got False", "a number in (0.0, 1.0]"]),
    (b"league: {weight: true}", [], ["league.weight", "got True"]),
    (b"env: {action_features: 1}", [], ["env.action_features", "true or false"]),
    (b"- a\n- b\n", ["seed=1"], ["a config must be a mapping", "got list"]),
    (b"- a\n- b\n", [], ["a config must be a mapping", "got list"]),
    (b"just words", [], ["a config must be a mapping", "got str"]),
    (b"42", [], ["a config must be a mapping", "got int"]),
    ("name: caf\xe9\n".encode("latin-1"), [], ["not UTF-8 text", "byte 9"]),
    (b"rules: " + b"[" * 50_000 + b"]" * 50_000, [], ["nested too deeply", "32 levels"]),
    (b"rules: " + b"{a: " * 200 + b"1" + b"}" * 200, [], ["nested too deeply"]),
    (b"name: !!python/object/apply:os.system [echo pwned]", [], ["not valid YAML", "python/object"]),
    (b"name: 'a,b'", [], ["name", "'a,b'", "a plain name"]),
    (b"name: 2020-01-01", [], ["name", "datetime.date", "a plain name"]),
    (b'output: {dir: "a\\0b"}', [], ["output.dir", "control characters"]),
    (b"opponents: [random, 7]", [], ["opponents", "got the entry 7"]),
    (b"opponents: {random: [1]}", [], ["opponents.random", "got [1]"]),
    (b"rules: [1]", [], ["rules", "must be a mapping of rules options"]),
    (b"ppo: 5", [], ["ppo", "must be a mapping of", "got 5"]),
    (b"ppo: {batch_size: 1}", [], ["ppo.batch_size", "normalize_advantage", "give at least 2"]),
    (b"imitation: {teacher: greedy, decisions: 1}", [], ["imitation.decisions", "got 1", "an integer from 2"]),
    (b"vec_env: subproc\nn_envs: 1000", [], ["n_envs", "one process per env", "at most 256"]),
    (b"name: x", ["ppo.learning_rate=.inf"], ["ppo.learning_rate", "got inf"]),
    (b"name: x", ["ppo.n_epochs=.nan"], ["ppo.n_epochs", "got nan"]),
    (b"name: x", ["seed=2**32"], ["seed", "got '2**32'"]),
    (b"name: x", ["seed=4294967296"], ["seed", "got 4294967296"]),
    (b"name: x", ["ppo.gamma=" + "[" * 5000], ["--set", "nested too deeply"]),
    (b"name: x", ["ppo.gamma=[1,"], ["--set", "not valid YAML"]),
    (b"name: x", ["noequals"], ["--set needs KEY=VALUE"]),
    (b"name: x", ["=1"], ["--set", "empty key"]),
    (b"opponents: [random, greedy]", ["opponents.random=2"], ["opponents is", "not a mapping; set it whole"]),
    (b"name: x", ["ppo=1", "ppo.gamma=0.5"], ["ppo is 1 in the config, not a mapping"]),
]


@pytest.mark.parametrize("text, overrides, expected", HOSTILE,
                         ids=[f"{i}-{t[:24]!r}-{s}" for i, (t, s, _) in enumerate(HOSTILE)])
def test_a_hostile_config_is_refused_before_any_run_directory_exists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes, overrides: list[str],
        expected: list[str]) -> None:
    monkeypatch.chdir(tmp_path)  # output.dir defaults to ./runs: it must not appear
    path = tmp_path / "bad.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as info:
        train(path, overrides=overrides, progress=False, out=io.StringIO())
    message = str(info.value)
    for part in expected:
        assert part in message, (part, message)
    assert "bad.yaml" in message, message
    assert isinstance(info.value, AllFivesError) and len(message) < 2000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"], "nothing is created"


def test_the_command_line_reports_a_hostile_config_in_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main as allfives

    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: {learning_rate: .inf}\n")
    assert allfives(["train", "--config", str(bad), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: ppo.learning_rate: must be a number in (0.0, 1.0], got inf" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()
    assert allfives(["train", "--config", str(TINY), "--run-dir", str(bad)]) == 2  # a file as the run dir
    assert "is a file" in capsys.readouterr().err


def test_exponent_numbers_without_a_dot_are_numbers(tmp_path: Path) -> None:
    """The --set help says ppo.learning_rate=1e-4; PyYAML alone reads that as a string."""
    path = tmp_path / "c.yaml"
    path.write_text("ppo: {learning_rate: 1e-4}\nimitation: {learning_rate: 2E-3}\n")
    cfg = load_config(path, ["ppo.ent_coef=1e-3"])
    assert cfg.ppo.learning_rate == 1e-4 and cfg.imitation.learning_rate == 2e-3
    assert cfg.ppo.ent_coef == 1e-3


# ---------------------------------------------------------------------------------------------- install hint
@pytest.mark.parametrize("command", ["train", "train-rllib"])
def test_the_missing_dependency_hint_installs_cpu_torch_first(command: str, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    import allfives_training.train as sb3_train

    monkeypatch.setattr(sb3_train, "importable", lambda module: module != "torch")
    args = argparse.Namespace(print_config=False, config=str(TINY), overrides=[], run_dir=None, resume=None,
                              no_progress=True, address=None)
    if command == "train":
        assert sb3_train.run_train(args) == 2
    else:
        from allfives_training.rllib.train import run_train_rllib

        assert run_train_rllib(args) == 2
    err = capsys.readouterr().err
    extra = "train" if command == "train" else "rllib"
    assert f"allfives {command} needs torch" in err
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in err
    assert err.index("--index-url") < err.index(f"pip install -e '.[{extra}]'")
