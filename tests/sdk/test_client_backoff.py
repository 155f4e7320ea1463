"""The runner's back-off against an arena (grpc.aio on port 0) that welcomes the bot and
then resets the stream: a Welcome alone no longer starts the back-off again."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, cast

import grpc
import pytest

from arena.protocol import ruleset_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PRESETS, Game, observe
from sdk.client import BotRunner
from tests.support.harness import play_server

WELCOME = pb.ServerMessage(
    welcome=pb.Welcome(bot_name="b", server_version="fake", protocol_version=1)
)


class _NoJitter(random.Random):
    """Jitter that always picks 1.0 (within its range): the back-off steps exactly."""

    def uniform(self, a: float, b: float) -> float:
        return min(max(1.0, a), b)


def _started(*, resumed: bool = False) -> pb.ServerMessage:
    g = Game.new(PRESETS["classic"], 1, ("a", "b", "c"))
    seat = g.to_act
    assert seat is not None
    return pb.ServerMessage(match_started=pb.MatchStarted(
        match_id="m1", seat=seat, players=list(g.players), ruleset=ruleset_to_pb(g.ruleset),
        view=view_to_pb(observe(g, seat)), resumed=resumed))  # fmt: skip


def _request() -> pb.ServerMessage:
    """The request "r1" of match m1 (its first decision), as a reconnect asks it again."""
    g = Game.new(PRESETS["classic"], 1, ("a", "b", "c"))
    seat = g.to_act
    assert seat is not None
    return pb.ServerMessage(decision_request=pb.DecisionRequest(
        request_id="r1", match_id="m1", view=view_to_pb(observe(g, seat)),
        time_limit_ms=5000, time_bank_ms=0))  # fmt: skip


def _ended() -> pb.ServerMessage:
    """The end of a match m0 the bot knows nothing of (as the referee sends an end again on
    every new stream until the bot's next answer shows it arrived)."""
    return pb.ServerMessage(match_ended=pb.MatchEnded(
        match_id="m0", result=pb.MatchResult(scores=[1, 2, 3], places=[3, 2, 1])))  # fmt: skip


def _reconnect_waits(
    plan: list[str], caplog: pytest.LogCaptureFixture, retry_for: float = 20
) -> list[float]:
    """Streams that each welcome the bot, then (``"match"``) seat it in a new match and ask
    it "r1", (``"again"``) resume that match and ask "r1" again, (``"ended"``) send the end
    of a match again, or (``"reset"``) nothing, and end with UNAVAILABLE (after the bot's
    answer, if asked); after the plan, one that ends the run.
    The waits (ms) the runner logged before each reconnect."""

    async def play(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await request_iterator.__anext__()  # the Hello
        n = len(opened)
        opened.append(n)
        yield WELCOME.SerializeToString()
        if n == len(plan):
            return  # the end of the run: the arena closes the stream
        if plan[n] in ("match", "again"):
            yield _started(resumed=plan[n] == "again").SerializeToString()
            yield _request().SerializeToString()
            await request_iterator.__anext__()  # the answer
        if plan[n] == "ended":
            yield _ended().SerializeToString()
        await asyncio.sleep(0.05)  # (the bot reads what was sent before the reset)
        await context.abort(grpc.StatusCode.UNAVAILABLE, "reset")

    opened: list[int] = []

    async def main() -> None:
        server, port = await play_server(play)
        try:
            runner = BotRunner(RandomBot, f"127.0.0.1:{port}", "tok", initial_backoff=0.01,
                               max_backoff=0.08, retry_for=retry_for)  # fmt: skip
            runner._rng = _NoJitter()
            summary = await asyncio.wait_for(runner.run(), 30)
            assert summary.reason == "the arena closed the stream"
        finally:
            await server.stop(0)

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(main())
    assert len(opened) == len(plan) + 1
    return [
        round(cast(tuple[Any, ...], r.args)[-1] * 1000, 6)
        for r in caplog.records
        if "reconnecting in" in r.getMessage()
    ]


def test_an_arena_that_welcomes_then_resets_every_stream_is_asked_again_ever_more_slowly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: each Welcome started the back-off again, so an arena that welcomed the bot and
    then reset every stream was reconnected to every 0.25-0.5 s for ever. Now only a stream
    that worked (an event, a new match, a match's end, an answer sent) starts it again:
    the waits double up to ``max_backoff``, and after a stream dropped mid-match the bot is
    back at the first step."""
    plan = ["reset"] * 5 + ["match", "reset"]
    assert _reconnect_waits(plan, caplog) == [10, 20, 40, 80, 80, 10, 20]


def test_what_an_arena_sends_again_at_every_reconnect_does_not_restart_the_back_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the end of a match (which the referee sends again on every stream until the
    bot's next answer shows it arrived: a bot idle in the lobby after a match) and the
    answer to a request asked again (sent from the runner's cache, nothing decided) counted
    as a stream that worked, so an arena that welcomed the bot, sent them again and reset
    the stream was asked again at the first step for ever. Only a first answer to a
    request starts the back-off again now."""
    assert _reconnect_waits(["ended"] * 4, caplog) == [10, 20, 40, 80]
    caplog.clear()
    assert _reconnect_waits(["match"] + ["again"] * 4, caplog) == [10, 20, 40, 80, 80]


@pytest.mark.parametrize("end, share", [("low", 0.5), ("high", 1.0)])
def test_each_wait_is_half_to_all_of_its_step_as_the_guide_says(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, end: str, share: float
) -> None:
    """writing-a-bot.md said "0.5 s, doubling up to 30 s" and nothing of the jitter: a bot
    author saw "reconnecting in 0.3s" first. Each wait is a random 50-100 % of its step."""
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "writing-a-bot.md"
    assert "random 50–100 % of its step" in " ".join(guide.read_text(encoding="utf-8").split())
    monkeypatch.setattr(_NoJitter, "uniform", lambda self, a, b: a if end == "low" else b)
    assert _reconnect_waits(["reset"] * 4, caplog) == [
        round(step * share, 6) for step in (10, 20, 40, 80)
    ]


def test_an_arena_that_welcomes_then_resets_every_stream_meets_retry_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a Welcome ended the failing that ``--retry-for`` bounds, so a bot whose arena
    welcomed it and then reset every stream went on reconnecting for ever (at the longest
    back-off), never exiting 1 for a supervisor to see. Only a stream that worked ends it
    now; the error says what the arena did."""
    from sdk.client import ArenaError

    with pytest.raises(ArenaError) as e:
        _reconnect_waits(["reset"] * 10_000, caplog, retry_for=0.5)
    said = str(e.value)
    assert "ended every stream it welcomed this bot on (none played or lasted 30 s) for 0s" in said
    assert "for 0s (the " in said
    assert "last try: the arena at 127.0.0.1:" in said and " ended the stream: reset)" in said
