"""The SDK runner against a hostile arena: a scripted fake (grpc.aio on port 0) sends what
the real referee never does (bytes that do not parse, a newer protocol's enum values,
requests without legal actions, bad events and views, no Welcome, a retry-after out of
reason), and bots that never return. The runner logs what it cannot handle, naming the
message and its match, skips it and plays on; ``arena-bot run`` stops on a signal even
when a bot call never returns.

Every server, thread and process started here is stopped before its test ends."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.protocol import RETRY_AFTER_MS, _varint, ruleset_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PRESETS, Action, Game, GameResult, PlayerView, observe
from engine.game import DealResult
from sdk import Bot
from sdk.client import ArenaAuthError, ArenaError, BotRunner, RunSummary, _Match

ROOT = Path(__file__).parents[2]
#: A generous bound on anything that should happen at once (never a timed assertion).
GUARD = 20.0
#: ``arena-bot`` as a process, with Python's own SIGINT handler (a child started in the
#: background of a shell inherits an ignored SIGINT).
ARENA_BOT = ("-c", "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from sdk.cli import main; main()")  # fmt: skip

WELCOME = pb.ServerMessage(
    welcome=pb.Welcome(bot_name="b", server_version="fake", protocol_version=1, features=["batch"])
)

Out = bytes | pb.ServerMessage


# ----------------------------------------------------------------------------- the fake arena


class Stream:
    """One stream as a script sees it: what the bot sent, read in the background."""

    def __init__(self) -> None:
        self.received: list[pb.BotMessage] = []
        self._queue: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        self._decisions: deque[pb.Decision] = deque()
        self._ended = asyncio.Event()

    async def read(self, it: AsyncIterator[pb.BotMessage]) -> None:
        with suppress(Exception):  # the bot cancelled its stream
            async for m in it:
                self.received.append(m)
                await self._queue.put(m)
        self._ended.set()
        await self._queue.put(None)

    async def message(self, timeout: float = GUARD) -> pb.BotMessage | None:
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None

    async def decision(self, timeout: float = GUARD) -> pb.Decision | None:
        """The bot's next decision (those of a DecisionBatch one by one); None if none
        comes within ``timeout`` or the bot closed its side."""
        while not self._decisions:
            m = await self.message(timeout)
            if m is None:
                return None
            kind = m.WhichOneof("kind")
            if kind == "decision":
                self._decisions.append(m.decision)
            elif kind == "decisions":
                self._decisions.extend(m.decisions.decisions)
        return self._decisions.popleft()

    async def closed(self, timeout: float = GUARD) -> None:
        """Until the bot closes its side of the stream (or ``timeout``)."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self._ended.wait(), timeout)

    def decided(self) -> list[tuple[str, str]]:
        """(match id, request id) of every decision the bot sent on this stream."""
        out = []
        for m in self.received:
            ds = [m.decision] if m.WhichOneof("kind") == "decision" else m.decisions.decisions
            out += [(d.match_id, d.request_id) for d in ds]
        return out


Script = Callable[[Stream], AsyncIterator[Out]]


class FakeArena:
    """Plays ``scripts[i]`` on the i-th stream (the last one again after them); the
    bot's Hello is read before a script starts."""

    def __init__(self, scripts: tuple[Script, ...]) -> None:
        self.scripts = scripts
        self.streams: list[Stream] = []
        self.address = ""

    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[bytes]:
        stream = Stream()
        self.streams.append(stream)
        reader = asyncio.get_running_loop().create_task(stream.read(request_iterator))
        try:
            await stream.message()  # the Hello
            script = self.scripts[min(len(self.streams), len(self.scripts)) - 1]
            async for m in script(stream):
                yield m if isinstance(m, bytes) else m.SerializeToString()
        finally:
            reader.cancel()


@asynccontextmanager
async def fake_arena(
    *scripts: Script, options: list[tuple[str, Any]] | None = None
) -> AsyncIterator[FakeArena]:
    """A gRPC server on a free port whose ``Play`` calls run ``scripts`` (the n-th call the
    n-th script, the last one again after them); ``options``: the server's."""
    arena = FakeArena(scripts)
    server = grpc.aio.server(options=options)
    handler = grpc.method_handlers_generic_handler("arena.v1.Arena", {
        "Play": grpc.stream_stream_rpc_method_handler(
            arena.Play, request_deserializer=pb.BotMessage.FromString,
            response_serializer=lambda b: b,
        )})  # fmt: skip
    server.add_generic_rpc_handlers((handler,))
    arena.address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    try:
        yield arena
    finally:
        await server.stop(0)


def play(bot: Any, *scripts: Script, **options: Any) -> tuple[RunSummary, FakeArena]:
    """Run ``bot`` in a BotRunner against the scripts, to the end of the run."""

    async def main() -> tuple[RunSummary, FakeArena]:
        async with fake_arena(*scripts) as arena:
            opts: dict[str, Any] = {"initial_backoff": 0.01, "retry_for": GUARD, **options}
            runner = BotRunner(bot, arena.address, "tok", **opts)
            return await asyncio.wait_for(runner.run(), 3 * GUARD), arena

    return asyncio.run(main())


# ----------------------------------------------------------------------------- messages


def _game(seed: int = 1, players: tuple[str, ...] = ("a", "b", "c")) -> Game:
    return Game.new(PRESETS["classic"], seed, players)


def started(mid: str, g: Game) -> pb.ServerMessage:
    seat = g.to_act
    assert seat is not None
    return pb.ServerMessage(match_started=pb.MatchStarted(
        match_id=mid, seat=seat, players=list(g.players), ruleset=ruleset_to_pb(g.ruleset),
        view=view_to_pb(observe(g, seat))))  # fmt: skip


def request(mid: str, g: Game, rid: str) -> pb.ServerMessage:
    seat = g.to_act
    assert seat is not None
    return pb.ServerMessage(decision_request=pb.DecisionRequest(
        request_id=rid, match_id=mid, deal_number=g.deal_number,
        view=view_to_pb(observe(g, seat)), time_limit_ms=1000, time_bank_ms=10000))  # fmt: skip


def ended(mid: str) -> pb.ServerMessage:
    return pb.ServerMessage(match_ended=pb.MatchEnded(
        match_id=mid, result=pb.MatchResult(scores=[1000, 0, 0], places=[1, 2, 3], deals=3,
                                            reason="target")))  # fmt: skip


def deal_ended(mid: str, outcome: str = "made", declarer: bool = True) -> pb.Event:
    r = pb.DealResult(deal_number=1, bid=100, contract=100, outcome=outcome, takes=[0, 0, 0],
                      deltas=[0, 0, 0], scores=[0, 0, 0], dealer=0, card_points=[0, 0, 0],
                      marriage_points=[0, 0, 0])  # fmt: skip
    if declarer:
        r.declarer = 1
    return pb.Event(match_id=mid, seq=1, deal_ended=r)


def _nested_batches(depth: int) -> bytes:
    """A ServerMessage of ``depth`` Batches one inside the other, as bytes (protobuf
    refuses to build it)."""
    inner = b""
    for _ in range(depth):
        sm = b"\x0a" + _varint(len(inner)) + inner  # Batch.messages = 1
        inner = b"\x3a" + _varint(len(sm)) + sm  # ServerMessage.batch = 7
    return inner


class FirstLegal(Bot):
    """Asked in a worker thread (not quick): the first legal action."""

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(autouse=True)
def _no_bot_call_left() -> Iterator[None]:
    """Every bot call a test started has returned when it ends: ``arena-bot run`` (run
    in-process by other tests) exits at once, without waiting, while one is running."""
    from sdk.client import bot_calls_running

    yield
    for _ in range(int(GUARD / 0.01)):
        if not bot_calls_running():
            return
        time.sleep(0.01)
    assert not bot_calls_running()


def test_bytes_that_do_not_parse_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: gRPC hands ``None`` for bytes that do not parse (corrupt, or 200 Batches
    deep: past protobuf's depth limit); the runner crashed on it with a traceback, exit 1,
    every match lost. Now the message is logged as unparsable and the run goes on."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        yield b"\xff\xff\xff\xff\x0f\x00garbage"
        yield _nested_batches(200)
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(RandomBot, script)
    assert arena.streams[0].decided() == [("m1", "1"), ("m1", "2")]
    assert caplog.text.count("does not parse as arena.v1.ServerMessage") == 2
    assert summary.reason == "the arena closed the stream"


def test_a_newer_enum_value_and_a_failing_handler_do_not_end_the_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Defects: a DecisionRejected with an incident this SDK does not know (a newer
    protocol's: enums are open) crashed the runner (``Incident.Name`` raised), and so did
    anything unexpected while handling a message. Now the incident shows as its number,
    and an exception in a handler is logged naming the message's kind and match."""
    import sdk.client

    def broken(msg: pb.MatchResult, players: int) -> GameResult:
        raise RuntimeError("boom")

    monkeypatch.setattr(sdk.client, "match_result_from_pb", broken)
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started("m2", _game(2))
        newer = pb.DecisionRejected(request_id="0", match_id="m1", message="a new kind")
        newer.incident = 9  # type: ignore[assignment]  # a newer protocol's incident
        yield pb.ServerMessage(decision_rejected=newer)
        yield ended("m2")
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert "match m1: decision rejected (incident 9, " in caplog.text
    assert summary.rejected == 1
    [failed] = [r for r in caplog.records if "could not handle" in r.getMessage()]
    assert failed.getMessage() == (
        "could not handle a match_ended from the arena (match m2), ignored: RuntimeError: boom"
    )
    assert failed.exc_info is not None


@pytest.mark.parametrize("bot", [RandomBot, FirstLegal], ids=["quick", "in-a-thread"])
def test_a_request_without_legal_actions_is_refused_naming_it(
    bot: type[Bot], caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a DecisionRequest with no legal actions crashed a quick bot's runner
    (``fallback_action(())``: IndexError out of the read loop), and for a bot asked in a
    thread nothing was answered or logged until the exit ("Task exception was never
    retrieved"). Now it is refused with a line naming the match and the request (the
    referee times it out), and the match plays on."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # a quick bot is then asked on the read loop, at once
        empty = request("m1", g, "1")
        del empty.decision_request.view.legal_actions[:]
        yield empty
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(bot, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    assert "match m1: decision request 1 lists no legal actions: not answered" in caplog.text


def test_a_failing_step_of_a_match_is_logged_at_once(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: an exception in a match's task was left in the task ("Task exception was
    never retrieved" at the exit, if ever). Now it is logged when it happens."""
    view = observe(_game(), 0)

    async def main() -> None:
        runner = BotRunner(FirstLegal, "127.0.0.1:1", "tok")
        m = _Match("m1", 0, view.ruleset, None, view)

        async def boom() -> None:
            raise RuntimeError("boom")

        runner._chain(m, boom())
        await runner._drain()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        asyncio.run(main())
    [r] = [r for r in caplog.records if "a step of the match failed" in r.getMessage()]
    assert r.getMessage() == "match m1: a step of the match failed" and r.exc_info is not None


def test_a_bot_stuck_in_many_matches_still_plays_its_others() -> None:
    """Defect: bot calls ran in asyncio's default executor, min(32, cpus + 4) threads (6 on
    2 cores): a bot hanging in that many matches starved all its others, even the making of
    their bots. Now one stuck match never stalls another."""
    stuck = 40  # more than the default executor's threads on any machine
    release = threading.Event()

    class Hangs(Bot):
        def act(self, view: PlayerView) -> Action:
            if view.players[0] == "stuck":
                release.wait(3 * GUARD)
            return view.legal_actions[0]

    first: list[pb.Decision | None] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        try:
            yield WELCOME
            g = _game(players=("stuck", "b", "c"))
            for i in range(stuck):
                yield started(f"s{i}", g)
                yield request(f"s{i}", g, "1")
            fine = _game(players=("fine", "b", "c"))
            yield started("fine", fine)
            yield request("fine", fine, "1")
            first.append(await s.decision())
        finally:
            release.set()

    try:
        play(Hangs, script)
    finally:
        release.set()
    assert first[0] is not None and first[0].match_id == "fine"


def test_a_bad_event_is_skipped_and_the_rest_of_the_message_handled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: one event that did not decode (a deal outcome of a newer referee, a deal
    result without declarer) dropped the whole message, with another match's decision
    request in it (never answered). Now each event is handled on its own: a bad one is
    logged naming its match and skipped."""
    results: list[DealResult] = []

    class Hooked(FirstLegal):
        def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
            results.append(result)

    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started("m2", _game(2))
        r = request("m1", g, "1")
        r.events.append(deal_ended("m2", outcome="abandoned"))
        yield r
        await s.decision()
        r = request("m1", g, "2")
        r.events.extend([deal_ended("m2", declarer=False), deal_ended("m1")])
        yield r
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Hooked, script)
    assert arena.streams[0].decided() == [("m1", "1"), ("m1", "2")]
    bad = [r.getMessage() for r in caplog.records if "deal_ended event" in r.getMessage()]
    assert len(bad) == 2
    assert bad[0].startswith("malformed deal_ended event from the arena (match m2), ignored: "
                             "deal_result.outcome")  # fmt: skip
    assert "deal_result.declarer: missing" in bad[1]
    assert [(r.number, r.outcome) for r in results] == [(1, "made")]  # m1's, in that message


def test_an_arena_that_never_says_welcome_is_retried_then_given_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: an arena that accepted the stream and never sent Welcome left the bot
    waiting for ever (--retry-for did not apply). Now the stream is dropped after
    ``welcome_timeout`` and retried like an outage, within --retry-for."""

    async def silent(s: Stream) -> AsyncIterator[Out]:
        await s.closed()
        return
        yield  # an async generator that sends nothing

    async def welcomes(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(RandomBot, silent, welcomes, welcome_timeout=0.2)
    # The silent stream dropped, a welcoming one kept to its end (had it been dropped too,
    # every later one would, and --retry-for end the run). Not "exactly 2": a pause of the
    # process of 0.2 s on the second stream, between its opening and its Welcome, rightly
    # drops it too, and a third one welcomes the bot.
    assert summary.connections == len(arena.streams) >= 2
    assert summary.reason == "the arena closed the stream"
    assert "no Welcome from the arena at " in caplog.text
    assert " within 0.2 s; reconnecting" in caplog.text

    with pytest.raises(ArenaError, match=r"unreachable .*\(the last try: no Welcome from the "):
        play(RandomBot, silent, welcome_timeout=0.2, retry_for=0.5)


def _refused(ms: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(),
        grpc.aio.Metadata((RETRY_AFTER_MS, ms)), "too often",
    )  # fmt: skip


def _fail(runner: BotRunner, errors: list[grpc.aio.AioRpcError]) -> None:
    """Run ``runner`` whose streams fail with ``errors`` (the last one again and again)."""

    async def session() -> bool:
        tried.append(1)
        raise errors[min(len(tried), len(errors)) - 1]

    tried: list[int] = []
    runner._session = session  # type: ignore[method-assign]
    asyncio.run(asyncio.wait_for(runner.run(), GUARD))


def _delays(log: pytest.LogCaptureFixture) -> list[float]:
    """The waits the runner logged before reconnecting."""
    return [float(d) for d in re.findall(r"reconnecting in ([0-9.]+)s", log.text)]


def test_retry_after_is_kept_within_the_back_off_and_retry_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the arena's retry-after-ms overrode the back-off and --retry-for: 99999999999
    waited 600 s despite --retry-for 2, and 0 or -5 reconnected in a loop. Now the wait is
    at least the first back-off step and at most the longest, within --retry-for."""
    unauth = grpc.aio.AioRpcError(
        grpc.StatusCode.UNAUTHENTICATED, grpc.aio.Metadata(), grpc.aio.Metadata(), "no"
    )
    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.2, retry_for=None)
    with caplog.at_level(logging.INFO, logger="sdk.client"), pytest.raises(ArenaAuthError):
        _fail(runner, [_refused("0"), _refused("-5"), unauth])
    delays = _delays(caplog)
    assert len(delays) == 2 and min(delays) >= 0.2
    caplog.clear()

    runner = BotRunner(RandomBot, "127.0.0.1:1", "tok", initial_backoff=0.05, max_backoff=0.3,
                       retry_for=0.5)  # fmt: skip
    with caplog.at_level(logging.INFO, logger="sdk.client"), pytest.raises(ArenaError) as e:
        _fail(runner, [_refused("99999999999")])
    assert "unreachable for" in str(e.value)
    delays = _delays(caplog)
    assert delays and max(delays) <= 0.3


def test_a_match_end_with_a_bad_final_view_still_ends_the_match(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a MatchEnded whose final view did not decode lost the match's end (the match
    was dropped before the view raised): no on_match_end, not counted, --once never exited.
    Now the match ends with the last view the bot was given, and that is logged."""
    ends: list[PlayerView] = []

    class Hooked(FirstLegal):
        def on_match_end(self, view: PlayerView, result: GameResult) -> None:
            ends.append(view)

    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        me = ended("m1")
        view_to_pb(observe(g, 0), me.match_ended.view)
        me.match_ended.view.phase = pb.PHASE_UNSPECIFIED
        yield me
        await s.closed()  # the bot leaves after its one match

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Hooked, script, matches=1)
    assert summary.matches == 1 and summary.reason == "played 1 match(es)"
    seat = g.to_act
    assert seat is not None
    assert ends == [dataclasses.replace(observe(g, seat), legal_actions=())]  # the last view
    assert (
        "match m1: malformed final view from the arena (phase: unknown or unspecified "
        "phase 0): the match ends with the last view the bot was given"
    ) in caplog.text


def test_a_refused_match_start_names_the_match_and_its_later_messages(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a MatchStarted refused (a ruleset this SDK does not read) was logged without
    its match, and each later request said "decision request for unknown match", though the
    arena had seated the bot there. A MatchStarted whose seat is not its view's was not
    refused at all."""
    bad = _game()
    ok = _game(2)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        r1 = started("r1", bad)
        r1.match_started.ruleset.players = 5
        yield r1
        yield request("r1", bad, "1")
        r2 = started("r2", bad)
        r2.match_started.seat = (r2.match_started.seat + 1) % 3
        yield r2
        yield request("r2", bad, "1")
        yield started("m3", ok)
        yield request("m3", ok, "1")
        await s.decision()
        yield ended("r1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(RandomBot, script)
    assert arena.streams[0].decided() == [("m3", "1")]
    text = caplog.text
    assert "match r1: malformed MatchStarted from the arena, refused (ruleset.players:" in text
    assert "decision request for match r1 (its start was refused above): ignored" in text
    assert "match r2: malformed MatchStarted from the arena, refused (match_started.seat:" in text
    assert "decision request for match r2 (its start was refused above): ignored" in text
    assert "unknown match" not in text
    assert "match r1 ended (without the bot: its start was refused above)" in text
    assert summary.matches == 1


def test_messages_before_the_welcome_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: messages before the Welcome were acted on (a decision was sent), and a
    second Welcome logged "connected" again. Both break the protocol: warned, ignored."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield started("m1", g)
        yield request("m1", g, "1")
        yield WELCOME
        yield WELCOME
        yield started("m2", g)
        yield request("m2", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(RandomBot, script)
    assert arena.streams[0].decided() == [("m2", "1")]
    text = caplog.text
    assert ("protocol violation: match_started from the arena before its Welcome (match m1): "
            "ignored") in text  # fmt: skip
    assert "protocol violation: decision_request from the arena before its Welcome" in text
    assert "protocol violation: a second Welcome from the arena: ignored" in text
    assert text.count("connected to") == 1


def test_a_run_stopped_twice_does_not_wait_for_a_call_that_never_returns() -> None:
    """Defect: bot calls ran in asyncio's default executor, which asyncio.run waits for:
    a run with an ``act`` that never returned could not end. Now the runner's own threads
    are not waited for; a second signal cuts the grace short, and ``bot_calls_running``
    names what still runs."""
    from sdk.client import bot_calls_running

    asked, release = threading.Event(), threading.Event()

    class Blocks(Bot):
        def act(self, view: PlayerView) -> Action:
            asked.set()
            release.wait(3 * GUARD)
            return view.legal_actions[0]

    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.closed()

    async def main() -> tuple[RunSummary, list[str]]:
        async with fake_arena(script) as arena:
            runner = BotRunner(Blocks, arena.address, "tok", retry_for=GUARD)
            task = asyncio.create_task(runner.run())
            assert await asyncio.to_thread(asked.wait, GUARD)
            runner._signalled("SIGINT")
            runner._signalled("SIGINT")  # Ctrl-C twice: no grace
            summary = await asyncio.wait_for(task, GUARD)
            return summary, bot_calls_running()

    try:
        summary, running = asyncio.run(main())
    finally:
        release.set()
    assert summary.reason == "signal SIGINT"
    assert "act in match m1" in running


def test_a_program_that_ran_the_sdk_exits_with_a_bot_call_that_never_returned() -> None:
    """Defect (known limit until 2026-12-02): the runner's worker threads were a
    ``ThreadPoolExecutor``'s, which Python joins at exit: a program that called
    ``sdk.run()`` and got its summary back never ended while an ``act`` of its bot was stuck
    (only ``arena-bot``, which leaves by ``os._exit``, did). The threads are daemons now."""
    import subprocess

    code = (
        "import asyncio, threading\n"
        "from sdk import Bot\n"
        "from sdk.client import BotRunner, bot_calls_running\n"
        "runner = BotRunner(Bot, '127.0.0.1:1', 'tok')\n"
        "async def main():\n"
        "    done = asyncio.ensure_future(runner._in_thread('act in match m1', lambda: 7))\n"
        "    assert await done == 7\n"
        "    stuck = asyncio.ensure_future(\n"
        "        runner._in_thread('act in match m2', threading.Event().wait))\n"
        "    while not bot_calls_running():\n"
        "        await asyncio.sleep(0.01)\n"
        "    print(bot_calls_running(), flush=True)\n"
        "asyncio.run(main())\n"
        "print('leaving', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=GUARD * 3, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['act in match m2']", "leaving"]


def _bot_file(tmp: Path, body: str) -> str:
    (tmp / "hostile_bot.py").write_text(
        "import sys, threading\nfrom sdk import Bot\n\n\nclass B(Bot):\n"
        "    def act(self, view):\n" + body
    )
    return f"{tmp / 'hostile_bot.py'}:B"


async def _arena_bot(tmp: Path, address: str, spec: str, signals: tuple[str, ...] = ()
                     ) -> tuple[int, str]:  # fmt: skip
    """``arena-bot run SPEC`` against ``address`` to its end; each of ``signals`` is sent
    once its line before ("asked" from the bot, then "stopping"/"again" from the runner)
    is read. Killed after a guard; exit code and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *ARENA_BOT, "run", spec, "--arena", address, "--token", "t",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=str(tmp),
        env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    waits = ["asked", "stopping: signal"]
    try:
        async with asyncio.timeout(3 * GUARD):
            for sig in signals:
                wanted = waits.pop(0)
                while not any(wanted in ln for ln in lines):
                    line = (await proc.stderr.readline()).decode(errors="replace")
                    assert line, "".join(lines)
                    lines.append(line)
                proc.send_signal(getattr(signal, sig))
            lines.append((await proc.stderr.read()).decode(errors="replace"))
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, "".join(lines)


def _cli(tmp: Path, body: str, signals: tuple[str, ...] = ()) -> tuple[int, str]:
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.closed(3 * GUARD)

    async def main() -> tuple[int, str]:
        async with fake_arena(script) as arena:
            return await _arena_bot(tmp, arena.address, _bot_file(tmp, body), signals)

    return asyncio.run(main())


@pytest.mark.parametrize("signals", [("SIGTERM",), ("SIGINT", "SIGINT")])
def test_arena_bot_run_stops_on_a_signal_while_a_bot_call_never_returns(
    tmp_path: Path, signals: tuple[str, ...]
) -> None:
    """Defect: a bot whose ``act`` never returned could not be stopped by SIGTERM or Ctrl-C
    (twice): the process waited for the worker thread for ever. Now, after a grace (cut
    short by a second Ctrl-C), the call still running is named and the process exits."""
    body = ('        print("asked", file=sys.stderr, flush=True)\n'
            "        threading.Event().wait()\n")  # fmt: skip
    code, err = _cli(tmp_path, body, signals)
    assert code == 0, err
    assert "a bot call is still running (act in match m1): exiting without waiting" in err
    assert ("not waiting for the bot's calls" in err) == (len(signals) == 2)


def test_arena_bot_run_prints_the_text_a_bot_exits_with(tmp_path: Path) -> None:
    """Defect: ``raise SystemExit("text")`` in a bot under ``arena-bot run`` exited 1 but
    the text was never printed (Python, and ``arena-bot try``, print it)."""
    code, err = _cli(tmp_path, '        raise SystemExit("goodbye, cruel arena")\n')
    assert code == 1, err
    assert err.rstrip().splitlines()[-1] == "goodbye, cruel arena"
    assert "the bot left: goodbye, cruel arena (exit code 1)" in err


class _NotAnException(BaseException):
    """What some libraries raise (a ``BaseException`` that is no ``Exception``)."""


@pytest.mark.parametrize("where", ["act", "on_match_start", "__init__"])
def test_a_bot_raising_a_base_exception_is_a_bot_error_not_a_stopped_runner(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a bot raising a ``BaseException`` that is no ``Exception`` (a
    ``GeneratorExit``, a library's own) escaped every handler: in an arena the match's
    step failed silently, its later requests went unanswered until the seat forfeited on
    strikes ("0 bot errors", then "Task exception was never retrieved"); `arena-bot try`
    stopped with a traceback. Now it counts as the bot's bug, as any exception does: the
    fallback is answered and the error logged with its line."""
    g = _game()

    class Raises(Bot):
        def __init__(self) -> None:
            if where == "__init__":
                raise _NotAnException("in init")

        def on_match_start(self, view: PlayerView) -> None:
            if where == "on_match_start":
                raise _NotAnException("in a hook")

        def act(self, view: PlayerView) -> Action:
            if where == "act":
                raise _NotAnException("in act")
            return view.legal_actions[0]

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        if where != "__init__":  # (a bot that cannot be made answers nothing: documented)
            await s.decision()
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Raises, script)
    assert summary.errors == 1
    assert "_NotAnException" in caplog.text
    assert "never retrieved" not in caplog.text
    if where != "__init__":
        assert arena.streams[0].decided() == [("m1", "0")]


def test_a_bot_raising_a_base_exception_plays_on_locally() -> None:
    """The same defect in `arena-bot try` (``sdk.local``): the series stopped with a
    traceback. Now the seat's move is the fallback and an incident names what it raised;
    ``SystemExit`` still means the bot leaves."""
    from sdk.local import play_local

    class Raises(Bot):
        def act(self, view: PlayerView) -> Action:
            raise _NotAnException("in act")

    m = play_local([Raises, RandomBot, RandomBot], seed=1, max_deals=1)
    assert m.incidents and all(i.kind == "error" for i in m.incidents if i.seat == 0)
    assert "_NotAnException: in act" in m.incidents[0].detail

    class Leaves(Bot):
        def act(self, view: PlayerView) -> Action:
            raise SystemExit(3)

    with pytest.raises(SystemExit):
        play_local([Leaves, RandomBot, RandomBot], seed=1, max_deals=3)  # (asked in deal 2)


@pytest.mark.parametrize("where", ["on_match_end", "__init__"])
def test_a_hook_cancelled_at_a_stop_is_no_bot_error(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (review of the above): catching every ``BaseException`` around the wait for a
    hook or the making of the bot caught the runner's own cancellation of that step too (a
    second Ctrl-C, or the grace at a stop run out, while a slow ``on_match_end`` or
    ``__init__`` ran): the stop was logged as the bot's error with a traceback and counted
    ("1 bot error"). A ``CancelledError`` the bot raises itself is still its error."""
    release = threading.Event()

    class Slow(Bot):
        def __init__(self) -> None:
            if where == "__init__":
                release.wait(5)

        def on_match_end(self, view: PlayerView, result: object) -> None:
            release.wait(5)

    view = observe(_game(), 0)

    async def main() -> BotRunner:
        runner = BotRunner(Slow, "127.0.0.1:1", "tok")
        m = _Match("m1", 0, view.ruleset, None, view)
        if where == "__init__":
            runner._chain(m, runner._make(m, view))
        else:
            m.bot = Slow()
            runner._schedule(m, "on_match_end", view, None)
        await asyncio.sleep(0.1)
        runner._hurry.set()  # a second signal: what is left is cancelled
        await runner._drain(timeout=0.1)
        await asyncio.sleep(0.05)
        release.set()
        return runner

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        runner = asyncio.run(main())
    assert runner.summary.errors == 0, caplog.text
    assert "CancelledError" not in caplog.text

    class CancelsItself(Bot):
        def act(self, view: PlayerView) -> Action:
            raise asyncio.CancelledError

        def on_match_start(self, view: PlayerView) -> None:
            raise asyncio.CancelledError

    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()
        yield ended("m1")

    summary, arena = play(CancelsItself, script)
    assert summary.errors == 2
    assert arena.streams[0].decided() == [("m1", "0")]


@pytest.mark.parametrize("where", ["act", "quick act", "on_match_start", "__init__"])
def test_a_bot_raising_keyboard_interrupt_in_an_arena_leaves_cleanly(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (review of the BaseException change, which kept it "a person stops it"): in
    `arena-bot run` a Ctrl-C is the event loop's signal handler's, never a
    ``KeyboardInterrupt`` in the bot's code; one the bot's own code raised (in a worker
    thread, or a quick bot's act on the read loop) ended the event loop with a traceback,
    its stream cut and its other matches left to forfeit. It leaves now as with
    ``SystemExit``: a clean stop, exit code 130 (as a Ctrl-C's)."""
    g = _game()

    class Interrupts(Bot):
        quick = where == "quick act"

        def __init__(self) -> None:
            if where == "__init__":
                raise KeyboardInterrupt

        def on_match_start(self, view: PlayerView) -> None:
            if where == "on_match_start":
                raise KeyboardInterrupt

        def act(self, view: PlayerView) -> Action:
            raise KeyboardInterrupt

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await asyncio.sleep(GUARD)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        try:
            summary, arena = play(Interrupts, script)
        except KeyboardInterrupt:
            pytest.fail("the bot's KeyboardInterrupt ended the event loop")
    assert summary.exit_code == 130 and summary.errors == 0
    assert "the bot left: KeyboardInterrupt (exit code 130)" in summary.reason
    assert arena.streams[0].decided() == []


@pytest.mark.parametrize("raised", [GeneratorExit, StopIteration])
@pytest.mark.parametrize("where", ["on_match_start", "__init__"])
def test_a_generator_exit_or_stop_iteration_raised_in_an_arena_is_the_bots_error(
    where: str, raised: type[BaseException], caplog: pytest.LogCaptureFixture
) -> None:
    """Defects (review of the BaseException change, whose test raised a BaseException of
    its own, never the GeneratorExit it named): a hook or ``__init__`` runs in a worker
    thread, and what it raised was thrown into the waiting coroutines by asyncio; a
    ``GeneratorExit`` thrown so closes them (PEP 380) instead: the runner's handler got an
    empty GeneratorExit of Python's (the bot's message and line lost: "cannot make the
    bot (GeneratorExit: )") and the bot's own escaped the match's step, "Task exception
    was never retrieved". A ``StopIteration`` cannot be set on an asyncio future at all
    ("StopIteration interacts badly with generators"): the runner waited for that call
    for ever, and every later request of the match went unanswered until the seat
    forfeited. Both reach the handler as raised now: the bot's error, as any other."""
    g = _game()

    class Raises(Bot):
        def __init__(self) -> None:
            if where == "__init__":
                time.sleep(0.1)  # (raised while the runner waits: thrown into it)
                raise raised("raised by the bot")

        def on_match_start(self, view: PlayerView) -> None:
            time.sleep(0.1)
            raise raised("raised by the bot")

        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        if where != "__init__":
            await s.decision()
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Raises, script, matches=1)
    assert summary.errors == 1 and summary.matches == 1
    [said] = [r for r in caplog.records if r.name == "sdk.client" and r.levelname == "ERROR"]
    assert said.exc_info is not None
    if raised is GeneratorExit:
        assert str(said.exc_info[1]) == "raised by the bot"
    else:  # (raised again in a coroutine it is a RuntimeError, PEP 479: the bot's is its cause)
        assert "StopIteration: raised by the bot" in caplog.text
    assert "never retrieved" not in caplog.text
    if where != "__init__":
        assert arena.streams[0].decided() == [("m1", "0")]
