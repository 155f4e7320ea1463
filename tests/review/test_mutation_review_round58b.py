"""Round 58b's mutation review of round 58's product changes (perf58r, perf58r2, perf58s,
journey58, review58): each test here kills a mutant that every earlier test let live, or
pins a defect the review found."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage, StorageError


def _make_other_programs(db: Path) -> None:
    """Another program's database: its tables, in WAL mode, no log beside it yet."""
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("CREATE TABLE notes (body TEXT)")
    c.commit()
    c.close()


@pytest.mark.parametrize("kind", ["empty", "foreign"])
def test_a_refused_sound_database_keeps_the_log_its_writer_just_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Defect: a reader refusing a database it read whole (an empty one: `arena run`
    making it, between setting WAL mode and writing its schema; another program's) removed
    the ``-wal`` and ``-shm`` that were not there when it began, taking those of a writer
    that opened them meanwhile while its log was still empty: the writer's commits went to
    an unlinked log, and every later connection read the database without them. Only a
    damaged database's (a writer cannot use it) are removed."""
    db = tmp_path / "t.sqlite"
    if kind == "empty":
        c = sqlite3.connect(db)
        c.execute("PRAGMA journal_mode = WAL")  # (as Storage() does before its schema)
        c.close()
        said = "is an empty database"
    else:
        _make_other_programs(db)
        said = "is not a Thousand Arena database"
    wal, shm = (db.with_name(db.name + s) for s in ("-wal", "-shm"))
    assert not wal.exists() and not shm.exists()
    writer: list[sqlite3.Connection] = []
    check = Storage._check_identity

    def writer_starts(self: Storage) -> Any:
        # The writer opens the database as the reader reads it: its log made, empty.
        w = sqlite3.connect(db, isolation_level=None)
        w.execute("SELECT * FROM sqlite_master").fetchall()
        writer.append(w)
        return check(self)

    monkeypatch.setattr(Storage, "_check_identity", writer_starts)
    with pytest.raises(StorageError, match=said):
        Storage.open_readonly(db)
    (w,) = writer
    try:
        assert wal.exists() and shm.exists()
        w.execute("CREATE TABLE written (x INTEGER)")
        w.execute("INSERT INTO written VALUES (1)")
        other = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:  # (what the writer committed, as any other connection reads it)
            assert other.execute("SELECT x FROM written").fetchall() == [(1,)]
        finally:
            other.close()
    finally:
        w.close()
