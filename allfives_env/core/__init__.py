"""The pure All Fives game: tiles, rules, board, game, replays. No gymnasium, pettingzoo or torch here."""

from .actions import action_name, decode_action, encode_action, num_actions, parse_action
from .board import Board
from .errors import (
    AllFivesError, DealError, GameOverError, IllegalActionError, NotResetError, ReplayError, RulesError, SeedError,
)
from .events import Draw, Event, GameOver, HandStart, Pass, Play, Settlement, public_events, public_view
from .deal import Deal
from .game import Game
from .rules import Rules
from .tiles import TileSet, tile_set

__all__ = [
    "AllFivesError", "Board", "Deal", "DealError", "Draw", "Event", "Game", "GameOver", "GameOverError",
    "HandStart", "IllegalActionError", "NotResetError", "Pass", "Play", "ReplayError", "Rules", "RulesError", "SeedError", "Settlement",
    "TileSet", "action_name", "decode_action", "encode_action", "num_actions", "parse_action", "public_events", "public_view",
    "tile_set",
]
