"""Round 57: pairs of options whose rules meet at the same moment of a deal.

Each case below crosses two (sometimes three) options of ``engine.rules.Ruleset`` where
the pair, not either option alone, decides the outcome: who declares, which actions are
legal, the scores, the barrel counters, the end of the match. The expected figures are
worked out by hand from RULES.md (``/work/shared/RULES.md``, the lines cited in each
docstring as ``R<line>``) and, where RULES.md says nothing of the combination, from
docs/rules-engine.md's "Interpretations" (cited as such; three of them were added this
round, see the docstrings marked "silence").

Earlier rounds pinned single options (round 40), products of the concession options and
the barrel numbers (round 47), and the engine against an oracle under drawn rulesets
(rounds 37, 51); the pairs here are those none of them decides by hand. The crafted deal
and helpers are round 40's: 3 players with dealer 2 (first hand F = 0, S = 1, last hand
L = 2); 4 players with dealer 3, who sits out. In its base deal F holds the six spades and
A♥, S the ♥ marriage (cap 220), L the ♦ marriage (cap 200), talon 10♥ 9♣ 9♦ (10 points);
F as declarer gives 9♣ to S and 9♦ to L and takes all eight tricks (120, +40 with ♠).
"""

from __future__ import annotations

import pytest

from engine import ConcedeError, Game, observe, parse_action
from tests.engine.test_rules_options_round40 import (
    SWEEP_MARRIAGE,
    F,
    L,
    S,
    act,
    f_declares,
    new_game,
    rules,
    s_declares_105,
    sweep,
)


def legal(game: Game) -> list[str]:
    return [str(a) for a in game.legal_actions()]


def outcome(game: Game) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    d = game.deal_results[-1]
    return d.outcome, d.deltas, d.scores


# ------------------------------------------------- first_hand_commits × all_pass × concede
@pytest.mark.parametrize("players", [3, 4])
def test_uncommitted_first_hand_plays_the_opening_bid_when_all_pass_and_may_concede(
    players: int,
) -> None:
    """``first_hand_commits = false`` × ``all_pass = "first_hand"``: everybody speaks, all
    three pass, and first hand, who passed, is the declarer at the opening bid (R23-24 "if
    both others pass at once, first hand plays 100"; the options table: "first_hand: if
    all pass, first hand plays the opening bid"); nobody bid, so ``high_bidder`` is None.
    He may concede as any declarer (R36-39, silence: RULES.md §6 says "at the winning bid",
    which here is the opening bid): 0 for him, half of 100 = 50 to each opponent, and with
    4 players the dealer scores the talon 10♥ 9♣ 9♦ = 10 (R95-97)."""
    g = new_game(rules(first_hand_commits=False, all_pass="first_hand", players=players))
    assert (g.to_act, g.bid, g.high_bidder) == (F, None, None)  # nobody committed
    act(g, (F, "pass"), (S, "pass"))
    assert g.to_act == L  # two passes end nothing: L has not spoken
    act(g, (L, "pass"))
    assert (g.declarer, g.bid, g.high_bidder, g.last_hand_take) == (F, 100, None, False)
    act(g, (F, "give 9♣ to 1"), (F, "give 9♦ to 2"))
    # contract 100 .. 160 (120 + the ♠ marriage) in fives, and the concession
    assert legal(g) == [f"contract {x}" for x in range(100, 165, 5)] + ["concede"]
    act(g, (F, "concede"))
    expected = (0, 50, 50, 10)[:players]
    assert outcome(g) == ("conceded", expected, expected)


def test_uncommitted_first_hand_after_an_all_pass_cannot_concede_under_concede_off() -> None:
    """The same all-pass with ``concede = "off"``: only contracts are legal (R36-38 "off"),
    and a concession is refused naming the option."""
    g = new_game(rules(first_hand_commits=False, all_pass="first_hand", concede="off"))
    act(g, (F, "pass"), (S, "pass"), (L, "pass"), (F, "give 9♣ to 1"), (F, "give 9♦ to 2"))
    assert legal(g) == [f"contract {x}" for x in range(100, 165, 5)]
    with pytest.raises(ConcedeError, match="concede"):
        g.apply(parse_action("concede"), seat=F)
    assert g.phase.name == "CONTRACT"  # (refused: nothing changed)


# ------------------------------------- all_pass × concede × opening_bid × bid_step
def test_last_hand_takes_the_talon_at_the_opening_bid_off_the_step_and_only_throws_in() -> None:
    """``all_pass = "last_hand"`` (uncommitted) × ``concede = "free"`` × ``opening_bid = 60``
    / ``bid_step = 20``: F's bids are 60, 80, ... 160 (multiples of the step up to his cap
    160, R25-28); F and S pass, so L takes the talon at 60 (R86-88). His contract runs
    from 60 in fives, not in the bidding step (R33-35 "a multiple of 5"; the options table
    "contracts are multiples of 5 whatever the step") up to his cap after giving Q♣ and
    J♣ away (♦ marriage: 200); instead of conceding (which RULES.md's 1001 section keeps
    apart: R91-92, and the Interpretations: "unlike him he cannot concede") he may throw
    in: F and S +50 each, L 0 (R87-88)."""
    g = new_game(rules(first_hand_commits=False, all_pass="last_hand", opening_bid=60, bid_step=20))
    assert legal(g) == [f"bid {x}" for x in range(60, 161, 20)] + ["pass"]
    act(g, (F, "pass"), (S, "pass"))
    assert (g.declarer, g.bid, g.last_hand_take) == (L, 60, True)
    assert legal(g)[-1] == "throw-in"  # already before his two cards (Interpretations)
    act(g, (L, "give Q♣ to 0"), (L, "give J♣ to 1"))
    assert legal(g) == [f"contract {x}" for x in range(60, 205, 5)] + ["throw-in"]
    with pytest.raises(ConcedeError):
        g.apply(parse_action("concede"), seat=L)
    act(g, (L, "throw-in"))
    assert outcome(g) == ("thrown_in", (50, 50, 0), (50, 50, 0))


# ------------------------------------------------------------ all_pass × talon_visible
def test_last_hands_talon_after_an_all_pass_is_his_alone_without_talon_visible() -> None:
    """``all_pass = "last_hand"`` × ``talon_visible = false``: the talon the last hand takes
    after the all-pass is shown to him only (R29-30), and stays unseen by the others
    when he throws in at once."""
    g = new_game(rules(first_hand_commits=False, all_pass="last_hand", talon_visible=False))
    act(g, (F, "pass"), (S, "pass"))
    talons = [observe(g, s).talon for s in (F, S, L)]
    assert talons[0] is None and talons[1] is None
    assert sorted(str(c) for c in talons[2] or ()) == ["10♥", "9♣", "9♦"]
    act(g, (L, "throw-in"))
    assert outcome(g) == ("thrown_in", (50, 50, 0), (50, 50, 0))


# ----------------------------------------------------------- all_pass × barrel_mode
@pytest.mark.parametrize(
    ("mode", "deltas", "scores", "barrel", "events"),
    [
        ("many", (30, 50, 0), (880, 50, 880), (3, 0, 1), ("seat 0 gets on the barrel",)),
        (
            "one",
            (30, 50, -120),
            (880, 50, 760),
            (3, 0, 0),
            ("seat 2 is knocked off the barrel: -120", "seat 0 gets on the barrel"),
        ),
    ],
)
def test_a_sitters_throw_in_seats_a_newcomer_by_its_bonus(
    mode: str,
    deltas: tuple[int, ...],
    scores: tuple[int, ...],
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    """``all_pass = "last_hand"`` × the barrel × ``barrel_mode``: L sits on the barrel
    (880, 2 deals left), F has 850. F and S pass, L throws in: F +50 → 900, set to 880
    and on the barrel (R63-64), S +50; L's deal counts (2 → 1) and the throw-in keeps
    him sitting (Interpretations). Under ``many`` both sit (R71); under ``one`` the
    newcomer F knocks L off: 880 − 120 = 760 (R71-73)."""
    r = rules(first_hand_commits=False, all_pass="last_hand", barrel_mode=mode)
    g = new_game(r, scores=(850, 0, 880), barrel=(0, 0, 2))
    act(g, (F, "pass"), (S, "pass"), (L, "throw-in"))
    d = g.deal_results[-1]
    assert (d.outcome, d.deltas, d.scores, d.barrel) == ("thrown_in", deltas, scores, barrel)
    assert d.events == events


# ---------------------------------------------- barrel × first_hand_commits × all_pass
def test_a_sitter_who_passed_and_plays_the_opening_bid_after_an_all_pass_wins_at_120() -> None:
    """The barrel × ``first_hand_commits = false`` × ``all_pass = "first_hand"``
    (``opening_bid = 40``): F sits on the barrel and passes, so do S and L; F plays the
    opening bid 40 though he never bid. He raises the contract to 120 (R33-35) and makes
    it: he wins, score 1000 (R65-66). Silence: R65 says "by winning the bidding"; the
    Interpretations say it of a sitter handed the talon under ``all_pass = "last_hand"``
    and now of this one: the declarer either way."""
    r = rules(first_hand_commits=False, all_pass="first_hand", opening_bid=40)
    g = new_game(r, scores=(880, 0, 0), barrel=(3, 0, 0))
    act(g, (F, "pass"), (S, "pass"), (L, "pass"))
    assert (g.declarer, g.bid) == (F, 40)
    act(g, (F, "give 9♣ to 1"), (F, "give 9♦ to 2"), (F, "contract 120"))
    sweep(g)
    assert g.result is not None
    assert (g.result.scores, g.result.winner, g.result.reason) == ((1000, 0, 0), F, "target")
    assert g.deal_results[-1].events == ("seat 0 wins from the barrel",)


# --------------------------------------------------------------- rounding × barrel_at
@pytest.mark.parametrize(
    ("unit", "delta", "score", "barrel"), [(1, 53, 879, (0, 0, 0)), (5, 54, 880, (3, 0, 0))]
)
def test_the_rounded_half_decides_whether_a_player_reaches_the_barrel(
    unit: int, delta: int, score: int, barrel: tuple[int, ...]
) -> None:
    """``rounding`` × ``barrel_at``: S concedes at 105 (free, R36-39), F at 826 gets half of
    105 = 52.5 rounded half up to the unit: 53 (unit 1) leaves him at 879, below 880;
    55 (unit 5) would make 881, which reaches 880: set to exactly 880 and on the barrel
    (R63-64), a delta of 54."""
    g = new_game(rules(rounding=unit), scores=(826, 0, 0))
    s_declares_105(g)
    act(g, (S, "concede"))
    d = g.deal_results[-1]
    assert (d.deltas[F], d.scores[F], d.barrel) == (delta, score, barrel)


# ------------------------------------------------------------------ barrel × target
@pytest.mark.parametrize("barrel", [True, False])
def test_a_made_contract_jumping_past_the_target_stops_at_the_barrel(barrel: bool) -> None:
    """The barrel × ``target``: F at 870 makes 160 (the ♠ marriage, R57-58). With the barrel
    1030 "would reach 880 or more": set to 880, on the barrel, and the match goes on
    (R63-64: only a win from the barrel reaches 1000, R65-66). Without it 1030 reaches the
    target: the match is over, F first (R74-76)."""
    g = new_game(rules(barrel=barrel), scores=(870, 0, 0))
    f_declares(g, "contract 160")
    sweep(g, SWEEP_MARRIAGE)
    if barrel:
        assert (g.scores, g.barrel, g.is_over) == ((880, 0, 0), (3, 0, 0), False)
    else:
        assert g.result is not None
        assert (g.result.scores, g.result.winner, g.result.reason) == ((1030, 0, 0), F, "target")


# ------------------------------------------------ players = 4 × barrel_mode × the talon
def test_the_four_player_dealers_talon_seats_him_and_knocks_the_sitter_off() -> None:
    """``players = 4`` × ``barrel_mode = "one"``: the dealer (seat 3) at 870 scores the talon
    10♥ 9♣ 9♦ = 10 (R95-97) → 880: a newcomer (the Interpretations: the talon score is
    treated like a defender's take), who knocks S (on the barrel, 2 left, a defender
    taking 0 this deal) off: 880 − 120 = 760 (R71-73). F makes 100."""
    g = new_game(rules(players=4, barrel_mode="one"), scores=(0, 880, 0, 870), barrel=(0, 2, 0, 0))
    f_declares(g, "contract 100")
    sweep(g)
    d = g.deal_results[-1]
    assert (d.deltas, d.scores, d.barrel) == ((100, -120, 0, 10), (100, 760, 0, 880), (0, 0, 0, 3))
    assert d.events == ("seat 1 is knocked off the barrel: -120", "seat 3 gets on the barrel")


# ------------------------------------------------------- barrel_penalty × barrel_at
def test_a_penalty_larger_than_barrel_at_takes_the_sitter_below_zero() -> None:
    """``barrel_penalty = 150`` × ``barrel_at = 100``: S sits at 100 with one deal left and
    defends (takes 0): "−120 (barrel_penalty) and off" from 100 is −50 (R69-70; "Scores
    may go negative", R60). F makes 100 → 100 = barrel_at: on the barrel (R63-64)."""
    g = new_game(rules(barrel_at=100, barrel_penalty=150), scores=(0, 100, 0), barrel=(0, 1, 0))
    f_declares(g, "contract 100")
    sweep(g)
    d = g.deal_results[-1]
    assert (d.deltas, d.scores, d.barrel) == ((100, -150, 0), (100, -50, 0), (3, 0, 0))
    assert d.events == ("seat 1 sat 3 deals on the barrel: -150", "seat 0 gets on the barrel")


# -------------------------------------------------------------- max_deals × target
@pytest.mark.parametrize(
    ("start", "score", "reason"), [(900, 1020, "target"), (800, 920, "max_deals")]
)
def test_the_deal_at_the_cap_that_reaches_the_target_ends_by_the_target(
    start: int, score: int, reason: str
) -> None:
    """``max_deals = 1`` × ``target`` (no barrel): the one deal allowed is also the deal where
    F (900 + 120 = 1020) reaches the target: both R74 and R78-80 end the match, with the
    same places; ``reason`` is ``"target"`` (silence: docs/rules-engine.md's GameResult
    now says so). Below the target the cap ends it (``"max_deals"``), F still first."""
    g = new_game(rules(barrel=False, max_deals=1), scores=(start, 0, 0))
    f_declares(g, "contract 120")
    sweep(g)
    assert g.result is not None
    assert (g.result.scores, g.result.places, g.result.winner) == ((score, 0, 0), (1, 2, 2), F)
    assert (g.result.reason, g.result.shortfalls) == (reason, (0, 1000, 1000))


# ------------------------------------------- concede_pays × target (several cross it)
@pytest.mark.parametrize(
    ("start_l", "scores", "places", "winner"),
    [(950, (1013, 0, 1003), (1, 3, 2), F), (960, (1013, 0, 1013), (1, 3, 1), None)],
)
def test_two_halves_of_a_concession_carry_two_players_past_the_target(
    start_l: int,
    scores: tuple[int, ...],
    places: tuple[int, ...],
    winner: int | None,
) -> None:
    """``concede_pays = "half"`` × ``target`` (no barrel): S concedes at 105, F (960) and L
    each get 53: both reach 1000 in one deal. "The highest wins; equal scores share a
    place, numbered 1, 1, 3" (R75-76): F first and L second, or both first and no winner;
    L reached the target, so owes nothing (shortfall 0, the Interpretations)."""
    g = new_game(rules(barrel=False), scores=(960, 0, start_l))
    s_declares_105(g)
    act(g, (S, "concede"))
    assert g.result is not None
    assert (g.result.scores, g.result.places, g.result.winner) == (scores, places, winner)
    assert g.result.shortfalls == (0, 1000, 0)


# --------------------------------------------------------------- bid_step × contract
def test_a_bidding_step_of_25_leaves_the_contract_in_fives() -> None:
    """``bid_step = 25`` × the contract: F is committed at 100, so S's bids are 125 ... 200
    (R25-28: multiples of the step, at least a step above, at most his cap 220); S wins at
    125 and may name any multiple of 5 from 125 to 220 (R33-35), 130 included."""
    g = new_game(rules(bid_step=25))
    assert legal(g) == ["bid 125", "bid 150", "bid 175", "bid 200", "pass"]
    act(g, (S, "bid 125"), (L, "pass"), (F, "pass"), (S, "give J♥ to 0"), (S, "give 9♥ to 2"))
    assert legal(g) == [f"contract {x}" for x in range(125, 225, 5)] + ["concede"]


# ------------------------------------ bid_step × ace_marriage × ace_marriage_counts_for_bid
ACES_HANDS = ("10♠ K♠ Q♠ J♠ 10♣ K♣ Q♣", "A♠ A♣ A♦ A♥ K♥ Q♥ 9♠", "J♣ 9♣ 10♦ K♦ Q♦ J♦ 9♦")


@pytest.mark.parametrize(
    ("options", "bids"),
    [
        ({}, ["bid 240", "bid 360", "pass"]),
        ({"ace_marriage_counts_for_bid": False}, ["pass"]),
        ({"ace_marriage": False}, ["pass"]),
    ],
)
def test_the_ace_marriage_alone_lets_a_step_of_120_be_raised(
    options: dict[str, bool], bids: list[str]
) -> None:
    """``bid_step = 120`` (``opening_bid = 120``, committed) × the ace marriage's count: S
    holds the four aces and the ♥ marriage: cap 120 + 100 + 200 = 420 (R25-27), so he may
    raise to 240 or 360. Without the aces counting (either option off: the options table)
    his cap is 220, below the least raise 240: he can only pass."""
    r = rules(bid_step=120, opening_bid=120, **options)
    g = new_game(r, hands=ACES_HANDS, talon="10♥ J♥ 9♥")
    assert (g.to_act, g.bid) == (S, 120)
    assert legal(g) == bids
