"""The end of a run, stored together (round 55): a table with no match left while other
tables still play hands its last store over without needing it (it waits for company,
as the stores of tables still playing do), and the last table to stop playing needs
every store still waiting: the run's ends go in fewer commits than there are tables. A
table's wait for its last store counts as recording only for the run's tail (after the
last table's play ended), not while it had nothing to play and others still played."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.tournament import runner
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

ROOT = Path(__file__).resolve().parents[2]


def _stored_ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return sorted(r[0] for r in c.execute("SELECT id FROM matches"))


class _Handed:
    """What the tables hand over to be stored: each match id (in order), each table's last
    one (by its worker task), the group stores' object, and the commits' matches."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[str] = []
        self.ends: dict[Any, str] = {}
        self.stores: list[runner._GroupStores] = []
        self.groups: list[list[str]] = []
        submit, save = runner._GroupStores.submit, Storage.save_matches

        def handed(stores: runner._GroupStores, match: Any) -> Any:
            self.stores[:] = [stores]
            self.ids.append(match.match_id)
            self.ends[asyncio.current_task()] = match.match_id
            return submit(stores, match)

        def saved(storage: Storage, tid: str, matches: Any) -> Any:
            self.groups.append([m.match_id for m in matches])
            return save(storage, tid, matches)

        monkeypatch.setattr(runner._GroupStores, "submit", handed)
        monkeypatch.setattr(Storage, "save_matches", saved)

    def writing(self) -> bool:
        return bool(self.stores) and self.stores[0]._writing


class _OneEndAtATime(FakeReferee):
    """The tables' matches, but the last ``tables`` started end one at a time, in the
    order started: the k-th once every match before it has been handed over and no group
    is being written (so a store needed at once is a commit of its own)."""

    def __init__(self, handed: _Handed, first_of_the_last: int) -> None:
        super().__init__()
        self.handed, self.first = handed, first_of_the_last
        self.started = 0

    async def run_match(self, mid: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        n = self.started
        self.started += 1
        record = await super().run_match(mid, *args, **kwargs)
        while n >= self.first and (len(self.handed.ids) < n or self.handed.writing()):
            await asyncio.sleep(0.001)
        return record


def test_the_runs_last_stores_go_in_fewer_commits_than_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At concurrency 8 (24 matches, 3 a table), the tables' last matches ending one at a
    time: each table's last store was needed at once, a commit of its own (8 commits of
    one). The ends now wait for company (a group of half the tables, another table's
    need, or the last table's), fewer commits than tables; every match is stored once."""
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 3600.0)  # (no commit by the timer)
    handed = _Handed(monkeypatch)
    out = _run(make_config(tmp_path, concurrency=8), _OneEndAtATime(handed, 16))
    assert out.finished and out.played_now == 24 and len(handed.ends) == 8
    stored = [m for g in handed.groups for m in g]
    assert sorted(stored) == sorted(handed.ids) == _stored_ids(out.db)
    ends = set(handed.ends.values())
    holding = [g for g in handed.groups if set(g) & ends]
    assert len(holding) < 8 and max(len(g & ends) for g in map(set, holding)) > 1, handed.groups
    assert out.commits == len(handed.groups)


def _no_group_but_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores are written only when a table needs one (or the last table stops): no group
    size reached, no timer."""
    init = runner._GroupStores.__init__

    def held(stores: runner._GroupStores, *args: Any) -> None:
        init(stores, *args)
        stores._group = 1000

    monkeypatch.setattr(runner._GroupStores, "__init__", held)
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 3600.0)


class _LastPlaysLong(FakeReferee):
    """The last match started returns once every other match has been handed over (their
    tables have stopped playing), ``play_s`` later on the test's clock ``now``; the commit
    holding it takes ``commit_s`` on that clock. The clock moves at no other time."""

    def __init__(self, handed: _Handed, total: int, now: list[float],
                 play_s: float, commit_s: float) -> None:  # fmt: skip
        super().__init__()
        self.handed, self.total, self.now = handed, total, now
        self.play_s, self.commit_s = play_s, commit_s
        self.started = 0
        self.last: str | None = None

    async def run_match(self, mid: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.started += 1
        if self.started == self.total:
            self.last = mid
        record = await super().run_match(mid, *args, **kwargs)
        if mid == self.last:
            while len(self.handed.ids) < self.total - 1:
                await asyncio.sleep(0.001)
            self.now[0] += self.play_s
        return record

    def commit(self, matches: Any) -> None:
        if self.last in [m.match_id for m in matches]:
            self.now[0] += self.commit_s


def test_an_idle_tables_wait_is_not_counted_and_the_runs_tail_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a clock the test moves (the tables' waits are timed with ``runner._clock``):
    three of four tables stop playing while the fourth plays its last match for 100 s,
    their last stores waiting meanwhile (at least one of them all that time: nothing
    needs it); the fourth's last store then takes 7 s to commit. Recording kept the run
    going 7 s (its tail), not the 100 s the idle tables waited: the tables' wait counted
    is the tail, whole; the idle waits are told apart, not in ``record_s``. (Before,
    every table's whole wait for its last store counted, summed over the tables and
    divided by them: an idle table's time waited counted too.)"""
    now = [0.0]
    monkeypatch.setattr(runner, "_clock", lambda: now[0])
    _no_group_but_needs(monkeypatch)
    handed = _Handed(monkeypatch)
    referee = _LastPlaysLong(handed, 24, now, play_s=100.0, commit_s=7.0)
    save = Storage.save_matches  # (handed's: it records the groups)

    def timed(storage: Storage, tid: str, matches: Any) -> Any:
        referee.commit(matches)
        return save(storage, tid, matches)

    monkeypatch.setattr(Storage, "save_matches", timed)
    out = _run(make_config(tmp_path, concurrency=4), referee)
    assert out.finished and out.played_now == 24 and now[0] == 107.0
    assert out.record_last_wait_s == 7.0  # the tail: the last table's play ended at 100
    assert out.record_wait_s == 7.0  # (no table waited for a store before its next match)
    assert out.record_idle_wait_s >= 100.0 / 4  # (one idle table, at least, for 100 s)
    assert out.store_cpu_s < 7.0 and out.build_cpu_s == 0.0 and out.rate_s == 0.0
    assert out.record_s == pytest.approx(out.finalize_s + 7.0)


def _config(tmp: Path) -> Any:
    """The tournament of the stop below: 4 bots, 24 matches of 2 deals, 4 tables."""
    return make_config(tmp, concurrency=4, max_deals=2)


#: The tournament of :func:`_config`, its stores written only when a table needs one,
#: sent SIGINT by itself once every match but the last one playing has been handed over:
#: the other tables have stopped, their last stores waiting for company. Prints, as JSON,
#: whether it stopped, the matches handed over, each count with the matches stored then,
#: and how many stores waited when the signal was sent.
_STOPPED_WHILE_ENDS_WAIT = """
import asyncio, contextlib, json, os, signal, sqlite3, sys
from pathlib import Path
import pytest
from arena.tournament import runner
from arena.tournament.runner import Interrupted
from tests.arena.test_run_ends_round55 import _Handed, _config, _no_group_but_needs
from tests.arena.fake_referee import FakeReferee, run_fake

cfg = _config(Path(sys.argv[1]))
mp = pytest.MonkeyPatch()
_no_group_but_needs(mp)
handed = _Handed(mp)
counted, waiting = [], []

def stored():
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        return c.execute("SELECT COUNT(*) FROM matches").fetchone()[0]

class Signalled(FakeReferee):
    async def run_match(self, mid, *args, **kwargs):
        last = sum(self.calls.values()) == 23  # (the last match to start)
        record = await super().run_match(mid, *args, **kwargs)
        if last:
            while len(handed.ids) < 23:
                await asyncio.sleep(0.001)
            waiting.append(len(handed.stores[0]._waiting))
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(3600)
        return record

update = runner._Display.update

def count(self, book, played):
    counted.append((played, stored()))
    update(self, book, played)

mp.setattr(runner._Display, "update", count)
try:
    run_fake(cfg, Signalled())
    stopped = False
except Interrupted:
    stopped = True
print(json.dumps({"stopped": stopped, "handed": handed.ids, "counted": counted,
                  "waiting": waiting}))
"""


def test_a_stop_while_the_ends_wait_loses_no_match_counted(tmp_path: Path) -> None:
    """SIGINT while three tables have stopped playing and their last stores wait for
    company (the fourth still plays): the run stops; every match counted was stored when
    counted; every match handed over is stored, whole (the stop writes those waiting,
    uncounted); the match being played is not; and the same command run again ends with
    the ratings of a run never stopped, one match at a time."""
    run = tmp_path / "run"
    run.mkdir()
    done = subprocess.run([sys.executable, "-c", _STOPPED_WHILE_ENDS_WAIT, str(run)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["stopped"] and said["waiting"][0] >= 3, said  # (the three ends, at least)
    cfg = _config(run)
    assert _stored_ids(cfg.db) == sorted(said["handed"]) and len(said["handed"]) == 23
    assert all(stored >= played for played, stored in said["counted"]), said["counted"]
    assert len(said["counted"]) <= 23 - said["waiting"][0]
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        rows = c.execute("SELECT m.deals, (SELECT COUNT(*) FROM deals d"
                         " WHERE d.match_id = m.id) FROM matches m").fetchall()  # fmt: skip
    assert rows and all(deals == n for deals, n in rows)
    again = _run(cfg)
    assert again.finished and again.played_now == 1
    one = make_config(tmp_path / "one", concurrency=1, max_deals=2)
    assert _run(one).finished
    with Storage(cfg.db) as a, Storage(one.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(one.tournament_id)
