"""Round 47: ``Game.tricks`` makes each completed ``Trick`` once, when first asked for, and
keeps it for the rest of the deal; ``Game.auction`` (a view's ``bids``) adds each bid or
pass to the tuple it keeps. Asked at every step, across deals and in clones that go their
own way, each must be what a game asked only once, at that step, gives."""

from __future__ import annotations

import dataclasses
import random

import pytest

from engine import PRESETS, Bid, Game, Pass


def _same_as_fresh(g: Game, fresh: Game) -> None:
    assert g.tricks == fresh.tricks
    assert g.auction() == fresh.auction()
    assert g.auction() == tuple((s, a) for s, a in g.actions if isinstance(a, Bid | Pass))


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_tricks_asked_at_every_step_are_those_of_a_game_asked_once(preset: str) -> None:
    rules = dataclasses.replace(PRESETS[preset], max_deals=4)
    names = [f"p{i}" for i in range(rules.players)]
    for seed in range(3):
        g = Game.new(rules, seed, names)
        rng = random.Random(seed)
        played: list[object] = []
        clones: list[tuple[Game, int]] = []
        deals_with_tricks = 0
        while not g.is_over:
            fresh = Game.new(rules, seed, names)
            for a in played:
                fresh.apply_trusted(a)  # type: ignore[arg-type]
            _same_as_fresh(g, fresh)
            deals_with_tricks += bool(g.tricks and g.auction()) and g.deal_number > 0
            if rng.random() < 0.1:
                clones.append((g.clone(), len(played)))
            a = rng.choice(g.legal_actions())
            played.append(a)
            g.apply_trusted(a)
        assert deals_with_tricks  # a later deal's tricks, after a deal's memo
        # Clones taken along the way, played on their own way to the end.
        for c, k in clones:
            own = random.Random(k)
            mine = list(played[:k])
            while not c.is_over:
                fresh = Game.new(rules, seed, names)
                for a in mine:
                    fresh.apply_trusted(a)  # type: ignore[arg-type]
                _same_as_fresh(c, fresh)
                a = own.choice(c.legal_actions())
                mine.append(a)
                c.apply_trusted(a)
