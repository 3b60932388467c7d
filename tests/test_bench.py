"""The bench (``allfives bench``): frozen suites, golden games, ratings, cards, journals and the leaderboard.

Runs here are shrunk (two opponents, a few deals) by patching the protocol module, so that the mechanics are
tested in seconds; the frozen protocol itself is tested by the suite hashes and the golden games, which would
fail on any change to the engine, the suite files or the opponents' defaults that changes a suite's games.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import workers_agents  # noqa: F401  (registers the misbehaving test-* agents, in forked workers too)
from allfives_env.bench import (ANCHORS, OPPONENTS, SUITE_SHA256, TRACKS, BenchError, agent_rating, expected_score,
                                fit_ratings, format_card, load_leaderboard, load_suite, read_card, run_bench,
                                suite_path)
from allfives_env.bench import journal as journal_module
from allfives_env.bench import protocol
from allfives_env.bench.card import write_card
from allfives_env.core.rules import Rules
from allfives_env.evaluation.runner import play_sets
from allfives_env.evaluation.scheduling import duplicate_orders

ROOT = Path(__file__).resolve().parents[1]

# expert (agent 0) against greedy on each suite's first 6 deals: [set, game, winner, gains, hands] per game
GOLDEN_GAMES = {
    "2p": "c6994480d5befa7abb3ccd847d1417ecd6a32eba94fbd60a472c6ade84d7b58c",
    "3p": "a4a55be7fb8851c495aece6cb9faa914386507ff7620d76d6cefc642ca6eb828",
    "4p": "b4d9ecb0d3e31e63ce4fa3823449f9e84b99578424dcfca82b6199fea7284744",
}
# greedy (agent 0) against each protocol opponent on the 2p suite's deal 0: [winner, gains, hands] per game
GOLDEN_OPPONENTS = {
    "random": [[0, [255, 85], 6], [1, [95, 250], 7]],
    "greedy": [[1, [195, 255], 6], [1, [170, 260], 5]],
    "expert": [[1, [105, 250], 7], [1, [230, 255], 7]],
    "pimc:samples=200": [[1, [120, 265], 5], [0, [255, 135], 6]],
    "pimc-sift": [[1, [65, 255], 7], [0, [250, 165], 6]],
}


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> protocol.Track:
    """Protocol 1 shrunk for a test: two fast opponents, 3 deals in a full run and 2 in a quick one."""
    small = protocol.Track("2p", {"num_players": 2}, sets=3, quick_sets=2, opposing_sides=1)
    monkeypatch.setitem(protocol.TRACKS, "2p", small)
    monkeypatch.setattr(protocol, "OPPONENTS", ("random", "greedy"))
    monkeypatch.setitem(protocol.ANCHORS, "2p", {"random": 0.0, "greedy": 790.0})
    return small


def _numbers(card: dict) -> dict:
    """A card without what varies from run to run (think times, dates, durations)."""
    return {k: v for k, v in card.items() if k not in ("think_ms", "run")}


# --- the frozen suites -------------------------------------------------------------------------------------

@pytest.mark.parametrize("track", list(TRACKS))
def test_each_suite_is_the_frozen_file_with_its_deals(track: str) -> None:
    suite = load_suite(track)
    assert suite.sha256 == SUITE_SHA256[track] == hashlib.sha256(suite_path(track).read_bytes()).hexdigest()
    assert len(suite.deals) == TRACKS[track].sets
    assert [d.index for d in suite.deals] == list(range(TRACKS[track].sets))
    assert len({(d.game_seed, d.deal_seed) for d in suite.deals}) == len(suite.deals)
    assert json.loads(suite_path(track).read_text())["track"] == track


def test_the_deal_counts_give_the_promised_precision() -> None:
    """About ±2.5 points at 95% on a win rate near the even share, per opponent."""
    for track in TRACKS.values():
        rules = Rules.from_options(dict(track.rules))
        games = track.sets * len(duplicate_orders(rules, 2))
        even = 1.0 / (1 + track.opposing_sides)
        assert 1.96 * np.sqrt(even * (1 - even) / games) <= 0.0251
        assert 1.96 * np.sqrt(0.25 / games) <= 0.0251


@pytest.mark.parametrize("damage", ["changed", "truncated", "swapped"])
def test_a_changed_truncated_or_swapped_suite_is_refused_by_name(tmp_path: Path, damage: str) -> None:
    text = suite_path("2p").read_text()
    copy = tmp_path / "v1-2p.json"
    if damage == "changed":
        copy.write_text(text.replace("[", "[1", 3).replace("[1", "[", 1))
    elif damage == "truncated":
        copy.write_text(text[: len(text) // 2])
    else:
        shutil.copy(suite_path("3p"), copy)
    with pytest.raises(BenchError, match=r"v1-2p\.json is not protocol 1's 2p suite.*changed, truncated or swapped"):
        load_suite("2p", copy)
    with pytest.raises(BenchError, match="is missing"):
        load_suite("2p", tmp_path / "gone.json")
    with pytest.raises(BenchError, match="not a bench track; the tracks are 2p, 3p, 4p"):
        load_suite("5p")


@pytest.mark.parametrize("track", list(TRACKS))
def test_the_suites_replay_their_golden_games(track: str) -> None:
    """An engine change that changes a suite's games (dealing, scoring, an opponent's play) fails here."""
    rules = Rules.from_options(dict(TRACKS[track].rules))
    (records,) = play_sets(rules, [(("expert", "greedy"), duplicate_orders(rules, 2))], load_suite(track).deals[:6],
                           1, False, "")
    games = [[r.set_index, r.game_index, r.winner, list(r.gains), r.hands] for r in records]
    assert hashlib.sha256(json.dumps(games).encode()).hexdigest() == GOLDEN_GAMES[track], games


def test_every_opponent_plays_its_golden_games() -> None:
    """The opponents' settings are part of the protocol: pimc's samples, pimc-sift's defaults, expert's weights."""
    assert OPPONENTS == tuple(GOLDEN_OPPONENTS)
    rules = Rules.from_options({"num_players": 2})
    for opponent, golden in GOLDEN_OPPONENTS.items():
        (records,) = play_sets(rules, [(("greedy", opponent), duplicate_orders(rules, 2))], load_suite("2p").deals[:1],
                               1, False, "")
        assert [[r.winner, list(r.gains), r.hands] for r in records] == golden, opponent


# --- ratings -------------------------------------------------------------------------------------------------

def test_the_rating_model_and_its_fits() -> None:
    assert expected_score(0.0, 0.0, 1) == pytest.approx(0.5)
    assert expected_score(0.0, 0.0, 2) == pytest.approx(1 / 3)
    assert expected_score(400.0, 0.0, 1) == pytest.approx(10 / 11)
    # 75% against a fixed 0: 400 log10(3)
    assert float(agent_rating(np.array([750.0]), np.array([1000]), [0.0], 1, prior=0.0)) == pytest.approx(400 * np.log10(3))
    # the even share in 3p is the anchor's own rating
    assert float(agent_rating(np.array([300.0, 300.0]), np.array([900, 900]), [100.0, 100.0], 2, prior=0.0)) == \
        pytest.approx(100.0)
    # a joint fit of the same results agrees with the one-agent fit, and bootstrap rows fit at once
    joint = fit_ratings([("a", "b", 750.0, 1000, 1)], {"b": 0.0}, prior=0.0)
    assert joint["a"] == pytest.approx(400 * np.log10(3))
    rows = agent_rating(np.array([[750.0], [500.0]]), np.array([[1000], [1000]]), [0.0], 1, prior=0.0)
    assert rows == pytest.approx([400 * np.log10(3), 0.0])
    # unbeaten stays finite with the prior, and more wins rate higher
    unbeaten = float(agent_rating(np.array([100.0]), np.array([100]), [0.0], 1))
    assert np.isfinite(unbeaten) and unbeaten > float(agent_rating(np.array([90.0]), np.array([100]), [0.0], 1))
    with pytest.raises(BenchError, match="at least one player of fixed rating"):
        fit_ratings([("a", "b", 1.0, 2, 1)], {})


def test_the_frozen_anchors_cover_every_opponent_and_were_fitted_from_their_json() -> None:
    data = json.loads((ROOT / "benchmarks" / "results" / "bench_anchors.json").read_text())
    for track in TRACKS:
        assert set(ANCHORS[track]) == set(OPPONENTS)
        assert ANCHORS[track]["random"] == 0.0
        for name, value in data["tracks"][track]["ratings"].items():
            assert ANCHORS[track][name] == pytest.approx(value, abs=0.05)


# --- runs, cards, journals -----------------------------------------------------------------------------------

def test_a_quick_card_says_what_it_measured(small_protocol: protocol.Track, tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    card = run_bench("expert", "2p", quick=True, json_path=path, progress=False)
    assert read_card(path) == json.loads(json.dumps(card))
    assert not (tmp_path / "card.json.journal").exists()  # deleted once the card is written
    assert card["quick"] is True and card["protocol"] == 1 and card["track"] == "2p" and card["agent"] == "expert"
    assert card["suite"] == {"name": "v1-2p", "sha256": SUITE_SHA256["2p"], "deals": 2}
    assert card["policy"] is None and card["rules"] == Rules.from_options({"num_players": 2}).to_dict()
    assert [row["opponent"] for row in card["opponents"]] == ["random", "greedy"]
    assert all(row["games"] == 4 for row in card["opponents"])
    assert card["rating"]["anchors"] == {"random": 0.0, "greedy": 790.0}
    low, high = card["rating"]["ci"]
    assert low <= card["rating"]["elo"] <= high
    assert card["think_ms"]["moves"] > 0 and 0 < card["think_ms"]["median"] <= card["think_ms"]["p99"]
    assert card["run"]["parts"][0]["processes"] == 1
    text = format_card(card)
    assert "bench card: expert, track 2p" in text and "quick" in text and "rating:" in text and "p99" in text


def test_a_finished_card_is_not_played_again_and_another_file_is_not_overwritten(
        small_protocol: protocol.Track, tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    first = run_bench("greedy", "2p", quick=True, json_path=path, progress=False)
    notes: list[str] = []
    assert run_bench("greedy", "2p", quick=True, json_path=path, progress=False, log=notes.append) == first
    assert "already holds this run's card" in notes[0]
    with pytest.raises(BenchError, match="holds the card of another bench run: its agent is 'greedy'"):
        run_bench("expert", "2p", quick=True, json_path=path, progress=False)
    with pytest.raises(BenchError, match="its quick is True, this run's is False"):
        run_bench("greedy", "2p", json_path=path, progress=False)
    other = tmp_path / "notes.txt"
    other.write_text("my notes")
    with pytest.raises(BenchError, match="exists and is not a bench card of this run"):
        run_bench("greedy", "2p", quick=True, json_path=other, progress=False)
    assert other.read_text() == "my notes"


def test_a_policy_card_names_its_file_and_hash(small_protocol: protocol.Track) -> None:
    card = run_bench("ppo-2p", "2p", quick=True, progress=False)
    policy_file = ROOT / "allfives_env" / "policies" / "ppo_2p.npz"
    assert card["policy"] == {"file": "ppo_2p.npz", "sha256": hashlib.sha256(policy_file.read_bytes()).hexdigest()}


def test_the_numbers_do_not_depend_on_processes(small_protocol: protocol.Track) -> None:
    one = run_bench("greedy", "2p", progress=False)
    two = run_bench("greedy", "2p", processes=2, progress=False)
    assert _numbers(one) == _numbers(two)
    assert one["suite"]["deals"] == 3 and not one["quick"]


def test_a_stopped_run_resumes_to_the_same_card(small_protocol: protocol.Track, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    straight = run_bench("expert", "2p", progress=False)
    path = tmp_path / "card.json"
    calls = {"n": 0}
    add = journal_module.Journal.add

    def add_then_stop(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        add(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(journal_module.Journal, "add", add_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_bench("expert", "2p", json_path=path, progress=False)
    monkeypatch.setattr(journal_module.Journal, "add", add)
    journal = tmp_path / "card.json.journal"
    assert not path.exists() and len(journal.read_text().splitlines()) == 1 + 1 + 4  # header, part, 4 deals
    with journal.open("a") as fh:  # a line cut short by a crash is dropped, not refused
        fh.write('{"opponent": "greedy", "se')
    notes: list[str] = []
    resumed = run_bench("expert", "2p", json_path=path, progress=False, log=notes.append)
    assert notes and "4 of 6 deals already played" in notes[0]
    assert _numbers(resumed) == _numbers(straight)
    assert len(resumed["run"]["parts"]) == 2 and not journal.exists()


def test_a_journal_of_another_run_or_a_damaged_one_is_refused(small_protocol: protocol.Track, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "card.json"
    journal = tmp_path / "card.json.journal"
    journal.write_text(json.dumps({"format": "allfives-bench-journal", "protocol": 1, "track": "2p", "quick": False,
                                   "agent": "greedy", "policy_sha256": None,
                                   "suite_sha256": SUITE_SHA256["2p"]}) + "\n")
    with pytest.raises(BenchError, match="journal of another bench run: its agent is 'greedy', this run's is 'expert'"):
        run_bench("expert", "2p", json_path=path, progress=False)
    journal.write_text(journal.read_text() + "not json\n")
    with pytest.raises(BenchError, match=r"card\.json\.journal, line 2: not JSON"):
        run_bench("greedy", "2p", json_path=path, progress=False)
    journal.write_text("something else\n")
    with pytest.raises(BenchError, match="line 1: not JSON"):
        run_bench("greedy", "2p", json_path=path, progress=False)
    assert not path.exists()


def test_a_crashing_agent_ends_the_run_naming_the_deal_and_move(small_protocol: protocol.Track,
                                                                tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    with pytest.raises(BenchError, match=r"the bench of test-raise:at=3 stopped against random on deal 0 of suite "
                                         r"v1-2p: .*at move \d+ of the game.*resume"):
        run_bench("test-raise:at=3", "2p", json_path=path, progress=False)
    assert not path.exists()  # no card, complete or not
    with pytest.raises(BenchError, match="No card was written"):
        run_bench("test-raise:at=3", "2p", progress=False, processes=2)


def test_an_agent_over_the_move_time_limit_ends_the_run(small_protocol: protocol.Track, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "MOVE_TIME_LIMIT", 0.05)
    with pytest.raises(BenchError, match=r"stopped against random on deal 0 .*longer than the move time limit"):
        run_bench("test-sleep:at=2", "2p", json_path=tmp_path / "card.json", progress=False)
    assert not (tmp_path / "card.json").exists()


def test_bad_requests_are_refused_before_any_game(small_protocol: protocol.Track) -> None:
    with pytest.raises(BenchError, match="track='5p' is not a bench track"):
        run_bench("expert", "5p")
    with pytest.raises(BenchError, match="give an agent spec string"):
        run_bench("", "2p")
    with pytest.raises(BenchError, match="agent 'ppo-4p' cannot play track 2p"):
        run_bench("ppo-4p", "2p")
    with pytest.raises(BenchError, match="agent 'nosuch' cannot play track 2p: .*unknown agent"):
        run_bench("nosuch", "2p")


# --- reading cards, the leaderboard --------------------------------------------------------------------------

def test_read_card_refuses_what_is_not_a_complete_card(small_protocol: protocol.Track, tmp_path: Path) -> None:
    card = run_bench("greedy", "2p", progress=False)
    bad = tmp_path / "bad.json"
    for change, message in [
        ({"format": "x"}, "not a bench card"), ({"version": 9}, "card version 9 is not supported"),
        ({"track": "9p"}, "not a bench track"), ({"opponents": []}, "lists its opponents"),
        ({"rating": {"elo": "high"}}, "rating.elo is 'high', not a finite number"),
    ]:
        write_card({**card, **change}, bad)
        with pytest.raises(BenchError, match=message):
            read_card(bad)
    bad.write_text("{")
    with pytest.raises(BenchError, match="not JSON"):
        read_card(bad)
    with pytest.raises(BenchError, match="no bench card at"):
        read_card(tmp_path / "none.json")


def test_the_leaderboard_takes_full_cards_of_its_protocol_only(small_protocol: protocol.Track,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / "cards"
    folder.mkdir()
    write_card(run_bench("greedy", "2p", progress=False), folder / "greedy-2p.json")
    write_card(run_bench("expert", "2p", progress=False), folder / "expert-2p.json")
    board = load_leaderboard(folder)
    assert [c["agent"] for c in board["2p"]] == ["expert", "greedy"] and board["3p"] == []
    quick = run_bench("random", "2p", quick=True, progress=False)
    for card, message in [
        (quick, "a quick card .* cannot join the leaderboard"),
        ({**quick, "quick": False, "protocol": 2}, "a card of protocol 2 cannot join the protocol 1 leaderboard"),
        ({**quick, "quick": False, "suite": {**quick["suite"], "sha256": "0" * 64}}, "is not protocol 1's 2p suite"),
        (json.loads((folder / "greedy-2p.json").read_text()), "are both cards of greedy on track 2p"),
    ]:
        write_card(card, folder / "zz-extra.json")
        with pytest.raises(BenchError, match=message):
            load_leaderboard(folder)


def test_the_command_line_runs_and_refuses(small_protocol: protocol.Track, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main

    assert main(["bench", "greedy", "--quick", "--no-progress", "--json", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert "bench card: greedy, track 2p" in out and "bench card written to" in out
    assert read_card(tmp_path / "g.json")["quick"] is True
    assert main(["bench", "nosuch", "--quick", "--no-progress"]) == 2
    assert "agent 'nosuch' cannot play track 2p" in capsys.readouterr().err
    assert main(["bench", "greedy", "--json", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "greedy", "--track", "5p"])
    assert "invalid choice: '5p'" in capsys.readouterr().err


def test_the_bench_command_is_listed() -> None:
    result = subprocess.run([sys.executable, "-m", "allfives_env", "bench", "--help"], capture_output=True, text=True,
                            check=True)
    assert "--track {2p,3p,4p}" in result.stdout and "--quick" in result.stdout
