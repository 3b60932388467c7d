"""The rules reference ``docs/rules.md`` stays the one the code cites, and stays complete.

The code, the tests and the README cite the rules by section ("docs/rules.md §5.1"). These checks read
text only (no game is played), so they cost milliseconds:

* no file cites the old out-of-repository spec by its old name: every citation names ``docs/rules.md``;
* every section a citation names (``§6.3``, ``§4-5``, ``§3 step 5``, ``§9 E10``) is a heading of
  ``docs/rules.md`` (so is every ``§`` reference inside the document itself);
* every option of :class:`allfives_env.core.Rules` has its row in the config table of §8, with the
  default the code has, values the code accepts, and every named value the code accepts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from allfives_env.core import Rules, RulesError

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules.md"
DOC_NAME = "docs/rules.md"
THIS = Path(__file__).resolve()
#: The old name of the spec, which lived outside the repository; spelled in two parts so that this file
#: does not cite it itself.
OLD_NAME = "RULES" + ".md"
#: Where citations live: the package, the training code, tests, benchmarks, configs, docs, the README.
SCANNED = ("allfives_env", "training", "tests", "benchmarks", "configs", "docs", "README.md")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini"}

_OLD_CITATION = re.compile(r"(?<![\w/.-])" + re.escape(OLD_NAME))
_ANY_CITATION = re.compile(r"(?<![\w.-])(?:" + re.escape(DOC_NAME) + "|" + re.escape(OLD_NAME) + ")")
#: "§4", "§5.1", and ranges "§4-5", "§2-§8"
_SECTION_REF = re.compile(r"§\s?(\d+(?:\.\d+)?)(?:\s?[-–]\s?§?(\d+(?:\.\d+)?))?")
_STEP_REF = re.compile(r"§3,? step (\d+)")
#: "E10", and ranges "E1-E17"
_EXAMPLE_REF = re.compile(r"\bE(\d+)(?:\s?[-–]\s?E(\d+))?\b")
_SECTION_HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)?)\.? ")
_EXAMPLE_HEADING = re.compile(r"^#{3,4} (E\d+)\. ")


def scanned_files() -> Iterator[Path]:
    """The text files citations may live in (``docs/rules.md`` itself and this file, whose examples of bad
    citations are made up, excluded)."""
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for p in candidates:
            if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts and p not in (DOC, THIS):
                yield p


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def doc_headings() -> tuple[set[str], set[str]]:
    """Section numbers ("4", "5.1") and example labels ("E10") that head a part of ``docs/rules.md``."""
    sections, examples = set(), set()
    for line in doc_text().splitlines():
        if m := _SECTION_HEADING.match(line):
            sections.add(m.group(1))
        if m := _EXAMPLE_HEADING.match(line):
            examples.add(m.group(1))
    return sections, examples


def section_body(number: str) -> str:
    """The text under the heading of section ``number`` up to the next heading of the same or a higher level."""
    lines = doc_text().splitlines()
    start = next(i for i, line in enumerate(lines) if (m := _SECTION_HEADING.match(line)) and m.group(1) == number)
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next(
        (i for i in range(start + 1, len(lines))
         if lines[i].startswith("#") and len(lines[i]) - len(lines[i].lstrip("#")) <= level),
        len(lines),
    )
    return "\n".join(lines[start + 1:end])


def _expand(first: str, last: Optional[str], prefix: str = "") -> list[str]:
    """A reference and, for a range of whole numbers ("4-5", "E1-E17"), everything between."""
    if last is None:
        return [prefix + first]
    if "." in first or "." in last:
        return [prefix + first, prefix + last]
    return [f"{prefix}{k}" for k in range(int(first), int(last) + 1)]


def cited(text: str) -> tuple[list[str], list[str], list[str]]:
    """The sections, §3 steps and examples a passage cites (examples count only where §9 is cited)."""
    sections = [s for m in _SECTION_REF.finditer(text) for s in _expand(m.group(1), m.group(2))]
    steps = _STEP_REF.findall(text)
    examples = []
    if "9" in sections:
        examples = [e for m in _EXAMPLE_REF.finditer(text) for e in _expand(m.group(1), m.group(2), "E")]
    return sections, steps, examples


def citations() -> list[tuple[str, str]]:
    """(file:line, the text from the first citation of the rules document to the end of the line)."""
    out = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if m := _ANY_CITATION.search(line):
                out.append((f"{path.relative_to(ROOT)}:{number}", line[m.start():]))
    return out


def missing_refs(text: str) -> list[str]:
    """What ``text`` cites that ``docs/rules.md`` has no heading (or §3 step) for."""
    sections, examples = doc_headings()
    steps = set(re.findall(r"^(\d+)\. ", section_body("3"), flags=re.M))
    cited_sections, cited_steps, cited_examples = cited(text)
    return (
        [f"§{s}" for s in cited_sections if s not in sections]
        + [f"§3 step {s}" for s in cited_steps if s not in steps]
        + [e for e in cited_examples if e not in examples]
    )


# ====================================================================== (a) one name for the rules
def test_nothing_cites_the_old_spec_name():
    stale = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _OLD_CITATION.search(line):
                stale.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not stale, f"cite {DOC_NAME} (the rules reference in the repository), not {OLD_NAME}:\n" + "\n".join(stale)


# ====================================================================== (b) every cited section exists
def test_the_reference_has_the_spec_sections():
    sections, examples = doc_headings()
    want = {str(k) for k in range(11)} | {"5.1", "5.2", "5.3", "6.1", "6.2", "6.3", "6.4"}
    assert want <= sections, f"missing section headings: {sorted(want - sections)}"
    assert examples == {f"E{k}" for k in range(1, 18)}


def test_every_citation_names_an_existing_section():
    found = citations()
    assert len(found) >= 10, f"expected the code to cite {DOC_NAME} throughout, found {found}"
    bad = [f"{where}: {text.strip()} -> no {', '.join(missing)}" for where, text in found if (missing := missing_refs(text))]
    assert not bad, f"citations of sections that {DOC_NAME} does not have:\n" + "\n".join(bad)


def test_cross_references_inside_the_reference_exist():
    bad = [f"line {n}: {line.strip()}" for n, line in enumerate(doc_text().splitlines(), 1) if missing_refs(line)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "text,missing",
    [
        ("(docs/rules.md §4-5)", []),
        ("docs/rules.md §2-§8", []),
        ("docs/rules.md §5.1, and §5.3 for sniff", []),
        ("docs/rules.md §3 step 5", []),
        ("docs/rules.md §9 worked examples E1-E17", []),
        ("docs/rules.md §5.4", ["§5.4"]),
        ("docs/rules.md §12", ["§12"]),
        ("docs/rules.md §3 step 9", ["§3 step 9"]),
        ("docs/rules.md §9 E18", ["E18"]),
    ],
)
def test_the_citation_check_itself(text, missing):
    """The parser finds the sections a citation names, and reports the ones the document lacks."""
    assert missing_refs(text) == missing


# ====================================================================== (c) every option documented
def config_rows() -> dict[str, list[str]]:
    """The config table of §8: key -> [values, default, effect], each cell as written."""
    rows = {}
    for line in section_body("8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def yaml_value(cell: str) -> Any:
    """A default as the table writes it (`` `null` ``, `` `true` ``, `` `2` ``, `` `random` ``)."""
    text = cell.strip().strip("`").strip('"')
    literals = {"null": None, "true": True, "false": False}
    if text in literals:
        return literals[text]
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def named_values(cell: str) -> set[str]:
    """The string values a values cell lists (`` `random`, `highest_double` ``), without null/true/false."""
    return {v for v in re.findall(r'`"?([a-z][a-z_]*)"?`', cell) if v not in ("null", "true", "false")}


def accepted_names(name: str) -> list[str]:
    """The values ``Rules`` accepts for the string option ``name``, as its error message lists them."""
    with pytest.raises(RulesError) as err:
        Rules(**{name: "not-a-value"})
    listed = re.search(r"\[[^\]]*\]", str(err.value))
    assert listed, f"the message for a bad {name} lists no allowed values: {err.value}"
    return ast.literal_eval(listed.group(0))


def test_every_rules_option_has_a_row_in_section_8():
    rows = config_rows()
    keys = [f.name for f in fields(Rules)]
    assert not set(keys) - set(rows), f"options of Rules missing from {DOC_NAME} §8: {sorted(set(keys) - set(rows))}"
    assert not set(rows) - set(keys), f"{DOC_NAME} §8 documents options Rules does not have: {sorted(set(rows) - set(keys))}"


@pytest.mark.parametrize("option", [f for f in fields(Rules)], ids=lambda f: f.name)
def test_each_option_row_matches_the_code(option):
    rows = config_rows()
    assert option.name in rows, f"{option.name} has no row in {DOC_NAME} §8"
    values, default, effect = rows[option.name]
    assert option.default is not MISSING
    assert yaml_value(default) == option.default, f"{option.name}: documented default {default}, code {option.default!r}"
    assert effect, f"{option.name}: the effect is not described"
    for value in sorted(named_values(values)):
        Rules(**{option.name: value})  # a documented value is accepted
    if isinstance(option.default, str):
        accepted = set(accepted_names(option.name))
        assert accepted == named_values(values), f"{option.name}: documented {named_values(values)}, accepted {accepted}"


def test_the_yaml_defaults_match_the_code():
    """The configuration file of §8 holds every option with the default the code has (one flat
    ``key: value  # comment`` per line, read here without a YAML library, which is an optional extra)."""
    block = re.search(r"```yaml\n(.*?)```", section_body("8"), flags=re.S)
    assert block, f"{DOC_NAME} §8 has no yaml block"
    config = {}
    for line in block.group(1).splitlines():
        key, _, value = line.partition("#")[0].partition(":")
        assert key.strip() not in config, f"{key.strip()} appears twice"
        config[key.strip()] = yaml_value(value)
    assert config == {f.name: f.default for f in fields(Rules)}
    assert Rules.from_options(config) == Rules()
