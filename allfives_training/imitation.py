"""Warm start by imitation: clone a teacher agent into the PPO network before reinforcement learning.

Why: from random weights, MaskablePPO spends most of a run learning what a placement scores and what it
leaves the opponent, and can level off below the hand-written ``expert``. A policy that first imitates a
strong teacher starts PPO at the teacher's level, and PPO then has only to find where the teacher is
wrong (the measurements are in the README's training section).

How (config section ``imitation``):

1. :func:`collect_demonstrations` plays ``decisions`` learner decisions in the same single-seat env the
   run trains on (same rules, reward, opponents mixture), the teacher choosing every learner action. It
   records the observation, the action mask, the teacher's action, and the discounted return that
   followed (with the run's ``ppo.gamma``, the quantity the PPO critic estimates). Games are split over
   ``processes`` worker processes, each with its own seed, so a run is reproducible from its seed.
2. :func:`imitate` trains the policy on them: masked cross-entropy for the actor (the teacher's move is
   the label) and, with ``value: true``, mean-squared error for the critic, so PPO's first advantages are
   not noise that would undo the cloned actor. A share (:data:`HOLDOUT`) of the decisions is held out to
   report agreement.

The run's first evaluation (``evaluation.at_start``) then measures the cloned policy before PPO moves it.

Recording is most of a warm start's wall time (19 minutes for 600,000 ``pimc-sift`` decisions on two
cores; their parts hold 50 MB), and it happens before the run's first checkpoint. So each worker's share is kept as soon as it is
recorded, in ``RUN/demonstrations/part-K-of-N.npz`` (compressed numpy arrays plus the recording's identity,
read back without pickle), and a run started again in the same directory (``allfives train --resume RUN``
before any checkpoint) loads the parts it finds instead of playing them again. The parts of one recording
are the same arrays either way, so a resumed run learns exactly what an uninterrupted one would. A part
that is unreadable, damaged, or recorded for another config is recorded again, and the log says why.
"""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from allfives_env.policy import NPZ_READ_ERRORS

__all__ = ["Demonstrations", "collect_demonstrations", "imitate"]

MAX_GAME_SEED = 2**31 - 1  # the env's and the teacher's seeds of each game are drawn below this
HOLDOUT = 0.05  # share of the decisions held out to measure agreement
MASKED_LOGIT = -1e8  # the logit of an illegal action in the cross-entropy
VALUE_LOSS_WEIGHT = 0.5  # the critic's loss next to the actor's (with value: true)
MAX_GRAD_NORM = 1.0
TEST_BATCH = 4096  # held-out decisions scored at a time
#: The arrays of a saved part and their dtypes (the recording's identity is stored beside them).
PART_ARRAYS = {"obs": np.float16, "masks": np.bool_, "actions": np.int64, "returns": np.float32}


@dataclass
class Demonstrations:
    """Teacher decisions: observations (float16 to halve the memory), masks, actions, returns."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concatenate(parts: Sequence["Demonstrations"]) -> "Demonstrations":
        return Demonstrations(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in PART_ARRAYS})


def _collect_part(env_kwargs: Mapping[str, Any], opponents: Sequence[str], weights: Sequence[float], teacher: str,
                  decisions: int, seed: int, gamma: float) -> Demonstrations:
    """One worker's share: whole games until ``decisions`` learner decisions are recorded."""
    from allfives_env.agents import make_agent
    from allfives_env.agents.base import OracleView, PlayerView
    from allfives_env.single_seat import AllFivesSingleSeatEnv

    env = AllFivesSingleSeatEnv(opponents=list(opponents), opponent_weights=list(weights), **env_kwargs)
    agent = make_agent(teacher)
    view_type = OracleView if agent.uses_hidden_information else PlayerView
    size, n_actions = env.observation_space.shape[0], env.action_space.n
    obs = np.zeros((decisions, size), dtype=np.float16)
    masks = np.zeros((decisions, n_actions), dtype=bool)
    actions = np.zeros(decisions, dtype=np.int64)
    returns = np.zeros(decisions, dtype=np.float32)
    rng = np.random.default_rng(seed)
    i = 0
    while i < decisions:
        o, _ = env.reset(seed=int(rng.integers(MAX_GAME_SEED)))
        agent.reset(int(rng.integers(MAX_GAME_SEED)))
        start = i
        rewards: list[float] = []
        done = False
        while not done and i < decisions:
            mask = env.action_masks()
            action = agent.act(view_type(env.game, env.seat))
            obs[i], masks[i], actions[i] = o, mask, action
            o, reward, terminated, truncated, _ = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
            i += 1
        g = 0.0
        for k in range(len(rewards) - 1, -1, -1):  # a game cut off by the budget bootstraps from 0
            g = rewards[k] + gamma * g
            returns[start + k] = g
    return Demonstrations(obs, masks, actions, returns)


def _part_path(folder: Path, k: int, parts: int) -> Path:
    """Where worker share ``k`` (0-based) of ``parts`` is kept."""
    return Path(folder) / f"part-{k + 1}-of-{parts}.npz"


def _identity(job: tuple, k: int, parts: int) -> str:
    """What a saved part must have been recorded with to stand in for job ``k``: every argument of the
    recording (env, opponents, teacher, its share, seed, gamma), as canonical JSON."""
    env_kwargs, specs, weights, teacher, n, seed, gamma = job
    env = {key: (value.to_dict() if hasattr(value, "to_dict") else value) for key, value in sorted(env_kwargs.items())}
    return json.dumps({"env": env, "opponents": specs, "weights": weights, "teacher": teacher, "decisions": n,
                       "seed": seed, "gamma": gamma, "part": k + 1, "of": parts}, sort_keys=True, default=str)


def _save_part(path: Path, demos: Demonstrations, identity: str) -> None:
    """Write one part compressed (the feature rows are mostly zeros) and atomically, so that a run killed
    while writing leaves no half part behind."""
    from allfives_training.checkpoint import atomic_write

    buffer = io.BytesIO()
    np.savez_compressed(buffer, identity=np.array(identity), **{name: getattr(demos, name) for name in PART_ARRAYS})
    atomic_write(path, buffer.getvalue())


def _load_part(path: Path, identity: str, decisions: int, size: int, n_actions: int) -> tuple[Optional[Demonstrations], str]:
    """The part saved at ``path`` if it is this recording's and whole, else None and the reason. Read with
    ``allow_pickle=False``: a part holds plain arrays only, so no file can run code when loaded."""
    if not path.is_file():
        return None, "not recorded yet"
    try:
        with np.load(path, allow_pickle=False) as data:
            if set(data.files) != {"identity", *PART_ARRAYS}:
                return None, f"unexpected arrays {sorted(data.files)}"
            if str(data["identity"]) != identity:
                return None, "recorded for another config, seed or teacher"
            arrays = {name: data[name] for name in PART_ARRAYS}
    except NPZ_READ_ERRORS as exc:
        return None, f"unreadable ({type(exc).__name__}: {exc})"
    shapes = {"obs": (decisions, size), "masks": (decisions, n_actions), "actions": (decisions,), "returns": (decisions,)}
    for name, dtype in PART_ARRAYS.items():
        if arrays[name].dtype != dtype or arrays[name].shape != shapes[name]:
            return None, f"{name} is {arrays[name].dtype}{list(arrays[name].shape)}, not {np.dtype(dtype)}{list(shapes[name])}"
    actions = arrays["actions"]
    if ((actions < 0) | (actions >= n_actions)).any() or not arrays["masks"][np.arange(decisions), actions].all():
        return None, "some recorded actions are not legal in their recorded masks"
    if not np.isfinite(arrays["returns"]).all() or not np.isfinite(arrays["obs"]).all():
        return None, "non-finite observations or returns"
    return Demonstrations(**arrays), ""


def _record_part(job: tuple, path: Optional[Path], identity: str) -> Demonstrations:
    """One worker's share, kept at ``path`` (when given) as soon as it is recorded."""
    demos = _collect_part(*job)
    if path is not None:
        _save_part(path, demos, identity)
    return demos


def collect_demonstrations(env_kwargs: Mapping[str, Any], opponents: Mapping[str, float], teacher: str,
                           decisions: int, seed: int, gamma: float, processes: int = 1,
                           start_method: Optional[str] = None, keep_in: Optional[Path] = None,
                           log: Optional[Callable[[str], None]] = None) -> Demonstrations:
    """``decisions`` teacher decisions in ``AllFivesSingleSeatEnv(**env_kwargs)`` against ``opponents``
    (spec -> weight), over ``processes`` worker processes (deterministic for a given ``seed``).

    With ``keep_in`` (a folder), each worker's share is saved there when recorded and a share already saved
    for the same recording is loaded instead of played again (module doc); ``log`` hears which."""
    specs, weights = list(opponents), [float(w) for w in opponents.values()]
    processes = max(1, min(int(processes), int(decisions)))
    shares = [decisions // processes + (1 if k < decisions % processes else 0) for k in range(processes)]
    seeds = np.random.SeedSequence(seed).generate_state(processes)
    jobs = [(dict(env_kwargs), specs, weights, teacher, n, int(s), float(gamma)) for n, s in zip(shares, seeds)]
    identities = [_identity(job, k, processes) for k, job in enumerate(jobs)]
    parts: list[Optional[Demonstrations]] = [None] * processes
    paths: list[Optional[Path]] = [None] * processes
    if keep_in is not None:
        from allfives_env.encoding import ObservationEncoder

        Path(keep_in).mkdir(parents=True, exist_ok=True)
        encoder = ObservationEncoder(env_kwargs["rules"], bool(env_kwargs.get("action_features", False)))
        for k, identity in enumerate(identities):
            paths[k] = _part_path(keep_in, k, processes)
            parts[k], why = _load_part(paths[k], identity, shares[k], encoder.size, encoder.num_actions)
            if log is not None:
                log(f"imitation: part {k + 1}/{processes} ({shares[k]:,} decisions) "
                    + (f"loaded from {paths[k]}" if parts[k] is not None else f"to record: {paths[k].name} {why}"))
    todo = [k for k in range(processes) if parts[k] is None]
    args = [(jobs[k], paths[k], identities[k]) for k in todo]
    if len(todo) == 1:
        parts[todo[0]] = _record_part(*args[0])
    elif todo:
        from allfives_env.parent_watch import exit_with_parent, parent_token
        from allfives_training.vec_env import resolve_start_method

        # a run killed with SIGKILL cannot end its pool, whose workers then record on with parent 1
        with mp.get_context(resolve_start_method(start_method)).Pool(len(todo), initializer=exit_with_parent,
                                                                     initargs=(parent_token(),)) as pool:
            for k, demos in zip(todo, pool.starmap(_record_part, args)):
                parts[k] = demos
    return parts[0] if processes == 1 else Demonstrations.concatenate(parts)


def imitate(policy: Any, demos: Demonstrations, epochs: int, batch_size: int, learning_rate: float,
            value: bool = True, seed: int = 0, holdout: float = HOLDOUT,
            log: Optional[Callable[[str], None]] = None) -> dict[str, float]:
    """Train an SB3 ``MaskableActorCriticPolicy`` on ``demos``; returns the held-out agreement and losses.

    The actor learns the teacher's action by masked cross-entropy; with ``value`` the critic regresses
    the recorded returns. Adam over all the policy's parameters; the PPO optimizer is left untouched.
    """
    import torch

    n = len(demos)
    if n < 2:
        raise ValueError(f"imitation needs at least 2 demonstrations, got {n}")
    gen = np.random.default_rng(seed)
    order = gen.permutation(n)
    n_test = max(1, int(n * holdout))
    test, train = order[:n_test], order[n_test:]
    device = policy.device
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)

    def batch(idx: np.ndarray) -> tuple:
        idx = np.sort(idx)  # sorted rows read faster from the big arrays
        return (torch.as_tensor(demos.obs[idx], dtype=torch.float32, device=device),
                torch.as_tensor(demos.masks[idx], device=device),
                torch.as_tensor(demos.actions[idx], device=device),
                torch.as_tensor(demos.returns[idx], device=device))

    def losses(obs: Any, masks: Any, actions: Any, returns: Any) -> tuple:
        features = policy.extract_features(obs)
        latent_pi, latent_vf = policy.mlp_extractor(features)
        logits = policy.action_net(latent_pi).masked_fill(~masks, MASKED_LOGIT)
        pi_loss = torch.nn.functional.cross_entropy(logits, actions)
        v_loss = torch.nn.functional.mse_loss(policy.value_net(latent_vf).squeeze(-1), returns)
        return logits, pi_loss, v_loss

    stats: dict[str, float] = {}
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        gen.shuffle(train)
        total = 0.0
        for start in range(0, len(train), batch_size):
            _, pi_loss, v_loss = losses(*batch(train[start:start + batch_size]))
            loss = pi_loss + (VALUE_LOSS_WEIGHT * v_loss if value else 0.0)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), MAX_GRAD_NORM)
            optimizer.step()
            total += pi_loss.item() * min(batch_size, len(train) - start)
        with torch.no_grad():
            agree, pi_test, v_test = 0, 0.0, 0.0
            for start in range(0, n_test, TEST_BATCH):
                obs, masks, actions, returns = batch(test[start:start + TEST_BATCH])
                logits, pi_loss, v_loss = losses(obs, masks, actions, returns)
                agree += int((logits.argmax(-1) == actions).sum())
                pi_test += float(pi_loss) * len(actions)
                v_test += float(v_loss) * len(actions)
        stats = {"epoch": epoch, "train_loss": total / len(train), "test_loss": pi_test / n_test,
                 "test_agreement": agree / n_test, "test_value_mse": v_test / n_test,
                 "seconds": time.perf_counter() - t0}
        if log is not None:
            log(f"imitation epoch {epoch}/{epochs}: loss {stats['train_loss']:.3f}, held-out agreement "
                f"{stats['test_agreement']:.1%}, value mse {stats['test_value_mse']:.4f} "
                f"({stats['seconds']:.0f} s)")
    policy.set_training_mode(False)
    return stats
