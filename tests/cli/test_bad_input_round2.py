"""Bad input, round 2: files and command-line values the first audit (tests/cli/test_bad_input.py)
did not try. Each test names the defect it was written for; in-process through click's
CliRunner (but the standard output with no room left: a real process, for a real stdout), no
server and no bot process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from arena.storage import Storage
from arena.tournament import RunOptions, load_config, run
from sdk.cli import main as arena_bot
from tests.arena.fake_referee import FakeReferee

BOTS = '[bots]\na = "random"\nb = "heuristic"\nc = "counting"\n'
BOM = b"\xef\xbb\xbf"


def _invoke(cmd: Any, args: list[str]) -> Result:
    return CliRunner().invoke(cmd, args)


def _fails(r: Result, code: int, *words: str) -> str:
    """``r`` exited with ``code``, without a traceback, and its output holds ``words``."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    text = " ".join(r.output.split())  # rich and click wrap long lines
    assert r.exit_code == code, text
    assert "Traceback" not in text
    for w in words:
        assert w in text, text
    return text


def _config(tmp: Path, extra: str = "", name: str = "t.toml") -> Path:
    p = tmp / name
    p.write_text(f'name = "r2"\nmax_deals = 2\ndb = "{tmp / "t.sqlite"}"\n'
                 f'out = "{tmp / "out"}"\n{extra}{BOTS}', encoding="utf-8")  # fmt: skip
    return p


def _sparse(path: Path, size: int = 64 << 30) -> Path:
    """A file of ``size`` bytes that takes no disk (read whole, it is a MemoryError)."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def test_a_toml_file_with_a_byte_order_mark_is_named_as_such(tmp_path: Path) -> None:
    """Defect: a config, ruleset or tokens file saved with a UTF-8 BOM (Windows Notepad) was
    refused with tomllib's "Invalid statement (at line 1, column 1)": nothing the user could
    see in the file was wrong. The error now says the file starts with a BOM."""
    config = tmp_path / "bom.toml"
    config.write_bytes(BOM + _config(tmp_path).read_bytes())
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "bom.toml", "byte order mark")  # fmt: skip
    rules = tmp_path / "house.toml"
    rules.write_bytes(BOM + b'preset = "classic"\n')
    _fails(_invoke(arena, ["rules", str(rules)]), 2, "house.toml", "byte order mark")
    _fails(_invoke(arena_bot, ["try", "random", "--ruleset", str(rules), "-n", "1"]), 2,
           "--ruleset", "byte order mark")  # fmt: skip
    tokens = tmp_path / "tokens.toml"
    tokens.write_bytes(BOM + b'[bots]\na = "token-a1"\nb = "token-b1"\nc = "token-c1"\n')
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"]), 2,
           "tokens.toml", "byte order mark")  # fmt: skip
    # Windows' "Unicode" (UTF-16) was "not UTF-8 text (invalid start byte)"
    config.write_bytes(b"\xff\xfe" + _config(tmp_path).read_text().encode("utf-16-le"))
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "bom.toml", "not UTF-8 text but UTF-16")  # fmt: skip


def test_a_huge_toml_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """Defect: a config, ruleset or tokens file of 64 GB (sparse: a disk image or a log
    named by mistake) was read whole by tomllib and ended in a ``MemoryError`` traceback
    (exit 1); a few GB were read into memory. Files past 16 MiB are refused, with the size."""
    huge = _sparse(tmp_path / "huge.toml")
    _fails(_invoke(arena, ["tournament", "--config", str(huge)]), 2, "huge.toml", "too large")
    _fails(_invoke(arena, ["rules", str(huge)]), 2, "huge.toml", "too large")
    _fails(_invoke(arena_bot, ["try", "random", "--ruleset", str(huge), "-n", "1"]), 2,
           "--ruleset", "too large")  # fmt: skip
    _fails(_invoke(arena, ["serve", "--tokens", str(huge), "--port", "0"]), 2,
           "huge.toml", "too large")  # fmt: skip
    _fails(_invoke(arena, ["tournament", "--config", str(_config(tmp_path)),
                           "--set", f"ruleset={str(huge)!r}"]), 2, "too large")  # fmt: skip


def test_a_huge_record_or_pem_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """Defect: `arena replay` of a 64 GB (sparse) `.json` or `.jsonl` file, and a 64 GB
    `--ca` / `--tls-cert` / `[tls] cert`, ended in a ``MemoryError`` traceback: the file
    was read whole. The record is named as too large to read; a PEM file past 16 MiB is
    refused before it is read."""
    for name in ("huge.json", "huge.jsonl"):
        record = _sparse(tmp_path / name)
        _fails(_invoke(arena, ["replay", str(record)]), 2, name, "too large")
    pem = _sparse(tmp_path / "huge.pem")
    _fails(_invoke(arena_bot, ["run", "random", "--ca", str(pem), "--token", "token-abc",
                               "--retry-for", "0"]), 2, "--ca", "too large")  # fmt: skip
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "token-a1"\nb = "token-b1"\nc = "token-c1"\n')
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--tls-cert",
                           str(pem), "--tls-key", str(pem)]), 2,
           "--tls-cert", "too large")  # fmt: skip
    config = _config(tmp_path, f'[tls]\ncert = "{pem}"\nkey = "{pem}"\n')
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2, "tls.cert", "too large")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--max-deals", "2000000"], ["max_deals:", "got 2000000 (from --max-deals 2000000,"]),
        (["--matches-per-table", "2000000"], ["matches_per_table:", "--matches-per-table"]),
        (["--set", "max_deals=-3"], ["max_deals:", "got -3 (from --set max_deals=-3,"]),
        (["--set", "ruleset={players=5}"], ["ruleset.players:", "(from --set ruleset={pla"]),
        (["--set", "deadlines.decision_ms=0"], ["(from --set deadlines.decision_ms=0,"]),
    ],
)
def test_a_bad_value_from_the_command_line_is_blamed_on_the_option(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    """Defect: `arena tournament --max-deals 2000000` (or `--set max_deals=-3`) said
    "t.toml: max_deals: must be 0 (no cap) or up to 1000000, got 2000000", naming the
    config file, which holds `max_deals = 2`: the user looked for the bad value in the wrong
    place. The option that set it is named now."""
    config = _config(tmp_path)
    text = _fails(_invoke(arena, ["tournament", "--config", str(config), *args]), 2, *words)
    assert "not from the file" in text, text
    # a bad value in the file is still the file's
    bad = _config(tmp_path, "matches_per_table = 0\n", name="bad.toml")
    _fails(_invoke(arena, ["tournament", "--config", str(bad), "--max-deals", "3"]), 2,
           "bad.toml: matches_per_table")  # fmt: skip


def test_a_bad_option_in_a_ruleset_file_names_that_file(tmp_path: Path) -> None:
    """Defect: a tournament config with `ruleset = "house.toml"` whose file had a bad option
    said "t.toml: ruleset.barrel_at: must be between 0 and target 500, got 880": the config
    has no barrel_at, and the ruleset file was not named. It is named now, with its key."""
    house = tmp_path / "house.toml"
    house.write_text('preset = "classic"\ntarget = 500\n', encoding="utf-8")
    config = _config(tmp_path, 'ruleset = "house.toml"\n')
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "t.toml: ruleset:", f"{house}: barrel_at: must be below target 500")  # fmt: skip


def test_stored_results_survive_every_refused_config(tmp_path: Path) -> None:
    """Checked without a defect: a tournament stored, then run again with each of this
    round's bad inputs, keeps every stored match (nothing is opened for writing before the
    config is valid)."""
    config = _config(tmp_path)
    cfg = load_config(config)
    fake = FakeReferee()
    outcome = run(cfg, RunOptions(progress=False), referee_factory=lambda _c: fake, serve=False,
                  launch_bots=False)  # fmt: skip
    assert outcome.finished
    before = os.stat(tmp_path / "t.sqlite").st_mtime_ns
    (tmp_path / "house.toml").write_bytes(BOM + b'preset = "classic"\n')
    for args in (["--max-deals", "2000000"], ["--fresh", "--set", "ruleset='house.toml'"],
                 ["--fresh", "--set", "max_deals=-1"]):  # fmt: skip
        _fails(_invoke(arena, ["tournament", "--config", str(config), *args]), 2)
    assert os.stat(tmp_path / "t.sqlite").st_mtime_ns == before
    with Storage(tmp_path / "t.sqlite") as st:
        assert len(st.completed_indices(cfg.tournament_id)) == cfg.total_matches


def test_serve_matches_past_what_the_database_stores_is_refused(tmp_path: Path) -> None:
    """Defect: `arena serve --db runs/x.sqlite --matches 100000000000000000000` started,
    then ended in an ``OverflowError: Python int too large to convert to SQLite INTEGER``
    traceback as it registered the tournament. `--matches` is at most 2**63-1 now."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "token-a1"\nb = "token-b1"\nc = "token-c1"\n')
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--record-dir",
                        str(tmp_path / "rec"), "--db", str(tmp_path / "s.sqlite"),
                        "--matches", str(10**20)])  # fmt: skip
    _fails(r, 2, "--matches", "100000000000000000000")


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ('ruleset = ""\n', "ruleset"),
        ('[tls]\ncert = ""\nkey = "k.pem"\n', "tls.cert"),
    ],
)
def test_empty_ruleset_and_tls_paths_are_refused(tmp_path: Path, extra: str, key: str) -> None:
    """Defect: `ruleset = ""` was refused as "'/the/current/dir': not a regular file (a
    directory)" and `[tls] cert = ""` as "not a regular file: /the/config/dir", naming a
    directory the user never wrote. Each is "must not be empty" now."""
    config = _config(tmp_path, extra)
    text = _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
                  f"{key}: must not be empty")  # fmt: skip
    assert "directory" not in text, text


def test_an_empty_bot_cwd_is_refused_not_the_config_directory(tmp_path: Path) -> None:
    """Defect: a bot's `cwd = ""` was taken silently as the config file's directory (the
    bot ran there), as `out = ""` once was the current directory."""
    config = tmp_path / "t.toml"
    bots = '[bots]\na = { bot = "random", cwd = "" }\nb = "heuristic"\nc = "counting"\n'
    config.write_text(f'db = "{tmp_path / "t.sqlite"}"\n{bots}')
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "bots.a.cwd: must not be empty")  # fmt: skip
    assert not (tmp_path / "t.sqlite").exists()


def test_an_integer_of_thousands_of_digits_is_named_not_a_nul_byte(tmp_path: Path) -> None:
    """Defect: a TOML integer longer than Python's 4300 digits (`seed = 999...9`) made every
    TOML file (config, ruleset, tokens) "cannot read: the path holds a NUL byte", and
    `--set seed=999...9` ended in a ``ValueError`` traceback. Both name the number now."""
    big = "9" * 5000
    config = _config(tmp_path, f"seed = {big}\n")
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "t.toml: file:", "an integer of more than")  # fmt: skip
    rules = tmp_path / "big.toml"
    rules.write_text(f"target = {big}\n")
    text = _fails(_invoke(arena, ["rules", str(rules)]), 2, "big.toml", "an integer of more than")
    assert "NUL" not in text
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f"[bots]\na = {big}\n")
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"]), 2,
           "tokens.toml", "an integer of more than")  # fmt: skip
    _fails(_invoke(arena, ["tournament", "--config", str(_config(tmp_path)),
                           "--set", f"seed={big}"]), 2,
           "seed: not a TOML value: an integer of more than")  # fmt: skip


def test_a_ruleset_file_without_a_name_whose_file_name_is_no_name(tmp_path: Path) -> None:
    """Defect: a ruleset file without `name` takes its file name as its name; a file named
    with 120 characters, or ' .toml', was refused with "name: at most 100 printable
    characters" / "name: must not be empty", a key the file does not have. The error says
    the file name was taken, and to write `name = "..."` in the file."""
    for stem in ("house-rules-" * 10, " "):
        path = tmp_path / f"{stem}.toml"
        path.write_text('preset = "classic"\nconcede = "penalty"\n', encoding="utf-8")
        _fails(_invoke(arena, ["rules", str(path)]), 2,
               "the file sets no name", 'write name = "..." in the file')  # fmt: skip
        path.write_text('preset = "classic"\nname = "house"\n', encoding="utf-8")
        assert _invoke(arena, ["rules", str(path)]).exit_code == 0


def test_arena_web_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    """Defect: `arena web --port N` with N in use (or `--host` an address of another
    machine, or a name that does not resolve) ended in ``AttributeError: 'WebServer' object
    has no attribute 'deadlines'``: the failed bind closed the server before it had one.
    It is "cannot listen on HOST:PORT: <the reason>", exit 1."""
    import socket

    config = _config(tmp_path)
    cfg = load_config(config)
    run(cfg, RunOptions(progress=False), referee_factory=lambda _c: FakeReferee(), serve=False,
        launch_bots=False)  # fmt: skip
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = _invoke(arena, ["web", "--db", str(cfg.db), "--port", str(port)])
        _fails(r, 1, f"cannot listen on 127.0.0.1:{port}", "in use")
    if socket.has_ipv6:  # an IPv6 address in brackets, as serve says it (it said "::1:80")
        with socket.socket(socket.AF_INET6) as busy:
            try:
                busy.bind(("::1", 0))
            except OSError:
                return  # (no IPv6 loopback here)
            busy.listen()
            port = busy.getsockname()[1]
            r = _invoke(arena, ["web", "--db", str(cfg.db), "--host", "::1", "--port", str(port)])
            _fails(r, 1, f"cannot listen on [::1]:{port}", "in use")


def test_the_newest_database_is_a_file_not_a_directory_or_a_dangling_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: without `--db`, `arena replay`, `arena leaderboard` and `arena web` read the
    newest `runs/*.sqlite`; a directory of that name was picked ("no database at
    runs/zzz.sqlite" beside a good database), and a dangling link made each of them fail
    with "runs/dang.sqlite: No such file or directory". Only regular files are picked."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    config = tmp_path / "c.toml"
    config.write_text(f'name = "r2"\nmax_deals = 2\ndb = "runs/good.sqlite"\n{BOTS}')
    cfg = load_config(config)
    run(cfg, RunOptions(progress=False), referee_factory=lambda _c: FakeReferee(), serve=False,
        launch_bots=False)  # fmt: skip
    (tmp_path / "runs" / "zzz.sqlite").mkdir()
    (tmp_path / "runs" / "dang.sqlite").symlink_to(tmp_path / "nowhere")
    for args in (["replay", "--list"], ["leaderboard"]):
        r = _invoke(arena, args)
        assert r.exit_code == 0, r.output
        assert "good.sqlite" in r.output and "zzz" not in r.output and "dang" not in r.output


def test_the_newest_database_is_one_that_holds_a_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (docs audit round 26): a first run that could not start (a bot that never
    came) leaves its database made and empty; as the newest `runs/*.sqlite` it hid the one
    with the results: `arena leaderboard` and `arena replay --list` said "holds no
    tournament", `arena web` served nothing. The newest database that holds a tournament is
    read; with none holding one, the newest (whose reader says so)."""
    from arena.storage import newest_database

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    config = tmp_path / "c.toml"
    config.write_text(f'name = "r2"\nmax_deals = 2\ndb = "runs/good.sqlite"\n{BOTS}')
    run(load_config(config), RunOptions(progress=False), referee_factory=lambda _c: FakeReferee(),
        serve=False, launch_bots=False)  # fmt: skip
    Storage(tmp_path / "runs" / "empty.sqlite").close()  # made, as a failed first run's
    later = (tmp_path / "runs" / "good.sqlite").stat().st_mtime + 60
    os.utime(tmp_path / "runs" / "empty.sqlite", (later, later))
    assert newest_database(Path("runs")) == Path("runs/good.sqlite")
    for args in (["replay", "--list"], ["leaderboard"]):
        r = _invoke(arena, args)
        assert r.exit_code == 0, r.output
        assert "good.sqlite" in r.output and "holds no tournament" not in r.output, r.output
    (tmp_path / "runs" / "good.sqlite").unlink()
    assert newest_database(Path("runs")) == Path("runs/empty.sqlite")
    r = _invoke(arena, ["leaderboard"])
    assert r.exit_code != 0 and "empty.sqlite holds no tournament" in r.output, r.output


def test_a_bot_file_in_the_list_without_a_class_is_told_how_to_write_it(tmp_path: Path) -> None:
    """Defect: `bots = ["random", "heuristic", "sub/mine.py"]` (a bot file, as `arena-bot`
    takes it) was refused with "bots.'sub/mine.py': a bot name starts with a letter...":
    the user wrote a bot, not a name. The error names the list entry and says to write
    `sub/mine.py:Class` or to name it in a [bots] table."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.py").write_text("from sdk import Bot\nclass Mine(Bot):\n    pass\n")
    config = tmp_path / "t.toml"
    config.write_text('bots = ["random", "heuristic", "sub/mine.py"]\n')
    _fails(_invoke(arena, ["tournament", "--config", str(config)]), 2,
           "bots[2]: 'sub/mine.py' makes no bot name", "'path/file.py:Class'")  # fmt: skip
    config.write_text('bots = ["random", "heuristic", "sub/mine.py:Mine"]\n')
    assert [b.name for b in load_config(config).bots] == ["random", "heuristic", "Mine"]


def test_a_path_that_is_not_utf8_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """Defect: `arena tournament --db runs/<byte 0xff>.sqlite` (or `--out`, or a config file
    whose name or folder has such a byte) launched the bots, then ended in a
    ``UnicodeEncodeError: ... surrogates not allowed`` traceback as the new tournament was
    registered (its paths are stored as UTF-8 text), leaving an empty database behind. Such
    a path is refused now, naming the key or option, before anything is created."""
    config = _config(tmp_path)
    bad = os.fsdecode(bytes(tmp_path) + b"/runs/\xff.sqlite")
    text = _fails(_invoke(arena, ["tournament", "--config", str(config), "--db", bad]), 2,
                  "db:", "not UTF-8", "(from --db")  # fmt: skip
    assert "\\xff" in text
    bad_out = os.fsdecode(bytes(tmp_path) + b"/out\xff")
    _fails(_invoke(arena, ["tournament", "--config", str(config), "--out", bad_out]), 2,
           "out:", "not UTF-8")  # fmt: skip
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/d\xff"))
    folder.mkdir()
    moved = folder / "c.toml"
    moved.write_text(config.read_text())
    _fails(_invoke(arena, ["tournament", "--config", str(moved)]), 2, "file:", "not UTF-8")
    assert not (tmp_path / "t.sqlite").exists() and not list(tmp_path.glob("runs*"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize(
    ("cli", "args"),
    [
        ("arena.cli", ["leaderboard", "--db", "DB"]),
        ("arena.cli", ["--help"]),
        ("sdk.cli", ["--help"]),
    ],
)
def test_a_standard_output_with_no_room_left_is_one_line_not_a_traceback(
    tmp_path: Path, cli: str, args: list[str]
) -> None:
    """Defect: ``arena leaderboard > /dev/full`` (a full disk under a redirect) ended in a
    traceback: a failed write carries no file name."""
    import subprocess
    import sys

    from arena.web.demo import make_demo_db

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    args = [str(db) if a == "DB" else a for a in args]
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", cli, *args], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 1, p.stderr
    assert p.stderr.splitlines() == ["Error: cannot write: No space left on device"], p.stderr
