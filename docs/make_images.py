"""Make the README's pictures: an ``rgb_array`` frame and a screenshot of the HTML replay viewer.

    python docs/make_images.py            # writes docs/images/rgb_frame.png and docs/images/viewer.png

Both come from one seeded game between the shipped policy ``ppo-2p`` and ``expert`` (the kind of game
``allfives evaluate ppo-2p expert --save-games DIR`` saves). The screenshot needs Debian's chromium.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allfives_env.agents import make_agent  # noqa: E402
from allfives_env.core import Game, Rules  # noqa: E402
from allfives_env.core.replay import save_replay  # noqa: E402
from allfives_env.match import play_game  # noqa: E402
from allfives_env.render_image import render_rgb, write_png  # noqa: E402
from allfives_env.viewer import screenshot, write_replay_html  # noqa: E402

SEED = 11
NAMES = ["ppo-2p", "expert"]


def main() -> int:
    out = ROOT / "docs" / "images"
    out.mkdir(parents=True, exist_ok=True)
    rules = Rules(num_players=2)
    game = Game(rules, SEED)
    play_game(rules, [make_agent(n, seed=1) for n in NAMES], seed=SEED, game=game)
    # the frame: the same deals replayed to a busy mid-hand position, seen by ppo-2p's seat
    probe = Game(rules, SEED)
    for event in game.events:
        if probe.over or (probe.board.size >= 12 and probe.current == 0):
            break
        if type(event).__name__ == "Play" and not probe.over:
            probe.step(event.tile * 4 + event.slot)
    print(write_png(render_rgb(probe, 0, NAMES), out / "rgb_frame.png"))
    with tempfile.TemporaryDirectory() as tmp:
        replay = save_replay(game, Path(tmp) / "game.json", seed=SEED)
        page = write_replay_html(replay, Path(tmp) / "game.html", title="All Fives replay: ppo-2p vs expert")
        print(screenshot(page, out / "viewer.png", step=45, size=(1280, 800)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
