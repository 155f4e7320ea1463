"""Mutation review round 44 (b): tests that kill the surviving mutants of round 44's last
changes (``Referee.end_streams``' cancel of streams still writing after its second wait,
the SDK's "the arena closed the stream" said after the "match ... ended" lines it carried,
`arena serve`'s second signal skipping ``streams_settled``).

- ``end_streams(timeout=...)``: a stream still writing after the second wait has its
  writer cancelled, not only its handler (whose own wait for the writer, a second, would
  outlive a shorter ``timeout``), and is waited for as long again (not returned from at
  once, its handler still running);
- the SDK says the arena closed the stream when no match end is pending too, and says it
  when the run's drain cancels the wait for those ends (once, after the match's line);
- `arena serve`: a second signal skips the wait for streams in their settle.
"""

from __future__ import annotations

import asyncio
import signal
import struct
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.cli import serve as serve_module
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import no_error_logged  # noqa: F401 (a fixture)
from tests.support.raw_h2 import NoWindow, frame

WINDOW_UPDATE = 0x8
#: A message as big as any a bot may be sent, queued behind its Welcome.
FILLER = pb.ServerMessage(welcome=pb.Welcome(bot_name="f" * 200))


def _hello(name: str) -> bytes:
    return pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1)).SerializeToString()


async def _until(cond: Any, what: str, seconds: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not cond():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.01)


class Trickle(NoWindow):
    """A connection granting its stream one ``FILLER``'s window every ``period`` s."""

    def trickle(self, sid: int, period: float) -> None:
        def run() -> None:
            while not self.stop.is_set():
                try:
                    with self.lock:
                        self.sock.sendall(
                            frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", FILLER.ByteSize() + 5))
                        )
                except OSError:
                    return
                self.stop.wait(period)

        threading.Thread(target=run, daemon=True).start()


# --------------------------------------------------------------- end_streams: a slow stream


@pytest.mark.usefixtures("no_error_logged")
def test_a_slow_stream_has_ended_when_end_streams_returns_with_a_short_timeout() -> None:
    """A client taking a message every 0.1 s with 200 queued (20 s of them) writes in each
    wait, so it is never "stuck": ``end_streams(timeout=0.7)`` cancels it after its second
    wait and waits for it. Once it returns, nothing is attached and the stream's writer is
    cancelled (mutants: only the handler cancelled, whose own wait of 1 s for the writer
    outlived the 0.7 s; the last wait's bound 0, returning with the handler running)."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig())
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        conn = await asyncio.to_thread(Trickle, port)
        out: dict[str, Any] = {}
        try:
            sid = conn.play("tok-x", _hello("x"))
            await _until(lambda: ref._attached == 1, "x welcomed")
            stream = ref._by_name["x"].stream
            assert stream is not None
            _, writer = ref._handlers[stream]
            for _ in range(200):
                stream.put(FILLER)
            conn.trickle(sid, 0.1)
            await _until(lambda: stream.written >= 2, "x takes its messages, slowly")
            await asyncio.wait_for(ref.end_streams(timeout=0.7), 60)
            out["attached"] = ref._attached
            out["handlers"] = len(ref._handlers)
            out["writer cancelled"] = writer.cancelled()
            out["written"] = stream.written
            await server.stop(1.0)
            return out
        finally:
            await server.stop(None)
            await asyncio.to_thread(conn.close)

    out = asyncio.run(main())
    assert out["written"] < 150, out  # (still writing when cut: the case meant)
    assert out["attached"] == 0 and out["handlers"] == 0, out
    assert out["writer cancelled"] is True, out


# ------------------------------------------------------------ the SDK: the stream's close


def test_a_close_with_no_match_end_pending_is_said(caplog: pytest.LogCaptureFixture) -> None:
    """An arena that welcomes the bot and closes the stream (OK) with no match: the log
    says "the arena closed the stream" once (mutant: said only after match ends)."""
    import logging

    from sdk import Bot
    from tests.sdk.test_hostile_arena import WELCOME, play

    class First(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

    async def script(s: Any) -> Any:
        yield WELCOME

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(First, script)
    lines = [r.getMessage() for r in caplog.records if r.name == "sdk.client"]
    assert lines.count("the arena closed the stream") == 1, lines
    assert summary.reason == "the arena closed the stream"


def test_a_close_waiting_behind_a_hook_that_never_returns_is_said_at_the_drain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The match's last on_deal_end never returns: the run's drain (5 s) gives up on the
    bot's calls and cancels what waits behind them, the close's line among them. It is
    said all the same, once, after the match's own line (mutant: the close's fallback on
    cancel removed, never said)."""
    import logging

    from sdk import Bot
    from tests.sdk.test_hostile_arena import WELCOME, _game, deal_ended, ended, play, started

    release = threading.Event()
    hooked = threading.Event()

    class Stuck(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

        def on_deal_end(self, view: Any, result: Any) -> None:
            hooked.set()
            release.wait(60)

    g = _game()

    async def script(s: Any) -> Any:
        yield WELCOME
        yield started("m1", g)
        last = ended("m1")
        last.events.append(deal_ended("m1"))
        yield last

    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            summary, _ = play(Stuck, script)
    finally:
        release.set()
    assert hooked.is_set(), "on_deal_end was not called"
    lines = [r.getMessage() for r in caplog.records if r.name == "sdk.client"]
    closed_at = [i for i, t in enumerate(lines) if t == "the arena closed the stream"]
    ended_at = [i for i, t in enumerate(lines) if t.startswith("match m1 ended: ")]
    assert len(closed_at) == 1 and len(ended_at) == 1, lines
    assert ended_at[0] < closed_at[0], lines
    assert summary.reason == "the arena closed the stream"


def test_the_match_ends_waited_for_are_not_kept_once_said() -> None:
    """Each match end said (its step done) leaves the runner's set of ends to wait for: a
    long run does not keep every match's step for ever, and a later close waits on none of
    them (mutant: the discard on the step's end removed)."""
    from sdk import Bot
    from sdk.client import BotRunner
    from tests.sdk.test_hostile_arena import WELCOME, _game, deal_ended, ended, fake_arena, started

    class First(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

    async def script(s: Any) -> Any:
        yield WELCOME
        for mid in ("m1", "m2", "m3"):
            yield started(mid, _game())
            last = ended(mid)
            last.events.append(deal_ended(mid))
            yield last

    async def main() -> Any:
        async with fake_arena(script) as arena:
            runner = BotRunner(First, arena.address, "tok", initial_backoff=0.01, retry_for=5)
            summary = await asyncio.wait_for(runner.run(), 60)
            return summary, set(runner._ends_unsaid)

    summary, left = asyncio.run(main())
    assert summary.matches == 3, summary
    assert left == set(), left


# -------------------------------------------------------- arena serve: a second signal


def test_a_second_signal_skips_the_wait_for_streams_in_their_settle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena serve` signalled twice (the second while it drains) stops without waiting for
    the streams in their settle (mutant: ``streams_settled`` awaited all the same); a
    single signal still waits for them."""
    calls: list[str] = []

    async def streams_settled(self: Referee, timeout: float | None = None) -> None:
        calls.append("settled")

    monkeypatch.setattr(Referee, "streams_settled", streams_settled)

    def run(twice: bool) -> list[str]:
        calls.clear()
        # The serve's own signal handler, called as the loop calls it on a signal (no real
        # signal sent: the second lands exactly as the serve begins to drain).
        handlers: dict[int, Any] = {}

        class Lobby(serve_module.Lobby):
            def stop(self) -> None:
                super().stop()
                if twice:  # the second signal, as the serve drains
                    handlers[signal.SIGINT]()

        listening = threading.Event()
        real_start = serve_module.start_server

        async def start_server(*args: Any, **kwargs: Any) -> Any:
            out = await real_start(*args, **kwargs)
            listening.set()  # (after its signal handlers are in place)
            return out

        monkeypatch.setattr(serve_module, "Lobby", Lobby)
        monkeypatch.setattr(serve_module, "start_server", start_server)
        config = RefereeConfig(record_dir=tmp_path / "rec")

        async def main() -> bool:
            loop = asyncio.get_running_loop()
            real_add = loop.add_signal_handler

            def add_signal_handler(sig: int, callback: Any, *args: Any) -> None:
                handlers[sig] = lambda: callback(*args)
                real_add(sig, callback, *args)

            loop.add_signal_handler = add_signal_handler  # type: ignore[method-assign]
            serve = asyncio.create_task(
                serve_module._serve(
                    config,
                    {"x": "tok-x-2"},
                    PRESETS["classic"],
                    "127.0.0.1",
                    0,
                    None,
                    None,
                    7,
                    30.0,
                )
            )
            await _until(lambda: listening.is_set() or serve.done(), "the serve listening")
            handlers[signal.SIGINT]()  # the first signal
            return await asyncio.wait_for(serve, 60)

        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            asyncio.run(main())
        finally:
            for s, h in before.items():
                signal.signal(s, h)
        return list(calls)

    assert run(twice=True) == []
    assert run(twice=False) == ["settled"]
