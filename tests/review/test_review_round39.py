"""Review of round 38's changes (SDK guards, --arena target checks, proxy bypass, ...):
each test names the defect it pins, and failed before its fix."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import Referee, RefereeConfig, start_server

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------- http_proxy and loopback targets


@pytest.mark.parametrize(
    ("target", "loopback"),
    [
        ("ipv4:///127.0.0.1:1", True), ("ipv6:///[::1]:1", True), ("IPV4:127.0.0.1:1", True),
        ("DNS:///localhost:1", True), ("Dns:localhost:1", True),
        ("dns://8.8.8.8/localhost:1", True), ("ipv4:127.0.0.1:1,127.0.0.2:2", True),
        ("ipv4:127.0.0.1:1,10.0.0.1:1", False), ("ipv4:///10.0.0.1:1", False),
        ("dns:50051", False), ("dns:", False), ("unix:/tmp/arena.sock", False),
    ],
)  # fmt: skip
def test_every_target_form_on_loopback_is_told(target: str, loopback: bool) -> None:
    """Defect: ``is_loopback_target`` read "dns:///", "dns:", "ipv4:" and "ipv6:" only, in
    lower case and without "//": an arena on 127.0.0.1 given as ``ipv4:///127.0.0.1:PORT``,
    ``IPV4:127.0.0.1:PORT`` or a list of loopback addresses (every one passed by
    ``--arena``'s check, and gRPC connects to each) went through ``http_proxy``."""
    from sdk.client import is_loopback_target

    assert is_loopback_target(target) is loopback


@pytest.mark.parametrize("form", ["ipv4:///127.0.0.1:{port}", "IPV4:127.0.0.1:{port}"])
def test_a_bot_reaches_a_loopback_arena_of_any_target_form_past_a_proxy(
    tmp_path: Path, form: str
) -> None:
    """Defect: with ``http_proxy`` set, ``arena-bot run --arena ipv4:///127.0.0.1:PORT``
    (or ``IPV4:...``) never reached the arena: gRPC sent it through the proxy."""
    dead_proxy = "http://127.0.0.1:9"  # (the discard port: nothing listens on it here)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "http_proxy": dead_proxy,
           "https_proxy": dead_proxy, "grpc_proxy": dead_proxy}  # fmt: skip
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)

    async def main() -> list[str]:
        ref = Referee(RefereeConfig())
        ref.add_bot("p1", "tok-p1-0123456789")
        server, port = await start_server(ref, port=0)
        cli = [sys.executable, "-c", "from sdk.cli import main; main()", "run", "random"]
        proc = subprocess.Popen(
            [*cli, "--arena", form.format(port=port), "--token", "tok-p1-0123456789"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
        try:
            return await ref.wait_for_bots(["p1"], timeout=30)
        finally:
            proc.kill()
            proc.wait()
            await server.stop(None)

    assert asyncio.run(main()) == []
