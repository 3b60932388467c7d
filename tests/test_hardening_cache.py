"""Hardening of the batch engine's numba cache: a read-only install compiles in memory
instead of failing, a damaged cache file is wiped and compiled again once, and no change to a module the
kernels compile in leaves them stale, wherever numba keeps the cache.

Every check runs on a copy of the package in a temporary directory, in a subprocess that compiles one
small kernel (``kernels.random_actions``, which calls ``dealing.mix64`` in another module), so the suite
never touches the checkout's own cache and stays quick. The expected moves come from a pure-Python
splitmix64 below, so a run that loaded wrong code would be caught too.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "allfives_env"
N_GAMES, N_LEGAL = 8, 29  # 29 = the most legal actions on the double-six set: legal[k] = k

PROBE = f"""
import json, os, sys
import numpy as np
import allfives_env
assert allfives_env.__file__.startswith(os.getcwd()), allfives_env.__file__  # the copy, not the checkout
from allfives_env.batch import kernels
from allfives_env.batch.layout import state_dtype
S = np.zeros({N_GAMES}, state_dtype(6))
S["n_legal"] = {N_LEGAL}
S["legal"][:] = np.arange({N_LEGAL})
out = np.zeros({N_GAMES}, np.int64)
kernels.random_actions(S, np.arange({N_GAMES}, dtype=np.uint64), out)
if "--second-signature" in sys.argv:  # numba adds it to the index: rewrites it, renamed into place
    kernels.random_actions(S, np.arange({N_GAMES}, dtype=np.uint64), np.zeros({N_GAMES}, np.int32))
stats = kernels.random_actions.stats
print(json.dumps({{"out": out.tolist(), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}}), flush=True)
if "--no-exit-hooks" in sys.argv:
    os._exit(0)  # as a pool worker ends: no atexit
"""


def splitmix_moves() -> list[int]:
    """What ``random_actions`` must return for the probe: legal[idx] with idx from splitmix64."""
    mask, moves = (1 << 64) - 1, []
    for i in range(N_GAMES):
        z = (i + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        moves.append(((z >> 32) * N_LEGAL) >> 32)
    return moves


EXPECTED = splitmix_moves()
ZEROS = [0] * N_GAMES  # what the probe returns once mix64 is edited to return 0


def copy_package(directory: Path) -> Path:
    shutil.copytree(PACKAGE, directory / "allfives_env", ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def probe(root: Path, env: dict[str, str], *args: str) -> tuple[dict, str]:
    """Run the probe on the package copy under ``root``; its result and its stderr."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    full.update({"PYTHONPATH": str(root), "PYTHONWARNINGS": "default", "PYTHONDONTWRITEBYTECODE": "1"}, **env)
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=root, env=full, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def warnings_in(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "BatchCacheWarning" in line]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package whose in-tree ``__pycache__`` is writable."""
    return copy_package(tmp_path_factory.mktemp("pkg"))


@pytest.fixture(scope="module")
def blocked_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy whose ``batch/__pycache__`` cannot be created: a regular file is in the way. (The tests run
    as root, for whom a read-only mode bit stops nothing; numba's locator fails the same way on both.)"""
    root = copy_package(tmp_path_factory.mktemp("blocked"))
    (root / "allfives_env" / "batch" / "__pycache__").write_text("in the way")
    return root


@pytest.fixture()
def home(tmp_path: Path) -> dict[str, str]:
    """A private user cache directory, so that no test reads or writes the real ``~/.cache/numba``."""
    return {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}


def edit(path: Path, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in ``path``; the original text (to restore the shared copy)."""
    text = path.read_text()
    assert old in text, f"{old!r} is no longer in {path.name}: update this test"
    path.write_text(text.replace(old, new))
    return text


MIX64_RETURN = "    return z ^ (z >> _S31)\n"
#: What a process says on stderr before the kernels compile.
COMPILING = "compiling the batch engine's kernels"


# ------------------------------------------------------------------------------------------- M4: read-only
def test_a_read_only_install_compiles_in_memory_and_says_so_once(blocked_package: Path, tmp_path: Path) -> None:
    """No writable cache directory anywhere: numba used to raise 'cannot cache function ...: no locator
    available' at import. Now the kernels compile in memory, one warning names NUMBA_CACHE_DIR."""
    in_the_way = tmp_path / "file"
    in_the_way.write_text("")
    env = {"NUMBA_CACHE_DIR": str(in_the_way / "numba"), "XDG_CACHE_HOME": str(in_the_way / "xdg"),
           "HOME": str(in_the_way)}
    result, stderr = probe(blocked_package, env)
    assert result["out"] == EXPECTED and result["hits"] == 0
    notices = warnings_in(stderr)
    assert len(notices) == 1 and "NUMBA_CACHE_DIR" in notices[0] and "in memory" in notices[0], stderr


def test_every_batch_module_takes_njit_from_the_jit_wrapper() -> None:
    """A kernel module that decorates with numba's own ``njit(cache=True)`` would still fail to import
    on a read-only install: only :mod:`allfives_env.batch.jit` may import it from numba."""
    offenders = []
    for path in sorted((PACKAGE / "batch").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "numba" and path.name != "jit.py":
                if any(alias.name in ("njit", "jit") for alias in node.names):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


# ------------------------------------------------------------------------------------------- M6: staleness
@pytest.mark.parametrize("where", ["in-tree", "NUMBA_CACHE_DIR", "user-wide"])
def test_an_edit_to_a_called_kernel_recompiles_its_callers(where: str, package: Path, blocked_package: Path,
                                                           home: dict[str, str], tmp_path: Path) -> None:
    """``random_actions`` (kernels.py) calls ``mix64`` (dealing.py). After an edit to dealing.py only,
    numba would reuse the cached ``random_actions`` with the old ``mix64`` compiled in; the stamp used to
    guard only the in-tree cache, so with NUMBA_CACHE_DIR or the user-wide cache the old code ran."""
    root = blocked_package if where == "user-wide" else package
    env = dict(home, **({"NUMBA_CACHE_DIR": str(tmp_path / "numba")} if where == "NUMBA_CACHE_DIR" else {}))
    dealing = root / "allfives_env" / "batch" / "dealing.py"
    assert probe(root, env)[0]["out"] == EXPECTED
    original = edit(dealing, MIX64_RETURN, "    return np.uint64(0)\n")
    try:
        result, _ = probe(root, env)
    finally:
        dealing.write_text(original)
    assert result["out"] == ZEROS, "the edited dealing.py did not run: a stale kernel came from the cache"
    if where == "user-wide":
        assert list((tmp_path / "xdg" / "numba").glob("batch_*/*.nbi")), "the cache was not the user-wide one"


def test_an_edit_outside_the_batch_package_that_it_imports_recompiles(package: Path, home: dict[str, str]) -> None:
    """encoding.py is compiled into the observation kernels (``len(ACTION_FEATURES)``) but was not hashed:
    after an edit there, every kernel came from the cache unchanged. Now the kernels compile again."""
    encoding = package / "allfives_env" / "encoding.py"
    probe(package, home)
    original = edit(encoding, "ACTION_FEATURES = (", "# an edit\nACTION_FEATURES = (")
    try:
        result, _ = probe(package, home)
    finally:
        encoding.write_text(original)
    assert result["out"] == EXPECTED and result["hits"] == 0 and result["misses"] >= 1


def test_the_hashed_sources_are_the_imports_of_the_batch_modules(package: Path, home: dict[str, str]) -> None:
    """The stamp covers what the batch modules import, transitively within the package, and nothing it
    does not: a module a batch module starts to import is covered with no list to update."""
    (package / "allfives_env" / "new_constants.py").write_text('"""A module added after the fact."""\nK = 3\n')
    layout = package / "allfives_env" / "batch" / "layout.py"
    original = edit(layout, "from __future__ import annotations\n",
                    "from __future__ import annotations\n\nfrom ..new_constants import K  # noqa: F401\n")
    script = ("from pathlib import Path\nimport allfives_env\nfrom allfives_env.batch.cache import compiled_sources\n"
              "root = Path(allfives_env.__file__).resolve().parent\n"
              "print(sorted(p.relative_to(root).as_posix() for p in compiled_sources()))\n")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        done = subprocess.run([sys.executable, "-c", script], cwd=package, capture_output=True, text=True,
                              env=dict(env, PYTHONPATH=str(package), **home), timeout=300)
    finally:
        layout.write_text(original)
        (package / "allfives_env" / "new_constants.py").unlink()
    assert done.returncode == 0, done.stderr[-3000:]
    sources = set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    batch = {f"batch/{p.name}" for p in (PACKAGE / "batch").glob("*.py")}
    assert batch <= sources
    assert {"encoding.py", "analysis.py", "expert_weights.py", "core/rules.py", "new_constants.py"} <= sources
    assert not {"env.py", "cli/__init__.py", "__init__.py", "render.py"} & sources


# ------------------------------------------------------------------------------------------- M5: damage
def _damage(directory: Path, pattern: str, how: str) -> str:
    [path] = directory.glob(pattern)
    data = bytearray(path.read_bytes())
    if how == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    else:
        data[len(data) // 2] ^= 0x10
        path.write_bytes(bytes(data))
    return path.name


def test_a_damaged_cache_file_is_wiped_and_compiled_again_once(package: Path, home: dict[str, str],
                                                               tmp_path: Path) -> None:
    """A truncated or bit-flipped cache file used to break the batch engine on every later run
    (EOFError, UnpicklingError, 'can't unbox array') until someone deleted the cache by hand. Now each
    is found before numba reads it: one warning names it, the cache is wiped, the kernel compiles once
    and the next run loads it again. The last damage hits a file written by a process that ended without
    exit hooks (a pool worker), so it was never fingerprinted and must be found by parsing it."""
    env = dict(home, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    _, stderr = probe(package, env)
    assert stderr.count(COMPILING) == 1, stderr  # an empty cache: the wait is announced, once
    [cache] = (tmp_path / "numba").glob("batch_*")
    # numba itself rewriting a file, in a process that never fingerprinted it, is no damage
    probe(package, env, "--second-signature", "--no-exit-hooks")
    result, stderr = probe(package, env)
    assert warnings_in(stderr) == [] and result["hits"] == 1 and result["misses"] == 0, stderr
    assert COMPILING not in stderr  # a warm cache: nothing to announce
    steps = [("kernels.random_actions-*.nbi", "truncate", ()), ("kernels.random_actions-*.nbc", "truncate", ()),
             ("kernels.random_actions-*.nbc", "flip", ("--no-exit-hooks",)),
             ("kernels.random_actions-*.nbc", "truncate", ())]
    for pattern, how, args in steps:
        name = _damage(cache, pattern, how)
        result, stderr = probe(package, env, *args)
        notices = warnings_in(stderr)
        assert len(notices) == 1 and "damaged" in notices[0] and name in notices[0], (how, name, stderr)
        assert result["out"] == EXPECTED and result["misses"] >= 1 and result["hits"] == 0, (how, name, result)
    result, stderr = probe(package, env)
    assert result["out"] == EXPECTED and result["hits"] >= 1 and result["misses"] == 0
    assert warnings_in(stderr) == []
