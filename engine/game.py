"""The state of one match and the two doors that change it.

``Game.apply`` validates and refuses bad actions with a typed
:class:`~engine.errors.IllegalActionError` (the state stays unchanged);
``Game.apply_trusted`` is the fast door for search, for actions taken from
``legal_actions()``. Internally cards are ints ``0..23`` and hands bitmasks.

>>> g = Game.new("classic", seed=7, players=["a", "b", "c"])
>>> g.phase, g.deal_number, len(g.legal_actions()) > 1
(Phase.BIDDING, 0, True)
>>> while not g.is_over and g.deal_number == 0:
...     g.apply_trusted(g.legal_actions()[0])
>>> len(g.deal_results), sum(g.deal_results[0].card_points)
(1, 120)
"""

from __future__ import annotations

import hashlib
import random
import reprlib
import struct
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import add, index, sub
from typing import Any, NamedTuple

from engine.actions import Action, Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import ACE_MARRIAGE_VALUE, MARRIAGE_VALUES, Card, Suit, mask_of, parse_card
from engine.errors import (
    AlreadyPassedError,
    BidError,
    CardNotHeldError,
    ConcedeError,
    ContractError,
    GameOverError,
    GiveError,
    IllegalActionError,
    MarriageError,
    NotAnActionError,
    NotYourTurnError,
    PlayError,
    ThrowInError,
    WrongPhaseError,
)
from engine.rules import Ruleset, preset
from engine.tables import (
    ACES,
    CARDS,
    GIVE_SUIT,
    MARRIAGE_MASK,
    NINES,
    POINTS,
    SUIT_PLAYS,
    THROW_IN,
    bid_actions,
    cards_of,
    contract_actions,
    marriages_value,
    mask_points,
    round_half_up,
)

__all__ = [
    "PHASE_ACTIONS",
    "DealResult",
    "Game",
    "GameResult",
    "Phase",
    "Trick",
    "cap_of",
    "shuffled_deck",
    "talon_score",
    "trick_winner",
]

# Seats dealt in (first hand first) and the next seat to play, per player count and dealer.
_ACTIVE: dict[int, tuple[tuple[int, ...], ...]] = {
    3: tuple(((d + 1) % 3, (d + 2) % 3, d) for d in range(3)),
    4: tuple(((d + 1) % 4, (d + 2) % 4, (d + 3) % 4) for d in range(4)),
}
_NEXT: dict[int, tuple[tuple[int, ...], ...]] = {
    n: tuple(tuple(a[(a.index(s) + 1) % 3] if s in a else -1 for s in range(n)) for a in _ACTIVE[n])
    for n in (3, 4)
}


def cap_of(mask: int, ruleset: Ruleset) -> int:
    """The highest bid or contract the hand ``mask`` allows (RULES.md §2): 120 plus its
    marriages, and the ace marriage's 200 where it is played and counts for the bid."""
    return 120 + marriages_value(mask, ruleset.ace_marriage and ruleset.ace_marriage_counts_for_bid)


def shuffled_deck(seed: int | str, deal_number: int) -> list[int]:
    """The deck order of deal ``deal_number``: hands are dealt 7 by 7 from it, first hand
    first, then the talon (the last 3 cards).

    Card ``c`` gets the sort key ``k[c]``, the ``c``-th little-endian 32-bit word of the
    SHAKE-256 digest of ``f"{seed}:{deal_number}"`` (ties, about 1 in 10**7 deals, keep card
    order). The same on every platform and Python version, and several times cheaper than
    seeding a ``random.Random`` per deal.

    >>> shuffled_deck(42, 0) == shuffled_deck(42, 0) != shuffled_deck(42, 1)
    True
    >>> sorted(shuffled_deck("x", 3)) == list(range(24))
    True
    """
    keys = _UNPACK_KEYS(hashlib.shake_256(f"{seed}:{deal_number}".encode()).digest(96))
    return sorted(range(24), key=keys.__getitem__)


_UNPACK_KEYS = struct.Struct("<24I").unpack


def _shuffled_masks(seed_key: bytes, deal_number: int) -> list[int]:
    """:func:`shuffled_deck` as 24 sortable words ``k[c] << 32 | 1 << c``, sorted.

    The same order as ``shuffled_deck`` (key, then card on a tie), but the deal needs no
    Python loop: the words are built by copying the digest's 32-bit words into the high
    halves of a template holding ``1 << c`` in the low halves (a plain byte copy, so the
    host's byte order does not matter), sorted in C, and a hand's mask is the low 24 bits
    of the sum of its 7 words (the low halves are distinct bits, so nothing carries).
    ``seed_key`` is ``f"{seed}:".encode()``.
    """
    buf = bytearray(_MASK_TEMPLATE)
    digest = hashlib.shake_256(seed_key + b"%d" % deal_number).digest(96)
    memoryview(buf).cast("I")[1::2] = memoryview(digest).cast("I")
    return sorted(_UNPACK_WORDS(buf))


_MASK_TEMPLATE = b"".join((1 << c).to_bytes(4, "little") + bytes(4) for c in range(24))
_UNPACK_WORDS = struct.Struct("<24Q").unpack

_ACTION_TYPES = (Bid, Pass, Give, Contract, Concede, ThrowIn, Play)
_FULL_DECK = (1 << 24) - 1
# A sitter on the barrel wins only with a contract of at least this much (RULES.md).
_BARREL_WIN_CONTRACT = 120
#: Contracts are multiples of 5 whatever the bid step (RULES.md, "Contract"): a declarer
#: must be able to name 120 (the barrel's winning contract) or his cap under any step.
CONTRACT_STEP = 5


def _beats(trump: int, best: int, c: int) -> bool:
    if c // 6 == best // 6:
        return c > best
    return c // 6 == trump


# _BEATS[trump][best][card]: does ``card`` take the trick from ``best``? (trump -1: none;
# Python's index -1 is the last row, which is why there are 5 rows.)
_BEATS: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(
    tuple(tuple(_beats(t, b, c) for c in range(24)) for b in range(24)) for t in (0, 1, 2, 3, -1)
)


def trick_winner(cards: Sequence[int], trump: int | None) -> int:
    """The position in ``cards`` (a trick in play order, non-empty, possibly unfinished) of
    the card taking it (RULES.md §7): the highest trump, else the highest of the led suit.

    >>> trick_winner([Card.HK, Card.HA, Card.S9], trump=Suit.SPADES)
    2
    """
    # A public helper (rule cases, bots): a bool, -2 or a text would index the tables as
    # another card or suit, or fail with a bare TypeError.
    if not 0 < len(cards) <= 3:
        raise ValueError(f"trick_winner: a trick holds 1 to 3 cards, got {len(cards)}")
    if trump is None:
        beats = _BEATS[-1]
    elif isinstance(trump, bool) or not isinstance(trump, int) or not 0 <= trump < 4:
        raise ValueError(f"trick_winner: trump must be a Suit or None, got {trump!r}")
    else:
        beats = _BEATS[trump]
    for c in cards:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 24:
            raise ValueError(f"trick_winner: not a card: {c!r} (a Card, or an int 0..23)")
    best = 0
    for i in range(1, len(cards)):
        if beats[cards[best]][cards[i]]:
            best = i
    return best


# _RANKS_ABOVE[card]: the rank bits (of its suit) higher than ``card``'s rank.
_RANKS_ABOVE: tuple[int, ...] = tuple(63 ^ ((2 << (c % 6)) - 1) for c in range(24))


class Phase(Enum):
    """Where a deal stands; ``GAME_OVER`` once the match has a result."""

    BIDDING = "bidding"
    PASSING = "passing"
    CONTRACT = "contract"
    PLAYING = "playing"
    GAME_OVER = "game_over"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:  # (not <Phase.BIDDING: 'bidding'>: the name, which is it)
        return f"Phase.{self.name}"


_BIDDING, _PASSING, _CONTRACT, _PLAYING, _OVER = (
    Phase.BIDDING, Phase.PASSING, Phase.CONTRACT, Phase.PLAYING, Phase.GAME_OVER,
)  # fmt: skip
#: The kinds of action a seat may answer in each phase (the first check of
#: :meth:`Game.apply`; a client's check of the legal actions it is offered, sdk.client).
PHASE_ACTIONS: dict[Phase, tuple[type, ...]] = {
    Phase.BIDDING: (Bid, Pass),
    # The last hand who took the talon after an all-pass may throw in as soon as he has seen
    # it ("просмотрев карты", the 1001 text), and still after passing his two cards.
    Phase.PASSING: (Give, ThrowIn),
    Phase.CONTRACT: (Contract, Concede, ThrowIn),
    Phase.PLAYING: (Play,),
    Phase.GAME_OVER: (),
}
_THROW_IN_ONLY = (THROW_IN,)


class Trick(NamedTuple):
    """A completed trick: who led, the cards in play order, who won it."""

    leader: int
    cards: tuple[tuple[int, Card], ...]
    winner: int


#: Every ``DealResult.outcome``, as records write it.
OUTCOMES = ("made", "failed", "conceded", "thrown_in")


@dataclass(frozen=True, slots=True)
class DealResult:
    """How one deal ended and what it scored (public information only).

    ``outcome``: ``"made"``, ``"failed"``, ``"conceded"`` or ``"thrown_in"``. ``contract`` is
    ``None`` when the declarer conceded or threw in. ``card_points`` / ``marriage_points`` /
    ``takes`` are per seat (take = card points + marriages, unrounded); ``deltas`` are the
    actual score changes after rounding and barrel rules; ``barrel`` the deals left on the
    barrel per seat after the deal (``None`` without barrel); ``events`` name barrel events.
    """

    number: int
    dealer: int
    declarer: int
    bid: int
    contract: int | None
    outcome: str
    card_points: tuple[int, ...]
    marriage_points: tuple[int, ...]
    takes: tuple[int, ...]
    deltas: tuple[int, ...]
    scores: tuple[int, ...]
    barrel: tuple[int, ...] | None
    events: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GameResult:
    """The end of a match: places 1, 1, 3 style; shortfall = target - score (0 for the winner).

    ``winner`` is ``None`` when several seats share the first place. ``reason`` is
    ``"target"`` or ``"max_deals"``.
    """

    scores: tuple[int, ...]
    places: tuple[int, ...]
    shortfalls: tuple[int, ...]
    winner: int | None
    deals: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The ``result`` object of a match record."""
        return {
            "scores": list(self.scores),
            "places": list(self.places),
            "shortfalls": list(self.shortfalls),
            "winner": self.winner,
            "deals": self.deals,
            "reason": self.reason,
        }


class DealLog(NamedTuple):
    """What :meth:`Game.record` writes for a finished deal."""

    number: int
    dealer: int
    hands: tuple[int, ...]
    talon: int
    seats: bytes  # who took each action of ``acts``
    acts: tuple[Action, ...]
    deltas: tuple[int, ...]
    scores: tuple[int, ...]

    @property
    def actions(self) -> tuple[tuple[int, Action], ...]:
        """``(seat, action)`` in order."""
        return tuple(zip(self.seats, self.acts, strict=True))


_new_tuple = tuple.__new__


def _to_card(x: Card | int | str) -> int:
    if isinstance(x, str):
        return int(parse_card(x))
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 24:
        raise ValueError(f"not a card: {x!r}")
    return int(x)


def drawn_dealer(seed: int | str, players: int) -> int:
    """The first dealer a match of ``seed`` draws when none is given (see ``Game.new``)."""
    return random.Random(f"{seed}:dealer").randrange(players)


#: The actions of an auction (``Game.auction``).
_AUCTION = (Bid, Pass)


class Game:
    """One match: deals, bidding, talon, passing, contract, play, scoring, the end."""

    __slots__ = (
        "_active",
        "_acts",
        "_barrel",
        "_best",
        "_best_seat",
        "_bid",
        "_bids",
        "_caps",
        "_contract",
        "_dealt",
        "_declarer",
        "_explicit",
        "_first_dealer",
        "_given",
        "_gives",
        "_hands",
        "_high",
        "_last_hand_take",
        "_leader",
        "_logs",
        "_made_gives",
        "_made_results",
        "_made_tricks",
        "_marr",
        "_marriages",
        "_must_beat",
        "_next",
        "_npassed",
        "_ntricks",
        "_passed",
        "_points",
        "_results",
        "_scores",
        "_seats",
        "_seed_key",
        "_standing",
        "_start",
        "_talon",
        "_trick",
        "_tricks",
        "_trump",
        "_won",
        "_won_nonace",
        "deal_number",
        "dealer",
        "is_over",
        "n",
        "phase",
        "players",
        "result",
        "ruleset",
        "seed",
        "to_act",
    )  # fmt: skip

    ruleset: Ruleset
    seed: int | str
    players: tuple[str, ...]
    n: int
    deal_number: int
    dealer: int
    phase: Phase
    to_act: int | None
    result: GameResult | None
    # ``phase is Phase.GAME_OVER``, kept as a plain attribute (set by _finish): callers read
    # it before every decision, and a slot is several times cheaper to read than a property.
    is_over: bool
    _first_dealer: int
    _scores: list[int]
    _barrel: list[int]
    _start: tuple[tuple[int, ...], tuple[int, ...]]
    # A finished deal's DealResult is built when first asked for (see deal_results): until
    # then its fields wait as a plain tuple, much cheaper to make than a frozen dataclass.
    _results: list[DealResult | tuple[Any, ...]]
    # ``deal_results`` as last returned (the same tuple until a deal is scored).
    _made_results: tuple[DealResult, ...]
    _logs: list[DealLog]
    _explicit: dict[int, tuple[tuple[int, ...], int]]  # Game.new's deals: number -> masks
    _dealt: tuple[int, ...]  # hand masks as dealt, per seat
    _talon: int
    _hands: list[int]  # hand masks now, per seat
    _active: tuple[int, ...]
    _next: tuple[int, ...]  # per seat, the next active seat (-1 for the sitting dealer)
    # The deal's actions and who took them, in two lists (two appends are cheaper than a
    # (seat, action) pair per decision, and there is no pair object to keep alive).
    _seats: bytearray
    _acts: list[Action]
    # The seat, suit and card fields below hold -1 for none.
    _standing: int  # the standing bid (0: none yet)
    _high: int  # who holds it
    _passed: int  # bitmask of the seats that passed
    _npassed: int
    _caps: list[int]  # per seat, the highest bid its dealt hand allows (cap_of)
    _declarer: int
    _bid: int
    _contract: int
    _gives: list[tuple[int, int]]  # (to, card) per card the declarer passed
    _made_gives: tuple[tuple[int, Card], ...]  # ``gives`` as last returned
    _given: int  # bitmask of the seats given a card
    _last_hand_take: bool
    _trump: int
    # The trick in progress: its cards and who led it (the seats follow from _next).
    _trick: list[int]
    _leader: int
    _best: int  # the card taking the trick in progress so far
    _best_seat: int  # and who played it
    # Completed tricks, flat: leader, 3 cards, winner per trick (no tuples kept alive).
    _tricks: list[int]
    _bids: tuple[int, tuple[tuple[int, Action], ...]]  # (actions scanned, `auction()` of them)
    _made_tricks: tuple[Trick, ...]  # the Trick objects of `tricks`, made when asked for
    _points: list[int]  # card points won this deal, per seat
    _marr: list[int]  # marriage points declared this deal, per seat
    _marriages: list[tuple[int, int]]
    _won: int  # bitmask of the seats that have taken a trick this deal
    _won_nonace: int  # ... with a card other than an ace (the ace marriage needs one)
    _ntricks: int
    _seed_key: bytes  # what the deals' shuffles are drawn from (see _shuffled_masks)
    _must_beat: bool

    # ------------------------------------------------------------------ creation
    @classmethod
    def new(
        cls,
        ruleset: Ruleset | str,
        seed: int | str,
        players: Sequence[str],
        *,
        deals: Mapping[int, tuple[Sequence[Sequence[Card | int | str]], Sequence[Card | int | str]]]
        | None = None,
        scores: Sequence[int] | None = None,
        barrel: Sequence[int] | None = None,
        dealer: int | None = None,
    ) -> Game:
        """A new match, its first deal dealt.

        ``ruleset`` is a :class:`Ruleset` or a preset name; ``players`` one name per seat.
        ``deals`` maps a deal number (the first deal is 0) to explicit ``(hands, talon)`` (one
        hand per seat, the 4-player dealer's empty; a hand is a sequence of cards, e.g.
        ``parse_cards("A♠ 10♠ K♠")``) used instead of the shuffle; they must partition the deck.
        The first dealer is ``dealer`` if given (a seat number: a rule case's set-up), else
        drawn from ``random.Random(f"{seed}:dealer")``; deal ``k`` is dealt from
        :func:`shuffled_deck` ``(seed, k)``.
        ``scores`` and ``barrel`` (deals left on the barrel per seat, 0 = not on it) start
        the match from a position other than 0:0:0, e.g. to replay a game from a bug
        report or to let a search bot simulate the rest of a match; the record keeps them
        (and a given ``dealer``).
        """
        if isinstance(players, str) or not isinstance(players, Iterable):
            # tuple("abc") would seat three players named "a", "b" and "c"; tuple(3) is a bare
            # TypeError naming no argument (players=3 for "3 players").
            raise ValueError(f"players must be a sequence of names, one per seat, got {players!r}")
        names = tuple(players)
        bad = [n for n in names if not isinstance(n, str)]
        if bad:  # b"abc" seated players named 97, 98 and 99; a None a player named None
            shown = repr(bad[0]) if len(repr(bad[0])) <= 100 else repr(bad[0])[:100] + "..."
            raise ValueError(f"players must be names (texts), one per seat, got {shown}")
        if isinstance(ruleset, str):
            ruleset = preset(ruleset, len(names))  # "1001" with 4 names: "1001-4p"
        if not isinstance(ruleset, Ruleset):
            raise TypeError(f"ruleset must be a Ruleset or a preset name, got {ruleset!r}")
        if isinstance(seed, bool) or not isinstance(seed, int | str):
            raise TypeError(f"seed must be an int or a str, got {seed!r}")
        if len(names) != ruleset.players:
            raise ValueError(
                f"ruleset {ruleset.name!r} is for {ruleset.players} players, got {len(names)}"
            )
        g = cls.__new__(cls)
        g.ruleset = ruleset
        g.seed = seed
        g.players = names
        g.n = n = ruleset.players
        g.deal_number = 0
        g._seed_key = f"{seed}:".encode()
        g._must_beat = ruleset.must_beat
        if dealer is None:
            g._first_dealer = drawn_dealer(seed, n)
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat number (0..{n - 1}), got {dealer!r}")
        else:
            g._first_dealer = dealer
        g._scores = _start_values("scores", scores, n)
        g._barrel = _start_values("barrel", barrel, n)
        _check_barrel_counts(ruleset, g._barrel)
        _check_start(ruleset, g._scores, g._barrel)
        g._start = (tuple(g._scores), tuple(g._barrel))
        g._results = []
        g._made_results = ()
        g._logs = []
        g.result = None
        g.is_over = False
        g._explicit = {}
        if deals is not None and not isinstance(deals, Mapping):
            raise ValueError(
                "deals must map a deal number to (hands, talon), e.g. {0: (hands, talon)}, "
                f"got {type(deals).__name__}"
            )
        for number, cards in (deals or {}).items():
            # -1, True (== 1) or 0.0 (== 0) would be kept and silently ignored or used.
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise ValueError(
                    f"deals: {number!r} is not a deal number (an int; the first deal is 0)"
                )
            if isinstance(cards, str) or not isinstance(cards, Sequence) or len(cards) != 2:
                raise ValueError(
                    f"deals: deal {number} must be a pair (hands, talon), got {reprlib.repr(cards)}"
                )
            hands, talon = cards
            g._explicit[number] = _check_deal(number, hands, talon, n, g._dealer_of(number))
        g._deal()
        return g

    @property
    def first_dealer(self) -> int:
        """The dealer of the first deal (the seed's draw unless ``Game.new`` was given one)."""
        return self._first_dealer

    @property
    def start(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The scores and barrel counters the match started from (zeros by default)."""
        return self._start

    def _dealer_of(self, number: int) -> int:
        return (self._first_dealer + number) % self.n

    def _seed_deal(self, number: int) -> tuple[tuple[int, ...], int]:
        """Deal ``number`` as the seed deals it: (hands as masks by seat, talon mask)."""
        n = self.n
        active = _ACTIVE[n][self._dealer_of(number)]
        w = _shuffled_masks(self._seed_key, number)
        hands = [0] * n
        hands[active[0]] = sum(w[0:7]) & _FULL_DECK
        hands[active[1]] = sum(w[7:14]) & _FULL_DECK
        hands[active[2]] = sum(w[14:21]) & _FULL_DECK
        return tuple(hands), sum(w[21:]) & _FULL_DECK

    def _deal(self) -> None:
        n = self.n
        num = self.deal_number
        d = self.dealer = (self._first_dealer + num) % n
        active = self._active = _ACTIVE[n][d]
        self._next = _NEXT[n][d]
        explicit = self._explicit.get(num) if self._explicit else None
        if explicit is None:
            explicit = self._seed_deal(num)
        dealt, talon = explicit
        hands = list(dealt)
        self._dealt = dealt
        self._talon = talon
        self._hands = hands
        self._seats = bytearray()
        self._acts = []
        self._bids = (0, ())
        r = self.ruleset
        caps = [0] * n
        for s in active:
            caps[s] = cap_of(dealt[s], r)
        self._caps = caps
        self._passed = self._npassed = self._bid = self._contract = self._given = 0
        self._declarer = self._trump = self._best = self._best_seat = self._leader = -1
        self._gives = []
        self._made_gives = ()
        self._last_hand_take = False
        self._trick = []
        self._tricks = []
        self._made_tricks = ()
        self._points = [0] * n
        self._marr = [0] * n
        self._marriages = []
        self._won = self._won_nonace = self._ntricks = 0
        self.phase = _BIDDING
        if r.first_hand_commits:
            self._standing = r.opening_bid
            self._high = active[0]
            self.to_act = active[1]
        else:
            self._standing = 0
            self._high = -1
            self.to_act = active[0]

    def clone(self) -> Game:
        """An independent copy (cheap: the finished history is shared, it never changes)."""
        g = Game.__new__(Game)
        g.ruleset = self.ruleset
        g.seed = self.seed
        g.players = self.players
        g.n = self.n
        g.deal_number = self.deal_number
        g._seed_key = self._seed_key
        g._must_beat = self._must_beat
        g.dealer = self.dealer
        g.phase = self.phase
        g.to_act = self.to_act
        g.result = self.result
        g.is_over = self.is_over
        g._first_dealer = self._first_dealer
        g._scores = self._scores[:]
        g._barrel = self._barrel[:]
        g._start = self._start
        g._results = self._results[:]
        g._made_results = self._made_results
        g._logs = self._logs[:]
        g._explicit = self._explicit
        g._dealt = self._dealt
        g._talon = self._talon
        g._hands = self._hands[:]
        g._active = self._active
        g._next = self._next
        g._seats = self._seats[:]
        g._acts = self._acts[:]
        g._bids = self._bids
        g._standing = self._standing
        g._high = self._high
        g._passed = self._passed
        g._npassed = self._npassed
        g._caps = self._caps[:]
        g._declarer = self._declarer
        g._bid = self._bid
        g._contract = self._contract
        g._gives = self._gives[:]
        g._made_gives = self._made_gives
        g._given = self._given
        g._last_hand_take = self._last_hand_take
        g._trump = self._trump
        g._trick = self._trick[:]
        g._leader = self._leader
        g._best = self._best
        g._best_seat = self._best_seat
        g._tricks = self._tricks[:]
        g._made_tricks = self._made_tricks
        g._points = self._points[:]
        g._marr = self._marr[:]
        g._marriages = self._marriages[:]
        g._won = self._won
        g._won_nonace = self._won_nonace
        g._ntricks = self._ntricks
        return g

    # ------------------------------------------------------------------ read-only state
    @property
    def scores(self) -> tuple[int, ...]:
        """Match scores per seat."""
        return tuple(self._scores)

    @property
    def deal_results(self) -> tuple[DealResult, ...]:
        """Every finished deal of this match, in order."""
        res = self._results
        made = self._made_results
        # The same tuple until a deal is scored (every view holds it): ``_results`` only
        # grows, and what it holds is converted in place before the tuple is made.
        if len(made) == len(res):
            return made
        # Build the DealResults _score left as tuples; they are always the newest ones.
        i = len(res) - 1
        while i >= 0:
            fields = res[i]
            if not isinstance(fields, tuple):
                break
            res[i] = DealResult(*fields)
            i -= 1
        made = self._made_results = tuple(res)  # type: ignore[arg-type]  # all DealResults now
        return made

    @property
    def barrel(self) -> tuple[int, ...] | None:
        """Deals left on the barrel per seat (0 = not on it); ``None`` without barrel."""
        return tuple(self._barrel) if self.ruleset.barrel else None

    @property
    def active_seats(self) -> tuple[int, ...]:
        """Seats dealt into this deal, first hand first (4 players: all but the dealer)."""
        return self._active

    @property
    def first_hand(self) -> int:
        return self._active[0]

    @property
    def declarer(self) -> int | None:
        return None if self._declarer < 0 else self._declarer

    @property
    def bid(self) -> int | None:
        """The winning bid once bidding ended, else the standing bid (``None``: none yet)."""
        if self._declarer >= 0:
            return self._bid
        return self._standing or None

    @property
    def high_bidder(self) -> int | None:
        """Who holds the standing bid during the auction."""
        return None if self._high < 0 else self._high

    @property
    def contract(self) -> int | None:
        return self._contract or None

    @property
    def trump(self) -> Suit | None:
        return None if self._trump < 0 else Suit(self._trump)

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards seat ``seat`` holds now (the full state, not a player's view)."""
        return cards_of(self._hands[seat])

    def hand_mask(self, seat: int) -> int:
        """The bitmask of ``hand(seat)``."""
        return self._hands[seat]

    @property
    def talon(self) -> tuple[Card, ...]:
        """The three talon cards of this deal (the full state)."""
        return cards_of(self._talon)

    @property
    def talon_score(self) -> int:
        """What the talon of this deal scores the dealer who sits it out (4 players):
        ``nines_talon_value`` for three nines, else its card points (RULES.md)."""
        return _talon_score(self._talon, self.ruleset)

    @property
    def dealt_hands(self) -> tuple[tuple[Card, ...], ...]:
        """The hands as dealt (before the talon and the passing)."""
        return tuple(cards_of(m) for m in self._dealt)

    @property
    def actions(self) -> tuple[tuple[int, Action], ...]:
        """``(seat, action)`` of this deal so far."""
        return tuple(zip(self._seats, self._acts, strict=True))

    def auction(self) -> tuple[tuple[int, Action], ...]:
        """``(seat, Bid or Pass)`` of this deal so far, in order (a view's ``bids``): made
        as the actions come and kept, so the same tuple until the next bid or pass."""
        acts = self._acts
        done, bids = self._bids
        if done != len(acts):
            seats = self._seats
            new = tuple(
                (seats[i], a) for i in range(done, len(acts)) if isinstance(a := acts[i], _AUCTION)
            )
            if new:
                bids += new
            self._bids = (len(acts), bids)
        return bids

    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The trick in progress: ``(seat, card)`` in play order."""
        return self._trick_cards(self._leader, self._trick)

    def _trick_cards(self, leader: int, cards: Sequence[int]) -> tuple[tuple[int, Card], ...]:
        out = []
        s = leader
        for c in cards:
            out.append((s, CARDS[c]))
            s = self._next[s]
        return tuple(out)

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The completed tricks of this deal."""
        # Made once each (every view of the rest of the deal holds them), when first asked
        # for: ``_tricks`` only grows within a deal, and both are reset with it.
        t = self._tricks
        made = self._made_tricks
        done = len(made) * 5
        if done != len(t):
            made = self._made_tricks = made + tuple(
                Trick(t[i], self._trick_cards(t[i], t[i + 1 : i + 4]), t[i + 4])
                for i in range(done, len(t), 5)
            )
        return made

    @property
    def marriages(self) -> tuple[tuple[int, Suit | None], ...]:
        """Declared marriages of this deal: ``(seat, suit)``; ``None`` is the ace marriage."""
        if not self._marriages:  # (most views: no generator made for nothing)
            return ()
        return tuple((s, None if x < 0 else Suit(x)) for s, x in self._marriages)

    @property
    def gives(self) -> tuple[tuple[int, Card], ...]:
        """The declarer's passed cards: ``(to, card)``."""
        # The same tuple until the next give (every view of the rest of the deal holds it):
        # ``_gives`` only grows within a deal, and both are reset with it.
        g = self._gives
        made = self._made_gives
        if len(made) != len(g):
            made = self._made_gives = tuple((to, CARDS[c]) for to, c in g)
        return made

    @property
    def passed(self) -> tuple[int, ...]:
        """Seats that passed in this deal's auction."""
        return tuple(s for s in range(self.n) if self._passed >> s & 1)

    @property
    def last_hand_take(self) -> bool:
        """1001: the declarer took the talon after an all-pass (may throw in)."""
        return self._last_hand_take

    def card_points(self, seat: int) -> int:
        """Card points in the tricks ``seat`` has won this deal."""
        return self._points[seat]

    def marriage_points(self, seat: int) -> int:
        """What the marriages ``seat`` has declared this deal score, added up."""
        return self._marr[seat]

    def record(self) -> dict[str, Any]:
        """The JSON-safe match record (see ``docs/record-format.md``)."""
        from engine.record import record  # the record module imports this one

        return record(self)

    def __repr__(self) -> str:
        return (
            f"<Game {self.ruleset.name} seed={self.seed!r} deal={self.deal_number} "
            f"phase={self.phase.value} to_act={self.to_act} scores={self._scores}>"
        )

    # ------------------------------------------------------------------ legal actions
    def legal_actions(self) -> tuple[Action, ...]:
        """The legal actions of the seat to act, sorted by ``action_sort_key`` (shared tuples)."""
        phase = self.phase
        if phase is _PLAYING:
            seat = self.to_act
            assert seat is not None
            hand = self._hands[seat]
            sp = SUIT_PLAYS
            trick = self._trick
            if trick:
                led = trick[0] // 6
                bits = hand >> (6 * led) & 63
                suit = led
                if not bits:
                    trump = self._trump
                    if trump >= 0:
                        bits = hand >> (6 * trump) & 63
                        suit = trump
                    if not bits:
                        return (
                            sp[0][hand & 63]
                            + sp[1][hand >> 6 & 63]
                            + sp[2][hand >> 12 & 63]
                            + sp[3][hand >> 18 & 63]
                        )
                if self._must_beat:
                    best = self._best
                    if best // 6 == suit:
                        beat = bits & _RANKS_ABOVE[best]
                        if beat:
                            bits = beat
                return sp[suit][bits]
            # A lead: declaring flags (bit 6: marriages, bit 7: ace marriage).
            r = self.ruleset
            f = 64 if (not r.marriage_needs_trick or self._won >> seat & 1) else 0
            if r.ace_marriage and hand & ACES == ACES and self._won_nonace >> seat & 1:
                f |= 128
            return (
                sp[0][(hand & 63) | f]
                + sp[1][(hand >> 6 & 63) | f]
                + sp[2][(hand >> 12 & 63) | f]
                + sp[3][(hand >> 18 & 63) | f]
            )
        if phase is _BIDDING:
            seat = self.to_act
            assert seat is not None
            r = self.ruleset
            step = r.bid_step
            lo = self._standing + step if self._standing else r.opening_bid
            return bid_actions(lo, self._caps[seat], step)
        if phase is _PASSING:
            hand = self._hands[self._declarer]
            tm = 0
            for s in self._active:
                if s != self._declarer and not self._given >> s & 1:
                    tm |= 1 << s
            gs = GIVE_SUIT[tm]
            gives = (
                gs[0][hand & 63]
                + gs[1][hand >> 6 & 63]
                + gs[2][hand >> 12 & 63]
                + gs[3][hand >> 18 & 63]
            )
            return gives + _THROW_IN_ONLY if self._last_hand_take else gives
        if phase is _CONTRACT:
            r = self.ruleset
            cap = cap_of(self._hands[self._declarer], r)
            bid = self._bid
            lth = self._last_hand_take
            return contract_actions(
                bid, max(bid, cap), CONTRACT_STEP, r.concede != "off" and not lth, lth
            )
        return ()

    # ------------------------------------------------------------------ the fast door
    def apply_trusted(self, action: Action) -> None:
        """Apply an action known to be legal (taken from ``legal_actions()``); no checks."""
        phase = self.phase
        if phase is not _PLAYING:
            if phase is _BIDDING:
                self._bidding(action)
            elif phase is _PASSING:
                if type(action) is ThrowIn:  # (before or between the gives: see PHASE_ACTIONS)
                    self._contract_phase(action)
                else:
                    self._give(action)  # type: ignore[arg-type]
            elif phase is _CONTRACT:
                self._contract_phase(action)
            else:
                raise GameOverError(action, None, "the match is over", ())
            return
        # The play is inlined here: it is most of the decisions of a deal.
        seat: int = self.to_act  # type: ignore[assignment]
        c: int = action.card  # type: ignore[union-attr]
        self._seats.append(seat)
        self._acts.append(action)
        self._hands[seat] ^= 1 << c
        if action.declare:  # type: ignore[union-attr]
            self._declare(seat, c)
        trick = self._trick
        trick.append(c)
        n = len(trick)
        if n == 1:
            self._best = c
            self._best_seat = self._leader = seat
            self.to_act = self._next[seat]
            return
        if _BEATS[self._trump][self._best][c]:
            self._best = c
            self._best_seat = seat
        if n < 3:
            self.to_act = self._next[seat]
            return
        w = self._best_seat
        c0, c1, _ = trick
        self._points[w] += POINTS[c0] + POINTS[c1] + POINTS[c]
        self._tricks += (self._leader, c0, c1, c, w)
        self._won |= 1 << w
        if self._best % 6 != 5:
            self._won_nonace |= 1 << w
        trick.clear()
        self._ntricks += 1
        if self._ntricks == 8:
            self._score("played")
        else:
            self.to_act = w

    def _declare(self, seat: int, c: int) -> None:
        if c % 6 == 5:
            self._marr[seat] += ACE_MARRIAGE_VALUE
            self._marriages.append((seat, -1))
        else:
            s = c // 6
            self._marr[seat] += MARRIAGE_VALUES[s]
            self._trump = s
            self._marriages.append((seat, s))

    def _bidding(self, action: Action) -> None:
        seat = self.to_act
        assert seat is not None
        self._seats.append(seat)
        self._acts.append(action)
        if type(action) is Bid:
            self._standing = action.amount
            self._high = seat
        else:
            self._passed |= 1 << seat
            self._npassed += 1
        nact = 3
        npassed = self._npassed
        if npassed >= nact - 1:
            r = self.ruleset
            if self._high >= 0:
                if npassed == nact - 1:
                    self._take_talon(self._high, self._standing, False)
                    return
            elif npassed == nact:
                # all_pass = "first_hand": everybody passed, first hand plays the opening bid.
                self._take_talon(self._active[0], r.opening_bid, False)
                return
            elif r.all_pass == "last_hand":
                last = next(s for s in self._active if not self._passed >> s & 1)
                self._take_talon(last, r.opening_bid, True)
                return
        nxt = self._next
        s = nxt[seat]
        while self._passed >> s & 1:
            s = nxt[s]
        self.to_act = s

    def _take_talon(self, declarer: int, bid: int, last_hand: bool) -> None:
        self._declarer = declarer
        self._bid = bid
        self._last_hand_take = last_hand
        self._hands[declarer] |= self._talon
        self.phase = _PASSING
        self.to_act = declarer

    def _give(self, action: Give) -> None:
        d = self._declarer
        self._seats.append(d)
        self._acts.append(action)
        c = action.card
        to = action.to
        self._hands[d] ^= 1 << c
        self._hands[to] |= 1 << c
        self._gives.append((to, c))
        self._given |= 1 << to
        if len(self._gives) == 2:
            self.phase = _CONTRACT

    def _contract_phase(self, action: Action) -> None:
        d = self._declarer
        self._seats.append(d)
        self._acts.append(action)
        t = type(action)
        if t is Contract:
            assert isinstance(action, Contract)
            self._contract = action.amount
            self.phase = _PLAYING
            self.to_act = d
        elif t is Concede:
            self._score("conceded")
        else:
            self._score("thrown_in")

    # ------------------------------------------------------------------ scoring
    def _score(self, outcome: str) -> None:
        r = self.ruleset
        n = self.n
        d = self._declarer
        bid = self._bid
        contract: int | None = self._contract
        points = self._points
        marr = self._marr
        a0, a1, a2 = self._active
        opps = (a1, a2) if d == a0 else (a0, a2) if d == a1 else (a0, a1)
        raw = [0] * n
        if outcome == "played":
            made = points[d] + marr[d] >= self._contract
            raw[d] = self._contract if made else -self._contract
            outcome = "made" if made else "failed"
            unit = r.rounding
            for s in opps:
                take = points[s] + marr[s]
                raw[s] = take if unit == 1 else round_half_up(take, 1, unit)
        elif outcome == "thrown_in":
            contract = None
            for s in opps:
                raw[s] = r.throw_in_bonus
        else:  # conceded
            contract = None
            raw[d] = -bid if r.concede == "penalty" else 0
            if r.concede_pays == "half":
                half = round_half_up(bid, 2, r.rounding)
                for s in opps:
                    raw[s] = half
        if n == 4:
            raw[self.dealer] = self.talon_score
        old = self._scores
        new = list(map(add, old, raw))
        events: tuple[str, ...] = ()
        if r.barrel and (any(self._barrel) or max(new) >= r.barrel_at):
            # Somebody sits on or reaches the barrel (otherwise it changes nothing).
            new = old[:]
            ev: list[str] = []
            self._apply_barrel(raw, new, outcome, ev)
            events = tuple(ev)
        deltas = tuple(map(sub, new, old))
        self._scores = new
        scores = tuple(new)
        # The DealResult's fields, in order; deal_results builds it (see _results).
        self._results.append(
            (
                self.deal_number,
                self.dealer,
                d,
                bid,
                contract,
                outcome,
                tuple(points),
                tuple(marr),
                tuple(map(add, points, marr)),
                deltas,
                scores,
                tuple(self._barrel) if r.barrel else None,
                events,
            )
        )
        # tuple.__new__ skips the NamedTuple's Python-level __new__ (same result).
        self._logs.append(
            _new_tuple(
                DealLog,
                (
                    self.deal_number,
                    self.dealer,
                    self._dealt,
                    self._talon,
                    bytes(self._seats),
                    tuple(self._acts),
                    deltas,
                    scores,
                ),
            )
        )
        self.deal_number += 1
        if max(new) >= r.target:
            self._finish("target")
        elif r.max_deals and self.deal_number >= r.max_deals:
            self._finish("max_deals")
        else:
            self._deal()

    def _apply_barrel(self, raw: list[int], new: list[int], outcome: str, ev: list[str]) -> None:
        # "-0" would read as a typo: a house rule without a barrel penalty says so.
        fine = (
            f": -{self.ruleset.barrel_penalty}" if self.ruleset.barrel_penalty else " (no penalty)"
        )
        r = self.ruleset
        barrel = self._barrel
        d = self._declarer
        sitting_at_start = [b > 0 for b in barrel]
        for s in range(self.n):
            if not sitting_at_start[s]:
                new[s] += raw[s]
                continue
            # A sitter: his defender takes and halves are not scored.
            if s == d:
                if outcome == "made":
                    if self._contract >= _BARREL_WIN_CONTRACT:
                        new[s] = r.target
                        barrel[s] = 0
                        ev.append(f"seat {s} wins from the barrel")
                        continue
                elif outcome == "failed":
                    new[s] -= self._contract
                    barrel[s] = 0
                    ev.append(f"seat {s} fails the contract and falls off the barrel")
                    continue
                elif outcome == "conceded" and r.concede == "penalty":
                    new[s] -= self._bid
                    barrel[s] = 0
                    ev.append(f"seat {s} concedes and falls off the barrel")
                    continue
            barrel[s] -= 1
            if barrel[s] == 0:
                new[s] -= r.barrel_penalty
                deals = "deal" if r.barrel_deals == 1 else "deals"  # (barrel_deals = 1)
                ev.append(f"seat {s} sat {r.barrel_deals} {deals} on the barrel{fine}")
        newcomers = [s for s in range(self.n) if not sitting_at_start[s] and new[s] >= r.barrel_at]
        if not newcomers:
            return
        for s in newcomers:
            new[s] = r.barrel_at
        if r.barrel_mode == "many":
            for s in newcomers:
                barrel[s] = r.barrel_deals
                ev.append(f"seat {s} gets on the barrel")
            return
        sitters = [s for s in range(self.n) if barrel[s] > 0]
        for s in sitters:
            new[s] -= r.barrel_penalty
            barrel[s] = 0
            ev.append(f"seat {s} is knocked off the barrel{fine}")
        if len(newcomers) == 1:
            barrel[newcomers[0]] = r.barrel_deals
            ev.append(f"seat {newcomers[0]} gets on the barrel")
        else:
            for s in newcomers:
                new[s] -= r.barrel_penalty
                ev.append(f"seat {s} reaches the barrel with another and falls off{fine}")

    def _finish(self, reason: str) -> None:
        scores = tuple(self._scores)
        places = tuple(1 + sum(1 for o in scores if o > s) for s in scores)
        firsts = [i for i, p in enumerate(places) if p == 1]
        winner = firsts[0] if len(firsts) == 1 else None
        target = self.ruleset.target
        shortfalls = tuple(0 if i == winner else max(0, target - s) for i, s in enumerate(scores))
        self.result = GameResult(scores, places, shortfalls, winner, self.deal_number, reason)
        self.phase = _OVER
        self.is_over = True
        self.to_act = None

    # ------------------------------------------------------------------ the validated door
    def apply(self, action: object, seat: int | None = None) -> None:
        """Apply ``action`` after checking it; refuse it with an ``IllegalActionError``.

        With ``seat``, also check that the action comes from the seat to act. A refused
        action leaves the state unchanged.
        """
        if self.phase is _OVER:
            raise GameOverError(action, seat, "the match is over", ())
        legal = self.legal_actions()
        actor = self.to_act
        if seat is not None:
            seat = _seat_number(seat, actor, action, legal)
        if seat is not None and seat != actor:
            if (
                self.phase is _BIDDING
                and isinstance(seat, int)
                and 0 <= seat < self.n
                and self._passed >> seat & 1
            ):
                raise AlreadyPassedError(
                    action, seat,
                    f"seat {seat} has passed and a pass is final (it is seat {actor}'s turn)",
                    legal,
                )  # fmt: skip
            why = f"it is seat {actor}'s turn, not seat {seat}'s"
            if isinstance(seat, int) and 0 <= seat < self.n and seat not in self._active:
                # (4 players: "seat 0's turn" alone left a reader of an edited record
                # wondering why the dealer may not act at all)
                why += f" (seat {seat} deals this deal and sits it out)"
            raise NotYourTurnError(action, seat, why, legal)
        if not isinstance(action, _ACTION_TYPES):
            raise NotAnActionError(
                action, actor, f"expected an Action, got {type(action).__name__}", legal
            )
        for a in legal:
            if a == action and type(a) is type(action):
                # Dataclass equality lets Bid(105.0), Give(card, to=True) or Play(True) (J♠)
                # equal a legal action: a field of the wrong type is refused all the same.
                bad = _malformed(action)
                if bad:
                    raise NotAnActionError(action, actor, bad, legal)
                self.apply_trusted(a)
                return
        self._refuse(action, actor, legal)

    def _refuse(self, action: Action, seat: int | None, legal: tuple[Action, ...]) -> None:
        """Raise the most specific error for an action that is not in ``legal``."""
        phase = self.phase
        r = self.ruleset
        if not isinstance(action, PHASE_ACTIONS[phase]):
            # The kinds this seat may answer now: a ruleset without a throw-in (classic)
            # was told "expected Contract/Concede/ThrowIn".
            kinds = "/".join(t.__name__ for t in PHASE_ACTIONS[phase]
                             if any(type(a) is t for a in legal)) or "nothing"  # fmt: skip
            raise WrongPhaseError(
                action, seat,
                f"a {type(action).__name__} is not allowed in the {phase.value} phase "
                f"(expected {kinds})",
                legal,
            )  # fmt: skip
        # A field of the wrong type (Bid("x"), Play(True, "yes")): said as of a legal one.
        bad = _malformed(action)
        if bad:
            raise NotAnActionError(action, seat, bad, legal)
        if isinstance(action, Bid | Contract):
            amt = action.amount
            err: type[IllegalActionError] = BidError if isinstance(action, Bid) else ContractError
            step = r.bid_step
            if isinstance(action, Bid):
                lo = self._standing + step if self._standing else r.opening_bid
                cap = self._caps[seat] if seat is not None else 0
                what = "bid"
                aces = _aces_note(self._hands[seat] if seat is not None else 0, r)
                cap_rule = f"nobody may bid above 120 + the marriages in his own hand ({cap}){aces}"
                low_rule = (
                    f"a bid must raise the standing {self._standing} by at least {step}"
                    if self._standing
                    else f"the opening bid is at least {lo}"
                )
            else:
                lo = self._bid
                step = CONTRACT_STEP
                cap = max(lo, cap_of(self._hands[self._declarer], r))
                what = "contract"
                aces = _aces_note(self._hands[self._declarer], r)
                cap_rule = (
                    f"the contract is at most the greater of the bid and 120 + the "
                    f"marriages in hand ({cap}){aces}"
                )
                low_rule = f"the contract must be at least the winning bid {lo}"
            if amt % step:
                raise err(action, seat, f"a {what} must be a multiple of {step}", legal)
            if amt < lo:
                raise err(action, seat, low_rule, legal)
            if amt > cap:
                raise err(action, seat, cap_rule, legal)
            raise err(action, seat, f"this {what} is not allowed now", legal)
        if isinstance(action, Concede):
            if r.concede == "off":
                raise ConcedeError(action, seat, "conceding is off in this ruleset", legal)
            raise ConcedeError(
                action, seat,
                "the last hand who took the talon after an all-pass may throw in, not concede",
                legal,
            )  # fmt: skip
        if isinstance(action, ThrowIn):
            if r.all_pass != "last_hand":
                # Nobody ever may (classic): "only the last hand ... may" sent a bot looking
                # for a seat and a moment that this ruleset does not have.
                raise ThrowInError(
                    action, seat,
                    f"there is no throw-in in this ruleset (all_pass = {r.all_pass}: "
                    "only under last_hand may the last hand throw in)",
                    legal,
                )  # fmt: skip
            raise ThrowInError(
                action, seat,
                "only the last hand who took the talon after an all-pass may throw in",
                legal,
            )  # fmt: skip
        if isinstance(action, Give):
            c, to = action.card, action.to
            if not self._hands[self._declarer] >> c & 1:
                raise CardNotHeldError(action, seat, f"{CARDS[c]} is not in your hand", legal)
            if to == self._declarer:
                raise GiveError(action, seat, "you cannot give a card to yourself", legal)
            if to not in self._active:
                raise GiveError(action, seat, f"seat {to} is not an opponent in this deal", legal)
            raise GiveError(
                action, seat,
                f"seat {to} already received a card: one card to each opponent",
                legal,
            )  # fmt: skip
        if isinstance(action, Play):
            self._refuse_play(action, seat, legal)
        raise IllegalActionError(action, seat, "not allowed now", legal)

    def _refuse_play(self, action: Play, seat: int | None, legal: tuple[Action, ...]) -> None:
        r = self.ruleset
        c, declare = action.card, action.declare
        assert seat is not None
        hand = self._hands[seat]
        card = CARDS[c]
        if not hand >> c & 1:
            raise CardNotHeldError(action, seat, f"{card} is not in your hand", legal)
        if declare:
            rank = c % 6
            if rank not in (2, 3, 5):
                raise MarriageError(
                    action, seat,
                    "only a K or Q (marriage) or an ace (ace marriage) can be declared",
                    legal,
                )  # fmt: skip
            if rank == 5 and not r.ace_marriage:
                # Before "only with a lead": without the option an ace declares nothing,
                # wherever it is played (as "conceding is off" comes before the situation).
                raise MarriageError(action, seat, "the ace marriage is off", legal)
            if self._trick:
                raise MarriageError(
                    action, seat, "a marriage is declared only with a lead, not when following",
                    legal,
                )  # fmt: skip
            if rank == 5:
                if hand & ACES != ACES:
                    raise MarriageError(
                        action, seat, "the ace marriage needs all four aces in hand", legal
                    )
                raise MarriageError(
                    action, seat,
                    "the ace marriage needs a trick won with a card other than an ace first",
                    legal,
                )  # fmt: skip
            mm = MARRIAGE_MASK[c // 6]
            if hand & mm != mm:
                partner = CARDS[c ^ 1]  # Q (rank 2) <-> K (rank 3)
                raise MarriageError(
                    action, seat, f"a marriage needs its partner {partner} in hand", legal
                )
            raise MarriageError(
                action, seat, "a marriage may be declared only after winning a trick", legal
            )
        led = self._trick[0] // 6
        if hand >> (6 * led) & 63:
            if c // 6 != led:
                raise PlayError(action, seat, f"you must follow suit {Suit(led)}", legal)
            raise PlayError(
                action, seat, f"must_beat: you must beat the trick with a higher {Suit(led)}",
                legal,
            )  # fmt: skip
        t = self._trump
        if t >= 0 and hand >> (6 * t) & 63:
            if c // 6 != t:
                raise PlayError(
                    action, seat, f"without {Suit(led)} you must play a trump {Suit(t)}", legal
                )
            raise PlayError(
                action, seat, "must_beat: you must beat the trick with a higher trump", legal
            )
        raise PlayError(action, seat, "this card is not allowed now", legal)


def _aces_note(hand: int, r: Ruleset) -> str:
    """Why the four aces held add nothing to the cap of a refused bid or contract, where
    the ruleset says so: "(220)" alone, for a hand of four aces and K♥ Q♥, read as a
    miscount to an author who wrote for the preset's 420."""
    if hand & ACES != ACES or (r.ace_marriage and r.ace_marriage_counts_for_bid):
        return ""
    option = "ace_marriage = false" if not r.ace_marriage else "ace_marriage_counts_for_bid = false"
    return f": the four aces count nothing towards it ({option})"


def _malformed(action: Action) -> str:
    """What is wrong with the field types of ``action`` ("" if nothing): amounts and seats
    are ints, cards ints 0..23 (``Card``), ``declare`` a bool; never a bool or a float."""
    # The fields are typed, but a caller may put anything in them: look at them as objects.
    if isinstance(action, Bid | Contract):
        amt: object = action.amount
        if isinstance(amt, bool) or not isinstance(amt, int):
            return f"the amount must be an int: {amt!r}"
    elif isinstance(action, Give | Play):
        c: object = action.card
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 24:
            return f"not a card: {c!r}"
        if isinstance(action, Give):
            to: object = action.to
            if isinstance(to, bool) or not isinstance(to, int):
                return f"not a seat: {to!r}"
        else:
            declare: object = action.declare
            if not isinstance(declare, bool):
                return f"declare must be a bool: {declare!r}"
    return ""


def _seat_number(seat: object, actor: int | None, action: object, legal: Sequence[Action]) -> int:
    """``seat`` as an int: any integer type (``numpy.int64`` too), not a bool (an int in
    Python: ``seat=True`` must not pass for seat 1), a float (1.0) or a text ("1")."""
    try:
        if not isinstance(seat, bool):
            return index(seat)  # type: ignore[arg-type]  # (a TypeError when it has none)
    except TypeError:
        pass
    raise NotYourTurnError(
        action,
        None,
        f"seat must be a seat number (an int), got {seat!r} (it is seat {actor}'s turn)",
        legal,
    )


def _check_deal(
    number: int,
    hands: Sequence[Sequence[Card | int | str]],
    talon: Sequence[Card | int | str],
    n: int,
    dealer: int,
) -> tuple[tuple[int, ...], int]:
    """Validate explicit cards for deal ``number``; return hand masks and the talon mask."""
    where = f"deal {number}"
    if isinstance(hands, Mapping) or not isinstance(hands, Sequence | str):
        # A dict {seat: hand} would be read as its keys (ints with no len()).
        raise ValueError(
            f"{where}: hands must be a list of one hand per seat (seat 0 first; the 4-player "
            f"dealer's empty), got {type(hands).__name__}"
        )
    for what, cards in [
        *((f"seat {s}'s hand", h) for s, h in enumerate(hands)),
        ("the talon", talon),
    ]:
        if not isinstance(cards, str) and (
            isinstance(cards, Mapping) or not isinstance(cards, Collection)
        ):
            raise ValueError(
                f"{where}: {what} must be a sequence of cards, e.g. parse_cards('A♠ 10♠ K♠'), "
                f"got {cards!r}"
            )
    if (
        isinstance(hands, str)
        or any(isinstance(h, str) and len(h) > 3 for h in hands)
        or (isinstance(talon, str) and len(talon) > 3)
    ):
        # "cards as Card, int or text" means each card: a whole hand as one text would be
        # read letter by letter ("seat 0 must be dealt 7 cards, got 20").
        raise ValueError(
            f"{where}: a hand or the talon is a sequence of cards, not one text: "
            "use parse_cards('A♠ 10♠ ...')"
        )
    if len(hands) != n:
        raise ValueError(f"{where}: expected {n} hands, got {len(hands)}")
    masks = []
    seen = 0
    for seat, hand in enumerate(hands):
        want = 0 if n == 4 and seat == dealer else 7
        if len(hand) != want:
            raise ValueError(f"{where}: seat {seat} must be dealt {want} cards, got {len(hand)}")
        m = 0
        for x in hand:
            c = _to_card(x)
            if (seen | m) >> c & 1:
                raise ValueError(f"{where}: card {CARDS[c]} appears twice")
            m |= 1 << c
        seen |= m
        masks.append(m)
    if len(talon) != 3:
        raise ValueError(f"{where}: the talon must have 3 cards, got {len(talon)}")
    t = 0
    for x in talon:
        c = _to_card(x)
        if (seen | t) >> c & 1:
            raise ValueError(f"{where}: card {CARDS[c]} appears twice")
        t |= 1 << c
    if seen | t != _FULL_DECK:
        raise ValueError(f"{where}: hands and talon must hold all 24 cards")
    return tuple(masks), t


def talon_score(talon: Iterable[Card], ruleset: Ruleset) -> int:
    """What ``talon`` scores the dealer who sits the deal out (4 players), as
    :attr:`Game.talon_score`: for a reader who sees the talon but not the game."""
    return _talon_score(mask_of(talon), ruleset)


def _talon_score(talon: int, ruleset: Ruleset) -> int:
    if talon & NINES == talon:
        return ruleset.nines_talon_value
    return mask_points(talon)


def _check_barrel_counts(r: Ruleset, barrel: list[int]) -> None:
    """Refuse deals left on the barrel that the ruleset cannot have, naming the seat (a
    ruleset without the barrel offers no count but 0, whatever its ``barrel_deals``)."""
    for seat, left in enumerate(barrel):
        if left and not r.barrel:
            raise ValueError(
                f"barrel: seat {seat} is on the barrel ({left} deal{'s' if left != 1 else ''} "
                "left), but this ruleset has no barrel (barrel = false): every seat is 0"
            )
        if not 0 <= left <= r.barrel_deals:
            raise ValueError(
                f"barrel: seat {seat} has {left} deals left on the barrel: at most "
                f"{r.barrel_deals} (barrel_deals), at least 0 (not on it)"
            )


def _check_start(r: Ruleset, scores: list[int], barrel: list[int]) -> None:
    """Refuse a start position no match can reach (RULES.md, "The barrel and the end"): a
    score at the target (the match would be over), and with the barrel a score above
    ``barrel_at`` (reaching it sets exactly ``barrel_at``), a seat on the barrel at any
    other score, one at ``barrel_at`` off the barrel (unless falling off costs nothing:
    ``barrel_penalty = 0``), and two sitters under ``barrel_mode = "one"``."""
    for seat, (score, left) in enumerate(zip(scores, barrel, strict=True)):
        if score >= r.target:
            raise ValueError(
                f"scores: seat {seat} starts at {score}, at or over the target {r.target}: "
                "that match is over"
            )
        if r.barrel and score > r.barrel_at:
            raise ValueError(
                f"scores: seat {seat} starts at {score}, over barrel_at {r.barrel_at} (a "
                f"score that reaches it is set to {r.barrel_at}, on the barrel)"
            )
        if left and score != r.barrel_at:
            raise ValueError(
                f"barrel: seat {seat} is on the barrel ({left} deal{'s' if left != 1 else ''} "
                f"left) at {score}: a "
                f"player on the barrel has exactly {r.barrel_at}"
            )
        if r.barrel and r.barrel_penalty > 0 and score == r.barrel_at and not left:
            raise ValueError(
                f"barrel: seat {seat} starts at {score} but not on the barrel: reaching "
                f"{r.barrel_at} puts a player on it, and every way off it costs points "
                f"(barrel_penalty {r.barrel_penalty}, or the contract)"
            )
    if r.barrel and r.barrel_mode == "one" and sum(1 for left in barrel if left) > 1:
        raise ValueError(
            'barrel: several seats start on the barrel, but with barrel_mode = "one" a '
            "newcomer knocks the sitter off"
        )


def _start_values(what: str, values: Sequence[int] | None, n: int) -> list[int]:
    if values is None:
        return [0] * n
    # A dict {seat: score} would be read as its keys; a str as its letters.
    if isinstance(values, Mapping | str) or not isinstance(values, Iterable):
        raise ValueError(f"{what} must be {n} integers, one per seat, got {values!r}")
    out = list(values)
    if len(out) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise ValueError(f"{what} must be {n} integers, one per seat, got {values!r}")
    return out
