""":class:`BatchGame`: ``n`` independent games of All Fives in arrays, advanced together by compiled
kernels.

The Python core (:class:`allfives_env.core.game.Game`) stays the readable reference; this is a second
implementation of the same rules for throughput: one call steps every game, with no Python per game.
Action ids, legal sets, scores and observations are the core's (``allfives_v0``'s), and every game can
be written out as a replay that the core re-simulates and verifies (:meth:`BatchGame.replay`).
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from ..core.errors import (
    BatchError, BatchIndexError, GameOverError, IllegalActionError, ReplayError, RulesError, SeedError, short_repr,
)
from ..core.actions import describe_action, describe_legal
from ..core.rules import Rules
from ..core.seeds import check_seed
from ..core.values import is_integer
from . import kernels
from .checks import MAX_GAMES, KernelBatch, flag, integer_values, kernel_buffer
from ..encoding import check_obs_version
from .observe import BatchObserver
from .record import replay_record
from .layout import HISTORY, BatchLayout, Tables, layout_for

_FIRST_LOG = 256  # decisions logged per game before the log first grows
_LOG_ITEM = np.dtype(np.int16).itemsize


def memory_needed(rules: Rules, n: int, record: bool = True) -> int:
    """Bytes a :class:`BatchGame` of ``n`` games under ``rules`` allocates when it is built: each game's
    record (520 bytes in the double-6 set, 656 in double-9, 840 in double-12) plus, with ``record=True``,
    its decision log (512 bytes to start; it doubles for long games, briefly holding old and new).
    Observations and legal masks are the caller's arrays, ``n`` rows each, on top of this."""
    return int(n) * _bytes_per_game(layout_for(rules), record)


def _bytes_per_game(layout: BatchLayout, record: bool) -> int:
    """One game's share of :func:`memory_needed`."""
    return layout.dtype.itemsize + (_FIRST_LOG * _LOG_ITEM if record else 0)


def available_memory() -> Optional[int]:
    """Bytes of memory the system can still give (Linux's ``MemAvailable``; elsewhere the physical
    memory), or None when neither can be read: then no batch is refused for its size."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


class BatchGame(KernelBatch):
    """``n`` games under one rules object, each dealt from its own stream of ``seed``.

    Game ``i`` is the same game whatever ``n`` is (its stream depends on ``seed`` and ``i`` only), so a
    batch can be split into chunks without changing any game. Finished games stay finished (``done``)
    until :meth:`reset_done` deals them a new episode, so their result and replay can be read first.

    Parameters: ``rules`` (default ``Rules()``), ``n`` games, ``seed`` (a non-negative integer),
    ``stop_after_hand`` (each episode is one hand, as ``episode='hand'`` in the env), ``record``
    (keep each game's decisions so that :meth:`replay` can rebuild it; on by default, off saves one
    write per decision), ``first_game`` (the index of ``S[0]``'s stream: chunk ``k`` of size ``n`` is
    ``first_game=k*n``), ``history`` (keep each seat's last turns of the hand, which observation version 2
    reads; off by default: the turns' "best on offer" costs a scan of the table per turn). ``layout`` is the
    rules' :class:`~.layout.BatchLayout` (tiles, tables, record type,
    action ids, rules vector), built once per rules object and shared with every batch of those rules.

    Memory: :func:`memory_needed` (about 1 KB a game with ``record``); a batch that needs more than the
    system has available is refused with a :class:`BatchError` before anything is allocated, rather than
    swapping or being killed half-built. Play more games in chunks with ``first_game`` instead.

    Every method checks its arguments before a compiled kernel sees them (:mod:`.checks`): a wrong
    shape, dtype, memory order or a read-only array is a :class:`BatchError` and changes no game. ``S``
    (the game records) is the kernels' own state: read it, never write it; the kernels trust it.
    """

    def __init__(self, rules: Optional[Rules] = None, n: int = 1, seed: int = 0, *, stop_after_hand: bool = False,
                 record: bool = True, first_game: int = 0, history: bool = False) -> None:
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise RulesError(f"rules must be a Rules object (Rules(...) or Rules.from_options({{...}})), got {short_repr(rules)}")
        if not is_integer(n) or not 1 <= n <= MAX_GAMES:
            raise BatchError(f"n={short_repr(n)} is not allowed: give the number of games, an integer 1..{MAX_GAMES}")
        stop_after_hand = flag(stop_after_hand, "stop_after_hand")
        record = flag(record, "record")
        history = flag(history, "history")
        self.seed = check_seed(seed)
        if self.seed is None:
            raise SeedError("seed=None is not allowed for a batch: give a non-negative integer, so every game can be replayed")
        self.first_game = check_seed(first_game, "first_game") or 0
        layout = layout_for(rules)
        needed = int(n) * _bytes_per_game(layout, record)
        available = available_memory()
        if available is not None and needed > available:
            raise BatchError(f"a batch of {int(n)} games needs about {needed / 2**30:.1f} GiB "
                             f"({needed // int(n)} bytes a game), more than the {available / 2**30:.1f} GiB "
                             f"of memory available: use fewer games, or play them in chunks (first_game=k*n)")
        self.rules = rules
        self.n = int(n)
        self.stop_after_hand = bool(stop_after_hand)
        self.record = bool(record)
        self.history = bool(history)
        self.layout = layout
        self.tiles = layout.tiles
        self._R = layout.rules_vector(self.stop_after_hand, self.history)
        self.num_actions = layout.num_actions
        self.draw_action = layout.draw_action
        self._no_log = np.zeros((0, layout.log_width), np.int32)
        self._log = np.zeros((self.n, _FIRST_LOG if self.record else 0), dtype=np.int16)
        self.S = np.zeros(self.n, dtype=layout.dtype)
        self._observers: dict[tuple[bool, int], BatchObserver] = {}
        kernels.start_games(self.S, self._R, np.uint64(self.seed), np.uint64(self.first_game), *self._kit())

    def _kit(self) -> tuple:
        """The (empty) replay log every kernel takes."""
        return (self._no_log,)

    def keep_history(self) -> None:
        """Keep each seat's turn history from now on (as ``history=True`` would have): exact from each game's
        next hand, which starts it cleared; the turns of a hand in progress before this call are missing."""
        self.history = True
        self._R[HISTORY] = 1

    # ------------------------------------------------------------------ state
    @property
    def rules_vector(self) -> np.ndarray:
        """The rules as the kernels read them (this batch's copy of :attr:`.layout.BatchLayout.vector`);
        read-only by convention."""
        return self._R

    @property
    def tables(self) -> Tables:
        """The tile tables the kernels read (:attr:`.layout.BatchLayout.tables`)."""
        return self.layout.tables

    @property
    def current(self) -> np.ndarray:
        """(n,) the seat to act in each game, -1 where the game is over."""
        return self.S["current"].copy()

    @property
    def done(self) -> np.ndarray:
        """(n,) True where the game is over."""
        return self.S["over"] == 1

    @property
    def scores(self) -> np.ndarray:
        """(n, sides) each side's score."""
        return self.S["scores"][:, :self.rules.num_sides].copy()

    @property
    def winner(self) -> np.ndarray:
        """(n,) the winning side of each finished game, -1 while it runs or for a draw."""
        return self.S["winner"].copy()

    @property
    def truncated(self) -> np.ndarray:
        """(n,) True where a game ended at the ``max_hands`` cap."""
        return self.S["truncated"] == 1

    @property
    def hand_number(self) -> np.ndarray:
        """(n,) the hand each game is in (1 first)."""
        return self.S["hand_number"].copy()

    def legal_mask(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """bool (n, num_actions): the legal actions of each game's seat to act (a finished game's row
        is all False). ``out`` is reused when given; by default a new array."""
        if out is None:
            target = np.zeros((self.n, self.num_actions), dtype=np.bool_)
        else:
            target = kernel_buffer(out, "out", (self.n, self.num_actions), np.bool_, owner=self.S)
        kernels.fill_legal_mask(self.S, target)
        return target

    def observe(self, seats: Optional[np.ndarray] = None, action_features: bool = False,
                out: Optional[np.ndarray] = None, obs_version: int = 1) -> np.ndarray:
        """float32 (n, obs_size): each game's observation from ``seats[i]`` (None or -1: its seat to
        act), identical to ``ObservationEncoder(rules, action_features, obs_version).encode`` (the env's
        observation; version 2 needs a batch built with ``history=True``). The observer of each
        ``(action_features, obs_version)`` setting is built once and kept."""
        action_features = flag(action_features, "action_features")
        key = (action_features, check_obs_version(obs_version))
        observer = self._observers.get(key)
        if observer is None:
            observer = self._observers[key] = BatchObserver(self.rules, action_features, key[1])
        return observer.observe(self, seats, out)

    def legal_actions(self, i: int) -> list[int]:
        """Legal action ids of game ``i``, ascending."""
        g = self.S[self._index(i)]
        return sorted(int(a) for a in g["legal"][:g["n_legal"]])

    # ------------------------------------------------------------------ stepping
    def step(self, actions: Any) -> None:
        """Apply one action per game: -1 leaves a game as it is (a finished game ignores its action), so
        a caller can move some games and not others. Forced draws, passes and hand ends run inside, as
        in the core. Nothing is applied when any live game's action is
        illegal: the :class:`IllegalActionError` names the first such game and its legal actions."""
        acts = self._checked_actions(actions)
        bad = kernels.first_illegal(self.S, acts)
        if bad >= 0:
            raise IllegalActionError(self._illegal_message(bad, acts[bad]))
        self._step_checked(acts)

    def step_legal(self, actions: Any) -> None:
        """:meth:`step` for actions the caller already knows to be legal: the library's own batch agents,
        which choose from each game's legal set, and the vector env's learner actions, checked against the
        masks with the env's own message. The legality scan is skipped; the shape, the dtype and the range
        (-1, or an action id 0..num_actions-1) are still checked, because the compiled kernels index arrays
        with them and have no bounds checks. An in-range action that is not legal is the caller's bug: use
        :meth:`step` for anything a user chose."""
        acts = self._checked_actions(actions)
        if acts.size and (acts.min() < -1 or acts.max() >= self.num_actions):
            bad = int(np.flatnonzero((acts < -1) | (acts >= self.num_actions))[0])
            raise IllegalActionError(self._illegal_message(bad, int(acts[bad])))
        self._step_checked(acts)

    def _step_checked(self, acts: np.ndarray) -> None:
        """Step with actions already known to be legal and in range."""
        most = kernels.step_games(self.S, self._R, acts, *self._kit(), self._log)
        if self.record and most >= self._log.shape[1]:
            self._grow_log(most)

    def _grow_log(self, most: int) -> None:
        """Double the per-game decision log (a game never loses a logged decision: the kernel stops
        logging at the capacity, and this runs before any game's next decision)."""
        if most > self._log.shape[1]:
            raise RuntimeError("decision log overflow")  # pragma: no cover - the log grows before it fills
        grown = np.zeros((self.n, 2 * self._log.shape[1]), dtype=np.int16)
        grown[:, :self._log.shape[1]] = self._log
        self._log = grown

    def _checked_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as an int64 (n,) array (one action id or -1 per game), or a clear error. Values
        out of range are left to :func:`.kernels.first_illegal`, which names the game and its legal set."""
        arr = integer_values(actions, "actions (one action id, or -1 for no move, per game)", (self.n,),
                             error=IllegalActionError)
        if self.S["over"].all():
            raise GameOverError("every game of the batch is over: call reset_done() to deal new episodes")
        return arr

    def _illegal_message(self, i: int, action: int) -> str:
        return (f"game {i}: {describe_action(action, self.tiles, self.num_actions)} is not legal for seat "
                f"{self.S[i]['current']}; {describe_legal(self.legal_actions(i), self.tiles)}")

    def reset_done(self) -> np.ndarray:
        """Deal a new episode to every finished game, from its own stream; returns the bool (n,) mask of
        the games that were restarted. Their decision logs start again (the old replay is gone)."""
        restarted = self.S["over"] == 1
        if restarted.any():
            kernels.restart_finished(self.S, self._R, *self._kit())
        return restarted

    def random_actions(self, states: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per game (-1 where finished), drawn from ``states`` (an
        (n,) uint64 array of the caller's streams, advanced in place: writable and C-contiguous)."""
        states = kernel_buffer(states, "states", (self.n,), np.uint64, owner=self.S)
        out = np.empty(self.n, dtype=np.int64)
        kernels.random_actions(self.S, states, out)
        return out

    # ------------------------------------------------------------------ helpers
    def _index(self, i: Any) -> int:
        if not is_integer(i) or not -self.n <= i < self.n:
            raise BatchIndexError(f"game index {short_repr(i)} is out of range for a batch of {self.n} games")
        return int(i) % self.n

    def decisions(self, i: int) -> np.ndarray:
        """The decisions (action ids) game ``i`` has taken in its current episode, in order."""
        if not self.record:
            raise ReplayError("this batch was built with record=False: it keeps no decisions to replay")
        i = self._index(i)
        return self._log[i, :self.S[i]["decisions"]].astype(np.int64)

    def replay(self, i: int) -> dict[str, Any]:
        """The replay record of game ``i``'s current episode (finished or not), in the format of
        :func:`allfives_env.core.replay.game_record`: ``load_replay`` re-simulates it with the core and
        verifies every event. The batch engine itself re-runs the game from its episode's first state
        with the logged decisions, writing every event as it goes. Needs ``record=True``."""
        decisions = self.decisions(i)
        game = self.S[self._index(i):self._index(i) + 1].copy()
        rows = 8 * len(decisions) + 256
        while True:
            elog = np.zeros((rows, self.layout.log_width), np.int32)
            elog[0, 0] = 1
            kernels.replay_game(game, self._R, decisions, elog)
            if not elog[0, 1]:
                break
            rows *= 2  # pragma: no cover - sized for the longest game with room to spare
        return replay_record(self.rules, self.tiles, game[0], self.stop_after_hand, elog[1:elog[0, 0]])
