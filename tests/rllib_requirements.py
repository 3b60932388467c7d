"""What the RLlib tests need installed; each of their modules skips, with the missing name, without it."""

from __future__ import annotations

import pytest


def require_rllib() -> None:
    """Skip the calling test module unless Ray RLlib, torch, PyYAML and stable-baselines3 (whose torch pieces the
    RLlib module reuses) are installed: the [rllib] extra."""
    for module in ("ray.rllib", "torch", "yaml", "stable_baselines3", "sb3_contrib"):
        pytest.importorskip(module, reason=f"{module} is missing: pip install -e '.[rllib]'")
