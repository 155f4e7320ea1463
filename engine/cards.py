"""Cards, suits and ranks of the 24-card deck of the game 1000.

A card is an ``IntEnum`` whose value is ``suit * 6 + rank``: it is an ``int``
(``1 << card`` is its bit in a hand bitmask, which search code relies on) and
it prints as players write it.

>>> Card.HK, Card.HK.suit, Card.HK.rank, Card.HK.points
(<Card.HK: 21>, Suit.HEARTS, Rank.KING, 4)
>>> str(Card.H10), parse_card("10h"), parse_card("A♠")
('10♥', <Card.H10: 22>, <Card.SA: 5>)

A card's ``repr`` stays the enum's (``<Card.HK: 21>``): bots seed from texts of their
hands (the bundled random bot does), so a new repr would change their play; ``str`` and
:func:`format_cards` write cards as players do.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

__all__ = [
    "ACE_MARRIAGE_VALUE",
    "CARD_TEXT",
    "DECK",
    "MARRIAGE_VALUES",
    "Card",
    "CardParseError",
    "Rank",
    "Suit",
    "bit_indices",
    "card_points",
    "card_texts",
    "cards_from_mask",
    "format_cards",
    "mask_of",
    "parse_card",
    "parse_cards",
]


class CardParseError(ValueError):
    """A text that names no card, e.g. ``"11♥"`` or ``"KX"``."""


class Suit(IntEnum):
    """Suits in ascending order of their marriage value (♠ 40 … ♥ 100)."""

    SPADES = 0
    CLUBS = 1
    DIAMONDS = 2
    HEARTS = 3

    @property
    def symbol(self) -> str:
        """The suit's sign: ♠ ♣ ♦ ♥ (also what ``str(suit)`` gives)."""
        return "♠♣♦♥"[self]

    @property
    def marriage_value(self) -> int:
        """What declaring this suit's K+Q marriage scores."""
        return MARRIAGE_VALUES[self]

    def __str__(self) -> str:
        return self.symbol

    def __repr__(self) -> str:  # (not <Suit.HEARTS: 3>: the name, which evaluates to it)
        return f"Suit.{self.name}"


class Rank(IntEnum):
    """Ranks low to high: 9, J, Q, K, 10, A (the ten outranks the king)."""

    NINE = 0
    JACK = 1
    QUEEN = 2
    KING = 3
    TEN = 4
    ACE = 5

    @property
    def points(self) -> int:
        """What a card of this rank counts in a trick: 9 0, J 2, Q 3, K 4, 10 10, A 11."""
        return _RANK_POINTS[self]

    @property
    def label(self) -> str:
        """The rank as written in a card: 9 J Q K 10 A."""
        return _RANK_LABELS[self]

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:  # (not <Rank.KING: 3>)
        return f"Rank.{self.name}"


_RANK_POINTS = (0, 2, 3, 4, 10, 11)
_RANK_LABELS = ("9", "J", "Q", "K", "10", "A")
MARRIAGE_VALUES: tuple[int, int, int, int] = (40, 60, 80, 100)
#: What declaring the ace marriage (all four aces) scores.
ACE_MARRIAGE_VALUE = 200


class Card(IntEnum):
    """One of the 24 cards; the value is ``suit * 6 + rank``.

    Cards compare as their values: by suit first (♠ < ♣ < ♦ < ♥), then rank, so
    ``max(cards)`` is no strongest card: compare ``card.rank`` within a suit (or use
    ``sdk.hand.beats``), ``card.points`` for what it counts.
    """

    S9 = 0
    SJ = 1
    SQ = 2
    SK = 3
    S10 = 4
    SA = 5
    C9 = 6
    CJ = 7
    CQ = 8
    CK = 9
    C10 = 10
    CA = 11
    D9 = 12
    DJ = 13
    DQ = 14
    DK = 15
    D10 = 16
    DA = 17
    H9 = 18
    HJ = 19
    HQ = 20
    HK = 21
    H10 = 22
    HA = 23

    @staticmethod
    def of(rank: Rank, suit: Suit) -> Card:
        """The card of ``rank`` and ``suit``: ``Card.of(Rank.KING, Suit.HEARTS)`` is K♥."""
        return Card(suit * 6 + rank)

    @property
    def suit(self) -> Suit:
        """The card's :class:`Suit`."""
        return _SUIT_OF[self]

    @property
    def rank(self) -> Rank:
        """The card's :class:`Rank` (the ten outranks the king)."""
        return _RANK_OF[self]

    @property
    def points(self) -> int:
        """What the card counts in a trick (its rank's :attr:`Rank.points`)."""
        return _POINTS[self]

    def __str__(self) -> str:
        return CARD_TEXT[self]


#: Each card's text (``"K♥"``), by its value: records and logs write thousands of them, and
#: the text made from the rank and the suit was most of a match record's building.
CARD_TEXT: tuple[str, ...] = tuple(_RANK_LABELS[c % 6] + "♠♣♦♥"[c // 6] for c in range(24))
DECK: tuple[Card, ...] = tuple(Card)
_SUIT_OF: tuple[Suit, ...] = tuple(Suit(c // 6) for c in range(24))
_RANK_OF: tuple[Rank, ...] = tuple(Rank(c % 6) for c in range(24))
_POINTS: tuple[int, ...] = tuple(_RANK_POINTS[c % 6] for c in range(24))

_SUIT_TEXT = {
    "♠": Suit.SPADES, "s": Suit.SPADES,
    "♣": Suit.CLUBS, "c": Suit.CLUBS,
    "♦": Suit.DIAMONDS, "d": Suit.DIAMONDS,
    "♥": Suit.HEARTS, "h": Suit.HEARTS,
    "♤": Suit.SPADES, "♧": Suit.CLUBS, "♢": Suit.DIAMONDS, "♡": Suit.HEARTS,
    # The Russian letters, as the game's players write cards: пики, трефы (крести), бубны,
    # черви; and ranks валет, дама, король, туз.
    "п": Suit.SPADES, "т": Suit.CLUBS, "к": Suit.CLUBS, "б": Suit.DIAMONDS, "ч": Suit.HEARTS,
}  # fmt: skip
_RANK_TEXT = {
    "9": Rank.NINE, "j": Rank.JACK, "q": Rank.QUEEN, "k": Rank.KING,
    "10": Rank.TEN, "t": Rank.TEN, "a": Rank.ACE,
    "в": Rank.JACK, "д": Rank.QUEEN, "к": Rank.KING, "т": Rank.ACE,
}  # fmt: skip


def parse_card(text: str) -> Card:
    """Parse ``"K♥"``, ``"KH"``, ``"kh"``, ``"10h"`` or ``"Th"`` into a card; the Russian
    letters too (``"Д♥"``, ``"Тп"``: В Д К Т for J Q K A, п т/к б ч for ♠ ♣ ♦ ♥).

    A suit may carry an emoji variation selector, as phones and some editors type or copy
    it (``"K♥️"`` is ``"K♥\ufe0f"``), and the outlined suits are the same suits:

    >>> parse_card("K♥\ufe0f"), parse_card("10♤"), parse_card(" qd "), parse_card("Тп")
    (<Card.HK: 21>, <Card.S10: 4>, <Card.DQ: 14>, <Card.SA: 5>)
    """
    t = text.strip().replace("\ufe0f", "").replace("\ufe0e", "").lower()
    if len(t) < 2 or t[-1] not in _SUIT_TEXT or t[:-1] not in _RANK_TEXT:
        raise CardParseError(
            f"not a card: {text!r} (write rank then suit, e.g. 'K♥', 'KH', '10S', 'TD')"
        )
    return Card.of(_RANK_TEXT[t[:-1]], _SUIT_TEXT[t[-1]])


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse cards separated by spaces or commas: ``"A♠ 10♠, KH"``."""
    return tuple(parse_card(p) for p in text.replace(",", " ").split())


def format_cards(cards: Iterable[Card]) -> str:
    """Cards sorted by suit then rank, space separated; :func:`parse_cards` reads it back.

    >>> format_cards(parse_cards("KH 9S AS"))
    '9♠ A♠ K♥'
    """
    return " ".join(str(c) for c in sorted(cards))


def card_points(cards: Iterable[Card]) -> int:
    """Card points of a set of cards (the deck holds 120)."""
    return sum(_POINTS[c] for c in cards)


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask of a set of cards (bit ``c`` set for card ``c``)."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_from_mask(mask: int) -> tuple[Card, ...]:
    """The cards of a bitmask, in ascending order (bits past the deck's 24 ignored).

    Three lookups, one per byte of the mask, in tables of every byte's cards: ``observe``
    makes every hand with it, and a sampling bot every hand of thousands of sampled deals
    a decision.
    """
    low, mid, high = _BYTE_CARDS
    return low[mask & 255] + mid[mask >> 8 & 255] + high[mask >> 16 & 255]


#: For each byte of a mask (cards 0–7, 8–15, 16–23), the cards of each of its 256 values.
_BYTE_CARDS: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(tuple(DECK[8 * b + i] for i in range(8) if v >> i & 1) for v in range(256))
    for b in range(3)
)


#: :data:`_BYTE_CARDS` as the cards' texts.
_BYTE_TEXTS: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(CARD_TEXT[c] for c in cards) for cards in table) for table in _BYTE_CARDS
)


def card_texts(mask: int) -> list[str]:
    """The texts of the cards of a bitmask, ascending: ``[str(c) for c in
    cards_from_mask(mask)]`` by three lookups (a record holds every hand of every deal).

    >>> card_texts(1 << Card.SA | 1 << Card.HK)
    ['A♠', 'K♥']
    """
    low, mid, high = _BYTE_TEXTS
    return [*low[mask & 255], *mid[mask >> 8 & 255], *high[mask >> 16 & 255]]


def bit_indices(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, ascending (card values of a hand mask).

    Walks only the set bits, which is what search code over hand masks wants.

    >>> bit_indices(1 << Card.SA | 1 << Card.HK)
    [5, 21]
    """
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
