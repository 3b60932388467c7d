"""The examples refuse a command line that cannot run, before any training; the CleanRL one saves its policy.

A refused value (NaN, infinity, a negative or zero count, a minibatch bigger than the rollout, an unknown
opponent, rules the game does not have, a folder where a file is wanted) ends the script with exit status 2 and
one ``error:`` line on stderr that names the flag: no traceback, no training first. Every row of ``REFUSED`` is
checked through the script's own parser and checks, in this process (milliseconds a row); the rows marked
``RUN`` also as the script run by Python, which costs its imports (a few seconds each). A file that cannot be
written at the end (``/dev/full``) is one line too, exit status 1, after a smallest-size training.

examples/cleanrl_ppo.py saves its policy without ``--export``: in a fresh ``runs/cleanrl_ppo/seed<seed>[_<k>]``
folder of the working directory, with the ``allfives evaluate`` line that plays it, which runs as printed.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, Sequence

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
#: What each example imports besides the core (its rows are skipped, with the reason, without it).
NEEDS = {"cleanrl_ppo.py": ("torch", "tyro"), "sb3_vector.py": ("torch", "sb3_contrib"),
         "torchrl_ppo.py": ("torch", "torchrl")}
RUN = True  # the row also runs as a script
A_FOLDER = str(EXAMPLES)  # a directory where a file is wanted
NO_FOLDER = "/no-such-folder/out.json"
UNWRITABLE = "/proc/self/out.json"  # a folder nobody may write into, not even root (Linux)

#: (script, arguments, the flag the error line names, whether the row also runs as a script)
REFUSED = [
    ("cleanrl_ppo.py", ["--seed", "-1"], "--seed", False),
    ("cleanrl_ppo.py", ["--total-timesteps", "0"], "--total-timesteps", False),
    ("cleanrl_ppo.py", ["--num-envs", "0"], "--num-envs", False),
    ("cleanrl_ppo.py", ["--num-steps", "-5"], "--num-steps", False),
    ("cleanrl_ppo.py", ["--num-envs", "100000", "--num-steps", "100"], "--num-envs", False),
    ("cleanrl_ppo.py", ["--learning-rate", "nan"], "--learning-rate", RUN),
    ("cleanrl_ppo.py", ["--learning-rate", "inf"], "--learning-rate", False),
    ("cleanrl_ppo.py", ["--learning-rate", "5"], "--learning-rate", False),
    ("cleanrl_ppo.py", ["--gamma", "5"], "--gamma", False),
    ("cleanrl_ppo.py", ["--gamma", "0"], "--gamma", False),
    ("cleanrl_ppo.py", ["--gae-lambda", "-0.1"], "--gae-lambda", False),
    ("cleanrl_ppo.py", ["--num-minibatches", "0"], "--num-minibatches", False),
    ("cleanrl_ppo.py", ["--num-minibatches", "1000", "--num-envs", "4", "--num-steps", "8"], "--num-minibatches", RUN),
    ("cleanrl_ppo.py", ["--update-epochs", "0"], "--update-epochs", False),
    ("cleanrl_ppo.py", ["--clip-coef", "-1"], "--clip-coef", False),
    ("cleanrl_ppo.py", ["--ent-coef", "nan"], "--ent-coef", False),
    ("cleanrl_ppo.py", ["--vf-coef", "-1"], "--vf-coef", False),
    ("cleanrl_ppo.py", ["--max-grad-norm", "nan"], "--max-grad-norm", False),
    ("cleanrl_ppo.py", ["--target-kl", "-1"], "--target-kl", False),
    ("cleanrl_ppo.py", ["--hidden", "0"], "--hidden", False),
    ("cleanrl_ppo.py", ["--scorer-hidden", "100000"], "--scorer-hidden", False),
    ("cleanrl_ppo.py", ["--eval-games", "-1"], "--eval-games", False),
    ("cleanrl_ppo.py", ["--eval-seeds", "1"], "--eval-seeds", False),
    ("cleanrl_ppo.py", ["--eval-seeds", "-1"], "--eval-seeds", False),
    ("cleanrl_ppo.py", ["--curve-every", "-1"], "--curve-every", False),
    ("cleanrl_ppo.py", ["--curve-games", "0"], "--curve-games", False),
    ("cleanrl_ppo.py", ["--curve-every", "1000", "--eval-seeds"], "--curve-every", False),
    ("cleanrl_ppo.py", ["--num-players", "7"], "--num-players", False),
    ("cleanrl_ppo.py", ["--opponents", "foo"], "--opponents", RUN),
    ("cleanrl_ppo.py", ["--opponents"], "--opponents", False),
    ("cleanrl_ppo.py", ["--opponents", "ppo:path=no-such-policy.npz"], "--opponents", False),
    ("cleanrl_ppo.py", ["--opponents", "ppo-3p"], "--opponents", False),  # a policy for 3 players, at a 2-player table
    ("cleanrl_ppo.py", ["--eval-opponents", "bar"], "--eval-opponents", False),
    ("cleanrl_ppo.py", ["--export", A_FOLDER], "--export", False),
    ("cleanrl_ppo.py", ["--export", "/no-such-folder/p.npz"], "--export", False),
    ("cleanrl_ppo.py", ["--export", "a,b.npz"], "--export", False),
    ("cleanrl_ppo.py", ["--export", "/dev/null"], "--export", False),  # renamed over: not a regular file
    ("cleanrl_ppo.py", ["--json-out", A_FOLDER], "--json-out", False),
    ("cleanrl_ppo.py", ["--json-out", NO_FOLDER], "--json-out", False),
    ("cleanrl_ppo.py", ["--json-out", UNWRITABLE], "--json-out", RUN),
    ("sb3_vector.py", ["--n-steps", "0"], "--n-steps", RUN),
    ("sb3_vector.py", ["--n-envs", "-1"], "--n-envs", False),
    ("sb3_vector.py", ["--n-envs", "1", "--n-steps", "1"], "--n-envs", False),
    ("sb3_vector.py", ["--n-envs", "100000", "--n-steps", "100"], "--n-envs", False),
    ("sb3_vector.py", ["--total-timesteps", "0"], "--total-timesteps", False),
    ("sb3_vector.py", ["--seed", "-1"], "--seed", False),
    ("sb3_vector.py", ["--eval-seeds", "-2"], "--eval-seeds", False),
    ("sb3_vector.py", ["--eval-games", "-1"], "--eval-games", False),
    ("sb3_vector.py", ["--num-players", "7"], "--num-players", False),
    ("sb3_vector.py", ["--opponents", "foo"], "--opponents", False),
    ("sb3_vector.py", ["--opponents", "ppo:path=no-such-policy.npz"], "--opponents", False),
    ("sb3_vector.py", ["--eval-opponents", "bar"], "--eval-opponents", False),
    ("sb3_vector.py", ["--export", A_FOLDER], "--export", RUN),
    ("sb3_vector.py", ["--export", "/no-such-folder/p.npz"], "--export", False),
    ("sb3_vector.py", ["--export", "/dev/null"], "--export", False),
    ("torchrl_ppo.py", ["--lr", "nan"], "--lr", False),
    ("torchrl_ppo.py", ["--lr", "2"], "--lr", False),
    ("torchrl_ppo.py", ["--gamma", "5"], "--gamma", False),
    ("torchrl_ppo.py", ["--lmbda", "2"], "--lmbda", False),
    ("torchrl_ppo.py", ["--clip", "0"], "--clip", False),
    ("torchrl_ppo.py", ["--entropy", "-inf"], "--entropy", False),
    ("torchrl_ppo.py", ["--epochs", "0"], "--epochs", False),
    ("torchrl_ppo.py", ["--minibatch", "0"], "--minibatch", False),
    ("torchrl_ppo.py", ["--hidden", "0"], "--hidden", False),
    ("torchrl_ppo.py", ["--frames", "0"], "--frames", False),
    ("torchrl_ppo.py", ["--frames", "10", "--frames-per-batch", "100"], "--frames", False),
    ("torchrl_ppo.py", ["--frames-per-batch", "1000000", "--frames", "2000000"], "--frames-per-batch", False),
    ("torchrl_ppo.py", ["--seed", "-1"], "--seed", False),
    ("torchrl_ppo.py", ["--eval-seeds", "-3"], "--eval-seeds", False),
    ("torchrl_ppo.py", ["--eval-games", "0"], "--eval-games", False),
    ("torchrl_ppo.py", ["--players", "7"], "--players", RUN),
    ("torchrl_ppo.py", ["--json", A_FOLDER], "--json", False),
    ("torchrl_ppo.py", ["--json", NO_FOLDER], "--json", False),
]


def _needs(script: str, argv: Sequence[str] = ()) -> None:
    missing = [m for m in NEEDS[script] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"examples/{script} needs {', '.join(missing)}: pip install -e '.[train,examples]'")
    if any(arg.startswith(("/proc/", "/dev/")) for arg in argv) and not os.path.isdir("/proc/self"):
        pytest.skip("the row names a Linux path (/proc/self, /dev/null)")


def _one_error_line(stderr: str, flag: str) -> None:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("error: ") and flag in lines[0], stderr[-3000:]


def _parse_and_check(module: ModuleType, script: str, argv: list[str]) -> None:
    """What the script does with its command line before any training, in this process."""
    if script == "cleanrl_ppo.py":
        import tyro

        module.check_args(tyro.cli(module.Args, args=argv))
    else:
        module.parse_args(argv)


@pytest.fixture(scope="module")
def load_example() -> Iterator[Callable[[str], ModuleType]]:
    """Imports an example as a module (it lives outside the package), once; afterwards the modules go and the
    start method is put back: importing torchrl sets multiprocessing's to "spawn" for the whole process."""
    method = multiprocessing.get_start_method(allow_none=True)
    loaded: dict[str, ModuleType] = {}

    def load(script: str) -> ModuleType:
        if script not in loaded:
            spec = importlib.util.spec_from_file_location(f"example_{Path(script).stem}", EXAMPLES / script)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
            spec.loader.exec_module(module)
            loaded[script] = module
        return loaded[script]

    try:
        yield load
    finally:
        for module in loaded.values():
            sys.modules.pop(module.__name__, None)
        multiprocessing.set_start_method(method, force=True)


@pytest.mark.parametrize("script, argv, flag, _", REFUSED, ids=[f"{s[:-3]} {' '.join(a)}" for s, a, *_ in REFUSED])
def test_a_refused_value_is_one_line_naming_the_flag(load_example: Callable[[str], ModuleType], script: str,
                                                     argv: list[str], flag: str, _: bool, capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _needs(script, argv)
    monkeypatch.chdir(ROOT)
    module = load_example(script)
    with pytest.raises(SystemExit) as exc:
        _parse_and_check(module, script, argv)
    assert exc.value.code == 2
    _one_error_line(capsys.readouterr().err, flag)


@pytest.mark.parametrize("script, argv, flag", [(s, a, f) for s, a, f, run in REFUSED if run],
                         ids=[f"{s[:-3]} {' '.join(a)}" for s, a, _, run in REFUSED if run])
def test_the_script_refuses_it_with_exit_status_2_and_no_traceback(script: str, argv: list[str], flag: str) -> None:
    _needs(script, argv)
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    _one_error_line(done.stderr, flag)
    assert "iter " not in done.stdout and "frames " not in done.stdout  # refused before any training


def test_the_error_lines_on_the_examples_page_are_what_the_scripts_print(load_example: Callable[[str], ModuleType],
                                                                         capsys: pytest.CaptureFixture) -> None:
    """docs/examples.md shows a refused command and its line for two scripts: each as it prints it now."""
    page = (ROOT / "docs" / "examples.md").read_text()
    shown = re.findall(r"^\$ python examples/(\S+) (.*)\n(error: .*)$", page, re.M)
    assert len(shown) >= 2
    for script, argv, line in shown:
        _needs(script)
        module = load_example(script)
        with pytest.raises(SystemExit):
            _parse_and_check(module, script, shlex.split(argv))
        assert capsys.readouterr().err.strip() == line


TINY = ["--total-timesteps", "64", "--num-envs", "2", "--num-steps", "32", "--eval-games", "0"]


def test_cleanrl_saves_its_policy_in_a_fresh_run_folder_and_the_printed_command_plays_it(tmp_path: Path) -> None:
    _needs("cleanrl_ppo.py")
    taken = tmp_path / "runs" / "cleanrl_ppo" / "seed3"  # an earlier run's folder: left alone
    taken.mkdir(parents=True)
    (taken / "policy.npz").write_text("an earlier run's policy")
    done = subprocess.run([sys.executable, str(EXAMPLES / "cleanrl_ppo.py"), *TINY, "--seed", "3"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (taken / "policy.npz").read_text() == "an earlier run's policy"
    saved = tmp_path / "runs" / "cleanrl_ppo" / "seed3_2" / "policy.npz"
    from allfives_env.core.rules import Rules
    from allfives_env.policy import load_policy

    policy = load_policy(saved, Rules(num_players=2))
    assert policy.action_features
    assert '"seed": 3' in (saved.parent / "args.json").read_text()
    line = re.search(r"^evaluate it: (.*)$", done.stdout, re.M)
    assert line, done.stdout
    command = shlex.split(line.group(1))
    assert command == ["allfives", "evaluate", "ppo:path=runs/cleanrl_ppo/seed3_2/policy.npz", "greedy",
                       "--games", "1000", "--seed", "2026"]
    games = command.index("--games") + 1
    command[games] = "2"
    played = subprocess.run([sys.executable, "-m", "allfives_env", *command[1:], "--no-progress"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stderr[-3000:]
    assert "win rate of ppo:path=runs/cleanrl_ppo/seed3_2/policy.npz" in played.stdout, played.stdout


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux), a file every write to fails")
@pytest.mark.parametrize("script, argv, flag", [
    ("cleanrl_ppo.py", [*TINY, "--export", "p.npz", "--json-out", "/dev/full"], "--json-out"),
    ("torchrl_ppo.py", ["--smoke", "--no-baseline", "--json", "/dev/full"], "--json"),
], ids=["cleanrl", "torchrl"])
def test_a_write_failure_at_the_end_is_one_line_and_exit_status_1(tmp_path: Path, script: str, argv: list[str],
                                                                  flag: str) -> None:
    _needs(script)
    quiet = {**os.environ, "PYTHONWARNINGS": "ignore"}  # the libraries' own warnings (TorchRL's about PettingZoo)
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=quiet)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    _one_error_line(done.stderr, flag)
    assert "No space left" in done.stderr
