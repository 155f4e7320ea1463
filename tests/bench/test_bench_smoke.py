"""Smoke runs of the benchmark sections at tiny sizes: the JSON shape and positive figures.

No timing is asserted (the machine may be busy); each run only has to produce its figures.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from arena.bench import SECTIONS, load_section
from arena.bench.engine import bench_engine
from arena.bench.grpc_baseline import bench_grpc_baseline, percentile, sample_messages
from arena.bench.memory import bench_memory
from arena.bench.referee import bench_referee

pytestmark = pytest.mark.timeout(240)

TINY = 0.4  # seconds per measuring window


def test_sections_registered() -> None:
    for name in ("engine", "grpc_baseline", "referee", "memory"):
        assert name in SECTIONS
        assert callable(load_section(name))


def test_percentile() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([float(i) for i in range(101)], 0.99) == 99.0


def test_the_soak_reports_latency_percentiles_as_the_benchmarks_do() -> None:
    """Defect: arena/soak.py had a percentile of its own, ``v[int(q * n)]``, a rank too
    high: its p99 of 100 latencies was the largest (a p100), its p50 of two the larger. It
    uses the benchmarks' :func:`percentile` now (so does the hostile suite's check)."""
    from arena import soak

    assert soak.percentile([float(i) for i in range(1, 101)], 0.99) == 99.0
    assert soak.percentile([2.0, 1.0], 0.5) == 1.0


def test_sample_messages_are_real_sized() -> None:
    m = sample_messages(seeds=(1,))
    assert isinstance(m["request"], bytes) and isinstance(m["decision"], bytes)
    assert len(m["request"]) == m["request_bytes"] > 100
    assert len(m["decision"]) == m["decision_bytes"] > 0
    assert m["request_max"] >= m["request_bytes"]
    assert m["actions_per_deal"] >= m["decisions_per_deal"] > 0


def test_engine_smoke() -> None:
    out = bench_engine(seconds=0.05)
    for figures in out.values():
        assert figures["deals_per_s"] > 0 and figures["decisions_per_s"] > 0


def test_grpc_baseline_smoke() -> None:
    out = bench_grpc_baseline(seconds=TINY, tables=(1, 2), settings=("inherited",))
    assert set(out) == {"tables_1", "tables_2", "message", "grpc_experiments"}
    json.dumps(out)
    for key in ("tables_1", "tables_2"):
        r = out[key]
        assert r["round_trips_per_s"] > 0
        assert 0 < r["p50_ms"] <= r["p99_ms"]
    assert out["message"]["request_bytes"] > 100


def test_referee_smoke() -> None:
    out = bench_referee(seconds=TINY, tables=(1, 2), settings=("inherited",), max_deals=1)
    json.dumps(out)
    for key in ("tables_1", "tables_2"):
        r = out[key]
        for figure in ("decisions_per_s", "p50_ms", "p99_ms", "ratio_to_baseline"):
            assert r[figure] > 0, figure
        assert r["deals_per_s"] >= 0
        # (actions counted where the referee applies them: 0 once made the deals ratio 0)
        assert r["actions_per_deal"] >= r["decisions_per_deal"] > 0
        assert r["deals_ratio"] > 0
        assert r["p50_ms"] <= r["p99_ms"]
        assert r["baseline_round_trips_per_s"] > 0
        assert r["incidents"] == 0  # the bots played every decision themselves
        # every gRPC message carries at least one message / decision (more when batched)
        assert r["messages_per_write"] >= 1 and r["decisions_per_bot_message"] >= 1
    for target in out["targets"].values():
        assert set(target) == {"ratio", "target", "met"}


def test_memory_smoke() -> None:
    out = bench_memory(seconds=TINY, tables=3)
    r = out["tables_3"]
    assert r["peak_rss_mb"] >= r["rss_idle_mb"] > 0
    assert r["decisions_per_s"] > 0
    target = out["targets"]["peak_rss_mb_tables_3"]
    assert target["value"] == r["peak_rss_mb"]
    assert target["met"] in (True, False)


def test_target_rows() -> None:
    from arena.cli.bench import _target_rows

    results: dict[str, dict[str, Any]] = {
        "engine": {"classic": {"deals_per_s": 1.0}},
        "referee": {"targets": {"decisions_tables_1": {"ratio": 0.5, "target": 1.0, "met": False}}},
        "memory": {
            "targets": {"peak_rss_mb_tables_100": {"value": 80.0, "target": 200.0, "met": True}}
        },
    }
    assert _target_rows(results) == [
        ("referee", "decisions_tables_1", "0.50x", ">= 1x", "NO"),
        ("memory", "peak_rss_mb_tables_100", "80.0", "< 200", "yes"),
    ]


def test_the_figures_table_never_cuts_a_metric_name() -> None:
    """Defect: in an 80-column terminal ``make bench`` printed "referee_cpu_us_pe…" and
    "bots_cpu_us_per_d…": which figure a row held could not be read."""
    from rich.console import Console

    from arena.cli.bench import _figures_table

    results: dict[str, dict[str, Any]] = {
        "referee": {
            "event_engine_off": {
                "tables_10": {
                    "referee_cpu_us_per_decision": 277.7,
                    "bots_cpu_us_per_decision": 344.0,
                }
            },
            "setup": "referee + 3 SDK random bots, classic max_deals 12, loopback; tables_<n>: "
            "GRPC_EXPERIMENTS setting 'inherited'",
        }
    }
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(_figures_table(results))
    text = console.export_text()
    for name in ("referee_cpu_us_per_decision", "bots_cpu_us_per_decision"):
        assert name in text
    assert "…" not in text


def test_tournament_smoke() -> None:
    from arena.bench.tournament import bench_tournament

    out = bench_tournament(seconds=0.5, concurrency=(4,), max_deals=1)
    json.dumps(out)
    r = out["concurrency 4"]
    assert r["matches"] >= 24 and r["failed"] == 0 and r["matches_per_min"] > 0
    assert r["recording_s"] > 0 and r["recording_share_percent"] > 0
    target = out["targets"]["recording_share_percent"]
    assert target["value"] == r["recording_share_percent"]  # the largest (only one here)
    assert target["target"] == 5.0 and target["met"] == (target["value"] < 5.0)


def test_referee_logic_smoke() -> None:
    from arena.bench.referee_logic import referee_logic

    out = referee_logic(tables=2, matches=1, max_deals=2)
    assert out["decisions"] > 20 and out["cpu_us_per_decision"] > 0


def test_referee_one_passes_every_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: `python -m arena.bench.referee one --preset 1001 --min-matches 5` measured
    classic and stopped at the window: role 'one' dropped both options."""
    import arena.bench.referee as referee

    seen: dict[str, Any] = {}

    def fake(tables: int, experiments: str | None, seconds: float, warmup: float | None,
             **kwargs: Any) -> dict[str, Any]:  # fmt: skip
        seen.update(tables=tables, experiments=experiments, seconds=seconds, warmup=warmup)
        seen.update(kwargs)
        return {}

    monkeypatch.setattr(referee, "measure_referee", fake)
    referee.main(["one", "--tables", "2", "--seconds", "1.5", "--warmup", "0.5",
                  "--preset", "1001", "--max-deals", "4", "--min-matches", "5",
                  "--experiments", "x"])  # fmt: skip
    assert seen == {"tables": 2, "experiments": "x", "seconds": 1.5, "warmup": 0.5,
                    "preset": "1001", "max_deals": 4, "min_matches": 5}  # fmt: skip
