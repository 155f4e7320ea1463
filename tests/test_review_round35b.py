"""Review round 35b: a fresh reading of the late changes of 12-05 (the referee's stream
limit and streaming-served tokenless answers, the SDK's round-4 changes, the leaderboard
and web changes), each defect found pinned by a test that failed before its fix, and what
was checked without a defect."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

import sdk.client
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from sdk import Bot


class _Peers(pb_grpc.ArenaServicer):
    """An arena whose GetInfo keeps the peer (client address and port) of each call."""

    def __init__(self) -> None:
        self.peers: list[str] = []

    async def GetInfo(self, request: Any, context: Any) -> pb.ServerInfo:
        self.peers.append(context.peer())
        return pb.ServerInfo(server_version="x")


def test_bots_of_one_process_have_a_connection_each() -> None:
    """Defect: grpcio shares one connection between the channels of a process to the same
    address (its global subchannel pool), and the referee takes at most 100 streams on one
    connection (MAX_STREAMS_PER_CONNECTION, round 35): of 105 bots run in one process
    (run_async), 5 were never welcomed, their Play streams waiting for a free stream for
    ever. Each runner's channel has a connection of its own now."""

    async def main() -> list[str]:
        servicer = _Peers()
        server = grpc.aio.server()
        pb_grpc.add_ArenaServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        channels = [
            sdk.client.BotRunner(Bot, f"127.0.0.1:{port}", f"t{i}")._channel() for i in range(2)
        ]
        try:
            for channel in channels:
                await pb_grpc.ArenaStub(channel).GetInfo(pb.GetInfoRequest(), timeout=30)
        finally:
            for channel in channels:
                await channel.close()
            await server.stop(None)
        return servicer.peers

    peers = asyncio.run(main())
    assert len(peers) == 2
    assert peers[0] != peers[1], peers
