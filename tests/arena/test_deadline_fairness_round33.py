"""Deadline fairness, round 33: a bot is charged only for its own time, never for the
referee's or another bot's.

Time is the referee's loop clock (``loop.time``), which these tests replace with one they
move by known amounts: a stall of the referee's loop of a minute is simulated in no time,
and an answer comes at an exact instant. No assertion depends on the machine's speed: the
real time a test takes is small against limits of 30 s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import as_message, attach_in_process, welcomed_call

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.lag import LoopLag
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


class Clock:
    """The running loop's clock: real time (or none, ``real=False``) plus ``offset``, which
    a test moves on to simulate the loop being held up for that long."""

    def __init__(self, real: bool = True) -> None:
        loop = asyncio.get_running_loop()
        self._real = loop.time if real else (lambda: 1000.0)
        self.offset = 0.0
        loop.time = self.time  # type: ignore[method-assign]

    def time(self) -> float:
        return self._real() + self.offset


async def _raw_bot(call: Any, asked: list[pb.DecisionRequest], answered: Any = None) -> None:
    """Answer every request at once with its first legal action, until the match ends;
    ``answered()`` after each answer is sent."""
    while True:
        msg = await call.read()
        if msg is grpc.aio.EOF:
            return
        kind = msg.WhichOneof("kind")
        if kind == "decision_request":
            r = msg.decision_request
            asked.append(r)
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            await call.write(pb.BotMessage(decision=d))
            if answered is not None:
                answered()
        elif kind == "match_ended":
            return


def test_the_referees_busy_loop_is_not_the_bots_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: a decision's time was all the time from its request being queued to its
    answer being read, the referee's loop being held up in between (other tables' moves, a
    record written to a slow disk, a big message parsed) included. Here the loop is held
    120 s (simulated on its clock) either after x's request is queued, before its writer
    runs, or after x's answer is sent, before it is read: a bot answering at once (limit
    30 s, bank 5 s) timed out each time, struck out and forfeited. Now the loop's stalls
    are the referee's time (``LoopLag``): no incident, the bank whole, and the record's
    ``ms`` is what the bot took."""
    put = Stream.put

    async def main() -> tuple[dict[str, Any], list[pb.DecisionRequest]]:
        clock = Clock()
        ref = Referee(RefereeConfig(decision_ms=30_000, time_bank_ms=5_000, max_strikes=3))
        for n in ("a", "b", "x"):
            ref.add_bot(n, f"tok-{n}")
        asked: dict[str, list[pb.DecisionRequest]] = {n: [] for n in ("a", "b", "x")}

        def held(self: Stream, msg: pb.ServerMessage | bytes) -> None:
            put(self, msg)
            # (a request is queued as its wire bytes)
            if (self is ref.session("x").stream and as_message(msg).HasField("decision_request")
                    and len(asked["x"]) % 2 == 0):  # fmt: skip
                clock.offset += 120.0  # the loop busy elsewhere before x's writer runs

        def answered() -> None:
            if len(asked["x"]) % 2 == 0:  # the loop busy as x's answer waits to be read
                clock.offset += 120.0

        monkeypatch.setattr(Stream, "put", held)
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                calls = {n: await welcomed_call(ch, f"tok-{n}", n) for n in asked}
                bots = [
                    asyncio.create_task(_raw_bot(c, asked[n], answered if n == "x" else None))
                    for n, c in calls.items()
                ]
                rec = await ref.run_match("m1", ONE_DEAL, 5, ["a", "b", "x"])
                await asyncio.gather(*bots)
                for c in calls.values():
                    c.cancel()
        finally:
            await server.stop(0)
        return rec, asked["x"]

    rec, asked = asyncio.run(main())
    assert not rec["incidents"], rec["incidents"]
    assert len(asked) >= 4  # (x was asked: both kinds of stall came)
    assert rec["forfeits"] == []
    assert all(r.time_bank_ms == 5_000 and r.time_limit_ms == 30_000 for r in asked)
    x = rec["players"].index("x")
    ms = [a["ms"] for d in rec["deals"] for a in d["actions"]
          if a["seat"] == x and a["by"] == "bot"]  # fmt: skip
    assert len(ms) == len(asked)
    assert max(ms) < 30_000, ms  # not the 120 s the referee's loop was held


def test_the_loop_lag_meter_counts_stalls_not_the_loops_ordinary_latency() -> None:
    """``LoopLag``: a tick late by less than its tolerance counts nothing (the bot's time is
    not shortened by the loop's ordinary latency); a stall counts, short by at most a
    period and the tolerance, also while it lasts; a stall while no decision is pending
    excuses no decision asked after it (each reads the meter when it is asked)."""

    async def main() -> list[float]:
        clock = Clock(real=False)
        lag = LoopLag(asyncio.get_running_loop())
        seen = []
        lag.hold()
        clock.offset += LoopLag.PERIOD + LoopLag.TOLERANCE / 2  # a tick a little late
        seen.append(lag.stalled())
        await asyncio.sleep(0)  # (the tick runs)
        await asyncio.sleep(0)
        seen.append(lag.stalled())
        clock.offset += 2.0  # a stall of 2 s: seen while it lasts ...
        seen.append(lag.stalled())
        await asyncio.sleep(0)  # ... and after the tick
        await asyncio.sleep(0)
        seen.append(lag.stalled())
        lag.release()
        clock.offset += 5.0  # no decision pending
        asked = lag.stalled()  # a decision asked now (the loop free again) reads this
        lag.hold()
        await asyncio.sleep(0)  # (a tick runs)
        await asyncio.sleep(0)
        seen.append(lag.stalled() - asked)  # what that decision is excused: nothing
        lag.release()
        return seen

    seen = asyncio.run(main())
    late = 2.0 - LoopLag.PERIOD - LoopLag.TOLERANCE
    assert seen == [0.0, 0.0, pytest.approx(late), pytest.approx(late), pytest.approx(0.0)]


def test_the_bank_to_the_millisecond_at_the_limit_at_the_deadline_and_per_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answer read exactly at the limit costs no bank; 30 ms over costs 30 ms; one read
    just before limit + bank is on time and empties the bank (the next request says 0 ms of
    bank); one read at limit + bank is a timeout (the bot has *within* limit + bank). The
    record's ``ms`` is the time each answer took, and the next match starts with the whole
    bank again (it is per match). (The clock jumps here are the bot's thinking, not the
    loop's stalls: ``LoopLag`` counts none.)"""
    monkeypatch.setattr(LoopLag, "TOLERANCE", math.inf)
    # x's answers, seconds after each request: at the limit, 30 ms over, 70 ms over less a
    # microsecond (the bank's last 70 ms), then at the deadline itself; then at once.
    delays = [1.0, 1.030, None, "deadline"]

    async def main() -> tuple[list[dict[str, Any]], dict[str, list[tuple[int, int]]]]:
        clock = Clock(real=False)
        ref = Referee(RefereeConfig(decision_ms=1000, time_bank_ms=100, max_strikes=100))
        stated: dict[str, list[tuple[int, int]]] = {"m1": [], "m2": []}

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            p = ref.session(bot).seats[r.match_id].pending
            assert p is not None
            if bot == "x":
                stated[r.match_id].append((r.time_limit_ms, r.time_bank_ms))
                k = len(stated[r.match_id]) - 1
                if r.match_id == "m1" and k < len(delays):
                    what = delays[k]
                    if what is None:
                        clock.offset = p.deadline - 1e-6 - 1000.0
                    elif what == "deadline":
                        clock.offset = p.deadline - 1000.0
                    else:
                        assert isinstance(what, float)
                        clock.offset = p.limit_at - 1.0 + what - 1000.0  # (limit_at: start + 1 s)
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_decision(ref.session(bot), d)

        attach_in_process(ref, ("a", "b", "x"), answer)
        recs = [await ref.run_match(m, ONE_DEAL, 7, ["a", "b", "x"]) for m in ("m1", "m2")]
        return recs, stated

    recs, stated = asyncio.run(main())
    first, second = recs
    x = first["players"].index("x")
    mine = [
        a for d in first["deals"] for a in d["actions"] if a["seat"] == x and a["by"] != "forced"
    ]
    # the timeout is charged limit + what was left of the bank (none)
    assert [a["ms"] for a in mine[:4]] == [1000, 1030, 1070, 1000], mine[:4]
    assert [a["by"] for a in mine[:4]] == ["bot", "bot", "bot", "fallback"], mine[:4]
    # What each request of m1 said: the whole bank, after 30 ms over, then none left.
    assert stated["m1"][:5] == [(1000, 100), (1000, 100), (1000, 70), (1000, 0), (1000, 0)]
    timeouts = [i for i in first["incidents"] if i["kind"] == "timeout"]
    assert len(timeouts) == 1, first["incidents"]
    assert "no decision within 1000 ms (1000 ms + 0 ms of time bank)" in timeouts[0]["detail"]
    # The answer read at the deadline is refused as late, not played.
    late = [i for i in first["incidents"] if i["kind"] == "wrong_request"]
    assert len(late) == 1 and "timed out" in late[0]["detail"], first["incidents"]
    assert {i["kind"] for i in first["incidents"]} == {"timeout", "wrong_request"}
    # m2: the bank is whole again (it is per match).
    assert stated["m2"] and all(s == (1000, 100) for s in stated["m2"]), stated["m2"]
    assert not second["incidents"]
