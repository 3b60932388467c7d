"""Deal suites: the frozen deals of each track, shipped as files in ``suites/`` and checked when loaded.

A suite file holds, per duplicate set (deal), the game seed, the deal seed and the agents' seed entropy
that :func:`allfives_env.match.play_game` plays it with (:class:`~allfives_env.evaluation.scheduling.SetDeal`),
written once by :func:`write_suite` from a fixed seed and never again. Every load compares the file's
SHA-256 with the one frozen in :data:`SUITE_SHA256`, so a suite that was edited, cut short or swapped for
another track's is refused with an error naming the file, before any game. What the seeds *mean* is the
engine's: the tests replay a suite's first deals with a fixed pair of agents against golden results, so an
engine change that would change a suite's games fails them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from ..core.errors import short_repr
from ..core.rules import Rules
from ..evaluation.scheduling import SetDeal
from ..regular_file import read_regular_file
from .errors import BenchError
from .protocol import PROTOCOL_VERSION, TRACKS, Track

__all__ = ["SUITE_DIR", "SUITE_FORMAT", "SUITE_SHA256", "Suite", "check_track", "load_suite", "suite_path", "write_suite"]

#: Where the suite files are installed.
SUITE_DIR = Path(__file__).resolve().parent / "suites"
SUITE_FORMAT = "allfives-bench-suite"
#: The seed every protocol-1 suite was drawn from (set s of track t: ``SeedSequence(SUITE_SEED, spawn_key=(t, s))``).
SUITE_SEED = 20261204
#: The most bytes a suite file may have (the largest is about 60 kB).
_MAX_BYTES = 1 << 22

#: The SHA-256 of each track's suite file, frozen with protocol 1.
SUITE_SHA256: dict[str, str] = {
    "2p": "c96e75be3fd1467e395a42b000f7c3dcab43fa7a8640919e05fa38aae9ce78fe",
    "3p": "0c810eba9cb13efc8aee57cc21a680a0a4592c6911e35f61fe6515b8b634146d",
    "4p": "f68c005de29ec95f900039f29d64247fc79bc4b3ddcfaef530dcded97ef482ed",
}


@dataclass(frozen=True)
class Suite:
    """A loaded, checked deal suite: its track, file, hash and deals (in order)."""

    track: Track
    path: Path
    sha256: str
    deals: tuple[SetDeal, ...]


def check_track(track: object) -> Track:
    """The :class:`Track` named ``track`` ("2p", "3p" or "4p")."""
    if not isinstance(track, str) or track not in TRACKS:
        raise BenchError(f"track={short_repr(track)} is not a bench track; the tracks are {', '.join(TRACKS)}")
    return TRACKS[track]


def suite_path(track: str) -> Path:
    """The installed suite file of ``track``."""
    return SUITE_DIR / f"{check_track(track).suite_name}.json"


def _suite_document(track: Track) -> dict[str, object]:
    t = list(TRACKS).index(track.name)
    sets = [[int(x) for x in np.random.SeedSequence(SUITE_SEED, spawn_key=(t, s)).generate_state(3)]
            for s in range(track.sets)]
    return {"format": SUITE_FORMAT, "protocol": PROTOCOL_VERSION, "track": track.name,
            "rules": Rules.from_options(dict(track.rules)).to_dict(), "seed": SUITE_SEED,
            "columns": ["game_seed", "deal_seed", "agent_entropy"], "sets": sets}


def write_suite(track: str, path: Optional[Union[str, Path]] = None) -> Path:
    """Write ``track``'s suite file (to ``path``, default its installed place). Done once, when protocol 1
    was frozen; the result is the same bytes every time, and must match :data:`SUITE_SHA256`."""
    target = Path(path) if path is not None else suite_path(track)
    text = json.dumps(_suite_document(check_track(track)), separators=(",", ":")) + "\n"
    target.write_text(text, encoding="utf-8")
    return target


def load_suite(track: str, path: Optional[Union[str, Path]] = None) -> Suite:
    """The deal suite of ``track``, from its installed file or ``path``, refused unless its SHA-256 is the
    frozen one and its content is a suite of that track."""
    t = check_track(track)
    where = Path(path) if path is not None else suite_path(track)
    try:
        data = read_regular_file(where, _MAX_BYTES, BenchError, "a bench deal suite")
    except FileNotFoundError:
        raise BenchError(f"the deal suite {where} of track {track} is missing; reinstall the package") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != SUITE_SHA256[t.name]:
        raise BenchError(
            f"the deal suite {where} is not protocol {PROTOCOL_VERSION}'s {t.name} suite: its SHA-256 is {digest}, "
            f"the frozen suite's is {SUITE_SHA256[t.name]} (the file was changed, truncated or swapped); "
            "reinstall the package")
    doc = json.loads(data)  # the frozen bytes: this cannot fail, and they hold what _suite_document wrote
    deals = tuple(SetDeal(s, g, d, a) for s, (g, d, a) in enumerate(doc["sets"]))
    return Suite(t, where, digest, deals)
