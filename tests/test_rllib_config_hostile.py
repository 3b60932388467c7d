"""The RLlib config refuses nonsense before Ray starts: every key has a sensible range (finite numbers, a
learning rate of at most 1, loss weights of at most 100), ``output.dir`` must be a directory a run can write
into, and a searching baseline or opponent has a bounded cost. Each refusal is the stable-baselines3
config's ``ConfigError``, naming the file, the key, the value and what is allowed; it creates nothing and
never imports Ray (these tests block the import), so it takes a fraction of a second."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("yaml", reason="PyYAML is missing: pip install -e '.[rllib]'")

from allfives_env.core.errors import AllFivesError  # noqa: E402
from allfives_training.rllib.config import MAX_SEARCH_WORK, load_rllib_config, search_work  # noqa: E402
from allfives_training.rllib.train import train_rllib  # noqa: E402
from allfives_training.schema import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "rllib_default.yaml"  # learners: one_seat
BASELINES = "rllib_baselines.yaml"  # learners: one_side, registry opponents
#: what a refused config may take at most, imports excluded (the first case imports the agents)
SECONDS = 2.0

# (config, --set overrides, parts of the message); "{tmp}" is the test's own folder
HOSTILE = [
    (DEFAULT, ["ppo.lr=1e300"], ["ppo.lr", "got 1e+300", "a number in (0.0, 1.0]"]),
    (DEFAULT, ["ppo.lr=1.5"], ["ppo.lr", "got 1.5", "(0.0, 1.0]"]),
    (DEFAULT, ["ppo.lr=0"], ["ppo.lr", "got 0", "(0.0, 1.0]"]),
    (DEFAULT, ["ppo.lr=.inf"], ["ppo.lr", "got inf"]),
    (DEFAULT, ["ppo.lr=.nan"], ["ppo.lr", "got nan"]),
    (DEFAULT, ["ppo.lr=true"], ["ppo.lr", "got True"]),
    (DEFAULT, ["ppo.clip_param=1e9"], ["ppo.clip_param", "got 1000000000.0", "(0.0, 10.0]"]),
    (DEFAULT, ["ppo.entropy_coeff=1e300"], ["ppo.entropy_coeff", "got 1e+300", "[0.0, 100.0]"]),
    (DEFAULT, ["ppo.entropy_coeff=-0.01"], ["ppo.entropy_coeff", "got -0.01", "[0.0, 100.0]"]),
    (DEFAULT, ["ppo.vf_loss_coeff=1000"], ["ppo.vf_loss_coeff", "got 1000", "[0.0, 100.0]"]),
    (DEFAULT, ["ppo.kl_coeff=.inf"], ["ppo.kl_coeff", "got inf", "[0.0, 100.0]"]),
    (DEFAULT, ["ppo.grad_clip=1e300"], ["ppo.grad_clip", "got 1e+300", "null or a number in (0.0, 1000.0]"]),
    (DEFAULT, ["ppo.grad_clip=0"], ["ppo.grad_clip", "got 0"]),
    (DEFAULT, ["ppo.gamma=1.5"], ["ppo.gamma", "got 1.5", "[0.0, 1.0]"]),
    (DEFAULT, ["ppo.lambda=-0.1"], ["ppo.lambda", "got -0.1", "[0.0, 1.0]"]),
    (DEFAULT, ["ppo.train_batch_size=100000000"], ["ppo.train_batch_size", "got 100000000", "10,000,000"]),
    (DEFAULT, ["ppo.minibatch_size=0"], ["ppo.minibatch_size", "got 0", "an integer from 1"]),
    (DEFAULT, ["ppo.num_epochs=1e9"], ["ppo.num_epochs", "got 1000000000.0", "an integer from 1 to 10,000"]),
    (DEFAULT, ["iterations=0"], ["iterations", "got 0", "an integer from 1 to 1,000,000,000"]),
    (DEFAULT, ["seed=4294967296"], ["seed", "got 4294967296", "4,294,967,295"]),
    (DEFAULT, ["env_runners.num_env_runners=100000"], ["env_runners.num_env_runners", "got 100000", "1,024"]),
    (DEFAULT, ["env_runners.num_envs_per_env_runner=0"], ["env_runners.num_envs_per_env_runner", "got 0"]),
    (DEFAULT, ["env_runners.num_cpus_per_env_runner=.nan"], ["env_runners.num_cpus_per_env_runner", "got nan"]),
    (DEFAULT, ["network.hidden=[0]"], ["network.hidden", "got [0]", "65,536"]),
    (DEFAULT, ["network.score_gain=1e300"], ["network.score_gain", "got 1e+300", "[0.0, 100.0]"]),
    (DEFAULT, ["evaluation.games=0"], ["evaluation.games", "got 0", "10,000,000"]),
    (DEFAULT, ["evaluation.final_games=100000000"], ["evaluation.final_games", "got 100000000", "10,000,000"]),
    (DEFAULT, ["evaluation.processes=100000"], ["evaluation.processes", "got 100000", "256"]),
    (DEFAULT, ["evaluation.replays=-1"], ["evaluation.replays", "got -1", "1,000"]),
    (DEFAULT, ["evaluation.every=-1"], ["evaluation.every", "got -1"]),
    (DEFAULT, ["checkpoint.keep=0"], ["checkpoint.keep", "got 0"]),
    (DEFAULT, ["evaluation.baselines=[pimc:samples=100000000]"],
     ["evaluation.baselines", "'pimc:samples=100000000'", "100,000,000 samples per decision", "at most 10,000"]),
    (DEFAULT, ["evaluation.baselines=[random, pimc-sift:samples=10001]"],
     ["evaluation.baselines", "'pimc-sift:samples=10001'", "at most 10,000"]),
    (DEFAULT, ["evaluation.baselines=[]"], ["evaluation.baselines", "got []", "a list of 1 to 100 agent specs"]),
    (DEFAULT, ["evaluation.baselines=[no-such-agent]"], ["evaluation.baselines", "no-such-agent"]),
    (DEFAULT, ["evaluation.baselines=[pimc:samples=0]"], ["evaluation.baselines", "samples=0"]),
    (BASELINES, ["opponents=[pimc:samples=20000]"], ["opponents", "'pimc:samples=20000'", "at most 10,000"]),
    (BASELINES, ["opponents={random: 1e300}"], ["opponents.random", "got 1e+300", "from 0 to 1e9"]),
    (DEFAULT, ["output.dir=/dev/null"], ["output.dir", "got '/dev/null'", "/dev/null is not a directory",
                                         "a directory the run can write into"]),
    (DEFAULT, ["output.dir={tmp}/a_file"], ["output.dir", "a_file is not a directory"]),
    (DEFAULT, ["output.dir={tmp}/a_file/runs"], ["output.dir", "a_file is not a directory"]),
    (DEFAULT, ["output.dir=''"], ["output.dir", "a non-empty string"]),
    (DEFAULT, ["name=../x"], ["name", "'../x'", "a plain name"]),
    (DEFAULT, ["rules.target=-5"], ["rules:", "target"]),
    (DEFAULT, ["learners=nobody"], ["learners", "got 'nobody'", "one of ['all', 'one_side', 'one_seat']"]),
]


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing Ray fails: a check that ran after Ray started would meet an ImportError instead."""
    monkeypatch.setitem(sys.modules, "ray", None)


@pytest.mark.parametrize("config, overrides, expected", HOSTILE,
                         ids=[f"{i}-{o[0][:40]}" for i, (_, o, _) in enumerate(HOSTILE)])
def test_a_nonsense_value_is_refused_before_ray_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       no_ray: None, config: str, overrides: list[str],
                                                       expected: list[str]) -> None:
    monkeypatch.chdir(tmp_path)  # output.dir defaults to ./runs: it must not appear
    (tmp_path / "a_file").write_text("not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    overrides = [o.replace("{tmp}", str(tmp_path)) for o in overrides]
    load_rllib_config(ROOT / "configs" / config)  # imports and builds the default agents once, outside the clock
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        train_rllib(ROOT / "configs" / config, overrides=overrides, out=io.StringIO())
    seconds = time.perf_counter() - start
    message = str(info.value)
    for part in expected:
        assert part in message, (part, message)
    assert config in message and isinstance(info.value, AllFivesError) and len(message) < 2000, message
    assert seconds < SECONDS, f"refused in {seconds:.1f} s"
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a refused config creates nothing"


@pytest.mark.parametrize("overrides", [
    ["ppo.lr=1", "ppo.clip_param=10", "ppo.entropy_coeff=100", "ppo.vf_loss_coeff=100", "ppo.kl_coeff=100",
     "ppo.grad_clip=1000"],
    ["ppo.grad_clip=null", "ppo.kl_coeff=0", "ppo.entropy_coeff=0"],
    [f"evaluation.baselines=[pimc:samples={MAX_SEARCH_WORK}, pimc-sift, expert]"],
    ["output.dir={tmp}/new/deeper"],
    ["output.dir={tmp}"],
])
def test_values_at_the_bounds_are_accepted(tmp_path: Path, no_ray: None, overrides: list[str]) -> None:
    cfg = load_rllib_config(ROOT / "configs" / DEFAULT, [o.replace("{tmp}", str(tmp_path)) for o in overrides])
    assert cfg.ppo.lr <= 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "checking output.dir creates nothing"


@pytest.mark.parametrize("config", sorted(p.name for p in (ROOT / "configs").glob("rllib_*.yaml")))
def test_the_shipped_configs_pass(config: str, no_ray: None) -> None:
    load_rllib_config(ROOT / "configs" / config)


def test_the_cost_of_a_search_multiplies_its_counts() -> None:
    """pimc's guesses, and an OpenSpiel bot's simulations times its rollouts per leaf, defaults included."""
    from allfives_env.agents import make_agent

    assert search_work(make_agent("random")) == 1 and search_work(make_agent("ppo-2p")) == 1
    assert search_work(make_agent("pimc")) == 200 and search_work(make_agent("pimc:samples=7")) == 7
    assert search_work(make_agent("pimc-sift")) == 80
    pytest.importorskip("pyspiel", reason="the OpenSpiel bots need the [openspiel] extra")
    assert search_work(make_agent("openspiel-ismcts")) == 100
    assert search_work(make_agent("openspiel-ismcts:sims=5000,rollouts=3")) == 15_000
    with pytest.raises(ConfigError, match=r"opponents: 'openspiel-ismcts:sims=5000,rollouts=3' searches 15,000"):
        load_rllib_config(ROOT / "configs" / BASELINES, ['opponents=["openspiel-ismcts:sims=5000,rollouts=3"]'])


def test_the_command_line_refuses_it_in_one_line_without_ray(monkeypatch: pytest.MonkeyPatch, no_ray: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``allfives train-rllib --set ppo.lr=1e300``: exit status 2 and one ``allfives: error:`` line."""
    import allfives_training.train as sb3_train
    from allfives_env.cli import main

    monkeypatch.chdir(ROOT)  # the default --config is configs/rllib_default.yaml
    monkeypatch.setattr(sb3_train, "importable", lambda module: True)  # Ray counts as installed, yet is not imported
    assert main(["train-rllib", "--set", "ppo.lr=1e300"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("allfives: error: configs/rllib_default.yaml: ppo.lr: must be a number in (0.0, 1.0], "
                          "got 1e+300") and err.count("\n") == 1, err
