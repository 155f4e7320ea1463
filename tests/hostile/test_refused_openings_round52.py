"""Hostile round 52: stream openings refused before a Welcome, as fast as a client can.

A stream refused for its token (an unknown one, or none) costs the referee what any gRPC
call costs and a dictionary look-up: measured on the 2-core machine, one Python client
was refused some 1,300 a second, which took a third to a half of a core of the referee's
process, as a flood of ``GetInfo`` does (the cost is gRPC's, before the referee's code;
docs/referee.md says so, and a proxy in front is the remedy). One with a bot's token and
a Hello the referee refuses counts toward its bot's ``reconnect_limit``, so past 30 a
window it is refused at once.

What the log says of them was wrong: 20 refused openings a window are logged and the rest
counted, but with one count for every stream, the refusals of the client without a token
filled it, and a registered bot's own refused streams ("second stream for bot x refused:
the first is saying Hello") were never logged, only counted in "(N more refused streams
not logged)" among the flooder's. They are counted for each bot now, and apart from the
streams of no bot's token.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest

from arena.referee import Referee
from arena.referee.core import REFUSALS_LOGGED
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.support.harness import no_error_logged, serve_one_bot, until  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")


def test_refusals_without_a_token_do_not_hide_a_bots_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="arena.referee")

    async def body(ref: Referee, port: int) -> dict[str, Any]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.ArenaStub(ch)
            flood = [stub.Play(metadata=(("authorization", "Bearer nope"),))
                     for _ in range(REFUSALS_LOGGED + 10)]  # fmt: skip
            codes = await asyncio.wait_for(asyncio.gather(*(c.code() for c in flood)), 60)
            # x's first stream says nothing (it waits for its Hello); its second is refused.
            silent = stub.Play(metadata=(("authorization", "Bearer tok-x"),))
            await until(lambda: ref.session("x").reserved is not None, "x's first stream")
            second = stub.Play(metadata=(("authorization", "Bearer tok-x"),))
            out = {"codes": {c.name for c in codes}, "second": (await second.code()).name}
            silent.cancel()
            return out

    out = serve_one_bot(body)
    assert out == {"codes": {"UNAUTHENTICATED"}, "second": "ALREADY_EXISTS"}, out
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    tokenless = [line for line in lines if line.endswith("refused: unknown token")]
    assert len(tokenless) == REFUSALS_LOGGED, lines  # (the rest counted)
    assert "second stream for bot x refused: the first is saying Hello" in lines, lines
