"""A second reader's review of round 37's late merges (``8a9190d..``): `arena serve`'s
closing of the tournaments an earlier serve left unfinished, the bots' concession weighed
against the defenders' takes, the look-alike host check, ``COLUMNS=0``, the SDK's capped
warnings and its storage's advice.

Defects found and fixed (each test's docstring says what happened before):

- a database named through a symbolic link (``--db link.sqlite``, the link to
  ``runs/arena.sqlite``) had its lock file beside the link, not beside the file: a run
  through the link and one through the file's own name each took "their" lock and both ran
  on one database (SQLite follows the link). The hard-link case was refused, this one not;
  since round 37 a second `arena serve` so started marked the running serve's tournament
  finished, or removed it while it had stored nothing (every later match of the running
  one then lost), and `arena web` through the link said no run held it.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from arena.storage import Storage, StorageLockedError, lock_owner, lock_path
from arena.tournament.runner import DatabaseLock
from engine import PRESETS

# ------------------------------------------------------------------ the database's lock


def test_a_database_locked_through_its_name_is_locked_through_a_symlink_too(
    tmp_path: Path,
) -> None:
    """Defect: the lock file was made beside the name given, so a symbolic link to the
    database had a lock of its own: a second run through the link took it while the first
    ran (and `lock_owner` through the link said the second one held it). Now the lock is
    beside the file the link names, as SQLite's -wal is."""
    real = tmp_path / "runs" / "arena.sqlite"
    Storage(real).close()
    link = tmp_path / "link.sqlite"
    link.symlink_to(Path("runs") / "arena.sqlite")  # (relative, as `ln -s` makes one)
    assert lock_path(link) == lock_path(real).resolve()
    first = DatabaseLock(real)
    first.acquire("serve-first")
    try:
        assert lock_owner(link) == "serve-first"
        with pytest.raises(StorageLockedError, match="is running on"):
            DatabaseLock(link).acquire("serve-second")
    finally:
        first.release()
    # Released, the link's run takes it (and a run through the file's name is kept off).
    second = DatabaseLock(link)
    second.acquire("serve-second")
    try:
        with pytest.raises(StorageLockedError):
            DatabaseLock(real).acquire("serve-third")
    finally:
        second.release()
    assert not lock_path(real).exists()


def test_a_second_serve_through_a_symlink_leaves_the_running_serves_tournament(
    tmp_path: Path,
) -> None:
    """Defect: a second `arena serve --db` naming the database through a symbolic link
    got a lock of its own, and (round 37) took the running serve's tournament for one an
    earlier serve left unfinished: removed, as it had stored nothing yet, so every match
    the running serve stored after it was refused. Now the second serve is refused
    (--db: another run holds it) and the running one's tournament stays."""
    from arena.cli.serve import _Results

    real = tmp_path / "arena.sqlite"
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    bots = {"a": "t" * 20, "b": "u" * 20, "c": "v" * 20}
    running = _Results.open(real, PRESETS["classic"], bots, None)
    try:
        running.start("20261205-000000-aaaa")
        with pytest.raises(click.BadParameter, match="is running on"):
            _Results.open(link, PRESETS["classic"], bots, None)
        with Storage.open_readonly(real) as st:
            (info,) = st.tournaments()
            assert info.id == "serve-20261205-000000-aaaa"
            assert info.finished_at is None
    finally:
        running.close()


def test_a_dangling_or_looping_link_still_has_a_lock_path(tmp_path: Path) -> None:
    """Pinned (no defect): a link to no file yet has its lock beside its target (where
    SQLite creates the database), and a loop of links is not an error of the lock path
    (SQLite says what is wrong with it)."""
    target = tmp_path / "later" / "db.sqlite"
    dangling = tmp_path / "dangling.sqlite"
    dangling.symlink_to(target)
    assert lock_path(dangling) == target.with_name("db.sqlite.lock")
    loop_a, loop_b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    assert lock_path(loop_a).name.endswith(".sqlite.lock")
    plain = tmp_path / "plain.sqlite"
    assert lock_path(plain) == tmp_path / "plain.sqlite.lock"
