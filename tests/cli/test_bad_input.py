"""Bad input on the command line and in files: every kind gets a clear error that names
what was wrong, a non-zero exit code (2 for usage errors), no traceback, and loses nothing.

In-process through click's CliRunner (``arena`` and ``arena-bot``) and the tournament
runner with the fake referee: no bot process and, but for one port-in-use test, no server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from arena.storage import Storage
from arena.tournament import RunOptions, TournamentError, load_config, run
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.runner import _BotProcess, bot_command
from engine import Game
from sdk.cli import main as arena_bot
from sdk.loader import BotLoadError, load_bot
from tests.arena.fake_referee import FakeReferee
from tests.support.certs import make_cert

BOTS = '[bots]\na = "random"\nb = "heuristic"\nc = "counting"\n'

BOT_FILE = """
from sdk import Bot

class Good(Bot):
    name = "good"

class Boom(Bot):
    def __init__(self):
        raise RuntimeError("boom in init")

class NeedsArg(Bot):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
"""


def _invoke(cmd: Any, args: list[str], **kw: Any) -> Result:
    return CliRunner().invoke(cmd, args, **kw)


def _fails(r: Result, code: int, *words: str) -> str:
    """``r`` exited with ``code``, without a traceback, and its output holds ``words``."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    text = " ".join(r.output.split())  # rich wraps long lines
    assert r.exit_code == code, text
    assert "Traceback" not in text
    for w in words:
        assert w in text, text
    return text


def _toml(tmp: Path, text: str, name: str = "t.toml") -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _stored_tournament(tmp: Path, out: str = "out") -> Path:
    """A config whose tournament is fully stored (fake referee): running it plays nothing."""
    path = _toml(tmp, f'name = "bad"\nmax_deals = 2\ndb = "{tmp / "t.sqlite"}"\n'
                      f'out = "{tmp / out}"\n{BOTS}')  # fmt: skip
    cfg = load_config(path)
    fake = FakeReferee()
    outcome = run(cfg, RunOptions(progress=False), referee_factory=lambda _c: fake, serve=False,
                  launch_bots=False)  # fmt: skip
    assert outcome.finished
    return path


# ----------------------------------------------------------------------------- config files


def test_config_that_is_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "bin.toml"
    p.write_bytes(b"\xff\xfe\x00 garbage")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    assert ei.value.key == "file" and "not UTF-8" in str(ei.value)
    _fails(_invoke(arena, ["tournament", "--config", str(p)]), 2, "bin.toml: file: not valid")
    _fails(_invoke(arena, ["leaderboard", "--config", str(p)]), 2, "bin.toml: file: not valid")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("bot_wait_s = nan", "bot_wait_s"),
        ("match_timeout_s = inf", "match_timeout_s"),
        ("[referee]\nreconnect_grace_s = nan", "referee.reconnect_grace_s"),
        ("[ratings]\ndraw_probability = nan", "ratings.draw_probability"),
    ],
)
def test_config_refuses_numbers_that_are_not_finite(tmp_path: Path, line: str, key: str) -> None:
    text = BOTS + line if line.startswith("[") else line + "\n" + BOTS  # tables go last
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, text + "\n"))
    assert ei.value.key == key and "finite" in str(ei.value)


def test_config_refuses_two_remote_bots_with_one_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAME_TOKEN_X", "0123456789abcdef")
    text = BOTS + ('far = { remote = true, token = "0123456789abcdef" }\n'
                   'near = { remote = true, token_env = "SAME_TOKEN_X" }\n')  # fmt: skip
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, text))
    assert ei.value.key == "bots.near.token_env" and "bots.far" in str(ei.value)
    assert "0123456789abcdef" not in str(ei.value)  # a token is never printed


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        # Found by an audit, each a traceback or a failure at every match before:
        ('max_deals = 2000000\n' + BOTS, "max_deals", "up to 1000000"),
        ("[deadlines]\ndecision_ms = 5000000000\n", "deadlines.decision_ms", "(a day)"),
        ("[deadlines]\ntime_bank_ms = 90000000\n", "deadlines.time_bank_ms", "(a day)"),
        ("[ratings]\ndraw_probability = 0.9999999999999999\n", "ratings.draw_probability",
         "at most 0.99"),
        ("matches_per_table = 100000000\n" + BOTS, "matches_per_table", "between 1 and"),
        ("matches_per_table = 200000\n" + BOTS, "matches_per_table", "1,200,000 matches"),
        ('[bots]\nx = { command = "mybot --token {token.x}" }\na = "random"\nb = "random"\n',
         "bots.x.command", "bad placeholder"),
    ],
)  # fmt: skip
def test_config_refuses_numbers_out_of_range(
    tmp_path: Path, text: str, key: str, words: str
) -> None:
    if not text.startswith(("max_deals", "matches_per_table", "[bots]")):
        text = BOTS + text  # tables go last
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, text))
    assert ei.value.key == key and words in str(ei.value), str(ei.value)


def test_config_refuses_tls_files_that_are_not_pem(tmp_path: Path) -> None:
    (tmp_path / "arena.pem").write_text("not a certificate")
    (tmp_path / "arena.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + '[tls]\ncert = "arena.pem"\nkey = "arena.key"\n'))
    assert ei.value.key == "tls.cert" and "not a PEM certificate" in str(ei.value)


# ----------------------------------------------------------------------------- tournaments


@pytest.mark.parametrize("remote", [False, True], ids=["local bots", "remote bots"])
def test_an_out_directory_that_cannot_be_written_stops_before_any_match(
    tmp_path: Path, remote: bool
) -> None:
    """Defect (organiser audit 2): with remote bots only, no bot's log is opened, and an
    `out` that cannot be written was found once every match had been played, as the
    leaderboard files were written. It is tried before the bots start."""
    (tmp_path / "file").write_text("")
    bots: Any = ["random", "heuristic", "counting"]
    if remote:
        bots = {n: {"remote": True, "token": f"{n}-token-123"} for n in ("x", "y", "z")}
    cfg = parse_config({"name": "t", "db": str(tmp_path / "t.sqlite"),
                        "out": str(tmp_path / "file" / "out"), "bots": bots},
                       base_dir=tmp_path)  # fmt: skip
    fake = FakeReferee()
    with pytest.raises(TournamentError, match=r"cannot write the leaderboard files to .*file"):
        run(cfg, RunOptions(progress=False), referee_factory=lambda _c: fake, serve=False)
    assert not fake.calls  # no match was started
    assert (tmp_path / "file").read_text() == ""


def test_leaderboard_files_that_cannot_be_written_exit_1_and_keep_results(
    tmp_path: Path,
) -> None:
    path = _stored_tournament(tmp_path)
    (tmp_path / "file").write_text("")
    r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress",
                        "--out", str(tmp_path / "file" / "out")])  # fmt: skip
    _fails(r, 1, "cannot write the leaderboard files", "Every result is stored",
           "arena leaderboard --db")  # fmt: skip
    ok = _invoke(arena, ["leaderboard", "--config", str(path), "--format", "csv"])
    assert ok.exit_code == 0 and ok.output.count("\n") == 4  # header and the 3 bots


def test_a_bot_log_tail_shows_this_start_only(tmp_path: Path) -> None:
    """The end of the log shown when a bot exits is its own, not an earlier run's."""
    log = tmp_path / "logs" / "x.log"
    log.parent.mkdir()
    log.write_text("old run line\n" * 20)
    spec = parse_config({"bots": ["random", "heuristic", "counting"]}).bots[0]
    bp = _BotProcess(spec, [sys.executable, "-c", "print('new run line')"], "tok", log)

    async def go() -> str:
        await bp.start()
        assert bp.proc is not None
        await bp.proc.wait()
        tail = bp.tail()
        await bp.stop()
        return tail

    tail = asyncio.run(go())
    assert "new run line" in tail and "old run line" not in tail


def test_bot_command_brackets_an_ipv6_host() -> None:
    spec = parse_config({"bots": ["random", "heuristic", "counting"]}).bots[0]
    argv = bot_command(spec, host="::1", port=5, token="t")
    assert argv[argv.index("--arena") + 1] == "[::1]:5"


# ----------------------------------------------------------------------------- leaderboard


@pytest.mark.parametrize("fmt", ["json", "all"])
def test_leaderboard_out_that_cannot_be_written(tmp_path: Path, fmt: str) -> None:
    path = _stored_tournament(tmp_path)
    (tmp_path / "file").write_text("")
    bad = tmp_path / "file" / ("x.json" if fmt == "json" else "dir")
    r = _invoke(arena, ["leaderboard", "--config", str(path), "--format", fmt, "--out", str(bad)])
    # Defect (organiser audit): the reason was mkdir's "File exists", of the file in the way
    _fails(r, 1, f"--out {bad}: cannot write {tmp_path / 'file'}: a file, not a directory")
    if fmt == "all":  # the --out directory itself a file
        bad = tmp_path / "file"
        r = _invoke(arena, ["leaderboard", "--config", str(path), "--format", fmt,
                            "--out", str(bad)])  # fmt: skip
        _fails(r, 1, f"--out {bad}: cannot write {bad}: a file, not a directory")
    assert (tmp_path / "file").read_text() == ""


def test_leaderboard_format_all_needs_a_directory(tmp_path: Path, monkeypatch: Any) -> None:
    """Defect (replay audit): `--format all` without `--out` wrote four files into the
    current directory (the docs say --out defaults to stdout). It asks for --out."""
    path = _stored_tournament(tmp_path)
    monkeypatch.chdir(tmp_path / "out" if (tmp_path / "out").is_dir() else tmp_path)
    before = sorted(Path().iterdir())
    r = _invoke(arena, ["leaderboard", "--config", str(path), "--format", "all"])
    _fails(r, 2, "--format all writes one file per format", "--out")
    assert sorted(Path().iterdir()) == before


# ----------------------------------------------------------------------------- replay


def _record() -> dict[str, Any]:
    g = Game.new("classic", 3, ["ann", "bob", "cid"])
    while not g.is_over and g.deal_number < 1:
        g.apply(g.legal_actions()[-1])
    return g.record()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"players": 5}, "'players' must be a list of names"),
        ({"deals": "x"}, "'deals' must be a list"),
        ({"deals": [5]}, "Deal 1 (record deal 0) must be an object"),
        ({"deals": [{"actions": [5]}]}, "Deal 1 (record deal 0) must be an object"),
        ({"ruleset": None, "seed": None}, None),
    ],
)
@pytest.mark.parametrize("check", [False, True])
def test_replay_of_a_malformed_record(
    tmp_path: Path, change: dict[str, Any], words: str | None, check: bool
) -> None:
    rec = _record()
    rec.update(change)
    if words is None:  # a record without its keys
        rec = {"players": rec["players"]}
        words = "no 'ruleset' key"
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    r = _invoke(arena, ["replay", *(["--check"] if check else []), str(p)])
    _fails(r, 2, f"{p}: not a match record", words)


def test_replay_a_record_that_does_not_render(tmp_path: Path) -> None:
    rec = _record()
    rec["ruleset"] = {"preset": "nope"}  # (a null seed is a wrong shape: round 17)
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    # (exit 1 since round 35, as --check's REFUSED: tests/review/test_smalls_round35.py)
    _fails(_invoke(arena, ["replay", str(p)]), 1, "cannot render", "unknown preset 'nope'")


def test_replay_of_a_record_the_rules_refuse_exits_1(tmp_path: Path) -> None:
    """Found by an audit: it was shown up to the refused action and exited 0."""
    rec = _record()
    rec["deals"][0]["actions"][1]["action"] = "bid 995"
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    r = _invoke(arena, ["replay", str(p)])
    assert r.exit_code == 1 and "refused:" in r.output and "bid 995" in r.output


def test_replay_of_a_match_id_without_any_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = _fails(_invoke(arena, ["replay", "m00003"]), 2, "m00003: no such record file",
                  "pass --db")  # fmt: skip
    assert "None" not in text


# ----------------------------------------------------------------------------- serve


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--port", "-1"], "'--port'"),
        (["--port", "70000"], "'--port'"),
        (["--matches", "0"], "'--matches'"),
        (["--drain-s", "-1"], "'--drain-s'"),
        (["--decision-ms", "0"], "'--decision-ms'"),
        (["--time-bank-ms", "-1"], "'--time-bank-ms'"),
        (["--max-strikes", "0"], "'--max-strikes'"),
        (["--grace-s", "-1"], "'--grace-s'"),
        # Found by an audit: past uint32 every request failed; nan/inf were accepted.
        (["--decision-ms", "5000000000"], "'--decision-ms'"),
        (["--time-bank-ms", "90000000"], "'--time-bank-ms'"),
        (["--drain-s", "nan"], "'--drain-s'"),
        (["--grace-s", "inf"], "'--grace-s'"),
        # Hostile round 9: past uint32 the first strike's DecisionRejected crashed the match.
        (["--max-strikes", "4294967296"], "'--max-strikes'"),
        (["--max-strikes", "1000001"], "'--max-strikes'"),
    ],
)
def test_serve_bad_numbers_name_the_option(tmp_path: Path, args: list[str], option: str) -> None:
    tokens = _toml(tmp_path, '[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens), *args]), 2, option)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\xff\xfe garbage", "not UTF-8"),
        (b'[bots]\na = "t1"\nb = "t1"\n', "bots.b: the same token as bots.a"),
        (b'[bost]\na = "t1"\n', "bost: unknown key (did you mean 'bots'?)"),
        (b'a = "t1"\n', "a: unknown key"),
        # Hostile round 9: "$" matched before a final newline, so "h1\n" was a name beside
        # "h1" (split log lines, two players that look the same in a record).
        (b'[bots]\nh1 = "t1"\n"h1\\n" = "t2"\n', 'bots."h1\\x0a"'),
    ],
)
def test_serve_bad_tokens_file(tmp_path: Path, content: bytes, words: str) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_bytes(content)
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--record-dir", str(tmp_path)])
    _fails(r, 2, "--tokens", words)


def test_serve_tls_files_that_are_not_pem(tmp_path: Path) -> None:
    tokens = _toml(tmp_path, '[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--tls-cert", str(tokens),
                        "--tls-key", str(tokens)])  # fmt: skip
    _fails(r, 2, "--tls-cert", "is not a PEM certificate")


def test_serve_on_a_port_in_use(tmp_path: Path) -> None:
    tokens = _toml(tmp_path, '[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", str(port),
                            "--record-dir", str(tmp_path / "rec")])  # fmt: skip
    _fails(r, 1, f"cannot listen on 127.0.0.1:{port}")


def _can_mount_read_only(tmp: Path) -> bool:
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return False
    d = tmp / "probe"
    d.mkdir()
    script = f"mount -t tmpfs -o size=1m tmpfs {d} && mount -o remount,ro {d}"
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True)
    return done.returncode == 0


def test_a_database_on_read_only_storage_is_read(tmp_path: Path) -> None:
    """Defect: `arena leaderboard` and `arena replay` on a finished tournament's database on
    read-only storage failed with "cannot open ... check the path and permissions": opening
    switched the journal to WAL, a write. The readers now open read-only (and immutable
    where the directory cannot be written). Run in a private mount namespace (`unshare
    -m`), which needs the privilege to mount; a machine without it cannot make such a
    medium for the test."""
    import subprocess

    if not _can_mount_read_only(tmp_path):
        pytest.skip("cannot mount a read-only file system here (unshare -m and mount)")
    path = _stored_tournament(tmp_path)
    db = load_config(path).db
    ro = tmp_path / "ro"
    ro.mkdir()
    arena = f"{sys.executable} -c 'from arena.cli import main; main()'"
    script = (
        f"mount -t tmpfs -o size=20m tmpfs {ro} && cp {db} {ro}/t.sqlite && "
        f"mount -o remount,ro {ro} && cd {Path(__file__).parents[2]} && "
        f"{arena} leaderboard --db {ro}/t.sqlite --format csv && "
        f"{arena} replay m00001 --db {ro}/t.sqlite --check"
    )
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("rank,") and "deal" in r.stdout


# ----------------------------------------------------------------------------- web, bench


def test_web_bad_port_database_and_tournament(tmp_path: Path) -> None:
    path = _stored_tournament(tmp_path)
    db = str(load_config(path).db)
    _fails(_invoke(arena, ["web", "--db", db, "--port", "-1"]), 2, "'--port'")
    _fails(_invoke(arena, ["web", "--db", db, "--tournament", "nope", "--port", "0"]), 2,
           "--tournament", "no tournament 'nope'")  # fmt: skip
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is no database")
    _fails(_invoke(arena, ["web", "--db", str(junk), "--port", "0"]), 1, "junk.sqlite")


@pytest.mark.parametrize(
    "args",
    [["tournament", "--out", ""], ["tournament", "--db", " "], ["leaderboard", "--db", ""],
     ["leaderboard", "--out", ""], ["replay", "m1", "--db", ""], ["web", "--db", ""],
     ["serve", "--tokens", ""], ["serve", "--record-dir", ""]],
)  # fmt: skip
def test_empty_paths_are_refused(args: list[str]) -> None:
    """Defect: `arena tournament --out ''` ran the default tournament and wrote its
    leaderboard and logs into the current directory; `--db ''` failed naming the directory."""
    _fails(_invoke(arena, args), 2, f"'{args[-2]}'", "an empty path")


def test_bench_names_where_an_unknown_section_was_given() -> None:
    """Defect (outside organiser): ``--only nosuch`` was "Invalid value for SECTION"."""
    _fails(_invoke(arena, ["bench", "--only", "nosuch"]), 2, "'--only'", "unknown section")
    _fails(_invoke(arena, ["bench", "nosuch"]), 2, "SECTION", "unknown section 'nosuch'")


def test_bench_seconds_must_be_positive() -> None:
    _fails(_invoke(arena, ["bench", "engine", "--seconds", "0"]), 2, "'--seconds'")
    # nan divided by zero; inf never ended
    for bad in ("nan", "inf"):
        _fails(_invoke(arena, ["bench", "engine", "--seconds", bad]), 2, "'--seconds'", "finite")


# ----------------------------------------------------------------------------- bots by name


def test_loader_messages(tmp_path: Path) -> None:
    f = tmp_path / "mine.py"
    f.write_text(BOT_FILE)
    (tmp_path / "adir.py").mkdir()
    with pytest.raises(BotLoadError, match="names no module or file"):
        load_bot(":Good")
    with pytest.raises(BotLoadError) as ei:
        load_bot(f"{f}:Nope")
    assert f"{f} has no 'Nope' (its bots: Boom, Good, NeedsArg)" in str(ei.value)
    assert "_arena_bot_" not in str(ei.value)
    with pytest.raises(BotLoadError, match=re.escape(f"write {f}:ClassName")):
        load_bot(f"{f}:")
    with pytest.raises(BotLoadError, match="is a directory"):
        load_bot(str(tmp_path / "adir.py"))


@pytest.mark.parametrize("cls", ["Boom", "NeedsArg"])
def test_a_bot_that_cannot_be_made_is_refused_at_once(tmp_path: Path, cls: str) -> None:
    f = tmp_path / "mine.py"
    f.write_text(BOT_FILE)
    _fails(_invoke(arena_bot, ["try", f"{f}:{cls}", "-n", "1"]), 2, "BOT", f"{cls}() raised")
    _fails(_invoke(arena_bot, ["try", "random", "--vs", f"{f}:{cls}", "-n", "1"]), 2, "--vs",
           f"{cls}() raised")  # fmt: skip
    r = _invoke(arena_bot, ["run", f"{f}:{cls}", "--token", "t", "--arena", "127.0.0.1:1"])
    _fails(r, 2, f"{cls}() raised")


@pytest.mark.parametrize(
    "address", ["nohostport", "host:notaport", "localhost:-1", "localhost:70000", ":", "[::1"]
)
def test_run_malformed_arena_address(address: str) -> None:
    r = _invoke(arena_bot, ["run", "random", "--token", "t", "--arena", address])
    _fails(r, 2, "'--arena'", repr(address))


def test_run_bad_ca_and_retry(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    r = _invoke(arena_bot, ["run", "random", "--token", "t", "--ca", str(ca)])
    _fails(r, 2, "'--ca'", "is not a PEM certificate")
    r = _invoke(arena_bot, ["run", "random", "--token", "t", "--retry-for", "-1"])
    _fails(r, 2, "'--retry-for'")


def test_try_more_opponents_than_seats() -> None:
    r = _invoke(arena_bot, ["try", "random", "--vs", "random,heuristic,counting", "-n", "1"])
    _fails(r, 2, "--vs", "3 opponents named", "at most 2")


def test_try_more_opponents_than_a_1001_table_names_the_4_player_one() -> None:
    """Defect (new-author audit): four opponents with ``--ruleset 1001`` were refused as
    "the ruleset seats 3 players: name at most 2", though three make it 1001-4p."""
    vs = "random,heuristic,counting,random"
    r = _invoke(arena_bot, ["try", "random", "--vs", vs, "--ruleset", "1001", "-n", "1"])
    _fails(r, 2, "--vs", "4 opponents named", "seats at most 4 players (as 1001-4p)", "at most 3")


def test_serve_record_dir_that_cannot_be_written(tmp_path: Path) -> None:
    tokens = _toml(tmp_path, '[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    bad = tmp_path / "tokens.toml" / "records"  # under a file
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--record-dir", str(bad)])
    _fails(r, 2, "--record-dir", f"cannot write records into {bad}")


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ('raise RuntimeError("module boom")\n', "RuntimeError: module boom"),
        ('raise ImportError("no dep")\n', "ImportError: no dep"),
        ("def broken(:\n", "SyntaxError"),
    ],
)
def test_a_module_that_fails_to_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, words: str
) -> None:
    (tmp_path / "brokenbotmod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "brokenbotmod", raising=False)
    with pytest.raises(BotLoadError, match=re.escape(f"importing 'brokenbotmod' failed: {words}")):
        load_bot("brokenbotmod:Bot")
    r = _invoke(arena_bot, ["try", "brokenbotmod:Bot", "-n", "1"])
    _fails(r, 2, "BOT", "importing 'brokenbotmod' failed")


# ----------------------------------------------------------------------------- found by an audit


def test_brackets_in_user_text_are_printed_as_they_are(tmp_path: Path) -> None:
    """Defect: bot output, names and paths went to the screen as rich markup, so a stray
    closing tag ("[/config]") ended the command with a MarkupError traceback."""
    bad = (
        f'name = "mk"\nmax_deals = 1\ndb = "{tmp_path / "mk.sqlite"}"\nout = "{tmp_path / "o"}"\n'
        "[bots]\n"
        'bad = { command = ["{python}", "-c", '
        "\"import sys; print('missing [/config] section'); sys.exit(3)\"] }\n"
        'a = "random"\nb = "random"\n'
    )
    r = _invoke(arena, ["tournament", "--config", str(_toml(tmp_path, bad)), "--no-progress"])
    _fails(r, 1, "exited with code 3", "missing [/config] section")
    # A stored tournament shown again, its files written to a path with brackets.
    path = _stored_tournament(tmp_path, out="out[/x]")
    r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress"])
    assert r.exit_code == 0 and "out[/x]" in r.output, r.output
    db = str(load_config(path).db)
    r = _invoke(
        arena, ["leaderboard", "--db", db, "--format", "all", "--out", str(tmp_path / "l[/b]")]
    )
    assert r.exit_code == 0 and "l[/b]" in r.output, r.output


def test_a_lock_file_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    """Defect: a directory (or an unwritable file) where the lock file goes was an
    IsADirectoryError traceback."""
    path = _stored_tournament(tmp_path)
    cfg = load_config(path)
    lock = cfg.db.with_name(cfg.db.name + ".lock")
    lock.mkdir()
    r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress"])
    _fails(r, 1, "cannot open the lock file", lock.name)


def test_a_long_path_in_a_message_is_never_broken_across_lines(tmp_path: Path) -> None:
    """Defect: rich wrapped messages at 80 columns inside words, so a path (or the command a
    message gives to paste) came out cut in two ("t.sqlite. lock"): the organiser copying it
    got a path that does not exist. Messages are soft-wrapped now: one line, the terminal wraps."""
    deep = tmp_path / ("a-directory-with-a-long-name-" * 3)
    deep.mkdir()
    path = _stored_tournament(deep)
    cfg = load_config(path)
    lock = cfg.db.with_name(cfg.db.name + ".lock")
    lock.mkdir()
    r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert f"cannot open the lock file {lock} " in r.output, r.output
    lock.rmdir()
    (deep / "file").write_text("")
    bad = deep / "file" / "x.json"
    r = _invoke(
        arena, ["leaderboard", "--config", str(path), "--format", "json", "--out", str(bad)]
    )
    assert r.exit_code == 1, r.output
    assert f"--out {bad}: cannot write {deep / 'file'}: a file, not a directory" in r.output


def test_a_key_that_is_not_the_certificates_is_named(tmp_path: Path) -> None:
    """Defect: a TLS key of another certificate was reported as "cannot start the referee:
    Failed to bind to address" (gRPC's only word on it)."""
    for name in ("a", "b"):
        make_cert(tmp_path, f"{name}.pem", f"{name}.key")
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, BOTS + '[tls]\ncert = "a.pem"\nkey = "b.key"\n'))
    assert ei.value.key == "tls.key" and "is not the key of the certificate" in str(ei.value)
    tokens = _toml(tmp_path, '[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--tls-cert", str(tmp_path / "a.pem"),
                        "--tls-key", str(tmp_path / "b.key")])  # fmt: skip
    _fails(r, 2, "--tls-key", "is not the key of the certificate")
    # the matching pair is accepted
    assert load_config(_toml(tmp_path, BOTS + '[tls]\ncert = "a.pem"\nkey = "a.key"\n')).tls


def test_serve_refuses_bot_names_with_control_characters(tmp_path: Path) -> None:
    """Defect: any name was taken from the tokens file; one holding an escape sequence
    reached the terminal of a person playing in the human seat."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\n"\\u001b[2Jevil" = "t1"\nb = "t2"\n', encoding="utf-8")
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--record-dir", str(tmp_path)])
    _fails(r, 2, "--tokens", "a bot name starts with a letter or a digit")


def test_a_tournament_on_a_port_in_use_says_so_and_stores_nothing(tmp_path: Path) -> None:
    """Defect (user audit): `arena tournament` on a busy port printed gRPC core's raw error
    line and "Failed to bind ... set GRPC_VERBOSITY=debug", without the hint `arena serve`
    gives, and left an empty tournament (0/6) in the database. The port is tried first."""
    db = tmp_path / "busy.sqlite"
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        path = _toml(tmp_path, f'name = "busy"\nport = {port}\nmax_deals = 1\ndb = "{db}"\n'
                               f'out = "{tmp_path / "o"}"\n{BOTS}')  # fmt: skip
        r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress"])
    _fails(r, 1, f"cannot listen on 127.0.0.1:{port}", "is the port free?")
    assert "GRPC_VERBOSITY" not in r.output
    if db.exists():
        with Storage(db) as st:
            assert st.tournaments() == []


def test_remote_bots_are_not_told_to_connect_to_a_wildcard_address(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (user audit): with `host = "0.0.0.0"` (as in tournaments/remote.toml) the
    arena told the organiser to connect remote bots to 0.0.0.0:PORT."""
    path = _toml(tmp_path, f'name = "wild"\nhost = "0.0.0.0"\nbot_wait_s = 0.2\n'
                           f'db = "{tmp_path / "w.sqlite"}"\nout = "{tmp_path / "o"}"\n'
                           '[bots]\nfar = { remote = true, token = "0123456789abcdef" }\n'
                           'a = "random"\nb = "random"\n')  # fmt: skip
    with caplog.at_level(logging.WARNING), pytest.raises(TournamentError, match="never connected"):
        run(load_config(path), RunOptions(progress=False))
    waiting = next(r.getMessage() for r in caplog.records if "remote bots" in r.getMessage())
    assert "0.0.0.0" not in waiting and "this machine's address, port " in waiting


def test_remote_bots_over_tls_are_told_the_certificates_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (organiser audit): with ``[tls]`` the arena told remote bots to connect to
    127.0.0.1:PORT, which then failed the certificate's hostname check; it names the
    certificate's host (``server_name``, localhost here)."""
    make_cert(tmp_path, "a.pem", "a.key")
    path = _toml(tmp_path, f'name = "tls"\nbot_wait_s = 0.2\n'
                           f'db = "{tmp_path / "w.sqlite"}"\nout = "{tmp_path / "o"}"\n'
                           '[tls]\ncert = "a.pem"\nkey = "a.key"\n'
                           '[bots]\nfar = { remote = true, token = "0123456789abcdef" }\n'
                           'a = "random"\nb = "random"\n')  # fmt: skip
    with caplog.at_level(logging.WARNING), pytest.raises(TournamentError, match="never connected"):
        run(load_config(path), RunOptions(progress=False))
    waiting = next(r.getMessage() for r in caplog.records if "remote bots" in r.getMessage())
    assert "connect them to localhost:" in waiting and "127.0.0.1" not in waiting, waiting


def test_paths_past_the_bmp_and_bad_toml_in_set_are_not_mangled(tmp_path: Path) -> None:
    """Defect (tournament audit 3): `--db emoji😀.sqlite` reached the config as the literal
    text "emoji\\ud83d\\ude00.sqlite" with its quotes (JSON's surrogate pairs are no TOML), so
    results went to another file; `--set 'db="runs\\x.sqlite"'` (a bad escape) likewise
    became a file named with quotes. The path is kept; a value that is meant as TOML and
    does not parse is refused, naming the key."""
    from arena.tournament.config import apply_overrides

    path = _stored_tournament(tmp_path)
    db = tmp_path / "emoji😀.sqlite"
    r = _invoke(arena, ["tournament", "--config", str(path), "--db", str(db), "--out",
                        str(tmp_path / "out😀"), "--no-progress", "--seed", "5",
                        "--max-deals", "1"])  # fmt: skip
    assert str(db) in " ".join(r.output.split()) or db.exists(), r.output
    assert db.exists() and not list(tmp_path.glob('"*'))
    with pytest.raises(ConfigError) as ei:
        apply_overrides({}, ['db="runs\\x.sqlite"'], "t.toml")
    assert ei.value.key == "db" and "not a TOML value" in str(ei.value)
    assert apply_overrides({}, ["name=plain words"]) == {"name": "plain words"}
    # a command with a placeholder starts with a brace, and is no inline table (code review)
    command = "{python} mybot.py --arena {arena} --opt=1"
    assert apply_overrides({}, [f"bots.m.command={command}"]) == {
        "bots": {"m": {"command": command}}
    }
    with pytest.raises(ConfigError, match="not a TOML value"):
        apply_overrides({}, ["bots.m={ bot = }"])


def test_ctrl_c_before_the_tournament_starts_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (tournament audit 3): Ctrl-C while the config loaded or the schedule was
    built (a second for a million matches) printed click's "Aborted!" and exited 1; the
    docs promise 130 for an interrupted tournament."""
    import arena.cli.tournament as cli

    def interrupted(*_a: Any, **_k: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_announce", interrupted)
    r = _invoke(arena, ["tournament", "--config", str(_stored_tournament(tmp_path))])
    assert r.exit_code == 130, r.output
    assert "before the tournament started" in r.output and "Aborted" not in r.output


def test_ctrl_c_while_a_command_is_loaded_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect (resume audit): Ctrl-C in the first moments of `arena tournament`, while its
    module (rich, the runner, the leaderboard) was imported, printed click's "Aborted!" and
    exited 1."""
    import importlib

    load = importlib.import_module

    def interrupted(name: str, package: str | None = None) -> Any:
        if name == "arena.cli.tournament":
            raise KeyboardInterrupt
        return load(name, package)

    monkeypatch.setattr(importlib, "import_module", interrupted)
    r = _invoke(arena, ["tournament", "--config", "nowhere.toml"])
    assert r.exit_code == 130, r.output
    assert "nothing was done" in r.output and "Aborted" not in r.output


def test_no_output_is_written_over_the_database(tmp_path: Path) -> None:
    """Defect (CLI sweep): `arena tournament --db out/leaderboard.json --out out` played every
    match, then wrote the leaderboard over the database (rc 0: every result lost), and
    `arena leaderboard --out` could name the database it read. Both are refused first."""
    path = _stored_tournament(tmp_path)
    db = load_config(path).db
    r = _invoke(arena, ["tournament", "--config", str(path), "--no-progress",
                        "--db", str(tmp_path / "w" / "leaderboard.json"),
                        "--out", str(tmp_path / "w")])  # fmt: skip
    _fails(r, 2, "db", "is a file the tournament writes")
    assert not (tmp_path / "w" / "leaderboard.json").exists()
    before = db.read_bytes()
    for fmt, out in (("json", db), ("csv", db.parent), ("table", db)):
        if out == db.parent:  # a directory whose leaderboard.csv is the database
            db2 = db.parent / "leaderboard.csv"
            db2.write_bytes(before)
            r = _invoke(arena, ["leaderboard", "--db", str(db2), "--format", fmt, "--out",
                                str(out)])  # fmt: skip
            assert db2.read_bytes() == before
        else:
            r = _invoke(arena, ["leaderboard", "--db", str(db), "--format", fmt, "--out",
                                str(out)])  # fmt: skip
        _fails(r, 2, "would write over the database")
    assert db.read_bytes() == before


def test_more_bad_command_line_values_are_named(tmp_path: Path) -> None:
    """Defects (CLI sweep): `arena web --host ''` served on every address without a word;
    `serve --host 'a b'` printed gRPC core's raw error and exited 1; a tournament's
    `host = "a b"` likewise; `arena-bot run --arena` with a space, a control character, a
    full-width port or a URI with no target was retried as an outage for --retry-for
    seconds; `try --max-deals 99999999999` blamed --ruleset; `--ruleset ''` said "Is a
    directory"; `arena replay ''` and a directory were looked up as match ids;
    `leaderboard --tournament ''` showed the latest."""
    path = _stored_tournament(tmp_path)
    db = str(load_config(path).db)
    tokens = _toml(tmp_path, '[bots]\na = "t1111111"\nb = "t2222222"\nc = "t3333333"\n', "tk.toml")
    _fails(_invoke(arena, ["web", "--db", db, "--port", "0", "--host", ""]), 2, "--host",
           "must not be empty")  # fmt: skip
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--host", "a b"]), 2,
           "--host", "no spaces")  # fmt: skip
    with pytest.raises(ConfigError) as ei:
        load_config(_toml(tmp_path, 'host = "a b"\n' + BOTS))
    assert ei.value.key == "host"
    for bad in ("a b:5005", "local\x01host:5", "localhost:５００５", "foo://", " localhost:5"):
        r = _invoke(arena_bot, ["run", "random", "--token", "tok", "--arena", bad])
        _fails(r, 2, "--arena")
    r = _invoke(arena_bot, ["try", "random", "--max-deals", "99999999999"])
    _fails(r, 2, "--max-deals")
    r = _invoke(arena_bot, ["try", "random", "--ruleset", ""])
    text = _fails(r, 2, "--ruleset", "empty")
    assert "directory" not in text
    _fails(_invoke(arena, ["replay", "", "--db", db]), 2, "empty")
    _fails(_invoke(arena, ["replay", str(tmp_path), "--db", db]), 2, "a directory")
    _fails(_invoke(arena, ["leaderboard", "--db", db, "--tournament", ""]), 2, "--tournament")
    # options that were dropped without a word, and a missing database's exit code
    r = _invoke(arena, ["leaderboard", "--db", db, "--list", "--format", "csv"])
    _fails(r, 2, "--list")
    _fails(_invoke(arena_bot, ["try", "random", "--vs", "random,,heuristic"]), 2, "--vs", "empty")
    r = _invoke(arena_bot, ["run", "random", "--token", "tok", "--once", "--matches", "5"])
    _fails(r, 2, "--once")
    _fails(_invoke(arena, ["web", "--db", str(tmp_path / "none.sqlite")]), 2, "--db", "no database")


# ----------------------------------------------------------------- CLI audit (2026-12-01)

LONG = "x" * 300  # a file name longer than the file system takes (255 bytes)


@pytest.mark.parametrize(
    "args",
    [
        ["rules", LONG],
        ["replay", LONG],
        ["leaderboard", "--db", LONG],
        ["replay", "--db", LONG, "m1"],
        ["replay", "--list", "--db", LONG],
        ["web", "--db", LONG],
    ],
)
def test_a_file_name_too_long_is_named_not_a_traceback(args: list[str]) -> None:
    """Defect: ``Path.exists()`` raises for a name too long for the file system: a
    traceback from every command that looked a path up. Now one line naming the file."""
    r = _invoke(arena, args)
    text = _fails(r, r.exit_code, "File name too long")
    assert r.exit_code in (1, 2) and LONG[:40] in text


def test_fifos_and_devices_are_refused_not_read_for_ever(tmp_path: Path) -> None:
    """Defect: a FIFO (or /dev/zero) named as a config, ruleset, tokens file or CA blocked
    the command for ever (or filled the memory). Only regular files are read."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for cmd, args in [
        (arena, ["rules", str(fifo)]),
        (arena, ["rules", "/dev/zero"]),
        (arena, ["tournament", "--config", str(fifo)]),
        (arena, ["serve", "--tokens", str(fifo)]),
        (arena_bot, ["try", "random", "--ruleset", str(fifo)]),
        (arena_bot, ["run", "random", "--token", "t" * 8, "--ca", str(fifo)]),
    ]:
        _fails(_invoke(cmd, args), 2, "not a regular file")


def test_a_toml_date_in_a_config_is_a_usage_error(tmp_path: Path) -> None:
    """Defect: copying the config for --set overrides went through JSON, which has no
    dates: any TOML date (even under an unknown key) was a traceback."""
    for line, key in (
        ("created = 2024-01-01", "created: unknown key"),
        ("seed = 1979-05-27", "seed: expected an integer, got a date 1979-05-27"),
    ):
        p = _toml(tmp_path, f'{line}\nname = "d"\ndb = "{tmp_path / "d.sqlite"}"\n'
                            f'out = "{tmp_path / "out"}"\n{BOTS}')  # fmt: skip
        _fails(_invoke(arena, ["tournament", "--config", str(p), "--no-progress"]), 2, key)
        _fails(_invoke(arena, ["tournament", "--config", str(p), "--set", "max_deals=2"]), 2, key)
    assert not (tmp_path / "d.sqlite").exists()


def test_a_ruleset_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    """Defect: a ruleset's name (the file's name by default) reached titles, replays and
    logs raw: an escape sequence recoloured the terminal, a newline split the title."""
    for name in ("a\\u001b[31mred", "a\\nb", " ", "x" * 101):
        p = _toml(tmp_path, f'preset = "classic"\nname = "{name}"\n', "house.toml")
        _fails(_invoke(arena, ["rules", str(p)]), 2, "name:")
    p = _toml(tmp_path, 'preset = "classic"\nname = "my house rules (v2)"\n', "house.toml")
    assert _invoke(arena, ["rules", str(p)]).exit_code == 0


def test_arena_bot_matches_fit_the_hello() -> None:
    """Defect: ``--matches 4294967296`` passed the option and failed in the Hello (uint32)."""
    _fails(_invoke(arena_bot, ["run", "random", "--token", "t" * 8, "--matches", "4294967296"]),
           2, "'--matches'")  # fmt: skip


def test_an_unknown_tournament_next_to_a_config_is_an_error(tmp_path: Path) -> None:
    """Defect: ``leaderboard --config C --tournament zzz`` showed the config's latest
    tournament instead, blaming the config for a value typed on the command line."""
    path = _stored_tournament(tmp_path)
    r = _invoke(arena, ["leaderboard", "--config", str(path), "--tournament", "zzz"])
    _fails(r, 2, "no tournament 'zzz'")


def test_a_host_that_does_not_resolve_is_named_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    """Defect: ``host = "nosuchhost.invalid"`` with port 0 reached gRPC core, which printed
    its own error lines, and left an empty tournament in the database."""
    cfg = load_config(_toml(tmp_path, f'host = "nosuchhost.invalid"\nname = "h"\n'
                                      f'db = "{tmp_path / "h.sqlite"}"\n{BOTS}'))  # fmt: skip
    with pytest.raises(TournamentError, match=r"cannot resolve 'nosuchhost\.invalid'"):
        asyncio.run(run_tournament_quietly(cfg))
    with Storage(cfg.db) as st:
        assert st.tournaments() == []


def test_a_tls_server_name_that_does_not_resolve_is_named_before_anything_starts(
    tmp_path: Path,
) -> None:
    """Defect (organiser audit 2): with `[tls] server_name` a name that does not resolve,
    every bundled bot retried it ("Domain name not found") for all of bot_wait_s, and the
    run then named them as not connected. It is named at once, before anything starts."""
    make_cert(tmp_path)
    text = (
        f'name = "s"\ndb = "{tmp_path / "s.sqlite"}"\nout = "{tmp_path / "out"}"\n{BOTS}'
        '[tls]\ncert = "arena.pem"\nkey = "arena.key"\nserver_name = "nosuchhost.invalid"\n'
    )
    cfg = load_config(_toml(tmp_path, text))
    with pytest.raises(
        TournamentError,
        match=r"cannot resolve tls\.server_name "
        r"'nosuchhost\.invalid', the name the local bots connect to",
    ):
        asyncio.run(run_tournament_quietly(cfg))
    assert not (tmp_path / "s.sqlite").exists() and not (tmp_path / "out").exists()


async def run_tournament_quietly(cfg: Any) -> Any:
    from arena.tournament import run_tournament

    return await run_tournament(cfg, RunOptions(progress=False), launch_bots=False)


def test_minor_findings_of_the_cli_audit(tmp_path: Path) -> None:
    """A bot file that calls sys.exit at import made `arena-bot try` exit 0 in silence; a
    token over gRPC's metadata limit was accepted though no bot can present it; `--seed`
    past 2**63-1 was blamed on the config file."""
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    r = _invoke(arena_bot, ["try", str(exits), "-n", "1"])
    _fails(r, 2, "called sys.exit(0) when imported")
    tokens = _toml(tmp_path, f'[bots]\na = "{"t" * 5000}"\nb = "t2"\nc = "t3"\n', "tokens.toml")
    _fails(_invoke(arena, ["serve", "--tokens", str(tokens)]), 2, "at most 4096 characters")
    path = _stored_tournament(tmp_path)
    _fails(_invoke(arena, ["tournament", "--config", str(path), "--seed", str(2**63)]), 2,
           "'--seed'")  # fmt: skip
