"""Throughput of All Fives under random legal play, against OpenSpiel and PettingZoo baselines.

What is measured (one process, one core, decisions per second of wall time):

(a) ``engine``  the core alone: ``Game(Rules(num_players=n), seed=i)``, then ``g.step(a)`` with ``a``
    drawn uniformly from ``g.legal`` until ``g.over``; a new game (next seed) when one ends.
(b) ``raw_env`` the AEC loop on ``allfives_v0.raw_env(num_players=n)``: ``env.last()`` (observation
    and action mask built), a legal action drawn uniformly from ``np.flatnonzero(obs["action_mask"])``,
    ``env.step(a)``; ``env.step(None)`` for a terminated/truncated agent, ``env.reset()`` once
    ``env.agents`` is empty.
(c) ``env``     the same loop through ``allfives_v0.env(num_players=n)`` (PettingZoo's classic wrappers).

Baselines, run in the same process when installed:

* OpenSpiel ``python_block_dominoes`` (the pure-Python block dominoes, 2 players): ``new_initial_state``,
  chance nodes sampled uniformly from ``chance_outcomes()``, player nodes from ``legal_actions()``.
  ``no obs``: nothing else. ``observation_tensor``: also ``state.observation_tensor(player)`` for the
  player to move at every decision: the game's own observation-tensor API, the target's baseline. An
  extra, informational row builds the observation the fastest way OpenSpiel offers for Python games (an
  observer from ``make_observation``, made once, ``set_from(state, player)`` each decision); the ratio
  against it is printed too, marked ``info``, and never fails ``--strict``.
* PettingZoo ``connect_four_v3`` ``raw_env()`` and ``env()``, driven by the same AEC loop function as (b)/(c).

Counting: a *decision* is one action chosen by a player. Not counted: OpenSpiel chance nodes (the deal),
the engine's forced draws and passes (they happen inside ``Game.step``), and the AEC ``step(None)``
calls for finished agents (they are still executed and their time is included). Resets and new games
are inside the timed loop too.

Each loop is warmed up briefly, then played whole episodes until ``--seconds`` of wall time have passed
(``time.perf_counter``); the rate is decisions / elapsed. Randomness comes from one
``random.Random(seed)`` per loop, the same sampling code for every library; no global random state.

Targets (ratios of decisions/s, for every player count measured; the baselines are 2-player games):

* (a) engine  >= 10x  OpenSpiel ``python_block_dominoes`` without observations
* (b) raw_env >= 5x   OpenSpiel ``python_block_dominoes`` with observations
* (b) raw_env >= 1.5x ``connect_four_v3.raw_env()``
* (c) env     >= 1x   ``connect_four_v3.env()``

``--alternate N`` measures the (b) target alone, the way its target is stated: N rounds in one process,
each timing the (b) ``raw_env`` loop (every ``--players`` count) and then OpenSpiel's
``python_block_dominoes`` with ``observation_tensor``; the ratio of each round is computed from that round's
two rates, and the median of the N ratios is reported (and checked by ``--strict``). Alternating puts
both loops under the same slow drift of a shared machine, which a single pair of runs does not.

Run::

    python benchmarks/throughput.py                   # 3 s per loop, 2 and 4 players, with baselines
    python benchmarks/throughput.py --alternate 3 --players 2 --json alt.json   # (b) vs OpenSpiel obs, median of 3
    python benchmarks/throughput.py --seconds 1 --players 2 --skip-baselines
    python benchmarks/throughput.py --json results.json --strict   # exit 1 if a target fails

Optional packages for the baselines: ``open_spiel`` and ``pygame`` (``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np

# Let `python benchmarks/throughput.py` work from a source checkout without installing the package.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from allfives_env import allfives_v0  # noqa: E402
from allfives_env.core import Game, Rules  # noqa: E402

Episode = Callable[[], int]
"""Plays one whole episode and returns the number of decisions taken."""

WARMUP_SECONDS = 0.3


@dataclass
class Result:
    """One timed loop."""

    key: str
    label: str
    players: int
    decisions: int
    episodes: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Check:
    """One target: ``numerator / denominator >= target``."""

    name: str
    players: int
    numerator: str
    denominator: str
    target: float
    ratio: Optional[float] = None
    skipped: Optional[str] = None

    @property
    def informational(self) -> bool:
        """Rows named ``info:`` are shown for context and never fail ``--strict``."""
        return self.name.startswith("info:")

    @property
    def passed(self) -> Optional[bool]:
        return None if self.ratio is None else self.ratio >= self.target


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


# ====================================================================== timing
def time_loop(episode: Episode, seconds: float, warmup: float = WARMUP_SECONDS) -> tuple[int, int, float]:
    """Warm ``episode`` up for ``warmup`` s, then run whole episodes for at least ``seconds`` s.

    The clock is read between episodes only, so the loop itself carries no timing overhead; the last
    episode overshoots a little and the elapsed time is measured, not assumed.
    Returns (decisions, episodes, elapsed seconds).
    """
    clock = time.perf_counter
    end = clock() + warmup
    while clock() < end:
        episode()
    decisions = episodes = 0
    start = clock()
    end = start + seconds
    now = start
    while now < end:
        decisions += episode()
        episodes += 1
        now = clock()
    return decisions, episodes, now - start


# ====================================================================== our loops
def engine_episode(num_players: int, seed: int) -> Episode:
    """(a) The core alone: a fresh seeded ``Game`` per episode, uniform random legal actions."""
    rules = Rules(num_players=num_players)
    rng = random.Random(seed)
    randrange = rng.randrange
    next_seed = [seed]

    def episode() -> int:
        next_seed[0] += 1
        g = Game(rules, seed=next_seed[0])
        n = 0
        step = g.step
        while not g.over:
            legal = g.legal
            step(legal[randrange(len(legal))])
            n += 1
        return n

    return episode


def aec_episode(env: Any, seed: int) -> Episode:
    """(b)/(c) and the connect_four baselines: the plain AEC loop, identical for every environment.

    The first reset is seeded; each episode then resets without a seed (the environment continues its
    own generator), as training loops do. ``step(None)`` for finished agents is run, not counted.
    """
    rng = random.Random(seed)
    randrange = rng.randrange
    flatnonzero = np.flatnonzero
    env.reset(seed=seed)
    first = [True]

    def episode() -> int:
        if first[0]:
            first[0] = False
        else:
            env.reset()
        last = env.last
        step = env.step
        n = 0
        while env.agents:
            obs, _reward, term, trunc, _info = last()
            if term or trunc:
                step(None)
                continue
            legal = flatnonzero(obs["action_mask"])
            step(legal[randrange(len(legal))])
            n += 1
        return n

    return episode


# ====================================================================== OpenSpiel baseline
def load_block_dominoes() -> Any:
    """OpenSpiel's ``python_block_dominoes``; raises ImportError when OpenSpiel is missing."""
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers python_block_dominoes)

    return pyspiel.load_game("python_block_dominoes")


def openspiel_episode(game: Any, seed: int, observe: Optional[str]) -> Episode:
    """Random play of an OpenSpiel game. ``observe``: None, ``"observer"`` (``set_from`` on an observer
    built once) or ``"tensor"`` (``state.observation_tensor(player)``), done once per decision.
    Chance outcomes are sampled uniformly (block dominoes' deal is uniform) and are not counted."""
    rng = random.Random(seed)
    randrange = rng.randrange
    observer = None
    if observe == "observer":
        import pyspiel
        from open_spiel.python.observation import make_observation

        observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    use_tensor = observe == "tensor"

    def episode() -> int:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[randrange(len(outcomes))][0])
                continue
            if observer is not None:
                observer.set_from(state, state.current_player())
            elif use_tensor:
                state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[randrange(len(legal))])
            n += 1
        return n

    return episode


# ====================================================================== driver
def pin_one_core() -> Optional[int]:
    """Pin this process to one CPU (Linux); returns the CPU or None where not supported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
        return cpus[0]
    except OSError:
        return None


def run(seconds: float, players: list[int], skip_baselines: bool, seed: int, log: Callable[[str], None]) -> Report:
    report = Report()

    def measure(key: str, label: str, n: int, episode: Episode) -> Result:
        decisions, episodes, elapsed = time_loop(episode, seconds)
        res = Result(key, label, n, decisions, episodes, elapsed)
        report.results.append(res)
        log(f"  {label:<48} {n:>2}  {res.rate:>12,.0f}  {1e6 / max(res.rate, 1e-9):>9.2f}  {episodes:>7}")
        return res

    log(f"  {'loop':<48} {'P':>2}  {'decisions/s':>12}  {'us/dec':>9}  {'episodes':>7}")
    log("  " + "-" * 88)
    for n in players:
        measure("engine", "(a) allfives engine (core.Game)", n, engine_episode(n, seed))
        measure("raw_env", "(b) allfives_v0.raw_env AEC loop", n, aec_episode(allfives_v0.raw_env(num_players=n), seed))
        measure("env", "(c) allfives_v0.env AEC loop", n, aec_episode(allfives_v0.env(num_players=n), seed))

    if skip_baselines:
        report.skipped.append("baselines skipped (--skip-baselines)")
    else:
        try:
            game = load_block_dominoes()
        except Exception as exc:  # ImportError, or a pyspiel without python games
            report.skipped.append(f"OpenSpiel python_block_dominoes comparison skipped: {type(exc).__name__}: {exc}")
        else:
            measure("os_noobs", "OpenSpiel python_block_dominoes, no obs", 2, openspiel_episode(game, seed, None))
            measure("os_obs", "OpenSpiel python_block_dominoes, observation_tensor", 2,
                    openspiel_episode(game, seed, "tensor"))
            measure("os_obs_observer", "  info: obs via a reused observer", 2,
                    openspiel_episode(game, seed, "observer"))
        try:
            from pettingzoo.classic import connect_four_v3
        except Exception as exc:  # pygame missing raises DependencyNotInstalled / ImportError
            report.skipped.append(f"connect_four_v3 comparison skipped: {type(exc).__name__}: {exc}")
        else:
            measure("c4_raw", "PettingZoo connect_four_v3.raw_env AEC loop", 2,
                    aec_episode(connect_four_v3.raw_env(), seed))
            measure("c4_env", "PettingZoo connect_four_v3.env AEC loop", 2, aec_episode(connect_four_v3.env(), seed))

    rates = {}
    for r in report.results:
        rates[(r.key, r.players)] = r.rate
    targets = [
        ("(a) engine vs OpenSpiel block_dominoes, no obs", "engine", "os_noobs", 10.0),
        ("(b) raw_env vs OpenSpiel block_dominoes, obs", "raw_env", "os_obs", 5.0),
        ("info: raw_env vs block_dominoes, reused observer", "raw_env", "os_obs_observer", 5.0),
        ("(b) raw_env vs connect_four_v3.raw_env", "raw_env", "c4_raw", 1.5),
        ("(c) env vs connect_four_v3.env", "env", "c4_env", 1.0),
    ]
    for n in players:
        for name, num, den, target in targets:
            check = Check(name, n, num, den, target)
            base = rates.get((den, 2))
            if base is None:
                check.skipped = "baseline not measured"
            else:
                check.ratio = rates[(num, n)] / base
            report.checks.append(check)
    return report


@dataclass
class AlternateReport:
    """``--alternate``: the rates of each round and the median (b) ratio per player count."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    median_ratio: dict[int, float] = field(default_factory=dict)
    median_rate: dict[str, float] = field(default_factory=dict)
    target: float = 5.0

    @property
    def passed(self) -> bool:
        return all(r >= self.target for r in self.median_ratio.values())


def run_alternate(rounds: int, seconds: float, players: list[int], seed: int,
                  log: Callable[[str], None]) -> AlternateReport:
    """The measurement the (b) target is judged by: ``rounds`` rounds of [raw_env loop(s), OpenSpiel with observation
    tensor], one after the other in this process; each round's ratio uses that round's rates only, so
    a slow spell of the machine lowers both sides of it. Raises ImportError without OpenSpiel."""
    game = load_block_dominoes()
    report = AlternateReport()
    log(f"  {'round':>5}  {'loop':<44} {'P':>2}  {'decisions/s':>12}  {'ratio':>7}")
    log("  " + "-" * 78)
    for r in range(rounds):
        rates: dict[str, float] = {}
        for n in players:
            d, _, t = time_loop(aec_episode(allfives_v0.raw_env(num_players=n), seed + r), seconds)
            rates[f"raw_env_{n}p"] = d / t
        d, _, t = time_loop(openspiel_episode(game, seed + r, "tensor"), seconds)
        rates["os_obs"] = d / t
        ratios = {n: rates[f"raw_env_{n}p"] / rates["os_obs"] for n in players}
        report.rounds.append({"round": r + 1, "rates": rates, "ratios": ratios})
        for n in players:
            log(f"  {r + 1:>5}  {'(b) allfives_v0.raw_env AEC loop':<44} {n:>2}  {rates[f'raw_env_{n}p']:>12,.0f}  "
                f"{ratios[n]:>6.2f}x")
        log(f"  {r + 1:>5}  {'OpenSpiel python_block_dominoes, obs tensor':<44} {2:>2}  {rates['os_obs']:>12,.0f}")
    for key in report.rounds[0]["rates"]:
        report.median_rate[key] = statistics.median(rd["rates"][key] for rd in report.rounds)
    for n in players:
        report.median_ratio[n] = statistics.median(rd["ratios"][n] for rd in report.rounds)
    log("")
    for n in players:
        verdict = "PASS" if report.median_ratio[n] >= report.target else "FAIL"
        log(f"  (b) raw_env vs OpenSpiel block_dominoes, obs: {n}p median of {rounds} ratios "
            f"{report.median_ratio[n]:.2f}x (need {report.target:.1f}x) {verdict}; "
            f"median raw_env {report.median_rate[f'raw_env_{n}p']:,.0f}/s, OpenSpiel {report.median_rate['os_obs']:,.0f}/s")
    return report


def print_checks(report: Report, log: Callable[[str], None]) -> None:
    log("")
    for line in report.skipped:
        log(f"  NOTE: {line}")
    if report.skipped:
        log("")
    if all(c.ratio is None for c in report.checks):
        log("  no baseline measured: target ratios not computed")
        return
    log(f"  {'target':<50} {'P':>2}  {'ratio':>8}  {'need':>6}  result")
    log("  " + "-" * 80)
    for c in report.checks:
        if c.ratio is None:
            log(f"  {c.name:<50} {c.players:>2}  {'-':>8}  {c.target:>5.1f}x  SKIP ({c.skipped})")
        else:
            verdict = "PASS" if c.passed else ("below (info)" if c.informational else "FAIL")
            log(f"  {c.name:<50} {c.players:>2}  {c.ratio:>7.2f}x  {c.target:>5.1f}x  {verdict}")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measured loop (default 3)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], choices=[2, 3, 4],
                        help="player counts for the All Fives loops (default: 2 4)")
    parser.add_argument("--skip-baselines", action="store_true", help="do not run OpenSpiel / connect_four_v3")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a measured target fails")
    parser.add_argument("--alternate", type=int, metavar="N",
                        help="only the (b) target: N alternating rounds of raw_env / OpenSpiel with observations, "
                             "median ratio reported")
    args = parser.parse_args(argv)
    if args.alternate is not None:
        return main_alternate(args)

    cpu = None if args.no_pin else pin_one_core()
    log = print
    log(f"All Fives throughput: random legal play, {args.seconds:g} s per loop, "
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{'pinned to CPU ' + str(cpu) if cpu is not None else 'not pinned'}")
    log("decisions = actions chosen by a player (no chance nodes, forced draws/passes or step(None))")
    log("")
    report = run(args.seconds, args.players, args.skip_baselines, args.seed, log)
    print_checks(report, log)

    if args.json:
        data = {
            "seconds": args.seconds,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "cpu": cpu,
            "results": [dict(asdict(r), rate=r.rate) for r in report.results],
            "checks": [dict(asdict(c), passed=c.passed) for c in report.checks],
            "skipped": report.skipped,
        }
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
        log(f"\nresults written to {args.json}")

    if args.strict and any(c.passed is False and not c.informational for c in report.checks):
        return 1
    return 0


def main_alternate(args: argparse.Namespace) -> int:
    """``--alternate N``: run :func:`run_alternate`, print it, write the JSON, and judge ``--strict``."""
    if args.alternate < 1:
        raise SystemExit("--alternate needs at least 1 round")
    cpu = None if args.no_pin else pin_one_core()
    log = print
    log(f"All Fives (b) target, {args.alternate} alternating rounds, {args.seconds:g} s per loop, "
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{'pinned to CPU ' + str(cpu) if cpu is not None else 'not pinned'}")
    log("")
    try:
        report = run_alternate(args.alternate, args.seconds, args.players, args.seed, log)
    except ImportError as exc:
        log(f"  NOTE: OpenSpiel python_block_dominoes comparison skipped: {type(exc).__name__}: {exc}")
        return 1 if args.strict else 0
    if args.json:
        data = {
            "mode": "alternate",
            "seconds": args.seconds,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "cpu": cpu,
            "rounds": report.rounds,
            "median_rate": report.median_rate,
            "median_ratio": report.median_ratio,
            "target": report.target,
            "passed": report.passed,
        }
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
        log(f"\nresults written to {args.json}")
    return 1 if args.strict and not report.passed else 0


if __name__ == "__main__":
    sys.exit(main())
