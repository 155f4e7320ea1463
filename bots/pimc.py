"""``pimc``: Perfect Information Monte Carlo with a double-dummy solver.

Every decision samples deals consistent with the bot's view (:mod:`sdk.sampling`), solves
each with the bitmask solver of :mod:`bots._dds` and picks the action with the best
average. The time budget is hard: the solver checks a deadline and a sample that does not
finish in time is dropped; with no finished sample the bot falls back to a simple rule.

- Play: each legal card (and each marriage declaration) is scored on every sample by a
  zero-window search "does the declarer still reach his contract?" — a full-window search
  costs ~30× more with 8 cards in hand — plus, as a tie-break, the fail-soft bound that
  search returns (the declarer wants more points, the defenders fewer). Once the contract is
  settled either way, or with few cards left, the search is exact on points.
- Auction: on each sample (the talon and the other hands drawn), take the talon, give away
  the two cards a simple keep-value rule picks, and test whether the declarer makes the next
  bid double-dummy; raise while the success rate stays above a threshold.
- Passing: the same, over the few best give pairs by keep-value, tested at the bid.
- Contract: the highest level whose success rate is above the threshold; concede when even
  the bid is hopeless and conceding is cheaper than failing.
Score-aware touches: a barrel sitter bids only for a contract of at least 120 (nothing less
scores for him), and success thresholds are those of the scoring (a failed contract costs
it, a conceded one half of it to each opponent).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bots._dds import MARRIAGE_VALUE, POINTS, SearchTimeout, Solver
from engine import Action, Bid, Concede, Contract, Give, Pass, Phase, Play, PlayerView, ThrowIn
from engine.cards import Card
from engine.rules import Ruleset
from sdk.bot import Bot
from sdk.sampling import SampledDeal, Sampler

__all__ = ["PimcBot"]

_KQ = tuple((1 << (6 * s + 2)) | (1 << (6 * s + 3)) for s in range(4))
# Double-dummy success rates overstate the declarer's real chances by about this factor.
_OPTIMISM = 0.9
_ACES = (1 << 5) | (1 << 11) | (1 << 17) | (1 << 23)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def keep_value(card: int, hand: int) -> float:
    """How much the declarer wants to keep ``card`` of a 10-card ``hand`` (higher: keep).

    Marriages and aces first, then tens guarded by their ace, then points; short side suits
    are cheaper to give (a void lets him trump).
    """
    suit, rank = divmod(card, 6)
    in_suit = (hand >> (6 * suit)) & 63
    length = in_suit.bit_count()
    v = float(POINTS[card])
    if rank in (2, 3) and hand & _KQ[suit] == _KQ[suit]:
        v += 60 + MARRIAGE_VALUE[suit] / 10
    if rank == 5:
        v += 40
    elif rank == 4 and in_suit >> 5 & 1:
        v += 30
    v += 2 * length
    return v


@dataclass
class _Stats:
    decisions: int = 0
    seconds: float = 0.0
    samples: int = 0


class PimcBot(Bot):
    """PIMC over double-dummy searches; ``budget`` seconds per decision (a hard limit),
    at most ``samples`` deals per decision, ``threshold``: the success rate wanted to bid or
    name a contract."""

    name = "pimc"

    def __init__(
        self,
        budget: float = 0.3,
        samples: int = 40,
        threshold: float = 0.6,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.budget = budget
        self.max_samples = samples
        self.threshold = threshold
        self.rng = random.Random(seed)
        self.stats = _Stats()
        self._plan: dict[tuple[int, int], list[Give]] = {}

    # ------------------------------------------------------------------ entry point

    def act(self, view: PlayerView) -> Action:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        # The contract is named once a deal and decides the most: it may take longer.
        scale = 3.0 if view.phase is Phase.CONTRACT else 1.0
        deadline = start + self.budget * 0.9 * scale
        try:
            if view.phase is Phase.PLAYING:
                action = self._play(view, deadline)
            elif view.phase is Phase.BIDDING:
                action = self._bid(view, deadline)
            elif view.phase is Phase.PASSING:
                action = self._give(view, deadline)
            else:
                action = self._contract(view, deadline)
        except ValueError:
            # The sampler found the view inconsistent (it should not): stay legal.
            action = legal[0]
        if action not in legal:
            action = legal[0]
        self.stats.decisions += 1
        self.stats.seconds += time.perf_counter() - start
        return action

    # ------------------------------------------------------------------ play

    def _play(self, view: PlayerView, deadline: float) -> Action:
        legal = [a for a in view.legal_actions if isinstance(a, Play)]
        active = list(view.active_seats)
        pos = {s: i for i, s in enumerate(active)}
        declarer = view.declarer
        assert declarer is not None
        decl = pos[declarer]
        me = pos[view.seat]
        trick = [int(c) for _, c in view.trick]
        leader = pos[view.trick[0][0]] if view.trick else me
        trump = -1 if view.trump is None else int(view.trump)
        won = 0
        won_nonace = 0
        past = 0
        for t in view.tricks:
            won |= 1 << pos[t.winner]
            if all(int(c) % 6 != 5 for s, c in t.cards if s == t.winner):
                won_nonace |= 1 << pos[t.winner]
            if t.winner == declarer:
                past += sum(POINTS[int(c)] for _, c in t.cards)
        for s, x in view.marriages:
            if s == declarer:
                past += 200 if x is None else MARRIAGE_VALUE[int(x)]
        contract = view.contract or 0
        need = contract - past
        moves = [(int(a.card), a.declare) for a in legal]
        n_cards = len(view.hand)
        rules = view.ruleset
        sampler = Sampler(view)
        totals = [0.0] * len(moves)
        done = 0
        maximize = me == decl
        while done < self.max_samples and time.perf_counter() < deadline:
            deal = sampler.sample(self.rng)
            hands = [deal.hand_masks[s] for s in active]
            out_pts = sum(POINTS[c] for h in hands for c in _bits(h)) + sum(
                POINTS[c] for c in trick
            )
            solver = Solver(
                hands, decl, leader, trick, trump, won,
                marriage_needs_trick=rules.marriage_needs_trick,
                must_beat=rules.must_beat, ace_marriage=rules.ace_marriage,
                won_nonace=won_nonace, deadline=deadline,
            )  # fmt: skip
            undecided = 0 < need <= out_pts + 400
            try:
                if n_cards <= 4:
                    values = solver.root_values(moves)
                    utils = [1000.0 * (v >= need) + v if undecided else float(v) for v in values]
                elif undecided:
                    values = solver.root_values(moves, need - 1, need)
                    utils = [1000.0 * (v >= need) + v for v in values]
                else:
                    par = out_pts // 2
                    values = solver.root_values(moves, par - 1, par)
                    utils = [float(v) for v in values]
            except SearchTimeout:
                break
            for i, u in enumerate(utils):
                totals[i] += u if maximize else -u
            done += 1
        self.stats.samples += done
        if not done:
            return _fallback_play(view, legal)
        best = max(range(len(moves)), key=lambda i: (totals[i], -POINTS[moves[i][0]]))
        return legal[best]

    # ------------------------------------------------------------------ auction

    def _declarer_success(
        self,
        view: PlayerView,
        deadline: float,
        levels: Sequence[int],
    ) -> list[float]:
        """For each level, the share of sampled deals in which this seat, as the declarer
        (taking the talon now, giving by keep-value), takes at least that much."""
        active = list(view.active_seats)
        me = view.seat
        decl = active.index(me)
        sampler = Sampler(view)
        rules = view.ruleset
        hits = [0] * len(levels)
        done = 0
        while done < self.max_samples and time.perf_counter() < deadline:
            deal = sampler.sample(self.rng)
            hands = self._after_talon_and_gives(deal, active, me, view)
            try:
                made = _max_level(hands, decl, levels, rules, deadline)
            except SearchTimeout:
                break
            for i in range(made + 1):
                hits[i] += 1
            done += 1
        self.stats.samples += done
        if not done:
            return [0.0] * len(levels)
        return [h / done for h in hits]

    def _after_talon_and_gives(
        self, deal: SampledDeal, active: list[int], me: int, view: PlayerView
    ) -> list[int]:
        hands = {s: deal.hand_masks[s] for s in active}
        hands[me] |= deal.talon_mask
        if view.talon is not None and view.phase is Phase.BIDDING:
            hands[me] |= _mask(view.talon)
        others = [s for s in active if s != me]
        give = _give_pair(hands[me])
        for card, to in zip(give, others, strict=False):
            hands[me] &= ~(1 << card)
            hands[to] |= 1 << card
        return [hands[s] for s in active]

    def _bid(self, view: PlayerView, deadline: float) -> Action:
        bids = sorted((a for a in view.legal_actions if isinstance(a, Bid)), key=lambda a: a.amount)
        passing = next((a for a in view.legal_actions if isinstance(a, Pass)), None)
        if not bids:
            return passing or view.legal_actions[0]
        if passing is None:
            return bids[0]
        target = bids[0].amount
        barrel = view.barrel
        if barrel is not None and barrel[view.seat] > 0 and target < 120:
            # Sitting on the barrel only a contract of 120+ counts: aim for that level.
            want = next((b for b in bids if b.amount >= 120), None)
            if want is None:
                return passing
            rate = self._declarer_success(view, deadline, [want.amount])[0]
            return bids[0] if rate >= self.threshold else passing
        rate = self._declarer_success(view, deadline, [target])[0]
        return bids[0] if rate >= self.threshold else passing

    # ------------------------------------------------------------------ passing

    def _give(self, view: PlayerView, deadline: float) -> Action:
        legal = [a for a in view.legal_actions if isinstance(a, Give)]
        key = (view.deal_number, view.seat)
        plan = self._plan.get(key)
        if plan:
            for g in plan:
                if g in legal:
                    return g
        hand = _mask(view.hand)
        receivers = sorted({g.to for g in legal})
        already = len(view.gives)
        if already:
            # One card is already passed (by someone else's plan): give the cheapest now.
            card = min(_bits(hand), key=lambda c: keep_value(c, hand))
            return Give(_card(card), receivers[0])
        active = list(view.active_seats)
        me = view.seat
        decl = active.index(me)
        others = [s for s in active if s != me]
        order = sorted(_bits(hand), key=lambda c: keep_value(c, hand))
        cheap = order[:4]
        pairs = [(a, b) for i, a in enumerate(cheap) for b in cheap[i + 1 :]]
        sampler = Sampler(view)
        need = view.bid or 0
        scores = [0.0] * len(pairs)
        done = 0
        rules = view.ruleset
        while done < self.max_samples and time.perf_counter() < deadline:
            deal = sampler.sample(self.rng)
            row = []
            try:
                for a, b in pairs:
                    hands = {s: deal.hand_masks[s] for s in active}
                    hands[me] &= ~((1 << a) | (1 << b))
                    hands[others[0]] |= 1 << a
                    hands[others[1]] |= 1 << b
                    solver = Solver(
                        [hands[s] for s in active], decl, decl,
                        marriage_needs_trick=rules.marriage_needs_trick,
                        must_beat=rules.must_beat, ace_marriage=rules.ace_marriage,
                        deadline=deadline,
                    )  # fmt: skip
                    row.append(1.0 if solver.probe(need) else 0.0)
            except SearchTimeout:
                break
            for i, r in enumerate(row):
                scores[i] += r
            done += 1
        self.stats.samples += done
        # Ties (and no time) go to the lowest keep-value pair, listed first.
        best = max(range(len(pairs)), key=lambda i: (scores[i], -i)) if pairs else 0
        a, b = pairs[best] if pairs else (order[0], order[1])
        plan = [Give(_card(a), others[0]), Give(_card(b), others[1])]
        self._plan = {key: plan}
        for g in plan:
            if g in legal:
                return g
        return legal[0]

    # ------------------------------------------------------------------ contract

    def _contract(self, view: PlayerView, deadline: float) -> Action:
        legal = view.legal_actions
        contracts = sorted((a for a in legal if isinstance(a, Contract)), key=lambda a: a.amount)
        if not contracts:
            return legal[0]
        rules = view.ruleset
        active = list(view.active_seats)
        me = view.seat
        decl = active.index(me)
        levels = [a.amount for a in contracts]
        barrel = view.barrel
        on_barrel = barrel is not None and barrel[me] > 0
        sampler = Sampler(view)
        # First the bid itself on up to 10 samples in a quarter of the time, then climb the
        # levels on the same samples (their solvers keep their tables) while the success
        # rate holds: a sample always answers the question that matters most first.
        solvers: list[Solver] = []
        made0 = 0
        first_stop = time.perf_counter() + 0.25 * (deadline - time.perf_counter())
        while len(solvers) < 10 and time.perf_counter() < first_stop:
            deal = sampler.sample(self.rng)
            solver = Solver(
                [deal.hand_masks[s] for s in active], decl, decl,
                marriage_needs_trick=rules.marriage_needs_trick, must_beat=rules.must_beat,
                ace_marriage=rules.ace_marriage, deadline=deadline,
            )  # fmt: skip
            try:
                made0 += solver.probe(levels[0])
            except SearchTimeout:
                break
            solvers.append(solver)
        self.stats.samples += len(solvers)
        if not solvers:
            return contracts[0]
        rate = {0: made0 / len(solvers)}
        if rate[0] >= 0.5:
            # Climb 20 points at a time, then 5 at a time from the last level made more
            # often than not.
            ok = 0
            try:
                for step in (4, 1):
                    i = ok + step
                    while i < len(levels):
                        rate[i] = sum(sv.probe(levels[i]) for sv in solvers) / len(solvers)
                        if rate[i] < 0.5:
                            break
                        ok = i
                        i += step
            except SearchTimeout:
                pass
        # The level of the best expected score, (2p - 1) * level, with p discounted for
        # the solver's optimism (the declarer does not really see the defenders' cards).
        best_i = max(rate, key=lambda i: ((2 * _OPTIMISM * rate[i] - 1) * levels[i], -i))
        choice = contracts[best_i]
        if on_barrel and choice.amount < 120:
            # Below 120 nothing is won on the barrel: name 120 if there is any hope.
            at120 = next((a for a in contracts if a.amount >= 120), None)
            if at120 is not None:
                try:
                    j = contracts.index(at120)
                    r120 = sum(sv.probe(levels[j]) for sv in solvers) / len(solvers)
                    if r120 >= 0.35:
                        choice = at120
                except SearchTimeout:
                    pass
        p = rate[0]
        bid = levels[0]
        concede = next((a for a in legal if isinstance(a, Concede)), None)
        throw = next((a for a in legal if isinstance(a, ThrowIn)), None)
        if concede is not None:
            # Expected score relative to the two opponents (they take ~half the points each).
            play_rel = (2 * p - 1) * bid - 30
            if rules.concede == "free":
                conc_rel = -(bid / 2 if rules.concede_pays == "half" else 0)
            else:
                conc_rel = -bid - (bid / 2 if rules.concede_pays == "half" else 0)
            if conc_rel > play_rel:
                return concede
        if throw is not None:
            play_rel = (2 * p - 1) * bid - 30
            if -rules.throw_in_bonus > play_rel:
                return throw
        return choice


_CARDS = tuple(Card)


def _card(c: int) -> Card:
    return _CARDS[c]


def _give_pair(hand: int) -> list[int]:
    order = sorted(_bits(hand), key=lambda c: keep_value(c, hand))
    return order[:2]


def _max_level(
    hands: list[int], decl: int, levels: Sequence[int], rules: Ruleset, deadline: float
) -> int:
    """Index of the highest level the declarer makes double-dummy (-1: not even the first),
    by bisection over the ascending ``levels`` with zero-window probes."""
    solver = Solver(
        hands, decl, decl, marriage_needs_trick=rules.marriage_needs_trick,
        must_beat=rules.must_beat, ace_marriage=rules.ace_marriage, deadline=deadline,
    )  # fmt: skip
    lo, hi = -1, len(levels) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if solver.probe(levels[mid]):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _fallback_play(view: PlayerView, legal: list[Play]) -> Action:
    """No sample finished in time: win cheaply if last to play, else shed the cheapest."""
    return min(legal, key=lambda a: (POINTS[int(a.card)], int(a.card), not a.declare))
