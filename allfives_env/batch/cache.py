"""Keeps numba's on-disk cache of the batch kernels usable, intact and true to their source.

numba picks the cache directory itself (``NUMBA_CACHE_DIR`` if set, else the package's ``__pycache__``
if writable, else the user's cache directory) and, before reusing a compiled kernel, checks only that
kernel's own source file. :func:`prepare_cache` runs once per process, before any kernel is defined, and
handles the three ways that goes wrong:

* **No writable directory.** numba would refuse ``cache=True`` at import; the kernels are compiled in
  memory instead (:mod:`.jit`), with one :class:`BatchCacheWarning` saying how to get a cache back.
* **Stale kernels.** A kernel compiles in the kernels it calls and the constants it reads from other
  modules (``len(ACTION_FEATURES)``, the expert's weights), so a change there must recompile it too.
  The cache directory numba chose is stamped with a hash of every module the batch modules import,
  found by reading their imports (:func:`compiled_sources`), and wiped when the hash differs.
* **Damaged files.** A truncated or altered cache file would make numba fail on every run, or load wrong
  code. The stamp records each file's digest once the file has been seen whole; a file changed in place
  since (numba never does that: it renames new files into place), or one that does not parse, wipes the
  cache (one warning), and the kernels compile once again.

numba's cache is the library's own compiled output in its own directory; nothing here unpickles it (the
files are parsed with :mod:`pickletools`, which builds no objects).
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import inspect
import io
import json
import os
import pickletools
import sys
import types
import warnings
from pathlib import Path
from typing import Iterable, Optional

import numba

_PACKAGE = Path(__file__).resolve().parent
_ROOT = _PACKAGE.parent
#: numba names cache files ``<module>.<function>-<line>.py<XY><abiflags>.nbi`` (the index) and
#: ``....<n>.nbc`` (one compiled signature each); other Python versions' files are left to them.
_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
_INDEX, _DATA = f"*.{_TAG}.nbi", f"*.{_TAG}.*.nbc"
_STAMP = f"allfives_batch.{_TAG}.stamp"
_MAX_STAMP_BYTES = 1 << 20


class BatchCacheWarning(UserWarning):
    """The batch kernels' disk cache could not be used as found: it was unwritable (the kernels are then
    compiled in memory) or damaged (it was deleted and the kernels compiled again)."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(_ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_file(name: str) -> Optional[Path]:
    """The source file of module ``name`` if it is one of this package's, else None."""
    parts = name.split(".")
    if parts[0] != _ROOT.name:
        return None
    base = _ROOT.joinpath(*parts[1:])
    for path in [base / "__init__.py"] + ([base.with_name(base.name + ".py")] if parts[1:] else []):
        if path.is_file():
            return path
    return None


def _imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports (any depth in the file, relative imports resolved), and for
    ``from m import x`` also ``m.x``, which is a module when ``x`` is a submodule."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError):  # importing it will raise the real error; its bytes are still hashed
        return set()
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def compiled_sources() -> list[Path]:
    """Every source file whose code or values the kernels may compile in: the batch package's modules
    and, transitively, every module of this package they import. Read from the imports, so a module a
    kernel starts to use is covered without anyone keeping a list."""
    todo = sorted(_PACKAGE.glob("*.py"))
    seen = set(todo)
    while todo:
        for name in _imported_names(todo.pop()):
            path = _module_file(name)
            if path is not None and path not in seen:
                seen.add(path)
                todo.append(path)
    return sorted(seen)


def source_hash(paths: Optional[Iterable[Path]] = None) -> str:
    """A hash of numba's version and of the names and contents of ``paths`` (default:
    :func:`compiled_sources`): equal hashes mean the cached kernels were compiled from this code."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in compiled_sources() if paths is None else paths:
        content = path.read_bytes()
        digest.update(f"\0{path.relative_to(_ROOT).as_posix()}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def _probe() -> None:
    """A function numba is asked to place in its cache, as if defined in this package (never called)."""


def cache_directory() -> Optional[Path]:
    """The directory numba caches the batch kernels in, found by numba's own rules (its locators, in its
    order, with ``NUMBA_CACHE_DIR``); None when numba finds no writable one."""
    from numba.core.caching import FunctionCache

    probe = types.FunctionType(_probe.__code__.replace(co_filename=str(Path(__file__).resolve())), {})
    try:
        return Path(FunctionCache(probe).cache_path)
    except RuntimeError:  # "cannot cache function ...: no locator available", or a bad locator setting
        return None


def _notice(message: str) -> None:
    """Warn, attributed to the first caller outside this package and the import machinery (the user's
    ``import``), so that the warning points at the user's code as Python's own warnings do."""
    frame = caller = inspect.currentframe()
    while frame is not None:
        caller, name = frame, frame.f_code.co_filename
        if not (name.startswith(str(_ROOT) + os.sep) or name.startswith("<frozen importlib")):
            break
        frame = frame.f_back
    namespace = caller.f_globals if caller is not None else {}
    warnings.warn_explicit(f"allfives_env.batch: {message}", BatchCacheWarning,
                           caller.f_code.co_filename if caller is not None else "allfives_env.batch",
                           caller.f_lineno if caller is not None else 0, module=namespace.get("__name__"),
                           registry=namespace.setdefault("__warningregistry__", {}))


def _cache_files(directory: Path) -> list[Path]:
    return sorted(set(directory.glob(_INDEX)) | set(directory.glob(_DATA)))


def _fingerprint(path: Path) -> Optional[list]:
    """[sha256, inode] of ``path``, or None if it vanished (another process wiped the cache). numba
    writes each cache file anew and renames it into place, so a file it rewrote has a new inode, while
    damage in place (a bad sector, a cut or patched file) keeps the old one."""
    try:
        return [hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_ino]
    except OSError:
        return None


def _parses(path: Path) -> bool:
    """Whether ``path`` is a whole numba cache file: pickle streams read to their end without building
    anything (an index is numba's version, then its (stamp, overloads); a data file one stream), and an
    index names each of its data files once, all of its own function."""
    try:
        data = path.read_bytes()
        stream = io.BytesIO(data)
        strings: list[str] = []
        for _ in range(2 if path.suffix == ".nbi" else 1):
            ops = list(pickletools.genops(stream))
            if not ops or ops[-1][0].name != "STOP":
                return False
            strings += [arg for _, arg, _ in ops if isinstance(arg, str)]
    except Exception:  # pickletools reports a cut or garbled stream in several ways; each means damaged
        return False
    if stream.tell() != len(data):
        return False
    if path.suffix != ".nbi":
        return True
    names = [s for s in strings if s.endswith(".nbc")]
    return len(set(names)) == len(names) and all(name.startswith(path.name[: -len(".nbi")] + ".") for name in names)


def _read_stamp(directory: Path) -> Optional[dict]:
    """The stamp, {"sources": hash, "closure": [paths], "files": {name: fingerprint}}, or None if
    missing or malformed."""
    try:
        with open(directory / _STAMP, "rb") as handle:
            stamp = json.loads(handle.read(_MAX_STAMP_BYTES + 1))  # past the cap: cut, so malformed
    except (OSError, ValueError):
        return None
    ok = (isinstance(stamp, dict) and isinstance(stamp.get("sources"), str) and isinstance(stamp.get("files"), dict)
          and all(isinstance(v, list) and len(v) == 2 for v in stamp["files"].values())
          and isinstance(stamp.get("closure"), list) and all(isinstance(p, str) for p in stamp["closure"]))
    return stamp if ok else None


def _write_stamp(directory: Path, sources: str, paths: list[Path], files: dict) -> None:
    temporary = directory / f"{_STAMP}.{os.getpid()}.tmp"
    closure = [path.relative_to(_ROOT).as_posix() for path in paths]
    try:
        temporary.write_text(json.dumps({"sources": sources, "closure": closure, "files": files}))
        os.replace(temporary, directory / _STAMP)
    except OSError:  # without a stamp the next process wipes the cache again: slower, never wrong
        temporary.unlink(missing_ok=True)


def _reset(directory: Path, sources: str, paths: list[Path], files: list[Path]) -> bool:
    """Delete ``files`` and stamp the empty cache with ``sources``; False if a file could not be
    deleted (numba would load it, so the kernels must then be compiled in memory)."""
    for path in files:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            _notice(f"could not delete the stale or damaged numba cache file {path} ({error.strerror}); "
                    "compiling the kernels in memory in this process. Delete it, or set NUMBA_CACHE_DIR "
                    "to another writable directory.")
            return False
    _write_stamp(directory, sources, paths, {})
    return True


def _sync(directory: Path, sources: str, paths: list[Path]) -> bool:
    """Wipe the cache in ``directory`` if it was compiled from other sources or a file in it is damaged,
    else record the fingerprints of files new since the last look. True if the cache may be used."""
    files = _cache_files(directory)
    stamp = _read_stamp(directory)
    if stamp is None or stamp["sources"] != sources:
        return _reset(directory, sources, paths, files)
    recorded, kept, damaged = stamp["files"], {}, []
    for path in files:
        now = _fingerprint(path)
        if now is None:
            continue
        before = recorded.get(path.name)
        if before is not None and now[0] == before[0]:
            kept[path.name] = now
        # new, or rewritten by numba (an index when a signature is added, a data file when two processes
        # compiled the same one): whole if it parses. Changed in place: damaged.
        elif (before is None or now[1] != before[1]) and _parses(path):
            kept[path.name] = now
        else:
            damaged.append(path.name)
    if damaged:
        more = f" and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        _notice(f"damaged numba cache files in {directory} ({', '.join(damaged[:3])}{more}): deleted the "
                "batch kernels' cache; they are compiled again, once.")
        return _reset(directory, sources, paths, files)
    if kept != recorded:
        _write_stamp(directory, sources, paths, kept)
    return True


def _sources(directory: Path) -> tuple[str, list[Path]]:
    """The source hash and :func:`compiled_sources`; the imports are read again only when a file of the
    closure recorded in the stamp changed (the closure follows from those files' contents alone)."""
    stamp = _read_stamp(directory)
    if stamp is not None:
        paths = [_ROOT / name for name in stamp["closure"]]
        if set(_PACKAGE.glob("*.py")) <= set(paths) and all(path.is_file() for path in paths):
            try:
                if source_hash(paths) == stamp["sources"]:
                    return stamp["sources"], paths
            except OSError:
                pass
    paths = compiled_sources()
    return source_hash(paths), paths


def _sync_at_exit(directory: Path, sources: str, paths: list[Path]) -> None:
    """Fingerprint what this process compiled, so that later damage to it is caught; if the sources
    changed while it ran, what it compiled may be stale: wipe it."""
    try:
        if source_hash(paths) != sources:
            now = compiled_sources()
            _reset(directory, source_hash(now), now, _cache_files(directory))
        else:
            _sync(directory, sources, paths)
    except OSError:  # a source or cache file vanished at exit: the next process checks again
        pass


@functools.lru_cache(maxsize=None)
def prepare_cache() -> bool:
    """Make numba's cache of the batch kernels safe to use, once per process, before any kernel is
    defined; True if the kernels may be cached (``cache=True``), False if they must compile in memory
    (no writable cache directory, or a stale file that cannot be deleted), which is said once."""
    directory = cache_directory()
    if directory is None:
        setting = numba.config.CACHE_DIR or "unset"  # type: ignore[attr-defined]  # numba sets it at run time
        _notice(f"numba has no writable directory for the compiled kernels' cache (NUMBA_CACHE_DIR is "
                f"{setting}; {_PACKAGE / '__pycache__'} and the user cache directory are not writable): "
                "compiling them in memory in every process, which slows each start. Set NUMBA_CACHE_DIR "
                "to a writable directory to cache them.")
        return False
    sources, paths = _sources(directory)
    if not _sync(directory, sources, paths):
        _say_compiling()
        return False
    if not _cache_files(directory):
        _say_compiling()
    atexit.register(_sync_at_exit, directory, sources, paths)
    return True


def _say_compiling() -> None:
    """One line on stderr before the kernels compile (the first run after an install or an update), so that
    a minute of silence is not read as a hang."""
    print("allfives_env: compiling the batch engine's kernels (the first run after an install or update only; "
          "about a minute)", file=sys.stderr, flush=True)
