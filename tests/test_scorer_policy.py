"""The policy with a shared placement scorer (allfives_training/scorer_policy.py): torch and numpy agree, files
are checked, configs are validated."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from allfives_env.core import Rules  # noqa: E402
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder  # noqa: E402
from allfives_env.policy import PolicyError, load_policy, read_policy_header  # noqa: E402
from allfives_env.single_seat import AllFivesSingleSeatEnv  # noqa: E402
from allfives_training.config import ConfigError, validate_config  # noqa: E402
from allfives_training.export import export_policy  # noqa: E402
from allfives_training.scorer_policy import ScoredMaskablePolicy, scorer_spec  # noqa: E402
from tests.helpers import learner_observations  # noqa: E402


def _model(rules: Rules, hidden: list[int], seed: int = 0, trunk_reads_features: bool = True):
    torch.set_num_threads(1)
    env = AllFivesSingleSeatEnv(opponents=["greedy"], rules=rules, action_features=True)
    enc = ObservationEncoder(rules, action_features=True)
    spec = scorer_spec(enc.slices["features"].start, 4 * enc.T, len(ACTION_FEATURES), hidden, trunk_reads_features)
    model = sb3_contrib.MaskablePPO(ScoredMaskablePolicy, env, n_steps=64, batch_size=64, seed=seed, device="cpu",
                                    policy_kwargs={"net_arch": {"pi": [32], "vf": [8]}, "activation_fn": torch.nn.Tanh,
                                                   "action_scorer": spec})
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # untrained heads are near zero: a real spread makes the comparison bite
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model, env


@pytest.mark.parametrize("options, hidden, trunk_reads_features", [
    ({}, [16], True), ({}, [], True), ({"may_draw_when_able": True}, [8, 8], True), ({}, [16], False),
    ({"num_players": 3, "max_pip": 9}, [8], False)])
def test_export_reproduces_the_torch_logits_and_actions(tmp_path: Path, options: dict, hidden: list[int],
                                                       trunk_reads_features: bool) -> None:
    rules = Rules(**{"num_players": 2, **options})
    model, env = _model(rules, hidden, trunk_reads_features=trunk_reads_features)
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
    assert scores.shape == (5, env.action_space.n) and not scores[:, p.mlp_extractor.rows[1]:].any()


def test_checkpoint_round_trip_keeps_the_scorer(tmp_path: Path) -> None:
    """The run's checkpoint format (safetensors, no pickle) carries the scorer's weights by name."""
    from allfives_training.checkpoint import check_module, module_tensors, read_tensors, write_tensors

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


def _dense_scores(extractor, obs: "torch.Tensor") -> "torch.Tensor":
    """The scorer on every row, zero rows included: what the sparse scoring must equal."""
    offset, placements, width = extractor.rows
    rows = obs[:, offset:offset + placements * width].reshape(-1, placements, width)
    scores = extractor.scorer(rows).squeeze(-1)
    return torch.nn.functional.pad(scores, (0, extractor.n_actions - placements))


def test_sparse_scoring_equals_scoring_every_row_in_values_and_gradients() -> None:
    """Only the non-zero feature rows go through the scorer; the zero rows share g(0). Values and the
    scorer's gradients match scoring all 112 rows (and a legal placement with an all-zero row, written
    in by hand, still scores g(0))."""
    rules = Rules(num_players=2)
    model, env = _model(rules, [8])
    extractor = model.policy.mlp_extractor
    obs, _ = learner_observations(env, 64)
    obs = torch.as_tensor(obs)
    assert (obs[:, 152:].reshape(64, 112, 12).ne(0).any(-1).sum(1) < 112).all()  # most rows are zero
    weights = torch.randn(64, env.action_space.n, generator=torch.Generator().manual_seed(1))
    grads = []
    for scores_of in (extractor.action_scores, lambda o: _dense_scores(extractor, o)):
        model.policy.zero_grad()
        scores = scores_of(obs)
        (scores * weights).sum().backward()
        grads.append([p.grad.clone() for p in extractor.scorer.parameters()])
        grads[-1].insert(0, scores.detach())
    for sparse, dense in zip(*grads):
        torch.testing.assert_close(sparse, dense, rtol=1e-4, atol=1e-4)  # float32 sums in another order


def test_a_trunk_without_the_feature_rows_ignores_them_but_the_scorer_does_not() -> None:
    rules = Rules(num_players=2)
    model, env = _model(rules, [8], trunk_reads_features=False)
    extractor = model.policy.mlp_extractor
    assert extractor.policy_net[0].in_features == 152 and extractor.value_net[0].in_features == 152
    obs, _ = learner_observations(env, 16)
    obs = torch.as_tensor(obs)
    changed = obs.clone()
    changed[:, 152:] *= 2.0
    with torch.no_grad():
        assert torch.equal(extractor.forward_critic(obs), extractor.forward_critic(changed))
        assert torch.equal(extractor.policy_net(extractor.trunk_input(obs)),
                           extractor.policy_net(extractor.trunk_input(changed)))
        assert not torch.equal(extractor.action_scores(obs), extractor.action_scores(changed))


def test_config_trunk_without_features_needs_the_scorer() -> None:
    with pytest.raises(ConfigError, match=r"network\.trunk_reads_features: false .*needs network\.action_scorer"):
        validate_config({"env": {"action_features": True}, "network": {"trunk_reads_features": False}})
    cfg = validate_config({"env": {"action_features": True},
                           "network": {"action_scorer": [8], "trunk_reads_features": False}})
    assert cfg.network.trunk_reads_features is False


def _model_with_gain(gain: Optional[float]) -> tuple[Any, AllFivesSingleSeatEnv]:
    """A small scored policy, as SB3 initialises it (no weights overwritten), with ``score_gain=gain``."""
    torch.set_num_threads(1)
    rules = Rules(num_players=2)
    env = AllFivesSingleSeatEnv(opponents=["greedy"], rules=rules, action_features=True)
    enc = ObservationEncoder(rules, action_features=True)
    spec = scorer_spec(enc.slices["features"].start, 4 * enc.T, len(ACTION_FEATURES), [8], False, gain)
    model = sb3_contrib.MaskablePPO(ScoredMaskablePolicy, env, n_steps=64, batch_size=64, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": {"pi": [16], "vf": [8]}, "action_scorer": spec})
    return model, env


@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_score_gain_starts_each_score_on_its_own_logit(gain: float) -> None:
    """With ``score_gain`` the action head's score block starts as ``gain`` x identity: each logit is the
    trunk's part plus ``gain`` times that action's own score, nothing from the other actions' scores."""
    model, env = _model_with_gain(gain)
    p = model.policy
    n = env.action_space.n
    trunk = p.mlp_extractor.latent_dim_pi - n
    assert torch.equal(p.action_net.weight[:, trunk:], gain * torch.eye(n))
    obs = torch.as_tensor(learner_observations(env, 16)[0])
    with torch.no_grad():
        x = p.mlp_extractor.trunk_input(obs)
        trunk_logits = p.mlp_extractor.policy_net(x) @ p.action_net.weight[:, :trunk].T + p.action_net.bias
        expected = trunk_logits + gain * p.mlp_extractor.action_scores(obs)
        torch.testing.assert_close(p.action_net(p.mlp_extractor.forward_actor(obs)), expected)
    # the trunk's part starts small (SB3's gain 0.01), so the scores steer the first policy
    assert trunk_logits.abs().max() < 0.1


def test_score_gain_null_keeps_sb3s_start_and_is_checked() -> None:
    model, env = _model_with_gain(None)
    block = model.policy.action_net.weight[:, -env.action_space.n:]
    assert block.abs().max() < 0.05  # orthogonal at gain 0.01
    base = {"env": {"action_features": True}, "network": {"action_scorer": [8]}}
    assert validate_config(base).network.score_gain == 1.0
    assert validate_config({**base, "network": {"action_scorer": [8], "score_gain": None}}).network.score_gain is None
    with pytest.raises(ConfigError, match=r"network\.score_gain"):
        validate_config({**base, "network": {"action_scorer": [8], "score_gain": -1}})
    with pytest.raises(ConfigError, match=r"network\.score_gain: .*needs network\.action_scorer"):
        validate_config({"network": {"score_gain": 2.0}})
