"""The README's code runs as written, and the ``allfives`` command line works end to end."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from allfives_env.cli import main, run_demo
from allfives_env.core import Rules

ROOT = Path(__file__).resolve().parents[1]


def _python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_has_python_examples() -> None:
    assert len(_python_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_python_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict = {}
    exec(compile(_python_blocks()[index], f"README block {index}", "exec"), namespace)


def test_readme_opens_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    commands = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert "allfives train --config configs/default.yaml" in commands[0]
    assert "pytest" in commands[1]


def test_demo_is_seeded_and_ends_with_a_result() -> None:
    rules = Rules()
    first, second = io.StringIO(), io.StringIO()
    game = run_demo(7, rules, None, quiet=False, out=first)
    run_demo(7, rules, None, quiet=False, out=second)
    assert first.getvalue() == second.getvalue()
    assert game.over
    assert "Result after" in first.getvalue()
    assert "Table at the end of the hand" in first.getvalue()


def test_demo_writes_a_replay_that_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.json"
    assert main(["demo", "--seed", "3", "--players", "4", "--quiet", "--replay", str(path)]) == 0
    assert json.loads(path.read_text())["format"] == "allfives-replay"
    assert main(["replay", str(path)]) == 0
    assert "valid replay" in capsys.readouterr().out


def test_cli_reports_bad_rules_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--rule", "hand_end=everyone_wins"]) == 2
    err = capsys.readouterr().err
    assert "hand_end" in err and "deduct_own" in err
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    assert main(["replay", str(bogus)]) == 2
    assert "not an All Fives replay" in capsys.readouterr().err


def test_layout_command_prints_slices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layout", "--players", "4"]) == 0
    out = capsys.readouterr().out
    assert "voids" in out and "230" in out


def test_console_entry_point_via_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "demo", "--seed", "1", "--quiet"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Result after" in done.stdout
