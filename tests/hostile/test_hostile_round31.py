"""Hostile round 31: what a bot with a valid token (or none) can do around the edges of a
stream: messages gRPC core itself refuses after the Welcome, a Hello that does not parse
as the arena stops, metadata tricks, answers for a match whose end was sent, ``running``
naming other bots' matches, and one bot answering its two matches with each other's ids.
The referee's real server on a free port (or its streams in process), in this process."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import gzip
import json
import logging
import math
import random
import struct
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import DecodeError
from grpc._cython import cygrpc

from arena.referee import Referee, RefereeConfig
from arena.referee import core as core_mod
from arena.referee import server as server_mod
from arena.referee.lag import LoopLag
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from engine.record import replay
from tests.support.core_internal import core_internal
from tests.support.harness import attach_in_process, no_error_logged, serve_one_bot, until  # noqa: F401 (a fixture)
from tests.support.raw_h2 import (
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADERS,
    RST_STREAM,
    RawH2,
    _hpack_string,
    frame,
    grpc_message,
    header_block,
)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
_HELLO = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def _ends(conn: RawH2, sid: int, seconds: float = 10.0) -> tuple[bool, bytes]:
    """Whether stream ``sid`` got a message (DATA), and the trailers it ended with (``b""``
    if it ended without any, or not within ``seconds``)."""
    got = [f for f in conn.frames(seconds, until_ended={sid}) if f.stream == sid]
    trailers = [f.payload for f in got if f.kind == HEADERS and f.flags & END_STREAM]
    return any(f.kind == DATA for f in got), trailers[-1] if trailers else b""


# ------------------------------------------------------------------------------ fixed


def test_a_message_grpc_core_cannot_decompress_ends_a_welcomed_stream_without_an_error() -> None:
    """Defect: a welcomed bot that sent a message gRPC core cannot decompress (gzip that is
    not gzip, or the compressed flag without an encoding) had its call ended by core with
    INTERNAL, and the referee's read said EOF, as for a half-close; when the handler then
    returned before grpc.aio learned the call was over (a fraction of a millisecond later),
    grpc.aio sent the OK status into a call core had finished and logged the failure as an
    ERROR with a traceback ("ExecuteBatchError raised in core by servicer method
    [/arena.v1.Arena/Play]"): 1 to 11 of 30 such streams, by the machine's timing; with its
    token a bot could write one per stream, 30 streams per 10 s, for as long as it liked.
    Each stream here is told INTERNAL by core, and nothing is logged. A race, so the test
    below makes the handler's side of it certain."""
    cases = (((b"grpc-encoding", b"gzip"),), ())  # gzip that is not gzip; no encoding

    def attack(port: int) -> list[bytes]:
        out = []
        for k in range(10):
            conn = RawH2(port)
            try:
                extra = ((b"authorization", b"Bearer tok-x"), *cases[k % 2])
                sid = conn.call(PLAY, data=grpc_message(_HELLO), end=False, extra=extra)
                welcome = [f for f in conn.frames(0.3) if f.stream == sid]
                assert any(f.kind == DATA for f in welcome), welcome
                conn.sock.sendall(frame(DATA, 0, sid, grpc_message(b"abc", compressed=True)))
                out.append(_ends(conn, sid)[1])
                time.sleep(0.2)  # (the connection kept a moment, unread: the race showed so)
            finally:
                conn.close()
        return out

    async def body(ref: Referee, port: int) -> list[bytes]:
        ends = await asyncio.to_thread(attack, port)
        session = ref.session("x")
        await until(lambda: session.open_calls == 0 and session.stream is None, "calls done")
        return ends

    ends = serve_one_bot(body, reconnect_limit=1000)
    assert len(ends) == 10
    assert all(b"grpc-status\x0213" in t for t in ends), ends  # INTERNAL, gRPC core's own


class _Call:
    """A ``Play`` call's context as grpc.aio hands it to the referee: token ``tok-x``, a
    Hello, then EOF (or, ``failing_write``, no EOF and the Welcome's write failing: the
    call is over for gRPC core); grpc.aio's news that the call is over (``task.cancel()``)
    comes ``news_s`` after that, as it does when gRPC core itself ended the call."""

    def __init__(self, news_s: float, failing_write: bool = False) -> None:
        self.news_s = news_s
        self.failing_write = failing_write
        self.task: asyncio.Task[None] | None = None
        self.reads: list[Any] = [pb.BotMessage(hello=pb.Hello(protocol_version=1))]
        if not failing_write:
            self.reads.append(grpc.aio.EOF)
        self.written: list[pb.ServerMessage] = []
        self.code: grpc.StatusCode | None = None

    def _news_later(self) -> None:
        assert self.task is not None
        asyncio.get_running_loop().call_later(self.news_s, self.task.cancel)

    def invocation_metadata(self) -> Any:
        return (("authorization", "Bearer tok-x"),)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def add_done_callback(self, callback: Any) -> None:
        assert self.task is not None
        self.task.add_done_callback(lambda _t: callback(self))

    async def send_initial_metadata(self, _metadata: Any) -> None:
        pass

    async def write(self, msg: pb.ServerMessage | bytes) -> None:
        if self.failing_write:
            self._news_later()
            raise cygrpc.ExecuteBatchError('Failed "execute_batch"')
        # (bytes: a request as its wire bytes; what a client parses)
        self.written.append(pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg)

    async def read(self) -> Any:
        if self.reads and self.reads[0] is grpc.aio.EOF:
            self._news_later()
        if not self.reads:
            await asyncio.Event().wait()
        return self.reads.pop(0)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, _details: str) -> None:
        pass


@pytest.mark.parametrize("end", ["eof", "failed write"])
def test_a_read_that_says_eof_waits_for_grpcs_news_that_the_call_is_over(end: str) -> None:
    """What the test above races for, made certain: after the read's EOF (or a write that
    failed), the handler must not return (which sends the OK status) before grpc.aio can
    tell it that gRPC core ended the call; told so, it ends as cancelled, which grpc.aio
    logs at DEBUG. Before, it returned within a few turns of the loop, and the news (5 ms
    later here) came too late."""

    async def main() -> tuple[bool, _Call]:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        call = _Call(news_s=0.005, failing_write=end == "failed write")
        task = call.task = asyncio.ensure_future(ref.serve_stream(call))
        try:
            await task
        except asyncio.CancelledError:
            return True, call
        return False, call

    cancelled, call = asyncio.run(main())
    if end == "eof":
        assert call.written and call.written[0].HasField("welcome"), call.written
    assert cancelled, "the handler returned before it could hear that the call was over"


REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


def test_a_reflection_call_grpc_core_ends_itself_logs_nothing() -> None:
    """Defect: the same as above, without a token: a server reflection call that asked
    once, then sent a message gRPC core could not decompress, ended its requests there;
    the reflection handler returned, and its OK status, refused by core, was logged as an
    ERROR with a traceback ("ExecuteBatchError raised in core by servicer method
    [/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo]"): 4 of 30 such
    calls, as often as the per-address limit lets a client call. Each call here gets its
    answer, then core's INTERNAL, and nothing is logged. A race: the test after the next
    makes the handler's side of it certain."""
    from grpc_reflection.v1alpha import reflection_pb2

    ask = reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString()
    cases = (((b"grpc-encoding", b"gzip"),), ())

    def attack(port: int) -> list[tuple[bool, bytes]]:
        out = []
        for k in range(10):
            conn = RawH2(port)
            try:
                sid = conn.call(REFLECTION, extra=cases[k % 2], data=grpc_message(ask), end=False)
                answered = any(f.kind == DATA and f.stream == sid for f in conn.frames(0.3))
                conn.sock.sendall(frame(DATA, 0, sid, grpc_message(b"abc", compressed=True)))
                out.append((answered, _ends(conn, sid)[1]))
                time.sleep(0.2)  # (the connection kept a moment, unread: the race showed so)
            finally:
                conn.close()
        return out

    async def body(ref: Referee, port: int) -> list[tuple[bool, bytes]]:
        return await asyncio.to_thread(attack, port)

    got = serve_one_bot(body)
    assert len(got) == 10 and all(answered for answered, _ in got), got
    assert all(b"grpc-status\x0213" in t for _, t in got), got


def test_a_streaming_call_without_a_token_waits_for_grpcs_news_after_its_requests_end() -> None:
    """What the reflection test races for, made certain: once a streaming call's requests
    end, its handler must not return (sending the OK status) before grpc.aio can tell it
    that gRPC core ended the call (5 ms later here); told so, it ends as cancelled."""

    async def servicer(requests: Any, _context: Any) -> Any:
        async for request in requests:
            yield request

    got: list[bytes] = []

    class Context:
        def peer(self) -> str:
            return "ipv4:127.0.0.1:1"

        async def write(self, response: bytes) -> None:  # (the referee writes its answers)
            got.append(response)

    async def main() -> tuple[bool, list[bytes]]:
        calls = server_mod._OpenCalls(asyncio.Event())
        plain = grpc.stream_stream_rpc_method_handler(servicer, request_deserializer=bytes)
        wrapped = server_mod._parsing_refused(plain, calls)
        task: asyncio.Task[None] | None = None

        async def requests() -> Any:
            yield b"ask"
            assert task is not None  # (the requests end: grpc.aio hears of it 5 ms later)
            asyncio.get_running_loop().call_later(0.005, task.cancel)

        async def consume() -> None:
            await wrapped.stream_stream(requests(), Context())

        task = asyncio.ensure_future(consume())
        try:
            await task
        except asyncio.CancelledError:
            return True, got
        return False, got

    cancelled, got = asyncio.run(main())
    assert got == [b"ask"], got
    assert cancelled, "the call returned before it could hear that it was over"


def test_a_hello_that_does_not_parse_as_the_arena_stops_leaves_no_task_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a stream whose first message did not parse, read as the arena stopped (its
    stream ended at once), was refused with the stop's status, as it should; but the task
    that read the bytes kept its own refusal unretrieved, and asyncio logged it when the
    task was collected: "Task exception was never retrieved", an ERROR with a traceback.
    It is retrieved now (also when the call is cancelled at that moment)."""

    class Garbage:
        async def read(self) -> Any:
            raise DecodeError("Error parsing message")

    async def main() -> grpc.StatusCode:
        stream = Stream("peer")
        stream.end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")
        try:
            await core_mod._await_hello(Garbage(), "x", stream)
        except core_mod._Refusal as e:
            return e.code  # (the refusal and its frames are let go: the task with them)
        raise AssertionError("not refused")

    caplog.set_level(logging.WARNING)
    code = asyncio.run(main())
    gc.collect()  # (a task holding an exception nobody retrieved says so when collected)
    assert code is grpc.StatusCode.UNAVAILABLE, code
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


# ------------------------------------------------------------------------ checked, held


def test_metadata_tricks_are_read_one_way_and_log_nothing() -> None:
    """The ``authorization`` metadata as a raw HTTP/2 client can send it: the first entry
    that reads ``Bearer <token>`` decides (another one after it changes nothing, one before
    it that is not Bearer does not count), a hundred copies of the right one are let in, a
    token of non-ASCII characters is an unknown one, ``authorization-bin`` (binary) is no
    token, and a Hello compressed with gzip is read as any other. Nothing is logged."""
    auth = b"authorization"
    cases: dict[str, tuple[tuple[bytes, bytes], ...]] = {
        "wrong first": ((auth, b"Bearer nope"), (auth, b"Bearer tok-x")),
        "right first": ((auth, b"Bearer tok-x"), (auth, b"Bearer nope")),
        "basic first": ((auth, b"Basic dG9rLXg="), (auth, b"Bearer tok-x")),
        "a hundred": tuple((auth, b"Bearer tok-x") for _ in range(100)),
        "non-ascii": ((auth, "Bearer tök-x".encode()),),
        "binary": ((b"authorization-bin", b"QmVhcmVyIHRvay14"),),
        "gzip hello": ((auth, b"Bearer tok-x"), (b"grpc-encoding", b"gzip")),
    }

    def attack(port: int) -> dict[str, tuple[bool, bytes]]:
        out = {}
        for name, extra in cases.items():
            conn = RawH2(port)
            try:
                hello = (
                    grpc_message(gzip.compress(_HELLO), compressed=True)
                    if name == "gzip hello"
                    else grpc_message(_HELLO)
                )
                sid = conn.call(PLAY, extra=extra, data=hello, end=False)
                welcomed, trailers = False, b""
                for _ in range(50):  # (a welcomed stream stays open: read until its Welcome)
                    got = [f for f in conn.frames(0.2) if f.stream == sid]
                    welcomed |= any(f.kind == DATA for f in got)
                    ended = [f.payload for f in got if f.kind == HEADERS and f.flags & END_STREAM]
                    trailers = ended[-1] if ended else trailers
                    if welcomed or trailers or any(f.kind == RST_STREAM for f in got):
                        break
                out[name] = (welcomed, trailers)
            finally:
                conn.close()
        return out

    async def body(ref: Referee, port: int) -> dict[str, tuple[bool, bytes]]:
        return await asyncio.to_thread(attack, port)

    got = serve_one_bot(body)
    for name in ("right first", "basic first", "a hundred", "gzip hello"):
        assert got[name][0], (name, got[name])
    for name in ("wrong first", "non-ascii"):
        assert not got[name][0] and b"grpc-status\x0216" in got[name][1], (name, got[name])
        assert b"unknown token" in got[name][1], (name, got[name])
    assert not got["binary"][0] and b"missing token" in got["binary"][1], got["binary"]


def test_an_answer_for_a_match_whose_end_was_sent_changes_nothing(tmp_path: Path) -> None:
    """Answers that come after a match's end was sent (a bot that did not read it, or
    answers again from memory) find no seat: refused "you have no seat in a running
    match", counted nowhere in the finished record, and its file gets no line after its
    ``end``."""
    ref = Referee(RefereeConfig(decision_ms=1000, record_dir=tmp_path))
    sent: list[pb.ServerMessage] = []
    last: dict[str, pb.DecisionRequest] = {}

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        last[bot] = r
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    async def main() -> dict[str, Any]:
        streams = attach_in_process(ref, ("x", "y", "z"), answer)
        rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 7, ["x", "y", "z"])
        queue = streams["x"]._queue  # (what the stream would write, in order)
        while not queue.empty():
            queue.get_nowait()  # (the match's own messages, its end among them)
        r = last["x"]
        for rid in (r.request_id, str(int(r.request_id) + 1), "1"):
            d = pb.Decision(request_id=rid, match_id="m", action=r.view.legal_actions[0])
            assert ref.on_decision(ref.session("x"), d) is False
        while not queue.empty():
            msg = queue.get_nowait()
            assert msg is not None
            sent.append(msg)
        return rec

    rec = asyncio.run(main())
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "end"
    assert json.loads(lines[-1])["record"] == json.loads(json.dumps(rec))  # (the same)
    assert rec["wrong_requests"] == [0, 0, 0] and not [
        i for i in rec["incidents"] if i["kind"] == "wrong_request"
    ]
    refused = [m.decision_rejected for m in sent if m.HasField("decision_rejected")]
    assert len(refused) == 3, sent
    assert all(r.incident == pb.INCIDENT_WRONG_REQUEST for r in refused), refused
    assert all("no seat in a running match 'm'" in r.message for r in refused), refused
    assert all(not r.legal_actions for r in refused), refused


def test_running_ids_of_other_bots_matches_do_not_count_against_matches() -> None:
    """``Hello.running`` names matches the bot holds as under way, so that one whose end
    comes again counts toward ``matches``. Ids of matches of other bots (seen in nothing
    the bot was sent, or guessed) must not lower it: a bot naming another table's ended
    match is still seated in as many matches as it said; the bot that played it, naming
    it, finishes it on this stream (its end comes again) and so has one fewer left."""

    async def body(ref: Referee, port: int) -> tuple[int | None, int | None]:
        def play(bot: str, r: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_decision(ref.session(bot), d)

        attach_in_process(ref, ("a", "c", "d"), play)
        await ref.run_match("m-abc", ONE_DEAL, 3, ["a", "c", "d"])
        out = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaStub(channel)
            for bot, token in (("x", "tok-x"), ("d", "tok-d")):
                call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
                hello = pb.Hello(protocol_version=1, matches=1, running=["m-abc", "zz"])
                await call.write(pb.BotMessage(hello=hello))
                first = await call.read()
                assert first.WhichOneof("kind") == "welcome", first
                out.append(ref.session(bot).matches_left)
                call.cancel()
        return out[0], out[1]

    x_left, d_left = serve_one_bot(body)
    assert x_left == 1  # another table's match: not its own to finish
    assert d_left == 0  # its own, whose end it is sent again


def test_a_bot_answering_its_two_matches_with_each_others_ids_harms_only_itself() -> None:
    """A bot seated in two matches at once answers every request of one with the other's
    match id (same request id, same action: request ids count each seat's requests, so
    they often agree). Each answer lands in the other match, where it is that seat's
    answer if legal there, a strike if not, or a wrong request; the bot's own seats take
    every incident, the honest seats of both matches none, and both records replay."""
    ref = Referee(RefereeConfig(decision_ms=100, time_bank_ms=0, max_strikes=1000))
    swapped = {"m1": "m2", "m2": "m1"}

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        mid = swapped[r.match_id] if bot == "x" else r.match_id
        d = pb.Decision(request_id=r.request_id, match_id=mid, action=r.view.legal_actions[-1])
        ref.on_decision(ref.session(bot), d)

    async def main() -> list[dict[str, Any]]:
        attach_in_process(ref, ("x", "y", "z"), answer)
        return list(
            await asyncio.gather(
                ref.run_match("m1", ONE_DEAL, 11, ["x", "y", "z"]),
                ref.run_match("m2", ONE_DEAL, 12, ["y", "x", "z"]),
            )
        )

    r1, r2 = asyncio.run(main())
    for rec, x_seat in ((r1, 0), (r2, 1)):
        assert rec["incidents"], rec["incidents"]  # (the bot's: struck, timed out, refused)
        assert {i["seat"] for i in rec["incidents"]} == {x_seat}, rec["incidents"]
        assert not rec["forfeits"]
        replay(rec)


def test_play_calls_reset_at_random_moments_log_nothing_and_hold_nothing() -> None:
    """``Play`` calls reset by their client (RST_STREAM) at random moments within 3 ms of
    their Hello, with an unknown token or the bot's (so at any point of the refusal, the
    Hello's wait, the Welcome, the attach): the referee logs nothing, no call stays
    counted against the bot's open calls, and the bot is let in afterwards."""

    def attack(port: int, token: bytes) -> None:
        rnd = random.Random(31)
        conn = RawH2(port)
        try:
            for k in range(150):
                sid = 2 * k + 1
                block = header_block(PLAY, ((b"authorization", token),))
                conn.sock.sendall(frame(HEADERS, END_HEADERS, sid, block)
                                  + frame(DATA, 0, sid, grpc_message(_HELLO)))  # fmt: skip
                time.sleep(rnd.random() * 0.003)
                conn.sock.sendall(frame(RST_STREAM, 0, sid, struct.pack(">I", 8)))  # CANCEL
                if k % 20 == 0:
                    conn.frames(0.005)  # (its SETTINGS and PINGs answered)
            conn.frames(0.5)
        finally:
            conn.close()

    async def body(ref: Referee, port: int) -> str | None:
        for token in (b"Bearer nope", b"Bearer tok-x"):
            await asyncio.to_thread(attack, port, token)
        session = ref.session("x")
        await until(lambda: session.open_calls == 0 and session.stream is None, "calls done")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer tok-x"),))
            await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
            first = await call.read()
            call.cancel()
        kind: str | None = first.WhichOneof("kind")
        return kind

    assert serve_one_bot(body, reconnect_limit=1000) == "welcome"


def test_trailers_from_the_client_end_a_welcomed_stream_as_a_half_close() -> None:
    """A raw client may end its side of a welcomed ``Play`` stream with trailers (a HEADERS
    frame with END_STREAM), which no gRPC client sends: any of them (a ``grpc-status`` of
    its own, a pseudo-header, none) is a half-close, answered OK; a ``-bin`` value that is
    not base64 there is gRPC core's INTERNAL. Nothing is logged either way."""

    def block(fields: list[tuple[bytes, bytes]]) -> bytes:
        return b"".join(b"\x00" + _hpack_string(k) + _hpack_string(v) for k, v in fields)

    cases = {
        "status": [(b"grpc-status", b"13"), (b"grpc-message", b"boom")],
        "plain": [(b"x-note", b"hi")],
        "pseudo": [(b":path", b"/x")],
        "empty": [],
        "bad bin": [(b"x-bin", b"!!!notbase64")],
    }

    def attack(port: int) -> dict[str, bytes]:
        out = {}
        for name, fields in cases.items():
            conn = RawH2(port)
            try:
                extra = ((b"authorization", b"Bearer tok-x"),)
                sid = conn.call(PLAY, data=grpc_message(_HELLO), end=False, extra=extra)
                assert any(f.kind == DATA and f.stream == sid for f in conn.frames(0.3))
                conn.sock.sendall(frame(HEADERS, END_HEADERS | END_STREAM, sid, block(fields)))
                out[name] = _ends(conn, sid)[1]
                time.sleep(0.2)  # (the connection kept a moment, unread)
            finally:
                conn.close()
        return out

    async def body(ref: Referee, port: int) -> dict[str, bytes]:
        return await asyncio.to_thread(attack, port)

    got = serve_one_bot(body, reconnect_limit=1000)
    for name in ("status", "plain", "pseudo", "empty"):
        assert b"grpc-status\x010" in got[name], (name, got[name])  # OK
    assert b"grpc-status\x0213" in got["bad bin"], got["bad bin"]  # INTERNAL


class _ClockAt:
    """The referee's loop, its clock read as ``now``: an answer read at that instant."""

    def __init__(self, loop: asyncio.AbstractEventLoop, now: float) -> None:
        self._loop = loop
        self._now = now

    def time(self) -> float:
        return self._now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)


def test_an_answer_read_at_its_deadline_is_a_timeout_and_a_microsecond_before_is_the_bots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline's boundary, to the instant: an answer read a microsecond before limit +
    bank is the bot's, its time in the record the whole budget (rounded) and its bank spent
    (the next request says 0 ms of it); one read exactly at limit + bank is a timeout (the
    fallback, a strike, the answer refused naming it), as a request due to be asked again
    at that instant is not asked: at the deadline the time is up. (The loop's stalls are not
    excused here: the answer's clock is read as of the deadline, ahead of the real clock the
    stall meter ticks on, and the meter, asked as of that instant, took the time between for
    a stall in progress and moved the deadline on by it: the answer at the deadline was the
    bot's. Since on_decision reads the meter as of its clock read, ac1de02.)"""
    monkeypatch.setattr(LoopLag, "TOLERANCE", math.inf)
    ref = Referee(RefereeConfig(decision_ms=200, time_bank_ms=100, max_strikes=1000))
    said: list[bool] = []
    sent: list[pb.ServerMessage] = []

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        if bot != "x" or len(said) >= 2:
            ref.on_decision(ref.session(bot), d)
            return
        runner = ref._matches["m"]
        pending = runner.seats[0].pending
        assert pending is not None and pending.request_id == r.request_id
        loop = runner._loop
        at = pending.deadline - 1e-6 if not said else pending.deadline
        runner._loop = _ClockAt(loop, at)  # type: ignore[assignment]
        try:
            said.append(ref.on_decision(ref.session(bot), d))
        finally:
            runner._loop = loop

    async def main() -> dict[str, Any]:
        streams = attach_in_process(ref, ("x", "y", "z"), answer)
        rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"])
        queue = streams["x"]._queue
        while not queue.empty():
            msg = queue.get_nowait()
            if msg is not None:
                sent.append(msg)
        return rec

    rec = asyncio.run(main())
    assert said == [True, False], said
    asked = [
        a for d in rec["deals"] for a in d["actions"] if a["seat"] == 0 and a["by"] != "forced"
    ]
    assert asked[0]["by"] == "bot" and asked[0]["ms"] == 300, asked[0]
    assert asked[1]["by"] == "fallback" and asked[1]["ms"] == 200, asked[1]
    kinds = [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == 0]
    assert kinds[0][0] == "wrong_request" and "timed out" in kinds[0][1], kinds
    assert kinds[1][0] == "timeout" and "within 200 ms" in kinds[1][1], kinds
    requests = [m.decision_request for m in sent if m.HasField("decision_request")]
    assert (requests[0].time_limit_ms, requests[0].time_bank_ms) == (200, 100), requests[0]
    assert (requests[1].time_limit_ms, requests[1].time_bank_ms) == (200, 0), requests[1]


def test_getinfo_is_answered_while_play_calls_are_refused_and_flooded() -> None:
    """``GetInfo`` (no token) from the same address while, at once, 300 ``Play`` calls of
    an unknown token are refused and a welcomed bot floods its stream with strays until it
    is closed: every ``GetInfo`` is answered (refused ``Play`` calls and a bot's strays do
    not count toward the address's limit on requests without a token), and the flooder
    is told RESOURCE_EXHAUSTED."""

    async def body(ref: Referee, port: int) -> tuple[list[int], str]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.ArenaStub(channel)

            async def refused() -> None:
                for _ in range(300):
                    call = stub.Play(metadata=(("authorization", "Bearer nope"),))
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await call.read()

            async def flood() -> str:
                call = stub.Play(metadata=(("authorization", "Bearer tok-x"),))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                stray = pb.BotMessage(hello=pb.Hello(client="y" * 2000))
                with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    for _ in range(2000):
                        await call.write(stray)
                code, details = await call.code(), await call.details()
                # (a write in flight as the referee ends the call: the client's own INTERNAL,
                # grpc/grpc#36066, taken for the status it replaced)
                if core_internal(code, details, answered=True):
                    return "RESOURCE_EXHAUSTED (told INTERNAL by the client's own gRPC)"
                return str(code.name)

            async def info() -> list[int]:
                versions = []
                for _ in range(40):
                    versions.append((await stub.GetInfo(pb.GetInfoRequest())).protocol_version)
                    await asyncio.sleep(0.01)
                return versions

            got = await asyncio.gather(refused(), flood(), info())
        await until(lambda: ref.session("x").stream is None, "the flooder's stream closed")
        return got[2], got[1]

    versions, flooded = serve_one_bot(body)
    assert versions == [1] * 40, versions
    assert flooded.startswith("RESOURCE_EXHAUSTED"), flooded
