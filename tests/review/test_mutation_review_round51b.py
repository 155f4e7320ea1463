"""Round 51 review (b): a bundled bot's code (``arena.tournament.bundled``), the season on
the web (``/api/season``, ``arena web --season``), a season's deals and ``[members]`` entries
dropped when the tokens file is read again (the round's organiser changes), with the tests
that kill the hand mutants the round's own tests let live: every form of import of
``bots/`` (``import bots.x as y``, ``from bots import x``, ``from . import x``, ``from .x
import y``, multi-line, in a function, a cycle, a name with no file, a module that does
not parse), a registry written without an annotation or unreadable, an older arena's
digest of a bot the table has no column for or of no string, the comparisons of stored
identities read as this arena's, the resume's log lines, a season of a session and a
tournament, two selections of the same tournaments, a bot added to the tokens file while
the arena runs and then removed with its member's line left. And the test of the defect
found:

- a season page did not redraw a week whose state changed with no match stored (taken up
  again by a runner, or a new week of its prefix started): ``/api/season``'s ``version``,
  by which the page decides to draw again, was the season's matches alone, so the weeks
  table said "stopped" under a status line saying "live".
"""

from __future__ import annotations

import fcntl
import json
import logging
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage, lock_path
from arena.tournament.bundled import LEGACY_CODE, bundled_files, code_now
from arena.tournament.config import (
    as_current_code,
    bundled_changed,
    code_digest,
    identity_changes,
    load_config,
)
from arena.web import DataSource
from tests.arena.fake_referee import run_fake
from tests.cli.test_tokens_members_round51 import BOTS, MEMBERS
from tests.cli.test_tokens_members_round51 import _watch as _members_watch
from tests.cli.test_tokens_reload_round49 import _settle, _who, _write
from tests.support.harness import get_json, web_server

UPGRADE = Path(__file__).parents[1] / "arena" / "data" / "upgrade_round50"
SEASON = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"
HOUSE = Path(__file__).parents[1] / "arena" / "data" / "house_1001_ba7b873d"
W2 = "club-w2-eec6751a28bc"  # (9913183's interrupted tournament of random bots)

REGISTRY = """_WHERE: dict[str, tuple[str, str]] = {
    "random": ("bots.r", "R"),
    "heuristic": ("bots.h", "H"),
    "counting": ("bots.c", "C"),
    "pimc": ("bots.p", "P"),
}
"""


def _folder(tmp_path: Path, registry: str | None = REGISTRY) -> Path:
    """A ``bots/`` whose ``random`` (r.py) imports, in every form, a chain of modules that
    ends back at r.py (a cycle); f.py is imported by none."""
    folder = tmp_path / "bots"
    folder.mkdir()
    if registry is not None:
        (folder / "__init__.py").write_text(registry)
    files = {
        "r.py": "import bots.a as y\n",
        "a.py": "from bots import b, load  # (load: a name of the package, no module)\n",
        "b.py": "from . import c\n",
        "c.py": "from .d import X\n",
        "d.py": "def f():\n    from bots.e import (\n        Y,\n        Z,\n    )\n",
        "e.py": "from bots.r import R\nimport bots.g\n",
        "f.py": "X = 1\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "g.py").write_bytes(b"X = 1\0\n")  # (does not parse: read, not followed)
    return folder


def _names(bot: str, folder: Path) -> list[str]:
    """``bundled_files``'s names, bounded in time (a cycle followed for ever fails)."""
    out: list[list[str]] = []
    worker = threading.Thread(
        target=lambda: out.append([p.name for p in bundled_files(bot, folder)]), daemon=True
    )
    worker.start()
    worker.join(60)
    assert out, "bundled_files did not return (or raised: see the thread's exception)"
    return out[0]


def test_every_form_of_import_of_bots_is_followed_once(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert _names("random", folder) == ["a.py", "b.py", "c.py", "d.py", "e.py", "g.py", "r.py"]
    # a module changed that the chain reaches changes the bot; one it does not, not
    before = code_digest(bundled_files("random", folder))
    (folder / "f.py").write_text("X = 2\n")
    assert code_digest(bundled_files("random", folder)) == before
    (folder / "d.py").write_text((folder / "d.py").read_text() + "# edited\n")
    assert code_digest(bundled_files("random", folder)) != before


def test_a_registry_without_an_annotation_is_read(tmp_path: Path) -> None:
    folder = _folder(tmp_path, REGISTRY.replace(": dict[str, tuple[str, str]]", ""))
    (folder / "h.py").write_text("X = 1\n")
    assert _names("heuristic", folder) == ["h.py"]
    with pytest.raises(KeyError):
        bundled_files("nobody", folder)


@pytest.mark.parametrize(
    "registry",
    [None, "_WHERE = dict(random=('bots.r', 'R'))\n", "BUNDLED = ()\n", "def broken(:\n"],
    ids=["no __init__.py", "not a literal", "no _WHERE", "no Python"],
)
def test_a_registry_that_cannot_be_read_takes_every_module(
    tmp_path: Path, registry: str | None
) -> None:
    folder = _folder(tmp_path, registry)
    every = sorted(p.name for p in folder.glob("*.py"))
    assert "f.py" in every and _names("random", folder) == every


def test_an_older_digest_is_read_for_the_bots_it_has_and_strings_only() -> None:
    legacy, row = next(iter(LEGACY_CODE.items()))
    assert code_now("random", legacy) == row["random"] != legacy
    assert code_now("newbot", legacy) == legacy  # (a bot no older arena bundled)
    assert code_now(None, legacy) == legacy
    assert code_now("random", [legacy]) == [legacy]  # (a damaged config: read as it is)
    assert code_now("random", "0123456789abcdef") == "0123456789abcdef"
    # and only a bundled bot's (an sdk bot of that name) is read so
    bot = {"name": "r", "kind": "sdk", "bot": "random", "command": [], "code": legacy}
    assert as_current_code(bot)["code"] == row["random"]
    assert as_current_code({**bot, "bot": "mine.py"})["code"] == legacy
    assert "code" not in as_current_code({k: v for k, v in bot.items() if k != "code"})


def test_an_older_arenas_stored_bots_compare_as_this_arenas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = Path(shutil.copytree(UPGRADE / "9913183", tmp_path / "club"))
    monkeypatch.chdir(where)
    with Storage.open_readonly(Path("club.sqlite")) as st:
        (stored,) = [t.config for t in st.tournaments() if t.id == W2]
    new = load_config("club.toml", ["name=club-w2", "seed=51"]).identity()
    assert {b["code"] for b in stored["bots"]} != {b["code"] for b in new["bots"]}
    assert bundled_changed(stored, new) == [] and identity_changes(stored, new) == []
    # a bot of that older bots/ whose own modules did change is said changed
    (legacy,) = {b["code"] for b in stored["bots"]}
    pimc = {"name": "p", "kind": "sdk", "bot": "pimc", "command": []}
    now = code_digest(bundled_files("pimc"))
    assert LEGACY_CODE[legacy]["pimc"] != now
    old_p, new_p = {"bots": [{**pimc, "code": legacy}]}, {"bots": [{**pimc, "code": now}]}
    assert bundled_changed(old_p, new_p) == ["p"]
    assert identity_changes(old_p, new_p) == [
        "bundled bots p: another version of the arena's bots/ than the one that played it"
    ]


def test_an_older_arenas_tournament_resumed_says_only_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    where = Path(shutil.copytree(UPGRADE / "9913183", tmp_path / "club"))
    monkeypatch.chdir(where)
    config = load_config("club.toml", ["name=club-w2", "seed=51"])
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        resumed = run_fake(config, max_new_matches=1)
    assert resumed.tournament_id == W2
    assert "took every module of its bots/" in caplog.text
    assert "also sets" not in caplog.text  # (its ruleset is this config's: nothing unused)


def test_a_season_of_a_session_and_a_tournament_says_its_deals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Path(shutil.copy(UPGRADE / "7200ac96" / "serve.sqlite", tmp_path / "serve.sqlite"))
    monkeypatch.chdir(tmp_path)
    Path("cup.toml").write_text(
        'name = "cup"\nruleset = "classic"\nmax_deals = 2\nmatches_per_table = 1\nseed = 3\n'
        'deals = "independent"\ndb = "serve.sqlite"\nout = "out"\n'
        '[bots]\na = "random"\nb = "random"\nc = "random"\n'
    )
    assert run_fake(load_config("cup.toml")).finished
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--season", "club-serve,cup"])
    assert r.exit_code == 0, r.output
    # (a session alone says no deals; with a tournament of independent deals, the season's
    # matches were all dealt so, and it says it as that tournament does)
    assert "3 players, independent deals, 3 tournaments" in " ".join(r.output.split())
    shown = DataSource(db).season("club-serve,cup")  # (/api/season's: as the title says)
    assert (shown["deals"], shown["deals_note"]) == ("independent", "independent deals")


def test_a_week_stored_without_deals_was_dealt_duplicate(tmp_path: Path) -> None:
    db = Path(shutil.copy(SEASON, tmp_path / "club.sqlite"))
    with sqlite3.connect(db) as conn:
        for (cfg,) in conn.execute("SELECT config_json FROM tournaments").fetchall():
            assert "deals" not in json.loads(cfg)  # (an older arena's: duplicate, unsaid)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--season", "club-w",
                                  "--format", "json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["tournament"]["deals"] == "duplicate"
    assert [w["deals"] for w in doc["season"]["tournaments"]] == ["duplicate"] * 3


def test_two_selections_of_the_same_tournaments_are_each_their_own(tmp_path: Path) -> None:
    db = Path(shutil.copy(SEASON, tmp_path / "club.sqlite"))
    source = DataSource(db)
    by_prefix = source.season("club-w")
    named = "club-w1,club-w2,club-w3"
    by_name = source.season(named)
    assert [w["id"] for w in by_prefix["weeks"]] == [w["id"] for w in by_name["weeks"]]
    assert by_prefix["season"] == "club-w" and by_name["season"] == named
    assert by_name["title"].startswith(f"season {named} — ")
    assert by_name["rows"] == by_prefix["rows"]


def test_a_week_taken_up_again_redraws_the_season_page(tmp_path: Path) -> None:
    db = Path(shutil.copy(SEASON, tmp_path / "club.sqlite"))
    with Storage.open_readonly(db) as st:
        week = {t.name: t.id for t in st.tournaments()}["club-w3"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tournaments SET finished_at = NULL WHERE id = ?", (week,))
    with web_server(db) as server:
        before = get_json(server.url, "/api/season?season=club-w")
        with lock_path(db).open("a") as lock:  # (as `arena tournament` holds it)
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            now = get_json(server.url, "/api/season?season=club-w")
        after = get_json(server.url, "/api/season?season=club-w")
    assert [w["state"] for w in now["weeks"]][-1] == "running"
    # the page draws a season again when its version changes, and only then: the weeks
    # table said "stopped" while the status line said "live"
    assert now["version"] != before["version"]
    assert after["version"] == before["version"]  # (stopped again: as it was)


def test_a_bot_added_while_serving_then_removed_leaves_its_members_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, lobby, watch = _members_watch(tmp_path)
    added = BOTS + 'alice-v3 = "alice-token-3"\n'
    _write(path, added + MEMBERS.replace('"alice-v2"]', '"alice-v2", "alice-v3"]'))
    _settle(watch)
    assert lobby.members["alice-v3"] == "alice"
    # removed from [bots], its member's line left as it was: taken, not refused
    _write(path, BOTS + MEMBERS.replace('"alice-v2"]', '"alice-v2", "alice-v3"]'))
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert "not taken" not in caplog.text, caplog.text
    assert "alice-v3" not in referee.active_bots()
    assert _who(referee, "alice-token-3").startswith("token revoked")
    assert lobby.members == {"alice-v1": "alice", "alice-v2": "alice"}


def test_arena_web_season_prints_an_address_to_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Path(shutil.copy(SEASON, tmp_path / "club.sqlite"))

    class Served:  # (the server `arena web` makes, serving nothing: only its words count)
        url, port = "http://127.0.0.1:8123/", 8123

        def serve_forever(self) -> None:
            pass

        def server_close(self) -> None:
            pass

    monkeypatch.setattr("arena.web.make_server", lambda *a, **k: Served())
    monkeypatch.setattr("arena.cli.web._stop_on_signals", lambda: None)
    monkeypatch.setattr("arena.cli.web.ignore_stop_signals", lambda: None)
    spec = "club-w1, club-w3"  # (items are taken stripped: a space is no part of a name)
    r = CliRunner().invoke(main, ["web", "--db", str(db), "--season", spec])
    assert r.exit_code == 0, r.output
    assert f"season {spec}: http://127.0.0.1:8123/?season=club-w1,%20club-w3" in r.output


def test_a_tournament_resumed_for_its_ruleset_alone_says_only_that(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # (round 49's: a ruleset option it never used; its bots are commands, of no digest)
    where = Path(shutil.copytree(HOUSE, tmp_path / "cup"))
    monkeypatch.chdir(where)
    house = where / "house.toml"
    kept = [x for x in house.read_text().splitlines() if "barrel_mode" not in x]
    house.write_text("\n".join(kept) + "\n")
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        resumed = run_fake(load_config("cup.toml"), max_new_matches=1)
    assert resumed.tournament_id == "cup-81a55e03f4f8"
    assert "also sets barrel_mode 'one'" in caplog.text
    assert "took every module" not in caplog.text
