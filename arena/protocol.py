"""Every conversion between the wire protocol (``arena.v1``) and the rules engine's values.

Both directions live here: the referee turns engine values into protobuf messages, and the
bot side (the SDK) turns them back. The pb → engine direction is *total*: a message that
does not describe a value raises a typed error (:class:`MalformedActionError` for actions,
:class:`MalformedMessageError` for the rest) that names what is missing, never a bare
``KeyError`` or ``ValueError`` from deep inside.

Round trips hold: ``view_from_pb(view_to_pb(v), v.ruleset) == v`` for every view made by
``engine.observe``, and likewise for cards, actions, rulesets and deal results.

>>> from engine.actions import Play, parse_action
>>> from engine.cards import Card
>>> action_from_pb(action_to_pb(Play(Card.HK, declare=True)))
Play(card=<Card.HK: 21>, declare=True)
>>> card_to_pb(Card.S9)
suit: SUIT_SPADES
rank: RANK_NINE
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from arena.v1 import arena_pb2 as pb
from engine.actions import Action, Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import Card, Rank, Suit
from engine.game import DealResult, Phase, Trick
from engine.rules import Ruleset, RulesetError
from engine.view import HiddenGive, PlayerView

__all__ = [
    "PROTOCOL_VERSION",
    "MalformedActionError",
    "MalformedMessageError",
    "action_from_pb",
    "action_to_pb",
    "card_from_pb",
    "card_to_pb",
    "deal_result_from_pb",
    "deal_result_to_pb",
    "match_result_to_pb",
    "phase_from_pb",
    "phase_to_pb",
    "public_action_from_pb",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "seat_action_from_pb",
    "seat_action_to_pb",
    "suit_from_pb",
    "suit_to_pb",
    "view_from_pb",
    "view_to_pb",
]

#: The protocol version this module speaks (``Hello.protocol_version``).
PROTOCOL_VERSION = 1


class MalformedMessageError(ValueError):
    """A protobuf message that does not describe an engine value; ``what`` names the part."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what


class MalformedActionError(MalformedMessageError):
    """An ``Action`` message that is not an action: no kind set, a card without suit or
    rank, a give without a card, ... ``what`` names the missing or bad field."""


# ----------------------------------------------------------------------------- cards

# engine Suit/Rank are 0-based; the wire enums reserve 0 for UNSPECIFIED.
_CARD_PB: tuple[pb.Card, ...] = tuple(
    pb.Card(suit=c.suit + 1, rank=c.rank + 1)  # type: ignore[arg-type]
    for c in Card
)


def suit_to_pb(suit: Suit | None) -> pb.Suit.ValueType:
    """An engine suit as a wire enum; ``None`` (no trump / the ace marriage) is UNSPECIFIED."""
    return pb.SUIT_UNSPECIFIED if suit is None else pb.Suit.ValueType(suit + 1)


def suit_from_pb(value: int) -> Suit | None:
    """A wire suit as an engine suit; UNSPECIFIED is ``None``; unknown values raise."""
    if value == pb.SUIT_UNSPECIFIED:
        return None
    if not 1 <= value <= 4:
        raise MalformedMessageError("suit", f"unknown suit value {value}")
    return Suit(value - 1)


def card_to_pb(card: Card) -> pb.Card:
    """A card as a (fresh) ``Card`` message."""
    out = pb.Card()
    out.CopyFrom(_CARD_PB[card])
    return out


def _set_card(dst: pb.Card, card: Card) -> None:
    dst.suit = pb.Suit.ValueType(card.suit + 1)
    dst.rank = pb.Rank.ValueType(card.rank + 1)


_CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(24))
#: (suit, rank) wire values -> card, for the valid pairs only.
_CARD_BY_PB: dict[tuple[int, int], Card] = {(c.suit + 1, c.rank + 1): c for c in _CARDS}


def card_from_pb(msg: pb.Card, what: str = "card") -> Card:
    """A ``Card`` message as an engine card; raises :class:`MalformedActionError` naming
    ``what`` when the suit or rank is missing or unknown."""
    s, r = msg.suit, msg.rank
    card = _CARD_BY_PB.get((s, r))
    if card is not None:
        return card
    if not 1 <= s <= 4:
        raise MalformedActionError(what, "suit missing" if s == 0 else f"unknown suit value {s}")
    if not 1 <= r <= 6:
        raise MalformedActionError(what, "rank missing" if r == 0 else f"unknown rank value {r}")
    return Card((s - 1) * 6 + (r - 1))


def _cards_from_pb(msgs: Iterable[pb.Card], what: str) -> tuple[Card, ...]:
    return tuple(card_from_pb(m, what) for m in msgs)


# ----------------------------------------------------------------------------- actions


def _fill_action(out: pb.Action, action: object) -> None:
    if isinstance(action, Play):
        p = out.play
        _set_card(p.card, action.card)
        if action.declare:
            p.declare = True
    elif isinstance(action, Bid):
        out.bid.amount = action.amount
    elif isinstance(action, Pass):
        getattr(out, "pass").SetInParent()  # `pass` is a Python keyword
    elif isinstance(action, Give):
        _set_card(out.give.card, action.card)
        out.give.to_seat = action.to
    elif isinstance(action, HiddenGive):
        out.give.SetInParent()  # a give as a third seat sees it: no card
        out.give.to_seat = action.to
    elif isinstance(action, Contract):
        out.contract.amount = action.amount
    elif isinstance(action, Concede):
        out.concede.SetInParent()
    elif isinstance(action, ThrowIn):
        out.throw_in.SetInParent()
    else:
        raise TypeError(f"not an engine action: {action!r}")


def action_to_pb(action: Action | HiddenGive) -> pb.Action:
    """An engine action (or a ``HiddenGive`` from ``public_action``) as an ``Action``."""
    out = pb.Action()
    _fill_action(out, action)
    return out


def action_from_pb(msg: pb.Action) -> Action:
    """An ``Action`` message as an engine action.

    Raises :class:`MalformedActionError` naming what is missing: no kind set, a card without
    suit or rank, a give or play without a card.

    >>> action_from_pb(pb.Action(give=pb.Give(to_seat=2)))
    Traceback (most recent call last):
    ...
    arena.protocol.MalformedActionError: give.card: a give needs a card
    """
    kind = msg.WhichOneof("kind")
    if kind == "play":
        p = msg.play
        if not p.HasField("card"):
            raise MalformedActionError("play.card", "a play needs a card")
        return Play(card_from_pb(p.card, "play.card"), declare=p.declare)
    if kind == "bid":
        return Bid(msg.bid.amount)
    if kind == "pass":
        return Pass()
    if kind == "give":
        g = msg.give
        if not g.HasField("card"):
            raise MalformedActionError("give.card", "a give needs a card")
        return Give(card_from_pb(g.card, "give.card"), g.to_seat)
    if kind == "contract":
        return Contract(msg.contract.amount)
    if kind == "concede":
        return Concede()
    if kind == "throw_in":
        return ThrowIn()
    raise MalformedActionError("action", "no kind set (bid, pass, give, contract, ...)")


def public_action_from_pb(msg: pb.Action) -> Action | HiddenGive:
    """An action as events show it: like :func:`action_from_pb`, but a ``Give`` without a
    card (seen by a third seat) is a ``HiddenGive``."""
    if msg.WhichOneof("kind") == "give" and not msg.give.HasField("card"):
        return HiddenGive(msg.give.to_seat)
    return action_from_pb(msg)


def seat_action_to_pb(seat: int, action: Action | HiddenGive) -> pb.SeatAction:
    """``(seat, action)`` as a ``SeatAction`` message."""
    out = pb.SeatAction(seat=seat)
    _fill_action(out.action, action)
    return out


def seat_action_from_pb(msg: pb.SeatAction) -> tuple[int, Action | HiddenGive]:
    """A ``SeatAction`` (as events carry them) as ``(seat, action or HiddenGive)``."""
    if not msg.HasField("action"):
        raise MalformedActionError("seat_action.action", "missing")
    return msg.seat, public_action_from_pb(msg.action)


# ----------------------------------------------------------------------------- rulesets

_RULESET_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Ruleset))


def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    """Every option of an engine ``Ruleset`` as a ``Ruleset`` message."""
    return pb.Ruleset(**ruleset.to_dict())


def ruleset_from_pb(msg: pb.Ruleset) -> Ruleset:
    """A ``Ruleset`` message as an engine ``Ruleset``.

    Raises :class:`MalformedMessageError` (``what`` = ``"ruleset.<option>"``) when the
    engine refuses a value.
    """
    try:
        return Ruleset(**{name: getattr(msg, name) for name in _RULESET_FIELDS})
    except RulesetError as e:
        raise MalformedMessageError(f"ruleset.{e.key}", str(e)) from e


# ----------------------------------------------------------------------------- phases

_PHASE_TO_PB: dict[Phase, pb.Phase.ValueType] = {
    ph: pb.Phase.Value(f"PHASE_{ph.name}") for ph in Phase
}
_PHASE_FROM_PB: dict[int, Phase] = {v: ph for ph, v in _PHASE_TO_PB.items()}


def phase_to_pb(phase: Phase) -> pb.Phase.ValueType:
    """An engine ``Phase`` as the wire enum."""
    return _PHASE_TO_PB[phase]


def phase_from_pb(value: int) -> Phase:
    """A wire phase as an engine ``Phase``; UNSPECIFIED or unknown values raise."""
    try:
        return _PHASE_FROM_PB[value]
    except KeyError:
        raise MalformedMessageError("phase", f"unknown or unspecified phase {value}") from None


# ----------------------------------------------------------------------------- results

_OUTCOMES = ("made", "failed", "conceded", "thrown_in")


def _barrel_to_pb(barrel: Sequence[int] | None) -> list[int]:
    # engine: 0 = not on the barrel; wire: -1 = not on it (empty: no barrel played).
    return [] if barrel is None else [b if b > 0 else -1 for b in barrel]


def _barrel_from_pb(values: Sequence[int]) -> tuple[int, ...] | None:
    return tuple(b if b > 0 else 0 for b in values) if values else None


def deal_result_to_pb(result: DealResult) -> pb.DealResult:
    """An engine ``DealResult`` as a ``DealResult`` message."""
    return pb.DealResult(
        deal_number=result.number,
        declarer=result.declarer,
        bid=result.bid,
        contract=result.bid if result.contract is None else result.contract,
        conceded=result.outcome == "conceded",
        thrown_in=result.outcome == "thrown_in",
        made=result.outcome == "made",
        takes=result.takes,
        deltas=result.deltas,
        scores=result.scores,
        dealer=result.dealer,
        outcome=result.outcome,
        card_points=result.card_points,
        marriage_points=result.marriage_points,
        barrel=_barrel_to_pb(result.barrel),
        events=result.events,
    )


def deal_result_from_pb(msg: pb.DealResult) -> DealResult:
    """A ``DealResult`` message as an engine ``DealResult``."""
    outcome = msg.outcome
    if outcome not in _OUTCOMES:
        raise MalformedMessageError(
            "deal_result.outcome", f"expected one of {', '.join(_OUTCOMES)}, got {outcome!r}"
        )
    if not msg.HasField("declarer"):
        raise MalformedMessageError("deal_result.declarer", "missing")
    return DealResult(
        number=msg.deal_number,
        dealer=msg.dealer,
        declarer=msg.declarer,
        bid=msg.bid,
        contract=msg.contract if outcome in ("made", "failed") else None,
        outcome=outcome,
        card_points=tuple(msg.card_points),
        marriage_points=tuple(msg.marriage_points),
        takes=tuple(msg.takes),
        deltas=tuple(msg.deltas),
        scores=tuple(msg.scores),
        barrel=_barrel_from_pb(msg.barrel),
        events=tuple(msg.events),
    )


def match_result_to_pb(result: Mapping[str, Any], forfeits: Sequence[int] = ()) -> pb.MatchResult:
    """The ``"result"`` object of a match record (the referee's: forfeiters placed last)
    as a ``MatchResult`` message."""
    return pb.MatchResult(
        scores=result["scores"],
        places=result["places"],
        shortfalls=result.get("shortfalls", ()),
        forfeits=forfeits,
        deals=result.get("deals", 0),
    )


# ----------------------------------------------------------------------------- views


def _marriage_tricks(view: PlayerView) -> list[int]:
    """The index of the trick each marriage was declared on.

    A marriage is declared with a lead, so the declaring lead is the seat's first lead of
    the suit's K or Q (the other one must still be in hand), and the ace marriage is the
    seat's first ace lead (all four aces must still be in hand).
    """
    leads: list[tuple[int, Card]] = [(t.leader, t.cards[0][1]) for t in view.tricks]
    if view.trick:
        leads.append(view.trick[0])
    out = []
    for seat, suit in view.marriages:
        idx = 0
        for i, (leader, card) in enumerate(leads):
            if leader != seat:
                continue
            if (suit is None and card.rank is Rank.ACE) or (
                suit is not None and card.suit is suit and card.rank in (Rank.KING, Rank.QUEEN)
            ):
                idx = i
                break
        out.append(idx)
    return out


def view_to_pb(view: PlayerView, out: pb.PlayerView | None = None) -> pb.PlayerView:
    """An engine ``PlayerView`` (from ``observe``) as a ``PlayerView`` message.

    ``out``: an empty message to fill in place (say ``msg.decision_request.view``) rather
    than a new one; it is returned.
    """
    if out is None:
        out = pb.PlayerView(
            seat=view.seat,
            players=view.players,
            deal_number=view.deal_number,
            dealer=view.dealer,
            phase=_PHASE_TO_PB[view.phase],
            active_seats=view.active_seats,
            scores=view.scores,
        )
    else:
        out.seat = view.seat
        out.players.extend(view.players)
        out.deal_number = view.deal_number
        out.dealer = view.dealer
        out.phase = _PHASE_TO_PB[view.phase]
        out.active_seats.extend(view.active_seats)
        out.scores.extend(view.scores)
    if view.to_act is not None:
        out.to_act = view.to_act
    _extend_cards(out.hand, view.hand)
    if view.talon is not None:
        out.talon_known = True
        _extend_cards(out.talon, view.talon)
    if view.bids:
        out.bids.extend([_seat_action_pb(seat, action) for seat, action in view.bids])
    if view.declarer is not None:
        out.declarer = view.declarer
    if view.bid is not None:
        out.bid = view.bid
    if view.contract is not None:
        out.contract = view.contract
    if view.gives:
        giver = view.declarer if view.declarer is not None else 0
        for to, card in view.gives:
            g = out.gives.add(seat=giver).action.give
            g.to_seat = to
            if card is None:
                g.SetInParent()
            else:
                _set_card(g.card, card)
    if view.trump is not None:
        out.trump = pb.Suit.ValueType(view.trump + 1)
    if view.marriages:
        for (seat, suit), trick in zip(view.marriages, _marriage_tricks(view), strict=True):
            out.marriages.add(
                seat=seat,
                suit=suit_to_pb(suit),
                value=_ACE_MARRIAGE_VALUE if suit is None else suit.marriage_value,
                trick=trick,
            )
    if view.trick:
        out.trick.extend([_SEAT_CARD_PB[seat][card] for seat, card in view.trick])
    if view.tricks:
        out.tricks.extend([_trick_pb(t) for t in view.tricks])
    if view.barrel is not None:
        out.barrel.extend(_barrel_to_pb(view.barrel))
    if view.legal_actions:
        cache = _ACTION_CACHE
        out.legal_actions.extend([cache.get(a) or _action_pb(a) for a in view.legal_actions])
    if view.deal_results:
        out.deal_results.extend(_deal_results_pb(view.deal_results))
    return out


def view_from_pb(
    msg: pb.PlayerView, ruleset: Ruleset, previous: PlayerView | None = None
) -> PlayerView:
    """A ``PlayerView`` message as an engine ``PlayerView``.

    ``ruleset`` is the match's (from ``MatchStarted.ruleset``, see :func:`ruleset_from_pb`):
    views on the wire do not repeat it. Raises :class:`MalformedMessageError` naming the
    field that does not describe a view.

    ``previous``: an earlier view of the same match, if any. Its decoded deal results are
    reused for the deals the message repeats (same deal number, outcome and scores; the
    referee sends every earlier result at every decision), and only new ones are decoded.
    """
    n = len(msg.players)
    if n not in (3, 4):
        raise MalformedMessageError("view.players", f"expected 3 or 4 players, got {n}")

    def seat_ok(value: int, what: str) -> int:
        if not 0 <= value < n:
            raise MalformedMessageError(what, f"no seat {value} at a {n}-player table")
        return value

    gives: list[tuple[int, Card | None]] = []
    for sa in msg.gives:
        if sa.action.WhichOneof("kind") != "give":
            raise MalformedMessageError("view.gives", "expected give actions")
        g = sa.action.give
        card = card_from_pb(g.card, "view.gives.card") if g.HasField("card") else None
        gives.append((seat_ok(g.to_seat, "view.gives.to_seat"), card))
    bids: list[tuple[int, Action]] = []
    for sa in msg.bids:
        bid_or_pass = action_from_pb(sa.action)
        if not isinstance(bid_or_pass, Bid | Pass):
            raise MalformedMessageError("view.bids", f"expected bids or passes, got {bid_or_pass}")
        bids.append((seat_ok(sa.seat, "view.bids.seat"), bid_or_pass))
    tricks = []
    for t in msg.tricks:
        cards = tuple(
            (seat_ok(sc.seat, "view.tricks.seat"), card_from_pb(sc.card, "view.tricks.card"))
            for sc in t.cards
        )
        if not cards:
            raise MalformedMessageError("view.tricks", "a completed trick without cards")
        tricks.append(Trick(t.leader, cards, t.winner))
    legal = [action_from_pb(m) for m in msg.legal_actions]
    return PlayerView(
        seat=seat_ok(msg.seat, "view.seat"),
        players=tuple(msg.players),
        ruleset=ruleset,
        deal_number=msg.deal_number,
        dealer=seat_ok(msg.dealer, "view.dealer"),
        phase=phase_from_pb(msg.phase),
        to_act=seat_ok(msg.to_act, "view.to_act") if msg.HasField("to_act") else None,
        hand=_cards_from_pb(msg.hand, "view.hand"),
        active_seats=tuple(msg.active_seats),
        talon=_cards_from_pb(msg.talon, "view.talon") if msg.talon_known else None,
        bids=tuple(bids),
        declarer=msg.declarer if msg.HasField("declarer") else None,
        bid=msg.bid if msg.HasField("bid") else None,
        contract=msg.contract if msg.HasField("contract") else None,
        gives=tuple(gives),
        trump=suit_from_pb(msg.trump),
        marriages=tuple(
            (seat_ok(m.seat, "view.marriages.seat"), suit_from_pb(m.suit)) for m in msg.marriages
        ),
        trick=tuple(
            (seat_ok(sc.seat, "view.trick.seat"), card_from_pb(sc.card, "view.trick.card"))
            for sc in msg.trick
        ),
        tricks=tuple(tricks),
        scores=tuple(msg.scores),
        barrel=_barrel_from_pb(msg.barrel),
        legal_actions=tuple(legal),
        deal_results=_deal_results_from_pb(msg.deal_results, previous),
    )


def _deal_results_from_pb(
    msgs: Sequence[pb.DealResult], previous: PlayerView | None
) -> tuple[DealResult, ...]:
    known: tuple[DealResult, ...] = () if previous is None else previous.deal_results
    n = len(msgs)
    if not known or len(known) > n:
        return tuple(deal_result_from_pb(r) for r in msgs)
    k = len(known)
    for i in range(k):
        r, m = known[i], msgs[i]
        if r.number != m.deal_number or r.outcome != m.outcome or r.scores != tuple(m.scores):
            return tuple(deal_result_from_pb(r) for r in msgs)
    if k == n:
        return known
    return known + tuple(deal_result_from_pb(msgs[i]) for i in range(k, n))


_ACE_MARRIAGE_VALUE = 200


def _extend_cards(dst: Any, cards: Iterable[Card]) -> None:
    dst.extend([_CARD_PB[c] for c in cards])


# Cached messages for values that repeat on every decision (legal actions, bids, cards,
# tricks, deal results). They are only ever copied out (extend / CopyFrom copy), never
# handed out or mutated.
_ACTION_CACHE: dict[object, pb.Action] = {}
_SEAT_ACTION_CACHE: dict[tuple[int, object], pb.SeatAction] = {}
_RESULT_CACHE: dict[DealResult, pb.DealResult] = {}
_SEAT_CARD_PB: tuple[tuple[pb.SeatCard, ...], ...] = tuple(
    tuple(pb.SeatCard(seat=seat, card=_CARD_PB[c]) for c in Card) for seat in range(4)
)
# A match's DealResult objects stay the same for the whole match (each view repeats them),
# so this cache is keyed by identity, holding the object so that its id stays valid.
_RESULT_BY_ID: dict[int, tuple[DealResult, pb.DealResult]] = {}


def _seat_action_pb(seat: int, action: object) -> pb.SeatAction:
    key = (seat, action)
    m = _SEAT_ACTION_CACHE.get(key)
    if m is None:
        m = pb.SeatAction(seat=seat)
        m.action.CopyFrom(_action_pb(action))
        if len(_SEAT_ACTION_CACHE) < 4096:
            _SEAT_ACTION_CACHE[key] = m
    return m


def _trick_pb(trick: Trick) -> pb.Trick:
    m = pb.Trick(leader=trick.leader, winner=trick.winner)
    m.cards.extend([_SEAT_CARD_PB[seat][card] for seat, card in trick.cards])
    return m


def _deal_results_pb(results: tuple[DealResult, ...]) -> list[pb.DealResult]:
    cache = _RESULT_BY_ID
    out = []
    for r in results:
        hit = cache.get(id(r))
        if hit is None or hit[0] is not r:
            if len(cache) >= 4096:
                cache.clear()
            hit = cache[id(r)] = (r, _deal_result_pb(r))
        out.append(hit[1])
    return out


def _action_pb(action: object) -> pb.Action:
    m = _ACTION_CACHE.get(action)
    if m is None:
        m = pb.Action()
        _fill_action(m, action)
        if len(_ACTION_CACHE) < 4096:
            _ACTION_CACHE[action] = m
    return m


def _deal_result_pb(result: DealResult) -> pb.DealResult:
    m = _RESULT_CACHE.get(result)
    if m is None:
        m = deal_result_to_pb(result)
        if len(_RESULT_CACHE) >= 4096:
            _RESULT_CACHE.clear()
        _RESULT_CACHE[result] = m
    return m
