"""The layering holds by construction: no import cycles, no import from a lower layer to a higher one, no
reaching into another module's privates, small modules with one job stated in their first docstring line.

Read with ``ast`` from the source, so these checks need nothing imported and stay true as code is added.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "allfives_env"
TRAINING = ROOT / "allfives_training"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
#: Modules allowed past MAX_MODULE_LINES, with the reason (none at present).
LONG_MODULES: dict[str, str] = {}
#: Functions allowed past MAX_FUNCTION_LINES, with the reason (none at present).
LONG_FUNCTIONS: dict[str, str] = {}


def modules(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)




def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imported_modules(path: Path) -> set[str]:
    """Every module of this project that ``path`` imports, at any depth (function-level imports count:
    they are edges too), except under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text())
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_block(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # submodules imported by name
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    known = {module_name(p) for p in modules(PACKAGE)} | {module_name(p) for p in modules(TRAINING)}
    out = set()
    for name in found:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            out.add(name)
    out.discard(module_name(path))
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    return {module_name(p): imported_modules(p) for p in modules(root)}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle among the modules (a package's ``__init__`` counts as the package)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            # importing a package's submodule runs the package's __init__ first: not a cycle of ours
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = dfs(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = dfs(node)
            if cycle:
                return cycle
    return []


def test_pyproject_installs_every_package() -> None:
    # every folder holding modules is a package, and the find rule of pyproject.toml installs each of them
    import tomllib

    from setuptools import find_packages

    rule = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    folders = {module_name(p / "__init__.py") for root in (PACKAGE, TRAINING) for p in [root, *root.rglob("*")]
               if p.is_dir() and "__pycache__" not in p.parts and any(p.glob("*.py"))}
    assert all((ROOT / f.replace(".", "/") / "__init__.py").exists() for f in folders)
    assert sorted(find_packages(where=str(ROOT), include=rule["include"])) == sorted(folders)


def test_the_import_graph_has_no_cycles() -> None:
    graph = import_graph(PACKAGE)
    graph.update(import_graph(TRAINING))
    assert find_cycle(graph) == []


def test_the_library_never_imports_training() -> None:
    # torch lives in allfives_training/ only; the command line alone hands `allfives train` over to it
    for name, imports in import_graph(PACKAGE).items():
        if name.startswith("allfives_env.cli"):
            continue
        assert not any(i.startswith("allfives_training") for i in imports), f"{name} imports training"


def test_the_core_imports_nothing_above_it() -> None:
    for name, imports in import_graph(PACKAGE / "core").items():
        outside = [i for i in imports if not i.startswith("allfives_env.core")]
        assert not outside, f"{name} imports {outside}"


def test_encoding_imports_no_agent_and_scripted_agents_do_not_import_encoding() -> None:
    graph = import_graph(PACKAGE)
    assert not [i for i in graph["allfives_env.encoding"] if i.startswith("allfives_env.agents")]
    assert not [i for i in graph["allfives_env.analysis"] if i.startswith(("allfives_env.agents", "allfives_env.encoding"))]
    for scripted in ("base", "basic", "expert", "search", "registry"):
        assert "allfives_env.encoding" not in graph[f"allfives_env.agents.{scripted}"], scripted


# ------------------------------------------------------------------------------------------------------ the layers
#: The layers, lowest first: (name, modules). A module may import its own layer and those below, never one
#: above, function-level (lazy) imports included. ``pkg.*`` places every module of a package not placed by
#: name; a new top-level module must be placed here. Data flows one way: the core (rules, the table, game,
#: view) -> analysis -> encoding -> the batch engine and policy files -> env -> agents -> games between
#: agents -> evaluation -> openspiel -> training -> the command line, the front end of all of it (its
#: ``allfives train`` hands over to training; nothing but the command line imports training).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core: foundations", ("allfives_env.core.*",)),  # values, errors, tiles, seeds, outcome, and new core modules
    ("core: rules", ("allfives_env.core.rules",)),
    ("core: the table", ("allfives_env.core.board", "allfives_env.core.deal", "allfives_env.core.events",
                         "allfives_env.core.actions")),
    ("core: game", ("allfives_env.core.game", "allfives_env.core.replay", "allfives_env.core")),
    ("core: view", ("allfives_env.core.view",)),
    ("support", ("allfives_env.paths", "allfives_env.parent_watch", "allfives_env.regular_file",
                 "allfives_env.plain_text", "allfives_env.png_writer", "allfives_env.raster", "allfives_env.rule_sampler",
                 "allfives_env.env_args")),
    ("pictures and words", ("allfives_env.render", "allfives_env.board_layout", "allfives_env.render_image",
                            "allfives_env.narrate", "allfives_env.replay_frames", "allfives_env.viewer")),
    ("analysis", ("allfives_env.analysis", "allfives_env.expert_weights")),
    ("encoding", ("allfives_env.race", "allfives_env.encoding")),
    # the batch engine mirrors the core, analysis, encoding and the scripted agents: it reads the observation
    # slices and features below it, and agents/search.py runs its search
    ("batch engine, policy files", ("allfives_env.batch", "allfives_env.batch.*", "allfives_env.policy",
                                    "allfives_env.policy.*")),
    ("env", ("allfives_env.env", "allfives_env.allfives_v0", "allfives_env")),
    ("agents", ("allfives_env.agents", "allfives_env.agents.*")),
    ("games between agents", ("allfives_env.seat_setup", "allfives_env.single_seat", "allfives_env.match",
                              "allfives_env.batch_opponents", "allfives_env.vector", "allfives_env.selfplay",
                              "allfives_env.play")),
    ("evaluation", ("allfives_env.evaluation", "allfives_env.evaluation.*")),
    ("bench", ("allfives_env.bench", "allfives_env.bench.*")),
    ("openspiel", ("allfives_env.openspiel", "allfives_env.openspiel.*")),
    ("training", ("allfives_training", "allfives_training.*")),
    ("serve", ("allfives_env.serve", "allfives_env.serve.*")),
    ("command line", ("allfives_env.cli", "allfives_env.cli.*", "allfives_env.__main__")),
]

#: Imports that run up the layers, importer -> imported, each with the reason it is still here.
#: Every entry is a defect to remove, not a rule: the test fails once one is gone, so the list shrinks.
KNOWN_UPWARD_IMPORTS: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    """The index in LAYERS of ``module``: placed by name, else by the nearest ``pkg.*`` above it."""
    for index, (_, names) in enumerate(LAYERS):
        if module in names:
            return index
    package = module.rpartition(".")[0]
    while package:
        for index, (_, names) in enumerate(LAYERS):
            if f"{package}.*" in names:
                return index
        package = package.rpartition(".")[0]
    raise AssertionError(f"{module} has no layer: place it in LAYERS (tests/test_structure.py)")


def upward_imports(graph: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """Every import from a lower layer to a higher one, importer -> imported: the two layers' names.

    Importing a package's own ancestor is not counted: Python runs it before the module anyway."""
    found = {}
    for name, imports in graph.items():
        for target in imports:
            if name.startswith(target + "."):
                continue
            if layer_of(target) > layer_of(name):
                found[(name, target)] = f"{LAYERS[layer_of(name)][0]} imports {LAYERS[layer_of(target)][0]}"
    return found


def test_every_module_has_a_layer_and_every_layer_a_module() -> None:
    names = set(import_graph(PACKAGE)) | set(import_graph(TRAINING))
    placed = {layer_of(name) for name in names}
    assert placed == set(range(len(LAYERS))), [LAYERS[i][0] for i in set(range(len(LAYERS))) - placed]


def test_no_import_runs_up_the_layers() -> None:
    graph = import_graph(PACKAGE)
    graph.update(import_graph(TRAINING))
    found = upward_imports(graph)
    unexpected = {edge: why for edge, why in found.items() if edge not in KNOWN_UPWARD_IMPORTS}
    assert unexpected == {}, "imports from a lower layer to a higher one"
    gone = set(KNOWN_UPWARD_IMPORTS) - set(found)
    assert not gone, f"no longer imported upward, strike from KNOWN_UPWARD_IMPORTS: {sorted(gone)}"


def test_the_layer_check_sees_lazy_imports() -> None:
    """A lazy import (inside a function) is an edge like any other; a package's own ancestor is not one."""
    bots = PACKAGE / "openspiel" / "bots.py"
    top_level = {node.module for node in ast.parse(bots.read_text()).body if isinstance(node, ast.ImportFrom)}
    assert "position" not in top_level and "allfives_env.openspiel.position" in imported_modules(bots)  # in search()
    graph = {"allfives_env.agents": {"allfives_env.openspiel.bots"}, "allfives_env.core.tiles": {"allfives_env.core"}}
    assert set(upward_imports(graph)) == {("allfives_env.agents", "allfives_env.openspiel.bots")}


def registered_paths() -> list[tuple[str, str, str]]:
    """(where, agent name, "module:attribute") of every path in a ``register_agent`` call of the package: an
    agent registered by the path of its class, and a batch twin named by path (``batch="module:attr"``,
    written out or through a module-level constant)."""
    found = []
    for path in modules(PACKAGE):
        tree = ast.parse(path.read_text())
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                     for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register_agent" and node.args):
                continue
            name = node.args[0].value if isinstance(node.args[0], ast.Constant) else "?"
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                found.append((where, name, node.args[1].value))
            for keyword in node.keywords:
                if keyword.arg == "batch" and isinstance(keyword.value, ast.Constant):
                    found.append((where, f"{name} (batch twin)", keyword.value.value))
                elif keyword.arg == "batch" and isinstance(keyword.value, ast.Name) and keyword.value.id in constants:
                    found.append((where, f"{name} (batch twin)", constants[keyword.value.id]))
    return found


def test_agents_registered_by_path_name_classes_that_exist() -> None:
    """A path is how a layer names an agent (or its batch twin) above it without importing it: it must name
    a class, function or module-level value that exists."""
    paths = registered_paths()
    assert {name for _, name, _ in paths} >= {"openspiel-ismcts", "openspiel-mcts", "random (batch twin)",
                                              "ppo (batch twin)"}
    for where, name, target in paths:
        module, _, attribute = target.partition(":")
        files = [ROOT / (module.replace(".", "/") + ".py"), ROOT / module.replace(".", "/") / "__init__.py"]
        source = next((f for f in files if f.is_file()), None)
        assert source, f"{where}: agent {name!r} names module {module!r}, which does not exist"
        body = ast.parse(source.read_text()).body
        defined = {n.name for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        defined |= {t.id for n in body if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        assert attribute in defined, f"{where}: agent {name!r} names {target!r}, which {module} does not define"


def private_uses(path: Path) -> list[str]:
    """``x._name`` where ``x`` is not ``self``/``cls``, and ``from m import _name``: reaching into another
    module's or object's private parts."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: import {alias.name}")
    return found


#: Private names of outside libraries that are their documented extension points.
ALLOWED_PRIVATE = {
    "._cumulative_rewards",  # PettingZoo's AEC bookkeeping, set by the env (the wrappers read it)
    "._was_dead_step",  # PettingZoo's AEC helper for stepping a done agent
    "._has_reset",  # PettingZoo's OrderEnforcingWrapper state, read by our subclass
    "._fields",  # a NamedTuple's documented list of field names
}


def test_no_module_outside_the_core_touches_a_private_name_of_another() -> None:
    outside_core = [p for p in modules(PACKAGE) if "core" not in p.relative_to(PACKAGE).parts]
    offences = [use for path in outside_core for use in private_uses(path)
                if not any(use.endswith(allowed) for allowed in ALLOWED_PRIVATE)]
    assert offences == []


def test_agents_cannot_reach_the_game_through_the_view() -> None:
    from allfives_env.core import Game
    from allfives_env.core.view import PlayerView

    view = PlayerView(Game(seed=0), 0)
    public = [name for name in dir(view) if not name.startswith("_")]
    game = view._game
    for name in public:
        value = getattr(view, name)
        assert value is not game and not isinstance(value, Game), f"PlayerView.{name} hands out the game"
    fork = view.determinized({1: game.hands[1]}, game.boneyard())
    assert fork.deal_seed is None and fork.rng is None and fork.events == []


@pytest.mark.parametrize("path", list(modules(PACKAGE)) + list(modules(TRAINING)), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_are_small_with_one_job_stated_first(path: Path) -> None:
    source = path.read_text()
    name = str(path.relative_to(ROOT))
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES or name in LONG_MODULES, f"{name} has {lines} lines"
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc and doc.strip().splitlines()[0].strip(), f"{name} has no docstring stating its job"
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            key = f"{name}:{node.name}"
            assert length <= MAX_FUNCTION_LINES or key in LONG_FUNCTIONS, f"{key} has {length} lines"


#: Calls that can run code from a file: unpickling, or YAML/torch loaders that build Python objects.
UNSAFE_LOADS = {("yaml", "load"), ("yaml", "unsafe_load"), ("yaml", "full_load"), ("pickle", "load"),
                ("pickle", "loads"), ("cloudpickle", "load"), ("cloudpickle", "loads"), ("torch", "load"),
                ("joblib", "load"), ("dill", "load"), ("dill", "loads")}


def unsafe_loads(path: Path) -> list[str]:
    """Every call of a loader that may unpickle, and every ``allow_pickle=True`` / ``.load(`` of an SB3
    model class: a file a user was handed must never run code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if (func.value.id, func.attr) in UNSAFE_LOADS or (func.attr == "load" and func.value.id.endswith("PPO")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {func.value.id}.{func.attr}")
        for kw in node.keywords:
            if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: allow_pickle")
    return found


def test_nothing_the_project_loads_can_unpickle() -> None:
    offences = [use for root in (PACKAGE, TRAINING) for path in modules(root) for use in unsafe_loads(path)]
    assert offences == []
