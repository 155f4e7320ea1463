"""What one player may see: the only place that decides it.

:func:`observe` builds a :class:`PlayerView` from the full state: the seat's own hand, the
talon only once it is taken and only if the ruleset shows it to this seat, passed cards only
to their giver and receiver, the public history, the scores, and the legal actions only for
the seat to act. The referee serializes exactly this; bots receive exactly this.

>>> from engine.game import Game
>>> g = Game.new("classic", seed=1, players=["a", "b", "c"])
>>> v = observe(g, g.to_act)
>>> len(v.hand), v.talon, v.legal_actions == g.legal_actions()
(7, None, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.actions import Action, Give
from engine.cards import Card, Suit
from engine.game import DealResult, Game, Phase, Trick
from engine.rules import Ruleset

__all__ = ["HiddenGive", "PlayerView", "observe", "public_action", "visible_talon"]


@dataclass(frozen=True, slots=True)
class HiddenGive:
    """A ``Give`` as a third seat sees it: to whom, not which card."""

    to: int

    def __str__(self) -> str:
        return f"give ?? to {self.to}"


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything seat ``seat`` may know at this moment (frozen; all fields hashable).

    - ``seat``: this seat; ``players``: every seat's name, by seat; ``ruleset``: the rules
      in force (:class:`~engine.Ruleset`, every option resolved);
    - ``deal_number``: counted from 0; ``dealer``; ``active_seats``: the seats dealt in
      (with four players the dealer sits out), ``first_hand`` the first of them;
    - ``phase``: a :class:`~engine.Phase`; ``to_act``: the seat asked now (``None`` when
      no seat is, as at the match's end);
    - ``hand``: own cards, ascending (by suit, then rank: see :class:`~engine.Card`);
      ``talon``: ``None`` unless visible to this seat;
    - ``bids``: the auction so far, ``((seat, Bid|Pass), ...)``; ``bid``: the standing bid
      during the auction (classic's obligatory 100 too), the winning bid after it;
      ``declarer``/``contract``: once known;
    - ``gives``: ``((to, card or None), ...)`` — the card only for its giver and receiver;
    - ``trump``: the current trump suit (``None`` while none is set); ``marriages``:
      ``((seat, suit or None), ...)`` in the order declared, ``None`` for the ace marriage;
      ``trick``: the trick in progress ``((seat, card), ...)`` in play order, its first
      seat the one who led (empty: ``to_act`` leads); ``tricks``: completed
      :class:`~engine.Trick` s of this deal (``leader``, ``cards``, ``winner``);
    - ``scores``: the match scores per seat; ``barrel``: deals left on the barrel per seat
      (0: not on it) or ``None`` when the ruleset has no barrel;
    - ``legal_actions``: empty unless ``to_act == seat``; ``deal_results``: previous deals'
      :class:`~engine.DealResult` s.

    ``sdk.hand`` answers the common questions from a view: ``legal_plays``, ``takes`` (the
    points taken so far), ``by_suit``, ``marriages``, ``played_cards``, ``masters``, ...
    """

    seat: int
    players: tuple[str, ...]
    ruleset: Ruleset
    deal_number: int
    dealer: int
    phase: Phase
    to_act: int | None
    hand: tuple[Card, ...]
    active_seats: tuple[int, ...]
    talon: tuple[Card, ...] | None
    bids: tuple[tuple[int, Action], ...]
    declarer: int | None
    bid: int | None
    contract: int | None
    gives: tuple[tuple[int, Card | None], ...]
    trump: Suit | None
    marriages: tuple[tuple[int, Suit | None], ...]
    trick: tuple[tuple[int, Card], ...]
    tricks: tuple[Trick, ...]
    scores: tuple[int, ...]
    barrel: tuple[int, ...] | None
    legal_actions: tuple[Action, ...]
    deal_results: tuple[DealResult, ...]

    @property
    def first_hand(self) -> int:
        """The seat left of the dealer."""
        return self.active_seats[0]


def _talon_visible(game: Game, seat: int) -> bool:
    # Nobody sees the talon during the auction; once taken, everyone (talon_visible) or
    # only the declarer.
    if game.phase is Phase.BIDDING or game.phase is Phase.GAME_OVER:
        return False
    return game.ruleset.talon_visible or seat == game.declarer


def visible_talon(game: Game, seat: int) -> tuple[Card, ...] | None:
    """The talon as ``seat`` sees it: ``observe(game, seat).talon`` (which takes it from
    here) without the rest of the view, for the referee's ``talon_taken`` events."""
    return game.talon if _talon_visible(game, seat) else None


def observe(game: Game, seat: int, *, ended: bool = False) -> PlayerView:
    """The view of ``game`` that seat ``seat`` is allowed to have. ``ended``: the match is
    over even if the game is not (every seat forfeited, and it stopped mid-deal): the view
    at the end of a match, as of a finished game, with no deal in progress and nobody to
    act."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.n:
        raise ValueError(f"no seat {seat!r} in a {game.n}-player game")
    declarer = game.declarer
    gives: tuple[tuple[int, Card | None], ...] = tuple(
        (to, card if seat in (declarer, to) else None) for to, card in game.gives
    )
    over = ended or game.phase is Phase.GAME_OVER
    return PlayerView(
        seat=seat,
        players=game.players,
        ruleset=game.ruleset,
        deal_number=game.deal_number,
        dealer=game.dealer,
        phase=Phase.GAME_OVER if over else game.phase,
        to_act=None if over else game.to_act,
        hand=() if over else game.hand(seat),
        active_seats=game.active_seats,
        talon=None if over else visible_talon(game, seat),
        bids=() if over else game.auction(),
        declarer=None if over else declarer,
        bid=None if over else game.bid,
        contract=None if over else game.contract,
        gives=() if over else gives,
        trump=None if over else game.trump,
        marriages=() if over else game.marriages,
        trick=() if over else game.trick,
        tricks=() if over else game.tricks,
        scores=game.scores,
        barrel=game.barrel,
        legal_actions=game.legal_actions() if not over and game.to_act == seat else (),
        deal_results=game.deal_results,
    )


def public_action(action: Action, actor: int, observer: int) -> Action | HiddenGive:
    """``action`` by ``actor`` as ``observer`` may see it (a third seat sees a hidden give)."""
    if isinstance(action, Give) and observer != actor and observer != action.to:
        return HiddenGive(action.to)
    return action
