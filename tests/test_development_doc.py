"""docs/development.md cannot drift: its layer list and layout tree are what ``docs/gen_development.py`` makes
from the source files now, and what the script makes follows the files it reads.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_development", ROOT / "docs" / "gen_development.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_development"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _generator()


def test_the_page_is_what_the_generator_makes(gen: ModuleType, capsys: pytest.CaptureFixture) -> None:
    assert gen.main(["--check"]) == 0, (f"{capsys.readouterr().out}\ndocs/development.md is stale: run "
                                        "python docs/gen_development.py")


def test_the_page_shows_every_module_and_every_layer(gen: ModuleType) -> None:
    text = (ROOT / "docs" / "development.md").read_text()
    for path in (ROOT / "allfives_env").rglob("*.py"):
        if "__pycache__" not in path.parts and path.name != "__init__.py":
            assert f"  {path.name} " in text, path
    for name, _ in gen.read_layers():
        assert f"**{name}**" in text, name


def _copy(gen: ModuleType, tmp_path: Path) -> Path:
    """The folders the page is made from, without their data files, and the page regenerated for the copy."""
    skip = shutil.ignore_patterns("__pycache__", "*.npz", "*.png", "*.json", "*.csv")
    for folder in gen.FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=skip)
    assert gen.main([], root=tmp_path) == 0
    return tmp_path


def test_a_new_module_makes_the_page_stale_until_it_is_regenerated(gen: ModuleType, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    root = _copy(gen, tmp_path)
    capsys.readouterr()
    (root / "allfives_env" / "core" / "shuffle.py").write_text('"""Shuffles the boneyard, which no one sees."""\n')
    assert gen.main(["--check"], root=root) == 1
    diff = capsys.readouterr().out
    assert "+    shuffle.py" in diff and "Shuffles the boneyard, which no one sees." in diff
    assert "shuffle.py" not in (root / "docs" / "development.md").read_text()  # --check changes nothing
    assert gen.main([], root=root) == 0
    assert "    shuffle.py                  Shuffles the boneyard" in (root / "docs" / "development.md").read_text()


def test_a_new_layer_appears_in_the_layer_list(gen: ModuleType, tmp_path: Path) -> None:
    root = tmp_path
    structure = root / "tests" / "test_structure.py"
    structure.parent.mkdir()
    text = (ROOT / "tests" / "test_structure.py").read_text()
    assert text.count('    ("serve", (') == 1
    structure.write_text(text.replace('    ("serve", (', '    ("bots", ("allfives_env.bots",)),\n    ("serve", (', 1))
    layers = gen.layers(root).splitlines()
    serve = next(i for i, row in enumerate(layers) if "**serve**" in row)
    assert layers[serve - 1] == f"{serve}. **bots**: `allfives_env.bots`"
    assert layers[serve].startswith(f"{serve + 1}. **serve**: `allfives_env.serve`")


def test_a_page_without_its_markers_is_refused_and_left_alone(gen: ModuleType, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    root = tmp_path
    page = root / "docs" / "development.md"
    page.parent.mkdir()
    page.write_text("# Development\n")
    assert gen.main([], root=root) == 1
    assert "generated:NAME" in capsys.readouterr().out and page.read_text() == "# Development\n"


def test_summaries_are_first_sentences_as_plain_text(gen: ModuleType, tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""The :class:`~a.b.Game` of ``n`` seats, wrapped over\ntwo lines. More.\n\nDetails."""\n')
    assert gen.module_summary(module) == "The Game of n seats, wrapped over two lines."
    config = tmp_path / "c.yaml"
    config.write_text("# Runs it:  allfives train --config c.yaml\n# Another sentence.\nname: c\n")
    assert gen.yaml_summary(config) == "Runs it:  allfives train --config c.yaml"
    assert gen.shortened("a, " * 200).endswith(" ...") and len(gen.shortened("a, " * 200)) <= gen.LONGEST + 4
