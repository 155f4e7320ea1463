"""The leaderboard of a stored tournament: statistics and every output format."""

from arena.leaderboard.html import to_html
from arena.leaderboard.render import (
    FORMATS,
    render,
    to_csv,
    to_json,
    to_markdown,
    to_rich_table,
    to_screen,
    write_outputs,
)
from arena.leaderboard.stats import BotStats, HeadToHead, Leaderboard, build_leaderboard

__all__ = [
    "FORMATS",
    "BotStats",
    "HeadToHead",
    "Leaderboard",
    "build_leaderboard",
    "render",
    "to_csv",
    "to_html",
    "to_json",
    "to_markdown",
    "to_rich_table",
    "to_screen",
    "write_outputs",
]
