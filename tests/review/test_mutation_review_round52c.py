"""Review round 52 (c): hand mutants of round 52's SDK and referee changes (sdk/client.py's
request asked again after a reconnect, forfeits, "joined under way", the quick bot's second
slow call, sdk/cli.py's last line and repeatable --vs; arena/referee/core.py's ``failed``
texts and refused openings' log quotas; arena/referee/config.py's ``names_not_reaching``,
arena serve's ``_tls_names`` and the tournament's ``_check_server_name``). Each test names
the mutants it kills.

58 hand mutants of the diff: the existing tests (round 52's own files, the doctests, the
referee's limits) killed 35; the tests here kill 18 more; 5 are equivalent (bank-le-bound:
a measured float equal to the bank; bank-used-as-over: ``used`` is ``over`` when the limit
is 0; flood-told-nohas: an unset ``failed`` measured as ""; tls-name-brackets: no
certificate name (canonicalised by ``cert_names``) nor a resolvable server_name has
brackets; tls-localhost-fallthrough: "localhost" is no address either); none is left.
6 more mutants of the fixes below (each one reverted, or half of it): all killed, 5 by
the tests here.

Defects fixed, each with its test here:

- A quick bot's second slow call exactly 100 calls after the first sent it to a worker
  thread, saying "the second of its last 101 calls there", against the docs' "a second
  call over 5 ms within 100".
- A seat struck out (timeout, strike 3 of 3) whose late answer was then refused as a
  wrong request (that refusal states the seat's strikes, 3 of 3, too) was said to have
  forfeited "struck out (wrong_request, no strike, said above)".
- A match whose bot could not be made (its ``__init__`` raised), whose seat the arena
  forfeited, counted in ``RunSummary.matches`` but not in ``forfeits``: "1 match(es), ...,
  1 bot error(s), 0 forfeited".
- A ``failed`` text weighed nothing toward the flood limit however long: the padding the
  weight of answers is for moved there (127 KiB with each answer weighed nothing, where
  the same bytes in an unknown field weigh 127). It has 16 KiB now, past which it weighs.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from arena.referee import Referee, RefereeConfig
from arena.referee.config import names_not_reaching
from arena.referee.core import REFUSALS_LOGGED
from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView
from engine.view import observe
from sdk import Bot, client
from sdk.bot import Deadline
from sdk.client import BotRunner, _Match, _tell_bank
from tests.sdk.test_hostile_arena import (
    WELCOME,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _ending
from tests.sdk.test_reconnect_round52 import Thinks, _forfeit_lines, _forfeited

# ----------------------------------------------------------------- the time bank's lines


def _bank_said(
    caplog: pytest.LogCaptureFixture, limit_s: float, bank_s: float, ago: float, **kw: bool
) -> tuple[list[str], bool]:
    """_tell_bank of a decision received ``ago`` s ago: its warnings, and bank_told."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    view = observe(g, seat)
    m = _Match("m1", seat, g.ruleset, Thinks(), view)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        _tell_bank(m, Thinks(), view, Deadline(limit_s, bank_s, time.monotonic() - ago), **kw)
    return [r.getMessage() for r in caplog.records], m.bank_told


def test_a_request_asked_again_says_its_deal_and_the_bank_left(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutants bank-deal-number (``deal_number`` unshifted) and bank-left-figure (the bank
    as stated, not what is left of it): the line said "deal 0", or 8000 ms left after 50 ms
    of it were spent; and bank-no-make-note: the wait for the bot's making, in the figure,
    not said."""
    [line], told = _bank_said(caplog, 0.0, 8.0, 0.05, behind_make=True)
    assert ", with the wait for the bot to be made) took " in line, line
    assert not told  # (the once-per-match line is left to a real overrun)
    assert "asked again after the bot came back (deal 1, " in line, line
    found = re.search(r"took (\d+) ms, all of it from the time bank: .*?; (\d+) ms of the "
                      r"bank left", line)  # fmt: skip
    assert found, line
    used, left = int(found[1]), int(found[2])
    assert used >= 50 and abs(used + left - 8000) <= 1, line


def test_a_request_asked_again_past_its_bank_too_is_a_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant bank-no-bank-bound (``over < bank_s`` dropped): a request asked again with
    1 ms of bank, answered 50 ms later, was said to be paid by the bank with "-49 ms of the
    bank left"; it is the timeout it was, said once per match."""
    [line], told = _bank_said(caplog, 0.0, 0.001, 0.05)
    assert told
    assert "past the limit of 0 ms and the 1 ms left of the time bank: a timeout" in line, line
    assert "asked again" not in line


# ----------------------------------------------------------------------- the quick bot


class _Quick(Bot):
    quick = True

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


def _slow_calls(gap: int, took: float | None = None) -> tuple[bool, str]:
    """A quick bot's two calls over the bound ``gap`` calls apart (``took`` each: by
    default twice the bound): whether it stays on the loop, and the warnings."""
    runner = BotRunner(_Quick, "localhost:1", "tok")
    bot = _Quick()
    slow, fast = took if took is not None else 2 * client._SLOW_S, client._SLOW_S / 10
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger("sdk.client").addHandler(handler)
    try:
        runner._slow_on_loop(bot, "a decision", slow)
        for _ in range(gap - 1):
            runner._slow_on_loop(bot, "a decision", fast)
        runner._slow_on_loop(bot, "a decision", slow)
    finally:
        logging.getLogger("sdk.client").removeHandler(handler)
    return runner._inline, " ".join(r.getMessage() for r in records)


def test_two_slow_calls_a_hundred_apart_are_not_within_a_hundred() -> None:
    """Defect (mutant quick-ge-window is the fix): the 1st and the 101st call, over 5 ms
    both, sent the bot to a worker thread, "the second of its last 101 calls there", where
    the docs say a second call over 5 ms *within 100* does. The 1st and the 100th do."""
    assert _slow_calls(100) == (True, "")
    inline, said = _slow_calls(99)
    assert not inline
    assert "the second of its last 100 calls there over 5 ms" in said, said


def test_a_call_of_exactly_the_bound_is_not_slow() -> None:
    """Mutant quick-le-slow (``took < _SLOW_S``): a call of 5 ms is not one "over 5 ms"."""
    assert _slow_calls(2, took=client._SLOW_S) == (True, "")
    assert not _slow_calls(2, took=client._SLOW_S * 1.01)[0]


# --------------------------------------------------------------------------- forfeits


def _rejected(incident: int, strikes: int, allowed: int, rid: str = "1") -> pb.ServerMessage:
    return pb.ServerMessage(decision_rejected=pb.DecisionRejected(
        match_id="m1", request_id=rid, incident=incident, message="refused",
        strikes=strikes, strikes_allowed=allowed))  # fmt: skip


def _forfeit_after(caplog: pytest.LogCaptureFixture, *refusals: pb.ServerMessage) -> str:
    g = _game()
    seat = g.to_act
    assert seat is not None

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None
        for r in refusals:
            yield r
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(Thinks, script, matches=1)
    assert summary.matches == 1 and summary.forfeits == 1
    [line] = _forfeit_lines(caplog)
    return line


def test_a_late_answer_refused_after_the_strike_out_keeps_its_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the seat struck out by a timeout (strike 3 of 3); the bot's answer, on its
    way, was refused as a wrong request, a refusal that carries the seat's strikes (3 of
    3) too: the forfeit was then said to be "struck out (wrong_request, no strike, said
    above)". The refusal that struck it out is kept."""
    line = _forfeit_after(
        caplog,
        _rejected(pb.INCIDENT_TIMEOUT, 3, 3),
        _rejected(pb.INCIDENT_WRONG_REQUEST, 3, 3),
    )
    assert line.endswith("placed last): struck out (timeout, strike 3 of 3, said above)"), line


def test_a_refusal_that_states_no_strike_limit_strikes_no_one_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant forf-strikes-zero (``0 <`` dropped): a refusal of an arena that states no
    strike limit (0 of 0: a third-party arena, or one before the field) said the seat
    struck out by it."""
    line = _forfeit_after(caplog, _rejected(pb.INCIDENT_ILLEGAL, 0, 0))
    assert line.endswith("placed last)"), line


def test_a_match_resumed_as_forfeited_says_the_bot_was_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant forf-resume-told-dropped: a bot back on a new stream, told by the match's
    resumption that its seat had forfeited (its start then on this connection), said
    nothing of why at the end."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    from tests.sdk.test_hostile_arena_round3 import _end

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        await _end(pytest.importorskip("grpc").StatusCode.UNAVAILABLE, "a dead link")

    async def back(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        msg = started("m1", g)
        msg.match_started.resumed = msg.match_started.forfeited = True
        yield msg
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = _ending(Thinks, first, back, matches=1)
    assert not isinstance(summary, Exception) and summary.forfeits == 1
    [line] = _forfeit_lines(caplog)
    assert line.endswith("or whose decisions time out meanwhile"), line


class _Unmakeable(Bot):
    def __init__(self) -> None:
        raise ValueError("no model file")

    def act(self, view: PlayerView) -> Action:  # pragma: no cover (never made)
        return view.legal_actions[0]


def test_a_match_of_a_bot_never_made_counts_its_forfeit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot whose ``__init__`` raised played no match: the referee played its
    seat on its deadlines until it struck out and forfeited. ``RunSummary`` counted the
    match and the bot error, not the forfeit: "1 match(es), 0 decision(s), ..., 1 bot
    error(s), 0 forfeited"."""
    g = _game()
    seat = g.to_act
    assert seat is not None

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        await asyncio.sleep(0.2)  # (the bot's making fails in its thread meanwhile)
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(_Unmakeable, script, matches=1)
    assert (summary.matches, summary.errors, summary.forfeits) == (1, 1, 1)


# ------------------------------------------------------------ refused openings' log lines


def test_refused_openings_are_counted_and_said_per_bot(caplog: pytest.LogCaptureFixture) -> None:
    """Mutants ref-unlogged-all (every unlogged refusal counted as tokenless), ref-pop-get
    (the count never reset: said again in each window) and ref-words-swapped: past its 20
    lines a window, bot x's refusals are counted, and x's next line, a window later, says
    how many "of bot x"; the tokenless streams' own line says none of x's, and the count
    is said once."""
    caplog.set_level(logging.INFO, logger="arena.referee")
    now = [1000.0]

    async def main() -> None:
        ref = Referee(RefereeConfig(flood_window_s=10))
        loop = asyncio.get_running_loop()
        loop.time = lambda: now[0]  # type: ignore[method-assign]
        try:
            for i in range(REFUSALS_LOGGED + 5):
                ref._log_refusal("x", "stream of bot %s refused: %s", "x", i)
            ref._log_refusal("", "stream from %s refused: %s", "peer", "unknown token")
            now[0] += 11  # (the window past)
            ref._log_refusal("", "stream from %s refused: %s", "peer", "unknown token")
            ref._log_refusal("x", "stream of bot %s refused: %s", "x", "again")
            now[0] += 11
            ref._log_refusal("x", "stream of bot %s refused: %s", "x", "once more")
        finally:
            del loop.time

    asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) == REFUSALS_LOGGED + 4, lines
    assert lines[REFUSALS_LOGGED:] == [
        "stream from peer refused: unknown token",
        "stream from peer refused: unknown token",
        "stream of bot x refused: again (5 more refused streams of bot x not logged)",
        "stream of bot x refused: once more",
    ]


def test_a_bots_refusal_for_its_open_streams_is_logged_beside_a_tokenless_flood(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant ref-open-calls-key (the refusal of a bot's stream for the streams it holds
    open counted with the streams of no bot's token): after 25 tokenless refusals, bot x's
    "16 of its streams are still open" was not logged."""
    import grpc

    from arena.referee.core import MAX_OPEN_STREAMS_PER_BOT
    from arena.v1 import arena_pb2_grpc as pb_grpc
    from tests.support.harness import serve_one_bot

    caplog.set_level(logging.INFO, logger="arena.referee")

    async def body(ref: Referee, port: int) -> str:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = pb_grpc.ArenaStub(ch)
            flood = [stub.Play(metadata=(("authorization", "Bearer nope"),))
                     for _ in range(REFUSALS_LOGGED + 5)]  # fmt: skip
            await asyncio.wait_for(asyncio.gather(*(c.code() for c in flood)), 60)
            session = ref.session("x")
            session.open_calls = MAX_OPEN_STREAMS_PER_BOT  # (as if its client held them)
            try:
                call = stub.Play(metadata=(("authorization", "Bearer tok-x"),))
                return str((await asyncio.wait_for(call.code(), 60)).name)
            finally:
                session.open_calls = 0

    assert serve_one_bot(body) == "RESOURCE_EXHAUSTED"
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert (
        f"stream of bot x refused: {MAX_OPEN_STREAMS_PER_BOT} of its streams are still open"
        in lines
    ), lines


# ------------------------------------------------------------------ the names over TLS


def test_names_not_reaching_reads_addresses_as_addresses() -> None:
    """Mutants tls-host-brackets (``--host [::1]`` read as a host name: nothing said to
    lead elsewhere), tls-string-compare (an address of the certificate in another
    spelling than the host's, ``0:0::1``, said to lead elsewhere) and tls-v4-loopback-only
    (localhost said not to reach ::1, where it leads)."""
    assert names_not_reaching(["127.0.0.1", "::1"], "[::1]") == ["127.0.0.1"]
    assert names_not_reaching(["0:0:0:0:0:0:0:1", "localhost"], "::1") == []
    # (a certificate's host names, a wildcard among them, may lead there: kept)
    assert names_not_reaching(["Arena.Example.", "*.example", "192.0.2.2"], "192.0.2.2") == []
    assert names_not_reaching(["localhost"], "127.0.0.2") == ["localhost"]
    # Mutant tls-no-rstrip, and one without ``lower()``: localhost as a certificate may
    # spell it, said to lead to 192.0.2.2.
    assert names_not_reaching(["LocalHost.", "LOCALHOST"], "192.0.2.2") == [
        "LocalHost.",
        "LOCALHOST",
    ]


def test_tls_names_of_a_certificate_without_names_and_of_an_ipv6_address() -> None:
    """Mutants tls-no-names (a certificate whose names cannot be read said "bots connect by
    a name its certificate lists: ", listing none) and tls-alone-host (the one address as
    given, ``::1``, not as a bot writes it with its port, ``[::1]``)."""
    from arena.cli.serve import _tls_names

    assert _tls_names([], "192.0.2.2") == " (TLS)"
    said = _tls_names(["127.0.0.1"], "::1")
    assert said.startswith(
        " (TLS: its certificate lists 127.0.0.1, none of which leads to "
        "[::1], the one address it listens on: no bot can connect"
    ), said
    assert _tls_names(["localhost", "::1", "127.0.0.1"], "::1").endswith(
        "lists: localhost, ::1; not by 127.0.0.1, which it lists too: it listens on [::1] only)"
    )


# ------------------------------------------------------------- a failed text's weight


def _failed(text: str, match_id: str = "ok") -> pb.Decision:
    """A decision answering a pending request (``_weighed``'s match id) that failed."""
    return pb.Decision(match_id=match_id, request_id="1", failed=text)


def test_failed_texts_weigh_nothing_by_their_bytes_in_each_answer_of_a_batch() -> None:
    """Mutants flood-told-chars (the text's characters taken off the message's bytes, not
    its bytes: a traceback in Russian, 10 KiB of UTF-8 in 5,600 characters, weighed 4) and
    flood-told-first-only (a batch's first ``failed`` alone excused: two answers of 12 KiB
    each weighed 12), and of the fix below, fix-failed-once-a-batch (one allowance for a
    batch: they weighed 7)."""
    from tests.arena.test_referee_limits import _weighed

    russian = "Ошибка в боте: " + "ходить нечем; " * 400
    assert 9 * 1024 < len(russian.encode()) < 2 * len(russian)
    assert _weighed(pb.BotMessage(decision=_failed(russian)), flood_limit=1) is None
    two = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[_failed("x" * 12_288)] * 2))
    assert _weighed(two, flood_limit=1) is None
    # (and a stray's failed text weighs its KiB, as any stray's bytes do)
    stray = pb.BotMessage(decision=_failed("x" * 3072, match_id="nowhere"))
    assert _weighed(stray, flood_limit=3) is not None
    assert _weighed(stray, flood_limit=4) is None


def test_a_failed_text_past_its_allowance_weighs_its_kib() -> None:
    """Defect: a ``failed`` text weighed nothing however long, so the padding an answer's
    weight is for moved there: 127 KiB of it with each answer (its bytes past 128 KiB a
    message count unread) weighed nothing, at each request, where the same bytes in an
    unknown field weighed 127 (the 8th such answer within 10 s closed the stream), and
    such a text of two-byte characters costs the referee some 0.3-0.6 ms to read. Past
    FAILED_BYTES (16 KiB) an answer's KiB weigh again, as ``unknown`` padding does."""
    from arena.referee.core import ANSWER_BYTES, FAILED_BYTES
    from tests.arena.test_referee_limits import _weighed

    padded = pb.BotMessage(decision=_failed("ы" * (63 * 1024)))
    weight = (padded.ByteSize() - ANSWER_BYTES - FAILED_BYTES) // 1024
    assert weight == 109, weight
    refusal = _weighed(padded, flood_limit=weight - 1)
    assert (
        refusal is not None
        and f"texts aside up to {FAILED_BYTES // 1024} KiB each" in refusal.message
    )
    assert _weighed(padded, flood_limit=weight) is None
    # within it, nothing (a traceback of some 200 lines)
    assert (
        _weighed(pb.BotMessage(decision=_failed("x" * (FAILED_BYTES + 400))), flood_limit=1) is None
    )


def test_the_bytes_counted_unread_are_not_counted_again() -> None:
    """Mutant flood-no-counted: a stray of 200 KiB weighs 1 + 200, 72 of it counted before
    it is parsed (its bytes past 128 KiB); they were counted again after, 273 in all."""
    from arena.referee.core import _Refusal
    from arena.referee.sessions import Stream as RefStream
    from tests.arena.test_referee_limits import _Reader

    raw = pb.BotMessage(decision=pb.Decision(match_id="nowhere", request_id="r" * 200 * 1024))
    assert 200 * 1024 < raw.ByteSize() < 201 * 1024

    def weighed(flood_limit: int) -> Any:
        async def main() -> Any:
            ref = Referee(RefereeConfig(flood_limit=flood_limit))
            ref.add_bot("b", "tok")
            session = ref.session("b")
            stream = RefStream("peer")
            session.attach(stream)
            try:
                await ref._read_loop(session, stream, _Reader(raw.SerializeToString()))
            except _Refusal as e:
                return e.code
            return None

        return asyncio.run(main())

    assert weighed(201) is None
    assert weighed(200) is not None
