"""Trained policies as small, safe files, played with numpy alone.

* :mod:`.file` -- the ``.npz`` file: :func:`load_policy` (the whole file checked at load, nothing
  unpickled), :func:`read_policy_header`, :func:`write_policy_file`;
* :mod:`.header` -- the JSON header's fields and limits; :mod:`.activations` -- the activations it may name;
* :mod:`.network` -- :class:`NumpyPolicy`, the actor's forward pass and the rules it plays;
* :mod:`.shipped` -- the policies installed with the package (``ppo-2p``, ``ppo-3p``, ``ppo-4p``).

The agents that play policy files (``ppo``, ``ppo-2p``, ``ppo-3p``, ``ppo-4p``) are in :mod:`allfives_env.agents.policy`;
the torch exporters that write them from a trained model, in ``allfives_training/export.py``.
"""

from __future__ import annotations

from .activations import ACTIVATIONS
from .errors import PolicyError
from .file import MAX_FILE_BYTES, NPZ_READ_ERRORS, load_policy, read_policy_header, write_policy_file
from .header import MAX_HEADER_BYTES, MAX_HEADER_DEPTH, MAX_LAYERS, MAX_PARAMETERS, POLICY_FORMAT, POLICY_VERSION
from .network import OBSERVATION_RULES, NumpyPolicy
from .shipped import SHIPPED_POLICIES, shipped_policy_path

__all__ = [
    "ACTIVATIONS", "MAX_FILE_BYTES", "MAX_HEADER_BYTES", "MAX_HEADER_DEPTH", "MAX_LAYERS", "MAX_PARAMETERS",
    "NPZ_READ_ERRORS", "NumpyPolicy", "OBSERVATION_RULES", "POLICY_FORMAT", "POLICY_VERSION", "PolicyError",
    "SHIPPED_POLICIES", "load_policy", "read_policy_header", "shipped_policy_path", "write_policy_file",
]
