"""A referee stream's gRPC context in memory: the part of ``grpc.aio.ServicerContext``
that ``Referee.serve_stream`` uses, for tests that drive the handler without gRPC (to open
a window a real race needs a loaded machine for). Subclasses stall a step of it."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb

__all__ = ["MemoryContext"]


class MemoryContext:
    """The bot's messages go into ``inbox`` (``grpc.aio.EOF`` ends them); what the referee
    writes is in ``sent``, its status in ``code`` and ``details``. Its token: ``tok-x``."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.sent: list[pb.ServerMessage] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", "Bearer tok-x"),)

    def peer(self) -> str:
        return "memory:x"

    async def read(self) -> Any:
        return await self.inbox.get()

    def add_done_callback(self, callback: Any) -> None:
        pass

    async def send_initial_metadata(self, metadata: Any) -> None:
        pass

    async def write(self, msg: pb.ServerMessage | bytes) -> None:
        # (bytes: a message as its wire bytes, a request or a batch; what a client parses)
        self.sent.append(pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details
