"""The referee: registered bots, their streams, and the matches being played.

>>> ref = Referee(RefereeConfig(decision_ms=200))
>>> ref.add_bot("alice", "secret-a")
>>> ref.bot_names()
['alice']
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc._cython import cygrpc

from arena.protocol import HELLO_MAX_BYTES, PROTOCOL_VERSION, RETRY_AFTER_MS, hello_problem
from arena.referee.config import RefereeConfig
from arena.referee.match import MatchRunner, clip
from arena.referee.sessions import AuthError, BotSession, RateMeter, Stream, bearer_token
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Ruleset, load_ruleset

__all__ = [
    "ANSWER_BYTES",
    "FAILED_BYTES",
    "FEATURES",
    "MAX_DECISION_BATCH",
    "MAX_OPEN_STREAMS_PER_BOT",
    "REPLACED",
    "SERVER_VERSION",
    "Referee",
]

log = logging.getLogger("arena.referee")

try:
    SERVER_VERSION = metadata.version("thousand-arena")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    SERVER_VERSION = "0.0.0"

#: How long a new stream may take to say Hello.
HELLO_TIMEOUT_S = 10.0
#: How long a stream still waiting for its Hello may go on waiting once another stream of
#: its bot has come (and was refused with ALREADY_EXISTS): a client sends its Hello right
#: after opening the call, so one still silent is most likely dead (its connection dropped
#: after the call's headers), and it must not lock its bot out for HELLO_TIMEOUT_S while
#: the bot's seats run out of their grace period.
HELLO_AFTER_RIVAL_S = 1.0

#: The details of the ABORTED status that ends a stream when a newer one of the same bot
#: (token) is welcomed. The SDK stops on it rather than reconnect: two processes sharing a
#: token would otherwise take the seat from each other for ever.
REPLACED = "replaced by a newer stream of this bot (same token)"

#: The most ``Play`` calls one bot (token) may hold open in gRPC at once, counting those
#: the referee has ended (replaced, refused after the Hello) but that gRPC has not finished:
#: a call's status goes out only behind the messages written before it, so a client that
#: grants its streams no flow-control window (and answers pings: keepalive never ends it)
#: keeps every such call, ~20 KB each, until its connection closes. grpc.aio gives a
#: handler no way to reset its call, so the referee refuses the next stream instead; at
#: ``reconnect_limit`` alone the referee's memory grew by about 200 MB an hour. An honest
#: bot has one; a few more while old ones die with their connections.
MAX_OPEN_STREAMS_PER_BOT = 16
#: The ``retry-after-ms`` of a stream refused by ``MAX_OPEN_STREAMS_PER_BOT``: when the open
#: ones end is the client's choice, so a second, as for any other transient refusal.
OPEN_STREAMS_RETRY_MS = 1000

#: How long a call whose read said EOF (the client half-closed, or reset the call, or gRPC
#: core ended it itself) waits before its handler returns: see the end of ``Referee.serve_stream``
#: (the server's streaming calls without a token wait so too).
CORE_END_SETTLE_S = 0.25

#: At most this many refused stream openings are logged per flood window (see
#: ``Referee._log_refusal``).
REFUSALS_LOGGED = 20

#: The protocol features this referee supports (see ``Hello.features`` in the proto).
FEATURES = ("batch", "results_once", "deal_once", "ahead")
#: The most decisions one ``DecisionBatch`` may carry.
MAX_DECISION_BATCH = 256
#: The bytes a decision that answers a request may take before the rest of its message
#: counts toward the flood limit (1 per KiB), and so (times ``MAX_DECISION_BATCH``) the bytes
#: of a message past which it counts before it is parsed. It follows from the proto: an
#: answer holds two ids of the referee's (under 100 characters, ASCII), an action (at most
#: 14 bytes), an action chosen ahead (16 with its tag) and, if its bot failed, the 64
#: characters of ``failed`` the referee keeps: at most 496 bytes with 4-byte characters,
#: some 100 as a rule. It was 1,024 (a message counted past 256 KiB): a DecisionBatch of
#: 131,000 empty decisions within them cost the loop 9-15 ms to parse before its count
#: refused it, at each of a bot's 30 streams a window; within 128 KiB, a third of that
#: (hostile round 51).
ANSWER_BYTES = 512
#: What an answer's ``failed`` text may take besides, weighing nothing: a traceback sent
#: there (some 3 KiB; the referee keeps 64 characters) must not make a bot that fails its
#: decisions a flood. Not all of it: 127 KiB of it weighed nothing either (round 52), at
#: each request, and costs the referee some 0.3-0.6 ms to read when not ASCII (review
#: round 52c): answers padded there were the padding the weight of answers is for.
FAILED_BYTES = 16 * 1024


async def _status_behind_a_held_write(context: Any, refusal: _Refusal) -> None:
    """End a call whose last write waits on a client that reads nothing with the status of
    ``refusal`` (a stream replaced, refused, closed as not read): the status waits behind
    that write until the client reads, resets the call or loses its connection. Sent by
    grpc.aio after the handler returned, a reset made it fail, which grpc.aio logged as an
    ERROR with a traceback ("ExecuteBatchError raised in core by servicer method") unless
    it had seen the reset first: one per such call, as often as a bot liked (hostile round
    56). Sent here, its failure ends the call as cancelled (logged at DEBUG), as the calls
    without a token do (``server._refuse``)."""
    try:
        await context.abort(refusal.code, refusal.message)
    except cygrpc.ExecuteBatchError:
        raise asyncio.CancelledError from None


class _Refusal(Exception):
    """Ends a ``Play`` call with ``code`` and ``message``.

    Raised rather than ``context.abort``: grpc.aio sends an abort's status at once, and if
    the writer task's first write is still in flight the call then sends its initial
    metadata twice; gRPC core refuses that batch (GRPC_CALL_ERROR_TOO_MANY_OPERATIONS), the
    referee logs a traceback, and the bot never gets a status at all (its call hangs).
    :meth:`Referee.serve_stream` sets the status once the writer has stopped. (Since the
    headers go alone before the Welcome, a refusal after them cannot send them twice; one
    before them, at the Hello, still could.)
    """

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def _read(
    context: Any, most: int | None = None, weigh: Callable[[int], None] | None = None
) -> Any:
    """The stream's next message, or EOF; bytes that do not parse end the stream with
    INVALID_ARGUMENT naming the cause (gRPC itself would log a traceback and say UNKNOWN).
    The server hands this the bytes unparsed (``server.start_server``), so that a message
    over ``most`` bytes, or that ``weigh`` (given its bytes) refuses, is refused before its
    parse costs the loop anything: as much as its bytes hold entries (a MiB of empty
    decisions, 40-80 ms)."""
    try:
        got = await context.read()
        if not isinstance(got, bytes):  # EOF, or a message (parsed by a deserializer)
            return got
        if most is not None and len(got) > most:
            raise _Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message must be a Hello of at most {most:,} bytes (its limits: "
                f"docs/protocol.md), not one of {len(got):,}: refused unread",
            )
        if weigh is not None:
            weigh(len(got))
        return pb.BotMessage.FromString(got)
    except DecodeError as e:
        raise _Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"could not parse the message as arena.v1.BotMessage: {e}",
        ) from None


async def _await_hello(context: Any, name: str, stream: Stream) -> pb.Hello:
    """The ``Hello`` a new stream must open with; :class:`_Refusal` for anything else, for
    none within ``HELLO_TIMEOUT_S`` (``HELLO_AFTER_RIVAL_S`` once a rival stream of the same
    bot came), or when the arena stops meanwhile."""
    loop = asyncio.get_running_loop()
    hello_task = asyncio.ensure_future(_read(context, HELLO_MAX_BYTES))
    ended_task = asyncio.ensure_future(stream.ended.wait())
    rival_task = asyncio.ensure_future(stream.rival.wait())
    waits: set[asyncio.Future[Any]] = {hello_task, ended_task, rival_task}
    deadline = loop.time() + HELLO_TIMEOUT_S
    why = f"none came within {HELLO_TIMEOUT_S:g} s"
    try:
        while not (hello_task.done() or ended_task.done()):
            left = deadline - loop.time()
            if left <= 0:
                break
            await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if rival_task in waits and rival_task.done():
                waits.discard(rival_task)
                if deadline > loop.time() + HELLO_AFTER_RIVAL_S:
                    deadline = loop.time() + HELLO_AFTER_RIVAL_S
                    why = (
                        f"none came, and another stream of bot {name!r} "
                        f"came {HELLO_AFTER_RIVAL_S:g} s ago (this one is taken "
                        "for dead)"
                    )
    finally:
        ended_task.cancel()
        rival_task.cancel()
        if not hello_task.done():
            hello_task.cancel()
        elif not hello_task.cancelled():
            # Retrieved even when it is not used (the arena stopping as bytes that do not
            # parse came, or this call cancelled then): asyncio would log the refusal it
            # holds as "Task exception was never retrieved", an ERROR with a traceback.
            hello_task.exception()
    if stream.ending is not None:  # the arena is stopping
        raise _Refusal(*stream.ending)
    if not hello_task.done() or hello_task.cancelled():
        raise _Refusal(grpc.StatusCode.INVALID_ARGUMENT, f"the first message must be Hello: {why}")
    first = hello_task.result()
    kind = first.WhichOneof("kind") if isinstance(first, pb.BotMessage) else None
    if kind != "hello":
        got = (
            "the end of the stream"
            if first is grpc.aio.EOF
            else kind
            or (
                # Only fields this protocol version does not know (a newer one's).
                "a message of a kind this referee does not know"
                if first.ByteSize()
                else "an empty message"
            )
        )
        raise _Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"the first message must be Hello, not {got}",
        )
    hello: pb.Hello = first.hello
    if hello.protocol_version not in (0, PROTOCOL_VERSION):
        raise _Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"protocol version {hello.protocol_version} is not supported "
            f"(this referee speaks {PROTOCOL_VERSION})",
        )
    # Before anything reads its entries (the batch feature, the running ids).
    problem = hello_problem(hello)
    if problem is not None:
        raise _Refusal(grpc.StatusCode.INVALID_ARGUMENT, f"{problem} (docs/protocol.md)")
    return hello


class Referee:
    """Holds every bot session and runs matches; the gRPC servicer only forwards to it."""

    def __init__(self, config: RefereeConfig | None = None) -> None:
        self.config = config or RefereeConfig()
        self._by_token: dict[str, BotSession] = {}
        self._by_name: dict[str, BotSession] = {}
        self._matches: dict[str, MatchRunner] = {}
        #: Matches whose record file stopped short (see ``MatchRunner.record_cut``).
        self.records_cut = 0
        #: CPU seconds its matches spent on their records (``MatchRunner.record_cpu_s``):
        #: the tournament runner counts them as recording.
        self.record_cpu_s = 0.0
        self._changed: asyncio.Event | None = None
        #: Calls with a welcomed stream whose handler has not returned yet.
        self._attached = 0
        #: Their streams -> (the call's handler task, the stream's writer task): what
        #: :meth:`end_streams` cancels of a stream that cannot end.
        self._handlers: dict[Stream, tuple[asyncio.Task[Any], asyncio.Task[None]]] = {}
        #: The welcomed streams in their settle (``CORE_END_SETTLE_S``), and whose: their
        #: bot is not connected, and whether it left or lost the ends they carried is not
        #: known yet (:meth:`streams_settled`).
        self._settling: dict[Stream, BotSession] = {}
        #: Awaited by :meth:`end_streams`: what else holds calls open (``start_server`` adds
        #: the health service's shutdown, which ends its Watch calls).
        self.on_stop: list[Callable[[], Awaitable[None]]] = []
        #: Refused stream openings logged per flood window (the rest counted, then said):
        #: a client needs no token to be refused, and with ``-v`` every refusal would be a
        #: line of the log (2.5 MB in 10 s from one client). Counted apart for each bot
        #: and for the streams of no bot's token (key ""): with one count for all, a client
        #: without a token refused as fast as it could kept every line about a registered
        #: bot's refused streams out of the log (hostile round 52).
        self._refusals_logged: dict[str, RateMeter] = {}
        self._refusals_unlogged: Counter[str] = Counter()
        #: Streams refused for a token no bot has (or none), and the peer of the last: a
        #: remote bot that never connects is most often a mistyped token, and the
        #: organiser is told so (see :meth:`refused_tokens`).
        self._bad_tokens = 0
        self._bad_token_peer = ""
        #: (status, details) of :meth:`end_streams`, once called: a stream opened after it
        #: ends the same way, before any Welcome.
        self._ending: tuple[grpc.StatusCode, str] | None = None
        #: Tokens of bots removed (or given another token) while the referee runs -> why:
        #: a stream presenting one is told that it was revoked (see :meth:`remove_bot`).
        self._revoked: dict[str, str] = {}

    # ------------------------------------------------------------------ bots
    def add_bot(self, name: str, token: str) -> None:
        """Register a bot: a stream presenting ``token`` is the bot ``name``."""
        if not name or not token:
            raise ValueError("a bot needs a name and a token")
        if token in self._by_token and self._by_token[token].name != name:
            raise ValueError(f"token already registered for bot {self._by_token[token].name!r}")
        self._revoked.pop(token, None)
        old = self._by_name.get(name)
        if old is not None:
            if old.token == token and self._by_token.get(token) is old:
                return
            if self._by_token.get(old.token) is old:
                self._retire_token(old, f"bot {name!r} has another token now")
            else:  # removed, and listed again: no longer gone for its revoked token
                old.gone = None
            old.token = token
            self._by_token[token] = old
            return
        c = self.config
        s = BotSession(name, token, c.flood_limit, c.flood_window_s, c.reconnect_limit,
                       c.max_wrong_recorded)  # fmt: skip
        self._by_token[token] = s
        self._by_name[name] = s

    def _retire_token(self, s: BotSession, why: str) -> None:
        """Refuse ``s``'s token from now on (with ``why``), and end a stream opened with it
        at once: whoever holds that token no longer plays as this bot. Its seats wait for
        it as for any bot that lost its connection (within its grace it may come back with
        a token it has now)."""
        if self._by_token.get(s.token) is s:
            del self._by_token[s.token]
        self._revoked[s.token] = why
        for stream in (s.stream, s.reserved):
            if stream is not None:
                stream.end(grpc.StatusCode.UNAUTHENTICATED, f"token revoked: {why}", now=True)

    def update_bots(
        self, tokens: Mapping[str, str], removed_why: str
    ) -> tuple[list[str], dict[str, list[str]], list[str]]:
        """Make ``tokens`` (name -> token) the bots let in from now on, as a tokens file
        read again says: each bot not in it is removed (:meth:`remove_bot`, ``removed_why``
        formatted with its ``name``), each whose token differs gets the new one (the old
        refused, its stream ended: its seats wait for it as for a lost connection), and the
        new ones are added. Returns (added, removed -> the matches it forfeits, changed)."""
        active = {n: self._by_name[n].token for n in self.active_bots()}
        removed = [n for n in active if n not in tokens]
        changed = [n for n in tokens if n in active and active[n] != tokens[n]]
        added = [n for n in tokens if n not in active]
        forfeits = {n: self.remove_bot(n, removed_why.format(name=n)) for n in removed}
        # Every old token is let go before a new one is taken: one bot's new token may be
        # another's old one (two swapped).
        gone = {n: self._by_name[n].gone for n in changed}
        for n in changed:
            self._retire_token(self._by_name[n], f"bot {n!r} has another token now")
        for n in changed + added:
            self.add_bot(n, tokens[n])
        for n, why in gone.items():  # (a new token alone does not bring a gone bot back)
            self._by_name[n].gone = why
        self.notify_changed()
        return added, forfeits, changed

    def remove_bot(self, name: str, why: str) -> list[str]:
        """Refuse bot ``name``'s token from now on (``UNAUTHENTICATED``, ``token revoked:
        <why>``): a stream of it is ended so at once (what was queued for it dropped), and
        each seat it holds in a running match forfeits at once (the fallback plays the seat
        out, it places last; the match goes on for the others and is recorded). The ids of
        those matches. :meth:`add_bot` of the name lets the bot in again (for matches that
        start from then on). An organiser revoking a cheater expects it out now: waiting
        for the match to end would leave it the hands it is cheating in."""
        s = self._by_name[name]
        self._retire_token(s, why)
        s.gone = f"its token was revoked: {why}"
        forfeited = []
        for mid, seat in list(s.seats.items()):
            seat.match.forfeit(seat, f"its token was revoked: {why}")
            forfeited.append(mid)
        self.notify_changed()
        return forfeited

    def bot_names(self) -> list[str]:
        """Every registered bot (a removed one too: see :meth:`active_bots`)."""
        return list(self._by_name)

    def active_bots(self) -> list[str]:
        """The registered bots whose token is accepted (not removed)."""
        return [n for n, s in self._by_name.items() if self._by_token.get(s.token) is s]

    def connected_bots(self) -> list[str]:
        """Registered bots with an open stream."""
        return [n for n, s in self._by_name.items() if s.connected]

    def welcomed_bots(self) -> list[str]:
        """Registered bots that have said Hello at least once (connected now or not)."""
        return [n for n, s in self._by_name.items() if s.welcomes]

    def refused_tokens(self) -> tuple[int, str]:
        """How many streams came with an unknown or missing token, and the last one's peer."""
        return self._bad_tokens, self._bad_token_peer

    def idle_bots(self) -> list[str]:
        """Connected bots seated in no running match."""
        return [
            n
            for n, s in self._by_name.items()
            if s.connected
            and not s.seats
            and s.matches_left != 0
            # A removed bot's (or a replaced token's) stream is ended but not yet detached:
            # a match must not seat it meanwhile (it would wait a whole grace for it).
            and s.stream is not None
            and s.stream.ending is None
            and self._by_token.get(s.token) is s
        ]

    def session(self, name: str) -> BotSession:
        """The session of bot ``name`` (``KeyError`` if unknown)."""
        return self._by_name[name]

    def supervise(self, name: str) -> None:
        """Bot ``name``'s process is restarted whenever it dies (the tournament runner's
        local bots): its grace running out while it is away does not take it for gone for
        good (``BotSession.gone``), as a restart may take longer than the grace; its later
        matches wait for it as any. Until :meth:`given_up`."""
        self._by_name[name].restarted = True

    def given_up(self, name: str, why: str) -> None:
        """Bot ``name``'s process is not restarted any more (``why``, for the records): it
        is gone for good, and every match that starts without it forfeits its seat at once
        until it connects again (a seat it holds keeps the rest of its grace)."""
        s = self._by_name[name]
        s.restarted = False
        s.gone = why

    def notify_changed(self) -> None:
        """Wake :meth:`wait_changed` (the lobby calls it too, when its state changes)."""
        if self._changed is not None:
            self._changed.set()

    async def wait_changed(self, timeout: float | None = None) -> None:
        """Wait until a bot connects, disconnects or a match ends (or ``timeout``)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        ev = self._changed
        try:
            await asyncio.wait_for(ev.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            ev.clear()

    async def wait_for_bots(self, names: Iterable[str], timeout: float | None = None) -> list[str]:
        """Wait until every bot of ``names`` is connected; return the names still missing
        after ``timeout`` seconds (default ``config.join_timeout_s``)."""
        wanted = list(names)
        unknown = [n for n in wanted if n not in self._by_name]
        if unknown:
            raise KeyError(f"unknown bots: {', '.join(unknown)}")
        limit = self.config.join_timeout_s if timeout is None else timeout
        return await self._until_none(
            lambda: [n for n in wanted if not self._by_name[n].connected], limit
        )

    async def _until_none(self, left: Callable[[], list[str]], timeout: float) -> list[str]:
        """Ask ``left`` at every change of the bots (and twice a second) until it names
        nobody or ``timeout`` seconds have passed; what it named last."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            names = left()
            wait = deadline - loop.time()
            if not names or wait <= 0:
                return names
            await self.wait_changed(min(wait, 0.5))

    def away_with_results(self, names: Iterable[str] | None = None) -> list[str]:
        """Bots away (of ``names``, or any) whose result of a match that ended while they
        were away is kept for them (it is sent when they are back)."""
        of = None if names is None else set(names)
        return [
            n
            for n, s in self._by_name.items()
            if (of is None or n in of)
            and not s.connected
            and self._by_token.get(s.token) is s  # (a removed bot cannot come back)
            and any(on is None for on, _, _ in s.ends.values())
        ]

    async def wait_for_away_results(
        self, timeout: float, names: Iterable[str] | None = None
    ) -> list[str]:
        """Wait up to ``timeout`` seconds for the bots of :meth:`away_with_results` (of
        ``names``, or any) to come back (and get their results); the names still away. An
        arena that stops should not leave a bot that lost its connection in a match's last
        deal, within its grace period, without its result. (Once the streams in their
        settle are judged: see :meth:`streams_settled`.)"""
        of = None if names is None else list(names)
        await self.streams_settled()
        return await self._until_none(lambda: self.away_with_results(of), timeout)

    async def streams_settled(self, timeout: float | None = None) -> None:
        """Wait until no stream is in its settle (default: at most twice the settle and a
        second). A bot whose stream ended a moment ago is neither connected nor
        :meth:`away_with_results` until its settle tells whether it left or lost the ends
        the stream carried (a reset): an arena that stopped within it took the bot for
        gone with its result and did not wait for it to come back."""
        limit = 2 * CORE_END_SETTLE_S + 1.0 if timeout is None else timeout
        await self._until_none(lambda: [s.name for s in self._settling.values()], limit)

    # ------------------------------------------------------------------ matches
    async def run_match(
        self,
        match_id: str,
        ruleset: Ruleset | str,
        seed: int | str,
        seats: list[str],
        time_limit_s: float | None = None,
    ) -> dict[str, Any]:
        """Play one match between registered bots (by name, one per seat) and return its
        record: the engine's record plus per action ``ms`` and ``by``, ``incidents``,
        ``forfeits``, ``match_id``; forfeiters are placed last in ``result``.

        ``time_limit_s``: once the match has run that long, it ends after the deal in
        progress, placed by score as at a ``max_deals`` cap (the record says
        ``time_limit_s``, and its ruleset's ``max_deals`` is the deal it ended after).

        Cancelling the call interrupts the match; it is recorded as interrupted.
        """
        rs = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset, len(seats))
        if match_id in self._matches:
            raise ValueError(f"match {match_id!r} is already running")
        unknown = [n for n in seats if n not in self._by_name]
        if unknown:
            raise KeyError(f"unknown bots: {', '.join(unknown)}")
        if len(set(seats)) != len(seats):
            raise ValueError(f"a bot may take only one seat in a match: {seats}")
        sessions = [self._by_name[n] for n in seats]
        runner = MatchRunner(match_id, rs, seed, sessions, self.config, time_limit_s)
        self._matches[match_id] = runner
        log.info("match %s starts: %s, %s", match_id, rs.name, ", ".join(seats))
        try:
            rec = await runner.run()
        finally:
            del self._matches[match_id]
            self.records_cut += runner.record_cut
            self.record_cpu_s += runner.record_cpu_s
            self.notify_changed()
        log.info(
            "match %s ends: scores %s places %s forfeits %s",
            match_id, rec["result"]["scores"], rec["result"]["places"], rec["forfeits"],
        )  # fmt: skip
        return rec

    async def end_streams(
        self, message: str = "the arena is stopping", timeout: float = 2.0, *, final: bool = False
    ) -> None:
        """End every bot's stream and wait up to ``timeout`` seconds for the calls to end:
        with UNAVAILABLE ``message`` (bots reconnect, as when the connection drops: the
        arena may come back), or with ``final`` an OK status (the arena is done for good:
        its tournament is over, its ``--matches`` played; bots stop). A call still open
        then whose stream wrote nothing meanwhile (its client takes nothing it is sent) has
        its handler cancelled, as a reset call's is, and is waited for as long again: the
        server's stop ends it in gRPC core. One still writing then, too slowly to end, is
        cancelled so at the end of that second wait.

        Call it before stopping the gRPC server: a stream still open then is cancelled by
        gRPC, and grpc.aio logs that cancellation as an unhandled exception.
        """
        code = grpc.StatusCode.OK if final else grpc.StatusCode.UNAVAILABLE
        # Streams opened from now on are refused the same way: one welcomed while the server
        # is still up (a bot reconnecting at once, or while a slow stream keeps this waiting)
        # would resume its seats, be cut by the server's stop with UNAVAILABLE "Cancelling
        # all calls", and after a final end be so told to reconnect, not to stop.
        self._ending = (code, message)
        for s in self._by_name.values():
            for stream in (s.stream, s.reserved):  # (reserved: still saying Hello)
                if stream is not None:
                    stream.end(code, message)
        written = {stream: stream.written for stream in self._handlers}
        for hook in self.on_stop:  # other long calls (health Watch), ended by their owner
            await hook()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._attached and loop.time() < deadline:
            await self.wait_changed(min(0.1, max(0.0, deadline - loop.time())))
        stuck = [
            (handler, writer)
            for s, (handler, writer) in self._handlers.items()
            if not writer.done() and s.written == written.get(s)
        ]
        if not stuck and not self._attached:
            return
        # A stream still open now whose writer has written nothing all this time cannot
        # end: its client takes nothing it is sent (it grants no flow-control window, or
        # stopped reading), the write waits for ever and the status would wait behind it.
        # (One only slow, still writing, gets as long again: below.) Left so,
        # grpc.aio cancelled its handler only when the server's grace ran out, and the
        # handler ended in the steps after ``server.stop`` returned: ``arena serve``
        # returns at once, and asyncio.run's last sweep, cancelling grpc.aio's task of the
        # call after the handler had ended but before that task woke, made grpc.aio print
        # a bare traceback of CancelledError (``_schedule_rpc_coro``'s print_exc, which no
        # log filter reaches; hostile round 42, 2 CI runs in ~7). Its handler is cancelled
        # here instead, as grpc.aio cancels a reset call: logged at DEBUG, no status sent;
        # the server's stop ends the call in gRPC core with UNAVAILABLE as before, and
        # what the writer still held is lost (sent again on its bot's return).
        for handler, writer in stuck:
            writer.cancel()
            handler.cancel()
        deadline = loop.time() + timeout
        while self._attached and loop.time() < deadline:
            await self.wait_changed(min(0.1, max(0.0, deadline - loop.time())))
        # One still writing now, after twice ``timeout``, takes what it is sent too slowly
        # to ever end (a client that grants one message's window every so often, just
        # inside the wait): its handler would outlive the server's grace as the stuck ones
        # did, and make grpc.aio print the same traceback (hostile round 44b). Cancelled
        # the same way. (A writer done is not: its handler ends by itself, within the
        # settle or the writer's wait; cancelled in its settle, it would lose the ends of
        # a bot that left.)
        slow = [(h, w) for h, w in self._handlers.values() if not w.done()]
        for handler, writer in slow:
            writer.cancel()
            handler.cancel()
        deadline = loop.time() + timeout
        while slow and self._attached and loop.time() < deadline:
            await self.wait_changed(min(0.1, max(0.0, deadline - loop.time())))

    def running_matches(self) -> list[str]:
        """The ids of the matches being played."""
        return list(self._matches)

    # ------------------------------------------------------------------ streams
    def authenticate(self, metadata: Any) -> BotSession:
        """The session of a call's token; :class:`AuthError` when unknown or missing."""
        token = bearer_token(metadata)
        if token is None:
            # What came instead, never its value (it may be the token itself, sent without
            # "Bearer "): a client author who sent one was told only that it was missing.
            sent = any(str(key).lower() == "authorization" for key, _ in metadata or ())
            form = ("its 'authorization' metadata is not in that form: the word Bearer, one "
                    "space, the token" if sent else "the call carried no 'authorization' "
                    "metadata")  # fmt: skip
            raise AuthError(
                grpc.StatusCode.UNAUTHENTICATED,
                f"missing token: send metadata 'authorization: Bearer <token>' ({form})",
            )
        session = self._by_token.get(token)
        if session is None:
            why = self._revoked.get(token)
            # (the holder of a revoked token is told so, not "unknown": it was known)
            told = "unknown token" if why is None else f"token revoked: {why}"
            raise AuthError(grpc.StatusCode.UNAUTHENTICATED, told)
        return session

    async def serve_stream(self, context: Any) -> None:
        """Run one ``Play`` call (read/write style) until it ends; see docs/protocol.md."""
        try:
            session = self.authenticate(context.invocation_metadata())
        except AuthError as e:
            self._bad_tokens += 1
            self._bad_token_peer = str(context.peer())[:200]  # (a peer string is the client's)
            self._log_refusal("", "stream from %s refused: %s", context.peer(), e.message)
            await context.abort(e.code, e.message)
            return
        if self._ending is not None:  # the arena is stopping: no stream starts now
            self._log_refusal(session.name, "stream of bot %s refused: %s", session.name,
                              self._ending[1])  # fmt: skip
            context.set_code(self._ending[0])
            context.set_details(self._ending[1])
            return
        if session.reserved is not None:
            self._log_refusal(session.name,
                              "second stream for bot %s refused: the first is saying Hello",
                              session.name)  # fmt: skip
            session.reserved.rival.set()  # (it has HELLO_AFTER_RIVAL_S left to say it)
            await context.abort(
                grpc.StatusCode.ALREADY_EXISTS,
                f"another stream of bot {session.name!r} is saying Hello; retry after it",
            )
            return
        loop = asyncio.get_running_loop()
        # Only streams let in count: a refused one costs little, and counting it would keep
        # the door shut for as long as the bot keeps retrying.
        wait_s = session.connects.full(loop)
        if wait_s:
            c = self.config
            if loop.time() - session.warned_at > c.flood_window_s:  # once per window, not
                session.warned_at = loop.time()  # a line per refused stream (thousands a s)
                log.warning("bot %s reconnects too often: streams refused for a while",
                            session.name)  # fmt: skip
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {c.reconnect_limit} streams of bot {session.name!r} opened within "
                f"{c.flood_window_s:g} s: wait {math.ceil(wait_s * 10) / 10:g} s before "
                "reconnecting",
                trailing_metadata=((RETRY_AFTER_MS, str(math.ceil(wait_s * 1000))),),
            )
            return
        if session.open_calls >= MAX_OPEN_STREAMS_PER_BOT:
            self._log_refusal(session.name,
                              "stream of bot %s refused: %d of its streams are still open",
                              session.name, session.open_calls)  # fmt: skip
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"bot {session.name!r} has {session.open_calls} streams open, the most one "
                f"bot may have (ended ones count until the client closes them or their "
                f"connection: it reads none of them): close some before opening another",
                trailing_metadata=((RETRY_AFTER_MS, str(OPEN_STREAMS_RETRY_MS)),),
            )
            return
        session.connects.add(loop)
        session.open_calls += 1
        context.add_done_callback(session.call_done)
        stream = Stream(context.peer(), max_queued=self.config.max_queued)
        session.reserved = stream  # so a racing second stream is refused
        writer: asyncio.Task[None] | None = None
        reader: asyncio.Task[None] | None = None
        attached = False
        refusal: _Refusal | None = None
        ended = False  # the body ran to its end or to a refusal (not cancelled, no bug)
        try:
            hello = await _await_hello(context, session.name, stream)
            stream.batch = "batch" in hello.features
            stream.results_once = "results_once" in hello.features
            stream.deal_once = "deal_once" in hello.features
            stream.ahead = "ahead" in hello.features
            # The matches it will play count those it finishes on this stream: the seats it is
            # about to resume (a bot restarted with --matches N finishes them first), and
            # the matches it holds as running whose end comes again (they ended while it
            # was away). Only the rest may be new ones.
            if hello.HasField("matches"):
                finishing = set(session.seats) | (set(hello.running) & set(session.ends))
                session.matches_left = max(0, hello.matches - len(finishing))
            else:
                session.matches_left = None
            # The headers first, alone (they need no flow-control window): else they go
            # with the Welcome, and a client that grants its stream no window keeps them
            # from being sent; the status that ends the call (replaced by a newer stream,
            # refused, the arena stopping) would then carry them a second time, which gRPC
            # core refuses (TOO_MANY_OPERATIONS: an ERROR and a traceback in the log, one
            # per such stream, as often as the bot reconnects).
            try:
                await context.send_initial_metadata(())
            except cygrpc.ExecuteBatchError:  # the call has ended already
                raise asyncio.CancelledError from None
            # Ended while its headers went (end_streams ends a stream still saying Hello):
            # refused as it is before, not welcomed and attached after the stop began (its
            # seats resumed, past end_streams' wait for the attached; hostile round 44's
            # flood around the stop under load, flakes round 46).
            if stream.ending is not None:
                raise _Refusal(*stream.ending)
            writer = asyncio.create_task(stream.write_loop(context.write))
            stream.put(
                pb.ServerMessage(
                    welcome=pb.Welcome(
                        bot_name=session.name,
                        server_version=SERVER_VERSION,
                        protocol_version=PROTOCOL_VERSION,
                        features=FEATURES,
                    )
                )
            )
            log.info("bot %s connected from %s (%r)", session.name, stream.peer,
                     clip(hello.client or "unknown client"))  # fmt: skip
            session.reserved = None
            old = session.stream
            if old is not None:
                # The newest stream of a token wins: the old one may be dead without anyone
                # knowing yet (a network partition, a lost FIN: keepalive notices only after
                # tens of seconds), and a bot locked out meanwhile would time out and forfeit.
                log.info("bot %s: a new stream from %s replaces the one from %s", session.name,
                         stream.peer, old.peer)  # fmt: skip
                old.end(grpc.StatusCode.ABORTED, REPLACED, now=True)
            session.attach(stream)
            session.end_unknown(hello.running)
            attached = True
            self._attached += 1
            handler = asyncio.current_task()
            assert handler is not None
            self._handlers[stream] = (handler, writer)
            self.notify_changed()
            # Reading runs in a task of its own so that the call also ends when the writer
            # does (the bot is gone) or the stream overflows (the bot does not read): then
            # there may be nothing to read for ever.
            reader = asyncio.create_task(self._read_loop(session, stream, context))
            stream.stop = reader.cancel
            await asyncio.wait((reader, writer), return_when=asyncio.FIRST_COMPLETED)
            if stream.overflowed:
                log.warning("bot %s does not read its stream: closed", session.name)
                raise _Refusal(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"more than {self.config.max_queued} messages wait to be sent on this "
                    f"stream: the bot does not read it",
                )
            if stream.ending is not None:
                raise _Refusal(*stream.ending)
            if reader.done():
                reader.result()  # a refusal (or a bug) of the reader goes on from here
            ended = True
        except _Refusal as e:
            refusal = e
            ended = True
            log.info("stream of bot %s closed: %s: %s", session.name, e.code.name, e.message)
        finally:
            # The bot left (it half-closed: the SDK does once it has read its last end), or
            # the stream was lost with what it carried (reset, dropped, refused, replaced).
            # grpc.aio says EOF to the read of a call that the client cancelled, whose
            # channel it closed or whose connection died, as it does for a half-close, and
            # cancels this handler a moment later: sometimes before it sees the EOF (then
            # ``ended`` is false), sometimes after (the settle below tells).
            left = (
                ended
                and refusal is None
                and reader is not None
                and reader.done()
                and not reader.cancelled()
                and reader.exception() is None
            )
            if reader is not None:
                if reader.done():
                    if not reader.cancelled():
                        reader.exception()  # retrieved (it was raised above)
                else:
                    reader.cancel()
            stream.close(discard=refusal is not None)
            if attached:
                why = "stream closed" if refusal is None else (
                    f"stream closed by the referee: {refusal.code.name}: {refusal.message}"
                )  # fmt: skip
                session.detach(stream, self.config.reconnect_grace_s, clip(why, 300))
                log.info("bot %s disconnected", session.name)
                self.notify_changed()
            if session.reserved is stream:
                session.reserved = None
            held = False  # the writer's last write waits on a client that takes nothing
            if writer is not None:
                try:
                    await asyncio.wait_for(writer, 1.0)
                except (TimeoutError, asyncio.CancelledError, Exception) as e:
                    held = isinstance(e, TimeoutError)
                    writer.cancel()
                    if attached:  # (what it still had to write is lost)
                        session.lost(stream)
            if refusal is not None and not held:
                # The status goes out when this returns, after the writer has stopped.
                context.set_code(refusal.code)
                context.set_details(refusal.message)
            write_failed = (
                writer is not None
                and writer.done()
                and not writer.cancelled()
                and writer.exception() is not None
            )
            # grpc.aio's cancellation (the call was reset) may have come during the wait for
            # the writer above and gone no further: that ``except`` takes it, and so does
            # ``asyncio.wait_for`` itself when the writer ends in the same step (it returns
            # the writer's result; the closed channel's reset, 1 in ~70 under load). The
            # task still counts it: the settle, which waits for that very cancellation,
            # would wait in vain and take the reset for leaving.
            task = asyncio.current_task()
            cancelled = task is not None and task.cancelling() > 0
            if cancelled:
                left = False
            settle = ended and (left or write_failed) and not cancelled
            if not settle:
                self._stream_gone(session, stream, attached, left)
        if settle:
            # The read's EOF (or a failed write) may be the end of the call without the bot
            # leaving: a reset (above), or gRPC core's own end (a message it cannot
            # decompress ends the call with INTERNAL, and the read then says EOF). grpc.aio
            # learns that the call is over a moment later (under a ms here) and cancels
            # this handler; one that returned first had its status refused by core, which
            # grpc.aio logged as an ERROR with a traceback ("ExecuteBatchError raised in
            # core by servicer method", 12 of 100 such streams). A bot that half-closed
            # gets its OK this much later. The stream counts as attached until then, so
            # that once none is, each one's fate is known.
            if attached:
                self._settling[stream] = session
            try:
                await asyncio.sleep(CORE_END_SETTLE_S)
            except asyncio.CancelledError:
                left = False  # (a half-closed call is not cancelled: it ends with OK)
                raise
            finally:
                self._stream_gone(session, stream, attached, left)
        elif cancelled:
            raise asyncio.CancelledError  # (ends as cancelled: grpc.aio sends no status)
        if held and refusal is not None:
            await _status_behind_a_held_write(context, refusal)

    def _stream_gone(self, session: BotSession, stream: Stream, attached: bool,
                     left: bool) -> None:  # fmt: skip
        """The end of a ``Play`` call's handler: a welcomed ``stream`` its bot did not leave
        is lost with the match ends it carried (they are sent again, and waited for)."""
        if attached:
            if not left:
                session.lost(stream)
            self._settling.pop(stream, None)
            self._attached -= 1
            self._handlers.pop(stream, None)
            self.notify_changed()

    def _log_refusal(self, bot: str, text: str, *args: object) -> None:
        """Log a refused stream opening of ``bot`` ("": of no bot's token), unless
        ``REFUSALS_LOGGED`` of its were logged within the flood window: those are counted,
        and the next line logged says how many."""
        if not log.isEnabledFor(logging.INFO):
            return
        loop = asyncio.get_running_loop()
        meter = self._refusals_logged.get(bot)
        if meter is None:  # (one a bot of the arena's, and one for all other streams)
            meter = self._refusals_logged[bot] = RateMeter(
                REFUSALS_LOGGED, self.config.flood_window_s
            )
        if meter.full(loop):  # (only those logged count: 20 every window)
            self._refusals_unlogged[bot] += 1
            return
        meter.add(loop)
        if more := self._refusals_unlogged.pop(bot, 0):
            text += " (%d more refused streams %s not logged)"
            args += (more, f"of bot {bot}" if bot else "without a bot's token")
        log.info(text, *args)

    async def _read_loop(self, session: BotSession, stream: Stream, context: Any) -> None:
        """Handle a welcomed bot's messages until EOF; a refusal raises :class:`_Refusal`."""
        flood = session.flood  # per bot, not per stream: reconnecting does not reset it
        loop = asyncio.get_running_loop()
        size = counted = 0  # the bytes of the message read, and the weight counted unread

        def flooded() -> _Refusal:
            # Once per window: the meter is the bot's, so once it is full every stream the
            # bot opens (30 a window) floods at its first stray message, and a line each
            # filled the organiser's log (the refusal's INFO line still names each stream).
            if loop.time() - session.flood_warned_at > self.config.flood_window_s:
                more = session.flood_unlogged
                session.flood_warned_at, session.flood_unlogged = loop.time(), 0
                log.warning("bot %s flooded its stream: closed%s", session.name,
                            f" ({more} more of its streams closed so since the last such "
                            "line, not logged)" if more else "")  # fmt: skip
            else:
                session.flood_unlogged += 1
            return _Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {self.config.flood_limit} messages answering no pending "
                f"request within {self.config.flood_window_s:g} s (each weighs 1 + its "
                f"KiB; an answer, its KiB past {ANSWER_BYTES} bytes a decision, its failed "
                f"texts aside up to {FAILED_BYTES // 1024} KiB each)",
            )

        def weigh(n_bytes: int) -> None:
            # The least the message weighs, whatever it holds (at most MAX_DECISION_BATCH
            # answers, each excused ANSWER_BYTES), counted before it is parsed: a MiB of
            # empty decisions cost the loop 40-80 ms to parse before its count refused it,
            # as often as the bot may reconnect, and was weighed nothing.
            nonlocal size, counted
            size = n_bytes
            counted = max(0, n_bytes - MAX_DECISION_BATCH * ANSWER_BYTES) // 1024
            if counted and flood.over(loop, counted):
                raise flooded()

        while True:
            size = counted = 0
            msg = await _read(context, weigh=weigh)
            if msg is grpc.aio.EOF or session.stream is not stream:
                return  # (replaced: what it still carries is not the bot's word any more)
            # (a message handed parsed, in process, was not weighed unread)
            size = size or msg.ByteSize()
            if msg.WhichOneof("kind") == "decisions":
                n = len(msg.decisions.decisions)
                if n > MAX_DECISION_BATCH:
                    raise _Refusal(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        f"a DecisionBatch holds at most {MAX_DECISION_BATCH} decisions, not {n}",
                    )
            unsolicited = self.on_message(session, msg)
            # Weighed by size: a stray MiB costs the referee milliseconds to parse, and the
            # count alone would let a few bots slow every match next door ten-fold. An
            # answer weighs what it carries beyond ANSWER_BYTES a decision (it needs ~100
            # bytes): answers padded to a MiB (unknown fields), uncounted, would halve the
            # honest matches next door as the strays do. (What was counted unread is not
            # counted again.)
            # An answer that failed has FAILED_BYTES more: a client that sends a traceback
            # in ``failed`` (the proto asks for "a few words") answers no more often for
            # it, and with 3 KiB of it a bot that failed its decisions and played on was
            # closed as a flood after some 300 answers within 10 s (hostile round 52).
            # (Not measured: reading the text, as the match does, costs what it weighs.)
            if unsolicited:
                weight = unsolicited + size // 1024
            else:
                # (a protobuf list read by a slice: upb's has no __iter__, and iterating it
                # ends in an IndexError raised and caught, ~1,800 instructions: perf56s)
                answers = (
                    msg.decisions.decisions[:] if msg.HasField("decisions") else [msg.decision]
                )
                excused = sum(ANSWER_BYTES + FAILED_BYTES * d.HasField("failed") for d in answers)
                weight = max(0, size - excused) // 1024
            weight -= counted
            if weight > 0 and flood.over(loop, weight):
                raise flooded()

    def on_message(self, session: BotSession, msg: pb.BotMessage) -> int:
        """One message of a bot after its Hello; how many of the decisions in it (or the
        message itself, when it holds none) answered no pending request."""
        kind = msg.WhichOneof("kind")
        if kind == "decision":
            return 0 if self.on_decision(session, msg.decision) else 1
        if kind == "decisions" and msg.decisions.decisions:
            return sum(not self.on_decision(session, d) for d in msg.decisions.decisions[:])
        log.debug("bot %s sent %s after Hello: ignored", session.name, kind or "nothing")
        return 1

    def on_decision(self, session: BotSession, d: pb.Decision) -> bool:
        """One ``Decision`` of a bot; whether it answered a pending request."""
        seat = session.seats.get(d.match_id)
        if seat is None:
            # At most max_wrong_recorded of them are answered per flood window: a reply
            # carries the events waiting for the bot, so answering each one would let a bot
            # poll for the other seats' moves as they come (and time their thinking).
            if session.unseated.over(asyncio.get_running_loop()):
                return False
            # Say the same whether or not the match exists: a bot learns nothing about
            # matches it does not sit in.
            # Ids are echoed cut (a bot may send a MiB of id, and not read its stream).
            mid = clip(d.match_id)
            log.info("bot %s answered for match %r it is not seated in", session.name,
                     mid)  # fmt: skip
            session.send(
                pb.ServerMessage(
                    decision_rejected=pb.DecisionRejected(
                        request_id=clip(d.request_id),
                        match_id=mid,
                        incident=pb.INCIDENT_WRONG_REQUEST,
                        message=f"you have no seat in a running match {mid!r}",
                        strikes_allowed=self.config.max_strikes,
                    )
                )
            )
            return False
        return seat.match.on_decision(seat, d)

    def server_info(self) -> pb.ServerInfo:
        """What ``GetInfo`` answers."""
        return pb.ServerInfo(
            server_version=SERVER_VERSION,
            protocol_version=PROTOCOL_VERSION,
            presets=list(PRESETS),
        )
