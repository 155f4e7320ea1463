"""Hostile round 58b: a bot seated in TWO running matches at once, answering across them.

A tournament at ``concurrency`` over 1 seats one bot in several matches, all on its one
stream, each message naming its ``match_id`` (docs/protocol.md, "The stream"). Round 31
swapped two matches' ids in process, rounds 50 and 53 sent another match's id among
answers over the wire, and round 58's sweep put one fault at every point of one match;
here a raw client ``x`` (the generated stubs only, the real referee on grpc.aio, port 0)
sits in two matches ``A`` and ``B`` beside three honest in-process bots (``B`` starts once
x has been asked thrice in ``A``, so that the two matches' request ids differ), holds its
request of one match until the other's comes (both are then pending at once), and does one
of these, once (two pairs of matches per fault, all played at once: in one x's streams
ask for ``batch``, ``results_once`` and ``deal_once``, whose views leave out what the
stream carried before, in the other for none):

- ``rid-of-B`` / ``mid-of-B``: answers A's request with B's request id, or with A's id and
  B's match id (B started later: its ids are behind A's, so one is an id B has asked
  already, the other one B has not sent yet);
- ``A-card-in-B`` / ``B-card-in-A``: answers B's request (its own ids) with an action legal
  in A but not in B, and the reverse;
- ``batch-swapped``: one ``DecisionBatch`` with both answers, their request ids swapped;
  ``batch-twice``: one with A's answer, and the same answer again naming B;
- ``resume-A``: opens a new stream naming A only in ``Hello.running`` while B's request is
  pending on the old one (both seats pass to the new stream, both requests come again
  there), and once it is welcomed writes B's answer on the old stream (replaced: were it
  read and applied, x's answer to B's request sent again would be refused);
- ``drop-at-A-last`` / ``drop-after-A-last``: resets its stream at A's last request (before
  answering it, or in the step it writes the answer), and comes back while B goes on;
- ``after-A-ended``: once A has ended, answers A's last request again.

Then it answers each request of its own as asked. Checked, as docs/referee.md and
docs/protocol.md say: each match is judged only by the answers naming it (a cross answer
is a ``wrong_request`` of the match it names, refused with that match's id and the id sent,
its message naming that match's pending request, no strike; an action of the other match
that is illegal in the one named is a strike there, and only there; an answer for a match
that ended is "no seat in a running match", recorded nowhere); the other match's seat has
nothing (no incident at all, so no strike and no timeout; a dropped stream's disconnect is
the only incident both matches count, as the docs say of a stream closed while a bot sits
in several); both matches end, with a result, and their records pass ``arena replay
--check``; the honest seats have no incident and every message any seat read (x on each of
its streams, match by match) is what the record gives that seat
(``test_events_machine_round56.check_bot``); nothing is logged at ERROR nor with a
traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.hostile.test_events_machine_round56 import by_match, check_bot
from tests.hostile.test_every_point_round58 import (  # noqa: F401 (a fixture)
    FEATURES,
    _drain,
    _honest,
    _incidents,
    _read,
    _replay_check,
    no_traceback_logged,
)
from tests.hostile.test_hostile_round34 import _attach, _Recorded
from tests.support.harness import until

#: B is a deal longer, so that it goes on after A's last decision
RULES = {"A": dataclasses.replace(PRESETS["1001-4p"], max_deals=2),
         "B": dataclasses.replace(PRESETS["1001-4p"], max_deals=3)}  # fmt: skip
SEEDS = {"A": 58, "B": 59}
HONEST = ("h1", "h2", "h3")
#: (as round 58's: an honest answer over loopback is never late on a loaded machine)
DECISION_MS = 2000
GRACE_S = 5.0
STRIKES = 3
#: x's requests of A before B starts (so the two matches' request ids differ)
HEAD_START = 3

FAULTS = ("none", "rid-of-B", "mid-of-B", "A-card-in-B", "B-card-in-A", "batch-swapped",
          "batch-twice", "resume-A", "drop-at-A-last", "drop-after-A-last",
          "after-A-ended")  # fmt: skip
#: what each fault earns x's seat in each match (incident kind -> count; a range for the
#: drop whose answer may end A before the referee hears of the reset)
EARNS: dict[str, dict[str, list[Counter[str]]]] = {
    "none": {"A": [Counter()], "B": [Counter()]},
    "rid-of-B": {"A": [Counter(wrong_request=1)], "B": [Counter()]},
    "mid-of-B": {"A": [Counter()], "B": [Counter(wrong_request=1)]},
    "A-card-in-B": {"A": [Counter()], "B": [Counter(illegal=1)]},
    "B-card-in-A": {"A": [Counter(illegal=1)], "B": [Counter()]},
    "batch-swapped": {"A": [Counter(wrong_request=1)], "B": [Counter(wrong_request=1)]},
    "batch-twice": {"A": [Counter()], "B": [Counter(wrong_request=1)]},
    "resume-A": {"A": [Counter()], "B": [Counter()]},
    "drop-at-A-last": {"A": [Counter(disconnect=1)], "B": [Counter(disconnect=1)]},
    "drop-after-A-last": {
        "A": [Counter(disconnect=1), Counter()],
        "B": [Counter(disconnect=1)],
    },
    "after-A-ended": {"A": [Counter()], "B": [Counter()]},
}


def _key(a: pb.Action) -> bytes:
    return a.SerializeToString(deterministic=True)


def _only_in(r: pb.DecisionRequest, other: pb.DecisionRequest) -> pb.Action | None:
    """An action legal at ``r`` and not at ``other`` (None: there is none)."""
    theirs = {_key(a) for a in other.view.legal_actions}
    return next((a for a in r.view.legal_actions if _key(a) not in theirs), None)


def _decision(rid: str, mid: str, action: pb.Action) -> pb.Decision:
    return pb.Decision(request_id=rid, match_id=mid, action=action)


def _answer(r: pb.DecisionRequest) -> pb.Decision:
    return _decision(r.request_id, r.match_id, r.view.legal_actions[0])


@dataclasses.dataclass
class XRun:
    """What x did and saw."""

    mids: dict[str, str]  # "A"/"B" -> the match id
    a_last: int  # how many requests x is asked in A (its last is A's last decision)
    fault: str
    #: x's streams ask for the features that leave out of a view what the stream carried
    #: before (a request sent again on a new stream must still be whole)
    features: bool
    b_may_start: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    streams: list[list[pb.ServerMessage]] = dataclasses.field(default_factory=list)
    statuses: list[grpc.StatusCode | None] = dataclasses.field(default_factory=list)
    asked: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # first arrivals
    #: every decision x sent that it meant to be refused or judged in the other match
    cross: list[pb.Decision] = dataclasses.field(default_factory=list)
    #: (match id, request id) of each of those -> the request pending in the match it named
    named: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    fired: bool = False
    b_ran_on: bool = False  # B was under way when x dropped its stream at A's last request
    resent: list[pb.DecisionRequest] = dataclasses.field(default_factory=list)

    def rejected(self) -> list[pb.DecisionRejected]:
        return [m.decision_rejected for s in self.streams for m in s
                if m.HasField("decision_rejected")]  # fmt: skip


async def _x(ref: Referee, port: int, name: str, x: XRun) -> None:
    """Bot ``name`` in x.mids' two matches: its fault once (the module's docstring), its
    first legal action at every other request."""
    a, b = x.mids["A"], x.mids["B"]
    pending: dict[str, pb.DecisionRequest] = {}  # match id -> the request x holds
    ended: set[str] = set()
    started: set[str] = set()
    last_a: pb.DecisionRequest | None = None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = pb_grpc.ArenaStub(ch)
        call = None
        while len(ended) < 2:
            assert len(x.streams) < 4, f"{name}: more than 4 streams"
            old, call = call, stub.Play(metadata=(("authorization", f"Bearer tok-{name}"),))
            got: list[pb.ServerMessage] = []
            x.streams.append(got)
            x.statuses.append(None)
            running = sorted(started - ended) if x.streams[:-1] else []
            # (what x held on the stream it left comes again on this one, if still pending:
            # answered as it comes, not before, which would answer it twice)
            left_behind, pending = pending, {}
            # resume-A names A only: B's seat passes to the new stream all the same
            if x.fault == "resume-A" and old is not None:
                running = [a]
            await call.write(pb.BotMessage(hello=pb.Hello(
                bot_name=name, protocol_version=1, running=running,
                features=FEATURES if x.features else ())))  # fmt: skip
            again = ""
            try:
                async for m in _read(call, got):
                    kind = m.WhichOneof("kind")
                    if kind == "welcome" and old is not None and x.fault == "resume-A":
                        # B's answer on the stream x left (replaced now): it acts for nobody
                        # (x answers B again on this stream; were it applied, that answer
                        # would be refused). (The referee ended the old stream as it
                        # welcomed this one: the write mostly never reaches its reader.)
                        rb = left_behind.get(b)
                        if rb is not None:
                            # (the old call may have ended first: nothing written then)
                            with contextlib.suppress(grpc.aio.AioRpcError,
                                                     asyncio.InvalidStateError):  # fmt: skip
                                await old.write(pb.BotMessage(decision=_answer(rb)))
                        x.statuses[-2] = await _drain(old, x.streams[-2])
                    if kind == "match_started":
                        started.add(m.match_started.match_id)
                    if kind == "match_ended":
                        mid = m.match_ended.match_id
                        ended.add(mid)
                        pending.pop(mid, None)
                        if mid == a and x.fault == "after-A-ended" and not x.fired:
                            assert last_a is not None
                            x.fired = True
                            d = _answer(last_a)
                            x.cross.append(d)
                            await call.write(pb.BotMessage(decision=d))
                        if len(ended) == 2:
                            break
                        # (a request of the other match held for this one's goes now)
                        again = await _act(call, x, pending, started, ended)
                        if again:
                            break
                    if kind != "decision_request":
                        continue
                    r = m.decision_request
                    ids = x.asked.setdefault(r.match_id, [])
                    if r.request_id in ids:
                        x.resent.append(r)
                    else:
                        ids.append(r.request_id)
                    pending[r.match_id] = r
                    if r.match_id == a:
                        last_a = r
                        if len(ids) == HEAD_START:
                            x.b_may_start.set()
                    again = await _act(call, x, pending, started, ended)
                    if again:
                        break
            except grpc.aio.AioRpcError as e:
                x.statuses[-1] = e.code()
            if again == "reset":
                x.statuses[-1] = grpc.StatusCode.CANCELLED
                await until(lambda: ref.session(name).stream is None, f"{name} seen gone")
            elif again == "hop":
                continue
            elif len(ended) == 2:
                await call.done_writing()
                x.statuses[-1] = await _drain(call, got)


async def _act(call: Any, x: XRun, pending: dict[str, pb.DecisionRequest], started: set[str],
               ended: set[str]) -> str:  # fmt: skip
    """What x does with the requests it holds: its fault, once, when it can be made; else
    answer them, but (until the fault is made) hold one match's request until the other's
    comes, while both run. What the session does next ("": reads on)."""
    a, b = x.mids["A"], x.mids["B"]
    ra, rb = pending.get(a), pending.get(b)
    both = ra is not None and rb is not None
    if not x.fired:
        if x.fault.startswith("drop") and ra is not None and len(x.asked[a]) == x.a_last:
            x.fired = True
            x.b_ran_on = b in started and b not in ended
            if x.fault == "drop-after-A-last":
                await call.write(pb.BotMessage(decision=_answer(ra)))
                del pending[a]
            call.cancel()  # (a reset, to the referee)
            return "reset"
        if both and await _fault(call, x, pending):
            x.fired = True
            if x.fault == "resume-A":
                return "hop"
        elif (ra is None) != (rb is None) and {a, b} <= started and not ended & {a, b}:
            return ""  # wait for the other match's request
    for mid, r in list(pending.items()):
        await call.write(pb.BotMessage(decision=_answer(r)))
        del pending[mid]
    return ""


async def _fault(call: Any, x: XRun, pending: dict[str, pb.DecisionRequest]) -> bool:
    """Make x's fault at its requests of A and B, pending at once; whether it could be
    made here (ids that differ; an action legal in one match only). A request the fault
    settled (answered, or struck) leaves ``pending``."""
    a, b = x.mids["A"], x.mids["B"]
    ra, rb = pending[a], pending[b]
    kind = x.fault
    if kind == "resume-A":
        return True
    differ = ra.request_id != rb.request_id
    sent: list[pb.Decision]
    if kind == "rid-of-B" and differ:
        sent = [_decision(rb.request_id, a, ra.view.legal_actions[0])]
    elif kind == "mid-of-B" and differ:
        sent = [_decision(ra.request_id, b, ra.view.legal_actions[0])]
    elif kind == "A-card-in-B" and (act := _only_in(ra, rb)) is not None:
        sent = [_decision(rb.request_id, b, act)]
    elif kind == "B-card-in-A" and (act := _only_in(rb, ra)) is not None:
        sent = [_decision(ra.request_id, a, act)]
    elif kind == "batch-swapped" and differ:
        sent = [_decision(rb.request_id, a, ra.view.legal_actions[0]),
                _decision(ra.request_id, b, rb.view.legal_actions[0])]  # fmt: skip
    elif kind == "batch-twice" and differ:
        sent = [_answer(ra), _decision(ra.request_id, b, ra.view.legal_actions[0])]
    else:
        return False
    if kind == "batch-twice":
        x.cross.append(sent[1])
        del pending[a]
    else:
        x.cross.extend(sent)
    for d in sent:
        x.named[d.match_id, d.request_id] = (ra if d.match_id == a else rb).request_id
    if kind.endswith("-card-in-B"):
        del pending[b]
    if kind.endswith("-card-in-A"):
        del pending[a]
    if kind.startswith("batch"):
        await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=sent)))
    else:
        (d,) = sent
        await call.write(pb.BotMessage(decision=d))
    return True


async def _play(faults: list[tuple[str, bool]], a_last: int,
                tmp: Path) -> list[tuple[XRun, dict[str, Any]]]:  # fmt: skip
    """One pair of matches per fault (with x's features or not), all at once, each with an
    x of its own; the records (A's, then B's) with what x did."""
    ref = Referee(RefereeConfig(decision_ms=DECISION_MS, time_bank_ms=0, max_strikes=STRIKES,
                                reconnect_grace_s=GRACE_S, record_dir=tmp))  # fmt: skip

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=_honest(r.view.legal_actions))  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    honest = _attach(ref, HONEST, on_request)
    server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)

    async def one(
        n: int, fault: str, features: bool
    ) -> tuple[XRun, dict[str, Any], dict[str, Any]]:
        name = f"x{n}"
        x = XRun(mids={"A": f"a{n}", "B": f"b{n}"}, a_last=a_last, fault=fault,
                 features=features)  # fmt: skip
        ref.add_bot(name, f"tok-{name}")
        task = asyncio.create_task(_x(ref, port, name, x))
        await until(lambda: ref.session(name).connected, f"{name} in")
        seats = [HONEST[0], name, HONEST[1], HONEST[2]]
        run_a = asyncio.create_task(ref.run_match(x.mids["A"], RULES["A"], SEEDS["A"], seats))
        await x.b_may_start.wait()
        rec_b = await ref.run_match(x.mids["B"], RULES["B"], SEEDS["B"], seats)
        rec_a = await run_a
        await asyncio.wait_for(task, 60)
        return x, rec_a, rec_b

    try:
        done = await asyncio.gather(*(one(n, *f) for n, f in enumerate(faults)))
    finally:
        await ref.end_streams()
        await server.stop(1.0)
    for x, rec_a, rec_b in done:
        _check(x, {"A": rec_a, "B": rec_b}, honest, tmp)
    return [(x, rec) for x, rec_a, rec_b in done for rec in (rec_a, rec_b)]


def _check(x: XRun, recs: dict[str, dict[str, Any]], honest: dict[str, _Recorded],
           tmp: Path) -> None:  # fmt: skip
    """Everything a pair of matches with x's fault must show (the module's docstring)."""
    name = list(recs["A"]["players"])[1]
    at = f"{x.fault} ({name})"
    assert x.fired or x.fault == "none", f"{at}: the fault was never made"
    for which, rec in recs.items():
        mid = rec["match_id"]
        assert rec["result"] is not None and not rec.get("abandoned"), (at, which)
        assert not rec["forfeits"], (at, which, rec["incidents"])
        _replay_check(tmp / f"{mid}.jsonl")
        players = list(rec["players"])
        seat = players.index(name)
        for s, who in enumerate(players):
            if who == name:
                continue
            assert not _incidents(rec, s), (at, which, who, rec["incidents"])
            seen = check_bot(who, [by_match(honest[who].got)[mid]], rec)
            assert seen.events and seen.ended_on == 0, (at, which, who)
        # each of x's streams carried, of this match, exactly its seat's views
        seen = check_bot(name, [by_match(s).get(mid, []) for s in x.streams], rec)
        assert seen.events and seen.ended_on is not None, (at, which, seen)
        # x's seat earned what its fault earns in this match, and no more
        inc = _incidents(rec, seat)
        assert inc in EARNS[x.fault][which], (at, which, rec["incidents"])
        assert rec["wrong_requests"][seat] == inc["wrong_request"], (at, which)
        mine = [act for d in rec["deals"] for act in d["actions"] if act["seat"] == seat]
        by = Counter(act["by"] for act in mine)
        assert by["fallback"] == inc["illegal"], (at, which, by)  # every other move x's own
        for i in rec["incidents"]:
            if i["kind"] == "wrong_request":  # the id x sent, the match's pending one named
                assert any(f"for request '{d.request_id}' refused" in i["detail"]
                           for d in x.cross if d.match_id == mid), (at, i)  # fmt: skip
                assert "the pending request is '" in i["detail"], (at, i)
            if i["kind"] == "illegal":
                assert f"strike 1 of {STRIKES}" in i["detail"], (at, i)
    # every refusal x read is of an answer it sent across, names the match and the id it
    # named; the answer for a match ended is refused as one for a match it has no seat in
    rejected = x.rejected()
    assert len(rejected) == len(x.cross), (at, rejected, x.cross)
    for rej in rejected:
        assert any(d.match_id == rej.match_id and d.request_id == rej.request_id
                   for d in x.cross), (at, rej)  # fmt: skip
        if x.fault == "after-A-ended":
            assert rej.incident == pb.INCIDENT_WRONG_REQUEST, (at, rej)
            assert rej.message == f"you have no seat in a running match {rej.match_id!r}"
        elif x.fault.endswith("-card-in-" + ("B" if rej.match_id == x.mids["B"] else "A")):
            assert rej.incident == pb.INCIDENT_ILLEGAL and rej.strikes == 1, (at, rej)
            assert list(rej.legal_actions) and rej.fallback.WhichOneof("kind"), (at, rej)
        else:
            # refused by the match it named, saying what the id is there, and naming that
            # match's pending request (docs/protocol.md)
            assert rej.incident == pb.INCIDENT_WRONG_REQUEST and rej.strikes == 0, (at, rej)
            pid = x.named[rej.match_id, rej.request_id]
            why = "was answered already" if int(rej.request_id) < int(pid) else (
                "has not been sent to this seat")  # fmt: skip
            assert rej.message.startswith("decision '") and (
                f" for request '{rej.request_id}' refused: request '{rej.request_id}' {why} "
                f"(the pending request is '{pid}'); legal now: " in rej.message
            ), (at, rej)
            assert list(rej.legal_actions), (at, rej)  # (those of the pending request)
    # a request pending as x changed streams came again with its time left (no timeout
    # above: it was in time), never more than the limit (no bank here)
    assert all(0 < r.time_limit_ms <= DECISION_MS and r.time_bank_ms == 0 for r in x.resent), (
        at, x.resent)  # fmt: skip
    # ... and whole (docs/protocol.md: a request sent again after a reconnect leaves out
    # nothing, whatever the features)
    assert not any(r.view.deal_results_omitted or r.view.bids_omitted or r.view.tricks_omitted
                   for r in x.resent), (at, x.resent)  # fmt: skip
    # the streams' ends: a replaced one ABORTED, one x reset CANCELLED, its last one OK
    if x.fault == "resume-A":
        assert x.statuses[0] in (grpc.StatusCode.ABORTED, grpc.StatusCode.INTERNAL), at
        assert len(x.streams) == 2, (at, x.statuses)
        # B's request, pending on the stream x left, came again on the new one
        assert {r.match_id for r in x.resent} == set(x.mids.values()), (at, x.resent)
    if x.fault.startswith("drop"):
        assert x.statuses[0] == grpc.StatusCode.CANCELLED and len(x.streams) == 2, at
        assert x.b_ran_on, at
        ends = [m.match_ended.match_id for s in x.streams for m in s if m.HasField("match_ended")]
        assert set(ends) == set(x.mids.values()), (at, ends)
    assert x.statuses[-1] == grpc.StatusCode.OK, (at, x.statuses)


def _asked_in_a(tmp: Path) -> int:
    """How many requests x is asked in A in the fault-free pair (the last is A's last
    decision): played against the referee, and checked as every pair is."""
    ((x, _), _) = asyncio.run(_play([("none", False)], -1, tmp))
    n = len(x.asked[x.mids["A"]])
    assert n > HEAD_START, x.asked
    return n


@pytest.mark.usefixtures("no_traceback_logged")
def test_a_bot_answering_across_its_two_matches_harms_neither_beyond_its_fault(
    tmp_path: Path,
) -> None:
    a_last = _asked_in_a(tmp_path / "base")
    faults = [(f, features) for f in FAULTS for features in (False, True)]
    done = asyncio.run(_play(faults, a_last, tmp_path))
    assert sorted({(x.fault, x.features) for x, _ in done}) == sorted(faults)
    # ... and the features were at work: views that left out what the stream carried before
    views = [m.decision_request.view for x, _ in done if x.features for st in x.streams
             for m in st if m.HasField("decision_request")]  # fmt: skip
    assert any(v.bids_omitted or v.tricks_omitted for v in views)
    assert any(v.deal_results_omitted for v in views)
    # ... and the cross answers named both ids a match had asked already and ids it had not
    said = " ".join(rej.message for x, _ in done for rej in x.rejected())
    assert "was answered already" in said and "has not been sent to this seat" in said
