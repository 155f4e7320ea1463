"""Hostile round 51: a client (the generated stubs only) that drops its stream right as it
sends its last card of a deal (the deal ends with that trick), and of its match.

Seat x of a 1001 match of two deals (``ask_forced``: x is asked for its last card too)
answers every request with its first legal action; at its last card of each deal it writes
the answer and cancels the call in the same step (a reset: the answer may reach the
referee, or be lost with the call). It comes back once the referee has seen it go (its
stream gone), names the match in ``Hello.running`` and answers whatever it is asked again.
After its last card of the match it comes back once more, for the match's end.

Checked: the match ends (``max_deals``) within the grace, with no forfeit and no strike:
x's only incidents are its disconnects (the last one only if the referee sees it before the
record is closed), the honest seats have none; the match's end reaches
x (on a later stream when the one it was written to died); the record replays; and no
message x got, on any of its streams, holds a card its seat may not see.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.hostile.test_hostile_audit import Client, _audit
from tests.hostile.test_hostile_round34 import _replays
from tests.support.harness import attach_in_process, no_error_logged, until  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

TWO_DEALS = dataclasses.replace(PRESETS["1001"], max_deals=2)


def _first_legal(r: pb.DecisionRequest) -> pb.Decision:
    return pb.Decision(request_id=r.request_id, match_id=r.match_id, action=r.view.legal_actions[0])


async def _x(ref: Referee, port: int, mid: str, seen: Client) -> dict[str, Any]:
    """x's streams, until it has read its match's end: how many it opened, and the deals
    at whose last card it dropped one."""
    drops: list[int] = []
    streams = 0
    ended = False
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        while not ended:
            assert streams < 6, "x needed more than 6 streams"
            streams += 1
            call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-x"),))
            hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1,
                                                 running=[mid] if streams > 1 else []))  # fmt: skip
            seen.sent.append(hello)
            await call.write(hello)
            dropped = False
            try:
                while (m := await asyncio.wait_for(call.read(), 60)) is not grpc.aio.EOF:
                    seen.got.append(m)
                    if m.HasField("match_ended") and m.match_ended.match_id == mid:
                        ended = True
                        break
                    if not m.HasField("decision_request"):
                        continue
                    r = m.decision_request
                    answer = pb.BotMessage(decision=_first_legal(r))
                    seen.sent.append(answer)
                    await call.write(answer)
                    last_card = r.view.phase == pb.PHASE_PLAYING and len(r.view.hand) == 1
                    if last_card and r.deal_number not in drops:
                        drops.append(r.deal_number)
                        call.cancel()  # (in the same step as the write)
                        dropped = True
                        break
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.CANCELLED, e
            if dropped:
                await until(lambda: ref.session("x").stream is None, "the referee sees x go")
            else:
                await call.done_writing()
                with_status = await call.code()
                assert with_status == grpc.StatusCode.OK, with_status
    return {"streams": streams, "drops": drops}


def test_drops_as_a_deal_and_the_match_end_lose_nothing() -> None:
    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(ask_forced=True, reconnect_grace_s=30.0))
        attach_in_process(
            ref, ("a", "b"), lambda n, r: ref.on_decision(ref.session(n), _first_legal(r))
        )
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        seen = Client(call=None)
        try:
            # x first: the match waits for it to join.
            x_task = asyncio.create_task(_x(ref, port, "m", seen))
            await until(lambda: ref.session("x").stream is not None, "x in")
            rec = await ref.run_match("m", TWO_DEALS, 11, ["a", "x", "b"])
            out = await asyncio.wait_for(x_task, 60)
            return {"rec": rec, "seen": seen, **out}
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    out = asyncio.run(main())
    rec = out["rec"]
    assert out["drops"] == [0, 1], out["drops"]
    assert rec["result"]["reason"] == "max_deals" and not rec["forfeits"], rec["result"]
    kinds = [(i["seat"], i["kind"]) for i in rec["incidents"]]
    # The drop at deal 1's end is seen while the match runs; the one at its last card may
    # come after the record is closed (the last card ends the match at once): a race, so
    # its incident is there or not, never anything else.
    assert kinds in ([(1, "disconnect")], [(1, "disconnect")] * 2), rec["incidents"]
    _replays(rec)
    # Each of x's actions its bot's (or forced: none are, ask_forced), no fallback.
    assert {a.get("by") for a in _actions_of(rec, 1)} == {"bot"}, _actions_of(rec, 1)
    ends = [m for m in out["seen"].got if m.HasField("match_ended")]
    assert ends and ends[-1].match_ended.result.reason == "max_deals"
    assert _audit(out["seen"], {"m": rec}, {"m": 1}) > 10


def _actions_of(rec: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    return [a for deal in rec["deals"] for a in deal["actions"] if a.get("seat") == seat]
