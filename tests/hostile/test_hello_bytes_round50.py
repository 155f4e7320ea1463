"""Hostile round 50: a stream's first message is refused for its bytes before it is parsed.

Round 49 bounded the Hello's fields (``HELLO_LIMITS``), but checked them on the parsed
message: gRPC lets in a MiB, and a MiB of one-letter ``running`` ids cost the referee's loop
12 ms (more under load) to parse before its count refused it, as often as the token may
reconnect. The first message is now refused unread past ``HELLO_MAX_BYTES`` (a Hello at
every limit, in ASCII): bytes that would not even parse, one past the bound, are refused for
their size, not for their content; the same bytes at the bound are read (and refused for not
parsing); a Hello at every limit is welcomed; a later message may be larger.

A welcomed stream's message had the same hole, wider: a MiB of empty decisions (a
DecisionBatch of 524,256) cost the loop 40-80 ms to parse before its count refused it, and
weighed nothing toward the flood limit, once per stream (measured against a real server:
46 ms of the referee's CPU per stream, loop stalls up to 0.5 s). Its bytes past 256 KiB (128
KiB since round 51) now
count toward the flood limit before it is read, so that after the first such MiB of a
window the next are refused unread (5-6 ms of CPU per such stream, the stream's own cost).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.protocol import HELLO_LIMITS, HELLO_MAX_BYTES
from arena.referee import Referee
from arena.v1 import arena_pb2 as pb
from tests.support.harness import no_error_logged, serve_one_bot, welcomed_call  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
ROOT = Path(__file__).resolve().parents[2]


async def _first(port: int, raw: bytes) -> tuple[str, str, list[pb.ServerMessage]]:
    """Send ``raw`` as a Play call's first message as bot x, half-close, read to the end."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(PLAY, request_serializer=lambda b: b)(
            metadata=(("authorization", "Bearer tok-x"),)
        )
        got: list[pb.ServerMessage] = []
        try:
            await call.write(raw)
            await call.done_writing()
            while (m := await asyncio.wait_for(call.read(), 30)) is not grpc.aio.EOF:
                got.append(pb.ServerMessage.FromString(m))
        except grpc.aio.AioRpcError:
            pass
        return (await call.code()).name, await call.details() or "", got


def _at_every_limit() -> pb.Hello:
    """A Hello with every field at its limit, its text in 4-byte characters (round 51: the
    ids in ASCII, as their limit counts bytes): ``HELLO_MAX_BYTES`` but for the protocol
    version (1 here, the largest number there)."""
    four = "\U0001f0a1"  # (a playing card, 4 bytes in UTF-8)
    hello = pb.Hello(protocol_version=1, matches=2**32 - 1, bot_name=four * 256, client=four * 256)
    hello.features.extend(chr(ord(four) + i) * 64 for i in range(HELLO_LIMITS["features"][0]))
    hello.running.extend(f"{i}".rjust(256, "r") for i in range(HELLO_LIMITS["running"][0]))
    return hello


def test_the_bound_is_a_hello_at_every_limit_and_is_documented() -> None:
    raw = pb.BotMessage(hello=_at_every_limit()).SerializeToString()
    assert len(raw) == HELLO_MAX_BYTES - 4  # (protocol_version 1, not 2**32 - 1)
    shown = f"{HELLO_MAX_BYTES:,} bytes"
    for doc in ("docs/protocol.md", "proto/arena/v1/arena.proto"):
        assert shown in (ROOT / doc).read_text(encoding="utf-8"), doc


def test_a_first_message_past_the_hellos_bytes_is_refused_unread() -> None:
    # Bytes that do not parse (a field of wire type 7): read, they would be refused as such.
    garbage = b"\x0f" * (HELLO_MAX_BYTES + 1)

    async def body(ref: Referee, port: int) -> dict[str, Any]:
        out = {
            "over": await _first(port, garbage),
            "at": await _first(port, garbage[:-1]),
            # The worst of round 49: a MiB of one-letter running ids (349,504 of them).
            "mib": await _first(
                port, pb.BotMessage(hello=pb.Hello(running=["m"] * 349_504)).SerializeToString()
            ),
            "limits": await _first(
                port, pb.BotMessage(hello=_at_every_limit()).SerializeToString()
            ),
        }
        out["welcomes"] = ref.session("x").welcomes
        # A welcomed stream's later message may be larger (gRPC's MiB and the flood limit
        # bound those): a Decision for no match, carrying 300 KB in its `failed`.
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = await welcomed_call(ch, "tok-x", "x")
            await call.write(pb.BotMessage(decision=pb.Decision(
                request_id="1", match_id="none", failed="f" * 300_000)))  # fmt: skip
            out["later"] = await asyncio.wait_for(call.read(), 30)
            call.cancel()
        return out

    out = serve_one_bot(body)
    code, details, got = out["over"]
    assert (code, got) == ("INVALID_ARGUMENT", []), out["over"]
    assert details == (
        f"the first message must be a Hello of at most {HELLO_MAX_BYTES:,} bytes (its limits: "
        f"docs/protocol.md), not one of {HELLO_MAX_BYTES + 1:,}: refused unread"
    ), details
    code, details, got = out["at"]  # (read: refused for what it holds)
    assert (code, got) == ("INVALID_ARGUMENT", []) and details.startswith(
        "could not parse the message as arena.v1.BotMessage"
    ), out["at"]
    code, details, _ = out["mib"]
    assert code == "INVALID_ARGUMENT" and "not one of 1,048,516: refused unread" in details
    code, details, got = out["limits"]
    assert code == "OK" and got[0].HasField("welcome"), out["limits"]
    assert out["welcomes"] == 1
    later = out["later"].decision_rejected
    assert later.incident == pb.INCIDENT_WRONG_REQUEST and "no seat" in later.message


FLOODED = "more than 1000 messages answering no pending request within 10 s"


async def _after_hello(port: int, raw: bytes) -> tuple[str, str]:
    """A stream of bot x says Hello, reads its Welcome, sends ``raw`` and half-closes: its
    (status, details)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(PLAY, request_serializer=lambda b: b)(
            metadata=(("authorization", "Bearer tok-x"),)
        )
        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString())
        welcome = pb.ServerMessage.FromString(await asyncio.wait_for(call.read(), 30))
        assert welcome.HasField("welcome"), welcome
        await call.write(raw)
        await call.done_writing()
        with contextlib.suppress(grpc.aio.AioRpcError):
            while await asyncio.wait_for(call.read(), 30) is not grpc.aio.EOF:
                pass
        return (await call.code()).name, await call.details() or ""


def test_a_later_message_is_weighed_by_its_bytes_before_it_is_parsed() -> None:
    """A welcomed stream's message of a MiB counts 896 (its KiB past 128; 768 past 256
    before round 51) toward the flood limit of 1,000 before it is read: the first is read
    (bytes that do not parse: refused as such), the same bytes on the next stream are
    refused unread, as a flood; a message within 128 KiB (257 decisions) counts nothing
    unread (though the meter is full): it is refused for what it holds."""
    garbage = b"\x0f" * (1 << 20)
    padded = pb.BotMessage(decisions=pb.DecisionBatch(
        decisions=[pb.Decision(failed="f" * 495)] * 257)).SerializeToString()  # fmt: skip

    async def body(ref: Referee, port: int) -> dict[str, Any]:
        out: dict[str, Any] = {"first": await _after_hello(port, garbage)}
        out["second"] = await _after_hello(port, garbage)
        out["padded"] = await _after_hello(port, padded)
        return out

    out = serve_one_bot(body)
    code, details = out["first"]
    assert code == "INVALID_ARGUMENT" and details.startswith("could not parse"), out["first"]
    code, details = out["second"]
    assert code == "RESOURCE_EXHAUSTED" and details.startswith(FLOODED), out["second"]
    assert 125 * 1024 < len(padded) <= 128 * 1024 and out["padded"] == (
        "INVALID_ARGUMENT", "a DecisionBatch holds at most 256 decisions, not 257"
    )  # fmt: skip
