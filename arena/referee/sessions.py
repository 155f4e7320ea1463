"""Bot sessions: who a bot is (its token), its one stream, and what is queued for it.

A :class:`BotSession` lives as long as the referee knows the bot; a :class:`Stream` as long
as one ``Play`` call. Everything sent to a bot goes through :meth:`BotSession.send`, which
piggy-backs the events buffered for the bot onto the message (``ServerMessage.events``).
While the bot has no stream, messages and events for it are dropped: on reconnect each
match re-sends ``MatchStarted`` (with ``resumed``) carrying the current view, and the
pending decision request again; the ``MatchEnded`` of a match is kept (``BotSession.ends``)
and sent again on each new stream until the bot is known to have read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import grpc

from arena.protocol import batch_bytes, event_item, message_bytes
from arena.referee.lag import loop_lag
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.referee.match import SeatState

__all__ = [
    "MAX_BATCH",
    "MAX_BATCH_BYTES",
    "AuthError",
    "BotSession",
    "RateMeter",
    "Stream",
    "bearer_token",
]

log = logging.getLogger("arena.referee")

#: How many ends of matches not yet known to have reached their bot are kept for it
#: (``BotSession.ends``).
MISSED_KEPT = 64
#: The longest match id of a bot's ``Hello.running`` that is answered (this referee's ids
#: are under a hundred characters: a tournament's reach 85, docs/protocol.md).
MAX_MATCH_ID_CHARS = 200


class AuthError(Exception):
    """A stream refused before it starts: ``code`` is the gRPC status to close it with."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


_HTTP_BLANKS = " \t"


def bearer_token(metadata: Any) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode() if isinstance(value, bytes) else str(value)
            # Only HTTP's own blanks: `str.strip()` would also drop U+00A0 and its kind,
            # and a token is compared exactly.
            scheme, _, token = text.strip(_HTTP_BLANKS).partition(" ")
            if scheme.lower() == "bearer" and token.strip(_HTTP_BLANKS):
                return token.strip(_HTTP_BLANKS)
    return None


class RateMeter:
    """Counts events (of a weight each) in a sliding window of ``window`` seconds, against
    ``limit``."""

    __slots__ = ("_limit", "_times", "_total", "_window")

    def __init__(self, limit: int, window: float) -> None:
        self._limit = limit
        self._window = window
        self._times: deque[tuple[float, int]] = deque()
        self._total = 0

    def over(self, loop: asyncio.AbstractEventLoop, weight: int = 1) -> bool:
        """Count an event of ``weight`` now; whether the window now holds more than the
        limit."""
        self.add(loop, weight)
        return self._total > self._limit

    def add(self, loop: asyncio.AbstractEventLoop, weight: int = 1) -> None:
        """Count an event of ``weight`` now."""
        self._times.append((self._expire(loop), weight))
        self._total += weight

    def full(self, loop: asyncio.AbstractEventLoop) -> float:
        """0.0 when one more event now would stay within the limit (it is not counted:
        :meth:`over` counts); else the seconds until it would."""
        now = self._expire(loop)
        total = self._total
        if total < self._limit:
            return 0.0
        for at, weight in self._times:  # oldest first: the order they leave the window
            total -= weight
            if total < self._limit:
                return max(0.001, at + self._window - now)
        return self._window  # (not reached: the limit is at least 1)

    def _expire(self, loop: asyncio.AbstractEventLoop) -> float:
        now = loop.time()
        times = self._times
        while times and times[0][0] < now - self._window:
            self._total -= times.popleft()[1]
        return now


#: The most messages one ``Batch`` carries: bounds a gRPC message (a view is 1–2 KB) and
#: the work a bot must do before it can answer the first of them.
MAX_BATCH = 64

#: The most bytes of messages one ``Batch`` carries (more go in the next): views grow with
#: the deals of a match (every earlier result), and gRPC clients refuse messages over 4 MiB
#: by default.
MAX_BATCH_BYTES = 1 << 20


class Stream:
    """One ``Play`` call: an outgoing queue drained by a writer task.

    With ``batch`` (the bot's Hello lists the "batch" feature), messages that queued up
    while the previous write was in flight go out together in one ``ServerMessage.batch``:
    every gRPC message costs the referee and the bot far more CPU than the protobuf bytes
    in it, and a bot playing at many tables is sent several requests at once. A lone
    message is never held back to wait for company.

    The queue holds at most ``max_queued`` messages (0: no bound). A bot that does not
    read its stream makes gRPC flow control hold the writes, and everything sent to it
    would pile up here without bound; at the bound the stream drops its queue, takes no
    more, sets ``overflowed`` and calls ``stop`` (the stream's handler ends the call
    with RESOURCE_EXHAUSTED).

    :meth:`end` ends the call from the referee's side, with a status, once the queued
    messages are written (``arena serve`` stopping: UNAVAILABLE, so that bots reconnect).
    """

    __slots__ = (
        "_queue", "ahead", "batch", "closed", "deal_once", "ended", "ending", "max_queued",
        "overflowed", "peer", "queued", "results_once", "rival", "stop", "written",
    )  # fmt: skip

    def __init__(self, peer: str, batch: bool = False, max_queued: int = 0) -> None:
        # (a message, or one's wire bytes: a decision request, ``MatchRunner._send_request``)
        self._queue: asyncio.Queue[pb.ServerMessage | bytes | None] = asyncio.Queue()
        self.closed = False
        self.peer = peer
        self.batch = batch
        #: The bot's Hello lists "results_once": its requests' views leave out the deal
        #: results it was sent before on this stream (``PlayerView.deal_results_omitted``).
        self.results_once = False
        #: Its Hello lists "deal_once": likewise the deal's bids and completed tricks of its
        #: last view of the deal (``PlayerView.bids_omitted``, ``tricks_omitted``).
        self.deal_once = False
        #: Its Hello lists "ahead": a ``Decision.ahead`` of its is played as the proto says
        #: (``MatchRunner._ahead``); from a bot that did not ask, ignored.
        self.ahead = False
        self.max_queued = max_queued
        self.overflowed = False
        #: Stops the call's reading (set by its handler): the call then ends.
        self.stop: Callable[[], object] | None = None
        #: Set by :meth:`end`: a handler still waiting for the Hello stops waiting.
        self.ended = asyncio.Event()
        #: Set when another stream of the bot comes while this one still waits for its Hello
        #: (it then has ``core.HELLO_AFTER_RIVAL_S`` left to say it).
        self.rival = asyncio.Event()
        #: (status code, details) the call is to end with, once :meth:`end` was called.
        self.ending: tuple[grpc.StatusCode, str] | None = None
        #: Messages taken so far: the position of the last one in the stream's order.
        self.queued = 0
        #: Writes done (gRPC took them): a client that takes nothing it is sent stops these.
        self.written = 0

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        """Queue ``msg``: a ``ServerMessage``, or the wire bytes of one."""
        if self.closed:
            return
        if self.max_queued and self._queue.qsize() >= self.max_queued:
            self.overflowed = True
            self.close(discard=True)
            if self.stop is not None:
                self.stop()
            return
        self._queue.put_nowait(msg)
        self.queued += 1

    def end(self, code: grpc.StatusCode, message: str, now: bool = False) -> None:
        """End the call with status ``code`` and ``message`` after the queued messages, or
        ``now``: the queue dropped and the reading stopped (a stream replaced by a newer one
        of its bot must neither act for it nor, if its client does not read, live on)."""
        if self.ending is None:
            self.ending = (code, message)
        self.ended.set()
        self.close(discard=now)
        if now and self.stop is not None:
            self.stop()

    def close(self, discard: bool = False) -> None:
        """Take no more messages; the writer ends after writing the queued ones (none of
        them with ``discard``: the call is being refused, or its bot does not read)."""
        if discard:
            q = self._queue
            while not q.empty():
                q.get_nowait()
            self.closed = True
            q.put_nowait(None)  # (again, if the drain took the end mark of a close())
            return
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def write_loop(self, write: Callable[[pb.ServerMessage | bytes], Any]) -> None:
        """Write queued messages in order until :meth:`close` (or the call ends).

        ``write`` is given a ``ServerMessage``, or a batch of them as its wire bytes
        (:func:`arena.protocol.batch_bytes`; ``Play``'s serializer takes both:
        :func:`arena.protocol.message_bytes`)."""
        q = self._queue
        first = True  # the Welcome: alone, whatever queued behind it (the resumed seats)
        carry: pb.ServerMessage | bytes | None = None  # taken, but over a full batch's bytes
        carry_data = b""  # (its bytes)
        while True:
            msg = carry if carry is not None else await q.get()
            data, carry, carry_data = carry_data, None, b""
            if msg is None:
                return
            if first or not self.batch or q.empty():
                first = False
                await write(msg)
                self.written += 1
                continue
            # Each message serialized once and the batch joined from the bytes: copying
            # them into a Batch message, weighing each (ByteSize) and serializing the
            # whole cost about three times as much (the bytes on the wire are the same).
            items = [data or message_bytes(msg)]
            size = len(items[0])
            last = False
            while not q.empty() and len(items) < MAX_BATCH:
                more = q.get_nowait()
                if more is None:
                    last = True
                    break
                more_data = message_bytes(more)
                size += len(more_data)
                if size > MAX_BATCH_BYTES:
                    carry, carry_data = more, more_data
                    break
                items.append(more_data)
            # One message alone (the next would pass the bytes, or was the end mark) goes
            # as itself: a Batch holds several, within MAX_BATCH_BYTES (docs/protocol.md),
            # and one over it wrapped alone was neither.
            await write(batch_bytes(items) if len(items) > 1 else msg)
            self.written += 1
            if last:
                return


class BotSession:
    """A registered bot: name, token, current stream, the match seats it holds."""

    __slots__ = (
        "_away", "_grace", "connects", "ends", "events", "flood", "flood_unlogged",
        "flood_warned_at", "gone", "idle", "matches_left", "name", "open_calls", "reserved",
        "restarted", "seats", "stream", "token", "unseated", "warned_at", "welcomes",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        token: str,
        flood_limit: int = 1000,
        window_s: float = 10.0,
        reconnect_limit: int = 30,
        unseated_answered: int = 20,
    ) -> None:
        self.name = name
        self.token = token
        #: Messages answering no pending request, and streams opened: per bot, so that
        #: reconnecting resets neither (RefereeConfig's flood_limit and reconnect_limit).
        self.flood = RateMeter(flood_limit, window_s)
        self.connects = RateMeter(reconnect_limit, window_s)
        #: Decisions for matches the bot has no seat in that were answered, per window.
        self.unseated = RateMeter(unseated_answered, window_s)
        #: When streams refused for reconnecting too often were last logged (loop time).
        self.warned_at = float("-inf")
        #: When a stream closed for flooding was last logged (a WARNING, once per window:
        #: a bot may open ``reconnect_limit`` streams a window, each flooding at once), and
        #: how many were closed so since, unlogged (the next line says how many).
        self.flood_warned_at = float("-inf")
        self.flood_unlogged = 0
        self.stream: Stream | None = None
        #: The bot's ``Play`` calls let in that gRPC has not finished (see
        #: ``core.MAX_OPEN_STREAMS_PER_BOT``).
        self.open_calls = 0
        #: How many streams of the bot have said Hello (attached).
        self.welcomes = 0
        #: A stream that authenticated and has not said Hello yet.
        self.reserved: Stream | None = None
        #: Events waiting for the next message to this bot (oldest first, any match), each
        #: as the wire bytes of an item of ``ServerMessage.events``: parsed once, with the
        #: message that carries them, not one by one and then copied into it.
        self.events: list[bytes] = []
        #: match_id -> this bot's seat in a running match.
        self.seats: dict[str, SeatState] = {}
        #: match_id -> (stream, position, MatchEnded): the ends of matches not yet known
        #: to have reached the bot (the latest ``MISSED_KEPT``). Sent on the stream of the
        #: time (``None``: the bot was away), and again on every new stream until the bot
        #: answers a request queued after one on the same stream (streams keep order): a
        #: stream that dies, is replaced or is refused may take queued or written messages
        #: with it, and the bot must learn its results. A bot may so get an end twice.
        self.ends: OrderedDict[str, tuple[Stream | None, int, pb.ServerMessage]] = OrderedDict()
        #: How many more matches the bot will play (its Hello's ``matches``; ``None``: no
        #: limit); each seating counts one. The lobby seats no bot at 0.
        self.matches_left: int | None = None
        #: While the bot is away: match_id -> (when that seat's grace period ends, in loop
        #: time; the loop's stalls counted when it was last set). A seat taken while away
        #: gets a whole period from its match's start; the loop's stalls move it on.
        self._away: dict[str, tuple[float, float]] = {}
        #: The timer of the earliest of those ends.
        self._grace: asyncio.TimerHandle | None = None
        #: Why the bot is taken for gone for good, until it connects again: its grace ran
        #: out while it was away (unless ``restarted``), or its supervisor gave it up
        #: (``Referee.given_up``). A match that starts without it meanwhile forfeits its seat
        #: at once: waiting its grace again in each of its later matches stalled a
        #: tournament for minutes on a dead remote bot.
        self.gone: str | None = None
        #: Its process is restarted whenever it dies (a tournament's local bot:
        #: ``Referee.supervise``): its grace running out does not make it ``gone``, as its
        #: restart (a bot loading a model) may take longer than the grace.
        self.restarted = False
        #: Set whenever the bot is connected and sits in no match (the lobby waits on it).
        self.idle = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self.stream is not None

    # ------------------------------------------------------------------ sending
    def send(self, msg: pb.ServerMessage | bytes) -> bool:
        """Queue ``msg`` (a ``ServerMessage`` or its wire bytes; with the buffered events) for
        the bot; ``False`` if not connected."""
        stream = self.stream
        if stream is None:
            return False
        if self.events:
            if isinstance(msg, bytes):
                # ``events`` is the message's last field: its items follow the rest, as
                # protobuf writes them (and the bytes are not parsed here to be written again).
                msg += b"".join(self.events)
            else:
                msg.MergeFromString(b"".join(self.events))  # (appended to ``msg.events``)
            self.events.clear()
        stream.put(msg)
        return True

    def send_end(self, match_id: str, msg: pb.ServerMessage) -> None:
        """Send the ``MatchEnded`` of ``match_id`` now (if connected), and again on each new
        stream until it is known to have arrived (see ``ends``)."""
        # Kept without the events the send piggy-backs on it: those are delivered once (they
        # may be another match's, still running), and a resent end must not repeat them.
        kept = pb.ServerMessage(match_ended=msg.match_ended)
        self.send(msg)
        stream = self.stream
        self.ends[match_id] = (stream, stream.queued if stream is not None else 0, kept)
        self.ends.move_to_end(match_id)
        while len(self.ends) > MISSED_KEPT:
            self.ends.popitem(last=False)

    def confirm(self, stream: Stream, position: int) -> None:
        """The bot answered what ``stream`` carried at ``position``: it has read every
        message queued there before it, the ends of matches among them."""
        # Oldest first, and every entry is on the current stream (attach moves them all)
        # at increasing positions: only the front can be settled.
        ends = self.ends
        while ends:
            mid, (on, k, _) = next(iter(ends.items()))
            if on is not stream or k >= position:
                return
            del ends[mid]

    def lost(self, stream: Stream) -> None:
        """``stream`` ended without the bot leaving it (reset, dropped, refused): the ends
        of matches queued or written on it may never have arrived, as if they had ended
        while the bot was away (an arena that stops waits for such a bot, within its
        grace, to come back for them)."""
        for mid, (on, _, msg) in list(self.ends.items()):
            if on is stream:
                self.ends[mid] = (None, 0, msg)

    def add_event(self, event: pb.Event) -> None:
        """Buffer an event for the next message (dropped while disconnected)."""
        if self.stream is not None:
            self.events.append(event_item(event))

    def flush(self) -> None:
        """Send the buffered events now, in a message of their own."""
        if self.events and self.stream is not None:
            self.send(pb.ServerMessage())

    # ------------------------------------------------------------------ seats
    def update_idle(self) -> None:
        if self.stream is not None and not self.seats:
            self.idle.set()
        else:
            self.idle.clear()

    # ------------------------------------------------------------------ connection
    def call_done(self, _context: object) -> None:
        """gRPC finished one of the bot's ``Play`` calls (its done callback)."""
        self.open_calls -= 1

    def attach(self, stream: Stream) -> None:
        """A stream said Hello: make it the bot's, and resume every seat."""
        self.stream = stream
        self.welcomes += 1
        self.events.clear()
        self._away.clear()
        self.gone = None
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self.update_idle()
        for mid, (_, _, msg) in list(self.ends.items()):
            stream.put(msg)
            self.ends[mid] = (stream, stream.queued, msg)
        for seat in list(self.seats.values()):
            seat.match.on_reconnect(seat)

    def end_unknown(self, running: Iterable[str]) -> None:
        """Tell the bot, as interrupted, each match of ``running`` (its ``Hello.running``:
        the matches it holds as under way) that has neither a seat of it here nor a kept
        end: one of an arena that was killed and started again (its matches died with the
        process), or whose end has fallen out of those kept. A bot keeps a match, and its
        instance of the bot, until it hears that it ended: without this it kept them for
        ever, named them in every Hello, and never said that the match was lost."""
        stream = self.stream
        if stream is None:
            return
        told: set[str] = set()
        # (read no further than a few times what is answered: a Hello of a MiB of ids)
        for mid in itertools.islice(running, 4 * MISSED_KEPT):
            if mid in self.seats or mid in self.ends or mid in told or not mid:
                continue
            if len(mid) > MAX_MATCH_ID_CHARS:  # no match of any arena
                continue
            if len(told) >= MISSED_KEPT:
                break  # (a Hello is the bot's: a flood of ids gets no flood of answers)
            told.add(mid)
            stream.put(
                pb.ServerMessage(
                    match_ended=pb.MatchEnded(
                        match_id=mid, result=pb.MatchResult(reason="interrupted")
                    )
                )
            )

    def detach(self, stream: Stream, grace_s: float, why: str = "stream closed") -> None:
        """The stream ended (``why``, for the record): record a disconnect in each seat;
        forfeit them after grace."""
        if self.stream is not stream:
            return
        self.stream = None
        self.events.clear()
        self.update_idle()
        if not self.seats:
            return
        for seat in list(self.seats.values()):
            seat.match.on_disconnect(seat, why)
        self.start_grace(grace_s)

    def start_grace(self, grace_s: float, match_id: str | None = None) -> None:
        """Forfeit the seat of ``match_id`` (``None``: every seat not yet counting down)
        unless the bot is back within ``grace_s``."""
        loop = asyncio.get_running_loop()
        # The clock read once, the meter as of then: a pause of the process between two
        # reads would come off the bot's grace.
        now = loop.time()
        away = (now + grace_s, loop_lag(loop).stalled(now))
        if match_id is not None:
            # A new seat: a whole period from now, even if an ended match of the same id
            # (``run_match`` takes an ended match's id again) is still counting down.
            self._away[match_id] = away
        else:
            for mid in self.seats:
                self._away.setdefault(mid, away)
        self._arm(loop, grace_s)

    def _arm(self, loop: asyncio.AbstractEventLoop, grace_s: float) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        if self._away:
            until = min(u for u, _ in self._away.values())
            self._grace = loop.call_at(until, self._grace_over, grace_s)

    def _grace_over(self, grace_s: float) -> None:
        self._grace = None
        if self.stream is not None:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        # The loop's stalls are the referee's time, not the bot's (as for a decision): the
        # bot may have come back during one, its new stream not yet taken in.
        stalled = loop_lag(loop).stalled(now)
        for mid, (until, seen) in list(self._away.items()):
            seat = self.seats.get(mid)
            until += stalled - seen
            if seat is None:  # the match has ended
                del self._away[mid]
            elif until <= now + 0.001:  # (the loop runs a timer up to its clock's resolution early)
                del self._away[mid]
                if self.gone is None and not self.restarted:
                    log.warning("bot %s stayed away more than %g s (match %s): it forfeits "
                                "every match that starts without it until it reconnects",
                                self.name, grace_s, mid)  # fmt: skip
                    self.gone = (f"it stayed away more than {grace_s:g} s in match {mid} and "
                                 "has not come back since")  # fmt: skip
                with contextlib.suppress(Exception):
                    seat.match.forfeit(seat, f"disconnected for more than {grace_s:g} s")
            else:
                self._away[mid] = (until, stalled)
        self._arm(loop, grace_s)
