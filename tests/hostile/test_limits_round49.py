"""Hostile round 49: the limits of a client's messages, and what a gone bot's token costs.

- A ``Hello`` may hold at most 64 features of 64 characters, 1,024 running ids of 256, and
  a name and client of 256 characters (``arena.protocol.HELLO_LIMITS``, stated in the proto
  and docs/protocol.md). A MiB of one-letter features or ids cost the referee's loop 50-150
  ms to go through, 30 times in 10 s per token; now such a Hello is refused with
  INVALID_ARGUMENT naming the field and the limit before any entry is read, and one at the
  limits is welcomed (its unknown running ids answered, 64 at most).
- A gone bot (its grace ran out while away, or its supervisor gave it up) forfeits each
  match that starts without it at once, unless a stream of its token is saying Hello: that
  exception gave the seat a whole grace, so the token's holder, opening a stream that never
  says Hello every 10 s (the Hello's timeout), stalled each of the bot's matches for a
  whole grace (a tournament's `reconnect_grace_s`, 30 s say) and every bot at its table with
  it. Now such a seat has 1 s to be back.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.protocol import HELLO_LIMITS
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import attach_in_process, no_error_logged, until  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


async def _hello(port: int, hello: pb.Hello) -> tuple[str, str, list[pb.ServerMessage]]:
    """Say ``hello`` as bot x on a raw call and half-close: (status, details, messages)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = ch.stream_stream(PLAY, request_serializer=lambda b: b)(
            metadata=(("authorization", "Bearer tok-x"),)
        )
        got: list[pb.ServerMessage] = []
        try:
            await call.write(pb.BotMessage(hello=hello).SerializeToString())
            await call.done_writing()
            while (m := await asyncio.wait_for(call.read(), 30)) is not grpc.aio.EOF:
                got.append(pb.ServerMessage.FromString(m))
        except grpc.aio.AioRpcError:
            pass
        return (await call.code()).name, await call.details() or "", got


def _at_limit(field: str) -> pb.Hello:
    most, chars = HELLO_LIMITS[field]
    h = pb.Hello(protocol_version=1, matches=0)
    if field in ("bot_name", "client"):
        setattr(h, field, "n" * chars)
    else:
        # As many as it may hold, the first as long as each may be.
        getattr(h, field).extend(["n" * chars, *(f"m{i}" for i in range(1, most))])
    return h


def test_a_hello_over_a_limit_is_refused_naming_it_and_one_at_the_limits_is_welcomed() -> None:
    async def body() -> None:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        try:
            for field, (most, chars) in HELLO_LIMITS.items():
                code, details, got = await _hello(port, _at_limit(field))
                assert code == "OK" and got[0].HasField("welcome"), (field, code, details)
                if field == "running":  # (ids it does not know: interrupted, 64 at most)
                    ends = [m.match_ended for m in got if m.HasField("match_ended")]
                    assert len(ends) == 64 and {e.result.reason for e in ends} == {"interrupted"}
                if field in ("bot_name", "client"):
                    over = _at_limit(field)
                    setattr(over, field, "n" * (chars + 1))
                    long = f"Hello.{field} is {chars + 1:,} characters long, more than the"
                    cases = [(over, f"{long} {chars:,}")]
                else:
                    many = _at_limit(field)
                    getattr(many, field).append("x")
                    wide = pb.Hello(protocol_version=1)
                    getattr(wide, field).extend(["ok", "w" * (chars + 1)])
                    cases = [
                        (many, f"Hello.{field} holds {most + 1:,} entries, more than the {most:,}"),
                        (wide, f"Hello.{field}[1] is {chars + 1:,} characters long, more than "
                               f"the {chars:,}"),
                    ]  # fmt: skip
                for hello, want in cases:
                    code, details, got = await _hello(port, hello)
                    assert (code, got) == ("INVALID_ARGUMENT", []), (field, code, details)
                    assert details.startswith(want), details
            # The worst of before: a MiB of one-letter features, refused all the same (since
            # round 50 unread, for its bytes: test_hello_bytes_round50.py); one-letter
            # features within the Hello's bytes, for their number.
            flood = pb.Hello(protocol_version=1, features=["x"] * 340_000)
            code, details, _ = await _hello(port, flood)
            assert code == "INVALID_ARGUMENT" and "not one of 1,020,006" in details, details
            flood = pb.Hello(protocol_version=1, features=["x"] * 80_000)
            code, details, _ = await _hello(port, flood)
            assert code == "INVALID_ARGUMENT" and "Hello.features holds 80,000" in details
            assert ref.session("x").welcomes == 4  # (the four at the limits only)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    asyncio.run(body())


def test_a_gone_bots_silent_stream_does_not_stall_its_next_match_for_a_grace() -> None:
    """x is given up (gone); a stream of its token opens and never says Hello; a match of
    x, y and z starts, with a grace of 60 s: x's seat has 1 s to be back, then forfeits
    (it did not wait 60 s, nor strike out over its timeouts); y and z play to the end."""

    async def body() -> dict[str, Any]:
        ref = Referee(RefereeConfig(reconnect_grace_s=60.0))
        ref.add_bot("x", "tok-x")

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_message(ref.session(bot), pb.BotMessage(decision=d))

        attach_in_process(ref, ("y", "z"), answer)
        ref.given_up("x", "its process is not restarted any more")
        server, port = await start_server(ref)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                silent = ch.stream_stream(PLAY)(metadata=(("authorization", "Bearer tok-x"),))
                await until(lambda: ref.session("x").reserved is not None, "x's silent stream")
                rec = await asyncio.wait_for(ref.run_match("m1", ONE_DEAL, 3, ["x", "y", "z"]), 60)
                silent.cancel()
            return rec
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    rec = asyncio.run(body())
    x = [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == 0]
    assert x[0] == ("disconnect", "not connected at the start; 1 s to reconnect"), x
    assert x[1] == ("forfeit", "disconnected for more than 1 s"), x
    assert [k for k, _ in x].count("timeout") == 0, x  # (forfeited before any strike)
    assert rec["forfeits"] == [0] and rec["result"]["places"][0] == 3
    assert not [i for i in rec["incidents"] if i["seat"] != 0]
