"""Every value of every rules option, played by the batch engine on games that exercise it, checked by the core.

A batch game is verified by the core (:func:`mismatch`): its replay re-simulates through ``load_replay`` to the
same end, and its final observation equals the encoder's of the re-simulated game (``max_pip`` reaches the
kernels only there). That alone passes whenever the games happen not to meet a rule, so for each value of
each option the test also plays the same games with that option *forgotten*: its slot of the rules vector
written as the option's default whatever the rules say, which is what the kernels play when a rule is
declared but never written in them. The games of a case must catch that (:func:`caught`), every time, for
every value except the default: forgetting a kernel rule always fails here, not only when random games
happen to meet it. The games are fixed by the case's seed, so what is caught is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional

import numpy as np
import pytest
from contextlib import contextmanager

from allfives_env.batch import BatchGame, layout
from allfives_env.core import Deal, Game, Rules
from allfives_env.core.errors import AllFivesError, BatchError
from allfives_env.core.options import MAX_COUNT, OPTION, OPTIONS
from allfives_env.core.replay import load_replay
from allfives_env.encoding import ObservationEncoder

GAMES = 4
#: Values no game can tell from the default: a turn never draws 2**31-1 times (the boneyard runs out first),
#: and the kernels read ``may_draw_when_able`` through the derived ``draw_action`` and ``num_actions``, not its
#: own slot (forgetting the slot changes nothing; forgetting the derived values fails every test of the draw).
SAME_PLAY = {("max_draws_per_turn", MAX_COUNT), ("may_draw_when_able", True)}
#: Per option, the rules its cases are played under, before the case's own options (by default to 100 points
#: in the case's unit, or 30 hands): where the option acts only with others, or only in long games.
BASE: dict[str, dict[str, Any]] = {
    "max_hands": {"target": 3000},  # games of about 230 hands: the default cap of 200 ends them
    "no_double_fallback": {"first_leader": "highest_double", "hand_size": 2},  # deals without a double
    "must_lead_it": {"first_leader": "highest_double"},
    "bonus_round": {"num_players": 3, "hand_end": "winner_takes"},  # the winner takes two hands' pips
    "blocked_award": {"boneyard_reserve": 10, "hand_end": "winner_takes"},  # nothing to draw: hands block
}
#: Cases whose games from the default seed (:func:`seed_of`) never meet their rule: seeds found once, and
#: asserted below to meet it.
SEEDS: dict[str, int] = {"lead_scores:lead_scores=False": 0}  # 2922 leads no scoring tile in 25 hands


def rules_of(name: str, case: dict[str, Any]) -> Rules:
    """The rules a case of option ``name`` is played under."""
    base = {"target": 100 // case.get("score_unit", 1), "max_hands": 30, **BASE.get(name, {})}
    return Rules.from_options({**base, **case})


#: Every option at every value of its domain (integers at their bounds), from the option table.
CASES = [(o.name, case) for o in OPTIONS for case in o.cases(Rules())]
#: Combinations where options act together: verified, with no single option to forget.
COMBINATIONS = [
    {"score_unit": 5, "target": 61, "exact_target": True},
    {"num_players": 3, "hand_end": "winner_takes", "blocked_award": "difference", "bonus_round": "round_each"},
    {"first_leader": "highest_double", "no_double_fallback": "draw_until_double", "hand_size": "five_always"},
    {"first_leader": "highest_double", "no_double_fallback": "redeal", "must_lead_it": False},
    {"num_players": 4, "after_block": "lowest_pips", "boneyard_reserve": 2},
    {"may_draw_when_able": True, "max_draws_per_turn": 1, "boneyard_reserve": 2},
    {"target": 10000, "max_hands": 4}, {"max_hands": None, "target": 100},
]


def case_id(name: str, case: dict[str, Any]) -> str:
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in case.items())


def core_twin(rules: Rules, record: dict[str, Any]) -> Game:
    """A core game dealt the deals of a batch game's replay (leaders checked against the rules)."""
    deals = [Deal.from_tiles(rules, h["deal"]["hands"], h["deal"]["boneyard"], h["leader"], None, h["opening_drawer"])
             for h in record["hands"]]
    return Game(rules, 0, deals=deals, check_leaders=True, scores=record["hands"][0]["scores_before"],
                stop_after_hand=record["stop_after_hand"])


def mismatch(rules: Rules, seed: int) -> Optional[str]:
    """Why a batch of :data:`GAMES` games under ``rules``, dealt from ``seed`` and played by random legal
    moves, differs from the core, or None: a game that does not end, a replay the core refuses or ends
    otherwise, a seat to act or a legal set other than the core's on the same deals after any decision, or
    a final observation other than the encoder's."""
    batch = BatchGame(rules, GAMES, seed=seed)
    streams = np.arange(GAMES, dtype=np.uint64) + np.uint64(seed)
    for _ in range(100_000):
        if batch.done.all():
            break
        batch.step(batch.random_actions(streams))
    else:
        return "a game did not end"
    try:
        games = [load_replay(batch.replay(i)) for i in range(GAMES)]
        problem = same_moves(rules, batch, [core_twin(rules, batch.replay(i)) for i in range(GAMES)], seed)
    except AllFivesError as exc:
        return f"the core refuses a game: {exc}"
    observed = batch.observe(np.zeros(GAMES, dtype=np.int64))
    encoder = ObservationEncoder(rules)
    for i, game in enumerate(games):
        ended = (game.scores, game.winner if game.winner is not None else -1, game.truncated)
        if ended != (list(batch.scores[i]), batch.winner[i], bool(batch.truncated[i])):
            return f"game {i} ends {ended} in the core"
        if not np.array_equal(encoder.encode(game, 0), observed[i]):
            return f"game {i}: the final observation differs from the encoder's"
    return problem


def same_moves(rules: Rules, played: BatchGame, games: list[Game], seed: int) -> Optional[str]:
    """Where the games of ``played``, dealt again and stepped decision by decision beside their core twins
    ``games``, first show another seat to act or legal set than the core's, or None."""
    twin = BatchGame(rules, GAMES, seed=seed)
    decisions = [played.decisions(i) for i in range(GAMES)]
    encoder = ObservationEncoder(rules)
    for k in range(max(map(len, decisions))):
        masks = twin.legal_mask()
        acts = np.full(GAMES, -1)
        for i, game in enumerate(games):
            if k < len(decisions[i]):
                if twin.current[i] != game.current or not np.array_equal(
                        masks[i], encoder.action_mask(game, game.current).astype(bool)):
                    return f"game {i}, decision {k}: another seat to act or legal set than the core's"
                acts[i] = decisions[i][k]
                game.step(int(acts[i]))
        twin.step(acts)
    return None


@dataclass(frozen=True)
class Forgotten:
    """An encoding that hands the kernels one code whatever the value: a rule the kernels never read."""

    fixed: int

    def code(self, name: str, value: Any) -> int:
        return self.fixed


@contextmanager
def forgotten(name: str, code: int) -> Iterator[None]:
    """Option ``name`` read by the kernels as ``code`` whatever the rules say, for the duration."""
    saved = layout.ENCODERS
    layout.ENCODERS = {**saved, name: Forgotten(code)}  # type: ignore[dict-item]
    try:
        yield
    finally:
        layout.ENCODERS = saved


def default_code(name: str, case: dict[str, Any]) -> int:
    """The code of option ``name`` at its default, the other options as in ``case``: what the kernels play
    of an option whose rule they never read."""
    at_default = rules_of(name, {**case, name: OPTION[name].default})
    return layout.ENCODERS[name].code(name, getattr(at_default, name))


def caught(name: str, case: dict[str, Any], seed: int) -> bool:
    """Whether the games of ``seed`` under the rules of ``case`` catch option ``name`` forgotten (played at
    its default)."""
    with forgotten(name, default_code(name, case)):
        return mismatch(rules_of(name, case), seed) is not None


def seed_of(name: str, case: dict[str, Any]) -> int:
    """The seed of a case's games: from :data:`SEEDS`, else from its name."""
    return SEEDS.get(case_id(name, case), sum(map(ord, case_id(name, case))))


@pytest.mark.parametrize("name, case", CASES, ids=[case_id(n, c) for n, c in CASES])
def test_every_value_is_played_as_the_core_plays_it_and_forgetting_it_is_caught(name: str, case: dict) -> None:
    rules, seed = rules_of(name, case), seed_of(name, case)
    assert mismatch(rules, seed) is None
    code = layout.ENCODERS[name].code(name, getattr(rules, name))
    if code != default_code(name, case) and (name, case[name]) not in SAME_PLAY:
        assert caught(name, case, seed), f"the games of seed {seed} never meet {name}={case[name]!r}: choose another"


@pytest.mark.parametrize("options", COMBINATIONS, ids=lambda o: case_id("with", o))
def test_options_acting_together_are_played_as_the_core_plays_them(options: dict) -> None:
    assert mismatch(rules_of("", options), len(str(options))) is None


def test_a_forgotten_kernel_rule_fails_the_coverage_check() -> None:
    """The check itself, on one rule: the kernels reading ``lead_scores`` as its default (on) whatever the
    rules say are caught by the games of its case ``lead_scores=False``."""
    rules = rules_of("lead_scores", {"lead_scores": False})
    seed = seed_of("lead_scores", {"lead_scores": False})
    with forgotten("lead_scores", 1):
        problem = mismatch(rules, seed)
    assert problem is not None
    assert mismatch(rules, seed) is None


def test_an_option_the_kernels_do_not_play_is_refused_at_other_values_than_it_states(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial option declared ``only(default)`` (the kernels have no rule for it yet) plays at its default
    and is refused at any other value, naming the option, the value and what the batch engine plays."""
    monkeypatch.setattr(layout, "ENCODERS", {**layout.ENCODERS, "lead_scores": layout.only(True)})
    BatchGame(Rules(lead_scores=True), 1, seed=0)
    with pytest.raises(BatchError, match=r"lead_scores=False is not played by the batch engine \(it plays \[True\]\)"):
        BatchGame(Rules(lead_scores=False), 1, seed=0)
