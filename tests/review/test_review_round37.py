"""Review of the whole product diff of round 36 (``72c9f07..``), read by a reviewer new to it:
the runner's launch errors and bot logs, the storage's overwritten-in-place check, the
SDK's ``raise_site``, warnings and ``try --records``, the protocol's early refusal, ``arena
rules --players``, the bots' passing and ``estimate_take``.

Defects found and fixed (each test's docstring says what happened before):

- a bot whose ``cwd`` could not be entered at a launch (the directory removed or renamed
  since the config was read: a restart mid-run) was said to be "built for another system":
  the child's failed ``chdir`` is a "No such file or directory" too, and the checks for a
  missing ``#!`` interpreter or ELF loader took it for theirs (a Python bot's interpreter
  "its loader (/lib64/ld-linux-x86-64.so.2 ...) was not found"; a script "its interpreter
  (the #! line: /bin/sh) was not found");
- a command that is a symbolic link to a file that is not there was only "No such file or
  directory (looked for in DIR)", where ``ls`` shows it;
- a command's "Exec format error" (a script with no ``#!`` line, one whose ``#!`` follows
  a UTF-8 byte-order mark, a program built for another architecture) named none of them;
- a launch error whose file could not be looked at (a command word too long for the
  system, a directory not searchable) raised ``OSError`` out of the launch's own error
  handling: a start's printed a bare "Error: aaaa...", a restart's ended the supervision
  of every bot (no TournamentError for ``_restart`` to catch);
- a command's script with Windows line endings under ``#!/usr/bin/env python3`` (env
  runs, looks for ``python3\\r`` and exits with code 127) stopped the run on env's own
  words only ("use -[v]S to pass options in shebang lines"); round 36 named the carriage
  return only where the kernel failed;
- a ``deal_ended`` event repeated without end (or out of order) was said in a warning
  line per event: round 36 capped the repeats of actions and talons at five a match, as
  docs/protocol.md says of every repeat, but not these;
- ``raise_site`` took only the install scheme's ``site-packages`` for the installed
  libraries: a Debian Python's packages (``/usr/lib/python3/dist-packages``), a
  ``--system-site-packages`` environment's base, the user's ``~/.local`` were taken for
  the bot's own code, and a library's line named instead of the bot's.
"""

from __future__ import annotations

import asyncio
import site
import subprocess
import sys
from pathlib import Path
from types import TracebackType

import pytest

from arena.tournament import runner
from sdk import local


def _said(argv: list[str], cwd: Path) -> str:
    """What the runner says of ``argv`` launched from ``cwd``, from the real error of the
    launch the runner makes (asyncio's, as :meth:`_BotProcess.start`)."""

    async def launch() -> OSError:
        try:
            proc = await asyncio.create_subprocess_exec(*argv, cwd=str(cwd))
        except OSError as e:
            return e
        await proc.wait()
        raise AssertionError(f"{argv} started from {cwd}")

    return runner._launch_error(argv[0], asyncio.run(launch()), cwd)


# ------------------------------------------------------------------- launch errors


def test_a_python_bot_whose_cwd_is_gone_is_not_said_to_be_built_elsewhere(
    tmp_path: Path,
) -> None:
    """A bot's ``cwd`` removed after the config was read (a restart mid-run): the child's
    chdir fails with "No such file or directory". Before: the Python interpreter (an ELF
    that is there) was said to name a missing loader, "a program built for another
    system"; now the directory is named."""
    gone = tmp_path / "botdir"
    said = _said([sys.executable, "-c", "pass"], gone)
    assert said == (
        f"its working directory (cwd) {gone} cannot be entered: No such file or directory"
    ), said


def test_a_script_bot_whose_cwd_is_gone_is_not_said_to_lack_its_interpreter(
    tmp_path: Path,
) -> None:
    """The same for a ``#!/bin/sh`` script named by its absolute path. Before: "its
    interpreter (the #! line: /bin/sh) was not found"."""
    bot = tmp_path / "bot.sh"
    bot.write_text("#!/bin/sh\nexit 0\n")
    bot.chmod(0o755)
    gone = tmp_path / "gone"
    said = _said([str(bot)], gone)
    assert said == (
        f"its working directory (cwd) {gone} cannot be entered: No such file or directory"
    ), said


def test_a_cwd_that_became_a_file_is_named(tmp_path: Path) -> None:
    """A ``cwd`` replaced by a file. Before: "Not a directory" alone, naming neither the
    directory nor that it is the bot's ``cwd``; now both."""
    blocker = tmp_path / "botdir"
    blocker.write_text("")
    said = _said([sys.executable, "-c", "pass"], blocker)
    assert said == f"its working directory (cwd) {blocker} cannot be entered: Not a directory"


def test_a_dangling_symlink_command_names_its_target(tmp_path: Path) -> None:
    """``command = ["./bot.sh"]`` where bot.sh links to a file that was removed. Before:
    "No such file or directory (looked for in DIR)", where the name is; now the missing
    target is named."""
    (tmp_path / "bot.sh").symlink_to("build/bot.sh")
    said = _said(["./bot.sh"], tmp_path)
    assert said == (
        "No such file or directory: it is a symbolic link to build/bot.sh, which is not there"
    ), said


def test_a_symlink_to_a_script_with_a_missing_interpreter_names_the_interpreter(
    tmp_path: Path,
) -> None:
    """Pin: a link to a script that is there, whose ``#!`` interpreter is missing, is said
    of the interpreter (the link followed), not of the link."""
    real = tmp_path / "real.sh"
    real.write_text("#!/nonexistent/sh\nexit 0\n")
    real.chmod(0o755)
    (tmp_path / "bot.sh").symlink_to("real.sh")
    said = _said(["./bot.sh"], tmp_path)
    assert said == "its interpreter (the #! line: /nonexistent/sh) was not found", said


def test_a_hashbang_with_env_s_and_arguments_names_the_whole_line(tmp_path: Path) -> None:
    """Pin: ``#!/missing/env -S python3 -u``: the kernel takes the first word, and the
    line shown is the whole of it (its arguments too), with no carriage-return advice."""
    bot = tmp_path / "bot.py"
    bot.write_text("#!/missing/env -S python3 -u\npass\n")
    bot.chmod(0o755)
    said = _said(["./bot.py"], tmp_path)
    assert said == "its interpreter (the #! line: /missing/env -S python3 -u) was not found"


def test_a_crlf_hashbang_with_arguments_is_not_said_to_end_in_a_carriage_return(
    tmp_path: Path,
) -> None:
    """Pin: ``#!/missing/python3 -u\\r\\n``: the carriage return ends an argument, not the
    interpreter's name, so the interpreter is simply not found (no CRLF advice, which
    would be wrong: with the interpreter there the script runs)."""
    bot = tmp_path / "bot.py"
    bot.write_bytes(b"#!/missing/python3 -u\r\npass\r\n")
    bot.chmod(0o755)
    said = _said(["./bot.py"], tmp_path)
    assert said == "its interpreter (the #! line: /missing/python3 -u) was not found", said


# ------------------------------------------------------------------- raise_site


def _traceback(bot_file: Path, lib_file: Path) -> TracebackType:
    """A traceback of the bot's line calling a library that raises (both compiled under
    their names, as imported code is)."""
    lib: dict[str, object] = {}
    exec(compile("def helper():\n    raise ValueError('bad')\n", str(lib_file), "exec"), lib)
    bot: dict[str, object] = {"helper": lib["helper"]}
    exec(compile("def act():\n    helper()\n", str(bot_file), "exec"), bot)
    try:
        bot["act"]()  # type: ignore[operator]
    except ValueError as e:
        assert e.__traceback__ is not None
        return e.__traceback__
    raise AssertionError("no error")


def test_raise_site_skips_every_site_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library installed where :mod:`site` puts packages but the install scheme does not
    (a Debian Python's ``/usr/lib/python3/dist-packages``; a ``--system-site-packages``
    venv's base). Before: ``_SITE`` held the scheme's directory alone, and a library
    raising there was named as the bot's line; now every site directory is one of the
    installed libraries, and the bot's own line is named."""
    dist = tmp_path / "usr/lib/python3/dist-packages"
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(dist)])
    dirs = local._installed_libraries()
    assert str(dist) in dirs
    # (the module's constants are made from it at import: made again here as they would be)
    monkeypatch.setattr(local, "_SITE", dirs)
    monkeypatch.setattr(local, "_NOT_THE_BOTS", (*local._STDLIB, *dirs, *local._THE_ARENAS))
    bot_file = tmp_path / "mybot.py"
    tb = _traceback(bot_file, dist / "numpy/core.py")
    frame = local.raise_site(tb)
    assert (frame.filename, frame.lineno) == (str(bot_file), 2)


def test_the_installed_libraries_hold_this_pythons_site_directories() -> None:
    """Pin: the running interpreter's site directories are all among the installed
    libraries (and its own library, outside them, is not)."""
    for d in getattr(site, "getsitepackages", list)():
        assert d in local._SITE
    if site.ENABLE_USER_SITE:
        assert site.getusersitepackages() in local._SITE
    assert not any(d == p for d in local._SITE for p in local._STDLIB)


def test_a_user_site_library_is_not_the_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pip install --user``: ``~/.local/lib/python3.X/site-packages``, when the user site
    is on (outside a venv). Before: not among the installed libraries."""
    user = tmp_path / ".local/lib/python3/site-packages"
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user))
    assert str(user) in local._installed_libraries()


def test_no_site_module_function_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin: an old virtualenv's ``site`` module has no ``getsitepackages``: the scheme's
    directories are used alone, no error at import."""
    monkeypatch.delattr(site, "getsitepackages")
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    import sysconfig

    assert set(local._installed_libraries()) == {
        sysconfig.get_path("purelib"),
        sysconfig.get_path("platlib"),
    }


def test_a_plain_subprocess_launch_from_a_gone_cwd_is_said_alike() -> None:
    """The same error from :mod:`subprocess` (the launch asyncio makes is its): the cwd
    named. Before: its loader, as above."""
    with pytest.raises(OSError) as info:
        subprocess.run([sys.executable, "-c", "pass"], cwd="/nonexistent-dir-r37", check=False)
    said = runner._launch_error(sys.executable, info.value, Path("/nonexistent-dir-r37"))
    assert said.startswith("its working directory (cwd) /nonexistent-dir-r37 cannot be entered")


async def _start_error(p: runner._BotProcess) -> str:
    """The TournamentError that starting ``p`` raises (it is stopped after)."""
    try:
        await p.start()
    except runner.TournamentError as e:
        return str(e)
    finally:
        await p.stop()
    raise AssertionError(f"bot {p.spec.name} started")


def test_a_restart_into_a_removed_cwd_is_given_up_naming_the_cwd(tmp_path: Path) -> None:
    """Through the runner: a command bot started in its ``cwd``, which is then removed; the
    restart fails. Before: its error said the Python interpreter's loader was missing ("a
    program built for another system"); now it names the bot's ``cwd``."""
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _BotProcess

    home = tmp_path / "botdir"
    home.mkdir()
    spec = BotSpec(name="b", kind="command", cwd=home)
    p = _BotProcess(spec, [sys.executable, "-c", "pass"], "t", tmp_path / "b.log")

    async def scenario() -> str:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()
        home.rmdir()
        p.restarts = 1
        return await _start_error(p)

    said = asyncio.run(scenario())
    assert said == (
        f"cannot launch bot 'b' ({sys.executable}): its working directory (cwd) {home} "
        "cannot be entered: No such file or directory"
    ), said
    assert p._fh is None


def test_a_script_without_a_hashbang_is_said_to_lack_one(tmp_path: Path) -> None:
    """``command = ["./bot.py"]``, an executable script with no ``#!`` line (the kernel
    runs none such; a shell would). Before: "Exec format error" alone."""
    bot = tmp_path / "bot.py"
    bot.write_text("print('hi')\n")
    bot.chmod(0o755)
    said = _said(["./bot.py"], tmp_path)
    assert said == (
        "Exec format error: the file has no #! line naming its interpreter (add one, such as "
        "#!/usr/bin/env python3, or name its interpreter first)"
    ), said


def test_a_hashbang_after_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    """A script saved as UTF-8 with a byte-order mark (a Windows editor's): the kernel sees
    no ``#!``. Before: "Exec format error" alone."""
    bot = tmp_path / "bot.sh"
    bot.write_bytes(b"\xef\xbb\xbf#!/bin/sh\nexit 0\n")
    bot.chmod(0o755)
    said = _said(["./bot.sh"], tmp_path)
    assert said == (
        "Exec format error: its #! line follows a byte-order mark (the file is saved as UTF-8 "
        "with BOM: save it without)"
    ), said


def test_a_program_for_another_architecture_is_named(tmp_path: Path) -> None:
    """An ELF program of another machine (here /bin/true with its e_machine made 0, which
    no emulator registered with binfmt_misc takes): the kernel's "Exec format error".
    Before: that alone; now the architecture is named."""
    elf = bytearray(Path("/bin/true").read_bytes())
    if elf[:4] != b"\x7fELF":
        pytest.skip("/bin/true is no ELF program here")
    elf[18:20] = b"\0\0"  # EM_NONE (zero in either byte order)
    bot = tmp_path / "bot"
    bot.write_bytes(bytes(elf))
    bot.chmod(0o755)
    said = _said(["./bot"], tmp_path)
    assert said == (
        "Exec format error: a program built for another architecture (or a damaged one)"
    ), said


def test_a_command_name_too_long_to_look_at_is_a_launch_error(tmp_path: Path) -> None:
    """A command word longer than a file name may be (the config lets it by: the system
    cannot say whether it is a file). Before: looking at it for the reason raised
    ``OSError`` out of the launch's own error handling: the first start printed a bare
    "Error: aaaa...", naming no bot, and a restart's (an ``OSError``, no TournamentError)
    ended the monitor task, the supervision of every bot. Now it is the launch's error."""
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _BotProcess

    program = "./" + "a" * 300
    p = _BotProcess(BotSpec(name="b", kind="command", cwd=tmp_path), [program], "t",
                    tmp_path / "b.log")  # fmt: skip

    said = asyncio.run(_start_error(p))
    assert said == f"cannot launch bot 'b' ({program}): File name too long", said
    assert p._fh is None


# ------------------------------------------------------------------- the SDK's repeats


def test_a_deal_end_repeated_without_end_is_said_a_few_times_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An arena repeating a match's ``deal_ended`` event without end. Round 36 capped the
    warnings of repeated actions and talons at five a match (docs/protocol.md: "with a
    warning for the first five of a match"), but a repeated deal end, or one out of order,
    was still said in a line per event (250 events: 249 lines). Now they count with the
    other repeats of the match; the hook is called once."""
    import logging
    from collections.abc import AsyncIterator

    from arena.v1 import arena_pb2 as pb
    from engine import DealResult
    from tests.sdk.test_hostile_arena import (
        WELCOME,
        Out,
        Stream,
        _game,
        deal_ended,
        ended,
        started,
    )
    from tests.sdk.test_hostile_arena import play as play_against
    from tests.sdk.test_hostile_arena_round2 import Results

    g = _game()
    Results.got = []

    def deal(number: int) -> pb.Event:
        ev = deal_ended("m1")
        ev.deal_ended.deal_number = number
        return ev

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[deal(1)] * 200 + [deal(0)] * 50)
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play_against(Results, script, matches=1)
    assert summary.matches == 1
    assert [r.number for r in Results.got if isinstance(r, DealResult)] == [1]
    said = [r.getMessage() for r in caplog.records if "deal_ended event for deal" in r.getMessage()]
    assert len(said) == 5, said
    assert said[0] == (
        "match m1: deal_ended event for deal 2, whose end (or a later deal's) the bot was told "
        "of already: ignored"
    ), said
    assert said[-1].endswith("(further repeats of this match are ignored unsaid)"), said


# ------------------------------------------------------------------- CRLF under env


def test_a_crlf_script_run_through_env_is_said_to_have_windows_line_endings(
    tmp_path: Path,
) -> None:
    """``#!/usr/bin/env python3`` saved with Windows line endings, the most common
    ``#!`` line of a Python bot: the kernel runs env (which is there), env looks for
    ``python3\\r`` and exits with code 127 before the bot connects. Round 36 named the
    carriage return only when the kernel itself failed (``#!/bin/sh\\r``); here the run
    stopped on env's own words, "use -[v]S to pass options in shebang lines", pointing
    elsewhere. Now the error says the line ends in a carriage return."""
    import json

    from tests.faults.test_faults_round36 import _config, _running

    bot = tmp_path / "bot.py"
    bot.write_bytes(b"#!/usr/bin/env python3\r\nprint('hi')\r\n")
    bot.chmod(0o755)
    bots = {"r1": '"random"', "r2": '"random"', "x": f"{{ command = [{json.dumps(str(bot))}] }}"}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    assert "error: bot 'x' exited with code 127 before connecting" in err, err
    assert (
        "its script's #! line ends in a carriage return (the file has Windows line endings, "
        "CRLF: convert them to LF)"
    ) in err, err


def test_the_crlf_hint_is_given_of_such_a_script_only(tmp_path: Path) -> None:
    """Pin: no hint for a script with LF line endings, a program found on PATH (no file of
    the bot's to read), a missing file, or a carriage return on a later line only."""
    lf = tmp_path / "lf.py"
    lf.write_bytes(b"#!/usr/bin/env python3\nprint('hi')\r\n")
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b"#!/usr/bin/env python3\r\n")
    assert runner._crlf_hint("./lf.py", tmp_path) == ""
    assert runner._crlf_hint("python3", tmp_path) == ""
    assert runner._crlf_hint("./none.py", tmp_path) == ""
    assert runner._crlf_hint("./crlf.py", tmp_path).startswith("\nits script's #! line")
    assert runner._crlf_hint(str(crlf), None).startswith("\nits script's #! line")


def test_a_site_directory_that_is_a_prefix_is_not_an_installed_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pin: Windows' ``site.getsitepackages()`` names the prefix itself (a venv's root, where
    a bot may be kept) beside its ``Lib\\site-packages``: only a ``site-packages`` or
    ``dist-packages`` directory is taken for the installed libraries."""
    venv = tmp_path / "project"
    monkeypatch.setattr(
        site, "getsitepackages", lambda: [str(venv), str(venv / "Lib" / "site-packages")]
    )
    dirs = local._installed_libraries()
    assert str(venv / "Lib" / "site-packages") in dirs and str(venv) not in dirs
