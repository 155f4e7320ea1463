"""Run a tournament: referee in-process, one process per local bot, matches in parallel.

:func:`run_tournament` (async) / :func:`run` (sync, Ctrl-C safe):

1. opens and locks the database, looks up the tournament (id from the config) and works
   out which scheduled matches are still to play (completed ones are skipped: resume);
2. starts the referee's gRPC server (free port, or the configured host/port), registers one
   fresh token per local bot and the configured token of each remote bot;
3. launches each local bot as its own process (logs in ``<out>/logs/<bot>.log``), waits for
   every bot to connect and names the missing ones; only then is a new (or ``--fresh``)
   tournament stored, so that a run that cannot start leaves no empty tournament behind;
4. plays the pending matches ``concurrency`` at a time, storing each as it completes, with
   a progress bar (ETA) and live standings;
5. stops everything it started — bots, server — on success, on errors and on Ctrl-C;
6. recomputes the ratings from the stored results in schedule order.

A match that was running when the tournament stopped is not stored; the next run plays it
again (from its seed; with independent deals, every match of a resumed run from a fresh
seed, so that no bot is dealt cards it has seen).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import fcntl
import functools
import logging
import os
import re
import secrets
import shutil
import signal
import site
import socket
import stat
import string
import struct
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from arena.addresses import is_every_address, is_loopback_host, lan_address
from arena.ratings import RatingBook, rate_results
from arena.referee.config import cert_names, loopback_only_note, name_in_cert, names_not_reaching
from arena.render import printable
from arena.stopping import stop_signals
from arena.storage import (
    MatchToStore,
    Storage,
    StorageError,
    StorageFullError,
    StorageLockedError,
    file_in_the_way,
    lock_path,
    make_directory_of,
)
from arena.tournament.config import (
    BUNDLED_BOTS,
    BotSpec,
    TLSSpec,
    TournamentConfig,
    as_current_code,
    bot_code_files,
    bot_log_path,
    bundled_changed,
    code_digest,
    identity_changes,
)
from arena.tournament.schedule import SCHEDULE_VERSION, ScheduledMatch, match_id, replay_seed
from engine.rules import Ruleset, RulesetError, toml_shown
from sdk.procfs import processes

if TYPE_CHECKING:
    import grpc

__all__ = [
    "ConfigMismatch",
    "DatabaseLock",
    "Interrupted",
    "RefereeLike",
    "RunOptions",
    "TournamentError",
    "TournamentOutcome",
    "as_stored",
    "bot_command",
    "finalize",
    "orphans_stopped",
    "run",
    "run_tournament",
]

log = logging.getLogger(__name__)
#: What an organiser sees at the default verbosity (the runner's own INFO lines need -v):
#: progress without the live display, and a run that resumes.
progress_log = logging.getLogger("arena.tournament.progress")

_ROOT = Path(__file__).resolve().parents[2]


def _bot_pythonpath(inherited: str = "") -> str:
    """A local bot's PYTHONPATH: a checkout's root first, so that a bot run from it (a
    command bot's ``{python} mybot.py``) imports ``sdk`` from there. Not so the
    site-packages the arena was installed into by pip: this interpreter finds it anyway,
    and a bot running another one (its own venv, another Python version) would take that
    directory's grpc and protobuf, built for this interpreter, before its own ("cannot
    import name 'cygrpc'")."""
    sites = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())}
    first = () if _ROOT in sites else (str(_ROOT),)
    return os.pathsep.join(p for p in (*first, inherited) if p)


#: Process groups of the bots launched and not yet stopped: `run` kills what is left of
#: them if the event loop is torn down before it could stop them (a second Ctrl-C).
_LIVE_GROUPS: set[int] = set()


def _kill_session(sid: int, sig: int, *, group: bool = True) -> None:
    """Send ``sig`` to the session ``sid`` a bot leads (it was started in a session of its
    own): its process group (``group``), and on Linux every other process of the session
    too (a child that made a group of its own, as a shell with job control does, is still
    in it)."""
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(sid, sig)
    for pid, _, session in processes():
        if session == sid and pid != sid:
            with contextlib.suppress(OSError):  # gone meanwhile, not ours
                os.kill(pid, sig)


#: prctl's option that makes a process adopt the orphans of its descendants (Linux).
_PR_SET_CHILD_SUBREAPER = 36


@contextlib.contextmanager
def orphans_stopped() -> Iterator[None]:
    """While the block runs, this process adopts its descendants' orphans (Linux's child
    subreaper); at its end, those still alive are killed and reaped. A bot's process in a
    session of its own (``setsid``, a daemon) is out of reach of stopping the bot's session
    and outlived the tournament. For a process whose children are all its bots (``arena
    tournament``): a child it had before the block is left alone."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        yield
        return
    me = os.getpid()
    before = {pid for pid, parent, _ in processes() if parent == me}
    adopting = prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        yield
    finally:
        if adopting:
            prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            for pid, parent, _ in list(processes()):
                if parent == me and pid not in before:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                    with contextlib.suppress(ChildProcessError, OSError):
                        os.waitpid(pid, 0)


def _stop_bots_left_by(run: int) -> None:
    """Kill the bots a killed run (pid ``run``, gone) left running, and their sessions:
    those `arena-bot` does not run, which the parent-death signal does not stop (a Node
    bot retrying its arena for minutes), and any bot stopped (SIGSTOP) at the kill, whose
    parent-death SIGTERM waits for a SIGCONT. A bot is known by what the run set in its
    environment (``ARENA_PARENT_PID`` and ``ARENA_TOKEN``) and leads a session of its own,
    as the run started it; only this user's. Nothing while a process of that pid lives."""
    if run == os.getpid():
        return
    try:
        with open(f"/proc/{run}/stat", "rb") as fh:
            if fh.read().rpartition(b")")[2].split()[:1] != [b"Z"]:
                return  # (alive: that pid is another process's now, or the run's still)
    except FileNotFoundError:
        pass
    except OSError:
        return
    mark = f"ARENA_PARENT_PID={run}\0".encode()
    procs = list(processes(zombies=False))
    # Never the session this run is in, nor that of any process it descends from: a
    # shell (or a tmux, a supervisor) that leads one and kept a killed run's bot's
    # environment (this run started from a bot's shell, the variables copied to rerun a
    # bot by hand) would be killed with everything in it, this run as well.
    parent_of = {pid: parent for pid, parent, _ in procs}
    session_of = {pid: session for pid, _, session in procs}
    ours: set[int] = set()
    me, seen = os.getpid(), set()
    while me in session_of and me not in seen:  # (a cycle, were /proc read as it changed)
        seen.add(me)
        ours.add(session_of[me])
        me = parent_of[me]
    for pid, _, session in procs:
        if pid != session or session in ours:
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid():
                continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = b"\0" + fh.read()
        except OSError:  # gone meanwhile, not ours
            continue
        if b"\0" + mark in env and b"\0ARENA_TOKEN=" in env:
            log.warning("stopping bot process %d left running by the killed run (pid %d)",
                        pid, run)  # fmt: skip
            _kill_session(pid, signal.SIGKILL)


class TournamentError(RuntimeError):
    """The tournament cannot go on (bots missing, storage failing...): the message says why."""


class ConfigMismatch(TournamentError, StorageError):
    """The config names a stored tournament (its fixed ``id``) that it is not the config
    of: what was given is wrong, not the run failing (``arena tournament`` exits 2). (A
    :class:`StorageError` too, as the refusal of another config was before.)"""


class RefereeLike(Protocol):
    """What the tournament needs of a referee (``arena.referee.Referee`` or a test fake)."""

    def add_bot(self, name: str, token: str) -> None: ...

    async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]: ...

    async def run_match(
        self,
        match_id: str,
        ruleset: Ruleset,
        seed: int,
        seats: list[str],
        time_limit_s: float | None = None,
    ) -> dict[str, Any]: ...


@dataclass(slots=True)
class RunOptions:
    """How to run (not what): none of this changes the tournament id."""

    fresh: bool = False
    progress: bool = True
    console: Console | None = None
    #: Stop (as if interrupted) after this many newly played matches (tests, partial runs).
    max_new_matches: int | None = None
    #: How often a crashed local bot is restarted before the tournament gives up on it.
    max_restarts: int = 3


@dataclass(slots=True)
class TournamentOutcome:
    tournament_id: str
    db: Path
    total: int
    completed: int
    played_now: int
    skipped: int
    failed: list[tuple[int, str]] = field(default_factory=list)
    interrupted: bool = False
    #: Seconds spent playing matches (after every bot connected): the throughput's base.
    play_s: float = 0.0
    #: Seconds spent recording results and rating: the CPU time of building each match's
    #: record (the referee's, at its end) and of storing it (on the storage thread), the
    #: live rating update (with the live display only), and the final ratings
    #: (``finalize``). Where the tables waited longer for their results to be stored (the
    #: commit's fsync, the hand-over to the storage thread: at concurrency 1 a match waits
    #: for the one before it), that wait (:attr:`record_wait_s`) counts instead of the
    #: storing's CPU: whichever limits the tournament, its cores or its tables. A wait
    #: that delays nothing is not counted: that of a table with no match left while other
    #: tables still play (:attr:`record_idle_wait_s`).
    record_s: float = 0.0
    #: The time recording kept the tables from playing or the run from ending: the waits
    #: of tables for a store before their next match (a table plays its next match while
    #: its last one is stored: it waits only when that store is not done as the next
    #: match ends), summed and divided by the number of tables playing at once; plus the
    #: run's tail, :attr:`record_last_wait_s`, whole.
    record_wait_s: float = 0.0
    #: The run's tail: from the moment the last table stopped playing (no match left for
    #: it) to the moment the last store a table waited for returned. No table plays
    #: then, so the run is that much longer: counted whole (wall time, not divided by the
    #: tables). A table's wait for its last store counts only for this part.
    record_last_wait_s: float = 0.0
    #: Not in ``record_s``: the waits of tables with no match left for their last stores
    #: while another table still played (summed, over the same number of tables): such a
    #: table delays nothing, and its store waits for company to go in a shared commit.
    record_idle_wait_s: float = 0.0
    #: The part of ``record_s`` spent in ``finalize``, after the last match.
    finalize_s: float = 0.0
    #: The parts of ``record_s`` (docs/performance.md, "Recording changes of 2026-12-14"):
    #: the storage thread's CPU time, every match stored (``Storage.save_matches``); the
    #: referee's CPU time building the records (``Referee.record_cpu_s``); the live rating
    #: update (with the live display only); and how many commits stored the matches (one
    #: a group: a match stored alone is a commit of its own).
    store_cpu_s: float = 0.0
    build_cpu_s: float = 0.0
    rate_s: float = 0.0
    commits: int = 0

    @property
    def finished(self) -> bool:
        return self.completed == self.total


RefereeFactory = Callable[[TournamentConfig], RefereeLike]


def _real_referee(cfg: TournamentConfig) -> RefereeLike:
    from arena.referee import Referee, RefereeConfig

    wanted: dict[str, Any] = {
        "decision_ms": cfg.deadlines.decision_ms,
        "time_bank_ms": cfg.deadlines.time_bank_ms,
        "join_timeout_s": cfg.bot_wait_s,
        **dict(cfg.referee),
    }
    known = {f.name for f in dataclasses.fields(RefereeConfig)}
    referee: RefereeLike = Referee(RefereeConfig(**{k: v for k, v in wanted.items() if k in known}))
    return referee


async def _real_server(
    referee: RefereeLike, host: str, port: int, tls: TLSSpec | None = None
) -> tuple[grpc.aio.Server, int]:
    from arena.referee import TLSConfig, start_server

    creds = None if tls is None else TLSConfig(tls.cert, tls.key)
    server, bound = await start_server(referee, host=host, port=port, tls=creds)  # type: ignore[arg-type]
    return server, int(bound)


def bot_command(
    spec: BotSpec, *, host: str, port: int, token: str, ca: Path | None = None
) -> list[str]:
    """The argv that launches a local bot (``ca``: the arena serves TLS with this
    certificate, which the bot must trust)."""
    from arena.referee.server import host_port

    arena = host_port(host, port)  # IPv6: [::1]:PORT
    if spec.kind == "sdk":
        assert spec.bot is not None
        # `arena-bot run BOT ...`, run as `python -m sdk.cli` (sdk/cli.py's __main__ guard)
        # by this same interpreter.
        # --retry-for: should the arena die without stopping it, the bot gives up soon.
        # No --token: the command line of a process is readable by every user of the
        # machine (/proc/PID/cmdline), and another bot holding the token could take this
        # bot's seats; its environment (ARENA_TOKEN, set by _BotProcess) is not.
        # -P: the current directory is not put first on the path, where a folder of the
        # organiser's named `bots` hid the bundled bots (the loader still looks there for a
        # `module:Class` bot, after the bundled ones are found).
        tls = [] if ca is None else ["--ca", str(ca)]
        workers = [] if spec.workers is None else ["--workers", str(spec.workers)]
        return [sys.executable, "-P", "-m", "sdk.cli", "run", spec.bot, "--arena", arena,
                "--retry-for", "60", *tls, *workers]  # fmt: skip
    values = {"python": sys.executable, "arena": arena, "host": host, "port": str(port),
              "token": token, "name": spec.name, "ca": "" if ca is None else str(ca)}  # fmt: skip
    return [a.format(**values) for a in spec.command]


# ------------------------------------------------------------------------- bot processes


#: How much of the end of a bot's log :meth:`_BotProcess.tail` reads.
_TAIL_BYTES = 64 * 1024

#: A bot's log past this size is cut (:meth:`_BotProcess.trim_log`): a bot writing without
#: end would otherwise fill the disk, and the disk holds the results.
LOG_LIMIT_BYTES = 64 << 20
#: What a cut keeps of the log's beginning and of its end (start-up lines; the latest ones).
LOG_KEEP_BYTES = 1 << 20


class _BotProcess:
    """One local bot process; its output goes to a log file."""

    def __init__(
        self,
        spec: BotSpec,
        argv: list[str],
        token: str,
        log_path: Path,
        hidden: frozenset[str] = frozenset(),
        on_given_up: Callable[[str, str], None] | None = None,
    ) -> None:
        self.spec = spec
        self.argv = argv
        self.token = token
        #: Every bot's token: no variable of the organiser's environment holding one is
        #: passed on (a remote bot's ``token_env`` would let a local bot take its seats).
        self.hidden = hidden
        self.log_path = log_path
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        #: It died after its last restart: the referee plays its seats from now on.
        self.given_up = False
        #: Told ``(name, why)`` when it is given up (the referee's ``given_up``: a match
        #: that starts without it then forfeits it at once, not after a grace).
        self.on_given_up = on_given_up
        #: It exited with no match of this run left to play: it is not restarted.
        self.done = False
        self._fh: IO[bytes] | None = None
        #: Where this start's lines begin in the log (it keeps the earlier runs' lines).
        self._log_start = 0
        #: The log was cut in this run: the bot floods it, and the last cut, when it stops,
        #: leaves it at its first and last MiB whatever it wrote since the cut before.
        self._log_cut = False
        #: What the cuts dropped so far, and the length of the line the last one wrote: a
        #: cut drops the line of the one before (it follows the first MiB), and its own line
        #: counts every byte dropped, not only its own.
        self._log_dropped = 0
        self._log_marker = 0
        #: This start's output goes nowhere (its log could not be opened again at a restart).
        self._output_dropped = False
        #: This start was sent SIGKILL by :meth:`stop` (its exit is then no one else's doing).
        self.killed_here = False
        #: Its code files' digests as it was first launched (:meth:`code_changed`).
        self._code = _file_digests(spec)

    def give_up(self, why: str) -> None:
        """Restart it no more (``why``: what its process did): the referee plays its seats."""
        self.given_up = True
        if self.on_given_up is not None:
            self.on_given_up(self.spec.name, f"its process {why}, and is not restarted")

    async def start(self) -> None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            # Readable too: trim_log reads the log's end from this file, whatever its path
            # names by then (a bot may remove or replace its log).
            self._fh = _open_regular(self.log_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, "ab+")
            self._fh.write(_line_break(self._fh))  # (an earlier run's bot left half a line)
            self._log_start = self._fh.seek(0, os.SEEK_END)
            self._fh.write(f"--- {time.strftime('%H:%M:%S')} starting {self.spec.name}\n".encode())
            self._fh.flush()
            self._output_dropped = False
        except OSError as e:
            reason = e.strerror or str(e)
            blocker = file_in_the_way(self.log_path.parent)
            if isinstance(e, (FileExistsError, NotADirectoryError)) and blocker is not None:
                # (mkdir says only "File exists" of a file where the logs' directory goes)
                reason = f"{blocker} is a file, not a directory"
            said = (
                f"cannot write the log of bot {self.spec.name!r} to {self.log_path}: "
                f"{reason} (check the `out` directory, --out)"
            )
            if self.restarts == 0:
                raise TournamentError(said) from e
            # A restart: the bot played, and its seats would be forfeited for the storage
            # of the organiser (an `out` made read-only or removed meanwhile): it plays on,
            # what it writes dropped.
            log.warning("%s: restarted all the same, its output dropped", said)
            self._output_dropped = True  # (tail() must not show the last start's lines)
            if self._fh is not None:
                with contextlib.suppress(OSError):
                    self._fh.close()
                self._fh = None
        env = {k: v for k, v in os.environ.items() if v not in self.hidden}
        env.update(dict(self.spec.env))
        env["PYTHONPATH"] = _bot_pythonpath(env.get("PYTHONPATH", ""))
        if not env["PYTHONPATH"]:
            del env["PYTHONPATH"]
        env["ARENA_TOKEN"] = self.token
        env["ARENA_PARENT_PID"] = str(os.getpid())  # bundled bots die with the arena
        env["PYTHONUNBUFFERED"] = "1"
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=self._fh if self._fh is not None else asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.STDOUT,
                cwd=str(self.spec.cwd) if self.spec.cwd else None,
                env=env,
                start_new_session=True,  # Ctrl-C reaches the arena only; it stops the bots
            )
        except OSError as e:
            if self._fh is not None:
                self._fh.close()
            self._fh = None
            raise TournamentError(
                f"cannot launch bot {self.spec.name!r} ({self.argv[0]}): "
                f"{_launch_error(self.argv[0], e, self.spec.cwd, env.get('PATH'))}"
            ) from e
        _LIVE_GROUPS.add(self.proc.pid)
        self.killed_here = False
        _first_to_go(self.proc.pid)
        log.info("bot %s started (pid %d, log %s)", self.spec.name, self.proc.pid, self.log_path)

    def note(self, text: str) -> None:
        """A line of the runner's in the bot's log (like the one each start begins with), so
        that the log read alone tells why the bot stopped and what came of it."""
        if self._fh is None:
            return
        with contextlib.suppress(OSError):  # (a full disk: the storage's error says so)
            self._fh.write(
                _line_break(self._fh) + f"--- {time.strftime('%H:%M:%S')} {text}\n".encode()
            )
            self._fh.flush()

    def trim_log(self, last: bool = False) -> None:
        """Cut the log to its first and last :data:`LOG_KEEP_BYTES` once it is larger than
        :data:`LOG_LIMIT_BYTES`, with a line saying how much was dropped. The bot writes on
        (it appends); what it writes during the cut itself may be lost. ``last`` (the bot
        is stopped): a log cut before is cut again once it holds more than it keeps."""
        fh = self._fh
        if fh is None:
            return
        try:
            size = os.fstat(fh.fileno()).st_size
            # (A bot printing in a loop writes tens of MiB after a cut before the next
            # check: without the last cut its log would stay up to 64 MiB, not the 2 kept.)
            limit = 2 * LOG_KEEP_BYTES + 4096 if last and self._log_cut else LOG_LIMIT_BYTES
            if size <= limit:
                return
            # (From the file the bot writes to, not its path: a bot that removes its log
            # goes on writing to the file without a name, and a cut by path would fail
            # every half second, a warning each time.)
            end = os.pread(fh.fileno(), LOG_KEEP_BYTES, size - LOG_KEEP_BYTES)
            end = end[end.find(b"\n") + 1 :]  # from a line's start
            os.ftruncate(fh.fileno(), LOG_KEEP_BYTES)
            dropped = self._log_dropped + size - LOG_KEEP_BYTES - len(end) - self._log_marker
            marker = (
                f"\n--- {time.strftime('%H:%M:%S')} log over {LOG_LIMIT_BYTES >> 20} MiB: "
                f"{dropped} bytes dropped here ---\n".encode()
            )
            self._log_dropped, self._log_marker = dropped, len(marker)
            fh.write(marker + end)
            fh.flush()
            self._log_cut = True
        except OSError as e:  # (the disk is full, say: the storage's error will say so)
            log.warning("could not cut the log of bot %s (%s): %s", self.spec.name,
                        self.log_path, e.strerror or e)  # fmt: skip
            return
        self._log_start = min(self._log_start, LOG_KEEP_BYTES)

    @property
    def exited(self) -> bool:
        return self.proc is not None and self.proc.returncode is not None

    def code_changed(self) -> list[Path]:
        """The program files of its code (those of the files the tournament's id digests
        that are programs: :func:`_file_digests`) edited or removed since it was first
        launched: started again, it would play this tournament's matches with other code
        than the tournament's. A file its command names that was not there at its launch is
        none of that code (it started without it): what the bot writes, a log or a table
        named on its command line, made a bot that crashed once never be restarted ("its
        code changed ... (bot.log)")."""
        now = _file_digests(self.spec)
        return sorted(f for f, digest in self._code.items() if now.get(f) != digest)

    def tail(self, lines: int = 8) -> str:
        """The last ``lines`` lines this start of the bot wrote (not an earlier run's), from
        the log's last ``_TAIL_BYTES`` at most: a bot may have written gigabytes."""
        if self._output_dropped:
            # (The log still holds the start before, read from its start: shown again as
            # this start's, its old error read as the reason of this exit.)
            return "(its output is dropped: its log could not be opened when it was restarted)"
        try:
            with _open_regular(self.log_path, os.O_RDONLY, "rb") as fh:
                end = fh.seek(0, os.SEEK_END)
                fh.seek(max(self._log_start, end - _TAIL_BYTES))
                text = fh.read(_TAIL_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return ""
        # Shown on the organiser's terminal: a bot's escape sequences (a reset, a window
        # title, the clipboard) are shown as text, not obeyed.
        text = printable(text.replace("\r\n", "\n"), keep="\n\t")
        # Each line cut in its middle: a bot's one long line (a progress bar redrawn with
        # carriage returns, a dump) filled the screen with the 64 KiB read, its end (the
        # error) lost in it.
        return "\n".join(_cut_line(line) for line in text.rstrip().splitlines()[-lines:])

    async def stop(self, grace: float = 3.0) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is not None:
            if proc.pid in _LIVE_GROUPS:  # (not once stopped: the id may be reused then)
                # The bot itself is gone; what it started may not be (a crash leaves its
                # children running). The session id stays theirs while any of them lives.
                _kill_session(proc.pid, signal.SIGKILL)
        elif proc is not None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                self.killed_here = self.killed_here or sig == signal.SIGKILL
                _kill_session(proc.pid, sig)  # the bot's whole session (its children too)
                try:
                    await asyncio.wait_for(proc.wait(), wait)
                    break
                except TimeoutError:
                    continue
            # The bot left at the SIGTERM; a child of its may not have (one forked by the
            # SDK inherits asyncio's handler, which ignores it): the rest of the session
            # gets the SIGKILL. Not its process group: the bot is reaped, and its id (the
            # group's) may be another process's by now.
            _kill_session(proc.pid, signal.SIGKILL, group=False)
        if proc is not None:
            _LIVE_GROUPS.discard(proc.pid)
        if self._fh is not None:
            # What it wrote since the last check (twice a second) is cut too: a bot printing
            # fast writes gigabytes in half a second, and its log stays on the disk.
            self.trim_log(last=True)
            # On a full disk a line of note() stays in the file's buffer, and closing writes
            # it again: the error (said once by the storage) must not end the supervision
            # of every bot. The file is closed all the same.
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None


#: A bot's ``oom_score_adj`` (Linux, -1000 to 1000): the most the kernel's out-of-memory
#: killer can favour a process by.
BOT_OOM_SCORE_ADJ = 1000


def _first_to_go(pid: int) -> None:
    """Make the bot process ``pid`` (what it starts from now on inherits it) the first that
    the kernel's out-of-memory killer picks, before the arena, whose process holds the
    referee, every match under way and the results to store. Without it a bot allocating
    in many processes of some 30 MB each got the arena killed (the largest process then).
    Nothing where there is no such file (not Linux)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/oom_score_adj", "w") as fh:
        fh.write(str(BOT_OOM_SCORE_ADJ))


def _exit_words(p: _BotProcess, code: int | str | None) -> str:
    """``code N``, bot ``p``'s exit as the runner's lines and incidents say it. A SIGKILL
    the runner did not send (:meth:`_BotProcess.stop`) says who likely did: the kernel's
    out-of-memory killer, whose first pick bots are (:func:`_first_to_go`); "code -9"
    alone sent the organiser looking for a crash in the bot's log, which ends mid-line.
    Exit code 137 (128 + 9) is what a shell or wrapper (``sh -c 'python bot.py'``) exits
    with when the program it waited for was ended by SIGKILL: said to be possibly the same
    (a program may also exit 137 of its own accord)."""
    oom = (f"the kernel's out-of-memory killer may have ended it, bots being its first pick, "
           f"oom_score_adj {BOT_OOM_SCORE_ADJ}; see dmesg")  # fmt: skip
    if code not in (-signal.SIGKILL, 128 + signal.SIGKILL) or p.killed_here:
        return f"code {code}"
    if code == -signal.SIGKILL:
        return f"code {code} (SIGKILL, not sent by the arena: {oom})"
    if code == 128 + signal.SIGKILL:
        return (f"code {code} (128 + 9, as a shell or wrapper exits when the program it ran "
                f"was ended by SIGKILL, which the arena did not send: if so, {oom})")  # fmt: skip
    return f"code {code}"


def _file_digests(spec: BotSpec) -> dict[Path, str | None]:
    """Each of ``spec``'s program files -> the digest of its contents now (None: unreadable).

    Of the files the tournament's id digests, those that are programs: the first a command
    names (the script its interpreter runs: ``sh bot.sh``), a ``.py`` file, an executable
    one. A command may also name a file its bot writes (a state file, a marker of a crash:
    ``mybot.py --state state.json``), which changes as it plays or is made after its
    launch: read as code, that bot, crashing once, was given up instead of restarted."""
    files = bot_code_files(spec)
    return {
        f: code_digest([f])
        for k, f in enumerate(files)
        if (k == 0 and spec.kind == "command") or _is_program(f)
    }


def _is_program(path: Path) -> bool:
    """Whether ``path`` holds a program: a ``.py`` file (even gone: removing it is a change),
    or an executable file."""
    if path.suffix == ".py":
        return True
    try:
        return path.is_file() and bool(path.stat().st_mode & 0o111)
    except OSError:
        return False


#: A line of a bot's tail on the arena's screen is cut to its first and last characters.
_TAIL_LINE_HEAD, _TAIL_LINE_END = 150, 350


def _cut_line(line: str) -> str:
    """``line`` cut in its middle to its first ``_TAIL_LINE_HEAD`` and last
    ``_TAIL_LINE_END`` characters, saying how many were cut, when it is longer.

    >>> _cut_line("a" * 150 + "b" * 850 + "c" * 350).split(" ... ")[1], _cut_line("short")
    ('850 characters cut', 'short')
    """
    cut = len(line) - _TAIL_LINE_HEAD - _TAIL_LINE_END
    if cut <= 40:  # (what the words would take)
        return line
    return f"{line[:_TAIL_LINE_HEAD]} ... {cut} characters cut ... {line[-_TAIL_LINE_END:]}"


def _line_break(fh: IO[bytes]) -> bytes:
    """``b"\\n"`` when the log ``fh`` ends inside a line (a bot that wrote half a line, then
    crashed), else ``b""``: a line of the runner's then starts a line of its own, not read
    as the end of the bot's."""
    fh.flush()
    size = os.fstat(fh.fileno()).st_size
    return b"\n" if size and os.pread(fh.fileno(), 1, size - 1) != b"\n" else b""


def _launch_error(
    program: str, e: OSError, cwd: Path | None, search_path: str | None = None
) -> str:
    """Why ``program`` could not be started, said of the file the user named. The kernel's
    "No such file or directory" for a script whose ``#!`` interpreter is missing named a
    file that is there; a relative path says where it was looked for."""
    try:
        return _launch_reason(program, e, cwd, search_path)
    except OSError:
        # The file cannot be looked at either (a name too long for the system, a directory
        # this user may not search, a stale network handle: Python 3.11's Path.is_file
        # raises for those): the error as it is. Raised from here, it was no TournamentError:
        # a restart's ended the supervision of every bot, a start's named no bot.
        return e.strerror or str(e)


def _launch_reason(
    program: str, e: OSError, cwd: Path | None, search_path: str | None = None
) -> str:
    """:func:`_launch_error`'s reasons, looking at the files (which may raise);
    ``search_path``: the PATH the bot was started with (None: this process's)."""
    why = e.strerror or str(e)
    if e.errno == errno.E2BIG:
        # (the kernel's "Argument list too long" of an `env` value too: nothing said which)
        return (
            f"{why}: its command line and environment are more than the system passes to a "
            "program (a word or an environment variable of 128 KiB or more, its `env` "
            "among them, or all of them together past `getconf ARG_MAX`)"
        )
    if cwd is not None and e.filename == str(cwd):
        # The child could not enter the bot's `cwd` (removed or renamed since the config was
        # read, a restart's): nothing is wrong with the program, which the checks below would
        # blame ("its loader ... was not found" of the Python running every bot).
        return f"its working directory (cwd) {printable(str(cwd))} cannot be entered: {why}"
    where = Path(cwd or ".") / program if os.sep in program else None
    if where is None and isinstance(e, FileNotFoundError):
        # A bare name PATH does hold fails so too when its #! interpreter is gone (the
        # arena-bot of a virtual environment moved elsewhere): the file found is looked at
        # below, as a path would be ("not found in any directory of PATH" named a program
        # `which` finds).
        found = shutil.which(program, path=search_path)
        where = None if found is None else Path(cwd or ".") / found
    first = b""
    if where is not None and where.is_file():
        with contextlib.suppress(OSError), where.open("rb") as fh:
            first = fh.readline(256)
    if first.startswith(b"#!"):
        # The kernel takes the interpreter up to a space or a tab: a carriage return (a
        # file saved with Windows line endings) is part of its name.
        line = first[2:].rstrip(b"\n").lstrip(b" \t")
        word = line.replace(b"\t", b" ").split(b" ", 1)[0]
        interp = word.rstrip(b"\r").decode("utf-8", "replace")
        shown = printable(line.strip().decode("utf-8", "replace")) or "(none)"
        if isinstance(e, FileNotFoundError):
            if word.endswith(b"\r"):
                return (
                    f"its interpreter (the #! line: {shown}) was not found: the line ends in "
                    "a carriage return (the file has Windows line endings, CRLF: convert "
                    "them to LF)"
                )
            return f"its interpreter (the #! line: {shown}) was not found"
        if isinstance(e, PermissionError) and where and os.access(where, os.X_OK) and interp:
            # (A relative interpreter is looked for from the bot's directory, as the kernel
            # does: the bot runs there.)
            at = Path(cwd or ".") / interp
            if at.is_dir():
                return f"its interpreter (the #! line: {shown}) is a directory"
            if at.is_file() and not os.access(at, os.X_OK):
                if _on_noexec(at):
                    return f"its interpreter (the #! line: {shown}) is {_NOEXEC}"
                return f"its interpreter (the #! line: {shown}) is not executable"
    if isinstance(e, FileNotFoundError) and first.startswith(b"\x7fELF") and where:
        # (A compiled program that is there: what is missing is the loader it names, its
        # libc's, e.g. one built on another system; "not found" named the program.)
        loader = printable(_elf_loader(where).decode("utf-8", "replace")) or "(unknown)"
        return (
            f"its loader ({loader}, named in the program) was not found: a program built "
            "for another system (another libc or architecture)"
        )
    if isinstance(e, PermissionError) and where is not None:
        if where.is_dir():
            return "it is a directory"
        if where.is_file() and not os.access(where, os.X_OK):
            if _on_noexec(where):
                # (chmod +x would change nothing: the file may be executable already)
                return f"{why}: the file is {_NOEXEC} (name its interpreter first)"
            return f"{why}: the file is not executable (chmod +x, or name its interpreter first)"
    if e.errno == errno.ENOEXEC and where is not None and where.is_file():
        # (The kernel's "Exec format error" names nothing: what it could not run is said.)
        if first.startswith(b"\xef\xbb\xbf#!"):
            return (
                f"{why}: its #! line follows a byte-order mark (the file is saved as UTF-8 "
                "with BOM: save it without)"
            )
        if first.startswith(b"\x7fELF"):
            return f"{why}: a program built for another architecture (or a damaged one)"
        if not first.startswith(b"#!"):
            return (
                f"{why}: the file has no #! line naming its interpreter (add one, such as "
                "#!/usr/bin/env python3, or name its interpreter first)"
            )
    if isinstance(e, FileNotFoundError) and where is not None and where.is_symlink():
        # (The name is there, `ls` shows it: what is missing is the file it links to.)
        with contextlib.suppress(OSError):
            target = os.readlink(where)
            shown = printable(target)
            if os.path.islink(where.parent / target):
                # (a chain, `bot -> current/bot` with `current` gone: "a link to
                # current/bot, which is not there" named one that `ls` shows)
                end = printable(os.path.realpath(where))
                return (
                    f"{why}: it is a symbolic link to {shown}, itself a link: where the "
                    f"links lead, {end}, is not there"
                )
            return f"{why}: it is a symbolic link to {shown}, which is not there"
    if where is not None and not where.is_absolute():
        why += f" (looked for in {Path(cwd or '.').resolve()})"
    if isinstance(e, FileNotFoundError) and where is None:
        # A bare name looked for in PATH: `arena-bot` of the virtual environment the arena
        # runs from, not activated (`.venv/bin/arena tournament`), read only "No such file or
        # directory", of a program that is there.
        why += ": not found in any directory of PATH"
        beside = Path(sys.executable).parent / program
        if beside.is_file() and os.access(beside, os.X_OK):
            why += (
                f" (this arena's Python has it in {printable(str(beside.parent))}, which PATH "
                f"lacks: write it as {printable(str(beside))}, or activate that environment "
                "before the run)"
            )
    return why


def _crlf_hint(program: str, cwd: Path | None) -> str:
    """A line saying that the script ``program`` has Windows line endings, if its ``#!``
    line ends in a carriage return, else ``""``. The kernel then runs ``#!/usr/bin/env
    python3`` all the same, and env looks for ``python3\\r`` and exits with code 127, its
    words ("use -[v]S to pass options in shebang lines") pointing elsewhere."""
    if os.sep not in program:
        return ""
    try:
        with (Path(cwd or ".") / program).open("rb") as fh:
            first = fh.readline(256)
    except (OSError, ValueError):
        return ""
    if not (first.startswith(b"#!") and first.endswith(b"\r\n")):
        return ""
    return (
        "\nits script's #! line ends in a carriage return (the file has Windows line "
        "endings, CRLF: convert them to LF)"
    )


def _elf_loader(path: Path) -> bytes:
    """The program loader (``PT_INTERP``) the ELF file ``path`` names, ``b""`` if none."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
            word = "Q" if wide else "I"
            (phoff,) = struct.unpack_from(order + word, head, 32 if wide else 28)
            size, count = struct.unpack_from(order + "HH", head, 54 if wide else 42)
            for i in range(min(count, 64)):
                fh.seek(phoff + i * size)
                ph = fh.read(size)
                if struct.unpack_from(order + "I", ph)[0] != 3:  # PT_INTERP
                    continue
                # (p_offset and p_filesz: 8 and 32 in a 64-bit header, 4 and 16 in 32-bit)
                (offset,) = struct.unpack_from(order + word, ph, 8 if wide else 4)
                (length,) = struct.unpack_from(order + word, ph, 32 if wide else 16)
                fh.seek(offset)
                return fh.read(min(length, 4096)).rstrip(b"\0")
    except (OSError, struct.error, IndexError):
        pass
    return b""


#: Why a file with its execute bits cannot run all the same.
_NOEXEC = "on a file system mounted noexec (no program there can run)"


def _on_noexec(path: Path) -> bool:
    """Whether ``path`` is on a file system mounted ``noexec``, where the kernel refuses to
    run any file (``Permission denied``) whatever its mode: its execute bits mean nothing,
    and "chmod +x" would be no advice."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_NOEXEC", 0))
    except OSError:
        return False


def _open_regular(path: Path, flags: int, mode: str) -> IO[bytes]:
    """``path`` opened (``flags``, as ``mode``) if it is a regular file. Without a
    non-blocking open, a FIFO a bot put in place of its log would stop the event loop, and
    with it every match, until something opened the other end."""
    not_regular = OSError(errno.EINVAL, f"{path} is not a regular file")
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise not_regular  # (a FIFO opened to write without a reader: ENXIO, unclear)
    fd = os.open(path, flags | os.O_NONBLOCK, 0o600)  # (a bot may log its hand)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def _largest_logs(folder: Path, over: int = 10 << 20) -> str:
    """The bots' logs in ``folder`` larger than ``over`` bytes, largest first, as a clause
    for a disk-full error ("" if none): a bot writing without end fills the disk, and the
    error otherwise names only the database."""
    sizes = []
    with contextlib.suppress(OSError):
        for f in folder.iterdir():
            with contextlib.suppress(OSError):
                if f.suffix == ".log" and f.is_file() and f.stat().st_size > over:
                    sizes.append((f.stat().st_size, f))
    if not sizes:
        return ""
    sizes.sort(reverse=True)
    listed = ", ".join(f"{f} ({n / 1e6:.0f} MB)" for n, f in sizes[:3])
    return f" (bots' logs that large: {listed})"


# ------------------------------------------------------------------------- the run


#: How often, and how far apart, taking a database's lock is tried (see DatabaseLock).
_LOCK_TRIES = 25
_LOCK_RETRY_S = 0.02


class DatabaseLock:
    """An exclusive lock next to the database (`<db>.lock`): one writer (`arena tournament`,
    `arena serve --db`) per database at a time; `arena web` shows a tournament as running
    while it is held."""

    def __init__(self, db: Path) -> None:
        self.db = Path(db)
        self.path = lock_path(db)
        self._fh: IO[str] | None = None
        #: The pid in the lock file when it was taken: a run's that ended without
        #: releasing it (killed), or None.
        self.left_by: int | None = None

    def acquire(self, owner: str = "") -> None:
        """Take the lock for tournament ``owner`` (written in the file beside the pid, so
        that `arena web` shows that one as running, not every unfinished one)."""
        # A database with a second name (a hard link) has a lock file and a write-ahead log
        # (`-wal`) per name: two runs through two names would both run, each on its own
        # log, and the results of one be lost; a run killed through one name would leave
        # results in a log the other name never reads. Only a database of one name is written.
        try:
            links = os.stat(self.db).st_nlink
        except OSError:  # not there yet (created after the lock), or SQLite says why not
            links = 1
        if links > 1:
            raise StorageError(
                f"{self.db} has {links} names (hard links): SQLite keeps a database's "
                "journal (-wal) and this lock beside the name it is opened by, so runs through "
                "two names would each write their own and lose results. Remove the other "
                "names (`find / -samefile DB`), or write a copy (`cp`), then run again"
            )
        # The file locked must still be the one at the path: a runner that ends removes the
        # file, and one that opened it just before would hold a lock on a file no one else
        # can see any more (two runs on one database). Then try again, with the new file.
        for _ in range(10):
            self._lock_file()
            assert self._fh is not None
            try:
                same = os.stat(self.path).st_ino == os.fstat(self._fh.fileno()).st_ino
            except OSError:  # removed since
                same = False
            if same:
                break
            self._fh.close()
            self._fh = None
        else:
            raise StorageLockedError(f"the lock file {self.path} keeps changing: is another "
                                     "`arena tournament` starting and stopping on it?")  # fmt: skip
        # (what a run that ended without releasing it, a killed one, wrote: see name)
        assert self._fh is not None
        self._fh.seek(0)
        left = self._fh.read().partition(" ")[0]
        self.left_by = int(left) if left.isascii() and left.isdigit() else None
        self.name(owner)

    def name(self, owner: str) -> None:
        """Say which tournament holds the lock (see :func:`arena.storage.lock_owner`)."""
        assert self._fh is not None
        try:  # (unbuffered: a write that failed must not be tried again by the close)
            os.ftruncate(self._fh.fileno(), 0)
            os.write(self._fh.fileno(), f"{os.getpid()} {owner}".rstrip().encode())
        except OSError as e:
            # A disk that filled up while the last run played (the file is made, but not a
            # byte written): that run said so, and this one said only "Error: cannot write:
            # No space left on device", naming no file and not what it meant.
            self.release()
            full = e.errno in (errno.ENOSPC, errno.EDQUOT)
            why, then = (("the disk is full", "free some space and run again") if full
                         else (e.strerror or str(e), "check it, or use another --db"))  # fmt: skip
            raise (StorageFullError if full else StorageError)(
                f"{self.path}: {why} while writing the lock file (it keeps two runs off one "
                f"database). Nothing stored is lost; {then}"
            ) from None

    def _lock_file(self) -> None:
        try:
            self._fh = self.path.open("a+")
        except OSError as e:  # a directory of that name, a read-only or foreign file, ...
            if e.errno == errno.EROFS:  # (there is nothing to remove: nothing can be made)
                raise StorageError(
                    f"cannot make the lock file {self.path}: {self.db} is on a read-only file "
                    "system: use a writable --db path (arena leaderboard, replay and web "
                    "read it where it is)"
                ) from None
            if not os.path.lexists(self.path):  # (nothing to remove: it cannot be made there)
                raise StorageError(
                    f"cannot make the lock file {self.path} (it keeps two runs off one "
                    f"database): {e.strerror or e}: use a --db in a directory this user may "
                    "write to (arena leaderboard, replay and web read it where it is)"
                ) from None
            raise StorageError(
                f"cannot open the lock file {self.path} (it keeps two runs off one database): "
                f"{e.strerror or e}; remove it if no run uses {self.path.with_suffix('')}, or "
                f"use another --db"
            ) from None
        try:
            # `arena web` and `arena leaderboard` take the lock shared for an instant to see
            # whether a run holds it: a reader polling at that moment is waited out (a few
            # tries), not taken for another run.
            for tries_left in range(_LOCK_TRIES - 1, -1, -1):
                try:
                    fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not tries_left:
                        raise
                    time.sleep(_LOCK_RETRY_S)
        except OSError:
            self._fh.seek(0)
            owner = self._fh.read().strip().partition(" ")[0]  # the pid
            self._fh.close()
            self._fh = None
            raise StorageLockedError(
                f"another `arena tournament` (or `arena serve --db`) is running on "
                f"{self.path.with_suffix('')}"
                + (f" (pid {owner})" if owner else "")
                + ": wait for it, or use another --db"
            ) from None

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):  # removed while still locked: see acquire
                self.path.unlink()
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


class _Display:
    """Progress bar with ETA plus live standings, or plain log lines."""

    def __init__(self, cfg: TournamentConfig, total: int, done: int, opts: RunOptions) -> None:
        self.cfg = cfg
        self.enabled = opts.progress
        self.console = opts.console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("•"),
            TimeElapsedColumn(),
            TextColumn("• ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task(cfg.name, total=total, completed=done)
        self.live: Live | None = None
        self.total = total
        self.done = done

    def __enter__(self) -> _Display:
        if self.enabled:
            self.live = Live(self.progress, console=self.console, refresh_per_second=4)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None

    def update(self, book: RatingBook | None, played: int) -> None:
        self.done += 1
        self.progress.update(self.task, completed=self.done)
        if self.live is not None and book is not None:
            self.live.update(Group(self.progress, _standings(book)))
        elif played % max(1, self.total // 10) == 0 or self.done == self.total:
            progress_log.info("%s: %d/%d matches", self.cfg.name, self.done, self.total)


#: The clock of the tables' waits for their stores (a module name: tests set the times).
_clock = time.perf_counter

#: The most matches a group commit waits for before it is written (a fraction of the
#: tables: see :class:`_GroupStores`), and the longest a handed-over store waits for others.
_GROUP_WAIT_S = 0.5


def _store_group(
    storage: Storage, tournament_id: str, matches: Sequence[MatchToStore]
) -> tuple[list[StorageError | None], float]:
    """:meth:`Storage.save_matches` on the storage thread; what became of each match, and
    the CPU time it took on this thread (time spent waiting, as for the commit's fsync,
    is not CPU)."""
    t = time.thread_time()
    errors = storage.save_matches(tournament_id, matches)
    return errors, time.thread_time() - t


class _GroupStores:
    """The tables' finished matches, stored in groups on the storage thread: every match
    handed over before a group is written is written in it, in ONE transaction with one
    durable commit (one fsync), instead of one each. A match's future is done once the
    commit holding it has returned: its result is its share of the group's CPU time, or
    the StorageError that kept it out (naming it).

    A group is written once ``group`` matches wait (half the tables: the others are
    still playing, and none has to wait for its last store), once the oldest has waited
    :data:`_GROUP_WAIT_S`, or at once when a table needs one of them (:meth:`need`: its
    next match has ended, and it hands over no second match before its last is stored).
    A table with no match left while others still play hands its last store over without
    needing it (it waits for company as the others' do; the table delays nothing
    meanwhile); the last table to stop playing needs every store still waiting
    (:meth:`need_all`): the run's ends go in a commit or two, not one a table.
    While a group is written, the next ones gather; a group whose oldest has waited its
    time, or that a table needs, is written as soon as the one on the thread returns. A
    crash loses no match counted done, and at most one match a table that is not: the
    same as one commit a match.
    """

    def __init__(
        self,
        storage: Storage,
        tournament_id: str,
        executor: ThreadPoolExecutor,
        group: int,
        on_error: Callable[[StorageError], None],
    ) -> None:
        self._storage, self._tid, self._executor = storage, tournament_id, executor
        self._group = max(1, group)
        self._on_error = on_error
        self._loop = asyncio.get_running_loop()
        self._waiting: list[tuple[MatchToStore, asyncio.Future[float]]] = []
        self._writing = False  # a group is on the storage thread
        # A table needs a store that waits, or the oldest has waited its time: the next
        # group is written once the thread is free (not after another wait).
        self._asked = False
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self.commits = 0  # groups written (each one commit)

    def submit(self, match: MatchToStore) -> asyncio.Future[float]:
        """Hand ``match`` over to be stored; the future is done once its commit returns."""
        future: asyncio.Future[float] = self._loop.create_future()
        self._waiting.append((match, future))
        if len(self._waiting) >= self._group:
            self._write()
        elif self._timer is None:
            self._timer = self._loop.call_later(_GROUP_WAIT_S, self._expire)
        return future

    def need(self, future: asyncio.Future[float]) -> None:
        """A table waits for ``future``: its group is written now (after the one on the
        thread, if any), not when more have gathered."""
        if any(f is future for _, f in self._waiting):
            self._asked = True
            self._write()

    def need_all(self) -> None:
        """No table plays any more: every store waiting (the tables' last ones, handed
        over without :meth:`need`) is written now, in one commit (after the one on the
        thread, if any): no more will come to join them."""
        if self._waiting:
            self._asked = True
            self._write()

    def _expire(self) -> None:
        """The oldest store waiting has waited :data:`_GROUP_WAIT_S`: its group is
        written now, or once the group on the thread returns. (The timer fired during a
        write was forgotten, and another full wait began when that write returned.)"""
        self._timer = None
        self._asked = True
        self._write()

    def _write(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writing or not self._waiting or self._closed:
            return  # (a group on the thread: the next is written when it returns)
        group, self._waiting = self._waiting, []
        self._writing, self._asked = True, False
        self.commits += 1
        matches = [m for m, _ in group]
        done = self._loop.run_in_executor(
            self._executor, _store_group, self._storage, self._tid, matches
        )
        done.add_done_callback(functools.partial(self._written, group))

    def _written(
        self,
        group: list[tuple[MatchToStore, asyncio.Future[float]]],
        done: asyncio.Future[tuple[list[StorageError | None], float]],
    ) -> None:
        self._writing = False
        if done.cancelled():
            for _, f in group:
                f.cancel()
            return
        error = done.exception()
        if error is not None:  # (not a StorageError: a defect, raised where it is awaited)
            for _, f in group:
                if not f.done():
                    f.set_exception(error)
            if all(f.cancelled() for _, f in group):
                _say_errors([error])  # (no table is left to raise it)
            return
        errors, cpu = done.result()
        # A table stopped meanwhile (a signal) does not hear of its store: what kept the
        # match out is said here (it is played again on resume), as :meth:`close` does.
        _say_errors([e for (_, f), e in zip(group, errors, strict=True) if f.done()])
        for (_, f), e in zip(group, errors, strict=True):
            if f.done():  # (its table was cancelled meanwhile)
                continue
            if e is None:
                f.set_result(cpu / len(group))
            else:
                self._on_error(e)
                f.set_exception(e)
        if self._waiting and (self._asked or len(self._waiting) >= self._group):
            self._write()
        elif self._waiting and self._timer is None:
            self._timer = self._loop.call_later(_GROUP_WAIT_S, self._expire)

    def close(self) -> None:
        """Write every match still waiting, the storage thread's shutdown then waits for
        it (a signal lets every store handed over finish; none is counted that was not
        done when its table stopped)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._closed = True
        if self._waiting:
            group, self._waiting = self._waiting, []
            last = self._executor.submit(
                _store_group, self._storage, self._tid, [m for m, _ in group]
            )
            last.add_done_callback(_log_errors)
            for _, f in group:
                f.cancel()


def _log_errors(done: Future[tuple[list[StorageError | None], float]]) -> None:
    """Say why a match stored as the run stopped was not stored (played again on resume)."""
    if done.cancelled():
        return
    error = done.exception()
    _say_errors([error] if error is not None else done.result()[0])


def _say_errors(errors: Sequence[BaseException | None]) -> None:
    """Log each error once: a group's error of the file or of its commit is every one of
    its matches' (the same error, naming them all), said once, not once a match."""
    said: list[BaseException] = []
    for e in errors:
        if e is not None and not any(e is s for s in said):
            said.append(e)
            log.error("%s", e)


def _standings(book: RatingBook) -> Table:
    t = Table(title="live standings (completion order; final ratings use schedule order)",
              title_justify="left", box=None, pad_edge=False)  # fmt: skip
    for col in ("#", "bot", "μ−3σ", "μ", "σ", "matches"):
        t.add_column(col, justify="left" if col == "bot" else "right")
    for i, r in enumerate(book.leaderboard(), 1):
        t.add_row(str(i), Text(r.bot), f"{r.conservative:.2f}", f"{r.mu:.2f}", f"{r.sigma:.2f}",
                  str(r.matches))  # fmt: skip
    return t


async def run_tournament(
    cfg: TournamentConfig,
    options: RunOptions | None = None,
    *,
    referee_factory: RefereeFactory | None = None,
    serve: bool = True,
    launch_bots: bool = True,
) -> TournamentOutcome:
    """Play every pending match of the tournament; see the module docstring.

    ``referee_factory`` builds the referee (default: ``arena.referee.Referee``); with
    ``serve=False`` no gRPC server is started and with ``launch_bots=False`` no process is
    launched (an in-process fake referee for tests needs neither).
    """
    opts = options or RunOptions()
    cfg = as_stored(cfg)  # (--fresh too: it forgets that one, its own)
    tid = cfg.tournament_id
    _check_open_files(cfg)
    if serve:  # before anything is stored: a busy port leaves no empty tournament behind
        from arena.referee.server import port_problem

        problem = port_problem(cfg.host, cfg.port)
        if problem is not None:
            if not problem.startswith("cannot listen"):
                hint = "check the config's host"
            elif cfg.port == 0:
                hint = "is host an address of this machine?"
            else:
                hint = (
                    "is the port free? set another, or 0 for any; is host an address of "
                    "this machine?"
                )
            raise TournamentError(f"{problem} ({hint})")
        _check_server_name(cfg)
    # The lock first, then the database: two runs started together on a new database
    # would otherwise both create its schema and switch it to WAL at once, and SQLite
    # refuses one of them as "locked" at once, without waiting (seen under load in CI),
    # where the second run is to be told which run holds the database.
    make_directory_of(cfg.db)
    lock = DatabaseLock(cfg.db)
    lock.acquire(cfg.tournament_id)
    if lock.left_by is not None:
        _stop_bots_left_by(lock.left_by)
    try:
        storage = Storage(cfg.db)
    except BaseException:
        lock.release()
        raise
    try:
        storage.check_writable()  # (before any bot starts, not at the first result)
        # (--fresh replaces a stored one even if its config is damaged)
        info = storage.tournament(tid, listing=opts.fresh)
        stored = info is not None
        stored_cfg = info.config if info is not None and isinstance(info.config, dict) else {}
        if info is not None and not opts.fresh and stored_cfg.get("schedule") != SCHEDULE_VERSION:
            # (only with a fixed `id`: otherwise the schedule's version is in the id)
            raise ConfigMismatch(
                f"tournament {tid} in {cfg.db} was stored by an older version of the arena, "
                "whose match seeds differ: it cannot be resumed (--fresh starts it again, or "
                "give another id)"
            )
        if info is not None and not opts.fresh and info.fingerprint != cfg.fingerprint:
            # (a fixed `id`: otherwise the fingerprint is in the id)
            changes = identity_changes(stored_cfg, cfg.identity()) or ["its settings"]
            raise ConfigMismatch(
                f"tournament {tid} in {cfg.db} was started with another config: "
                f"{'; '.join(changes)}. Run it with {_started_with(stored_cfg, cfg)} to resume "
                "it; --fresh forgets its matches and starts it again, or give this config "
                "another id"
            )
        if info is None:
            _say_unfinished_namesakes(cfg, storage)
        cfg = with_seed(cfg, storage, fresh=opts.fresh)
        schedule = cfg.schedule()

        stored_now = False  # by this run: the tournament in the database is this config's

        def store() -> None:
            """Forget the stored matches (``--fresh``) and store the tournament: only once
            every bot is connected, so that a run that cannot start (a bot that does not
            come, an address that cannot be served) loses nothing and leaves no empty row."""
            nonlocal stored_now
            stored_now = True
            if stored and opts.fresh:
                log.info("--fresh: forgetting the stored matches of %s", tid)
            storage.ensure_tournament(
                tid,
                replace=opts.fresh,
                name=cfg.name,
                fingerprint=cfg.fingerprint,
                config=cfg.to_json(),
                total_matches=len(schedule),
                bots=[(b.name, b.bot or " ".join(b.command) or b.kind) for b in cfg.bots],
            )

        resuming = stored and not opts.fresh
        if resuming:
            store()  # (checks that the stored one is this config's)
        done: set[int] = set()
        if resuming:
            for idx, (mid, seed, seats) in storage.stored_seatings(tid).items():
                # The stored matches must be this schedule's: a seed or a database changed
                # by hand would have the run play seatings twice and others never.
                m = schedule[idx] if 0 <= idx < len(schedule) else None
                # (With independent deals a resumed run deals from seeds of its own: below.)
                seed_ok = m is not None and (m.seed == seed or cfg.deals == "independent")
                if m is None or not seed_ok or m.seats != seats:
                    raise TournamentError(
                        f"stored match {mid} of tournament {tid} in {cfg.db} is not this "
                        "tournament's (another seed or seating than its schedule's: the "
                        "database was changed outside the arena); --fresh starts it again"
                    )
                done.add(idx)
        pending = [m for m in schedule if m.index not in done]
        if resuming and cfg.deals == "independent":
            # The matches that were under way when the last run stopped are played again:
            # from their schedule's seeds a bot would hold the same cards and know what
            # it saw of the others' hands. Every match of this run gets a fresh seed.
            nonce = secrets.randbits(63)
            pending = [dataclasses.replace(m, seed=replay_seed(m.seed, nonce)) for m in pending]
        outcome = TournamentOutcome(tid, cfg.db, len(schedule), len(done), 0, len(done))
        if resuming:
            progress_log.info("resuming %s: %d of %d matches already stored", tid, len(done),
                              len(schedule))  # fmt: skip
        if pending:
            played = False  # no exception on its way out (an error's, a signal's)
            try:
                await _play(cfg, opts, storage, schedule, pending, outcome,
                            referee_factory or _real_referee, serve, launch_bots,
                            None if resuming else store)  # fmt: skip
                played = True
            except (KeyboardInterrupt, asyncio.CancelledError):
                outcome.interrupted = True
                raise
            finally:
                outcome.completed = len(storage.completed_indices(tid))
                t_rec = time.perf_counter()
                try:
                    if resuming or stored_now:  # (not one this run never took over)
                        finalize(storage, cfg)
                except StorageError as e:
                    # (After an error or a signal, theirs is the message. A run that went
                    # well said nothing of it, exit 0: a complete tournament stayed
                    # unfinished in the database, without its ratings.)
                    if played:
                        finish = " and marks the tournament finished" if outcome.finished else ""
                        raise TournamentError(
                            f"every match played is stored, but not the ratings: {e} (the "
                            f"same command, run again, stores them{finish}: it plays no "
                            "stored match again)"
                        ) from e
                outcome.finalize_s = time.perf_counter() - t_rec
                outcome.record_s += outcome.finalize_s
        else:
            if not resuming:  # (a tournament of no match cannot be scheduled: see config)
                store()
            finalize(storage, cfg)
        outcome.completed = len(storage.completed_indices(tid))
        return outcome
    finally:
        lock.release()
        storage.close()


def _say_unfinished_namesakes(cfg: TournamentConfig, storage: Storage) -> None:
    """Warn when this run starts a new tournament beside an unfinished one of the same name:
    the config changed since that one was interrupted (a ruleset, `max_deals`, a bot, its
    code), so "the same command" does not resume it. Said before the run starts, with what
    changed, so that an organiser who meant to resume can stop and restore the config."""
    try:
        namesakes = [
            t for t in storage.tournaments()
            if t.name == cfg.name and t.id != cfg.tournament_id
            and "damaged" not in t.config and t.config.get("kind") != "serve"
        ]  # fmt: skip
    except StorageError:  # (the run itself says what is wrong with the database)
        return
    others = [t for t in namesakes if t.completed < t.total_matches]
    if not others:
        if namesakes:
            # The same command a week later, a bot file edited meanwhile: a new tournament
            # of every match, where the unedited command plays nothing. Said, with why.
            old = namesakes[-1]
            changes = identity_changes(old.config, cfg.identity()) or ["its settings"]
            progress_log.info(
                "a new tournament, %s, beside %s of the same name (finished %s): this config "
                "is not its own (%s)", cfg.tournament_id, old.id,
                (old.finished_at or "")[:16].replace("T", " "), "; ".join(changes),
            )  # fmt: skip
        return
    old = others[-1]
    changes = identity_changes(old.config, cfg.identity()) or ["its settings"]
    log.warning(
        "tournament %s in %s is unfinished (%d of %d matches stored), and this config is not "
        "its own (%s): this run starts a new tournament, %s, and leaves that one as it is. "
        "To finish %s instead, stop now and run it with %s.",
        old.id, cfg.db, old.completed, old.total_matches, "; ".join(changes),
        cfg.tournament_id, old.id, _started_with(old.config, cfg),
    )  # fmt: skip


def _started_with(stored: dict[str, Any], cfg: TournamentConfig) -> str:
    """What resumes a stored tournament this config is not: the config it was started
    with, and the arena's version too when its bundled bots changed (an upgrade: the
    config is the same, and "the config it was started with" alone was no way back)."""
    if bundled_changed(stored, cfg.identity()):
        return (
            "the config it was started with and the version of the arena that played it (a "
            "checkout of that version: this one's bundled bots are others)"
        )
    return "the config it was started with"


def as_stored(cfg: TournamentConfig) -> TournamentConfig:
    """``cfg``, or ``cfg`` with the ruleset stored of its tournament when that one differs
    from it only in options neither ruleset uses (:meth:`Ruleset.in_force`).

    A ruleset file written before such options were refused (``barrel_mode`` on preset
    1001, which has no barrel) is refused now, and the file without the option made
    another fingerprint, hence another tournament: a tournament interrupted before the
    upgrade could not be resumed by any config. The stored ruleset plays as the file's
    does; every other part of the identity must be the stored one's (its fingerprint is
    checked), so a tournament of other rules is never resumed. The stored tournament is
    the one of the config's fixed ``id``, else the latest of its name."""
    if not Path(cfg.db).is_file():
        return cfg
    try:
        with Storage.open_readonly(cfg.db) as st:
            same = st.tournament(cfg.tournament_id)
            if same is not None and same.fingerprint == cfg.fingerprint:
                return cfg
            candidates = [same] if cfg.explicit_id else [
                t for t in st.tournaments() if t.name == cfg.name and t.id != cfg.tournament_id
            ]  # fmt: skip
    except StorageError:  # (the run says what is wrong with the database)
        return cfg
    for info in reversed(candidates):
        config = info.config if info is not None and isinstance(info.config, dict) else {}
        adopted, digested, lined = _with_stored_code(cfg, config)
        try:
            rules = Ruleset.from_dict(config.get("ruleset", {}))  # (as stored: unused too)
        except (RulesetError, TypeError, ValueError):
            rules = cfg.ruleset
        if rules.in_force() == cfg.ruleset.in_force():
            adopted = dataclasses.replace(adopted, ruleset=rules)
        if info is not None and (adopted.fingerprint, adopted.tournament_id) == (
            info.fingerprint,
            info.id,
        ):
            unused = [k for k, v in rules.to_dict().items() if getattr(cfg.ruleset, k) != v]
            if unused:
                progress_log.info(
                    "tournament %s was stored with a ruleset that also sets %s, which it "
                    "never uses: this config, without it, plays the same rules and is that "
                    "tournament's (as an arena before 2026-12-06 stored it)",
                    info.id, ", ".join(f"{k} {toml_shown(getattr(rules, k))}" for k in unused),
                )  # fmt: skip
            if lined:
                progress_log.info(
                    "tournament %s was stored by an arena that digested the code of %s "
                    "with its line ends as they were (CRLF or not): the files are these, "
                    "and this config is that tournament's",
                    info.id, ", ".join(lined),
                )  # fmt: skip
            if digested:
                progress_log.info(
                    "tournament %s was stored by an arena that took every module of its "
                    "bots/ for the code of the bundled bots %s: the modules they run are "
                    "this arena's, and this config is that tournament's",
                    info.id, ", ".join(digested),
                )  # fmt: skip
            return adopted
    return cfg


def _with_stored_code(
    cfg: TournamentConfig, stored: Mapping[str, Any]
) -> tuple[TournamentConfig, list[str], list[str]]:
    """``cfg`` with the code digest ``stored`` (a stored config) has of each of its bots
    whose code an older arena digested otherwise where it is this arena's code: a bundled
    bot's as all of ``bots/`` (see :mod:`arena.tournament.bundled`) where the modules the
    bot runs are this arena's; any bot's files as their bytes, CRLF line ends or not
    (before round 52), where they are these files. Then the names of the bots of each kind."""
    was = {b.get("name"): b for b in stored.get("bots") or () if isinstance(b, Mapping)}
    bots, digested, lined = [], [], []
    for spec in cfg.bots:
        old = was.get(spec.name)
        code = old.get("code") if isinstance(old, Mapping) else None
        if isinstance(code, str) and code != spec.code:
            if code in spec.code_before:
                spec = dataclasses.replace(spec, code=code)
                lined.append(spec.name)
            elif (
                spec.kind == "sdk" and spec.bot in BUNDLED_BOTS
                and as_current_code(old).get("code") == spec.code  # type: ignore[arg-type]
            ):  # fmt: skip
                spec = dataclasses.replace(spec, code=code)
                digested.append(spec.name)
        bots.append(spec)
    return dataclasses.replace(cfg, bots=tuple(bots)), digested, lined


def with_seed(cfg: TournamentConfig, storage: Storage, *, fresh: bool = False) -> TournamentConfig:
    """``cfg`` with its tournament seed: the config's, else the one drawn at the first run of
    this tournament (stored; not with ``fresh``), else a new secret one. A seed written in a
    config is known to whoever reads the config, and from it every deal of every match
    follows."""
    if cfg.seed is not None:
        return cfg
    info = None if fresh else storage.tournament(cfg.tournament_id)
    drawn = (
        info.config.get("drawn_seed")
        if info is not None and isinstance(info.config, dict)
        else None
    )
    if not isinstance(drawn, int) or isinstance(drawn, bool) or not 0 <= drawn < 2**63:
        if info is not None:  # stored by hand or damaged: its matches cannot be resumed
            raise TournamentError(
                f"tournament {cfg.tournament_id} in {cfg.db} has no drawn seed stored "
                f"(found {drawn!r}): run with --fresh to start it again"
            )
        drawn = secrets.randbelow(2**63)
    return dataclasses.replace(cfg, seed=drawn, seed_drawn=True)


def finalize(storage: Storage, cfg: TournamentConfig) -> RatingBook:
    """Recompute the ratings from the stored results (schedule order) and store them."""
    tid = cfg.tournament_id
    results = storage.match_results(tid)
    book, history = rate_results(results, cfg.bot_names, draw_probability=cfg.draw_probability)
    info = storage.tournament(tid)
    finished = (
        info is not None and info.completed == info.total_matches and info.finished_at is None
    )
    storage.save_ratings(tid, history, finished=finished)
    return book


async def _play(
    cfg: TournamentConfig,
    opts: RunOptions,
    storage: Storage,
    schedule: Sequence[ScheduledMatch],
    pending: list[ScheduledMatch],
    outcome: TournamentOutcome,
    referee_factory: RefereeFactory,
    serve: bool,
    launch_bots: bool,
    store: Callable[[], None] | None,
) -> None:
    """Serve, launch the bots, and once every bot is connected, ``store()`` the tournament
    (when it is not stored yet, or ``--fresh``) and play the ``pending`` matches."""
    from arena.referee.server import host_port

    tid = cfg.tournament_id
    referee = referee_factory(cfg)
    tokens: dict[str, str] = {}
    for b in cfg.bots:
        tokens[b.name] = b.token if b.token is not None else secrets.token_urlsafe(24)
        referee.add_bot(b.name, tokens[b.name])

    server: grpc.aio.Server | None = None
    procs: dict[str, _BotProcess] = {}
    stopping = asyncio.Event()
    monitor: asyncio.Task[None] | None = None
    # Matches of this run each bot still has to play: one that exits after its last one
    # (a `--matches N` bot, say) is not restarted.
    left = Counter(name for m in pending for name in m.seats)
    over = False  # every match played: remote bots are told the tournament is over
    remote: list[str] = []  # the remote bots' names
    failing = False  # an exception (an error, a signal) is on its way out
    try:
        _check_out(cfg.out)
        port = cfg.port
        if serve:
            try:
                server, port = await _real_server(referee, cfg.host, cfg.port, cfg.tls)
            except Exception as e:
                raise TournamentError(
                    f"cannot start the referee on {host_port(cfg.host, cfg.port)}: {e}"
                ) from e
            log.info("referee listening on %s%s", host_port(cfg.host, port),
                     " (TLS)" if cfg.tls else "")  # fmt: skip
        # A bot is told where to connect: to loopback when the arena listens everywhere.
        connect_host = cfg.host
        if is_every_address(cfg.host):
            connect_host = "::1" if ":" in cfg.host else "127.0.0.1"
        if cfg.tls is not None:  # the name the certificate is checked against
            connect_host = cfg.tls.server_name
        ca = None if cfg.tls is None else cfg.tls.cert
        if launch_bots:
            # Its bots are restarted when they die: the referee waits for them, whatever its
            # grace, until one is given up (not on test fakes).
            supervise = getattr(referee, "supervise", None)
            given_up = getattr(referee, "given_up", None)
            for b in cfg.bots:
                if b.is_local:
                    argv = bot_command(b, host=connect_host, port=port, token=tokens[b.name], ca=ca)
                    p = _BotProcess(b, argv, tokens[b.name], bot_log_path(cfg.out, b.name),
                                    hidden=frozenset(tokens.values()),
                                    on_given_up=given_up)  # fmt: skip
                    procs[b.name] = p
                    await p.start()
                    if supervise is not None:
                        supervise(b.name)
        remote = [b.name for b in cfg.bots if not b.is_local]
        if remote:
            # 0.0.0.0 / :: is where the arena listens, not an address a bot can reach; over
            # TLS a bot must name the host its certificate is for (an address fails the check)
            names = None if cfg.tls is None else cert_names(cfg.tls.cert)
            if cfg.tls is not None and (is_loopback_host(cfg.host) or not names):
                where = f"{host_port(cfg.tls.server_name, port)} (the certificate's name)"
            elif cfg.tls is not None and names is not None:
                # server_name is the name for the local bots, localhost by default: a bot
                # on another machine must connect by one of the names the certificate lists
                where = f"a name the certificate lists ({', '.join(names)}), port {port}"
                only_here = loopback_only_note(cfg.tls.cert, cfg.host)
                if only_here is not None:
                    log.warning("%s", only_here.removeprefix("note: "))
            elif is_every_address(cfg.host):
                where = f"this machine's address, port {port}"
                address = lan_address()
                if address is not None:  # (the one to hand out, as arena serve says it)
                    where += f" ({address}:{port} on its default route)"
            else:
                where = host_port(cfg.host, port)
            log.warning(
                "waiting up to %gs for remote bots %s: connect them to %s with their token%s",
                cfg.bot_wait_s, ", ".join(remote), where,
                "" if cfg.tls is None else f" over TLS (arena-bot run ... --ca {cfg.tls.cert})",
            )  # fmt: skip
        await _wait_for_bots(cfg, referee, procs, opts.max_restarts)
        if store is not None:
            store()
        monitor = asyncio.create_task(_monitor(procs, stopping, opts.max_restarts, left))
        t_play = time.monotonic()
        try:
            await _run_matches(cfg, opts, storage, schedule, pending, outcome, referee, left)
            over = not outcome.interrupted and not outcome.failed
        finally:
            outcome.play_s = time.monotonic() - t_play
        log.info("%s: %d matches played in this run", tid, outcome.played_now)
    except BaseException:
        failing = True
        raise
    finally:
        stopping.set()

        async def stop_everything() -> None:
            if monitor is not None:
                monitor.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await monitor
            await asyncio.gather(*(p.stop() for p in procs.values()), return_exceptions=True)
            if server is not None:
                if over and remote:
                    with contextlib.suppress(Exception):  # (the server stops whatever happens)
                        await _wait_for_remote_results(referee, remote, signalled)
                with contextlib.suppress(Exception):
                    end_streams = getattr(referee, "end_streams", None)  # (not on test fakes)
                    if end_streams is not None:  # remote bots still connected
                        if over:  # done for good: they stop
                            await end_streams("the tournament is over", final=True)
                        else:  # interrupted, or matches to retry: they wait for the next run
                            await end_streams()
                    await server.stop(1.0)

        # A signal while stopping (the first one, after the last match) would cancel this
        # stop halfway: the server would never be stopped (tracebacks as the loop closed),
        # remote bots not told, and a finished tournament would end "interrupted". The stop
        # runs to its end; the signal then stops the run as it would have a moment earlier,
        # unless every match is played (the run was ending anyway: it ends as it would have).
        signalled = asyncio.Event()  # (a signal while stopping: the wait above ends)
        if await _uncut(stop_everything(), signalled) and not failing:
            if not over:
                raise asyncio.CancelledError
            log.warning(
                "a signal came while the tournament was stopping after its last "
                "match: every match is played and stored; the stop is finished"
            )


#: Descriptors a run opens beside those open when it starts: gRPC's (the listening socket,
#: its pollers and wake-ups), the database's (its file, ``-wal``, ``-shm`` and lock file),
#: the storage thread's, a leaderboard file; and per bot its log and its connection, with
#: room for a reconnect (measured at the peak of a run: 18 + 2 a bot, 7 of them open at its
#: start).
_FILES_BASE = 16
_FILES_PER_BOT = 3


def _open_files() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # (not Linux: the standard three, and what importing opened)
        return 8


def _check_open_files(cfg: TournamentConfig) -> None:
    """The open files this run needs, before anything starts. Below that limit (`ulimit -n`
    of 16, say: a container's, a batch system's) a bot's launch failed ("Too many open
    files", the limit unsaid), SQLite said "cannot open ... check the path and
    permissions", gRPC could not bind its port, or the process died of a segmentation
    fault in gRPC. A soft limit under the need is raised (up to the hard one; to 1,024 at
    most unless more is needed, as every bot inherits it); a hard one under it is an error
    that says the limit."""
    try:
        import resource
    except ImportError:  # (not POSIX)
        return
    need = _open_files() + _FILES_BASE + _FILES_PER_BOT * len(cfg.bots)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    inf = resource.RLIM_INFINITY
    if soft == inf or soft >= need:
        return
    if hard == inf or hard >= need:
        want = max(need, 1024) if hard == inf else min(hard, max(need, 1024))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError) as e:
            raise TournamentError(
                f"this process may open {soft} files (`ulimit -n`), and a tournament of "
                f"{len(cfg.bots)} bots needs about {need}; raising the limit failed ({e}): "
                f"raise it (`ulimit -n {max(need, 1024)}`) and run it again"
            ) from e
        log.info("open files limit raised from %d to %d (a tournament of %d bots needs "
                 "about %d)", soft, want, len(cfg.bots), need)  # fmt: skip
        return
    raise TournamentError(
        f"this process may open {soft} files (`ulimit -n`; {hard} at most, the hard limit), "
        f"and a tournament of {len(cfg.bots)} bots needs about {need}: raise the limit "
        f"(`ulimit -n {max(need, 1024)}`, as root or in the limits of the container or "
        "session that runs it) and run it again"
    )


def _check_server_name(cfg: TournamentConfig) -> None:
    """With ``[tls]``, the bundled and ``module:Class`` bots connect to ``server_name``: one
    that does not resolve would keep every such bot retrying for ``bot_wait_s`` before the
    run gives up (its log saying "Domain name not found"). Named before anything starts."""
    if cfg.tls is None or not any(b.kind == "sdk" for b in cfg.bots):
        return
    name = cfg.tls.server_name
    try:
        socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        raise TournamentError(
            f"cannot resolve tls.server_name {name!r}, the name the local bots connect to: "
            f"{e} (a name the certificate lists and this machine answers to)"
        ) from e
    if names_not_reaching([name], cfg.host):
        # (host = "192.0.2.2" with the default localhost: each local bot met "connection
        # refused" for bot_wait_s, and the run gave up saying only that)
        raise TournamentError(
            f"tls.server_name {name!r}, the name the local bots connect to, does not lead to "
            f"{cfg.host}, the one address the arena listens on (host): set server_name to a "
            f'name the certificate lists for it (or host = "0.0.0.0", every address)'
        )
    names = cert_names(cfg.tls.cert)
    if names and not name_in_cert(name, names):  # (each local bot failed its handshake)
        raise TournamentError(
            f"tls.server_name {name!r}, the name the local bots connect to, is not one the "
            f"certificate in {cfg.tls.cert} lists ({', '.join(names)}): their TLS handshakes "
            "would fail"
        )


def _check_out(out: Path) -> None:
    """``out`` must take the leaderboard files the run writes at its end: one that cannot be
    written (a read-only mount, another user's directory) is said before the first match.
    The bots' logs, opened as the bots start, found it only when a bot is local: with
    remote bots only, every match was played before it was found."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".arena-write-check-"):
            pass  # (created and removed, as the leaderboard's .tmp files are)
    except OSError as e:
        blocker = file_in_the_way(out)
        why = f"{blocker} is a file" if blocker is not None else e.strerror or str(e)
        raise TournamentError(
            f"cannot write the leaderboard files to {out}: {why} (check the `out` directory, --out)"
        ) from e


async def _wait_for_remote_results(
    referee: RefereeLike, remote: list[str], signalled: asyncio.Event
) -> None:
    """A remote bot that lost its connection in its last match, which ended while it was
    away, gets its grace period to come back for the result (as with `arena serve`): the
    server stopped at once, and the bot never learned it (local bots are stopped first).
    A signal (``signalled``) ends the wait."""
    wait = getattr(referee, "wait_for_away_results", None)  # (not on test fakes)
    away = getattr(referee, "away_with_results", None)
    settled = getattr(referee, "streams_settled", None)
    if settled is not None and not signalled.is_set():
        await settled()  # (a stream in its settle: its bot may yet be away with a result)
    if wait is None or away is None or not away(remote) or signalled.is_set():
        return
    grace = float(getattr(getattr(referee, "config", None), "reconnect_grace_s", 5.0))
    log.warning("waiting up to %g s for remote bot(s) %s to come back for their results "
                "(a signal stops the wait)", grace, ", ".join(away(remote)))  # fmt: skip
    back = asyncio.ensure_future(wait(grace, remote))
    cut = asyncio.ensure_future(signalled.wait())
    try:
        await asyncio.wait({back, cut}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        back.cancel()
        cut.cancel()


async def _uncut(aw: Coroutine[Any, Any, None], cut_event: asyncio.Event | None = None) -> bool:
    """Run ``aw`` to its end even if the calling task is cancelled meanwhile; True if it was
    (the cancellation is then withheld: the caller decides; ``cut_event`` is set)."""
    task = asyncio.ensure_future(aw)
    cut = False
    while True:
        try:
            await asyncio.shield(task)
            return cut
        except asyncio.CancelledError:
            if task.cancelled():  # (the stop itself was cancelled: the loop is closing)
                raise
            cut = True
            if cut_event is not None:
                cut_event.set()
            me = asyncio.current_task()
            if me is not None:
                me.uncancel()


#: arena-bot's options that make it connect with TLS (`--ca FILE`, `--ca=FILE`, `--tls`).
_TLS_OPTION = re.compile(r"(?:^|\s)--(?:ca|tls)(?:[=\s]|$)")


def _no_ca_hint(spec: BotSpec, tls: TLSSpec | None) -> str:
    """Why a ``command`` bot that never connected may not have: with ``[tls]`` the referee
    serves TLS only, and a command without ``{ca}`` (``tournaments/remote.toml``'s, once
    its ``[tls]`` is uncommented) connects in plain text, which is never let in; its log
    only says ``socket closed``, again and again, until ``bot_wait_s`` runs out."""
    if tls is None or spec.kind != "command":
        return ""
    fields = {f for word in spec.command for _, f, _, _ in string.Formatter().parse(word) if f}
    if "ca" in fields:
        return ""
    # One that asks for TLS itself (`--ca arena.pem`, `--tls` for a certificate a public
    # authority signed; in an `sh -c "..."` word too) does not connect in plain text: it was
    # told that it lacked {ca} when it was only slow to start.
    if any(_TLS_OPTION.search(word) for word in spec.command):
        return ""
    return (
        "\n    (the arena serves TLS only, [tls], and this command has no {ca}: a bot "
        "connecting in plain text is never let in; arena-bot connects with TLS given "
        "--ca {ca})"
    )


async def _wait_for_bots(
    cfg: TournamentConfig, referee: RefereeLike, procs: dict[str, _BotProcess],
    max_restarts: int,
) -> None:  # fmt: skip
    names = list(cfg.bot_names)
    wait = asyncio.create_task(referee.wait_for_bots(names, cfg.bot_wait_s))
    deadline = time.monotonic() + cfg.bot_wait_s + 5
    # Watch the local processes meanwhile: one that dies before connecting is reported at
    # once, with its log; one that connected and died while others were still starting is
    # restarted, as it would be a moment later.
    welcomed = getattr(referee, "welcomed_bots", None)  # (a test's fake may not tell)
    while not wait.done():
        for p in procs.values():  # (a bot printing in a loop meanwhile: as _monitor does)
            p.trim_log()
        seen = set(welcomed()) if welcomed is not None else set()
        dead = [p for p in procs.values() if p.exited and not p.given_up]
        why = "before connecting"
        for p in [p for p in dead if p.spec.name in seen]:
            if p.restarts < max_restarts:
                dead.remove(p)
                failed = await _restart(p, p.proc.returncode if p.proc else None, max_restarts,
                                        begun=False)  # fmt: skip
                if failed is not None:  # (given up: nothing of it will come, say so now)
                    why = f"before the tournament began, and could not be started again: {failed}"
                    dead = [p]
                    break
            else:  # out of restarts before the tournament began: it cannot go on
                why = f"again, after {max_restarts} restarts, before the tournament began"
                dead = [p]
                break
        if dead:
            wait.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await wait
            p = dead[0]
            tail = p.tail()
            code = p.proc.returncode if p.proc else "?"
            # (In its log too, as at every exit: read alone, it ended on the bot's last line.)
            p.note(f"exited with {_exit_words(p, code)} {why}: the tournament stops")
            await p.stop()  # (what it started goes with it)
            raise TournamentError(
                f"bot {p.spec.name!r} exited with {_exit_words(p, code)} {why} (log "
                f"{p.log_path}):\n{tail}" + _crlf_hint(p.argv[0], p.spec.cwd)
            )
        if time.monotonic() > deadline:
            wait.cancel()
            break
        await asyncio.wait({wait}, timeout=0.2)
    missing = list(wait.result()) if wait.done() and not wait.cancelled() else names
    if missing:
        seen = set(welcomed()) if welcomed is not None else set()
        parts = []
        for name in missing:
            bp = procs.get(name)
            if bp is not None:
                # Every line of the tail indented under its bot: unindented, the second
                # and later lines read as the next bot's or the arena's own.
                tail = textwrap.indent(bp.tail(3), "    ")
                # (not of one that connected once: it did with TLS. A test's fake: no tls)
                hint = "" if name in seen else _no_ca_hint(bp.spec, getattr(cfg, "tls", None))
                parts.append(f"  {name}: local bot, still starting or stuck (log {bp.log_path})"
                             + (f"\n{tail}" if tail else "") + hint)  # fmt: skip
            elif any(b.name == name and not b.is_local for b in cfg.bots):
                parts.append(
                    f"  {name}: remote bot, connected with its token, then left before the "
                    "others were ready (it is not connected now)"
                    if name in seen
                    else f"  {name}: remote bot, never connected with its token"
                    # (gRPC ends a failed handshake before any call: the referee never
                    # hears of it, and the bot's own output is where it is said)
                    + (
                        " (over TLS: one that connects in plain text, with a --ca that is not "
                        "the certificate's, or by a name the certificate does not list fails "
                        "its handshake unseen here; its own output says why)"
                        if getattr(cfg, "tls", None) is not None
                        else ""
                    )
                )
            else:
                parts.append(f"  {name}: not launched (launch_bots is off)")
        refused = getattr(referee, "refused_tokens", None)
        bad, peer = refused() if refused is not None else (0, "")
        if bad and any(not b.is_local and b.name in missing for b in cfg.bots):
            # The referee cannot tell whose a wrong token was: it says that one came.
            parts.append(
                f"  (the arena refused {bad} stream{'s' if bad != 1 else ''} with an unknown "
                f"or missing token, the last from {peer}: is the remote bot's token right?)"
            )
        raise TournamentError(
            f"{len(missing)} of {len(names)} bots did not connect within {cfg.bot_wait_s:g}s:\n"
            + "\n".join(parts)
        )
    log.info("all %d bots connected", len(names))


async def _monitor(
    procs: dict[str, _BotProcess],
    stopping: asyncio.Event,
    max_restarts: int,
    left: Counter[str],
) -> None:
    """Restart a local bot that dies mid-tournament (its seats survive the referee's grace).

    ``left``: matches of this run each bot has still to play (``_run_matches`` counts down).
    """
    while not stopping.is_set():
        for p in procs.values():
            p.trim_log()
            if p.exited and not stopping.is_set():
                code = p.proc.returncode if p.proc else None
                if p.given_up or p.done:
                    continue
                if left[p.spec.name] <= 0:
                    p.done = True
                    how = _exit_words(p, code)
                    p.note(f"exited with {how} after its last match: not restarted")
                    log.info("bot %s exited with %s after its last match: not restarted",
                             p.spec.name, how)  # fmt: skip
                    await p.stop()  # what it started goes with it
                    continue
                if p.restarts >= max_restarts:
                    how = _exit_words(p, code)
                    p.give_up(f"exited with {how} again, after {max_restarts} restarts")
                    log.error("bot %s exited with %s again, after %d restarts: not "
                              "restarted; the referee plays its seats to the end (strikes, "
                              "then forfeits). Log tail:\n%s",
                              p.spec.name, how, max_restarts, p.tail(5))  # fmt: skip
                    p.note(f"exited with {how} again, after {max_restarts} restarts: not "
                           "restarted; the referee plays its seats to the end")  # fmt: skip
                    await p.stop()  # what it started goes with it
                    continue
                await _restart(p, code, max_restarts)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), 0.5)


async def _restart(
    p: _BotProcess, code: int | None, max_restarts: int, *, begun: bool = True
) -> str | None:
    """Start a bot that exited (``code``) again. One that cannot be started (its command is
    gone) is given up like one that keeps dying, not let loose: the supervision of every
    other bot goes on; why it could not be is returned (None: it was started). ``begun``:
    whether the tournament's matches have begun (before, the caller stops the start, and
    the log says nothing of seats played to the end). (One whose log cannot be opened
    again is started with its output dropped: see :meth:`_BotProcess.start`.)"""
    changed = p.code_changed()
    if changed:
        # Its id names the code the tournament began with: the changed code would play the
        # rest of its matches under it, two versions' results rated as one bot's.
        files = ", ".join(str(f) for f in changed)
        why = (
            f"exited with {_exit_words(p, code)}, and its code changed since the run began "
            f"({files})"
        )
        p.give_up(why)
        log.error("bot %s %s: not restarted, so that no match of this tournament is played "
                  "by other code than the one it was started with; %s. Log tail:\n%s",
                  p.spec.name, why, "the referee plays its seats to the end (strikes, then "
                  "forfeits)" if begun else "the tournament stops", p.tail(5))  # fmt: skip
        p.note(f"{why}: not restarted")
        await p.stop()  # what it started goes with it
        return f"its code changed since the run began ({files})"
    p.restarts += 1
    how = _exit_words(p, code)
    log.warning("bot %s exited with %s; restarting it (%d/%d). Log tail:\n%s",
                p.spec.name, how, p.restarts, max_restarts, p.tail(5))  # fmt: skip
    p.note(f"exited with {how}; restarting it ({p.restarts}/{max_restarts})")
    await p.stop()
    try:
        await p.start()
    except TournamentError as e:
        p.give_up("could not be started again")
        if begun:
            log.error("%s: not restarted; the referee plays its seats to the end (strikes, "
                      "then forfeits)", e)  # fmt: skip
        else:
            log.error("%s: not restarted, before the tournament began", e)
        return str(e)
    return None


async def _run_matches(
    cfg: TournamentConfig,
    opts: RunOptions,
    storage: Storage,
    schedule: Sequence[ScheduledMatch],
    pending: list[ScheduledMatch],
    outcome: TournamentOutcome,
    referee: RefereeLike,
    left: Counter[str],
) -> None:
    """Play ``pending`` on ``referee``, ``cfg.concurrency`` at a time (no more than
    ``opts.max_new_matches`` of them), storing each as it ends and counting it off
    ``left`` (per bot, the matches still to play). A match that fails is logged and left
    for the next run; a result that cannot be stored stops the run (TournamentError)."""
    tid = cfg.tournament_id
    # Live standings (only with the live display: nothing else reads them; the stored
    # ratings come from finalize) start from what is stored (resume) and follow completions.
    book = None
    if opts.progress:
        book, _ = rate_results(storage.match_results(tid), cfg.bot_names,
                               draw_probability=cfg.draw_probability)  # fmt: skip
    queue: asyncio.Queue[ScheduledMatch] = asyncio.Queue()
    for m in pending:
        queue.put_nowait(m)
    # Results are stored on one worker thread: SQLite's work and the commit's fsync then do
    # not stall the event loop that serves every table. One thread keeps the connection's
    # use serial, and nothing else touches storage until it has finished (below).
    storage_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-storage")
    limit = opts.max_new_matches
    started = 0
    fatal: list[BaseException] = []

    save_cpu_s = 0.0  # the storage thread's CPU time, every match stored
    waited_s = 0.0  # the tables' waits for a store before their next match, summed
    # The waits for each table's last store: the part while another table still played
    # (idle: the table had nothing to play; summed, not counted), and the run's tail, from
    # the moment the last table stopped playing (``play_end``) to the last of those stores'
    # return (``tail_end``): no table plays then, the run is that much longer.
    idle_waited_s = 0.0
    tables = min(cfg.concurrency, len(pending))
    playing = tables  # the tables that may still start a match
    play_end: float | None = None
    tail_end: float | None = None

    # A store that failed stops the run at once: no worker starts another match (the
    # worker whose match it was may be playing its next one: that one is not stored).
    stores = _GroupStores(storage, tid, storage_thread, cfg.concurrency // 2, fatal.append)

    def count(m: ScheduledMatch, record: Mapping[str, Any], save_cpu: float) -> None:
        """Count ``m`` done: its result is durable (its store's commit has returned)."""
        nonlocal save_cpu_s
        save_cpu_s += save_cpu
        outcome.played_now += 1
        if book is not None:  # (the live display's standings)
            t_rate = time.perf_counter()
            result = record.get("result") or {}
            with contextlib.suppress(ValueError, TypeError):
                book.rate(m.seats, [int(p) for p in result.get("places", [])])
            rated = time.perf_counter() - t_rate
            outcome.rate_s += rated
            outcome.record_s += rated
        display.update(book, outcome.played_now)

    async def stored(
        m: ScheduledMatch,
        record: Mapping[str, Any],
        saving: asyncio.Future[float],
        *,
        last: bool = False,
    ) -> bool:
        """Wait for the store of ``m`` and count it; False if it failed (``fatal`` says why).
        ``last``: the table has no match left to play (its wait is idle while another
        table plays, and the run's tail after that)."""
        nonlocal waited_s, idle_waited_s, tail_end
        t = _clock()
        try:
            save_cpu = await saving
        except StorageError:
            return False  # (in fatal: on_saved)
        finally:
            now = _clock()
            if not last:
                waited_s += now - t
            elif play_end is None or now <= play_end:
                idle_waited_s += now - t
            else:
                idle_waited_s += max(0.0, play_end - t)
                tail_end = now if tail_end is None else max(tail_end, now)
        count(m, record, save_cpu)
        return True

    def stop_playing() -> None:
        """This table starts no more matches. While others still play, its last store
        waits for company (no :meth:`_GroupStores.need`); the last table to stop needs
        every store still waiting: nothing more will join them."""
        nonlocal playing, play_end
        playing -= 1
        if playing == 0:
            play_end = _clock()
            stores.need_all()

    async def worker() -> None:
        nonlocal started
        # The store of this worker's last match, under way while it plays its next one: a
        # table does not wait for the commit's fsync. A match is counted done only once
        # its store has returned (its commit durable), and the next store of the worker
        # waits for it (one at a time on the storage thread anyway).
        saving: tuple[ScheduledMatch, Mapping[str, Any], asyncio.Future[float]] | None = None
        try:
            while not fatal:
                if limit is not None and started >= limit:
                    break
                try:
                    m = queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
                started += 1
                mid = match_id(tid, m.index)
                t_start = time.time()
                try:
                    record = await referee.run_match(
                        mid, cfg.ruleset, m.seed, list(m.seats), cfg.match_timeout_s or None
                    )
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # one broken match never stops the tournament
                    left.subtract(m.seats)
                    why = f"{type(e).__name__}: {e}"
                    log.error("match %s (%s) failed: %s", mid, " vs ".join(m.seats), why)
                    outcome.failed.append((m.index, why))
                    continue
                left.subtract(m.seats)
                if saving is not None:
                    last, saving = saving, None
                    stores.need(last[2])
                    if not await stored(*last):
                        break  # (a store failed: the run stops; nothing left to store)
                future = stores.submit(
                    MatchToStore(mid, m.index, m.table, m.set_no, m.seed, tuple(m.seats),
                                 record, t_start, time.time())
                )  # fmt: skip
                saving = (m, record, future)
        except BaseException:
            # (Cancelled, say: a store under way is finished all the same, by the storage
            # thread's shutdown below; one already done is counted.)
            if saving is not None:
                m_, record_, future = saving
                if future.done() and not future.cancelled() and future.exception() is None:
                    count(m_, record_, future.result())
            raise
        stop_playing()
        if saving is not None:
            await stored(*saving, last=True)

    with _Display(cfg, len(schedule), outcome.skipped, opts) as display:
        workers = [asyncio.create_task(worker()) for _ in range(tables)]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            stores.close()  # (what waits to be written: written, not counted)
            storage_thread.shutdown(wait=True)  # a save under way is finished, never cut
    # What recording cost the tables: the storing's CPU, or the tables' wait for it where
    # that was longer (see TournamentOutcome.record_s); and the records' building.
    tail_s = 0.0 if play_end is None or tail_end is None else tail_end - play_end
    outcome.record_last_wait_s = tail_s
    outcome.record_wait_s = waited_s / max(1, tables) + tail_s
    outcome.record_idle_wait_s = idle_waited_s / max(1, tables)
    outcome.store_cpu_s = save_cpu_s
    outcome.build_cpu_s = float(getattr(referee, "record_cpu_s", 0.0))  # (not on test fakes)
    outcome.commits = stores.commits
    outcome.record_s += max(save_cpu_s, outcome.record_wait_s)
    outcome.record_s += outcome.build_cpu_s
    if limit is not None and not queue.empty():
        outcome.interrupted = True
    if fatal:
        why = str(fatal[0])
        if isinstance(fatal[0], StorageFullError):  # a bot's log may be what filled it
            why += _largest_logs(cfg.out / "logs")
        raise TournamentError(f"stopping: results can no longer be stored: {why}") from fatal[0]
    if outcome.failed:
        log.error("%d matches failed and were not stored; run the same command again to retry "
                  "them", len(outcome.failed))  # fmt: skip


class Interrupted(KeyboardInterrupt):
    """:func:`run` was stopped by a signal (``signum``: SIGINT, SIGTERM or SIGHUP) and stopped
    cleanly: bots stopped, every finished match stored."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Signals:
    """SIGINT, SIGTERM and SIGHUP (:func:`stop_signals`) for :func:`run`: the first cancels
    the tournament (it stops cleanly: bots stopped, every result kept), later ones only say
    to wait. With asyncio's own handler a second Ctrl-C would raise KeyboardInterrupt in
    the middle of that stop, and gRPC's server would then complain with tracebacks that its
    event loop was gone; SIGTERM (``kill``, ``timeout``, ``docker stop``, systemd) and a
    hang-up would kill the arena outright, leaving its bots running, its lock file behind
    and no leaderboard. The stop is bounded."""

    def __init__(self) -> None:
        self.count = 0
        self.first: int | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._signals: tuple[signal.Signals, ...] = ()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        self._signals = stop_signals()
        for sig in self._signals:
            self._loop.add_signal_handler(sig, self._on_signal, sig)

    def uninstall(self) -> None:
        if self._loop is not None:
            for sig in self._signals:
                self._loop.remove_signal_handler(sig)
            self._loop = None

    def _on_signal(self, sig: int) -> None:
        self.count += 1
        if self.count == 1 and self._task is not None:
            self.first = sig
            self._task.cancel()
        else:
            log.warning("already stopping: the bots are being stopped and every result "
                        "kept; it takes a few seconds")  # fmt: skip


def run(
    cfg: TournamentConfig,
    options: RunOptions | None = None,
    **kwargs: Any,
) -> TournamentOutcome:
    """Synchronous :func:`run_tournament`. SIGINT (Ctrl-C), SIGTERM or a hang-up stops it
    cleanly and raises :class:`Interrupted`."""
    signals = _Signals()

    async def main() -> TournamentOutcome:
        signals.install()
        try:
            return await run_tournament(cfg, options, **kwargs)
        finally:
            signals.uninstall()

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if signals.first is not None:
            raise Interrupted(signals.first) from None
        raise
    finally:
        for pgid in list(_LIVE_GROUPS):  # only if the clean stop was itself interrupted
            _kill_session(pgid, signal.SIGKILL)
            _LIVE_GROUPS.discard(pgid)
