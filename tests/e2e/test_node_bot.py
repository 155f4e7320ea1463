"""docs/examples/node-bot, a bot in JavaScript written from the proto and docs/protocol.md
alone, installed from the npm registry (`npm ci`) in a copy of the example and played
against two Python random bots through a real `arena serve`: the match ends with every
seat's result, no incident, every process exits 0, and `arena replay --check` passes; its
connection reset mid-match, it resumes its seat (one disconnect, no strike).

Without node, npm or the registry this test fails (it is the proof that the example works):
it is marked slow, so `make test` leaves it out; `make test-all` runs it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from netproxy import FaultProxy

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "node-bot"
PROTO = ROOT / "proto" / "arena" / "v1" / "arena.proto"
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
ARENA_BOT = [sys.executable, "-c", "from sdk.cli import main; main()"]
TOKENS = {"node": "tok-node-1", "rand1": "tok-rand-1", "rand2": "tok-rand-2"}


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``node`` and a copy of the example with its pinned packages installed; fails saying
    what is missing."""
    return _install(tmp_path_factory.mktemp("node"))


def _install(tmp: Path) -> tuple[str, Path]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed to test the Node.js example (Node.js 20 or later)")
    copy = tmp / "node-bot"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("node_modules"))
    cmd = [npm, "ci", "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(cmd, cwd=copy, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("npm ci took over 10 minutes: is the npm registry reachable?")
    if done.returncode != 0:
        pytest.fail(f"npm ci failed (is the npm registry reachable?): {done.stderr[-2000:]}")
    return node, copy


@pytest.mark.slow
def test_node_bot_plays_a_match_against_python_bots(
    node_bot: tuple[str, Path], tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    node_exe, bot_dir = node_bot
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    db, rec = tmp_path / "serve.sqlite", tmp_path / "rec"
    serve = _serve_cmd(tmp_path, "--max-deals", "3")
    server = subprocess.Popen(serve, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env=env)  # fmt: skip
    procs.append(server)
    assert server.stdout is not None
    port = next((int(ln.split()[1]) for ln in server.stdout if ln.startswith("port ")), None)
    assert port is not None, f"arena serve printed no port: {server.communicate()[1]}"
    arena = f"127.0.0.1:{port}"
    node = [node_exe, "bot.js", "--arena", arena, "--name", "node"]
    node_env = {**env, "ARENA_TOKEN": TOKENS["node"], "ARENA_PROTO": str(PROTO)}
    bots = [subprocess.Popen(node, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=bot_dir, env=node_env)]  # fmt: skip
    for name in ("rand1", "rand2"):
        cmd = [*ARENA_BOT, "run", "random", "--arena", arena]
        bot_env = {**env, "ARENA_TOKEN": TOKENS[name]}
        bots.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, cwd=ROOT, env=bot_env))  # fmt: skip
    procs.extend(bots)
    outputs = []
    # The bots exit 0 on the arena's OK, then the server ends.
    for name, p in zip([*TOKENS, "arena serve"], [*bots, server], strict=True):
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (
            f"{name} exited {p.returncode}: {out[-2000:]} {(err or '')[-2000:]}"
        )
        outputs.append(out)
    assert " ended (max_deals) after 3 deals" in outputs[0], outputs[0]  # the node bot saw it
    assert outputs[0].rstrip().endswith("the arena is done with us: bye"), outputs[0]

    (record_file,) = rec.glob("*.jsonl")
    end = json.loads(record_file.read_text().splitlines()[-1])
    assert end["type"] == "end", end["type"]
    record = end["record"]
    assert sorted(record["players"]) == sorted(TOKENS)
    result = record["result"]
    assert result["reason"] == "max_deals" and result["deals"] == 3
    assert sorted(result["places"])[0] == 1 and len(result["scores"]) == 3
    assert record["incidents"] == [] and record["forfeits"] == []

    _check(record["match_id"], db)


def _serve_cmd(tmp: Path, *extra: str) -> list[str]:
    """`arena serve` on a free port for one match of the three bots, stored in tmp."""
    tokens = tmp / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "{t}"\n' for n, t in TOKENS.items()))
    store = ["--record-dir", str(tmp / "rec"), "--db", str(tmp / "serve.sqlite")]
    return [*ARENA, "serve", "--port", "0", "--tokens", str(tokens), "--matches", "1",
            *store, *extra]  # fmt: skip


def _check(match_id: str, db: Path) -> None:
    replay = [*ARENA, "replay", match_id, "--check", "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    check = subprocess.run(replay, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "OK: every action is legal" in check.stdout


@pytest.mark.slow
def test_node_bot_resumes_its_seat_after_its_connection_is_reset(
    node_bot: tuple[str, Path], tmp_path: Path
) -> None:
    node_exe, bot_dir = node_bot
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # A long grace: the reconnect must not race it on a loaded machine.
    serve = _serve_cmd(tmp_path, "--max-deals", "4", "--grace-s", "120")

    async def main() -> dict[str, str]:
        pipe = asyncio.subprocess.PIPE
        server = await asyncio.create_subprocess_exec(*serve, stdout=pipe, stderr=pipe,
                                                      cwd=ROOT, env=env)  # fmt: skip
        procs: dict[str, Any] = {"arena serve": server}
        try:
            assert server.stdout is not None and server.stderr is not None
            while not (line := (await server.stdout.readline()).decode()).startswith("port "):
                assert line, f"arena serve printed no port: {await server.stderr.read()!r}"
            port = int(line.split()[1])
            async with FaultProxy(port) as px:
                # Reset (RST) mid-match: some 8 requests in, of about 30.
                px.cut_after = ("down", 8000)
                node_env = {**env, "ARENA_TOKEN": TOKENS["node"], "ARENA_PROTO": str(PROTO)}
                procs["node"] = await asyncio.create_subprocess_exec(
                    node_exe, "bot.js", "--arena", px.address, stdout=pipe, stderr=pipe,
                    cwd=bot_dir, env=node_env)  # fmt: skip
                for name in ("rand1", "rand2"):
                    procs[name] = await asyncio.create_subprocess_exec(
                        *ARENA_BOT, "run", "random", "--arena", f"127.0.0.1:{port}",
                        stdout=pipe, stderr=pipe, cwd=ROOT,
                        env={**env, "ARENA_TOKEN": TOKENS[name]})  # fmt: skip
                outputs = {}
                for name in ("node", "rand1", "rand2", "arena serve"):
                    out, err = await asyncio.wait_for(procs[name].communicate(), 120)
                    text = out.decode() + err.decode()
                    assert procs[name].returncode == 0, f"{name}: {text[-3000:]}"
                    outputs[name] = text
                assert px.cuts == 1 and px.connections == 2, (px.cuts, px.connections)
                return outputs
        finally:
            for p in procs.values():
                if p.returncode is None:
                    p.kill()
                    await p.wait()

    outputs = asyncio.run(main())
    assert "stream ended (UNAVAILABLE" in outputs["node"] and ": resumed in seat" in outputs["node"]
    (record_file,) = (tmp_path / "rec").glob("*.jsonl")
    record = json.loads(record_file.read_text().splitlines()[-1])["record"]
    seat = record["players"].index("node")
    incidents = [(i["kind"], i["seat"]) for i in record["incidents"]]
    assert incidents == [("disconnect", seat)] and record["forfeits"] == []
    assert record["result"]["reason"] == "max_deals"
    _check(record["match_id"], tmp_path / "serve.sqlite")
