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


def test_set_inside_a_ruleset_file_says_where_to_set_it(tmp_path: Path) -> None:
    """Defect (config47's leftover): `--set ruleset.must_beat=true` over `ruleset =
    "rulesets/house-penalty.toml"` said only that a string is no table (a preset's name is
    told how to set it whole)."""
    root = Path(__file__).parents[2]
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'name = "t"\nruleset = "{root / "rulesets" / "house-penalty.toml"}"\n'
                   "max_deals = 1\n" + "".join(f'[bots.{n}]\nbot = "random"\n' for n in "abc"),
                   encoding="utf-8")  # fmt: skip
    db = tmp_path / "t.sqlite"
    r = CliRunner().invoke(arena, ["tournament", "--config", str(cfg), "--db", str(db),
                                   "--set", "ruleset.must_beat=true"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert ("it names a ruleset file: set must_beat = true in that file (or in a copy of it, "
            "named by --set ruleset=PATH)") in " ".join(r.output.split()), r.output  # fmt: skip
    assert not db.exists()


def test_format_all_into_a_file_name_of_a_format_is_refused(tmp_path: Path) -> None:
    """Defect (review47's surviving mutant l1): `arena leaderboard --format all --out x.json`
    made a directory named `x.json` and wrote the four files into it. An existing directory
    of that name is still written into."""
    from arena.web.demo import make_demo_db

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    out = tmp_path / "x.json"
    r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--format", "all",
                                   "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2 and not out.exists(), r.output
    assert "--format all writes four files into a directory" in r.output, r.output
    out.mkdir()
    r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--format", "all",
                                   "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert len(list(out.iterdir())) == 4
