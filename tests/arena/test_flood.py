"""A bot that floods its stream with answers to nothing is cut off, and says why."""

from __future__ import annotations

import asyncio

import grpc

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from tests.support.core_internal import asking_again, core_internal
from tests.support.harness import welcomed_call


def test_a_flooding_stream_is_closed_with_resource_exhausted() -> None:
    async def flood() -> tuple[grpc.StatusCode, str, int]:
        ref = Referee(RefereeConfig(flood_limit=50, flood_window_s=60))
        ref.add_bot("flooder", "tok")
        server, port = await start_server(ref, port=0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                call = await welcomed_call(ch, "tok", "f")
                sent = 0
                try:
                    # one over the limit, then read: a client that keeps writing after the
                    # stream ended may see gRPC's own INTERNAL instead (docs/protocol.md)
                    for i in range(51):
                        await call.write(
                            pb.BotMessage(decision=pb.Decision(request_id=str(i), match_id="m"))
                        )
                        sent += 1
                    while await call.read() is not grpc.aio.EOF:
                        pass
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    pass
                return await call.code(), await call.details(), sent
        finally:
            await server.stop(0)

    async def main() -> tuple[grpc.StatusCode, str, int]:
        # (gRPC core's INTERNAL, the last write racing the refusal: again, a fresh referee)
        return await asking_again(flood, lambda r: core_internal(r[0], r[1], answered=True))

    code, details, sent = asyncio.run(main())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "more than 50 messages answering no pending request" in details
    assert sent == 51
