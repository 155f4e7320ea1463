"""Round 34: the passages of docs/ changed on 2026-12-04, README.md's table and the first
half of docs/writing-a-bot.md, pasted as a reader would, command by command.

Found and fixed: ``python -m arena.bench.strength`` gave its bots no match id, so pimc's
warning of a search cut by the wall clock said "pimc: match -: ..." once per match, six
identical lines for six matches (bots.md said "once"); the matches are named now
(``strength-SEED-BOTS``) and bots.md says the warning is once a match. And said in
writing-a-bot.md: in the `.venv` of `make venv` (an editable install) mypy finds no `sdk`
from another folder. Pinned, as checked and found right: the guide's first `arena-bot try`
table, the names `try` suggests for a near miss, and the messages and numbers the changed
passages quote (the keepalive back-off, the message limits, the stall meter, the stop of
what a launched bot left running, counting's fallback budget inside pimc's, the expired
certificate) against the code.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _joined(text: str) -> str:
    return " ".join(text.split())


# --- the fix: arena.bench.strength names its matches ---------------------------------


def test_strength_names_each_match_for_its_bots_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: ``play_match`` never set the bots' ``match_id``, so pimc's warning of a
    search cut by the clock said "pimc: match -: ..." in every match, none told apart."""
    from arena.bench import strength
    from engine import load_ruleset

    made: list[object] = []
    make = strength._make

    def recording(name: str, seed: int, budget: float | None) -> object:
        bot = make(name, seed, budget)
        made.append(bot)
        return bot

    monkeypatch.setattr(strength, "_make", recording)
    rules = dataclasses.replace(load_ruleset("classic"), max_deals=1)
    strength.play_match(rules, 7, ["random", "heuristic", "counting"])
    assert [getattr(b, "match_id", None) for b in made] == [
        "strength-7-random-heuristic-counting"
    ] * 3
    assert "`strength-SEED-BOTS` in `arena.bench.strength`" in _joined(_text("bots.md"))


# --- README's table and writing-a-bot.md, sections 1 to 3 ------------------------------


def _block_after(doc: str, marker: str, lang: str) -> str:
    for m in FENCE.finditer(doc, doc.index(marker)):
        if m.group(1) == lang:
            return m.group(2)
    raise AssertionError(f"no {lang} block after {marker!r}")


def test_the_guides_first_try_prints_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena-bot try mybot.py --vs random,heuristic -n 20` with the guide's mybot.py gives
    the guide's rows (README's `lowest.py:Lowest`, the same bot, the same command)."""
    from sdk.cli import main

    doc = _text("writing-a-bot.md")
    (tmp_path / "mybot.py").write_text(_block_after(doc, "`mybot.py`:", "python"))
    after = doc[doc.index("arena-bot try mybot.py --vs random,heuristic -n 20") :]
    shown = after[after.index("```\n┃ bot") : after.index("slowest decision")]
    rows = [line for line in shown.splitlines() if line.startswith("│")]
    assert len(rows) == 3
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`.venv/bin/arena-bot try lowest.py:Lowest --vs random,heuristic -n 20`" in readme
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["try", "mybot.py", "--vs", "random,heuristic", "-n", "20"])
    assert r.exit_code == 0, r.output
    got = [line for line in r.output.splitlines() if line.startswith("│")]
    assert got == rows, r.output
    assert "slowest decision: lowest " in r.output


@pytest.mark.parametrize(
    ("name", "meant"),
    [("mybot.Lowest", "mybot.py:Lowest"), ("MyBot.py", "mybot.py"), ("heurstic", "heuristic")],
)
def test_the_near_misses_the_guide_names_are_answered_with_the_name_meant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, meant: str
) -> None:
    from sdk.cli import main

    (tmp_path / "mybot.py").write_text(
        "from sdk import Bot\n\n\nclass Lowest(Bot):\n    name = 'lowest'\n"
    )
    doc = _joined(_text("writing-a-bot.md"))
    assert (
        "(`mybot.Lowest`: \"did you mean 'mybot.py:Lowest'?\"; `MyBot.py`, `heurstic` likewise)"
        in doc
    )
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["try", name, "-n", "1"])
    assert r.exit_code == 2
    assert f"(did you mean '{meant}'?)" in r.output


# --- what the changed passages quote, against the code ---------------------------------


def test_the_keepalive_back_off_is_protocol_mds() -> None:
    """protocol.md: the SDK pings every 10 s, half as often after each `too_many_pings`
    GOAWAY, up to every 320 s (10 s doubled five times), with a warning."""
    from sdk import client

    doc = _joined(_text("protocol.md"))
    assert "or ping every 10 s as the SDK does" in doc
    assert "the SDK pings half as often after each such GOAWAY, up to every 320 s" in doc
    assert client._KEEPALIVE_MS == 10_000
    assert client._MAX_KEEPALIVE_MS == 320_000 == client._KEEPALIVE_MS * 2**5


def test_the_message_limits_protocol_md_quotes_are_the_sdks_words() -> None:
    import grpc

    from arena.referee import server
    from sdk import client

    doc = _joined(_text("protocol.md"))
    assert client._MAX_RECEIVE_BYTES == 64 << 20 == 67108864
    arena_limit = dict(server._OPTIONS)["grpc.max_receive_message_length"]
    assert arena_limit == 1048576
    said = client._why_final(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "Received message larger than max (72000288 vs. 67108864)",
        "HOST:PORT",
    )
    quoted = (
        "the arena at HOST:PORT sent a message of N bytes, over the 67108864 bytes this bot reads"
    )
    assert quoted in doc
    assert said.startswith(quoted.replace("N", "72000288"))
    said = client._why_final(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "SERVER: Received message larger than max (2000000 vs. 1048576)",
        "HOST:PORT",
    )
    quoted = (
        "the arena at HOST:PORT refused a message of N bytes from this bot, over the 1048576"
        " bytes it reads"
    )
    assert quoted in doc
    assert said.startswith(quoted.replace("N", "2000000"))


def test_an_expired_certificate_is_said_as_writing_a_bot_md_quotes() -> None:
    from sdk import client

    doc = _joined(_text("writing-a-bot.md"))
    assert '("... has expired: its operator must renew it")' in doc
    said = client._tls_cause("ssl: certificate has expired", "h:1", None)
    assert "has expired: its operator must renew it" in said


def test_the_stall_meters_numbers_are_referee_mds() -> None:
    from arena.referee.lag import LoopLag

    doc = _joined(_text("referee.md"))
    assert (
        "`LoopLag` in lag.py ticks every 10 ms while a decision is pending, and what a tick"
        " runs late by over 5 ms" in doc
    )
    assert (LoopLag.PERIOD, LoopLag.TOLERANCE) == (0.01, 0.005)
    assert "`lag.py` (the loop-stall meter)" in doc
    assert (ROOT / "arena" / "referee" / "lag.py").is_file()


def test_counting_fallback_budget_numbers_are_bots_mds() -> None:
    """bots.md: counting's own budget was 16,000 nodes, or after a cut by the clock up to
    0.4 s more; pimc probes in 0.12 s slices and plays within 0.9 s."""
    from bots._dds import NODES_PER_SECOND
    from bots.counting import CountingBot

    doc = _joined(_text("bots.md"))
    assert (
        "a fresh budget of its own, 16,000 nodes or, after a cut by the clock, up to 0.4 s more"
        in doc
    )
    assert round(CountingBot.endgame_budget * NODES_PER_SECOND) == 16_000
    assert CountingBot.endgame_budget * CountingBot.safety == pytest.approx(0.4)
    assert "one zero-window probe at a time with a 0.12 s slice" in doc
    assert "budget.within(0.12)" in (ROOT / "bots" / "pimc.py").read_text(encoding="utf-8")


def test_a_launched_bots_stop_of_what_it_left_says_what_the_guide_quotes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """writing-a-bot.md quotes "exiting: stopping 2 processes the bot left running (4242,
    4243)", SIGTERM then SIGKILL a second later (tournament.md too)."""
    import signal

    from sdk import cli

    me = os.getpid()
    sent: list[tuple[int, int]] = []
    alive = {4242, 4243}

    def kill(pid: int, sig: int) -> None:
        sent.append((pid, sig))
        if sig == signal.SIGKILL:
            alive.discard(pid)

    monkeypatch.setattr(cli, "_launcher", os.getppid())
    monkeypatch.setattr(cli, "_descendants", lambda root: {me, 4242, 4243})
    monkeypatch.setattr(cli, "_ending_by_themselves", lambda: set())
    monkeypatch.setattr(cli, "_running", lambda pid: pid in alive)
    monkeypatch.setattr(cli, "_LEFT_STOP_S", 0.05)  # (1.0 in the code: checked below)
    monkeypatch.setattr(cli.os, "kill", kill)
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        cli._stop_what_the_bot_left()
    quoted = "exiting: stopping 2 processes the bot left running (4242, 4243)"
    assert quoted in _joined(_text("writing-a-bot.md"))
    assert [r.getMessage() for r in caplog.records] == [quoted]
    term, kill9 = signal.SIGTERM, signal.SIGKILL
    assert sent == [(4242, term), (4243, term), (4242, kill9), (4243, kill9)]
    monkeypatch.undo()
    assert cli._LEFT_STOP_S == 1.0
    assert "SIGTERM, then SIGKILL a second later" in _joined(_text("tournament.md"))
