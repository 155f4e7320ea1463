"""Known limits of earlier rounds, fixed in round 47 (the lead's own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main as arena


@pytest.mark.parametrize(("name", "text", "said"), [
    ("m.jsonl", "", "the file is empty"),
    ("m.json", "", "the file is empty"),
    ("m.json", "\n \n", "the file is empty (whitespace only)"),
])  # fmt: skip
def test_an_empty_record_file_is_said_to_be_empty(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    """Defect: `arena replay` of an empty `.jsonl` said "no 'end' or 'interrupted' line: the
    match was not over when written" (as if a match had begun in it), and of an empty
    `.json` JSON's "Expecting value: line 1 column 1 (char 0)"."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    for args in ([str(path)], ["--check", str(path)]):
        r = CliRunner().invoke(arena, ["replay", *args])
        assert r.exit_code == 2, r.output
        assert f"{path}: not a readable match record: {said}\n" in r.output, r.output


def test_arena_web_refuses_an_empty_tournament_as_the_other_commands_do(tmp_path: Path) -> None:
    """Defect: `arena web --tournament ""` said "no tournament ''" (or, with no database,
    that none was found), where `arena leaderboard` and `arena replay --list` say the
    option is empty; one check for the three now."""
    for args in (["web", "--port", "0"], ["leaderboard"], ["replay", "--list"]):
        r = CliRunner().invoke(arena, [*args, "--tournament", " ", "--db",
                                       str(tmp_path / "none.sqlite")])  # fmt: skip
        assert r.exit_code == 2, (args, r.output)
        assert "Invalid value for --tournament: empty: name" in r.output, (args, r.output)
