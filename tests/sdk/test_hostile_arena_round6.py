"""The SDK runner against a hostile arena, round 6: a Batch of 10,000 requests for one
seat, ids too long for an answer to echo, and lines of megabytes for the log. The fake
arena is that of ``test_hostile_arena.py`` (grpc.aio on port 0); every server started here
is stopped before its test ends."""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator

import grpc
import pytest

from arena.render import PrintableFormatter
from arena.v1 import arena_pb2 as pb
from tests.sdk.test_hostile_arena import (
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _ending


def test_a_batch_of_10000_requests_for_one_seat_is_said_a_few_times_and_the_newest_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: each request that replaced one waiting for the bot (busy in its match) wrote
    a warning of its own: a Batch of 10,000 requests for one seat wrote 10,000 lines. Now
    the first few of a match are said, the last saying that the rest are not, as for
    repeated events; the bot (made meanwhile) is asked the newest only."""
    g = _game()
    n = 10_000

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(
            batch=pb.Batch(messages=[request("m1", g, str(i)) for i in range(n)])
        )
        while (d := await s.decision()) is not None and d.request_id != str(n - 1):
            pass

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", str(n - 1))]
    said = [r.getMessage() for r in caplog.records if "was superseded" in r.getMessage()]
    assert len(said) == 5
    assert said[0].startswith("match m1: request 0 was superseded by request 1 before the bot")
    assert said[-1].endswith("(further superseded requests of this match are not said)")


def test_ids_too_long_to_echo_are_refused_and_the_bot_plays_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request id (or a match's id) of megabytes was echoed in the answer, which
    the arena's receive limit refused (RESOURCE_EXHAUSTED): the runner stopped, every match
    lost, for one bad message. Now an id over 1,024 characters (the referee's are a few
    dozen) makes its message malformed: a MatchStarted is refused, and is not named in the
    next Hello (it would be too big for the arena too), a request is not answered; the
    bot plays on, across a reconnection."""
    g = _game()
    huge = "x" * (5 * 1024 * 1024)  # over gRPC's default receive limit (4 MiB)

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started(huge, g)
        yield request("m1", g, huge)
        yield request("m1", g, "2")
        await s.decision()
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield request("m1", g, "3")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = _ending(FirstLegal, first, second)
    assert not isinstance(summary, Exception), summary
    assert summary.reason == "the arena closed the stream"
    assert [s.decided() for s in arena.streams] == [[("m1", "2")], [("m1", "3")]]
    assert list(arena.streams[1].received[0].hello.running) == ["m1"]
    assert (
        "malformed decision_request from the arena (match m1), ignored: request_id: an id of "
        "5,242,880 characters, over the 1,024 this SDK echoes" in caplog.text
    )
    assert "match_started.match_id: an id of 5,242,880 characters" in caplog.text


def test_a_line_of_megabytes_from_the_arena_is_cut_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: ``arena-bot run``'s log wrote what the arena sent whole: a refusal's text,
    a server version or a match id of 20 MB was a line of 20 MB (and its terminal's
    scrollback). Its formatter now cuts a line of the log to 2,000 characters, saying how
    many more there were, as it did a traceback's lines."""
    g = _game()
    words = "y" * (20 * 1024 * 1024)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield pb.ServerMessage(
            welcome=pb.Welcome(bot_name="b", server_version=words, protocol_version=1)
        )
        yield started("m1", g)
        rejected = pb.DecisionRejected(request_id="1", match_id="m1", message=words)
        yield pb.ServerMessage(decision_rejected=rejected)
        yield request("m1", g, "2")
        await s.decision()

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("sdk.client")
    logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            _, arena = play(FirstLegal, script)
    finally:
        logger.removeHandler(handler)
    assert arena.streams[0].decided() == [("m1", "2")]
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) < 2100
    long = [line for line in lines if line.endswith(" more characters)")]
    assert len(long) == 2
    assert long[0].startswith("INFO sdk.client: connected to 127.0.0.1:")
    assert long[1].startswith(
        "WARNING sdk.client: match m1: decision rejected (unspecified, strike 0 of 0): yyy"
    )
