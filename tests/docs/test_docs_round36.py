"""Round 36: the passages of docs/ and README.md changed on 2026-12-05 pasted as a reader
would (bots.md, writing-a-bot.md, tournament.md, referee.md, reliability.md, protocol.md,
rules-engine.md), and the README's rows of the commands they change.

Found and fixed: a bot that exited before connecting stopped the tournament with its exit
code and its log's tail on the arena's output, but its log itself (``<out>/logs/<bot>.log``)
got no line of the runner's, which tournament.md says it gets at each exit: read alone, it
ended on the bot's last line (half a line, even), not saying the bot had exited or that the
tournament stopped. The README's rows named neither ``arena rules --players`` nor
``arena-bot try --records``. writing-a-bot.md put the bundled bots' wall-clock backstop at
2.5 budgets (``Budget``'s default); ``counting`` sets 10 and ``pimc`` 3.3.

Pinned, as pasted and found right: writing-a-bot.md's ``try`` table (the command printed
above it gives it exactly, every column but the times) and its ``--records`` with
``arena replay`` and ``--check`` of the record it names; rules-engine.md's ``arena rules
--players`` refusal, word for word; the figures bots.md gives for the round-36 hands (the
heuristic's limit ~103 on K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠, counting's 0.61 for 120 and 0.67 at the
105 opening on two bare marriages, and its barrel bid of 120 with them, counting's and
pimc's); a tail line cut in its middle past 500 characters.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _joined(text: str) -> str:
    return " ".join(text.split())


# --- the fix: the runner's line in the log of a bot that exits before connecting ---------


def test_a_bot_that_exits_before_connecting_has_the_runners_line_in_its_log(
    tmp_path: Path,
) -> None:
    """Defect: the bot's log ended on what the bot wrote ("half a line", no newline): the
    runner's line of its exit, which tournament.md says comes at each exit (on a line of
    its own after half a line), was written for an exit during the tournament only. The
    arena's output tails a long line cut in its middle (tournament.md: past 500
    characters)."""
    from arena.tournament import RunOptions, TournamentError, load_config, run

    script = "import sys; sys.stdout.write('A' * 150 + 'B' * 1000 + 'C' * 350 + chr(10) + "
    script += "'half a line'); sys.exit(8)"
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f"""
name = "t36"
ruleset = "classic"
seed = 1
max_deals = 1
concurrency = 1
bot_wait_s = 30
db = "{tmp_path / "t.sqlite"}"
out = "{tmp_path / "out"}"
[bots]
r1 = "random"
r2 = "random"
x = {{ command = ["{sys.executable}", "-c", "{script}"] }}
""",
        encoding="utf-8",
    )
    with pytest.raises(TournamentError) as info:
        run(load_config(cfg), RunOptions(progress=False))
    said = str(info.value)
    assert said.startswith("bot 'x' exited with code 8 before connecting (log "), said
    assert "A" * 150 + " ... 1000 characters cut ... " + "C" * 350 + "\n" in said, said
    log = (tmp_path / "out" / "logs" / "x.log").read_text(encoding="utf-8")
    lines = log.splitlines()
    assert lines[-2] == "half a line", lines
    assert re.fullmatch(
        r"--- \d\d:\d\d:\d\d exited with code 8 before connecting: the tournament stops",
        lines[-1],
    ), lines
    assert "at each exit" in _joined(_text("tournament.md"))


# --- writing-a-bot.md: the try table, --records, arena replay -----------------------------


def _doc_block_after(text: str, marker: str, lang: str = "") -> str:
    start = text.index(marker) + len(marker)
    m = re.compile(r"```" + lang + r"\n(.*?)```", re.S).search(text, start)
    assert m is not None
    return m.group(1)


def test_the_try_table_of_writing_a_bot_md_is_what_its_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked, not a defect (pinned): the guide's ``mybot.py`` and the command under
    "Try it locally" print its table row for row (the slowest decisions are times), and
    ``--records DIR`` then ``arena replay DIR/local-0-1.json`` show and check that match."""
    from arena.cli import main as arena_main
    from sdk.cli import main as bot_main

    doc = _text("writing-a-bot.md")
    (tmp_path / "mybot.py").write_text(_doc_block_after(doc, "`mybot.py`:", "python"))
    command = _doc_block_after(doc, "## 2. Try it locally", "bash").strip()
    assert command == "arena-bot try mybot.py --vs random,heuristic -n 20"
    table = _doc_block_after(doc, command + "\n```\n")
    want = [line for line in table.splitlines() if line.startswith(("┃", "│"))]
    assert len(want) == 4

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(bot_main, [*command.split()[1:], "--records", "recs"])
    assert r.exit_code == 0, r.output
    got = [line for line in r.output.splitlines() if line.startswith(("┃", "│"))]
    assert got == want, r.output
    slowest = r"^slowest decision: lowest [\d.]+ ms, random [\d.]+ ms, heuristic"
    assert re.search(slowest, r.output, re.M)

    assert "`arena replay DIR/local-0-1.json` shows that match deal by deal" in _joined(doc)
    assert len(list((tmp_path / "recs").glob("local-*.json"))) == 20
    shown = CliRunner().invoke(arena_main, ["replay", "recs/local-0-1.json"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith(
        "Match: classic, 1000 deals max, seed 0, players heuristic, lowest, random\n"
    )
    assert "Deal 1 — dealer" in shown.output
    checked = CliRunner().invoke(arena_main, ["replay", "--check", "recs/local-0-1.json"])
    assert checked.exit_code == 0, checked.output
    assert "OK: every action is legal and every stored score matches" in checked.output


def test_the_readme_rows_name_the_changed_commands() -> None:
    """Defect (docs): the README's table named neither ``arena rules --players`` nor ``try
    --records`` (a feature not in the README's table is found by no one skimming it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rules_row = next(line for line in readme.splitlines() if "resolved rules" in line)
    assert "`.venv/bin/arena rules 1001 --players 4`" in rules_row
    try_row = next(line for line in readme.splitlines() if "try it locally" in line)
    assert "`--records DIR`" in try_row and "arena replay DIR/local-0-1.json" in try_row


# --- rules-engine.md: arena rules --players -------------------------------------------------


def test_arena_rules_players_says_what_rules_engine_md_quotes() -> None:
    """Checked (pinned): ``arena rules 1001 --players 4`` prints ``1001-4p``, and the
    refusal of ``classic`` for 4 is the doc's line word for word (exit code 2)."""
    from arena.cli import main

    doc = _joined(_text("rules-engine.md"))
    m = re.search(r"\(`(error: ruleset 'classic' seats 3 players, not 4;[^`]*)`\)", doc)
    assert m is not None
    r = CliRunner().invoke(main, ["rules", "classic", "--players", "4"])
    assert r.exit_code == 2
    assert r.output.strip() == m.group(1)
    ok = CliRunner().invoke(main, ["rules", "1001", "--players", "4"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith('name = "1001-4p"\n')
    assert "`arena rules 1001 --players 4` prints `1001-4p`" in doc


# --- bots.md: the round-36 figures on the hands it names --------------------------------------


def test_the_figures_bots_md_gives_for_its_round36_hands() -> None:
    """Checked (pinned): bots.md's "limit ~103" on K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠ over 140 (all three
    pass), two bare marriages at 0.61 for 120 and 0.67 at the opening (bid 105), and on the
    barrel "counting and pimc still bid 120 with them"."""
    from bots.counting import CountingBot
    from bots.heuristic import HeuristicBot
    from engine import Bid, Game, Pass, parse_action, parse_cards
    from tests.bots.test_weaknesses_round36 import _BARE, _BARE_TALON, _bot, _game, _view

    doc = _joined(_text("bots.md"))
    hands = ["A♥ 10♥ A♦ 10♦ A♠ 10♠ J♠", "K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠", "K♣ Q♣ A♣ 10♣ K♠ J♦ 9♦"]
    view = _view(_game(hands, "Q♠ J♣ 9♣", ["bid 105", "bid 140", "pass"]))
    assert "limit ~103" in doc
    assert round(HeuristicBot().bid_limit(view)) == 103
    assert [_bot(n).act(view) for n in ("heuristic", "counting", "pimc")] == [Pass()] * 3

    assert "K♥ Q♥ K♦ Q♦ 9♠ J♣ 9♣ was at 0.67 to make 120" in doc and "Now 0.61" in doc
    at_120 = _view(_game(_BARE, _BARE_TALON, ["bid 105", "bid 115", "pass"]))
    assert round(CountingBot().p_make_bid(at_120, 120), 2) == 0.61
    opening = _view(_game(_BARE, _BARE_TALON, []))
    assert round(CountingBot().p_make_bid(opening, 105), 2) == 0.67
    assert CountingBot().act(opening) == Bid(105)

    assert "on the barrel (0.5) counting and pimc still bid 120 with them" in doc
    g = Game.new(
        "classic", 0, ["p0", "p1", "p2"],
        deals={0: ([parse_cards(h) for h in _BARE], parse_cards(_BARE_TALON))},
        dealer=2, scores=[0, 880, 0], barrel=[0, 1, 0],
    )  # fmt: skip
    for a in ("bid 105", "bid 115", "pass"):
        g.apply(parse_action(a), seat=g.to_act)
    barrel = _view(g)
    assert barrel.seat == 1 and barrel.barrel[1] > 0
    assert _bot("counting").act(barrel) == Bid(120)
    assert _bot("pimc").act(barrel) == Bid(120)


# --- writing-a-bot.md: the search backstop --------------------------------------------------


def test_the_backstop_writing_a_bot_md_names_is_the_bots() -> None:
    """Defect (docs): the guide put the bundled bots' wall-clock backstop at "2.5 times its
    budget", the default of ``bots._dds.Budget``; ``counting`` sets 10 (0.4 s) and ``pimc``
    3.3 (0.9 s a card), as bots.md says: a reader sizing a deadline took it for 2.5."""
    from bots.counting import CountingBot
    from bots.pimc import PimcBot

    doc = _joined(_text("writing-a-bot.md"))
    assert "2.5 times its budget" not in doc
    said = (
        "(`safety`: 10 budgets, 0.4 s, for `counting`'s endgame search; 3.3 budgets, 0.9 s a "
        "card, for `pimc`, which says so in its log)"
    )
    assert said in doc
    assert CountingBot.safety == 10.0
    assert round(CountingBot.endgame_budget * CountingBot.safety, 2) == 0.4
    assert PimcBot.safety == 3.3
    assert round(PimcBot().budget * 0.9 * PimcBot.safety, 1) == 0.9
