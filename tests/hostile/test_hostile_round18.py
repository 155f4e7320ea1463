"""Hostile round 18: races, reconnects, batches and the clock, with raw grpc clients (the
proto only) against a real referee."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))
sys.path.insert(0, str(Path(__file__).parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).parent))

from click.testing import CliRunner
from harness import arena, attach_in_process, no_error_logged  # noqa: F401 (a fixture)
from test_e2e_matches import _cards_in, _visible_moments
from test_hostile_round17 import _Conformance

from arena.cli import main as cli_main
from arena.referee import Referee, RefereeConfig
from arena.referee.lag import LoopLag
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, Bid, Game, Pass, Phase, Ruleset, parse_action
from tests.support.core_internal import core_internal

pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def _until(cond: Any) -> None:
    """Poll ``cond`` until it holds (a condition, not a time, is asserted: the caller's
    ``wait_for`` bounds it)."""
    while not cond():
        await asyncio.sleep(0.01)


async def _match_with_a_bot_that_reads_nothing(a: Any, x_call: Any) -> dict[str, Any]:
    """Play one deal of ``x`` (on ``x_call``, which reads nothing: every request of its
    times out) against two in-process bots answering at once; the record."""
    ref = a.referee

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    attach_in_process(ref, ("y", "z"), answer)
    await x_call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
    await asyncio.wait_for(_until(lambda: ref.session("x").connected), 30)
    rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"])
    return rec


def test_an_end_lost_with_its_stream_is_waited_for_when_the_arena_stops(tmp_path: Path) -> None:
    """Defect: a match's end queued on a bot's stream that then died unread (the call reset
    by the client, the connection gone) is kept for the bot and sent again when it comes
    back, but a stopping arena (`arena serve --matches K`, a tournament's last match) did
    not wait for it: ``away_with_results`` counted only ends of matches that ended while
    the bot was away. The bot, back within its grace, was refused ("the arena has played
    its matches") and never learned its last result. A bot that half-closed its stream
    after reading its end (as the SDK leaves) is still not waited for."""

    async def main() -> tuple[list[str], list[str], str]:
        async with arena(tmp_path, decision_ms=20, time_bank_ms=0, max_strikes=1000) as a:
            a.referee.add_bot("x", "tok-x")
            # A window of 1 KiB, never read: the referee's writes of the match wait.
            opts = (("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0))
            async with grpc.aio.insecure_channel(a.target, options=opts) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                rec = await _match_with_a_bot_that_reads_nothing(a, call)
                assert rec["result"]["reason"] in ("max_deals", "target"), rec["result"]
                # The end is queued (or written) on x's stream; x resets the call unread.
                call.cancel()
                ref = a.referee
                await asyncio.wait_for(_until(lambda: not ref._attached), 30)  # (call over)
                away = ref.away_with_results()
                # Back: the end comes again, right after the Welcome.
                again = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await again.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                assert (await again.read()).WhichOneof("kind") == "welcome"
                got = (await again.read()).match_ended.match_id
                # It read its end: leaving by a half-close is no loss (nobody waited for).
                await again.done_writing()
                while await again.read() is not grpc.aio.EOF:
                    pass
                await asyncio.wait_for(_until(lambda: not ref._attached), 30)
                left = ref.away_with_results()
            return away, left, got

    away, left, got = asyncio.run(main())
    assert away == ["x"], away  # (was [])
    assert got == "m" and left == [], (got, left)


def test_an_answer_read_past_the_deadline_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: an answer read after its deadline (limit + bank) was applied as the bot's,
    its time in the record past the deadline (here 500 ms of a 200 ms budget), whenever
    the read came before the deadline's timer ran: a referee loop held up by other work
    runs the two in the order they became ready, and the answer's read, queued first, won.
    The referee "never waits longer" than limit + bank, and times an answer when it reads
    it: one read later is a timeout (the fallback played, a strike), as when the timer
    runs first, and the late answer is refused as ``WRONG_REQUEST`` naming it. (Since
    round 33 a stall of the loop is the referee's time, not the bot's: ``LoopLag`` counts
    none here, so that the 500 ms are the bot's and its answer is read past its deadline.)"""
    monkeypatch.setattr(LoopLag, "TOLERANCE", math.inf)
    ref = Referee(RefereeConfig(decision_ms=200, time_bank_ms=0, max_strikes=1000))
    answered: list[bool] = []

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        if bot == "x" and not answered:
            time.sleep(0.5)  # the loop is held up: the deadline passes before the read
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ok = ref.on_decision(ref.session(bot), d)
        if bot == "x":
            answered.append(ok)

    async def main() -> dict[str, Any]:
        attach_in_process(ref, ("x", "y", "z"), answer)
        rec: dict[str, Any] = await ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"])
        return rec

    rec = asyncio.run(main())
    late = [a for d in rec["deals"] for a in d["actions"] if a["by"] == "bot" and a["ms"] > 200]
    assert not late, late  # (was the first answer of x, 500 ms)
    assert answered[0] is False, answered
    mine = [i for i in rec["incidents"] if i["seat"] == 0]
    # (the refusal as it is read, then the strike as the match plays the fallback)
    assert mine[0]["kind"] == "wrong_request" and "timed out" in mine[0]["detail"], mine
    assert mine[1]["kind"] == "timeout" and "within 200 ms" in mine[1]["detail"], mine


# ----------------------------------------------------------------------------- races that hold


async def _racer(target: str, token: str, rnd: random.Random, stop: asyncio.Event,
                 got: list[list[pb.ServerMessage]]) -> None:  # fmt: skip
    """A bot of the proto alone that races its own streams: at its requests it drops the
    stream before answering or right after, cancels it with the answer mid-write, opens a
    rival stream of its token, answers in a batch with a duplicate and the previous and
    next ids in random order, or holds answers and sends them in a burst; every Hello
    names the matches it last saw as running, ended a moment ago or not. Each stream's
    messages go to ``got``."""
    running: set[str] = set()
    while not stop.is_set():
        msgs: list[pb.ServerMessage] = []
        got.append(msgs)
        hello = pb.Hello(protocol_version=1, features=["batch"] if rnd.random() < 0.5 else [])
        hello.running.extend(sorted(running))
        held: list[pb.Decision] = []
        async with grpc.aio.insecure_channel(target) as ch:
            call = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
            try:
                await call.write(pb.BotMessage(hello=hello))
                async for raw in call:
                    msgs.append(raw)
                    for m in _flat(raw):
                        kind = m.WhichOneof("kind")
                        if kind == "match_started":
                            running.add(m.match_started.match_id)
                        elif kind == "match_ended":
                            running.discard(m.match_ended.match_id)
                        if kind != "decision_request":
                            continue
                        r = m.decision_request
                        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=rnd.choice(list(r.view.legal_actions)))  # fmt: skip
                        x = rnd.random()
                        if x < 0.1:
                            raise _Dropped
                        if x < 0.2:
                            await call.write(pb.BotMessage(decision=d))
                            raise _Dropped
                        if x < 0.25:
                            write = asyncio.ensure_future(call.write(pb.BotMessage(decision=d)))
                            await asyncio.sleep(0)
                            call.cancel()
                            with contextlib.suppress(Exception, asyncio.CancelledError):
                                await write
                            raise _Dropped
                        if x < 0.3:
                            rival = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
                            await rival.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                            await call.write(pb.BotMessage(decision=d))
                            raise _Dropped  # (the rival took the seat: this one is ABORTED)
                        if x < 0.4:
                            n = int(r.request_id)
                            batch = [d, d, pb.Decision(request_id=str(n - 1), match_id=r.match_id,
                                                       action=d.action),
                                     pb.Decision(request_id=str(n + 1), match_id=r.match_id,
                                                 action=d.action)]  # fmt: skip
                            rnd.shuffle(batch)
                            await call.write(
                                pb.BotMessage(decisions=pb.DecisionBatch(decisions=batch))
                            )
                            continue
                        if x < 0.5:
                            held.append(d)
                            if len(held) < 3:
                                continue
                            d = held.pop()
                        await call.write(pb.BotMessage(decisions=pb.DecisionBatch(
                            decisions=[*held, d])))  # fmt: skip
                        held.clear()
                return  # the arena ended the stream: done
            except (_Dropped, grpc.aio.AioRpcError, asyncio.InvalidStateError):
                call.cancel()
        await asyncio.sleep(rnd.uniform(0, 0.05))


class _Dropped(Exception):
    """The racer drops its stream."""


def _flat(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]


def _seq_map(rec: dict[str, Any]) -> dict[int, tuple[int, int]]:
    """Event seq -> (deal, actions of that deal played), numbered as the referee numbers
    its events (an action, the talon taken, a deal's end, the next deal's start)."""
    game = Game.new(Ruleset.from_dict(rec["ruleset"]), rec["seed"], rec["players"])
    seq, out = 0, {0: (0, 0)}
    for d in rec["deals"]:
        for n, a in enumerate(d["actions"], 1):
            action, deal = parse_action(a["action"]), game.deal_number
            game.apply(action)
            seq += 1
            out[seq] = (deal, n)
            if game.deal_number != deal or game.is_over:
                for _ in game.deal_results[deal:]:
                    seq += 1
                    out[seq] = (deal, n)
                if not game.is_over:
                    seq += 1
                    out[seq] = (game.deal_number, 0)
            elif game.phase is not Phase.BIDDING and isinstance(action, Bid | Pass):
                seq += 1
                out[seq] = (deal, n)
    return out


def _leaks(streams: list[list[pb.ServerMessage]], recs: dict[str, dict[str, Any]]) -> list[str]:
    """Cards shown to the seat before it may see them, over every stream of one bot."""
    maps = {mid: _seq_map(rec) for mid, rec in recs.items()}
    out: list[str] = []
    for msgs in streams:
        pos: dict[str, int] = {}  # match -> the seq its last message reflects
        seat: dict[str, int] = {}
        for m in (x for raw in msgs for x in _flat(raw)):
            for ev in m.events:
                pos[ev.match_id] = ev.seq
                out += _shown_early(ev, recs[ev.match_id], maps[ev.match_id][ev.seq],
                                    seat[ev.match_id])  # fmt: skip
            kind = m.WhichOneof("kind")
            if kind == "match_started":
                ms = m.match_started
                seat[ms.match_id], pos[ms.match_id] = ms.seat, ms.seq
            if kind in ("match_started", "decision_request", "decision_rejected"):
                body = getattr(m, kind)
                mid = body.match_id
                if mid in seat:
                    out += _shown_early(body, recs[mid], maps[mid][pos[mid]], seat[mid])
    return out


def _shown_early(body: Any, rec: dict[str, Any], at: tuple[int, int], seat: int) -> list[str]:
    """The cards in ``body`` that ``seat`` may not see yet, ``at`` (deal, actions played)."""
    deal, n = at
    when = _visible_moments(rec["deals"][deal], seat, rec["ruleset"]["talon_visible"])
    return [f"{rec['match_id']} seat {seat} deal {deal} after {n}: card {c}"
            for c in _cards_in(body) if when.get(c, n + 1) > n]  # fmt: skip


def test_racing_streams_batches_and_rivals_leave_every_result_whole(tmp_path: Path) -> None:
    """Holds (checked, hostile round 18): two matches at once, one seat of each held by a
    bot that races its own streams at its requests (drops before and after answering, a
    cancel mid-write, a rival stream of its token, batches of duplicates and stale and
    next ids, held answers sent in a burst, Hellos naming matches just ended): each record
    replays (`arena replay --check`), the honest seats have no incident but timeouts (the
    machine's load), every bot is told each of its results as recorded (the racer on its
    last stream, if not before), every message keeps the proto's promises and shows no
    card before its seat may see it."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
    names = ["r", "h1", "h2"]

    async def main() -> tuple[dict[str, dict[str, Any]], list[list[list[pb.ServerMessage]]]]:
        async with arena(tmp_path, decision_ms=150, time_bank_ms=200, max_strikes=1000,
                         reconnect_grace_s=30) as a:  # fmt: skip
            for n in names:
                a.referee.add_bot(n, f"tok-{n}")
            stop = asyncio.Event()
            got: list[list[list[pb.ServerMessage]]] = [[] for _ in names]
            bots = [asyncio.create_task(_racer(a.target, f"tok-{n}", random.Random(i),
                                               stop, got[i]) if n == "r" else
                                        _honest(a.target, f"tok-{n}", got[i]))
                    for i, n in enumerate(names)]  # fmt: skip
            assert not await a.referee.wait_for_bots(names, 30)
            recs = await asyncio.gather(
                a.referee.run_match("m0", rules, 7, names),
                a.referee.run_match("m1", rules, 8, names[1:] + names[:1]),
            )
            stop.set()
            async with grpc.aio.insecure_channel(a.target) as ch:
                # A stream of the racer's token takes its seat (ABORTED: it stops), again
                # if a Hello of the racer's was on its way; then one more stream that
                # reads what is still kept for it (the ends of matches not known to have
                # reached it come again) until the arena ends.
                while not bots[0].done():
                    taker = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-r"))
                    # (refused while a Hello of the racer's is pending: the write may raise)
                    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                        await taker.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                    await asyncio.wait({bots[0]}, timeout=1.0)
                    taker.cancel()
                last: list[pb.ServerMessage] = []
                got[0].append(last)
                call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-r"))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                last.append(await call.read())
                await a.referee.end_streams(final=True)
                while (raw := await call.read()) is not grpc.aio.EOF:
                    last.append(raw)
            await asyncio.wait_for(asyncio.gather(*bots), 30)
            return {r["match_id"]: r for r in recs}, got

    recs, got = asyncio.run(main())
    for mid, rec in recs.items():
        path = tmp_path / f"{mid}.jsonl"
        path.write_text(json.dumps({"type": "end", "record": rec}) + "\n")
        result = CliRunner().invoke(cli_main, ["replay", "--check", str(path)])
        assert result.exit_code == 0, result.output
        # (a timeout of theirs would be the machine's load, not the racer's doing: so would
        # the refusal of their answer to the request that timed out, read after it)
        honest = [i for i in rec["incidents"]
                  if rec["players"][i["seat"]] != "r" and i["kind"] != "timeout"
                  and not _late_answer_refused(i)]  # fmt: skip
        assert not honest, honest
    for name, streams in zip(names, got, strict=True):
        ends = {
            m.match_ended.match_id: list(m.match_ended.result.places)
            for msgs in streams for raw in msgs for m in _flat(raw) if m.HasField("match_ended")
        }  # fmt: skip
        assert ends == {mid: rec["result"]["places"] for mid, rec in recs.items()}, (name, ends)
        check = _Conformance(150, 200)
        for msgs in streams:
            check.stream(msgs)
        assert not check.problems, (name, check.problems)
        assert not _leaks(streams, recs), (name, _leaks(streams, recs)[:3])
    assert len(got[0]) > 2  # the racer raced


def _late_answer_refused(incident: dict[str, Any]) -> bool:
    """Whether ``incident`` refuses an answer to the very request that timed out (a bot
    answering at once, paused by a loaded machine past its deadline, is refused so)."""
    return incident["kind"] == "wrong_request" and bool(
        re.search(r"for request '(\d+)' refused: request '\1' timed out: ", incident["detail"])
    )


async def _honest(target: str, token: str, got: list[list[pb.ServerMessage]]) -> None:
    """Answers every request at once with its first legal action, until the arena ends."""
    msgs: list[pb.ServerMessage] = []
    got.append(msgs)
    async with grpc.aio.insecure_channel(target) as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=_md(token))
        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
        try:
            async for raw in call:
                msgs.append(raw)
                for m in _flat(raw):
                    if m.HasField("decision_request"):
                        r = m.decision_request
                        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=r.view.legal_actions[0])  # fmt: skip
                        await call.write(pb.BotMessage(decision=d))
        except grpc.aio.AioRpcError as e:
            # gRPC core's INTERNAL, an answer's write racing the arena's end: the end it
            # replaced (the arena is over: no asking again; what was read is checked)
            if not core_internal(e.code(), e.details(), answered=True):
                raise
