"""The self-play recipe's training loop: rollouts of the self-play batch, per-seat advantages, clipped PPO,
snapshots into the league, evaluations on fresh duplicate deals, checkpoints that resume exactly.

One update: every game of the batch steps ``env.steps`` times; at each step the seat to act is played by the
learner (sampled from its policy) or by its league opponent; every seat's rewards come back from the env, and
with ``shaping: win_potential`` each seat also gets the change of its side's chance to win
(:mod:`allfives_training.win_potential`). The learner's decisions are then scored with
:func:`~.returns.seat_advantages` (each seat's decisions are its own trajectory) and PPO updates actor and
critic on them.

Chunks and exact resumes: the run is cut into chunks of ``checkpoint.every`` updates. Each chunk starts from
its own seed (the run's seed and the chunk's first update): the env deals every game afresh, the league seats
them, and torch's sampling generator restarts. A checkpoint is written at every chunk's end (weights,
optimizer, counters, the league's snapshots, the evaluation history), so a run killed anywhere and resumed
from its newest checkpoint repeats exactly the updates an uninterrupted run makes (a test compares the two).
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import nn

from allfives_env.batch import BatchGame
from allfives_env.core.errors import BatchError
from allfives_env.core.rules import Rules
from allfives_env.policy import load_policy
from allfives_env.selfplay import AllFivesSelfPlayEnv
from allfives_training.checkpoint import (
    CheckpointError, check_header, check_module, commit_checkpoint, module_tensors, need, newest_state,
    optimizer_state_spec, read_tensors, restore_optimizer, split_optimizer,
)
from allfives_training.evaluations import play_baselines
from allfives_training.report import format_line, plot_learning_curve, write_history
from allfives_training.schema import build_rules
from allfives_training.selfplay.config import SelfPlayConfig
from allfives_training.selfplay.league import League
from allfives_training.selfplay.network import NetShape, SelfPlayNet, export_actor
from allfives_training.selfplay.returns import seat_advantages
from allfives_training.threads import one_torch_thread
from allfives_training.win_potential import WinTable, build_win_table, load_win_table, save_win_table

__all__ = ["SelfPlayTrainer", "TRAINER"]

TRAINER = "selfplay-ppo"
CHECKPOINTS = "checkpoints"
STATE_NAME = re.compile(r"update_(\d{8})\.json$")
FILE_NAME = re.compile(r"update_(\d{8})\.(?:json|safetensors)$")
_CHUNK_SALT = 0x5E1F_91A7
#: The annealed learning rate's floor, as a share of ``ppo.learning_rate``: a run extended past its first
#: ``total_steps`` (``--set total_steps=...`` on resume) goes on learning, slowly.
ANNEAL_FLOOR = 0.01


def chunk_seed(seed: int, update: int) -> int:
    """The seed of the chunk that starts at ``update``: the env's deals, the league's draws, torch's sampling."""
    return int(np.random.SeedSequence([seed, update, _CHUNK_SALT]).generate_state(1, np.uint64)[0] % (2**63))


def load_actor(net: SelfPlayNet, path: str) -> None:
    """Copy the actor of a numpy policy file of this architecture into ``net`` (the run's ``start``)."""
    policy = load_policy(path)
    linears = [m for m in net.trunk if isinstance(m, nn.Linear)]
    s = net.shape
    if len(policy.layers) != len(linears) or len(policy.scorer) != sum(isinstance(m, nn.Linear) for m in net.scorer):
        raise CheckpointError(f"start: {path} has {len(policy.layers)} hidden and {len(policy.scorer)} scorer layers; "
                              f"this run's network has {len(linears)} and 2 (network.hidden, network.scorer_hidden)")
    if policy.scorer_context != net.scorer_context:
        raise CheckpointError(f"start: {path} has a scorer {'with' if policy.scorer_context else 'without'} the "
                              f"position as context; this run's network.scorer_context is "
                              f"{str(net.scorer_context).lower()}")
    with torch.no_grad():
        for k, (m, (w, b)) in enumerate(zip(linears, policy.layers)):
            w = np.concatenate([w[:, :s.offset], w[:, s.end:]], axis=1) if k == 0 else w
            if tuple(m.weight.shape) != w.shape:
                raise CheckpointError(f"start: {path} layer {k} is {w.shape}, this run's is {tuple(m.weight.shape)} "
                                      "(network.hidden must match the file's)")
            m.weight.copy_(torch.tensor(w)), m.bias.copy_(torch.tensor(b))
        if tuple(net.head.weight.shape) != policy.action[0].shape:
            raise CheckpointError(f"start: {path}'s logits layer is {policy.action[0].shape}, this run's is "
                                  f"{tuple(net.head.weight.shape)}")
        net.head.weight.copy_(torch.tensor(policy.action[0])), net.head.bias.copy_(torch.tensor(policy.action[1]))
        for m, (w, b) in zip([m for m in net.scorer if isinstance(m, nn.Linear)], policy.scorer):
            if tuple(m.weight.shape) != w.shape:
                raise CheckpointError(f"start: {path}'s scorer layer is {w.shape}, this run's is {tuple(m.weight.shape)}"
                                      " (network.scorer_hidden must match the file's)")
            m.weight.copy_(torch.tensor(w)), m.bias.copy_(torch.tensor(b))


def progress_line(update: int, steps: int, total: int, figures: dict[str, float]) -> str:
    """One update's line: a bar of the run's progress, the speed, the time left at that speed, the losses."""
    done = min(1.0, steps / total)
    bar = "#" * int(20 * done) + "-" * (20 - int(20 * done))
    rate = figures["decisions_per_s"]
    left = (total - min(steps, total)) / rate if rate > 0 else math.inf
    eta = f"{left / 3600:.1f} h" if left >= 3600 else f"{left / 60:.0f} min"
    return (f"[{bar}] {100 * done:5.1f}% update {update:,} | {steps:,}/{total:,} decisions | {rate:,.0f}/s | "
            f"{eta} left | entropy {figures['entropy']:.3f} | value loss {figures['v_loss']:.4f}")


class SelfPlayTrainer:
    """A self-play run in ``run_dir`` (see the module docstring); :meth:`train` runs it to ``total_steps`` or
    until ``stop_after`` more updates, checkpointing at every chunk's end."""

    def __init__(self, cfg: SelfPlayConfig, run_dir: Path, log: Callable[[str], None] = print) -> None:
        one_torch_thread()
        self.cfg, self.run_dir, self.log = cfg, Path(run_dir), log
        self.rules: Rules = build_rules(cfg.rules, "")
        self.shape = NetShape.of(self.rules, cfg.env.obs_version)
        torch.manual_seed(cfg.seed)
        net = cfg.network
        self.net = SelfPlayNet(self.shape, net.hidden, net.scorer_hidden, net.critic, net.score_gain,
                               net.scorer_context)
        self._start_actor()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5)
        self.full_critic = net.critic == "full"
        self.env = AllFivesSelfPlayEnv(cfg.env.num_envs, rules=self.rules, reward=cfg.env.reward, episode="game",
                                       action_features=True, autoreset_mode="next_step",
                                       privileged=("state",) if self.full_critic else (),
                                       obs_version=cfg.env.obs_version)
        self.league = League(cfg.league, self.rules, cfg.env.num_envs)
        self.update, self.steps = 0, 0
        self.history: list[dict[str, Any]] = []
        self.curve: list[dict[str, Any]] = []
        self.win_table: Optional[WinTable] = None
        self.generator = torch.Generator()
        (self.run_dir / "league").mkdir(parents=True, exist_ok=True)
        self._resume()
        if cfg.env.shaping == "win_potential":
            self.win_table = self._win_table()

    # ------------------------------------------------------------------ files
    def _start_actor(self) -> None:
        """The actor's start (``start``): random weights, a policy file, or the clone (made now unless a checkpoint
        will replace the weights anyway)."""
        cfg = self.cfg
        if cfg.start is None or (cfg.start == "clone" and (self.run_dir / CHECKPOINTS).is_dir()):
            return
        if cfg.start != "clone":
            load_actor(self.net, cfg.start)
            return
        from allfives_training.selfplay.clone import build_clone

        c = cfg.clone
        build_clone(self.net, self.rules, self.run_dir / "clone", c.teacher, c.decisions, c.rounds, c.temperature,
                    c.epochs, c.learning_rate, cfg.seed, c.processes, self.log)

    def _win_table(self) -> WinTable:
        path = self.run_dir / "win_table.json"
        if path.exists():
            return load_win_table(path, self.rules)
        table = build_win_table(self.rules, self.cfg.env.potential_games, self.cfg.seed)
        save_win_table(table, path)
        return table

    def _resume(self) -> None:
        folder = self.run_dir / CHECKPOINTS
        found = newest_state(folder, STATE_NAME) if folder.is_dir() else None
        if found is None:
            return
        update, json_path, state = found
        where = str(json_path)
        check_header(state, where, TRAINER)
        tensors_path = folder / need(state, "tensors", "str", where)
        tensors = read_tensors(tensors_path, need(state, "sha256", "sha256", where), json_path)
        weights = check_module(self.net.state_dict(), tensors, "net/", tensors_path, "the network the config builds")
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        updates = need(state, "update", "int>=0", where)
        opt_state = restore_optimizer(self.optimizer.state_dict(), params, tensors, state.get("optimizer"),
                                      "optimizer/", tensors_path, json_path, spec=optimizer_state_spec(self.optimizer),
                                      stepped=updates > 0, max_step=max(updates, 1) * 10**7)
        self.net.load_state_dict(weights, strict=True)
        self.optimizer.load_state_dict(opt_state)
        self.update, self.steps = updates, need(state, "steps", "int>=0", where)
        snapshots = need(state, "snapshots", "list", where)
        for spec in snapshots:
            if not (isinstance(spec, str) and spec.startswith("ppo:path=") and Path(spec[9:]).is_file()):
                raise CheckpointError(f"{where}: league snapshot {spec!r} is not a policy file of the run")
        self.league.restore(snapshots)
        self.history = need(state, "history", "list", where)
        self.curve = need(state, "curve", "list", where)
        self.log(f"resumed {self.run_dir} at update {self.update:,} ({self.steps:,} learner decisions)")

    def _checkpoint(self) -> Path:
        opt_tensors, opt_meta = split_optimizer(self.optimizer.state_dict(), "optimizer/")
        tensors = {**module_tensors(self.net.state_dict(), "net/"), **opt_tensors}

        def state(name: str, digest: str) -> dict[str, Any]:
            return {"format": "allfives-checkpoint/1", "trainer": TRAINER, "tensors": name, "sha256": digest,
                    "update": self.update, "steps": self.steps, "optimizer": opt_meta,
                    "snapshots": self.league.snapshots, "history": self.history, "curve": self.curve}

        return commit_checkpoint(self.run_dir / CHECKPOINTS, f"update_{self.update:08d}", tensors, state, STATE_NAME,
                                 FILE_NAME, self.cfg.checkpoint.keep)

    # ------------------------------------------------------------------ the loop
    def train(self, stop_after: Optional[int] = None) -> dict[str, Any]:
        """Train until ``total_steps`` learner decisions (or ``stop_after`` more updates, at a chunk's end);
        returns the run's figures."""
        cfg = self.cfg
        start_update, start = self.update, time.perf_counter()
        if self.steps >= cfg.total_steps:
            self.log(f"the run is finished ({self.steps:,} of total_steps {cfg.total_steps:,} decisions); train it "
                     "further with --resume RUN_DIR --set total_steps=N")
            return {"update": self.update, "steps": self.steps, "finished": True, "seconds": 0.0}
        obs, info = None, None
        while self.steps < cfg.total_steps:
            if stop_after is not None and self.update - start_update >= stop_after \
                    and self.update % cfg.checkpoint.every == 0:
                break
            if self.update % cfg.checkpoint.every == 0 or obs is None or info is None:
                obs, info = self._start_chunk()
            obs, info, figures = self._one_update(obs, info)
            self.update += 1
            self.curve.append({"update": self.update, "steps": self.steps, **figures})
            self.log(progress_line(self.update, self.steps, cfg.total_steps, figures))
            if self.update % cfg.league.snapshot_every == 0:
                path = export_actor(self.net, self.rules, self.run_dir / "league" / f"update_{self.update:08d}.npz")
                self.league.add_snapshot(path)
            if cfg.evaluation.every and self.update % cfg.evaluation.every == 0:
                self._evaluate(final=False)
            if self.update % cfg.checkpoint.every == 0:
                self._checkpoint()
        finished = self.steps >= cfg.total_steps
        if finished:
            self._evaluate(final=True)
            self._checkpoint()
        return {"update": self.update, "steps": self.steps, "finished": finished,
                "seconds": round(time.perf_counter() - start, 1)}

    def _start_chunk(self) -> tuple[np.ndarray, dict[str, Any]]:
        seed = chunk_seed(self.cfg.seed, self.update)
        self.generator.manual_seed(seed)
        self.league.restart(np.random.default_rng(seed))
        return self.env.reset(seed=seed)

    def _one_update(self, obs: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any], dict[str, float]]:
        cfg, n, T = self.cfg, self.cfg.env.num_envs, self.cfg.env.steps
        P, A = self.rules.num_players, self.shape.num_actions
        rows = np.arange(n)
        actor = np.full((T, n), -1, dtype=np.int64)
        values = np.zeros((T, n), dtype=np.float32)
        logps = np.zeros((T, n), dtype=np.float32)
        actions_taken = np.zeros((T, n), dtype=np.int64)
        rewards = np.zeros((T, n, P))
        ended = np.zeros((T, n), dtype=bool)
        obs_buf = np.zeros((T, n, self.shape.obs_size), dtype=np.float32)
        mask_buf = np.zeros((T, n, A), dtype=bool)
        critic_buf: list[np.ndarray] = []
        t0 = time.perf_counter()
        table = self.win_table
        # each step's potential is the next step's "before": read once per step (the info is the same object)
        potential = table.seat_potential(np.asarray(info["scores"])) if table is not None else None
        for t in range(T):
            seat, mask = info["seat"], info["action_mask"]
            live = mask.any(axis=1)
            learn = live & self.league.learner[rows, np.maximum(seat, 0)]
            actions = self.league.act(self._batch(), np.maximum(seat, 0), live & ~learn)
            actions[~live] = 0  # a restart step: the env ignores it
            idx = np.flatnonzero(learn)
            if len(idx):
                o, m = torch.from_numpy(obs[idx]), torch.from_numpy(np.ascontiguousarray(mask[idx]))
                critic_in = self.net.critic_input(o, self._state(info, idx), torch.from_numpy(seat[idx]))
                with torch.no_grad():
                    a, lp = self.net.sample(o, m, self.generator)
                    v = self.net.value(critic_in)
                actions[idx] = a.numpy()
                actor[t, idx], logps[t, idx], values[t, idx] = seat[idx], lp.numpy(), v.numpy()
                obs_buf[t, idx], mask_buf[t, idx] = obs[idx], mask[idx]
                critic_buf.append(critic_in.numpy())
            actions_taken[t] = actions
            obs, reward, term, trunc, info = self.env.step(actions)
            ended[t] = term | trunc
            rewards[t] = reward
            if table is not None and potential is not None:
                after = table.seat_potential(np.asarray(info["scores"]))
                rewards[t] += np.where(live[:, None], after - potential, 0.0)
                potential = after
            if ended[t].any():
                self.league.seat(np.flatnonzero(ended[t]))
        rollout_s = time.perf_counter() - t0
        bootstrap = self._bootstrap(obs, info)
        advantages = seat_advantages(actor, values.astype(np.float64), rewards, ended, bootstrap,
                                     cfg.ppo.gamma, cfg.ppo.gae_lambda)
        where = actor >= 0
        batch = {"obs": torch.from_numpy(obs_buf[where]), "mask": torch.from_numpy(mask_buf[where]),
                 "actions": torch.from_numpy(actions_taken[where]), "logp": torch.from_numpy(logps[where]),
                 "values": torch.from_numpy(values[where]),
                 "advantages": torch.from_numpy(advantages[where].astype(np.float32)),
                 "critic": torch.from_numpy(np.concatenate(critic_buf)) if critic_buf else None}
        # critic_buf holds the rows step by step, in the order of the (t, game) rows selected by ``where``
        decisions = int(where.sum())
        self.steps += decisions
        stats = self._ppo(batch)
        seconds = time.perf_counter() - t0
        return obs, info, {"decisions": decisions, "decisions_per_s": decisions / max(seconds, 1e-9),
                           "rollout_s": round(rollout_s, 3), "update_s": round(seconds - rollout_s, 3), **stats}

    def _batch(self) -> BatchGame:
        """The self-play env's batch (there is one from the first chunk's reset on)."""
        batch = self.env.batch
        if batch is None:
            raise BatchError("the self-play env has no batch before its first reset")
        return batch

    def _state(self, info: dict[str, Any], idx: np.ndarray) -> Optional[torch.Tensor]:
        return torch.from_numpy(info["state"][idx]) if self.full_critic else None

    def _bootstrap(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Every seat's value after the rollout (what its open trajectory bootstraps from)."""
        n, P = self.cfg.env.num_envs, self.rules.num_players
        out = np.zeros((n, P))
        for s in range(P):
            seats = torch.full((n,), s, dtype=torch.int64)
            if self.full_critic:
                critic_in = self.net.critic_input(None, torch.from_numpy(info["state"]), seats)
            else:
                seen = self._batch().observe(np.full(n, s, dtype=np.int64), action_features=True)
                critic_in = self.net.critic_input(torch.from_numpy(seen), None, seats)
            with torch.no_grad():
                out[:, s] = self.net.value(critic_in).numpy()
        return out

    def _ppo(self, b: dict[str, Any]) -> dict[str, float]:
        """Clipped PPO epochs over the rollout's learner decisions."""
        ppo = self.cfg.ppo
        total = len(b["actions"])
        stats = dict.fromkeys(("pg_loss", "v_loss", "entropy", "approx_kl"), math.nan)
        if not total:
            return stats
        if ppo.anneal:
            left = 1.0 - self.steps / self.cfg.total_steps
            self.optimizer.param_groups[0]["lr"] = ppo.learning_rate * max(ANNEAL_FLOOR, left)
        returns = b["advantages"] + b["values"]
        count = min(ppo.minibatches, total)
        size = total // count
        for _ in range(ppo.epochs):
            order = torch.randperm(total, generator=self.generator)
            for k in range(count):
                mb = order[k * size:(k + 1) * size]
                logp_all = self.net.log_probs(b["obs"][mb], b["mask"][mb])
                newlogp = logp_all.gather(1, b["actions"][mb, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(1).mean()
                critic_in = b["critic"][mb] if b["critic"] is not None else self.net.position(b["obs"][mb])
                value = self.net.value(critic_in)
                logratio = newlogp - b["logp"][mb]
                ratio = logratio.exp()
                adv = b["advantages"][mb]
                if len(mb) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - ppo.clip, 1 + ppo.clip)).mean()
                old = b["values"][mb]
                clipped = old + (value - old).clamp(-ppo.clip, ppo.clip)
                v_loss = 0.5 * torch.max((value - returns[mb]) ** 2, (clipped - returns[mb]) ** 2).mean()
                loss = pg_loss - ppo.ent_coef * entropy + ppo.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), ppo.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats = {"pg_loss": float(pg_loss), "v_loss": float(v_loss), "entropy": float(entropy),
                             "approx_kl": float(((ratio - 1) - logratio).mean())}
        return stats

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, final: bool) -> None:
        """The current actor (exported as ``<run>/policy.npz``) against every baseline on the evaluation's
        duplicate deals; rows into the history, ``history.csv`` and the learning curve ``learning_curve.png``."""
        policy = export_actor(self.net, self.rules, self.run_dir / "policy.npz",
                              metadata={"update": self.update, "steps": self.steps, "recipe": TRAINER})
        ev = self.cfg.evaluation
        rows = play_baselines(policy, self.rules, ev, self.steps, final, lambda b: self.run_dir / "replays" / b)
        for row in rows:
            row["update"] = self.update
        self.history.extend(rows)
        self.log(format_line(self.steps, rows, at=f"update {self.update:,} ({self.steps:,} decisions)"))
        write_history(self.run_dir / "history.csv", self.history)
        (self.run_dir / "curve.json").write_text(json.dumps(self.curve) + "\n")
        plot_learning_curve(self.run_dir / "learning_curve.png", self.history, f"{self.cfg.name}: win rate")
