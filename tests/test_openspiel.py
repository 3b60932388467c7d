"""All Fives as an OpenSpiel game (``python_allfives``) and OpenSpiel's bots as agents.

OpenSpiel's own checks (``random_sim_test`` with serialization on 2, 3 and 4 players, the Python game
API test OpenSpiel runs on its Python games), a differential test against the core (the same deal gives
the same legal actions, events and returns), the worked example docs/rules.md §9 E10 through chance nodes,
serialization, parameters, ``resample_from_infostate``, and the bots through the agent protocol.
Skipped when the ``[openspiel]`` extra is not installed (CI installs it).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import allfives_env.openspiel  # noqa: E402,F401  (registers python_allfives)
from allfives_env.agents import AgentError, PlayerView, make_agent  # noqa: E402
from allfives_env.core import Deal, Game, ReplayError, Rules, RulesError, parse_action, tile_set  # noqa: E402
from allfives_env.core.errors import IllegalActionError  # noqa: E402
from allfives_env.match import play_game  # noqa: E402
from allfives_env.openspiel import OpenSpielStateError  # noqa: E402
from allfives_env.openspiel.params import make_config  # noqa: E402

CHANCE = pyspiel.PlayerId.CHANCE


def load(**params):
    return pyspiel.load_game("python_allfives", params)


def play_random(game, rng, stop=None):
    """A state after random play (to the end, or until ``stop(state)``)."""
    state = game.new_initial_state()
    while not state.is_terminal() and not (stop and stop(state)):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


# ------------------------------------------------------------------------------------------------ OpenSpiel's checks
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_sim_test_with_serialization(players: int) -> None:
    pyspiel.random_sim_test(load(players=players, max_hands=4), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("params", [
    {"players": 2, "episode": "hand", "returns": "points", "hand_size": 5},
    {"players": 4, "partnership": "off", "episode": "hand", "returns": "points", "point_scale": 10.0},
    {"players": 2, "may_draw_when_able": True, "boneyard_reserve": 2, "max_draws_per_turn": 2, "max_hands": 3},
    {"players": 3, "first_leader": "highest_double", "hand_end": "winner_takes", "spinner_count": "sniff",
     "after_block": "lowest_pips", "max_hands": 3},
    {"players": 2, "max_pip": 9, "score_unit": 5, "min_first_score": 10, "episode": "hand"},
], ids=["2p-hand-points", "4p-cut-hand", "2p-draw-reserve-cap", "3p-highest-double-winner-takes", "2p-d9-unit5"])
def test_random_sim_test_on_rule_variants(params: dict) -> None:
    pyspiel.random_sim_test(load(**params), num_sims=2, serialize=True, verbose=False)


def test_openspiel_python_game_api_test() -> None:
    """The simulation OpenSpiel runs on every registered game (python/tests/games_sim_test.py): clones,
    OpenSpiel serialization, returns in range. Its pickle round trip is left out: nothing here unpickles."""
    sim = pytest.importorskip("open_spiel.python.tests.games_sim_test")
    case = sim.GamesSimTest()
    for params in ({"players": 2, "max_hands": 3}, {"players": 4, "episode": "hand"}):
        case.sim_game(load(**params), check_pickle_serialization=False)


def test_bounds_hold_and_returns_are_zero_sum() -> None:
    rng = np.random.default_rng(3)
    for params in ({"players": 2, "max_hands": 5}, {"players": 3, "returns": "points", "max_hands": 2},
                   {"players": 4, "episode": "hand", "returns": "points"}):
        game = load(**params)
        for _ in range(3):
            state = play_random(game, rng)
            history = state.full_history()
            moves = sum(1 for item in history if item.player >= 0)
            assert moves <= game.max_game_length()
            assert len(history) - moves <= game.max_chance_nodes_in_history()
            returns = state.returns()
            assert abs(sum(returns)) < 1e-9
            assert all(game.min_utility() <= r <= game.max_utility() for r in returns)


def test_observation_tensors_and_strings() -> None:
    from open_spiel.python.observation import make_observation

    game = load(players=4)
    rng = np.random.default_rng(5)
    state = play_random(game, rng, stop=lambda s: len(s.history()) > 40 and not s.is_chance_node())
    player = state.current_player()
    obs = make_observation(game)
    obs.set_from(state, player)
    np.testing.assert_array_equal(obs.tensor, state.observation_tensor(player))
    assert obs.dict["to_act"][0] == 1.0  # the player to act is relative seat 0 of itself
    # the allfives_v0 slices are the encoder's, bit for bit
    from allfives_env.encoding import ObservationEncoder

    encoder = ObservationEncoder(Rules(num_players=4))
    full = encoder.encode(state.track.game, player)
    for name, sl in encoder.slices.items():
        np.testing.assert_array_equal(obs.dict[name], full[sl])
    info = state.information_state_tensor(player)
    assert len(info) == game.information_state_tensor_size() > len(obs.tensor)
    text = state.information_state_string(player)
    assert text.startswith(f"seat {player}") and "you were dealt" in text
    # other seats' draws and deals stay hidden in the public observer
    public = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True,
                                                               private_info=pyspiel.PrivateInfoType.NONE))
    assert "you were dealt" not in public.string_from(state, player)
    assert "hand" not in public.dict


# ------------------------------------------------------------------------------------------------ exactness
def _replay_on_core(game, state) -> None:
    """Map the OpenSpiel history to fixed core deals, play the same actions on the core, and compare."""
    config = game.config
    rules = config.rules
    h = int(rules.hand_size)
    walker = game.new_initial_state()
    hands_seen: list[dict] = []
    moves: list[tuple[int, list[int]]] = []
    current: dict = {}
    for action in state.history():
        if walker.is_chance_node():
            kind, _, value = walker.action_to_string(CHANCE, action).partition(" ")
            if kind == "deal":
                if not current or current["draws"] or current["leader"] is not None or len(current["deal"]) == h * rules.num_players:
                    current = {"deal": [], "draws": [], "leader": None}
                    hands_seen.append(current)
                current["deal"].append(action)
            elif kind == "draw":
                current["draws"].append(action)
            else:
                current["leader"] = action - rules.tile_count
        else:
            moves.append((action, walker.legal_actions()))
        walker.apply_action(action)
    deals = []
    for hand in hands_seen:
        seats = [hand["deal"][i * h:(i + 1) * h] for i in range(rules.num_players)]
        rest = [t for t in range(rules.tile_count) if t not in hand["deal"] and t not in hand["draws"]]
        deals.append(Deal.from_tiles(rules, seats, hand["draws"] + rest, hand["leader"]))
    core = Game(rules, seed=0, deals=deals, stop_after_hand=config.episode == "hand")
    for action, legal in moves:
        assert sorted(core.legal) == legal
        core.step(action)
    ours = state.track.game
    assert core.over and state.is_terminal()
    assert core.events == ours.events
    assert core.scores == ours.scores and core.winner == ours.winner


@pytest.mark.parametrize("params", [
    {"players": 2, "max_hands": 6}, {"players": 3, "max_hands": 4}, {"players": 4, "max_hands": 4},
    {"players": 4, "partnership": "off", "after_block": "lowest_pips", "win_check": "end_of_hand", "max_hands": 3},
    {"players": 2, "may_draw_when_able": True, "boneyard_reserve": 2, "max_hands": 3},
    {"players": 2, "first_leader": "highest_double", "episode": "hand"},
], ids=["2p", "3p", "4p", "4p-cut-lowest-pips", "2p-draw-reserve", "2p-highest-double"])
def test_same_deal_same_game_as_the_core(params: dict) -> None:
    game = load(**params)
    rng = np.random.default_rng(11)
    for _ in range(3):
        _replay_on_core(game, play_random(game, rng))


def test_worked_example_e10_through_chance_nodes() -> None:
    """docs/rules.md §9 E10: a whole 2-player hand with a forced draw chain and a domino; P0 30, P1 -15."""
    game = load(players=2, hand_size=5, episode="hand", returns="points")
    tiles = tile_set(6)
    state = game.new_initial_state()
    hand0 = ["5-5", "5-0", "0-6", "3-1", "5-6"]
    hand1 = ["5-3", "6-6", "4-4", "6-2", "1-6"]
    for hand in (hand0, hand1):
        for tile in sorted(tiles.parse(t) for t in hand):
            state.apply_action(tile)
    assert state.is_chance_node() and state.chance_outcomes()[0][0] == 28  # the leader pick
    state.apply_action(28)  # seat 0 leads
    for move in ["5-5@W", "5-3@E", "5-0@W"]:
        state.apply_action(parse_action(move, tiles))
    for drawn in ["1-1", "2-4", "5-2"]:  # seat 1 cannot play on 0/3/5: draws until the 5-2 comes
        assert state.is_chance_node()
        state.apply_action(tiles.parse(drawn))
    # it must play the drawn 5-2, on the spinner's ends (W shows 0, E shows 3)
    assert state.current_player() == 1 and state.legal_actions() == [parse_action(m, tiles) for m in ("5-2@N", "5-2@S")]
    for move in ["5-2@N", "5-6@S", "6-2@N", "3-1@E", "1-1@E", "0-6@W"]:
        state.apply_action(parse_action(move, tiles))
    assert state.is_terminal()
    assert state.track.game.scores == [30, -15]
    assert state.returns() == [45.0, -45.0]


# ------------------------------------------------------------------------------------------------ serialization
def test_serialize_is_plain_json_and_round_trips() -> None:
    game = load(players=3, max_hands=3)
    rng = np.random.default_rng(2)
    for stop in (5, 30, 90):
        state = play_random(game, rng, stop=lambda s, n=stop: len(s.history()) >= n)
        text = state.serialize()
        data = json.loads(text)
        assert data["format"] == "allfives-openspiel-state" and data["history"] == state.history()
        again = game.deserialize_state(text)
        assert str(again) == str(state) and again.history() == state.history()
        assert again.legal_actions() == state.legal_actions()
    ser = pyspiel.serialize_game_and_state(game, state)  # OpenSpiel's own format works too
    assert "python_allfives" in ser


@pytest.mark.parametrize("text, message", [
    ("not json", "not JSON"),
    (json.dumps({"format": "other"}), "format"),
    (json.dumps({"format": "allfives-openspiel-state", "version": 99, "params": {}, "history": []}), "version 99"),
    (json.dumps({"format": "allfives-openspiel-state", "version": 1, "params": {}, "history": [1.5]}), "integer"),
    (json.dumps({"format": "allfives-openspiel-state", "version": 1, "params": {"players": 4}, "history": []}),
     "other parameters"),
    (json.dumps({"format": "allfives-openspiel-state", "version": 1, "params": {"players": 2},
                 "history": [0, 0]}), "not legal"),
    (json.dumps({"format": "allfives-openspiel-state", "version": 1, "params": {"players": 9}, "history": []}),
     "players=9"),
])
def test_deserialize_refuses_corrupt_or_foreign_strings(text: str, message: str) -> None:
    game = load(players=2)
    with pytest.raises(ReplayError, match=message):
        game.deserialize_state(text)


# ------------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize("params, message", [
    ({"players": 5}, "players=5"),
    ({"hand_end": "nope"}, "hand_end='nope'"),
    ({"partnership": "maybe"}, "partnership='maybe'"),
    ({"first_leader": "highest_double", "no_double_fallback": "redeal"}, "no_double_fallback='redeal'"),
    ({"episode": "set"}, "episode='set'"),
    ({"returns": "elo"}, "returns='elo'"),
    ({"scores": "1,2,3"}, "scores='1,2,3'"),
    ({"max_hands": 0}, "max_hands=0"),
    ({"hand_size": 20}, "hand_size=20"),
    ({"point_scale": 0.0}, "point_scale=0.0"),
])
def test_bad_parameters_name_the_parameter(params: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        load(**params)
    with pytest.raises(RulesError, match=message):
        make_config(params)


def test_unknown_parameter_is_refused() -> None:
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'colour'"):
        load(colour="red")
    with pytest.raises(RulesError, match="unknown parameter"):
        make_config({"colour": "red"})


def test_illegal_actions_are_refused_with_the_core_error() -> None:
    game = load(players=2)
    state = game.new_initial_state()
    with pytest.raises(IllegalActionError, match="chance outcome 99"):
        state.apply_action(99)
    state = play_random(game, np.random.default_rng(0), stop=lambda s: not s.is_chance_node())
    bad = next(a for a in range(game.num_distinct_actions()) if a not in state.legal_actions())
    with pytest.raises(IllegalActionError, match="legal actions"):
        state.apply_action(bad)


def test_a_chance_outcome_of_another_kind_of_node_is_refused_and_changes_nothing() -> None:
    """The state maps its chance actions onto the core's outcomes (a pick's ``tiles + i``, a tile id):
    an id of the other kind, or one past the node's outcomes, is refused at every kind of node."""
    game = load(players=2, first_leader="random", after_block="random", max_hands=3)
    tiles = 28
    seen = set()
    rng = np.random.default_rng(4)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            kind = state.action_to_string(CHANCE, state.chance_outcomes()[0][0]).split()[0]
            allowed = {a for a, _ in state.chance_outcomes()}
            bad = [tiles, tiles + 2] if kind != "pick" else [0, tiles - 1, tiles + 2]
            before = (state.serialize(), str(state), state.chance_outcomes())
            for action in [a for a in bad if a not in allowed]:
                with pytest.raises(IllegalActionError, match=f"chance outcome {action} is not possible"):
                    state.apply_action(action)
                assert (state.serialize(), str(state), state.chance_outcomes()) == before
            seen.add(kind)
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert seen == {"deal", "pick", "draw"}


# ------------------------------------------------------------------------------------------------ resampling
@pytest.mark.parametrize("params", [
    {"players": 2, "max_hands": 3}, {"players": 4, "max_hands": 2}, {"players": 3, "episode": "hand"},
    {"players": 2, "may_draw_when_able": True, "max_draws_per_turn": 2, "episode": "hand"},
    {"players": 4, "partnership": "off", "first_leader": "highest_double", "episode": "hand"},
])
def test_resample_stays_in_the_information_set(params: dict) -> None:
    game = load(**params)
    rng = np.random.default_rng(7)
    changed = checked = 0
    state = game.new_initial_state()
    while not state.is_terminal() and checked < 25:
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        player = state.current_player()
        other = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
        assert other.information_state_string(player) == state.information_state_string(player)
        assert other.information_state_tensor(player) == state.information_state_tensor(player)
        assert other.legal_actions() == state.legal_actions()
        changed += other.history() != state.history()
        checked += 1
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert changed > checked // 2, "the hidden past must really be guessed again"


def test_resample_is_reproducible_and_refused_at_chance_nodes() -> None:
    game = load(players=2)
    state = play_random(game, np.random.default_rng(1), stop=lambda s: len(s.history()) > 30 and not s.is_chance_node())
    a = state.resample_from_infostate(0, rng=np.random.default_rng(4))
    b = state.resample_from_infostate(0, rng=np.random.default_rng(4))
    assert a.history() == b.history()
    with pytest.raises(OpenSpielStateError, match="decision nodes"):
        game.new_initial_state().resample_from_infostate(0, rng=np.random.default_rng(0))


def test_openspiel_ismcts_runs_on_the_game_directly() -> None:
    """The OpenSpiel user's path: ISMCTSBot on a one-hand, 5-tile game, against a random bot."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(players=2, hand_size=5, episode="hand", returns="points", point_scale=20.0)
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 20, random_state=rs)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rs.choice(outcomes, p=probs))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(rs.choice(state.legal_actions()))
    assert abs(sum(state.returns())) < 1e-9


def test_outcome_sampling_mccfr_runs_on_a_small_variant() -> None:
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    game = load(players=2, hand_size=2, episode="hand", returns="points", point_scale=20.0)
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(20):
        solver.iteration()
    assert solver.average_policy() is not None


# ------------------------------------------------------------------------------------------------ the bots as agents
@pytest.mark.parametrize("spec", ["openspiel-ismcts:sims=8", "openspiel-mcts:sims=8,worlds=2"])
@pytest.mark.parametrize("players", [2, 4])
def test_bots_play_legal_deterministic_games(spec: str, players: int) -> None:
    rules = Rules(num_players=players, target=60)
    results = []
    for _ in range(2):
        agents = [make_agent(spec, seed=1)] + [make_agent("greedy", seed=s) for s in range(1, players)]
        results.append(play_game(rules, agents, seed=9, agent_seeds=[3] + [None] * (players - 1)))
        assert agents[0].fallbacks == 0 and agents[0].moves > 0
    assert results[0].scores == results[1].scores and results[0].decisions == results[1].decisions


def test_bots_read_only_the_view() -> None:
    """Same public history and own tiles, other hidden tiles: the same move for the same seed."""
    from tests.helpers import with_other_hidden_tiles

    rules = Rules(num_players=2)
    game = Game(rules, 4)
    rng = np.random.default_rng(0)
    checked = 0
    while not game.over and checked < 4:
        if len(game.legal) > 1 and game.board.size > 3:
            other = with_other_hidden_tiles(game, game.current, seed=checked)
            a = make_agent("openspiel-ismcts:sims=10", seed=2).act(PlayerView(game, game.current))
            b = make_agent("openspiel-ismcts:sims=10", seed=2).act(PlayerView(other, game.current))
            assert a == b
            checked += 1
        game.step(game.legal[int(rng.integers(len(game.legal)))])
    assert checked


def test_bot_specs_and_parameter_errors() -> None:
    agent = make_agent("openspiel-ismcts:sims=50,uct_c=1.5", seed=0)
    assert agent.spec() == "openspiel-ismcts:sims=50,uct_c=1.5"
    assert make_agent(agent.spec(), seed=0).sims == 50
    with pytest.raises(AgentError, match="sims=0 is not allowed"):
        make_agent("openspiel-ismcts:sims=0")
    with pytest.raises(AgentError, match="worlds=0 is not allowed"):
        make_agent("openspiel-ismcts:worlds=0")
    with pytest.raises(AgentError, match="each world needs a simulation"):
        make_agent("openspiel-mcts:sims=4,worlds=8")


def test_bots_through_the_evaluation_harness() -> None:
    from allfives_env.evaluation import evaluate

    result = evaluate(["greedy", "openspiel-ismcts:sims=4"], {"num_players": 2, "target": 50}, games=2, seed=3,
                      progress=False)
    assert result.games == 2 and result.think_ms[1] > 0


_NO_PYSPIEL = """
import sys
sys.modules["pyspiel"] = None  # as if OpenSpiel were not installed
import allfives_env, allfives_env.agents
from allfives_env.agents import AgentError, make_agent
make_agent("greedy")
try:
    make_agent("openspiel-ismcts")
except AgentError as exc:
    assert "pip install" in str(exc), exc
else:
    raise SystemExit("no AgentError")
try:
    import allfives_env.openspiel
except ImportError as exc:
    from allfives_env.openspiel.errors import OpenSpielUnavailableError
    assert isinstance(exc, OpenSpielUnavailableError) and "[openspiel]" in str(exc), exc
else:
    raise SystemExit("no ImportError")
print("ok")
"""

_LAZY = """
import sys
import allfives_env, allfives_env.agents, allfives_env.evaluation
from allfives_env.agents import agent_names
assert "openspiel-ismcts" in agent_names()
assert "pyspiel" not in sys.modules, "import allfives_env must not import pyspiel"
print("ok")
"""


@pytest.mark.parametrize("script", [_LAZY, _NO_PYSPIEL], ids=["lazy-import", "without-pyspiel"])
def test_pyspiel_is_imported_only_when_needed(script: str) -> None:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
