"""Masked PPO on All Fives in CleanRL's style: one file, read top to bottom, its config a dataclass that is the CLI.

The structure is CleanRL's ``ppo.py`` (``Args``, ``layer_init``, an ``Agent`` network with ``get_value`` and
``get_action_and_value``, then one loop: rollout, GAE, a few epochs of clipped PPO on minibatches), over the
library's Gymnasium vector env on the compiled batch engine::

    envs = gymnasium.make_vec("AllFives-v0", num_envs=512, vectorization_mode="vector_entry_point",
                              opponents=["greedy", "expert"], reward="points", action_features=True)

All ``num_envs`` games run in one process, in lockstep; the learner plays one seat of each (drawn per game),
the scripted opponents the others. Like every CleanRL file it is self-contained on purpose: the network
below repeats the idea of the project's ``allfives_training/scorer_policy.py`` rather than importing it, so this file
can be copied out and read alone. It imports nothing of ``allfives_training`` and no stable-baselines3.

**The network.** With ``action_features=True`` the observation ends with one row of 12 numbers per placement
id (what the play scores now, what it leaves the opponent, ...; ``allfives_env.encoding``: the
``features`` piece, a row per id, zero where the placement is not legal). A small MLP ``g`` scores one row,
*the same network for every placement*, and its score is added to that placement's logit, on top of an MLP
over the position (the observation without the feature rows): ``logit_a = actor(position)_a + g(row_a)``.
What ``g`` learns about one play transfers to every tile and end, which is what lets PPO from random weights
pass ``greedy`` within its first million steps (``allfives_training/scorer_policy.py`` explains why the score must
reach its logit whole from the first step). ``g`` runs only on the legal placements' rows, gathered once per
rollout for the update (:class:`Batch`): the other rows are zero and share ``g(0)``, so it is the same function
as scoring all 112 rows, for a fraction of the work; the update never copies the 1,496-wide observations.
The two MLPs are 64 wide and PPO makes 2 passes over each rollout of 512 games x 32 steps: the update is
about half of a step's cost (``benchmarks/cleanrl_speed.py`` measures the speed and the default run).

**Masking.** Illegal logits are set to a large negative before the softmax: 80 below the best legal logit
(``e^-80`` is 2e-35, nothing next to any legal probability; a fixed ``-1e8`` gives the same numbers but
drives torch's ``exp`` onto its slow path: the masked log-softmax with its entropy and their gradients took
about twice as long on a 4096 x 112 minibatch).
Actions are sampled by Gumbel-max over the legal actions only, so an illegal one is never drawn.

**Autoreset.** The env runs Gymnasium 1.x's default ``autoreset_mode="next_step"``: the step that ends a
game returns its *final* observation (done), and the next step ignores that game's action and returns the
new game's first observation with reward 0. That ignored step is not a transition of the policy: the
rollout marks it (``valid`` = the game had a legal action when the action was chosen, i.e.
``envs.action_masks()`` is not all False) and PPO's losses and advantage normalisation use only valid steps.
GAE needs nothing more: a valid step that ended its episode cuts the trace (``1 - done``), and a game cut by
the ``max_hands`` cap (truncated, not terminated) bootstraps from the value of its final observation, which
next_step hands over as the next observation. (``same_step`` would need ``info["final_obs"]`` for that.)

Run::

    pip install -e ".[train,examples]"      # torch, and tyro==1.0.17
    python examples/cleanrl_ppo.py                                   # defaults: the measured run
    python examples/cleanrl_ppo.py --total-timesteps 2048 --num-envs 64 --num-steps 32 --eval-games 4  # seconds

At the end the trained actor is saved as a numpy policy file in a fresh run folder, ``runs/cleanrl_ppo/seed<seed>/``
(``seed<seed>_2``, ``_3``, ... when taken; with ``args.json``, the settings it was trained with), or where
``--export FILE.npz`` says, and the ``allfives evaluate ppo:path=... greedy`` line that plays it is printed. Then
the policy (argmax over the legal actions) plays ``greedy`` and ``random`` through the project's evaluation
harness (``allfives_env.evaluation.evaluate``: duplicate deals, Wilson 95% interval) on evaluation seeds that
differ from the training seed, one ``eval vs ...`` line each; ``--json-out`` writes the figures.

Every setting is checked before any training (:func:`check_args`): a value that cannot run (a NaN learning rate,
``--gamma 5``, more minibatches than the rollout has steps, an unknown opponent, a folder where ``--export``
wants a file) ends the run with one ``error: --flag value: what is allowed`` line and exit status 2; a file that
cannot be written at the end (a full disk), with one line and exit status 1.
Randomness: deals from the env's seeded generator (``--seed``), actions and minibatches from one seeded
``torch.Generator``; the weights' start from ``torch.manual_seed(--seed)`` (torch's initialisers read its
global generator).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Callable, Literal, NoReturn, Optional

import gymnasium
import numpy as np
import torch
import tyro
from torch import nn

import allfives_env  # noqa: F401  (registers AllFives-v0)
from allfives_env.agents import Agent as PlayerAgent, PlayerView, register_agent
from allfives_env.batch_opponents import check_batch_specs
from allfives_env.core.errors import AllFivesError, short_repr
from allfives_env.core.rules import Rules
from allfives_env.core.seeds import MAX_SEED
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder
from allfives_env.evaluation import MAX_GAMES, evaluate
from allfives_env.evaluation.checks import check_agents
from allfives_env.paths import check_output
from allfives_env.policy import write_policy_file
from allfives_env.seat_setup import opponent_mixture

AGENT_NAME = "cleanrl-ppo"
#: Where a run saves its policy without --export: a fresh ``seed<seed>[_<k>]`` folder per run (relative to the
#: working directory, as CleanRL's ``runs/``).
RUNS = Path("runs") / "cleanrl_ppo"


@dataclass
class Args:
    """Masked PPO from random weights on the All Fives vector env (every field is a --flag)."""

    seed: int = 1
    """seed of the deals and of torch's generator"""
    total_timesteps: int = 3_000_000
    """learner steps to train (env steps summed over the games)"""
    num_envs: int = 512
    """games in the one compiled batch"""
    num_steps: int = 32
    """steps per game per rollout (rollout = num_envs x num_steps)"""
    learning_rate: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    """passes over each rollout (CleanRL's default is 4; 2 halve the update, which is most of a step)"""
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: Optional[float] = None

    num_players: int = 2
    """players at the table (the learner takes one seat)"""
    opponents: tuple[str, ...] = ("greedy", "expert")
    """batch opponents the learner trains against, one drawn per game (random, greedy, expert)"""
    reward: Literal["points", "win"] = "points"
    episode: Literal["game", "hand"] = "game"
    hidden: int = 64
    """width of the actor's and the critic's two layers (the scorer does most of the work)"""
    scorer_hidden: int = 32
    """width of the per-placement scorer's hidden layer"""

    eval_games: int = 500
    """games per evaluation match-up (rounded up to whole duplicate sets)"""
    eval_seeds: tuple[int, ...] = (2026, 2027)
    """evaluation seeds (fresh duplicate deals; each must differ from --seed)"""
    eval_opponents: tuple[str, ...] = ("greedy", "random")
    curve_every: int = 0
    """learner steps between learning-curve points (0: none): at the start and each time training passes a multiple,
    the policy plays --curve-games against each --eval-opponents on the first --eval-seeds seed"""
    curve_games: int = 200
    """games per opponent at each learning-curve point"""
    export: Optional[str] = None
    """write the trained actor to this numpy policy file (.npz) instead of runs/cleanrl_ppo/seed<seed>/policy.npz"""
    json_out: Optional[str] = None
    """write the run's figures (speed, wall time, evaluations) to this JSON file"""


#: The most steps one rollout holds (``--num-envs`` x ``--num-steps``): its observations are kept in memory, about
#: 6 kB a step, so this is some 6 GB; the defaults take 16,384.
MAX_ROLLOUT = 1 << 20
#: The widest layer ``--hidden`` and ``--scorer-hidden`` may ask for (a hidden x hidden layer of 64 MB).
MAX_WIDTH = 4096
POSITIVE = (lambda v: 0 < v < math.inf, "must be a finite number > 0")
NOT_NEGATIVE = (lambda v: 0 <= v < math.inf, "must be a finite number >= 0")
#: What each number of Args may be: a test and the words that say what it allows. NaN fails every comparison,
#: so it is refused with the rest.
LIMITS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "seed": (lambda v: 0 <= v <= MAX_SEED, f"must be an integer from 0 to {MAX_SEED}"),
    "total_timesteps": (lambda v: v >= 1, "must be at least 1"),
    "num_envs": (lambda v: 1 <= v <= MAX_ROLLOUT, f"must be from 1 to {MAX_ROLLOUT:,} games"),
    "num_steps": (lambda v: 1 <= v <= MAX_ROLLOUT, f"must be from 1 to {MAX_ROLLOUT:,} steps"),
    "learning_rate": (lambda v: 0 < v <= 1, "must be in (0, 1]"),  # as a training config allows: larger steps diverge
    "gamma": (lambda v: 0 < v <= 1, "must be in (0, 1]"),
    "gae_lambda": (lambda v: 0 <= v <= 1, "must be in [0, 1]"),
    "num_minibatches": (lambda v: v >= 1, "must be at least 1"),
    "update_epochs": (lambda v: v >= 1, "must be at least 1"),
    "clip_coef": POSITIVE,
    "ent_coef": NOT_NEGATIVE,
    "vf_coef": NOT_NEGATIVE,
    "max_grad_norm": POSITIVE,
    "target_kl": (lambda v: v is None or 0 < v < math.inf, "must be a finite number > 0, or None (no early stop)"),
    "hidden": (lambda v: 1 <= v <= MAX_WIDTH, f"must be from 1 to {MAX_WIDTH}"),
    "scorer_hidden": (lambda v: 1 <= v <= MAX_WIDTH, f"must be from 1 to {MAX_WIDTH}"),
    "eval_games": (lambda v: 0 <= v <= MAX_GAMES, f"must be from 0 (no evaluation) to {MAX_GAMES:,}"),
    "curve_every": (lambda v: v >= 0, "must be at least 0 (0: no learning curve)"),
    "curve_games": (lambda v: 1 <= v <= MAX_GAMES, f"must be from 1 to {MAX_GAMES:,}"),
}


def fail(message: str, code: int = 2) -> NoReturn:
    """End the run with one line on stderr (exit 2 for a refused setting, like tyro's own errors): the line says
    what to change, where a traceback would make the reader find it in the source."""
    print("error: " + " ".join(message.split()), file=sys.stderr)
    raise SystemExit(code)


def problem(args: Args) -> Optional[str]:
    """The first setting that cannot run, naming its flag and what it allows; None when all can."""
    for name, (ok, allowed) in LIMITS.items():
        if not ok(getattr(args, name)):
            return f"--{name.replace('_', '-')} {short_repr(getattr(args, name))}: {allowed}"
    rollout = args.num_envs * args.num_steps
    if rollout > MAX_ROLLOUT:
        return (f"--num-envs {args.num_envs} x --num-steps {args.num_steps} = {rollout:,} steps per rollout: must be "
                f"at most {MAX_ROLLOUT:,} (the rollout is held in memory)")
    if args.num_minibatches > rollout:
        return (f"--num-minibatches {args.num_minibatches}: must be at most --num-envs x --num-steps = {rollout:,}, "
                "so that every minibatch holds a step")
    for seed in args.eval_seeds:
        if not 0 <= seed <= MAX_SEED:
            return f"--eval-seeds {short_repr(seed)}: must be integers from 0 to {MAX_SEED}"
    if args.seed in args.eval_seeds:
        return f"--eval-seeds {list(args.eval_seeds)} must differ from the training --seed {args.seed} (fresh deals)"
    try:
        rules = Rules(num_players=args.num_players)
    except AllFivesError as exc:
        return f"--num-players {args.num_players}: {exc}"
    try:  # each built once here, with the rules: a bad name or a missing policy file fails now, not after training
        opponent_mixture(args.opponents)
        check_batch_specs(args.opponents)
        check_agents(list(args.opponents), rules)
    except AllFivesError as exc:
        return f"--opponents {' '.join(args.opponents) or '(none)'}: {exc}"
    if args.curve_every and not args.eval_seeds:
        return "--curve-every needs an evaluation seed: give --eval-seeds"
    try:
        check_agents(list(args.eval_opponents) if args.eval_games or args.curve_every else [], rules)
    except AllFivesError as exc:
        return f"--eval-opponents {' '.join(args.eval_opponents) or '(none)'}: {exc}"
    for flag, path in (("--export", args.export), ("--json-out", args.json_out)):
        try:
            check_output(path, flag)
        except OSError as exc:
            return str(exc)
    if args.export and "," in args.export:
        return f"--export {args.export}: give a path without a comma (the agent spec ppo:path=... splits at commas)"
    if args.export and os.path.exists(args.export) and not os.path.isfile(args.export):
        return f"--export {args.export}: not a regular file (the policy is written beside it, then renamed over it)"
    return None


def check_args(args: Args) -> None:
    """Refuse a setting that cannot run before any training, in one line naming the flag (SystemExit 2): a NaN
    learning rate or an empty minibatch would otherwise end in a traceback, or worse, train NaN weights silently."""
    found = problem(args)
    if found:
        fail(found)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    """CleanRL's orthogonal start."""
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


@dataclass
class Batch:
    """Observations split for the network: ``position`` (B, obs less the feature rows), ``mask`` (B, A) the legal
    actions, ``ids`` (B, L) placement ids (the legal ones, then illegal ones as padding), ``rows`` (B, L, F) their
    feature rows (an illegal placement's row is zero: it scores ``g(0)``, as every zero row does)."""

    position: torch.Tensor
    mask: torch.Tensor
    ids: torch.Tensor
    rows: torch.Tensor

    def take(self, index: torch.Tensor) -> "Batch":
        """The rows ``index`` (a minibatch)."""
        return Batch(*(getattr(self, f.name)[index] for f in fields(self)))


class Agent(nn.Module):
    """Actor and critic MLPs over the position, plus one scorer shared by every placement's feature row."""

    def __init__(self, encoder: ObservationEncoder, hidden: int, scorer_hidden: int) -> None:
        super().__init__()
        features = encoder.slices["features"]
        self.offset, self.end, self.obs_size = features.start, features.stop, encoder.size
        self.width, self.n_actions = len(ACTION_FEATURES), encoder.num_actions
        self.placements = (self.end - self.offset) // self.width  # 4 ends x T tiles: one row per placement id
        position = self.obs_size - (self.end - self.offset)
        self.critic = nn.Sequential(layer_init(nn.Linear(position, hidden)), nn.ReLU(),
                                    layer_init(nn.Linear(hidden, hidden)), nn.ReLU(),
                                    layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(position, hidden)), nn.ReLU(),
                                   layer_init(nn.Linear(hidden, hidden)), nn.ReLU(),
                                   layer_init(nn.Linear(hidden, self.n_actions), std=0.01))
        self.scorer = nn.Sequential(nn.Linear(self.width, scorer_hidden), nn.ReLU(), nn.Linear(scorer_hidden, 1))

    def position(self, obs: torch.Tensor) -> torch.Tensor:
        """The observation without the feature rows: what the two MLPs read."""
        return torch.cat([obs[:, :self.offset], obs[:, self.end:]], dim=1)

    def split(self, obs: torch.Tensor, mask: torch.Tensor) -> Batch:
        """The observations as the network reads them: the position, and the feature rows of the legal
        placements only (``L`` = the most legal placements of any row)."""
        legal = mask[:, :self.placements]
        L = max(int(legal.sum(1).max()), 1)
        ids = legal.to(torch.uint8).topk(L, dim=1, sorted=False).indices  # the legal ids first, then padding
        rows = obs[:, self.offset:self.end].reshape(-1, self.placements, self.width)
        rows = rows.gather(1, ids[:, :, None].expand(-1, -1, self.width))
        return Batch(self.position(obs), mask, ids, rows)

    def logits(self, b: Batch) -> torch.Tensor:
        """``actor(position)_a + g(row_a)``: a legal placement's own score, ``g(0)`` (a zero row's) elsewhere, as
        if every row were scored (an illegal placement's row is zero); 0 past the placements."""
        zero = self.scorer(b.rows.new_zeros(1, self.width)).reshape(1, 1)
        scores = zero.expand(len(b.ids), self.placements).scatter(1, b.ids, self.scorer(b.rows).squeeze(2))
        if self.n_actions > self.placements:
            scores = nn.functional.pad(scores, (0, self.n_actions - self.placements))
        return self.actor(b.position) + scores

    def get_value(self, b: Batch) -> torch.Tensor:
        return self.critic(b.position).squeeze(1)

    def get_action_and_value(self, b: Batch, action: Optional[torch.Tensor] = None,
                             generator: Optional[torch.Generator] = None) -> tuple[torch.Tensor, ...]:
        """(action, log-prob, entropy, value); samples an action (legal only) when none is given."""
        logits, mask = self.logits(b), b.mask
        best = torch.where(mask, logits, -1e8).max(1, keepdim=True).values.detach()
        logp_all = torch.where(mask, logits - best, -80.0).log_softmax(1)
        if action is None:
            u = torch.rand(logits.shape, generator=generator).clamp_(1e-20, 1.0)
            action = torch.where(mask, logp_all - torch.log(-torch.log(u)), -torch.inf).argmax(1)
        entropy = -(logp_all.exp() * logp_all).sum(1)
        return action, logp_all.gather(1, action[:, None]).squeeze(1), entropy, self.get_value(b)


def gae(rewards: torch.Tensor, values: torch.Tensor, terms: torch.Tensor, dones: torch.Tensor,
        next_value: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """Advantages along time (T, N). ``next_value`` of the observation after the rollout; a step's next value is
    the next row's (a truncated game's final observation under next_step autoreset). A done step cuts the trace."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros_like(next_value)
    for t in reversed(range(rewards.shape[0])):
        nextvalue = next_value if t == rewards.shape[0] - 1 else values[t + 1]
        delta = rewards[t] + gamma * nextvalue * (1.0 - terms[t]) - values[t]
        lastgaelam = advantages[t] = delta + gamma * lam * (1.0 - dones[t]) * lastgaelam
    return advantages


def ppo_update(agent: Agent, optimizer: torch.optim.Optimizer, args: Args, batch: dict[str, torch.Tensor],
               generator: torch.Generator) -> dict[str, float]:
    """CleanRL's clipped PPO epochs over the valid steps of one rollout."""
    obs = agent.split(batch["obs"], batch["masks"])  # once per rollout, not per minibatch
    valid = batch["valid"].nonzero().squeeze(1)
    count = min(args.num_minibatches, len(valid))  # fewer valid steps than minibatches: one step each, none empty
    minibatch = len(valid) // max(count, 1)
    stats = dict.fromkeys(("approx_kl", "pg_loss", "v_loss", "entropy"), math.nan)  # NaN: no valid step to learn
    for _ in range(args.update_epochs if count else 0):
        order = valid[torch.randperm(len(valid), generator=generator)]
        for k in range(count):  # equal minibatches; the few valid steps left over wait a round
            mb = order[k * minibatch:(k + 1) * minibatch]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(obs.take(mb), batch["actions"][mb])
            logratio = newlogprob - batch["logprobs"][mb]
            ratio = logratio.exp()
            with torch.no_grad():
                stats["approx_kl"] = float(((ratio - 1) - logratio).mean())
            mb_adv = batch["advantages"][mb]
            if args.norm_adv and len(mb) > 1:  # the std of one advantage is NaN
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            returns, old_values = batch["returns"][mb], batch["values"][mb]
            if args.clip_vloss:
                clipped = old_values + (newvalue - old_values).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - returns) ** 2, (clipped - returns) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - returns) ** 2).mean()
            loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
            stats.update(pg_loss=pg_loss.item(), v_loss=v_loss.item(), entropy=entropy.mean().item())
        if args.target_kl is not None and stats["approx_kl"] > args.target_kl:
            break
    return stats


def train(args: Args, envs: gymnasium.vector.VectorEnv, agent: Agent,
          curve_point: Optional[Callable[[int], None]] = None) -> dict[str, float]:
    """The CleanRL loop: rollouts of ``num_steps`` in every game, GAE, PPO; the training figures. ``curve_point``
    (step) is called at the start and whenever training passes a multiple of ``--curve-every``; its time is kept
    out of the speed figures."""
    generator = torch.Generator().manual_seed(args.seed)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    obs_buf = torch.zeros((T, N, envs.single_observation_space.shape[0]))
    masks_buf = torch.zeros((T, N, envs.single_action_space.n), dtype=torch.bool)
    actions, logprobs, rewards, values, terms, dones, valid = (torch.zeros((T, N)) for _ in range(7))
    actions = actions.long()
    num_iterations = -(-args.total_timesteps // (T * N))
    next_obs = torch.from_numpy(envs.reset(seed=args.seed)[0])
    global_step, episodes, returns_sum, episode_return, rollout_seconds = 0, 0, 0.0, np.zeros(N), 0.0
    start, curve_seconds, curve_done = time.perf_counter(), 0.0, 0

    def take_curve_point() -> float:
        t0 = time.perf_counter()
        assert curve_point is not None
        curve_point(global_step)
        return time.perf_counter() - t0

    if curve_point is not None:
        curve_seconds += take_curve_point()
    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        t_rollout = time.perf_counter()
        for step in range(T):
            mask = torch.tensor(envs.action_masks())  # a copy: the env's array is read-only
            waiting = mask.any(1)  # False: the game ended at the last step, this step only restarts it
            obs_buf[step], valid[step] = next_obs, waiting.float()
            mask[~waiting, 0] = True  # any action does there (the env ignores it); the update skips that row
            masks_buf[step] = mask
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(agent.split(next_obs, masks_buf[step]),
                                                                       generator=generator)
            actions[step], logprobs[step], values[step] = action, logprob, value
            obs, reward, term, trunc, _ = envs.step(action.numpy())
            global_step += int(waiting.sum())
            rewards[step], terms[step] = torch.from_numpy(reward).float(), torch.from_numpy(term).float()
            dones[step] = torch.from_numpy(term | trunc).float()
            episode_return += reward
            ended = term | trunc
            episodes += int(ended.sum())
            returns_sum += float(episode_return[ended].sum())
            episode_return[ended] = 0.0
            next_obs = torch.from_numpy(obs)
        rollout_seconds += time.perf_counter() - t_rollout
        with torch.no_grad():
            next_value = agent.critic(agent.position(next_obs)).squeeze(1)
            advantages = gae(rewards, values, terms, dones, next_value, args.gamma, args.gae_lambda)
        batch = {"obs": obs_buf.reshape(T * N, -1), "masks": masks_buf.reshape(T * N, -1),
                 "actions": actions.reshape(-1), "logprobs": logprobs.reshape(-1), "values": values.reshape(-1),
                 "advantages": advantages.reshape(-1), "returns": (advantages + values).reshape(-1),
                 "valid": valid.reshape(-1).bool()}
        stats = ppo_update(agent, optimizer, args, batch, generator)
        if curve_point is not None and global_step // args.curve_every > curve_done:
            curve_done = global_step // args.curve_every
            curve_seconds += take_curve_point()
        if iteration % 10 == 0 or iteration == num_iterations:
            sps = global_step / (time.perf_counter() - start - curve_seconds)
            mean_return = returns_sum / max(episodes, 1)
            print(f"iter {iteration}/{num_iterations} global_step {global_step} SPS {sps:,.0f} episodes {episodes} "
                  f"mean_return {mean_return:+.3f} entropy {stats['entropy']:.3f} approx_kl {stats['approx_kl']:.4f}",
                  flush=True)
            episodes, returns_sum = 0, 0.0
    seconds = time.perf_counter() - start - curve_seconds
    return {"global_step": global_step, "train_seconds": round(seconds, 2), "rollout_seconds": round(rollout_seconds, 2),
            "steps_per_second": round(global_step / seconds, 1), "curve_seconds": round(curve_seconds, 1)}


class TorchPolicyPlayer(PlayerAgent):
    """The trained actor as a project agent: observes its seat with the encoder it was trained with (the vector
    env's observation, bit for bit) and plays the legal action of highest logit."""

    name = AGENT_NAME

    def __init__(self, seed: Optional[int] = None, *, net: Agent, encoder: ObservationEncoder) -> None:
        super().__init__(seed)
        self.net, self.encoder = net, encoder

    def act(self, view: PlayerView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        mask = torch.zeros((1, self.net.n_actions), dtype=torch.bool)
        mask[0, legal] = True
        with torch.no_grad():
            logits = self.net.logits(self.net.split(torch.from_numpy(view.observation(self.encoder))[None], mask))
        return legal[int(np.argmax(logits[0, legal].numpy()))]


def register_policy(net: Agent, encoder: ObservationEncoder) -> None:
    """Name the network being trained as an agent of this process, so the evaluation harness can seat it."""
    register_agent(AGENT_NAME, lambda seed=None: TorchPolicyPlayer(seed, net=net, encoder=encoder),
                   "the policy trained by examples/cleanrl_ppo.py (this process only)")


def evaluate_policy(args: Args, net: Agent, encoder: ObservationEncoder, seeds: Optional[tuple[int, ...]] = None,
                    games: Optional[int] = None, label: str = "eval") -> list[dict]:
    """The policy against each evaluation opponent on each fresh seed (``--eval-seeds``, ``--eval-games`` unless
    given): one printed line each."""
    register_policy(net, encoder)
    results = []
    for opponent in args.eval_opponents:
        for seed in args.eval_seeds if seeds is None else seeds:
            t0 = time.perf_counter()
            match = evaluate([AGENT_NAME, opponent], encoder.rules, games=games or args.eval_games, seed=seed,
                             processes=1, progress=False)
            low, high = match.win_rate_ci
            print(f"{label} vs {opponent} (seed {seed}, {match.games} games): win rate {100 * match.win_rate:.1f}% "
                  f"[95% CI {100 * low:.1f}% - {100 * high:.1f}%]", flush=True)
            results.append({"opponent": opponent, "seed": seed, "games": match.games, "win_rate": match.win_rate,
                            "win_rate_ci": [low, high], "points_per_hand": match.points_per_hand,
                            "seconds": round(time.perf_counter() - t0, 1)})
    return results


def export_policy(net: Agent, encoder: ObservationEncoder, path: str) -> None:
    """The actor as a numpy policy file: the first layer widened to the whole observation (zero weights on the
    feature rows), and the logits layer reading [hidden, scores] with the identity on the scores."""
    arr = [(lin.weight.detach().numpy().copy(), lin.bias.detach().numpy().copy())
           for lin in net.actor if isinstance(lin, nn.Linear)]
    w0 = np.zeros((arr[0][0].shape[0], net.obs_size), np.float32)
    w0[:, :net.offset], w0[:, net.end:] = arr[0][0][:, :net.offset], arr[0][0][:, net.offset:]
    head_w, head_b = arr[-1]
    action = (np.concatenate([head_w, np.eye(net.n_actions, dtype=np.float32)], axis=1), head_b)
    scorer = [(lin.weight.detach().numpy().copy(), lin.bias.detach().numpy().copy())
              for lin in net.scorer if isinstance(lin, nn.Linear)]
    spec = {"offset": net.offset, "placements": net.placements, "features": net.width,
            "hidden": [w.shape[0] for w, _ in scorer[:-1]]}
    write_policy_file(path, encoder.rules, [(w0, arr[0][1])] + arr[1:-1], action, "relu", {}, (net.obs_size,),
                      net.n_actions, algorithm="cleanrl-ppo", scorer=spec, scorer_layers=scorer)
    print(f"exported {path}")


def new_run_dir(root: Path, name: str) -> Path:
    """A fresh folder for one run, named as ``allfives train`` names its runs: ``root/name``, else the next free
    ``root/name_<k>``. ``mkdir`` claims it, so runs started together (a sweep over one seed) never share one."""
    path, k = root / name, 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:  # taken (or a file of that name): the next number
            k += 1
            path = root / f"{name}_{k}"


def write_output(what: str, write: Callable[[], object]) -> None:
    """Run ``write``; a failure (a full disk, a folder gone) ends the run in one line naming ``what``, exit 1."""
    try:
        write()
    except OSError as exc:
        fail(f"{what}: could not write it: {exc.strerror or exc}", code=1)


def evaluate_command(policy: Path, args: Args) -> str:
    """The ``allfives evaluate`` line that plays the saved policy against ``greedy`` on fresh deals."""
    seed = next(s for s in (*args.eval_seeds, 2026, 2027) if s != args.seed)
    players = [] if args.num_players == 2 else ["--players", str(args.num_players)]
    return shlex.join(["allfives", "evaluate", f"ppo:path={policy}", "greedy", *players, "--games", "1000",
                       "--seed", str(seed)])


def main(args: Args) -> dict:
    check_args(args)
    if args.export:
        policy = Path(args.export)
    else:  # a fresh run folder, made now: one that cannot be made fails before the training, not after
        try:
            run_dir = new_run_dir(RUNS, f"seed{args.seed}")
        except OSError as exc:
            fail(f"cannot make a run folder in {RUNS}: {exc.strerror or exc} (or give --export PATH)")
        policy = run_dir / "policy.npz"
        write_output(f"the run's settings {run_dir / 'args.json'}",
                     lambda: (run_dir / "args.json").write_text(json.dumps(asdict(args), indent=1) + "\n"))
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)  # the weights' start; sampling and minibatches use train()'s own generator
    wall = time.perf_counter()
    rules = Rules(num_players=args.num_players)
    envs = gymnasium.make_vec("AllFives-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                              opponents=list(args.opponents), reward=args.reward, episode=args.episode,
                              action_features=True, autoreset_mode="next_step", rules=rules)
    encoder = ObservationEncoder(rules, action_features=True)
    agent = Agent(encoder, args.hidden, args.scorer_hidden)
    curve: list[dict] = []

    def curve_point(step: int) -> None:
        for row in evaluate_policy(args, agent, encoder, seeds=args.eval_seeds[:1], games=args.curve_games,
                                   label=f"curve @ {step:,} steps:"):
            curve.append({"step": step, **row})

    figures = train(args, envs, agent, curve_point if args.curve_every else None)
    envs.close()
    figures["train_wall_seconds"] = round(time.perf_counter() - wall, 1)
    print(f"trained {figures['global_step']:,} steps in {figures['train_seconds']:.0f} s "
          f"({figures['rollout_seconds']:.0f} s of rollouts): {figures['steps_per_second']:,.0f} env steps/s", flush=True)
    write_output(f"--export {policy}" if args.export else f"the policy file {policy}",
                 lambda: export_policy(agent, encoder, str(policy)))
    print(f"evaluate it: {evaluate_command(policy, args)}", flush=True)
    evaluations = evaluate_policy(args, agent, encoder) if args.eval_games else []
    figures["wall_seconds"] = round(time.perf_counter() - wall, 1)
    print(f"wall time {figures['wall_seconds']:.0f} s")
    out = {"args": asdict(args), **figures, "evaluations": evaluations, "curve": curve}
    if args.json_out:
        write_output(f"--json-out {args.json_out}",
                     lambda: Path(args.json_out).write_text(json.dumps(out, indent=1) + "\n"))
    return out


if __name__ == "__main__":
    try:
        main(tyro.cli(Args))
    except AllFivesError as exc:  # the package's errors say what was wrong and what is allowed: that line alone
        fail(str(exc))
