"""Rules audit, round 2: option interplay and edge cases of RULES.md (``/work/shared/RULES.md``)
that the other rule files leave out, written through the public API only.

Every expected value is computed by hand from the quoted RULES.md clause. Seating: 3
players with dealer 2 (first hand F = 0, second hand S = 1, last hand L = 2); 4 players
with dealer 3, who sits the deal out (F = 0, S = 1, L = 2).
"""

from __future__ import annotations

import pytest

from engine import (
    Bid,
    Concede,
    Contract,
    Game,
    MarriageError,
    Play,
    Suit,
    ThrowIn,
    parse_card,
)

# The seating and helpers of the external rule cases (same dealer, same public API).
from tests.engine.test_rule_cases_external import (
    SOLID,
    SPLIT,
    TR,
    TR_PLAY,
    F,
    L,
    S,
    acts,
    new_game,
    play_tricks,
    ruleset,
)
from tests.engine.test_rule_cases_external import (
    SPLIT2_PLAY as SPLIT_PLAY,
)


def declares(g: Game) -> set[str]:
    return {str(a) for a in g.legal_actions() if isinstance(a, Play) and a.declare}


def bids(g: Game) -> list[int]:
    return [a.amount for a in g.legal_actions() if isinstance(a, Bid)]


# SOLID (imported): F holds all spades + A♥ (K♠Q♠: cap 160), S K♣Q♣ (180), L K♥Q♥ (220).
# SPLIT with SPLIT2's play (imported): F (declarer at 100) takes 51 + ♠ 40 = 91, S 0,
# L 69 + ♥ 100 = 169.
SPLIT_DEAL = (
    (S, "pass"),
    (L, "pass"),
    (F, "give 9C to 1"),
    (F, "give 9H to 2"),
    (F, "contract 100"),
)


# =========================================================================== concession
@pytest.mark.parametrize(("rounding", "half"), [(1, 53), (5, 55), (10, 50)])
def test_penalty_concession_halves_follow_the_rounding_unit(rounding: int, half: int) -> None:
    """RULES §6: concede = penalty: "he scores −bid"; "Each opponent then scores half the
    bid, rounded half up to the ruleset's rounding unit". Bid 105: half 52.5 -> 53 (unit 1),
    55 (unit 5: 2.5 and above up), 50 (unit 10: 2.5 below 5). The −105 is not rounded."""
    g = new_game(ruleset(concede="penalty", rounding=rounding), *SOLID)
    acts(g, (S, "bid 105"), (L, "pass"), (F, "pass"))
    assert g.declarer == S and g.bid == 105
    acts(g, (S, "give 9C to 0"), (S, "give 9D to 2"), (S, "concede"))
    res = g.deal_results[-1]
    assert res.outcome == "conceded" and res.contract is None
    assert res.deltas == (half, -105, half) and g.scores == (half, -105, half)


# =========================================================================== rounding x barrel
@pytest.mark.parametrize(("rounding", "score", "barrel"), [(1, 879, 0), (5, 880, 3)])
def test_rounding_decides_whether_a_defender_reaches_the_barrel(
    rounding: int, score: int, barrel: int
) -> None:
    """RULES §10: an opponent scores "his take (rounded to option rounding)"; barrel: "A
    player whose score would reach 880 or more ... is set to exactly 880 and is on the
    barrel for the next 3 deals". L at 710 takes 169: 879 unrounded, 170 -> 880 with unit 5."""
    g = new_game(ruleset(rounding=rounding), *SPLIT, scores=(0, 0, 710))
    acts(g, *SPLIT_DEAL)
    play_tricks(g, *SPLIT_PLAY)
    res = g.deal_results[-1]
    assert res.takes == (91, 0, 169) and res.outcome == "failed"
    assert g.scores == (-100, 0, score) and g.barrel == (0, 0, barrel)


# ==================================================================== barrel_mode x concession
@pytest.mark.parametrize(
    ("mode", "scores", "barrel"),
    [("many", (880, 50, 880), (2, 0, 3)), ("one", (760, 50, 880), (0, 0, 3))],
)
def test_halves_of_a_sitters_free_concession_seat_a_newcomer(
    mode: str, scores: tuple[int, ...], barrel: tuple[int, ...]
) -> None:
    """RULES barrel: "a free concession leaves him sitting"; §6 each opponent scores half the
    bid (100 -> 50); L at 830 reaches 880 and sits. barrel_mode many: both sit (F's deal
    counts, 3 -> 2); one: "a newcomer knocks the sitter off, −120" (880 -> 760)."""
    g = new_game(ruleset(barrel_mode=mode), *SOLID, scores=(880, 0, 830), barrel=(3, 0, 0))
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"), (F, "concede"))
    res = g.deal_results[-1]
    assert res.outcome == "conceded"
    assert g.scores == scores and g.barrel == barrel
    assert "seat 2 gets on the barrel" in res.events
    if mode == "one":
        assert "seat 0 is knocked off the barrel: -120" in res.events


# TR: F (declarer at 100) takes 23 card points + ♥ 100 = 123, S 60, L 37 + ♣ 60 = 97.
TR_DEAL = ((S, "pass"), (L, "pass"), (F, "give JD to 1"), (F, "give QD to 2"), (F, "contract 100"))


@pytest.mark.parametrize(
    ("rounding", "scores", "barrel"),
    [(1, (760, 60, 760), (0, 0, 0)), (5, (880, 60, 879), (3, 0, 0))],
)
def test_barrel_mode_one_rounding_decides_between_a_lone_newcomer_and_two_falling(
    rounding: int, scores: tuple[int, ...], barrel: tuple[int, ...]
) -> None:
    """RULES barrel_mode one: "two or more reaching it in the same deal all fall off at once,
    −120 each from 880". F at 780 makes 100 (880). L at 784 takes 97: 881 unrounded (both
    reach 880 and fall to 760); with rounding 5 the take is 95, L stays at 879 and F sits."""
    g = new_game(ruleset(barrel_mode="one", rounding=rounding), *TR, scores=(780, 0, 784))
    acts(g, *TR_DEAL)
    play_tricks(g, *TR_PLAY)
    res = g.deal_results[-1]
    assert res.outcome == "made" and res.takes == (123, 60, 97)
    assert g.scores == scores and g.barrel == barrel


# =========================================================================== marriages
# F declares ♠ on trick 2 and ♥ on trick 7, the last trick whose leader still holds two cards.
LATE = (
    {F: "AS 10S KS QS JS KH QH", S: "AC 10C KC QC JC 10D KD", L: "AD QD JD AH 10H JH 9H"},
    "9S 9C 9D",
)
LATE_PLAY = (
    "AS 9C AH",
    "KS* JC 10H",
    "QS QC 9D",
    "JS KC JD",
    "10S 10D QD",
    "9S KD AD",
    "KH* 10C JH",
)


def test_a_marriage_declared_on_the_seventh_trick_counts_and_none_is_left_for_the_eighth() -> None:
    """RULES §8: "A player who leads a K or Q while holding its partner may declare the
    marriage with that lead ... its suit is trump from that trick on"; "a marriage needs
    both cards in hand at the lead". §5 cap: 120 + ♠ 40 + ♥ 100 = 260; §10 take = 120 card
    points + 140 = 260 >= 260: +260."""
    g = new_game(ruleset(), *LATE)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"))
    assert max(a.amount for a in g.legal_actions() if isinstance(a, Contract)) == 260
    acts(g, (F, "contract 260"))
    play_tricks(g, *LATE_PLAY[:6])
    assert g.trump is Suit.SPADES and declares(g) == {"play K♥ declare", "play Q♥ declare"}
    play_tricks(g, LATE_PLAY[6])
    assert g.trump is Suit.HEARTS and g.marriage_points(F) == 140
    assert declares(g) == set()  # Q♥ alone: its partner has been led
    with pytest.raises(MarriageError):
        g.apply(Play(parse_card("QH"), declare=True), seat=F)
    play_tricks(g, "QH AC 9H")
    res = g.deal_results[-1]
    assert res.card_points == (120, 0, 0) and res.marriage_points == (140, 0, 0)
    assert res.outcome == "made" and res.deltas == (260, 0, 0)


ACES = (
    {F: "AS AC AD AH KS QS 10S", S: "10C KC QC JC 10D KD QD", L: "JD 9D 10H KH QH JH 9H"},
    "9S JS 9C",
)


def test_ace_marriage_waits_for_a_non_ace_trick_even_without_marriage_needs_trick() -> None:
    """RULES §8 marriage_needs_trick off: a marriage may be declared on the first lead; §9 the
    ace marriage only "once he has won a trick with a card other than an ace" (docs: "always,
    independent of marriage_needs_trick"): "It scores 200 and changes no trump"."""
    g = new_game(ruleset(marriage_needs_trick=False), *ACES)
    assert bids(g)[-1] == 260  # §2 cap of S, who speaks first: 120 + ♣ 60 + ♦ 80
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9S to 1"), (F, "give 9C to 2"))
    # §5 cap: 120 + the ace marriage 200 + ♠ 40
    assert max(a.amount for a in g.legal_actions() if isinstance(a, Contract)) == 360
    acts(g, (F, "contract 100"))
    assert declares(g) == {"play K♠ declare", "play Q♠ declare"}
    with pytest.raises(MarriageError):
        g.apply(Play(parse_card("AH"), declare=True), seat=F)
    play_tricks(g, "10S 9S 9C")  # won with the 10♠
    aces = {f"play A{s} declare" for s in "♠♣♦♥"}
    assert declares(g) == {"play K♠ declare", "play Q♠ declare"} | aces
    play_tricks(g, "AH* 10D 9H")
    assert g.trump is None and g.marriage_points(F) == 200 and g.marriages == ((F, None),)


def test_several_marriages_and_the_four_aces_add_up_for_the_bidding_cap() -> None:
    """RULES §2: "Nobody may bid above 120 + the marriages in his own hand (an ace marriage
    counts as 200; option ace_marriage_counts_for_bid)": S holds the four aces and K♥Q♥:
    120 + 200 + 100 = 420; without the ace credit 120 + 100 = 220."""
    hands = {F: "9S JS QS KS 10S 9C JC", S: "AS AC AD AH KH QH 9D", L: "QC KC 10C KD QD JD 10D"}
    talon = "JH 9H 10H"
    assert bids(new_game(ruleset(), hands, talon))[-1] == 420
    assert bids(new_game(ruleset(ace_marriage_counts_for_bid=False), hands, talon))[-1] == 220


# =========================================================================== all-pass variants
def test_1001_with_a_committed_first_hand_has_no_last_hand_take() -> None:
    """RULES §2 (first_hand_commits): "if both others pass at once, first hand plays" the
    opening bid: he won the bidding, so under 1001's concede = penalty he may concede
    ("he scores −bid and the others score nothing") and there is no throw-in."""
    g = new_game(ruleset("1001", first_hand_commits=True), *SOLID)
    assert g.to_act == S and g.bid == 40
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"))
    assert g.declarer == F and g.bid == 40
    assert Concede() in g.legal_actions() and ThrowIn() not in g.legal_actions()
    acts(g, (F, "concede"))
    assert g.scores == (-40, 0, 0)


def test_4p_1001_last_hand_after_all_pass_is_right_of_the_dealer() -> None:
    """RULES 1001: "If every player before the last hand passes, the last hand takes the
    talon at the opening bid ... or throw in: then each other player dealt into the deal
    scores +50 and he scores 0"; 4 players: the dealer scores the talon (J♠ 9♣ Q♦: 5)."""
    hands = {
        F: "AS 10S KS QS 9S AH 10H",
        S: "AC 10C KC QC 10D KD AD",
        L: "JC 9D JD 9H JH QH KH",
    }
    g = new_game(ruleset("1001-4p"), hands, "JS 9C QD")
    acts(g, (F, "pass"), (S, "pass"))
    assert g.declarer == L and g.bid == 40 and g.last_hand_take
    acts(g, (L, "give JS to 0"), (L, "give 9C to 1"))
    assert Concede() not in g.legal_actions() and ThrowIn() in g.legal_actions()
    acts(g, (L, "throw-in"))
    res = g.deal_results[-1]
    assert res.outcome == "thrown_in" and res.deltas == (50, 50, 0, 5)


# =========================================================================== the end
def test_the_target_reached_on_the_capped_deal_ends_by_target() -> None:
    """RULES: "The game ends when a player reaches 1000 (option target)"; max_deals caps the
    match "at the cap, the standings decide": a deal that does both ends by the target."""
    g = new_game(ruleset(barrel=False, max_deals=1), *SOLID, scores=(900, 950, 0))
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"), (F, "concede"))
    res = g.result
    assert res is not None and res.reason == "target"
    assert res.scores == (900, 1000, 50) and res.winner == S
    assert res.places == (2, 1, 3) and res.shortfalls == (100, 0, 950)
