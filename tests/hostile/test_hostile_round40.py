"""Hostile round 40: angles the earlier rounds (see round 38's inventory) did not drive.

- answers of a kind that is not this phase's, or not this ruleset's at all: a throw-in in
  classic (which has none), a concede where ``concede`` is off, a bid or a pass after the
  auction, a give while naming the contract, a play while passing, a contract while
  passing, a give to itself, a give of a card not in hand, a give to a seat that got one,
  a contract off the step, and the answer to the seat's previous request sent again with
  the current id (a stale replay);
- a second stream of a seated bot's token whose first message is a ``Decision`` for the
  pending request, or a ``Hello`` of another protocol version, at each phase of a deal;
- a second ``Hello`` on a welcomed stream asking for what the first did not (batches),
  or naming another protocol version.

In each: the referee stays up, the honest seats' matches complete with no incident, the
record replays, the hostile seat gets the documented refusal naming what was wrong, and
no message it got holds a card its seat may not see.

Defect found: a throw-in in a ruleset without one (classic, ``all_pass = first_hand``)
was refused as "only the last hand who took the talon after an all-pass may throw in",
which sends a bot author looking for a seat and a moment this ruleset does not have; it
now says there is no throw-in in the ruleset.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.protocol import action_from_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.hostile.test_hostile_audit import Client, _audit
from tests.hostile.test_hostile_round32 import _passer
from tests.hostile.test_hostile_round34 import _attach, _replays
from tests.hostile.test_hostile_round37 import _client_of, _Wire
from tests.support.harness import no_error_logged, until  # noqa: F401 (a fixture)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")


# ------------------------------------------------- answers of another phase or ruleset


def _off_answers(v: pb.PlayerView, previous: pb.Action | None) -> dict[str, pb.Action]:
    """Illegal answers for view ``v`` by name (none of them in its legal actions)."""
    held = {(c.suit, c.rank) for c in v.hand}
    s, r = next((s, r) for s in range(1, 5) for r in range(1, 7) if (s, r) not in held)
    other = next(x for x in v.active_seats if x != v.seat)
    out = {
        "throw-in": pb.Action(throw_in=pb.ThrowIn()),
        "concede": pb.Action(concede=pb.Concede()),
        "bid": pb.Action(bid=pb.Bid(amount=120)),
        "pass": pb.Action(**{"pass": pb.Pass()}),
        "contract": pb.Action(contract=pb.NameContract(amount=120)),
        "contract-off-step": pb.Action(contract=pb.NameContract(amount=v.bid + 3)),
        "give-self": pb.Action(give=pb.Give(card=v.hand[0], to_seat=v.seat)),
        "give-not-held": pb.Action(give=pb.Give(card=pb.Card(suit=s, rank=r), to_seat=other)),  # type: ignore[arg-type]
        "give": pb.Action(give=pb.Give(card=v.hand[0], to_seat=other)),
        "play": pb.Action(play=pb.PlayCard(card=v.hand[0])),
    }
    if previous is not None:
        out["stale"] = previous
    return {k: a for k, a in out.items() if a not in v.legal_actions}


#: What the refusal of an answer of the phase's own kind says, by answer.
_SAYS = {
    "throw-in": "there is no throw-in in this ruleset (all_pass = first_hand",
    "concede": "conceding is off in this ruleset",
    "contract-off-step": "a contract must be a multiple of 5",
    "give-self": "you cannot give a card to yourself",
    "give-not-held": "is not in your hand",
    "give": "already received a card: one card to each opponent",  # (the other got one)
}
#: The answers each phase takes (any other is refused for its kind).
_OWN = {
    pb.PHASE_PASSING: {"give", "give-self", "give-not-held", "throw-in"},
    pb.PHASE_CONTRACT: {"contract", "contract-off-step", "concede", "throw-in"},
    pb.PHASE_PLAYING: {"play"},
}
_PHASE_WORDS = {
    pb.PHASE_PASSING: ("passing", "Give"),
    pb.PHASE_CONTRACT: ("contract", "Contract"),
    pb.PHASE_PLAYING: ("playing", "Play"),
}


def _says(phase: int, kind: str) -> str:
    """What the refusal of answer ``kind`` in ``phase`` must say ("": no more than that it
    is illegal: a stale answer, whatever it was; a contract or a card the rules refuse
    for reasons the round does not pin)."""
    if kind == "stale":
        return ""
    if kind not in _OWN[phase]:
        word, expected = _PHASE_WORDS[phase]
        return f"is not allowed in the {word} phase (expected {expected})"
    return _SAYS.get(kind, "")


def test_answers_of_another_phase_or_ruleset_are_strikes_naming_why() -> None:
    """Classic with ``concede = off``, six deals, seed 1: x bids the highest it may, then,
    at each later request, sends one answer of another phase or one this ruleset does not
    have (each kind once per phase, then legally). Each is an ILLEGAL strike whose refusal
    names the rule broken (no throw-in in classic, conceding off, the phase's kinds, the
    step, the card not held, a give to itself or to a seat that got one) with the
    request's legal actions and the first as fallback; the record has those strikes only,
    all x's, and replays; and nothing x got holds a card its seat may not see."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=6, concede="off")
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, max_strikes=1000))
    passer = _passer(ref)
    tried: dict[str, tuple[int, str, pb.DecisionRequest]] = {}  # request id -> what
    done: set[tuple[int, str]] = set()
    sent: list[pb.BotMessage] = []
    last: list[pb.Action] = []
    n_sent: dict[str, int] = {}  # request id -> index of its answer in ``sent``

    def answer(r: pb.DecisionRequest, a: pb.Action) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=a)
        sent.append(pb.BotMessage(decision=d))
        ref.on_decision(ref.session("x"), d)

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        v = r.view
        if bot != "x":
            passer(bot, r)
            return
        if v.phase != pb.PHASE_BIDDING:
            offs = _off_answers(v, last[-1] if last else None)
            kind = next((k for k in offs if (v.phase, k) not in done), None)
            if kind is not None:
                done.add((v.phase, kind))
                tried[r.request_id] = (v.phase, kind, r)
                n_sent[r.request_id] = len(sent)
                last.append(offs[kind])
                answer(r, offs[kind])
                return
        bids = [a for a in v.legal_actions if a.HasField("bid")]
        a = bids[-1] if bids else v.legal_actions[0]
        last.append(a)
        answer(r, a)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        streams = _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", rules, 1, ["x", "a", "b"]), streams

    rec, streams = asyncio.run(main())
    kinds = {k for _, k, _ in tried.values()}
    # Every kind was tried, in each of the three phases after the auction.
    assert {"throw-in", "concede", "bid", "pass", "contract", "give", "play", "stale"} <= kinds
    assert {p for p, _, _ in tried.values()} == set(_PHASE_WORDS)
    told = streams["x"].rejected()
    assert len(told) == len(tried) == len(rec["incidents"])
    assert all((i["kind"], i["seat"]) == ("illegal", 0) for i in rec["incidents"])
    for n, (t, inc) in enumerate(zip(told, rec["incidents"], strict=True), 1):
        phase, kind, r = tried[t.request_id]
        assert t.incident == pb.INCIDENT_ILLEGAL and t.strikes == n, t
        assert list(t.legal_actions) == list(r.view.legal_actions)
        assert t.fallback == r.view.legal_actions[0]
        a = action_from_pb(sent[n_sent[t.request_id]].decision.action)
        assert t.message.startswith(f"illegal action '{a}' by seat 0: "), t.message
        says = _says(phase, kind)
        assert says in t.message and says in inc["detail"], (kind, phase, t.message)
        assert inc["detail"].startswith(t.message), inc["detail"]
    assert not streams["a"].rejected() and not streams["b"].rejected()
    assert rec["forfeits"] == [] and rec["result"]["deals"] == 6
    _replays(rec)
    assert _audit(Client(call=None, got=streams["x"].got, sent=sent), {"m1": rec}, {"m1": 0}) > 10


# ------------------------------------------- a second stream that answers before Hello


async def _first_not_hello(port: int, first: pb.BotMessage) -> tuple[Any, str, list[Any]]:
    """A stream of x's token whose first message is ``first``: status, details, messages."""
    from arena.v1 import arena_pb2_grpc as pb_grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer tok-x"),))
        await call.write(first)
        got = []
        try:
            while (msg := await call.read()) is not grpc.aio.EOF:
                got.append(msg)
        except grpc.aio.AioRpcError:
            pass
        return await call.code(), await call.details(), got


def test_a_decision_before_hello_on_a_second_stream_acts_for_nobody() -> None:
    """Classic, one deal, seed 1, x in seat 1 (over the wire, no batches asked): x bids
    the highest it may, so it is asked in every phase. At the first request of each
    phase, before answering it, x opens a second stream of its token whose first message
    is the pending request's legal answer (alone, then in a ``DecisionBatch``): each is
    refused with INVALID_ARGUMENT "the first message must be Hello, not decision(s)"
    before any Welcome, and neither the answer nor the stream counts: the request stays
    pending (x's own stream answers it, by the bot), x's stream is not replaced, no
    disconnect or strike is recorded. At the first request x also sends a second Hello
    on its welcomed stream asking for batches in protocol version 2: ignored (no
    ``Batch`` ever comes, the stream goes on). The record replays; nothing x got holds a
    card it may not see."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0))
    passer = _passer(ref)
    rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
    pending: asyncio.Queue[pb.DecisionRequest] = asyncio.Queue()
    refusals: list[tuple[int, Any, str, list[Any]]] = []

    def choose(r: pb.DecisionRequest) -> None:
        pending.put_nowait(r)  # answered by x_bot below, after its attacks

    async def x_bot(port: int, w: _Wire, match: asyncio.Task[dict[str, Any]]) -> None:
        phases: set[int] = set()
        while not match.done():
            get = asyncio.ensure_future(pending.get())
            await asyncio.wait((get, match), return_when=asyncio.FIRST_COMPLETED)
            if not get.done():
                get.cancel()
                return
            r = get.result()
            legal = list(r.view.legal_actions)
            bids = [a for a in legal if a.HasField("bid")]
            answer = bids[-1] if bids else legal[0]
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=answer)
            if not phases:
                again = pb.Hello(protocol_version=2, features=["batch"], bot_name="y")
                await w.send(pb.BotMessage(hello=again))
            if r.view.phase not in phases:
                phases.add(r.view.phase)
                for first in (
                    pb.BotMessage(decision=d),
                    pb.BotMessage(decisions=pb.DecisionBatch(decisions=[d])),
                ):
                    refusals.append((r.view.phase, *await _first_not_hello(port, first)))
                    # Still pending, still x's stream: nothing of that stream acted.
                    seat = ref.session("x").seats["m1"]
                    assert seat.pending is not None
                    assert seat.pending.request_id == r.request_id
                    assert ref.session("x").connected
            await w.send(pb.BotMessage(decision=d))

    async def main() -> tuple[dict[str, Any], _Wire]:
        _attach(ref, ("a", "b"), lambda bot, r: passer(bot, r))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                w = await _Wire.open(ch, pb.Hello(protocol_version=1), choose)
                match = asyncio.create_task(ref.run_match("m1", rules, 1, ["a", "x", "b"]))
                await x_bot(port, w, match)
                rec = await match
                await until(lambda: bool(w.ends()), "x's MatchEnded")
                await w.close()
                return rec, w
        finally:
            await ref.end_streams()
            await server.stop(0.5)

    rec, w = asyncio.run(main())
    assert {p for p, *_ in refusals} == {
        pb.PHASE_BIDDING,
        pb.PHASE_PASSING,
        pb.PHASE_CONTRACT,
        pb.PHASE_PLAYING,
    }
    for _, code, details, got in refusals:
        assert code == grpc.StatusCode.INVALID_ARGUMENT and got == [], (code, details)
        assert details.startswith("the first message must be Hello, not decision"), details
    assert rec["incidents"] == [] and rec["forfeits"] == [], rec["incidents"]
    x_moves = [a["by"] for d in rec["deals"] for a in d["actions"] if a["seat"] == 1]
    assert "fallback" not in x_moves and "bot" in x_moves
    assert not any(m.HasField("batch") for m in w.got)
    assert w.ends() and w.ends()[0].result.deals == 1
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 1}) > 5
