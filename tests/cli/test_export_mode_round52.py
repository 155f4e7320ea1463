"""Round 52: `arena replay --list --export DIR` makes its records as any file the user
writes (the umask), not private as the database is (0600): they are made to be given away
and hold no seed of a match still to be played. docs/record-format.md says so, and how to
keep them private; this pins both."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"
DOC = Path(__file__).parents[2] / "docs" / "record-format.md"


def _export(tmp_path: Path, mask: int) -> set[int]:
    db = Path(shutil.copy(FIXTURE, tmp_path / "club.sqlite"))
    out = tmp_path / f"out{mask:o}"
    old = os.umask(mask)
    try:
        r = CliRunner().invoke(main, ["replay", "--list", "--db", str(db), "--tournament",
                                      "club-w1", "--export", str(out)])  # fmt: skip
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    files = list(out.glob("*.json"))
    assert files
    return {stat.S_IMODE(f.stat().st_mode) for f in files}


def test_exported_records_follow_the_umask_as_the_doc_says(tmp_path: Path) -> None:
    assert _export(tmp_path, 0o022) == {0o644}
    assert _export(tmp_path, 0o077) == {0o600}
    doc = " ".join(DOC.read_text().split())
    assert "(your umask: with the usual 022, readable by others, mode 0644)" in doc
    assert "Keep them private with `umask 077` before the command" in doc
