"""The remote runner: connect a bot to an arena and play every match it is seated in.

>>> import sdk, bots                                     # doctest: +SKIP
>>> sdk.run(bots.load("heuristic"), arena="localhost:50051", token="secret")  # doctest: +SKIP

One gRPC stream carries all of the bot's matches; a fresh bot instance is made per match
(from the class or factory given) and its calls are serialized per match, each ``act``
running in one of the runner's worker threads so a slow bot never stalls the stream or the
other matches (a bot that says it is ``quick`` is called on the event loop). With
``workers`` (``arena-bot run --workers N``) each match's bot lives in one of N worker
processes instead, and the thread waits for its answer (:mod:`sdk.workers`).

Connection handling: the first message is ``Hello``; the token travels in the call
metadata (``authorization: Bearer <token>``). A lost connection (``UNAVAILABLE``, or
``INTERNAL`` from our own gRPC core), or a stream of this token still saying Hello
(``ALREADY_EXISTS``), is retried with exponential
back-off and jitter; the referee resumes the bot's seats and asks again for a pending
decision (a new stream takes over from an old one the arena still holds). A stream refused
for reconnecting too often (``RESOURCE_EXHAUSTED`` with ``retry-after-ms``) is tried again
after the time the arena names. ``UNAUTHENTICATED``
is final (:class:`ArenaAuthError`), and so are ``ABORTED`` (another stream with the same
token took this one's place) and a failed TLS handshake (:class:`ArenaTLSError`: the
certificate, or TLS itself, is wrong, which waiting does not mend). The runner
stops cleanly when asked (SIGINT/SIGTERM under :func:`run`, or :meth:`BotRunner.stop`),
after ``matches`` matches, or when the referee ends the stream; the bot's calls in flight
get a few seconds to end (none after a second signal), and one that never returns is not
waited for (:func:`bot_calls_running`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import os
import queue
import random
import re
import signal
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from arena.addresses import is_loopback_host
from arena.protocol import (
    AHEAD_MOST,
    HELLO_LIMITS,
    PROTOCOL_VERSION,
    RETRY_AFTER_MS,
    MalformedActionError,
    MalformedMessageError,
    _fill_action,
    action_from_pb,
    card_from_pb,
    deal_result_from_pb,
    match_result_from_pb,
    ruleset_from_pb,
    seat_action_from_pb,
    token_problem,
    view_from_pb,
)
from arena.render import printable
from arena.v1 import arena_pb2 as pb
from engine import (
    Action,
    Bid,
    Card,
    Contract,
    Give,
    HiddenGive,
    Phase,
    Play,
    PlayerView,
    Rank,
    Ruleset,
    Suit,
)
from engine.game import PHASE_ACTIONS
from engine.record import ordinal
from engine.rules import describe_ruleset
from engine.view import own_next_view
from sdk.bot import Bot, Deadline
from sdk.local import (
    BotFactory,
    _defined,
    _method,
    bot_exc_info,
    decide_failed,
    factory_problem,
    failures_said,
    fork_count,
    hook_result,
    hook_view,
    log_leaving,
    make_bot,
    not_a_fork,
    overrides,
    stops_the_bot,
    tell,
)
from sdk.wire_view import request_view_of, wire_items
from sdk.workers import Processes, Remote

__all__ = [
    "ArenaAuthError",
    "ArenaError",
    "ArenaTLSError",
    "BotRunner",
    "RunSummary",
    "bot_calls_running",
    "run",
    "run_async",
]

log = logging.getLogger("sdk.client")

CLIENT = "thousand-arena-sdk/0.1.0"
#: INTERNAL with these details is our own gRPC core's, never the referee's: a write that
#: raced the referee's status (asking again gets it), or a connection reset on the way (one
#: reset before the server's HTTP/2 settings came, mostly): retried as a dropped connection
#: is. An INTERNAL with other details is a status the server sent (the referee sends none:
#: another service, a proxy): asked again for --retry-for, it would answer the same.
_CORE_INTERNAL = "Internal error from Core"
#: How many other INTERNALs in a row are asked again before the bot gives up.
_OTHER_INTERNAL = 3
#: CANCELLED is never this bot's own doing (a call it cancels ends in CancelledError; the
#: Welcome's wait says UNAVAILABLE): the arena's gRPC cut the call, as its stop does to a
#: stream still open when its grace runs out (a loaded arena: a bot told that it stops
#: reconnects, and that stream was cut). The arena may come back: the bot exited.
_RETRY_CODES = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.CANCELLED,
)

#: A ``quick`` bot (see :class:`sdk.Bot`) is asked on the event loop, without a thread
#: hop; two such calls over ``_SLOW_S`` within ``_SLOW_WITHIN`` of its calls there prove it
#: is not quick: it is then asked in the worker thread for the rest of the run (and a
#: warning says so). One alone proves nothing: the call's time is the wall clock's, and a
#: busy machine holds a process off its core for longer now and then (a bench at ten
#: tables, four busy processes on two cores, sent a random bot there in one run of three,
#: with a thread hop per decision from then on).
_SLOW_S = 0.005
_SLOW_WITHIN = 100

#: The runner's worker threads, at most (made as needed). A match's calls run one at a
#: time, so a match holds at most one thread, and a call that never returns holds its
#: thread for good: asyncio's default executor (as few as 6 threads on a small machine)
#: would let a bot stuck in 6 matches starve all its others, even the making of their bots.
_WORKERS = 128
#: At its last match (``--once``, ``matches=N``) the runner stops once the bot's calls for
#: that match are done (its ``on_match_end``), waiting at most this long for them.
_LAST_STEPS_S = 30.0
#: How long a stream may go without the arena's Welcome (the referee sends it at once,
#: and gives a Hello 10 s) before it is dropped and opened again, like an outage.
_WELCOME_TIMEOUT_S = 30.0
#: A stream open this long worked, even if it carried nothing but the Welcome (a bot idle
#: in a lobby): after it drops, the back-off starts again from its first step.
_WORKED_S = 30.0
#: How often a channel pings the arena while no data flows, at first (the referee takes
#: pings every 5 s), and at most (gRPC's servers take one every 5 minutes by default).
_KEEPALIVE_MS = 10_000
_MAX_KEEPALIVE_MS = 320_000
#: The largest message read from the arena: views carry every earlier deal's result, and
#: a very long match outgrows gRPC's default of 4 MiB.
_MAX_RECEIVE_BYTES = 64 << 20
#: The method of the stream; its messages are parsed here, not by gRPC, which logs a
#: traceback and hands back ``None`` for bytes that do not parse.
_PLAY = "/arena.v1.Arena/Play"

_T = TypeVar("_T")

#: The bot calls running in any runner's worker threads, and what each is ("act in match
#: m1"); a call removes itself when it returns (from its thread: one dict operation).
_RUNNING: dict[Future[Any], str] = {}


def bot_calls_running() -> list[str]:
    """What the bot calls that have not returned are (``"act in match m1"``): after a run,
    the calls that never returned. Python does not wait for them when the process exits
    (they run in daemon threads)."""
    return list(_RUNNING.values())


def _forget(fut: Future[Any]) -> None:
    _RUNNING.pop(fut, None)


class _Workers:
    """Daemon threads for the bot's calls, made as needed up to ``most``, reused when idle.

    Not ``ThreadPoolExecutor``: Python joins its threads when the process exits, so a bot
    call that never returned kept a program that had called ``sdk.run()`` from ending."""

    def __init__(self, most: int) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._idle = threading.Semaphore(0)
        self._threads = 0
        self._most = most

    def submit(self, fn: Callable[[], _T]) -> Future[_T]:
        fut: Future[_T] = Future()
        if not self._idle.acquire(blocking=False) and self._threads < self._most:
            # Started before the call is queued: a thread that cannot be started raises
            # here with nothing queued (queued first, the call would run later all the same,
            # though its caller had been told it failed, and the count would keep a thread
            # that never was).
            name = f"sdk-bot_{self._threads + 1}"
            threading.Thread(target=self._work, name=name, daemon=True).start()
            self._threads += 1
        self._jobs.put((fut, fn))
        return fut

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            fut, fn = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as e:  # (as ThreadPoolExecutor: the caller sees it)
                    fut.set_exception(e)
            del job, fut, fn  # (not kept alive while idle)
            self._idle.release()

    def shutdown(self) -> None:
        """Calls not started are dropped (cancelled); idle threads end; running calls go on."""
        with contextlib.suppress(queue.Empty):
            while True:
                job = self._jobs.get_nowait()
                if job is not None:
                    job[0].cancel()
        for _ in range(self._threads):
            self._jobs.put(None)


class _Outbox:
    """The messages to the arena, in order, written by whoever is free first.

    ``put_nowait`` queues a message (``None``: finish writing). A writer task waits for
    work; the reading loop flushes directly after handling a message (:meth:`flush`), so a
    quick answer is written without a hop to the writer task. Only one writer at a time
    (``busy``), always from the head of the queue: the order is kept. With ``batch`` (the
    arena's Welcome lists the feature), decisions queued together go out as one
    ``DecisionBatch``: the answers to a ``Batch`` of requests cost one gRPC message.
    """

    __slots__ = ("_buf", "_waiter", "ahead", "batch", "busy", "closed", "held")

    def __init__(self) -> None:
        self._buf: deque[pb.BotMessage | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.busy = False
        self.closed = False
        #: While set, ``put_nowait`` does not wake the writer task (the reader flushes).
        self.held = False
        self.batch = False
        #: The arena's Welcome lists "ahead": a quick bot's answer may carry its next
        #: decisions, chosen ahead (``Decision.ahead``; ``BotRunner._choose_ahead``).
        self.ahead = False

    def put_nowait(self, msg: pb.BotMessage | None) -> None:
        self._buf.append(msg)
        if not self.held:
            self.wake()

    def wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def __bool__(self) -> bool:
        return bool(self._buf)

    async def wait(self) -> None:
        """Until there is something to write and nobody writing it (who would write it)."""
        while not self._buf or self.busy:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def flush(self, call: grpc.aio.StreamStreamCall) -> None:
        """Write everything queued, unless another writer is at it (it will)."""
        if self.busy or self.closed:
            return
        self.busy = True
        try:
            buf = self._buf
            while buf:
                msg = buf.popleft()
                if msg is None:
                    self.closed = True
                    buf.clear()
                    await call.done_writing()
                    return
                if buf and self.batch and _is_decision(msg) and _is_decision(buf[0]):
                    out = pb.BotMessage()
                    ds = out.decisions.decisions
                    ds.append(msg.decision)
                    while buf and _is_decision(buf[0]) and len(ds) < _MAX_DECISION_BATCH:
                        ds.append(buf.popleft().decision)  # type: ignore[union-attr]
                    msg = out
                await call.write(msg)
        finally:
            self.busy = False
            if self._buf:  # interrupted: let the writer task go on
                self.wake()


#: What a write on a call raises once the call is over (half-closed by us, or ended): the
#: next read says how it ended.
_ENDED_CALL_WRITE = (grpc.aio.UsageError, asyncio.InvalidStateError)

#: The kinds of message that hold decision requests (their views read by sdk.wire_view).
_WITH_REQUESTS = frozenset(("decision_request", "batch"))

#: The most decisions in one ``DecisionBatch`` (the referee accepts up to 256).
_MAX_DECISION_BATCH = 64


def _retry_after_s(e: grpc.aio.AioRpcError) -> float | None:
    """The seconds a refused stream's arena asks the bot to wait (``retry-after-ms`` in the
    trailing metadata, sent with RESOURCE_EXHAUSTED to a bot reconnecting too often)."""
    if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in e.trailing_metadata() or ():
        if key == RETRY_AFTER_MS:
            try:
                ms = int(value)
            except (TypeError, ValueError):
                return None
            return min(max(ms, 0), 600_000) / 1000  # (a bound on what a server can ask)
    return None


def _unreadable_retry_after(e: grpc.aio.AioRpcError) -> bool:
    """Whether a RESOURCE_EXHAUSTED carries a ``retry-after-ms`` that is no number of ms
    ("soon", "1e3"): the arena lets the bot in again later, but does not say when (the
    bot stopped, as after a flood): it is tried again on the back-off."""
    return (
        e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        and _retry_after_s(e) is None
        and any(key == RETRY_AFTER_MS for key, _ in e.trailing_metadata() or ())
    )


# The messages' ``WhichOneof`` and ``HasField`` taken from their classes, once: called on
# a message (``msg.WhichOneof``), upb first looks the method's name up among the message's
# fields, then as an attribute, and binds a method (some 40 % of the call; 7 to 9 calls a
# request, one an event).
_bot_kind = pb.BotMessage.WhichOneof
_server_kind = pb.ServerMessage.WhichOneof
_event_kind = pb.Event.WhichOneof


def _is_decision(msg: pb.BotMessage | None) -> bool:
    return msg is not None and _bot_kind(msg, "kind") == "decision"


async def _read_before_welcome(
    call: grpc.aio.StreamStreamCall, start: float, deadline: float
) -> Any:
    """``call.read()`` until ``deadline`` (``time.monotonic()``): an arena that accepts the
    stream and never says Welcome left the bot waiting for ever, out of reach of
    --retry-for. Past it the stream is dropped and its end is an outage (UNAVAILABLE):
    retried with back-off."""
    try:
        return await asyncio.wait_for(call.read(), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        call.cancel()
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(),
            f"no Welcome from the arena within {deadline - start:.3g} s",
        ) from None  # fmt: skip


def _parse(data: object, say: Callable[..., None]) -> pb.ServerMessage | None:
    """The arena's message from the bytes read; ``None`` (told to ``say``, the runner's
    _say_fault) for bytes that do not parse (corrupt, or nested deeper than protobuf
    reads): that message is lost, not the run (gRPC's own deserializer would crash the
    runner on them)."""
    if not isinstance(data, bytes):
        say("unread", logging.ERROR, "a message from the arena could not be read (%r): ignored",
            data)  # fmt: skip
        return None
    try:
        return pb.ServerMessage.FromString(data)
    except DecodeError as e:
        say("unparsed", logging.ERROR, "a message from the arena does not parse as "
            "arena.v1.ServerMessage (%d bytes: %s): ignored", len(data), e)  # fmt: skip
        return None


def _match_of(msg: pb.ServerMessage, kind: str | None) -> str:
    """The match a message of ``kind`` is about ("" for a Welcome, say)."""
    return str(getattr(getattr(msg, kind), "match_id", "")) if kind else ""


def _ignored(what: str, match_id: str, e: Exception, say: Callable[..., None]) -> None:
    """Log that the ``what`` (a message's kind, or an event's) of ``match_id`` could not be
    handled and is skipped (one the arena got wrong through ``say``, the runner's
    _say_fault)."""
    where = f" (match {match_id})" if match_id else ""
    if isinstance(e, MalformedMessageError):  # the arena's fault: no traceback of ours
        say(f"malformed {what} {e.what}", logging.ERROR, "malformed %s from the arena%s, "
            "ignored: %s", what, where, e)  # fmt: skip
    else:  # something the runner does not foresee: the traceback helps
        log.error("could not handle a %s from the arena%s, ignored: %s: %s", what, where,
                  type(e).__name__, e, exc_info=e)  # fmt: skip


#: The longest match or request id the runner takes (an arena's are under a hundred
#: characters: a tournament's name, at most 64, its fingerprint and the match's number):
#: every answer echoes both, and one past the arena's receive limit (1 MiB) ended the
#: stream with RESOURCE_EXHAUSTED, which stopped the bot, every match lost; a Hello names
#: the matches under way (see _UNMADE_KEPT).
_ID_MOST = 256


def _check_id(what: str, value: str) -> None:
    """Raise :class:`MalformedMessageError` if ``value``, the id ``what`` an answer echoes,
    is longer than :data:`_ID_MOST`."""
    if len(value) > _ID_MOST:
        raise MalformedMessageError(
            what, f"an id of {len(value):,} characters, over the {_ID_MOST:,} this SDK echoes"
        )


#: The most entries the runner reads of a view's list (its legal actions, bids, cards,
#: tricks): a deal has 24 cards, and an auction from 100 up to the highest cap (560) by
#: steps of at least 5 under a hundred bids. A request listing 1,000,000 legal bids (10
#: MB) cost 3.4 s of the event loop and 280 MB to decode, and the bot was then asked to
#: choose among them; a message of 64 MiB would cost ten times that.
_VIEW_LIST_MOST = 1024
_VIEW_LISTS = ("legal_actions", "bids", "hand", "talon", "gives", "marriages", "trick", "tricks")


def _check_view_size(msg: pb.PlayerView, what: str = "view") -> None:
    """Raise :class:`MalformedMessageError` if a list of ``msg`` (before it is decoded) is
    longer than :data:`_VIEW_LIST_MOST`."""
    for name in _VIEW_LISTS:
        n = len(getattr(msg, name))
        if n > _VIEW_LIST_MOST:
            raise MalformedMessageError(
                f"{what}.{name}",
                f"{n:,} entries, more than any view has (this SDK reads up to {_VIEW_LIST_MOST:,})",
            )


def _incident_name(value: int) -> str:
    """A wire incident as a word ("timeout"). Protobuf enums are open: a newer arena's
    incident, unknown here, is shown as its number (``Name`` raises ValueError for it)."""
    try:
        return pb.Incident.Name(pb.Incident.ValueType(value)).removeprefix("INCIDENT_").lower()
    except ValueError:
        return f"incident {value}"


class ArenaError(RuntimeError):
    """The arena refused the bot for good, or could not be reached in time."""


class ArenaAuthError(ArenaError):
    """The arena does not know the token (``UNAUTHENTICATED``): retrying will not help."""


class ArenaTLSError(ArenaError):
    """The TLS handshake with the arena failed (an untrusted certificate, one for another
    host name, an arena without TLS): a mistake in the set-up, not an outage."""


#: Words of gRPC's status details (lower-cased) that only a failed TLS handshake gives:
#: "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: ...", or "Custom
#: verification check failed with error: UNAUTHENTICATED: Hostname Verification Check
#: failed." (gRPC 1.6x-1.8x).
_TLS_FAILURE_WORDS = ("handshake failed", "ssl_error", "certificate_verify_failed",
                      "hostname verification")  # fmt: skip
#: What a plaintext client sees of a TLS arena: the arena drops the connection when the
#: first bytes are no TLS. An outage can look the same, so this only earns a hint.
_CLOSED_WORDS = ("socket closed", "connection reset")
_PLAINTEXT_HINT = " (if the arena uses TLS, pass --tls or --ca)"
#: Words of gRPC's status details (lower-cased) when no connection was made at all: nothing
#: listens at the address, or its host name is not found.
_NO_CONNECTION_WORDS = ("failed to connect", "resolving", "dns resolution failed")


def _no_connection(details: str) -> bool:
    low = details.lower()
    return any(w in low for w in _NO_CONNECTION_WORDS)


def _closed(details: str) -> bool:
    low = details.lower()
    return any(w in low for w in _CLOSED_WORDS)


#: gRPC core's words for a connection that failed, before its reason: "failed to connect
#: to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:4: " (a status code, an address).
_CORE_LAST_ERROR = re.compile(r"^.*last error: [A-Z_]+: \S+: ")


def _why_ended(code: grpc.StatusCode, details: str, arena: str) -> str:
    """Why a stream with the arena ended, in words for the bot's author: gRPC's status
    code and its core's wording (``UNAVAILABLE (failed to connect to all addresses; last
    error: UNKNOWN: ipv6:%5B::1%5D:4: Failed to connect to remote host: Connection
    refused)``) are no business of a bot's; the arena's own messages are said as they are.

    >>> _why_ended(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses; last "
    ...            "error: UNKNOWN: ipv4:127.0.0.1:4: Failed to connect to remote host: "
    ...            "Connection refused", "localhost:4")
    'cannot connect to the arena at localhost:4: connection refused'
    >>> _why_ended(grpc.StatusCode.UNAVAILABLE, "errors resolving h.invalid:1: [field:hostname "
    ...            "lookup error:address lookup failed for h.invalid:1: Domain name not found]",
    ...            "h.invalid:1")
    'cannot connect to the arena at h.invalid:1: domain name not found'
    >>> _why_ended(grpc.StatusCode.UNAVAILABLE, "Stream removed (Socket closed)", "h:1")
    'the connection to the arena at h:1 was lost: socket closed'
    >>> _why_ended(grpc.StatusCode.UNAVAILABLE, "Stream removed (ping timeout)", "h:1")
    'the connection to the arena at h:1 was lost: no answer to a keepalive ping (a dead link)'
    >>> _why_ended(grpc.StatusCode.UNAVAILABLE, "the arena is stopping", "h:1")
    'the arena at h:1 ended the stream: the arena is stopping'
    """
    reason = _CORE_LAST_ERROR.sub("", details).strip()
    if reason.lower().startswith("stream removed (") and reason.endswith(")"):
        reason = reason[len("stream removed (") : -1]
    if _no_connection(details) and "http/2" in reason.lower():
        # "Failed parsing HTTP/2 (Expected SETTINGS frame ...)": a web server, say.
        return (f"cannot connect to the arena at {arena}: what answers there is no arena "
                f"(it does not speak gRPC: {_lower_first(reason)})")  # fmt: skip
    if _no_connection(details):
        # "Failed to connect to remote host: Connection refused", "DNS resolution failed
        # for h:1: C-ares status is not ARES_SUCCESS ...: Domain name not found": the last
        # words are the reason.
        reason = reason.rpartition(": ")[2] or reason
        if reason.endswith("]") and "[" not in reason:
            # (a host name not found: "... [field:hostname lookup error:address lookup
            # failed for h:1: Domain name not found]" left its bracket on the reason)
            reason = reason[:-1].rstrip()
        return f"cannot connect to the arena at {arena}: {_lower_first(reason)}"
    if reason.lower() in _PING_WORDS:  # (not the arena's words: its end never came)
        return (f"the connection to the arena at {arena} was lost: no answer to a keepalive "
                "ping (a dead link)")  # fmt: skip
    if _closed(details) or reason.lower() in _LOST_WORDS or details.startswith(_CORE_INTERNAL):
        return f"the connection to the arena at {arena} was lost: {_lower_first(reason)}"
    if details.startswith("no Welcome from the arena"):  # (the runner's own, above)
        return details.replace("the arena", f"the arena at {arena}", 1)
    large = _METADATA_TOO_LARGE.search(details)
    if large is not None:
        return _too_much_metadata(arena, large[1])
    said = details or code.name.lower().replace("_", " ")
    return f"the arena at {arena} ended the stream: {said}"


#: What this bot's own gRPC says of a message over its receive limit, and of metadata (a
#: status's details, say) over gRPC's: "Received message larger than max (72000288 vs.
#: 67108864)", "received metadata size exceeds hard limit (value length 20000 vs. 16384)"
#: (or "soft limit (12190 vs. 8192)": past 8 KiB, a status may be refused or not). The
#: arena's gRPC says the same of a message of the bot's over its own limit, after
#: "SERVER: " (this bot's says "CLIENT: ").
_TOO_LARGE = re.compile(r"(SERVER: )?received message larger than max \((\d+) vs\. (\d+)\)", re.I)
#: ... and of a compressed message that would grow past it (a "zip bomb": no sizes said).
_DECOMPRESSES_TOO_LARGE = "Decompressed message larger than max"
_METADATA_TOO_LARGE = re.compile(
    r"received metadata size exceeds (?:hard |soft )?limit \((.*?)\)(?:;|\)|$)"
)


def _why_final(code: grpc.StatusCode, details: str, arena: str) -> str:
    """Why a stream that is not tried again ended, in words for the bot's author: a status
    the arena sent by its name and details; what this bot's gRPC refused of the arena's
    (``RESOURCE_EXHAUSTED`` of its own) as what the arena did.

    >>> print(_why_final(grpc.StatusCode.RESOURCE_EXHAUSTED, "Stream removed (CLIENT: "
    ...       "Received message larger than max (72000288 vs. 67108864))", "h:1"))
    the arena at h:1 sent a message of 72000288 bytes, over the 67108864 bytes this bot ...
    >>> _why_final(grpc.StatusCode.PERMISSION_DENIED, "", "h:1")
    'the arena at h:1 ended the stream: PERMISSION_DENIED'
    """
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        large = _TOO_LARGE.search(details)
        if large is not None and large[1]:  # (a Hello with a name of a MiB, say)
            return (f"the arena at {arena} refused a message of {large[2]} bytes from this "
                    f"bot, over the {large[3]} bytes it reads (the bot would send it "
                    "again)")  # fmt: skip
        if large is not None:
            return (f"the arena at {arena} sent a message of {large[2]} bytes, over the "
                    f"{large[3]} bytes this bot reads (it would come again)")  # fmt: skip
        if _DECOMPRESSES_TOO_LARGE in details:
            return (f"the arena at {arena} sent a compressed message that grows past the "
                    f"{_MAX_RECEIVE_BYTES} bytes this bot reads (it would come again)")  # fmt: skip
        large = _METADATA_TOO_LARGE.search(details)
        if large is not None:
            return _too_much_metadata(arena, large[1])
    if details.startswith(_NO_CHANNEL):
        # (gRPC's own, before anything was sent: no arena was reached, none ended anything)
        reason = details.partition("':")[2].strip() or details
        return (f"gRPC cannot use {arena} as an address ({reason}): give the arena as "
                "HOST:PORT or a target gRPC takes")  # fmt: skip
    return f"the arena at {arena} ended the stream: {code.name}" + (
        f": {details}" if details else ""
    )


#: How this bot's gRPC ends a call on a target it cannot make a channel of ("Failed to
#: create channel to 'ipv4://x/127.0.0.1:1':the target uri is not valid: ...").
_NO_CHANNEL = "Failed to create channel to "


def _too_much_metadata(arena: str, sizes: str) -> str:
    return (f"the arena at {arena} sent more metadata than gRPC reads ({sizes} bytes): the "
            "stream is lost, and the status it ended with")  # fmt: skip


#: More of gRPC core's words for a connection lost mid-stream (lower-cased).
#: gRPC core's words for a connection whose keepalive ping went unanswered (a pulled cable,
#: a sleeping laptop, a peer gone without FIN or RST): "Stream removed (ping timeout)",
#: "keepalive watchdog timeout" (lower-cased).
_PING_WORDS = ("ping timeout", "keepalive watchdog timeout", "keepalive timeout")
_LOST_WORDS = ("broken pipe", "goaway received", "keepalive watchdog timeout",
               "cancelling all calls", "connection timed out", "endpoint closing")  # fmt: skip


def _lower_first(text: str) -> str:
    """ "Connection refused" as said mid-sentence (an all-capitals word stays as it is)."""
    first = text.split(" ", 1)[0]
    return text if first.isupper() else text[:1].lower() + text[1:]


def _tls_failure(details: str) -> bool:
    low = details.lower()
    return any(w in low for w in _TLS_FAILURE_WORDS)


def _tls_error(details: str, arena: str, ca: Path | None) -> ArenaTLSError:
    """A failed handshake (gRPC's ``details``) as gRPC's reason and the likely mistake."""
    reason = _CORE_LAST_ERROR.sub("", details).removesuffix(": OK")  # (no code, no address)
    return ArenaTLSError(f"the TLS handshake with {arena} failed: {reason}; "
                         f"{_tls_cause(details.lower(), arena, ca)}")  # fmt: skip


def _tls_cause(low: str, arena: str, ca: Path | None) -> str:
    """The likely mistake behind a failed handshake (``low``: gRPC's details, lower-cased),
    in the user's terms."""
    if "hostname verification" in low:
        return (f"the arena's certificate is not for the host name in --arena ({arena}): "
                "connect by a name the certificate lists")  # fmt: skip
    if "wrong_version_number" in low:
        return ("the arena does not answer in TLS: if it serves plaintext, leave out --tls "
                "and --ca")  # fmt: skip
    # (signed all right: "not signed by the CA in --ca" sent the user after another CA)
    if "certificate has expired" in low:
        return ("the arena's certificate has expired: its operator must renew it (or this "
                "machine's clock is wrong)")  # fmt: skip
    if "certificate is not yet valid" in low:
        return "the arena's certificate is not valid yet: is this machine's clock right?"
    if "certificate_verify_failed" in low:
        signer = f"the CA in --ca {ca}" if ca is not None else "a CA the system trusts"
        return (f"the arena's certificate is not signed by {signer}: give the certificate "
                "of the CA that signed it (or, if self-signed, the certificate itself) "
                "with --ca FILE")  # fmt: skip
    return "is the certificate signed by --ca / for this host name?"


@dataclass
class RunSummary:
    """What a run did: matches finished, decisions sent, reconnections, why it stopped."""

    matches: int = 0
    decisions: int = 0
    errors: int = 0
    #: Answers the referee refused (``decision_rejected``: illegal, malformed, late or
    #: timed out), not one that crossed the end of a match the bot was told of, nor a
    #: refusal for a match the bot never held.
    rejected: int = 0
    connections: int = 0
    reason: str = ""
    #: Non-zero when the bot itself left (raised ``SystemExit``): its exit code.
    exit_code: int = 0
    #: The text the bot left with (``SystemExit("text")``, exit code 1), else "".
    exit_message: str = ""
    #: Of ``matches``, those its seat forfeited (placed last: struck out, or away too long;
    #: those played without the bot, which could not be made, as a rule).
    forfeits: int = 0


@dataclass
class _Match:
    match_id: str
    seat: int
    ruleset: Ruleset
    bot: Bot | None  # None while it is being made (or if it could not be)
    view: PlayerView
    tail: asyncio.Task[None] | None = None
    answers: dict[str, Action] = field(default_factory=dict)
    #: Of the answer kept in ``answers``: what failed when it is the fallback of a decision
    #: the bot failed (``Decision.failed``, sent again with it), else ``None``.
    answer_failed: str | None = None
    #: The request that waits in the match's chain, not yet taken by its step: a newer
    #: request replaces it there (the arena asks one decision of a seat at a time).
    waiting: _Ask | None = None
    #: The number of the last deal whose end the bot was told of (-1: none).
    last_deal: int = -1
    #: The request ``view`` came with: a refusal of it can name the deal and the method.
    view_rid: str = ""
    #: The request the bot's decision method was last called for (or its kept answer sent
    #: again): a refusal of a request it was never asked (it waited behind a busy call, the
    #: bot could not be made) names no method, which never ran for it.
    asked_rid: str = ""
    #: A decision asked ahead (``_choose_ahead``) that the bot failed: (the view, the
    #: fallback, what failed). The request of that very view is answered with it, not asked
    #: again: one failure, counted and sent once (``Decision.failed``), as without "ahead".
    failed_ahead: tuple[PlayerView, Action, str] | None = None
    #: Whether the bot was told that a decision of this match used the time bank (once).
    bank_told: bool = False
    #: The refusal that struck the seat out ("timeout, strike 3 of 3"), and whether the
    #: arena said the seat had forfeited when it came back: why a forfeit at the match's
    #: end came, which the end itself does not say.
    struck_out: str = ""
    forfeit_told: bool = False
    #: The connection (``RunSummary.connections``) on which the match last started or was
    #: resumed: an end that comes on a later one, with no resumption before it, is the
    #: answer of an arena that does not know the match (see ``_match_over``).
    connection: int = 0
    #: The request id and incident of the match's last refusal: the same again is a repeat.
    last_rejected: tuple[str, int] | None = None
    #: Whether the bot's author was told that a view contradicted an earlier one (once).
    contradiction_told: bool = False
    #: Whether the bot has its own ``on_action`` / ``on_talon_taken`` (until it is made:
    #: maybe). Asked once per match: an action event for a bot without it costs one
    #: attribute read, not an ``overrides`` (several per decision).
    on_action: bool = True
    on_talon_taken: bool = True
    #: The ``seq`` of the last action or talon_taken event told to the bot (or of the
    #: match's start): the referee numbers a match's events by one, so one not above it
    #: is a repeat.
    seq: int = 0
    #: The highest ``seq`` of any event of the match (or of its start), and whether a gap
    #: in the numbering was told (once per match).
    last_seq: int = 0
    gap_told: bool = False
    #: How many repeated events were ignored (the first few are said; see _REPEATS_TOLD).
    repeats: int = 0
    #: The bot's decisions in the match, those of them it failed (raised, or answered no
    #: action: the fallback sent, which the referee takes as any answer, and records as a
    #: ``bot_error`` incident, no strike), and its hooks that failed (the arena records
    #: none): said at the match's end.
    decided: int = 0
    failed: int = 0
    hooks_failed: int = 0
    #: How many events and requests held actions of a newer protocol's kind (the first few
    #: are said, as repeats are).
    newer: int = 0
    #: How many waiting requests a newer one replaced (the first few are said, as repeats
    #: are: a flood of requests for a busy seat wrote a line for each).
    superseded: int = 0
    #: How long making the bot took (its ``__init__``), once made, and its
    #: ``on_match_start`` after it (the same job); whether a request that waited for them
    #: was told so (once per match).
    made_s: float = 0.0
    start_s: float = 0.0
    make_told: bool = False
    #: Hook calls scheduled and not yet begun, and how many were dropped past
    #: :data:`_HOOKS_WAITING_MOST` (the first is said).
    hooks_waiting: int = 0
    hooks_dropped: int = 0
    #: ``view`` as the hooks get it (:func:`hook_view`), and the view it was made of: the
    #: several events of a message share one.
    hooked: PlayerView | None = None
    hooked_of: PlayerView | None = None

    def view_for_hooks(self) -> PlayerView:
        """The match's last view as a hook gets it (without legal actions)."""
        if self.hooked_of is not self.view or self.hooked is None:
            self.hooked, self.hooked_of = hook_view(self.view), self.view
        return self.hooked


@dataclass
class _Ask:
    """A decision request as its step in the match's chain takes it."""

    rid: str
    view: PlayerView
    deadline: Deadline | None
    #: Whether the match had a call in flight when the request came (it may have expired).
    busy: bool
    out: _Outbox
    #: The step that answers it.
    step: asyncio.Task[None] | None = None
    #: Whether it came while the bot was being made: it waited for the bot's ``__init__``.
    behind_make: bool = False


#: The least time over a decision's limit that :func:`_tell_bank` tells of (it says ms).
_OVER_TOLD_S = 0.001


def _tell_bank(
    m: _Match, bot: Bot, view: PlayerView, deadline: Deadline, *, behind_make: bool = False
) -> None:
    """Warn, once per match, when a decision just answered went over its limit, so used the
    match's time bank: the arena says nothing of it until the bank is gone and a timeout
    is a strike. (Per decision only a float comparison when within the limit.)
    ``behind_make``: the request waited for the bot's ``__init__``, whose time is in the
    figure (the decision method alone was blamed for it before)."""
    used = time.monotonic() - deadline.received
    if used - deadline.limit_s < _OVER_TOLD_S:
        # (within the limit; or over it by less than the line shows, "the time bank paid
        # 0 ms": a request asked again after a reconnect may state a limit of 0 ms, and
        # told of that nothing, the bot was told nothing of a real overrun later on)
        return
    over = used - deadline.limit_s
    method = _what(bot, view)
    if behind_make:
        method += ", with the wait for the bot to be made"
    if deadline.limit_s == 0 and over < deadline.bank_s:
        # Only a request asked again after the bot came back states no limit (an arena's
        # limit is at least 1 ms): it was spent while the bot was away. "A decision took
        # 2 ms, over the limit of 0 ms" read as the arena's fault or the bot's; said of
        # each such request, since it tells nothing of the bot's speed, and so it leaves
        # the once-per-match line to a real overrun later.
        log.warning(
            "match %s: a decision asked again after the bot came back (deal %d, %s: %s) "
            "took %.0f ms, all of it from the time bank: its limit had run out while the "
            "bot was away; %.0f ms of the bank left for the match (by this process's "
            "clock). Past the limit and the bank the referee plays its fallback and "
            "counts a strike",
            m.match_id, view.deal_number + 1, view.phase, method, used * 1000,
            (deadline.bank_s - over) * 1000,
        )  # fmt: skip
        return
    m.bank_told = True
    if over >= deadline.bank_s:
        # Past the bank too (by this clock, which starts after the referee's): a timeout,
        # not bank spent ("the time bank paid 0 ms" of a limit with no bank, say).
        log.warning(
            "match %s: a decision took %.0f ms (deal %d, %s: %s), past the limit of %.0f ms "
            "and the %.0f ms left of the time bank: a timeout (the referee played its "
            "fallback, emptied the bank and counted a strike; arena-bot try --decision-ms "
            "N --time-bank-ms M rehearses it; said once per match)",
            m.match_id, used * 1000, view.deal_number + 1, view.phase, method,
            deadline.limit_s * 1000, deadline.bank_s * 1000,
        )  # fmt: skip
        return
    left = deadline.bank_s - over
    log.warning(
        "match %s: a decision took %.0f ms (deal %d, %s: %s), over the limit of %.0f ms: "
        "the time bank paid %.0f ms, %.0f ms of it left for the match (by this process's "
        "clock; the network's delay comes off it too). Past the limit and the bank the "
        "referee plays its fallback and counts a strike (arena-bot try --decision-ms N "
        "--time-bank-ms M rehearses it; said once per match)",
        m.match_id, used * 1000, view.deal_number + 1, view.phase, method,
        deadline.limit_s * 1000, over * 1000, left * 1000,
    )  # fmt: skip


def _too_late(m: _Match, rid: str, deadline: Deadline | None) -> bool:
    """Whether an answer just made came past its deadline, limit and bank, by this
    process's clock, by more than the request can be off: the referee's clock started
    earlier (when it sent the request), so it has timed the request out for certain and
    played its fallback. Sent all the same, the answer would be refused as a wrong request:
    a second warning after the timeout's, and a ``wrong_request`` incident in the match
    record that local play never shows."""
    if deadline is None:
        return False
    # A request asked again after a reconnect states the time left in whole ms: rounded
    # up (100.45 ms as 101), but to nearest by an arena of an earlier version (as 100);
    # and another machine's clock may run faster by up to NTP's slew of 500 ppm: an
    # answer dropped inside the referee's deadline costs a strike, one sent past it only
    # the refusal's line, so the doubt goes to sending it.
    budget = deadline.limit_s + deadline.bank_s
    late = time.monotonic() - (deadline.received + budget)
    if late <= 0.001 + budget / 1000:
        return False
    log.debug("match %s: the answer to request %s came past its deadline: not sent (the "
              "referee timed it out and played its fallback)", m.match_id, rid)  # fmt: skip
    return True


#: The least time a slow ``__init__`` or ``on_match_start`` is blamed for (it is said in
#: tenths of a second).
_BLAMED_S = 0.05

#: How many repeated events of one match are said in the log (the rest only ignored).
_REPEATS_TOLD = 5
_NEWER_UNSAID = "further actions of a newer kind in this match are left out unsaid"


def _say_capped(m: _Match, counter: str, rest: str, text: str, *args: object) -> None:
    """A warning of ``m`` counted in its field ``counter``, said for the first
    :data:`_REPEATS_TOLD` of the match only, the last ending with ``rest`` in brackets: an
    arena repeating something without end wrote a line for each."""
    n = getattr(m, counter) + 1
    setattr(m, counter, n)
    if n <= _REPEATS_TOLD:
        log.warning(text + "%s", *args, f" ({rest})" * (n == _REPEATS_TOLD))


#: How many ended matches the runner remembers (as many as the referee sends again).
_OVER_KEPT = 64
#: How many matches played without the bot the runner remembers (the latest): a Hello
#: names them all as running, and an arena that started matches without end that the
#: runner refused grew it past the arena's receive limit (at most 64 KiB of ids).
_UNMADE_KEPT = 256
#: Of each kind of a message the runner cannot use (see BotRunner._say_fault), how many
#: are said in full; then the 10th, the 100th, ... with their count.
_FAULTS_TOLD = 5
#: How many hook calls (on_action, on_talon_taken, on_deal_end) of one match may wait for
#: the bot at once; more are dropped. A deal has under a hundred events, so only a bot stuck
#: in a call for many deals, or an arena sending events without end, reaches it: 100,000
#: action events in one message of 2 MB queued a task each (some 4 KB), 450 MB, without bound.
_HOOKS_WAITING_MOST = 1024
_UNMADE = "it could not be made"
_REFUSED = "its start was refused above"
#: The most matches the runner plays at once, as many as a Hello can name running (a
#: tournament seats a bot in at most 256, its ``concurrency``): an arena that started
#: matches without end made a bot, a view and a task for each, some 15 KB a match (10,000
#: in one message: 200 MB, and ten seconds of the loop), without bound. Past it a new
#: match is refused (played without the bot, the referee's deadline plays the seat).
_HELD_MOST = HELLO_LIMITS["running"][0]
_TOO_MANY = "its start was refused: the bot held as many matches as it plays at once"


def is_loopback_target(target: str) -> bool:
    """Whether the gRPC ``target`` (``host:port``, ``[::1]:port``, ``dns:///host:port``,
    ``ipv4:127.0.0.1:port``, percent-encoded or not) names this machine's loopback:
    ``localhost`` or a loopback address, an IPv4-mapped one too (every address of an
    ``ipv4:``/``ipv6:`` list).

    >>> [is_loopback_target(t) for t in ("127.0.0.1:50051", "[::1]:1", "localhost:1")]
    [True, True, True]
    >>> [is_loopback_target(t) for t in ("[::ffff:127.0.0.1]:1", "dns:///localhost%3A1")]
    [True, True]
    >>> [is_loopback_target(t) for t in ("arena.example:443", "10.0.0.1:1", "unix:/tmp/s")]
    [False, False, False]
    """
    scheme, colon, rest = target.partition(":")
    # gRPC's schemes in any case, with or without "//" ("IPV4:", "ipv4:///127.0.0.1:1",
    # "dns://8.8.8.8/localhost:1", all passed by --arena's check): each went through
    # the proxy, as only "dns:///", "dns:", "ipv4:" and "ipv6:" were read here.
    # gRPC percent-decodes what follows the scheme ("dns:///localhost%3A50051",
    # "ipv6:%5B::1%5D:1"), and a target without one, read as "dns:///TARGET"
    # ("127.0.0.1%3A50051"): such ones went through the proxy too.
    if colon and scheme.lower() in ("dns", "ipv4", "ipv6") and not rest.isdigit():
        rest = urllib.parse.unquote(rest)
        if rest.startswith("//"):  # (an authority, a DNS server's: the host follows it)
            rest = rest[2:].partition("/")[2]
        hosts = rest.split(",") if scheme.lower() != "dns" else [rest]
    else:  # (HOST:PORT, "dns:50051" among them: the host "dns")
        hosts = [urllib.parse.unquote(target)]
    return all(_loopback_host(h) for h in hosts)


def _loopback_host(address: str) -> bool:
    """Whether ``address`` (``host:port``, ``[IPv6]:port``, a host alone) is a loopback."""
    if address.startswith("["):
        host = address[1:].partition("]")[0]
    else:
        host = address.rpartition(":")[0] if address.count(":") == 1 else address
    return is_loopback_host(host)


class BotRunner:
    """Plays a bot in an arena: see the module docs. :meth:`run` until the end."""

    def __init__(
        self,
        bot: BotFactory,
        arena: str,
        token: str,
        *,
        tls: bool = False,
        ca: str | Path | None = None,
        matches: int | None = None,
        name: str | None = None,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
        retry_for: float | None = 600.0,
        welcome_timeout: float = _WELCOME_TIMEOUT_S,
        workers: int | None = None,
        spec: str | None = None,
    ) -> None:
        problem = factory_problem(bot)
        if problem is not None:  # (else: "cannot make the bot" at every match, forfeited)
            raise TypeError(f"the bot to run is {problem}")
        self.factory = bot
        self.arena = arena
        self.token = token
        self.tls = tls or ca is not None
        self.ca = Path(ca) if ca is not None else None
        if matches is not None and not 1 <= matches < 2**32:  # (the Hello says it: a uint32)
            raise ValueError(f"matches must be from 1 to {2**32 - 1}, got {matches}")
        self.max_matches = matches
        self.name = name or _factory_name(bot)
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.retry_for = retry_for
        self.welcome_timeout = welcome_timeout
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if workers is not None and not spec:
            raise ValueError(
                f"workers={workers} needs spec='file.py:Class', the name each worker process "
                f"loads the bot from (it cannot be handed the class itself): give {_spec_of(bot)}"
            )
        #: ``(spec, n)``: the bot's calls run in n worker processes (sdk.workers), each
        #: loading the bot from spec; ``None``: in this process's threads.
        self.workers = None if workers is None or spec is None else (spec, workers)
        self._procs: Processes | None = None
        self.summary = RunSummary()
        self._matches: dict[str, _Match] = {}
        #: Matches played without the bot, why (its bot could not be made, the factory
        #: raised, or its MatchStarted was refused, malformed) and its seat.
        self._unmade: dict[str, tuple[str, int]] = {}
        #: How many messages of each kind the runner could not use came (_say_fault).
        self._faults: dict[str, int] = {}
        #: The latest matches that ended (oldest first, at most _OVER_KEPT): a request for
        #: one is said to be for a match over, not for one the bot never heard of.
        self._over: dict[str, None] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: The steps that say "match ... ended" and have not yet (they wait in the match's
        #: order for the bot's hooks queued before them): the stream's end is said after.
        self._ends_unsaid: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        #: Set by a second signal: stop without waiting for the bot's calls to end.
        self._hurry = asyncio.Event()
        self._pool: _Workers | None = None
        #: This runner's bot calls in its threads that have not returned, and what each is
        #: (as _RUNNING, which holds every runner's): named when workers are stopped on them.
        self._calls: dict[Future[Any], str] = {}
        self._out: _Outbox | None = None
        #: Whether quick bots may still be asked inline (see _SLOW_S): never with workers.
        self._inline = workers is None
        #: The calls of a quick bot on the event loop so far, and the count at the last
        #: one over _SLOW_S (None: none yet).
        self._on_loop = 0
        self._slow_at: int | None = None
        self._rng = random.Random()  # jitter only; never the global generator

    # ------------------------------------------------------------------ control
    def stop(self, reason: str = "stopped") -> None:
        """Finish cleanly: close the stream (the referee sees the bot leave) and return."""
        if not self._stopping.is_set():
            log.info("stopping: %s", reason)
            self.summary.reason = reason
            self._stopping.set()
            if self._out is not None:
                self._out.put_nowait(None)
            call = self._call
            if call is not None:
                # The referee closes its side once it sees ours close; if it does not, cut.
                asyncio.get_running_loop().call_later(3.0, call.cancel)

    def _signalled(self, name: str) -> None:
        """SIGINT/SIGTERM: stop; a second one stops without waiting for the bot's calls."""
        if self._stopping.is_set() and not self._hurry.is_set():
            log.warning("signal %s again: not waiting for the bot's calls", name)
            self._hurry.set()
        self.stop(f"signal {name}")

    async def run(self) -> RunSummary:
        """Connect, play, reconnect as needed; return when stopped or done.

        Raises :class:`ArenaAuthError` on a refused token, :class:`ArenaTLSError` when the
        TLS handshake fails, and :class:`ArenaError` when the arena refuses the stream
        otherwise, or stays unreachable for ``retry_for`` seconds.
        A bot call still running at the end is not waited for (see
        :func:`bot_calls_running`).
        """
        if self.workers is not None:
            # Started now, so that they have loaded the bot by its first match.
            spec, n = self.workers
            self._procs = Processes(spec, n, self.name)
            log.info("the bot's calls run in %d worker process%s (pid%s %s)", n,
                     "" if n == 1 else "es", "" if n == 1 else "s",
                     ", ".join(map(str, self._procs.pids)))  # fmt: skip
        try:
            if self._procs is not None:
                await asyncio.to_thread(self._procs.wait_ready)
                if self._procs.none_loaded():  # (each worker said why, above)
                    self.summary.reason = "no worker process could load the bot"
                    self.summary.exit_code = 1
                    self.summary.exit_message = (
                        "arena-bot: no worker process could load the bot (see above): "
                        "not connecting to the arena"
                    )
                    return self.summary
            return await self._run()
        finally:
            pool, self._pool = self._pool, None
            if pool is not None:  # calls not started are dropped; running ones go on
                pool.shutdown()
            procs, self._procs = self._procs, None
            if procs is not None:  # (a call still running in one is not waited for)
                # Stopping the workers ends their calls (CallFailed), so that the line
                # arena-bot says of a call still running at exit would never name one in a
                # worker: said here, before, as it is of a thread's.
                stuck = list(self._calls.values())
                if stuck:
                    log.warning(
                        "a bot call is still running in a worker process (%s): stopping "
                        "the workers without waiting for it", ", ".join(stuck),
                    )  # fmt: skip
                procs.shutdown()

    async def _run(self) -> RunSummary:
        attempt = 0
        failing_since: float | None = None
        reached = False  # a Welcome ever came: the address and the transport are right
        hinted = False  # the plaintext-against-TLS hint was given
        asked = False  # the "is an arena serving there?" hint was given
        other_internal = 0  # INTERNALs in a row whose details are not the core's
        while not self._stopping.is_set():
            welcomed = False
            opened = time.monotonic()
            try:
                # A try waits for its Welcome no longer than --retry-for, counted from the
                # failing's start, or from the try's own (a first try stuck in gRPC's
                # connect, 20 s, or waiting for a Welcome, 30 s, came on top of --retry-for:
                # a bot of --retry-for 25 gave up after 45 s).
                since = opened if failing_since is None else failing_since
                self._give_up = None if self.retry_for is None else since + self.retry_for
                welcomed = await self._session()
                if not self._stopping.is_set():
                    reason = "the arena closed the stream"
                    if not welcomed:
                        # An OK end before the Welcome is an arena done for good refusing a
                        # new stream (its words, "the tournament is over", are lost: gRPC
                        # carries no details with an OK status), or no arena at all (a
                        # server or proxy of another service): "the arena closed the
                        # stream" alone read as the end of a run that never began.
                        reason = (f"the arena at {self.arena} closed the stream before its "
                                  "Welcome: it is done (its tournament over, its --matches "
                                  "played), or what serves there is no arena of this "
                                  "protocol")  # fmt: skip
                    self.summary.reason = reason
                    level = logging.INFO if welcomed else logging.WARNING  # (it played nothing)
                    self._say_after_ends(functools.partial(log.log, level, "%s", reason))
                    if self._matches:
                        self._say_after_ends(functools.partial(self._say_unended, self.arena))
                break
            except grpc.aio.AioRpcError as e:
                # (the arena's words, written out: a line break in them began a line of the
                # bot's log, or of arena-bot's last words, that the arena wrote)
                code, details = e.code(), printable(e.details() or "")
                if self._stopping.is_set():
                    break
                if code == grpc.StatusCode.UNAUTHENTICATED:
                    raise ArenaAuthError(
                        f"the arena at {self.arena} refused the token: {details or code.name} "
                        "(check --token / ARENA_TOKEN)"
                    ) from None
                if code == grpc.StatusCode.UNAVAILABLE and _tls_failure(details):
                    # Retrying a certificate that does not verify only hid the mistake for
                    # --retry-for seconds behind "reconnecting" lines.
                    raise _tls_error(details, self.arena, self.ca) from None
                welcomed = welcomed or self._welcomed
                reached = reached or welcomed
                if code == grpc.StatusCode.UNAVAILABLE and any(
                    w in details.lower() for w in ("too many pings", "too_many_pings")
                ):  # (gRPC core says "Too many pings"; the GOAWAY's own data "too_many_pings")
                    self._too_many_pings()
                retry_after = _retry_after_s(e)
                if code == grpc.StatusCode.INTERNAL and not details.startswith(_CORE_INTERNAL):
                    # A status the server sent: it would answer the same for --retry-for. (Or
                    # a gRPC release words the core's own otherwise: asked again a few times in
                    # a row, as every INTERNAL was before the core's were retried for good.)
                    other_internal += 1
                if code == grpc.StatusCode.ABORTED:
                    said = f" ({details})" if details else ""
                    raise ArenaError(
                        f"the arena at {self.arena} took this bot's seats over to another "
                        f"connection with the same token{said}: is a second copy of the bot "
                        "running with this token?"
                    ) from None
                elif (
                    code not in _RETRY_CODES
                    and retry_after is None
                    and not _unreadable_retry_after(e)
                    and (code != grpc.StatusCode.INTERNAL or other_internal > _OTHER_INTERNAL)
                ):
                    raise ArenaError(_why_final(code, details, self.arena)) from None
                dropped = welcomed  # (this stream: what the error at the end says)
                if welcomed:
                    other_internal = 0
                    # Only a stream that worked ends the failing (the back-off starts again,
                    # --retry-for too): a Welcome alone is no proof. An arena that welcomes
                    # and then resets every stream was asked again every 0.25-0.5 s, later
                    # for ever at the longest back-off. A stream that dropped mid-match
                    # (events, answers) or after a long idle wait is opened again at once.
                    if self._progress or time.monotonic() - opened >= _WORKED_S:
                        failing_since, attempt = None, 0
                now = time.monotonic()
                # (a try never welcomed failed from its start; a dropped stream, from now)
                failing_since = failing_since or (now if welcomed else opened)
                if self.retry_for is not None and now - failing_since > self.retry_for:
                    # (the hint said of the last try too: with the first try counted, it
                    # may be the only one)
                    plain = (hinted or (not self.tls and _closed(details))) and not reached
                    what = "has been unreachable"
                    if dropped:  # (the last stream was welcomed: not the address's fault)
                        what += (" or ended every stream it welcomed this bot on (none played"
                                 f" or lasted {_WORKED_S:g} s)")  # fmt: skip
                    raise ArenaError(
                        f"the arena at {self.arena} {what} for {self.retry_for:.0f}s (the "
                        f"last try: {_why_ended(code, details, self.arena)})"
                        + (_PLAINTEXT_HINT if plain else "")
                    ) from None
                delay = min(self.max_backoff, self.initial_backoff * 2**attempt)
                delay *= self._rng.uniform(0.5, 1.0)
                if retry_after is not None:  # the arena says when it lets the bot in again,
                    # within reason: no sooner than the first step (an arena saying 0 made
                    # a reconnect loop), no later than the longest back-off.
                    delay = retry_after * self._rng.uniform(1.0, 1.2)
                    delay = min(max(delay, self.initial_backoff), self.max_backoff)
                if self.retry_for is not None:  # no wait outlasts --retry-for
                    delay = min(delay, max(0.0, failing_since + self.retry_for - now))
                attempt += 1
                hint = ""
                if not (self.tls or reached or hinted) and _closed(details):
                    hinted, hint = True, _PLAINTEXT_HINT
                elif not (reached or asked or hinted) and _no_connection(details):
                    # (not after the TLS hint: a TLS arena is serving there)
                    # Said once, while the arena was never reached: a bot started before its
                    # arena (or at a wrong port) gave only gRPC's words, and no sign of how
                    # long it would go on trying.
                    asked = True
                    tried = ("for ever" if self.retry_for is None
                             else f"for up to {self.retry_for:g} s (--retry-for)")  # fmt: skip
                    low = details.lower()
                    question = (
                        f"is the host name in {self.arena} right"  # (no such name: no "serving")
                        if "resolving" in low or "dns resolution" in low
                        else f"is an arena serving at {self.arena}"
                    )
                    hint = f" ({question}? it is tried again {tried})"
                said = _why_ended(code, details, self.arena)
                log.warning("%s%s; reconnecting in %.1fs", said, hint, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
        await self._drain()
        return self.summary

    # ------------------------------------------------------------------ one stream
    _welcomed = False
    #: Whether the bot's author was told that the arena welcomed it in another protocol
    #: version than its Hello asked for (once per run, not at every reconnect).
    _version_told = False
    #: Whether the stream did more than welcome the bot: an event, a new match, the end of
    #: a match under way or a first answer to a request (a resumed match, a pending
    #: request and its answer, the end of a match already told are sent again at every
    #: reconnect: no progress). Only then does a dropped stream start the back-off again.
    _progress = False
    _call: grpc.aio.StreamStreamCall | None = None
    #: The size of the message being handled, as read (unknown: as large as may come): a
    #: request's view is checked for lists too long to decode (2.6 us) only in one large
    #: enough to hold one, not in every request of a few hundred bytes.
    _read_size = _MAX_RECEIVE_BYTES
    #: The ``time.monotonic()`` past which --retry-for gives up: no Welcome is waited for
    #: beyond it (``None``: not failing, or no limit).
    _give_up: float | None = None
    #: How often the channel pings the arena (HTTP/2 keepalive): doubled each time the
    #: arena drops the connection for pinging too often (see _too_many_pings).
    _keepalive_ms = _KEEPALIVE_MS

    def _say_unended(self, arena: str) -> None:
        """Warn of the matches still held when the arena ended the stream with an OK status
        (a referee ends every match first, and says so: a broken arena or a proxy ending
        the stream as done): they stop here unfinished, without on_match_end."""
        held = list(self._matches)
        more = f" and {len(held) - 3} more" if len(held) > 3 else ""
        log.warning("the arena at %s ended the stream as done while %d match(es) of this bot "
                    "were under way (%s%s), never told ended: the bot leaves them unfinished "
                    "(no on_match_end; the arena plays the seat, if it still plays them)",
                    arena, len(held), ", ".join(held[:3]), more)  # fmt: skip

    def _too_many_pings(self) -> None:
        """The arena dropped the connection for its keepalive pings (GOAWAY
        ``too_many_pings``: a gRPC server of default settings takes one every 5 minutes
        while it sends nothing): ping it half as often from now on. gRPC core does so within
        a channel, but each stream has a channel of its own: an arena of default settings
        dropped an idle bot every 30 s, for good (a disconnect in each match it sat in)."""
        if self._keepalive_ms >= _MAX_KEEPALIVE_MS:
            return
        before = self._keepalive_ms
        self._keepalive_ms = min(2 * before, _MAX_KEEPALIVE_MS)
        log.warning("the arena at %s takes keepalive pings less often than every %g s: this "
                    "bot pings it every %g s from now on (a dead connection is noticed that "
                    "much later)", self.arena, before / 1000,
                    self._keepalive_ms / 1000)  # fmt: skip

    def _channel(self) -> grpc.aio.Channel:
        options = [
            # A connection that died silently (a partition, a lost FIN) is noticed within
            # about 15 s, and the bot reconnects: the arena lets the newest stream of a
            # token take over from the dead one.
            # (gRPC core gives up on an unanswered ping after ping_timeout_ms, 60 s by
            # default, whatever keepalive_timeout_ms says: both are set.)
            ("grpc.keepalive_time_ms", self._keepalive_ms),
            ("grpc.keepalive_timeout_ms", 5_000),
            ("grpc.http2.ping_timeout_ms", 5_000),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.enable_retries", 0),
            ("grpc.max_receive_message_length", _MAX_RECEIVE_BYTES),
            # A connection of its own: grpcio shares one between the channels of a
            # process to the same address, and the referee takes at most 100 streams on
            # one (MAX_STREAMS_PER_CONNECTION): the 101st bot run in one process (threads,
            # run_async) waited for a free stream for ever, never welcomed.
            ("grpc.use_local_subchannel_pool", 1),
        ]
        if is_loopback_target(self.arena):
            # gRPC sends every channel through the proxy of `http_proxy`/`https_proxy`/
            # `grpc_proxy` unless `no_proxy` names the host: with one set (a company network,
            # a CI runner) the bots a tournament starts never reached its arena on
            # 127.0.0.1 ("connection refused" from the proxy, said of the arena), and the run
            # ended "3 of 3 bots did not connect". No proxy can reach this machine's loopback.
            options.append(("grpc.enable_http_proxy", 0))
        if self.tls:
            root = self.ca.read_bytes() if self.ca is not None else None
            creds = grpc.ssl_channel_credentials(root_certificates=root)
            return grpc.aio.secure_channel(self.arena, creds, options=options)
        return grpc.aio.insecure_channel(self.arena, options=options)

    async def _session(self) -> bool:
        """One stream, until it ends normally (returns) or fails (raises AioRpcError)."""
        self._welcomed = self._progress = False
        out = _Outbox()
        out.put_nowait(
            pb.BotMessage(
                hello=pb.Hello(
                    bot_name=self.name[: HELLO_LIMITS["bot_name"][1]],  # (informative)
                    protocol_version=PROTOCOL_VERSION,
                    client=CLIENT,
                    # "results_once": a request's view leaves out the deal results of its
                    # match sent before; "deal_once": the bids and completed tricks of its
                    # deal (view_from_pb takes them from the match's last view); "ahead": a
                    # quick bot's answer may carry its next decisions (_choose_ahead).
                    features=["batch", "results_once", "deal_once", "ahead"],
                    matches=self._matches_to_start(),
                    # Within the protocol's limit (a Hello over it is refused): the matches
                    # it holds first, their seats resume whether named or not.
                    running=[*self._matches, *self._unmade][: HELLO_LIMITS["running"][0]],
                )
            )
        )
        if self._stopping.is_set():
            return False

        self._out = out
        writer: asyncio.Task[None] | None = None
        try:
            async with self._channel() as channel:
                play = channel.stream_stream(
                    _PLAY, request_serializer=pb.BotMessage.SerializeToString
                )  # no response_deserializer: the bytes are parsed in _parse
                call = play(metadata=(("authorization", f"Bearer {self.token}"),))
                self._call = call

                async def write_loop() -> None:
                    with contextlib.suppress(Exception):  # the reader sees the call fail
                        while not out.closed:
                            await out.wait()
                            await out.flush(call)

                writer = asyncio.get_running_loop().create_task(write_loop())
                self.summary.connections += 1
                start = time.monotonic()
                deadline = start + self.welcome_timeout
                if self._give_up is not None:  # (but at least 1 s)
                    deadline = min(deadline, max(self._give_up, start + 1.0))
                try:
                    while True:
                        if self._welcomed:
                            data = await call.read()
                        else:
                            data = await _read_before_welcome(call, start, deadline)
                        if data is grpc.aio.EOF:
                            break
                        self._on_read(data, out)
                        if out and not out.busy:  # else the one writing takes it too
                            # A call that ended meanwhile (gRPC core failed it, the arena
                            # reset it) refuses writes with InvalidStateError: the next
                            # read says how it ended, and the runner reconnects (this
                            # raised out of run(): the bot stopped, a 40-match test under
                            # load saw it). (Not contextlib.suppress: an object and two
                            # calls more for every message read.)
                            try:  # noqa: SIM105
                                await out.flush(call)
                            except _ENDED_CALL_WRITE:
                                pass
                except asyncio.CancelledError:
                    if not self._stopping.is_set():
                        raise
                return self._welcomed
        finally:
            self._call = None
            self._out = None
            out.put_nowait(None)
            if writer is not None:
                writer.cancel()

    # ------------------------------------------------------------------ messages
    def _on_read(self, data: object, out: _Outbox) -> None:
        """Handle the bytes of one message read from the stream (the answers it makes are
        queued in ``out``, which the reader then flushes). Its own method so that
        ``arena.bench.sdk_requests`` measures the very path a read takes."""
        msg = _parse(data, self._say_fault)
        if msg is None or not self._in_order(msg):
            return
        self._read_size = len(data)  # type: ignore[arg-type]  # (bytes: _parse said so)
        out.held = True
        try:
            # (the requests' views as sdk.wire_view reads them, from the bytes read: the
            # views are not serialized again to find their items)
            kind = _server_kind(msg, "kind")
            wire = wire_items(data) if kind in _WITH_REQUESTS else None  # type: ignore[arg-type]
            self._on_message(msg, out, wire, kind)
        finally:
            out.held = False

    def _on_message(
        self, msg: pb.ServerMessage, out: _Outbox, wire: Any = None, kind: str | None = ""
    ) -> None:
        """Handle one message: its events one by one, then its kind. Nothing raises out
        of here: what one event or message cannot be handled for is logged, naming it and
        its match, and skipped, so it spoils neither the rest of the message (another
        match's request, say) nor the runner. ``wire``: the same message as
        ``sdk.wire_view.wire_items`` parses it (``None``: its view is serialized again).
        ``kind``: ``msg``'s, when the caller read it already ("": not read; each read of
        it is a upb call)."""
        if kind == "":
            kind = _server_kind(msg, "kind")
        if kind == "batch":
            # (the same bytes parsed twice: the same messages, in the same order)
            wired = wire.batch.messages[:] if wire is not None else None
            for i, inner in enumerate(msg.batch.messages[:]):  # one bad one spoils no other
                inner_kind = _server_kind(inner, "kind")
                if inner_kind == "batch":
                    log.error("malformed message from the arena, ignored: batch: a Batch "
                              "inside a Batch")  # fmt: skip
                else:
                    wired_i = wired[i] if wired is not None else None
                    self._on_message(inner, out, wired_i, inner_kind)
            return
        if kind == "welcome":
            self._on_welcome(msg.welcome, out)
            return
        events = msg.events[:]  # (a slice: see sdk.wire_view._known_view)
        if events or (kind == "match_started" and not msg.match_started.resumed):
            self._progress = True  # (a match's end: counted in _on_match_ended, if new)
        for ev in events:
            try:
                self._on_event(ev)
            except Exception as e:
                _ignored(f"{ev.WhichOneof('kind')} event", ev.match_id, e, self._say_fault)
        try:
            if kind == "decision_request":  # (most messages)
                self._on_request(
                    msg.decision_request,
                    out,
                    wire.decision_request.view if wire is not None else None,
                )
            else:
                self._on_kind(kind, msg, out)
        except Exception as e:
            _ignored(kind or "message", _match_of(msg, kind), e, self._say_fault)

    def _set_unmade(self, match_id: str, why: str, seat: int) -> None:
        """Remember ``match_id`` as played without the bot at ``seat``, for ``why``; the oldest one
        is forgotten past :data:`_UNMADE_KEPT` (its later messages are then said to be for
        an unknown match)."""
        self._unmade.pop(match_id, None)
        self._unmade[match_id] = (why, seat)
        while len(self._unmade) > _UNMADE_KEPT:
            del self._unmade[next(iter(self._unmade))]

    def _say_fault(
        self, kind: str, level: int, text: str, *args: object, told: int = _FAULTS_TOLD
    ) -> None:
        """Log ``text % args`` at ``level``, one of the arena's messages of ``kind`` that
        the runner cannot use: the first ``told`` of the run in full, then only the 10th,
        the 100th, ... with their count (the rest at DEBUG). The referee never sends one
        (or a few, after a reconnection); a broken or hostile arena sending them without
        end wrote a line for each (10,000 lines for a Batch of 10,000 bad requests)."""
        n = self._faults[kind] = self._faults.get(kind, 0) + 1
        if n <= told or str(n).rstrip("0") == "1":
            more = ""
            if n == told:
                more = f" ({n} of these so far: from now on only the 10th, 100th, ... are said)"
            elif n > told:
                more = f" ({n:,} of these so far)"
            log.log(level, text + "%s", *args, more)
        else:
            log.debug(text, *args)

    def _in_order(self, msg: pb.ServerMessage) -> bool:
        """Whether a message read from the stream may be handled: the Welcome is its first
        message, alone (never in a Batch). What comes before it breaks the protocol and is
        not acted on (a decision was sent for a request before the Welcome)."""
        if self._welcomed:  # (every message but the first: its kind not needed here)
            return True
        kind = _server_kind(msg, "kind")
        if kind == "welcome":
            return True
        what, match_id = kind or "a message of no kind", _match_of(msg, kind) or "-"
        self._say_fault("early", logging.WARNING, "protocol violation: %s from the arena "
                        "before its Welcome (match %s): ignored", what, match_id)  # fmt: skip
        return False

    def _on_welcome(self, w: pb.Welcome, out: _Outbox) -> None:
        if self._welcomed:  # "connected" again would mislead: nothing was reconnected
            self._say_fault(
                "welcome",
                logging.WARNING,
                "protocol violation: a second Welcome from the arena: ignored",
            )
            return
        self._welcomed = True
        out.batch = "batch" in w.features
        out.ahead = "ahead" in w.features
        # With no match under way, say what the bot waits for: connected to an `arena
        # serve` that had fewer bots than a table seats, it sat silent after this line, as
        # if hung, until the others came.
        waits = ""
        if not (self._matches or self._unmade):
            waits = ("; waiting to be seated in a match (arena serve seats one once as many "
                     "bots as its ruleset seats are connected and idle; a tournament once all "
                     "its bots are)")  # fmt: skip
        log.info("connected to %s as %r (server %s)%s", self.arena, w.bot_name,
                 w.server_version, waits)  # fmt: skip
        if w.protocol_version not in (0, PROTOCOL_VERSION) and not self._version_told:
            # The Hello asked for this version, and a referee refuses any other: an arena
            # that welcomes the bot in another one was taken at its word in silence, and
            # what it then sent was misread, or refused message by message.
            self._version_told = True
            log.warning("protocol violation: the arena at %s welcomed the bot in protocol "
                        "version %d, but this SDK asked for (and speaks) version %d: its "
                        "messages are read as version %d's", self.arena, w.protocol_version,
                        PROTOCOL_VERSION, PROTOCOL_VERSION)  # fmt: skip

    def _on_kind(self, kind: str | None, msg: pb.ServerMessage, out: _Outbox) -> None:
        if kind == "match_started":
            self._on_match_started(msg.match_started)
        elif kind == "decision_request":
            self._on_request(msg.decision_request, out)
        elif kind == "decision_rejected":
            r = msg.decision_rejected
            if (
                r.incident == pb.INCIDENT_WRONG_REQUEST
                and r.match_id in self._over
                and r.match_id not in self._matches
            ):
                # An answer that was on its way when the match ended (the arena stopped
                # it, or its time limit): refused after the end the bot was told of.
                # docs/protocol.md: "ignore a refusal for a match you have seen end"; a
                # warning here, after "was interrupted", read as a fault of the bot's.
                log.debug("match %s: an answer that crossed the match's end was refused "
                          "(%s)", r.match_id, r.message)  # fmt: skip
                return
            m = self._matches.get(r.match_id)
            if m is not None and m.last_rejected == (r.request_id, r.incident):
                # The referee refuses an answer once: the same refusal again (a flood of
                # them wrote a warning each, and counted each as a rejected answer).
                self._say_repeat(m, "match %s: decision rejected again (%s) for request %s, "
                                 "as just before: ignored", r.match_id,
                                 _incident_name(r.incident), r.request_id)  # fmt: skip
                return
            # (a refusal for a match the bot never held refused no answer of its: a hostile
            # arena's made the run's last line say "1 rejected" when none was)
            held = m is not None or r.match_id in self._over or r.match_id in self._unmade
            if held:
                self.summary.rejected += 1
            incident = _incident_name(r.incident)
            # A wrong request (late, repeated, unknown) costs no strike: say so.
            strike = (
                "no strike"
                if r.incident == pb.INCIDENT_WRONG_REQUEST
                else f"strike {r.strikes} of {r.strikes_allowed}"
            )
            # (the refusal that struck the seat out: a wrong request's, of a late answer
            # after it, states the strikes too, and counts none)
            struck = r.incident != pb.INCIDENT_WRONG_REQUEST and 0 < r.strikes_allowed <= r.strikes
            if m is not None and struck:
                m.struck_out = f"{incident}, {strike}"
            text = "match %s: decision rejected (%s, %s): %s%s"
            args = (r.match_id, incident, strike, r.message, self._rejected_context(r))
            if m is not None:
                m.last_rejected = (r.request_id, r.incident)
            if m is not None and (r.request_id == m.view_rid or r.request_id in m.answers):
                log.warning(text, *args)  # (of the request asked last, or answered last)
            elif held:
                # Of another request of a match the bot holds or held: said in full as many
                # times as a few matches' worth (a flood of them wrote a line each).
                self._say_fault("rejected", logging.WARNING, text, *args, told=_OVER_KEPT)
            else:  # of no decision the bot sent: a flood of them wrote a line each
                self._say_fault("rejected unknown", logging.WARNING, text, *args)
        elif kind == "match_ended":
            self._on_match_ended(msg.match_ended)

    def _rejected_context(self, r: pb.DecisionRejected) -> str:
        """What a refusal's words (the referee's) leave out for the bot's author: which
        decision it was (the method, the deal) and the move the referee played instead, as
        the SDK's own lines say of a raise or a ``None`` ("" for what is not known)."""
        m = self._matches.get(r.match_id)
        where = ""
        if m is not None and m.view_rid == r.request_id:
            v = m.view
            asked = m.bot is not None and m.asked_rid == r.request_id
            method = f"{_what(m.bot, v)}, " if asked and m.bot is not None else ""
            where = f" ({method}deal {v.deal_number + 1}, {v.phase}"
            where += ")" if asked else "; the bot was not asked it)"
        if r.HasField("fallback"):
            try:
                fallback = action_from_pb(r.fallback)
            except MalformedMessageError:  # the refusal is still worth its line
                return where
            return f"{where}; the referee played {fallback} instead"
        return where

    def _on_event(self, ev: pb.Event) -> None:
        m = self._matches.get(ev.match_id)
        if m is None:
            if ev.match_id not in self._unmade and ev.match_id not in self._over:
                # (the events of a match the bot refused, or saw end, are dropped quietly;
                # of one never started, a deal's result under a match id the arena got
                # wrong, say, were dropped unsaid)
                what = ev.WhichOneof("kind") or "an"
                self._say_fault("event unknown", logging.ERROR, "%s event for unknown match "
                                "%s: ignored", what, ev.match_id)  # fmt: skip
            return
        kind = _event_kind(ev, "kind")
        seq = ev.seq
        if seq > m.last_seq + 1 and not m.gap_told:
            # Events the arena numbered but never sent: the bot's hooks miss them (a bot
            # following the cards is off from here), and nothing said so.
            m.gap_told = True
            log.warning("match %s: %s event %d follows event %d: the %d event(s) between "
                        "never came (the arena numbers a match's events by one), and the "
                        "bot's hooks miss them (said once per match)", m.match_id, kind,
                        seq, m.last_seq, seq - m.last_seq - 1)  # fmt: skip
        if seq > m.last_seq:
            m.last_seq = seq
        if kind == "action":
            if m.on_action and not self._repeated(m, ev, kind):
                try:
                    seat, action = seat_action_from_pb(ev.action)
                except MalformedActionError:
                    a = ev.action.action
                    if a.WhichOneof("kind") is not None or not a.ByteSize():
                        raise
                    # (a newer protocol's kind: skipped as protobuf skips a field it does
                    # not know, not refused as malformed)
                    _say_capped(m, "newer", _NEWER_UNSAID,
                                "match %s: action event %d is of a kind this SDK does not "
                                "know (a newer protocol's): not told to the bot", m.match_id,
                                ev.seq)  # fmt: skip
                    return
                self._check_seat(m, seat, "action.seat")
                if isinstance(action, Give | HiddenGive):
                    self._check_seat(m, action.to, "action.give.to")
                    if action.to == seat:
                        raise MalformedMessageError(
                            "action.give.to", f"seat {seat} gives to itself"
                        )
                self._schedule(m, "on_action", m.view_for_hooks(), seat, action)
            return
        if kind == "talon_taken":
            if m.on_talon_taken and not self._repeated(m, ev, kind):
                self._on_talon_taken(m, ev.talon_taken)
            return
        if kind != "deal_ended":
            return
        number = ev.deal_ended.deal_number
        if number <= m.last_deal:
            # A deal ends once, and in order: a repeated event queued a hook call (and a
            # view) each, without bound.
            self._say_repeat(m, "match %s: deal_ended event for deal %d, whose end (or a "
                             "later deal's) the bot was told of already: ignored", m.match_id,
                             number + 1)  # fmt: skip
            return
        if number < m.view.deal_number:
            # The bot has been given a view of a later deal: that deal's end is past (a
            # resumed match's view reflects every event before it). Hooked, it paired the
            # later deal's view with an earlier deal's result.
            self._say_repeat(m, "match %s: deal_ended event for deal %d, after the bot was "
                             "given a view of deal %d: out of order, ignored", m.match_id,
                             number + 1, m.view.deal_number + 1)  # fmt: skip
            return
        if m.bot is not None and not _has(m.bot, "on_deal_end"):
            m.last_deal = number
            return  # not overridden: nothing to run
        result = deal_result_from_pb(ev.deal_ended, m.ruleset.players)
        m.last_deal = number  # (a malformed one is not the deal's end)
        # The view as it is now, when the deal's end comes: the last one the bot was given
        # (the next request, in this very message, will replace m.view before the hook runs).
        self._schedule(m, "on_deal_end", m.view_for_hooks(), result)

    def _on_talon_taken(self, m: _Match, t: pb.TalonTaken) -> None:
        declarer = t.seat
        self._check_seat(m, declarer, "talon_taken.seat")
        cards = tuple(card_from_pb(c, "talon_taken.cards") for c in t.cards)
        if len(cards) not in (0, 3):
            raise MalformedMessageError("talon_taken.cards", f"not a talon: {len(cards)} cards")
        if len(set(cards)) != len(cards):
            raise MalformedMessageError("talon_taken.cards", "not a talon: a card twice")
        talon = cards or None
        self._schedule(m, "on_talon_taken", m.view_for_hooks(), declarer, talon)

    @staticmethod
    def _repeated(m: _Match, ev: pb.Event, kind: str) -> bool:
        """Whether ``ev`` was told already (its ``seq`` not above the last one's): a hook
        told an action twice would count its card twice. (An arena that numbers no event,
        all 0, is not checked.)"""
        if ev.seq and ev.seq <= m.seq:
            # (below the last one, it may be one that never came, sent late: out of order;
            # "repeats" alone told the bot's author of a repeat the arena did not send)
            BotRunner._say_repeat(m, "match %s: %s event %d repeats an earlier one%s (the "
                                  "last was %d): ignored", m.match_id, kind, ev.seq,
                                  " or is out of order" if ev.seq < m.seq else "",
                                  m.seq)  # fmt: skip
            return True
        m.seq = ev.seq or m.seq
        return False

    @staticmethod
    def _say_repeat(m: _Match, text: str, *args: object) -> None:
        """A warning of an event of ``m`` ignored as a repeat (or out of order), for the
        first :data:`_REPEATS_TOLD` of the match only, the last saying so: an arena
        repeating events without end, or one whose numbering jumped to 2**32-1, wrote a
        line per event (a repeated ``deal_ended`` as much as an action)."""
        _say_capped(m, "repeats", "further repeats of this match are ignored unsaid", text, *args)

    @staticmethod
    def _check_seat(m: _Match, seat: int, what: str) -> None:
        if not 0 <= seat < m.ruleset.players:
            raise MalformedMessageError(
                what, f"no seat {seat} at a {m.ruleset.players}-player table"
            )

    def _matches_to_start(self) -> int | None:
        """``Hello.matches``: how many more matches the bot will play (``None``: no limit),
        counting those still under way, which ``Hello.running`` names: the referee takes
        off those it resumes or whose end it sends again (taking them off here too left a
        bot that reconnected mid-match one match short: never seated again)."""
        if self.max_matches is None:
            return None
        return max(0, self.max_matches - self.summary.matches)

    def _on_match_started(self, ms: pb.MatchStarted) -> None:
        m = self._matches.get(ms.match_id)
        try:
            _check_id("match_started.match_id", ms.match_id)
            ruleset = ruleset_from_pb(ms.ruleset)
            _check_view_size(ms.view, "match_started.view")
            view = view_from_pb(ms.view, ruleset)
            if view.seat != ms.seat:
                raise MalformedMessageError(
                    "match_started.seat", f"seat {ms.seat}, but its view is seat {view.seat}"
                )
        except MalformedMessageError as e:
            # Played without the bot, as one whose bot could not be made: its later
            # messages say why they are not acted on, rather than "unknown match".
            if m is None and len(ms.match_id) <= _ID_MOST:  # (a Hello names it again)
                self._set_unmade(ms.match_id, _REFUSED, ms.seat)
            self._say_fault("start", logging.ERROR, "match %s: malformed MatchStarted from "
                            "the arena, refused (%s): the match goes on without the bot (the "
                            "referee's deadline plays the seat)", ms.match_id, e)  # fmt: skip
            return
        if m is None and len(self._matches) >= _HELD_MOST:
            self._set_unmade(ms.match_id, _TOO_MANY, ms.seat)
            self._say_fault("held", logging.ERROR, "match %s: the arena started it while "
                            "the bot plays %d matches already, the most this SDK plays at "
                            "once: refused, the match goes on without the bot (the "
                            "referee's deadline plays the seat)", ms.match_id,
                            len(self._matches))  # fmt: skip
            return
        if m is None and self._stopping.is_set():
            # Seated as it leaves (a tournament's schedule; the lobby of ``arena serve``
            # knows the bot's count from its Hello and does not do this).
            log.warning("match %s: seated after the bot stopped (%s): not played; the "
                        "referee plays the seat", ms.match_id, self.summary.reason)  # fmt: skip
            return
        if ms.forfeited:
            log.warning("match %s: seat %d has forfeited (away too long, or struck out): "
                        "the referee plays it to the end", ms.match_id, ms.seat)  # fmt: skip
        if m is not None and ms.resumed:  # a resumed match after a reconnection: same bot
            if ms.seat != m.seat or ruleset != m.ruleset or view.players != m.view.players:
                # A match under way does not change seat, rules or players: taken as is,
                # the bot's next hook would get another seat's view (or another table's),
                # and every later request would be refused.
                if ms.seat != m.seat:
                    what = f"as seat {ms.seat}, but the bot sits in seat {m.seat}"
                elif ruleset != m.ruleset:
                    what = (f"under ruleset {ruleset.name!r} (other options), not the "
                            f"match's {m.ruleset.name!r}")  # fmt: skip
                else:
                    what = (f"with players {', '.join(view.players)}, not the match's "
                            f"{', '.join(m.view.players)}")  # fmt: skip
                log.error("match %s: MatchStarted resumes the match %s: refused (the match "
                          "keeps its seat, rules, players and view)", ms.match_id,
                          what)  # fmt: skip
                return
            if m.connection == self.summary.connections:
                # The referee resumes a match once per stream, when the bot comes back: a
                # MatchStarted resuming one this stream started or resumed already wrote a
                # line for each (10,000 in a Batch of them).
                self._say_fault("resumed again", logging.WARNING, "protocol violation: "
                                "match %s resumed again on the stream that started or "
                                "resumed it: ignored", ms.match_id)  # fmt: skip
                return
            m.view = view
            m.connection = self.summary.connections
            m.forfeit_told = m.forfeit_told or ms.forfeited
            m.seq = max(m.seq, ms.seq)  # (the events up to it are not sent again)
            m.last_seq = max(m.last_seq, ms.seq)
            log.info("match %s resumed (seat %d)", ms.match_id, ms.seat)
            return
        again = m is not None
        if m is not None:
            # Not a resumption: another match under a known id (an arena restarted, its
            # ids counting from the start again, while this one was never told the end).
            # (capped: an arena starting one id without end wrote two lines a time)
            self._say_fault("started again", logging.WARNING, "match %s started again: the "
                            "earlier match of that id is dropped", ms.match_id)  # fmt: skip
            if self._procs is not None:  # its bot, once its calls queued are done
                self._chain(m, self._release(m))
        self._unmade.pop(ms.match_id, None)
        self._over.pop(ms.match_id, None)
        m = _Match(ms.match_id, ms.seat, ruleset, None, view, seq=ms.seq, last_seq=ms.seq)
        m.connection = self.summary.connections
        m.forfeit_told = ms.forfeited
        self._matches[ms.match_id] = m
        # A match under way that this process did not hold (restarted, or a second copy
        # with the token): its bot is new, and knows nothing of the deals before. Said as
        # "started", the author of a bot restarted in deal 8 read that it counted 5 deals of
        # 12 and could not tell why.
        joined = ""
        if ms.resumed:
            joined = (f" (joined under way in deal {view.deal_number + 1}: a new instance of "
                      "the bot, told nothing of what came before)")  # fmt: skip
        # (a match started again past the few said above is not said either)
        again_unsaid = again and self._faults["started again"] > _FAULTS_TOLD
        # (the view's players, one a seat: the start's own list is checked by nothing)
        log.log(logging.DEBUG if again_unsaid else logging.INFO,
                "match %s started: seat %d, %s, players %s%s", ms.match_id, ms.seat,
                describe_ruleset(ruleset, players=False), ", ".join(view.players),
                joined)  # fmt: skip
        # The bot is made in the worker thread, first in the match's chain of calls: a slow
        # __init__ holds up this match only (its clock runs), not the bot's other matches.
        self._chain(m, self._make(m, hook_view(view)))

    def _init_of(self, bot: Bot) -> str:
        """``"Mine.__init__() (mine.py:6)"``: what made ``bot``, as the log names it."""
        cls = type(bot)
        if isinstance(bot, Remote) or cls.__init__ is Bot.__init__:
            return f"{self.name}()" if isinstance(bot, Remote) else f"{cls.__name__}()"
        return f"{cls.__name__}.{_defined(cls, '__init__')}"

    def _start_of(self, bot: Bot) -> str:
        """``"Mine.on_match_start() (mine.py:9)"``: the bot's hook, as the log names it."""
        if isinstance(bot, Remote):
            return f"{self.name}.on_match_start()"
        cls = type(bot)
        return f"{cls.__name__}.{_defined(cls, 'on_match_start')}"

    async def _make(self, m: _Match, start: PlayerView) -> None:
        if self._matches.get(m.match_id, m) is not m:
            # Replaced before its turn came (its id started again): nobody will ask it.
            # Made all the same, an arena starting one id without end had a bot made for
            # each start (10,000 in a Batch of them). (One that ended meanwhile is made:
            # its on_match_end follows.)
            return
        procs = self._procs
        began = time.monotonic()
        try:
            bot = await self._in_thread(
                f"{self.name}() for match {m.match_id}",
                (lambda: _make_here(self.factory, self.name, m.match_id))
                if procs is None
                else (lambda: procs.make(m.match_id)),
            )
        except (SystemExit, KeyboardInterrupt) as e:
            self._bot_left(e)
            return
        if bot is None:
            # The bot's own bug (logged), like a raising act(): it must not stop the runner
            # (and its other matches). That match goes on without the bot: its requests are
            # left unanswered, so the referee plays the seat on its deadline.
            if self._matches.pop(m.match_id, None) is not None:
                self._set_unmade(m.match_id, _UNMADE, m.seat)
            self.summary.errors += 1
            return
        tell(bot, "match_id", m.match_id)
        m.bot = bot
        m.made_s = time.monotonic() - began
        m.on_action = _has(bot, "on_action")
        m.on_talon_taken = _has(bot, "on_talon_taken")
        if _has(bot, "on_match_start"):
            hook_began = time.monotonic()
            await self._hook(m, bot, "on_match_start", start)
            m.start_s = time.monotonic() - hook_began

    def _on_request(self, req: pb.DecisionRequest, out: _Outbox, items: Any = None) -> None:
        """``items``: ``req.view`` as ``sdk.wire_view.wire_items`` parses it (or ``None``)."""
        m = self._matches.get(req.match_id)
        if m is None:
            why = self._unmade.get(req.match_id, (None, 0))[0]
            if why == _UNMADE:
                log.debug("match %s: no bot to ask (%s)", req.match_id, why)
            elif why is not None:
                self._say_fault(
                    "refused",
                    logging.WARNING,
                    "decision request for match %s (%s): ignored",
                    req.match_id,
                    why,
                    told=_OVER_KEPT,
                )
            elif req.match_id in self._over:
                self._say_fault("over", logging.ERROR, "decision request for match %s, which "
                                "has ended: ignored", req.match_id, told=_OVER_KEPT)  # fmt: skip
            else:
                # (each names its match, and a few dozen may be a reconnection's: said in
                # full up to as many as the runner remembers ended matches)
                self._say_fault("unknown", logging.ERROR, "decision request for unknown "
                                "match %s: ignored", req.match_id, told=_OVER_KEPT)  # fmt: skip
            return
        rid = req.request_id
        _check_id("request_id", rid)
        if self._read_size > 2 * _VIEW_LIST_MOST:  # (a list past it takes 2 bytes an entry)
            _check_view_size(req.view)
        try:
            # (view_from_pb's view, or its error: its repeated items found by their bytes;
            # ``req.view``, a upb wrapper made and freed, read only if it is needed)
            view = request_view_of(req, m.ruleset, m.view, items)
        except MalformedActionError as e:
            newer = _newer_actions(req.view)
            if e.what != "action" or newer is None:
                raise
            # Actions of a kind added by a newer protocol (proto3 keeps them as unknown
            # fields): the bot chooses among the others, as a bot of this version should.
            view_pb, n = newer
            _say_capped(m, "newer", _NEWER_UNSAID,
                        "match %s: decision request %s offers %d action(s) of a kind this SDK "
                        "does not know (a newer protocol's): left out of the legal actions",
                        m.match_id, rid, n)  # fmt: skip
            view = view_from_pb(view_pb, m.ruleset, m.view)
        if view.seat != m.seat:
            raise MalformedMessageError("view.seat", f"seat {view.seat}, the match's {m.seat}")
        if not view.legal_actions:
            # Nothing to choose from: the bot (and the fallback) would fail. Unanswered, the
            # referee times the request out and plays its own fallback.
            self._say_fault("no legal", logging.ERROR, "match %s: decision request %s lists "
                            "no legal actions: not answered", m.match_id, rid)  # fmt: skip
            return
        _check_request_view(view)
        if view.deal_number == m.view.deal_number and not m.contradiction_told:
            why = _contradiction(m.view, view)
            if why is not None:
                m.contradiction_told = True
                log.warning("match %s: the view of request %s (deal %d) contradicts the one the "
                            "bot was given before in the deal: %s; the arena's newest view is "
                            "taken as it is (said once per match)", m.match_id, rid,
                            view.deal_number + 1, why)  # fmt: skip
        m.view, m.view_rid = view, rid
        deadline = (  # 0 and 0: the request states none (the referee always does)
            Deadline(req.time_limit_ms / 1000, req.time_bank_ms / 1000, time.monotonic())
            if req.time_limit_ms or req.time_bank_ms
            else None
        )
        tail = m.tail
        busy = tail is not None and not tail.done()
        bot = m.bot  # None while it is being made (then tail is that job)
        inline = self._inline and bot is not None and bot.quick
        if inline and not busy and rid not in m.answers:
            # A quick bot and nothing of this match in flight: answer here, no task.
            assert bot is not None
            m.asked_rid = rid
            try:
                action, failed = self._decide_inline(m, bot, view, deadline)
                ahead = None
                if failed is None and out.ahead:
                    ahead = self._choose_ahead(m, bot, view, action, deadline)
            except (SystemExit, KeyboardInterrupt) as e:
                self._bot_left(e)
                return
            if not _too_late(m, rid, deadline):
                self._send_answer(m, rid, action, out, failed, ahead)
            return

        w = m.waiting
        if w is not None and w.step is m.tail and w.step is not None and not w.step.done():
            # A request of this match still waits for the bot, its step the last in the
            # chain: the arena has stopped waiting for it (its deadline, a newer request
            # for the seat). Replaced, not queued behind it: a flood of requests (or of
            # one request again) queued a step and a view each, and the bot answered them
            # all, one by one.
            if w.rid != rid:
                _say_capped(m, "superseded", "further superseded requests of this match are "
                            "not said", "match %s: request %s was superseded by request %s "
                            "before the bot was asked: not asked (the arena asks one decision "
                            "of a seat at a time)", m.match_id, w.rid, rid)  # fmt: skip
            w.rid, w.view, w.deadline, w.out = rid, view, deadline, out
            return
        ask = _Ask(rid, view, deadline, busy, out, behind_make=busy and bot is None)

        async def answer() -> None:
            if m.waiting is ask:
                m.waiting = None
            rid, view, deadline, busy, out = ask.rid, ask.view, ask.deadline, ask.busy, ask.out
            cached = m.answers.get(rid)
            if cached is not None and cached not in view.legal_actions:
                # The id of a request answered already, for another decision (an arena that
                # reuses ids), or an illegal answer that the arena never got: the kept
                # answer was sent again as it was, though not legal.
                log.warning("match %s: request %s came again (deal %d, %s), and the bot's "
                            "answer to it (%s) is not among its legal actions: the bot is "
                            "asked again", m.match_id, rid, view.deal_number + 1, view.phase,
                            cached)  # fmt: skip
                del m.answers[rid]
                cached = None
            bot = m.bot
            if bot is None:
                return  # it could not be made: the referee plays the seat on its deadline
            # (the job it waited for made the bot, then ran its on_match_start: the one that
            # took longer is named)
            in_start = ask.behind_make and m.start_s > m.made_s
            slow_make = ask.behind_make and deadline is not None and not m.make_told
            # (only if the job named took more than the limit: a request asked again after
            # a reconnect may state a limit of 0 ms, spent while the bot was away, and a bot
            # made in a millisecond was told "making the bot took 0.0 s ... over its limit
            # of 0 ms: load big things once")
            if (
                slow_make
                and deadline is not None
                and deadline.left(bank=False) == 0.0
                and (m.start_s if in_start else m.made_s) > max(deadline.limit_s, _BLAMED_S)
            ):
                # The bot's __init__ (or its on_match_start) took this decision's time: said
                # once per match, as what to change (the lines below would blame "an
                # earlier call", or the decision method that was never the slow one).
                m.make_told = True
                if in_start:
                    log.warning("match %s: %s took %.1f s, while the match's first request "
                                "waited for it, over its limit of %.0f ms: it runs at the "
                                "start of every match, and its time counts against the "
                                "match's first decisions; load big things once, at import",
                                m.match_id, self._start_of(bot), m.start_s,
                                deadline.limit_s * 1000)  # fmt: skip
                else:
                    log.warning("match %s: making the bot took %.1f s (%s), while the "
                                "match's first request waited for it, over its limit of "
                                "%.0f ms: the bot is made anew for every match, and its time "
                                "counts against the match's first decisions; load big "
                                "things once, at import", m.match_id, m.made_s,
                                self._init_of(bot), deadline.limit_s * 1000)  # fmt: skip
            if cached is None and busy and deadline is not None and deadline.left() == 0.0:
                # It waited behind an earlier call of the bot's (one at a time per match)
                # past its deadline: the referee has played its fallback already, and an
                # answer now would be refused as late.
                log.warning("match %s: request %s (deal %d, %s) expired while the bot was "
                            "still %s: not asked (the referee played its fallback)",
                            m.match_id, rid, view.deal_number + 1, view.phase,
                            "in its on_match_start" if in_start
                            else "being made (its __init__)" if ask.behind_make
                            else "busy with an earlier call")  # fmt: skip
                return
            if self._matches.get(m.match_id) is not m:
                # The match ended (or was started again) while the request waited behind an
                # earlier call: nobody waits for its answer.
                log.debug("match %s: request %s not asked: the match is over", m.match_id, rid)
                return
            m.asked_rid = rid
            ahead = None
            try:
                if cached is not None:
                    action, failed = cached, m.answer_failed
                elif self._inline and bot.quick:
                    action, failed = self._decide_inline(
                        m, bot, view, deadline, behind_make=ask.behind_make
                    )
                    if failed is None and out.ahead:
                        ahead = self._choose_ahead(m, bot, view, action, deadline)
                else:
                    action, failed = await self._in_thread(
                        f"act in match {m.match_id}",
                        (lambda: bot.decide(view, deadline))
                        if isinstance(bot, Remote)
                        else (
                            lambda: decide_failed(
                                bot, view, log, deadline=deadline, match_id=m.match_id
                            )
                        ),
                    )
                    self._count(failed, m)
                    if deadline is not None and not m.bank_told:
                        _tell_bank(m, bot, view, deadline, behind_make=ask.behind_make)
            except (SystemExit, KeyboardInterrupt) as e:
                self._bot_left(e)
                return
            if self._matches.get(m.match_id) is not m:
                # It ended (or was started again) while the bot thought: sent, the answer
                # was refused ("you have no seat in a running match"), a line after the end.
                log.debug("match %s: the answer to request %s came after the match was over: "
                          "not sent", m.match_id, rid)  # fmt: skip
                return
            if self._out is not out:
                m.answers, m.answer_failed = {rid: action}, failed
                return  # that stream is gone; the referee asks again on the new one
            if cached is None and _too_late(m, rid, deadline):
                return
            self._send_answer(m, rid, action, out, failed, ahead)

        self._chain(m, answer())
        ask.step = m.tail
        m.waiting = ask

    def _bot_left(self, e: SystemExit | KeyboardInterrupt) -> None:
        """The bot itself left (raised ``SystemExit``: a person typing "quit" in the human
        seat, say): stop cleanly, keeping its exit code, rather than let the exception end
        the event loop with a traceback. A ``KeyboardInterrupt`` is the bot's own here (a
        Ctrl-C is the loop's signal handler's): it leaves with a Ctrl-C's exit code."""
        if isinstance(e, KeyboardInterrupt):
            self.summary.exit_code = 130
            self.stop("the bot left: KeyboardInterrupt (exit code 130)")
            return
        code = e.code
        self.summary.exit_code = 0 if code is None else code if isinstance(code, int) else 1
        left = "the bot left"
        if code is not None and not isinstance(code, int):  # SystemExit("text"): keep it
            self.summary.exit_message = str(code)
            left += f": {code}"
        self.stop(f"{left} (exit code {self.summary.exit_code})")

    def _decide_inline(
        self,
        m: _Match,
        bot: Bot,
        view: PlayerView,
        deadline: Deadline | None,
        *,
        behind_make: bool = False,
    ) -> tuple[Action, str | None]:
        kept = m.failed_ahead
        if kept is not None:
            m.failed_ahead = None
            if kept[0] == view:
                self._count(kept[2], m)
                return kept[1], kept[2]
        t0 = time.perf_counter()
        action, failed = decide_failed(bot, view, log, deadline=deadline, match_id=m.match_id)
        if deadline is not None and not m.bank_told:
            _tell_bank(m, bot, view, deadline, behind_make=behind_make)
        self._slow_on_loop(bot, "a decision", time.perf_counter() - t0)
        self._count(failed, m)
        return action, failed

    def _choose_ahead(
        self, m: _Match, bot: Bot, view: PlayerView, action: Action, deadline: Deadline | None
    ) -> list[Action]:
        """A quick bot's answers to its next decisions, while each follows the one before
        with nothing the seat cannot know in between (``own_next_view``): the bot is asked
        on each such view now, through the same call as any, and its answers go with this
        one (``Decision.ahead``), sparing a round trip each when the referee sees the same
        views. They stop where there is no such decision, or the bot failed it (its
        fallback then answers that request when it comes, the bot not asked it again:
        ``_Match.failed_ahead``) or answered an action not legal there (it is then asked as
        usual, and that answer judged and counted: once). Not for a bot with an
        ``on_action`` hook: the event of its own action comes with the next message, and
        asked ahead it decided before its hook was told, where locally (and asked one
        request at a time) it is told first. Nor once the bot is found slow on the event
        loop."""
        chosen: list[Action] = []
        if m.on_action:
            return chosen
        while len(chosen) < AHEAD_MOST and self._inline:
            nxt = own_next_view(view, action)
            if nxt is None:
                break
            t0 = time.perf_counter()
            ahead, failed = decide_failed(bot, nxt, log, deadline=deadline, match_id=m.match_id)
            self._slow_on_loop(bot, "a decision", time.perf_counter() - t0)
            if failed is not None:
                # Counted and sent once, when its request comes (``_decide_inline``).
                m.failed_ahead = (nxt, ahead, failed)
                break
            if ahead not in nxt.legal_actions:
                break  # (not counted: the request comes, and asks it again)
            self._count(None, m)
            chosen.append(ahead)
            view, action = nxt, ahead
        return chosen

    def _count(self, failed: str | None, m: _Match) -> None:
        m.decided += 1
        if failed is not None:
            self.summary.errors += 1
            m.failed += 1

    def _send_answer(
        self,
        m: _Match,
        rid: str,
        action: Action,
        out: _Outbox,
        failed: str | None = None,
        ahead: list[Action] | None = None,
    ) -> None:
        """Send ``action`` as the answer to request ``rid``; ``failed``: it is the fallback
        of a decision the bot failed, which the referee records (``Decision.failed``);
        ``ahead``: the bot's next decisions, chosen ahead (``Decision.ahead``)."""
        sent = _on_the_wire(action)
        if sent is not action:  # (a new action only when changed)
            # Well typed, but no wire value holds it (``Bid(-5)``; a wrong type is caught
            # earlier, by ``decide``): sent with the number clamped to one that is just as
            # illegal, so that the referee refuses it as illegal (a strike and its
            # fallback), as a local match does, naming the rule.
            log.error("match %s: %s returned %r, whose number no wire field holds: sent as "
                      "%r, which the referee refuses as illegal", m.match_id, self.name,
                      action, sent)  # fmt: skip
        msg = pb.BotMessage()
        decision = msg.decision  # (filled in place: a Decision made and copied in costs 3 times)
        try:
            # (the action too: an Action made and copied in cost a message more per answer)
            _fill_action(decision.action, sent)
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            # Still no action (none foreseen): sent as an action of no kind, which the
            # referee refuses as malformed (a strike, and its fallback).
            self.summary.errors += 1
            log.error("match %s: %s returned %r, which is no action (%s: %s): sent as a "
                      "malformed action; the referee plays its fallback", m.match_id,
                      self.name, action, type(e).__name__, e)  # fmt: skip
            decision.ClearField("action")  # (what was filled before the error: not sent)
            decision.action.SetInParent()
        # A first answer is progress; one sent again from the cache (the request asked
        # again on a new stream) is not: an arena that resets every stream once answered
        # would be asked again at the first step for ever.
        if rid not in m.answers and out is self._out:
            self._progress = True
        m.answers, m.answer_failed = {rid: action}, failed
        self.summary.decisions += 1
        decision.request_id = rid
        decision.match_id = m.match_id
        if failed is not None:  # (a referee before the field skips it: no harm)
            decision.failed = failed
        elif ahead:
            more = decision.ahead
            for a in ahead:  # (engine actions the bot answered: checked by _choose_ahead)
                _fill_action(more.add(), a)
            self.summary.decisions += len(ahead)  # (the referee plays them as answers)
        out.put_nowait(msg)

    def _on_match_ended(self, me: pb.MatchEnded) -> None:
        m = self._matches.pop(me.match_id, None)
        if m is not None or me.match_id in self._unmade:
            over = self._over
            over[me.match_id] = None
            while len(over) > _OVER_KEPT:
                del over[next(iter(over))]
        self._match_over(me, m)
        if m is not None and self._procs is not None:
            # After its last hook, in the match's order: the worker forgets the bot, and
            # has one match fewer in progress.
            self._chain(m, self._release(m))

    @staticmethod
    async def _release(m: _Match) -> None:
        if isinstance(m.bot, Remote):
            m.bot.close()

    def _match_over(self, me: pb.MatchEnded, m: _Match | None) -> None:
        # The end of a match under way is progress; one the bot was told of already is
        # not: the referee sends it again on every stream until the bot's next answer.
        if m is not None or me.match_id in self._unmade:
            self._progress = True
        if me.result.reason == "interrupted":
            # Stopped before its end: no result, no hook; not one of the bot's matches
            # played (a tournament plays it again later, as a new match for the bot).
            held = m is not None or self._unmade.pop(me.match_id, None) is not None
            if not held:
                # Said already (the referee sends an end again on each new stream until the
                # bot answers a later request), or a match this bot never held.
                log.debug("match %s: interrupted, again or never held: ignored", me.match_id)
                return
            if m is not None and m.connection < self.summary.connections:
                # Not resumed since the bot came back: the answer to its Hello's `running`
                # of an arena that knows no end of the match (started again, or a later
                # run of a tournament). "Not finished" alone was wrong for a match that
                # went on without the bot (forfeited) and whose result was stored.
                log.warning(
                    "match %s was interrupted by the arena (not finished, no result), or "
                    "ended while the bot was away: the arena it came back to knows no end "
                    "of it (a tournament keeps the result of one played to its end without "
                    "the bot, and does not play it again)", me.match_id,
                )  # fmt: skip
                return
            log.warning("match %s was interrupted by the arena (not finished, no result)",
                        me.match_id)  # fmt: skip
            return
        if m is None:
            unmade = self._unmade.pop(me.match_id, None)
            if unmade is not None:  # played without the bot: it counts all the same
                why, seat = unmade
                log.info("match %s ended (without the bot: %s)", me.match_id, why)
                # (the referee played the seat on its deadlines: it struck out, most often)
                self.summary.forfeits += seat in me.result.forfeits
                self._count_match()
            return
        try:
            result = match_result_from_pb(me.result, m.ruleset.players)
        except MalformedMessageError as e:
            # Its end counts all the same (--once must exit), but a hook given a result
            # without a score per seat would fail in the bot's own code.
            log.error("match %s: malformed result from the arena (%s): the match ends "
                      "without on_match_end", me.match_id, e)  # fmt: skip
            self._count_match(m)
            return
        if m.seat in me.result.forfeits:
            self.summary.forfeits += 1
            # Why, as far as this process knows (the end does not say): an author read
            # "forfeited" after a freeze or a restart and could only guess.
            if m.struck_out:
                why = f": struck out ({m.struck_out}, said above)"
            elif m.forfeit_told or m.connection < self.summary.connections:
                why = (
                    " while the bot was away (its connection lost, or its process "
                    "stopped): the arena forfeits a seat away longer than its grace for "
                    "coming back, or whose decisions time out meanwhile"
                )
            else:
                why = ""
            log.warning("match %s: this bot's seat %d forfeited (it was played by the "
                        "referee to the end and placed last)%s", me.match_id, m.seat,
                        why)  # fmt: skip
        view = m.view
        if me.HasField("view"):
            try:
                _check_view_size(me.view, "match_ended.view")
                view = view_from_pb(me.view, m.ruleset)
            except MalformedMessageError as e:
                # The match has ended all the same (it was already dropped): raising here
                # would lose its end (no hook, not counted: --once would never exit).
                log.error("match %s: malformed final view from the arena (%s): the match "
                          "ends with the last view the bot was given", me.match_id, e)  # fmt: skip
        scores, places = list(result.scores), list(result.places)
        # The bot's own place and score, at the line's end: a bot author reading the log of
        # a tournament had to find the match's "started: seat 2" line, among those of the
        # matches played at once, to know which of "places [1, 3, 2]" was its own.
        mine = ""
        if 0 <= m.seat < min(len(scores), len(places)):
            mine = f": this bot (seat {m.seat}) {ordinal(places[m.seat])} with {scores[m.seat]}"
        # Said in the match's order, after the hooks queued before it (the last deal's
        # on_deal_end) and before on_match_end: said at once, it came before the lines
        # those hooks log, as if they ran after the match.
        self._say_in_order(m, lambda: log.info("match %s ended: scores %s, places %s%s",
                                               m.match_id, scores, places, mine))  # fmt: skip
        said = m.tail
        if said is not None and not said.done():
            self._ends_unsaid.add(said)
            said.add_done_callback(self._ends_unsaid.discard)
        view = hook_view(view)  # a last view of requests had legal actions: not for a hook
        if m.bot is None or _has(m.bot, "on_match_end"):
            self._schedule(m, "on_match_end", view, result)
        # After on_match_end, so that its failure counts too (said before it, a match whose
        # only failure was that hook said nothing).
        self._say_in_order(m, lambda: _say_failed(m))
        # Counted now, not after the hook (a bot call that never returns held the count at
        # 0 for ever); but a last match stops the runner only after its hook has run, in
        # the match's order: stopping at once cut a slow hook off, or cancelled it unrun.
        self._count_match(m)

    def _count_match(self, m: _Match | None = None) -> None:
        """One more match played; at ``max_matches`` the runner stops, after the steps
        already queued for match ``m`` (its ``on_match_end``)."""
        self.summary.matches += 1
        if self.max_matches is None or self.summary.matches < self.max_matches:
            return
        reason = f"played {self.summary.matches} match(es)"
        if m is None:
            self.stop(reason)
            return

        async def stop() -> None:
            self.stop(reason)

        self._chain(m, stop())

        def backstop() -> None:  # a call of the bot's that never returns holds the chain
            if not self._stopping.is_set():
                log.warning("match %s: the bot's calls for it are still running after "
                            "%g s: stopping without them", m.match_id, _LAST_STEPS_S)  # fmt: skip
                self.stop(reason)

        asyncio.get_running_loop().call_later(_LAST_STEPS_S, backstop)

    # ------------------------------------------------------------------ per-match order
    def _say_in_order(self, m: _Match, say: Callable[[], None]) -> None:
        """``say()`` in the match's order (after the steps queued for ``m``); at once when a
        stop cancels it first: a line is never lost to a bot call that does not return."""
        said = False

        async def job() -> None:
            nonlocal said
            said = True
            say()

        self._chain(m, job())
        tail = m.tail
        if tail is not None:

            def unsaid(_: object) -> None:
                if not said:
                    say()

            tail.add_done_callback(unsaid)

    def _say_after_ends(self, say: Callable[[], None]) -> None:
        """``say()`` (of the stream's end) after the "match ... ended" lines of the ends
        it carried: they wait in their match's order for the bot's hooks queued before them
        (the last deal's on_deal_end), and a close said at once came first, as if those
        matches ended after it. Not waited for beyond the run's end: a step of the run
        (``_drain`` waits for it with the rest); at once when the stop cancels it."""
        ends = set(self._ends_unsaid)
        if not ends:
            say()
            return
        said = False

        async def job() -> None:
            nonlocal said
            await asyncio.wait(ends)
            said = True
            say()

        task = asyncio.get_running_loop().create_task(job())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

        def unsaid(_: object) -> None:
            if said:
                return
            # Cancelled by the stop's drain, which cancels the ends' steps too, each in the
            # set's order: their lines are said by their own callbacks as they finish (maybe
            # after this one). Said after those, then: once each end has finished, and its
            # callbacks, run in the order they were added, have run (call_soon: after
            # those of one already finished, scheduled before).
            left = {t for t in ends if not t.done()}
            if not left:
                asyncio.get_running_loop().call_soon(say)
                return

            def one_done(t: object) -> None:
                left.discard(t)
                if not left:
                    say()

            for t in left:
                t.add_done_callback(one_done)

        task.add_done_callback(unsaid)

    def _schedule(self, m: _Match, what: str, *args: object) -> None:
        """Run hook ``what`` (``bot.what(*args)``) in the match's order, if the bot was made
        and overrides it."""
        bot = m.bot
        if (
            self._inline
            and bot is not None
            and bot.quick
            and what != "on_match_end"
            and (m.tail is None or m.tail.done())
        ):
            # A quick bot, nothing of the match in flight: called here, as its decisions
            # are. (A step task and a worker thread's round trip for each event cost about
            # 0.1 ms of CPU each, several per decision, and the decision after them waited
            # behind them in the chain, losing its own inline answer.)
            if _has(bot, what):
                self._hook_inline(m, bot, what, args)
            return

        if what != "on_match_end" and m.hooks_waiting >= _HOOKS_WAITING_MOST:
            if not m.hooks_dropped:
                log.warning("match %s: %d hook calls already wait for the bot: %s and any "
                            "more while they wait are not called (a bot stuck in a call, or "
                            "an arena sending events without end; said once per match)",
                            m.match_id, m.hooks_waiting, what)  # fmt: skip
            m.hooks_dropped += 1
            return
        m.hooks_waiting += 1

        async def job() -> None:
            m.hooks_waiting -= 1
            bot = m.bot
            if bot is not None and _has(bot, what):
                await self._hook(m, bot, what, *args)

        self._chain(m, job())

    def _slow_on_loop(self, bot: Bot, what: str, took: float) -> None:
        """A quick bot's call (``what``: "a decision", "its on_action") took ``took`` s on
        the event loop: past ``_SLOW_S`` for the second time within ``_SLOW_WITHIN`` calls,
        it is not quick after all, and is asked in the worker thread from now on."""
        self._on_loop = n = self._on_loop + 1
        if took <= _SLOW_S:
            return
        last, self._slow_at = self._slow_at, n
        if last is None or n - last >= _SLOW_WITHIN:  # (the 1st and the 101st: 101 calls)
            log.debug("%s: %s took %.0f ms on the event loop (once: a busy machine's pause, "
                      "or the bot's; a second time within %d calls sends it to a worker "
                      "thread)", bot.name, what, took * 1000, _SLOW_WITHIN)  # fmt: skip
            return
        self._inline = False
        log.warning(
            "%s says it is quick, but %s took %.0f ms on the event loop (every match of "
            "the bot waited), the second of its last %d calls there over %.0f ms: it is "
            "asked in a worker thread from now on",
            bot.name, what, took * 1000, n - last + 1, _SLOW_S * 1000,
        )  # fmt: skip

    def _hook_inline(self, m: _Match, bot: Bot, what: str, args: tuple[object, ...]) -> None:
        t0 = time.perf_counter()
        try:
            failed = _run_hook(bot, what, args, m.match_id)
        except (SystemExit, KeyboardInterrupt) as e:  # it leaves from a hook as from act()
            self._bot_left(e)
            return
        self.summary.errors += failed
        m.hooks_failed += failed
        self._slow_on_loop(bot, f"its {what}", time.perf_counter() - t0)

    async def _hook(self, m: _Match, bot: Bot, what: str, *args: object) -> None:
        try:
            failed = await self._in_thread(
                f"{what} in match {m.match_id}",
                (lambda: bot.hook(what, args))
                if isinstance(bot, Remote)
                else (lambda: _run_hook(bot, what, args, m.match_id)),
            )
        except (SystemExit, KeyboardInterrupt) as e:  # it leaves from a hook as from act()
            self._bot_left(e)
        else:
            self.summary.errors += failed
            m.hooks_failed += failed

    def _forget_call(self, fut: Future[Any]) -> None:
        self._calls.pop(fut, None)

    async def _in_thread(self, what: str, fn: Callable[[], _T]) -> _T:
        """``fn()`` (a call of the bot's, ``what``) in the runner's worker threads, not
        asyncio's default executor: that one has few threads (see _WORKERS), and asyncio.run
        waits for its calls at the end, so a call that never returns would hang the bot's
        exit."""
        pool = self._pool
        if pool is None:
            pool = self._pool = _Workers(_WORKERS)

        def call() -> tuple[_T, None] | tuple[None, BaseException]:
            try:
                return fn(), None
            except BaseException as e:  # (raised below, in this coroutine)
                return None, e

        fut = pool.submit(call)
        _RUNNING[fut] = what
        self._calls[fut] = what
        fut.add_done_callback(_forget)
        fut.add_done_callback(self._forget_call)
        outcome = await asyncio.wrap_future(fut)
        if outcome[1] is not None:  # (indexed, not unpacked: so mypy pairs the two)
            # Raised here, not thrown into the waiting coroutines by asyncio: a GeneratorExit
            # thrown so closes them (PEP 380): the caller's handler would get an empty one of
            # Python's, and the bot's own would escape the match's step ("never retrieved").
            raise outcome[1]
        return outcome[0]

    def _chain(self, m: _Match, job: Awaitable[None]) -> None:
        prev = m.tail

        async def step() -> None:
            if prev is not None and not prev.done():
                # Not ``await prev``: suppressing its CancelledError would also swallow this
                # step's own cancellation (at a stop), which would then go on to call the bot.
                await asyncio.wait((prev,))
            try:
                await job
            except Exception:  # a bug of the runner's: said at once, never left unretrieved
                log.exception("match %s: a step of the match failed", m.match_id)

        task = asyncio.get_running_loop().create_task(step())
        m.tail = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if inspect.iscoroutine(job):
            # A step cancelled before it awaited its job (at a stop) never will: closed, or
            # Python warns "coroutine ... was never awaited" (a no-op once it has run).
            coro = job

            def close(_: asyncio.Task[None]) -> None:
                coro.close()

            task.add_done_callback(close)

    async def _drain(self, timeout: float = 5.0) -> None:
        """Let the matches' calls in flight end (an answer, an on_match_end), for up to
        ``timeout`` seconds, or until a second signal; then cancel what is left (a bot call
        that does not return goes on in its thread: it is not waited for)."""
        tasks = set(self._tasks)
        if not tasks:
            return
        everything = asyncio.ensure_future(asyncio.wait(tasks))
        hurry = asyncio.ensure_future(self._hurry.wait())
        await asyncio.wait({everything, hurry}, timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        everything.cancel()
        hurry.cancel()
        for t in tasks:
            if not t.done():
                t.cancel()


def _say_failed(m: _Match) -> None:
    """What the bot failed in match ``m``, said at its end (after its last hook): a decision
    that raised (or answered no action) sent the fallback, a legal answer to the referee,
    so no strike (the record has a ``bot_error`` incident of each, which `arena replay` and
    the bot's page show); said once for the match, where its author looks, as `arena-bot
    try` says it (:func:`sdk.local.failures_said`)."""
    said = failures_said(m.failed, m.decided, m.hooks_failed)
    if said is not None:
        log.warning("match %s: %s", m.match_id, said)


def _make_here(factory: BotFactory, name: str, match_id: str) -> Bot | None:
    """A bot for ``match_id`` from ``factory``; ``None`` (logged) if making it raised, the
    bot's own bug (its ``SystemExit`` and ``KeyboardInterrupt`` go on: it leaves)."""
    try:
        return make_bot(factory)
    except BaseException as e:
        if stops_the_bot(e):
            raise
        log.error(
            "match %s: cannot make the bot %s (%s: %s); the match goes on without it: its "
            "requests are not answered (the referee's deadline plays the seat)",
            match_id, name, type(e).__name__, e, exc_info=bot_exc_info(e),
        )  # fmt: skip
        return None


def _run_hook(bot: Bot, what: str, args: tuple[object, ...], match_id: str) -> bool:
    """Hook ``what`` of ``bot``, given ``args``; whether it failed (raised, or is ``async
    def``: logged). The bot's ``SystemExit`` and ``KeyboardInterrupt`` go on: it leaves.
    (Caught here, in the call's thread: a ``CancelledError`` of the bot's own is its bug,
    never taken for the runner's cancellation.)"""
    tell(bot, "deadline", None)  # hooks are not timed: not the last decision's, spent one
    forked = fork_count()
    try:
        failed = (
            hook_result(bot, what, getattr(bot, what)(*args), log, f"match {match_id}: ")
            is not None
        )
        if fork_count() != forked:  # (named only then: every hook's path)
            not_a_fork(bot, _defined(type(bot), what), f"match {match_id}: ", log)
        return failed
    except BaseException as e:
        if fork_count() != forked:
            not_a_fork(bot, _defined(type(bot), what), f"match {match_id}: ", log, e)
        if stops_the_bot(e):
            log_leaving(e, f"{type(bot).__name__}.{what}()", log, f"match {match_id}: ")
            raise
        # The class, as the lines for a decision name it (``name`` may be anyone's).
        log.error("%s raised in %s (match %s)", type(bot).__name__, what, match_id,
                  exc_info=bot_exc_info(e))  # fmt: skip
        return True


def _has(bot: Bot, hook: str) -> bool:
    """Whether ``bot`` has its own ``hook`` (one in a worker: as its worker said)."""
    return hook in bot.hooks if isinstance(bot, Remote) else overrides(bot, hook)


def _what(bot: Bot, view: PlayerView) -> str:
    """The bot's method that decides ``view``, with its class: "Mine.play() (mine.py:12)"."""
    if isinstance(bot, Remote):
        return bot.methods.get(view.phase, bot.name)
    return f"{type(bot).__name__}.{_method(bot, view)}"


def _check_request_view(view: PlayerView) -> None:
    """Raise :class:`MalformedMessageError` if a request's ``view`` (its seat and legal
    actions checked already) breaks what ``PlayerView`` promises a bot: ``legal_actions``
    only when ``to_act`` is the seat, each of a kind its phase has (no play in the
    auction), none twice, a bid only above the standing one, a play or give only of a
    card in the hand, a marriage declared only with a lead of it, a give only to another
    seat in the deal, no card played twice, or held and played, and each completed trick
    won by a seat that played in it."""
    if view.to_act != view.seat:
        raise MalformedMessageError(
            "view.to_act", f"{view.to_act} to act, yet seat {view.seat} is asked to decide"
        )
    if view.tricks or view.trick:
        played = [c for t in view.tricks for _, c in t.cards]
        played += [c for _, c in view.trick]
        cards = set(played)
        if len(cards) != len(played):
            twice = next(c for i, c in enumerate(played) if c in played[:i])
            raise MalformedMessageError("view.tricks", f"{twice} played twice")
        held = cards.intersection(view.hand)
        if held:
            raise MalformedMessageError("view.hand", f"{min(held)} is held, and was played")
        for i, t in enumerate(view.tricks):
            # (the SDK's own "ahead" (engine.own_next_view) looks for the winner's card: a
            # trick won by a seat that played none in it failed the request's step with a
            # StopIteration, and the bot's chosen answer was never sent)
            w = t.winner
            for s, _ in t.cards:
                if s == w:
                    break
            else:
                raise MalformedMessageError(
                    "view.tricks", f"trick {i + 1} won by seat {w}, which played no card in it"
                )
    kinds = PHASE_ACTIONS[view.phase]  # (the engine's: what a seat may answer in a phase)
    plays = issubclass(Play, kinds)  # (isinstance of each play, once for all of them)
    hand = view.hand
    legal = view.legal_actions
    for a in legal:
        if type(a) is Play and plays:  # (most requests: the checks that a play can fail)
            if a.declare and not _may_declare(view, a.card):
                raise MalformedMessageError("view.legal_actions", f"{a} declares no marriage")
            if a.card not in hand:
                raise MalformedMessageError(
                    "view.legal_actions", f"{a} is of a card that the hand does not hold"
                )
            continue
        if not isinstance(a, kinds):  # a bid's method given a play: it would answer none
            raise MalformedMessageError(
                "view.legal_actions", f"{a} is no action of the {view.phase} phase"
            )
        if isinstance(a, Bid) and view.bid is not None and a.amount <= view.bid:
            raise MalformedMessageError(
                "view.legal_actions", f"{a} is not above the standing bid, {view.bid}"
            )
        if isinstance(a, Give) and (a.to == view.seat or a.to not in view.active_seats):
            seats = ", ".join(map(str, view.active_seats))
            to = "the giver itself" if a.to == view.seat else f"no seat of the deal ({seats})"
            raise MalformedMessageError("view.legal_actions", f"{a} is to {to}")
        if isinstance(a, Play) and a.declare and not _may_declare(view, a.card):
            raise MalformedMessageError("view.legal_actions", f"{a} declares no marriage")
        if isinstance(a, Play | Give) and a.card not in hand:
            raise MalformedMessageError(
                "view.legal_actions", f"{a} is of a card that the hand does not hold"
            )
    # (a bot weighing each option by its count would err) Plays compared by their fields,
    # as their ``__eq__`` does, without a Python ``__hash__`` call each; the one listed
    # twice is looked for only when there is one.
    if len(legal) > 1 and len(
        {(a.card, a.declare) if type(a) is Play else a for a in legal}
    ) != len(legal):
        seen: set[Action] = set()
        for a in legal:
            if a in seen:
                raise MalformedMessageError("view.legal_actions", f"{a} twice")
            seen.add(a)


def _may_declare(view: PlayerView, card: Card) -> bool:
    """Whether leading ``card`` could declare a marriage in ``view``: on a lead only, a
    king or queen whose partner is in the hand too, or an ace with all four in the hand
    (the ace marriage); whether the rules allow it now is the referee's to say."""
    if view.trick:
        return False
    if card.rank in (Rank.QUEEN, Rank.KING):
        partner = Rank.KING if card.rank is Rank.QUEEN else Rank.QUEEN
        return Card.of(partner, card.suit) in view.hand
    return card.rank is Rank.ACE and all(Card.of(Rank.ACE, s) in view.hand for s in Suit)


def _contradiction(before: PlayerView, now: PlayerView) -> str | None:
    """How ``now``, a view of the deal of ``before`` (an earlier one of the match), says
    otherwise than it did (``None``: it does not): a completed trick is never undone, and
    once the play has begun no card reaches a hand."""
    n = len(before.tricks)
    if now.tricks[:n] != before.tricks:
        return f"its {len(now.tricks)} completed trick(s) are not the {n} shown before, and more"
    if before.phase == Phase.PLAYING:
        new = set(now.hand).difference(before.hand)
        if new:
            cards = " ".join(map(str, sorted(new)))
            return f"the hand holds {cards}, which it did not hold when the play had begun"
    return None


def _newer_actions(msg: pb.PlayerView) -> tuple[pb.PlayerView, int] | None:
    """``msg`` without its legal actions of a kind this protocol version does not know (no
    kind set, but fields: a newer protocol's kind), and how many were left out; ``None`` if
    there are none."""
    unknown = [
        i for i, a in enumerate(msg.legal_actions) if a.WhichOneof("kind") is None and a.ByteSize()
    ]
    if not unknown:
        return None
    out = pb.PlayerView()
    out.CopyFrom(msg)
    for i in reversed(unknown):
        del out.legal_actions[i]
    return out, len(unknown)


_UINT32_MAX = 2**32 - 1


def _on_the_wire(action: Action) -> Action:
    """``action`` with a number outside the wire's unsigned 32 bits replaced by one that is
    illegal for the same reason: an amount below 0 by 0 (every bid and contract is at least
    100), above by 2^32 - 1 (above every cap), a seat by 2^32 - 1 (no such seat; 0 could be
    a legal one).

    >>> from engine import parse_card
    >>> _on_the_wire(Bid(-5)), _on_the_wire(Give(parse_card("9S"), -1))
    (Bid(amount=0), Give(card=<Card.S9: 0>, to=4294967295))
    """
    if type(action) is Play:  # (most answers: no number to clamp)
        return action
    if isinstance(action, Bid | Contract) and isinstance(action.amount, int):
        amount = action.amount
        return (
            action if 0 <= amount <= _UINT32_MAX else type(action)(min(max(amount, 0), _UINT32_MAX))
        )
    if (
        isinstance(action, Give)
        and isinstance(action.to, int)
        and not 0 <= action.to <= _UINT32_MAX
    ):
        return Give(action.card, _UINT32_MAX)
    return action


def _factory_name(bot: BotFactory) -> str:
    name = getattr(bot, "name", "")
    if isinstance(name, str) and name:
        return name
    return getattr(bot, "__name__", type(bot).__name__)


def _spec_of(bot: BotFactory) -> str:
    """The ``spec=`` that would name ``bot``, a class of a file, for the error that asks for
    it (``spec='mybot.py:Lowest'``): its file as seen from the current directory, where the
    workers look for it (``bots/mybot.py:Lowest`` run from the folder above; the file's
    name alone was given, which no worker found there). A generic example for what is no
    such class, or one that a spec cannot name (one made inside a function or a class)."""
    generic = "spec='mybot.py:MyBot', say"
    if not isinstance(bot, type) or bot.__qualname__ != bot.__name__:
        return generic
    try:
        path = Path(inspect.getfile(bot))
    except (TypeError, OSError):  # (a class made at run time, or of the REPL: no file)
        return generic
    if path.suffix != ".py":
        return generic
    with contextlib.suppress(ValueError, OSError):  # (another drive; no current directory)
        path = Path(os.path.relpath(path))
    return f"spec={f'{path.as_posix()}:{bot.__name__}'!r}"


def _not_while_loading(what: str) -> None:
    """Refuse to connect from a bot file ``arena-bot`` is importing: a file that ends with
    ``sdk.run(MyBot, ...)`` (a script's own run, outside ``if __name__ == "__main__":``)
    made ``arena-bot try`` try to reach that arena for --retry-for, ten minutes, before
    playing a local match, and ``arena-bot run`` play it under the file's own token."""
    from sdk import loader

    if loader.importing:
        raise RuntimeError(
            f"{what} was called while arena-bot imported the bot's file to load its class: "
            'a script\'s own run belongs under `if __name__ == "__main__":`'
        )


async def run_async(
    bot: BotFactory,
    arena: str = "localhost:50051",
    token: str = "",
    *,
    tls: bool = False,
    ca: str | Path | None = None,
    matches: int | None = None,
    name: str | None = None,
    retry_for: float | None = 600.0,
    workers: int | None = None,
    spec: str | None = None,
) -> RunSummary:
    """:func:`run` inside a running event loop (no signal handlers installed): the same
    options, checked the same way (it took any keyword, and a misspelt one was a
    ``TypeError`` of ``BotRunner``; a missing token was sent to the arena)."""
    _not_while_loading("sdk.client.run_async()")
    _check_token(token)
    runner = BotRunner(bot, arena, token, tls=tls, ca=ca, matches=matches, name=name,
                       retry_for=retry_for, workers=workers, spec=spec)  # fmt: skip
    return await runner.run()


def _check_token(token: str) -> None:
    """Refuse a token that is missing, or that gRPC could not even send (it would say
    "Invalid metadata"), before connecting."""
    if not token:
        raise ArenaAuthError("no token: pass token=... (arena-bot: --token or ARENA_TOKEN)")
    problem = token_problem(token)
    if problem is not None:
        raise ArenaAuthError(f"{problem}: check --token / ARENA_TOKEN")


def run(
    bot: BotFactory,
    arena: str = "localhost:50051",
    token: str = "",
    *,
    tls: bool = False,
    ca: str | Path | None = None,
    matches: int | None = None,
    name: str | None = None,
    retry_for: float | None = 600.0,
    workers: int | None = None,
    spec: str | None = None,
) -> RunSummary:
    """Play ``bot`` (a class or factory) in the arena at ``arena`` until stopped.

    Blocks; SIGINT/SIGTERM stop it cleanly. ``matches``: return after that many matches.
    ``workers``: the bot's calls run in that many worker processes (see
    :mod:`sdk.workers`), each loading the bot from ``spec`` (``"file.py:Class"``, a name
    ``arena-bot run`` takes), which ``bot`` must be the class of.
    Raises :class:`ArenaAuthError` (the token is refused), :class:`ArenaTLSError` (the TLS
    handshake failed) or :class:`ArenaError`, the base of both (see :meth:`BotRunner.run`);
    all three are in ``sdk`` too.
    """
    _not_while_loading("sdk.run()")
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs here: the usual case
        pass
    else:  # (asyncio.run's own "cannot be called from a running event loop" did not say
        # what to call instead, and Python warned of a coroutine never awaited)
        raise RuntimeError(
            "sdk.run blocks until the bot is done, and an event loop is running in this "
            "thread (a notebook, an async program): await sdk.client.run_async(bot, arena, "
            "token, ...) there instead"
        )
    _check_token(token)

    async def main() -> RunSummary:
        runner = BotRunner(bot, arena, token, tls=tls, ca=ca, matches=matches, name=name,
                           retry_for=retry_for, workers=workers, spec=spec)  # fmt: skip
        loop = asyncio.get_running_loop()
        # Left in place to the end: asyncio.run's teardown (the tasks cancelled, the loop
        # closed, which removes them) comes after the runner's stop, and a second Ctrl-C or
        # a supervisor's SIGTERM there killed the bot by the signal (exit 143, or 130 for a
        # stop that had gone well).
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, runner._signalled, sig.name)
        return await runner.run()

    return asyncio.run(main())
