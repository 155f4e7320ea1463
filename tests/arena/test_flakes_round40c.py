"""Races found by round 40's flake hunt (tests/arena, cli, web, bots, engine) that were the
product's, not a test's.

Defect: a decision's clock was moved to the moment its request was sent after the stall
meter had been read (``Pending.catch_up``); a pause of the referee's process between the two
reads (a loaded machine) was counted twice, once in the move and again as a stall, and the
bot's time came out below zero: ``ms: -1`` in a four-player tournament under load, whose
leaderboard then refused the record ("the stored record ... is damaged: 'ms' must be a
number of milliseconds, got -1"; arena tournament exit 1).

The pause is made certain here (the process blocked right after the meter is read, past
the meter's period and tolerance), not waited for; no assertion is on a duration.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from arena.referee import Referee, RefereeConfig
from arena.referee import match as match_module
from arena.referee.lag import LoopLag
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from engine.record import check_record_shape
from tests.support.harness import attach_in_process

#: Longer than a tick of the stall meter and its tolerance: the pause is a stall it counts.
PAUSE_S = 3 * (LoopLag.PERIOD + LoopLag.TOLERANCE)


def test_a_pause_as_a_request_is_sent_leaves_no_decision_time_below_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paused: list[int] = []
    catch_up = match_module.Pending.catch_up
    send = match_module.MatchRunner._send_request
    sending = [False]

    def catch_up_then_paused(self: Any, *now: float) -> None:
        catch_up(self, *now)
        if sending[0]:  # the first read of the meter as the request is sent
            sending[0] = False
            paused.append(1)
            time.sleep(PAUSE_S)  # the process not run for a moment, right there

    def send_request(self: Any, st: Any, msg: Any = None) -> None:
        sending[0] = True
        try:
            send(self, st, msg)
        finally:
            sending[0] = False

    monkeypatch.setattr(match_module.Pending, "catch_up", catch_up_then_paused)
    monkeypatch.setattr(match_module.MatchRunner, "_send_request", send_request)

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))

        def answer(bot: str, r: pb.DecisionRequest) -> None:  # at once, on the next turn
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_decision(ref.session(bot), d)

        attach_in_process(ref, ("a", "b", "c"), answer)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rules, 3, ["a", "b", "c"])

    rec = asyncio.run(main())
    ms = [a["ms"] for d in rec["deals"] for a in d["actions"] if a["by"] == "bot"]
    assert paused and len(ms) == len(paused)  # every request was sent through the pause
    assert min(ms) >= 0, ms  # (was below zero, every one of them: -30 to -77 ms)
    assert rec["incidents"] == []
    check_record_shape(rec)  # what the leaderboard reads it with: not "damaged"
