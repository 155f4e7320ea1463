"""Hostile round 16: below the game protocol (gRPC and HTTP/2 themselves, no token).

The referee's real server on a free port; clients are grpcio's own (a unary method called
as a streaming one) or a hand-made HTTP/2 connection (``tests/support/raw_h2.py``) for what
grpcio will not send. What was measured against `arena serve` with honest bots playing is in
docs/reliability.md ("Hostile round 16").
"""

from __future__ import annotations

import asyncio
import logging
import struct
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import no_error_logged  # noqa: F401 (a fixture, used by name)
from raw_h2 import END_STREAM, GOAWAY, HEADERS, RawH2, frame, grpc_message

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee import server as server_mod
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

GET_INFO = "/arena.v1.Arena/GetInfo"
CHECK = "/grpc.health.v1.Health/Check"
WATCH = "/grpc.health.v1.Health/Watch"


# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")


def _serve(body: Callable[[int], Coroutine[Any, Any, Any]]) -> Any:
    """``body(port)`` against a fresh referee's server; its result."""

    async def main() -> Any:
        ref = Referee(RefereeConfig())
        server, port = await start_server(ref)
        try:
            return await body(port)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


async def _status(call: Any) -> str:
    try:
        await call
        return "OK"
    except grpc.aio.AioRpcError as e:
        return f"{e.code().name}: {e.details()}"


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # (an async generator that sends no message)


@pytest.mark.parametrize("path", [GET_INFO, CHECK, WATCH])
def test_a_tokenless_call_that_ends_without_its_request_is_answered(path: str) -> None:
    """Defect: a GetInfo or health call whose stream ended without its request message (its
    headers with END_STREAM: grpcio sends that for a unary method called as a
    request-streaming one) got no status: grpc.aio returned without one, and gRPC core kept
    the stream for as long as the connection lived. 40,000 such calls over 8 connections,
    no token needed, took `arena serve` from 50 to 724 MB and held it. Each is refused at
    once now with INVALID_ARGUMENT naming what is missing."""

    async def body(port: int) -> tuple[str, str]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            if path == WATCH:
                watch = ch.stream_stream(path)(_nothing(), timeout=30)
                got = await _status(watch.read())
            else:
                got = await _status(ch.stream_unary(path)(_nothing(), timeout=30))
            info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=30)
            return got, info.server_version

    got, version = _serve(body)
    assert got == "INVALID_ARGUMENT: the call ended without its request message", got
    assert version  # the server still answers


def test_a_tokenless_call_whose_request_never_comes_is_counted_then_cut_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: a GetInfo whose request never came (headers only, the stream left open)
    waited as long as its connection lived, uncounted: nothing bounded how many one client
    held. Such a call now counts toward the per-address ``TOKENLESS_LIMIT`` as it starts,
    and is refused after ``TOKENLESS_REQUEST_S``."""
    monkeypatch.setattr(server_mod, "TOKENLESS_REQUEST_S", 0.5)
    monkeypatch.setattr(server_mod, "TOKENLESS_LIMIT", 2)
    monkeypatch.setattr(server_mod, "TOKENLESS_WINDOW_S", 60.0)

    async def body(port: int) -> tuple[list[str], str]:
        never = asyncio.Event()

        async def silent() -> AsyncIterator[bytes]:
            await never.wait()
            yield b""

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            await ch.channel_ready()  # (so that the calls reach the server in order)
            get_info = ch.stream_unary(GET_INFO)
            waiting = [get_info(silent(), timeout=30) for _ in range(2)]
            third = "OK"
            for _ in range(200):  # until the server has both waiting calls in hand
                third = await _status(pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest()))
                if third != "OK":
                    break
                await asyncio.sleep(0.01)
            return [await _status(c) for c in waiting], third

    ended, third = _serve(body)
    assert ended == ["INVALID_ARGUMENT: no request message came within 0.5 s"] * 2, ended
    assert third.startswith("RESOURCE_EXHAUSTED: more than 2 requests without a token"), third


@pytest.mark.parametrize("path", [GET_INFO, WATCH])
def test_a_message_whose_length_prefix_lies_gets_a_status(path: str) -> None:
    """The defect above from a hand-made HTTP/2 client: a message whose length prefix says
    1000 bytes, 3 sent, then END_STREAM, got no status ever. Ten such calls on one
    connection: each stream ends with trailers now."""

    def attack(port: int) -> set[int]:
        conn = RawH2(port)
        try:
            data = grpc_message(b"abc", length=1000)
            streams = {conn.call(path, data=data) for _ in range(10)}
            frames = conn.frames(30, until_ended=streams)
            return {f.stream for f in frames if f.kind == HEADERS and f.flags & END_STREAM}
        finally:
            conn.close()

    async def body(port: int) -> tuple[set[int], str]:
        ended = await asyncio.to_thread(attack, port)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=30)
        return ended, info.server_version

    ended, version = _serve(body)
    assert ended == set(range(1, 21, 2)), ended
    assert version


def test_calls_gRPC_core_refuses_itself_make_the_referee_log_nothing() -> None:
    """A compressed message naming an unknown ``grpc-encoding``, gzip that is not gzip, a
    compressed flag without an encoding: gRPC core answers INTERNAL itself, and the
    referee's read of the request then says EOF. Its refusal ("ended without its request
    message") then failed to send, and grpc.aio logged that as an ERROR with a traceback
    (2 of 90 such calls, each on a connection closed once answered, in one run; a race, so
    the unit test below makes it certain). Now the handler ends as cancelled: nothing
    logged (the autouse fixture), every call answered."""
    cases = [((b"grpc-encoding", b"zstdx"),), ((b"grpc-encoding", b"gzip"),), ()]

    def attack(port: int) -> int:
        ended = 0
        for _ in range(10):
            for extra in cases:
                conn = RawH2(port)
                try:
                    sid = conn.call(GET_INFO, extra=extra,
                                    data=grpc_message(b"abc", compressed=True))  # fmt: skip
                    frames = conn.frames(30, until_ended={sid})
                    ended += any(f.stream == sid and f.flags & END_STREAM for f in frames)
                finally:
                    conn.close()
        return ended

    async def body(port: int) -> int:
        ended = await asyncio.to_thread(attack, port)
        await asyncio.sleep(0.5)  # (the referee's side of the last calls)
        return ended

    assert _serve(body) == 30


def test_a_refusal_the_call_can_no_longer_take_ends_the_handler_as_cancelled() -> None:
    """What the test above races for, made certain: the refusal's send fails in gRPC core
    (``ExecuteBatchError``: the call has its status already). It must end the handler as
    cancelled, which grpc.aio logs at DEBUG, not raise the error, which it logs with a
    traceback."""
    from grpc._cython import cygrpc

    class Finished:
        async def abort(self, code: grpc.StatusCode, details: str) -> None:
            raise cygrpc.ExecuteBatchError('Failed "execute_batch"')

    why = server_mod._Unparsed("the call ended without its request message")
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(server_mod._refuse(Finished(), why))  # type: ignore[arg-type]


def test_metadata_that_is_not_utf8_is_a_warning_of_one_line_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a metadata value that is not UTF-8 (grpcio's client refuses to send one; any
    HTTP/2 client can) made grpc.aio log an ERROR with a traceback per value, for any
    caller, no token needed: 11,202 tracebacks (1.8 MB) in 3 s from one client. Now a
    warning of one line naming the value, at most 20 per 10 s, and the call is answered
    (an `authorization` that is not UTF-8 is an unknown token)."""

    def attack(port: int) -> int:
        conn = RawH2(port)
        try:
            streams = {conn.call(GET_INFO, extra=((b"x-note", b"\xff\xfe caf\xe9"),),
                                 data=grpc_message(b"")) for _ in range(30)}  # fmt: skip
            streams.add(conn.call("/arena.v1.Arena/Play",
                                  extra=((b"authorization", b"Bearer \xff\xfe"),)))  # fmt: skip
            frames = conn.frames(30, until_ended=streams)
            return len({f.stream for f in frames if f.kind == HEADERS and f.flags & END_STREAM})
        finally:
            conn.close()

    async def body(port: int) -> int:
        return await asyncio.to_thread(attack, port)

    assert _serve(body) == 31
    said = [r for r in caplog.records if "not UTF-8" in r.getMessage()]
    assert 1 <= len(said) <= 20, len(said)
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in said)
    assert any("b'\\xff\\xfe caf\\xe9'" in r.getMessage() for r in said), said
    assert not [r for r in caplog.records if "Invalid encoding" in r.getMessage()]


def test_arena_serve_keeps_gRPC_cores_info_lines_out_of_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: gRPC core logs one INFO line for every connection that sends a GOAWAY with
    an error code (any client, no token: 44,524 connections wrote 7.5 MB in 5 s).
    `arena serve` meant to turn those lines off (GRPC_VERBOSITY=ERROR), but set it after
    `arena.cli.options` had loaded gRPC: too late. 20 such connections, then a GetInfo:
    not a line of gRPC core's in the log."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
    from test_e2e_serve import _kill, _start

    monkeypatch.delenv("GRPC_VERBOSITY", raising=False)  # (this process set it: importing
    # arena.referee does, and the server inherits the environment)

    def goaways(port: int) -> None:
        for _ in range(20):
            conn = RawH2(port)
            conn.sock.sendall(frame(GOAWAY, 0, 0, struct.pack(">II", 0, 1)))  # PROTOCOL_ERROR
            conn.frames(0.2)
            conn.close()

    async def main() -> tuple[str, str]:
        proc, port = await _start(tmp_path)
        try:
            await asyncio.to_thread(goaways, port)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=30)
        finally:
            await _kill(proc)
        assert proc.stderr is not None
        return info.server_version, (await proc.stderr.read()).decode(errors="replace")

    version, log = asyncio.run(main())
    assert version
    assert "goaway" not in log.lower(), log[-2000:]


def test_arena_serve_takes_its_hard_limit_of_open_files(tmp_path: Path) -> None:
    """Defect: connections need no token and gRPC counts none per client address; at the
    soft limit of open files the server inherited (1,024 on most systems), that many
    connections that never finish their HTTP/2 preface kept every bot out until gRPC closed
    them, about 60 s later (with the limit at 600, 700 did it). `arena serve` raises its
    soft limit to the hard one: started with 256, it answers a GetInfo beside 400 such
    connections."""
    import resource
    import socket

    sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
    from test_e2e_serve import _kill, _start

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the hard limit of open files here is {hard}")

    async def main() -> tuple[str, str]:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))  # (the server inherits it)
        try:
            proc, port = await _start(tmp_path)
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        idle: list[socket.socket] = []
        try:
            limits = Path(f"/proc/{proc.pid}/limits").read_text()
            for _ in range(400):
                idle.append(socket.create_connection(("127.0.0.1", port)))
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                got = await _status(pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=20))
        finally:
            for s in idle:
                s.close()
            await _kill(proc)
        return got, next(ln for ln in limits.splitlines() if ln.startswith("Max open files"))

    got, limit = asyncio.run(main())
    assert got == "OK", got
    assert limit.split()[3] != "256", limit
