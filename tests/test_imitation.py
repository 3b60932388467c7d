"""The imitation warm start: recorded demonstrations, cloning a teacher, and a run that starts from one."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]  # pytest puts it on sys.path (pyproject: pythonpath)
from allfives_env.agents import make_agent  # noqa: E402
from allfives_env.core import Rules  # noqa: E402
from allfives_env.policy import read_policy_header  # noqa: E402
from allfives_env.single_seat import AllFivesSingleSeatEnv  # noqa: E402
from allfives_training.config import ConfigError, load_config  # noqa: E402
from allfives_training.imitation import collect_demonstrations, imitate  # noqa: E402
from allfives_training.train import train  # noqa: E402

TINY = ROOT / "configs" / "tiny.yaml"
ENV = {"rules": Rules(num_players=2, target=60), "reward": "win", "action_features": True}


def test_demonstrations_are_legal_reproducible_and_carry_game_returns() -> None:
    demos = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=3, gamma=1.0)
    assert len(demos) == 600 and demos.obs.dtype == np.float16 and demos.obs.shape[1] == 152 + 28 * 4 * 12
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))
    # win reward, no discount: every decision's return is its game's result (0 for the last, cut-off game)
    assert set(np.unique(demos.returns)) <= {-1.0, 0.0, 1.0} and {-1.0, 1.0} <= set(np.unique(demos.returns))
    again = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=3, gamma=1.0)
    assert np.array_equal(demos.obs, again.obs) and np.array_equal(demos.actions, again.actions)
    other = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=4, gamma=1.0)
    assert not np.array_equal(demos.actions, other.actions)
    split = collect_demonstrations(ENV, {"random": 1.0}, "greedy", 300, seed=3, gamma=0.9, processes=2)
    assert len(split) == 300 and all(split.masks[i, a] for i, a in enumerate(split.actions))


def test_a_search_teacher_records_legal_reproducible_demonstrations() -> None:
    """configs/ppo_4p.yaml distils pimc: its labels must be legal and the same for the same seed (a rebuild
    of the shipped file depends on it), in the 4-player game it ships for."""
    env = {"rules": Rules(num_players=4, target=60), "reward": "points", "action_features": True,
           "partner": "expert"}
    teacher = "pimc:samples=8"
    demos = collect_demonstrations(env, {"greedy": 1.0}, teacher, 120, seed=5, gamma=0.99)
    again = collect_demonstrations(env, {"greedy": 1.0}, teacher, 120, seed=5, gamma=0.99)
    assert np.array_equal(demos.actions, again.actions) and np.array_equal(demos.obs, again.obs)
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))
    # with more than one placement the search, not a fixed rule, chose: some of its moves are not greedy's
    greedy = collect_demonstrations(env, {"greedy": 1.0}, "greedy", 120, seed=5, gamma=0.99)
    assert not np.array_equal(demos.actions, greedy.actions)


def test_cloning_greedy_learns_its_moves() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    demos = collect_demonstrations(ENV, {"random": 1.0}, "greedy", 3000, seed=0, gamma=0.99)
    model = MaskablePPO("MlpPolicy", AllFivesSingleSeatEnv(**ENV), seed=0, device="cpu",
                        policy_kwargs={"net_arch": {"pi": [64], "vf": [16]}})
    lines: list[str] = []
    stats = imitate(model.policy, demos, epochs=6, batch_size=128, learning_rate=3e-3, seed=0, log=lines.append)
    assert len(lines) == 6 and "held-out agreement" in lines[-1]
    # greedy's choice is the legal placement with the most points now (ties: the heavier tile); both are
    # features, so even a small net on 3000 decisions agrees with it far more often than chance (0.43,
    # forced moves included) does; an untrained or broken clone stays near chance
    chance = float(np.mean(1.0 / demos.masks.sum(axis=1)))
    assert stats["test_agreement"] > chance + 0.12, (stats, chance)


def test_a_run_with_a_warm_start_records_it_and_exports_a_feature_policy(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    train(TINY, run_dir=str(run), progress=False, overrides=[
        "imitation.teacher=greedy", "imitation.decisions=800", "imitation.epochs=2", "imitation.processes=1",
        "env.action_features=true", "league.enabled=false"])
    out = capsys.readouterr().out
    assert "imitation: 800 decisions" in out and "imitation epoch 2/2" in out
    stats = json.loads((run / "imitation.json").read_text())
    assert stats["epoch"] == 2 and 0.0 <= stats["test_agreement"] <= 1.0
    # the recording is kept: a run started again before its first checkpoint loads it instead of playing
    assert (run / "demonstrations" / "part-1-of-1.npz").is_file()
    first = (run / "policy.npz").read_bytes()
    import shutil

    shutil.rmtree(run / "checkpoints")
    train(TINY, resume=str(run), progress=False)
    out = capsys.readouterr().out
    assert "no checkpoint yet" in out and "loaded from" in out and "imitation: 800 decisions" in out
    assert json.loads((run / "imitation.json").read_text())["test_agreement"] == stats["test_agreement"]
    assert (run / "policy.npz").read_bytes() == first
    header = read_policy_header(run / "policy.npz")
    assert header["action_features"] is True and header["obs_size"] == 152 + 28 * 4 * 12
    # the agent computes the features itself, whatever env it plays in
    agent = make_agent(f"ppo:path={run / 'policy.npz'}", seed=0)
    env = AllFivesSingleSeatEnv(opponents=[agent], rules=ENV["rules"])
    env.reset(seed=1)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = terminated or truncated


def test_imitation_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("imitation: {teacher: nobody}\n")
    with pytest.raises(ConfigError, match=r"imitation\.teacher: unknown agent 'nobody'"):
        load_config(bad)
    bad.write_text("imitation: {teacher: expert, epochs: 0}\n")
    with pytest.raises(ConfigError, match=r"imitation\.epochs: must be an integer from 1 to 1,000,000, got 0"):
        load_config(bad)
    bad.write_text("env: {action_features: 1}\n")
    with pytest.raises(ConfigError, match=r"env\.action_features: must be true or false"):
        load_config(bad)


def test_recorded_parts_are_kept_and_loaded_instead_of_played_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_training.imitation as imitation

    args = (ENV, {"random": 1.0}, "greedy", 300)
    keep = tmp_path / "demos"
    first: list[str] = []
    demos = collect_demonstrations(*args, seed=3, gamma=0.9, processes=2, keep_in=keep, log=first.append)
    assert sorted(p.name for p in keep.iterdir()) == ["part-1-of-2.npz", "part-2-of-2.npz"]
    assert all("to record: part-" in line and "not recorded yet" in line for line in first)
    plain = collect_demonstrations(*args, seed=3, gamma=0.9, processes=2)
    assert all(np.array_equal(getattr(demos, f), getattr(plain, f)) for f in ("obs", "masks", "actions", "returns"))

    def no_playing(*_: object) -> None:
        raise AssertionError("a kept part was played again")

    monkeypatch.setattr(imitation, "_collect_part", no_playing)
    again: list[str] = []
    loaded = collect_demonstrations(*args, seed=3, gamma=0.9, processes=2, keep_in=keep, log=again.append)
    assert all("loaded from" in line for line in again) and len(again) == 2
    assert all(np.array_equal(getattr(loaded, f), getattr(plain, f)) for f in ("obs", "masks", "actions", "returns"))


@pytest.mark.parametrize("damage, reason", [
    ("truncate", "unreadable"),
    ("corrupt", "unreadable"),  # zlib's own error, which zipfile does not wrap
    ("pickled", "unreadable"),
    ("other_seed", "recorded for another config"),
    ("illegal", "not legal in their recorded masks"),
])
def test_a_damaged_or_foreign_part_is_recorded_again(tmp_path: Path, damage: str, reason: str) -> None:
    args = (ENV, {"random": 1.0}, "greedy", 200)
    keep = tmp_path / "demos"
    demos = collect_demonstrations(*args, seed=3, gamma=0.9, keep_in=keep)
    part = keep / "part-1-of-1.npz"
    arrays = {f: getattr(demos, f) for f in ("obs", "masks", "actions", "returns")}
    if damage == "truncate":
        part.write_bytes(part.read_bytes()[:500])
    elif damage == "corrupt":  # garbage at the start of the observations' deflate stream
        with zipfile.ZipFile(part) as archive:
            at = archive.getinfo("obs.npy").header_offset
        raw = bytearray(part.read_bytes())
        name_length, extra_length = struct.unpack("<HH", raw[at + 26:at + 30])  # the member's local header
        data = at + 30 + name_length + extra_length
        raw[data + 8:data + 24] = b"\xff" * 16
        part.write_bytes(bytes(raw))
    elif damage == "pickled":  # an object array needs pickle to load: it must be refused, never unpickled
        np.savez(part, identity=np.array([{"x": 1}], dtype=object), **arrays)
    elif damage == "other_seed":
        collect_demonstrations(*args, seed=4, gamma=0.9, keep_in=keep)
    else:
        with np.load(part) as data:
            identity = data["identity"]
        wrong = dict(arrays, actions=np.where(arrays["masks"].sum(1) < arrays["masks"].shape[1],
                                              np.argmin(arrays["masks"], axis=1), arrays["actions"]))
        np.savez(part, identity=identity, **wrong)
    lines: list[str] = []
    again = collect_demonstrations(*args, seed=3, gamma=0.9, keep_in=keep, log=lines.append)
    assert len(lines) == 1 and "to record" in lines[0] and reason in lines[0], lines
    assert np.array_equal(again.actions, demos.actions) and np.array_equal(again.obs, demos.obs)
    lines.clear()
    collect_demonstrations(*args, seed=3, gamma=0.9, keep_in=keep, log=lines.append)
    assert "loaded from" in lines[0]  # the part recorded again replaced the bad one
