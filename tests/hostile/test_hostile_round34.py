"""Hostile round 34: the loop-stall meter (``LoopLag``) against bots that stall the
referee's loop themselves, one bot at several tables at once answering batches in part, out
of order, twice and across tables, Hellos that claim what the bot does not honour, a token
back on a new stream while its old one is still half-open, and answers legal in form but
for a deal already over (1001's throw-in). The referee's real server on a free port in
this process where the wire matters, in-process streams where it does not."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import weakref
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.protocol import card_from_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, Pass, ThrowIn
from engine.record import replay
from tests.support.harness import as_message, no_error_logged, until  # noqa: F401 (a fixture)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def _replays(rec: dict[str, Any]) -> None:
    """The record replays under the rules (with the rules' result where seats forfeited,
    as docs/referee.md says to replay such a record)."""
    if rec.get("forfeits") and rec.get("rules_result") is not None:
        rec = {**rec, "result": rec["rules_result"]}
    replay(rec)


class _Recorded(Stream):
    """An in-process stream that keeps every message put on it (a ``Batch``'s one by one)
    and hands each decision request to ``on_request`` on the next turn of the loop, as a
    read would bring it."""

    __slots__ = ("bot", "got", "on_request")

    def __init__(self, bot: str, on_request: Callable[[str, pb.DecisionRequest], None]) -> None:
        super().__init__(f"fake-{bot}")
        self.bot = bot
        self.got: list[pb.ServerMessage] = []
        self.on_request = on_request

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        super().put(msg)
        self.got.append(msg)
        if msg.HasField("decision_request"):
            asyncio.get_running_loop().call_soon(self.on_request, self.bot, msg.decision_request)

    def rejected(self) -> list[pb.DecisionRejected]:
        return [m.decision_rejected for m in self.got if m.HasField("decision_rejected")]


def _attach(ref: Referee, names: tuple[str, ...], on_request: Any) -> dict[str, _Recorded]:
    streams = {}
    for n in names:
        ref.add_bot(n, f"tok-{n}")
        streams[n] = _Recorded(n, on_request)
        ref.session(n).attach(streams[n])
    return streams


def _decide(ref: Referee, bot: str, r: pb.DecisionRequest, action: pb.Action | None = None,
            rid: str | None = None) -> None:  # fmt: skip
    d = pb.Decision(request_id=r.request_id if rid is None else rid, match_id=r.match_id,
                    action=r.view.legal_actions[0] if action is None else action)  # fmt: skip
    ref.on_decision(ref.session(bot), d)


async def _with_bot_over_the_wire(
    ref: Referee, name: str, play: Callable[[int], Any], matches: list[tuple[str, int, list[str]]]
) -> list[dict[str, Any]]:
    """Bot ``name`` played by ``play(port)`` against the referee's real server on a free
    port, at ``matches`` (match id, seed, seats) played at once; the records, once the bot
    is done too. Streams and server are ended whatever happens."""
    ref.add_bot(name, f"tok-{name}")
    server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
    try:
        bot = asyncio.create_task(play(port))
        await until(lambda: ref.session(name).connected, f"{name} connected")
        recs = await asyncio.gather(*(ref.run_match(m, ONE_DEAL, seed, seats)
                                      for m, seed, seats in matches))  # fmt: skip
        await bot
    finally:
        await ref.end_streams()
        await server.stop(0.5)
    return list(recs)


# ------------------------------------------------------------- a deal that is over (1001)

#: 1001, seats (x, a, b), seed 5: x deals deal 0 and is its last hand; a and b pass, so x
#: takes the talon at 40 without a word and is first asked to pass cards, throw-in among
#: its legal actions.
X_LAST_HAND = 5


def test_answers_for_a_deal_thrown_in_are_refused_for_what_they_are() -> None:
    """1001: x, the last hand after an all-pass, throws in (the deal ends, the next is
    dealt). Then it answers as if that deal were still on: its throw-in again under the
    old request id (a duplicate: "answered already", no strike, nothing changes), a
    throw-in as its answer to the new deal's first request (legal in form, not now: a
    strike naming the throw-in's rule and the legal actions, the fallback played), then a
    card of its old hand that it does not hold now (a strike naming that card). Every
    incident is x's, each refusal names its request and what was wrong, the honest seats
    have none, and the record replays."""
    rules = dataclasses.replace(PRESETS["1001"], max_deals=2)
    ref = Referee(RefereeConfig(decision_ms=5_000, time_bank_ms=0, max_strikes=3))
    state: dict[str, Any] = {"x": []}
    old = Game.new(rules, X_LAST_HAND, ["x", "a", "b"])
    for _ in range(2):
        old.apply_trusted(Pass())
    assert old.to_act == 0 and ThrowIn() in old.legal_actions()

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot != "x":  # a and b pass while they may: x, last, takes the talon at 40
            passes = [a for a in r.view.legal_actions if a.HasField("pass")]
            _decide(ref, bot, r, passes[0] if passes and r.deal_number == 0 else None)
            return
        asked = state["x"]
        asked.append(r)
        k = len(asked)
        if k == 1:  # deal 0: throw in
            assert r.deal_number == 0
            throw = [a for a in r.view.legal_actions if a.HasField("throw_in")]
            assert throw, r.view.legal_actions
            state["throw"] = throw[0]
            state["hand"] = list(r.view.hand)
            _decide(ref, "x", r, throw[0])
        elif k == 2:  # deal 1: the old answer again, then a throw-in for this request
            assert r.deal_number == 1
            _decide(ref, "x", asked[0], state["throw"])
            _decide(ref, "x", r, state["throw"])
        elif k == 3:  # a card of the old hand that the new one does not hold
            stale = [c for c in state["hand"] if c not in r.view.hand]
            state["stale"] = stale[0]
            _decide(ref, "x", r, pb.Action(play=pb.PlayCard(card=stale[0])))
        else:
            _decide(ref, "x", r)

    async def main() -> tuple[dict[str, Any], dict[str, _Recorded]]:
        streams = _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", rules, X_LAST_HAND, ["x", "a", "b"]), streams

    rec, streams = asyncio.run(main())
    assert len(state["x"]) >= 4
    x_actions = [a for a in rec["deals"][0]["actions"] if a["seat"] == 0]
    assert x_actions == [{"seat": 0, "action": "throw-in", "ms": x_actions[0]["ms"], "by": "bot"}]
    assert rec["deals"][0]["outcome"] == "thrown_in"
    assert [(i["kind"], i["seat"], i["deal"]) for i in rec["incidents"]] == [
        ("wrong_request", 0, 1), ("illegal", 0, 1), ("illegal", 0, 1),
    ]  # fmt: skip
    dup, throw, card = (i["detail"] for i in rec["incidents"])
    assert "request '1' was answered already (the pending request is '2')" in dup
    assert "'throw-in'" in throw and "not allowed in the bidding phase" in throw
    assert "strike 1 of 3" in throw and "fallback pass" in throw
    stale = str(card_from_pb(state["stale"]))
    assert f"'play {stale}'" in card and f"{stale} is not in your hand" in card
    assert "strike 2 of 3" in card
    told = streams["x"].rejected()
    assert [(t.request_id, t.incident, t.strikes) for t in told] == [
        ("1", pb.INCIDENT_WRONG_REQUEST, 0), ("2", pb.INCIDENT_ILLEGAL, 1),
        ("3", pb.INCIDENT_ILLEGAL, 2),
    ]  # fmt: skip
    assert all(t.match_id == "m1" and t.legal_actions for t in told)
    assert not streams["a"].rejected() and not streams["b"].rejected()
    assert rec["forfeits"] == [] and rec["wrong_requests"] == [1, 0, 0]
    _replays(rec)


# ------------------------------------------------------------- one bot at three tables


def _inner(msg: pb.ServerMessage) -> list[pb.ServerMessage]:
    """A message as the bot reads it: a ``Batch``'s messages one by one, else itself."""
    if msg.HasField("batch"):
        assert len(msg.batch.messages) <= 64 and not msg.events
        assert not any(m.HasField("batch") for m in msg.batch.messages)
        return list(msg.batch.messages)
    return [msg]


async def _play_call(port: int, token: str, features: tuple[str, ...] = ("batch",)) -> Any:
    """A ``Play`` call that said Hello (asking for ``features``) and read its Welcome."""
    from arena.v1 import arena_pb2_grpc as pb_grpc

    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, features=features)))
    welcome = await call.read()
    assert welcome.WhichOneof("kind") == "welcome", welcome
    assert list(welcome.welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
    return channel, call


def test_one_bot_at_three_tables_answering_batches_in_part_harms_only_its_seats() -> None:
    """x sits at three tables at once (m1, m2, m3, each with two honest bots) and asks for
    batches. It answers what it has read in one ``DecisionBatch`` in reverse order, its first
    m2 answer twice (the copy names m1: request ids count each seat's requests, so it often
    names m1's pending request, where it is x's answer if legal there, a strike if not, or
    refused), never answers m3 (timeouts, then a forfeit by strikes), and midway drops its
    stream with requests pending at m1 and m2, then comes back on a new one. Every incident
    is x's, on its own seats; m1 and m2 each count the drop once and resume x's pending
    request (the same id, asked again); the honest bots are told nothing; the stream is
    never cut for flooding; every record replays."""
    ref = Referee(RefereeConfig(decision_ms=2000, time_bank_ms=0, max_strikes=2,
                                reconnect_grace_s=30))  # fmt: skip
    honest = ("a1", "a2", "b1", "b2", "c1", "c2")
    seen: dict[str, list[pb.ServerMessage]] = {"first": [], "second": []}
    dropped_with: dict[str, str] = {}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        _decide(ref, bot, r)

    async def x_bot(port: int) -> None:
        ended: set[str] = set()
        pending: dict[str, pb.DecisionRequest] = {}
        asked = 0
        copied = False  # (once: two copies struck at m1 could forfeit it before the drop)
        for stream in ("first", "second"):
            channel, call = await _play_call(port, "tok-x")
            try:
                while len(ended) < 3:
                    msg = await call.read()
                    assert msg is not grpc.aio.EOF, f"{stream}: {await call.code()}"
                    seen[stream].append(msg)
                    for m in _inner(msg):
                        if m.HasField("decision_request"):
                            r = m.decision_request
                            pending[r.match_id] = r
                            asked += 1
                        elif m.HasField("match_ended"):
                            ended.add(m.match_ended.match_id)
                            pending.pop(m.match_ended.match_id, None)
                    if stream == "first" and asked >= 8:
                        if "m1" in pending and "m2" in pending:
                            for m in ("m1", "m2"):
                                dropped_with[m] = pending.pop(m).request_id
                            break  # dropped with both pending
                        continue  # (holding the answers until both are asked)
                    out = []
                    for mid in ("m1", "m2"):
                        r = pending.pop(mid, None)
                        if r is not None:
                            out.append(pb.Decision(request_id=r.request_id, match_id=mid,
                                                   action=r.view.legal_actions[0]))  # fmt: skip
                            if mid == "m2" and stream == "first" and not copied:
                                copied = True
                                out.append(pb.Decision(request_id=r.request_id, match_id="m1",
                                                       action=r.view.legal_actions[0]))  # fmt: skip
                    if out:
                        out.reverse()
                        await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=out)))
            finally:
                call.cancel()
                await channel.close()
            if stream == "first":
                await until(lambda: ref.session("x").stream is None, "the drop seen")
        assert ended == {"m1", "m2", "m3"}

    async def main() -> tuple[list[dict[str, Any]], dict[str, _Recorded]]:
        streams = _attach(ref, honest, on_request)
        recs = await _with_bot_over_the_wire(ref, "x", x_bot, [
            ("m1", 1, ["x", "a1", "a2"]), ("m2", 2, ["b1", "x", "b2"]),
            ("m3", 3, ["c1", "c2", "x"])])  # fmt: skip
        return recs, streams

    (m1, m2, m3), streams = asyncio.run(main())
    for rec, x in ((m1, 0), (m2, 1), (m3, 2)):
        assert {i["seat"] for i in rec["incidents"]} == {x}, rec["incidents"]
        kinds = [i["kind"] for i in rec["incidents"]]
        assert kinds.count("disconnect") == 1 == rec["disconnects"][x], rec["incidents"]
        assert rec["wrong_requests"][x] == kinds.count("wrong_request")
        assert sum(rec["wrong_requests"]) == rec["wrong_requests"][x]
        _replays(rec)
    # m3, never answered: its two timeouts, then the forfeit; m2 was answered on time
    assert [i["kind"] for i in m3["incidents"] if i["kind"] != "disconnect"] == [
        "timeout", "timeout", "forfeit"]  # fmt: skip
    assert m3["forfeits"] == [2] and m1["forfeits"] == m2["forfeits"] == []
    assert [i["kind"] for i in m2["incidents"]] == ["disconnect"]
    # (m2's answers copied to m1: answers there, strikes, or refused, each said to x)
    for n in honest:
        assert not streams[n].rejected()
    # Back on a new stream: every table resumed, and the requests pending at the drop asked
    # again under their ids.
    again = [m for msg in seen["second"] for m in _inner(msg)]
    resumed = [m.match_started for m in again if m.HasField("match_started")]
    assert {(s.match_id, s.resumed) for s in resumed} == {("m1", True), ("m2", True),
                                                          ("m3", True)}  # fmt: skip
    first_asked: dict[str, str] = {}
    for m in again:
        if m.HasField("decision_request"):
            first_asked.setdefault(m.decision_request.match_id, m.decision_request.request_id)
    assert dropped_with and {m: first_asked[m] for m in dropped_with} == dropped_with


# ------------------------------------------------- a token back while its old call lives


def test_a_token_back_while_its_half_closed_call_still_ends_resumes_its_seat() -> None:
    """x half-closes its stream while its request is pending (the referee counts the
    disconnect and ends that call with OK a quarter of a second later) and, before that
    call has ended, opens a new one with the same token. The new stream is welcomed (no
    ALREADY_EXISTS, no ABORTED for the old one), resumes the seat with the pending request
    under its id and the time left, and x's answer there is played as x's. The old call
    still ends with OK after what was queued on it; one disconnect in the record."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, reconnect_grace_s=30))
    result: dict[str, Any] = {}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        _decide(ref, bot, r)

    async def x_bot(port: int) -> None:
        ch1, old = await _play_call(port, "tok-x", ())
        first: pb.DecisionRequest | None = None
        while first is None:
            for m in _inner(await old.read()):
                if m.HasField("decision_request"):
                    first = m.decision_request
        await old.done_writing()  # half-closed, still reading
        session = ref.session("x")
        await until(lambda: session.stream is None, "the half-close seen")
        ch2, new = await _play_call(port, "tok-x", ())
        result["old_open"] = not old.done()  # (its status not there yet: within the settle)
        again: list[pb.ServerMessage] = []
        while True:
            msg = await new.read()
            again.append(msg)
            if msg.HasField("decision_request"):
                break
        r = msg.decision_request
        result["again"] = again
        result["first"] = first
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        await new.write(pb.BotMessage(decision=d))
        rest = []
        while (msg := await old.read()) is not grpc.aio.EOF:
            rest.append(msg)
        result["old_code"] = await old.code()
        result["old_rest"] = rest
        while True:  # the rest of the match, answered at once
            msg = await new.read()
            assert msg is not grpc.aio.EOF
            for m in _inner(msg):
                if m.HasField("decision_request"):
                    q = m.decision_request
                    await new.write(pb.BotMessage(decision=pb.Decision(
                        request_id=q.request_id, match_id=q.match_id,
                        action=q.view.legal_actions[0])))  # fmt: skip
            if msg.HasField("match_ended"):
                break
        new.cancel()
        await ch1.close()
        await ch2.close()

    async def main() -> dict[str, Any]:
        _attach(ref, ("a", "b"), on_request)
        (rec,) = await _with_bot_over_the_wire(ref, "x", x_bot, [("m1", 4, ["x", "a", "b"])])
        return rec

    rec = asyncio.run(main())
    assert result["old_open"] and result["old_code"] == grpc.StatusCode.OK
    assert result["old_rest"] == []  # (nothing more was sent on it after the half-close)
    started, asked = result["again"]
    assert started.match_started.resumed and started.match_started.match_id == "m1"
    first, r = result["first"], asked.decision_request
    assert (r.request_id, r.deal_number) == (first.request_id, first.deal_number)
    assert 0 < r.time_limit_ms <= first.time_limit_ms and r.time_bank_ms == 0
    assert r.view == first.view
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0)]
    x_first = next(a for a in rec["deals"][0]["actions"] if a["seat"] == 0 and a["by"] != "forced")
    assert x_first["by"] == "bot"
    assert rec["disconnects"] == [1, 0, 0] and rec["forfeits"] == []
    _replays(rec)


# --------------------------------------------------- Hellos that claim what is not so


async def _refused(port: int, hello: pb.Hello) -> tuple[grpc.StatusCode, str, list[Any]]:
    """A second stream of bot y opened with ``hello``: its status, details and messages."""
    from arena.v1 import arena_pb2_grpc as pb_grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer tok-y"),))
        await call.write(pb.BotMessage(hello=hello))
        got = []
        with contextlib.suppress(grpc.aio.AioRpcError):
            while (msg := await call.read()) is not grpc.aio.EOF:
                got.append(msg)
        return await call.code(), await call.details(), got


def test_hellos_claiming_what_the_bot_does_not_honour_change_nothing_for_others() -> None:
    """y sits at three tables at once. Its Hello lists near misses of "batch" ("Batch",
    "batch ", "batches", ...: unknown names, ignored) and says it will play 1 match: it is
    never sent a ``Batch`` though requests of three tables come together, its answers in a
    ``DecisionBatch`` it never asked about are read (any bot may send one), and the three
    matches a tournament seats it in are played (the lobby alone asks ``matches``); after
    them it is not idle for the lobby. Meanwhile streams of y saying Hello in protocol
    versions 2 and 2^32 − 1 are refused with INVALID_ARGUMENT naming the version, before
    any Welcome: y's playing stream goes on, no disconnect is counted, and its tables'
    honest bots are told nothing."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0))
    honest = ("a1", "a2", "b1", "b2", "c1", "c2")
    near = ("Batch", "BATCH", "batch ", " batch", "batches", "batch\\x00", "")
    out: dict[str, Any] = {"refusals": []}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        _decide(ref, bot, r)

    async def y_bot(port: int) -> None:
        from arena.v1 import arena_pb2_grpc as pb_grpc

        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer tok-y"),))
        hello = pb.Hello(protocol_version=1, features=near, matches=1)
        await call.write(pb.BotMessage(hello=hello))
        got: list[pb.ServerMessage] = []
        ended: set[str] = set()
        while len(ended) < 3:
            msg = await call.read()
            assert msg is not grpc.aio.EOF
            got.append(msg)
            kinds = {m.WhichOneof("kind") for m in got}
            if "decision_request" in kinds and not out["refusals"]:
                for version in (2, 2**32 - 1):
                    h = pb.Hello(protocol_version=version, features=["batch"])
                    out["refusals"].append(await _refused(port, h))
            if msg.HasField("match_ended"):
                ended.add(msg.match_ended.match_id)
            if msg.HasField("decision_request"):
                r = msg.decision_request
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=[d])))
        out["got"] = got
        out["idle_after"] = ref.idle_bots()
        call.cancel()
        await channel.close()

    async def main() -> list[dict[str, Any]]:
        _attach(ref, honest, on_request)
        return await _with_bot_over_the_wire(ref, "y", y_bot, [
            ("m1", 1, ["y", "a1", "a2"]), ("m2", 2, ["b1", "y", "b2"]),
            ("m3", 3, ["c1", "c2", "y"])])  # fmt: skip

    recs = asyncio.run(main())
    for rec in recs:
        assert rec["incidents"] == [] and rec["forfeits"] == [], rec["incidents"]
        assert all(a["by"] != "fallback" for d in rec["deals"] for a in d["actions"])
        _replays(rec)
    got = out["got"]
    assert got[0].HasField("welcome")
    assert list(got[0].welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
    assert not any(m.HasField("batch") for m in got)
    assert sum(m.HasField("decision_request") for m in got) >= 6
    assert [(code, details, msgs) for code, details, msgs in out["refusals"]] == [
        (grpc.StatusCode.INVALID_ARGUMENT,
         f"protocol version {v} is not supported (this referee speaks 1)", [])
        for v in (2, 2**32 - 1)
    ]  # fmt: skip
    assert "y" not in out["idle_after"] and ref.session("y").matches_left == 0


# ------------------------------------------------------ stalls a bot causes on purpose


def test_a_bot_stalling_the_referees_loop_still_times_out_and_costs_the_next_table_nothing() -> (
    None
):
    """The loop-stall meter excuses the referee's stalls from every pending decision, x's
    own too. x, asked, never answers: it makes the referee parse what it can instead —
    stray second Hellos of 200 KiB until its stream is cut for flooding (told
    RESOURCE_EXHAUSTED naming the limit), then a new stream whose Hello carries as many
    ``running`` ids as it may, and so on. Its pending decisions still time out (the stalls it causes
    are bounded by the flood and reconnect limits, so they only move its deadline on by
    what they cost), each charged its limit, and it forfeits by strikes; the honest seats
    of its table and of a table next door are charged nothing and told nothing."""
    ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=0, max_strikes=2,
                                reconnect_grace_s=30))  # fmt: skip
    honest = ("a", "b", "c", "d", "e")
    stray = pb.BotMessage(hello=pb.Hello(running=["r" * 100] * 2000))  # ~200 KiB
    # (A MiB of one-letter ids before round 49; now the most a Hello may hold: 1,024 of 256.)
    big_hello = pb.Hello(protocol_version=1, running=["r" * 256] * 1024)  # ~260 KiB
    assert 200_000 < stray.ByteSize() < 220_000 and 260_000 < big_hello.ByteSize() < 1 << 20
    told: list[tuple[grpc.StatusCode, str]] = []

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        _decide(ref, bot, r)

    async def x_bot(port: int) -> None:
        from arena.v1 import arena_pb2_grpc as pb_grpc

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            while True:  # (until the matches are over: cancelled then)
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-x"),))  # fmt: skip
                try:
                    await call.write(pb.BotMessage(hello=big_hello))
                    while True:
                        msg = await call.read()
                        if msg is grpc.aio.EOF:
                            break
                        if msg.HasField("decision_request"):
                            for _ in range(8):
                                await call.write(stray)
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    pass  # (a write after the referee's end: the status below says why)
                told.append((await call.code(), await call.details()))
                if told[-1][0] not in (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                       grpc.StatusCode.INTERNAL):  # fmt: skip
                    break  # (INTERNAL: its own write raced the status; retried, as the SDK does)
                metadata = await call.trailing_metadata() or ()
                wait = [int(v) for k, v in metadata if k == "retry-after-ms"]
                if wait:  # (reconnecting too often: wait as told)
                    await asyncio.sleep(wait[0] / 1000)

    async def main() -> list[dict[str, Any]]:
        streams = _attach(ref, honest, on_request)
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            bot = asyncio.create_task(x_bot(port))
            await until(lambda: ref.session("x").connected, "x connected")
            recs = await asyncio.gather(
                ref.run_match("m1", ONE_DEAL, 5, ["x", "a", "b"]),
                ref.run_match("m2", ONE_DEAL, 6, ["c", "d", "e"]),
            )
            bot.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await bot
            session = ref.session("x")  # (none of its calls is left open in gRPC)
            await until(lambda: session.open_calls == 0 and session.stream is None, "calls")
        finally:
            await ref.end_streams()
            await server.stop(0.5)
        for n in honest:
            assert not streams[n].rejected()
        return list(recs)

    m1, m2 = asyncio.run(main())
    assert m2["incidents"] == [] and m2["forfeits"] == []
    assert {i["seat"] for i in m1["incidents"]} == {0}
    kinds = [i["kind"] for i in m1["incidents"] if i["kind"] != "disconnect"]
    assert kinds == ["timeout", "timeout", "forfeit"], m1["incidents"]
    x_timed = [a["ms"] for d in m1["deals"] for a in d["actions"]
               if a["seat"] == 0 and a["by"] == "fallback"][:2]  # fmt: skip
    assert x_timed == [300, 300]
    flooded = [d for c, d in told if c == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert flooded and all("messages answering no pending request" in d or "wait" in d
                           for d in flooded)  # fmt: skip
    for rec in (m1, m2):
        _replays(rec)


# ------------------------------------------------------------------------------ fixed


def test_the_loop_stall_meter_lets_its_event_loop_go() -> None:
    """Defect: the stall meter of a loop (``loop_lag``), kept in a ``WeakKeyDictionary``
    by its loop so as to be forgotten with it, held that loop itself (and its tick's timer
    handle did too): no loop that had ever timed a decision was freed, some 3 KB a loop
    (``run_tournament``, or any library use, once per ``asyncio.run``). Now each loop that
    ran a match is freed when it ends, its meter with it."""
    from arena.referee import lag as lag_mod

    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def one_match() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        ref = Referee(RefereeConfig(decision_ms=5_000))
        _attach(ref, ("a", "b", "c"), lambda bot, r: _decide(ref, bot, r))
        rec = await ref.run_match("m1", ONE_DEAL, 1, ["a", "b", "c"])
        assert rec["incidents"] == []

    for _ in range(3):
        asyncio.run(one_match())
    gc.collect()
    assert [r() for r in loops] == [None, None, None]
    # (loops that served gRPC calls stay bound to grpc.aio's completion queue: gRPC's)
    assert not [lag for loop, lag in lag_mod._LAGS.items() if lag._loop() is not loop]


class _Clock:
    """The running loop's clock: real time plus ``offset``, which a test moves on to
    simulate the loop being held up that long (as tests/arena/test_deadline_fairness_round33
    does)."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self._real = loop.time
        self.offset = 0.0
        loop.time = self.time  # type: ignore[method-assign]

    def time(self) -> float:
        return self._real() + self.offset


def test_the_referees_stalls_are_not_a_bots_grace_period() -> None:
    """Defect: the loop's stalls were excused from a decision's time (round 33) but not from
    the grace period of a bot that was away: x, its stream lost (grace 5 s), was back while
    the referee's loop was held up 10 s (a slow disk, other tables' work: gRPC had its new
    call, the handler had not run yet), and the grace's timer, due during the stall, ran
    first: x forfeited its seat though it was back in time, and the resumed seat said
    ``forfeited``. Now the grace moves on by the loop's stalls, as a decision does: x
    resumes its seat and answers; one disconnect, no forfeit."""
    ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=5))
    out: dict[str, Any] = {}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot != "x" or "back" in out:
            _decide(ref, bot, r)
            return
        # x's stream is lost as it is asked; the loop is then held up 10 s, and x's new
        # stream is taken in a few turns of the loop after it (its Hello read, its handler
        # run), as the loop's work goes on in order.
        session = ref.session("x")
        session.detach(session.stream, 5, "stream closed")  # type: ignore[arg-type]

        def stall() -> None:
            out["clock"].offset += 10.0
            loop.call_soon(loop.call_soon, loop.call_soon, back)

        def back() -> None:
            out["back"] = _Recorded("x", on_request)
            session.attach(out["back"])

        loop = asyncio.get_running_loop()
        loop.call_soon(stall)

    async def main() -> dict[str, Any]:
        out["clock"] = _Clock()
        _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", ONE_DEAL, 4, ["x", "a", "b"])

    rec = asyncio.run(main())
    back = out["back"].got
    started = [m.match_started for m in back if m.HasField("match_started")]
    assert [(s.resumed, s.forfeited) for s in started] == [(True, False)]
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0)]
    assert rec["forfeits"] == []
    x_first = next(a for a in rec["deals"][0]["actions"] if a["seat"] == 0 and a["by"] != "forced")
    assert x_first["by"] == "bot"
    _replays(rec)


def test_a_decision_a_forfeit_cut_short_is_timed_less_the_loops_stalls() -> None:
    """Defect: the record's ``ms`` of a decision cut short by a forfeit (the bot away past
    its grace while asked) was all the time since the request, the loop's stalls included,
    and counted when the match task next ran: every other ``ms`` is the bot's time less the
    referee's stalls (docs/referee.md). Here the loop is held up 30 s while x, gone as it
    was asked, has a grace of 0.2 s: the stall is not its time (neither the grace's nor the
    decision's), the forfeit comes once the grace has run, and the fallback played for it
    is timed at what the referee waited, not the 30 s."""
    ref = Referee(RefereeConfig(decision_ms=120_000, time_bank_ms=0, reconnect_grace_s=0.2))
    out: dict[str, Any] = {}

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot != "x":
            _decide(ref, bot, r)
        elif "gone" not in out:
            out["gone"] = True
            session = ref.session("x")
            session.detach(session.stream, 0.2, "stream closed")  # type: ignore[arg-type]
            asyncio.get_running_loop().call_soon(stall)

    def stall() -> None:
        out["clock"].offset += 30.0

    async def main() -> dict[str, Any]:
        out["clock"] = _Clock()
        _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", ONE_DEAL, 4, ["x", "a", "b"])

    rec = asyncio.run(main())
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0), ("forfeit", 0)]
    assert "disconnected for more than 0.2 s" in rec["incidents"][1]["detail"]
    x_first = next(a for a in rec["deals"][0]["actions"] if a["seat"] == 0 and a["by"] != "forced")
    assert x_first["by"] == "fallback"
    assert x_first["ms"] < 30_000, x_first  # (the 0.2 s of grace and the loop's latency)
    _replays(rec)


def test_answers_written_to_two_tables_as_the_stream_is_reset_count_once_each() -> None:
    """x sits at two tables; five times, once both have asked it, it writes one
    ``DecisionBatch`` answering both and resets its stream at once (the answers may or may
    not be read before the reset), then comes back on a new stream, where what is still
    pending is asked again and answered. Each answer counts once at its table: read before
    the reset, it is played and not asked again; lost with the reset (or read after the
    new stream took over: the old one's word no longer counts), it is asked again under the
    same id. So every table records x's actions as its own (no strike, no timeout, no
    wrong request), one disconnect per reset, and replays."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, reconnect_grace_s=30))
    resets = 5

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        _decide(ref, bot, r)

    async def x_bot(port: int) -> None:
        ended: set[str] = set()
        dropped = 0
        while len(ended) < 2:
            channel, call = await _play_call(port, "tok-x")
            pending: dict[str, pb.DecisionRequest] = {}
            try:
                while len(ended) < 2:
                    msg = await call.read()
                    assert msg is not grpc.aio.EOF
                    for m in _inner(msg):
                        if m.HasField("decision_request"):
                            pending[m.decision_request.match_id] = m.decision_request
                        elif m.HasField("match_ended"):
                            ended.add(m.match_ended.match_id)
                            pending.pop(m.match_ended.match_id, None)
                    both = dropped < resets and len(pending) == 2
                    if both or (dropped >= resets and pending):
                        batch = pb.DecisionBatch(decisions=[
                            pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=r.view.legal_actions[0])
                            for r in pending.values()
                        ])  # fmt: skip
                        pending.clear()
                        await call.write(pb.BotMessage(decisions=batch))
                        if both:
                            dropped += 1
                            break  # reset at once, the answers just written
            finally:
                call.cancel()
                await channel.close()
            await until(lambda: ref.session("x").stream is None, "the reset seen")
        assert dropped == resets

    async def main() -> list[dict[str, Any]]:
        _attach(ref, ("a1", "a2", "b1", "b2"), on_request)
        return await _with_bot_over_the_wire(ref, "x", x_bot, [
            ("m1", 7, ["x", "a1", "a2"]), ("m2", 8, ["b1", "b2", "x"])])  # fmt: skip

    for rec, x in zip(asyncio.run(main()), (0, 2), strict=True):
        assert {i["kind"] for i in rec["incidents"]} == {"disconnect"}, rec["incidents"]
        assert {i["seat"] for i in rec["incidents"]} == {x}
        assert rec["disconnects"][x] == resets and rec["wrong_requests"] == [0, 0, 0]
        mine = [a["by"] for d in rec["deals"] for a in d["actions"] if a["seat"] == x]
        assert set(mine) <= {"bot", "forced"} and "bot" in mine
        _replays(rec)
