"""Bad input, round 47: an organiser who makes every mistake, on every command.

In-process through click's CliRunner (``arena`` and ``arena-bot``), as
``tests/cli/test_bad_input.py``: each mistake ends in one line naming the file, option or
key and what was wrong, a documented exit code, and nothing stored is changed.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from arena.cli import main as arena
from arena.referee.config import key_pair_problem, pem_problem
from arena.storage import Storage, StorageError
from arena.tournament import load_config
from arena.web.demo import make_demo_db
from sdk.cli import main as arena_bot
from tests.cli.test_bad_input import BOTS, _fails, _invoke, _toml
from tests.support.certs import make_cert
from tests.support.read_only import read_only


@pytest.mark.parametrize("given", ["--db", "--set", "config"])
def test_a_database_that_is_a_fifo_or_device_is_refused_with_the_config(
    tmp_path: Path, given: str
) -> None:
    """Defect: ``arena tournament --db FIFO`` (``db = "/dev/null"`` likewise) passed the
    config's checks, which refused only a directory, and the run began: "error: FIFO:
    database error while opening: disk I/O error", exit 1, SQLite's words naming no
    option. It is a bad option (exit 2) saying what is there."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    db = f'db = "{fifo}"\n' if given == "config" else ""
    cfg = _toml(tmp_path, f'name = "f"\nout = "{tmp_path / "out"}"\n{db}{BOTS}')
    args = {"--db": ["--db", str(fifo)], "--set": ["--set", f'db="{fifo}"'], "config": []}
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress", *args[given]])
    _fails(r, 2, f"db: {fifo} is not a regular file (a FIFO, device or socket)")
    assert not (tmp_path / "out").exists()


def test_serve_and_storage_refuse_a_database_that_is_no_regular_file(tmp_path: Path) -> None:
    """Defect: ``arena serve --db /dev/null`` said "Invalid value for --db: /dev/null:
    database error while opening: disk I/O error" (SQLite's words for a device). Every
    writer of a database (:class:`Storage`) says what is there, as the readers did."""
    with pytest.raises(StorageError, match="not a regular file"):
        Storage("/dev/null")
    tokens = _toml(tmp_path, '[bots]\na = "tokentoken-a"\nb = "tokentoken-b"\n'
                             'c = "tokentoken-c"\n', "tokens.toml")  # fmt: skip
    tokens.chmod(0o600)
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--db", "/dev/null",
                        "--record-dir", str(tmp_path / "records")])  # fmt: skip
    _fails(r, 2, "--db: /dev/null: not a regular file")


@pytest.mark.parametrize(
    "command",
    [
        ["arena", "rules"],
        ["arena-bot", "try", "random", "-n", "1", "--ruleset"],
    ],
)
def test_a_tournament_config_with_a_list_of_bots_as_a_ruleset_is_said_to_be_one(
    tmp_path: Path, command: list[str]
) -> None:
    """Defect: a tournament config given where a ruleset goes (``--ruleset
    tournaments/x.toml``, ``ruleset = "x.toml"``) was said to be one only when its bots
    were a ``[bots]`` table; with ``bots = ["random", ...]`` it was "seed: unknown option;
    known options: name, players, ... (24 of them)", which hid the mistake."""
    cfg = _toml(tmp_path, 'name = "cup"\nseed = 1\nbots = ["random", "heuristic", "counting"]\n')
    prog = arena if command[0] == "arena" else arena_bot
    r = _invoke(prog, [*command[1:], str(cfg)])
    _fails(r, 2, "bots: this is a tournament config or a tokens file (it has bots)")


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def test_an_encrypted_tls_key_is_said_to_be_one_not_asked_a_passphrase_for(
    tmp_path: Path,
) -> None:
    """Defect: a `[tls]` key (or `arena serve --tls-key`) encrypted with a passphrase made
    OpenSSL ask for it on the terminal, "Enter PEM pass phrase:" twice, as the config was
    checked (gRPC, which takes the key as it is, could not have used it anyway); without a
    terminal it was "cannot read CERT or KEY: Invalid argument". It is named encrypted,
    with the command that writes it decrypted, and nothing is asked."""
    cert, key = make_cert(tmp_path)
    enc = tmp_path / "enc key.pem"
    _openssl("pkey", "-in", str(key), "-aes256", "-passout", "pass:secret", "-out", str(enc))
    problem = key_pair_problem(cert, enc)
    assert problem is not None and "is encrypted (it asks for a passphrase" in problem, problem
    assert f"openssl pkey -in '{enc}' -out arena.key" in problem
    assert key_pair_problem(cert, key) is None
    cfg = _toml(tmp_path, f'name = "tls"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path}/o"\n'
                          f'[tls]\ncert = "{cert}"\nkey = "{enc}"\n{BOTS}')  # fmt: skip
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"], input="")
    _fails(r, 2, "tls.key: the private key in", "is encrypted")
    assert not (tmp_path / "t.sqlite").exists()
    tokens = _toml(tmp_path, '[bots]\na = "tokentoken-a"\nb = "tokentoken-b"\n'
                             'c = "tokentoken-c"\n', "tokens.toml")  # fmt: skip
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--tls-cert",
                        str(cert), "--tls-key", str(enc)], input="")  # fmt: skip
    _fails(r, 2, "--tls-key: the private key in", "is encrypted")


def test_a_key_of_another_type_than_the_certificates_is_named_as_not_its_key(
    tmp_path: Path,
) -> None:
    """Defect: an EC key beside an RSA certificate was "CERT and KEY are not a usable
    certificate and key: NO_CERTIFICATE_ASSIGNED" (OpenSSL's code); the RSA key of another
    certificate was already said to be not the certificate's key. Both are now."""
    cert, _ = make_cert(tmp_path)
    ec = tmp_path / "ec.key"
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(ec))
    problem = key_pair_problem(cert, ec)
    assert problem == f"the private key in {ec} is not the key of the certificate in {cert}"


def test_a_pem_file_cut_short_is_said_to_be(tmp_path: Path) -> None:
    """Defect: a certificate cut short (copied from a terminal, half a paste) passed the
    PEM check, which looked for its BEGIN line only, and was then "CERT and KEY are not a
    usable certificate and key: [SSL] PEM lib (_ssl.c:3905)"; `arena-bot run --ca` with
    it said nothing until its handshake failed. Both say it is cut short."""
    cert, key = make_cert(tmp_path)
    cut = tmp_path / "cut.pem"
    cut.write_bytes(cert.read_bytes()[:300])
    assert pem_problem(cut, "certificate") == (
        f"{cut} is cut short: its BEGIN CERTIFICATE has no END CERTIFICATE line"
    )
    assert pem_problem(cert, "certificate") is None and pem_problem(key, "private key") is None
    r = _invoke(arena_bot, ["run", "random", "--token", "t" * 8, "--ca", str(cut)])
    _fails(r, 2, "--ca", "is cut short")


def test_a_bot_whose_env_is_too_long_to_launch_is_said_so(tmp_path: Path) -> None:
    """Defect: a bot whose `env` holds a value of 128 KiB or more (a model pasted into it,
    a certificate's text) stopped the run with "cannot launch bot 'big' (python3): Argument
    list too long", the kernel's words, blaming the arguments of a command the config never
    gave. The message says it is the command line and the environment, `env` among them."""
    big = "x" * 200_000
    cfg = _toml(tmp_path, f'name = "big"\nmax_deals = 1\ndb = "{tmp_path / "t.sqlite"}"\n'
                          f'out = "{tmp_path / "out"}"\nbot_wait_s = 60\n[bots]\n'
                          f'big = {{ bot = "random", env = {{ BIG = "{big}" }} }}\n'
                          'b = "random"\nc = "random"\n')  # fmt: skip
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 1, "cannot launch bot 'big'", "its command line and environment are more than",
           "its `env` among them")  # fmt: skip


@pytest.mark.parametrize("sidecar", ["-wal", ".lock"])
def test_the_leaderboard_is_not_written_over_the_databases_write_ahead_log(
    tmp_path: Path, sidecar: str
) -> None:
    """Defect: `arena leaderboard --db runs/x.sqlite --out runs/x.sqlite-wal` (the shell's
    completion one word too far) wrote the table over the database's write-ahead log: every
    match it held that the database had not taken in yet (all of a run killed with -9, or
    of one under way) was gone, `select count(*) from matches` 11 before, 0 after. Only
    the database itself was guarded. Its -wal, -shm, -journal and lock file are too."""
    db = tmp_path / "x.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    holder = sqlite3.connect(db)  # a run under way: its log holds a write not yet taken in
    try:
        holder.execute("PRAGMA wal_autocheckpoint = 0")
        holder.execute("INSERT INTO meta(key, value) VALUES ('round47', 'held in the log')")
        holder.commit()
        side = tmp_path / f"x.sqlite{sidecar}"
        side.touch()
        before = side.read_bytes()
        assert sidecar != "-wal" or before  # (the log holds the write)
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(side)])
        _fails(r, 2, f"--out {side} would write over the", "of the database")
        assert side.read_bytes() == before
    finally:
        holder.close()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("4", 'bots.a.env.THREADS: expected a string, got an integer 4 (an environment '
              "variable's value is text: write \"4\")"),
        ("{ n = 1 }", "bots.a.env.THREADS: expected a string, got a table { n = 1 }"),
    ],
)  # fmt: skip
def test_an_env_value_that_is_no_string_names_its_variable(
    tmp_path: Path, value: str, said: str
) -> None:
    """Defect: `env = { THREADS = 4 }`, TOML's number where the environment takes text,
    was "bots.a.env: expected a table of strings", naming neither the variable nor what to
    write. It names the variable, what it got and, for a number, how to write it."""
    cfg = _toml(tmp_path, f'name = "e"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path}/o"\n'
                          f'[bots]\na = {{ bot = "random", env = {{ THREADS = {value} }} }}\n'
                          'b = "random"\nc = "random"\n')  # fmt: skip
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, said)
    assert not (tmp_path / "t.sqlite").exists()


def test_a_tokens_file_given_as_the_config_is_said_to_be_one_without_its_tokens(
    tmp_path: Path,
) -> None:
    """Defect: `arena tournament --config tokens.toml` (the `arena serve --tokens` file,
    also a `[bots]` table) said "bots.a.bot: unknown bundled bot 'Xq3-secret-token'": the
    token on the screen, in a CI log. It is said to be a tokens file, and no value shown."""
    token = "Xq3-secret-token-4b1"
    tokens = _toml(tmp_path, f'[bots]\na = "{token}"\nb = "other-token-77"\n'
                             'c = "third-token-99"\n', "tokens.toml")  # fmt: skip
    r = _invoke(arena, ["tournament", "--config", str(tokens), "--no-progress"])
    text = _fails(r, 2, "bots: this looks like an `arena serve --tokens` file")
    assert token not in text and "other-token" not in text
    # A config of bots misspelt is no tokens file: the misspelling is quoted, and answered.
    cfg = _toml(tmp_path, '[bots]\nr = "Random"\nh = "heuristic"\nc = "counting"\n')
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, "bots.r.bot: unknown bundled bot 'Random' (did you mean 'random'?)")
    cfg = _toml(tmp_path, '[bots]\na = "mypkg.bot_a"\nb = "mypkg.bot_b"\nc = "mypkg.bot_c"\n')
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, "bots.a.bot: unknown bundled bot 'mypkg.bot_a'", "or a module:Class")


def test_a_ruleset_file_given_as_the_config_is_said_to_be_one(tmp_path: Path) -> None:
    """Defect: `arena tournament --config rulesets/house.toml` said "preset: unknown key
    (did you mean 'ruleset'?); known keys: ...", which hid the mistake. It is said to be a
    ruleset file, with how a config names it (as `arena rules` says the reverse)."""
    house = _toml(tmp_path, 'preset = "classic"\nname = "house"\nmust_beat = true\n', "house.toml")
    r = _invoke(arena, ["tournament", "--config", str(house), "--no-progress"])
    _fails(r, 2, "preset: this is a ruleset file (it sets preset), not a tournament config",
           'ruleset = "house.toml"')  # fmt: skip


def test_try_records_into_a_directory_that_takes_no_file_is_refused_before_playing(
    tmp_path: Path,
) -> None:
    """Defect: `arena-bot try --records DIR` checked only that DIR could be made: a
    directory there that takes no file (read-only: another user's, a read-only mount)
    played the first match, then stopped the series with "cannot write DIR/local-0-0.json:
    Permission denied", exit 1. It is refused before anything is played, as `arena serve
    --record-dir` is. (/sys takes no file, even from root: chmod does not stop root.)"""
    if not Path("/sys").is_dir() or _takes_a_file(Path("/sys")):
        pytest.skip("no directory here that refuses a new file to this user")
    r = _invoke(arena_bot, ["try", "random", "-n", "1", "--max-deals", "1", "--records", "/sys"])
    text = _fails(r, 2, "--records: cannot write records into '/sys'")
    assert "slowest decision" not in text  # (no match was played)


def _takes_a_file(directory: Path) -> bool:
    try:
        (directory / ".round47-probe").touch()
    except OSError:
        return False
    (directory / ".round47-probe").unlink()
    return True


def test_a_read_only_database_is_refused_before_any_bot_starts(tmp_path: Path) -> None:
    """Defect: a database this user may not write (another user's, `chmod 444` for a user
    other than root, or immutable: `chattr +i`, which stops root too) was opened all the
    same: the bots were started and waited for (a remote one up to `bot_wait_s`), and only
    the tournament's registration, once every bot had come, said "is read-only", exit 1. It
    is said before anything starts; the database is left as it was."""
    db = tmp_path / "ro.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    with read_only(db):
        before = db.read_bytes()
        with pytest.raises(StorageError, match="is read-only to this user"):
            Storage(db).check_writable()
        cfg = _toml(tmp_path, f'name = "ro"\nmax_deals = 1\nout = "{tmp_path / "out"}"\n{BOTS}')
        r = _invoke(arena, ["tournament", "--config", str(cfg), "--db", str(db), "--no-progress"])
        _fails(r, 1, f"{db} is read-only to this user")
        assert not (tmp_path / "out" / "logs").exists()  # (no bot was started)
        assert db.read_bytes() == before


def test_a_format_and_an_out_file_of_another_format_are_refused(tmp_path: Path) -> None:
    """Defect: `arena leaderboard --format csv --out results.json` wrote CSV into the .json
    file, exit 0 (whatever read it as JSON failed later): two options that contradict,
    taken silently. They are refused, exit 2, nothing written; an --out of no format's
    extension, or a directory of any name, still takes the --format."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    out = tmp_path / "results.json"
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", "csv", "--out", str(out)])
    _fails(r, 2, f"--format csv and --out {out} (a .json file) disagree")
    assert not out.exists()
    (tmp_path / "by.json").mkdir()
    for target, written in (("plain.txt", "plain.txt"), ("by.json", "by.json/leaderboard.csv")):
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", "csv", "--out",
                            str(tmp_path / target)])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert (tmp_path / written).read_text(encoding="utf-8").startswith("rank,bot,")


def test_a_toml_error_at_a_character_the_line_does_not_show_names_it(tmp_path: Path) -> None:
    """Defect: a config whose lines end in a carriage return alone (an old Mac editor: the
    whole file is one line to TOML) was "Expected newline or end of document after a
    statement (at line 1, column 12)", pointing after a statement that reads right; a NUL
    byte (a file cut by a crash) the same. The character is named; a CRLF file, which TOML
    takes, gets no such words."""
    cfg = tmp_path / "mac.toml"
    cfg.write_bytes(b'name = "mac"\rbots = ["random", "heuristic", "counting"]\r')
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, "(at line 1, column 13) (there: a carriage return, \\r, alone: the file's "
           "lines end in one, without \\n: convert them to LF)")  # fmt: skip
    house = tmp_path / "house.toml"
    house.write_bytes(b'preset = "classic"\x00\n')
    r = _invoke(arena, ["rules", str(house)])
    _fails(r, 2, "(at line 1, column 19) (there: the control character '\\x00'")
    house.write_bytes(b'preset = "classic"\r\nmust_beat = \r\n')
    r = _invoke(arena, ["rules", str(house)])
    assert "there:" not in _fails(r, 2, "Invalid value (at line 2, column 13)")


@pytest.mark.parametrize(
    ("first", "second", "key"),
    [
        ("max_deals=2", "max_deals=3", "max_deals"),
        ("deadlines.decision_ms=500", "deadlines={ time_bank_ms = 1000 }", "deadlines"),
    ],
)
def test_two_sets_of_one_key_are_refused(tmp_path: Path, first: str, second: str, key: str) -> None:
    """Defect: `--set max_deals=2 --set max_deals=3` played 3, the first dropped unsaid, and
    `--set deadlines.decision_ms=500 --set 'deadlines={...}'` lost the 500 the same way,
    where `--max-deals 2 --set max_deals=3` is refused ("give one of them"). Two --set of
    one key, or of a table and a key in it, are refused likewise; of two keys, both hold."""
    cfg = _toml(tmp_path, f'name = "s"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path}/o"\n'
                          f"{BOTS}")  # fmt: skip
    args = ["tournament", "--config", str(cfg), "--no-progress", "--set", first, "--set", second]
    said = f"{cfg}: {key}: --set {first} and --set {second} both set it: give one of them"
    _fails(_invoke(arena, args), 2, said)
    assert not (tmp_path / "t.sqlite").exists()
    both = load_config(cfg, ["deadlines.decision_ms=500", "deadlines.time_bank_ms=1000"])
    assert (both.deadlines.decision_ms, both.deadlines.time_bank_ms) == (500, 1000)


def test_too_many_bots_are_refused_before_each_is_read(tmp_path: Path) -> None:
    """Defect: a config of too many bots for the schedule (past 1,000,000 matches: more
    than 101 bots at a table of 3) was refused only after every bot was read, each bundled
    one's code digested: 20,000 bots took half a minute to be told so. The count is checked
    first: a bot that would be refused when read (a bot file not there) is not reached."""
    lines = "".join(f'b{i} = "random"\n' for i in range(200))
    cfg = _toml(tmp_path, f'name = "many"\n[bots]\n{lines}last = "not-there.py"\n')
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, "201 bots and matches_per_table = 1 make 7,999,800 matches: at most 1,000,000")


def test_an_env_variable_of_no_name_is_named_so_before_its_value(tmp_path: Path) -> None:
    """The env check of this round named `env = { "" = 0 }` as the key `bots.a.env.`,
    a dotted key ending in its dot (found by the round 35 fuzzer): a variable of no name is
    said to be none first, as before."""
    cfg = _toml(tmp_path, f'name = "e"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path}/o"\n'
                          '[bots]\na = { bot = "random", env = { "" = 0 } }\n'
                          'b = "random"\nc = "random"\n')  # fmt: skip
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--no-progress"])
    _fails(r, 2, "bots.a.env: '' is no environment variable name")
