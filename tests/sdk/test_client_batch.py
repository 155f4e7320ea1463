"""The SDK side of the "batch" feature: it asks for it, reads a ``Batch`` message by
message, and sends answers that queue up together as one ``DecisionBatch``."""

from __future__ import annotations

import asyncio
import logging

import pytest

from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from sdk.client import BotRunner, _Outbox


class _Call:
    """Records what the outbox writes."""

    def __init__(self) -> None:
        self.written: list[pb.BotMessage] = []
        self.done = False

    async def write(self, msg: pb.BotMessage) -> None:
        self.written.append(msg)

    async def done_writing(self) -> None:
        self.done = True


def _decision(i: int) -> pb.BotMessage:
    return pb.BotMessage(decision=pb.Decision(request_id=str(i), match_id="m"))


def _flush(batch: bool, queued: list[pb.BotMessage | None]) -> _Call:
    out = _Outbox()
    out.batch = batch
    out.held = True
    for m in queued:
        out.put_nowait(m)
    call = _Call()
    asyncio.run(out.flush(call))  # type: ignore[arg-type]
    return call


def test_queued_answers_go_out_as_one_decision_batch_when_the_arena_reads_them() -> None:
    hello = pb.BotMessage(hello=pb.Hello(bot_name="b"))
    call = _flush(True, [hello, _decision(1), _decision(2), _decision(3), None])
    kinds = [m.WhichOneof("kind") for m in call.written]
    assert kinds == ["hello", "decisions"]
    assert [d.request_id for d in call.written[1].decisions.decisions] == ["1", "2", "3"]
    assert call.done


def test_a_lone_answer_goes_alone_and_without_the_feature_all_do() -> None:
    assert [m.WhichOneof("kind") for m in _flush(True, [_decision(1)]).written] == ["decision"]
    call = _flush(False, [_decision(1), _decision(2)])
    assert [m.WhichOneof("kind") for m in call.written] == ["decision", "decision"]


def test_a_batch_is_read_message_by_message_and_a_nested_batch_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runner = BotRunner(RandomBot, "localhost:1", "tok")
    out = _Outbox()
    msg = pb.ServerMessage()
    welcome = msg.batch.messages.add()
    welcome.welcome.bot_name = "b"
    welcome.welcome.features.append("batch")
    nested = msg.batch.messages.add()
    nested.batch.messages.add().decision_rejected.message = "hidden in a nested batch"
    msg.batch.messages.add().decision_rejected.message = "after the nested batch"
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        runner._on_message(msg, out)
    assert out.batch  # the Welcome inside the batch was read
    # (round 57: a refusal for no match the runner held counts no rejected answer; that
    # the next one was read and the nested one skipped is said by the lines below)
    assert runner.summary.rejected == 0
    assert "a Batch inside a Batch" in caplog.text
    assert "after the nested batch" in caplog.text
    assert "hidden in a nested batch" not in caplog.text
