"""Vectorized envs for training, the ``vec_env`` kinds of a training config (:data:`VEC_ENV_KINDS`).

* ``"batch"`` (:func:`make_batch_vec_env`, :mod:`allfives_training.batch_vec_env`): one compiled batch of
  games in this process, with batch agents as the opponents: the fastest by far wherever every opponent has
  a batch twin (``random``, ``greedy``, ``expert``, policy files such as league snapshots);
* ``"dummy"``: stable-baselines3's ``DummyVecEnv`` of single-seat envs in this process, for opponents without
  a batch twin (``defensive``, ``pimc``, ``oracle``, OpenSpiel bots);
* ``"subproc"``: SB3's ``SubprocVecEnv``, one process per single-seat env, where the opponents' moves are
  slow enough (search agents) to pay for a process and two pipe round trips per env and step.

``benchmarks/front_ends.py`` measures the kinds against each other. Every kind answers
``env_method("set_opponents", specs, weights)``, which is how the league hands out its mixture.

The worker processes of ``"subproc"`` end when the process that started them dies, even by ``kill -9``
(:mod:`allfives_env.parent_watch`): nothing else would end them, since each still holds the pipes of its
siblings.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any, Callable, Optional, Sequence

import gymnasium as gym

from allfives_env.core.errors import RulesError, short_repr
from allfives_env.parent_watch import GuardedEnvFn

def resolve_start_method(start_method: Optional[str]) -> str:
    """``start_method``, or the fastest the platform has (fork) when it is None."""
    if start_method is not None:
        return start_method
    # fork starts in milliseconds; forkserver/spawn re-import the main module (torch, sb3: seconds per worker)
    return "fork" if "fork" in mp.get_all_start_methods() else "spawn"


VEC_ENV_KINDS = ("batch", "subproc", "dummy")


def make_vec_env(env_fns: list[Callable[[], gym.Env]], kind: str = "dummy", *,
                 start_method: Optional[str] = None) -> Any:
    """An SB3 vec env over ``env_fns``: ``kind`` is ``"subproc"`` or ``"dummy"``; one env always runs
    in-process (``DummyVecEnv``). The kind ``"batch"`` is no vec env of gymnasium envs: build it from the
    env's arguments with :func:`make_batch_vec_env`."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if kind not in ("subproc", "dummy"):
        hint = "; 'batch' runs compiled batch games, not env_fns: use make_batch_vec_env" if kind == "batch" else ""
        raise RulesError(f"vec_env kind {short_repr(kind)} is not allowed here: choose 'subproc' or 'dummy'{hint}")
    if len(env_fns) == 1 or kind == "dummy":
        return DummyVecEnv(env_fns)
    # SB3's worker calls each factory first: the guarded one ties it to this process
    return SubprocVecEnv([GuardedEnvFn(fn) for fn in env_fns], start_method=resolve_start_method(start_method))


def make_batch_vec_env(n_envs: int, env_kwargs: dict, opponents: Sequence[str],
                       weights: Optional[Sequence[float]] = None) -> Any:
    """The ``"batch"`` kind: ``n_envs`` games of the compiled engine in this process, the learner in one seat
    and batch agents in the others (:class:`allfives_training.batch_vec_env.BatchSingleSeatVecEnv`; ``env_kwargs``
    are the single-seat env's arguments)."""
    from allfives_training.batch_vec_env import BatchSingleSeatVecEnv

    return BatchSingleSeatVecEnv(n_envs, opponents=list(opponents), opponent_weights=weights, **env_kwargs)
