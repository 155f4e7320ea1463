"""Round 55: ``Game.deal_results`` and ``Game.gives`` return the same tuple until a deal is
scored (a card given), as ``tricks`` and ``auction()`` do: every view of the rest of the
deal holds them, and the referee asks for them at every decision. What they hold is what
they held when made anew each time, through deals, passing and clones."""

from __future__ import annotations

import random

from engine import PRESETS, DealResult, Game, load_ruleset
from engine.tables import CARDS


def _fresh_gives(game: Game) -> tuple[object, ...]:
    return tuple((to, CARDS[c]) for to, c in game._gives)


def test_kept_tuples_are_what_made_anew_would_be_through_a_match() -> None:
    for rules in (PRESETS["classic"], load_ruleset("1001", players=4)):
        rng = random.Random(7)
        game = Game.new(rules, 7, [f"p{i}" for i in range(rules.players)])
        clones: list[tuple[Game, tuple[object, ...], tuple[object, ...]]] = []
        seen_gives = 0
        while not game.is_over and len(game.deal_results) < 6:
            results, gives = game.deal_results, game.gives
            assert all(isinstance(r, DealResult) for r in results)
            assert list(results) == game._results  # (converted in place: the same objects)
            assert gives == _fresh_gives(game)
            # Asked again with nothing played: the very same tuples.
            assert game.deal_results is results and game.gives is gives
            seen_gives += bool(gives)
            if rng.random() < 0.05:
                clones.append((game.clone(), results, gives))
            deal = len(results)
            game.apply(rng.choice(game.legal_actions()), seat=game.to_act)
            if len(game.deal_results) > deal:
                assert game.deal_results is not results
                assert game.deal_results[:deal] == results
        assert seen_gives and len(game.deal_results) >= 3
        # A clone keeps what it had, and goes on by itself.
        assert clones
        for clone, results, gives in clones:
            assert clone.deal_results == results and clone.gives == gives
            while not clone.is_over and len(clone.deal_results) <= len(results):
                clone.apply(clone.legal_actions()[0], seat=clone.to_act)
                assert clone.gives == _fresh_gives(clone)
            assert clone.deal_results[: len(results)] == results
            assert len(clone.deal_results) == len(clone._results)
