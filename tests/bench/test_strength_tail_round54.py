"""arena.bench.strength reports the tail of the stronger bot's decision times (round 54):
the referee's per-decision limit meets the slowest decisions, which the mean hid."""

from __future__ import annotations

import io

from arena.bench.strength import _percentile, bench_strength


def test_the_percentiles_are_nearest_ranks() -> None:
    xs = [0.004, 0.001, 0.003, 0.002]
    assert _percentile(xs, 0.5) == 0.002
    assert _percentile(xs, 0.9) == _percentile(xs, 0.99) == _percentile(xs, 1.0) == 0.004
    assert _percentile([], 0.99) == 0.0


def test_each_pair_reports_its_decision_time_tail() -> None:
    out = io.StringIO()
    report = bench_strength(("random", "heuristic"), matches=1, max_deals=1, workers=1, out=out)
    pair = report["pairs"][0]
    tail = [pair["ms_p50"], pair["ms_p90"], pair["ms_p99"], pair["ms_max"]]
    assert tail == sorted(tail)
    assert pair["ms_max"] > 0.0 and pair["ms_per_decision"] <= pair["ms_max"]
    header = out.getvalue().splitlines()[1]
    assert header.split()[-4:] == ["p99", "ms", "max", "ms"]
