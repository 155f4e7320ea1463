"""RULES.md §8–9: marriages (when they may be declared, score, trump) and the ace marriage."""

from __future__ import annotations

from engine import Phase
from engine.cards import Suit, parse_cards
from engine.errors import MarriageError

from .conftest import assert_refused, rules, table

# Deal H: F holds the ♥ marriage and A♠ to win a trick with.
H = {
    "F": "K♥ Q♥ A♠ 10♠ A♣ 9♦ J♦",
    "S": "9♠ J♠ Q♠ K♠ 9♣ J♣ Q♣",
    "D": "A♥ 10♥ J♥ 9♥ K♣ 10♣ Q♦",
}
H_TALON = "A♦ 10♦ K♦"


def deal_h(gives=("give 9♦ to {S}", "give J♦ to {D}"), **overrides):
    t = table(rules(**overrides), H, H_TALON)
    t.act("S: pass", "D: pass", *gives, "contract 100")
    return t


def test_no_marriage_on_the_first_trick():
    t = deal_h()
    assert "play K♥" in t.legal()
    assert "play K♥ declare" not in t.legal()
    assert_refused(t.game, "play K♥ declare", error=MarriageError)
    t.act("F: play K♥")
    for seat in range(3):
        v = t.view(seat)
        assert v.trump is None
        assert v.marriages == ()


def test_marriage_after_a_won_trick_scores_100_and_makes_trump_at_once():
    t = deal_h()
    F = t.F
    t.act("F: play A♠", "S: play 9♠", "D: play K♣")
    assert t.game.to_act == F
    assert "play K♥ declare" in t.legal()
    assert "play Q♥ declare" in t.legal()
    t.act("F: play K♥ declare")
    for seat in range(3):
        v = t.view(seat)
        assert v.trump == Suit.HEARTS, "trump from the trick of the declaration on"
        assert v.marriages == ((F, Suit.HEARTS),)
    t.finish_deal()
    res = t.game.deal_results[0]
    assert res.marriage_points[F] == 100
    assert res.takes[F] == res.card_points[F] + 100


def test_marriage_partner_passed_away_changes_no_trump():
    t = deal_h(gives=("give Q♥ to {S}", "give J♦ to {D}"))
    t.act("F: play A♠", "S: play 9♠", "D: play K♣")
    assert "play K♥ declare" not in t.legal()
    err = assert_refused(t.game, "play K♥ declare", error=MarriageError)
    assert "partner" in err.rule or "Q♥" in err.rule
    t.act("F: play K♥")
    assert t.view("F").trump is None
    assert t.view("F").marriages == ()


def test_declaring_when_following_refused():
    t = deal_h()
    t.act("F: play A♠")
    # S holds K♠ Q♠ but follows: no declaration
    assert "play K♠ declare" not in t.legal()
    assert_refused(t.game, "play K♠ declare", error=MarriageError)


def test_declaring_a_card_without_marriage_refused():
    t = deal_h()
    t.act("F: play A♠", "S: play 9♠", "D: play K♣")
    assert_refused(t.game, "play 10♠ declare", error=MarriageError)


def test_marriage_needs_trick_off_allows_the_first_lead():
    t = deal_h(marriage_needs_trick=False)
    assert "play K♥ declare" in t.legal()
    t.act("F: play K♥ declare")
    assert t.view("S").trump == Suit.HEARTS


# Deal TT: F declares ♦ then ♥; S, void in ♥, keeps the old trump J♦.
TT = {
    "F": "A♠ K♦ Q♦ K♥ Q♥ 9♣ J♣",
    "S": "J♦ 10♠ Q♠ 9♠ A♣ 10♣ K♣",
    "D": "J♠ K♠ Q♣ A♥ 10♥ J♥ 9♥",
}
TT_TALON = "A♦ 10♦ 9♦"


def test_new_marriage_changes_trump_from_its_own_trick():
    t = table(rules(), TT, TT_TALON)
    F, S = t.F, t.S
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give 9♣ to {D}", "contract 100")
    t.act("F: play A♠", "S: play 9♠", "D: play J♠")
    t.act("F: play K♦ declare", "S: play 9♦")
    assert t.view(S).trump == Suit.DIAMONDS
    t.act("D: play 9♣")
    assert t.game.to_act == F
    t.act("F: play K♥ declare")
    assert t.view(S).trump == Suit.HEARTS
    assert t.view(S).marriages == ((F, Suit.DIAMONDS), (F, Suit.HEARTS))
    # S has no ♥ (the trump now): any card, the old trump ♦ is not obligatory
    assert t.legal_plays() == set(parse_cards("J♦ 10♠ Q♠ A♣ 10♣ K♣"))
    t.act("S: play J♦", "D: play 9♥")
    assert t.view(S).tricks[-1].winner == F, "J♦ is no trump any more: K♥ wins"
    t.finish_deal()
    assert t.game.deal_results[0].marriage_points[F] == 180


# Deal ACE: F holds all four aces.
ACE = {
    "F": "A♠ A♣ A♦ A♥ 10♠ 9♦ J♦",
    "S": "9♠ J♠ Q♠ K♠ 9♣ J♣ Q♣",
    "D": "9♥ J♥ Q♥ K♥ 10♥ K♣ 10♣",
}
ACE_TALON = "Q♦ K♦ 10♦"


def deal_ace(**overrides):
    t = table(rules(**overrides), ACE, ACE_TALON)
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give J♦ to {D}", "contract 100")
    return t


def test_ace_marriage_needs_a_trick_won_with_a_non_ace():
    t = deal_ace()
    assert "play A♠ declare" not in t.legal()
    assert_refused(t.game, "play A♠ declare", error=MarriageError)
    # winning a trick with an ace does not qualify
    t.act("F: play A♣", "S: play 9♣", "D: play K♣")
    assert t.game.to_act == t.F
    assert "play A♠ declare" not in t.legal()
    assert_refused(t.game, "play A♠ declare", error=MarriageError)


def test_ace_marriage_scores_200_and_changes_no_trump():
    t = deal_ace()
    F = t.F
    t.act("F: play 10♠", "S: play 9♠", "D: play K♣")
    assert t.game.to_act == F
    assert "play A♠ declare" in t.legal()
    t.act("F: play A♠ declare")
    v = t.view("S")
    assert v.marriages == ((F, None),)
    assert v.trump is None
    t.finish_deal()
    res = t.game.deal_results[0]
    assert res.marriage_points[F] == 200
    assert res.takes[F] == res.card_points[F] + 200


def test_ace_marriage_off_refuses():
    t = deal_ace(ace_marriage=False)
    t.act("F: play 10♠", "S: play 9♠", "D: play K♣")
    assert "play A♠ declare" not in t.legal()
    assert_refused(t.game, "play A♠ declare", error=MarriageError)
    assert t.game.phase == Phase.PLAYING
