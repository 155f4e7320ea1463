"""Round 52: a club's season in ``arena web`` costs what a tournament's leaderboard costs.

Defect: ``/api/season`` read and rated every match of every week of the season again at
each request after a match was stored (11 s at 4,000 matches of 30 bots), with no single
flight and no throttle: a season page polling (every 3 s) beside a running week started
that computation at every poll, and each reader's ran side by side. It is now computed as a
tournament's leaderboard is (``DataSource._cached_keyed``): by one request at a time, and
while a week runs, again at most every ``THROTTLE`` times its cost; its weeks then say the
matches its standings count (as the leaderboard's tournament does).

No timed assertion: the stub build blocks until every other request is seen waiting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import arena.web.data as data
from arena.web import DataSource
from arena.web.demo import make_demo_db
from tests.web.test_web_single_flight import N, join, run_all, until, waiting


def week2(path: Path, stored: int) -> None:
    """club-w2: ``stored`` of its 6 matches (running)."""
    make_demo_db(path, matches=stored, max_deals=2, tournament_id="club-w2", total=6,
                 finished=False)  # fmt: skip


def club(path: Path) -> Path:
    """club-w1 (finished, 2 matches) and club-w2 (3 of 6 matches: running)."""
    make_demo_db(path, matches=2, max_deals=2, tournament_id="club-w1")
    week2(path, 3)
    return path


class Counted:
    """``source``'s season computation (round 53: ``_season_builder``, which brings its
    builder up to date; it was ``build_season``) counting its calls, blocking while
    ``gate`` is unset."""

    def __init__(self, source: DataSource, gate: bool = True) -> None:
        import threading

        self.calls = 0
        self.release = threading.Event()
        if not gate:
            self.release.set()
        self.real = source._season_builder

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        assert self.release.wait(60), "never released"
        return self.real(*args)


def test_concurrent_requests_of_a_season_compute_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = club(tmp_path / "club.sqlite")
    source = DataSource(db)
    build = Counted(source)
    monkeypatch.setattr(source, "_season_builder", build)
    threads, out = run_all([lambda: source.season("club-w")] * N)
    what = ("season", "club-w", "club-w1", "club-w2", "finished", "club-w1")
    until(lambda: build.calls == N or waiting(source, what) == N - 1)
    build.release.set()
    join(threads)
    assert build.calls == 1  # (the old code: N, side by side)
    assert all(not isinstance(d, BaseException) for d in out), out
    assert all(d["rows"] == out[0]["rows"] and d["completed"] == 5 for d in out)


def test_a_running_weeks_season_is_computed_again_at_most_every_few_times_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = club(tmp_path / "club.sqlite")
    source = DataSource(db)
    build = Counted(source, gate=False)
    monkeypatch.setattr(source, "_season_builder", build)
    # every computation counts as slow, and is kept for far longer than this test runs
    monkeypatch.setattr(data, "SLOW_S", 0.0)
    monkeypatch.setattr(data, "THROTTLE", 1e9)
    first = source.season("club-w")
    assert build.calls == 1 and first["completed"] == 5
    week2(db, 4)  # a match of the running week stored
    kept = source.season("club-w")
    assert build.calls == 1  # (the old code: read every match of the season again)
    # the weeks say the matches the standings count, not those stored since
    assert kept["completed"] == 5
    assert [w["completed"] for w in kept["weeks"]] == [2, 3]
    assert kept.state == first.state  # (so its ETag: a poll is a 304)
    # a finished week: computed again at once
    make_demo_db(db, matches=6, max_deals=2, tournament_id="club-w2", total=6)
    done = source.season("club-w")
    assert build.calls == 2 and done["completed"] == 8
    assert [w["completed"] for w in done["weeks"]] == [2, 6]
    assert all(w["state"] == "finished" for w in done["weeks"])


def test_a_week_that_joins_the_season_is_counted_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = club(tmp_path / "club.sqlite")
    source = DataSource(db)
    monkeypatch.setattr(data, "SLOW_S", 0.0)
    monkeypatch.setattr(data, "THROTTLE", 1e9)
    assert source.season("club-w")["completed"] == 5
    make_demo_db(db, matches=1, max_deals=2, tournament_id="club-w3", total=6, finished=False)
    doc = source.season("club-w")  # (a season kept for two weeks would not do)
    assert [w["id"] for w in doc["weeks"]] == ["club-w1", "club-w2", "club-w3"]
    assert doc["completed"] == 6


def test_a_week_that_ends_is_counted_at_once_while_another_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Round 52's review) With two weeks running, one that finished was held off by the
    throttle of the other: the season stays "running" while any week does, so its kept
    document would do for up to THROTTLE times its cost; docs/web.md says a finished week
    is counted at once."""
    db = club(tmp_path / "club.sqlite")
    make_demo_db(db, matches=1, max_deals=2, tournament_id="club-w3", total=6, finished=False)
    source = DataSource(db)
    build = Counted(source, gate=False)
    monkeypatch.setattr(source, "_season_builder", build)
    monkeypatch.setattr(data, "SLOW_S", 0.0)
    monkeypatch.setattr(data, "THROTTLE", 1e9)
    assert source.season("club-w")["completed"] == 6 and build.calls == 1
    make_demo_db(db, matches=6, max_deals=2, tournament_id="club-w2", total=6)  # w2 ends
    doc = source.season("club-w")
    assert build.calls == 2 and doc["completed"] == 9
    assert [w["state"] for w in doc["weeks"]][:2] == ["finished", "finished"]
    # (w3 still runs: a match of it stored is held off again, as before)
    make_demo_db(db, matches=2, max_deals=2, tournament_id="club-w3", total=6, finished=False)
    assert source.season("club-w")["completed"] == 9 and build.calls == 2
