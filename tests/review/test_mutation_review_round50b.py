"""Round 50 review (b): ``arena leaderboard --season`` and ``arena serve``'s emptied
``[bots]``, warn-once and waiting line (the round's organiser changes), with the tests that
kill the hand mutants the round's own tests let live: which tournament an item selects (an
id before another's name, an exact name before a prefix), a damaged one selected, the rules
compared as they are in force (a house name, an older row) and the draw probability with
them, a week stored without a number of matches, an arena serve's seed, the season's dates
and counts, a week none of whose matches is stored, one tournament's title, ``--season``
beside ``--config``; the waiting line said again after matches, whom it names and how
many, and when the lobby is waiting at all. And the tests of the defects found:

- a week played with a house ruleset file that plays classic's rules was refused from a
  season of classic weeks ("play different rules (classic, ...; house (classic), ...)"):
  the rules' description was compared with the rules;
- bots connected of fewer members than a table seats were said "3 connected: ...;
  awaited: none", with no word of why no match started.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.cli.serve import _named, _say_waiting
from arena.referee import Lobby, Referee
from arena.storage import Storage
from engine import load_ruleset
from tests.support.harness import attach_in_process

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURE, tmp_path / "club.sqlite"))


def _board(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["leaderboard", "--db", str(db), *args])


def _json(db: Path, *args: str) -> dict[str, Any]:
    r = _board(db, *args, "--format", "json")
    assert r.exit_code == 0, r.output
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _ids(db: Path) -> dict[str, str]:
    with Storage.open_readonly(db) as st:
        return {t.name: t.id for t in st.tournaments()}


def _edit(db: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Tournament ``name``'s stored config changed by ``change`` (as an older arena, or
    another run, stored it)."""
    with sqlite3.connect(db) as c:
        (text,) = c.execute(
            "SELECT config_json FROM tournaments WHERE name = ?", (name,)
        ).fetchone()
        cfg = json.loads(text)
        change(cfg)
        c.execute("UPDATE tournaments SET config_json = ? WHERE name = ?", (json.dumps(cfg), name))


def _rename(db: Path, name: str, to: str) -> None:
    with sqlite3.connect(db) as c:
        c.execute("UPDATE tournaments SET name = ? WHERE name = ?", (to, name))


def _season_ids(db: Path, spec: str) -> list[str]:
    return [t["id"] for t in _json(db, "--season", spec)["season"]["tournaments"]]


# --- what an item selects ------------------------------------------------------------


def test_an_item_that_is_one_tournaments_id_and_anothers_name_selects_the_id(db: Path) -> None:
    w1 = _ids(db)["club-w1"]
    _rename(db, "club-w3", w1)  # (a week named as another's id)
    assert _season_ids(db, w1) == [w1]


def test_an_exact_name_is_taken_before_the_names_it_starts(db: Path) -> None:
    ids = _ids(db)
    _rename(db, "club-w3", "club-w10")
    assert _season_ids(db, "club-w1") == [ids["club-w1"]]
    assert _season_ids(db, "club-w") == [ids["club-w1"], ids["club-w2"], ids["club-w3"]]


def test_a_damaged_tournament_selected_is_an_error_naming_it(db: Path) -> None:
    w2 = _ids(db)["club-w2"]
    with sqlite3.connect(db) as c:
        c.execute("UPDATE tournaments SET config_json = '{' WHERE id = ?", (w2,))
    r = _board(db, "--season", "club-w")
    assert r.exit_code == 1 and "error:" in r.output and w2 in r.output, r.output
    assert "damaged" in r.output or "not valid" in r.output, r.output


# --- which tournaments play one game -------------------------------------------------


def test_alike_rules_under_a_house_name_and_an_older_rows_are_one_game(db: Path) -> None:
    def house(cfg: dict[str, Any]) -> None:
        cfg["ruleset"]["name"] = "house"

    def older(cfg: dict[str, Any]) -> None:  # (stored before `ask_forced` existed)
        del cfg["ruleset"]["ask_forced"]

    _edit(db, "club-w2", house)
    _edit(db, "club-w3", older)
    assert len(_season_ids(db, "club-w")) == 3


def test_another_draw_probability_is_another_game_and_said(db: Path) -> None:
    def draw(cfg: dict[str, Any]) -> None:
        cfg["draw_probability"] = 0.1

    _edit(db, "club-w2", draw)
    r = _board(db, "--season", "club-w")
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())  # (a usage error is wrapped to the terminal)
    assert "ratings.draw_probability 0.1" in said and "different rules" in said, r.output


# --- how the weeks are rated and said ------------------------------------------------


def test_a_week_stored_without_a_number_of_matches_is_rated_before_the_next(db: Path) -> None:
    before = _json(db, "--season", "club-w")
    with sqlite3.connect(db) as c:  # (as `arena serve --db` without --matches stores it)
        c.execute("UPDATE tournaments SET total_matches = 0 WHERE name = 'club-w1'")
    after = _json(db, "--season", "club-w")
    assert [(r["bot"], r["mu"], r["sigma"]) for r in after["rows"]] == [
        (r["bot"], r["mu"], r["sigma"]) for r in before["rows"]
    ]
    # (each match at a place of its own in the history: the next week's first after it)
    assert after["rating_history"] == before["rating_history"]


def test_an_arena_serves_seed_is_no_deal_of_the_same_cards(db: Path) -> None:
    def serve(cfg: dict[str, Any]) -> None:  # (its seed draws seats, its deals their own)
        cfg["kind"] = "serve"

    _edit(db, "club-w2", serve)
    notes = _json(db, "--season", "club-w")["season"]["notes"]
    assert not [n for n in notes if "same cards" in n], notes


def test_the_season_runs_from_its_first_weeks_start_to_its_last_weeks_end(db: Path) -> None:
    d = _json(db, "--season", "club-w")
    first, _, last = d["season"]["tournaments"]
    t = d["tournament"]
    assert (t["created_at"], t["finished_at"]) == (first["created_at"], last["finished_at"])
    assert first["created_at"] < last["finished_at"]
    assert (t["total_matches"], t["completed"]) == (18, 18)


def test_a_week_none_of_whose_matches_is_stored_is_no_tournament_its_bots_played(
    db: Path,
) -> None:
    w3 = _ids(db)["club-w3"]
    with sqlite3.connect(db) as c:  # (w3 interrupted before its first match was stored)
        gone = [(r[0],) for r in c.execute("SELECT id FROM matches WHERE tournament_id = ?",
                                           (w3,))]  # fmt: skip
        for table in ("match_players", "deals", "incidents"):
            c.executemany(f"DELETE FROM {table} WHERE match_id = ?", gone)
        c.executemany("DELETE FROM matches WHERE id = ?", gone)
        c.execute("UPDATE tournaments SET finished_at = NULL WHERE id = ?", (w3,))
    d = _json(db, "--season", "club-w")
    assert d["season"]["tournaments"][2]["bots"] == []
    r = _board(db, "--season", "club-w", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert {row["bot"]: row["tournaments"] for row in rows} == {"a": "2", "b": "2", "c": "2"}


def test_a_season_of_one_tournament_says_one_tournament(db: Path) -> None:
    r = _board(db, "--season", "club-w2", "--format", "md")
    assert r.exit_code == 0, r.output
    assert "3 players, 1 tournament, 6 matches (finished)" in r.stdout.splitlines()[0]


def test_season_with_config_is_refused(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "club.toml"
    config.write_text(f'name = "club-w1"\ndb = "{db}"\n[bots]\na = "random"\n')
    r = _board(db, "--season", "club-w", "--config", str(config))
    assert r.exit_code == 2 and "not with --tournament, --config or --list" in r.output, r.output


# --- the waiting line ----------------------------------------------------------------


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m for r in caplog.records if (m := r.getMessage()).startswith("waiting for bots")]


def _stub(waiting: list[bool], connected: list[str], active: list[str]) -> Any:
    """What :func:`_say_waiting` reads of a lobby: whether it waits (``waiting[0]``, set by
    the test) and its referee's bots."""
    referee = SimpleNamespace(connected_bots=lambda: connected, active_bots=lambda: active)
    return SimpleNamespace(waiting_for_bots=lambda: waiting[0], referee=referee,
                           ruleset=SimpleNamespace(players=3), members={})  # fmt: skip


async def _until(caplog: pytest.LogCaptureFixture, n: int) -> None:
    for _ in range(500):  # (a generous bound: a few looks are enough)
        if len(_lines(caplog)) >= n:
            return
        await asyncio.sleep(0.01)


def test_the_wait_after_matches_were_played_is_said_at_once_though_alike(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        waiting = [True]
        lobby = _stub(waiting, ["ann"], ["ann", "bob", "cid"])
        said = asyncio.create_task(_say_waiting(lobby, every=3600, look=0.01))
        await _until(caplog, 1)
        waiting[0] = False  # a match is played ...
        await asyncio.sleep(0.1)
        waiting[0] = True  # ... and ends with the same bots as before: said again at once
        await _until(caplog, 2)
        said.cancel()

    with caplog.at_level(logging.WARNING, "arena.referee"):
        asyncio.run(scenario())
    line = "waiting for bots (a match seats 3): 1 connected: ann; awaited: bob, cid"
    assert _lines(caplog) == [line, line]


def test_the_waiting_line_names_only_listed_bots_and_says_none_awaited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario(connected: list[str], active: list[str]) -> None:
        said = asyncio.create_task(_say_waiting(_stub([True], connected, active), look=0.01))
        await _until(caplog, 1)
        said.cancel()

    said = []
    for connected, active in (
        (["ann", "cid"], ["ann", "bob"]),  # cid removed, its stream not yet let go
        (["ann", "bob"], ["ann", "bob"]),  # every listed bot connected, too few for a table
    ):
        caplog.clear()
        with caplog.at_level(logging.WARNING, "arena.referee"):
            asyncio.run(scenario(connected, active))
        said += _lines(caplog)
    assert said == [
        "waiting for bots (a match seats 3): 1 connected: ann; awaited: bob",
        "waiting for bots (a match seats 3): 2 connected: ann, bob; awaited: none",
    ]


def test_a_waiting_line_names_twelve_bots_and_counts_the_rest() -> None:
    names = [f"b{i:02d}" for i in range(14)]
    assert _named(names[:12]) == ": " + ", ".join(names[:12])
    assert _named(names[:13]) == ": " + ", ".join(names[:12]) + " and 1 more"
    assert _named([]) == ""


def test_the_lobby_waits_for_bots_only_with_no_match_and_too_few_members() -> None:
    async def scenario() -> dict[str, bool]:
        referee = Referee()
        attach_in_process(referee, ("ann", "bob", "cid"), lambda *_: None)
        classic = load_ruleset("classic")
        out = {"three idle": Lobby(referee, classic).waiting_for_bots()}
        of_two = Lobby(referee, classic, members={"ann": "m1", "bob": "m1"})
        out["of two members"] = of_two.waiting_for_bots()
        done = Lobby(referee, classic, max_matches=0)
        referee.remove_bot("cid", "gone")
        out["all started"] = done.waiting_for_bots()
        playing = Lobby(referee, classic)
        out["two idle"] = playing.waiting_for_bots()
        task = asyncio.create_task(asyncio.sleep(0))
        playing._tasks.add(task)  # (a match under way)
        out["two idle, a match under way"] = playing.waiting_for_bots()
        await task
        stopped = Lobby(referee, classic)
        stopped.stop()
        out["stopped"] = stopped.waiting_for_bots()
        return out

    assert asyncio.run(scenario()) == {
        "three idle": False,
        "of two members": True,
        "all started": False,
        "two idle": True,
        "two idle, a match under way": False,
        "stopped": False,
    }


def test_the_waiting_line_says_when_the_connected_bots_are_of_too_few_members(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        referee = Referee()
        attach_in_process(referee, ("ann-a", "ann-b", "bob"), lambda *_: None)
        lobby = Lobby(referee, load_ruleset("classic"), members={"ann-a": "ann", "ann-b": "ann"})
        said = asyncio.create_task(_say_waiting(lobby, look=0.01))
        await _until(caplog, 1)
        said.cancel()

    with caplog.at_level(logging.WARNING, "arena.referee"):
        asyncio.run(scenario())
    assert _lines(caplog) == [
        "waiting for bots (a match seats 3): 3 connected (of 2 members): ann-a, ann-b, bob; "
        "awaited: none"
    ]
