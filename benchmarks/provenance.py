"""Where a benchmark's figures came from, written beside them: the command, the date and the machine.

Every published figure names its command, date and machine (``docs/gen_tables.py`` prints them under each
table from the result file), so the scripts that write result files stamp them the same way through
:func:`stamped` and write them with :func:`write_report`.
"""

from __future__ import annotations

import json
import platform
import sys
from datetime import date
from pathlib import Path
from typing import Any, Optional, Sequence


def stamped(report: dict[str, Any], argv: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """``report`` with the command that made it (``argv``, default this process's), today's date and the
    machine's architecture and Python."""
    args = list(sys.argv if argv is None else [sys.argv[0], *argv])
    return {**report, "command": "python " + " ".join(args), "date": date.today().isoformat(),
            "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"}


def write_report(path: Optional[Path], report: dict[str, Any]) -> None:
    """Write ``report`` as indented JSON to ``path`` (its folder made if needed); nothing when ``path`` is None."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1) + "\n")
