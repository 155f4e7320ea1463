"""Round 54: a bot process ended by a SIGKILL the arena did not send is said to be one the
kernel's out-of-memory killer may have ended.

Limit left by round 53, which made every bot process the out-of-memory killer's first pick
(``oom_score_adj`` 1000): its kill was reported as any crash, ``bot r1 exited with code -9;
restarting it (1/3)``, and the bot's log ended mid-line with nothing saying why. Every line
and incident that reports such an exit now says so; one the runner sent itself (a bot that
ignored SIGTERM when stopped) does not.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import BotSpec
from arena.tournament.runner import _BotProcess, _exit_words, _monitor, _restart

HINT = (
    "code -9 (SIGKILL, not sent by the arena: the kernel's out-of-memory killer may have "
    "ended it, bots being its first pick, oom_score_adj 1000; see dmesg)"
)


def _bot(tmp_path: Path, script: str, **kw: Any) -> _BotProcess:
    return _BotProcess(BotSpec(name="b", kind="command"), ["sh", "-c", script], "t",
                       tmp_path / "b.log", **kw)  # fmt: skip


def test_a_restart_after_a_sigkill_names_the_out_of_memory_killer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    p = _bot(tmp_path, "echo up; kill -9 $$")

    async def scenario() -> None:
        await p.start()
        assert p.proc is not None
        assert await p.proc.wait() == -9
        await _restart(p, p.proc.returncode, 3)
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()

    with caplog.at_level(logging.WARNING, logger="arena.tournament.runner"):
        asyncio.run(scenario())
    assert f"bot b exited with {HINT}; restarting it (1/3)" in caplog.text, caplog.text
    log = (tmp_path / "b.log").read_text()
    assert f"exited with {HINT}; restarting it (1/3)" in log, log


def test_other_exits_say_their_code_alone(tmp_path: Path) -> None:
    """An exit code, another signal, and a SIGKILL the runner sent (a bot that ignores
    SIGTERM, stopped): no word of the out-of-memory killer."""
    p = _bot(tmp_path, "trap '' TERM; echo up; sleep 30")

    async def scenario() -> int | None:
        await p.start()
        await asyncio.sleep(0.3)  # (the trap set)
        await p.stop(grace=0.2)
        assert p.proc is not None
        return p.proc.returncode

    assert asyncio.run(scenario()) == -9 and p.killed_here
    assert _exit_words(p, -9) == "code -9"
    fresh = _bot(tmp_path, "exit 0")
    assert _exit_words(fresh, 3) == "code 3" and _exit_words(fresh, -15) == "code -15"
    assert _exit_words(fresh, "?") == "code ?"
    assert _exit_words(fresh, -9) == HINT


def test_a_bot_given_up_after_sigkills_says_so_in_its_forfeit(tmp_path: Path) -> None:
    """The reason the referee's forfeit incidents quote (``on_given_up``) says it too."""
    given: list[str] = []
    p = _bot(tmp_path, "kill -9 $$", on_given_up=lambda name, why: given.append(why))

    async def scenario() -> None:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        p.restarts = 3  # (its last restart spent)
        stopping = asyncio.Event()
        watch = asyncio.create_task(_monitor({"b": p}, stopping, 3, Counter({"b": 2})))
        while not p.given_up:
            await asyncio.sleep(0.05)
        stopping.set()
        await watch

    asyncio.run(scenario())
    assert given == [f"its process exited with {HINT} again, after 3 restarts, and is not "
                     "restarted"]  # fmt: skip
    assert f"exited with {HINT} again, after 3 restarts: not restarted" in (
        (tmp_path / "b.log").read_text()
    )
