"""One ``allfives train`` run: :class:`Trainer` composes the jobs of a run and decides when each is due.

The jobs live in their own modules and the trainer calls them: building, restoring and saving the
MaskablePPO model (:mod:`allfives_training.sb3_model`), the envs and the league (:mod:`allfives_training.vec_env`,
:mod:`allfives_training.league`), the evaluation against baselines (:mod:`allfives_training.evaluations`, the
loop ``allfives train-rllib`` uses too), the checkpoint files (:mod:`allfives_training.checkpoint`), the run
directory (:mod:`allfives_training.runs`) and the reports (:mod:`allfives_training.report`). What is left here
is the run's own state (step counters, evaluation history, timings) and its schedule: snapshots,
evaluations and checkpoints between rollouts, then the final evaluation, checkpoint and report.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Optional, TextIO

from allfives_training.config import TrainConfig, rollout_size
from allfives_training.runs import (
    DEMONSTRATIONS, TRAINER, atomic_write, create_run_dir, latest_checkpoint, write_run_config, write_summary,
)
from allfives_training.sb3_model import (
    build_model, diverged, make_logger, read_resume, restore_model, save_model,
)
from allfives_training.schema import ConfigError

MAX_REPORT_BYTES = 1 << 20  # evaluation.md, shown when a finished run is resumed

__all__ = ["Trainer"]


class Trainer:
    """One training run: its state, and when each job is due (between rollouts, and at the end)."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: Optional[tuple[int, Path, dict]] = None,
                 progress: Optional[bool] = None, out: Optional[TextIO] = None) -> None:
        from allfives_env.core.rules import Rules

        from allfives_training.league import League

        self.cfg = cfg
        self.name = cfg.name
        self.run_dir = Path(run_dir)
        self.out = sys.stdout if out is None else out  # looked up now: tests and tools swap sys.stdout
        self.rules = Rules.from_options(cfg.rules)
        self.rollout = rollout_size(cfg)
        # SB3 trains whole rollouts: the run ends at the first rollout boundary at or after total_steps
        self.total_steps = -(-int(cfg.total_steps) // self.rollout) * self.rollout
        self.progress = cfg.output.progress if progress is None else progress
        e = cfg.env
        self.env_kwargs = {"rules": self.rules, "reward": e.reward, "episode": e.episode, "seat": e.seat,
                           "partner": e.partner, "action_features": e.action_features}
        lg = cfg.league
        state = resume[2] if resume else {}
        self.league = League(cfg.opponents, lg.enabled, lg.weight, lg.max_snapshots, self.run_dir,
                             state.get("league", {}).get("snapshots"))
        if lg.enabled and "," in str(self.run_dir.resolve()):
            raise ConfigError(f"the run directory {self.run_dir} contains a comma; league snapshots are agent spec "
                              "strings (ppo:path=...), which cannot hold one: choose another --run-dir")
        self.history: list[dict] = list(state.get("history", []))
        self.last_eval = state.get("last_eval_step")
        self.last_snapshot = int(state.get("last_snapshot_step", 0))
        self.last_ckpt = int(state.get("last_ckpt_step", 0))
        self.train_seconds = float(state.get("train_seconds", 0.0))
        self.eval_seconds = float(state.get("eval_seconds", 0.0))
        self.resume = resume
        self.model: Any = None
        self.vec_env: Any = None
        self.callback: Any = None
        # read and checked before any env, worker or model exists: a refused resume starts nothing
        self._resume_tensors = (None if resume is None
                                else read_resume(self.league, self.rules, self.run_dir, *resume))

    # ------------------------------------------------------------------ building (allfives_training/sb3_model.py)
    def _make_vec_env(self) -> Any:
        import functools

        from allfives_training.league import make_env
        from allfives_training.vec_env import make_batch_vec_env, make_vec_env

        specs, weights = self.league.mixture()
        if self.cfg.vec_env == "batch":
            return make_batch_vec_env(self.cfg.n_envs, self.env_kwargs, specs, weights)
        fn = functools.partial(make_env, self.env_kwargs, specs, weights)
        return make_vec_env([fn] * self.cfg.n_envs, self.cfg.vec_env)

    def build(self) -> None:
        """The envs and the model, and the checkpoint a resume continues from copied in."""
        self.vec_env = self._make_vec_env()
        try:
            self.model = build_model(self.cfg, self.rules, self.vec_env)
            if self.resume is not None:
                self.restore(*self.resume)
        except BaseException:
            self.vec_env.close()
            raise
        self.model.set_logger(make_logger(self.cfg.output.tensorboard, self.run_dir))

    def restore(self, step: int, tensors_path: Path, state: dict) -> None:
        """Copy a checkpoint (checked, without pickle) into the freshly built model."""
        tensors = (self._resume_tensors if self._resume_tensors is not None
                   else read_resume(self.league, self.rules, self.run_dir, step, tensors_path, state))
        restore_model(self.model, tensors, step, tensors_path, state, self.cfg.seed)
        self._resume_tensors = None  # loaded: the memory is the model's now

    def _divergence(self) -> ConfigError:
        """The error for a run whose weights became inf/nan; no checkpoint is written from such weights."""
        try:
            last = latest_checkpoint(self.run_dir)
        except ConfigError:
            last = None
        keep = (f"the checkpoint at {last[0]:,} steps is intact: allfives train --resume {self.run_dir} --set "
                "ppo.learning_rate=..." if last else "no checkpoint was taken before it")
        return ConfigError(f"training diverged at {self.model.num_timesteps:,} steps: the network's weights became "
                           f"inf/nan (ppo.learning_rate {self.cfg.ppo.learning_rate} is likely too high; lower "
                           f"it, or ppo.max_grad_norm); {keep}")

    def imitate(self) -> dict:
        """The warm start (config section ``imitation``): clone the teacher into the fresh model."""
        from allfives_training.imitation import collect_demonstrations, imitate

        im = self.cfg.imitation
        specs, weights = self.league.mixture()
        self._say(f"imitation: recording {im.decisions:,} decisions of {im.teacher} against "
                  f"{self.league.describe()} ({im.processes} processes)")
        t0 = time.perf_counter()
        demos = collect_demonstrations(self.env_kwargs, dict(zip(specs, weights)), im.teacher, im.decisions,
                                       self.cfg.seed, self.cfg.ppo.gamma, im.processes,
                                       keep_in=self.run_dir / DEMONSTRATIONS, log=self._say)
        collect_seconds = time.perf_counter() - t0
        self._say(f"imitation: {len(demos):,} decisions in {collect_seconds:.0f} s")
        stats = imitate(self.model.policy, demos, im.epochs, im.batch_size, im.learning_rate, im.value,
                        seed=self.cfg.seed, log=self._say)
        stats["collect_seconds"] = collect_seconds
        atomic_write(self.run_dir / "imitation.json", json.dumps(stats, indent=1))
        return stats

    # ------------------------------------------------------------------ between rollouts
    def _phase(self, i: int, baseline: str) -> None:
        """The progress bar names the baseline being played (an evaluation counts no step)."""
        if self.callback is not None:
            self.callback.set_phase(f"evaluating vs {baseline}, {i}/{len(self.cfg.evaluation.baselines)}")

    def _say(self, text: str) -> None:
        if self.callback is not None:
            self.callback.write(text)
        else:
            print(text, file=self.out, flush=True)

    def export(self, path: Path, step: int, **extra: Any) -> Path:
        from allfives_training.export import export_policy

        meta = {"step": int(step), "run": self.name, "config": self.cfg.to_dict(), **extra}
        return export_policy(self.model, path, self.rules, metadata=meta)

    def evaluate(self, step: int, final: bool = False) -> list[dict]:
        """Play the current policy against every baseline on duplicate deals; log and record the results."""
        from allfives_training.evaluations import play_baselines
        from allfives_training.report import format_line, tag, write_history

        t0 = time.perf_counter()
        ev = self.cfg.evaluation
        path = self.run_dir / "policy.npz" if final else self.run_dir / "evals" / f"policy_{step:010d}.npz"
        self.export(path, step, final=final)
        games = ev.final_games if final else ev.games
        if final:  # thousands of games: say so, and show a bar, rather than a minute of silence
            self._say(f"final evaluation: {games:,} games against each of {', '.join(ev.baselines)}")
        elif step == 0:  # before the first step: the bar has nothing to count yet, so say what the wait is
            self._say(f"evaluating the untrained policy first: {games:,} games against each of "
                      f"{', '.join(ev.baselines)} (evaluation.at_start; the first one also loads the agents)")
        rows = play_baselines(path, self.rules, ev, step, final, lambda b: self.run_dir / "replays" / tag(b),
                              progress=final and bool(self.progress), on_baseline=self._phase)
        if self.callback is not None:
            self.callback.set_phase(None)
        self.history = [r for r in self.history if not (r["step"] == step and r["final"] == final)] + rows
        if not final:
            self.last_eval = step
        logger = self.model.logger
        prefix = "final" if final else "eval"
        for r in rows:
            logger.record(f"{prefix}/win_rate_vs_{tag(r['baseline'])}", r["win_rate"])
            logger.record(f"{prefix}/points_per_hand_vs_{tag(r['baseline'])}", r["points_per_hand"])
        logger.dump(step)
        write_history(self.run_dir / "eval_history.csv", self.history)
        self._say(format_line(step, rows) + (" (final)" if final else ""))
        if self.callback is not None:
            self.callback.set_postfix(" ".join(f"{r['baseline']}={r['win_rate']:.2f}" for r in rows))
        self.eval_seconds += time.perf_counter() - t0
        return rows

    def snapshot(self, step: int) -> None:
        path = self.export(self.league.snapshot_path(step), step, snapshot=True)
        self.league.add(step, path)
        self.last_snapshot = step
        specs, weights = self.league.mixture()
        self.vec_env.env_method("set_opponents", specs, weights)
        self._say(f"league @ {step:,} steps: snapshot {path.name} added; opponents {self.league.describe()}")

    def state(self, step: int, finished: bool = False) -> dict:
        from allfives_training.checkpoint import FORMAT

        return {
            "format": FORMAT, "trainer": TRAINER, "step": int(step), "history": self.history,
            "league": self.league.state(),
            "last_eval_step": self.last_eval, "last_snapshot_step": self.last_snapshot, "last_ckpt_step": int(step),
            "train_seconds": self.train_seconds, "eval_seconds": self.eval_seconds, "finished": finished,
            "name": self.name,
        }

    def checkpoint(self, step: int, finished: bool = False) -> Path:
        """Save the weights and optimizer tensors (safetensors), then the run state (JSON, the commit point);
        keep the newest ``checkpoint.keep``. Weights that became inf/nan are never saved."""
        if diverged(self.model):
            raise self._divergence()
        path = save_model(self.model, self.run_dir, step, self.state(step, finished), self.cfg.checkpoint.keep)
        self.last_ckpt = step
        return path

    def between_rollouts(self, step: int) -> None:
        """League snapshot, evaluation and checkpoint, each when it is due."""
        lg, ev, ck = self.cfg.league, self.cfg.evaluation, self.cfg.checkpoint
        # snapshots and evaluations: at the first rollout boundary at or after each multiple of their interval
        if lg.enabled and step // lg.snapshot_every > self.last_snapshot // lg.snapshot_every:
            self.snapshot(step)
        if self.last_eval is None:
            if step == 0 and ev.at_start:
                self.evaluate(0)
            else:
                self.last_eval = 0
        elif ev.every and step // ev.every > self.last_eval // ev.every:
            self.evaluate(step)
        # checkpoint now if waiting for the next rollout would leave more than checkpoint.every unsaved
        if step > self.last_ckpt and step + self.rollout > self.last_ckpt + ck.every:
            self.checkpoint(step)

    # ------------------------------------------------------------------ the run
    def _already_finished(self, start_step: int) -> Optional[dict]:
        """The summary of a resumed run that has nothing left to train (its table shown), else None."""
        if not (self.resume and self.resume[2].get("finished") and start_step >= self.total_steps
                and (self.run_dir / "evaluation.md").is_file()):
            return None
        from allfives_env.regular_file import read_regular_file

        try:
            text = read_regular_file(self.run_dir / "evaluation.md", MAX_REPORT_BYTES, ConfigError,
                                     "a report").decode("utf-8", errors="replace")
        except (ConfigError, OSError) as exc:
            text = f"(its evaluation table cannot be shown: {exc})"
        print(f"{self.run_dir}: this run already finished at {start_step:,} steps (raise total_steps with "
              f"--set total_steps=N to train on)\n\n{text}", file=self.out)
        return {"run_dir": str(self.run_dir), "steps": start_step, "already_finished": True}

    def _learn(self) -> tuple[float, bool]:
        """``model.learn`` up to ``total_steps`` with the run's callback; (wall seconds, interrupted by Ctrl-C)."""
        from allfives_training.callbacks import RunCallback

        self.callback = RunCallback(self, self.progress)
        remaining = self.total_steps - self.model.num_timesteps
        interrupted = False
        t_learn = time.perf_counter()
        try:
            if remaining > 0:
                self.model.learn(total_timesteps=remaining, callback=self.callback, reset_num_timesteps=False,
                                 progress_bar=False)
        except KeyboardInterrupt:
            interrupted = True
        except BaseException as exc:
            self.vec_env.close()
            if isinstance(exc, (ValueError, RuntimeError)) and diverged(self.model):
                raise self._divergence() from None
            raise
        finally:
            self.callback.close()
        return time.perf_counter() - t_learn, interrupted

    def run(self) -> dict:
        """Train (or resume) to ``total_steps``, then evaluate, report and checkpoint; returns the summary."""
        create_run_dir(self.run_dir)
        if self.resume is None:
            write_run_config(self.run_dir, self.cfg)
        start_step = self.resume[0] if self.resume else 0
        finished = self._already_finished(start_step)
        if finished is not None:
            return finished
        t_start = time.perf_counter()
        self.build()
        if self.resume is not None:  # only once the checkpoint loaded: a refused resume changes nothing
            write_run_config(self.run_dir, self.cfg)
        build_seconds = time.perf_counter() - t_start
        cfg = self.cfg
        what = f"resuming {self.run_dir} at {start_step:,} steps" if self.resume else f"training in {self.run_dir}"
        print(f"{what}: MaskablePPO, {cfg.n_envs} envs ({cfg.vec_env}), net {cfg.network.hidden} "
              f"{cfg.network.activation}, {self.total_steps:,} steps; opponents {self.league.describe()}",
              file=self.out, flush=True)
        if self.resume is None and cfg.imitation.teacher is not None:
            self.imitate()
        learn_wall, interrupted = self._learn()
        session_train = max(1e-9, learn_wall - self.callback.overhead)
        steps = int(self.model.num_timesteps)
        self.train_seconds += session_train
        self.callback = None
        if interrupted:
            path = self.checkpoint(steps)
            self.vec_env.close()
            print(f"\ninterrupted at {steps:,} steps; saved {path}. Continue with: allfives train --resume {self.run_dir}",
                  file=self.out, flush=True)
            return {"run_dir": str(self.run_dir), "steps": steps, "interrupted": True}
        timing = {"trained_steps": steps - start_step, "train_seconds": session_train, "t_start": t_start,
                  "build_seconds": build_seconds, "overhead_seconds": learn_wall - session_train}
        return self._finish(steps, timing)

    def _finish(self, steps: int, timing: dict) -> dict:
        """The end of a run: the final checkpoint and evaluation, the reports, and the summary."""
        from allfives_training.report import play_line, plot_learning_curve, write_final, write_history

        if self.last_ckpt < steps:
            self.checkpoint(steps)
        self.vec_env.close()
        final_rows = self.evaluate(steps, final=True)
        ev, out = self.cfg.evaluation, self.cfg.output
        text = write_final(self.run_dir, final_rows, {
            "policy": str(self.run_dir / "policy.npz"), "steps": steps, "games": ev.final_games, "seed": ev.seed,
        })
        write_history(self.run_dir / "eval_history.csv", self.history)
        plot_note = None
        if out.plot:
            plot_note = plot_learning_curve(self.run_dir / "learning_curve.png", self.history,
                                            f"{self.name}: win rate vs baselines")
        self.checkpoint(steps, finished=True)
        total_wall = time.perf_counter() - timing["t_start"]
        trained, session_train = timing["trained_steps"], timing["train_seconds"]
        sps = trained / session_train if trained else float("nan")
        summary = {
            "run_dir": str(self.run_dir), "steps": steps, "trained_steps": trained,
            "train_seconds": session_train, "steps_per_second": sps, "wall_seconds": total_wall,
            "build_seconds": timing["build_seconds"], "overhead_seconds": timing["overhead_seconds"],
            "final": final_rows,
        }
        write_summary(self.run_dir, summary)
        lines = [
            "",
            f"trained {trained:,} steps in {session_train:.1f} s of learning: {sps:,.0f} env steps/s "
            f"(wall {total_wall:.1f} s including start-up, evaluations and checkpoints)",
            "",
            text,
            "",
            play_line("policy", self.run_dir / "policy.npz"),
        ]
        if out.plot:
            lines.append(f"learning curve: {self.run_dir / 'learning_curve.png'}" if plot_note is None
                         else f"learning curve not drawn: {plot_note}")
        if out.tensorboard:
            lines.append(f"TensorBoard: tensorboard --logdir {self.run_dir / 'tb'}")
        print("\n".join(lines), file=self.out, flush=True)
        return summary


