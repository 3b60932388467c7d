"""Tiles, tile ids and the double-six / double-nine / double-twelve sets.

A tile ``a-b`` with ``a <= b`` has the id of its position in lexicographic order of ``(a, b)``:
``(0,0)=0, (0,1)=1, ..., (0,6)=6, (1,1)=7, ..., (6,6)=27`` for double-six, and the same rule for the
bigger sets. Action ids and replays are built on these ids, so they never change.

Hands are kept as Python ``int`` bit masks (bit ``i`` set = tile ``i`` held). Finding every tile of a
hand that shows pip ``v`` is then one ``&`` with :attr:`TileSet.pip_mask`, which is what makes legal
move generation cheap enough for search agents.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence, Union

import numpy as np

from .errors import DealError, short_repr as _short
from .values import is_integer

SUPPORTED_MAX_PIPS = (3, 6, 9, 12)

TileLike = Union[int, str, Sequence[int]]


@dataclass(frozen=True)
class TileSet:
    """Every tile of one set, with lookup tables indexed by tile id.

    Built once per ``max_pip`` (see :func:`tile_set`) and shared, so the tables cost nothing per game.
    """

    max_pip: int
    pairs: tuple[tuple[int, int], ...]
    low: tuple[int, ...]
    high: tuple[int, ...]
    pips: tuple[int, ...]
    is_double: tuple[bool, ...]
    pip_bits: tuple[int, ...]
    bit: tuple[int, ...]
    pip_mask: tuple[int, ...]
    double_id: tuple[int, ...]
    id_table: tuple[tuple[int, ...], ...]

    def __reduce__(self) -> tuple:
        """Copies (pickle, deepcopy) come back as the shared set of their ``max_pip``: the tables are
        never duplicated, and a copied game shares them with the original like a new one would."""
        return tile_set, (self.max_pip,)

    @property
    def size(self) -> int:
        """Number of tiles in the set (28, 55 or 91)."""
        return len(self.pairs)

    @property
    def num_values(self) -> int:
        """Number of pip values, ``max_pip + 1``."""
        return self.max_pip + 1

    @property
    def full_mask(self) -> int:
        """Bit mask with every tile of the set."""
        return (1 << len(self.pairs)) - 1

    def tile_id(self, a: int, b: int) -> int:
        """The id of tile ``a-b`` (order of the pips does not matter)."""
        if not (0 <= a <= self.max_pip and 0 <= b <= self.max_pip):
            raise DealError(
                f"tile {_short(a)}-{_short(b)} is not in the double-{self.max_pip} set: pips must be 0..{self.max_pip}"
            )
        return self.id_table[a][b]

    def name(self, tile: int) -> str:
        """Human name of a tile, higher pip first (``"6-4"``)."""
        return f"{self.high[tile]}-{self.low[tile]}"

    def parse(self, tile: TileLike) -> int:
        """Turn ``[a, b]``, ``(a, b)``, ``"a-b"`` or a tile id into a tile id, with a clear error."""
        if isinstance(tile, (bool, np.bool_)):
            raise DealError(f"not a tile: {tile!r} (give [a, b], 'a-b' or a tile id)")
        if isinstance(tile, numbers.Integral):
            tid = int(tile)
            if not 0 <= tid < self.size:
                raise DealError(f"tile id {_short(tid)} is out of range: the double-{self.max_pip} set has ids 0..{self.size - 1}")
            return tid
        if isinstance(tile, str):
            parts = tile.replace("|", "-").split("-")
            if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
                raise DealError(f"cannot read tile {_short(tile)}: write it as 'a-b', e.g. '6-4'")
            return self.tile_id(int(parts[0]), int(parts[1]))
        # a pair must be a list/tuple/array of exactly two integers: floats would be truncated (6.9 -> 6)
        # and a dict would give its keys, both a silent change of meaning
        if isinstance(tile, (list, tuple, np.ndarray)) and len(tile) == 2 and all(is_integer(p) for p in tile):
            return self.tile_id(int(tile[0]), int(tile[1]))
        raise DealError(f"cannot read tile {_short(tile)}: give [a, b] (two integers), 'a-b' or a tile id")

    def mask_of(self, tiles: Iterable[int]) -> int:
        """Bit mask of an iterable of distinct tile ids."""
        return sum(map(self.bit.__getitem__, tiles))  # bits of distinct tiles never overlap: sum == or

    def tiles_of(self, mask: int) -> list[int]:
        """Tile ids of a bit mask, ascending."""
        out = []
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return out

    def pips_of(self, mask: int) -> int:
        """Total pips of the tiles in a bit mask."""
        total = 0
        pips = self.pips
        while mask:
            low = mask & -mask
            total += pips[low.bit_length() - 1]
            mask ^= low
        return total


@lru_cache(maxsize=None)
def tile_set(max_pip: int = 6) -> TileSet:
    """The shared :class:`TileSet` for ``max_pip`` 3, 6, 9 or 12."""
    if max_pip not in SUPPORTED_MAX_PIPS:
        raise DealError(f"max_pip must be one of {SUPPORTED_MAX_PIPS}, got {max_pip!r}")
    pairs = tuple((a, b) for a in range(max_pip + 1) for b in range(a, max_pip + 1))
    table = [[0] * (max_pip + 1) for _ in range(max_pip + 1)]
    for i, (a, b) in enumerate(pairs):
        table[a][b] = table[b][a] = i
    pip_mask = [0] * (max_pip + 1)
    for i, (a, b) in enumerate(pairs):
        pip_mask[a] |= 1 << i
        pip_mask[b] |= 1 << i
    return TileSet(
        max_pip=max_pip,
        pairs=pairs,
        low=tuple(a for a, _ in pairs),
        high=tuple(b for _, b in pairs),
        pips=tuple(a + b for a, b in pairs),
        is_double=tuple(a == b for a, b in pairs),
        pip_bits=tuple((1 << a) | (1 << b) for a, b in pairs),
        bit=tuple(1 << i for i in range(len(pairs))),
        pip_mask=tuple(pip_mask),
        double_id=tuple(table[v][v] for v in range(max_pip + 1)),
        id_table=tuple(tuple(row) for row in table),
    )
