"""Hostile round 42: angles the earlier rounds (see round 38's inventory) did not drive.

- ``arena serve`` stopped by SIGTERM mid-match while one of the seats is a bot whose
  connection grants its stream no flow-control window (it reads nothing, so the referee's
  ``MatchEnded`` and its "the arena is stopping" can never reach it): the process still
  exits in bounded time with exit code 0, the match is recorded as interrupted and its
  record replays, the honest bots are told both, and nothing is logged as an error;
- the same stop at a random moment beside a bot that attacks its streams (``streams`` mode
  of ``hostile_bot.py``: garbage, floods, reconnects) and one that misbehaves in every
  decision (``decisions`` mode): every record file ends (with its result or as
  interrupted) and replays;
- the metadata and call options of a ``Play`` call as a raw HTTP/2 client can send them:
  a ``grpc-timeout`` of 11,000 years and of one nanosecond, one gRPC cannot parse, a
  compressed Hello in an algorithm no one knows, ``grpc-accept-encoding`` asking for gzip
  or for nonsense, 400 metadata entries, a value of 15 KB, a header name in capitals
  (HTTP/2 forbids it), ``authorization-bin`` given before the right token, and a
  ``content-type`` of ``application/grpc+json``. Each is welcomed or refused with a status
  naming why, and none leaves a stream attached or the bot's place taken.

No defect found: these pin the behaviour checked.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_cli
from arena.referee import Referee
from arena.v1 import arena_pb2 as pb
from tests.faults.test_faults_round37 import (
    ROOT,
    _bot,
    _env,
    _last_lines,
    _log,
    _procs,
    _rest,
    _serve,
    _token,
    _tokens_file,
    _under_way,
    _until,
)
from tests.support.harness import no_error_logged, serve_one_bot, until, welcomed_call  # noqa: F401 (a fixture)
from tests.support.raw_h2 import (
    DATA,
    END_STREAM,
    HEADERS,
    RST_STREAM,
    NoWindow,
    RawH2,
    grpc_message,
)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

PLAY = "/arena.v1.Arena/Play"
HELLO = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1)).SerializeToString()


def _errors(tmp: Path) -> list[str]:
    """The lines of serve's log that report an error or a traceback (grpc.aio's bare one of
    a handler its stop cancelled, too: see tests/faults/test_flakes_round44.py)."""
    text = (tmp / "serve.err").read_text(errors="replace")
    return [ln for ln in text.splitlines() if "ERROR" in ln or "Traceback" in ln]


def _replays(tmp: Path) -> dict[str, str]:
    """record file name -> what ``arena replay --check`` said of it, for those it refused."""
    bad = {}
    for f in sorted((tmp / "rec").glob("*.jsonl")):
        r = CliRunner().invoke(arena_cli, ["replay", str(f), "--check"])
        if r.exit_code != 0 or "OK: every action is legal" not in r.output:
            bad[f.name] = r.output[-500:]
    return bad


# ------------------------------------------------------------- the stop, mid-match


def test_sigterm_mid_match_with_a_seat_that_reads_nothing_exits_and_records_it(
    tmp_path: Path,
) -> None:
    """A seated bot whose connection grants no window cannot be sent its ``MatchEnded`` nor
    its stream's end: the stop waits for it no longer than ``end_streams``' own bound and
    the server's stop, exits 0, and the match is kept as interrupted (replayable); the two
    honest bots are told of the interruption and that the arena stops."""
    names = ("a", "b", "x")

    async def main() -> tuple[int, str, list[Any]]:
        async with _procs() as ps:
            server, port = await _serve(ps, tmp_path, "--drain-s", "0", "--decision-ms", "300",
                                        tokens=_tokens_file(tmp_path, names))  # fmt: skip
            nw = await asyncio.to_thread(NoWindow, port)
            try:
                sid = nw.play(_token("x"), HELLO)
                for n in ("a", "b"):
                    await _bot(ps, tmp_path, f"127.0.0.1:{port}", n)
                await _until(lambda: bool(_under_way(tmp_path)), "a match under way")
                # Every seat sent its match's start (x's held by flow control), not a
                # second's sleep: the match cannot end before the stop (x's first request
                # alone waits out its time bank, 10 s).
                await _until(
                    lambda: all(" started: seat " in _log(tmp_path, n) for n in "ab"),
                    "the honest bots told the match started",
                )
                server.send_signal(signal.SIGTERM)
                code, out = await _rest(server)  # (fails if it does not exit: a hang)
                await _until(
                    lambda: all("the arena is stopping" in _log(tmp_path, n) for n in "ab"),
                    "the honest bots told the arena stops",
                )
                # x's trailers were sent before the server exited; its reader thread takes
                # them off the socket in its own time (read at once, they may not be in yet).
                await _until(lambda: bool(nw.ended(sid)), "x's stream's trailers read")
                return code, out, nw.ended(sid)
            finally:
                await asyncio.to_thread(nw.close)

    code, out, trailers = asyncio.run(main())
    assert code == 0, (tmp_path / "serve.err").read_text()
    assert "1 interrupted by the stop" in out, out
    assert not _errors(tmp_path), _errors(tmp_path)
    ((mid, last),) = _last_lines(tmp_path).items()
    assert last["type"] == "interrupted", last
    rec = last["record"]
    assert rec["interrupted"] is True and rec["result"] is None
    assert sorted(rec["players"]) == sorted(names)
    for n in ("a", "b"):
        assert f"match {mid} was interrupted by the arena" in _log(tmp_path, n)
    # x's stream ends UNAVAILABLE all the same (its trailers need no window), so its SDK
    # would reconnect as after any stop.
    assert trailers and b"grpc-status\x0214" in trailers[-1].payload, trailers
    assert not _replays(tmp_path), _replays(tmp_path)


async def _hostile(ps: Any, tmp: Path, port: int, name: str, mode: str) -> None:
    """``hostile_bot.py`` as bot ``name`` in ``mode``; its output in ``tmp/<name>.log``."""
    with open(tmp / f"{name}.log", "ab") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "tests" / "hostile" / "hostile_bot.py"),
            "--target", f"127.0.0.1:{port}", "--token", _token(name), "--name", name,
            "--mode", mode, "--streams", "60", "--flood", "1500",
            stdout=out, stderr=asyncio.subprocess.STDOUT, cwd=str(ROOT), env=_env(),
        )  # fmt: skip
    ps.started.append(proc)


@pytest.mark.slow
@pytest.mark.parametrize("drain", ["0", "1"])
def test_sigterm_at_a_random_moment_beside_hostile_bots_leaves_every_record_whole(
    tmp_path: Path, drain: str
) -> None:
    """Two honest bots, one attacking its streams and one misbehaving in its decisions, at
    tables mixed by the lobby; SIGTERM at a random moment once a match is under way (with
    and without a drain): exit 0, nothing logged as an error, every record file ends with
    its result or as interrupted, and each replays."""
    names = ("a", "b", "x", "y")

    async def main() -> tuple[int, str]:
        async with _procs() as ps:
            server, port = await _serve(ps, tmp_path, "--drain-s", drain, "--decision-ms", "300",
                                        tokens=_tokens_file(tmp_path, names))  # fmt: skip
            for n in ("a", "b"):
                await _bot(ps, tmp_path, f"127.0.0.1:{port}", n)
            await _hostile(ps, tmp_path, port, "x", "streams")
            await _hostile(ps, tmp_path, port, "y", "decisions")
            await _until(lambda: bool(_under_way(tmp_path)), "a match under way")
            await asyncio.sleep(random.uniform(0.5, 4.0))
            server.send_signal(signal.SIGTERM)
            return await _rest(server)

    code, out = asyncio.run(main())
    assert code == 0, (tmp_path / "serve.err").read_text()[-3000:]
    assert "match(es) played" in out, out
    assert not _errors(tmp_path), _errors(tmp_path)
    last = _last_lines(tmp_path)
    assert last and all(v.get("type") in ("end", "interrupted") for v in last.values()), last
    assert not _replays(tmp_path), _replays(tmp_path)


# ---------------------------------------------------- metadata and call options


AUTH = (b"authorization", b"Bearer tok-x")
#: name -> (the call's extra metadata, whether the referee welcomes it, what its status says
#: when refused).
CASES: dict[str, tuple[tuple[tuple[bytes, bytes], ...], bool, bytes]] = {
    "timeout of years": ((AUTH, (b"grpc-timeout", b"99999999H")), True, b""),
    "timeout of a nanosecond": ((AUTH, (b"grpc-timeout", b"1n")), False, b"Deadline Exceeded"),
    "timeout unparsable": ((AUTH, (b"grpc-timeout", b"-5S")), False, b"grpc-timeout"),
    "unknown compression": ((AUTH, (b"grpc-encoding", b"br")), False, b"grpc-encoding"),
    "accepts gzip": ((AUTH, (b"grpc-accept-encoding", b"gzip")), True, b""),
    "accepts nonsense": ((AUTH, (b"grpc-accept-encoding", b"zstd,br,,,")), True, b""),
    "400 entries": ((AUTH, *((f"x-k{i}".encode(), b"v") for i in range(400))), True, b""),
    "a value of 15 KB": ((AUTH, (b"x-big", b"a" * 15_000)), True, b""),
    "name in capitals": (((b"Authorization", b"Bearer tok-x"),), False, b"Authorization"),
    "binary before": (((b"authorization-bin", b"QmVhcmVy"), AUTH), True, b""),
    "grpc+json": ((AUTH, (b"content-type", b"application/grpc+json")), True, b""),
}


def test_play_calls_metadata_and_options_are_welcomed_or_refused_and_hold_nothing() -> None:
    """Each call of ``CASES`` on a connection of its own, one after the other: a Welcome
    (for those gRPC lets through) or a status naming what was wrong; once each connection
    is closed the bot is attached nowhere, and a plain call of its token is welcomed at
    once (nothing reserved its place: not the call whose deadline passed as it was
    welcomed, nor the one that lives for years)."""

    def attack(port: int) -> dict[str, tuple[bool, bytes]]:
        out = {}
        for name, (extra, _, _) in CASES.items():
            conn = RawH2(port)
            try:
                data = (
                    grpc_message(gzip.compress(HELLO), compressed=True)
                    if name == "unknown compression"
                    else grpc_message(HELLO)
                )
                sid = conn.call(PLAY, extra=extra, data=data, end=False)
                welcomed, trailers = False, b""
                # (a welcomed stream stays open: read until its Welcome; a deadline that only
                # ends a wait that would never end, as CI may pause every process for seconds)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    got = [f for f in conn.frames(0.2) if f.stream == sid]
                    welcomed |= any(f.kind == DATA and len(f.payload) > 5 for f in got)
                    ended = [f.payload for f in got if f.kind == HEADERS and f.flags & END_STREAM]
                    trailers = ended[-1] if ended else trailers
                    if trailers or any(f.kind == RST_STREAM for f in got):
                        break
                    if welcomed and name != "timeout of a nanosecond":
                        break
                out[name] = (welcomed, trailers)
            finally:
                conn.close()
        return out

    async def body(ref: Referee, port: int) -> tuple[dict[str, tuple[bool, bytes]], bool]:
        got = await asyncio.to_thread(attack, port)
        await until(lambda: ref.session("x").stream is None, "x's streams all ended")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            call = await welcomed_call(ch, "tok-x", "x")
            back = ref.session("x").stream is not None
            call.cancel()
        return got, back

    got, back = serve_one_bot(body)
    for name, (_, welcomes, says) in CASES.items():
        welcomed, trailers = got[name]
        if welcomes:
            assert welcomed and not trailers, (name, got[name])
        elif name == "timeout of a nanosecond":
            # (the Welcome may be written before the deadline is noticed: then it ends so)
            assert b"grpc-status\x014" in trailers and says in trailers, (name, got[name])
        else:
            assert not welcomed and says in trailers, (name, got[name])
            assert b"grpc-status\x0213" in trailers, (name, got[name])  # INTERNAL, core's
    assert back
