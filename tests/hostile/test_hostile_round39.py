"""Hostile round 39: angles the earlier rounds (see round 38's inventory) did not drive.

- one token on two streams, switching to the other stream at every message: each switch
  replaces the stream before, and an answer then written on the replaced one must not act
  for the bot, while the same answer on the new stream does;
- a Hello with every field at the message size limit (a bot name and a client of 300 KB,
  a feature named 40,000 times, 500 ``running`` ids of the longest length answered), in a
  loop, beside honest matches;
- ``arena serve``'s lobby with bots holding valid tokens that connect, read a few messages
  (the Welcome, a ``MatchStarted``, a request) and leave, in a loop, while honest bots
  play; and GetInfo flooded from several channels meanwhile.

In each: the referee stays up, every match completes and its record replays, the honest
seats have no incident, and the referee's tasks return to what they were. No defect
found: these pin the behaviour checked.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.protocol import action_from_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import REPLACED
from arena.referee.lobby import FinishedMatch, Lobby
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.hostile.test_hostile_round32 import _passer
from tests.hostile.test_hostile_round34 import ONE_DEAL, _attach, _replays
from tests.support.harness import no_error_logged, on_the_loop, until  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("no_error_logged")


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _flat(msg: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(msg.batch.messages) if msg.HasField("batch") else [msg]


async def _next_request(call: Any) -> pb.DecisionRequest | None:
    """The next decision request on ``call`` (``None``: the match ended, or the call)."""
    while True:
        msg = await call.read()
        if msg is grpc.aio.EOF:
            return None
        for m in _flat(msg):
            if m.HasField("decision_request"):
                return m.decision_request
            if m.HasField("match_ended"):
                return None


def test_one_token_switching_streams_at_every_message_acts_only_on_the_newest() -> None:
    """x (one deal of classic, with two honest in-process seats) holds one token and, for
    every request it is asked, opens a new stream (replacing the one that asked), reads the
    request again there (same id, sent again on resume), then writes on the *replaced*
    stream an answer that differs from the one it then writes on the new stream. The
    replaced stream ends ABORTED "replaced ..." (or the client already knows it is over and
    its write fails); its answer acts for nobody: every action of x in the record is the
    new stream's answer, by the bot, with no strike. The reconnect
    limit is raised so the switching is never refused (its refusal is pinned elsewhere)."""
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, reconnect_limit=10_000,
                                reconnect_grace_s=30))  # fmt: skip
    _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    chosen: list[str] = []  # what the new stream answered, in order

    async def body(port: int) -> dict[str, Any]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.ArenaStub(ch)

            async def opened() -> Any:
                call = stub.Play(metadata=_md("tok-x"))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                return call

            old = await opened()
            match = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 7, ["x", "a", "b"]))
            statuses: list[tuple[grpc.StatusCode, str]] = []
            failed_writes: list[str] = []
            while True:
                r = await _next_request(old)
                if r is None:
                    break
                new = await opened()
                again = await _next_request(new)
                assert again is not None and again.request_id == r.request_id
                legal = list(again.view.legal_actions)
                good, other = legal[-1], legal[0]
                try:  # the replaced stream's word: none, whatever it says
                    await old.write(pb.BotMessage(decision=pb.Decision(
                        request_id=r.request_id, match_id="m1", action=other)))  # fmt: skip
                    statuses.append((await old.code(), await old.details()))
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    # The client already knew the call was over: grpcio then says
                    # INTERNAL "Failed execute_batch" itself, whatever the referee sent.
                    failed_writes.append(r.request_id)
                chosen.append(str(action_from_pb(good)))
                await new.write(pb.BotMessage(decision=pb.Decision(
                    request_id=r.request_id, match_id="m1", action=good)))  # fmt: skip
                old = new
            rec = await match
            old.cancel()
        # Every replaced stream the client could still write on ended as the referee says.
        assert all(s == (grpc.StatusCode.ABORTED, REPLACED) for s in statuses), statuses[:3]
        assert len(statuses) + len(failed_writes) == len(chosen)
        return rec

    async def main() -> dict[str, Any]:
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            return await body(port)
        finally:
            await ref.end_streams()
            await server.stop(0.5)

    rec = asyncio.run(main())
    x_bot = [a["action"] for d in rec["deals"] for a in d["actions"]
             if a["seat"] == 0 and a["by"] == "bot"]  # fmt: skip
    assert x_bot == chosen and len(chosen) > 5
    assert rec["forfeits"] == []
    assert not [i for i in rec["incidents"] if i["kind"] != "disconnect"], rec["incidents"]
    _replays(rec)


def test_a_hello_with_every_field_at_the_size_limit_is_welcomed_and_costs_nothing() -> None:
    """x says Hello, in a loop, with a bot name and a client of 256 characters each,
    ``batch`` 64 times and 500 ``running`` ids of 199 characters (answered as interrupted: at most
    ``MISSED_KEPT`` of them, one each), under the 1 MiB a message may hold; it leaves after
    its answers. Meanwhile three honest in-process seats play match after match with no
    incident and no decision slowed past its limit; the referee's tasks return to their
    number before."""
    ref = Referee(RefereeConfig(decision_ms=2_000, time_bank_ms=0))
    _attach(ref, ("a", "b", "c"), _passer(ref))
    ref.add_bot("x", "tok-x")
    # (300 KB each and 40,000 features before round 49: now the most a Hello may hold.)
    hello = pb.Hello(protocol_version=1, bot_name="n" * 256, client="c" * 256,
                     features=["batch"] * 64,
                     running=[f"{k:03d}" + "m" * 196 for k in range(500)])  # fmt: skip
    assert pb.BotMessage(hello=hello).ByteSize() < 1 << 20

    async def main() -> tuple[list[dict[str, Any]], list[list[pb.ServerMessage]], int, int]:
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            before = len(asyncio.all_tasks())
            stop = asyncio.Event()
            seen: list[list[pb.ServerMessage]] = []

            async def big() -> None:
                async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                    stub = pb_grpc.ArenaStub(ch)
                    while not stop.is_set() and len(seen) < 20:
                        call = stub.Play(metadata=_md("tok-x"))
                        await call.write(pb.BotMessage(hello=hello))
                        got: list[pb.ServerMessage] = []
                        while len(got) < 65:  # the Welcome and its 64 ends
                            msg = await call.read()
                            assert msg is not grpc.aio.EOF
                            got.extend(_flat(msg))
                        seen.append(got)
                        call.cancel()

            attack = asyncio.create_task(big())
            recs = []
            for k in range(8):
                recs.append(await ref.run_match(f"h{k}", ONE_DEAL, k, ["a", "b", "c"]))
            stop.set()
            await attack
            await until(lambda: not ref.session("x").connected and not ref.session("x").open_calls,
                        "x's calls ended")  # fmt: skip
            await until(lambda: len(asyncio.all_tasks()) <= before, "the tasks back")
            return recs, seen, before, len(asyncio.all_tasks())
        finally:
            await ref.end_streams()
            await server.stop(0.5)

    recs, seen, before, after = asyncio.run(main())
    assert after <= before
    assert seen
    for got in seen:
        assert got[0].welcome.bot_name == "x"
        assert list(got[0].welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
        ends = [m.match_ended for m in got[1:]]
        assert len(ends) == 64 and {e.result.reason for e in ends} == {"interrupted"}
        assert len({e.match_id for e in ends}) == 64
    for rec in recs:
        assert rec["incidents"] == [] and rec["forfeits"] == []
        assert all(a["ms"] < 2_000 for d in rec["deals"] for a in d["actions"])
        _replays(rec)


def test_bots_with_tokens_coming_and_going_at_the_lobby_harm_no_honest_match(
    tmp_path: Path,
) -> None:
    """``arena serve``'s lobby (3-player classic, one deal) over four honest SDK bots
    (``RandomBot`` over the wire) and six bots with valid tokens that each, in a loop, say
    Hello, read 0 to 3 messages (the Welcome, a ``MatchStarted``, a request) and cancel
    their call; two channels call GetInfo as fast as they are let. All 30 matches are
    played to their end (none fails), each record replays, no honest seat has an incident,
    and every match a churning bot sat in places it as the rules or its forfeit say."""
    ref = Referee(RefereeConfig(decision_ms=500, time_bank_ms=1_000, max_strikes=3,
                                reconnect_grace_s=1, record_dir=tmp_path))  # fmt: skip
    honest = ["a", "b", "c", "e"]
    churners = [f"ch{i}" for i in range(6)]
    finished: list[FinishedMatch] = []
    counted: dict[str, int] = {}

    async def on_finished(f: FinishedMatch) -> None:
        finished.append(f)

    async def churn(port: int, name: str, rng: random.Random, stop: asyncio.Event) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.ArenaStub(ch)
            while not stop.is_set():
                call = stub.Play(metadata=_md(f"tok-{name}"))
                try:
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                    for _ in range(rng.randrange(4)):
                        if await call.read() is grpc.aio.EOF:
                            break
                except grpc.aio.AioRpcError as e:  # refused: reconnecting too often
                    counted[e.code().name] = counted.get(e.code().name, 0) + 1
                call.cancel()
                await asyncio.sleep(rng.random() * 0.2)

    async def info(port: int, stop: asyncio.Event) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.ArenaStub(ch)
            while not stop.is_set():
                try:
                    await stub.GetInfo(pb.GetInfoRequest(), timeout=10)
                    counted["info"] = counted.get("info", 0) + 1
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
                    await asyncio.sleep(0.01)

    async def main() -> Lobby:
        from bots.random_bot import RandomBot
        from sdk.client import BotRunner

        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        runners = []
        for n in honest + churners:
            ref.add_bot(n, f"tok-{n}")
        for n in honest:
            # The honest bots are the control (500 + 1000 ms): their calls on this loop,
            # whose stalls the referee excuses, not in worker threads (see on_the_loop).
            runner = BotRunner(RandomBot, f"127.0.0.1:{port}", f"tok-{n}", name=n, retry_for=10)
            runners.append(on_the_loop(runner))
        bots = [asyncio.create_task(r.run()) for r in runners]
        stop = asyncio.Event()
        try:
            assert not await ref.wait_for_bots(honest, 30)
            rng = random.Random(39)
            attacks = [asyncio.create_task(churn(port, n, rng, stop)) for n in churners]
            attacks += [asyncio.create_task(info(port, stop)) for _ in range(2)]
            lobby = Lobby(ref, ONE_DEAL, seed=39, max_matches=30, on_finished=on_finished)
            await asyncio.wait_for(lobby.run(), 240)
            stop.set()
            await asyncio.gather(*attacks)
            return lobby
        finally:
            stop.set()
            for r in runners:
                r.stop()
            await ref.end_streams(final=True)
            await asyncio.gather(*bots, return_exceptions=True)
            await server.stop(0.5)

    lobby = asyncio.run(main())
    assert (lobby.started, lobby.finished, lobby.failed) == (30, 30, 0)
    assert counted.get("info", 0) > 0
    assert len(list(tmp_path.glob("*.jsonl"))) == 30
    churned = 0
    for f in finished:
        rec = f.record
        _replays(rec)
        for inc in rec["incidents"]:
            assert rec["players"][inc["seat"]] in churners, (f.match_id, inc)
        places = rec["result"]["places"]
        for seat in rec["forfeits"]:
            assert rec["players"][seat] in churners
            assert all(places[seat] >= places[s] for s in range(3) if s not in rec["forfeits"])
        churned += any(p in churners for p in rec["players"])
    assert churned > 0  # (the lobby did seat the churning bots)
