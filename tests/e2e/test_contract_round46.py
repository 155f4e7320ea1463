"""The protocol's contract, seven rounds after round 39, checked by a fresh client (round 46).

:class:`Client` is written from ``proto/arena/v1/arena.proto`` and docs/protocol.md alone,
on the generated stubs (no SDK, no engine), as a Go, Rust or C# author would write it; each
test plays it against a real referee on port 0 and checks the statements the contract has
gained since round 39 (batches both ways, ``Decision.failed``, refusals and their echo,
stop notices, resumes and ``Hello.running``, the token-less services), one by one, with the
words the documents quote. The examples the page links (docs/examples/raw_bot.py and the
Node.js bot) are held to the page's status table.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import math
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import load_ruleset
from tests.support.harness import until

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"

#: What a client does with one request: the messages to send back (none: stay silent).
OnRequest = Callable[["Client", pb.DecisionRequest], list[Any]]


def reply(req: pb.DecisionRequest, action: pb.Action, **kw: Any) -> pb.BotMessage:
    """The Decision for ``req``: both ids copied, as docs/protocol.md#deciding says."""
    return pb.BotMessage(
        decision=pb.Decision(request_id=req.request_id, match_id=req.match_id, action=action, **kw)
    )


def passer(c: Client, req: pb.DecisionRequest) -> list[Any]:
    legal = list(req.view.legal_actions)
    return [reply(req, next((a for a in legal if a.WhichOneof("kind") == "pass"), legal[0]))]


class Client:
    """One stream: Hello (or given bytes), then every message kept in order, a ``Batch``
    unpacked as if each had come alone; ``on_request`` answers each request."""

    def __init__(
        self,
        port: int,
        token: str,
        on_request: OnRequest | None = None,
        *,
        hello: pb.Hello | bytes | None = None,
        metadata: tuple[tuple[str, str], ...] | None = None,
    ) -> None:
        self.port, self.token, self.on_request = port, token, on_request
        self.hello = hello if hello is not None else pb.Hello(protocol_version=1)
        self.metadata = metadata
        self.msgs: list[pb.ServerMessage] = []  # unpacked
        self.raw: list[pb.ServerMessage] = []  # as they came
        self.code: grpc.StatusCode | None = None
        self.details = ""
        self.trailing: dict[str, str] = {}
        self.welcomed = asyncio.Event()
        self.call: Any = None

    def kinds(self) -> list[str | None]:
        return [m.WhichOneof("kind") for m in self.msgs]

    def of(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.msgs if m.WhichOneof("kind") == kind]

    def events(self) -> list[pb.Event]:
        return [e for m in self.msgs for e in m.events]

    async def send(self, m: pb.BotMessage | bytes) -> None:
        await self.call.write(m)

    async def run(self) -> None:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")
        try:
            play = channel.stream_stream(
                "/arena.v1.Arena/Play",
                request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
                response_deserializer=pb.ServerMessage.FromString,
            )
            md = self.metadata
            if md is None:
                md = (("authorization", f"Bearer {self.token}"),)
            self.call = play(metadata=md)  # no deadline: the stream lasts the session
            h = self.hello
            await self.send(h if isinstance(h, bytes) else pb.BotMessage(hello=h))
            while (m := await self.call.read()) is not grpc.aio.EOF:
                self.raw.append(m)
                inner = list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]
                for x in inner:
                    self.msgs.append(x)
                    if x.WhichOneof("kind") == "welcome":
                        self.welcomed.set()
                    if x.WhichOneof("kind") == "decision_request" and self.on_request:
                        for out in self.on_request(self, x.decision_request):
                            await self.send(out)
        except grpc.aio.AioRpcError:
            pass
        except asyncio.CancelledError:
            self.call.cancel()
            raise
        finally:
            if self.call is not None:
                self.code = await self.call.code()
                self.details = await self.call.details() or ""
                self.trailing = dict(await self.call.trailing_metadata() or ())
            await channel.close()


Body = Callable[[Referee, int, list["asyncio.Task[Any]"]], Awaitable[Any]]


def with_referee(body: Body, *, final: bool = False, **config: Any) -> Any:
    """Run ``body(referee, port, tasks)`` against an in-process referee on port 0; the
    streams, the server and the clients' tasks are ended whatever happens."""

    async def main() -> Any:
        ref = Referee(RefereeConfig(**config))
        server, port = await start_server(ref)
        tasks: list[asyncio.Task[Any]] = []
        try:
            return await body(ref, port, tasks)
        finally:
            await ref.end_streams(final=final)
            await server.stop(1.0)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    return asyncio.run(main())


def start(tasks: list[asyncio.Task[Any]], c: Client) -> asyncio.Task[Any]:
    t = asyncio.create_task(c.run())
    tasks.append(t)
    return t


# ------------------------------------------------------------------------- the handshake


def test_first_message_refusals_and_the_token_as_sent() -> None:
    """Whatever comes instead of a Hello is named in the INVALID_ARGUMENT; bytes that do not
    parse are refused so at any point; the token: the word Bearer in any case, blanks
    around the token ignored, the first Bearer entry counts; a newer stream of the token
    ends the open one with ABORTED."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        ref.add_bot("a", "tok-a")
        refused = {
            "decision": pb.BotMessage(decision=pb.Decision()).SerializeToString(),
            "an empty message": b"",
            "a message of a kind this referee does not know": b"\xa2\x06\x00",
        }
        for name, raw in refused.items():
            c = Client(port, "tok-a", hello=raw)
            await asyncio.wait_for(c.run(), 20)
            assert c.code is grpc.StatusCode.INVALID_ARGUMENT, (name, c.details)
            assert c.details == f"the first message must be Hello, not {name}"
            assert not c.msgs
        # The end of the stream before any Hello: named too.
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-a"),))
            await call.done_writing()
            assert await call.code() is grpc.StatusCode.INVALID_ARGUMENT
            details = await call.details()
            assert details == "the first message must be Hello, not the end of the stream"
        doc = " ".join(DOC.read_text().split())
        for name in ("an empty message", "the end of the stream"):
            assert f'"... not {name}"' in doc, name  # the page names them too
        bad = Client(port, "tok-a", hello=b"\x0a\x05ab")  # a Hello cut short
        await asyncio.wait_for(bad.run(), 20)
        assert bad.code is grpc.StatusCode.INVALID_ARGUMENT
        assert bad.details.startswith("could not parse the message as arena.v1.BotMessage: ")
        # The token, as sent: accepted ...
        for value in ("BEARER tok-a", "Bearer  tok-a", "Bearer tok-a ", "bearer tok-a"):
            c = Client(port, "", metadata=(("authorization", value),))
            t = start(tasks, c)
            await asyncio.wait_for(c.welcomed.wait(), 20)
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)
        # ... and refused (a token is compared exactly; the first Bearer entry counts).
        for md, words in (
            ((("authorization", "tok-a"),), "missing token"),
            ((("authorization", "Basic tok-a"),), "missing token"),
            ((("authorization", "Bearer"),), "missing token"),
            ((("authorization", "Bearer x"), ("authorization", "Bearer tok-a")), "unknown token"),
            ((("authorization", "Bearer tok-A"),), "unknown token"),
        ):
            for _ in range(5):
                c = Client(port, "", metadata=md)
                await asyncio.wait_for(c.run(), 20)
                # (grpc.aio's client race, grpc/grpc#36066: its Hello, written as the
                # referee's refusal ends the call, may replace that status with "INTERNAL:
                # Internal error from Core", seen once in CI; the SDK retries that status)
                if not (c.code is grpc.StatusCode.INTERNAL and "from Core" in c.details):
                    break
            assert c.code is grpc.StatusCode.UNAUTHENTICATED and not c.msgs, md
            assert c.details.startswith(words), (md, c.details)
        # The newest stream of a token wins.
        old = Client(port, "tok-a")
        t_old = start(tasks, old)
        await asyncio.wait_for(old.welcomed.wait(), 20)
        new = Client(port, "tok-a")
        start(tasks, new)
        await asyncio.wait_for(t_old, 20)
        assert old.code is grpc.StatusCode.ABORTED
        assert old.details == "replaced by a newer stream of this bot (same token)"
        await asyncio.wait_for(new.welcomed.wait(), 20)
        await new.send(b"\xff\xff\xff")  # after the Welcome: refused the same way
        await asyncio.wait_for(tasks[-1], 20)
        assert new.code is grpc.StatusCode.INVALID_ARGUMENT
        assert new.details.startswith("could not parse the message as arena.v1.BotMessage: ")

    with_referee(body)


# ------------------------------------------------------------------------- batches, failed


def _match(
    body: Callable[[Referee, dict[str, Client]], Awaitable[None]] | None,
    on_request: dict[str, OnRequest],
    *,
    hellos: dict[str, pb.Hello] | None = None,
    rules: Any = None,
    seed: int = 7,
    **config: Any,
) -> tuple[dict[str, Any], dict[str, Client]]:
    """Seat the clients ``on_request`` names (in that order) in match m1 and play it."""

    async def main(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> Any:
        clients = {}
        for n, policy in on_request.items():
            ref.add_bot(n, f"tok-{n}")
            clients[n] = Client(port, f"tok-{n}", policy, hello=(hellos or {}).get(n))
            start(tasks, clients[n])
        assert not await ref.wait_for_bots(list(clients), 20)
        ruleset = rules or dataclasses.replace(load_ruleset("classic", 3), max_deals=1)
        record = await asyncio.wait_for(ref.run_match("m1", ruleset, seed, list(clients)), 60)
        for c in clients.values():  # the match_ended has been queued: let it arrive
            await until(lambda c=c: bool(c.of("match_ended")), "match_ended arrived")
        if body is not None:
            await body(ref, clients)
        return record, clients

    return with_referee(main, final=True, **{"decision_ms": 20_000, **config})


def test_decision_batches_and_failed_decisions() -> None:
    """A DecisionBatch (from a bot that did not ask for Batches: any bot may send one) is
    handled in order, each decision on its own: an unknown id is WRONG_REQUEST naming the
    pending request, one without match_id "no seat in a running match ''", the real
    answer played; `failed` on the answer records a bot_error (no strike, never in a
    DecisionRejected), its text cut to 64 characters with "…", control characters written
    out; `failed` on an answer to no pending request is ignored. Batches come only to the
    bot that asked."""
    long_failure = "Boom\x1b[31m" + "ValueError" * 10

    def a(c: Client, req: pb.DecisionRequest) -> list[Any]:
        legal = list(req.view.legal_actions)
        if req.request_id != "1":
            return passer(c, req)
        decisions = [
            pb.Decision(request_id="99", match_id=req.match_id, action=legal[0], failed="X"),
            pb.Decision(request_id=req.request_id, match_id="", action=legal[0]),
            pb.Decision(
                request_id=req.request_id,
                match_id=req.match_id,
                action=legal[0],
                failed=long_failure,
            ),
        ]
        return [pb.BotMessage(decisions=pb.DecisionBatch(decisions=decisions))]

    record, clients = _match(None, {"a": a, "b": passer, "c": passer})
    rejected = clients["a"].of("decision_rejected")
    assert [(r.request_id, r.match_id, r.incident) for r in rejected] == [
        ("99", "m1", pb.INCIDENT_WRONG_REQUEST),
        ("1", "", pb.INCIDENT_WRONG_REQUEST),
    ]
    assert "request '99' has not been sent to this seat (the pending request is '1')" in (
        rejected[0].message
    )
    assert rejected[0].legal_actions and rejected[0].strikes == 0
    assert rejected[1].message == "you have no seat in a running match ''"
    assert not rejected[1].legal_actions
    # The answer of request 1 was played as the bot's own (no strike, no fallback).
    own = [e for e in clients["a"].events() if e.WhichOneof("kind") == "action"]
    assert own and own[0].action.seat == 0 and own[0].source == pb.ACTION_SOURCE_BOT
    errors = [i for i in record["incidents"] if i["kind"] == "bot_error"]
    assert len(errors) == 1 and record["bot_errors"] == [1, 0, 0]
    kept = errors[0]["detail"].split("failed (", 1)[1].split("); its client", 1)[0]
    assert kept.startswith("Boom\\x1b[31mValueError") and kept.endswith("…")
    assert len(long_failure[:63]) + len("\\x1b") - 1 + 1 == len(kept)  # 64, \x1b written out
    assert errors[0]["detail"].endswith("its client sent its fallback 'bid 105'")
    assert record["forfeits"] == [] and not any(i["kind"] == "illegal" for i in record["incidents"])
    for c in clients.values():
        assert all(m.WhichOneof("kind") != "batch" for m in c.raw)


def test_a_batch_holds_several_messages_within_1_mib() -> None:
    """protocol.md: queued messages go out "in one Batch, at most 64 and at most 1 MiB of
    them". A message over 1 MiB (here a MatchStarted naming a bot registered under a name
    of 700 KB, twice: players and view.players) with another queued behind it went out as
    a Batch of that one message, 1.4 MB: neither several nor within the 1 MiB."""
    big = "n" * 700_000
    names = {"a": "a", "b": big, "c": "c"}

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> Client:
        clients = {}
        for n, name in names.items():
            ref.add_bot(name, f"tok-{n}")
            hello = pb.Hello(protocol_version=1, features=["batch"] if n == "a" else [])
            clients[n] = Client(port, f"tok-{n}", passer, hello=hello)
            start(tasks, clients[n])
        assert not await ref.wait_for_bots(list(names.values()), 20)
        rules = dataclasses.replace(load_ruleset("classic", 3), max_deals=1)
        seats = list(names.values())
        await asyncio.wait_for(ref.run_match("m1", rules, 3, seats), 60)
        a = clients["a"]  # seat 0, first to act: its first request queues behind its start
        await until(lambda: bool(a.of("match_ended")), "the end")
        return a

    a = with_referee(body, final=True, decision_ms=20_000)
    assert a.of("match_started")[0].players[1] == big and a.of("match_ended")
    assert a.of("decision_request")[0].request_id == "1"
    batches = [m.batch for m in a.raw if m.WhichOneof("kind") == "batch"]
    for batch in batches:
        sizes = [x.ByteSize() for x in batch.messages]
        assert len(sizes) >= 2 and sum(sizes) <= 1 << 20, sizes
    # The large MatchStarted itself came alone, as a message of its own.
    assert any(m.WhichOneof("kind") == "match_started" for m in a.raw)


def test_malformed_and_illegal_as_the_table_says() -> None:
    """The refusal table: MALFORMED for no kind, a give or play without a card, a card
    without a rank or with a suit value the enum does not have; ILLEGAL for a well-formed
    action that is not legal (a bid of 0, of 4e9); each a strike, the fallback played."""
    sent = [
        (pb.Action(), pb.INCIDENT_MALFORMED, "action: no kind set"),
        (pb.Action(play=pb.PlayCard()), pb.INCIDENT_MALFORMED, "play.card: a play needs a card"),
        (pb.Action(give=pb.Give(to_seat=1)), pb.INCIDENT_MALFORMED, "give.card: a give needs"),
        (
            pb.Action(play=pb.PlayCard(card=pb.Card(suit=pb.SUIT_SPADES))),
            pb.INCIDENT_MALFORMED,
            "play.card: rank missing",
        ),
        (
            pb.Action(play=pb.PlayCard(card=pb.Card(suit=9, rank=pb.RANK_NINE))),  # type: ignore[arg-type]
            pb.INCIDENT_MALFORMED,
            "play.card: unknown suit value 9",
        ),
        (pb.Action(bid=pb.Bid(amount=0)), pb.INCIDENT_ILLEGAL, "illegal action 'bid 0' by seat"),
        (pb.Action(bid=pb.Bid(amount=4_000_000_000)), pb.INCIDENT_ILLEGAL, "'bid 4000000000'"),
    ]

    def a(c: Client, req: pb.DecisionRequest) -> list[Any]:
        n = int(req.request_id) - 1
        return [reply(req, sent[n][0])] if n < len(sent) else passer(c, req)

    _record, clients = _match(None, {"a": a, "b": passer, "c": passer}, max_strikes=20)
    refused = clients["a"].of("decision_rejected")
    assert len(refused) == len(sent)
    for r, (_, incident, words) in zip(refused, sent, strict=True):
        assert r.incident == incident and words in r.message, r.message
        assert "; legal: " in r.message and r.legal_actions and r.HasField("fallback")
    assert [r.strikes for r in refused] == list(range(1, len(sent) + 1))


def test_decision_batch_limit_and_empty_batches_count_as_strays() -> None:
    """More than 256 decisions in one DecisionBatch closes the stream with the words the
    page quotes, none handled; an empty one counts as one stray message for the flood
    limit, per bot (a new stream does not reset it)."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        ref.add_bot("a", "tok-a")
        c = Client(port, "tok-a")
        t = start(tasks, c)
        await asyncio.wait_for(c.welcomed.wait(), 20)
        many = [pb.Decision(request_id="1", match_id="zz")] * 257
        await c.send(pb.BotMessage(decisions=pb.DecisionBatch(decisions=many)))
        await asyncio.wait_for(t, 20)
        assert c.code is grpc.StatusCode.INVALID_ARGUMENT
        assert c.details == "a DecisionBatch holds at most 256 decisions, not 257"
        assert c.kinds() == ["welcome"]  # none of them answered
        # 15 empty batches, then a new stream: 5 more pass the limit of 20.
        c = Client(port, "tok-a")
        t = start(tasks, c)
        await asyncio.wait_for(c.welcomed.wait(), 20)
        for _ in range(15):
            await c.send(pb.BotMessage(decisions=pb.DecisionBatch()))
        await c.send(pb.BotMessage(decision=pb.Decision(request_id="1", match_id="zz")))
        await until(lambda: len(c.msgs) == 2, "the refusal after the empty batches")
        assert c.kinds() == ["welcome", "decision_rejected"]  # nothing sent for them
        t.cancel()
        await asyncio.gather(t, return_exceptions=True)
        c = Client(port, "tok-a")
        t = start(tasks, c)
        await asyncio.wait_for(c.welcomed.wait(), 20)
        # 15 + the refused decision + 5 = 21 strays: the 5th closes it. No write after it
        # (one would race the status: the page's INTERNAL "Internal error from Core").
        for _ in range(5):
            await c.send(pb.BotMessage(decisions=pb.DecisionBatch()))
        await asyncio.wait_for(t, 20)
        assert c.code is grpc.StatusCode.RESOURCE_EXHAUSTED, c.details
        assert c.details.startswith("more than 20 messages answering no pending request")
        assert "retry-after-ms" not in c.trailing  # a flood: stop, not wait

    with_referee(body, flood_limit=20)


def test_refusals_echo_cut_ids_and_travel_in_batches_of_64() -> None:
    """A refusal echoes ids cut to 64 characters, marked "…"; answers for a match the bot
    does not sit in are answered `max_wrong_recorded` times per window, the rest only
    counted; refusals that queue up reach a "batch" bot in Batches of at most 64, never
    the Welcome, with no events of their own."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        ref.add_bot("a", "tok-a")
        ref.add_bot("z", "tok-z")
        c = Client(port, "tok-a", hello=pb.Hello(protocol_version=1, features=["batch"]))
        start(tasks, c)
        await asyncio.wait_for(c.welcomed.wait(), 20)
        await c.send(pb.BotMessage(decision=pb.Decision(request_id="r" * 100, match_id="m" * 100)))
        await until(lambda: len(c.msgs) == 2, "the refusal")
        r = c.of("decision_rejected")[0]
        assert r.request_id == "r" * 63 + "…" and r.match_id == "m" * 63 + "…"
        assert r.incident == pb.INCIDENT_WRONG_REQUEST and not r.legal_actions
        wrong = [pb.Decision(request_id=str(i), match_id="nm") for i in range(200)]
        await c.send(pb.BotMessage(decisions=pb.DecisionBatch(decisions=wrong)))
        await until(lambda: len(c.of("decision_rejected")) == 150, "150 refusals")
        assert c.raw[0].WhichOneof("kind") == "welcome"
        sizes = [len(m.batch.messages) for m in c.raw if m.WhichOneof("kind") == "batch"]
        assert sizes and max(sizes) <= 64 and sum(sizes) >= 100, sizes
        assert not any(m.events for m in c.raw if m.WhichOneof("kind") == "batch")
        assert not any(m.WhichOneof("kind") == "batch" for m in c.msgs)  # never nested
        # Capped per bot and window (here 150): a bot sending 160 gets 150 answers.
        z = Client(port, "tok-z")
        start(tasks, z)
        await asyncio.wait_for(z.welcomed.wait(), 20)
        for i in range(160):
            await z.send(pb.BotMessage(decision=pb.Decision(request_id=str(i), match_id="nm")))
        await z.send(pb.BotMessage(hello=pb.Hello()))  # ignored: nothing comes back
        await until(lambda: len(z.of("decision_rejected")) == 150, "150 refusals")
        await asyncio.sleep(0.5)  # (a count that must not grow: give it the time to)
        assert len(z.of("decision_rejected")) == 150
        assert [r.request_id for r in z.of("decision_rejected")] == [str(i) for i in range(150)]

    with_referee(body, max_wrong_recorded=150, flood_limit=1000)


def test_reconnecting_too_often_and_pinging_too_often() -> None:
    """More than `reconnect_limit` streams of a token let in within the window: the next
    is refused with RESOURCE_EXHAUSTED "... wait X s before reconnecting" and the same
    wait, in whole milliseconds, in the trailing `retry-after-ms` (refused attempts do not
    count); a client pinging every second is cut by the referee's gRPC with UNAVAILABLE
    "Too many pings"."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        ref.add_bot("a", "tok-a")
        ref.add_bot("k", "tok-k")
        for _ in range(3):
            c = Client(port, "tok-a")
            start(tasks, c)
            await asyncio.wait_for(c.welcomed.wait(), 20)
        for _ in range(2):
            c = Client(port, "tok-a")
            await asyncio.wait_for(c.run(), 20)
            assert c.code is grpc.StatusCode.RESOURCE_EXHAUSTED and not c.msgs
            m = re.fullmatch(
                r"more than 3 streams of bot 'a' opened within 10 s: "
                r"wait (\d+(?:\.\d)?) s before reconnecting",
                c.details,
            )
            assert m, c.details
            ms = c.trailing["retry-after-ms"]
            assert ms.isdigit() and 0 < int(ms) <= 10_000
            assert float(m.group(1)) == math.ceil(int(ms) / 100) / 10
        options = [
            ("grpc.keepalive_time_ms", 1000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
        ]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-k"),))
            await call.write(pb.BotMessage(hello=pb.Hello()))
            with pytest.raises(grpc.aio.AioRpcError) as e:
                while await asyncio.wait_for(call.read(), 60) is not grpc.aio.EOF:
                    pass
            assert e.value.code() is grpc.StatusCode.UNAVAILABLE
            assert e.value.details() == "Too many pings"

    with_referee(body, reconnect_limit=3)


# ------------------------------------------------------------------------- stops, resumes


def test_stop_notices_half_close_and_running_the_referee_does_not_know() -> None:
    """`running` naming matches the referee does not know: each answered right after the
    Welcome with an `interrupted` MatchEnded (no view, no places, no scores: nothing
    stood), at most 64; a half-close ends the call with OK; when the arena stops, an open
    stream ends with UNAVAILABLE "the arena is stopping", and so does one opened while it
    stops, before any Welcome."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        for n in "abc":
            ref.add_bot(n, f"tok-{n}")
        gone = [f"gone-{i}" for i in range(70)]
        a = Client(port, "tok-a", hello=pb.Hello(protocol_version=1, running=gone, matches=2))
        t = start(tasks, a)
        await until(lambda: len(a.msgs) >= 65, "64 ends")
        ends = a.of("match_ended")
        assert a.kinds()[0] == "welcome" and [e.match_id for e in ends] == gone[:64]
        for e in ends:
            assert e.result.reason == "interrupted" and not e.HasField("view")
            assert not e.result.places and not e.result.shortfalls and not e.result.scores
        assert not any(m.events for m in a.msgs)
        await a.call.done_writing()  # leaving: a half-close
        await asyncio.wait_for(t, 20)
        assert a.code is grpc.StatusCode.OK and len(a.msgs) == 65
        b = Client(port, "tok-b")
        t_b = start(tasks, b)
        await asyncio.wait_for(b.welcomed.wait(), 20)
        stopping = asyncio.create_task(ref.end_streams())
        await asyncio.sleep(0)
        c = Client(port, "tok-c")
        t_c = start(tasks, c)
        await stopping
        await asyncio.wait_for(asyncio.gather(t_b, t_c), 20)
        for x in (b, c):
            assert x.code is grpc.StatusCode.UNAVAILABLE and x.details == "the arena is stopping"
        assert c.msgs == []  # before any Welcome

    with_referee(body)


def test_resume_mid_match_seq_time_left_timeout_and_late_answer() -> None:
    """A seat whose stream died at its third request comes back with the same token: a
    resumed MatchStarted whose `seq` is the last event it had seen (none replayed; the next
    is `seq` + 1), then the same request again with the limit less the time away and the
    whole bank; unanswered it times out at limit + bank with the words the proto names
    (TIMEOUT: the time allowed and the legal actions), the fallback played as FALLBACK;
    the late answer is WRONG_REQUEST ("timed out"), no strike; the end comes again on a
    new stream with no events."""
    state: dict[str, Any] = {}

    def a(c: Client, req: pb.DecisionRequest) -> list[Any]:
        if req.request_id == "3" and "dropped" not in state:
            state["dropped"] = req
            state["seen"] = max(e.seq for e in c.events())
            return []
        return passer(c, req)

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        clients = {}
        for n, policy in (("a", a), ("b", passer), ("c", passer)):
            ref.add_bot(n, f"tok-{n}")
            clients[n] = Client(port, f"tok-{n}", policy)
            start(tasks, clients[n])
        assert not await ref.wait_for_bots(list(clients), 20)
        rules = dataclasses.replace(load_ruleset("classic", 3), max_deals=2)
        match = asyncio.create_task(ref.run_match("m1", rules, 5, list(clients)))
        tasks.append(match)
        await until(lambda: "dropped" in state, "request 3")
        tasks[0].cancel()  # the stream dies (a reset, as a crash)
        await asyncio.gather(tasks[0], return_exceptions=True)
        # Back once the referee has seen the drop (the disconnect asserted below): gRPC
        # tells the handler of a reset call in its own time, and a Hello first replaces
        # the stream, which records no disconnect (as hostile round 32 saw under load).
        await until(lambda: ref.session("a").stream is None, "the drop seen")
        await asyncio.sleep(0.3)  # (away a while: the limit stated again is less)
        back = Client(port, "tok-a", hello=pb.Hello(protocol_version=1, running=["m1"]))
        start(tasks, back)
        await until(lambda: bool(back.of("decision_request")), "the request again")
        assert back.kinds()[:3] == ["welcome", "match_started", "decision_request"]
        ms = back.of("match_started")[0]
        assert ms.resumed and not ms.forfeited and ms.seq == state["seen"]
        again = back.of("decision_request")[0]
        old = state["dropped"]
        assert again.request_id == old.request_id and again.view == old.view == ms.view
        # Less than the whole limit (the time away counts, less the stalls of the referee's
        # own loop, here shared with the clients: not an exact 300 ms), the whole bank.
        assert 0 < again.time_limit_ms < 3000 and again.time_bank_ms == 2000
        await until(lambda: bool(back.of("decision_rejected")), "the timeout", within=60)
        timeout = back.of("decision_rejected")[0]
        assert timeout.incident == pb.INCIDENT_TIMEOUT and timeout.request_id == old.request_id
        assert timeout.message.startswith("no decision within 5000 ms (3000 ms + 2000 ms of ")
        assert "; legal: " in timeout.message and timeout.strikes == 1
        assert list(timeout.legal_actions) == list(old.view.legal_actions)
        await back.send(reply(again, again.view.legal_actions[0]))
        await until(lambda: len(back.of("decision_rejected")) == 2, "the late answer's refusal")
        late = back.of("decision_rejected")[1]
        assert late.incident == pb.INCIDENT_WRONG_REQUEST and late.strikes == 1
        assert f"request '{old.request_id}' timed out: the fallback was played" in late.message
        back.on_request = passer
        for r in back.of("decision_request")[1:]:  # asked while nobody answered
            await back.send(passer(back, r)[0])
        record = await asyncio.wait_for(match, 60)
        events = back.events()
        assert [e.seq for e in events] == list(range(ms.seq + 1, ms.seq + 1 + len(events)))
        mine = [e for e in events if e.WhichOneof("kind") == "action" and e.action.seat == 0]
        assert mine[0].source == pb.ACTION_SOURCE_FALLBACK
        kinds = [i["kind"] for i in record["incidents"] if i["seat"] == 0]
        assert kinds == ["disconnect", "timeout", "wrong_request"]
        await until(lambda: bool(back.of("match_ended")), "the end")
        tasks[-1].cancel()
        await asyncio.gather(tasks[-1], return_exceptions=True)
        third = Client(port, "tok-a")
        start(tasks, third)
        await until(lambda: len(third.msgs) == 2, "the end again")
        assert third.kinds() == ["welcome", "match_ended"] and not third.msgs[1].events

    with_referee(body, final=True, decision_ms=3000, time_bank_ms=2000, reconnect_grace_s=60)


# ------------------------------------------------------------------------- a match's messages


def test_deal_ends_final_view_and_an_answer_after_the_end() -> None:
    """Each deal's end reaches every seat promptly in a message of no kind (deal_ended,
    then the next deal_started), the last one with the MatchEnded; the final view of a
    4-player match: nobody to act, no deal in progress, the last deal's dealer and seats;
    a Decision carrying fields this build does not know is read as any; an answer after
    the end is refused "you have no seat in a running match 'm1'"."""

    def newer(c: Client, req: pb.DecisionRequest) -> list[Any]:
        legal = list(req.view.legal_actions)
        act = next((x for x in legal if x.WhichOneof("kind") == "pass"), legal[0])
        raw = reply(req, act).decision.SerializeToString() + b"\xa0\x06\x01"  # field 100
        return [b"\x12" + bytes([len(raw)]) + raw]  # BotMessage.decision, by hand

    async def after(ref: Referee, clients: dict[str, Client]) -> None:
        a = clients["a"]
        last = a.of("decision_request")[-1]
        await a.send(reply(last, last.view.legal_actions[0]))
        await until(lambda: bool(a.of("decision_rejected")), "the refusal")

    rules = dataclasses.replace(load_ruleset("1001-4p", 4), max_deals=3)
    policies = {"a": newer, "b": passer, "c": passer, "d": passer}
    record, clients = _match(after, policies, rules=rules, seed=11)
    assert record["result"]["deals"] == 3 and not record["incidents"]
    for seat, c in enumerate(clients.values()):
        ends = [
            (m.WhichOneof("kind"), [e.WhichOneof("kind") for e in m.events][-2:])
            for m in c.msgs
            if any(e.WhichOneof("kind") == "deal_ended" for e in m.events)
        ]
        assert ends[:-1] == [(None, ["deal_ended", "deal_started"])] * 2, ends
        assert ends[-1] == ("match_ended", ["action", "deal_ended"])
        v = c.of("match_ended")[0].view
        assert v.seat == seat and v.phase == pb.PHASE_GAME_OVER and v.deal_number == 3
        assert not v.HasField("to_act") and not v.legal_actions and not v.hand
        for f in ("declarer", "bid", "contract"):
            assert not v.HasField(f), f
        assert not (v.trick or v.tricks or v.bids or v.gives or v.marriages or v.talon)
        last = v.deal_results[-1]
        assert v.dealer == last.dealer
        assert sorted(v.active_seats) == sorted(set(range(4)) - {last.dealer})
    refused = clients["a"].of("decision_rejected")
    assert len(refused) == 1 and refused[0].incident == pb.INCIDENT_WRONG_REQUEST
    assert refused[0].message == "you have no seat in a running match 'm1'"


def test_two_tables_on_one_stream() -> None:
    """A bot seated at two tables at once gets both on its one stream: each message names
    its match, the events a message carries may be of any match (so the bot hears of one
    table while told of the other), and each match's `seq` runs by one from 1 on its own;
    request ids count per match (each has its "1")."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> Client:
        clients = {}
        for n in "abcde":
            ref.add_bot(n, f"tok-{n}")
            clients[n] = Client(port, f"tok-{n}", passer)
            start(tasks, clients[n])
        assert not await ref.wait_for_bots(list(clients), 20)
        rules = dataclasses.replace(load_ruleset("classic", 3), max_deals=3)
        await asyncio.wait_for(
            asyncio.gather(
                ref.run_match("m1", rules, 3, ["a", "b", "c"]),
                ref.run_match("m2", rules, 4, ["d", "a", "e"]),
            ),
            60,
        )
        a = clients["a"]
        await until(lambda: len(a.of("match_ended")) == 2, "both ends")
        return a

    a = with_referee(body, final=True, decision_ms=20_000)
    for m in a.msgs[1:]:
        kind = m.WhichOneof("kind")
        assert kind is None or getattr(m, kind).match_id in ("m1", "m2")
    for mid in ("m1", "m2"):
        seqs = [e.seq for e in a.events() if e.match_id == mid]
        assert seqs == list(range(1, len(seqs) + 1)), mid
        ids = [r.request_id for r in a.of("decision_request") if r.match_id == mid]
        assert ids == [str(i) for i in range(1, len(ids) + 1)], mid
    assert {m.match_started.seat for m in a.msgs if m.WhichOneof("kind") == "match_started"} == {
        0,
        1,
    }


def test_getinfo_health_and_reflection() -> None:
    """GetInfo needs no token and names version 1 and the presets; its request's unknown
    fields are skipped, bytes that do not parse, a call without its request and a request
    over 4 KiB are INVALID_ARGUMENT (the health service's too); health says SERVING for the
    server and arena.v1.Arena; reflection answers in v1alpha and lists the services, v1 is
    UNIMPLEMENTED."""

    async def body(ref: Referee, port: int, tasks: list[asyncio.Task[Any]]) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest())
            assert info.protocol_version == 1 and info.server_version
            assert {"classic", "1001", "1001-4p"} <= set(info.presets)
            raw = ch.unary_unary(
                "/arena.v1.Arena/GetInfo",
                request_serializer=lambda b: b,
                response_deserializer=pb.ServerInfo.FromString,
            )
            assert (await raw(b"\x0a\x03new")) == info  # a newer client's field
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await raw(b"\xff\xff")
            assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert e.value.details().startswith(
                "could not parse the message as arena.v1.GetInfoRequest"
            )
            for path in ("/arena.v1.Arena/GetInfo", "/grpc.health.v1.Health/Check"):
                big = ch.unary_unary(path, request_serializer=lambda b: b)
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await big(b"\x0a\x82\x28" + b"a" * 5122)
                assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert "take at most 4,096" in e.value.details()
                empty = ch.stream_stream(path, request_serializer=lambda b: b)()
                await empty.done_writing()
                assert await empty.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert await empty.details() == "the call ended without its request message"
            health = health_pb2_grpc.HealthStub(ch)
            for svc in ("", "arena.v1.Arena"):
                got = await health.Check(health_pb2.HealthCheckRequest(service=svc))
                assert got.status == health_pb2.HealthCheckResponse.SERVING
            services = []
            for version in ("v1alpha", "v1"):
                call = ch.stream_stream(
                    f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                    request_serializer=lambda b: b,
                    response_deserializer=lambda b: b,
                )()
                try:
                    await call.write(b"\x3a\x00")  # list_services: ""
                    await call.done_writing()
                    services.append(await call.read())
                except grpc.aio.AioRpcError as err:
                    services.append(err.code())
            assert b"arena.v1.Arena" in services[0] and b"grpc.health.v1.Health" in services[0]
            assert services[1] is grpc.StatusCode.UNIMPLEMENTED

    with_referee(body)


# ------------------------------------------------------------------------- the page's examples


def _raw_bot_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "raw_bot_example", ROOT / "docs/examples/raw_bot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("code", "retried"),
    [
        (grpc.StatusCode.UNAVAILABLE, True),
        (grpc.StatusCode.ALREADY_EXISTS, True),
        (grpc.StatusCode.CANCELLED, True),  # not ours: the arena's gRPC cut the call
        (grpc.StatusCode.INTERNAL, True),
        (grpc.StatusCode.ABORTED, False),
        (grpc.StatusCode.UNAUTHENTICATED, False),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, False),  # without retry-after-ms: a flood
    ],
)
def test_raw_bot_example_follows_the_status_table(
    code: grpc.StatusCode, retried: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/examples/raw_bot.py, "written from this page", does on each status what the
    page's table says: reconnect (with back-off) or stop."""
    raw_bot = _raw_bot_module()
    args = type("Args", (), {"matches": None, "drop_after": 0, "batch": False})()
    bot = raw_bot.RawBot(args)
    ends = [(code, False, 0.0), (grpc.StatusCode.OK, True, 0.0)]
    sessions: list[int] = []

    def session() -> tuple[grpc.StatusCode, bool, float]:
        sessions.append(1)
        return ends.pop(0)

    monkeypatch.setattr(bot, "session", session)
    monkeypatch.setattr(raw_bot.time, "sleep", lambda s: None)
    status = bot.run()
    assert (len(sessions), status) == ((2, 0) if retried else (1, 2)), code


def test_node_bot_example_retries_a_cancelled_call_it_did_not_cancel() -> None:
    """The Node.js example's status handling, read from its source: CANCELLED (the only
    cancel of its own, the 30 s Welcome timer, is mapped to UNAVAILABLE before) is retried
    as the page's table says, as UNAVAILABLE and ALREADY_EXISTS are."""
    js = (ROOT / "docs/examples/node-bot/bot.js").read_text()
    line = next(x for x in js.splitlines() if x.strip().startswith("let retry = "))
    assert "[UNAVAILABLE, ALREADY_EXISTS, CANCELLED].includes(status.code)" in line, line


def test_raw_bot_example_ignores_a_refusal_for_a_match_it_saw_end() -> None:
    """The page: an answer on its way when its match ended is refused "you have no seat in
    a running match": ignore a refusal for a match you have seen end. The example counted
    it as a fault (and exited 1)."""
    raw_bot = _raw_bot_module()
    args = type("Args", (), {"matches": None, "drop_after": 0, "batch": False})()
    bot = raw_bot.RawBot(args)
    out: Any = raw_bot.queue.Queue()
    ended = pb.MatchEnded(match_id="m1", result=pb.MatchResult(reason="interrupted"))
    bot.handle(pb.ServerMessage(match_ended=ended), out)
    refusal = pb.DecisionRejected(
        request_id="4", match_id="m1", incident=pb.INCIDENT_WRONG_REQUEST,
        message="you have no seat in a running match 'm1'",
    )  # fmt: skip
    bot.handle(pb.ServerMessage(decision_rejected=refusal), out)
    assert bot.faults == 0
    refusal.match_id = "m2"  # a match it has not seen end: a fault, as before
    bot.handle(pb.ServerMessage(decision_rejected=refusal), out)
    assert bot.faults == 1
