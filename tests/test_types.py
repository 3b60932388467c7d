"""The types tell the truth: the paths in pyproject's ``[tool.mypy] files`` type-check with mypy, and a rules
object reads as its resolved types (a reader needs no ``int(rules.hand_size)``).

mypy runs in a subprocess with the project's configuration and its incremental cache (``.mypy_cache``), so a
run after the first rechecks only what changed. A failure shows mypy's own report.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy comes with the dev extra: pip install -e '.[dev]'")

ROOT = Path(__file__).resolve().parent.parent


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    """``python3 -m mypy`` from the repository root (so pyproject.toml's [tool.mypy] and the cache apply)."""
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_the_checked_paths_type_check() -> None:
    result = mypy()
    assert result.returncode == 0, f"mypy found errors:\n{result.stdout}{result.stderr}"


def test_rules_read_as_their_resolved_types(tmp_path: Path) -> None:
    """Fields typed as given (``Optional[int]``, ``Union[int, str, None]``) would fail the first snippet; a
    constructor typed as the fields would refuse ``partnership="auto"``; the second snippet shows that the
    checker sees a misspelt choice and a resolved field used as what it is not."""
    good = tmp_path / "rules_types_good.py"
    good.write_text(textwrap.dedent("""
        from allfives_env.core.rules import Rules

        rules = Rules(num_players=4, partnership="auto", hand_size="five_always", target=None)
        tiles: int = rules.num_players * rules.hand_size + rules.target
        teams: bool = rules.partnership
        rounding: str = rules.rounding
        cap: int = rules.max_hands if rules.max_hands is not None else 0
    """))
    bad = tmp_path / "rules_types_bad.py"
    bad.write_text(textwrap.dedent("""
        from allfives_env.core.rules import Rules

        Rules(rounding="nearst")
        name: str = Rules().hand_size
        cap: int = Rules().max_hands
    """))
    assert error_lines(good) == [], f"mypy refused rules used as their resolved types:\n{mypy(str(good)).stdout}"
    assert error_lines(bad) == [4, 5, 6], mypy(str(bad)).stdout


def test_envs_read_as_what_they_return(tmp_path: Path) -> None:
    """The envs' own types, as a user's code sees them: the AEC env's action space is a Discrete (its ``n`` is
    there to read), the single-seat env renders text or an image, and a game is there only after reset; the
    second snippet shows that the checker refuses a render or a game before reset used as what it is not."""
    good = tmp_path / "env_types_good.py"
    good.write_text(textwrap.dedent("""
        from typing import Optional, Union
        import numpy as np
        from allfives_env.core.game import Game
        from allfives_env.env import raw_env
        from allfives_env.single_seat import AllFivesSingleSeatEnv

        aec = raw_env()
        count: int = int(aec.action_space("player_0").n)
        env = AllFivesSingleSeatEnv(render_mode="ansi")
        frame: Union[str, np.ndarray, None] = env.render()
        game: Optional[Game] = env.game
    """))
    bad = tmp_path / "env_types_bad.py"
    bad.write_text(textwrap.dedent("""
        from allfives_env.core.game import Game
        from allfives_env.single_seat import AllFivesSingleSeatEnv

        env = AllFivesSingleSeatEnv(render_mode="ansi")
        text: str = env.render()
        game: Game = env.game
    """))
    assert error_lines(good) == [], f"mypy refused the envs used as what they return:\n{mypy(str(good)).stdout}"
    assert error_lines(bad) == [6, 7], mypy(str(bad)).stdout


def error_lines(snippet: Path) -> list[int]:
    """The lines of ``snippet`` that mypy reports errors on. Matched by file name: mypy's cache knows a
    module by its name and content, and reports an unchanged one under the path it was first checked at."""
    report = [line.split(":") for line in mypy(str(snippet)).stdout.splitlines() if ": error:" in line]
    return [int(parts[1]) for parts in report if Path(parts[0]).name == snippet.name]
