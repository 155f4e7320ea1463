"""Precomputed tables and interned action objects for the hot paths of :mod:`engine.game`.

Cards are ints ``0..23`` (``suit * 6 + rank``) and hands are bitmasks. Every action the
engine hands out is one of the instances built here, so ``legal_actions()`` returns shared
tuples and never creates objects while a deal is played.
"""

from __future__ import annotations

from engine.actions import Action, Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import ACE_MARRIAGE_VALUE, DECK, MARRIAGE_VALUES, Card, cards_from_mask

__all__ = [
    "ACES",
    "CARDS",
    "CONCEDE",
    "GIVE",
    "GIVE_SUIT",
    "MARRIAGE_MASK",
    "NINES",
    "PASS",
    "PLAY",
    "PLAY_DECLARE",
    "POINTS",
    "SUIT_MASK",
    "SUIT_PLAYS",
    "THROW_IN",
    "bid_actions",
    "cards_of",
    "contract_actions",
    "marriages_value",
    "mask_points",
    "round_half_up",
]

CARDS: tuple[Card, ...] = DECK
POINTS: tuple[int, ...] = tuple(c.points for c in DECK)
SUIT_MASK: tuple[int, ...] = tuple(0x3F << (6 * s) for s in range(4))
# K and Q bits of each suit (rank 3 and 2).
MARRIAGE_MASK: tuple[int, ...] = tuple((1 << (6 * s + 3)) | (1 << (6 * s + 2)) for s in range(4))
ACES: int = sum(1 << (6 * s + 5) for s in range(4))
NINES: int = sum(1 << (6 * s) for s in range(4))

PASS = Pass()
CONCEDE = Concede()
THROW_IN = ThrowIn()
PLAY: tuple[Play, ...] = tuple(Play(c) for c in CARDS)
PLAY_DECLARE: tuple[Play, ...] = tuple(Play(c, declare=True) for c in CARDS)
GIVE: tuple[tuple[Give, ...], ...] = tuple(tuple(Give(c, to) for to in range(4)) for c in CARDS)
_BIDS: dict[int, Bid] = {}
_CONTRACTS: dict[int, Contract] = {}


def _suit_plays(suit: int, key: int) -> tuple[Play, ...]:
    """The plays of one suit: ``key`` = 6 rank bits | may declare K/Q (bit 6) | ace (bit 7)."""
    out: list[Play] = []
    bits = key & 0x3F
    marriage = key >> 6 & 1 and bits & 0b001100 == 0b001100
    for rank in range(6):
        if not bits >> rank & 1:
            continue
        c = suit * 6 + rank
        out.append(PLAY[c])
        if (marriage and rank in (2, 3)) or (key >> 7 & 1 and rank == 5):
            out.append(PLAY_DECLARE[c])
    return tuple(out)


# SUIT_PLAYS[suit][key]: sorted Play tuples; a lead is the concatenation over the 4 suits.
SUIT_PLAYS: tuple[tuple[tuple[Play, ...], ...], ...] = tuple(
    tuple(_suit_plays(s, k) for k in range(256)) for s in range(4)
)

# GIVE_SUIT[target seats bitmask][suit][6 rank bits]: the sorted gives of that suit's cards.
GIVE_SUIT: tuple[tuple[tuple[tuple[Give, ...], ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple(
                GIVE[s * 6 + r][to]
                for r in range(6)
                if bits >> r & 1
                for to in range(4)
                if tm >> to & 1
            )
            for bits in range(64)
        )
        for s in range(4)
    )
    for tm in range(16)
)

_BID_TUPLES: dict[tuple[int, int, int], tuple[Action, ...]] = {}
_CONTRACT_TUPLES: dict[tuple[int, int, int, bool, bool], tuple[Action, ...]] = {}


def _bid(amount: int) -> Bid:
    b = _BIDS.get(amount)
    if b is None:
        b = _BIDS[amount] = Bid(amount)
    return b


def _contract(amount: int) -> Contract:
    c = _CONTRACTS.get(amount)
    if c is None:
        c = _CONTRACTS[amount] = Contract(amount)
    return c


def bid_actions(lo: int, hi: int, step: int) -> tuple[Action, ...]:
    """``Bid(lo), Bid(lo+step) ... <= hi`` then ``Pass()`` (cached)."""
    key = (lo, hi, step)
    t = _BID_TUPLES.get(key)
    if t is None:
        t = (*(_bid(a) for a in range(lo, hi + 1, step)), PASS)
        _BID_TUPLES[key] = t
    return t


def contract_actions(
    lo: int, hi: int, step: int, concede: bool, throw_in: bool
) -> tuple[Action, ...]:
    """``Contract(lo)``, the multiples of ``step`` above it up to ``hi``, then ``Concede()`` /
    ``ThrowIn()`` where allowed (cached). ``lo``, the winning bid, is a multiple of ``step``
    (the ruleset's bid step is a multiple of 5)."""
    key = (lo, hi, step, concede, throw_in)
    t = _CONTRACT_TUPLES.get(key)
    if t is None:
        acts: list[Action] = [_contract(a) for a in range(lo, hi + 1, step)]
        if concede:
            acts.append(CONCEDE)
        if throw_in:
            acts.append(THROW_IN)
        t = _CONTRACT_TUPLES[key] = tuple(acts)
    return t


#: The cards of a hand bitmask, ascending.
cards_of = cards_from_mask


def mask_points(mask: int) -> int:
    """Card points of a bitmask."""
    return sum(POINTS[c] for c in range(24) if mask >> c & 1)


# _MARRIAGES_IN[s][6 rank bits of suit s]: that suit's marriage value if K and Q are held.
_MARRIAGES_IN: tuple[tuple[int, ...], ...] = tuple(
    tuple(MARRIAGE_VALUES[s] if b & 0b001100 == 0b001100 else 0 for b in range(64))
    for s in range(4)
)


def marriages_value(mask: int, ace_counts: bool) -> int:
    """What the marriages in a hand add to the 120 of the bidding/contract cap."""
    m = _MARRIAGES_IN
    v = m[0][mask & 63] + m[1][mask >> 6 & 63] + m[2][mask >> 12 & 63] + m[3][mask >> 18 & 63]
    if ace_counts and mask & ACES == ACES:
        v += ACE_MARRIAGE_VALUE
    return v


def round_half_up(num: int, den: int, unit: int) -> int:
    """``num/den`` rounded half up to a multiple of ``unit`` (exact, no floats).

    >>> round_half_up(105, 2, 1), round_half_up(105, 2, 5), round_half_up(12, 1, 5)
    (53, 55, 10)
    """
    return (2 * num + unit * den) // (2 * unit * den) * unit
