"""The SDK runner against a hostile arena, round 47: resources. The fake arena is that of
``tests/sdk/test_hostile_arena.py`` (grpc.aio on port 0); every server started here is
stopped before its test ends."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView
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


def _rss_mb() -> float:
    """This process's resident set now (``VmRSS``), in MB."""
    with open("/proc/self/status") as fh:
        kb = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
    return kb / 1024


def test_a_flood_of_action_events_queues_a_bounded_number_of_hook_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: every action event scheduled the bot's on_action in the match's chain (a
    task, some 4 KB), without bound: one message of 2 MB holding 100,000 action events
    took the bot's process from 60 to 510 MB and 15 s of CPU (a message of 64 MiB, the
    SDK's limit, several GB). Now at most 1,024 hook calls of a match wait for the bot;
    the rest are dropped, said in one line, and the match plays on."""
    g = _game()
    n = 100_000
    rss: list[float] = []
    calls = [0]

    class Counting(FirstLegal):
        def act(self, view: PlayerView) -> Action:
            rss.append(_rss_mb())  # before the flood (the first request)
            return super().act(view)

        def on_action(self, view: PlayerView, seat: int, action: Action) -> None:
            if not calls[0]:
                rss.append(_rss_mb())  # every event of the flood is handled by now
            calls[0] += 1

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        first = request("m1", g, "0")
        yield first
        await s.decision()
        flood = pb.ServerMessage()
        action = first.decision_request.view.legal_actions[0]
        for seq in range(1, n + 1):
            flood.events.add(match_id="m1", seq=seq, action=pb.SeatAction(seat=1, action=action))
        yield flood
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Counting, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "1")]
    assert calls[0] == 1024
    assert rss[1] - rss[0] < 100, rss  # (without the bound: some 450 MB)
    [said] = [r.getMessage() for r in caplog.records if "hook calls already wait" in r.getMessage()]
    assert said.startswith("match m1: 1024 hook calls already wait for the bot: on_action and")
