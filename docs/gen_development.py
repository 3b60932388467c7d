"""Write the generated parts of docs/development.md from the source tree, so the page cannot drift from it.

The page's layout tree and its layer list are read from the files themselves: every module's job from the
first sentence of its docstring (``tests/test_structure.py`` requires every module of the package to state it
there), every config's from its first comment, every page's from its title, and the layers from ``LAYERS``
in ``tests/test_structure.py``, the list the structure test enforces. Everything is read with ``ast`` and
never imported, so the page can be made without torch, Ray or OpenSpiel installed.

Each generated block lives between two marker comments in the page::

    <!-- generated:NAME begin -->
    ...generated markdown...
    <!-- generated:NAME end -->

and ``BLOCKS[NAME]`` makes its text; the prose around the blocks (where a new rule, observation piece,
agent, reward or env front end goes) is written by hand and left as it is.

Run::

    python docs/gen_development.py            # rewrite the generated blocks of docs/development.md
    python docs/gen_development.py --check    # exit 1 with a diff when the page is stale
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import re
import sys
import textwrap
from pathlib import Path
from typing import Callable, Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
PAGE = Path("docs") / "development.md"
MARKER = re.compile(r"<!-- generated:([a-z_]+) begin -->\n(.*?)<!-- generated:\1 end -->", re.S)
#: The top-level folders of the layout tree, in the page's order, each with what the tree says first about it
#: when its own files do not say it.
FOLDERS: dict[str, str] = {
    "allfives_env": "",
    "allfives_training": "",
    "benchmarks": "measurements; results/ holds the figures the docs' tables are made from",
    "examples": "training scripts for outside RL libraries on the vector env",
    "configs": "YAML training configs",
    "docs": "this site (mkdocs.yml lists the pages)",
    "tests": "the test suite",
}
SKIP = re.compile(r"^(__pycache__|\..*|.*\.egg-info|site|.*\.journal)$")  # journals: a bench run in progress
NAME_COLUMN = 32
WIDTH = 116
#: A folder without modules lists its files by name up to this many, else counts them by kind.
LISTED_FILES = 6
#: The most characters of a summary: a file whose first sentence says more is cut at a clause.
LONGEST = 240
#: Folders whose ``test_<topic>_*.py`` files share one row per topic, when a topic has several.
GROUPED = {"tests"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _plain_text() -> Callable[[str], str]:
    """The package's own reST-to-text rule (``allfives_env/plain_text.py``), loaded from its file alone, so
    that the package (and gymnasium, numpy with it) is not imported."""
    spec = importlib.util.spec_from_file_location("_plain_text", ROOT / "allfives_env" / "plain_text.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.plain_text


plain_text = _plain_text()


def first_sentence(lines: list[str]) -> str:
    """The first sentence of the first paragraph of ``lines``, as plain text on one line: docstrings wrap
    their first sentence, so the first line alone would often stop mid-sentence. A paragraph ends at a blank
    line or at a line indented deeper than its first (a command line in a config's comment)."""
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    margin = len(lines[0]) - len(lines[0].lstrip())
    paragraph = []
    for line in lines:
        if not line.strip() or len(line) - len(line.lstrip()) > margin:
            break
        paragraph.append(line.strip())
    return shortened(SENTENCE_END.split(plain_text(" ".join(paragraph)), maxsplit=1)[0])


def shortened(text: str) -> str:
    """``text`` cut after its last clause that ends within ``LONGEST`` characters, so that one row of the tree
    stays a few lines long however much a file's first sentence says."""
    if len(text) <= LONGEST:
        return text
    cut = max(text.rfind(mark, 0, LONGEST) for mark in (", ", "; ", ": "))
    return (text[:cut] if cut > 0 else text[:LONGEST].rsplit(" ", 1)[0]) + " ..."


def module_summary(path: Path) -> str:
    """The job a Python file states first in its docstring ("" when it has none)."""
    doc = ast.get_docstring(ast.parse(path.read_text(), filename=str(path)))  # a syntax error names the file
    return first_sentence(doc.splitlines()) if doc else ""


def yaml_summary(path: Path) -> str:
    """What a config says of itself in its leading comment. A comment line that holds a command (spaces
    aligning it, as in ``command:  allfives train ...``) ends it: the next line starts another sentence."""
    comments = []
    for text in path.read_text().splitlines():
        if not text.startswith("#"):
            break
        comments.append(text[1:].removeprefix(" "))
        if "  " in comments[-1].strip():
            break
    return first_sentence(comments)


def page_title(path: Path) -> str:
    """A markdown page's title: its first ``# `` heading."""
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


SUMMARIES: dict[str, Callable[[Path], str]] = {".py": module_summary, ".yaml": yaml_summary, ".yml": yaml_summary,
                                               ".md": page_title}


def line(depth: int, name: str, text: str) -> str:
    """One row of the tree: the name indented by its depth, the text from a fixed column, wrapped."""
    head = "  " * depth + name
    head = head.ljust(NAME_COLUMN) if len(head) < NAME_COLUMN - 1 else head + "  "
    if not text:
        return head.rstrip()
    return textwrap.fill(text, WIDTH, initial_indent=head, subsequent_indent=" " * NAME_COLUMN,
                         break_on_hyphens=False, break_long_words=False)


def _entries(folder: Path) -> tuple[list[Path], list[Path]]:
    """The files and the subfolders of ``folder`` the tree shows, each sorted by name. A folder without a
    file anywhere under it is left out: git keeps no empty folders, so a clean clone has none of them."""
    shown = [p for p in sorted(folder.iterdir()) if not SKIP.match(p.name)]
    folders = [p for p in shown if p.is_dir() and any(f.is_file() for f in p.rglob("*"))]
    return [p for p in shown if p.is_file()], folders


def _data_files(files: list[Path]) -> str:
    """Files without a summary of their own, by name or, when many, counted by kind."""
    if len(files) <= LISTED_FILES:
        return ", ".join(p.name for p in files)
    kinds: dict[str, int] = {}
    for p in files:
        kinds[p.suffix or p.name] = kinds.get(p.suffix or p.name, 0) + 1
    return f"{len(files)} files: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))


def _rows(files: list[Path], grouped: bool) -> Iterator[tuple[str, str]]:
    """A row per file with its summary; when ``grouped``, the ``test_<topic>_*.py`` files of a topic with
    several share one row that names them."""
    topics: dict[str, list[Path]] = {}
    for path in files:
        topic = path.stem.split("_")[1] if grouped and path.stem.startswith("test_") else path.name
        topics.setdefault(topic, []).append(path)
    for topic, paths in topics.items():
        if len(paths) == 1:
            yield paths[0].name, SUMMARIES[paths[0].suffix](paths[0])
        else:
            yield f"test_{topic}*.py", ", ".join(p.name for p in paths)


def tree(folder: Path, depth: int, about: str = "") -> Iterator[str]:
    """The rows of ``folder`` and everything under it: its own line (its ``__init__``'s job, else ``about``),
    then each file with its summary, files without one gathered on one row, then each subfolder."""
    files, folders = _entries(folder)
    init = folder / "__init__.py"
    own = module_summary(init) if init.is_file() else ""
    summarized = [p for p in files if p.suffix in SUMMARIES and p.name != "__init__.py"]
    data = [p for p in files if p.suffix not in SUMMARIES]
    if not summarized and not folders and data:
        yield line(depth, folder.name + "/", " ".join(filter(None, [about or own, _data_files(data)])))
        return
    yield line(depth, folder.name + "/", " ".join(filter(None, [about, own])))
    for name, text in _rows(summarized, folder.name in GROUPED and depth == 0):
        yield line(depth + 1, name, text)
    if data:
        yield line(depth + 1, "(data)" if init.is_file() else "(other files)", _data_files(data))
    for sub in folders:
        yield from tree(sub, depth + 1)


def layout(root: Path = ROOT) -> str:
    """The layout tree of the repository's folders, as a text block."""
    rows = [row for name, about in FOLDERS.items() if (root / name).is_dir() for row in tree(root / name, 0, about)]
    return "```text\n" + "\n".join(rows) + "\n```"


def read_layers(root: Path = ROOT) -> list[tuple[str, tuple[str, ...]]]:
    """``LAYERS`` of ``tests/test_structure.py``, read as the literal it is (the test module is not run)."""
    source = root / "tests" / "test_structure.py"
    for node in ast.parse(source.read_text()).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "LAYERS" and node.value is not None:
            return ast.literal_eval(node.value)
    raise LookupError(f"{source} assigns no LAYERS literal: the layer list has no source to be made from")


def layers(root: Path = ROOT) -> str:
    """The layers, lowest first, each with the modules it places, as a numbered list."""
    return "\n".join(f"{n}. **{name}**: " + ", ".join(f"`{module}`" for module in modules)
                     for n, (name, modules) in enumerate(read_layers(root), 1))


BLOCKS: dict[str, Callable[[Path], str]] = {"layers": layers, "layout": layout}


def render(text: str, root: Path = ROOT) -> str:
    """``text`` with every generated block replaced by what its generator makes now from ``root``."""

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in BLOCKS:
            raise KeyError(f"generated:{name} has no generator; known: {', '.join(sorted(BLOCKS))}")
        # blank lines around the block: a marker comment glued to it would swallow it as raw HTML
        return f"<!-- generated:{name} begin -->\n\n{BLOCKS[name](root).strip(chr(10))}\n\n<!-- generated:{name} end -->"

    return MARKER.sub(one, text)


def main(argv: Optional[list[str]] = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff if the page is stale")
    args = parser.parse_args(argv)
    page = root / PAGE
    text = page.read_text()
    missing = set(BLOCKS) - {m.group(1) for m in MARKER.finditer(text)}
    if missing:
        print(f"{PAGE} has no markers for the block(s) {sorted(missing)}: add <!-- generated:NAME begin --> and "
              "<!-- generated:NAME end --> where each belongs")
        return 1
    new = render(text, root)
    if new == text:
        print(f"{PAGE} is current")
        return 0
    if args.check:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), f"{PAGE} (as it is)",
                                                   f"{PAGE} (as generated)"))
        print(f"{PAGE} is stale: run python docs/gen_development.py")
        return 1
    page.write_text(new)
    print(f"{PAGE} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
