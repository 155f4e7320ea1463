"""The bot's calls in worker processes: ``arena-bot run SPEC --workers N``.

In one process a bot's matches share one core, whatever the threads: Python runs one of
them at a time (the GIL). A CPU-bound bot seated in three matches at once (``pimc``)
searched at a third of its speed, so its wall-clock backstop cut its searches, and what
it played depended on the machine's load. With workers each match's bot lives in one of N
processes for the whole match (the one with the fewest matches in progress when the match
starts), and N matches compute at once.

The runner (:mod:`sdk.client`) keeps doing everything else: the stream, the order of a
match's calls, deadlines, the log. In place of a bot it holds a :class:`Remote`, which
sends each call to the bot's worker and blocks the runner's thread on the answer. The
worker runs the calls with the same functions as the runner's own threads (``decide``,
the hooks), so a bot that raises or answers wrong is reported the same way; its log
records come back to the runner's log, with the traceback already formatted.

Workers are started with ``spawn`` (gRPC's threads make ``fork`` unsafe) and load the bot
from the same SPEC with the same loader: nothing of the bot crosses but views, results and
actions. A worker ignores SIGINT and SIGTERM (the runner stops it, after the bot's calls in
flight had their grace) and exits when its pipe closes: the runner stopped, or was killed.
A worker that dies fails its running calls like a bot exception; its matches' later calls
go to a fresh worker with a fresh bot (said in the log: the bot's state is lost).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TextIO, cast

from engine import Phase, PlayerView, fallback_action
from sdk.bot import Bot, Deadline
from sdk.loader import loaded_from
from sdk.local import HOOKS, method_of, overrides, tell

__all__ = ["CallFailed", "Processes", "Remote"]

log = logging.getLogger("sdk.client")

#: What a worker ignores: the runner stops it.
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
#: How long the runner waits for its workers to load the bot before it connects.
_READY_S = 60.0
#: How long a worker asked to stop (its pipe closed) gets before it is killed.
_STOP_S = 2.0
#: The folder this process imported the arena's own packages from (sdk, arena, engine).
_OWN_ROOT = str(Path(__file__).resolve().parent.parent)


@contextlib.contextmanager
def _own_packages_first() -> Iterator[None]:
    """``sys.path`` with the folder of the arena's own packages first while a worker is
    started: spawn hands the worker this process's ``sys.path``, where the loader put the
    bot's folder first, and the worker imports ``sdk`` (to run ``serve``) before it loads
    the bot. A bot file kept in a copy of the repository, beside a pip install of it, so
    had the worker import the copy's ``sdk`` and ``arena``, whose protobuf code is not
    generated: "no worker process could load the bot", where this process, which imported
    its own before the bot's folder came first, played. The worker's loader puts the bot's
    folder first again as it loads the bot, for the bot's own imports."""
    sys.path.insert(0, _OWN_ROOT)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(_OWN_ROOT)  # (the first of it: the one put there)


class CallFailed(RuntimeError):
    """A call sent to a worker got no answer: the worker died, or the answer could not
    be sent back."""


class _Proc:
    """One worker process: its pipe, the calls sent and not yet answered, and the thread
    that reads its answers and log records."""

    def __init__(
        self, ctx: Any, slot: int, args: tuple[object, ...], unloadable: Callable[[str], None]
    ) -> None:
        self._unloadable = unloadable
        here, there = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(there, *args), daemon=True,
                                   name=f"arena-bot worker {slot + 1}")  # fmt: skip
        # Started with SIGINT and SIGTERM blocked (the mask goes through exec), which serve()
        # turns into ignored: a Ctrl-C while the worker still imports would print its
        # KeyboardInterrupt's traceback. (multiprocessing starts its resource tracker so.)
        masking = hasattr(signal, "pthread_sigmask")
        if masking:
            # (Started first: starting, it unblocks both signals, ours too.)
            resource_tracker.ensure_running()
            was = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            with _own_packages_first():
                self.process.start()
        finally:
            if masking:
                signal.pthread_sigmask(signal.SIG_SETMASK, was)
        there.close()  # (else the worker's death would not end our reads: EOF never comes)
        self.conn: Connection = here
        self.pid: int = self.process.pid
        self.alive = True
        #: Set once the worker has loaded the bot (or died).
        self.ready = threading.Event()
        #: Whether it loaded the bot.
        self.loaded = False
        self._lock = threading.Lock()
        self._pending: dict[int, Future[tuple[str, Any]]] = {}
        self._ids = itertools.count()
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"sdk-worker_{slot + 1}")  # fmt: skip
        self._reader.start()

    def call(self, op: str, *args: object) -> Any:
        """``op`` on the worker; its value, or the bot's ``SystemExit`` /
        ``KeyboardInterrupt`` raised here; :class:`CallFailed` if no answer comes."""
        fut: Future[tuple[str, Any]] = Future()
        with self._lock:
            if not self.alive:
                raise CallFailed(self.died())
            n = next(self._ids)
            self._pending[n] = fut
            try:
                self.conn.send((n, op, args))
            except OSError as e:  # the reader will see it die
                self._pending.pop(n, None)
                raise CallFailed(f"its worker process {self.pid} cannot be reached: {e}") from e
        kind, value = fut.result()
        if kind == "ok":
            return value
        if kind == "exit":
            raise SystemExit(value)
        if kind == "interrupt":
            raise KeyboardInterrupt
        raise CallFailed(value)

    def tell(self, op: str, *args: object) -> None:
        """``op`` on the worker, with no answer (forgetting a bot)."""
        with self._lock:
            if self.alive:
                with contextlib.suppress(OSError):
                    self.conn.send((None, op, args))

    def died(self) -> str:
        code = self.process.exitcode
        how = "" if code is None else f", exit code {code}" if code >= 0 else f", signal {-code}"
        return f"its worker process {self.pid} died{how}"

    def _read(self) -> None:
        while True:
            try:
                msg = self.conn.recv()
            except Exception:  # EOF: the worker is gone (or sent what does not unpickle)
                break
            if msg[0] == "log":
                record = logging.makeLogRecord(msg[1])
                logging.getLogger(record.name).handle(record)  # (its filters, then handlers)
                continue
            if msg[0] == "ready":
                self.loaded = True
                self.ready.set()
                continue
            if msg[0] == "unloadable":
                self._unloadable(msg[1])
                continue
            fut = self._pending.pop(msg[1], None)
            if fut is not None:
                fut.set_result(msg[2])
        self.process.join(_STOP_S)  # (for its exit code)
        with self._lock:
            self.alive = False
            pending, self._pending = self._pending, {}
        self.ready.set()
        for fut in pending.values():
            fut.set_result(("failed", self.died()))

    def ask_to_stop(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            self.conn.send(None)

    def stop(self) -> None:
        """After :meth:`ask_to_stop`: wait for the worker to exit; kill it if it does not
        in time."""
        self.process.join(_STOP_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(_STOP_S)
        self._reader.join(_STOP_S)
        self.conn.close()


class Processes:
    """``n`` worker processes for the bot ``spec`` (started at once, so that they have
    loaded the bot by its first match) and the matches each is playing."""

    def __init__(self, spec: str, n: int, name: str) -> None:
        if n < 1:
            raise ValueError(f"workers must be at least 1, got {n}")
        self._ctx = multiprocessing.get_context("spawn")
        level = logging.getLogger().getEffectiveLevel()
        self._args = (spec, name, level, loaded_from(spec))
        self._lock = threading.Lock()
        self._unloadable_told: set[str] = set()
        self._procs = [_Proc(self._ctx, i, self._args, self._unloadable) for i in range(n)]
        self._load = [0] * n  # matches in progress, per worker
        self._keys = itertools.count()
        self.closing = False

    def wait_ready(self, timeout: float = _READY_S) -> None:
        """Until every worker has loaded the bot (at most ``timeout`` seconds): the bot
        connects only then, so its first match's clock does not run while they import."""
        end = time.monotonic() + timeout
        for p in self._procs:
            p.ready.wait(max(0.0, end - time.monotonic()))

    def none_loaded(self) -> bool:
        """Whether every worker died without loading the bot (its module raised at
        import in a worker only, say: each said why): none ever will, and the runner
        that connected all the same sat in every match it was given without a bot, each
        forfeited on its deadlines, for as long as it ran."""
        return all(not p.alive and not p.loaded for p in self._procs)

    def _unloadable(self, why: str) -> None:
        """A worker's reason it cannot load the bot, said once: every worker fails alike
        (and so does each started again), and ``--workers 8`` said it 8 times over."""
        with self._lock:
            if why in self._unloadable_told:
                return
            self._unloadable_told.add(why)
        log.error("a worker process cannot load the bot: %s", why)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def proc(self, slot: int) -> _Proc:
        """The worker of ``slot``, a fresh one if it died."""
        with self._lock:
            p = self._procs[slot]
            if not p.alive and not self.closing:
                p = self._procs[slot] = _Proc(self._ctx, slot, self._args, self._unloadable)
            return p

    def make(self, match_id: str) -> Remote | None:
        """A new bot for ``match_id`` in the worker with the fewest matches in progress;
        ``None`` if it could not be made (logged)."""
        with self._lock:
            slot = min(range(len(self._load)), key=self._load.__getitem__)
            self._load[slot] += 1
        remote = Remote(self, slot, next(self._keys), match_id)
        try:
            made = remote.make()
        except CallFailed as e:
            log.error("match %s: cannot make the bot: %s; the match goes on without it: its "
                      "requests are not answered (the referee's deadline plays the seat)",
                      match_id, e)  # fmt: skip
            made = False
        except BaseException:  # the bot's SystemExit, say: no match to count
            remote.close()
            raise
        if not made:
            remote.close()
            return None
        return remote

    def release(self, slot: int) -> None:
        with self._lock:
            self._load[slot] -= 1

    def shutdown(self) -> None:
        """Stop every worker (a bot call still running in one is not waited for: its
        runner thread gets :class:`CallFailed`, which ``closing`` keeps out of the log)."""
        self.closing = True
        for p in self._procs:
            p.ask_to_stop()
        for p in self._procs:
            p.stop()


class Remote(Bot):
    """The runner's stand-in for a match's bot living in a worker process: what the runner
    needs to know of it (which hooks it has, how its methods are named), and its calls."""

    quick = False  # (never asked on the event loop: every call goes to its worker)

    def __init__(self, pool: Processes, slot: int, key: int, match_id: str) -> None:
        super().__init__()
        self.match_id = match_id
        self._pool = pool
        self._slot = slot
        self._key = key
        self._proc = pool.proc(slot)
        self.hooks: frozenset[str] = frozenset()
        #: Per phase, the bot's method that decides it ("Mine.play() (mine.py:12)").
        self.methods: dict[Phase, str] = {}
        self._closed = False

    def make(self) -> bool:
        """Make the bot in its worker (again, in a fresh one, after its worker died)."""
        made = self._proc.call("make", self._key, self.match_id)
        if made is None:
            return False
        self.name, self.hooks, self.methods = made
        return True

    def _worker(self) -> _Proc:
        """The bot's worker; after it died, a fresh one with a fresh bot (said once)."""
        if self._proc.alive:
            return self._proc
        why = self._proc.died()
        self._proc = self._pool.proc(self._slot)
        if not self.make():
            raise CallFailed(f"{why}, and the bot could not be made again in a fresh one")
        log.warning("match %s: the bot's worker process died (%s): its calls go to a fresh "
                    "worker (pid %d) with a fresh bot, which has lost the bot's state of the "
                    "match", self.match_id, why.removeprefix("its "), self._proc.pid)  # fmt: skip
        return self._proc

    def decide(self, view: PlayerView, deadline: Deadline | None) -> tuple[Any, str | None]:
        """``sdk.local.decide_failed`` in the worker; a call that failed there plays the
        fallback, as a bot that raised does."""
        try:
            return self._worker().call("decide", self._key, view, deadline, self.match_id)  # type: ignore[no-any-return]
        except CallFailed as e:
            fallback = fallback_action(view.legal_actions)
            if not self._pool.closing:
                log.error("match %s: %s did not answer in deal %d (%s): %s; playing %s "
                          "instead", self.match_id, self.methods.get(view.phase, self.name),
                          view.deal_number + 1, view.phase, e, fallback)  # fmt: skip
            return fallback, "its worker process failed"

    def hook(self, what: str, args: tuple[object, ...]) -> bool:
        """Hook ``what`` in the worker; whether it failed (logged)."""
        try:
            return bool(self._worker().call("hook", self._key, what, args, self.match_id))
        except CallFailed as e:
            if not self._pool.closing:
                log.error("match %s: %s failed in %s: %s", self.match_id, self.name, what, e)
            return True

    def close(self) -> None:
        """The match is over: the worker forgets its bot."""
        if not self._closed:
            self._closed = True
            self._pool.release(self._slot)
            self._proc.tell("drop", self._key)


# ------------------------------------------------------------------ in the worker


class _ToParent(logging.Handler):
    """Sends each log record to the runner, which logs it as its own: the message
    merged with its arguments, the traceback formatted (and where it was raised, for
    ``arena-bot``'s once-per-site filter), since neither pickles."""

    def __init__(self, send: Callable[[object], None]) -> None:
        super().__init__()
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            d = dict(record.__dict__)
            d["msg"], d["args"] = record.getMessage(), None
            if record.exc_info and record.exc_info[1] is not None:
                from arena.render import clipped_traceback
                from sdk.local import raise_site

                # (Cut here: a bot's exception of megabytes went whole through the pipe
                # at every raise, though the runner logs only the first of each place.)
                text = logging.Formatter().formatException(record.exc_info)
                d["exc_text"] = clipped_traceback(text)
                tb = record.exc_info[2]
                if tb is not None:
                    site = raise_site(tb)
                    d["sdk_site"] = (type(record.exc_info[1]).__name__,
                                     site.filename, site.lineno or 0, site.name)  # fmt: skip
            d["exc_info"] = None
            self._send(("log", d))
        except Exception:
            self.handleError(record)


def serve(conn: Connection, spec: str, name: str, level: int, cwd: str) -> None:
    """A worker's life: load the bot (from ``cwd``, where the runner loaded it), then run
    each call read from ``conn`` in a thread of its own (as the runner's threads do),
    until ``conn`` closes."""
    with contextlib.suppress(OSError):
        os.chdir(cwd)
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # (blocked until now: see _Proc)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    lock = threading.Lock()

    def send(msg: object) -> None:
        with lock:
            conn.send(msg)

    root = logging.getLogger()
    root.handlers[:] = [_ToParent(send)]
    root.setLevel(level)
    # The worker writes to the runner's stdout and stderr (its own descriptors of them):
    # the bot's prints must not fail there once their reader has left, as in the runner.
    # (Not sdk.cli's reader_may_leave: this process has not imported the CLI, rich and all.)
    from arena.cli.options import hang_up_safe

    out, err = sys.stdout, sys.stderr
    if out is not None:
        sys.stdout = cast(TextIO, hang_up_safe(lambda: out, reader_may_leave=True))
    if err is not None:
        sys.stderr = cast(TextIO, hang_up_safe(lambda: err, reader_may_leave=True))
    from sdk.client import _WORKERS, _make_here, _run_hook, _Workers
    from sdk.loader import BotLoadError, load_bot
    from sdk.local import decide_failed

    try:
        cls = load_bot(spec)
    except BotLoadError as e:
        send(("unloadable", str(e)))  # (the runner says it once, for all its workers)
        os._exit(1)
    send(("ready",))
    bots: dict[int, Bot] = {}

    def make(key: int, match_id: str) -> tuple[str, frozenset[str], dict[Phase, str]] | None:
        bot = _make_here(cls, name, match_id)
        if bot is None:
            return None
        tell(bot, "match_id", match_id)
        bots[key] = bot
        cls_name = type(bot).__name__
        methods = {p: f"{cls_name}.{method_of(bot, p)}" for p in Phase}
        return bot.name, frozenset(h for h in HOOKS if overrides(bot, h)), methods

    def answer(n: int, op: str, args: tuple[Any, ...]) -> None:
        try:
            if op == "make":
                value: object = make(*args)
            elif op == "decide":
                key, view, deadline, match_id = args
                value = decide_failed(bots[key], view, log, deadline=deadline, match_id=match_id)
            else:
                key, what, hook_args, match_id = args
                value = _run_hook(bots[key], what, hook_args, match_id)
            outcome: tuple[str, object] = ("ok", value)
        except SystemExit as e:
            outcome = ("exit", e.code)
        except KeyboardInterrupt:
            outcome = ("interrupt", None)
        except BaseException as e:  # (none foreseen: the SDK's own bug)
            log.exception("the worker process could not run %s", op)
            outcome = ("failed", f"{type(e).__name__}: {e}")
        try:
            send(("answer", n, outcome))
        except Exception as e:  # what the bot returned does not pickle, say
            send(("answer", n, ("failed", f"its answer could not be sent back ({e})")))

    threads = _Workers(_WORKERS)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the runner is gone (killed, even)
            break
        if msg is None:
            break
        n, op, args = msg
        if op == "drop":
            bots.pop(args[0], None)
        else:
            threads.submit(lambda n=n, op=op, args=args: answer(n, op, args))  # type: ignore[misc]
    # A bot call that never returns is not waited for (as the runner does not wait).
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(0)
