"""The layout on the table: the line, the spinner and its four arms, legal placements and the count.

Model (docs/rules.md §4-5). Before any double is played the layout is a straight line of non-doubles with
two ends, W and E. The first double to reach the table becomes the spinner; from then on the layout is
four arms W, E, N, S growing outward from it. A non-lead spinner takes the whole old line as one arm
(played on the W end, the line becomes its E arm, and the other way round), so the labels keep their
meaning: "E" is always the far east end of the layout.

Only four numbers per end matter for play and scoring (open value, whether the last tile is a double,
whether the arm has tiles), so they live in flat lists that the hot path reads directly; the tile lists of
each arm are kept only for rendering and the observation.

:meth:`Board.place` also keeps three answers that the game and the observation ask for after every play
as plain attributes, so that a reader pays an attribute load instead of a call: :attr:`Board.total` (what
:meth:`Board.count` gives after the last placement), :attr:`Board.counting_slots` and
:attr:`Board.spinner_in_count` (the ends that count and whether the spinner's own pips do; they change
only when an arm gets its first tile, and :meth:`Board._arms_changed` works them out then).
"""

from __future__ import annotations

from typing import Optional

from .tiles import TileSet

W, E, N, S = 0, 1, 2, 3
LINE_SLOTS = (W, E)
ALL_SLOTS = (W, E, N, S)
#: bit mask of the arms holding tiles (bit s = slot s) -> those slots, for :meth:`Board.counted_slots`
_SLOTS_OF_ARMS = tuple(tuple(s for s in ALL_SLOTS if (mask >> s) & 1) for mask in range(16))


class Board:
    """One hand's layout. Mutable, cheap to copy (:meth:`copy`), no knowledge of players or scores."""

    __slots__ = (
        "tiles", "pip_mask", "low", "high", "sides_first", "sniff", "spinner", "spinner_tile", "ends", "end_double", "arm_len",
        "arms", "lead", "size", "open_slots", "total", "counting_slots", "spinner_in_count",
    )

    def __init__(self, tiles: TileSet, spinner_sides_first: bool = True, spinner_count: str = "allfives") -> None:
        self.tiles = tiles
        self.pip_mask = tiles.pip_mask
        self.low = tiles.low
        self.high = tiles.high
        self.sides_first = spinner_sides_first
        self.sniff = spinner_count == "sniff"
        self.spinner = -1  # pip value of the spinner, -1 before any double is played
        self.spinner_tile = -1
        self.ends = [0, 0, 0, 0]  # open value of each end
        self.end_double = [False, False, False, False]  # last tile of that arm is a double
        self.arm_len = [0, 0, 0, 0]
        # per arm, (tile, inner pip, outer pip) from the spinner (or the lead) outward
        self.arms: list[list[tuple[int, int, int]]] = [[], [], [], []]
        self.lead: Optional[tuple[int, int, int]] = None  # (tile, W pip, E pip) of a non-double lead
        self.size = 0
        self.open_slots: tuple[int, ...] = ()  # empty board: the lead (slot 0) is handled by the game
        # kept by place(): count() after the last placement, the ends that count, the spinner's 2v counted
        self.total = 0
        self.counting_slots: tuple[int, ...] = ()
        self.spinner_in_count = False

    def copy(self) -> "Board":
        """An independent copy (search agents play forward on copies)."""
        other = Board.__new__(Board)
        other.tiles = self.tiles
        other.pip_mask = self.pip_mask
        other.low = self.low
        other.high = self.high
        other.sides_first = self.sides_first
        other.sniff = self.sniff
        other.spinner = self.spinner
        other.spinner_tile = self.spinner_tile
        other.ends = self.ends[:]
        other.end_double = self.end_double[:]
        other.arm_len = self.arm_len[:]
        other.arms = [arm[:] for arm in self.arms]
        other.lead = self.lead
        other.size = self.size
        other.open_slots = self.open_slots
        other.total = self.total
        other.counting_slots = self.counting_slots
        other.spinner_in_count = self.spinner_in_count
        return other

    # ------------------------------------------------------------------ queries
    def is_empty(self) -> bool:
        """True before the lead."""
        return self.size == 0

    def placements(self, hand_mask: int) -> list[int]:
        """Legal action ids (``tile * 4 + slot``) for the tiles of ``hand_mask``, end by end (W, E, N,
        S) and by tile within an end: a fixed order, not sorted, since sorting costs more than the rest.

        On an empty board every tile may lead, on slot 0.
        """
        out: list[int] = []
        if self.size == 0:
            m = hand_mask
            while m:
                low = m & -m
                out.append((low.bit_length() - 1) << 2)
                m ^= low
            return out
        pip_mask = self.pip_mask
        ends = self.ends
        for slot in self.open_slots:
            m = hand_mask & pip_mask[ends[slot]]
            while m:
                low = m & -m
                out.append(((low.bit_length() - 1) << 2) | slot)
                m ^= low
        return out

    def can_place(self, tile: int, slot: int) -> bool:
        """Whether ``tile`` may go on ``slot`` now."""
        if self.size == 0:
            return slot == 0
        if slot not in self.open_slots:
            return False
        v = self.ends[slot]
        return self.tiles.low[tile] == v or self.tiles.high[tile] == v

    def open_values_mask(self) -> int:
        """Bit mask of the pip values that can be matched now (bit v = value v)."""
        mask = 0
        for slot in self.open_slots:
            mask |= 1 << self.ends[slot]
        return mask

    def count(self) -> int:
        """The count of the ends (docs/rules.md §5.1, and §5.3 for ``sniff``)."""
        ends = self.ends
        if self.spinner < 0:
            return ends[W] + ends[E]  # a line holds no doubles, a lone lead counts both pips
        arm_len = self.arm_len
        dbl = self.end_double
        total = 0
        # unrolled over W, E, N, S: this runs after every play
        if arm_len[0]:
            total += ends[0] << 1 if dbl[0] else ends[0]
        if arm_len[1]:
            total += ends[1] << 1 if dbl[1] else ends[1]
        if arm_len[2]:
            total += ends[2] << 1 if dbl[2] else ends[2]
        if arm_len[3]:
            total += ends[3] << 1 if dbl[3] else ends[3]
        if not (arm_len[W] and arm_len[E]):
            total += self.spinner << 1
        elif self.sniff:
            total += self.spinner * ((arm_len[N] == 0) + (arm_len[S] == 0))
        return total

    def count_after(self, tile: int, slot: int) -> int:
        """The count the ends would have after placing ``tile`` on ``slot``, without placing it.

        Agents score candidate moves with this (greedy, search rollouts), so it avoids a board copy:
        the end is set to its new value, :meth:`count` is asked, and the end is put back. Only a first
        double, which turns the line into a spinner, needs its own formula. The caller has checked legality.
        """
        lo = self.low[tile]
        hi = self.high[tile]
        if self.size == 0:
            return lo << 1 if lo == hi else lo + hi  # a lone spinner counts 2v
        ends = self.ends
        if lo == hi and self.spinner < 0:
            # the double becomes the spinner; the old line is its only filled side
            return (lo << 1) + (ends[E] if slot == W else ends[W])
        arm_len = self.arm_len
        dbl = self.end_double
        x = ends[slot]
        was_double = dbl[slot]
        ends[slot] = hi if lo == x else lo
        dbl[slot] = lo == hi
        arm_len[slot] += 1
        count = self.count()
        ends[slot] = x
        dbl[slot] = was_double
        arm_len[slot] -= 1
        return count

    def counted(self, slot: int) -> bool:
        """Whether the end ``slot`` contributes to the count (the spinner's own 2v is not an end)."""
        if self.size == 0:
            return False
        if self.spinner < 0:
            return slot in LINE_SLOTS
        if self.arm_len[slot]:
            return True
        return self.sniff and slot in (N, S) and bool(self.arm_len[W] and self.arm_len[E])

    def counted_slots(self) -> tuple[int, ...]:
        """The slots whose ends contribute to the count, as :meth:`counted` says slot by slot (worked out
        by :meth:`_arms_changed` when the layout's arms change; the same as :attr:`counting_slots`)."""
        return self.counting_slots

    def spinner_counts(self) -> bool:
        """Whether the spinner's own pips (2v) are in the count now (the same as :attr:`spinner_in_count`)."""
        return self.spinner_in_count

    # ------------------------------------------------------------------ mutation
    def place(self, tile: int, slot: int) -> None:
        """Put ``tile`` on ``slot``. The caller has checked legality (:meth:`can_place`).

        Afterwards :attr:`total` holds what :meth:`count` gives for the new layout, and
        :attr:`counting_slots` and :attr:`spinner_in_count` are up to date (:meth:`_arms_changed`).
        """
        lo = self.low[tile]
        hi = self.high[tile]
        if self.size == 0:
            if lo == hi:
                self._make_spinner(tile, lo)
                self.ends = [lo, lo, lo, lo]
                self.size = 1
                self._arms_changed()
            else:
                self.lead = (tile, hi, lo)  # higher pip on W (docs/rules.md §4)
                self.ends = [hi, lo, 0, 0]
                self.open_slots = LINE_SLOTS
                self.size = 1
                self.counting_slots = LINE_SLOTS  # what _arms_changed gives for a line
            self.total = self.count()
            return
        x = self.ends[slot]
        self.size += 1
        if lo == hi and self.spinner < 0:
            # the first double: it becomes the spinner at this line end, the old line is one arm
            line = self._line()  # (tile, west pip, east pip) west to east
            self._make_spinner(tile, lo)
            if slot == W:
                self.arms[E] = [(t, a, b) for t, a, b in line]
                self.arm_len[E] = len(line)
                self.ends[W] = lo
                self.arm_len[W] = 0
                self.arms[W] = []
                self.end_double[W] = False
            else:
                self.arms[W] = [(t, b, a) for t, a, b in reversed(line)]
                self.arm_len[W] = len(line)
                self.ends[E] = lo
                self.arm_len[E] = 0
                self.arms[E] = []
                self.end_double[E] = False
            self.ends[N] = self.ends[S] = lo
            self.lead = None
            self._update_open_slots()
            self._arms_changed()
            self.total = self.count()
            return
        outer = hi if lo == x else lo
        self.ends[slot] = outer
        self.end_double[slot] = lo == hi
        self.arms[slot].append((tile, x, outer))
        self.arm_len[slot] += 1
        if self.arm_len[slot] == 1 and self.spinner >= 0:
            self._arms_changed()  # an arm's first tile: which ends count may change (on a line they do not)
        # compare by value, never identity: a pickled or deep-copied board holds an equal, new tuple
        if slot < N and self.spinner >= 0 and self.sides_first and self.open_slots == LINE_SLOTS:
            self._update_open_slots()
        self.total = self.count()

    def _arms_changed(self) -> None:
        """Work out :attr:`counting_slots` (the ends that add to the count, as :meth:`counted` says slot by
        slot) and :attr:`spinner_in_count` (the spinner's own 2v is in the count: fewer than two sides
        filled). Both depend only on the spinner and on which arms hold tiles, so :meth:`place` calls this
        for the lead, the spinner and an arm's first tile, and nothing works them out per play."""
        if self.spinner < 0:
            self.counting_slots = LINE_SLOTS  # a line (the board is not empty here)
            self.spinner_in_count = False
            return
        arm_len = self.arm_len
        sides_filled = bool(arm_len[W] and arm_len[E])
        self.spinner_in_count = not sides_filled
        if self.sniff and sides_filled:
            self.counting_slots = ALL_SLOTS  # N and S count with or without tiles
        else:
            mask = (arm_len[W] > 0) | (arm_len[E] > 0) << 1 | (arm_len[N] > 0) << 2 | (arm_len[S] > 0) << 3
            self.counting_slots = _SLOTS_OF_ARMS[mask]

    def _make_spinner(self, tile: int, value: int) -> None:
        self.spinner = value
        self.spinner_tile = tile
        self._update_open_slots()

    def _update_open_slots(self) -> None:
        if not self.sides_first or (self.arm_len[W] and self.arm_len[E]):
            self.open_slots = ALL_SLOTS
        else:
            self.open_slots = LINE_SLOTS

    def _line(self) -> list[tuple[int, int, int]]:
        """The line before a spinner exists, west to east, as (tile, west pip, east pip)."""
        line = [(t, outer, inner) for t, inner, outer in reversed(self.arms[W])]
        if self.lead is not None:
            line.append(self.lead)
        line.extend(self.arms[E])
        return line

    def tiles_on_board(self) -> list[int]:
        """Every tile on the table."""
        out = [t for arm in self.arms for t, _, _ in arm]
        if self.spinner_tile >= 0:
            out.append(self.spinner_tile)
        if self.lead is not None:
            out.append(self.lead[0])
        return out
