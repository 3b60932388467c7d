"""Careless and hostile command lines get a clean message, never a traceback.

Every bad argument list below must make ``allfives`` exit non-zero with ``allfives: error: ...`` (or
argparse's ``usage: ... error: ...``) on stderr naming what was wrong, and no Python traceback. The table
is the specification: add a row for every new way a user can get it wrong.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from allfives_env.cli import main

SEED_MAX = str(2**63 - 1)


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with the wrong kinds of files in it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00\x81 not utf-8")
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "plain.txt").write_text("hello")
    (tmp_path / "result_list.json").write_text(json.dumps(
        {"format": "allfives-evaluation", "version": 1, "kind": "match", "result": []}))
    (tmp_path / "result_str.json").write_text(json.dumps(
        {"format": "allfives-evaluation", "version": 1, "kind": "tournament", "result": "x"}))
    (tmp_path / "result_rules.json").write_text(json.dumps(
        {"format": "allfives-evaluation", "version": 1, "kind": "match", "result": {"rules": 5}}))
    (tmp_path / "result_short.json").write_text(json.dumps(
        {"format": "allfives-evaluation", "version": 1, "kind": "tournament", "result": {
            "agents": ["a", "b"], "rules": {}, "seed": 0, "anchor": "a", "prior": 1, "bootstrap": 0, "ratings": [0],
            "rating_ci": [[0, 1]], "win_rates": [[None]], "scores": [0.5], "games": [1], "matches": []}}))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str = "") -> tuple[int, str, str]:
    """``main(argv)`` in this process: (exit status, stdout, stderr). An exception escapes (= a traceback)."""
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        try:
            code: Optional[int] = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdin = old
    captured = capsys.readouterr()
    return int(code or 0), captured.out, captured.err


BAD = [
    # --- defect 1: --players / --partnership against --rule, every command that has both
    (["demo", "--players", "2", "--rule", "num_players=4"], ["--players 2", "num_players=4"]),
    (["layout", "--players", "2", "--rule", "num_players=4"], ["--players 2", "num_players=4"]),
    (["evaluate", "greedy", "random", "--players", "3", "--rule", "num_players=2"], ["--players 3", "num_players=2"]),
    (["tournament", "greedy", "random", "--players", "4", "--rule", "num_players=3"], ["--players 4", "num_players=3"]),
    (["play", "--players", "2", "--rule", "num_players=3"], ["--players 2", "num_players=3"]),
    (["evaluate", "greedy", "random", "--players", "4", "--cut-throat", "--rule", "partnership=true"],
     ["--cut-throat", "partnership=true"]),
    (["tournament", "greedy", "random", "--players", "4", "--partnership", "--rule", "partnership=false"],
     ["--partnership", "partnership=false"]),
    (["demo", "--players", "4", "--cut-throat", "--rule", "partnership=true"], ["--cut-throat", "partnership=true"]),
    (["demo", "--players", "3", "--partnership"], ["partnership", "4 players"]),
    # --- defect 3: seeds, every command that takes --seed
    (["demo", "--seed", "-5"], ["--seed", SEED_MAX]),
    (["demo", "--seed", str(2**63)], ["--seed", SEED_MAX]),
    (["demo", "--seed", "abc"], ["--seed", "'abc'"]),
    (["demo", "--seed", "1.5"], ["--seed"]),
    (["demo", "--seed", "9" * 5000], ["--seed", SEED_MAX]),
    (["evaluate", "greedy", "random", "--seed", "-1"], ["--seed", SEED_MAX]),
    (["tournament", "greedy", "random", "--seed", "-1"], ["--seed", SEED_MAX]),
    (["play", "--seed", "-1"], ["--seed", SEED_MAX]),
    (["play", "--seed", "nan"], ["--seed"]),
    # --- defect 4: numeric options
    (["tournament", "greedy", "random", "--prior", "nan"], ["--prior", "finite"]),
    (["tournament", "greedy", "random", "--prior", "inf"], ["--prior", "finite"]),
    (["tournament", "greedy", "random", "--prior=-inf"], ["--prior", "finite"]),
    (["tournament", "greedy", "random", "--prior", "-1"], ["--prior", ">= 0"]),
    (["tournament", "greedy", "random", "--prior", "1e400"], ["--prior", "finite"]),
    (["tournament", "greedy", "random", "--prior", "x"], ["--prior", "'x'"]),
    (["evaluate", "greedy", "random", "--games", "0"], ["--games", "10000000"]),
    (["evaluate", "greedy", "random", "--games", "-5"], ["--games"]),
    (["evaluate", "greedy", "random", "--games", "nan"], ["--games"]),
    (["evaluate", "greedy", "random", "--games", "1e400"], ["--games"]),
    (["evaluate", "greedy", "random", "--games", str(10**30)], ["--games", "10000000"]),
    (["tournament", "greedy", "random", "--games", "0"], ["--games"]),
    (["evaluate", "greedy", "random", "--processes", "0"], ["--processes"]),
    (["evaluate", "greedy", "random", "--processes", "-2"], ["--processes"]),
    (["evaluate", "greedy", "random", "--processes", str(10**9)], ["--processes", "CPUs"]),
    (["tournament", "greedy", "random", "--processes", "0"], ["--processes"]),
    (["tournament", "greedy", "random", "--bootstrap", "-1"], ["--bootstrap"]),
    (["tournament", "greedy", "random", "--bootstrap", str(10**12)], ["--bootstrap", "100000"]),
    (["evaluate", "greedy", "random", "--save-games", "g", "--save-count", "0"], ["--save-count"]),
    (["evaluate", "greedy", "random", "--save-games", "g", "--save-count", "-3"], ["--save-count"]),
    (["evaluate", "greedy", "random", "--save-games", "g", "--save-count", str(10**9)], ["--save-count", "10000"]),
    (["evaluate", "greedy", "random", "--save-count", "3"], ["--save-count", "--save-games"]),
    (["evaluate", "greedy", "random", "--balanced"], ["--balanced", "3"]),
    (["play", "--seat", "-1"], ["seat=-1", "0..1"]),
    (["play", "--seat", str(10**30)], ["seat="]),
    (["demo", "--players", "9"], ["num_players=9", "2, 3 or 4"]),
    (["demo", "--players", "1e400"], ["--players"]),
    # --- defect 7: --rule
    (["demo", "--rule", "k"], ["--rule", "KEY=VALUE"]),
    (["demo", "--rule", "=3"], ["unknown rules option ''"]),
    (["demo", "--rule", "bogus=1"], ["bogus", "allowed options"]),
    (["demo", "--rule", "target=abc"], ["target='abc'", "positive integer"]),
    (["demo", "--rule", "target=NaN"], ["target=nan"]),
    (["demo", "--rule", "target=-Infinity"], ["target=-inf"]),
    (["demo", "--rule", "num_players=1e400"], ["num_players=inf"]),
    (["demo", "--rule", "num_players=" + "9" * 5000], ["--rule", "num_players"]),
    (["demo", "--rule", "num_players=[]"], ["--rule", "num_players"]),
    (["demo", "--rule", "first_leader={}"], ["--rule", "first_leader"]),
    (["demo", "--rule", "target=" + "[" * 100_000], ["--rule", "target"]),
    (["demo", "--rule", "target=100", "--rule", "target=200"], ["--rule", "target", "twice"]),
    (["layout", "--rule", "max_pip=7"], ["max_pip=7"]),
    (["evaluate", "greedy", "random", "--rule", "hand_size=0"], ["hand_size=0"]),
    (["play", "--rule", "hand_end=nobody"], ["hand_end='nobody'", "deduct_own"]),
    # --- defect 7: agent specs
    (["evaluate", "nobody", "random"], ["unknown agent 'nobody'"]),
    (["evaluate", "gredy", "random"], ["did you mean 'greedy'"]),
    (["evaluate", "pimc:samples=abc", "random"], ["samples", "integer"]),
    (["evaluate", "pimc:samples=-3", "random"], ["samples=-3", "positive integer"]),
    (["evaluate", "pimc:samples=nan", "random"], ["samples", "integer"]),
    (["evaluate", "pimc:samples=NaN", "random"], ["samples", "integer"]),
    (["evaluate", "pimc:samples=1.5", "random"], ["samples", "integer"]),
    (["evaluate", "pimc:samples=true", "random"], ["samples", "integer"]),
    (["evaluate", "pimc:samples=3,samples=4", "random"], ["samples", "twice"]),
    (["evaluate", "pimc:samples", "random"], ["samples", "key=value"]),
    (["evaluate", "pimc:epsilon=NaN", "random"], ["epsilon"]),
    (["evaluate", "pimc:win_bonus=Infinity", "random"], ["win_bonus", "finite number"]),
    (["evaluate", "pimc:prior=5", "random"], ["prior", "'5'"]),
    (["evaluate", "pimc:prior=[1]", "random"], ["prior", "'[1]'"]),
    (["evaluate", "expert:w_score=abc", "random"], ["w_score", "finite number"]),
    (["evaluate", "expert:w_score=NaN", "random"], ["w_score", "finite number"]),
    (["evaluate", "expert:w_score=[1]", "random"], ["w_score", "finite number"]),
    (["evaluate", "expert:w_score=true", "random"], ["w_score", "finite number"]),
    (["evaluate", "defensive:reply_weight=x", "random"], ["reply_weight", "finite number"]),
    (["evaluate", "greedy:seed=3", "random"], ["seed", "--seed"]),
    (["evaluate", "greedy:depth=3", "random"], ["depth", "takes no parameter"]),
    (["evaluate", "ppo", "random"], ["path=FILE.npz"]),
    (["evaluate", "ppo:path=a_dir", "random"], ["a_dir"]),
    (["evaluate", "ppo:path=binary.json", "random"], ["binary.json"]),
    (["evaluate", "ppo:path=missing.npz", "random"], ["missing.npz", "does not exist"]),
    (["evaluate", "ppo-2p:temperature=Infinity", "random"], ["temperature"]),
    (["evaluate", "ppo-2p:sample=maybe", "random"], ["sample", "true or false"]),
    (["evaluate", "ppo-2p:sample=1", "random"], ["sample", "true or false"]),
    (["evaluate", "ppo-2p", "random", "--players", "4"], ["num_players=2", "num_players=4"]),
    (["evaluate", "random", "ppo-4p", "--players", "2"], ["num_players=4", "num_players=2"]),
    (["tournament", "random", "greedy", "ppo-4p"], ["num_players=4"]),
    (["tournament", "random"], ["at least 2"]),
    (["tournament", "greedy", "greedy"], ["distinct", "greedy"]),
    (["tournament", "random:", "random"], ["distinct", "random:"]),
    (["tournament", "expert", "expert:w_score=1"], ["distinct", "expert:w_score=1"]),
    (["evaluate", "x" * 100_000, "random"], ["unknown agent 'xxx"]),
    (["play", "--opponents", "ppo-2p", "--players", "4"], ["num_players=2", "num_players=4"]),
    (["play", "--opponents", "expert", "pimc:samples=abc", "--players", "3"], ["samples"]),
    (["play", "--opponents", "expert", "greedy", "--players", "2"], ["2 opponents", "1 other seat"]),
    (["play", "--opponents", ""], ["agent"]),
    # --- defect 7: files
    (["replay", "missing.json"], ["missing.json"]),
    (["replay", "a_dir"], ["a_dir"]),
    (["replay", "binary.json"], ["binary.json"]),
    (["replay", "list.json"], ["not an All Fives replay"]),
    (["replay", "empty.json"], ["replay"]),
    (["replay", "deep.json"], ["replay"]),
    (["compare", "missing.json", "list.json"], ["missing.json"]),
    (["compare", "a_dir", "a_dir"], ["a_dir"]),
    (["compare", "binary.json", "binary.json"], ["binary.json", "not a text file"]),
    (["compare", "plain.txt", "plain.txt"], ["plain.txt", "not JSON"]),
    (["compare", "deep.json", "deep.json"], ["deep.json"]),
    (["compare", "result_list.json", "result_list.json"], ["result_list.json", "corrupt"]),
    (["compare", "result_str.json", "result_str.json"], ["result_str.json", "corrupt"]),
    (["compare", "result_rules.json", "result_rules.json"], ["result_rules.json", "corrupt"]),
    (["compare", "result_short.json", "result_short.json"], ["result_short.json", "1 ratings for 2 agents"]),
    (["demo", "--replay", "a_dir"], ["--replay", "a_dir", "directory"]),
    (["demo", "--replay", "no/such/dir/g.json"], ["--replay", "no/such/dir", "does not exist"]),
    (["evaluate", "greedy", "random", "--json", "a_dir"], ["--json", "a_dir"]),
    (["evaluate", "greedy", "random", "--json", "no/such/r.json"], ["--json", "no/such"]),
    (["tournament", "greedy", "random", "--csv", "no/such/r.csv"], ["--csv", "no/such"]),
    (["evaluate", "greedy", "random", "--save-games", "plain.txt"], ["--save-games", "plain.txt"]),
    (["play", "--save", "a_dir"], ["--save", "a_dir"]),
    (["play", "--replay", "a_dir"], ["--save", "a_dir"]),  # the older spelling of --save
    (["play", "--save", "no/such/g.json"], ["--save", "no/such"]),
    (["play", "--save", "plain.txt/g.json"], ["--save", "plain.txt is a file, not a directory"]),
    (["evaluate", "greedy", "random", "--json", "plain.txt/r.json"], ["--json", "plain.txt is a file, not a directory"]),
    # --- argparse's own
    (["demo", "--bogus"], ["unrecognized arguments"]),
    (["nosuchcommand"], ["invalid choice"]),
    ([], ["required"]),
]


@pytest.mark.parametrize("argv,fragments", BAD, ids=[" ".join(a)[:60] or "(none)" for a, _ in BAD])
def test_bad_command_lines_get_a_clean_error(argv: list[str], fragments: list[str], files: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code != 0, f"accepted: {argv}\n{out[-500:]}"
    assert "Traceback" not in err and "Traceback" not in out
    message = [line for line in err.splitlines() if "error:" in line]
    assert len(message) == 1, err
    for fragment in fragments:
        assert fragment in message[0], f"{fragment!r} not in {message[0]!r}"
    assert len(message[0]) < 2000, "the message must be one readable line"
    if argv[:1] == ["play"]:
        assert "your move" not in out, "refused only after the game had started"
    assert not Path("allfives_game.json").exists() and not Path("games").exists(), \
        "a refused command must not write a game"


# ---------------------------------------------------------------------------------------------- defect 1
def test_rule_num_players_is_honoured(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["demo", "--rule", "num_players=4", "--quiet"], capsys)
    assert code == 0 and "player_3" in out
    code, out, _ = run(["demo", "--rule", "num_players=3", "--quiet", "--seed", "2"], capsys)
    assert code == 0 and "player_2" in out and "player_3" not in out
    assert run(["layout", "--rule", "num_players=4"], capsys)[1] == run(["layout", "--players", "4"], capsys)[1]
    assert run(["layout", "--rule", "num_players=4"], capsys)[1] != run(["layout"], capsys)[1]
    # the same value twice is no conflict
    code, out, _ = run(["demo", "--players", "4", "--rule", "num_players=4", "--quiet"], capsys)
    assert code == 0 and "player_3" in out


def test_rules_for_one_helper(capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import rules_from_options
    from allfives_env.core.errors import RulesError

    assert rules_from_options([("num_players", 4)], None, None).num_players == 4
    assert rules_from_options([], 3, None).num_players == 3
    assert rules_from_options([("partnership", False)], 4, None).partnership is False
    assert rules_from_options([], None, False).num_players == 4, "--cut-throat alone means 4 players"
    assert rules_from_options([], None, True).partnership is True
    assert rules_from_options([("partnership", "auto")], 4, False).partnership is False
    with pytest.raises(RulesError, match="--players 2 contradicts --rule num_players=4"):
        rules_from_options([("num_players", 4)], 2, None)
    with pytest.raises(RulesError, match="--partnership contradicts --rule partnership=false"):
        rules_from_options([("partnership", False)], 4, True)


# ---------------------------------------------------------------------------------------------- accepted
GOOD = [
    ["demo", "--seed", "0", "--quiet"],
    ["demo", "--seed", SEED_MAX, "--quiet"],
    ["demo", "--seed", "٣", "--quiet"],  # int() reads any Unicode decimal digits: seed 3
    ["layout", "--cut-throat"],
    ["tournament", "greedy", "random", "--prior", "0.5", "--games", "2", "--bootstrap", "0", "--no-progress"],
    ["evaluate", "greedy", "random", "--games", "2", "--processes", "1", "--no-progress", "--rule", "target=60"],
]


@pytest.mark.parametrize("argv", GOOD, ids=[" ".join(a)[:60] for a in GOOD])
def test_careful_command_lines_still_work(argv: list[str], files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 0, err


def test_unicode_seed_is_the_same_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["demo", "--seed", "٣", "--quiet"], capsys)[1] == run(["demo", "--seed", "3", "--quiet"], capsys)[1]


# ---------------------------------------------------------------------------------------------- real processes
def test_real_process_messages_without_traceback(tmp_path: Path) -> None:
    """The console script's own process: stderr is one usage line at most plus the message."""
    for argv in (["demo", "--seed", "-5"], ["tournament", "greedy", "random", "--prior", "nan"],
                 ["evaluate", "pimc:samples=nan", "random"], ["compare", str(tmp_path), str(tmp_path)]):
        done = subprocess.run([sys.executable, "-m", "allfives_env", *argv], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stderr)
        assert "Traceback" not in done.stderr and "error:" in done.stderr, done.stderr


def test_ctrl_c_in_a_long_command_is_a_message(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.agents.basic import GreedyAgent

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(GreedyAgent, "act", interrupted)  # Ctrl-C in the middle of the games
    code, _, err = run(["evaluate", "greedy", "random", "--no-progress"], capsys)
    assert code == 130 and "interrupted" in err and "Traceback" not in err


def test_help_texts_are_plain_text_without_rest_markup() -> None:
    """``--help`` shows the module docstrings; their ``code`` and :class:`roles` are for the docs only."""
    import contextlib
    import io

    from allfives_env.cli import build_parser
    from allfives_env.plain_text import plain_text

    assert plain_text("``allfives demo`` and :class:`~allfives_env.core.Game` in :mod:`allfives_env.batch`") == \
        "allfives demo and Game in allfives_env.batch"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    assert "allfives demo" in out.getvalue() and "``" not in out.getvalue() and ":class:" not in out.getvalue()


def test_a_folder_given_with_a_trailing_slash_is_printed_once_slashed(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main

    assert main(["evaluate", "random", "greedy", "--games", "2", "--no-progress", "--save-games",
                 f"{tmp_path / 'games'}/", "--save-count", "1"]) == 0
    out = capsys.readouterr().out
    assert f"saved as replays in {tmp_path / 'games'}/ " in out and "//" not in out
