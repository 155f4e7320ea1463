"""The per-decision breakdown (arena.bench.breakdown) runs the real processes with its probes
and counts what each decision (round trip) costs; no timing is asserted."""

from __future__ import annotations

import json

import pytest

from arena.bench import grpc_baseline
from arena.bench.breakdown import breakdown

pytestmark = pytest.mark.timeout(240)


def test_breakdown_counts_every_side_per_decision() -> None:
    saved = list(grpc_baseline.PYTHON)
    r = breakdown(tables=1, seconds=0.4)
    json.dumps(r)
    assert saved == grpc_baseline.PYTHON  # the measured processes start plainly again
    for side in ("referee", "bots", "server", "clients"):
        counts = r[side]["counts"]
        assert r[side]["per"] > 0, side
        assert counts["loop iterations (_run_once)"] >= 1, side
        assert r[side]["cpu_us"]["loop iterations (_run_once)"] > 0, side
    # One table: one request and one answer per decision (and a few more messages of the
    # matches' starts and deals' ends), hardly a timer a decision (a seat keeps its
    # deadline's); the ping-pong one write a round trip. The counts are over each
    # process's whole life, whose start and end add some whatever was played: those are
    # bounded apart from the share of each decision. A loaded machine plays few decisions,
    # and a bound per decision alone failed so (1.13 reads a decision at 46 decisions, 2.11
    # writes at 9). Two of one a decision would be 2.0.
    n, bots = r["referee"]["per"], 3
    bounds = [  # (side, count, at least and at most a decision, more at the start and end)
        ("referee", "grpc writes", 1.0, 1.3, 4 * bots),  # (each bot's Welcome, a match's start)
        ("referee", "grpc reads", 0.9, 1.0, 2 * 2 * bots),  # (each stream's Hello, end; twice)
        # (each bot's Hello, and those of its tries to connect again once the referee has
        # ended: at most 4 within its --retry-for 5 s)
        ("bots", "grpc writes", 0.9, 1.0, (1 + 4) * bots),
        # (the start's timers and each seat's deadline timer, kept from decision to
        # decision since round 48, not one a decision: made again only after it ran, a
        # second at the least; the loop's stall meter ticks every 10 ms while decisions
        # are pending, a timer of time rather than of decisions: counted apart)
        ("referee", "loop.call_at", 0.0, 0.1, 40),
    ]
    ticks = r["referee"]["counts"].get("callback LoopLag._tick", 0.0)
    for side, key, least, most, start_and_end in bounds:
        counted = r[side]["counts"][key] * n  # (rounded to 2 places: 0.005 a decision)
        slack = 0.005 * n
        if key == "loop.call_at":
            counted -= ticks * n  # (a tick armed is a tick run, but the last: 1 more)
            slack += 0.005 * n + 1
        assert counted + slack >= least * n, (side, key, n, r[side]["counts"][key])
        assert counted - slack <= most * n + start_and_end, (side, key, n, counted, ticks)
    assert r["bots"]["counts"]["decisions"] == 1.0
    trips = r["clients"]["per"]  # (and each of the 3 clients' Hello)
    assert r["clients"]["counts"]["grpc writes"] == round((trips + 3) / trips, 2)
    assert r["referee_run"]["decisions"] > 0 and r["baseline_run"]["round_trips"] > 0
