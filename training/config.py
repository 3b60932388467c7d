"""Training configs: a YAML file validated against a schema, with every default written down here.

A config is a mapping of sections; anything left out takes the default below. Unknown keys, wrong types
and out-of-range values fail with :class:`ConfigError`, naming the file, the dotted key, the value and
what is allowed (with a "did you mean" for misspelt keys). ``allfives train --print-config`` shows the
resolved config.

Schema (defaults in brackets)::

    name: str                 [run]        run name; the run directory is <output.dir>/<name>
    seed: int >= 0            [0]          seeds torch, the envs, and the evaluation deals
    total_steps: int >= 1     [300000]     learner env steps (decisions) to train for
    n_envs: int >= 1          [32]         parallel envs
    vec_env: str              [batched]    batched | subproc | dummy (see training/vec_env.py)
    workers: int >= 1         [2]          processes of the batched vec env
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
                                           of {agent: spec, weight: w}); drawn afresh every episode
    league:
      enabled: bool           [false]      add frozen snapshots of the learner to the opponents
      snapshot_every: int     [100000]     steps between snapshots
      max_snapshots: int      [5]          keep the newest N snapshots in the mixture
      weight: float in [0,1)  [0.5]        share of the opponent draws that go to snapshots
                                           (split evenly between them); baselines share the rest
    imitation:                             warm start: clone a teacher before PPO (training/imitation.py)
      teacher: str | null     [null]       agent spec of the teacher (e.g. expert); null = no warm start
      decisions: int >= 1     [200000]     teacher decisions recorded in the run's env and opponents
      epochs: int >= 1        [8]
      batch_size: int >= 1    [1024]
      learning_rate: float    [0.001]
      value: bool             [true]       also fit the critic to the recorded returns
      processes: int >= 1     [2]          worker processes that play the teacher's games
    network:
      hidden: [int, ...]      [[64, 64]]   hidden layers of the actor and of the critic (separate nets)
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
      baselines: [spec, ...]  [[random, greedy, expert]]
      processes: int >= 1     [2]
      seed: int >= 0          [12345]      the same deals at every evaluation, so the curve is comparable
      replays: int >= 0       [2]          games per baseline of the final evaluation saved as replays in
                                           <run>/replays/<baseline>/ (allfives replay F --html OUT.html)
    checkpoint:
      every: int >= 1         [50000]      steps between checkpoints (a killed run loses at most this)
      keep: int >= 1          [3]          checkpoints kept on disk (the newest)
    output:
      dir: str                [runs]
      tensorboard: bool       [true]       TensorBoard logs in <run>/tb
      progress: bool          [true]       a progress bar on stderr
      plot: bool              [true]       learning_curve.png at the end (needs matplotlib)
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

from allfives_env.core.errors import AllFivesError

__all__ = ["ConfigError", "DEFAULTS", "load_config", "validate_config", "apply_overrides", "resolve_sections",
           "rollout_size"]


class ConfigError(AllFivesError, ValueError):
    """A training config that cannot be used as written."""


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


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int(lo: int = 0) -> Check:
    return lambda v: None if _is_int(v) and v >= lo else f"an integer >= {lo}"


def _num(lo: float = 0.0, hi: Optional[float] = None, lo_open: bool = False, hi_open: bool = False) -> Check:
    def check(v: Any) -> Optional[str]:
        ok = _is_num(v) and (v > lo if lo_open else v >= lo) and (hi is None or (v < hi if hi_open else v <= hi))
        if ok:
            return None
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        return f"a number in {left}{lo}, {'inf' if hi is None else hi}{right}"
    return check


def _choice(*options: Any) -> Check:
    return lambda v: None if v in options else f"one of {list(options)}"


def _bool(v: Any) -> Optional[str]:
    return None if isinstance(v, bool) else "true or false"


def _str(v: Any) -> Optional[str]:
    return None if isinstance(v, str) and v.strip() else "a non-empty string"


def _optional(check: Check) -> Check:
    return lambda v: None if v is None else (None if check(v) is None else f"null or {check(v)}")


def _name(v: Any) -> Optional[str]:
    if not isinstance(v, str) or not v.strip():
        return "a non-empty string"
    if any(c in v for c in "/\\") or v in (".", ".."):
        return "a plain name (no slashes): it names the run directory"
    return None


def _hidden(v: Any) -> Optional[str]:
    ok = isinstance(v, list) and len(v) >= 1 and all(_is_int(h) and h >= 1 for h in v)
    return None if ok else "a non-empty list of positive integers, e.g. [64, 64]"


def _sizes(v: Any) -> Optional[str]:
    ok = isinstance(v, list) and all(_is_int(h) and h >= 1 for h in v)
    return None if ok else "a list of positive integers (may be empty), e.g. [32]"


def _specs(v: Any) -> Optional[str]:
    ok = isinstance(v, list) and len(v) >= 1 and all(isinstance(s, str) and s.strip() for s in v)
    return None if ok else "a non-empty list of agent specs, e.g. [random, greedy, expert]"


SCHEMA: dict[str, Any] = {
    "name": _name, "seed": _int(0), "total_steps": _int(1), "n_envs": _int(1), "vec_env": _choice(*VEC_ENVS),
    "workers": _int(1),
    "rules": None,  # checked by Rules.from_options
    "env": {"reward": _choice("win", "points"), "episode": _choice("game", "hand"), "seat": _optional(_int(0)),
            "partner": _optional(_str), "action_features": _bool},
    "opponents": None,  # checked below
    "league": {"enabled": _bool, "snapshot_every": _int(1), "max_snapshots": _int(1),
               "weight": _num(0.0, 1.0, hi_open=True)},
    "imitation": {"teacher": _optional(_str), "decisions": _int(1), "epochs": _int(1), "batch_size": _int(1),
                  "learning_rate": _num(0.0, lo_open=True), "value": _bool, "processes": _int(1)},
    "network": {"hidden": _hidden, "activation": _choice(*ACTIVATIONS), "action_scorer": _optional(_sizes)},
    "ppo": {
        "learning_rate": _num(0.0, lo_open=True), "n_steps": _int(1), "batch_size": _int(1), "n_epochs": _int(1),
        "gamma": _num(0.0, 1.0), "gae_lambda": _num(0.0, 1.0), "clip_range": _num(0.0, lo_open=True),
        "ent_coef": _num(0.0), "vf_coef": _num(0.0), "max_grad_norm": _num(0.0, lo_open=True),
        "target_kl": _optional(_num(0.0, lo_open=True)), "normalize_advantage": _bool,
    },
    "evaluation": {"every": _int(0), "at_start": _bool, "games": _int(1), "final_games": _int(1),
                   "baselines": _specs, "processes": _int(1), "seed": _int(0), "replays": _int(0)},
    "checkpoint": {"every": _int(1), "keep": _int(1)},
    "output": {"dir": _str, "tensorboard": _bool, "progress": _bool, "plot": _bool},
}


def _unknown(key: str, allowed: list[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}unknown key {key!r}{hint}; allowed keys: {allowed}")


def _merge(defaults: Mapping[str, Any], given: Mapping[str, Any], schema: Mapping[str, Any], prefix: str,
           where: str) -> dict[str, Any]:
    out = copy.deepcopy(dict(defaults))
    for key, value in given.items():
        dotted = prefix + str(key)
        if key not in schema:
            raise _unknown(str(key), sorted(schema), f"{where}{prefix[:-1]}: " if prefix else where)
        check = schema[key]
        if isinstance(check, dict):
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}{dotted}: must be a mapping of {sorted(check)}, got {value!r}")
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
            raise ConfigError(f"{where}{dotted}: must be {wanted}, got {cfg[key]!r}")


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
                raise ConfigError(f"{where}{what}; got the entry {item!r}")
    else:
        raise ConfigError(f"{where}{what}; got {value!r}")
    for spec, weight in items:
        if not isinstance(spec, str) or not spec.strip():
            raise ConfigError(f"{where}opponents: an agent spec must be a non-empty string, got {spec!r}")
        if not _is_num(weight) or weight < 0:
            raise ConfigError(f"{where}opponents.{spec}: the weight must be a number >= 0, got {weight!r}")
        mixture[spec.strip()] = mixture.get(spec.strip(), 0.0) + float(weight)
    if not mixture or sum(mixture.values()) <= 0:
        raise ConfigError(f"{where}opponents: at least one opponent needs a weight > 0, got {value!r}")
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
    cfg = _merge(defaults, raw, schema, "", where)
    if not isinstance(cfg["rules"], Mapping):
        raise ConfigError(f"{where}rules: must be a mapping of rules options, got {cfg['rules']!r}")
    cfg["rules"] = dict(cfg["rules"])
    cfg["opponents"] = _opponents(cfg["opponents"], where)
    _check(cfg, schema, "", where)
    try:
        rules = Rules.from_options(cfg["rules"])
    except ValueError as exc:
        raise ConfigError(f"{where}rules: {exc}") from None
    return cfg, rules


def validate_config(raw: Optional[Mapping[str, Any]], source: str = "") -> dict[str, Any]:
    """Merge ``raw`` over :data:`DEFAULTS`, check everything, and return the resolved config.

    Rules options, agent specs (built once with ``make_agent``) and the policy files they name are
    checked too, so a bad config fails here and not minutes into a run.
    """
    where = f"{source}: " if source else ""
    cfg, rules = resolve_sections(raw, DEFAULTS, SCHEMA, where)
    from allfives_env.agents import make_agent

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
    specs = [("opponents", s) for s in cfg["opponents"]] + [("evaluation.baselines", s) for s in
                                                           cfg["evaluation"]["baselines"]]
    if cfg["env"]["partner"] is not None:
        specs.append(("env.partner", cfg["env"]["partner"]))
    if cfg["imitation"]["teacher"] is not None:
        specs.append(("imitation.teacher", cfg["imitation"]["teacher"]))
    for section, spec in specs:
        try:
            agent = make_agent(spec)
        except ValueError as exc:
            raise ConfigError(f"{where}{section}: {exc}") from None
        check_rules = getattr(getattr(agent, "policy", None), "check_rules", None)
        if check_rules is not None:
            try:
                check_rules(rules)
            except ValueError as exc:
                raise ConfigError(f"{where}{section}: {exc}") from None
    ppo = cfg["ppo"]
    rollout = rollout_size(cfg)
    if ppo["batch_size"] > rollout:
        raise ConfigError(f"{where}ppo.batch_size: {ppo['batch_size']} is more than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); give at most {rollout}")
    if cfg["checkpoint"]["every"] < rollout:
        raise ConfigError(f"{where}checkpoint.every: {cfg['checkpoint']['every']} is shorter than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); checkpoints are taken between rollouts, give "
                          f"at least {rollout}")
    return cfg


def apply_overrides(raw: Optional[Mapping[str, Any]], overrides: list[str]) -> dict[str, Any]:
    """``["ppo.learning_rate=1e-4", "total_steps=50000"]`` applied to a raw config (values read as YAML)."""
    import yaml

    out = copy.deepcopy(dict(raw or {}))
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set needs KEY=VALUE with a dotted key (e.g. ppo.learning_rate=1e-4), got {item!r}")
        key, text = item.split("=", 1)
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"--set {item!r}: the value is not valid YAML ({exc})") from None
        parts = [p for p in key.strip().split(".") if p]
        if not parts:
            raise ConfigError(f"--set {item!r}: empty key")
        node = out
        for p in parts[:-1]:
            child = node.get(p)
            if not isinstance(child, dict):
                child = {}
                node[p] = child
            node = child
        node[parts[-1]] = value
    return out


def load_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> dict[str, Any]:
    """Read a YAML config, apply ``--set`` overrides and validate it."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ConfigError(f"config file {p} does not exist (the configs ship in configs/, e.g. "
                          f"configs/default.yaml)") from None
    except OSError as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from None
    if overrides:
        raw = apply_overrides(raw, overrides)
    return validate_config(raw, str(p))
