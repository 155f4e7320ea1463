"""Round 52: a bid or contract over the cap of a hand holding the four aces, under a ruleset
whose aces add nothing to it, says why: "above 120 + the marriages in his own hand (220)"
alone read as a miscount to an author of the preset's 420 (the ace marriage, 200, counts
there: ``ace_marriage_counts_for_bid``, ``ace_marriage``)."""

from __future__ import annotations

import dataclasses

import pytest

from engine import (
    BidError,
    ContractError,
    Game,
    IllegalActionError,
    load_ruleset,
    parse_action,
    parse_cards,
)

#: Seat 0 (first hand; dealer 2) holds the four aces and K♥ Q♥: 420 where the aces count.
HANDS = [parse_cards("A♠ A♣ A♦ A♥ K♥ Q♥ 9♠"), parse_cards("10♠ K♠ Q♠ J♠ 10♣ K♣ Q♣"),
         parse_cards("J♣ 9♣ 10♦ K♦ Q♦ J♦ 9♦")]  # fmt: skip
TALON = parse_cards("10♥ J♥ 9♥")


def _game(**options: object) -> Game:
    rules = dataclasses.replace(load_ruleset("classic"), **options)
    return Game.new(rules, 1, ["a", "b", "c"], deals={0: (HANDS, TALON)}, dealer=2)


def _refused(game: Game, text: str, seat: int) -> IllegalActionError:
    with pytest.raises(IllegalActionError) as e:
        game.apply(parse_action(text), seat=seat)
    return e.value


@pytest.mark.parametrize(
    ("options", "why"),
    [({"ace_marriage_counts_for_bid": False}, "ace_marriage_counts_for_bid = false"),
     ({"ace_marriage": False}, "ace_marriage = false")],
)  # fmt: skip
def test_the_cap_says_the_four_aces_do_not_count(options: dict[str, bool], why: str) -> None:
    game = _game(**options)
    game.apply(parse_action("bid 105"), seat=1)
    game.apply(parse_action("pass"), seat=2)
    err = _refused(game, "bid 420", 0)
    assert isinstance(err, BidError)
    assert err.rule == (
        "nobody may bid above 120 + the marriages in his own hand (220): the four aces "
        f"count nothing towards it ({why})"
    )
    game.apply(parse_action("bid 220"), seat=0)
    game.apply(parse_action("pass"), seat=1)
    for text in ("give 9♠ to 1", "give 9♥ to 2"):
        game.apply(parse_action(text), seat=0)
    err = _refused(game, "contract 420", 0)
    assert isinstance(err, ContractError)
    assert err.rule.endswith(
        f"120 + the marriages in hand (220): the four aces count nothing towards it ({why})"
    )


def test_where_the_aces_count_or_are_not_held_the_cap_is_said_as_before() -> None:
    game = _game()
    game.apply(parse_action("bid 105"), seat=1)
    game.apply(parse_action("pass"), seat=2)
    err = _refused(game, "bid 425", 0)
    assert err.rule == "nobody may bid above 120 + the marriages in his own hand (420)"
    game = _game(ace_marriage_counts_for_bid=False)
    game.apply(parse_action("pass"), seat=1)
    err = _refused(game, "bid 205", 2)  # (K♦ Q♦, no ace)
    assert err.rule == "nobody may bid above 120 + the marriages in his own hand (200)"
