"""``allfives play``: a person's moves come from stdin; bad input re-prompts, the game is saved as a replay."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from allfives_env.core import Rules
from allfives_env.core.errors import RulesError
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
