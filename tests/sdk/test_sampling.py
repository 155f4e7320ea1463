"""sdk.sampling: every sample agrees with everything the view shows."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import PRESETS, Game, Phase, Play, Ruleset, observe, parse_action
from sdk.sampling import Sampler, sample_deal

_PRESETS = [
    PRESETS["classic"],
    PRESETS["1001"],
    PRESETS["1001-4p"],
    dataclasses.replace(PRESETS["classic"], must_beat=True, name="must-beat"),
    dataclasses.replace(PRESETS["classic"], talon_visible=False, name="hidden-talon"),
]


def _random_position(
    rules: Ruleset, seed: int, steps: int
) -> tuple[Game, list[tuple[int, int, int, int, int]]]:
    """Random legal play for ``steps`` actions (within one deal). Also returns, for every
    card played to a trick, ``(seat, card, led suit, trump in force, best card before)``,
    taken from the true state so that the test does not rely on the sampler's reading."""
    rng = random.Random(seed)
    g = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
    follows: list[tuple[int, int, int, int, int]] = []
    for _ in range(steps):
        if g.is_over or g.deal_number > 0:
            break
        seat = g.to_act
        assert seat is not None
        action = rng.choice(g.legal_actions())
        if g.phase is Phase.PLAYING and isinstance(action, Play) and g.trick and len(g.trick) < 3:
            led = int(g.trick[0][1]) // 6
            trump = -1 if g.trump is None else int(g.trump)
            best = int(g.trick[0][1])
            for _, card_ in g.trick[1:]:
                c = int(card_)
                if (c // 6 == best // 6 and c > best) or (c // 6 == trump and best // 6 != trump):
                    best = c
            follows.append((seat, int(action.card), led, trump, best))
        g.apply(action, seat=seat)
    return g, follows


def _check(g: Game, follows: list[tuple[int, int, int, int, int]], rng: random.Random) -> None:
    if g.is_over or g.deal_number > 0:
        return
    played = {int(c) for t in g.tricks for _, c in t.cards} | {int(c) for _, c in g.trick}
    must_beat = g.ruleset.must_beat
    for seat in range(g.n):
        view = observe(g, seat)
        sampler = Sampler(view)
        for _ in range(3):
            deal = sampler.sample(rng)
            # Hand sizes as in the truth; my hand exactly mine.
            for s in range(g.n):
                assert len(deal.hands[s]) == len(g.hand(s)), (s, deal.hands, g.hand(s))
            assert deal.hands[seat] == tuple(g.hand(seat))
            # Hands, talon (while face down) and played cards partition the deck.
            cards = [int(c) for h in deal.hands for c in h]
            if g.phase is Phase.BIDDING:
                cards += [int(c) for c in deal.talon]
            assert len(set(cards)) == len(cards)
            assert not set(cards) & played
            assert len(cards) + len(played) == 24
            # The talon shown to me is where it went; what I passed or received too.
            if view.talon is not None and g.phase is not Phase.BIDDING:
                holders = {int(c): s for s in range(g.n) for c in deal.hands[s]}
                for c in view.talon:
                    if int(c) in holders and holders[int(c)] != view.declarer:
                        gives = [to for to, _ in view.gives]
                        assert holders[int(c)] in gives
            for to, card in view.gives:
                if card is not None and card not in view.hand and int(card) not in played:
                    assert card in deal.hands[to]
            # Voids and must_beat limits revealed by play.
            for s, fc, led, trump, best in follows:
                hand = {int(x) for x in deal.hands[s]}
                if fc // 6 != led:
                    assert not any(x // 6 == led for x in hand)
                    if trump >= 0 and fc // 6 != trump:
                        assert not any(x // 6 == trump for x in hand)
                if must_beat and fc // 6 == best // 6 and fc < best and fc // 6 in (led, trump):
                    assert not any(x // 6 == fc // 6 and x > best for x in hand)
            # A marriage's partner card not played since is still in its declarer's hand.
            for s, suit in view.marriages:
                partners = [5, 11, 17, 23] if suit is None else [6 * suit + 2, 6 * suit + 3]
                for p in partners:
                    if p not in played:
                        assert p in {int(x) for x in deal.hands[s]}


@settings(max_examples=40, deadline=None)
@given(
    rules=st.sampled_from(_PRESETS),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 40),
)
def test_samples_consistent_with_view(rules: Ruleset, seed: int, steps: int) -> None:
    g, follows = _random_position(rules, seed, steps)
    _check(g, follows, random.Random(seed))


def test_talon_share_is_uniform_in_the_auction() -> None:
    # In the auction each unseen card is in the talon with probability 3/17.
    g = Game.new("classic", 5, ["a", "b", "c"])
    view = observe(g, g.to_act or 0)
    sampler = Sampler(view)
    rng = random.Random(1)
    counts: dict[int, int] = {}
    n = 3000
    for _ in range(n):
        for c in sampler.sample(rng).talon:
            counts[int(c)] = counts.get(int(c), 0) + 1
    assert len(counts) == 17
    for k in counts.values():
        assert abs(k / n - 3 / 17) < 0.04


def test_sample_deal_is_seeded() -> None:
    g = Game.new("1001-4p", 3, ["a", "b", "c", "d"])
    view = observe(g, g.to_act or 0)
    a = sample_deal(view, random.Random(42))
    b = sample_deal(view, random.Random(42))
    assert a == b
    assert sum(1 for h in a.hands if not h) == 1  # the 4-player dealer sits out


# A talon card passed face down to a defender who then declared its marriage, seen at the
# last trick after the declarer played his last card: the case "the hidden pass was not
# that talon card" gave the card to the declarer, who has no cards left, as well as to
# the marriage's declarer (a duplicated card, a hand of the wrong size).
_LAST_TRICK_MARRIAGE = [
    (
        "1001-4p",
        2718,
        "bid 105, bid 110, bid 120, bid 210, pass, pass, give Q♠ to 0, give Q♦ to 3,"
        " contract 225, play K♣, play J♣, play A♣, play K♠ declare, play 10♠, play 9♠,"
        " play 10♣, play Q♦, play 9♣, play Q♥ declare, play J♥, play A♥, play J♠, play A♠,"
        " play 10♥, play 9♦, play 10♦, play 9♥, play Q♣, play A♦, play J♦, play K♥",
    ),
    (
        "classic",
        3664,
        "bid 110, bid 120, pass, pass, give 9♠ to 1, give Q♣ to 0, contract 175, play 9♦,"
        " play J♦, play 9♣, play K♣ declare, play 10♣, play J♣, play K♥, play 9♥, play J♥,"
        " play K♠, play Q♠, play A♠, play A♦, play 9♠, play 10♦, play Q♥, play 10♥, play A♣,"
        " play Q♦ declare, play J♠, play A♥, play K♦",
    ),
]


def test_talon_marriage_card_of_a_defender_at_the_last_trick() -> None:
    for preset, seed, actions in _LAST_TRICK_MARRIAGE:
        g = Game.new(preset, seed, [f"p{i}" for i in range(PRESETS[preset].players)])
        for text in actions.split(", "):
            g.apply(parse_action(text))
        assert g.phase is Phase.PLAYING and len(g.tricks) == 7 and g.deal_number == 0
        declarer = g.declarer
        assert declarer is not None and not g.hand(declarer)
        played = {int(c) for t in g.tricks for _, c in t.cards} | {int(c) for _, c in g.trick}
        for seat in range(g.n):
            sampler = Sampler(observe(g, seat))
            rng = random.Random(seed)
            for _ in range(20):
                deal = sampler.sample(rng)
                assert [len(h) for h in deal.hands] == [len(g.hand(s)) for s in range(g.n)]
                cards = [int(c) for h in deal.hands for c in h]
                assert len(set(cards)) == len(cards), (preset, seat, deal.hands)
                assert len(cards) + len(played) == 24
