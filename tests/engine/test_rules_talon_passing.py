"""RULES.md §3–4: the talon, its visibility, and passing one card to each opponent."""

from __future__ import annotations

from engine import Phase, public_action
from engine.actions import Give
from engine.cards import Card, parse_cards

from .conftest import assert_refused, rules, table
from .test_rules_bidding import BASE, BASE_TALON

TALON = set(parse_cards(BASE_TALON))


def declared(**overrides):
    """BASE with F the declarer at 100 (both others passed)."""
    t = table(rules(**overrides), BASE, BASE_TALON)
    t.act("S: pass", "D: pass")
    return t


def test_talon_hidden_during_bidding():
    t = table(rules(), BASE, BASE_TALON)
    for seat in range(3):
        v = t.view(seat)
        assert v.talon is None
        assert not (set(v.hand) & TALON)
        assert len(v.hand) == 7


def test_talon_visible_to_all_by_default():
    t = declared()
    for seat in range(3):
        assert set(t.view(seat).talon) == TALON
    assert set(t.view("F").hand) == set(parse_cards(BASE["F"])) | TALON


def test_talon_visible_off_hides_it_from_the_opponents():
    t = declared(talon_visible=False)
    for role in ("S", "D"):
        v = t.view(role)
        assert v.talon is None
        text = repr(v)
        for c in TALON:
            assert f"Card.{c.name}" not in text
    assert set(t.view("F").hand) >= TALON


def test_declarer_gives_one_card_to_each_opponent():
    t = declared()
    F, S, D = t.F, t.S, t.D
    hand = set(t.view(F).hand)
    legal = set(t.game.legal_actions())
    assert legal == {Give(c, s) for c in hand for s in (S, D)}
    t.act("F: give A♣ to {S}")
    assert set(t.view(S).hand) == set(parse_cards(BASE["S"])) | {Card.CA}
    assert t.game.to_act == F
    assert set(t.game.legal_actions()) == {Give(c, D) for c in hand - {Card.CA}}
    t.act("F: give K♦ to {D}")
    assert t.game.phase == Phase.CONTRACT
    assert t.game.to_act == F
    for seat in range(3):
        assert len(t.view(seat).hand) == 8


def test_second_card_to_the_same_opponent_refused():
    t = declared()
    t.act("give A♣ to {S}")
    assert_refused(t.game, t.action("give K♣ to {S}")[1])


def test_give_to_himself_or_out_of_range_refused():
    t = declared()
    assert_refused(t.game, Give(Card.CA, t.F))
    assert_refused(t.game, Give(Card.CA, 3))
    assert_refused(t.game, Give(Card.CA, -1))


def test_give_a_card_not_held_refused():
    t = declared()
    assert_refused(t.game, t.action("give 9♠ to {D}")[1])  # S holds 9♠


def test_given_card_is_seen_only_by_giver_and_receiver():
    t = declared()
    F, S, D = t.F, t.S, t.D
    t.act("give A♣ to {S}")
    give = Give(Card.CA, S)
    # the third seat sees that a card went to S, not which
    third = t.view(D)
    assert "Card.CA" not in repr(third)
    assert "A♣" not in str(third.gives)
    assert len(third.gives) == 1
    censored = public_action(give, F, D)
    assert "A♣" not in str(censored)
    assert public_action(give, F, S) == give
    assert public_action(give, F, F) == give
    assert third.gives == ((S, None),)
    assert t.view(S).gives == ((S, Card.CA),)
    assert t.view(F).gives == ((S, Card.CA),)
    assert Card.CA in t.view(S).hand
    assert Card.CA not in t.view(F).hand


def test_a_passed_card_cannot_be_played_by_the_giver():
    t = declared()
    t.act("give A♣ to {S}", "give K♦ to {D}", "contract 100")
    assert "play A♣" not in t.legal()
    assert_refused(t.game, "play A♣")
