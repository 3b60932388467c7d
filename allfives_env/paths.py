"""Refuse an output path that cannot be written, before any game is played.

Used by the command line (``--replay``, ``--json``, ``--csv``, ``--save-games``) and by the terminal game,
so that a typo in a path costs nothing: the error comes before the work, not after it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

__all__ = ["check_output"]


def check_output(path: Optional[str], option: str, folder: bool = False) -> None:
    """Fail now, before any game is played, when ``path`` cannot be written: a directory where a file is
    asked for (or a file where a folder is), or a parent directory that does not exist (OSErrors).
    ``option`` names the path in the message (``--replay``); an empty or None ``path`` passes."""
    if not path:
        return
    p = Path(path)
    if folder:
        if p.exists() and not p.is_dir():
            raise NotADirectoryError(f"{option} {path}: not a directory (give a folder for the games)")
        return
    if p.is_dir():
        raise IsADirectoryError(f"{option} {path}: is a directory; give a file path")
    if not p.parent.is_dir():
        if p.parent.exists():
            raise NotADirectoryError(f"{option} {path}: {p.parent} is a file, not a directory")
        raise FileNotFoundError(f"{option} {path}: the directory {p.parent} does not exist")
    if not os.access(p.parent, os.W_OK):
        raise PermissionError(f"{option} {path}: the directory {p.parent} is not writable")
