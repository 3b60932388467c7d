"""The agent protocol, the registry, and what agents may know (DESIGN.md testing layer 3).

Every registered agent only ever picks legal actions, over many random positions and all player counts,
and is deterministic for a seed. Scripted agents must not read hidden information: changing the other
hands and the boneyard (keeping everything public) must not change their choice; only ``oracle`` may.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from allfives_env.agents import (
    AgentError,
    OracleView,
    PlayerView,
    agent_names,
    make_agent,
    parse_agent_spec,
    sample_hidden,
)
from allfives_env.core import Game, Rules
from allfives_env.match import play_game
from allfives_env.policy import SHIPPED_POLICIES
from tests.helpers import with_other_hidden_tiles

FAST = {"pimc": {"samples": 4}, "pimc-sift": {"samples": 8, "min_samples": 4}, "oracle": {"samples": 2},
        "openspiel-ismcts": {"sims": 5}, "openspiel-mcts": {"sims": 5, "worlds": 1}}
RULE_SETS = [
    pytest.param({"num_players": 2}, id="2p"),
    pytest.param({"num_players": 3}, id="3p"),
    pytest.param({"num_players": 4}, id="4p-team"),
    pytest.param({"num_players": 4, "partnership": False}, id="4p-cut"),
    pytest.param({"num_players": 2, "may_draw_when_able": True, "score_unit": 5}, id="2p-draw-unit5"),
    pytest.param({"num_players": 3, "max_pip": 9, "spinner_count": "sniff"}, id="3p-d9-sniff"),
]


# every agent but the trained policies, each made for one rules set (tests/test_policy.py,
# tests/test_shipped_policy.py)
#: the OpenSpiel bots need the [openspiel] extra (tests/test_openspiel.py tests their missing-extra error)
_HAS_PYSPIEL = importlib.util.find_spec("pyspiel") is not None
# pimc-net searches with a trained policy as its prior, which only plays its own player count and set:
# tests/test_pimc_net.py; miniature-cfr plays the miniature's rules only: tests/test_nashconv.py
SCRIPTED = [n for n in sorted(agent_names()) if n not in ("ppo", "pimc-net", "miniature-cfr") and n not in SHIPPED_POLICIES
            and (_HAS_PYSPIEL or not n.startswith("openspiel-"))]


def _agent(name: str, seed: int = 0):
    return make_agent(name, seed=seed, **FAST.get(name, {}))


def _view(game: Game, seat: int, agent) -> PlayerView:
    return (OracleView if agent.uses_hidden_information else PlayerView)(game, seat)


def _positions(rules: Rules, seed: int, count: int) -> list[Game]:
    """Positions reached by random play, each a decision point."""
    rng = np.random.default_rng(seed)
    out = []
    game = Game(rules, seed)
    while len(out) < count:
        if game.over:
            game = Game(rules, int(rng.integers(1 << 30)))
        if rng.random() < 0.25:
            out.append(game.clone())
        legal = game.legal
        game.step(legal[int(rng.integers(len(legal)))])
    return out


def test_the_whole_ladder_is_registered() -> None:
    for name in ("random", "greedy", "defensive", "pimc", "oracle"):
        assert name in agent_names()


@pytest.mark.parametrize("options", RULE_SETS)
@pytest.mark.parametrize("name", SCRIPTED)
def test_agents_choose_only_legal_actions(name: str, options: dict) -> None:
    rules = Rules(**options)
    agent = _agent(name)
    for game in _positions(rules, seed=7, count=12):
        action = agent.act(_view(game, game.current, agent))
        assert action in game.legal


@pytest.mark.parametrize("name", SCRIPTED)
def test_agents_are_deterministic_for_a_seed(name: str) -> None:
    rules = Rules(num_players=2)
    positions = _positions(rules, seed=11, count=8)
    first = [_agent(name, seed=5).act(_view(g, g.current, _agent(name))) for g in positions]
    second = [_agent(name, seed=5).act(_view(g, g.current, _agent(name))) for g in positions]
    assert first == second


@pytest.mark.parametrize("name", SCRIPTED)
def test_agents_play_whole_games(name: str) -> None:
    rules = Rules(num_players=2, target=60)
    result = play_game(rules, [_agent(name), make_agent("random")], seed=3, agent_seeds=[1, 2])
    assert result.winner in (0, 1, None)
    assert sum(result.decisions) > 0


@pytest.mark.parametrize("options", RULE_SETS[:4])
@pytest.mark.parametrize("name", [n for n in SCRIPTED if n != "oracle"])
def test_scripted_agents_ignore_hidden_information(name: str, options: dict) -> None:
    rules = Rules(**options)
    changed = 0
    for i, game in enumerate(_positions(rules, seed=21, count=10)):
        seat = game.current
        other = with_other_hidden_tiles(game, seat, seed=i)
        changed += other.hands != game.hands or other._stock != game._stock
        a = _agent(name, seed=3).act(PlayerView(game, seat))
        b = _agent(name, seed=3).act(PlayerView(other, seat))
        assert a == b, f"{name} changed its move when only hidden tiles changed"
    assert changed, "the test must really change hidden tiles"


def test_oracle_does_use_hidden_information() -> None:
    """The control for the test above: the oracle's choices do depend on the hidden tiles."""
    rules = Rules(num_players=2)
    differs = 0
    for i, game in enumerate(_positions(rules, seed=5, count=40)):
        seat = game.current
        if len(game.legal) < 2:
            continue
        other = with_other_hidden_tiles(game, seat, seed=100 + i)
        agent = make_agent("oracle", seed=0, samples=1)
        differs += agent.act(OracleView(game, seat)) != agent.act(OracleView(other, seat))
    assert differs > 0


def test_oracle_refuses_a_plain_view() -> None:
    game = Game(Rules(), 0)
    while len(game.legal) < 2:
        game.step(game.legal[0])
    with pytest.raises(TypeError, match="OracleView"):
        make_agent("oracle", samples=1).act(PlayerView(game, game.current))


def test_player_view_hides_other_hands_and_boneyard() -> None:
    game = Game(Rules(num_players=3), 4)
    view = PlayerView(game, 1)
    public = [name for name in dir(view) if not name.startswith("_")]
    for name in ("game", "hands", "boneyard", "stock"):
        assert name not in public
    assert view.hand == game.hand(1)
    assert view.unseen_mask & view.hand_mask == 0
    assert bin(view.unseen_mask).count("1") == sum(game.hand_sizes()) - len(view.hand) + game.boneyard_size


@pytest.mark.parametrize("options", RULE_SETS)
def test_sampled_hidden_tiles_are_consistent_with_public_facts(options: dict) -> None:
    rules = Rules(**options)
    rng = np.random.default_rng(0)
    for game in _positions(rules, seed=9, count=15):
        seat = game.current
        view = PlayerView(game, seat)
        hands, boneyard = sample_hidden(view, rng)
        dealt = 0
        for s in range(rules.num_players):
            if s == seat:
                continue
            assert hands[s].bit_count() == game.hands[s].bit_count()
            assert hands[s] & dealt == 0
            dealt |= hands[s]
            for t in game.tiles.tiles_of(hands[s]):  # known voids respected
                assert not game.tiles.pip_bits[t] & game.voids[s]
        assert len(boneyard) == game.boneyard_size
        assert dealt | game.tiles.mask_of(boneyard) == view.unseen_mask
        assert dealt & game.tiles.mask_of(boneyard) == 0


def test_registry_parses_specs_and_reports_bad_ones() -> None:
    assert parse_agent_spec("pimc:samples=50,rollout=random") == ("pimc", {"samples": 50, "rollout": "random"})
    agent = make_agent("pimc:samples=7", seed=1)
    assert agent.samples == 7 and agent.spec() == "pimc:samples=7"
    assert make_agent(agent.spec()).samples == 7
    with pytest.raises(AgentError, match="did you mean 'greedy'"):
        make_agent("greedyy")
    with pytest.raises(AgentError, match="takes no parameter 'depth'"):
        make_agent("greedy", depth=3)
    with pytest.raises(AgentError, match="samples"):
        make_agent("pimc", samples=0)
    with pytest.raises(AgentError, match="rollout"):
        make_agent("pimc", rollout="clever")
    with pytest.raises(AgentError, match="key=value"):
        make_agent("pimc:samples")


def test_agents_registered_by_path_are_imported_only_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package above the agents (openspiel) is named by path: listed always, imported when built, and an
    agent whose extra is missing says which extra and how to install it, in the listing and when built."""
    from allfives_env.agents import Extra, describe_agents, register_agent
    from allfives_env.agents import registry

    need = "needs the [openspiel] extra" + ("" if _HAS_PYSPIEL else ", which is not installed: pip install")
    assert {"openspiel-ismcts", "openspiel-mcts"} <= set(agent_names())
    assert all(need in describe_agents()[name] for name in ("openspiel-ismcts", "openspiel-mcts"))

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # registrations undone after the test
    register_agent("test-by-path", "allfives_env.agents.basic:GreedyAgent", "greedy, by path")
    assert type(make_agent("test-by-path", seed=0)).__name__ == "GreedyAgent"
    with pytest.raises(AgentError, match="takes no parameter 'depth'"):
        make_agent("test-by-path:depth=3")
    register_agent("test-missing-extra", "no_such_module_here.bots:Bot", "a bot", extra=Extra("nosuch", "no_such_module_here"))
    assert describe_agents()["test-missing-extra"] == (
        'a bot; needs the [nosuch] extra, which is not installed: pip install -e ".[nosuch]"')
    with pytest.raises(AgentError, match=r"agent 'test-missing-extra' needs the \[nosuch\] extra: .*no_such_module_here"):
        make_agent("test-missing-extra")
    register_agent("test-no-such-class", "allfives_env.agents.basic:NoSuchAgent")
    with pytest.raises(AgentError, match="has no 'NoSuchAgent'"):
        make_agent("test-no-such-class")
    for bad in ("allfives_env.agents.basic", "allfives_env.agents.basic:", 42):
        with pytest.raises(AgentError, match="not allowed"):
            register_agent("test-bad", bad)  # type: ignore[arg-type]


def test_greedy_takes_the_biggest_score_and_sheds_heavy_tiles() -> None:
    """Lead 6-4 (count 10). Seat 1 holds 4-1 (on E: 6+1 = 7), 6-1 (on W: 1+4 = 5, scores 5), 4-4 (on E:
    6+8 = 14) and 6-6 (on W: 12+4 = 16): greedy must take the only scoring play, 6-1@W."""
    from allfives_env.core import Deal, parse_action, tile_set

    tiles = tile_set(6)
    rules = Rules(hand_size=4)
    hands = [["6-4", "0-0", "0-1", "0-2"], ["4-1", "6-1", "4-4", "6-6"]]
    game = Game(rules, 0, deals=[Deal.from_tiles(rules, hands, leader=0, rng=np.random.default_rng(0))])
    game.step(parse_action("6-4@W", tiles))
    choice = make_agent("greedy", seed=0).act(PlayerView(game, 1))
    assert choice == parse_action("6-1@W", tiles)


def test_pimc_reports_its_think_time() -> None:
    rules = Rules(num_players=2, target=80)
    agent = make_agent("pimc", samples=3, seed=0)
    play_game(rules, [agent, make_agent("greedy")], seed=1, agent_seeds=[0, 1])
    assert agent.moves > 0 and agent.seconds_per_move > 0


BAD_SPECS = [
    ("pimc:samples=abc", "samples=abc is not allowed: give an integer"),
    ("pimc:samples=-3", "samples=-3 is not allowed: give a positive integer"),
    ("pimc:samples=0", "samples=0 is not allowed"),
    ("pimc:samples=nan", "samples=nan is not allowed: give an integer"),
    ("pimc:samples=NaN", "samples=NaN is not allowed: give an integer"),
    ("pimc:samples=1.5", "samples=1.5 is not allowed: give an integer"),
    ("pimc:samples=1e400", "samples=1e400 is not allowed: give an integer"),
    ("pimc:samples=true", "samples=true is not allowed: give an integer"),
    ("pimc:samples=" + "9" * 5000, "samples=999"),
    ("pimc:samples=[[[[", "samples="),
    ("pimc:samples=3,samples=4", "parameter 'samples' is given twice"),
    ("pimc:epsilon=NaN", "epsilon=NaN is not allowed: give a finite number"),
    ("pimc:epsilon=2", "epsilon=2"),
    ("pimc:win_bonus=Infinity", "win_bonus=Infinity is not allowed: give a finite number"),
    ("pimc:prior_weight=-Infinity", "prior_weight=-Infinity"),
    ("pimc:rollout=5", "rollout='5' is not allowed"),
    ("pimc:prior=5", "unknown agent '5'"),
    ("expert:w_score=abc", "w_score=abc is not allowed: give a finite number"),
    ("expert:w_score=NaN", "w_score=NaN is not allowed: give a finite number"),
    ("expert:w_block=[1]", "w_block=[1] is not allowed: give a finite number"),
    ("expert:late_hand=true", "late_hand=true is not allowed: give a finite number"),
    ("defensive:reply_weight=x", "reply_weight=x is not allowed: give a finite number"),
    ("ppo-2p:temperature=Infinity", "temperature=Infinity is not allowed: give a finite number"),
    ("ppo-2p:temperature=0", "temperature=0"),
    ("ppo-2p:sample=maybe", "sample=maybe is not allowed: give true or false"),
    ("ppo-2p:sample=1", "sample=1 is not allowed: give true or false"),
    ("greedy:seed=3", "seed is not a spec parameter"),
    ("greedy:depth=3", "takes no parameter 'depth'"),
    ("x" * 10_000, "unknown agent"),
]


@pytest.mark.parametrize("spec,message", BAD_SPECS, ids=[s[:40] for s, _ in BAD_SPECS])
def test_bad_parameter_values_name_the_parameter_and_what_it_takes(spec: str, message: str) -> None:
    with pytest.raises(AgentError) as info:
        make_agent(spec)
    assert message in str(info.value) and len(str(info.value)) < 1000


def test_keyword_parameters_are_checked_the_same_way() -> None:
    for params, message in [({"samples": 2.0}, "samples=2.0"), ({"samples": True}, "samples=True"),
                            ({"epsilon": float("nan")}, "epsilon=nan"), ({"win_bonus": "1"}, "win_bonus='1'")]:
        with pytest.raises(AgentError, match=message):
            make_agent("pimc", **params)
    with pytest.raises(AgentError, match="must be a string"):
        make_agent(5)  # type: ignore[arg-type]
    assert make_agent("pimc", samples=np.int64(3)).samples == 3
    assert make_agent("expert", w_score=np.float32(2.0)).w_score == 2.0


def test_string_parameters_keep_their_text_and_round_trip() -> None:
    """A string parameter is the text written, even when it reads as JSON (a file named 123, a prior named 5)."""
    agent = make_agent("pimc:prior=none,samples=2")
    assert agent.spec() == "pimc:prior=none,samples=2" and make_agent(agent.spec()).spec() == agent.spec()
    with pytest.raises(AgentError, match="policy file 1e3 does not exist"):  # not 1000.0
        make_agent("ppo:path=1e3")
    assert parse_agent_spec("pimc:samples=50,rollout=random") == ("pimc", {"samples": 50, "rollout": "random"})
    with pytest.raises(AgentError, match="given twice"):
        parse_agent_spec("pimc:samples=1,samples=1")


def test_check_agent_rules_refuses_a_policy_for_other_rules() -> None:
    from allfives_env.agents.registry import check_agent_rules
    from allfives_env.policy import PolicyError

    check_agent_rules(make_agent("ppo-2p"), Rules(num_players=2))
    check_agent_rules(make_agent("expert"), Rules(num_players=4))
    with pytest.raises(PolicyError, match="num_players=2"):
        check_agent_rules(make_agent("ppo-2p"), Rules(num_players=3))


def test_play_game_refuses_a_wrong_line_up_with_agent_error() -> None:
    rules = Rules(num_players=2, target=60)
    greedy = make_agent("greedy")
    with pytest.raises(AgentError, match="need one agent per seat: 2 agents, got 1"):
        play_game(rules, [greedy], seed=1)
    with pytest.raises(AgentError, match="the agent in seat 1 is 'random', not an Agent"):
        play_game(rules, [greedy, "random"], seed=1)  # type: ignore[list-item]
    with pytest.raises(AgentError, match="one agent seed per seat: 2, got 1"):
        play_game(rules, [greedy, make_agent("random")], seed=1, agent_seeds=[1])


def test_no_agent_reads_the_game_behind_its_view() -> None:
    """Information hiding by construction: agents use the view's public API (the oracle gets the game from
    OracleView.game), never ``view._game``."""
    package = Path(__file__).resolve().parents[1] / "allfives_env" / "agents"
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        reads = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "_game"]
        assert not reads, f"{path.name} reads ._game at lines {reads}"


def test_the_policy_agents_are_registered_by_the_agents_package() -> None:
    from allfives_env.agents import PolicyAgent, ShippedPolicyAgent
    from allfives_env.agents.registry import _REGISTRY

    assert _REGISTRY["ppo"][0] is PolicyAgent
    for name in SHIPPED_POLICIES:
        cls = _REGISTRY[name][0]
        assert issubclass(cls, ShippedPolicyAgent) and cls.name == name
        assert cls.__module__ == "allfives_env.agents.policy"
