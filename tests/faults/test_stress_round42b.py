"""Round 42b: the round's new tests under load, and what review round 42 checked by reading.

- A bot's answer kept for a stream that went away (``m.answers``, ``m.answer_failed`` in
  ``sdk/client.py``) is sent again when the arena asks the request again on the next
  stream: when it was the fallback of a decision the bot failed, with its
  ``Decision.failed``; and the next decision's answer, kept so in turn, is sent again
  without it (a failure is never carried to another decision). Both ways an answer is
  kept: decided after its stream went away (a bot in a worker thread), and sent on a
  stream lost before the arena took it (a quick bot, on the loop).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import ClassVar

import grpc
import pytest

from arena.protocol import action_from_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, Game, PlayerView
from engine.actions import fallback_action
from sdk import Bot
from sdk.client import BotRunner, RunSummary
from tests.sdk.test_hostile_arena import (
    GUARD,
    WELCOME,
    FakeArena,
    Out,
    Script,
    Stream,
    _game,
    ended,
    fake_arena,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _Ending


class FailsWhileAway(Bot):
    """Asked in a worker thread. Each of its first two decisions waits until the arena lets
    it go (after the stream it was asked on has gone away); the first then raises, the
    second answers the first legal action, as do the rest."""

    asked: ClassVar[list[threading.Event]] = []
    go: ClassVar[list[threading.Event]] = []
    calls: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        n = type(self).calls
        type(self).calls += 1
        if n < 2:
            self.asked[n].set()
            if not self.go[n].wait(GUARD):
                raise AssertionError(f"decision {n + 1}: never let go")
            if n == 0:
                raise ValueError("boom")
        return view.legal_actions[0]


@pytest.fixture
def _fresh_bot() -> Iterator[None]:
    FailsWhileAway.asked = [threading.Event(), threading.Event()]
    FailsWhileAway.go = [threading.Event(), threading.Event()]
    FailsWhileAway.calls = 0
    yield
    for e in FailsWhileAway.go:  # (a failed test never leaves the bot's thread waiting)
        e.set()


def _to_seat(g: Game, seat: int) -> None:
    """Play the other seats' fallbacks until ``seat`` is to act."""
    while g.to_act != seat:
        g.apply(fallback_action(g.legal_actions()))


def _resumed(g: Game) -> pb.ServerMessage:
    msg = started("m1", g)
    msg.match_started.resumed = True
    return msg


def _run(bot: type[Bot], *scripts: Script) -> tuple[RunSummary, FakeArena]:
    """``bot`` in a BotRunner (one match) against ``scripts``, which may end their stream
    with a status (``_end``): its summary and the arena."""

    async def main() -> tuple[RunSummary, FakeArena]:
        async with fake_arena(*scripts) as arena:
            runner = BotRunner(bot, arena.address, "tok", initial_backoff=0.01,
                               retry_for=GUARD, matches=1)  # fmt: skip
            return await asyncio.wait_for(runner.run(), 3 * GUARD), arena

    import tests.sdk.test_hostile_arena as hostile

    saved, hostile.FakeArena = hostile.FakeArena, _Ending  # type: ignore[misc]
    try:
        return asyncio.run(main())
    finally:
        hostile.FakeArena = saved  # type: ignore[misc]


@pytest.mark.usefixtures("_fresh_bot")
def test_a_failed_decisions_answer_kept_for_a_gone_stream_is_sent_again_with_its_failure() -> None:
    """Stream 1 asks request 1 and ends (UNAVAILABLE) while the bot decides; the bot then
    fails: its fallback is kept. Stream 2 asks request 1 again: the fallback is sent with
    ``failed`` = "ValueError" (the referee records the decision the bot failed). Stream 2
    asks request 2 and ends while the bot decides; the bot answers. Stream 3 asks request
    2 again: that answer is sent with no ``failed`` (the earlier failure is not carried)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    sent: dict[str, pb.Decision] = {}

    # (no assertion inside a script: it would end the stream with UNKNOWN, and the bot
    # reconnect; what each stream got is asserted after the run)
    async def let_asked(n: int) -> None:
        await asyncio.to_thread(FailsWhileAway.asked[n].wait, GUARD)

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await let_asked(0)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed(g)
        FailsWhileAway.go[0].set()  # the bot fails now, its stream gone
        yield request("m1", g, "1")  # asked again: the kept fallback
        d = await s.decision()
        if d is None:
            return
        sent["1"] = d
        g.apply(action_from_pb(d.action), seat=seat)
        _to_seat(g, seat)
        yield request("m1", g, "2")
        await let_asked(1)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def third(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed(g)
        FailsWhileAway.go[1].set()  # the bot answers now, its stream gone
        yield request("m1", g, "2")  # asked again: the kept answer
        d = await s.decision()
        if d is None:
            return
        sent["2"] = d
        yield ended("m1")

    summary, arena = _run(FailsWhileAway, first, second, third)
    assert [s.decided() for s in arena.streams] == [[], [("m1", "1")], [("m1", "2")]]
    one, two = sent["1"], sent["2"]
    # request 1: the fallback of the failed decision (a pass), said failed as it was
    assert one.HasField("failed") and one.failed == "ValueError", one
    assert one.action.WhichOneof("kind") == "pass", one
    # request 2: the bot's own answer, no failure carried to it
    assert not two.HasField("failed"), two
    assert FailsWhileAway.calls == 2  # (each asked once: the answers came from the cache)
    assert summary.errors == 1 and summary.connections == 3


class QuickFailsFirst(Bot):
    """A quick bot (asked on the runner's loop, at once): raises at its first decision,
    then answers the first legal action."""

    quick = True
    calls: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        type(self).calls += 1
        if type(self).calls == 1:
            raise KeyError("first")
        return view.legal_actions[0]


def test_a_failed_decisions_answer_lost_with_its_stream_is_sent_again_with_its_failure() -> None:
    """The other way an answer is kept: sent (on the loop, by a quick bot), then lost with
    its stream before the arena took it; the arena asks it again on the next stream. The
    failed decision's fallback goes again with ``failed`` = "KeyError", as the first time;
    the next decision's answer, lost so and asked again, goes again without it."""
    QuickFailsFirst.calls = 0
    g = _game()
    seat = g.to_act
    assert seat is not None
    sent: dict[str, list[pb.Decision]] = {"1": [], "2": []}

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        d = await s.decision()
        if d is None:
            return
        sent["1"].append(d)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")  # "lost"

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed(g)
        yield request("m1", g, "1")  # asked again: the answer sent before
        d = await s.decision()
        if d is None:
            return
        sent["1"].append(d)
        g.apply(action_from_pb(d.action), seat=seat)
        _to_seat(g, seat)
        yield request("m1", g, "2")
        d = await s.decision()
        if d is None:
            return
        sent["2"].append(d)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")  # "lost"

    async def third(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed(g)
        yield request("m1", g, "2")  # asked again: the answer sent before
        d = await s.decision()
        if d is None:
            return
        sent["2"].append(d)
        yield ended("m1")

    summary, arena = _run(QuickFailsFirst, first, second, third)
    assert [s.decided() for s in arena.streams] == [
        [("m1", "1")],
        [("m1", "1"), ("m1", "2")],
        [("m1", "2")],
    ]
    (a, again), (b, b_again) = sent["1"], sent["2"]
    assert a == again and again.failed == "KeyError", (a, again)
    assert again.action.WhichOneof("kind") == "pass", again
    assert b == b_again and not b_again.HasField("failed"), (b, b_again)
    assert QuickFailsFirst.calls == 2  # (each asked once)
    assert summary.errors == 1 and summary.connections == 3
