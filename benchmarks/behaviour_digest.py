"""A digest of everything the engines and front ends produce, to prove that a restructuring changed nothing.

Over fixed rule sets (``benchmarks/behaviour_rules.json``: option dictionaries, so the digest does not depend
on how the rule sampler draws) and fixed seeds, it hashes, per component:

* ``aec``: ``allfives_v0.raw_env`` under random legal play, with both reward and both episode modes and action
  features: every observation, mask, reward, termination, truncation and info the agents see;
* ``single_seat``: ``AllFives-v0``'s single-seat env against ``expert`` and ``random`` opponents: every
  observation, reward, flag and info;
* ``batch``: ``BatchGame`` games played to the end by random legal actions (every legal mask, observation with
  action features, final records field by field and every replay);
* ``batch_agents``: the batch agents' values and moves on those games;
* ``policies``: the shipped policies' actions on single-seat observations of their own player counts;
* ``openspiel`` (when pyspiel is installed): ``python_allfives`` random games: every observation and
  information-state tensor, legal action set and return.

Floats are hashed as their exact bytes. ``--write PATH`` records the digest, ``--check PATH`` recomputes it and
says, per component, identical or different (exit status 1 if any differs).

    python benchmarks/behaviour_digest.py --write benchmarks/results/behaviour_digest.json
    python benchmarks/behaviour_digest.py --check benchmarks/results/behaviour_digest.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from allfives_env import allfives_v0  # noqa: E402
from allfives_env.core import Rules  # noqa: E402

RULES_FILE = Path(__file__).resolve().parent / "behaviour_rules.json"


class Digest:
    """A running sha256 over values of any of the kinds the engines produce."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def add(self, value: Any) -> None:
        if isinstance(value, np.ndarray):
            self.hash.update(f"{value.dtype.str}{value.shape}".encode())
            self.hash.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                self.add(str(key))
                self.add(value[key])
        elif isinstance(value, (list, tuple)):
            self.hash.update(f"[{len(value)}".encode())
            for item in value:
                self.add(item)
        elif isinstance(value, (float, np.floating)):
            self.hash.update(np.float64(value).tobytes())
        else:
            self.hash.update(repr(value).encode())

    def hexdigest(self) -> str:
        return self.hash.hexdigest()


def rule_sets() -> list[Rules]:
    """The fixed rule sets (option dictionaries in :data:`RULES_FILE`)."""
    return [Rules.from_options(options) for options in json.loads(RULES_FILE.read_text())]


def aec_digest(rules_list: list[Rules]) -> str:
    d = Digest()
    for k, rules in enumerate(rules_list):
        for reward, episode in (("win", "game"), ("points", "hand")):
            env = allfives_v0.raw_env(rules=rules, reward=reward, episode=episode, action_features=k % 2 == 0)
            rng = np.random.default_rng(k)
            env.reset(seed=k)
            steps = 0
            while env.agents and steps < 400:
                obs, rew, term, trunc, info = env.last()
                d.add([obs["observation"], obs["action_mask"], rew, term, trunc, info])
                if term or trunc:
                    env.step(None)
                else:
                    env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                steps += 1
            d.add([env.rewards, env._cumulative_rewards])  # noqa: SLF001 - PettingZoo's own bookkeeping
    return d.hexdigest()


def single_seat_digest(rules_list: list[Rules]) -> str:
    from allfives_env.single_seat import AllFivesSingleSeatEnv

    d = Digest()
    for k, rules in enumerate(rules_list[:8]):
        env = AllFivesSingleSeatEnv(opponents=("expert", "random"), rules=rules, reward=("win", "points")[k % 2],
                                    episode=("game", "hand")[k // 2 % 2], action_features=k % 3 == 0)
        rng = np.random.default_rng(100 + k)
        obs, info = env.reset(seed=k)
        for _ in range(150):
            mask = env.action_masks()
            if not mask.any():  # the game ended before the learner's first move (reset returns it as it is)
                obs, info = env.reset()
                d.add(["ended before the learner moved", obs, info])
                continue
            obs, rew, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            d.add([obs, mask, rew, term, trunc, info])
            if term or trunc:
                obs, info = env.reset()
                d.add([obs, info])
    return d.hexdigest()


def batch_digest(rules_list: list[Rules]) -> tuple[str, str]:
    from allfives_env.batch import BatchGame
    from allfives_env.batch.agents import BATCH_AGENTS, make_batch_agent

    d, agents_d = Digest(), Digest()
    for k, rules in enumerate(rules_list):
        batch = BatchGame(rules, 8, seed=k)
        streams = np.arange(8, dtype=np.uint64) + np.uint64(k)
        agents = [make_batch_agent(name, k, 8) for name in BATCH_AGENTS]
        steps = 0
        while not batch.done.all() and steps < 600:
            d.add([batch.legal_mask(), batch.observe(action_features=True), batch.current, batch.scores])
            agent = agents[steps % len(agents)]
            actions, values, tied = agent.values(batch)
            agents_d.add([actions, values, tied, agent.act(batch)])
            batch.step(batch.random_actions(streams))
            steps += 1
        for name in batch.S.dtype.names:
            if name in ("hist", "turn_seat"):
                # observation version 2's turn history, kept only by a batch built with history=True: in these
                # (version-1) batches it must hold its blank values, and it is left out of the digest so that
                # the digest of everything else stays comparable with the one recorded before it existed
                assert not batch.history and not batch.S["hist"].any() and (batch.S["turn_seat"] == -1).all()
                continue
            d.add([name, batch.S[name]])
        for i in range(batch.n):
            d.add(json.dumps(batch.replay(i), sort_keys=True))
    return d.hexdigest(), agents_d.hexdigest()


def policies_digest() -> str:
    from allfives_env.agents import make_agent
    from allfives_env.agents import PlayerView
    from allfives_env.core import Game

    d = Digest()
    for name, players in (("ppo-2p", 2), ("ppo-3p", 3), ("ppo-4p", 4)):
        agent = make_agent(name, seed=0)
        rules = Rules(num_players=players)
        for seed in range(6):
            game = Game(rules, seed)
            agent.reset(seed)
            moves = 0
            while not game.over and moves < 200:
                seat = game.current
                view = PlayerView(game, seat)
                action = agent.act(view)
                d.add([seat, action])
                game.step(action)
                moves += 1
    return d.hexdigest()


def openspiel_digest(rules_list: list[Rules]) -> str:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return "pyspiel not installed"
    from allfives_env.openspiel import load_game

    d = Digest()
    for k in range(6):
        game = load_game(players=2 + k % 3, max_hands=2)
        rng = np.random.default_rng(k)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                d.add([list(outcomes), list(probs)])
                state.apply_action(int(rng.choice(outcomes, p=np.array(probs) / sum(probs))))
                continue
            player = state.current_player()
            d.add([np.array(state.observation_tensor(player)), np.array(state.information_state_tensor(player)),
                   state.legal_actions()])
            state.apply_action(int(rng.choice(state.legal_actions())))
        d.add(state.returns())
    return d.hexdigest()


def compute() -> dict[str, str]:
    rules_list = rule_sets()
    parts: dict[str, Callable[[], Any]] = {
        "aec": lambda: aec_digest(rules_list),
        "single_seat": lambda: single_seat_digest(rules_list),
        "batch": lambda: batch_digest(rules_list),
        "policies": policies_digest,
        "openspiel": lambda: openspiel_digest(rules_list),
    }
    out: dict[str, str] = {}
    for name, part in parts.items():
        start = time.perf_counter()
        value = part()
        if name == "batch":
            out["batch"], out["batch_agents"] = value
        else:
            out[name] = value
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return out


def _write_rules(count: int) -> None:
    """Record ``count`` rule sets from the sampler as option dictionaries (done once; the file is the input)."""
    import dataclasses

    from allfives_env.rule_sampler import random_rules

    rng = np.random.default_rng(20261202)
    sets = [dataclasses.asdict(random_rules(rng)) for _ in range(count)]
    RULES_FILE.write_text(json.dumps(sets, indent=1) + "\n")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="compute the digest and write it to this JSON file")
    group.add_argument("--check", type=Path, help="compute the digest and compare it with this JSON file")
    group.add_argument("--make-rules", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make_rules:
        _write_rules(args.make_rules)
        return 0
    digest = compute()
    if args.write:
        args.write.write_text(json.dumps(digest, indent=1) + "\n")
        print(json.dumps(digest, indent=1))
        return 0
    recorded = json.loads(args.check.read_text())
    differs = [name for name in sorted(set(recorded) | set(digest)) if recorded.get(name) != digest.get(name)]
    for name in sorted(set(recorded) | set(digest)):
        print(f"{name:12s} {'different' if name in differs else 'identical'}")
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
