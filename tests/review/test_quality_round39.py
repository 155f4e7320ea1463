"""Round 39 (quality): what deleting and merging code must keep.

``Game._refuse`` wrote out again the field-type checks of ``_malformed`` (an amount that is
no int, a card that is no card 0..23, a seat that is no int, a ``declare`` that is no bool),
in the same words; it now calls ``_malformed``. These pin what an action that is not legal
and malformed is told, and that the phase is still judged first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine import (
    Bid,
    Contract,
    Game,
    Give,
    NotAnActionError,
    Pass,
    Phase,
    Play,
    WrongPhaseError,
    load_ruleset,
)


def _game_at(phase: Phase) -> Game:
    """A classic game played by its first legal action (a pass when there is one: the first
    hand takes the talon at 100) until ``phase``."""
    game = Game.new(load_ruleset("classic"), seed=7, players=["a", "b", "c"])
    while game.phase is not phase:
        legal = game.legal_actions()
        game.apply(next((a for a in legal if isinstance(a, Pass)), legal[0]))
    return game


def _held(game: Game) -> Any:
    return game.hand(game.to_act)[0]


CASES: list[tuple[Phase, Callable[[Game], object], str]] = [
    (Phase.BIDDING, lambda g: Bid("x"), "the amount must be an int: 'x'"),  # type: ignore[arg-type]
    (Phase.BIDDING, lambda g: Bid(True), "the amount must be an int: True"),
    (Phase.CONTRACT, lambda g: Contract(12.5), "the amount must be an int: 12.5"),  # type: ignore[arg-type]
    (Phase.PASSING, lambda g: Give(99, 1), "not a card: 99"),  # type: ignore[arg-type]
    (Phase.PASSING, lambda g: Give(True, 1), "not a card: True"),
    (Phase.PASSING, lambda g: Give(_held(g), "1"), "not a seat: '1'"),  # type: ignore[arg-type]
    (Phase.PASSING, lambda g: Give(_held(g), 1.0), "not a seat: 1.0"),  # type: ignore[arg-type]
    (Phase.PLAYING, lambda g: Play(-1), "not a card: -1"),  # type: ignore[arg-type]
    (Phase.PLAYING, lambda g: Play(_held(g), "yes"), "declare must be a bool: 'yes'"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("phase", "make", "rule"), CASES)
def test_a_malformed_action_that_is_not_legal_is_not_an_action_and_says_which_field(
    phase: Phase, make: Callable[[Game], object], rule: str
) -> None:
    game = _game_at(phase)
    before = game.record()
    with pytest.raises(NotAnActionError) as e:
        game.apply(make(game))
    assert type(e.value) is NotAnActionError
    assert e.value.rule == rule
    assert e.value.seat == game.to_act
    assert game.record() == before  # refused: nothing changed


def test_the_phase_is_judged_before_the_fields() -> None:
    """A malformed action of another phase is refused for its phase, as before."""
    game = _game_at(Phase.PLAYING)
    with pytest.raises(WrongPhaseError, match="a Bid is not allowed in the playing phase"):
        game.apply(Bid("x"))  # type: ignore[arg-type]
