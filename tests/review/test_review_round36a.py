"""Review of round 36's merges (the storage's overwritten-in-place check, the protocol's
early refusal, ``arena rules --players``, the SDK's raise site, wins and ``--records``).

(1) The check for a database overwritten in place read the file's header by opening the
file and closing it after every write: closing a descriptor of a file drops every POSIX
lock the process holds on it, SQLite's own among them, so a connection of another process
that closed next took itself for the file's last one and removed the write-ahead log the
run went on writing to (its later matches were seen by no other process).
(2) Closing a database found overwritten in place held off SQLite's copying of its log with
another connection, reading: a file copied there that is no database (text, a file cut
short) gave that connection no lock, and closing wrote the run's pages into the file "left
as it was copied"; and the connection left an empty ``-wal`` beside a database copied there.
(3) The place named for a bot's error (``raise_site``) skipped the installed libraries to
find the bot's line past the SDK and the engine: a bot installed with pip, in them itself,
had an SDK helper's error placed in the engine again (every line of it one place).
(4) A constant table named in capitals given as an ``__init__`` default (``def
__init__(self, weights=WEIGHTS)``) was warned of as state every match's bot shares, with
advice to default it to None; on the class, such a table is not warned of.
(5) ``arena-bot try --records DIR`` wrote each record over the file of its id: a write cut
short (a full disk, a file size limit, Ctrl-C) left a piece of the new record where the
whole old one was.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import storage as storage_module
from arena.storage import StorageError
from tests.arena.test_storage import _record, _save, _setup

ROOT = Path(__file__).resolve().parents[2]


def _count_in_another_process(db: Path) -> int:
    """The matches another process sees in ``db``, through a read-write connection that it
    then closes (as the ``sqlite3`` shell or any program does)."""
    code = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1])\n"
        "print(c.execute('SELECT COUNT(*) FROM matches').fetchone()[0])\n"
        "c.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def test_a_reader_closing_in_another_process_leaves_the_running_log_alone(
    tmp_path: Path,
) -> None:
    """Defect: after each write the header check opened and closed the database file,
    which dropped this process's SQLite locks on it; a reader in another process closing
    then removed the -wal and -shm the run still wrote to, and the run's next match was
    not seen by another process (1 match where 2 were stored)."""
    setup, save, record = _setup, _save, _record
    db = tmp_path / "arena.sqlite"
    st = setup(db)
    try:
        save(st, 0, record(seed=1))
        assert _count_in_another_process(db) == 1
        assert db.with_name(db.name + "-wal").exists()  # (the run's log, still in use)
        save(st, 1, record(seed=2))
        assert _count_in_another_process(db) == 2
        assert st._mark_seen  # (the check itself still reads the file's mark)
    finally:
        st.close()


def _overwrite_and_close(tmp_path: Path, content: bytes | None) -> tuple[Path, bytes]:
    """A run's database overwritten in place (by another arena database when ``content`` is
    None, else by those bytes), the run's next write refused, and the run closed: the path
    and the bytes copied there."""
    setup, save, record = _setup, _save, _record
    other = tmp_path / "other.sqlite"
    if content is None:
        with setup(other, "o1") as o:
            save(o, 0, record(seed=5), "o1")
    else:
        other.write_bytes(content)
    db = tmp_path / "arena.sqlite"
    st = setup(db)
    try:
        for i in range(3):
            save(st, i, record(seed=i + 1))
        st.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (the file holds the pages)
        save(st, 3, record(seed=4))  # (and the log a few more)
        shutil.copyfile(other, db)
        with pytest.raises(StorageError, match="overwritten in place"):
            save(st, 4, record(seed=5))
    finally:
        st.close()
    return db, other.read_bytes()


@pytest.mark.parametrize(
    "content", [b"notes, not a database\n" * 20, b"SQLite format 3\x00 cut"], ids=["text", "short"]
)
def test_a_file_that_is_no_database_copied_in_place_is_left_as_copied(
    tmp_path: Path, content: bytes
) -> None:
    """Defect: a file that is no database copied over the run's (a text file, a database
    cut short) gave the connection meant to hold off SQLite's closing checkpoint no lock:
    closing wrote the run's log into it (a text file of 440 bytes became 100 KiB of pages)."""
    db, copied = _overwrite_and_close(tmp_path, content)
    assert db.read_bytes() == copied
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.sqlite", "other.sqlite"]


def test_closing_after_an_overwrite_leaves_no_log_beside_the_database_copied_in(
    tmp_path: Path,
) -> None:
    """Defect: closing made an empty ``arena.sqlite-wal`` beside the database copied in (the
    connection that held off the checkpoint made it); nothing is left beside it now, and
    the database copied in is left byte for byte."""
    db, copied = _overwrite_and_close(tmp_path, None)
    assert db.read_bytes() == copied
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.sqlite", "other.sqlite"]


def test_without_the_file_lock_a_reading_connection_still_holds_off_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the lock of an open file description is not had (not Linux), the connection
    reading the database copied in holds the checkpoint off as before: the file is left
    byte for byte (pinned)."""
    monkeypatch.setattr(storage_module, "_hold_off_writers", lambda path, opened: None)
    db, copied = _overwrite_and_close(tmp_path, None)
    assert db.read_bytes() == copied


PIP_BOT = """from sdk import hand


def misuse():
    hand.trick_winner([], None)  # the bot's line


def caught():  # (as the SDK's runner catches it: the traceback holds the bot's frames on)
    try:
        misuse()
    except ValueError as e:
        return e
"""


def test_a_bot_installed_in_site_packages_has_a_helpers_error_placed_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a bot whose file is in the installed libraries (``pip install mybot``: its
    folder is site-packages, here stood for by a folder of the test's) had the error of an
    SDK helper it called wrongly placed in the engine (``game.py``), as before round 36's
    fix for a bot of its own file: each of its lines is a place of its own now too."""
    import sdk.local

    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "pip_installed_bot.py").write_text(PIP_BOT)
    monkeypatch.setattr(sdk.local, "_NOT_THE_BOTS", (*sdk.local._NOT_THE_BOTS, str(site)))
    monkeypatch.syspath_prepend(str(site))
    module = importlib.import_module("pip_installed_bot")
    monkeypatch.delitem(sys.modules, "pip_installed_bot")
    error = module.caught()
    assert isinstance(error, ValueError) and error.__traceback__ is not None
    place = sdk.local.raise_site(error.__traceback__)
    assert (Path(place.filename), place.name, place.lineno) == (
        site / "pip_installed_bot.py",
        "misuse",
        5,
    )
    assert sdk.local.bot_site(error) == place


CONSTANT_DEFAULT = """from sdk import Bot

WEIGHTS = {"A": 11, "10": 10}


class Weighed(Bot):
    TABLE = [1, 2, 3]

    def __init__(self, weights=WEIGHTS, table=TABLE, seen=[]):
        super().__init__()
        self.weights, self.table, self.seen = weights, table, seen
"""


def test_a_constant_table_as_an_init_default_is_not_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: ``def __init__(self, weights=WEIGHTS)``, a table named in capitals in the
    bot's module (or on its class) and shared on purpose, was warned of as "every match's
    instance shares that one ... default it to None", where the same table on the class is
    taken as a constant; a list default of no such name (``seen=[]``) still is."""
    from sdk.local import _shared_state

    (tmp_path / "weighed_bot.py").write_text(CONSTANT_DEFAULT)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("weighed_bot")
    monkeypatch.delitem(sys.modules, "weighed_bot")
    warnings = _shared_state(module.Weighed, vars(module.Weighed()))
    assert [w.split(" as its default")[0] for w in warnings] == [
        "Weighed.__init__() (weighed_bot.py:9) gives seen a list"
    ]


def _try_with_records(records: Path, *, size_limit: int | None) -> subprocess.CompletedProcess[str]:
    """``arena-bot try random -n 1 --max-deals 1 --records DIR`` in a process of its own,
    with a file size limit (``ulimit -f``) of ``size_limit`` bytes."""
    import os

    from tests.support.spawn import python_after

    # The limit set in the child before its exec, not by a preexec_fn (see
    # tests/support/spawn.py: gRPC's fork handler in this test process).
    pair = (size_limit, size_limit)
    setup = (
        "pass"
        if size_limit is None
        else f"import resource; resource.setrlimit(resource.RLIMIT_FSIZE, {pair})"
    )
    prelude = f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run(
        python_after(setup, "-c", prelude + "from sdk.cli import main; sys.exit(main())",
                     "try", "random", "-n", "1", "--max-deals", "1", "--records", str(records)),
        env={**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip


def test_try_records_a_write_cut_short_leaves_the_record_there_before(tmp_path: Path) -> None:
    """Defect: ``try --records`` opened ``DIR/<match id>.json`` for writing, emptying it,
    and wrote the record: one cut short (here a file size limit, as a full disk does) left
    the first bytes of the new record in place of the whole one of an earlier run. The
    record is written beside it and put in its place whole now; the error says so."""
    records = tmp_path / "records"
    done = _try_with_records(records, size_limit=None)
    assert done.returncode == 0, done.stderr
    path = records / "local-0-0.json"
    before = path.read_bytes()
    assert json.loads(before)["result"] and len(before) > 2000
    done = _try_with_records(records, size_limit=2000)
    assert done.returncode == 1
    assert f"cannot write {path}: File too large" in " ".join(done.stderr.split())
    assert path.read_bytes() == before
    assert sorted(p.name for p in records.iterdir()) == ["local-0-0.json"]
