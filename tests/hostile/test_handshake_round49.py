"""Hostile round 49: a TCP connection that never finishes its handshake is let go.

Connections need no token. One that opens and never sends HTTP/2's preface held about
20 KB and a descriptor until keepalive's unanswered ping let it go (15 s), and one that
sent its preface a byte every few seconds about 60 s (gRPC's handshake timeout is 120 s by
default); the server now closes either after ``HANDSHAKE_TIMEOUT_MS`` (10 s; here 300 ms),
and a client that does its handshake, a bot, is served as before.
"""

from __future__ import annotations

import asyncio
import socket
import time

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee import server as server_mod
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


def _closed_within(port: int, bound_s: float) -> bool:
    """Whether the server closes a connection that never sends its preface within
    ``bound_s`` (it sends its own SETTINGS first, which is read and dropped)."""
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.settimeout(0.2)
        end = time.monotonic() + bound_s
        while time.monotonic() < end:
            try:
                if not c.recv(4096):
                    return True
            except TimeoutError:
                continue
            except OSError:  # (reset rather than closed: let go all the same)
                return True
    return False


def test_a_connection_stuck_in_its_handshake_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ("grpc.server_handshake_timeout_ms", server_mod.HANDSHAKE_TIMEOUT_MS) in (
        server_mod._OPTIONS
    )
    # (keepalive's pings off: a connection that answers none is let go after 15 s anyway,
    # as a dead peer, but one sending its preface a byte at a time held on for 60 s)
    patched = {"grpc.server_handshake_timeout_ms": 300, "grpc.keepalive_time_ms": 3_600_000}
    options = [(k, patched.get(k, v)) for k, v in server_mod._OPTIONS]
    monkeypatch.setattr(server_mod, "_OPTIONS", options)

    async def main() -> tuple[bool, str]:
        ref = Referee(RefereeConfig())
        server, port = await start_server(ref)
        try:
            # (a guard far above the 300 ms: without the option gRPC holds it 120 s)
            closed = await asyncio.to_thread(_closed_within, port, 20.0)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=20)
            return closed, info.server_version
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    closed, version = asyncio.run(main())
    assert closed
    assert version  # a client that does its handshake is served as before
