"""Mutation review of sdk/client.py, round 43: the parts added since
test_mutation_review_sdk.py (batches, ``Decision.failed``, the stop notice, resumed
matches, hooks, the end of a run). Mutants were made by hand one at a time and the tests
of tests/sdk and tests/e2e that exercise them were run against each; a test here for each
one they let live, through the runner's public surface: ``BotRunner.run`` against a real
referee, or against a scripted arena (tests/sdk/test_hostile_arena.py) where a real one
never sends what is needed. Ids and edits are in each test's docstring.

56 mutants (C1-C56): 36 killed by the existing tests, 14 killed here, 2 by
tests/sdk/test_workers_round43.py (C53 and C54: a worker process not told to forget the bot
of a match that ended, or was started again, holds the bot, invisible to its author), 4
left: C48 (``>`` for ``>=`` between two measured times: equivalent), C25, C27 and C51 (they
differ only for an answer within a millisecond or two of its deadline: no test without a
timed assertion). No mutant showed a defect of the code."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

from arena.protocol import action_event_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, GameResult, Give, Pass, Phase, PlayerView
from sdk import Bot
from tests.sdk.test_hostile_arena import (
    WELCOME,
    Out,
    Stream,
    _game,
    ended,
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _ending
from tests.support.harness import arena

GUARD = 30.0


class Quick(Bot):
    """Answers the first legal action, on the event loop."""

    quick = True

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


# ---------------------------------------------------------------------- batches


def test_decisions_go_out_in_batches_of_at_most_64() -> None:
    """C3: ``<=`` for ``<`` in ``_Outbox.flush`` put 65 decisions in one DecisionBatch.
    (Benign against the referee, which takes 256; the SDK keeps its own bound.) An arena
    sending one Batch of 70 requests gets 70 answers, no DecisionBatch over 64."""
    g = _game()
    n = 70

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        for i in range(n):
            yield started(f"m{i}", g)
        batch = pb.ServerMessage(
            batch=pb.Batch(messages=[request(f"m{i}", g, "1") for i in range(n)])
        )
        yield batch
        for _ in range(n):
            assert await s.decision() is not None

    summary, arena = play(Quick, script)
    stream = arena.streams[0]
    assert len(stream.decided()) == n, summary
    sizes = [len(m.decisions.decisions) for m in stream.received if m.HasField("decisions")]
    assert sizes and max(sizes) <= 64, sizes


# ---------------------------------------------------------------------- the Welcome


def test_a_welcome_of_no_protocol_version_is_no_violation(caplog: pytest.LogCaptureFixture) -> None:
    """C7: ``!= PROTOCOL_VERSION`` for ``not in (0, PROTOCOL_VERSION)`` called an arena
    whose Welcome leaves the version unset (0: one before the field) a protocol
    violation, though the bot plays with it as with any."""
    g = _game()
    unset = pb.ServerMessage()
    unset.CopyFrom(WELCOME)
    unset.welcome.protocol_version = 0

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield unset
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        summary, _ = play(Quick, script)
    assert summary.decisions == 1
    assert "protocol violation" not in caplog.text


# ---------------------------------------------------------------------- the end of a run


class SlowThenEnd(Bot):
    """Its decision takes 0.3 s; notes its ``on_match_end``."""

    ended: ClassVar[list[str]] = []

    def act(self, view: PlayerView) -> Action:
        time.sleep(0.3)
        return view.legal_actions[0]

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        SlowThenEnd.ended.append(self.match_id)


def test_the_last_hooks_run_after_the_arena_ends_the_stream() -> None:
    """C39: ``_drain`` given no time (``timeout=0.0`` for 5.0) cancelled the steps queued
    when the arena ended the stream: a match's end that came while the bot was still
    deciding (the end of a tournament) never reached its ``on_match_end``."""
    g = _game()
    SlowThenEnd.ended = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        yield ended("m1")  # (and the stream ends while the bot still thinks)

    summary, _ = play(SlowThenEnd, script)
    assert summary.matches == 1
    assert SlowThenEnd.ended == ["m1"]


class Starts(Quick):
    """Notes the match of each ``on_match_start``."""

    started: ClassVar[list[str]] = []

    def on_match_start(self, view: PlayerView) -> None:
        Starts.started.append(self.match_id)


def test_a_match_started_after_the_last_one_is_not_played(caplog: pytest.LogCaptureFixture) -> None:
    """C55: without the check of ``_stopping`` in ``_on_match_started``, a bot of
    ``matches=1`` seated again after its match ended and it closed its side (a
    tournament's schedule) made a bot for it and started it: the author's
    ``on_match_start`` ran for a match the bot was never going to play. C47 too: a
    ``stop()`` that does not close the bot's side (``_out.put_nowait(None)`` dropped) left
    the arena unaware that the bot was done until the stream was cut 3 s later."""
    g = _game()
    Starts.started = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None
        yield ended("m1")
        await s.closed()  # the bot has played its one match and left
        yield started("m2", g)
        yield request("m2", g, "1")
        await asyncio.sleep(0.5)

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        summary, arena = play(Starts, script, matches=1)
    assert summary.matches == 1
    assert Starts.started == ["m1"]
    assert arena.streams[0].decided() == [("m1", "1")]
    assert "match m2: seated after the bot stopped" in caplog.text


def test_an_arena_without_the_batch_feature_gets_no_decision_batch() -> None:
    """C6: ``out.batch = True`` for ``"batch" in w.features`` sent DecisionBatches to an
    arena whose Welcome does not list the feature (an older referee: it cannot read
    them). Answers to a Batch of requests go out one Decision each."""
    g = _game()
    plain = pb.ServerMessage()
    plain.CopyFrom(WELCOME)
    del plain.welcome.features[:]

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield plain
        for i in range(10):
            yield started(f"m{i}", g)
        for rid in "123":
            reqs = [request(f"m{i}", g, rid) for i in range(10)]
            yield pb.ServerMessage(batch=pb.Batch(messages=reqs))
            for _ in range(10):
                assert await s.decision() is not None

    summary, arena = play(Quick, script)
    kinds = [m.WhichOneof("kind") for m in arena.streams[0].received]
    assert kinds == ["hello"] + ["decision"] * 30, (kinds, summary)


# ---------------------------------------------------------------------- events


class Told(Quick):
    """Notes the seat of each action it is told of."""

    told: ClassVar[list[int]] = []

    def on_action(self, view: PlayerView, seat: int, action: object) -> None:
        Told.told.append(seat)


def _passes(first: int, last: int) -> pb.ServerMessage:
    """Action events ``first`` to ``last`` of match m1: passes, of seats 1, 2, 0, ..."""
    src = pb.ACTION_SOURCE_UNSPECIFIED
    evs = [action_event_to_pb("m1", n, src, n % 3, Pass()) for n in range(first, last + 1)]
    return pb.ServerMessage(events=evs)


def test_a_resumption_numbered_behind_the_events_told_repeats_none() -> None:
    """C16: ``m.seq = ms.seq`` for ``max(m.seq, ms.seq)`` on a resumed MatchStarted let
    an arena whose resumption is numbered behind the events the bot was told (seq 1 after
    events 1-3) tell events 2 and 3 again: ``on_action`` counted those actions twice."""
    g = _game()
    Told.told = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield _passes(1, 3)
        again = started("m1", g)
        again.match_started.resumed = True
        again.match_started.seq = 1
        yield again
        yield _passes(2, 4)
        yield request("m1", g, "1")
        assert await s.decision() is not None

    summary, _ = play(Told, script)
    assert summary.decisions == 1
    assert Told.told == [1, 2, 0, 1]


# ---------------------------------------------------------------------- a real referee


def _referee_match(
    tmp: Path, factories: list[Any], **config: Any
) -> tuple[dict[str, Any], list[Any]]:
    """One classic match (seed 7, ended after its first deal) of SDK runners of ``factories`` (bots
    a, b, c; each runner asked for one match) on a real referee: its record and each
    runner's summary (or what its run raised)."""
    names = ["a", "b", "c"][: len(factories)]

    async def main() -> tuple[dict[str, Any], list[Any]]:
        async with arena(tmp, **config) as a:
            tasks = await a.runners(names, factories, 1)
            rec = await a.referee.run_match("m1", "classic", 7, names, time_limit_s=0.001)
            done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), GUARD)
            return rec, list(done)

    return asyncio.run(main())


class Unmakeable(Bot):
    def __init__(self) -> None:
        raise RuntimeError("no model file")


def test_a_match_played_without_the_bot_still_ends_a_run_of_one_match(tmp_path: Path) -> None:
    """C18: without ``_unmade[...] = _UNMADE`` when the bot cannot be made, the end of
    the match it was seated in was "for a match this bot never held": not counted, so a
    run of ``matches=1`` (``--once``) never ended. It ends with the match counted and the
    failure in ``errors``."""
    rec, (summary, *_) = _referee_match(
        tmp_path, [Unmakeable, Quick, Quick], decision_ms=300, time_bank_ms=0
    )
    assert rec["result"] is not None
    assert (summary.matches, summary.errors, summary.decisions) == (1, 1, 0), summary


# ---------------------------------------------------------------------- requests


class LateOnce(Quick):
    """Says it is quick, but its second decision takes 0.3 s."""

    calls: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        LateOnce.calls += 1
        if LateOnce.calls == 2:
            time.sleep(0.3)
        return view.legal_actions[0]


def test_a_quick_bots_answer_past_its_deadline_is_not_sent() -> None:
    """C22: without the ``_too_late`` check on the inline path, a quick bot's answer that
    came past the request's limit and bank was sent all the same: the referee, which has
    played its fallback, refuses it as a wrong request (a second warning, an incident in
    the record). It is dropped, as on the worker-thread path; the next is answered."""
    g = _game()
    LateOnce.calls = 0

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        assert await s.decision() is not None  # (the bot is made: it is asked inline)
        late = request("m1", g, "1")
        late.decision_request.time_limit_ms, late.decision_request.time_bank_ms = 50, 0
        yield late
        await asyncio.sleep(0.5)  # (its answer would have come by now)
        yield request("m1", g, "2")
        assert await s.decision() is not None

    summary, arena = play(LateOnce, script)
    assert LateOnce.calls == 3
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")], summary


class HeldFirst(Bot):
    """Its first decision waits until released; notes each decision."""

    release = threading.Event()
    asked: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        HeldFirst.asked += 1
        if HeldFirst.asked == 1:
            HeldFirst.release.wait(GUARD)
        return view.legal_actions[0]


def test_a_request_asked_again_on_a_new_stream_is_answered_there() -> None:
    """C23: ``w.out`` left out of what a newer request replaces in a waiting step: a
    request queued behind the bot's call in flight, whose stream dropped, and asked again
    on the next stream, was answered to the dropped stream (kept, never sent): the referee
    timed it out."""
    g = _game()
    HeldFirst.release.clear()
    HeldFirst.asked = 0

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")  # the bot holds it
        while not HeldFirst.asked:
            await asyncio.sleep(0.01)
        yield request("m1", g, "2")  # it waits behind
        await asyncio.sleep(0.2)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        again = started("m1", g)
        again.match_started.resumed = True
        yield again
        yield request("m1", g, "2")
        await asyncio.sleep(0.2)  # (taken in before the bot is let go)
        HeldFirst.release.set()
        assert await s.decision(timeout=10) is not None

    result, arena = _ending(HeldFirst, first, second)
    HeldFirst.release.set()
    assert arena.streams[1].decided() == [("m1", "2")], result
    assert HeldFirst.asked == 2


class RaisesOnce(Quick):
    """Raises in its first decision (the fallback goes out), then answers."""

    calls: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        RaisesOnce.calls += 1
        if RaisesOnce.calls == 1:
            raise ValueError("a bug")
        return view.legal_actions[0]


def test_a_failed_decision_is_counted_and_told_to_the_referee(tmp_path: Path) -> None:
    """C31, C33: a decision the bot failed (it raised: the fallback is sent) counts in the
    run's ``errors`` (dropped from ``_count``, the summary said 0), and its Decision says
    so (``failed``, dropped: the referee recorded no ``bot_error``, and the bot's page
    showed a clean match)."""
    RaisesOnce.calls = 0
    rec, (summary, *_) = _referee_match(tmp_path, [RaisesOnce, Quick, Quick])
    assert summary.errors == 1, summary
    kinds = [(i["kind"], i["seat"]) for i in rec["incidents"]]
    assert kinds == [("bot_error", 0)], rec["incidents"]
    assert "ValueError" in rec["incidents"][0]["detail"]


class SlowToMake(Bot):
    """Its ``__init__`` takes 0.3 s; notes its ``on_match_end``."""

    ended: ClassVar[list[str]] = []

    def __init__(self) -> None:
        super().__init__()
        time.sleep(0.3)

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        SlowToMake.ended.append(self.match_id)


def test_a_match_that_ends_while_its_bot_is_made_reaches_on_match_end() -> None:
    """C36: ``m.bot is not None and`` for ``m.bot is None or`` left ``on_match_end`` out
    for a match that ended while its bot was still being made (a short match, a slow
    ``__init__``): the hook is queued behind the making, and runs once the bot is made."""
    g = _game()
    SlowToMake.ended = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield ended("m1")
        await s.closed()

    summary, _ = play(SlowToMake, script, matches=1)
    assert summary.matches == 1
    assert SlowToMake.ended == ["m1"]


# ---------------------------------------------------------------------- reconnecting


class _Waits(logging.Handler):
    """The waits the runner logs before each reconnect."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "reconnecting in" in record.getMessage():
            assert isinstance(record.args, tuple)
            self.waits.append(float(record.args[-1]))  # type: ignore[arg-type]


def test_a_retry_after_of_0_waits_the_first_back_off_step() -> None:
    """C44: without the floor of ``initial_backoff`` on the arena's ``retry-after-ms``, an
    arena saying 0 was asked again at once, in a tight loop of refusals."""

    async def refuse(s: Stream) -> AsyncIterator[Out]:
        await _end(grpc.StatusCode.RESOURCE_EXHAUSTED, "reconnecting too often",
                   (("retry-after-ms", "0"),))  # fmt: skip
        yield WELCOME

    async def done(s: Stream) -> AsyncIterator[Out]:
        await _end(grpc.StatusCode.UNAUTHENTICATED, "no")
        yield WELCOME

    seen = _Waits()
    log = logging.getLogger("sdk.client")
    log.addHandler(seen)
    try:
        result, arena = _ending(Quick, refuse, refuse, done, initial_backoff=0.2, retry_for=GUARD)
    finally:
        log.removeHandler(seen)
    assert len(arena.streams) == 3, result
    assert len(seen.waits) == 2 and min(seen.waits) >= 0.2, seen.waits


def test_retry_for_counts_a_try_never_welcomed_from_its_start() -> None:
    """C45: ``failing_since = now`` for ``opened`` started --retry-for's count at the end
    of a first try that was never welcomed: an arena that takes the stream and never says
    Welcome kept a bot of ``retry_for=0.5`` for a second try (a bot of --retry-for 25
    stuck 30 s waiting gave up after 55 s)."""

    async def silent(s: Stream) -> AsyncIterator[Out]:
        await asyncio.sleep(GUARD)
        yield WELCOME

    result, arena = _ending(Quick, silent, retry_for=0.5)
    # C46 too: without the cap of the Welcome's wait at --retry-for (but at least 1 s),
    # the try waited the whole welcome timeout (30 s) before giving up.
    assert "no Welcome from the arena at " in str(result) and " within 1 s" in str(result)
    assert len(arena.streams) == 1


# ---------------------------------------------------------------------- answers


class GivesToNoSeat(Bot):
    """Passes a card to seat -1 (a bug: no such seat)."""

    def act(self, view: PlayerView) -> Action:
        first = view.legal_actions[0]
        assert isinstance(first, Give)
        return Give(first.card, -1)


def test_a_give_to_a_seat_below_0_goes_out_as_no_seat() -> None:
    """C50: ``Give(card, 0)`` for ``Give(card, 2**32 - 1)`` sent a pass to seat -1 as one
    to seat 0, a seat that may be a legal receiver: the bot's bug was played as a legal
    pass. It goes out to seat 2**32 - 1, which the referee refuses as illegal."""
    g = _game()
    while g.phase != Phase.PASSING:
        legal = g.legal_actions()
        g.apply(Pass() if Pass() in legal else legal[0])

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None

    summary, arena = play(GivesToNoSeat, script)
    [sent] = [m.decision for m in arena.streams[0].received if m.HasField("decision")]
    assert sent.action.give.to_seat == 2**32 - 1, (sent, summary)
