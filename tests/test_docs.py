"""The documentation site builds with ``--strict``, its examples run as written, and its figures tables are
what ``docs/gen_tables.py`` makes from the result files now.

* The site: ``mkdocs build --strict`` (every warning, a broken link or anchor included, is an error). Skipped,
  with the reason, where MkDocs is not installed; CI installs the ``[docs]`` extra, so it runs there.
* Every ```python block of ``docs/**/*.md`` runs in a fresh namespace (the README's blocks run in
  ``tests/test_readme_cli.py``). A block that must not run is marked ```text.
* Every ``allfives ...`` command line of a ```bash block of the README and the pages runs, in page order, in
  one scratch directory (so a command may use what an earlier one wrote, as a reader would), with its sizes
  shrunk by ``shrink`` (fewer games, one process, a few training steps) and its seeds kept. The lines that
  cannot run in a test are listed in ``EXEMPT`` with the reason.
* Every table between ``<!-- table:NAME begin/end -->`` markers equals what the generator makes from its JSON.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOC_PAGES = sorted((ROOT / "docs").rglob("*.md"))
#: a fenced block, indented or not (inside a list item), with its language
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.M | re.S)

#: Command lines of the pages that a test cannot run, each with the reason.
EXEMPT: dict[str, str] = {
    "allfives serve --open": "starts a web server that runs until it is stopped (and opens a browser); "
                             "tests/test_serve_*.py test the app and a real server process",
    "allfives train-rllib": "starts a local Ray and trains configs/rllib_default.yaml (about 6 minutes on 2 "
        "cores); tests/test_rllib_vector.py trains this config for one tiny iteration",
    "allfives train-rllib --config configs/rllib_selfplay.yaml": "starts a local Ray instance (about a minute "
        "of start-up on 2 cores); tests/test_rllib.py trains this config for one tiny iteration",
    "allfives train-rllib --config configs/rllib_selfplay.yaml --address auto": "needs a running Ray cluster",
    "allfives train-rllib --resume runs/rllib_selfplay --set iterations=40": "needs the run the exempt "
        "train-rllib line writes; tests/test_rllib.py resumes a tiny run from its checkpoint",
}

#: training options that keep a documented run to one rollout and a token evaluation
TRAIN_SHRINK = ["--set", "total_steps=1", "--set", "evaluation.games=2", "--set", "evaluation.final_games=2",
                "--set", "evaluation.at_start=false", "--set", "evaluation.processes=1",
                "--set", "output.tensorboard=false", "--set", "output.plot=false", "--set", "output.progress=false"]
#: option -> the value a test uses (games per match-up or pair, worker processes)
OPTION_SHRINK = {"--games": "2", "--processes": "1", "--bootstrap": "50", "--steps": "2000", "--cfr-iterations": "1"}
#: a searched move of OpenSpiel's Python ISMCTS at 100 simulations takes about 0.15 s; 5 keep a game short
SPEC_SHRINK = [(re.compile(r"(openspiel-(?:ismcts|mcts)\S*?sims=)\d+"), r"\g<1>5")]


def _blocks(page: Path, language: str) -> list[str]:
    return [textwrap.dedent(m.group(3)) for m in FENCE.finditer(page.read_text()) if m.group(2) == language]


def _python_blocks() -> list[tuple[str, str]]:
    return [(f"{page.relative_to(ROOT)}[{i}]", code) for page in DOC_PAGES
            for i, code in enumerate(_blocks(page, "python"))]


def documented_commands() -> list[str]:
    """Every ``allfives ...`` command of a bash block, in page order (README first); comments cut off."""
    found = []
    for page in [README] + DOC_PAGES:
        for block in _blocks(page, "bash"):
            for line in block.splitlines():
                for part in line.split("&&"):
                    part = part.split(" #")[0].strip()
                    if part.startswith("allfives "):
                        found.append(part)
    return found


def shrink(command: str) -> list[str]:
    """The command's arguments (after ``allfives``) with test sizes: seeds, agents and files are kept."""
    for pattern, small in SPEC_SHRINK:
        command = pattern.sub(small, command)
    args = shlex.split(command)[1:]
    for i, arg in enumerate(args[:-1]):
        if arg in OPTION_SHRINK:
            args[i + 1] = OPTION_SHRINK[arg]
    if args[0] == "exploit" and "--games" not in args:
        args += ["--games", "2", "--processes", "1"]  # the best response's final match
    if args[0] == "bench" and "--quick" not in args:
        args.append("--quick")  # a full bench is 8,000 games; the quick one plays the same code on 400
    if args[0] == "train":
        args += TRAIN_SHRINK
        config = args[args.index("--config") + 1] if "--config" in args else ""
        if config and "imitation:" in (ROOT / config).read_text():
            args += ["--set", "imitation.decisions=64"]
    return args


def test_shrink_keeps_seeds_and_agents_and_cuts_sizes() -> None:
    args = shrink("allfives evaluate expert openspiel-ismcts:sims=100 --games 2000 --seed 2026 --processes 2")
    assert args == ["evaluate", "expert", "openspiel-ismcts:sims=5", "--games", "2", "--seed", "2026",
                    "--processes", "1"]
    train = shrink("allfives train --config configs/ppo_4p.yaml")
    assert train[:3] == ["train", "--config", "configs/ppo_4p.yaml"] and "total_steps=1" in train
    assert "imitation.decisions=64" in train  # ppo_4p records a teacher first: a token recording only


def test_every_exemption_names_a_documented_command() -> None:
    """An exemption whose command left the pages must go too; every documented command runs or is exempt."""
    commands = documented_commands()
    assert len(commands) >= 15
    assert not set(EXEMPT) - set(commands), "exempt commands no page shows any more"


#: What each example needs besides the core (its smoke run is skipped, with the reason, without it).
EXAMPLE_NEEDS = {"cleanrl_ppo.py": ("torch", "tyro"), "sb3_vector.py": ("torch", "sb3_contrib"),
                 "torchrl_ppo.py": ("torch", "torchrl")}


def readme_example_commands() -> list[str]:
    """Every ``python examples/...`` line of the README's bash blocks (written at test sizes)."""
    return [line.split(" #")[0].strip() for block in _blocks(README, "bash") for line in block.splitlines()
            if line.startswith("python examples/")]


@pytest.mark.parametrize("command", readme_example_commands())
def test_the_readmes_example_commands_run_as_written(command: str, tmp_path: Path) -> None:
    """Run in a scratch folder (the script named from the checkout), so what a run saves, the CleanRL
    example's runs/ folder, is not left in the checkout."""
    script = command.split()[1].split("/")[-1]
    missing = [m for m in EXAMPLE_NEEDS[script] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{script} needs {', '.join(missing)}: pip install -e '.[train,examples]'")
    args = shlex.split(command)[1:]
    args[0] = str(ROOT / args[0])
    done = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert re.search(r"vs (greedy|random) \(seed \d+", done.stdout), done.stdout[-2000:]


def test_every_documented_command_runs(tmp_path: Path) -> None:
    """Each command in one scratch directory with the repository's configs, in page order, duplicates once."""
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    failures, seen = [], set()
    for command in documented_commands():
        args = shrink(command)
        if command in EXEMPT or tuple(args) in seen:
            continue
        seen.add(tuple(args))
        if args[0] == "evaluate" and any("openspiel" in a for a in args) or "openspiel-ismcts" in command \
                or args[0] == "nashconv":
            if importlib.util.find_spec("pyspiel") is None:
                continue  # the [openspiel] extra is not installed; tests/test_openspiel*.py say so
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "allfives_env", *args], cwd=tmp_path, env=env,
                              input="q\n", capture_output=True, text=True, timeout=600)
        print(f"{time.perf_counter() - start:6.1f} s  allfives {' '.join(args)}")
        if done.returncode != 0:
            failures.append(f"{command}\n  ran: allfives {' '.join(args)}\n  exit {done.returncode}: "
                            f"{(done.stdout + done.stderr)[-1500:]}")
    assert not failures, "documented commands that fail:\n" + "\n".join(failures)


@pytest.mark.parametrize("name, code", _python_blocks(), ids=[name for name, _ in _python_blocks()])
def test_docs_python_block_runs(name: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if "pyspiel" in code or "allfives_env.openspiel" in code:
        pytest.importorskip("pyspiel", reason="the [openspiel] extra is not installed")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, name, "exec"), {"__name__": "__docs__"})


#: words that tie a page to the project's development history rather than to what the project is
HISTORY = re.compile(r"\b[Ii]ssue[ -]?#?\d|\bthis machine\b|\btoday\b|\bsee the notes\b|\bRULES\.md\b|\bthis 2-core\b")


def test_the_readme_is_a_front_door_and_no_page_speaks_of_history() -> None:
    assert len(README.read_text().splitlines()) <= 250
    found = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}" for page in [README] + DOC_PAGES
             for n, line in enumerate(page.read_text().splitlines(), 1) if HISTORY.search(line)]
    assert not found, "history words in the pages:\n" + "\n".join(found)
    assert HISTORY.search("measured on this machine today") and not HISTORY.search("the reference machine")


def test_pages_have_python_examples() -> None:
    assert len(_python_blocks()) >= 10


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tables", ROOT / "docs" / "gen_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_tables"] = module  # its dataclass resolves its annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_published_tables_are_what_the_generator_makes_from_their_json() -> None:
    gen = _generator()
    made: dict[str, str] = {}
    stale = [str(page.relative_to(ROOT)) for page in gen.pages(ROOT) if gen.render(page.read_text(), made) != page.read_text()]
    assert not stale, f"tables differ from their JSON (run python docs/gen_tables.py): {stale}"
    published = {name for page in gen.pages(ROOT) for name in gen.published(page.read_text())}
    assert published == set(gen.TABLES), "every generator's table is published, and only those"
    assert "default_run" in gen.published(README.read_text())


def test_a_changed_figure_is_caught() -> None:
    """The check compares the figures themselves: one digit changed in a published table is a difference."""
    gen = _generator()
    text = README.read_text()
    table = gen.published(text)["default_run"]
    tampered = text.replace(table, table.replace("0.916", "0.917"), 1)
    assert tampered != text and gen.render(tampered) == text


def _mkdocs_missing() -> list[str]:
    return [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
            if importlib.util.find_spec(m.split(".")[0]) is None
            or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec(m) is None)]


def test_site_builds_strict(tmp_path: Path) -> None:
    missing = _mkdocs_missing()
    if missing:
        pytest.skip(f"MkDocs is not installed ({', '.join(missing)} missing): pip install -e '.[docs]'")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Worked examples" in (site / "rules" / "index.html").read_text()
    assert 'id="allfives_env.core.rules.Rules"' in (site / "api" / "index.html").read_text()
    assert (site / "benchmarks" / "ppo_2p_learning_curve.png").is_file()


def _requirement_name(requirement: str) -> str:
    """``ray[rllib]==2.60.*`` -> ``ray``; ``allfives-env[play,examples,docs]`` -> the extras it names."""
    match = re.match(r"allfives-env\[([^\]]+)\]", requirement)
    if match:
        return " ".join(f"`{extra.strip()}`" for extra in match.group(1).split(","))
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_installation_pages_extras_table_names_what_each_extra_installs() -> None:
    """Every extra of pyproject.toml has a row on the installation page, and the row names every package
    (and every other extra) it installs: a list written by hand drifts when an extra grows."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    rows = {m.group(1): m.group(2).lower().replace("_", "-")
            for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \|", (ROOT / "docs" / "installation.md").read_text(), re.M)}
    assert set(rows) == set(extras), "one row per extra"
    for extra, requirements in extras.items():
        for requirement in requirements:
            for name in _requirement_name(requirement).split():
                assert name in rows[extra], f"the `{extra}` row does not name {name}"


def test_no_table_has_an_empty_header_row() -> None:
    """A table whose header cells are all blank renders as an empty bar above it: name the columns."""
    header = re.compile(r"^\|(?:\s*\|)+\s*$\n^\|[-:| ]+\|\s*$", re.M)
    for page in [README, *DOC_PAGES]:
        assert not header.search(page.read_text()), f"{page.relative_to(ROOT)} has a table with an empty header row"
