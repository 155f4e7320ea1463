"""RULES.md "The barrel and the end": sitting at 880, winning from it, falling off, barrel_mode.

Starting scores come from ``new_game(..., scores=...)`` in conftest (see the HOOK there).
Deal 0 is usually a concession by first hand: the two others get half of 100 = 50 each.
"""

from __future__ import annotations

from engine import Phase

from .conftest import rules, table
from .test_rules_scoring import M_TALON, M, concede_deal, m_plays

# F holds every ace and ten: whatever is played he wins all 8 tricks (120 card points).
STRONG = {
    "F": "A♠ 10♠ A♣ 10♣ A♦ 10♦ A♥",
    "S": "9♠ J♠ Q♠ K♠ 9♣ J♣ Q♣",
    "D": "K♣ 9♦ J♦ Q♦ K♦ 9♥ J♥",
}
STRONG_TALON = "10♥ K♥ Q♥"

# F holds only low cards: with at most 15 points in his ten cards he cannot take 100.
WEAK = {
    "F": "9♠ J♠ Q♠ 9♣ J♣ Q♣ 9♥",
    "S": "A♠ 10♠ K♠ A♣ 10♣ K♣ J♥",
    "D": "A♦ 10♦ K♦ A♥ 10♥ K♥ Q♥",
}
WEAK_TALON = "9♦ J♦ Q♦"


def seats_scores(t, **by_role):
    """Scores by role of deal 0 (F, S, D) as a tuple by seat."""
    out = [0, 0, 0]
    for role, v in by_role.items():
        out[t.seat(role)] = v
    return tuple(out)


def start(first_deals=(), scores_by_role=None, **overrides):
    """A game whose deal 0 is shuffled (or the first of ``first_deals``), scores by role."""
    probe = table(rules(**overrides))
    scores = seats_scores(probe, **(scores_by_role or {}))
    deals = list(first_deals)
    if deals:
        hands, talon = deals[0]
        return table(rules(**overrides), hands, talon, more=deals[1:], scores=scores)
    return table(rules(**overrides), scores=scores)


def play_strong(t, contract: int):
    """Deal with STRONG hands: F (first hand) is declarer and takes all 120 card points."""
    t.act("S: pass", "D: pass", "give K♥ to {S}", "give Q♥ to {D}", f"contract {contract}")
    t.finish_deal()


def play_weak(t, contract: int):
    t.act("S: pass", "D: pass")
    hand = sorted(t.view("F").hand)
    t.act(f"give {hand[0]} to {{S}}", f"give {hand[1]} to {{D}}", f"contract {contract}")
    t.finish_deal()


def onto_barrel(deal1=None, **overrides):
    """Deal 0: F concedes; S goes 850 -> 880 (on the barrel); D 650 -> 700; F stays 450.

    In deal 1 the old S is first hand (F) and deal 1 uses the hands ``deal1``.
    """
    deals = [] if deal1 is None else [deal1]
    probe = table(rules(**overrides))
    scores = seats_scores(probe, F=450, S=850, D=650)
    if deals:
        # deal 0 is shuffled: build it from the seed, give explicit hands to deal 1 only
        g0 = probe.game
        hands0 = [g0.hand(s) for s in range(3)]
        talon0 = g0.talon
        t = table(
            rules(**overrides),
            {s: hands0[s] for s in range(3)},
            talon0,
            more=deals,
            scores=scores,
        )
    else:
        t = table(rules(**overrides), scores=scores)
    x, y, z = t.S, t.D, t.F
    concede_deal(t, "F")
    return t, x, y, z


def test_reaching_880_sits_on_the_barrel():
    t, x, y, z = onto_barrel()
    g = t.game
    assert g.scores[x] == 880, "850 + 50 is set to exactly 880"
    assert g.scores[y] == 700
    assert g.scores[z] == 450
    v = t.view(x)
    assert v.barrel[x] == 3
    assert v.barrel[y] == 0 and v.barrel[z] == 0
    assert g.deal_results[0].barrel[x] == 3


def test_850_plus_45_is_880():
    # deal M with D at 850: D takes 40 card points -> 890 -> 880; opening 90 not needed
    probe = table(rules())
    scores = seats_scores(probe, D=850)
    t = table(rules(), M, M_TALON, scores=scores)
    D = t.D
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give K♦ to {D}", "contract 120")
    t.act(*m_plays(True))
    assert t.game.scores[D] == 880
    assert t.view(D).barrel[D] == 3


def test_850_plus_45_by_concession_is_880():
    # opening bid 90: first hand concedes at 90, each other player gets 45; 850 + 45 = 895 -> 880
    probe = table(rules(opening_bid=90))
    scores = seats_scores(probe, S=850)
    t = table(rules(opening_bid=90), scores=scores)
    S, D = t.S, t.D
    concede_deal(t, "F")
    assert t.game.scores[S] == 880
    assert t.game.scores[D] == 45


def test_on_the_barrel_a_made_120_wins_the_game():
    t, x, y, z = onto_barrel(deal1=(STRONG, STRONG_TALON))
    assert x == t.F
    play_strong(t, 120)
    g = t.game
    assert g.is_over and g.phase == Phase.GAME_OVER
    assert g.scores[x] == 1000
    assert g.scores[y] == 700 and g.scores[z] == 450
    r = g.result
    assert r.winner == x
    assert r.places[x] == 1 and r.places[y] == 2 and r.places[z] == 3
    assert r.shortfalls[x] == 0 and r.shortfalls[y] == 300 and r.shortfalls[z] == 550
    rec = g.record()
    assert rec["result"]["shortfalls"] == list(r.shortfalls)
    assert rec["result"]["winner"] == x


def test_on_the_barrel_a_made_contract_below_120_scores_nothing():
    t, x, _y, _z = onto_barrel(deal1=(STRONG, STRONG_TALON))
    play_strong(t, 115)
    g = t.game
    assert not g.is_over
    assert g.scores[x] == 880
    assert g.deal_results[1].deltas[x] == 0
    assert t.view(x).barrel[x] == 2


def test_failing_on_the_barrel_costs_the_contract_and_drops_off():
    t, x, _y, _z = onto_barrel(deal1=(WEAK, WEAK_TALON))
    play_weak(t, 100)
    g = t.game
    assert g.deal_results[1].outcome == "failed"
    assert g.scores[x] == 780
    assert t.view(x).barrel[x] == 0


def test_three_deals_on_the_barrel_without_a_win_cost_120():
    t, x, _y, _z = onto_barrel()
    # deals 1-3: someone other than x concedes; halves paid to the sitter are not scored
    for k in (1, 2, 3):
        role = "S" if x == t.F else "F"
        assert t.seat(role) != x
        concede_deal(t, role)
        if k < 3:
            assert t.game.scores[x] == 880
            assert t.view(x).barrel[x] == 3 - k
    assert t.game.scores[x] == 760
    assert t.view(x).barrel[x] == 0


def test_halves_paid_to_a_sitter_are_not_scored():
    t, x, y, z = onto_barrel()
    # deal 1: F is x; S (= y) bids 105 and concedes: z gets 53, x nothing
    assert y == t.S
    concede_deal(t, "S")
    assert t.game.scores[x] == 880
    assert t.game.scores[z] == 450 + 53
    assert t.game.scores[y] == 700


def remap(texts, mapping):
    """Move a script to other roles: ``{"F": "S", ...}`` renames prefixes and ``{X}`` seats."""
    out = []
    for text in texts:
        role, _, rest = text.partition(": ")
        for a, b in mapping.items():
            rest = rest.replace("{" + a + "}", "{_" + b + "}")
        out.append(mapping[role] + ": " + rest.replace("{_", "{"))
    return out


# deal M moved round the table: M's declarer sits at S, M's D (who takes 40) at F
M_SHIFT = {"F": "S", "S": "D", "D": "F"}
M_SHIFTED = {M_SHIFT[r]: cards for r, cards in M.items()}


def test_sitters_defender_takes_are_not_scored():
    # deal 1 is deal M with the sitter x holding M's D cards: his 40 card points are not scored
    t, x, y, _z = onto_barrel(deal1=(M_SHIFTED, M_TALON))
    assert x == t.F
    t.act("S: bid 105", "D: pass", "F: pass")
    t.act(*remap(["F: give 9♦ to {S}", "F: give K♦ to {D}", "F: contract 120"], M_SHIFT))
    t.act(*remap(m_plays(True), M_SHIFT))
    g = t.game
    res = g.deal_results[1]
    assert res.card_points[x] == 40
    assert res.outcome == "made"
    assert g.scores[x] == 880
    assert g.scores[y] == 700 + 120


def test_free_concession_by_a_sitter_leaves_him_sitting():
    t, x, _y, _z = onto_barrel()
    assert x == t.F
    concede_deal(t, "F")
    assert t.game.scores[x] == 880
    assert t.view(x).barrel[x] == 2


def test_penalty_concession_by_a_sitter_drops_him():
    t, x, _y, _z = onto_barrel(concede="penalty")
    concede_deal(t, "F")
    assert t.game.scores[x] == 780
    assert t.view(x).barrel[x] == 0


def test_barrel_mode_many_two_sitters():
    probe = table(rules())
    scores = seats_scores(probe, F=0, S=850, D=860)
    t = table(rules(), scores=scores)
    S, D = t.S, t.D
    concede_deal(t, "F")
    assert t.game.scores[S] == 880 and t.game.scores[D] == 880
    assert t.view(S).barrel[S] == 3 and t.view(S).barrel[D] == 3


def test_barrel_mode_one_two_reaching_at_once_both_fall():
    probe = table(rules(barrel_mode="one"))
    scores = seats_scores(probe, F=0, S=850, D=860)
    t = table(rules(barrel_mode="one"), scores=scores)
    S, D = t.S, t.D
    concede_deal(t, "F")
    assert t.game.scores[S] == 760 and t.game.scores[D] == 760
    assert t.view(S).barrel[S] == 0 and t.view(S).barrel[D] == 0


def test_barrel_mode_one_newcomer_knocks_the_sitter_off():
    # deal 0: x (S) 850 -> 880 sits; y (D) 800 -> 850. Deal 1: x is first hand and concedes
    # (free: he stays on); y, now S, gets 50 -> 900 -> 880 and knocks x off: x 880 - 120.
    t, x, y, _z = _start_one(F=0, S=850, D=800)
    assert t.game.scores[x] == 880 and t.game.scores[y] == 850
    assert x == t.F and y == t.S
    concede_deal(t, "F")
    g = t.game
    assert g.scores[y] == 880
    assert g.scores[x] == 760
    assert t.view(x).barrel[y] == 3
    assert t.view(x).barrel[x] == 0


def test_barrel_mode_one_a_lone_newcomer_sits():
    t, x, _y, _z = _start_one(F=0, S=850, D=0)
    assert t.game.scores[x] == 880
    assert t.view(x).barrel[x] == 3


def _start_one(**by_role):
    probe = table(rules(barrel_mode="one"))
    scores = seats_scores(probe, **by_role)
    t = table(rules(barrel_mode="one"), scores=scores)
    x, y, z = t.S, t.D, t.F
    concede_deal(t, "F")
    return t, x, y, z


def test_barrel_mode_one_two_newcomers_and_the_sitter_all_fall():
    # deal 0: x (S) 850 -> 880 sits; y (D) 800 -> 850; z (F) concedes, stays 830.
    # deal 1: x (now F) concedes freely; y and z get 50 each and reach 880 together:
    # both fall (-120 from 880) and so does the sitter x.
    t, x, y, z = _start_one(F=830, S=850, D=800)
    assert t.game.scores[x] == 880 and t.game.scores[z] == 830
    assert x == t.F
    concede_deal(t, "F")
    g = t.game
    assert g.scores[y] == 760 and g.scores[z] == 760
    assert g.scores[x] == 760
    assert all(b == 0 for b in t.view(x).barrel)
