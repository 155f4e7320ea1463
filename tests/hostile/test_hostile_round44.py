"""Hostile round 44 (b): round 44's stop (``Referee.end_streams`` cancelling the handler
of a stream whose writer wrote nothing in its wait; ``_handlers``, ``Stream.written``) and
its settle bookkeeping (``_settling``, ``streams_settled``), attacked by raw clients.

- a client that takes one message every 1.9 s, just inside the wait (defect: its writer
  "wrote something", so its handler was left to the server's stop, outlived its grace,
  and grpc.aio printed round 42's bare ``CancelledError`` traceback, every run with the
  sweep at its worst moment: ``end_streams`` now also cancels, after its second wait, a
  handler still writing);
- many streams that grant no window at a stop: all cancelled, the stop bounded, nothing
  printed or logged as an error;
- a flood of streams opened and reset, before and during the stop: ``streams_settled``
  returns, nothing is left settling, attached or running;
- a stream that takes nothing and starts reading just as ``end_streams`` gives up on it.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import threading
import time
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from tests.support.harness import no_error_logged, welcomed_call  # noqa: F401 (a fixture)
from tests.support.raw_h2 import DATA, END_STREAM, RST_STREAM, NoWindow, RawH2, frame, grpc_message

pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
GRPC_LOGGER = "grpc._cython.cygrpc"
WINDOW_UPDATE = 0x8
#: A message as big as any a bot may be sent, queued behind its Welcome.
FILLER = pb.ServerMessage(welcome=pb.Welcome(bot_name="f" * 200))


def _hello(name: str) -> bytes:
    return pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1)).SerializeToString()


def _call_tasks() -> list[asyncio.Task[Any]]:
    """grpc.aio's unfinished tasks of calls (named so by grpcio 1.85: see
    tests/faults/test_flakes_round44.py)."""
    names = ("rpc_task", "HandleExceptions[")
    return [t for t in asyncio.all_tasks() if not t.done() and t.get_name().startswith(names)]


def _grant(conn: NoWindow, sid: int, size: int) -> None:
    with conn.lock:
        conn.sock.sendall(frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", size)))


class Trickle(NoWindow):
    """A connection that grants its stream one ``FILLER``'s window every ``period`` s."""

    def trickle(self, sid: int, period: float) -> None:
        def run() -> None:
            while not self.stop.is_set():
                try:
                    _grant(self, sid, FILLER.ByteSize() + 5)
                except OSError:
                    return
                self.stop.wait(period)

        threading.Thread(target=run, daemon=True).start()


async def _until(cond: Any, what: str, seconds: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not cond():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.01)


# ------------------------------------------------------------------ a trickle at the stop


async def _stop_beside_a_trickle() -> dict[str, Any]:
    """Bot ``x`` takes one message every 1.9 s with 40 queued; ``h`` on grpcio. Stopped as
    ``arena serve`` stops, x's call's outer task cancelled the moment its handler's task
    ends (where asyncio.run's sweep lands at worst: tests/faults/test_flakes_round44.py)."""
    ref = Referee(RefereeConfig())
    ref.add_bot("x", "tok-x")
    ref.add_bot("h", "tok-h")
    server, port = await start_server(ref)
    out: dict[str, Any] = {}
    conn = await asyncio.to_thread(Trickle, port)
    try:
        sid = conn.play("tok-x", _hello("x"))
        await _until(lambda: ref._attached == 1, "x welcomed")
        stream = ref._by_name["x"].stream
        assert stream is not None
        for _ in range(40):
            stream.put(FILLER)
        conn.trickle(sid, 1.9)
        await _until(lambda: stream.written >= 2, "x takes its messages, slowly")
        calls = {t.get_name(): t for t in _call_tasks()}
        outer = calls["rpc_task"]
        calls["HandleExceptions[/arena.v1.Arena/Play]"].add_done_callback(lambda _: outer.cancel())
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            honest = await welcomed_call(channel, "tok-h", "h")
            # (a deadline: a stop that waited on the trickle for ever fails, not hangs)
            await asyncio.wait_for(ref.end_streams(), 60)
            out["written"] = stream.written
            out["attached"] = ref._attached
            out["handlers"] = [t.get_name() for t in _call_tasks()
                               if t.get_name().startswith("HandleExceptions[")]  # fmt: skip
            with pytest.raises(grpc.aio.AioRpcError) as e:
                while True:
                    await asyncio.wait_for(honest.read(), 30)
            out["honest"] = (e.value.code(), e.value.details())
        await server.stop(1.0)
        out["left"] = [t.get_name() for t in _call_tasks()]
        return out
    finally:
        await server.stop(None)
        await asyncio.to_thread(conn.close)


def test_a_client_taking_a_message_every_1_9_s_is_cut_at_the_stop(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stop does not wait on a trickle for ever, and it leaves no handler of it
    running past ``end_streams`` (before the fix: running until the server's grace ran out,
    and grpc.aio printed a bare CancelledError traceback); the honest bot is told the arena
    stops."""
    caplog.set_level(logging.DEBUG, logger=GRPC_LOGGER)
    out = asyncio.run(_stop_beside_a_trickle())
    assert out["written"] < 41, out  # (cut: it had not taken its queue)
    assert out["attached"] == 0 and out["handlers"] == [], out
    assert out["left"] == [], out
    assert out["honest"] == (grpc.StatusCode.UNAVAILABLE, "the arena is stopping"), out
    err = capsys.readouterr().err
    assert "Traceback" not in err and "CancelledError" not in err, err


# ------------------------------------------------------- many streams that take nothing


def test_many_streams_that_take_nothing_are_all_cancelled_at_the_stop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """20 bots on connections that grant no window, each with messages queued: once
    ``end_streams`` returns none is attached and no handler runs; the server stops with no
    task of a call left, nothing printed, and each call ends UNAVAILABLE in gRPC core."""
    names = [f"n{i}" for i in range(20)]

    async def main() -> tuple[dict[str, Any], list[NoWindow], list[int]]:
        ref = Referee(RefereeConfig())
        for n in names:
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref)
        conns: list[NoWindow] = []
        sids: list[int] = []
        out: dict[str, Any] = {}
        try:
            for n in names:
                conns.append(await asyncio.to_thread(NoWindow, port))
                sids.append(conns[-1].play(f"tok-{n}", _hello(n)))
            await _until(lambda: ref._attached == len(names), "all welcomed")
            for n in names:
                s = ref._by_name[n].stream
                assert s is not None
                for _ in range(5):
                    s.put(FILLER)
            await asyncio.wait_for(ref.end_streams(), 60)
            out["attached"] = ref._attached
            out["handlers"] = len(ref._handlers)
            out["running"] = [t.get_name() for t in _call_tasks()
                              if t.get_name().startswith("HandleExceptions[")]  # fmt: skip
            await server.stop(1.0)
            out["left"] = [t.get_name() for t in _call_tasks()]
            return out, conns, sids
        except BaseException:  # (on success the connections are closed below)
            for c in conns:
                await asyncio.to_thread(c.close)
            raise
        finally:
            await server.stop(None)

    out, conns, sids = asyncio.run(main())
    try:
        for c, sid in zip(conns, sids, strict=True):
            deadline = time.monotonic() + 30
            while not c.ended(sid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert c.ended(sid) and b"grpc-status\x0214" in c.ended(sid)[-1].payload, sid
    finally:
        for c in conns:
            c.close()
    assert out == {"attached": 0, "handlers": 0, "running": [], "left": []}, out
    err = capsys.readouterr().err
    assert "Traceback" not in err and "CancelledError" not in err, err


# ---------------------------------------------- a flood of resets before and during the stop


def test_a_flood_of_reset_streams_around_the_stop_leaves_nothing_settling() -> None:
    """A bot opens a stream, says Hello and resets it, in a loop, from before the stop to
    after it: ``streams_settled`` returns, no stream is left settling or attached, no task
    of a call is left once the server stopped, and the honest bot is told the arena stops."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(reconnect_limit=100_000))
        ref.add_bot("r", "tok-r")
        ref.add_bot("h", "tok-h")
        server, port = await start_server(ref)
        base = len(asyncio.all_tasks())
        stop = threading.Event()
        opened = [0]

        def flood() -> None:
            conn = RawH2(port)
            try:
                while not stop.is_set():
                    sid = conn.call(PLAY, data=grpc_message(_hello("r")), end=False,
                                    extra=((b"authorization", b"Bearer tok-r"),))  # fmt: skip
                    conn.frames(0.002)
                    conn.sock.sendall(frame(RST_STREAM, 0, sid, b"\x00\x00\x00\x08"))
                    opened[0] += 1
            except OSError:
                pass
            finally:
                conn.close()

        out: dict[str, Any] = {}
        threads = [threading.Thread(target=flood, daemon=True) for _ in range(3)]
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                honest = await welcomed_call(channel, "tok-h", "h")
                for t in threads:
                    t.start()
                await _until(lambda: opened[0] > 100, "the flood under way")
                await asyncio.wait_for(ref.streams_settled(), 60)
                await asyncio.wait_for(ref.end_streams(), 60)
                await asyncio.wait_for(ref.streams_settled(), 60)
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    while True:
                        await asyncio.wait_for(honest.read(), 30)
                out["honest"] = (e.value.code(), e.value.details())
            out["settling"] = dict(ref._settling)
            out["attached"] = ref._attached
            out["handlers"] = len(ref._handlers)
        finally:
            stop.set()
            for t in threads:
                await asyncio.to_thread(t.join, 30)
            await server.stop(1.0)
        # grpc.aio's tasks of the last calls end after the server's stop, in their own
        # time: waited for (a fixed 0.5 s was too short on a loaded machine), then asserted.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while (_call_tasks() or len(asyncio.all_tasks()) > base) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        out["left"] = [t.get_name() for t in _call_tasks()]
        out["tasks"] = len(asyncio.all_tasks()) - base
        out["opened"] = opened[0]
        return out

    out = asyncio.run(main())
    assert out["honest"] == (grpc.StatusCode.UNAVAILABLE, "the arena is stopping"), out
    assert out["settling"] == {} and out["attached"] == 0 and out["handlers"] == 0, out
    assert out["left"] == [] and out["tasks"] <= 0, out


# --------------------------------------- nothing taken, then read just as the stop gives up


def test_a_stream_that_starts_reading_as_the_stop_cancels_it_ends_quietly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A client that took nothing grants a window at about the moment ``end_streams``
    judges it stuck (2 s in): either way its handler is ended by ``end_streams``, the call
    ends (UNAVAILABLE, or the messages and then UNAVAILABLE), nothing is printed."""

    async def main() -> tuple[dict[str, Any], NoWindow, int]:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        conn = await asyncio.to_thread(NoWindow, port)
        out: dict[str, Any] = {}
        try:
            sid = conn.play("tok-x", _hello("x"))
            await _until(lambda: ref._attached == 1, "x welcomed")
            stream = ref._by_name["x"].stream
            assert stream is not None
            for _ in range(3):
                stream.put(FILLER)
            loop = asyncio.get_running_loop()
            loop.call_later(1.98, _grant, conn, sid, 1 << 20)
            await asyncio.wait_for(ref.end_streams(), 60)
            out["attached"] = ref._attached
            out["handlers"] = len(ref._handlers)

            def running() -> list[str]:
                return [t.get_name() for t in _call_tasks()
                        if t.get_name().startswith("HandleExceptions[")]  # fmt: skip

            # A handler that ended by itself (the window came before end_streams judged it
            # stuck: a grant at 1.8 s did so every time) has returned, but grpc.aio's task
            # of its call is still sending its status: it ends without the server's stop
            # (waited for, not assumed done). A stuck handler not cancelled never would.
            deadline = loop.time() + 30
            while running() and loop.time() < deadline:
                await asyncio.sleep(0.01)
            out["running"] = running()
            await server.stop(1.0)
            out["left"] = [t.get_name() for t in _call_tasks()]
            return out, conn, sid
        except BaseException:
            await asyncio.to_thread(conn.close)
            raise
        finally:
            await server.stop(None)

    out, conn, sid = asyncio.run(main())
    try:
        deadline = time.monotonic() + 30
        while not conn.ended(sid) and time.monotonic() < deadline:
            time.sleep(0.05)
        trailers = conn.ended(sid)
        with conn.lock:
            data = [f for f in conn.got if f.stream == sid and f.kind == DATA]
    finally:
        conn.close()
    assert out == {"attached": 0, "handlers": 0, "running": [], "left": []}, out
    assert trailers and b"grpc-status\x0214" in trailers[-1].payload, trailers
    assert not [f for f in data if f.flags & END_STREAM], data
    err = capsys.readouterr().err
    assert "Traceback" not in err and "CancelledError" not in err, err
