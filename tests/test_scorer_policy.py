"""The policy with a shared placement scorer (training/scorer_policy.py): torch and numpy agree, files
are checked, configs are validated."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from allfives_env.core import Rules  # noqa: E402
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder  # noqa: E402
from allfives_env.policy import PolicyError, load_policy, read_policy_header  # noqa: E402
from allfives_env.single_seat import AllFivesSingleSeatEnv  # noqa: E402
from training.config import ConfigError, validate_config  # noqa: E402
from training.export import export_policy  # noqa: E402
from training.scorer_policy import ScoredMaskablePolicy, scorer_spec  # noqa: E402
from tests.helpers import learner_observations  # noqa: E402


def _model(rules: Rules, hidden: list[int], seed: int = 0):
    torch.set_num_threads(1)
    env = AllFivesSingleSeatEnv(opponents=["greedy"], rules=rules, action_features=True)
    enc = ObservationEncoder(rules, action_features=True)
    spec = scorer_spec(enc.slices["features"].start, 4 * enc.T, len(ACTION_FEATURES), hidden)
    model = sb3_contrib.MaskablePPO(ScoredMaskablePolicy, env, n_steps=64, batch_size=64, seed=seed, device="cpu",
                                    policy_kwargs={"net_arch": {"pi": [32], "vf": [8]}, "activation_fn": torch.nn.Tanh,
                                                   "action_scorer": spec})
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # untrained heads are near zero: a real spread makes the comparison bite
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model, env


@pytest.mark.parametrize("options, hidden", [({}, [16]), ({}, []), ({"may_draw_when_able": True}, [8, 8])])
def test_export_reproduces_the_torch_logits_and_actions(tmp_path: Path, options: dict, hidden: list[int]) -> None:
    rules = Rules(num_players=2, **options)
    model, env = _model(rules, hidden)
    path = export_policy(model, tmp_path / "p.npz", rules)
    header = read_policy_header(path)
    assert header["action_features"] is True and header["action_scorer"]["hidden"] == hidden
    policy = load_policy(path, rules)
    obs, masks = learner_observations(env, 300)
    p = model.policy
    with torch.no_grad():
        latent = p.mlp_extractor.forward_actor(p.extract_features(torch.as_tensor(obs), p.pi_features_extractor))
        expected = p.action_net(latent).numpy()
    np.testing.assert_allclose(policy.logits(obs), expected, rtol=1e-4, atol=1e-4)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(policy.predict(obs, masks), actions)
    assert [int(policy.predict(o, m)) for o, m in zip(obs[:30], masks[:30])] == list(actions[:30])
    # the scorer is shared: the same feature row gets the same score wherever it stands
    scores = p.mlp_extractor.action_scores(torch.as_tensor(obs[:5])).detach().numpy()
    assert scores.shape == (5, env.action_space.n) and not scores[:, 4 * 28:].any()


def test_checkpoint_round_trip_keeps_the_scorer(tmp_path: Path) -> None:
    """The run's checkpoint format (safetensors, no pickle) carries the scorer's weights by name."""
    from training.checkpoint import check_module, module_tensors, read_tensors, write_tensors

    rules = Rules(num_players=2)
    model, env = _model(rules, [8])
    digest = write_tensors(tmp_path / "m.safetensors", module_tensors(model.policy.state_dict(), "policy/"))
    assert any(name.startswith("policy/mlp_extractor.scorer.") for name in
               read_tensors(tmp_path / "m.safetensors", digest, tmp_path / "m.json"))
    again, _ = _model(rules, [8], seed=1)
    tensors = read_tensors(tmp_path / "m.safetensors", digest, tmp_path / "m.json")
    again.policy.load_state_dict(check_module(again.policy.state_dict(), tensors, "policy/", tmp_path / "m.safetensors",
                                              "the policy"), strict=True)
    assert isinstance(again.policy, ScoredMaskablePolicy)
    obs, masks = learner_observations(env, 20)
    assert np.array_equal(again.predict(obs, action_masks=masks, deterministic=True)[0],
                          model.predict(obs, action_masks=masks, deterministic=True)[0])


def test_damaged_scorer_weights_fail_clearly(tmp_path: Path) -> None:
    rules = Rules(num_players=2)
    model, _ = _model(rules, [8])
    path = export_policy(model, tmp_path / "p.npz", rules)
    with np.load(path, allow_pickle=False) as data:
        arrays = dict(data)
    arrays["scorer_0_weight"] = arrays["scorer_0_weight"][:, :5]
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (tmp_path / "bad.npz").write_bytes(buf.getvalue())
    with pytest.raises(PolicyError, match=r"scorer layer 0 has weights \(8, 5\).*the header says \(8, 12\)"):
        load_policy(tmp_path / "bad.npz")
    del arrays["scorer_1_bias"]
    header = json.loads(bytes(arrays["header"]).decode())
    assert header["action_scorer"]["features"] == 12
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (tmp_path / "missing.npz").write_bytes(buf.getvalue())
    with pytest.raises(PolicyError, match="missing weight array 'scorer_1_bias'"):
        load_policy(tmp_path / "missing.npz")


def test_config_needs_the_action_features() -> None:
    with pytest.raises(ConfigError, match=r"network\.action_scorer: .*needs env\.action_features: true"):
        validate_config({"network": {"action_scorer": [32]}})
    with pytest.raises(ConfigError, match=r"network\.action_scorer: must be null or a list of positive integers"):
        validate_config({"env": {"action_features": True}, "network": {"action_scorer": 32}})
    cfg = validate_config({"env": {"action_features": True}, "network": {"action_scorer": []}})
    assert cfg.network.action_scorer == []
