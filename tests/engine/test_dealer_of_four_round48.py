"""The 4-player dealer, who sits the deal out, acting (a hostile client naming his seat, an
edited record) is told why he may not, not only whose turn it is."""

from __future__ import annotations

import pytest

from engine import Game, NotYourTurnError, ReplayError, record, replay
from engine.actions import Pass


def test_the_dealer_of_four_acting_is_told_he_sits_the_deal_out() -> None:
    g = Game.new("1001-4p", seed=1, players=["a", "b", "c", "d"])
    with pytest.raises(NotYourTurnError) as e:
        g.apply(Pass(), seat=g.dealer)
    assert f"(seat {g.dealer} deals this deal and sits it out)" in str(e.value)
    other = next(s for s in g.active_seats if s != g.to_act)
    with pytest.raises(NotYourTurnError) as e:  # a seat dealt in is told only the turn
        g.apply(Pass(), seat=other)
    assert "sits it out" not in str(e.value)


def test_an_edited_record_in_which_the_dealer_of_four_acts_names_the_rule() -> None:
    g = Game.new("1001-4p", seed=1, players=["a", "b", "c", "d"])
    g.apply(Pass(), seat=g.to_act)
    rec = record(g)
    first = rec["deals"][0]["actions"][0]
    assert first["seat"] == g.active_seats[0]
    first["seat"] = g.dealer  # the edit: the dealer made the first bid
    with pytest.raises(ReplayError, match="deals this deal and sits it out"):
        replay(rec)
