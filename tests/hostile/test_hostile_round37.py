"""Hostile round 37: what the earlier rounds did not try.

- ``Hello.running`` used as a probe: the id of another bot's live match, the bot's own
  match, duplicates, an empty id, one too long, a made-up one;
- a Hello that names another bot (``bot_name``), with a ``client`` full of control
  characters, features duplicated and in other cases, protocol version 0;
- a hostile bot sharing one HTTP/2 connection with an honest one, its streams refused one
  after the other (bytes that do not parse, a DecisionBatch over the limit, a flood) while
  the honest bot's request is pending on the same connection;
- the 4-player dealer, who sits the deal out, answering meanwhile (its own old and future
  request ids, another seat's pending request) and, as the last hand of a later deal, giving
  a card to the seat that sits out;
- a bot that cancels (or half-closes) its stream between two deals (no request pending)
  and again right after its ``MatchEnded``, before anything acknowledges it;
- a bot that answers every other request, late;
- ``Hello.matches`` 0 at ``arena serve``'s lobby;
- a client granting its stream a flow-control window of one byte at a time;
- a ``Play`` call with a gRPC deadline of its own that passes mid-decision;
- the token's spelling (the scheme's case, blanks, tokens that nearly match);
- ``declare`` where the rules forbid it (before a trick, following, a 10, no partner).

In each: the referee stays up, the honest seats' matches complete and are recorded as
the rules make them, the hostile seat gets the documented refusal naming what was wrong,
and no message it got holds a card its seat may not see. No defect found: these pin the
behaviour checked. The referee's real server on a free port where the wire matters,
in-process streams where it does not (the 4-player dealer, declaring).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import struct
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.hostile.test_hostile_audit import SHORT, Client, _audit, _flat
from tests.hostile.test_hostile_round32 import _passer, _raw_play
from tests.hostile.test_hostile_round34 import ONE_DEAL, _attach, _Recorded, _replays
from tests.hostile.test_hostile_round35 import WINDOW_UPDATE
from tests.support.harness import no_error_logged, until  # noqa: F401 (a fixture)
from tests.support.raw_h2 import (
    DATA,
    END_STREAM,
    HEADERS,
    PING,
    PREFACE,
    RST_STREAM,
    SETTINGS,
    RawH2,
    frame,
    grpc_message,
)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


class _Wire:
    """Bot x on one ``Play`` call over the wire: a reader task keeps every message (a
    ``Batch``'s one by one) and answers each request with ``choose(request)`` (``None``:
    no answer); ``sent`` keeps what was written."""

    def __init__(self, call: Any, choose: Any = None) -> None:
        self.call = call
        self.got: list[pb.ServerMessage] = []
        self.sent: list[pb.BotMessage] = []
        self.choose = choose or (lambda r: r.view.legal_actions[0])
        self.task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, channel: Any, hello: pb.Hello, choose: Any = None,
                   token: str = "tok-x") -> _Wire:  # fmt: skip
        w = cls(pb_grpc.ArenaStub(channel).Play(metadata=_md(token)), choose)
        await w.send(pb.BotMessage(hello=hello))
        w.task = asyncio.create_task(w._read())
        await until(lambda: bool(w.got), "the Welcome")
        return w

    async def send(self, msg: pb.BotMessage) -> None:
        self.sent.append(msg)
        await self.call.write(msg)

    async def _read(self) -> None:
        while True:
            msg = await self.call.read()
            if msg is grpc.aio.EOF:
                return
            for m in _flat([msg]):
                self.got.append(m)
                if m.HasField("decision_request"):
                    r = m.decision_request
                    action = self.choose(r)
                    if action is not None:
                        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=action)  # fmt: skip
                        await self.send(pb.BotMessage(decision=d))

    def kinds(self) -> list[str]:
        return [m.WhichOneof("kind") or "events" for m in self.got]

    def ends(self) -> list[pb.MatchEnded]:
        return [m.match_ended for m in self.got if m.HasField("match_ended")]

    async def close(self) -> None:
        self.call.cancel()
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)

    async def leave(self, how: str) -> None:
        """Cancel the call, or half-close it and read on until the referee ends it."""
        if how == "cancel":
            await self.close()
            return
        await self.call.done_writing()
        assert self.task is not None
        await self.task


def _client_of(*wires: _Wire) -> Client:
    """The messages of x's streams, in order, as ``_audit`` reads a client."""
    c = Client(call=None)
    for w in wires:
        c.got.extend(w.got)
        c.sent.extend(w.sent)
    return c


async def _served(ref: Referee, body: Any) -> Any:
    server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
    try:
        return await body(port)
    finally:
        await ref.end_streams()
        await server.stop(0.5)


def _no_match_views(msgs: list[pb.ServerMessage], match_id: str) -> None:
    """Nothing of ``match_id`` in ``msgs`` but its refusals or an ``interrupted`` end."""
    for m in msgs:
        assert all(ev.match_id != match_id for ev in m.events), m
        kind = m.WhichOneof("kind")
        body = getattr(m, kind) if kind else None
        if body is None or getattr(body, "match_id", None) != match_id:
            continue
        if kind == "match_ended":
            assert body.result.reason == "interrupted" and not body.HasField("view"), m
            assert not body.result.places and not body.result.scores, m
        else:
            assert kind == "decision_rejected", m


# ------------------------------------------------------------------ Hello.running as a probe


def test_running_naming_another_bots_live_match_tells_nothing_and_changes_nothing() -> None:
    """x plays m1 (x, a, b); m2 (c, d, e) runs next door, held at c's first request. x
    drops its stream and comes back with ``Hello.running`` naming m2 (another bot's live
    match), m1 twice (its own), an empty id, one of 201 characters and a made-up one twice,
    and ``matches: 2`` (m1, resumed, counts; none of the others does: 1 left).
    x is told each unknown id once as ``interrupted`` — m2 exactly as the made-up one, no
    view, no places, no scores (the proto: the same whether or not the match exists) — its
    own m1 is resumed, not ended; the empty and the overlong id get nothing. m2 then plays
    on untouched: its bots' results are the real ones, its record has no incident, and x
    never gets an event or a view of it. m1 completes with x's one disconnect, and nothing
    x got holds a card its seat may not see."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, reconnect_grace_s=30))
    passer = _passer(ref)
    held: list[pb.DecisionRequest] = []
    released = False

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot == "c" and not released:
            held.append(r)
        else:
            passer(bot, r)

    streams = _attach(ref, ("a", "b", "c", "d", "e"), on_request)
    ref.add_bot("x", "tok-x")

    async def body(port: int) -> tuple[Any, ...]:
        nonlocal released
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w1 = await _Wire.open(ch, pb.Hello(bot_name="x", protocol_version=1),
                                  choose=lambda r: None)  # fmt: skip
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 3, ["x", "a", "b"]))
            m2 = asyncio.create_task(ref.run_match("m2", ONE_DEAL, 4, ["c", "d", "e"]))
            await until(lambda: held and "decision_request" in w1.kinds(), "c and x asked")
            await w1.close()
            await until(lambda: not ref.session("x").connected, "x away")
            running = ["m2", "m1", "m1", "", "g" * 201, "ghost", "ghost"]
            hello = pb.Hello(bot_name="x", protocol_version=1, running=running, matches=2)
            w2 = await _Wire.open(ch, hello)
            await until(lambda: len(w2.ends()) >= 2, "the two unknown ids answered")
            # Of the 2 matches it will play, m1 (resumed) is one; m2 and the rest count none.
            assert ref.session("x").matches_left == 1
            assert not m2.done()
            released = True
            for r in held:
                passer("c", r)
            recs = await asyncio.gather(m1, m2)
            await until(lambda: any(e.match_id == "m1" for e in w2.ends()), "m1's end")
            await w2.close()
            return w1, w2, *recs

    w1, w2, rec1, rec2 = asyncio.run(_served(ref, body))
    ends = w2.ends()
    assert [e.match_id for e in ends] == ["m2", "ghost", "m1"]
    probe, ghost, own = ends
    assert probe == pb.MatchEnded(match_id="m2", result=pb.MatchResult(reason="interrupted"))
    assert ghost == pb.MatchEnded(match_id="ghost", result=pb.MatchResult(reason="interrupted"))
    assert own.result.reason == rec1["result"]["reason"] != "interrupted"
    # The resumed seat came first: the Welcome, m1 resumed and asked again, then the ends.
    assert w2.kinds()[:5] == ["welcome", "match_started", "decision_request", "match_ended",
                              "match_ended"]  # fmt: skip
    assert w2.got[1].match_started.resumed and w2.got[1].match_started.match_id == "m1"
    _no_match_views(w1.got + w2.got, "m2")
    # m2 is whole, and its bots were told its real end.
    assert rec2["incidents"] == [] and rec2["forfeits"] == []
    assert rec2["result"]["reason"] != "interrupted" and rec2["result"]["places"]
    for n in ("c", "d", "e"):
        told = [m.match_ended for m in streams[n].got if m.HasField("match_ended")]
        assert [(e.match_id, e.result.reason) for e in told] == [("m2", rec2["result"]["reason"])]
        assert list(told[0].result.places) == rec2["result"]["places"]
    _replays(rec2)
    # m1: x's one disconnect, no forfeit, and x saw only what its seat may.
    assert [(i["kind"], i["seat"]) for i in rec1["incidents"]] == [("disconnect", 0)]
    assert rec1["forfeits"] == [] and rec1["disconnects"] == [1, 0, 0]
    _replays(rec1)
    c = _client_of(w1, w2)
    c.got = [m for m in c.got if not (m.HasField("match_ended") and m.match_ended.match_id
                                      in ("m2", "ghost"))]  # fmt: skip
    assert _audit(c, {"m1": rec1}, {"m1": 0}) > 3


# ------------------------------------------------------------------ a Hello naming another bot


def test_a_hello_naming_another_bot_is_welcomed_as_its_token_says(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """x says Hello as ``bot_name`` "a" (an honest bot seated next to it, connected), with a
    ``client`` of line breaks and terminal escapes, features "batch" twice, "BATCH" and "",
    and protocol version 0 (read as 1). The Welcome names x (the token decides), lists
    "batch" once; a's stream is untouched (not replaced, not ended); the match's record and
    every view name the seats by their tokens' bots; the log line of the connection shows
    the client's text escaped, on one line."""
    caplog.set_level(logging.INFO, logger="arena.referee")
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0))
    streams = _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    client = "evil\r\nINFO bot a connected\x1b[2J\x00"
    hello = pb.Hello(bot_name="a", protocol_version=0, client=client,
                     features=["batch", "batch", "BATCH", ""])  # fmt: skip

    async def body(port: int) -> tuple[_Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w = await _Wire.open(ch, hello)
            assert ref.session("a").stream is streams["a"] and not streams["a"].closed
            rec = await ref.run_match("m1", ONE_DEAL, 5, ["x", "a", "b"])
            await until(lambda: bool(w.ends()), "x's end")
            await w.close()
            assert ref.session("a").stream is streams["a"] and not streams["a"].closed
            return w, rec

    w, rec = asyncio.run(_served(ref, body))
    welcome = w.got[0].welcome
    assert welcome.bot_name == "x"
    assert list(welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
    assert welcome.protocol_version == 1
    assert ref.session("a").welcomes == 1
    assert rec["players"] == ["x", "a", "b"] and rec["incidents"] == []
    for m in w.got:
        if m.HasField("match_started"):
            assert list(m.match_started.players) == ["x", "a", "b"]
            assert m.match_started.seat == 0
    assert w.ends()[0].view.players == ["x", "a", "b"]
    lines = [r.getMessage() for r in caplog.records if "connected from" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("bot x connected from")
    assert "\n" not in lines[0] and "\r" not in lines[0] and "\x1b" not in lines[0]
    assert "\\r\\nINFO bot a connected\\x1b[2J\\x00" in lines[0]
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 3


# ------------------------------------------------------------------ one connection, two bots


def test_a_hostile_bot_on_an_honest_bots_connection_is_refused_stream_by_stream() -> None:
    """One HTTP/2 connection carries honest a's stream (seated in m1, its first request
    pending) and, one after the other, three streams of x: after their Welcomes, bytes that
    do not parse (INVALID_ARGUMENT naming the parse), a DecisionBatch of 257 decisions
    (INVALID_ARGUMENT "at most 256 ... not 257") and 51 stray Hellos, one past a flood limit of
    50 (RESOURCE_EXHAUSTED naming the limit). Each refusal ends x's stream alone: a's
    stream stays the one it opened, its pending request is answered in time afterwards,
    and m1 completes with no incident and a's end delivered on that same stream."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, flood_limit=50))
    _attach(ref, ("b", "c"), _passer(ref))
    ref.add_bot("x", "tok-x")
    ref.add_bot("a", "tok-a")
    gate = asyncio.Event()
    hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))

    async def body(port: int) -> tuple[list[tuple[Any, str]], _Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:

            def honest_a(r: pb.DecisionRequest) -> pb.Action | None:
                return r.view.legal_actions[0] if gate.is_set() else None

            a = await _Wire.open(ch, pb.Hello(bot_name="a", protocol_version=1), honest_a,
                                 token="tok-a")  # fmt: skip
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 6, ["a", "b", "c"]))
            await until(lambda: "decision_request" in a.kinds(), "a asked")
            first = next(m.decision_request for m in a.got if m.HasField("decision_request"))
            d = pb.Decision(request_id="1", match_id="m1")
            getattr(d.action, "pass").SetInParent()
            batch = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[d] * 257))
            attacks: list[list[bytes]] = [
                [b"\xff\xff\xff\xff"],
                [batch.SerializeToString()],
                [hello.SerializeToString()] * 51,  # the 51st crosses the limit: none after it
            ]
            statuses = []
            play = _raw_play(ch)
            for sends in attacks:
                call = play(metadata=_md("tok-x"))
                await call.write(hello.SerializeToString())
                assert (await call.read()).HasField("welcome")
                for data in sends:
                    try:
                        await call.write(data)
                    except Exception:  # the referee has ended it: a write races its status
                        break
                try:
                    while await call.read() is not grpc.aio.EOF:
                        pass
                except grpc.aio.AioRpcError:
                    pass  # (the status: read below)
                statuses.append((await call.code(), await call.details()))
            assert ref.session("a").stream is not None and not m1.done()
            gate.set()
            d = pb.Decision(request_id=first.request_id, match_id="m1",
                            action=first.view.legal_actions[0])  # fmt: skip
            await a.send(pb.BotMessage(decision=d))
            rec = await m1
            await until(lambda: bool(a.ends()), "a's end")
            await a.close()
            return statuses, a, rec

    statuses, a, rec = asyncio.run(_served(ref, body))
    (c1, t1), (c2, t2), (c3, t3) = statuses
    assert c1 == grpc.StatusCode.INVALID_ARGUMENT
    assert t1.startswith("could not parse the message as arena.v1.BotMessage")
    assert c2 == grpc.StatusCode.INVALID_ARGUMENT
    assert t2 == "a DecisionBatch holds at most 256 decisions, not 257"
    assert c3 == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert t3.startswith("more than 50 messages answering no pending request within 10 s")
    assert ref.session("a").welcomes == 1
    assert rec["incidents"] == [] and rec["forfeits"] == [] and rec["disconnects"] == [0, 0, 0]
    assert not any(m.HasField("decision_rejected") for m in a.got)
    assert [e.match_id for e in a.ends()] == ["m1"]
    _replays(rec)


# ------------------------------------------------------------------ the 4-player dealer


def test_the_four_player_dealer_answering_while_it_sits_out_changes_nothing() -> None:
    """1001 for four, four deals (each seat deals once), honest seats that pass: x, while
    it deals (it sits out, is asked nothing), answers at each other seat's request with its
    own last id (answered already), the next id (not sent yet) and the other seat's
    pending request id with that seat's first legal action: each a WRONG_REQUEST naming
    what the id is, no strike, no legal actions (x has no request pending), and the other
    seat's request still answered by its own bot. As the last hand (it takes the talon after
    the all-pass) x gives a card to the dealer: ILLEGAL "not an opponent in this deal", a
    strike, the fallback played. x is never asked while it deals, the record replays, and
    nothing x got holds a card its seat may not see (the dealer's views hold no hand)."""
    rules = dataclasses.replace(PRESETS["1001-4p"], max_deals=4)
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0))
    passer = _passer(ref)
    state: dict[str, Any] = {
        "last": 0,
        "probed": set(),
        "gave": None,
        "sent": [],
        "asked_dealing": 0,
    }
    streams: dict[str, _Recorded] = {}

    def send_x(d: pb.Decision) -> None:
        state["sent"].append(pb.BotMessage(decision=d))
        ref.on_decision(ref.session("x"), d)

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        v = r.view
        if bot == "x":
            state["asked_dealing"] += v.dealer == v.seat
            state["last"] = int(r.request_id)
            gives = [a for a in v.legal_actions if a.HasField("give")]
            if gives and state["gave"] is None:
                card = gives[0].give.card
                state["gave"] = (r.request_id, v.dealer)
                to_dealer = pb.Action(give=pb.Give(card=card, to_seat=v.dealer))
                send_x(pb.Decision(request_id=r.request_id, match_id=r.match_id, action=to_dealer))
                return
            passer(bot, r)
            return
        x_seat = list(v.players).index("x")
        if v.dealer == x_seat and v.deal_number not in state["probed"]:
            state["probed"].add(v.deal_number)
            for rid in (str(state["last"]), str(state["last"] + 1), r.request_id):
                send_x(pb.Decision(request_id=rid, match_id=r.match_id,
                                   action=v.legal_actions[0]))  # fmt: skip
        passer(bot, r)

    async def main() -> dict[str, Any]:
        streams.update(_attach(ref, ("a", "x", "b", "c"), on_request))
        return await ref.run_match("m4", rules, 7, ["a", "x", "b", "c"])

    rec = asyncio.run(main())
    x = 1
    assert len(rec["deals"]) == 4 and len(state["probed"]) == 1 and state["gave"] is not None
    assert state["asked_dealing"] == 0
    wrong = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
    illegal = [i for i in rec["incidents"] if i["kind"] == "illegal"]
    assert {i["seat"] for i in rec["incidents"]} == {x}
    assert len(wrong) == 3 and len(illegal) == 1 and len(rec["incidents"]) == 4
    assert rec["forfeits"] == [] and rec["wrong_requests"] == [0, 3, 0, 0]
    assert "no decision of yours is pending" in wrong[0]["detail"]
    assert "nothing (no request of yours pending)" in wrong[0]["detail"]
    assert "was answered already" in wrong[0]["detail"]
    assert "has not been sent to this seat" in wrong[1]["detail"]
    rid, dealer = state["gave"]
    assert f"seat {dealer} is not an opponent in this deal" in illegal[0]["detail"]
    assert "strike 1 of 3" in illegal[0]["detail"]
    told = streams["x"].rejected()
    wrong_kind = pb.INCIDENT_WRONG_REQUEST
    assert sorted(t.incident for t in told) == [pb.INCIDENT_ILLEGAL] + [wrong_kind] * 3
    for t in told:
        assert t.match_id == "m4"
        if t.incident == pb.INCIDENT_WRONG_REQUEST:
            assert t.strikes == 0 and not t.legal_actions and not t.HasField("fallback")
        else:
            assert t.request_id == rid and t.strikes == 1 and t.HasField("fallback")
    for n in ("a", "b", "c"):
        assert not streams[n].rejected()
    # Every honest action was its bot's own; x's fallback is the only other kind.
    for d in rec["deals"]:
        for act in d["actions"]:
            assert act["by"] in ("bot", "forced") or act["seat"] == x, act
    for m in streams["x"].got:
        if m.HasField("match_started") or m.HasField("decision_request"):
            v = m.match_started.view if m.HasField("match_started") else m.decision_request.view
            assert v.dealer != x or not v.hand
    _replays(rec)
    c = Client(call=None, got=list(streams["x"].got), sent=state["sent"])
    assert _audit(c, {"m4": rec}, {"m4": x}) > 3


# ------------------------------------------------------------------ cancelled between deals


@pytest.mark.parametrize("leave", ["cancel", "half-close"])
def test_a_stream_left_between_deals_and_after_the_end_resumes_and_ends_again(leave: str) -> None:
    """1001, two deals. x leaves its stream (``leave``: cancels it, or half-closes it and
    reads to its end) right after the events ending deal 0 (its
    request of deal 1 not yet sent: the honest seats hold theirs until x is back). Back,
    its resumed ``MatchStarted`` says the ``seq`` it last saw and the view of deal 1, and
    the next event it gets is ``seq`` + 1. Right after its ``MatchEnded`` it leaves again,
    before answering anything: a new stream with ``running: [m1]`` and ``matches: 1`` gets
    the same end again (no events, not interrupted) and counts it (``matches_left`` 0), and
    so does a third stream. The record has x's one disconnect (none after the end), no
    forfeit, and x saw only what its seat may."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, reconnect_grace_s=30))
    passer = _passer(ref)
    held: list[tuple[str, pb.DecisionRequest]] = []
    hold = {"on": False}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if hold["on"] and r.deal_number == 1:
            held.append((bot, r))
        else:
            passer(bot, r)

    _attach(ref, ("a", "b"), on_request)
    ref.add_bot("x", "tok-x")
    hello = pb.Hello(bot_name="x", protocol_version=1)

    def deal0_over(w: _Wire) -> bool:
        return any(ev.HasField("deal_ended") for m in w.got for ev in m.events)

    async def body(port: int) -> tuple[list[_Wire], dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w1 = await _Wire.open(ch, hello)
            hold["on"] = True
            # x answers nothing of deal 1 on this stream: it is cut before.
            w1.choose = lambda r: r.view.legal_actions[0] if r.deal_number == 0 else None
            m1 = asyncio.create_task(ref.run_match("m1", SHORT, 2, ["x", "a", "b"]))
            await until(lambda: deal0_over(w1), "deal 0 over")
            await w1.leave(leave)
            await until(lambda: not ref.session("x").connected, "x away")
            w2 = await _Wire.open(ch, hello)
            await until(lambda: "match_started" in w2.kinds(), "m1 resumed")
            hold["on"] = False
            for bot, r in held:
                passer(bot, r)
            rec = await m1
            await until(lambda: bool(w2.ends()), "the end")
            await w2.leave(leave)
            again = pb.Hello(bot_name="x", protocol_version=1, running=["m1"], matches=1)
            w3 = await _Wire.open(ch, again)
            await until(lambda: bool(w3.ends()), "the end again")
            left = ref.session("x").matches_left
            await w3.leave(leave)
            w4 = await _Wire.open(ch, hello)
            await until(lambda: bool(w4.ends()), "the end a third time")
            await w4.leave(leave)
            assert left == 0
            codes = [await w.call.code() for w in (w1, w2, w3, w4)]
            want = grpc.StatusCode.CANCELLED if leave == "cancel" else grpc.StatusCode.OK
            assert codes == [want] * 4
            return [w1, w2, w3, w4], rec

    (w1, w2, w3, w4), rec = asyncio.run(_served(ref, body))
    seen = max(ev.seq for m in w1.got for ev in m.events)
    started = w2.got[1].match_started
    assert started.resumed and not started.forfeited and started.seq == seen
    assert started.view.deal_number == 1
    later = [ev.seq for m in w2.got for ev in m.events]
    assert later and later[0] == seen + 1 and later == list(range(seen + 1, seen + 1 + len(later)))
    end = w2.ends()[0]
    assert end.result.reason == rec["result"]["reason"] != "interrupted"
    for w in (w3, w4):
        assert w.kinds() == ["welcome", "match_ended"] and not w.got[1].events
        assert w.ends()[0] == end
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0)]
    assert rec["forfeits"] == [] and rec["disconnects"] == [1, 0, 0]
    _replays(rec)
    assert _audit(_client_of(w1, w2, w3, w4), {"m1": rec}, {"m1": 0}) > 3


# ------------------------------------------------------------------ every other request


def test_a_bot_answering_every_other_request_late_times_out_then_forfeits() -> None:
    """x answers its odd requests at once and lets each even one time out; with the next
    request it first sends the answer to the one before (late). Each even request is a
    TIMEOUT strike (the fallback played, the time allowed named); each late answer a
    WRONG_REQUEST naming the request as timed out and the pending one, with that one's
    legal actions, no strike; the odd answers are x's own actions. At the third timeout x
    forfeits (that refusal is the notice: strikes equal strikes_allowed), is asked nothing
    more, a late answer then is told the seat has forfeited, and x still gets the events
    and its ``MatchEnded``, placed last. The honest seats have no incident; the record
    replays; nothing x got holds a card its seat may not see."""
    ref = Referee(RefereeConfig(decision_ms=1000, time_bank_ms=0, max_strikes=3))
    passer = _passer(ref)
    held: list[tuple[str, pb.DecisionRequest]] = []
    told_forfeited = asyncio.Event()

    def honest(bot: str, r: pb.DecisionRequest) -> None:
        # Once x has forfeited, the honest seats wait for its late answer to be refused.
        seat = ref.session("x").seats.get(r.match_id)
        if seat is not None and seat.forfeited and not told_forfeited.is_set():
            held.append((bot, r))
        else:
            passer(bot, r)

    _attach(ref, ("a", "b"), honest)
    ref.add_bot("x", "tok-x")
    skipped: list[pb.DecisionRequest] = []

    async def body(port: int) -> tuple[_Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w = await _Wire.open(ch, pb.Hello(bot_name="x", protocol_version=1),
                                 choose=lambda r: None)  # fmt: skip

            async def on_request(r: pb.DecisionRequest) -> None:
                if skipped:  # the late answer to the one skipped before, first
                    late = skipped[-1]
                    d = pb.Decision(request_id=late.request_id, match_id=late.match_id,
                                    action=late.view.legal_actions[0])  # fmt: skip
                    await w.send(pb.BotMessage(decision=d))
                if int(r.request_id) % 2 == 0:
                    skipped.append(r)
                    return
                skipped.clear()
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                await w.send(pb.BotMessage(decision=d))

            w.choose = lambda r: None
            seen = 0

            async def answer_loop() -> None:
                nonlocal seen
                while True:
                    reqs = [m.decision_request for m in w.got if m.HasField("decision_request")]
                    for r in reqs[seen:]:
                        await on_request(r)
                    seen = len(reqs)
                    if w.ends():
                        return
                    await asyncio.sleep(0.005)

            def rejected() -> list[pb.DecisionRejected]:
                return [m.decision_rejected for m in w.got if m.HasField("decision_rejected")]

            loop_task = asyncio.create_task(answer_loop())
            match = asyncio.create_task(ref.run_match("m1", SHORT, 8, ["x", "a", "b"]))
            await until(lambda: any(r.strikes == 3 for r in rejected()), "the forfeit's notice")
            await until(lambda: bool(held), "an honest seat asked after the forfeit")
            # Forfeited: a late answer to its last request is told so, the match still on.
            last = skipped[-1]
            n = len(rejected())
            d = pb.Decision(request_id=last.request_id, match_id="m1",
                            action=last.view.legal_actions[0])  # fmt: skip
            await w.send(pb.BotMessage(decision=d))
            await until(lambda: len(rejected()) > n, "the refusal")
            told_forfeited.set()
            for bot, r in held:
                passer(bot, r)
            rec = await match
            await until(lambda: bool(w.ends()), "x's end")
            await loop_task
            await w.close()
            return w, rec

    w, rec = asyncio.run(_served(ref, body))
    x_inc = [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == 0]
    assert all(i["seat"] == 0 for i in rec["incidents"])
    timeouts = [d for k, d in x_inc if k == "timeout"]
    assert len(timeouts) == 3 and rec["forfeits"] == [0]
    kinds = [k for k, _ in x_inc]
    assert kinds[kinds.index("forfeit") - 1] == "timeout" and kinds.count("forfeit") == 1
    assert "3 strikes" in x_inc[kinds.index("forfeit")][1]
    rejected = [m.decision_rejected for m in w.got if m.HasField("decision_rejected")]
    strikes = [r for r in rejected if r.incident == pb.INCIDENT_TIMEOUT]
    assert [(int(r.request_id) % 2, r.strikes, r.strikes_allowed) for r in strikes] == [
        (0, 1, 3), (0, 2, 3), (0, 3, 3),
    ]  # fmt: skip
    assert all(r.HasField("fallback") and r.legal_actions for r in strikes)
    late = [r for r in rejected if r.incident == pb.INCIDENT_WRONG_REQUEST]
    assert len(late) == 3
    assert late[2].request_id == strikes[2].request_id and not late[2].legal_actions
    assert "the seat has forfeited: it is asked nothing more" in late[2].message
    for r in late[:2]:
        assert f"request {r.request_id!r} timed out: the fallback was played" in r.message
        assert f"the pending request is '{int(r.request_id) + 1}'" in r.message
        assert r.strikes < 3 and r.legal_actions and not r.HasField("fallback")
    asked = [m.decision_request for m in w.got if m.HasField("decision_request")]
    assert int(asked[-1].request_id) == int(strikes[-1].request_id)  # asked nothing after
    end = w.ends()[0]
    assert list(end.result.forfeits) == [0] and end.result.places[0] == 3
    assert rec["result"]["places"][0] == 3
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 3


# ------------------------------------------------------------------ Hello.matches at the lobby


def test_a_bot_saying_it_plays_no_more_matches_is_never_seated_by_the_lobby() -> None:
    """``arena serve``'s lobby with honest a, b, c idle and x connected with ``matches: 0``
    ("it is seated in none"): both matches the lobby starts seat a, b and c, x is told of
    none (its stream carries the Welcome alone) and is never among the idle bots. Back on a
    new stream with ``matches: 1``, with c gone, x is seated in the next match (a, b, x)
    and, that match played, is idle no more though still connected: ``matches_left`` 0."""
    from arena.referee.lobby import Lobby

    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0))
    streams = _attach(ref, ("a", "b", "c"), _passer(ref))
    ref.add_bot("x", "tok-x")

    async def body(port: int) -> tuple[list[Any], list[Any], _Wire, _Wire, int | None]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            none = pb.Hello(bot_name="x", protocol_version=1, matches=0)
            w1 = await _Wire.open(ch, none)
            assert "x" not in ref.idle_bots() and ref.session("x").connected
            first: list[Any] = []

            async def keep(fm: Any) -> None:
                first.append(fm)

            await Lobby(ref, ONE_DEAL, seed=1, max_matches=2, prefix="L",
                        on_finished=keep).run()  # fmt: skip
            await w1.close()
            ref.session("c").detach(streams["c"], 30.0)
            one = pb.Hello(bot_name="x", protocol_version=1, matches=1)
            w2 = await _Wire.open(ch, one)
            assert sorted(ref.idle_bots()) == ["a", "b", "x"]
            second: list[Any] = []

            async def keep2(fm: Any) -> None:
                second.append(fm)

            await Lobby(ref, ONE_DEAL, seed=2, max_matches=1, prefix="M",
                        on_finished=keep2).run()  # fmt: skip
            await until(lambda: bool(w2.ends()), "x's end")
            left = ref.session("x").matches_left
            assert ref.session("x").connected and "x" not in ref.idle_bots()
            await w2.close()
            return first, second, w1, w2, left

    first, second, w1, w2, left = asyncio.run(_served(ref, body))
    assert len(first) == 2 and all(sorted(fm.seats) == ["a", "b", "c"] for fm in first)
    assert w1.kinds() == ["welcome"]
    assert len(second) == 1 and sorted(second[0].seats) == ["a", "b", "x"]
    assert left == 0
    rec = second[0].record
    assert rec["incidents"] == [] and rec["forfeits"] == []
    assert [e.match_id for e in w2.ends()] == [second[0].match_id]
    _replays(rec)
    seat = list(second[0].seats).index("x")
    assert _audit(_client_of(w2), {second[0].match_id: rec}, {second[0].match_id: seat}) > 3


# ------------------------------------------------------------------ a window of one byte


class _Trickle(RawH2):
    """A hand-made HTTP/2 client that grants its streams a flow-control window of one byte
    (SETTINGS_INITIAL_WINDOW_SIZE 1) and gives one byte more for each byte read: the
    referee can send it one byte per round trip. It plays one ``Play`` call: says Hello,
    answers each request with its first legal action, and half-closes once it has read
    ``ends`` match ends; ``run`` returns every message read, the largest DATA frame the
    server sent on the call, and the call's trailers."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(PREFACE
                          + frame(SETTINGS, 0, 0, b"\x00\x04\x00\x00\x00\x01"))  # fmt: skip
        self.next_stream = 1
        self._buffer = b""

    def run(self, token: str, ends: int) -> tuple[list[pb.ServerMessage], int, bytes]:
        hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))
        auth = ((b"authorization", f"Bearer {token}".encode()),)
        sid = self.call("/arena.v1.Arena/Play", data=grpc_message(hello.SerializeToString()),
                        end=False, extra=auth)  # fmt: skip
        got: list[pb.ServerMessage] = []
        body, largest, trailers, raw = b"", 0, b"", b""
        while not trailers:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                break
            raw += chunk
            while len(raw) >= 9:
                size = int.from_bytes(raw[:3], "big")
                if len(raw) < 9 + size:
                    break
                kind, flags = raw[3], raw[4]
                stream = int.from_bytes(raw[5:9], "big") & 0x7FFFFFFF
                payload, raw = raw[9 : 9 + size], raw[9 + size :]
                if kind == SETTINGS and not flags & 1:
                    self.sock.sendall(frame(SETTINGS, 1, 0))
                elif kind == PING and not flags & 1:
                    self.sock.sendall(frame(PING, 1, 0, payload))
                elif kind == RST_STREAM and stream == sid:
                    trailers = b"RST_STREAM " + payload
                elif kind == HEADERS and stream == sid and flags & END_STREAM:
                    trailers = payload
                elif kind == DATA and stream == sid and payload:
                    largest = max(largest, len(payload))
                    more = struct.pack(">I", len(payload))
                    self.sock.sendall(frame(WINDOW_UPDATE, 0, sid, more)
                                      + frame(WINDOW_UPDATE, 0, 0, more))  # fmt: skip
                    body += payload
                    while len(body) >= 5 and len(body) >= 5 + int.from_bytes(body[1:5], "big"):
                        n = int.from_bytes(body[1:5], "big")
                        msg, body = pb.ServerMessage.FromString(body[5 : 5 + n]), body[5 + n :]
                        got.append(msg)
                        if msg.HasField("decision_request"):
                            r = msg.decision_request
                            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                            action=r.view.legal_actions[0])  # fmt: skip
                            answer = pb.BotMessage(decision=d).SerializeToString()
                            self.sock.sendall(frame(DATA, 0, sid, grpc_message(answer)))
                        if sum(m.HasField("match_ended") for m in got) == ends:
                            self.sock.sendall(frame(DATA, END_STREAM, sid))  # half-close
                            ends = -1
        return got, largest, trailers


def test_a_bot_granting_one_byte_at_a_time_gets_every_message_whole() -> None:
    """Bot x's connection grants its stream a window of one byte and one more byte per byte
    read (a client reading as slowly as HTTP/2 lets it, and still reading). Every message
    reaches it whole, one byte a DATA frame (the window is honoured), it answers each
    request in time, its match (x, a, b) completes with x's own actions and no incident
    while a second table (c, d, e) plays beside it, and once it half-closes after its end
    the call ends with OK. Nothing logged; nothing x got holds a card its seat may not
    see."""
    ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
    _attach(ref, ("a", "b", "c", "d", "e"), _passer(ref))
    ref.add_bot("x", "tok-x")

    async def body(port: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        client = _Trickle(port)
        try:
            bot = asyncio.create_task(asyncio.to_thread(client.run, "tok-x", 1))
            await until(lambda: ref.session("x").connected, "x welcomed")
            recs = await asyncio.gather(
                ref.run_match("m1", ONE_DEAL, 9, ["x", "a", "b"]),
                ref.run_match("m2", ONE_DEAL, 10, ["c", "d", "e"]),
            )
            got = await bot
        finally:
            client.close()
        return got, *recs

    (got, largest, trailers), rec1, rec2 = asyncio.run(_served(ref, body))
    assert largest == 1
    assert b"grpc-status\x010" in trailers, trailers  # OK
    assert got[0].HasField("welcome") and got[-1].HasField("match_ended")
    flat = _flat(got)
    assert sum(m.HasField("decision_request") for m in flat) >= 2
    for rec in (rec1, rec2):
        assert rec["incidents"] == [] and rec["forfeits"] == []
        _replays(rec)
    assert all(a["by"] in ("bot", "forced") for d in rec1["deals"] for a in d["actions"])
    c = Client(call=None, got=flat)
    assert _audit(c, {"m1": rec1}, {"m1": 0}) > 3


# ------------------------------------------------------------------ a deadline on the call


def test_a_play_call_whose_own_deadline_passes_mid_decision_is_a_disconnect() -> None:
    """x opens its ``Play`` call with a gRPC deadline of 3 s (docs/protocol.md: set none,
    the call lasts the session), is seated and asked, and does not answer: the deadline
    ends the call under the pending request (the client is told DEADLINE_EXCEEDED). The
    referee counts a disconnect, nothing else; x back on a call without a deadline gets
    its seat resumed and the same request asked again, answers it, and the match
    completes with x's own actions and that one disconnect. Nothing logged."""
    ref = Referee(RefereeConfig(decision_ms=30_000, time_bank_ms=0, reconnect_grace_s=30))
    _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))

    async def body(port: int) -> tuple[Any, pb.DecisionRequest, _Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"), timeout=3.0)
            await call.write(hello)
            assert (await call.read()).HasField("welcome")
            match = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 11, ["x", "a", "b"]))
            asked = None
            while asked is None:
                msg = await call.read()
                if msg.HasField("decision_request"):
                    asked = msg.decision_request
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while await call.read() is not grpc.aio.EOF:
                    pass
            code = ended.value.code()
            await until(lambda: not ref.session("x").connected, "x away")
            w = await _Wire.open(ch, hello.hello)
            rec = await match
            await until(lambda: bool(w.ends()), "x's end")
            await w.close()
            return code, asked, w, rec

    code, asked, w, rec = asyncio.run(_served(ref, body))
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    again = next(m.decision_request for m in w.got if m.HasField("decision_request"))
    assert again.request_id == asked.request_id and again.view == asked.view
    assert w.got[1].match_started.resumed
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0)]
    assert rec["forfeits"] == [] and rec["disconnects"] == [1, 0, 0]
    assert all(a["by"] in ("bot", "forced") for d in rec["deals"] for a in d["actions"])
    _replays(rec)


# ------------------------------------------------------------------ the token's spelling

#: ``authorization`` values -> the token they present (``None``: none), as docs/protocol.md
#: reads them: the word Bearer in any case, the token after it, blanks around it dropped;
#: the token itself compared exactly.
TOKEN_FORMS: dict[str, str | None] = {
    "bearer tok-x": "tok-x",
    "BEARER tok-x": "tok-x",
    "BeArEr tok-x": "tok-x",
    "Bearer   tok-x": "tok-x",
    "Bearer tok-x   ": "tok-x",
    "   Bearer tok-x": "tok-x",
    "Bearer": None,
    "Bearer    ": None,
    "tok-x": None,
    "Token tok-x": None,
    "Basic tok-x": None,
    "Bearertok-x": None,
    "Bearer tok-X": "tok-X",
    "Bearer tok-": "tok-",
    "Bearer tok-xx": "tok-xx",
    "Bearer tok-x tok-x": "tok-x tok-x",
    "Bearer Bearer tok-x": "Bearer tok-x",
}


def test_the_tokens_spelling_is_read_as_documented() -> None:
    """Each ``authorization`` value of ``TOKEN_FORMS`` on a ``Play`` call: the scheme in any
    case, blanks before, between and after let in (x welcomed, the Welcome naming x); no
    Bearer token at all is UNAUTHENTICATED "missing token: ..."; a token that is x's with a
    letter in another case, cut short, longer, doubled or behind a second "Bearer" is
    UNAUTHENTICATED "unknown token". Every refusal is counted as a bad token; x, welcomed
    each time on a new call after the last one ended, is never counted as reconnecting too
    often, and nothing is logged."""

    async def body(ref: Referee, port: int) -> tuple[dict[str, tuple[Any, str]], int]:
        out: dict[str, tuple[Any, str]] = {}
        retried = 0
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            for value in TOKEN_FORMS:
                for _ in range(5):  # (a Hello written as the refusal comes: INTERNAL, retried)
                    call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", value),))
                    try:
                        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                        first = await call.read()
                    except (grpc.aio.AioRpcError, grpc.aio.UsageError):
                        out[value] = (await call.code(), await call.details() or "")
                    else:
                        out[value] = (first.welcome.bot_name, "welcomed")
                        call.cancel()
                        await until(lambda: not ref.session("x").connected, "x gone")
                    if out[value][0] != grpc.StatusCode.INTERNAL:
                        break
                    retried += 1
        return out, ref.refused_tokens()[0] - retried

    from tests.support.harness import serve_one_bot

    got, refused = serve_one_bot(body)
    for value, token in TOKEN_FORMS.items():
        if token == "tok-x":
            assert got[value] == ("x", "welcomed"), value
        elif token is None:
            assert got[value][0] == grpc.StatusCode.UNAUTHENTICATED, value
            assert got[value][1].startswith("missing token: send metadata"), value
        else:
            assert got[value] == (grpc.StatusCode.UNAUTHENTICATED, "unknown token"), value
    assert refused == sum(t != "tok-x" for t in TOKEN_FORMS.values())


# ------------------------------------------------------------------ declaring where one may not

#: What x's declaring answers are refused for, by the kind tried (the engine's words).
DECLARE_RULES = {
    "early": "a marriage may be declared only after winning a trick",
    "follow": "a marriage is declared only with a lead, not when following",
    "nine": "only a K or Q (marriage) or an ace (ace marriage) can be declared",
    "partner": "a marriage needs its partner",
}


def test_declaring_where_the_rules_forbid_is_a_strike_naming_the_rule() -> None:
    """Classic, two deals, seed 1: x wins the auction and answers ``declare: true`` where the
    rules forbid it, once each: a K whose Q it holds at the deal's first lead (no trick won
    yet), a Q when following, a 10 lead, and a K lead without its Q. Each is an ILLEGAL
    strike (strikes 1 to 4 of 10) whose refusal names the card, the rule, the request's
    legal actions and the fallback played; the record shows those four fallbacks and
    nothing else of x's but its own actions; the honest seats have no incident; the record
    replays; and nothing x got holds a card its seat may not see (the partner a refusal
    names is the rules', not a card shown: every K has its Q)."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, max_strikes=10))
    passer = _passer(ref)
    tried: dict[str, pb.DecisionRequest] = {}
    sent: list[pb.BotMessage] = []
    kq = (pb.RANK_KING, pb.RANK_QUEEN)

    def declare(kind: str, r: pb.DecisionRequest, card: pb.Card) -> None:
        tried[kind] = r
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=pb.Action(play=pb.PlayCard(card=card, declare=True)))  # fmt: skip
        sent.append(pb.BotMessage(decision=d))
        ref.on_decision(ref.session("x"), d)

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        v = r.view
        legal = list(v.legal_actions)
        if bot != "x" or v.phase != pb.PHASE_PLAYING:
            bids = [a for a in legal if a.HasField("bid")]
            if bot == "x" and bids:  # x bids, the others pass: x leads the first trick
                ref.on_decision(ref.session(bot), pb.Decision(
                    request_id=r.request_id, match_id=r.match_id, action=bids[0]))  # fmt: skip
            else:
                passer(bot, r)
            return
        cards = [a.play.card for a in legal]
        held = {(c.suit, c.rank) for c in v.hand}
        ranks = (pb.RANK_NINE, pb.RANK_JACK, pb.RANK_TEN)
        lead = not v.trick
        pairs = [c for c in cards if c.rank == pb.RANK_KING and (c.suit, pb.RANK_QUEEN) in held]
        high = [c for c in cards if c.rank in (*kq, pb.RANK_ACE)]
        low = [c for c in cards if c.rank in ranks]
        lone = [c for c in cards if c.rank in kq and (c.suit, kq[1 - kq.index(c.rank)]) not in held]
        if lead and not v.tricks and pairs and "early" not in tried:
            declare("early", r, pairs[0])
        elif not lead and high and "follow" not in tried:
            declare("follow", r, high[0])
        elif lead and low and "nine" not in tried:
            declare("nine", r, low[0])
        elif lead and lone and "partner" not in tried:
            declare("partner", r, lone[0])
        else:
            passer(bot, r)

    async def main() -> tuple[dict[str, Any], dict[str, _Recorded]]:
        streams = _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", rules, 1, ["x", "a", "b"]), streams

    rec, streams = asyncio.run(main())
    assert sorted(tried) == sorted(DECLARE_RULES)
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("illegal", 0)] * 4
    told = streams["x"].rejected()
    by_request = {r.request_id: k for k, r in tried.items()}
    assert [t.strikes for t in told] == [1, 2, 3, 4]
    for t, inc in zip(told, rec["incidents"], strict=True):
        kind = by_request[t.request_id]
        r = tried[kind]
        assert t.incident == pb.INCIDENT_ILLEGAL and t.strikes_allowed == 10
        assert DECLARE_RULES[kind] in t.message and DECLARE_RULES[kind] in inc["detail"]
        assert list(t.legal_actions) == list(r.view.legal_actions)
        assert t.fallback == r.view.legal_actions[0]
        assert " declare'" in t.message and f"strike {t.strikes} of 10" in inc["detail"]
    x_moves = [a["by"] for d in rec["deals"] for a in d["actions"] if a["seat"] == 0]
    assert x_moves.count("fallback") == 4 and set(x_moves) <= {"bot", "forced", "fallback"}
    assert not streams["a"].rejected() and not streams["b"].rejected()
    assert rec["forfeits"] == []
    _replays(rec)
    shown = [pb.ServerMessage() for _ in streams["x"].got]
    for out, m in zip(shown, streams["x"].got, strict=True):
        out.CopyFrom(m)
        if out.HasField("decision_rejected") and "its partner" in out.decision_rejected.message:
            out.decision_rejected.message = ""  # (names the partner the rules give the card)
    assert _audit(Client(call=None, got=shown, sent=sent), {"m1": rec}, {"m1": 0}) > 3
