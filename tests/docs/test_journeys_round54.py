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
            "from (it cannot be handed the class itself): give spec='mybot.py:MyBot', say",
        ),
        ({"workers": 0, "spec": "mybot.py:Lowest"}, "workers must be at least 1, got 0"),
    ],
)
def test_sdk_run_with_workers_says_what_is_missing(kwargs: dict[str, object], said: str) -> None:
    """Defect: `sdk.run(Cpu, arena=..., token=..., workers=2)` (the docs list `workers=None
    with spec=...`; an author who gave only the first) was refused with "workers must be at
    least 1, and need the bot's spec (file.py:Class)": both conditions in one sentence,
    neither saying which failed, nor naming the keyword `spec=`. Now each is said apart, the
    missing spec with the one that names the bot's class (here an example: a class made in
    a function is none a spec can name; tests/review/test_mutation_review_round54c.py has
    one of a file's)."""
    from sdk import Bot

    class Cpu(Bot):
        pass

    with pytest.raises(ValueError) as e:
        BotRunner(Cpu, "localhost:1", "t", **kwargs)  # type: ignore[arg-type]
    assert said in str(e.value)


PRINTER = (
    "from sdk import Bot\n\n\n"
    "class Printer(Bot):\n"
    "    def play(self, view):\n"
    '        print("playing deal", view.deal_number, view.hand, flush=True)\n'
    "        return min(view.legal_actions, key=lambda a: (a.card.points, a.card))\n"
)


def test_a_bot_that_prints_to_a_reader_that_left_is_not_broken_by_it(tmp_path: Path) -> None:
    """Defect: a bot that prints, tried or run with its output piped to a reader that stops
    reading (`arena-bot try printer.py | head -2`, `arena-bot run printer.py ... | head`,
    `| less` quit early), raised BrokenPipeError at its next print: each decision after
    that failed, `try` played its series on fallbacks and ended "printer had 25 incidents":
    exit code 1, and in an arena each was recorded as the bot's `bot_error` (20 in one match
    here). The output of a reader that left is written nowhere now, as `arena tournament |
    head` writes it: the bot plays as it would."""
    import subprocess

    (tmp_path / "printer.py").write_text(PRINTER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sdk.cli", "try", "printer.py", "-n", "2", "--max-deals", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader leaves, as `head -1` does
    err = proc.stderr.read().decode(errors="replace")
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith(b"playing deal 0"), first
    assert "BrokenPipeError" not in err and "incidents" not in err, err
    assert "the output's reader leaves** (`arena-bot run mybot.py ... | head`" in _joined(
        DOCS / "writing-a-bot.md"
    )


def test_a_bot_in_a_worker_process_prints_to_a_reader_that_left(tmp_path: Path) -> None:
    """The same in a worker process of `arena-bot run --workers N`, which writes to the
    runner's stdout with a descriptor of its own: the decision is the bot's, not failed."""
    import subprocess

    (tmp_path / "printer.py").write_text(PRINTER)
    script = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 1); os.close(w)  # a reader that left\n"
        "from engine import PRESETS, Game, fallback_action, observe\n"
        "from sdk.workers import Processes\n"
        "g = Game.new(PRESETS['classic'], 1, ('a', 'b', 'c'))\n"
        "while g.phase.name != 'PLAYING' or len(g.legal_actions()) < 2:\n"
        "    g.apply(fallback_action(g.legal_actions()))\n"
        "procs = Processes('printer.py:Printer', 1, 'printer')\n"
        "procs.wait_ready()\n"
        "bot = procs.make('m1')\n"
        "action, failed = bot.decide(observe(g, g.to_act), None)\n"
        "procs.shutdown()\n"
        "print(repr(failed), action, file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-1].startswith("None play "), out.stderr


def test_a_person_at_the_table_still_leaves_when_no_one_reads_the_table(tmp_path: Path) -> None:
    """Pinned with the fix above: `arena-bot try human | head -1` still leaves the match
    ("the output is gone") once its table finds no reader, rather than wait unseen for an
    answer (its table is written to the stream itself, not to the bot's prints' one). Its
    input ends too: "End of input: leaving the match", said on that stream, finds it gone
    whichever comes first; without the stream itself it was written nowhere, unsaid."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sdk.cli", "try", "human", "--vs", "heuristic,random"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = proc.stdout.readline()
        proc.stdout.close()  # the reader leaves; then the input ends, nothing typed
        _, err = proc.communicate(timeout=3 * GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert first.startswith(b"Match of classic"), first
    assert "human: the output is gone (Broken pipe): leaving the match" in err.decode(), err


def test_the_rehearsals_records_in_the_checkout_are_not_the_repositorys() -> None:
    """Defect: writing-a-bot.md's rehearsal runs `arena serve` in the checkout, whose default
    --record-dir is `records/` there: its records and the seed it drew (every hand of every
    match follows from it) were files git offered to commit, and one run's seed was
    committed (records/serve-20261206-122807-79c1.seed). `records/` is ignored now, as
    `runs/` and `out/` are, and no record directory's file is tracked."""
    import shutil
    import subprocess

    git = shutil.which("git")
    assert git is not None, "git runs the repository's own checks"
    tracked = subprocess.run(
        [git, "ls-files", "records", "*.seed"], cwd=ROOT, capture_output=True, text=True
    )
    assert tracked.returncode == 0, tracked.stderr
    assert tracked.stdout == "", tracked.stdout
    ignored = subprocess.run(
        [git, "check-ignore", "-q", "--no-index", "records/serve-20261207-053345-5653.seed"],
        cwd=ROOT,
    )
    assert ignored.returncode == 0  # (1: not ignored)
