"""Round 54's organiser's and spectator's docs, pasted as a reader pastes them.

Defects pinned here: docs/web.md's "a poll, seen with curl" block started `arena web` in
the background and asked it at once: the first `curl` ran before the server listened
(Python's start alone takes longer than curl's) and printed `000 0 bytes` where the doc
shows a 200, and the block left the server running. docs/bots.md's strength tables show
the columns of before round 54, and nothing said so: the command prints two more now
(`p99 ms`, `max ms`), and no table of the file showed the output as it is.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.docs.test_docs_round35 import ROOT

WEB_MD = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
BOTS_MD = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
RELIABILITY_MD = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")


def _block(doc: str, words: str) -> str:
    """The one fenced block of ``doc`` that holds ``words``."""
    blocks = [b.split("\n", 1)[1] for b in doc.split("```")[1::2] if words in b]
    assert len(blocks) == 1, (words, len(blocks))
    return blocks[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(session: int) -> list[int]:
    """The processes of a session still running, waited for a few seconds: a server
    stopping (its SIGTERM handled) takes a moment."""
    deadline = time.monotonic() + 10
    while True:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[3]) == session and stat[0] != "Z":  # (the session id, not zombies)
                left.append(int(pid))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def test_the_poll_seen_with_curl_prints_what_web_md_says(tmp_path: Path) -> None:
    """The block as written, but for a database of 30 matches instead of 12,000, a free
    port instead of 8123 and this interpreter: a 200 with the leaderboard, the 304 of the
    same poll with no body, a bot page's 200; and nothing left running."""
    curl = shutil.which("curl")
    assert curl, "this check pastes docs/web.md's curl commands: it needs curl"
    block = _block(WEB_MD, "If-None-Match: $ETAG")
    port = str(_free_port())
    db = str(tmp_path / "big.sqlite")
    script = (
        block.replace("matches=12000", "matches=30")
        .replace("/tmp/big.sqlite", db)
        .replace("8123", port)
        .replace("python -c", f"{shlex.quote(sys.executable)} -c")
        .replace("arena web ", f"{shlex.quote(sys.executable)} -m arena.cli web ")
    )
    assert "8123" not in script and "matches=30" in script, script
    # Into files, not pipes: a server the block left running would hold a pipe open.
    out_file, err_file = tmp_path / "out.txt", tmp_path / "err.txt"
    with out_file.open("w") as out_f, err_file.open("w") as err_f:
        proc = subprocess.Popen(
            ["bash", "-c", script], cwd=ROOT, stdout=out_f, stderr=err_f, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=240)  # (a guard: a server that never listens)
        finally:
            left = _alive(proc.pid)  # the block's own `kill %1` stopped its server
            os.killpg(proc.pid, signal.SIGKILL)  # (what it did not stop, if anything)
    out, err = out_file.read_text(), err_file.read_text()
    assert not left, f"the block left its server running: {left}"
    lines = [x for x in out.splitlines() if not x.startswith("arena web: serving ")]
    assert len(lines) == 3, (out, err)
    assert re.fullmatch(r"200 [1-9]\d* bytes", lines[0]), (out, err)
    assert lines[1] == "304 0 bytes", (out, err)
    assert re.fullmatch(r"200 [1-9]\d* bytes", lines[2]), (out, err)


def test_the_strength_bench_prints_the_table_bots_md_shows_for_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """bots.md's run of the current strength bench, run: the same first line (but its
    seconds), the same heading, the same figures (but the decision times, this machine's)."""
    from arena.bench.strength import main

    block = _block(BOTS_MD, "p99 ms  max ms").splitlines()
    argv = shlex.split(block[0])
    assert argv[:3] == [".venv/bin/python", "-m", "arena.bench.strength"]
    assert main(argv[3:]) == 0
    got = capsys.readouterr().out.splitlines()
    shown = block[1:]
    assert len(got) == len(shown), got

    def seconds_out(line: str) -> str:
        return re.sub(r"\(\d+\.\d s\)$", "(s)", line)

    assert seconds_out(got[0]) == seconds_out(shown[0])
    assert got[1] == shown[1]
    for g, s in zip(got[2:], shown[2:], strict=True):
        assert g.split()[:-3] == s.split()[:-3], (g, s)  # (the last three: times)
        assert len(g.split()) == len(s.split()), (g, s)


def test_a_closed_pipe_ends_arena_leaderboard_as_reliability_md_says(tmp_path: Path) -> None:
    """reliability.md said `arena leaderboard | head -1` exits 1: pasted, it exits 0, the
    small table being in the pipe's buffer before `head` leaves. A reader gone before the
    table is written (the pipe's read end closed first) ends it quietly with exit 1."""
    from arena.web.demo import make_demo_db

    db = tmp_path / "t.sqlite"
    make_demo_db(db)
    arena = [sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(db)]
    piped = subprocess.run(
        ["bash", "-c", f"{shlex.join(arena)} | head -1; echo \"${{PIPESTATUS[0]}}\""],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert piped.stdout.splitlines()[-1] == "0", piped
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        gone = subprocess.run(
            arena, cwd=ROOT, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write_end)
    assert gone.returncode == 1 and gone.stderr == "", gone.stderr
    said = " ".join(RELIABILITY_MD.split())
    assert (
        "A closed pipe (`arena leaderboard | head -1`) ends the command quietly with exit 1 "
        "(click's handling) when the reader left before the table was written; a table that "
        "fits in the pipe's buffer (64 KiB on Linux) is written whole before `head` leaves, "
        "exit 0."
    ) in said
