"""Rules audit, round 4: the interactions of RULES.md that no earlier rule case played,
written as a hidden rule case would be (the public API of ``docs/rules-engine.md``, a
crafted deal, the expected numbers worked out by hand from the quoted clause).

Rounds 1-3, the external and outside cases and the rule lawyer's round cover each rule
on its own; this file adds the combinations: a sitter whose made contract below 120 meets
a newcomer (both barrel modes), two sitters whose last barrel deals end together, a loser
below zero owing more than the target, a throw-in bonus and a 4-player dealer's talon
lifting a player onto the barrel, a bid step that does not divide the cap, and a marriage
completed by a card the declarer passed. Seating as in the external cases: 3 players,
dealer 2, so first hand F = 0, second hand S = 1, last hand L = 2; 4 players, dealer 3.
"""

from __future__ import annotations

import pytest

from engine import Bid, BidError, Game, Play, Ruleset, Suit, parse_card, parse_cards
from tests.engine.test_rule_cases_external import (
    NAMES3,
    SOLID,
    SOLID_GIVES,
    SOLID_PLAY,
    F,
    L,
    S,
    acts,
    bids,
    contracts,
    last,
    new_game,
    play_tricks,
    plays,
    refused,
    ruleset,
)

# KNOCK: F is dealt the six spades and A♣, S the low clubs and diamonds, L the hearts and A♦;
# the talon is 10♦ K♦ Q♦. S and L pass; F gives Q♦ to S and K♦ to L. F declares ♠ (40) on
# the second trick; L wins only the third trick (10♦ 9♦ A♦: 21 card points).
# F takes 11 + 8 + 7 + 22 + 16 + 10 + 25 = 99 card points + 40 = 139; S 0; L 21.
KNOCK = (
    {F: "AS 10S KS QS JS 9S AC", S: "10C KC QC JC 9C 9D JD", L: "AH 10H KH QH JH 9H AD"},
    "10D KD QD",
)
KNOCK_GIVES = ((F, "give QD to 1"), (F, "give KD to 2"))
KNOCK_PLAY = (
    "AS 9C 9H",  # F 11
    "KS* JC JH",  # F 8, ♠ marriage: trump ♠
    "10D 9D AD",  # L 21
    "KD 9S QD",  # F (void in ♦, must trump) 7
    "10S JD 10H",  # F 22
    "QS 10C QH",  # F 16
    "JS KC KH",  # F 10
    "AC QC AH",  # F 25
)


def knock_deal(
    contract: int, scores: tuple[int, ...], barrel: tuple[int, ...], barrel_mode: str = "many"
) -> Game:
    """KNOCK from ``scores``/``barrel``, F declarer at ``contract``, played out."""
    g = new_game(ruleset(barrel_mode=barrel_mode), *KNOCK, scores=scores, barrel=barrel)
    acts(g, (S, "pass"), (L, "pass"), *KNOCK_GIVES, (F, f"contract {contract}"))
    play_tricks(g, *KNOCK_PLAY)
    res = last(g)
    assert res.card_points == (99, 0, 21) and res.takes == (139, 0, 21)
    return g


# =========================================================================== the barrel
def test_barrel_mode_one_a_sitters_made_contract_below_120_does_not_save_him_from_a_newcomer() -> (
    None
):
    # RULES barrel: "a made contract below 120 scores nothing" (he stays on, the deal counts);
    # barrel_mode one: "a newcomer knocks the sitter off, −120". L: 860 + 21 reaches 880.
    g = knock_deal(100, (880, 0, 860), (3, 0, 0), barrel_mode="one")
    res = last(g)
    assert res.outcome == "made" and res.deltas == (-120, 0, 20)
    assert g.scores == (760, 0, 880) and g.barrel == (0, 0, 3)
    assert res.events == ("seat 0 is knocked off the barrel: -120", "seat 2 gets on the barrel")


def test_barrel_mode_many_a_sitters_made_contract_below_120_and_a_newcomer_both_sit() -> None:
    # barrel_mode many (default): "several players may sit on it": F stays with 2 deals
    # left (his made 100 scores nothing), L gets on for 3.
    g = knock_deal(100, (880, 0, 860), (3, 0, 0))
    assert last(g).deltas == (0, 0, 20)
    assert g.scores == (880, 0, 880) and g.barrel == (2, 0, 3) and not g.is_over


def test_two_sitters_whose_last_barrel_deals_end_together_both_pay_120() -> None:
    # RULES barrel: "Three deals on the barrel without a win: −120 and off", for each sitter
    # (barrel_mode many); L's 21 as a sitting defender is not scored.
    g = knock_deal(100, (0, 880, 880), (0, 1, 1))
    res = last(g)
    assert res.deltas == (100, -120, -120) and g.scores == (100, 760, 760)
    assert g.barrel == (0, 0, 0)
    assert res.events == (
        "seat 1 sat 3 deals on the barrel: -120",
        "seat 2 sat 3 deals on the barrel: -120",
    )


def test_a_win_on_the_last_barrel_deal_and_a_loser_below_zero_owes_more_than_the_target() -> None:
    # RULES barrel: he "wins the game (score 1000) by ... making a contract of at least 120"
    # (on his last barrel deal too); the end: "the result also states each loser's shortfall
    # to the target": S at −100 is 1100 short, L (0 + 21) 979.
    g = knock_deal(120, (880, -100, 0), (1, 0, 0))
    res = g.result
    assert g.is_over and res is not None and res.reason == "target"
    assert res.scores == (1000, -100, 21) and res.winner == F
    assert res.places == (1, 3, 2) and res.shortfalls == (0, 1100, 979)


@pytest.mark.parametrize(
    ("mode", "scores", "barrel", "events"),
    [
        ("many", (880, 880, 0), (3, 1, 0), ("seat 0 gets on the barrel",)),
        (
            "one",
            (880, 760, 0),
            (3, 0, 0),
            ("seat 1 is knocked off the barrel: -120", "seat 0 gets on the barrel"),
        ),
    ],
)
def test_a_throw_in_bonus_lifts_a_player_onto_the_barrel(
    mode: str, scores: tuple[int, ...], barrel: tuple[int, ...], events: tuple[str, ...]
) -> None:
    # RULES 1001: after an all-pass the last hand may "throw in: then each other player dealt
    # into the deal scores +50"; with the barrel switched on, F's 840 + 50 "would reach 880
    # or more" and is set to 880; S, sitting, is not paid his 50 (docs Interpretations: "A
    # sitter's throw-in bonus / halves are not scored") and, under barrel_mode one, is
    # knocked off by the newcomer.
    r = ruleset("1001", barrel=True, barrel_mode=mode)
    g = new_game(r, *SOLID, scores=(840, 880, 0), barrel=(0, 2, 0))
    acts(g, (F, "pass"), (S, "pass"), (L, "give 9C to 0"), (L, "give 9D to 1"), (L, "throw-in"))
    res = last(g)
    assert res.outcome == "thrown_in" and g.scores == scores and g.barrel == barrel
    assert res.events == events


def test_4p_the_dealers_talon_lifts_him_onto_the_barrel_and_knocks_the_sitter_off() -> None:
    # RULES 1001, 4 players: "Every deal, whatever happens at the table, he scores the talon";
    # docs Interpretations: it is "treated like a defender's take", so with the barrel it
    # counts toward reaching 880: the dealer D (seat 3) at 870 + A♦ 9♣ 9♦ (11) = 881 → 880,
    # and under barrel_mode one the newcomer knocks the sitter S off (−120). F, committed at
    # 100 (classic rules for four), concedes for free: L is paid 50, S (sitting) nothing.
    r = Ruleset.from_dict({"preset": "classic", "players": 4, "barrel_mode": "one"})
    g = new_game(r, *SOLID, scores=(0, 880, 0, 870), barrel=(0, 3, 0, 0))
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"), (F, "concede"))
    res = last(g)
    assert res.outcome == "conceded" and res.deltas == (0, -120, 50, 10)
    assert g.scores == (0, 760, 50, 880) and g.barrel == (0, 0, 0, 3)


# =========================================================================== bidding
def test_a_bid_step_that_does_not_divide_the_cap_stops_at_the_highest_multiple_below_it() -> None:
    # RULES §2: "Bids are multiples of the step. Nobody may bid above 120 + the marriages in
    # his own hand" (option bid_step 15, opening_bid 105, first hand committed). S (K♣Q♣,
    # cap 180) may bid 120 .. 180; L (K♥Q♥, cap 220) over 120: 135 .. 210, not 225.
    # §5: contracts stay multiples of 5, from the bid up to 120 + the marriages held.
    g = new_game(ruleset(opening_bid=105, bid_step=15), *SOLID)
    assert bids(g) == [120, 135, 150, 165, 180]
    refused(g, S, Bid(125), BidError)  # a multiple of 5, not of the step
    acts(g, (S, "bid 120"))
    assert bids(g) == [135, 150, 165, 180, 195, 210]
    refused(g, L, Bid(220), BidError)  # the cap, but not a multiple of 15
    acts(g, (L, "pass"), (F, "pass"), (S, "give AD to 0"), (S, "give 9C to 2"))
    assert contracts(g) == list(range(120, 185, 5))  # S keeps K♣ Q♣: 120 + 60


# =========================================================================== marriages
def test_a_marriage_completed_by_a_passed_card_is_declared_by_its_receiver() -> None:
    # RULES §4: the declarer gives "one card, face down, to each opponent (... any of his 10
    # cards)"; §8: "A player who leads a K or Q while holding its partner may declare the
    # marriage with that lead", once he "has already won a trick in this deal". S is dealt
    # K♥ alone (so bids at most 120, §2 counts his own hand) and is passed Q♥; he wins the
    # first trick with A♣, then declares ♥: 100, and hearts are trump.
    hands = {F: "AS 10S KS QS JS 9S 9H", S: "KH AC 10C KC JC 9C 9D", L: "AH 10H JH AD 10D KD JD"}
    g = new_game(ruleset(), hands, "QH QC QD")
    assert max(bids(g)) == 120
    acts(g, (S, "pass"), (L, "pass"), (F, "give QH to 1"), (F, "give QD to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "QC AC JD")  # S takes it: Q♣ 3 + A♣ 11 + J♦ 2
    assert g.to_act == S and {"play K♥ declare", "play Q♥ declare"} <= plays(g)
    g.apply(Play(parse_card("KH"), declare=True), seat=S)
    assert g.trump is Suit.HEARTS and g.marriages == ((S, Suit.HEARTS),)
    assert g.marriage_points(S) == 100 and g.card_points(S) == 16


# =========================================================================== no house rule
def test_no_bolt_rule_three_deals_without_a_trick_cost_nothing() -> None:
    # RULES.md has no "bolt" (a deal without a trick) penalty, in the rule book or among the
    # options (nor do the source texts): a defender who takes nothing three deals running
    # scores 0 + 0 + 0. Seat 0 holds SOLID's F hand every deal (the dealer moves on, so he
    # is first hand, last hand, then second hand and wins the bidding each time), seat 1
    # S's and seat 2 L's; seat 0 sweeps every trick (§10: "+contract (never more)").
    hands = [parse_cards(SOLID[0][seat]) for seat in (F, S, L)]
    deal = (hands, parse_cards(SOLID[1]))
    g = Game.new(ruleset(), 1, NAMES3, deals={0: deal, 1: deal, 2: deal}, dealer=2)
    for auction in (
        ((1, "pass"), (2, "pass")),  # dealer 2: seat 0 first hand, committed to 100
        ((2, "pass"), (0, "bid 105"), (1, "pass")),  # dealer 0: seat 1 committed
        ((0, "bid 105"), (1, "pass"), (2, "pass")),  # dealer 1: seat 2 committed
    ):
        acts(g, *auction, *SOLID_GIVES)
        acts(g, (0, f"contract {g.bid}"))
        play_tricks(g, *SOLID_PLAY)
        assert last(g).card_points == (120, 0, 0)
    assert [r.deltas for r in g.deal_results] == [(100, 0, 0), (105, 0, 0), (105, 0, 0)]
    assert g.scores == (310, 0, 0)
