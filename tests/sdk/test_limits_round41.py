"""Round 41: known small limits left by earlier audits.

An ``async def`` bot method refused where the bot is loaded or given; ``arena-bot run``'s
"match ... ended" line said in the match's order (after the last ``on_deal_end``'s lines,
before ``on_match_end``'s); ``arena.render.fitted`` judging the cells by their own words,
not the title's; a bot failing its decisions in an arena said so at each match's end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from harness import arena

from engine import PRESETS, Action, DealResult, GameResult, PlayerView
from sdk import Bot, play_local
from sdk.client import BotRunner, RunSummary
from sdk.local import BotMakeError, method_mistakes

RULES = PRESETS["classic"]


# ------------------------------------------------------------------ async def methods


ASYNC_BOT = """from sdk import Bot


class Mine(Bot):
    async def play(self, view):
        return view.legal_actions[0]

    async def on_deal_end(self, view, result):
        pass
"""


class AsyncPlay(Bot):
    async def play(self, view: PlayerView) -> Action:  # type: ignore[override]
        return view.legal_actions[0]


class AsyncHook(Bot):
    async def on_match_end(self, view: PlayerView, result: GameResult) -> None:  # type: ignore[override]
        pass


class OwnActAsyncHelper(Bot):
    """Its own ``act``: its ``play`` is a helper the runners never call, and an ``async
    def`` of its own that no runner calls is no mistake either."""

    async def play(self, view: PlayerView) -> Action:  # type: ignore[override]
        return view.legal_actions[0]

    async def think(self) -> None:
        pass

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    from sdk.cli import main

    (tmp_path / "mine.py").write_text(ASYNC_BOT)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "args",
    [
        ["try", "mine.py", "-n", "1", "--max-deals", "1"],
        # (A tournament's bot processes are `python -m sdk.cli run BOT ...`: the same check.)
        ["run", "mine.py", "--arena", "127.0.0.1:9", "--token", "t", "--retry-for", "0"],
    ],
)
def test_arena_bot_refuses_an_async_def_bot_where_it_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """Defect: a bot whose ``play`` (or a hook) was ``async def`` was loaded and played:
    every decision the fallback, every hook a failure, said only as each was played
    (``try``: a table of incidents; ``run``: an arena's match of fallbacks). It is refused
    at load, naming each method and its line and what to write instead."""
    r = _cli(tmp_path, monkeypatch, *args)
    assert r.exit_code == 2, r.output
    out = " ".join(r.output.split())
    assert "Mine.play() (mine.py:5) and Mine.on_deal_end() (mine.py:8) are `async def`" in out
    assert "write them with `def`" in out and "asyncio.run(...)" in out
    assert "Awaiting in a decision" in out
    assert "ruleset" not in out  # (no table: nothing was played)


def test_play_local_and_sdk_run_refuse_an_async_def_bot_before_any_match() -> None:
    """The same in Python: ``play_local`` and ``sdk.run`` (its runner) refuse the class or
    instance given, a factory's bot is refused as it is made; the method and its line
    are named."""
    line = AsyncPlay.play.__code__.co_firstlineno
    here = Path(__file__).name
    with pytest.raises(TypeError) as e:
        play_local([AsyncPlay, Bot, Bot], seed=1, max_deals=1)
    assert str(e.value).startswith(
        f"play_local: the bot of seat 0 is the class AsyncPlay, whose play() ({here}:{line}) "
        "is `async def`: the runners call a bot's methods as plain functions"
    ), e.value
    assert "write it `def play`, and run what it awaits to its end with asyncio.run" in str(e.value)
    with pytest.raises(TypeError, match=r"a bot of class AsyncHook, whose on_match_end\(\)"):
        play_local([Bot, AsyncHook(), Bot], seed=1, max_deals=1)
    with pytest.raises(
        BotMakeError, match=r"made a bot of class AsyncPlay, whose play\(\) .* `async def`"
    ):
        play_local([lambda: AsyncPlay(), Bot, Bot], seed=1, max_deals=1)
    with pytest.raises(TypeError, match=r"the bot to run is the class AsyncHook, whose"):
        BotRunner(AsyncHook, "127.0.0.1:9", "t")


def test_only_the_methods_the_runners_call_are_refused_and_said_once() -> None:
    """A bot with its own ``act`` is not asked its phase methods: an ``async def play``
    there is its own helper, as any ``async def`` the runners never call. A refused
    method is not also told that its signature is wrong."""
    m = play_local([OwnActAsyncHelper, Bot, Bot], seed=1, max_deals=1)
    assert not m.incidents
    assert method_mistakes(OwnActAsyncHelper()) == ([], [])

    class Both(Bot):
        async def on_deal_end(self) -> None:  # type: ignore[override]  # (its args wrong too)
            pass

    errors, _ = method_mistakes(Both())
    assert len(errors) == 1 and "Both.on_deal_end() (" in errors[0], errors
    assert "is `async def`" in errors[0] and "runners call it as" not in errors[0]


# ------------------------------------------------------- in an arena: order, failures


class Logs(Bot):
    """Logs in its last hooks; the deal's end takes a moment, as a bot's might."""

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        time.sleep(0.3)  # (the match's end arrives meanwhile)
        logging.getLogger("mybot").info("hook on_deal_end %d", result.number)

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        logging.getLogger("mybot").info("hook on_match_end")


class Raises(Bot):
    def act(self, view: PlayerView) -> Action:
        raise RuntimeError("boom")

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        raise ValueError("hook boom")


async def _one_match(tmp: Path, factories: list[Any]) -> list[RunSummary]:
    async with arena(tmp) as a:
        names = [f"v{i}" for i in range(len(factories))]
        tasks = await a.runners(names, factories, 1)
        await a.referee.run_match("h1", dataclasses.replace(RULES, max_deals=1), 1, names)
        return list(await asyncio.wait_for(asyncio.gather(*tasks), 60))


def test_the_match_ended_line_comes_after_the_last_deals_hook_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: ``arena-bot run`` (and a tournament's bot logs) said "match h1 ended:
    scores ..." as the end arrived, before the lines the bot's last ``on_deal_end`` logs
    (it runs in the match's order, later), as if that hook ran after the match. The line
    now takes its place in the match's order: after the last deal's hook, before
    ``on_match_end``."""
    with caplog.at_level(logging.INFO):
        asyncio.run(_one_match(tmp_path, [Logs, Bot, Bot]))
    lines = [r.getMessage() for r in caplog.records]
    ended = [i for i, s in enumerate(lines) if s.startswith("match h1 ended: scores")]
    deal = [i for i, s in enumerate(lines) if s.startswith("hook on_deal_end")]
    match = [i for i, s in enumerate(lines) if s == "hook on_match_end"]
    assert len(ended) == 3 and deal and match, lines  # (a line per runner: three bots)
    assert deal[-1] < max(ended) < match[0], lines


def test_a_bot_failing_its_decisions_in_an_arena_is_told_at_the_matchs_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a bot that raised at every decision played the SDK's fallback, a legal
    answer to the referee: no strike, nothing in the leaderboard or the record, and its
    ``arena-bot run`` log said each error but no match's end said the match was played by
    fallbacks. The match's end now says how many of its decisions (and hooks) failed."""
    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summaries = asyncio.run(_one_match(tmp_path, [Raises, Bot, Bot]))
    said = [r for r in caplog.records if "the bot failed" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]
    text = said[0].getMessage()
    errors = summaries[0].errors
    assert said[0].levelno == logging.WARNING and errors > 3
    decisions = summaries[0].decisions
    assert f"match h1: the bot failed {errors - 1} of its {decisions} decision(s)" in text
    assert "the arena counts as no strike" in text and ", and 1 hook call(s) failed" in text
    assert not summaries[1].errors and not summaries[2].errors


# ------------------------------------------------------------------ render.fitted


def test_fitted_judges_the_cells_by_their_own_words_not_the_titles() -> None:
    """Defect: ``fitted`` counted the words of the whole drawing, title and caption too: a
    bot's name cut to "supercali…" in its cell passed as shown whole, being whole in the
    title, and the table was drawn with the name lost. It is drawn as lines now."""
    from rich.console import Console
    from rich.table import Table

    from arena.render import fitted

    def drawn(title: str | None, caption: str | None) -> str:
        t = Table(title=title, caption=caption)
        t.add_column("bot")
        t.add_column("score")
        t.add_row("supercalifragilistic", "12345")
        console = Console(width=22, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(fitted(t))
        console.file.close()
        return console.export_text()

    plain = drawn(None, None)
    for title, caption in (
        ("scores of supercalifragilistic", None),
        (None, "supercalifragilistic"),
    ):
        out = drawn(title, caption)
        assert "…" not in out and "bot: " in out, out
        assert out.count("supercalifragilistic") == 2, out
    assert "…" not in plain and "bot: " in plain  # (as without a title: it never fitted)
    # A table that fits is drawn as one, its title and caption with it.
    t = Table(title="all", caption="fine")
    t.add_column("bot")
    t.add_row("short")
    console = Console(width=40, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(fitted(t))
    console.file.close()
    assert "┃ bot" in console.export_text()
