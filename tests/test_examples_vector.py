"""The two examples on the vector env run end to end, and the CleanRL file's pieces do what its docstring says.

examples/cleanrl_ppo.py (needs torch and tyro) and examples/sb3_vector.py (needs sb3-contrib) each run a
smoke-sized training in a subprocess and must print one evaluation line per opponent and fresh seed. The
CleanRL file is also imported: its masked sampling never draws an illegal action, its compact scoring of the
legal rows equals scoring every row, its GAE cuts the trace at a done step and bootstraps a truncated game
from its final observation, its update learns without NaN from fewer valid steps than minibatches, and its
exported policy file gives the torch logits."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
CLEANRL = ROOT / "examples" / "cleanrl_ppo.py"
SB3 = ROOT / "examples" / "sb3_vector.py"
EVAL_LINE = re.compile(r"^eval vs (\w+) \(seed (\d+), (\d+) games\): win rate (\d+\.\d)% "
                       r"\[95% CI (\d+\.\d)% - (\d+\.\d)%\]$", re.M)


def _needs(*modules: str) -> None:
    for name in modules:
        pytest.importorskip(name, reason=f"the example needs {name}: pip install -e '.[train]' tyro==1.0.17")


def _run(script: Path, args: list[str]) -> str:
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _check_evaluations(stdout: str, seeds: list[str]) -> None:
    lines = EVAL_LINE.findall(stdout)
    assert [(o, s) for o, s, *_ in lines] == [(o, s) for o in ("greedy", "random") for s in seeds], stdout
    for _, _, games, rate, low, high in lines:
        assert int(games) >= 4
        assert 0.0 <= float(low) <= float(rate) <= float(high) <= 100.0


def _trained_steps(stdout: str) -> int:
    found = re.search(r"^trained ([\d,]+) steps", stdout, re.M)
    assert found, stdout
    return int(found.group(1).replace(",", ""))


def test_cleanrl_smoke_run_trains_and_evaluates_on_each_fresh_seed(tmp_path: Path) -> None:
    _needs("torch", "tyro")
    out = _run(CLEANRL, ["--total-timesteps", "2048", "--num-envs", "64", "--num-steps", "32", "--eval-games", "4",
                         "--eval-seeds", "11", "12", "--export", str(tmp_path / "p.npz")])
    _check_evaluations(out, ["11", "12"])
    assert _trained_steps(out) >= 2048
    from allfives_env.policy import load_policy

    assert load_policy(tmp_path / "p.npz").action_features


def test_cleanrl_learning_curve_has_a_point_at_the_start_and_each_multiple(tmp_path: Path) -> None:
    _needs("torch", "tyro")
    out = _run(CLEANRL, ["--total-timesteps", "3000", "--num-envs", "32", "--num-steps", "32", "--eval-games", "0",
                         "--curve-every", "1000", "--curve-games", "4", "--eval-opponents", "greedy", "expert",
                         "--eval-seeds", "11", "--export", str(tmp_path / "p.npz"), "--json-out",
                         str(tmp_path / "run.json")])
    run = json.loads((tmp_path / "run.json").read_text())
    steps = sorted({row["step"] for row in run["curve"]})
    assert steps[0] == 0 and len(steps) == 1 + run["global_step"] // 1000, (steps, run["global_step"])
    assert [s // 1000 for s in steps] == list(range(len(steps)))  # one point as training passes each multiple
    assert [(r["step"], r["opponent"]) for r in run["curve"]] == [(s, o) for s in steps for o in ("greedy", "expert")]
    assert all(r["seed"] == 11 and r["games"] >= 4 and 0 <= r["win_rate"] <= 1 for r in run["curve"])
    assert "curve @ 0 steps: vs greedy (seed 11," in out
    assert run["curve_seconds"] > 0 and run["evaluations"] == []
    _run(CLEANRL, ["--total-timesteps", "3000", "--num-envs", "32", "--num-steps", "32", "--eval-games", "0",
                   "--eval-seeds", "11", "--export", str(tmp_path / "plain.npz")])
    # playing the policy as it trains takes nothing from the training's generators: the same weights
    assert (tmp_path / "plain.npz").read_bytes() == (tmp_path / "p.npz").read_bytes()


def test_sb3_smoke_run_trains_and_evaluates_on_each_fresh_seed() -> None:
    _needs("torch", "sb3_contrib")
    out = _run(SB3, ["--total-timesteps", "2048", "--n-envs", "32", "--n-steps", "64", "--eval-games", "4",
                     "--eval-seeds", "11", "12"])
    _check_evaluations(out, ["11", "12"])
    assert _trained_steps(out) >= 2048


def test_sb3_refuses_an_evaluation_seed_equal_to_the_training_seed() -> None:
    _needs("torch", "sb3_contrib")
    proc = subprocess.run([sys.executable, str(SB3), "--seed", "5", "--eval-seeds", "5"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2 and "must differ from the training --seed" in proc.stderr


# ------------------------------------------------------------------------------------ the CleanRL file's pieces
@pytest.fixture(scope="module")
def cleanrl() -> ModuleType:
    """examples/cleanrl_ppo.py imported as a module (it lives outside the package)."""
    _needs("torch", "tyro")
    spec = importlib.util.spec_from_file_location("cleanrl_ppo_example", CLEANRL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def positions(cleanrl: ModuleType) -> tuple:
    """Observations and masks of 64 games a few moves in, a random network, and its encoder."""
    import gymnasium
    import torch

    from allfives_env.core.rules import Rules
    from allfives_env.encoding import ObservationEncoder

    torch.manual_seed(0)
    encoder = ObservationEncoder(Rules(num_players=2), action_features=True)
    net = cleanrl.Agent(encoder, 32, 16)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.3)  # far from the orthogonal start, so every part of the network shows in the logits
    envs = gymnasium.make_vec("AllFives-v0", num_envs=64, vectorization_mode="vector_entry_point",
                              opponents=["greedy"], action_features=True)
    obs, _ = envs.reset(seed=3)
    for _ in range(4):
        masks = envs.action_masks()
        obs, *_ = envs.step(np.where(masks.any(1), masks.argmax(1), 0))
    masks = envs.action_masks()
    keep = masks.any(1)
    return net, encoder, torch.from_numpy(obs[keep]), torch.from_numpy(masks[keep].copy())


def test_compact_scoring_equals_scoring_every_row(cleanrl: ModuleType, positions: tuple) -> None:
    import torch

    net, _, obs, mask = positions
    rows = obs[:, net.offset:net.end].reshape(len(obs), net.placements, net.width)
    dense = net.actor(net.position(obs)) + net.scorer(rows).squeeze(2)  # g on every row, zero rows included
    with torch.no_grad():
        compact = net.logits(net.split(obs, mask))
    assert net.split(obs, mask).rows.shape[1] < net.placements  # it did skip rows
    np.testing.assert_allclose(compact.numpy(), dense.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_sampling_draws_legal_actions_only_and_log_probs_sum_to_one(cleanrl: ModuleType, positions: tuple) -> None:
    import torch

    net, _, obs, mask = positions
    batch = net.split(obs, mask)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        drawn = torch.stack([net.get_action_and_value(batch, generator=gen)[0] for _ in range(200)])
        logits = net.logits(batch)
        _, logp, entropy, _ = net.get_action_and_value(batch, drawn[0])
    assert mask.gather(1, drawn.T).all()
    assert (mask.sum(1) > 1).any() and (drawn != drawn[0]).any()  # it samples, not argmax
    legal_logp = torch.where(mask, logits, -torch.inf).log_softmax(1)  # the exact masked distribution
    np.testing.assert_allclose(logp.numpy(), legal_logp.gather(1, drawn[0][:, None]).squeeze(1).numpy(), atol=1e-5)
    exact_entropy = -torch.where(mask, legal_logp.exp() * legal_logp, 0.0).sum(1)
    np.testing.assert_allclose(entropy.numpy(), exact_entropy.numpy(), atol=1e-5)


def test_gae_cuts_at_a_done_step_and_bootstraps_a_truncated_game(cleanrl: ModuleType) -> None:
    import torch

    # one game: steps 0, 1 (ends: terminated), 2 (the ignored restart step), 3; a second game truncated at 1
    rewards = torch.tensor([[1.0, 0.0], [2.0, 0.5], [0.0, 0.0], [4.0, 1.0]])
    values = torch.tensor([[0.5, 0.1], [0.25, 0.2], [9.0, 7.0], [1.0, 0.3]])
    terms = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    dones = torch.tensor([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    next_value = torch.tensor([2.0, 0.4])
    g, lam = 0.9, 0.8
    adv = cleanrl.gae(rewards, values, terms, dones, next_value, g, lam)
    d3 = 4.0 + g * 2.0 - 1.0
    d1 = 2.0 - 0.25  # terminated: no bootstrap, and the restart row's value never leaks in
    d0 = 1.0 + g * 0.25 - 0.5
    assert adv[3, 0] == pytest.approx(d3) and adv[1, 0] == pytest.approx(d1)
    assert adv[0, 0] == pytest.approx(d0 + g * lam * d1)
    t1 = 0.5 + g * 7.0 - 0.2  # truncated: bootstraps from its final observation's value (the next row)
    assert adv[1, 1] == pytest.approx(t1) and adv[0, 1] == pytest.approx(0.0 + g * 0.2 - 0.1 + g * lam * t1)


def test_exported_policy_file_gives_the_torch_logits(cleanrl: ModuleType, positions: tuple, tmp_path: Path) -> None:
    import torch

    from allfives_env.policy import load_policy

    net, encoder, obs, mask = positions
    cleanrl.export_policy(net, encoder, str(tmp_path / "p.npz"))
    with torch.no_grad():
        logits = net.logits(net.split(obs, mask)).numpy()
    np.testing.assert_allclose(load_policy(tmp_path / "p.npz").forward(obs.numpy()), logits, rtol=1e-4, atol=1e-4)


def test_an_update_with_fewer_valid_steps_than_minibatches_learns_without_nan(cleanrl: ModuleType,
                                                                              positions: tuple) -> None:
    """A rollout may hold fewer valid steps than ``--num-minibatches`` (most of its steps restarts): each valid
    step is then a minibatch of its own, and no minibatch is empty or normalises one advantage by its NaN std."""
    import copy

    import torch

    net, _, obs, mask = positions
    net = copy.deepcopy(net)  # the fixture's network stays as it was for the other tests
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        actions, logprobs, _, values = net.get_action_and_value(net.split(obs, mask), generator=gen)
    advantages = torch.randn(len(obs), generator=gen)
    valid = torch.zeros(len(obs), dtype=torch.bool)
    valid[:3] = True
    batch = {"obs": obs, "masks": mask, "actions": actions, "logprobs": logprobs, "values": values,
             "advantages": advantages, "returns": advantages + values, "valid": valid}
    before = [p.detach().clone() for p in net.parameters()]
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    stats = cleanrl.ppo_update(net, optimizer, cleanrl.Args(num_minibatches=8, update_epochs=2), batch, gen)
    assert all(np.isfinite(v) for v in stats.values()), stats
    assert all(torch.isfinite(p).all() for p in net.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))  # it did learn from the 3 steps
    none_valid = {**batch, "valid": torch.zeros(len(obs), dtype=torch.bool)}
    kept = [p.detach().clone() for p in net.parameters()]
    stats = cleanrl.ppo_update(net, optimizer, cleanrl.Args(num_minibatches=8), none_valid, gen)
    assert all(np.isnan(v) for v in stats.values())  # nothing to learn from: said, not invented
    assert all(torch.equal(a, b) for a, b in zip(kept, net.parameters()))


def test_the_wrapped_policy_plays_whole_games_legally(cleanrl: ModuleType, positions: tuple) -> None:
    from allfives_env.evaluation import evaluate

    net, encoder, _, _ = positions
    cleanrl.register_agent("cleanrl-test", lambda seed=None: cleanrl.TorchPolicyPlayer(seed, net=net, encoder=encoder))
    match = evaluate(["cleanrl-test", "random"], encoder.rules, games=4, seed=1, progress=False)
    assert match.games == 4 and sum(match.decisions) > 0


def test_an_evaluation_seed_equal_to_the_training_seed_is_refused(cleanrl: ModuleType,
                                                                   capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        cleanrl.check_args(cleanrl.Args(seed=5, eval_seeds=(5, 6)))
    assert exc.value.code == 2 and "must differ from the training --seed" in capsys.readouterr().err
