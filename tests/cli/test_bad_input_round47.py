"""Bad input, round 47: an organiser who makes every mistake, on every command.

In-process through click's CliRunner (``arena`` and ``arena-bot``), as
``tests/cli/test_bad_input.py``: each mistake ends in one line naming the file, option or
key and what was wrong, a documented exit code, and nothing stored is changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.cli import main as arena
from arena.storage import Storage, StorageError
from sdk.cli import main as arena_bot
from tests.cli.test_bad_input import BOTS, _fails, _invoke, _toml


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
