"""What a player may see, audited against the rules (round 25).

An oracle written from RULES.md, not from ``observe``, follows every deal: what each seat
has been allowed to learn so far (its dealt cards, every card played, the talon once
taken if ``talon_visible`` or it is the declarer, a passed card if it gave or got it).
Seeded random matches under every preset and every option that bears on what is shown
(``talon_visible``, ``all_pass``, ``first_hand_commits``, ``concede``; 3 and 4 players)
check at every step and for every seat that

- the view holds no card the seat may not know (its hand, the talon, passed cards, the
  trick and the tricks, the legal actions);
- the view holds everything the seat may know (the talon once shown to it, the cards it
  passed or was passed, every completed trick, the bids, marriages, scores, its legal
  actions when it is to act);
- the view does not change when the cards the seat cannot know are dealt around
  differently among the other hands (and the talon while it is hidden), and neither does
  the refusal a bot gets for an illegal action (error texts name no hidden card).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator

import pytest

from engine import PRESETS, Game, IllegalActionError, Phase, PlayerView, Ruleset, observe
from engine.actions import Action, Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import Card
from engine.rules import load_ruleset

NAMES = ("ann", "bob", "cid", "dan")


def _rulesets() -> Iterator[Ruleset]:
    """Every preset crossed with the options that change what is shown or who takes the
    talon, and the shipped house-rule files."""
    for name in ("classic", "1001", "1001-4p"):
        base = PRESETS[name]
        for talon_visible, all_pass, commits, concede in itertools.product(
            (True, False), ("first_hand", "last_hand"), (True, False), ("free", "penalty", "off")
        ):
            yield dataclasses.replace(
                base,
                name=f"{name}-{int(talon_visible)}{all_pass[0]}{int(commits)}{concede[0]}",
                talon_visible=talon_visible,
                all_pass=all_pass,
                first_hand_commits=commits,
                concede=concede,
                max_deals=3,
            )
    for path, players in [
        ("rulesets/house-penalty.toml", 3),
        ("rulesets/classic-capped.toml", 3),
        ("rulesets/tournament-1001.toml", 3),
        ("rulesets/tournament-1001.toml", 4),
    ]:
        yield dataclasses.replace(load_ruleset(path, players=players), max_deals=3)


RULESETS = list(_rulesets())


class Oracle:
    """What each seat of ``game`` may know in the deal in progress (RULES.md §1–8)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.known: list[set[Card]] = []
        self.talon_shown: list[bool] = []
        self._new_deal()

    def _new_deal(self) -> None:
        g = self.game
        # RULES.md §1: each seat sees the cards dealt to it, nothing else.
        self.known = [set(h) for h in g.dealt_hands]
        self.talon_shown = [False] * g.n

    def apply(self, action: Action) -> None:
        g = self.game
        actor = g.to_act
        assert actor is not None
        deal, phase = g.deal_number, g.phase
        if isinstance(action, Play):  # §7: a card played is seen by everyone
            for k in self.known:
                k.add(action.card)
        elif isinstance(action, Give):  # §4: only the giver and the receiver learn it
            self.known[actor].add(action.card)
            self.known[action.to].add(action.card)
        g.apply(action, seat=actor)
        if g.is_over:
            return
        if g.deal_number != deal:
            self._new_deal()
        elif phase is Phase.BIDDING and g.phase is not Phase.BIDDING:
            # §3: the declarer takes the talon; all see it (talon_visible) or he alone.
            d = g.declarer
            for s in range(g.n):
                if g.ruleset.talon_visible or s == d:
                    self.known[s] |= set(g.talon)
                    self.talon_shown[s] = True


def view_cards(v: PlayerView) -> set[Card]:
    """Every card a view holds, wherever it is."""
    cards = set(v.hand) | set(v.talon or ())
    cards |= {c for _, c in v.gives if c is not None}
    cards |= {c for _, c in v.trick}
    cards |= {c for t in v.tricks for _, c in t.cards}
    cards |= {a.card for a in v.legal_actions if isinstance(a, Play | Give)}
    return cards


def check_view(oracle: Oracle, seat: int) -> PlayerView:
    g = oracle.game
    v = observe(g, seat)
    assert view_cards(v) <= oracle.known[seat], (g.ruleset.name, seat, g.phase)
    # Everything the seat is entitled to, from the full state.
    d = g.declarer
    assert v.hand == g.hand(seat)
    assert v.talon == (g.talon if oracle.talon_shown[seat] else None)
    assert v.gives == tuple((to, c if seat in (d, to) else None) for to, c in g.gives)
    assert v.trick == g.trick and v.tricks == g.tricks and v.marriages == g.marriages
    assert v.bids == tuple((s, a) for s, a in g.actions if isinstance(a, Bid | Pass))
    assert (v.declarer, v.bid, v.contract, v.trump) == (d, g.bid, g.contract, g.trump)
    assert (v.scores, v.barrel, v.deal_results) == (g.scores, g.barrel, g.deal_results)
    assert (v.phase, v.to_act, v.dealer, v.deal_number) == (
        g.phase,
        g.to_act,
        g.dealer,
        g.deal_number,
    )
    assert v.legal_actions == (g.legal_actions() if seat == g.to_act else ())
    return v


def hidden_reshuffled(oracle: Oracle, seat: int, rng: random.Random) -> Game | None:
    """A copy of the game in which the cards ``seat`` cannot know are dealt around
    differently among the same places (the other hands, and the talon while it is not in
    the declarer's hand), each place keeping its count; ``None`` if nothing is hidden."""
    g = oracle.game
    known = oracle.known[seat]
    g2 = g.clone()
    places: list[tuple[str, int, Card]] = []
    for s in range(g.n):
        if s != seat:
            places += [("hand", s, c) for c in g.hand(s) if c not in known]
    if g.phase is Phase.BIDDING:
        places += [("talon", -1, c) for c in g.talon if c not in known]
    cards = [c for _, _, c in places]
    shuffled = cards[:]
    rng.shuffle(shuffled)
    if shuffled == cards:
        return None
    for where, s, old in places:
        if where == "hand":
            g2._hands[s] &= ~(1 << old)
        else:
            g2._talon &= ~(1 << old)
    for (where, s, _), new in zip(places, shuffled, strict=True):
        if where == "hand":
            g2._hands[s] |= 1 << new
        else:
            g2._talon |= 1 << new
    return g2


def wrong_actions(g: Game) -> list[Action]:
    """Actions of every kind that the seat to act may try, legal or not."""
    out: list[Action] = [Pass(), Concede(), ThrowIn()]
    out += [Bid(a) for a in (g.ruleset.opening_bid, 123, 125, 300, 400)]
    out += [Contract(a) for a in (100, 123, 125, 300, 400)]
    for c in Card:
        out += [Play(c), Play(c, declare=True)]
        out += [Give(c, to) for to in range(g.n)]
    return out


def refusal(g: Game, action: Action) -> str:
    try:
        g.clone().apply(action, seat=g.to_act)
    except IllegalActionError as e:
        return f"{type(e).__name__}: {e}"
    return "accepted"


def _choose(g: Game, rng: random.Random) -> Action:
    legal = g.legal_actions()
    if g.phase is Phase.BIDDING and rng.random() < 0.5:
        # Pass often, so that every way of ending the auction is seen (all-pass too).
        return next((a for a in legal if isinstance(a, Pass)), legal[0])
    if g.phase is Phase.CONTRACT and rng.random() < 0.3:
        # Concede or throw in where the ruleset allows it.
        return next((a for a in legal if isinstance(a, Concede | ThrowIn)), legal[0])
    return rng.choice(legal)


def _matches(rules: Ruleset) -> Iterator[Oracle]:
    """The grid's random matches of ``rules`` (two, of at most 3 deals), the same every
    time: the oracle before each action, and once more at each match's end."""
    rng = random.Random(rules.name)
    for seed in range(2):
        g = Game.new(rules, f"{rules.name}/{seed}", NAMES[: rules.players])
        oracle = Oracle(g)
        while not g.is_over:
            yield oracle
            oracle.apply(_choose(g, rng))
        yield oracle


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: r.name)
def test_every_view_of_every_seat_at_every_step(rules: Ruleset) -> None:
    rng = random.Random(f"{rules.name}/reshuffle")
    for step, oracle in enumerate(_matches(rules)):
        g = oracle.game
        if g.is_over:  # the end of the match: no card at all, the results
            for s in range(g.n):
                v = observe(g, s)
                assert view_cards(v) == set() and v.phase is Phase.GAME_OVER
                assert v.deal_results == g.deal_results and v.legal_actions == ()
            continue
        views = [check_view(oracle, s) for s in range(g.n)]
        if step % 3 == 0:
            seat = rng.randrange(g.n)
            g2 = hidden_reshuffled(oracle, seat, rng)
            if g2 is not None:
                assert observe(g2, seat) == views[seat], (rules.name, seat, g.phase)
                if seat == g.to_act:
                    for a in rng.sample(wrong_actions(g), 40):
                        assert refusal(g2, a) == refusal(g, a), (rules.name, a)


def test_the_ruleset_grid_covers_every_way_a_talon_is_taken() -> None:
    """The grid above is only worth its checks if its random matches reach each case, with
    the talon shown and hidden: taken by the auction's winner, by first hand after an
    all-pass, by the last hand after an all-pass (1001), with 3 and 4 players; a deal
    conceded, thrown in, made and failed."""
    seen: set[tuple[bool, str]] = set()
    for rules in RULESETS:
        before = (-1, Phase.GAME_OVER)
        for oracle in _matches(rules):
            g = oracle.game
            if before == (g.deal_number, Phase.BIDDING) and g.phase is Phase.PASSING:
                bids = [s for s, a in g.actions if isinstance(a, Bid)]
                how = "last_hand" if g.last_hand_take else "bid" if bids else "first_hand"
                seen.add((rules.talon_visible, f"{how}, {g.n} players"))
            before = (g.deal_number, g.phase)
            seen |= {(rules.talon_visible, r.outcome) for r in g.deal_results}
    for visible in (True, False):
        for case in ("made", "failed", "conceded", "thrown_in"):
            assert (visible, case) in seen
        for n in (3, 4):
            for how in ("bid", "first_hand", "last_hand"):
                assert (visible, f"{how}, {n} players") in seen
