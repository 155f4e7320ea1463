"""A club's season, lived through from the docs (round 48): a 4-player 1001 league and a
3-player classic league in one database, a tournament a week, members' bots changing
between weeks, results read in `arena web`.

What a club met that the product did not say or did wrong is pinned here; what it found
right is in the round's report.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
import sqlite3
import urllib.error
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentError, _say_unfinished_namesakes
from arena.web.demo import make_demo_db
from tests.arena.test_serve_audit import _serve_terminated_once_listening
from tests.support.harness import get_json, web_server
from tests.web.test_web_poll_cost import get
from tests.web.test_web_round38 import _run_page_js


def _summary(tournament_id: str | None) -> dict[str, Any]:
    """A replay summary as `/api/matches/<id>` answers it, of a stored match of
    ``tournament_id`` (None: a record file's, which belongs to no stored tournament)."""
    stored = {} if tournament_id is None else {"stored": {"tournament_id": tournament_id}}
    return {
        "match_id": "w1-m00003", "players": ["alice", "bob", "carol", "dan"],
        "seats": ["alice", "bob", "carol", "dan"], "deals": [], "result": None,
        "incident_lines": [], **stored,
    }  # fmt: skip


def _replay_links(summary: dict[str, Any], search: str = "") -> Any:
    """The hrefs of a replay page's header and of its players' names, with ``search`` as the
    address's query (replay.js run in node over tests/web's small DOM)."""
    return _run_page_js(
        "replay.js",
        f"""
location.search = {json.dumps(search)};
document.body.prepend = () => {{}};  // (the small DOM has no prepend)
header();
summaryCame({json.dumps(summary)});
state.seat = null;
const links = [];
const walk = (n) => {{ if (n.tag === "a") links.push(n.attrs.href); n.children.forEach(walk); }};
matchHead().filter(Boolean).forEach(walk);
process.stdout.write(JSON.stringify([headerLinks.map((a) => a.attrs.href), links]));
""",
    )


def test_a_replays_links_lead_to_its_own_tournament_not_the_latest() -> None:
    """Defect: the replay page's links followed the address's ``?tournament=`` alone. A
    replay opened by its id (`arena replay --list` names it, the club's site links it),
    or from a leaderboard shown by default, has none: each player's name then led to his
    page in the database's latest tournament (this week's classic league, from last week's
    1001 match: another tournament's figures under his name; "no bot 'dan' in tournament
    ..." for a member not in it) and the header's Leaderboard to the latest table. They
    now lead to the match's own tournament, which `/api/matches/<id>` names
    (``stored.tournament_id``)."""
    heads, players = _replay_links(_summary("club1001-w1-e00e0c84f2b9"))
    week1 = "?tournament=club1001-w1-e00e0c84f2b9"
    assert heads == ["/" + week1] * 2
    assert players == [f"/bot/{p}{week1}" for p in ("alice", "bob", "carol", "dan")]
    # an address naming another tournament (a hand-edited link) does not lead elsewhere
    heads, players = _replay_links(_summary("club1001-w1-e00e0c84f2b9"), "?tournament=cl-w2")
    assert heads == ["/" + week1] * 2 and players[0] == f"/bot/alice{week1}"
    # a record served from a file belongs to no stored tournament: the address's, as before
    heads, players = _replay_links(_summary(None), "?tournament=cl-w2")
    assert heads == ["/?tournament=cl-w2"] * 2 and players[0] == "/bot/alice?tournament=cl-w2"
    heads, players = _replay_links(_summary(None))
    assert heads == ["/", "/"] and players[0] == "/bot/alice"


def test_a_replay_of_last_weeks_match_links_last_weeks_pages(season: Path) -> None:
    """The same, from the summary `arena web` serves of a match of week 1 while week 2 is
    the latest tournament of the database."""
    with web_server(season) as server:
        (match_id, *_) = [
            m["match_id"] for m in get_json(server.url, "/api/matches?tournament=w1")["matches"]
        ]
        summary = get_json(server.url, f"/api/matches/{match_id}")
    heads, players = _replay_links(summary)
    assert heads == ["/?tournament=w1"] * 2
    assert players and all(p.endswith("?tournament=w1") for p in players), players


# --- the next week's run of a finished tournament's config ------------------------------

CLUB = """\
name = "club"
seed = 12
max_deals = 1
concurrency = 3
db = "runs/club.sqlite"
out = "out/club"
bots = ["random", "heuristic", "counting"]
"""


@pytest.fixture(scope="module")
def finished_week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the club's config and its database with the tournament of that
    config played to its end (6 matches of one deal)."""
    club = tmp_path_factory.mktemp("club")
    (club / "club.toml").write_text(CLUB)
    with contextlib.chdir(club):
        first = CliRunner().invoke(main, ["tournament", "--config", "club.toml", "--no-progress"])
    assert first.exit_code == 0, first.output
    return club


def _stored(db: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT id, started_at FROM matches ORDER BY id").fetchall()


def _run_again(finished_week: Path, tmp_path: Path, *args: str) -> tuple[str, Path]:
    """The club's command run again on a copy of its database (made at the first call):
    (its words, the copy)."""
    db = tmp_path / "club.sqlite"
    if not db.exists():
        shutil.copy(finished_week / "runs" / "club.sqlite", db)
    with contextlib.chdir(finished_week):
        again = CliRunner().invoke(
            main, ["tournament", "--config", "club.toml", "--no-progress", "--db", str(db),
                   "--out", str(tmp_path / "out"), *args],
        )  # fmt: skip
    return " ".join(again.output.split()), db


def test_a_finished_tournaments_command_run_again_says_why_it_plays_nothing(
    finished_week: Path, tmp_path: Path
) -> None:
    """Defect: a club running its config again the next week got "resuming club-...: 6 of
    6 matches already stored" and "0 matches played", exit 0, and last week's table: no
    word that the tournament is finished, nor how to play another. The start now says so,
    and what plays a new one (another name or --seed) or this one again (--fresh)."""
    said, db = _run_again(finished_week, tmp_path)
    before = _stored(db)
    tid = before[0][0].rsplit("-m", 1)[0]
    assert f"note: tournament {tid} finished " in said, said
    assert (
        "every match stored (6 of 6): this run plays nothing and writes its leaderboard "
        "again; another name (--set name=NEW) or --seed N plays a new tournament beside it, "
        "and --fresh plays it again, forgetting its 6 matches" in said
    ), said
    assert "0 matches played" in said and _stored(db) == before
    # a tournament stopped before its end is resumed, as ever, with no such note
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE tournaments SET finished_at = NULL")  # (stopped, not finished)
        conn.commit()
    said, _ = _run_again(finished_week, tmp_path)
    assert "note: tournament" not in said and "0 matches played" in said, said
    # one stored with another config (a fixed `id`: the run refuses it) plays nothing
    # either, and is not said to be finished and played again
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE tournaments SET fingerprint = 'another'")
        conn.commit()
    said, _ = _run_again(finished_week, tmp_path)
    assert "note: tournament" not in said and "was started with another config" in said, said


def test_fresh_over_a_finished_tournament_says_what_it_forgets(
    finished_week: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `--fresh` (what a club tries for "play it again this week") forgot the
    finished tournament's stored matches without a word, and with the config's `seed`
    played the same deals again. The start now says what it forgets, that the deals are
    the same, and what keeps them. (The run itself is stopped here before any bot starts:
    the note is said before, and nothing is forgotten.)"""

    def no_run(*_: object, **__: object) -> None:
        raise TournamentError("stopped by the test before any bot starts")

    monkeypatch.setattr("arena.cli.tournament.run", no_run)
    said, db = _run_again(finished_week, tmp_path, "--fresh")
    tid = _stored(db)[0][0].rsplit("-m", 1)[0]
    assert f"note: --fresh forgets the 6 matches stored of tournament {tid} (finished " in said, (
        said
    )
    assert (
        "once every bot has connected, and plays it again on the same deals (seed 12); "
        "another name (--set name=NEW) or --seed N plays a new tournament beside it, keeping "
        "them" in said
    ), said
    assert len(_stored(db)) == 6


# --- a member across the season's tournaments -------------------------------------------


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A club's database: the 1001 league's week 1 with dan, then the classic league's
    week 2, the latest, which dan does not play in (he left), nor did erin play week 1."""
    db = tmp_path_factory.mktemp("season") / "club.sqlite"
    make_demo_db(db, matches=2, max_deals=1, tournament_id="w1", bots=("alice", "bob", "dan"))
    make_demo_db(db, matches=2, max_deals=1, tournament_id="w2", bots=("alice", "bob", "erin"))
    return db


def test_a_bot_looked_for_in_another_weeks_tournament_is_said_where_it_plays(
    season: Path,
) -> None:
    """Defect: `arena replay --list --bot dan` (the latest tournament by default) and
    `arena web`'s page of dan said only "no bot 'dan' in tournament w2": a member of last
    week, or of the other league, seemed not to be in the database at all. They now name
    the tournaments he plays in."""
    r = CliRunner().invoke(main, ["replay", "--list", "--db", str(season), "--bot", "dan"])
    assert r.exit_code == 2, r.output
    assert (
        "--bot: no bot 'dan' in tournament w2 (its bots: alice, bob, erin); dan plays in w1 "
        "(--tournament ID)" in " ".join(r.output.split())
    ), r.output
    r = CliRunner().invoke(main, ["replay", "--list", "--db", str(season), "--bot", "nobody"])
    assert r.exit_code == 2 and "plays in" not in r.output, r.output
    with web_server(season) as server:
        for path in ("/api/bots/dan", "/api/matches?bot=dan"):
            with pytest.raises(urllib.error.HTTPError) as e:
                get_json(server.url, path)
            assert e.value.code == 404
            said = json.loads(e.value.read())["error"]
            assert said == "no bot 'dan' in tournament 'w2'; dan plays in w1", said


def test_a_bots_page_links_its_pages_in_the_other_tournaments(season: Path, tmp_path: Path) -> None:
    """Missing for a club: a member's page showed one tournament, and nothing said that he
    played in others (another week, the other league). `/api/bots/<name>` now lists (`plays_in`) the
    tournaments it plays in, the latest first, and the page links its page in each."""
    with web_server(season) as server:
        page = get_json(server.url, "/api/bots/alice?tournament=w1")
    assert [(t["id"], t["name"]) for t in page["plays_in"]] == [("w2", "w2"), ("w1", "w1")]
    got = _run_page_js(
        "bot.js",
        f"""
const p = otherTournaments({json.dumps(page)});
const links = [];
const walk = (n) => {{
  if (n.tag === "a") links.push([n.attrs.href, n.textContent]);
  n.children.forEach(walk);
}};
walk(p);
process.stdout.write(JSON.stringify([p.textContent.split(":")[0], links]));
""",
    )
    when = page["plays_in"][0]["created_at"][:16].replace("T", " ")
    assert got == ["Also plays in", [["/bot/alice?tournament=w2", f"w2 ({when})"]]]
    # a tournament of the bot stored since: its page's answer is another (no 304 of the
    # list it had)
    db = tmp_path / "club.sqlite"
    shutil.copy(season, db)
    with web_server(db) as server:
        status, headers, _ = get(server.url, "/api/bots/alice?tournament=w1")
        make_demo_db(db, matches=1, max_deals=1, tournament_id="w3", bots=("alice", "bob", "x"))
        again = {"If-None-Match": headers["ETag"]}
        status, _, body = get(server.url, "/api/bots/alice?tournament=w1", again)
    assert status == 200
    assert [t["id"] for t in json.loads(body)["plays_in"]] == ["w3", "w2", "w1"]
    with web_server(season) as server:
        page = get_json(server.url, "/api/bots/erin")
    assert [t["id"] for t in page["plays_in"]] == ["w2"]
    got = _run_page_js(
        "bot.js", f"process.stdout.write(JSON.stringify(otherTournaments({json.dumps(page)})));"
    )
    # nothing to show: "" (a null was written out as the text "null" by the page's
    # replaceChildren: tests/docs/test_journeys_round49.py)
    assert got == ""


def test_a_new_tournament_beside_a_finished_one_of_its_name_says_why(
    finished_week: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: the same command a week later, a bot file edited meanwhile (or `max_deals`),
    played a whole new tournament of the same name without a word of why, where the
    unedited command plays nothing: only an unfinished namesake was said. The start now
    says which tournament it starts beside which finished one, and what changed."""
    db = tmp_path / "club.sqlite"
    shutil.copy(finished_week / "runs" / "club.sqlite", db)
    cfg = load_config(finished_week / "club.toml", ["max_deals=2"])
    caplog.set_level(logging.INFO, logger="arena.tournament.progress")
    with Storage(db) as st:
        (old,) = st.tournaments()
        _say_unfinished_namesakes(cfg, st)
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"a new tournament, {cfg.tournament_id}, beside {old.id} of the same name (finished "
        f"{old.finished_at[:16].replace('T', ' ')}): this config is not its own (max_deals "
        "1 → 2)"
    ], said


# --- the club's live sessions: `arena serve --db` -------------------------------------


def test_a_serve_sessions_tournament_takes_the_name_given(tmp_path: Path) -> None:
    """Missing for a club: every `arena serve --db` session was a tournament named `serve`,
    so a season's sessions in the club's database read "serve [serve-20261206-..., date]"
    in `arena web`'s selector and `--tournament serve` was the latest of them all. `--name`
    names it (its id: NAME-<start time>-<hex>); given without --db (where nothing would
    keep it) or written as no tournament name, it is refused."""
    db = tmp_path / "club.sqlite"
    out = _serve_terminated_once_listening(tmp_path, "", "--db", str(db), "--name", "live-w3")
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert re.search(r"as tournament live-w3-\d{8}-\d{6}-[0-9a-f]{4}\n", out.stdout), out.stdout
    tokens = tmp_path / "tokens.toml"
    for args, why in (
        (["--name", "live-w3"], "--name names the tournament that --db stores: give --db too"),
        (["--name", "live w3", "--db", str(db)], "'live w3': a tournament name starts with"),
    ):
        r = CliRunner().invoke(main, ["serve", "--tokens", str(tokens), *args])
        assert r.exit_code == 2 and why in " ".join(r.output.split()), r.output


def test_a_bot_renamed_between_weeks_is_said_renamed(
    finished_week: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a member's bot renamed in the club's config (the same file, the same code)
    was said to be "bots added: rnd; bots removed: random": nothing told the club that
    its results under the old name stay there, no page joining them to the new one. The
    change now says "bot random renamed rnd"."""
    db = tmp_path / "club.sqlite"
    shutil.copy(finished_week / "runs" / "club.sqlite", db)
    renamed = 'bots={rnd = "random", heuristic = "heuristic", counting = "counting"}'
    cfg = load_config(finished_week / "club.toml", [renamed])
    caplog.set_level(logging.INFO, logger="arena.tournament.progress")
    with Storage(db) as st:
        _say_unfinished_namesakes(cfg, st)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert said.endswith("this config is not its own (bot random renamed rnd)"), said
