"""The one class a bot author subclasses.

Implement :meth:`Bot.act`, or leave it and implement the per-phase methods it dispatches
to. Every method receives the player's :class:`~engine.PlayerView` (what this seat may
see, with ``view.legal_actions``) and returns one of those actions.

>>> import random
>>> class RandomBot(Bot):
...     def act(self, view):
...         return random.choice(view.legal_actions)

The runners (:func:`sdk.run`, :func:`sdk.play_local`, ``arena-bot``) create a **new
instance for every match** (they take the class, or any factory returning a bot), so
per-match state can simply live in ``self``. Within one match the calls come one at a
time, in game order: ``on_match_start``, then ``act`` (or the phase methods) and
``on_deal_end`` as the match goes, then ``on_match_end``.

What happens when a bot misbehaves (the same locally and against an arena):

- ``act`` **raises**: the runner logs the traceback and plays the referee's fallback
  instead (a pass where legal, else the first legal action), so that one bug does not
  forfeit the match.
- ``act`` returns an ``Action`` that is **not legal**: it is sent as is and the referee
  judges it (it records an ``illegal`` incident, counts a strike and plays a fallback).
  :func:`sdk.play_local` does the same as the referee, or raises with ``strict=True``.
- ``act`` returns something that is **not an Action** at all (``None``, a string): logged
  as an error, and the fallback is played.
- a hook (``on_match_start``, ``on_deal_end``, ``on_match_end``) **raises**: logged with
  the traceback and counted (an ``error`` incident locally, the run's ``errors`` in an
  arena); the match goes on. Hooks get views without legal actions.
"""

from __future__ import annotations

from engine import Action, Bid, Concede, Contract, DealResult, GameResult, Pass, Phase, PlayerView

__all__ = ["Bot"]


class Bot:
    """Base class of every bot. Subclasses override :meth:`act` or the phase methods."""

    #: The name shown in logs and leaderboards; defaults to the class name.
    name: str = ""
    #: ``True`` for a bot whose every decision takes well under a millisecond: the arena
    #: runner then calls it directly on its event loop instead of in a worker thread,
    #: saving the thread hop (a tenth of a millisecond per decision). While it runs, every
    #: match of the bot waits, so a quick bot that turns out slow (a call over 5 ms) is
    #: sent to the worker thread for the rest of the run, with a warning.
    quick: bool = False

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
        return _first_of(view, Pass)

    def give(self, view: PlayerView) -> Action:
        """After taking the talon: a ``Give`` (asked once per opponent)."""
        return view.legal_actions[0]

    def contract(self, view: PlayerView) -> Action:
        """Name the ``Contract`` (or ``Concede`` / ``ThrowIn`` where allowed). Default: the bid."""
        return _first_of(view, Contract)

    def play(self, view: PlayerView) -> Action:
        """A ``Play`` of a legal card (``declare=True`` to declare a marriage with a lead)."""
        return view.legal_actions[0]

    # Hooks: override any of them; the defaults do nothing.
    def on_match_start(self, view: PlayerView) -> None:
        """A match begins; ``view`` is this seat's first view of it."""

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        """A deal was scored; ``result`` is its ``DealResult``.

        ``view``: the last view the seat was given before the deal ended (that of its last
        decision, or the match's first view), without legal actions; the same locally and
        in an arena. What happened is in ``result``.
        """

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        """The match ended; ``result`` is its ``GameResult`` (scores, places, ...)."""


def _first_of(view: PlayerView, kind: type[Bid | Pass | Contract | Concede]) -> Action:
    for a in view.legal_actions:
        if isinstance(a, kind):
            return a
    return view.legal_actions[0]
