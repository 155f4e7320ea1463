"""What the command-line fuzzer (tests/fuzz/test_cli_fuzz.py) found, each as its minimal
case: the command line, in-process (click's CliRunner), and what it must say."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from arena.web.demo import make_demo_db
from sdk.cli import main as arena_bot


def _refused(r: Result, *named: str) -> str:
    """The error, one line per line, once it is checked to be a clean refusal (exit 2)."""
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    for text in named:
        assert text in r.output, r.output
    return r.output


@pytest.mark.parametrize(
    ("prog", "args", "option"),
    [
        (arena, ["leaderboard", "--db", "a\x00b.sqlite"], "--db"),
        (arena, ["tournament", "--config", "a\x00b.toml"], "--config"),
        (arena, ["serve", "--tokens", "a\x00b.toml"], "--tokens"),
        (arena_bot, ["run", "random", "--token", "t", "--ca", "a\x00b.pem"], "--ca"),
    ],
)
def test_a_path_with_a_nul_is_refused_naming_the_option(
    prog: click.Group, args: list[str], option: str, tmp_path: Path
) -> None:
    """Fuzzer: a path option given a NUL ended in a traceback (ValueError: embedded null
    byte, from click's ``exists`` check) rather than a refusal naming the option. (A shell's
    argv cannot carry a NUL; a program calling the command line in-process can.)"""
    r = CliRunner().invoke(prog, args)
    _refused(r, f"'{option}'", "NUL")


ESC = "\x1b]0;owned\x07"  # sets a terminal's window title


@pytest.mark.parametrize(
    "args",
    [
        ["tournament", "--config", f"{ESC}x.toml"],
        ["leaderboard", "--db", f"{ESC}x.sqlite"],
        ["replay", f"{ESC}x.json", "--db", f"{ESC}x.sqlite"],
        ["replay", "--list", "--db", f"{ESC}x.sqlite"],
    ],
)
def test_an_error_writes_out_the_escapes_of_what_it_quotes(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fuzzer: an error quoted the file name it refused as it was given, escape sequences
    and all (a file name from a glob, from someone else's directory): the terminal obeyed
    them (a window title set, the text recoloured, the line turned right to left)."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(arena, args, color=True)
    out = _refused(r, "\\x1b]0;owned\\x07x.")
    assert "\x1b" not in out and "\x07" not in out


def test_a_config_whose_tournament_is_not_stored_is_named(tmp_path: Path) -> None:
    """Fuzzer: `arena leaderboard --db DB --config EMPTY.toml` said only "no tournament
    'tournament' in DB": neither the --config that chose that name nor that the config does
    not load (it has no bots: the name is the default one)."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--config", str(config)])
    _refused(r, f"--config {config}: no tournament 'tournament'", "does not load now", "bots")


@pytest.mark.parametrize("command", [["leaderboard"], ["replay", "--list"], ["web", "--port", "0"]])
def test_a_fifo_given_as_the_database_is_said_to_be_one(tmp_path: Path, command: list[str]) -> None:
    """Fuzzer: `arena leaderboard --db FIFO` (and replay --list, web) said "no database at
    FIFO (run a tournament first)": there is a file, and it is no regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = CliRunner().invoke(arena, [*command, "--db", str(fifo)])
    assert r.exit_code in (1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"{fifo}: not a regular file" in " ".join(r.output.split()), r.output


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_record_that_is_no_regular_file_is_said_to_be_one(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fuzzer: `arena replay DIR` (a FIFO, /dev/null) said "DIR: no such record file": it
    is there, and no regular file."""
    monkeypatch.chdir(tmp_path)  # (no runs/ here: no database to look a match id up in)
    path = {"directory": str(tmp_path), "fifo": str(tmp_path / "fifo"), "device": "/dev/null"}
    if kind == "fifo":
        os.mkfifo(path[kind])
    r = CliRunner().invoke(arena, ["replay", path[kind]])
    out = _refused(r, f"{path[kind]}: not a regular file")
    assert "no such record file" not in out


def test_the_file_written_is_named_with_its_escapes_written_out(tmp_path: Path) -> None:
    """Fuzzer: `arena leaderboard --out NAME` said "wrote NAME" with NAME's escape
    sequences as they were: the terminal obeyed them."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    out = tmp_path / f"{ESC}x.md"
    r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--out", str(out)], color=True)
    assert r.exit_code == 0, r.output
    assert out.is_file()
    assert "\\x1b]0;owned\\x07x.md" in "".join(r.output.split()), r.output  # (rich wraps)
    assert "\x1b" not in r.output, r.output


def test_paths_a_run_prints_after_it_starts_are_written_out(tmp_path: Path) -> None:
    """Defect (the command-line fuzzer's report: past the point its stubs stop a command):
    `arena tournament` printed its database's and out directory's names raw at the end
    ("stored in ...", "leaderboard: ..."), as `arena serve` and `arena web` printed theirs
    ("storing results in", "records in", "serving"): an escape sequence in a path named by
    a config from elsewhere acted on the organiser's terminal. Written out now, as the
    errors are."""
    from click.testing import CliRunner

    from arena.cli import main

    odd = tmp_path / "a\x1b]0;owned\x07"
    odd.mkdir()
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f'name = "odd"\nseed = 1\nmax_deals = 1\nconcurrency = 3\n'
        f"db = {json.dumps(str(odd / 'r.sqlite'))}\n"
        f'out = {json.dumps(str(odd / "out"))}\n[bots]\na = "random"\nb = "random"\nc = "random"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["tournament", "--config", str(cfg), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "stored in" in " ".join(result.output.split())
    assert "\\x1b]0;owned\\x07" in "".join(result.output.splitlines())  # (rich wraps lines)


@pytest.mark.parametrize(
    ("prog", "args"), [(arena, ["rules", "classic", ""]), (arena_bot, ["try", "random", ""])]
)
def test_an_empty_extra_argument_is_named_as_one(prog: click.Group, args: list[str]) -> None:
    """Click said "Got unexpected extra argument ()": the parentheses read as its syntax."""
    out = _refused(CliRunner().invoke(prog, args))
    assert "unexpected extra argument: '' (an empty one)" in out
    out = _refused(CliRunner().invoke(prog, [*args[:-1], "x"]))
    assert "unexpected extra argument (x)" in out
