"""Hostile round 53: what a hostile client is shown on each of its streams, rebuilt as the
protocol says, is the referee's own view of the game at that moment, and no more.

Bot x (the generated stubs only, on the real server, port 0) sits in matches with two
honest in-process bots. It opens each of its streams with a Hello listing a random choice
of the optional features (``batch``, ``results_once``, ``deal_once``), names its matches
in ``running``, and at each request does one of (seeded): answer; open a new stream
first and answer on the one it leaves too; answer late; answer in a batch mixed with a
stale, a future and another match's id and the answer twice; answer and half-close; answer
and cancel the call. The omitted parts of its requests' views (``deal_results_omitted``,
``bids_omitted``, ``tricks_omitted``) are per stream, and these moves are what could make
the referee count them against a view that stream never carried (a stream replaced, cut or
reset mid-deal, features changed between streams).

Checked, on every stream x was welcomed on: each message it read is, in order, the one the
referee queued there; each view (a request's, a start's, an end's), its omitted parts put
back from the last view of the match x read on that same stream (as docs/protocol.md says,
and only if that view held them), equals ``view_to_pb(observe(game, x's seat))`` made when
the message was queued: so x is never shown a card, a result, a bid or a trick it may not
see, nor one short. Some views did leave parts out (the features were at work). Each match
ends with a result, the honest seats with no incident, and the referee's tasks are back to
their count before.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.protocol import view_to_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.sessions import BotSession, Stream
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, observe
from tests.support.harness import as_message, attach_in_process, no_error_logged  # noqa: F401

sys.path.insert(0, str(Path(__file__).parent))
from hostile_bot import honest_choice

pytestmark = pytest.mark.usefixtures("no_error_logged")

FEATURES = ("batch", "results_once", "deal_once")
#: What a write or half-close on a call the referee has ended may raise at the client.
WRITE_ENDED = (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError)
VIEWED = ("decision_request", "match_started", "match_ended")


class Hostile:
    """Bot x: its streams (in the order they were welcomed) and every message read on each."""

    def __init__(self, port: int, rng: random.Random) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.rng = rng
        self.calls: list[dict[str, Any]] = []
        self.mids: list[str] = []

    async def open(self) -> dict[str, Any]:
        """A new welcomed stream, after the wait a refusal for reconnecting too often says."""
        while True:
            try:
                return await self._open_once()
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                wait = dict(e.trailing_metadata() or ()).get("retry-after-ms", "500")
                await asyncio.sleep(int(wait) / 1000)

    async def _open_once(self) -> dict[str, Any]:
        features = [f for f in FEATURES if self.rng.random() < 0.6]
        call = pb_grpc.ArenaStub(self.channel).Play(metadata=(("authorization", "Bearer tok-x"),))
        hello = pb.Hello(bot_name="x", protocol_version=1, features=features, running=self.mids)
        await call.write(pb.BotMessage(hello=hello))
        first = await asyncio.wait_for(call.read(), 20)
        assert first.WhichOneof("kind") == "welcome", first
        c: dict[str, Any] = {
            "call": call,
            "got": [],
            "queue": asyncio.Queue(),
            "features": set(features),
        }
        self.calls.append(c)

        async def read() -> None:
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
                while (m := await call.read()) is not grpc.aio.EOF:
                    for one in m.batch.messages if m.HasField("batch") else [m]:
                        c["got"].append(one)
                        c["queue"].put_nowait(one)

        c["reader"] = asyncio.create_task(read())
        return c

    async def write(self, c: dict[str, Any], msg: pb.BotMessage) -> None:
        with contextlib.suppress(*WRITE_ENDED):
            await c["call"].write(msg)

    async def play(self, done: asyncio.Event) -> None:
        rng = self.rng
        cur = await self.open()
        while True:
            try:
                m = await asyncio.wait_for(cur["queue"].get(), 1.0)
            except TimeoutError:
                if done.is_set():
                    return
                cur = await self.open()  # (its stream was cut, or is quiet: hop anyway)
                continue
            kind = m.WhichOneof("kind")
            if kind == "match_started" and m.match_started.match_id not in self.mids:
                self.mids.append(m.match_started.match_id)
            if kind != "decision_request":
                continue
            r = m.decision_request
            good = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                               action=honest_choice(r.view))  # fmt: skip
            move = rng.random()
            if move < 0.25:  # a new stream first; the answer on the one left too
                old, cur = cur, await self.open()
                await self.write(old, pb.BotMessage(decision=good))
            elif move < 0.35:
                await asyncio.sleep(0.35)  # past the limit and the bank
                await self.write(cur, pb.BotMessage(decision=good))
            elif move < 0.45:
                n = int(r.request_id)
                mixed = [
                    pb.Decision(request_id=str(max(1, n - 1)), match_id=r.match_id,
                                action=good.action),
                    pb.Decision(request_id=str(n + 1), match_id=r.match_id, action=good.action),
                    pb.Decision(request_id=r.request_id, match_id="m-none", action=good.action),
                    good, good,
                ]  # fmt: skip
                rng.shuffle(mixed)
                batch = pb.DecisionBatch(decisions=mixed)
                await self.write(cur, pb.BotMessage(decisions=batch))
            elif move < 0.5:
                await self.write(cur, pb.BotMessage(decision=good))
                with contextlib.suppress(*WRITE_ENDED):
                    await cur["call"].done_writing()
                cur = await self.open()
            elif move < 0.55:
                await self.write(cur, pb.BotMessage(decision=good))
                cur["call"].cancel()
                await asyncio.sleep(rng.random() * 0.1)
                cur = await self.open()
            else:
                await self.write(cur, pb.BotMessage(decision=good))

    async def close(self) -> None:
        for c in self.calls:
            c["call"].cancel()
            c["reader"].cancel()
        await asyncio.gather(*(c["reader"] for c in self.calls), return_exceptions=True)
        await self.channel.close()


def _rebuilt(view: pb.PlayerView, last: pb.PlayerView | None, where: str) -> pb.PlayerView:
    """``view`` with the parts it leaves out put back from ``last`` (the match's last view
    read on the same stream), as docs/protocol.md tells a client to."""
    out = pb.PlayerView()
    out.CopyFrom(view)
    k = view.deal_results_omitted
    if k:
        assert last is not None and len(last.deal_results) >= k, (
            f"{where}: {k} deal results left out, the stream's last view of the match held "
            f"{None if last is None else len(last.deal_results)}"
        )
        del out.deal_results[:]
        out.deal_results.extend([*last.deal_results[:k], *view.deal_results])
    if view.bids_omitted or view.tricks_omitted:
        assert last is not None and last.deal_number == view.deal_number, (
            f"{where}: bids or tricks left out with no earlier view of deal "
            f"{view.deal_number} on this stream"
        )
        assert len(last.bids) >= view.bids_omitted, where
        assert len(last.tricks) >= view.tricks_omitted, where
        del out.bids[:]
        out.bids.extend([*last.bids[: view.bids_omitted], *view.bids])
        del out.tricks[:]
        out.tricks.extend([*last.tricks[: view.tricks_omitted], *view.tricks])
    out.deal_results_omitted = out.bids_omitted = out.tricks_omitted = 0
    return out


async def _play(seed: int, matches: int, ruleset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    ref = Referee(RefereeConfig(decision_ms=150, time_bank_ms=150, reconnect_grace_s=3.0,
                                max_strikes=1000))  # fmt: skip
    server, port = await start_server(ref)
    queued: dict[int, list[tuple[str, pb.PlayerView | None]]] = {}
    welcomed: list[Stream] = []
    put, attach = Stream.put, BotSession.attach

    def spying_put(self: Stream, msg: pb.ServerMessage | bytes) -> None:
        # What x's streams are queued, with the view the referee holds true as it is queued
        # (an end sent again on a new stream, of a match over, has none to compare with).
        if not self.peer.startswith("fake-") and not self.closed:
            parsed = as_message(msg)  # (a request is queued as its wire bytes)
            kind = parsed.WhichOneof("kind") or ""
            truth = None
            if kind in VIEWED:
                m = ref._matches.get(getattr(parsed, kind).match_id)
                if m is not None:
                    seat = next(s.seat for s in m.seats if s.session.name == "x")
                    ended = kind == "match_ended"
                    truth = view_to_pb(observe(m.game, seat, ended=ended))
            queued.setdefault(id(self), []).append((kind, truth))
        put(self, msg)

    def spying_attach(self: BotSession, stream: Stream) -> None:
        if self.name == "x":
            welcomed.append(stream)
        attach(self, stream)

    monkeypatch.setattr(Stream, "put", spying_put)
    monkeypatch.setattr(BotSession, "attach", spying_attach)

    def answer(bot: str, req: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=req.request_id, match_id=req.match_id,
                        action=honest_choice(req.view))  # fmt: skip
        ref.on_message(ref.session(bot), pb.BotMessage(decision=d))

    attach_in_process(ref, ("h1", "h2"), answer)
    ref.add_bot("x", "tok-x")
    x = Hostile(port, rng)
    done = asyncio.Event()
    before = len(asyncio.all_tasks())
    try:
        player = asyncio.create_task(x.play(done))
        assert not await ref.wait_for_bots(["x"], 20)
        rs = dataclasses.replace(PRESETS[ruleset], max_deals=3)
        recs = []
        for i in range(matches):
            seats = ["x", "h1", "h2"]
            rng.shuffle(seats)
            recs.append(await ref.run_match(f"m{i}", rs, seed * 100 + i, seats))
        done.set()
        await asyncio.wait_for(player, 30)
    finally:
        await x.close()
        await ref.end_streams(final=True)
        await server.stop(0.5)
    for rec in recs:
        assert rec["result"]["reason"] in ("target", "max_deals"), rec["result"]
        honest = {rec["players"].index(n) for n in ("h1", "h2")}
        assert not [i for i in rec["incidents"] if i["seat"] in honest], rec["incidents"]

    # Every stream x was welcomed on, message by message.
    assert len(welcomed) == len(x.calls) > 1
    compared = omitting = 0
    asked: dict[tuple[str, str], int] = {}  # (match, request id) -> the stream first read on
    for n, (c, stream) in enumerate(zip(x.calls, welcomed, strict=True)):
        sent = [q for q in queued.get(id(stream), []) if q[0] != "welcome"]
        got = c["got"]
        assert len(got) <= len(sent), f"stream {n}: read {len(got)}, {len(sent)} queued"
        last: dict[str, pb.PlayerView] = {}
        for k, (m, (kind, truth)) in enumerate(zip(got, sent, strict=False)):
            where = f"stream {n} message {k} ({kind})"
            assert (m.WhichOneof("kind") or "") == kind, where
            if kind not in VIEWED:
                continue
            body = getattr(m, kind)
            v = body.view
            whole = not (v.deal_results_omitted or v.bids_omitted or v.tricks_omitted)
            if kind == "decision_request":
                first = asked.setdefault((body.match_id, body.request_id), n)
                # A request asked again (after a reconnect) is whole, as docs/protocol.md says.
                assert whole or first == n, f"{where}: asked again, yet leaves parts out"
                # Only what the stream's Hello asked for is left out.
                assert not v.deal_results_omitted or "results_once" in c["features"], where
                assert not (v.bids_omitted or v.tricks_omitted) or "deal_once" in c["features"], (
                    where
                )
            else:  # (only a request's view leaves anything out)
                assert whole, where
            view = _rebuilt(body.view, last.get(body.match_id), where)
            omitting += view != body.view
            if body.HasField("view"):
                last[body.match_id] = view
            if truth is not None:
                compared += 1
                assert view == truth, f"{where}: read\n{view}\nthe referee's\n{truth}"
    assert compared > 20 and omitting > 5, (compared, omitting)  # (the features were at work)
    await asyncio.sleep(0.3)
    assert len(asyncio.all_tasks()) <= before + 1, asyncio.all_tasks()


@pytest.mark.parametrize(("seed", "ruleset"), [(1, "classic"), (2, "1001")])
def test_a_hopping_client_with_features_is_shown_the_referees_view_on_each_stream(
    seed: int, ruleset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(_play(seed, 1, ruleset, monkeypatch))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 16))
def test_a_hopping_client_with_features_at_length(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(_play(seed, 3, ("classic", "1001")[seed % 2], monkeypatch))
