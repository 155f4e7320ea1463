"""Every output that names a ruleset for people says which rules ran
(:func:`engine.rules.describe_ruleset`), not the name alone.

Defect (outside check, round 19): the leaderboard, the web pages and APIs, `arena replay`,
`arena tournament` and `arena serve` named only the ruleset's ``name``. A house file may
reuse a name with other options (even ``name = "classic"`` with ``must_beat = true``); two
runs of one tournament name whose ruleset differed in one option looked the same
everywhere; an inline table showed as "1001+custom" without saying what is custom.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from arena.cli import main
from arena.cli.tournament import _announce
from arena.leaderboard import build_leaderboard, render, to_rich_table
from arena.render import render_record
from arena.storage import Storage
from arena.tournament.config import load_config
from arena.web.data import DataSource
from arena.web.replay import match_summary
from engine import Game, observe
from engine.rules import PRESETS, Ruleset, describe_ruleset, load_ruleset
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]
CLASSIC = PRESETS["classic"]
# One house file edited between two runs: the name stays, one option changes.
BEFORE = Ruleset.from_dict({"preset": "classic", "name": "house", "must_beat": True})
AFTER = Ruleset.from_dict(
    {"preset": "classic", "name": "house", "must_beat": True, "barrel_mode": "one"}
)


def _text(renderable: Any) -> str:
    buf = io.StringIO()
    Console(file=buf, width=400, color_system=None).print(renderable)
    return buf.getvalue()


# ----------------------------------------------------------------------- the description


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_is_its_name(name: str) -> None:
    assert describe_ruleset(PRESETS[name]) == name
    # as a tournament stores it: the whole dict, with the run's deal cap
    assert describe_ruleset({**PRESETS[name].to_dict(), "max_deals": 20}) == name


def test_the_options_that_differ_from_the_preset_are_named() -> None:
    # the name of a preset with other options: the options say it is not that preset
    same_name = Ruleset.from_dict({"preset": "classic", "name": "classic", "must_beat": True})
    assert describe_ruleset(same_name) == "classic (must_beat on)"
    # an inline table: "1001+custom" said nothing of what is custom
    inline = Ruleset.from_dict({"preset": "1001", "talon_visible": False, "rounding": 10})
    assert inline.name == "1001+custom"
    assert describe_ruleset(inline) == "1001 (talon_visible off, rounding 10)"
    assert describe_ruleset(Ruleset.from_dict({"preset": "1001", "players": 4})) == (
        "1001, 4 players"
    )
    # a house file: its nearest preset, and what it changes (values as the file writes them)
    house = load_ruleset(ROOT / "rulesets" / "house-penalty.toml")
    assert describe_ruleset(house) == (
        "house-penalty (classic + concede penalty, must_beat on, barrel_mode one)"
    )
    t1001 = load_ruleset(ROOT / "rulesets" / "tournament-1001.toml")
    assert describe_ruleset(t1001) == "tournament-1001 (1001 + talon_visible off)"
    assert describe_ruleset(t1001, deal_cap=True) == (
        "tournament-1001 (1001 + talon_visible off, max_deals 60)"
    )
    four = Ruleset.from_dict({"preset": "classic", "name": "big", "players": 4})
    assert describe_ruleset(four) == "big (classic + 4 players)"
    assert describe_ruleset(four, players=False) == "big (classic)"


def test_a_long_list_is_cut_and_counted() -> None:
    many = {
        "preset": "classic", "name": "wild", "must_beat": True, "barrel_mode": "one",
        "concede": "off", "rounding": 10, "ace_marriage": False, "talon_visible": False,
        "barrel_penalty": 100, "bid_step": 10,  # (not throw_in_bonus: classic has no throw-in)
    }  # fmt: skip
    said = describe_ruleset(Ruleset.from_dict(many))
    # (in the options' order, that of RULES.md and of `arena rules`)
    assert said == (
        "wild (classic + bid_step 10, talon_visible off, concede off, must_beat on, "
        "ace_marriage off, rounding 10, +2 more)"
    )


def test_stored_rulesets_old_and_damaged() -> None:
    # an older row without some option keys: what it has
    assert describe_ruleset({"name": "house", "players": 3, "must_beat": True}) == (
        "house (classic + must_beat on)"
    )
    assert describe_ruleset({"name": "classic"}) == "classic"
    assert describe_ruleset("1001") == "1001"  # a record or demo config naming a preset
    assert describe_ruleset(None) == "?" and describe_ruleset([1, 2]) == "?"  # type: ignore[arg-type]
    # a damaged value is shown short and printable, not refused
    odd = describe_ruleset({"name": "x\x1b[2J", "players": 3, "concede": "\x1b[31m"})
    assert "\x1b" not in odd and odd.startswith("x\\x1b[2J (")


# ------------------------------------------------------------------------ stored results


def _deal(n: int, deltas: list[int]) -> dict[str, Any]:
    return {"number": n, "dealer": n % 3, "actions": [], "deltas": deltas, "scores": deltas}


def _record(players: list[str], scores: list[int]) -> dict[str, Any]:
    return {
        "players": players,
        "deals": [_deal(0, scores)],
        "result": {"scores": scores, "places": [1, 2, 3], "deals": 1},
        "incidents": [],
        "forfeits": [],
    }


def _store(db: Path, tid: str, ruleset: Any, name: str = "cup") -> None:
    with Storage(db) as st:
        st.ensure_tournament(tid, name=name, fingerprint=tid, total_matches=1,
                             config={"ruleset": ruleset, "draw_probability": 0.02},
                             bots=[("x", "r"), ("y", "r"), ("z", "r")])  # fmt: skip
        rec = _record(["x", "y", "z"], [120, 20, 10])
        st.save_match(tid, match_id=f"{tid}-m00000", index=0, table=0, set_no=0, seed=1,
                      seats=rec["players"], record=rec, started_at=0.0,
                      finished_at=1.0)  # fmt: skip


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    """Two tournaments "cup" of ruleset "house", one option apart (as the runner stores
    them: the whole ruleset, with the run's deal cap)."""
    db = tmp_path / "t.sqlite"
    _store(db, "cup-1", {**BEFORE.to_dict(), "max_deals": 20})
    _store(db, "cup-2", {**AFTER.to_dict(), "max_deals": 20})
    return db


def _outputs(db: Path, tid: str) -> dict[str, str]:
    with Storage(db) as st:
        lb = build_leaderboard(st, tid)
    return {
        "table": _text(to_rich_table(lb)),
        **{fmt: render(lb, fmt) for fmt in ("html", "json", "csv")},
        # (markdown escapes the underscores of an option's name)
        "md": render(lb, "md").replace("\\_", "_"),
    }


def test_the_leaderboard_tells_two_runs_apart_in_every_format(two_runs: Path) -> None:
    one, two = _outputs(two_runs, "cup-1"), _outputs(two_runs, "cup-2")
    for fmt in one:
        assert "must_beat on" in one[fmt], fmt
        assert "barrel_mode one" in two[fmt] and "barrel_mode one" not in one[fmt], fmt
    assert (
        "cup — house (classic + must_beat on), 20 deals max, 3 players, 1 match (finished)"
        in one["table"]
    )
    assert (
        "# cup — house (classic + must_beat on, barrel_mode one), 20 deals max, 3 players"
        in (two["md"])
    )
    # the json keeps its keys (the name) and adds the description and every option
    t = json.loads(two["json"])["tournament"]
    assert t["ruleset"] == "house" and t["players"] == 3
    assert t["ruleset_description"] == (
        "house (classic + must_beat on, barrel_mode one), 20 deals max"
    )
    assert t["ruleset_options"] == {**AFTER.to_dict(), "max_deals": 20}
    # the csv: a column after the old ones, before bot_errors (review round 42's, last)
    rows = list(csv.reader(io.StringIO(two["csv"])))
    assert rows[0][-2:] == ["ruleset", "bot_errors"] and rows[0][:2] == ["rank", "bot"]
    assert {r[-2] for r in rows[1:]} == {
        "house (classic + must_beat on, barrel_mode one), 20 deals max"
    }


def test_a_preset_run_reads_as_before(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    _store(db, "p", {**CLASSIC.to_dict(), "max_deals": 20}, name="plain")
    out = _outputs(db, "p")
    assert "plain — classic, 20 deals max, 3 players, 1 match (finished)" in out["table"]
    assert out["md"].startswith("# plain — classic, 20 deals max, 3 players, 1 match (finished)\n")
    t = json.loads(out["json"])["tournament"]
    assert t["ruleset"] == "classic" and t["ruleset_description"] == "classic, 20 deals max"


def test_old_rows_show_what_they_hold(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    _store(db, "old", {"name": "house", "players": 3, "must_beat": True})
    _store(db, "demo", "1001", name="demo")  # a preset named, as the web demo stores it
    assert "cup — house (classic + must_beat on), 3 players" in _outputs(db, "old")["table"]
    demo = _outputs(db, "demo")
    assert "demo — 1001, 3 players" in demo["table"]
    assert json.loads(demo["json"])["tournament"]["ruleset_options"] == {}


def test_two_runs_apart_only_in_the_deal_cap_are_told_apart(tmp_path: Path) -> None:
    """Defect (known limit): ``describe_ruleset`` leaves ``max_deals`` out, so two
    tournaments of one name and house rules whose deal caps differed read alike on the
    leaderboard (every format), in the web's list and picker, and in ``arena replay
    --list``'s header. Their line now ends with the cap (``20 deals max``, ``no deal
    cap``); ``arena rules`` of a preset still prints no description at all."""
    db = tmp_path / "t.sqlite"
    _store(db, "c20", {**BEFORE.to_dict(), "max_deals": 20})
    _store(db, "c40", {**BEFORE.to_dict(), "max_deals": 40})
    _store(db, "c0", {**BEFORE.to_dict(), "max_deals": 0})
    outs = {tid: _outputs(db, tid) for tid in ("c20", "c40", "c0")}
    for fmt in outs["c20"]:
        assert "house (classic + must_beat on), 20 deals max" in outs["c20"][fmt], fmt
        assert "house (classic + must_beat on), 40 deals max" in outs["c40"][fmt], fmt
        assert "house (classic + must_beat on), no deal cap" in outs["c0"][fmt], fmt
    listed = {t["id"]: t["ruleset_description"] for t in DataSource(db).tournaments()}
    assert listed == {
        "c20": "house (classic + must_beat on), 20 deals max",
        "c40": "house (classic + must_beat on), 40 deals max",
        "c0": "house (classic + must_beat on), no deal cap",
    }
    out = CliRunner().invoke(main, ["replay", "--db", str(db), "--tournament", "c40", "--list"])
    assert "tournament c40 (house (classic + must_beat on), 40 deals max) in " in out.output
    for preset in PRESETS:
        assert CliRunner().invoke(main, ["rules", preset]).output.startswith(f'name = "{preset}"\n')


# ------------------------------------------------------------------------------- the web


def test_the_web_api_tells_two_runs_apart(two_runs: Path) -> None:
    src = DataSource(two_runs)
    listed = {t["id"]: t for t in src.tournaments()}
    assert listed["cup-1"]["ruleset"] == listed["cup-2"]["ruleset"] == "house"  # kept
    assert listed["cup-1"]["ruleset_description"] == "house (classic + must_beat on), 20 deals max"
    assert listed["cup-2"]["ruleset_description"] == (
        "house (classic + must_beat on, barrel_mode one), 20 deals max"
    )
    board = src.leaderboard("cup-2")
    assert board["tournament"]["ruleset_description"] == listed["cup-2"]["ruleset_description"]
    assert {t["ruleset_description"] for t in board["tournaments"]} == {
        listed["cup-1"]["ruleset_description"],
        listed["cup-2"]["ruleset_description"],
    }


def test_the_pages_show_the_description(tmp_path: Path, two_runs: Path) -> None:
    """The leaderboard page's line under its title, its picker of tournaments of one name
    (a third run apart from the second only in its deal cap), and a replay's header, in
    a real browser."""
    from tests.web.test_web_browser import arena_web, browser_paths, load, start_driver

    _store(two_runs, "cup-3", {**AFTER.to_dict(), "max_deals": 40})

    with Storage(two_runs) as st:  # a whole match to replay, of the edited house rules
        rec = _played(dataclasses.replace(AFTER, max_deals=2), whole=True)
        st.ensure_tournament("r", name="r", fingerprint="r", total_matches=1,
                             config={"ruleset": rec["ruleset"]},
                             bots=[(n, "r") for n in rec["players"]])  # fmt: skip
        st.save_match("r", match_id="r-m00000", index=0, table=0, set_no=0, seed=3,
                      seats=rec["players"], record=rec, started_at=0.0,
                      finished_at=1.0)  # fmt: skip
    profile = tmp_path / "profile"
    driver = start_driver(*browser_paths(), str(profile))
    try:
        with arena_web(two_runs) as url:
            load(driver, f"{url}?tournament=cup-2")
            line = driver.find_element("css selector", "#progress").text
            assert (
                "ruleset house (classic + must_beat on, barrel_mode one), 20 deals max · " in line
            )
            labels = [
                o.text for o in driver.find_elements("css selector", "#tournament-select option")
            ]
            assert any(
                x.startswith("cup [house (classic + must_beat on), 20 deals max, cup-1, ")
                for x in labels
            ), labels
            assert any(
                x.startswith(
                    "cup [house (classic + must_beat on, barrel_mode one), 20 deals max, cup-2, "
                )
                for x in labels
            ), labels
            assert any(
                x.startswith(
                    "cup [house (classic + must_beat on, barrel_mode one), 40 deals max, cup-3, "
                )
                for x in labels
            ), labels
            assert "r (1/1)" in labels  # (one of its name: as before)
            load(driver, f"{url}replay/r-m00000")
            meta = driver.find_element("css selector", "#match-meta").text
            assert meta.startswith(
                "house (classic + must_beat on, barrel_mode one), 2 deals max · seed 3"
            ), meta
    finally:
        driver.quit()


# ------------------------------------------------------------------------------ a replay


def _played(ruleset: Ruleset, whole: bool = False) -> dict[str, Any]:
    g = Game.new(ruleset, 3, ["ann", "bob", "cid"])
    rng = random.Random(0)
    while not g.is_over and (whole or g.deal_number < 1):
        g.apply(rng.choice(g.legal_actions()))
    return g.record()


def test_a_replay_names_the_custom_option() -> None:
    record = _played(AFTER)
    header = _text(render_record(record)).splitlines()[0]
    assert header.startswith(
        "Match: house (classic + must_beat on, barrel_mode one), no deal cap, seed 3"
    )
    assert match_summary("m", record)["ruleset_description"] == (
        "house (classic + must_beat on, barrel_mode one), no deal cap"
    )
    assert match_summary("m", record)["ruleset"] == AFTER.to_dict()  # kept


def test_a_preset_replay_reads_as_before() -> None:
    record = _played(CLASSIC)
    header = _text(render_record(record)).splitlines()[0]
    assert header.startswith("Match: classic, no deal cap, seed 3, ")
    assert match_summary("m", record)["ruleset_description"] == "classic, no deal cap"


# ------------------------------------------------------------------------- the commands


def _config(tmp_path: Path, ruleset: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "cup"\nruleset = {ruleset}\nseed = 1\n'
        '[bots]\na = "random"\nb = "random"\nc = "random"\n',
        encoding="utf-8",
    )
    return path


#: The first line of a preset run, as it read before.
PRESET_LINE = (
    "cup: 3 bots (a, b, c), ruleset classic, 6 matches (max 20 deals each), concurrency 2, seed 1"
)


def _first_line(tmp_path: Path, ruleset: str) -> str:
    buf = io.StringIO()
    _announce(load_config(_config(tmp_path, ruleset)), Console(file=buf, width=400))
    return buf.getvalue().splitlines()[0]


def test_the_tournament_start_line_names_the_custom_options(tmp_path: Path) -> None:
    line = _first_line(tmp_path, '{ preset = "1001", talon_visible = false }')
    assert "ruleset 1001 (talon_visible off), " in line  # it said "ruleset 1001+custom"
    assert "max 20 deals each" in line
    assert _first_line(tmp_path, '"classic"') == PRESET_LINE


def test_arena_rules_says_how_a_house_file_differs(tmp_path: Path) -> None:
    f = tmp_path / "h.toml"
    f.write_text('preset = "classic"\nname = "classic"\nmust_beat = true\n', encoding="utf-8")
    out = CliRunner().invoke(main, ["rules", str(f)])
    assert out.exit_code == 0, out.output
    assert out.output.startswith('# classic (must_beat on)\nname = "classic"\n')
    # still TOML that loads back as the same ruleset
    back = tmp_path / "back.toml"
    back.write_text(out.output, encoding="utf-8")
    assert load_ruleset(back) == load_ruleset(f)
    assert CliRunner().invoke(main, ["rules", "classic"]).output.startswith('name = "classic"\n')


def test_arena_serve_says_which_rules_its_matches_run(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "tok-{n}"\n' for n in "abc"))
    rules = tmp_path / "house.toml"
    rules.write_text('preset = "1001"\nname = "house"\nmust_beat = true\nmax_deals = 5\n')
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "serve", "--port", "0",
         "--tokens", str(tokens), "--ruleset", str(rules), "--record-dir", str(tmp_path / "r")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        while not lines or not lines[-1].startswith("match ids "):
            # (a deadline per line: a server that stopped saying its banner fails here)
            line = readline_within(proc.stdout, 60)
            assert line is not None, f"arena serve said nothing more in 60 s after {lines}"
            assert line, proc.stderr.read() if proc.stderr else "no output"
            lines.append(line)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert "ruleset house (1001 + must_beat on, max_deals 5)\n" in lines


def test_the_human_seat_is_told_the_house_rules() -> None:
    from sdk.human import HumanBot

    for rules, said in ((AFTER, "house (classic + must_beat on, barrel_mode one)"),
                        (CLASSIC, "classic")):  # fmt: skip
        out = io.StringIO()
        human = HumanBot(stdin=io.StringIO(""), stdout=out, color=False)
        human.on_match_start(observe(Game.new(rules, 1, ["a", "b", "c"]), 0))
        assert out.getvalue().startswith(f"Match of {said} to 1000: you are a (seat 0), "), (
            out.getvalue()
        )


@pytest.mark.parametrize(("name", "shown"), [("=HYPERLINK(1)", "'=HYPERLINK(1)"), ("@x", "'@x")])
def test_a_ruleset_named_like_a_formula_is_text_in_the_csv(
    tmp_path: Path, name: str, shown: str
) -> None:
    """A ruleset may be named ``=HYPERLINK(...)`` (bot names cannot start so): its csv cell
    starts with a quote, so that a spreadsheet shows it instead of running it."""
    db = tmp_path / "t.sqlite"
    _store(db, "cup-1", name)
    rows = list(csv.reader(io.StringIO(_outputs(db, "cup-1")["csv"])))
    assert rows[0][-2] == "ruleset" and {r[-2] for r in rows[1:]} == {shown}


def test_a_bots_match_started_log_line_names_the_house_rules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK's "match ... started" line (a bot's log, read to tie its matches to the rules
    they ran) says the house rules, not the ruleset's name alone."""
    import asyncio
    import logging

    from sdk import Bot
    from tests.support.harness import arena

    async def main() -> None:
        async with arena(tmp_path) as a:
            names = ["v0", "v1", "v2"]
            tasks = await a.runners(names, [Bot] * 3, 1)
            await a.referee.run_match("h1", dataclasses.replace(AFTER, max_deals=1), 1, names)
            await asyncio.wait_for(asyncio.gather(*tasks), 60)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        asyncio.run(main())
    started = [r.getMessage() for r in caplog.records if " started: seat " in r.getMessage()]
    assert len(started) == 3, caplog.text
    assert all("house (classic + must_beat on, barrel_mode one)" in m for m in started), started
