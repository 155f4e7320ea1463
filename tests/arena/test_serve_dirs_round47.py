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


def test_a_refused_db_leaves_no_record_directory_it_made(tmp_path: Path) -> None:
    """Defect: `arena serve --record-dir rec/deep --db NOT-A-DB` made the record directory,
    then refused the database (exit 2), leaving `rec/deep/` empty behind it."""
    from click.testing import CliRunner

    from arena.cli import main as arena

    (tmp_path / "tokens.toml").write_text('[bots]\na = "tok-a-123456"\nb = "tok-b-123456"\n'
                                          'c = "tok-c-123456"\n', encoding="utf-8")  # fmt: skip
    (tmp_path / "notes.txt").write_text("not a database\n" * 10, encoding="utf-8")
    kept = tmp_path / "kept"
    kept.mkdir()
    for rec in (tmp_path / "rec" / "deep", kept / "new"):
        r = CliRunner().invoke(arena, [
            "serve", "--port", "0", "--tokens", str(tmp_path / "tokens.toml"),
            "--record-dir", str(rec), "--db", str(tmp_path / "notes.txt")])  # fmt: skip
        assert r.exit_code == 2 and "--db" in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "notes.txt", "tokens.toml"]
    assert list(kept.iterdir()) == []
