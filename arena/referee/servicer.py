"""The gRPC servicer: thin; every decision is the :class:`~arena.referee.core.Referee`'s."""

from __future__ import annotations

from typing import Any

from arena.referee.core import Referee
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

__all__ = ["ArenaServicer"]


class ArenaServicer(pb_grpc.ArenaServicer):
    """``arena.v1.Arena`` backed by a referee."""

    def __init__(self, referee: Referee) -> None:
        self._referee = referee

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        # Read/write style (context.read / context.write): the referee runs the stream.
        await self._referee.serve_stream(context)

    async def GetInfo(self, request: pb.GetInfoRequest, context: Any) -> pb.ServerInfo:
        # (bytes that do not parse are refused before: see server._parsing_refused)
        return self._referee.server_info()
