"""The actions a player can take, as frozen values with one text notation.

Notation (what records, logs and error messages use; :func:`parse_action` reads it back)::

    bid 105 | pass | give K♥ to 2 | contract 120 | concede | throw-in | play K♥ | play K♥ declare

``declare`` on a play asks to declare the marriage (K or Q led while holding its partner)
or, with an ace, the ace marriage.

>>> parse_action("give kh to 2"), str(Play(Card.HQ, declare=True))
(Give(card=<Card.HK: 21>, to=2), 'play Q♥ declare')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import CARD_TEXT, Card, CardParseError, parse_card

__all__ = [
    "Action",
    "ActionParseError",
    "Bid",
    "Concede",
    "Contract",
    "Give",
    "Pass",
    "Play",
    "ThrowIn",
    "action_sort_key",
    "fallback_action",
    "parse_action",
]


class ActionParseError(ValueError):
    """A text that is not an action in the notation above."""


@dataclass(frozen=True, slots=True)
class Bid:
    """Bid (raise to) ``amount`` in the auction."""

    amount: int

    def __str__(self) -> str:
        return f"bid {self.amount}"


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass in the auction; a pass is final."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Give:
    """The declarer gives ``card`` face down to the opponent in seat ``to``."""

    card: Card
    to: int

    def __str__(self) -> str:
        return f"give {self.card} to {self.to}"


@dataclass(frozen=True, slots=True)
class Contract:
    """The declarer names the contract ``amount``."""

    amount: int

    def __str__(self) -> str:
        return f"contract {self.amount}"


@dataclass(frozen=True, slots=True)
class Concede:
    """The declarer concedes ("роспись") at the winning bid instead of naming a contract."""

    def __str__(self) -> str:
        return "concede"


@dataclass(frozen=True, slots=True)
class ThrowIn:
    """1001: the last hand, given the talon after an all-pass, throws his cards in."""

    def __str__(self) -> str:
        return "throw-in"


@dataclass(frozen=True, slots=True)
class Play:
    """Play ``card`` to the trick; ``declare`` declares a marriage with this lead."""

    card: Card
    declare: bool = False

    def __str__(self) -> str:
        if type(self.card) is Card:  # (the engine's plays, a record's thousands: a table's)
            return (_DECLARE_TEXT if self.declare else _PLAY_TEXT)[self.card]
        # What the validated door is handed may be no card (``Play("10♣")``, ``Play(-1)``):
        # its refusal quotes it as given, not a TypeError, nor the card an index picks
        return f"play {self.card}" + (" declare" if self.declare else "")


#: Each play's text by its card's value (most of a record's actions are plays).
_PLAY_TEXT: tuple[str, ...] = tuple(f"play {t}" for t in CARD_TEXT)
_DECLARE_TEXT: tuple[str, ...] = tuple(f"play {t} declare" for t in CARD_TEXT)


Action = Bid | Pass | Give | Contract | Concede | ThrowIn | Play

_KIND_ORDER = {Bid: 0, Pass: 1, Give: 2, Contract: 3, Concede: 4, ThrowIn: 5, Play: 6}


def action_sort_key(action: Action) -> tuple[int, int, int]:
    """The order legal actions are listed in: by kind, then amount or card, then seat/declare."""
    kind = _KIND_ORDER[type(action)]
    if isinstance(action, Bid | Contract):
        return (kind, action.amount, 0)
    if isinstance(action, Give):
        return (kind, int(action.card), action.to)
    if isinstance(action, Play):
        return (kind, int(action.card), int(action.declare))
    return (kind, 0, 0)


def fallback_action(legal: Sequence[Action]) -> Action:
    """What is played for a seat that gave no usable answer (it raised, timed out, answered
    illegally) or forfeited: the referee and the SDK's local matches alike.

    A pass where passing is legal (so a silent seat never bids itself into a contract it
    will fail), else the first legal action: deterministic, so replays agree.
    """
    for action in legal:
        if isinstance(action, Pass):
            return action
    return legal[0]


def _whole(word: str, what: str) -> int:
    """``word`` as a whole number; else a ``ValueError`` that says what was expected (not
    int()'s "invalid literal for int() with base 10")."""
    # One sign at most ("+-5" passed a lstrip("+-") and reached int()); 18 digits at most
    # (5000 reached int()'s digit limit, and its words quoted all of them).
    if not re.fullmatch(r"[+-]?[0-9]+", word):
        shown = word if len(word) <= 40 else word[:40] + "..."
        raise ValueError(f"{what} is a whole number, got {shown!r}")
    if len(word.lstrip("+-")) > 18:
        raise ValueError(f"{what} is too large: {len(word.lstrip('+-'))} digits")
    return int(word)


def _card_in_two_words(verb: str, args: list[str]) -> str:
    """The action meant by ``play`` or ``give`` with its card's rank and suit apart
    (``play T h``: ``play 10♥``), in the notation, when that is an action; else ""."""
    if verb not in ("play", "give") or len(args) < 2:
        return ""
    try:
        meant = " ".join((verb, str(parse_card(args[0] + args[1])), *args[2:]))
        parse_action(meant)
    except (CardParseError, ActionParseError):
        return ""
    return meant


def parse_action(text: str) -> Action:
    """Read an action from its notation (case-insensitive; cards as in ``parse_card``)."""
    words = text.strip().split()
    if not words:
        raise ActionParseError("empty action")
    verb, args = words[0].lower(), words[1:]
    # The text quoted short: a line pasted by mistake is no clear message.
    quoted = repr(text) if len(text) <= 100 else repr(text[:100]) + "..."
    try:
        if verb == "bid" and len(args) == 1:
            return Bid(_whole(args[0], "an amount"))
        if verb == "contract" and len(args) == 1:
            return Contract(_whole(args[0], "an amount"))
        if verb == "pass" and not args:
            return Pass()
        if verb == "concede" and not args:
            return Concede()
        if (verb in ("throw-in", "throwin") and not args) or (
            verb == "throw" and [a.lower() for a in args] == ["in"]
        ):
            return ThrowIn()
        if verb == "give" and len(args) == 3 and args[1].lower() == "to":
            return Give(parse_card(args[0]), _whole(args[2], "a seat number"))
        if verb == "play" and len(args) == 1:
            return Play(parse_card(args[0]))
        if verb == "play" and len(args) == 2 and args[1].lower() == "declare":
            return Play(parse_card(args[0]), declare=True)
    except (ValueError, CardParseError) as e:
        raise ActionParseError(f"not an action: {quoted} ({e})") from e
    # A card written in two words ("play T h", "give 10 d to 2"): said as such, since the
    # forms below alone did not show what was wrong with a rank and suit both right.
    joined = _card_in_two_words(verb, args)
    if joined:
        raise ActionParseError(f"not an action: {quoted} (a card is one word: {joined!r})")
    raise ActionParseError(
        f"not an action: {quoted} (expected e.g. 'bid 105', 'pass', 'give K♥ to 2', "
        "'contract 120', 'concede', 'throw-in', 'play K♥', 'play K♥ declare')"
    )
