"""The replay viewer's page: one self-contained HTML file per replay, and screenshots of it.

``allfives replay GAME.json --html OUT.html`` writes the page with :func:`write_replay_html`.

:func:`replay_html` turns a replay into ONE HTML file that steps through the game in any browser,
offline: inline CSS, inline JavaScript and inline SVG, no fonts, images, scripts or requests from
anywhere else (a Content-Security-Policy in the page forbids them too), so the file can be mailed,
attached to an issue or opened from a CI artifact as it is.

The page's markup, style and code are package data (``viewer_assets/page.html``, ``viewer.css``,
``draw.js``, the drawing shared with the web game, and ``viewer.js``, read with :mod:`importlib.resources`); what it shows is :func:`replay_data`
(:mod:`allfives_env.replay_frames`): the verified replay, one frame per event, computed with the engine's
own board and count, so the browser never re-implements a rule. A corrupt or foreign replay raises
:class:`~allfives_env.core.errors.ReplayError` and no HTML is produced.

Everything embedded is escaped: the data is JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes (a ``</script>`` in a string cannot end the
element), the title is HTML-escaped, and the page inserts text with ``textContent`` only. The
placeholders of the page are filled in one pass, so text put in for one is never scanned for another.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Optional, Union

from .replay_frames import Source, board_layout, replay_data

__all__ = ["board_layout", "replay_data", "replay_html", "viewer_asset", "write_replay_html"]

#: Where the page's files are, inside the package.
ASSETS = "viewer_assets"
#: The placeholders of ``page.html``, and the files that fill each code placeholder, in order: ``draw.js``
#: is the drawing the web game (:mod:`allfives_env.serve`) shares, so it comes before the viewer's own code.
_PLACEHOLDER = re.compile(r"%%(TITLE|CSS|JS|DATA)%%")
_CODE_FILES = {"CSS": ("viewer.css",), "JS": ("draw.js", "viewer.js")}


@lru_cache(maxsize=None)
def viewer_asset(name: str) -> str:
    """The text of one of the page's files (read once); the web game serves ``draw.js`` and ``viewer.css``
    from here too. ``name`` is one of the package's own file names, never a caller's text."""
    return (resources.files(__package__) / ASSETS / name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` can end it or open a comment."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_html(source: Source, title: Optional[str] = None) -> str:
    """One self-contained HTML page that steps through the replay ``source`` (a path, a JSON string, a
    record dict or a :class:`Game`). Raises :class:`ReplayError` for a corrupt or foreign replay, before
    any HTML is made.

    ``title`` defaults to the file name. The page has stable element ids for scripts and tests:
    ``count``, ``scores`` (with ``score-0``, ``score-1``, ... per side), ``event``, ``step`` ("N / total",
    N from 1), ``first``, ``prev``, ``next``, ``last``, ``hand-select``, ``view-select``, ``board``,
    ``hands``, ``chart``, ``log``; ``#step=N`` in the URL opens it at step N (``#step=N&view=S``: as
    seat S sees it, other hands face down).
    """
    if title is None:
        if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
            title = f"All Fives replay: {Path(source).name}"
        else:
            title = "All Fives replay"
    data = replay_data(source)
    data["meta"]["title"] = title
    parts = {"TITLE": html.escape(title, quote=True), "DATA": _script_json(data)}
    parts.update((key, "\n".join(viewer_asset(name).rstrip("\n") for name in names))
                 for key, names in _CODE_FILES.items())
    # one pass: text put in for one placeholder (a title "x%%JS%%") is never scanned for another
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], viewer_asset("page.html"))


def write_replay_html(source: Source, path: Union[str, Path], title: Optional[str] = None) -> Path:
    """Write :func:`replay_html` of ``source`` to ``path`` (UTF-8) and return the path.

    The replay is verified first, so a bad replay raises :class:`ReplayError` and leaves no file behind.
    """
    page = replay_html(source, title)
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- screenshots
#: Flags for headless Chromium in a sandbox without network: without the background-networking ones it
#: keeps trying to reach Google's hosts and can hang; --no-sandbox because CI runs as root.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def find_chromium() -> Optional[str]:
    """The path of a Chromium-family browser on PATH, or None."""
    import shutil

    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def screenshot(html_path: Union[str, Path], png_path: Union[str, Path], step: int = 1,
               size: tuple[int, int] = (1280, 800)) -> Path:
    """A PNG of the viewer page ``html_path`` opened at ``step``, taken with headless Chromium (for docs
    and visual checks). Raises FileNotFoundError naming the package to install when there is no browser."""
    import subprocess
    import tempfile

    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("no chromium on PATH: install Debian's chromium package (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="allfives-chromium-") as profile:
        subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={Path(png_path).resolve()}",
             f"--window-size={size[0]},{size[1]}", f"{Path(html_path).resolve().as_uri()}#step={int(step)}"],
            check=True, capture_output=True, timeout=60,
        )
    return Path(png_path)
