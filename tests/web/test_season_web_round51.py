"""Round 51: a season in ``arena web``: ``/api/season?season=S`` (``arena leaderboard
--season S``'s standings, by the same builder), its tournaments linked, each bot's page of
the latest tournament it played in, bad requests answered as the API answers others, and
``arena web --season S`` linking it from every tournament's leaderboard. The fixture:
tests/arena/data/season_round50/README.md (club-w1 to club-w3, and cup of another game)."""

from __future__ import annotations

import fcntl
import json
import shutil
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage, lock_path
from tests.docs.test_docs_round38 import _row
from tests.support.harness import get_json, web_server

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURE, tmp_path / "club.sqlite"))


def _refused(base: str, path: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(base + path.lstrip("/"), timeout=10)
    return e.value.code, json.loads(e.value.read().decode())


def _ids(db: Path) -> dict[str, str]:
    with Storage.open_readonly(db) as st:
        return {t.name: t.id for t in st.tournaments()}


def test_the_season_is_the_leaderboards_season(db: Path) -> None:
    cli = CliRunner().invoke(
        main, ["leaderboard", "--db", str(db), "--season", "club-w", "--format", "json"]
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)
    ids = _ids(db)
    with web_server(db) as server:
        doc = get_json(server.url, "/api/season?season=club-w")
        page = urllib.request.urlopen(server.url + "?season=club-w", timeout=10)
        assert page.status == 200 and b"leaderboard.js" in page.read()
    shown = [(r["bot"], r["mu"], r["sigma"], r["matches"]) for r in doc["rows"]]
    assert shown == [(r["bot"], r["mu"], r["sigma"], r["matches"]) for r in expected["rows"]]
    assert doc["title"].startswith("season club-w — classic") and "3 tournaments" in doc["title"]
    assert doc["notes"] == expected["season"]["notes"] and "changed since" in doc["notes"][0]
    # its tournaments, in the order rated, as /api/tournaments lists them (the page links
    # each one's leaderboard), with what changed in each
    weeks = doc["weeks"]
    assert [w["id"] for w in weeks] == [ids["club-w1"], ids["club-w2"], ids["club-w3"]]
    assert [w["bots_changed"] for w in weeks] == [[], ["c"], []]
    assert weeks[1]["changes"] == ["bot c's code"]
    assert all(w["state"] == "finished" and w["deals"] == "duplicate" for w in weeks)
    # a bot's link: its page of the latest tournament it played in
    assert doc["bot_tournament"] == {b: ids["club-w3"] for b in ("a", "b", "c")}
    assert set(doc["history"]) == {"a", "b", "c"} and doc["head_to_head"]["bots"]


def test_bad_seasons_are_answered_as_other_bad_requests(db: Path, tmp_path: Path) -> None:
    with web_server(db) as server:
        status, body = _refused(server.url, "/api/season?season=club-x")
        assert status == 404 and body["status"] == 404
        # (the database's path shortened to its name, as every error of the API)
        assert body["error"].startswith("no tournament 'club-x' in club.sqlite: neither")
        assert str(tmp_path) not in body["error"]
        for empty in ("", "%2C", "%20,%20"):
            status, body = _refused(server.url, f"/api/season?season={empty}")
            assert status == 400 and "names no tournament" in body["error"], body
        status, body = _refused(server.url, "/api/season")
        assert status == 400
        status, body = _refused(server.url, "/api/season?season=club-w1,cup")
        assert status == 400 and "play different rules" in body["error"], body
    empty = tmp_path / "empty.sqlite"
    Storage(empty).close()
    with web_server(empty) as server:
        status, body = _refused(server.url, "/api/season?season=club")
        assert status == 404 and "holds no tournament" in body["error"], body


def test_a_season_answer_is_kept_until_a_match_is_stored(db: Path) -> None:
    with web_server(db) as server:
        url = server.url + "api/season?season=club-w"
        with urllib.request.urlopen(url, timeout=10) as r:
            etag = r.headers["ETag"]
        ask = urllib.request.Request(url, headers={"If-None-Match": etag})
        with pytest.raises(urllib.error.HTTPError) as same:
            urllib.request.urlopen(ask, timeout=10)
        assert same.value.code == 304
        # one of its weeks changed (a match forgotten): the season is made again
        with Storage(db) as st:
            st.conn.execute(
                "DELETE FROM matches WHERE id = (SELECT id FROM matches WHERE tournament_id = "
                "? ORDER BY idx DESC LIMIT 1)",
                (_ids(db)["club-w3"],),
            )
            st.conn.commit()
        with urllib.request.urlopen(ask, timeout=10) as r:
            assert r.status == 200 and r.headers["ETag"] != etag
            assert json.loads(r.read())["completed"] == 17


@pytest.fixture
def season_server(db: Path) -> Iterator[Any]:
    with web_server(db, season="club-w") as server:
        yield server


def test_arena_web_season_is_linked_from_every_leaderboard(season_server: Any, db: Path) -> None:
    for tid in _ids(db).values():
        board = get_json(season_server.url, f"/api/leaderboard?tournament={tid}")
        assert board["season"] == "club-w"
    # (without --season, none)
    with web_server(db) as plain:
        assert get_json(plain.url, "/api/leaderboard")["season"] is None


def test_arena_web_refuses_a_season_of_no_tournament(db: Path) -> None:
    r = CliRunner().invoke(main, ["web", "--db", str(db), "--port", "0", "--season", "club-x"])
    assert r.exit_code == 2, r.output
    assert "--season" in r.output and "no tournament 'club-x'" in r.output
    r = CliRunner().invoke(main, ["web", "--db", str(db), "--port", "0", "--season", ""])
    assert r.exit_code == 2, r.output


def test_web_md_names_every_key_of_the_season_answer(db: Path) -> None:
    with web_server(db) as server:
        doc = get_json(server.url, "/api/season?season=club-w")
    named = _row("/api/season?season=S") | _row("/api/leaderboard?tournament=T")
    assert not sorted(set(doc) - named)
    assert not sorted(set(doc["weeks"][0]) - named - _row("/api/tournaments"))


def test_a_week_taken_up_by_a_runner_is_running_with_no_match_stored(db: Path) -> None:
    # (a week's state is the runner's, not the season's cached standings': "stopped" stayed)
    week = _ids(db)["club-w3"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tournaments SET finished_at = NULL WHERE id = ?", (week,))
    with web_server(db) as server:
        before = get_json(server.url, "/api/season?season=club-w")
        assert [w["state"] for w in before["weeks"]] == ["finished", "finished", "stopped"]
        with lock_path(db).open("a") as lock:  # (as `arena tournament` holds it)
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            now = get_json(server.url, "/api/season?season=club-w")
        assert [w["state"] for w in now["weeks"]] == ["finished", "finished", "running"]
        assert now["rows"] == before["rows"]
