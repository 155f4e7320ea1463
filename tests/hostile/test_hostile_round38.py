"""Hostile round 38: sequences and timing the earlier rounds did not try.

Inventory of the earlier rounds (what they drive), in short: stream openings refused
(tokens, no Hello, garbage, oversized, metadata past limits, tokens' spelling), welcomed
streams misbehaving (second Hello, empty messages and batches, floods, bytes no generated
code writes, byte-by-byte mutations, compression bombs), answers refused for what they are
(stale, duplicated, other seats', other matches', long ids, after a forfeit, after the end,
thrown-in deals, the 4-player dealer), timing at a single decision (deadline to the
microsecond, loop stalls, late answers, every other request late), streams dropped,
half-closed, cancelled or replaced at each phase and between deals, a bot at several tables
answering in part or with each other's ids, Hello variants, transport abuse (windows of
nothing or one byte, rapid reset, ping and CONTINUATION floods, slowloris, SETTINGS
extremes), GetInfo / health / reflection abuse, and hypothesis-driven hostile sequences.

Not driven before, here:

- a seat honest for a whole match that reaches its strike limit at its very last decision
  (the last card of the last deal, ``ask_forced``), and answers again in the same instant;
  the same limit reached by a timeout at the last card, the late answer sent as the
  TIMEOUT refusal is read, and again after the ``MatchEnded``;
- a hostile client taking a real SDK bot's token while the SDK bot is mid-decision (its
  bot thinking): the SDK stops as documented, the hostile stream is asked the same request
  again, its illegal answer is a strike, and nothing it is shown is another seat's;
- answers ahead: with the last card of a deal, and of the match, in one ``DecisionBatch``,
  the same answer again and one to the request id that comes next;
- one bot at two tables of its own, each answer to one table riding in a batch with an
  illegal one to the other until that table forfeits it, then answering the forfeited
  table with its own and the other table's ids;
- a bot opening a new stream of its token right after each answer (the answer, the next
  request and the Hello racing on three HTTP/2 streams).

In each: the referee stays up, the honest seats' matches complete and are recorded, the
hostile seat gets the documented refusal naming what was wrong, and no message it got
holds a card its seat may not see. No defect found: these pin the behaviour checked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.hostile.test_hostile_audit import STRIKES, _audit, _bad_action
from tests.hostile.test_hostile_round32 import _passer
from tests.hostile.test_hostile_round34 import ONE_DEAL, _attach, _replays
from tests.hostile.test_hostile_round37 import _client_of, _served, _Wire
from tests.support.harness import no_error_logged, until  # noqa: F401 (a fixture)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

#: An illegal answer for each phase: the kind in ``STRIKES``.
_ILLEGAL_IN = {phase: kind for kind, (phase, incident, _) in STRIKES.items()
               if incident == pb.INCIDENT_ILLEGAL and "2^32" not in kind}  # fmt: skip


class _Ordered(_Wire):
    """A :class:`_Wire` whose writes wait for each other: gRPC takes one write at a time
    (a second at once fails in the client with GRPC_CALL_ERROR_TOO_MANY_OPERATIONS), and
    these tests write batches from tasks of their own besides the reader's answers."""

    lock: asyncio.Lock | None = None

    async def send(self, msg: pb.BotMessage) -> None:
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            await super().send(msg)


def _refusals(w: _Wire) -> list[pb.DecisionRejected]:
    return [m.decision_rejected for m in w.got if m.HasField("decision_rejected")]


def _ends_of(streams: dict[str, Any], name: str) -> list[pb.MatchEnded]:
    return [m.match_ended for m in streams[name].got if m.HasField("match_ended")]


# ------------------------------------------------------------------ the strike limit at the end


def test_the_strike_limit_reached_at_the_last_card_forfeits_and_the_end_is_whole() -> None:
    """Classic, one deal, every card asked (``ask_forced``), ``max_strikes`` 3. x answers
    its first two requests with an empty action (MALFORMED, strikes 1 and 2 of 3), plays
    honestly after, and at its last card of the match — one card left in its hand — plays
    a card of the first trick (ILLEGAL "not in your hand", strike 3 of 3) and at once sends
    the same answer again. The third strike forfeits the seat on the spot: the fallback
    plays its card, the match ends as the rules make it, and the record and every seat's
    ``MatchEnded`` place x last with ``forfeits: [0]``. The second answer is refused as a
    WRONG_REQUEST or comes after the end (it changes nothing either way); x is asked
    nothing after its forfeit, and nothing x got holds a card its seat may not see."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, max_strikes=3,
                                ask_forced=True))  # fmt: skip
    streams = _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    asked: list[pb.DecisionRequest] = []
    last: dict[str, Any] = {}

    def choose(r: pb.DecisionRequest) -> pb.Action | None:
        asked.append(r)
        v = r.view
        if len(asked) <= 2:
            return pb.Action()  # no kind set: MALFORMED
        if v.phase == pb.PHASE_PLAYING and len(v.hand) == 1:
            gone = v.tricks[0].cards[0].card  # played at the first trick: not held
            last["rid"], last["card"] = r.request_id, gone
            return pb.Action(play=pb.PlayCard(card=gone))
        return v.legal_actions[0]

    async def body(port: int) -> tuple[_Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w = await _Ordered.open(ch, pb.Hello(bot_name="x", protocol_version=1), choose)
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 3, ["x", "a", "b"]))
            await until(lambda: "rid" in last, "x's last card")
            # The same answer again, as the third strike lands (the reader sent the first).
            again = pb.Decision(request_id=last["rid"], match_id="m1",
                                action=pb.Action(play=pb.PlayCard(card=last["card"])))  # fmt: skip
            await w.send(pb.BotMessage(decision=again))
            rec = await m1
            await until(lambda: bool(w.ends()), "x's end")
            await w.close()
            return w, rec

    w, rec = asyncio.run(_served(ref, body))
    rejected = _refusals(w)
    strikes = [r for r in rejected if r.incident != pb.INCIDENT_WRONG_REQUEST]
    assert [(r.incident, r.strikes, r.strikes_allowed) for r in strikes] == [
        (pb.INCIDENT_MALFORMED, 1, 3), (pb.INCIDENT_MALFORMED, 2, 3), (pb.INCIDENT_ILLEGAL, 3, 3)
    ]  # fmt: skip
    third = strikes[2]
    assert third.request_id == last["rid"] and "is not in your hand" in third.message
    assert len(third.legal_actions) == 1 and third.fallback == third.legal_actions[0]
    for r in rejected[3:]:  # the answer sent again: refused, no strike, nothing legal
        assert r.incident == pb.INCIDENT_WRONG_REQUEST and r.request_id == last["rid"]
        assert not r.legal_actions and not r.HasField("fallback"), r
        if r.strikes:  # read before the end: the seat's strikes, and why
            assert r.strikes == 3 and "the seat has forfeited" in r.message, r
        else:  # read after it: the match is gone, as for any id of no match of the bot's
            assert r.message == "you have no seat in a running match 'm1'", r
    # x asked nothing after its last card; the match ended as the rules make it.
    assert asked[-1].request_id == last["rid"]
    strike_at = [i for i, m in enumerate(w.got) if m.HasField("decision_rejected")
                 and m.decision_rejected.incident != pb.INCIDENT_WRONG_REQUEST]  # fmt: skip
    assert w.kinds().index("match_ended") > strike_at[-1]
    assert rec["forfeits"] == [0]
    assert [(i["kind"], i["seat"]) for i in rec["incidents"] if i["kind"] != "wrong_request"] == [
        ("malformed", 0), ("malformed", 0), ("illegal", 0), ("forfeit", 0)
    ]  # fmt: skip
    assert "3 strikes" in rec["incidents"][3]["detail"]
    places = rec["result"]["places"]
    assert places[0] == max(places) and places[0] > min(places)
    assert rec["result"]["reason"] != "interrupted" and rec["result"]["deals"] == 1
    # The fallback, not x's card, is the last action of the deal.
    final = rec["deals"][0]["actions"]
    mine = [e for e in final if e.get("seat", e.get("actor")) == 0]
    assert mine and mine[-1].get("by") == "fallback", mine[-1]
    for end in [*_ends_of(streams, "a"), *_ends_of(streams, "b"), *w.ends()]:
        assert end.match_id == "m1" and list(end.result.forfeits) == [0]
        assert list(end.result.places) == places
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 10


# ------------------------------------------------------------------ an SDK bot's token taken


def test_a_hostile_client_taking_an_sdk_bots_token_mid_decision() -> None:
    """Honest SDK bot a (``BotRunner``) plays m1 with in-process b and c; at its first
    request its bot thinks (held). Meanwhile a hostile client opens a stream with a's token
    and says Hello as "a": the SDK's stream ends with ABORTED and the runner stops with its
    documented error ("took this bot's seats over to another connection with the same
    token"), as docs/protocol.md says a bot must; the hostile stream is welcomed as a,
    told the match resumed and asked the same request (same id) again. Its answer is an
    illegal one for the phase: ILLEGAL naming the rule, strike 1 of 3, the fallback played;
    it answers honestly after. The SDK's bot, released, answers nothing that counts: the
    request was the hostile's to answer. m1 completes and replays; b and c get its end;
    the record holds no incident but that strike; nothing either stream got holds a card
    of another seat."""
    from sdk import Bot
    from sdk.client import ArenaError, BotRunner

    thinking = threading.Event()
    release = threading.Event()
    sdk_views: list[Any] = []

    class _Held(Bot):
        def act(self, view: Any) -> Any:
            sdk_views.append(view)
            if len(sdk_views) == 1:
                thinking.set()
                release.wait(30)
            return view.legal_actions[0]

    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, reconnect_grace_s=30))
    streams = _attach(ref, ("b", "c"), _passer(ref))
    ref.add_bot("a", "tok-a")
    first: dict[str, Any] = {}

    def hostile(r: pb.DecisionRequest) -> pb.Action | None:
        if not first:
            first["request"] = r
            return _bad_action(_ILLEGAL_IN[r.view.phase], r.view)
        return r.view.legal_actions[0]

    async def body(port: int) -> tuple[Any, _Wire, dict[str, Any]]:
        runner = BotRunner(_Held, f"127.0.0.1:{port}", "tok-a", name="a", retry_for=10)
        task = asyncio.create_task(runner.run())
        try:
            await until(lambda: ref.session("a").connected, "the SDK bot connected")
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 7, ["a", "b", "c"]))
            await until(thinking.is_set, "the SDK bot thinking")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                w = await _Wire.open(ch, pb.Hello(bot_name="a", protocol_version=1), hostile,
                                     token="tok-a")  # fmt: skip
                outcome = (await asyncio.gather(task, return_exceptions=True))[0]
                release.set()
                rec = await m1
                await until(lambda: bool(w.ends()), "the hostile stream's end")
                await w.close()
            return outcome, w, rec
        finally:
            release.set()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    outcome, w, rec = asyncio.run(_served(ref, body))
    assert isinstance(outcome, ArenaError), outcome
    assert "took this bot's seats over to another connection with the same token" in str(outcome)
    assert w.got[0].welcome.bot_name == "a"
    started = [m.match_started for m in w.got if m.HasField("match_started")]
    assert len(started) == 1 and started[0].resumed and started[0].seat == 0
    r = first["request"]
    assert r.request_id == "1" and r.match_id == "m1"
    assert len(sdk_views) == 1  # the SDK's bot was asked once: that request, held
    rejected = _refusals(w)
    assert len(rejected) == 1
    rej = rejected[0]
    assert rej.request_id == "1" and rej.incident == pb.INCIDENT_ILLEGAL
    assert (rej.strikes, rej.strikes_allowed) == (1, 3)
    words = STRIKES[_ILLEGAL_IN[r.view.phase]][2]
    assert words in rej.message, rej.message
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("illegal", 0)]
    assert rec["forfeits"] == [] and rec["result"]["reason"] != "interrupted"
    for n in ("b", "c"):
        assert [e.match_id for e in _ends_of(streams, n)] == ["m1"]
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 3


# ------------------------------------------------------------------ answering ahead at a deal's end

TWO_DEALS = dataclasses.replace(PRESETS["classic"], max_deals=2)


def test_answers_ahead_sent_with_a_deals_last_card_are_refused_and_change_nothing() -> None:
    """Classic, two deals, every card asked. At its last card of each deal x answers with
    one ``DecisionBatch``: its card, the same answer again, and an answer to the request it
    guesses comes next (id + 1: the first of the next deal, or none at the match's end) —
    the moment a deal, then the match, ends. The card plays; the duplicate is refused as
    "answered already", the guess as "has not been sent to this seat", both WRONG_REQUEST
    without a strike and without legal actions (nothing is pending once the card is in).
    The request id + 1, when it comes, is a fresh request, answered by x then as any other:
    the guess was not kept for it. Both deals complete, the record replays with no strike,
    and nothing x got holds a card its seat may not see."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, ask_forced=True))
    streams = _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    wire: dict[str, _Wire] = {}
    ahead: list[tuple[str, int]] = []  # (the guessed id, the deal of the card it came with)
    tasks: list[asyncio.Task[None]] = []

    def choose(r: pb.DecisionRequest) -> pb.Action | None:
        v = r.view
        if not (v.phase == pb.PHASE_PLAYING and len(v.hand) == 1):
            return v.legal_actions[0]
        card = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                           action=v.legal_actions[0])  # fmt: skip
        guess = pb.Decision(request_id=str(int(r.request_id) + 1), match_id=r.match_id)
        getattr(guess.action, "pass").SetInParent()
        ahead.append((guess.request_id, v.deal_number))
        batch = pb.DecisionBatch(decisions=[card, card, guess])
        tasks.append(asyncio.ensure_future(wire["x"].send(pb.BotMessage(decisions=batch))))
        return None

    async def body(port: int) -> tuple[_Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            wire["x"] = w = await _Ordered.open(ch, pb.Hello(bot_name="x", protocol_version=1),
                                             choose)  # fmt: skip
            rec = await ref.run_match("m1", TWO_DEALS, 11, ["x", "a", "b"])
            await until(lambda: bool(w.ends()), "x's end")
            await asyncio.gather(*tasks)
            await w.close()
            return w, rec

    w, rec = asyncio.run(_served(ref, body))
    assert [d for _, d in ahead] == [0, 1]
    rejected = _refusals(w)
    assert len(rejected) == 4
    pairs = list(zip(rejected[::2], rejected[1::2], strict=True))
    for (guess, _), (dup, early) in zip(ahead, pairs, strict=True):
        assert dup.incident == early.incident == pb.INCIDENT_WRONG_REQUEST
        assert dup.request_id == str(int(guess) - 1)
        assert f"request {dup.request_id!r} was answered already" in dup.message
        assert early.request_id == guess
        assert f"request {guess!r} has not been sent to this seat" in early.message
        for r in (dup, early):
            assert r.strikes == 0 and not r.legal_actions and not r.HasField("fallback")
            assert "no decision of yours is pending" in r.message
    # After the first deal's last card, the guessed id is asked: afresh, in the next deal.
    asked = {m.decision_request.request_id: m.decision_request for m in w.got
             if m.HasField("decision_request")}  # fmt: skip
    first_guess = ahead[0][0]
    assert asked[first_guess].view.deal_number == 1
    assert ahead[1][0] not in asked  # the match ended with the last card
    assert {i["kind"] for i in rec["incidents"]} == {"wrong_request"}
    assert rec["forfeits"] == [] and rec["result"]["deals"] == 2
    assert [e.match_id for e in _ends_of(streams, "a")] == ["m1"]
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 10


# ------------------------------------------------------------------ one table forfeited, one not


def test_a_bot_forfeiting_one_table_by_strikes_plays_on_at_its_other_table() -> None:
    """x sits at m1 (x, a, b) and m2 (c, x, d) at once. Until its forfeit at m1 it holds
    each request of m2 until m1 asks it, and answers both in one ``DecisionBatch``: an
    illegal action for m1's phase and m2's answer, legal; after it, m2's requests at once.
    Its third strike forfeits it at m1 (the batch's other half still counts at m2); then x
    answers m1 again with its last id and with m2's pending id (another table's id: refused
    for m1, not applied to m2). m1 completes with x last and ``forfeits: [0]``; m2 completes
    as the rules make it, with no incident of x's and no strike: a forfeit, its strikes and
    its refused answers stay at their table. Nothing x got holds a card its seat may not
    see at either."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, max_strikes=3))
    streams = _attach(ref, ("a", "b", "c", "d"), _passer(ref))
    ref.add_bot("x", "tok-x")
    wire: dict[str, _Wire] = {}
    pending: dict[str, pb.DecisionRequest] = {}
    tasks: list[asyncio.Task[None]] = []
    after: list[pb.Decision] = []
    batches: list[int] = []  # how many decisions each batch to m1 carried

    def answer(r: pb.DecisionRequest, action: pb.Action) -> pb.Decision:
        return pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)

    def choose(r: pb.DecisionRequest) -> pb.Action | None:
        if r.match_id == "m2" and len(batches) >= 3:  # forfeited at m1: m2 alone
            return r.view.legal_actions[0]
        pending[r.match_id] = r
        if "m1" not in pending:
            return None  # m2's request waits for m1's next one, to go in one batch
        m1 = pending.pop("m1")
        batch = [answer(m1, _bad_action(_ILLEGAL_IN[m1.view.phase], m1.view))]
        if "m2" in pending:
            m2 = pending.pop("m2")
            batch.append(answer(m2, m2.view.legal_actions[0]))
        batches.append(len(batch))
        msg = pb.BotMessage(decisions=pb.DecisionBatch(decisions=batch))
        tasks.append(asyncio.ensure_future(wire["x"].send(msg)))
        return None

    def strikes_at_m1() -> int:
        return sum(m.HasField("decision_rejected") and m.decision_rejected.match_id == "m1"
                   and m.decision_rejected.strikes == 3 for m in wire["x"].got)  # fmt: skip

    async def body(port: int) -> tuple[_Wire, dict[str, Any], dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            wire["x"] = w = await _Ordered.open(ch, pb.Hello(bot_name="x", protocol_version=1),
                                             choose)  # fmt: skip
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 21, ["x", "a", "b"]))
            m2 = asyncio.create_task(ref.run_match("m2", ONE_DEAL, 22, ["c", "x", "d"]))
            await until(lambda: strikes_at_m1() > 0, "x's third strike at m1")
            last_m1 = [m.decision_request for m in w.got if m.HasField("decision_request")
                       and m.decision_request.match_id == "m1"][-1]  # fmt: skip
            after.append(answer(last_m1, last_m1.view.legal_actions[0]))
            if not m2.done():
                m2_ids = [m.decision_request.request_id for m in w.got
                          if m.HasField("decision_request")
                          and m.decision_request.match_id == "m2"]  # fmt: skip
                after.append(pb.Decision(request_id=m2_ids[-1], match_id="m1",
                                         action=last_m1.view.legal_actions[0]))  # fmt: skip
            await w.send(pb.BotMessage(decisions=pb.DecisionBatch(decisions=after)))
            rec1, rec2 = await asyncio.gather(m1, m2)
            await until(lambda: len(w.ends()) == 2, "x's two ends")
            # And the refusals of that last batch: the matches may end before the referee
            # reads it (under load it was read after both ends, and the stream was closed
            # before its refusals came).
            await until(lambda: len(wrong_of(w)) >= len(after), "the refusals after the forfeit")
            await asyncio.gather(*tasks)
            await w.close()
            return w, rec1, rec2

    def wrong_of(w: _Wire) -> list[pb.DecisionRejected]:
        return [m.decision_rejected for m in w.got if m.HasField("decision_rejected")
                and m.decision_rejected.incident == pb.INCIDENT_WRONG_REQUEST]  # fmt: skip

    w, rec1, rec2 = asyncio.run(_served(ref, body))
    assert len(batches) == 3 and 2 in batches, batches  # m2's answers rode with m1's strikes
    assert not pending, pending
    rej = _refusals(w)
    at_m1 = [r for r in rej if r.match_id == "m1" and r.incident == pb.INCIDENT_ILLEGAL]
    assert [r.strikes for r in at_m1] == [1, 2, 3]
    for r in at_m1:
        assert r.message and r.legal_actions and r.HasField("fallback")
    # The answers sent after the forfeit: refused at m1 (forfeited, or gone if it ended).
    wrong = [r for r in rej if r.incident == pb.INCIDENT_WRONG_REQUEST]
    assert len(wrong) == len(after) and all(r.match_id == "m1" for r in wrong)
    for r in wrong:
        assert not r.legal_actions, r
        assert ("the seat has forfeited: it is asked nothing more" in r.message
                or r.message == "you have no seat in a running match 'm1'"), r  # fmt: skip
    assert not [r for r in rej if r.match_id == "m2"]
    assert rec1["forfeits"] == [0]
    assert [i["kind"] for i in rec1["incidents"] if i["seat"] == 0][:4] == [
        "illegal", "illegal", "illegal", "forfeit"
    ]  # fmt: skip
    assert rec1["result"]["places"][0] == max(rec1["result"]["places"])
    assert rec2["forfeits"] == [] and rec2["incidents"] == []
    x_at_m2 = [e for e in rec2["deals"][0]["actions"] if e.get("seat", e.get("actor")) == 1]
    assert x_at_m2 and all(e.get("by") in ("bot", "forced") for e in x_at_m2), x_at_m2
    ends = {e.match_id: e for e in w.ends()}
    assert list(ends["m1"].result.forfeits) == [0] and not ends["m2"].result.forfeits
    for n in ("c", "d"):
        told = _ends_of(streams, n)
        assert [e.match_id for e in told] == ["m2"] and not told[0].result.forfeits
    _replays(rec1)
    _replays(rec2)
    assert _audit(_client_of(w), {"m1": rec1, "m2": rec2}, {"m1": 0, "m2": 1}) > 10


# ------------------------------------------------------------- a stream replaced at each answer


def test_a_bot_replacing_its_stream_right_after_each_answer_loses_nothing() -> None:
    """x answers each request (one deal, every card asked) on its newest stream and, without
    waiting, opens a new stream of its token and says Hello: the answer and the Hello race
    on two HTTP/2 streams, and the next request races the Hello too. Seen most: the answer
    counts, the next request goes to the old stream (which no longer answers), and the new
    one, resuming the seat, is asked it again and answers it; the other orders (the Hello
    read first: the old stream replaced, its answer unread, the request asked again) must
    end the same. Each request counts once: the match completes with no incident, no
    disconnect and every one of x's moves its bot's; each old stream ends ABORTED "replaced
    by a newer stream"; nothing x got on any stream holds a card its seat may not see."""
    ref = Referee(RefereeConfig(decision_ms=20_000, time_bank_ms=0, ask_forced=True,
                                reconnect_limit=100))  # fmt: skip
    streams = _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    wires: list[_Wire] = []
    opening: list[asyncio.Task[None]] = []
    started: list[int] = []
    ended: list[tuple[grpc.StatusCode, str]] = []
    hello = pb.Hello(bot_name="x", protocol_version=1)

    async def body(port: int) -> dict[str, Any]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:

            async def replace() -> None:
                started.append(len(started))
                me = started[-1]
                wires.append(await _Ordered.open(ch, hello, lambda r: choose(me, r)))

            def choose(me: int, r: pb.DecisionRequest) -> pb.Action | None:
                if me != started[-1]:
                    return None  # a stream being replaced: the newest is asked it again
                if len(opening) < 12:
                    opening.append(asyncio.ensure_future(replace()))
                return r.view.legal_actions[0]

            await replace()
            rec = await ref.run_match("m1", ONE_DEAL, 13, ["x", "a", "b"])
            await asyncio.gather(*opening)
            assert len(opening) >= 8, len(opening)  # one per request of x's, up to 12
            await until(lambda: bool(wires[-1].ends()), "x's end on its last stream")
            for w in wires[:-1]:  # each replaced: ended by the referee, not by this test
                await until(w.call.done, "a replaced stream's end")
                ended.append((await w.call.code(), await w.call.details()))
            for w in wires:
                await w.close()
            return rec

    rec = asyncio.run(_served(ref, body))
    assert len(wires) == len(opening) + 1
    assert rec["incidents"] == [] and rec["forfeits"] == [] and rec["disconnects"] == [0, 0, 0]
    mine = [e for e in rec["deals"][0]["actions"] if e.get("seat", e.get("actor")) == 0]
    assert len(mine) >= 8 and all(e.get("by") == "bot" for e in mine), mine
    assert len(ended) == len(wires) - 1 >= 8
    for code, details in ended:
        # (a request the referee was writing to the old stream as it replaced it races the
        # status: grpcio then reports its own INTERNAL, docs/protocol.md's status table;
        # seen 1 run in many, as in tests/hostile/test_hop_round50.py)
        raced = (code, details) == (grpc.StatusCode.INTERNAL, "Internal error from Core")
        replaced = code == grpc.StatusCode.ABORTED and "replaced by a newer stream" in details
        assert replaced or raced, (code, details)
    assert [e.match_id for e in wires[-1].ends()] == ["m1"]
    assert [e.match_id for e in _ends_of(streams, "a")] == ["m1"]
    _replays(rec)
    assert _audit(_client_of(*wires), {"m1": rec}, {"m1": 0}) > 10


# ------------------------------------------------------------------ the deadline at the last card


def test_a_timeout_at_the_last_card_that_reaches_the_strike_limit_ends_the_match_whole() -> None:
    """Classic, one deal, every card asked, ``max_strikes`` 1: x answers at once until its
    last card, then lets the deadline pass; the moment it reads the TIMEOUT refusal it sends
    its answer anyway. The timeout is x's one strike (1 of 1: TIMEOUT, the legal card and
    the fallback, "no decision within 2000 ms"): the seat forfeits there, the fallback
    plays its card and the match ends. The late answer changes nothing: refused (the seat
    has forfeited) or, read after the end, for a match x no longer has a seat in; sent again
    after x's ``MatchEnded``, the latter. The record holds the timeout then the forfeit, x
    placed last; every seat's end says so."""
    ref = Referee(RefereeConfig(decision_ms=2_000, time_bank_ms=0, max_strikes=1,
                                ask_forced=True))  # fmt: skip
    streams = _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    last: list[pb.DecisionRequest] = []

    def choose(r: pb.DecisionRequest) -> pb.Action | None:
        if r.view.phase == pb.PHASE_PLAYING and len(r.view.hand) == 1:
            last.append(r)
            return None
        return r.view.legal_actions[0]

    def timed_out(w: _Wire) -> bool:
        return any(r.incident == pb.INCIDENT_TIMEOUT for r in _refusals(w))

    async def body(port: int) -> tuple[_Wire, dict[str, Any]]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            w = await _Ordered.open(ch, pb.Hello(bot_name="x", protocol_version=1), choose)
            m1 = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 17, ["x", "a", "b"]))
            await until(lambda: timed_out(w), "x's timeout")
            r = last[0]
            late = pb.Decision(request_id=r.request_id, match_id="m1",
                               action=r.view.legal_actions[0])  # fmt: skip
            await w.send(pb.BotMessage(decision=late))
            rec = await m1
            await until(lambda: bool(w.ends()), "x's end")
            await w.send(pb.BotMessage(decision=late))  # after the end, for good measure
            # Each late answer is refused once: the timeout's refusal and two more. (Waiting
            # for any message after the end was met at times by the first answer's refusal,
            # read after the end, and the test closed before the second's came.)
            await until(lambda: len(_refusals(w)) >= 3, "the refusal after the end")
            await w.close()
            return w, rec

    w, rec = asyncio.run(_served(ref, body))
    assert len(last) == 1
    rid = last[0].request_id
    timeout, *wrong = _refusals(w)
    assert timeout.incident == pb.INCIDENT_TIMEOUT and timeout.request_id == rid
    assert (timeout.strikes, timeout.strikes_allowed) == (1, 1)
    assert timeout.message.startswith("no decision within 2000 ms")
    assert len(timeout.legal_actions) == 1
    assert timeout.fallback == timeout.legal_actions[0]
    assert len(wrong) == 2
    for r in wrong:
        assert r.incident == pb.INCIDENT_WRONG_REQUEST and r.request_id == rid
        assert not r.legal_actions
        assert ("the seat has forfeited: it is asked nothing more" in r.message
                or r.message == "you have no seat in a running match 'm1'"), r  # fmt: skip
    assert wrong[-1].message == "you have no seat in a running match 'm1'"
    assert w.kinds()[-1] == "decision_rejected" and "match_ended" in w.kinds()[-3:-1]
    kinds = [(i["kind"], i["seat"]) for i in rec["incidents"] if i["kind"] != "wrong_request"]
    assert kinds == [("timeout", 0), ("forfeit", 0)]
    assert rec["forfeits"] == [0]
    places = rec["result"]["places"]
    assert places[0] == max(places) and places[0] > min(places)
    for end in [*_ends_of(streams, "a"), *_ends_of(streams, "b"), *w.ends()]:
        assert list(end.result.forfeits) == [0] and list(end.result.places) == places
    _replays(rec)
    assert _audit(_client_of(w), {"m1": rec}, {"m1": 0}) > 10
