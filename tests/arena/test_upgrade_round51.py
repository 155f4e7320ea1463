"""Round 51, upgrades: what the arena of 0207b5a5 (the 49th session's end) left is read,
resumed, replayed, shown and rated together with this one's tournaments.

The fixture ``data/upgrade_round51/0207b5a5/`` (README.md there) was made by that version
run from its own ``git worktree``: a finished and an interrupted ``arena tournament`` of
three bundled bots (``random``, ``heuristic``, ``counting``), two ``arena serve --db``
sessions (one stopped in a match) with their ``--record-dir`` records, records exported by
its ``arena web`` and its tokens file with a ``[members]`` table. That arena took every
module of ``bots/`` for each bundled bot's code; this one takes the modules each runs
(``arena.tournament.bundled``), and reads the older digest as what it stood for: the
tournament resumes where no bot's own modules changed, and where one did, that one alone
is named.
"""

from __future__ import annotations

import json
import logging
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.cli.serve import read_tokens_file
from arena.storage import Storage
from arena.tournament import bundled
from arena.tournament.bundled import LEGACY_CODE
from arena.tournament.config import bundled_changed, load_config
from tests.arena.fake_referee import run_fake
from tests.support.harness import get_json, web_server

DATA = Path(__file__).parent / "data" / "upgrade_round51" / "0207b5a5"
W1, W2 = "club-w1-6af61fd15b62", "club-w2-3d571e5572af"  # (6/6; 2/6, then SIGINT)
#: The digest 0207b5a5 stored for every bundled bot (all of its bots/).
LEGACY = "1ae5da032cd017af"
SERVE = ("club-serve-20261206-210531-3689", "club-serve-20261206-210540-d35d")
RECORDS = sorted([*DATA.glob("recs/*.jsonl"), *DATA.glob("stored_*.json")])


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the folder, the current directory (club.toml's db is relative to it)."""
    where = Path(shutil.copytree(DATA, tmp_path / "0207b5a5"))
    monkeypatch.chdir(where)
    return where


def _w2() -> object:
    return load_config("club.toml", ["name=club-w2", "seed=52"])


def test_the_fixture_is_what_that_arena_stored() -> None:
    with Storage.open_readonly(DATA / "club.sqlite") as st:
        stored = {t.id: t for t in st.tournaments()}
    assert {k: (t.completed, t.finished_at is not None) for k, t in stored.items()} == {
        W1: (6, True), W2: (2, False),
    }  # fmt: skip
    bots = stored[W2].config["bots"]
    assert [(b["name"], b["bot"], b["code"]) for b in bots] == [
        ("rnd", "random", LEGACY), ("heu", "heuristic", LEGACY), ("cnt", "counting", LEGACY),
    ]  # fmt: skip
    with Storage.open_readonly(DATA / "serve.sqlite") as st:
        sessions = sorted((t.id, t.completed) for t in st.tournaments())
    assert sessions == [(SERVE[0], 2), (SERVE[1], 1)]
    tokens, members = read_tokens_file(DATA / "bots.toml")
    assert sorted(tokens) == ["alice-v1", "alice-v2", "bob", "cid"]
    assert members == {"alice-v1": "alice", "alice-v2": "alice"}


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_its_records_check(record: Path) -> None:
    checked = _cli("replay", "--check", str(record))
    assert checked.exit_code == 0, checked.output
    assert "OK: every action is legal and every stored score matches" in checked.output


def test_its_records_replay_the_interrupted_one_said_so() -> None:
    stopped = _cli("replay", str(DATA / "recs" / "20261206-210540-d35d-m00001.jsonl"))
    assert stopped.exit_code == 0, stopped.output
    assert "the referee was stopped (a shutdown) before the match ended" in stopped.output
    exported = _cli("replay", str(DATA / "stored_club-w1.json"))
    assert exported.exit_code == 0, exported.output
    assert "ended: the deal cap (max_deals 2) after deal 2" in exported.output


def test_its_interrupted_tournament_of_three_bundled_bots_resumes(
    club: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        resumed = run_fake(_w2())
    assert (resumed.tournament_id, resumed.skipped, resumed.completed) == (W2, 2, 6)
    assert (
        f"tournament {W2} was stored by an arena that took every module of its bots/ for the "
        "code of the bundled bots rnd, heu, cnt: the modules they run are this arena's"
    ) in caplog.text
    assert "another version" not in caplog.text
    # `arena leaderboard --config` finds that arena's finished week as its config's
    shown = _cli("leaderboard", "--config", "club.toml", "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["tournament"]["id"] == W1


def test_a_bot_whose_own_modules_changed_since_is_the_only_one_named(
    club: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # As if 0207b5a5's counting.py had been another than this arena's (random_bot.py and
    # heuristic.py the same): counting alone changed, though the old digest was one for all.
    monkeypatch.setitem(LEGACY_CODE, LEGACY, {**LEGACY_CODE[LEGACY], "counting": "0" * 16})
    with caplog.at_level(logging.WARNING, logger="arena.tournament"):
        started = run_fake(_w2())
    assert started.tournament_id != W2 and started.skipped == 0
    assert f"tournament {W2} in " in caplog.text
    assert "(bundled bots cnt: another version of the arena's bots/" in caplog.text
    season = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w1,club-w2",
                  "--format", "json")  # fmt: skip
    assert season.exit_code == 0, season.output
    weeks = json.loads(season.stdout)["season"]["tournaments"]
    assert [(t["id"], t["bots_changed"]) for t in weeks] == [
        (W1, []), (W2, []), (started.tournament_id, ["cnt"]),
    ]  # fmt: skip


def test_a_season_of_its_weeks_and_this_arenas_in_the_leaderboard_and_on_the_web(
    club: Path,
) -> None:
    assert run_fake(_w2()).finished
    new = run_fake(load_config("club.toml", ["name=club-w3", "seed=53"]))
    assert new.finished
    season = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w", "--format", "json")
    assert season.exit_code == 0, season.output
    doc = json.loads(season.stdout)
    weeks = doc["season"]["tournaments"]
    assert [t["id"] for t in weeks] == [W1, W2, new.tournament_id]
    assert [t["bots_changed"] for t in weeks] == [[], [], []] and doc["season"]["notes"] == []
    assert {r["bot"]: r["matches"] for r in doc["rows"]} == {"rnd": 18, "heu": 18, "cnt": 18}
    with web_server(club / "club.sqlite") as server:
        shown = get_json(server.url, "/api/season?season=club-w")
        assert [w["id"] for w in shown["weeks"]] == [W1, W2, new.tournament_id]
        assert shown["notes"] == [] and shown["completed"] == 18
        assert shown["bot_tournament"] == dict.fromkeys(("heu", "cnt", "rnd"), new.tournament_id)


MINE = "club-mine-e0491b6bf3ac"  # (mine.sqlite: 2/6, then SIGINT; bots/ held mybot.py)


def test_a_tournament_played_beside_a_bot_of_the_users_own_in_bots_resumes(
    club: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    """Defect: 0207b5a5 played it with the user's ``bots/mybot.py`` beside the bundled
    bots (docs/writing-a-bot.md names such a file), and took it for part of each bundled
    bot's code: no row of LEGACY_CODE has that digest, and this arena, the same bots/ file
    for file, started a new tournament saying "bundled bots rnd, heu, cnt: another version
    of the arena's bots/ than the one that played it"."""
    # That arena's bots/ file for file (bots.tar.gz: `git archive 0207b5a5 bots/`): the
    # premise, which this checkout's own bots/ stopped meeting when a bot changed.
    with tarfile.open(DATA / "bots.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    folder = tmp_path / "bots"
    monkeypatch.setattr(bundled, "bots_folder", lambda: folder)
    config = load_config("club.toml", ["name=club-mine", "seed=55", "db='mine.sqlite'"])
    with Storage.open_readonly(Path("mine.sqlite")) as st:
        (stored,) = [t.config for t in st.tournaments()]
    # bots/ without her file (or with it edited) is not the one that played: another code
    assert bundled_changed(stored, config.identity()) == ["rnd", "heu", "cnt"]
    shutil.copy(club / "mybot.py", folder / "mybot.py")
    assert bundled_changed(stored, config.identity()) == []
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        resumed = run_fake(config)
    assert (resumed.tournament_id, resumed.skipped, resumed.completed) == (MINE, 2, 6)
    assert f"tournament {MINE} was stored by an arena that took every module" in caplog.text
    assert "another version" not in caplog.text
    new = run_fake(load_config("club.toml", ["name=club-mine2", "seed=56", "db='mine.sqlite'"]))
    season = _cli(
        "leaderboard", "--db", "mine.sqlite", "--season", "club-mine,club-mine2",
        "--format", "json",
    )  # fmt: skip
    assert season.exit_code == 0, season.output
    weeks = json.loads(season.stdout)["season"]["tournaments"]
    assert [(t["id"], t["bots_changed"]) for t in weeks] == [(MINE, []), (new.tournament_id, [])]


def test_its_serve_sessions_are_a_season_on_the_web(club: Path) -> None:
    board = _cli("leaderboard", "--db", "serve.sqlite", "--season", "club-serve",
                 "--format", "json")  # fmt: skip
    assert board.exit_code == 0, board.output
    doc = json.loads(board.stdout)
    assert [t["id"] for t in doc["season"]["tournaments"]] == list(SERVE)
    with web_server(club / "serve.sqlite") as server:
        shown = get_json(server.url, "/api/season?season=club-serve")
        # (sessions deal each match its own cards: the title says no deals, as each one's)
        assert shown["title"].startswith("season club-serve — classic, 2 deals max, 3 players")
        assert "independent" not in shown["title"]
        assert {r["bot"]: r["matches"] for r in shown["rows"]} == {
            r["bot"]: r["matches"] for r in doc["rows"]
        }
        assert shown["completed"] == 3
        for tid in SERVE:
            got = get_json(server.url, f"/api/leaderboard?tournament={tid}")
            assert got["rows"], got


def test_its_tokens_file_read_again_takes_a_removed_bot_off_its_member(club: Path) -> None:
    # 0207b5a5 refused this edit (alice-v2 out of [bots], her member line as it was) and
    # kept alice-v2's token; this arena, reading the file again, takes it.
    text = (club / "bots.toml").read_text()
    (club / "bots.toml").write_text(text.replace('alice-v2 = "tok-alice-v2-0123"\n', ""))
    tokens, members = read_tokens_file(club / "bots.toml", empty_ok=True, known={"alice-v2"})
    assert sorted(tokens) == ["alice-v1", "bob", "cid"]
    assert members == {"alice-v1": "alice"}
