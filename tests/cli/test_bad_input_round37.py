"""Bad input, round 37: what earlier rounds did not feed in.

A file that is no SQLite database at all given as ``--db``; ``COLUMNS=0`` in the
environment; host names holding Unicode look-alikes (a Cyrillic 'о', full-width digits);
``--arena`` with brackets around what is no IPv6 address. Each either works as documented
or is refused in one line naming the option or key, never a traceback, and nothing stored
is touched.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.addresses import host_problem, non_ascii_problem
from arena.cli import main as arena
from arena.tournament import load_config
from arena.tournament.config import ConfigError
from sdk.cli import _address_problem
from sdk.cli import main as arena_bot
from tests.cli.test_bad_input import BOTS, _fails, _invoke, _record, _toml
from tests.support.certs import make_cert

LOOK_ALIKES = ("lоcalhost", "１２７.0.0.1", "аrena.example", "localhost\u0131")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ a --db that is no SQLite


@pytest.mark.parametrize(
    "content",
    [b'name = "cup"\n[bots]\na = "random"\n', bytes(range(256)) * 4, b"SQLite format 3\x00"],
    ids=["a TOML file", "random bytes", "a cut SQLite header"],
)
def test_a_database_that_is_no_sqlite_file_is_named_not_a_traceback(
    tmp_path: Path, content: bytes
) -> None:
    """Defect: ``arena leaderboard``, ``arena replay`` and ``arena web`` given as ``--db``
    a file that is no SQLite database (a config passed by mistake, say) ended in an
    AttributeError traceback (``'Storage' object has no attribute 'resume'``): the read-only
    opening never set the advice its error translation reads. Another program's SQLite
    database was tested; a file that SQLite cannot open at all was not."""
    db = tmp_path / "cup.toml"
    db.write_bytes(content)
    before = _digest(db)
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1,
           str(db), "is not a Thousand Arena database")  # fmt: skip
    # (--list: 1 since round 54, as leaderboard and web; a match id keeps 2)
    _fails(_invoke(arena, ["replay", "--list", "--db", str(db)]), 1,
           "is not a Thousand Arena database")  # fmt: skip
    _fails(_invoke(arena, ["replay", "m00001", "--db", str(db)]), 2,
           "is not a Thousand Arena database")  # fmt: skip
    _fails(_invoke(arena, ["web", "--db", str(db), "--port", "0"]), 1,
           "is not a Thousand Arena database")  # fmt: skip
    assert _digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cup.toml"]  # no -wal, no -shm


# ------------------------------------------------------------------------------ COLUMNS=0


@pytest.mark.parametrize("value", ["0", "00", " 0"])
def test_columns_set_to_zero_does_not_silence_the_results(value: str) -> None:
    """Defect: with ``COLUMNS=0`` in the environment (as some CI runners and shells without
    a terminal export it), rich took 0 as the width and printed nothing: ``arena-bot try``
    exited 0 without a line of its results, its table and notes gone."""
    r = _invoke(arena_bot, ["try", "random", "-n", "1", "--seed", "1", "--max-deals", "1"],
                env={"COLUMNS": value, "LINES": "0"})  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "slowest decision" in r.output, r.output
    assert "reached the cap of 1 deal" in r.output, r.output


def test_columns_set_to_zero_still_shows_a_replay(tmp_path: Path) -> None:
    """Pinned: ``arena replay RECORD`` into a pipe under ``COLUMNS=0`` shows the deal (it
    sets its own width there; on a terminal rich's width 0 printed nothing, which the
    environment fix above covers)."""
    rec = tmp_path / "m.json"
    rec.write_text(json.dumps(_record()), encoding="utf-8")
    shown = _invoke(arena, ["replay", str(rec)])
    assert shown.exit_code == 0 and shown.output.strip(), shown.output
    r = _invoke(arena, ["replay", str(rec)], env={"COLUMNS": "0"})
    assert r.exit_code == 0, r.output
    assert "ann" in r.output and "deal 1" in r.output.lower(), r.output


def test_a_columns_that_is_a_width_is_still_obeyed() -> None:
    """Pinned: only 0 is forgotten; a real width still shapes the table (wider than 60
    columns under COLUMNS=200; under COLUMNS=60, too narrow for it, the same figures as
    ``header: value`` lines: ``arena.render.fitted``)."""
    args = ["try", "random", "-n", "1", "--seed", "1", "--max-deals", "1"]
    narrow = _invoke(arena_bot, args, env={"COLUMNS": "60"})
    wide = _invoke(arena_bot, args, env={"COLUMNS": "200"})
    assert narrow.exit_code == wide.exit_code == 0

    def table_width(text: str) -> int:
        return max((len(line) for line in text.splitlines() if line.startswith("┏")), default=0)

    assert table_width(narrow.output) == 0 and "\npts/deal: 75.0\n" in narrow.output
    assert 60 < table_width(wide.output) <= 200


# --------------------------------------------------------------- hosts that look like ASCII


@pytest.mark.parametrize("host", LOOK_ALIKES)
def test_a_host_with_a_look_alike_character_is_refused_naming_it(tmp_path: Path, host: str) -> None:
    """Defect: a host holding a character that is no ASCII (a Cyrillic 'о' pasted into
    "localhost", full-width digits) passed every check: ``arena serve --host`` printed its
    notes, then failed to resolve it with a gRPC log line and exit 1; ``arena tournament``
    with such a ``host`` started, then stopped with "cannot resolve", exit 1. It is refused
    before anything starts, exit 2, naming the option or key and the character's code
    point."""
    bad = next(c for c in host if not c.isascii())
    code = f"U+{ord(bad):04X}"
    tokens = _toml(tmp_path, '[bots]\na = "token-aaaa-1"\nb = "token-bbbb-2"\n'
                             'c = "token-cccc-3"\n', "tokens.toml")  # fmt: skip
    _fails(_invoke(arena, ["serve", "--host", host, "--port", "0", "--tokens", str(tokens)]),
           2, "--host", code, "ASCII")  # fmt: skip
    _fails(_invoke(arena, ["web", "--host", host, "--port", "0"]), 2, "--host", code)
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, f'host = "{host}"\n' + BOTS))
    assert ei.value.key == "host" and code in str(ei.value)
    config = _toml(tmp_path, f'host = "{host}"\ndb = "{tmp_path / "t.sqlite"}"\n'
                             f'out = "{tmp_path / "out"}"\n' + BOTS, "cup.toml")  # fmt: skip
    _fails(_invoke(arena, ["tournament", "--config", str(config), "--no-progress"]), 2,
           "host", code)  # fmt: skip
    assert not (tmp_path / "t.sqlite").exists()


def test_a_tls_server_name_with_a_look_alike_is_refused_with_the_config(tmp_path: Path) -> None:
    """Defect (as above): ``[tls] server_name = "lоcalhost"`` was found only once the run
    had started ("cannot resolve", exit 1)."""
    make_cert(tmp_path)
    text = BOTS + '[tls]\ncert = "arena.pem"\nkey = "arena.key"\nserver_name = "lоcalhost"\n'
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, text))
    assert ei.value.key == "tls.server_name" and "U+043E" in str(ei.value)
    assert load_config(_toml(tmp_path, text.replace("lоcalhost", "localhost"))).tls


@pytest.mark.parametrize("host", LOOK_ALIKES)
def test_an_arena_address_with_a_look_alike_is_refused_not_retried(host: str) -> None:
    """Defect: ``arena-bot run --arena lоcalhost:50051`` was let through, and gRPC's
    "misformatted domain name" was retried as an unreachable arena for --retry-for seconds
    (ten minutes by default). It is a usage error naming the character."""
    bad = next(c for c in host if not c.isascii())
    r = _invoke(arena_bot, ["run", "random", "--arena", f"{host}:50051",
                            "--token", "token-aaaa-1", "--retry-for", "1"])  # fmt: skip
    _fails(r, 2, "--arena", f"U+{ord(bad):04X}")
    r = _invoke(arena_bot, ["run", "random", "--token", "token-aaaa-1", "--retry-for", "1"],
                env={"ARENA_ADDRESS": f"{host}:50051"})  # fmt: skip
    _fails(r, 2, "--arena", f"U+{ord(bad):04X}", "ARENA_ADDRESS")


@pytest.mark.parametrize("value", ["[127.0.0.1]:50051", "[localhost]:50051", "[arena]:1"])
def test_brackets_around_what_is_no_ipv6_address_are_refused(value: str) -> None:
    """Defect: ``--arena [127.0.0.1]:50051`` passed the check (brackets were taken as an
    IPv6 address's, whatever they held); gRPC cannot parse it, and the bot retried it for
    --retry-for seconds saying only "cannot connect ...: [127.0.0.1]:50051]". Refused
    saying how to write it (``arena serve --host`` already refused the same brackets)."""
    r = _invoke(arena_bot, ["run", "random", "--arena", value,
                            "--token", "token-aaaa-1", "--retry-for", "1"])  # fmt: skip
    inner = value[1:].replace("]", "")
    _fails(r, 2, "--arena", "IPv6 address only", inner)


@pytest.mark.parametrize(
    "value",
    ["[::1]:50051", "[fe80::1%eth0]:50051", "localhost:50051", "127.0.0.1:1",
     "xn--lcalhost-9fh.example:50051", "unix:/tmp/сокет.sock", "dns:///localhost:50051"],
)  # fmt: skip
def test_addresses_that_are_well_formed_are_still_taken(value: str) -> None:
    """Pinned: an IPv6 address in brackets (with a zone too), a host name in its xn-- form,
    and a Unix socket whose path is not ASCII (a path may be any text) pass the check."""
    assert _address_problem(value) is None


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    head=st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E,
                                        exclude_characters="[]:/ "), max_size=8),
    odd=st.characters(min_codepoint=0xA1, max_codepoint=0x2FFFF,
                      categories=["Lu", "Ll", "Nd", "Lo", "So", "Sm"]),
    tail=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-", max_size=8),
)  # fmt: skip
def test_any_host_with_a_character_no_ascii_is_named_by_its_code_point(
    head: str, odd: str, tail: str
) -> None:
    """Property: a host (to listen on, or an arena's HOST:PORT) holding a printable
    character that is no ASCII is refused, and the message names that character's code
    point (the first such one)."""
    host = head + odd + tail
    code = f"U+{ord(odd):04X}"
    for problem in (host_problem(host), _address_problem(f"{host}:50051"),
                    non_ascii_problem(host)):  # fmt: skip
        assert problem is not None and code in problem, (host, problem)


# ------------------------------------------------------------------------ a bot's cwd


def test_a_bots_cwd_that_is_a_file_is_said_to_be_no_directory(tmp_path: Path) -> None:
    """Defect: ``cwd = "tokens.toml"`` (a file there, not a folder) was refused as "no such
    directory", as if nothing were at that path. It says the path is not a directory; a
    path where nothing is still says "no such directory"."""
    (tmp_path / "tokens.toml").write_text("")
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + 'd = { bot = "random", cwd = "tokens.toml" }\n'))
    assert ei.value.key == "bots.d.cwd"
    assert "not a directory" in str(ei.value) and "no such" not in str(ei.value)
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + 'd = { bot = "random", cwd = "nope" }\n'))
    assert ei.value.key == "bots.d.cwd" and "no such directory" in str(ei.value)
