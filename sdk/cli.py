"""``arena-bot``: run a bot in an arena, try it locally, or play against it.

    arena-bot run mybot.py:MyBot --arena localhost:50051 --token SECRET
    arena-bot try mybot.py:MyBot --vs random,heuristic -n 50
    arena-bot human

BOT is a bundled bot (random, heuristic, counting, pimc), ``module:Class`` or
``path/to/file.py[:Class]``.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

# gRPC core writes its own INFO lines to stderr (one per failed TLS handshake) unless told
# otherwise before it loads; the runner says what failed, and GRPC_VERBOSITY=INFO still
# shows them.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import click

from arena.addresses import non_ascii_problem
from arena.cli.options import (
    FileErrorsGroup,
    NonEmptyPath,
    Seconds,
    check_grpc_environment,
    comma_names,
    hang_up_safe,
    no_directory,
)
from arena.deadlines import DEFAULT_TIME_BANK_MS, MAX_DEADLINE_MS
from arena.referee.config import pem_problem
from arena.render import PrintableFormatter, fitted, fixed, plural, printable
from engine.rules import PRESETS, describe_ruleset
from sdk.loader import BotLoadError, load_bot
from sdk.local import (
    _NOT_THE_BOTS,
    _exception,
    _own_name,
    arena_record,
    bot_site,
    method_mistakes,
    raise_site,
    watch_slow_calls,
)
from sdk.procfs import processes

if TYPE_CHECKING:
    from rich.console import Console

    from sdk.local import LocalMatch, SeriesResult

__all__ = ["main"]

_LEVELS = ("debug", "info", "warning", "error")


#: The loggers through which the SDK reports a bot's exceptions (sdk.local's decisions and the
#: hooks, locally and in an arena).
_BOT_ERROR_LOGGERS = ("sdk.local", "sdk.client")


def _setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler])
    once = _OncePerSite()
    for name in _BOT_ERROR_LOGGERS:  # a fresh count per command (tests run several)
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, _OncePerSite)]:
            logger.removeFilter(old)
        logger.addFilter(once)


class _OncePerSite(logging.Filter):
    """Lets a bot's traceback through the first time for each place it raises from (the
    exception's type, file and line); later ones become one line with a count. A bot that
    raised on every decision printed hundreds of identical tracebacks, burying the rest.
    So with a bot's answer that is no Action, which ``sdk.local._decide`` logs with
    ``sdk_again`` (what makes it the same mistake: the method and the answer's type; and
    the shorter line's start and end): the first is explained, later ones are "...
    Mine.play() (mine.py:12) returned None again, 7 times so far (deal 2, ...)". And with
    an illegal answer in a local match (``sdk.local.play_local``: the method and the rule
    broken make it the same mistake), and with a timed-out decision there (the method)."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: dict[tuple[object, ...], int] = {}
        self._lock = threading.Lock()  # an arena runner asks bots in worker threads

    def filter(self, record: logging.LogRecord) -> bool:
        again: tuple[tuple[str, ...], str, str] | None = getattr(record, "sdk_again", None)
        if again is not None:
            key, start, end = again
            n = self._count(("answer", *key))
            if n > 1:
                record.msg, record.args = "%s again, %d times so far%s", (start, n, end)
            return True
        # (A record from a worker process, sdk.workers, says where with its traceback text.)
        site: tuple[str, str, int, str] | None = getattr(record, "sdk_site", None)
        exc_type, _exc, tb = record.exc_info or (None, None, None)
        if site is None and exc_type is not None and tb is not None:
            frame = raise_site(tb)
            site = (exc_type.__name__, frame.filename, frame.lineno or 0, frame.name)
        if site is None:
            return True
        kind, filename, lineno, function = site
        n = self._count((kind, filename, lineno))
        if n > 1:
            message = record.getMessage()
            record.msg = "%s: %s again in %s (%s:%s), %d times so far"
            record.args = (message, kind, function, Path(filename).name, lineno, n)
            record.exc_info, record.exc_text = None, None
        return True

    def _count(self, key: tuple[object, ...]) -> int:
        """How many times ``key`` has come, this one included."""
        with self._lock:
            n = self._counts[key] = self._counts.get(key, 0) + 1
        return n


def _interrupted(e: KeyboardInterrupt, what: str, code: int) -> NoReturn:
    """Ctrl-C while ``what`` (the bot's import, its ``__init__``): said, naming the line
    of the bot's it was at, and exit code ``code``."""
    at = bot_site(e)
    where = "" if at is None else f", at {Path(at.filename).name}:{at.lineno}, in {at.name}"
    click.echo(printable(f"arena-bot: interrupted while {what}{where}: no match played"), err=True)
    sys.exit(code)


def _where(site: traceback.FrameSummary) -> str:
    """`` (mybot.py:12, in __init__)``: a raise site as a log line names it."""
    return f" ({Path(site.filename).name}:{site.lineno}, in {site.name})"


def _load_named(spec: str, param_hint: str = "BOT") -> tuple[Any, str]:
    """The class of :func:`_load_made`, and the name the bot gives itself (its ``name``, by
    default the class name), which ``try`` shows for every bot rather than the spec's file
    name."""
    cls, bot = _load_made(spec, param_hint)
    name = getattr(bot, "name", "")
    return cls, name if isinstance(name, str) and name else spec


def _needs_arguments(cls: type) -> str:
    """`` (mine.py:3, its __init__)``: where the constructor of ``cls`` that cannot be
    called with no arguments is defined, or "". Found by its signature, not assumed to be
    ``__init__``: a ``__new__(cls, depth)`` was blamed on the SDK's own ``Bot.__init__``
    ("bot.py:117"); a dataclass's generated ``__init__`` is named by its class's line (its
    code's file is "<string>")."""
    for method in ("__new__", "__init__"):
        fn = inspect.unwrap(getattr(cls, method))
        code = getattr(fn, "__code__", None)
        if code is None:  # (object's own, in C: it needs nothing)
            continue
        try:
            inspect.signature(fn).bind(cls)  # (cls, or self: the one argument it is given)
            continue
        except TypeError:
            pass
        except ValueError:  # (no signature to read)
            return ""
        if not code.co_filename.startswith("<"):
            return f" ({Path(code.co_filename).name}:{code.co_firstlineno}, its {method})"
        try:  # generated (a dataclass's fields): the class that generated it
            file, line = inspect.getsourcefile(cls), inspect.findsource(cls)[1] + 1
        except (OSError, TypeError):
            return ""
        return "" if file is None else f" ({Path(file).name}:{line}, its generated {method})"
    return ""


def _load_made(spec: str, param_hint: str = "BOT", interrupted: int = 130) -> tuple[Any, Any]:
    """The bot class named by ``spec``, and the instance made once to check that it can be:
    a bot whose ``__init__`` fails is refused here rather than at its first match.

    Ctrl-C while the bot's module is imported or its ``__init__`` runs (a model loading
    for seconds, a loop) ends ``arena-bot`` with exit code ``interrupted`` (``try``: 130,
    as after its matches; ``run``: 0, as its Ctrl-C always does), naming the bot's line:
    it was click's "Aborted!" and exit code 1, where nothing said what had been cut."""
    try:
        cls = load_bot(spec)
    except BotLoadError as e:
        raise click.BadParameter(str(e), param_hint=param_hint) from None
    except KeyboardInterrupt as e:
        _interrupted(e, f"importing the bot {spec.strip()!r}", interrupted)
    try:
        bot = cls()
    except KeyboardInterrupt as e:
        _interrupted(e, f"making the bot {spec.strip()!r} ({cls.__name__}())", interrupted)
    except (Exception, SystemExit) as e:  # (a sys.exit(2) there ended `try` without a word)
        at = bot_site(e)
        site = "" if at is None else _where(at)
        if at is None and isinstance(e, TypeError):
            # Its arguments are wrong (it needs some): raised at the call, in the SDK, so
            # no line of the bot's was named; the __init__ (or __new__) that needs them is.
            site = _needs_arguments(cls)
        raise click.BadParameter(
            f"{spec!r}: {cls.__name__}() raised {_exception(e)}{site} (a bot is made "
            "with no arguments for every match)",
            param_hint=param_hint,
        ) from None
    errors, warnings = method_mistakes(bot)
    if errors:
        raise click.BadParameter(f"{spec!r}: {'; '.join(errors)}", param_hint=param_hint)
    for warning in warnings:
        logging.getLogger("sdk.loader").warning("%s", warning)
    return cls, bot


def _check_address(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--arena`` is HOST:PORT (``[::1]:PORT`` for IPv6); a gRPC target URI written
    ``scheme://...`` (``dns:///host:port``) is passed on as it is, when it names a target
    after its scheme, and so are ``dns:``, ``ipv4:`` and ``ipv6:`` targets without ``//`` and
    a Unix socket, ``unix:PATH`` or ``unix-abstract:NAME`` (gRPC's own forms). What no
    address can be is refused here, not retried for --retry-for seconds as an unreachable
    arena; an address from ``ARENA_ADDRESS`` is
    said to come from it (nobody typed --arena)."""
    problem = _address_problem(value)
    if problem is None:
        return value
    source = ctx.get_parameter_source(param.name) if param.name else None
    if source is click.core.ParameterSource.ENVIRONMENT:
        problem += " (from the environment variable ARENA_ADDRESS)"
    raise click.BadParameter(problem, ctx, param)


def _address_problem(value: str) -> str | None:
    """What makes ``value`` no address of an arena (see :func:`_check_address`), or None."""
    if any(c.isspace() or not c.isprintable() for c in value):
        return f"an address has no spaces or control characters, got {value!r}"
    if "://" in value:
        scheme, _, target = value.partition("://")
        if not scheme.isidentifier() or not target.strip("/"):
            return f"expected HOST:PORT or a gRPC target URI, got {value!r}"
        if scheme.lower() in ("http", "https"):
            # (no gRPC scheme: gRPC looked up the host "http://arena" and the bot retried
            # for --retry-for seconds, ten minutes by default, as if the arena were down)
            tls = " with --tls (or --ca FILE)" if scheme.lower() == "https" else ""
            return (
                f"{value!r} is a web address: give the arena as HOST:PORT, "
                f"{target.strip('/')!r}{tls}"
            )
        if scheme.lower() in ("dns", "ipv4", "ipv6"):
            # (a look-alike in "dns:///lоcalhost:50051" was retried for --retry-for seconds
            # as gRPC's "misformatted domain name", as in HOST:PORT before round 37)
            if not target.startswith("/"):  # (an authority, "dns://8.8.8.8/arena:50051")
                if scheme.lower() != "dns":  # (gRPC: "the target uri is not valid")
                    return (f"{scheme}: takes no authority (//{target.partition('/')[0]}): "
                            f"write {scheme}:ADDRESS:PORT, got {value!r}")  # fmt: skip
                return non_ascii_problem(target.strip("/"))
            return _target_problem(scheme.lower(), target.lstrip("/"), value)
        return None
    scheme, colon, path = value.partition(":")
    if colon and scheme in ("unix", "unix-abstract"):
        # (gRPC's "unix:/run/arena.sock" was refused as a HOST:PORT whose port "must be a
        # number", though "unix:///run/arena.sock" was let through)
        return None if path else f"{scheme}: names no socket, got {value!r}"
    if colon and scheme.lower() in ("dns", "ipv4", "ipv6") and path and not path.isdigit():
        # gRPC's other forms without "//": "ipv4:127.0.0.1:50051", "dns:arena:50051"
        # (refused as no HOST:PORT, though "dns:///arena:50051" was let through); a port
        # alone after the scheme is a host of that name ("dns:50051"), as it always was
        return _target_problem(scheme.lower(), path, value)
    if value.startswith("["):
        host, close, rest = value[1:].partition("]")
        ok, port = bool(close) and rest.startswith(":"), rest[1:]
    else:
        host, sep, port = value.rpartition(":")
        ok = bool(sep) and ":" not in host
        if not ok and sep and _is_ipv6(host) and port.isascii() and port.isdigit():
            # "::1:50051": the port cannot be told from the address's last part
            return f"an IPv6 address goes in brackets before a port: [{host}]:{port}, got {value!r}"
        if not ok and _is_ipv6(value):
            return f"no port: expected [IPv6]:PORT, as [{value}]:50051, got {value!r}"
    if not ok or not host:
        return f"expected HOST:PORT (or [IPv6]:PORT), got {value!r}"
    if value.startswith("[") and not _is_ipv6(host):
        # (gRPC cannot parse "[127.0.0.1]:50051": the bot retried it for --retry-for seconds,
        # ten minutes by default, saying only "cannot connect ...: [127.0.0.1]:50051]")
        return f"brackets go around an IPv6 address only: {host}:{port}, got {value!r}"
    non_ascii = non_ascii_problem(host)
    if non_ascii:
        return non_ascii
    if not _port_ok(port):
        return f"the port must be a number from 1 to 65535, got {value!r}"
    return None


def _target_problem(scheme: str, target: str, value: str) -> str | None:
    """What makes ``target``, the addresses of gRPC target URI ``value`` after its scheme
    ``dns``, ``ipv4`` or ``ipv6``, none gRPC connects to, or None. gRPC refuses an
    ``ipv4:``/``ipv6:`` address that is not of its kind or has no port ("the target uri is
    not valid": the bot ended saying the arena had "ended the stream"), and a ``dns:`` port
    that is no number was retried for --retry-for seconds ("Failed to parse port")."""
    non_ascii = non_ascii_problem(target)
    if non_ascii:
        return non_ascii
    bad_port = f"the port must be a number from 1 to 65535, got {value!r}"
    if scheme == "dns":  # one name, its port optional (443)
        if target.startswith("["):
            _, close, rest = target[1:].partition("]")
            port = rest[1:] if close and rest.startswith(":") else None
        else:
            port = target.partition(":")[2] if target.count(":") == 1 else None
        # (gRPC's resolver takes two port names too: "dns:///arena.example:https", 443)
        named = port in ("http", "https")
        return bad_port if port is not None and not (_port_ok(port) or named) else None
    kind, written, example = (
        ("IPv4", "", "127.0.0.1:50051")
        if scheme == "ipv4"
        else ("IPv6", " in brackets", "[::1]:50051")
    )
    for address in target.split(","):
        if scheme == "ipv4":
            host, colon, port = address.rpartition(":")
        else:
            host, close, rest = address[1:].partition("]")
            colon, port = (":", rest[1:]) if address.startswith("[") and close and \
                rest.startswith(":") else ("", "")  # fmt: skip
        if not colon or not host:
            return (f"{scheme}: takes {kind} addresses{written} with their ports, as "
                    f"{scheme}:{example}, got {value!r}")  # fmt: skip
        if not _is_ipv6(host, 6 if scheme == "ipv6" else 4):
            other = "ipv6:" if _is_ipv6(host.strip("[]")) else "dns:"
            return (f"{scheme}: takes {kind} addresses ({host!r} is none: "
                    f"{'an IPv6 address' if other == 'ipv6:' else 'a name'} goes after "
                    f"{other}), got {value!r}")  # fmt: skip
        if not _port_ok(port):
            return bad_port
    return None


def _port_ok(port: str) -> bool:
    """Whether ``port`` is a port number an arena can listen on (1 to 65535)."""
    return port.isascii() and port.isdigit() and 1 <= int(port) <= 65535


def _is_ipv6(text: str, version: int = 6) -> bool:
    """Whether ``text`` is an IPv6 address (a zone ``%eth0`` allowed); with ``version`` 4,
    an IPv4 address as gRPC reads one (four decimal parts, no leading zeros)."""
    import ipaddress

    try:
        (ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address)(text)
    except ValueError:
        return False
    return True


def _check_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--name`` travels in Hello as protobuf text, which must be UTF-8: a byte that is
    none (a file name in another encoding, pasted) was a UnicodeEncodeError traceback at
    the first connection."""
    if value is not None:
        bad = _undecodable(value)
        if bad:
            raise click.BadParameter(f"not UTF-8 text: it holds the byte {bad}")
    return value


def _undecodable(text: str) -> str:
    """The first byte of ``text`` that was no UTF-8 in the command line (Python keeps it as
    a lone surrogate, U+DC80..U+DCFF), as ``0xFF``; ``""`` when there is none."""
    for c in text:
        if "\udc80" <= c <= "\udcff":
            return f"0x{ord(c) - 0xDC00:02X}"
    return ""


def _check_token(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """Not ``required=True``: click's "Missing option '--token'" hid that ARENA_TOKEN
    gives it as well (and is the safer way)."""
    if not value:
        raise click.UsageError(
            "no token: give --token TOKEN or set ARENA_TOKEN (the arena's operator gives "
            "each bot its token)",
            ctx,
        )
    return value


def _check_ca(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A ``--ca`` file that is no PEM certificate would only make every connection fail."""
    if value is not None:
        problem = pem_problem(Path(value), "certificate")
        if problem is not None:
            raise click.BadParameter(problem)
    return value


class _KeptOpen:
    """``sys.stdout`` or ``sys.stderr`` while ``arena-bot`` runs a bot: a ``close()`` (or a
    ``with sys.stdout:``) by the bot's code is said, once, naming its line, and not done.
    A bot that closed sys.stdout ended ``try`` with a traceback of rich's instead of the
    table, and one that closed sys.stderr ended ``run`` (every log line after it raised
    in the runner: "lost sys.stderr", exit code 1). Everything else is the stream's."""

    def __init__(self, stream: Any, name: str, original: Any = None) -> None:
        self._stream = stream
        self._name = name
        self._told = False
        #: The process's own stream under the wrappers (the one a reader may leave: see
        #: reader_may_leave): `human` writes its table there, and leaves the match when
        #: no one reads it any more rather than play on unseen.
        self.kept_original = stream if original is None else original

    def close(self) -> None:
        if self._told:
            return
        self._told = True
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_name in ("__exit__", "close"):
            frame = frame.f_back  # (a with-block's exit: the with is the bot's line)
        logging.getLogger("sdk.cli").warning(
            "the bot closed sys.%s (%s:%d, in %s): left open, as arena-bot writes its %s "
            "there (a bot should not close the process's streams)",
            self._name, Path(frame.f_code.co_filename).name, frame.f_lineno,
            frame.f_code.co_name, "results" if self._name == "stdout" else "log",
        )  # fmt: skip

    @property
    def closed(self) -> bool:
        return bool(self._stream.closed)

    def __enter__(self) -> _KeptOpen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Any:
        return iter(self._stream)

    def __getattr__(self, name: str) -> Any:
        if name in ("_stream", "kept_original"):  # (not made by __init__: a copy.copy, pickle)
            raise AttributeError(name)
        return getattr(self._stream, name)


def reader_may_leave(stream: TextIO) -> TextIO:
    """``stream`` (the process's stdout or stderr) as a bot's code and ``arena-bot`` write
    it when its reader may leave (``arena-bot run mybot.py | head``): from the first write
    that finds the pipe closed (EPIPE) on, writes go to /dev/null. A bot that printed made
    each of its decisions after that raise BrokenPipeError, so that an arena recorded a
    bot_error for every one and was sent the fallback, as if the bot were broken, and
    ``try`` played its series with fallbacks."""
    return cast(TextIO, hang_up_safe(lambda: stream, reader_may_leave=True))


@contextlib.contextmanager
def _streams_kept_open() -> Iterator[None]:
    """Runs the block with ``sys.stdout`` and ``sys.stderr`` as :class:`_KeptOpen`, each
    written nowhere once its reader has left (:func:`reader_may_leave`)."""
    out, err = sys.stdout, sys.stderr
    if out is not None:
        sys.stdout = cast(TextIO, _KeptOpen(reader_may_leave(out), "stdout", out))
    if err is not None:
        sys.stderr = cast(TextIO, _KeptOpen(reader_may_leave(err), "stderr", err))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


#: What a bot's own ``signal.signal`` call raises under ``arena-bot try``: in an arena the
#: bot's calls run in worker threads, where Python raises this.
_SIGNAL_IN_A_CALL = (
    "signal only works in main thread of the main interpreter: as in an arena, where a "
    "bot's calls run in worker threads (arena-bot stops on Ctrl-C and SIGTERM itself)"
)


@contextlib.contextmanager
def _signals_as_in_an_arena() -> Iterator[None]:
    """Runs the block with a ``signal.signal`` that raises, as in an arena, when the bot's
    own code calls it. A bot that set a handler in ``__init__`` or a hook passed `try`
    (its calls run in the main thread there) and then failed in every match of an arena
    (its bot never made: the match forfeited), and its SIGINT handler took Ctrl-C from
    `try`. (Python's library and the installed ones call it as they would: ``asyncio.run``
    in a call sets one only in the main thread, and would not in an arena.)"""
    real = signal.signal

    def guarded(signalnum: Any, handler: Any) -> Any:
        if not sys._getframe(1).f_code.co_filename.startswith(_NOT_THE_BOTS):
            raise ValueError(_SIGNAL_IN_A_CALL)
        return real(signalnum, handler)

    signal.signal = guarded
    try:
        yield
    finally:
        signal.signal = real


@contextlib.contextmanager
def _os_exit_said() -> Iterator[None]:
    """Runs the block with an ``os._exit`` that, called by the bot's own code, says so
    (the call and the line) before the process ends: a bot's ``os._exit(7)`` in a hook
    ended `arena-bot try` and `run` at once with exit code 7 and not a word, no table,
    no summary. (Python's library and the installed ones, multiprocessing ending a
    child, call it as they would.)"""
    real, pid = os._exit, os.getpid()

    def said(status: int) -> NoReturn:
        frame = sys._getframe(1)
        # (A child the bot forked ends so, as it should: not arena-bot's process. Under a
        # tournament its runner says the exit in the bot's log, on a line of its own,
        # which a line of ours would follow a half line of the bot's on.)
        if (
            _launcher is None
            and os.getpid() == pid
            and not frame.f_code.co_filename.startswith(_NOT_THE_BOTS)
        ):
            with contextlib.suppress(Exception):
                logging.getLogger("sdk.cli").error(
                    "the bot called os._exit(%r) (%s:%d, in %s): the process ends there, "
                    "with that exit code, and no table or summary (sys.exit ends it "
                    "cleanly)",
                    status, Path(frame.f_code.co_filename).name, frame.f_lineno,
                    frame.f_code.co_name,
                )  # fmt: skip
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
        real(status)

    os._exit = said
    try:
        yield
    finally:
        os._exit = real


def _play_series(*args: Any, **kwargs: Any) -> SeriesResult:
    """:func:`sdk.local.play_series`, with :func:`_signals_as_in_an_arena`, and with no
    event loop for ``asyncio.get_event_loop()`` to make up: in an arena a bot's calls run
    in worker threads, where it raises "There is no current event loop", and a bot whose
    every decision did so there passed `try` (in the main thread Python made one)."""
    import asyncio

    from sdk.local import play_series

    asyncio.set_event_loop(None)  # (as a thread's: get_event_loop() raises, asyncio.run works)
    with _signals_as_in_an_arena():
        return play_series(*args, **kwargs)


class _Group(FileErrorsGroup):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        before = set(threading.enumerate())
        try:
            with _streams_kept_open(), _os_exit_said():
                return super().main(*args, **kwargs)
        except SystemExit as e:
            _stop_what_the_bot_left()
            _exit_past_left_threads(before, e)
            raise
        finally:
            _stop_what_the_bot_left()


def _exit_past_left_threads(before: set[threading.Thread], e: SystemExit) -> None:
    """Exit as ``e`` says without waiting for the threads the bot started and left running
    (not daemons; none of the SDK's own is one), naming them. Python waits for such a
    thread at exit, for ever if it never ends: ``try`` hung after its table, ``run
    --once`` after its "done" line, with no word of why. (An idle ``ThreadPoolExecutor``'s
    threads are not waited for: Python tells them to end at exit.)"""
    left = [
        t
        for t in threading.enumerate()
        if t not in before
        and not t.daemon
        and t.is_alive()
        and getattr(getattr(t, "_target", None), "__module__", "") != "concurrent.futures.thread"
    ]
    if not left:
        return
    logging.getLogger("sdk.client").warning(
        "the bot left %s running (%s): exiting without waiting for %s",
        plural(len(left), "thread"), ", ".join(t.name for t in left),
        "it" if len(left) == 1 else "them",
    )  # fmt: skip
    code = e.code
    if code is not None and not isinstance(code, int):  # SystemExit("text"), as Python does
        print(code, file=sys.stderr)
    logging.shutdown()  # flushes the handlers, which os._exit would not
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if code is None else code if isinstance(code, int) else 1)


@click.group(cls=_Group)
@click.version_option("0.1.0", prog_name="arena-bot")
def main() -> None:
    """Run, try and play Thousand Arena bots."""


def _die_with_launcher() -> None:
    """When a tournament launched this bot (``ARENA_PARENT_PID``), stop with it, even when
    it is killed with SIGKILL: Linux's parent-death signal. Done here, in the bot's own
    still single-threaded process, rather than in a ``preexec_fn`` of the launcher, which is
    unsafe in a process that runs gRPC threads."""
    parent = os.environ.get("ARENA_PARENT_PID")
    if not parent or not sys.platform.startswith("linux"):
        return
    text = parent.strip()
    # (a value that is no process id, left in a shell's environment, was an OverflowError
    # traceback when too large; 0 and -1 made os.kill ask a process group, every process)
    if not (text.isascii() and text.isdigit() and 0 < int(text) < 2**31):
        logging.getLogger("sdk.client").warning(
            "ARENA_PARENT_PID (set by arena tournament for the bots it launches) is %s, no "
            "process id: ignored", printable(repr(parent[:40])),
        )  # fmt: skip
        return
    pid = int(text)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    gone = False
    try:  # the launcher may have died before the signal was armed
        if os.getppid() == pid:
            global _launcher
            _launcher = pid
            return  # it is alive (and our parent: the signal is armed for its death)
        os.kill(pid, 0)
        # A launcher that died but is not reaped yet (its own parent has not waited for it)
        # is a zombie, which os.kill finds: the bot then outlived it for `--retry-for`.
        with open(f"/proc/{pid}/stat", "rb") as fh:
            gone = fh.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except ProcessLookupError:
        gone = True
    except (ValueError, OSError):
        pass
    if gone:  # (said: a stale value in a shell's environment ended the bot without a word)
        logging.getLogger("sdk.client").warning(
            "the process that launched this bot (ARENA_PARENT_PID=%d) is gone: exiting", pid
        )
        sys.exit(0)


#: The `arena tournament` that launched this bot (its pid; see _die_with_launcher), while
#: the bot runs: its direct child, armed with the parent-death signal.
_launcher: int | None = None
#: How long what the bot left gets to end on SIGTERM before SIGKILL.
_LEFT_STOP_S = 1.0


def _stop_what_the_bot_left() -> None:
    """A bot that a tournament launched (and armed with its parent-death signal) stops
    the processes it started as it exits: its children (and theirs), and what is left of
    its session, get SIGTERM, then SIGKILL. The tournament does so too when it stops a
    bot, and adopts the orphans of its bots; killed (``kill -9``), it did neither: the
    parent-death signal stopped the bot, and a helper process of the bot's (an engine it
    runs beside it, a child in a session of its own) ran on for ever. (Whether the
    tournament is gone cannot be told at once: the signal comes as its first thread dies,
    while its others still do.) Nothing for a bot not launched by a tournament."""
    global _launcher
    launcher, _launcher = _launcher, None
    if launcher is None:
        return
    me = os.getpid()
    left = sorted(_descendants(me) - {me, *_ending_by_themselves()})
    if not left:
        return
    logging.getLogger("sdk.client").warning(
        "exiting: stopping %s the bot left running (%s)%s",
        f"{len(left)} process{'es' if len(left) > 1 else ''}", ", ".join(map(str, left)),
        "" if os.getppid() == launcher
        else f"; the tournament that launched it (pid {launcher}) is gone",
    )  # fmt: skip
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:  # gone meanwhile
                continue
        until = time.monotonic() + (_LEFT_STOP_S if sig == signal.SIGTERM else 5.0)
        while True:
            left = [pid for pid in left if _running(pid)]
            if not left or time.monotonic() > until:
                break
            time.sleep(0.02)
        if not left:
            break


def _ending_by_themselves() -> set[int]:
    """multiprocessing's helper processes that this process started, if any: its resource
    tracker and its fork server (Python 3.14's default start method on Linux). Children of
    the bot's, each ends by itself once the bot has exited (the tracker after cleaning up
    what the bot's processes registered); the processes forked by the fork server are
    the bot's own, and are stopped."""
    helpers = (("multiprocessing.resource_tracker", "_resource_tracker", "_pid"),
               ("multiprocessing.forkserver", "_forkserver", "_forkserver_pid"))  # fmt: skip
    pids = (
        getattr(getattr(sys.modules.get(module), instance, None), attr, None)
        for module, instance, attr in helpers
    )
    return {pid for pid in pids if isinstance(pid, int)}


def _descendants(root: int) -> set[int]:
    """The processes started by ``root`` (children, theirs, ...) and, when ``root`` leads
    a session (a tournament starts each bot in one), the others in that session: a
    child of a child that died is no longer ``root``'s descendant, but still in its
    session. Linux's /proc; none elsewhere."""
    table = {pid: (ppid, sid) for pid, ppid, sid in processes(zombies=False)}
    found = {pid for pid, (_, sid) in table.items() if sid == root}
    found.add(root)
    while True:
        more = {pid for pid, (ppid, _) in table.items() if ppid in found} - found
        if not more:
            return found
        found |= more


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a child of ours that ended is reaped here)."""
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return False


@main.command()
@click.argument("bot")
@click.option(
    "--arena",
    default="localhost:50051",
    show_default=True,
    envvar="ARENA_ADDRESS",
    callback=_check_address,
    help="The referee's HOST:PORT (env ARENA_ADDRESS).",
)
@click.option(
    "--token",
    envvar="ARENA_TOKEN",
    callback=_check_token,
    help="The bot's token (env ARENA_TOKEN; one of the two is required).",
)
@click.option("--tls", is_flag=True, help="Connect with TLS (system root certificates).")
@click.option(
    "--ca",
    type=NonEmptyPath(exists=True, dir_okay=False),
    callback=_check_ca,
    help="TLS with this CA certificate (PEM); implies --tls.",
)
@click.option(
    "--name",
    callback=_check_name,
    help="The name sent in Hello (informative; the token decides).",
)
@click.option("--once", is_flag=True, help="Exit after one match.")
@click.option("--matches", type=click.IntRange(1, 2**32 - 1), help="Exit after N matches.")
@click.option(
    "--retry-for",
    type=Seconds(min=0),
    default=600.0,
    show_default=True,
    help="Give up after the arena has been unreachable this many seconds (or has ended "
    "every stream it welcomed the bot on before it worked).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),  # (a typo of 10**6 must not start a million processes)
    help="Run the bot's calls in N worker processes, each match's bot in one of them "
    "(a CPU-bound bot playing several matches at once gets a core per match).",
)
@click.option(
    "--log-level",
    type=click.Choice(_LEVELS),
    default="info",
    show_default=True,
    help="The least severe log lines shown on stderr.",
)
def run(
    bot: str,
    arena: str,
    token: str,
    tls: bool,
    ca: str | None,
    name: str | None,
    once: bool,
    matches: int | None,
    retry_for: float,
    workers: int | None,
    log_level: str,
) -> None:
    """Connect BOT to an arena and play every match it is seated in.

    Reconnects with back-off when the connection drops or the arena stops (for up to
    --retry-for seconds, then exit code 1); stops cleanly on Ctrl-C/SIGTERM, when the
    arena ends the stream with an OK status, or after --once / --matches N. A refused
    token or a failed TLS handshake is final: exit code 2.
    """
    if once and matches is not None and matches != 1:
        raise click.UsageError(f"--once is --matches 1: not with --matches {matches}")
    check_grpc_environment()
    _setup_logging(log_level)
    _die_with_launcher()
    cls = _load_made(bot, interrupted=0)[0]
    if workers is not None and (bot.strip() == "human" or getattr(cls, "interactive", False)):
        # (a worker process reads no terminal, its stdin is /dev/null: the person's seat
        # read "end of input" at its first decision and left the match)
        raise click.BadParameter(
            "the bot would run in other processes, which cannot read this terminal: "
            f"not with {bot.strip()!r}, a person at the keyboard",
            param_hint="--workers",
        )
    from sdk.client import ArenaAuthError, ArenaError, ArenaTLSError
    from sdk.client import run as run_bot

    try:
        summary = run_bot(
            cls,
            arena=arena,
            token=token,
            tls=tls,
            ca=ca,
            matches=1 if once else matches,
            name=name,
            retry_for=retry_for,
            workers=workers,
            spec=bot,
        )
    except (ArenaAuthError, ArenaTLSError) as e:  # a mistake in the set-up: final
        _leave(2, f"arena-bot: {e}")
    except ArenaError as e:
        _leave(1, f"arena-bot: {e}")
    logging.getLogger("sdk.client").info(
        "done (%s): %d match(es), %d decision(s), %d rejected, %d bot error(s), %d forfeited",
        summary.reason or "finished",
        summary.matches,
        summary.decisions,
        summary.rejected,
        summary.errors,
        summary.forfeits,
    )
    # The bot itself left (a person quitting the human seat): its code, and its text, as
    # Python prints a SystemExit("text") (and `arena-bot try` does).
    _leave(summary.exit_code, summary.exit_message)


def _leave(code: int, message: str = "") -> NoReturn:
    """End ``arena-bot run`` with exit code ``code``, printing ``message``. A bot call that
    never returns (an ``act`` in an endless loop) would keep the process alive for ever:
    Python joins the runner's worker threads at exit. The runner gave the calls a grace
    (a few seconds, cut short by a second Ctrl-C); what still runs is named, and the
    process exits without it."""
    from arena.stopping import ignore_stop_signals
    from sdk.client import bot_calls_running

    # The exit is decided: a stop signal from here to the end of Python's teardown (gRPC's
    # channels are torn down there) must not turn it into a death by that signal.
    ignore_stop_signals()
    if message:  # (an arena's refusal, written out as the log lines are: see printable)
        click.echo(printable(message, keep="\n\t"), err=True)
    running = bot_calls_running()
    if running:
        logging.getLogger("sdk.client").warning(
            "a bot call is still running (%s): exiting without waiting for it",
            ", ".join(running),
        )
        _stop_what_the_bot_left()
        logging.shutdown()  # flushes the handlers, which os._exit would not
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


#: The referee's default time per decision (``RefereeConfig.decision_ms``), for warnings.
_ARENA_LIMIT_S = 1.0
#: Both commands play match i from seed SEED + i // players (sdk.local.play_series).
_SEED_HELP = (
    "Match i deals from seed SEED + i // players: the same seed, the same deals "
    "(-2**63 to 2**63-1)."
)


#: An integer's digits as ``int`` reads them (``_`` between two digits).
_DIGITS_RE = re.compile(r"[0-9](?:_?[0-9])*")


class _Seed(click.ParamType[int]):
    """``--seed`` of ``try`` and ``play``: an integer from -2**63 to 2**63-1, as a
    tournament's (0 to 2**63-1) and the negative ones besides. A match's record file is
    named after its seed (``local-<seed>-<rotation>.json``): a seed of 300 digits made a
    name longer than a file system takes, and ``--records`` failed "cannot write" after the
    first match was played; refused before any, saying the range (not echoing the number
    whole: it may be thousands of digits)."""

    name = "integer"
    LOW, HIGH = -(2**63), 2**63 - 1

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, str):
            # Counted from the text: past 4,300 digits ``int`` refuses a text (Python's
            # limit), and click said "not a valid integer" with the number echoed whole.
            text = value.strip()
            body = text[1:] if text[:1] in ("+", "-") else text
            digits = body.replace("_", "").lstrip("0")
            if len(digits) > 30 and _DIGITS_RE.fullmatch(body):
                self._out_of_range(text[:1] if text[:1] == "-" else "", digits, param, ctx)
        n: int = click.INT.convert(value, param, ctx)
        if not self.LOW <= n <= self.HIGH:
            self._out_of_range("-" if n < 0 else "", str(abs(n)), param, ctx)
        return n

    def _out_of_range(
        self, sign: str, digits: str, param: click.Parameter | None, ctx: click.Context | None
    ) -> NoReturn:
        shown = digits if len(digits) <= 30 else f"{digits[:20]}... ({len(digits):,} digits)"
        self.fail(f"{sign}{shown} is out of range: a seed is an integer from -2**63 to "
                  "2**63-1 (19 digits at most), as the record files of its matches are named "
                  "after it", param, ctx)  # fmt: skip


_SEED = _Seed()
#: The deal cap of ``arena-bot try`` when none is given (not for a person at the table).
TRY_MAX_DEALS = 1000
_RULESET_HELP = "A preset (classic, 1001, 1001-4p) or a ruleset TOML file."


@main.command("try")
@click.argument("bot")
@click.option(
    "--vs",
    "vs",
    # (repeatable: `--vs a --vs b --vs c`, as "three --vs opponents" reads, played the last
    # alone, repeated: a 3-player `1001` where four seats were meant)
    multiple=True,
    default=("random,heuristic",),
    show_default=True,
    help="Comma-separated opponents (bundled names or BOT specs) for the other seats; "
    "repeatable (--vs a --vs b is --vs a,b).",
)
@click.option(
    "-n",
    "--matches",
    "n",
    type=click.IntRange(min=1),
    default=None,
    help="Matches to play [default: 20; 1 for human].",
)
@click.option("--ruleset", default="classic", show_default=True, help=_RULESET_HELP)
@click.option("--seed", type=_SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option(
    "--max-deals",
    type=click.IntRange(min=1, max=1_000_000),
    # A ruleset file's own max_deals is the default when it has one (docs/writing-a-bot.md).
    help=f"Cap each match at N deals [default: a ruleset file's max_deals, else "
    f"{TRY_MAX_DEALS} (none for human)].",
)
@click.option(
    "--decision-ms",
    type=click.IntRange(1, MAX_DEADLINE_MS),
    help="Time BOT's decisions as an arena does (its --decision-ms, a tournament's "
    "deadlines.decision_ms): each gets a Deadline, and one past this plus the time bank is "
    "a timeout (fallback played). Default: no deadline.",
)
@click.option(
    "--time-bank-ms",
    type=click.IntRange(0, MAX_DEADLINE_MS),
    help="With --decision-ms: BOT's time bank per match [default: 10000, as arena serve].",
)
@click.option(
    "--records",
    type=NonEmptyPath(file_okay=False, path_type=Path),
    help="Write each finished match's record to DIR/<match id>.json (made if missing; a "
    "record of the same id is replaced), for arena replay.",
    metavar="DIR",
)
@click.option(
    "--log-level",
    type=click.Choice(_LEVELS),
    default="warning",
    show_default=True,
    help="The least severe log lines shown on stderr (your bot's own among them).",
)
def try_(
    bot: str,
    vs: tuple[str, ...],
    n: int | None,
    ruleset: str,
    seed: int,
    max_deals: int | None,
    decision_ms: int | None,
    time_bank_ms: int | None,
    records: Path | None,
    log_level: str,
) -> None:
    """Play BOT in-process against other bots and print the results.

    Seats rotate: match i puts BOT in seat i mod players and replays each seed from
    every seat, so luck of the deal evens out. Once two seeds have been played from every
    seat, a line under the table gives BOT's margin (its points per deal minus the
    others' mean) with its 95% interval: the figure to compare two versions of a bot by
    (BOT against two copies of the other). Ctrl-C prints the matches finished so far
    (exit code 130).

    With --decision-ms, BOT's decisions are timed as the referee times them (the
    opponents' are not): time over the limit comes off the match's time bank, and a
    decision past the limit plus the bank is a timeout: its answer is not used, the
    fallback is played, and it counts in the table's incidents and in the line under the
    table (no strikes locally). A call cannot be cut off locally: the match waits for it,
    then drops its answer. Without --decision-ms nothing is timed (see
    docs/writing-a-bot.md, Deadlines).
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress
    from rich.text import Text

    from engine import RulesetError
    from sdk.local import (
        BotMakeError,
        SeriesInterrupted,
        resolve_ruleset,
    )

    if time_bank_ms is not None and decision_ms is None:
        raise click.BadParameter(
            "needs --decision-ms (the time of one decision, before the bank is used)",
            param_hint="--time-bank-ms",
        )
    # Where the records go, from the directory it was started in: a bot that changes the
    # working directory (its import or a hook) made every record's write fail, and the
    # series stop, at its first match. Made once every option is checked (below).
    given_records, records = records, None if records is None else records.absolute()
    _setup_logging(log_level)
    cls, made = _load_made(bot)  # its name, as play_series would name it: made only once
    # Ctrl-C from here to the first match (the opponents imported, the ruleset read):
    # click's "Aborted!" and exit code 1 it was, where `try` stopped says 130.
    try:
        names = comma_names(vs, "--vs", "opponent", whole=_comma_file)
        try:
            resolved = resolve_ruleset(ruleset, players=len(names) + 1)
        except RulesetError as e:
            raise click.BadParameter(str(e), param_hint="--ruleset") from None
        seats = resolved.players
        if len(names) > seats - 1:
            # Resolved for too many players, "1001" is its 3-player table: name the largest one
            # ("seats 3 players: name at most 2" would hide that three opponents make it 1001-4p).
            largest = resolve_ruleset(ruleset, players=4)
            seats_words = f"{seats} players"
            if largest.players > seats:
                seats = largest.players
                seats_words = f"at most {seats} players"
                if largest.name != resolved.name:
                    seats_words += f" (as {largest.name})"
            four = ""
            if seats == 3 and len(names) == 3:
                # (a 4-player table of a 3-player ruleset: say how to get one, as `arena
                # rules --players 4` does, not only how many to name)
                sized = [k for k, p in PRESETS.items() if p.players == 4]
                four = f"; for 4 players: {', '.join(sized)}, or players = 4 in a ruleset file"
            raise click.BadParameter(
                f"{len(names)} opponents named, but the ruleset seats {seats_words}: "
                f"name at most {seats - 1} (fewer are repeated){four}",
                param_hint="--vs",
            )
        opponents: list[tuple[str, Any]] = []
        for spec in names:  # shown by the name each bot gives itself, as BOT is
            opponent, label = _load_named(spec, "--vs")
            opponents.append((label, opponent))
        interactive = bot == "human" or bool(getattr(cls, "interactive", False))
        person = [spec == "human" or bool(getattr(o, "interactive", False))
                  for spec, (_, o) in zip(names, opponents, strict=True)]  # fmt: skip
        people = sum(person[i % len(person)] for i in range(seats - 1))  # (fewer are repeated)
        if people + interactive > 1:
            # (each person's prompt shows that seat's hand on the one screen: every hand shown)
            raise click.BadParameter(
                f"{people + interactive} seats for a person at this one terminal, where each "
                "would see the others' hands: name 'human' (or an interactive bot) once",
                param_hint="--vs",
            )
        interactive = interactive or people > 0  # (a person's seat, as an opponent too)
        if n is None:
            n = 1 if interactive else 20
        default_cap = max_deals is None and not resolved.max_deals and not interactive
        if default_cap:
            # A bot that never bids can keep a match going for ever (no one climbs off the
            # barrel): the series would look hung. A real match lasts tens of deals. (A ruleset
            # file's own cap, or --max-deals, holds.)
            max_deals = TRY_MAX_DEALS
        console = Console()
        stopped = False
        written: list[Path] = []  # the records `--records` wrote
        # A call that never returns (an endless loop) is said, not waited for in silence (not
        # with a person at the table, who may think as long as they like).
        bank_ms = DEFAULT_TIME_BANK_MS if time_bank_ms is None else time_bank_ms
        wait_s = ((_ARENA_LIMIT_S * 1000 if decision_ms is None else decision_ms) + bank_ms) / 1000
        longer = (
            f", as long as an arena waits for a decision{' by default' * (decision_ms is None)}"
        )
    except KeyboardInterrupt as e:
        _interrupted(e, "preparing the matches", 130)
    if records is not None and given_records is not None:
        # Refused before anything is played, not after the first match; made only now,
        # once the bot, its opponents and the ruleset are known good: a command line
        # refused for any of them left the directory made, empty.
        _make_records_directory(records, given_records)
    try:
        series = partial(
            _play_series,
            name=_own_name(made),
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
            on_match=None if records is None else partial(_write_record, records, written),
        )
        if interactive:  # a person reads the terminal: no progress bar over the table
            result = series(cls, opponents, n, ruleset, seed, max_deals)
        else:
            with (
                watch_slow_calls(wait_s, f"{longer} ({wait_s:g} s)"),
                Progress(console=console, transient=True) as progress,
            ):
                task = progress.add_task("playing", total=n)
                result = series(
                    cls, opponents, n, ruleset, seed, max_deals,
                    progress=lambda done: progress.update(task, completed=done),
                )  # fmt: skip
    except SeriesInterrupted as e:  # Ctrl-C: what was played still counts
        result, stopped = e.result, True
    except RulesetError as e:
        raise click.BadParameter(str(e), param_hint="--ruleset") from None
    except BotMakeError as e:  # its __init__ passed the check above, and failed later
        # Where it raised, as the one-line repeats of a raising decision say it (the full
        # traceback is what this error replaced).
        tb = e.__cause__.__traceback__ if e.__cause__ is not None else None
        site = "" if tb is None else _where(raise_site(tb))
        console.print(Text(f"error: {e}{site}; no results", style="red"), soft_wrap=True)
        sys.exit(1)
    except SystemExit as e:  # the bot left (a person typing "quit", say): no table
        console.print(
            escape(f"the series stopped: a seat left it (SystemExit {e.code!r}); no results"),
            soft_wrap=True,
        )
        raise
    what = (
        f"interrupted after {result.matches} of {plural(n, 'match')}"
        if stopped
        else plural(n, "match")
    )
    if result.matches:
        # The ruleset as every other output describes it: a house file's options in force,
        # and its table size ("tournament-1001 (1001-4p + talon_visible off)" with three
        # opponents), not its name alone.
        rules = describe_ruleset(resolved)
        _print_results(console, result, f"{what}, ruleset {rules}, seed {seed}")
        slowest, at = result.entries[0].slowest, result.entries[0].slowest_at
        if decision_ms is not None:
            timeouts, tried = result.entries[0].timeouts, escape(printable(result.entries[0].name))
            bank = DEFAULT_TIME_BANK_MS if time_bank_ms is None else time_bank_ms
            at = f"at {decision_ms} ms per decision + {bank} ms of time bank per match"
            if timeouts:  # each is in the log (--log-level warning), naming where it was
                times = plural(timeouts, "time")
                console.print(
                    f"[yellow]warning:[/yellow] {tried} timed out {times} ({at}; "
                    "counted in its incidents): an arena plays the fallback for each and "
                    "counts a strike (3 strikes forfeit a match by default)",
                    soft_wrap=True,
                )
            else:
                console.print(f"{tried} never timed out ({at})", soft_wrap=True)
        elif slowest > _ARENA_LIMIT_S and not interactive:
            # Where it was (the match, the deal, the method): the seed replays it.
            console.print(
                f"[yellow]warning:[/yellow] {escape(printable(result.entries[0].name))}'s slowest "
                "decision "
                f"took {slowest * 1000:.0f} ms ({escape(at)}): an arena allows "
                f"{_ARENA_LIMIT_S * 1000:.0f} ms per decision by default (and a time bank of "
                "10 s per match for the excess; --decision-ms rehearses it)",
                soft_wrap=True,
            )
    else:
        console.print(escape(f"{what}: no results"), soft_wrap=True)
    if result.capped:
        cap = max_deals or resolved.max_deals
        # (Without the barrel (1001) the bot may well bid: its contracts conceded or failed
        # take the points off, and nobody reaches the target.)
        ask = ("does the bot ever bid? a player on the barrel needs contracts to finish"
               if resolved.barrel else "does the bot make its contracts? conceded or failed, "
               "each takes its bid off, and nobody reaches the target")  # fmt: skip
        why = f" ({ask}); --max-deals N sets the cap" if default_cap else ""
        console.print(
            f"[yellow]note:[/yellow] {result.capped} of {plural(result.matches, 'match')} "
            # "before anyone won" read as no winner, beside a `wins` column that counts
            # the leaders at the cap: say what the cap stopped, and how they were placed.
            f"reached the cap of {plural(cap, 'deal')} before anyone reached "
            f"{resolved.target} (placed by score: a lead at the cap counts as a win){why}",
            soft_wrap=True,
        )
    if records is not None:  # (after Ctrl-C too: what the directory now holds of this run)
        console.print(
            escape(f"{plural(len(written), 'record')} written to {records}"), soft_wrap=True
        )
    if stopped:
        sys.exit(130)  # 128 + SIGINT, as a shell reports a command that Ctrl-C stopped
    if result.matches and result.entries[0].incidents and not interactive:
        # A bot author's check before connecting, in a script or CI as much as by eye: a bot
        # that raised, answered illegally or timed out would cost strikes in an arena, so the
        # command fails (the table above says where; the log lines name each decision).
        incidents = plural(result.entries[0].incidents, "incident")
        hooks = result.entries[0].hooks
        # (A hook's failure costs no strike, and no arena records it: its log lines do.)
        if hooks == 1:  # (not "1 of them hook calls", nor "1 of them" of one incident)
            which = "a hook call" if result.entries[0].incidents == 1 else "1 of them a hook call"
        else:
            which = f"{hooks} of them hook calls"
        of_which = (
            f"; {which} that raised, which an arena logs in the bot's log but records nowhere"
            if hooks
            else ""
        )
        console.print(
            Text(
                f"error: {printable(result.entries[0].name)} had {incidents} "
                f"in {plural(result.matches, 'match')} (the incidents column{of_which}): "
                "exit code 1",
                style="red",
            ),
            soft_wrap=True,
        )
        sys.exit(1)


def _make_records_directory(records: Path, given: Path) -> None:
    """Make ``--records`` (``records``: ``given``, absolute) and check it takes a file."""
    try:
        records.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        # (mkdir says "File exists" of what is there and no directory: a device, a FIFO,
        # a link to nothing; click names a regular file itself)
        why = no_directory(records) if isinstance(e, FileExistsError) else None
        raise click.BadParameter(
            f"cannot make the directory {str(given)!r}: {why or e.strerror or e}",
            param_hint="--records",
        ) from None
    try:  # (a directory there that takes no file, read-only: said after the first match)
        tempfile.TemporaryFile(dir=records).close()
    except OSError as e:
        raise click.BadParameter(
            f"cannot write records into {str(given)!r}: {e.strerror or e}",
            param_hint="--records",
        ) from None


def _write_record(directory: Path, written: list[Path], match_id: str, match: LocalMatch) -> None:
    """``try --records``: a finished match's record as ``<match id>.json`` (``arena
    replay`` reads it, ``arena replay --check`` checks it), added to ``written``."""
    path = directory / f"{match_id}.json"
    # Written beside it, then put in its place: a write cut short (a full disk, Ctrl-C)
    # leaves the record there before whole, not the start of the new one.
    part = directory / f".{match_id}.json.part"
    try:
        # (with its incidents, as a referee's record lists them: arena replay shows them)
        record = arena_record(match)
        part.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        os.replace(part, path)
        written.append(path)
    except OSError as e:  # (a full disk, say): said in words, not as a traceback
        with contextlib.suppress(OSError):
            part.unlink()
        raise click.ClickException(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            part.unlink()
        raise


def _print_results(console: Console, result: SeriesResult, title: str) -> None:
    """The table of a series (``sdk.local.SeriesResult``), the tried bot first, and each
    bot's slowest decision."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title))
    table.add_column("bot", no_wrap=True)
    for col in ("matches", "wins", "win %", "place", "score", "pts/deal", "incidents"):
        table.add_column(col, justify="right")
    for i, entry in enumerate(result.entries):
        table.add_row(
            # (a bot's own name, from a file that may be anyone's: written out, never obeyed)
            Text(printable(entry.name), style="bold" if i == 0 else ""),
            str(entry.matches),
            str(entry.wins),
            # Halfway away from zero, as the leaderboard rounds (Python's format rounds to
            # even: a mean score of 10.5 showed as 10 beside its 10.5 points a deal).
            fixed(100 * entry.win_rate, 0),
            fixed(entry.mean_place, 2),
            fixed(entry.mean_score, 0),
            fixed(entry.points_per_deal, 1),
            str(entry.incidents),
        )
    console.print(fitted(table))  # (in a narrow terminal: header: value lines)
    times = ", ".join(f"{printable(e.name)} {e.slowest * 1000:.1f} ms" for e in result.entries)
    console.print(escape(f"slowest decision: {times}"), soft_wrap=True)
    margin = result.margin()
    if margin is not None:
        # The figure to compare two bots by (a second version against the first, say):
        # each seed is played from every seat, so the luck of the cards cancels out, and
        # the interval says whether the difference is more than chance.
        mean, low, high = margin
        verdict = (
            "ahead, beyond chance" if low > 0
            else "behind, beyond chance" if high < 0
            else "no difference beyond chance (a larger -n narrows the interval)"
        )  # fmt: skip
        console.print(
            escape(
                f"margin of {printable(result.entries[0].name)}: {fixed(mean, 1, '+')} points "
                f"per deal over the others' mean, 95% interval [{fixed(low, 1, '+')}, "
                f"{fixed(high, 1, '+')}] "
                f"({len(result.margins)} seeds, each played from every seat): {verdict}"
            ),
            soft_wrap=True,
        )


def _comma_file(value: str) -> bool:
    """Whether a ``--vs`` value is one bot file whose name holds a comma (``--vs
    "my,bot.py:Bot"``: two names, "my" and "bot.py:Bot", it was, said as one opponent too
    many or an unknown ``my``): not split at its commas (:func:`comma_names`)."""
    target = value.partition(":")[0]
    return "," in target and target.endswith(".py") and Path(target).is_file()


@main.command("human", short_help="Play against bots yourself in the terminal.")
@click.option("--vs", multiple=True, default=("heuristic,heuristic",), show_default=True,
              help="Comma-separated opponents; repeatable (--vs a --vs b: a,b).")  # fmt: skip
@click.option(
    "-n",
    "--matches",
    "n",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Matches to play.",
)
@click.option("--ruleset", default="classic", show_default=True, help=_RULESET_HELP)
@click.option("--seed", type=_SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option(
    "--max-deals",
    type=click.IntRange(min=1, max=1_000_000),
    # (a person's match has no cap of try's: it ends when a person says so)
    help="Cap each match at N deals [default: a ruleset file's max_deals, else none].",
)
# try's own options, so that `arena-bot human` takes what `arena-bot try human` does
@click.option(
    "--decision-ms",
    type=click.IntRange(1, MAX_DEADLINE_MS),
    help="Time your decisions as an arena does (the prompt shows the time left).",
)
@click.option(
    "--time-bank-ms",
    type=click.IntRange(0, MAX_DEADLINE_MS),
    help="With --decision-ms: your time bank per match [default: 10000].",
)
@click.pass_context
def _human_play(
    ctx: click.Context,
    vs: tuple[str, ...],
    n: int,
    ruleset: str,
    seed: int,
    max_deals: int | None,
    decision_ms: int | None,
    time_bank_ms: int | None,
) -> None:
    """Play against bots yourself in the terminal: `arena-bot try human`, against two
    heuristic bots unless --vs names others (try's own --vs default is random,heuristic)."""
    ctx.invoke(
        try_, bot="human", vs=vs, n=n, ruleset=ruleset, seed=seed, max_deals=max_deals,
        decision_ms=decision_ms, time_bank_ms=time_bank_ms, log_level="warning",
    )  # fmt: skip


if __name__ == "__main__":
    main()
