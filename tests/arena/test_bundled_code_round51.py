"""Round 51: a bundled bot's code is the modules of ``bots/`` it runs (its own and those it
imports), not the whole folder: another bot, a helper or the registry changed in ``bots/``
is no change of ``random``. The digests older arenas stored (of the whole folder) are read
as what they stood for (``arena.tournament.bundled.LEGACY_CODE``): the tournaments of
``tests/arena/data/upgrade_round50`` (README.md there), of ``random`` bots, resume; a
season of their weeks and this arena's does not say the bots changed."""

from __future__ import annotations

import csv
import io
import json
import logging
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.storage import Storage
from arena.tournament.bundled import LEGACY_CODE, bots_folder, bundled_files
from arena.tournament.config import code_digest, identity_changes, load_config
from tests.arena.fake_referee import run_fake

DATA = Path(__file__).parent / "data" / "upgrade_round50"
OLD = "9913183"  # (its heuristic, counting and pimc are not this arena's; its random is)
W2 = "club-w2-eec6751a28bc"  # (2 of its 12 matches stored, then SIGINT)


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / OLD
    shutil.copytree(DATA / OLD, where)
    monkeypatch.chdir(where)
    return where


def _names(bot: str, folder: Path | None = None) -> list[str]:
    return [p.name for p in bundled_files(bot, folder)]


def test_a_bundled_bot_is_its_module_and_what_it_imports_from_bots() -> None:
    assert _names("random") == ["random_bot.py"]
    assert _names("heuristic") == ["heuristic.py"]
    assert _names("counting") == ["_dds.py", "counting.py", "heuristic.py"]
    assert _names("pimc") == ["_dds.py", "counting.py", "heuristic.py", "pimc.py"]


def test_only_a_change_to_those_modules_changes_the_bot(tmp_path: Path) -> None:
    here = bots_folder()
    assert here is not None
    folder = Path(shutil.copytree(here, tmp_path / "bots"))

    def digests() -> dict[str, str | None]:
        return {b: code_digest(bundled_files(b, folder)) for b in ("random", "counting", "pimc")}

    before = digests()
    # another bot, a helper, the registry: no bot changed
    (folder / "newbot.py").write_text("from bots.heuristic import HeuristicBot\n")
    (folder / "__init__.py").write_text((folder / "__init__.py").read_text() + "\n# edited\n")
    (folder / "pimc.py").write_text((folder / "pimc.py").read_text() + "\n# edited\n")
    after = digests()
    assert after["random"] == before["random"] and after["counting"] == before["counting"]
    assert after["pimc"] != before["pimc"]
    # a module counting imports (and pimc through it), in any form of import
    (folder / "heuristic.py").write_text(
        (folder / "heuristic.py").read_text() + "\nfrom . import helper_x\n"
    )
    (folder / "helper_x.py").write_text("X = 1\n")
    again = digests()
    assert again["random"] == before["random"]
    assert again["counting"] != after["counting"] and again["pimc"] != after["pimc"]
    assert "helper_x.py" in _names("counting", folder)
    (folder / "helper_x.py").write_text("X = 2\n")
    assert digests()["counting"] != again["counting"]


def test_the_stored_digests_of_older_arenas_are_known() -> None:
    # (what makes the tests below mean something: 9913183 digested its whole bots/, which
    # differs from this one's, and its random is this arena's)
    with Storage.open_readonly(DATA / OLD / "club.sqlite") as st:
        (w2,) = [t for t in st.tournaments() if t.id == W2]
    stored = {b["code"] for b in w2.config["bots"]}
    (legacy,) = stored
    here = bots_folder()
    assert here is not None and legacy != code_digest(sorted(here.glob("*.py")))
    assert LEGACY_CODE[legacy]["random"] == code_digest(bundled_files("random"))
    assert LEGACY_CODE[legacy]["counting"] != code_digest(bundled_files("counting"))


def test_an_older_arenas_interrupted_tournament_of_random_bots_resumes(
    club: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config("club.toml", ["name=club-w2", "seed=51"])
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        resumed = run_fake(config)
    assert (resumed.tournament_id, resumed.skipped, resumed.completed) == (W2, 2, 12)
    assert (
        f"tournament {W2} was stored by an arena that took every module of its bots/ for the "
        "code of the bundled bots r1, r2, r3: the modules they run are this arena's"
    ) in caplog.text
    assert "another version" not in caplog.text
    with sqlite3.connect("club.sqlite") as db:
        ids = [r[0] for r in db.execute("SELECT id FROM tournaments")]
    assert sorted(ids) == ["club-w1-8c2a5da3881d", W2]  # (no new tournament beside it)
    # `arena leaderboard --config` finds the older arena's tournament of its config, as
    # its own (not as the latest of its name, its code "changed")
    shown = _cli("leaderboard", "--config", "club.toml", "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["tournament"]["id"] == "club-w1-8c2a5da3881d"
    assert "changed" not in shown.stderr


def test_a_fixed_id_of_an_older_arena_is_resumed(club: Path) -> None:
    config = load_config("club.toml", ["name=club-w2", "seed=51", f'id="{W2}"'])
    resumed = run_fake(config, max_new_matches=1)
    assert (resumed.tournament_id, resumed.skipped, resumed.completed) == (W2, 2, 3)


def test_a_season_of_older_and_newer_weeks_says_no_change(club: Path) -> None:
    assert run_fake(load_config("club.toml", ["name=club-w3", "seed=52"])).finished
    with Storage.open_readonly(Path("club.sqlite")) as st:
        by_name = {t.name: t for t in st.tournaments()}
    old, new = by_name["club-w1"].config, by_name["club-w3"].config
    assert old["bots"][0]["code"] != new["bots"][0]["code"]  # (the older and this digest)
    assert identity_changes(old, new) == ['name "club-w1" → "club-w3"', "seed 50 → 52"]
    season = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w1,club-w3",
                  "--format", "json")  # fmt: skip
    assert season.exit_code == 0, season.output
    doc = json.loads(season.stdout)
    assert [t["bots_changed"] for t in doc["season"]["tournaments"]] == [[], []]
    assert doc["season"]["notes"] == []
    table = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w1,club-w3",
                 "--format", "csv")  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    assert {r["changed"] for r in rows} == {"0"}


def test_a_digest_no_arena_of_main_made_reads_as_another_code(club: Path) -> None:
    # (a checkout with edits of its own to bots/: as before, the bots are said changed)
    with sqlite3.connect("club.sqlite") as db:
        (cfg,) = db.execute("SELECT config_json FROM tournaments WHERE name = 'club-w1'").fetchone()
        stored = json.loads(cfg)
        for b in stored["bots"]:
            b["code"] = "0123456789abcdef"
        db.execute("UPDATE tournaments SET config_json = ? WHERE name = 'club-w1'",
                   (json.dumps(stored),))  # fmt: skip
    assert run_fake(load_config("club.toml", ["name=club-w3", "seed=52"])).finished
    season = _cli("leaderboard", "--db", "club.sqlite", "--season", "club-w1,club-w3",
                  "--format", "json")  # fmt: skip
    assert season.exit_code == 0, season.output
    doc = json.loads(season.stdout)
    assert doc["season"]["tournaments"][1]["bots_changed"] == ["r1", "r2", "r3"]
    assert "another version of the arena's bots/" in " ".join(doc["season"]["notes"])
