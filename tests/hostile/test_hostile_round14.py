"""Hostile round 14: what the earlier rounds left around the arena's stop, batches,
reconnects and the time bank. Each test fails on the code before its fix."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import welcomed_call

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

HELLO = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))


async def _open_after_stop(final: bool) -> tuple[str, str, list[str]]:
    """A welcomed stream, then ``end_streams(final=final)``, then a new stream of the same
    bot: its status and details, and the kinds of what it was sent."""
    ref = Referee(RefereeConfig())
    ref.add_bot("x", "tok-x")
    server, port = await start_server(ref)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            first = await welcomed_call(ch, "tok-x", "x")
            await ref.end_streams("the tournament is over" if final else "the arena is stopping",
                                  final=final)  # fmt: skip
            assert await first.code() == (grpc.StatusCode.OK if final else
                                          grpc.StatusCode.UNAVAILABLE)  # fmt: skip
            # The server is still up (serve and the runner stop it after this returns): a bot
            # that reconnects at once, or while a slow stream keeps end_streams waiting.
            call: Any = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-x"),))
            kinds: list[str] = []
            try:
                await call.write(HELLO)
                while (msg := await call.read()) is not grpc.aio.EOF:
                    kinds.append(msg.WhichOneof("kind"))
                    if len(kinds) == 1:  # (welcomed: the server's stop ends it below)
                        await server.stop(1.0)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass
            return (await call.code()).name, await call.details(), kinds
    finally:
        await server.stop(None)


@pytest.mark.parametrize("final", [False, True])
def test_a_stream_opened_while_the_arena_stops_is_refused_as_the_others_were(final: bool) -> None:
    """Defect: ``end_streams`` ended the open streams, but a stream opened after it, while
    the server was still up (a bot reconnecting at once, or in the up to 2 s a slow stream
    kept ``end_streams`` waiting), was welcomed and resumed its seats; the server's stop
    then cut it with UNAVAILABLE "Cancelling all calls". After a final end (a tournament
    over, serve's ``--matches`` played), that bot was so told to reconnect, not to stop:
    the SDK retried for ``--retry-for`` and exited with an error. Now it gets what the
    others got, before any Welcome: OK, or UNAVAILABLE "the arena is stopping"."""
    code, details, kinds = asyncio.run(_open_after_stop(final))
    assert kinds == [], kinds
    if final:
        assert code == "OK"  # (gRPC carries no details with an OK status)
    else:
        assert (code, details) == ("UNAVAILABLE", "the arena is stopping")
