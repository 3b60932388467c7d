"""``allfives train-rllib``: PPO on Ray RLlib (new API stack), locally or on a Ray cluster.

    allfives train-rllib                                                      # configs/rllib_default.yaml
    allfives train-rllib --config configs/rllib_selfplay.yaml --address auto  # an existing cluster
    allfives train-rllib --resume runs/rllib_default                          # continue from a checkpoint

``learners: one_seat`` (the default config) is the stable-baselines3 recipe on RLlib: RLlib's single-agent env
runners each step one compiled batch of ``num_envs_per_env_runner`` games (``AllFives-v0``'s vector env, taken
as RLlib's vector env through ``gym_env_vectorize_mode="vector_entry_point"``:
:mod:`allfives_training.rllib.vector_env`), the learner's seat against batch opponents, and one module
``default_policy`` learns. With ``learners: all`` or ``one_side``, every seat is an agent of :class:`allfives_training.rllib.env.AllFivesMultiAgentEnv`; ``policies: shared`` maps
them all to one :class:`~allfives_training.rllib.module.MaskedPPOModule` (``per_team``: one module per side), and
with ``learners: one_side`` the other sides are played inside the env by registry agents (fixed
opponents). Every ``evaluation.every`` iterations and at the end, each module is exported to the numpy
policy file format (``<run>/policy_<module>.npz``) and measured with the duplicate-deal harness against
the baselines, exactly like the stable-baselines3 runs; the final table is printed and written as
``allfives train`` writes it (``evaluation.md``/``.csv``/``.json``, with ``eval_history.csv`` and
``summary.json``). A failed env runner ends the run with its error rather than being restarted
(RLlib's default restarts hide an env that raises): ``--resume`` continues from the newest checkpoint.

Checkpoints are ``<run>/checkpoints/iter_<n>.safetensors`` (every module's weights and its optimizer's
tensors, read through RLlib's public ``Algorithm.get_state``) + ``iter_<n>.json`` (iteration, env steps,
evaluation history, the optimizers' hyper-parameters, the tensors file's SHA-256): no pickle anywhere
(:mod:`allfives_training.checkpoint`). RLlib's own checkpoint format (``algo.save_to_path``) pickles, so it is
not used; ``--resume`` builds a fresh algorithm from the run's ``config.yaml``, checks the tensors
against the modules it builds and sets them with ``Algorithm.set_state`` (weights and Adam moments;
env-runner connector states and RLlib's metrics are not carried over, and the env runners are seeded
afresh from ``seed`` and the iteration). Old checkpoint directories (``iter_<n>/``) are refused.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

from allfives_env.core.errors import short_repr
from allfives_training.rllib.algo import build_algo_config, module_ids
from allfives_training.rllib.config import RLLIB_CONFIG_HINT, RLlibConfig, validate_rllib_config
from allfives_training.run_plan import ConfigKind, plan_run
from allfives_training.runs import (
    CHECKPOINTS, checkpoint_folder, create_run_dir, resume_seed, write_run_config, write_summary,
)

__all__ = ["add_train_rllib_parser", "run_train_rllib", "train_rllib", "latest_rllib_checkpoint", "RLlibRun",
           "build_algo_config"]

TRAINER = "rllib-ppo"
_ITER = re.compile(r"^iter_(\d+)\.json$")
_ITER_FILE = re.compile(r"^iter_(\d+)\.(?:json|safetensors)(?:\.tmp)?$")
#: How the evaluation's worker processes start: not forked from the Ray driver, whose Ray threads and signal
#: handlers a forked child would inherit (a child ended mid-wait then dumps Ray's "*** SIGTERM received" stack)
EVALUATION_START = "forkserver"
_LEARNER_PARTS = ["learner_group/learner/rl_module", "learner_group/learner/optimizer"]


def _steps(result: dict) -> int:
    """Env steps sampled so far (all agents), from an RLlib result dict."""
    for keys in (("num_env_steps_sampled_lifetime",), ("env_runners", "num_env_steps_sampled_lifetime")):
        node: Any = result
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, (int, float)):
            return int(node)
    return 0


def latest_rllib_checkpoint(run_dir: Path) -> Optional[tuple[int, Path, dict]]:
    """(iteration, tensors file, checked state) of the newest checkpoint of an RLlib run, or None.

    An RLlib checkpoint directory (``iter_<n>/``, the pickle-based format of earlier versions) is refused
    with a :class:`~allfives_training.checkpoint.CheckpointError`; nothing is unpickled."""
    from allfives_training.checkpoint import newest_state, old_format_error

    folder = checkpoint_folder(run_dir)  # a file there is an error, not "no checkpoint yet"
    if folder is None:
        return None
    old = [p for p in sorted(folder.iterdir()) if p.name.startswith("iter_") and p.is_dir()]
    if old:
        raise old_format_error(old[-1])
    newest = newest_state(folder, _ITER)
    if newest is None:
        return None
    it, path, state = newest
    return it, path.with_suffix(".safetensors"), _check_state(state, path, it)


def _check_state(state: dict, path: Path, iteration: int) -> dict:
    from allfives_training.checkpoint import CheckpointError, check_header, check_history, need

    where = str(path)
    check_header(state, where, TRAINER)
    if need(state, "iteration", "int>=0", where) != iteration:
        raise CheckpointError(f"{where}: says iteration {state['iteration']}, but its name says {iteration}")
    need(state, "env_steps", "int>=0", where)
    state["history"] = check_history(state.get("history"), where)
    if need(state, "tensors", "str", where) != path.with_suffix(".safetensors").name:
        raise CheckpointError(f"{where}: tensors must be {path.with_suffix('.safetensors').name!r}, got "
                              f"{short_repr(state['tensors'])}")
    need(state, "sha256", "sha256", where)
    optimizers = need(state, "optimizers", "dict", where)
    for name, meta in optimizers.items():
        if not isinstance(meta, dict):
            raise CheckpointError(f"{where}: optimizers.{name} must be an object, got {short_repr(meta)}")
        need(meta, "module_id", "str", where, f"optimizers.{name}.")
    return state


def _episode_return(result: dict) -> Optional[float]:
    value = (result.get("env_runners") or {}).get("episode_return_mean")
    return float(value) if isinstance(value, (int, float)) else None


class RLlibRun:
    """One ``train-rllib`` run: the algorithm, its evaluations and checkpoints."""

    def __init__(self, cfg: RLlibConfig, run_dir: Path, out: Optional[TextIO] = None) -> None:
        from allfives_env.core.rules import Rules

        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.rules = Rules.from_options(cfg.rules)
        self.out = sys.stdout if out is None else out
        self.history: list[dict] = []
        self.iteration = 0
        self.env_steps_before = 0  # env steps of the sessions before a resume (RLlib counts this session's)
        self.algo: Any = None

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def export(self, folder: Path, tag: str) -> dict[str, Path]:
        """Each module's actor as ``<folder>/policy_<module><tag>.npz``."""
        from allfives_training.rllib.module import export_module

        paths = {}
        for module_id in module_ids(self.cfg):
            path = folder / f"policy_{module_id}{tag}.npz"
            meta = {"iteration": self.iteration, "run": self.cfg.name, "module": module_id,
                    "config": self.cfg.to_dict()}
            paths[module_id] = export_module(self.algo.get_module(module_id), path, self.rules, metadata=meta)
        return paths

    def evaluate(self, final: bool = False) -> list[dict]:
        """Export every module and play it against each baseline on duplicate deals."""
        from allfives_training.evaluations import play_baselines
        from allfives_training.report import format_line, tag

        if final:
            paths = self.export(self.run_dir, "")
        else:
            paths = self.export(self.run_dir / "evals", f"_iter{self.iteration:05d}")
        rows = []
        for module_id, path in paths.items():
            replays = lambda baseline, m=module_id: self.run_dir / "replays" / f"{m}_vs_{tag(baseline)}"  # noqa: E731
            rows += [{**row, "module": module_id}
                     for row in play_baselines(path, self.rules, self.cfg.evaluation, self.iteration, final, replays,
                                               mp_context=EVALUATION_START)]
        self.history.extend(rows)
        for module_id in paths:
            self.say(format_line(self.iteration, [r for r in rows if r["module"] == module_id],
                                 at=f"iteration {self.iteration} [{module_id}]"))
        return rows

    def _learner_state(self) -> dict:
        """The learner's modules (numpy weights) and optimizers, through RLlib's public ``get_state``."""
        return self.algo.get_state(components=_LEARNER_PARTS)["learner_group"]["learner"]

    def checkpoint(self, env_steps: int) -> Path:
        """Weights and optimizer tensors to ``iter_<n>.safetensors``, then the run state to ``iter_<n>.json``
        (the commit point); keep the newest ``checkpoint.keep``."""
        from allfives_training.checkpoint import FORMAT, commit_checkpoint, module_tensors, split_optimizer

        learner = self._learner_state()
        tensors: dict[str, Any] = {}
        for module_id, weights in learner["rl_module"].items():
            tensors.update(module_tensors(weights, f"module/{module_id}/"))
        optimizers = {}
        for name, entry in learner["optimizer"].items():
            opt_tensors, meta = split_optimizer(entry["state"], f"optimizer/{name}/")
            tensors.update(opt_tensors)
            optimizers[name] = {"module_id": entry["module_id"], **meta}

        def state(tensors_name: str, digest: str) -> dict:
            return {"format": FORMAT, "trainer": TRAINER, "iteration": self.iteration, "env_steps": int(env_steps),
                    "history": self.history, "tensors": tensors_name, "sha256": digest, "optimizers": optimizers,
                    "name": self.cfg.name}

        return commit_checkpoint(self.run_dir / CHECKPOINTS, f"iter_{self.iteration:06d}", tensors, state, _ITER,
                                 _ITER_FILE, self.cfg.checkpoint.keep)

    def restore(self, iteration: int, path: Path, state: dict) -> None:
        """Set a checkpoint (checked, without pickle) into the freshly built algorithm."""
        from allfives_training.checkpoint import CheckpointError, check_module, read_tensors, restore_optimizer

        json_path = path.with_suffix(".json")
        tensors = read_tensors(path, state["sha256"], json_path)
        fresh = self._learner_state()
        modules = {}
        for module_id, weights in fresh["rl_module"].items():
            checked = check_module(weights, tensors, f"module/{module_id}/", path,
                                   f"module {module_id!r} of the config (policies: {self.cfg.policies})")
            modules[module_id] = {k: v.numpy() for k, v in checked.items()}
        saved = state["optimizers"]
        if set(saved) != set(fresh["optimizer"]):
            raise CheckpointError(f"{json_path}: optimizers {sorted(saved)} do not match the config's "
                                  f"{sorted(fresh['optimizer'])} (resume with the run's own config.yaml)")
        optimizers = {}
        for name, entry in fresh["optimizer"].items():
            module_id = entry["module_id"]
            if saved[name]["module_id"] != module_id:
                raise CheckpointError(f"{json_path}: optimizer {name!r} is for module "
                                      f"{short_repr(saved[name]['module_id'])}, the config's for {module_id!r}")
            params = list(self.algo.get_module(module_id).parameters())
            restored = restore_optimizer(entry["state"], params, tensors, saved[name], f"optimizer/{name}/", path,
                                         json_path)
            optimizers[name] = {"module_id": module_id, "state": restored}
        prefixes = tuple(f"module/{m}/" for m in modules) + tuple(f"optimizer/{n}/" for n in optimizers)
        stray = sorted(n for n in tensors if not n.startswith(prefixes))
        if stray:
            raise CheckpointError(f"{path}: unexpected tensors {stray[:5]}")
        self.algo.set_state({"learner_group": {"learner": {"rl_module": modules, "optimizer": optimizers}}})
        self.iteration, self.history = iteration, list(state["history"])
        self.env_steps_before = int(state["env_steps"])

    def _start(self, resume_from: Optional[tuple[int, Path, dict]]) -> None:
        """Build the algorithm (and restore ``resume_from``) and write the run's ``config.yaml``."""
        create_run_dir(self.run_dir)
        if resume_from is None:
            write_run_config(self.run_dir, self.cfg)
            self.algo = build_algo_config(self.cfg).build_algo()
            return
        self.algo = build_algo_config(self.cfg, seed=resume_seed(self.cfg.seed, resume_from[0])).build_algo()
        try:
            self.restore(*resume_from)
        except BaseException:
            self.algo.stop()
            raise
        write_run_config(self.run_dir, self.cfg)  # once the checkpoint loaded
        self.say(f"resumed {self.run_dir} at iteration {self.iteration}")

    def _iterate(self) -> tuple[int, Optional[int], float]:
        """Train to ``iterations``, evaluating and checkpointing when due; (env steps, env steps after the
        first iteration, seconds of the iterations after the first)."""
        cfg = self.cfg
        first_steps: Optional[int] = None  # the first iteration includes start-up: the rate leaves it out
        steps, train_seconds = self.env_steps_before, 0.0
        while self.iteration < cfg.iterations:
            t0 = time.perf_counter()
            result = self.algo.train()
            self.iteration += 1
            steps = self.env_steps_before + _steps(result)
            if first_steps is None:
                first_steps = steps
            else:
                train_seconds += time.perf_counter() - t0
            ret = _episode_return(result)
            rate = (steps - first_steps) / train_seconds if train_seconds else None
            self.say(f"iteration {self.iteration}/{cfg.iterations}: {steps:,} env steps"
                     + (f", {rate:,.0f} env steps/s" if rate else "")
                     + (f", mean episode return {ret:+.3f}" if ret is not None else ""))
            every = cfg.evaluation.every
            if every and self.iteration % every == 0 and self.iteration < cfg.iterations:
                self.evaluate()
            if self.iteration % cfg.checkpoint.every == 0:
                self.checkpoint(steps)
        return steps, first_steps, train_seconds

    def run(self, resume_from: Optional[tuple[int, Path, dict]] = None) -> dict:
        """Train (``resume_from``: a checkpoint of :func:`latest_rllib_checkpoint` to continue)."""
        self._start(resume_from)
        cfg = self.cfg
        self.say(f"training in {self.run_dir}: RLlib PPO, modules {module_ids(cfg)}, learners {cfg.learners}, "
                 f"{cfg.env_runners.num_env_runners} env runners x "
                 f"{cfg.env_runners.num_envs_per_env_runner} envs, {cfg.iterations} iterations of "
                 f"{cfg.ppo.train_batch_size:,} env steps")
        try:
            steps, first_steps, train_seconds = self._iterate()
            rows = self.evaluate(final=True)
            path = self.checkpoint(steps)
        finally:
            self.algo.stop()
        rate = (steps - (first_steps or 0)) / train_seconds if train_seconds else None
        return self._finish(rows, steps, rate, path)

    def _finish(self, rows: list[dict], steps: int, rate: Optional[float], checkpoint: Path) -> dict:
        """The end of a run, as ``allfives train`` ends one: ``evaluation.md``/``.csv``/``.json`` (the final
        table, :func:`~allfives_training.report.write_final`), ``eval_history.csv`` and ``summary.json``, and
        the table printed with the policy files. Several modules (``policies: per_team``) share one table, each
        row's baseline followed by its module."""
        from allfives_training.report import play_line, write_final, write_history

        ev = self.cfg.evaluation
        policies = {m: self.run_dir / f"policy_{m}.npz" for m in module_ids(self.cfg)}

        def labelled(table: list[dict]) -> list[dict]:  # the report's tables have no module column
            return table if len(policies) == 1 else [{**r, "baseline": f"{r['baseline']} [{r['module']}]"}
                                                     for r in table]

        text = write_final(self.run_dir, labelled(rows), {"policy": ", ".join(str(p) for p in policies.values()),
                                                          "steps": steps, "games": ev.final_games, "seed": ev.seed,
                                                          "iterations": self.iteration})
        write_history(self.run_dir / "eval_history.csv", labelled(self.history))
        summary = {"run_dir": str(self.run_dir), "iterations": self.iteration, "env_steps": steps,
                   "env_steps_per_second_after_first_iteration": rate, "final": rows, "checkpoint": str(checkpoint)}
        write_summary(self.run_dir, summary)
        speed = f"{rate:,.0f} env steps/s in training iterations after the first" if rate else "one iteration"
        lines = ["", f"trained to iteration {self.iteration}: {steps:,} env steps; {speed}", "", text, ""]
        lines += [play_line(f"policy {m}", p) for m, p in policies.items()]
        lines.append(f"checkpoint: {checkpoint}")
        self.say("\n".join(lines))
        return summary


#: How ``allfives train-rllib`` reads its configs and finds a run's newest checkpoint (:mod:`..run_plan`).
RLLIB_RUNS = ConfigKind(validate_rllib_config, latest_rllib_checkpoint, "an RLlib run directory", RLLIB_CONFIG_HINT)


def ray_address(address: Optional[str]) -> str:
    """Where ``ray.init`` connects: ``address`` when given, else ``$RAY_ADDRESS`` when set, else ``"local"``, a
    new Ray of this process's own. Ray's own default (no address) joins the newest cluster it finds on the
    machine (``/tmp/ray/ray_current_cluster``), which may be another user's or a finished job's: a run then
    trains on a cluster nobody asked for, or fails when that cluster stops."""
    return address or os.environ.get("RAY_ADDRESS") or "local"


def train_rllib(config: Any, run_dir: Optional[str] = None, resume: Any = None,
                overrides: Sequence[str] = (), address: Optional[str] = None, out: Optional[TextIO] = None) -> dict:
    """Run an RLlib config (a path, a mapping or an :class:`RLlibConfig`) on a local Ray, or on the cluster at
    ``address``. The config, the run directory and any checkpoint are checked before Ray is imported or
    started: a refused command costs a fraction of a second and leaves no Ray process behind."""
    plan = plan_run(RLLIB_RUNS, config, run_dir, resume, overrides)
    import ray

    if plan.resumed and plan.checkpoint is None:
        print(f"{plan.run_dir}: no checkpoint yet; starting this run from iteration 0", file=out or sys.stdout)
    started = False
    if not ray.is_initialized():
        # the workers import allfives_training as installed, like the driver
        ray.init(address=ray_address(address), include_dashboard=False, log_to_driver=False)
        started = True
    try:
        return RLlibRun(plan.cfg, plan.run_dir, out).run(plan.checkpoint)
    finally:
        if started:
            ray.shutdown()


def add_train_rllib_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train-rllib`` subcommand to the ``allfives`` CLI."""
    p = subparsers.add_parser(
        "train-rllib", help="PPO on Ray RLlib, one seat on the batch engine or multi-agent (needs the [rllib] extra)",
        description="Train All Fives policies with RLlib's PPO on a local Ray or an existing cluster "
                    "(--address). Needs pip install -e '.[rllib]'.")
    p.add_argument("--config", default="configs/rllib_default.yaml", help="YAML config (configs/rllib_*.yaml)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (e.g. auto, or ray://host:10001); default: $RAY_ADDRESS if set, "
                        "else a new local Ray (never a cluster that happens to run on this machine)")
    p.add_argument("--run-dir", default=None, help="the run directory (default <output.dir>/<name>[_k])")
    p.add_argument("--resume", nargs="?", const=True, default=None, metavar="RUN_DIR",
                   help="continue from the newest checkpoint of RUN_DIR (default: the newest run of the config's name)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set iterations=50 --set env_runners.num_env_runners=8")
    return p


def run_train_rllib(args: argparse.Namespace) -> int:
    """Run the ``train-rllib`` subcommand; returns the exit status."""
    from allfives_training.train import importable, install_hint

    # the module reuses the SB3 recipe's torch pieces (allfives_training.scorer_policy)
    missing = [m for m in ("ray", "torch", "yaml", "safetensors", "stable_baselines3", "sb3_contrib")
               if not importable(m)]
    if missing:
        print(f"allfives train-rllib needs {', '.join(missing)}. {install_hint('rllib')}", file=sys.stderr)
        return 2
    train_rllib(args.config, run_dir=args.run_dir, resume=args.resume, overrides=args.overrides,
                address=args.address)
    return 0
