"""Round 49, upgrades: a tournament interrupted before the upgrade is resumed by this arena.

The fixture ``data/house_1001_ba7b873d/`` is what the arena of commit ba7b873d
(2026-12-06 09:52, the last before ruleset files were refused for setting an option their
ruleset never uses) left of ``arena tournament --config cup.toml`` stopped by SIGINT after
2 of its 12 matches: the config, its ruleset file ``house.toml`` (preset 1001, which has no
barrel, with ``barrel_mode = "one"``) and the database. This arena refuses the file
("barrel_mode: has no effect"), and the file without that line made another fingerprint:
the run started a new tournament, and its warning said to run the old config, which is
refused. No config resumed the stored tournament. Now a config whose ruleset differs from
the stored one only in options neither uses is that tournament's (``as_stored``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage, StorageError
from arena.tournament.config import ConfigError, load_config
from tests.arena.fake_referee import make_config
from tests.arena.fake_referee import run_fake as _run
from tests.support.harness import get_json, web_server

FIXTURE = Path(__file__).parent / "data" / "house_1001_ba7b873d"
OLD_ID = "cup-81a55e03f4f8"  # (the id that arena gave it: name and fingerprint)


@pytest.fixture
def cup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture, its ruleset file without the option now refused, in the
    current directory (the config's ``db`` and ``out`` are relative to it)."""
    where = tmp_path / "cup"
    shutil.copytree(FIXTURE, where)
    monkeypatch.chdir(where)
    house = where / "house.toml"
    house.write_text(
        "\n".join(x for x in house.read_text().splitlines() if "barrel_mode" not in x) + "\n"
    )
    return where / "cup.toml"


def _stored(db: Path) -> dict[str, int]:
    with Storage.open_readonly(db) as st:
        return {t.id: t.completed for t in st.tournaments()}


def test_the_fixture_is_what_that_arena_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # (what makes it old: without it the tests below mean nothing)
    with Storage.open_readonly(FIXTURE / "cup.sqlite") as st:
        (info,) = st.tournaments()
    assert (info.id, info.completed, info.total_matches, info.finished_at) == (
        OLD_ID, 2, 12, None,
    )  # fmt: skip
    assert info.config["ruleset"]["barrel"] is False
    assert info.config["ruleset"]["barrel_mode"] == "one"
    # The refusal of such an option in a file stays as it is.
    with pytest.raises(ConfigError, match="barrel_mode: has no effect: this ruleset has no"):
        load_config(FIXTURE / "cup.toml")


def test_the_edited_ruleset_file_resumes_the_old_tournament(
    cup: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = load_config(cup)
    assert cfg.ruleset.barrel_mode == "many" and cfg.tournament_id != OLD_ID
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        outcome = _run(cfg)
    assert outcome.tournament_id == OLD_ID and outcome.finished
    assert (outcome.skipped, outcome.completed) == (2, 12)
    assert _stored(cfg.db) == {OLD_ID: 12}  # (no new tournament beside it)
    said = caplog.text
    assert f"tournament {OLD_ID} was stored with a ruleset that also sets barrel_mode 'one'" in (
        said
    )
    assert "is unfinished" not in said  # (the warning that sent the user to the old config)


def test_rules_in_force_or_another_part_of_the_config_start_a_new_tournament(
    cup: Path, caplog: pytest.LogCaptureFixture
) -> None:
    house = cup.parent / "house.toml"
    house.write_text(house.read_text() + "talon_visible = false\n")
    with caplog.at_level(logging.WARNING, logger="arena.tournament"):
        other = _run(load_config(cup))
    assert other.tournament_id != OLD_ID and other.skipped == 0
    # What changed is the rule in force alone: barrel_mode was said too, sending the user
    # to set again an option now refused.
    assert f"tournament {OLD_ID} in" in caplog.text
    assert "this config is not its own (ruleset.talon_visible true → false): " in caplog.text
    house.write_text(house.read_text().replace("talon_visible = false\n", ""))
    more = _run(load_config(cup, ["matches_per_table=3"]))
    assert more.tournament_id not in (OLD_ID, other.tournament_id)
    assert _stored(cup.parent / "cup.sqlite")[OLD_ID] == 2  # left as it was


def test_leaderboard_of_the_edited_config_shows_the_old_tournament(cup: Path) -> None:
    shown = CliRunner().invoke(main, ["leaderboard", "--config", str(cup)])
    assert shown.exit_code == 0, shown.output
    assert f"tournament {OLD_ID}" in shown.output
    assert "is not stored" not in shown.output  # (it said the config changed since it ran)
    # An option the ruleset never uses is no house rule: it was "house (1001 + barrel_mode
    # one)", and the same in the run's first line, which says the config's ruleset.
    assert "cup — house (1001), 2 deals max" in shown.output


def test_a_fixed_id_stored_with_an_unused_option_resumes(tmp_path: Path) -> None:
    # (a database of this arena: an inline table with the option is refused now, so the
    # stored ruleset is made as an older arena made it)
    cfg = make_config(tmp_path, bots=3, ruleset="1001", id="club")
    old = dataclasses.replace(cfg, ruleset=dataclasses.replace(cfg.ruleset, barrel_mode="one"))
    first = _run(old, max_new_matches=2)
    assert (first.tournament_id, first.completed) == ("club", 2)
    resumed = _run(cfg)  # (was: "started with another config: ruleset.barrel_mode ...")
    assert resumed.tournament_id == "club" and resumed.skipped == 2 and resumed.finished
    # Another rule in force is still refused, naming it.
    in_force = dataclasses.replace(cfg.ruleset, barrel=True, barrel_mode="one")
    with pytest.raises(StorageError, match=r"another config: ruleset\.barrel false → true"):
        _run(dataclasses.replace(cfg, ruleset=in_force))


@pytest.mark.slow
def test_arena_tournament_resumes_it_with_its_bots(cup: Path) -> None:
    ran = CliRunner().invoke(main, ["tournament", "--config", str(cup), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    assert f"12/12 stored in {cup.parent / 'cup.sqlite'} (tournament {OLD_ID}); 2 were" in (
        ran.output.replace("\n", " ")
    )
    assert _stored(cup.parent / "cup.sqlite") == {OLD_ID: 12}
    assert "ruleset house (1001), 12 matches" in ran.output


#: A tournament of the bundled bots that the arena of fa08e1b3 (2026-12-05 14:50) stored,
#: stopped by SIGINT after 2 of its 18 matches: this arena's heuristic and counting are
#: others, so its config is not that tournament's, and no config is (the code is the
#: arena's). Its random is this arena's (round 51: it is not said changed).
BUNDLED = Path(__file__).parent / "data" / "bundled_fa08e1b3"
BUNDLED_ID = "c-281a21451313"
OTHER_VERSION = (
    "bundled bots heu, cnt: another version of the arena's bots/ than the one that played it"
)
VERSION_TOO = "the config it was started with and the version of the arena that played it"


def test_bundled_bots_of_another_version_are_said_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The warning said "bot rnd's code; bot heu's code; bot cnt's code" and to "run it with
    # the config it was started with": the very config just run.
    shutil.copytree(BUNDLED, tmp_path / "c")
    monkeypatch.chdir(tmp_path / "c")
    cfg = load_config("c.toml")
    with caplog.at_level(logging.WARNING, logger="arena.tournament"):
        outcome = _run(cfg, max_new_matches=1)
    assert outcome.tournament_id != BUNDLED_ID
    assert f"this config is not its own ({OTHER_VERSION}): this run starts" in caplog.text
    assert f"To finish {BUNDLED_ID} instead, stop now and run it with {VERSION_TOO}" in (
        caplog.text
    )
    # A fixed id is refused, in the same words.
    with pytest.raises(StorageError) as refused:
        _run(load_config("c.toml", [f'id="{BUNDLED_ID}"']))
    assert f"another config: {OTHER_VERSION}. Run it with {VERSION_TOO}" in str(refused.value)


#: Records of three arenas between round 48's versions and this one, each played by the
#: bundled bots of its version on ``house.toml`` (classic + must_beat, talon hidden):
#: ``serve_V.jsonl`` as ``arena serve --record-dir`` wrote it, ``stored_V.json`` as
#: ``/api/matches/<id>/record`` exported it from its tournament database (fa08e1b3's without
#: ``bot_errors``, written since 2026-12-05 19:43).
RECORDS = Path(__file__).parent / "data" / "records_round49"
VERSIONS = ("fa08e1b3", "ba7b873d", "abda191c")


KINDS = (("serve", "jsonl"), ("stored", "json"))


@pytest.mark.parametrize("name", [f"{k}_{v}.{e}" for v in VERSIONS for k, e in KINDS])
def test_older_records_check(name: str) -> None:
    checked = CliRunner().invoke(main, ["replay", "--check", str(RECORDS / name)])
    assert checked.exit_code == 0, checked.output
    assert "OK: every action is legal and every stored score matches" in checked.output


def test_arena_web_shows_older_stored_matches(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with Storage(db) as st:
        for v in VERSIONS:
            rec = json.loads((RECORDS / f"stored_{v}.json").read_text(encoding="utf-8"))
            seats = tuple(rec["players"])
            st.ensure_tournament(v, name=v, fingerprint=v, total_matches=1,
                                 config={"name": v, "ruleset": rec["ruleset"]},
                                 bots=[(b, "bundled") for b in seats])  # fmt: skip
            st.save_match(v, match_id=f"{v}-m00000", index=0, table=0, set_no=0,
                          seed=rec["seed"], seats=seats, record=rec, started_at=1.7e9,
                          finished_at=1.7e9 + 1)  # fmt: skip
            st.finish_tournament(v)
    with web_server(db) as server:
        for v in VERSIONS:
            summary = get_json(server.url, f"/api/matches/{v}-m00000")
            assert summary["deals"], summary
            for k in range(len(summary["deals"])):
                assert get_json(server.url, f"/api/matches/{v}-m00000/deals/{k}?seat=0")["steps"]
            board = get_json(server.url, f"/api/leaderboard?tournament={v}")
            assert board["tournament"]["ruleset_description"].startswith(
                "house (classic + talon_visible off, must_beat on)"
            ), board["tournament"]
