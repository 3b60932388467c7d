"""Explicit chance in the core: ``Game(rules, chance="explicit")`` stops at every deal tile, seat pick and
boneyard draw, lists the outcomes with exact probabilities and takes them through ``apply_chance``.

Checked here: the deal's outcomes give every deal the same probability (exact enumeration on small hands,
and the exact probability of sampled full deals); a seeded game's own picks, applied explicitly, replay it
event for event (so the seeded path and the explicit one are the same game); probabilities sum to exactly
1 at every chance node of random games over player counts and the variants that draw or pick; a refused
outcome changes nothing; copies at chance nodes continue like the original.
"""

from __future__ import annotations

import copy
import pickle
from fractions import Fraction
from math import comb, factorial
from typing import Any, Optional

import numpy as np
import pytest

from allfives_env.core import Game, Rules
from allfives_env.core.chance import CHANCE, deal_outcomes
from allfives_env.core.errors import DealError, IllegalActionError, RulesError, SeedError
from allfives_env.core.events import Draw

VARIANTS = {
    "2p": dict(num_players=2, target=100),
    "3p-random-leader": dict(num_players=3, first_leader="random", after_block="random", target=100),
    "4p-may-draw": dict(num_players=4, may_draw_when_able=True, target=100),
    "3p-lowest-pips": dict(num_players=3, after_block="lowest_pips", hand_size=5, target=100),
    "2p-draw-until-double": dict(num_players=2, first_leader="highest_double", no_double_fallback="draw_until_double",
                                 hand_size=1, target=30),
    "4p-redeal": dict(num_players=4, partnership=False, first_leader="highest_double", no_double_fallback="redeal", hand_size=1, target=30),
    "2p-reserve-cap": dict(num_players=2, boneyard_reserve=2, max_draws_per_turn=1, may_draw_when_able=True,
                           target=60),
}


def _sample(outcomes: list[tuple[int, Fraction]], rng: np.random.Generator) -> int:
    return outcomes[int(rng.choice(len(outcomes), p=[float(p) for _, p in outcomes]))][0]


def _play_explicit(rules: Rules, rng: np.random.Generator, on_chance: Any = None) -> Game:
    """An explicit game played to the end: chance sampled by its probabilities, seats at random."""
    game = Game(rules, chance="explicit")
    while not game.over:
        if game.is_chance_node():
            outcomes = game.chance_outcomes()
            if on_chance is not None:
                on_chance(game, outcomes)
            game.apply_chance(_sample(outcomes, rng))
        else:
            game.step(game.legal[int(rng.integers(len(game.legal)))])
    return game


def _snapshot(game: Game) -> tuple:
    """Everything a refused call must leave as it was."""
    return (game.events[:], game.hand_records[:], game.hands[:], game.stock[:], game.scores[:], game.current,
            game.legal, game.chance_node, game.deal_so_far(), game.chance_outcomes(), pickle.dumps(game))


# ------------------------------------------------------------------------------------------------ the deal
def test_deal_outcomes_give_every_deal_the_same_probability_exactly() -> None:
    """Exact enumeration: one tile each to two seats (through the game), and a three-tile hand."""
    reached: dict[tuple[int, int], Fraction] = {}
    root = Game(Rules(num_players=2, hand_size=1), chance="explicit")
    for a, pa in root.chance_outcomes():
        first = root.clone()
        first.apply_chance(a)
        assert first.chance_node.kind == "deal"
        for b, pb in first.chance_outcomes():
            reached[(a, b)] = pa * pb
    assert len(reached) == 28 * 27 and set(reached.values()) == {Fraction(1, 28 * 27)}

    hands: dict[tuple[int, ...], Fraction] = {}

    def walk(dealt: tuple[int, ...], p: Fraction) -> None:
        if len(dealt) == 3:
            hands[dealt] = p
            return
        for tile, q in deal_outcomes(dealt, 3, 28):
            walk(dealt + (tile,), p * q)

    walk((), Fraction(1))
    assert len(hands) == comb(28, 3) and set(hands.values()) == {Fraction(1, comb(28, 3))}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_sampled_full_deals_have_the_uniform_probability(players: int) -> None:
    """Along any deal, the outcomes' probabilities multiply to 1 / (number of deals): every deal is as likely
    as under a uniformly random permutation, which is how a seeded game deals."""
    rules = Rules(num_players=players)
    h, size = rules.hand_size, rules.tile_count
    deals = factorial(size) // (factorial(h) ** players * factorial(size - players * h))
    rng = np.random.default_rng(players)
    for _ in range(20):
        game = Game(rules, chance="explicit")
        p = Fraction(1)
        while game.chance_node is not None and game.chance_node.kind == "deal":
            outcomes = game.chance_outcomes()
            tile = _sample(outcomes, rng)
            p *= dict(outcomes)[tile]
            game.apply_chance(tile)
        assert p == Fraction(1, deals)
        while game.is_chance_node():  # the leader pick, where the rules pick at random
            game.apply_chance(_sample(game.chance_outcomes(), rng))
        record = game.hand_records[0]
        assert all(list(hand) == sorted(hand) for hand in record.hands)


def test_explicit_and_seeded_deals_agree_in_distribution() -> None:
    """A cheap statistical check: how often seat 0 is dealt each double, explicit against seeded."""
    rules = Rules(num_players=2, hand_size=7)
    doubles = [Game(rules, 0).tiles.double_id[v] for v in range(7)]
    rng = np.random.default_rng(11)
    games = 400
    explicit = np.zeros(7)
    seeded = np.zeros(7)
    for k in range(games):
        game = Game(rules, chance="explicit")
        while game.is_chance_node():
            game.apply_chance(_sample(game.chance_outcomes(), rng))
        explicit += [d in game.hand_records[0].hands[0] for d in doubles]
        seeded += [d in Game(rules, 1000 + k).hand_records[0].hands[0] for d in doubles]
    sigma = (games * 0.25 * 0.75) ** 0.5
    assert np.all(np.abs(explicit - games / 4) < 4 * sigma), explicit
    assert np.all(np.abs(explicit - seeded) < 4 * sigma * 2 ** 0.5), (explicit, seeded)


# ------------------------------------------------------------------------------------------------ one code path
class _Recording(np.random.Generator):
    """A seeded game's generator that records its picks (the same stream as ``default_rng(seed)``)."""

    def __init__(self, seed: int, rules: Rules) -> None:
        super().__init__(np.random.PCG64(seed))
        self.players, self.dealt = rules.num_players, rules.hand_size
        self.deals: list[int] = []  # each permutation's hands, each hand ascending: the deal's outcomes
        self.picks: list[int] = []

    def permutation(self, x: Any, *args: Any, **kwargs: Any) -> np.ndarray:  # type: ignore[override]
        perm = super().permutation(x, *args, **kwargs)
        h = self.dealt
        for start in range(0, self.players * h, h):
            self.deals.extend(sorted(perm[start:start + h].tolist()))
        return perm

    def integers(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        value = super().integers(*args, **kwargs)
        self.picks.append(int(value))
        return value


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_seeded_picks_applied_explicitly_replay_the_seeded_game(variant: str) -> None:
    rules = Rules(**VARIANTS[variant])
    kinds: set[str] = set()
    redeals = 0
    for seed in range(4):
        rng = _Recording(seed, rules)
        seeded = Game(rules, rng)
        plain = Game(rules, seed)  # the recording generator changes nothing
        chooser = np.random.default_rng(seed)
        actions = []
        while not seeded.over:
            action = seeded.legal[int(chooser.integers(len(seeded.legal)))]
            actions.append(action)
            seeded.step(action)
            plain.step(action)
        assert plain.events == seeded.events

        deals, picks = iter(rng.deals), iter(rng.picks)
        draws = iter([e.tile for e in seeded.events if type(e) is Draw])
        explicit = Game(rules, chance="explicit")
        moves = iter(actions)
        while not explicit.over:
            node = explicit.chance_node
            if node is None:
                explicit.step(next(moves))
                continue
            kinds.add(node.kind)
            explicit.apply_chance(next(deals) if node.kind == "deal" else next(picks) if node.kind == "pick"
                                  else next(draws))
        assert explicit.events == seeded.events
        assert [r.hands for r in explicit.hand_records] == [tuple(tuple(sorted(h)) for h in r.hands)
                                                           for r in seeded.hand_records]
        # the records keep the drawing order: the tiles drawn come first, as in the seeded record
        ends = [r.first_event for r in seeded.hand_records[1:]] + [len(seeded.events)]
        for mine, theirs, end in zip(explicit.hand_records, seeded.hand_records, ends):
            drawn = tuple(e.tile for e in seeded.events[theirs.first_event:end] if type(e) is Draw)
            assert mine.boneyard[:len(drawn)] == theirs.boneyard[:len(drawn)] == drawn
            assert sorted(mine.boneyard) == sorted(theirs.boneyard)
            assert (mine.leader, mine.opening_drawer, mine.redeals) == (theirs.leader, theirs.opening_drawer,
                                                                          theirs.redeals)
        assert next(deals, None) is None and next(picks, None) is None and next(draws, None) is None
        redeals += sum(r.redeals for r in seeded.hand_records)
    # the seeds reach what the variant is about
    if VARIANTS[variant].get("first_leader") == "random":
        assert "pick" in kinds
    if "draw-until-double" in variant:
        assert "opening_draw" in kinds
    if "redeal" in variant:
        assert redeals


def test_variants_reach_every_kind_of_chance_node() -> None:
    """The variants above do exercise picks, draws and opening draws (else the tests would prove less)."""
    kinds: set[str] = set()
    for name in ("3p-random-leader", "2p-draw-until-double", "4p-may-draw"):
        for seed in range(4):
            _play_explicit(Rules(**VARIANTS[name]), np.random.default_rng(seed),
                           lambda game, outcomes: kinds.add(game.chance_node.kind))
    assert kinds == {"deal", "pick", "draw", "opening_draw"}


# ------------------------------------------------------------------------------------------------ probabilities
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_probabilities_sum_to_one_at_every_chance_node(variant: str) -> None:
    rules = Rules(**VARIANTS[variant])

    def check(game: Game, outcomes: list[tuple[int, Fraction]]) -> None:
        assert outcomes and sum(p for _, p in outcomes) == 1
        assert all(isinstance(p, Fraction) and p > 0 for _, p in outcomes)
        assert [o for o, _ in outcomes] == sorted({o for o, _ in outcomes})
        assert game.current == CHANCE and game.legal == () and game.legal_actions() == []

    for seed in range(3):
        game = _play_explicit(rules, np.random.default_rng(seed), check)
        assert game.over and game.chance_outcomes() == []


# ------------------------------------------------------------------------------------------------ refusals
def _at(kind: str, seed: int = 0) -> Optional[Game]:
    """An explicit game stopped at a chance node of ``kind`` (past the first deal node), or None."""
    rules = Rules(**VARIANTS["2p-draw-until-double" if kind == "opening_draw" else "3p-random-leader"])
    rng = np.random.default_rng(seed)
    game = Game(rules, chance="explicit")
    nodes = 0
    while not game.over:
        node = game.chance_node
        if node is not None:
            if node.kind == kind and nodes > 3:
                return game
            nodes += 1
            game.apply_chance(_sample(game.chance_outcomes(), rng))
        else:
            game.step(game.legal[int(rng.integers(len(game.legal)))])
    return None


@pytest.mark.parametrize("kind", ["deal", "pick", "draw", "opening_draw"])
def test_a_refused_outcome_names_the_allowed_ones_and_changes_nothing(kind: str) -> None:
    game = next(g for g in (_at(kind, seed) for seed in range(10)) if g is not None)
    allowed = [o for o, _ in game.chance_outcomes()]
    bad = [o for o in range(-1, 40) if o not in allowed][:3]
    before = _snapshot(game)
    for outcome in bad + ["6-6", 1.0, True, None]:
        with pytest.raises(IllegalActionError, match="allowed") as info:
            game.apply_chance(outcome)
        assert str(allowed[0]) in str(info.value)
        assert _snapshot(game) == before
    with pytest.raises(IllegalActionError, match="chance node"):
        game.step(0)
    assert _snapshot(game) == before
    game.apply_chance(np.int64(allowed[-1]))  # a numpy integer is an outcome like any int


def test_apply_chance_off_a_chance_node_is_refused() -> None:
    seeded = Game(Rules(), 3)
    before = _snapshot(seeded)
    with pytest.raises(IllegalActionError, match="not a chance node"):
        seeded.apply_chance(0)
    assert _snapshot(seeded) == before and seeded.chance_outcomes() == [] and not seeded.is_chance_node()


def test_explicit_chance_refuses_what_would_decide_chance() -> None:
    with pytest.raises(RulesError, match="'seeded'.*'explicit'"):
        Game(Rules(), chance="random")
    with pytest.raises(SeedError, match="no seed"):
        Game(Rules(), 3, chance="explicit")
    with pytest.raises(SeedError, match="deal_seed"):
        Game(Rules(), deal_seed=3, chance="explicit")
    seeded = Game(Rules(), 0)
    from allfives_env.core import Deal

    deal = Deal(seeded.hand_records[0].hands, seeded.hand_records[0].boneyard)
    with pytest.raises(DealError, match="fixed deals"):
        Game(Rules(), deals=[deal], chance="explicit")


# ------------------------------------------------------------------------------------------------ copies
@pytest.mark.parametrize("kind", ["deal", "pick", "draw", "opening_draw"])
def test_copies_at_a_chance_node_continue_like_the_original(kind: str) -> None:
    game = next(g for g in (_at(kind, seed) for seed in range(10)) if g is not None)
    copies = [game.clone(), copy.deepcopy(game), pickle.loads(pickle.dumps(game))]
    finished = []
    for g in [game] + copies:
        rng = np.random.default_rng(5)
        while not g.over:
            if g.is_chance_node():
                g.apply_chance(_sample(g.chance_outcomes(), rng))
            else:
                g.step(g.legal[int(rng.integers(len(g.legal)))])
        finished.append((g.events, g.hand_records, g.scores))
    assert all(f == finished[0] for f in finished[1:])


def test_a_copy_is_independent_of_the_original() -> None:
    game = _at("deal")
    assert game is not None
    other = game.clone()
    before = _snapshot(game)
    other.apply_chance(other.chance_outcomes()[0][0])
    assert _snapshot(game) == before


@pytest.mark.parametrize("variant", ["4p-may-draw", "2p-draw-until-double", "3p-random-leader"])
def test_an_explicit_games_record_replays(variant: str) -> None:
    """The hand records keep the order chance drew the boneyard in, so a replay re-deals every hand."""
    from allfives_env import game_record, load_replay

    for seed in range(3):
        game = _play_explicit(Rules(**VARIANTS[variant]), np.random.default_rng(seed))
        assert load_replay(game_record(game)).events == game.events
