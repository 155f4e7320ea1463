"""Hostile round 15: what changed on 2026-12-02 (forfeit places, views, superseding)."""

from __future__ import annotations

import random
from typing import Any

from engine import replay
from engine.game import Game, Phase


def _finished_record(seed: int = 1) -> dict[str, Any]:
    rnd = random.Random(seed)
    g = Game.new("classic", seed=seed, players=["a", "b", "c"])
    g.ruleset = __import__("dataclasses").replace(g.ruleset, max_deals=2)
    while g.phase is not Phase.GAME_OVER:
        g.apply(rnd.choice(g.legal_actions()))
    return g.record()


def test_record_of_an_earlier_referee_where_every_seat_forfeited_still_replays() -> None:
    """Defect: ``forfeit_result`` now places every seat last when all forfeited (the last one
    on the match's final action). A record the referee wrote before that change places them
    all first, as its ``forfeit_result`` did; ``engine.replay`` (``arena replay --check``,
    the web replay) compares the stored result with today's function and refused that
    genuine record as changed: "result: places is [3, 3, 3], the record says [1, 1, 1]"."""
    rec = _finished_record()
    assert rec["result"] is not None
    rules = dict(rec["result"])
    rec["rules_result"] = rules
    rec["forfeits"] = [0, 1, 2]
    # the earlier referee's forfeit_result: stay = [], each forfeiter placed len(stay) + 1
    rec["result"] = {**rules, "places": [1, 1, 1], "winner": None,
                     "shortfalls": [max(0, 1000 - s) for s in rules["scores"]],
                     "forfeits": [0, 1, 2]}  # fmt: skip
    replay(rec)
