"""Round 24 of the organiser's audit: what an organiser saw go wrong in their first hour."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import logging
import math
import random
import re
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from arena.cli import main
from arena.cli.tournament import setup_logging
from arena.leaderboard import build_leaderboard, render
from arena.leaderboard.render import board_title, to_rich_table
from arena.storage import Storage
from arena.tournament.config import ConfigError, load_config
from arena.tournament.runner import TournamentError, _wait_for_bots
from arena.web.data import DataSource
from arena.web.replay import match_summary
from engine import Game
from engine.rules import PRESETS, Ruleset


def test_every_line_of_a_stuck_bots_log_tail_is_indented_under_it() -> None:
    """Defect: two bots that never connected were listed with the last lines of their logs,
    but only the first line of each tail was indented: the others stood at the margin,
    where the next bot's heading and the arena's own lines stand.

        c: local bot, still starting or stuck (log out/cgarb/logs/c.log)
          garbage
    garbage
    """

    class Stuck:  # a _BotProcess that runs and prints, and never connects
        def __init__(self, name: str) -> None:
            self.spec = types.SimpleNamespace(name=name)
            self.proc = types.SimpleNamespace(returncode=None)
            self.restarts, self.given_up, self.exited = 0, False, False
            self.log_path = Path(f"{name}.log")

        def tail(self, lines: int = 8) -> str:
            return "\n".join(f"{self.spec.name} line {i}" for i in range(lines))

        def trim_log(self) -> None:
            pass

    class Referee:
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            await asyncio.sleep(timeout)
            return names

        def welcomed_bots(self) -> list[str]:
            return []

    cfg: Any = types.SimpleNamespace(bot_names=["a", "b"], bot_wait_s=0.01, bots=[])
    procs: Any = {"a": Stuck("a"), "b": Stuck("b")}
    with pytest.raises(TournamentError) as err:
        asyncio.run(_wait_for_bots(cfg, Referee(), procs, 0))  # type: ignore[arg-type]
    assert str(err.value).splitlines() == [
        "2 of 2 bots did not connect within 0.01s:",
        "  a: local bot, still starting or stuck (log a.log)",
        "    a line 0",
        "    a line 1",
        "    a line 2",
        "  b: local bot, still starting or stuck (log b.log)",
        "    b line 0",
        "    b line 1",
        "    b line 2",
    ]


def test_on_a_terminal_the_log_dates_are_written_year_first() -> None:
    """Defect: on a terminal the tournament's warnings were dated by rich's default, the
    locale's date: `[12/03/26 11:37:53] WARNING match ... interrupted`, which reads as
    12 March as readily as 3 December, while the same run into a file (`2> run.log`), the
    bots' logs and the leaderboard files write 2026-12-03."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    for h in before:  # (setup_logging adds a handler only where it finds none of its own)
        root.removeHandler(h)
    out = io.StringIO()
    try:
        setup_logging(0, Console(file=out, force_terminal=True, width=200, color_system=None))
        logging.getLogger("arena.tournament").warning("match m00006 interrupted in deal 1")
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in before:
            root.addHandler(h)
        root.setLevel(level)
    line = out.getvalue().splitlines()[0]
    assert re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] WARNING +match m00006", line), line


def test_a_classic_for_four_is_said_so_in_the_leaderboard_files_as_on_the_web(
    tmp_path: Path,
) -> None:
    """Defect: a house file `preset = "classic"` with `players = 4` ran as 4-player
    tables, and `arena tournament`'s first line and the web's API said `rs4 (classic + 4
    players), 20 deals max`, but leaderboard.json's `ruleset_description` and the CSV's
    `ruleset` column said `rs4 (classic), 20 deals max`: the 3-player game, in a CSV that
    has no column of the table size. The title, which says `4 players` itself, keeps it
    once."""
    ruleset = {**Ruleset.from_dict({"preset": "classic", "name": "rs4", "players": 4}).to_dict(),
               "max_deals": 20}  # fmt: skip
    db = tmp_path / "t.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("c4", name="c4", fingerprint="c4", total_matches=24,
                             config={"ruleset": ruleset, "draw_probability": 0.02},
                             bots=[(b, b) for b in ("a", "b", "c", "d")])  # fmt: skip
        lb = build_leaderboard(st, "c4")
    said = "rs4 (classic + 4 players), 20 deals max"
    assert [t["ruleset_description"] for t in DataSource(db).tournaments()] == [said]
    assert json.loads(render(lb, "json"))["tournament"]["ruleset_description"] == said
    rows = list(csv.reader(io.StringIO(render(lb, "csv"))))
    assert rows[0][-2] == "ruleset" and {r[-2] for r in rows[1:]} == {said}  # (bot_errors last)
    assert (
        board_title(lb)
        == "c4 — rs4 (classic), 20 deals max, 4 players, 0 matches (0/24 matches played)"
    )


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("concurrency = true", "concurrency: expected an integer, got a boolean true"),
        ("concurrency = { a = 1, 'b c' = [false, 1.5] }",
         """concurrency: expected an integer, got a table { a = 1, "b c" = [false, 1.5] }"""),
        ("max_deals = 2020-01-01", "max_deals: expected an integer, got a date 2020-01-01"),
        ("max_deals = 2020-01-01T10:00:00",
         "max_deals: expected an integer, got a date-time 2020-01-01T10:00:00"),
        ("max_deals = 10:30:00", "max_deals: expected an integer, got a time 10:30:00"),
        ("max_deals = '12'", "max_deals: expected an integer, got a string '12'"),
        ("bots.c = { remote = false, token = 'abcdefghij' }",
         "bots.c.remote: expected true, got false"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_type_is_quoted_as_the_config_wrote_it(
    tmp_path: Path, line: str, said: str
) -> None:
    """Defect: the config's type errors quoted Python, not the TOML the organiser wrote:
    `concurrency = true` was "got a boolean True", an inline table "got a table {'a': 1}",
    `bots.c = { remote = false, ... }` "expected true, got False", and a date "got date
    datetime.date(2020, 1, 1)"."""
    key, _, value = line.partition(" = ")
    cfg = tmp_path / "t.toml"
    top, bots = (f"{key} = {value}\n", "") if "." not in key else ("", f"c = {value}\n")
    cfg.write_text(f'{top}[bots]\na = "random"\nb = "random"\n{bots}', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value) == f"{cfg}: {said}"


def test_a_table_too_narrow_for_the_strikes_does_not_explain_them(tmp_path: Path) -> None:
    """Defect: on a 60-column terminal the table leaves out its strikes column, but its
    caption still explained it ("strikes: timeouts/illegal/disconnects/forfeits"), a
    legend of nothing on screen."""
    db = tmp_path / "t.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("cup", name="cup", fingerprint="cup", total_matches=6,
                             config={"ruleset": "classic", "draw_probability": 0.02},
                             bots=[(b, b) for b in ("a", "b", "c")])  # fmt: skip
        lb = build_leaderboard(st, "cup")

    def shown(width: int) -> tuple[str, str]:
        table = to_rich_table(lb, width)
        headers = " ".join(str(c.header) for c in table.columns)
        return headers, str(table.caption)

    wide, narrow = shown(200), shown(60)
    assert "strikes" in wide[0] and wide[1].endswith(
        "strikes: timeouts/illegal/disconnects/forfeits"
    )
    assert "strikes" not in narrow[0]
    assert narrow[1] == "tournament cup · sorted by μ−3σ"


def test_a_match_its_time_limit_ended_is_said_so_by_arena_replay(tmp_path: Path) -> None:
    """Defect: a tournament's `match_timeout_s` ends a match after the deal in progress,
    and its record says so (`time_limit_s`), but `arena replay` showed only the standings
    and `arena replay --check` "final (max_deals, 1 deal)", the web's replay page "ended:
    max_deals": a match of a 2-deal cap cut after 1 deal read as if the cap had ended it,
    with no word of a clock."""
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=1)  # (as the referee stores it)
    game = Game.new(ruleset, 5, ["a", "b", "c"])
    rng = random.Random(5)
    while not game.is_over:
        game.apply_trusted(rng.choice(game.legal_actions()))
    path = tmp_path / "m.json"
    said = (
        "ended by its time limit (match_timeout_s 30 s) after deal 1, placed by score as at "
        "a deal cap (the result's reason says max_deals)"
    )
    # (stored, what is said): none, the referee's, and what a hand-edited record may hold
    for stored, limit in ((None, None), (30.0, 30.0), (math.inf, None), (math.nan, None),
                          (True, None)):  # fmt: skip
        record = {**game.record(), **({} if stored is None else {"time_limit_s": stored})}
        path.write_text(json.dumps(record), encoding="utf-8")
        check = CliRunner().invoke(main, ["replay", "--check", str(path)])
        shown = CliRunner().invoke(main, ["replay", str(path)], env={"COLUMNS": "300"})
        assert check.exit_code == 0 and shown.exit_code == 0, check.output + shown.output
        assert (said in check.output.splitlines()) == (said in shown.output) == bool(limit)
        # the web's replay page reads it from the summary (it said "ended: max_deals")
        assert match_summary("m", record)["time_limit_s"] == limit


def test_the_leaderboard_without_a_database_anywhere_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: in a folder with no runs/*.sqlite, `arena leaderboard` said "no database at
    runs/default.sqlite", a file nobody named (its default is the newest runs/*.sqlite),
    where `arena replay --list` and `arena web` say that none is in runs/."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["leaderboard"])
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == (
        "Error: no database found in runs/ (run `arena tournament` first, or pass --db)"
    )
    assert not (tmp_path / "runs").exists()
