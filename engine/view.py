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

from dataclasses import dataclass, fields
from typing import Any

from engine.actions import Action, Contract, Give, Play
from engine.cards import Card, Suit, mask_of
from engine.game import CONTRACT_STEP, DealResult, Game, Phase, Trick, cap_of, trick_winner
from engine.rules import Ruleset
from engine.tables import ACES, GIVE_SUIT, SUIT_PLAYS, THROW_IN, contract_actions

__all__ = [
    "HiddenGive",
    "PlayerView",
    "observe",
    "own_next_view",
    "public_action",
    "visible_gives",
    "visible_talon",
]


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

    def __init__(
        self,
        seat: int,
        players: tuple[str, ...],
        ruleset: Ruleset,
        deal_number: int,
        dealer: int,
        phase: Phase,
        to_act: int | None,
        hand: tuple[Card, ...],
        active_seats: tuple[int, ...],
        talon: tuple[Card, ...] | None,
        bids: tuple[tuple[int, Action], ...],
        declarer: int | None,
        bid: int | None,
        contract: int | None,
        gives: tuple[tuple[int, Card | None], ...],
        trump: Suit | None,
        marriages: tuple[tuple[int, Suit | None], ...],
        trick: tuple[tuple[int, Card], ...],
        tricks: tuple[Trick, ...],
        scores: tuple[int, ...],
        barrel: tuple[int, ...] | None,
        legal_actions: tuple[Action, ...],
        deal_results: tuple[DealResult, ...],
    ) -> None:
        # The dataclass's own frozen __init__ sets each field through a call of
        # object.__setattr__ (23 calls: about half of building a view, and views are built
        # at every decision by observe, view_from_pb, the SDK's request_view and
        # own_next_view). Here the instance is a _ViewFields (the same slots, so the same
        # layout, and no frozen __setattr__) while its fields are stored, each a plain slot
        # store, and a PlayerView again before __init__ returns: two class changes in
        # place of 23 calls. A subclass (its layout may differ) is set field by field.
        # tests/engine/test_view_init_round55.py checks the signature against the fields.
        cls = self.__class__
        if cls is not PlayerView:
            values = (
                seat, players, ruleset, deal_number, dealer, phase, to_act, hand, active_seats,
                talon, bids, declarer, bid, contract, gives, trump, marriages, trick, tricks,
                scores, barrel, legal_actions, deal_results,
            )  # fmt: skip
            for name, value in zip(_FIELDS, values, strict=True):
                _set(self, name, value)
            return
        _set(self, "__class__", _ViewFields)
        v: Any = self
        v.seat = seat
        v.players = players
        v.ruleset = ruleset
        v.deal_number = deal_number
        v.dealer = dealer
        v.phase = phase
        v.to_act = to_act
        v.hand = hand
        v.active_seats = active_seats
        v.talon = talon
        v.bids = bids
        v.declarer = declarer
        v.bid = bid
        v.contract = contract
        v.gives = gives
        v.trump = trump
        v.marriages = marriages
        v.trick = trick
        v.tricks = tricks
        v.scores = scores
        v.barrel = barrel
        v.legal_actions = legal_actions
        v.deal_results = deal_results
        v.__class__ = PlayerView

    @property
    def first_hand(self) -> int:
        """The seat left of the dealer."""
        return self.active_seats[0]


#: PlayerView's fields, in order (its slots, and its __init__'s parameters).
_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(PlayerView))
#: Bypasses a frozen class's __setattr__ (as the dataclass's own __init__ does).
_set = object.__setattr__


class _ViewFields:
    """A ``PlayerView``'s storage without its frozen ``__setattr__``: what a view is while
    ``PlayerView.__init__`` stores its fields (the same slots: a class change between the
    two keeps every field)."""

    __slots__ = _FIELDS


def visible_talon(game: Game, seat: int) -> tuple[Card, ...] | None:
    """The talon as ``seat`` sees it: ``observe(game, seat).talon`` (which takes it from
    here) without the rest of the view, for the referee's ``talon_taken`` events."""
    # Nobody sees the talon during the auction; once taken, everyone (talon_visible) or
    # only the declarer.
    phase = game.phase
    if phase is Phase.BIDDING or phase is Phase.GAME_OVER:
        return None
    return game.talon if game.ruleset.talon_visible or seat == game.declarer else None


def visible_gives(game: Game, seat: int) -> tuple[tuple[int, Card | None], ...]:
    """The declarer's passed cards as ``seat`` sees them: ``observe(game, seat).gives``
    (which takes them from here) while a deal is on: ``(to, card)``, the card only for
    its giver and its receiver (``None`` for a third seat)."""
    gives = game.gives
    if not gives:  # (most views: no generator made for nothing)
        return ()
    declarer = game.declarer
    return tuple((to, card if seat in (declarer, to) else None) for to, card in gives)


def observe(game: Game, seat: int, *, ended: bool = False) -> PlayerView:
    """The view of ``game`` that seat ``seat`` is allowed to have. ``ended``: the match is
    over even if the game is not (every seat forfeited, and it stopped mid-deal): the view
    at the end of a match, as of a finished game, with no deal in progress and nobody to
    act."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.n:
        raise ValueError(f"no seat {seat!r} in a {game.n}-player game")
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
        declarer=None if over else game.declarer,
        bid=None if over else game.bid,
        contract=None if over else game.contract,
        gives=() if over else visible_gives(game, seat),
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


def own_next_view(view: PlayerView, action: Action) -> PlayerView | None:
    """The view seat ``view.seat`` gets at its next decision when that decision comes right
    after its own ``action`` (one of ``view.legal_actions``) with nothing it cannot know
    in between; ``None`` otherwise.

    Three such cases: the declarer's first give (its second give follows), its second give
    (its contract follows) and its contract (its lead follows); and a card that completes a
    trick this seat wins, not the deal's last (its lead follows). Each time it returns
    exactly ``observe(game, seat)`` of the game after ``action`` (the property tests of
    tests/engine check it against the engine over random rulesets), and only when that
    decision has more than one legal action (a forced one is played without asking).
    ``None`` after a bid or a pass (the auction's end shows the declarer the talon), a
    concession, a throw-in or a deal's last card (a new deal), a lead or a card another
    seat follows, and any action not among ``view.legal_actions``.

    The "ahead" protocol feature (docs/protocol.md) rests on it: a bot answers its next
    decision on this view, and the referee plays that answer without a round trip when
    this view is the one it would send.
    """
    seat = view.seat
    phase = view.phase
    # (the cheap refusals first: the SDK asks after every decision of a quick bot)
    if view.to_act != seat or phase is Phase.BIDDING:
        return None
    if phase is Phase.PLAYING and len(view.trick) != 2:
        return None
    if action not in view.legal_actions:
        return None
    r = view.ruleset
    if phase is Phase.PASSING:
        if type(action) is not Give:
            return None  # a throw-in: the deal ends
        card = action.card
        hand = tuple(c for c in view.hand if c != card)
        mask = mask_of(hand)
        gives = (*view.gives, (action.to, card))
        last_hand = THROW_IN in view.legal_actions
        legal: tuple[Action, ...]
        if len(gives) < 2:
            given = 0
            for to, _ in gives:
                given |= 1 << to
            targets = 0
            for s in view.active_seats:
                if s != seat and not given >> s & 1:
                    targets |= 1 << s
            gs = GIVE_SUIT[targets]
            legal = gs[0][mask & 63] + gs[1][mask >> 6 & 63] + gs[2][mask >> 12 & 63]
            legal += gs[3][mask >> 18 & 63]
            if last_hand:
                legal += (THROW_IN,)
            next_phase = Phase.PASSING
        else:
            bid = view.bid
            if bid is None:
                return None
            legal = contract_actions(bid, max(bid, cap_of(mask, r)), CONTRACT_STEP,
                                     r.concede != "off" and not last_hand, last_hand)  # fmt: skip
            next_phase = Phase.CONTRACT
        if len(legal) < 2:
            return None
        return _next_view(
            view, next_phase, hand, view.contract, gives, view.trick, view.tricks, legal
        )
    if phase is Phase.CONTRACT:
        if type(action) is not Contract:
            return None  # a concession or a throw-in: the deal ends
        # The declarer leads the first trick; nobody has taken a trick yet.
        mask = mask_of(view.hand)
        legal = _lead(mask, 64 if not r.marriage_needs_trick else 0)
        if len(legal) < 2:
            return None
        return _next_view(view, Phase.PLAYING, view.hand, action.amount, view.gives, view.trick,
                          view.tricks, legal)  # fmt: skip
    if phase is not Phase.PLAYING or type(action) is not Play or len(view.trick) != 2:
        return None
    if len(view.tricks) >= 7:
        return None  # the deal's last card: it is scored, and a new one dealt
    cards = (*view.trick, (seat, action.card))
    trump = view.trump
    best = trick_winner([c for _, c in cards], trump)
    if cards[best][0] != seat:
        return None  # another seat leads next
    done = Trick(cards[0][0], cards, seat)
    tricks = (*view.tricks, done)
    hand = tuple(c for c in view.hand if c != action.card)
    mask = mask_of(hand)
    flags = 64
    if r.ace_marriage and mask & ACES == ACES:
        # The ace marriage needs a trick this seat took with a card other than an ace.
        for t in tricks:
            if t.winner == seat and _winning_card(t).rank != 5:
                flags |= 128
                break
    legal = _lead(mask, flags)
    if len(legal) < 2:
        return None
    return _next_view(view, phase, hand, view.contract, view.gives, (), tricks, legal)


def _next_view(
    view: PlayerView,
    phase: Phase,
    hand: tuple[Card, ...],
    contract: int | None,
    gives: tuple[tuple[int, Card | None], ...],
    trick: tuple[tuple[int, Card], ...],
    tricks: tuple[Trick, ...],
    legal: tuple[Action, ...],
) -> PlayerView:
    """``view`` with the fields that one of ``own_next_view``'s cases changes (the others
    are passed as they are): ``dataclasses.replace`` does the same through a loop over the
    23 fields and a keyword call, as costly as building the view."""
    return PlayerView(
        view.seat, view.players, view.ruleset, view.deal_number, view.dealer, phase,
        view.to_act, hand, view.active_seats, view.talon, view.bids, view.declarer,
        view.bid, contract, gives, view.trump, view.marriages, trick, tricks, view.scores,
        view.barrel, legal, view.deal_results,
    )  # fmt: skip


def _lead(mask: int, flags: int) -> tuple[Action, ...]:
    """A lead's legal plays from the hand ``mask``, as ``Game.legal_actions`` makes them
    (``flags``: 64 a marriage may be declared, 128 the ace marriage)."""
    sp = SUIT_PLAYS
    return (
        sp[0][(mask & 63) | flags]
        + sp[1][(mask >> 6 & 63) | flags]
        + sp[2][(mask >> 12 & 63) | flags]
        + sp[3][(mask >> 18 & 63) | flags]
    )


def _winning_card(trick: Trick) -> Card:
    """The card that took ``trick`` (its winner's)."""
    return next(c for s, c in trick.cards if s == trick.winner)
