"""``allfives play``: a person's moves come from stdin; bad input re-prompts, the game is saved as a replay."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from allfives_env.core import Rules
from allfives_env.core.errors import RulesError, SeedError
from allfives_env.core.replay import load_replay
from allfives_env.play import play_terminal

BAD_INPUTS = ["0", "99", "foo", "6-6@Q", "", "?", "9-9@W", "6-6@N"]  # 6-6@N: never legal on the first move


def test_a_whole_hand_from_stdin_with_invalid_inputs(tmp_path: Path) -> None:
    lines = BAD_INPUTS + ["1"] * 60 + ["q"]
    out = io.StringIO()
    game = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=11, replay_path=str(tmp_path / "g.json"),
                         inp=io.StringIO("\n".join(lines) + "\n"), out=out)
    text = out.getvalue()
    assert "there is no move 0: choose 1.." in text and "there is no move 99" in text
    assert "cannot read action 'foo'" in text and "the end must be one of W, E, N, S" in text
    assert "(nothing typed)" in text and "cannot read action '9-9@W'" in text
    assert "6-6@N is not legal now; legal: " in text
    assert game.hands_completed >= 1, "sixty moves finish at least one hand"
    assert "Table at the end of the hand:" in text and "player_0 (you) plays" in text
    again = load_replay(tmp_path / "g.json")  # what was saved verifies, finished or not
    assert again.scores == game.scores and len(again.events) == len(game.events)


def test_input_ending_or_ctrl_c_saves_the_game(tmp_path: Path) -> None:
    game = play_terminal(Rules(num_players=3), ["random", "expert"], seat=1, seed=2,
                         replay_path=str(tmp_path / "eof.json"), inp=io.StringIO("1\n2\n"), out=io.StringIO())
    assert not game.over and load_replay(tmp_path / "eof.json").scores == game.scores

    class CtrlC(io.StringIO):
        def readline(self, *args: object) -> str:
            raise KeyboardInterrupt

    out = io.StringIO()
    play_terminal(Rules(num_players=2), ["greedy"], seed=4, replay_path=str(tmp_path / "int.json"), inp=CtrlC(),
                  out=out)
    assert "(interrupted)" in out.getvalue() and load_replay(tmp_path / "int.json") is not None


def test_opponent_draws_are_hidden_from_the_person() -> None:
    out = io.StringIO()
    play_terminal(Rules(num_players=2), ["random"], seed=1, replay_path=None,
                  inp=io.StringIO("1\n" * 200), out=out)
    drawn = [line for line in out.getvalue().splitlines() if "(player_1) draws" in line]
    assert drawn and all(line.endswith("draws a tile") for line in drawn)


def test_bad_settings_fail_clearly() -> None:
    with pytest.raises(RulesError, match="seat=5 is not allowed: choose 0..1"):
        play_terminal(Rules(num_players=2), ["greedy"], seat=5, replay_path=None)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        play_terminal(Rules(num_players=2), ["nobody"], replay_path=None)


def test_the_command_plays_from_stdin_and_saves(tmp_path: Path) -> None:
    path = tmp_path / "cli.json"
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "play", "--players", "2", "--opponents", "ppo-2p", "--seed", "3",
         "--rule", "target=60", "--replay", str(path)],
        input="x\n" + "1\n" * 300, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "cannot read action 'x'" in done.stdout and "Result:" in done.stdout
    assert load_replay(path).over
    bad = subprocess.run([sys.executable, "-m", "allfives_env", "play", "--opponents", "nobody"],
                         input="", capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown agent 'nobody'" in bad.stderr


# ---------------------------------------------------------------------------------------------- hardening
STRANGE_INPUTS = ["²", "³", "½", "Ⅻ", "9" * 5000, "99999999999999999999", "\x00", "\x1b[A", "1\x07", "   ", "\t",
                  "1e5", "-1", "+1", "0x1", "1_0", "x" * 100_000, "\ufffd", "6-4@E\x00", "٠"]


def _events_before_the_first_prompt() -> int:
    game = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=11, replay_path=None, inp=io.StringIO("q\n"),
                         out=io.StringIO())
    return len(game.events)


@pytest.mark.parametrize("text", STRANGE_INPUTS, ids=[repr(t)[:20] for t in STRANGE_INPUTS])
def test_every_strange_input_reprompts_with_the_reason(text: str, tmp_path: Path) -> None:
    out = io.StringIO()
    game = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=11, replay_path=str(tmp_path / "g.json"),
                         inp=io.StringIO(text + "\nq\n"), out=out)
    printed = out.getvalue()
    assert printed.count("your move> ") == 2, "one re-prompt, then q"
    reason = printed.split("your move> ")[1]
    assert reason.strip() and len(reason) < 400, reason
    assert len(game.events) == _events_before_the_first_prompt() and not game.over, "no move was made"
    assert load_replay(tmp_path / "g.json").scores == game.scores


@pytest.mark.parametrize("digits", ["٣", "３", "۳", "3"])
def test_decimal_digits_of_any_script_are_move_numbers(digits: str) -> None:
    """``int`` reads every script's decimal digits (٣, full-width ３): they are move 3, like 3."""
    runs = []
    for text in (digits, "3"):
        out = io.StringIO()
        game = play_terminal(Rules(num_players=2), ["greedy"], seed=11, replay_path=None,
                             inp=io.StringIO(text + "\nq\n"), out=out)
        runs.append([str(e) for e in game.events])
    assert runs[0] == runs[1] and len(runs[0]) > 1


def test_bytes_that_are_not_utf8_reprompt(tmp_path: Path) -> None:
    path = tmp_path / "bytes.json"
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "play", "--opponents", "greedy", "--seed", "3", "--replay", str(path)],
        input=b"\xff\xfe\x81\n\xc3\n1\nq\n", capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and b"player_0 (you) plays" in done.stdout
    assert load_replay(path) is not None


def test_opponents_are_checked_before_the_first_move(tmp_path: Path) -> None:
    from allfives_env.agents import AgentError
    from allfives_env.policy import PolicyError

    for rules, specs, error, message in [
        (Rules(num_players=4), ["ppo-2p"], PolicyError, "num_players=2"),
        (Rules(num_players=2), ["ppo-4p"], PolicyError, "num_players=4"),
        (Rules(num_players=3), ["expert", "pimc:samples=abc"], AgentError, "samples"),
        (Rules(num_players=3), ["expert", "nobody"], AgentError, "nobody"),
        (Rules(num_players=2), ["expert", "greedy"], AgentError, "2 opponents given for 1 other seat"),
        (Rules(num_players=2), [], AgentError, "at least one opponent"),
        (Rules(num_players=2), "expert", AgentError, "at least one opponent"),
    ]:
        out = io.StringIO()
        with pytest.raises(error, match=message):
            play_terminal(rules, specs, replay_path=str(tmp_path / "g.json"), inp=io.StringIO("1\n"), out=out)
        assert "your move" not in out.getvalue() and not (tmp_path / "g.json").exists()
    with pytest.raises(SeedError, match="seed=-1 is not allowed"):
        play_terminal(Rules(), ["greedy"], seed=-1, replay_path=None, inp=io.StringIO(""), out=io.StringIO())
    with pytest.raises(RulesError, match="seat=True"):
        play_terminal(Rules(), ["greedy"], seat=True, replay_path=None, inp=io.StringIO(""), out=io.StringIO())
    with pytest.raises(FileNotFoundError, match="does not exist"):
        play_terminal(Rules(), ["greedy"], replay_path=str(tmp_path / "no" / "g.json"), inp=io.StringIO(""),
                      out=io.StringIO())


def test_an_error_inside_an_opponent_still_saves_the_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_env.agents.basic import GreedyAgent

    calls = []

    def broken(self: object, view: object) -> int:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the opponent broke")
        return view.legal[0]  # type: ignore[attr-defined]

    monkeypatch.setattr(GreedyAgent, "act", broken)
    out = io.StringIO()
    with pytest.raises(RuntimeError, match="the opponent broke"):
        play_terminal(Rules(num_players=2), ["greedy"], seed=5, replay_path=str(tmp_path / "boom.json"),
                      inp=io.StringIO("1\n" * 50), out=out)
    saved = load_replay(tmp_path / "boom.json")
    assert len(saved.events) > 3 and "Game saved to" in out.getvalue()


def test_a_save_that_fails_goes_to_the_temp_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import allfives_env.play as play_module

    real = play_module.save_replay
    target = str(tmp_path / "g.json")

    def flaky(game: object, path: object, **kw: object) -> Path:
        if str(path) == target:
            raise PermissionError(13, "Permission denied", target)
        return real(game, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(play_module, "save_replay", flaky)
    out = io.StringIO()
    game = play_terminal(Rules(num_players=2), ["greedy"], seed=5, replay_path=target, inp=io.StringIO("1\nq\n"),
                         out=out)
    text = out.getvalue()
    assert "Could not save the game to" in text and "Permission denied" in text
    saved = Path(text.split("Game saved to ")[1].split(" (verify")[0])
    try:
        assert load_replay(saved).scores == game.scores and len(load_replay(saved).events) == len(game.events)
    finally:
        saved.unlink()


def test_ctrl_c_inside_an_opponent_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_env.agents.basic import GreedyAgent

    def interrupted(self: object, view: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(GreedyAgent, "act", interrupted)
    out = io.StringIO()
    play_terminal(Rules(num_players=2), ["greedy"], seed=5, replay_path=str(tmp_path / "c.json"),
                  inp=io.StringIO("1\n" * 5), out=out)
    assert "(interrupted)" in out.getvalue() and load_replay(tmp_path / "c.json") is not None


def test_the_command_refuses_a_policy_for_other_rules_before_the_first_move(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "play", "--opponents", "ppo-2p", "--players", "4", "--replay",
         str(tmp_path / "p.json")], input="1\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "num_players=2" in done.stderr and "your move" not in done.stdout
    assert not (tmp_path / "p.json").exists()


# ---------------------------------------------------------------------------------------------- what a person sees
def _seed_where_the_person_leads() -> int:
    """A seed whose first prompt is a lead: the table is empty when the person is asked."""
    from allfives_env.core.game import Game

    for seed in range(200):
        game = Game(Rules(num_players=2), seed)
        if game.current == 0 and game.board.size == 0:
            return seed
    raise AssertionError("no seed in 0..199 lets seat 0 lead")


def test_a_lead_is_shown_and_read_as_a_lead() -> None:
    """On an empty table a move has no end: it is listed as ``3-0 lead``, not ``3-0@W``, and that name (or
    its number) plays it; after ``?`` the numbered moves are listed again."""
    seed = _seed_where_the_person_leads()
    out = io.StringIO()
    game = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=seed, replay_path=None,
                         inp=io.StringIO("?\nq\n"), out=out)
    text = out.getvalue()
    first = next(line for line in text.splitlines() if line.startswith("Your moves: "))
    assert " lead" in first and "@" not in first, first
    legal = next(line for line in text.splitlines() if line.startswith("Legal: "))
    assert " lead" in legal and "@" not in legal, "the table's line of legal moves names a lead alike"
    assert text.count("Your moves: ") == 2, "? lists the numbered moves again"
    name = first.split("1) ")[1].split("  ")[0]
    out = io.StringIO()
    typed = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=seed, replay_path=None,
                          inp=io.StringIO(f"{name}\nq\n"), out=out)
    numbered = play_terminal(Rules(num_players=2), ["greedy"], seat=0, seed=seed, replay_path=None,
                             inp=io.StringIO("1\nq\n"), out=io.StringIO())
    assert [str(e) for e in typed.events] == [str(e) for e in numbered.events] != [str(e) for e in game.events]


def test_the_command_saves_under_the_games_folder_by_default(tmp_path: Path) -> None:
    """Without ``--save`` a game goes to a new file under ``games/`` (ignored by git), not beside the sources."""
    for _ in range(2):  # two games with the same seed get two files
        done = subprocess.run([sys.executable, "-m", "allfives_env", "play", "--opponents", "greedy", "--seed", "3"],
                              input="1\nq\n", capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    saved = sorted((tmp_path / "games").glob("allfives_*_seed3*.json"))
    assert len(saved) == 2 and [p.name for p in tmp_path.iterdir()] == ["games"]
    assert all(load_replay(p) is not None for p in saved)
    assert f"Game saved to games/{saved[0].name}" in done.stdout or f"games/{saved[1].name}" in done.stdout
    path = tmp_path / "mine.json"
    done = subprocess.run([sys.executable, "-m", "allfives_env", "play", "--opponents", "greedy", "--seed", "3",
                           "--save", str(path)], input="q\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and load_replay(path) is not None
    from allfives_env.play import games_folder_path

    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(NotADirectoryError, match="is a file"):
        games_folder_path(3, tmp_path / "taken")
