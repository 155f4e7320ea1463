"""Mutation review of the referee's core (arena/referee/: match.py, sessions.py, core.py),
round 42: the functions that decide what the players experience (the view sent, a
decision's deadline and clock, strikes, the fallback, forfeits, reconnection, the order
of events, the record). Mutants were made by hand one at a time and the existing tests
(tests/arena, tests/hostile, tests/e2e) run against each; each test here kills one they
let live, through the public surface: bots are raw gRPC clients of a served referee.

64 mutants (m: match.py, s: sessions.py, c: core.py; the table is in the round's report):
59 killed by the existing tests, 2 of them (m13, m42) only by a test hanging until its
cap (the tests here fail on each); 5 lived: c05 (the serving call's ``session.lost`` for a
stream ended without its bot leaving, dropped): the raw client here that reset its call
after reading its end was taken as having left, with or without the mutant, which was the
referee's defect (grpc.aio says EOF to a reset as to a half-close), fixed and killed by
tests/hostile/test_stream_reset_round42.py; 4 are equivalent: m24 (``or game.is_over``
dropped: a match ends only as a deal is scored, which moves ``deal_number`` on), m27
(``results[deal:]`` made ``[-1:]``: one action ends at most one deal), s02 (``confirm``'s
``k >= position`` made ``>``: an end and a request are never at the same position of a
stream), c01 (``_read_loop``'s check that the stream is still the bot's dropped: a
replaced stream's reader is cancelled before it reads again).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import until, welcomed_call

#: (bot, its n-th request counted from 1, the request, its call) -> awaited before the
#: answer; the action sent, or None: no answer.
Policy = Callable[[str, int, pb.DecisionRequest, Any], Awaitable[pb.Action | None]]


async def first_legal(_bot: str, _n: int, r: pb.DecisionRequest, _call: Any) -> pb.Action | None:
    return r.view.legal_actions[0]


def _messages(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.HasField("batch") else [m]


async def _bot(call: Any, name: str, policy: Policy, got: list[pb.ServerMessage]) -> None:
    """Read ``call`` until its match ends, answering each request by ``policy``."""
    n = 0
    while True:
        m = await call.read()
        if m is grpc.aio.EOF:
            return
        for one in _messages(m):
            got.append(one)
            if one.HasField("match_ended"):
                await call.done_writing()
                return
            if one.HasField("decision_request"):
                r = one.decision_request
                n += 1
                action = await policy(name, n, r, call)
                if action is not None:
                    d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
                    await call.write(pb.BotMessage(decision=d))


def play(
    policy: Policy = first_legal,
    *,
    names: tuple[str, ...] = ("a", "b", "c"),
    max_deals: int = 1,
    seed: int = 5,
    **config: Any,
) -> tuple[dict[str, Any], dict[str, list[pb.ServerMessage]]]:
    """One match of bots ``names``, raw gRPC clients of a served referee answering by
    ``policy``: its record, and every message each bot read (batches unpacked)."""
    config = {"decision_ms": 60_000, "time_bank_ms": 0, **config}
    rs = dataclasses.replace(PRESETS["classic"], max_deals=max_deals)

    async def main() -> tuple[dict[str, Any], dict[str, list[pb.ServerMessage]]]:
        ref = Referee(RefereeConfig(**config))
        for n in names:
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref)
        got: dict[str, list[pb.ServerMessage]] = {n: [] for n in names}
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                calls = {n: await welcomed_call(ch, f"tok-{n}", n) for n in names}
                assert not await ref.wait_for_bots(names, 30)
                bots = [asyncio.create_task(_bot(calls[n], n, policy, got[n])) for n in names]
                rec = await asyncio.wait_for(ref.run_match("m1", rs, seed, list(names)), 120)
                await asyncio.wait_for(asyncio.gather(*bots, return_exceptions=True), 30)
                return rec, got
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


def requests(msgs: list[pb.ServerMessage]) -> list[pb.DecisionRequest]:
    return [m.decision_request for m in msgs if m.HasField("decision_request")]


def test_a_bot_that_thinks_past_its_decision_time_has_less_bank_after() -> None:
    """m13: ``st.bank_ms = bank_left(...)`` after an answer dropped: a bot that thought
    past its decision time into its bank was told the whole bank again at its next
    request (and could so use it again and again)."""

    async def slow_first(bot: str, n: int, r: pb.DecisionRequest, _call: Any) -> pb.Action:
        if bot == "a" and n == 1:
            await asyncio.sleep(0.4)  # past the 50 ms decision time: into the bank
        return r.view.legal_actions[0]

    _rec, got = play(slow_first, decision_ms=50, time_bank_ms=60_000)
    asked = requests(got["a"])
    assert len(asked) >= 2
    assert (asked[0].time_limit_ms, asked[0].time_bank_ms) == (50, 60_000)
    assert asked[1].time_limit_ms == 50
    assert asked[1].time_bank_ms < 60_000, asked[1]


def test_a_grace_of_zero_forfeits_a_dropped_seat_even_if_it_is_back_at_once() -> None:
    """s07 (killed by the existing tests too, through a seat taken while away): the grace
    timer's ``until <= now + 0.001`` made ``until <= now - 0.5``: a seat was forfeited half
    a second after its grace ended, and a bot back within that half second kept it
    (``reconnect_grace_s = 0`` is documented as forfeiting a dropped seat at once)."""

    async def main() -> pb.MatchStarted:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=0))
        for n in "abc":
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                calls = {n: await welcomed_call(ch, f"tok-{n}", n) for n in "abc"}
                got: dict[str, list[pb.ServerMessage]] = {n: [] for n in "bc"}
                # b and c answer once a is back: the match still runs when a comes back
                a_back = asyncio.Event()

                async def held(bot: str, n: int, r: pb.DecisionRequest, call: Any) -> Any:
                    await a_back.wait()
                    return await first_legal(bot, n, r, call)

                bots = [asyncio.create_task(_bot(calls[n], n, held, got[n])) for n in "bc"]
                rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
                match = asyncio.create_task(ref.run_match("m1", rs, 5, ["a", "b", "c"]))
                # Seat a drops (its call cancelled) once the match has started, and is
                # back at once, once the referee has seen it go (a Hello ahead of the
                # cancel, which CI's load once made, is a stream replaced: no drop, no
                # forfeit).
                while True:
                    m = await calls["a"].read()
                    if any(x.HasField("match_started") for x in _messages(m)):
                        break
                calls["a"].cancel()
                await until(lambda: ref.session("a").stream is None, "a seen gone")
                back = await welcomed_call(ch, "tok-a", "a")
                while True:
                    m = await back.read()
                    started = [x for x in _messages(m) if x.HasField("match_started")]
                    if started:
                        break
                a_back.set()
                back.cancel()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(match, 60)
                for b in bots:
                    b.cancel()
                return started[0].match_started
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    started = asyncio.run(main())
    assert started.resumed
    assert started.forfeited, started


def test_a_bot_back_within_its_grace_is_asked_its_pending_request_again() -> None:
    """m42: ``on_reconnect``'s asking again of the pending request dropped: a bot that lost
    its stream while asked, and came back within its grace, was never asked again; it timed
    out (a strike, its bank gone) with an answer ready. (The existing tests caught it only
    by hanging.)"""

    async def main() -> tuple[pb.DecisionRequest, pb.DecisionRequest]:
        ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, reconnect_grace_s=60))
        for n in "abc":
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                calls = {n: await welcomed_call(ch, f"tok-{n}", n) for n in "abc"}
                got: dict[str, list[pb.ServerMessage]] = {n: [] for n in "bc"}
                # b and c answer once a is back: the match still runs when a comes back
                a_back = asyncio.Event()

                async def held(bot: str, n: int, r: pb.DecisionRequest, call: Any) -> Any:
                    await a_back.wait()
                    return await first_legal(bot, n, r, call)

                bots = [asyncio.create_task(_bot(calls[n], n, held, got[n])) for n in "bc"]
                rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
                match = asyncio.create_task(ref.run_match("m1", rs, 5, ["a", "b", "c"]))

                async def next_request(call: Any) -> pb.DecisionRequest:
                    while True:
                        m = await call.read()
                        for x in _messages(m):
                            if x.HasField("decision_request"):
                                return x.decision_request

                first = await asyncio.wait_for(next_request(calls["a"]), 60)
                calls["a"].cancel()  # dropped while asked, back at once
                back = await welcomed_call(ch, "tok-a", "a")
                again = await asyncio.wait_for(next_request(back), 60)
                back.cancel()
                match.cancel()
                for b in bots:
                    b.cancel()
                with contextlib.suppress(BaseException):
                    await match
                return first, again
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    first, again = asyncio.run(main())
    assert again.request_id == first.request_id
    assert again.view == first.view
    assert 0 < again.time_limit_ms <= 20_000
