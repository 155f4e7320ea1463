"""Bad input, round 32: stored records and databases edited by hand (places, seats, indexes
of figures no match has, a record that disagrees with its row, another schema version) or
named wrong (a database's -wal file as the database, a database as a record, a match id
that is not UTF-8), storage that is read-only or full (a leaderboard file, `arena serve`'s
record files), and two writers of one `out`. Each gets a one-line error naming what was
wrong, a non-zero exit code, no traceback, and nothing stored is lost or rewritten.

In-process: click's CliRunner, tournaments stored by the fake referee (no bot process);
read-only and full file systems are stood in for (mounting one needs privileges).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as arena
from arena.storage import Storage, StorageError, sidecar_problem
from tests.cli.test_bad_input import _fails, _invoke, _stored_tournament


def _db(tmp: Path) -> Path:
    """A fully stored tournament's database (see ``_stored_tournament``)."""
    _stored_tournament(tmp)
    return tmp / "t.sqlite"


def _edit(db: Path, sql: str, *args: Any) -> None:
    """Change the database by hand, as the sqlite3 shell would."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            assert conn.execute(sql, args).rowcount == 1, sql
    finally:
        conn.close()


def _rows(db: Path) -> tuple[list[Any], ...]:
    """Every row that holds a result: what must be the same after a refused command."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return tuple(
            conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
            for t in ("matches", "match_players", "ratings", "tournaments")
        )
    finally:
        conn.close()


def _first_match(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("SELECT id FROM matches ORDER BY idx LIMIT 1").fetchone()[0])
    finally:
        conn.close()


# ----------------------------------------------------------------------- arena replay


def test_a_match_id_that_is_not_utf8_is_named_not_a_traceback(tmp_path: Path) -> None:
    """Defect: `arena replay --db DB m$'\\xff'` (bytes that are not UTF-8 on the command
    line, which Python holds as a lone surrogate) ended in a UnicodeEncodeError traceback:
    the id was handed to SQLite, which cannot encode it. No stored id holds such bytes: it
    is "no stored match with this id", exit 2, as any other unknown id."""
    db = _db(tmp_path)
    r = _invoke(arena, ["replay", "--db", str(db), "m\udcff"])
    _fails(r, 2, "no stored match with this id in")
    with Storage.open_readonly(db) as st:
        assert st.find_match_ids("m\udcff") == []
        match = _first_match(db)
        assert st.find_match_ids(match[-6:]) == [match]  # (the lookup itself still works)


def test_a_record_path_that_is_no_regular_file_is_not_said_to_be_missing(
    tmp_path: Path,
) -> None:
    """Defect: with a database to look ids up in, `arena replay` of a FIFO, a device or a
    link to nowhere said "no such file" of a file that is there (without a database it
    said "not a regular file" already). Now both say what the file is."""
    db = _db(tmp_path)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    dangling = tmp_path / "moved.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    for path, words in (
        (fifo, "not a regular file (a FIFO, device or socket)"),
        (Path(os.devnull), "not a regular file (a FIFO, device or socket)"),
        (dangling, "a link to a file that does not exist"),
    ):
        text = _fails(_invoke(arena, ["replay", "--db", str(db), str(path)]), 2, words)
        assert "no such file" not in text
    # a name that is neither a file nor a stored id is still "no such file"
    _fails(_invoke(arena, ["replay", "--db", str(db), "m99999"]), 2, "m99999: no such file")


def test_a_database_given_as_the_record_says_how_to_read_it(tmp_path: Path) -> None:
    """Defect (the message): `arena replay runs/x.sqlite` (the database where a record file
    or a match id goes) said "not a readable match record: 'utf-8' codec can't decode byte
    0xf8 in position 102". It now says it is a database and how to show its matches."""
    db = _db(tmp_path)
    for args in (["replay", str(db)], ["replay", "--db", str(db), str(db)]):
        text = _fails(_invoke(arena, args), 2, f"{db}: a database, not a record file",
                      f"arena replay --db {db} MATCH_ID")  # fmt: skip
        assert "codec" not in text


# ------------------------------------------------------------ rows and records edited


@pytest.mark.parametrize("place", [-1, 0, 4, 10**7])
def test_a_place_edited_out_of_range_is_named_not_rated(tmp_path: Path, place: int) -> None:
    """Defect: a player's place edited by hand to one no seat can have (-1, 0, 4 of a
    3-seat match, 10,000,000) was rated as it stood (-1 as a better place than 1st) by
    `arena leaderboard`, `arena web` and a resumed `arena tournament`, which wrote those
    ratings back, exit 0. Now every reader names the match and the seat (exit 1) and the
    resumed run writes nothing."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    match = _first_match(db)
    _edit(db, "UPDATE match_players SET place = ? WHERE match_id = ? AND seat = 0", place, match)
    before = _rows(db)
    words = (f"the stored place of seat 0 in match {match}", f"damaged ({place},", "not 1 to 3")
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, *words)
    _fails(_invoke(arena, ["tournament", "--config", str(config), "--no-progress"]), 1, *words)
    assert _rows(db) == before
    with Storage.open_readonly(db) as st, pytest.raises(StorageError, match="place of seat 0"):
        st.match_results(st.tournaments()[0].id)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda rec: {}, "result.places"),  # emptied: a JSON object still
        (lambda rec: {**rec, "result": None}, "result.places"),
        (lambda rec: {**rec, "result": {**rec["result"], "places": [1, 1, 1]}}, "result.places"),
        (lambda rec: {**rec, "result": {**rec["result"], "scores": [999, 0, 0]}}, "result.scores"),
        (lambda rec: {**rec, "players": list(reversed(rec["players"]))}, "players"),
    ],
    ids=["emptied", "no-result", "places", "scores", "players"],
)
def test_a_record_that_disagrees_with_its_row_stops_the_leaderboard(
    tmp_path: Path, edit: Any, key: str
) -> None:
    """Defect: a stored record edited by hand so that it no longer agrees with its row (the
    record emptied to ``{}``, its result's places or scores changed) was counted as it
    stood by `arena leaderboard` and `arena web`, exit 0: the places and points from the
    record, the ratings from the row, so the two disagreed (a bot 1st more often than its
    rating said; `{}` left its match out of the places), while `arena replay` of that match
    called it damaged. Both are written from the record in one transaction: a difference is
    an edit, named with the match and the key (exit 1)."""
    db = _db(tmp_path)
    match = _first_match(db)
    conn = sqlite3.connect(db)
    rec = json.loads(conn.execute("SELECT record_json FROM matches WHERE id = ?", (match,))
                     .fetchone()[0])  # fmt: skip
    conn.close()
    _edit(db, "UPDATE matches SET record_json = ? WHERE id = ?", json.dumps(edit(rec)), match)
    before = _rows(db)
    for fmt in ("table", "json"):
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", fmt])
        _fails(r, 1, f"the stored record of match {match} is damaged (its {key} is")
    assert _rows(db) == before


def test_a_match_edited_to_seat_a_bot_twice_is_named_not_a_traceback(tmp_path: Path) -> None:
    """Defect: a stored match edited to seat one bot twice (its row's seats, its players'
    row and its record alike: the record then agrees with its row) ended `arena
    leaderboard` in a traceback (ValueError: a bot sits twice, from the ratings), and
    `arena replay` showed it. The referee never seats a bot twice: the seats are damaged,
    named with the match (leaderboard exit 1, replay exit 2)."""
    db = _db(tmp_path)
    match = _first_match(db)
    conn = sqlite3.connect(db)
    seats = json.loads(conn.execute("SELECT seats_json FROM matches WHERE id = ?", (match,))
                       .fetchone()[0])  # fmt: skip
    rec = json.loads(conn.execute("SELECT record_json FROM matches WHERE id = ?", (match,))
                     .fetchone()[0])  # fmt: skip
    conn.close()
    twice = [seats[0], seats[0], *seats[2:]]
    rec["players"] = twice
    _edit(db, "UPDATE matches SET seats_json = ?, record_json = ? WHERE id = ?",
          json.dumps(twice), json.dumps(rec), match)  # fmt: skip
    _edit(db, "UPDATE match_players SET bot = ? WHERE match_id = ? AND seat = 1", seats[0], match)
    before = _rows(db)
    words = (f"the stored seats of match {match} are damaged", "a bot sits twice")
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, *words)
    _fails(_invoke(arena, ["replay", "--db", str(db), match]), 2, *words)
    assert _rows(db) == before


@pytest.mark.parametrize(
    ("key", "value"), [("deltas", 10**400), ("deltas", -(10**400)), ("ms", 10**400)]
)
def test_a_figure_of_hundreds_of_digits_in_a_stored_record_is_named(
    tmp_path: Path, key: str, value: int
) -> None:
    """Defect: a stored record edited to hold a deal delta (or a decision time) of a few
    hundred digits, which the shape check takes as any integer, ended `arena leaderboard`
    (and `arena web`) in a traceback: OverflowError, int too large to convert to float.
    A figure beyond 2**63 - 1 (what SQLite's integers hold; no match comes near) is
    damage, named with the match (exit 1); one at 2**63 - 1 is still counted."""
    db = _db(tmp_path)
    match = _first_match(db)
    conn = sqlite3.connect(db)
    rec = json.loads(conn.execute("SELECT record_json FROM matches WHERE id = ?", (match,))
                     .fetchone()[0])  # fmt: skip
    conn.close()

    def stored(v: int) -> None:
        edited = json.loads(json.dumps(rec))
        deal = edited["deals"][0]
        if key == "ms":
            deal["actions"][0]["ms"] = v
        else:
            deal[key] = [v, *deal[key][1:]]
        _edit(db, "UPDATE matches SET record_json = ? WHERE id = ?", json.dumps(edited), match)

    stored(value)
    before = _rows(db)
    for fmt in ("table", "json"):
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", fmt])
        _fails(r, 1, f"the stored record of match {match} is damaged (deal 0: a figure of about")
    assert _rows(db) == before
    stored(2**63 - 1)
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", "json"])
    assert r.exit_code == 0, r.output


def test_an_untouched_database_still_gives_its_leaderboard(tmp_path: Path) -> None:
    """The checks above pass every record and row the arena wrote (ties, forfeits: the
    fake referee's records have both kinds of result)."""
    db = _db(tmp_path)
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["tournament"]["completed"] > 0


# ------------------------------------------------ a database's own files as databases


def test_a_databases_write_ahead_log_is_refused_as_a_database(tmp_path: Path) -> None:
    """Defect: `--db runs/x.sqlite-wal` (the shell completes it; `sqlite3 -readonly`, as
    docs/tournament.md shows it, leaves an empty one beside the database) was taken as a
    new, empty database: a tournament was played and stored in it, exit 0, and the next run
    on runs/x.sqlite, which SQLite gives that file as its log, deleted it: every match
    stored there was lost. The -wal, -shm, -journal and lock files of an existing database
    are refused as databases (exit 1 for `arena tournament`, 2 for `arena serve --db`), and
    a database found in one of them is not written over."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    before = _rows(db)
    wal = tmp_path / "t.sqlite-wal"
    wal.write_bytes(b"")  # as a read-only reader leaves it
    r = _invoke(arena, ["tournament", "--config", str(config), "--db", str(wal), "--no-progress"])
    _fails(r, 1, f"{wal} is not a database", "write-ahead log (-wal)", f"database {db}")
    assert wal.read_bytes() == b""
    for suffix in ("-shm", "-journal", ".lock"):
        side = tmp_path / f"t.sqlite{suffix}"
        was = side.read_bytes() if side.exists() else None
        with pytest.raises(StorageError, match="is not a database"):
            Storage(side)
        assert (side.read_bytes() if side.exists() else None) == was  # not made, not written
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "aaaaaaaa1"\nb = "bbbbbbbb2"\nc = "cccccccc3"\n')
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                        "--record-dir", str(tmp_path / "rec"), "--db", str(wal)])  # fmt: skip
    _fails(r, 2, "--db", "is not a database", "write-ahead log")
    # A database already in a -wal (stored by an arena before this check): the run on the
    # database beside it refuses to start rather than let SQLite start its log over it.
    wal.unlink()
    shutil.copy(db, wal)
    kept = wal.read_bytes()
    r = _invoke(arena, ["tournament", "--config", str(config), "--no-progress"])
    _fails(r, 1, f"{wal} holds a database of its own", "move it away")
    assert wal.read_bytes() == kept
    assert _rows(db) == before
    # names that merely end so, with no database beside them, are databases like any other
    assert sidecar_problem(tmp_path / "other.sqlite-wal") is None
    assert sidecar_problem(tmp_path / "x.lock") is None


# ------------------------------------------------------ two writers of one out directory


def test_two_writes_of_the_leaderboard_files_into_one_directory_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: every write of the leaderboard files used the same temporary names
    (``leaderboard.json.tmp``...): two at once in one directory (two tournaments that share
    an ``out``, which docs/tournament.md allows; `arena leaderboard --format all` beside a
    run that ends) renamed each other's, the second then failing on a file gone ("No such
    file or directory", exit 1; or a half-written file renamed into place). The writers
    take turns (a lock on the directory): both succeed, every file whole, all of one
    write, none left behind."""
    import sys
    import threading

    from arena.leaderboard import build_leaderboard, write_outputs

    render_module = sys.modules["arena.leaderboard.render"]  # (the package's `render` is
    # the function of that name)
    db = _db(tmp_path)
    with Storage.open_readonly(db) as st:
        lb = build_leaderboard(st, st.tournaments()[0].id)
    out = tmp_path / "shared-out"
    render = render_module.render
    other: list[threading.Thread] = []
    other_failed: list[BaseException] = []

    def write_other(board: Any) -> None:
        try:
            write_outputs(board, out)
        except BaseException as e:  # (said by the test, not lost in its thread)
            other_failed.append(e)

    def render_while_another_writes(board: Any, fmt: str) -> str:
        if fmt == "csv" and not other:  # the first write is half-way: json written
            other.append(threading.Thread(target=write_other, args=(board,)))
            other[0].start()  # the other write, meanwhile (it waits its turn)
            other[0].join(0.5)
        return str(render(board, fmt))

    monkeypatch.setattr(render_module, "render", render_while_another_writes)
    paths = write_outputs(lb, out)
    assert other
    other[0].join(30)
    assert not other[0].is_alive() and other_failed == []
    for fmt, path in paths.items():
        assert path.read_text(encoding="utf-8") == render(lb, fmt)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths.values())


# ------------------------------------------------------------- a newer database schema


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("2", ("was written by a newer Thousand Arena (schema version 2; this one reads 1)",
               "upgrade to read it")),
        ("0", ("has schema version '0', this arena reads 1", "changed outside the arena")),
        ("\x1b[2J", ("has schema version '\\x1b[2J'", "changed outside the arena")),
    ],
    ids=["newer", "older", "escape"],
)  # fmt: skip
def test_a_database_of_another_schema_version_says_which_way(
    tmp_path: Path, version: str, words: tuple[str, ...]
) -> None:
    """Defect (the message): a database stored by a newer arena (its schema version above
    this one's) was told "use another --db file", as if it were not the arena's; a record
    of a newer format says "written by a newer Thousand Arena ... upgrade". Now the database
    says the same; a version no arena wrote is said to be changed by hand, quoted (an escape
    sequence in it was printed to the terminal as it was). Nothing is written either way."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'schema_version'", version)
    before = _rows(db)
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, *words)
    _fails(_invoke(arena, ["tournament", "--config", str(config), "--no-progress"]), 1, *words)
    assert _rows(db) == before


# -------------------------------------------------------------- read-only storage


def test_a_database_on_read_only_storage_is_said_to_be_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (the message): `arena tournament` and `arena serve --db` with a database on a
    file system mounted read-only (an archive, a read-only bind mount) said "cannot open
    DB: check the path and permissions" (SQLite says only "unable to open", for want of its
    -shm), and `arena serve` "cannot open the lock file ...: Read-only file system; remove
    it if no run uses DB", of a file that is not there. Both now say the database is on a
    read-only file system, and that the read-only commands read it there. (Read-only
    storage is stood in for: mounting one needs privileges a test should not use.)"""
    import errno
    import sqlite3 as sqlite

    from arena.tournament.runner import DatabaseLock

    db = tmp_path / "archive" / "t.sqlite"
    db.parent.mkdir()
    read_only = os.statvfs_result((4096,) * 8 + (os.ST_RDONLY, 255))
    monkeypatch.setattr(os, "statvfs", lambda _path: read_only)

    def cannot_open(*_args: Any, **_kwargs: Any) -> Any:
        raise sqlite.OperationalError("unable to open database file")

    with monkeypatch.context() as m:
        m.setattr(sqlite, "connect", cannot_open)
        with pytest.raises(StorageError) as e:
            Storage(db)
    assert str(e.value) == (
        f"{db} is on a read-only file system (opening): use a writable --db path (arena "
        "leaderboard, replay and web read it where it is)"
    )

    def refused(self: Path, *_args: Any, **_kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "open", refused)
    with pytest.raises(StorageError) as e:
        DatabaseLock(db).acquire()
    assert "is on a read-only file system: use a writable --db path" in str(e.value)
    assert "remove it" not in str(e.value)


# ----------------------------------------------------- one leaderboard file, disk full


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_leaderboard_file_that_cannot_be_written_whole_keeps_the_earlier_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """Defect: `arena leaderboard --out FILE` wrote FILE in place: a full disk left the
    earlier leaderboard there cut to what fitted (an empty file, half a JSON document),
    exit 1, where the `--format all` files are written whole or not at all. It is now
    written beside and renamed over it: the earlier file stays as it was (its mode too),
    the error names FILE, and no temporary file is left."""
    import errno

    db = _db(tmp_path)
    target = tmp_path / "site" / f"board.{fmt}"
    target.parent.mkdir()
    target.write_text("the earlier leaderboard\n")
    target.chmod(0o640)
    write_text = Path.write_text

    def disk_full(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        write_text(self, text[: len(text) // 2], *args, **kwargs)  # what fitted
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    with monkeypatch.context() as m:
        m.setattr(Path, "write_text", disk_full)
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", fmt, "--out", str(target)])
    _fails(r, 1, f"cannot write {target}: No space left on device")
    assert target.read_text() == "the earlier leaderboard\n"
    assert [p.name for p in target.parent.iterdir()] == [target.name]
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", fmt, "--out", str(target)])
    assert r.exit_code == 0, r.output
    assert target.read_text() != "the earlier leaderboard\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == [target.name]


def test_a_disk_io_error_with_no_room_left_is_said_to_be_the_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (the message): a database made on a nearly full file system (tmpfs, say) said
    "database error while creating the schema: disk I/O error": SQLite names the want of
    room so only when the database's own pages do not fit, not its -shm index. With under
    1 MiB left, an I/O error is said to be the full disk, with what to do; with room left it
    is the I/O error it is."""
    import sqlite3 as sqlite

    import arena.storage as storage_module

    def io_error() -> sqlite.OperationalError:
        e = sqlite.OperationalError("disk I/O error")
        e.sqlite_errorcode = 4874  # SQLITE_IOERR_SHMSIZE
        return e

    db = tmp_path / "x.sqlite"
    full = os.statvfs_result((4096, 4096, 100, 0, 0, 10, 0, 0, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda _p: full)
    said = storage_module._translate(io_error(), db, "creating the schema")
    assert isinstance(said, storage_module.StorageFullError)
    assert str(said).startswith(f"{db}: the disk is full while creating the schema.")
    roomy = os.statvfs_result((4096, 4096, 10**6, 10**6, 10**6, 10, 0, 0, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda _p: roomy)
    said = storage_module._translate(io_error(), db, "creating the schema")
    assert not isinstance(said, storage_module.StorageFullError)
    assert "disk I/O error" in str(said)


# ------------------------------------------------- arena serve on a full record directory


def test_serve_counts_the_matches_its_full_disk_cut_short_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `arena serve --record-dir` on a disk that filled up (a 100 KiB tmpfs in the
    audit, `--matches 3`) ended "1 match(es) played; records in DIR", exit 0: two matches
    had failed (their record file could not be made) and the one played had a record file
    cut short (without --db, its result is nowhere else), said only in the log lines above.
    The referee counts the records cut short, the lobby the matches that failed, and the
    last line says both, exit 1. (The disk filling up is stood in for.)"""
    import asyncio
    import dataclasses
    import errno

    import arena.cli.serve as serve_module
    from arena.referee import Referee, RefereeConfig
    from arena.referee.lobby import Lobby
    from engine.rules import PRESETS
    from tests.support.harness import attach_in_process, record_fills_after

    one_deal = dataclasses.replace(PRESETS["classic"], max_deals=1)

    # The referee: a record file that stops short mid-match is counted.
    ref = Referee(RefereeConfig(decision_ms=1000, record_dir=tmp_path / "rec"))

    def answer(bot: str, r: Any) -> None:
        from arena.v1 import arena_pb2 as pb

        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    async def two_matches() -> None:
        attach_in_process(ref, ("x", "y", "z"), answer)
        with monkeypatch.context() as m:
            record_fills_after(m, 2)
            cut = await ref.run_match("cut", one_deal, 7, ["x", "y", "z"])
        whole = await ref.run_match("whole", one_deal, 8, ["x", "y", "z"])
        assert cut["result"] is not None and whole["result"] is not None

    asyncio.run(two_matches())
    assert ref.records_cut == 1

    # The lobby: a match that fails (its record cannot be made) is counted.
    class FakeReferee:
        def __init__(self) -> None:
            self.calls = 0

        def idle_bots(self) -> list[str]:
            return ["a", "b", "c"]

        def notify_changed(self) -> None:
            pass

        async def wait_changed(self, timeout: float | None = None) -> None:
            await asyncio.sleep(min(timeout or 0.01, 0.01))

        async def run_match(self, *_args: Any) -> dict[str, Any]:
            self.calls += 1
            if self.calls == 1:
                raise OSError(errno.ENOSPC, "cannot write the record of match m00000")
            return {"result": {"places": [1, 2, 3]}}

    lobby = Lobby(FakeReferee(), one_deal, max_matches=2)  # type: ignore[arg-type]
    asyncio.run(lobby.run())  # (after the failure no match starts for 1 s)
    assert (lobby.finished, lobby.failed) == (1, 1)

    # `arena serve`: exit 1 when its serving says a match fell short, 0 otherwise.
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "aaaaaaaa1"\nb = "bbbbbbbb2"\nc = "cccccccc3"\n')
    for short, code in ((True, 1), (False, 0)):

        async def served(*_args: Any, short: bool = short, **_kw: Any) -> bool:
            return short

        monkeypatch.setattr(serve_module, "_serve", served)
        r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--seed", "1",
                            "--record-dir", str(tmp_path / "rec2")])  # fmt: skip
        assert r.exit_code == code, r.output


def test_a_leaderboard_file_in_a_directory_that_takes_no_new_file_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the whole-file write above keeps: a file its user may write, in a directory
    where he may make no file (the temporary one is refused), is written in place as it
    always was, not refused. (The refusal is stood in for: root may write anywhere.)"""
    db = _db(tmp_path)
    target = tmp_path / "board.json"
    target.write_text("the earlier leaderboard\n")
    write_text = Path.write_text

    def no_new_file(self: Path, *args: Any, **kwargs: Any) -> int:
        if self != target:
            raise PermissionError(13, "Permission denied", str(self))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", no_new_file)
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(target)])
    assert r.exit_code == 0, r.output
    assert json.loads(target.read_text())["tournament"]["completed"] > 0
