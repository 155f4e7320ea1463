"""Mutation review of round 36's changes: each test kills a hand-made mutant of the code
changed that day that the earlier tests let live (named in its docstring). No defect was
found by them; they pin the behaviour checked.
"""

from __future__ import annotations

import asyncio
import importlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.storage import StorageError
from tests.arena.test_storage import _record, _save, _setup

ROOT = Path(__file__).resolve().parents[2]


# --- arena/storage.py: the overwritten-in-place mark ----------------------------------------


def test_a_database_cut_short_copied_in_place_is_refused(tmp_path: Path) -> None:
    """A copy cut short of another database (its first page only: SQLite says "database
    disk image is malformed", code 11, not "not a database", 26) copied over the file in
    place is another database too: the next write is refused and the file left as copied.
    (Mutant killed: only code 26 taken for "not this database".)"""
    setup, save, record = _setup, _save, _record
    other = tmp_path / "other.sqlite"
    with setup(other, "o1") as o:
        save(o, 0, record(seed=5), "o1")
        o.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cut = other.read_bytes()[:4096]
    db = tmp_path / "arena.sqlite"
    st = setup(db)
    try:
        save(st, 0, record(seed=1))
        with open(db, "r+b") as fh:  # in place, as cp does
            fh.truncate(0)
            fh.write(cut)
        with pytest.raises(StorageError, match="overwritten in place"):
            save(st, 1, record(seed=2))
        assert st.file_lost
    finally:
        st.close()
    assert db.read_bytes() == cut


def test_a_mark_not_yet_checkpointed_into_the_file_is_no_overwrite(tmp_path: Path) -> None:
    """A reader's open transaction keeps the mark set on opening in the log (the checkpoint
    cannot copy it past the reader's snapshot): the file's header shows no mark yet, which
    is not taken for another database: the writes go on, and are there after. (Mutant
    killed: a header without this mark refused before it ever showed the mark.)"""
    setup, save, record = _setup, _save, _record
    db = tmp_path / "arena.sqlite"
    setup(db).close()
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 0")
    c.close()
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM matches").fetchone()
        st = setup(db)
        try:
            save(st, 0, record(seed=1))
            save(st, 1, record(seed=2))
            assert not st.file_lost
            raw = db.read_bytes()[60:64]
            assert raw == b"\0\0\0\0"  # (the mark is in the log only)
        finally:
            st.close()
    finally:
        reader.rollback()
        reader.close()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 2
    c.close()


# --- arena/protocol.py: a view with more deal results than deals ----------------------------


def test_a_view_may_hold_one_result_per_earlier_deal_and_no_more() -> None:
    """The limit is exact: a view of deal 4 holds 3 results (accepted), one of deal 3 the
    same 3 is refused. (Mutant killed: one result more than the deals before allowed.)"""
    from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
    from tests.review.test_smalls_round36 import _real_view

    view = _real_view(3)
    msg = view_to_pb(view)
    assert msg.deal_number == 3 and len(msg.deal_results) == 3
    assert len(view_from_pb(msg, view.ruleset).deal_results) == 3
    msg.deal_number = 2
    with pytest.raises(MalformedMessageError, match=r"^view\.deal_results: 3 results of "
                       r"earlier deals in a view of deal 3$"):  # fmt: skip
        view_from_pb(msg, view.ruleset)


# --- arena/tournament/runner.py: the runner's lines in a bot's log ---------------------------


def _start_and_wait(log: Path) -> str:
    from arena.tournament.config import parse_config
    from arena.tournament.runner import _BotProcess

    spec = parse_config({"bots": ["random", "heuristic", "counting"]}).bots[0]
    bp = _BotProcess(spec, [sys.executable, "-c", "print('new run line')"], "tok", log)

    async def go() -> None:
        await bp.start()
        assert bp.proc is not None
        await bp.proc.wait()
        await bp.stop()

    asyncio.run(go())
    return log.read_text()


def test_a_bots_start_line_follows_an_earlier_runs_half_line_on_a_line_of_its_own(
    tmp_path: Path,
) -> None:
    """An earlier run's bot left half a line (the run killed): this run's "--- 12:00:00
    starting" line begins a line of its own; a new log starts with it, no empty line
    first. (Mutants killed: no line break before the start line; a line break written
    into an empty log.)"""
    log = tmp_path / "logs" / "x.log"
    log.parent.mkdir()
    log.write_text("old line\nhalf a line")
    lines = _start_and_wait(log).splitlines()
    assert lines[:2] == ["old line", "half a line"], lines
    assert lines[2].startswith("--- ") and lines[2].endswith(" starting random"), lines
    fresh = tmp_path / "logs" / "y.log"
    text = _start_and_wait(fresh)
    assert text.startswith("--- ") and text.splitlines()[0].endswith(" starting random"), text


def test_line_break_is_needed_only_inside_a_line(tmp_path: Path) -> None:
    """``_line_break``: nothing for an empty log or one ending a line, a newline for one
    ending inside a line."""
    from arena.tournament.runner import _line_break

    path = tmp_path / "l.log"
    for content, want in ((b"", b""), (b"a\n", b""), (b"a", b"\n"), (b"\n", b"")):
        path.write_bytes(content)
        with open(path, "ab+") as fh:
            assert _line_break(fh) == want, content


# --- arena/tournament/runner.py: the tail cut per line, the #! problems named ----------------


def test_a_tail_line_is_cut_past_its_head_and_end_and_the_words_it_takes() -> None:
    """``_cut_line`` keeps a line of 150 + 350 + 40 characters whole (cutting 40 would save
    nothing over the words saying so) and cuts one of 541 to its first 150 and last 350
    characters, saying 41 were cut. (Mutants killed: any cut made; the bound moved by one;
    the head and the end swapped.)"""
    from arena.tournament.runner import _cut_line

    whole = "h" * 150 + "m" * 40 + "e" * 350
    assert _cut_line(whole) == whole
    line = "h" * 150 + "m" * 41 + "e" * 350
    assert _cut_line(line) == "h" * 150 + " ... 41 characters cut ... " + "e" * 350


def _launch(tmp_path: Path, script: bytes, e: OSError, mode: int = 0o755) -> str:
    from arena.tournament.runner import _launch_error

    bot = tmp_path / "bot.sh"
    bot.write_bytes(script)
    bot.chmod(mode)
    return _launch_error("./bot.sh", e, tmp_path)


def test_a_shebang_is_read_as_the_kernel_reads_it(tmp_path: Path) -> None:
    """The interpreter is the #! line's first word past spaces and tabs after ``#!``, up to
    a space or a tab: its carriage return is told only when it ends that word. (Mutants
    killed: the spaces after #! kept; a tab not taken as the end of the word.)"""
    missing = FileNotFoundError(2, "No such file or directory")
    crlf = "the line ends in a carriage return"
    said = _launch(tmp_path, b"#! /no/such/sh\r\nexit 0\r\n", missing)
    assert said.startswith("its interpreter (the #! line: /no/such/sh) was not found"), said
    assert crlf in said
    said = _launch(tmp_path, b"#!/no/such/sh\t-x\r\nexit 0\r\n", missing)
    assert said == "its interpreter (the #! line: /no/such/sh\\x09-x) was not found", said


def test_a_permission_error_blames_the_interpreter_only_when_it_is_not_executable(
    tmp_path: Path,
) -> None:
    """A PermissionError names the interpreter only for an executable script whose
    interpreter is a file not executable: an interpreter that is executable, or a script
    that is not, is the script's problem. (Mutants killed: the interpreter's execute bit
    not checked; the script's not checked.)"""
    import os

    denied = PermissionError(13, "Permission denied")
    plain = tmp_path / "plain"
    plain.write_text("")
    plain.chmod(0o644)
    said = _launch(tmp_path, f"#!{sys.executable}\nexit 0\n".encode(), denied)
    assert "interpreter" not in said and said.startswith("Permission denied"), said
    if os.access(tmp_path / "bot.sh", os.X_OK) and not os.access(plain, os.X_OK):
        said = _launch(tmp_path, f"#!{plain}\nexit 0\n".encode(), denied, mode=0o644)
        assert said.startswith("Permission denied: the file is not executable"), said
        said = _launch(tmp_path, f"#!{plain}\nexit 0\n".encode(), denied)
        assert said == f"its interpreter (the #! line: {plain}) is not executable", said


# --- sdk/local.py: raise_site, _shared_defaults -----------------------------------------------


def test_an_installed_librarys_error_is_placed_at_the_bots_line() -> None:
    """A bot's call of an installed library (site-packages) that raises there is placed at
    the bot's line, not the library's. (Mutants killed: the first pass, which skips the
    installed libraries, dropped; the installed libraries left out of it.)"""
    import click

    from sdk.local import raise_site

    try:
        click.IntRange(3, 4).convert("x", None, None)  # the bot's line
    except click.BadParameter as e:
        assert e.__traceback__ is not None
        site = raise_site(e.__traceback__)
    assert site.filename == __file__ and site.name == (
        "test_an_installed_librarys_error_is_placed_at_the_bots_line"
    )


DECORATOR = """import functools


def keep(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper
"""

DEFAULTS_BOT = """from sdk import Bot
from keep_deco import keep

WEIGHTS = [1, 2]
seen_by_all = []


class Wrapped(Bot):
    @keep
    def __init__(self, weights=WEIGHTS):
        super().__init__()
        self.weights = weights


class Shared(Bot):
    def __init__(self, seen=seen_by_all):
        super().__init__()
        self.seen = seen
"""


def test_init_defaults_a_decorated_init_and_a_lowercase_module_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A constant in capitals is found in the module of an ``__init__`` wrapped by a
    decorator from another module (no warning); a module-level list named in lower case
    given as a default is shared state (warned of). (Mutants killed: the wrapper's module
    searched; every mutable of the module taken as a constant.)"""
    from sdk.local import _shared_defaults

    (tmp_path / "keep_deco.py").write_text(DECORATOR)
    (tmp_path / "defaults_bot.py").write_text(DEFAULTS_BOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("defaults_bot")
    monkeypatch.delitem(sys.modules, "defaults_bot")
    monkeypatch.delitem(sys.modules, "keep_deco")
    assert _shared_defaults(module.Wrapped) == []
    warned = _shared_defaults(module.Shared)
    assert len(warned) == 1 and "gives seen a list as its default" in warned[0], warned


# --- sdk/cli.py: try --records ---------------------------------------------------------------


def test_a_record_write_stopped_by_ctrl_c_leaves_no_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the record is put in its place: the interrupt goes on, the record there
    before is kept and no ``.part`` file is left in the directory. (Mutant killed: the part
    file left on anything but an OSError.)"""
    from types import SimpleNamespace

    import sdk.cli

    (tmp_path / "m1.json").write_text('{"old": true}')

    def interrupted(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sdk.cli.os, "replace", interrupted)
    match: Any = SimpleNamespace(record={"new": True}, incidents=(), chosen=())  # (none to list)
    with pytest.raises(KeyboardInterrupt):
        sdk.cli._write_record(tmp_path, [], "m1", match)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m1.json"]
    assert (tmp_path / "m1.json").read_text() == '{"old": true}'


def test_a_bot_installed_in_a_virtual_environment_is_placed_at_its_line() -> None:
    """Defect (found by this review: the mutants dropping the installed libraries from the
    first pass lived): in a virtual environment the installed libraries are inside its
    ``platstdlib`` (``.venv/lib/python3.11/site-packages``), taken for Python's own library,
    so a bot installed there with pip (``pip install mybot`` in a venv, as an author does)
    was skipped by every pass: an SDK helper's error it made was placed in the engine, and
    ``bot_site`` said it was none of the bot's. Its lines are its own now, wherever the
    installed libraries are; an installed library's error is placed at the bot's line."""
    import sysconfig

    import click

    import sdk.local
    from sdk.local import bot_site, raise_site

    filename = str(Path(sysconfig.get_path("purelib")) / "pip_venv_bot_r36.py")
    code = (
        "from sdk import hand\n"
        "\n"
        "def misuse():\n"
        "    hand.trick_winner([], None)  # the bot's line\n"
        "\n"
        "def caught():\n"
        "    try:\n"
        "        misuse()\n"
        "    except ValueError as e:\n"
        "        return e\n"
    )
    space: dict[str, Any] = {"__name__": "pip_venv_bot_r36"}
    exec(compile(code, filename, "exec"), space)  # (its frames name that file; none written)
    error = space["caught"]()
    assert isinstance(error, ValueError) and error.__traceback__ is not None
    place = raise_site(error.__traceback__)
    assert (place.filename, place.name, place.lineno) == (filename, "misuse", 4)
    assert bot_site(error) == place
    try:  # (an installed library raising: the bot's line, as before)
        click.IntRange(3, 4).convert("x", None, None)
    except click.BadParameter as e:
        assert e.__traceback__ is not None
        assert raise_site(e.__traceback__).filename == __file__
    assert sdk.local._in_stdlib(sysconfig.get_path("stdlib") + "/random.py")


def test_a_restart_whose_log_fails_after_opening_plays_with_output_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart whose log opens but cannot be written (a full disk) closes it and starts
    the bot with its output dropped, not on the closed file. (Mutant killed: the closed
    log kept as the bot's output.)"""
    import errno

    from arena.tournament import runner
    from arena.tournament.config import parse_config

    def full(fh: Any) -> bytes:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runner, "_line_break", full)
    spec = parse_config({"bots": ["random", "heuristic", "counting"]}).bots[0]
    log = tmp_path / "logs" / "x.log"
    bp = runner._BotProcess(spec, [sys.executable, "-c", "print('dropped')"], "tok", log)
    bp.restarts = 1

    async def go() -> int | None:
        await bp.start()
        assert bp.proc is not None
        code = await bp.proc.wait()
        await bp.stop()
        return code

    assert asyncio.run(go()) == 0
    assert log.read_text() == ""


def test_a_write_after_the_overwrite_was_said_writes_nothing_beside_it(tmp_path: Path) -> None:
    """Once the overwrite was said, a caller that writes again gets no second error and no
    copy of the lost file written back beside the path: the file copied there is left
    alone. (Mutant killed: the said-once check dropped, so the next write took the file
    for a replaced one and wrote the lost database back beside it.)"""
    setup, save, record = _setup, _save, _record
    other = tmp_path / "other.sqlite"
    setup(other, "o1").close()
    copied = other.read_bytes()
    db = tmp_path / "arena.sqlite"
    st = setup(db)
    try:
        save(st, 0, record(seed=1))
        with open(db, "r+b") as fh:
            fh.truncate(0)
            fh.write(copied)
        with pytest.raises(StorageError, match="overwritten in place"):
            save(st, 1, record(seed=2))
        before = sorted(p.name for p in tmp_path.iterdir())
        try:
            save(st, 2, record(seed=3))
        except StorageError as e:
            pytest.fail(f"said twice: {e}")
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    finally:
        st.close()
    assert db.read_bytes() == copied
