"""``allfives_v0``: All Fives dominoes as a PettingZoo AEC environment.

==================== ==============================================================================
Import               ``from allfives_env import allfives_v0``
Actions              Discrete(4 x tiles [+1 draw]): ``action = tile_id * 4 + slot`` (W=0 E=1 N=2 S=3)
Parallel API         No (turn-based)
Agents               ``player_0`` ... ``player_{n-1}`` (2, 3 or 4; partners 0+2 and 1+3)
Observation          Dict: ``observation`` Box(float32) (slices in :mod:`allfives_env.encoding`),
                     ``action_mask`` Box(0, 1, int8)
State                Box(float32): every hand, the boneyard, the public board (:meth:`raw_env.state`)
Rewards              ``reward="win"`` (default): +1 / -1 at game end, partners share, 0 for a draw.
                     ``reward="points"``: zero-sum score change since the agent last acted, / target
Episodes             ``episode="game"`` (to the target, default) or ``"hand"`` (one hand)
Render modes         ``"ansi"`` (returns the text), ``"human"`` (prints it), ``"rgb_array"`` (an
                     HxWx3 uint8 image of the seat to act's view)
==================== ==============================================================================

Every rules option of :class:`allfives_env.core.Rules` is a keyword argument, e.g.
``allfives_v0.env(num_players=4, hand_end="winner_takes")``.

Forced draws and passes happen inside the engine; an agent is asked to act only when it has a legal
placement (or may draw, under ``may_draw_when_able``), so the same agent may act twice in a row after
others pass. ``infos[agent]`` holds ``events`` (what happened since the agent last acted, other seats'
drawn tiles hidden), ``scores`` and ``hand``.

``raw_env`` raises :class:`IllegalActionError` (a ``ValueError``) on an illegal action, listing the legal
ones by name (``6-4@E``). ``env()`` applies PettingZoo's classic wrappers instead: an illegal action ends
the game with -1 for the offender. Those wrappers cost a large share of a step (the README's speed table
has the figures): training code should drive ``raw_env`` or the core.

Version history: v0 (initial release).
"""

from __future__ import annotations

from .env import env, raw_env

__all__ = ["env", "raw_env"]
