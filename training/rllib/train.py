"""``allfives train-rllib``: multi-agent PPO on Ray RLlib (new API stack), locally or on a Ray cluster.

    allfives train-rllib --config configs/rllib_selfplay.yaml                 # a local Ray
    allfives train-rllib --config configs/rllib_selfplay.yaml --address auto  # an existing cluster
    allfives train-rllib --resume runs/rllib_selfplay                         # continue from a checkpoint

Every seat is an agent of :class:`training.rllib.env.AllFivesMultiAgentEnv`; ``policies: shared`` maps
them all to one :class:`~training.rllib.module.MaskedPPOModule` (``per_team``: one module per side), and
with ``learners: one_side`` the other sides are played inside the env by registry agents (fixed
opponents). Every ``evaluation.every`` iterations and at the end, each module is exported to the numpy
policy file format (``<run>/policy_<module>.npz``) and measured with the duplicate-deal harness against
the baselines, exactly like the stable-baselines3 runs. Checkpoints (``algo.save_to_path``) go to
``<run>/checkpoints/iter_<n>``; ``--resume`` restores the newest.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

from training.config import ConfigError

__all__ = ["add_train_rllib_parser", "run_train_rllib", "train_rllib"]

ENV_NAME = "allfives_multiagent"


def _module_ids(cfg: dict) -> list[str]:
    from allfives_env.core.rules import Rules

    if cfg["policies"] == "shared":
        return ["shared"]
    rules = Rules.from_options(cfg["rules"])
    return [f"team_{side}" for side in sorted({rules.side_of(s) for s in range(rules.num_players)})]


def _map_agent(agent_id: str, episode: Any = None, *, rules_options: dict, policies: str, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn`` (a module-level function, so it pickles to the env runners)."""
    from allfives_env.core.rules import Rules

    from training.rllib.env import policy_for

    return policy_for(agent_id, Rules.from_options(rules_options), policies)


def env_config(cfg: dict) -> dict:
    """The :class:`AllFivesMultiAgentEnv` config of a run."""
    return {"rules": dict(cfg["rules"]), "reward": cfg["env"]["reward"], "episode": cfg["env"]["episode"],
            "action_features": cfg["env"]["action_features"], "learners": cfg["learners"],
            "opponents": dict(cfg["opponents"])}


def _make_env(config: dict) -> Any:
    from training.rllib.env import AllFivesMultiAgentEnv

    return AllFivesMultiAgentEnv(config)


def build_algo_config(cfg: dict) -> Any:
    """The RLlib ``PPOConfig`` of a validated run config."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib.env import AllFivesMultiAgentEnv
    from training.rllib.module import MaskedPPOModule

    register_env(ENV_NAME, _make_env)
    probe = AllFivesMultiAgentEnv(env_config(cfg))
    obs_space = probe.observation_spaces[probe.possible_agents[0]]
    act_space = probe.action_spaces[probe.possible_agents[0]]
    ids = _module_ids(cfg)
    model_config = {"hidden": list(cfg["network"]["hidden"]), "activation": cfg["network"]["activation"]}
    specs = {m: RLModuleSpec(module_class=MaskedPPOModule, observation_space=obs_space, action_space=act_space,
                             model_config=model_config) for m in ids}
    ppo, runners = cfg["ppo"], cfg["env_runners"]
    mapping = functools.partial(_map_agent, rules_options=dict(cfg["rules"]), policies=cfg["policies"])
    return (
        PPOConfig()
        # RLlib's env pre-check steps with unmasked random actions, which this env refuses as illegal;
        # tests/test_rllib.py checks the adapter against the MultiAgentEnv API instead
        .environment(ENV_NAME, env_config=env_config(cfg), disable_env_checking=True)
        .multi_agent(policies=set(ids), policy_mapping_fn=mapping, policies_to_train=ids)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .env_runners(num_env_runners=runners["num_env_runners"],
                     num_envs_per_env_runner=runners["num_envs_per_env_runner"],
                     num_cpus_per_env_runner=runners["num_cpus_per_env_runner"])
        .learners(num_learners=0)
        .training(lr=ppo["lr"], train_batch_size_per_learner=ppo["train_batch_size"],
                  minibatch_size=ppo["minibatch_size"], num_epochs=ppo["num_epochs"], gamma=ppo["gamma"],
                  lambda_=ppo["lambda"], clip_param=ppo["clip_param"], entropy_coeff=ppo["entropy_coeff"],
                  vf_loss_coeff=ppo["vf_loss_coeff"], grad_clip=ppo["grad_clip"])
        .debugging(seed=cfg["seed"])
    )


def _steps(result: dict) -> int:
    """Env steps sampled so far (all agents), from an RLlib result dict."""
    for keys in (("num_env_steps_sampled_lifetime",), ("env_runners", "num_env_steps_sampled_lifetime")):
        node: Any = result
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, (int, float)):
            return int(node)
    return 0


def _episode_return(result: dict) -> Optional[float]:
    value = (result.get("env_runners") or {}).get("episode_return_mean")
    return float(value) if isinstance(value, (int, float)) else None


class RLlibRun:
    """One ``train-rllib`` run: the algorithm, its evaluations and checkpoints."""

    def __init__(self, cfg: dict, run_dir: Path, out: Optional[TextIO] = None) -> None:
        from allfives_env.core.rules import Rules

        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.rules = Rules.from_options(cfg["rules"])
        self.out = sys.stdout if out is None else out
        self.history: list[dict] = []
        self.iteration = 0
        self.algo: Any = None

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def export(self, folder: Path, tag: str) -> dict[str, Path]:
        """Each module's actor as ``<folder>/policy_<module><tag>.npz``."""
        from training.rllib.module import export_module

        paths = {}
        for module_id in _module_ids(self.cfg):
            path = folder / f"policy_{module_id}{tag}.npz"
            meta = {"iteration": self.iteration, "run": self.cfg["name"], "module": module_id, "config": self.cfg}
            paths[module_id] = export_module(self.algo.get_module(module_id), path, self.rules, metadata=meta)
        return paths

    def evaluate(self, final: bool = False) -> list[dict]:
        """Export every module and play it against each baseline on duplicate deals."""
        from allfives_env.evaluation import evaluate, save_sample_games

        from training.report import format_line, history_row, tag

        ev = self.cfg["evaluation"]
        if final:
            paths = self.export(self.run_dir, "")
        else:
            paths = self.export(self.run_dir / "evals", f"_iter{self.iteration:05d}")
        rows = []
        for module_id, path in paths.items():
            for baseline in ev["baselines"]:
                match = evaluate([f"ppo:path={path}", baseline], self.rules, games=ev["final_games"] if final
                                 else ev["games"], seed=ev["seed"], processes=ev["processes"], progress=False)
                row = history_row(self.iteration, baseline, match, final)
                row["module"] = module_id
                rows.append(row)
                if final and ev["replays"]:
                    save_sample_games([f"ppo:path={path}", baseline], self.rules,
                                      self.run_dir / "replays" / f"{module_id}_vs_{tag(baseline)}", ev["replays"],
                                      seed=ev["seed"])
        self.history.extend(rows)
        for module_id in paths:
            self.say(format_line(self.iteration, [r for r in rows if r["module"] == module_id],
                                 at=f"iteration {self.iteration} [{module_id}]"))
        return rows

    def checkpoint(self) -> Path:
        folder = self.run_dir / "checkpoints"
        path = folder / f"iter_{self.iteration:06d}"
        self.algo.save_to_path(str(path))
        (path / "allfives_run.json").write_text(json.dumps({"iteration": self.iteration, "history": self.history}))
        kept = sorted(p for p in folder.iterdir() if p.name.startswith("iter_"))
        for old in kept[:-self.cfg["checkpoint"]["keep"]]:
            shutil.rmtree(old, ignore_errors=True)
        return path

    def run(self, resume_from: Optional[Path] = None) -> dict:
        import yaml

        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(yaml.safe_dump(self.cfg, sort_keys=False))
        self.algo = build_algo_config(self.cfg).build_algo()
        if resume_from is not None:
            self.algo.restore_from_path(str(resume_from))
            state = json.loads((resume_from / "allfives_run.json").read_text())
            self.iteration, self.history = int(state["iteration"]), list(state["history"])
            self.say(f"resumed {self.run_dir} at iteration {self.iteration}")
        cfg = self.cfg
        self.say(f"training in {self.run_dir}: RLlib PPO, modules {_module_ids(cfg)}, learners {cfg['learners']}, "
                 f"{cfg['env_runners']['num_env_runners']} env runners x "
                 f"{cfg['env_runners']['num_envs_per_env_runner']} envs, {cfg['iterations']} iterations of "
                 f"{cfg['ppo']['train_batch_size']:,} env steps")
        first_steps: Optional[int] = None  # the first iteration includes start-up: the rate leaves it out
        steps, train_seconds = 0, 0.0
        try:
            while self.iteration < cfg["iterations"]:
                t0 = time.perf_counter()
                result = self.algo.train()
                self.iteration += 1
                steps = _steps(result)
                if first_steps is None:
                    first_steps = steps
                else:
                    train_seconds += time.perf_counter() - t0
                ret = _episode_return(result)
                rate = (steps - first_steps) / train_seconds if train_seconds else None
                self.say(f"iteration {self.iteration}/{cfg['iterations']}: {steps:,} env steps"
                         + (f", {rate:,.0f} env steps/s" if rate else "")
                         + (f", mean episode return {ret:+.3f}" if ret is not None else ""))
                every = cfg["evaluation"]["every"]
                if every and self.iteration % every == 0 and self.iteration < cfg["iterations"]:
                    self.evaluate()
                if self.iteration % cfg["checkpoint"]["every"] == 0:
                    self.checkpoint()
            rows = self.evaluate(final=True)
            path = self.checkpoint()
        finally:
            self.algo.stop()
        rate = (steps - (first_steps or 0)) / train_seconds if train_seconds else float("nan")
        summary = {"run_dir": str(self.run_dir), "iterations": self.iteration, "env_steps": steps,
                   "env_steps_per_second_after_first_iteration": rate, "final": rows, "checkpoint": str(path)}
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
        from training.report import write_history

        write_history(self.run_dir / "eval_history.csv", self.history)
        self.say(f"\n{steps:,} env steps; {rate:,.0f} env steps/s in training iterations after the first. Policies: "
                 + ", ".join(str(self.run_dir / f"policy_{m}.npz") for m in _module_ids(cfg))
                 + f"\ncheckpoint: {path}")
        return summary


def train_rllib(config: Any, run_dir: Optional[str] = None, resume: Optional[str] = None,
                overrides: Sequence[str] = (), address: Optional[str] = None, out: Optional[TextIO] = None) -> dict:
    """Run an RLlib config (a path or a mapping) on a local Ray, or on the cluster at ``address``."""
    import ray

    from training.rllib.config import load_rllib_config, validate_rllib_config
    from training.config import apply_overrides

    resume_from = None
    if resume:
        target = Path(resume)
        saved = target / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"--resume: {target} is not an RLlib run directory (it has no config.yaml)")
        cfg = load_rllib_config(saved, list(overrides))
        points = sorted((target / "checkpoints").glob("iter_*")) if (target / "checkpoints").is_dir() else []
        if not points:
            raise ConfigError(f"--resume: {target} has no checkpoint yet (checkpoints/iter_*)")
        resume_from, run_path = points[-1], target
    else:
        if isinstance(config, (str, os.PathLike)):
            cfg = load_rllib_config(config, list(overrides))
        else:
            cfg = validate_rllib_config(apply_overrides(config, list(overrides)), "config")
        run_path = Path(run_dir) if run_dir else Path(cfg["output"]["dir"]) / cfg["name"]
        if run_path.exists() and any(run_path.iterdir()):
            raise ConfigError(f"the run directory {run_path} exists and is not empty: continue it with --resume "
                              f"{run_path}, or choose another --run-dir")
    started = False
    if not ray.is_initialized():
        # the repository root on the workers' path, so they import training/ from this checkout too
        root = str(Path(__file__).resolve().parents[2])
        runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}}
        ray.init(address=address, include_dashboard=False, log_to_driver=False, runtime_env=runtime_env)
        started = True
    try:
        return RLlibRun(cfg, run_path, out).run(resume_from)
    finally:
        if started:
            ray.shutdown()


def add_train_rllib_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train-rllib`` subcommand to the ``allfives`` CLI."""
    p = subparsers.add_parser(
        "train-rllib", help="multi-agent PPO on Ray RLlib (needs the [rllib] extra)",
        description="Train All Fives policies with RLlib's multi-agent PPO on a local Ray or an existing cluster "
                    "(--address). Needs pip install -e '.[rllib]'.")
    p.add_argument("--config", default="configs/rllib_selfplay.yaml", help="YAML config (configs/rllib_*.yaml)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (e.g. auto, or ray://host:10001); default: start a local Ray")
    p.add_argument("--run-dir", default=None, help="the run directory (default <output.dir>/<name>)")
    p.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue RUN_DIR from its newest checkpoint")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set iterations=50 --set env_runners.num_env_runners=8")
    return p


def run_train_rllib(args: argparse.Namespace) -> int:
    """Run the ``train-rllib`` subcommand; returns the exit status."""
    import importlib.util

    missing = [m for m in ("ray", "torch", "yaml") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"allfives train-rllib needs {', '.join(missing)}: pip install -e '.[rllib]'", file=sys.stderr)
        return 2
    train_rllib(args.config, run_dir=args.run_dir, resume=args.resume, overrides=args.overrides,
                address=args.address)
    return 0
