"""Round 47: ``sdk.sampling`` audited as the author of a search bot relies on it.

- In every preset and ``rulesets/*.toml`` file (and the 1001 file at four players), at
  every decision of whole matches of random and capping players, for every seat: the true
  deal is one the sampler can draw — its hard facts *and* the weight its bid reading
  (:class:`~sdk.sampling.BidReading`) gives the truth, which no earlier test read; each
  draw agrees with the view (an independent reading of the history, from
  ``test_sampling_round18``); the same seed gives the same draw.
- The sampler reads nothing but the view: two deals that show a seat the same view give it
  the same draws.
- How often a deal is drawn (what the docs say): as often as the histories behind it, not
  as often as every other consistent deal.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from engine import PRESETS, Game, Phase, Ruleset, load_ruleset, observe, parse_action, parse_cards
from sdk.sampling import TALON, Constraints, Sampler, constraints_of
from tests.sdk.test_sampling_review18 import Capper, truth_problems
from tests.sdk.test_sampling_round18 import Recorder, _mask, _rich_deal, violations

ROOT = Path(__file__).resolve().parents[2]
RULESETS: list[Ruleset] = [
    PRESETS["classic"],
    PRESETS["1001"],
    PRESETS["1001-4p"],
    *(load_ruleset(str(p)) for p in sorted((ROOT / "rulesets").glob("*.toml"))),
    dataclasses.replace(
        load_ruleset(str(ROOT / "rulesets" / "tournament-1001.toml"), players=4),
        name="tournament-1001-4p",
    ),
    dataclasses.replace(
        PRESETS["1001-4p"], name="4p-hidden-mb", talon_visible=False, must_beat=True
    ),
]


def truth_is_kept(k: Constraints, hands: list[int], talon: int) -> bool:
    """Whether some case of ``k`` allows the true deal with a weight above 0: its pinned
    cards and cap facts hold, and its bid reading (if any) keeps the deal sometimes."""

    def held(s: int) -> int:
        return talon if s == TALON else hands[s] if 0 <= s < len(hands) else 0

    for i, (_, extra) in enumerate(k.cases or [(1, {})]):
        pinned = {s: k.fixed.get(s, 0) | extra.get(s, 0) for s in set(k.fixed) | set(extra)}
        if any(m & ~held(s) for s, m in pinned.items()):
            continue
        facts = k.any_of + (k.case_any_of[i] if k.case_any_of else [])
        if not all(any(all(held(s) & m == m for s, m in a.items()) for a in f) for f in facts):
            continue
        reading = k.case_reading[i] if k.case_reading else k.reading
        if reading is None or reading.weight(hands) > 0:
            return True
    return False


def play_and_check(rules: Ruleset, seed: int, deals: int) -> int:
    """Play ``deals`` deals and check every seat's view at every decision; returns how many
    views were checked."""
    rng = random.Random(seed)
    n = rules.players
    dealer = rng.randrange(n)
    rich = {d: _rich_deal(rng, rules, (dealer + d) % n) for d in range(deals)}
    g = Game.new(
        rules, seed, [f"p{i}" for i in range(n)], deals=rich if seed % 2 else None, dealer=dealer
    )
    cappers = [Capper(rng, rng.random() < 0.4) if seed % 3 else None for _ in range(n)]
    views = 0
    while not g.is_over and g.deal_number < deals:
        rec = Recorder(g)
        deal = g.deal_number
        while not g.is_over and g.deal_number == deal:
            hands = [_mask(g.hand(s)) for s in range(n)]
            talon = _mask(g.talon) if g.phase is Phase.BIDDING else 0
            for seat in range(n):
                view = observe(g, seat)
                where = (rules.name, seed, seat, [str(a) for a in g.actions])
                k = constraints_of(view)
                assert not truth_problems(k, hands, talon), where
                assert truth_is_kept(k, hands, talon), where
                draw = Sampler(view).sample(random.Random(views))
                bad = violations(view, rec.follows, list(draw.hand_masks), draw.talon_mask)
                assert not bad, (*where, bad)
                assert Sampler(view).sample(random.Random(views)) == draw, where
                views += 1
            actor = g.to_act
            assert actor is not None
            player = cappers[actor]
            v = observe(g, actor)
            rec.apply(player.act(v) if player else rng.choice(v.legal_actions))
    return views


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: r.name)
def test_every_view_of_a_match(rules: Ruleset) -> None:
    # (A hidden talon makes the reference check replay up to 120 talons a view: one match.)
    seeds = (1, 2) if rules.talon_visible else (2,)
    assert sum(play_and_check(rules, seed, 1) for seed in seeds) > 50


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: r.name)
def test_every_view_of_many_matches(rules: Ruleset) -> None:
    # (Run once in this round: no failure.)
    for seed in range(100, 120):
        play_and_check(rules, seed, 3)


def _game(preset: str, hands: list[str], talon: str, actions: str, dealer: int) -> Game:
    deal = ([parse_cards(h) for h in hands], parse_cards(talon))
    players = [f"p{i}" for i in range(PRESETS[preset].players)]
    g = Game.new(preset, 1, players, deals={0: deal}, dealer=dealer)
    for text in actions.split(", "):
        g.apply(parse_action(text))
    return g


def test_only_the_view_is_read() -> None:
    # Seat 0's view after the passes is the same whatever seats 1 and 2 hold of the cards
    # he cannot see (both deals let the bids and the play so far be made): the draws too.
    actions = "bid 105, pass, pass, give 10♣ to 0, give K♣ to 2, contract 105"
    first = _game(
        "classic",
        ["9♠ J♠ 9♣ J♣ 9♦ J♦ 9♥", "K♠ Q♠ 10♠ A♠ K♣ Q♣ 10♣", "A♣ K♦ Q♦ 10♦ A♦ J♥ K♥"],
        "Q♥ 10♥ A♥",
        actions,
        dealer=2,
    )
    other = _game(
        "classic",
        ["9♠ J♠ 9♣ J♣ 9♦ J♦ 9♥", "K♦ Q♦ 10♦ A♦ K♣ Q♣ 10♣", "A♣ K♠ Q♠ 10♠ A♠ J♥ K♥"],
        "Q♥ 10♥ A♥",
        actions,
        dealer=2,
    )
    assert [first.hand(s) for s in (1, 2)] != [other.hand(s) for s in (1, 2)]
    assert observe(first, 0) == observe(other, 0)
    a, b = Sampler(observe(first, 0)), Sampler(observe(other, 0))
    ra, rb = random.Random(7), random.Random(7)
    assert [a.sample(ra) for _ in range(50)] == [b.sample(rb) for _ in range(50)]


def test_deals_are_drawn_as_often_as_their_histories() -> None:
    # docs/writing-a-bot.md: a defender shown the talon, passed none of its cards, finds the
    # other defender holding one in a third of the draws (the pass to him was one of the
    # declarer's 9 other cards, 3 of them the talon's): 1 history per such deal against 8
    # for each deal without (any of his 8 cards the pass). Counting every consistent pair
    # of hands alike gives 3 * C(13, 7) / (C(13, 8) + 3 * C(13, 7)) = 4/5.
    g = _game(
        "classic",
        ["9♠ J♠ 9♣ J♣ 9♦ J♦ 9♥", "K♠ Q♠ 10♠ A♠ K♣ Q♣ 10♣", "A♣ K♦ Q♦ 10♦ A♦ J♥ K♥"],
        "Q♥ 10♥ A♥",
        "bid 105, pass, pass, give 10♣ to 0, give K♣ to 2",
        dealer=2,
    )
    view = observe(g, 0)
    assert view.declarer == 1 and view.talon is not None and view.gives[1] == (2, None)
    talon = _mask(view.talon)
    sampler = Sampler(view)
    rng = random.Random(3)
    draws = 6000
    share = sum(bool(sampler.sample(rng).hand_masks[2] & talon) for _ in range(draws)) / draws
    # 1/3 with a standard deviation of 0.006 at 6,000 draws.
    assert abs(share - 1 / 3) < 0.03, share
