"""Round 50 (performance): the referee's writer joins a ``Batch`` from each message's wire
bytes (``protocol.batch_bytes``) instead of copying every message into a ``Batch`` message,
weighing it and serializing the whole. The bytes a bot reads must be the same as before:
protobuf's own serialization of that ``Batch``, through the real server (``Play``'s
serializer takes a message or such bytes: ``protocol.message_bytes``)."""

from __future__ import annotations

import asyncio
import random

import grpc

from arena.protocol import batch_bytes, message_bytes, view_to_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.sessions import MAX_BATCH_BYTES, Stream
from arena.v1 import arena_pb2 as pb
from engine import Game
from engine.view import observe

_PLAY = f"/{pb.DESCRIPTOR.services_by_name['Arena'].full_name}/Play"


def _requests(count: int) -> list[pb.ServerMessage]:
    """Decision requests with the views of a random classic match, as the referee sends."""
    rng, out = random.Random(5), []
    g = Game.new("classic", seed=3, players=["a", "b", "c"])
    while len(out) < count and not g.is_over:
        legal = g.legal_actions()
        msg = pb.ServerMessage()
        req = msg.decision_request
        req.request_id, req.match_id, req.time_limit_ms = str(len(out) + 1), "m1", 2000
        view_to_pb(observe(g, g.to_act), req.view)
        msg.events.add(match_id="m1", seq=len(out))
        out.append(msg)
        g.apply(rng.choice(legal), seat=g.to_act)
    return out


def _field_by_field(msgs: list[pb.ServerMessage]) -> bytes:
    """The batch as the writer made it before: each message copied into a ``Batch``."""
    out = pb.ServerMessage()
    for m in msgs:
        out.batch.messages.append(m)
    return out.SerializeToString()


def test_batch_bytes_are_protobufs_own_serialization() -> None:
    reqs = _requests(40)
    # Items of every length class: empty, a few bytes, ~1 KB views (two-byte lengths), and
    # one of 20 KB (a three-byte length), so the whole batch's length takes three bytes too.
    big = pb.ServerMessage(match_started=pb.MatchStarted(match_id="x" * 20_000))
    small = pb.ServerMessage(event=pb.Event(match_id="m", seq=1))
    cases = [reqs[:2], reqs, [pb.ServerMessage(), small], [small, big, reqs[0]], [big, big]]
    for msgs in cases:
        got = batch_bytes([m.SerializeToString() for m in msgs])
        assert got == _field_by_field(msgs)
        assert list(pb.ServerMessage.FromString(got).batch.messages) == msgs


def test_the_writer_writes_the_same_bytes_as_before() -> None:
    """Everything the writer hands gRPC, serialized as ``Play``'s serializer does, against
    what the writer before wrote for the same queue (a batch built field by field)."""
    reqs = _requests(12)

    async def main() -> list[pb.ServerMessage | bytes]:
        stream = Stream("peer", batch=True)
        written: list[pb.ServerMessage | bytes] = []

        async def write(msg: pb.ServerMessage | bytes) -> None:
            written.append(msg)

        stream.put(pb.ServerMessage(welcome=pb.Welcome(bot_name="b")))
        for m in reqs:
            stream.put(m)
        stream.close()
        await asyncio.wait_for(stream.write_loop(write), 60)
        return written

    written = asyncio.run(main())
    assert [type(w) for w in written] == [pb.ServerMessage, bytes]  # the Welcome alone
    assert message_bytes(written[1]) == _field_by_field(reqs)
    assert message_bytes(written[0]) == written[0].SerializeToString()  # type: ignore[union-attr]


def test_a_message_carried_over_a_full_batch_keeps_its_bytes() -> None:
    """The message that would pass MAX_BATCH_BYTES starts the next batch with the bytes it
    was weighed by (taken once): still itself, in order."""
    third = MAX_BATCH_BYTES // 3
    big = [pb.ServerMessage(match_started=pb.MatchStarted(match_id=f"{i}" * third))
           for i in range(5)]  # fmt: skip

    async def main() -> list[bytes]:
        stream = Stream("peer", batch=True)
        stream.put(pb.ServerMessage(welcome=pb.Welcome(bot_name="b")))
        for m in big:
            stream.put(m)
        stream.close()
        out: list[bytes] = []

        async def write(msg: pb.ServerMessage | bytes) -> None:
            out.append(message_bytes(msg))

        await asyncio.wait_for(stream.write_loop(write), 60)
        return out[1:]

    got = asyncio.run(main())
    assert got == [_field_by_field(big[0:2]), _field_by_field(big[2:4]), big[4].SerializeToString()]


def test_a_real_server_sends_the_batch_bytes_a_bot_parses() -> None:
    """Through ``start_server``: messages queued together for a bot asking for batches
    reach it as one ``Batch`` holding them, byte for byte (the serializer takes bytes)."""
    reqs = _requests(3)

    async def main() -> tuple[bytes, pb.ServerMessage]:
        ref = Referee(RefereeConfig())
        ref.add_bot("b", "tok")
        server, port = await start_server(ref, port=0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                play = ch.stream_stream(  # what comes on the wire, unparsed
                    _PLAY, request_serializer=pb.BotMessage.SerializeToString
                )
                call = play(metadata=(("authorization", "Bearer tok"),))
                hello = pb.Hello(bot_name="b", protocol_version=1, features=["batch"])
                await call.write(pb.BotMessage(hello=hello))
                welcome = pb.ServerMessage.FromString(await call.read())
                assert welcome.HasField("welcome")
                session = ref.session("b")
                for m in reqs:  # (queued in one go: the writer takes them together)
                    assert session.send(m)
                data = await asyncio.wait_for(call.read(), 60)
                call.cancel()
                return data, pb.ServerMessage.FromString(data)
        finally:
            await server.stop(0)

    data, msg = asyncio.run(main())
    assert data == _field_by_field(reqs)
    assert list(msg.batch.messages) == reqs
