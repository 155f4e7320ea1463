"""Sample the hidden cards of a deal consistently with what one player's view shows.

A search bot (``bots/pimc.py``) fills in the cards it cannot see many times over and
solves each filled-in deal. Every sample respects all the view reveals:

- the own hand, the cards played so far, the talon when it is shown;
- the cards passed to or by this seat (the declarer's hidden pass to the other opponent
  may or may not be one of the shown talon cards: both cases are weighted by how many deals
  each allows; one of them played settles it);
- hand sizes (7 dealt, +3 for the declarer's talon, ±1 per pass, −1 per card played);
- voids revealed by play: a player who did not follow suit has none of the led suit, and
  one who then did not trump, when a trump was set, has no trumps (the trump *at that
  trick*: a marriage makes its suit trump from the trick it is declared on);
- under ``must_beat``: a player who followed (or trumped) below the trick's best card of
  that suit has no card of that suit above it;
- marriages: the declarer of a marriage held both of its cards at the lead, so a partner
  card not played since is still in his hand (the ace marriage: all four aces);
- the caps: a contract above the winning bid and above 120 proves marriages worth the
  excess in the declarer's 8 cards (RULES.md §5), a bid above 120 in the bidder's 7 cards
  dealt (§2) — one of the smallest sets of marriages worth it, a union of alternatives.
  The 7 cards of a bid: the bidder's hand in the auction; after it, a defender's cards
  (held or played) but the one passed to him, the declarer's with those he passed but
  the talon. A pass the viewer does not see (the other defender's) is read card by card:
  one case per card it may have been. The talon hidden, the declarer's bid is a fact in
  his 10 cards, and each deal is kept with the share of the talons (3 of those 10) that
  leave the marriages in his 7; the 4-player dealer, who sees neither pass, reads a
  defender's bid in his 8 cards and weighs each deal by the passes that let it be made
  (:class:`BidReading`); he does not read the declarer's bid. A reading that rejects
  1000 deals in a row is dropped by that sampler; the hard facts stay.

Sampling is exact: every unknown card has a set of allowed owners (the other hands, and
the talon while it is face down), cards with the same set form a class, and a dynamic
programme over the classes counts the completions for each split of a class among its
owners; a sample walks the classes drawing each split in proportion to the completions it
leaves, so every deal of one case is equally likely, without rejection; the cases (the
hidden passes) are weighted by the histories behind them, so a deal is drawn as often as
the histories (cards dealt, passes and talon the view hides) that lead to it. The caps'
alternatives are drawn as a union: one alternative of each cap in proportion to the deals
they allow, a deal of those, kept with probability 1 / the number of such choices it meets
(uniform over the union; fewer retries on average than there are choices). An optional
``accept`` predicate adds constraints that do not fit that form (retried, then dropped
rather than looping forever).

>>> import random
>>> from engine import Game, observe  # a view, as the SDK gives a bot (a test makes its own)
>>> g = Game.new("classic", seed=1, players=["a", "b", "c"])
>>> view = observe(g, g.to_act)
>>> deal = sample_deal(view, random.Random(0))
>>> sorted(len(h) for h in deal.hands), len(deal.talon)
([7, 7, 7], 3)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from math import comb
from typing import TypeVar

from engine import Bid, Phase, PlayerView, Ruleset
from engine.cards import MARRIAGE_VALUES as _MARRIAGE_VALUES
from engine.cards import Card
from engine.cards import bit_indices as _bits
from engine.cards import mask_of as _mask
from engine.tables import ACES as _ACES
from engine.tables import MARRIAGE_MASK as _KQ
from engine.tables import SUIT_MASK as _SUIT
from engine.tables import cards_of as _cards

__all__ = [
    "TALON",
    "BidReading",
    "Constraints",
    "SampledDeal",
    "Sampler",
    "constraints_of",
    "sample_deal",
]

#: The owner index used for the face-down talon in :class:`Constraints`.
TALON = -1
_DEALT = 7
_T = TypeVar("_T")
#: Bounds of the rejection loop of one draw (a deal meeting several of the caps'
#: alternatives is kept with probability at least 1 / their combinations), and of the
#: draws in a row a :class:`BidReading` may reject before the sampler drops it (a deal it
#: can keep at all it keeps at least 1 time in 30: the declarer's bid through a hidden
#: talon, marriages taking 6 of his 10 cards, keeps 4 talons of 120 — a set of marriages
#: is 2, 4 or 6 cards of the 7 dealt —, the dealer's reading of two defenders 2 of 8 passes
#: each; 1000 rejections in a row then mean that almost no deal the hard facts allow can
#: be kept, not bad luck).
_MAX_DRAWS = 3000
_MAX_READ_REJECTS = 1000


@dataclass(frozen=True)
class SampledDeal:
    """One completion of the hidden cards: every seat's current hand, and the talon.

    ``hands[s]`` is empty for a seat dealt no cards (the 4-player dealer). ``talon`` is the
    face-down talon while the auction runs (sampled), else ``()``: once taken, the talon
    cards are in the declarer's hand (or passed, or played) like his other cards.
    """

    hands: tuple[tuple[Card, ...], ...]
    talon: tuple[Card, ...]
    hand_masks: tuple[int, ...]
    talon_mask: int


@dataclass
class Constraints:
    """What is known about the hidden cards, in a form independent of the engine.

    ``fixed[s]``: cards known to be in seat ``s``'s hand now; ``counts[s]``: how many cards
    seat ``s`` holds now (``TALON`` for the face-down talon); ``excluded[s]``: cards seat
    ``s`` cannot hold; ``unknown``: the cards whose place is unknown. ``cases`` lists
    alternatives (weight, extra fixed cards per seat) for facts known only as a choice (the
    hidden pass of a possibly-talon card; or, where a bid is read through it, each card that
    pass may have been); an empty list means one case with nothing extra.
    ``any_of``: facts known as "at least one of these" (each a list of alternatives: extra
    fixed cards per seat; the marriages a bid or a contract proves), drawn uniformly over
    the deals meeting every fact; empty: no such fact. ``case_any_of[i]``: more such facts
    that hold in ``cases[i]`` only (empty: none for any case). ``reading`` (or
    ``case_reading[i]`` in ``cases[i]``): bids read per drawn deal over histories the view
    does not show (:class:`BidReading`); ``None``: none.
    """

    n: int
    fixed: dict[int, int]
    counts: dict[int, int]
    excluded: dict[int, int]
    unknown: int
    cases: list[tuple[int, dict[int, int]]] = field(default_factory=list)
    any_of: list[list[dict[int, int]]] = field(default_factory=list)
    case_any_of: list[list[list[dict[int, int]]]] = field(default_factory=list)
    reading: BidReading | None = None
    case_reading: list[BidReading | None] = field(default_factory=list)


@dataclass(frozen=True)
class BidReading:
    """Bids read through passes or a talon the view does not show, as the share of those
    hidden histories that let each bid be made; a drawn deal is kept with that probability,
    so deals are drawn in proportion to their histories (exact, like the rest).

    ``needs[s]``: the marriage sets (masks) one of which seat ``s``'s bid proves in his 7
    cards dealt. A defender's 7: his cards (held, played) but the one passed to him; the
    declarer's: his cards (held, played), ``given`` and the passes in ``hidden``, less
    the talon ``shown`` — or, the talon hidden, less any 3 of those 10 (each 3 a history).
    ``hidden``: receivers of a pass the view does not show; it was the shown talon card
    among his cards if he has one, else any of his 8 (as :func:`_give_cases` weights them).
    """

    declarer: int
    needs: dict[int, list[int]]
    played_by: dict[int, int]
    given: int
    hidden: tuple[int, ...]
    shown: int

    def weight(self, masks: Sequence[int]) -> float:
        choices = []
        for o in self.hidden:
            at_pass = masks[o] | self.played_by[o]
            t = at_pass & self.shown
            choices.append([t] if t else [1 << c for c in _bits(at_pass)])
        good = 0.0
        total = 0
        for xs in product(*choices):
            total += 1
            passes = dict(zip(self.hidden, xs, strict=True))
            share = 1.0
            for s, sets in self.needs.items():
                held = masks[s] | self.played_by[s]
                if s == self.declarer:
                    ten = held | self.given
                    for x in xs:
                        ten |= x
                    share *= (
                        _talon_share(ten, sets)
                        if not self.shown
                        else _holds(ten & ~self.shown, sets)
                    )
                else:
                    share *= _holds(held & ~passes.get(s, 0), sets)
                if not share:
                    break
            good += share
        return good / total if total else 0.0


def _holds(mask: int, sets: list[int]) -> bool:
    return any(m & mask == m for m in sets)


_TALON_SHARES: dict[tuple[int, tuple[int, ...]], float] = {}


def _talon_share(ten: int, sets: list[int]) -> float:
    """The share of the 3-card talons among the declarer's 10 cards ``ten`` that leave him 7
    holding one of ``sets``."""
    key = (ten, tuple(sets))
    hit = _TALON_SHARES.get(key)
    if hit is None:
        talons = list(combinations(_bits(ten), 3))
        ok = sum(_holds(ten & ~((1 << a) | (1 << b) | (1 << c)), sets) for a, b, c in talons)
        hit = ok / len(talons) if talons else 0.0
        if len(_TALON_SHARES) > 100_000:
            _TALON_SHARES.clear()
        _TALON_SHARES[key] = hit
    return hit


def _gives_of(view: PlayerView) -> list[tuple[int, int | None]]:
    """``(to, card or None)`` for each pass (the card only if I gave or received it)."""
    return [(int(to), None if card is None else int(card)) for to, card in view.gives]


def _plays_of(plays: Iterable[tuple[int, Card]]) -> list[tuple[int, int]]:
    return [(int(s), int(c)) for s, c in plays]


def constraints_of(view: PlayerView) -> Constraints:
    """Collect every fact of ``view`` about where the hidden cards are."""
    me = view.seat
    n = len(view.scores)
    active = tuple(view.active_seats)
    hand = _mask(view.hand)
    declarer = view.declarer
    talon_taken = view.phase in (Phase.PASSING, Phase.CONTRACT, Phase.PLAYING)
    talon_shown = _mask(view.talon) if view.talon is not None else 0

    counts = {s: (_DEALT if s in active else 0) for s in range(n)}
    if talon_taken and declarer is not None:
        counts[declarer] += 3
    else:
        counts[TALON] = 3
    gives = _gives_of(view)
    for to, _ in gives:
        if declarer is not None:
            counts[declarer] -= 1
        counts[to] += 1

    # Play history: cards seen, voids and must_beat limits, trump per trick.
    seen = 0
    played_by = {s: 0 for s in range(n)}
    excluded = {s: 0 for s in range(n)}
    fixed = {s: 0 for s in range(n)}
    fixed[TALON] = 0
    must_beat = view.ruleset.must_beat
    pending = [(int(s), None if x is None else int(x)) for s, x in view.marriages]
    trump = -1
    tricks = [_plays_of(t.cards) for t in view.tricks]
    if view.trick:
        tricks.append(_plays_of(view.trick))
    for plays in tricks:
        lead_seat, lead = plays[0]
        if lead % 6 in (2, 3) and (lead_seat, lead // 6) in pending:
            pending.remove((lead_seat, lead // 6))
            trump = lead // 6
        led = lead // 6
        best = lead
        for s, c in plays:
            seen |= 1 << c
            played_by[s] |= 1 << c
            counts[s] -= 1
        for s, c in plays[1:]:
            suit = c // 6
            if suit != led:
                excluded[s] |= _SUIT[led]
                if trump >= 0 and suit != trump:
                    excluded[s] |= _SUIT[trump]
            if must_beat and suit == best // 6 and c < best and suit in (led, trump):
                # Below the best card of the suit he had to play: he had nothing above it.
                excluded[s] |= _SUIT[suit] & ~((1 << (best + 1)) - 1)
            if (suit == best // 6 and c > best) or (suit == trump and best // 6 != trump):
                best = c

    fixed[me] = hand
    for to, card in gives:
        if card is not None and to != me:
            # I am the declarer: I know what I gave.
            fixed[to] |= 1 << card
    for s, x in view.marriages:
        if x is None:
            partners = (1 << 5) | (1 << 11) | (1 << 17) | (1 << 23)
        else:
            partners = (1 << (6 * int(x) + 2)) | (1 << (6 * int(x) + 3))
        fixed[int(s)] |= partners & ~seen
    # A receiver who has played a shown talon card got that card in his pass: the declarer
    # gives each opponent one card, so his pass is settled and holds no other talon card.
    hidden_gives = [to for to, card in gives if card is None and not played_by[to] & talon_shown]
    passed_known = _mask(card for _, card in gives if card is not None)
    talon_left = talon_shown & ~seen & ~hand & ~passed_known
    cases: list[tuple[int, dict[int, int]]] = []
    if talon_left and declarer is not None:
        # (Never the declarer's view: he holds, played or passed every talon card.) The
        # shown talon went to the declarer, but each hidden pass may have been one of its
        # cards. A talon card seen in another hand settles it; otherwise enumerate.
        cases = _give_cases(hidden_gives, talon_left, declarer)
    for s in list(fixed):
        fixed[s] &= ~seen
    # Cards pinned by one case only stay "unknown" here; each case removes its own.
    unknown = ((1 << 24) - 1) & ~seen & ~_union(fixed)
    counts = {s: c for s, c in counts.items() if c > 0 or s == TALON}
    # Caps (RULES.md §2, §5): a bid above 120 proves marriages worth the excess in the
    # bidder's 7 cards dealt, a contract above the bid and 120 in the declarer's 8 cards.
    # Each is a fact "one of these sets of marriages" (the smallest sets worth it), read
    # where the cards meant are known: a bidder's hand in the auction; after it, a
    # defender's cards (held or played) but the one passed to him, the declarer's but the
    # talon and with the cards he passed — when those passes are known. One hidden pass
    # (another defender's, in a defender's view) is read card by card: a case per card it
    # may have been, each one history.
    any_of: list[list[dict[int, int]]] = []
    case_any_of: list[list[list[dict[int, int]]]] = []
    reading: BidReading | None = None
    case_reading: list[BidReading | None] = []
    ruleset = view.ruleset

    def fact(seat: int, need: int, held: int, gone: int) -> list[dict[int, int]] | None:
        """``held``: cards of that holding not in the seat's hand now (played, passed on);
        ``gone``: cards not in it. ``None``: nothing new (a set already known held)."""
        pins = {
            m & ~held & ~fixed[seat]
            for m in _marriage_sets(need, ruleset)
            if not m & (gone | (seen & ~held))
        }
        if 0 in pins:
            return None
        # A set needing more than another is implied by it: fewer, same union.
        return [{seat: p} for p in sorted(pins) if not any(q != p and q & p == q for q in pins)]

    top: dict[int, int] = {}
    for s, action in view.bids:
        if isinstance(action, Bid) and action.amount > 120 and s != me:
            top[s] = max(top.get(s, 0), action.amount)
    facts: list[list[dict[int, int]] | None] = []
    if not talon_taken:
        facts = [fact(s, b - 120, 0, 0) for s, b in sorted(top.items())]
    elif declarer is not None:
        # What each defender was passed: 0 before his pass, else the card if known (to the
        # declarer and the receiver; a shown talon card he played), else None.
        passed: dict[int, int | None] = {s: 0 for s in active if s != declarer}
        for to, card in gives:
            settled = played_by[to] & talon_shown
            passed[to] = 1 << card if card is not None else settled or None
        unknown_pass = [s for s, g in passed.items() if g is None]
        known = 0
        for g in passed.values():
            known |= g or 0
        d_need = top.get(declarer, 0) - 120 if talon_shown else 0
        # The talon hidden (a defender's view), the declarer's bid is read in his 10 cards:
        # a hard fact (the marriages are among them) and a share of the talons (any 3 of
        # the 10) that leave them in his 7 dealt.
        t_need = top.get(declarer, 0) - 120 if not talon_shown else 0

        def bid_facts(o: int | None, c: int) -> list[list[dict[int, int]] | None]:
            # The bids readable when receiver ``o``'s pass was ``c`` (a card bit).
            out = [
                fact(s, b - 120, played_by[s], c if s == o else passed[s] or 0)
                for s, b in sorted(top.items())
                if s != declarer and (s == o or passed[s] is not None)
            ]
            if d_need > 0 and (o is not None or not unknown_pass):
                out.append(fact(declarer, d_need, played_by[declarer] | known | c, talon_shown))
            if t_need > 0 and (o is not None or not unknown_pass):
                out.append(fact(declarer, t_need, played_by[declarer] | known | c, 0))
            return out

        def talon_reading(c: int) -> BidReading | None:
            if t_need <= 0 or (c == 0 and unknown_pass):
                return None
            sets = _marriage_sets(t_need, ruleset)
            return BidReading(declarer, {declarer: sets}, played_by, known | c, (), 0)

        o = unknown_pass[0] if len(unknown_pass) == 1 else None
        if o is not None and (o in top or d_need > 0 or t_need > 0):
            # Instead of "a talon card or any of his 8" (_give_cases): each card he may
            # have been passed, one history each, with the bids it makes readable.
            cases = []
            elsewhere = _union({s: m for s, m in fixed.items() if s != o})
            for c in _bits(played_by[o] | (((1 << 24) - 1) & ~seen & ~elsewhere)):
                extra = {} if seen >> c & 1 else {o: 1 << c}
                if talon_left:
                    extra[declarer] = talon_left & ~(1 << c)
                cases.append((1, extra))
                case_any_of.append([f for f in bid_facts(o, 1 << c) if f is not None])
                case_reading.append(talon_reading(1 << c))
        else:
            facts = bid_facts(None, 0)
            reading = talon_reading(0)
            if len(unknown_pass) > 1:
                # Both passes hidden (the 4-player dealer): a defender's bid is a hard fact
                # in his 8 cards (7 dealt and the one passed to him), and read exactly per
                # deal over the passes he may have had. Not the declarer's: no hard fact
                # backs it (his 7 dealt are any of his cards and the two passes), so nearly
                # every uniform draw failed a bid of 420 and the draw did not end.
                needs = {
                    s: _marriage_sets(b - 120, ruleset) for s, b in top.items() if s != declarer
                }
                facts += [
                    fact(s, b - 120, played_by[s], 0)
                    for s, b in sorted(top.items())
                    if s != declarer
                ]
                if needs:
                    hidden = tuple(unknown_pass)
                    reading = BidReading(declarer, needs, played_by, known, hidden, talon_shown)
    contract, bid = view.contract, view.bid
    if (
        contract is not None
        and bid is not None
        and declarer is not None
        and declarer != me
        and contract > max(bid, 120)
    ):
        facts.append(fact(declarer, contract - 120, played_by[declarer], 0))
    any_of = [f for f in facts if f is not None]
    return Constraints(
        n, fixed, counts, excluded, unknown, cases, any_of, case_any_of, reading, case_reading
    )


def _marriage_sets(need: int, ruleset: Ruleset) -> list[int]:
    """The smallest sets of marriage cards (K+Q of a suit, the four aces where they count for
    the cap: ``engine.game.cap_of``) worth at least ``need``, as masks."""
    units = [(_KQ[s], _MARRIAGE_VALUES[s]) for s in range(4)]
    if ruleset.ace_marriage and ruleset.ace_marriage_counts_for_bid:
        units.append((_ACES, 200))
    sets: list[int] = []
    for k in range(1, len(units) + 1):
        for combo in combinations(units, k):
            m = 0
            for u, _ in combo:
                m |= u
            if sum(v for _, v in combo) >= need and not any(x & m == x for x in sets):
                sets.append(m)
    return sets


def _union(fixed: dict[int, int]) -> int:
    m = 0
    for v in fixed.values():
        m |= v
    return m


def _give_cases(
    hidden_gives: list[int], talon_left: int, declarer: int
) -> list[tuple[int, dict[int, int]]]:
    """Each hidden pass was a talon card (weight 1) or one of the receiver's 8 non-talon
    cards (weight 8: which of them came from the declarer makes a different deal)."""
    cases: list[tuple[int, dict[int, int]]] = [(1, {})]
    for to in hidden_gives:
        nxt: list[tuple[int, dict[int, int]]] = []
        for w, extra in cases:
            used = _union(extra)
            nxt.append((w * 8, dict(extra)))
            for c in _bits(talon_left & ~used):
                e = dict(extra)
                e[to] = e.get(to, 0) | (1 << c)
                nxt.append((w, e))
        cases = nxt
    out = []
    for w, extra in cases:
        e = dict(extra)
        e[declarer] = e.get(declarer, 0) | (talon_left & ~_union(extra))
        out.append((w, e))
    return out


class _Problem:
    """One case: owners with free slots, and unknown cards grouped by allowed owners."""

    def __init__(self, owners: list[int], slots: list[int], groups: list[tuple[int, list[int]]]):
        self.owners = owners
        self.slots = tuple(slots)
        self.groups = groups
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._splits: dict[tuple[int, tuple[int, ...]], list[tuple[int, tuple[int, ...]]]] = {}

    def count(self, j: int = 0, caps: tuple[int, ...] | None = None) -> int:
        if caps is None:
            caps = self.slots
        if j == len(self.groups):
            return 1 if not any(caps) else 0
        key = (j, caps)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        total = 0
        splits = []
        allowed, cards = self.groups[j]
        for split in _splits(len(cards), allowed, caps):
            rest = tuple(c - k for c, k in zip(caps, split, strict=True))
            w = _multinomial(len(cards), split) * self.count(j + 1, rest)
            if w:
                total += w
                splits.append((w, split))
        self._memo[key] = total
        self._splits[key] = splits
        return total

    def draw(self, rng: random.Random) -> dict[int, int]:
        caps = self.slots
        out = {o: 0 for o in self.owners}
        for j, (_, cards) in enumerate(self.groups):
            self.count(j, caps)
            splits = self._splits[(j, caps)]
            split = _pick(splits, rng)
            shuffled = list(cards)
            rng.shuffle(shuffled)
            i = 0
            for oi, k in enumerate(split):
                for c in shuffled[i : i + k]:
                    out[self.owners[oi]] |= 1 << c
                i += k
            caps = tuple(c - k for c, k in zip(caps, split, strict=True))
        return out


def _pick(weighted: Sequence[tuple[int, _T]], rng: random.Random) -> _T:
    """One item, with probability proportional to its (big integer) weight."""
    r = rng.randrange(sum(w for w, _ in weighted))
    for w, item in weighted:
        r -= w
        if r < 0:
            return item
    raise AssertionError("unreachable: r < total weight")


def _splits(n: int, allowed: int, caps: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Ways to put ``n`` cards into the allowed owners without exceeding their caps."""
    out: list[tuple[int, ...]] = []
    k = len(caps)

    def rec(i: int, left: int, acc: list[int]) -> None:
        if i == k:
            if left == 0:
                out.append(tuple(acc))
            return
        top = min(left, caps[i]) if allowed >> i & 1 else 0
        for x in range(top + 1):
            acc.append(x)
            rec(i + 1, left - x, acc)
            acc.pop()

    rec(0, n, [])
    return out


def _multinomial(n: int, parts: tuple[int, ...]) -> int:
    out = 1
    for p in parts:
        out *= comb(n, p)
        n -= p
    return out


class Sampler:
    """Draws :class:`SampledDeal` s for one view; build once, draw many times (the counting
    tables are kept between draws). With ``accept``, :meth:`sample` asks it about up to
    ``max_tries`` draws and returns the first accepted; if none is, one more draw (the
    constraint dropped rather than looping for ever)."""

    def __init__(
        self,
        view: PlayerView | Constraints,
        accept: Callable[[SampledDeal], bool] | None = None,
        max_tries: int = 20,
    ) -> None:
        if isinstance(max_tries, bool) or not isinstance(max_tries, int) or max_tries < 1:
            # (0 returned a deal `accept` was never asked about)
            raise ValueError(f"max_tries must be an integer of at least 1, got {max_tries!r}")
        self.constraints = view if isinstance(view, Constraints) else constraints_of(view)
        self.accept = accept
        self.max_tries = max_tries
        # The bids read through hidden histories (BidReading) weigh the draws until one
        # draw sees _MAX_READ_REJECTS deals in a row rejected by them.
        self._read = True
        self._problems: list[
            tuple[int, dict[int, int], _Problem, list[list[dict[int, int]]], BidReading | None]
        ] = []
        k = self.constraints
        for i, (weight, extra) in enumerate(k.cases or [(1, {})]):
            facts = k.any_of + (k.case_any_of[i] if k.case_any_of else [])
            reading = k.case_reading[i] if k.case_reading else k.reading
            for alternatives in product(*facts):
                fixed = dict(k.fixed)
                for more in (extra, *alternatives):
                    for s, m in more.items():
                        fixed[s] = fixed.get(s, 0) | m
                prob = self._problem(fixed)
                if prob is not None:
                    total = weight * prob.count()
                    if total:
                        self._problems.append((total, fixed, prob, facts, reading))
        if not self._problems:
            raise ValueError("no deal is consistent with this view")

    def _problem(self, fixed: dict[int, int]) -> _Problem | None:
        k = self.constraints
        owners = []
        slots = []
        placed = 0
        for s, m in fixed.items():
            if m & k.excluded.get(s, 0):
                return None  # e.g. a talon card passed to a player who has shown a void in it
            if m & placed or m.bit_count() > k.counts.get(s, 0):
                # A card pinned in two places (a talon card the case leaves with the
                # declarer, though a marriage pins it to the defender it was passed to),
                # or more cards than the seat holds (a seat with none is not in counts).
                return None
            placed |= m
        for s, cnt in sorted(k.counts.items()):
            free = cnt - fixed.get(s, 0).bit_count()
            if free < 0:
                return None
            if free > 0:
                owners.append(s)
                slots.append(free)
        unknown = k.unknown & ~_union(fixed)
        if sum(slots) != unknown.bit_count():
            return None
        by_allowed: dict[int, list[int]] = {}
        for c in _bits(unknown):
            allowed = 0
            for i, s in enumerate(owners):
                if not k.excluded.get(s, 0) >> c & 1:
                    allowed |= 1 << i
            by_allowed.setdefault(allowed, []).append(c)
        # The most constrained classes first keeps the tables small.
        groups = sorted(by_allowed.items(), key=lambda g: (g[0].bit_count(), g[0]))
        return _Problem(owners, slots, groups)

    def sample(self, rng: random.Random) -> SampledDeal:
        """One consistent deal, each as likely as the histories that lead to it (not
        uniformly among the consistent deals: see the module's docstring)."""
        deal = self._draw(rng)
        if self.accept is None:
            return deal
        for _ in range(self.max_tries):
            if self.accept(deal):
                return deal
            deal = self._draw(rng)
        return deal

    def _draw(self, rng: random.Random) -> SampledDeal:
        k = self.constraints
        problems = [(t, (f, p, a, r)) for t, f, p, a, r in self._problems]
        rejected = 0
        for _ in range(_MAX_DRAWS):
            fixed, prob, facts, reading = _pick(problems, rng)
            got = prob.draw(rng)
            masks = [fixed.get(s, 0) | got.get(s, 0) for s in range(k.n)]
            # A deal meeting several alternatives (one of each fact) was drawable from each
            # combination of them: keep it from one.
            met = 1
            for fact in facts:
                met *= sum(all(masks[s] & m == m for s, m in alt.items()) for alt in fact)
            if met > 1 and rng.randrange(met) != 0:
                continue
            # Bids read through hidden histories: kept in proportion to the histories.
            if reading is None or not self._read or rng.random() < reading.weight(masks):
                break
            rejected += 1
            if rejected >= _MAX_READ_REJECTS:
                # Almost no deal lets the bids be made as read: a bot must not spin. Draw
                # from now on without that reading (the hard facts hold in every draw).
                self._read = False
        # (Past _MAX_DRAWS the last deal is kept: it meets every hard fact, only the weights
        # of the union of the caps' alternatives are off.)
        talon = fixed.get(TALON, 0) | got.get(TALON, 0)
        return SampledDeal(
            hands=tuple(_cards(m) for m in masks),
            talon=_cards(talon),
            hand_masks=tuple(masks),
            talon_mask=talon,
        )


def sample_deal(view: PlayerView, rng: random.Random) -> SampledDeal:
    """One deal consistent with ``view``, drawn as :meth:`Sampler.sample` does (see
    :class:`Sampler` to draw many)."""
    return Sampler(view).sample(rng)
