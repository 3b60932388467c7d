"""Ray RLlib: the multi-agent adapter, the masked module and its export, configs, and one tiny training
iteration on a local Ray (skipped when the [rllib] extra is not installed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rllib_requirements import require_rllib  # noqa: E402

require_rllib()

from allfives_env.agents import make_agent  # noqa: E402
from allfives_env.core import IllegalActionError, Rules  # noqa: E402
from allfives_env.policy import read_policy_header  # noqa: E402
from allfives_training.config import ConfigError  # noqa: E402
from allfives_training.rllib.config import validate_rllib_config  # noqa: E402
from allfives_training.rllib.env import AllFivesMultiAgentEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env")


def _play(env: AllFivesMultiAgentEnv, seed: int) -> tuple[dict[str, float], dict[str, int]]:
    """One episode with random legal moves; total reward and number of observations per agent."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    totals = {a: 0.0 for a in env.agents}
    seen = {a: 0 for a in env.agents}
    while True:
        assert len(obs) >= 1
        for agent_id, o in obs.items():
            assert env.observation_spaces[agent_id].contains(o)
            seen[agent_id] += 1
        (agent_id,) = obs  # turn-based: one agent to act
        mask = obs[agent_id]["action_mask"]
        obs, rewards, terminated, truncated, _ = env.step({agent_id: int(rng.choice(np.flatnonzero(mask)))})
        for a, r in rewards.items():
            totals[a] += r
        if terminated["__all__"] or truncated["__all__"]:
            assert set(obs) == set(env.agents), "every learning agent sees the end"
            return totals, seen


def test_self_play_gives_every_seat_its_whole_zero_sum_reward() -> None:
    env = AllFivesMultiAgentEnv({"rules": {"num_players": 2, "target": 60}, "reward": "win"})
    for seed in range(5):
        totals, seen = _play(env, seed)
        assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])
        assert all(n >= 2 for n in seen.values())
    assert env.raw.game.over


def test_one_side_learns_against_registry_opponents_with_points_reward() -> None:
    env = AllFivesMultiAgentEnv({"rules": {"num_players": 4}, "reward": "points", "learners": "one_side",
                                 "opponents": {"greedy": 1.0}})
    for seed in range(3):
        totals, _ = _play(env, seed)
        assert len(env.agents) == 2  # one partnership: two seats
        game = env.raw.game
        side = game.side_of[int(env.agents[0].rsplit("_", 1)[1])]
        gain = game.scores  # from 0: points reward is own gain minus the other side's, / target
        expected = (gain[side] - gain[1 - side]) / game.rules.target
        assert all(t == pytest.approx(expected) for t in totals.values())


@pytest.mark.parametrize("weights", [[1e308, 1e308], [-1.0, 2.0], [0.0, 0.0], [float("nan"), 1.0]])
def test_an_opponent_mixture_no_env_could_draw_from_is_refused(weights: list[float]) -> None:
    """The multi-agent env checks its mixture with the other envs' checker: a sum that overflows (each
    weight finite) used to pass and divide every weight to zero."""
    from allfives_env.agents import AgentError

    with pytest.raises(AgentError, match="sum that is finite"):
        AllFivesMultiAgentEnv({"rules": {"num_players": 2}, "learners": "one_side",
                               "opponents": dict(zip(["greedy", "random"], weights))})


def test_mask_is_kept_and_illegal_actions_fail_clearly() -> None:
    env = AllFivesMultiAgentEnv({"rules": {"num_players": 2}})
    obs, _ = env.reset(seed=1)
    (agent_id,) = obs
    mask = obs[agent_id]["action_mask"]
    assert mask.dtype == np.float32 and set(np.unique(mask)) <= {0.0, 1.0}
    assert np.array_equal(np.flatnonzero(mask), sorted(env.raw.game.legal))
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="legal"):
        env.step({agent_id: illegal})
    with pytest.raises(ValueError, match="turn"):
        env.step({"player_9": 0})
    with pytest.raises(ValueError, match="learners="):
        AllFivesMultiAgentEnv({"learners": "some"})
    with pytest.raises(ValueError, match="unknown config key"):
        AllFivesMultiAgentEnv({"rulez": {}})


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"learners: must be one of \['all', 'one_side', 'one_seat'\]"):
        validate_rllib_config({"learners": "both"})
    with pytest.raises(ConfigError, match=r"ppo.minibatch_size: 900 is more than ppo.train_batch_size"):
        validate_rllib_config({"ppo": {"train_batch_size": 500, "minibatch_size": 900}})
    with pytest.raises(ConfigError, match=r"opponents: unknown agent 'nobody'"):
        validate_rllib_config({"opponents": {"nobody": 1}})
    for name in ("rllib_selfplay.yaml", "rllib_baselines.yaml", "rllib_default.yaml"):
        from allfives_training.rllib.config import load_rllib_config

        load_rllib_config(ROOT / "configs" / name)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_module_masks_illegal_actions_and_exports_the_same_logits(tmp_path: Path, activation: str) -> None:
    import torch
    from ray.rllib.core.columns import Columns

    from allfives_env.policy import load_policy
    from allfives_training.rllib.module import MaskedPPOModule, export_module

    env = AllFivesMultiAgentEnv({"rules": {"num_players": 2}, "action_features": True})
    space, actions = env.observation_spaces["player_0"], env.action_spaces["player_0"]
    module = MaskedPPOModule(observation_space=space, action_space=actions,
                             model_config={"hidden": [32, 16], "activation": activation})
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # untrained logits are near zero: a real spread makes the comparison bite
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    rng = np.random.default_rng(0)
    batch_obs, batch_mask = [], []
    obs, _ = env.reset(seed=0)
    while len(batch_obs) < 200:
        (agent_id,) = obs
        batch_obs.append(obs[agent_id]["observations"])
        batch_mask.append(obs[agent_id]["action_mask"])
        obs, _, term, trunc, _ = env.step({agent_id: int(rng.choice(np.flatnonzero(batch_mask[-1])))})
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    o, m = np.stack(batch_obs), np.stack(batch_mask)
    out = module.forward_inference({Columns.OBS: {"observations": torch.as_tensor(o), "action_mask": torch.as_tensor(m)}})
    logits = out[Columns.ACTION_DIST_INPUTS].detach().numpy()
    assert np.all(logits[m == 0] < -1e30) and np.all(logits[m == 1] > -1e30)
    values = module.compute_values({Columns.OBS: {"observations": torch.as_tensor(o), "action_mask": torch.as_tensor(m)}})
    assert values.shape == (200,)
    path = export_module(module, tmp_path / "p.npz", Rules(num_players=2), metadata={"note": "test"})
    policy = load_policy(path, Rules(num_players=2))
    assert policy.action_features and read_policy_header(path)["metadata"] == {"note": "test"}
    np.testing.assert_allclose(np.where(m == 1, policy.logits(o), 0), np.where(m == 1, logits, 0), rtol=1e-4, atol=1e-4)
    assert np.array_equal(policy.predict(o, m), logits.argmax(axis=1))


TINY = ["iterations=1", "rules.target=60", "ppo.train_batch_size=256", "ppo.minibatch_size=128", "ppo.num_epochs=1",
        "env_runners.num_env_runners=0", "env_runners.num_envs_per_env_runner=2", "network.hidden=[16]",
        "evaluation.final_games=4", "evaluation.baselines=[random]", "evaluation.processes=1"]


class _Lines:
    """A text sink that keeps what the run prints."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        return "".join(self.parts)


@pytest.mark.parametrize("config, extra, modules", [
    ("rllib_selfplay.yaml", [], ["shared"]),
    ("rllib_selfplay.yaml", ["policies=per_team"], ["team_0", "team_1"]),
    ("rllib_baselines.yaml", ["opponents={greedy: 1}"], ["shared"]),
])
def test_one_tiny_iteration_trains_evaluates_exports_and_checkpoints(tmp_path: Path, config: str, extra: list[str],
                                                                     modules: list[str]) -> None:
    from allfives_env.match import play_game
    from allfives_training.rllib.train import train_rllib

    run = tmp_path / "run"
    out = _Lines()
    summary = train_rllib(ROOT / "configs" / config, run_dir=str(run), out=out, overrides=TINY + extra)
    assert summary["iterations"] == 1 and summary["env_steps"] >= 256, out.text
    assert "iteration 1/1" in out.text and "random" in out.text
    for module_id in modules:
        path = run / f"policy_{module_id}.npz"
        header = read_policy_header(path)
        assert header["algorithm"] == "RLlib PPO" and header["hidden"] == [16] and header["rules"]["target"] == 60
        agent = make_agent(f"ppo:path={path}")
        result = play_game(Rules(num_players=2, target=60), [agent, make_agent("random")], seed=0)
        assert result.winner in (0, 1, None)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000001.json", "iter_000001.safetensors"]
    assert len(list((run / "replays" / f"{modules[0]}_vs_random").glob("game_*.json"))) == 2


def test_a_run_resumes_from_its_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming sets exactly the saved weights and Adam moments (no pickle: safetensors + JSON)."""
    from safetensors.torch import load_file

    from allfives_training.rllib.train import RLlibRun, latest_rllib_checkpoint, train_rllib

    run = tmp_path / "run"
    first = train_rllib(ROOT / "configs" / "rllib_selfplay.yaml", run_dir=str(run), out=_Lines(), overrides=TINY)
    iteration, tensors_path, state = latest_rllib_checkpoint(run)
    assert iteration == 1 and state["env_steps"] == first["env_steps"] and len(state["history"]) == 1
    saved = load_file(tensors_path)
    restored: dict = {}
    original = RLlibRun.restore

    def restore_and_look(self: RLlibRun, *args: object) -> None:
        original(self, *args)
        learner = self._learner_state()
        restored["weights"] = learner["rl_module"]["shared"]
        restored["optimizer"] = next(iter(learner["optimizer"].values()))["state"]["state"]

    monkeypatch.setattr(RLlibRun, "restore", restore_and_look)
    out = _Lines()
    summary = train_rllib(None, resume=str(run), out=out, overrides=["iterations=2"])
    assert "resumed" in out.text and "iteration 2/2" in out.text and summary["iterations"] == 2
    assert summary["env_steps"] >= first["env_steps"] + 256  # counted on from the checkpoint
    for name, value in restored["weights"].items():
        np.testing.assert_array_equal(value, saved[f"module/shared/{name}"].numpy())
    moments = {k: v for k, v in saved.items() if k.startswith("optimizer/") and k.endswith("/exp_avg_sq")}
    assert moments and all(np.asarray(restored["optimizer"][int(k.split("/")[-2])]["exp_avg_sq"]).tolist()
                           == v.numpy().tolist() for k, v in moments.items())
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "iter_000001.json", "iter_000001.safetensors", "iter_000002.json", "iter_000002.safetensors"]
    with pytest.raises(ConfigError, match="not an RLlib run directory"):
        train_rllib(None, resume=str(tmp_path))


def test_command_line_reports_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main

    assert main(["train-rllib", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: {lrr: 0.1}\n")
    assert main(["train-rllib", "--config", str(bad)]) == 2
    assert "unknown key 'lrr' (did you mean 'lr'?)" in capsys.readouterr().err


def _payload_pickle(marker: Path) -> bytes:
    import pickle

    class Payload:
        def __reduce__(self) -> tuple:
            return (open, (str(marker), "w"))

    return pickle.dumps(Payload())


@pytest.mark.parametrize("plant", ["old RLlib checkpoint directory", "malformed state", "foreign state"])
def test_resume_never_unpickles_and_refuses_what_it_cannot_check(tmp_path: Path, plant: str) -> None:
    """RLlib's own checkpoints pickle (class_and_ctor_args.pkl, state pickles): resume refuses them, and a
    damaged or foreign state file, with a CheckpointError naming the file, before Ray starts."""
    import yaml

    from allfives_training.checkpoint import CheckpointError
    from allfives_training.schema import apply_overrides
    from allfives_training.rllib.train import train_rllib

    run, marker = tmp_path / "run", tmp_path / "PAYLOAD_RAN"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump(validate_rllib_config(apply_overrides({}, TINY)).to_dict()))
    if plant == "old RLlib checkpoint directory":
        old = run / "checkpoints" / "iter_000001"
        old.mkdir()
        for name in ("class_and_ctor_args.pkl", "state.pkl"):
            (old / name).write_bytes(_payload_pickle(marker))
        (old / "allfives_run.json").write_text('{"iteration": 1, "history": []}')
        expected, named = "old pickle-based format", "iter_000001"
    elif plant == "malformed state":
        (run / "checkpoints" / "iter_000001.json").write_text('{"format": "allfives-checkpoint/1", "iter')
        expected, named = "not valid JSON", "iter_000001.json"
    else:
        (run / "checkpoints" / "iter_000001.json").write_text('{"format": "allfives-checkpoint/1", "trainer": '
                                                              '"sb3-maskableppo", "iteration": 1}')
        expected, named = "not a checkpoint of this format", "iter_000001.json"
    before = (run / "config.yaml").read_bytes()
    with pytest.raises(CheckpointError, match=expected) as info:
        train_rllib(None, resume=str(run), out=_Lines(), overrides=["iterations=2"])
    assert named in str(info.value) and not marker.exists()
    assert (run / "config.yaml").read_bytes() == before
