"""Worker processes (``BotRunner(..., workers=N, spec=...)``, ``arena-bot run --workers``)
let go of a match's bot: at the match's end, and when the arena starts a match again under
the same id (an arena restarted, counting its ids from the start again). A worker that
keeps them holds every match's bot for as long as the run lasts (its model, its search
tables), a leak its author cannot see from the bot's side.

The bot here (written to a file, since its workers load it from its spec) notes in a file
each instance's match, the process it lives in, and its ``__del__`` (the worker dropping
the last reference to it), with the number of its instances alive in that process at each
match's start: the runner's public surface only (the pool's own count of matches per
worker is private). Kills mutants C53 and C54 of tests/sdk/test_mutation_review_round43.py
(each test names the one it fails under)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from sdk.client import RunSummary
from sdk.loader import load_bot
from tests.sdk.test_hostile_arena import (
    WELCOME,
    FakeArena,
    Out,
    Script,
    Stream,
    _game,
    ended,
    play,
    request,
    started,
)

#: A generous bound on what should happen at once (never a timed assertion): how long a
#: script waits for the worker to drop a bot before it notes that it did not.
GUARD = 15.0

BOT = """
import os
import time
from sdk import Bot

REPORT = {report!r}
SLOW = {slow!r}


def note(line):
    with open(REPORT, "a", encoding="utf-8") as f:
        f.write(line + "\\n")


class Counted(Bot):
    made = 0
    alive = 0

    def __init__(self):
        super().__init__()
        time.sleep(SLOW)
        Counted.made += 1
        Counted.alive += 1
        self.n = Counted.made
        note(f"made {{self.n}}")

    def on_match_start(self, view):
        note(f"start {{self.n}} {{self.match_id}} pid={{os.getpid()}} alive={{Counted.alive}}")

    def act(self, view):
        return view.legal_actions[0]

    def on_match_end(self, view, result):
        note(f"end {{self.n}} {{self.match_id}}")

    def __del__(self):
        Counted.alive -= 1
        note(f"del {{self.n}} {{self.match_id}}")
"""


def _bot(tmp: Path, slow: float = 0.0) -> tuple[str, Path]:
    """The bot's spec (``file.py:Counted``; ``slow``: its ``__init__``'s seconds) and the
    file it reports to."""
    report = tmp / "report.txt"
    report.touch()
    src = tmp / "counted.py"
    src.write_text(BOT.format(report=str(report), slow=slow), encoding="utf-8")
    return f"{src}:Counted", report


def _lines(report: Path) -> list[str]:
    return report.read_text(encoding="utf-8").splitlines()


async def _until(report: Path, line: str, timeout: float = GUARD) -> bool:
    """Whether ``line`` is in the report within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while line not in _lines(report):
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.02)
    return True


def _run(spec: str, script: Script, matches: int) -> tuple[RunSummary, FakeArena]:
    """``play`` of the bot of ``spec`` in one worker process."""
    return play(load_bot(spec), script, matches=matches, workers=1, spec=spec)


def test_the_worker_drops_each_matchs_bot_at_its_end(tmp_path: Path) -> None:
    """C54 (``_on_match_ended`` not chaining ``_release``): the worker was never told the
    match was over; it kept every match's bot alive (three matches in turn: 1, 2, then 3
    instances alive at their starts) until the run ended. Each bot is dropped after its
    ``on_match_end``, and every match starts with the one bot alive."""
    spec, report = _bot(tmp_path)
    g = _game()
    missing: list[str] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        for n, mid in enumerate(["m1", "m2", "m3"], 1):
            yield started(mid, g)
            yield request(mid, g, "1")
            assert await s.decision() is not None
            yield ended(mid)
            # Waited for before the next match (the drop follows its on_match_end); once
            # one is missing, the rest are not waited for. (Not after the last: the run
            # ends there, and its stream with it; the worker drops the bot before it exits.)
            if n < 3 and not missing and not await _until(report, f"del {n} {mid}"):
                missing.append(mid)

    summary, _ = _run(spec, script, matches=3)
    lines = _lines(report)
    assert summary.matches == 3 and summary.errors == 0, summary
    assert not missing, (missing, lines)
    starts = [ln for ln in lines if ln.startswith("start")]
    assert len(starts) == 3, lines
    assert len({ln.split()[3] for ln in starts}) == 1, lines  # one worker for all
    assert [ln.split()[-1] for ln in starts] == ["alive=1"] * 3, lines
    assert "del 3 m3" in lines, lines
    for n, mid in enumerate(["m1", "m2", "m3"], 1):
        assert lines.index(f"end {n} {mid}") < lines.index(f"del {n} {mid}"), lines


def test_the_worker_drops_the_bot_of_a_match_started_again(tmp_path: Path) -> None:
    """C53 (``_on_match_started`` not chaining ``_release`` for the match it replaces): a
    match started again under a known id (not a resumption: an arena restarted while the
    bot was never told the first one's end) got a new bot, and the worker kept the first
    one for the rest of the run (its end was never going to come). It is dropped, with no
    ``on_match_end`` (that match had none); the new one is dropped at its end."""
    spec, report = _bot(tmp_path)
    g = _game()
    dropped: list[bool] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None
        yield started("m1", g)  # again, not resumed: another match
        yield request("m1", g, "1")
        assert await s.decision() is not None
        dropped.append(await _until(report, "del 1 m1"))
        yield ended("m1")  # (and the run ends: the worker drops the bot before it exits)
        await s.closed()

    summary, arena = _run(spec, script, matches=1)
    lines = _lines(report)
    assert summary.matches == 1 and summary.errors == 0, summary
    assert arena.streams[0].decided() == [("m1", "1"), ("m1", "1")], summary
    assert dropped == [True], lines
    assert lines.index("end 2 m1") < lines.index("del 2 m1"), lines
    assert "end 1 m1" not in lines, lines


def test_the_worker_drops_a_bot_whose_match_ended_while_it_was_made(tmp_path: Path) -> None:
    """Checked fine: a match that ends while its bot's ``__init__`` still runs in the
    worker (a slow load) has its bot dropped once made, after its hooks: the drop waits
    in the match's order, behind the make."""
    spec, report = _bot(tmp_path, slow=0.5)
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield ended("m1")  # at once: the bot is still being made
        assert await _until(report, "made 1")
        yield started("m2", g)
        yield request("m2", g, "1")
        assert await s.decision() is not None
        yield ended("m2")
        await s.closed()

    summary, _ = _run(spec, script, matches=2)
    lines = _lines(report)
    assert summary.matches == 2 and summary.errors == 0, summary
    assert "del 1 m1" in lines and "del 2 m2" in lines, lines
    assert lines.index("end 1 m1") < lines.index("del 1 m1"), lines
