"""Round 58 (#7): the bench's tournament at concurrency 4 and 16 plays more matches than at
1, so that each measure lasts about as long: with 48 matches at each, the
concurrency-16 tournament lasted about 1.1 s on a quiet machine, and one slow commit or
garbage collection in it moved its recording share by two points (over 5 % once in a
run). The JSON keeps its keys and their meaning (docs/performance.md's table reads them)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from arena.bench import tournament as bench_mod


def _fake_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``run`` replaced: each config kept, each outcome 1 s of play per 24 matches with
    a recording of 20 ms per 24 (2 %), and 0.01 s of ``finalize``."""
    configs: list[Any] = []

    def fake_run(cfg: Any, opts: Any) -> Any:
        configs.append(cfg)
        played = 24 * cfg.matches_per_table
        return SimpleNamespace(
            play_s=played / 24, finalize_s=0.01, record_s=0.02 * played / 24,
            played_now=played, failed=[], store_cpu_s=0.0, record_wait_s=0.0,
            record_last_wait_s=0.0, record_idle_wait_s=0.0, build_cpu_s=0.0, rate_s=0.0,
            commits=played,
        )  # fmt: skip

    monkeypatch.setattr(bench_mod, "run", fake_run)
    return configs


def test_the_higher_concurrencies_play_more_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    configs = _fake_runs(monkeypatch)
    out = bench_mod.bench_tournament()  # (the default: 2 s)
    assert [(c.concurrency, c.matches_per_table) for c in configs] == [(1, 2), (4, 4), (16, 8)]
    assert [out[f"concurrency {c}"]["matches"] for c in (1, 4, 16)] == [48, 96, 192]
    # (every table plays at least a dozen matches at the default: the end, once a run, is
    # a smaller part of a table's play)
    assert all(24 * c.matches_per_table // c.concurrency >= 12 for c in configs)
    # The keys and their meaning as before: the share of each, the target on the largest.
    for c in (1, 4, 16):
        r = out[f"concurrency {c}"]
        assert set(r) == {"matches", "matches_per_min", "seconds", "failed", "recording_s",
                          "recording_share_percent"}  # fmt: skip
        assert r["recording_share_percent"] == round(
            100 * r["recording_s"] / (r["seconds"] + 0.01), 2
        )
    assert out["targets"] == {
        "recording_share_percent": {
            "value": max(out[f"concurrency {c}"]["recording_share_percent"] for c in (1, 4, 16)),
            "target": 5.0,
            "met": True,
        }
    }


@pytest.mark.parametrize(
    ("seconds", "sets"),
    [(0.5, [1, 1, 2]), (0.2, [1, 1, 1]), (1.0, [1, 2, 4]), (2.6, [3, 5, 10]), (5.0, [5, 10, 20])],
)
def test_seconds_scales_every_measure(
    monkeypatch: pytest.MonkeyPatch, seconds: float, sets: list[int]
) -> None:
    configs = _fake_runs(monkeypatch)
    bench_mod.bench_tournament(seconds=seconds)
    assert [c.matches_per_table for c in configs] == sets
    assert [bench_mod.sets_for(seconds, c) for c in (1, 4, 16)] == sets


def test_other_concurrencies_by_their_square_root() -> None:
    """(``--concurrency`` takes any: 2 and 3 play as 1, 8 as 4, 0 or less never reaches
    here: main refuses it)."""
    assert [bench_mod.sets_for(2.0, c) for c in (2, 3, 8, 9, 25, 100)] == [2, 2, 4, 6, 10, 20]
