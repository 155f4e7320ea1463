"""Faults amid round 54's group commit (review 54e): a tournament at concurrency 8, its
stores written in groups (of 4 once half the tables have one waiting, more while a group
is written), stopped by a signal while stores wait for
company and while a group is written, by a full disk and by a lock taken mid-run. Every
match counted is stored, whole; every match handed over before a signal is stored; the
error of a group names its matches; and the same command run again ends with the ratings
of a run never stopped, one match at a time (concurrency 1).

A defect, fixed (``test_a_group_failing_as_the_run_stops_is_said``): the error of a group
whose commit failed while the run was stopping (a signal) was said nowhere: its tables,
cancelled, no longer awaited it, and ``_GroupStores`` skipped their futures in silence
(the matches still waiting, written by ``close``, had theirs logged). A group's error,
every match's, was also logged once a match by ``close``: once now.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage, StorageError
from arena.tournament import RunOptions, TournamentError, run_tournament, runner
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run
from tests.faults.test_faults import tiny_fs  # noqa: F401 (the fixture: a 1 MiB tmpfs)

ROOT = Path(__file__).resolve().parents[2]


def _stored(db: Path) -> dict[str, tuple[int, int, int]]:
    """Each stored match: its deals, and how many player and deal rows it has."""
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as c:
        return {
            mid: (deals, players, rows)
            for mid, deals, players, rows in c.execute(
                "SELECT id, deals, (SELECT COUNT(*) FROM match_players WHERE match_id = m.id),"
                " (SELECT COUNT(*) FROM deals WHERE match_id = m.id) FROM matches m"
            )
        }


def _whole(db: Path) -> bool:
    return all(players == 3 and rows == deals for deals, players, rows in _stored(db).values())


def _config(tmp: Path, **kw: Any) -> Any:
    """The tournament: 4 bots, 24 matches of 2 deals, at concurrency 8 (groups of 4)."""
    return make_config(tmp, concurrency=8, **{"max_deals": 2, **kw})


def _ratings(cfg: Any) -> Any:
    with Storage(cfg.db) as st:
        return st.rating_history(cfg.tournament_id)


@pytest.fixture(scope="module")
def unstopped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The ratings of :func:`_config`'s tournament played one match at a time, never
    stopped."""
    cfg = make_config(tmp_path_factory.mktemp("unstopped"), concurrency=1, max_deals=2)
    assert _run(cfg).finished
    return _ratings(cfg)


def _resumes_to(cfg: Any, ratings: Any) -> None:
    """The same tournament run again ends with ``ratings``."""
    again = _run(cfg)
    assert again.finished and again.completed == again.total
    assert _ratings(cfg) == ratings


#: The fake tournament of :func:`_config` at concurrency 8, sent ``signal`` (argv 2) by
#: itself: "waiting" once its first store is handed over (it waits for company), "writing"
#: in its second group's transaction (which finishes only once the tables have stopped).
#: Prints what was handed over and the last count, as JSON.
_SIGNALLED = """
import json, os, signal, sys, threading
from pathlib import Path
from arena.storage import Storage
from arena.tournament import runner
from arena.tournament.runner import Interrupted
from tests.faults.test_group_commit_faults_round54 import _config
from tests.arena.fake_referee import run_fake

sig, where = getattr(signal, sys.argv[2]), sys.argv[3]
handed, counted, groups = [], [0], []
closed = threading.Event()

real_submit = runner._GroupStores.submit

def submit(self, match):
    handed.append(match.match_id)
    future = real_submit(self, match)
    if where == "waiting" and len(handed) == 1:
        os.kill(os.getpid(), sig)
    return future

real_close = runner._GroupStores.close

def close(self):
    real_close(self)
    closed.set()

real_group = Storage._save_group

def save_group(self, tid, matches):
    groups.append(len(matches))
    if where == "writing" and len(groups) == 2:
        os.kill(os.getpid(), sig)
        assert closed.wait(60)  # (the tables stopped: this group is the stop's to finish)
    return real_group(self, tid, matches)

update = runner._Display.update

def count(self, book, played):
    counted[0] = played
    update(self, book, played)

runner._GroupStores.submit, runner._GroupStores.close = submit, close
Storage._save_group = save_group
runner._Display.update = count
try:
    run_fake(_config(Path(sys.argv[1])))
    stopped = False
except Interrupted:
    stopped = True
print(json.dumps({"stopped": stopped, "handed": handed, "counted": counted[0],
                  "groups": groups}))
"""


@pytest.mark.parametrize(("sig", "where"), [("SIGINT", "waiting"), ("SIGTERM", "writing")])
def test_a_signal_amid_group_commits_stores_every_match_handed_over(
    tmp_path: Path, sig: str, where: str, unstopped: Any
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    done = subprocess.run([sys.executable, "-c", _SIGNALLED, str(run), sig, where], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["stopped"], said
    if where == "writing":
        assert said["groups"][1] > 1, said  # (a group, not a store alone)
    stored = _stored(_config(run).db)
    # Every match handed over is stored (those waiting for company written by the stop),
    # each whole, and none counted that is not stored.
    assert sorted(stored) == sorted(said["handed"]), (sorted(stored), said)
    assert _whole(_config(run).db)
    assert said["counted"] <= len(stored) < 24
    _resumes_to(_config(run), unstopped)


def test_a_group_failing_as_the_run_stops_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, unstopped: Any
) -> None:
    """Defect (see the module): the run is stopped while its second group is written, and
    that group's commit fails; the error was said nowhere. It is logged now, once."""
    cfg = _config(tmp_path)
    closed = threading.Event()
    groups: list[list[str]] = []
    refused: list[StorageError] = []
    real_close, real_group = runner._GroupStores.close, Storage._save_group

    def close(self: runner._GroupStores) -> None:
        real_close(self)
        closed.set()

    async def main() -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def save_group(self: Storage, tid: str, matches: Any) -> Any:
            groups.append([m.match_id for m in matches])
            if len(groups) != 2:
                return real_group(self, tid, matches)
            loop.call_soon_threadsafe(task.cancel)
            assert closed.wait(60)  # (the tables have stopped, their futures cancelled)
            refused.append(StorageError(f"test: the disk refused {', '.join(groups[1])}"))
            return [refused[0]] * len(matches)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(runner._GroupStores, "close", close)
            mp.setattr(Storage, "_save_group", save_group)
            with pytest.raises(asyncio.CancelledError):
                await run_tournament(cfg, RunOptions(progress=False),
                                     referee_factory=lambda _c: FakeReferee(),
                                     serve=False, launch_bots=False)  # fmt: skip

    with caplog.at_level(logging.ERROR, logger=runner.log.name):
        asyncio.run(main())
    assert len(groups[1]) > 1 and refused, groups
    said = [r.getMessage() for r in caplog.records if r.name == runner.log.name]
    assert said.count(str(refused[0])) == 1, said
    assert not set(groups[1]) & set(_stored(cfg.db))
    _resumes_to(cfg, unstopped)


@pytest.mark.usefixtures("tiny_fs")
def test_a_full_disk_mid_group_names_the_group_and_loses_nothing(tmp_path: Path) -> None:
    """The disk fills while groups of 4 are written: the run stops naming the group's
    matches; every match counted is stored, whole; the database is intact; with space
    again the same command ends as a run never stopped."""
    # (60 matches of 4 deals: more than the space left holds)
    mount = tmp_path / "tiny"  # (the tiny_fs fixture's)
    cfg = _config(tmp_path, db=str(mount / "t.sqlite"), bots=5, max_deals=4)
    ballast = mount / "ballast"
    ballast.write_bytes(b"\0" * (1024 * 1024 - 300 * 1024 - 64 * 1024))
    counted: list[tuple[int, int]] = []
    groups: list[int] = []
    update, real_group = runner._Display.update, Storage._save_group

    def count(self: Any, book: Any, played: int) -> None:
        counted.append((played, len(_stored(cfg.db))))
        update(self, book, played)

    def save_group(self: Storage, tid: str, matches: Any) -> Any:
        groups.append(len(matches))
        return real_group(self, tid, matches)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner._Display, "update", count)
        mp.setattr(Storage, "_save_group", save_group)
        with pytest.raises(TournamentError) as info:
            _run(cfg)
    msg = str(info.value)
    assert "the disk is full while storing matches " in msg and str(cfg.db) in msg, msg
    assert max(groups) > 1, groups
    assert counted and all(stored >= played for played, stored in counted), counted
    assert 0 < len(_stored(cfg.db)) < 60 and _whole(cfg.db)
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ballast.unlink()
    subprocess.run(["mount", "-o", "remount,size=16m", str(mount)], check=True)
    whole = make_config(tmp_path / "whole", concurrency=1, bots=5, max_deals=4)
    assert _run(whole).finished
    _resumes_to(cfg, _ratings(whole))


def test_a_lock_taken_mid_run_keeps_its_group_out_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unstopped: Any
) -> None:
    """Another program takes the write lock after two groups: the third group's commit
    waits, then the run stops with the lock's error naming that group's matches; the
    groups before are kept, none of that group is stored, and the same command, the lock
    gone, ends as a run never stopped."""
    defaults = Storage.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "timeout", 0.2)  # (SQLite's busy wait: 5 s by default)
    cfg = _config(tmp_path)
    holder: list[sqlite3.Connection] = []
    groups: list[list[str]] = []
    real_group = Storage._save_group

    def save_group(self: Storage, tid: str, matches: Any) -> Any:
        groups.append([m.match_id for m in matches])
        if len(groups) == 3:
            holder.append(sqlite3.connect(cfg.db, isolation_level=None,
                                          check_same_thread=False))  # fmt: skip
            holder[0].execute("BEGIN IMMEDIATE")
        return real_group(self, tid, matches)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Storage, "_save_group", save_group)
        try:
            with pytest.raises(TournamentError) as info:
                _run(cfg)
        finally:
            for h in holder:
                h.execute("ROLLBACK")
                h.close()
    msg = str(info.value)
    third = groups[2]
    assert len(third) > 1 and "locked" in msg, (groups, msg)
    assert f"storing matches {', '.join(third[:8])}" in msg, msg
    stored = _stored(cfg.db)
    assert set(groups[0] + groups[1]) <= set(stored) and not set(third) & set(stored)
    _resumes_to(cfg, unstopped)
