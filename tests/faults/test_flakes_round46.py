"""Flakes, round 46: a stream saying Hello as the arena stops was attached after the stop.

hostile round 44's flood of reset streams around the stop failed a loaded clean-clone run:
after ``end_streams`` and ``streams_settled`` the referee still had a stream attached and
its handler running (``attached 1, handlers 1``). The cause was the referee's: a stream whose
Hello had been read was ended by ``end_streams`` (as the reserved one, still saying Hello)
while its handler awaited ``send_initial_metadata``; the handler went on to welcome it and
attach it, resuming its bot's seats after the stop had begun and after ``end_streams`` had
stopped waiting for attached streams (it had none then). It is now refused there, with the
stop's status, as one ending before its Hello is. Made to happen in memory: the headers'
send waits until ``end_streams`` has run (the real race needs a loaded machine).
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from arena.referee import Referee, RefereeConfig
from arena.v1 import arena_pb2 as pb
from tests.support.memory_context import MemoryContext


class _Context(MemoryContext):
    """:class:`MemoryContext` whose ``send_initial_metadata`` waits for ``gate``."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.in_headers = asyncio.Event()

    async def send_initial_metadata(self, metadata: Any) -> None:
        self.in_headers.set()
        await self.gate.wait()


def test_a_stream_ended_by_the_stop_while_sending_its_headers_is_refused_not_attached() -> None:
    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(reconnect_grace_s=60))
        ref.add_bot("x", "tok-x")
        ctx = _Context()
        handler = asyncio.create_task(ref.serve_stream(ctx))
        ctx.inbox.put_nowait(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
        await asyncio.wait_for(ctx.in_headers.wait(), 30)  # its Hello read
        session = ref.session("x")
        assert session.reserved is not None and session.stream is None
        await asyncio.wait_for(ref.end_streams(), 30)
        ctx.gate.set()
        ctx.inbox.put_nowait(grpc.aio.EOF)  # (the handler ends whatever it did)
        await asyncio.wait_for(handler, 30)
        return {
            "welcomes": session.welcomes,
            "stream": session.stream,
            "attached": ref._attached,
            "handlers": len(ref._handlers),
            "sent": [m.WhichOneof("kind") for m in ctx.sent],
            "status": (ctx.code, ctx.details),
        }

    out = asyncio.run(main())
    # (was: welcomed and attached after the stop began, 1 welcome, a Welcome sent)
    assert out["welcomes"] == 0 and out["stream"] is None, out
    assert out["attached"] == 0 and out["handlers"] == 0, out
    assert out["sent"] == [], out
    assert out["status"] == (grpc.StatusCode.UNAVAILABLE, "the arena is stopping"), out
