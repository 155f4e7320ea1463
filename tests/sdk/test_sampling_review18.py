"""A hostile review of the sampler's caps and passes (round 18): games whose players bid to
their cap, name the highest contract (or an odd one) and pass marriage cards away.

- At every decision, for every seat: the true deal meets a case of ``constraints_of`` *and*
  every cap fact of that case (``any_of`` and ``case_any_of``: the round-18 check read only
  ``any_of``), the sampler is built and draws without raising, and its tables stay small.
- Late in such deals the draws are compared with an enumeration whose weights are computed
  here from the rules alone (RULES.md §2, §5: every hidden pass card by card, each bid above
  120 against the bidder's 7 cards dealt, the contract against the declarer's 8 cards),
  leaving out only what the module documents as not read.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from engine import (
    PRESETS,
    Action,
    Bid,
    Contract,
    Game,
    Give,
    Phase,
    Play,
    PlayerView,
    Ruleset,
    observe,
)
from engine.game import cap_of
from sdk import hand as sdk_hand
from sdk.sampling import TALON, Constraints, Sampler, constraints_of
from tests.sdk.test_sampling_round18 import (
    Recorder,
    _mask,
    _rich_deal,
    _variant,
    chi_square_p,
    violations,
)

RULESETS = [
    PRESETS["classic"],
    PRESETS["1001"],
    PRESETS["1001-4p"],
    _variant("classic", talon_visible=False),
    _variant("1001-4p", talon_visible=False),
    _variant("classic", ace_marriage=False),
    _variant("classic", ace_marriage_counts_for_bid=False),
    _variant("1001", ace_marriage_counts_for_bid=False, talon_visible=False),
    _variant("classic", bid_step=10, opening_bid=120),
    _variant("1001", bid_step=20, opening_bid=60, must_beat=True),
    _variant("1001-4p", bid_step=10, opening_bid=120, first_hand_commits=True),
]


class Capper:
    """Bids its cap (mostly), names the highest contract (or, ``odd``, any legal one),
    passes marriage cards away when it can and declares every marriage it may."""

    def __init__(self, rng: random.Random, odd: bool) -> None:
        self.rng = rng
        self.odd = odd

    def act(self, view: PlayerView) -> Action:
        legal = list(view.legal_actions)
        rng = self.rng
        bids = [a for a in legal if isinstance(a, Bid)]
        if bids:
            return max(bids, key=lambda a: a.amount) if rng.random() < 0.85 else rng.choice(legal)
        contracts = [a for a in legal if isinstance(a, Contract)]
        if contracts:
            return rng.choice(contracts) if self.odd else max(contracts, key=lambda a: a.amount)
        gives = [a for a in legal if isinstance(a, Give)]
        if gives:
            marriage = [a for a in gives if int(a.card) % 6 in (2, 3)]
            return rng.choice(marriage if marriage and rng.random() < 0.7 else gives)
        declares = [a for a in legal if isinstance(a, Play) and a.declare]
        if declares and rng.random() < 0.8:
            return rng.choice(declares)
        return rng.choice(legal)


def _players(rng: random.Random, n: int) -> list[Capper | HeuristicBot | CountingBot]:
    out: list[Capper | HeuristicBot | CountingBot] = []
    for _ in range(n):
        r = rng.random()
        out.append(
            Capper(rng, rng.random() < 0.4)
            if r < 0.7
            else HeuristicBot()
            if r < 0.85
            else CountingBot()
        )
    return out


def _held(hands: list[int], talon: int, s: int) -> int:
    return talon if s == TALON else hands[s] if 0 <= s < len(hands) else 0


def truth_problems(k: Constraints, hands: list[int], talon: int) -> list[str]:
    """Why the true deal is not one the sampler can draw (empty: it can): sizes, exclusions,
    and a case whose pinned cards and every cap fact (global and of that case) it meets."""
    out = [
        f"seat {s} holds {_held(hands, talon, s).bit_count()} cards, not {cnt}"
        for s, cnt in k.counts.items()
        if _held(hands, talon, s).bit_count() != cnt
    ]
    out += [f"seat {s} holds excluded cards" for s, m in k.excluded.items() if m & hands[s]]
    for i, (_, extra) in enumerate(k.cases or [(1, {})]):
        pinned = {s: k.fixed.get(s, 0) | extra.get(s, 0) for s in set(k.fixed) | set(extra)}
        if any(m & ~_held(hands, talon, s) for s, m in pinned.items()):
            continue
        facts = k.any_of + (k.case_any_of[i] if k.case_any_of else [])
        if all(
            any(all(_held(hands, talon, s) & m == m for s, m in alt.items()) for alt in fact)
            for fact in facts
        ):
            return out
    return [*out, "no case whose pins and cap facts the truth meets"]


def _combinations(k: Constraints) -> int:
    """How many (case, one alternative per fact) tables the sampler builds at most."""
    return sum(
        math.prod(len(f) for f in k.any_of + (k.case_any_of[i] if k.case_any_of else []))
        for i in range(len(k.cases) or 1)
    )


def play_and_check(rules: Ruleset, seed: int, deals: int = 1) -> tuple[int, int]:
    """Play ``deals`` deals and check every seat's view at every decision; returns (views
    checked, the most tables one sampler needed)."""
    rng = random.Random(seed)
    n = rules.players
    dealer = rng.randrange(n)
    deal_map = {d: _rich_deal(rng, rules, (dealer + d) % n) for d in range(deals)}
    kwargs: dict[str, object] = {}
    if rules.barrel and rng.random() < 0.4:
        kwargs = {"scores": tuple([880] + [0] * (n - 1)), "barrel": tuple([2] + [0] * (n - 1))}
    g = Game.new(rules, seed, [f"p{i}" for i in range(n)], deals=deal_map, dealer=dealer, **kwargs)  # type: ignore[arg-type]
    players = _players(rng, n)
    checked = most = 0
    while not g.is_over and g.deal_number < deals:
        hands = [_mask(g.hand(s)) for s in range(n)]
        talon = _mask(g.talon) if g.phase is Phase.BIDDING else 0
        for seat in range(n):
            view = observe(g, seat)
            k = constraints_of(view)
            bad = truth_problems(k, hands, talon)
            assert not bad, (rules.name, seed, seat, [str(a) for a in g.actions], bad)
            most = max(most, _combinations(k))
            sampler = Sampler(view)
            for _ in range(2):
                deal = sampler.sample(rng)
                bad = truth_problems(k, list(deal.hand_masks), deal.talon_mask)
                assert not bad, (rules.name, seed, seat, "a draw", bad)
            checked += 1
        actor = g.to_act
        assert actor is not None
        g.apply(players[actor].act(observe(g, actor)), seat=actor)
    return checked, most


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: r.name)
def test_cappers_every_view(rules: Ruleset) -> None:
    views = most = 0
    for seed in range(1):
        v, m = play_and_check(rules, seed)
        views, most = views + v, max(most, m)
    assert views > 10
    # One table per alternative of each cap fact, crossed with the cases of a hidden pass:
    # at most 4 facts (three bids and the contract, the 4-player dealer's view) of at most 6
    # smallest sets each (need 105: K+Q of 100 and 40, of 100 and 60, ...), at most 24 cases
    # (a card each). Games of cappers reach ~6000 (about 0.1 s to build).
    assert most <= 6**4 * 24


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: r.name)
def test_cappers_every_view_long(rules: Ruleset) -> None:
    for seed in range(100, 160):
        play_and_check(rules, seed, deals=2)


# ---------------------------------------------------------------- weights from the rules


def rule_weight(view: PlayerView, hands: list[int]) -> int:
    """How many histories (hidden pass cards) lead to ``hands`` and make every bid and the
    contract legal by RULES.md §2, §5 (a receiver of a pass holds at most one talon card,
    the one passed; with the talon hidden, each 3 of the declarer's 10 cards it may have
    been). Left out as the module documents: the declarer's bid in the 4-player dealer's
    view when both passes are hidden (not settled by a talon card played)."""
    me, decl, rules = view.seat, view.declarer, view.ruleset
    assert decl is not None
    top: dict[int, int] = {}
    for s, a in view.bids:
        if isinstance(a, Bid) and a.amount > 120 and s != me:
            top[s] = max(top.get(s, 0), a.amount)
    played = [0] * len(hands)
    for s, c in [p for t in view.tricks for p in t.cards] + list(view.trick):
        played[s] |= 1 << int(c)
    shown = _mask(view.talon) if view.talon is not None else 0
    known = {to: 1 << int(c) for to, c in view.gives if c is not None}
    hidden = [to for to, c in view.gives if c is None]
    unread = sum(1 for o in hidden if not played[o] & shown) == 2
    contract = view.contract
    weight = 0
    choices = [[1 << x for x in range(24) if (hands[o] | played[o]) >> x & 1] for o in hidden]
    for picks in itertools.product(*choices):
        passes = {**known, **dict(zip(hidden, picks, strict=True))}
        given = _mask(c for g in passes.values() for c in range(24) if g >> c & 1)
        if any((hands[o] | played[o]) & shown & ~g for o, g in passes.items()):
            continue
        history = hands[decl] | played[decl] | given
        if shown & ~history:
            continue
        ok = True
        talons = 1  # with the talon hidden: which 3 of the declarer's 10 cards it was
        for s, b in top.items():
            if s == decl and unread:
                continue
            if s == decl and not shown:
                bits = [1 << c for c in range(24) if history >> c & 1]
                talons = sum(
                    cap_of(history & ~(x | y | z), rules) >= b
                    for x, y, z in itertools.combinations(bits, 3)
                )
                continue
            dealt = history & ~shown if s == decl else (hands[s] | played[s]) & ~passes[s]
            ok = ok and cap_of(dealt, rules) >= b
        if contract is not None and decl != me and contract > max(view.bid or 0, 120):
            ok = ok and cap_of(hands[decl] | played[decl], rules) >= contract
        weight += ok * talons
    return weight


def enumerate_by_rules(view: PlayerView, follows: list[object]) -> Counter[tuple[int, ...]]:
    """Every deal the play allows (``violations``), weighted by :func:`rule_weight`."""
    played = _mask(sdk_hand.played_cards(view))
    mine = _mask(view.hand)
    others = [s for s in view.active_seats if s != view.seat]
    sizes = {}
    for s in others:
        size = 7 + (3 if s == view.declarer else 0)
        size += sum((to == s) - (view.declarer == s) for to, _ in view.gives)
        size -= sum(p == s for t in view.tricks for p, _ in t.cards)
        size -= sum(p == s for p, _ in view.trick)
        sizes[s] = size
    free = [c for c in range(24) if not (played | mine) >> c & 1]
    out: Counter[tuple[int, ...]] = Counter()
    hands = [0] * len(view.scores)
    hands[view.seat] = mine

    def place(i: int) -> None:
        if i == len(others):
            if not violations(view, follows, list(hands), 0):  # type: ignore[arg-type]
                w = rule_weight(view, hands)
                if w:
                    out[tuple(hands)] = w
            return
        taken = _mask(c for h in hands for c in range(24) if h >> c & 1)
        for combo in itertools.combinations(
            [c for c in free if not taken >> c & 1], sizes[others[i]]
        ):
            hands[others[i]] = _mask(combo)
            place(i + 1)
        hands[others[i]] = 0

    place(0)
    return out


def check_by_rules(seed: int, cards_left: int) -> int:
    """Play a deal of cappers to ``cards_left`` cards; if a bid above 120 or a contract above
    the bid was made, compare every seat's draws with :func:`enumerate_by_rules`."""
    rng = random.Random(seed)
    rules = rng.choice(RULESETS)
    n = rules.players
    dealer = rng.randrange(n)
    deal = _rich_deal(rng, rules, dealer)
    g = Game.new(rules, seed, [f"p{i}" for i in range(n)], deals={0: deal}, dealer=dealer)
    rec = Recorder(g)
    players = [Capper(rng, rng.random() < 0.5) for _ in range(n)]
    while g.deal_number == 0:
        actor = g.to_act
        assert actor is not None
        if g.phase is Phase.PLAYING and len(g.hand(actor)) <= cards_left:
            break
        rec.apply(players[actor].act(observe(g, actor)))
    else:
        return 0
    high = any(isinstance(a, Bid) and a.amount > 120 for _, a in g.actions)
    if not high and (g.contract or 0) <= max(g.bid or 0, 120):
        return 0
    tested = 0
    for seat in range(n):
        view = observe(g, seat)
        deals = enumerate_by_rules(view, rec.follows)  # type: ignore[arg-type]
        assert deals[tuple(_mask(g.hand(s)) for s in range(n))] > 0
        if len(deals) < 2:
            continue
        total = sum(deals.values())
        draws = max(600, 8 * total // min(deals.values()))
        sampler = Sampler(view)
        draw_rng = random.Random(seed * 31 + seat)
        got = Counter(tuple(sampler.sample(draw_rng).hand_masks) for _ in range(draws))
        where = (rules.name, seed, seat, [str(a) for a in g.actions])
        assert set(got) <= set(deals), (*where, "drew a deal the rules exclude")
        keys = sorted(deals)
        p = chi_square_p([got[k] for k in keys], [draws * deals[k] / total for k in keys])
        assert p > 1e-4, (*where, len(deals), p)
        tested += 1
    return tested


def test_draws_match_the_rules_late_in_cappers_deals() -> None:
    assert sum(check_by_rules(seed, 3) for seed in range(12)) >= 10


@pytest.mark.slow
def test_draws_match_the_rules_late_in_cappers_deals_long() -> None:
    assert sum(check_by_rules(seed, 3) for seed in range(100, 400)) > 300
