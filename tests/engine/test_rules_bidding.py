"""RULES.md §2 (bidding), classic and the bidding options; 1001 bidding is in test_rules_1001."""

from __future__ import annotations

import pytest

from engine import Phase
from engine.actions import Bid, Pass
from engine.cards import parse_cards

from .conftest import assert_refused, rules, table

# F holds the ♥ marriage (cap 220), S the ♠ marriage (cap 160), D none (cap 120).
BASE = {
    "F": "A♠ 10♠ K♥ Q♥ A♣ 10♣ K♣",
    "S": "9♠ J♠ Q♠ K♠ 9♣ J♣ Q♣",
    "D": "9♥ J♥ 10♥ A♥ 9♦ J♦ Q♦",
}
BASE_TALON = "K♦ 10♦ A♦"


def bids(game) -> set[int]:
    return {a.amount for a in game.legal_actions() if isinstance(a, Bid)}


def base(**overrides):
    return table(rules(**overrides), BASE, BASE_TALON)


def test_first_hand_is_committed_and_second_hand_speaks_first():
    t = base()
    g = t.game
    assert g.phase == Phase.BIDDING
    assert g.to_act == t.S, "first hand is committed to 100 without speaking"
    assert t.view("S").bid == 100
    assert Pass() in g.legal_actions()
    # S (♠ marriage): raises of 5 from 105 up to 120 + 40
    assert bids(g) == set(range(105, 161, 5))


def test_both_others_pass_first_hand_plays_100():
    t = base()
    F = t.F
    t.act("S: pass", "D: pass")
    g = t.game
    assert g.phase == Phase.PASSING
    assert g.to_act == F
    v = t.view(F)
    assert v.declarer == F
    assert v.bid == 100
    assert len(v.hand) == 10
    assert set(parse_cards(BASE_TALON)) <= set(v.hand)


def test_160_legal_and_165_refused_with_only_a_spade_marriage():
    t = base()
    assert "bid 160" in t.legal()
    assert "bid 165" not in t.legal()
    assert_refused(t.game, "bid 165")
    t.act("S: bid 160")
    assert t.view("F").bid == 160
    assert t.game.to_act == t.D


def test_no_marriage_caps_at_120():
    t = base()
    t.act("S: pass")
    assert t.game.to_act == t.D
    assert max(bids(t.game)) == 120
    assert_refused(t.game, "bid 125")
    t.act("D: bid 120")
    assert t.game.to_act == t.F
    # F holds the ♥ marriage: up to 220
    assert bids(t.game) == set(range(125, 221, 5))


@pytest.mark.parametrize("amount", [107, 101, 103, 112])
def test_bid_off_the_step_refused(amount):
    t = base()
    assert_refused(t.game, Bid(amount))


@pytest.mark.parametrize("amount", [100, 95, 0, -5])
def test_bid_not_above_the_standing_bid_refused(amount):
    t = base()
    assert_refused(t.game, Bid(amount))


def test_raise_must_exceed_the_standing_bid():
    t = base()
    t.act("S: bid 110")
    assert min(bids(t.game)) == 115
    assert_refused(t.game, "bid 110")
    t.act("D: bid 115")
    assert min(bids(t.game)) == 120


def test_a_pass_is_final_and_the_passer_is_skipped():
    t = base()
    S, D, F = t.S, t.D, t.F
    t.act("S: pass", "D: bid 105", "F: bid 110")
    assert t.game.to_act == D, "S passed: the turn goes from F to D"
    # S speaking again is refused, whatever he says
    assert_refused(t.game, Bid(115), seat=S)
    assert_refused(t.game, Pass(), seat=S)
    t.act("D: pass")
    assert t.game.phase == Phase.PASSING
    assert t.view(F).declarer == F
    assert t.view(F).bid == 110


def test_bidding_goes_round_until_two_passed():
    t = base()
    S = t.S
    t.act("S: bid 105", "D: bid 110", "F: bid 115", "S: bid 120", "D: pass")
    assert t.game.phase == Phase.BIDDING
    assert t.game.to_act == t.F
    t.act("F: pass")
    assert t.game.phase == Phase.PASSING
    assert t.view(S).declarer == S
    assert t.view(S).bid == 120
    assert t.game.to_act == S
    assert len(t.view(S).hand) == 10


def test_first_hand_may_pass_after_a_raise():
    t = base()
    S = t.S
    t.act("S: bid 105", "D: pass", "F: pass")
    assert t.view(S).declarer == S
    assert t.view(S).bid == 105


def test_bids_visible_to_all():
    t = base()
    S = t.S
    t.act("S: bid 105")
    for seat in range(3):
        assert (S, Bid(105)) in tuple(t.view(seat).bids)


def test_marriages_add_up_for_the_cap():
    # S holds the ♠ and ♣ marriages: 120 + 40 + 60 = 220
    hands = {
        "F": "A♠ 10♠ K♥ 9♥ A♣ 10♣ J♥",
        "S": "K♠ Q♠ K♣ Q♣ 9♠ J♠ 9♣",
        "D": "Q♥ 10♥ A♥ 9♦ J♦ Q♦ J♣",
    }
    t = table(rules(), hands, "K♦ 10♦ A♦")
    assert max(bids(t.game)) == 220


ACES = {
    "S": "A♠ A♣ A♦ A♥ 9♠ 9♣ 9♦",
    "F": "10♠ K♠ Q♠ 10♣ K♣ J♥ 9♥",
    "D": "J♠ Q♣ J♣ 10♦ K♦ Q♦ J♦",
}
ACES_TALON = "10♥ K♥ Q♥"


def test_ace_marriage_counts_for_bid_by_default():
    t = table(rules(), ACES, ACES_TALON)
    assert max(bids(t.game)) == 320
    t.act("S: bid 320")


def test_ace_marriage_counts_for_bid_off():
    t = table(rules(ace_marriage_counts_for_bid=False), ACES, ACES_TALON)
    assert max(bids(t.game)) == 120
    assert_refused(t.game, "bid 125")


def test_no_ace_marriage_no_bid_credit():
    t = table(rules(ace_marriage=False), ACES, ACES_TALON)
    assert max(bids(t.game)) == 120


def test_bid_step_option():
    t = table(rules(bid_step=10), BASE, BASE_TALON)
    assert bids(t.game) == {110, 120, 130, 140, 150, 160}
    assert_refused(t.game, "bid 105")
    assert_refused(t.game, "bid 115")


def test_opening_bid_option():
    t = table(rules(opening_bid=80), BASE, BASE_TALON)
    assert t.view("S").bid == 80
    assert min(bids(t.game)) == 85
    t.act("S: pass", "D: pass")
    assert t.view("F").bid == 80
    assert t.view("F").declarer == t.F


def test_first_hand_commits_off_in_classic():
    t = table(rules(first_hand_commits=False), BASE, BASE_TALON)
    assert t.game.to_act == t.F
    assert min(bids(t.game)) == 100
    assert Pass() in t.game.legal_actions()
    t.act("F: bid 100")
    assert min(bids(t.game)) == 105
    assert t.game.to_act == t.S


def test_bidding_during_other_phases_refused():
    t = base()
    t.act("S: pass", "D: pass")
    assert_refused(t.game, "bid 105")
    assert_refused(t.game, "pass")
