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

Every value is checked before the training starts: one that cannot run (``--n-steps 0``, an unknown opponent, a
folder where ``--export`` wants a file) ends the run with one ``error: ...`` line naming the flag, exit status 2;
a policy file that cannot be written at the end (a full disk), with one line and exit status 1.

Run::

    pip install -e ".[train]"
    python examples/sb3_vector.py                                            # 500k steps
    python examples/sb3_vector.py --total-timesteps 2048 --n-envs 32 --n-steps 64 --eval-games 4   # seconds
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import NoReturn, Optional, Sequence

import numpy as np
import torch
from sb3_contrib import MaskablePPO

import allfives_env  # noqa: F401  (registers the agents)
from allfives_env.agents import Agent, PlayerView, register_agent
from allfives_env.batch_opponents import check_batch_specs
from allfives_env.cli.options import int_type, seed_type
from allfives_env.core.errors import AllFivesError
from allfives_env.core.rules import Rules
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder
from allfives_env.evaluation import MAX_GAMES, evaluate
from allfives_env.evaluation.checks import check_agents
from allfives_env.paths import check_output
from allfives_training.batch_vec_env import BatchSingleSeatVecEnv
from allfives_training.export import export_policy
from allfives_training.scorer_policy import ScoredMaskablePolicy, scorer_spec

AGENT_NAME = "sb3-vector-ppo"


#: The most steps one rollout holds (``--n-envs`` x ``--n-steps``): SB3 keeps its observations in memory, about 6 kB
#: a step, so this is some 6 GB; the defaults take 8,192.
MAX_ROLLOUT = 1 << 20


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one ``error: ...`` line (exit 2): the flag and what it allows, not the usage."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str, code: int = 2) -> NoReturn:
    """End the run with one line on stderr: what to change, where a traceback would send the reader to the source."""
    print("error: " + " ".join(message.split()), file=sys.stderr)
    raise SystemExit(code)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, every value checked before any training (``check_args``); an error is one line, exit 2."""
    p = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = f"an integer from 1 to {MAX_ROLLOUT:,}"
    p.add_argument("--total-timesteps", type=int_type(1, 2**62, "an integer from 1 to 2**62"), default=500_000,
                   help="learner steps to train")
    p.add_argument("--n-envs", type=int_type(1, MAX_ROLLOUT, steps), default=128, help="games in the compiled batch")
    p.add_argument("--n-steps", type=int_type(1, MAX_ROLLOUT, steps), default=64, help="steps per game per rollout")
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the deals and of the model")
    p.add_argument("--num-players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["greedy", "expert"], help="batch opponents, one drawn per game")
    p.add_argument("--eval-games", type=int_type(0, MAX_GAMES, f"an integer from 0 (none) to {MAX_GAMES:,}"),
                   default=500, help="games per evaluation match-up (0: none)")
    p.add_argument("--eval-seeds", type=seed_type, nargs="+", default=[2026, 2027], help="fresh evaluation seeds")
    p.add_argument("--eval-opponents", nargs="+", default=["greedy", "random"])
    p.add_argument("--export", help="write the trained actor to this numpy policy file (.npz)")
    args = p.parse_args(argv)
    check_args(args)
    return args


def check_args(args: argparse.Namespace) -> None:
    """What each flag's type cannot see alone, refused in one line naming the flag (exit 2): settings that meet
    only inside SB3 or the env (a one-step rollout), and names checked against the rules (an unknown opponent,
    a policy file that is missing or fits other rules), all before the first step rather than after the training."""
    rollout = args.n_envs * args.n_steps
    if not 2 <= rollout <= MAX_ROLLOUT:
        fail(f"--n-envs {args.n_envs} x --n-steps {args.n_steps} = {rollout:,} steps per rollout: must be from 2 "
             f"(PPO normalises the advantages over the rollout) to {MAX_ROLLOUT:,} (it is held in memory)")
    if args.seed in args.eval_seeds:
        fail(f"--eval-seeds {args.eval_seeds} must differ from the training --seed {args.seed}")
    try:
        rules = Rules(num_players=args.num_players)
    except AllFivesError as exc:
        fail(f"--num-players {args.num_players}: {exc}")
    try:  # each built once here, with the rules: a bad name or a missing policy file fails now, not after training
        check_batch_specs(args.opponents)
        check_agents(args.opponents, rules)
    except AllFivesError as exc:
        fail(f"--opponents {' '.join(args.opponents)}: {exc}")
    try:
        check_agents(args.eval_opponents if args.eval_games else [], rules)
    except AllFivesError as exc:
        fail(f"--eval-opponents {' '.join(args.eval_opponents)}: {exc}")
    try:
        check_output(args.export, "--export")
    except OSError as exc:
        fail(str(exc))
    if args.export and os.path.exists(args.export) and not os.path.isfile(args.export):
        fail(f"--export {args.export}: not a regular file (the policy is written beside it, then renamed over it)")


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
        try:
            export_policy(model, args.export, rules, metadata={"example": "examples/sb3_vector.py"})
        except OSError as exc:  # a full disk, a folder gone since the start: one line, exit 1
            fail(f"--export {args.export}: could not write it: {exc.strerror or exc}", code=1)
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
    try:
        sys.exit(main())
    except AllFivesError as exc:  # the package's errors say what was wrong and what is allowed: that line alone
        fail(str(exc))
