"""A new bot author's mistakes (round 24 of the bot-author audit): each test is a mistake
whose message did not say what was wrong, or where."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena

from engine import PRESETS, Action, DealResult, PlayerView
from sdk import Bot, play_local
from sdk.client import BotRunner, RunSummary


class _ExitsInPlay(Bot):
    def play(self, view: PlayerView) -> Action:
        raise SystemExit(3)


class _InterruptedInPlay(Bot):
    def play(self, view: PlayerView) -> Action:
        raise KeyboardInterrupt  # what a Ctrl-C in an endless loop of the bot's raises


class _ExitsInAHook(Bot):
    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        sys.exit("no more")


def test_a_bot_that_exits_is_named_with_its_call_and_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot's ``sys.exit(3)`` stopped ``arena-bot try`` with "the series stopped:
    a seat left it (SystemExit 3)" and ``arena-bot run`` with "the bot left (exit code
    3)": neither said which bot, which call or which line (a ``sys.exit`` deep in a
    library, say). The line that left is logged, with the method, match and deal."""
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit) as e:
        play_local([_ExitsInPlay, Bot, Bot], seed=1, max_deals=3)
    assert e.value.code == 3
    first = _ExitsInPlay.play.__code__.co_firstlineno
    line = f"_ExitsInPlay.play() (test_author_round24.py:{first})"
    said = caplog.text
    assert f"match local-1: {line} raised SystemExit(3) at test_author_round24.py:" in said
    assert ", in play (deal " in said and ", playing): the bot leaves" in said

    caplog.clear()
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit):
        play_local([_ExitsInAHook, Bot, Bot], seed=1, max_deals=3)
    assert (
        "match local-1: _ExitsInAHook.on_deal_end() raised SystemExit('no more') at "
        "test_author_round24.py:" in caplog.text
    )


def test_a_ctrl_c_in_a_stuck_decision_names_it(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: Ctrl-C on an ``arena-bot try`` whose bot loops for ever printed only
    "interrupted after 0 of 20 matches: no results": not which call was stuck, nor where.
    The interrupted call is named, with its line and how long it had run."""
    with caplog.at_level(logging.WARNING), pytest.raises(KeyboardInterrupt):
        play_local([_InterruptedInPlay, Bot, Bot], seed=1, max_deals=3)
    said = caplog.text
    assert "match local-1: _InterruptedInPlay.play() (test_author_round24.py:" in said
    assert "was interrupted (KeyboardInterrupt) at test_author_round24.py:" in said
    assert re.search(r", playing, after \d+\.\d s\)", said), said


def test_a_bot_that_exits_in_an_arena_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same in an arena: the runner's "the bot left" came with no call or line."""

    async def main() -> RunSummary:
        async with arena(tmp_path, reconnect_grace_s=0.2) as a:
            names = ["v0", "v1", "v2"]
            for n in names:
                a.referee.add_bot(n, f"tok-{n}")
            runners = [
                BotRunner(_ExitsInAHook if n == "v0" else Bot, a.target, f"tok-{n}",
                          name=n, retry_for=10)
                for n in names
            ]  # fmt: skip
            tasks = [asyncio.create_task(r.run()) for r in runners]
            assert not await a.referee.wait_for_bots(names, 20)
            rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
            await a.referee.run_match("h", rules, 1, names)
            summary = await asyncio.wait_for(tasks[0], 30)
            for r in runners[1:]:
                r.stop()
            await asyncio.wait_for(asyncio.gather(*tasks[1:]), 30)
            return summary

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        summary = asyncio.run(main())
    assert summary.exit_code == 1 and summary.exit_message == "no more"
    assert (
        "match h: _ExitsInAHook.on_deal_end() raised SystemExit('no more') at "
        "test_author_round24.py:" in caplog.text
    )
