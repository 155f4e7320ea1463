"""Hostile round 29: raw clients (grpcio's, and the hand-made HTTP/2 one of
``tests/support/raw_h2.py``) against the referee's real server on a free port, in this
process."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee import server as server_mod
from arena.v1 import arena_pb2 as pb
from tests.support.harness import errors_logged, no_error_logged  # noqa: F401 (a fixture)
from tests.support.raw_h2 import (
    DATA,
    END_STREAM,
    HEADERS,
    PREFACE,
    SETTINGS,
    Frame,
    NoWindow,
    RawH2,
    frame,
    grpc_message,
)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

GET_INFO = "/arena.v1.Arena/GetInfo"
_HELLO = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
WATCH = "/grpc.health.v1.Health/Watch"


class _From(RawH2):
    """A hand-made HTTP/2 connection to ``127.0.0.1:port`` from the local address
    ``source`` (any of 127.0.0.0/8 is this machine's)."""

    def __init__(self, port: int, source: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), 10, (source, 0))
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.next_stream = 1
        self._buffer = b""


def _raw_call(port: int, source: str, path: str) -> list[Frame]:
    """One call of ``path`` (an empty request, the stream left open) from ``source``: the
    frames of its stream, until it ends or its first message came."""
    conn = _From(port, source)
    try:
        sid = conn.call(path, data=grpc_message(b""), end=False)
        got: list[Frame] = []
        for _ in range(100):
            got += [f for f in conn.frames(0.3) if f.stream == sid]
            if any(f.kind == DATA for f in got) or any(f.flags & END_STREAM for f in got):
                return got
        return got
    finally:
        conn.close()


def _answered(frames: list[Frame]) -> bool:
    return any(f.kind == DATA for f in frames)


def _refusal(frames: list[Frame]) -> bytes:
    """The trailers of a call refused without an answer (gRPC core writes them as HPACK
    literals: the status text is there as sent)."""
    assert not _answered(frames), frames
    ends = [f for f in frames if f.kind == HEADERS and f.flags & END_STREAM]
    assert ends, frames
    return ends[-1].payload


def _serve(body: Any) -> Any:
    async def main() -> Any:
        ref = Referee(RefereeConfig())
        server, port = await start_server(ref)
        try:
            return await body(port)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


def test_the_per_address_caps_count_a_host_not_each_of_its_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: the caps on calls that need no token (``MAX_OPEN_CALLS_PER_ADDRESS`` open
    Watch or reflection calls, ``TOKENLESS_LIMIT`` requests per window) counted each
    address apart, so a client holding several (every loopback address is this machine's;
    an IPv6 host is given a /64 and picks addresses in it at will) had the caps as many
    times over: from 127.0.0.2 the third Watch of a cap of 2 was answered, as was the
    third GetInfo of a limit of 2. ``arena web`` counted them as one since its own audit;
    the referee now counts by the same key (every loopback address as one, an IPv6 address
    by its /64), and its refusal says so."""
    monkeypatch.setattr(server_mod, "MAX_OPEN_CALLS_PER_ADDRESS", 2)

    async def watches(port: int) -> tuple[list[int], list[Frame]]:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            calls = [stub.Watch(health_pb2.HealthCheckRequest()) for _ in range(2)]
            try:
                first = [(await c.read()).status for c in calls]
                third = await asyncio.to_thread(_raw_call, port, "127.0.0.2", WATCH)
            finally:
                for c in calls:
                    c.cancel()
            return first, third

    first, third = _serve(watches)
    assert first == [1, 1]  # SERVING
    said = _refusal(third)
    assert b"2 streaming calls without a token" in said, said
    assert b"(every loopback address counts as one)" in said, said

    monkeypatch.setattr(server_mod, "TOKENLESS_LIMIT", 2)
    monkeypatch.setattr(server_mod, "TOKENLESS_WINDOW_S", 60.0)

    async def get_infos(port: int) -> list[list[Frame]]:
        return [
            await asyncio.to_thread(_raw_call, port, source, GET_INFO)
            for source in ("127.0.0.1", "127.0.0.2", "127.0.0.3")
        ]

    one, two, three = _serve(get_infos)
    assert _answered(one) and _answered(two)
    said = _refusal(three)
    assert b"more than 2 requests without a token" in said, said
    assert b"(every loopback address counts as one)" in said, said


@pytest.mark.parametrize(
    ("peers", "key", "shown"),
    [
        # an IPv6 host's addresses: one /64 (gRPC writes the brackets %-encoded)
        (("ipv6:%5B2001:db8::1%5D:5000", "ipv6:%5B2001:db8::ffff:1:2%5D:41000"),
         "2001:db8::/64", "ipv6:[2001:db8::1]"),
        (("ipv4:127.0.0.1:5000", "ipv4:127.9.9.9:6000", "ipv6:%5B::1%5D:7000"),
         "loopback", "ipv4:127.0.0.1"),
        (("ipv4:192.0.2.7:5000",), "192.0.2.7", "ipv4:192.0.2.7"),
    ],
)  # fmt: skip
def test_a_caller_is_counted_by_its_host(peers: tuple[str, ...], key: str, shown: str) -> None:
    """The key of the caps above for gRPC's peer strings, and the address a refusal names
    (``ipv6:[::1]``, not gRPC's ``ipv6:%5B::1%5D``); another /64 is another client."""

    class Context:
        def __init__(self, peer: str) -> None:
            self._peer = peer

        def peer(self) -> str:
            return self._peer

    got = [server_mod._client(Context(p)) for p in peers]
    assert {k for k, _ in got} == {key}, got
    assert got[0][1] == shown
    other = server_mod._client(Context("ipv6:%5B2001:db8:0:1::1%5D:5000"))[0]
    assert other == "2001:db8:0:1::/64" != key


def test_streams_replaced_while_their_welcome_cannot_be_written_log_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot whose connection grants its streams no window, and answers pings (so
    that keepalive never ends it), opened stream after stream of its token: each new one
    replaced the last, whose Welcome was still waiting for window, and each replaced
    stream made grpc.aio log an ERROR with a traceback (its status went out with the call's
    initial metadata a second time: GRPC_CALL_ERROR_TOO_MANY_OPERATIONS), up to
    ``reconnect_limit`` a window for as long as the bot liked (3 tracebacks a second at the
    defaults). The referee now sends the initial metadata (headers: no window needed) before
    the first message, so the status needs none. Left: each such call stays in gRPC, its
    status behind the message nobody reads, until the connection closes (at most
    ``MAX_OPEN_STREAMS_PER_BOT`` of one token: round 30)."""

    async def main() -> tuple[int, list[str]]:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        conn = await asyncio.to_thread(NoWindow, port)
        try:
            session = ref.session("x")
            for k in range(1, 4):
                await asyncio.to_thread(conn.play, "tok-x", _HELLO)
                for _ in range(1000):  # until this one is welcomed (and the last replaced)
                    if session.welcomes == k:
                        break
                    await asyncio.sleep(0.01)
            for _ in range(1000):  # until the replaced streams' handlers have returned
                if ref._attached == 1:
                    break
                await asyncio.sleep(0.01)
            errors = [r.getMessage() for r in errors_logged(caplog.records)]
            return session.welcomes, errors
        finally:
            await ref.end_streams()
            await server.stop(1.0)
            await asyncio.to_thread(conn.close)

    caplog.set_level(logging.WARNING)
    welcomes, errors = asyncio.run(main())
    assert welcomes == 3
    assert errors == [], errors
