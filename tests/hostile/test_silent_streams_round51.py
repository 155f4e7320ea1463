"""Hostile round 51: many streams of a playing bot's token that never say Hello.

Bot x plays a match (in process, honest). A client holding x's token opens 20 ``Play``
calls at once on one connection and never sends a message on any. What they may hold, and
for how long (docs/protocol.md, "One stream per token"): one of them waits for its Hello,
the others are refused at once with ``ALREADY_EXISTS``; the waiting one, its rivals come,
is given 1 s more and is then refused with ``INVALID_ARGUMENT`` naming why. None of them
replaces x's stream or touches its match: it ends with no incident of any seat (no
disconnect), and x is still connected on its own stream at the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.support.harness import attach_in_process, no_error_logged, until  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def test_silent_streams_of_a_playing_bots_token_hold_nothing_of_it() -> None:
    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig())
        match_task: asyncio.Task[dict[str, Any]] | None = None
        released = asyncio.Event()
        answering: set[asyncio.Task[None]] = set()

        def honest(name: str, r: pb.DecisionRequest) -> None:
            async def later() -> None:
                if name == "x":  # x's answers wait until the silent streams have all ended
                    await released.wait()
                ref.on_decision(ref.session(name), pb.Decision(
                    request_id=r.request_id, match_id=r.match_id,
                    action=r.view.legal_actions[0]))  # fmt: skip

            task = asyncio.ensure_future(later())
            answering.add(task)
            task.add_done_callback(answering.discard)

        streams = attach_in_process(ref, ("a", "b", "x"), honest)
        server, port = await start_server(ref)
        try:
            match_task = asyncio.create_task(ref.run_match("m", ONE_DEAL, 3, ["a", "b", "x"]))
            await until(lambda: len(ref.session("x").seats) == 1, "x seated")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = pb_grpc.ArenaStub(ch)
                calls = [stub.Play(metadata=(("authorization", "Bearer tok-x"),))
                         for _ in range(20)]  # fmt: skip
                codes = await asyncio.wait_for(asyncio.gather(*(c.code() for c in calls)), 60)
                details = [await c.details() for c in calls]
            released.set()
            rec = await asyncio.wait_for(match_task, 120)
            return {
                "codes": [c.name for c in codes],
                "details": details,
                "rec": rec,
                "still": ref.session("x").stream is streams["x"],
            }
        finally:
            released.set()
            if match_task is not None and not match_task.done():
                match_task.cancel()
            await ref.end_streams()
            await server.stop(1.0)

    out = asyncio.run(main())
    codes = out["codes"]
    assert sorted(set(codes)) == ["ALREADY_EXISTS", "INVALID_ARGUMENT"], codes
    assert codes.count("INVALID_ARGUMENT") == 1 and codes.count("ALREADY_EXISTS") == 19
    waited = out["details"][codes.index("INVALID_ARGUMENT")]
    assert waited == (
        "the first message must be Hello: none came, and another stream of bot 'x' came 1 s "
        "ago (this one is taken for dead)"
    ), waited
    refused = {d for c, d in zip(codes, out["details"], strict=True) if c == "ALREADY_EXISTS"}
    assert refused == {"another stream of bot 'x' is saying Hello; retry after it"}, refused
    rec = out["rec"]
    assert rec["incidents"] == [] and not rec["forfeits"], rec["incidents"]
    assert out["still"]
