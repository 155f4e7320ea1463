"""Random protobuf messages against the referee's servicer (``ArenaServicer.Play``).

The servicer runs exactly as under gRPC, but its ``context`` is an in-memory fake, so each
hypothesis example is a whole match in a few milliseconds: three bots stream into a real
:class:`~arena.referee.Referee`; two answer honestly, and at every decision request of any
seat the fuzzed bot first sends hypothesis-drawn messages — decisions naming the pending,
a stale, a future, another seat's or a random request, this or another match, with legal,
illegal, malformed or random actions (random ``Action`` bytes too), second ``Hello``s and
empty messages.

Checked for every message: the servicer never raises; a message that is not the answer to
the fuzzed seat's pending request changes nothing in the game (record, strikes) and, if it
is a ``Decision``, is refused with ``DecisionRejected(INCIDENT_WRONG_REQUEST)``; an answer
to the pending request is applied if legal, else the fallback is played with one strike and
a ``DecisionRejected`` of the right kind. Every match ends and its record replays.
A second test fuzzes what comes before ``Welcome``: metadata (tokens) and first messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.protocol import MalformedActionError, action_from_pb, action_to_pb
from arena.referee import Referee, RefereeConfig
from arena.referee.servicer import ArenaServicer
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, replay
from engine.actions import Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import Card

RULESET = dataclasses.replace(PRESETS["classic"], max_deals=1)
MATCH = "fz-m"
NAMES = ["fz", "h1", "h2"]


class Aborted(Exception):
    """What ``context.abort`` raises (grpc.aio raises its own, internal, exception)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


class FakeContext:
    """The part of ``grpc.aio.ServicerContext`` the servicer uses, in memory."""

    def __init__(self, metadata: tuple[tuple[str, str], ...], name: str) -> None:
        self._metadata = metadata
        self.name = name
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.sent: list[pb.ServerMessage] = []
        self.idle = asyncio.Event()  # set while read() waits on an empty inbox
        self.aborted: Aborted | None = None
        self.on_write: Any = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return f"fuzz:{self.name}"

    async def read(self) -> Any:
        if self.inbox.empty():
            self.idle.set()
        msg = await self.inbox.get()
        self.idle.clear()
        return msg

    def add_done_callback(self, callback: Any) -> None:
        pass  # (gRPC would call it when the call ends; one call per bot here)

    async def send_initial_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
        pass  # (the call's headers: the referee sends them before its first message)

    async def write(self, msg: pb.ServerMessage | bytes) -> None:
        # (bytes: a request as its wire bytes; what a client parses)
        msg = pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg
        self.sent.append(msg)
        if self.on_write is not None:
            self.on_write(self, msg)

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.aborted = Aborted(code, details)
        raise self.aborted

    # The referee ends a welcomed stream by setting the status and returning (an abort
    # could race its writer, see core._Refusal): recorded like an abort.
    def set_code(self, code: grpc.StatusCode) -> None:
        self.aborted = Aborted(code, self.aborted.details if self.aborted else "")

    def set_details(self, details: str) -> None:
        code = self.aborted.code if self.aborted else grpc.StatusCode.UNKNOWN
        self.aborted = Aborted(code, details)


def _hello(name: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1, client="fuzz"))


# ----------------------------------------------------------------------------- strategies

cards = st.sampled_from(list(Card))
engine_actions = st.one_of(
    st.builds(Bid, st.integers(min_value=0, max_value=400)),
    st.just(Pass()),
    st.builds(Give, cards, st.integers(min_value=0, max_value=4)),
    st.builds(Contract, st.integers(min_value=0, max_value=400)),
    st.just(Concede()),
    st.just(ThrowIn()),
    st.builds(Play, cards, st.booleans()),
)


def _raw_action(kind: int, a: int, b: int, flag: bool) -> pb.Action:
    """An ``Action`` with any field values (proto3 enums are open: out-of-range ints too)."""
    out = pb.Action()
    if kind == 0:
        out.bid.amount = a % 2**32
    elif kind == 1:
        getattr(out, "pass").SetInParent()
    elif kind == 2:
        out.give.card.suit = a  # type: ignore[assignment]
        out.give.card.rank = b  # type: ignore[assignment]
        out.give.to_seat = abs(b) % 2**32
    elif kind == 3:
        out.contract.amount = abs(a) % 2**32
    elif kind == 4:
        out.concede.SetInParent()
    elif kind == 5:
        out.throw_in.SetInParent()
    elif kind == 6:
        out.play.card.suit = a  # type: ignore[assignment]
        out.play.card.rank = b  # type: ignore[assignment]
        out.play.declare = flag
    elif kind == 7:
        out.play.declare = flag  # a play without a card
    return out  # kind 8: no kind set at all


def _parsed_action(data: bytes) -> pb.Action:
    try:
        return pb.Action.FromString(data)
    except Exception:  # not a message: send the empty Action instead
        return pb.Action()


small_int = st.integers(min_value=-(2**31), max_value=2**31 - 1)
actions = st.one_of(
    st.just("legal"),
    engine_actions.map(action_to_pb),
    st.builds(
        _raw_action,
        st.integers(0, 8),
        st.integers(-3, 9) | small_int,
        st.integers(-3, 9) | small_int,
        st.booleans(),
    ),
    st.binary(max_size=40).map(_parsed_action),
)
request_ids = st.one_of(
    st.sampled_from(["pending", "pending", "previous", "next", "other-seat", ""]),
    st.text(max_size=10),
)
match_ids = st.one_of(st.sampled_from(["this", "this", "this", ""]), st.text(max_size=10))
messages = st.one_of(
    st.tuples(st.just("decision"), request_ids, match_ids, actions),
    # the same decision alone in a DecisionBatch: it must be handled exactly the same
    st.tuples(st.just("batch"), request_ids, match_ids, actions),
    st.tuples(st.just("hello"), st.text(max_size=10), st.integers(0, 3)),
    st.tuples(st.just("empty")),
    st.tuples(st.just("bytes"), st.binary(max_size=60)),
)
#: One batch of messages per decision request of the match (any seat), until they run out.
batches = st.lists(st.lists(messages, max_size=4), min_size=1, max_size=12)


# ----------------------------------------------------------------------------- the driver


@dataclasses.dataclass
class Req:
    seat_name: str
    request_id: str
    match_id: str
    legal: list[pb.Action]


def _build(spec: tuple[Any, ...], req: Req, fz_pending: str | None, last_fz: str) -> Any:
    kind = spec[0]
    if kind == "empty":
        return pb.BotMessage()
    if kind == "hello":
        return pb.BotMessage(hello=pb.Hello(bot_name=spec[1], protocol_version=spec[2]))
    if kind == "bytes":
        try:
            return pb.BotMessage.FromString(spec[1])
        except Exception:
            return pb.BotMessage()
    _, rid_spec, mid_spec, action_spec = spec
    base = fz_pending or last_fz or "1"
    rid = {
        "pending": base,
        "previous": str(int(base) - 1) if base.isdigit() else base + "-",
        "next": str(int(base) + 1) if base.isdigit() else base + "+",
        "other-seat": req.request_id,
    }.get(rid_spec, rid_spec)
    mid = {"this": MATCH}.get(mid_spec, mid_spec)
    legal_one = req.legal[0] if req.legal else pb.Action()
    action = legal_one if action_spec == "legal" else action_spec
    d = pb.Decision(request_id=rid, match_id=mid, action=action)
    if kind == "batch":
        return pb.BotMessage(decisions=pb.DecisionBatch(decisions=[d]))
    return pb.BotMessage(decision=d)


async def _settle(ctx: FakeContext) -> None:
    """Until the servicer has taken the message and the match has acted on it."""
    for _ in range(200):
        await asyncio.sleep(0)
        if ctx.inbox.empty() and ctx.idle.is_set():
            break
    for _ in range(6):
        await asyncio.sleep(0)


async def _fuzz_match(seed: int, plan: list[list[tuple[Any, ...]]], tally: Counter[str]) -> None:
    ref = Referee(RefereeConfig(decision_ms=30_000, time_bank_ms=0, reconnect_grace_s=60))
    servicer = ArenaServicer(ref)
    requests: asyncio.Queue[Req] = asyncio.Queue()

    def on_write(ctx: FakeContext, msg: pb.ServerMessage) -> None:
        if msg.WhichOneof("kind") == "decision_request":
            r = msg.decision_request
            requests.put_nowait(Req(ctx.name, r.request_id, r.match_id, list(r.view.legal_actions)))

    ctxs: dict[str, FakeContext] = {}
    streams = []
    for n in NAMES:
        ref.add_bot(n, f"tok-{n}")
        ctx = FakeContext((("authorization", f"Bearer tok-{n}"),), n)
        ctx.on_write = on_write
        ctx.inbox.put_nowait(_hello(n))
        ctxs[n] = ctx
        streams.append(asyncio.create_task(servicer.Play(None, ctx)))
    assert await ref.wait_for_bots(NAMES, 5) == []
    match = asyncio.create_task(ref.run_match(MATCH, RULESET, seed, NAMES))
    fz = ctxs["fz"]
    last_fz = ""
    try:
        while not match.done():
            get = asyncio.create_task(requests.get())
            await asyncio.wait({get, match}, return_when=asyncio.FIRST_COMPLETED, timeout=10)
            if not get.done():
                get.cancel()
                assert match.done(), "the match stalled"
                break
            req = get.result()
            runner = ref._matches.get(MATCH)
            if runner is None:
                break
            if req.seat_name == "fz":
                last_fz = req.request_id
            for spec in plan.pop(0) if plan else []:
                st0 = runner.seats[0]
                pending = st0.pending.request_id if st0.pending is not None else None
                msg = _build(spec, req, pending, last_fz)
                await _check_one(runner, fz, msg, pending, tally)
            # then answer properly, if the request is still waiting
            st = runner.seats[NAMES.index(req.seat_name)]
            if st.pending is not None and st.pending.request_id == req.request_id:
                d = pb.Decision(request_id=req.request_id, match_id=req.match_id,
                                action=req.legal[0])  # fmt: skip
                ctxs[req.seat_name].inbox.put_nowait(pb.BotMessage(decision=d))
                await _settle(ctxs[req.seat_name])
        rec = await asyncio.wait_for(match, 10)
    finally:
        for ctx in ctxs.values():
            ctx.inbox.put_nowait(grpc.aio.EOF)
        done, _ = await asyncio.wait(streams, timeout=5)
        for t in streams:
            t.cancel()
        match.cancel()
        with contextlib.suppress(BaseException):
            await match
    for t in done:
        assert t.exception() is None, f"the servicer raised: {t.exception()!r}"
    assert rec["result"]["places"] and len(rec["result"]["scores"]) == 3
    clean = rec if not rec["forfeits"] else {**rec, "result": rec["rules_result"]}
    assert list(replay(clean).scores) == rec["result"]["scores"]
    assert all(inc["seat"] == 0 for inc in rec["incidents"]), "only the fuzzed seat is at fault"
    tally["servicer: matches played under fuzz"] += 1


async def _check_one(
    runner: Any, fz: FakeContext, msg: Any, pending: str | None, tally: Counter[str]
) -> None:
    tally["servicer: messages tried"] += 1
    st0 = runner.seats[0]
    before_record = runner.game.record()
    before_actions = sum(len(m) for m in runner._meta)
    before_strikes = st0.strikes
    before_sent = len(fz.sent)
    legal = runner.game.legal_actions()
    kind_in = msg.WhichOneof("kind") if isinstance(msg, pb.BotMessage) else None
    one = list(msg.decisions.decisions) if kind_in == "decisions" else []
    decision = msg.decision if kind_in == "decision" else one[0] if len(one) == 1 else None
    is_answer = (
        decision is not None
        and pending is not None
        and decision.request_id == pending
        and decision.match_id == MATCH
    )
    fz.inbox.put_nowait(msg)
    await _settle(fz)
    new = fz.sent[before_sent:]
    rejections = [m.decision_rejected for m in new if m.WhichOneof("kind") == "decision_rejected"]
    if len(one) > 1 and any(d.request_id == pending and d.match_id == MATCH for d in one):
        tally["servicer: batches answering among others"] += 1  # checked by the match's end
        return
    if not is_answer:
        assert runner.game.record() == before_record, f"state changed by a refused {msg}"
        assert st0.strikes == before_strikes
        if decision is not None:
            assert [r.incident for r in rejections] == [pb.INCIDENT_WRONG_REQUEST], new
            assert rejections[0].message
            tally["servicer: refused as wrong request (state unchanged)"] += 1
        elif one:  # several decisions (from random bytes), none pending: each refused
            assert all(r.incident == pb.INCIDENT_WRONG_REQUEST for r in rejections), new
            assert len(rejections) <= len(one)
            tally["servicer: batches refused (state unchanged)"] += 1
        else:
            assert not rejections
            tally["servicer: non-decisions ignored (state unchanged)"] += 1
        return
    # The answer to the pending request: applied if legal, else fallback + strike.
    meta = [m for deal in runner._meta for m in deal]
    assert len(meta) > before_actions, "the answer was not acted on"
    first = meta[before_actions]
    try:
        assert decision is not None
        action = action_from_pb(decision.action)
        kind = "bot" if action in legal else "illegal"
    except MalformedActionError:
        kind = "malformed"
    if kind == "bot":
        assert first["by"] == "bot" and not rejections
        tally["servicer: legal answers applied"] += 1
    else:
        assert first["by"] == "fallback"
        assert st0.strikes == before_strikes + 1
        want = pb.INCIDENT_ILLEGAL if kind == "illegal" else pb.INCIDENT_MALFORMED
        assert [r.incident for r in rejections] == [want], new
        fallback = action_from_pb(rejections[0].fallback)
        assert fallback in legal
        flat = [a["action"] for d in runner.game.record()["deals"] for a in d["actions"]]
        assert flat[before_actions] == str(fallback), "the fallback named is the one played"
        tally[f"servicer: {kind} answers struck (fallback played)"] += 1


PROFILE: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


def _run(seed: int, plan: list[list[tuple[Any, ...]]], tally: Counter[str]) -> None:
    asyncio.run(_fuzz_match(seed, [list(b) for b in plan], tally))


@settings(max_examples=80, derandomize=True, **PROFILE)
@given(seed=st.integers(0, 2**31), plan=batches)
def test_servicer_fuzz_short(seed: int, plan: list[list[tuple[Any, ...]]], tally: Any) -> None:
    _run(seed, plan, tally)


@pytest.mark.slow
# Long by design (3000 examples): the suite-wide 300 s timeout cut it on a loaded machine,
# and hypothesis then reported the cut as a flaky failure.
@pytest.mark.timeout(1500)
@settings(max_examples=3000, **PROFILE)
@given(seed=st.integers(0, 2**62), plan=batches)
def test_servicer_fuzz_long(seed: int, plan: list[list[tuple[Any, ...]]], tally: Any) -> None:
    _run(seed, plan, tally)


# ----------------------------------------------------------------------------- before Welcome

metadata = st.just([("authorization", "Bearer tok-fz")]) | st.lists(
    st.tuples(
        st.sampled_from(["authorization", "Authorization", "x-token", "auth"]),
        st.one_of(
            st.sampled_from(["Bearer tok-fz", "bearer tok-fz", "Bearer ", "Bearer", "tok-fz",
                             "Basic tok-fz", "Bearer tok-fz extra"]),
            st.text(max_size=20).map(lambda t: "Bearer " + t),
        ),
    ),
    max_size=3,
)  # fmt: skip
first_messages = st.one_of(
    st.tuples(st.just("hello"), st.integers(0, 3)),
    st.tuples(st.just("decision")),
    st.tuples(st.just("empty")),
    st.tuples(st.just("eof")),
    st.tuples(st.just("bytes"), st.binary(max_size=40)),
)


async def _first_contact(md: list[tuple[str, str]], first: tuple[Any, ...]) -> tuple[str, bool]:
    ref = Referee(RefereeConfig())
    ref.add_bot("fz", "tok-fz")
    ctx = FakeContext(tuple(md), "fz")
    kind = first[0]
    if kind == "hello":
        ctx.inbox.put_nowait(pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=first[1])))
    elif kind == "decision":
        ctx.inbox.put_nowait(pb.BotMessage(decision=pb.Decision(request_id="1", match_id="m")))
    elif kind == "empty":
        ctx.inbox.put_nowait(pb.BotMessage())
    elif kind == "bytes":
        try:
            ctx.inbox.put_nowait(pb.BotMessage.FromString(first[1]))
        except Exception:
            ctx.inbox.put_nowait(pb.BotMessage())
    else:
        ctx.inbox.put_nowait(grpc.aio.EOF)
    task = asyncio.create_task(ArenaServicer(ref).Play(None, ctx))
    for _ in range(50):
        await asyncio.sleep(0)
        if task.done() or ref.connected_bots():
            break
    welcomed = bool(ref.connected_bots())
    ctx.inbox.put_nowait(grpc.aio.EOF)
    with contextlib.suppress(Aborted):
        await asyncio.wait_for(task, 5)
    outcome = ctx.aborted.code.name if ctx.aborted else ("OK" if welcomed else "CLOSED")
    assert not ref.connected_bots(), "the session is released when the stream ends"
    return outcome, welcomed


@settings(max_examples=200, derandomize=True, **PROFILE)
@given(md=metadata, first=first_messages)
def test_before_welcome_fuzz(md: list[tuple[str, str]], first: tuple[Any, ...], tally: Any) -> None:
    tally["servicer: stream openings tried"] += 1
    outcome, welcomed = asyncio.run(_first_contact(md, first))
    token_ok = any(k.lower() == "authorization" and v.strip().lower().startswith("bearer ")
                   and v.strip()[7:].strip() == "tok-fz" for k, v in md)  # fmt: skip
    auth = next((v for k, v in md if k.lower() == "authorization"), None)
    hello_ok = first[0] == "hello" and first[1] in (0, 1)
    if welcomed:
        assert token_ok and hello_ok and outcome == "OK"
        tally["servicer: openings welcomed"] += 1
    else:
        assert outcome in ("UNAUTHENTICATED", "INVALID_ARGUMENT"), outcome
        if auth is None or not token_ok:
            assert outcome == "UNAUTHENTICATED" or token_ok
        tally["servicer: openings refused"] += 1
