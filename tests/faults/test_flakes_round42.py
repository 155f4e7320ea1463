"""Flakes round 42: test_stream_reset_round42's closed channel taken for leaving, now and
then, under load ("the stopping arena did not wait for x", 1 run in ~70).

The cause was the referee's: grpc.aio's cancellation of a ``Play`` handler that had read
the reset call's EOF could land while the handler waited for its writer, and stop there,
taken by ``asyncio.wait_for`` (which returns the writer's result when the writer ends in
the same step) or by the wait's own ``except``. The settle, which waits for that very
cancellation, then waited in vain and took the reset for the bot leaving: the match's end
it may not have read was not waited for. Here the cancellation is made to land in that
step, in memory (the real race needs a loaded machine).
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, core, sessions
from arena.v1 import arena_pb2 as pb
from tests.support.memory_context import MemoryContext


class _Context(MemoryContext):
    """:class:`MemoryContext` whose writes, once ``stuck``, never end (a client that reads
    nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.stuck = False

    async def write(self, msg: pb.ServerMessage) -> None:
        if self.stuck:
            await asyncio.Event().wait()
        await super().write(msg)


async def _until(cond: Any) -> None:
    while not cond():
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("writer_done", [True, False])
def test_a_reset_whose_cancellation_lands_in_the_writer_s_wait_is_lost_not_left(
    monkeypatch: pytest.MonkeyPatch, writer_done: bool
) -> None:
    """Defect: EOF read, then grpc.aio's cancellation while the handler waited for its
    writer (ending in that step, or not yet): the cancellation stopped there, and the
    stream was taken for left after the settle (its match's end not waited for) or, the
    writer still busy, lost but its handler still waited out the settle and returned as
    if not cancelled. Now the stream is lost and its handler ends as cancelled at once."""
    monkeypatch.setattr(core, "CORE_END_SETTLE_S", 30.0)  # (the settle is not waited out)

    async def main() -> tuple[list[str], bool, list[str]]:
        ref = Referee(RefereeConfig(reconnect_grace_s=60))
        ref.add_bot("x", "tok-x")
        ctx = _Context()
        handler = asyncio.create_task(ref.serve_stream(ctx))
        ctx.inbox.put_nowait(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
        session = ref.session("x")
        await asyncio.wait_for(_until(lambda: session.connected and ctx.sent), 30)
        end = pb.MatchEnded(match_id="m", result=pb.MatchResult(reason="max_deals"))
        session.send_end("m", pb.ServerMessage(match_ended=end))
        await asyncio.wait_for(_until(lambda: len(ctx.sent) == 2), 30)
        if not writer_done:
            ctx.stuck = True
            session.send(pb.ServerMessage())  # (the writer is busy with it for ever)
        detach = sessions.BotSession.detach

        def detach_then_reset(self: Any, *args: Any, **kwargs: Any) -> None:
            # Right after the handler closed the stream (its writer wakes in the next
            # step) and before it waits for the writer: the cancellation comes in the
            # step the writer ends in.
            detach(self, *args, **kwargs)
            asyncio.get_running_loop().call_soon(handler.cancel)

        monkeypatch.setattr(sessions.BotSession, "detach", detach_then_reset)
        ctx.inbox.put_nowait(grpc.aio.EOF)  # (a reset call reads as EOF first)
        await asyncio.wait((handler,), timeout=20)
        return (
            ref.away_with_results(),
            handler.cancelled(),
            [m.match_ended.match_id for m in ctx.sent if m.HasField("match_ended")],
        )

    away, cancelled, ends = asyncio.run(main())
    assert ends == ["m"]
    assert away == ["x"], away  # (was [] with the writer done: taken for leaving)
    assert cancelled  # (was neither: still in its 30 s settle)
