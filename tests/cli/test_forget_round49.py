"""``arena tournament --forget ID|NAME --db FILE`` (round 49): a test run or a mistaken
name is deleted from a database, and the leaderboard, replay and web no longer show it;
refused while a run writes the database, for an unknown or shared name, without --db, and
without --yes where nobody can be asked."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.storage import Storage
from arena.tournament.runner import DatabaseLock
from arena.web.demo import make_demo_db
from tests.support.harness import get_json, web_server


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("club") / "club.sqlite"
    make_demo_db(path, matches=2, tournament_id="week1", max_deals=2)
    make_demo_db(path, matches=2, tournament_id="oops-test", max_deals=2)
    return path


@pytest.fixture
def db(club: Path, tmp_path: Path) -> Path:
    """A club's database: week 1 (kept) and a test run stored after it (the latest)."""
    return Path(shutil.copy(club, tmp_path / "club.sqlite"))


def _arena(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def _ids(db: Path) -> list[str]:
    with Storage.open_readonly(db) as st:
        return [t.id for t in st.tournaments()]


def test_a_forgotten_tournament_is_gone_from_the_leaderboard_replay_and_web(db: Path) -> None:
    with Storage.open_readonly(db) as st:
        oops_match = next(iter(st.stored_seatings("oops-test").values()))[0]
    with web_server(db) as server:  # (an `arena web` running meanwhile)
        assert len(get_json(server.url, "/api/tournaments")) == 2
        r = _arena("tournament", "--forget", "oops-test", "--db", str(db), "--yes")
        listed = get_json(server.url, "/api/tournaments")
        assert [t["id"] for t in listed] == ["week1"], listed
    assert r.exit_code == 0, r.output
    assert "deleted tournament oops-test (oops-test: 2 matches stored" in r.output
    assert _ids(db) == ["week1"]
    # The leaderboard's default (the latest) is week 1 again; the test run is nowhere.
    board = _arena("leaderboard", "--db", str(db), "--list")
    assert board.exit_code == 0 and "oops-test" not in board.output, board.output
    r = _arena("leaderboard", "--db", str(db), "--tournament", "oops-test")
    assert r.exit_code == 2 and "no tournament 'oops-test'" in r.output, r.output
    r = _arena("replay", oops_match, "--db", str(db))
    assert r.exit_code == 2 and "no stored match" in r.output, r.output


def test_asked_first_at_a_terminal_and_no_deletes_nothing(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arena.cli.tournament._can_ask", lambda: True)
    r = _arena("tournament", "--forget", "oops-test", "--db", str(db), stdin="n\n")
    assert r.exit_code == 1 and "Nothing was deleted." in r.output, r.output
    assert "Delete tournament oops-test (oops-test: 2 matches stored" in r.output
    assert _ids(db) == ["week1", "oops-test"]
    r = _arena("tournament", "--forget", "oops-test", "--db", str(db), stdin="y\n")
    assert r.exit_code == 0, r.output
    assert _ids(db) == ["week1"]


def test_without_yes_and_no_terminal_it_says_what_it_would_delete(db: Path) -> None:
    r = _arena("tournament", "--forget", "oops-test", "--db", str(db))
    assert r.exit_code == 2, r.output
    assert "would delete tournament oops-test" in r.output and "--yes" in r.output
    assert _ids(db) == ["week1", "oops-test"]


def test_refused_while_a_run_writes_the_database(db: Path) -> None:
    lock = DatabaseLock(db)
    lock.acquire("oops-test")  # (as `arena serve --db` / `arena tournament` hold it)
    try:
        r = _arena("tournament", "--forget", "oops-test", "--db", str(db), "--yes")
    finally:
        lock.release()
    assert r.exit_code == 1, r.output
    assert "is running on" in r.output and "(tournament oops-test)" in r.output, r.output
    assert "nothing was deleted" in r.output
    assert _ids(db) == ["week1", "oops-test"]


def test_an_unknown_name_lists_the_stored_ones(db: Path) -> None:
    r = _arena("tournament", "--forget", "oops", "--db", str(db), "--yes")
    assert r.exit_code == 2, r.output
    assert "no tournament 'oops'" in r.output
    assert "stored: week1 (week1), oops-test (oops-test)" in r.output
    assert _ids(db) == ["week1", "oops-test"]


def test_a_name_several_tournaments_have_needs_the_id(tmp_path: Path) -> None:
    path = tmp_path / "serve.sqlite"
    with Storage(path) as st:
        for tid in ("serve-20261201-1", "serve-20261208-2"):
            st.ensure_tournament(tid, name="serve", fingerprint=tid, config={}, total_matches=0,
                                 bots=[("a", "serve")])  # fmt: skip
    r = _arena("tournament", "--forget", "serve", "--db", str(path), "--yes")
    assert r.exit_code == 2, r.output
    assert "2 tournaments in" in r.output and "serve-20261201-1, serve-20261208-2" in r.output
    r = _arena("tournament", "--forget", "serve-20261201-1", "--db", str(path), "--yes")
    assert r.exit_code == 0, r.output
    assert _ids(path) == ["serve-20261208-2"]


@pytest.mark.parametrize(
    ("args", "said", "code"),
    [
        ([], "name it, --db FILE", 2),
        (["--db", "missing.sqlite"], "missing.sqlite: no such file (no database there)", 2),
        (["--db", "{db}", "--fresh"], "not --fresh", 2),
        (["--db", "{db}-wal"], "write-ahead log", 2),
        (["--db", "{other}"], "not a Thousand Arena database", 2),  # (52: 1)
    ],
)
def test_bad_input_is_refused_and_deletes_nothing(
    db: Path, tmp_path: Path, args: list[str], said: str, code: int
) -> None:
    other = tmp_path / "notes.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE notes (x)")
    (tmp_path / "club.sqlite-wal").touch()
    argv = [a.format(db=db, other=other) for a in args]
    r = CliRunner().invoke(main, ["tournament", "--forget", "week1", *argv, "--yes"])
    assert r.exit_code == code, r.output
    assert said in r.output, r.output
    assert _ids(db) == ["week1", "oops-test"]


def test_yes_alone_is_refused() -> None:
    r = _arena("tournament", "--yes")
    assert r.exit_code == 2 and "--yes goes with --forget" in r.output, r.output
