"""Review of round 43's product changes, with fresh eyes.

1. A bot taken for gone for good (``BotSession.gone``) forfeited a match that started
   while its new stream was saying Hello (authenticated, ``BotSession.reserved``): the bot
   was coming back at that very moment, and lost the seat it was reconnecting for.
2. ``few_marks`` wrote a combining mark of the supplementary planes (U+1D167, the
   variation selectors U+E0100...) as ``\\u`` and five digits, which reads as another
   character and a digit (``printable`` writes ``\\U`` and eight for that reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path
from typing import Any

from arena.render import few_marks
from arena.v1 import arena_pb2 as pb


def test_a_gone_bot_whose_stream_is_saying_hello_when_its_match_starts_keeps_its_seat(
    tmp_path: Path,
) -> None:
    """The bot was given up (or stayed away past its grace) and is back: its new stream
    has authenticated and not yet said Hello when a match of it starts. It gets a grace (1 s
    since round 49), says Hello, and plays its seat."""
    import grpc

    from arena.v1 import arena_pb2_grpc as pb_grpc
    from engine import PRESETS
    from sdk import Bot
    from tests.support.harness import arena, until

    rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
    names = ["a", "b", "friend"]

    async def main() -> tuple[dict[str, Any], int]:
        async with arena(tmp_path, reconnect_grace_s=30.0, decision_ms=60_000) as a:
            tasks = await a.runners(names[:2], [Bot] * 2, 100, controls=("a", "b"))
            a.referee.add_bot("friend", "tok-friend")
            session = a.referee.session("friend")
            a.referee.given_up("friend", "its process exited, and is not restarted")
            async with grpc.aio.insecure_channel(a.target) as channel:
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-friend"),)
                )
                # (no Hello yet: the referee takes the stream in and waits for it)
                await call.wait_for_connection()
                await until(lambda: session.reserved is not None, "the stream reserved")
                match = asyncio.create_task(a.referee.run_match("m0", rules, 5, names))
                # (its start has run: the seat, not connected, was told its grace; waited
                # for, not slept on, so that the Hello below never comes before it)
                matches = a.referee._matches
                await until(
                    lambda: (
                        "m0" in matches and any(i["seat"] == 2 for i in matches["m0"].incidents)
                    ),
                    "the match started without the friend",
                )
                await call.write(
                    pb.BotMessage(hello=pb.Hello(bot_name="friend", protocol_version=1))
                )
                answered = 0
                while True:
                    msg = await asyncio.wait_for(call.read(), 60)
                    assert msg is not grpc.aio.EOF, "the stream ended before the match"
                    if msg.HasField("decision_request"):
                        req = msg.decision_request
                        await call.write(
                            pb.BotMessage(
                                decision=pb.Decision(
                                    request_id=req.request_id,
                                    match_id=req.match_id,
                                    action=req.view.legal_actions[0],
                                )
                            )
                        )
                        answered += 1
                    if msg.HasField("match_ended") and msg.match_ended.match_id == "m0":
                        break
                rec = await asyncio.wait_for(match, 60)
                await call.done_writing()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(call.code(), 10)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return rec, answered

    rec, answered = asyncio.run(main())
    assert rec["forfeits"] == [], rec["incidents"]
    assert answered > 0
    # Not connected at the start: the grace to reconnect, not a forfeit at once.
    details = [i["detail"] for i in rec["incidents"] if i["seat"] == 2]
    # (Its whole grace before round 49; a second now: its client says Hello at once.)
    assert details == ["not connected at the start; 1 s to reconnect"], rec["incidents"]
    mine = [x for d in rec["deals"] for x in d["actions"] if x["seat"] == 2]
    assert any(x["by"] == "bot" for x in mine)


def test_few_marks_writes_a_supplementary_plane_mark_as_printable_does() -> None:
    # U+1D167 (musical combining tremolo) and U+E0100 (a variation selector) are Mn.
    for mark in ("\U0001d167", "\U000e0100"):
        out = few_marks("e" + mark * 4)
        assert out == "e" + mark * 3 + f"\\U{ord(mark):08x}"
    # A mark of the basic plane as before.
    assert few_marks("e" + "\u0301" * 4) == "e" + "\u0301" * 3 + "\\u0301"
