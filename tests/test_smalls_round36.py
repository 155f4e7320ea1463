"""Small limits left open after round 35, each pinned by a test that failed before its fix.

(1) ``arena rules`` had no ``--players``: a ruleset whose preset depends on the table size
(``1001`` is ``1001-4p`` for four) could be shown only for three.
(2) A tournament database overwritten in place while a run wrote to it went unnoticed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from arena.storage import Storage, StorageError

ROOT = Path(__file__).resolve().parent.parent


def _rules(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(arena, ["rules", *args])
    return result.exit_code, result.stdout, result.stderr


# --- (1) arena rules --players --------------------------------------------------------------


def test_rules_players_resolves_a_preset_for_that_table() -> None:
    """Defect: ``arena rules 1001 --players 4`` was "no such option"; a match of four
    players under ``1001`` plays ``1001-4p``, and that is what it prints now."""
    code, out, err = _rules("1001", "--players", "4", "--json")
    assert (code, err) == (0, "")
    options = json.loads(out)
    assert (options["name"], options["players"]) == ("1001-4p", 4)
    code, out, _ = _rules("1001", "--players", "3", "--json")
    assert code == 0 and json.loads(out)["players"] == 3


def test_rules_players_sizes_a_file_on_a_sized_preset() -> None:
    """A house file on ``preset = "1001"`` that does not set ``players`` is sized the same way
    (rulesets/tournament-1001.toml for four keeps its own name and options)."""
    path = str(ROOT / "rulesets" / "tournament-1001.toml")
    code, out, err = _rules(path, "--players", "4", "--json")
    assert (code, err) == (0, "")
    options = json.loads(out)
    assert (options["name"], options["players"], options["max_deals"]) == (
        "tournament-1001",
        4,
        60,
    )


def test_rules_players_refuses_a_ruleset_of_another_size() -> None:
    """``classic`` seats 3 whatever count is asked for, ``1001-4p`` seats 4: each is refused
    with the count it seats and the presets that seat the one asked for, exit 2, nothing on
    stdout (it would have shown options no table of that size plays)."""
    code, out, err = _rules("classic", "--players", "4")
    assert (code, out) == (2, "")
    assert err == "error: ruleset 'classic' seats 3 players, not 4; the presets for 4: 1001-4p\n"
    code, out, err = _rules("1001-4p", "--players", "3")
    assert (code, out) == (2, "")
    assert "seats 4 players, not 3; the presets for 3: classic, 1001" in err


def test_rules_players_refuses_a_count_no_ruleset_has() -> None:
    """A count other than 3 or 4 is a usage error naming the option and the range."""
    for bad in ("2", "5", "0", "-1", "four"):
        code, out, err = _rules("1001", "--players", bad)
        assert code == 2 and out == "", bad
        assert "Invalid value for '--players'" in err, bad


# --- (2) a database overwritten in place ----------------------------------------------------


def _storage_helpers() -> tuple[Any, Any, Any]:
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "arena"))
    try:
        mod = importlib.import_module("test_storage")
    finally:
        sys.path.remove(str(ROOT / "tests" / "arena"))
    return mod._setup, mod._save, mod._record


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_database_overwritten_in_place_while_written_is_refused_and_left_alone(
    tmp_path: Path, checkpointed: bool
) -> None:
    """Defect: another database copied over the file in place while a run wrote to it
    (``cp other.sqlite runs/t.sqlite``: the same device and inode, so the deleted-or-replaced
    check saw nothing) went unnoticed: the next results were "stored" (the connection's log
    and cache still showed them), and on closing SQLite copied its log into the other
    database: the run's tournament was gone from the file, or the file was the other one
    with the run's pages written over it. The next write says so now (the file's header
    shows another database's mark), and the file copied there is left byte for byte."""
    setup, save, record = _storage_helpers()
    other = tmp_path / "other.sqlite"
    with setup(other, "o1") as o:
        save(o, 0, record(seed=5), "o1")
    db = tmp_path / "arena.sqlite"
    st = setup(db)
    try:
        for i in range(3):
            save(st, i, record(seed=i + 1))
        if checkpointed:  # (the run's pages in the file itself, not only in its log)
            st.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            save(st, 3, record(seed=4))
        inode = os.stat(db).st_ino
        shutil.copyfile(other, db)  # in place: truncated and written, as cp does
        assert os.stat(db).st_ino == inode
        with pytest.raises(StorageError, match=f"{db} was overwritten in place"):
            save(st, 8, record(seed=9))
        assert st.file_lost
    finally:
        st.close()
    assert db.read_bytes() == other.read_bytes()
    with Storage(db) as back:
        assert back.resolve_tournament(None) == "o1"
        assert back.completed_indices("o1") == {0}
        assert back.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_mark_check_refuses_no_database_written_as_usual(tmp_path: Path) -> None:
    """Not a defect (pinned): the mark that tells another database from this one is the same
    for every connection that writes the file (two writers, checkpoints between, a reopen),
    and a database made before it had one (``user_version`` 0) gets one when opened."""
    setup, save, record = _storage_helpers()
    db = tmp_path / "arena.sqlite"
    first = setup(db)
    second = Storage(db)
    try:
        for i in range(6):
            save(first if i % 2 else second, i, record(seed=i + 1))
            first.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        marks = {st.conn.execute("PRAGMA user_version").fetchone()[0] for st in (first, second)}
        assert len(marks) == 1 and 0 not in marks
    finally:
        first.close()
        second.close()
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 0")
    c.close()
    with Storage(db) as again:
        assert again.conn.execute("PRAGMA user_version").fetchone()[0] != 0
        save(again, 6, record(seed=7))
        assert again.completed_indices("t1") == set(range(7))
