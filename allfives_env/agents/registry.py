"""A registry of agents by name, so that configs and the command line can name any agent.

``make_agent("pimc", samples=200, seed=0)`` or ``make_agent("pimc:samples=200,rollout=random")``;
``agent_names()`` lists what is registered. Unknown names and parameters fail with an error that says
what is allowed.

An agent is registered by its factory, or by the factory's path, ``"package.module:attribute"``, which
is imported only when such an agent is built (like Gymnasium's ``entry_point``). The path lets a package
that sits above this one, or that needs an optional extra (``openspiel-ismcts`` lives in
:mod:`allfives_env.openspiel.bots` and needs pyspiel), be named here without this layer importing it:
the registry imports nothing above the agents. ``extra=Extra("openspiel", "pyspiel")`` says which
extra the agent needs; listing the agents checks for that module without importing it.

An agent that can also play every game of a batch at once (the vector env's opponents) is registered with
its batch twin on the same line, ``register_agent("greedy", GreedyAgent, "...", batch="module:attribute")``:
a :class:`BatchTwin` (or just its ``build`` callable), by path where it lives above the agents. The vector
env, training configs and the listings ask this registry which agents have one (:func:`has_batch_twin`,
:func:`batch_agent_names`) and build it through :func:`batch_twin`, so no other list of them exists.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import json
import math
import os
import typing
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np

from ..core.errors import AgentError, short_repr as _short
from .base import Agent

__all__ = ["AgentError", "BatchTwin", "Extra", "register_agent", "unregister_agent", "agent_names", "describe_agents",
           "parse_agent_spec", "check_agent_spec", "make_agent", "check_agent_rules", "has_batch_twin",
           "batch_agent_names", "batch_twin"]


class Extra(NamedTuple):
    """An optional extra an agent needs: its name in ``pip install -e ".[name]"`` and the module it installs."""

    name: str
    module: str

    def installed(self) -> bool:
        """Whether :attr:`module` can be imported (checked without importing it)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):  # a broken install, or a module entry without a spec
            return False

    def need(self) -> str:
        """What a listing says about it: the extra, and how to install it while it is missing."""
        if self.installed():
            return f"needs the [{self.name}] extra"
        return f'needs the [{self.name}] extra, which is not installed: pip install -e ".[{self.name}]"'


class BatchTwin(NamedTuple):
    """An agent's batch counterpart: what builds it, and what it cannot play.

    ``build(name, params, rules, n, seed)`` returns the batch agent of the agent ``name`` for batches of
    ``n`` games (``params``: the spec's parameters, checked by :func:`check_agent_spec`; ``seed``: its
    random stream; ``rules``: the games' rules). ``problem(name, params)``, where given, says why the twin
    cannot play these parameters (a policy file played with ``sample=true``), or None: asked before
    anything is built, so a spec is refused without reading a file."""

    build: Callable[[str, dict[str, Any], Any, int, int], Any]
    problem: Optional[Callable[[str, dict[str, Any]], Optional[str]]] = None


#: What ``register_agent(batch=...)`` takes: a twin, its build callable, or the path of either.
BatchFactory = Union[BatchTwin, Callable[..., Any], str]


class _Entry(NamedTuple):
    """A registered agent: its factory, or the ``"module:attribute"`` path of one; its description; its extra;
    its batch twin (or its path), or None."""

    factory: Union[Callable[..., Agent], str]
    description: str
    extra: Optional[Extra]
    batch: Optional[BatchFactory] = None


_REGISTRY: dict[str, _Entry] = {}


def _check_target(name: str, what: str, target: Any) -> None:
    """An :class:`AgentError` unless ``target`` is a callable or a ``"package.module:attribute"`` path."""
    if isinstance(target, str):
        module, _, attribute = target.partition(":")
        if not all(part.isidentifier() for part in module.split(".")) or not attribute.isidentifier():
            raise AgentError(f"agent {name!r}: {what} path {target!r} is not allowed: give 'package.module:attribute'")
    elif not callable(target):
        raise AgentError(f"agent {name!r}: {what} {_short(target)} is not allowed: give a callable or "
                         "'package.module:attribute'")


def register_agent(name: str, factory: Union[Callable[..., Agent], str], description: str = "",
                   extra: Optional[Extra] = None, batch: Optional[BatchFactory] = None) -> None:
    """Register ``factory`` (usually the agent class) under ``name``, with its batch twin where it has one.

    ``factory`` may be the path ``"package.module:attribute"`` of one instead: the module is imported when
    an agent of this name is first built, never before, so a package above the agents (or one needing the
    optional ``extra``) can be registered here without being imported. ``batch`` is the agent's batch twin
    (a :class:`BatchTwin`, its ``build`` callable, or the path of either, imported when the first one is
    built): with it, the agent can be an opponent of the vector env; without, the vector env refuses it.
    """
    if not isinstance(name, str) or not name or ":" in name or "," in name:
        raise AgentError(f"agent name {_short(name)} is not allowed: give a non-empty string without ':' or ','")
    _check_target(name, "factory", factory)
    if isinstance(batch, BatchTwin):
        if not callable(batch.build) or not (batch.problem is None or callable(batch.problem)):
            raise AgentError(f"agent {name!r}: batch twin {_short(batch)} is not allowed: its build and problem "
                             "must be callables (problem may be None)")
    elif batch is not None:
        _check_target(name, "batch twin", batch)
    _REGISTRY[name] = _Entry(factory, description, extra, batch)


def unregister_agent(name: str) -> None:
    """Remove the agent ``name`` (and its batch twin) from the registry: a plug-in, or a test, that
    registered one for a while takes it out again."""
    if name not in _REGISTRY:
        raise AgentError(f"unknown agent {_short(name)}; registered agents: {agent_names()}")
    del _REGISTRY[name]


def agent_names() -> list[str]:
    """Registered agent names (agents that need a missing extra included: building one says what to install)."""
    return sorted(_REGISTRY)


def describe_agents() -> dict[str, str]:
    """Name -> one-line description of every registered agent; one that needs an optional extra says so,
    and how to install it where it is missing."""
    return {name: f"{entry.description}; {entry.extra.need()}" if entry.extra else entry.description
            for name, entry in sorted(_REGISTRY.items())}


def has_batch_twin(name: str) -> bool:
    """Whether the agent ``name`` is registered with a batch twin (can play in the vector env); nothing is
    imported to answer."""
    return name in _REGISTRY and _REGISTRY[name].batch is not None


def batch_agent_names() -> list[str]:
    """The registered agents with a batch twin: those the vector env can seat as opponents."""
    return [name for name in agent_names() if has_batch_twin(name)]


def _resolve(name: str, target: Any) -> Any:
    """``target`` itself, or the object its ``"module:attribute"`` path names, its module imported now."""
    if not isinstance(target, str):
        return target
    extra = _REGISTRY[name].extra
    module, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except ImportError as exc:  # the extra's module is missing (OpenSpielUnavailableError), or a broken install
        needs = f"the [{extra.name}] extra" if extra else f"module {module!r}"
        raise AgentError(f"agent {name!r} needs {needs}: {exc}") from None
    except AttributeError:
        raise AgentError(f"agent {name!r}: module {module!r} has no {attribute!r} (registered as {target!r})") from None


def _factory(name: str) -> Callable[..., Agent]:
    """The factory registered under ``name``, its module imported now where it was registered by path."""
    return _resolve(name, _REGISTRY[name].factory)


def batch_twin(name: str) -> Optional[BatchTwin]:
    """The batch twin of the registered agent ``name`` (its module imported now where it was registered by
    path), or None where it has none."""
    if not has_batch_twin(name):
        return None
    found = _resolve(name, _REGISTRY[name].batch)
    if isinstance(found, BatchTwin):
        return found
    if not callable(found):
        raise AgentError(f"agent {name!r}: batch twin {_short(found)} is neither a BatchTwin nor a callable")
    return BatchTwin(found)


def _split_spec(spec: Any) -> tuple[str, list[tuple[str, str]]]:
    """``"pimc:samples=50"`` -> ``("pimc", [("samples", "50")])``: the name and the raw parameter texts."""
    if not isinstance(spec, str):
        raise AgentError(f"an agent spec must be a string such as 'greedy' or 'pimc:samples=50', got {_short(spec)}")
    name, _, rest = spec.partition(":")
    pairs: list[tuple[str, str]] = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        if "=" not in part:
            raise AgentError(f"agent spec {_short(spec)}: parameter {_short(part)} must be written key=value")
        key, value = part.split("=", 1)
        key = key.strip()
        if any(key == k for k, _ in pairs):
            raise AgentError(f"agent spec {_short(spec)}: parameter {key!r} is given twice; give it once")
        pairs.append((key, value.strip()))
    return name.strip(), pairs


def _json_value(text: str) -> Any:
    """``text`` read as JSON where it parses (numbers, true/false, null), else the text itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, a number of over 4300 digits, or nested too deep
        return text


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:samples=50,rollout=random"`` -> ``("pimc", {"samples": 50, "rollout": "random"})``.

    Values are read as JSON where they parse (numbers, true/false, null), else kept as strings; a
    parameter given twice is an error. (:func:`make_agent` reads each value as the type the agent's
    parameter has, so ``pimc:prior=greedy`` and ``ppo:path=123.npz`` stay strings there.)
    """
    name, pairs = _split_spec(spec)
    return name, {key: _json_value(value) for key, value in pairs}


# --------------------------------------------------------------------------------------------- parameter types
_KINDS = {"bool": "true or false", "int": "an integer", "float": "a finite number", "str": "a string"}


def _param_kinds(factory: Callable[..., Agent]) -> dict[str, tuple[Optional[str], bool]]:
    """Per parameter of ``factory``: its kind ("bool", "int", "float", "str" or None for anything) and
    whether null (None) is allowed, from the annotations, else from the default value."""
    # ignore: mypy warns that calling __init__ on an instance is unsound; this reads its annotations only
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: fall back on the defaults
        hints = {}
    kinds: dict[str, tuple[Optional[str], bool]] = {}
    for name, p in inspect.signature(factory).parameters.items():
        hint = hints.get(name, inspect.Parameter.empty)
        args = typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)
        nullable = type(None) in args or p.default is None
        types = [a for a in args if a is not type(None)]
        if len(types) != 1 or types[0] not in (bool, int, float, str):
            default = p.default
            types = [type(default)] if type(default) in (bool, int, float, str) else []
        kinds[name] = ({bool: "bool", int: "int", float: "float", str: "str"}[types[0]] if types else None, nullable)
    return kinds


def _coerce(agent: str, key: str, value: Any, kind: Optional[str], nullable: bool, from_text: bool) -> Any:
    """``value`` as the parameter's kind, or an :class:`AgentError` naming the parameter and what it takes.

    ``from_text``: the value is the raw text of a spec string (JSON for numbers and booleans)."""
    shown = value if from_text else repr(value)
    if from_text:
        if kind == "str":
            return None if nullable and value == "null" else value
        value = _json_value(value)
    if value is None and nullable:
        return None
    ok = {
        None: True,
        "bool": isinstance(value, (bool, np.bool_)),
        "int": isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)),
        "float": isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        and math.isfinite(value),
        "str": isinstance(value, (str, os.PathLike)),
    }[kind]
    if not ok:
        allowed = _KINDS[kind] + (" or null" if nullable else "")  # type: ignore[index]  # kind None accepts all
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise AgentError(f"agent {agent!r}: {key}={shown} is not allowed: give {allowed}")
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    return value


def check_agent_spec(spec: str, **params: Any) -> tuple[str, dict[str, Any]]:
    """The agent's name and its parameters (the spec's and ``params``), each checked and read as the type
    the agent declares (an integer, a finite number, true or false, a string); an :class:`AgentError`
    names an unknown agent, a parameter it does not take, a value of the wrong type, or ``seed``.

    The one rule for agent-spec parameters: :func:`make_agent` applies it before building an agent, and
    the vector env's batch opponents apply it before building theirs, so a spec is accepted or refused the
    same way, with the same message, wherever it is given. Ranges are the agent's own to check.
    """
    name, pairs = _split_spec(spec)
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise AgentError(f"unknown agent {_short(name)}{hint}; registered agents: {agent_names()}")
    factory = _factory(name)
    signature = inspect.signature(factory)
    # Agent.__init__ takes **params only to record what subclasses were built with, not as a catch-all
    # ignore: mypy warns that calling __init__ on an instance is unsound; this compares it only
    inherits_base_init = isinstance(factory, type) and factory.__init__ is Agent.__init__  # type: ignore[misc]
    accepts_any = not inherits_base_init and any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    allowed = [
        key for key, p in signature.parameters.items()
        if key not in ("self", "seed") and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    kinds = _param_kinds(factory)
    given = [(key, value, True) for key, value in pairs] + [(key, value, False) for key, value in params.items()]
    checked: dict[str, Any] = {}
    for key, value, from_text in given:
        if key == "seed":
            raise AgentError(f"agent {name!r}: seed is not a spec parameter; the run seeds its agents (--seed, or "
                             f"make_agent(spec, seed=...))")
        if key not in signature.parameters or key not in allowed:
            if not accepts_any:
                raise AgentError(f"agent {name!r} takes no parameter {_short(key)}; it takes {allowed or 'none'}")
            checked[key] = _json_value(value) if from_text else value
            continue
        kind, nullable = kinds.get(key, (None, True))
        checked[key] = _coerce(name, key, value, kind, nullable, from_text)
    return name, checked


def make_agent(spec: str, seed: Optional[int] = None, **params: Any) -> Agent:
    """Build a registered agent from a name or spec string plus keyword parameters.

    Every parameter is checked by :func:`check_agent_spec` before the agent is built, and the agent then
    checks its ranges: a bad value raises :class:`AgentError` naming the parameter and what it takes.
    ``seed`` is given here, not in the spec.
    """
    name, checked = check_agent_spec(spec, **params)
    try:
        return _factory(name)(seed=seed, **checked)
    except (TypeError, ValueError) as exc:
        raise AgentError(f"agent {name!r} with {_short(checked)}: {exc}") from None


def check_agent_rules(agent: Agent, rules: Any) -> None:
    """Raise the agent's own error now if it cannot play games under ``rules`` (a trained policy made for
    other rules raises :class:`~allfives_env.policy.PolicyError`), rather than at its first move.

    Agents that can say so have ``check_rules(rules)`` themselves or on their ``policy``; agents held by an
    agent (a search's prior) are checked too. Agents without such a check play any rules."""
    seen: set[int] = set()
    stack = [agent]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        check = getattr(current, "check_rules", None) or getattr(getattr(current, "policy", None), "check_rules", None)
        if callable(check):
            check(rules)
        stack.extend(v for v in vars(current).values() if isinstance(v, Agent))
