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
    # matches' starts and ends, and the bots' Hellos: a larger share of the few decisions
    # a loaded machine plays, 1.13 reads a decision in one such run); the ping-pong
    # exactly one of each per round trip.
    assert 1.0 <= r["referee"]["counts"]["grpc writes"] < 1.5
    assert 0.9 <= r["referee"]["counts"]["grpc reads"] < 1.5
    assert 0.9 <= r["bots"]["counts"]["grpc writes"] < 1.5  # (their Hellos too)
    assert r["bots"]["counts"]["decisions"] == 1.0
    assert 0.99 <= r["clients"]["counts"]["grpc writes"] < 1.2  # (two a round trip: 2.0)
    # Each decision's deadline is one timer of the referee's (and a few more of the matches'
    # starts and ends, which weigh more when a loaded machine plays few decisions in the
    # window: 1.14 was seen; two timers a decision would be 2.0).
    assert 0.9 <= r["referee"]["counts"]["loop.call_at"] < 1.5
    assert r["referee_run"]["decisions"] > 0 and r["baseline_run"]["round_trips"] > 0
