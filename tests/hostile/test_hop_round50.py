"""Hostile round 50: a client (the generated stubs only) that opens a new stream before each
answer, while the stream it leaves still sends.

Bot ann sits in two matches on one stream (a hidden-talon 1001, where a defender must
never see the talon, and classic) with two honest bots. At every request it has not hopped
for yet it opens a new stream of its token (its Hello naming its running matches), and
once that is welcomed writes, on the stream it left, an answer to that request (another
legal action where there is one) and one naming the other match; it answers on the new
stream, after the request comes again. Round 39's leak audit never saw a resumed start:
it reads each one here at the point of the deal its view shows.

Checked: both matches end with a result, no seat strikes, times out or forfeits, ann's
left streams are ended ABORTED "replaced by a newer stream of this bot" (or, where the
stale write raced that status, grpcio's own INTERNAL, as documented), what they carried
acted for nobody (no answer of ann's is refused: a stale one that acted would make its
answer on the new stream answer no pending request), each record replays, and no card
ann may not know at that moment reaches it on any stream it reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import types
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import REPLACED
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from engine.rules import load_ruleset
from tests.hostile.test_hostile_round43 import _replays
from tests.hostile.test_leaks_round39 import _audit
from tests.support.harness import attach_in_process, no_error_logged  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

ROOT = Path(__file__).resolve().parents[2]


def _answer(r: pb.DecisionRequest, match_id: str, action: pb.Action) -> pb.BotMessage:
    d = pb.Decision(request_id=r.request_id, match_id=match_id, action=action)
    return pb.BotMessage(decision=d)


class Hopper:
    """Bot ann: a new stream before each answer."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.messages: list[pb.ServerMessage] = []
        self.started: set[str] = set()
        self.ended: set[str] = set()
        self.hopped: set[tuple[str, str]] = set()
        self.answered = 0
        self.left: list[Any] = []

    def _open(self, ch: grpc.aio.Channel) -> Any:
        call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-ann"),))
        return call

    async def _hello(self, call: Any) -> None:
        running = sorted(self.started - self.ended)
        await call.write(pb.BotMessage(hello=pb.Hello(
            bot_name="ann", protocol_version=1, features=["batch"], running=running)))  # fmt: skip
        first = await asyncio.wait_for(call.read(), 60)
        assert first.WhichOneof("kind") == "welcome", first

    async def play(self, ready: asyncio.Event) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            call = self._open(ch)
            await self._hello(call)
            ready.set()
            while len(self.ended) < 2:
                msg = await asyncio.wait_for(call.read(), 60)
                assert msg is not grpc.aio.EOF, "ann's stream ended under it"
                items = list(msg.batch.messages) if msg.HasField("batch") else [msg]
                asked: list[pb.DecisionRequest] = []
                for m in items:
                    self.messages.append(m)
                    kind = m.WhichOneof("kind")
                    if kind == "match_started":
                        self.started.add(m.match_started.match_id)
                    elif kind == "match_ended":
                        self.ended.add(m.match_ended.match_id)
                    elif kind == "decision_request":
                        asked.append(m.decision_request)
                for r in asked:
                    legal = list(r.view.legal_actions)
                    if (r.match_id, r.request_id) not in self.hopped:
                        self.hopped.add((r.match_id, r.request_id))
                        new = self._open(ch)
                        await self._hello(new)  # (welcomed: the old one is replaced now)
                        other = next(iter(self.started - {r.match_id}), "none")
                        stale = legal[1 % len(legal)]
                        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                            for mid in (r.match_id, other):
                                await call.write(_answer(r, mid, stale))
                        self.left.append(call)
                        call = new
                        break  # (the rest of what the old stream brought comes again)
                    self.answered += 1
                    await call.write(_answer(r, r.match_id, legal[0]))
            await call.done_writing()
            for old in self.left:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    # Read to its end first: a left stream whose last message the referee
                    # was still writing when it ended it holds its status behind that
                    # message's bytes, which HTTP/2 flow control lets out only as the
                    # client reads (unread, its code() waited for ever: 1 run in ~10).
                    while await asyncio.wait_for(old.read(), 30) is not grpc.aio.EOF:
                        pass
                    await old.code()  # (ended by the referee: its status is there)


def test_a_bot_that_hops_streams_before_each_answer(tmp_path: Path) -> None:
    hidden = dataclasses.replace(
        load_ruleset(ROOT / "rulesets" / "tournament-1001.toml", 3), max_deals=2
    )
    classic = dataclasses.replace(PRESETS["classic"], max_deals=2)

    async def body() -> tuple[Hopper, list[dict[str, Any]], list[tuple[Any, str]]]:
        ref = Referee(RefereeConfig(decision_ms=10_000, reconnect_grace_s=10,
                                    reconnect_limit=10_000, record_dir=tmp_path))  # fmt: skip

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[-1])  # fmt: skip
            ref.on_message(ref.session(bot), pb.BotMessage(decision=d))

        attach_in_process(ref, ("bob", "cid"), answer)
        ref.add_bot("ann", "tok-ann")
        server, port = await start_server(ref)
        hopper = Hopper(port)
        ready = asyncio.Event()
        task = asyncio.create_task(hopper.play(ready))
        try:
            await asyncio.wait_for(ready.wait(), 30)
            recs = await asyncio.wait_for(asyncio.gather(
                ref.run_match("m1", hidden, 7_340_177_011, ["bob", "ann", "cid"]),
                ref.run_match("m2", classic, 5_902_360_012, ["ann", "cid", "bob"]),
            ), 240)  # fmt: skip
            await asyncio.wait_for(task, 60)
            statuses = [(await c.code(), await c.details()) for c in hopper.left]
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await ref.end_streams()
            await server.stop(0.5)
        return hopper, list(recs), statuses

    hopper, recs, statuses = asyncio.run(body())
    assert len(hopper.hopped) >= 10 and hopper.answered == len(hopper.hopped)
    resumed = [
        m for m in hopper.messages if m.HasField("match_started") and m.match_started.resumed
    ]
    assert len(resumed) >= len(hopper.hopped)  # (each hop: its matches' starts again)
    # (a write racing the referee's status is reported by grpcio as its own INTERNAL:
    # docs/protocol.md's table of status codes)
    replaced = (grpc.StatusCode.ABORTED, REPLACED)
    raced = (grpc.StatusCode.INTERNAL, "Internal error from Core")
    # (each left stream ended by the referee; which status grpcio reports depends on
    # whether the stale write raced it, on every one of them at times)
    assert len(statuses) == len(hopper.left) and set(statuses) <= {replaced, raced}, statuses
    for rec in recs:
        assert rec["result"]["reason"] != "interrupted" and rec["forfeits"] == [], rec["result"]
        assert rec["incidents"] == [] and not any(rec["wrong_requests"]), rec["incidents"]
        assert not [a for d in rec["deals"] for a in d["actions"] if a["by"] == "fallback"]
        _replays(tmp_path, rec["match_id"])  # (its file, by `arena replay --check`)
    seat_of = {r["match_id"]: r["players"].index("ann") for r in recs}
    ann_acts = sum(
        1 for r in recs for d in r["deals"] for a in d["actions"]
        if a["seat"] == seat_of[r["match_id"]] and a["by"] == "bot"
    )  # fmt: skip
    # (every answer on a live stream acted, and nothing else of ann's)
    assert ann_acts == hopper.answered, (ann_acts, hopper.answered)
    checked, _ = _audit(
        types.SimpleNamespace(name="ann", messages=hopper.messages, named={}),  # type: ignore[arg-type]
        {r["match_id"]: r for r in recs},
    )
    assert checked > 50
