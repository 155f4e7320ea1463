"""Running one match: the true state, the decisions asked of bots, strikes and forfeits.

The match coroutine is the only code that changes its :class:`~engine.Game`. A bot's
answer reaches it through a future (set by the session's reader); everything the match
sends is built from ``observe`` and ``public_action``.

Per decision: the seat to act gets ``observe(game, seat)`` in a ``DecisionRequest`` and
``decision_ms`` plus what is left of its time bank; the wait is cut off there (a
``loop.call_at`` timer that resolves the answer's future with ``_TIMED_OUT``). A late,
malformed or illegal decision is a strike: the referee plays a fallback legal action
(``fallback_action``: a pass where legal, else the first) and tells the bot with
``DecisionRejected``. At ``max_strikes`` strikes, or after a disconnect longer than the
grace period, the seat forfeits: the fallback plays it to the end and it is placed last.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.deadlines import bank_left, timeout_words
from arena.protocol import (
    AHEAD_MOST,
    MalformedActionError,
    action_event_bytes,
    action_event_items,
    action_from_pb,
    action_to_pb,
    card_to_pb,
    deal_result_to_pb,
    decision_request_bytes,
    game_view_bytes,
    match_result_to_pb,
    ruleset_to_pb,
    view_to_pb,
)
from arena.referee.config import RefereeConfig
from arena.referee.lag import LoopLag, loop_lag
from arena.referee.sessions import BotSession, Stream
from arena.render import few_marks, printable
from arena.v1 import arena_pb2 as pb
from engine import (
    Action,
    Bid,
    Game,
    Give,
    IllegalActionError,
    Pass,
    Phase,
    PlayerView,
    Ruleset,
    fallback_action,
    observe,
    public_action,
)
from engine import record as engine_record
from engine.record import forfeit_result
from engine.view import own_next_view, visible_talon

__all__ = ["MatchRunner", "SeatState", "clip"]

log = logging.getLogger("arena.referee")

#: The longest id (request or match id sent by a bot) echoed back or written to a record.
MAX_ID_CHARS = 64


def clip(text: str, limit: int = MAX_ID_CHARS) -> str:
    """``text`` cut to ``limit`` characters (marked with "…"): ids a bot sends are echoed in
    refusals, records and logs, and a bot may send ids of up to a MiB.

    >>> clip("12"), clip("x" * 100, 5)
    ('12', 'xxxx…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: The characters of a ``Decision.failed`` kept in the record (a client may send a MiB).
FAILED_CHARS = 64
#: The grace of a seat whose bot is gone (``BotSession.gone``) as its match starts while a
#: stream of it is saying Hello (as ``core.HELLO_AFTER_RIVAL_S``: one silent that long is
#: taken for dead).
GONE_HELLO_GRACE_S = 1.0


_INCIDENT_PB = {
    "timeout": pb.INCIDENT_TIMEOUT,
    "illegal": pb.INCIDENT_ILLEGAL,
    "malformed": pb.INCIDENT_MALFORMED,
    "wrong_request": pb.INCIDENT_WRONG_REQUEST,
    "disconnect": pb.INCIDENT_DISCONNECT,
    "forfeit": pb.INCIDENT_FORFEIT,
    "bot_error": pb.INCIDENT_BOT_ERROR,
}
_SOURCE_PB = {
    "bot": pb.ACTION_SOURCE_BOT,
    "forced": pb.ACTION_SOURCE_FORCED,
    "fallback": pb.ACTION_SOURCE_FALLBACK,
}
#: What ``_decide`` returns as ``by`` for the bot's answer to a decision its client said
#: failed (``Decision.failed``): recorded ``"by": "bot"`` with ``"failed": true``.
_BOT_FAILED = "bot-failed"
#: The actions of an auction (a tuple: ``Bid | Pass`` would make a union at every use).
_AUCTION_ACTIONS = (Bid, Pass)
#: The source of an action in the events of the seats that did not act (see ``_after``).
_SOURCE_HIDDEN = pb.ACTION_SOURCE_UNSPECIFIED


class _Forfeited:
    """Resolves a pending decision of a seat that forfeited while it was asked."""


_FORFEITED = _Forfeited()


class _TimedOut:
    """Resolves a pending decision whose deadline passed without an answer."""


_TIMED_OUT = _TimedOut()


def _time_out(fut: asyncio.Future[pb.Action | _Forfeited | _TimedOut]) -> None:
    """The deadline timer: cut off the wait unless the answer (or a forfeit) came first."""
    if not fut.done():
        fut.set_result(_TIMED_OUT)


def _ms_up(seconds: float) -> int:
    """``seconds`` in whole ms rounded up, less a nanosecond of float noise (a limit of
    exactly 1 s stated at once is 1000 ms, not 1001)."""
    return math.ceil(seconds * 1000 - 1e-6)


#: How early the event loop may run a timer (asyncio's ``_clock_resolution``).
_CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution


@dataclass(slots=True)
class Pending:
    """A decision request waiting for its answer."""

    request_id: str
    future: asyncio.Future[pb.Action | _Forfeited | _TimedOut]
    #: The request's view: its wire bytes as ``_decide`` writes them (a message in tests
    #: that make a ``Pending`` by hand).
    view: pb.PlayerView | bytes
    deal_number: int
    deadline: float  # loop.time() at which the answer is cut off
    limit_at: float  # loop.time() past which the time bank is used
    #: The stream the request was last sent on, and its position there: an answer proves
    #: that the bot read that stream up to there (``BotSession.confirm``).
    stream: Stream | None = None
    position: int = 0
    #: When the answer was read (loop time): the bot's time ends there, not when the match
    #: task next runs (a loop busy with other matches' work must not cost it its bank).
    answered_at: float | None = None
    #: When the bot's time started (loop time): the request was made, moved on by the
    #: stalls of the referee's loop since (``catch_up``).
    start: float = 0.0
    #: The loop's stall meter, and what it read when this request last caught up with it
    #: (``None``: time is not excused).
    lag: LoopLag | None = None
    lag_seen: float = 0.0
    #: The answer's ``Decision.failed``, when its client set it: the bot's decision failed
    #: and the answer is the client's fallback (a ``bot_error`` incident, no strike).
    failed: str | None = None
    #: The deal number, bids and completed tricks of the request's ``view`` (``None`` in
    #: tests that make a ``Pending`` by hand): what a bot that asked for "deal_once" has of
    #: the deal once it is sent (``SeatState.deal_sent``).
    deal: tuple[int, tuple[Any, ...], tuple[Any, ...]] | None = None
    #: The answer's ``Decision.ahead``, from a bot whose stream agreed "ahead" and whose
    #: answer did not say ``failed`` (the first ``AHEAD_MOST``): its next decisions, chosen
    #: ahead (``MatchRunner._ahead``).
    ahead: tuple[pb.Action, ...] = ()

    def catch_up(self, now: float | None = None) -> None:
        """Move the request's clock, limit and deadline on by the time the referee's loop
        was held up since it last looked, up to ``now`` (the loop's time, read just before
        by the caller that compares with it): that is not the bot's time."""
        if self.lag is None:
            return
        stalled = self.lag.stalled(now)
        lag = stalled - self.lag_seen
        if lag > 0:
            self.lag_seen = stalled
            self.start += lag
            self.limit_at += lag
            self.deadline += lag


@dataclass(slots=True, eq=False)
class SeatState:
    """One bot's seat in one match."""

    match: MatchRunner
    seat: int
    session: BotSession
    bank_ms: int
    strikes: int = 0
    forfeited: bool = False
    pending: Pending | None = None
    wrong_requests: int = 0
    disconnects: int = 0
    #: Decisions its client said failed (``bot_error``): the first few are recorded.
    bot_errors: int = 0
    #: Requests sent to this seat: its request ids count them. One counter per seat, not
    #: per match: a match-wide count would let a seat tell, from the gaps between its own
    #: ids, which of the others' moves were forced (and so what they hold).
    requests: int = 0
    #: The ids of this seat's last requests that timed out (a few: two in a row happen to a
    #: bot still busy with the first): a late answer to one of them is told so.
    timed_out: tuple[str, ...] = ()
    #: The deadline's timer, and the loop time it runs at. One per seat, kept from decision
    #: to decision rather than made and cancelled for each (a timer handle, a heap push and
    #: a cancelled handle for the loop to clear, a few µs a decision): the next request's
    #: deadline is later, and a timer that runs before the pending request's deadline
    #: (``due``) moves on to it. Cancelled when the match ends.
    timer: asyncio.TimerHandle | None = None
    timer_at: float = 0.0
    #: The stream the seat's bot was last sent a view on, and how many of the match's deal
    #: results that bot has had in views there: a request's view on that stream, to a bot
    #: that asked for "results_once", leaves those out (``deal_results_omitted``).
    results_sent: tuple[Stream | None, int] = (None, 0)
    #: The stream the seat's bot was last sent a view on, and that view's deal number, bids
    #: and completed tricks: a request's view of the same deal on that stream, to a bot that
    #: asked for "deal_once", leaves out those bids and tricks (``bids_omitted``,
    #: ``tricks_omitted``) when they are still the first of the deal's (they always are: a
    #: deal's auction and tricks only grow; checked all the same, by identity in C).
    deal_sent: tuple[Stream | None, int, tuple[Any, ...], tuple[Any, ...]] = (None, -1, (), ())
    #: Its bot's last answer, played as its own, came with actions chosen ahead: (the view
    #: it answered, the action played, the actions ahead). Taken by the match's next step,
    #: which plays the first if this seat is asked right then on the view
    #: ``own_next_view`` gives (``MatchRunner._ahead``), and keeps the rest for the next.
    ahead: tuple[PlayerView, Action, tuple[pb.Action, ...]] | None = None

    def arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Have the timer run by ``deadline``: kept if it runs no later, else made again."""
        timer = self.timer
        if timer is not None:
            if self.timer_at <= deadline:
                return
            timer.cancel()
        self.timer_at = deadline
        self.timer = loop.call_at(deadline, self.due)

    def due(self) -> None:
        """The deadline's timer: time out the pending request, unless the loop's stalls
        moved its deadline on or it is a later request's (then run again by its deadline)."""
        self.timer = None
        p = self.pending
        if p is None:
            return
        fut = p.future
        if fut.done():
            return
        loop = fut.get_loop()
        now = loop.time()
        p.catch_up(now)
        # Not "did catch_up move it": a stale answer read during a stall (on_decision) may
        # have caught up first, and this request timed out before its deadline so moved.
        # (The loop runs a timer up to its clock's resolution early.)
        if p.deadline > now + _CLOCK_RESOLUTION:
            self.arm(loop, p.deadline)
        else:
            fut.set_result(_TIMED_OUT)

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class MatchRunner:
    """One match from the first deal to the result (or the interruption)."""

    def __init__(
        self,
        match_id: str,
        ruleset: Ruleset,
        seed: int | str,
        sessions: list[BotSession],
        config: RefereeConfig,
        time_limit_s: float | None = None,
    ) -> None:
        self.match_id = match_id
        if config.ask_forced is not None and config.ask_forced != ruleset.ask_forced:
            # The referee's override is the match's rule: bots and the record say so.
            ruleset = dataclasses.replace(ruleset, ask_forced=config.ask_forced)
        self.ruleset = ruleset
        self.seed = seed
        self.config = config
        self.names = [s.name for s in sessions]
        self.game = Game.new(ruleset, seed, self.names)
        self.seats = [SeatState(self, i, s, config.time_bank_ms) for i, s in enumerate(sessions)]
        self.ask_forced = ruleset.ask_forced
        self.incidents: list[dict[str, Any]] = []
        self.forfeits: list[int] = []
        # (ms, by) per action, per deal number, merged into the engine's record at the end.
        self._meta: list[list[dict[str, Any]]] = [[]]
        self._seq = 0
        self._ruleset_pb = ruleset_to_pb(ruleset)
        self._file: IO[str] | None = None
        self._record_path = Path()
        #: The record file stopped short (a full disk) after the match started: the match
        #: went on, its file is incomplete (``arena serve`` counts them at its end).
        self.record_cut = False
        #: CPU seconds this match spent on its record (built at its end; its file's lines,
        #: with ``record_dir``): the tournament counts it as recording (its bench's share).
        self.record_cpu_s = 0.0
        self._loop = asyncio.get_running_loop()
        self.finished = False
        self.abandoned = False
        #: When the match stops dealing (``time_limit_s`` after its start), and whether it
        #: reached that point.
        self.time_limit_s = time_limit_s
        self._end_at = None if not time_limit_s else self._loop.time() + time_limit_s
        self.time_limited = False

    # ------------------------------------------------------------------ recording
    def _open_record(self, record_dir: Path) -> None:
        record_dir.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.match_id)
        # One file per match: never appended to (another run of `arena serve` into this
        # directory starts its match ids again), so an existing name gets a number.
        path, k = record_dir / f"{safe}.jsonl", 2
        while True:
            try:
                # Its owner's only: the first line holds the seed, from which every hand of
                # the match follows while it is played.
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                self._file = os.fdopen(fd, "w", encoding="utf-8")
                self._record_path = path  # (the file's name is its descriptor's number)
                break
            except FileExistsError:
                path, k = record_dir / f"{safe}.{k}.jsonl", k + 1
        self._write(
            {
                "type": "start",
                "match_id": self.match_id,
                "ruleset": self.ruleset.to_dict(),
                "seed": self.seed,
                "players": self.names,
                "decision_ms": self.config.decision_ms,
                "time_bank_ms": self.config.time_bank_ms,
                "max_strikes": self.config.max_strikes,
                "time": time.time(),
            }
        )

    def _write(self, obj: dict[str, Any]) -> None:
        if self._file is not None:
            t = time.thread_time()
            try:
                self._write_line(self._file, obj)
            finally:
                self.record_cpu_s += time.thread_time() - t

    def _write_line(self, f: IO[str], obj: dict[str, Any]) -> None:
        try:
            f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
            f.flush()
        except OSError as e:
            # A full disk, say. Its first line: the match does not start. Later: the
            # match goes on (its bots still get their result, and whoever called
            # run_match its record); only the file stops where it is.
            self._file = None
            with contextlib.suppress(OSError):
                f.close()
            if obj.get("type") == "start":
                with contextlib.suppress(OSError):
                    self._record_path.unlink()
                raise OSError(e.errno, f"cannot write the record of match {self.match_id} "
                              f"to {self._record_path}: {e.strerror or e}") from e  # fmt: skip
            self.record_cut = True
            log.error("match %s: cannot write its record to %s any more (%s): the match "
                      "goes on, its file is incomplete", self.match_id, self._record_path,
                      e.strerror or e)  # fmt: skip

    def _incident(self, kind: str, seat: int, detail: str) -> dict[str, Any]:
        inc = {"kind": kind, "seat": seat, "deal": self.game.deal_number, "detail": detail}
        self.incidents.append(inc)
        self._write({"type": "incident", **inc})
        log.info("match %s seat %d (%s): %s: %s", self.match_id, seat, self.names[seat],
                 kind, detail)  # fmt: skip
        return inc

    # ------------------------------------------------------------------ running
    async def run(self) -> dict[str, Any]:
        """Play the match to its end and return the record (see docs/referee.md)."""
        if self.config.record_dir is not None:
            self._open_record(Path(self.config.record_dir))
        try:
            for st in self.seats:
                session = st.session
                session.seats[self.match_id] = st
                if session.matches_left:
                    session.matches_left -= 1
                session.update_idle()
            for st in self.seats:
                if st.session.connected:
                    self._send_started(st, resumed=False)
                elif st.session.gone is not None and st.session.reserved is None:
                    # Gone for good as far as anyone knows: its seat forfeits now, rather
                    # than stall the match for a grace (and a tournament for one per match).
                    self.on_disconnect(st, "not connected at the start", then="forfeits at once")
                    self.forfeit(st, f"not connected at the start: {st.session.gone}")
                else:
                    grace = self.config.reconnect_grace_s
                    if st.session.gone is not None:
                        # A stream of it is saying Hello: it may be coming back now, and a
                        # client says its Hello at once. Not a whole grace: a holder of the
                        # token that kept a silent stream open (one every 10 s, the Hello's
                        # timeout) stalled each of the gone bot's matches for a whole grace.
                        grace = min(grace, GONE_HELLO_GRACE_S)
                    self.on_disconnect(
                        st, "not connected at the start", then=f"{grace:g} s to reconnect"
                    )
                    st.session.start_grace(grace, self.match_id)
            await self._play()
            t = time.thread_time()
            rec = self._final_record()
            self.record_cpu_s += time.thread_time() - t
            self._write({"type": "end", "record": rec})
            self._send_ended(match_result_to_pb(rec["result"], sorted(self.forfeits)))
            self.finished = True
            return rec
        except asyncio.CancelledError:
            self._interrupted()
            raise
        except Exception:
            # A bug (or the record's file could not even be opened): the bots must not wait
            # for this match for ever. The caller logs the error.
            if not self.finished:
                self._interrupted()
            raise
        finally:
            for st in self.seats:
                st.disarm()
                st.session.seats.pop(self.match_id, None)
                st.session.update_idle()
                if st.pending is not None and not st.pending.future.done():
                    st.pending.future.cancel()
                st.pending = None
            if self._file is not None:
                self._file.close()
                self._file = None

    async def _play(self) -> None:
        game = self.game
        seats = self.seats
        ask_forced = self.ask_forced
        # The seat whose answer just played carried an action chosen ahead ("ahead").
        prior: SeatState | None = None
        while not game.is_over:
            if self._end_at is not None and self._loop.time() >= self._end_at:
                self._end_after_this_deal()
            if len(self.forfeits) == len(seats):
                # Nobody left to play for: stop rather than let the fallback play forever.
                self.abandoned = True
                return
            seat = game.to_act
            assert seat is not None  # the engine always names a seat until the end
            legal = game.legal_actions()
            st = seats[seat]
            deal = game.deal_number
            ahead = None
            if prior is not None:
                # Only for the very next decision, and only the same seat's.
                if prior is st:
                    ahead = st.ahead
                prior.ahead = None
                prior = None
            if st.forfeited:
                action, by, ms = fallback_action(legal), "fallback", 0
                game.apply_trusted(action)
            elif len(legal) == 1 and not ask_forced:
                action, by, ms = fallback_action(legal), "forced", 0
                game.apply_trusted(action)
            elif ahead is not None and (played := self._ahead(st, ahead, legal)) is not None:
                # The bot's own answer, given with an earlier one: no round trip, and no time
                # of its own (what it took was in that request's).
                action, by, ms = played, "bot", 0
                if st.ahead is not None:
                    prior = st
            else:
                action, by, ms = await self._decide(st, legal)
                if st.ahead is not None:
                    prior = st
            failed = by == _BOT_FAILED
            self._after(seat, action, "bot" if failed else by, ms, deal, failed)

    def _ahead(
        self,
        st: SeatState,
        ahead: tuple[PlayerView, Action, tuple[pb.Action, ...]],
        legal: tuple[Action, ...],
    ) -> Action | None:
        """Play the seat's first action chosen ahead (``Decision.ahead``) and return it, if
        the view it was chosen on (``own_next_view`` of the view answered and the action
        played) is the one the seat would be sent now and it is legal (the rest are kept in
        ``st.ahead`` for the next step); else ``None``: the seat is asked as usual, no
        strike, no incident."""
        answered, played, chosen = ahead
        predicted = own_next_view(answered, played)
        if predicted is None:
            return None
        current = observe(self.game, st.seat)
        if predicted.ruleset is not current.ruleset:
            # The match's time limit capped its deals since that view (``_end_after_this_deal``):
            # a change no view on the wire carries (a bot's ruleset is MatchStarted's), so
            # not one the bot chose on. Asked for it, the bot would learn from being asked
            # that this deal is the match's last (hostile round 54).
            predicted = dataclasses.replace(predicted, ruleset=current.ruleset)
        if predicted != current:
            return None
        try:
            action = action_from_pb(chosen[0])
        except MalformedActionError:
            return None
        for own in legal:
            if own == action:
                self.game.apply_trusted(own)
                if len(chosen) > 1:
                    st.ahead = (predicted, own, chosen[1:])
                return own
        return None

    async def _decide(self, st: SeatState, legal: tuple[Action, ...]) -> tuple[Action, str, int]:
        """Ask the seat's bot; apply its action or the fallback. Returns (action, by, ms);
        ``by`` is :data:`_BOT_FAILED` for the answer of a decision the client said failed."""
        game = self.game
        st.requests += 1
        rid = f"{st.requests}"
        stream = st.session.stream
        on, sent = st.results_sent
        omit = sent if on is not None and on is stream and on.results_once else 0
        # The deal's bids and tricks as the view holds them (``observe`` takes these tuples):
        # read once, for the view and for what it leaves out.
        number, now_bids, now_tricks = game.deal_number, game.auction(), game.tricks
        omit_bids = omit_tricks = 0
        on, deal, bids, tricks = st.deal_sent
        if on is not None and on is stream and on.deal_once and deal == number:
            # (the same tuple when nothing was added: the engine keeps a deal's)
            if bids and (now_bids is bids or now_bids[: len(bids)] == bids):
                omit_bids = len(bids)
            if tricks and (now_tricks is tricks or now_tricks[: len(tricks)] == tricks):
                omit_tricks = len(tricks)
        # The view's bytes straight from the game (``observe``'s view, proved equal by the
        # tests of game_view_bytes), sent as they are (``_send_request``).
        view = game_view_bytes(
            game, st.seat, omit, omit_bids, omit_tricks, legal,
            bids=now_bids, tricks=now_tricks,
        )  # fmt: skip
        budget_ms = self.config.decision_ms + st.bank_ms
        loop = self._loop
        start = loop.time()
        deadline = start + budget_ms / 1000
        fut: asyncio.Future[pb.Action | _Forfeited | _TimedOut] = loop.create_future()
        limit_at = start + self.config.decision_ms / 1000
        lag = loop_lag(loop)
        pending = st.pending = Pending(
            rid, fut, view, number, deadline, limit_at,
            start=start, lag=lag, lag_seen=lag.stalled(start),
            deal=(number, now_bids, now_tricks),
        )  # fmt: skip
        lag.hold()  # (from before the request is queued: it may wait on the loop)
        try:
            self._send_request(st, True)  # (first)
            # A timer (the seat's, see SeatState.timer) rather than asyncio.timeout_at: no
            # context manager, and no task cancellation (and uncancel) to turn into
            # TimeoutError when the deadline passes. A cancellation of the match task still
            # propagates from the await (and the match's end cancels the timer).
            st.arm(loop, pending.deadline)
            answer = await fut
        finally:
            lag.release()
        start = pending.start
        if self._end_at is not None and loop.time() >= self._end_at:
            # Before the answer is applied: it may be the deal's last action (a concession,
            # a throw-in, a card under ``ask_forced``), and the next check would come only
            # after the next deal had been dealt.
            self._end_after_this_deal()
        # A strike is recorded before its fallback is played: the fallback may end the deal,
        # and the incident belongs to the deal it happened in.
        if isinstance(answer, _TimedOut):
            st.pending = None
            st.timed_out = (*st.timed_out[-(_TIMED_OUT_KEPT - 1) :], rid)
            st.bank_ms = 0
            fallback = fallback_action(legal)
            if not st.forfeited:  # (the seat may have forfeited in the same instant: no strike)
                words = timeout_words(self.config.decision_ms, budget_ms - self.config.decision_ms)
                self._strike(st, "timeout", rid, legal, words)
            game.apply_trusted(fallback)
            return fallback, "fallback", budget_ms
        st.pending = None
        answered_at = pending.answered_at if pending.answered_at is not None else loop.time()
        ms = round((answered_at - start) * 1000)
        st.bank_ms = bank_left(st.bank_ms, self.config.decision_ms, ms)
        if isinstance(answer, _Forfeited):
            fallback = fallback_action(legal)
            game.apply_trusted(fallback)
            return fallback, "fallback", ms
        if pending.failed is not None:
            # The bot's client says the bot failed this decision and it sends its own
            # fallback: no strike (the answer is judged as any, below), but the organiser
            # sees the failure in the record, `arena replay` and the bot's page. A client
            # may say so of every answer: only the first few are recorded one by one, all
            # are counted (``bot_errors``), as wrong requests and disconnects are.
            st.bot_errors += 1
        if pending.failed is not None and st.bot_errors <= self.config.max_bot_errors_recorded:
            self._incident(
                "bot_error",
                st.seat,
                f"the bot's decision failed ({pending.failed or 'no reason given'}); its client "
                f"sent its fallback {_decision_text(answer)}",
            )
        try:
            action = action_from_pb(answer)
        except MalformedActionError as e:
            fallback = fallback_action(legal)
            self._strike(st, "malformed", rid, legal, f"malformed action: {e}")
            game.apply_trusted(fallback)
            return fallback, "fallback", ms
        for own in legal:
            if own == action:
                # The engine's own object, equal to the answer (decoded anew from every
                # message): what is applied and sent on is the one whose bytes are kept by
                # its identity (its events, and the views' bids); the answer's missed them.
                if pending.ahead and pending.deal is not None:
                    # The view the bot answered: the game has waited for this answer, so it is
                    # the request's (made only for the answers that carry actions ahead).
                    st.ahead = (observe(game, st.seat), own, pending.ahead)
                game.apply_trusted(own)
                return own, "bot" if pending.failed is None else _BOT_FAILED, ms
        try:
            game.apply(action, seat=st.seat)  # raises, naming the rule broken
        except IllegalActionError as e:
            fallback = fallback_action(legal)
            self._strike(st, "illegal", rid, legal, str(e))
            game.apply_trusted(fallback)
            return fallback, "fallback", ms
        # Not in the legal list yet accepted by the validated door: trust the engine.
        return action, "bot" if pending.failed is None else _BOT_FAILED, ms

    def _strike(
        self,
        st: SeatState,
        kind: str,
        rid: str,
        legal: tuple[Action, ...],
        message: str,
    ) -> None:
        st.strikes += 1
        allowed = self.config.max_strikes
        fallback = fallback_action(legal)
        if kind != "illegal":  # the engine's message already lists the legal actions
            message += f"; legal: {', '.join(str(a) for a in legal)}"
        detail = f"{message}; fallback {fallback}; strike {st.strikes} of {allowed}"
        self._incident(kind, st.seat, detail)
        rej = pb.DecisionRejected(
            request_id=rid,
            match_id=self.match_id,
            incident=_INCIDENT_PB[kind],
            message=message,
            legal_actions=[action_to_pb(a) for a in legal],
            fallback=action_to_pb(fallback),
            strikes=st.strikes,
            strikes_allowed=allowed,
        )
        st.session.send(pb.ServerMessage(decision_rejected=rej))
        if st.strikes >= allowed and not st.forfeited:
            self.forfeit(st, f"{st.strikes} strikes")

    def _after(
        self, actor: int, action: Action, by: str, ms: int, deal: int, failed: bool = False
    ) -> None:
        """Record an applied action and queue its (censored) event for every seat;
        ``failed``: the bot's client said the bot failed this decision and sent the action
        as its own fallback (the record's ``"failed": true``, with ``"by": "bot"``)."""
        game = self.game
        self._seq += 1
        seq = self._seq
        source = _SOURCE_PB[by]
        meta: dict[str, Any] = {"ms": ms, "by": by}
        if failed:
            # (an optional key: a reader that does not know it reads the bot's move, as
            # before; `by` keeps its three values, which older readers check)
            meta["failed"] = True
        self._meta[-1].append(meta)
        if self._file is not None:
            self._write(
                {"type": "action", "deal": deal, "seat": actor, "action": str(action), **meta}
            )
        mid = self.match_id
        # The actor's own event says who chose the action (its bot, the referee's fallback,
        # or forced); the other seats are not told: "forced" would say that the actor had
        # nothing else to play (no other card of the suit, no marriage to bid on), and a
        # fallback, which outside the auction is the first legal action, that he had
        # nothing ordered before it. A third seat sees a give without its card
        # (public_action); the other views are made once each.
        # (Each as the bytes of a message's ``events`` item: parsed with that message.)
        # The actor's and the public event differ in their source only: made together.
        own, public = action_event_items(mid, seq, source, actor, action)
        censored: dict[object, bytes] = {}
        # Only a give is ever seen otherwise by a seat that did not act (``public_action``):
        # for any other action, not asked seat by seat.
        gives = isinstance(action, Give)
        for st in self.seats:
            session = st.session
            if session.stream is None:
                continue  # (as ``BotSession.add_event``: dropped while disconnected)
            seat = st.seat
            if seat == actor:
                ev = own
            elif not gives:
                ev = public
            else:
                seen = public_action(action, actor, seat)
                if seen is action:
                    ev = public
                else:
                    hidden = censored.get(seen)
                    if hidden is None:
                        hidden = censored[seen] = action_event_bytes(
                            mid, seq, _SOURCE_HIDDEN, actor, seen
                        )
                    ev = hidden
            # (the bytes appended as they are: a call an event cost three an action)
            session.events.append(ev)
        if game.deal_number != deal or game.is_over:
            self._deal_ended(deal)
        elif isinstance(action, _AUCTION_ACTIONS) and game.phase is not Phase.BIDDING:
            self._talon_taken()

    def _talon_taken(self) -> None:
        """The auction just ended: its winner takes the talon; each seat is told, with the
        cards if ``observe`` shows them to it (a seat not asked again in the deal, as a
        defender after a concession or the 4-player dealer, would never see them)."""
        game = self.game
        self._seq += 1
        declarer = game.declarer
        assert declarer is not None
        by_cards: dict[object, pb.Event] = {}
        for st in self.seats:
            talon = visible_talon(game, st.seat)  # (observe's own)
            ev = by_cards.get(talon)
            if ev is None:
                ev = by_cards[talon] = pb.Event(match_id=self.match_id, seq=self._seq)
                ev.talon_taken.seat = declarer
                ev.talon_taken.cards.extend(card_to_pb(c) for c in talon or ())
            st.session.add_event(ev)

    def _deal_ended(self, deal: int) -> None:
        game = self.game
        results = game.deal_results
        for res in results[deal:]:
            self._seq += 1
            ev = pb.Event(match_id=self.match_id, seq=self._seq)
            ev.deal_ended.CopyFrom(deal_result_to_pb(res))
            for st in self.seats:
                st.session.add_event(ev)
            self._write(
                {"type": "deal_end", "deal": res.number, "deltas": list(res.deltas),
                 "scores": list(res.scores), "outcome": res.outcome}
            )  # fmt: skip
        if not game.is_over:
            self._meta.append([])
            self._seq += 1
            ev = pb.Event(match_id=self.match_id, seq=self._seq, deal_started=game.deal_number)
            for st in self.seats:
                st.session.add_event(ev)
            for st in self.seats:
                st.session.flush()

    # ------------------------------------------------------------------ messages
    def _send_started(self, st: SeatState, resumed: bool) -> None:
        msg = pb.ServerMessage()
        ms = msg.match_started
        ms.match_id = self.match_id
        ms.seat = st.seat
        ms.players.extend(self.names)
        ms.ruleset.CopyFrom(self._ruleset_pb)
        seen = observe(self.game, st.seat)
        ms.view.CopyFrom(view_to_pb(seen))
        ms.resumed = resumed
        ms.forfeited = st.forfeited
        ms.seq = self._seq
        if st.session.send(msg):
            st.results_sent = (st.session.stream, len(self.game.deal_results))
            st.deal_sent = (st.session.stream, seen.deal_number, seen.bids, seen.tricks)

    def _send_request(self, st: SeatState, first: bool = False) -> None:
        """Send the pending request: ``first``, as it is made (its view's bytes, kept in the
        ``Pending``, joined with its fields into the message's wire bytes:
        ``decision_request_bytes``, the bytes protobuf would write for it), else, asking
        again after a reconnection, in a new message with the view whole."""
        p = st.pending
        assert p is not None
        # The clock read once, the meter as of then (a pause between two reads would be
        # counted in one and not the other).
        now = self._loop.time()
        p.catch_up(now)
        resent = not first
        if first and now > p.start:
            # The bot's clock starts as its request is sent: the time the referee took to
            # make it (a loaded machine not running it for a moment) is the referee's, and
            # the request states the whole ``decision_ms`` and bank.
            late = now - p.start
            p.start = now
            p.limit_at += late
            p.deadline += late
            # The stalls up to ``now`` are in ``late``: from here on only those after it
            # count. (They were counted twice once: ms -1, and the leaderboard refused the
            # record as damaged.) ``catch_up(now)`` just left ``lag_seen`` at the meter's
            # reading as of ``now`` (it moves it on to any higher one, and a reading never
            # falls), so it is not read again here.
        if resent and p.deadline <= now:
            # Past its deadline, its timer not run yet: asked again, "0 ms and 0 ms of bank"
            # would read as a request stating no deadline (the wire's default), and the
            # timer plays the fallback at once anyway.
            return
        # Asked again after a reconnect: what is left of the limit, and of the bank, in
        # whole ms rounded up: a time left under half a ms must not be stated as none.
        left_ms = max(1, _ms_up(p.deadline - now))
        limit = min(max(0, _ms_up(p.limit_at - now)), left_ms)
        msg: pb.ServerMessage | bytes
        if first:
            assert type(p.view) is bytes
            msg = decision_request_bytes(
                p.request_id, self.match_id, p.deal_number, p.view, limit, left_ms - limit
            )
        else:
            msg = pb.ServerMessage()
            v = pb.PlayerView.FromString(p.view) if isinstance(p.view, bytes) else p.view
            if v.deal_results_omitted or v.bids_omitted or v.tricks_omitted:
                # Its results (bids, tricks) left out for the stream it was first sent on:
                # whole here (the game waits for this answer, so it is the same view).
                view_to_pb(observe(self.game, st.seat), msg.decision_request.view)
            else:
                msg.decision_request.view.CopyFrom(v)
            req = msg.decision_request
            req.request_id = p.request_id
            req.match_id = self.match_id
            req.deal_number = p.deal_number
            req.time_limit_ms = limit
            req.time_bank_ms = left_ms - limit
        session = st.session
        if session.send(msg):
            # The results its view holds: one a deal scored before this one, deals counted
            # from 0 (``Game._score`` adds the result, then counts the deal), and the game
            # waits for this answer, asked again or not: the request's deal number, with no
            # call into the engine (``deal_results``, a property) to count them.
            st.results_sent = (session.stream, p.deal_number)
            if p.deal is not None:
                st.deal_sent = (session.stream, *p.deal)
            # A request sent again has an id known from an earlier stream: its answer
            # proves nothing read on this one, so it settles no end of a match queued before
            # it (BotSession.confirm); the bot's next request will.
            p.stream = None if resent else session.stream
            p.position = p.stream.queued if p.stream is not None else 0

    def _send_ended(self, result: pb.MatchResult, final_view: bool = True) -> None:
        """Tell every seat the match ended (now, or when its bot is back), with its final
        view unless the match was interrupted."""
        for st in self.seats:
            msg = pb.ServerMessage()
            me = msg.match_ended
            me.match_id = self.match_id
            me.result.CopyFrom(result)
            if final_view:  # (ended: a match every seat forfeited stopped mid-deal)
                me.view.CopyFrom(view_to_pb(observe(self.game, st.seat, ended=True)))
            st.session.send_end(self.match_id, msg)

    # ------------------------------------------------------------------ from sessions
    def on_decision(self, st: SeatState, decision: pb.Decision) -> bool:
        """A ``Decision`` for this match from the seat's bot (called by the session reader).

        Returns whether it answered the pending request (the stream counts the others).
        """
        p = st.pending
        # The answer is read now: the clock first, the meter as of then (read the other way
        # round, a pause of the process between the two was charged to the bot, and could
        # turn an answer read in time into a timeout).
        now = self._loop.time()
        if p is not None:
            p.catch_up(now)
        if p is not None and now >= p.deadline:
            # Read past the deadline, before its timer ran (a loop held up runs the two in
            # the order they became ready): a timeout, as if the timer had come first.
            _time_out(p.future)
        if p is None or p.request_id != decision.request_id or p.future.done():
            self.reject_wrong_request(st, decision, _not_pending(st, p, decision.request_id))
            return False
        st.pending = None
        p.answered_at = now
        if decision.HasField("failed"):  # (a client before the field never sets it)
            # A bot's text, shown in the referee's log on a terminal and on the web: its
            # escape sequences and direction marks (U+202E turned the rest of the line
            # round) written out, as `arena replay` shows a record's names; and combining
            # marks past a letter's few (60 over one letter drew a tower over the page).
            p.failed = few_marks(printable(clip(decision.failed, FAILED_CHARS)))
        elif decision.ahead:
            stream = st.session.stream
            if stream is not None and stream.ahead:
                p.ahead = tuple(decision.ahead[:AHEAD_MOST])
        p.future.set_result(decision.action)
        if p.stream is not None:
            st.session.confirm(p.stream, p.position)
        return True

    def reject_wrong_request(self, st: SeatState, decision: pb.Decision, why: str) -> None:
        """Refuse an answer to a request that is not pending; nothing in the game changes.

        Only the first ``config.max_wrong_recorded`` of a seat are recorded and answered, so
        a flooding bot cannot grow the record or make the referee write without bound; the
        rest are counted (``wrong_requests`` in the record).
        """
        st.wrong_requests += 1
        if st.wrong_requests > self.config.max_wrong_recorded:
            return
        text = _decision_text(decision.action)
        # Those of the pending request only: an answer handled just before this one (say,
        # earlier in the same batch) leaves the seat to act until the match task runs again.
        p = st.pending
        legal = self.game.legal_actions() if p is not None and not p.future.done() else ()
        rid = clip(decision.request_id)  # a bot's id, up to a MiB: not echoed in full
        message = (
            f"decision {text} for request {rid!r} refused: {why}; legal now: "
            f"{', '.join(str(a) for a in legal) or 'nothing (no request of yours pending)'}"
        )
        self._incident("wrong_request", st.seat, message)
        rej = pb.DecisionRejected(
            request_id=rid,
            match_id=self.match_id,
            incident=pb.INCIDENT_WRONG_REQUEST,
            message=message,
            legal_actions=[action_to_pb(a) for a in legal],
            strikes=st.strikes,
            strikes_allowed=self.config.max_strikes,
        )
        st.session.send(pb.ServerMessage(decision_rejected=rej))

    def on_disconnect(
        self, st: SeatState, why: str = "stream closed", then: str | None = None
    ) -> None:
        """The seat's stream ended (``why``; ``then``: what follows, by default the grace to
        reconnect). Only the first ``max_disconnects_recorded``
        are recorded one by one (all are counted: ``disconnects`` in the record), so a bot
        that reconnects in a loop cannot grow the record without bound. A seat that has
        forfeited may leave: not counted (the leaderboard counts the totals)."""
        if st.forfeited:
            return
        st.disconnects += 1
        if st.disconnects <= self.config.max_disconnects_recorded:
            then = then or f"{self.config.reconnect_grace_s:g} s to reconnect"
            self._incident("disconnect", st.seat, f"{why}; {then}")

    def on_reconnect(self, st: SeatState) -> None:
        self._send_started(st, resumed=True)
        if st.pending is not None and not st.pending.future.done():
            self._send_request(st)

    def forfeit(self, st: SeatState, why: str) -> None:
        """The seat forfeits: the fallback plays it to the end; it places last."""
        if st.forfeited or self.finished:
            return
        st.forfeited = True
        self.forfeits.append(st.seat)
        self._incident("forfeit", st.seat, why)
        p = st.pending
        if p is not None and not p.future.done():
            st.pending = None
            # Its time ends now, less the loop's stalls (as an answer's), not when the match
            # task next runs.
            now = self._loop.time()
            p.catch_up(now)
            p.answered_at = now
            p.future.set_result(_FORFEITED)

    # ------------------------------------------------------------------ the record
    def _merge_meta(self, rec: dict[str, Any]) -> None:
        for d, meta in zip(rec["deals"], self._meta, strict=False):
            for entry, m in zip(d["actions"], meta, strict=False):
                entry.update(m)

    def _end_after_this_deal(self) -> None:
        """The time limit is reached (checked before each action, and again when a bot's
        answer comes, before it is applied): the match ends after the deal in progress,
        placed by score as at a ``max_deals`` cap. A seat that is behind cannot stop its
        result from being stored by playing slowly (a match over a wall-clock limit that
        failed instead would be played again, from the same seed, until it went the slow
        seat's way). The record's ruleset names the cap it ended at, so it replays to its result.
        """
        self._end_at = None
        game = self.game
        cap = game.deal_number + 1  # (deal numbers count from 0 until a deal is scored)
        if not game.ruleset.max_deals or game.ruleset.max_deals > cap:
            game.ruleset = dataclasses.replace(game.ruleset, max_deals=cap)
            self.time_limited = True
            log.info("match %s reached its time limit of %g s: it ends after deal %d",
                     self.match_id, self.time_limit_s, cap)  # fmt: skip

    def _record_so_far(self) -> dict[str, Any]:
        """The engine's record with the additions of every referee record, final or not."""
        rec = engine_record(self.game)
        self._merge_meta(rec)
        rec["match_id"] = self.match_id
        rec["incidents"] = self.incidents
        rec["forfeits"] = sorted(self.forfeits)
        # The per-seat totals (incidents list only the first few of each kind), of what was
        # played: an interrupted match's record has them too (it once had none, and its
        # `arena replay` showed at most the listed ones of a seat that flooded).
        rec["wrong_requests"] = [st.wrong_requests for st in self.seats]
        rec["disconnects"] = [st.disconnects for st in self.seats]
        rec["bot_errors"] = [st.bot_errors for st in self.seats]
        return rec

    def _final_record(self) -> dict[str, Any]:
        rec = self._record_so_far()
        if self.time_limited:
            rec["time_limit_s"] = self.time_limit_s
        if self.abandoned:
            # Every seat forfeited: the match stops where it is; all are placed last (place
            # n: nobody is credited a first place), and the rules have no result of it.
            n = len(self.seats)
            rec["abandoned"] = True
            rec["rules_result"] = None
            rec["result"] = {
                "scores": list(self.game.scores), "places": [n] * n,
                "shortfalls": [max(0, self.ruleset.target - s) for s in self.game.scores],
                "winner": None, "deals": self.game.deal_number, "reason": "forfeits",
                "forfeits": sorted(self.forfeits),
            }  # fmt: skip
        elif self.forfeits and rec["result"] is not None:
            rec["rules_result"] = dict(rec["result"])
            rec["result"] = forfeit_result(rec["result"], self.forfeits, self.ruleset.target)
        return rec

    def _interrupted(self) -> None:
        """Cancelled (shutdown): record the match so far as interrupted and tell the bots."""
        try:
            rec = self._record_so_far()
            if self.time_limited:  # (its ruleset's max_deals is the limit's)
                rec["time_limit_s"] = self.time_limit_s
            rec["interrupted"] = True
            self._write({"type": "interrupted", "record": rec})
            # deals numbered from 1, as `arena replay` and the SDK's logs say them
            log.warning("match %s interrupted in deal %d", self.match_id,
                        self.game.deal_number + 1)  # fmt: skip
            # The bots must learn it too: a bot keeps a match (and its instance of the bot)
            # until it hears that it ended.
            interrupted = pb.MatchResult(
                scores=self.game.scores, deals=self.game.deal_number, reason="interrupted",
                forfeits=sorted(self.forfeits),
            )  # fmt: skip
            self._send_ended(interrupted, final_view=False)
        except Exception:  # never let recording hide the cancellation
            log.exception("match %s: could not record the interruption", self.match_id)


#: How many of a seat's timed-out request ids are kept, to tell late answers so.
_TIMED_OUT_KEPT = 8


def _not_pending(st: SeatState, p: Pending | None, rid: str) -> str:
    """Why the answer to request ``rid`` of seat ``st`` is refused (``p``: what is pending)."""
    if rid in st.timed_out and not st.forfeited:
        # A late answer, whether or not the seat has been asked again since.
        again = "" if p is None else f"; the pending request is {p.request_id!r}"
        return f"request {rid!r} timed out: the fallback was played{again}"
    if p is not None and p.request_id == rid:
        # The deadline's timer resolved the wait; the match has not moved on yet.
        return f"request {rid!r} timed out: the fallback is played"
    if st.forfeited:
        return "the seat has forfeited: it is asked nothing more"
    detail = "no decision of yours is pending" if p is None else (
        f"the pending request is {p.request_id!r}"
    )  # fmt: skip
    return f"{_settled(st, rid)} ({detail})"


def _settled(st: SeatState, rid: str) -> str:
    """What request ``rid`` of seat ``st`` is, when it is neither pending nor a timed-out one
    the seat keeps. The referee knows which: ids count the seat's requests, so a bot told
    "unknown, stale or not yours" could not tell a duplicate answer (its first one counted)
    from an id it made up or one not yet asked."""
    # (a bot's id may be a MiB of digits: int() of it would be slow, or refused)
    n = int(rid) if rid.isascii() and rid.isdigit() and len(rid) <= 9 else 0
    if n < 1 or rid != str(n):
        return f"{clip(rid)!r} is no request id: they count the seat's requests, '1', '2', ..."
    if n > st.requests:
        return f"request {rid!r} has not been sent to this seat"
    # Every timed-out id from the oldest kept on is kept: one before it may have timed out.
    if len(st.timed_out) < _TIMED_OUT_KEPT or n > int(st.timed_out[0]):
        return f"request {rid!r} was answered already"
    return f"request {rid!r} was answered or timed out already"


def _decision_text(action: pb.Action) -> str:
    try:
        return f"{str(action_from_pb(action))!r}"
    except MalformedActionError as e:
        return f"(malformed: {e})"
