"""`arena serve --db DIR/x.sqlite` that stores no match leaves nothing behind: not the
database (already so), and now not the directories it made for it either."""

from __future__ import annotations

from pathlib import Path

from arena.cli.serve import _Results
from engine.rules import preset


def _open_close(db: Path) -> None:
    results = _Results.open(db, preset("classic"), {"b1": "t1"}, None)
    assert results.made
    results.close()


def test_directories_made_for_an_empty_database_are_removed(tmp_path: Path) -> None:
    """Defect: `arena serve --db runs/deep/x.sqlite` stopped before any match removed the
    database it made but left `runs/deep/` empty behind it."""
    _open_close(tmp_path / "runs" / "deep" / "x.sqlite")
    assert list(tmp_path.iterdir()) == []


def test_directories_that_were_there_or_hold_something_stay(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    _open_close(tmp_path / "runs" / "new" / "x.sqlite")
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
    assert list((tmp_path / "runs").iterdir()) == []
    # a directory the run made that something else filled meanwhile is kept, with it
    results = _Results.open(tmp_path / "a" / "b" / "x.sqlite", preset("classic"),
                            {"b1": "t1"}, None)  # fmt: skip
    (tmp_path / "a" / "note.txt").write_text("mine")
    results.close()
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "a").rglob("*")) == [
        "a/note.txt"
    ]
