"""The "batch" feature: messages that queue up for a bot go out as one ``Batch``, and a
bot's ``DecisionBatch`` is read decision by decision (docs/protocol.md#batches)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from arena.protocol import message_bytes
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import MAX_DECISION_BATCH
from arena.referee.sessions import MAX_BATCH, MAX_BATCH_BYTES, Stream
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.support.core_internal import asking_again, core_internal


def _event(i: int) -> pb.ServerMessage:
    return pb.ServerMessage(event=pb.Event(match_id="m", seq=i))


def _written(
    batch: bool, queued: int, then_close: bool, make: Any = None
) -> list[pb.ServerMessage]:
    """What the writer of a stream writes for ``queued`` messages (``make(i)``, events by
    default) put behind the Welcome before it runs; the Welcome, always alone, left out."""
    make = make or _event

    async def main() -> list[pb.ServerMessage]:
        stream = Stream("peer", batch=batch)
        written: list[pb.ServerMessage] = []

        async def write(msg: pb.ServerMessage | bytes) -> None:
            # (a batch comes as its wire bytes: read as the bot reads them)
            written.append(pb.ServerMessage.FromString(message_bytes(msg)))
            await asyncio.sleep(0)

        stream.put(pb.ServerMessage(welcome=pb.Welcome(bot_name="b")))
        for i in range(queued):
            stream.put(make(i))
        if then_close:
            stream.close()
        task = asyncio.create_task(stream.write_loop(write))
        await asyncio.sleep(0.01)
        stream.put(_event(queued))  # alone once the queue is drained: never held back
        await asyncio.sleep(0.01)
        stream.close()
        await asyncio.wait_for(task, 60)  # (a guard: a loaded machine may pause us 1 s)
        assert written[0].WhichOneof("kind") == "welcome", written[0]
        return written[1:]

    return asyncio.run(main())


def _flat(written: list[pb.ServerMessage]) -> list[int]:
    out: list[int] = []
    for m in written:
        items = m.batch.messages if m.WhichOneof("kind") == "batch" else [m]
        out += [x.event.seq for x in items]
    return out


def test_queued_messages_go_out_as_one_batch_in_order() -> None:
    written = _written(batch=True, queued=5, then_close=False)
    assert [m.WhichOneof("kind") for m in written] == ["batch", "event"]
    assert _flat(written) == [0, 1, 2, 3, 4, 5]
    assert not written[0].events  # a batch carries no events of its own
    assert all(x.WhichOneof("kind") != "batch" for x in written[0].batch.messages)


def test_without_the_feature_every_message_goes_alone() -> None:
    written = _written(batch=False, queued=5, then_close=False)
    assert [m.WhichOneof("kind") for m in written] == ["event"] * 6
    assert _flat(written) == [0, 1, 2, 3, 4, 5]


def test_a_batch_holds_at_most_max_batch_messages() -> None:
    written = _written(batch=True, queued=MAX_BATCH + 3, then_close=False)
    sizes = [len(m.batch.messages) if m.HasField("batch") else 1 for m in written]
    assert sizes[0] == MAX_BATCH
    assert _flat(written) == list(range(MAX_BATCH + 4))


def test_a_batch_holds_at_most_max_batch_bytes() -> None:
    """Views carry every earlier deal's result, so those of a long match are large: a batch
    stops below MAX_BATCH_BYTES (gRPC clients refuse messages over 4 MiB by default), and
    the message that did not fit starts the next one."""

    def big(i: int) -> pb.ServerMessage:
        m = _event(i)
        m.event.match_id = "m" * (300 << 10)
        return m

    written = _written(batch=True, queued=10, then_close=False, make=big)
    assert _flat(written) == list(range(11))
    assert all(m.ByteSize() <= MAX_BATCH_BYTES + 100 for m in written)
    assert max(len(m.batch.messages) for m in written) == 3  # 3 × 300 KiB, not 4


def test_the_welcome_goes_alone() -> None:
    """Defect: on a reconnect with "batch", the Welcome went out inside a Batch with the
    resumed seats queued behind it; the first message of a stream is the Welcome, alone."""
    written = _written(batch=True, queued=3, then_close=False)  # (it checks the Welcome)
    assert [m.WhichOneof("kind") for m in written] == ["batch", "event"]


def test_closing_mid_batch_writes_what_came_before_and_stops() -> None:
    written = _written(batch=True, queued=3, then_close=True)
    assert _flat(written) == [0, 1, 2]  # the message put after close() is not written


def _stream(
    config: RefereeConfig, *messages: pb.BotMessage
) -> tuple[grpc.StatusCode, str, list[str]]:
    """Against a fresh referee: say Hello (asking for batches), send ``messages``; the
    stream's status, its details, and the refusal messages that came back."""

    async def fresh() -> tuple[grpc.StatusCode, str, list[str]]:
        ref = Referee(config)
        ref.add_bot("b", "tok")
        server, port = await start_server(ref, port=0)
        try:
            return await _talk(port, messages)
        finally:
            await server.stop(0)

    async def main() -> tuple[grpc.StatusCode, str, list[str]]:
        # (gRPC core's INTERNAL, a write racing the refusal: again, against a fresh referee)
        return await asking_again(fresh, lambda r: core_internal(r[0], r[1], answered=True))

    return asyncio.run(main())


async def _talk(
    port: int, messages: tuple[pb.BotMessage, ...]
) -> tuple[grpc.StatusCode, str, list[str]]:
    kinds: list[str] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok"),))
        hello = pb.Hello(bot_name="b", protocol_version=1, features=["batch", "unknown"])
        await call.write(pb.BotMessage(hello=hello))
        welcome = await call.read()
        assert list(welcome.welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
        try:
            for m in messages:
                await call.write(m)
            await call.done_writing()
            while (msg := await call.read()) is not grpc.aio.EOF:
                for inner in msg.batch.messages if msg.HasField("batch") else [msg]:
                    kinds.append(inner.decision_rejected.message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            pass
        return await call.code(), await call.details() or "", kinds


def test_a_decision_batch_is_read_decision_by_decision() -> None:
    ds = [pb.Decision(request_id=str(i), match_id=f"nowhere-{i}") for i in range(3)]
    code, _details, rejected = _stream(
        RefereeConfig(), pb.BotMessage(decisions=pb.DecisionBatch(decisions=ds))
    )
    assert code is grpc.StatusCode.OK
    assert rejected == [f"you have no seat in a running match 'nowhere-{i}'" for i in range(3)]


def test_an_oversized_decision_batch_ends_the_stream_naming_the_limit() -> None:
    ds = [pb.Decision(request_id=str(i), match_id="m") for i in range(MAX_DECISION_BATCH + 1)]
    code, details, rejected = _stream(
        RefereeConfig(), pb.BotMessage(decisions=pb.DecisionBatch(decisions=ds))
    )
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"a DecisionBatch holds at most {MAX_DECISION_BATCH} decisions, not 257"
    assert rejected == []  # refused whole: none of its decisions was handled


def test_empty_decision_batches_count_as_flooding() -> None:
    empty = pb.BotMessage(decisions=pb.DecisionBatch())
    config = RefereeConfig(flood_limit=20, flood_window_s=60)
    code, details, _ = _stream(config, *[empty] * 21)
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "more than 20 messages answering no pending request" in details
