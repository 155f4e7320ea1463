"""Hostile round 32: what a bot's bytes can say that the generated code never writes (a
field in the wrong wire type, a oneof set twice, a message repeated inside another,
integers past uint32, unknown groups at protobuf's depth limit, ids of line separators),
answers mutated byte by byte in live matches, a drop at each phase of a deal, the memory
and tasks left by hostile streams, and odd requests to the services that need no token
(reflection, health, GetInfo: deflate bombs, nested groups, deadlines of a millisecond).
The referee's real server on a free port, in this process; the honest seats in process."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import gc
import json
import random
import socket
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee import server as server_mod
from arena.referee.sessions import Stream
from arena.storage import _jsonl_record
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from engine.record import replay
from tests.support.core_internal import core_internal
from tests.support.harness import attach_in_process, no_error_logged, serve_one_bot, until  # noqa: F401 (a fixture)
from tests.support.raw_h2 import DATA, END_STREAM, HEADERS, RawH2, frame, grpc_message

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
GETINFO = "/arena.v1.Arena/GetInfo"
_HELLO = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)
TWO_DEALS = dataclasses.replace(PRESETS["classic"], max_deals=2)
#: Seats (x, y, z) and seed 3: x, seat 0, is asked first and, y and z passing, takes the
#: talon at its bid: x is asked in the auction, twice to give, then for the contract.
X_DECLARES = 3


# ------------------------------------------------------------------------ wire helpers


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    """One field as protobuf writes it: its key, then (length-delimited, wire type 2) its
    length and bytes, or (varint, wire type 0) the varint ``payload`` already is."""
    key = _varint(number << 3 | wire)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def _decision(rid: bytes, mid: bytes, action: bytes) -> bytes:
    """A ``BotMessage`` whose ``decision`` holds the encoded fields ``rid`` (field 1),
    ``mid`` (field 2) and ``action`` (field 3, the bytes of an ``Action``)."""
    return _field(2, 2, rid + mid + _field(3, 2, action))


def _s(number: int, text: str) -> bytes:
    return _field(number, 2, text.encode())


def _answer(r: pb.DecisionRequest, action: pb.Action) -> bytes:
    return pb.BotMessage(
        decision=pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
    ).SerializeToString()


def _groups(depth: int) -> bytes:
    """Unknown groups (field 15) nested ``depth`` deep: protobuf must parse them to find
    their end, and refuses more than 100 levels of nesting (the message itself counts)."""
    return b"\x7b" * depth + b"\x7c" * depth


def _passer(ref: Referee) -> Any:
    """An in-process honest seat (``attach_in_process``): passes when it may, else plays
    the first legal action."""

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        legal = list(r.view.legal_actions)
        a = next((a for a in legal if a.HasField("pass")), legal[0])
        ref.on_decision(ref.session(bot), pb.Decision(request_id=r.request_id,
                                                      match_id=r.match_id, action=a))  # fmt: skip

    return answer


def _raw_play(channel: grpc.aio.Channel) -> Any:
    """``Play`` on ``channel`` writing bytes as given (what a client of its own writes)."""
    return channel.stream_stream(
        PLAY, request_serializer=lambda b: b, response_deserializer=pb.ServerMessage.FromString
    )


async def _welcomed(play: Any, token: str = "tok-x") -> Any:
    call = play(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(_HELLO)
    first = await call.read()
    assert first is not grpc.aio.EOF and first.HasField("welcome"), first
    return call


def _x_actions(rec: dict[str, Any], seat: int = 0) -> list[tuple[str, str]]:
    return [(a["action"], a["by"]) for d in rec["deals"] for a in d["actions"]
            if a["seat"] == seat]  # fmt: skip


# ------------------------------------------------------------------- the bot's bytes


def test_answers_are_read_as_protobuf_reads_their_bytes(tmp_path: Path) -> None:
    """Bytes no generated code writes, each where it can matter, in one match (x declares):

    - a bid of 2^32 + 105 (a varint past uint32) is the bid 105: protobuf reads a uint32
      so, in every language; the seat's action is its bot's, no strike;
    - a ``request_id`` written as a varint (the wrong wire type) is no ``request_id``, an
      unknown field: refused WRONG_REQUEST "'' is no request id", echoing '';
    - a ``match_id`` so written: "you have no seat in a running match ''";
    - an id of line and paragraph separators, NEL, a right-to-left override and a NUL:
      refused, echoed as sent, and written escaped in the record (its file stays one JSON
      object a line, as ``arena replay`` reads it with ``str.splitlines``);
    - a ``BotMessage`` with ``decision`` then ``hello`` on the wire is a Hello (the last
      member of a oneof wins): a stray, nothing sent back, and its decision not applied
      (the answer after it is accepted);
    - a ``decision`` written twice in one message (another request id and action first)
      is merged, the last scalar winning: it answers, with the second action;
    - a decision followed by unknown groups nested 100 deep is read; 101 deep ends the
      stream with INVALID_ARGUMENT naming the parse error, a disconnect, no strike: back,
      the request is asked again and its answer taken;
    - an ``Action`` holding ``contract`` then ``concede`` is the concession (the last).
    Nothing else is recorded; the honest seats have no incident; the record replays."""

    async def main() -> tuple[dict[str, Any], list[pb.DecisionRejected], list[Any], str]:
        ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=0, max_strikes=1000,
                                    record_dir=tmp_path))  # fmt: skip
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        rejected: list[pb.DecisionRejected] = []
        asked: list[Any] = []
        status: list[str] = []
        odd = "\u2028a\x85b\u2029c\u202ed\x00e"

        async def x_bot() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                play = _raw_play(channel)
                call = await _welcomed(play)
                k = 0
                while True:
                    try:
                        m = await call.read()
                    except grpc.aio.AioRpcError as e:
                        status.append(f"{e.code().name}: {e.details()}")
                        call = await _welcomed(play)  # (back: the request is asked again)
                        continue
                    if m.HasField("decision_rejected"):
                        rejected.append(m.decision_rejected)
                    if m.HasField("match_ended"):
                        call.cancel()
                        return
                    if not m.HasField("decision_request"):
                        continue
                    k += 1
                    r = m.decision_request
                    asked.append((r.request_id, r.view.phase))
                    legal = list(r.view.legal_actions)
                    rid, mid = _s(1, r.request_id), _s(2, r.match_id)
                    if k == 1:  # the auction
                        low = min(a.bid.amount for a in legal if a.HasField("bid"))
                        await call.write(
                            _decision(rid, mid, _field(1, 2, b"\x08" + _varint((1 << 32) + low)))
                        )
                    elif k == 2:  # the first give
                        give = legal[0].SerializeToString()
                        await call.write(_decision(_field(1, 0, b"\x05"), mid, give))
                        await call.write(_decision(rid, _field(2, 0, b"\x07"), give))
                        await call.write(_decision(_s(1, odd), mid, give))
                        await call.write(_decision(rid, mid, give) + _field(1, 2, b""))  # + hello
                        other = pb.Action(bid=pb.Bid(amount=5)).SerializeToString()
                        await call.write(
                            _decision(_s(1, "999"), mid, other) + _decision(rid, mid, give)
                        )
                    elif k == 3:  # the second give, groups 100 deep after it: read
                        await call.write(_answer(r, legal[0]) + _groups(100))
                    elif k == 4:  # the contract, groups 101 deep after it: refused
                        await call.write(_answer(r, legal[0]) + _groups(101))
                    else:  # the contract asked again on the new stream
                        concede = [a for a in legal if a.HasField("concede")]
                        both = legal[0].SerializeToString() + concede[0].SerializeToString()
                        await call.write(_decision(rid, mid, both))

        task = asyncio.create_task(x_bot())
        try:
            assert not await ref.wait_for_bots(["x"], 10)
            rec = await ref.run_match("m", ONE_DEAL, X_DECLARES, ["x", "y", "z"])
            await asyncio.wait_for(task, 10)
        finally:
            task.cancel()
            await ref.end_streams()
            await server.stop(1.0)
        return rec, rejected, asked, status[0] if status else ""

    rec, rejected, asked, status = asyncio.run(main())
    phases = [p for _, p in asked]
    assert phases == [pb.PHASE_BIDDING, pb.PHASE_PASSING, pb.PHASE_PASSING, pb.PHASE_CONTRACT,
                      pb.PHASE_CONTRACT], asked  # fmt: skip
    assert asked[3][0] == asked[4][0] == "4", asked  # (the same request, asked again)
    x = _x_actions(rec)
    assert x[0] == ("bid 105", "bot"), x
    assert x[-1] == ("concede", "bot"), x
    assert all(by == "bot" for _, by in x), x
    assert status.startswith("INVALID_ARGUMENT: could not parse the message as arena.v1.BotMessage")
    assert [(r.request_id, r.match_id, r.incident) for r in rejected] == [
        ("", "m", pb.INCIDENT_WRONG_REQUEST),
        ("2", "", pb.INCIDENT_WRONG_REQUEST),
        ("\u2028a\x85b\u2029c\u202ed\x00e", "m", pb.INCIDENT_WRONG_REQUEST),
    ], rejected
    assert "'' is no request id" in rejected[0].message, rejected[0].message
    assert "you have no seat in a running match ''" in rejected[1].message, rejected[1].message
    assert "'\\u2028a\\x85b\\u2029c\\u202ed\\x00e' is no request id" in rejected[2].message
    kinds = [(i["seat"], i["kind"]) for i in rec["incidents"]]
    assert kinds == [(0, "wrong_request"), (0, "wrong_request"), (0, "disconnect")], kinds
    assert "INVALID_ARGUMENT: could not parse" in rec["incidents"][2]["detail"]
    assert rec["wrong_requests"] == [2, 0, 0] and rec["disconnects"] == [1, 0, 0]
    replay(rec)
    text = (tmp_path / "m.jsonl").read_text(encoding="utf-8")
    assert all(json.loads(line) for line in text.splitlines())  # (one object a line)
    assert _jsonl_record(text) == json.loads(json.dumps(rec))


def test_answers_mutated_byte_by_byte_leave_every_record_whole() -> None:
    """A bot answering every request of two live matches with mutations of its answer's
    bytes (bits flipped, cut short, bytes inserted, fields repeated, wire types changed,
    nested groups, random bytes, wrapped in an unknown field) before, or instead of, the
    answer itself; refused streams are opened again. Every stream ends with a status the
    docs name (INVALID_ARGUMENT naming the parse error; the stop's UNAVAILABLE; the
    client's own INTERNAL for a write that raced a status), every incident is the
    attacker's, both records replay, nothing is logged, and no call stays open."""
    rnd = random.Random(32)

    def mutate(data: bytes) -> bytes:
        out = bytearray(data)
        k = rnd.randrange(8)
        if k == 0:
            i = rnd.randrange(len(out))
            out[i] ^= 1 << rnd.randrange(8)
        elif k == 1:
            del out[rnd.randrange(len(out)) :]
        elif k == 2:
            i = rnd.randrange(len(out) + 1)
            out[i:i] = rnd.randbytes(rnd.randrange(1, 6))
        elif k == 3:
            out += data  # (every field twice: merged)
        elif k == 4:
            out[rnd.randrange(len(out))] = rnd.choice(b"\x0b\x0c\x08\x10\x12\x1a\x7f\x80\xff")
        elif k == 5:
            out[:0] = _groups(rnd.randrange(1, 120))
        elif k == 6:
            out = bytearray(rnd.randbytes(rnd.randrange(1, 40)))
        else:
            out = bytearray(_field(4, 2, data))  # (a kind of a newer protocol)
        return bytes(out)

    async def main() -> tuple[list[dict[str, Any]], collections.Counter[str], int]:
        ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=0, max_strikes=1000,
                                    reconnect_limit=10_000))  # fmt: skip
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        ends: collections.Counter[str] = collections.Counter()
        stop = asyncio.Event()

        async def x_bot() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                play = _raw_play(channel)
                while not stop.is_set():
                    call = play(metadata=(("authorization", "Bearer tok-x"),))
                    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                        await call.write(_HELLO)
                        while (m := await call.read()) is not grpc.aio.EOF:
                            if not m.HasField("decision_request"):
                                continue
                            r = m.decision_request
                            good = _answer(r, rnd.choice(list(r.view.legal_actions)))
                            for _ in range(rnd.randrange(4)):
                                await call.write(mutate(good))
                            if rnd.random() < 0.7:
                                await call.write(good)
                    code, details = await call.code(), await call.details() or ""
                    if core_internal(code, details, answered=True):
                        ends["INTERNAL (the client's own)"] += 1
                    else:
                        ends[f"{code.name}: {details[:50]}"] += 1

        task = asyncio.create_task(x_bot())
        try:
            assert not await ref.wait_for_bots(["x"], 10)
            recs = [
                await ref.run_match("m1", TWO_DEALS, 321, ["x", "y", "z"]),
                await ref.run_match("m2", TWO_DEALS, 322, ["y", "x", "z"]),
            ]
            stop.set()
            await ref.end_streams()
            await asyncio.wait_for(task, 10)
            session = ref.session("x")
            await until(lambda: session.open_calls == 0, "every call done")
        finally:
            task.cancel()
            await server.stop(1.0)
        return recs, ends, session.open_calls

    recs, ends, open_calls = asyncio.run(main())
    allowed = {
        "INVALID_ARGUMENT: could not parse the message as arena.v1.BotMessage",
        "UNAVAILABLE: the arena is stopping",
        "INTERNAL (the client's own)",
    }
    assert set(ends) <= allowed, ends
    assert ends["INVALID_ARGUMENT: could not parse the message as arena.v1.BotMessage"], ends
    for rec, x_seat in zip(recs, (0, 1), strict=True):
        assert {i["seat"] for i in rec["incidents"]} <= {x_seat}, rec["incidents"]
        replay(rec)
    kinds = {i["kind"] for rec in recs for i in rec["incidents"]}
    assert kinds >= {"disconnect", "wrong_request"}, kinds
    assert open_calls == 0


# ------------------------------------------------------------------------ the session


def test_a_drop_at_each_phase_resumes_the_seat_with_the_request_as_it_was() -> None:
    """A bot whose stream drops at its first request of the auction, of the gives, of the
    contract, of the tricks, and at its last trick (``ask_forced``: it is asked), and that
    comes back at once: each time the resumed ``match_started`` carries the view the
    request asked with (legal actions included) and the ``seq`` of the last event it
    reflects, the same request comes again with its id and the time left, the answer on
    the new stream is the bot's; the record holds one disconnect per drop and nothing
    else, and the events go on from ``seq`` + 1."""

    async def main() -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
        ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=0, ask_forced=True))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        seen: list[tuple[Any, ...]] = []

        async def x_bot() -> None:
            dropped: set[str] = set()
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.ArenaStub(channel)
                while True:
                    call = stub.Play(metadata=(("authorization", "Bearer tok-x"),))
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                    assert (await call.read()).HasField("welcome")
                    resumed: pb.MatchStarted | None = None
                    while True:
                        m = await call.read()
                        if m.HasField("match_ended"):
                            call.cancel()
                            return
                        if m.HasField("match_started") and m.match_started.resumed:
                            resumed = m.match_started
                        elif resumed is not None and m.events:
                            assert m.events[0].seq == resumed.seq + 1, (m.events, resumed.seq)
                        if not m.HasField("decision_request"):
                            continue
                        r = m.decision_request
                        moment = (
                            "last trick" if len(r.view.hand) == 1 else pb.Phase.Name(r.view.phase)
                        )
                        if resumed is not None:
                            seen.append((moment, r.request_id, resumed.view == r.view,
                                         0 < r.time_limit_ms <= 5000))  # fmt: skip
                            resumed = None
                        if moment not in dropped:
                            dropped.add(moment)
                            seen.append(("drop", moment, r.request_id))
                            call.cancel()
                            # Back once the referee has seen the drop (the one disconnect
                            # asserted): grpc.aio tells a handler of its call's reset in
                            # its own time, and a Hello first replaces the stream, which
                            # records no disconnect (4 of 5 in a loaded clean-clone run).
                            await until(lambda: ref.session("x").stream is None, "the drop seen")
                            break
                        legal = list(r.view.legal_actions)
                        a = next((a for a in legal if a.HasField("bid")), legal[0])
                        await call.write(pb.BotMessage(decision=pb.Decision(
                            request_id=r.request_id, match_id=r.match_id, action=a)))  # fmt: skip

        task = asyncio.create_task(x_bot())
        try:
            assert not await ref.wait_for_bots(["x"], 10)
            rec = await ref.run_match("m", ONE_DEAL, X_DECLARES, ["x", "y", "z"])
            await asyncio.wait_for(task, 10)
        finally:
            task.cancel()
            await ref.end_streams()
            await server.stop(1.0)
        return rec, seen

    rec, seen = asyncio.run(main())
    drops = [s for s in seen if s[0] == "drop"]
    assert [d[1] for d in drops] == ["PHASE_BIDDING", "PHASE_PASSING", "PHASE_CONTRACT",
                                     "PHASE_PLAYING", "last trick"], seen  # fmt: skip
    back = [s for s in seen if s[0] != "drop"]
    assert back == [(d[1], d[2], True, True) for d in drops], seen
    assert [(i["seat"], i["kind"]) for i in rec["incidents"]] == [(0, "disconnect")] * 5
    assert all(by == "bot" for _, by in _x_actions(rec))
    replay(rec)


def test_a_tcp_half_close_mid_match_is_a_disconnect_and_the_bot_comes_back() -> None:
    """A bot that half-closes its TCP connection (a FIN: ``shutdown(SHUT_WR)``, reading on)
    while its request is pending: gRPC core ends the connection's calls, the referee
    records one disconnect, and the bot, back on a new connection within the grace, is
    asked the same request again and plays on; nothing is logged, no call stays open."""

    async def main() -> tuple[dict[str, Any], list[str], int]:
        ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=0))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        fin = threading.Event()
        asked_again: list[str] = []

        def raw() -> None:
            conn = RawH2(port)
            try:
                sid = conn.call(PLAY, extra=((b"authorization", b"Bearer tok-x"),),
                                data=grpc_message(_HELLO), end=False)  # fmt: skip
                while not fin.is_set():
                    conn.frames(0.05)
                conn.sock.shutdown(socket.SHUT_WR)
                conn.frames(10, until_ended={sid})
            finally:
                conn.close()

        async def back() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-x"),)
                )
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                while not (m := await call.read()).HasField("match_ended"):
                    if m.HasField("decision_request"):
                        r = m.decision_request
                        asked_again.append(r.request_id)
                        legal = list(r.view.legal_actions)
                        a = next((a for a in legal if a.HasField("bid")), legal[0])
                        await call.write(pb.BotMessage(decision=pb.Decision(
                            request_id=r.request_id, match_id=r.match_id, action=a)))  # fmt: skip
                call.cancel()

        reader = asyncio.ensure_future(asyncio.to_thread(raw))
        try:
            assert not await ref.wait_for_bots(["x"], 10)
            match = asyncio.ensure_future(ref.run_match("m", ONE_DEAL, X_DECLARES, ["x", "y", "z"]))
            await until(lambda: "m" in ref._matches and ref._matches["m"].seats[0].pending
                         is not None, "x asked")  # fmt: skip
            fin.set()
            session = ref.session("x")
            await until(lambda: session.stream is None, "the FIN seen")
            await reader
            await back()
            rec: dict[str, Any] = await match
            await until(lambda: session.open_calls == 0, "the calls done")
        finally:
            fin.set()
            await ref.end_streams()
            await server.stop(1.0)
        return rec, asked_again, session.open_calls

    rec, asked_again, open_calls = asyncio.run(main())
    assert asked_again[0] == "1", asked_again  # (the request the FIN left pending)
    assert [(i["seat"], i["kind"]) for i in rec["incidents"]] == [(0, "disconnect")]
    assert {by for _, by in _x_actions(rec)} <= {"bot", "forced"}, _x_actions(rec)
    assert open_calls == 0
    replay(rec)


def test_a_bot_cut_off_for_flooding_still_plays_its_pending_request_when_back() -> None:
    """A bot that floods its stream mid-match (1,024 answers for a match it does not sit
    in, weight 1,024 of the 1,000 per 10 s) is closed with RESOURCE_EXHAUSTED; back at
    once, its pending request is asked again, and its answer, which weighs nothing, is
    taken as the bot's though the window is still over its limit; its next stray closes
    the stream again. The match goes on: the flooder has its disconnects and nothing
    else, the honest seats nothing, and the record replays."""
    stray = pb.Decision(request_id="1", match_id="nope")
    strays = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[stray] * 256)).SerializeToString()

    async def main() -> tuple[dict[str, Any], list[str], list[str]]:
        ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=0))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        ends: list[str] = []
        asked: list[str] = []

        async def x_bot() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                play = _raw_play(channel)
                while True:
                    call = await _welcomed(play)
                    try:
                        while not (m := await call.read()).HasField("match_ended"):
                            if not m.HasField("decision_request"):
                                continue
                            r = m.decision_request
                            asked.append(r.request_id)
                            if len(asked) == 1:
                                for _ in range(4):
                                    await call.write(strays)
                            elif len(asked) == 3:
                                await call.write(b"")  # (a stray: no kind)
                            else:
                                legal = list(r.view.legal_actions)
                                a = next((a for a in legal if a.HasField("bid")), legal[0])
                                await call.write(_answer(r, a))
                        call.cancel()
                        return
                    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                        code, details = await call.code(), await call.details() or ""
                        if core_internal(code, details, answered=True):
                            ends.append("RESOURCE_EXHAUSTED (the client's own INTERNAL)")
                        else:
                            ends.append(f"{code.name}: {details[:40]}")

        task = asyncio.create_task(x_bot())
        try:
            assert not await ref.wait_for_bots(["x"], 10)
            rec = await ref.run_match("m", ONE_DEAL, X_DECLARES, ["x", "y", "z"])
            await asyncio.wait_for(task, 10)
        finally:
            task.cancel()
            await ref.end_streams()
            await server.stop(1.0)
        return rec, ends, asked

    rec, ends, asked = asyncio.run(main())
    assert len(ends) == 2, ends
    assert all(e.startswith("RESOURCE_EXHAUSTED") for e in ends), ends
    assert "more than 1000 messages" in ends[0] or "client's own" in ends[0], ends
    assert asked[:4] == ["1", "1", "2", "2"], asked  # (each asked again after its cut)
    assert [(i["seat"], i["kind"]) for i in rec["incidents"]] == [(0, "disconnect")] * 2
    assert {by for _, by in _x_actions(rec)} <= {"bot", "forced"}, _x_actions(rec)
    replay(rec)


def test_hostile_streams_leave_no_task_stream_or_call_behind() -> None:
    """70 welcomed streams of one bot, ten each of seven ends (cancelled, half-closed,
    garbage, a DecisionBatch of 257, 50 empty messages then cancelled, replaced by a newer
    one, an unknown token): once they are over, the referee holds no ``Stream``, runs no
    more asyncio tasks than before, counts no open call of the bot, has no stream
    attached, and logs nothing."""
    kinds = ("cancel", "half-close", "garbage", "big batch", "strays", "replace", "wrong token")
    big = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[pb.Decision()] * 257))

    def streams() -> int:
        return sum(isinstance(o, Stream) for o in gc.get_objects())

    async def one(play: Any, kind: str) -> None:
        token = "nope" if kind == "wrong token" else "tok-x"
        call = play(metadata=(("authorization", f"Bearer {token}"),))
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await call.write(_HELLO)
            await call.read()  # (the Welcome, or the refusal's end)
            if kind == "cancel":
                call.cancel()
                return
            if kind == "half-close":
                await call.done_writing()
            elif kind == "garbage":
                await call.write(b"\xff\xff")
            elif kind == "big batch":
                await call.write(big.SerializeToString())
            elif kind == "strays":
                for _ in range(50):
                    await call.write(b"")
                call.cancel()
                return
            elif kind == "replace":
                newer = await _welcomed(play)
                await call.read()
                newer.cancel()
            while (await call.read()) is not grpc.aio.EOF:
                pass

    async def body(ref: Referee, port: int) -> tuple[list[str], int, int, int, int]:
        await asyncio.sleep(0.2)
        # The tasks alive now, by identity: one of the server's own that ends later (a
        # loaded machine's start-up) is no leak, and a count would take it for one.
        before = set(asyncio.all_tasks())
        gc.collect()
        streams_before = streams()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            play = _raw_play(channel)
            for i in range(70):
                await one(play, kinds[i % len(kinds)])
        session = ref.session("x")
        await until(lambda: session.open_calls == 0 and ref._attached == 0, "calls done")

        def left() -> tuple[list[str], int]:
            gc.collect()
            new = [repr(t) for t in asyncio.all_tasks() - before]
            # (gRPC's server awaits its next call in a new task after each call it takes.)
            return [t for t in new if "AioServer._request_registered_call" not in t], streams()

        with contextlib.suppress(AssertionError):  # (what is left, if anything, is asserted)
            await until(lambda: left() == ([], 0), "the calls' last callbacks run")
        tasks_left, streams_left = left()
        return tasks_left, streams_before, streams_left, session.open_calls, ref._attached

    tasks_left, streams_before, streams_left, open_calls, attached = serve_one_bot(
        body, reconnect_limit=10_000, flood_limit=10**9
    )
    assert tasks_left == [], tasks_left
    assert (streams_before, streams_left) == (0, 0)
    assert (open_calls, attached) == (0, 0)


# ---------------------------------------------------------------- calls without a token


def test_reflection_and_health_answer_odd_requests_without_an_error() -> None:
    """Server reflection and health checking, which need no token, asked what no tool
    asks: a reflection request with no question (or only a host), symbols that are
    fields, enum values, methods, empty, a dot, a NUL or 4,000 characters, files and
    extensions that do not exist, extensions of an enum, of a service, of nothing; a
    health check of an unknown service, of 4,000 characters, and a Watch of one. Each is
    answered (reflection: a file, or an error response INVALID_ARGUMENT or NOT_FOUND;
    health: NOT_FOUND, or SERVICE_UNKNOWN for the Watch), and nothing is logged."""
    ext = reflection_pb2.ExtensionRequest
    asks: dict[str, reflection_pb2.ServerReflectionRequest] = {
        "no question": reflection_pb2.ServerReflectionRequest(),
        "host only": reflection_pb2.ServerReflectionRequest(host="h" * 100),
        "the proto": reflection_pb2.ServerReflectionRequest(
            file_by_filename="arena/v1/arena.proto"
        ),
    }
    for symbol in ("", ".", ".arena.v1.Arena", "arena.v1.Arena.Play", "arena.v1.Suit.SUIT_SPADES",
                   "\x00", "a" * 4000):  # fmt: skip
        asks[f"symbol {symbol[:20]!r}"] = reflection_pb2.ServerReflectionRequest(
            file_containing_symbol=symbol
        )
    asks["a field"] = reflection_pb2.ServerReflectionRequest(
        file_containing_symbol="arena.v1.Action.bid"
    )
    asks["no file"] = reflection_pb2.ServerReflectionRequest(file_by_filename="/etc/passwd")
    for containing, number in (("google.protobuf.FieldOptions", 1), ("arena.v1.Action", -1),
                               ("arena.v1.Suit", 2**31 - 1)):  # fmt: skip
        asks[f"extension {containing} {number}"] = reflection_pb2.ServerReflectionRequest(
            file_containing_extension=ext(containing_type=containing, extension_number=number)
        )
    for of in ("arena.v1.Action", "arena.v1.Suit", "arena.v1.Arena", ""):
        asks[f"extensions of {of!r}"] = reflection_pb2.ServerReflectionRequest(
            all_extension_numbers_of_type=of
        )

    async def body(_ref: Referee, port: int) -> tuple[dict[str, str], list[str]]:
        answers: dict[str, str] = {}
        health: list[str] = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            call = stub.ServerReflectionInfo()
            for name, ask in asks.items():
                await call.write(ask)
                got = await call.read()
                kind = got.WhichOneof("message_response")
                if kind == "error_response":
                    kind = grpc.StatusCode.INVALID_ARGUMENT.name if (
                        got.error_response.error_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
                    ) else f"error {got.error_response.error_code}"  # fmt: skip
                answers[name] = kind
            await call.done_writing()
            assert await call.code() == grpc.StatusCode.OK
            checks = health_pb2_grpc.HealthStub(channel)
            for service in ("nope", "x" * 4000):
                try:
                    await checks.Check(health_pb2.HealthCheckRequest(service=service))
                    health.append("answered")
                except grpc.aio.AioRpcError as e:
                    health.append(e.code().name)
            watch = checks.Watch(health_pb2.HealthCheckRequest(service="nope"))
            health.append(
                health_pb2.HealthCheckResponse.ServingStatus.Name((await watch.read()).status)
            )
            watch.cancel()
        return answers, health

    answers, health = serve_one_bot(body)
    not_found = f"error {grpc.StatusCode.NOT_FOUND.value[0]}"
    assert answers["no question"] == answers["host only"] == "INVALID_ARGUMENT", answers
    assert answers["the proto"] == answers["a field"] == "file_descriptor_response", answers
    assert answers["extensions of 'arena.v1.Action'"] == "all_extension_numbers_response"
    others = {k: v for k, v in answers.items()
              if k not in ("no question", "host only", "the proto", "a field",
                           "extensions of 'arena.v1.Action'")}  # fmt: skip
    assert set(others.values()) == {not_found}, others
    assert health == ["NOT_FOUND", "NOT_FOUND", "SERVICE_UNKNOWN"], health


def _raw_ends(port: int, calls: dict[str, tuple[str, tuple[tuple[bytes, bytes], ...], bytes]],
              ) -> dict[str, tuple[bool, bytes]]:  # fmt: skip
    """Each call of ``calls`` (path, extra headers, body: sent in DATA frames of 16 KiB, the
    stream half-closed after them) on a connection of its own: whether it got a message,
    and its trailers."""
    out = {}
    for name, (path, extra, body) in calls.items():
        conn = RawH2(port)
        try:
            sid = conn.call(path, extra=extra, end=False)
            chunks = [body[i : i + 16384] for i in range(0, len(body), 16384)] or [b""]
            for i, chunk in enumerate(chunks):
                conn.sock.sendall(frame(DATA, END_STREAM if i == len(chunks) - 1 else 0,
                                        sid, chunk))  # fmt: skip
            got = [f for f in conn.frames(10, until_ended={sid}) if f.stream == sid]
            trailers = [f.payload for f in got if f.kind == HEADERS and f.flags & END_STREAM]
            out[name] = (any(f.kind == DATA for f in got), trailers[-1] if trailers else b"")
        finally:
            conn.close()
    return out


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 15)
    return c.compress(data) + c.flush()


def test_getinfo_and_play_read_deflate_bombs_and_nested_groups_as_gzip_and_protobuf_do() -> None:
    """``deflate`` (not only gzip) as a client's ``grpc-encoding``: a GetInfo request, or a
    Play call's Hello, of some 65 KB inflating to 64 MiB is refused by gRPC core against
    the 1 MiB limit ("Decompressed message larger than max"), before the referee parses
    it; a GetInfo request inflating to 5,000 bytes is refused by its inflated size (the
    4 KiB cap of requests without a token); a deflated Hello is welcomed. A GetInfo
    request of unknown fields, or of unknown groups nested 100 deep, is answered; 101
    deep is refused with INVALID_ARGUMENT naming GetInfoRequest; a GetInfo call carrying
    two requests is answered once. Then the bot is let in, no call of it left open."""
    bomb = _deflate(bytes(64 << 20))
    token = (b"authorization", b"Bearer tok-x")
    deflate = (b"grpc-encoding", b"deflate")
    calls = {
        "info bomb": (GETINFO, (deflate,), grpc_message(bomb, compressed=True)),
        "info 5,000": (GETINFO, (deflate,), grpc_message(_deflate(bytes(5000)), compressed=True)),
        "info unknown": (GETINFO, (), grpc_message(_field(1, 0, b"\x01") + _s(2, "abc"))),
        "info 100 deep": (GETINFO, (), grpc_message(_groups(100))),
        "info 101 deep": (GETINFO, (), grpc_message(_groups(101))),
        "info twice": (GETINFO, (), grpc_message(b"") + grpc_message(b"")),
        "play bomb": (PLAY, (token, deflate), grpc_message(bomb, compressed=True)),
        "play deflated": (PLAY, (token, deflate), grpc_message(_deflate(_HELLO), compressed=True)),
    }

    got, after = _sent_then_welcomed(_raw_ends, calls, lambda s: s.open_calls == 0)
    for name in ("info bomb", "play bomb"):
        assert got[name] == (False, got[name][1]), got[name]
        assert b"grpc-status\x018" in got[name][1], got[name]  # RESOURCE_EXHAUSTED
        assert b"Decompressed message larger than max" in got[name][1], got[name]
    assert not got["info 5,000"][0] and b"a request of 5,000 bytes" in got["info 5,000"][1]
    for name in ("info unknown", "info 100 deep", "info twice"):
        assert got[name][0] and b"grpc-status\x010" in got[name][1], (name, got[name])
    assert not got["info 101 deep"][0], got["info 101 deep"]
    assert b"could not parse the message as arena.v1.GetInfoRequest" in got["info 101 deep"][1]
    assert got["play deflated"][0], got["play deflated"]  # (the Welcome; the call then ends)
    assert after == "welcomed"


def test_a_hello_grpc_core_cannot_decompress_is_cores_internal_and_holds_nothing() -> None:
    """A ``Play`` call whose Hello gRPC core cannot decompress (gzip that is not gzip, or
    the compressed flag without an encoding), sent with the call's headers, with the bot's
    token or an unknown one: core ends the call with its INTERNAL (the token's refusal,
    UNAUTHENTICATED, when the referee reads the token first), nothing is logged, no call
    stays counted, and the bot is welcomed afterwards. (Round 31 pinned the same after
    the Welcome.)"""
    bad = grpc_message(b"abc", compressed=True)
    calls = {}
    for token in (b"tok-x", b"nope"):
        for enc in ((), ((b"grpc-encoding", b"gzip"),)):
            for k in range(5):
                extra = ((b"authorization", b"Bearer " + token), *enc)
                calls[f"{token.decode()} {bool(enc)} {k}"] = (PLAY, extra, bad)

    got, after = _sent_then_welcomed(
        _raw_ends_open,
        calls,
        lambda s: s.open_calls == 0 and s.reserved is None,
        reconnect_limit=1000,
    )
    assert sum(got.values()) == len(calls), got
    assert set(got) <= {"tok-x INTERNAL", "nope INTERNAL", "nope UNAUTHENTICATED"}, got
    assert got["tok-x INTERNAL"] == 10, got
    assert after == "welcomed"


def _sent_then_welcomed(send: Any, calls: Any, done: Any, **config: Any) -> tuple[Any, str]:
    """``send(port, calls)`` (:func:`_raw_ends` or :func:`_raw_ends_open`) against a fresh
    referee, then, once ``done(session of x)`` holds, a Play call of ``x``: what ``send``
    returned, and ``"welcomed"`` if that call was."""

    async def body(ref: Referee, port: int) -> tuple[Any, str]:
        got = await asyncio.to_thread(send, port, calls)
        session = ref.session("x")
        await until(lambda: done(session), "the calls done")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = await _welcomed(_raw_play(channel))
            call.cancel()
        return got, "welcomed"

    return serve_one_bot(body, **config)


def _raw_ends_open(port: int, calls: dict[str, tuple[str, tuple[tuple[bytes, bytes], ...], bytes]],
                   ) -> collections.Counter[str]:  # fmt: skip
    """Like :func:`_raw_ends`, the body sent with the headers and the stream left open (a
    Play call): ``"<token> <status name>"`` counted."""
    names = {b"13": "INTERNAL", b"16": "UNAUTHENTICATED", b"4": "DEADLINE_EXCEEDED"}
    out: collections.Counter[str] = collections.Counter()
    for name, (path, extra, body) in calls.items():
        conn = RawH2(port)
        try:
            sid = conn.call(path, extra=extra, data=body, end=False)
            got = [f for f in conn.frames(10, until_ended={sid}) if f.stream == sid]
            trailers = b"".join(
                f.payload for f in got if f.kind == HEADERS and f.flags & END_STREAM
            )
            code = next((v for k, v in names.items()
                         if b"grpc-status" + bytes((len(k),)) + k in trailers),
                        repr(trailers[-80:]))  # fmt: skip
            out[f"{name.split()[0]} {code}"] += 1
            time.sleep(0.05)  # (the connection kept a moment, unread)
        finally:
            conn.close()
    return out


ASK_TWICE = (
    reflection_pb2.ServerReflectionRequest(list_services=""),
    reflection_pb2.ServerReflectionRequest(file_by_filename="arena/v1/arena.proto"),
)


def test_calls_without_a_token_cut_off_by_a_deadline_of_a_millisecond_log_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """800 calls that need no token, with client deadlines of 0.5 to 30 ms, 80 at a time:
    GetInfo, health Check and Watch, a reflection call asking twice; the deadline passes
    anywhere in the referee's reading of the request, its count toward the per-address
    limit, the answer or the write. Each ends with a status (DEADLINE_EXCEEDED, or its
    answer), nothing is logged, and GetInfo is answered afterwards."""
    monkeypatch.setattr(server_mod, "TOKENLESS_LIMIT", 100_000)  # (800 from one address)
    rnd = random.Random(32)

    async def body(_ref: Referee, port: int) -> tuple[collections.Counter[str], int]:
        ends: collections.Counter[str] = collections.Counter()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = pb_grpc.ArenaStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            refl = reflection_pb2_grpc.ServerReflectionStub(channel)

            async def one(k: int) -> None:
                t = rnd.choice((0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03))
                try:
                    if k % 4 == 0:
                        await info.GetInfo(pb.GetInfoRequest(), timeout=t)
                    elif k % 4 == 1:
                        await health.Check(health_pb2.HealthCheckRequest(), timeout=t)
                    elif k % 4 == 2:
                        async for _ in health.Watch(health_pb2.HealthCheckRequest(), timeout=t):
                            pass
                    else:
                        call = refl.ServerReflectionInfo(timeout=t)
                        for ask in ASK_TWICE:
                            await call.write(ask)
                            await call.read()
                        call.cancel()
                    ends["answered"] += 1
                except grpc.aio.AioRpcError as e:
                    # (a write racing the deadline: the client's own INTERNAL)
                    internal = core_internal(e.code(), e.details(), answered=True)
                    ends["INTERNAL (the client's own)" if internal else e.code().name] += 1
                except asyncio.InvalidStateError:  # (a write after the deadline ended the call)
                    ends["ended while writing"] += 1

            for _ in range(10):
                await asyncio.gather(*(one(k) for k in range(80)))
            version = (await info.GetInfo(pb.GetInfoRequest())).protocol_version
        return ends, version

    ends, version = serve_one_bot(body)
    assert sum(ends.values()) == 800, ends
    assert set(ends) <= {"answered", "DEADLINE_EXCEEDED", "INTERNAL (the client's own)",
                         "ended while writing"}, ends  # fmt: skip
    assert ends["DEADLINE_EXCEEDED"] > 0, ends
    assert version == 1


#: Metadata gRPC core reads itself, each with a value it cannot parse; core writes an
#: ERROR line of its own (stderr, not Python's logging) for each such call, as for an
#: unknown ``grpc-encoding`` (docs/referee.md).
CORE_METADATA = ("te", "grpc-encoding", "grpc-timeout", "grpc-status",
                 "grpc-previous-rpc-attempts", "grpc-retry-pushback-ms",
                 "grpc-internal-encoding-request")  # fmt: skip


def test_metadata_grpc_core_cannot_parse_ends_the_call_or_is_let_be() -> None:
    """``Play`` calls (the bot's token) and ``GetInfo`` calls with an unparsable value (not
    a number, or negative) in a metadata key gRPC core reads itself (``te``,
    ``grpc-timeout``, ``grpc-status``, ...): every call ends with a status (core's INTERNAL,
    before any message, but for a value core takes after all), none is left
    open or counted against the bot, the referee logs nothing through Python's logging,
    and the bot is welcomed afterwards."""
    calls = {}
    for key in CORE_METADATA:
        for value in (b"\xff\x00zz", b"-1"):
            for path in (PLAY, GETINFO):
                extra = ((b"authorization", b"Bearer tok-x"), (key.encode(), value))
                calls[f"{path} {key} {value!r}"] = (path, extra, grpc_message(_HELLO))

    got, after = _sent_then_welcomed(
        _raw_ends, calls, lambda s: s.open_calls == 0 and s.stream is None, reconnect_limit=1000
    )
    assert len(got) == len(calls)
    # gRPC core's INTERNAL before any message, or (a value core reads after all: a
    # negative grpc-retry-pushback-ms) served as usual, OK
    ends = {name: (answered, b"grpc-status\x0213" in t, b"grpc-status\x010" in t)
            for name, (answered, t) in got.items()}  # fmt: skip
    odd = {n: e for n, e in ends.items() if e not in ((False, True, False), (True, False, True))}
    assert not odd, odd
    assert sum(e[1] for e in ends.values()) >= len(calls) - 2, ends
    assert after == "welcomed"


def test_play_calls_whose_deadline_passes_at_once_hold_no_place_of_the_bot() -> None:
    """``Play`` calls with the bot's token and a ``grpc-timeout`` of 1 ns to 30 ms (past, or
    passing, as the referee reads the token, waits for the Hello, or welcomes), with and
    without a Hello: each ends DEADLINE_EXCEEDED, none stays counted among the bot's open
    calls (16 would lock it out) or holds its place for a Hello, nothing is logged, and
    the bot is welcomed afterwards."""
    calls = {}
    for timeout in (b"1n", b"1u", b"100u", b"1m", b"3m", b"10m", b"30m"):
        for hello in (True, False):
            for k in range(3):
                extra = ((b"authorization", b"Bearer tok-x"), (b"grpc-timeout", timeout))
                body = grpc_message(_HELLO) if hello else b""
                calls[f"{timeout!r} {hello} {k}"] = (PLAY, extra, body)

    got, after = _sent_then_welcomed(
        _raw_ends_open,
        calls,
        lambda s: s.open_calls == 0 and s.reserved is None,
        reconnect_limit=1000,
    )
    assert sum(got.values()) == len(calls), got
    assert {name.split()[-1] for name in got} == {"DEADLINE_EXCEEDED"}, got
    assert after == "welcomed"
