"""RULES.md §5 (contract) and §6 (concede, "роспись") with the concede / concede_pays options."""

from __future__ import annotations

import pytest

from engine import Phase
from engine.actions import Concede, Contract
from engine.rules import RulesetError

from .conftest import assert_refused, rules, table
from .test_rules_bidding import BASE, BASE_TALON


def at_contract(bidding=("S: pass", "D: pass"), gives=None, **overrides):
    t = table(rules(**overrides), BASE, BASE_TALON)
    t.act(*bidding)
    decl = t.game.to_act
    if gives is None:
        others = [s for s in range(3) if s != decl]
        # give away two cards that are no marriage partners
        hand = [c for c in t.view(decl).hand if c.rank not in (2, 3)]
        t.game.apply(t.action(f"give {hand[0]} to {others[0]}")[1])
        t.game.apply(t.action(f"give {hand[1]} to {others[1]}")[1])
    else:
        t.act(*gives)
    assert t.game.phase == Phase.CONTRACT
    return t


def contracts(game) -> set[int]:
    return {a.amount for a in game.legal_actions() if isinstance(a, Contract)}


def test_contract_range_with_a_marriage_in_hand():
    # F keeps K♥ Q♥: at most 120 + 100
    t = at_contract(gives=("give A♣ to {S}", "give K♦ to {D}"))
    assert contracts(t.game) == set(range(100, 221, 5))
    assert Concede() in t.game.legal_actions()


def test_contract_cap_counts_the_8_cards_after_passing():
    # F gave Q♥ away: no marriage left, at most 120
    t = at_contract(gives=("give Q♥ to {S}", "give K♦ to {D}"))
    assert contracts(t.game) == {100, 105, 110, 115, 120}
    assert_refused(t.game, "contract 125")


def test_contract_cap_is_at_least_the_bid():
    # F won the bidding at 130 with the ♥ marriage, then passed the Q♥ away: exactly 130
    t = at_contract(
        bidding=("S: bid 105", "D: pass", "F: bid 130", "S: pass"),
        gives=("give Q♥ to {S}", "give K♦ to {D}"),
    )
    assert contracts(t.game) == {130}


def test_contract_below_the_winning_bid_refused():
    t = at_contract(bidding=("S: bid 105", "D: pass", "F: bid 115", "S: pass"))
    assert min(contracts(t.game)) == 115
    assert_refused(t.game, "contract 110")
    assert_refused(t.game, "contract 100")


def test_contract_off_the_step_or_over_the_cap_refused():
    t = at_contract(gives=("give A♣ to {S}", "give K♦ to {D}"))
    assert_refused(t.game, "contract 121")
    assert_refused(t.game, "contract 225")


def test_contracts_are_multiples_of_5_whatever_the_bid_step():
    """RULES.md §5: "a multiple of 5" — the bid step is the auction's (§2). With a step of
    25 the declarer may still name 105 or 120 (the contract a barrel sitter needs) and his
    cap, 220; a contract off 5 is refused, naming the rule."""
    t = at_contract(gives=("give A♣ to {S}", "give K♦ to {D}"), bid_step=25)
    assert contracts(t.game) == set(range(100, 221, 5))
    err = assert_refused(t.game, "contract 121")
    assert "must be a multiple of 5" in str(err)


@pytest.mark.parametrize("step", [1, 4, 7, 12])
def test_a_bid_step_off_5_is_refused(step: int) -> None:
    """RULES.md §2: a raise is "a multiple of 5" and bids are multiples of the step, so a
    step off 5 is no ruleset (it let a bid, and so a contract, of 104 through)."""
    with pytest.raises(RulesetError, match="bid_step: must be a multiple of 5"):
        rules(bid_step=step, opening_bid=100 - 100 % step)


def test_contract_then_declarer_leads():
    t = at_contract()
    F = t.F
    t.act("F: contract 120")
    assert t.game.phase == Phase.PLAYING
    assert t.game.to_act == F
    assert t.view(F).contract == 120


def conceded(bidding=("S: pass", "D: pass"), **overrides):
    t = at_contract(bidding=bidding, **overrides)
    decl = t.game.to_act
    t.act("concede")
    return t, decl


def test_concede_free_half_to_each_opponent():
    t, decl = conceded()
    scores = t.game.scores
    assert scores[decl] == 0
    assert sorted(scores[s] for s in range(3) if s != decl) == [50, 50]
    assert t.game.deal_number == 1
    assert t.game.phase == Phase.BIDDING
    res = t.game.deal_results[0]
    assert res.declarer == decl and res.bid == 100


def test_concede_120_free_gives_60_each_and_0_to_the_declarer():
    t, decl = conceded(bidding=("S: bid 120", "D: pass", "F: pass"))
    assert decl == (t.game.dealer + 1) % 3  # the old second hand is the new first hand
    assert t.game.scores[decl] == 0
    assert [t.game.scores[s] for s in range(3) if s != decl] == [60, 60]


def test_concede_120_penalty_costs_the_declarer_the_bid():
    t, decl = conceded(bidding=("S: bid 120", "D: pass", "F: pass"), concede="penalty")
    assert t.game.scores[decl] == -120
    assert [t.game.scores[s] for s in range(3) if s != decl] == [60, 60]


def test_concede_pays_none():
    t, _decl = conceded(concede_pays="none")
    assert t.game.scores == (0, 0, 0)
    t2, decl2 = conceded(concede_pays="none", concede="penalty")
    assert t2.game.scores[decl2] == -100
    assert [t2.game.scores[s] for s in range(3) if s != decl2] == [0, 0]


def test_concede_halves_round_half_up():
    # 105 / 2 = 52.5 -> 53 under rounding 1
    t, decl = conceded(bidding=("S: bid 105", "D: pass", "F: pass"))
    assert [t.game.scores[s] for s in range(3) if s != decl] == [53, 53]
    assert t.game.scores[decl] == 0


def test_concede_halves_round_to_the_rounding_unit():
    # 115 / 2 = 57.5 -> 60 with rounding 5 (2.5 and above up); 110 / 2 = 55 stays
    t, decl = conceded(bidding=("S: bid 115", "D: pass", "F: pass"), rounding=5)
    assert [t.game.scores[s] for s in range(3) if s != decl] == [60, 60]
    t, decl = conceded(bidding=("S: bid 110", "D: pass", "F: pass"), rounding=5)
    assert [t.game.scores[s] for s in range(3) if s != decl] == [55, 55]


def test_concede_off_refused():
    t = at_contract(concede="off")
    assert Concede() not in t.game.legal_actions()
    assert_refused(t.game, Concede())


@pytest.mark.parametrize("phase_actions", [(), ("S: pass", "D: pass")])
def test_concede_outside_the_contract_phase_refused(phase_actions):
    t = table(rules(), BASE, BASE_TALON)
    t.act(*phase_actions)
    assert_refused(t.game, Concede())


def test_contract_once_only():
    t = at_contract()
    t.act("contract 100")
    assert_refused(t.game, "contract 105")
    assert_refused(t.game, Concede())
