"""The policies that ship inside the package (``allfives_env/policies/``): their names and files."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import short_repr as _r
from .errors import PolicyError

#: Where the shipped policy files are installed.
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "policies"

#: Policies shipped inside the package: registry name -> (file in :data:`SHIPPED_DIR`, description).
SHIPPED_POLICIES: dict[str, tuple[str, str]] = {
    "ppo-2p": ("ppo_2p.npz", "the shipped 2-player policy (MaskablePPO, configs/ppo_2p.yaml; numpy only)"),
    "ppo-3p": ("ppo_3p.npz", "the shipped 3-player cut-throat policy (configs/ppo_3p.yaml; numpy only)"),
    "ppo-4p": ("ppo_4p.npz", "the shipped 4-player partnership policy (configs/ppo_4p.yaml; numpy only)"),
}


def shipped_policy_path(name: str) -> Path:
    """The file of a shipped policy (see :data:`SHIPPED_POLICIES`), e.g. ``shipped_policy_path("ppo-2p")``."""
    if not isinstance(name, str) or name not in SHIPPED_POLICIES:
        raise PolicyError(f"no shipped policy {_r(name)}; shipped: {sorted(SHIPPED_POLICIES)}")
    path = SHIPPED_DIR / SHIPPED_POLICIES[name][0]
    if not path.is_file():
        raise PolicyError(f"the shipped policy {name!r} is missing from the installation ({path}); reinstall the "
                          "package (pip install -e .) or rebuild it with the config named in its README")
    return path
