"""Bad input, round 33: ruleset files and ``--set`` overrides of their options, and the
bot side's command lines (``arena-bot run``/``try``/``human``, ``arena serve``'s bot and
token options). Each case: one line that names the bad thing, no traceback, exit code 2,
and nothing written (no records, no database, no output folder).

In-process through click's CliRunner where nothing would connect or serve (what would is
replaced by a stub that records its call); one subprocess for a token from the
environment, which ``arena-bot run`` checks before it connects.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from arena.protocol import token_problem
from arena.tournament.config import ConfigError, load_config
from bots.random_bot import RandomBot
from engine import Ruleset, RulesetError, load_ruleset
from sdk.cli import main as arena_bot
from sdk.client import ArenaAuthError, BotRunner, _why_ended
from sdk.client import run as run_bot
from tests.cli.test_bad_input_rulesets import TOKENS
from tests.cli.test_bad_input_rulesets import _commands as ruleset_commands

ROOT = Path(__file__).resolve().parents[2]


def _one_line(r: Result) -> str:
    """The output of a refused command, checked to be a usage error (exit code 2) with no
    traceback; its words joined on one line (click wraps nothing, but a rich console may)."""
    text = " ".join(r.output.split())
    assert r.exit_code == 2, text
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in text, text
    return text


# --- ruleset files: every command says the same line ------------------------------------


def _commands(tmp: Path, ruleset: Path) -> dict[str, list[str]]:
    """Each command that reads a ruleset file, given ``ruleset``: those of
    tests/cli/test_bad_input_rulesets.py, and `arena-bot human`."""
    return {**ruleset_commands(tmp, ruleset),
            "arena-bot human": ["human", "--ruleset", str(ruleset)]}  # fmt: skip


def _same_line_from_every_command(tmp: Path, ruleset: Path, words: str) -> None:
    for command, args in _commands(tmp, ruleset).items():
        main = arena_bot if command.startswith("arena-bot") else arena
        text = _one_line(CliRunner().invoke(main, args, input=""))
        assert f"{ruleset}: {words}" in text, (command, text)
        assert text.count(str(ruleset)) == 1, (command, text)
    assert not (tmp / "records").exists() and not (tmp / "out").exists()
    assert not (tmp / "t.sqlite").exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[ruleset]\npreset = "classic"\nmust_beat = true\n',
         "ruleset: a ruleset file sets its options at its top level, not in a [ruleset] "
         "table (as a tournament config does): take them out of the table"),
        ('name = "t"\n[bots]\na = "random"\n',
         "bots: this is a tournament config or a tokens file (it has a [bots] table), not "
         'a ruleset file: a ruleset file sets options such as preset = "classic" at its '
         "top level"),
        ('preset = "classic"\nmust_beat = "true"\n',
         "must_beat: expected true or false, got 'true' (write true or false, without "
         "quotes)"),
        ('preset = "classic"\nmust_beat = "yes"\n',
         "must_beat: expected true or false, got 'yes' (write true or false, without quotes)"),
        ('preset = "classic"\nbarrel = 0\n',
         "barrel: expected true or false, got 0 (write true or false, not a number)"),
        ('preset = "classic"\ntarget = "1000"\n',
         "target: expected an integer, got '1000' (a number is written without quotes)"),
        ('preset = "classic"\ntarget = 1e3\n',
         "target: expected an integer, got 1000.0 (an integer is written without a decimal "
         "point or exponent: 1000)"),
        ('preset = "classic"\n[must_beat]\n', "must_beat: expected true or false, got {}"),
        ('preset = "classic"\nextends = "house.toml"\n',
         'extends: unknown option (a ruleset builds on a preset only: preset = "classic"); '
         "known options: name, players,"),
    ],
    ids=["ruleset-table", "tournament-config", "bool-quoted", "bool-yes", "bool-number",
         "int-quoted", "int-exponent", "empty-table", "extends"],
)  # fmt: skip
def test_a_ruleset_file_mistake_is_named_with_what_to_write(
    tmp_path: Path, text: str, words: str
) -> None:
    """Defects (organiser audit, round 33), each said by every command that reads a ruleset
    file in the same one line: a ruleset written as a tournament config's ``[ruleset]``
    table, or a tournament config (or tokens file) given as a ruleset, was "ruleset:
    unknown option" / "db: unknown option" and the list of all 24 options, which hid the
    mistake; ``must_beat = "true"``, ``barrel = 0``, ``target = "1000"`` and
    ``target = 1e3`` said the value was wrong but not that only its form was (quotes, a
    number for a boolean, an exponent); an empty table was quoted ``{  }``; ``extends`` (as
    other tools' files build on another) got no word that a ruleset builds on a preset."""
    ruleset = tmp_path / "house.toml"
    ruleset.write_text(text, encoding="utf-8")
    _same_line_from_every_command(tmp_path, ruleset, words)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'\xef\xbb\xbfpreset = "classic"\n', "not valid TOML: the file starts with a byte "
         "order mark (BOM, as some Windows editors write): save it as UTF-8 without a BOM"),
        ('preset = "classic"\n'.encode("utf-16"),
         "not valid TOML: not UTF-8 text but UTF-16"),
        (b'preset = "classic"\nname = "caf\xe9"\n', "not valid TOML: not UTF-8 text"),
        (b'preset = "classic"\nplayers = 5\n', "players: must be 3 or 4, got 5"),
        (b'preset = "classic"\nMust_Beat = true\n',
         "Must_Beat: unknown option (did you mean 'must_beat'?)"),
        (b'preset = "classic"\nmust-beat = true\n',
         "must-beat: unknown option (did you mean 'must_beat'?)"),
        (b'preset = "classic"\nconcede = "penalty "\n',
         "concede: must be one of 'free', 'penalty', 'off', got 'penalty ' (did you mean "
         "'penalty'?)"),
        (b'preset = "classic"\ntarget = 99999999999999999999\n',
         "target: must be at most 1000000, got 99999999999999999999"),
        (b'preset = "classic"\nbid_step = 200\n',
         "bid_step: must be a multiple of 5 from 5 to 120, got 200"),
        (b'preset = "1001"\nbarrel = true\nbarrel_at = 1001\n',
         "barrel_at: must be below target 1001 when barrel = true, got 1001"),
    ],
    ids=["bom", "utf16", "latin1", "players", "case", "dash", "space", "huge-int",
         "step-vs-opening", "barrel-vs-target"],
)  # fmt: skip
def test_checked_ruleset_file_mistakes_stay_one_line_from_every_command(
    tmp_path: Path, data: bytes, words: str
) -> None:
    """Checked and found fine (pinned): a byte order mark, UTF-16, Latin-1 bytes, a table
    size the game has not, a key in another case or with a dash, a choice with a trailing
    space, an integer past the protocol's range, options that contradict each other."""
    ruleset = tmp_path / "house.toml"
    ruleset.write_bytes(data)
    _same_line_from_every_command(tmp_path, ruleset, words)


def test_a_huge_ruleset_file_is_refused_unread(tmp_path: Path) -> None:
    """Checked and found fine (pinned): a file past 16 MiB (sparse: nothing is written) is
    refused by its size, naming it, before it is read."""
    ruleset = tmp_path / "house.toml"
    with open(ruleset, "wb") as fh:
        fh.truncate(64 << 20)
    with pytest.raises(RulesetError) as e:
        load_ruleset(ruleset)
    assert str(e.value) == (
        f"{ruleset}: too large for a TOML file here: 67,108,864 bytes (at most 16,777,216)"
    )
    text = _one_line(CliRunner().invoke(arena, ["rules", str(ruleset)]))
    assert "too large for a TOML file here" in text


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ('ruleset.must_beat="true"', "ruleset.must_beat: expected true or false, got 'true' "
         "(write true or false, without quotes) (from --set ruleset.must_beat=\"true\", not "
         "from the file)"),
        ("ruleset.barrel=1", "ruleset.barrel: expected true or false, got 1 (write true or "
         "false, not a number)"),
        ('ruleset.target="1000"', "ruleset.target: expected an integer, got '1000' (a number "
         "is written without quotes)"),
        ('ruleset.extends="classic"', "ruleset.extends: unknown option (a ruleset builds on a "
         'preset only: preset = "classic")'),
        ("ruleset.must_bet=true", "ruleset.must_bet: unknown option (did you mean "
         "'must_beat'?)"),
        ("ruleset.players=4", "bots: ruleset 'classic+custom' seats 4 players: at least 4 "
         "bots are needed, got 3"),
    ],
)  # fmt: skip
def test_a_set_override_of_a_ruleset_option_says_the_same(
    tmp_path: Path, item: str, words: str
) -> None:
    """``--set ruleset.KEY=VALUE``: the same words as a ruleset file (the hints above are
    the engine's, which a tournament's ruleset table goes through), and a table size that
    the bots cannot fill is named."""
    config = tmp_path / "t.toml"
    config.write_text(f'name = "t"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path / "out"}"\n'
                      '[ruleset]\npreset = "classic"\n[bots]\na = "random"\nb = "random"\n'
                      'c = "random"\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as e:
        load_config(config, [item])
    assert words in str(e.value)
    text = _one_line(CliRunner().invoke(arena, ["tournament", "--config", str(config),
                                                "--set", item]))  # fmt: skip
    assert words in text
    assert not (tmp_path / "t.sqlite").exists() and not (tmp_path / "out").exists()


# --- arena-bot run: addresses --------------------------------------------------------------


@pytest.fixture
def run_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``arena-bot run`` with its client replaced: the address of each call, no connection."""
    import sdk.cli
    import sdk.client

    calls: list[str] = []

    def no_connection(bot: Any, arena: str = "", token: str = "", **kw: Any) -> Any:
        calls.append(arena)
        return sdk.client.RunSummary(reason="stub")

    monkeypatch.setattr(sdk.client, "run", no_connection)
    monkeypatch.setattr(sdk.cli, "_setup_logging", lambda level: None)
    monkeypatch.setattr(sdk.cli, "_die_with_launcher", lambda: None)
    for var in ("ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_PARENT_PID"):
        monkeypatch.delenv(var, raising=False)
    return calls


def _run(*args: str, env: dict[str, str] | None = None) -> Result:
    """``arena-bot run`` of the bot ``random`` (or ``human`` as the first argument)."""
    bot, args = (args[0], args[1:]) if args[:1] == ("human",) else ("random", args)
    return CliRunner().invoke(arena_bot, ["run", bot, "--token", "token-1234", *args], env=env)


def test_a_unix_socket_address_is_taken_as_grpc_takes_it(run_calls: list[str]) -> None:
    """Defect: ``--arena unix:/run/arena.sock`` (gRPC's form for a Unix socket, like
    ``unix:///run/arena.sock``, which was let through) was refused as "the port must be
    a number from 1 to 65535". It is passed on; ``unix:`` alone names no socket."""
    accepted = ["unix:/run/arena.sock", "unix:arena.sock", "unix-abstract:arena",
                "unix:///run/arena.sock", "[::1]:50051", "localhost:1"]  # fmt: skip
    for address in accepted:
        r = _run("--arena", address)
        assert r.exit_code == 0, (address, r.output)
    assert run_calls == accepted
    text = _one_line(_run("--arena", "unix:"))
    assert "Invalid value for '--arena': unix: names no socket, got 'unix:'" in text
    assert run_calls == accepted


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("::1:50051", "an IPv6 address goes in brackets before a port: [::1]:50051, got "
         "'::1:50051'"),
        ("fe80::1%eth0:8080", "[fe80::1%eth0]:8080"),
        ("::1", "no port: expected [IPv6]:PORT, as [::1]:50051, got '::1'"),
        ("[::1]", "expected HOST:PORT (or [IPv6]:PORT), got '[::1]'"),
        ("localhost:0", "the port must be a number from 1 to 65535, got 'localhost:0'"),
        ("localhost:65536", "the port must be a number from 1 to 65535"),
        ("localhost:-1", "the port must be a number from 1 to 65535"),
        ("localhost:", "the port must be a number from 1 to 65535"),
        (":50051", "expected HOST:PORT (or [IPv6]:PORT), got ':50051'"),
        ("", "expected HOST:PORT (or [IPv6]:PORT), got ''"),
        ("http://arena:50051", "is a web address: give the arena as HOST:PORT, 'arena:50051'"),
        ("arena :50051", "an address has no spaces or control characters"),
    ],
)  # fmt: skip
def test_a_malformed_address_is_refused_before_connecting(
    run_calls: list[str], address: str, words: str
) -> None:
    """Defect: an IPv6 address without brackets (``::1:50051``, or ``::1`` with no port)
    was "expected HOST:PORT (or [IPv6]:PORT)": now the address to write is given. The
    rest (ports 0, 65536, negative, none; no host; a web address; a space) were checked
    and found fine (pinned). Nothing connects, and ARENA_ADDRESS is not blamed."""
    text = _one_line(_run("--arena", address))
    assert "Invalid value for '--arena': " in text and words in text, text
    assert "ARENA_ADDRESS" not in text
    assert run_calls == []


def test_a_junk_arena_address_in_the_environment_is_named_as_such(run_calls: list[str]) -> None:
    """Defect: ``ARENA_ADDRESS=junk arena-bot run ...`` said "Invalid value for '--arena'",
    an option the user never typed. The message says the value came from ARENA_ADDRESS
    (a bad --arena given as well wins, as click reads the option first)."""
    text = _one_line(_run(env={"ARENA_ADDRESS": "junk"}))
    assert ("Invalid value for '--arena': expected HOST:PORT (or [IPv6]:PORT), got 'junk' "
            "(from the environment variable ARENA_ADDRESS)") in text  # fmt: skip
    text = _one_line(_run("--arena", "junk", env={"ARENA_ADDRESS": "localhost:1"}))
    assert "got 'junk'" in text and "ARENA_ADDRESS" not in text
    assert run_calls == []
    assert _run(env={"ARENA_ADDRESS": "[::1]:7"}).exit_code == 0
    assert run_calls == ["[::1]:7"]


def test_a_host_name_not_found_is_said_plainly_and_asked_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a host name that does not resolve, in gRPC's present words ("errors
    resolving h:1: [field:hostname lookup error:address lookup failed for h:1: Domain name
    not found]"), was said "domain name not found]" (gRPC's bracket kept), and the first
    warning asked "is an arena serving at h.invalid:1?", where nothing could: it asks
    whether the host name is right."""
    details = ("errors resolving h.invalid:1: [field:hostname lookup error:address lookup "
               "failed for h.invalid:1: Domain name not found]")  # fmt: skip
    assert _why_ended(grpc.StatusCode.UNAVAILABLE, details, "h.invalid:1") == (
        "cannot connect to the arena at h.invalid:1: domain name not found"
    )
    runner = BotRunner(RandomBot, "h.invalid:1", "token-1234", initial_backoff=0.001)
    tried: list[int] = []

    async def session() -> bool:
        if len(tried) == 3:
            return False
        tried.append(1)
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details
        )

    runner._session = session  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    asked = [m for m in caplog.messages if "it is tried again" in m]
    assert len(asked) == 1, caplog.messages
    assert asked[0].startswith(
        "cannot connect to the arena at h.invalid:1: domain name not found (is the host name "
        "in h.invalid:1 right? it is tried again for up to 600 s (--retry-for)); reconnecting"
    ), asked
    assert "]" not in caplog.text and "is an arena serving" not in caplog.text


# --- tokens: the secret is never written out ------------------------------------------------


SECRET = "s3cret-Token-of-mine"


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (SECRET + "\n", "a newline at character 21 of 21 (a line end: was it read from a file?)"),
        (SECRET + "\r\n", "a carriage return at character 21 of 22 (a line end"),
        (" " + SECRET, "a space at character 1 of 21"),
        (SECRET[:6] + "\t" + SECRET[6:], "a tab at character 7 of 21"),
        (SECRET + "ø", "a non-ASCII character (U+00F8) at character 21 of 21"),
        (SECRET + "\x1b[31m", "a control character (U+001B) at character 21 of 25"),
    ],
)  # fmt: skip
def test_a_bad_token_is_named_by_its_fault_not_quoted(token: str, words: str) -> None:
    """Defect: a token that cannot be sent (a line end left on it by ``$(cat file)`` on a
    file written on Windows, a space, a tab) was quoted in the message, up to 40
    characters: the bot's secret, printed by ``arena-bot run`` from ``--token`` or
    ``ARENA_TOKEN`` and by ``arena serve`` from its tokens file into logs and CI output
    (a tournament's ``token_env`` had its own exception for it). The message names the
    character and where it is, never the token."""
    problem = token_problem(token)
    assert problem is not None and problem.startswith(
        f"a token is printable ASCII without spaces: this one has {words}"
    ), problem
    assert SECRET[:6] not in problem and "Token" not in problem
    with pytest.raises(ArenaAuthError) as e:  # (checked before anything connects)
        run_bot(RandomBot, arena="127.0.0.1:1", token=token, retry_for=0)
    assert words in str(e.value) and SECRET[:6] not in str(e.value)
    assert str(e.value).endswith(": check --token / ARENA_TOKEN")


def test_a_bad_token_in_a_tokens_file_or_config_is_not_printed(tmp_path: Path) -> None:
    """The same defect in ``arena serve --tokens FILE`` and a tournament's remote bot:
    ``bots.a: a token is printable ASCII without spaces, got 's3cret-Token-of-mine\\n'``.
    The file is left as it was, and nothing is served or stored."""
    tokens = tmp_path / "tokens.toml"
    text = TOKENS + f'd = "{SECRET}\\n"\n'
    tokens.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                                   "--record-dir", str(tmp_path / "records")])  # fmt: skip
    said = _one_line(r)
    assert f"{tokens}: bots.d: a token is printable ASCII without spaces: this one has a " \
           "newline at character 21 of 21" in said  # fmt: skip
    assert SECRET[:6] not in said
    assert tokens.read_text(encoding="utf-8") == text
    assert not (tmp_path / "records").exists()
    config = tmp_path / "t.toml"
    config.write_text(f'name = "t"\ndb = "{tmp_path / "t.sqlite"}"\n[bots]\na = "random"\n'
                      f'b = "random"\n[bots.c]\nremote = true\ntoken = "{SECRET} x"\n',
                      encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as e:
        load_config(config)
    assert "bots.c.token: a token is printable ASCII without spaces: this one has a space " \
           "at character 21 of 22" in str(e.value)  # fmt: skip
    assert SECRET[:6] not in str(e.value)
    assert not (tmp_path / "t.sqlite").exists()


@pytest.mark.parametrize("variable", [True, False], ids=["ARENA_TOKEN", "--token"])
def test_arena_bot_run_with_a_token_read_with_its_line_end(variable: bool) -> None:
    """End to end, the command a bot author runs (``ARENA_TOKEN=$(cat token.txt)`` of a
    file with Windows line ends keeps the ``\\r``): exit code 2, one line naming the fault
    and where to look, no traceback, the token not written out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(ROOT)
    args = ["--arena", "127.0.0.1:1", "--retry-for", "0"]
    if variable:
        env["ARENA_TOKEN"] = SECRET + "\r"
    else:
        args += ["--token", SECRET + "\r"]
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sdk.cli import main; main()"
    p = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), "run", "random", *args],
        env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        "arena-bot: a token is printable ASCII without spaces: this one has a carriage return "
        "at character 21 of 21 (a line end: was it read from a file?): check --token / "
        "ARENA_TOKEN"
    ], p.stderr
    assert SECRET[:6] not in p.stdout + p.stderr


# --- arena serve: --host, and the bot spec of arena-bot -------------------------------------


@pytest.fixture
def serve_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``arena serve`` with its server replaced: the host of each call, nothing served."""
    import arena.cli.serve as serve_module

    calls: list[str] = []

    async def no_server(*args: Any) -> None:
        calls.append(args[3])

    monkeypatch.setattr(serve_module, "_serve", no_server)
    return calls


def test_serve_host_with_a_port_is_refused_as_such(tmp_path: Path, serve_calls: list[str]) -> None:
    """Defect: ``arena serve --host 127.0.0.1:80`` (or a tournament's ``host =
    "localhost:50051"``) was looked up as a host name: "cannot resolve '127.0.0.1:80':
    [Errno -2] Name or service not known (is the port free, and --host an address of this
    machine?)", exit code 1. It is a usage error saying the port is given apart; IPv6
    addresses, bracketed or not, are still taken."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS, encoding="utf-8")

    def serve(host: str) -> Result:
        return CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--host", host,
                                          "--port", "0", "--record-dir",
                                          str(tmp_path / "records")])  # fmt: skip

    for host in ("127.0.0.1:80", "localhost:50051"):
        said = _one_line(serve(host))
        assert (f"Invalid value for '--host': the address alone: the port is given apart "
                f"(--port, or port), got '{host}'") in said  # fmt: skip
    assert serve_calls == []
    for host in ("::1", "[::1]", "::", "0.0.0.0", "localhost"):
        assert serve(host).exit_code == 0, host
    assert serve_calls == ["::1", "[::1]", "::", "0.0.0.0", "localhost"]
    config = tmp_path / "t.toml"
    config.write_text('name = "t"\nhost = "localhost:50051"\n[bots]\na = "random"\n'
                      'b = "random"\nc = "random"\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as e:
        load_config(config)
    assert "host: the address alone: the port is given apart" in str(e.value)


def test_a_bot_that_is_no_regular_file_or_far_too_long_is_named_shortly(tmp_path: Path) -> None:
    """Defects: ``arena-bot try /dev/null`` said "no file '/dev/null'" of a file that is
    there (a device); a bot name of 5000 characters was quoted whole, twice over 5 KB
    of one line. Each is one short line, exit code 2."""
    text = _one_line(CliRunner().invoke(arena_bot, ["try", "/dev/null", "-n", "1"]))
    assert ("Invalid value for BOT: '/dev/null' is no regular file (a device, FIFO or "
            "socket)") in text  # fmt: skip
    fifo = tmp_path / "bot.py"
    os.mkfifo(fifo)
    text = _one_line(CliRunner().invoke(arena_bot, ["try", "random", "--vs", str(fifo)]))
    assert f"Invalid value for --vs: '{fifo}' is no regular file" in text
    r = CliRunner().invoke(arena_bot, ["try", "a" * 5000, "-n", "1"])
    text = _one_line(r)
    assert ("Invalid value for BOT: a bot name of 5,000 characters, longer than any path "
            "or module name (at most 4,352)") in text  # fmt: skip
    assert len(r.output) < 500


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--once", "--matches", "2"], "--once is --matches 1: not with --matches 2"),
        (["--matches", "0"], "Invalid value for '--matches': 0 is not in the range"),
        (["--matches", "4294967296"], "Invalid value for '--matches': 4294967296 is not in"),
        (["--retry-for", "nan"], "'nan' is not a finite number of seconds"),
        (["--retry-for", "-1"], "Invalid value for '--retry-for': -1.0 is not in the range"),
        (["--workers", "0"], "Invalid value for '--workers': 0 is not in the range 1<=x<=256"),
        (["--workers", "257"], "Invalid value for '--workers': 257 is not in the range"),
        (["--log-level", "loud"], "Invalid value for '--log-level': 'loud' is not one of"),
        (["--ca", "/dev/null"], "/dev/null is not a regular file (a PEM certificate is one)"),
        (["--ca", "/nonexistent/ca.pem"], "Invalid value for '--ca': File "
         "'/nonexistent/ca.pem' does not exist."),
    ],
)  # fmt: skip
def test_checked_run_options_stay_usage_errors(
    run_calls: list[str], args: list[str], words: str
) -> None:
    """Checked and found fine (pinned): ``arena-bot run``'s counts, seconds, workers, log
    level and CA file, wrong, out of range or in conflict, are usage errors naming the
    option, and nothing connects."""
    text = _one_line(_run("--arena", "localhost:1", *args))
    assert words in text, text
    assert run_calls == []


def test_run_without_any_token_or_with_an_empty_one(run_calls: list[str]) -> None:
    """Checked and found fine (pinned): no token, an empty ``--token`` or an empty
    ``ARENA_TOKEN`` says where a token comes from."""
    for r in (
        CliRunner().invoke(arena_bot, ["run", "random"], env={"ARENA_TOKEN": ""}),
        CliRunner().invoke(arena_bot, ["run", "random", "--token", ""]),
    ):
        assert "no token: give --token TOKEN or set ARENA_TOKEN" in _one_line(r)
    assert run_calls == []


_LAUNCHER = """\
import logging, os, sys
sys.path.insert(0, sys.argv.pop(1))
logging.basicConfig(level=logging.WARNING, format="%(message)s")
import sdk.cli
for value in sys.argv[1:]:
    os.environ["ARENA_PARENT_PID"] = value
    try:
        sdk.cli._die_with_launcher()
        print("running", flush=True)
    except SystemExit as e:
        print("exit", e.code, flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's parent-death signal")
def test_a_junk_or_stale_arena_parent_pid_is_said(tmp_path: Path) -> None:
    """Defects: ``ARENA_PARENT_PID`` (which `arena tournament` sets for the bots it
    launches) left in a shell's environment with a value too large for a process id ended
    ``arena-bot run`` with an OverflowError traceback; 0 and -1 were passed to
    ``os.kill`` (a process group, every process); and a stale one, naming a process that
    is gone, ended the bot at once with exit code 0 and not a word. Junk is ignored with a
    warning naming the variable; a launcher that is gone is said before the exit."""
    script = tmp_path / "launcher.py"
    script.write_text(_LAUNCHER, encoding="utf-8")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # (reaped: its pid names no process now)
    values = ["abc", "0", "-1", "99999999999999999999", str(dead.pid)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, str(script), str(ROOT), *values], capture_output=True,
                       text=True, timeout=60, cwd=ROOT, env=env)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["running"] * 4 + ["exit 0"], (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    warnings = p.stderr.splitlines()
    assert warnings[:4] == [
        f"ARENA_PARENT_PID (set by arena tournament for the bots it launches) is {v!r}, no "
        "process id: ignored"
        for v in values[:4]
    ], p.stderr
    assert warnings[4:] == [
        f"the process that launched this bot (ARENA_PARENT_PID={dead.pid}) is gone: exiting"
    ], p.stderr


def test_a_ruleset_dict_with_a_key_that_is_no_string_is_a_ruleset_error() -> None:
    """Defect (found by fuzzing ``Ruleset.from_dict``): a dict built in Python with a key
    that is no string (``{5: 4}``) raised AttributeError ('int' object has no attribute
    'isprintable') from the message's own formatting, not RulesetError naming the key."""
    with pytest.raises(RulesetError) as e:
        Ruleset.from_dict({"preset": "classic", 5: 4})
    assert e.value.key == "5" and str(e.value).startswith("5: unknown option; known options: ")


def test_run_human_with_workers_is_refused(run_calls: list[str]) -> None:
    """Defect (conflicting options): ``arena-bot run human --workers N`` ran the person's
    seat in a worker process, whose stdin is /dev/null: at its first decision it read "end
    of input" and left the match (exit code 1), whatever the terminal held. It is a usage
    error naming --workers; another bot with --workers is taken."""
    text = _one_line(_run("human", "--workers", "2"))
    assert ("Invalid value for --workers: the bot would run in other processes, which "
            "cannot read this terminal: not with 'human'") in text  # fmt: skip
    assert run_calls == []
    assert _run("--workers", "2").exit_code == 0
    assert run_calls == ["localhost:50051"]


def test_a_name_or_token_with_a_byte_that_is_no_utf8(run_calls: list[str]) -> None:
    """Defect: ``arena-bot run --name`` with a byte that is no UTF-8 (Python keeps it as a
    lone surrogate) ended in a UnicodeEncodeError traceback at the first connection (the
    name travels in Hello as protobuf text). It is a usage error naming the byte; a token
    with one says "a byte that is no UTF-8 text (0xFF)", not "a control character (U+DCFF)"."""
    text = _one_line(_run("--name", "my\udcffbot"))
    assert "Invalid value for '--name': not UTF-8 text: it holds the byte 0xFF" in text
    assert run_calls == []
    assert _run("--name", "мой бот").exit_code == 0
    assert token_problem("tok\udcffen-token") == (
        "a token is printable ASCII without spaces: this one has a byte that is no UTF-8 text "
        "(0xFF) at character 4 of 12"
    )
