"""An organiser stops `arena serve` beside a frozen bot, through the CLI (docs/referee.md,
"Stopping"; docs/protocol.md, how a bot leaves and comes back).

`arena serve --tokens ... --db ...` with three `arena-bot run` bots; one bot is SIGSTOPped
(frozen: it reads nothing) mid-match and the arena is sent SIGTERM. What the docs promise:
the stop ends (exit 0, no ERROR or traceback on its stderr), the match under way is
recorded as interrupted (`arena replay FILE --check` says so) and stored nowhere, the bots
not frozen are told the match was interrupted and that the arena stops, and they wait for
it. The same command started again on the same `--db` and port takes them back: the frozen
bot, continued, learns that its match was interrupted (from the stop's own messages, or
from the new arena, which answers the match its Hello still holds as running), and the
three play the new run's match, after which (`--matches 1`) they exit 0. The in-process and
raw-client tests of the stop (tests/hostile, tests/faults) drive the referee directly;
this one runs the commands an organiser pastes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from core_internal import CORE_INTERNAL

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("ann", "bob", "cid")
DEADLINE_S = 120.0  # generous: the machine is shared

#: A bot slow enough (a few ms a decision) that a match lasts while the test acts on it.
SLOW_BOT = """
import time
from bots.random_bot import RandomBot

class Slow(RandomBot):
    def act(self, view):
        time.sleep(0.01)
        return super().act(view)
"""

#: What a bot logs when its stream's end is its own gRPC's INTERNAL, not the arena's status
#: (grpc/grpc#36066: the arena's end raced the decision it was writing; tests/support/
#: core_internal.py). It reconnects all the same.
CORE_INTERNAL_LOST = f"was lost: {CORE_INTERNAL[0].lower()}{CORE_INTERNAL[1:]}"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _wait_for(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _log(tmp: Path, name: str) -> str:
    return (tmp / f"{name}.log").read_text(errors="replace")


def _last_lines(tmp: Path) -> dict[str, dict[str, object]]:
    """match id -> the last line of its record file (``{}`` while one is being written)."""
    out: dict[str, dict[str, object]] = {}
    for f in sorted((tmp / "rec").glob("*.jsonl")):
        lines = f.read_text().splitlines()
        try:
            out[f.stem] = json.loads(lines[-1]) if lines else {}
        except json.JSONDecodeError:
            out[f.stem] = {}
    return out


def _serve(tmp: Path, procs: list[subprocess.Popen[str]], port: int, *extra: str,
           err: str) -> tuple[subprocess.Popen[str], int, str]:  # fmt: skip
    """``arena serve`` on ``port`` (0: a free one); its port and match-id prefix, once said."""
    argv = [sys.executable, "-c", "from arena.cli import main; main()", "serve",
            "--tokens", "tokens.toml", "--port", str(port), "--db", "results.sqlite",
            "--record-dir", "rec", *extra]  # fmt: skip
    with open(tmp / err, "w") as f:
        proc = subprocess.Popen(argv, cwd=tmp, env=_env(), stdout=subprocess.PIPE,
                                stderr=f, text=True)  # fmt: skip
    procs.append(proc)
    assert proc.stdout is not None
    bound = None
    while True:
        line = proc.stdout.readline()
        assert line, (tmp / err).read_text()
        if line.startswith("port "):
            bound = int(line.split()[1])
        if line.startswith("match ids "):
            assert bound is not None
            return proc, bound, line.split()[2].rstrip(",").removesuffix("00000")


def test_a_frozen_bot_across_the_stop_comes_back_to_the_next_run(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    try:
        _organise(tmp_path, procs)
    finally:
        for p in procs:  # (a frozen one would not die at once)
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGCONT)


def _organise(tmp: Path, procs: list[subprocess.Popen[str]]) -> None:
    (tmp / "tokens.toml").write_text("[bots]\n" + "".join(f'{n} = "{n}-token-44"\n' for n in NAMES))
    (tmp / "tokens.toml").chmod(0o600)
    (tmp / "slow.py").write_text(SLOW_BOT)
    serve, port, _ = _serve(tmp, procs, 0, "--drain-s", "0", "--max-deals", "400",
                            "--seed", "44", err="serve1.err")  # fmt: skip
    bots = {}
    for n in NAMES:
        with open(tmp / f"{n}.log", "w") as out:
            bots[n] = subprocess.Popen(
                [sys.executable, "-c", "from sdk.cli import main; main()", "run", "slow.py:Slow",
                 "--arena", f"127.0.0.1:{port}", "--token", f"{n}-token-44",
                 "--retry-for", str(DEADLINE_S)],
                cwd=tmp, env=_env(), stdout=out, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
        procs.append(bots[n])

    # A match under way, every seat in it: its record has a few lines past its start.
    def under_way() -> bool:
        files = list((tmp / "rec").glob("*.jsonl"))
        return (
            len(files) == 1
            and files[0].read_text().count("\n") > 5
            and all(f"match {files[0].stem} started" in _log(tmp, n) for n in NAMES)
        )

    _wait_for("a match under way", under_way)
    frozen = NAMES[2]
    bots[frozen].send_signal(signal.SIGSTOP)
    serve.send_signal(signal.SIGTERM)
    out, _ = serve.communicate(timeout=DEADLINE_S)
    err = (tmp / "serve1.err").read_text()
    assert serve.returncode == 0, err
    assert "ERROR" not in err and "Traceback" not in err, err
    assert "1 interrupted by the stop (recorded as interrupted, no result)" in out, out

    ((lost, last),) = _last_lines(tmp).items()
    assert last.get("type") == "interrupted", last
    check = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "replay",
         str(tmp / "rec" / f"{lost}.jsonl"), "--check"],
        cwd=tmp, env=_env(), capture_output=True, text=True, timeout=DEADLINE_S,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "interrupted in deal" in check.stdout and "the referee was stopped" in check.stdout

    # The bots that were not frozen: told the match was interrupted, and that the arena
    # stops (or, the one writing a decision then, its own gRPC's INTERNAL instead); they
    # wait for it to come back.
    for n in NAMES[:2]:
        _wait_for(
            f"{n} told the arena stops",
            lambda n=n: (
                "the arena is stopping" in _log(tmp, n) or CORE_INTERNAL_LOST in _log(tmp, n)
            ),
        )
        # (one whose gRPC replaced the arena's end by INTERNAL lost the interruption with
        # it: the next run tells it, asserted below)
        log = _log(tmp, n)
        assert f"match {lost} was interrupted by the arena" in log or CORE_INTERNAL_LOST in log, log
        assert bots[n].poll() is None, _log(tmp, n)
    told = [n for n in NAMES[:2] if "the arena is stopping" in _log(tmp, n)]
    assert told, [_log(tmp, n)[-1500:] for n in NAMES[:2]]

    # The same command again, on the port the bots know; continued, the frozen bot comes
    # back too, and learns (here or from the new arena) that its match was interrupted.
    bots[frozen].send_signal(signal.SIGCONT)
    serve2, _, prefix = _serve(tmp, procs, port, "--max-deals", "2", "--matches", "1",
                               "--seed", "45", err="serve2.err")  # fmt: skip
    for n in NAMES:
        assert bots[n].wait(timeout=DEADLINE_S) == 0, _log(tmp, n)[-2000:]
        log = _log(tmp, n)
        assert f"match {prefix}00000 started" in log and f"match {prefix}00000 ended" in log, log
        assert f"match {lost} was interrupted by the arena" in log, log
    out2, _ = serve2.communicate(timeout=DEADLINE_S)
    err2 = (tmp / "serve2.err").read_text()
    assert serve2.returncode == 0 and "1 match(es) played" in out2, out2 + err2
    assert "ERROR" not in err2 and "Traceback" not in err2, err2

    # Stored: the second run's match; the interrupted one nowhere (`arena replay --list`).
    listed = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "replay", "--list",
         "--db", "results.sqlite"],
        cwd=tmp, env=_env(), capture_output=True, text=True, timeout=DEADLINE_S,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert f"{prefix}00000" in listed.stdout and lost not in listed.stdout, listed.stdout
