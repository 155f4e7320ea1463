"""Round-robin tournaments: config, schedule, runner (see docs/tournament.md)."""

from arena.tournament.config import BotSpec, ConfigError, Deadlines, TournamentConfig, load_config
from arena.tournament.runner import (
    RunOptions,
    TournamentError,
    TournamentOutcome,
    finalize,
    orphans_stopped,
    run,
    run_tournament,
)
from arena.tournament.schedule import ScheduledMatch, build_schedule, match_id

__all__ = [
    "BotSpec",
    "ConfigError",
    "Deadlines",
    "RunOptions",
    "ScheduledMatch",
    "TournamentConfig",
    "TournamentError",
    "TournamentOutcome",
    "build_schedule",
    "finalize",
    "load_config",
    "match_id",
    "orphans_stopped",
    "run",
    "run_tournament",
]
