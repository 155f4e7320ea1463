"""Engine speed: random play through ``legal_actions()`` + ``apply_trusted()``, one core.

Every decision of a deal is counted (bids, gives, contract, plays); a new match starts when
one ends. Time is the process's CPU time, so the figure does not depend on what else the
machine is running (on an idle machine it matches the wall clock).
"""

from __future__ import annotations

import random
import time
from typing import Any

from engine import PRESETS, Game

__all__ = ["PRESETS_BENCHED", "bench_engine", "bench_preset"]

PRESETS_BENCHED = ("classic", "1001", "1001-4p")


def bench_preset(preset: str, seconds: float = 2.0, seed: int = 1) -> dict[str, float]:
    """Random-play ``preset`` for about ``seconds`` of CPU time; deals/s and decisions/s."""
    ruleset = PRESETS[preset]
    names = [f"p{i}" for i in range(ruleset.players)]
    rng = random.Random(seed)
    rand = rng.random
    match_seed = 0
    game = Game.new(ruleset, match_seed, names)
    deals = decisions = 0
    clock = time.process_time
    start = clock()
    elapsed = 0.0
    while elapsed < seconds:
        for _ in range(2000):
            if game.is_over:
                deals += game.deal_number
                match_seed += 1
                game = Game.new(ruleset, match_seed, names)
            acts = game.legal_actions()
            game.apply_trusted(acts[int(rand() * len(acts))])
        decisions += 2000
        elapsed = clock() - start
    deals += game.deal_number
    return {
        "deals_per_s": round(deals / elapsed, 1),
        "decisions_per_s": round(decisions / elapsed, 1),
    }


def bench_engine(seconds: float = 2.0) -> dict[str, Any]:
    """``{preset: {"deals_per_s", "decisions_per_s"}}`` for classic, 1001 and 1001-4p."""
    return {p: bench_preset(p, seconds) for p in PRESETS_BENCHED}
