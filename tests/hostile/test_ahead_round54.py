"""Hostile round 54: ``Decision.ahead`` (the "ahead" feature) from new angles, over a real
gRPC referee (port 0), against a raw client ``x`` (the generated stubs only) and two honest
bots in process that always pass, so that ``x``, bidding, is the declarer of every deal and
has answers ahead to give (its second give, its contract, its lead).

- What x is asked must not tell it anything its views do not: a tournament's time limit
  reached while x decides caps the match's deals in the engine's ruleset, which no view on
  the wire carries (a view's ruleset is ``MatchStarted``'s); comparing the whole engine
  view, the referee refused x's answers ahead then and asked, telling x that this deal
  was its match's last.
- A bot whose token is revoked as its answer with answers ahead is read (``remove_bot``,
  before the match plays it): the answer read plays, nothing chosen ahead does.
- Features changed on each resume (``HOPS``: "ahead", "batch", "results_once", "deal_once"
  in turn on and off, a hop before an answer and one racing it): answers ahead are played
  only from a stream that asked for them; each stream's events come in ``seq`` order with
  no gap and its views rebuild from that stream's own; the match is the plain one.
- An answer with answers ahead read past its deadline (before its timer ran): a timeout
  whose fallback is x's own choice, and still nothing chosen ahead is played.
- Slow loris: x answers ahead, then reads nothing more: its answers ahead play, then it
  times out and forfeits as a silent bot does; the match ends, the honest seats untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.protocol import action_from_pb, action_to_pb, view_from_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.match import MatchRunner, SeatState
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, PlayerView, own_next_view
from tests.support.harness import attach_in_process, no_error_logged  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

RULES = dataclasses.replace(PRESETS["classic"], max_deals=3)
#: Long enough never to be reached on a loaded machine: nothing here is timed.
SLOW = {"decision_ms": 60_000, "time_bank_ms": 60_000}


def honest_ahead(view: PlayerView, chosen: pb.Action, most: int = 3) -> list[pb.Action]:
    """The first legal action of each view ``own_next_view`` foresees after ``chosen``."""
    out: list[pb.Action] = []
    action = action_from_pb(chosen)
    while (nxt := own_next_view(view, action)) is not None and len(out) < most:
        view, action = nxt, nxt.legal_actions[0]
        out.append(action_to_pb(action))
    return out


def first_or_bid(view: pb.PlayerView) -> pb.Action:
    """x's choice: the lowest bid while it may bid, else the first legal action."""
    return view.legal_actions[0]


def pass_always(ref: Referee) -> Callable[[str, pb.DecisionRequest], None]:
    """An in-process bot's answer: pass when it may, else the first legal action."""

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        legal = list(r.view.legal_actions)
        pick = next((a for a in legal if a.HasField("pass")), legal[0])
        ref.on_message(ref.session(bot), pb.BotMessage(decision=pb.Decision(
            request_id=r.request_id, match_id=r.match_id, action=pick)))  # fmt: skip

    return answer


@dataclasses.dataclass
class Seen:
    """What x read: each request as (deal, phase, request id), and the match's end."""

    requests: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)
    rejected: list[pb.DecisionRejected] = dataclasses.field(default_factory=list)
    ended: pb.MatchEnded | None = None
    code: grpc.StatusCode | None = None


Decide = Callable[[pb.DecisionRequest, PlayerView], list[pb.BotMessage]]


def plain_ahead(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
    d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=first_or_bid(r.view))
    d.ahead.extend(honest_ahead(view, d.action))
    return [pb.BotMessage(decision=d)]


async def raw_x(port: int, seen: Seen, decide: Decide, features: tuple[str, ...] = ("ahead",),
                token: str = "tok-x") -> None:  # fmt: skip
    """x: one stream; answers each request with ``decide``'s messages; stops at the end
    (or when the referee ends its call: ``seen.code``)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="x", features=features)))
        try:
            await _read_x(call, seen, decide)
        except grpc.aio.AioRpcError as e:
            seen.code = e.code()
        except (grpc.aio.UsageError, asyncio.InvalidStateError):  # a write after the end
            seen.code = await call.code()


async def _read_x(call: Any, seen: Seen, decide: Decide) -> None:
    while (msg := await call.read()) is not grpc.aio.EOF:
        for m in msg.batch.messages if msg.HasField("batch") else [msg]:
            kind = m.WhichOneof("kind")
            if kind == "decision_rejected":
                seen.rejected.append(m.decision_rejected)
            elif kind == "match_ended":
                seen.ended = m.match_ended
                call.cancel()
                return
            elif kind == "decision_request":
                r = m.decision_request
                seen.requests.append((r.deal_number, r.view.phase, r.request_id))
                for out in decide(r, view_from_pb(r.view, RULES)):
                    await call.write(out)
    seen.code = await call.code()


async def _match_with_x(
    decide: Decide, *, time_limit_s: float | None = None, prepare: Any = None, **config: Any
) -> tuple[dict[str, Any], Seen, Referee]:
    ref = Referee(RefereeConfig(**{**SLOW, **config}))
    attach_in_process(ref, ("h1", "h2"), pass_always(ref))
    ref.add_bot("x", "tok-x")
    if prepare is not None:
        prepare(ref)
    server, port = await start_server(ref)
    seen = Seen()
    client = asyncio.create_task(raw_x(port, seen, decide))
    try:
        assert not await ref.wait_for_bots(["x"], 30)
        rec = await ref.run_match("m", RULES, 5, ["h1", "x", "h2"], time_limit_s=time_limit_s)
        await asyncio.wait_for(client, 30)
        return rec, seen, ref
    finally:
        client.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await client
        await ref.end_streams()
        await server.stop(0)


# ---------------------------------------------------------------- the time limit


def _deal0(seen: Seen) -> list[tuple[int, int, str]]:
    return [q for q in seen.requests if q[0] == 0]


def test_a_time_limit_reached_while_x_decides_does_not_show_in_what_it_is_asked() -> None:
    """x answers its first give with its second give, contract and lead ahead. In one run
    the match's time limit is reached while x decides that give (the deal is then the
    match's last); in the other it never is. x is asked the very same requests in that
    deal in both: its answers ahead are played either way."""

    def run(reach: bool) -> tuple[dict[str, Any], Seen]:
        ref_box: list[Referee] = []

        def decide(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
            if reach and r.view.phase == pb.PHASE_PASSING and not r.view.gives:
                runner = ref_box[0]._matches[r.match_id]
                runner._end_at = runner._loop.time()  # the limit: reached as x decides
            return plain_ahead(r, view)

        rec, seen, _ = asyncio.run(
            _match_with_x(decide, time_limit_s=3600.0, prepare=ref_box.append)
        )
        return rec, seen

    limited, seen_limited = run(reach=True)
    free, seen_free = run(reach=False)
    assert limited["time_limit_s"] == 3600.0 and limited["result"]["deals"] == 1
    assert free["result"]["deals"] == 3 and "time_limit_s" not in free
    x = free["players"].index("x")
    gives = [a for a in free["deals"][0]["actions"] if a["seat"] == x and "give" in a["action"]]
    assert len(gives) == 2 and all(a["by"] == "bot" for a in gives)  # x was the declarer
    # Its second give, contract and lead were played from its answer ahead in both runs,
    # and so it was asked nothing more in deal 0 in the run whose limit was reached.
    assert _deal0(seen_limited) == _deal0(seen_free)
    asked_phases = [phase for _, phase, _ in _deal0(seen_free)]
    assert asked_phases.count(pb.PHASE_PASSING) == 1 and pb.PHASE_CONTRACT not in asked_phases
    moves = [(a["seat"], a["action"], a["by"]) for a in limited["deals"][0]["actions"]]
    assert moves == [(a["seat"], a["action"], a["by"]) for a in free["deals"][0]["actions"]]
    assert not limited["incidents"] and not free["incidents"]
    assert not seen_limited.rejected and not seen_free.rejected


# ---------------------------------------------------------------- forfeited meanwhile


def test_answers_ahead_of_a_bot_revoked_right_after_sending_them_are_not_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """x answers its first give with its second give, contract and lead ahead; the organiser
    revokes its token as that answer is read, before the match plays it (``remove_bot``:
    "an organiser revoking a cheater expects it out now"). The give read before plays as
    x's; nothing it chose ahead does: its seat is played by the fallback from there on."""
    ref_box: list[Referee] = []
    revoked: list[str] = []
    on_decision = MatchRunner.on_decision

    def spy(self: MatchRunner, st: SeatState, decision: pb.Decision) -> bool:
        answered = on_decision(self, st, decision)
        if answered and decision.ahead and not revoked:
            revoked.append(decision.request_id)
            assert ref_box[0].remove_bot("x", "caught cheating") == [self.match_id]
        return answered

    monkeypatch.setattr(MatchRunner, "on_decision", spy)
    rec, seen, _ = asyncio.run(_match_with_x(plain_ahead, prepare=ref_box.append))
    assert revoked and seen.code == grpc.StatusCode.UNAUTHENTICATED
    x = rec["players"].index("x")
    mine = [(a["action"], a["by"]) for d in rec["deals"] for a in d["actions"] if a["seat"] == x]
    gives = [i for i, (action, _) in enumerate(mine) if action.startswith("give")]
    first = gives[0]
    assert mine[first][1] == "bot"  # read before the token was revoked
    assert all(by in ("fallback", "forced") for _, by in mine[first + 1 :]), mine[first:]
    assert rec["forfeits"] == [x] and rec["result"]["places"][x] == 3
    assert {(i["seat"], i["kind"]) for i in rec["incidents"]} == {(x, "forfeit")}
    assert rec["result"]["reason"] in ("target", "max_deals")


# ---------------------------------------------------------------- features changed on resume

#: x's streams, in order: the features of each Hello, and how x leaves it for the next
#: (at its first give of deal k, the k-th stream): "before" opens the next stream before
#: answering (the request comes again there, and is answered there); "after" answers, then
#: opens the next at once (its answer, read or dropped with the stream it came on, races
#: the new Hello).
HOPS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ahead", "results_once"), "before"),
    (("batch", "results_once", "deal_once"), "before"),
    (("ahead", "deal_once"), "after"),
    (("batch", "results_once"), ""),
)


@dataclasses.dataclass
class Hopper:
    """x over several streams (``HOPS``), each checked as read: every event of the match
    has the next ``seq`` after the stream's ``MatchStarted`` (no gap, none twice), and
    every view rebuilds from the stream's own last view (``view_from_pb`` refuses one that
    leaves out more than it held)."""

    port: int
    requests: dict[tuple[int, str], list[int]] = dataclasses.field(default_factory=dict)
    omitting: int = 0
    streams: int = 0
    mid: str = ""

    async def open(self, channel: Any, features: tuple[str, ...]) -> Any:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer tok-x"),))
        running = [self.mid] if self.mid else []
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="x", features=features,
                                                      running=running)))  # fmt: skip
        first = await call.read()
        assert first.WhichOneof("kind") == "welcome", first
        self.streams += 1
        return call

    async def play(self) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            hop = 0
            call = await self.open(channel, HOPS[0][0])
            while True:
                call, over = await self._stream(channel, call, hop)
                if over:
                    return
                hop += 1

    async def _stream(self, channel: Any, call: Any, hop: int) -> tuple[Any, bool]:
        """Read ``call`` (x's stream number ``hop``) until x leaves it: the next call, and
        whether the match ended."""
        how = HOPS[hop][1]
        seq = None
        previous: PlayerView | None = None
        while (msg := await call.read()) is not grpc.aio.EOF:
            for m in msg.batch.messages if msg.HasField("batch") else [msg]:
                for e in m.events:
                    assert e.match_id == self.mid and seq is not None, e
                    assert e.seq == seq + 1, (hop, seq, e)
                    seq = e.seq
                kind = m.WhichOneof("kind")
                if kind == "match_started":
                    ms = m.match_started
                    assert ms.resumed == bool(self.mid), ms
                    self.mid, seq = ms.match_id, ms.seq
                    previous = view_from_pb(ms.view, RULES)
                elif kind == "match_ended":
                    call.cancel()
                    return call, True
                elif kind == "decision_request":
                    r = m.decision_request
                    v = r.view
                    self.omitting += bool(v.deal_results_omitted or v.bids_omitted
                                          or v.tricks_omitted)  # fmt: skip
                    view = previous = view_from_pb(v, RULES, previous)
                    self.requests.setdefault((r.deal_number, r.request_id), []).append(v.phase)
                    first_give = v.phase == pb.PHASE_PASSING and not v.gives
                    leave = how and first_give and r.deal_number == hop
                    if leave and how == "before":
                        new = await self.open(channel, HOPS[hop + 1][0])
                        call.cancel()
                        return new, False
                    (answer,) = plain_ahead(r, view)
                    await call.write(answer)
                    if leave:
                        new = await self.open(channel, HOPS[hop + 1][0])
                        call.cancel()
                        return new, False
        raise AssertionError(f"stream {hop} ended before the match: {await call.code()}")


def test_features_changed_on_each_resume_answers_ahead_only_where_asked_for() -> None:
    """x hops streams at its first give of each deal (``HOPS``), sending its answers ahead
    on every stream whatever it agreed. They are played only from a stream whose Hello asked
    for "ahead"; every stream's events and views stay whole and in order; the match is the
    one x plays on one stream without answers ahead, with no incident."""

    async def main() -> tuple[dict[str, Any], Hopper, dict[str, Any]]:
        def without(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=first_or_bid(r.view))  # fmt: skip
            return [pb.BotMessage(decision=d)]

        plain, _, _ = await _match_with_x(without)
        ref = Referee(RefereeConfig(**SLOW))
        attach_in_process(ref, ("h1", "h2"), pass_always(ref))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        x = Hopper(port)
        client = asyncio.create_task(x.play())
        try:
            assert not await ref.wait_for_bots(["x"], 30)
            rec = await ref.run_match("m", RULES, 5, ["h1", "x", "h2"])
            await asyncio.wait_for(client, 30)
            return rec, x, plain
        finally:
            client.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await client
            await ref.end_streams()
            await server.stop(0)

    rec, x, plain = asyncio.run(main())
    assert [(a["seat"], a["action"]) for d in rec["deals"] for a in d["actions"]] == [
        (a["seat"], a["action"]) for d in plain["deals"] for a in d["actions"]
    ]
    assert not rec["incidents"] and rec["result"]["deals"] == 3
    assert x.streams == len(HOPS) and x.omitting > 0  # (the features were at work)
    ids = sorted({int(rid) for _, rid in x.requests})
    assert ids == list(range(1, len(ids) + 1))  # none skipped, asked again or not

    def asked(deal: int, phase: int) -> int:
        return sum(phases[0] == phase for (d, _), phases in x.requests.items() if d == deal)

    # Deal 0: its first give asked on stream 0 (ahead agreed), asked again and answered on
    # stream 1 (not agreed): its second give and contract asked. Deal 1: asked on stream 1,
    # asked again and answered on stream 2 (agreed): played ahead.
    assert (asked(0, pb.PHASE_PASSING), asked(0, pb.PHASE_CONTRACT)) == (2, 1)
    assert (asked(1, pb.PHASE_PASSING), asked(1, pb.PHASE_CONTRACT)) == (1, 0)
    # Deal 2: answered on stream 2 as stream 3 (not agreed) opened: played ahead if that
    # answer was read before the new Hello, else dropped with stream 2, asked again on
    # stream 3 and answered there with its answers ahead refused; both are right.
    assert asked(2, pb.PHASE_PASSING) in (1, 2)
    again = sorted(k[0] for k, phases in x.requests.items() if len(phases) > 1)
    assert again in ([0, 1], [0, 1, 2]), x.requests
    if again == [0, 1]:
        assert (asked(2, pb.PHASE_PASSING), asked(2, pb.PHASE_CONTRACT)) == (1, 0)
    else:
        assert (asked(2, pb.PHASE_PASSING), asked(2, pb.PHASE_CONTRACT)) == (2, 1)


# ---------------------------------------------------------------- at the deadline


def test_answers_ahead_with_an_answer_read_past_its_deadline_are_not_played() -> None:
    """x's answer to its first give, with its answers ahead, is read past its deadline
    (before the deadline's timer ran: the referee's loop was busy). It times out (a strike,
    ``WRONG_REQUEST`` "timed out" for the late answer) and the fallback, the very give x
    chose, is played; x's next decision is then the one it foresaw, and yet its answers
    ahead are not played: they went with the answer that came too late."""
    ref_box: list[Referee] = []

    def decide(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
        if r.view.phase == pb.PHASE_PASSING and not r.view.gives and r.deal_number == 0:
            runner = ref_box[0]._matches[r.match_id]
            p = next(s.pending for s in runner.seats if s.session.name == "x")
            assert p is not None and p.request_id == r.request_id
            p.deadline = runner._loop.time() - 10.0  # it has passed; its timer not yet run
        return plain_ahead(r, view)

    rec, seen, _ = asyncio.run(_match_with_x(decide, prepare=ref_box.append))
    x = rec["players"].index("x")
    late = [rid for d, phase, rid in seen.requests if d == 0 and phase == pb.PHASE_PASSING]
    assert len(late) == 2  # the first give, timed out; the second, asked
    # The late answer refused as it is read, then the timeout's strike as the match goes on.
    assert [(r.request_id, r.incident) for r in seen.rejected] == [
        (late[0], pb.INCIDENT_WRONG_REQUEST),
        (late[0], pb.INCIDENT_TIMEOUT),
    ]
    assert "timed out" in seen.rejected[0].message
    kinds = [(i["seat"], i["kind"]) for i in rec["incidents"]]
    assert kinds == [(x, "wrong_request"), (x, "timeout")]
    mine = [(a["action"], a["by"]) for a in rec["deals"][0]["actions"] if a["seat"] == x]
    gives = [m for m in mine if m[0].startswith("give")]
    assert [by for _, by in gives] == ["fallback", "bot"]
    # The fallback was x's own choice: the very match x plays answering in time.
    in_time, _, _ = asyncio.run(_match_with_x(plain_ahead))
    assert [(a["seat"], a["action"]) for d in rec["deals"] for a in d["actions"]] == [
        (a["seat"], a["action"]) for d in in_time["deals"] for a in d["actions"]
    ]


# ---------------------------------------------------------------- a client that stops reading


def test_a_client_that_stops_reading_after_answering_ahead_is_played_then_timed_out() -> None:
    """Slow loris with answers ahead: x answers its first give with its second give,
    contract and lead ahead, and from then on reads nothing (its call left open). Its
    answers ahead are played as its own (it chose them; nothing needs reading for them),
    then its next requests time out and it forfeits by strikes as any silent bot does; the
    match ends with its result, the honest seats untouched, and x's stream, never read
    again, ends with the arena's stop."""

    async def main() -> tuple[dict[str, Any], list[pb.DecisionRequest], bool]:
        ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=0, max_strikes=2))
        attach_in_process(ref, ("h1", "h2"), pass_always(ref))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        read: list[pb.DecisionRequest] = []
        silent = asyncio.Event()

        async def x() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-x"),)
                )
                await call.write(pb.BotMessage(hello=pb.Hello(bot_name="x", features=["ahead"])))
                while not silent.is_set():
                    msg = await call.read()
                    if msg.WhichOneof("kind") != "decision_request":
                        continue
                    r = msg.decision_request
                    read.append(r)
                    for out in plain_ahead(r, view_from_pb(r.view, RULES)):
                        await call.write(out)
                    if r.view.phase == pb.PHASE_PASSING:
                        silent.set()  # the first give answered: read nothing more
                await asyncio.Event().wait()  # the call open, unread, until cancelled

        client = asyncio.create_task(x())
        try:
            assert not await ref.wait_for_bots(["x"], 30)
            rec = await ref.run_match("m", RULES, 5, ["h1", "x", "h2"])
            connected = ref.session("x").connected
            await ref.end_streams()
            return rec, read, connected
        finally:
            client.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await client
            await server.stop(0)

    rec, read, connected = asyncio.run(main())
    x = rec["players"].index("x")
    assert connected  # not reading is no disconnect; its strikes are what it costs
    assert read[-1].view.phase == pb.PHASE_PASSING and not read[-1].view.gives
    mine = [a for d in rec["deals"] for a in d["actions"] if a["seat"] == x]
    first = next(i for i, a in enumerate(mine) if a["action"].startswith("give"))
    # The give it answered, then its second give, contract and lead, chosen ahead.
    assert [a["by"] for a in mine[first : first + 4]] == ["bot"] * 4
    assert [a["ms"] for a in mine[first + 1 : first + 4]] == [0, 0, 0]
    assert mine[first + 2]["action"].startswith("contract")
    assert all(a["by"] in ("fallback", "forced") for a in mine[first + 4 :])
    kinds = [(i["seat"], i["kind"]) for i in rec["incidents"]]
    assert kinds == [(x, "timeout"), (x, "timeout"), (x, "forfeit")], kinds
    assert rec["forfeits"] == [x] and rec["result"]["reason"] in ("target", "max_deals")
