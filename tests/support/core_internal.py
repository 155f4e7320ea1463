"""gRPC core's own INTERNAL on a raw Play call, and asking again on it.

A bug of grpc's Python aio client (grpc/grpc#36066, fixed by PR #43486, not released): when
the server ends a stream with a status while the client's ``call.write(...)`` is still in
flight, the client may replace the server's status by ``INTERNAL: Internal error from Core``
(a failed ``SendMessageOperation``). The referee never sends INTERNAL: a test that writes on
a call the referee may end (a refusal, a stop, a takeover) and then checks the status opens
the call again on that INTERNAL, as a real client (the SDK) would, or, where asking again
would change what is tested, takes it for the status it replaced, saying so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

__all__ = ["CORE_INTERNAL", "TRIES", "asking_again", "core_internal"]

T = TypeVar("T")

CORE_INTERNAL = "Internal error from Core"
TRIES = 8


def core_internal(code: grpc.StatusCode | str, details: str | None, *, answered: bool) -> bool:
    """Whether a call's end (``code``, by value or name, and ``details``) is the client
    library's INTERNAL: one saying so, or, before any message was read (``answered``
    false), any INTERNAL (the referee sends none)."""
    name = code if isinstance(code, str) else code.name
    return name == "INTERNAL" and (not answered or (details or "").startswith(CORE_INTERNAL))


async def asking_again(
    attempt: Callable[[], Awaitable[T]], internal: Callable[[T], bool], tries: int = TRIES
) -> T:
    """``await attempt()`` again (after a short sleep) while ``internal`` says its result
    ended in gRPC core's INTERNAL, ``tries`` times at most: the last result."""
    for _ in range(tries - 1):
        got = await attempt()
        if not internal(got):
            return got
        await asyncio.sleep(0.1)
    return await attempt()
