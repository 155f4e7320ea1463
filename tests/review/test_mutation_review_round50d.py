"""Review round 50d: round 50's protocol changes (a Batch joined from wire bytes, the
"results_once" feature, Play's requests parsed from raw bytes, a first message bounded by
``HELLO_MAX_BYTES``, a later one's bytes weighed before it is parsed), read with hand
mutants. Each test here kills mutants the round's own tests let live:

- the referee's Welcome lists "results_once", and only a Hello naming it gets views without
  the results it was sent ("batch" alone, or no feature, gets every result);
- a view that leaves results out takes the *first* ones of the match's earlier view, and is
  refused when those with the ones it lists are more than its deal has before it;
- ``MatchStarted``'s view counts as sent: after a reconnect with no request pending, the
  next request leaves out what the resumed start held; the SDK takes a resumed start's view
  as the match's (the next request's results come from it), also for a request that offers
  actions of a newer kind;
- a later message at exactly 256 answers' allowance (128 KiB since round 51, 256 before;
  and up to 1,023 bytes past) weighs nothing unread,
  one KiB more weighs 1; a message's weight is its bytes on the wire (a field repeated a
  thousand times is parsed as one, and was weighed as one), counted once;
- two messages that take exactly ``MAX_BATCH_BYTES`` together go in one batch;
- the bench samples requests as the SDK's bots are sent them.

64 hand mutants: 41 killed by the earlier tests, 15 by these, 8 equivalent (bytes
serialized again rather than kept, a stream identity the reconnect makes hold anyway, a
serializer written otherwise), none left.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import MalformedMessageError, message_bytes, view_from_pb, view_to_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import ANSWER_BYTES, MAX_DECISION_BATCH
from arena.referee.sessions import MAX_BATCH_BYTES, BotSession, Stream
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import Game, PlayerView
from engine.rules import PRESETS
from engine.view import observe
from sdk import Bot
from tests.support.harness import as_message, no_error_logged, serve_one_bot  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
FOUR_DEALS = dataclasses.replace(PRESETS["classic"], max_deals=4)


# ----------------------------------------------------------------- who asked for the feature


async def _raw_bot(port: int, name: str, features: list[str], got: dict[str, Any]) -> None:
    """A bot of ``name`` whose Hello lists ``features``: answers each request with its first
    legal action until its match ends, keeping the Welcome's features and every view."""
    views: list[pb.PlayerView] = got.setdefault("views", [])
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", f"Bearer tok-{name}"),))
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1,
                                                      features=features)))  # fmt: skip
        while (m := await asyncio.wait_for(call.read(), 60)) is not grpc.aio.EOF:
            for x in m.batch.messages if m.HasField("batch") else [m]:
                if x.HasField("welcome"):
                    got["features"] = list(x.welcome.features)
                elif x.HasField("decision_request"):
                    r = x.decision_request
                    views.append(pb.PlayerView())
                    views[-1].CopyFrom(r.view)
                    await call.write(pb.BotMessage(decision=pb.Decision(
                        request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])))  # fmt: skip
                elif x.HasField("match_ended"):
                    call.cancel()
                    return


def test_only_a_hello_naming_results_once_gets_views_without_results() -> None:
    """Mutants: "results_once" left out of the referee's FEATURES; the stream's flag set by
    any feature ("batch" alone); both survived the round's tests (the SDK asks for both, the
    in-process streams set the flag themselves)."""
    asks = {"a": ["batch"], "b": ["results_once"], "c": []}
    got: dict[str, dict[str, Any]] = {n: {} for n in asks}

    async def main() -> None:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        for n in asks:
            referee.add_bot(n, f"tok-{n}")
        server, port = await start_server(referee)
        bots = [asyncio.create_task(_raw_bot(port, n, f, got[n])) for n, f in asks.items()]
        try:
            assert not await referee.wait_for_bots(list(asks), 60)
            rec = await referee.run_match("m1", FOUR_DEALS, 9, list(asks))
            assert not rec["incidents"], rec["incidents"]
            await asyncio.wait_for(asyncio.gather(*bots), 60)
        finally:
            for b in bots:
                b.cancel()
            await server.stop(0)

    asyncio.run(main())
    for n in asks:
        assert got[n]["features"] == ["batch", "results_once", "deal_once", "ahead"], got[n]
        views = got[n]["views"]
        assert views and views[-1].deal_number >= 2, n
        held = 0
        for v in views:
            if n == "b":
                assert v.deal_results_omitted == held, (n, v.deal_number)
            else:
                assert v.deal_results_omitted == 0, (n, v.deal_number)
                held = 0
            held += len(v.deal_results)
            assert held == v.deal_number
    assert any(v.deal_results_omitted for v in got["b"]["views"])


# ------------------------------------------------------------------------- view_from_pb


def _views(seed: int = 4) -> list[PlayerView]:
    """Seat 0's views of its decisions in a random classic match of 5 deals."""
    rng = random.Random(seed)
    g = Game.new("classic", seed=seed, players=["a", "b", "c"])
    out: list[PlayerView] = []
    while not g.is_over and len(g.deal_results) < 5:
        legal = g.legal_actions()
        if g.to_act == 0 and len(legal) > 1:
            out.append(observe(g, 0))
        g.apply(rng.choice(legal), seat=g.to_act)
    return out


def test_results_left_out_are_the_first_of_the_earlier_view() -> None:
    """Mutant: ``known[-omitted:]`` (the last ones): the same while the earlier view holds
    no more than are left out, wrong for one that holds more."""
    views = _views()
    late = next(v for v in views if len(v.deal_results) >= 3)
    early = next(v for v in views if len(v.deal_results) == 2)
    msg = view_to_pb(early, results_omitted=1)
    assert view_from_pb(msg, early.ruleset, late) == early


def test_results_left_out_count_toward_the_deals_before_the_view() -> None:
    """Mutant: the bound on a view's results counts only those it lists: a view of deal 3
    that leaves out 2 and lists 2 claims 4 earlier deals."""
    views = _views()
    prev = next(v for v in views if len(v.deal_results) == 2)
    later = next(v for v in views if len(v.deal_results) == 3)
    msg = view_to_pb(later, results_omitted=2)
    assert view_from_pb(msg, later.ruleset, prev) == later  # (the honest one)
    extra = pb.DealResult()
    extra.CopyFrom(msg.deal_results[0])
    msg.deal_results.append(extra)  # 2 left out + 2 listed, in a view of deal 4
    with pytest.raises(MalformedMessageError, match="4 results of earlier deals in a view of"):
        view_from_pb(msg, later.ruleset, prev)


# ------------------------------------------------------- MatchStarted's view counts as sent


class _Keeps(_AnswerAtOnce):
    """An in-process bot asking for "results_once", keeping its starts' and requests'
    views; ``then``: the stream it comes back on after its first answer in deal 3."""

    __slots__ = ("moved", "starts", "then", "views")

    def __init__(self, referee: Referee, session: BotSession, then: _Keeps | None) -> None:
        super().__init__(referee, session)
        self.results_once = True
        self.then = then
        self.moved = False
        self.starts: list[pb.MatchStarted] = []
        self.views: list[pb.PlayerView] = []

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        if self.moved:
            return
        if msg.HasField("match_started"):
            self.starts.append(msg.match_started)
        if msg.HasField("decision_request"):
            self.views.append(msg.decision_request.view)
            if self.then is not None and msg.decision_request.view.deal_number >= 2:
                # Answered (on the next turn), then a new stream: no request pending on it.
                self.moved = True
                super().put(msg)
                asyncio.get_running_loop().call_soon(self.session.attach, self.then)
                return
        super().put(msg)


def test_a_resumed_starts_results_are_left_out_of_the_next_request() -> None:
    """Mutants: ``_send_started`` not recording what its view held (or recording 0): the
    next request after a reconnect that had no request to send again carried every result
    again, though the bot was just sent them all."""

    async def main() -> _Keeps:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        later: _Keeps | None = None
        for name in ("a", "b", "c"):
            referee.add_bot(name, f"token-{name}")
            session = referee.session(name)
            if name == "a":
                later = _Keeps(referee, session, None)
            session.attach(_Keeps(referee, session, later if name == "a" else None))
        await referee.run_match("m1", FOUR_DEALS, 5, ["a", "b", "c"])
        assert later is not None
        return later

    later = asyncio.run(main())
    assert len(later.starts) == 1 and later.starts[0].resumed
    start_results = len(later.starts[0].view.deal_results)
    assert start_results >= 2 and later.views
    first = later.views[0]
    assert first.deal_results_omitted == start_results, first.deal_results_omitted
    assert first.deal_results_omitted + len(first.deal_results) == first.deal_number


# --------------------------------------------------------------- the SDK's resumed start


def test_the_sdk_takes_a_resumed_starts_view_for_the_next_requests_results() -> None:
    """Mutants: the SDK keeping its old view at a resumed MatchStarted; a request that
    offers an action of a newer kind decoded without the match's view. Either way the
    request after the resumed start (results left out: the start held them) was refused as
    malformed and never answered."""
    from sdk.client import RunSummary
    from tests.sdk.test_hostile_arena import GUARD, WELCOME, Out, ended, started
    from tests.sdk.test_hostile_arena import Stream as FakeStream
    from tests.sdk.test_hostile_arena_round3 import _end, _ending

    rng = random.Random(7)
    g = Game.new(PRESETS["classic"], 3, ("a", "b", "c"))
    first = started("m1", g)
    seat = first.match_started.seat
    while not (g.deal_number >= 2 and g.to_act == seat and len(g.legal_actions()) > 1):
        g.apply(rng.choice(g.legal_actions()), seat=g.to_act)
    view = observe(g, seat)
    resumed = started("m1", g)
    resumed.match_started.resumed = True
    seen: list[PlayerView] = []

    class First(Bot):
        def act(self, view: PlayerView) -> Any:
            seen.append(view)
            return view.legal_actions[0]

    answered: list[pb.Decision | None] = []

    async def before(s: FakeStream) -> AsyncIterator[Out]:
        yield WELCOME
        yield first
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")  # the bot comes back

    async def script(s: FakeStream) -> AsyncIterator[Out]:
        yield WELCOME
        yield resumed
        for rid, newer in (("7", False), ("8", True)):
            req = pb.ServerMessage(decision_request=pb.DecisionRequest(
                request_id=rid, match_id="m1", deal_number=g.deal_number, time_limit_ms=5000,
                time_bank_ms=5000))  # fmt: skip
            view_to_pb(view, req.decision_request.view, len(view.deal_results))
            if newer:  # (a field of a number no kind has: a newer protocol's)
                req.decision_request.view.legal_actions.add().MergeFromString(b"\x42\x00")
            yield req
            answered.append(await s.decision())
        yield ended("m1")

    summary, _ = _ending(First, before, script, matches=1, retry_for=GUARD)
    assert isinstance(summary, RunSummary) and summary.matches == 1
    assert [d.request_id if d is not None else None for d in answered] == ["7", "8"]
    assert seen == [view, view]


# ------------------------------------------------------------- bytes weighed before parsing


async def _stream_sends(port: int, raws: list[bytes]) -> tuple[int, str, str]:
    """Bot x says Hello and sends ``raws`` in turn, reading one message after each (the
    rejection of a decision for no match); how many came, and the call's status."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(PLAY, request_serializer=lambda b: b)(
            metadata=(("authorization", "Bearer tok-x"),)
        )
        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString())
        welcome = pb.ServerMessage.FromString(await asyncio.wait_for(call.read(), 30))
        assert welcome.HasField("welcome"), welcome
        replies = 0
        with contextlib.suppress(grpc.aio.AioRpcError):
            for raw in raws:
                await call.write(raw)
                got = await asyncio.wait_for(call.read(), 30)
                if got is grpc.aio.EOF:
                    break
                assert pb.ServerMessage.FromString(got).HasField("decision_rejected")
                replies += 1
            await call.done_writing()
            while await asyncio.wait_for(call.read(), 30) is not grpc.aio.EOF:
                pass
        return replies, (await call.code()).name, await call.details() or ""


def test_a_message_at_exactly_the_allowance_weighs_nothing_unread() -> None:
    """With a flood limit of 1: bytes that do not parse, of 256 answers' allowance (128 KiB
    since round 51, 256 KiB before) and 1,023 bytes past it, are read (refused for not
    parsing) however often; of a KiB more, the first is read (it weighs 1) and the second
    refused unread as a flood. Mutants: the allowance a KiB larger; every byte weighed; a
    weight of 1 not counted."""
    allowance = MAX_DECISION_BATCH * ANSWER_BYTES
    assert allowance == 128 * 1024
    at = b"\x0f" * (allowance + 1023)
    past = b"\x0f" * (allowance + 1024)

    async def body(ref: Referee, port: int) -> list[tuple[int, str, str]]:
        return [await _stream_sends(port, [raw]) for raw in (at, at, at, past, past)]

    out = serve_one_bot(body, flood_limit=1, flood_window_s=3600)
    for replies, code, details in out[:4]:
        assert (replies, code) == (0, "INVALID_ARGUMENT") and "could not parse" in details, out
    assert out[4][:2] == (0, "RESOURCE_EXHAUSTED"), out
    assert out[4][2].startswith("more than 1 messages answering no pending request"), out


def test_a_message_weighs_its_bytes_on_the_wire_once() -> None:
    """A decision for no match of 401 KiB, its ``failed`` written 410 times (protobuf keeps
    the last: the parsed message is 1 KB), weighs 1 + 401 (273 of it, its KiB past 128,
    unread): the third passes a flood limit of 1,100 (answered, then the stream closed).
    Mutants: the weight taken from the parsed message (``ByteSize``: 273 each, never a
    flood); the bytes counted unread counted again (675 each: the second flooded). (Round
    51 halved the allowance; at 1,000 the third is now refused unread.)"""
    one = pb.Decision(failed="f" * 1000).SerializeToString()
    inner = pb.Decision(request_id="1", match_id="none").SerializeToString() + one * 410
    key = pb.BotMessage.DESCRIPTOR.fields_by_name["decision"].number << 3 | 2
    dup = _varint(key) + _varint(len(inner)) + inner
    assert pb.BotMessage.FromString(dup).ByteSize() < 2000 and 400 * 1024 < len(dup) < 402 * 1024

    async def body(ref: Referee, port: int) -> tuple[int, str, str]:
        return await _stream_sends(port, [dup, dup, dup])

    replies, code, details = serve_one_bot(body, flood_limit=1100, flood_window_s=3600)
    assert (replies, code) == (3, "RESOURCE_EXHAUSTED"), (replies, code, details)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


# ------------------------------------------------------------------------------- batches


def test_messages_taking_exactly_max_batch_bytes_go_in_one_batch() -> None:
    """Mutant: ``size >= MAX_BATCH_BYTES``: the second of two messages of half the bound
    each was carried to a batch of its own."""

    def of_size(n: int) -> pb.ServerMessage:
        k = n
        while (
            m := pb.ServerMessage(match_started=pb.MatchStarted(match_id="x" * k))
        ).ByteSize() > n:
            k -= 1  # (the key and length bytes taken off)
        assert m.ByteSize() == n, n
        return m

    half = [of_size(MAX_BATCH_BYTES // 2), of_size(MAX_BATCH_BYTES // 2)]
    small = pb.ServerMessage(match_started=pb.MatchStarted(match_id="s"))

    async def main() -> list[bytes]:
        stream = Stream("peer", batch=True)
        for m in (pb.ServerMessage(welcome=pb.Welcome(bot_name="b")), *half, small, small):
            stream.put(m)
        stream.close()
        out: list[bytes] = []

        async def write(msg: pb.ServerMessage | bytes) -> None:
            out.append(message_bytes(msg))

        await asyncio.wait_for(stream.write_loop(write), 60)
        return out[1:]

    got = [pb.ServerMessage.FromString(b) for b in asyncio.run(main())]
    assert [list(m.batch.messages) for m in got] == [half, [small, small]]


# --------------------------------------------------------------------------------- bench


def test_the_benchs_sample_requests_leave_out_the_results_sent_before() -> None:
    """Mutant: the bench's count of results sent to a seat never moved on: its sampled
    requests carried every result, not the size of those the SDK's bots are sent."""
    from arena.bench.grpc_baseline import SAMPLE_MAX_DEALS, SAMPLE_PRESET, _sample_match

    requests: list[Any] = []
    _sample_match(SAMPLE_PRESET, SAMPLE_MAX_DEALS, 1, requests, [])
    held: dict[int, int] = {}
    for m in requests:
        v = m.decision_request.view
        assert v.deal_results_omitted == held.get(v.seat, 0)
        held[v.seat] = v.deal_results_omitted + len(v.deal_results)
        assert held[v.seat] == v.deal_number
    assert max(held.values()) >= 2
