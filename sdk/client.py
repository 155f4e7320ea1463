"""The remote runner: connect a bot to an arena and play every match it is seated in.

>>> import sdk, bots                                     # doctest: +SKIP
>>> sdk.run(bots.load("heuristic"), arena="localhost:50051", token="secret")  # doctest: +SKIP

One gRPC stream carries all of the bot's matches; a fresh bot instance is made per match
(from the class or factory given) and its calls are serialized per match, each ``act``
running in a worker thread (``asyncio.to_thread``) so a slow bot never stalls the stream
or the other matches (a bot that says it is ``quick`` is called on the event loop).

Connection handling: the first message is ``Hello``; the token travels in the call
metadata (``authorization: Bearer <token>``). A lost connection (``UNAVAILABLE``), or a
stream of this token still saying Hello (``ALREADY_EXISTS``), is retried with exponential
back-off and jitter; the referee resumes the bot's seats and asks again for a pending
decision (a new stream takes over from an old one the arena still holds). A stream refused
for reconnecting too often (``RESOURCE_EXHAUSTED`` with ``retry-after-ms``) is tried again
after the time the arena names. ``UNAUTHENTICATED``
is final (:class:`ArenaAuthError`), and so are ``ABORTED`` (another stream with the same
token took this one's place) and a failed TLS handshake (:class:`ArenaTLSError`: the
certificate, or TLS itself, is wrong, which waiting does not mend). The runner
stops cleanly when asked (SIGINT/SIGTERM under :func:`run`, or :meth:`BotRunner.stop`),
after ``matches`` matches, or when the referee ends the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from arena.protocol import (
    PROTOCOL_VERSION,
    RETRY_AFTER_MS,
    MalformedMessageError,
    action_to_pb,
    ruleset_from_pb,
    token_problem,
    view_from_pb,
)
from arena.protocol import deal_result_from_pb as _deal_result_from_pb
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import Action, GameResult, PlayerView, Ruleset
from sdk.bot import Bot
from sdk.local import BotFactory, decide, hook_view, make_bot

__all__ = [
    "ArenaAuthError",
    "ArenaError",
    "ArenaTLSError",
    "BotRunner",
    "RunSummary",
    "run",
    "run_async",
]

log = logging.getLogger("sdk.client")

CLIENT = "thousand-arena-sdk/0.1.0"
_RETRY_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ALREADY_EXISTS)
#: How often a stream that ends in INTERNAL before the Welcome is tried again in a row.
_INTERNAL_RETRIES = 3

#: A ``quick`` bot (see :class:`sdk.Bot`) is asked on the event loop, without a thread
#: hop; one such call over ``_SLOW_S`` proves it is not quick: it is then asked in the
#: worker thread for the rest of the run (and a warning says so).
_SLOW_S = 0.005


class _Outbox:
    """The messages to the arena, in order, written by whoever is free first.

    ``put_nowait`` queues a message (``None``: finish writing). A writer task waits for
    work; the reading loop flushes directly after handling a message (:meth:`flush`), so a
    quick answer is written without a hop to the writer task. Only one writer at a time
    (``busy``), always from the head of the queue: the order is kept. With ``batch`` (the
    arena's Welcome lists the feature), decisions queued together go out as one
    ``DecisionBatch``: the answers to a ``Batch`` of requests cost one gRPC message.
    """

    __slots__ = ("_buf", "_waiter", "batch", "busy", "closed", "held")

    def __init__(self) -> None:
        self._buf: deque[pb.BotMessage | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.busy = False
        self.closed = False
        #: While set, ``put_nowait`` does not wake the writer task (the reader flushes).
        self.held = False
        self.batch = False

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
                if self.batch and _is_decision(msg) and buf and _is_decision(buf[0]):
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


def _is_decision(msg: pb.BotMessage | None) -> bool:
    return msg is not None and msg.WhichOneof("kind") == "decision"


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


def _closed(details: str) -> bool:
    low = details.lower()
    return any(w in low for w in _CLOSED_WORDS)


def _tls_failure(details: str) -> bool:
    low = details.lower()
    return any(w in low for w in _TLS_FAILURE_WORDS)


def _tls_error(details: str, arena: str, ca: Path | None) -> ArenaTLSError:
    """A failed handshake (gRPC's ``details``) as gRPC's reason and the likely mistake."""
    reason = (details.partition("last error: ")[2] or details).removesuffix(": OK")
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
    rejected: int = 0
    connections: int = 0
    reason: str = ""
    #: Non-zero when the bot itself left (raised ``SystemExit``): its exit code.
    exit_code: int = 0


@dataclass
class _Match:
    match_id: str
    seat: int
    ruleset: Ruleset
    bot: Bot | None  # None while it is being made (or if it could not be)
    view: PlayerView
    tail: asyncio.Task[None] | None = None
    answers: dict[str, Action] = field(default_factory=dict)


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
    ) -> None:
        self.factory = bot
        self.arena = arena
        self.token = token
        self.tls = tls or ca is not None
        self.ca = Path(ca) if ca is not None else None
        self.max_matches = matches
        self.name = name or _factory_name(bot)
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.retry_for = retry_for
        self.summary = RunSummary()
        self._matches: dict[str, _Match] = {}
        #: Matches whose bot could not be made (the factory raised): played without it.
        self._unmade: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._out: _Outbox | None = None
        #: Whether quick bots may still be asked inline (see _SLOW_S).
        self._inline = True
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

    async def run(self) -> RunSummary:
        """Connect, play, reconnect as needed; return when stopped or done.

        Raises :class:`ArenaAuthError` on a refused token and :class:`ArenaError` when the
        arena refuses the stream otherwise, or stays unreachable for ``retry_for`` seconds.
        """
        attempt = 0
        failing_since: float | None = None
        internal_left = _INTERNAL_RETRIES
        reached = False  # a Welcome ever came: the address and the transport are right
        hinted = False  # the plaintext-against-TLS hint was given
        while not self._stopping.is_set():
            welcomed = False
            try:
                welcomed = await self._session()
                if not self._stopping.is_set():
                    self.summary.reason = "the arena closed the stream"
                    log.info("the arena closed the stream")
                break
            except grpc.aio.AioRpcError as e:
                code, details = e.code(), e.details() or ""
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
                retry_after = _retry_after_s(e)
                if code == grpc.StatusCode.INTERNAL and not welcomed and internal_left > 0:
                    # A stream the arena refused at once (a wrong token, say) can end in
                    # INTERNAL from our own gRPC core when its status overtakes our Hello:
                    # asking again gets the real status.
                    internal_left -= 1
                elif code == grpc.StatusCode.ABORTED:
                    raise ArenaError(
                        f"the arena at {self.arena} took this bot's seats over to another "
                        f"connection with the same token ({details}): is a second copy of "
                        "the bot running with this token?"
                    ) from None
                elif code not in _RETRY_CODES and retry_after is None:
                    raise ArenaError(
                        f"the arena at {self.arena} ended the stream: {code.name}: {details}"
                    ) from None
                if welcomed:
                    attempt, failing_since, internal_left = 0, None, _INTERNAL_RETRIES
                now = time.monotonic()
                failing_since = failing_since or now
                if self.retry_for is not None and now - failing_since > self.retry_for:
                    raise ArenaError(
                        f"the arena at {self.arena} has been unreachable for "
                        f"{self.retry_for:.0f}s: {code.name}: {details}"
                        + (_PLAINTEXT_HINT if hinted and not reached else "")
                    ) from None
                delay = min(self.max_backoff, self.initial_backoff * 2**attempt)
                delay *= self._rng.uniform(0.5, 1.0)
                if retry_after is not None:  # the arena says when it lets the bot in again
                    delay = retry_after * self._rng.uniform(1.0, 1.2)
                attempt += 1
                hint = ""
                if not (self.tls or reached or hinted) and _closed(details):
                    hinted, hint = True, _PLAINTEXT_HINT
                log.warning("%s (%s)%s; reconnecting in %.1fs", code.name, details, hint, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
        await self._drain()
        return self.summary

    # ------------------------------------------------------------------ one stream
    _welcomed = False
    _call: grpc.aio.StreamStreamCall | None = None

    def _channel(self) -> grpc.aio.Channel:
        options = [
            # A connection that died silently (a partition, a lost FIN) is noticed within
            # about 15 s, and the bot reconnects: the arena lets the newest stream of a
            # token take over from the dead one.
            ("grpc.keepalive_time_ms", 10_000),
            ("grpc.keepalive_timeout_ms", 5_000),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.enable_retries", 0),
            # Views carry every earlier deal's result: a very long match outgrows 4 MiB.
            ("grpc.max_receive_message_length", 64 << 20),
        ]
        if self.tls:
            root = self.ca.read_bytes() if self.ca is not None else None
            creds = grpc.ssl_channel_credentials(root_certificates=root)
            return grpc.aio.secure_channel(self.arena, creds, options=options)
        return grpc.aio.insecure_channel(self.arena, options=options)

    async def _session(self) -> bool:
        """One stream, until it ends normally (returns) or fails (raises AioRpcError)."""
        self._welcomed = False
        out = _Outbox()
        out.put_nowait(
            pb.BotMessage(
                hello=pb.Hello(
                    bot_name=self.name,
                    protocol_version=PROTOCOL_VERSION,
                    client=CLIENT,
                    features=["batch"],
                    matches=self._matches_to_start(),
                )
            )
        )
        if self._stopping.is_set():
            return False

        self._out = out
        writer: asyncio.Task[None] | None = None
        try:
            async with self._channel() as channel:
                stub = pb_grpc.ArenaStub(channel)
                call = stub.Play(metadata=(("authorization", f"Bearer {self.token}"),))
                self._call = call

                async def write_loop() -> None:
                    with contextlib.suppress(Exception):  # the reader sees the call fail
                        while not out.closed:
                            await out.wait()
                            await out.flush(call)

                writer = asyncio.get_running_loop().create_task(write_loop())
                self.summary.connections += 1
                try:
                    while True:
                        msg = await call.read()
                        if msg is grpc.aio.EOF:
                            break
                        out.held = True
                        try:
                            self._on_message(msg, out)
                        except MalformedMessageError as e:
                            log.error("malformed message from the arena, ignored: %s", e)
                        finally:
                            out.held = False
                        if out and not out.busy:  # else the one writing takes it too
                            with contextlib.suppress(grpc.aio.UsageError):
                                await out.flush(call)
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
    def _on_message(self, msg: pb.ServerMessage, out: _Outbox) -> None:
        for ev in msg.events:
            self._on_event(ev)
        kind = msg.WhichOneof("kind")
        if kind == "batch":
            for inner in msg.batch.messages:  # each on its own: one bad one spoils no other
                try:
                    if inner.WhichOneof("kind") == "batch":
                        raise MalformedMessageError("batch", "a Batch inside a Batch")
                    self._on_message(inner, out)
                except MalformedMessageError as e:
                    log.error("malformed message from the arena, ignored: %s", e)
        elif kind == "welcome":
            self._welcomed = True
            w = msg.welcome
            out.batch = "batch" in w.features
            log.info("connected to %s as %r (server %s)", self.arena, w.bot_name,
                     w.server_version)  # fmt: skip
        elif kind == "match_started":
            self._on_match_started(msg.match_started)
        elif kind == "decision_request":
            self._on_request(msg.decision_request, out)
        elif kind == "decision_rejected":
            r = msg.decision_rejected
            self.summary.rejected += 1
            incident = pb.Incident.Name(r.incident).removeprefix("INCIDENT_").lower()
            # A wrong request (late, repeated, unknown) costs no strike: say so.
            strike = (
                "no strike"
                if r.incident == pb.INCIDENT_WRONG_REQUEST
                else f"strike {r.strikes} of {r.strikes_allowed}"
            )
            log.warning("match %s: decision rejected (%s, %s): %s", r.match_id, incident,
                        strike, r.message)  # fmt: skip
        elif kind == "match_ended":
            self._on_match_ended(msg.match_ended)

    def _on_event(self, ev: pb.Event) -> None:
        m = self._matches.get(ev.match_id)
        if m is None or ev.WhichOneof("kind") != "deal_ended":
            return
        if m.bot is not None and not _overrides(m.bot, "on_deal_end"):
            return  # not overridden: nothing to run
        result = _deal_result_from_pb(ev.deal_ended)
        # The view as it is now, when the deal's end comes: the last one the bot was given
        # (the next request, in this very message, will replace m.view before the hook runs).
        view = hook_view(m.view)
        self._schedule(m, "on_deal_end", lambda bot: bot.on_deal_end(view, result))

    def _matches_to_start(self) -> int | None:
        """How many more matches the bot will begin (``None``: no limit): played and running
        ones count (the Hello of a reconnection says what is left)."""
        if self.max_matches is None:
            return None
        begun = self.summary.matches + len(self._matches) + len(self._unmade)
        return max(0, self.max_matches - begun)

    def _on_match_started(self, ms: pb.MatchStarted) -> None:
        ruleset = ruleset_from_pb(ms.ruleset)
        view = view_from_pb(ms.view, ruleset)
        m = self._matches.get(ms.match_id)
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
            m.view = view
            log.info("match %s resumed (seat %d)", ms.match_id, ms.seat)
            return
        if m is not None:
            # Not a resumption: another match under a known id (an arena restarted, its
            # ids counting from the start again, while this one was never told the end).
            log.warning("match %s started again: the earlier match of that id is dropped",
                        ms.match_id)  # fmt: skip
        self._unmade.discard(ms.match_id)
        m = _Match(ms.match_id, ms.seat, ruleset, None, view)
        self._matches[ms.match_id] = m
        log.info("match %s started: seat %d, %s, players %s", ms.match_id, ms.seat,
                 ruleset.name, ", ".join(ms.players))  # fmt: skip
        # The bot is made in the worker thread, first in the match's chain of calls: a slow
        # __init__ holds up this match only (its clock runs), not the bot's other matches.
        self._chain(m, self._make(m, hook_view(view)))

    async def _make(self, m: _Match, start: PlayerView) -> None:
        try:
            bot = await asyncio.to_thread(make_bot, self.factory)
        except SystemExit as e:
            self._bot_left(e)
            return
        except Exception as e:
            # The bot's own bug, like a raising act(): it must not stop the runner (and its
            # other matches). That match goes on without the bot: its requests are left
            # unanswered, so the referee plays the seat on its deadline (strikes, forfeit).
            if self._matches.pop(m.match_id, None) is not None:
                self._unmade.add(m.match_id)
            self.summary.errors += 1
            log.error(
                "match %s: cannot make the bot %s (%s: %s); the match goes on without it: its "
                "requests are not answered (the referee's deadline plays the seat)",
                m.match_id, self.name, type(e).__name__, e, exc_info=True,
            )  # fmt: skip
            return
        m.bot = bot
        if _overrides(bot, "on_match_start"):
            await self._hook(m, "on_match_start", lambda: bot.on_match_start(start))

    def _on_request(self, req: pb.DecisionRequest, out: _Outbox) -> None:
        m = self._matches.get(req.match_id)
        if m is None:
            if req.match_id in self._unmade:
                log.debug("match %s: no bot to ask (it could not be made)", req.match_id)
            else:
                log.error("decision request for unknown match %s: ignored", req.match_id)
            return
        view = view_from_pb(req.view, m.ruleset, m.view)
        m.view = view
        rid = req.request_id
        tail = m.tail
        bot = m.bot  # None while it is being made (then tail is that job)
        inline = self._inline and bot is not None and bot.quick
        if inline and (tail is None or tail.done()) and rid not in m.answers:
            # A quick bot and nothing of this match in flight: answer here, no task.
            assert bot is not None
            try:
                action = self._decide_inline(bot, view)
            except SystemExit as e:
                self._bot_left(e)
                return
            self._send_answer(m, rid, action, out)
            return

        async def answer() -> None:
            cached = m.answers.get(rid)
            bot = m.bot
            if bot is None:
                return  # it could not be made: the referee plays the seat on its deadline
            try:
                if cached is not None:
                    action = cached
                elif self._inline and bot.quick:
                    action = self._decide_inline(bot, view)
                else:
                    action, kind = await asyncio.to_thread(decide, bot, view, log)
                    self._count(kind)
            except SystemExit as e:
                self._bot_left(e)
                return
            if self._out is not out:
                m.answers = {rid: action}
                return  # that stream is gone; the referee asks again on the new one
            self._send_answer(m, rid, action, out)

        self._chain(m, answer())

    def _bot_left(self, e: SystemExit) -> None:
        """The bot itself left (raised ``SystemExit``: a person typing "quit" in the human
        seat, say): stop cleanly, keeping its exit code, rather than let the exception end
        the event loop with a traceback."""
        code = e.code
        self.summary.exit_code = 0 if code is None else code if isinstance(code, int) else 1
        self.stop(f"the bot left (exit code {self.summary.exit_code})")

    def _decide_inline(self, bot: Bot, view: PlayerView) -> Action:
        t0 = time.perf_counter()
        action, kind = decide(bot, view, log)
        took = time.perf_counter() - t0
        if took > _SLOW_S:  # not quick after all: the worker thread from now on
            self._inline = False
            log.warning(
                "%s says it is quick, but a decision took %.0f ms on the event loop (every "
                "match of the bot waited): it is asked in a worker thread from now on",
                bot.name, took * 1000,
            )  # fmt: skip
        self._count(kind)
        return action

    def _count(self, kind: str) -> None:
        if kind != "bot":
            self.summary.errors += 1

    def _send_answer(self, m: _Match, rid: str, action: Action, out: _Outbox) -> None:
        try:
            wire = action_to_pb(action)
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            # An action with a field of the wrong type (``Bid("105")``, ``Play("10♣")``)
            # cannot be put on the wire: sent as an action of no kind, which the referee
            # refuses as malformed (a strike, and its fallback), as it would refuse it.
            self.summary.errors += 1
            log.error("match %s: %s returned %r, which is no action (%s: %s): sent as a "
                      "malformed action; the referee plays its fallback", m.match_id,
                      self.name, action, type(e).__name__, e)  # fmt: skip
            wire = pb.Action()
        m.answers = {rid: action}
        self.summary.decisions += 1
        out.put_nowait(
            pb.BotMessage(decision=pb.Decision(request_id=rid, match_id=m.match_id, action=wire))
        )

    def _on_match_ended(self, me: pb.MatchEnded) -> None:
        m = self._matches.pop(me.match_id, None)
        if me.result.reason == "interrupted":
            # Stopped before its end: no result, no hook; not one of the bot's matches
            # played (a tournament plays it again later, as a new match for the bot).
            self._unmade.discard(me.match_id)
            log.warning("match %s was interrupted by the arena (not finished, no result)",
                        me.match_id)  # fmt: skip
            return
        if m is None:
            if me.match_id in self._unmade:  # played without the bot: it counts all the same
                self._unmade.discard(me.match_id)
                log.info("match %s ended (without the bot, which could not be made)",
                         me.match_id)  # fmt: skip
                self._count_match()
            return
        result = _game_result(me.result)
        if m.seat in me.result.forfeits:
            log.warning("match %s: this bot's seat %d forfeited (it was played by the "
                        "referee to the end and placed last)", me.match_id, m.seat)  # fmt: skip
        view = view_from_pb(me.view, m.ruleset) if me.HasField("view") else m.view
        log.info("match %s ended: scores %s, places %s", me.match_id, list(result.scores),
                 list(result.places))  # fmt: skip
        if m.bot is None or _overrides(m.bot, "on_match_end"):
            self._schedule(m, "on_match_end", lambda bot: bot.on_match_end(view, result))

        async def count() -> None:
            self._count_match()

        self._chain(m, count())

    def _count_match(self) -> None:
        self.summary.matches += 1
        if self.max_matches is not None and self.summary.matches >= self.max_matches:
            self.stop(f"played {self.summary.matches} match(es)")

    # ------------------------------------------------------------------ per-match order
    def _schedule(self, m: _Match, what: str, fn: Callable[[Bot], None]) -> None:
        """Run hook ``what`` (``fn(bot)``) in the match's order, if the bot was made and
        overrides it."""

        async def job() -> None:
            bot = m.bot
            if bot is not None and _overrides(bot, what):
                await self._hook(m, what, lambda: fn(bot))

        self._chain(m, job())

    async def _hook(self, m: _Match, what: str, call: Callable[[], None]) -> None:
        try:
            await asyncio.to_thread(call)
        except SystemExit as e:  # the bot leaves from a hook as from act(): cleanly
            self._bot_left(e)
        except Exception:
            self.summary.errors += 1
            log.exception("%s raised in %s (match %s)", self.name, what, m.match_id)

    def _chain(self, m: _Match, job: Awaitable[None]) -> None:
        prev = m.tail

        async def step() -> None:
            if prev is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await prev
            await job

        task = asyncio.get_running_loop().create_task(step())
        m.tail = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self, timeout: float = 5.0) -> None:
        if self._tasks:
            _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for t in pending:
                t.cancel()


def _game_result(msg: pb.MatchResult) -> GameResult:
    # arena.protocol has no match_result_from_pb yet: the fields map one to one.
    places = tuple(msg.places)
    firsts = [s for s, p in enumerate(places) if p == 1]
    return GameResult(
        scores=tuple(msg.scores),
        places=places,
        shortfalls=tuple(msg.shortfalls),
        winner=firsts[0] if len(firsts) == 1 else None,
        deals=msg.deals,
        reason="forfeit" if msg.forfeits else msg.reason,
    )


def _overrides(bot: object, hook: str) -> bool:
    """Whether ``bot`` has its own ``hook`` (the base class's do nothing: skip them)."""
    own = getattr(bot, "__dict__", ())
    return getattr(type(bot), hook, None) is not getattr(Bot, hook) or hook in own


def _factory_name(bot: BotFactory) -> str:
    name = getattr(bot, "name", "")
    if isinstance(name, str) and name:
        return name
    return getattr(bot, "__name__", type(bot).__name__)


async def run_async(
    bot: BotFactory,
    arena: str,
    token: str,
    **options: object,
) -> RunSummary:
    """:func:`run` inside a running event loop (no signal handlers installed)."""
    runner = BotRunner(bot, arena, token, **options)  # type: ignore[arg-type]
    return await runner.run()


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
) -> RunSummary:
    """Play ``bot`` (a class or factory) in the arena at ``arena`` until stopped.

    Blocks; SIGINT/SIGTERM stop it cleanly. ``matches``: return after that many matches.
    Raises :class:`ArenaAuthError` / :class:`ArenaError` (see :meth:`BotRunner.run`).
    """
    if not token:
        raise ArenaAuthError("no token: pass token=... (arena-bot: --token or ARENA_TOKEN)")
    problem = token_problem(token)
    if problem is not None:  # gRPC could not even send it (it would say "Invalid metadata")
        raise ArenaAuthError(f"{problem}: check --token / ARENA_TOKEN")

    async def main() -> RunSummary:
        runner = BotRunner(
            bot, arena, token, tls=tls, ca=ca, matches=matches, name=name, retry_for=retry_for
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, runner.stop, f"signal {sig.name}")
        try:
            return await runner.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)

    return asyncio.run(main())
