"""Tournament throughput: matches per minute with random bots over real gRPC.

Each measurement is a small real tournament (referee in-process, one process per bot, the
same code path as ``arena tournament``) in a temporary directory, at concurrency 1, 4 and
16, of more matches the higher the concurrency (:func:`sets_for`: 48, 96 and 192 at the
default ``seconds``), so that each lasts about as long. The clock runs from the moment
every bot is connected to the last stored match, so bot start-up is not counted.

``recording_share_percent``: the time spent recording results and updating ratings
(``TournamentOutcome.record_s``: the CPU time of building each match's record at its end
and of its store on the storage thread (``save_matches``: a group commit's CPU shared
among its matches), or, where larger, the time recording kept the tables waiting: their
waits for a store before their next match, over the concurrency, plus the run's tail
(from the last table's play ending to the last store a table waited for, whole); and the
final ratings: ``finalize``) over the tournament's time (playing plus ``finalize``), per
concurrency. Not counted: a table's wait for its last store while other tables still
play (it has nothing to play; ``idle_last_waits_ms``). The target (under 5 %)
holds for the largest of them. Runs without the live display, which
also rates every match as it ends for the standings on screen. ``recording_parts``: what
``recording_s`` is made of, per concurrency (:func:`recording_parts`).

``python -m arena.bench.tournament --runs N [--concurrency C]``: the section alone, N
times, then the share's median and worst (docs/performance.md, "Recording changes of
2026-12-14").
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.tournament.config import parse_config
from arena.tournament.runner import RunOptions, TournamentOutcome, run

__all__ = ["bench_tournament", "main", "recording_parts", "sets_for", "share_summary"]

log = logging.getLogger(__name__)

CONCURRENCY = (1, 4, 16)


def bench_tournament(
    seconds: float = 2.0, concurrency: tuple[int, ...] = CONCURRENCY, max_deals: int = 6
) -> dict[str, Any]:
    """Matches per minute of 4 random bots (24 matches per deal-seed set) per concurrency.

    ``seconds`` scales the work: :func:`sets_for` deal-seed sets per measurement (at least
    one full round robin, 24 matches).
    """
    out: dict[str, Any] = {}
    parts: dict[str, Any] = {}
    shares: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for c in concurrency:
            cfg = parse_config(
                {
                    "name": f"bench-c{c}",
                    "ruleset": "classic",
                    "seed": 1,
                    "matches_per_table": sets_for(seconds, c),
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
            parts[f"concurrency {c}"] = recording_parts(outcome)
            log.info("tournament bench c=%d: %.1f matches/min", c, per_min)
    worst = round(max(shares, default=0.0), 2)  # judged as printed: no "5.0, met"
    out["targets"] = {
        "recording_share_percent": {"value": worst, "target": 5.0, "met": worst < 5.0}
    }
    out["recording_parts"] = parts
    out["setup"] = f"4 random bots, classic, max_deals {max_deals}, real gRPC on loopback"
    return out


def sets_for(seconds: float, concurrency: int) -> int:
    """Deal-seed sets (24 matches each) of the measure at ``concurrency``: ``seconds``
    times the whole square root of the concurrency, rounded, at least 1 (2, 4 and 8 at
    concurrency 1, 4 and 16 at the default 2 s: 48, 96 and 192 matches).

    A tournament at 4 or 16 tables plays about twice, or two to three times, as many
    matches a second as one at 1. With 48 matches at each, the concurrency-16 one lasted
    about 1.1 s on a quiet machine, and one event of a run (a slow fsync at its end or in
    ``finalize``, a full garbage collection landing in a record's building: 50-100 ms)
    moved a share by two points (5.60 % at concurrency 4 and 6.13 % at 16, once each, in
    runs that measured 3.3-3.7 % otherwise). What a long tournament pays is the per-match
    part; a measure about as long as the one-table one spreads the run's fixed end and
    such an event over as many seconds of play (docs/performance.md, "Recording measure
    of 2026-12-17")."""
    return max(1, round(seconds * math.isqrt(max(1, concurrency))))


def recording_parts(outcome: TournamentOutcome) -> dict[str, Any]:
    """What ``recording_s`` is made of, in milliseconds (``commits``: how many commits
    stored the matches; a match stored alone is one). ``recording_s`` is ``build_cpu_ms``
    + ``finalize_ms`` + ``rate_ms`` + the larger of ``store_cpu_ms`` and ``tables_wait_ms``
    (the tables' waits for a store before their next match, over the concurrency, plus
    the run's tail ``of_it_last_stores_ms``: from the last table's play ending to the
    last store a table waited for, whole). ``idle_last_waits_ms``, not in it: the waits
    for their last stores of tables with no match left while others still played (over
    the concurrency). See :class:`arena.tournament.runner.TournamentOutcome`."""
    return {
        "store_cpu_ms": round(1e3 * outcome.store_cpu_s, 1),
        "tables_wait_ms": round(1e3 * outcome.record_wait_s, 1),
        "of_it_last_stores_ms": round(1e3 * outcome.record_last_wait_s, 1),
        "idle_last_waits_ms": round(1e3 * outcome.record_idle_wait_s, 1),
        "build_cpu_ms": round(1e3 * outcome.build_cpu_s, 1),
        "finalize_ms": round(1e3 * outcome.finalize_s, 1),
        "rate_ms": round(1e3 * outcome.rate_s, 1),
        "commits": outcome.commits,
    }


def share_summary(runs: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per concurrency, the recording share of ``runs`` (each a :func:`bench_tournament`
    result): its median, its worst, and in how many runs it was under the 5 % target."""
    out: dict[str, dict[str, float]] = {}
    for key in runs[0] if runs else ():
        if not key.startswith("concurrency "):
            continue
        shares = [r[key]["recording_share_percent"] for r in runs]
        out[key] = {
            "runs": len(shares),
            "median_percent": round(statistics.median(shares), 2),
            "worst_percent": max(shares),
            "under_5_percent": sum(s < 5.0 for s in shares),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.bench.tournament [--runs N] [--concurrency 16] [--seconds S]``:
    the section alone, run after run (one JSON line each, its recording parts with it),
    then the share's median and worst per concurrency. With one concurrency its
    tournament runs on a new database (the section's runs 1 and 4 first, in the same
    database, when all three are run)."""
    p = argparse.ArgumentParser(prog="python -m arena.bench.tournament", description=main.__doc__)
    p.add_argument("--runs", type=int, default=1, help="how many times (default 1)")
    p.add_argument("--concurrency", type=int, action="append",
                   help="a concurrency to run (repeat it; default 1, 4 and 16)")  # fmt: skip
    p.add_argument("--seconds", type=float, default=2.0, help="the section's --seconds")
    p.add_argument("--max-deals", type=int, default=6)
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error(f"--runs must be at least 1, not {a.runs}")
    if a.concurrency is not None and min(a.concurrency) < 1:
        p.error(f"--concurrency must be at least 1, not {min(a.concurrency)}")
    if not a.seconds > 0:  # (nan too)
        p.error(f"--seconds must be more than 0, not {a.seconds}")
    if math.isinf(a.seconds):  # (its sets, round(inf), were an OverflowError's traceback)
        p.error(f"--seconds must be a finite number, not {a.seconds}")
    if a.max_deals < 0:
        p.error(f"--max-deals must be 0 (no cap) or more, not {a.max_deals}")
    runs = []
    for _ in range(a.runs):
        r = bench_tournament(a.seconds, tuple(a.concurrency or CONCURRENCY), a.max_deals)
        runs.append(r)
        print(json.dumps(r), flush=True)
    print(json.dumps({"recording_share": share_summary(runs)}), flush=True)


if __name__ == "__main__":
    main()
