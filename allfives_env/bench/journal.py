"""The journal of a bench run: what lets a stopped run resume where it stopped.

A bench run with a card file ``FILE`` appends every finished deal (duplicate set) to ``FILE.journal``, one
JSON line each, after a header line that says which run it belongs to (agent, policy file hash, track,
suite, quick or full). Running the same command again reads the journal, replays nothing that finished and
plays the rest; once the card is written the journal is deleted. A journal of another run is refused (the
message names the field that differs) rather than mixed in; a last line cut short by a crash is dropped,
and anything else that does not read back is refused with its line number.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from ..core.errors import short_repr
from ..evaluation.results import GameRecord
from ..regular_file import read_regular_file
from .errors import BenchError

__all__ = ["JOURNAL_FORMAT", "Journal", "journal_path"]

JOURNAL_FORMAT = "allfives-bench-journal"
#: The most bytes of a journal read back (a full 3p run writes about 15 MB).
_MAX_BYTES = 1 << 28

#: A finished deal as journalled: its records, and the benched agent's think time of each of its moves.
Finished = tuple[list[GameRecord], list[float]]


def journal_path(card_path: Path) -> Path:
    """The journal beside the card file ``card_path``."""
    return card_path.with_name(card_path.name + ".journal")


class Journal:
    """Finished deals per opponent, read from and appended to a journal file (or kept in memory only)."""

    def __init__(self, path: Optional[Path], header: Mapping[str, Any]) -> None:
        self.path = path
        self.header = dict(header, format=JOURNAL_FORMAT)
        self.finished: dict[tuple[str, int], Finished] = {}
        #: where and how each part of the run was played (a resumed run has several parts)
        self.parts: list[dict[str, Any]] = []
        self._fh: Any = None
        if path is None:
            return
        if path.exists() or path.is_symlink():
            self._read(path)
            self._fh = open(path, "a", encoding="utf-8")
        else:
            self._fh = open(path, "w", encoding="utf-8")
            self._write(self.header)

    def _read(self, path: Path) -> None:
        data = read_regular_file(path, _MAX_BYTES, BenchError, "a bench journal")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BenchError(f"{path} is not a bench journal (not UTF-8 text); delete it to start the run afresh") from None
        lines = text.split("\n")
        complete = lines[:-1]  # after the last newline: empty, or a line cut short by a crash (dropped)
        if not complete:
            raise BenchError(f"{path} is not a bench journal (no header line); delete it to start the run afresh")
        head = self._parse(path, 1, complete[0])
        if head.get("format") != JOURNAL_FORMAT:
            raise BenchError(f"{path} is not a bench journal (no \"format\": \"{JOURNAL_FORMAT}\"); "
                             "delete it or choose another --json file")
        for key, value in self.header.items():
            if head.get(key) != value:
                raise BenchError(
                    f"{path} is the journal of another bench run: its {key} is {short_repr(head.get(key))}, this "
                    f"run's is {short_repr(value)}; delete it to start this run afresh, or rerun the command that "
                    "wrote it to resume that one")
        for number, line in enumerate(complete[1:], start=2):
            entry = self._parse(path, number, line)
            if isinstance(entry.get("part"), dict):
                self.parts.append(entry["part"])
                continue
            try:
                deal = (str(entry["opponent"]), int(entry["set"]))
                records = [GameRecord.from_dict(r) for r in entry["records"]]
                moves = [float(t) for t in entry["moves"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise BenchError(f"{path}, line {number}: not a finished deal ({type(exc).__name__}: "
                                 f"{short_repr(str(exc))}); delete the journal to start the run afresh") from None
            self.finished[deal] = (records, moves)
        if text and not text.endswith("\n"):  # drop the cut line from the file too, before appending
            with open(path, "r+", encoding="utf-8") as fh:
                fh.truncate(len("\n".join(complete).encode("utf-8")) + 1)

    @staticmethod
    def _parse(path: Path, number: int, line: str) -> dict[str, Any]:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise BenchError(f"{path}, line {number}: not JSON ({type(exc).__name__}); delete the journal to start "
                             "the run afresh") from None
        if not isinstance(value, dict):
            raise BenchError(f"{path}, line {number}: not a journal entry (a JSON object); delete the journal to "
                             "start the run afresh")
        return value

    def _write(self, entry: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def add_part(self, part: Mapping[str, Any]) -> None:
        """Note that a part of the run starts here (its machine, processes and date)."""
        self.parts.append(dict(part))
        if self._fh is not None:
            self._write({"part": dict(part)})

    def add(self, opponent: str, set_index: int, records: list[GameRecord], moves: list[float]) -> None:
        """Note one finished deal (and write it through to the file)."""
        self.finished[(opponent, set_index)] = (records, moves)
        if self._fh is not None:
            self._write({"opponent": opponent, "set": set_index, "records": [r.to_dict() for r in records],
                         "moves": [round(t, 7) for t in moves]})

    def close(self, delete: bool) -> None:
        """Close the file; ``delete`` once the card is written."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if delete and self.path is not None:
            self.path.unlink(missing_ok=True)
