"""Rules audit, round 5: combinations of options and rare paths that the earlier rounds
did not play, each written as a hidden rule case would be (the public API, a crafted deal,
the expected numbers worked out by hand from the quoted clause of RULES.md).

Seating as in the external cases: 3 players, dealer 2, so first hand F = 0, second hand
S = 1, last hand L = 2; 4 players, dealer D = 3 (who sits out), F = 0, S = 1, L = 2.
"""

from __future__ import annotations

import pytest

from engine import (
    Card,
    Concede,
    ConcedeError,
    Game,
    NotYourTurnError,
    Phase,
    Play,
    Suit,
    ThrowIn,
    WrongPhaseError,
    parse_card,
)
from tests.engine.test_rule_cases_external import (
    SOLID,
    SOLID_GIVES,
    SOLID_PLAY,
    SPLIT,
    SPLIT_GIVES,
    SPLIT_PLAY,
    F,
    L,
    S,
    acts,
    cards,
    last,
    new_game,
    play_tricks,
    plays,
    refused,
    ruleset,
)

D = 3  # the 4-player dealer


def solid_made(g: Game, contract: int) -> None:
    """SOLID: S and L pass, F (first hand, 100) gives, names ``contract`` and takes 160."""
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, f"contract {contract}"))
    play_tricks(g, *SOLID_PLAY)
    assert last(g).takes == (160, 0, 0)


def solid_conceded(g: Game) -> None:
    """SOLID: S and L pass, F (first hand, committed at 100) gives and concedes."""
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "concede"))
    assert last(g).outcome == "conceded" and last(g).bid == 100


# =========================================================================== the barrel
def test_three_sitters_one_wins_one_ends_his_barrel_one_keeps_his_seat() -> None:
    """barrel_mode many: "several players may sit on it". F wins ("making a contract of at
    least 120": 1000); S's third barrel deal ends without a win (−120: 760); L, a sitting
    defender, is not scored and keeps his seat with a deal fewer. The match ends at the
    target; S is 240 short, L 120."""
    g = new_game(ruleset(), *SOLID, scores=(880, 880, 880), barrel=(2, 1, 3))
    solid_made(g, 120)
    res = last(g)
    assert res.outcome == "made" and res.deltas == (120, -120, 0)
    assert g.scores == (1000, 760, 880) and g.barrel == (0, 0, 2)
    assert res.events == ("seat 0 wins from the barrel", "seat 1 sat 3 deals on the barrel: -120")
    assert g.result is not None and g.result.reason == "target"
    assert g.result.winner == F and g.result.places == (1, 3, 2)
    assert g.result.shortfalls == (0, 240, 120)


def test_a_sitters_free_concession_on_his_last_barrel_deal_costs_the_120() -> None:
    """ "a free concession leaves him sitting": the deal counts, and it was F's last, so
    "Three deals on the barrel without a win: −120 and off". S, sitting, is paid no half;
    L (off the barrel) scores his 50."""
    g = new_game(ruleset(), *SOLID, scores=(880, 880, 300), barrel=(1, 2, 0))
    solid_conceded(g)
    res = last(g)
    assert res.deltas == (-120, 0, 50)
    assert g.scores == (760, 880, 350) and g.barrel == (0, 1, 0)
    assert res.events == ("seat 0 sat 3 deals on the barrel: -120",)


def test_barrel_one_a_penalty_concession_and_two_newcomers_from_its_halves() -> None:
    """barrel_mode one, concede penalty, concede_pays half: F, sitting, concedes at 100
    (−100, off: 780); each opponent scores 50, S 840 → 890 and L 830 → 880 "reaching it in
    the same deal all fall off at once, −120 each from 880" (760). F, already off by his
    own concession, is not charged again (one fall, one charge)."""
    r = ruleset(barrel_mode="one", concede="penalty")
    g = new_game(r, *SOLID, scores=(880, 840, 830), barrel=(2, 0, 0))
    solid_conceded(g)
    res = last(g)
    assert g.scores == (780, 760, 760) and g.barrel == (0, 0, 0)
    assert res.deltas == (-100, -80, -70)
    assert res.events == (
        "seat 0 concedes and falls off the barrel",
        "seat 1 reaches the barrel with another and falls off: -120",
        "seat 2 reaches the barrel with another and falls off: -120",
    )


def test_barrel_one_two_newcomers_while_a_sitter_keeps_his_seat_by_a_free_concession() -> None:
    """barrel_mode one, free concession: F stays on the barrel by conceding, but S and L
    reach 880 with their halves: "two or more reaching it in the same deal all fall off at
    once, −120 each from 880, and so does any sitter already there": all three at 760."""
    r = ruleset(barrel_mode="one")
    g = new_game(r, *SOLID, scores=(880, 840, 830), barrel=(3, 0, 0))
    solid_conceded(g)
    assert g.scores == (760, 760, 760) and g.barrel == (0, 0, 0)
    assert last(g).deltas == (-120, -80, -70)


def test_custom_target_and_barrel_a_sitter_wins_with_the_target_and_another_pays() -> None:
    """Options target 600, barrel_at 500, barrel_deals 2, barrel_penalty 50: F sits at 500
    and makes 120 ("score 1000" is the target: 600); S, on his last barrel deal, pays the
    50; L (0 + 0) is 600 short."""
    r = ruleset(target=600, barrel_at=500, barrel_deals=2, barrel_penalty=50)
    g = new_game(r, *SOLID, scores=(500, 500, 0), barrel=(2, 1, 0))
    solid_made(g, 120)
    assert g.scores == (600, 450, 0) and g.barrel == (0, 0, 0)
    assert g.result is not None and g.result.shortfalls == (0, 150, 600)
    assert last(g).events == (
        "seat 0 wins from the barrel",
        "seat 1 sat 2 deals on the barrel: -50",
    )


def test_a_defender_jumping_past_the_target_with_the_barrel_stops_at_880() -> None:
    """ "A player whose score would reach 880 or more ... is set to exactly 880": even a
    defender whose take would carry him past 1000 (SPLIT: L takes 171 from 870) sits on the
    barrel; the match goes on. F fails his 100 (89 taken)."""
    g = new_game(ruleset(), *SPLIT, scores=(0, 0, 870))
    acts(g, (S, "pass"), (L, "pass"), *SPLIT_GIVES, (F, "contract 100"))
    play_tricks(g, *SPLIT_PLAY)
    res = last(g)
    assert res.outcome == "failed" and res.takes == (89, 0, 171)
    assert g.scores == (-100, 0, 880) and g.barrel == (0, 0, 3)
    assert not g.is_over and g.deal_number == 1


# =========================================================================== the end
@pytest.mark.parametrize(
    ("start", "places", "winner", "shortfalls"),
    [
        ((960, 970, 500), (2, 1, 3), S, (0, 0, 501)),
        ((960, 960, 500), (1, 1, 3), None, (0, 0, 501)),
    ],
)
def test_1001_a_throw_in_carries_both_others_over_the_target(
    start: tuple[int, ...],
    places: tuple[int, ...],
    winner: int | None,
    shortfalls: tuple[int, ...],
) -> None:
    """1001: after an all-pass the last hand throws in, "each other player dealt into the
    deal scores +50": both cross 1001 in one deal; "the highest wins; equal scores share a
    place". A loser over the target owes nothing (his shortfall is 0)."""
    g = new_game(ruleset("1001"), *SOLID, scores=start)
    acts(g, (F, "pass"), (S, "pass"), (L, "give 9C to 0"), (L, "give 9D to 1"), (L, "throw-in"))
    res = g.result
    assert res is not None and res.reason == "target"
    assert res.scores == (start[0] + 50, start[1] + 50, start[2])
    assert res.places == places and res.winner == winner and res.shortfalls == shortfalls


def test_a_three_way_tie_at_the_deal_cap_shares_the_first_place() -> None:
    """max_deals: "at the cap, the standings decide the places"; "equal scores share a
    place": F at 50 concedes free (0), S and L score their halves (50): 50, 50, 50."""
    g = new_game(ruleset(max_deals=1), *SOLID, scores=(50, 0, 0))
    solid_conceded(g)
    res = g.result
    assert res is not None and res.reason == "max_deals" and res.deals == 1
    assert res.scores == (50, 50, 50) and res.places == (1, 1, 1) and res.winner is None
    assert res.shortfalls == (950, 950, 950)


def test_1001_a_penalty_concession_from_a_negative_score_goes_further_below_zero() -> None:
    """ "Scores may go negative": 1001's declarer concedes at his bid, "he scores −bid"
    (−30 − 60 = −90), the others nothing; at the cap the standings decide: S 0 and L 0
    share first, F third, 1091 short."""
    g = new_game(ruleset("1001", max_deals=1), *SOLID, scores=(-30, 0, 0))
    acts(g, (F, "bid 60"), (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "concede"))
    res = g.result
    assert res is not None and res.scores == (-90, 0, 0)
    assert res.places == (3, 1, 1) and res.winner is None
    assert res.shortfalls == (1091, 1001, 1001)


# =========================================================================== 4 players
SOLID4 = ({F: SOLID[0][F], S: SOLID[0][S], L: SOLID[0][L]}, SOLID[1])  # talon A♦ 9♣ 9♦: 11


def test_1001_4p_a_free_concession_paying_halves_rounds_them_and_the_dealer_keeps_his_talon() -> (
    None
):
    """1001-4p with concede = free and concede_pays = half: F concedes at 65 (0); "each
    opponent then scores half the bid, rounded half up to the ruleset's rounding unit"
    (32.5 → 35); the dealer, "whatever happens at the table", scores the talon's card
    points, not rounded (A♦ 9♣ 9♦: 11)."""
    r = ruleset("1001-4p", concede="free", concede_pays="half")
    g = new_game(r, *SOLID4)
    acts(g, (F, "bid 65"), (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "concede"))
    res = last(g)
    assert res.outcome == "conceded" and res.bid == 65 and res.contract is None
    assert res.deltas == (0, 35, 35, 11) and g.scores == (0, 35, 35, 11)


def test_classic_4p_last_hand_throw_in_with_two_sitters() -> None:
    """Classic for 4 players with first_hand_commits off and all_pass = last_hand: F and S
    pass, L takes the talon at 100 and throws in. F, sitting, is not paid his 50 (his deal
    counts: 3 → 2); S scores 50; the dealer D, sitting out his last barrel deal, scores no
    talon and pays the 120 ("Three deals on the barrel without a win")."""
    r = ruleset(players=4, first_hand_commits=False, all_pass="last_hand")
    g = new_game(r, *SOLID4, scores=(880, 300, 0, 880), barrel=(3, 0, 0, 1))
    assert g.to_act == F
    acts(g, (F, "pass"), (S, "pass"))
    assert g.declarer == L and g.bid == 100 and g.last_hand_take
    acts(g, (L, "give 9C to 0"), (L, "give 9D to 1"), (L, "throw-in"))
    res = last(g)
    assert res.outcome == "thrown_in"
    assert res.deltas == (0, 50, 0, -120)
    assert g.scores == (880, 350, 0, 760) and g.barrel == (2, 0, 0, 0)
    assert res.events == ("seat 3 sat 3 deals on the barrel: -120",)


# =========================================================================== concede, throw-in
def test_concede_and_throw_in_are_refused_once_the_contract_is_named() -> None:
    """ "Instead of naming a contract, the declarer may concede"; the last hand "may play,
    raise the contract, or throw in": once a contract is named (play has begun) neither is
    left. The throw-in is offered from the moment the last hand holds the talon ("having
    looked at the cards", the 1001 text), before the two cards are passed and after."""
    g = new_game(ruleset(), *SOLID)
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "contract 100"))
    assert g.phase is Phase.PLAYING
    refused(g, F, Concede(), WrongPhaseError)
    refused(g, F, ThrowIn(), WrongPhaseError)
    g = new_game(ruleset("1001-4p"), *SOLID4)
    acts(g, (F, "pass"), (S, "pass"))
    assert g.declarer == L and g.phase is Phase.PASSING
    assert ThrowIn() in g.legal_actions() and Concede() not in g.legal_actions()
    refused(g, L, Concede(), WrongPhaseError)
    acts(g, (L, "give 9C to 0"), (L, "give 9D to 1"))
    assert ThrowIn() in g.legal_actions() and Concede() not in g.legal_actions()
    refused(g, D, ThrowIn(), NotYourTurnError)  # the dealer sits out: nothing of his
    refused(g, L, Concede(), ConcedeError)
    acts(g, (L, "contract 40"))
    refused(g, L, ThrowIn(), WrongPhaseError)


def test_a_rounding_unit_of_3_rounds_the_concession_halves_half_up() -> None:
    """concede_pays half with rounding 3: S conceding at 105 pays each opponent 52.5 rounded
    half up to a multiple of 3: 51 and 54 are equally near, so 54."""
    g = new_game(ruleset(rounding=3), *SOLID)
    acts(g, (S, "bid 105"), (L, "pass"), (F, "pass"))
    assert g.declarer == S and g.bid == 105
    acts(g, (S, "give JC to 0"), (S, "give 10D to 2"), (S, "concede"))
    assert last(g).deltas == (54, 0, 54)


def test_with_rounding_3_a_defenders_take_rounds_to_the_nearest_multiple() -> None:
    """rounding 3: SPLIT's L takes 171 (a multiple of 3: 171), S 0; F fails his 100 (not
    rounded). With rounding 10, 171 → 170."""
    for unit, l_score in ((3, 171), (10, 170), (4, 172)):
        g = new_game(ruleset(rounding=unit), *SPLIT)
        acts(g, (S, "pass"), (L, "pass"), *SPLIT_GIVES, (F, "contract 100"))
        play_tricks(g, *SPLIT_PLAY)
        assert g.scores == (-100, 0, l_score), unit


# =========================================================================== marriages, play
# MB: F holds the ♥ marriage and the spades but the 9; S holds A♥ 9♥, L 10♥ J♥.
MB = (
    {F: "KH QH AS 10S KS QS JS", S: "AH 9H AC 10C KC QC JC", L: "10H JH AD 10D KD QD JD"},
    "9S 9C 9D",
)


@pytest.mark.parametrize("lead", ["KH", "QH"])
def test_must_beat_a_marriage_declared_on_the_first_lead(lead: str) -> None:
    """marriage_needs_trick off and must_beat on: F declares ♥ leading the first trick
    ("its suit is trump from that trick on"); S must follow ♥ and "choose one that beats
    the trick if he can": only A♥ (9♥ cannot). After A♥ nothing of L's beats the trick, so
    either heart will do (the duty is to beat the card taking it so far)."""
    r = ruleset(must_beat=True, marriage_needs_trick=False)
    g = new_game(r, *MB)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"), (F, "contract 100"))
    assert Play(parse_card(lead), declare=True) in g.legal_actions()
    play_tricks(g, f"{lead}*")
    assert g.trump is Suit.HEARTS and g.marriage_points(F) == 100
    assert plays(g) == cards("AH")
    play_tricks(g, "AH")
    assert plays(g) == cards("10H JH")
    play_tricks(g, "JH")
    assert g.tricks[0].winner == S


def test_without_must_beat_a_first_lead_marriage_leaves_the_followers_free_in_the_suit() -> None:
    """The same lead without must_beat ("There is no duty to beat"): S may play either
    heart, L either heart; S's 9♥ and L's J♥ leave the trick to F's K♥ (card points 6)."""
    g = new_game(ruleset(marriage_needs_trick=False), *MB)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"), (F, "contract 100"))
    play_tricks(g, "KH*")
    assert plays(g) == cards("AH 9H")
    play_tricks(g, "9H")
    assert plays(g) == cards("10H JH")
    play_tricks(g, "JH")
    assert g.tricks[0].winner == F and g.card_points(F) == 6
    assert g.to_act == F and Play(Card.HQ) in g.legal_actions()


# TC: F declares ♠ on the second trick, S wins it with A♠ and declares ♥ on the third; L
# holds only spades and clubs. F gives J♦ to S and 10♣ to L (keeping 9♦).
TC = (
    {F: "KS QS AC 10C AH 10H 9H", S: "AS KH QH AD 10D KD QD", L: "10S JS 9S KC QC JC 9C"},
    "JH JD 9D",
)


def test_a_new_marriage_ends_the_old_trump_for_following_and_for_winning() -> None:
    """ "its suit is trump from that trick on, until another marriage is declared": after
    S's ♥ marriage, L (no ♥, no ♦) may play any card to a ♥ or ♦ lead, spades included,
    and his spade (the old trump) wins nothing; F, holding hearts, must follow them."""
    g = new_game(ruleset(), *TC)
    acts(g, (S, "pass"), (L, "pass"), (F, "give JD to 1"), (F, "give 10C to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "AC QD 9C", "KS* AS 9S")
    assert g.trump is Suit.SPADES and [t.winner for t in g.tricks] == [F, S]
    play_tricks(g, "KH*")  # S leads; L then F follow
    assert (g.trump, g.marriages) == (Suit.HEARTS, ((F, Suit.SPADES), (S, Suit.HEARTS)))
    assert plays(g) == cards("10S JS KC QC JC 10C")  # L: neither ♥ nor a trump to play
    play_tricks(g, "JS")
    assert plays(g) == cards("AH 10H 9H JH")  # F follows ♥
    play_tricks(g, "9H")
    assert g.tricks[-1].winner == S  # K♥, the trump now, over the old trump J♠
    play_tricks(g, "AD")
    assert plays(g) == cards("10S KC QC JC 10C")
    play_tricks(g, "10S 9D")
    assert g.tricks[-1].winner == S  # A♦: the 10♠ is no trump any more
    play_tricks(g, "KD KC")
    assert plays(g) == cards("AH 10H JH")  # F, void in ♦, must trump with the new trump
    play_tricks(g, "JH")
    assert g.tricks[-1].winner == F
    assert (g.marriage_points(F), g.marriage_points(S)) == (40, 100)


def test_no_re_deal_for_a_weak_hand_or_a_talon_of_nines_in_classic() -> None:
    """RULES.md names no re-deal: a hand of 9s and jacks and a talon of three nines are
    played like any other deal (the three nines score only the 4-player dealer). Seat 1
    holds 13 card points; the talon 9♠ 9♣ 9♦ goes to S for his 105; nothing else happens."""
    hands = {
        F: "AS 10S KS QS AC 10C KC",
        S: "JS 9H JH QC JC JD QH",
        L: "AH 10H KH AD 10D KD QD",
    }
    g = new_game(ruleset(), hands, "9S 9C 9D")
    assert g.phase is Phase.BIDDING and g.deal_number == 0 and g.to_act == S
    acts(g, (S, "bid 105"), (L, "pass"), (F, "pass"))
    assert g.declarer == S and len(g.hand(S)) == 10
    acts(g, (S, "give 9S to 0"), (S, "give 9C to 2"), (S, "concede"))
    assert last(g).deltas == (53, 0, 53) and g.deal_number == 1
