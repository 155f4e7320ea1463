"""Fuzzing every command line: each subcommand of `arena` and `arena-bot`, found from the
click groups, and each of its parameters, found from click's objects (a new option is fuzzed
without editing this file), is given near-miss values built from its type (empty, blank,
huge, negative, NaN, control characters, right-to-left marks, lone surrogates as a
non-UTF-8 argv gives them, paths that are directories, missing, FIFOs, /dev/null, too long),
repeated, mixed with another subcommand's options, ``--`` and stray positionals.

Each command line must end with exit code 0, 1 or 2 (or 130/143), with no traceback, and a
refusal of one bad value names the option or the file at fault. Commands run in-process
(click's CliRunner) in a temporary directory, with what would serve, play or benchmark
replaced by a stub that raises :class:`_WouldRun` once every option has been checked: nothing
listens, connects or plays. A few run as real processes (a non-UTF-8 argv, a FIFO).

The short run is part of ``make test``; ``make fuzz`` runs the long one (``slow``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main as arena_main
from arena.render import printable
from arena.web.demo import make_demo_db
from sdk.cli import main as bot_main

ROOT = Path(__file__).resolve().parents[2]
EXIT_CODES = {0, 1, 2, 130, 143}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Seconds one command line may take in-process (a FIFO opened for reading blocks for ever).
HANG_S = 30


class _WouldRun(Exception):
    """Raised by the stubs in place of serving, playing or benchmarking."""


def _commands() -> list[tuple[str, tuple[str, ...], click.Command]]:
    """(program, subcommand path, command) of every leaf command of both groups."""
    out: list[tuple[str, tuple[str, ...], click.Command]] = []

    def walk(prog: str, cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, (prog, path, name)
                walk(prog, sub, (*path, name))
        else:
            out.append((prog, path, cmd))

    walk("arena", arena_main, ())
    walk("arena-bot", bot_main, ())
    return out


COMMANDS = _commands()
GROUPS = {"arena": arena_main, "arena-bot": bot_main}
ALL_OPTIONS = sorted({o for _, _, c in COMMANDS for p in c.params for o in p.opts if o[0] == "-"})

# --- near-miss values ----------------------------------------------------------------------

#: Text no option should take as it is, and none should crash on.
TEXT = [
    "", " ", "\t", "\n", "x\x00y", "a\nb", "\x1b[31mred\x1b[0m", "\u202egnp.txt", "\udcff\udcfe",
    "-", "--", "-x", "é", "x" * 5000, "\r", "%s", "{}", "../..", "~", "*",
]  # fmt: skip
NUMBERS = [
    "", " ", "0", "-0", "-1", "1", "2", "-9223372036854775809", "9" * 40, "nan", "inf", "-inf",
    "1e309", "1e-400", "0x10", " 1 ", "1_000", "\u0661", "１", "1.5", "1e3", "+1", "3\x00",
]  # fmt: skip
#: Characters a terminal obeys, of those in TEXT.
OBEYED = "\x1b\u202e\x00\r"
#: Names of paths (made in each example's directory; see _paths).
PATH_KINDS = [
    "dir", "missing", "missing_parent", "fifo", "devnull", "too_long", "long_component",
    "garbage", "binary", "empty_file", "empty", "blank", "nul", "newline", "symlink_loop",
    "file_as_parent", "rtl", "surrogate",
]  # fmt: skip


def _paths(tmp: Path) -> dict[str, str]:
    """The path of each kind in PATH_KINDS, made under ``tmp``."""
    (tmp / "adir").mkdir(exist_ok=True)
    fifo = tmp / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    (tmp / "garbage.toml").write_text("this is [not toml\n", encoding="utf-8")
    (tmp / "binary").write_bytes(b"\xff\xfe\x00\x01SQLite format 3\x00" + bytes(range(256)))
    (tmp / "empty_file").write_bytes(b"")
    (tmp / "afile").write_text("x", encoding="utf-8")
    loop = tmp / "loop"
    if not loop.is_symlink():
        loop.symlink_to(tmp / "loop")
    return {
        "dir": str(tmp / "adir"),
        "missing": str(tmp / "missing.toml"),
        "missing_parent": str(tmp / "no" / "such" / "x.sqlite"),
        "fifo": str(fifo),
        "devnull": os.devnull,
        "too_long": str(tmp / ("d" * 200) / ("e" * 200) / ("f" * 200) / ("g" * 200)) * 6,
        "long_component": str(tmp / ("n" * 300)),
        "garbage": str(tmp / "garbage.toml"),
        "binary": str(tmp / "binary"),
        "empty_file": str(tmp / "empty_file"),
        "empty": "",
        "blank": "  ",
        "nul": str(tmp / "a\x00b"),
        "newline": str(tmp / "a\nb"),
        "symlink_loop": str(loop),
        "file_as_parent": str(tmp / "afile" / "x"),
        "rtl": str(tmp / "\u202eevil"),
        "surrogate": str(tmp / "\udcff.toml"),
    }


def _is_path(p: click.Parameter) -> bool:
    return isinstance(p.type, click.Path) or p.name in ("preset_or_file", "record_ref", "bot")


def _is_flag(p: click.Parameter) -> bool:
    return isinstance(p, click.Option) and (p.is_flag or p.count)


def _values(p: click.Parameter) -> st.SearchStrategy[str]:
    """Near-miss values for parameter ``p``, by its type; a path's are PATH_KINDS names,
    marked ``@kind``, resolved once the example's directory exists."""
    t = p.type
    if _is_flag(p):
        return st.sampled_from(["", "=1", "=x"])  # (a flag given a value: "--json=1")
    out: list[str] = []
    if isinstance(t, click.Choice):
        choices = [str(c) for c in t.choices]
        out += choices + [c.upper() for c in choices] + [choices[0] + "\x00", choices[0][:-1]]
        out += TEXT
    elif isinstance(t, (click.IntRange, click.FloatRange)):
        out += NUMBERS
        for bound in (t.min, t.max):
            if bound is not None:
                out += [str(bound), str(bound - 1), str(bound + 1)]
    elif isinstance(t, (click.types.IntParamType, click.types.FloatParamType)):
        out += NUMBERS
    else:
        out += TEXT
    strategy: st.SearchStrategy[str] = st.sampled_from(out)
    if _is_path(p):
        strategy = st.sampled_from([f"@{k}" for k in PATH_KINDS]) | strategy
    return strategy


# --- the argument vectors -------------------------------------------------------------------


def _base(prog: str, path: tuple[str, ...], where: Path, db: Path) -> list[str]:
    """Valid values of what a command needs, so that one bad value is the only fault."""
    cmd = (prog, *path)
    tokens = where / "tokens.toml"
    tokens.write_text('[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', encoding="utf-8")
    config = where / "t.toml"
    config.write_text(
        f'name = "fuzz"\nbots = ["random", "heuristic", "counting"]\nmax_deals = 2\n'
        f'db = "{where / "t.sqlite"}"\nout = "{where / "out"}"\n',
        encoding="utf-8",
    )
    bases: dict[tuple[str, ...], list[str]] = {
        ("arena", "rules"): ["classic"],
        ("arena", "replay"): ["--db", str(db), "--list"],
        ("arena", "leaderboard"): ["--db", str(db)],
        ("arena", "web"): ["--db", str(db), "--port", "0"],
        ("arena", "serve"): ["--tokens", str(tokens), "--port", "0",
                             "--record-dir", str(where / "records")],
        ("arena", "tournament"): ["--config", str(config)],
        ("arena", "bench"): ["--seconds", "0.01"],
        ("arena-bot", "run"): ["random", "--token", "t1", "--arena", "127.0.0.1:9"],
        ("arena-bot", "try"): ["random", "-n", "1", "--max-deals", "1"],
        ("arena-bot", "human"): ["-n", "1", "--max-deals", "1"],
    }  # fmt: skip
    return bases.get(cmd, [])


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[int, list[tuple[str, str, str]]]:
    """(index into COMMANDS, edits): each edit is (kind, option or "", value)."""
    i = draw(st.integers(0, len(COMMANDS) - 1))
    cmd = COMMANDS[i][2]
    params = [p for p in cmd.params if not getattr(p, "hidden", False)]
    edits: list[tuple[str, str, str]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["value"] * 6 + ["repeat", "foreign", "dashdash", "stray", "dangling"])
        )
        if kind in ("value", "repeat", "dangling") and params:
            p = draw(st.sampled_from(params))
            edits.append((kind, p.name or "", draw(_values(p))))
        elif kind == "foreign":
            edits.append((kind, draw(st.sampled_from(ALL_OPTIONS)), draw(st.sampled_from(TEXT))))
        else:
            edits.append((kind, "", draw(st.sampled_from(TEXT))))
    return i, edits


def _argv(
    i: int, edits: list[tuple[str, str, str]], where: Path, db: Path
) -> tuple[list[str], list[str]]:
    """The argument vector (without the program), and what a refusal may name."""
    prog, path, cmd = COMMANDS[i]
    paths = _paths(where)
    args = _base(prog, path, where, db)
    # A stray positional may be taken as the command's own argument.
    names: list[str] = [p.human_readable_name for p in cmd.params if isinstance(p, click.Argument)]
    by_name = {p.name: p for p in cmd.params}
    for kind, name, raw in edits:
        value = paths[raw[1:]] if raw.startswith("@") else raw
        if kind in ("value", "repeat", "dangling"):
            p = by_name[name]
            names += [*p.opts, p.human_readable_name, str(p.name), value]
            if isinstance(p, click.Argument):
                # An argument in place of the base's (the first positional of the base).
                if args and not args[0].startswith("-") and p.nargs == 1:
                    args = [value, *args[1:]]
                else:
                    args += [value]
                continue
            opt = p.opts[-1]
            if _is_flag(p):
                args += [opt + value] * (2 if kind == "repeat" else 1)
            elif kind == "dangling":
                args += [opt]
                continue
            elif kind == "repeat":
                args += [opt, value, opt, value]
            else:
                args += [opt, value]
        elif kind == "foreign":
            names += [name, value, "extra argument"]  # (a flag here: the value is extra)
            args += [name, value]
        elif kind == "dashdash":
            names += ["--", value, "argument", "extra"]
            args += ["--", value]
        else:
            names += [value, "argument", "extra"]
            args += [value]
    return [*path, *args], names


# --- running them ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clifuzz") / "demo.sqlite"
    make_demo_db(path, matches=2, max_deals=2)
    return path


@pytest.fixture(scope="module")
def stubs() -> Iterator[None]:
    """What would serve, connect, play, benchmark or wait for a bot: raises _WouldRun."""

    def would_run(*args: Any, **kw: Any) -> Any:
        raise _WouldRun

    async def would_serve(*args: Any, **kw: Any) -> Any:
        raise _WouldRun

    import arena.cli.bench
    import arena.cli.serve
    import arena.cli.tournament
    import arena.web
    import sdk.client
    import sdk.local

    mp = pytest.MonkeyPatch()
    mp.setattr(arena.cli.serve, "_serve", would_serve)
    mp.setattr(arena.cli.tournament, "run", would_run)
    mp.setattr(arena.cli.bench, "run_sections", would_run)
    mp.setattr(arena.web, "make_server", would_run)
    mp.setattr(sdk.client, "run", would_run)
    mp.setattr(sdk.local, "play_series", would_run)
    yield
    mp.undo()


def _children() -> set[int]:
    me = str(os.getpid())
    out: set[int] = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if (d / "stat").read_text().rpartition(")")[2].split()[1] == me:
                    out.add(int(d.name))
    return out


def _tree() -> set[str]:
    """The repository's files, but caches: nothing may be written there."""
    skip = {".venv", ".git", ".hypothesis", "__pycache__", ".pytest_cache", ".mypy_cache",
            ".ruff_cache"}  # fmt: skip
    out: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in skip]
        out.update(os.path.join(dirpath, f) for f in filenames)
    return out


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """The commands configure logging (``basicConfig``, levels, filters) for their process;
    in-process, that would outlast them: a later test would log at DEBUG, slower."""
    loggers = [logging.root, *(v for v in logging.Logger.manager.loggerDict.values()
                               if isinstance(v, logging.Logger))]  # fmt: skip
    kept = [(lg, lg.level, lg.handlers[:], lg.filters[:], lg.propagate) for lg in loggers]
    try:
        yield
    finally:
        for lg, level, handlers, filters, propagate in kept:
            lg.setLevel(level)
            lg.handlers[:], lg.filters[:], lg.propagate = handlers, filters, propagate


@pytest.fixture(scope="module")
def untouched() -> Iterator[None]:
    before, children = _tree(), _children()
    yield
    assert _tree() == before, sorted(_tree() ^ before)[:10]
    assert _children() <= children, "a process was left running"


def _alarm(signum: int, frame: Any) -> None:
    raise TimeoutError(f"a command line ran for {HANG_S} s")


def check(
    i: int, edits: list[tuple[str, str, str]], tmp: Path, db: Path, tally: Counter[str]
) -> None:
    prog = COMMANDS[i][0]
    where = Path(tempfile.mkdtemp(dir=tmp))  # (one per example: shrinking runs it again)
    argv, names = _argv(i, edits, where, db)
    runner = CliRunner(env={"HOME": str(where), "ARENA_TOKEN": None, "ARENA_ADDRESS": None})
    # (`arena serve --db` ignores the stop signals while it closes its database: for its
    # process; in this one they are put back)
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        cwd = os.getcwd()
        os.chdir(where)
        try:
            with _logging_kept():
                r = runner.invoke(GROUPS[prog], argv, color=True)  # (escapes not stripped)
        finally:
            os.chdir(cwd)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    tally["cli command lines tried"] += 1
    shown = f"{prog} {argv!r:.600}\n{r.output[-3000:]}"
    if isinstance(r.exception, _WouldRun):
        tally["cli command lines accepted"] += 1
        return
    assert r.exception is None or isinstance(r.exception, SystemExit), (
        shown + "\n" + "".join(traceback.format_exception(r.exception))
    )
    assert r.exit_code in EXIT_CODES, shown
    assert "Traceback" not in r.output, shown
    # What the user gave is quoted with its escapes written out (not obeyed by a terminal).
    assert not {c for n in names for c in n if c in OBEYED} & set(r.output), shown
    if r.exit_code in (1, 2) and len(edits) == 1:
        tally["cli command lines refused"] += 1
        text = r.output.lower()
        forms = {repr(n) for n in names}  # ('' named as such)
        forms |= {f for n in names if n.strip() for f in (n, repr(n)[1:-1], printable(n))}
        assert any(f.lower()[:60] in text for f in forms), shown


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=command_lines())
def test_command_lines_fail_cleanly(
    case: tuple[int, list[tuple[str, str, str]]],
    tmp_path: Path,
    db: Path,
    stubs: None,
    untouched: None,
    tally: Counter[str],
) -> None:
    check(*case, tmp_path, db, tally)


@pytest.mark.slow
@pytest.mark.timeout(1500)  # 5,000 command lines: past the default 300 s on a busy machine
@settings(
    max_examples=5_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=command_lines())
def test_command_lines_fail_cleanly_long(
    case: tuple[int, list[tuple[str, str, str]]],
    tmp_path: Path,
    db: Path,
    stubs: None,
    untouched: None,
    tally: Counter[str],
) -> None:
    check(*case, tmp_path, db, tally)


def test_every_command_is_fuzzed() -> None:
    """Discovery found every subcommand (a group that lists none would fuzz nothing)."""
    found = {(prog, *path) for prog, path, _ in COMMANDS}
    assert {("arena", "serve"), ("arena", "tournament"), ("arena-bot", "run"),
            ("arena-bot", "try")} <= found  # fmt: skip


# --- a few as real processes ----------------------------------------------------------------


def _run(args: list[str | bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    env.pop("ARENA_TOKEN", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize(
    "args",
    [
        ["arena", "rules", b"\xff\xfe.toml"],
        ["arena", "leaderboard", "--db", "@fifo"],
        ["arena", "serve", "--tokens", "@fifo", "--port", "0"],
        ["arena", "tournament", "--config", b"\xfe.toml"],
        ["arena-bot", "try", b"\xff.py:Bot"],
        ["arena-bot", "run", "random", "--token", b"\xff", "--arena", b"h\xff:1"],
    ],
    ids=lambda a: " ".join(str(x) for x in a),
)
def test_real_processes(args: list[str | bytes], tmp_path: Path) -> None:
    """A non-UTF-8 argv (as a shell passes bytes) and a FIFO, in a real process."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    prog = {"arena": "arena.cli", "arena-bot": "sdk.cli"}[str(args[0])]
    argv: list[str | bytes] = [sys.executable, "-m", prog]
    argv += [str(fifo) if a == "@fifo" else a for a in args[1:]]
    r = _run(argv, tmp_path)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in (1, 2), err
    assert b"Traceback" not in r.stderr, err
    assert "Error" in err or "error" in err, err
