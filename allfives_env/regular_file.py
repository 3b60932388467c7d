"""The one way the project opens a file it was handed (a policy, a run's ``config.yaml``, checkpoints,
reports): regular files only, with a hard cap on the bytes read.

Why: a policy file or a run directory may have been handed over or damaged, and what stands at a path there
need not be a file. ``open()`` of a named pipe (FIFO) waits for a writer that never comes, and a symbolic link to
``/dev/zero`` reports a size of 0 (``st_size``) and then never ends. So the file is opened with
``O_NONBLOCK`` (opening a pipe returns at once), its type is checked on the open descriptor (``fstat``,
after any symbolic link is followed, so the check and the read see the same file), and the bytes are
counted as they are read, not trusted from ``st_size``. Only ``FileNotFoundError`` passes through, so
callers can word a missing file themselves; everything else is ``error`` naming the path.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Union

from allfives_env.core.errors import AllFivesError

__all__ = ["open_regular_file", "read_json_file", "read_regular_file", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _described(path: Union[str, Path]) -> str:
    """``path`` (quoted when it holds control characters), and where it leads when it is a symbolic link."""
    text = str(path)
    if any(ord(c) < 32 for c in text):
        return repr(text)
    try:
        if os.path.islink(path):
            return f"{path} (a symbolic link to {os.path.realpath(path)})"
    except (OSError, ValueError):
        pass
    return str(path)


def open_regular_file(path: Union[str, Path], limit: int, error: type[AllFivesError], what: str) -> int:
    """An open descriptor of ``path`` for reading, once it is a regular file (or a symbolic link to one) whose
    size is at most ``limit`` bytes; the caller closes it. ``what`` names what the file should be ("a run
    state", "a policy file") in the messages of ``error``, raised for anything else: a pipe, a device, a
    socket, a directory, a file that cannot be opened, or one larger than ``limit``. A missing file raises
    ``FileNotFoundError``."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise error(f"{_described(path)} is a directory, not {what}") from None
    except (OSError, ValueError) as exc:
        raise error(f"{_described(path)} cannot be opened: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{_described(path)} is {_kind(st.st_mode)}, not a regular file; {what} is a regular file, "
                        "so it is not read")
        if st.st_size > limit:
            raise error(f"{_described(path)} is {st.st_size:,} bytes, larger than {what} can be ({limit:,} bytes)")
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: Union[str, Path], limit: int, error: type[AllFivesError], what: str) -> bytes:
    """The bytes of ``path``, checked as by :func:`open_regular_file`, counted while they are read (a
    ``/dev/zero`` behind a link, or a file that grows, stops at ``limit``)."""
    fd = open_regular_file(path, limit, error, what)
    try:
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(CHUNK_BYTES, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # the file grew while it was read
                raise error(f"{_described(path)} is more than {limit:,} bytes, larger than {what} can be")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{_described(Path(path))} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_json_file(path: Union[str, Path], limit: int, error: type[AllFivesError], what: str) -> Any:
    """The JSON document of a handed file (read by :func:`read_regular_file`), every failure ``error``:
    ``"no {what} at PATH"`` when it is missing, ``"PATH: not a {what} (not JSON text: ...)"`` when it does not
    parse. ``what`` names the kind of file without its article ("bench card")."""
    where = Path(path)
    try:
        data = read_regular_file(where, limit, error, f"a {what}")
    except FileNotFoundError:
        raise error(f"no {what} at {where}") from None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise error(f"{where}: not a {what} (not JSON text: {type(exc).__name__})") from None
