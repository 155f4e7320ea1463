"""What an organiser of `arena serve` meets (round 50): a tokens file whose `[bots]` table
is emptied removes every bot (it was refused, every bot kept), the "no match starts"
warning is said once per change of how many members the file lists (it was said at every
edit), and a serve waiting for bots says whom it waits for without -v (it said nothing
until a match started)."""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli.serve import _say_waiting
from arena.referee import Lobby, Referee
from engine import load_ruleset
from tests.cli.test_tokens_reload_round49 import BOTS, _settle, _watch, _who, _write
from tests.support.harness import attach_in_process
from tests.support.spawn import readline_within


def test_an_emptied_bots_table_removes_every_bot_and_a_listed_one_comes_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, watch = _watch(tmp_path, BOTS)
    _write(path, "[bots]\n")
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert referee.active_bots() == []
    assert {_who(referee, t) for t in BOTS.values()} == {
        f"token revoked: bot {n!r} was removed from the arena's tokens file" for n in BOTS
    }
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert "lists no bot: no match starts until there are 3" in caplog.text
    _write(path, {"ann": "ann-token-1"})  # one let in again
    _settle(watch)
    assert referee.active_bots() == ["ann"] and _who(referee, "ann-token-1") == "ann"


def test_too_few_members_is_said_once_per_change_not_at_every_edit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _, watch = _watch(tmp_path, BOTS)
    two = {"ann": "ann-token-1", "bob": "bob-token-1"}
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _write(path, two)
        _settle(watch)
        _write(path, {**two, "bob": "bob-token-2"})  # (another edit: still two)
        _settle(watch)
        _write(path, {**two, "bob": "bob-token-3"})
        _settle(watch)
    short = [r.getMessage() for r in caplog.records if "no match starts" in r.getMessage()]
    assert len(short) == 1 and "lists bots of 2 member(s)" in short[0], short
    caplog.clear()
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _write(path, BOTS)  # three again
        _settle(watch)
        _write(path, {**BOTS, "dan": "dan-token-1"})
        _settle(watch)
        _write(path, {"ann": "ann-token-1"})  # short again, of another count: said
        _settle(watch)
    said = [r.getMessage() for r in caplog.records]
    assert [m for m in said if "again: matches may start" in m] == [
        f"tokens file {path} lists bots of 3 members again: matches may start"
    ]
    assert [m for m in said if "no match starts" in m] == [
        f"tokens file {path} lists bots of 1 member(s): no match starts until there are 3 "
        "(the running ones go on)"
    ]


def _waiting_lines(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.getMessage().startswith("waiting for bots")]


def test_a_serve_waiting_for_bots_says_who_is_connected_and_who_is_awaited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario(every: float) -> list[str]:
        referee = Referee()
        for n in ("bob", "cid"):
            referee.add_bot(n, f"{n}-token-1")
        attach_in_process(referee, ("ann",), lambda *_: None)
        lobby = Lobby(referee, load_ruleset("classic"))
        said = asyncio.create_task(_say_waiting(lobby, every, look=0.01))

        async def lines(n: int) -> None:
            for _ in range(500):  # (a generous bound: a few looks are enough)
                if len(_waiting_lines(caplog.records)) >= n:
                    return
                await asyncio.sleep(0.01)

        await lines(1)
        await asyncio.sleep(0.1)  # (many looks: the same state is not said again)
        attach_in_process(referee, ("dan",), lambda *_: None)
        referee.remove_bot("cid", "gone")
        if every == 0:
            await lines(2)
        await asyncio.sleep(0.3)  # (some 30 looks: no other line)
        said.cancel()
        return _waiting_lines(caplog.records)

    with caplog.at_level(logging.WARNING, "arena.referee"):
        first = asyncio.run(scenario(every=0))
    assert first == [
        "waiting for bots (a match seats 3): 1 connected: ann; awaited: bob, cid",
        "waiting for bots (a match seats 3): 2 connected: ann, dan; awaited: bob",
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING, "arena.referee"):
        # At most every `every` s: the change is not said within the hour.
        assert asyncio.run(scenario(every=3600)) == first[:1]


def test_arena_serve_says_whom_it_waits_for_without_verbose(tmp_path: Path) -> None:
    tokens = tmp_path / "bots.toml"
    tokens.write_text("".join(["[bots]\n", *(f'{n} = "{n}-token-0123456789"\n' for n in BOTS)]))
    tokens.chmod(0o600)
    child: subprocess.Popen[Any] = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--tokens", str(tokens), "--port", "0",
         "--record-dir", str(tmp_path / "rec")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stderr is not None
        lines = []
        while (line := readline_within(child.stderr, 60)) is not None and line:
            lines.append(line)
            if "waiting for bots" in line:
                break
        assert lines and lines[-1].rstrip().endswith(
            "waiting for bots (a match seats 3): 0 connected; awaited: ann, bob, cid"
        ), lines
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
