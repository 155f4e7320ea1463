"""Hostile round 14: what the earlier rounds left around the arena's stop (streams opened
while it stops, a remote bot away at a tournament's end) and the result of a match every
seat forfeited by its end. Each test fails on the code before its fix, but the last, which
guards the runner's new wait (a signal ends it)."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import attach_in_process, welcomed_call

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, replay
from tests.support.core_internal import asking_again, core_internal

HELLO = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))


async def _open_after_stop(final: bool) -> tuple[str, str, list[str]]:
    """A welcomed stream, then ``end_streams(final=final)``, then a new stream of the same
    bot: its status and details, and the kinds of what it was sent."""
    ref = Referee(RefereeConfig())
    ref.add_bot("x", "tok-x")
    server, port = await start_server(ref)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            first = await welcomed_call(ch, "tok-x", "x")
            await ref.end_streams("the tournament is over" if final else "the arena is stopping",
                                  final=final)  # fmt: skip
            assert await first.code() == (grpc.StatusCode.OK if final else
                                          grpc.StatusCode.UNAVAILABLE)  # fmt: skip

            # The server is still up (serve and the runner stop it after this returns): a bot
            # that reconnects at once, or while a slow stream keeps end_streams waiting.
            async def reopened() -> tuple[str, str, list[str]]:
                md = (("authorization", "Bearer tok-x"),)
                call: Any = pb_grpc.ArenaStub(ch).Play(metadata=md)
                kinds: list[str] = []
                try:
                    await call.write(HELLO)
                    while (msg := await call.read()) is not grpc.aio.EOF:
                        kinds.append(msg.WhichOneof("kind"))
                        if len(kinds) == 1:  # (welcomed: the server's stop ends it below)
                            await server.stop(1.0)
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    pass
                return (await call.code()).name, await call.details(), kinds

            # (asked again on gRPC core's INTERNAL: the Hello's write racing the refusal,
            # seen under load; the referee sends none)
            return await asking_again(
                reopened, lambda r: core_internal(*r[:2], answered=bool(r[2]))
            )
    finally:
        await server.stop(None)


@pytest.mark.parametrize("final", [False, True])
def test_a_stream_opened_while_the_arena_stops_is_refused_as_the_others_were(final: bool) -> None:
    """Defect: ``end_streams`` ended the open streams, but a stream opened after it, while
    the server was still up (a bot reconnecting at once, or in the up to 2 s a slow stream
    kept ``end_streams`` waiting), was welcomed and resumed its seats; the server's stop
    then cut it with UNAVAILABLE "Cancelling all calls". After a final end (a tournament
    over, serve's ``--matches`` played), that bot was so told to reconnect, not to stop:
    the SDK retried for ``--retry-for`` and exited with an error. Now it gets what the
    others got, before any Welcome: OK, or UNAVAILABLE "the arena is stopping"."""
    code, details, kinds = asyncio.run(_open_after_stop(final))
    assert kinds == [], kinds
    if final:
        assert code == "OK"  # (gRPC carries no details with an OK status)
    else:
        assert (code, details) == ("UNAVAILABLE", "the arena is stopping")


def test_seats_that_all_forfeit_as_the_match_ends_are_placed_last_not_first() -> None:
    """Defect: when every seat had forfeited by the time the match reached its end (two
    struck out early, the third on the match's last action, whose fallback ended it), the
    result placed the forfeiters "last" after nobody: each was placed 1st, and each bot was
    told so in its MatchEnded (and the leaderboard counted three first places). A match
    that every seat forfeited before its end places each n-th, so that nobody is credited a
    first place; this one does the same now, and its record replays."""
    bad = pb.Action(bid=pb.Bid(amount=3))  # (never legal: off the step)

    async def match(seed: int) -> tuple[dict[str, Any], list[pb.MatchResult]]:
        ref = Referee(RefereeConfig(max_strikes=1, ask_forced=True))
        told: list[pb.MatchResult] = []

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            last_card = len(r.view.hand) == 1 and len(r.view.trick) == 2  # the deal's end
            action = bad if bot != "c" or last_card else r.view.legal_actions[-1]
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(ref.session(bot), d)

        queue = attach_in_process(ref, ("a", "b", "c"), answer)["c"]._queue
        rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
        rec = await ref.run_match("m", rules, seed, ["a", "b", "c"])
        while not queue.empty():  # what bot c was sent
            msg = queue.get_nowait()
            if msg is not None and msg.HasField("match_ended"):
                told.append(msg.match_ended.result)
        return rec, told

    for seed in range(40):  # a deal whose last card is c's
        rec, told = asyncio.run(match(seed))
        if len(rec["forfeits"]) == 3:
            break
    else:
        pytest.fail("no seed let c play the last card")
    assert rec["rules_result"] is not None  # the match reached its end
    assert rec["result"]["places"] == [3, 3, 3], rec["result"]  # (was [1, 1, 1])
    assert rec["result"]["winner"] is None
    assert list(told[0].places) == [3, 3, 3] and list(told[0].forfeits) == [0, 1, 2]
    replay(rec)


def test_a_remote_bot_away_when_the_last_match_ends_gets_its_result_before_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a tournament stopped its server as soon as its last match was stored. A
    remote bot whose connection dropped in that match, which then ended while it was away
    within its grace period, came back to a closed port: it never learned the result, and
    the SDK retried for ``--retry-for`` and exited with an error. `arena serve` waited for
    such a bot (round 11); the runner now does too, up to the grace period, then tells it
    the tournament is over."""
    from arena.tournament import RunOptions, run_tournament
    from arena.tournament import runner as runner_mod
    from arena.tournament.config import parse_config

    tokens = {n: f"tok-{n}-0123456789abcdef" for n in ("ann", "bob", "cid")}
    cfg = parse_config(
        {
            "id": "away", "name": "away", "ruleset": "classic", "max_deals": 1, "seed": 5,
            "concurrency": 1, "db": str(tmp_path / "t.sqlite"), "out": str(tmp_path / "out"),
            "bot_wait_s": 30, "deadlines": {"decision_ms": 100, "time_bank_ms": 0},
            "referee": {"max_strikes": 1000, "reconnect_grace_s": 30},
            "bots": {n: {"remote": True, "token": t} for n, t in tokens.items()},
        },
        source="round14", base_dir=tmp_path,
    )  # fmt: skip
    total = cfg.total_matches
    ports: list[int] = []
    refs: list[Any] = []
    real_server = runner_mod._real_server

    async def server(referee: Any, *args: Any) -> tuple[Any, int]:
        srv, port = await real_server(referee, *args)
        ports.append(port)
        refs.append(referee)
        return srv, port

    monkeypatch.setattr(runner_mod, "_real_server", server)

    async def play(name: str) -> tuple[list[str], str]:
        """Answer every request; ``cid`` leaves at its first request of the last match and
        comes back once that match has ended without it: what it got then, and its status."""
        while not ports:
            await asyncio.sleep(0.01)
        md = (("authorization", f"Bearer {tokens[name]}"),)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{ports[0]}") as ch:
            call: Any = pb_grpc.ArenaStub(ch).Play(metadata=md)
            await call.write(HELLO)
            started = 0
            try:
                while (msg := await call.read()) is not grpc.aio.EOF:
                    started += msg.HasField("match_started")
                    if msg.HasField("decision_request"):
                        r = msg.decision_request
                        if name == "cid" and started == total:
                            call.cancel()  # the connection drops in the last match
                            break
                        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                        action=r.view.legal_actions[0])  # fmt: skip
                        await call.write(pb.BotMessage(decision=d))
                else:
                    return [], await _status(call)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                return [], await _status(call)  # (an answer's write raced the end)
            ref = refs[0]
            while ref.running_matches() or "cid" not in ref.away_with_results():
                await asyncio.sleep(0.01)  # (the match goes on without it, and ends)
            await asyncio.sleep(1.0)  # back a second later: well within its grace of 30 s
            call = pb_grpc.ArenaStub(ch).Play(metadata=md)
            kinds: list[str] = []
            try:
                await call.write(HELLO)
                while (msg := await call.read()) is not grpc.aio.EOF:
                    kinds.append(msg.WhichOneof("kind"))
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass
            return kinds, await _status(call)

    async def _status(call: Any) -> str:
        """The call's status; gRPC core's INTERNAL, a write racing the arena's end (the
        tournament is over: no asking again), counts as the end it replaced. The referee
        sends no INTERNAL; what the test proves of it stays in the messages read (cid's
        Welcome, then its result) and the tournament's outcome."""
        code, details = await call.code(), await call.details()
        return "OK" if core_internal(code, details, answered=True) else code.name

    async def main() -> tuple[Any, list[tuple[list[str], str]]]:
        bots = [asyncio.create_task(play(n)) for n in ("ann", "bob", "cid")]
        outcome = await run_tournament(cfg, RunOptions(progress=False))
        return outcome, [await asyncio.wait_for(b, 60) for b in bots]

    outcome, got = asyncio.run(main())
    assert outcome.completed == total and not outcome.failed
    assert got[0] == ([], "OK") and got[1] == ([], "OK")
    kinds, code = got[2]
    assert kinds[:2] == ["welcome", "match_ended"] and code == "OK", got[2]  # (was UNAVAILABLE)


def test_a_signal_ends_the_wait_for_a_remote_bot_that_does_not_come_back() -> None:
    """The wait above lasts up to the grace period, which a config may set to hours: a
    signal while the runner stops (withheld until the stop is done) ends the wait, as a
    second signal does for `arena serve`."""
    from arena.tournament.runner import _uncut, _wait_for_remote_results

    class Away:
        async def wait_for_away_results(self, timeout: float, names: Any) -> list[str]:
            await asyncio.sleep(3600)
            return ["cid"]

        def away_with_results(self, names: Any) -> list[str]:
            return ["cid"]

    async def main() -> tuple[bool, bool]:
        signalled = asyncio.Event()
        stopped = asyncio.Event()

        async def stop() -> None:
            await _wait_for_remote_results(Away(), ["cid"], signalled)  # type: ignore[arg-type]
            stopped.set()

        entered = asyncio.Event()

        async def runner() -> bool:
            entered.set()
            return await _uncut(stop(), signalled)

        task = asyncio.create_task(runner())
        await entered.wait()
        await asyncio.sleep(0.05)  # (the stop is waiting for the bot)
        task.cancel()  # the signal
        cut = await asyncio.wait_for(task, 30)
        return cut, stopped.is_set()

    assert asyncio.run(main()) == (True, True)
