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
time, in game order: ``on_match_start``, then ``act`` (or the phase methods),
``on_action``, ``on_talon_taken`` and ``on_deal_end`` as the match goes, then
``on_match_end``.

What happens when a bot misbehaves (the same locally and against an arena):

- ``act`` **raises**: the runner logs the traceback and plays the referee's fallback
  instead (a pass where legal, else the first legal action), so that one bug does not
  forfeit the match.
- ``act`` returns an ``Action`` that is **not legal**: it is sent as is and the referee
  judges it (it records an ``illegal`` incident, counts a strike and plays a fallback).
  :func:`sdk.play_local` does the same as the referee, or raises with ``strict=True``.
- ``act`` returns something that is **not an Action** at all (``None``, a string): logged
  as an error, and the fallback is played.
- a method the runners call is ``async def``: the bot is refused where it is loaded or
  given (its coroutines would never run), or, set in ``__init__`` or made by a factory,
  where it is made; run what it awaits with ``asyncio.run``. (A ``play`` that is not
  called, the helper of an ``act`` of the bot's own, set in ``__init__`` too, may be.)
- a hook (``on_match_start``, ``on_action``, ``on_talon_taken``, ``on_deal_end``,
  ``on_match_end``) **raises**: logged with the traceback and counted (an ``error``
  incident locally, the run's ``errors`` in an arena); the match goes on. Hooks get views
  without legal actions.

What the runner tells the bot besides the views: ``self.match_id`` (set before
``on_match_start``: the arena's match id, which ``arena replay`` takes, or
``"local-<seed>"``; ``"local-<seed>-<rotation>"`` in ``arena-bot try``) and
``self.deadline`` (set before every decision: a :class:`Deadline` in an arena; ``None``
in local play unless it is timed: ``play_local(..., decision_ms=...)``, ``arena-bot try
--decision-ms``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine import (
    Action,
    Bid,
    Card,
    Concede,
    Contract,
    DealResult,
    GameResult,
    HiddenGive,
    Pass,
    Phase,
    PlayerView,
)

__all__ = ["Bot", "Deadline"]


@dataclass(frozen=True, slots=True)
class Deadline:
    """How long the arena waits for the decision being asked (``Bot.deadline``).

    The referee plays its fallback (and counts a strike) when ``limit_s + bank_s`` have
    passed since it sent the request; time used over ``limit_s`` comes off the match's
    time bank. Counted here from when the request reached the bot's process, so the
    network's delay comes off it: keep a margin. (In a local match timed with
    ``decision_ms``: from when the bot is asked, with the bank charged as the referee does.)

    >>> d = Deadline(limit_s=1.0, bank_s=10.0, received=time.monotonic())
    >>> 10.9 < d.left() <= 11.0 and 0.9 < d.left(bank=False) <= 1.0
    True
    """

    #: Seconds for this decision before the time bank is used.
    limit_s: float
    #: Seconds left in this seat's time bank for the match.
    bank_s: float
    #: ``time.monotonic()`` when the request arrived.
    received: float

    def left(self, *, bank: bool = True) -> float:
        """Seconds until the referee stops waiting (never negative); ``bank=False``: until
        the decision starts using the time bank."""
        end = self.received + self.limit_s + (self.bank_s if bank else 0.0)
        return max(0.0, end - time.monotonic())


class Bot:
    """Base class of every bot. Subclasses override :meth:`act` or the phase methods
    (:meth:`bid`, :meth:`give`, :meth:`contract`, :meth:`play`), each given a
    :class:`~engine.PlayerView` and returning one of its ``legal_actions``; the ``on_...``
    hooks are told what happens. ``sdk.hand`` has the helpers (``legal_plays``, ``takes``,
    ``by_suit``, ...).

    Class attributes a bot may set: ``name`` (its name in logs, ``arena-bot try``'s table
    and local records; the class name by default) and ``quick`` (``True``: every decision
    takes well under a millisecond, so ``arena-bot run`` calls it on its event loop).
    Set by the runner: ``match_id`` (the match being played, before ``on_match_start``)
    and ``deadline`` (this decision's :class:`Deadline`, ``None`` in untimed local play
    and in the hooks). A new instance is made for every match.
    """

    #: The bot's own name, in log lines, ``arena-bot try``'s table, ``play_local``'s
    #: records and the Hello it sends an arena (which only labels the arena's log);
    #: defaults to the class name. Leaderboards and an arena's records show the name the
    #: tournament config or the tokens file gives the bot instead (see writing-a-bot.md).
    name: str = ""
    #: ``True`` for a bot whose every decision takes well under a millisecond: the arena
    #: runner then calls it directly on its event loop instead of in a worker thread,
    #: saving the thread hop (a tenth of a millisecond per decision). While it runs, every
    #: match of the bot waits, so a quick bot that turns out slow (two calls over 5 ms
    #: within 100: one alone may be a busy machine's pause) is sent to the worker thread
    #: for the rest of the run, with a warning.
    quick: bool = False
    #: The match being played: the arena's match id (what ``arena replay`` and the logs
    #: name) or ``"local-<seed>"`` (``"local-<seed>-<rotation>"`` in ``arena-bot try``); set
    #: by the runner before ``on_match_start``.
    match_id: str = ""
    #: The current decision's :class:`Deadline`, set by the runner before every decision;
    #: ``None`` in local play (``play_local``, ``arena-bot try``), which waits for ever
    #: unless given ``decision_ms`` (``--decision-ms``), and for a request that states no
    #: time (0 and 0; the referee always states it).
    deadline: Deadline | None = None

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
        """After taking the talon: a ``Give`` (asked once per opponent). Default: the first
        legal give."""
        return view.legal_actions[0]

    def contract(self, view: PlayerView) -> Action:
        """Name the ``Contract`` (or ``Concede`` / ``ThrowIn`` where allowed). Default: the bid."""
        return _first_of(view, Contract)

    def play(self, view: PlayerView) -> Action:
        """A ``Play`` of a legal card (``declare=True`` to declare a marriage with a lead).
        Default: the first legal play."""
        return view.legal_actions[0]

    # Hooks: override any of them; the defaults do nothing.
    def on_match_start(self, view: PlayerView) -> None:
        """A match begins; ``view`` is this seat's first view of it."""

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        """Seat ``seat`` acted (this seat's own actions too, forced ones included), as this
        seat may see it: another seat's give to a third is a ``HiddenGive`` (no card).

        ``view``: the last view the seat was given, as ``on_deal_end`` gets it. Only a seat
        asked again in the deal sees the action in its next view: the others (the
        4-player dealer, who sits the deal out; every seat after its last decision, as
        the last trick's cards) learn of it here. In an arena, the actions of a time the
        bot was not connected are not told (events are not sent again): the next view
        holds them.
        """

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        """The auction ended: ``declarer`` took the talon, whose three cards are ``talon``
        when this seat may see them (the ruleset's ``talon_visible``, or it is the
        declarer), else ``None``.

        ``view``: the last view the seat was given, as ``on_deal_end`` gets it: of the
        last deal still for a seat not yet asked in this one (the committed first hand
        whom both others passed takes the talon unasked). A seat
        asked again in the deal finds the talon in its next view too (``view.talon``); the
        4-player dealer, or a defender after a concession, learns it only here.
        """

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
