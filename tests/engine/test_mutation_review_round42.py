"""Mutation review, round 42, of the rules engine (``engine/``): hand-made mutants of the
code that decides rule outcomes, each run against ``tests/engine``.

Every mutant but the ones below was killed by the existing tests; the equivalent ones
(no behaviour can tell them apart) are listed in the round's report. The tests here pin,
from the rule text (``RULES.md``, the 1001 seed text) and not from the engine, rules that
only a far-away test (the differential oracle) or none at all caught; each docstring
names the mutant it kills.
"""

from __future__ import annotations

import pytest

from engine import Bid, BidError, Phase, ThrowIn
from tests.engine.test_rule_cases_external import (
    SOLID,
    F,
    L,
    S,
    acts,
    last,
    new_game,
    ruleset,
)


# =========================================================================== 1001 throw-in
def test_1001_last_hand_may_throw_in_as_soon_as_he_has_seen_the_talon() -> None:
    """Mutant killed: the passing phase no longer offering ``ThrowIn`` to the last hand who
    took the talon after an all-pass (``legal_actions`` returning the gives alone), which
    only the differential oracle caught.

    The 1001 text: "Если пасуют 2 игрока из трех, то игрок на последней руке берет прикуп
    и, просмотрев карты, либо играет, ... либо бросает свои карты (в этом случае все
    игроки кроме сидящего на прикупе, пишут себе в плюс по 50 очков)": he may throw in
    having looked at the cards, before passing any; RULES.md 1001: "each other player
    dealt into the deal scores +50 and he scores 0".
    """
    g = new_game(ruleset("1001"), *SOLID, scores=(10, 20, 30))
    acts(g, (F, "pass"), (S, "pass"))
    assert g.phase is Phase.PASSING and g.declarer == L and g.last_hand_take
    assert ThrowIn() in g.legal_actions()
    acts(g, (L, "throw-in"))
    r = last(g)
    assert r.outcome == "thrown_in" and r.deltas == (50, 50, 0)
    assert g.scores == (60, 70, 30)


# =========================================================================== bad input
def test_the_least_raise_over_a_players_cap_is_refused_naming_the_cap() -> None:
    """Mutant killed: ``_refuse`` taking a bid of exactly the least raise for too low
    (``amt <= lo``), so that S, whose cap (180) is below the least raise (205), was told
    to raise the standing bid, which he did.

    RULES.md "Bad input": a bid "over the cap" is refused "with an error that names ...
    the rule broken"; §2: "Nobody may bid above 120 + the marriages in his own hand".
    """
    g = new_game(ruleset(), *SOLID)  # S holds K♣ Q♣ only: cap 180
    acts(g, (S, "bid 105"), (L, "bid 200"), (F, "pass"))
    assert g.to_act == S
    with pytest.raises(BidError) as e:
        g.apply(Bid(205), seat=S)
    assert "nobody may bid above 120 + the marriages in his own hand (180)" in e.value.rule
