"""Round 53: the SDK's line for a refusal of a request the bot was never asked names no
method of the bot.

Limit left by round 52: a strike refusal (a timeout, say) of a request that waited behind
a busy call of the bot, and that the referee timed out before the bot was asked it, was
said as ``(FirstLegal.bid() (...), deal 1, bidding)``: the line named a method that never
ran for it, and its author looked for a slow ``bid()``. It now says ``(deal 1, bidding; the
bot was not asked it)``; a refusal of a request the bot was asked names its method as
before (tests/review/test_mutation_review_round3.py).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator

import pytest

from arena.protocol import action_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView, fallback_action
from engine.view import observe
from sdk.client import BotRunner, RunSummary, bot_calls_running
from tests.sdk.test_hostile_arena import (
    GUARD,
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    fake_arena,
    request,
    started,
)
from tests.support.harness import until
from tests.support.netproxy import FaultProxy


class Busy(FirstLegal):
    """Its first decision waits until ``release`` is set (``entered`` says it began)."""

    entered = threading.Event()
    release = threading.Event()

    def act(self, view: PlayerView) -> Action:
        if not Busy.entered.is_set():
            Busy.entered.set()
            assert Busy.release.wait(30), "never released"
        return super().act(view)


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "decision rejected" in r.getMessage()]


@pytest.mark.parametrize("drop", [None, "asked", "said"])
def test_a_refusal_of_a_request_the_bot_was_not_asked_names_no_method(
    caplog: pytest.LogCaptureFixture, drop: str | None
) -> None:
    """``drop``: the bot's connection reset once (as a keepalive ping unanswered under load
    drops it), once the bot was asked request 1 or once it said the refusal. The arena
    says each thing once in the run, whichever stream it falls on: the fake replayed its
    whole script on the new stream, the refusal with it, and the bot rightly said the
    refusal it got twice (two lines, twice under heavy load in round 57)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    fallback = action_to_pb(fallback_action(observe(g, seat).legal_actions))
    Busy.entered.clear()
    Busy.release.clear()
    proxies: list[FaultProxy] = []
    streams = 0

    def dropped_at(when: str) -> bool:
        """Reset the bot's side of the first stream once, at ``when``."""
        if drop != when or streams > 1:
            return False
        proxies[0].reset_side("client")
        return True

    async def script(s: Stream) -> AsyncIterator[Out]:
        # Every stream goes on where the last one stopped, as the referee does after a
        # reconnection (the match resumed; what was said is not said again).
        nonlocal streams
        streams += 1
        yield WELCOME
        start = started("m1", g)
        start.match_started.resumed = streams > 1
        yield start
        if not Busy.entered.is_set():
            yield request("m1", g, "1")
            await until(Busy.entered.is_set, "the bot asked request 1")
            if dropped_at("asked"):
                return
        if not said(caplog):
            # request 2 waits behind the busy call; the referee times it out meanwhile
            yield request("m1", g, "2")
            yield pb.ServerMessage(decision_rejected=pb.DecisionRejected(
                request_id="2", match_id="m1", incident=pb.INCIDENT_TIMEOUT,
                message="no decision within 1000 ms", fallback=fallback, strikes=1,
                strikes_allowed=3))  # fmt: skip
            await until(lambda: said(caplog), "the refusal said")
            if dropped_at("said"):
                return
        Busy.release.set()
        if streams == 1:
            await s.decision()  # (request 1's answer)
        else:  # (request 1 was asked on a stream gone: its answer is not sent on this one)
            await until(lambda: not bot_calls_running(), "the bot's call returned")

    async def main() -> RunSummary:
        async with (
            fake_arena(script) as arena,
            FaultProxy(int(arena.address.rsplit(":", 1)[1])) as proxy,
        ):
            proxies.append(proxy)
            runner = BotRunner(Busy, proxy.address, "tok", initial_backoff=0.01, retry_for=GUARD)
            return await asyncio.wait_for(runner.run(), 3 * GUARD)

    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            summary = asyncio.run(main())
    finally:
        Busy.release.set()
    assert streams == summary.connections == (1 if drop is None else 2)
    [line] = said(caplog)
    assert summary.rejected == 1
    assert "(timeout, strike 1 of 3): no decision within 1000 ms" in line, line
    assert "(deal 1, bidding; the bot was not asked it); the referee played" in line, line
    assert "Busy." not in line and "act()" not in line, line  # (the old line: "(Busy.act() ...")
