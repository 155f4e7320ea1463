"""Round 53: a season in ``arena web`` is brought up to date from the matches stored since.

Limit left by round 52: ``/api/season`` read every match of every week again each time it
was computed (11 s at 4,000 matches of 30 bots), a finished week's as much as the running
one's, though single-flighted and throttled. A season is now kept as a tournament's
leaderboard is (:class:`arena.leaderboard.season.SeasonBuilder`, as ``LeaderboardBuilder``):
each computation reads only the matches stored since the last, and a finished week's are
read once. Its standings are those ``arena leaderboard --season`` (``build_season``, which
reads every match) makes of the same matches, to the bit.

No timed assertion: the matches each computation reads are counted.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import arena.web.data as data
from arena.leaderboard.season import SeasonBuilder, build_season, select_season
from arena.leaderboard.stats import LeaderboardBuilder
from arena.storage import Storage
from arena.web import DataSource
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db


class Reads:
    """``LeaderboardBuilder.read_matches`` counting, per tournament, the matches it reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.matches: Counter[str] = Counter()
        real = LeaderboardBuilder.read_matches

        def read_matches(builder: LeaderboardBuilder, st: Storage, tid: str, results: Any,
                         **kw: Any) -> None:  # fmt: skip
            self.matches[tid] += len(results)
            real(builder, st, tid, results, **kw)

        monkeypatch.setattr(LeaderboardBuilder, "read_matches", read_matches)

    def take(self) -> dict[str, int]:
        """The counts since the last take."""
        out = dict(self.matches)
        self.matches.clear()
        return out


def store(db: Path, tid: str, index: int) -> None:
    """Match ``index`` of the demo tournament ``tid`` (any index: out of schedule order)."""
    seats = tuple(DEMO_BOTS[(index + j) % len(DEMO_BOTS)] for j in range(len(DEMO_BOTS)))
    with Storage(db) as st:
        st.save_match(tid, match_id=f"{tid}-m{index:04d}", index=index, table=0,
                      set_no=index // 3, seed=index, seats=seats,
                      record=demo_record(index, seats, max_deals=2),
                      started_at=1_700_000_000.0 + 60 * index,
                      finished_at=1_700_000_030.0 + 60 * index)  # fmt: skip


def from_scratch(db: Path, spec: str) -> dict[str, Any]:
    """``arena leaderboard --season``'s standings of the database as it is."""
    with Storage.open_readonly(db) as st:
        lb = build_season(st, spec, select_season(st, spec))
    return {"rows": lb.rows, "history": lb.history, "h2h": lb.h2h, "season": lb.season,
            "notes": lb.notes}  # fmt: skip


def incremental(
    builder: SeasonBuilder | None, db: Path, spec: str
) -> tuple[SeasonBuilder, dict[str, Any]]:
    """``builder`` (None: a new one) brought up to date, and its standings."""
    with Storage.open_readonly(db) as st:
        infos = select_season(st, spec)
        if builder is None or not builder.update(st, infos):
            builder = SeasonBuilder(st, infos)
            assert builder.update(st, infos)
        lb = builder.build(spec, infos)
    return builder, {"rows": lb.rows, "history": lb.history, "h2h": lb.h2h, "season": lb.season,
                     "notes": lb.notes}  # fmt: skip


def test_a_finished_week_is_read_once_and_the_running_week_from_its_new_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=4, max_deals=2, tournament_id="club-w1")
    make_demo_db(db, matches=2, max_deals=2, tournament_id="club-w2", total=8, finished=False)
    source, reads = DataSource(db), Reads(monkeypatch)
    first = source.season("club-w")
    assert reads.take() == {"club-w1": 4, "club-w2": 2} and first["completed"] == 6
    store(db, "club-w2", 2)
    # (kept while running for THROTTLE times its cost: none here)
    monkeypatch.setattr(data, "THROTTLE", 0.0)
    second = source.season("club-w")
    assert reads.take() == {"club-w2": 1}  # (the old code: club-w1's 4 and club-w2's 3)
    assert second["completed"] == 7
    assert second["rows"] == from_scratch_rows(db)
    reads.take()  # (from_scratch_rows's)
    # the running week ends: its last matches read, and club-w1 still not again
    make_demo_db(db, matches=8, max_deals=2, tournament_id="club-w2", total=8)
    done = source.season("club-w")
    assert reads.take() == {"club-w2": 5} and done["completed"] == 12
    assert done["rows"] == from_scratch_rows(db)
    reads.take()
    # nothing stored since: the document kept, nothing read
    source.season("club-w")
    assert reads.take() == {}


def from_scratch_rows(db: Path) -> list[Any]:
    """The rows ``/api/season`` would show of a season read from scratch."""
    return DataSource(db).season("club-w")["rows"]


def test_kept_standings_are_those_read_from_scratch_to_the_bit(tmp_path: Path) -> None:
    """Matches of the running week stored out of schedule order (tables end out of order)
    are rated in schedule order, as ``arena leaderboard --season`` rates them."""
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=3, max_deals=2, tournament_id="club-w1")
    make_demo_db(db, matches=1, max_deals=2, tournament_id="club-w2", total=9, finished=False)
    builder, _ = incremental(None, db, "club-w")
    for index in (4, 2, 3, 1, 8):
        store(db, "club-w2", index)
        kept, now = incremental(builder, db, "club-w")
        assert kept is builder  # (brought up to date, not made again)
        assert now == from_scratch(db, "club-w")


def test_a_deleted_match_or_a_growing_session_before_the_last_week_makes_it_again(
    tmp_path: Path,
) -> None:
    """What only a new builder counts right: a match deleted by hand, and a week whose
    schedule indices grow into the next one's (an `arena serve` session, whose schedule is
    empty, followed by another: every index of the next moves)."""
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=2, max_deals=2, tournament_id="club-w1", total=0, finished=False)
    make_demo_db(db, matches=2, max_deals=2, tournament_id="club-w2")
    builder, _ = incremental(None, db, "club-w")
    store(db, "club-w1", 2)  # (club-w1 now spans 3 indices: club-w2's move)
    with Storage.open_readonly(db) as st:
        assert not builder.update(st, select_season(st, "club-w"))
    builder, now = incremental(None, db, "club-w")
    assert now == from_scratch(db, "club-w")
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM matches WHERE id = 'club-w2-m0000'")
    with Storage.open_readonly(db) as st:
        assert not builder.update(st, select_season(st, "club-w"))
    _, now = incremental(None, db, "club-w")
    assert now == from_scratch(db, "club-w")
