"""Round 39: the docs as a reader pastes them, this session's changes first.

Found and fixed: ``arena-bot try --help`` gave ``--max-deals``'s default as 1000 alone,
while the guide (and the code) make a ruleset file's own ``max_deals`` the default when it
has one: a reader of ``--help`` who wrote ``max_deals = 3`` in a ruleset file would not
expect ``try`` to honour it.

Pasted and found right (pinned by this session's other test files, not again here): Ctrl-C
while the bot's module is imported (``arena-bot: interrupted while importing the bot
'mine.py:Mine', at mine.py:5, in <module>: no match played``, exit 130 for ``try``, 0 for
``run``); ``mybot.py`` imported as the module ``mybot`` (a spawn pool finds its functions),
``my-bot.py`` and a file in a package under private names; a huge exception message cut at
1000 characters in an incident and a ``strict`` error, a traceback's line at 2000, with
"… (N more characters)"; a card's notation returned (``Play(sdk.parse_card('10♣'))``); a
slow call's later decisions "not asked" (scaled: 1.45 s at 100 ms + 1 s, 4 timeouts, as the
guide's 15 s at 1 s + 10 s); the tokens file note (``every user`` / ``the users of its
group``, ``chmod 600``); a tokens file with a shared token, an unknown key or too few bots
(exit 2); ``GRPC_POLL_STRATEGY`` ``none``, ``none,epoll1``, empty or unknown: exit 2 for
``arena tournament`` and ``arena bench`` but its ``engine`` section; ``arena-bot try human``
with ``<&-`` or ``>&-`` (exit 1) and Ctrl-C (exit 130, "no results"); the guide's ``try``
table for ``mybot.py``; ``run``'s "no token" and ``--retry-for`` messages; every option of
``arena ... --help`` and ``arena-bot ... --help`` named in the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]


def _joined(text: str) -> str:
    return " ".join(text.split())


def test_try_help_names_a_ruleset_files_cap_as_max_deals_default_as_the_guide_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (help): `--max-deals`'s default read "1000" alone; the guide says "default
    1000 deals, or the ruleset file's own cap", which is what `try` does."""
    from sdk import cli

    guide = _joined((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8"))
    assert re.search(r"default \d+ deals, or the ruleset file's own cap", guide)

    runner = CliRunner()
    help_text = _joined(runner.invoke(cli.main, ["try", "--help"]).output)
    assert (
        f"[default: a ruleset file's max_deals, else {cli.TRY_MAX_DEALS} (none for human)]"
        in help_text
    ), help_text

    # What the help and the guide say is what it does: the file's cap, unless --max-deals.
    (tmp_path / "cap.toml").write_text('preset = "classic"\nmax_deals = 2\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    capped = runner.invoke(cli.main, ["try", "random", "-n", "1", "--ruleset", "cap.toml"])
    assert capped.exit_code == 0, capped.output
    capped_note = "1 of 1 match reached the cap of 2 deals before anyone reached 1000"
    assert capped_note in _joined(capped.output)
    told = runner.invoke(
        cli.main, ["try", "random", "-n", "1", "--ruleset", "cap.toml", "--max-deals", "1"]
    )
    assert told.exit_code == 0, told.output
    told_note = "1 of 1 match reached the cap of 1 deal before anyone reached 1000"
    assert told_note in _joined(told.output)
