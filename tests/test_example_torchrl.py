"""examples/torchrl_ppo.py runs end to end (a smoke-sized run) and its command line refuses what it should.

Skipped where TorchRL is not installed (it comes with the ``[examples]`` extra)."""

from __future__ import annotations

import importlib.util
import multiprocessing
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

# found, not imported: importing torchrl sets multiprocessing's start method to "spawn" for the whole
# process, and the evaluation runner's tests rely on the default (fork) for agents they register
if importlib.util.find_spec("torchrl") is None:
    pytest.skip("examples/torchrl_ppo.py needs TorchRL: pip install -e '.[examples]'", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "torchrl_ppo.py"
EVAL_LINE = re.compile(
    r"^eval vs random \(seed (\d+), (\d+) games\): win rate (\d+\.\d)% \[95% CI (\d+\.\d)% - (\d+\.\d)%\]$", re.M)


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    """The example imported as a module (it lives outside the package); the process's multiprocessing
    start method, which importing torchrl changes to "spawn", is put back afterwards."""
    method = multiprocessing.get_start_method(allow_none=True)
    spec = importlib.util.spec_from_file_location("torchrl_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the string annotations through sys.modules
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)
        multiprocessing.set_start_method(method, force=True)


def test_smoke_run_prints_one_evaluation_per_fresh_seed() -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--smoke", "--eval-seeds", "11", "12"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = EVAL_LINE.findall(proc.stdout)
    assert [seed for seed, *_ in lines] == ["11", "12"], proc.stdout
    for _, games, rate, low, high in lines:
        assert int(games) >= 4
        assert 0.0 <= float(low) <= float(rate) <= float(high) <= 100.0
    assert "untrained vs random" in proc.stdout  # the baseline the trained lines are read against
    assert re.search(r"^frames +256 ", proc.stdout, re.M), proc.stdout  # it trained, to the frame count asked


def test_evaluation_seed_equal_to_training_seed_is_refused(example: ModuleType, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        example.parse_args(["--seed", "5", "--eval-seeds", "5", "6"])
    assert exc.value.code == 2
    assert "must differ from the training --seed" in capsys.readouterr().err


def test_smoke_flag_shrinks_the_run_and_keeps_other_flags(example: ModuleType) -> None:
    cfg = example.parse_args(["--smoke", "--seed", "3"])
    assert (cfg.frames, cfg.eval_games, cfg.seed) == (example.SMOKE["frames"], example.SMOKE["eval_games"], 3)
    assert example.parse_args([]).frames > cfg.frames


def test_agent_plays_only_legal_moves_and_refuses_other_rules(example: ModuleType) -> None:
    """The wrapped network (untrained here) answers every position of a seeded game with a legal action,
    and the harness's rules check refuses a game it was not built for."""
    import torch

    from allfives_env import allfives_v0
    from allfives_env.core.errors import AgentError
    from allfives_env.core.rules import Rules

    cfg = example.Config(frames=128, frames_per_batch=128)
    torch.manual_seed(0)
    env, encoder = example.make_env(cfg)
    actor, _ = example.make_modules(cfg, env, encoder)
    agent = example.TorchRLAgent(0, actor=actor, encoder=encoder)
    game = allfives_v0.raw_env(num_players=2, action_features=True)
    game.reset(seed=7)
    moves = 0
    for name in game.agent_iter():
        if game.terminations[name] or game.truncations[name]:
            game.step(None)
            continue
        view = game.player_view(name)
        # the agent sees exactly the observation the env gives that seat
        assert (view.observation(agent.encoder) == game.observe(name)["observation"]).all()
        action = agent.act(view)
        assert game.observe(name)["action_mask"][action] == 1
        game.step(action)  # raw_env raises on an illegal action
        moves += 1
    assert moves > 20
    agent.check_rules(Rules(num_players=2))
    with pytest.raises(AgentError, match="was trained for"):
        agent.check_rules(Rules(num_players=3))
