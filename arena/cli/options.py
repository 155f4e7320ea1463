"""Option types shared by the ``arena`` and ``arena-bot`` command lines."""

from __future__ import annotations

import codecs
import contextlib
import errno
import itertools
import math
import os
import re
import resource
import shlex
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import click

from arena.addresses import host_problem, is_loopback_host
from arena.render import printable

if TYPE_CHECKING:
    from engine import Ruleset

__all__ = [
    "FileErrorsGroup",
    "Host",
    "HostName",
    "NonEmptyPath",
    "Seconds",
    "comma_names",
    "file_option",
    "hang_up_safe",
    "in_clear_note",
    "no_cap_note",
    "raise_open_files_limit",
    "reading_newest",
    "table_size_note",
]


def reading_newest(db: object) -> str:
    """What a reader says when it picked the newest ``runs/*.sqlite`` itself: which of
    several databases it reads is not obvious (said on stderr; stdout is the output)."""
    return f"reading {db} (the newest runs/*.sqlite; --db to choose)"


def refuse_empty(value: str | None, option: str, what: str = "one") -> None:
    """An option given as an empty (or blank) text is refused, naming the option: it names
    nothing (a shell variable that was not set: ``--tournament "$T"``)."""
    if value is not None and not value.strip():
        raise click.BadParameter(f"empty: name {what}", param_hint=option)


def comma_names(
    values: tuple[str, ...], option: str, what: str, whole: Callable[[str], bool] | None = None
) -> list[str]:
    """The names a repeatable, comma-separated option gives (``--vs a,b --vs c``: a, b and
    c, each stripped), the one reading of ``arena-bot try --vs`` and ``arena replay --list
    --vs``. A value ``whole`` says is one name is not split (a bot file whose name holds a
    comma). An empty name among others (``a,,b``: one left out?) is refused, as are values
    that name nothing, naming the option and ``what`` they name.

    >>> comma_names(("random, heuristic", "counting"), "--vs", "opponent")
    ['random', 'heuristic', 'counting']
    >>> comma_names(("my,bot.py",), "--vs", "opponent", whole=lambda v: v.endswith(".py"))
    ['my,bot.py']
    """
    names: list[str] = []
    for value in values:
        if whole is not None and whole(value.strip()):
            names.append(value.strip())
        else:
            names.extend(v.strip() for v in value.split(","))
    if any(not n for n in names) and any(names):
        raise click.BadParameter(f"an empty name in {','.join(values)!r}", param_hint=option)
    names = [n for n in names if n]
    if values and not names:
        raise click.BadParameter(f"name at least one {what}", param_hint=option)
    return names


def id_over_name_note(ref: str, others: list[str]) -> str | None:
    """The note of ``--tournament REF`` when ``REF`` is one tournament's id and the name of
    ``others`` (their ids, :meth:`arena.storage.Storage.named_too`): the id is taken, and
    was taken in silence, though the reader may have meant the latest of that name."""
    if not others:
        return None
    one = len(others) == 1
    return printable(
        f"note: --tournament {ref} is a tournament's id, taken as such; "
        f"{'tournament' if one else 'tournaments'} {', '.join(others)} "
        f"{'is' if one else 'are'} named {ref} too (pass {'its' if one else 'one'} id to "
        "show it)"
    )


def no_cap_note(rs: Ruleset, caps: str) -> str | None:
    """What an arena says at its start of matches of ``rs`` played without a deal cap
    that need not ever end, or ``None``; ``caps`` names what caps them. A match ends only
    when a player reaches the target: on the barrel bots that never make a contract of
    120 never do, and where a concession scores nobody anything (1001: the declarer
    -bid, the others 0) scores can fall for ever (random bots played 20,000 deals of
    1001 without an end, and no note was given: the organiser watched a match that would
    not end)."""
    if rs.max_deals:
        return None
    if rs.barrel:
        why = "bots that never make a contract of 120 can play for ever on the barrel"
    elif rs.concede != "off" and rs.concede_pays == "none":
        # (a free concession scores its declarer 0 too: the scores stand, they do not fall)
        then = ("the scores fall deal after deal" if rs.concede == "penalty"
                else "its declarer nothing either")  # fmt: skip
        why = ("bots that concede or fail their contracts can play for ever: a concession "
               f"scores nobody else, and {then}")  # fmt: skip
    else:
        return None
    return f"note: matches of {rs.name} have no deal cap: {why} ({caps})"


def table_size_note(rs: Ruleset, source: str, bots: int, where: str) -> str | None:
    """What an arena says at its start when ``bots`` bots would fill a 4-player table but
    the ruleset file ``source`` seats 3 because it sets no ``players`` (a file on preset
    1001 is sized by its table: ``arena-bot try`` with three opponents plays it at 4, an
    arena, which seats the file as it is, at 3), or ``None``. ``where``: the config or
    option that named the file. A preset named (``1001``) says its size by its name."""
    from engine import PRESETS, RulesetError, load_ruleset

    if bots < 4 or rs.players != 3 or source in PRESETS or source == "inline":
        return None
    try:
        if load_ruleset(source, 4).players != 4:
            return None
    except (RulesetError, OSError):  # (read once already: changed since, it is not ours)
        return None
    return printable(
        f"note: {source} ({where}) sets no players, so it seats 3 a match here ({bots} bots "
        "take turns); `arena-bot try` with three opponents plays it at 4: for 4-player "
        "matches, write players = 4 in it"
    )


def in_clear_note(host: str, who: str, fix: str) -> str | None:
    """What an arena without TLS listening on ``host`` says at its start, or ``None`` on
    loopback: beyond this machine every message goes in clear, the bots' hands in their
    views and their tokens among them, to whoever sees the traffic (a bot on the same
    network). ``who``: the bots that connect so; ``fix``: the option that adds TLS.

    >>> in_clear_note("127.0.0.1", "bots", "--tls") is None, in_clear_note("[::1]", "", "") is None
    (True, True)
    >>> in_clear_note("localhost", "", "") is None, in_clear_note("LocalHost", "", "") is None
    (True, True)
    >>> in_clear_note("0.0.0.0", "bots", "--tls")[:38]
    'note: listening on 0.0.0.0 without TLS'
    """
    if is_loopback_host(host):
        return None
    return (
        f"note: listening on {host} without TLS: every message between the arena and {who} "
        "travels in clear, the hands in their views and their tokens with it, for anyone "
        f"who sees the traffic (another bot on the same network among them); {fix} serves "
        "TLS"
    )


class _HangUpSafe:
    """See :func:`hang_up_safe`."""

    def __init__(self, get: Callable[[], IO[str] | None], reader_may_leave: bool) -> None:
        self._get = get
        self._null: IO[str] | None = None
        self._reader_may_leave = reader_may_leave

    @property
    def _stream(self) -> IO[str]:
        # Looked up at every write, as rich's own stderr console does: the log handler made
        # for one command outlives it (a test's CliRunner swaps sys.stderr per command).
        stream = self._get()
        if stream is None:  # started with it closed (`>&-`: Python has none): written
            if self._null is None:  # nowhere, as rich did (its null file)
                self._null = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
            return self._null
        return stream

    def write(self, text: str) -> int:
        stream = self._stream
        try:
            return stream.write(text)
        except OSError as e:
            if not self._gone(stream, e):
                raise
            _to_null(stream)
            return len(text)

    def flush(self) -> None:
        stream = self._stream
        try:
            stream.flush()
        except OSError as e:
            if not self._gone(stream, e):
                raise
            _to_null(stream)

    def _gone(self, stream: IO[str], e: OSError) -> bool:
        return _hung_up(stream, e) or (self._reader_may_leave and e.errno == errno.EPIPE)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...: the stream's
        return getattr(self._stream, name)


def _hung_up(stream: IO[str], e: OSError) -> bool:
    """Whether ``e`` is a terminal's hang-up: an EIO from a character device. Only a
    terminal hangs up; an EIO from a file (a failing disk under a log) is an error to see.
    (Not ``isatty()``: a terminal hung up is no tty any more, and fails every write.)"""
    if e.errno != errno.EIO:
        return False
    try:
        return stat.S_ISCHR(os.fstat(stream.fileno()).st_mode)
    except (ValueError, OSError):  # (closed, or no descriptor: a test's buffer)
        return False


def _to_null(stream: IO[str]) -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stream.fileno())
    finally:
        os.close(null)
    with contextlib.suppress(OSError):  # what the failed write left in the buffer
        stream.flush()


def hang_up_safe(get: Callable[[], IO[str] | None], *, reader_may_leave: bool = False) -> IO[str]:
    """The stream ``get`` returns at each write (``lambda: sys.stderr``) as a run that
    outlives its terminal writes it. After a hang-up (the terminal's window closed, its ssh
    session ended) `arena tournament` stops cleanly, but every write to the terminal then
    fails (EIO): the progress display's last refresh would end the stop half-way, exit 1 and
    a traceback nobody sees. At the first EIO the stream's descriptor is pointed at /dev/null,
    so that this write and every later one (Python's last flush at exit too) go nowhere, as
    under ``nohup``. A stream closed at the start (None) is written nowhere.

    ``reader_may_leave``: a pipe whose reader left (EPIPE: ``arena tournament 2>&1 | head
    -1``) goes the same way, for a run that has more to do than write there (rich's own
    handling of it was a SystemExit(1) at the next message, before the leaderboard's files
    were written)."""
    return cast(IO[str], _HangUpSafe(get, reader_may_leave))


def _drop_zero_terminal_size() -> None:
    """Forget ``COLUMNS`` / ``LINES`` set to 0 (as some shells and CI runners without a
    terminal export them): rich took 0 as the width and printed nothing at all, so
    ``arena-bot try`` ended with exit 0 and not a line of its results, ``arena replay`` and
    ``arena bench`` likewise. A value that is no number rich ignores already; 0 is ignored
    the same way, and the terminal's own size (else 80 columns) is used. Done in the
    environment, so the bots a tournament launches inherit the same. (rich takes any
    value ``str.isdigit()`` takes: a zero that is no ASCII digit, Arabic-Indic or
    full-width, was 0 to it as well, and a '²' a ValueError traceback: forgotten too.)"""
    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name, "").strip()
        if not value.isdigit():
            continue
        try:
            size = int(value)
        except ValueError:  # ('²': a digit int() does not take)
            size = 0
        if size == 0:
            del os.environ[name]


#: The values of ``GRPC_POLL_STRATEGY`` gRPC's core starts with (a comma list: the first it
#: can use); ``epoll1`` is Linux's, ``poll`` any system's.
_POLL_STRATEGIES = frozenset({"epoll1", "poll", "all"})


def no_directory(path: Path) -> str:
    """Why ``mkdir(path, exist_ok=True)`` said "File exists": what is at ``path`` (a device,
    a FIFO, a link to nothing), in words."""
    if path.is_symlink() and not path.exists():
        return printable(f"a symbolic link to {os.readlink(path)!r}, which is not there")
    return "it is there, and no directory"


def check_grpc_environment() -> None:
    """Refuse (exit 2) a ``GRPC_POLL_STRATEGY`` that names no poll strategy gRPC knows
    (junk, a misspelling, ``EPOLL1``, or set empty: ``export GRPC_POLL_STRATEGY=``): gRPC
    aborted the process at its first server or channel, SIGABRT (exit 134) after one line
    of its own ("No event engine could be initialized from junk"), the database of
    ``arena tournament`` locked and its tournament registered. For the commands that start
    gRPC: ``arena tournament``, ``arena serve``, ``arena-bot run``, ``arena bench`` (its
    sections but the engine's)."""
    value = os.environ.get("GRPC_POLL_STRATEGY")
    if value is None:
        return
    # gRPC takes the first it knows: "none" (no polling, a test's) too, on which it
    # aborts at its first channel ("Attempted a blocking poll when declared
    # non-polling"): "none,epoll1" was let through, for an epoll1 never used.
    known = [item for item in value.split(",") if item in _POLL_STRATEGIES or item == "none"]
    if known and known[0] != "none":
        return
    shown = printable(repr(value[:40]) + ("..." if len(value) > 40 else ""))
    why = "starts with gRPC's no-polling 'none'" if known else "names no poll strategy gRPC knows"
    raise click.UsageError(
        f"GRPC_POLL_STRATEGY={shown} in the environment {why} (it would abort): unset it, "
        "or set it to epoll1, poll or all"
    )


def _escape_what_the_output_cannot_encode() -> None:
    """A standard output whose encoding is no Unicode one (``PYTHONIOENCODING=ascii``, a
    Windows code page under a redirect) writes what it cannot encode as backslash escapes
    (``\\u2660``), as Python's own standard error does. It raised UnicodeEncodeError at the
    first suit, dash or Greek letter: ``arena replay`` and ``arena leaderboard`` ended in a
    traceback, and ``arena tournament`` in one after every match was stored, before the
    leaderboard files were written."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not isinstance(encoding, str) or getattr(stream, "errors", None) != "strict":
            continue
        try:
            unicode = codecs.lookup(encoding).name.startswith("utf")
        except LookupError:
            unicode = False
        reconfigure = getattr(stream, "reconfigure", None)
        if not unicode and reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


class FileErrorsGroup(click.Group):
    """A command group whose commands end in a one-line error, not a traceback, when the
    system refuses a file the user named in a way no check foresaw (a name too long for
    the file system, a symlink loop, a permission): ``Error: <file>: <reason>``, exit 1.

    Every error message is shown :func:`printable`: it quotes what it refuses (a file name
    from a glob, a value pasted from elsewhere), and an escape sequence in that was obeyed
    by the terminal (``arena tournament --config`` of a missing file named ``\x1b]0;...``
    set the window's title; a right-to-left mark turned the line around)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta[_COMMAND_ARGS] = list(rest)  # what an extra argument is one of
        ctx.meta[_COMMAND] = cmd
        # (not while the shell completes a word, click's resilient parsing: an error there
        # was a traceback at each Tab after `arena tournament --config --fresh`)
        if cmd is not None and name is not None and not ctx.resilient_parsing:
            _option_as_value(cmd, click.Context(cmd, info_name=name, parent=ctx), rest)
        return name, cmd, rest

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # A write that fails for want of room (`arena leaderboard > /dev/full`, a full disk
        # under a redirect) carries no file name: one line saying so, not a traceback.
        # (A closed pipe, `| head -1`, is click's: it exits 1 quietly.)
        _drop_zero_terminal_size()
        _escape_what_the_output_cannot_encode()
        try:
            return super().main(*args, **kwargs)
        except OSError as e:
            if e.filename is not None or e.errno not in _NO_ROOM:
                raise
            flush_or_drop_stdout()
            with contextlib.suppress(OSError):
                click.echo(f"Error: cannot write: {e.strerror}", err=True)
            sys.exit(1)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as e:
            if e.filename is None:  # not about a file: a bug, shown as one
                raise
            raise click.ClickException(printable(f"{e.filename}: {e.strerror or e}")) from e
        except click.ClickException as e:
            # (click types it Final; the same exception is shown, with its param hint)
            message = _extra_arguments(e.message, ctx.meta.get(_COMMAND_ARGS, []))
            message += _file_option_hint(e.message, ctx.meta.get(_COMMAND))
            message += _elsewhere_hint(e, self, ctx)
            message += _single_dash_hint(e, ctx)
            vars(e)["message"] = printable(message, keep="\n\t")
            raise


_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def flush_or_drop_stdout() -> None:
    """Flush the standard output, or, if it fails again, point it at /dev/null: Python's
    last flush at exit would fail on what is left in its buffer ("Exception ignored", exit
    120)."""
    try:
        sys.stdout.flush()
    except OSError:
        _to_null(sys.stdout)


_COMMAND_ARGS = "arena.cli.options.command_args"
_COMMAND = "arena.cli.options.command"
# A file named where a command takes none, by its suffix: the option that takes it.
_FILE_OPTIONS = {".toml": "--config", ".sqlite": "--db", ".sqlite3": "--db", ".db": "--db"}
_EXTRA = re.compile(r"(Got unexpected extra arguments?) \((.*)\)", re.DOTALL)


def _extra_arguments(message: str, args: list[str]) -> str:
    """Click's "Got unexpected extra arguments (a b)" with the arguments quoted when one is
    empty or blank: click joins them with spaces, and "()" or "( )" read as its syntax.
    ``args``: the command's arguments, of which the extra ones are the last."""
    m = _EXTRA.fullmatch(message)
    if m is None:
        return message
    # (an option after them, "'' --json", leaves them short of the end: one empty is still
    # known by its "()")
    tails = (args[-k:] for k in range(1, len(args) + 1) if " ".join(args[-k:]) == m[2])
    extra = next(tails, [""] if m[2] == "" else [])
    if not extra or all(a and a.strip() == a for a in extra):
        return message
    return f"{m[1]}: {' '.join(shlex.quote(a) for a in extra)}" + (
        " (an empty one)" if extra == [""] else ""
    )


def file_option(name: str) -> str | None:
    """The option that takes a file named ``name``, by its suffix (any case): ``--db`` for
    ``t.sqlite``, ``--config`` for ``t.toml``; None for another."""
    return _FILE_OPTIONS.get(Path(name).suffix.lower())


def _file_option_hint(message: str, cmd: click.Command | None) -> str:
    """Where click says "unexpected extra argument (t.toml)" to ``arena tournament t.toml``,
    the option that takes such a file: ": give it as --config t.toml"."""
    m = _EXTRA.fullmatch(message)
    if m is None or cmd is None or " " in m[2]:
        return ""
    option = file_option(m[2])
    if option is None or not any(option in p.opts for p in cmd.params):
        return ""
    return f": give it as {option} {shlex.quote(m[2])}"


def _elsewhere_hint(e: click.ClickException, group: click.Group, ctx: click.Context) -> str:
    """Where an option unknown to the command is another command's, those are named in
    place of click's guess: `arena tournament --list` was "No such option '--list'. Did
    you mean '--set'?", of the option that lists the stored tournaments (`arena leaderboard
    --list`)."""
    cmd = ctx.meta.get(_COMMAND)
    if not isinstance(e, click.NoSuchOption) or cmd is None:
        return ""
    have = []
    for name in group.list_commands(ctx):
        other = group.get_command(ctx, name)
        if other not in (None, cmd) and any(e.option_name in p.opts for p in other.params):
            have.append(f"`{ctx.command_path} {name} {e.option_name}`")
    if not have:
        return ""
    vars(e)["possibilities"] = []  # (click's guess: a near spelling of one of this command's)
    return f" It is an option of {', '.join(have)}."


def _option_as_value(cmd: click.Command, ctx: click.Context, args: list[str]) -> None:
    """Refuse an option that takes a value followed by another of the command's options:
    click takes that option's name for the value, so ``arena-bot run BOT --token --tls``
    connected with the token "--tls" for ten minutes, and ``arena tournament --config
    --fresh`` said "--fresh: file: no such file". ``--token=--tls`` still gives such a
    value."""
    # (an option whose value may be left out, click's ``is_flag=False, flag_value=...``,
    # takes none before another option: click gives it its flag value, as it should)
    valued = {o for p in cmd.params if isinstance(p, click.Option) and not p.is_flag
              and not p.count and not getattr(p, "_flag_needs_value", False)
              for o in p.opts}  # fmt: skip
    names = _spellings(cmd) | {"--help"}
    for arg, after in itertools.pairwise(args):
        if arg == "--":
            return
        if arg in valued and after in names:
            raise click.UsageError(
                f"Option '{arg}' requires an argument: {after}, after it, is an option "
                f"(a value spelled so is given as {arg}={after})",
                ctx,
            )


def _spellings(cmd: click.Command) -> set[str]:
    """Every spelling of ``cmd``'s options (a flag's ``--no-x`` too)."""
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}


def _single_dash_hint(e: click.ClickException, ctx: click.Context) -> str:
    """Where an unknown short option is a letter of a word given with one dash, that word
    its long option: click reads ``-json`` as ``-j -s -o -n`` and said "No such option
    '-j'" of what was typed as ``-json``, a flag it never named. (Short flags run together,
    ``-vx``, are not such a word: no hint.)"""
    cmd = ctx.meta.get(_COMMAND)
    name = e.option_name if isinstance(e, click.NoSuchOption) else ""
    if cmd is None or len(name) != 2 or name[0] != "-" or name[1] == "-":
        return ""
    longs = _spellings(cmd)
    for arg in ctx.meta.get(_COMMAND_ARGS, []):
        if arg == "--":
            break
        word = arg.partition("=")[0]
        if word[:1] == "-" and name[1] in word[1:] and "-" + word in longs:
            vars(e)["possibilities"] = []  # (click's guess at "-j": of another option)
            return f" ({arg} has one dash: the option is -{word})"
    return ""


class Host(click.ParamType[str]):
    """An address to listen on: see :func:`host_problem`."""

    name = "host"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        problem = host_problem(str(value))
        if problem is not None:
            self.fail(problem, param, ctx)
        return value


class HostName(click.ParamType[str]):
    """A host name as a browser sends it in ``Host`` (letters, digits, ``-``, ``_``, ``.``;
    Docker's names have ``_``), or ``*``; lower-cased."""

    name = "host name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip().lower().rstrip(".")
        if text == "*" or (
            0 < len(text) <= 253
            and all(
                0 < len(label) <= 63
                and label.isascii()
                and label.replace("-", "").replace("_", "").isalnum()
                for label in text.split(".")
            )
        ):
            return text
        self.fail(f"{value!r:.80} is not a host name (letters, digits, '-', '_' and '.') or '*'",
                  param, ctx)  # fmt: skip


class Seconds(click.FloatRange):
    """A finite number of seconds within a range: ``nan`` and ``inf`` pass click's own
    ``FloatRange`` (every comparison with ``nan`` is false), and then divide by zero or
    wait for ever."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


class NonEmptyPath(click.Path):
    """A path that is not the empty string: click's own ``Path`` takes ``--out ''`` as the
    current directory (it would write a tournament's leaderboard and logs there). Nor one
    with a NUL, which no file name has: click's ``exists`` check ends in a traceback
    (ValueError: embedded null byte) when one comes in-process (a shell's argv cannot carry
    it)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path: name a file or directory", param, ctx)
        if isinstance(value, str) and "\0" in value:
            self.fail(f"{value!r}: a path has no NUL character", param, ctx)
        return super().convert(value, param, ctx)


def raise_open_files_limit() -> None:
    """Raise this process's soft limit of open files to its hard limit. Connections need no
    token and gRPC counts none per client address: at the usual soft limit of 1,024, about
    1,000 connections that never finish their HTTP/2 preface keep every bot out until gRPC
    closes them (after about 60 s), and the client can open them again (with the limit at
    600, 700 do it). ``arena serve`` calls it; ``arena tournament``
    does not, as every bot process it starts would inherit the raised limit (some programs
    size tables by it or close every descriptor up to it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # (an unlimited hard limit cannot be the soft one: Linux caps both at fs.nr_open)
    want = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):  # as before: the soft limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
