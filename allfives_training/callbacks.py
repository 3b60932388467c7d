"""The stable-baselines3 callback of a training run: progress bar, and the trainer's work between rollouts
(league snapshots, evaluations, checkpoints). Imports SB3, so only the training code imports it."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional

from stable_baselines3.common.callbacks import BaseCallback


class RunCallback(BaseCallback):
    """Calls ``trainer.between_rollouts()`` at the start of every rollout (after the previous PPO update,
    so the weights saved or evaluated there have learned from every step counted so far) and keeps a
    tqdm progress bar over the whole run (``initial`` = the steps of a resumed run)."""

    def __init__(self, trainer: Any, progress: bool) -> None:
        super().__init__(verbose=0)
        self.trainer = trainer
        self.progress = progress
        self.pbar: Optional[Any] = None
        self._shown = 0
        self.overhead = 0.0  # seconds spent in between_rollouts
        self._rollouts_done = False  # until the first rollout ends, the bar says it is collecting one

    def _on_training_start(self) -> None:
        if self.progress:
            from tqdm import tqdm

            self.pbar = tqdm(total=self.trainer.total_steps, initial=self.model.num_timesteps, unit="step",
                             unit_scale=True, dynamic_ncols=True, mininterval=0.5, file=sys.stderr,
                             desc=self.trainer.name, smoothing=0.1)
        self._shown = self.model.num_timesteps

    def _on_rollout_start(self) -> None:
        t0 = time.perf_counter()
        self.trainer.between_rollouts(self.model.num_timesteps)
        self.overhead += time.perf_counter() - t0
        if not self._rollouts_done:
            self.set_phase("collecting the first rollout")

    def _on_rollout_end(self) -> None:
        if not self._rollouts_done:
            self._rollouts_done = True
            self.set_phase(None)

    def _on_step(self) -> bool:
        if self.pbar is not None:
            n = self.model.num_timesteps
            self.pbar.update(n - self._shown)
            self._shown = n
        return True

    def write(self, text: str) -> None:
        """Print a line without breaking the progress bar."""
        if self.pbar is not None:
            self.pbar.write(text, file=self.trainer.out)
        else:
            print(text, file=self.trainer.out, flush=True)

    def set_phase(self, text: Optional[str]) -> None:
        """Show what the run is doing while no step is counted (an evaluation, the first compile), in the
        bar's description, drawn now: a bar that sits at the same count for a minute with nothing moving
        reads as a hang. ``None`` puts back the run's name alone."""
        if self.pbar is not None:
            name = self.trainer.name
            self.pbar.set_description_str(name if text is None else f"{name} [{text}]", refresh=True)

    def set_postfix(self, text: str) -> None:
        if self.pbar is not None:
            self.pbar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self.pbar is not None:
            self.pbar.close()
            self.pbar = None
