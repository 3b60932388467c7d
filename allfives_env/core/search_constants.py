"""The constants that make the two determinized searches one search: the Python reference
(:mod:`allfives_env.agents.search`) and the compiled one (:mod:`allfives_env.batch.search`) read them
from here, so a guess is dealt and a rollout plays alike in both engines.

In the core because both engines may import it (the batch engine never imports the agents).
"""

from __future__ import annotations

#: The greedy rollout ranks a move by points, then by the tile's pips: points times this (above any tile's
#: pips, at most 24 with double-twelve) plus pips is one integer key for both.
POINTS_OVER_PIPS = 64
#: Shuffles of the unseen tiles tried for a guess of the hidden hands before the void constraints (which
#: are inferences, and may be wrong) are dropped: ``sample_hidden`` and the compiled ``deal_hidden``.
HIDDEN_TRIES = 20
