"""RULES.md "Preset 1001", 3 and 4 players."""

from __future__ import annotations

import pytest

from engine import PRESETS, Phase
from engine.actions import Bid, Concede, Contract, Give, Pass, ThrowIn
from engine.errors import ThrowInError
from engine.record import replay

from .conftest import assert_refused, rules, table
from .test_rules_bidding import BASE, BASE_TALON

# Deal R (hand-checked). F bids 40, the others pass; F gives J♥ to S and K♥ to D and wins
# the first six tricks; S wins the last two.
R = {
    "F": "A♠ 10♠ A♣ 10♣ A♦ 10♦ 9♥",
    "S": "K♠ Q♠ J♠ 9♠ K♣ Q♣ A♥",
    "D": "J♣ 9♣ K♦ Q♦ J♦ 9♦ 10♥",
}
R_TALON = "K♥ Q♥ J♥"
R_START = ("F: bid 40", "S: pass", "D: pass", "F: give J♥ to {S}", "F: give K♥ to {D}")

# S takes 22: T7 9♥ A♥ K♥ (0+11+4) and T8 K♠ 9♦ Q♥ (4+0+3); D takes 0; F 98.
R22 = (
    "F: play A♠", "S: play 9♠", "D: play 10♥",
    "F: play 10♠", "S: play J♠", "D: play J♦",
    "F: play A♣", "S: play K♣", "D: play J♣",
    "F: play 10♣", "S: play Q♣", "D: play 9♣",
    "F: play A♦", "S: play J♥", "D: play K♦",
    "F: play 10♦", "S: play Q♠", "D: play Q♦",
    "F: play 9♥", "S: play A♥", "D: play K♥",
    "S: play K♠", "D: play 9♦", "F: play Q♥",
)  # fmt: skip
# S takes 23: T7 9♥ A♥ K♥ (15) and T8 Q♠ J♦ Q♥ (3+2+3); F 97.
R23 = (
    "F: play A♠", "S: play 9♠", "D: play 10♥",
    "F: play 10♠", "S: play J♠", "D: play 9♦",
    "F: play A♣", "S: play K♣", "D: play J♣",
    "F: play 10♣", "S: play Q♣", "D: play 9♣",
    "F: play A♦", "S: play J♥", "D: play K♦",
    "F: play 10♦", "S: play K♠", "D: play Q♦",
    "F: play 9♥", "S: play A♥", "D: play K♥",
    "S: play Q♠", "D: play J♦", "F: play Q♥",
)  # fmt: skip


def test_preset_values():
    for name, n in (("1001", 3), ("1001-4p", 4)):
        r = PRESETS[name]
        assert r.players == n
        assert r.target == 1001
        assert r.barrel is False
        assert r.opening_bid == 40 and r.bid_step == 5
        assert r.first_hand_commits is False
        assert r.talon_visible is True
        assert r.concede == "penalty" and r.concede_pays == "none"
        assert r.rounding == 5
        assert r.all_pass == "last_hand"
        assert r.throw_in_bonus == 50
    assert PRESETS["1001-4p"].nines_talon_value == 100
    c = PRESETS["classic"]
    assert (c.target, c.opening_bid, c.bid_step, c.rounding, c.barrel) == (1000, 100, 5, 1, True)
    assert (c.barrel_at, c.barrel_deals, c.barrel_penalty, c.barrel_mode) == (880, 3, 120, "many")
    assert (c.concede, c.concede_pays, c.must_beat, c.max_deals) == ("free", "half", False, 0)
    assert c.first_hand_commits and c.talon_visible and c.marriage_needs_trick
    assert c.ace_marriage and c.ace_marriage_counts_for_bid


def test_opening_40_and_nobody_committed():
    t = table(rules("1001"), BASE, BASE_TALON)
    assert t.game.to_act == t.F
    legal = t.game.legal_actions()
    assert Pass() in legal
    # F holds the ♥ marriage: 40 .. 220
    assert {a.amount for a in legal if isinstance(a, Bid)} == set(range(40, 221, 5))
    assert_refused(t.game, "bid 35")
    assert_refused(t.game, "bid 42")
    t.act("F: pass")
    assert t.game.to_act == t.S
    assert min(a.amount for a in t.game.legal_actions() if isinstance(a, Bid)) == 40
    t.act("S: bid 40")
    assert min(a.amount for a in t.game.legal_actions() if isinstance(a, Bid)) == 45


def reach_throw_in(t):
    """After an all-pass: the last hand gives two cards; throw-in is offered by then (and
    before: see test_the_last_hand_may_throw_in_as_soon_as_he_has_seen_the_talon)."""
    decl = t.game.to_act
    if t.game.phase is Phase.PASSING:
        gives = [a for a in t.game.legal_actions() if not isinstance(a, ThrowIn)]
        first = gives[0]
        second = next(a for a in gives if a.to != first.to and a.card != first.card)
        t.game.apply(first)
        t.game.apply(second)
    assert ThrowIn() in t.game.legal_actions()
    return decl


def test_all_pass_gives_the_last_hand_the_talon_at_40():
    t = table(rules("1001"), BASE, BASE_TALON)
    D = t.D
    t.act("F: pass", "S: pass")
    g = t.game
    assert g.phase == Phase.PASSING
    assert g.to_act == D
    v = t.view(D)
    assert v.declarer == D and v.bid == 40
    assert len(v.hand) == 10
    reach_throw_in(t)
    # he may also play at 40 or raise
    contracts = {a.amount for a in g.legal_actions() if isinstance(a, Contract)}
    assert 40 in contracts and 45 in contracts


def test_throw_in_after_all_pass_scores_50_each_other_player():
    t = table(rules("1001"), BASE, BASE_TALON)
    F, S, D = t.F, t.S, t.D
    t.act("F: pass", "S: pass")
    reach_throw_in(t)
    t.act("throw-in")
    g = t.game
    assert g.scores[F] == 50 and g.scores[S] == 50 and g.scores[D] == 0
    assert g.deal_number == 1
    assert g.deal_results[0].outcome == "thrown_in"


@pytest.mark.parametrize("gives", [0, 1, 2])
def test_the_last_hand_may_throw_in_as_soon_as_he_has_seen_the_talon(gives: int) -> None:
    """RULES.md: after an all-pass the last hand "takes the talon at the opening bid and may
    play, raise the contract, or throw in"; the 1001 text has him throw his cards in
    "having looked at the cards" (просмотрев карты). Nothing makes him pass two cards
    first: he may throw in before, between or after his gives, scored the same."""
    t = table(rules("1001"), BASE, BASE_TALON)
    F, S, D = t.F, t.S, t.D
    t.act("F: pass", "S: pass")
    g = t.game
    assert g.phase is Phase.PASSING and ThrowIn() in g.legal_actions()
    assert g.legal_actions()[-1] == ThrowIn(), "listed after the gives"
    for _ in range(gives):
        g.apply(next(a for a in g.legal_actions() if isinstance(a, Give)), seat=D)
        assert ThrowIn() in g.legal_actions()
    t.act("throw-in")
    assert g.scores[F] == 50 and g.scores[S] == 50 and g.scores[D] == 0
    assert g.deal_results[0].outcome == "thrown_in" and len(g.gives) == 0  # (a new deal)
    replayed = replay(g.record())
    assert replayed.scores == g.scores and replayed.deal_results == g.deal_results


def test_throw_in_without_all_pass_refused():
    t = table(rules("1001"), BASE, BASE_TALON)
    t.act("F: bid 40", "S: pass", "D: pass", "give A♣ to {S}", "give K♦ to {D}")
    assert ThrowIn() not in t.game.legal_actions()
    assert_refused(t.game, ThrowIn(), error=ThrowInError)
    assert_refused(table(rules("1001"), BASE, BASE_TALON).game, ThrowIn())


def test_throw_in_not_in_classic():
    t = table(rules(), BASE, BASE_TALON)
    t.act("S: pass", "D: pass", "give A♣ to {S}", "give K♦ to {D}")
    assert ThrowIn() not in t.game.legal_actions()
    assert_refused(t.game, ThrowIn())


def test_declarer_concede_costs_the_bid_others_nothing():
    t = table(rules("1001"), BASE, BASE_TALON)
    F, S, D = t.F, t.S, t.D
    t.act("F: bid 40", "S: bid 45", "D: pass", "F: pass")
    t.act("S: give 9♠ to {F}", "S: give 9♣ to {D}")
    assert Concede() in t.game.legal_actions()
    t.act("S: concede")
    assert t.game.scores[S] == -45
    assert t.game.scores[F] == 0 and t.game.scores[D] == 0


def test_opponent_takes_rounded_to_5_22_down():
    # F: 98 card points >= 60: +60. S: 22 -> 20. D: 0.
    t = table(rules("1001"), R, R_TALON)
    F, S, D = t.F, t.S, t.D
    t.act(*R_START, "F: contract 60", *R22)
    res = t.game.deal_results[0]
    assert res.card_points[S] == 22 and res.card_points[F] == 98 and res.card_points[D] == 0
    assert t.game.scores[S] == 20
    assert t.game.scores[F] == 60
    assert t.game.scores[D] == 0


def test_opponent_takes_rounded_to_5_23_up():
    t = table(rules("1001"), R, R_TALON)
    F, S = t.F, t.S
    t.act(*R_START, "F: contract 60", *R23)
    assert t.game.deal_results[0].card_points[S] == 23
    assert t.game.scores[S] == 25
    assert t.game.scores[F] == 60


def test_no_rounding_in_classic():
    t = table(rules(first_hand_commits=False, opening_bid=40, all_pass="last_hand"), R, R_TALON)
    S = t.S
    t.act(*R_START, "F: contract 60", *R22)
    assert t.game.scores[S] == 22


def test_no_barrel_in_1001():
    probe = table(rules("1001"))
    scores = [0, 0, 0]
    scores[probe.S] = 870
    t = table(rules("1001"), R, R_TALON, scores=scores)
    S = t.S
    t.act(*R_START, "F: contract 60", *R22)
    assert t.game.scores[S] == 890
    assert t.view(S).barrel is None


def test_1001_target():
    probe = table(rules("1001"))
    scores = [0, 0, 0]
    scores[probe.F] = 940
    t = table(rules("1001"), R, R_TALON, scores=scores)
    F = t.F
    t.act(*R_START, "F: contract 60", *R22)
    assert t.game.scores[F] == 1000
    assert not t.game.is_over, "1000 is not 1001"
    scores[probe.F] = 941
    t = table(rules("1001"), R, R_TALON, scores=scores)
    t.act(*R_START, "F: contract 60", *R22)
    assert t.game.is_over and t.game.result.winner == F


# --- 4 players ------------------------------------------------------------------------------

Q4_NINES = {
    "F": "A♠ 10♠ K♠ Q♠ J♠ A♣ 10♣",
    "S": "K♣ Q♣ J♣ 9♣ A♦ 10♦ K♦",
    "L": "Q♦ J♦ A♥ 10♥ K♥ Q♥ J♥",
}
Q4_NINES_TALON = "9♠ 9♦ 9♥"
Q4 = {
    "F": "A♠ 10♠ Q♠ 9♣ A♣ 10♣ 9♦",
    "S": "K♣ Q♣ J♣ 9♥ A♦ 10♦ K♦",
    "L": "Q♦ J♦ A♥ 10♥ K♥ Q♥ J♥",
}
Q4_TALON = "K♠ J♠ 9♠"  # 4 + 2 + 0 = 6 card points


def test_4p_dealer_sits_out():
    t = table(rules("1001-4p"), Q4, Q4_TALON)
    g = t.game
    D = t.D
    assert t.view(D).hand == ()
    assert D not in t.view(D).active_seats
    assert g.to_act == t.F
    assert t.view(D).legal_actions == ()
    t.act("F: bid 40", "S: pass", "L: pass")
    assert g.to_act == t.F and g.phase == Phase.PASSING
    targets = {a.to for a in g.legal_actions()}
    assert targets == {t.S, t.L}, "cards go to the two active opponents, not the dealer"
    assert_refused(g, t.action("give A♠ to {D}")[1])


def test_4p_throw_in_and_three_nines_for_the_dealer():
    t = table(rules("1001-4p"), Q4_NINES, Q4_NINES_TALON)
    F, S, L, D = t.F, t.S, t.L, t.D
    t.act("F: pass", "S: pass")
    assert t.game.to_act == L
    assert t.view(L).declarer == L and t.view(L).bid == 40
    reach_throw_in(t)
    t.act("throw-in")
    g = t.game
    assert g.scores[F] == 50 and g.scores[S] == 50 and g.scores[L] == 0
    assert g.scores[D] == 100


def test_4p_dealer_scores_talon_card_points_on_a_concession():
    t = table(rules("1001-4p"), Q4, Q4_TALON)
    F, S, L, D = t.F, t.S, t.L, t.D
    t.act("F: bid 40", "S: pass", "L: pass", "give 9♦ to {S}", "give 9♣ to {L}", "concede")
    g = t.game
    assert g.scores[F] == -40
    assert g.scores[S] == 0 and g.scores[L] == 0
    assert g.scores[D] == 6, "talon card points, not rounded to 5"


def test_4p_dealer_scores_talon_on_a_played_deal():
    t = table(rules("1001-4p"), Q4, Q4_TALON)
    D = t.D
    t.act("F: bid 40", "S: pass", "L: pass", "give 9♦ to {S}", "give 9♣ to {L}", "contract 40")
    t.finish_deal()
    g = t.game
    assert g.scores[D] == 6
    res = g.deal_results[0]
    assert (
        sum(res.card_points) == 120 + 6
        or sum(res.card_points[s] for s in range(4) if s != D) == 120
    )
    assert g.deal_number == 1
    assert g.dealer == (D + 1) % 4
