"""RULES.md "Bad input is part of the rules": each kind of refusal, its type, message, no change.

``assert_refused`` (conftest) checks the error type, that ``action``/``rule``/``legal`` are set
and named in the message, and that record(), every seat's observe(), legal_actions, phase,
to_act and scores are exactly as before.
"""

from __future__ import annotations

import pytest

from engine import IllegalActionError, NotYourTurnError
from engine.actions import Bid, Contract, Give, Pass, Play
from engine.cards import Card
from engine.errors import (
    AlreadyPassedError,
    BidError,
    CardNotHeldError,
    ConcedeError,
    ContractError,
    GameOverError,
    GiveError,
    MarriageError,
    NotAnActionError,
    PlayError,
    WrongPhaseError,
)

from .conftest import assert_refused, rules, snapshot, table
from .test_rules_bidding import BASE, BASE_TALON
from .test_rules_marriages import H_TALON, H


def bidding(**o):
    return table(rules(**o), BASE, BASE_TALON)


def passing(**o):
    return bidding(**o).act("S: pass", "D: pass")


def contract(**o):
    return passing(**o).act("give K♦ to {S}", "give 10♦ to {D}")


def playing(**o):
    return contract(**o).act("contract 100")


@pytest.mark.parametrize(
    "stage, action",
    [
        (bidding, Play(Card.SA)),
        (bidding, Give(Card.SA, 0)),
        (bidding, Contract(100)),
        (passing, Bid(105)),
        (passing, Play(Card.SA)),
        (passing, Contract(100)),
        (contract, Pass()),
        (contract, Give(Card.SA, 1)),
        (contract, Play(Card.SA)),
        (playing, Bid(105)),
        (playing, Contract(120)),
        (playing, Give(Card.SA, 1)),
    ],
)
def test_wrong_phase(stage, action):
    assert_refused(stage().game, action, error=WrongPhaseError)


@pytest.mark.parametrize("stage", [bidding, passing, contract, playing])
def test_wrong_player(stage):
    t = stage()
    g = t.game
    legal = g.legal_actions()[0]
    for seat in range(3):
        if seat != g.to_act:
            assert_refused(g, legal, seat=seat, error=NotYourTurnError)


def test_bid_after_passing():
    t = bidding()
    S = t.S
    t.act("S: pass", "D: bid 105")
    err = assert_refused(t.game, Bid(110), seat=S, error=AlreadyPassedError)
    assert isinstance(err, NotYourTurnError) and isinstance(err, BidError)


@pytest.mark.parametrize("amount", [107, 165, 100, 95])
def test_bid_off_step_over_cap_below_minimum(amount):
    assert_refused(bidding().game, Bid(amount), error=BidError)


def test_card_not_held():
    t = passing()
    assert_refused(t.game, t.action("give 9♠ to {S}")[1], error=CardNotHeldError)
    t = playing()
    assert_refused(t.game, "play 9♠", error=CardNotHeldError)
    # a card he gave away
    assert_refused(t.game, "play K♦", error=CardNotHeldError)


def test_second_card_to_the_same_opponent():
    t = passing()
    t.act("give A♣ to {S}")
    assert_refused(t.game, t.action("give K♣ to {S}")[1], error=GiveError)


def test_give_to_himself():
    t = passing()
    assert_refused(t.game, t.action("give A♣ to {F}")[1], error=GiveError)


def test_illegal_card_in_a_trick():
    t = playing()
    t.act("F: play K♥", "S: play 9♣")
    # D holds ♥: any other suit is refused
    assert_refused(t.game, "play 9♦", error=PlayError)


def test_marriage_before_a_won_trick():
    t = table(rules(), H, H_TALON)
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give J♦ to {D}", "contract 100")
    err = assert_refused(t.game, "play Q♥ declare", error=MarriageError)
    assert "trick" in err.rule


def test_marriage_without_partner():
    t = table(rules(), H, H_TALON)
    t.act("S: pass", "D: pass", "give Q♥ to {S}", "give J♦ to {D}", "contract 100")
    t.act("F: play A♠", "S: play 9♠", "D: play K♣")
    assert_refused(t.game, "play K♥ declare", error=MarriageError)


def test_contract_below_the_bid():
    t = bidding().act("S: bid 110", "D: pass", "F: pass")
    t.act("S: give 9♠ to {F}", "S: give 9♣ to {D}")
    assert_refused(t.game, "contract 105", error=ContractError)
    assert_refused(t.game, "contract 112", error=ContractError)
    # S keeps K♠ Q♠: cap 160
    assert_refused(t.game, "contract 165", error=ContractError)


def test_concede_off():
    assert_refused(contract(concede="off").game, "concede", error=ConcedeError)


def test_game_over():
    t = table(rules(max_deals=1))
    t.act("S: pass", "D: pass")
    gives = t.game.legal_actions()
    t.game.apply(gives[0])
    t.game.apply(next(a for a in t.game.legal_actions() if a.to != gives[0].to))
    t.act("concede")
    assert t.game.is_over
    assert_refused(t.game, "pass", error=GameOverError)


@pytest.mark.parametrize("junk", ["pass", None, 42, Play(99)])  # type: ignore[arg-type]
def test_not_an_action(junk):
    g = playing().game
    before = snapshot(g)
    with pytest.raises(IllegalActionError) as info:
        g.apply(junk)
    assert isinstance(info.value, NotAnActionError)
    assert snapshot(g) == before


def test_refusal_message_shape():
    g = bidding().game
    with pytest.raises(BidError) as info:
        g.apply(Bid(107))
    msg = str(info.value)
    assert "bid 107" in msg
    assert "bid 105" in msg and "pass" in msg
    assert info.value.seat == g.to_act


@pytest.mark.parametrize(
    ("preset", "expected"), [("classic", "Contract/Concede"), ("1001", "Contract/ThrowIn")]
)
def test_a_wrong_kind_names_the_kinds_this_ruleset_allows_now(preset: str, expected: str) -> None:
    """Defect (hostile round 25): a Play in classic's contract phase was told "expected
    Contract/Concede/ThrowIn", though classic has no throw-in (and 1001 no concession)."""
    from engine import Game, Phase

    g = Game.new(preset, seed=3, players=["a", "b", "c"])
    while g.phase is not Phase.CONTRACT:
        legal = g.legal_actions()
        g.apply(legal[-1] if g.phase is Phase.BIDDING else legal[0])
    with pytest.raises(WrongPhaseError) as e:
        g.apply(Play(next(iter(Card))))
    assert f"not allowed in the contract phase (expected {expected}); legal: " in str(e.value)
