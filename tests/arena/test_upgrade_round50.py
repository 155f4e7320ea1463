"""Round 50, upgrades: what the arenas of 9913183 and 7200ac96 left is read, resumed and
rated together with this one's tournaments.

The fixtures ``data/upgrade_round50/<commit>/`` (README.md there) were made by each version
run from its own worktree: a finished and an interrupted ``arena tournament`` of the bundled
``random`` bot, two ``arena serve --db`` sessions (one stopped in a match) with their
``--record-dir`` records, a record exported by that version's ``arena web`` and its tokens
file. A tournament of bundled bots is resumed only by an arena whose bots run the modules
that played it (docs/tournament.md, upgrading): those arenas digested all of ``bots/``
(heuristic, counting and pimc changed since 9913183), and since round 51 what a stored
digest stands for is read (``arena.tournament.bundled.LEGACY_CODE``): their ``random``
is this arena's until a later session changes ``random_bot.py``, so which one is resumed
is read from the stored code digest, not pinned.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import urllib.error
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.cli.serve import read_tokens_file
from arena.storage import Storage
from arena.tournament.config import as_current_code, load_config
from tests.arena.fake_referee import run_fake
from tests.support.harness import get_json, web_server

DATA = Path(__file__).parent / "data" / "upgrade_round50"
OLD, NEW = "9913183", "7200ac96"  # (the 47th session's end; the 48th's)
#: Each version's tournaments: (club-w1, finished; club-w2, 2 of 12 stored).
IDS = {
    OLD: ("club-w1-8c2a5da3881d", "club-w2-eec6751a28bc"),
    NEW: ("club-w1-4f8448bd794b", "club-w2-078c876f64b1"),
}
RECORDS = sorted((p for v in (OLD, NEW) for p in (DATA / v).rglob("*.json*")), key=lambda p: str(p))


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(params=[OLD, NEW])
def club(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of one version's folder, the current directory (club.toml's paths are
    relative to it)."""
    where = tmp_path / request.param
    shutil.copytree(DATA / request.param, where)
    monkeypatch.chdir(where)
    return where


def _stored(db: Path) -> dict[str, tuple[str, int, bool]]:
    with Storage.open_readonly(db) as st:
        return {t.id: (t.name, t.completed, t.finished_at is not None) for t in st.tournaments()}


def test_the_fixtures_are_what_those_arenas_stored() -> None:
    # (what makes them old: without it the tests below mean nothing)
    for v, (w1, w2) in IDS.items():
        assert _stored(DATA / v / "club.sqlite") == {
            w1: ("club-w1", 12, True), w2: ("club-w2", 2, False),
        }  # fmt: skip
        serve = _stored(DATA / v / "serve.sqlite")
        assert sorted(c for _, c, _ in serve.values()) == [1, 2]
    # 9913183 read no [members] table; 7200ac96's tokens file has one, read as it was.
    assert "[members]" not in (DATA / OLD / "bots.toml").read_text()
    tokens, members = read_tokens_file(DATA / NEW / "bots.toml")
    assert sorted(tokens) == ["alice-v1", "alice-v2", "bob", "cid"]
    assert members == {"alice-v1": "alice", "alice-v2": "alice"}  # (bob, cid: their own)


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_older_records_check(record: Path) -> None:
    checked = _cli("replay", "--check", str(record))
    assert checked.exit_code == 0, checked.output
    assert "OK: every action is legal and every stored score matches" in checked.output


def test_the_interrupted_serve_match_is_said_as_such() -> None:
    for v in (OLD, NEW):
        (last,) = sorted((DATA / v / "recs").glob("*.jsonl"))[-1:]
        shown = _cli("replay", str(last))
        assert shown.exit_code == 0, shown.output
        assert "the referee was stopped (a shutdown) before the match ended" in shown.output


def test_the_interrupted_tournament_resumes_and_a_season_rates_old_and_new_weeks(
    club: Path,
) -> None:
    version = club.name
    w1, w2 = IDS[version]
    config = load_config("club.toml", ["name=club-w2", "seed=51"])
    with Storage.open_readonly(Path("club.sqlite")) as st:
        (stored,) = [t for t in st.tournaments() if t.id == w2]
    # (the bots/ that played it, or another: the code digest the old arena stored)
    same = [as_current_code(b).get("code") for b in stored.config["bots"]] == [
        b.code for b in config.bots
    ]
    resumed = run_fake(config)
    if same:  # (this arena's bots/: the same config resumes it)
        assert (resumed.tournament_id, resumed.skipped, resumed.completed) == (w2, 2, 12)
        # This arena deals each set's matches the cards that one dealt its stored ones.
        with sqlite3.connect("club.sqlite") as db:
            rows = db.execute(
                "SELECT set_no, seed, record_json FROM matches WHERE tournament_id = ?", (w2,)
            ).fetchall()
        dealt = {(n, seed, json.dumps(json.loads(r)["deals"][0]["hands"])) for n, seed, r in rows}
        assert len(rows) == 12 and len(dealt) == 2  # (two sets of six seatings)
    else:  # (another version's bots/: a new tournament, as docs/tournament.md says)
        assert resumed.tournament_id != w2 and resumed.skipped == 0
    new_week = run_fake(load_config("club.toml", ["name=club-w3", "seed=52"]))
    assert new_week.finished
    season = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w", "--format", "json")
    assert season.exit_code == 0, season.output
    said = season.output.replace("\n", " ")
    if same:
        assert '"tournaments": [' in said and w1 in said and w2 in said
        assert "not finished" not in said and "changed since" not in said
    else:  # the old unfinished week counts its stored matches; the bots said changed
        assert f"{w2} is not finished (2/12 matches stored)" in said
        assert "another version of the arena's bots/" in said
    board = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w")
    assert board.exit_code == 0, board.output
    matches = 12 + 12 + 12 + (0 if same else 2)
    assert f"{matches} matches" in board.output


def test_arena_web_shows_every_older_tournament_and_match(club: Path) -> None:
    for db in ("club.sqlite", "serve.sqlite"):
        with web_server(club / db) as server:
            listed = get_json(server.url, "/api/tournaments")
            ids = [t["id"] for t in listed]
            assert len(ids) == 2
            for tid in ids:
                board = get_json(server.url, f"/api/leaderboard?tournament={tid}")
                assert board["rows"], board
                for row in board["rows"]:
                    get_json(server.url, f"/api/bots/{row['bot']}?tournament={tid}")
                if tid == IDS[club.name][1]:
                    continue  # (unfinished, duplicate deals: its replays wait for its end)
                shown = get_json(server.url, f"/api/matches?tournament={tid}&limit=50")
                assert shown["matches"]
                for m in (m["match_id"] for m in shown["matches"]):
                    summary = get_json(server.url, f"/api/matches/{m}")
                    for k in range(len(summary["deals"])):
                        try:
                            deal = get_json(server.url, f"/api/matches/{m}/deals/{k}")
                        except urllib.error.HTTPError as e:
                            pytest.fail(f"{m} deal {k}: {e.code} {e.read().decode()}")
                        assert deal["steps"]
