"""``python -m arena.web.demo`` exits as ``arena leaderboard`` and ``arena web`` do (round 58,
the reader's journey): 2 when the file named is the wrong one (another program's SQLite
file, a database of other tournaments), 1 when it is there but cannot be read. It exited 1
for all of them. (A database of other tournaments: tests/docs/test_walkthrough_round30.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.web.demo import main as demo


def _exit(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        demo(argv)
    code = info.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


def test_another_programs_database_is_the_wrong_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table foo(x)")
    before = path.read_bytes()
    code, err = _exit([str(path)], capsys)
    assert code == 2
    assert "not a Thousand Arena database" in err and "foo" in err
    assert path.read_bytes() == before


def test_a_file_that_is_no_database_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "text.sqlite"
    path.write_text("garbage text here")
    code, err = _exit([str(path)], capsys)
    assert code == 1
    assert "file is not a database" in err
    assert path.read_text() == "garbage text here"
