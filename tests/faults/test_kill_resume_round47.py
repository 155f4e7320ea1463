"""Kill and resume, round 47: a tournament killed at bad moments, its database made hard to
write, and the same command run again.

Fixed in this round (each test says what the defect was):

- a database this user may read but not write (mode 0444, another user's, ``chattr +i``; or
  only its ``-wal``, left by a killed run) was opened read-only by SQLite without a word: a
  resumed run started every bot and played the first matches, then stopped at the first
  store, "read-only", throwing them away (minutes of a slow bot's), and named the database
  where its ``-wal`` was the file to make writable. It is refused before anything starts now,
  naming the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.storage import Storage, StorageError, StorageLockedError
from arena.tournament import RunOptions, TournamentError, TournamentOutcome, run_tournament
from arena.tournament.config import TournamentConfig, parse_config
from tests.arena.fake_referee import FakeReferee
from tests.faults.test_faults import tiny_fs  # noqa: F401 (the fixture: a 1 MiB tmpfs)


def _fake_config(tmp: Path, db: Path) -> TournamentConfig:
    data = {"name": "k47", "ruleset": "classic", "max_deals": 2, "seed": 47,
            "concurrency": 2, "db": str(db), "out": str(tmp / "out"),
            "bots": ["random", "heuristic", "counting", "pimc"]}  # fmt: skip
    return parse_config(data, source="round47", base_dir=tmp)


def _fake_run(
    cfg: TournamentConfig, referee: FakeReferee, max_new: int | None = None
) -> TournamentOutcome:
    return asyncio.run(run_tournament(cfg, RunOptions(progress=False, max_new_matches=max_new),
                                      referee_factory=lambda c: referee,
                                      serve=False, launch_bots=False))  # fmt: skip


def _rows(db: Path) -> dict[int, tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as c:
        return {r[0]: tuple(r[1:]) for r in c.execute(
            "SELECT idx, id, seed, finished_at, record_json FROM matches")}  # fmt: skip


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """``path`` made unwritable for this process: its mode (0444) for a user, `chattr +i`
    for root (whom modes do not stop); skipped where neither can be done."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip("root, and no `chattr +i` here to make a file read-only to root")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.parametrize("which", ["", "-wal"])
def test_a_database_this_user_cannot_write_is_refused_before_any_match(
    tmp_path: Path, which: str
) -> None:
    db = tmp_path / "t.sqlite"
    cfg = _fake_config(tmp_path, db)
    first = _fake_run(cfg, FakeReferee(), max_new=5)
    assert first.completed == 5
    before = _rows(db)
    # A reader holding the database open keeps its -wal and -shm beside it, as a run that
    # was killed leaves them.
    with contextlib.closing(sqlite3.connect(db)) as reader:
        reader.execute("SELECT COUNT(*) FROM matches").fetchone()
        target = Path(f"{db}{which}")
        assert target.exists()
        referee = FakeReferee()
        with _read_only(target), pytest.raises((StorageError, TournamentError)) as info:
            _fake_run(cfg, referee)
    msg = str(info.value)
    assert f"{target} is read-only" in msg, msg
    assert not referee.calls, f"matches played, then thrown away: {dict(referee.calls)}"
    assert _rows(db) == before
    again = _fake_run(cfg, FakeReferee())
    assert again.completed == again.total == 24
    after = _rows(db)
    assert {i: after[i] for i in before} == before


def test_a_write_lock_held_when_the_run_starts_is_said_before_any_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program holding a write transaction (a `sqlite3` shell left in a BEGIN)
    as the same command resumes: the run started its bots and played the first matches,
    waited out SQLite's 5 s at the first store, then stopped "locked" and threw them away
    (27 s with 4 random bots). The lock is waited for as any write's, then refused before
    anything is played; once it is gone the run resumes."""
    defaults = Storage.__init__.__kwdefaults__
    assert defaults is not None and defaults["timeout"] == 5.0
    monkeypatch.setitem(defaults, "timeout", 0.5)  # (the wait is SQLite's: not under test)
    db = tmp_path / "t.sqlite"
    cfg = _fake_config(tmp_path, db)
    assert _fake_run(cfg, FakeReferee(), max_new=5).completed == 5
    before = _rows(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        referee = FakeReferee()
        with pytest.raises(StorageLockedError) as info:
            _fake_run(cfg, referee)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert f"{db} is locked by another process while opening it to store results" in str(info.value)
    assert not referee.calls, f"matches played, then thrown away: {dict(referee.calls)}"
    assert _rows(db) == before
    again = _fake_run(cfg, FakeReferee())
    assert again.completed == again.total == 24


@pytest.mark.usefixtures("tiny_fs")
def test_a_disk_still_full_when_the_run_is_resumed_is_said_of_the_lock_file(
    tmp_path: Path,
) -> None:
    """A run stopped by a full disk said so; the same command, run before any space was
    freed, said only "Error: cannot write: No space left on device" (exit 1), naming no
    file: writing the lock file's pid failed, and failed again as it was closed. Now the
    lock file and the full disk are named, nothing is left behind, and once there is room
    the lock is taken."""
    from arena.storage import StorageFullError
    from arena.tournament.runner import DatabaseLock

    db = tmp_path / "tiny" / "t.sqlite"  # (tiny_fs's mount)
    filler = db.with_name("filler")
    with filler.open("wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 4096)
    lock = DatabaseLock(db)
    with pytest.raises(StorageFullError) as info:
        lock.acquire("t")
    assert str(info.value).startswith(f"{db}.lock: the disk is full while writing the lock file")
    assert "Nothing stored is lost; free some space and run again" in str(info.value)
    assert not Path(f"{db}.lock").exists()
    filler.unlink()
    lock.acquire("t")
    assert Path(f"{db}.lock").read_text() == f"{os.getpid()} t"
    lock.release()
