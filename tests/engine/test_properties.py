"""Property tests over random deals (RULES.md "Invariants"), presets classic / 1001 / 1001-4p.

Random play: each step picks a legal action with a hypothesis-drawn ``random.Random``. The
trick rules are checked against an independent oracle (conftest). Derandomized and without
an example database, so a run is reproducible; sizes keep the default run well under a minute.
"""

from __future__ import annotations

import itertools
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as HPhase
from hypothesis import strategies as st

from engine import (
    PRESETS,
    Game,
    IllegalActionError,
    Phase,
    action_sort_key,
    observe,
    replay,
    trick_winner,
)
from engine.actions import Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import DECK, Card, Rank, Suit

from .conftest import oracle_legal_cards, oracle_winner, players_for, snapshot

VARIANTS = (
    PRESETS["classic"],
    PRESETS["1001"],
    PRESETS["1001-4p"],
)

PROFILE = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    # no shrinking: a failing random deal is reported as found (shrinking one costs minutes)
    "phases": (HPhase.explicit, HPhase.generate),
}

seeds = st.integers(min_value=0, max_value=2**31 - 1)
variants = st.sampled_from(VARIANTS)


def random_action(game: Game, rng: random.Random):
    legal = game.legal_actions()
    # prefer playing on over conceding so that most deals are played out
    plays = [a for a in legal if not isinstance(a, Concede | ThrowIn)]
    if plays and rng.random() < 0.9:
        legal = plays
    # keep the auction short: pass more often than a uniform pick would
    if game.phase == Phase.BIDDING and Pass() in legal and rng.random() < 0.5:
        return Pass()
    return rng.choice(legal)


def check_deal_start(game: Game) -> None:
    n = len(game.players)
    hands = [game.hand(s) for s in range(n)]
    every = [c for h in hands for c in h] + list(game.talon)
    assert sorted(every) == sorted(DECK), "hands and talon partition the 24 cards"
    assert len(game.talon) == 3
    for s in range(n):
        if n == 4 and s == game.dealer:
            assert hands[s] == ()
        else:
            assert len(hands[s]) == 7
            assert tuple(observe(game, s).hand) == tuple(sorted(hands[s]))


def play_random_deals(rule, seed: int, rng: random.Random, deals: int, on_step=None) -> Game:
    """Play ``deals`` deals at random, checking the deal and trick invariants as it goes."""
    game = Game.new(rule, seed, players_for(rule))
    n = rule.players
    check_deal_start(game)
    target = deals
    plays_this_deal = 0
    while not game.is_over and game.deal_number < target:
        number = game.deal_number
        phase = game.phase
        seat = game.to_act
        before_scores = game.scores
        trick_before = game.trick
        action = random_action(game, rng)
        if phase == Phase.PLAYING:
            legal_cards = {a.card for a in game.legal_actions() if isinstance(a, Play)}
            expect = oracle_legal_cards(game.hand(seat), trick_before, game.trump, rule.must_beat)
            assert legal_cards == expect, (legal_cards, expect, trick_before, game.trump)
            # a declaration is offered only on a lead with K/Q and its partner, or an ace
            for a in game.legal_actions():
                if isinstance(a, Play) and a.declare:
                    assert not trick_before
                    hand = set(game.hand(seat))
                    if a.card.rank in (Rank.KING, Rank.QUEEN):
                        partner = Card(a.card ^ 1)
                        assert partner in hand
                    else:
                        assert a.card.rank == Rank.ACE
                        assert all(Card.of(Rank.ACE, s) in hand for s in range(4))
        if on_step is not None:
            on_step(game, action)
        game.apply(action, seat=seat)
        if isinstance(action, Play):
            plays_this_deal += 1
            if game.deal_number == number and len(game.trick) == 0:
                # a trick has just been completed
                last = game.tricks[-1]
                assert last.winner == oracle_winner(last.cards, game.trump)
                won = trick_winner([c for _, c in last.cards], game.trump)
                assert last.cards[won][0] == last.winner
                assert game.to_act == last.winner
        if game.phase == Phase.CONTRACT and phase == Phase.PASSING:
            for s in game.active_seats:
                assert len(game.hand(s)) == 8, "after passing every active player holds 8"
        if game.deal_number != number or game.is_over:
            res = game.deal_results[-1]
            assert res.number == number
            if res.outcome in ("made", "failed"):
                assert plays_this_deal == 24, "a played deal has exactly 8 tricks"
                active = [s for s in range(n) if not (n == 4 and s == res.dealer)]
                assert sum(res.card_points[s] for s in active) == 120
            for s in range(n):
                assert game.scores[s] == before_scores[s] + res.deltas[s]
            assert tuple(res.scores) == tuple(game.scores)
            plays_this_deal = 0
            if not game.is_over:
                check_deal_start(game)
    return game


@settings(max_examples=400, **PROFILE)
@given(seed=seeds, rng=st.randoms(use_true_random=False), rule=variants)
def test_random_deals_keep_the_invariants(seed, rng, rule):
    play_random_deals(rule, seed, rng, deals=3)


# --- every legal action applies, every other one is refused with the state unchanged -----


def ill_formed(rng: random.Random, n: int):
    kind = rng.randrange(7)
    card = Card(rng.randrange(24))
    if kind == 0:
        return Bid(rng.choice([-5, 0, 35, 40, 42, 100, 103, 105, 120, 125, 160, 165, 320, 325]))
    if kind == 1:
        return Pass()
    if kind == 2:
        return Give(card, rng.randrange(-1, n + 1))
    if kind == 3:
        return Contract(rng.choice([35, 40, 100, 101, 120, 125, 200, 400]))
    if kind == 4:
        return Concede()
    if kind == 5:
        return ThrowIn()
    return Play(card, declare=rng.random() < 0.3)


@settings(max_examples=40, **PROFILE)
@given(seed=seeds, rng=st.randoms(use_true_random=False), rule=variants)
def test_legal_actions_apply_and_others_are_refused(seed, rng, rule):
    n = rule.players

    def on_step(game, _action):
        legal = game.legal_actions()
        assert len(set(legal)) == len(legal)
        assert observe(game, game.to_act).legal_actions == legal
        for s in range(n):
            if s != game.to_act:
                assert observe(game, s).legal_actions == ()
        for a in legal:
            clone = game.clone()
            clone.apply(a, seat=game.to_act)
        before = snapshot(game)
        for _ in range(6):
            a = ill_formed(rng, n)
            if a in legal:
                continue
            try:
                game.apply(a)
            except IllegalActionError as e:
                assert e.action == a
                assert tuple(e.legal) == legal
            else:
                raise AssertionError(f"{a} applied but not in legal {legal}")
        assert snapshot(game) == before

    play_random_deals(rule, seed, rng, deals=1, on_step=on_step)


@settings(max_examples=30, **PROFILE)
@given(seed=seeds, rng=st.randoms(use_true_random=False), rule=variants)
def test_legal_actions_are_sorted_by_action_sort_key(seed, rng, rule):
    def on_step(game, _action):
        legal = game.legal_actions()
        assert list(legal) == sorted(legal, key=action_sort_key), (game.phase, legal)

    play_random_deals(rule, seed, rng, deals=1, on_step=on_step)


# --- replay -------------------------------------------------------------------------------


@settings(max_examples=45, **PROFILE)
@given(seed=seeds, rng=st.randoms(use_true_random=False), rule=variants)
def test_replay_reproduces_every_state(seed, rng, rule):
    n = rule.players
    cuts: list[tuple[dict, tuple, list]] = []

    def on_step(game, _action):
        if rng.random() < 0.08:
            cuts.append((game.record(), game.scores, [observe(game, s) for s in range(n)]))

    game = play_random_deals(rule, seed, rng, deals=3, on_step=on_step)
    cuts.append((game.record(), game.scores, [observe(game, s) for s in range(n)]))
    for rec, scores, views in cuts:
        again = replay(rec)
        assert again.scores == scores
        assert [observe(again, s) for s in range(n)] == views
        assert again.record() == rec


# --- a player's view depends only on what he may see --------------------------------------


@settings(max_examples=250, **PROFILE)
@given(seed=seeds, rng=st.randoms(use_true_random=False), rule=variants)
def test_reshuffling_hidden_cards_never_changes_a_view(seed, rng, rule):
    n = rule.players
    players = players_for(rule)
    game = Game.new(rule, seed, players)
    viewer = rng.choice([s for s in range(n)])
    hands = [list(game.hand(s)) for s in range(n)]
    talon = list(game.talon)
    actions = []
    cut = rng.randrange(1, 40)
    while len(actions) < cut and game.deal_number == 0 and not game.is_over:
        a = random_action(game, rng)
        actions.append((game.to_act, a))
        game.apply(a)
    # cards the viewer has seen: his hand, cards acted with (played or given), the talon
    # once taken if it is shown, and what he received
    seen = set(hands[viewer])
    for _, a in actions:
        if isinstance(a, Play | Give):
            seen.add(a.card)
    if game.deal_number == 0 and observe(game, viewer).talon is not None:
        seen |= set(talon)
    if game.deal_number != 0:
        return  # the deal ended inside the cut: nothing stays hidden
    # permute the hidden 9/J/10 cards of each suit among the other hands and the talon:
    # suit counts and marriages per holder are unchanged, so the same actions stay legal
    places = [("hand", s) for s in range(n) if s != viewer] + [("talon", 0)]
    new_hands = [list(h) for h in hands]
    new_talon = list(talon)
    for suit in range(4):
        slots = []
        for kind, s in places:
            holder = new_talon if kind == "talon" else new_hands[s]
            for i, c in enumerate(holder):
                if c.suit == suit and c.rank in (Rank.NINE, Rank.JACK, Rank.TEN) and c not in seen:
                    slots.append((holder, i))
        cards = [h[i] for h, i in slots]
        rng.shuffle(cards)
        for (h, i), c in zip(slots, cards, strict=True):
            h[i] = c
    other = Game.new(rule, seed, players, deals={0: (new_hands, new_talon)})
    first = Game.new(rule, seed, players, deals={0: (hands, talon)})
    assert observe(first, viewer) == observe(other, viewer)
    for seat, a in actions:
        first.apply(a, seat=seat)
        other.apply(a, seat=seat)
        assert observe(first, viewer) == observe(other, viewer)


def test_trick_winner_agrees_with_the_oracle_on_every_trick() -> None:
    for trump in (None, *Suit):
        for cards in itertools.permutations(DECK, 3):
            trick = list(enumerate(cards))
            assert trick_winner(cards, trump) == oracle_winner(trick, trump)
