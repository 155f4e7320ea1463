"""Round 40: option interactions and the boundary values of each number (RULES.md).

Every case is a crafted deal set up with the public API (``Game.new`` with ``deals``,
``scores``, ``barrel`` and ``dealer``); the expected numbers are worked out by hand from
RULES.md (and docs/rules-engine.md's Interpretations where RULES.md leaves a point open),
in the comment or docstring of each case.

Seating: 3 players with dealer 2, so first hand F = 0, second hand S = 1, last hand L = 2.
4 players with dealer 3 (who sits out): F = 0, S = 1, L = 2.

The base deal (``BASE``):

- F: A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥ — the ♠ marriage (cap 160);
- S: K♥ Q♥ J♥ 9♥ A♣ 10♣ K♣ — the ♥ marriage (cap 220);
- L: Q♣ J♣ A♦ 10♦ K♦ Q♦ J♦ — the ♦ marriage (cap 200);
- talon: 10♥ 9♣ 9♦ (10 card points).

F as declarer gives 9♣ to S and 9♦ to L and keeps the six spades with A♥ 10♥: nobody
else holds a spade, so leading A♠ ... 9♠, A♥, 10♥ he takes all eight tricks whatever the
others play (no trump unless he declares ♠, which they cannot follow either): 120 card
points, +40 with the ♠ marriage declared on his second lead (K♠, after the A♠ trick).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    BidError,
    ConcedeError,
    ContractError,
    Game,
    MarriageError,
    Ruleset,
    RulesetError,
    Suit,
    load_ruleset,
    observe,
    parse_action,
    parse_cards,
)

ROOT = Path(__file__).resolve().parents[2]
F, S, L, D4 = 0, 1, 2, 3
NAMES3 = ["ann", "bob", "cid"]
NAMES4 = ["ann", "bob", "cid", "dan"]

BASE_HANDS = (
    "A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥",
    "K♥ Q♥ J♥ 9♥ A♣ 10♣ K♣",
    "Q♣ J♣ A♦ 10♦ K♦ Q♦ J♦",
)
BASE_TALON = "10♥ 9♣ 9♦"
SWEEP = ["A♠", "10♠", "K♠", "Q♠", "J♠", "9♠", "A♥", "10♥"]
SWEEP_MARRIAGE = ["A♠", "K♠ declare", "10♠", "Q♠", "J♠", "9♠", "A♥", "10♥"]


def rules(preset: str = "classic", /, **options: object) -> Ruleset:
    return dataclasses.replace(load_ruleset(preset), **options)


def new_game(
    r: Ruleset,
    scores: Sequence[int] | None = None,
    barrel: Sequence[int] | None = None,
    hands: Sequence[str] = BASE_HANDS,
    talon: str = BASE_TALON,
) -> Game:
    four = r.players == 4
    dealt = [parse_cards(h) for h in hands] + ([[]] if four else [])
    return Game.new(
        r,
        1,
        NAMES4 if four else NAMES3,
        deals={0: (dealt, parse_cards(talon))},
        scores=scores,
        barrel=barrel,
        dealer=D4 if four else L,
    )


def act(game: Game, *script: tuple[int, str]) -> None:
    for seat, text in script:
        game.apply(parse_action(text), seat=seat)


def sweep(game: Game, leads: Sequence[str] = SWEEP) -> None:
    """The declarer leads each card of ``leads`` (and wins the trick: see the module
    docstring); the others play their first legal card."""
    declarer = game.declarer
    deal = game.deal_number
    for lead in leads:
        assert game.to_act == declarer
        game.apply(parse_action(f"play {lead}"), seat=declarer)
        for _ in range(2):
            game.apply(game.legal_actions()[0], seat=game.to_act)
        if game.deal_number == deal and not game.is_over:
            assert game.tricks[-1].winner == declarer
    assert game.deal_number == deal + 1 or game.is_over


def f_declares(game: Game, contract: str | None) -> None:
    """S and L pass (F plays the opening bid), F gives 9♣ to S and 9♦ to L, then names
    ``contract`` (``None``: nothing more)."""
    act(game, (S, "pass"), (L, "pass"), (F, "give 9♣ to 1"), (F, "give 9♦ to 2"))
    if contract is not None:
        act(game, (F, contract))


def s_declares_105(game: Game) -> None:
    """S bids 105, L and F pass: S declares at 105; he gives J♥ to F and 9♥ to L."""
    act(game, (S, "bid 105"), (L, "pass"), (F, "pass"), (S, "give J♥ to 0"), (S, "give 9♥ to 2"))


# ----------------------------------------------------------------- the barrel's entry score
@pytest.mark.parametrize(
    ("start", "score", "barrel", "events"),
    [
        (779, 879, 0, ()),  # 779 + 100 = 879: below 880
        (780, 880, 3, ("seat 0 gets on the barrel",)),  # exactly 880
        (781, 880, 3, ("seat 0 gets on the barrel",)),  # 881 is set to exactly 880
    ],
)
def test_barrel_entry_at_879_880_881_by_a_made_contract(
    start: int, score: int, barrel: int, events: tuple[str, ...]
) -> None:
    game = new_game(rules(), scores=(start, 0, 0))
    f_declares(game, "contract 100")
    sweep(game)
    res = game.deal_results[-1]
    assert res.outcome == "made"
    assert game.scores == (score, 0, 0)
    assert game.barrel == (barrel, 0, 0)
    assert res.events == events


@pytest.mark.parametrize("barrel_at", [879, 880, 881])
def test_barrel_at_option_boundary(barrel_at: int) -> None:
    """``barrel_at`` moves the threshold: 780 + 100 = 880 seats F when barrel_at ≤ 880."""
    game = new_game(rules(barrel_at=barrel_at), scores=(780, 0, 0))
    f_declares(game, "contract 100")
    sweep(game)
    on = barrel_at <= 880
    assert game.scores[F] == (barrel_at if on else 880)
    assert game.barrel == ((3 if on else 0), 0, 0)


# ----------------------------------------------------------------- winning from the barrel
@pytest.mark.parametrize(
    ("contract", "leads", "score", "barrel", "over"),
    [
        (115, SWEEP, 880, 2, False),  # made below 120: scores nothing, one barrel deal used
        (120, SWEEP, 1000, 0, True),  # exactly 120: wins, score 1000
        (125, SWEEP_MARRIAGE, 1000, 0, True),  # 125 made (take 160): wins at 1000, not more
        (160, SWEEP_MARRIAGE, 1000, 0, True),  # the contract cap (120 + ♠ 40) made
    ],
)
def test_win_from_the_barrel_needs_a_contract_of_at_least_120(
    contract: int, leads: list[str], score: int, barrel: int, over: bool
) -> None:
    game = new_game(rules(), scores=(880, 500, 0), barrel=(3, 0, 0))
    f_declares(game, f"contract {contract}")
    sweep(game, leads)
    assert game.scores == (score, 500, 0)
    assert game.barrel == (barrel, 0, 0)
    assert game.is_over is over
    if over:
        assert game.result.winner == F
        assert game.result.places == (1, 2, 3)
        assert game.result.shortfalls == (0, 500, 1000)
        assert game.result.reason == "target"


@pytest.mark.parametrize("left", [1, 2, 3])
def test_failed_contract_on_the_barrel_costs_the_contract_only_on_any_deal(left: int) -> None:
    """Contract 125, take 120: −125 and off, also on his last barrel deal (no −120 on top)."""
    game = new_game(rules(), scores=(880, 0, 0), barrel=(left, 0, 0))
    f_declares(game, "contract 125")
    sweep(game)
    assert game.deal_results[-1].outcome == "failed"
    assert game.scores == (755, 0, 0)
    assert game.barrel == (0, 0, 0)
    assert game.deal_results[-1].events == ("seat 0 fails the contract and falls off the barrel",)


# ----------------------------------------------------------------- concession × barrel
@pytest.mark.parametrize(
    ("left", "score", "barrel"),
    [(2, 880, 1), (1, 760, 0)],  # a free concession keeps him sitting; the 3rd deal: −120
)
def test_free_concession_on_the_barrel_and_on_its_last_deal(
    left: int, score: int, barrel: int
) -> None:
    game = new_game(rules(), scores=(880, 10, 20), barrel=(left, 0, 0))
    f_declares(game, "concede")
    assert game.deal_results[-1].outcome == "conceded"
    # Each opponent: half the bid 100 = 50.
    assert game.scores == (score, 60, 70)
    assert game.barrel == (barrel, 0, 0)


@pytest.mark.parametrize("left", [1, 3])
def test_penalty_concession_on_the_barrel_costs_the_bid_once(left: int) -> None:
    """concede = penalty: −bid and off, on the last barrel deal too (not −100 − 120)."""
    house = load_ruleset(str(ROOT / "rulesets" / "house-penalty.toml"))
    game = new_game(house, scores=(880, 10, 20), barrel=(left, 0, 0))
    f_declares(game, "concede")
    assert game.scores == (780, 60, 70)
    assert game.barrel == (0, 0, 0)
    assert game.deal_results[-1].events == ("seat 0 concedes and falls off the barrel",)


def test_concede_off_offers_no_concession_and_refuses_it() -> None:
    game = new_game(rules(concede="off"))
    f_declares(game, None)
    assert all(str(a).startswith("contract") for a in game.legal_actions())
    with pytest.raises(ConcedeError):
        act(game, (F, "concede"))


@pytest.mark.parametrize(
    ("start", "score", "barrel"),
    [(829, 879, 0), (830, 880, 3), (831, 880, 3)],
)
def test_halves_of_a_concession_reaching_the_barrel(start: int, score: int, barrel: int) -> None:
    game = new_game(rules(), scores=(0, start, 0))
    f_declares(game, "concede")
    assert game.scores == (0, score, 50)
    assert game.barrel == (0, barrel, 0)


def test_barrel_mode_one_a_concession_half_knocks_the_sitter_off() -> None:
    """F sits (2 deals left) and concedes freely; S reaches 880 with his half: S is the
    newcomer and knocks F off (880 − 120 = 760); L scores his half."""
    game = new_game(rules(barrel_mode="one"), scores=(880, 830, 0), barrel=(2, 0, 0))
    f_declares(game, "concede")
    assert game.scores == (760, 880, 50)
    assert game.barrel == (0, 3, 0)
    assert game.deal_results[-1].events == (
        "seat 0 is knocked off the barrel: -120",
        "seat 1 gets on the barrel",
    )


def test_barrel_mode_one_two_newcomers_and_a_sitter_all_fall() -> None:
    game = new_game(rules(barrel_mode="one"), scores=(880, 830, 850), barrel=(2, 0, 0))
    f_declares(game, "concede")
    assert game.scores == (760, 760, 760)
    assert game.barrel == (0, 0, 0)


def test_barrel_mode_many_two_newcomers_both_sit_with_the_sitter() -> None:
    game = new_game(rules(), scores=(880, 830, 850), barrel=(2, 0, 0))
    f_declares(game, "concede")
    assert game.scores == (880, 880, 880)
    assert game.barrel == (1, 3, 3)


def test_barrel_mode_one_sitter_on_his_last_deal_pays_once_when_a_newcomer_arrives() -> None:
    game = new_game(rules(barrel_mode="one"), scores=(880, 830, 0), barrel=(1, 0, 0))
    f_declares(game, "concede")
    assert game.scores == (760, 880, 50)
    assert game.barrel == (0, 3, 0)


# ----------------------------------------------------------------- halves and rounding
@pytest.mark.parametrize(("rounding", "half"), [(1, 53), (5, 55), (10, 50), (25, 50)])
def test_half_of_an_odd_bid_rounded_half_up_to_the_unit(rounding: int, half: int) -> None:
    """Half of 105 is 52.5: unit 1 → 53, unit 5 → 55 (half up), unit 10 → 50 (52.5 is
    nearer 50 than 60), unit 25 → 50."""
    game = new_game(rules(rounding=rounding))
    s_declares_105(game)
    act(game, (S, "concede"))
    assert game.scores == (half, 0, half)


def test_concede_pays_none_with_a_free_concession_scores_nothing() -> None:
    game = new_game(rules(concede_pays="none"), scores=(5, 6, 7))
    s_declares_105(game)
    act(game, (S, "concede"))
    assert game.scores == (5, 6, 7)


def test_a_sitter_is_paid_no_half() -> None:
    game = new_game(rules(), scores=(0, 0, 880), barrel=(0, 0, 2))
    s_declares_105(game)
    act(game, (S, "concede"))
    assert game.scores == (53, 0, 880)
    assert game.barrel == (0, 0, 1)


# ----------------------------------------------------------------- bids and contracts at the cap
def test_bid_at_the_cap_and_one_step_over() -> None:
    """S's cap is 120 + ♥ 100 = 220; F's 120 + ♠ 40 = 160."""
    game = new_game(rules())
    act(game, (S, "bid 220"))
    game = new_game(rules())
    with pytest.raises(BidError):
        act(game, (S, "bid 225"))
    act(game, (S, "bid 105"), (L, "pass"), (F, "bid 160"))
    game = new_game(rules())
    act(game, (S, "bid 105"), (L, "pass"))
    with pytest.raises(BidError):
        act(game, (F, "bid 165"))


@pytest.mark.parametrize(
    ("step", "opening", "legal_top"), [(10, 100, 160), (20, 100, 160), (30, 90, 150)]
)
def test_bid_step_and_the_cap(step: int, opening: int, legal_top: int) -> None:
    """F's cap is 160: his highest bid is the highest multiple of the step up to it (with
    step 30: 150, as 180 is over the cap)."""
    game = new_game(rules(bid_step=step, opening_bid=opening))
    act(game, (S, f"bid {opening + step}"), (L, "pass"))
    bids = [a.amount for a in game.legal_actions() if str(a).startswith("bid")]  # type: ignore[attr-defined]
    assert max(bids) == legal_top
    assert all(b % step == 0 for b in bids)


def test_contract_at_the_cap_and_over() -> None:
    game = new_game(rules())
    f_declares(game, None)
    contracts = [str(a) for a in game.legal_actions() if str(a).startswith("contract")]
    assert contracts[0] == "contract 100" and contracts[-1] == "contract 160"
    with pytest.raises(ContractError):
        act(game, (F, "contract 165"))
    with pytest.raises(ContractError):
        act(game, (F, "contract 95"))


# ----------------------------------------------------------------- the ace marriage × trump × cap
ACES_HANDS = (
    "A♠ A♣ A♦ A♥ 10♥ K♥ Q♥",  # F: all four aces and the ♥ marriage
    "K♠ Q♠ J♥ 9♥ K♣ Q♣ J♣",
    "J♠ 9♠ K♦ Q♦ J♦ 9♦ 10♣",
)
ACES_TALON = "10♠ 9♣ 10♦"
ACES_LEADS = ["10♠", "K♥ declare", "A♠ declare", "A♥", "10♥", "Q♥", "A♣", "A♦"]


@pytest.mark.parametrize(
    ("options", "cap"),
    [
        ({}, 420),  # 120 + ♥ 100 + aces 200
        ({"ace_marriage_counts_for_bid": False}, 220),
        ({"ace_marriage": False}, 220),
    ],
)
def test_ace_marriage_keeps_the_trump_and_counts_to_the_cap(
    options: dict[str, bool], cap: int
) -> None:
    """F keeps the four aces, 10♥ K♥ Q♥ and 10♠ (gives 9♣ to S, 10♦ to L). He wins the
    10♠ trick (a non-ace), declares ♥ (trump ♥), then the aces with A♠ (both others
    still follow ♠): trump stays ♥. 120 card points + 100 + 200 = 420 ≥ any contract."""
    r = rules(**options)
    game = new_game(r, hands=ACES_HANDS, talon=ACES_TALON)
    act(game, (S, "pass"), (L, "pass"), (F, "give 9♣ to 1"), (F, "give 10♦ to 2"))
    tops = [str(a) for a in game.legal_actions() if str(a).startswith("contract")]
    assert tops[-1] == f"contract {cap}"
    act(game, (F, f"contract {cap}"))
    leads = ACES_LEADS if r.ace_marriage else [x.replace("A♠ declare", "A♠") for x in ACES_LEADS]
    declarer = game.declarer
    for i, lead in enumerate(leads):
        if i == 2:
            assert game.trump == Suit.HEARTS
            if not r.ace_marriage:
                with pytest.raises(MarriageError):
                    act(game, (F, "play A♠ declare"))
        act(game, (declarer, f"play {lead}"))
        if i == 2:
            assert game.trump == Suit.HEARTS  # "changes no trump"
        for _ in range(2):
            game.apply(game.legal_actions()[0], seat=game.to_act)
    res = game.deal_results[-1]
    marriages = 300 if r.ace_marriage else 100
    assert res.card_points[F] == 120
    assert res.marriage_points[F] == marriages
    assert res.outcome == "made"
    assert game.scores == (cap, 0, 0)


def test_ace_marriage_needs_a_trick_won_with_a_non_ace_even_without_marriage_needs_trick() -> None:
    r = rules(marriage_needs_trick=False)
    game = new_game(r, hands=ACES_HANDS, talon=ACES_TALON)
    act(game, (S, "pass"), (L, "pass"), (F, "give 9♣ to 1"), (F, "give 10♦ to 2"))
    act(game, (F, "contract 100"))
    with pytest.raises(MarriageError):
        act(game, (F, "play A♠ declare"))
    # A suit marriage on the first lead is allowed under marriage_needs_trick = false.
    act(game, (F, "play K♥ declare"))
    assert game.trump == Suit.HEARTS and game.marriage_points(F) == 100


def test_marriage_needs_trick_refuses_the_declarers_first_lead_marriage() -> None:
    game = new_game(rules())
    f_declares(game, "contract 100")
    with pytest.raises(MarriageError):
        act(game, (F, "play K♠ declare"))


def test_declarers_marriage_on_the_first_lead_counts_only_toward_his_contract() -> None:
    """marriage_needs_trick = false: F declares ♠ on his first lead: take 160 makes a
    contract of 160 and scores 160 (never more than the contract)."""
    game = new_game(rules(marriage_needs_trick=False))
    f_declares(game, "contract 150")
    sweep(game, ["K♠ declare", "A♠", "10♠", "Q♠", "J♠", "9♠", "A♥", "10♥"])
    assert game.deal_results[-1].takes[F] == 160
    assert game.scores == (150, 0, 0)


# ----------------------------------------------------------------- negative scores
def test_negative_scores_go_further_down() -> None:
    game = new_game(rules(), scores=(-50, -5, 0))
    f_declares(game, "contract 125")
    sweep(game)
    assert game.scores == (-175, -5, 0)


# ----------------------------------------------------------------- barrel_deals and its penalty
def test_barrel_deals_one_and_no_penalty() -> None:
    """barrel_deals = 1, barrel_penalty = 0: F sits one deal (a made 100 < 120) and is
    off at 880, the event saying "(no penalty)"."""
    game = new_game(rules(barrel_deals=1, barrel_penalty=0), scores=(880, 0, 0), barrel=(1, 0, 0))
    f_declares(game, "contract 100")
    sweep(game)
    assert game.scores == (880, 0, 0)
    assert game.barrel == (0, 0, 0)
    assert game.deal_results[-1].events == ("seat 0 sat 1 deal on the barrel (no penalty)",)


def test_max_deals_ends_on_a_barrel_penalty_deal() -> None:
    game = new_game(rules(max_deals=1), scores=(880, 790, 800), barrel=(1, 0, 0))
    f_declares(game, "concede")
    assert game.is_over and game.result.reason == "max_deals"
    assert game.result.scores == (760, 840, 850)
    assert game.result.places == (3, 2, 1)
    assert game.result.winner == L
    assert game.result.shortfalls == (240, 160, 0)


# ----------------------------------------------------------------- 1001: target and throw-in
def l_throws_in(game: Game) -> None:
    """1001: F and S pass, L takes the talon at 40 and throws in."""
    act(game, (F, "pass"), (S, "pass"), (L, "throw-in"))


@pytest.mark.parametrize(
    ("start", "over", "winner", "places"),
    [
        ((950, 900, 0), False, None, None),  # 1000: one short of 1001
        ((951, 900, 0), True, F, (1, 2, 3)),  # exactly 1001
        ((952, 951, 0), True, F, (1, 2, 3)),  # 1002 and 1001: the higher wins
        ((951, 951, 0), True, None, (1, 1, 3)),  # both exactly 1001: a shared first place
    ],
)
def test_1001_target_boundary_and_ties_by_a_throw_in(
    start: tuple[int, int, int], over: bool, winner: int | None, places: tuple[int, ...] | None
) -> None:
    game = new_game(load_ruleset("1001"), scores=start)
    l_throws_in(game)
    assert game.deal_results[-1].outcome == "thrown_in"
    assert game.deal_results[-1].deltas == (50, 50, 0)
    assert game.is_over is over
    if over:
        assert game.result.winner == winner
        assert game.result.places == places
        sf = [max(0, 1001 - s) for s in game.scores]
        if winner is not None:
            sf[winner] = 0
        assert game.result.shortfalls == tuple(sf)


def test_1001_throw_in_bonus_is_not_rounded() -> None:
    game = new_game(rules("1001", throw_in_bonus=52))
    l_throws_in(game)
    assert game.scores == (52, 52, 0)


def test_1001_concession_costs_the_bid_and_pays_nobody() -> None:
    game = new_game(load_ruleset("1001"), scores=(100, 100, 100))
    act(game, (F, "bid 45"), (S, "pass"), (L, "pass"), (F, "give 9♠ to 1"), (F, "give A♥ to 2"))
    act(game, (F, "concede"))
    assert game.scores == (55, 100, 100)


def test_1001_defender_take_rounded_to_5() -> None:
    """1001: L takes the talon after two passes and names 40; F, not the declarer, ...
    here F takes nothing and S nothing: rounding of a 0 take is 0, and L's made contract
    is not rounded. (The rounding of nonzero takes: see the concession halves above.)"""
    game = new_game(load_ruleset("1001"), hands=(BASE_HANDS[1], BASE_HANDS[2], BASE_HANDS[0]))
    act(game, (F, "pass"), (S, "pass"), (L, "give 9♣ to 0"), (L, "give 9♦ to 1"))
    act(game, (L, "contract 45"))
    sweep(game)
    assert game.scores == (0, 0, 45)


# ----------------------------------------------------------------- 4 players × the barrel
@pytest.mark.parametrize(
    ("talon", "dealer_start", "dealer_barrel", "dealer_score", "dealer_after"),
    [
        ("10♥ 9♣ 9♦", 869, 0, 879, 0),  # talon 10 points: 879
        ("10♥ 9♣ 9♦", 870, 0, 880, 3),  # exactly 880: on the barrel
        ("10♥ 9♣ 9♦", 880, 2, 880, 1),  # a sitting dealer's talon is not scored
        ("10♥ 9♣ 9♦", 880, 1, 760, 0),  # his deal sat out counts: the 3rd: −120
    ],
)
def test_four_players_dealer_talon_and_the_barrel(
    talon: str, dealer_start: int, dealer_barrel: int, dealer_score: int, dealer_after: int
) -> None:
    r = rules(players=4, name="classic-4")
    game = new_game(r, scores=(0, 0, 0, dealer_start), barrel=(0, 0, 0, dealer_barrel))
    f_declares(game, "contract 100")
    sweep(game)
    assert game.scores == (100, 0, 0, dealer_score)
    assert game.barrel == (0, 0, 0, dealer_after)


NINES_HANDS = (
    "A♠ 10♠ K♠ Q♠ J♠ 10♥ A♥",
    "K♥ Q♥ J♥ 10♦ A♣ 10♣ K♣",
    "Q♣ J♣ A♦ J♦ K♦ Q♦ 9♠",
)


@pytest.mark.parametrize(
    ("preset", "value", "expected"), [("1001-4p", 52, 52), ("classic", 100, 100)]
)
def test_four_players_three_nines_talon_value_not_rounded(
    preset: str, value: int, expected: int
) -> None:
    r = rules(preset, players=4, name="four", nines_talon_value=value)
    game = new_game(r, hands=NINES_HANDS, talon="9♥ 9♣ 9♦")
    if r.first_hand_commits:
        act(game, (S, "pass"), (L, "pass"))
    else:
        act(game, (F, "bid 40"), (S, "pass"), (L, "pass"))
    act(game, (F, "give 9♣ to 1"), (F, "give 9♦ to 2"), (F, "concede"))
    assert game.scores[D4] == expected


# ----------------------------------------------------------------- property: halves
@settings(max_examples=60, deadline=None)
@given(
    step=st.sampled_from([5, 10, 15, 20, 25, 30, 40, 60, 120]),
    raises=st.integers(1, 44),
    rounding=st.integers(1, 30),
    concede=st.sampled_from(["free", "penalty"]),
)
def test_concession_scores_by_hand_for_any_step_and_rounding(
    step: int, raises: int, rounding: int, concede: str
) -> None:
    """F is committed to the opening bid (= the step); S bids some multiple of the step up
    to his cap 220 and concedes: S scores 0 or −bid; F and L half the bid, rounded half up
    to the unit (exact arithmetic on 2 × half)."""
    r = rules(bid_step=step, opening_bid=step, rounding=rounding, concede=concede)
    game = new_game(r)
    bid = min(step * (1 + raises), 220 // step * step)
    if bid == step:  # (step 120: no raise fits under 220)
        return
    act(game, (S, f"bid {bid}"), (L, "pass"), (F, "pass"))
    act(game, (S, "give J♥ to 0"), (S, "give 9♥ to 2"), (S, "concede"))
    # bid/2 to the nearest multiple of the unit, a tie (exactly halfway) upwards.
    q, rem = divmod(bid, 2 * rounding)  # bid/2 = q*unit + rem/2
    half = q * rounding + (rounding if rem >= rounding else 0)
    assert game.scores == (half, -bid if concede == "penalty" else 0, half)


def test_ruleset_errors_name_the_option() -> None:
    with pytest.raises(RulesetError) as e:
        Ruleset.from_dict({"preset": "classic", "bid_step": 7})
    assert e.value.key == "bid_step"


def test_four_players_1001_talon_points_are_not_rounded_to_5() -> None:
    """1001-4p rounds takes to 5, but the dealer's talon score is "its card points (not
    rounded)": a talon J♥ 9♣ 9♦ scores 2, not 0; the concession pays nobody else."""
    hands = ("A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "K♥ Q♥ 10♥ 9♥ A♣ 10♣ K♣", BASE_HANDS[2])
    game = new_game(load_ruleset("1001-4p"), hands=hands, talon="J♥ 9♣ 9♦")
    act(game, (F, "bid 40"), (S, "pass"), (L, "pass"))
    act(game, (F, "give 9♣ to 1"), (F, "give 9♦ to 2"), (F, "concede"))
    assert game.scores == (-40, 0, 0, 2)


def test_contract_cap_below_the_bid_after_giving_a_marriage_card_away() -> None:
    """F wins at 160 (his dealt cap: 120 + ♠ 40) and gives K♠ away: 120 + 0 < 160, so the
    contract is "the greater of the winning bid and 120 + the marriages": 160 only."""
    game = new_game(rules())
    act(game, (S, "bid 105"), (L, "pass"), (F, "bid 160"), (S, "pass"))
    act(game, (F, "give K♠ to 1"), (F, "give 9♣ to 2"))
    contracts = [str(a) for a in game.legal_actions() if str(a).startswith("contract")]
    assert contracts == ["contract 160"]
    with pytest.raises(ContractError):
        act(game, (F, "contract 165"))


@pytest.mark.parametrize(
    ("options", "cap"),
    [({}, 420), ({"ace_marriage_counts_for_bid": False}, 220), ({"ace_marriage": False}, 220)],
)
def test_bidding_cap_with_the_four_aces_dealt(options: dict[str, bool], cap: int) -> None:
    game = new_game(rules(**options), hands=ACES_HANDS, talon=ACES_TALON)
    act(game, (S, "bid 105"), (L, "pass"))
    bids = [a.amount for a in game.legal_actions() if str(a).startswith("bid")]  # type: ignore[attr-defined]
    assert max(bids) == cap
    with pytest.raises(BidError):
        act(game, (F, f"bid {cap + 5}"))
    act(game, (F, f"bid {cap}"))


@pytest.mark.parametrize(("start", "over"), [(899, False), (900, True), (901, True), (950, True)])
def test_classic_without_the_barrel_ends_at_exactly_the_target_or_over(
    start: int, over: bool
) -> None:
    """barrel = false: 899 + 100 = 999 plays on; 1000 and over end the match, the score
    kept as it is (only a win from the barrel is set to the target)."""
    game = new_game(rules(barrel=False), scores=(start, 990, 0))
    f_declares(game, "contract 100")
    sweep(game)
    assert game.is_over is over
    assert game.scores == (start + 100, 990, 0)
    if over:
        assert game.result.winner == F
        assert game.result.shortfalls == (0, 10, 1000)


def test_four_players_halves_go_to_the_two_opponents_dealt_in_not_the_dealer() -> None:
    """classic with 4 players: F concedes 100 freely; S and L (his opponents) score 50
    each; the dealer, who sits out, scores the talon (10♥ 9♣ 9♦: 10), no half."""
    game = new_game(rules(players=4, name="classic-4"))
    f_declares(game, "concede")
    assert game.scores == (0, 50, 50, 10)


def test_the_barrel_win_needs_120_whatever_the_opening_bid_and_target() -> None:
    """RULES.md's 120 is no option: with opening_bid 120 and target 900 a made 120 wins
    (score 900), with opening_bid 60 a made 115 does not."""
    game = new_game(
        rules(opening_bid=120, target=900, barrel_at=800), scores=(800, 0, 0), barrel=(2, 0, 0)
    )
    f_declares(game, "contract 120")
    sweep(game)
    assert game.is_over and game.scores == (900, 0, 0)
    game = new_game(rules(opening_bid=60), scores=(880, 0, 0), barrel=(2, 0, 0))
    f_declares(game, "contract 115")
    sweep(game)
    assert game.scores == (880, 0, 0) and game.barrel == (1, 0, 0)


@pytest.mark.parametrize(
    ("rounding", "take"), [(1, 13), (2, 14), (5, 15), (10, 10), (25, 25), (30, 0)]
)
def test_1001_defender_take_of_13_rounded_half_up(rounding: int, take: int) -> None:
    """1001: F and S pass, L (the spades and A♥) takes the talon at 40 and keeps 9♣. Every
    play is scripted: L wins seven tricks, then leads 9♣, F plays A♣ and S J♣: F takes
    11 + 2 = 13 card points, rounded half up to the unit (13/2 = 6.5 → 14; 13/5 = 2.6 →
    15; 13/10 = 1.3 → 10; 13/25 = 0.52 → 25; 13/30 → 0); L's 107 makes 40 (not rounded)."""
    hands = (BASE_HANDS[1], BASE_HANDS[2], BASE_HANDS[0])
    game = new_game(rules("1001", rounding=rounding), hands=hands)
    act(game, (F, "pass"), (S, "pass"), (L, "give 10♥ to 0"), (L, "give 9♦ to 1"))
    act(game, (L, "contract 40"))
    tricks = [
        ("A♠", "10♣", "Q♣"),
        ("10♠", "K♣", "A♦"),
        ("K♠", "K♥", "10♦"),
        ("Q♠", "Q♥", "K♦"),
        ("J♠", "J♥", "Q♦"),
        ("9♠", "9♥", "J♦"),
        ("A♥", "10♥", "9♦"),
        ("9♣", "A♣", "J♣"),
    ]
    for lead, f_card, s_card in tricks:
        act(game, (L, f"play {lead}"), (F, f"play {f_card}"), (S, f"play {s_card}"))
    res = game.deal_results[-1]
    assert res.card_points == (13, 0, 107)
    assert res.outcome == "made"
    assert game.scores == (take, 0, 40)


@pytest.mark.parametrize("visible", [True, False])
def test_talon_visible_and_the_passed_cards_in_each_view(visible: bool) -> None:
    """talon_visible: the talon is shown to all once taken (else to the declarer only);
    a passed card only to its giver and receiver."""
    game = new_game(rules(talon_visible=visible))
    act(game, (S, "pass"), (L, "pass"))
    for seat in (F, S, L):
        shown = observe(game, seat).talon
        assert (shown is not None) == (visible or seat == F)
    act(game, (F, "give 9♣ to 1"), (F, "give 9♦ to 2"))
    for seat in (F, S, L):
        view = observe(game, seat)
        assert (view.talon is not None) == (visible or seat == F)
        seen = {to: card for to, card in view.gives}
        for to, card in ((S, "9♣"), (L, "9♦")):
            assert (seen[to] is not None) == (seat in (F, to))
            if seen[to] is not None:
                assert str(seen[to]) == card


def test_a_tie_at_the_deal_cap_between_two_sitters() -> None:
    """max_deals = 1: F (sitting) concedes freely, S sits on as a defender (his half not
    scored), L scores 50. At the cap F and S share first place at 880: no winner, each
    loser's shortfall 1000 − score, theirs 120."""
    game = new_game(rules(max_deals=1), scores=(880, 880, 0), barrel=(2, 3, 0))
    f_declares(game, "concede")
    assert game.is_over and game.result.reason == "max_deals"
    assert game.result.scores == (880, 880, 50)
    assert game.result.places == (1, 1, 3)
    assert game.result.winner is None
    assert game.result.shortfalls == (120, 120, 950)


MARRIAGE_OF = {"♠": 40, "♣": 60, "♦": 80, "♥": 100}


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    step=st.sampled_from([5, 10, 15, 20, 25, 30, 40, 60]),
    ace_marriage=st.booleans(),
    counts=st.booleans(),
)
def test_second_hands_bids_run_from_one_step_up_to_his_cap(
    seed: int, step: int, ace_marriage: bool, counts: bool
) -> None:
    """Any seeded deal: second hand's legal bids are the multiples of the step from one
    step above the opening bid (= the step here) up to 120 + the marriages in his 7 cards
    (the four aces 200 if ace_marriage and ace_marriage_counts_for_bid), and pass."""
    r = rules(
        opening_bid=step,
        bid_step=step,
        ace_marriage=ace_marriage,
        ace_marriage_counts_for_bid=counts,
    )
    game = Game.new(r, seed, NAMES3, dealer=L)
    assert game.to_act == S
    cards = {str(c) for c in game.hand(S)}
    cap = 120 + sum(v for s, v in MARRIAGE_OF.items() if {f"K{s}", f"Q{s}"} <= cards)
    if ace_marriage and counts and {f"A{s}" for s in MARRIAGE_OF} <= cards:
        cap += 200
    legal = [str(a) for a in game.legal_actions()]
    assert legal == [f"bid {b}" for b in range(2 * step, cap + 1, step)] + ["pass"]
