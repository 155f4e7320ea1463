"""The SDK runner against a broken or hostile arena, round 53: a stream ended OK before
any Welcome, matches started without end (new ids, one id again and again, a resumption
again and again on one stream), one refusal sent again and again, and views listing more
than any deal holds. The fake arena is that of ``test_hostile_arena.py`` (grpc.aio on
port 0); the real one is the referee of ``tests/support/harness.py``. Every server and
process started here is stopped before its test ends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

import sdk.client
from arena.protocol import HELLO_LIMITS
from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView
from sdk.client import BotRunner
from tests.sdk.test_hostile_arena import (
    GUARD,
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    ended,
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round2 import _arena_bot_against
from tests.support.harness import arena


def _said(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if words in r.getMessage()]


# ----------------------------------------------------------------------------- no Welcome


def _closed_before_welcome(address: str) -> str:
    return (f"the arena at {address} closed the stream before its Welcome: it is done (its "
            "tournament over, its --matches played), or what serves there is no arena of "
            "this protocol")  # fmt: skip


def test_a_stream_closed_at_once_without_a_welcome_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: an arena (or a server of another service, a proxy) that ended the stream
    with an OK status before any Welcome ended the run with "the arena closed the stream",
    at INFO, as a tournament's end does: a run that never began read as one that was done.
    Now the run still ends (an OK end is final, and a finished arena refuses so), saying
    that no Welcome came and what that means, as a warning."""

    async def closes(s: Stream) -> AsyncIterator[Out]:
        return
        yield  # an async generator that sends nothing

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(FirstLegal, closes)
    assert summary.connections == len(arena_.streams) == 1
    assert summary.matches == summary.decisions == 0
    assert summary.reason == _closed_before_welcome(arena_.address)
    said = [r for r in caplog.records if r.getMessage() == summary.reason]
    assert [r.levelno for r in said] == [logging.WARNING]


def test_a_finished_arena_refusing_a_new_stream_is_said_so(tmp_path: Path) -> None:
    """The real case: a referee whose tournament is over refuses a new stream with an OK
    status (its reason does not reach the bot: gRPC sends no details with OK). The bot
    that connects late is told that the arena is done, not that it "closed the stream"."""

    async def main() -> tuple[sdk.client.RunSummary, str]:
        async with arena(tmp_path) as a:
            a.referee.add_bot("late", "tok-late")
            await a.referee.end_streams("the tournament is over", final=True)
            runner = BotRunner(FirstLegal, a.target, "tok-late", retry_for=GUARD)
            return await asyncio.wait_for(runner.run(), GUARD), a.target

    summary, target = asyncio.run(main())
    # (more than one connection when the Hello raced the end: gRPC's INTERNAL, retried)
    assert summary.connections >= 1 and summary.matches == 0
    assert summary.reason == _closed_before_welcome(target)


async def _close(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """A ``Play`` that ends every stream at once with an OK status."""
    context.set_code(grpc.StatusCode.OK)


def test_arena_bot_run_says_a_stream_closed_before_its_welcome(tmp_path: Path) -> None:
    """What ``arena-bot run`` prints: the warning, then its last line with the same
    reason; exit code 0 (an OK end is final)."""
    rc, err, address = asyncio.run(_arena_bot_against(tmp_path, _close))
    assert rc == 0, err
    *before, warned, last = err.strip("\n").splitlines()
    # (a Hello that raced the end is told gRPC's own INTERNAL: retried, with a warning)
    assert all(" WARNING sdk.client: " in ln and "reconnecting in" in ln for ln in before), err
    assert warned.endswith(" WARNING sdk.client: " + _closed_before_welcome(address)), err
    assert last.endswith(
        f"done ({_closed_before_welcome(address)}): 0 match(es), 0 "
        "decision(s), 0 rejected, 0 bot error(s), 0 forfeited"
    ), err


def test_an_ok_end_with_matches_under_way_names_them(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: an arena (or a proxy) that ended the stream with an OK status while the bot
    was in matches it never said ended stopped the bot with "the arena closed the stream"
    alone, as a finished tournament does: the matches left unfinished (no on_match_end)
    were not named. Now a warning names them; the run still ends (an OK end is final)."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        for i in range(5):
            yield started(f"m{i}", g)
        yield ended("m0")
        yield request("m1", g, "1")
        assert (await s.decision()) is not None

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(FirstLegal, script)
    assert summary.reason == "the arena closed the stream" and summary.matches == 1
    (said,) = _said(caplog, "ended the stream as done while")
    assert said == (
        f"the arena at {arena_.address} ended the stream as done while 4 match(es) of this "
        "bot were under way (m1, m2, m3 and 1 more), never told ended: the bot leaves them "
        "unfinished (no on_match_end; the arena plays the seat, if it still plays them)"
    )
    lines = [r.getMessage() for r in caplog.records]
    assert lines.index(said) == lines.index("the arena closed the stream") + 1


# ----------------------------------------------------------------------------- matches


class Counted(FirstLegal):
    """Counts its instances (one list for all)."""

    made: ClassVar[list[str]] = []

    def __init__(self) -> None:
        super().__init__()
        Counted.made.append("")

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]


@pytest.fixture(autouse=True)
def _fresh_counted() -> None:
    Counted.made = []


def test_matches_started_past_the_most_played_at_once_are_refused(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: an arena that started matches without end had a bot, a view and a task made
    for each, without bound (10,000 in one message: 200 MB and ten seconds of the loop; a
    tournament seats a bot in 256 at most). Now the runner plays at most as many at once as
    its Hello can name running (1,024; 3 here): a start past it is refused, said a few
    times, and its requests are said to be for a refused match; the matches held play on,
    and one that ends makes room."""
    assert sdk.client._HELD_MOST == HELLO_LIMITS["running"][0] == 1024
    monkeypatch.setattr(sdk.client, "_HELD_MOST", 3)
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield pb.ServerMessage(batch=pb.Batch(messages=[started(f"m{i}", g) for i in range(50)]))
        yield request("m40", g, "1")
        yield request("m2", g, "2")
        assert (await s.decision()) is not None
        yield ended("m2")
        yield started("m60", g)  # room for one again
        yield request("m60", g, "3")
        assert (await s.decision()) is not None
        yield ended("m60")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(Counted, script, matches=2)
    assert arena_.streams[0].decided() == [("m2", "2"), ("m60", "3")]
    assert len(Counted.made) == 4  # m0, m1, m2, m60
    refused = _said(caplog, "the most this SDK plays at once")
    assert refused[0].startswith("match m3: the arena started it while the bot plays 3 matches")
    assert 5 <= len(refused) <= 7  # (the first five, then the 10th)
    assert _said(caplog, "decision request for match m40 (its start was refused: the bot held "
                 "as many matches as it plays at once): ignored")  # fmt: skip
    assert summary.matches == 2


def test_one_match_started_again_and_again_makes_one_bot_and_a_few_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a Batch of 1,000 MatchStarted for one id (not resumptions) wrote two lines
    for each ("started again", "started") and had a bot made for each, though each was
    dropped for the next before it could be asked. Now the lines are said a few times, and
    only the match that stands gets a bot, which answers."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield pb.ServerMessage(batch=pb.Batch(messages=[started("m1", g)] * 1000))
        yield request("m1", g, "1")
        assert (await s.decision()) is not None
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(Counted, script, matches=1)
    assert arena_.streams[0].decided() == [("m1", "1")]
    assert len(Counted.made) == 1
    again = _said(caplog, "match m1 started again: the earlier match of that id is dropped")
    assert len(again) == 7  # the first five, the 10th, the 100th (then the 1,000th: at 999)
    assert again[-1].endswith("(100 of these so far)")
    assert len(_said(caplog, "match m1 started: ")) == 6  # the first and the five said again
    assert summary.matches == 1


def test_a_match_resumed_again_on_one_stream_is_said_a_few_times_and_plays_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the referee resumes a match once per stream, after the bot comes back; a
    Batch of 1,000 resumptions of one match on the stream that started it wrote "match m1
    resumed" 1,000 times. Now it is a protocol violation said a few times, and ignored."""
    g = _game()
    again = started("m1", g)
    again.match_started.resumed = True

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(batch=pb.Batch(messages=[again] * 1000))
        yield request("m1", g, "1")
        assert (await s.decision()) is not None
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(Counted, script, matches=1)
    assert arena_.streams[0].decided() == [("m1", "1")]
    assert not _said(caplog, "match m1 resumed (seat")
    said = _said(caplog, "protocol violation: match m1 resumed again on the stream that "
                 "started or resumed it: ignored")  # fmt: skip
    assert len(said) == 8 and said[-1].endswith("(1,000 of these so far)")
    assert len(Counted.made) == 1 and summary.matches == 1


def test_a_start_naming_players_without_end_says_the_views_one_a_seat(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the "match started" line named the players of ``MatchStarted.players``,
    which nothing checks (the view's, one a seat, are): a start naming 100,000 players
    wrote them all in one line (a program of ``sdk.run`` logs it as it is). Now the line
    names the view's players."""
    g = _game()
    start = started("m1", g)
    start.match_started.players.extend(["intruder"] * 100_000)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield start
        yield request("m1", g, "1")
        assert (await s.decision()) is not None
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(FirstLegal, script, matches=1)
    (said,) = _said(caplog, "match m1 started: ")
    assert said.endswith(", players a, b, c") and "intruder" not in said
    assert summary.matches == 1


# ----------------------------------------------------------------------------- refusals


def test_one_refusal_sent_again_and_again_is_said_and_counted_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the referee refuses an answer once; an arena sending one refusal 10,000
    times wrote 10,000 warnings and counted 10,000 rejected answers for one decision
    (``RunSummary.rejected``, arena-bot run's last line). Now a repeat of the match's last
    refusal is ignored, said a few times; a refusal of another request is said and
    counted."""
    g = _game()

    def refusal(rid: str, incident: int) -> pb.ServerMessage:
        return pb.ServerMessage(decision_rejected=pb.DecisionRejected(
            request_id=rid, match_id="m1", incident=incident, message="no", strikes=1,
            strikes_allowed=3))  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert (await s.decision()) is not None
        yield pb.ServerMessage(
            batch=pb.Batch(messages=[refusal("1", pb.INCIDENT_ILLEGAL)] * 10_000)
        )
        yield refusal("1", pb.INCIDENT_MALFORMED)  # another refusal: said
        yield request("m1", g, "2")
        assert (await s.decision()) is not None
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(FirstLegal, script, matches=1)
    assert summary.rejected == 2
    assert len(_said(caplog, "match m1: decision rejected (illegal, strike 1 of 3): no")) == 1
    assert len(_said(caplog, "match m1: decision rejected (malformed, strike 1 of 3): no")) == 1
    repeats = _said(caplog, "match m1: decision rejected again (illegal) for request 1, as "
                    "just before: ignored")  # fmt: skip
    assert len(repeats) == 5 and repeats[-1].endswith("(further repeats of this match are "
                                                      "ignored unsaid)")  # fmt: skip


# ----------------------------------------------------------------------------- huge views


class Choices(FirstLegal):
    """Records how many legal actions it was asked to choose among (one list for all)."""

    seen: ClassVar[list[int]] = []

    def act(self, view: PlayerView) -> Action:
        Choices.seen.append(len(view.legal_actions))
        return view.legal_actions[0]


def test_a_view_listing_more_than_any_deal_has_is_refused_before_it_is_decoded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request whose view listed 1,000,000 legal bids (10 MB, within the 64 MiB
    the SDK reads) cost 3.4 s of the event loop and 280 MB to decode, and the bot was asked
    to choose among them (bids far past any hand's cap). Now a view with a list longer
    than 1,024 (a deal has 24 cards, an auction under a hundred bids) is malformed, refused
    before it is decoded, naming the list; a start whose view is so is refused too; the
    next request of a right size is answered."""
    Choices.seen = []
    g = _game()
    n = 100_000

    def huge_request() -> pb.ServerMessage:
        r = request("m1", g, "1")
        legal = r.decision_request.view.legal_actions
        del legal[:]
        for i in range(n):
            legal.add().bid.amount = 105 + 5 * i
        return r

    huge_start = started("m2", g)
    huge_start.match_started.view.tricks.extend([pb.Trick()] * 2000)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield huge_request()
        yield huge_start
        yield request("m1", g, "2")
        assert (await s.decision()) is not None
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena_ = play(Choices, script, matches=1)
    assert arena_.streams[0].decided() == [("m1", "2")]
    assert Choices.seen == [len(request("m1", g, "2").decision_request.view.legal_actions)]
    assert _said(caplog, "malformed decision_request from the arena (match m1), ignored: "
                 "view.legal_actions: 100,000 entries, more than any view has (this SDK "
                 "reads up to 1,024)")  # fmt: skip
    assert _said(caplog, "match m2: malformed MatchStarted from the arena, refused "
                 "(match_started.view.tricks: 2,000 entries, more than any view has")  # fmt: skip
    assert summary.matches == 1
