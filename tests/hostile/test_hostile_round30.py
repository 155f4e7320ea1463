"""Hostile round 30: one token's ``Play`` calls that its client never lets end, against
the referee's real server on a free port, in this process."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest

from arena.protocol import RETRY_AFTER_MS
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import MAX_OPEN_STREAMS_PER_BOT, OPEN_STREAMS_RETRY_MS
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.support.harness import no_error_logged, until  # noqa: F401 (a fixture)
from tests.support.raw_h2 import NoWindow

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

_TOKEN = (("authorization", "Bearer tok-x"),)
_HELLO = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()


def test_a_token_cannot_pile_up_calls_its_client_never_lets_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot whose connection grants its streams no flow-control window (and
    answers pings, so keepalive never ends it) opened stream after stream of its token;
    each new one replaced the last, whose status could not go out behind its unwritten
    Welcome, so gRPC kept every replaced call (~20 KB and a task or two) until the
    connection closed: at ``reconnect_limit`` (30 per 10 s) about 200 MB an hour of the
    referee's memory, from one valid token. A bot now holds at most
    ``MAX_OPEN_STREAMS_PER_BOT`` calls open, ended ones counted until gRPC finishes them;
    the next is refused with RESOURCE_EXHAUSTED and ``retry-after-ms``, and once the
    client lets them go the bot is let in again."""

    async def main() -> None:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        conn = await asyncio.to_thread(NoWindow, port)
        session = ref.session("x")
        try:
            for k in range(1, MAX_OPEN_STREAMS_PER_BOT + 1):
                await asyncio.to_thread(conn.play, "tok-x", _HELLO)
                await until(lambda k=k: session.welcomes == k, f"stream {k} welcomed")
            assert session.open_calls == MAX_OPEN_STREAMS_PER_BOT
            sid = await asyncio.to_thread(conn.play, "tok-x", _HELLO)
            await until(lambda: conn.ended(sid), "the stream over the cap refused")
            trailers = conn.ended(sid)[-1].payload
            assert b"grpc-status" in trailers and b"8" in trailers  # RESOURCE_EXHAUSTED
            assert f"has {MAX_OPEN_STREAMS_PER_BOT} streams open".encode() in trailers
            assert RETRY_AFTER_MS.encode() in trailers
            assert str(OPEN_STREAMS_RETRY_MS).encode() in trailers
            assert session.welcomes == MAX_OPEN_STREAMS_PER_BOT  # (the live one stays)
            assert session.stream is not None
        finally:
            await asyncio.to_thread(conn.close)
        try:
            # The client gone, gRPC finishes its calls: the bot may come back.
            await until(lambda: session.open_calls == 0, "the closed client's calls done")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.ArenaStub(channel).Play(metadata=_TOKEN)
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                first = await call.read()
                assert first.WhichOneof("kind") == "welcome"
                call.cancel()
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    caplog.set_level(logging.WARNING)
    asyncio.run(main())


def test_an_honest_bot_reconnecting_many_times_is_never_held_by_the_cap() -> None:
    """The count goes down as gRPC finishes each call: a bot that opens, uses and ends
    three times ``MAX_OPEN_STREAMS_PER_BOT`` streams one after another (a flaky network)
    is welcomed every time, and holds no call open at the end."""

    async def main() -> int:
        ref = Referee(RefereeConfig(reconnect_limit=1000))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        session = ref.session("x")
        welcomed = 0
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.ArenaStub(channel)
                for _ in range(3 * MAX_OPEN_STREAMS_PER_BOT):
                    call = stub.Play(metadata=_TOKEN)
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                    first = await call.read()
                    welcomed += first.WhichOneof("kind") == "welcome"
                    call.cancel()
            await until(lambda: session.open_calls == 0, "every call done")
            return welcomed
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    assert asyncio.run(main()) == 3 * MAX_OPEN_STREAMS_PER_BOT
