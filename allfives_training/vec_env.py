"""Vectorized envs for training: stable-baselines3's ``SubprocVecEnv`` / ``DummyVecEnv``, and a batched
subprocess env that is faster on few cores.

Why a third kind: ``SubprocVecEnv`` runs one process per env and talks to each through a pipe twice a
step (``MaskablePPO`` fetches the action masks with ``env_method("action_masks")`` before every step,
then steps): with 16 envs that is 32 round trips a step, and on few cores the pipes cost more than the
processes gain (measure it: ``benchmarks/training_speed.py --set vec_env=subproc``).
:class:`BatchedSubprocVecEnv` runs ``workers`` processes that each own a slice of the envs, steps a whole
slice per message and sends the next action masks back with the observations, so
``env_method("action_masks")`` is answered from a cache without any round trip.

Semantics follow SB3's ``VecEnv`` exactly: auto-reset on ``done`` with ``info["terminal_observation"]``
and ``info["TimeLimit.truncated"]``, seeds and options from :meth:`seed` / :meth:`set_options` applied at
the next :meth:`reset`, ``env_method`` / ``get_attr`` / ``set_attr`` forwarded to the envs.

:func:`make_vec_env` picks the kind: ``"dummy"`` (in-process), ``"subproc"`` (SB3's, one process per
env) or ``"batched"``; a single env always runs in-process. The fourth kind, ``"batch"``
(:func:`make_batch_vec_env`, :mod:`allfives_training.batch_vec_env`), is not made of gymnasium envs at all: one
compiled batch of games in this process, with batch agents as the opponents.

Worker processes (``"batched"`` and ``"subproc"``) end when the process that started them dies, even by
``kill -9`` (:mod:`allfives_env.parent_watch`): nothing else would end them, since each still holds the pipes
of its siblings.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import traceback
from typing import Any, Callable, Optional, Sequence

import gymnasium as gym
import numpy as np

from allfives_env.parent_watch import GuardedEnvFn, exit_with_parent, parent_token


def _set_one_thread() -> None:
    """One torch/BLAS thread per process: with two threads on two busy cores training collapses."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _step_env(env: gym.Env, action: Any) -> tuple[Any, float, bool, dict, dict]:
    obs, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
    info["TimeLimit.truncated"] = truncated and not terminated
    reset_info: dict = {}
    if done:
        info["terminal_observation"] = obs
        obs, reset_info = env.reset()
    return obs, reward, done, info, reset_info


def _masks(envs: Sequence[gym.Env]) -> Optional[np.ndarray]:
    try:
        return np.stack([env.get_wrapper_attr("action_masks")() for env in envs])
    except AttributeError:
        return None


def _batched_worker(remote: Any, parent_remote: Any, env_fns_wrapper: Any,
                    parent: Optional[tuple[int, bool]] = None) -> None:
    from stable_baselines3.common.env_util import is_wrapped

    # a trainer killed with SIGKILL cannot close us, and the pipe gives no EOF (siblings hold its other end)
    exit_with_parent(parent)
    parent_remote.close()
    # Ctrl-C reaches the whole process group: let the main process handle it and close the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _set_one_thread()
    try:
        envs = [fn() for fn in env_fns_wrapper.var]
    except Exception:  # noqa: BLE001 - report it on the first command, then stop
        failure = _RemoteError(traceback.format_exc())
        try:
            remote.recv()
            remote.send(failure)
        except (EOFError, BrokenPipeError, KeyboardInterrupt):
            pass
        return
    while True:
        try:
            cmd, data = remote.recv()
        except (EOFError, KeyboardInterrupt):
            break
        try:
            _serve(remote, envs, cmd, data, is_wrapped)
        except (EOFError, BrokenPipeError, KeyboardInterrupt):
            break
        except Exception:  # noqa: BLE001 - hand any error in an env to the main process, which raises it
            try:
                remote.send(_RemoteError(traceback.format_exc()))
            except (EOFError, BrokenPipeError):
                break
        if cmd == "close":
            break


class _RemoteError:
    """An exception raised in a worker, sent back as its formatted traceback."""

    def __init__(self, text: str) -> None:
        self.text = text


def _recv(remote: Any) -> Any:
    result = remote.recv()
    if isinstance(result, _RemoteError):
        raise RuntimeError("an env raised in a vec env worker process:\n" + result.text)
    return result


def _serve(remote: Any, envs: list, cmd: str, data: Any, is_wrapped: Callable[..., bool]) -> None:
    if cmd == "step":
        results = [_step_env(env, a) for env, a in zip(envs, data)]
        obs, rews, dones, infos, reset_infos = zip(*results)
        remote.send((np.stack(obs), np.asarray(rews), np.asarray(dones, dtype=bool), infos, reset_infos,
                     _masks(envs)))
    elif cmd == "reset":
        seeds, options = data
        out = [env.reset(seed=s, **({"options": o} if o else {})) for env, s, o in zip(envs, seeds, options)]
        remote.send((np.stack([o for o, _ in out]), [i for _, i in out], _masks(envs)))
    elif cmd == "env_method":
        name, args, kwargs, idx = data
        remote.send([envs[i].get_wrapper_attr(name)(*args, **kwargs) for i in idx])
    elif cmd == "get_attr":
        name, idx = data
        remote.send([envs[i].get_wrapper_attr(name) for i in idx])
    elif cmd == "has_attr":
        try:
            envs[0].get_wrapper_attr(data)
            remote.send(True)
        except AttributeError:
            remote.send(False)
    elif cmd == "set_attr":
        name, value, idx = data
        for i in idx:
            setattr(envs[i], name, value)
        remote.send(None)
    elif cmd == "is_wrapped":
        cls, idx = data
        remote.send([is_wrapped(envs[i], cls) for i in idx])
    elif cmd == "render":
        remote.send([env.render() for env in envs])
    elif cmd == "get_spaces":
        remote.send((envs[0].observation_space, envs[0].action_space))
    elif cmd == "close":
        for env in envs:
            env.close()
        remote.close()
    else:
        raise NotImplementedError(f"command {cmd!r} is not implemented in the worker")


def _split(n: int, parts: int) -> list[range]:
    """``n`` env indices in ``parts`` contiguous, near-equal slices."""
    bounds = np.linspace(0, n, parts + 1).round().astype(int)
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def resolve_start_method(start_method: Optional[str]) -> str:
    """``start_method``, or the fastest the platform has (fork) when it is None."""
    if start_method is not None:
        return start_method
    # fork starts in milliseconds; forkserver/spawn re-import the main module (torch, sb3: seconds per worker)
    return "fork" if "fork" in mp.get_all_start_methods() else "spawn"


class _BatchedMethods:
    """The methods of :class:`BatchedSubprocVecEnv` (``workers`` processes, each stepping a contiguous slice
    of the envs; see the module docstring), mixed into SB3's ``VecEnv`` on first use."""

    def __init__(self, env_fns: list[Callable[[], gym.Env]], workers: int = 2,
                 start_method: Optional[str] = None) -> None:
        from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper

        n = len(env_fns)
        workers = max(1, min(int(workers), n))
        self.waiting = False
        self.closed = False
        self.slices = _split(n, workers)
        ctx = mp.get_context(resolve_start_method(start_method))
        self.remotes, work_remotes = zip(*[ctx.Pipe() for _ in range(workers)])
        self.processes = []
        token = parent_token()
        for work_remote, remote, sl in zip(work_remotes, self.remotes, self.slices):
            fns = CloudpickleWrapper([env_fns[i] for i in sl])
            process = ctx.Process(target=_batched_worker, args=(work_remote, remote, fns, token), daemon=True)
            process.start()
            self.processes.append(process)
            work_remote.close()
        self.remotes[0].send(("get_spaces", None))
        observation_space, action_space = _recv(self.remotes[0])
        super().__init__(n, observation_space, action_space)
        self._mask_cache: Optional[np.ndarray] = None

    # -------------------------------------------------------------- stepping
    def step_async(self, actions: np.ndarray) -> None:
        for remote, sl in zip(self.remotes, self.slices):
            remote.send(("step", actions[sl.start:sl.stop]))
        self.waiting = True

    def step_wait(self) -> Any:
        self.waiting = False
        results = [_recv(remote) for remote in self.remotes]
        obs = np.concatenate([r[0] for r in results])
        rews = np.concatenate([r[1] for r in results]).astype(np.float32)
        dones = np.concatenate([r[2] for r in results])
        infos = [i for r in results for i in r[3]]
        self.reset_infos = [i for r in results for i in r[4]]
        self._store_masks([r[5] for r in results])
        return obs, rews, dones, infos

    def reset(self) -> np.ndarray:
        for remote, sl in zip(self.remotes, self.slices):
            remote.send(("reset", ([self._seeds[i] for i in sl], [self._options[i] for i in sl])))
        results = [_recv(remote) for remote in self.remotes]
        obs = np.concatenate([r[0] for r in results])
        self.reset_infos = [i for r in results for i in r[1]]
        self._store_masks([r[2] for r in results])
        self._reset_seeds()
        self._reset_options()
        return obs

    def _store_masks(self, parts: list[Optional[np.ndarray]]) -> None:
        self._mask_cache = None if any(p is None for p in parts) else np.concatenate(parts)

    def close(self) -> None:
        if self.closed:
            return
        for remote in self.remotes:
            try:
                if self.waiting:
                    remote.recv()
                remote.send(("close", None))
            except (BrokenPipeError, EOFError, ConnectionResetError):
                pass
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
        self.closed = True

    # -------------------------------------------------------------- forwarding
    def _by_worker(self, indices: Any) -> list[tuple[int, list[int]]]:
        wanted = list(self._get_indices(indices))
        out = []
        for w, sl in enumerate(self.slices):
            local = [i - sl.start for i in wanted if i in sl]
            if local:
                out.append((w, local))
        return out

    def _gather(self, cmd: str, make_data: Callable[[list[int]], Any], indices: Any) -> list[Any]:
        plan = self._by_worker(indices)
        for w, local in plan:
            self.remotes[w].send((cmd, make_data(local)))
        results: list[Any] = []
        for w, _ in plan:
            results.extend(_recv(self.remotes[w]))
        return results

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs and self._mask_cache is not None:
            return list(self._mask_cache[list(self._get_indices(indices))])
        return self._gather("env_method", lambda local: (method_name, method_args, method_kwargs, local), indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return self._gather("get_attr", lambda local: (attr_name, local), indices)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        plan = self._by_worker(indices)
        for w, local in plan:
            self.remotes[w].send(("set_attr", (attr_name, value, local)))
        for w, _ in plan:
            _recv(self.remotes[w])

    def has_attr(self, attr_name: str) -> bool:
        self.remotes[0].send(("has_attr", attr_name))
        return bool(_recv(self.remotes[0]))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return self._gather("is_wrapped", lambda local: (wrapper_class, local), indices)

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [None] * self.num_envs


def _batched_class() -> type:
    """SB3's ``VecEnv`` with :class:`_BatchedMethods` (made on first use: this module imports without SB3)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class BatchedSubprocVecEnv(_BatchedMethods, VecEnv):
        __doc__ = _BatchedMethods.__doc__

    return BatchedSubprocVecEnv


_BATCHED: Optional[type] = None


def BatchedSubprocVecEnv(env_fns: list[Callable[[], gym.Env]], workers: int = 2, start_method: Optional[str] = None) -> Any:
    """Build a batched subprocess vec env (the class is created on first use, so this module imports
    without stable-baselines3)."""
    global _BATCHED
    if _BATCHED is None:
        _BATCHED = _batched_class()
    return _BATCHED(env_fns, workers=workers, start_method=start_method)


VEC_ENV_KINDS = ("batched", "subproc", "dummy", "batch")


def make_vec_env(env_fns: list[Callable[[], gym.Env]], kind: str = "batched", workers: int = 2,
                 start_method: Optional[str] = None) -> Any:
    """A vec env over ``env_fns``: ``kind`` is ``"batched"``, ``"subproc"`` or ``"dummy"``; one env always
    runs in-process (``DummyVecEnv``). The fourth kind, ``"batch"``, is no vec env of gymnasium envs: build
    it from the env's arguments with :func:`make_batch_vec_env`."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if kind not in VEC_ENV_KINDS:
        raise ValueError(f"vec_env kind {kind!r} is not allowed: choose one of {list(VEC_ENV_KINDS)}")
    if kind == "batch":
        raise ValueError("vec_env kind 'batch' runs compiled batch games, not env_fns: use make_batch_vec_env")
    if len(env_fns) == 1 or kind == "dummy":
        return DummyVecEnv(env_fns)
    if kind == "subproc":  # SB3's worker calls each factory first: the guarded one ties it to this process
        return SubprocVecEnv([GuardedEnvFn(fn) for fn in env_fns], start_method=resolve_start_method(start_method))
    return BatchedSubprocVecEnv(env_fns, workers=workers, start_method=start_method)


def make_batch_vec_env(n_envs: int, env_kwargs: dict, opponents: Sequence[str],
                       weights: Optional[Sequence[float]] = None) -> Any:
    """The ``"batch"`` kind: ``n_envs`` games of the compiled engine in this process, the learner in one seat
    and batch agents in the others (:class:`allfives_training.batch_vec_env.BatchSingleSeatVecEnv`; ``env_kwargs``
    are the single-seat env's arguments)."""
    from allfives_training.batch_vec_env import BatchSingleSeatVecEnv

    return BatchSingleSeatVecEnv(n_envs, opponents=list(opponents), opponent_weights=weights, **env_kwargs)
