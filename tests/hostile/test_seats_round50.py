"""Hostile round 50: how many seats one bot's stream may hold at once.

A tournament's ``concurrency`` had no bound, and a bot holds a seat in each match it plays
at once. Its reconnect is sent every seat's state again in one step of the referee's loop
(measured in process: 3 ms at 100 seats, 20-37 ms at 400, each a stall of every match,
up to ``reconnect_limit`` times in 10 s), and a stream with more than ``max_queued``
(1,000) messages waiting is closed as not read: at 600 seats, every reconnect of an honest
bot was cut at once and its seats forfeited after the grace. ``concurrency`` is now at
most ``MAX_CONCURRENCY`` (256), in the config and on the command line; at that bound a
reconnect's resend fits the queue, every seat resumed with its pending request.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import Stream
from arena.tournament.config import MAX_CONCURRENCY, ConfigError, parse_config
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import attach_in_process, until

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)
BOTS = {"a": "random", "b": "random", "c": "random"}


def test_concurrency_past_the_bound_is_refused_naming_it(tmp_path: Path) -> None:
    assert parse_config({"bots": BOTS, "concurrency": MAX_CONCURRENCY}).concurrency == 256
    with pytest.raises(ConfigError) as e:
        parse_config({"bots": BOTS, "concurrency": MAX_CONCURRENCY + 1})
    assert (
        "concurrency: must be between 1 and 256 (matches played at once: one bot's stream "
        "holds at most that many seats), got 257"
    ) in str(e.value)
    config = tmp_path / "cup.toml"
    config.write_text('bots = ["random", "heuristic", "counting"]\n', encoding="utf-8")
    res = CliRunner().invoke(
        main, ["tournament", "--config", str(config), "--db", str(tmp_path / "cup.sqlite"),
              "--concurrency", "1000", "--no-progress"],
    )  # fmt: skip
    assert res.exit_code == 2 and "'--concurrency': 1000 is not in the range 1<=x<=256" in (
        res.output
    ), res.output
    assert not (tmp_path / "cup.sqlite").exists()


def test_a_bot_at_the_bound_of_seats_is_resumed_whole_at_its_reconnect() -> None:
    """Bot x sits in MAX_CONCURRENCY matches at once (each with two honest in-process
    bots that answer at once), each waiting for x's answer; x's stream goes and a new one
    comes: it is not closed as unread, and holds each seat's resumed start and request."""

    async def body() -> tuple[Stream, set[str], set[str]]:
        ref = Referee(RefereeConfig(decision_ms=600_000, time_bank_ms=0, reconnect_grace_s=600))

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_message(ref.session(bot), pb.BotMessage(decision=d))

        n = MAX_CONCURRENCY
        attach_in_process(ref, tuple(f"h{i}" for i in range(2 * n)), answer)
        ref.add_bot("x", "tok-x")
        x = ref.session("x")
        first = Stream("x-1", batch=True, max_queued=ref.config.max_queued)
        x.attach(first)
        # x is dealt first in none of them, last in all: the first request of each is its.
        seats = [[f"h{2 * i}", f"h{2 * i + 1}", "x"] for i in range(n)]
        tasks = [
            asyncio.create_task(ref.run_match(f"m{i}", ONE_DEAL, i, s)) for i, s in enumerate(seats)
        ]
        try:
            await until(lambda: len(x.seats) == n, "x seated everywhere", 120)
            await until(
                lambda: all(s.pending is not None for s in x.seats.values()),
                "a request of x pending in every match", 120,
            )  # fmt: skip
            x.detach(first, 600.0)
            second = Stream("x-2", batch=True, max_queued=ref.config.max_queued)
            x.attach(second)
            got = []
            while not second._queue.empty():
                m = second._queue.get_nowait()
                if m is not None:
                    got.append(m)
            started = {m.match_started.match_id for m in got
                       if m.HasField("match_started") and m.match_started.resumed}  # fmt: skip
            asked = {m.decision_request.match_id for m in got if m.HasField("decision_request")}
            return second, started, asked
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    second, started, asked = asyncio.run(body())
    every = {f"m{i}" for i in range(MAX_CONCURRENCY)}
    assert not second.overflowed and not second.closed
    assert started == every and asked == every
