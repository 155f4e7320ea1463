"""Hostile round 17: an outside client, grpc and the proto only, against a real referee."""

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

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, no_error_logged  # noqa: F401 (a fixture)

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.support.core_internal import asking_again, core_internal

pytestmark = pytest.mark.usefixtures("no_error_logged")

SHORT = dataclasses.replace(PRESETS["classic"], max_deals=3)


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _flat(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]


async def _silent(target: str, token: str) -> list[pb.ServerMessage]:
    """A bot that says Hello, answers nothing, and reads until its match ends."""
    got: list[pb.ServerMessage] = []
    async with grpc.aio.insecure_channel(target) as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
        async for raw in call:
            got.extend(_flat(raw))
            if got[-1].WhichOneof("kind") == "match_ended":
                call.cancel()
                break
    return got


def test_the_end_of_a_match_every_seat_forfeited_carries_a_finished_view(tmp_path: Path) -> None:
    """Defect: when every seat forfeits, the match stops mid-deal, and its ``MatchEnded``
    carried that deal's view: phase PASSING, ``to_act``, the declarer and the bid, the seat's
    hand, and for the seat to act its legal actions — a view asking for a decision in a match
    that is over. The proto's final view has none of these (``to_act`` "absent when the
    match is over", ``declarer`` and ``bid`` absent "in the final view", PHASE_GAME_OVER "at
    the end"); a match stopped mid-deal now ends with that view too, its scores as they
    stood and the deals it finished."""

    async def main() -> tuple[dict[str, Any], list[list[pb.ServerMessage]]]:
        async with arena(tmp_path, decision_ms=100, time_bank_ms=0, max_strikes=1) as a:
            for n in ("x", "y", "z"):
                a.referee.add_bot(n, f"tok-{n}")
            bots = [asyncio.create_task(_silent(a.target, f"tok-{n}")) for n in ("x", "y", "z")]
            assert not await a.referee.wait_for_bots(["x", "y", "z"], 10)
            rec = await a.referee.run_match("m", SHORT, 3, ["x", "y", "z"])
            return rec, await asyncio.wait_for(asyncio.gather(*bots), 10)

    rec, got = asyncio.run(main())
    assert rec["abandoned"] is True and rec["forfeits"] == [0, 1, 2]
    for seat, msgs in enumerate(got):
        me = msgs[-1].match_ended
        assert me.result.reason == "forfeits" and list(me.result.places) == [3, 3, 3]
        v = me.view
        assert v.seat == seat and v.phase == pb.PHASE_GAME_OVER, v
        assert not v.HasField("to_act") and not v.legal_actions and not v.hand
        assert not v.HasField("declarer") and not v.HasField("bid") and not v.talon
        assert not (v.bids or v.gives or v.trick or v.tricks or v.marriages)
        assert list(v.scores) == rec["result"]["scores"]
        assert v.deal_number == me.result.deals == rec["result"]["deals"]


def test_a_compressed_message_counts_by_what_it_inflates_to(tmp_path: Path) -> None:
    """Holds (checked, no defect): a gzip-compressed message of some 100 KB on the wire
    that inflates to 64 MiB is refused by gRPC against the 1 MiB limit, with
    RESOURCE_EXHAUSTED "Decompressed message larger than max", before the referee parses
    it; the bot is not locked out (its next stream is welcomed) and the referee answers."""

    async def main() -> tuple[grpc.StatusCode, str, str]:
        async with arena(tmp_path) as a:
            a.referee.add_bot("x", "tok-x")
            async with grpc.aio.insecure_channel(a.target, compression=grpc.Compression.Gzip) as ch:

                async def bombed() -> tuple[grpc.StatusCode, str]:
                    call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                    assert (await call.read()).WhichOneof("kind") == "welcome"
                    bomb = pb.Decision(request_id="1" * (64 << 20), match_id="m")
                    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                        await call.write(pb.BotMessage(decision=bomb))
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        while await call.read() is not grpc.aio.EOF:
                            pass
                    return await call.code(), await call.details()

                # (gRPC core's INTERNAL, the bomb's write racing the refusal: again)
                code, details = await asking_again(
                    bombed, lambda r: core_internal(*r, answered=True)
                )
            async with grpc.aio.insecure_channel(a.target) as ch:
                again = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await again.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                welcome = (await again.read()).WhichOneof("kind")
                again.cancel()
                info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest())
                assert info.protocol_version == 1
            return code, details, welcome

    code, details, welcome = asyncio.run(main())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "Decompressed message larger than max" in details
    assert welcome == "welcome"


# ----------------------------------------------------------------------------- conformance


class _Conformance:
    """What a client written from the proto alone may rely on, checked on every message one
    bot receives (batches opened); ``problems`` names each broken promise once, with an
    example."""

    def __init__(self, decision_ms: int, bank_ms: int) -> None:
        self.budget = (decision_ms, bank_ms)
        self.seq: dict[str, int] = {}
        self.seat: dict[str, int] = {}
        self.rid: dict[str, int] = {}
        self.problems: dict[str, str] = {}
        self.checked = 0

    def bad(self, what: str, example: object) -> None:
        self.problems.setdefault(what, str(example)[:300])

    def stream(self, msgs: list[pb.ServerMessage]) -> None:
        """The messages of one stream, in order."""
        if msgs and (msgs[0].WhichOneof("kind") != "welcome" or msgs[0].events):
            self.bad("the Welcome is the first message, alone", msgs[0])
        for raw in msgs:
            if raw.WhichOneof("kind") == "event":
                self.bad("ServerMessage.event is not used", raw)
            if raw.WhichOneof("kind") == "batch":
                if raw.events:
                    self.bad("a batch carries no events of its own", raw)
                if any(m.WhichOneof("kind") == "batch" for m in raw.batch.messages):
                    self.bad("a batch never holds a batch", raw)
            for m in _flat(raw):
                self.one(m)

    def one(self, m: pb.ServerMessage) -> None:
        self.checked += 1
        for ev in m.events:
            mid, kind = ev.match_id, ev.WhichOneof("kind")
            if ev.seq != self.seq.get(mid, -1) + 1:
                self.bad("events are numbered by one, with no gap", (mid, self.seq.get(mid), ev))
            self.seq[mid] = ev.seq
            if kind == "action":
                own = ev.action.seat == self.seat[mid]
                if own == (ev.source == pb.ACTION_SOURCE_UNSPECIFIED):
                    self.bad("source on the seat's own actions only", ev)
                give = ev.action.action.give
                if give.HasField("card") and not own and give.to_seat != self.seat[mid]:
                    self.bad("a give's card only to its giver and receiver", ev)
            elif kind == "talon_taken" and len(ev.talon_taken.cards) not in (0, 3):
                self.bad("the talon is three cards or none", ev)
            elif kind == "deal_ended" and not ev.deal_ended.HasField("declarer"):
                self.bad("a deal result names its declarer", ev)
            elif kind is None:
                self.bad("an event has a kind", ev)
        kind = m.WhichOneof("kind")
        if kind == "match_started":
            ms = m.match_started
            if ms.seat != ms.view.seat or list(ms.players) != list(ms.view.players):
                self.bad("match_started's seat and players are its view's", ms)
            self.seq[ms.match_id], self.seat[ms.match_id] = ms.seq, ms.seat
            self.view(ms.view)
        elif kind == "decision_request":
            r, limit, bank = m.decision_request, *self.budget
            if r.deal_number != r.view.deal_number or r.view.to_act != r.view.seat:
                self.bad("a request's deal and seat to act are its view's", r)
            if not r.view.legal_actions:
                self.bad("a request lists legal actions", r)
            if r.time_limit_ms > limit or r.time_limit_ms + r.time_bank_ms > limit + bank:
                self.bad("a request's time is within the limit and the bank", r)
            # Ids count the seat's requests: one asked while the bot was away is never seen
            # (a gap), one asked again on a new stream is seen twice.
            prev = self.rid.get(r.match_id, 0)
            if int(r.request_id) < max(prev, 1):
                self.bad("request ids count 1, 2, 3, ...", (prev, r.request_id))
            self.rid[r.match_id] = int(r.request_id)
            self.view(r.view)
        elif kind == "decision_rejected":
            d = m.decision_rejected
            wrong = d.incident == pb.INCIDENT_WRONG_REQUEST
            if d.incident not in (pb.INCIDENT_TIMEOUT, pb.INCIDENT_ILLEGAL,
                                  pb.INCIDENT_MALFORMED, pb.INCIDENT_WRONG_REQUEST):  # fmt: skip
                self.bad("a refusal's incident is one of four", d)
            if wrong == d.HasField("fallback") or not d.message or d.strikes > d.strikes_allowed:
                self.bad("a strike names its fallback, a wrong request none; words", d)
        elif kind == "match_ended":
            me = m.match_ended
            v = me.view
            if v.phase != pb.PHASE_GAME_OVER or v.HasField("to_act") or v.legal_actions:
                self.bad("the final view is a finished game's", me)
            if v.deal_number != me.result.deals or list(v.scores) != list(me.result.scores):
                self.bad("the final view's deals and scores are the result's", me)

    def view(self, v: pb.PlayerView) -> None:
        if v.phase == pb.PHASE_BIDDING and v.HasField("declarer"):
            self.bad("no declarer during the auction", v)
        if v.legal_actions and v.to_act != v.seat:
            self.bad("legal actions only for the seat to act", v)
        if bool(v.talon) != v.talon_known or len(v.talon) not in (0, 3):
            self.bad("the talon is shown whole, and said so", v)
        if len(v.deal_results) != v.deal_number:
            self.bad("a view holds every earlier deal's result", v)
        if v.hand and v.seat not in v.active_seats:
            self.bad("a seat dealt out of the deal holds no cards", v)


async def _conforming_bot(
    target: str, token: str, rnd: random.Random, hostile: bool, stop: asyncio.Event
) -> list[list[pb.ServerMessage]]:
    """A bot that plays a random legal action; ``hostile``: at some requests it drops its
    stream and comes back, lets the request time out, or answers a card of suit 9. The
    messages of each of its streams."""
    streams: list[list[pb.ServerMessage]] = []
    while not stop.is_set():
        got: list[pb.ServerMessage] = []
        streams.append(got)
        async with grpc.aio.insecure_channel(target) as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
            feats = ["batch"] if rnd.random() < 0.5 else []
            await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, features=feats)))
            dropped = False
            try:
                async for raw in call:
                    got.append(raw)
                    for m in _flat(raw):
                        if not m.HasField("decision_request"):
                            continue
                        r = m.decision_request
                        x = rnd.random() if hostile else 1.0
                        if x < 0.1:
                            dropped = True
                            break
                        if x < 0.2:
                            continue
                        action = rnd.choice(list(r.view.legal_actions))
                        if x < 0.3:
                            action = pb.Action()
                            action.play.card.suit = 9  # type: ignore[assignment]
                            action.play.card.rank = pb.RANK_NINE
                        d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
                        await call.write(pb.BotMessage(decision=d))
                    if dropped:
                        call.cancel()
                        break
            except grpc.aio.AioRpcError:
                pass
            if not dropped:
                return streams
    return streams


@pytest.mark.parametrize("rules", [
    dataclasses.replace(PRESETS["classic"], max_deals=3, talon_visible=False, ask_forced=True),
    dataclasses.replace(PRESETS["1001"], max_deals=3),
    dataclasses.replace(PRESETS["1001-4p"], max_deals=4),
], ids=["classic-hidden-talon-ask-forced", "1001", "1001-4p"])  # fmt: skip
def test_every_message_keeps_the_protos_promises(rules: Any, tmp_path: Path) -> None:
    """Holds (checked): every message to every seat — one of them dropping its stream and
    coming back, timing out and answering malformed cards — keeps what the proto's comments
    promise a client written from them alone: the Welcome first and alone, events numbered
    densely with the source on one's own actions only, a give's card only to its two
    seats, requests that match their views and budgets with ids 1, 2, 3, refusals with
    their fallback, views without a declarer in the auction or legal actions off turn,
    and a finished game's view at the end (hostile round 17)."""
    n = rules.players
    names = [f"b{i}" for i in range(n)]

    async def main() -> list[list[list[pb.ServerMessage]]]:
        config = {"decision_ms": 150, "time_bank_ms": 200, "max_strikes": 6}
        async with arena(tmp_path, reconnect_grace_s=3, **config) as a:
            for name in names:
                a.referee.add_bot(name, f"tok-{name}")
            stop = asyncio.Event()
            bots = [asyncio.create_task(_conforming_bot(
                a.target, f"tok-{name}", random.Random(i), i == 0, stop))
                for i, name in enumerate(names)]  # fmt: skip
            assert not await a.referee.wait_for_bots(names, 10)
            for k in range(2):
                await a.referee.run_match(f"m{k}", rules, 5 + k, names[k:] + names[:k])
            stop.set()
            await a.referee.end_streams(final=True)
            return await asyncio.wait_for(asyncio.gather(*bots), 10)

    for streams in asyncio.run(main()):
        check = _Conformance(150, 200)
        for msgs in streams:
            check.stream(msgs)
        assert not check.problems, check.problems
        assert check.checked > 20
