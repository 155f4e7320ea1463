"""The parts of a tournament's recording time (round 55): ``TournamentOutcome`` keeps what
``record_s`` is made of (the stores' CPU, the tables' wait and of it the last stores', the
records' building, the live rating, the commits), and the tournament bench prints them
(``recording_parts``) and, run after run, the share's median and worst."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

import arena.bench.tournament as bench_mod
from arena.storage import Storage
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

#: Seconds of CPU each group store burns, and each store then waits (a slow fsync).
STORE_CPU_S = 0.01
SLOW_COMMIT_S = 0.03


def _sum_of_parts(out: Any) -> float:
    stores = max(out.store_cpu_s, out.record_wait_s)
    return out.build_cpu_s + out.finalize_s + out.rate_s + stores


def test_the_parts_add_up_to_the_recording_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each group store burns CPU: the stores' CPU counts it, once a group (shared among
    its matches); the referee's building is its ``record_cpu_s``; with the live rating off
    it is 0; the commits are the groups written."""
    save = Storage.save_matches
    groups: list[int] = []

    def burning(self: Storage, tid: str, matches: Any) -> Any:
        t = time.thread_time()
        while time.thread_time() - t < STORE_CPU_S:
            pass
        groups.append(len(matches))
        return save(self, tid, matches)

    class Measured(FakeReferee):
        record_cpu_s = 0.25

    monkeypatch.setattr(Storage, "save_matches", burning)
    out = _run(make_config(tmp_path, concurrency=8), Measured())
    assert out.finished and out.played_now == sum(groups) == 24
    assert out.commits == len(groups) < 24  # (groups of up to 4 at concurrency 8)
    assert out.store_cpu_s >= len(groups) * STORE_CPU_S
    assert out.store_cpu_s < 24 * STORE_CPU_S  # once a group, not once a match
    assert out.build_cpu_s == 0.25 and out.rate_s == 0.0
    assert 0 <= out.record_last_wait_s <= out.record_wait_s
    assert out.record_s == pytest.approx(_sum_of_parts(out))


def test_the_wait_for_the_last_store_is_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At concurrency 1 a table waits for its last store only at its end (the others
    overlap its next match): that wait is ``record_last_wait_s``, within the whole wait."""
    save = Storage.save_matches

    def slow(self: Storage, tid: str, matches: Any) -> Any:
        errors = save(self, tid, matches)
        time.sleep(SLOW_COMMIT_S)
        return errors

    monkeypatch.setattr(Storage, "save_matches", slow)
    out = _run(make_config(tmp_path, concurrency=1))
    assert out.finished and out.commits == out.played_now == 24
    assert SLOW_COMMIT_S <= out.record_last_wait_s <= out.record_wait_s
    assert out.record_s == pytest.approx(_sum_of_parts(out))


def test_the_live_rating_is_a_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the live display (every match rated as it ends) ``rate_s`` is what it took,
    and it is in ``record_s``."""
    import arena.tournament.runner as runner

    monkeypatch.setattr(runner.RatingBook, "rate", _slow_rate(runner.RatingBook.rate))
    shown = io.StringIO()
    opts = runner.RunOptions(progress=True, console=Console(file=shown, force_terminal=True))
    out = runner.run(make_config(tmp_path, concurrency=3), opts,
                     referee_factory=lambda _cfg: FakeReferee(), serve=False,
                     launch_bots=False)  # fmt: skip
    assert out.finished
    assert out.rate_s >= 24 * 0.002
    assert out.record_s == pytest.approx(_sum_of_parts(out))


def _slow_rate(rate: Any) -> Any:
    def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.002)
        return rate(self, *args, **kwargs)

    return slow


def _fake_outcome(play: float, rec: float) -> SimpleNamespace:
    return SimpleNamespace(play_s=play, finalize_s=0.0, record_s=rec, played_now=48, failed=[],
                           store_cpu_s=0.0123, record_wait_s=0.0456, record_last_wait_s=0.04,
                           record_idle_wait_s=0.0789, build_cpu_s=0.007, rate_s=0.0,
                           commits=20)  # fmt: skip


def test_the_bench_prints_the_parts_in_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_mod, "run", lambda cfg, opts: _fake_outcome(2.0, 0.06))
    out = bench_mod.bench_tournament(concurrency=(16,))
    assert out["concurrency 16"]["recording_share_percent"] == 3.0
    assert out["recording_parts"] == {
        "concurrency 16": {"store_cpu_ms": 12.3, "tables_wait_ms": 45.6,
                           "of_it_last_stores_ms": 40.0, "idle_last_waits_ms": 78.9,
                           "build_cpu_ms": 7.0,
                           "finalize_ms": 0.0, "rate_ms": 0.0, "commits": 20}
    }  # fmt: skip


def test_runs_of_the_section_alone_end_with_the_shares_median_and_worst(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m arena.bench.tournament --runs 3 --concurrency 16``: a JSON line a run,
    then the share's median, worst and how many runs met the target."""
    recs = iter([0.06, 0.11, 0.04])  # 3 %, 5.5 %, 2 % of 2 s
    configs: list[Any] = []

    def fake_run(cfg: Any, opts: Any) -> Any:
        configs.append(cfg)
        return _fake_outcome(2.0, next(recs))

    monkeypatch.setattr(bench_mod, "run", fake_run)
    bench_mod.main(["--runs", "3", "--concurrency", "16"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [c.concurrency for c in configs] == [16, 16, 16]
    assert [r["concurrency 16"]["recording_share_percent"] for r in lines[:3]] == [3.0, 5.5, 2.0]
    assert lines[3] == {"recording_share": {"concurrency 16": {
        "runs": 3, "median_percent": 3.0, "worst_percent": 5.5, "under_5_percent": 2}}}  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["--runs", "0"], "--runs must be at least 1, not 0"),
     (["--concurrency", "0"], "--concurrency must be at least 1, not 0"),
     (["--runs", "x"], "--runs: invalid int value: 'x'"),
     (["--seconds", "-3"], "--seconds must be more than 0, not -3.0"),
     (["--seconds", "nan"], "--seconds must be more than 0, not nan"),
     (["--max-deals", "-1"], "--max-deals must be 0 (no cap) or more, not -1")],
)  # fmt: skip
def test_bad_arguments_are_named(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        bench_mod.main(argv)
    assert e.value.code == 2
    assert said in capsys.readouterr().err
