"""The Thousand Arena bot SDK: subclass :class:`Bot`, try it locally, run it in an arena.

>>> from sdk import Bot, Play, play_local
>>> class Lowest(Bot):
...     name = "lowest"
...     def play(self, view):
...         return min(view.legal_actions, key=lambda a: a.card.points)
>>> play_local([Lowest, Lowest, Lowest], seed=3, max_deals=1).result.deals
1

gRPC never shows through: :func:`run` connects to an arena and plays every match the bot
is seated in (``arena-bot run`` on the command line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine import (
    DECK,
    Action,
    Bid,
    Card,
    Concede,
    Contract,
    DealResult,
    GameResult,
    Give,
    HiddenGive,
    Pass,
    Phase,
    Play,
    PlayerView,
    Rank,
    Ruleset,
    Suit,
    ThrowIn,
    Trick,
    format_cards,
    parse_action,
    parse_card,
    parse_cards,
)
from sdk import hand, sampling
from sdk.bot import Bot, Deadline
from sdk.local import BotMakeError, LocalIncident, LocalMatch, play_local

if TYPE_CHECKING:
    from sdk import client as client
    from sdk.client import ArenaAuthError, ArenaError, ArenaTLSError, RunSummary, run

__all__ = [
    "DECK",
    "Action",
    "ArenaAuthError",
    "ArenaError",
    "ArenaTLSError",
    "Bid",
    "Bot",
    "BotMakeError",
    "Card",
    "Concede",
    "Contract",
    "Deadline",
    "DealResult",
    "GameResult",
    "Give",
    "HiddenGive",
    "LocalIncident",
    "LocalMatch",
    "Pass",
    "Phase",
    "Play",
    "PlayerView",
    "Rank",
    "Ruleset",
    "RunSummary",
    "Suit",
    "ThrowIn",
    "Trick",
    "format_cards",
    "hand",
    "parse_action",
    "parse_card",
    "parse_cards",
    "play_local",
    "run",
    "sampling",
]

__version__ = "0.1.0"


#: What comes from the remote runner, which pulls in gRPC: imported only when asked for.
_LAZY = ("run", "RunSummary", "ArenaError", "ArenaAuthError", "ArenaTLSError")


# Defined for the interpreter only: to a type checker a module ``__getattr__`` makes every
# name of the module exist, as ``Any`` (``from sdk import Plya`` passed ``mypy --strict``).
# The checker reads the lazy names from the ``TYPE_CHECKING`` imports above instead.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            from sdk import client

            return getattr(client, name)
        if name == "client":
            # The guide's `await sdk.client.run_async(...)` and `sdk.client.bot_calls_running()`
            # after a plain `import sdk`: the submodule, imported on first use like `run`.
            import importlib

            return importlib.import_module("sdk.client")
        raise AttributeError(f"module 'sdk' has no attribute {name!r}")


def __dir__() -> list[str]:
    # ``run``, the errors and ``client`` are made on first use (above): listed all the same,
    # so that ``help(sdk)`` and editors show them with the rest of the API.
    return sorted(set(globals()) | set(_LAZY) | {"client"})
