"""Tournament throughput: matches per minute with random bots over real gRPC.

Each measurement is a small real tournament (referee in-process, one process per bot, the
same code path as ``arena tournament``) in a temporary directory, at concurrency 1, 4 and
16. The clock runs from the moment every bot is connected to the last stored match, so bot
start-up is not counted.

``recording_share_percent``: the time spent recording results and updating ratings
(``TournamentOutcome.record_s``: the CPU time of building each match's record at its end
and of its store on the storage thread (``save_matches``: a group commit's CPU shared
among its matches), or, where larger, the time the tables waited for their results to
be stored, over the concurrency; and the final ratings: ``finalize``) over the
tournament's time (playing plus ``finalize``), per concurrency; the target (under 5 %)
holds for the largest of them. Runs without the live display, which
also rates every match as it ends for the standings on screen.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from arena.tournament.config import parse_config
from arena.tournament.runner import RunOptions, run

__all__ = ["bench_tournament"]

log = logging.getLogger(__name__)

CONCURRENCY = (1, 4, 16)


def bench_tournament(
    seconds: float = 2.0, concurrency: tuple[int, ...] = CONCURRENCY, max_deals: int = 6
) -> dict[str, Any]:
    """Matches per minute of 4 random bots (24 matches per deal-seed set) per concurrency.

    ``seconds`` scales the work: about ``seconds`` x 24 matches per measurement (at least 24,
    one full round robin). Two sets at the default: with one, a tournament at concurrency 16
    lasted about 1.3 s, and one slow commit of the storage put its recording share from 4 %
    to 7 %.
    """
    sets = max(1, round(seconds))
    out: dict[str, Any] = {}
    shares: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for c in concurrency:
            cfg = parse_config(
                {
                    "name": f"bench-c{c}",
                    "ruleset": "classic",
                    "seed": 1,
                    "matches_per_table": sets,
                    "max_deals": max_deals,
                    "concurrency": c,
                    "db": str(Path(tmp) / "bench.sqlite"),
                    "out": str(Path(tmp) / f"out-c{c}"),
                    "deadlines": {"decision_ms": 2000, "time_bank_ms": 20000},
                    "bots": {f"random{i}": "random" for i in range(1, 5)},
                },
                source="<bench>",
            )
            outcome = run(cfg, RunOptions(progress=False, fresh=True))
            total_s = outcome.play_s + outcome.finalize_s
            share = 100.0 * outcome.record_s / total_s if total_s > 0 else 0.0
            shares.append(share)
            played = outcome.played_now
            per_min = 60.0 * played / outcome.play_s if outcome.play_s > 0 else 0.0
            out[f"concurrency {c}"] = {
                "matches": played,
                "matches_per_min": round(per_min, 1),
                "seconds": round(outcome.play_s, 2),
                "failed": len(outcome.failed),
                "recording_s": round(outcome.record_s, 3),
                "recording_share_percent": round(share, 2),
            }
            log.info("tournament bench c=%d: %.1f matches/min", c, per_min)
    worst = round(max(shares, default=0.0), 2)  # judged as printed: no "5.0, met"
    out["targets"] = {
        "recording_share_percent": {"value": worst, "target": 5.0, "met": worst < 5.0}
    }
    out["setup"] = f"4 random bots, classic, max_deals {max_deals}, real gRPC on loopback"
    return out
