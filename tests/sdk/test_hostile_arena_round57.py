"""The SDK against a hostile arena, round 57: a real bot process (``arena-bot run``) against
a fake arena (grpc.aio on port 0, ``tests/sdk/test_hostile_arena.py``) that speaks arena.v1
badly, all in one stream: a Welcome listing features no protocol has, events whose ``seq``
repeats, jumps and goes back, a request whose view is another seat's, one listing no legal
action, one listing an action twice, a request after its match's end, events, an end and a
refusal for a match never started. The bot logs a line naming each fault, neither crashes
nor hangs (it exits when the arena ends the stream), and plays only its own choices. And a
stream stalled in the middle of a message (its first HTTP/2 frames sent, the rest held,
the connection otherwise alive: pings answered) does not stop the bot from answering what
it was asked before, nor from exiting on a signal.

Every server, proxy and process started here is stopped before its test ends."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.protocol import action_event_to_pb, action_from_pb, view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, Card, Pass, Phase, Play, PlayerView, Rank, Suit, Trick, observe
from sdk import Bot
from tests.sdk.test_hostile_arena import (
    ARENA_BOT,
    GUARD,
    ROOT,
    WELCOME,
    Out,
    Stream,
    _game,
    deal_ended,
    ended,
    fake_arena,
    play,
    request,
    started,
)

#: The bot of the process: the first legal action, each view it is asked with and each
#: action event it is told written to stderr (read back by the tests).
BOT = """\
import sys
from sdk import Bot


class First(Bot):
    quick = True

    def act(self, view):
        print(f"ASKED seat={view.seat} legal={len(view.legal_actions)}", file=sys.stderr,
              flush=True)
        return view.legal_actions[0]

    def on_action(self, view, seat, action):
        print(f"TOLD {seat} {action}", file=sys.stderr, flush=True)
"""


def _spec(tmp: Path) -> str:
    (tmp / "first_bot.py").write_text(BOT)
    return f"{tmp / 'first_bot.py'}:First"


async def _start_bot(tmp: Path, address: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "GRPC_"))}
    return await asyncio.create_subprocess_exec(
        sys.executable, *ARENA_BOT, "run", _spec(tmp), "--arena", address, "--token", "t",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, cwd=str(tmp),
        env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


async def _finish(proc: asyncio.subprocess.Process, lines: list[str]) -> int:
    """Read the process's stderr to its exit (killed after the guard); its exit code."""
    assert proc.stderr is not None
    try:
        async with asyncio.timeout(3 * GUARD):
            lines.append((await proc.stderr.read()).decode(errors="replace"))
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode


def _said(err: str, level: str, words: str) -> list[str]:
    return [ln for ln in err.splitlines() if f" {level} sdk.client: " in ln and words in ln]


def test_a_bot_process_names_each_fault_of_a_bad_arena_and_plays_only_its_choices(
    tmp_path: Path,
) -> None:
    g = _game()
    seat = g.to_act
    assert seat is not None
    sent: dict[str, pb.PlayerView] = {}

    def req(rid: str, mid: str = "m1") -> pb.ServerMessage:
        msg = request(mid, g, rid)
        sent[rid] = msg.decision_request.view
        return msg

    def ev(seq: int) -> pb.Event:
        return action_event_to_pb("m1", seq, pb.ACTION_SOURCE_BOT, (seat + 1) % 3, Pass())

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield pb.ServerMessage(welcome=pb.Welcome(
            bot_name="b", server_version="fake", protocol_version=1,
            features=["batch", "results_once", "no-such-feature", "é" * 64, ""]))  # fmt: skip
        yield started("m1", g)
        # seq: 1, 1 again, 4 (2 and 3 never sent), then 2 (behind 4)
        yield pb.ServerMessage(events=[ev(1), ev(1), ev(4), ev(2)])
        other = req("other-seat")
        other.decision_request.view.seat = (seat + 1) % 3
        yield other
        none = req("no-legal")
        del none.decision_request.view.legal_actions[:]
        yield none
        twice = req("twice")
        legal = twice.decision_request.view.legal_actions
        legal.append(legal[0])
        yield twice
        yield req("good")
        assert (await s.decision()) is not None
        yield ended("m1")
        yield req("after-end")
        # a result, an end and a refusal for a match never started
        yield pb.ServerMessage(events=[deal_ended("m9")])
        yield ended("m9")
        yield pb.ServerMessage(decision_rejected=pb.DecisionRejected(
            match_id="m9", request_id="r9", incident=pb.INCIDENT_TIMEOUT, strikes=1,
            strikes_allowed=3, message="too slow"))  # fmt: skip
        yield req("unknown-match", "m9")

    async def main() -> tuple[int, str, list[Stream]]:
        async with fake_arena(script) as arena:
            proc = await _start_bot(tmp_path, arena.address)
            lines: list[str] = []
            rc = await _finish(proc, lines)
            return rc, "".join(lines), arena.streams

    rc, err, streams = asyncio.run(main())
    assert rc == 0, err  # the arena ended the stream with OK: done
    assert "Traceback" not in err and "could not handle" not in err, err
    # only the good request was put to the bot, and answered with its own choice
    assert err.count("ASKED ") == 1 and f"ASKED seat={seat} legal=" in err, err
    assert [s.decided() for s in streams] == [[("m1", "good")]]
    (decision,) = [m.decision for m in streams[0].received if m.WhichOneof("kind") == "decision"]
    good = view_from_pb(sent["good"], g.ruleset)
    assert action_from_pb(decision.action) == good.legal_actions[0]
    # each action event told once, in order; the gap and the one behind it named
    assert re.findall(r"TOLD \d (\S+)", err) == [str(Pass())] * 2, err
    assert _said(err, "WARNING", "action event 4 follows event 1: the 2 event(s) between "
                 "never came"), err  # fmt: skip
    assert _said(err, "WARNING", "action event 1 repeats an earlier one"), err
    # (2 never came before: not called a repeat alone)
    assert _said(err, "WARNING", "action event 2 repeats an earlier one or is out of order "
                 "(the last was 4): ignored"), err  # fmt: skip
    # each bad request named, with its fault
    malformed = "malformed decision_request from the arena (match m1), ignored: "
    assert _said(err, "ERROR", malformed + "view.seat: seat 2, the match's 1"), err
    assert _said(err, "ERROR", "decision request no-legal lists no legal actions"), err
    assert _said(err, "ERROR", malformed + "view.legal_actions: bid 105 twice"), err
    assert _said(err, "ERROR", "decision request for match m1, which has ended"), err
    assert _said(err, "ERROR", "decision request for unknown match m9"), err
    assert _said(err, "WARNING", "match m9: decision rejected (timeout, strike 1 of 3)"), err
    # a deal's result for a match never started: named (it was dropped in silence); its
    # end calls no hook and counts no match (an arena sends ends again: docs/protocol.md)
    assert _said(err, "ERROR", "deal_ended event for unknown match m9: ignored"), err
    assert "m9 ended" not in err and "1 match(es)" in err, err
    # the refusal of no answer of the bot's is said, not counted as one (it was: "1 rejected")
    assert err.rstrip().endswith("1 match(es), 1 decision(s), 0 rejected, 0 bot error(s), 0 "
                                 "forfeited"), err  # fmt: skip
    # the unknown features: nothing said against them (a newer arena's, ignored)
    assert "no-such-feature" not in err, err


# ----------------------------------------------------------------------------- a stall


class StallProxy:
    """A TCP proxy to the fake arena that forwards HTTP/2 frame by frame. Once ``armed``,
    the next DATA frame of the arena's of at least 1 KiB is cut in two: its first half is
    forwarded, and from its second half on every frame of the arena's streams (DATA,
    HEADERS, CONTINUATION, RST_STREAM) is held until :meth:`release`, while the
    connection's own frames (SETTINGS, PING and its acknowledgement, WINDOW_UPDATE) still
    pass: a message stalled in its middle on a link that is alive (the bot's keepalive
    pings answered)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.armed = False
        self.holding = False
        self.stalled = asyncio.Event()
        self.held: list[bytes] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._down: asyncio.StreamWriter | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> StallProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for w in self._writers:
            w.close()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def release(self) -> None:
        """Forward what was held, in order, and hold nothing more."""
        self.holding = False
        if self._down is not None:
            self._down.write(b"".join(self.held))
        self.held.clear()

    async def _accept(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers += [cw, sw]
        self._down = cw
        self._tasks += [
            asyncio.get_running_loop().create_task(self._up(cr, sw)),
            asyncio.get_running_loop().create_task(self._frames(sr, cw)),
        ]

    @staticmethod
    async def _up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _frames(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:  # (a server sends no preface: frames from the first byte)
                head = await reader.readexactly(9)
                size, kind, flags = int.from_bytes(head[:3], "big"), head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                body = await reader.readexactly(size)
                if self.holding and stream and kind in (0, 1, 3, 9):
                    self.held.append(head + body)
                    continue
                if self.armed and kind == 0 and stream and size >= 1024 and not flags & 0x8:
                    self.armed, self.holding = False, True
                    half = size // 2
                    # (the first half without END_STREAM; flow control counts the same bytes)
                    first = half.to_bytes(3, "big") + bytes([0, flags & ~0x1]) + head[5:9]
                    rest = (size - half).to_bytes(3, "big") + head[3:9]
                    writer.write(first + body[:half])
                    self.held.append(rest + body[half:])
                    self.stalled.set()
                    continue
                writer.write(head + body)
                await writer.drain()
        writer.close()


#: The bot of the stall tests: asked, it waits for the file ``go`` in its directory (made
#: by the test once the message behind the request is stalled), then plays its first legal
#: action.
WAITING_BOT = """\
import pathlib, sys, time
from sdk import Bot


class Waits(Bot):
    def act(self, view):
        print("ASKED", file=sys.stderr, flush=True)
        go = pathlib.Path("go")
        for _ in range(6000):
            if go.exists():
                break
            time.sleep(0.01)
        return view.legal_actions[0]
"""


@pytest.mark.parametrize("then", ["released", "signalled"])
def test_a_message_stalled_in_its_middle_neither_hangs_the_bot_nor_stops_its_answers(
    tmp_path: Path, then: str
) -> None:
    """Pinned (no defect): the arena's stream stalls in the middle of a message (a request
    with 256 KiB of a newer protocol's fields) while the bot is deciding the request before
    it, the connection alive (its pings answered: nothing for the keepalive to notice).
    The bot's answer still reaches the arena; once the rest of the message comes, it is
    read and answered; stopped by SIGTERM while it is stalled, the bot exits at once
    (exit code 0) without a traceback."""
    g = _game()
    proxy_box: list[StallProxy] = []
    big = request("m1", g, "2").SerializeToString()
    unknown = b"\xc2\x3e" + bytes([0x80, 0x80, 0x10]) + b"x" * (256 << 10)  # field 1000
    assert len(unknown) == 2 + 3 + (256 << 10)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        proxy_box[0].armed = True
        yield request("m1", g, "1")
        yield unknown + big  # (stalled by the proxy in its middle)
        first = await s.decision()
        assert first is not None and first.request_id == "1"
        assert proxy_box[0].holding  # answered while the message was held
        if then == "released":
            proxy_box[0].release()
            second = await s.decision()
            assert second is not None and second.request_id == "2"
        else:
            await s.closed(3 * GUARD)

    async def main() -> tuple[int, str, list[Stream]]:
        async with fake_arena(script) as arena:
            port = int(arena.address.rsplit(":", 1)[1])
            async with StallProxy(port) as proxy:
                proxy_box.append(proxy)
                (tmp_path / "waits_bot.py").write_text(WAITING_BOT)
                env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "GRPC_"))}
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, *ARENA_BOT, "run", f"{tmp_path / 'waits_bot.py'}:Waits",
                    "--arena", f"127.0.0.1:{proxy.port}", "--token", "t",
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                    cwd=str(tmp_path), env={**env, "PYTHONPATH": str(ROOT)},
                )  # fmt: skip
                lines: list[str] = []
                try:
                    async with asyncio.timeout(3 * GUARD):
                        await proxy.stalled.wait()
                        (tmp_path / "go").touch()
                        if then == "signalled":
                            while len(arena.streams[0].decided()) < 1:
                                await asyncio.sleep(0.01)
                            proc.send_signal(signal.SIGTERM)
                except BaseException:
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
                    raise
                rc = await _finish(proc, lines)
                return rc, "".join(lines), arena.streams

    rc, err, streams = asyncio.run(main())
    assert rc == 0, err
    assert "Traceback" not in err, err
    decided = [("m1", "1"), ("m1", "2")] if then == "released" else [("m1", "1")]
    assert [s.decided() for s in streams] == [decided], err
    if then == "signalled":
        assert "stopping: signal SIGTERM" in err, err


# ----------------------------------------------------------------------------- a trick


class Quick(Bot):
    quick = True  # (asked on the event loop, and ahead)

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


def test_a_completed_trick_won_by_a_seat_that_played_none_in_it_is_refused_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request's view whose completed trick was won by a seat that played no
    card in it (four aces in the hand, the bot's card taking the trick) failed the
    request's step in the SDK's own code, with a traceback ("a step of the match failed":
    ``engine.own_next_view``, choosing the bot's answers ahead, looked for the winner's card
    and raised StopIteration), and the answer the bot had chosen was never sent. Now the
    view is refused as malformed, naming the trick, as other views the SDK's checks refuse;
    the next request is answered."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    left, right = (seat + 1) % 3, (seat + 2) % 3
    aces = [Card.of(Rank.ACE, s) for s in Suit]
    ten = Card.of(Rank.TEN, Suit.SPADES)
    bad = dataclasses.replace(
        observe(g, seat), phase=Phase.PLAYING, to_act=seat, hand=tuple(sorted([ten, *aces])),
        talon=None, bids=(), declarer=seat, bid=100, contract=100,
        trick=((left, Card.of(Rank.NINE, Suit.SPADES)), (right, Card.of(Rank.JACK, Suit.SPADES))),
        tricks=(Trick(left, ((left, Card.of(Rank.NINE, Suit.CLUBS)),
                             (right, Card.of(Rank.JACK, Suit.CLUBS))), seat),),
        legal_actions=(Play(ten), Play(aces[0])),
    )  # fmt: skip

    def asked(rid: str, view: PlayerView) -> pb.ServerMessage:
        return pb.ServerMessage(decision_request=pb.DecisionRequest(
            request_id=rid, match_id="m1", view=view_to_pb(view), time_limit_ms=10_000,
            time_bank_ms=10_000))  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        welcome = pb.Welcome(bot_name="b", server_version="fake", protocol_version=1)
        welcome.features.append("ahead")  # (the bot's answers chosen ahead: own_next_view)
        yield pb.ServerMessage(welcome=welcome)
        yield started("m1", g)
        yield asked("1", bad)
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Quick, script)
    assert arena.streams[0].decided() == [("m1", "2")]
    lines = [r.getMessage() for r in caplog.records]
    assert (
        "malformed decision_request from the arena (match m1), ignored: view.tricks: trick 1 "
        f"won by seat {seat}, which played no card in it"
    ) in lines, lines
    assert not [r for r in caplog.records if r.exc_info], lines
