"""How fast one client may start web games: a token bucket per client address.

Without it one client could start games as fast as the server builds them and fill the store, so every
other player's next game would be refused. Each address may start ``burst`` games at once, then one more
every ``60 / per_minute`` seconds; a refusal is a 429 whose ``Retry-After`` says when the next one may
start. The clock is injected (the store's), so tests step time instead of sleeping.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from ..core.errors import short_repr
from .schemas import RequestError, SettingsError

__all__ = ["DEFAULT_BURST", "DEFAULT_PER_MINUTE", "RateLimit"]

#: New games one client address may start at once, and then per minute: a person starts a game every
#: few minutes; a script that starts more waits (``allfives serve --new-game-burst/--new-games-per-minute``).
DEFAULT_BURST = 10
DEFAULT_PER_MINUTE = 2.0
#: Addresses remembered before those with a full bucket (nothing to remember) are forgotten.
MAX_CLIENTS = 10_000


class RateLimit:
    """A token bucket per key: ``burst`` tokens, refilled at ``per_minute`` a minute."""

    def __init__(self, burst: int = DEFAULT_BURST, per_minute: float = DEFAULT_PER_MINUTE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise SettingsError(f"new-game burst={short_repr(burst)} is not allowed: give a positive integer")
        if isinstance(per_minute, bool) or not (isinstance(per_minute, (int, float)) and math.isfinite(per_minute)
                                                and per_minute > 0):
            raise SettingsError(f"new games per minute={short_repr(per_minute)} is not allowed: give a positive "
                                "number")
        self.burst, self.per_second, self.clock = burst, per_minute / 60.0, clock
        self.buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when counted)

    def level(self, key: str) -> float:
        """The tokens ``key`` has now."""
        tokens, when = self.buckets.get(key, (float(self.burst), 0.0))
        return min(float(self.burst), tokens + (self.clock() - when) * self.per_second)

    def take(self, key: str) -> None:
        """Spend one of ``key``'s tokens, or refuse (429, with the seconds until the next one)."""
        level = self.level(key)
        if level < 1.0:
            wait = max(1, math.ceil((1.0 - level) / self.per_second))
            raise RequestError(429, f"too many new games from this address: {self.burst} at once, then "
                                    f"{self.per_second * 60:g} a minute; try again in {wait} s", retry_after=wait)
        self.buckets[key] = (level - 1.0, self.clock())
        if len(self.buckets) > MAX_CLIENTS:
            self._forget_full()

    def give_back(self, key: str) -> None:
        """Return a token taken for a request that was then refused: a refusal costs the client nothing."""
        self.buckets[key] = (min(float(self.burst), self.level(key) + 1.0), self.clock())

    def _forget_full(self) -> None:
        """Drop the addresses whose bucket has refilled (a fresh address starts full anyway)."""
        for key in [k for k in self.buckets if self.level(k) >= self.burst]:
            del self.buckets[key]
