"""A bot author's bot restarted (or frozen and continued) in the middle of a match, round
52: what its log says of the request the arena asks again. The fake arena is that of
``test_hostile_arena.py`` (grpc.aio on port 0), stopped before each test ends."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import pytest

from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView
from sdk import Bot
from tests.sdk.test_hostile_arena import (
    WELCOME,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    ended,
    play,
    request,
    started,
)


class Thinks(Bot):
    """Takes 20 ms per decision (a sleep returns no sooner), then the first legal action."""

    def act(self, view: PlayerView) -> Action:
        time.sleep(0.02)
        return view.legal_actions[0]


def _timed(mid: str, rid: str, limit_ms: int, bank_ms: int) -> pb.ServerMessage:
    msg = request(mid, _game(), rid)
    msg.decision_request.time_limit_ms = limit_ms
    msg.decision_request.time_bank_ms = bank_ms
    return msg


def test_a_request_asked_again_with_its_limit_spent_says_so_and_a_later_overrun_is_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot restarted mid-match (``kill -9``, then ``arena-bot run`` again within
    the grace) is asked its pending request again with what is left of it: a limit of 0 ms,
    spent while the bot was away. Its log said "a decision took 21 ms (..., with the wait
    for the bot to be made), over the limit of 0 ms: the time bank paid 21 ms", as if the
    bot were slow against a limit of nothing; and that was the match's one line on the
    bank, so a real overrun later was never told. Now the line says the request was asked
    again with its limit spent while the bot was away, and the later overrun (20 ms
    against a limit of 1 ms) is told as such."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield _timed("m1", "7", 0, 8_000)  # asked again: its limit ran out while away
        assert await s.decision() is not None
        yield _timed("m1", "8", 1, 7_000)
        assert await s.decision() is not None
        yield ended("m1")
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, arena = play(Thinks, script, matches=1)
    assert summary.matches == 1 and arena.streams[0].decided() == [("m1", "7"), ("m1", "8")]
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [m for m in said if "over the limit of 0 ms" in m], said
    again = [m for m in said if "a decision asked again after the bot came back" in m]
    assert len(again) == 1, said
    assert "all of it from the time bank: its limit had run out while the bot was away" in again[0]
    assert [m for m in said if "over the limit of 1 ms: the time bank paid" in m], said
