"""The torch-thread rule of every training process, in one place: one torch thread, no distribution checks.

Every process that does torch work (the trainer, RLlib's driver and env runners, the vec env's and the
league's worker processes) calls :func:`one_torch_thread` when it starts that work.
"""

from __future__ import annotations

import importlib
import sys


def one_torch_thread(if_imported: bool = False) -> None:
    """One torch thread in this process, and no argument checks on torch's distributions.

    Why one thread: with two threads on a 2-core machine, training collapses whenever the other core is
    busy (the env workers, an evaluation, anything else running); one thread per process keeps every core
    doing one job. Why no checks: PPO (stable-baselines3's and RLlib's) builds a masked Categorical at every
    sampling step and minibatch, and torch's argument checks on them cost about 15% of training while
    catching nothing but inf/nan weights, which the trainers report themselves.

    ``if_imported``: apply the rule only when this process has already imported torch (a worker process
    whose agents are numpy, which should not pay torch's import for nothing).
    """
    torch = sys.modules.get("torch") if if_imported else importlib.import_module("torch")
    if torch is None:
        return
    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)
