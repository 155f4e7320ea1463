"""The one class a bot author subclasses.

Implement :meth:`Bot.act`, or leave it and implement the per-phase methods it dispatches
to. Every method receives the player's :class:`~engine.PlayerView` (what this seat may
see, with ``view.legal_actions``) and returns one of those actions.

>>> import random
>>> class RandomBot(Bot):
...     def act(self, view):
...         return random.choice(view.legal_actions)
"""

from __future__ import annotations

from typing import Any

from engine import Action, Phase, PlayerView

__all__ = ["Bot"]


class Bot:
    """Base class of every bot. Subclasses override :meth:`act` or the phase methods."""

    #: The name shown in logs and leaderboards; defaults to the class name.
    name: str = ""

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    def act(self, view: PlayerView) -> Action:
        """Choose one of ``view.legal_actions``. By default dispatches on ``view.phase``."""
        if view.phase is Phase.BIDDING:
            return self.bid(view)
        if view.phase is Phase.PASSING:
            return self.give(view)
        if view.phase is Phase.CONTRACT:
            return self.contract(view)
        return self.play(view)

    def bid(self, view: PlayerView) -> Action:
        """Auction: a ``Bid`` or ``Pass``. Default: pass if allowed."""
        return _first_of(view, "Pass")

    def give(self, view: PlayerView) -> Action:
        """After taking the talon: a ``Give`` (asked once per opponent)."""
        return view.legal_actions[0]

    def contract(self, view: PlayerView) -> Action:
        """Name the ``Contract`` (or ``Concede`` / ``ThrowIn`` where allowed). Default: the bid."""
        return _first_of(view, "Contract")

    def play(self, view: PlayerView) -> Action:
        """A ``Play`` of a legal card (``declare=True`` to declare a marriage with a lead)."""
        return view.legal_actions[0]

    # Hooks: override any of them; the defaults do nothing.
    def on_match_start(self, view: PlayerView) -> None:
        """A match begins; ``view`` is this seat's first view of it."""

    def on_deal_end(self, view: PlayerView, result: Any) -> None:
        """A deal was scored; ``result`` is its ``DealResult``."""

    def on_match_end(self, view: PlayerView, result: Any) -> None:
        """The match ended; ``result`` is its ``GameResult``."""


def _first_of(view: PlayerView, kind: str) -> Action:
    for a in view.legal_actions:
        if type(a).__name__ == kind:
            return a
    return view.legal_actions[0]
