"""Hostile round 52: a third-party client that puts a traceback in ``Decision.failed``.

The proto asks for "a few words" there, and the referee keeps 64 characters; nothing
stops a client from sending the whole traceback, a few KiB, with each answer of a bot that
fails its decisions and plays its fallback. Such an answer weighed its KiB past 512 bytes
toward the flood limit (1,000 in 10 s by default): a bot failing every decision with a
3 KiB traceback was closed with RESOURCE_EXHAUSTED, "more than 1000 messages answering no
pending request", after some 300 answers, though it answered only what it was asked. Its
``failed`` text now weighs nothing up to 16 KiB (review round 52c: past it, its KiB);
an answer padded otherwise (an unknown field) still weighs its KiB.

Bot x plays over the wire beside two in-process bots, with a flood limit of 20 so that a
match of one deal is enough: x answers each request with its first legal action and a
``failed`` of 3 KiB (each answer then weighed 2: it was closed at its 11th); then, in a
second match, the same answers padded with 3 KiB of an unknown field instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import attach_in_process, no_error_logged, until, welcomed_call  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

DEALS = dataclasses.replace(PRESETS["classic"], max_deals=2)
TRACEBACK = "Traceback (most recent call last):\n" + '  File "bot.py", line 1, in decide\n' * 90
UNKNOWN_FIELD = b"\xfa\x3f" + b"\x80\x18" + b"z" * 3072  # field 1023, 3,072 bytes


async def _x(port: int, pad: str) -> tuple[str, str, int]:
    """Bot x on a stream of its own, answering each request as ``pad`` says, to the end
    of its match or of its stream: (status, details, answers sent)."""
    sent = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = await welcomed_call(ch, "tok-x", "x")
        try:
            while (m := await asyncio.wait_for(call.read(), 60)) is not grpc.aio.EOF:
                if m.HasField("match_ended"):
                    await call.done_writing()
                    continue
                if not m.HasField("decision_request"):
                    continue
                r = m.decision_request
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                if pad == "failed":
                    d.failed = TRACEBACK
                raw = pb.BotMessage(decision=d).SerializeToString()
                if pad == "unknown":
                    raw = b"\x12" + _varint(len(raw) - 2 + len(UNKNOWN_FIELD)) + raw[2:]
                    raw += UNKNOWN_FIELD
                await call.write(pb.BotMessage.FromString(raw))
                sent += 1
        except grpc.aio.AioRpcError:
            pass
        return (await call.code()).name, await call.details() or "", sent


def _varint(n: int) -> bytes:
    out = b""
    while n > 0x7F:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _play(pad: str) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(flood_limit=20, ask_forced=True, reconnect_grace_s=0.5))
        attach_in_process(ref, ("a", "b"), lambda n, r: ref.on_decision(
            ref.session(n), pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=r.view.legal_actions[0])))  # fmt: skip
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        try:
            x = asyncio.create_task(_x(port, pad))
            await until(lambda: ref.session("x").connected, "x connected")
            rec = await asyncio.wait_for(ref.run_match("m", DEALS, 5, ["x", "a", "b"]), 120)
            code, details, sent = await asyncio.wait_for(x, 60)
            return {"rec": rec, "code": code, "details": details, "sent": sent}
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


def test_a_traceback_in_failed_weighs_nothing_toward_the_flood_limit() -> None:
    answer = pb.BotMessage(decision=pb.Decision(request_id="12", match_id="m", failed=TRACEBACK))
    assert 3072 <= answer.ByteSize() < 4096  # (weighed 2 before)

    out = _play("failed")
    rec = out["rec"]
    assert (out["code"], out["details"]) == ("OK", ""), out
    assert out["sent"] > 20  # (more than the limit, had each weighed even 1)
    assert rec["result"]["reason"] == "max_deals" and not rec["forfeits"], rec["result"]
    kinds = {i["kind"] for i in rec["incidents"]}
    assert kinds == {"bot_error"}, rec["incidents"]  # (its failed decisions, nothing more)
    assert all(len(i["detail"]) < 400 for i in rec["incidents"])  # (64 characters kept)


def test_an_answer_padded_otherwise_still_weighs_its_kib() -> None:
    out = _play("unknown")
    assert out["code"] == "RESOURCE_EXHAUSTED", out
    assert "answering no pending request" in out["details"], out["details"]
    assert "its failed texts aside" in out["details"], out["details"]
    assert out["sent"] <= 11, out["sent"]
    assert {i["kind"] for i in out["rec"]["incidents"]} >= {"disconnect"}
