"""Hostile round 51: the limits round 50 left.

- ``HELLO_MAX_BYTES`` was what a Hello at every limit takes in ASCII, while the limits count
  characters: a third-party bot named in Cyrillic at 256 characters (512 bytes), with a
  client and features in its script at their limits, was refused unread for its bytes,
  though within every stated limit. The cap now allows 4 bytes a character of text; match
  ids (``running``), which the referee makes in ASCII, are limited in bytes, so that the
  1,024 of them still fit (at 4 bytes a character they alone would take a MiB).
- A later message's bytes past 256 answers of 1,024 bytes (256 KiB) counted toward the flood
  limit before it was parsed: within them, a DecisionBatch of 131,000 empty decisions cost
  the loop 9-15 ms to parse before its count refused it, at each of a bot's 30 streams a
  window. An answer takes at most 480 bytes (the referee's ids are under 100 characters,
  an action 14 bytes, ``failed`` kept to 64 characters): 512 bytes an answer, 128 KiB.
- A stream closed for a flood logged a WARNING each: the flood meter is the bot's, so once
  it is full each of the 30 streams a window lets in floods at its first stray message,
  a line each in the organiser's log. One WARNING per window now, the next saying how
  many were left out.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest

from arena.protocol import HELLO_LIMITS, HELLO_MAX_BYTES
from arena.referee import Referee
from arena.referee.core import ANSWER_BYTES, MAX_DECISION_BATCH
from arena.tournament.config import parse_config
from arena.tournament.schedule import match_id
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.support.harness import no_error_logged, serve_one_bot, welcomed_call  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")


async def _hello(port: int, hello: pb.Hello) -> tuple[str, str, list[pb.ServerMessage]]:
    """Say ``hello`` as bot x on a new call, half-close, read to the end."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call = pb_grpc.ArenaStub(ch).Play(metadata=(("authorization", "Bearer tok-x"),))
        got: list[pb.ServerMessage] = []
        try:
            await call.write(pb.BotMessage(hello=hello))
            await call.done_writing()
            while (m := await asyncio.wait_for(call.read(), 30)) is not grpc.aio.EOF:
                got.append(m)
        except grpc.aio.AioRpcError:
            pass
        return (await call.code()).name, await call.details() or "", got


def _cyrillic_at_every_limit() -> pb.Hello:
    """A Hello at every limit, its text in Cyrillic (2 bytes a character), its match ids
    in ASCII (as the referee makes them)."""
    most_features, chars = HELLO_LIMITS["features"]
    most_running, id_bytes = HELLO_LIMITS["running"]
    return pb.Hello(
        protocol_version=1,
        matches=0,
        bot_name="Тысячник" * 32,  # 256 characters
        client="клиент-" * 36 + "бот" + "ъ" * 1,  # 256
        features=[f"{i}".rjust(chars, "ф") for i in range(most_features)],
        running=[f"{i}".rjust(id_bytes, "m") for i in range(most_running)],
    )


def test_a_cyrillic_hello_at_the_stated_limits_is_welcomed() -> None:
    hello = _cyrillic_at_every_limit()
    assert len(hello.bot_name) == len(hello.client) == 256
    raw = len(pb.BotMessage(hello=hello).SerializeToString())
    # Round 50's cap (a Hello at every limit in ASCII) refused this one unread.
    assert 269_974 < raw <= HELLO_MAX_BYTES

    async def body(ref: Referee, port: int) -> dict[str, Any]:
        out = {"at": await _hello(port, hello)}
        # An id of the referee's is ASCII, and the limit of each counts its bytes: 129
        # Cyrillic letters are 258.
        over = pb.Hello(protocol_version=1, matches=0, running=["ж" * 129])
        out["id"] = await _hello(port, over)
        # A name of 256 four-byte characters (the most UTF-8 takes) is within the cap too.
        out["four"] = await _hello(port, pb.Hello(matches=0, bot_name="\U0001f0a1" * 256))
        out["name"] = ref.session("x").name
        return out

    out = serve_one_bot(body)
    code, details, got = out["at"]
    assert code == "OK" and got and got[0].HasField("welcome"), (code, details)
    assert got[0].welcome.bot_name == out["name"] == "x"  # (the token decides the name)
    # (Ids of 256 characters name no match of any arena: none is told interrupted.)
    assert [m.WhichOneof("kind") for m in got] == ["welcome"]
    code, details, got = out["id"]
    assert (code, got) == ("INVALID_ARGUMENT", []), out["id"]
    assert details == (
        "Hello.running[0] is 258 bytes long in UTF-8, more than the 256 each may have (ids "
        "are ASCII) (docs/protocol.md)"
    ), details
    code, details, got = out["four"]
    assert code == "OK" and got[0].HasField("welcome"), (code, details)


def test_a_hello_at_every_limit_in_four_byte_text_is_the_cap() -> None:
    four = "\U0001f0a1"
    hello = pb.Hello(protocol_version=2**32 - 1, matches=2**32 - 1)
    for name, (most, chars) in HELLO_LIMITS.items():
        text = ("x" if name == "running" else four) * chars
        if name in ("bot_name", "client"):
            setattr(hello, name, text)
        else:
            getattr(hello, name).extend([text] * most)
    assert pb.BotMessage(hello=hello).ByteSize() == HELLO_MAX_BYTES == 283_862


def test_streams_closed_for_a_flood_are_logged_once_a_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def flood_one(port: int) -> tuple[str, str]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = await welcomed_call(ch, "tok-x", "x")
            # Twenty strays in one message (one write: a write after the status can be
            # told INTERNAL by the client's own gRPC, see docs/protocol.md).
            stray = pb.Decision(request_id="1", match_id="none")
            try:
                await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=[stray] * 20)))
                while await asyncio.wait_for(call.read(), 30) is not grpc.aio.EOF:
                    pass
            except grpc.aio.AioRpcError:
                pass
            return (await call.code()).name, await call.details() or ""

    def flood_lines() -> list[str]:
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        return [line for line in said if "flooded its stream" in line]

    async def body(ref: Referee, port: int) -> dict[str, Any]:
        ends = [await flood_one(port) for _ in range(4)]
        out: dict[str, Any] = {"ends": ends, "lines": flood_lines()}
        # A window later (the last line's time moved back past it: the meter, full still,
        # floods the next stream at once), the next line counts those left out.
        session = ref.session("x")
        session.flood_warned_at -= ref.config.flood_window_s + 1
        out["last"] = await flood_one(port)
        out["after"] = flood_lines()
        return out

    out = serve_one_bot(body, flood_limit=10)
    for code, details in [*out["ends"], out["last"]]:
        assert code == "RESOURCE_EXHAUSTED" and "answering no pending request" in details
    assert out["lines"] == ["bot x flooded its stream: closed"], out["lines"]
    assert out["after"][1:] == [
        "bot x flooded its stream: closed (3 more of its streams closed so since the last "
        "such line, not logged)"
    ], out["after"]


def test_the_largest_answer_fits_the_bytes_a_decision_is_allowed() -> None:
    # The longest match id the arena makes: a tournament named at its longest (64
    # characters) with its fingerprint; `arena serve`'s are 27 characters.
    config = parse_config({"name": "t" * 64, "bots": {"a": "random", "b": "random", "c": "random"}})
    mid = match_id(config.tournament_id, 99_999)
    assert len(mid) < 100
    largest = pb.BotMessage(decision=pb.Decision(
        request_id="9" * 99,  # (a seat's requests, counted: never near)
        match_id=mid,
        action=pb.Action(give=pb.Give(card=pb.Card(suit=pb.SUIT_HEARTS, rank=pb.RANK_ACE),
                                      to_seat=2**32 - 1)),
        failed="\U0001f0a1" * 64,  # (the referee keeps 64 characters)
    ))  # fmt: skip
    assert largest.ByteSize() <= ANSWER_BYTES == 512
    assert MAX_DECISION_BATCH * ANSWER_BYTES == 128 * 1024
