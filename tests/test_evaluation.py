"""The evaluation harness: duplicate deals, statistics, ratings, determinism, saved results, the CLI."""

from __future__ import annotations

import csv
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from allfives_env.core.errors import SeedError

from allfives_env.agents import AgentError, GreedyAgent, make_agent
from allfives_env.cli import main
from allfives_env.core import Game, Rules, RulesError
from allfives_env.evaluation import (
    EvaluationError,
    MatchResult,
    TournamentResult,
    agent_seeds,
    bradley_terry,
    compare,
    duplicate_orders,
    evaluate,
    format_comparison,
    format_match,
    format_tournament,
    load_result,
    mean_interval,
    save_csv,
    save_json,
    set_seeds,
    student_t_cdf,
    t_quantile,
    tournament,
    wilson_interval,
)
from allfives_env.match import play_game

Z = 1.959963984540054


def _without_timing(d: dict[str, Any]) -> dict[str, Any]:
    """A result dict without the measured think times (the only figures that vary between runs)."""
    d = json.loads(json.dumps(d))

    def strip(m: dict[str, Any]) -> None:
        m.pop("think_ms", None)
        for r in m.get("records", []):
            r.pop("think", None)

    if "matches" in d:
        for m in d["matches"]:
            strip(m)
    else:
        strip(d)
    return d


# ---------------------------------------------------------------------- seat orders and duplicate deals
def test_duplicate_orders_per_setup() -> None:
    assert duplicate_orders(Rules(num_players=2), 2) == [(0, 1), (1, 0)]
    assert duplicate_orders(Rules(num_players=4), 2) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert duplicate_orders(Rules(num_players=3), 2) == [(0, 1, 1), (1, 0, 1), (1, 1, 0)]
    assert sorted(duplicate_orders(Rules(num_players=3), 3)) == sorted(itertools.permutations(range(3)))
    assert len(duplicate_orders(Rules(num_players=4, partnership=False), 4)) == 24
    cut = duplicate_orders(Rules(num_players=4, partnership=False), 2)
    assert len(cut) == 4 and all(o.count(0) == 1 for o in cut)
    both = duplicate_orders(Rules(num_players=3), 2, balanced=True)
    assert len(both) == 6 and sum(o.count(0) for o in both) == 3 + 6
    with pytest.raises(EvaluationError, match="partnership match-up takes 2 agents"):
        duplicate_orders(Rules(num_players=4), 4)
    with pytest.raises(EvaluationError, match="takes 3 agents"):
        duplicate_orders(Rules(num_players=3), 4)


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 3}, {"num_players": 4},
                                     {"num_players": 4, "partnership": False}])
def test_a_duplicate_set_replays_identical_deals(options: dict[str, Any]) -> None:
    """Every game of a set sees the same hands, boneyard and first leader for each hand index it
    reaches, and evaluate() plays exactly those games."""
    rules = Rules(**options)
    specs = ["greedy", "random"]
    seed = 11
    result = evaluate(specs, rules, games=2 * len(duplicate_orders(rules, 2)), seed=seed, progress=False)
    orders = duplicate_orders(rules, 2)
    assert result.sets == 2
    for set_index in range(2):
        game_seed, deal_seed = set_seeds(seed, set_index)
        games = []
        for g, order in enumerate(orders):
            game = Game(rules, game_seed, deal_seed=deal_seed)
            agents = [make_agent(specs[who]) for who in order]
            played = play_game(rules, agents, seed=game_seed, deal_seed=deal_seed,
                               agent_seeds=agent_seeds(seed, set_index, g, rules.num_players), game=game)
            record = result.records[set_index * len(orders) + g]
            assert (record.set_index, record.game_index, record.seats) == (set_index, g, order)
            assert (record.winner, record.gains, record.hands) == (played.winner, played.gains, played.hands)
            games.append(game)
        assert games[0].hand_records[0].leader == games[1].hand_records[0].leader
        for k in range(min(len(g.hand_records) for g in games)):
            deals = {(g.hand_records[k].hands, g.hand_records[k].boneyard) for g in games}
            assert len(deals) == 1, f"hand {k + 1} was dealt differently within set {set_index}"
    other = [Game(rules, s, deal_seed=d).hand_records[0].hands for s, d in (set_seeds(seed, 0), set_seeds(seed, 1))]
    assert other[0] != other[1], "different sets should see different deals"


def test_seeds_come_from_the_seed_only() -> None:
    assert set_seeds(3, 5) == set_seeds(3, 5)
    assert set_seeds(3, 5) != set_seeds(3, 6) != set_seeds(4, 5)
    assert agent_seeds(3, 5, 0, 4) != agent_seeds(3, 5, 1, 4)
    assert len(set(agent_seeds(3, 5, 0, 4))) == 4
    with pytest.raises(SeedError, match="from 0 to 2\\*\\*63-1"):  # the library's one rule for seeds
        set_seeds(-1, 0)


# ---------------------------------------------------------------------- statistics
def _wilson_by_quadratic(successes: float, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson bounds are the roots in p of (phat - p)^2 = z^2 p (1 - p) / n."""
    phat = successes / n
    k = z * z / n
    roots = np.roots([1 + k, -(2 * phat + k), phat * phat])
    return float(min(roots)), float(max(roots))


@pytest.mark.parametrize("successes,n", [(60, 100), (5, 10), (1, 3), (99.5, 100), (250, 1000)])
def test_wilson_interval_matches_the_quadratic(successes: float, n: int) -> None:
    assert wilson_interval(successes, n) == pytest.approx(_wilson_by_quadratic(successes, n), abs=1e-12)


def test_wilson_interval_known_values_and_edges() -> None:
    lo, hi = wilson_interval(60, 100)
    assert lo == pytest.approx(0.5020, abs=5e-4) and hi == pytest.approx(0.6906, abs=5e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0 < hi < 0.35
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and 0.65 < lo < 1
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_student_t_against_tables() -> None:
    assert student_t_cdf(0.0, 7) == pytest.approx(0.5)
    assert student_t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy
    assert student_t_cdf(2.0, 2) == pytest.approx(0.5 + 1 / math.sqrt(6))  # closed form for df=2
    for df, q in [(1, 12.706205), (4, 2.776445), (9, 2.262157), (30, 2.042272), (1000, 1.962339)]:
        assert t_quantile(0.975, df) == pytest.approx(q, abs=2e-6)
    assert t_quantile(0.025, 9) == pytest.approx(-2.262157, abs=2e-6)


def test_mean_interval() -> None:
    mean, lo, hi = mean_interval([1, 2, 3, 4, 5])
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert (mean, lo, hi) == pytest.approx((3.0, 3.0 - half, 3.0 + half), abs=1e-5)
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    mean, lo, hi = mean_interval([4.0])
    assert mean == 4.0 and math.isnan(lo) and math.isnan(hi)


def test_bradley_terry_known_answers() -> None:
    assert bradley_terry([[0, 75], [25, 0]]) == pytest.approx([0.0, -400 * math.log10(3)], abs=1e-6)
    assert 400 * math.log10(3) == pytest.approx(190.8, abs=0.05)
    assert bradley_terry([[0, 75], [25, 0]], anchor=1) == pytest.approx([400 * math.log10(3), 0.0], abs=1e-6)
    symmetric = [[0, 30, 30], [30, 0, 30], [30, 30, 0]]
    assert bradley_terry(symmetric) == pytest.approx([0, 0, 0], abs=1e-6)
    # results that are exactly the expectations of strengths 1, 2, 4 give those strengths back
    strengths = np.array([1.0, 2.0, 4.0])
    wins = 120 * strengths[:, None] / (strengths[:, None] + strengths[None, :])
    np.fill_diagonal(wins, 0)
    assert bradley_terry(wins) == pytest.approx(400 * np.log10(strengths), abs=1e-5)


def test_bradley_terry_needs_a_prior_for_unbeaten_records() -> None:
    with pytest.raises(EvaluationError, match="prior"):
        bradley_terry([[0, 10], [0, 0]])
    ratings = bradley_terry([[0, 10], [0, 0]], prior=1.0)  # 10.5 : 0.5
    assert ratings[1] == pytest.approx(-400 * math.log10(21), abs=1e-6)
    with pytest.raises(EvaluationError, match="square"):
        bradley_terry([[0, 1, 2]])


# ---------------------------------------------------------------------- running match-ups
def test_determinism_across_process_counts() -> None:
    one = evaluate(["greedy", "random"], games=60, seed=5, progress=False, processes=1)
    two = evaluate(["greedy", "random"], games=60, seed=5, progress=False, processes=2)
    assert _without_timing(one.to_dict()) == _without_timing(two.to_dict())
    other = evaluate(["greedy", "random"], games=60, seed=6, progress=False)
    assert _without_timing(other.to_dict()) != _without_timing(one.to_dict())
    t1 = tournament(["random", "greedy", "defensive"], num_players=3, games_per_pair=12, seed=2, progress=False,
                    bootstrap=100)
    t2 = tournament(["random", "greedy", "defensive"], num_players=3, games_per_pair=12, seed=2, progress=False,
                    bootstrap=100, processes=2)
    assert _without_timing(t1.to_dict()) == _without_timing(t2.to_dict())


@pytest.mark.parametrize("options,agents,per_set,even", [
    ({"num_players": 3}, ["defensive", "greedy"], 3, 1 / 3),
    ({"num_players": 3}, ["defensive", "greedy", "random"], 6, 1 / 3),
    ({"num_players": 4}, ["defensive", "greedy"], 2, 1 / 2),
    ({"num_players": 4, "partnership": False}, ["greedy", "random"], 4, 1 / 4),
    ({"num_players": 4, "partnership": False, "hand_end": "winner_takes", "score_unit": 5}, ["greedy", "random"], 4, 1 / 4),
])
def test_multiplayer_matchups_run(options: dict[str, Any], agents: list[str], per_set: int, even: float) -> None:
    result = evaluate(agents, options, games=2 * per_set, seed=3, progress=False)
    assert len(result.orders) == per_set and result.sets == 2 and result.games == 2 * per_set
    assert result.wins + result.losses + result.draws == result.games
    assert result.even_win_rate == pytest.approx(even)
    assert result.mean_hands >= 1 and all(t >= 0 for t in result.think_ms)
    assert sum(result.decisions) == sum(sum(r.decisions) for r in result.records)
    assert result.rules == Rules(**options).to_dict()
    assert "win rate of" in format_match(result)


def test_balanced_field_matchup_is_symmetric() -> None:
    result = evaluate(["greedy", "greedy"], {"num_players": 3}, games=12, seed=0, progress=False, balanced=True)
    assert result.balanced and result.even_win_rate == pytest.approx(0.5) and len(result.orders) == 6


def test_games_round_up_to_whole_sets_and_agents_may_be_instances() -> None:
    result = evaluate([GreedyAgent(), "random"], games=5, seed=0, progress=False)
    assert result.games == 6 and result.sets == 3 and result.agents == ["greedy", "random"]


def test_a_match_up_reads_the_same_from_either_side() -> None:
    # behaviour, not strength (benchmarks/strength.py measures that): on the same duplicate deals the two
    # orders of a match-up are mirror images, and each estimate lies inside its interval
    ab = evaluate(["greedy", "random"], games=40, seed=1, progress=False)
    ba = evaluate(["random", "greedy"], games=40, seed=1, progress=False)
    assert ab.win_rate + ba.win_rate == pytest.approx(1.0)
    assert (ab.wins, ab.losses) == (ba.losses, ba.wins)
    assert ab.win_rate_ci[0] <= ab.win_rate <= ab.win_rate_ci[1]
    assert ab.points_per_hand_ci[0] <= ab.points_per_hand <= ab.points_per_hand_ci[1]


def test_bad_inputs_fail_clearly() -> None:
    with pytest.raises(AgentError, match="unknown agent 'gredy'"):
        evaluate(["gredy", "random"], progress=False)
    with pytest.raises(AgentError, match="takes no parameter"):
        evaluate(["greedy:depth=3", "random"], progress=False)
    with pytest.raises(RulesError, match="unknown rules option"):
        evaluate(["greedy", "random"], {"hand_ends": "x"}, progress=False)
    with pytest.raises(EvaluationError, match="contradicts"):
        evaluate(["greedy", "random"], Rules(num_players=2), num_players=3, progress=False)
    with pytest.raises(EvaluationError, match="games=0"):
        evaluate(["greedy", "random"], games=0, progress=False)
    with pytest.raises(EvaluationError, match="processes"):
        evaluate(["greedy", "random"], processes=0, progress=False)
    with pytest.raises(EvaluationError, match="distinct"):
        tournament(["greedy", "greedy"], progress=False)


def test_progress_goes_to_stderr_with_or_without_tqdm(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate(["greedy", "random"], games=4, seed=0, progress=True)
    assert "4/4" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "tqdm", None)  # importing tqdm now fails
    evaluate(["greedy", "random"], games=4, seed=0, progress=True)
    assert "4/4 games" in capsys.readouterr().err
    evaluate(["greedy", "random"], games=4, seed=0, progress=False)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------- tournaments
def test_tournament_ratings_and_matrix() -> None:
    result = tournament(["greedy", "random", "defensive"], games_per_pair=40, seed=1, progress=False, bootstrap=200)
    assert result.anchor == "random"
    i_random, i_greedy = result.agents.index("random"), result.agents.index("greedy")
    assert result.ratings[i_random] == 0.0 and result.rating_ci[i_random] == (0.0, 0.0)
    assert result.ratings[i_greedy] > 200
    for k, (lo, hi) in enumerate(result.rating_ci):
        assert lo <= result.ratings[k] + 1e-9 and result.ratings[k] <= hi + 1e-9
    n = len(result.agents)
    for i in range(n):
        assert result.win_rates[i][i] is None
        for j in range(n):
            if i != j:
                assert result.win_rates[i][j] + result.win_rates[j][i] == pytest.approx(1.0)
    assert len(result.matches) == 3 and all(m.games == 40 for m in result.matches)
    assert result.games == [80, 80, 80]
    m = result.pair("defensive", "greedy")
    assert m.agents == ["greedy", "defensive"]
    text = format_tournament(result)
    assert "rating" in text and "Win rate of the row agent" in text
    no_random = tournament(["greedy", "defensive"], games_per_pair=10, seed=1, progress=False, bootstrap=0)
    assert no_random.anchor == "greedy" and no_random.ratings[0] == 0.0


def test_partnership_tournament_runs() -> None:
    result = tournament(["random", "greedy"], num_players=4, games_per_pair=4, seed=0, progress=False, bootstrap=20)
    assert result.matches[0].orders == [(0, 1, 0, 1), (1, 0, 1, 0)]


# ---------------------------------------------------------------------- saving, loading, comparing
def test_json_csv_round_trip_and_compare(tmp_path: Path) -> None:
    a = evaluate(["greedy", "random"], games=20, seed=1, progress=False)
    b = evaluate(["greedy", "random"], {"hand_end": "winner_takes"}, games=20, seed=2, progress=False)
    pa, pb = save_json(a, tmp_path / "a.json"), save_json(b, tmp_path / "b.json")
    loaded = load_result(pa)
    assert isinstance(loaded, MatchResult) and loaded.to_dict() == a.to_dict()
    assert json.loads(pa.read_text())["format"] == "allfives-evaluation"
    (csv_path,) = save_csv(a, tmp_path / "a.csv")
    (row,) = list(csv.DictReader(csv_path.open()))
    assert row["agent_1"] == "greedy" and int(row["games"]) == 20 and float(row["win_rate"]) == pytest.approx(a.win_rate)

    comparison = compare(pa, pb)
    assert comparison.kind == "match" and [r.name for r in comparison.rows] == ["win rate of greedy", "points per hand"]
    assert comparison.rows[0].diff == pytest.approx(b.win_rate - a.win_rate)
    assert any("hand_end" in note for note in comparison.notes)
    assert "CIs overlap" in format_comparison(comparison)

    t = tournament(["random", "greedy", "defensive"], games_per_pair=10, seed=1, progress=False, bootstrap=50)
    pt = save_json(t, tmp_path / "t.json")
    loaded_t = load_result(pt)
    assert isinstance(loaded_t, TournamentResult) and loaded_t.to_dict() == t.to_dict()
    files = save_csv(t, tmp_path / "t.csv")
    assert [f.name for f in files] == ["t.csv", "t-matrix.csv", "t-pairs.csv"]
    ratings = list(csv.DictReader(files[0].open()))
    assert [r["agent"] for r in ratings] == [row["agent"] for row in t.rating_table()]
    matrix = list(csv.DictReader(files[1].open()))
    assert matrix[0]["agent"] == "random" and matrix[0]["random"] == ""
    assert len(list(csv.DictReader(files[2].open()))) == 3
    self_comparison = compare(t, loaded_t)
    assert all(r.diff == 0 and r.overlap for r in self_comparison.rows)
    assert any("same deal seeds" in note for note in self_comparison.notes)
    with pytest.raises(EvaluationError, match="cannot compare"):
        compare(pa, pt)
    small = save_json(a, tmp_path / "small.json", include_games=False)
    assert load_result(small).records == [] and load_result(small).win_rate == a.win_rate


def test_load_rejects_foreign_files(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    with pytest.raises(EvaluationError, match="not an All Fives evaluation result"):
        load_result(bogus)
    bogus.write_text("not json")
    with pytest.raises(EvaluationError, match="not JSON"):
        load_result(bogus)


# ---------------------------------------------------------------------- command line
def test_cli_evaluate_tournament_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, t = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "t.json"
    assert main(["evaluate", "greedy", "random", "--players", "2", "--games", "20", "--seed", "1",
                 "--no-progress", "--json", str(a), "--csv", str(tmp_path / "a.csv")]) == 0
    out = capsys.readouterr().out
    assert "win rate of greedy" in out and "20 games (10 duplicate sets of 2)" in out
    assert load_result(a).games == 20 and (tmp_path / "a.csv").exists()
    assert main(["evaluate", "greedy", "random", "--games", "20", "--seed", "2", "--processes", "2",
                 "--rule", "hand_end=winner_takes", "--no-progress", "--json", str(b)]) == 0
    assert load_result(b).rules["hand_end"] == "winner_takes"
    assert main(["evaluate", "defensive", "greedy", "--players", "4", "--cut-throat", "--games", "4",
                 "--no-progress"]) == 0
    assert "4 players, cut-throat" in capsys.readouterr().out

    assert main(["tournament", "random", "greedy", "defensive", "--games", "10", "--bootstrap", "50",
                 "--no-progress", "--json", str(t), "--csv", str(tmp_path / "t.csv")]) == 0
    out = capsys.readouterr().out
    assert "Bradley-Terry" in out and "defensive" in out and (tmp_path / "t-matrix.csv").exists()
    assert main(["tournament", "random", "greedy", "--players", "3", "--games", "6", "--no-progress",
                 "--bootstrap", "20"]) == 0
    capsys.readouterr()

    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "win rate of greedy" in out and "hand_end" in out


def test_cli_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "gredy", "random", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("allfives: error: unknown agent 'gredy'") and "greedy" in err and err.count("\n") == 1
    assert main(["tournament", "random", "greedy:bogus_param=1", "--no-progress"]) == 2
    assert "bogus_param" in capsys.readouterr().err
    assert main(["evaluate", "greedy", "random", "--rule", "hand_end=everyone_wins", "--no-progress"]) == 2
    assert "deduct_own" in capsys.readouterr().err
    assert main(["evaluate", "greedy", "random", "defensive", "--no-progress"]) == 2
    assert "2-player match-up takes 2 agents" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.json"), str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_sample_games_are_the_evaluations_own_games(tmp_path) -> None:
    import json

    from allfives_env.core.replay import load_replay
    from allfives_env.evaluation import save_sample_games

    match = evaluate(["expert", "greedy"], {"num_players": 2, "target": 100}, games=4, seed=5, progress=False)
    paths = save_sample_games(["expert", "greedy"], {"num_players": 2, "target": 100}, tmp_path, count=4, seed=5)
    assert [p.name for p in paths] == ["game_0000_0.json", "game_0000_1.json", "game_0001_0.json", "game_0001_1.json"]
    for path, record in zip(paths, match.records):
        game = load_replay(path)
        assert list(game.scores) == list(record.gains) and game.hands_completed == record.hands
        assert json.loads(path.read_text())["agents"] == [["expert", "greedy"][who] for who in record.seats]


def test_evaluate_command_saves_sample_games(tmp_path, capsys) -> None:
    from allfives_env.cli import main

    assert main(["evaluate", "greedy", "random", "--games", "2", "--no-progress", "--rule", "target=60",
                 "--save-games", str(tmp_path / "g"), "--save-count", "3"]) == 0
    assert "3 sample games saved" in capsys.readouterr().out
    assert len(list((tmp_path / "g").glob("game_*.json"))) == 3


# ---------------------------------------------------------------------- hardening
@pytest.mark.parametrize("prior", [float("nan"), float("inf"), -float("inf"), -1.0, "1", True, None])
def test_the_prior_must_be_a_finite_number_at_least_zero(prior: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EvaluationError, match="finite number >= 0"):
        bradley_terry([[0, 3], [2, 0]], prior=prior)
    from allfives_env.evaluation import round_robin

    def no_games(*args: object, **kwargs: object) -> None:
        raise AssertionError("games were played before the prior was checked")

    monkeypatch.setattr(round_robin, "run_matchups", no_games)
    with pytest.raises(EvaluationError, match="finite number >= 0"):
        tournament(["greedy", "random"], games_per_pair=2, prior=prior, progress=False)


def test_bradley_terry_refuses_non_finite_wins() -> None:
    with pytest.raises(EvaluationError, match="finite"):
        bradley_terry([[0, float("nan")], [1, 0]], prior=1.0)


def test_sizes_and_agents_are_checked_before_any_game(monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_env.evaluation import MAX_BOOTSTRAP, MAX_GAMES, matchup, round_robin
    from allfives_env.policy import PolicyError

    def no_games(*args: object, **kwargs: object) -> None:
        raise AssertionError("played")

    for module in (matchup, round_robin):
        monkeypatch.setattr(module, "run_matchups", no_games)
    with pytest.raises(EvaluationError, match=f"games={MAX_GAMES + 1} is not allowed: give an integer from 1 to"):
        evaluate(["greedy", "random"], games=MAX_GAMES + 1, progress=False)
    with pytest.raises(EvaluationError, match="games_per_pair"):
        tournament(["greedy", "random"], games_per_pair=10**30, progress=False)
    with pytest.raises(EvaluationError, match=f"bootstrap={MAX_BOOTSTRAP + 1}"):
        tournament(["greedy", "random"], bootstrap=MAX_BOOTSTRAP + 1, progress=False)
    with pytest.raises(PolicyError, match="num_players=2"):
        evaluate(["ppo-2p", "random"], num_players=4, progress=False)
    with pytest.raises(PolicyError, match="num_players=4"):
        tournament(["random", "greedy", "ppo-4p"], progress=False)
    with pytest.raises(EvaluationError, match="list of spec strings"):
        evaluate("greedy", progress=False)  # type: ignore[arg-type]


def test_load_result_refuses_every_kind_of_bad_file(tmp_path: Path) -> None:
    head = {"format": "allfives-evaluation", "version": 1}
    cases = {
        "binary.json": b"\xff\xfe\x00\x81",
        "deep.json": ("[" * 100_000 + "]" * 100_000).encode(),
        "digits.json": ("9" * 5000).encode(),
        "list.json": json.dumps({**head, "kind": "match", "result": []}).encode(),
        "text.json": json.dumps({**head, "kind": "tournament", "result": "x"}).encode(),
        "inf.json": json.dumps({**head, "kind": "match", "result": {"agents": [], "rules": {}, "seed": float("inf")}})
        .encode(),
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(EvaluationError, match=name):
            load_result(tmp_path / name)
