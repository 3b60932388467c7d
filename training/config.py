"""Training configs: a YAML file validated against a schema, with every default written down here.

A config is a mapping of sections; anything left out takes the default below. Unknown keys, wrong types
and out-of-range values fail with :class:`ConfigError`, naming the file, the dotted key, the value and
what is allowed (with a "did you mean" for misspelt keys). ``allfives train --print-config`` shows the
resolved config.

Files are read as UTF-8 YAML with ``yaml.SafeLoader`` (no Python objects), at most 1 MiB and nested at
most 32 levels deep; numbers in exponent form without a dot (``1e-4``) are numbers, as in YAML 1.2.
Numbers must be finite (no ``.inf``/``.nan``), integers within the bounds below, and ``true``/``false``
is never a number. ``--set KEY=VALUE`` values are read the same way.

Schema (defaults in brackets)::

    name: str                 [run]        run name; the run directory is <output.dir>/<name> (letters,
                                           digits, . _ - +, up to 100 characters)
    seed: int < 2**32         [0]          seeds torch, the envs, and the evaluation deals
    total_steps: int >= 1     [300000]     learner env steps (decisions) to train for; step counts
                                           (total_steps, *.every) are at most 10**12
    n_envs: int 1..4096       [32]         parallel envs (n_envs x ppo.n_steps at most 10,000,000)
    vec_env: str              [batched]    batched | subproc (n_envs <= 256) | dummy (training/vec_env.py)
    workers: int 1..256       [2]          processes of the batched vec env
    rules: mapping            [{}]         any rules option of allfives_env.core.Rules
    env:
      reward: str             [win]        win | points
      episode: str            [game]       game | hand
      seat: int | null        [null]       the learner's seat; null = random each episode
      partner: str | null     [null]       agent spec for the partner seat (4-player partnership)
      action_features: bool   [false]      add the per-placement features slice to the observation
                                           (see allfives_env/encoding.py; slower env, faster learning)
    opponents: mapping        [{random: 1, greedy: 1}]
                                           agent spec -> mixture weight (or a list of specs, or a list
                                           of {agent: spec, weight: w}); drawn afresh every episode;
                                           at most 100 specs, weights finite in [0, 1e9]
    league:
      enabled: bool           [false]      add frozen snapshots of the learner to the opponents
      snapshot_every: int     [100000]     steps between snapshots (>= 1)
      max_snapshots: int      [5]          keep the newest N snapshots in the mixture (1..1000)
      weight: float in [0,1)  [0.5]        share of the opponent draws that go to snapshots
                                           (split evenly between them); baselines share the rest
    imitation:                             warm start: clone a teacher before PPO (training/imitation.py)
      teacher: str | null     [null]       agent spec of the teacher (e.g. expert); null = no warm start
      decisions: int >= 2     [200000]     teacher decisions recorded in the run's env and opponents
                                           (at most 100,000,000)
      epochs: int >= 1        [8]
      batch_size: int >= 1    [1024]
      learning_rate: float    [0.001]
      value: bool             [true]       also fit the critic to the recorded returns
      processes: int 1..256   [2]          worker processes that play the teacher's games
    network:
      hidden: [int, ...]      [[64, 64]]   hidden layers of the actor and of the critic (separate nets);
                                           1 to 64 layers of 1..65536 units
      activation: str         [tanh]       tanh | relu | elu | leaky_relu | silu
      action_scorer: [int, ...] | null [null]  hidden layers of a scorer shared by every placement's
                                           feature row (training/scorer_policy.py); needs
                                           env.action_features: true; [] = a linear scorer
    ppo:                                   sb3-contrib MaskablePPO hyper-parameters
      learning_rate: float    [0.0003]
      n_steps: int            [128]        steps per env per rollout (rollout = n_envs x n_steps)
      batch_size: int         [512]
      n_epochs: int           [4]
      gamma: float            [0.995]
      gae_lambda: float       [0.95]
      clip_range: float       [0.2]
      ent_coef: float         [0.01]
      vf_coef: float          [0.5]
      max_grad_norm: float    [0.5]
      target_kl: float | null [null]
      normalize_advantage: bool [true]
    evaluation:
      every: int >= 0         [100000]     steps between evaluations (0: only the final one)
      at_start: bool          [true]       also evaluate the untrained policy (the curve's first point)
      games: int >= 1         [200]        games per baseline at each evaluation (whole duplicate sets)
      final_games: int >= 1   [1000]       games per baseline in the final evaluation
      baselines: [spec, ...]  [[random, greedy, expert]]  (1 to 100 specs)
      processes: int 1..256   [2]
      seed: int < 2**32       [12345]      the same deals at every evaluation, so the curve is comparable
      replays: int 0..1000    [2]          games per baseline of the final evaluation saved as replays in
                                           <run>/replays/<baseline>/ (allfives replay F --html OUT.html)
    checkpoint:
      every: int >= 1         [50000]      steps between checkpoints (a killed run loses at most this)
      keep: int 1..10000      [3]          checkpoints kept on disk (the newest)
    output:
      dir: str                [runs]
      tensorboard: bool       [true]       TensorBoard logs in <run>/tb
      progress: bool          [true]       a progress bar on stderr
      plot: bool              [true]       learning_curve.png at the end (needs matplotlib)
"""


from __future__ import annotations

import copy
import difflib
import functools
import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

from allfives_env.core.errors import AllFivesError, short_repr

__all__ = ["ConfigError", "DEFAULTS", "load_config", "validate_config", "apply_overrides", "resolve_sections",
           "rollout_size", "check_agent_specs", "read_yaml", "parse_yaml", "Check", "integer", "number", "choice",
           "boolean", "text",
           "optional", "run_name", "layer_sizes", "agent_specs", "path_text", "MAX_SEED", "MAX_STEPS"]


class ConfigError(AllFivesError, ValueError):
    """A training config that cannot be used as written."""




MAX_SEED = 2**32 - 1  # numpy's legacy seeding (SB3's set_random_seed) takes seeds below 2**32
MAX_STEPS = 10**12  # step counts and intervals: far beyond any run, small enough for every counter
MAX_ROLLOUT = 10_000_000  # n_envs x ppo.n_steps: the rollout buffer holds this many observations
MAX_CONFIG_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_SPECS = 100

DEFAULTS: dict[str, Any] = {
    "name": "run",
    "seed": 0,
    "total_steps": 300_000,
    "n_envs": 32,
    "vec_env": "batched",
    "workers": 2,
    "rules": {},
    "env": {"reward": "win", "episode": "game", "seat": None, "partner": None, "action_features": False},
    "opponents": {"random": 1.0, "greedy": 1.0},
    "league": {"enabled": False, "snapshot_every": 100_000, "max_snapshots": 5, "weight": 0.5},
    "imitation": {"teacher": None, "decisions": 200_000, "epochs": 8, "batch_size": 1024, "learning_rate": 1e-3,
                  "value": True, "processes": 2},
    "network": {"hidden": [64, 64], "activation": "tanh", "action_scorer": None},
    "ppo": {
        "learning_rate": 3e-4, "n_steps": 128, "batch_size": 512, "n_epochs": 4, "gamma": 0.995,
        "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5,
        "target_kl": None, "normalize_advantage": True,
    },
    "evaluation": {
        "every": 100_000, "at_start": True, "games": 200, "final_games": 1000,
        "baselines": ["random", "greedy", "expert"], "processes": 2, "seed": 12345, "replays": 2,
    },
    "checkpoint": {"every": 50_000, "keep": 3},
    "output": {"dir": "runs", "tensorboard": True, "progress": True, "plot": True},
}

ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu", "silu")
VEC_ENVS = ("batched", "subproc", "dummy")

Check = Callable[[Any], Optional[str]]  # returns what is allowed when the value is wrong, else None


# ---------------------------------------------------------------------------------------------- value checks
def is_int(v: Any) -> bool:
    """An int that is not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    """A finite int or float that is not a bool."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too big for a float
        return False


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
    return None if isinstance(v, bool) else "true or false"


def text(v: Any) -> Optional[str]:
    """A non-empty string without control characters (at most 1000 characters)."""
    if not isinstance(v, str) or not v.strip() or len(v) > 1000:
        return "a non-empty string (at most 1000 characters)"
    if any(ord(c) < 32 or ord(c) == 127 for c in v):
        return "a string without control characters"
    return None


def path_text(v: Any) -> Optional[str]:
    """A directory path: a string without control characters (NUL cannot be in a path)."""
    return text(v)


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


def layer_sizes(min_layers: int = 1, max_layers: int = 64, max_units: int = 65536) -> Check:
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


SCHEMA: dict[str, Any] = {
    "name": run_name, "seed": integer(0, MAX_SEED), "total_steps": integer(1, MAX_STEPS),
    "n_envs": integer(1, 4096), "vec_env": choice(*VEC_ENVS), "workers": integer(1, 256),
    "rules": None,  # checked by Rules.from_options
    "env": {"reward": choice("win", "points"), "episode": choice("game", "hand"), "seat": optional(integer(0, 3)),
            "partner": optional(text), "action_features": boolean},
    "opponents": None,  # checked below
    "league": {"enabled": boolean, "snapshot_every": integer(1, MAX_STEPS), "max_snapshots": integer(1, 1000),
               "weight": number(0.0, 1.0, hi_open=True)},
    "imitation": {"teacher": optional(text), "decisions": integer(2, 10**8), "epochs": integer(1, 10**6),
                  "batch_size": integer(1, 10**7), "learning_rate": number(0.0, lo_open=True), "value": boolean,
                  "processes": integer(1, 256)},
    "network": {"hidden": layer_sizes(1), "activation": choice(*ACTIVATIONS),
                "action_scorer": optional(layer_sizes(0))},
    "ppo": {
        "learning_rate": number(0.0, lo_open=True), "n_steps": integer(1, MAX_ROLLOUT),
        "batch_size": integer(1, MAX_ROLLOUT), "n_epochs": integer(1, 10**4),
        "gamma": number(0.0, 1.0), "gae_lambda": number(0.0, 1.0), "clip_range": number(0.0, lo_open=True),
        "ent_coef": number(0.0), "vf_coef": number(0.0), "max_grad_norm": number(0.0, lo_open=True),
        "target_kl": optional(number(0.0, lo_open=True)), "normalize_advantage": boolean,
    },
    "evaluation": {"every": integer(0, MAX_STEPS), "at_start": boolean, "games": integer(1, 10**7),
                   "final_games": integer(1, 10**7), "baselines": agent_specs, "processes": integer(1, 256),
                   "seed": integer(0, MAX_SEED), "replays": integer(0, 1000)},
    "checkpoint": {"every": integer(1, MAX_STEPS), "keep": integer(1, 10_000)},
    "output": {"dir": path_text, "tensorboard": boolean, "progress": boolean, "plot": boolean},
}


# ---------------------------------------------------------------------------------------------- YAML
@functools.lru_cache(maxsize=None)
def _loader() -> Any:
    """``yaml.SafeLoader`` that also reads ``1e-4`` (exponent, no dot) as a number, as YAML 1.2 does."""
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


def parse_yaml(text: str, where: str) -> Any:
    """YAML text read safely (no Python objects); ``where`` (e.g. ``"file.yaml: "``) starts every error."""
    import yaml

    try:
        value = yaml.load(text, Loader=_loader())  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}not valid YAML: {str(exc)[:1000]}") from None
    except RecursionError:
        raise ConfigError(f"{where}the YAML is nested too deeply (a config nests at most {MAX_DEPTH} levels)") \
            from None
    if _too_deep(value):
        raise ConfigError(f"{where}the YAML is nested too deeply (a config nests at most {MAX_DEPTH} levels)")
    return value


def read_yaml(path: Union[str, Path], missing_hint: str = "") -> Any:
    """A YAML file read safely: UTF-8, at most 1 MiB, :func:`parse_yaml`; every failure a ConfigError."""
    p = Path(path)
    try:
        is_dir, size = p.is_dir(), p.stat().st_size
    except FileNotFoundError:
        raise ConfigError(f"config file {p} does not exist{missing_hint}") from None
    except OSError as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. a NUL in the path
        raise ConfigError(f"config file {short_repr(str(p))}: not a usable path ({exc})") from None
    if is_dir:
        raise ConfigError(f"config file {p} is a directory, not a YAML file")
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)  # not read_bytes: a device file (/dev/zero) never ends
    except OSError as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES or size > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {p} is more than {MAX_CONFIG_BYTES:,} bytes; a config is at most that")
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start} is {data[exc.start:exc.start + 1]!r}); a config "
                          "is a UTF-8 YAML file") from None
    return parse_yaml(source, f"{p}: ")


# ---------------------------------------------------------------------------------------------- merging
def _unknown(key: str, allowed: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}unknown key {short_repr(key)}{hint}; allowed keys: {allowed}")


def _merge(defaults: Mapping[str, Any], given: Mapping[str, Any], schema: Mapping[str, Any], prefix: str,
           where: str) -> dict[str, Any]:
    out = copy.deepcopy(dict(defaults))
    for key, value in given.items():
        dotted = prefix + str(key)
        if not isinstance(key, str) or key not in schema:
            raise _unknown(str(key), sorted(schema), f"{where}{prefix[:-1]}: " if prefix else where)
        check = schema[key]
        if isinstance(check, dict):
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}{dotted}: must be a mapping of {sorted(check)}, got {short_repr(value)}")
            out[key] = _merge(defaults[key], value, check, dotted + ".", where)
        else:
            out[key] = value
    return out


def _check(cfg: Mapping[str, Any], schema: Mapping[str, Any], prefix: str, where: str) -> None:
    for key, check in schema.items():
        if check is None:
            continue
        dotted = prefix + key
        if isinstance(check, dict):
            _check(cfg[key], check, dotted + ".", where)
            continue
        wanted = check(cfg[key])
        if wanted is not None:
            raise ConfigError(f"{where}{dotted}: must be {wanted}, got {short_repr(cfg[key])}")


def _opponents(value: Any, where: str) -> dict[str, float]:
    """Normalise the opponents mixture to {spec: weight}."""
    what = ("opponents: give a mapping {spec: weight}, a list of specs, or a list of {agent: spec, weight: w}, "
            "e.g. {random: 1, greedy: 2}")
    mixture: dict[str, float] = {}
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
        raise ConfigError(f"{where}opponents: at most {MAX_SPECS} agent specs, got {len(items)}")
    for spec, weight in items:
        if text(spec) is not None:
            raise ConfigError(f"{where}opponents: an agent spec must be {text(spec)}, got {short_repr(spec)}")
        if not is_number(weight) or not 0 <= weight <= 1e9:
            raise ConfigError(f"{where}opponents.{spec}: the weight must be a finite number from 0 to 1e9, "
                              f"got {short_repr(weight)}")
        mixture[spec.strip()] = mixture.get(spec.strip(), 0.0) + float(weight)
    if not mixture or sum(mixture.values()) <= 0:
        raise ConfigError(f"{where}opponents: at least one opponent needs a weight > 0, got {short_repr(value)}")
    return mixture


def rollout_size(cfg: Mapping[str, Any]) -> int:
    """Env steps per PPO rollout: ``n_envs * ppo.n_steps``."""
    return int(cfg["n_envs"]) * int(cfg["ppo"]["n_steps"])


def resolve_sections(raw: Optional[Mapping[str, Any]], defaults: Mapping[str, Any], schema: Mapping[str, Any],
                     where: str) -> tuple[dict[str, Any], Any]:
    """The checks every training config shares (this schema and RLlib's): merge ``raw`` over ``defaults``,
    normalise ``opponents``, check every value against ``schema`` and build the rules. Returns the config
    and its :class:`~allfives_env.core.rules.Rules`."""
    from allfives_env.core.rules import Rules

    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}a config must be a mapping of sections (name, rules, opponents, ppo, ...), "
                          f"got {type(raw).__name__}")
    if _too_deep(raw):
        raise ConfigError(f"{where}the config is nested too deeply (a config nests at most {MAX_DEPTH} levels)")
    cfg = _merge(defaults, raw, schema, "", where)
    if cfg["rules"] is None:
        cfg["rules"] = {}
    if not isinstance(cfg["rules"], Mapping):
        raise ConfigError(f"{where}rules: must be a mapping of rules options, got {short_repr(cfg['rules'])}")
    cfg["rules"] = dict(cfg["rules"])
    cfg["opponents"] = _opponents(cfg["opponents"], where)
    _check(cfg, schema, "", where)
    try:
        rules = Rules.from_options(cfg["rules"])
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}rules: {exc}") from None
    return cfg, rules


def check_agent_specs(specs: list[tuple[str, str]], rules: Any, where: str) -> None:
    """Build each ``(section, spec)`` agent once, so a bad spec or a policy file for other rules fails now."""
    from allfives_env.agents import make_agent

    for section, spec in specs:
        try:
            agent = make_agent(spec)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}{section}: {exc}") from None
        check_rules = getattr(getattr(agent, "policy", None), "check_rules", None)
        if check_rules is not None:
            try:
                check_rules(rules)
            except ValueError as exc:
                raise ConfigError(f"{where}{section}: {exc}") from None


def validate_config(raw: Optional[Mapping[str, Any]], source: str = "") -> dict[str, Any]:
    """Merge ``raw`` over :data:`DEFAULTS`, check everything, and return the resolved config.

    Rules options, agent specs (built once with ``make_agent``) and the policy files they name are
    checked too, so a bad config fails here and not minutes into a run.
    """
    where = f"{source}: " if source else ""
    cfg, rules = resolve_sections(raw, DEFAULTS, SCHEMA, where)
    seat = cfg["env"]["seat"]
    if seat is not None and seat >= rules.num_players:
        raise ConfigError(f"{where}env.seat: must be null or 0..{rules.num_players - 1} for "
                          f"{rules.num_players} players, got {seat}")
    if cfg["network"]["action_scorer"] is not None and not cfg["env"]["action_features"]:
        raise ConfigError(f"{where}network.action_scorer: scores the placements' feature rows, so it needs "
                          f"env.action_features: true (or action_scorer: null), got {cfg['network']['action_scorer']!r}")
    if cfg["env"]["partner"] is not None and not rules.partnership:
        raise ConfigError(f"{where}env.partner: only a partnership game has a partner seat "
                          f"(rules.num_players: 4), got partner {cfg['env']['partner']!r}")
    ppo = cfg["ppo"]
    rollout = rollout_size(cfg)
    if rollout > MAX_ROLLOUT:
        raise ConfigError(f"{where}n_envs x ppo.n_steps: {cfg['n_envs']} x {ppo['n_steps']} = {rollout:,} steps a "
                          f"rollout; give at most {MAX_ROLLOUT:,}")
    if cfg["vec_env"] == "subproc" and cfg["n_envs"] > 256:
        raise ConfigError(f"{where}n_envs: {cfg['n_envs']} with vec_env: subproc would start one process per env; "
                          "give at most 256, or vec_env: batched (workers processes in all)")
    if ppo["batch_size"] < 2 and ppo["normalize_advantage"]:
        raise ConfigError(f"{where}ppo.batch_size: 1 with ppo.normalize_advantage: true divides each minibatch's "
                          "advantages by their standard deviation, which one sample does not have (nan); give at "
                          "least 2, or normalize_advantage: false")
    if ppo["batch_size"] > rollout:
        raise ConfigError(f"{where}ppo.batch_size: {ppo['batch_size']} is more than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); give at most {rollout}")
    if cfg["checkpoint"]["every"] < rollout:
        raise ConfigError(f"{where}checkpoint.every: {cfg['checkpoint']['every']} is shorter than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); checkpoints are taken between rollouts, give "
                          f"at least {rollout}")
    specs = [("opponents", s) for s in cfg["opponents"]] + [("evaluation.baselines", s) for s in
                                                           cfg["evaluation"]["baselines"]]
    if cfg["env"]["partner"] is not None:
        specs.append(("env.partner", cfg["env"]["partner"]))
    if cfg["imitation"]["teacher"] is not None:
        specs.append(("imitation.teacher", cfg["imitation"]["teacher"]))
    check_agent_specs(specs, rules, where)
    return cfg


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
    return out


def load_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> dict[str, Any]:
    """Read a YAML config, apply ``--set`` overrides and validate it."""
    raw = read_yaml(path, " (the configs ship in configs/, e.g. configs/default.yaml)")
    if overrides:
        raw = apply_overrides(raw, overrides, str(path))
    return validate_config(raw, str(path))
