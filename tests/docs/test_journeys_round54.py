"""Round 54: a bot author's whole journey from README.md and docs/writing-a-bot.md, the
organiser's side in the same clone, and a bot connecting from a second directory with the
package pip built there. What did not hold is pinned here.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sdk.client import BotRunner
from tests.sdk.test_hostile_arena import (
    ARENA_BOT,
    GUARD,
    WELCOME,
    Out,
    Stream,
    _game,
    fake_arena,
    request,
    started,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


async def _run_until_stopped(tmp: Path, address: str, spec: str, *args: str) -> tuple[int, str]:
    """``arena-bot run SPEC ARGS`` against ``address``: Ctrl-C once the bot said "asked",
    again once the runner said it stops (cutting the grace of its calls short). Killed
    after a guard; exit code and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *ARENA_BOT, "run", spec, "--arena", address, "--token", "t", *args,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=str(tmp),
        env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(3 * GUARD):
            for wanted in ("asked", "stopping: signal"):
                while not any(wanted in ln for ln in lines):
                    line = (await proc.stderr.readline()).decode(errors="replace")
                    assert line, "".join(lines)
                    lines.append(line)
                proc.send_signal(signal.SIGINT)
            lines.append((await proc.stderr.read()).decode(errors="replace"))
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, "".join(lines)


def test_a_call_stuck_in_a_worker_process_is_named_at_exit(tmp_path: Path) -> None:
    """Defect: writing-a-bot.md says of `arena-bot run` stopped while a bot call never
    returns that it "says 'a bot call is still running (act in match ...): exiting
    without waiting for it'", and of `--workers` that this does not change. With
    `--workers 2` a bot stuck in an endless loop was stopped in silence: stopping the
    workers ended the call (as failed) before the line looked for calls still running.
    Now the call is named as the workers are stopped."""
    (tmp_path / "stuck_bot.py").write_text(
        "import sys, threading\nfrom sdk import Bot\n\n\nclass Stuck(Bot):\n"
        "    def act(self, view):\n"
        '        print("asked", file=sys.stderr, flush=True)\n'
        "        threading.Event().wait()\n"
    )
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.closed(3 * GUARD)

    async def main() -> tuple[int, str]:
        async with fake_arena(script) as arena:
            return await _run_until_stopped(
                tmp_path, arena.address, "stuck_bot.py:Stuck", "--workers", "2"
            )

    code, err = asyncio.run(main())
    assert code == 0, err
    assert (
        "a bot call is still running in a worker process (act in match m1): stopping the "
        "workers without waiting for it" in err
    ), err
    doc = _joined(DOCS / "writing-a-bot.md")
    assert "a bot call is still running in a worker process (act in match" in doc


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        (
            {"workers": 2},
            "workers=2 needs spec='file.py:Class', the name each worker process loads the bot "
            "from (it cannot be handed the class itself): give spec='test_journeys_round54.py:",
        ),
        ({"workers": 0, "spec": "mybot.py:Lowest"}, "workers must be at least 1, got 0"),
    ],
)
def test_sdk_run_with_workers_says_what_is_missing(kwargs: dict[str, object], said: str) -> None:
    """Defect: `sdk.run(Cpu, arena=..., token=..., workers=2)` (the docs list `workers=None
    with spec=...`; an author who gave only the first) was refused with "workers must be at
    least 1, and need the bot's spec (file.py:Class)": both conditions in one sentence,
    neither saying which failed, nor naming the keyword `spec=`. Now each is said apart, the
    missing spec with the one that names the bot's class."""
    from sdk import Bot

    class Cpu(Bot):
        pass

    with pytest.raises(ValueError) as e:
        BotRunner(Cpu, "localhost:1", "t", **kwargs)  # type: ignore[arg-type]
    assert said in str(e.value)
