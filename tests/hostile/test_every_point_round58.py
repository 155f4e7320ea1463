"""Hostile round 58: one fault at EVERY point of a match, systematically.

Earlier rounds put a fault at a few chosen moments (the first decision, mid-trick, the
last one). Here one short real match (``1001-4p``, two deals, a fixed seed) is played
against the real referee (grpc.aio, port 0) with a raw client ``x`` (the generated stubs
only) and three honest in-process bots; the fault-free match gives the requests x is
asked, and then, for every index ``k`` of them, one match per fault is played with that
one fault at ``k``, on the request's side (instead of answering it) or on the answer's
(with or right after it):

- ``reset-request`` / ``reset-answer``: x cancels its call (a reset, to the referee) before
  answering ``k``, or in the step it writes its answer; once the referee has seen it go it
  comes back on a new stream (``Hello.running``) and plays on; ``reset-fast`` /
  ``reset-fast-answer``: it comes back at once (its Hello may come before the referee
  hears of the reset); ``half-close`` / ``half-close-answer``: it half-closes instead,
  reads on to the status, and comes back;
- ``gone``: the same reset before answering ``k``, and x never comes back;
- ``late``: x answers ``k`` only once the referee has said it timed out; ``reset-late``:
  it resets at ``k``, comes back, and answers ``k`` so (or at its next request, if ``k``
  timed out while it was away);
- ``illegal-card`` / ``not-held`` / ``malformed``: x answers ``k`` with a held card the
  trick rules forbid (or an off-step bid), a card it does not hold, an empty action;
  ``strikes``: an illegal card at ``k`` and at its next two requests (it forfeits);
- ``forged``: before answering ``k``, answers naming ids the referee never sent (the next
  one, ``0``, ``-1``, a word, a number past 64 bits); ``batch``: one ``DecisionBatch``
  holding a forged id, the answer, and the answer again;
- ``stale``: after answering ``k``, the same answer again and the answer to ``k - 1``;
- ``other-match``: before answering ``k``, its answer naming a match it has no seat in (a
  running one, another x's, and one that does not exist);
- ``resume-request`` / ``resume-answer``: x opens a new stream of its token (the match in
  ``running``) while its stream is open, at ``k`` or right after answering it;
  ``resume-bare``: at ``k``, with a Hello naming no match (the seats are the token's).

The resets, half-closes, ``gone`` and the resumes are made at two more points: right
after x reads its ``match_started``, and right after its ``match_ended`` (x then comes
back for the end, which must come again).

Each match is a bot of its own (``x0``, ``x1``, ...), so a sweep's matches run at once on
one referee, beside the shared honest bots. After each, as docs/referee.md and
docs/protocol.md say: the match ends with a result (a forfeiter placed last); its record
file passes ``arena replay --check``; x's incidents are exactly what its fault earns, each
naming x's seat and what it did (its action, the rule, the strike), and the honest seats
have none, every move of theirs their bot's; every message any seat read (x on each of its
streams, the honest bots on theirs) is, event by event and view by view, what the record
gives that seat (``test_events_machine_round56.check_bot``: so never another's hand); every
refusal x read names what was wrong; the referee still answers ``GetInfo`` at the end; and
nothing is logged at ERROR nor with a traceback. The default run samples the points; the
exhaustive sweep (every ``k``, every fault) is ``slow``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_cli
from arena.protocol import action_from_pb, action_to_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, Game
from tests.hostile.test_events_machine_round56 import by_match, check_bot
from tests.hostile.test_hostile_round34 import _attach, _Recorded
from tests.support.harness import until

sys.path.insert(0, str(Path(__file__).parent))
from hostile_bot import bad_action

RULES = dataclasses.replace(PRESETS["1001-4p"], max_deals=2)
SEED = 58
HONEST = ("h1", "h2", "h3")
#: Long enough that an honest answer over loopback is never late on a loaded machine (the
#: referee excuses its own loop's stalls, not the machine's), short enough that a ``late``
#: fault's wait is short; no bank, so a timeout comes at the limit.
DECISION_MS = 2000
#: A reset x comes back at once; ``gone`` forfeits after this.
GRACE_S = 3.0
STRIKES = 3
#: Matches played at once (each with an x of its own). At 64 the test process (referee and
#: clients) was so loaded on a 2-core machine that a new stream's Welcome took up to a
#: second, and an x that changed streams at a request timed out (the clock runs on:
#: docs/protocol.md).
AT_ONCE = 24

REQUEST_SIDE = ("reset-request", "reset-fast", "half-close", "gone", "late", "reset-late",
                "illegal-card", "not-held", "malformed", "strikes", "forged", "batch",
                "other-match", "resume-request", "resume-bare")  # fmt: skip
ANSWER_SIDE = ("reset-answer", "reset-fast-answer", "half-close-answer", "stale",
               "resume-answer")  # fmt: skip
FAULTS = REQUEST_SIDE + ANSWER_SIDE
#: The points besides x's requests: right after it reads its ``match_started`` (``k`` -1),
#: and its ``match_ended`` (``k`` AT_END); the faults that need no request to make there.
AT_END = 10_000
EDGE_FAULTS = ("reset-request", "reset-fast", "half-close", "gone", "resume-request")
FEATURES = ("batch", "results_once", "deal_once")
#: ids no request of the referee's has
FORGED_IDS = ("0", "-1", "abc", "184467440737095516160")

#: words a refusal of each kind x reads says (any of), as docs/protocol.md lists them
WRONG_WORDS = ("answered already", "timed out", "has not been sent to this seat",
               "is no request id", "no seat in a running match")  # fmt: skip


#: how the detail of each kind of incident x earns begins (docs/referee.md: it names the
#: action, the rule broken, the legal actions, the fallback and the strike count)
DETAILS: dict[str, str | tuple[str, ...]] = {
    "illegal": "illegal action '", "malformed": "malformed action: ",
    "wrong_request": "decision '", "timeout": "no decision within ",
    "disconnect": "stream closed", "forfeit": ("3 strikes", "disconnected for more than"),
}  # fmt: skip


@dataclasses.dataclass(frozen=True, order=True)
class Fault:  # (ordered: a sweep's faults are compared sorted)
    kind: str  # one of FAULTS, or "none"
    k: int  # the index of x's request (its first arrival) where it strikes
    #: x's streams ask for the optional features that make what the referee sends depend on
    #: what the stream carried before (Batch, deal results and a deal's bids and tricks
    #: left out of views): a view rebuilt on a stream reset or replaced mid-deal must
    #: still be the seat's view
    features: bool = False


@dataclasses.dataclass
class XRun:
    """What x did and saw in one match."""

    streams: list[list[pb.ServerMessage]] = dataclasses.field(default_factory=list)
    statuses: list[grpc.StatusCode | None] = dataclasses.field(default_factory=list)
    requests: list[str] = dataclasses.field(default_factory=list)  # ids, first arrival order
    deals: list[int] = dataclasses.field(default_factory=list)  # each one's deal number
    sent: list[pb.Decision] = dataclasses.field(default_factory=list)
    sent_wrong: int = 0  # answers it sent naming no pending request of its match
    fired: bool = False
    #: (time.monotonic(), stream, what): each Hello x sent and each message it read, for
    #: a failure's message
    log: list[tuple[float, int, str]] = dataclasses.field(default_factory=list)

    def rejected(self) -> list[pb.DecisionRejected]:
        return [m.decision_rejected for s in self.streams for m in s
                if m.HasField("decision_rejected")]  # fmt: skip


def _honest(legal: Sequence[pb.Action]) -> pb.Action:
    """The honest bots pass where they may (x, bidding, then declares: it has gives, a
    contract and leads to be asked), else their first legal action."""
    passes = [a for a in legal if a.HasField("pass")]
    return (passes or list(legal))[0]


def _answer(r: pb.DecisionRequest, rid: str | None = None, mid: str | None = None,
            action: pb.Action | None = None) -> pb.BotMessage:  # fmt: skip
    return pb.BotMessage(decision=pb.Decision(
        request_id=r.request_id if rid is None else rid,
        match_id=r.match_id if mid is None else mid,
        action=r.view.legal_actions[0] if action is None else action))  # fmt: skip


async def _send(call: Any, out: XRun, msg: pb.BotMessage) -> None:
    """Write ``msg`` (an answer) on ``call``; x keeps what it sent."""
    out.sent.extend([msg.decision] if msg.HasField("decision") else msg.decisions.decisions)
    await call.write(msg)


async def _read(call: Any, into: list[pb.ServerMessage]) -> AsyncIterator[pb.ServerMessage]:
    """The messages of ``call`` one by one (a ``Batch``'s too), each kept in ``into`` (a
    batch's all at once: so that a reader that stops in the middle of one still keeps what
    the stream carried, in order)."""
    while (m := await asyncio.wait_for(call.read(), 60)) is not grpc.aio.EOF:
        ms = list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]
        into.extend(ms)
        for one in ms:
            yield one


async def _drain(call: Any, into: list[pb.ServerMessage]) -> grpc.StatusCode | None:
    """Read a stream left behind to its end; its status."""
    try:
        async for _ in _read(call, into):
            pass
        code: grpc.StatusCode = await call.code()
        return code
    except grpc.aio.AioRpcError as e:
        return e.code()


async def _x(ref: Referee, port: int, name: str, mid: str, fault: Fault, neighbour: str) -> XRun:
    """Bot ``name`` in match ``mid``: its first legal action at each request, and ``fault``
    at its ``k``-th (``neighbour``: a match it has no seat in)."""
    out = XRun()
    drains: list[asyncio.Task[grpc.StatusCode | None]] = []
    late: tuple[str, pb.BotMessage] | None = None  # (request id, answer) held till it times out
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = pb_grpc.ArenaStub(ch)
        ended = False
        bare = False  # the next Hello names no running match (a restart would not know it)
        while not ended:
            assert len(out.streams) < 6, f"{name}: more than 6 streams"
            call = stub.Play(metadata=(("authorization", f"Bearer tok-{name}"),))
            got: list[pb.ServerMessage] = []
            out.streams.append(got)
            out.statuses.append(None)
            running = [mid] if len(out.streams) > 1 and not bare else []
            again = ""  # "": read on; "reset": come back after the referee saw x go; "hop"
            try:
                await call.write(pb.BotMessage(hello=pb.Hello(
                    bot_name=name, protocol_version=1, running=running,
                    features=FEATURES if fault.features else ())))  # fmt: skip
                out.log.append((time.monotonic(), len(out.streams) - 1, "hello"))
                async for m in _read(call, got):
                    kind = m.WhichOneof("kind")
                    out.log.append((time.monotonic(), len(out.streams) - 1, str(kind)))
                    ends = kind == "match_ended" and m.match_ended.match_id == mid
                    if not out.fired and (
                        (fault.k == -1 and kind == "match_started") or (fault.k == AT_END and ends)
                    ):
                        out.fired = True
                        again = await _fault(call, None, fault, out, neighbour)
                        if again:
                            break
                    if ends:
                        ended = True
                        break
                    if kind == "decision_rejected" and late is not None:
                        rej = m.decision_rejected
                        if rej.incident == pb.INCIDENT_TIMEOUT and rej.request_id == late[0]:
                            await _send(call, out, late[1])
                            out.sent_wrong += 1
                            late = None
                    if kind != "decision_request":
                        continue
                    r = m.decision_request
                    if r.request_id not in out.requests:
                        out.requests.append(r.request_id)
                        out.deals.append(r.deal_number)
                    first = out.requests.index(r.request_id)
                    if late is not None:
                        if r.request_id == late[0]:  # (asked again on a new stream: no)
                            continue
                        # a later request: the held one timed out while x was away (its
                        # refusal is not sent again): the late answer goes now
                        await _send(call, out, late[1])
                        out.sent_wrong += 1
                        late = None
                    if fault.kind == "strikes" and out.fired and first > fault.k:
                        if first < fault.k + STRIKES:  # (three in a row: it forfeits)
                            bad = bad_action("illegal-card", r.view)
                            await _send(call, out, _answer(r, action=bad))
                        else:
                            raise AssertionError(f"{name} asked after its forfeit: {r}")
                        continue
                    if out.fired or first != fault.k:
                        await _send(call, out, _answer(r))
                        continue
                    out.fired = True
                    again = await _fault(call, r, fault, out, neighbour)
                    if fault.kind in ("late", "reset-late"):
                        late = (r.request_id, _answer(r))
                    if again:
                        break
            except grpc.aio.AioRpcError as e:
                out.statuses[-1] = e.code()
            else:
                if again in ("hop", "hop-bare"):
                    bare = again == "hop-bare"
                    drains.append(asyncio.create_task(_drain(call, got)))
                elif not again:  # x leaves: half-closes and reads on to the status
                    await call.done_writing()
                    out.statuses[-1] = await _drain(call, got)
            if again in ("reset", "gone", "reset-fast"):
                out.statuses[-1] = grpc.StatusCode.CANCELLED
            if again in ("reset", "gone"):
                await until(lambda: ref.session(name).stream is None, f"{name} seen gone")
                if again == "gone":
                    break
            if again == "half-close":  # read on to the status, as a client leaving does
                out.statuses[-1] = await _drain(call, got)
        for n, task in enumerate(drains):
            out.statuses[n] = await task
    return out


async def _fault(call: Any, r: pb.DecisionRequest | None, fault: Fault, out: XRun,
                 neighbour: str) -> str:  # fmt: skip
    """Do ``fault`` at request ``r`` (None: at x's start or end of the match); what x's
    session does next ("": reads on)."""
    kind = fault.kind
    assert r is not None or kind in EDGE_FAULTS, fault
    if kind in ("reset-request", "gone", "reset-fast", "reset-late"):
        call.cancel()
        return {"reset-request": "reset", "reset-late": "reset"}.get(kind, kind)
    if kind == "half-close":  # x leaves the stream (comes back on a new one)
        await call.done_writing()
        return "half-close"
    if kind == "resume-request":
        return "hop"
    if kind == "resume-bare":
        return "hop-bare"
    assert r is not None
    if kind in ("reset-answer", "reset-fast-answer"):
        await _send(call, out, _answer(r))
        call.cancel()  # (in the same step as the write: the answer may be lost with it)
        return "reset" if kind == "reset-answer" else "reset-fast"
    if kind == "half-close-answer":
        await _send(call, out, _answer(r))
        await call.done_writing()
        return "half-close"
    if kind in ("illegal-card", "not-held", "malformed", "strikes"):
        bad = "illegal-card" if kind == "strikes" else kind
        await _send(call, out, _answer(r, action=bad_action(bad, r.view)))
    elif kind == "batch":  # a forged id, the answer, the answer again: in one message
        ds = [_answer(r, rid=str(int(r.request_id) + 1)).decision, _answer(r).decision,
              _answer(r).decision]  # fmt: skip
        await _send(call, out, pb.BotMessage(decisions=pb.DecisionBatch(decisions=ds)))
        out.sent_wrong += 2
    elif kind == "forged":
        for rid in (str(int(r.request_id) + 1), *FORGED_IDS):
            await _send(call, out, _answer(r, rid=rid))
            out.sent_wrong += 1
        await _send(call, out, _answer(r))
    elif kind == "stale":
        await _send(call, out, _answer(r))
        await _send(call, out, _answer(r))  # the same answer twice: "answered already"
        out.sent_wrong += 1
        if int(r.request_id) > 1:
            await _send(call, out, _answer(r, rid=str(int(r.request_id) - 1)))
            out.sent_wrong += 1
    elif kind == "other-match":
        for mid in (neighbour, "no-such-match"):
            await _send(call, out, _answer(r, mid=mid))
        await _send(call, out, _answer(r))
    elif kind == "resume-answer":
        await _send(call, out, _answer(r))
        return "hop"
    # "late": nothing now (the answer goes once the referee says it timed out)
    return ""


def _incidents(rec: dict[str, Any], seat: int) -> Counter[str]:
    return Counter(i["kind"] for i in rec["incidents"] if i["seat"] == seat)


def _replay_check(path: Path) -> None:
    res = CliRunner().invoke(arena_cli, ["replay", "--check", str(path)])
    assert res.exit_code == 0 and "OK" in res.output, (path.name, res.output)


def _check(fault: Fault, name: str, rec: dict[str, Any], x: XRun,
           honest: dict[str, _Recorded], record_dir: Path) -> None:  # fmt: skip
    """Everything one match with ``fault`` must show (the module's docstring)."""
    at = f"{fault} ({rec['match_id']}; x read {x.log})"
    players = list(rec["players"])
    seat = players.index(name)
    assert x.fired or fault.kind == "none", f"{at}: x never reached request {fault.k}"
    assert rec["result"] is not None and not rec.get("abandoned"), at
    _replay_check(record_dir / f"{rec['match_id']}.jsonl")
    # the honest seats: untouched
    for s, who in enumerate(players):
        if who == name:
            continue
        assert not _incidents(rec, s), f"{at}: incident on honest {who}: {rec['incidents']}"
        acts = [a for d in rec["deals"] for a in d["actions"] if a["seat"] == s]
        assert {a["by"] for a in acts} <= {"bot", "forced"}, (at, who)
        seen = check_bot(who, [by_match(honest[who].got)[rec["match_id"]]], rec)
        assert seen.events and seen.ended_on == 0, (at, who, seen)
    # every message x read, on each of its streams, is what the record gives its seat
    seen = check_bot(name, [by_match(s).get(rec["match_id"], []) for s in x.streams], rec)
    assert fault.kind == "gone" or (seen.events and seen.ended_on is not None), (at, seen)
    # what x's fault earns, and no more
    inc = _incidents(rec, seat)
    details = [i["detail"] for i in rec["incidents"] if i["seat"] == seat]
    mine = [a for d in rec["deals"] for a in d["actions"] if a["seat"] == seat]
    by = Counter(a["by"] for a in mine)
    kind = fault.kind
    last = fault.k == len(x.requests) - 1  # (its answer may end the match)
    ends = sum(m.HasField("match_ended") for st in x.streams for m in st)
    if fault.k == AT_END:
        # After the match's end nothing is recorded; a bot that comes back is sent the end
        # again (docs/protocol.md: the end of a match is not lost to it).
        assert not inc and not rec["forfeits"], (at, rec["incidents"])
        assert ends == (1 if kind == "gone" else 2), (at, ends)
    elif kind in ("none", "resume-request", "resume-answer", "resume-bare", "other-match"):
        assert not inc, (at, rec["incidents"])
    elif kind in ("reset-request", "reset-answer", "half-close", "reset-fast",
                  "reset-fast-answer", "half-close-answer"):  # fmt: skip
        # (an answer with which x's reset came may end the match before the drop is seen;
        # a drop the referee hears of after x's new Hello is no disconnect: its seats
        # passed to the new stream at once)
        want = [Counter(disconnect=1)]
        if kind in ANSWER_SIDE or kind == "reset-fast":
            want.append(Counter())
        assert inc in want, (at, rec["incidents"])
    elif kind == "gone":
        # Away, x's request times out at its limit (a strike, the fallback), and so do its
        # next ones, until the grace runs out: it forfeits then, unless the match (near
        # its end) was over first.
        assert inc["disconnect"] == 1 and inc["timeout"] >= 1, (at, rec["incidents"])
        assert set(inc) <= {"disconnect", "forfeit", "timeout"}, (at, rec["incidents"])
        if inc["forfeit"]:
            assert f"disconnected for more than {GRACE_S:g} s" in details, (at, details)
            assert rec["forfeits"] == [seat], at
            places = rec["result"]["places"]
            assert all(places[seat] > p for s, p in enumerate(places) if s != seat), (at, places)
        else:
            assert not rec["forfeits"] and inc["timeout"] < STRIKES, (at, rec["incidents"])
    elif kind == "reset-late":  # away, then late: both, and no more
        assert inc["disconnect"] == inc["timeout"] == 1, (at, inc)
        assert set(inc) <= {"timeout", "wrong_request", "disconnect"}, (at, inc)
        assert inc["wrong_request"] == 1 or last, (at, inc)
    elif kind == "late":
        assert inc["timeout"] == 1 and set(inc) <= {"timeout", "wrong_request"}, (at, inc)
        assert inc["wrong_request"] == (0 if last else 1) or last, (at, inc)
        assert any(f"strike 1 of {STRIKES}" in d for d in details), (at, details)
    elif kind in ("illegal-card", "not-held", "malformed"):
        want_kind = "malformed" if kind == "malformed" else "illegal"
        assert inc == Counter({want_kind: 1}), (at, rec["incidents"])
        assert f"strike 1 of {STRIKES}" in details[0], (at, details)
    elif kind == "strikes":
        n = min(STRIKES, len(x.requests) - fault.k)  # (the bad answers it had the chance of)
        assert inc["illegal"] == n, (at, rec["incidents"])
        assert set(inc) <= {"illegal", "forfeit"}, (at, rec["incidents"])
        assert (inc["forfeit"] == 1) == (n == STRIKES), (at, rec["incidents"])
        if n == STRIKES:
            assert f"{STRIKES} strikes" in details, (at, details)
            assert rec["forfeits"] == [seat], at
            places = rec["result"]["places"]
            assert all(places[seat] > p for s, p in enumerate(places) if s != seat), (at, places)
    elif kind == "batch":
        assert inc == Counter(wrong_request=2), (at, rec["incidents"])
    elif kind == "forged":
        assert inc == Counter(wrong_request=1 + len(FORGED_IDS)), (at, rec["incidents"])
    elif kind == "stale":
        assert set(inc) <= {"wrong_request"} and inc["wrong_request"] <= x.sent_wrong, (at, inc)
        assert last or inc["wrong_request"] == x.sent_wrong, (at, inc, x.sent_wrong)
    else:
        raise AssertionError(kind)
    strikes = inc["timeout"] + inc["illegal"] + inc["malformed"]
    assert by["fallback"] >= strikes, (at, by, inc)
    if kind not in ("gone", "strikes") or fault.k == AT_END:
        assert not rec["forfeits"], (at, rec["forfeits"])
        assert by["fallback"] == strikes, (at, by, inc)  # every other move x's own
    assert rec["wrong_requests"][seat] == inc["wrong_request"], (at, rec["wrong_requests"])
    named = {f"'{action_from_pb(d.action)}'" for d in x.sent if d.action.WhichOneof("kind")}
    for i in rec["incidents"]:  # each names x's seat (the bot) and what it did
        assert players[i["seat"]] == name, (at, i)
        assert i["detail"].startswith(DETAILS[i["kind"]]), (at, i)
        if i["kind"] in ("illegal", "wrong_request"):
            assert any(a in i["detail"] for a in named), (at, i, named)
        if i["kind"] == "wrong_request":
            assert any(f"request '{d.request_id}'" in i["detail"] for d in x.sent), (at, i)
    # every refusal x read names what was wrong
    for rej in x.rejected():
        if rej.incident == pb.INCIDENT_WRONG_REQUEST:
            assert any(w in rej.message for w in WRONG_WORDS), (at, rej.message)
        elif rej.incident == pb.INCIDENT_TIMEOUT:
            assert kind in ("late", "reset-late", "gone"), (at, rej)
        else:
            assert rej.incident in (pb.INCIDENT_ILLEGAL, pb.INCIDENT_MALFORMED), (at, rej)
            assert rej.strikes_allowed == STRIKES, (at, rej)
            assert rej.strikes == 1 or kind == "strikes", (at, rej)
    if kind.startswith("resume") and fault.k != AT_END:  # the stream left: replaced
        assert x.statuses[0] == grpc.StatusCode.ABORTED, (at, x.statuses)
    if kind.startswith("half-close"):  # x left it: once what was queued is written, OK
        assert x.statuses[0] == grpc.StatusCode.OK, (at, x.statuses)
    if kind != "gone":  # x leaves its last stream with a half-close: OK
        assert x.statuses[-1] == grpc.StatusCode.OK, (at, x.statuses)


async def _sweep(faults: list[Fault], tmp: Path) -> list[tuple[Fault, str, dict[str, Any], XRun]]:
    """Play one match per fault (``AT_ONCE`` at a time), each with an x of its own; check
    each; the referee must answer ``GetInfo`` at the end."""
    ref = Referee(RefereeConfig(decision_ms=DECISION_MS, time_bank_ms=0, max_strikes=STRIKES,
                                reconnect_grace_s=GRACE_S, record_dir=tmp))  # fmt: skip

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=_honest(r.view.legal_actions))  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    honest = _attach(ref, HONEST, on_request)
    server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
    gate = asyncio.Semaphore(AT_ONCE)
    out: list[tuple[Fault, str, dict[str, Any], XRun]] = []

    async def one(n: int, fault: Fault) -> None:
        name, mid = f"x{n}", f"m{n}"
        ref.add_bot(name, f"tok-{name}")
        async with gate:
            task = asyncio.create_task(_x(ref, port, name, mid, fault, f"m{n - 1}"))
            await until(lambda: ref.session(name).connected, f"{name} in")
            seats = [HONEST[0], name, HONEST[1], HONEST[2]]
            rec = await ref.run_match(mid, RULES, SEED, seats)
            x = await asyncio.wait_for(task, 60)
        _check(fault, name, rec, x, honest, tmp)
        out.append((fault, name, rec, x))

    try:
        await asyncio.gather(*(one(n, f) for n, f in enumerate(faults)))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            info = await pb_grpc.ArenaStub(ch).GetInfo(pb.GetInfoRequest(), timeout=10)
            assert info.ByteSize() > 0
    finally:
        await ref.end_streams()
        await server.stop(1.0)
    return out


def _requests_asked(tmp: Path) -> list[int]:
    """The deal of each request x is asked in the fault-free match (its points ``k``):
    played against the referee, and as the engine alone plays it."""
    ((_, _, rec, x),) = asyncio.run(_sweep([Fault("none", -2)], tmp))
    assert rec["result"]["reason"] == "max_deals", rec["result"]
    g = Game.new(RULES, SEED, list(rec["players"]))
    asked = 0
    while not g.is_over:
        legal, seat = g.legal_actions(), g.to_act
        pbs = [action_to_pb(a) for a in legal]
        mine = seat == 1
        asked += mine and (len(legal) > 1 or RULES.ask_forced)
        g.apply(legal[0] if mine else legal[pbs.index(_honest(pbs))], seat=seat)
    assert asked == len(x.requests), (asked, x.requests)
    return x.deals


def _swept(done: list[tuple[Fault, str, dict[str, Any], XRun]], faults: list[Fault]) -> None:
    """Each fault was played where it was meant to, and the sweep saw each way a seat can
    forfeit (a sweep of no forfeit would check nothing of them)."""
    assert sorted(f for f, *_ in done) == sorted(faults)
    why = Counter(i["detail"] for _, _, rec, _ in done for i in rec["incidents"]
                  if i["kind"] == "forfeit")  # fmt: skip
    assert why[f"{STRIKES} strikes"] and why[f"disconnected for more than {GRACE_S:g} s"], why
    # ... and x's features were at work: views that left out what the stream carried before
    omitted = [
        m.decision_request.view
        for f, _, _, x in done
        for st in x.streams
        for m in st
        if f.features and m.HasField("decision_request")
    ]
    assert any(v.bids_omitted or v.tricks_omitted for v in omitted)
    assert any(v.deal_results_omitted for v in omitted)


@pytest.fixture
def no_traceback_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Nothing logged at ERROR, nor with a traceback at any level, for a client's fault."""
    caplog.set_level(logging.DEBUG, logger="arena")
    caplog.set_level(logging.WARNING)
    yield
    bad = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR or (r.exc_info and r.levelno >= logging.WARNING)
    ]
    assert not bad, [r.getMessage() for r in bad]


def _sampled(deals: list[int]) -> list[int]:
    """The points of the default run: x's first and last requests of each deal (the
    exhaustive sweep is ``slow``)."""
    firsts = [deals.index(d) for d in sorted(set(deals))]
    lasts = [len(deals) - 1 - deals[::-1].index(d) for d in sorted(set(deals))]
    return sorted({*firsts, *lasts})


def _faults(points: list[int]) -> list[Fault]:
    """Every fault at each of ``points``, and those of EDGE_FAULTS at x's start and end; by
    turns with and without x's features."""
    faults = [Fault(kind, k) for k in points for kind in FAULTS] + [
        Fault(kind, k) for k in (-1, AT_END) for kind in EDGE_FAULTS]  # fmt: skip
    return [dataclasses.replace(f, features=(f.k + FAULTS.index(f.kind)) % 2 == 1) for f in faults]


@pytest.mark.usefixtures("no_traceback_logged")
def test_a_fault_at_sampled_points_of_a_match(tmp_path: Path) -> None:
    deals = _requests_asked(tmp_path / "base")
    assert len(deals) >= 10 and set(deals) == {0, 1}, deals
    faults = _faults(_sampled(deals))
    _swept(asyncio.run(_sweep(faults, tmp_path)), faults)


@pytest.mark.slow
@pytest.mark.usefixtures("no_traceback_logged")
def test_a_fault_at_every_point_of_a_match(tmp_path: Path) -> None:
    n = len(_requests_asked(tmp_path / "base"))
    faults = _faults(list(range(n)))
    _swept(asyncio.run(_sweep(faults, tmp_path)), faults)
