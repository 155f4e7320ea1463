"""Hostile round 18: races, reconnects, batches and the clock, with raw grpc clients (the
proto only) against a real referee."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, attach_in_process, no_error_logged  # noqa: F401 (a fixture)

from arena.referee import Referee, RefereeConfig
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS

pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def _until(cond: Any) -> None:
    """Poll ``cond`` until it holds (a condition, not a time, is asserted: the caller's
    ``wait_for`` bounds it)."""
    while not cond():
        await asyncio.sleep(0.01)


async def _match_with_a_bot_that_reads_nothing(a: Any, x_call: Any) -> dict[str, Any]:
    """Play one deal of ``x`` (on ``x_call``, which reads nothing: every request of its
    times out) against two in-process bots answering at once; the record."""
    ref = a.referee

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    attach_in_process(ref, ("y", "z"), answer)
    await x_call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
    await asyncio.wait_for(_until(lambda: ref.session("x").connected), 30)
    rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"])
    return rec


def test_an_end_lost_with_its_stream_is_waited_for_when_the_arena_stops(tmp_path: Path) -> None:
    """Defect: a match's end queued on a bot's stream that then died unread (the call reset
    by the client, the connection gone) is kept for the bot and sent again when it comes
    back, but a stopping arena (`arena serve --matches K`, a tournament's last match) did
    not wait for it: ``away_with_results`` counted only ends of matches that ended while
    the bot was away. The bot, back within its grace, was refused ("the arena has played
    its matches") and never learned its last result. A bot that half-closed its stream
    after reading its end (as the SDK leaves) is still not waited for."""

    async def main() -> tuple[list[str], list[str], str]:
        async with arena(tmp_path, decision_ms=20, time_bank_ms=0, max_strikes=1000) as a:
            a.referee.add_bot("x", "tok-x")
            # A window of 1 KiB, never read: the referee's writes of the match wait.
            opts = (("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0))
            async with grpc.aio.insecure_channel(a.target, options=opts) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                rec = await _match_with_a_bot_that_reads_nothing(a, call)
                assert rec["result"]["reason"] in ("max_deals", "target"), rec["result"]
                # The end is queued (or written) on x's stream; x resets the call unread.
                call.cancel()
                ref = a.referee
                await asyncio.wait_for(_until(lambda: not ref._attached), 30)  # (call over)
                away = ref.away_with_results()
                # Back: the end comes again, right after the Welcome.
                again = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await again.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                assert (await again.read()).WhichOneof("kind") == "welcome"
                got = (await again.read()).match_ended.match_id
                # It read its end: leaving by a half-close is no loss (nobody waited for).
                await again.done_writing()
                while await again.read() is not grpc.aio.EOF:
                    pass
                await asyncio.wait_for(_until(lambda: not ref._attached), 30)
                left = ref.away_with_results()
            return away, left, got

    away, left, got = asyncio.run(main())
    assert away == ["x"], away  # (was [])
    assert got == "m" and left == [], (got, left)


def test_an_answer_read_past_the_deadline_is_a_timeout() -> None:
    """Defect: an answer read after its deadline (limit + bank) was applied as the bot's,
    its time in the record past the deadline (here 200 ms of a 50 ms budget), whenever
    the read came before the deadline's timer ran: a referee loop held up by other work
    runs the two in the order they became ready, and the answer's read, queued first, won.
    The referee "never waits longer" than limit + bank, and times an answer when it reads
    it: one read later is a timeout (the fallback played, a strike), as when the timer
    runs first, and the late answer is refused as ``WRONG_REQUEST`` naming it."""
    ref = Referee(RefereeConfig(decision_ms=50, time_bank_ms=0, max_strikes=1000))
    answered: list[bool] = []

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        if bot == "x" and not answered:
            time.sleep(0.2)  # the loop is held up: the deadline passes before the read
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ok = ref.on_decision(ref.session(bot), d)
        if bot == "x":
            answered.append(ok)

    async def main() -> dict[str, Any]:
        attach_in_process(ref, ("x", "y", "z"), answer)
        rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"])
        return rec

    rec = asyncio.run(main())
    late = [a for d in rec["deals"] for a in d["actions"] if a["by"] == "bot" and a["ms"] > 50]
    assert not late, late  # (was the first answer of x, 200 ms)
    timeouts = [i for i in rec["incidents"] if i["kind"] == "timeout"]
    assert [i["seat"] for i in timeouts] == [0] and answered[0] is False, (timeouts, answered)
    refused = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
    assert [i["seat"] for i in refused] == [0] and "timed out" in refused[0]["detail"], refused
