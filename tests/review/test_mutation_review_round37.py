"""Mutation review of round 37's product changes (``8a9190d..``): the runner's launch
errors and CRLF hint, a bot's ``cwd`` that is a file, non-ASCII hosts, ``COLUMNS=0``,
``--arena`` brackets, ``raise_site``'s site directories, the SDK's capped warnings and the
storage's resume advice. Each test here kills a plausible bug the earlier tests let
through (named in its docstring).

Defects found and fixed:

- ``--arena`` as a gRPC target URI (``dns:///lоcalhost:50051``) holding a look-alike
  passed the check round 37 gave ``HOST:PORT``, and was retried for --retry-for seconds
  as gRPC's "misformatted domain name";

- ``COLUMNS`` (or ``LINES``) holding a digit that is no ASCII digit was still handed to
  rich, which reads any ``str.isdigit()`` value: ``COLUMNS=٠`` (an Arabic-Indic zero) or a
  full-width ``０`` was width 0 and ``arena-bot try`` printed nothing, exit 0, as ``0``
  did before round 37; ``COLUMNS=²`` was a ValueError traceback from rich.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arena.tournament import load_config
from arena.tournament.config import ConfigError
from engine import Action, HiddenGive, PlayerView
from tests.cli.test_bad_input import BOTS, _invoke, _toml

# ------------------------------------------------------------------- launch errors


def _said(argv: list[str], cwd: Path) -> str:
    from tests.review.test_review_round37 import _said as said

    return said(argv, cwd)


def test_a_byte_order_mark_without_a_hashbang_is_said_to_lack_one(tmp_path: Path) -> None:
    """Mutant: the byte-order-mark check taking any file that starts with a BOM (not a BOM
    then ``#!``): a Python script saved with BOM and no ``#!`` line was said to have its
    ``#!`` line after the mark."""
    bot = tmp_path / "bot.py"
    bot.write_bytes(b"\xef\xbb\xbfprint('hi')\n")
    bot.chmod(0o755)
    said = _said(["./bot.py"], tmp_path)
    assert said.startswith("Exec format error: the file has no #! line"), said


def test_a_link_to_a_script_whose_interpreter_is_a_script_is_no_dangling_link(
    tmp_path: Path,
) -> None:
    """Mutant: the dangling-symlink reason given of any launch error of a link (not only
    "No such file or directory"): a link to a script whose ``#!`` interpreter is itself a
    script with no ``#!`` line (the kernel's "Exec format error") was said to link to a
    file "which is not there"."""
    interp = tmp_path / "interp"
    interp.write_text("echo hi\n")
    interp.chmod(0o755)
    real = tmp_path / "real.sh"
    real.write_text(f"#!{interp}\nexit 0\n")
    real.chmod(0o755)
    (tmp_path / "bot.sh").symlink_to("real.sh")
    said = _said(["./bot.sh"], tmp_path)
    assert said.startswith("Exec format error"), said
    assert "symbolic link" not in said, said


def test_the_crlf_hint_reads_the_script_in_the_bots_cwd(tmp_path: Path) -> None:
    """Mutant: the CRLF hint looking for the command's script from the runner's directory
    rather than the bot's ``cwd``: ``command = ["./bot.py"], cwd = "botdir"`` with Windows
    line endings exited 127 through env, with no word of the carriage return."""
    from tests.faults.test_faults_round36 import _config, _running

    botdir = tmp_path / "botdir"
    botdir.mkdir()
    bot = botdir / "bot.py"
    bot.write_bytes(b"#!/usr/bin/env python3\r\nprint('hi')\r\n")
    bot.chmod(0o755)
    bots = {"r1": '"random"', "r2": '"random"',
            "x": '{ command = ["./bot.py"], cwd = "botdir" }'}  # fmt: skip
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    assert "error: bot 'x' exited with code 127 before connecting" in err, err
    assert "its script's #! line ends in a carriage return" in err, err


# ------------------------------------------------------------------------ the config


def test_a_bots_cwd_that_is_a_fifo_is_said_to_be_no_directory(tmp_path: Path) -> None:
    """Mutant: "not a directory" said only of a regular file at the ``cwd`` path: a named
    pipe (or a socket) there was "no such directory", as if nothing were there."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + 'd = { bot = "random", cwd = "pipe" }\n'))
    assert ei.value.key == "bots.d.cwd"
    assert "not a directory" in str(ei.value) and "no such" not in str(ei.value)


def test_a_tls_server_name_whose_first_letter_is_a_look_alike_is_refused(
    tmp_path: Path,
) -> None:
    """Mutant: the server name's first character left unchecked (an off-by-one): "аrena"
    with a Cyrillic 'а' first passed, to fail once the run had started."""
    from tests.support.certs import make_cert

    make_cert(tmp_path)
    text = BOTS + '[tls]\ncert = "arena.pem"\nkey = "arena.key"\nserver_name = "аrena"\n'
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, text))
    assert ei.value.key == "tls.server_name" and "U+0430" in str(ei.value)


# ------------------------------------------------------------------------ addresses


def test_a_character_without_a_name_is_named_by_its_code_point_alone() -> None:
    """Mutant: the character's Unicode name joined even when it has none, leaving
    "(U+E000 ; ...". (The callers refuse such a character, unprintable, before; the
    function is public and says so alike.)"""
    from arena.addresses import non_ascii_problem

    said = non_ascii_problem("a\ue000b")
    assert said is not None and "(U+E000; an internationalised name" in said, said
    said = non_ascii_problem("\u0430b")
    assert said is not None and "(U+0430 CYRILLIC SMALL LETTER A; an" in said, said


# ------------------------------------------------------------------------ COLUMNS / LINES


@pytest.mark.parametrize("name", ["COLUMNS", "LINES"])
@pytest.mark.parametrize(
    ("value", "dropped"),
    [("0", True), ("00", True), (" 0 ", True), ("1", False), ("60", False), ("wide", False),
     ("\u0660", True), ("\uff10", True), ("\u00b2", True)],
)  # fmt: skip
def test_only_a_size_rich_would_misread_is_forgotten(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, dropped: bool
) -> None:
    """Mutants: a size of 1 forgotten too (a limit changed), ``LINES`` left as it was.
    Defect (fixed): a digit that is no ASCII digit was kept, and rich, which takes any
    ``str.isdigit()`` value, read ``\\u0660`` (Arabic-Indic zero) and ``\\uff10``
    (full-width zero) as 0 and ``\\u00b2`` ('²') as a ValueError traceback."""
    from arena.cli.options import _drop_zero_terminal_size

    monkeypatch.setenv(name, value)
    _drop_zero_terminal_size()
    assert (name not in os.environ) == dropped, os.environ.get(name)


@pytest.mark.parametrize("value", ["\u0660", "\uff10", "\u00b2"])
def test_columns_that_rich_misreads_does_not_silence_the_results(value: str) -> None:
    """Defect: ``COLUMNS`` holding a zero that is no ASCII digit (an Arabic-Indic or a
    full-width one) printed nothing of ``arena-bot try``'s results, exit 0; a '²' ended in
    rich's ValueError traceback. Such a value is forgotten as 0 is."""
    from sdk.cli import main as arena_bot

    r = _invoke(arena_bot, ["try", "random", "-n", "1", "--seed", "1", "--max-deals", "1"],
                env={"COLUMNS": value})  # fmt: skip
    assert r.exit_code == 0 and r.exception is None, (r.output, r.exception)
    assert "slowest decision" in r.output, r.output


# ------------------------------------------------------------------- the SDK's warnings


def test_newer_kinds_of_events_and_requests_share_one_cap_apart_from_repeats(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutants: an action event of a newer kind, or a request offering such actions,
    counted with the repeats rather than with each other. Three such events and three
    such requests are six warnings of one kind: five said, the last saying the rest are
    left out; two repeated events after them are still said, their count their own."""

    from arena.v1 import arena_pb2 as pb
    from sdk import Bot
    from tests.sdk.test_hostile_arena import (
        WELCOME,
        Out,
        Stream,
        _game,
        ended,
        play,
        request,
        started,
    )

    newer_kind = b"\x42\x00"  # (a field of a number no kind has: a newer protocol's)

    class First(Bot):
        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

        def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
            pass  # (events are looked at only for a bot with the hook)

    g = _game()

    def newer(seq: int) -> pb.Event:
        ev = pb.Event(match_id="m1", seq=seq)
        ev.action.seat = 0
        ev.action.action.MergeFromString(newer_kind)
        return ev

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[newer(1), newer(2), newer(3)])
        for rid in ("1", "2", "3"):
            req = request("m1", g, rid)
            req.decision_request.view.legal_actions.add().MergeFromString(newer_kind)
            yield req
            await s.decision()
        yield pb.ServerMessage(events=[newer(2), newer(3)])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(First, script, matches=1)
    assert summary.matches == 1
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    newer_said = [m for m in said if "a newer protocol's" in m]
    assert len(newer_said) == 5, newer_said
    assert newer_said[-1].endswith(
        "(further actions of a newer kind in this match are left out unsaid)"
    ), newer_said
    assert sum("decision request" in m for m in newer_said) == 2, newer_said
    repeats = [m for m in said if "repeats an earlier one" in m]
    assert len(repeats) == 2, said
    assert not any("further repeats" in m for m in repeats), repeats


def test_deal_ends_out_of_order_without_end_are_said_a_few_times_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant: a ``deal_ended`` event out of order (of a deal before the one the bot was
    given a view of, here a resumed match's third deal) said in a line per event, not
    capped with the repeats: twenty such events are five warnings, the last saying the
    rest are ignored unsaid."""
    from arena.v1 import arena_pb2 as pb
    from sdk import Bot
    from tests.sdk.test_hostile_arena import (
        WELCOME,
        Out,
        Stream,
        _game,
        deal_ended,
        ended,
        play,
        started,
    )

    class Quiet(Bot):
        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        ms = started("m1", g)
        ms.match_started.view.deal_number = 2
        yield ms
        ev = deal_ended("m1")
        ev.deal_ended.deal_number = 0
        yield pb.ServerMessage(events=[ev] * 20)
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(Quiet, script, matches=1)
    assert summary.matches == 1
    said = [r.getMessage() for r in caplog.records if "out of order, ignored" in r.getMessage()]
    assert len(said) == 5, said
    assert said[0].startswith(
        "match m1: deal_ended event for deal 1, after the bot was given a view of deal 3"
    ), said
    assert said[-1].endswith("(further repeats of this match are ignored unsaid)"), said


def test_a_bots_cwd_too_long_to_look_at_is_no_such_directory(tmp_path: Path) -> None:
    """Mutant: whether something is at the ``cwd`` path asked without the guard the
    directory check has: a name longer than the system takes raised "File name too long"
    out of the config's checks, where it is no such directory."""
    long = "d" * 300
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + f'd = {{ bot = "random", cwd = "{long}" }}\n'))
    assert ei.value.key == "bots.d.cwd" and "no such directory" in str(ei.value)


# ------------------------------------------------------------------------ storage


def test_a_readers_full_disk_advises_running_the_command_again(tmp_path: Path) -> None:
    """Mutant: the read-only opening setting an empty advice (rather than the runner's):
    a reader's "disk is full" (its -shm index growing on a full tmpfs) ended "free some
    space and", the sentence cut."""
    import sqlite3

    from arena.storage import Storage, StorageFullError

    db = tmp_path / "t.sqlite"
    Storage(db).close()
    st = Storage.open_readonly(db)
    try:
        with pytest.raises(StorageFullError) as ei, st._guard("reading the leaderboard"):
            raise sqlite3.OperationalError("database or disk is full")
    finally:
        st.close()
    assert str(ei.value).endswith("free some space and run the same command again to resume"), str(
        ei.value
    )


# ------------------------------------------------------------------------ --arena URIs


@pytest.mark.parametrize(
    "value", ["dns:///lоcalhost:50051", "dns://8.8.8.8/аrena.example:1", "ipv4:///１２７.0.0.1:1"]
)
def test_a_look_alike_in_a_grpc_target_uri_is_refused_not_retried(value: str) -> None:
    """Defect (found beside the mutants of the HOST:PORT check): ``--arena
    dns:///lоcalhost:50051``, a Cyrillic 'о' in a gRPC target URI, passed the check that
    round 37 gave HOST:PORT, and the bot retried gRPC's "misformatted domain name" for
    --retry-for seconds (ten minutes by default). A usage error naming the character."""
    from sdk.cli import _address_problem
    from sdk.cli import main as arena_bot

    bad = next(c for c in value if not c.isascii())
    said = _address_problem(value)
    assert said is not None and f"U+{ord(bad):04X}" in said, said
    r = _invoke(arena_bot, ["run", "random", "--arena", value, "--token", "token-aaaa-1",
                            "--retry-for", "1"])  # fmt: skip
    assert r.exit_code == 2 and "--arena" in r.output and f"U+{ord(bad):04X}" in r.output


@pytest.mark.parametrize(
    "value", ["dns:///localhost:50051", "dns://8.8.8.8/localhost:1", "unix:///tmp/сокет.sock",
              "unix-abstract:сокет"]
)  # fmt: skip
def test_grpc_target_uris_in_ascii_or_of_sockets_are_still_taken(value: str) -> None:
    """Pinned: the URI forms gRPC takes still pass; a Unix socket's path may be any text."""
    from sdk.cli import _address_problem

    assert _address_problem(value) is None
