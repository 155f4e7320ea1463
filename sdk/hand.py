"""Small helpers for bot authors: cards by suit, marriages, tricks, and what is still out.

Everything here is a pure function of cards or of a :class:`~engine.PlayerView`; nothing
looks at more than the view shows.

>>> from sdk import parse_cards
>>> hand = parse_cards("A♠ 10♠ K♥ Q♥ 9♦")
>>> [str(s) for s in marriages(hand)]
['♥']
>>> [str(c) for c in by_suit(hand)[Suit.SPADES]]
['A♠', '10♠']
>>> str(trick_winner([(0, Card.HK), (1, Card.HA), (2, Card.S9)], trump=Suit.SPADES)[1])
'9♠'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# (At run time, not under TYPE_CHECKING: ``typing.get_type_hints`` and the tools built on
# it, an editor's or a doc generator's, resolve these functions' hints then.)
from engine.actions import Play
from engine.cards import ACE_MARRIAGE_VALUE, DECK, Card, Rank, Suit, card_points, mask_of
from engine.game import cap_of
from engine.game import trick_winner as _engine_trick_winner
from engine.rules import Ruleset
from engine.view import PlayerView

__all__ = [
    "beats",
    "bid_cap",
    "by_suit",
    "has_ace_marriage",
    "legal_plays",
    "marriages",
    "masters",
    "outstanding_cards",
    "played_cards",
    "takes",
    "trick_winner",
    "trumps_by_trick",
    "unseen_cards",
    "voids",
]


def by_suit(cards: Iterable[Card]) -> dict[Suit, list[Card]]:
    """The cards of each suit, highest first (every suit is a key, possibly empty)."""
    out: dict[Suit, list[Card]] = {s: [] for s in Suit}
    for c in sorted(cards, reverse=True):
        out[c.suit].append(c)
    return out


def marriages(cards: Iterable[Card]) -> list[Suit]:
    """Suits whose K and Q are both among ``cards``, most valuable first."""
    held = set(cards)
    return [
        s
        for s in sorted(Suit, reverse=True)
        if Card.of(Rank.KING, s) in held and Card.of(Rank.QUEEN, s) in held
    ]


def has_ace_marriage(cards: Iterable[Card]) -> bool:
    """Whether ``cards`` hold all four aces."""
    held = set(cards)
    return all(Card.of(Rank.ACE, s) in held for s in Suit)


def bid_cap(cards: Iterable[Card], ruleset: Ruleset) -> int:
    """The highest bid (or contract) these cards allow: 120 plus the marriages held, and
    the ace marriage's 200 where the ruleset plays it and counts it for the bid
    (``ace_marriage``, ``ace_marriage_counts_for_bid``; the engine's rule,
    :func:`engine.game.cap_of`)."""
    return cap_of(mask_of(cards), ruleset)


def beats(card: Card, best: Card, trump: Suit | None) -> bool:
    """Whether ``card`` beats ``best``, the card winning the trick so far."""
    return _engine_trick_winner((best, card), trump) == 1


def trick_winner(trick: Sequence[tuple[int, Card]], trump: Suit | None) -> tuple[int, Card]:
    """The ``(seat, card)`` winning a (possibly unfinished, non-empty) trick."""
    return trick[_engine_trick_winner([card for _, card in trick], trump)]


def legal_plays(view: PlayerView) -> list[Play]:
    """The ``Play`` actions among ``view.legal_actions``, in their order (typed ``Play``, so
    ``p.card`` passes mypy; empty outside the play). A declaring lead is one of them with
    ``declare=True``, beside the same card's plain play: ``[p for p in legal_plays(view)
    if p.declare]`` are the marriages this seat may declare now."""
    return [a for a in view.legal_actions if isinstance(a, Play)]


def takes(view: PlayerView) -> tuple[int, ...]:
    """What each seat has taken so far in this deal: the card points of the tricks it won
    plus the marriages it declared (the ace marriage 200), per seat, as ``DealResult.takes``
    counts them at the deal's end (before any rounding). The trick in progress is not
    counted until it is won; the 4-player dealer's talon is no take (0)."""
    out = [0] * len(view.players)
    for t in view.tricks:
        out[t.winner] += card_points(c for _, c in t.cards)
    for seat, suit in view.marriages:
        out[seat] += suit.marriage_value if suit is not None else ACE_MARRIAGE_VALUE
    return tuple(out)


def played_cards(view: PlayerView) -> set[Card]:
    """Every card played to a trick in this deal, including the trick in progress."""
    out = {c for t in view.tricks for _, c in t.cards}
    out.update(c for _, c in view.trick)
    return out


def unseen_cards(view: PlayerView) -> set[Card]:
    """Cards this seat has not seen: not in its hand, not played, not given to or by it.

    In a 3-player deal after the pass, these are the opponents' cards, less (for the
    declarer) the two he gave them, whose places he knows.
    """
    seen = set(view.hand) | played_cards(view)
    for _, card in view.gives:
        if card is not None:
            seen.add(card)
    if view.talon is not None and view.declarer == view.seat:
        seen.update(view.talon)
    return set(DECK) - seen


def outstanding_cards(view: PlayerView) -> set[Card]:
    """Cards still held by the other seats (or lying in an unseen talon): not mine, not played."""
    return set(DECK) - set(view.hand) - played_cards(view)


def masters(view: PlayerView, cards: Iterable[Card] | None = None) -> set[Card]:
    """Cards of ``cards`` (default: the hand) that no unplayed card outranks in their suit.

    Cards this seat holds count as "not out": A♠ played and 10♠ in hand make 10♠ a master.
    """
    out_cards = outstanding_cards(view)
    hand = list(view.hand if cards is None else cards)
    return {c for c in hand if not any(o.suit == c.suit and o.rank > c.rank for o in out_cards)}


def trumps_by_trick(view: PlayerView) -> list[Suit | None]:
    """The trump in force at each completed trick of ``view.tricks`` (then the current one).

    Reconstructed from the declared marriages: a marriage is declared by its seat's first
    lead of that suit's K or Q, and its suit is trump from that trick on.
    """
    n = len(view.tricks)
    start_of: list[tuple[int, Suit | None]] = []
    used: set[int] = set()
    for m in view.marriages:
        seat, suit = m[0], m[1]
        if suit is None:  # the ace marriage changes no trump
            continue
        for i, t in enumerate(view.tricks):
            if i in used:
                continue
            lead_seat, lead_card = t.cards[0]
            if (
                lead_seat == seat
                and lead_card.suit == suit
                and lead_card.rank
                in (
                    Rank.KING,
                    Rank.QUEEN,
                )
            ):
                start_of.append((i, suit))
                used.add(i)
                break
        else:  # declared on the trick in progress
            start_of.append((n, suit))
    trumps: list[Suit | None] = []
    current: Suit | None = None
    starts = dict(start_of)
    for i in range(n + 1):
        if i in starts:
            current = starts[i]
        trumps.append(current)
    return trumps


def voids(view: PlayerView) -> dict[int, set[Suit]]:
    """Suits each seat has shown it lacks in this deal (by not following, or not trumping)."""
    out: dict[int, set[Suit]] = {s: set() for s in range(len(view.scores))}
    trumps = trumps_by_trick(view)
    tricks = [t.cards for t in view.tricks] + ([tuple(view.trick)] if view.trick else [])
    for i, cards in enumerate(tricks):
        trump = trumps[min(i, len(trumps) - 1)]
        led = cards[0][1].suit
        for seat, card in cards[1:]:
            if card.suit != led:
                out[seat].add(led)
                if trump is not None and card.suit != trump:
                    out[seat].add(trump)
    return out
