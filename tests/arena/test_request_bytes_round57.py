"""Round 57 (performance, #7): a decision request goes to its stream as wire bytes.

The referee wrote a request's view as wire bytes (``game_view_bytes``), parsed them into a
``ServerMessage``, set the request's fields, parsed the buffered events into it too, and
gRPC's serializer wrote the whole message out again. It now joins the same bytes
(``protocol.decision_request_bytes``, ``BotSession.send`` appending the events) and queues
them as they are. What a bot receives must not change by a byte: these tests hold the new
bytes to what protobuf writes for the message they stand for, in real matches (every seat,
with and without the features that leave parts of a view out, events and batches), and at
the edges of each field.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random

import pytest

from arena.bench.referee_logic import _AnswerAtOnce, request_ids
from arena.protocol import batch_bytes, decision_request_bytes, game_view_bytes, view_to_pb
from arena.referee import Referee
from arena.referee.sessions import BotSession, Stream
from arena.v1 import arena_pb2 as pb
from engine import Game, observe
from engine.rules import PRESETS
from tests.support.streams import referee_with_streams


def _by_fields(
    request_id: str, match_id: str, deal: int, view: bytes, limit: int, bank: int
) -> bytes:
    """The message built field by field and written by protobuf (the path before)."""
    msg = pb.ServerMessage()
    req = msg.decision_request
    req.view.MergeFromString(view)
    req.request_id = request_id
    req.match_id = match_id
    req.deal_number = deal
    req.time_limit_ms = limit
    req.time_bank_ms = bank
    return msg.SerializeToString()


def test_a_view_is_written_as_protobuf_writes_it() -> None:
    """Seat 0, deal 0 and dealer 0 were written as explicit zeros, which protobuf leaves
    out: parsed and written again (as every request was) they changed. Sent as they are,
    the view's bytes must be protobuf's own (failed before: 0 of the seat-0 views)."""
    checked = 0
    for m, (preset, n) in enumerate([("classic", 3), ("1001", 3), ("1001", 4)] * 3):
        g = Game.new(preset, m, [f"p{i}" for i in range(n)])
        rng = random.Random(m)
        while not g.is_over and len(g.deal_results) < 4:
            for seat in range(n):
                data = game_view_bytes(g, seat)
                assert pb.PlayerView.FromString(data).SerializeToString() == data
                checked += 1
            g.apply(rng.choice(g.legal_actions()), seat=g.to_act)
    assert checked > 1000


@pytest.mark.parametrize(
    ("rid", "mid", "deal", "limit", "bank", "view_len"),
    [
        ("1", "t0-1", 0, 5000, 60_000, 30),
        ("12345", "m", 3, 0, 0, 200),  # limits at 0: left out
        ("7", "", 0, 1, 0, 4200),  # no match id; a view over 4095 bytes (a 2-byte varint+)
        ("9" * 300, "ü-матч-" + "x" * 200, 4_294_967_295, 4_294_967_295, 1, 0),  # long ids
        ("", "m", 1, 2, 3, 10),  # (no request id: left out, as protobuf does)
    ],
)
def test_request_bytes_are_the_message_built_field_by_field(
    rid: str, mid: str, deal: int, limit: int, bank: int, view_len: int
) -> None:
    view = pb.PlayerView(
        players=["x" * max(0, view_len - 2)] if view_len else []
    ).SerializeToString()
    data = decision_request_bytes(rid, mid, deal, view, limit, bank)
    assert data == _by_fields(rid, mid, deal, view, limit, bank)
    assert request_ids(data) == (mid, rid)


def test_request_bytes_refuse_what_protobuf_refuses() -> None:
    with pytest.raises(UnicodeEncodeError):
        decision_request_bytes("\udc80", "m", 0, b"", 1, 1)
    with pytest.raises(UnicodeEncodeError):
        decision_request_bytes("1", "\udc80", 0, b"", 1, 1)
    with pytest.raises(ValueError, match="out of range"):
        decision_request_bytes("1", "m", 1 << 32, b"", 1, 1)


class _Checks(_AnswerAtOnce):
    """The bench's in-process bot (answers each request with its first legal action),
    checking each request's bytes as it is queued, against the game as it is then."""

    __slots__ = ("checked", "with_events")

    def __init__(self, referee: Referee, session: BotSession, features: bool) -> None:
        super().__init__(referee, session, as_sdk=features)
        self.checked = 0
        self.with_events = 0

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        if isinstance(msg, bytes):
            parsed = pb.ServerMessage.FromString(msg)
            # What protobuf writes for the message the bytes stand for: the bytes a bot got
            # when the referee built that message and gRPC serialized it.
            assert parsed.SerializeToString() == msg
            req = parsed.decision_request
            st = self.session.seats[req.match_id]
            v = req.view
            whole = view_to_pb(
                observe(st.match.game, st.seat), None, v.deal_results_omitted,
                v.bids_omitted, v.tricks_omitted,
            )  # fmt: skip
            assert v.SerializeToString() == whole.SerializeToString()
            assert req.request_id == str(st.requests) and req.deal_number == v.deal_number
            assert (req.time_limit_ms, req.time_bank_ms) == (60_000, st.bank_ms)
            self.checked += 1
            self.with_events += len(parsed.events) > 0
        super().put(msg)


@pytest.mark.parametrize("features", [False, True])
def test_matches_send_each_request_as_protobuf_writes_it(features: bool) -> None:
    async def run() -> list[_Checks]:
        referee, streams = referee_with_streams(
            lambda referee, _name, session: _Checks(referee, session, features)
        )
        rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
        await asyncio.gather(
            *(referee.run_match(f"t{t}", rules, 21 + t, ["a", "b", "c"]) for t in range(2))
        )
        return streams

    streams = asyncio.run(run())
    assert all(s.checked > 20 and s.with_events > 10 for s in streams)
    # ("results_once" and "deal_once" leave parts out: some views did)
    assert sum(s.checked for s in streams) == sum(s.answered for s in streams)


def test_a_batch_of_request_bytes_and_messages_is_written_as_before() -> None:
    """The writer joins queued bytes and messages into one ``Batch`` as it joined messages
    (each one's wire bytes, in order), and writes lone bytes as they are."""
    view = pb.PlayerView(seat=2, players=["a", "b", "c"]).SerializeToString()
    request = decision_request_bytes("3", "m", 1, view, 100, 200)
    started = pb.ServerMessage(match_started=pb.MatchStarted(match_id="m", seat=2))

    async def run() -> list[pb.ServerMessage | bytes]:
        stream = Stream("fake", batch=True)
        written: list[pb.ServerMessage | bytes] = []

        async def write(msg: pb.ServerMessage | bytes) -> None:
            written.append(msg)

        stream.put(pb.ServerMessage(welcome=pb.Welcome(bot_name="b")))  # (alone: the first)
        stream.put(request)
        stream.put(started)
        stream.put(request)
        stream.close()
        await stream.write_loop(write)
        lone = Stream("fake", batch=True)
        lone.put(started)
        lone.put(request)
        lone.close()
        await lone.write_loop(write)
        return written

    written = asyncio.run(run())
    assert len(written) == 4
    joined = [request, started.SerializeToString(), request]
    assert written[1] == batch_bytes(joined)
    expected = pb.ServerMessage()
    for item in joined:
        expected.batch.messages.add().MergeFromString(item)
    assert written[1] == expected.SerializeToString()
    assert written[3] == request  # (the welcome, then one alone: no batch of one)
