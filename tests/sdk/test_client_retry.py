"""How the runner treats a stream that ends before the Welcome (no server needed)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from bots.random_bot import RandomBot
from sdk.client import ArenaAuthError, ArenaError, BotRunner


def _error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


def _runner(*codes: grpc.StatusCode) -> tuple[BotRunner, list[grpc.StatusCode]]:
    """A runner whose streams end, one after the other, with ``codes``."""
    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.001)
    tried: list[grpc.StatusCode] = []

    async def session() -> bool:
        code = codes[len(tried)]
        tried.append(code)
        raise _error(code, "Internal error from Core" if code.name == "INTERNAL" else "no")

    runner._session = session  # type: ignore[method-assign]
    return runner, tried


def test_internal_before_the_welcome_is_asked_again_to_get_the_real_status() -> None:
    # gRPC core can end a refused stream with INTERNAL when the refusal overtakes Hello.
    i, unauth = grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAUTHENTICATED
    runner, tried = _runner(i, i, unauth)
    with pytest.raises(ArenaAuthError, match="refused the token"):
        asyncio.run(runner.run())
    assert tried == [i, i, unauth]


def test_internal_again_and_again_is_an_error_that_names_it() -> None:
    """INTERNAL in a row is retried as UNAVAILABLE is, until --retry-for runs out (it gave
    up at the 4th: a flaky network resetting connections in their handshake, which gRPC
    core reports as INTERNAL, made the bot exit within seconds, see
    tests/e2e/test_network_faults.py)."""
    i = grpc.StatusCode.INTERNAL
    # Retried each time, past the 4th: ten in a row, then the arena's own answer. (Counted,
    # not bounded by --retry-for: a pause of the process longer than a short one ended the
    # tries before the 5th.)
    runner, tried = _runner(*[i] * 10, grpc.StatusCode.UNAUTHENTICATED)
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert tried == [i] * 10 + [grpc.StatusCode.UNAUTHENTICATED]
    # Once --retry-for has run out, the error names it.
    runner, tried = _runner(*[i] * 10_000)
    runner.retry_for = 0.2
    lost = r"unreachable for 0s \(the last try: the connection to the arena at .* was lost: "
    with pytest.raises(ArenaError, match=lost):
        asyncio.run(runner.run())


def test_a_stream_replaced_by_another_of_the_token_stops_the_bot() -> None:
    """The arena keeps the newest stream of a token (ABORTED to the old one): the bot stops
    and says why, rather than reconnect and take the seats back, for ever, from the other
    process that uses its token."""
    runner, tried = _runner(grpc.StatusCode.ABORTED, grpc.StatusCode.OK)
    with pytest.raises(ArenaError, match="another connection with the same token"):
        asyncio.run(runner.run())
    assert tried == [grpc.StatusCode.ABORTED]


def test_a_match_started_again_under_a_known_id_is_a_new_match() -> None:
    """An arena restarted counts its match ids from the start again: a MatchStarted that is
    not a resumption, for an id the bot still holds (it never heard that match end), is a
    new match (it was taken as the old one resumed: the old bot instance, the old ruleset)."""
    from arena.protocol import ruleset_to_pb, view_to_pb
    from arena.v1 import arena_pb2 as pb
    from engine import Game, observe

    def started(preset: str, resumed: bool) -> pb.MatchStarted:
        g = Game.new(preset, 1, ["a", "b", "c"])
        return pb.MatchStarted(
            match_id="m00000", seat=0, players=g.players, ruleset=ruleset_to_pb(g.ruleset),
            view=view_to_pb(observe(g, 0)), resumed=resumed,
        )  # fmt: skip

    async def main() -> list[str]:
        runner = BotRunner(RandomBot, "127.0.0.1:1", "tok")
        names = []
        for preset, resumed in (("classic", False), ("classic", True), ("1001", False)):
            runner._on_match_started(started(preset, resumed))
            names.append(runner._matches["m00000"].ruleset.name)
        await asyncio.sleep(0.05)  # the bots are made
        return names

    assert asyncio.run(main()) == ["classic", "classic", "1001"]


def test_refused_for_reconnecting_too_often_waits_as_told_and_tries_again() -> None:
    """A stream refused for reconnecting too often (RESOURCE_EXHAUSTED with retry-after-ms,
    the referee's reconnect_limit) is tried again after the time named: the bot used to
    stop, forfeiting every seat, over a flapping connection. Without the key
    RESOURCE_EXHAUSTED (a flood, a queue a bot does not read) still stops it."""
    from arena.protocol import RETRY_AFTER_MS

    def refused(retry: bool) -> grpc.aio.AioRpcError:
        trailing = grpc.aio.Metadata((RETRY_AFTER_MS, "30")) if retry else grpc.aio.Metadata()
        return grpc.aio.AioRpcError(
            grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), trailing, "too often"
        )

    def runner_for(errors: list[grpc.aio.AioRpcError]) -> tuple[BotRunner, list[float]]:
        runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.001)
        tried: list[float] = []

        async def session() -> bool:
            tried.append(asyncio.get_running_loop().time())
            raise errors[len(tried) - 1]

        runner._session = session  # type: ignore[method-assign]
        return runner, tried

    unauth = _error(grpc.StatusCode.UNAUTHENTICATED, "no")
    runner, tried = runner_for([refused(True), unauth])
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert len(tried) == 2 and tried[1] - tried[0] >= 0.025  # it waited what it was told

    runner, tried = runner_for([refused(False), unauth])
    with pytest.raises(ArenaError, match="RESOURCE_EXHAUSTED: too often"):
        asyncio.run(runner.run())
    assert len(tried) == 1


def test_internal_after_the_welcome_is_retried_like_a_dropped_connection() -> None:
    """Defect (verification of the day's audits): a connection reset mid-match can end the
    bot's call with INTERNAL ("Internal error from Core", from its own gRPC core) rather
    than UNAVAILABLE; the runner retried INTERNAL only before a Welcome, so the bot exited
    and forfeited every seat. Each welcomed stream now starts a fresh count of retries."""
    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.001)
    codes = [grpc.StatusCode.INTERNAL] * 6 + [grpc.StatusCode.UNAUTHENTICATED]
    tried: list[grpc.StatusCode] = []

    async def session() -> bool:
        code = codes[len(tried)]
        tried.append(code)
        runner._welcomed = True  # each stream was welcomed, then reset
        raise _error(code, "Internal error from Core" if code.name == "INTERNAL" else "no")

    runner._session = session  # type: ignore[method-assign]
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert tried == codes  # six resets in a row, each after a Welcome: all retried


def test_steps_dropped_at_a_stop_leave_no_coroutine_unawaited() -> None:
    """Defect (code review): a match's queued step (a decision, an on_match_end) cancelled
    at a stop before it ran left its coroutine never awaited: Python warned about each."""
    import gc
    import warnings

    from sdk.client import _Match

    async def main() -> None:
        runner = BotRunner(RandomBot, "127.0.0.1:1", "tok")
        m = _Match("m1", 0, None, None, None)  # type: ignore[arg-type]

        async def slow() -> None:
            await asyncio.sleep(10)

        async def queued() -> None:
            raise AssertionError("a step dropped at the stop ran")

        runner._chain(m, slow())
        runner._chain(m, queued())  # behind the slow one
        await asyncio.sleep(0.05)
        runner._hurry.set()  # a second signal: what is left is cancelled
        await runner._drain(timeout=0.1)
        await asyncio.sleep(0.05)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], caught
