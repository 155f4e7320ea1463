"""Hostile round 17: an outside client, grpc and the proto only, against a real referee."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, no_error_logged  # noqa: F401 (a fixture)

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS

pytestmark = pytest.mark.usefixtures("no_error_logged")

SHORT = dataclasses.replace(PRESETS["classic"], max_deals=3)


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _flat(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]


async def _silent(target: str, token: str) -> list[pb.ServerMessage]:
    """A bot that says Hello, answers nothing, and reads until its match ends."""
    got: list[pb.ServerMessage] = []
    async with grpc.aio.insecure_channel(target) as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
        async for raw in call:
            got.extend(_flat(raw))
            if got[-1].WhichOneof("kind") == "match_ended":
                call.cancel()
                break
    return got


def test_the_end_of_a_match_every_seat_forfeited_carries_a_finished_view(tmp_path: Path) -> None:
    """Defect: when every seat forfeits, the match stops mid-deal, and its ``MatchEnded``
    carried that deal's view: phase PASSING, ``to_act``, the declarer and the bid, the seat's
    hand, and for the seat to act its legal actions — a view asking for a decision in a match
    that is over. The proto's final view has none of these (``to_act`` "absent when the
    match is over", ``declarer`` and ``bid`` absent "in the final view", PHASE_GAME_OVER "at
    the end"); a match stopped mid-deal now ends with that view too, its scores as they
    stood and the deals it finished."""

    async def main() -> tuple[dict[str, Any], list[list[pb.ServerMessage]]]:
        async with arena(tmp_path, decision_ms=100, time_bank_ms=0, max_strikes=1) as a:
            for n in ("x", "y", "z"):
                a.referee.add_bot(n, f"tok-{n}")
            bots = [asyncio.create_task(_silent(a.target, f"tok-{n}")) for n in ("x", "y", "z")]
            assert not await a.referee.wait_for_bots(["x", "y", "z"], 10)
            rec = await a.referee.run_match("m", SHORT, 3, ["x", "y", "z"])
            return rec, await asyncio.wait_for(asyncio.gather(*bots), 10)

    rec, got = asyncio.run(main())
    assert rec["abandoned"] is True and rec["forfeits"] == [0, 1, 2]
    for seat, msgs in enumerate(got):
        me = msgs[-1].match_ended
        assert me.result.reason == "forfeits" and list(me.result.places) == [3, 3, 3]
        v = me.view
        assert v.seat == seat and v.phase == pb.PHASE_GAME_OVER, v
        assert not v.HasField("to_act") and not v.legal_actions and not v.hand
        assert not v.HasField("declarer") and not v.HasField("bid") and not v.talon
        assert not (v.bids or v.gives or v.trick or v.tricks or v.marriages)
        assert list(v.scores) == rec["result"]["scores"]
        assert v.deal_number == me.result.deals == rec["result"]["deals"]


def test_a_compressed_message_counts_by_what_it_inflates_to(tmp_path: Path) -> None:
    """Holds (checked, no defect): a gzip-compressed message of some 100 KB on the wire
    that inflates to 64 MiB is refused by gRPC against the 1 MiB limit, with
    RESOURCE_EXHAUSTED "Decompressed message larger than max", before the referee parses
    it; the bot is not locked out (its next stream is welcomed) and the referee answers."""

    async def main() -> tuple[grpc.StatusCode, str, str]:
        async with arena(tmp_path) as a:
            a.referee.add_bot("x", "tok-x")
            async with grpc.aio.insecure_channel(a.target, compression=grpc.Compression.Gzip) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                bomb = pb.Decision(request_id="1" * (64 << 20), match_id="m")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call.write(pb.BotMessage(decision=bomb))
                with contextlib.suppress(grpc.aio.AioRpcError):
                    while await call.read() is not grpc.aio.EOF:
                        pass
                code, details = await call.code(), await call.details()
            async with grpc.aio.insecure_channel(a.target) as ch:
                again = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await again.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                welcome = (await again.read()).WhichOneof("kind")
                again.cancel()
                info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest())
                assert info.protocol_version == 1
            return code, details, welcome

    code, details, welcome = asyncio.run(main())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "Decompressed message larger than max" in details
    assert welcome == "welcome"
