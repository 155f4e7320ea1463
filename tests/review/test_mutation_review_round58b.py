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


def _damaged(tmp_path: Path) -> Path:
    """An arena database cut to its first half, as a copy that stopped leaves it."""
    whole = tmp_path / "whole.sqlite"
    Storage(whole).close()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    return cut


def test_a_damaged_databases_logs_that_were_there_before_are_kept(tmp_path: Path) -> None:
    """Only the logs the refused reader made are removed: those found beside the file
    (another's, even empty) stay."""
    db = _damaged(tmp_path)
    logs = [db.with_name(db.name + s) for s in ("-wal", "-shm")]
    for f in logs:
        f.write_bytes(b"")
    with pytest.raises(StorageError, match="damaged"):
        Storage.open_readonly(db)
    assert all(f.exists() for f in logs)


def test_a_damaged_databases_log_a_writer_wrote_meanwhile_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log absent at the start but not empty by the refusal: a writer used it; kept."""
    db = _damaged(tmp_path)
    wal = db.with_name(db.name + "-wal")

    def written_then_damaged(self: Storage) -> Any:
        wal.write_bytes(b"frames")
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(Storage, "_check_identity", written_then_damaged)
    with pytest.raises(StorageError, match="damaged"):
        Storage.open_readonly(db)
    assert wal.read_bytes() == b"frames"


def test_ends_early_tells_a_cut_file_from_a_bad_one() -> None:
    """An unterminated string anywhere is the end cut off; a bad byte at the very end that
    is no cut character (invalid start byte) and one in the middle are not."""
    import json

    from arena.storage import _ends_early

    def error(call: Any) -> BaseException:
        try:
            call()
        except (ValueError, UnicodeDecodeError) as e:
            return e
        raise AssertionError("no error")

    assert _ends_early(error(lambda: json.loads('{"players": ["ann", "bo')))
    assert not _ends_early(error(lambda: json.loads('{"a": tru, "b": 1}')))
    assert _ends_early(error(lambda: b'{"s": "\xe2\x99'.decode("utf-8")))  # (a suit cut)
    assert not _ends_early(error(lambda: b'{"s": 1}\xff'.decode("utf-8")))
    assert not _ends_early(error(lambda: b'{"s": \xff 1}'.decode("utf-8")))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("9" * 5000, "99999999999999999999... (5,000 digits) is out of range"),
        ("1_0" * 20, "... (40 digits) is out of range"),
        # (under 4,300 digits, its text over: int refuses it, leading zeros counted)
        ("0" * 10 + "9" * 4295, "... (4,295 digits) is out of range"),
        ("+" + "9" * 40, "'--seed': 99999999999999999999... (40 digits) is out of range"),
        ("1" * 40 + "x", "is not a valid integer"),
    ],
)
def test_a_seeds_text_is_counted_as_int_reads_it(text: str, said: str) -> None:
    """Past 4,300 digits refused as out of range (not int's refusal); the digits counted
    without ``_``; a ``+`` not shown; a text that is no integer is said to be none."""
    import click
    from click.testing import CliRunner

    from sdk.cli import _SEED

    @click.command()
    @click.option("--seed", type=_SEED)
    def cmd(seed: int) -> None:
        raise AssertionError(seed)

    r = CliRunner().invoke(cmd, ["--seed", text])
    assert r.exit_code == 2, r.output
    assert said in r.output, r.output


def test_an_export_names_a_file_it_wrote_not_the_first_listed(tmp_path: Path) -> None:
    """The first record listed damaged: the file named as an example is one written (the
    second's); none written: no example named, exit 1."""
    from click.testing import CliRunner

    from arena.cli import main as arena
    from arena.web.demo import make_demo_db

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=2, max_deals=1)
    with sqlite3.connect(db) as c:
        ids = [r[0] for r in c.execute("SELECT id FROM matches ORDER BY idx")]
        c.execute("UPDATE matches SET record_json = '{\"cut' WHERE id = ?", (ids[0],))
    out = tmp_path / "exported"
    r = CliRunner().invoke(arena, ["replay", "--list", "--db", str(db), "--export", str(out)])
    assert r.exit_code == 1, r.output
    assert f"wrote 1 record(s) into {out} ({out / ids[1]}.json, ...)" in r.stderr, r.stderr
    with sqlite3.connect(db) as c:
        c.execute("UPDATE matches SET record_json = '{\"cut' WHERE id = ?", (ids[1],))
    r = CliRunner().invoke(arena, ["replay", "--list", "--db", str(db), "--export", str(out)])
    assert r.exit_code == 1, r.output
    assert f"wrote 0 record(s) into {out}\n" in r.stderr, r.stderr
