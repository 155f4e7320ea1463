"""A reader's journey through `arena replay` (round 58): what it says of bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from engine.game import Game


def _record_text() -> str:
    """A whole played match's record, as `arena replay --list --export` writes one."""
    g = Game.new("classic", 7, ["ann", "bob", "cid"])
    rng = random.Random(0)
    while not g.is_over and g.deal_number < 2:
        g.apply(rng.choice(g.legal_actions()))
    return json.dumps(g.record(), ensure_ascii=False)


@pytest.mark.parametrize("keep", [0.5, 0.9, "mid-suit"])
def test_a_record_file_cut_short_is_said_to_be_cut_short(tmp_path: Path, keep: object) -> None:
    """Defect: a record file cut short (a copy or download that stopped) said only JSON's
    words, `not a readable match record: Expecting value: line 1 column 1913 (char 1912)`,
    or, cut inside a suit's 3 bytes of UTF-8, `'utf-8' codec can't decode bytes in
    position 1998-1999: unexpected end of data`: nothing said the file was incomplete."""
    data = _record_text().encode("utf-8")
    if keep == "mid-suit":
        cut = data.index("♠".encode()) + 1  # (inside the character)
    else:
        assert isinstance(keep, float)
        cut = int(len(data) * keep)
    path = tmp_path / "m.json"
    path.write_bytes(data[:cut])
    for args in ([str(path)], ["--check", str(path)]):
        r = CliRunner().invoke(arena, ["replay", *args])
        assert r.exit_code == 2, r.output
        assert (
            f"{path}: not a readable match record: the file ends before the record does "
            "(cut short: a copy or download that stopped, a full disk); " in r.output
        ), r.output
    assert path.read_bytes() == data[:cut]  # (read only)


def test_bad_json_that_is_not_cut_short_is_not_said_to_be(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    whole = _record_text()
    for text in (whole[:-1] + ",}", whole + " x", '{"a": 1,}'):
        path.write_text(text, encoding="utf-8")
        r = CliRunner().invoke(arena, ["replay", str(path)])
        assert r.exit_code == 2, r.output
        assert "not a readable match record: " in r.output, r.output
        assert "cut short" not in r.output, r.output


def test_a_whole_record_file_still_replays(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(_record_text(), encoding="utf-8")
    r = CliRunner().invoke(arena, ["replay", str(path)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Match: classic, no deal cap, seed 7, players ann, bob, cid")


def _cut_database(tmp_path: Path) -> Path:
    """An arena database cut to its first half, as a copy that stopped leaves it."""
    from arena.storage import Storage

    whole = tmp_path / "whole.sqlite"
    Storage(whole).close()
    data = whole.read_bytes()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(data[: len(data) // 2])
    return cut


@pytest.mark.parametrize(
    ("kind", "sqlite_says"),
    [("text", "file is not a database"), ("cut", "database disk image is malformed")],
)
def test_a_database_that_is_no_database_or_is_damaged_says_what_sqlite_found(
    tmp_path: Path, kind: str, sqlite_says: str
) -> None:
    """Defect: `arena replay --db X m00003`, `arena leaderboard --db X` said only `X is not a
    Thousand Arena database or is damaged (opening read-only)`, the same of a text file and
    of a database cut short: SQLite's words tell the two apart. Nothing is written."""
    if kind == "text":
        db = tmp_path / "notes.sqlite"
        db.write_text("not a database, just notes\n", encoding="utf-8")
    else:
        db = _cut_database(tmp_path)
    before = db.read_bytes()
    for args, code in (
        (["replay", "--db", str(db), "m00003"], 2),
        (["replay", "--list", "--db", str(db)], 1),
        (["leaderboard", "--db", str(db)], 1),
    ):
        r = CliRunner().invoke(arena, args)
        assert r.exit_code == code, (args, r.output)
        assert (
            f"{db} is not a Thousand Arena database or is damaged (opening read-only: SQLite "
            f'says "{sqlite_says}")' in r.output
        ), (args, r.output)
        assert "Traceback" not in r.output
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(db.name)) == [db.name]


def test_the_documented_export_folder_is_ignored_by_git() -> None:
    """Defect: the README's `arena replay --list --export exported/`, run in the checkout as
    written, left `?? exported/` in `git status` (its 24 records), where `out/` and `runs/`
    of the same journey are ignored."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "arena replay --list --export exported/" in readme
    assert "/exported/" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_a_match_id_in_a_database_of_no_tournament_says_it_holds_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `arena replay --db X m00003` of a database a run made but stored nothing in
    said `no stored match with this id in X`, as of a mistyped id, where `arena replay
    --list` and `arena leaderboard` say `X holds no tournament`."""
    from arena.storage import Storage

    monkeypatch.chdir(tmp_path)  # (no exported/ record of that id to point to)
    db = tmp_path / "new.sqlite"
    Storage(db).close()
    before = db.read_bytes()
    r = CliRunner().invoke(arena, ["replay", "--db", str(db), "m00003"])
    assert r.exit_code == 2, r.output
    assert r.output == (
        f"error: m00003: no such file, and no stored match with this id in {db}: it holds no "
        "tournament\n"
    )
    assert db.read_bytes() == before


def test_an_export_that_meets_a_damaged_record_writes_every_other_one(tmp_path: Path) -> None:
    """Defect: `arena replay --list --export DIR` stopped at the first damaged record (exit
    1): of a tournament of 24 matches whose 4th record was damaged, 3 were written and 20
    sound ones not. Now every readable one is written, each damaged one named, exit 1."""
    import sqlite3

    from arena.web.demo import make_demo_db

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=4, max_deals=1)
    with sqlite3.connect(db) as c:
        ids = [r[0] for r in c.execute("SELECT id FROM matches ORDER BY idx")]
        c.execute("UPDATE matches SET record_json = '{\"cut' WHERE id = ?", (ids[1],))
    out = tmp_path / "exported"
    r = CliRunner().invoke(arena, ["replay", "--list", "--db", str(db), "--export", str(out)])
    assert r.exit_code == 1, r.output
    assert sorted(p.name for p in out.iterdir()) == [f"{m}.json" for m in ids if m != ids[1]]
    assert f"wrote {len(ids) - 1} record(s) into {out}" in r.stderr, r.stderr
    assert f"the stored record of match {ids[1]} is damaged" in r.stderr, r.stderr
    assert r.stderr.endswith(
        f"error: --export: 1 of the {len(ids)} record(s) listed could not be read, and were "
        "not written\n"
    ), r.stderr
    for m in ids[2:]:  # (the ones after the damaged one are whole records)
        check = CliRunner().invoke(arena, ["replay", "--check", str(out / f"{m}.json")])
        assert check.exit_code == 0, check.output


def test_a_damaged_record_does_not_claim_nothing_else_is_affected(tmp_path: Path) -> None:
    """Defect: a stored record that is no JSON made `arena leaderboard` (and the web's
    leaderboard page) refuse the whole tournament with "... Nothing was changed, and nothing
    else is affected": the whole leaderboard was. It says what is true: nothing changed."""
    import sqlite3

    from arena.web.demo import make_demo_db

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=2, max_deals=1)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE matches SET record_json = '{\"cut' WHERE idx = 1")
    for args in (["leaderboard"], ["replay", "m0001"]):
        r = CliRunner().invoke(arena, [*args, "--db", str(db)])
        assert r.exit_code in (1, 2), r.output
        assert "is damaged (not valid JSON: " in r.output, r.output
        assert r.output.rstrip().endswith(
            "it was changed outside the arena. Nothing in the database was changed"
        ), r.output
        assert "nothing else is affected" not in r.output
