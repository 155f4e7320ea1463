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
