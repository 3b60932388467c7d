"""A registry of agents by name, so that configs and the command line can name any agent.

``make_agent("pimc", samples=200, seed=0)`` or ``make_agent("pimc:samples=200,rollout=random")``;
``agent_names()`` lists what is registered. Unknown names and parameters fail with an error that says
what is allowed.
"""

from __future__ import annotations

import difflib
import inspect
import json
from typing import Any, Callable, Optional

from ..core.errors import AllFivesError
from .base import Agent


class AgentError(AllFivesError, ValueError):
    """An unknown agent name, or parameters the agent does not take."""


_REGISTRY: dict[str, tuple[Callable[..., Agent], str]] = {}


def register_agent(name: str, factory: Callable[..., Agent], description: str = "") -> None:
    """Register ``factory`` (usually the agent class) under ``name``."""
    _REGISTRY[name] = (factory, description)


def agent_names() -> list[str]:
    """Registered agent names."""
    return sorted(_REGISTRY)


def describe_agents() -> dict[str, str]:
    """Name -> one-line description of every registered agent."""
    return {name: desc for name, (_, desc) in sorted(_REGISTRY.items())}


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:samples=50,rollout=random"`` -> ``("pimc", {"samples": 50, "rollout": "random"})``.

    Values are read as JSON where they parse (numbers, true/false, null), else kept as strings.
    """
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        if "=" not in part:
            raise AgentError(f"agent spec {spec!r}: parameter {part!r} must be written key=value")
        key, value = part.split("=", 1)
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value.strip()
    return name.strip(), params


def make_agent(spec: str, seed: Optional[int] = None, **params: Any) -> Agent:
    """Build a registered agent from a name or spec string plus keyword parameters."""
    name, spec_params = parse_agent_spec(spec)
    spec_params.update(params)
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise AgentError(f"unknown agent {name!r}{hint}; registered agents: {agent_names()}")
    factory, _ = _REGISTRY[name]
    signature = inspect.signature(factory)
    # Agent.__init__ takes **params only to record what subclasses were built with, not as a catch-all
    inherits_base_init = isinstance(factory, type) and factory.__init__ is Agent.__init__
    accepts_any = not inherits_base_init and any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    allowed = [
        name for name, p in signature.parameters.items()
        if name not in ("self", "seed") and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    for key in spec_params:
        if not accepts_any and key not in signature.parameters:
            raise AgentError(f"agent {name!r} takes no parameter {key!r}; it takes {allowed or 'none'}")
    try:
        return factory(seed=seed, **spec_params)
    except (TypeError, ValueError) as exc:
        raise AgentError(f"agent {name!r} with {spec_params}: {exc}") from None
