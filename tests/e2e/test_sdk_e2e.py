"""``arena-bot run`` as a subprocess against a real referee on localhost (port 0)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import Referee, RefereeConfig, start_server

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from sdk.cli import main; main()"]


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [*CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
    )


async def _wait_exit(proc: subprocess.Popen[str], timeout: float) -> int:
    loop = asyncio.get_running_loop()
    return await asyncio.wait_for(loop.run_in_executor(None, proc.wait), timeout)


def test_run_plays_a_match_and_exits_cleanly() -> None:
    async def main() -> tuple[dict[str, object], list[int], list[str]]:
        ref = Referee(RefereeConfig(decision_ms=2000, time_bank_ms=20000))
        bots = {"h": "heuristic", "c": "counting", "r": "random"}
        for name in bots:
            ref.add_bot(name, f"tok-{name}")
        server, port = await start_server(ref, port=0)
        procs = [
            _spawn(
                "run",
                spec,
                "--arena",
                f"127.0.0.1:{port}",
                "--token",
                f"tok-{name}",
                "--once",
                "--log-level",
                "info",
            )
            for name, spec in bots.items()
        ]
        try:
            missing = await ref.wait_for_bots(list(bots), timeout=30)
            assert missing == []
            rec = await ref.run_match("m1", "classic", 7, list(bots))
            codes = [await _wait_exit(p, 30) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            await server.stop(None)
        outputs = [p.stdout.read() if p.stdout else "" for p in procs]
        return rec, codes, outputs

    rec, codes, outputs = asyncio.run(main())
    assert codes == [0, 0, 0], outputs
    assert rec["incidents"] == [], rec["incidents"]
    assert rec["forfeits"] == []
    result = rec["result"]
    assert isinstance(result, dict) and max(result["scores"]) >= 1000
    for out in outputs:
        assert "match m1 ended" in out
        assert "1 match(es)" in out


def test_bad_token_gives_up_with_a_clear_message() -> None:
    async def main() -> tuple[int, str]:
        ref = Referee(RefereeConfig())
        ref.add_bot("h", "good")
        server, port = await start_server(ref, port=0)
        proc = _spawn("run", "random", "--arena", f"127.0.0.1:{port}", "--token", "bad")
        try:
            code = await _wait_exit(proc, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
            await server.stop(None)
        return code, proc.stdout.read() if proc.stdout else ""

    code, out = asyncio.run(main())
    assert code == 2
    assert "refused the token" in out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_stops_cleanly_while_waiting() -> None:
    async def main() -> tuple[int, str]:
        ref = Referee(RefereeConfig())
        ref.add_bot("h", "tok")
        server, port = await start_server(ref, port=0)
        proc = _spawn("run", "heuristic", "--arena", f"127.0.0.1:{port}", "--token", "tok")
        try:
            assert await ref.wait_for_bots(["h"], timeout=30) == []
            proc.send_signal(signal.SIGTERM)
            code = await _wait_exit(proc, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
            await server.stop(None)
        return code, proc.stdout.read() if proc.stdout else ""

    code, out = asyncio.run(main())
    assert code == 0, out
    assert "signal SIGTERM" in out


def test_reconnects_until_the_arena_is_up() -> None:
    """The bot starts before the referee; it retries UNAVAILABLE and then plays."""
    import socket

    async def main() -> tuple[list[int], dict[str, object], list[str]]:
        # The port is held (by the ``with`` below), bound and not listening: a connection
        # to it is refused, as to no server, until the referee listens on it. Closed, it
        # could be taken meanwhile by a server or a connection of another test (xdist runs
        # two at once) or by a bot's own connection to it (a TCP self-connect). The referee
        # binds it beside this socket: both have SO_REUSEADDR and this one never listens.
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        hold.bind(("127.0.0.1", 0))
        port = hold.getsockname()[1]
        procs = [
            _spawn(
                "run",
                "heuristic",
                "--arena",
                f"127.0.0.1:{port}",
                "--token",
                f"t{i}",
                "--matches",
                "1",
            )
            for i in range(3)
        ]
        # Wait until the first bot has failed to connect at least once.
        seen: list[str] = []

        def read_until_retry() -> None:
            assert procs[0].stdout is not None
            for line in procs[0].stdout:
                seen.append(line)
                if "reconnecting in" in line:
                    return

        await asyncio.wait_for(
            asyncio.get_running_loop().run_in_executor(None, read_until_retry), 30
        )
        ref = Referee(RefereeConfig(decision_ms=2000))
        for i in range(3):
            ref.add_bot(f"b{i}", f"t{i}")
        server, _ = await start_server(ref, port=port)
        try:
            assert await ref.wait_for_bots([f"b{i}" for i in range(3)], timeout=40) == []
            rec = await ref.run_match("m2", "1001", 3, [f"b{i}" for i in range(3)])
            codes = [await _wait_exit(p, 30) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            await server.stop(None)
        outputs = [p.stdout.read() if p.stdout else "" for p in procs]
        outputs[0] = "".join(seen) + outputs[0]
        return codes, rec, outputs

    with socket.socket() as hold:
        codes, rec, outputs = asyncio.run(main())
    assert codes == [0, 0, 0], outputs
    assert rec["incidents"] == []
    assert "cannot connect to the arena at 127.0.0.1:" in outputs[0]  # (said in words)
    assert "match m2 ended" in outputs[0]
