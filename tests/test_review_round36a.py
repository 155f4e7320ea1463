"""Review of round 36's merges (the storage's overwritten-in-place check, the protocol's
early refusal, ``arena rules --players``, the SDK's raise site, wins and ``--records``).

(1) The check for a database overwritten in place read the file's header by opening the
file and closing it after every write: closing a descriptor of a file drops every POSIX
lock the process holds on it, SQLite's own among them, so a connection of another process
that closed next took itself for the file's last one and removed the write-ahead log the
run went on writing to (its later matches were seen by no other process).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _storage_helpers() -> tuple[Any, Any, Any]:
    sys.path.insert(0, str(ROOT / "tests" / "arena"))
    try:
        mod = importlib.import_module("test_storage")
    finally:
        sys.path.remove(str(ROOT / "tests" / "arena"))
    return mod._setup, mod._save, mod._record


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
    setup, save, record = _storage_helpers()
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
