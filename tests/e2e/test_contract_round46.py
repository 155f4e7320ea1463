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
            c = Client(port, "", metadata=md)
            await asyncio.wait_for(c.run(), 20)
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
                request_id=req.request_id, match_id=req.match_id, action=legal[0],
                failed=long_failure,
            ),  # fmt: skip
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
        # 15 empty batches, then a new stream: 10 more pass the limit of 20.
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
        try:
            for _ in range(10):
                await c.send(pb.BotMessage(decisions=pb.DecisionBatch()))
        except grpc.aio.AioRpcError:
            pass  # (the write may race the status)
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
