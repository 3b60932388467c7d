"""Typed training configs: read a YAML mapping safely and check it into a tree of dataclass sections.

A config class is a dataclass of :class:`Section`; each field is one key of the YAML file, declared with
:func:`setting` (its default and the :data:`Check` its value must pass) or :func:`section` (a nested
section), and documented by the docstring under it (the style of CleanRL's ``Args``). :func:`resolve`
merges a raw mapping over the defaults and checks every value: unknown keys, wrong types and out-of-range
values fail with :class:`ConfigError`, naming the file, the dotted key, the value and what is allowed
(with a "did you mean" for misspelt keys). :meth:`Section.to_dict` gives the plain mapping back (the
``config.yaml`` of a run, and the ``config`` of an exported policy's metadata).

Files are read as UTF-8 YAML with ``yaml.SafeLoader`` (no Python objects), at most 1 MiB and nested at
most 32 levels deep; numbers in exponent form without a dot (``1e-4``) are numbers, as in YAML 1.2.
Numbers must be finite (no ``.inf``/``.nan``), integers within their bounds, and ``true``/``false`` is
never a number. ``--set KEY=VALUE`` values (:func:`apply_overrides`) are read the same way.

The stable-baselines3 configs are :class:`allfives_training.config.TrainConfig`, the RLlib ones
:class:`allfives_training.rllib.config.RLlibConfig`.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, TypeVar, Union

from allfives_env.core.errors import AllFivesError, short_repr
from allfives_env.core.values import is_finite_number, is_integer

__all__ = [
    "ConfigError", "Check", "Section", "setting", "section", "resolve", "build_rules", "check_agent_specs",
    "read_yaml", "parse_yaml", "apply_overrides", "load_checked", "read_checked", "rules_options", "opponent_mixture",
    "is_int", "is_number", "integer", "number", "choice", "boolean", "text", "path_text", "optional", "run_name",
    "layer_sizes", "agent_specs", "writable_dir", "search_work",
    "MAX_LEARNING_RATE", "MAX_CLIP", "MAX_LOSS_WEIGHT", "MAX_GRAD_CLIP", "MAX_SEARCH_WORK", "SEARCH_COUNTS",
    "MAX_SEED", "MAX_STEPS", "MAX_DEPTH", "MAX_SPECS", "MAX_PROCESSES", "MAX_GAMES", "MAX_REPLAYS",
    "MAX_CHECKPOINTS_KEPT", "MAX_EPOCHS",
]


class ConfigError(AllFivesError, ValueError):
    """A training config that cannot be used as written."""


MAX_SEED = 2**32 - 1  # numpy's legacy seeding (SB3's set_random_seed) takes seeds below 2**32
MAX_STEPS = 10**12  # step counts and intervals: far beyond any run, small enough for every counter
MAX_CONFIG_BYTES = 1 << 20
MAX_DEPTH = 32  # nesting levels of a config (and of a --set value)
MAX_SPECS = 100  # agent specs in an opponents mixture or a baselines list
MAX_TEXT = 1000  # characters of a string value
MAX_PROCESSES = 256  # worker processes of any kind
MAX_GAMES = 10**7  # games per baseline of an evaluation
MAX_REPLAYS = 1000  # replays saved per baseline
MAX_CHECKPOINTS_KEPT = 10_000
MAX_EPOCHS = 10**4  # PPO epochs per rollout
MAX_WEIGHT = 1e9  # an opponent's mixture weight
MAX_LAYERS = 64  # hidden layers of a network
MAX_UNITS = 65536  # units of a hidden layer
#: Adam's learning rate: a step of the weights' own scale or more is divergence, not learning (3e-4 is usual)
MAX_LEARNING_RATE = 1.0
#: PPO's clip: the probability ratio is clipped to [1 - clip, 1 + clip]; above 1 its lower end is already 0
MAX_CLIP = 10.0
#: the loss terms' weights (entropy, value, KL): the policy loss has weight 1, so 100 already drowns it
MAX_LOSS_WEIGHT = 100.0
#: gradient clipping's norm: beyond this it clips nothing a trainable run produces (null: no clipping)
MAX_GRAD_CLIP = 1000.0
#: samples (or simulations x rollouts) per decision of a searching baseline or opponent: 50 times pimc's 200 samples, 100
#: times ISMCTS's 100 simulations; more makes one evaluation game take minutes, a final evaluation days
MAX_SEARCH_WORK = 10_000
#: the parameters of the searching agents that multiply their work per decision (pimc's guesses, the OpenSpiel
#: bots' simulations and their rollouts per leaf)
SEARCH_COUNTS = ("samples", "sims", "rollouts")

Check = Callable[[Any], Optional[str]]  # returns what is allowed when the value is wrong, else None
Converter = Callable[[Any, str, str], Any]  # (value, dotted key, where) -> the normalised value, or ConfigError
S = TypeVar("S", bound="Section")


# ---------------------------------------------------------------------------------------------- value checks
# Plain Python numbers only (allfives_env.core.values also takes numpy's): a config is dumped back to YAML.
def is_int(v: Any) -> bool:
    """An int that is not a bool."""
    return isinstance(v, int) and is_integer(v)


def is_number(v: Any) -> bool:
    """A finite int or float that is not a bool."""
    return isinstance(v, (int, float)) and is_finite_number(v)


def integer(lo: int = 0, hi: Optional[int] = None) -> Check:
    """An integer in ``[lo, hi]`` (no upper bound when ``hi`` is None)."""
    wanted = f"an integer >= {lo}" if hi is None else f"an integer from {lo:,} to {hi:,}"
    return lambda v: None if is_int(v) and v >= lo and (hi is None or v <= hi) else wanted


def number(lo: float = 0.0, hi: Optional[float] = None, lo_open: bool = False, hi_open: bool = False) -> Check:
    """A finite number from ``lo`` to ``hi`` (open or closed ends)."""
    def check(v: Any) -> Optional[str]:
        ok = is_number(v) and (v > lo if lo_open else v >= lo) and (hi is None or (v < hi if hi_open else v <= hi))
        if ok:
            return None
        if hi is None:
            return f"a finite number {'>' if lo_open else '>='} {lo}"
        return f"a number in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    return check


def choice(*options: str) -> Check:
    """One of the given strings."""
    return lambda v: None if isinstance(v, str) and v in options else f"one of {list(options)}"


def boolean(v: Any) -> Optional[str]:
    """``true`` or ``false``."""
    return None if isinstance(v, bool) else "true or false"


def text(v: Any) -> Optional[str]:
    """A non-empty string without control characters (at most 1000 characters)."""
    if not isinstance(v, str) or not v.strip() or len(v) > MAX_TEXT:
        return f"a non-empty string (at most {MAX_TEXT} characters)"
    if any(ord(c) < 32 or ord(c) == 127 for c in v):
        return "a string without control characters"
    return None


def path_text(v: Any) -> Optional[str]:
    """A directory path: a string without control characters (NUL cannot be in a path)."""
    return text(v)


def writable_dir(v: Any) -> Optional[str]:
    """A folder a run can write into: an existing writable directory, or a new path whose nearest existing
    parent is one (the run creates the rest). Checked with the config, so a file, a device (``/dev/null``)
    or a read-only place is refused before Ray starts, not when the first file is written."""
    wanted = path_text(v)
    if wanted is not None:
        return wanted
    allowed = "a directory the run can write into (an existing writable directory, or a new path under one)"
    try:
        path = Path(v).absolute()
        existing = next(p for p in (path, *path.parents) if os.path.lexists(p))
        if not existing.is_dir():
            return f"{allowed}; {existing} is not a directory"
        if not os.access(existing, os.W_OK | os.X_OK):
            return f"{allowed}; {existing} is not writable"
    except (OSError, ValueError) as exc:  # the working directory is gone, a path the system refuses
        return f"{allowed}; {exc}"
    return None


def search_work(agent: Any) -> int:
    """Samples (or simulations x rollouts) per decision of a built agent: the product of its :data:`SEARCH_COUNTS`, 1 for
    an agent that does not search. Read from the agent, so its defaults count as much as a spec's values."""
    work = 1
    for name in SEARCH_COUNTS:
        count = getattr(agent, name, None)
        if is_int(count) and count > 1:
            work *= count
    return work


def optional(check: Check) -> Check:
    """None, or what ``check`` allows."""
    return lambda v: None if v is None else (None if check(v) is None else f"null or {check(v)}")


_NAME = re.compile(r"[\w][\w.+-]{0,99}")


def run_name(v: Any) -> Optional[str]:
    """A run name: it names a directory and goes into agent spec strings."""
    if isinstance(v, str) and _NAME.fullmatch(v) and v not in (".", ".."):
        return None
    return ("a plain name of up to 100 letters, digits and . _ - + (no slashes, spaces or commas): it names the "
            "run directory")


def layer_sizes(min_layers: int = 1, max_layers: int = MAX_LAYERS, max_units: int = MAX_UNITS) -> Check:
    """A list of ``min_layers``..``max_layers`` layer sizes, each 1..``max_units``."""
    example = "[64, 64]" if min_layers else "[32] (or [] for none)"
    wanted = (f"a list of {min_layers} to {max_layers} layer sizes, each an integer from 1 to {max_units:,}, "
              f"e.g. {example}")
    if min_layers == 1:
        wanted = "a non-empty list of positive integers: " + wanted
    else:
        wanted = "a list of positive integers (may be empty): " + wanted

    def check(v: Any) -> Optional[str]:
        ok = (isinstance(v, list) and min_layers <= len(v) <= max_layers
              and all(is_int(h) and 1 <= h <= max_units for h in v))
        return None if ok else wanted
    return check


def agent_specs(v: Any) -> Optional[str]:
    """A non-empty list of agent spec strings."""
    ok = isinstance(v, list) and 1 <= len(v) <= MAX_SPECS and all(text(s) is None for s in v)
    return None if ok else f"a list of 1 to {MAX_SPECS} agent specs, e.g. [random, greedy, expert]"


# ---------------------------------------------------------------------------------------------- converters
def rules_options(value: Any, dotted: str, where: str) -> dict[str, Any]:
    """The ``rules`` section: a mapping of rules options (null: none), checked later by ``Rules.from_options``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}{dotted}: must be a mapping of rules options, got {short_repr(value)}")
    return dict(value)


def opponent_mixture(value: Any, dotted: str, where: str) -> dict[str, float]:
    """Normalise an opponents mixture to {spec: weight}: a mapping {spec: weight}, a list of specs, or a list
    of {agent: spec, weight: w}."""
    what = (f"{dotted}: give a mapping {{spec: weight}}, a list of specs, or a list of {{agent: spec, weight: w}}, "
            "e.g. {random: 1, greedy: 2}")
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, list) and value:
        items = []
        for item in value:
            if isinstance(item, str):
                items.append((item, 1.0))
            elif isinstance(item, Mapping) and set(item) <= {"agent", "weight"} and "agent" in item:
                items.append((item["agent"], item.get("weight", 1.0)))
            else:
                raise ConfigError(f"{where}{what}; got the entry {short_repr(item)}")
    else:
        raise ConfigError(f"{where}{what}; got {short_repr(value)}")
    if len(items) > MAX_SPECS:
        raise ConfigError(f"{where}{dotted}: at most {MAX_SPECS} agent specs, got {len(items)}")
    mixture: dict[str, float] = {}
    for spec, weight in items:
        if text(spec) is not None:
            raise ConfigError(f"{where}{dotted}: an agent spec must be {text(spec)}, got {short_repr(spec)}")
        if not is_number(weight) or not 0 <= weight <= MAX_WEIGHT:
            raise ConfigError(f"{where}{dotted}.{spec}: the weight must be a finite number from 0 to 1e9, "
                              f"got {short_repr(weight)}")
        mixture[spec.strip()] = mixture.get(spec.strip(), 0.0) + float(weight)
    if not mixture or sum(mixture.values()) <= 0:
        raise ConfigError(f"{where}{dotted}: at least one opponent needs a weight > 0, got {short_repr(value)}")
    return mixture


# ---------------------------------------------------------------------------------------------- sections
def _default_field(default: Any, metadata: dict[str, Any]) -> Any:
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=functools.partial(copy.deepcopy, default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def setting(default: Any, check: Optional[Check], *, convert: Optional[Converter] = None,
            key: Optional[str] = None) -> Any:
    """A config key: its ``default``, the ``check`` its value must pass (None: ``convert`` checks it), an
    optional ``convert`` run first (normalises the value or raises ConfigError), and ``key``, its name in
    the YAML file when that is not a Python name (``lambda``)."""
    return _default_field(default, {"check": check, "convert": convert, "key": key})


def section(cls: type, **defaults: Any) -> Any:
    """A nested section of the config, of dataclass ``cls`` (its defaults when the file leaves it out).

    ``defaults`` replace some of ``cls``'s own, so that two configs share one section class where only a
    default differs (RLlib's run evaluates every 10 iterations, stable-baselines3's every 100,000 steps):
    the keys, their checks and their messages stay defined once."""
    unknown = sorted(set(defaults) - {f.name for f in dataclasses.fields(cls)})
    if unknown:  # a mistake in this package's own declarations, found at import
        raise TypeError(f"{cls.__name__} has no fields {unknown}")
    factory = functools.partial(_section_with, cls, defaults) if defaults else cls
    return dataclasses.field(default_factory=factory, metadata={"section": cls})


def _section_with(cls: type, defaults: Mapping[str, Any]) -> Any:
    return cls(**copy.deepcopy(dict(defaults)))


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get("key") or f.name


def _fields(cls: Any) -> list[dataclasses.Field]:
    """The fields of a section class, in the order of its YAML keys: a dataclass lists a base's fields before a
    subclass's own, so a subclass that adds keys to a shared section (:mod:`allfives_training.sections`) names
    in ``place_after`` the key each of its own goes after, to keep the order its config always had."""
    fields = list(dataclasses.fields(cls))
    for name, anchor in getattr(cls, "place_after", {}).items():
        moved = next(f for f in fields if f.name == name)
        fields.remove(moved)
        fields.insert(next(i for i, f in enumerate(fields) if f.name == anchor) + 1, moved)
    return fields


class Section:
    """Base of the config dataclasses (see the module docstring)."""

    #: a subclass's own key -> the key it follows in YAML order (see :func:`_fields`)
    place_after: dict[str, str] = {}

    @classmethod
    def keys(cls) -> list[str]:
        """The YAML keys of this section, in order."""
        return [_key(f) for f in _fields(cls)]

    def to_dict(self) -> dict[str, Any]:
        """The section as a plain mapping of YAML keys, in order (nested sections too; values copied)."""
        out: dict[str, Any] = {}
        for f in _fields(self):
            value = getattr(self, f.name)
            out[_key(f)] = value.to_dict() if isinstance(value, Section) else copy.deepcopy(value)
        return out


def _unknown(key: str, allowed: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}unknown key {short_repr(key)}{hint}; allowed keys: {allowed}")


def _merge(cls: type[S], given: Mapping[str, Any], prefix: str, where: str,
           defaults: Optional[Callable[[], S]] = None) -> S:
    """``given`` over the defaults of ``cls`` (made by ``defaults``, the section field's factory, when given);
    refuses unknown keys and sections that are not mappings."""
    out = (defaults or cls)()
    by_key = {_key(f): f for f in _fields(cls)}
    for key, value in given.items():
        if not isinstance(key, str) or key not in by_key:
            raise _unknown(str(key), sorted(by_key), f"{where}{prefix[:-1]}: " if prefix else where)
        f = by_key[key]
        dotted = prefix + key
        sub = f.metadata.get("section")
        if sub is None:
            setattr(out, f.name, copy.deepcopy(value))
        elif value is not None:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}{dotted}: must be a mapping of {sorted(sub.keys())}, got "
                                  f"{short_repr(value)}")
            setattr(out, f.name, _merge(sub, value, dotted + ".", where, f.default_factory))
    return out


def _convert(cfg: Section, prefix: str, where: str) -> None:
    for f in _fields(cfg):
        value, dotted = getattr(cfg, f.name), prefix + _key(f)
        if f.metadata.get("section") is not None:
            _convert(value, dotted + ".", where)
        elif f.metadata.get("convert") is not None:
            setattr(cfg, f.name, f.metadata["convert"](value, dotted, where))


def _check(cfg: Section, prefix: str, where: str) -> None:
    for f in _fields(cfg):
        value, dotted = getattr(cfg, f.name), prefix + _key(f)
        if f.metadata.get("section") is not None:
            _check(value, dotted + ".", where)
            continue
        check = f.metadata.get("check")
        wanted = None if check is None else check(value)
        if wanted is not None:
            raise ConfigError(f"{where}{dotted}: must be {wanted}, got {short_repr(value)}")


def resolve(cls: type[S], raw: Optional[Mapping[str, Any]], where: str) -> S:
    """``raw`` merged over the defaults of ``cls``, converted and checked key by key. ``where`` (e.g.
    ``"file.yaml: "``) starts every error."""
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}a config must be a mapping of sections (name, rules, opponents, ppo, ...), "
                          f"got {type(raw).__name__}")
    if _too_deep(raw):
        raise ConfigError(f"{where}the config is nested too deeply (a config nests at most {MAX_DEPTH} levels)")
    cfg = _merge(cls, raw, "", where)
    _convert(cfg, "", where)
    _check(cfg, "", where)
    return cfg


def build_rules(options: Mapping[str, Any], where: str) -> Any:
    """The :class:`~allfives_env.core.rules.Rules` of a config's ``rules`` section (ConfigError if refused)."""
    from allfives_env.core.rules import Rules

    try:
        return Rules.from_options(dict(options))
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}rules: {exc}") from None


def check_agent_specs(specs: list[tuple[str, str]], rules: Any, where: str) -> None:
    """Build each ``(section, spec)`` agent once, so a bad spec, a policy file for other rules or a search
    too costly to finish (over :data:`MAX_SEARCH_WORK` per decision) fails now."""
    from allfives_env.agents import make_agent

    for key, spec in specs:
        try:
            agent = make_agent(spec)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}{key}: {exc}") from None
        work = search_work(agent)
        if work > MAX_SEARCH_WORK:  # an evaluation plays thousands of its decisions: it would never end
            raise ConfigError(f"{where}{key}: {short_repr(spec)} searches {work:,} samples per decision (samples, "
                              f"or sims x rollouts); a baseline or opponent may search at most "
                              f"{MAX_SEARCH_WORK:,}, e.g. pimc:samples=200")
        check_rules = getattr(getattr(agent, "policy", None), "check_rules", None)
        if check_rules is not None:
            try:
                check_rules(rules)
            except ValueError as exc:
                raise ConfigError(f"{where}{key}: {exc}") from None


# ---------------------------------------------------------------------------------------------- YAML
@functools.lru_cache(maxsize=None)
def _safe_loader_class() -> Any:
    """``yaml.SafeLoader`` (plain data only: no tag can build a Python object) that also reads ``1e-4``
    (exponent, no dot) as a number, as YAML 1.2 does."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
        list("-+0123456789."))
    return Loader


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists/mappings more than ``limit`` deep (iterative; shared nodes once)."""
    seen: set[int] = set()
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children = list(node.keys()) + list(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            children = list(node)
        else:
            continue
        if depth > limit:
            return True
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend((c, depth + 1) for c in children)
    return False


def _safe_load(text: str) -> Any:
    """One YAML document through PyYAML's safe loader class, built here directly: no call in the project
    takes a loader argument, so none can be pointed at a loader that builds Python objects."""
    loader = _safe_loader_class()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_yaml(text: str, where: str) -> Any:
    """YAML text read safely (no Python objects); ``where`` (e.g. ``"file.yaml: "``) starts every error."""
    import yaml

    too_deep = f"{where}the YAML is nested too deeply (a config nests at most {MAX_DEPTH} levels)"
    try:
        value = _safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}not valid YAML: {str(exc)[:MAX_TEXT]}") from None
    except RecursionError:
        raise ConfigError(too_deep) from None
    if _too_deep(value):
        raise ConfigError(too_deep)
    return value


def read_yaml(path: Union[str, Path], missing_hint: str = "") -> Any:
    """A YAML file read safely: a regular file (:func:`allfives_env.regular_file.read_regular_file`: a named pipe or a
    device is refused, not waited on), UTF-8, at most 1 MiB, :func:`parse_yaml`; every failure a ConfigError."""
    from allfives_env.regular_file import read_regular_file

    p = Path(path)
    try:
        data = read_regular_file(p, MAX_CONFIG_BYTES, ConfigError, "a config (a YAML file of at most 1 MiB)")
    except FileNotFoundError:
        raise ConfigError(f"config file {p} does not exist{missing_hint}") from None
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start} is {data[exc.start:exc.start + 1]!r}); a config "
                          "is a UTF-8 YAML file") from None
    return parse_yaml(source, f"{p}: ")


# ---------------------------------------------------------------------------------------------- --set
def _set_one(out: dict[str, Any], item: str, where: str) -> None:
    """Apply one ``KEY=VALUE`` override to the raw config ``out`` in place."""
    if "=" not in item:
        raise ConfigError(f"{where}--set needs KEY=VALUE with a dotted key (e.g. ppo.learning_rate=1e-4), got "
                          f"{short_repr(item)}")
    key, value_text = item.split("=", 1)
    value = parse_yaml(value_text, f"{where}--set {short_repr(item)}: the value: ")
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"{where}--set {short_repr(item)}: empty key; give a dotted key such as "
                          "ppo.learning_rate")
    if len(parts) > MAX_DEPTH:
        raise ConfigError(f"{where}--set {short_repr(item)}: the key has more than {MAX_DEPTH} parts")
    node = out
    for depth, p in enumerate(parts[:-1]):
        child = node.get(p)
        if child is None:
            child = {}
            node[p] = child
        elif not isinstance(child, dict):
            here = ".".join(parts[:depth + 1])
            raise ConfigError(f"{where}--set {short_repr(item)}: {here} is {short_repr(child)} in the config, "
                              f"not a mapping; set it whole, e.g. --set '{here}={{...}}'")
        node = child
    node[parts[-1]] = value


def apply_overrides(raw: Optional[Mapping[str, Any]], overrides: list[str], source: str = "") -> dict[str, Any]:
    """``["ppo.learning_rate=1e-4", "total_steps=50000"]`` applied to a raw config (values read as YAML).

    ``source`` (the file ``raw`` came from) names it in errors."""
    where = f"{source}: " if source else ""
    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError(f"{where}a config must be a mapping of sections (name, rules, opponents, ppo, ...), "
                          f"got {type(raw).__name__}; --set can only change a mapping")
    if isinstance(overrides, (str, bytes)) or not all(isinstance(o, str) for o in overrides):
        raise ConfigError(f"{where}--set items must be strings KEY=VALUE, got {short_repr(overrides)}")
    if _too_deep(raw):
        raise ConfigError(f"{where}the config is nested too deeply (a config nests at most {MAX_DEPTH} levels)")
    out = copy.deepcopy(dict(raw or {}))
    for item in overrides:
        _set_one(out, item, where)
    return out


# ---------------------------------------------------------------------------------------------- entry points
def load_checked(path: Union[str, Path], overrides: Optional[list[str]], validate: Callable[[Any, str], S],
                 missing_hint: str = "") -> S:
    """A YAML config file read, with ``--set`` overrides applied, through ``validate(raw, source)``."""
    raw = read_yaml(path, missing_hint)
    if overrides:
        raw = apply_overrides(raw, overrides, str(path))
    return validate(raw, str(path))


def read_checked(config: Any, overrides: Any, validate: Callable[[Any, str], S], missing_hint: str = "") -> S:
    """A checked config from a file path (read as :func:`load_checked` reads it), a raw mapping (named
    ``config`` in errors) or a :class:`Section` (checked again, as its mapping), with ``--set`` overrides."""
    if isinstance(config, (str, os.PathLike)):
        return load_checked(config, list(overrides), validate, missing_hint)
    if isinstance(config, Section):
        config = config.to_dict()
    return validate(apply_overrides(config, list(overrides), "config"), "config")
