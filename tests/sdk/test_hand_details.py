"""sdk.hand: masters, voids and bid caps on real views, where a simpler reading goes wrong.

Each test names the mutant of the mutation audit it guards against. The views are made by
``engine.observe`` on games dealt with chosen hands.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from scripted_deal import play, scripted_game

from engine import (
    PRESETS,
    Bid,
    Card,
    Game,
    Ruleset,
    Suit,
    observe,
    parse_cards,
)
from sdk.hand import bid_cap, masters, outstanding_cards, unseen_cards, voids


def test_declarer_masters_count_the_cards_he_gave_away_as_out() -> None:
    """Mutation audit: ``masters()`` reading ``unseen_cards(view)`` instead of
    ``outstanding_cards(view)`` forgot the cards the declarer passed.

    ``masters`` counts every unplayed card held by another seat; a card the declarer gave away
    is one (he knows where it is, so it is not *unseen*, but it is still out). He gave A♦ and
    kept 10♦: 10♦ is outranked by A♦ in seat 0's hand, so it is not a master."""
    g = scripted_game()
    v = observe(g, 2)
    assert v.gives == ((0, Card.DA), (1, Card.D9))
    assert Card.D10 in v.hand and Card.DA not in v.hand
    # The distinction masters relies on.
    assert Card.DA in outstanding_cards(v)
    assert Card.DA not in unseen_cards(v)
    ms = masters(v)
    assert Card.D10 not in ms
    # A♠, A♥, A♣ are top; 10♣ and K♣ are outranked only by his own clubs; K♥ by 10♥ (out).
    assert ms == {Card.SA, Card.HA, Card.CA, Card.C10, Card.CK}
    # After seat 0 plays A♦, 10♦ is a master.
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    play(g, 1, "J♠")
    play(g, 2, "10♦")
    play(g, 0, "A♦")
    play(g, 1, "9♦")
    v0 = observe(g, 0)
    assert masters(v0, [Card.DK]) == {Card.DK}


def test_a_seat_that_trumps_is_void_in_the_led_suit_not_in_trumps() -> None:
    """Mutation audit: ``voids()`` without ``and card.suit != trump`` marked a seat that
    trumped a led suit as void in trumps too.

    ♥ is trump from trick 1 (seat 2 declares leading K♥); on trick 2 seat 0, without clubs,
    trumps A♣ with 10♥: it is void in ♣ only. Every seat's view agrees."""
    g = scripted_game()
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    play(g, 1, "J♠")
    play(g, 2, "K♥", declare=True)
    play(g, 0, "9♥")
    play(g, 1, "J♥")
    assert g.trump is Suit.HEARTS
    play(g, 2, "A♣")
    play(g, 0, "10♥")  # forced: no clubs, and a trump in hand
    play(g, 1, "9♣")
    assert len(g.tricks) == 3 and g.tricks[2].winner == 0
    for seat in range(3):
        assert voids(observe(g, seat)) == {0: {Suit.CLUBS}, 1: set(), 2: set()}, seat
    # The trick in progress counts too: seat 0 leads ♠, seat 1 follows, and seat 2, without
    # spades but with trumps, must trump: void in ♠, not in ♥.
    play(g, 0, "10♠")
    play(g, 1, "K♠")
    play(g, 2, "A♥")
    for seat in range(3):
        assert voids(observe(g, seat)) == {0: {Suit.CLUBS}, 1: set(), 2: {Suit.SPADES}}, seat


def _four_aces_game(rules: Ruleset) -> Game:
    # Seat 0 (second hand, first to speak) holds the four aces and no marriage.
    hands = [
        parse_cards("A♠ A♥ A♦ A♣ 9♠ 9♥ 9♦"),
        parse_cards("K♠ Q♥ K♦ J♣ 10♠ 10♥ 10♦"),
        parse_cards("Q♠ K♥ Q♦ K♣ J♠ J♥ J♦"),
    ]
    talon = parse_cards("Q♣ 10♣ 9♣")
    g = Game.new(rules, 7, ["ann", "bob", "cid"], deals={0: (hands, talon)})
    assert g.to_act == 0
    return g


def test_bid_cap_adds_nothing_for_four_aces_when_they_do_not_count_for_bids() -> None:
    """Mutation audit: ``bid_cap`` without ``ruleset.ace_marriage_counts_for_bid`` added 200
    for four aces even when the ruleset says the ace marriage does not count for bids.

    Checked against the engine: the highest bid it allows the seat is ``bid_cap``."""
    aces = parse_cards("A♠ A♥ A♦ A♣ 9♠ 9♥ 9♦")
    off = dataclasses.replace(PRESETS["classic"], ace_marriage_counts_for_bid=False)
    on = PRESETS["classic"]
    assert off.ace_marriage and on.ace_marriage and on.ace_marriage_counts_for_bid
    assert bid_cap(aces, off) == 120
    assert bid_cap(aces, on) == 320
    # With a marriage as well, only the marriage counts.
    assert bid_cap(parse_cards("A♠ A♥ A♦ A♣ K♥ Q♥ 9♦"), off) == 220
    for rules in (off, on):
        g = _four_aces_game(rules)
        v = observe(g, 0)
        top = max(a.amount for a in v.legal_actions if isinstance(a, Bid))
        assert top == bid_cap(v.hand, rules)
