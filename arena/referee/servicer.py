"""The gRPC servicer: thin; every decision is the :class:`~arena.referee.core.Referee`'s."""

from __future__ import annotations

from typing import Any

import grpc

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

    async def GetInfo(self, request: pb.GetInfoRequest | None, context: Any) -> pb.ServerInfo:
        if request is None:  # bytes that do not parse (see server._parse_info_request)
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                "could not parse the message as arena.v1.GetInfoRequest",
            )
        return self._referee.server_info()
