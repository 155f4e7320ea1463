"""Hostile round 14: what the earlier rounds left around the arena's stop, batches,
reconnects and the time bank. Each test fails on the code before its fix."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import attach_in_process, welcomed_call

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, replay

HELLO = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))


async def _open_after_stop(final: bool) -> tuple[str, str, list[str]]:
    """A welcomed stream, then ``end_streams(final=final)``, then a new stream of the same
    bot: its status and details, and the kinds of what it was sent."""
    ref = Referee(RefereeConfig())
    ref.add_bot("x", "tok-x")
    server, port = await start_server(ref)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            first = await welcomed_call(ch, "tok-x", "x")
            await ref.end_streams("the tournament is over" if final else "the arena is stopping",
                                  final=final)  # fmt: skip
            assert await first.code() == (grpc.StatusCode.OK if final else
                                          grpc.StatusCode.UNAVAILABLE)  # fmt: skip
            # The server is still up (serve and the runner stop it after this returns): a bot
            # that reconnects at once, or while a slow stream keeps end_streams waiting.
            call: Any = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-x"),))
            kinds: list[str] = []
            try:
                await call.write(HELLO)
                while (msg := await call.read()) is not grpc.aio.EOF:
                    kinds.append(msg.WhichOneof("kind"))
                    if len(kinds) == 1:  # (welcomed: the server's stop ends it below)
                        await server.stop(1.0)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass
            return (await call.code()).name, await call.details(), kinds
    finally:
        await server.stop(None)


@pytest.mark.parametrize("final", [False, True])
def test_a_stream_opened_while_the_arena_stops_is_refused_as_the_others_were(final: bool) -> None:
    """Defect: ``end_streams`` ended the open streams, but a stream opened after it, while
    the server was still up (a bot reconnecting at once, or in the up to 2 s a slow stream
    kept ``end_streams`` waiting), was welcomed and resumed its seats; the server's stop
    then cut it with UNAVAILABLE "Cancelling all calls". After a final end (a tournament
    over, serve's ``--matches`` played), that bot was so told to reconnect, not to stop:
    the SDK retried for ``--retry-for`` and exited with an error. Now it gets what the
    others got, before any Welcome: OK, or UNAVAILABLE "the arena is stopping"."""
    code, details, kinds = asyncio.run(_open_after_stop(final))
    assert kinds == [], kinds
    if final:
        assert code == "OK"  # (gRPC carries no details with an OK status)
    else:
        assert (code, details) == ("UNAVAILABLE", "the arena is stopping")


def test_seats_that_all_forfeit_as_the_match_ends_are_placed_last_not_first() -> None:
    """Defect: when every seat had forfeited by the time the match reached its end (two
    struck out early, the third on the match's last action, whose fallback ended it), the
    result placed the forfeiters "last" after nobody: each was placed 1st, and each bot was
    told so in its MatchEnded (and the leaderboard counted three first places). A match
    that every seat forfeited before its end places each n-th, so that nobody is credited a
    first place; this one does the same now, and its record replays."""
    bad = pb.Action(bid=pb.Bid(amount=3))  # (never legal: off the step)

    async def match(seed: int) -> tuple[dict[str, Any], list[pb.MatchResult]]:
        ref = Referee(RefereeConfig(max_strikes=1, ask_forced=True))
        told: list[pb.MatchResult] = []

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            last_card = len(r.view.hand) == 1 and len(r.view.trick) == 2  # the deal's end
            action = bad if bot != "c" or last_card else r.view.legal_actions[-1]
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(ref.session(bot), d)

        queue = attach_in_process(ref, ("a", "b", "c"), answer)["c"]._queue
        rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
        rec = await ref.run_match("m", rules, seed, ["a", "b", "c"])
        while not queue.empty():  # what bot c was sent
            msg = queue.get_nowait()
            if msg is not None and msg.HasField("match_ended"):
                told.append(msg.match_ended.result)
        return rec, told

    for seed in range(40):  # a deal whose last card is c's
        rec, told = asyncio.run(match(seed))
        if len(rec["forfeits"]) == 3:
            break
    else:
        pytest.fail("no seed let c play the last card")
    assert rec["rules_result"] is not None  # the match reached its end
    assert rec["result"]["places"] == [3, 3, 3], rec["result"]  # (was [1, 1, 1])
    assert rec["result"]["winner"] is None
    assert list(told[0].places) == [3, 3, 3] and list(told[0].forfeits) == [0, 1, 2]
    replay(rec)
