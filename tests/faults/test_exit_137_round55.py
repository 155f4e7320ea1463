"""Round 55 (limits): a bot run through a shell whose program the out-of-memory killer ended.

Limit left by round 54: the runner names the kernel's out-of-memory killer for a SIGKILL it
did not send (``code -9``), but a bot command run through a shell or wrapper (``sh -c
'python bot.py'``, a script that does not ``exec``) exits 137 (128 + 9) when its program is
killed, and that was said as any exit code. It is now said as possibly the same, once more
only when the arena sent no SIGKILL itself.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from arena.tournament.config import BotSpec
from arena.tournament.runner import _BotProcess, _exit_words, _restart

HINT = (
    "code 137 (128 + 9, as a shell or wrapper exits when the program it ran was ended by "
    "SIGKILL, which the arena did not send: if so, the kernel's out-of-memory killer may "
    "have ended it, bots being its first pick, oom_score_adj 1000; see dmesg)"
)


def _bot(tmp_path: Path, script: str) -> _BotProcess:
    return _BotProcess(BotSpec(name="b", kind="command"), ["sh", "-c", script], "t",
                       tmp_path / "b.log")  # fmt: skip


def test_a_wrapper_exiting_137_after_its_program_was_killed_names_the_killer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # the program (an inner shell) killed by SIGKILL; the wrapper reports it as 137
    p = _bot(tmp_path, "echo up; sh -c 'kill -9 $$'; exit $?")

    async def scenario() -> None:
        await p.start()
        assert p.proc is not None
        assert await p.proc.wait() == 137
        await _restart(p, p.proc.returncode, 3)
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()

    with caplog.at_level(logging.WARNING, logger="arena.tournament.runner"):
        asyncio.run(scenario())
    assert f"bot b exited with {HINT}; restarting it (1/3)" in caplog.text, caplog.text
    log = (tmp_path / "b.log").read_text()
    assert f"exited with {HINT}; restarting it (1/3)" in log, log


def test_137_after_the_arenas_own_sigkill_and_other_codes_say_the_code_alone(
    tmp_path: Path,
) -> None:
    p = _bot(tmp_path, "exit 0")
    assert _exit_words(p, 137) == HINT
    assert _exit_words(p, 136) == "code 136" and _exit_words(p, 143) == "code 143"
    assert _exit_words(p, 1) == "code 1" and _exit_words(p, "137") == "code 137"
    p.killed_here = True  # (the runner stopped it with a SIGKILL: its doing, no one else's)
    assert _exit_words(p, 137) == "code 137" and _exit_words(p, -9) == "code -9"
