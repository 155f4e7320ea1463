"""A decision's clock (docs/protocol.md "Time"), proved by a property test on a fake clock.

The real ``Referee``/``MatchRunner`` plays a one-deal match on an event loop whose clock
only the test moves (``VirtualLoop``): waiting costs no real time, and a *pause* (the
process not run for a moment: a loaded machine, a GC pass) can be put right after any read
of the clock, by asyncio's own loop, the stall meter (``LoopLag``) or the match's code, so
between every two reads. Every such pause is the referee's time. Each bot answers each
request after a think time of its own (another host: the referee's pauses do not hold it
up), its answer read when the referee's loop comes to it.

For every request, with ``sent`` the moment the referee starts sending it, ``read`` the
moment it starts reading the answer, ``wall`` the time between, ``paused`` the pauses in
between (``n`` of them) and ``slack`` = ``LoopLag.PERIOD + LoopLag.TOLERANCE`` (how short
the meter may count one stall):

1. the recorded ``ms`` is ≥ 0;
2. ``ms`` ≤ ``wall`` (+ half a ms of rounding);
3. ``ms`` ≥ ``wall`` − ``paused`` (the meter never excuses more than the loop stalled), and
   ``ms`` ≤ ``wall`` − ``paused`` + ``n`` × ``slack`` (it excuses every stall but that);
4. the first send states ``time_limit_ms`` + ``time_bank_ms`` = ``decision_ms`` + the
   bank left, the limit being ``decision_ms``;
5. an answer whose bot time (``wall`` − ``paused``) is under the budget less ``n`` ×
   ``slack`` is never a timeout; one over the budget always is;
6. the bank left is never negative nor more than before; an answer takes what it used over
   ``decision_ms`` off it, a timeout all of it;
7. asked again after a reconnect, a request states what is left of the limit and of the
   budget (rounded up, at least 1 ms; the bot time so far counted as in 3).

Two defects it found (each with an example test below): ``on_decision`` read the meter,
then the clock (a pause between the two was the bot's time, and could make an answer read
in time a timeout); and the deadline's timer timed a request out unless its own catch-up
moved the deadline, when a stale answer read in the same stall had moved it already.
The double count fixed in tests/arena/test_flakes_round40c.py is found too (ms -8).
"""

from __future__ import annotations

import asyncio
import dataclasses
import selectors
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.deadlines import bank_left
from arena.referee import Referee, RefereeConfig
from arena.referee import match as match_module
from arena.referee.lag import LoopLag
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.support.harness import as_message

NAMES = ("a", "b", "c")
ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)
SLACK_S = LoopLag.PERIOD + LoopLag.TOLERANCE
DECISION_MS = 100
BANK_MS = 60
EPS_MS = 0.5 + 1e-6  # round() to whole ms


class _VirtualSelector:
    """The loop's selector, its waits taking no real time: the clock jumps by them."""

    def __init__(self, loop: VirtualLoop, real: selectors.BaseSelector) -> None:
        self._loop = loop
        self._real = real

    def select(self, timeout: float | None = None) -> list[Any]:
        events = self._real.select(0)
        if not events and timeout:
            assert timeout is not None, "the loop would wait for ever"
            self._loop.now += timeout
        return events

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on a clock of the test's: ``pauses`` maps the index of a read of the
    clock to the seconds the process is paused right after it."""

    def __init__(self, pauses: dict[int, float]) -> None:
        super().__init__()
        self._selector = _VirtualSelector(self, self._selector)  # type: ignore[has-type]
        self.now = 1000.0
        self.reads = 0
        self.pauses = pauses
        #: A pause after the first read by a function of that name.
        self.pause_once: dict[str, float] = {}
        #: (the read it followed, seconds, where: the function that read the clock).
        self.paused: list[tuple[int, float, str]] = []

    def time(self) -> float:
        t = self.now
        pause = self.pauses.get(self.reads)
        self.reads += 1
        where = sys._getframe(1).f_code.co_name
        pause = pause or self.pause_once.pop(where, 0)
        if pause:
            self.pause(pause, where)
        return t

    def pause(self, seconds: float, where: str) -> None:
        """The process paused ``seconds``, here (after the last read of the clock)."""
        self.paused.append((self.reads - 1, seconds, where))
        self.now += seconds

    def paused_between(self, a: int, b: int) -> list[tuple[int, float, str]]:
        """The pauses after read ``a`` and before read ``b`` (by their order: a pause
        takes time, not the code around it)."""
        return [p for p in self.paused if a <= p[0] < b]


@dataclasses.dataclass
class Asked:
    seat: int
    rid: str
    sent: float
    sent_at_read: int  # (how many reads of the clock had been made)
    limit_ms: int = -1
    bank_ms: int = -1
    read: float | None = None
    #: Asked again after a reconnect: (when, the read count then, limit, bank stated).
    resent: list[tuple[float, int, int, int]] = dataclasses.field(default_factory=list)
    read_at_read: int = 0
    ms: int | None = None
    by: str = ""
    timed_out: bool = False


def play(
    monkeypatch: pytest.MonkeyPatch,
    pauses: dict[int, float],
    thinks: list[float],
    think_of: dict[tuple[int, str], float] | None = None,
    loop: VirtualLoop | None = None,
    away: dict[tuple[int, str], float] | None = None,
    grace_s: float = 60,
    decision_ms: int = DECISION_MS,
) -> tuple[VirtualLoop, list[Asked]]:
    """One deal with the pauses and the bots' think times (in turn, round and round, but
    those of ``think_of`` by (seat, request id)); a bot is away for ``away`` s (by seat and
    request id) from the moment it gets that request, and answers it as asked again. Every
    request, as the test saw it."""
    away = dict(away or {})
    loop = loop or VirtualLoop(pauses)
    asked: dict[tuple[int, str], Asked] = {}
    order: list[Asked] = []
    send, decide = match_module.MatchRunner._send_request, match_module.MatchRunner._decide

    def send_request(self: Any, st: Any, msg: Any = None) -> None:
        key = (st.seat, st.pending.request_id)
        if msg is not None:  # its first send: the bot's time starts here
            a = asked[key] = Asked(st.seat, st.pending.request_id, loop.now, loop.reads)
            order.append(a)
        else:
            asked[key].resent.append((loop.now, loop.reads, -1, -1))
        send(self, st, msg)

    async def decide_seen(self: Any, st: Any, legal: Any) -> Any:
        rid = f"{st.requests + 1}"  # (as _decide names it)
        out = await decide(self, st, legal)
        a = asked[(st.seat, rid)]
        a.ms = out[2]
        a.timed_out = a.rid in st.timed_out
        a.by = out[1]
        return out

    monkeypatch.setattr(match_module.MatchRunner, "_send_request", send_request)
    monkeypatch.setattr(match_module.MatchRunner, "_decide", decide_seen)

    async def main() -> None:
        ref = Referee(
            RefereeConfig(
                decision_ms=decision_ms,
                time_bank_ms=BANK_MS,
                max_strikes=99,
                reconnect_grace_s=grace_s,
            )
        )
        n = [0]

        def read(a: Asked, bot: str, d: pb.Decision) -> None:
            a.read, a.read_at_read = loop.now, loop.reads  # (before its first read of the clock)
            ref.on_decision(ref.session(bot), d)

        class Bot(Stream):
            """A bot that answers ``think`` s after a request is queued for it."""

            __slots__ = ("bot",)

            def put(self, msg: pb.ServerMessage | bytes) -> None:
                msg = as_message(msg)  # (a request comes as its wire bytes)
                super().put(msg)
                if not msg.HasField("decision_request"):
                    return
                r = msg.decision_request
                a = asked[(self.bot, r.request_id)]
                if a.resent:
                    a.resent[-1] = (*a.resent[-1][:2], r.time_limit_ms, r.time_bank_ms)
                else:
                    a.limit_ms, a.bank_ms = r.time_limit_ms, r.time_bank_ms
                gone = away.pop((self.bot, r.request_id), None)
                if gone is not None:  # away at once, back after ``gone`` s
                    loop.call_soon(self.leave, gone)
                    return
                think = thinks[n[0] % len(thinks)]
                n[0] += 1
                think = (think_of or {}).get((self.bot, r.request_id), think)
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                # Back ``think`` s after it was queued, read when the loop comes to it.
                loop.call_at(loop.now + think, read, a, NAMES[self.bot], d)

            def leave(self, gone: float) -> None:
                session = ref.session(NAMES[self.bot])
                session.detach(self, grace_s=grace_s)
                back = Bot(f"fake-{NAMES[self.bot]}-again")
                back.bot = self.bot
                loop.call_later(gone, session.attach, back)

        for seat, name in enumerate(NAMES):
            ref.add_bot(name, f"tok-{name}")
            stream = Bot(f"fake-{name}")
            stream.bot = seat
            ref.session(name).attach(stream)
        await ref.run_match("m1", ONE_DEAL, 7, list(NAMES))
        await asyncio.sleep(
            max([*thinks, *(think_of or {}).values()]) + 1
        )  # the late answers, read too

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return loop, order


def check(loop: VirtualLoop, order: list[Asked]) -> None:
    bank = {s: BANK_MS for s in range(3)}
    assert order
    for a in order:
        where = f"request {a.rid} of seat {a.seat}: {a}; pauses {loop.paused}"
        assert a.ms is not None, where
        if a.read is None:  # never answered: away till after its deadline
            assert a.timed_out and a.ms == DECISION_MS + bank[a.seat], where
            bank[a.seat] = 0
            continue
        # 4: the whole limit and what is left of the bank, stated at the first send.
        if a.limit_ms >= 0 or not a.resent:  # (else first sent while its bot was away)
            assert (a.limit_ms, a.bank_ms) == (DECISION_MS, bank[a.seat]), where
        budget_ms = DECISION_MS + bank[a.seat]
        paused = loop.paused_between(a.sent_at_read, a.read_at_read)
        wall_ms = (a.read - a.sent) * 1000
        bot_ms = wall_ms - sum(p[1] for p in paused) * 1000
        slack_ms = len(paused) * SLACK_S * 1000
        # 5: a timeout exactly when the bot's time is over its budget (the meter's slack).
        if bot_ms < budget_ms - slack_ms - EPS_MS:
            assert not a.timed_out, where
        if bot_ms > budget_ms + EPS_MS:
            assert a.timed_out, where
        # After a reconnect: what is left of the limit and the bank, rounded up.
        for when, at_read, limit, left_bank in a.resent:
            if limit < 0:  # (not asked again: its deadline had passed)
                continue
            so_far = loop.paused_between(a.sent_at_read, at_read)
            used_ms = (when - a.sent) * 1000 - sum(p[1] for p in so_far) * 1000
            may_ms = len(so_far) * SLACK_S * 1000  # (how much of that may be charged)
            left = limit + left_bank
            assert 1 <= left <= budget_ms - used_ms + 1 + EPS_MS, where
            assert left >= min(budget_ms - used_ms - may_ms, budget_ms) - EPS_MS, where
            assert limit <= max(0, DECISION_MS - used_ms) + 1 + EPS_MS, where
            assert limit >= min(DECISION_MS - used_ms - may_ms, left) - EPS_MS, where
        before = bank[a.seat]
        if a.timed_out:
            assert a.ms == budget_ms, where
            bank[a.seat] = 0
            continue
        # 1-3: the bot's time, less the referee's.
        assert a.ms >= 0, where
        assert a.ms <= wall_ms + EPS_MS, where
        assert bot_ms - EPS_MS <= a.ms <= bot_ms + slack_ms + EPS_MS, where
        # 6: the bank.
        bank[a.seat] = bank_left(before, DECISION_MS, a.ms)
        assert 0 <= bank[a.seat] <= before, where


#: Pauses: under the meter's tolerance, about a period, and well over it.
PAUSE = st.sampled_from([0.002, 0.009, 0.02, 0.045, 0.13])
#: Think times about the limit and the budget (s).
THINK = st.sampled_from([0.0, 0.001, 0.03, 0.0995, 0.1, 0.101, 0.14, 0.155, 0.1605, 0.2])


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pauses=st.dictionaries(st.integers(0, 900), PAUSE, max_size=25),
    thinks=st.lists(THINK, min_size=1, max_size=8),
    away=st.dictionaries(
        st.tuples(st.integers(0, 2), st.integers(1, 9).map(str)),
        st.sampled_from([0.0, 0.02, 0.07, 0.12, 0.3]),
        max_size=3,
    ),
)
def test_a_decisions_time_is_the_bots_whatever_the_pauses(
    monkeypatch: pytest.MonkeyPatch,
    pauses: dict[int, float],
    thinks: list[float],
    away: dict[tuple[int, str], float],
) -> None:
    with monkeypatch.context() as m:
        loop, order = play(m, pauses, thinks, away=away)
    check(loop, order)


def test_a_pause_as_an_answer_is_read_is_not_the_bots_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: ``on_decision`` read the stall meter, then the clock: a pause of the process
    between the two (0.2 s here, after the answer was read) was charged to the bot, its
    ``ms`` over the time from sending to reading, and an answer read 10 ms before its
    deadline was a timeout."""
    loop = VirtualLoop({})
    catch_up = match_module.Pending.catch_up

    def catch_up_then_paused(self: Any, *now: float | None) -> None:
        catch_up(self, *now)
        if sys._getframe(1).f_code.co_name == "on_decision":
            loop.pause(0.2, "on_decision")

    monkeypatch.setattr(match_module.Pending, "catch_up", catch_up_then_paused)
    loop, order = play(monkeypatch, {}, [0.01, 0.09], loop=loop)
    assert len(loop.paused) > 6 and len(order) > 6
    assert not any(a.timed_out for a in order), order  # (the 0.09 s ones were)
    check(loop, order)


def test_a_stale_answer_read_in_a_stall_does_not_time_out_the_next_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: a late answer to a request that had timed out, read during a stall, caught
    the bot's next request up with the stall (its deadline moved on); the deadline's timer,
    running next, saw no move of its own and timed the request out before its deadline
    (``Pending.due``). Here seat 0's first answer is late (0.2 s of a 0.16 s budget); a pause
    of 0.13 s follows the sending of its second request, answered in 0.12 s."""
    loop = VirtualLoop({})
    send = match_module.MatchRunner._send_request

    def send_then_paused(self: Any, st: Any, msg: Any = None) -> None:
        send(self, st, msg)
        if (st.seat, st.pending.request_id) == (0, "2"):
            loop.pause(0.13, "after sending")

    monkeypatch.setattr(match_module.MatchRunner, "_send_request", send_then_paused)
    think_of = {(0, "1"): 0.2, (0, "2"): 0.12}
    loop, order = play(monkeypatch, {}, [0.0], think_of, loop=loop)
    first, second = (a for a in order if a.seat == 0 and a.rid in ("1", "2"))
    assert first.timed_out and first.read_at_read < second.read_at_read  # (read first)
    assert not second.timed_out, second  # (was a timeout)
    check(loop, order)


def test_a_pause_as_a_bot_leaves_does_not_shorten_its_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: a bot's grace period to reconnect was started from the clock, then the stall
    meter read (``BotSession.start_grace``): a pause of the process between the two reads
    (0.13 s here) came off the bot's grace, so a bot away 0.45 s of a 0.5 s grace forfeited.
    Read as of one moment, the pause is a stall of the referee's, excused as any other."""
    loop = VirtualLoop({})
    loop.pause_once["start_grace"] = 0.13
    loop, order = play(
        monkeypatch, {}, [0.0], loop=loop, away={(0, "1"): 0.45}, grace_s=0.5,
        decision_ms=5_000,
    )  # fmt: skip
    assert loop.paused and loop.paused[0][2] == "start_grace"
    first = next(a for a in order if (a.seat, a.rid) == (0, "1"))
    assert first.resent and first.by == "bot", first  # (it forfeited: "fallback")
