"""MkDocs hook: publish the learning-curve pictures of ``benchmarks/results`` with the site.

The curves are written by training runs and benchmarks into ``benchmarks/results``; the results pages show
them from there (``../benchmarks/NAME.png``) instead of keeping a second copy under ``docs/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def on_files(files: Files, config: Any) -> Files:
    """Add every ``benchmarks/results/*.png`` as ``benchmarks/<name>.png`` of the site."""
    for picture in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"benchmarks/{picture.name}", abs_src_path=str(picture)))
    return files
