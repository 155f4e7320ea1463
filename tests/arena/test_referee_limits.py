"""The referee's limits at their edges, without a network: the flood counter, the config's
bounds, the size of a DecisionBatch, the wait a refused reconnect names."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import grpc
import pytest

from arena.protocol import RETRY_AFTER_MS
from arena.referee import Referee, RefereeConfig
from arena.referee.core import MAX_DECISION_BATCH, _Refusal
from arena.referee.sessions import RateMeter, Stream
from arena.v1 import arena_pb2 as pb


class _Clock:
    """Stands in for the event loop where only its ``time()`` is read."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


def _loop(clock: _Clock) -> asyncio.AbstractEventLoop:
    return cast(asyncio.AbstractEventLoop, clock)


# ----------------------------------------------------------------------------- RateMeter


def test_the_flood_limit_itself_is_tolerated_and_one_more_is_over() -> None:
    """Mutation audit: ``RateMeter.over`` compared ``total >= limit``: the ``flood_limit``-th
    stray message closed the stream, though the limit is what a bot may send (the docs:
    "more than this many")."""
    loop = _loop(_Clock())
    meter = RateMeter(5, 10.0)
    assert [meter.over(loop) for _ in range(6)] == [False] * 5 + [True]
    # Weighed: an event of the limit's whole weight is still within it, one more is not.
    assert RateMeter(5, 10.0).over(loop, 5) is False
    assert RateMeter(5, 10.0).over(loop, 6) is True


def test_the_flood_window_forgets_what_left_it() -> None:
    """What left the window no longer counts: at the limit, a later event is within it
    again once the earlier ones are older than the window."""
    clock = _Clock()
    loop = _loop(clock)
    meter = RateMeter(3, 10.0)
    assert not any(meter.over(loop) for _ in range(3))
    assert meter.full(loop) == pytest.approx(10.0)
    clock.now += 10.5
    assert meter.full(loop) == 0.0
    assert meter.over(loop) is False


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize("key", ["max_queued", "flood_limit", "reconnect_limit"])
def test_limits_of_zero_are_refused_naming_the_key(key: str) -> None:
    """Mutation audit: ``reconnect_limit`` was dropped from the keys checked to be at least
    1: ``RefereeConfig(reconnect_limit=0)`` was taken (every stream then refused). Each of
    the three limits must be at least 1, and the error names it."""

    def config(value: int) -> RefereeConfig:
        kwargs: dict[str, Any] = {key: value}
        return RefereeConfig(**kwargs)

    with pytest.raises(ValueError, match=rf"^{key} must be at least 1, got 0$"):
        config(0)
    with pytest.raises(ValueError, match=key):
        config(-1)
    assert getattr(config(1), key) == 1


# ----------------------------------------------------------------------------- DecisionBatch


class _Reader:
    """A call's reading side: ``messages``, then EOF."""

    def __init__(self, *messages: pb.BotMessage) -> None:
        self.messages = list(messages)

    async def read(self) -> Any:
        return self.messages.pop(0) if self.messages else grpc.aio.EOF


def _read_batch(n: int, **config: Any) -> tuple[_Refusal | None, int]:
    """A welcomed stream of a fresh referee reads a DecisionBatch of ``n`` decisions for no
    match: the refusal that ends the stream (``None``: it read on to EOF), and how many
    answers (rejections) were queued for the bot."""

    async def main() -> tuple[_Refusal | None, int]:
        settings = {"flood_limit": 10_000, "max_wrong_recorded": 10_000, **config}
        ref = Referee(RefereeConfig(**settings))
        ref.add_bot("b", "tok")
        session = ref.session("b")
        stream = Stream("peer")
        session.attach(stream)
        ds = [pb.Decision(request_id=str(i), match_id="nowhere") for i in range(n)]
        context = _Reader(pb.BotMessage(decisions=pb.DecisionBatch(decisions=ds)))
        try:
            await ref._read_loop(session, stream, context)
        except _Refusal as e:
            return e, stream.queued
        return None, stream.queued

    return asyncio.run(main())


def test_a_decision_batch_of_exactly_the_limit_is_read() -> None:
    """Mutation audit: the referee refused a DecisionBatch of ``n >= MAX_DECISION_BATCH``
    decisions: a batch of exactly the limit (256) ended the stream with INVALID_ARGUMENT.
    It is read decision by decision; only one more is refused whole."""
    refusal, answered = _read_batch(MAX_DECISION_BATCH)
    assert refusal is None, refusal
    assert answered == MAX_DECISION_BATCH  # each decision handled (rejected: no such seat)

    refusal, answered = _read_batch(MAX_DECISION_BATCH + 1)
    assert refusal is not None and refusal.code is grpc.StatusCode.INVALID_ARGUMENT
    assert refusal.message == (
        f"a DecisionBatch holds at most {MAX_DECISION_BATCH} decisions, "
        f"not {MAX_DECISION_BATCH + 1}"
    )
    assert answered == 0


def test_answers_for_no_seat_are_answered_twenty_times_a_window() -> None:
    """Defect (leak audit): every Decision for a match the bot has no seat in was answered,
    and each answer carries the events waiting for the bot: sent every 20 ms, they let a
    bot see the other seats' moves as they came and time their thinking. Only
    ``max_wrong_recorded`` (20) are answered per flood window now; the rest are read and
    counted against the flood limit."""
    refusal, answered = _read_batch(200, max_wrong_recorded=20)
    assert refusal is None and answered == 20


# ----------------------------------------------------------------------------- reconnects


class _RefusedContext:
    """A ``Play`` call's context as far as a refusal before the Hello reads it."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.aborts: list[tuple[grpc.StatusCode, str, tuple[tuple[str, str], ...]]] = []

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    async def abort(
        self, code: grpc.StatusCode, details: str = "",
        trailing_metadata: tuple[tuple[str, str], ...] = (),
    ) -> None:  # fmt: skip
        self.aborts.append((code, details, trailing_metadata))


def test_a_refused_reconnect_names_its_wait_in_milliseconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutation audit: the ``retry-after-ms`` trailing metadata of a stream refused for
    reconnecting too often was computed as ``wait_s * 100``: the SDK, which waits what it
    is told, came back ten times too early and was refused again. With the loop's clock
    held still the wait is exact: streams let in at t=1000, window 10 s, asked at t=1004.5:
    5.5 s, that is 5500 ms, as the details say in seconds."""

    async def main() -> list[tuple[grpc.StatusCode, str, tuple[tuple[str, str], ...]]]:
        loop = asyncio.get_running_loop()
        clock = _Clock(1000.0)
        ref = Referee(RefereeConfig(reconnect_limit=2, flood_window_s=10.0))
        ref.add_bot("x", "tok-x")
        session = ref.session("x")
        for _ in range(2):  # two streams let in: the limit is reached
            session.connects.add(_loop(clock))
        clock.now = 1004.5
        context = _RefusedContext("tok-x")
        with monkeypatch.context() as mp:
            mp.setattr(loop, "time", clock.time)
            await ref.serve_stream(context)
        assert session.reserved is None and session.stream is None
        return context.aborts

    aborts = asyncio.run(main())
    assert len(aborts) == 1, aborts
    code, details, trailing = aborts[0]
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "more than 2 streams of bot 'x' opened within 10 s: wait 5.5 s" in details
    assert trailing == ((RETRY_AFTER_MS, "5500"),)


# ----------------------------------------------------------------------------- weights


def _weighed(*messages: pb.BotMessage, flood_limit: int) -> _Refusal | None:
    """A welcomed stream of a fresh referee reads ``messages``, each decision with match id
    ``"ok"`` taken as answering a pending request, every other one as a stray: the refusal
    that ends the stream (``None``: it read on to EOF)."""

    async def main() -> _Refusal | None:
        ref = Referee(RefereeConfig(flood_limit=flood_limit))
        ref.add_bot("b", "tok")
        session = ref.session("b")
        stream = Stream("peer")
        session.attach(stream)

        def on_message(_: Any, msg: pb.BotMessage) -> int:
            ds = msg.decisions.decisions if msg.HasField("decisions") else [msg.decision]
            return sum(d.match_id != "ok" for d in ds)

        ref.on_message = on_message  # type: ignore[method-assign]
        try:
            await ref._read_loop(session, stream, _Reader(*messages))
        except _Refusal as e:
            return e
        return None

    return asyncio.run(main())


def _answer(size: int) -> pb.Decision:
    """A decision answering a pending request, padded (in its request id) to ``size`` bytes."""
    d = pb.Decision(match_id="ok", request_id="")
    d.request_id = "r" * (size - d.ByteSize() - 3)  # (the length takes 1 or 2 bytes)
    d.request_id += "r" * (size - d.ByteSize())
    assert d.ByteSize() == size, d.ByteSize()
    return d


def test_an_answer_weighs_its_kib_past_answer_bytes_a_decision() -> None:
    """Mutation audit: the weight of a message that answers requests was not tested by
    itself (only a 200 KiB answer was): ANSWER_BYTES taken once per batch rather than per
    decision, or twice per decision, and answers weighing less than nothing (crediting
    strays) all passed the tests."""
    from arena.referee.core import ANSWER_BYTES

    def alone(d: pb.Decision) -> pb.BotMessage:
        return pb.BotMessage(decision=d)

    def batch(*ds: pb.Decision) -> pb.BotMessage:
        return pb.BotMessage(decisions=pb.DecisionBatch(decisions=ds))

    # An answer up to ANSWER_BYTES + 1023 bytes in all weighs nothing; 1 KiB more, 1.
    assert _weighed(*[alone(_answer(ANSWER_BYTES + 1000))] * 50, flood_limit=1) is None
    refusal = _weighed(alone(_answer(ANSWER_BYTES + 3000)), flood_limit=1)  # weighs 2
    assert refusal is not None and refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"an answer, its KiB past {ANSWER_BYTES} bytes a decision" in refusal.message
    assert _weighed(alone(_answer(ANSWER_BYTES + 3000)), flood_limit=2) is None
    # A batch has ANSWER_BYTES for each decision it holds.
    four = batch(*[_answer(ANSWER_BYTES - 30)] * 4)
    assert four.ByteSize() < 4 * ANSWER_BYTES
    assert _weighed(*[four] * 20, flood_limit=1) is None
    # A stray weighs 1 + its KiB.
    big_stray = alone(pb.Decision(match_id="nowhere", request_id="r" * 6000))  # 6 KiB: weighs 1 + 5
    assert _weighed(big_stray, flood_limit=5).code is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[union-attr]
    assert _weighed(big_stray, flood_limit=5 + 1) is None
    # Small answers weigh nothing, not less: they leave the strays' limit as it was.
    small = [alone(_answer(100))] * 10
    stray = alone(pb.Decision(match_id="nowhere"))
    assert _weighed(*small, *[stray] * 3, flood_limit=3) is None
    refusal = _weighed(*small, *[stray] * 4, flood_limit=3)
    assert refusal is not None and refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED


def test_refusals_past_the_logged_ones_are_counted_in_the_next_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutation audit: of the refused stream openings over REFUSALS_LOGGED a window, the
    next line logged is to say how many were not; dropping that count (or never resetting
    it) went unnoticed."""
    import logging

    from arena.referee.core import REFUSALS_LOGGED

    caplog.set_level(logging.INFO, logger="arena.referee")
    window = 0.05

    async def main() -> None:
        # The event loop's clock set by hand: by the real one, a pause of this process
        # among the first refusals (50 ms: a loaded machine) let the window pass, and more
        # than REFUSALS_LOGGED were logged.
        now = [0.0]
        asyncio.get_running_loop().time = lambda: now[0]  # type: ignore[method-assign]
        ref = Referee(RefereeConfig(flood_window_s=window))
        for i in range(REFUSALS_LOGGED + 5):
            ref._log_refusal("", "refused %d", i)
        now[0] = 2 * window  # the window passes
        ref._log_refusal("", "refused %d", 100)
        ref._log_refusal("", "refused %d", 101)

    asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused")]
    assert lines == [f"refused {i}" for i in range(REFUSALS_LOGGED)] + [
        "refused 100 (5 more refused streams without a bot's token not logged)",
        "refused 101",
    ]
