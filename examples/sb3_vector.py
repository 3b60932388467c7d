"""MaskablePPO (sb3-contrib) on the All Fives vector env, through the project's stable-baselines3 adapter.

What it shows: :class:`allfives_training.batch_vec_env.BatchSingleSeatVecEnv` turns the library's Gymnasium
vector env (``allfives_env.vector.AllFivesVectorEnv``: ``n_envs`` games of one compiled batch, the learner in
one seat of each, scripted opponents in lockstep) into an SB3 ``VecEnv``: SB3's reset/step protocol with
``same_step`` autoreset (``terminal_observation`` in the infos) and ``action_masks()``, which ``MaskablePPO``
reads at every step to keep illegal actions out of its distribution. It takes the vector env's keywords::

    venv = BatchSingleSeatVecEnv(128, opponents=["greedy", "expert"], reward="points", action_features=True,
                                 num_players=2)

The policy is the project's ``ScoredMaskablePolicy`` (``allfives_training.scorer_policy``): an MLP over the
position plus one small scorer shared by every placement's feature row, each score starting on its own logit
(``score_gain=1``): what lets PPO learn from random weights in a few hundred thousand steps. The settings are
those of ``configs/default.yaml``; ``allfives train`` adds evaluations, checkpoints and resumable runs.

At the end the trained policy (argmax over the legal actions) plays ``greedy`` and ``random`` through the
project's evaluation harness (duplicate deals, Wilson 95% interval) on evaluation seeds that differ from the
training seed, one ``eval vs ...`` line each; ``--export FILE.npz`` writes the numpy policy file.

Run::

    pip install -e ".[train]"
    python examples/sb3_vector.py                                            # 500k steps
    python examples/sb3_vector.py --total-timesteps 2048 --n-envs 32 --n-steps 64 --eval-games 4   # seconds
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, Sequence

import numpy as np
import torch
from sb3_contrib import MaskablePPO

import allfives_env  # noqa: F401  (registers the agents)
from allfives_env.agents import Agent, PlayerView, register_agent
from allfives_env.core.rules import Rules
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder
from allfives_env.evaluation import evaluate
from allfives_training.batch_vec_env import BatchSingleSeatVecEnv
from allfives_training.export import export_policy
from allfives_training.scorer_policy import ScoredMaskablePolicy, scorer_spec

AGENT_NAME = "sb3-vector-ppo"


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total-timesteps", type=int, default=500_000, help="learner steps to train")
    p.add_argument("--n-envs", type=int, default=128, help="games in the compiled batch")
    p.add_argument("--n-steps", type=int, default=64, help="steps per game per rollout")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and of the model")
    p.add_argument("--num-players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["greedy", "expert"], help="batch opponents, one drawn per game")
    p.add_argument("--eval-games", type=int, default=500, help="games per evaluation match-up (0: none)")
    p.add_argument("--eval-seeds", type=int, nargs="+", default=[2026, 2027], help="fresh evaluation seeds")
    p.add_argument("--eval-opponents", nargs="+", default=["greedy", "random"])
    p.add_argument("--export", help="write the trained actor to this numpy policy file (.npz)")
    args = p.parse_args(argv)
    if args.seed in args.eval_seeds:
        p.error(f"--eval-seeds {args.eval_seeds} must differ from the training --seed {args.seed}")
    return args


class SB3Player(Agent):
    """The trained MaskablePPO policy as a project agent: its seat's observation (with the action features, as
    the vector env gives it) and the legal action the policy ranks highest."""

    name = AGENT_NAME

    def __init__(self, seed: Optional[int] = None, *, model: MaskablePPO, encoder: ObservationEncoder) -> None:
        super().__init__(seed)
        self.model, self.encoder = model, encoder

    def act(self, view: PlayerView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        mask = np.zeros(self.encoder.num_actions, dtype=bool)
        mask[legal] = True
        action, _ = self.model.predict(view.observation(self.encoder), action_masks=mask, deterministic=True)
        return int(action)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(1)
    rules = Rules(num_players=args.num_players)
    encoder = ObservationEncoder(rules, action_features=True)
    venv = BatchSingleSeatVecEnv(args.n_envs, opponents=args.opponents, reward="points", episode="game",
                                 action_features=True, rules=rules)
    venv.seed(args.seed)
    scorer = scorer_spec(encoder.slices["features"].start, 4 * encoder.T, len(ACTION_FEATURES), [32],
                         trunk_reads_features=False, score_gain=1.0)
    model = MaskablePPO(ScoredMaskablePolicy, venv, n_steps=args.n_steps, batch_size=1024, n_epochs=4,
                        learning_rate=3e-4, ent_coef=0.01, seed=args.seed, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": {"pi": [128, 128], "vf": [128, 128]}, "activation_fn": torch.nn.ReLU,
                                       "action_scorer": scorer})
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.total_timesteps)
    seconds = time.perf_counter() - t0
    print(f"trained {model.num_timesteps:,} steps in {seconds:.0f} s: {model.num_timesteps / seconds:,.0f} env steps/s",
          flush=True)
    venv.close()
    if args.export:
        export_policy(model, args.export, rules, metadata={"example": "examples/sb3_vector.py"})
        print(f"exported {args.export}")
    register_agent(AGENT_NAME, lambda seed=None: SB3Player(seed, model=model, encoder=encoder),
                   "the policy trained by examples/sb3_vector.py (this process only)")
    for opponent in args.eval_opponents if args.eval_games else []:
        for seed in args.eval_seeds:
            match = evaluate([AGENT_NAME, opponent], rules, games=args.eval_games, seed=seed, processes=1,
                             progress=False)
            low, high = match.win_rate_ci
            print(f"eval vs {opponent} (seed {seed}, {match.games} games): win rate {100 * match.win_rate:.1f}% "
                  f"[95% CI {100 * low:.1f}% - {100 * high:.1f}%]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
