"""Why an action was refused: one exception type per kind of failure.

Every refusal leaves the game unchanged and carries the offending ``action``, the ``seat``
that sent it, the ``rule`` it breaks (a sentence) and the ``legal`` actions at that moment;
the message names all of them.

::

    IllegalActionError (ValueError)
    ├── NotAnActionError          not an Action at all (a string, None, ...)
    ├── WrongPhaseError           an action of another phase (e.g. a bid during play)
    │   └── GameOverError         any action after the match ended
    ├── NotYourTurnError          sent by a seat that is not to act
    ├── CardNotHeldError          gives or plays a card the player does not hold
    ├── BidError                  off the step, below the minimum, over the cap
    │   └── AlreadyPassedError    a seat that passed speaks again (also a NotYourTurnError)
    ├── GiveError                 to himself, to a non-opponent, twice to one opponent
    ├── ContractError             off the step, below the bid, over the cap
    ├── ConcedeError              conceding where the ruleset or the situation forbids it
    ├── ThrowInError              throwing in other than after an all-pass
    └── PlayError                 not following suit, not trumping, not beating (must_beat)
        └── MarriageError         declaring without the partner, not on a lead, before a won trick

>>> from engine.actions import Pass
>>> e = BidError(Pass(), 1, "bids are multiples of 5", (Pass(),))
>>> str(e)
"illegal action 'pass' by seat 1: bids are multiples of 5; legal: pass"
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.actions import Action

__all__ = [
    "AlreadyPassedError",
    "BidError",
    "CardNotHeldError",
    "ConcedeError",
    "ContractError",
    "GameOverError",
    "GiveError",
    "IllegalActionError",
    "MarriageError",
    "NotAnActionError",
    "NotYourTurnError",
    "PlayError",
    "ThrowInError",
    "WrongPhaseError",
]


def _text(action: object) -> str:
    if isinstance(action, str):
        return repr(action)
    return str(action)


class IllegalActionError(ValueError):
    """An action refused by the rules; the game state is unchanged."""

    def __init__(
        self, action: object, seat: int | None, rule: str, legal: Sequence[Action]
    ) -> None:
        self.action = action
        self.seat = seat
        self.rule = rule
        self.legal: tuple[Action, ...] = tuple(legal)
        legal_text = ", ".join(str(a) for a in self.legal) or "none (the match is over)"
        who = "" if seat is None else f" by seat {seat}"
        super().__init__(f"illegal action {_text(action)!r}{who}: {rule}; legal: {legal_text}")

    def __reduce__(self) -> tuple[object, ...]:
        # Keep the fields when the error crosses a process boundary (pickling).
        return (type(self), (self.action, self.seat, self.rule, self.legal))


class NotAnActionError(IllegalActionError):
    """The object is not an action (a string, None, a Play without a Card, ...)."""


class WrongPhaseError(IllegalActionError):
    """The action belongs to another phase of the deal."""


class GameOverError(WrongPhaseError):
    """The match is over: no action is legal."""


class NotYourTurnError(IllegalActionError):
    """The seat that sent the action is not the seat to act."""


class CardNotHeldError(IllegalActionError):
    """The card is not in the player's hand."""


class BidError(IllegalActionError):
    """A bid off the step, below the minimum raise or above the player's cap."""


class AlreadyPassedError(BidError, NotYourTurnError):
    """A player who passed tried to speak again: a pass is final."""


class GiveError(IllegalActionError):
    """A card given to himself, to a seat out of the deal, or twice to one opponent."""


class ContractError(IllegalActionError):
    """A contract off the step, below the winning bid or above the cap."""


class ConcedeError(IllegalActionError):
    """Conceding where it is not allowed (``concede = "off"``, or after an all-pass)."""


class ThrowInError(IllegalActionError):
    """Throwing in is only for the last hand who took the talon after an all-pass."""


class PlayError(IllegalActionError):
    """A card the trick rules do not allow (follow suit, then trump, then must_beat)."""


class MarriageError(PlayError):
    """A declaration the rules refuse: no partner, not a lead, no trick won yet, ..."""
