"""Loading bots by name, module or file; the arena-bot CLI (try, human, run's arguments)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bots import BUNDLED, load
from bots.heuristic import HeuristicBot
from sdk.bot import Bot
from sdk.cli import main
from sdk.loader import BotLoadError, load_bot

BOT_FILE = """
from sdk import Bot

class First(Bot):
    name = "first"
    def act(self, view):
        return view.legal_actions[0]
"""


def test_bundled_names() -> None:
    assert BUNDLED[:3] == ("random", "heuristic", "counting")
    for name in ("random", "heuristic", "counting"):
        cls = load(name)
        assert issubclass(cls, Bot) and cls().name == name
    with pytest.raises(KeyError, match="bundled"):
        load("nope")


def test_load_by_module_and_file(tmp_path: Path) -> None:
    assert load_bot("bots.heuristic:HeuristicBot") is HeuristicBot
    assert load_bot("heuristic") is HeuristicBot
    f = tmp_path / "mybot.py"
    f.write_text(BOT_FILE)
    assert load_bot(f"{f}:First").name == "first"
    assert load_bot(str(f)).__name__ == "First"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty"),
        ("no_such_module_xyz", "no module"),
        ("bots.heuristic:Nope", "has no 'Nope'"),
        ("bots.heuristic:estimate_take", "not a subclass"),
        ("missing/file.py", "no file"),
    ],
)
def test_load_errors_say_what_to_write(spec: str, message: str) -> None:
    with pytest.raises(BotLoadError, match=message):
        load_bot(spec)


def test_try_prints_a_table(tmp_path: Path) -> None:
    f = tmp_path / "mybot.py"
    f.write_text(BOT_FILE)
    result = CliRunner().invoke(
        main, ["try", str(f), "--vs", "random,heuristic", "-n", "3", "--max-deals", "2"]
    )
    assert result.exit_code == 0, result.output
    for word in ("first", "random", "heuristic", "wins", "pts/deal"):
        assert word in result.output


SLOW_FILE = """
import time
from sdk import Bot

class Slow(Bot):
    slept = False

    def act(self, view):
        if not Slow.slept:
            Slow.slept = True
            time.sleep(1.05)  # once, over the arena's 1 s per decision
        return view.legal_actions[-1]
"""

QUIT_FILE = """
from sdk import Bot

class Quitter(Bot):
    def act(self, view):
        raise SystemExit(7)
"""


def test_try_shows_the_slowest_decision_and_warns_over_the_arenas_limit(
    tmp_path: Path,
) -> None:
    """Defect: ``try`` said nothing about time, so a bot too slow for an arena (1 s per
    decision by default) was only found out there. Under the table comes each bot's
    slowest decision, and a warning says when the tried bot's is over the arena's limit."""
    f = tmp_path / "slow.py"
    f.write_text(SLOW_FILE)
    r = CliRunner().invoke(
        main, ["try", f"{f}:Slow", "--vs", "random", "-n", "1", "--max-deals", "1"]
    )
    assert r.exit_code == 0, r.output
    assert "slowest decision: Slow 10" in r.output  # 1050 ms or a little more
    assert "an arena allows 1000 ms per" in " ".join(r.output.split())
    fast = CliRunner().invoke(
        main, ["try", "random", "--vs", "random", "-n", "1", "--max-deals", "1"]
    )
    assert fast.exit_code == 0 and "slowest decision: random 0." in fast.output
    assert "warning" not in fast.output


def test_try_says_why_it_stops_when_the_bot_exits(tmp_path: Path) -> None:
    f = tmp_path / "quit.py"
    f.write_text(QUIT_FILE)
    r = CliRunner().invoke(main, ["try", f"{f}:Quitter", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 7
    assert "the series stopped: a seat left it (SystemExit 7)" in r.output


def test_try_other_ruleset() -> None:
    result = CliRunner().invoke(
        main,
        [
            "try",
            "heuristic",
            "--vs",
            "random",
            "-n",
            "2",
            "--ruleset",
            "1001-4p",
            "--max-deals",
            "2",
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1001-4p" in result.output


def test_try_1001_with_three_opponents_is_the_four_player_game() -> None:
    """RULES.md: the game 1001 is "for 3 or 4 players"; three opponents make four."""
    r = CliRunner().invoke(
        main, ["try", "random", "--vs", "random,heuristic,random", "-n", "1", "--ruleset",
               "1001", "--max-deals", "1"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "1001-4p" in r.output


def test_try_bad_bot_and_ruleset() -> None:
    r = CliRunner().invoke(main, ["try", "nobot_xyz"])
    assert r.exit_code == 2 and "bundled bot" in r.output
    r = CliRunner().invoke(main, ["try", "random", "--ruleset", "nope", "-n", "1"])
    assert r.exit_code == 2 and "unknown preset" in r.output


def test_run_needs_a_token() -> None:
    r = CliRunner().invoke(main, ["run", "random"], env={"ARENA_TOKEN": ""})
    assert r.exit_code == 2 and "--token" in r.output


def test_help_lists_commands() -> None:
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for cmd in ("run", "try", "human"):
        assert cmd in r.output


def test_try_a_bot_whose_init_fails_in_a_later_match(tmp_path: Path) -> None:
    """Defect: a bot whose ``__init__`` passed the start-up check but raised in a later
    match ended `arena-bot try` with a raw traceback and no table. It is an error naming
    the bot and the exception, exit code 1."""
    f = tmp_path / "later.py"
    f.write_text(
        "from sdk import Bot\n"
        "class Later(Bot):\n"
        "    made = 0\n"
        "    def __init__(self):\n"
        "        type(self).made += 1\n"
        "        if type(self).made > 2:\n"
        "            raise RuntimeError('no more')\n"
    )
    r = CliRunner().invoke(main, ["try", f"{f}:Later", "-n", "3", "--max-deals", "1"])
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    assert "making the bot Later for a match" in text and "RuntimeError: no more" in text
    assert "Traceback" not in r.output
