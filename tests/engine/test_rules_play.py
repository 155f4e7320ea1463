"""RULES.md §7: leading, following suit, trumping, must_beat, who wins a trick."""

from __future__ import annotations

from engine import Phase
from engine.cards import Suit, parse_cards

from .conftest import assert_refused, rules, table
from .test_rules_bidding import BASE, BASE_TALON

# Deal P: F will declare ♦ on trick 2 and lose it to D's 10♦; D then leads ♣, which F and S
# have none of, so both must trump.
P = {
    "F": "A♠ 10♠ K♦ Q♦ A♥ 10♥ K♥",
    "S": "A♦ J♦ 9♦ 9♠ J♠ Q♠ 9♥",
    "D": "9♣ J♣ Q♣ K♣ 10♣ A♣ 10♦",
}
P_TALON = "K♠ Q♥ J♥"
P_START = ("S: pass", "D: pass", "F: give K♠ to {S}", "F: give J♥ to {D}", "F: contract 100")


def cards(text):
    return set(parse_cards(text))


def deal_p(**overrides):
    t = table(rules(**overrides), P, P_TALON)
    t.act(*P_START)
    return t


def test_declarer_leads_the_first_trick_with_any_card():
    t = deal_p()
    assert t.game.phase == Phase.PLAYING
    assert t.game.to_act == t.F
    assert t.legal_plays() == cards("A♠ 10♠ K♦ Q♦ A♥ 10♥ K♥ Q♥")


def test_follow_suit_and_a_discard_never_wins_without_trump():
    t = deal_p()
    F = t.F
    t.act("F: play 10♠")
    assert t.legal_plays() == cards("9♠ J♠ Q♠ K♠")
    assert_refused(t.game, "play A♦")
    t.act("S: play 9♠")
    # D has no ♠ and no trump is set: any card
    assert t.legal_plays() == cards("9♣ J♣ Q♣ K♣ 10♣ A♣ 10♦ J♥")
    t.act("D: play A♣")
    v = t.view(F)
    assert len(v.tricks) == 1
    assert v.tricks[0].winner == F, "the A♣ discard does not beat the led 10♠"
    assert t.game.to_act == F, "the winner leads next"
    assert v.trick == ()


def test_void_player_must_trump_but_need_not_beat():
    t = deal_p()
    F, S = t.F, t.S
    t.act("F: play 10♠", "S: play 9♠", "D: play A♣")
    t.act("F: play K♦ declare", "S: play 9♦", "D: play 10♦")
    assert t.view(F).trump == Suit.DIAMONDS
    assert t.game.to_act == t.D, "10♦ beats K♦"
    t.act("D: play 9♣")
    # F has no ♣: he must play his only trump, though he holds other cards
    assert t.legal_plays() == cards("Q♦")
    assert_refused(t.game, "play A♥")
    t.act("F: play Q♦")
    # S has no ♣ and two trumps; J♦ does not beat Q♦ but is legal (no duty to overtrump)
    assert t.legal_plays() == cards("A♦ J♦")
    assert_refused(t.game, "play J♠")
    t.act("S: play J♦")
    v = t.view(S)
    assert v.tricks[-1].winner == F, "the highest trump wins"
    assert t.game.to_act == F


def test_must_beat_when_following_a_declared_marriage():
    t = deal_p(must_beat=True)
    t.act("F: play 10♠", "S: play 9♠", "D: play A♣")
    t.act("F: play K♦ declare")
    # S holds A♦ J♦ 9♦: only A♦ beats K♦
    assert t.legal_plays() == cards("A♦")
    assert_refused(t.game, "play 9♦")
    t.act("S: play A♦")
    # D cannot beat A♦: any card he is obliged to play (his only ♦)
    assert t.legal_plays() == cards("10♦")
    t.act("D: play 10♦")
    assert t.view("S").tricks[-1].winner == t.S


def test_without_must_beat_the_follower_may_play_low():
    t = deal_p()
    t.act("F: play 10♠", "S: play 9♠", "D: play A♣", "F: play K♦ declare")
    assert t.legal_plays() == cards("A♦ J♦ 9♦")


def must_beat_base(on):
    t = table(rules(must_beat=on), BASE, BASE_TALON)
    t.act("S: pass", "D: pass", "give K♦ to {S}", "give 10♦ to {D}", "contract 100")
    t.act("F: play K♥", "S: play 9♣")
    return t


def test_following_need_not_beat_by_default():
    t = must_beat_base(False)
    assert t.legal_plays() == cards("9♥ J♥ 10♥ A♥")
    t.act("D: play 9♥")
    assert t.view("F").tricks[-1].winner == t.F


def test_following_must_beat_when_able_with_must_beat():
    t = must_beat_base(True)
    assert t.legal_plays() == cards("10♥ A♥")
    assert_refused(t.game, "play 9♥")
    t.act("D: play 10♥")
    assert t.view("F").tricks[-1].winner == t.D
    assert t.game.to_act == t.D


def test_highest_card_of_the_led_suit_wins():
    t = must_beat_base(False)
    t.act("D: play A♥")
    assert t.view("D").tricks[-1].winner == t.D
    assert t.game.to_act == t.D
