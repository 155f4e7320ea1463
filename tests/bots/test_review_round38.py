"""Round 38's review of the bots' concession maths (round 37's ``conceded_relative`` and
``relative_score_of_play``): pinned against the engine's own scoring, under every
``concede``/``concede_pays`` combination, with 3 players and with 4 (1001's dealer
sitting out)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from bots.heuristic import conceded_relative, relative_score_of_play
from engine import PRESETS, Concede, Game, ThrowIn


def _conceded_deal(rules, seed: int):  # type: ignore[no-untyped-def]
    """The result of a deal of ``rules`` whose declarer concedes (random bidding), or None
    when no concession came up on this seed."""
    players = rules.players
    g = Game.new(rules, seed, [f"p{i}" for i in range(players)])
    rng = random.Random(seed)
    while g.deal_results == ():
        legal = g.legal_actions()
        concede = next((a for a in legal if isinstance(a, Concede)), None)
        if concede is not None:
            g.apply_trusted(concede)
            break
        if any(isinstance(a, ThrowIn) for a in legal):
            return None
        g.apply_trusted(rng.choice(legal))
    if not g.deal_results:
        return None
    result = g.deal_results[0]
    return result if result.outcome == "conceded" else None


@pytest.mark.parametrize("concede", ["free", "penalty"])
@pytest.mark.parametrize("pays", ["half", "none"])
@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_conceded_relative_is_the_engines_score_of_a_concession(
    preset: str, concede: str, pays: str
) -> None:
    """Pinned (no defect): the declarer's score minus the mean of the two players he plays
    against, as the engine scores a concession, is what ``conceded_relative`` says, up to
    the ruleset's rounding of the opponents' halves (1001's 5: 22.5 scored 25); a 4-player
    dealer, who sits the deal out and scores the talon whatever is done, is not one of the
    two."""
    rules = dataclasses.replace(PRESETS[preset], concede=concede, concede_pays=pays)
    checked = 0
    for seed in range(200):
        r = _conceded_deal(rules, seed)
        if r is None:
            continue
        opponents = [
            s for s in range(rules.players) if s != r.declarer and not (
                rules.players == 4 and s == r.dealer
            )
        ]  # fmt: skip
        assert len(opponents) == 2
        engine_rel = r.deltas[r.declarer] - sum(r.deltas[s] for s in opponents) / 2
        model = conceded_relative(rules, r.bid)
        assert abs(engine_rel - model) <= rules.rounding / 2, (seed, r, model)
        checked += 1
        if checked == 5:
            break
    assert checked == 5, f"only {checked} concessions came up"


def test_relative_score_of_play_never_beats_a_sure_make_nor_falls_below_a_sure_failure() -> None:
    """Pinned (no defect): for every bid from 40 to 200 and every predicted take, the model
    lies between the worst it allows (−bid, and 60 to each defender) and the best (+bid,
    the defenders sharing nothing), and a surer contract is never worth less."""
    for bid in range(40, 205, 5):
        for pred in range(-40, 260, 10):
            previous = None
            for p in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0):
                v = relative_score_of_play(p, bid, pred)
                assert -bid - 60 - 1e-9 <= v <= bid + 1e-9, (p, bid, pred, v)
                if previous is not None:
                    assert v >= previous - 1e-9, (p, bid, pred, v, previous)
                previous = v
