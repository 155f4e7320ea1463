"""Round 42: the docs pasted as a reader would, what they say each command prints.

- web.md quoted what `arena-bot human` answers to a wrong entry as "'play A♠' is not legal
  now. Legal: …" (a card it may not play is "A♠ cannot be played now"), and "Not an
  amount: 'abc'" without its input (a bare `abc` is "not an action: 'abc' ...", the
  amount's message answers `bid abc`): each quote now names its input, and is the answer.
- The `header: value` blocks a terminal too narrow for a table gets (`arena leaderboard`,
  `--list`, `arena-bot try`, `arena replay`'s tricks, `arena bench`) coloured every number
  rich's highlighter found, the headers' own among them (`pts/deal ±95%`'s 95, `(100%)`'s
  brackets), which the table they stand for never does; and highlighting dropped the
  style of what it coloured: the headings were not bold, nor the title italic, as the
  table's are.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from rich.console import Console
from rich.table import Table

from arena.render import fitted
from sdk import Action, Bid, Pass, Play, parse_card
from sdk.human import choose

ROOT = Path(__file__).resolve().parents[2]


def _joined(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text)


# --- web.md: what `arena-bot human` answers ---------------------------------------------

PLAYS: tuple[Action, ...] = tuple(Play(parse_card(c)) for c in ("KH", "9S", "10C", "QD", "JD"))
BIDS: tuple[Action, ...] = (Bid(105), Bid(110), Pass())


def _quoted_answers() -> list[tuple[str, str]]:
    doc = _joined((ROOT / "docs" / "web.md").read_text(encoding="utf-8"))
    start = doc.index("Anything else is explained (")
    sentence = doc[start : doc.index("a marriage held but not yet", start)]
    return re.findall(r"`([^`]+)`[^\"`]*: \"(.*?)\";", sentence)


def test_web_md_quotes_the_human_seats_answers_with_their_inputs() -> None:
    assert [entry for entry, _ in _quoted_answers()] == [
        "30",
        "play A♠",
        "bid 107",
        "bid abc",
        "abc",
    ]


@pytest.mark.parametrize(("entry", "quote"), _quoted_answers())
def test_each_answer_web_md_quotes_is_what_the_seat_says(entry: str, quote: str) -> None:
    """The quote (up to its `…`) is the start of the answer to its input: a card menu for
    the numbers and cards, an auction for the bids."""
    legal = BIDS if entry.startswith("bid") else PLAYS
    action, why = choose(entry, legal)
    assert action is None
    assert why.startswith(quote.split("…")[0].rstrip()), (entry, why)


# --- the narrow terminal's blocks ---------------------------------------------------------


def _narrow(table: Table) -> str:
    out = io.StringIO()
    console = Console(file=out, width=30, force_terminal=True, color_system="standard")
    console.print(fitted(table))
    return out.getvalue()


def _leaderboard_like(highlight: bool = False) -> Table:
    t = Table(title="cup — classic", highlight=highlight)
    for heading in ("bot", "matches", "pts/deal ±95%", "made", "strikes", "a long heading"):
        t.add_column(heading)
    t.add_row("counting", "6", "+49.1 ± 13.0", "8/8 (100%)", "0/0/0/0", "x" * 30)
    return t


def test_the_narrow_blocks_colour_no_number_the_table_does_not() -> None:
    text = _narrow(_leaderboard_like())
    assert "pts/deal ±95%" in re.sub(r"\x1b\[[0-9;]*m", "", text)  # blocks, not a table
    # The heading bold, as the table's; the values plain, as in its cells.
    assert "\x1b[1mpts/deal ±95%\x1b[0m: +49.1 ± 13.0" in text
    assert "\x1b[1mmade\x1b[0m: 8/8 (100%)" in text
    assert "\x1b[1;36m" not in text  # rich's number highlight


def test_the_narrow_blocks_highlight_a_column_that_asks_for_it() -> None:
    """A table made with `highlight=True` highlights its cells; its blocks do too."""
    text = _narrow(_leaderboard_like(highlight=True))
    assert "\x1b[1;36m49.1\x1b[0m" in text
    assert "\x1b[1mpts/deal ±95%\x1b[0m" in text  # (never a heading)


# --- tournament.md: the database's columns ------------------------------------------------


def test_the_columns_tournament_md_lists_are_the_databases(tmp_path: Path) -> None:
    """ "The columns, for a query of one's own": every table of a new database with its
    columns in order, and no table the list leaves out (SQLite's own aside)."""
    import sqlite3

    from arena.storage import Storage

    doc = (ROOT / "docs" / "tournament.md").read_text(encoding="utf-8")
    start = doc.index("The columns, for a query of one's own")
    block = doc[doc.index("```\n", start) + 4 :]
    block = _joined(block[: block.index("```")])
    listed = {
        name: [c.strip() for c in cols.split(",")]
        for name, cols in re.findall(r"(\w+)\(([^)]*)\)", block)
    }
    with Storage(tmp_path / "t.sqlite"):
        pass
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    try:
        tables = [
            n
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not n.startswith("sqlite_")
        ]
        actual = {n: [r[1] for r in conn.execute(f"PRAGMA table_info({n})")] for n in tables}
    finally:
        conn.close()
    assert listed == actual


# --- the commands' help -------------------------------------------------------------------


def _commands() -> list[tuple[str, click.Command]]:
    from arena.cli import main as arena_main
    from sdk.cli import main as bot_main

    out = []
    ctx = click.Context(arena_main)
    for prefix, group in (("arena", arena_main), ("arena-bot", bot_main)):
        assert isinstance(group, click.Group)
        for sub in group.list_commands(ctx):
            cmd = group.get_command(ctx, sub)
            assert cmd is not None
            out.append((f"{prefix} {sub}", cmd))
    return out


def test_every_option_of_arena_and_arena_bot_says_what_it_does_in_its_help() -> None:
    """`arena-bot human --help` showed `-n, --matches INTEGER RANGE [default: 1; x>=1]`
    and `--ruleset TEXT [default: classic]` with no word of what they are (try's say it),
    and `--max-deals` no default (none, but a ruleset file's cap holds); `arena-bot try`'s
    and `run`'s `--log-level` only its choices."""
    bare = [
        f"{name} {'/'.join(p.opts)}"
        for name, cmd in _commands()
        for p in cmd.params
        if isinstance(p, click.Option) and p.opts != ["--help"] and not (p.help or "").strip()
    ]
    assert not bare
    human = dict(_commands())["arena-bot human"]
    cap = next(p for p in human.params if "--max-deals" in p.opts)
    assert isinstance(cap, click.Option) and cap.help is not None
    assert "ruleset file's max_deals, else none" in cap.help


def test_a_ruleset_files_cap_ends_a_persons_match_as_web_md_says(tmp_path: Path) -> None:
    """web.md: `arena-bot human` has no deal cap; `--max-deals N` sets one, "and so does a
    ruleset file's own `max_deals`" (which the help and the doc did not say)."""
    doc = _joined((ROOT / "docs" / "web.md").read_text(encoding="utf-8"))
    assert "and so does a ruleset file's own `max_deals`" in doc
    rules = tmp_path / "cap1.toml"
    rules.write_text('preset = "classic"\nmax_deals = 1\n')
    bin_dir = Path(sys.executable).parent
    run = subprocess.run(
        [str(bin_dir / "arena-bot"), "human", "--ruleset", str(rules)],
        input="1\n" * 300,  # the first action listed, whatever is asked
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Match over: the cap of 1 deal was reached" in run.stdout
    assert "Deal 2" not in run.stdout


# --- arena-bot try's table ----------------------------------------------------------------


def test_trys_table_rounds_halfway_away_from_zero_as_the_guide_says() -> None:
    """`arena-bot try` wrote a mean score of 10.5 as 10 (Python's format rounds to even)
    beside its "10.5" points a deal, in 1-deal matches; the leaderboard rounds halfway
    away from zero (tournament.md), and so does the table now, as the guide says."""
    from sdk.cli import _print_results
    from sdk.local import SeriesEntry, SeriesResult

    doc = _joined((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8"))
    assert "a figure exactly halfway is rounded away from zero" in doc
    assert "(a mean of 10.5 is 11)" in doc
    # 8 matches, 1 won, places 21 in all (2.625), 84 points (10.5 each) in 8 deals
    entry = SeriesEntry(name="lowest", matches=8, wins=1, places=21, score=84, deals=8)
    result = SeriesResult(ruleset="classic", matches=8, entries=[entry])
    out = io.StringIO()
    _print_results(Console(file=out, width=120), result, "t")
    row = next(line for line in out.getvalue().splitlines() if "lowest" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[1:] == ["8", "1", "13", "2.63", "11", "10.5", "0"], cells
