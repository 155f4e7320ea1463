"""Flakes, round 43: the arena's stop (SIGTERM) under load, and what its bots are told.

`test_faults_round37.py::test_sigterm_mid_match_with_a_db_...` once saw a bot never log
"the arena is stopping". Its cause, reproduced under load (2 of ~40 runs) and by a scratch
SIGSTOP: the bot asked for a decision wrote its answer as the arena's end arrived, and its
own gRPC replaced the arena's status by ``INTERNAL: Internal error from Core``
(grpc/grpc#36066, tests/support/core_internal.py); it took that for a lost connection, and
by its reconnect the arena's port was closed. Not the arena's doing: round 37's test now
accepts that line for the one bot asked. The other reading, a starved arena whose
wall-clock waits (``end_streams``' 2 s, ``server.stop``'s 1 s grace) run out before its
handlers send their statuses, is checked here: every bot is told. But a bot told that
reconnected while that stop's grace ran out had its new stream cut (``CANCELLED``), which
the SDK took for a final end: `arena-bot` exited, not waiting for the arena to come back.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path

import pytest

from arena.referee import Referee, RefereeConfig, start_server

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("a", "b", "c")
#: How long one turn of the arena's loop is held up while it stops (a starved process).
STALL_S = 0.5


def _token(name: str) -> str:
    return f"tok-{name * 8}"


def test_a_starved_arena_still_tells_every_bot_that_it_stops(tmp_path: Path) -> None:
    """Every turn of the arena's loop held up STALL_S while it stops (the streams ended,
    ``end_streams``' wait, ``server.stop``'s grace): the loop's clock runs past both waits,
    yet every connected bot (`arena-bot run`, the SDK) is told "the arena is stopping", not
    a lost connection (the waits are checked only after the loop has run what was ready:
    the streams' handlers). Defect: a bot that reconnected at once, told, had that stream
    cut by gRPC when the stop's grace ran out (``CANCELLED``), and exited ("the arena ...
    ended the stream: CANCELLED: CANCELLED", 3 runs in 3); it reconnects now, and stays up
    waiting for the arena to come back."""

    async def main() -> float:
        ref = Referee(RefereeConfig())
        for n in NAMES:
            ref.add_bot(n, _token(n))
        server, port = await start_server(ref)
        procs: list[asyncio.subprocess.Process] = []
        try:
            for n in NAMES:
                procs.append(await _bot(tmp_path, port, n))
            assert not await ref.wait_for_bots(NAMES, 60)
            loop = asyncio.get_running_loop()
            hogging = True

            def hog() -> None:  # (each turn of the loop runs it once)
                if hogging:
                    time.sleep(STALL_S)
                    loop.call_soon(hog)

            began = loop.time()
            loop.call_soon(hog)
            await ref.end_streams()  # as `arena serve` stops (arena/cli/serve.py)
            await server.stop(1.0)
            hogging = False
            took = loop.time() - began
            end = time.monotonic() + 60
            while not all("the arena is stopping" in _log(tmp_path, n) for n in NAMES):
                assert time.monotonic() < end, [_log(tmp_path, n)[-1500:] for n in NAMES]
                await asyncio.sleep(0.05)
            assert all(p.returncode is None for p in procs), [_log(tmp_path, n) for n in NAMES]
            return took
        finally:
            for p in procs:
                if p.returncode is None:
                    p.kill()
                await p.wait()
            await server.stop(None)

    took = asyncio.run(main())
    # The stall outlasted both waits (2 s, then 1 s): else this tested nothing.
    assert took > 3.0, took
    for n in NAMES:
        log = _log(tmp_path, n)
        assert "was lost" not in log and "Traceback" not in log, log
        assert "arena-bot:" not in log, log  # (its last words: it exited)


async def _bot(tmp: Path, port: int, name: str) -> asyncio.subprocess.Process:
    """`arena-bot run random` as bot ``name``, its output in ``tmp/<name>.log``."""
    argv = ["run", "random", "--arena", f"127.0.0.1:{port}", "--token", _token(name),
            "--log-level", "info", "--retry-for", "120"]  # fmt: skip
    with open(tmp / f"{name}.log", "wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from sdk.cli import main; main()", *argv, stdout=out,
            stderr=asyncio.subprocess.STDOUT, cwd=str(tmp),
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip


def _log(tmp: Path, name: str) -> str:
    return (tmp / f"{name}.log").read_text(errors="replace")


def test_a_handler_cancelled_outside_grpc_aio_s_handling_is_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """hostile round 42's SIGTERM test beside a bot that reads nothing failed once in a
    clean-clone CI run: at the server's stop (its 1 s grace over) grpc.aio cancelled that
    stream's handler outside its own handling and logged "Exception not handled by
    _handle_exceptions in servicer method [/arena.v1.Arena/Play]" as an ERROR with a
    ``CancelledError`` traceback. A cancellation inside that handling it logs at DEBUG
    itself: the server's filter (installed by ``start_server``) makes both the same. Other
    exceptions there stay ERRORs with their tracebacks."""

    async def main() -> None:
        server, _ = await start_server(Referee(RefereeConfig()))
        await server.stop(None)

    asyncio.run(main())
    # (only what log_unhandled logs counts: after an earlier test in the same process left
    # the root logger at DEBUG, `arena tournament -vv`'s, as `make test TEST_JOBS=1` runs
    # them, caplog held the server's own DEBUG lines of its start and stop)
    caplog.clear()
    grpc_log = logging.getLogger("grpc._cython.cygrpc")
    text = "Exception not handled by _handle_exceptions in servicer method [%s]"

    def log_unhandled(e: BaseException) -> None:
        try:
            raise e
        except BaseException:
            grpc_log.exception(text, "/arena.v1.Arena/Play")

    with caplog.at_level(logging.INFO, logger="grpc._cython.cygrpc"):
        log_unhandled(asyncio.CancelledError())
    assert caplog.records == []
    with caplog.at_level(logging.DEBUG, logger="grpc._cython.cygrpc"):
        log_unhandled(asyncio.CancelledError())
    (rec,) = caplog.records
    assert rec.levelno == logging.DEBUG and rec.exc_info is None
    assert "cancelled" in rec.getMessage() and "/arena.v1.Arena/Play" in rec.getMessage()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="grpc._cython.cygrpc"):
        log_unhandled(ValueError("a bug"))
    (rec,) = caplog.records
    assert rec.levelno == logging.ERROR and rec.exc_info is not None
    assert rec.getMessage() == text % "/arena.v1.Arena/Play"
