"""Hostile round 56: a replaced stream whose client reads nothing, then resets it.

Found by round 56's machine (its ``deaf`` move, at length): bot x opens a stream on a
connection whose window is 1 KiB and never reads it; the referee's writes to it wait on
HTTP/2 flow control. x then opens a new stream, which replaces the deaf one: its handler
waits a second for its writer, gives the write up, and ends the call with ``ABORTED``
("replaced by a newer stream"). That status waits behind the message nobody reads. When x
then resets the deaf call (its client cancels it, or closes its channel), gRPC core fails
the status; grpc.aio, unless it has already seen the reset, logged that as an ERROR with a
traceback ("ExecuteBatchError raised in core by servicer method"): one per such stream,
as often as the bot likes (each of the 2 here; 10 of 10 in a longer run). Now the referee
sends such a status itself and ends a call whose status can no longer go out as cancelled
(logged at DEBUG), as it does for the calls that need no token (``server._refuse``); a
client that reads at last still gets what was held, then that status.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import REPLACED
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.hostile.test_ahead_round54 import pass_always
from tests.support.harness import attach_in_process, errors_logged, until

ONE = dataclasses.replace(PRESETS["classic"], max_deals=5)
MD = (("authorization", "Bearer tok-x"),)
HELLO = pb.BotMessage(hello=pb.Hello(protocol_version=1))
#: A 1 KiB window, never widened: the referee's writes past it wait.
DEAF = (("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0))
ROUNDS = 2


def test_a_replaced_deaf_stream_reset_after_its_status_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> tuple[int, list[str], list[str | None], tuple[Any, str]]:
        # (every refusal answered: past the cap of 20 no more would fill the window)
        ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=0, max_strikes=1000,
                                    max_wrong_recorded=1000))  # fmt: skip
        attach_in_process(ref, ("h1", "h2"), pass_always(ref))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        good = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        session = ref.session("x")
        stuck = 0
        try:
            game = asyncio.create_task(ref.run_match("m", ONE, 5, ["x", "h1", "h2"]))
            for _ in range(ROUNDS):
                async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=DEAF) as ch:
                    deaf = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                    await deaf.write(HELLO)
                    # refusals (each with x's pending request's legal actions) past the window
                    for _ in range(20):
                        await deaf.write(pb.BotMessage(decision=pb.Decision(
                            request_id="999", match_id="m")))  # fmt: skip
                    await until(lambda: session.stream is not None, "x's stream", 30)
                    mine = session.stream
                    assert mine is not None
                    await until(lambda m=mine: m.written < m.queued, "a write held", 30)
                    stuck += 1
                    new = pb_grpc.ArenaStub(good).Play(metadata=MD)
                    await new.write(HELLO)
                    assert (await new.read()).WhichOneof("kind") == "welcome"
                    # the replaced stream's handler has given its writer up (1 s) and
                    # ended the call: its status waits behind the unread message
                    await until(lambda m=mine: m not in ref._handlers, "the handler's end", 30)
                    await asyncio.sleep(0.1)
                    deaf.cancel()
                new.cancel()
                await until(lambda: session.stream is None, "x gone", 30)
            # One more, which reads at last once replaced: it gets what was held, then its
            # status, as before
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=DEAF) as ch:
                deaf = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await deaf.write(HELLO)
                for _ in range(20):
                    await deaf.write(pb.BotMessage(decision=pb.Decision(
                        request_id="999", match_id="m")))  # fmt: skip
                await until(lambda: session.stream is not None, "x's stream", 30)
                mine = session.stream
                assert mine is not None
                await until(lambda: mine.written < mine.queued, "a write held", 30)
                new = pb_grpc.ArenaStub(good).Play(metadata=MD)
                await new.write(HELLO)
                assert (await new.read()).WhichOneof("kind") == "welcome"
                await until(lambda: mine not in ref._handlers, "the handler's end", 30)
                kinds: list[str | None] = []
                with contextlib.suppress(grpc.aio.AioRpcError):  # (its status, read below)
                    async for m in deaf:
                        kinds.append(m.WhichOneof("kind"))
                status = (await deaf.code(), await deaf.details())
                new.cancel()
            await asyncio.sleep(0.5)  # (grpc.aio's last callbacks of the reset calls)
            game.cancel()
            with pytest.raises(asyncio.CancelledError):
                await game
        finally:
            await ref.end_streams()
            await server.stop(1.0)
            await good.close()
        errors = [r.getMessage() for r in errors_logged(caplog.records)]
        return stuck, errors, kinds, status

    caplog.set_level(logging.DEBUG, logger="grpc._cython.cygrpc")
    stuck, errors, kinds, status = asyncio.run(main())
    assert stuck == ROUNDS
    assert errors == [], errors
    assert kinds[0] == "welcome" and "decision_rejected" in kinds, kinds
    assert status == (grpc.StatusCode.ABORTED, REPLACED), status
