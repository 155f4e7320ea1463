"""Review of round 42's reset/half-close distinction (``Referee.serve_stream``'s end: the
verdict ``left`` made after the settle, the stream attached until then).

The race the round's own tests ride on (grpc.aio cancels the handler of a reset call
sometimes before it sees the EOF, sometimes during the settle) let the mutant "a
cancellation during the settle keeps ``left``" pass 3 runs of 4: a half-close, then a
reset while the referee waits its settle, is the same verdict made on purpose here.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, no_error_logged  # noqa: F401 (a fixture)

from arena.referee import core
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from tests.hostile.test_stream_reset_round42 import (
    _back,
    _match_once_x_is_in,
    _md,
    _play_to_the_end,
    _until,
)

pytestmark = pytest.mark.usefixtures("no_error_logged")

#: The settle, lengthened: what the tests do within it is then done in time whatever the
#: machine's load (the verdict does not depend on its length).
LONG_SETTLE_S = 2.0


async def _played_then_half_closed(a: Any, ch: Any) -> tuple[Any, asyncio.Task[Any]]:
    """``x`` plays match ``m`` on a call of ``ch`` to its end, then half-closes; the call
    and the match (a task) once the referee has seen the EOF (``x`` is away, its
    handler in its settle)."""
    ref = a.referee
    call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
    playing = asyncio.create_task(_play_to_the_end(call))
    match = await _match_once_x_is_in(ref)
    await asyncio.wait_for(playing, 60)
    await call.done_writing()
    await asyncio.wait_for(_until(lambda: not ref.session("x").connected), 30)
    assert ref._attached == 1  # (in its settle: attached until the verdict)
    return call, match


def test_a_half_close_then_a_reset_before_the_ok_is_a_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot that half-closes after its end and then cancels its call (or closes its
    channel, or exits) before the referee's OK cannot be told from a reset: gRPC says EOF
    for both, then cancels the handler. Its end is kept as maybe unread, sent again, and
    a stopping arena waits for it (docs/protocol.md: read to the status before closing)."""
    monkeypatch.setattr(core, "CORE_END_SETTLE_S", LONG_SETTLE_S)

    async def main() -> tuple[list[str], Any, list[pb.ServerMessage], int]:
        async with arena(tmp_path, decision_ms=2000, reconnect_grace_s=60) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            async with grpc.aio.insecure_channel(a.target) as ch:
                call, match = await _played_then_half_closed(a, ch)
                call.cancel()  # within the settle
                code = await call.code()
            await asyncio.wait_for(_until(lambda: not ref._attached), 30)
            await asyncio.wait_for(match, 30)
            away = ref.away_with_results()
            got = await _back(a)
            return away, code, got, ref._attached

    away, code, got, attached = asyncio.run(main())
    assert code == grpc.StatusCode.CANCELLED
    assert away == ["x"], away  # (a mutant keeping ``left`` on a cancellation: [])
    assert [m.match_ended.match_id for m in got if m.HasField("match_ended")] == ["m"]
    assert attached == 0


def test_a_stream_replacing_one_in_its_settle_keeps_the_ends_it_took_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``x`` half-closes after its end; while the referee waits that call's settle, ``x``
    opens a new stream (it takes the kept end over), and the first call is then reset.
    The reset of the old call loses nothing of the new one's: once the new one is left
    too (a half-close, read to its OK), nothing is kept for ``x`` as away, and the count of
    attached streams went 2, 1, 0."""
    monkeypatch.setattr(core, "CORE_END_SETTLE_S", LONG_SETTLE_S)

    async def main() -> tuple[list[int], list[str], list[str], Any]:
        async with arena(tmp_path, decision_ms=2000, reconnect_grace_s=60) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            counts: list[int] = []
            async with grpc.aio.insecure_channel(a.target) as ch:
                first, match = await _played_then_half_closed(a, ch)
                await asyncio.wait_for(match, 30)
                async with grpc.aio.insecure_channel(a.target) as ch2:
                    second = pb_grpc.ArenaStub(ch2).Play(metadata=_md("tok-x"))
                    hello = pb.Hello(protocol_version=1, running=["m"])
                    await second.write(pb.BotMessage(hello=hello))
                    assert (await second.read()).WhichOneof("kind") == "welcome"
                    again = await second.read()  # the end, taken over by this stream
                    counts.append(ref._attached)
                    first.cancel()  # the old call reset within its settle
                    await asyncio.wait_for(_until(lambda: ref._attached == 1), 30)
                    counts.append(ref._attached)
                    await second.done_writing()
                    while await second.read() is not grpc.aio.EOF:
                        pass
                    code = await second.code()
            await asyncio.wait_for(_until(lambda: not ref._attached), 30)
            counts.append(ref._attached)
            ends = [m.match_ended.match_id for m in [again] if m.HasField("match_ended")]
            return counts, ends, ref.away_with_results(), code

    counts, ends, away, code = asyncio.run(main())
    assert ends == ["m"]
    assert code == grpc.StatusCode.OK
    assert counts == [2, 1, 0]
    assert away == []
