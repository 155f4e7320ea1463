"""Four aces without a ten, round 49: the contract named as if the 200 were likely.

Holding the four aces, the ace marriage needs a trick won with a non-ace first. Over 200
seeded deals with the four aces and a marriage in the declarer's ten cards (the rest
drawn), the double-dummy take at the contract was the estimate + 41 (spread 9) when the
eight cards kept a ten, and the estimate − 59.5 (spread 16) in the 77 without one: the
defenders hold every ten and the 200 is rarely declared. The contract rule raised to 0.9
of the normal model (about the estimate − 30) and failed in 50 of those 77. The raise now
also needs 0.9 of the measured model when there is no ten (``HeuristicBot.aces_bare_offset``,
``aces_bare_sigma``): fitted on seeds 0–99 and scored on 100–199 (and the other way), the
contracts of those hands score +7180 (+7580) per 100 deals, made 75 → 96 (99) of 100.

Positions are built card by card through the engine; the bots' searches end on their nodes
(no wall-clock cut), so every answer here is deterministic.
"""

from __future__ import annotations

import pytest

from bots._dds import Solver, rule_options
from bots.counting import CountingBot
from bots.heuristic import estimate_take
from engine import Contract, Game, Pass, Phase, observe
from engine.cards import mask_of
from tests.bots.test_blunders_round35 import _bot, _finish_setup, _game
from tests.bots.test_judgement_round37 import _dd_takes

# Seat 0 (first hand, dealer 2: committed to 100) holds three aces and the ♣ marriage; the
# talon brings the fourth ace. No ten: the defenders hold all four.
_HANDS = [
    "A♣ A♦ K♣ Q♣ A♠ 9♥ J♣",
    "K♥ 9♣ 10♣ J♦ 9♦ J♥ Q♠",
    "J♠ 9♠ 10♥ K♠ 10♠ 10♦ K♦",
]
_TALON = "A♥ Q♦ Q♥"


def _declared() -> Game:
    g = _game(_HANDS, _TALON)
    while g.phase is Phase.BIDDING:
        assert g.to_act in (1, 2)
        g.apply(Pass(), seat=g.to_act)
    assert g.declarer == 0 and g.bid == 100
    return g


def _named(name: str) -> tuple[Game, int]:
    g = _declared()
    done = _finish_setup(g, _bot(name))
    assert isinstance(done[-1], Contract), done
    return g, done[-1].amount


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_four_aces_name_a_contract_the_lost_200_still_makes(name: str) -> None:
    """Before, counting named 180 here and the real deal takes 131 double-dummy: the
    defenders' tens keep the declarer from a trick won with a non-ace, so the 200 is never
    declared. Now both bots name a level the measured model makes, and the real deal
    makes it."""
    g, named = _named(name)
    hand = observe(g, 0).hand
    est = estimate_take(hand, g.ruleset)
    assert named <= est - 60
    masks = [mask_of(observe(g, s).hand) for s in range(3)]
    assert Solver(masks, 0, 0, **rule_options(g.ruleset)).value() >= named


def test_a_hand_without_the_four_aces_names_as_before() -> None:
    """The model binds only with the four aces and no ten: the same deal with the talon's
    A♥ swapped for the defenders' 10♠ (three aces and a ten) names the same contract as a
    bot whose model never binds; with the four aces and no ten it does bind."""

    class Before(CountingBot):
        aces_bare_offset = 1000.0  # made at every level: never binds

    three = _game([*_HANDS[:2], "J♠ 9♠ 10♥ K♠ A♥ 10♦ K♦"], "10♠ Q♦ Q♥")
    for g in (three, _declared()):
        while g.phase is Phase.BIDDING:
            g.apply(Pass(), seat=g.to_act)
    named = []
    for g in (three, _declared()):
        new, old = CountingBot(), Before()
        new.safety = old.safety = 1e6
        named.append((_finish_setup(g.clone(), new)[-1], _finish_setup(g.clone(), old)[-1]))
    assert named[0][0] == named[0][1]
    assert named[1][0] != named[1][1]


@pytest.mark.slow
def test_four_aces_level_against_sampled_deals() -> None:
    """Judged on 20 deals consistent with the declarer's view at the contract (seeded,
    double-dummy; the takes are 125–153): the old level (the estimate − 30: 180) is made in
    none, the new one (130) in 13, and it scores more on average (this hand is in the
    model's lower tail: naming the bid, 100, would score more still)."""
    g, named = _named("counting")
    view = observe(g, 0)
    takes = _dd_takes(view, samples=20)
    old = int((estimate_take(view.hand, g.ruleset) - 30) // 5 * 5)

    def score(level: int) -> float:
        return sum(level if t >= level else -level for t in takes) / len(takes)

    assert sum(t >= named for t in takes) > len(takes) / 2
    assert sum(t >= old for t in takes) == 0
    assert score(named) > score(old)
