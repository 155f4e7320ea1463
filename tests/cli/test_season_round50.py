"""``arena leaderboard --season`` (round 50): a club's weeks, one tournament each in one
database, rated together in the order they were played, in every format the leaderboard
writes; a bot's code changed between weeks, weeks dealt the same cards and an unfinished
week are said; rulesets that differ, unknown names, an empty selection and a database
without tournaments are refused. The fixture: tests/arena/data/season_round50/README.md."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.ratings import rate_results
from arena.storage import Storage

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURE, tmp_path / "club.sqlite"))


def _board(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["leaderboard", "--db", str(db), *args])


def _json(db: Path, *args: str) -> dict:  # type: ignore[type-arg]
    r = _board(db, *args, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _ids(db: Path) -> dict[str, str]:
    with Storage.open_readonly(db) as st:
        return {t.name: t.id for t in st.tournaments()}


def test_a_season_of_one_tournament_is_its_leaderboard(db: Path) -> None:
    one = _json(db, "--tournament", "club-w1")
    season = _json(db, "--season", "club-w1")
    assert [(r["bot"], r["mu"], r["sigma"], r["matches"]) for r in season["rows"]] == [
        (r["bot"], r["mu"], r["sigma"], r["matches"]) for r in one["rows"]
    ]
    assert [t["id"] for t in season["season"]["tournaments"]] == [_ids(db)["club-w1"]]
    assert "season" not in one  # (a tournament's JSON as it was)


def test_the_weeks_are_rated_together_in_the_order_they_were_played(db: Path) -> None:
    ids = _ids(db)
    weeks = [ids["club-w1"], ids["club-w2"], ids["club-w3"]]
    # Named out of order (and one twice, by id and by name): played order, each once.
    d = _json(db, "--season", f"club-w3,{weeks[0]},club-w1,club-w2")
    assert [t["id"] for t in d["season"]["tournaments"]] == weeks
    # The same as every result rated from the prior, week after week, in schedule order.
    with Storage.open_readonly(db) as st:
        results = [m for w in weeks for m in st.match_results(w)]
    book, _ = rate_results([m.__class__(**{**_fields(m), "index": k}) for k, m in
                            enumerate(results)])  # fmt: skip
    for row in d["rows"]:
        r = book.get(row["bot"])
        assert (row["mu"], row["sigma"], row["matches"]) == (r.mu, r.sigma, 18)
    assert d["tournament"]["completed"] == 18
    # Three weeks' ratings are surer than one week's.
    one = {r["bot"]: r["sigma"] for r in _json(db, "--tournament", "club-w1")["rows"]}
    assert all(r["sigma"] < one[r["bot"]] for r in d["rows"])


def _fields(m: object) -> dict:  # type: ignore[type-arg]
    return {k: getattr(m, k) for k in m.__slots__}  # type: ignore[attr-defined]


def test_a_prefix_selects_the_weeks_and_every_format_says_what_changed(
    db: Path, tmp_path: Path
) -> None:
    ids = _ids(db)
    r = _board(db, "--season", "club-w", "--format", "all", "--out", str(tmp_path / "site/"))
    assert r.exit_code == 0, r.output
    changed = f"{ids['club-w2']}: changed since an earlier tournament of the season: bot c's code"
    same = f"{ids['club-w2']} was dealt the same cards as {ids['club-w1']} (seed 7)"
    # said on stderr when the standings go to files
    assert f"note: {changed}" in r.stderr and same in r.stderr, r.stderr
    site = tmp_path / "site"
    d = json.loads((site / "leaderboard.json").read_text())
    assert [t["id"] for t in d["season"]["tournaments"]] == [
        ids["club-w1"], ids["club-w2"], ids["club-w3"]
    ]  # fmt: skip
    assert [t["bots_changed"] for t in d["season"]["tournaments"]] == [[], ["c"], []]
    assert any(changed in n for n in d["season"]["notes"])
    rows = {row["bot"]: row for row in csv.DictReader(io.StringIO(
        (site / "leaderboard.csv").read_text()))}  # fmt: skip
    assert {b: (row["tournaments"], row["changed"]) for b, row in rows.items()} == {
        "a": ("3", "0"), "b": ("3", "0"), "c": ("3", "1")
    }  # fmt: skip
    md = (site / "leaderboard.md").read_text()
    assert md.startswith("# season club-w — classic, 1 deal max, 3 players, 3 tournaments, "
                         "18 matches (finished)")  # fmt: skip
    assert "bot c's code" in md and "seed 7" in md
    html = (site / "leaderboard.html").read_text()
    assert "bot c&#x27;s code" in html and "Season of tournaments" in html
    screen = _board(db, "--season", "club-w")
    assert "season club-w" in screen.stdout and "bot c's code" in screen.stdout, screen.stdout
    # The week after the edit is not "changed" again (c's code is w2's in w3).
    assert not d["season"]["tournaments"][2]["changes"]


def test_an_unfinished_week_counts_its_stored_matches_and_says_so(db: Path) -> None:
    w3 = _ids(db)["club-w3"]
    with sqlite3.connect(db) as c:  # (a run of w3 interrupted after 4 of its 6 matches)
        gone = [r[0] for r in c.execute("SELECT id FROM matches WHERE tournament_id = ? AND "
                                        "idx >= 4", (w3,))]  # fmt: skip
        for table in ("match_players", "deals", "incidents"):
            c.executemany(f"DELETE FROM {table} WHERE match_id = ?", [(g,) for g in gone])
        c.executemany("DELETE FROM matches WHERE id = ?", [(g,) for g in gone])
        c.execute("UPDATE tournaments SET finished_at = NULL WHERE id = ?", (w3,))
    d = _json(db, "--season", "club-w")
    assert d["tournament"]["completed"] == 16 and d["tournament"]["finished_at"] is None
    assert (
        f"{w3} is not finished (4/6 matches stored): its stored matches are counted"
        in (d["season"]["notes"])
    )
    assert {r["matches"] for r in d["rows"]} == {16}
    r = _board(db, "--season", "club-w")
    assert "3 tournaments, 16 matches (1 tournament not finished)" in r.stdout, r.stdout


def test_tournaments_of_other_rules_are_refused(db: Path) -> None:
    ids = _ids(db)
    r = _board(db, "--season", "club-w1,cup")
    assert r.exit_code == 2, r.output
    assert (f"play different rules (classic, 1 deal max: {ids['club-w1']}; 1001, 1 deal max: "
            f"{ids['cup']})") in r.output  # fmt: skip


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--season", "club-w9"], "no tournament 'club-w9' in "),
        (["--season", ""], "--season"),
        (["--season", " , "], "names no tournament"),
        (["--season", "club-w", "--tournament", "cup"], "not with --tournament"),
        (["--season", "club-w", "--list"], "not with --tournament, --config or --list"),
    ],
)
def test_bad_selections_are_refused(db: Path, args: list[str], said: str) -> None:
    r = _board(db, *args)
    assert r.exit_code == 2 and said in r.output, r.output
    if "club-w9" in args:  # (the stored ones listed)
        assert f"stored: {_ids(db)['club-w1']} (club-w1)" in r.output


def test_a_database_without_tournaments_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    Storage(empty).close()
    r = _board(empty, "--season", "club")
    assert r.exit_code == 2 and "holds no tournament" in r.output, r.output
