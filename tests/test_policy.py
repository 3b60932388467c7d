"""Policy files: export from MaskablePPO (allfives_training/export.py), numpy inference identical to torch, the
``ppo`` agent, clear refusals of foreign or mismatched files, and the library's policy code standing alone
(no agents, no torch)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from allfives_env.agents import PolicyAgent, make_agent
from allfives_env.core import Rules
from allfives_env.evaluation import evaluate
from allfives_env.policy import POLICY_FORMAT, PolicyError, load_policy, read_policy_header
from allfives_env.single_seat import AllFivesSingleSeatEnv
from tests.helpers import learner_observations, with_other_hidden_tiles
from allfives_training.export import export_policy

ROOT = Path(__file__).resolve().parents[1]


def _observations(rules: Rules, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Real observations and masks of the learner's decisions, from games against greedy/random."""
    return learner_observations(AllFivesSingleSeatEnv(opponents=["greedy", "random"], rules=rules), n, seed)


def _model(rules: Rules, activation: str = "tanh", hidden: tuple[int, ...] = (64, 64), seed: int = 0):
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    torch.set_num_threads(1)
    acts = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU, "leaky_relu": torch.nn.LeakyReLU,
            "silu": torch.nn.SiLU}
    env = AllFivesSingleSeatEnv(opponents=["random"], rules=rules)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, seed=seed, device="cpu",
        policy_kwargs={"net_arch": {"pi": list(hidden), "vf": [8]}, "activation_fn": acts[activation]},
    )
    # untrained action heads are near zero (gain 0.01): give every weight a real spread so the test bites
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model


def _torch_logits(model, obs: np.ndarray) -> np.ndarray:
    import torch

    policy = model.policy
    with torch.no_grad():
        t = torch.as_tensor(obs, dtype=torch.float32)
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(t, policy.pi_features_extractor))
        return policy.action_net(latent).numpy()


@pytest.mark.parametrize("activation", ["tanh", "relu", "elu", "leaky_relu", "silu"])
def test_export_load_gives_the_torch_policys_actions(tmp_path: Path, activation: str) -> None:
    rules = Rules(num_players=2)
    model = _model(rules, activation)
    path = export_policy(model, tmp_path / "p.npz", rules, metadata={"note": "test"})
    policy = load_policy(path, rules)
    obs, masks = _observations(rules, 400)
    np.testing.assert_allclose(policy.logits(obs), _torch_logits(model, obs), rtol=1e-4, atol=1e-4)
    torch_actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np_actions = policy.predict(obs, masks)
    assert np.array_equal(np_actions, torch_actions)
    assert all(masks[i, a] for i, a in enumerate(np_actions))
    # one observation at a time, as the agent plays
    assert [int(policy.predict(o, m)) for o, m in zip(obs[:50], masks[:50])] == list(torch_actions[:50])


def test_header_records_layout_rules_and_metadata(tmp_path: Path) -> None:
    rules = Rules(num_players=3, target=100)
    model = _model(rules, hidden=(32,))
    path = export_policy(model, tmp_path / "p3.npz", rules, metadata={"step": 123})
    header = read_policy_header(path)
    assert header["format"] == POLICY_FORMAT and header["version"] == 1
    assert header["obs_layout_version"] == 1 and header["obs_size"] == 191 and header["num_actions"] == 112
    assert header["rules"]["num_players"] == 3 and header["rules"]["target"] == 100
    assert header["activation"] == "tanh" and header["hidden"] == [32]
    assert header["metadata"] == {"step": 123}
    with np.load(path, allow_pickle=False) as data:  # nothing in the file needs pickle
        assert set(data.files) == {"header", "hidden_0_weight", "hidden_0_bias", "action_weight", "action_bias"}


def test_ppo_agent_plays_and_evaluates_in_the_harness(tmp_path: Path) -> None:
    rules = Rules(num_players=2, target=100)
    path = export_policy(_model(rules), tmp_path / "p.npz", rules)
    agent = make_agent(f"ppo:path={path}", seed=0)
    assert isinstance(agent, PolicyAgent) and agent.spec() == f"ppo:path={path}"
    assert make_agent(agent.spec()).spec() == agent.spec()
    sampler = make_agent("ppo", path=str(path), sample=True, temperature=0.5)
    assert make_agent(sampler.spec()).spec() == sampler.spec() == f"ppo:path={path},sample=true,temperature=0.5"
    match = evaluate([f"ppo:path={path}", "random"], rules, games=4, seed=1, progress=False)
    assert match.games == 4
    # as an opponent inside the single-seat env
    env = AllFivesSingleSeatEnv(opponents=[f"ppo:path={path}"], rules=rules)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated


def test_playing_needs_numpy_only(tmp_path: Path) -> None:
    rules = Rules(num_players=2, target=60)
    path = export_policy(_model(rules, hidden=(16,)), tmp_path / "p.npz", rules)
    code = (
        "import sys\n"
        "import allfives_env.policy\n"
        "from allfives_env.evaluation import evaluate\n"
        f"m = evaluate(['ppo:path={path}', 'greedy'], {{'num_players': 2, 'target': 60}}, games=2, progress=False)\n"
        "assert m.games == 2\n"
        "assert 'torch' not in sys.modules and 'stable_baselines3' not in sys.modules, 'torch was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


def _imports(path: Path, package: str) -> set[str]:
    """Every module ``path`` (a module of ``package``) imports, anywhere in it (functions too), relative
    imports resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_policy_package_knows_nothing_of_agents_or_torch() -> None:
    """File format and network stand alone: allfives_env.agents imports them, never the other way round
    (no import cycle), and torch lives in allfives_training/."""
    files = sorted((ROOT / "allfives_env" / "policy").glob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "file.py", "network.py", "header.py"}
    imports = {path.name: _imports(path, "allfives_env.policy") for path in files}
    assert "allfives_env.core.rules" in imports["header.py"]  # relative imports resolved as Python does
    for name, imported in imports.items():
        bad = sorted(m for m in imported
                     if m.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib", "training")
                     or m.startswith("allfives_env.agents"))
        assert not bad, f"{name} imports {bad}"


def test_a_shipped_policy_plays_from_a_fresh_interpreter() -> None:
    """Registering the policy agents needs no side-effect import: make_agent finds them by itself."""
    code = ("import sys\nfrom allfives_env.agents import make_agent\n"
            "agent = make_agent('ppo-2p')\nassert agent.spec() == 'ppo-2p', agent.spec()\n"
            "assert type(agent).__module__ == 'allfives_env.agents.policy'\n"
            "assert 'torch' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def two_player_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rules = Rules(num_players=2)
    return export_policy(_model(rules, hidden=(16,)), tmp_path_factory.mktemp("pol") / "two.npz", rules)


@pytest.mark.parametrize("options, key, trained, given", [
    ({"num_players": 4}, "num_players", "2", "4"),
    ({"max_pip": 9}, "max_pip", "6", "9"),
    ({"may_draw_when_able": True}, "may_draw_when_able", "False", "True"),
])
def test_mismatched_rules_fail_clearly(two_player_file: Path, options: dict, key: str, trained: str,
                                       given: str) -> None:
    rules = Rules(**options)
    with pytest.raises(PolicyError, match=rf"trained for {key}={trained}, but this game has {key}={given}"):
        load_policy(two_player_file, rules)
    agent = make_agent("ppo", path=str(two_player_file))
    with pytest.raises(PolicyError, match=key):
        evaluate([agent, "random"], rules, games=2, progress=False)
    # options that leave the spaces alone are allowed
    load_policy(two_player_file, Rules(num_players=2, target=100, hand_end="winner_takes"))


def _rewrite_header(src: Path, dst: Path, **changes) -> Path:
    with np.load(src, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(arrays["header"].tobytes().decode())
    header.update(changes)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(dst, **arrays)
    return dst


def test_foreign_layout_format_and_version_fail_clearly(two_player_file: Path, tmp_path: Path) -> None:
    old_layout = _rewrite_header(two_player_file, tmp_path / "layout.npz", obs_layout_version=0)
    with pytest.raises(PolicyError, match="observation layout version 0.*layout version 1"):
        load_policy(old_layout)
    with pytest.raises(ValueError, match="observation layout version 0"):  # make_agent wraps it in AgentError
        make_agent("ppo", path=str(old_layout))
    newer = _rewrite_header(two_player_file, tmp_path / "version.npz", version=99)
    with pytest.raises(PolicyError, match="version 99.*version 1"):
        load_policy(newer)
    foreign = _rewrite_header(two_player_file, tmp_path / "foreign.npz", format="something-else")
    with pytest.raises(PolicyError, match="'something-else', expected 'allfives-policy'"):
        load_policy(foreign)


def test_unreadable_files_fail_clearly_and_never_unpickle(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="does not exist"):
        load_policy(tmp_path / "missing.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip at all")
    with pytest.raises(PolicyError, match="not a readable policy file"):
        load_policy(garbage)
    no_header = tmp_path / "plain.npz"
    np.savez(no_header, w=np.zeros(3))
    with pytest.raises(PolicyError, match="no JSON header"):
        load_policy(no_header)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, header=np.array([{"format": POLICY_FORMAT}], dtype=object))
    with pytest.raises(PolicyError, match="pickle"):
        load_policy(pickled)
    with pytest.raises(ValueError, match="path=FILE.npz"):
        make_agent("ppo")


def test_truncated_weights_fail_clearly(two_player_file: Path, tmp_path: Path) -> None:
    with np.load(two_player_file, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["action_weight"] = arrays["action_weight"][:10]
    np.savez(tmp_path / "cut.npz", **arrays)
    with pytest.raises(PolicyError, match="layer 1 has weights"):
        load_policy(tmp_path / "cut.npz")


def test_partnership_mismatch_fails_clearly(tmp_path: Path) -> None:
    team = Rules(num_players=4)
    path = export_policy(_model(team, hidden=(8,)), tmp_path / "team.npz", team)
    with pytest.raises(PolicyError, match="trained for partnership=True, but this game has partnership=False"):
        load_policy(path, Rules(num_players=4, partnership=False))


def test_ppo_agent_sees_only_its_observation(two_player_file: Path) -> None:
    """Same public position, other hidden tiles -> same move; and the same moves for the same seed."""
    from allfives_env.agents import PlayerView
    from allfives_env.core import Game

    rules = Rules(num_players=2)
    rng = np.random.default_rng(4)
    game = Game(rules, 4)
    checked = 0
    while checked < 15 and not game.over:
        seat = game.current
        other = with_other_hidden_tiles(game, seat, checked)
        a = make_agent("ppo", seed=1, path=str(two_player_file)).act(PlayerView(game, seat))
        b = make_agent("ppo", seed=1, path=str(two_player_file)).act(PlayerView(other, seat))
        assert a == b and a in game.legal
        checked += 1
        game.step(game.legal[int(rng.integers(len(game.legal)))])
