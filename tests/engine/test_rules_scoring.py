"""RULES.md §10 (scoring a deal) and the end of the match (places, shortfalls, max_deals)."""

from __future__ import annotations

from engine import Phase
from engine.errors import GameOverError, IllegalActionError

from .conftest import assert_refused, rules, table

# Deal M (hand-checked): F makes exactly 80 card points and declares the ♠ marriage.
M = {
    "F": "A♥ 10♥ A♣ 10♣ K♠ Q♠ 9♦",
    "S": "9♥ J♥ Q♥ K♥ 9♣ J♣ Q♣",
    "D": "A♠ 10♠ J♠ 9♠ K♣ J♦ Q♦",
}
M_TALON = "A♦ 10♦ K♦"


def m_plays(declare: bool) -> list[str]:
    k = "play K♠ declare" if declare else "play K♠"
    return [
        "F: play A♥", "S: play K♥", "D: play J♠",    # F 11+4+2  = 17
        "F: play A♦", "S: play 9♦", "D: play K♦",    # F 11+0+4  = 15
        "F: play 10♦", "S: play Q♥", "D: play Q♦",   # F 10+3+3  = 16
        "F: play A♣", "S: play J♣", "D: play K♣",    # F 11+2+4  = 17
        "F: play 10♣", "S: play Q♣", "D: play J♦",   # F 10+3+2  = 15  -> F 80
        f"F: {k}", "S: play 9♣", "D: play A♠",       # D 4+0+11  = 15 (A♠ beats K♠)
        "D: play 10♠", "F: play Q♠", "S: play J♥",   # D 10+3+2  = 15
        "D: play 9♠", "F: play 10♥", "S: play 9♥",   # D 0+10+0  = 10  -> D 40, S 0
    ]  # fmt: skip


def deal_m(contract: int, declare: bool, scores=None, **overrides):
    t = table(rules(**overrides), M, M_TALON, scores=scores)
    roles = (t.F, t.S, t.D)
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give K♦ to {D}", f"contract {contract}")
    t.act(*m_plays(declare))
    return t, roles


def test_80_card_points_and_a_spade_marriage_make_120():
    # take = 80 + 40 = 120 >= 120: +120; D scores his 40 card points, S took nothing
    t, (F, S, D) = deal_m(120, declare=True)
    res = t.game.deal_results[0]
    assert res.card_points[F] == 80
    assert res.card_points[D] == 40
    assert res.card_points[S] == 0
    assert res.marriage_points[F] == 40
    assert res.outcome == "made"
    assert res.contract == 120
    assert t.game.scores[F] == 120
    assert t.game.scores[D] == 40
    assert t.game.scores[S] == 0
    assert t.game.deal_number == 1


def test_declarer_scores_the_contract_never_more():
    t, (F, _S, _D) = deal_m(100, declare=True)
    assert t.game.scores[F] == 100


def test_missed_contract_subtracts_it_even_below_zero():
    # without declaring, F takes 80 < 120: -120 from 0
    t, (F, S, D) = deal_m(120, declare=False)
    res = t.game.deal_results[0]
    assert res.outcome == "failed"
    assert t.game.scores[F] == -120
    assert t.game.scores[D] == 40
    assert t.game.scores[S] == 0


def test_missed_contract_from_a_positive_score():
    t, (F, S, D) = deal_m(120, declare=False, scores=(200, 200, 200))
    assert t.game.deal_results[0].deltas[F] == -120
    assert t.game.scores[F] == 80 and t.game.scores[D] == 240 and t.game.scores[S] == 200


def test_record_holds_deltas_and_scores():
    t, (F, S, D) = deal_m(120, declare=True)
    rec = t.game.record()
    d0 = rec["deals"][0]
    assert d0["deltas"][F] == 120 and d0["deltas"][D] == 40 and d0["deltas"][S] == 0
    assert d0["scores"] == list(t.game.scores) or tuple(d0["scores"]) == t.game.scores


def test_opponent_takes_rounded_to_the_rounding_unit():
    # D's 40 stays 40 under rounding 5 and 10 too (a multiple); 40 under rounding 15 -> 45
    t, (F, _S, D) = deal_m(120, declare=True, rounding=15)
    assert t.game.scores[D] == 45
    assert t.game.scores[F] == 120


# --- the end of the match ------------------------------------------------------------------


def concede_deal(t, declarer: str = "F") -> int:
    """Play a deal out as a concession by the given role; returns the declarer's seat."""
    bidding = {
        "F": ("S: pass", "D: pass"),
        "S": ("S: bid 105", "D: pass", "F: pass"),
        "D": ("S: pass", "D: bid 105", "F: pass"),
    }[declarer]
    t.act(*bidding)
    seat = t.game.to_act
    gives = [a for a in t.game.legal_actions()]
    first = gives[0]
    second = next(a for a in gives if a.to != first.to and a.card != first.card)
    t.game.apply(first)
    t.game.apply(second)
    t.act("concede")
    return seat


def test_equal_scores_share_a_place():
    t = table(rules(max_deals=1))
    decl = concede_deal(t, "F")
    g = t.game
    assert g.is_over and g.phase == Phase.GAME_OVER
    places = list(g.result.places)
    assert places[decl] == 3
    assert sorted(places) == [1, 1, 3]


def test_max_deals_cap_decides_places_by_standings():
    t = table(rules(max_deals=2))
    a, b, c = t.F, t.S, t.D
    concede_deal(t, "F")  # a 0, b 50, c 50
    assert not t.game.is_over
    assert t.game.deal_number == 1
    concede_deal(t, "S")  # new S is c: c concedes 105 -> a, b + 53
    g = t.game
    assert g.scores[a] == 53 and g.scores[b] == 103 and g.scores[c] == 50
    assert g.is_over
    r = g.result
    assert r.places[b] == 1 and r.places[a] == 2 and r.places[c] == 3
    assert r.winner == b
    assert r.deals == 2
    assert g.legal_actions() == ()
    assert_refused(g, "pass", error=GameOverError)


def test_several_reaching_the_target_the_highest_wins():
    t = table(rules(barrel=False), scores=None)
    a, b, c = t.F, t.S, t.D
    scores = [0, 0, 0]
    scores[a], scores[b], scores[c] = 990, 960, 980
    t = table(rules(barrel=False), scores=scores)
    concede_deal(t, "F")  # b 1010, c 1030
    g = t.game
    assert g.is_over
    r = g.result
    assert r.winner == c
    assert r.places[c] == 1 and r.places[b] == 2 and r.places[a] == 3
    assert r.shortfalls[c] == 0
    assert r.shortfalls[a] == 1000 - g.scores[a]


def test_no_action_after_the_end():
    t = table(rules(max_deals=1))
    concede_deal(t, "F")
    for text in ("bid 105", "pass", "contract 100", "play A♠"):
        try:
            t.game.apply(t.action(text)[1])
        except IllegalActionError as e:
            assert isinstance(e, GameOverError)
        else:
            raise AssertionError(f"{text} accepted after the end")
