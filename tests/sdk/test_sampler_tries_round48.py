"""``Sampler``'s ``max_tries``: how many more draws ``accept`` is asked about."""

from __future__ import annotations

import random

import pytest

from engine import Game, PlayerView, observe
from sdk.sampling import Sampler


def _view() -> PlayerView:
    g = Game.new("classic", seed=3, players=["a", "b", "c"])
    return observe(g, g.to_act)


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3"])
def test_max_tries_that_would_skip_accept_or_is_no_count_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match=r"max_tries must be an integer of at least 1, got"):
        Sampler(_view(), accept=lambda d: True, max_tries=bad)  # type: ignore[arg-type]


def test_accept_is_asked_about_every_draw_up_to_max_tries_then_the_last_is_returned() -> None:
    asked = []

    def never(deal: object) -> bool:
        asked.append(deal)
        return False

    got = Sampler(_view(), accept=never, max_tries=1).sample(random.Random(0))
    assert len(asked) == 1  # the first draw was asked about, and refused
    assert got is not asked[0]  # the one drawn after it is returned
    asked.clear()
    Sampler(_view(), accept=never, max_tries=5).sample(random.Random(0))
    assert len(asked) == 5
