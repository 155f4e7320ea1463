"""The SDK runner against a hostile or broken arena, round 4: a match started twice, ended
twice or for a match the bot does not hold, requests for matches never started or over,
deal ends out of order, a reconnection whose answers name other matches than the bot
holds, a stream kept open over a dead link, an error status after a delay, and a host
whose first address is dead; the same with ``--workers``. The fake arena is that of
``test_hostile_arena.py`` (grpc.aio on port 0); every server and process started here is
stopped before its test ends."""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

from arena.protocol import card_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, Card, DealResult, Game, Phase, PlayerView, observe
from sdk import Bot
from sdk.client import ArenaAuthError, ArenaError, BotRunner, RunSummary
from sdk.workers import Processes
from tests.sdk.test_hostile_arena import (
    GUARD,
    WELCOME,
    FakeArena,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    deal_ended,
    ended,
    fake_arena,
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _ending
from tests.support.harness import until
from tests.support.netproxy import FaultProxy

ROOT = Path(__file__).parents[2]
PID_BOT = f"{ROOT / 'tests' / 'support' / 'pid_bot.py'}:PidBot"


class Hooks(Bot):
    """Answers the first legal action; records every call it gets, with its instance's
    number (instances made so far: ``id()`` may be reused once one is let go)."""

    calls: ClassVar[list[tuple[str, Any, int]]] = []
    made: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        Hooks.made += 1
        self.serial = Hooks.made

    def on_match_start(self, view: PlayerView) -> None:
        self.calls.append(("on_match_start", self.match_id, self.serial))

    def act(self, view: PlayerView) -> Action:
        self.calls.append(("act", self.match_id, self.serial))
        return view.legal_actions[0]

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        self.calls.append(("on_deal_end", (self.match_id, result.number), self.serial))

    def on_match_end(self, view: PlayerView, result: object) -> None:
        self.calls.append(("on_match_end", self.match_id, self.serial))

    @classmethod
    def named(cls, name: str) -> list[Any]:
        return [what for kind, what, _ in cls.calls if kind == name]


@pytest.fixture(autouse=True)
def _fresh_hooks() -> None:
    Hooks.calls, Hooks.made = [], 0


def _sdk(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The SDK's log records (not gRPC's: a test process that runs many event loops may
    log grpc.aio's teardown of an earlier one, see tests.support.harness.errors_logged)."""
    return [r for r in caplog.records if r.name.startswith("sdk")]


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the SDK said at WARNING or above: the lines a bot's author sees."""
    return [r.getMessage() for r in _sdk(caplog) if r.levelno >= logging.WARNING]


def _resumed(mid: str, g: Any) -> pb.ServerMessage:
    msg = started(mid, g)
    msg.match_started.resumed = True
    return msg


def _interrupted(mid: str) -> pb.ServerMessage:
    return pb.ServerMessage(
        match_ended=pb.MatchEnded(match_id=mid, result=pb.MatchResult(reason="interrupted"))
    )


class _Loads:
    """What the worker processes hold when the run ends: matches in progress per worker."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at_end: list[int] = []
        shutdown = Processes.shutdown

        def record(procs: Processes) -> None:
            self.at_end = list(procs._load)
            shutdown(procs)

        monkeypatch.setattr(Processes, "shutdown", record)


@pytest.mark.parametrize("workers", [None, 1])
def test_a_match_started_twice_releases_its_first_bot(
    workers: int | None,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Defect: a MatchStarted (not resumed) for a match the bot is in drops the earlier
    match of that id and makes a new bot (an arena restarted, a tournament playing an
    interrupted match again under its id); with ``--workers`` the dropped match's bot was
    never released: its worker kept the instance, and counted the match as in progress
    for ever (new matches went to the other workers). Pinned: each instance is started
    once, the first is not asked again, and only the match's last instance is ended."""
    monkeypatch.setenv("PID_BOT_LOG", str(tmp_path / "calls"))
    loads = _Loads(monkeypatch)
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        yield started("m1", g)  # again, not resumed
        yield request("m1", g, "2")
        await s.decision()
        yield ended("m1")

    from tests.support.pid_bot import PidBot

    opts: dict[str, Any] = {} if workers is None else {"workers": workers, "spec": PID_BOT}
    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Hooks if workers is None else PidBot, script, matches=1, **opts)
    assert summary.matches == 1
    assert arena.streams[0].decided() == [("m1", "1"), ("m1", "2")]
    assert "match m1 started again: the earlier match of that id is dropped" in caplog.text
    if workers is None:
        who = [(kind, i) for kind, _, i in Hooks.calls]
        first, second = who[0][1], who[2][1]
        assert first != second
        assert who == [("on_match_start", first), ("act", first), ("on_match_start", second),
                       ("act", second), ("on_match_end", second)]  # fmt: skip
    else:
        assert loads.at_end == [0]
        lines = (tmp_path / "calls").read_text().split("\n")
        assert [ln.split()[1] for ln in lines if ln] == ["start", "act", "start", "act"]


def test_ends_and_requests_for_matches_not_held_are_told_once_and_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defects: an ``interrupted`` end for a match the bot does not hold (one it was told
    of already: the referee sends an end again on each new stream until the bot answers a
    later request; or one it never held) said "match m8 was interrupted by the arena" each
    time; and a request for a match that has ended was "for unknown match m1", as if the
    bot had never heard of it. Now the first is not said again, and the second names the
    match as over. Pinned: a request for a match never started is one line; an end that
    comes twice, or for a match the bot never held, calls no hook and counts no match."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m9", g, "1")  # never started
        yield request("m1", g, "1")
        await s.decision()
        yield ended("m1")
        yield ended("m1")  # twice
        yield ended("m7")  # never held
        yield _interrupted("m8")  # never held
        yield request("m1", g, "2")  # for a match over
        yield started("m2", g)
        yield _interrupted("m2")
        yield _interrupted("m2")  # told again
        yield started("m3", g)
        yield request("m3", g, "1")
        await s.decision()
        yield ended("m3")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Hooks, script, matches=2)
    assert summary.matches == 2
    assert arena.streams[0].decided() == [("m1", "1"), ("m3", "1")]
    assert Hooks.named("on_match_start") == ["m1", "m2", "m3"]
    assert Hooks.named("on_match_end") == ["m1", "m3"]
    lines = _said(caplog)
    assert lines == [
        "decision request for unknown match m9: ignored",
        "decision request for match m1, which has ended: ignored",
        "match m2 was interrupted by the arena (not finished, no result)",
    ]


class _Thinking(Hooks):
    """Says it was asked (``asked``), and answers once the runner has handled the end of
    its match (``over``). The call is recorded when it is asked, not when it answers: the
    next match's bot, asked once the end is handled, may answer (in its own thread)
    before this one wakes."""

    asked: ClassVar[threading.Event] = threading.Event()
    over: ClassVar[threading.Event] = threading.Event()

    def act(self, view: PlayerView) -> Action:
        action = super().act(view)
        self.asked.set()
        assert self.over.wait(GUARD)
        return action


@pytest.mark.parametrize("end", ["target", "interrupted"])
def test_an_answer_made_after_its_match_ended_is_not_sent(
    end: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a bot still thinking when its match ended (a forfeit, the arena's time
    limit, the arena stopping it) had its answer sent all the same: the referee refused it
    ("decision rejected (wrong_request, no strike): you have no seat in a running match
    'm1'"), a warning after the match's end; and a request queued behind the bot's call
    was still asked of it. Now neither is: the match is over."""
    _Thinking.asked, _Thinking.over = threading.Event(), threading.Event()
    handled = BotRunner._on_match_ended

    def then_answer(runner: BotRunner, me: pb.MatchEnded) -> None:
        handled(runner, me)
        _Thinking.over.set()

    monkeypatch.setattr(BotRunner, "_on_match_ended", then_answer)
    g = _game()
    end_msg = ended("m1") if end == "target" else _interrupted("m1")

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")  # the bot thinks until the end is handled
        assert await asyncio.to_thread(_Thinking.asked.wait, GUARD)
        yield request("m1", g, "2")  # queued behind it: never asked
        yield end_msg
        yield started("m2", g)
        yield request("m2", g, "1")
        await s.decision()
        yield ended("m2")

    with caplog.at_level(logging.DEBUG, logger="sdk.client"):
        summary, arena = play(_Thinking, script, matches=1 if end == "interrupted" else 2)
    assert summary.matches == (1 if end == "interrupted" else 2)
    assert arena.streams[0].decided() == [("m2", "1")]
    assert Hooks.named("act") == ["m1", "m2"]
    assert "the answer to request 1 came after the match was over: not sent" in caplog.text
    assert [line for line in _said(caplog) if "interrupted by the arena" not in line] == []


@pytest.mark.parametrize("workers", [None, 1])
def test_a_reconnection_naming_other_matches_than_the_bot_holds(
    workers: int | None,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Pinned (no defect): after a dropped stream the Hello names the matches the bot
    holds (``running``); an arena that answers with an ``interrupted`` end for one (it does
    not know it), resumes another the bot never heard of (taken as a start) and resumes
    the one it holds, gets one hook call per real event, each match's bot let go at its
    end (with ``--workers``, none left in the worker), and the run ends as asked."""
    monkeypatch.setenv("PID_BOT_LOG", str(tmp_path / "calls"))
    loads = _Loads(monkeypatch)
    g = _game()

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started("m2", g)
        yield request("m1", g, "1")
        await s.decision()
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _interrupted("m1")  # not known here
        yield _resumed("m3", g)  # the first the bot hears of it
        yield _resumed("m2", g)
        yield request("m2", g, "1")
        await s.decision()
        yield ended("m2")
        yield ended("m3")

    from tests.support.pid_bot import PidBot

    opts: dict[str, Any] = {} if workers is None else {"workers": workers, "spec": PID_BOT}
    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = _ending(
            Hooks if workers is None else PidBot, first, second, matches=2, retry_for=GUARD,
            **opts,
        )  # fmt: skip
    assert isinstance(summary, RunSummary) and summary.matches == 2, summary
    hello = arena.streams[1].received[0].hello
    assert list(hello.running) == ["m1", "m2"]
    assert [s.decided() for s in arena.streams] == [[("m1", "1")], [("m2", "1")]]
    assert "match m1 was interrupted by the arena (not finished, no result)" in caplog.text
    if workers is None:
        assert Hooks.named("on_match_start") == ["m1", "m2", "m3"]
        assert sorted(Hooks.named("on_match_end")) == ["m2", "m3"]
        assert len({i for k, _, i in Hooks.calls if k == "on_match_start"}) == 3
    else:
        assert loads.at_end == [0]
        lines = (tmp_path / "calls").read_text().split("\n")
        said = sorted(" ".join(ln.split()[:2]) for ln in lines if ln)
        assert said == ["m1 act", "m1 start", "m2 act", "m2 start", "m3 start"]


def test_a_dead_link_mid_match_is_noticed_by_keepalive_and_the_bot_comes_back(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a link that died silently while the bot sat in a match (no FIN, no RST:
    the stream stays open and nothing comes) was noticed by the keepalive pings (every
    10 s, here every 1 s, and 5 s for the answer), but said as "the arena at HOST ended
    the stream: Stream removed (ping timeout)": gRPC's words, and blaming the arena for
    an end it never sent. Now the line says the connection was lost, no answer to a
    keepalive ping. Pinned: the bot reconnects and plays on, each hook called once."""
    monkeypatch.setattr(BotRunner, "_keepalive_ms", 1000)
    g = _game()
    proxies: list[FaultProxy] = []
    address: list[str] = []

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        proxies[0].silence()  # the cable is pulled: this stream never hears again
        await asyncio.sleep(3 * GUARD)

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed("m1", g)
        yield request("m1", g, "2")
        await s.decision()
        yield ended("m1")

    async def main() -> tuple[RunSummary, list[Stream]]:
        async with fake_arena(first, second) as arena:
            port = int(arena.address.rsplit(":", 1)[1])
            async with FaultProxy(port) as proxy:
                proxies.append(proxy)
                runner = BotRunner(Hooks, proxy.address, "tok", initial_backoff=0.01,
                                   retry_for=GUARD, matches=1)  # fmt: skip
                task = asyncio.create_task(runner.run())
                await until(lambda: runner.summary.connections >= 2, "a second stream")
                proxy.restore()
                address.append(proxy.address)
                return await asyncio.wait_for(task, GUARD), arena.streams

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, streams = asyncio.run(main())
    assert summary.matches == 1 and summary.connections == 2
    assert [s.decided() for s in streams] == [[("m1", "1")], [("m1", "2")]]
    said = _said(caplog)
    assert len(said) == 1 and said[0].startswith(
        f"the connection to the arena at {address[0]} was lost: no answer to a keepalive ping "
        "(a dead link); reconnecting in "
    ), said
    assert Hooks.named("on_match_start") == Hooks.named("on_match_end") == ["m1"]


def test_the_first_try_counts_towards_retry_for() -> None:
    """Defect: --retry-for was counted from the end of the first failed try, so a first
    try at an address that takes the TCP connection and never speaks (gRPC gives it 20 s),
    or an arena that never says Welcome (30 s), came on top: a bot of --retry-for 25 gave
    up after 45 s. Now the run gives up within --retry-for of its start, after one try
    here (cut when the time is up), in one line naming why."""

    async def main() -> tuple[BaseException | RunSummary, int]:
        with socket.socket() as silent:  # accepts (the kernel's backlog), never speaks
            silent.bind(("127.0.0.1", 0))
            silent.listen(4)
            address = f"127.0.0.1:{silent.getsockname()[1]}"
            runner = BotRunner(Hooks, address, "tok", retry_for=2.0)
            try:
                result: BaseException | RunSummary = await asyncio.wait_for(runner.run(), GUARD)
            except ArenaError as e:
                result = e
            return result, runner.summary.connections

    result, connections = asyncio.run(main())
    assert isinstance(result, ArenaError) and connections == 1
    assert re.fullmatch(
        r"the arena at \S+ has been unreachable for 2s \(the last try: no Welcome from the "
        r"arena at \S+ within [\d.]+ s\)",
        str(result),
    ), result


def test_time_welcomed_is_not_counted_towards_retry_for() -> None:
    """Pinned with the fix above: a stream welcomed and then dropped (here after 1.5 s
    idle, longer than --retry-for) is retried: --retry-for counts from the drop (or from
    the start of a try never welcomed), not from the start of the run."""
    g = _game()

    async def idle_then_dropped(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        await asyncio.sleep(1.5)
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def back(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield ended("m1")

    summary, arena = _ending(Hooks, idle_then_dropped, back, matches=1, retry_for=1.0)
    assert isinstance(summary, RunSummary), summary
    assert summary.matches == 1 and summary.connections == len(arena.streams) == 2


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.UNAUTHENTICATED, ArenaAuthError),
        (grpc.StatusCode.INVALID_ARGUMENT, ArenaError),
    ],
)
def test_a_hello_refused_after_a_delay_stops_in_one_line(
    code: grpc.StatusCode, error: type[ArenaError], caplog: pytest.LogCaptureFixture
) -> None:
    """Pinned (no defect): an arena that answers the Hello with a refusal only after a
    while (here 1 s: a slow token check) stops the bot as at once, with one line of the
    arena's words and no retry, warning or traceback before it."""

    async def slow_refusal(s: Stream) -> AsyncIterator[Out]:
        await asyncio.sleep(1.0)
        await _end(code, "refused after a while")
        yield WELCOME  # (never reached)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        result, arena = _ending(Hooks, slow_refusal, retry_for=GUARD)
    assert type(result) is error and len(arena.streams) == 1
    assert "refused after a while" in str(result) and "\n" not in str(result)
    assert not _said(caplog) and not [r for r in _sdk(caplog) if r.exc_info]


@pytest.mark.parametrize("dead", ["refused", "silent"])
def test_an_address_list_whose_first_address_is_dead_reaches_the_arena(dead: str) -> None:
    """Pinned (no defect): a target of several addresses (as a host name resolving to
    several) whose first one refuses connections, or takes them and never speaks, reaches
    the arena at the next one and plays (gRPC tries the next address meanwhile)."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        yield ended("m1")

    async def main() -> tuple[RunSummary, list[Stream]]:
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            if dead == "silent":
                first.listen(4)
            # (else bound, not listening: a connect is refused; held, not closed, so that
            # no test beside this one takes the port for a server of its own)
            async with fake_arena(script) as arena:
                target = f"ipv4:127.0.0.1:{port},{arena.address}"
                runner = BotRunner(Hooks, target, "tok", retry_for=GUARD, matches=1)
                return await asyncio.wait_for(runner.run(), GUARD), arena.streams

    summary, streams = asyncio.run(main())
    assert summary.matches == 1 and summary.connections == 1
    assert streams[0].decided() == [("m1", "1")]


def test_a_deal_end_older_than_the_view_the_bot_holds_is_not_hooked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the end of a deal earlier than the one the bot was last given a view of (a
    resumed match at deal 3, then deal 1's end; deal 1's end after a request of deal 3)
    was hooked: ``on_deal_end`` got deal 3's view with deal 1's result, and the next real
    end, of deal 3, was hooked too, so the bot was told of two deals ending at once. Now
    such an end is out of order: one warning naming both deals, no hook. Pinned: the ends
    of the deal in view and of later ones are hooked once each, in order."""
    g = _game()

    def at_deal(msg: pb.ServerMessage, n: int) -> pb.ServerMessage:
        kind = msg.WhichOneof("kind")
        assert kind is not None
        getattr(msg, kind).view.deal_number = n
        return msg

    def end_of(n: int) -> pb.Event:
        ev = deal_ended("m1")
        ev.deal_ended.deal_number = n
        return ev

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield at_deal(_resumed("m1", g), 3)
        yield pb.ServerMessage(events=[end_of(1)])  # out of order
        yield at_deal(request("m1", g, "1"), 3)
        await s.decision()
        yield pb.ServerMessage(events=[end_of(0), end_of(3)])
        yield pb.ServerMessage(events=[end_of(4)])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Hooks, script, matches=1)
    assert summary.matches == 1
    assert Hooks.named("on_deal_end") == [("m1", 3), ("m1", 4)]
    said = _said(caplog)
    assert said == [
        "match m1: deal_ended event for deal 2, after the bot was given a view of deal 4: "
        "out of order, ignored",
        "match m1: deal_ended event for deal 1, after the bot was given a view of deal 4: "
        "out of order, ignored",
    ]


def _in_play(seed: int = 3) -> Game:
    """A game of ``seed`` played at random into its first deal's play, a trick done."""
    g = _game(seed)
    rng = random.Random(0)
    while g.phase != Phase.PLAYING or not g.tricks:
        g.apply(rng.choice(g.legal_actions()))
    return g


def test_a_view_with_a_card_held_and_played_is_refused_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request whose view holds a card its own tricks show played (a card from
    nowhere), or shows one card played twice, was handed to the bot: a view that describes
    no deal, which a bot that counts the cards, or samples the hidden ones, cannot read.
    Now it is refused as malformed, as a card twice in the hand is, naming the card, and
    not answered (the referee's deadline plays the seat); the match plays on."""
    g = _in_play()
    played = g.tricks[0].cards[0][1]

    def with_played_card_held(rid: str) -> pb.ServerMessage:
        msg = request("m1", g, rid)
        msg.decision_request.view.hand.append(card_to_pb(played))
        return msg

    def with_a_trick_twice(rid: str) -> pb.ServerMessage:
        msg = request("m1", g, rid)
        tricks = msg.decision_request.view.tricks
        tricks.add().CopyFrom(tricks[0])
        return msg

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _resumed("m1", g)
        yield with_played_card_held("1")
        yield with_a_trick_twice("2")
        yield request("m1", g, "3")
        await s.decision()
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Hooks, script, matches=1)
    assert summary.matches == 1
    assert arena.streams[0].decided() == [("m1", "3")]
    said = _said(caplog)
    assert said == [
        "malformed decision_request from the arena (match m1), ignored: view.hand: "
        f"{played} is held, and was played",
        "malformed decision_request from the arena (match m1), ignored: view.tricks: "
        f"{g.tricks[0].cards[0][1]} played twice",
    ]


def test_a_view_that_contradicts_an_earlier_one_of_the_deal_is_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a view that took back what an earlier view of the same deal showed (a card
    in the hand that it did not hold once the play had begun, a completed trick undone)
    was taken without a word: a bot following the deal from its views and hooks went
    wrong, and its author saw nothing of the arena's fault. Now one warning per match
    names the request and what changed; the newest view is still the arena's (the bot
    is asked with it, as for a deal number going backwards)."""
    g = _in_play()
    seat = g.to_act
    assert seat is not None
    played = {c for t in g.tricks for _, c in t.cards}
    stranger = min(c for c in Card if c not in observe(g, seat).hand and c not in played)

    def from_nowhere(mid: str, rid: str) -> pb.ServerMessage:
        msg = request(mid, g, rid)
        msg.decision_request.view.hand.append(card_to_pb(stranger))
        return msg

    def undone(mid: str, rid: str) -> pb.ServerMessage:
        msg = request(mid, g, rid)
        del msg.decision_request.view.tricks[0]
        return msg

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        for mid, change in (("m1", from_nowhere), ("m2", undone)):
            yield _resumed(mid, g)
            yield request(mid, g, "1")
            await s.decision()
            yield change(mid, "2")
            await s.decision()
            yield change(mid, "3")  # said once per match
            await s.decision()
            yield ended(mid)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(Hooks, script, matches=2)
    assert summary.matches == 2
    assert len(arena.streams[0].decided()) == 6
    said = _said(caplog)
    tail = "; the arena's newest view is taken as it is (said once per match)"
    assert said == [
        "match m1: the view of request 2 (deal 1) contradicts the one the bot was given "
        f"before in the deal: the hand holds {stranger}, which it did not hold when the play "
        "had begun" + tail,
        "match m2: the view of request 2 (deal 1) contradicts the one the bot was given "
        f"before in the deal: its {len(g.tricks) - 1} completed trick(s) are not the "
        f"{len(g.tricks)} shown before, and more" + tail,
    ]


def _arena_taking_pings(*scripts: Any) -> AbstractAsyncContextManager[FakeArena]:
    """``fake_arena``, whose gRPC takes a ping every 0.5 s while it sends nothing (a
    server's default is one every 5 minutes: see the round 3 test of fewer pings)."""
    return fake_arena(*scripts, options=[("grpc.http2.min_ping_interval_without_data_ms", 500),
                                         ("grpc.http2.max_ping_strikes", 0)])  # fmt: skip


def test_an_arena_silent_for_long_mid_match_is_waited_for(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned (no defect): an arena that keeps the stream open and sends nothing for a
    long while in the middle of a match (longer than a keepalive ping and its timeout:
    here 1 s and 5 s), its connection alive (its gRPC answers the pings), is waited for on
    the same stream: no reconnection, no line; the match goes on when it speaks again."""
    monkeypatch.setattr(BotRunner, "_keepalive_ms", 1000)
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        await asyncio.sleep(7.0)  # silent, past 1 s + 5 s
        yield request("m1", g, "2")
        await s.decision()
        yield ended("m1")

    async def main() -> tuple[RunSummary, list[Stream]]:
        async with _arena_taking_pings(script) as arena:
            runner = BotRunner(Hooks, arena.address, "tok", retry_for=GUARD, matches=1)
            return await asyncio.wait_for(runner.run(), GUARD), arena.streams

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, streams = asyncio.run(main())
    assert summary.matches == 1 and summary.connections == 1
    assert streams[0].decided() == [("m1", "1"), ("m1", "2")]
    assert _said(caplog) == []
