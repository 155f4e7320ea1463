"""Hostile round 56: ``authorization`` metadata no grpcio client sends, over raw HTTP/2.

docs/protocol.md ("Auth"): the value is the word ``Bearer`` (any case), one space, the
token; spaces and tabs around the token are ignored, the token itself compared exactly; of
several ``authorization`` entries the first ``Bearer`` one counts. grpcio refuses a tab or
a non-ASCII character in metadata on the client's side ("Invalid metadata"), so round 55's
and 56's machines never sent one; another gRPC library, or any HTTP/2 client, can. Each
value below opens a ``Play`` call with a Hello on a connection of its own: a Welcome (a
DATA frame) for the right token however it is wrapped, ``UNAUTHENTICATED`` (grpc-status
16, "unknown token") for a token that is not the registered one, byte for byte (non-ASCII
UTF-8 among them), and no error logged either way.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from raw_h2 import DATA, END_STREAM, HEADERS, RawH2, grpc_message

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from tests.support.harness import no_error_logged  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

WELCOMED = [
    b"Bearer \ttok-x\t",
    b"Bearer  \t tok-x \t ",
    b"bEaReR tok-x",
    b"\tBearer tok-x",
]
UNKNOWN = [
    b"Bearer t\xc3\xb6k-x",  # valid UTF-8, not ASCII
    b"Bearer tok-x\xc2\xa0",  # a no-break space is no blank of HTTP's: part of the token
    b"Bearer tok-\tx",  # a tab within the token
    b"Bearer " + b"\xd0\x96" * 3000,  # 6,000 bytes of Cyrillic
]
#: several entries: the first ``Bearer`` one counts
SEVERAL = {
    (b"Basic tok-x", b"Bearer tok-x"): True,
    (b"Bearer tok-x", b"Bearer wrong"): True,
    (b"Bearer wrong", b"Bearer tok-x"): False,
    (*(b"Bearer w%d" % k for k in range(200)), b"Bearer tok-x"): False,
    (*(b"tok-x",) * 200, b"Bearer tok-x"): True,
}


def _outcome(port: int, values: tuple[bytes, ...]) -> str:
    """``welcome`` or the grpc-status of a ``Play`` call with ``values`` as its
    ``authorization`` entries (read from the trailers' literal bytes, as gRPC core
    writes them without Huffman coding)."""
    hello = grpc_message(pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString())
    conn = RawH2(port)
    try:
        extra = tuple((b"authorization", v) for v in values)
        sid = conn.call("/arena.v1.Arena/Play", extra=extra, data=hello, end=False)
        frames: list[Any] = []
        # (until the Welcome or the call's end: a welcomed call does not end by itself)
        for _ in range(300):
            frames += [f for f in conn.frames(0.1, until_ended={sid}) if f.stream == sid]
            if any(f.kind == DATA or f.flags & END_STREAM for f in frames):
                break
    finally:
        conn.close()
    for f in frames:
        if f.kind == DATA and len(f.payload) > 5:
            msg = pb.ServerMessage.FromString(f.payload[5:])
            return str(msg.WhichOneof("kind"))
        if f.kind == HEADERS and f.flags & END_STREAM:
            status = f.payload.split(b"grpc-status", 1)[1][1:3]
            said = b"unknown token" in f.payload
            return f"status {status.decode().strip()}" + (": unknown token" if said else "")
    return f"nothing: {frames}"


def test_authorization_values_no_grpcio_client_sends() -> None:
    async def main() -> dict[tuple[bytes, ...], str]:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        out: dict[tuple[bytes, ...], str] = {}
        try:
            for values in [*((v,) for v in WELCOMED + UNKNOWN), *SEVERAL]:
                out[values] = await asyncio.to_thread(_outcome, port, values)
                # (each welcomed call is reset unread: the next one is let in at once)
                await asyncio.sleep(0)
        finally:
            await ref.end_streams()
            await server.stop(1.0)
        return out

    got = asyncio.run(main())
    want = {(v,): "welcome" for v in WELCOMED}
    want |= {(v,): "status 16: unknown token" for v in UNKNOWN}
    want |= {k: "welcome" if ok else "status 16: unknown token" for k, ok in SEVERAL.items()}
    wrong = {k[-1][:40]: (got[k], w) for k, w in want.items() if got[k] != w}
    assert not wrong, wrong
