"""The runner's reconnect arithmetic and what it tells the arena, without a server: the
``retry-after-ms`` it reads, the back-off after a welcomed session, the Hello's
``running``, and the split of many answers into DecisionBatches."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, cast

import grpc
import pytest

from arena.protocol import RETRY_AFTER_MS
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from sdk.client import _MAX_DECISION_BATCH, BotRunner, _Outbox, _retry_after_s


def _error(
    code: grpc.StatusCode, details: str = "no", trailing: grpc.aio.Metadata | None = None
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing or grpc.aio.Metadata(), details)


# ----------------------------------------------------------------------------- retry-after


def test_retry_after_is_read_as_milliseconds() -> None:
    """Mutation audit: ``_retry_after_s`` divided the ``retry-after-ms`` value by 100: a bot
    told to wait 2.5 s waited 25 s (the existing test only checked it waited at least what
    it was told). The value is milliseconds, capped at 600 s; only RESOURCE_EXHAUSTED
    carries it."""
    exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED

    def told(value: str, code: grpc.StatusCode = exhausted) -> float | None:
        return _retry_after_s(_error(code, "too often", grpc.aio.Metadata((RETRY_AFTER_MS, value))))

    assert told("2500") == pytest.approx(2.5)
    assert told("1") == pytest.approx(0.001)
    assert told("0") == 0.0
    assert told("9999999") == pytest.approx(600.0)  # a bound on what a server can ask
    assert told("-5") == 0.0
    assert told("soon") is None
    assert told("2500", grpc.StatusCode.UNAVAILABLE) is None
    assert _retry_after_s(_error(exhausted, "flood")) is None  # no key: not a wait


# ----------------------------------------------------------------------------- back-off


class _NoJitter(random.Random):
    """Jitter that always picks 1.0 (within its range): the back-off steps exactly."""

    def uniform(self, a: float, b: float) -> float:
        return min(max(1.0, a), b)


def test_a_session_that_worked_resets_the_back_off(caplog: pytest.LogCaptureFixture) -> None:
    """Mutation audit: after a session that was welcomed and then dropped, the runner kept
    the back-off grown by the failures before it: a bot whose connection flapped a few
    times waited longer and longer between sessions that each worked. A session that
    worked after its Welcome (an event, an answer: ``_progress``) starts the back-off
    again from ``initial_backoff``; a Welcome alone does not (an arena that welcomes and
    resets every stream was asked again every 0.25-0.5 s for ever)."""
    unavailable = grpc.StatusCode.UNAVAILABLE
    # Each session: (welcomed, then worked) before it drops.
    script = [(False, False)] * 3 + [(True, True)] + [(True, False)] * 3
    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.001, max_backoff=10)
    runner._rng = _NoJitter()
    tried: list[tuple[bool, bool]] = []

    async def session() -> bool:
        if len(tried) == len(script):
            runner.stop("script done")
            return False
        welcomed, worked = script[len(tried)]
        tried.append((welcomed, worked))
        runner._welcomed, runner._progress = welcomed, worked
        raise _error(unavailable, "dropped")

    runner._session = session  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    assert tried == script
    delays = [
        cast(tuple[Any, ...], r.args)[-1]
        for r in caplog.records
        if "reconnecting in" in r.getMessage()
    ]
    ms = [round(d * 1000, 6) for d in delays]
    # 1, 2, 4 ms while failing; the session that worked starts it again at 1 ms; sessions
    # only welcomed go on doubling.
    assert ms == [1, 2, 4, 1, 2, 4, 8], ms


# ----------------------------------------------------------------------------- Hello.running


class _Call:
    """A ``Play`` call that records what is written and ends (EOF) once the first message
    (the Hello) is written."""

    def __init__(self) -> None:
        self.written: list[pb.BotMessage] = []
        self._first = asyncio.Event()

    async def write(self, msg: pb.BotMessage) -> None:
        self.written.append(msg)
        self._first.set()

    async def done_writing(self) -> None:
        pass

    async def read(self) -> Any:
        await self._first.wait()
        return grpc.aio.EOF

    def cancel(self) -> bool:
        return True


class _Channel:
    def __init__(self, call: _Call) -> None:
        self.call = call

    async def __aenter__(self) -> _Channel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    def stream_stream(self, method: str, **kwargs: Any) -> Any:
        return lambda **kw: self.call


def test_the_hello_names_matches_whose_bot_could_not_be_made_as_running() -> None:
    """Mutation audit: ``Hello.running`` listed only the matches with a bot, not those
    played without one (the factory raised, or the MatchStarted was refused): reconnected,
    the bot was not counted as finishing them, and the arena's lobby could seat it in more
    matches than ``--matches`` allows."""

    async def main() -> list[pb.BotMessage]:
        runner = BotRunner(RandomBot, "127.0.0.1:1", "tok")
        runner._matches["m-played"] = cast(Any, None)  # (only the ids go in the Hello)
        runner._unmade["m-unmade"] = ("it could not be made", 0)
        runner._unmade["m-refused"] = ("its start was refused above", 0)
        call = _Call()
        runner._channel = lambda: cast(grpc.aio.Channel, _Channel(call))  # type: ignore[method-assign]
        assert await asyncio.wait_for(runner._session(), 5) is False  # EOF before a Welcome
        return call.written

    written = asyncio.run(main())
    assert written and written[0].WhichOneof("kind") == "hello", written
    assert sorted(written[0].hello.running) == ["m-played", "m-refused", "m-unmade"]


# ----------------------------------------------------------------------------- DecisionBatch


class _Writes:
    """A call's writing side: every message written, in order."""

    def __init__(self) -> None:
        self.written: list[pb.BotMessage] = []

    async def write(self, msg: pb.BotMessage) -> None:
        self.written.append(msg)

    async def done_writing(self) -> None:
        pass


def test_many_queued_answers_go_out_in_several_decision_batches() -> None:
    """Mutation audit: ``_Outbox.flush`` put every decision queued in one DecisionBatch,
    without the ``_MAX_DECISION_BATCH`` cap: over 256 queued answers made a batch the
    referee refuses whole (INVALID_ARGUMENT, the stream closed). They go out in order, in
    batches of at most ``_MAX_DECISION_BATCH`` (within the referee's 256)."""
    n = 2 * 256 + 3

    async def main() -> list[pb.BotMessage]:
        out = _Outbox()
        out.batch = True
        out.held = True  # no writer task: the flush below writes all
        for i in range(n):
            out.put_nowait(pb.BotMessage(decision=pb.Decision(request_id=str(i), match_id="m")))
        call = _Writes()
        await out.flush(cast(grpc.aio.StreamStreamCall, call))
        assert not out
        return call.written

    written = asyncio.run(main())
    assert all(m.WhichOneof("kind") == "decisions" for m in written), written
    sizes = [len(m.decisions.decisions) for m in written]
    assert len(sizes) > 1 and max(sizes) <= min(_MAX_DECISION_BATCH, 256), sizes
    assert sizes[:-1] == [_MAX_DECISION_BATCH] * (len(sizes) - 1)  # full ones, then the rest
    ids = [d.request_id for m in written for d in m.decisions.decisions]
    assert ids == [str(i) for i in range(n)]


# ----------------------------------------------------------------------------- a call that ends


def test_an_answer_written_to_a_call_that_just_ended_reconnects_not_crashes() -> None:
    """Defect (CI, a 40-match test under load): the call ended (gRPC core failed it,
    INTERNAL) between the read of a decision request and the write of its answer; the
    write raised asyncio.InvalidStateError ("RPC already finished"), which went out of
    ``BotRunner.run``: the bot stopped instead of reconnecting. The write's failure is the
    call's end, which the next read reports as an AioRpcError: the runner's reconnect path."""
    from tests.sdk.test_hostile_arena import WELCOME, _game, request, started

    game = _game(players=("b", "x", "y"))
    script = [WELCOME, started("m", game), request("m", game, "1")]

    class Ends(_Call):
        """Welcomes, starts a match, asks; the call is over before the answer is written."""

        def __init__(self) -> None:
            super().__init__()
            self.reads = list(script)

        async def write(self, msg: pb.BotMessage) -> None:
            if msg.WhichOneof("kind") != "hello":
                raise asyncio.InvalidStateError("RPC already finished.")
            await super().write(msg)

        async def read(self) -> Any:
            await self._first.wait()
            if len(self.reads) == 1:  # the request, once the match's bot is made: answered
                # at once, on the loop (a quick bot), and written by this read's flush
                for _ in range(1000):
                    m = runner._matches.get("m")
                    if m is not None and m.bot is not None:
                        break
                    await asyncio.sleep(0.01)
            if self.reads:
                return self.reads.pop(0).SerializeToString()
            raise _error(grpc.StatusCode.INTERNAL, "Internal error from Core")

    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok")  # (quick: answered on the loop)

    async def main() -> None:
        call = Ends()
        runner._channel = lambda: cast(grpc.aio.Channel, _Channel(call))  # type: ignore[method-assign]
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await asyncio.wait_for(runner._session(), 5)
        assert e.value.code() == grpc.StatusCode.INTERNAL

    asyncio.run(main())
