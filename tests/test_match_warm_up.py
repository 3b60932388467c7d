"""A move time limit does not charge an agent's one-time start-up (a search compiling its kernels on a cold
numba cache) to a timed move: the runner plays one untimed warm-up move with every agent it builds."""

from __future__ import annotations

import time
from typing import Any

import pytest

from allfives_env.agents import Agent, register_agent
from allfives_env.core.errors import MoveTimeLimitError
from allfives_env.core.rules import Rules
from allfives_env.evaluation import evaluate
from allfives_env.match import play_game, warm_up


class SlowFirstMove(Agent):
    """Plays the first legal action; its very first move in a process takes 0.6 s, as a compile would."""

    name = "test-slow-first"
    started = False

    def act(self, view: Any) -> int:
        if not SlowFirstMove.started:
            SlowFirstMove.started = True
            time.sleep(0.6)
        return view.legal[0]


register_agent("test-slow-first", lambda seed=None: SlowFirstMove(seed), "first move slow (tests only)")


def test_without_a_warm_up_the_first_move_runs_over_the_limit() -> None:
    SlowFirstMove.started = False
    with pytest.raises(MoveTimeLimitError):
        play_game(Rules(), [SlowFirstMove(), SlowFirstMove()], seed=1, move_time_limit=0.3)


def test_the_runner_warms_each_agent_up_before_its_timed_moves() -> None:
    SlowFirstMove.started = False
    result = evaluate(["test-slow-first", "random"], games=4, seed=3, processes=1, progress=False,
                      move_time_limit=0.3)
    assert result.games == 4 and SlowFirstMove.started


def test_a_warm_up_leaves_the_agent_reset() -> None:
    agent = SlowFirstMove()
    SlowFirstMove.started = True
    warm_up(agent, Rules(num_players=3), seat=2)
    first = play_game(Rules(num_players=3), [agent, SlowFirstMove(), SlowFirstMove()], seed=5)
    again = play_game(Rules(num_players=3), [SlowFirstMove(), SlowFirstMove(), SlowFirstMove()], seed=5)
    assert first.gains == again.gains and first.decisions == again.decisions
