"""Test harness: a referee on localhost (port 0) and raw-protocol bot processes.

Every process started here is killed and reaped when the ``Arena`` context exits.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import json
import logging
import os
import sqlite3
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from sdk.client import BotRunner

RAW_BOT = Path(__file__).with_name("raw_bot.py")
ROOT = RAW_BOT.parents[2]

_T = TypeVar("_T")


@dataclass
class BotProc:
    name: str
    token: str
    proc: asyncio.subprocess.Process
    capture: Path | None
    summary: dict[str, Any] | None = None
    stderr: str = ""

    async def finish(self, timeout: float = 30.0) -> dict[str, Any]:
        """Wait for the process to exit; its JSON summary."""
        try:
            out, err = await asyncio.wait_for(self.proc.communicate(), timeout)
        except TimeoutError:
            self.proc.kill()
            out, err = await self.proc.communicate()
        self.stderr = err.decode(errors="replace")
        lines = [ln for ln in out.decode().splitlines() if ln.startswith("{")]
        self.summary = json.loads(lines[-1]) if lines else {"status": "NO-SUMMARY"}
        return self.summary

    def messages(self) -> list[pb.ServerMessage]:
        """Every message received, in order (those of a ``Batch`` one by one)."""
        assert self.capture is not None
        out = []
        for line in self.capture.read_text().splitlines():
            out.append(pb.ServerMessage.FromString(base64.b64decode(line.removeprefix("b:"))))
        return out

    def batched(self) -> int:
        """How many of the received messages came inside a ``Batch``."""
        assert self.capture is not None
        return sum(ln.startswith("b:") for ln in self.capture.read_text().splitlines())


async def _called_here(what: str, fn: Callable[[], _T]) -> _T:
    return fn()


def on_the_loop(runner: BotRunner) -> BotRunner:
    """``runner`` (an SDK ``BotRunner`` of a control bot: an honest one whose calls take
    microseconds, beside a referee in this process), made to make its bot and run its
    calls on the event loop, not in its worker threads (``BotRunner._in_thread``).

    The referee excuses its own loop's stalls (``LoopLag``), not another thread's: on a
    loaded machine a worker thread once waited 2.4 s for the GIL to make a ``RandomBot``
    while the loop ran on, and the honest bot's first request timed out (hostile round 36,
    CI). On the loop, the bot is late only when the referee's loop is, which it excuses:
    a test may then say exactly that an honest seat had no incident. Not for a test of the
    runner's threads themselves, nor for a bot that takes time (it would stall the loop)."""
    runner._in_thread = _called_here  # type: ignore[method-assign]
    return runner


@dataclass
class Arena:
    referee: Referee
    port: int
    tmp: Path
    procs: list[BotProc] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def spawn(
        self,
        name: str,
        mode: str = "random",
        *,
        register: bool = True,
        token: str | None = None,
        capture: bool = False,
        args: tuple[str, ...] = (),
        matches: int = 0,
        seed: str = "0",
    ) -> BotProc:
        """Start a raw bot process (registering its token unless ``register`` is False)."""
        tok = f"tok-{name}" if token is None else token
        if register:
            self.referee.add_bot(name, tok)
        cap = self.tmp / f"{name}.capture" if capture else None
        cmd = [
            sys.executable, str(RAW_BOT), "--target", self.target, "--token", tok,
            "--name", name, "--mode", mode, "--matches", str(matches), "--seed", seed,
        ]  # fmt: skip
        if cap is not None:
            cmd += ["--capture", str(cap)]
        cmd += list(args)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(ROOT),
            env=env,
        )
        bp = BotProc(name, tok, proc, cap)
        self.procs.append(bp)
        return bp

    async def runners(
        self,
        names: list[str],
        factories: list[Any],
        matches: int,
        *,
        controls: Container[str] = (),
    ) -> list[asyncio.Task[Any]]:
        """The SDK's runners (``sdk.client.BotRunner``) of ``factories`` as bots ``names``,
        each asked for ``matches`` matches, started and connected: their tasks, each ending
        in the runner's summary. The runners of the bots named in ``controls`` make their
        bots and call them on this loop (:func:`on_the_loop`)."""
        from sdk.client import BotRunner

        runners = []
        for n, f in zip(names, factories, strict=True):
            self.referee.add_bot(n, f"tok-{n}")
            runner = BotRunner(f, self.target, f"tok-{n}", matches=matches, name=n, retry_for=10)
            runners.append(on_the_loop(runner) if n in controls else runner)
        tasks = [asyncio.create_task(r.run()) for r in runners]
        assert not await self.referee.wait_for_bots(names, 20)
        return tasks

    async def bots(self, names: list[str], mode: str = "random", **kw: Any) -> list[BotProc]:
        """Spawn bots and wait until they are all connected."""
        ps = [await self.spawn(n, mode, **kw) for n in names]
        missing = await self.referee.wait_for_bots(names, 20)
        assert not missing, f"bots did not connect: {missing}"
        return ps


@contextlib.asynccontextmanager
async def arena(tmp: Path, **config: Any) -> AsyncIterator[Arena]:
    """A referee with its server on a free localhost port; kills every bot on exit."""
    ref = Referee(RefereeConfig(**config))
    server, port = await start_server(ref)
    a = Arena(ref, port, tmp)
    try:
        yield a
    finally:
        for bp in a.procs:
            if bp.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    bp.proc.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(bp.proc.wait(), 5)
        await server.stop(0.5)


def record_fills_after(monkeypatch: pytest.MonkeyPatch, lines: int) -> None:
    """Every match's record file, opened while ``monkeypatch`` holds, takes ``lines`` writes,
    then fails as a full disk does (ENOSPC): a disk filling up mid-match."""
    from arena.referee.match import MatchRunner

    opened = MatchRunner._open_record

    class Full:
        def __init__(self, f: Any) -> None:
            self.f, self.name, self.written = f, f.name, 0

        def write(self, text: str) -> int:
            self.written += 1
            if self.written > lines:
                raise OSError(errno.ENOSPC, "No space left on device")
            return int(self.f.write(text))

        def flush(self) -> None:
            self.f.flush()

        def close(self) -> None:
            self.f.close()

    def open_then_fill(self: MatchRunner, record_dir: Path) -> None:
        opened(self, record_dir)
        self._file = Full(self._file)  # type: ignore[assignment]

    monkeypatch.setattr(MatchRunner, "_open_record", open_then_fill)


def stored_matches(db: Path) -> int:
    """Matches a tournament's database holds so far, read-only (0 while the database is not
    there, or has no tables yet)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as c:
            return int(c.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0


async def until(check: Any, what: str, within: float = 30.0) -> None:
    """Poll ``check()`` every 10 ms until it holds; an AssertionError naming ``what`` if it
    does not within ``within`` seconds (a condition is asserted, not a time: the bound
    only ends a wait that would never end, so it is generous, CI's machine may pause every
    process for seconds; and real, tests fake the loop's clock)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g} s: {what}")
        await asyncio.sleep(0.01)


def play_sdk_match(
    bot: Any,
    max_deals: int,
    seed: int = 9,
    rules: Any = None,
    *,
    incidents: bool = False,
    record_dir: Path | None = None,
) -> dict[str, Any]:
    """:func:`play_sdk_match_summaries`' record alone."""
    return play_sdk_match_summaries(
        bot, max_deals, seed, rules, incidents=incidents, record_dir=record_dir
    )[0]


def play_sdk_match_summaries(
    bot: Any,
    max_deals: int,
    seed: int = 9,
    rules: Any = None,
    *,
    incidents: bool = False,
    record_dir: Path | None = None,
) -> tuple[dict[str, Any], list[Any]]:
    """One match of ``max_deals`` deals (0: as the ruleset says) under ``rules`` (an engine
    ``Ruleset``; classic by default) between SDK bots of class ``bot`` (``ann``, ``bob``,
    ``cid``, and ``dan`` at four), each its own client over gRPC to a fresh referee on a
    free port; the record (no incident asserted unless ``incidents``) and each bot's
    ``RunSummary``, in seat order; ``record_dir``: the referee's (its match file there).
    Everything started is ended."""
    import dataclasses

    from engine import PRESETS
    from sdk import client

    rules = PRESETS["classic"] if rules is None else rules
    if max_deals:
        rules = dataclasses.replace(rules, max_deals=max_deals)

    async def main() -> tuple[dict[str, Any], list[Any]]:
        referee = Referee(
            RefereeConfig(decision_ms=60_000, time_bank_ms=60_000, record_dir=record_dir)
        )
        names = ["ann", "bob", "cid", "dan"][: rules.players]
        for n in names:
            referee.add_bot(n, f"token-{n}-0123456789")
        server, port = await start_server(referee)
        bots = [
            asyncio.create_task(client.run_async(bot, f"127.0.0.1:{port}",
                                                 f"token-{n}-0123456789", matches=1, name=n))
            for n in names
        ]  # fmt: skip
        try:
            assert not await referee.wait_for_bots(names, 60)
            rec = await referee.run_match("m1", rules, seed, names)
            assert incidents or not rec["incidents"], rec["incidents"]
            return rec, list(await asyncio.wait_for(asyncio.gather(*bots), 60))
        finally:
            for b in bots:
                b.cancel()
            await server.stop(0)

    return asyncio.run(main())


def serve_one_bot(body: Any, prepare: Any = None, **config: Any) -> Any:
    """``body(referee, port)`` against a fresh referee (``RefereeConfig(**config)``, bot
    ``x`` with token ``tok-x``; ``prepare(referee)`` called before it serves) and its server
    on a free port; its result. The streams and the server are ended whatever ``body``
    does."""

    async def main() -> Any:
        ref = Referee(RefereeConfig(**config))
        ref.add_bot("x", "tok-x")
        if prepare is not None:
            prepare(ref)
        server, port = await start_server(ref)
        try:
            return await body(ref, port)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


async def welcomed_call(channel: Any, token: str, name: str = "raw") -> Any:
    """A ``Play`` call on ``channel`` that said Hello with ``token`` and got its Welcome."""
    from arena.v1 import arena_pb2_grpc as pb_grpc

    call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
    await call.write(pb.BotMessage(hello=pb.Hello(bot_name=name, protocol_version=1)))
    welcome = await asyncio.wait_for(call.read(), 60)  # (a server that never answers: fails)
    assert welcome.WhichOneof("kind") == "welcome", welcome
    return call


def as_message(msg: pb.ServerMessage | bytes) -> pb.ServerMessage:
    """What a stream is given to send (``Stream.put``), as a message: the referee hands it a
    decision request as the message's wire bytes (``MatchRunner._send_request``)."""
    return pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg


def attach_in_process(ref: Referee, names: tuple[str, ...], answer: Any) -> dict[str, Any]:
    """Bots ``names`` of ``ref`` on in-process streams, no network: each decision request
    goes to ``answer(bot name, request)`` on the next turn of the loop, as a read would
    bring it. The streams by bot name."""
    from arena.referee.sessions import Stream

    class Hooked(Stream):
        __slots__ = ("bot",)

        def put(self, msg: pb.ServerMessage | bytes) -> None:
            msg = as_message(msg)  # (a request comes as its wire bytes)
            super().put(msg)
            if msg.HasField("decision_request"):
                asyncio.get_running_loop().call_soon(answer, self.bot, msg.decision_request)

    streams = {}
    for n in names:
        ref.add_bot(n, f"tok-{n}")
        stream = Hooked(f"fake-{n}")
        stream.bot = n
        ref.session(n).attach(stream)
        streams[n] = stream
    return streams


@pytest.fixture
def no_error_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """For ``pytestmark = pytest.mark.usefixtures("no_error_logged")``: no test of the module
    may make the referee (or gRPC under it) log an error or a traceback."""
    caplog.set_level(logging.WARNING)
    yield
    errors = errors_logged(caplog.records)
    assert not errors, [r.getMessage() for r in errors]


def errors_logged(records: list[Any]) -> list[Any]:
    """The log records at ERROR or above, but for one that is gRPC's, not ours: in a test
    process that runs ``asyncio.run`` many times, grpc.aio's completion queue stays bound to
    the loops it served, and after one of them has closed it can log "Exception in callback
    PollerCompletionQueue._handle_events" (RuntimeError: Event loop is closed, or
    BlockingIOError; grpc/grpc#25364, #34139). A product process runs one loop."""

    def grpc_teardown(r: Any) -> bool:
        exc = r.exc_info[1] if r.exc_info else None
        return "PollerCompletionQueue._handle_events" in r.getMessage() and (
            isinstance(exc, BlockingIOError)
            or (isinstance(exc, RuntimeError) and "Event loop is closed" in str(exc))
        )

    return [r for r in records if r.levelno >= logging.ERROR and not grpc_teardown(r)]


@contextlib.contextmanager
def web_server(
    db: Path,
    host: str = "127.0.0.1",
    allowed_hosts: tuple[str, ...] = (),
    season: str | None = None,
) -> Iterator[Any]:
    """``arena web`` (``--season`` ``season``) on database ``db`` in this process, on a
    free port of ``host``; yields the server (``.url``, ``.port``) and stops it."""
    from arena.web import DataSource, make_server

    server = make_server(DataSource(db, season=season), host, 0, allowed_hosts)
    thread = threading.Thread(target=server.serve_forever, name="arena-web", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def get_json(base: str, path: str) -> Any:
    """The JSON answer of ``arena web`` at ``base`` (its URL) to a GET of ``path``."""
    with urllib.request.urlopen(base + path.lstrip("/"), timeout=10) as r:
        assert r.headers["Content-Type"].startswith("application/json")
        return json.loads(r.read().decode())


def deal_scores(page: dict[str, Any]) -> list[int]:
    """Every score per deal of a bot page of ``arena web`` (``/api/bots/<name>``), ascending:
    the page sends how many deals scored each score (``deal_score_counts``)."""
    return [v for v, n in page["deal_score_counts"] for _ in range(n)]


async def play_server(play: Any) -> tuple[Any, int]:
    """A bare gRPC server on a free port whose ``Arena/Play`` is ``play`` (an async
    generator of serialized ``ServerMessage`` bytes, given the bot's messages parsed): a
    scripted arena for the SDK's tests. The server and its port; the caller stops it."""
    import grpc

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("arena.v1.Arena", {
        "Play": grpc.stream_stream_rpc_method_handler(
            play, request_deserializer=pb.BotMessage.FromString,
            response_serializer=lambda b: b,
        )})  # fmt: skip
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port
