"""docs/examples/raw_bot.py, a bot written from docs/protocol.md alone (grpcio and the
generated code, no SDK), against a real `arena serve`: every match ends with a result, no
incident but the disconnect it makes on purpose, and every process exits cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
RAW_BOT = ROOT / "docs" / "examples" / "raw_bot.py"
NAMES = ["ann", "bob", "cid"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _serve(tmp: Path, procs: list[subprocess.Popen[str]], *extra: str) -> int:
    tokens = tmp / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "tok-{n}"\n' for n in NAMES))
    cmd = [sys.executable, "-c", "from arena.cli import main; main()", "serve", "--port", "0",
           "--tokens", str(tokens), "--record-dir", str(tmp / "rec"), *extra]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, env=ENV)  # fmt: skip
    procs.append(p)
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("port "):
            return int(line.split()[1])
    raise AssertionError(f"arena serve printed no port: {p.communicate()[1]}")


def _bot(port: int, name: str, procs: list[subprocess.Popen[str]], *extra: str) -> None:
    cmd = [sys.executable, str(RAW_BOT), "--arena", f"127.0.0.1:{port}", "--token", f"tok-{name}"]
    out = subprocess.DEVNULL
    procs.append(subprocess.Popen([*cmd, *extra], stdout=out, stderr=subprocess.PIPE, text=True,
                                  cwd=ROOT, env=ENV))  # fmt: skip


def _records(tmp: Path) -> list[dict[str, Any]]:
    ends = []
    for f in sorted((tmp / "rec").glob("*.jsonl")):
        last = json.loads(f.read_text().splitlines()[-1])
        assert last["type"] == "end", f"{f.name} did not end: {last['type']}"
        ends.append(last["record"])
    return ends


def _finish(procs: list[subprocess.Popen[str]]) -> None:
    """Wait for the bots, then the server: each exits 0 (the bots on the OK status)."""
    for p in [*procs[1:], procs[0]]:
        _, err = p.communicate()
        assert p.returncode == 0, f"{p.args[-3:]} exited {p.returncode}: {err[-2000:]}"


def test_raw_bot_plays_matches_to_their_end(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    port = _serve(tmp_path, procs, "--matches", "2", "--max-deals", "3")
    _bot(port, "ann", procs, "--batch")  # with Batch messages and DecisionBatch answers
    _bot(port, "bob", procs)  # one message at a time
    _bot(port, "cid", procs, "--batch", "--matches", "2")  # Hello.matches: leaves by itself
    _finish(procs)
    records = _records(tmp_path)
    assert len(records) == 2
    for rec in records:
        result = rec["result"]
        assert result["reason"] == "max_deals" and result["places"], rec["match_id"]
        assert rec["incidents"] == [] and rec["forfeits"] == [], rec["match_id"]


def test_raw_bot_resumes_its_seat_after_a_dropped_stream(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    # A long grace: the reconnect must not race it on a loaded machine.
    port = _serve(tmp_path, procs, "--matches", "2", "--max-deals", "3", "--grace-s", "120")
    _bot(port, "ann", procs, "--batch", "--drop-after", "4")  # leaves request 5 pending
    _bot(port, "bob", procs)
    _bot(port, "cid", procs)
    _finish(procs)  # ann exits 0: it got its pending request again and every match's end
    records = _records(tmp_path)
    assert len(records) == 2
    incidents = [i for rec in records for i in rec["incidents"]]
    assert [i["kind"] for i in incidents] == ["disconnect"]
    assert all(rec["forfeits"] == [] and rec["result"] for rec in records)
