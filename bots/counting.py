"""The heuristic bot plus memory: cards played, voids shown, cards passed; talon enumeration.

- **Memory** (rebuilt from the view's history of this deal, so nothing can drift): which
  cards are gone, so a ten or a king becomes a sure winner once the cards above it have
  fallen; which seats have shown a void (they did not follow suit), so it does not cash a
  winner into a seat that can trump it; how many trumps are still out, so the declarer
  stops drawing trumps when the defenders have none.
- **Talon enumeration**: at the auction it goes through every possible talon (3 of the 17
  cards it cannot see: 680 of them), estimates the hand each would make, and bids the
  highest amount whose expected score beats defending.
- **Passing**: compares every pair of cards to give, not only the cheapest two.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

from bots.heuristic import HeuristicBot, estimate_take
from engine import DECK, Action, Bid, Card, Play, PlayerView, Suit
from sdk.hand import outstanding_cards, played_cards, trick_winner, voids

__all__ = ["CountingBot"]


class CountingBot(HeuristicBot):
    """Remembers the deal's cards and voids; enumerates talons for the auction."""

    name = "counting"

    #: Spread (points) of the real take around the estimate once the talon is known (the
    #: heuristic's ``take_sigma`` also covers the talon's uncertainty).
    sigma = 30.0

    def __init__(self) -> None:
        super().__init__()
        self._talon_cache: tuple[tuple[int, tuple[Card, ...]], list[float]] | None = None

    # ------------------------------------------------------------------ memory
    def gone(self, view: PlayerView) -> set[Card]:
        return played_cards(view)

    def ruff_risk(self, view: PlayerView, suit: Suit, seats: Iterable[int]) -> bool:
        trump = view.trump
        if trump is None or suit == trump:
            return False
        if not any(c.suit == trump for c in outstanding_cards(view)):
            return False
        shown = voids(view)
        return any(suit in shown.get(s, ()) and trump not in shown.get(s, ()) for s in seats)

    def trumps_out(self, view: PlayerView) -> int:
        if view.trump is None:
            return 0
        return sum(1 for c in outstanding_cards(view) if c.suit == view.trump)

    # ------------------------------------------------------------------ auction
    def talon_estimates(self, view: PlayerView) -> list[float]:
        """The estimated take of the hand with each possible talon (cached per deal)."""
        key = (view.deal_number, view.hand)
        if self._talon_cache is not None and self._talon_cache[0] == key:
            return self._talon_cache[1]
        unseen = [c for c in DECK if c not in set(view.hand)]
        # Ten cards, of which two will be given away: those are mostly losers, which the
        # estimate already values at nothing; a small charge covers the rest.
        ests = [
            estimate_take((*view.hand, *talon), view.ruleset) - 3.0
            for talon in combinations(unseen, 3)
        ]
        self._talon_cache = (key, ests)
        return ests

    def bid_estimate(self, view: PlayerView) -> float:
        ests = self.talon_estimates(view)
        return sum(ests) / len(ests)

    def p_make_bid(self, view: PlayerView, amount: float) -> float:
        """The chance of making ``amount``, averaged over every possible talon."""
        ests = self.talon_estimates(view)
        return sum(self.p_make(e + self.take_offset, amount, self.sigma) for e in ests) / len(ests)

    def bid_limit(self, view: PlayerView) -> float:
        if self._on_barrel(view):
            return 120.0 if self.p_make_bid(view, 120) >= 0.5 else 0.0
        bids = sorted(a.amount for a in view.legal_actions if isinstance(a, Bid))
        limit = 0.0
        for amount in bids:
            if self.p_make_bid(view, amount) < self.bid_confidence:
                break
            limit = float(amount)
        return limit

    # ------------------------------------------------------------------ play
    def play(self, view: PlayerView) -> Action:
        choice = super().play(view)
        if not isinstance(choice, Play) or choice.declare or len(view.legal_actions) == 1:
            return choice
        values = endgame_values(view, voids(view))
        if not values or choice.card not in values:
            return choice
        sign = 1.0 if view.declarer == view.seat else -1.0
        best = max(values, key=lambda c: (sign * values[c], -c.points, -c))
        if sign * values[best] > sign * values[choice.card] + 1e-9:
            return Play(best)
        return choice

    # ------------------------------------------------------------------ passing
    def choose_gives(self, view: PlayerView) -> list[Card]:
        hand = list(view.hand)
        n_give = len(hand) - 8
        if n_give != 2:
            return super().choose_gives(view)
        best: tuple[float, tuple[Card, ...]] | None = None
        for pair in combinations(sorted(hand), 2):
            keep = set(hand) - set(pair)
            value = estimate_take(keep, view.ruleset) - sum(
                self.give_risk(view, c, keep) for c in pair
            )
            if best is None or value > best[0]:
                best = (value, pair)
        assert best is not None
        return list(best[1])


# ---------------------------------------------------------------------- endgame

_ENDGAME_CARDS = 3  # solve exactly from this many cards in hand


def _legal(hand: Sequence[Card], trick: Sequence[tuple[int, Card]], trump: Suit | None,
           must_beat: bool) -> list[Card]:  # fmt: skip
    if not trick:
        return list(hand)
    led = trick[0][1].suit
    same = [c for c in hand if c.suit == led]
    forced = same or ([c for c in hand if c.suit == trump] if trump is not None else [])
    if not forced:
        return list(hand)
    if must_beat:
        best = trick_winner(trick, trump)[1]
        beat = [c for c in forced if c.suit == best.suit and c.rank > best.rank]
        if beat:
            return beat
    return forced


class _Endgame:
    """Exact play of the last tricks for one distribution of the unseen cards.

    The value is the card points the declarer still takes; the declarer maximizes it and
    the defenders, as a coalition, minimize it. Marriages are not declared any more.
    """

    def __init__(self, order: Sequence[int], declarer: int, trump: Suit | None,
                 must_beat: bool) -> None:  # fmt: skip
        self.order = list(order)
        self.declarer = declarer
        self.trump = trump
        self.must_beat = must_beat

    def next_seat(self, seat: int) -> int:
        return self.order[(self.order.index(seat) + 1) % len(self.order)]

    def value(self, hands: dict[int, tuple[Card, ...]], trick: tuple[tuple[int, Card], ...],
              to_act: int) -> int:  # fmt: skip
        if len(trick) == len(self.order):
            winner = trick_winner(trick, self.trump)[0]
            pts = sum(c.points for _, c in trick)
            gained = pts if winner == self.declarer else 0
            if not hands[winner]:
                return gained
            return gained + self.value(hands, (), winner)
        hand = hands[to_act]
        if not hand:
            return 0
        maximize = to_act == self.declarer
        best: int | None = None
        nxt = self.next_seat(to_act)
        for c in _legal(hand, trick, self.trump, self.must_beat):
            rest = dict(hands)
            rest[to_act] = tuple(x for x in hand if x != c)
            v = self.value(rest, (*trick, (to_act, c)), nxt)
            if best is None or (v > best if maximize else v < best):
                best = v
        return best or 0


def endgame_values(view: PlayerView, voids_of: dict[int, set[Suit]]) -> dict[Card, float] | None:
    """Average declarer take of each legal card over every distribution of the unseen
    cards (consistent with hand sizes, shown voids and cards passed), or ``None`` when
    the hand is too large or the view incomplete."""
    if view.declarer is None or len(view.hand) > _ENDGAME_CARDS or len(view.active_seats) != 3:
        return None
    order = list(view.active_seats)
    me = view.seat
    in_trick = {s for s, _ in view.trick}
    others = [s for s in order if s != me]
    need = {s: len(view.hand) - (1 if s in in_trick else 0) for s in others}
    pool = sorted(outstanding_cards(view))
    if len(pool) != sum(need.values()):
        return None
    # Cards the declarer passed: known to be with their receiver until played.
    fixed: dict[Card, int] = {}
    if view.declarer == me:
        for to, card in view.gives:
            if card is not None and card in pool:
                fixed[card] = to
    a, b = others
    solver = _Endgame(order, view.declarer, view.trump, view.ruleset.must_beat)
    legal = [p.card for p in view.legal_actions if isinstance(p, Play) and not p.declare]
    totals = dict.fromkeys(legal, 0.0)
    count = 0
    for combo in combinations(pool, need[a]):
        ha = set(combo)
        hb = [c for c in pool if c not in ha]
        if any((to == a) != (c in ha) for c, to in fixed.items()):
            continue
        if any(c.suit in voids_of.get(a, ()) for c in ha):
            continue
        if any(c.suit in voids_of.get(b, ()) for c in hb):
            continue
        hands = {me: tuple(view.hand), a: tuple(sorted(ha)), b: tuple(hb)}
        nxt = solver.next_seat(me)
        for card in legal:
            rest = dict(hands)
            rest[me] = tuple(x for x in view.hand if x != card)
            totals[card] += solver.value(rest, (*view.trick, (me, card)), nxt)
        count += 1
    if not count:
        return None
    return {c: v / count for c, v in totals.items()}
