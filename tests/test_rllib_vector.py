"""RLlib at parity with the stable-baselines3 recipe: the vector env of the batch engine as RLlib's env (mask in
the observation), the placement scorer in the RLModule and in its exported policy file, the scorer's config
checks, and one tiny ``learners: one_seat`` run (skipped when the [rllib] extra is not installed)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from rllib_requirements import require_rllib  # noqa: E402

require_rllib()

from allfives_env.core import Rules  # noqa: E402
from allfives_env.core.errors import BatchError  # noqa: E402
from allfives_training.schema import ConfigError  # noqa: E402
from allfives_training.rllib.config import validate_rllib_config  # noqa: E402
from allfives_training.rllib.vector_env import make_vector_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VECTOR = {"rules": {"num_players": 2}, "opponents": ["greedy", "expert"], "reward": "points", "action_features": True}


def test_the_vector_env_puts_each_games_mask_in_its_observation() -> None:
    import gymnasium

    env = make_vector_env({**VECTOR, "num_envs": 16})
    inner = env.env.unwrapped
    obs, info = env.reset(seed=5)
    assert info == {} and env.observation_space.contains(obs)
    twin = gymnasium.make_vec("AllFives-v0", num_envs=16, vectorization_mode="vector_entry_point",
                              rules=Rules(num_players=2), opponents=["greedy", "expert"], reward="points",
                              action_features=True)
    twin_obs, _ = twin.reset(seed=5)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        masks = obs["action_mask"]
        assert masks.dtype == np.float32
        np.testing.assert_array_equal(masks, inner.action_masks().astype(np.float32))
        np.testing.assert_array_equal(obs["observations"], twin_obs)  # the same games, observation untouched
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        assert all(m.any() or r for m, r in zip(masks, inner.restart_next))  # no legal action only at a restart
        obs, rewards, terminated, truncated, info = env.step(acts)
        twin_obs, twin_rewards, *_ = twin.step(acts)
        np.testing.assert_array_equal(rewards, twin_rewards)
        ended += int(terminated.sum() + truncated.sum())
        assert info == {}
    assert ended > 0, "some games ended, so the restart rows were checked"
    assert (obs["action_mask"][inner.restart_next] == 0).all()


def test_the_vector_env_refuses_what_it_cannot_pass_on() -> None:
    with pytest.raises(BatchError, match=r"unknown config key\(s\) \['learners'\]"):
        make_vector_env({**VECTOR, "learners": "all"})
    with pytest.raises(Exception, match="pimc"):
        make_vector_env({**VECTOR, "opponents": ["pimc"]})


@pytest.mark.parametrize("trunk_reads_features", [False, True])
def test_the_module_scores_placements_and_its_policy_file_plays_the_same(tmp_path: Path,
                                                                        trunk_reads_features: bool) -> None:
    import torch
    from ray.rllib.core.columns import Columns

    from allfives_env.policy import load_policy, read_policy_header
    from allfives_training.rllib.module import MaskedPPOModule, export_module, model_config

    rules = Rules(num_players=2)
    env = make_vector_env({**VECTOR, "num_envs": 64})
    config = model_config(rules, [32, 16], "relu", [8], trunk_reads_features, 1.0)
    module = MaskedPPOModule(observation_space=env.single_observation_space, action_space=env.single_action_space,
                             model_config=config)
    n = env.single_action_space.n
    head = module.pi_head.weight.detach()
    np.testing.assert_array_equal(head[:, -n:].numpy(), np.eye(n))  # score_gain 1: each score on its own logit
    assert float(head[:, :-n].abs().max()) < 0.2  # the trunk's part starts small (SB3's gain 0.01)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # a real spread in every weight makes the comparison bite
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.3)
    obs, _ = env.reset(seed=1)
    rows, masks = [], []
    for _ in range(4):
        rows.append(obs["observations"])
        masks.append(obs["action_mask"])
        legal = [np.flatnonzero(m) for m in obs["action_mask"]]
        obs, *_ = env.step(np.array([m[0] if len(m) else 0 for m in legal]))
    o, m = np.concatenate(rows), np.concatenate(masks)
    batch = {Columns.OBS: {"observations": torch.as_tensor(o), "action_mask": torch.as_tensor(m)}}
    logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].detach().numpy()
    assert np.all(logits[m == 0] < -1e30) and np.all(logits[m == 1] > -1e30)
    assert module.compute_values(batch).shape == (len(o),)
    path = export_module(module, tmp_path / "p.npz", rules)
    header = read_policy_header(path)
    assert header["action_scorer"]["hidden"] == [8] and header["hidden"] == [32, 16]
    policy = load_policy(path, rules)
    legal = m == 1
    np.testing.assert_allclose(np.where(legal, policy.logits(o), 0), np.where(legal, logits, 0), rtol=1e-4, atol=1e-4)
    assert np.array_equal(policy.predict(o, legal), logits.argmax(axis=1))
    with torch.no_grad():  # the scorer matters: zeroing it changes what is played
        for p in module.extractor.scorer.parameters():
            p.zero_()
    flat = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].detach().numpy()
    assert not np.array_equal(flat.argmax(axis=1), logits.argmax(axis=1))


def test_the_scorer_and_one_seat_keys_are_checked_together() -> None:
    with pytest.raises(ConfigError, match="network.action_scorer: .* needs env.action_features: true"):
        validate_rllib_config({"network": {"action_scorer": [32]}})
    with pytest.raises(ConfigError, match="network.score_gain: .* needs network.action_scorer"):
        validate_rllib_config({"network": {"score_gain": 2.0}})
    with pytest.raises(ConfigError, match="network.trunk_reads_features: false .* needs network.action_scorer"):
        validate_rllib_config({"network": {"trunk_reads_features": False}})
    with pytest.raises(ConfigError, match="policies: learners: one_seat trains one module"):
        validate_rllib_config({"learners": "one_seat", "policies": "per_team"})
    with pytest.raises(ConfigError, match="opponents: .*pimc.* batch engine"):
        validate_rllib_config({"learners": "one_seat", "opponents": {"pimc": 1}})


def test_the_command_defaults_to_the_parity_config() -> None:
    import argparse

    from allfives_training.rllib.config import load_rllib_config
    from allfives_training.rllib.train import add_train_rllib_parser

    parser = argparse.ArgumentParser()
    add_train_rllib_parser(parser.add_subparsers())
    args = parser.parse_args(["train-rllib"])
    cfg = load_rllib_config(ROOT / args.config)
    assert Path(args.config).name == "rllib_default.yaml"
    assert cfg.learners == "one_seat" and cfg.env.action_features and cfg.network.action_scorer == [32]
    assert cfg.network.score_gain == 1.0 and not cfg.network.trunk_reads_features and cfg.ppo.kl_coeff == 0.0
    assert cfg.env_runners.num_envs_per_env_runner * max(1, cfg.env_runners.num_env_runners) == 128


TINY = ["iterations=1", "ppo.train_batch_size=256", "ppo.minibatch_size=128", "ppo.num_epochs=1",
        "env_runners.num_env_runners=1", "env_runners.num_envs_per_env_runner=16", "network.hidden=[16]",
        "network.action_scorer=[4]", "evaluation.final_games=4", "evaluation.baselines=[greedy]",
        "evaluation.processes=1", "evaluation.replays=0", "opponents={greedy: 1}"]


def test_one_tiny_one_seat_run_exports_the_scorer_and_checkpoints(tmp_path: Path) -> None:
    from allfives_env.agents import make_agent
    from allfives_env.match import play_game
    from allfives_env.policy import read_policy_header
    from allfives_training.rllib.train import train_rllib

    run = tmp_path / "run"
    out = io.StringIO()
    summary = train_rllib(ROOT / "configs" / "rllib_default.yaml", run_dir=str(run), out=out, overrides=TINY)
    text = out.getvalue()
    assert summary["iterations"] == 1 and summary["env_steps"] >= 256, text
    assert "learners one_seat, 1 env runners x 16 envs" in text and "greedy" in text
    path = run / "policy_default_policy.npz"
    header = read_policy_header(path)
    assert header["algorithm"] == "RLlib PPO" and header["action_scorer"]["hidden"] == [4]
    result = play_game(Rules(num_players=2), [make_agent(f"ppo:path={path}"), make_agent("greedy")], seed=0)
    assert result.winner in (0, 1, None)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000001.json", "iter_000001.safetensors"]
