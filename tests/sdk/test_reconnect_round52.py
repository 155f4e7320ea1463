"""A bot author's bot restarted (or frozen and continued) in the middle of a match, round
52: what its log says of the request the arena asks again. The fake arena is that of
``test_hostile_arena.py`` (grpc.aio on port 0), stopped before each test ends."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

import grpc
import pytest

from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView
from sdk import Bot
from tests.sdk.test_hostile_arena import (
    WELCOME,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    ended,
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _ending


class Thinks(Bot):
    """Takes 20 ms per decision (a sleep returns no sooner), then the first legal action."""

    def act(self, view: PlayerView) -> Action:
        time.sleep(0.02)
        return view.legal_actions[0]


def _timed(mid: str, rid: str, limit_ms: int, bank_ms: int) -> pb.ServerMessage:
    msg = request(mid, _game(), rid)
    msg.decision_request.time_limit_ms = limit_ms
    msg.decision_request.time_bank_ms = bank_ms
    return msg


def test_a_request_asked_again_with_its_limit_spent_says_so_and_a_later_overrun_is_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot restarted mid-match (``kill -9``, then ``arena-bot run`` again within
    the grace) is asked its pending request again with what is left of it: a limit of 0 ms,
    spent while the bot was away. Its log said "a decision took 21 ms (..., with the wait
    for the bot to be made), over the limit of 0 ms: the time bank paid 21 ms", as if the
    bot were slow against a limit of nothing; and that was the match's one line on the
    bank, so a real overrun later was never told. Now the line says the request was asked
    again with its limit spent while the bot was away, and the later overrun (20 ms
    against a limit of 1 ms) is told as such."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield _timed("m1", "7", 0, 8_000)  # asked again: its limit ran out while away
        assert await s.decision() is not None
        yield _timed("m1", "8", 1, 7_000)
        assert await s.decision() is not None
        yield ended("m1")
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, arena = play(Thinks, script, matches=1)
    assert summary.matches == 1 and arena.streams[0].decided() == [("m1", "7"), ("m1", "8")]
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [m for m in said if "over the limit of 0 ms" in m], said
    again = [m for m in said if "a decision asked again after the bot came back" in m]
    assert len(again) == 1, said
    assert "all of it from the time bank: its limit had run out while the bot was away" in again[0]
    assert [m for m in said if "over the limit of 1 ms: the time bank paid" in m], said


def _forfeited(mid: str, seat: int) -> pb.ServerMessage:
    """The end of ``mid`` with ``seat`` forfeited (placed last), as the referee sends it."""
    msg = ended(mid)
    msg.match_ended.result.forfeits.append(seat)
    msg.match_ended.result.places[:] = [3 if s == seat else 1 + (s < seat) for s in range(3)]
    return msg


def _forfeit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "forfeited (it was played" in r.getMessage()]


def test_a_forfeit_by_strikes_says_it_struck_out(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: a bot author whose seat forfeited read only "match m1: this bot's seat 1
    forfeited (it was played by the referee to the end and placed last)", whatever the
    cause, the match's end not saying it. A seat struck out (the refusal that makes
    ``strikes`` equal ``strikes_allowed``) now says so, with that refusal."""
    g = _game()
    seat = g.to_act
    assert seat is not None

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        assert await s.decision() is not None
        yield pb.ServerMessage(decision_rejected=pb.DecisionRejected(
            match_id="m1", request_id="1", incident=pb.INCIDENT_TIMEOUT, message="too late",
            strikes=3, strikes_allowed=3))  # fmt: skip
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(Thinks, script, matches=1)
    assert summary.matches == 1 and summary.forfeits == 1
    assert _forfeit_lines(caplog) == [
        f"match m1: this bot's seat {seat} forfeited (it was played by the referee to the end "
        "and placed last): struck out (timeout, strike 3 of 3, said above)"
    ]


def test_a_forfeit_while_the_bot_was_away_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """Defect (as above): a bot frozen (SIGSTOP) past the arena's grace, dropped and back,
    was told its seat forfeited without why. The end of a match that came on a later
    connection than the match's start (no resumption between) says the bot was away."""
    g = _game()
    seat = g.to_act
    assert seat is not None

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        await _end(grpc.StatusCode.UNAVAILABLE, "a dead link")

    async def back(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = _ending(Thinks, first, back, matches=1)
    assert not isinstance(summary, Exception) and summary.matches == 1
    assert _forfeit_lines(caplog) == [
        f"match m1: this bot's seat {seat} forfeited (it was played by the referee to the end "
        "and placed last) while the bot was away (its connection lost, or its process "
        "stopped): the arena forfeits a seat away longer than its grace for coming back, or "
        "whose decisions time out meanwhile"
    ]


def test_a_restarted_bot_told_its_seat_forfeited_hears_why_at_the_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The same for a bot restarted after its seat forfeited: the arena's MatchStarted
    says ``forfeited``, and the end names the time away."""
    g = _game()
    seat = g.to_act
    assert seat is not None

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        msg = started("m1", g)
        msg.match_started.forfeited = True
        yield msg
        yield _forfeited("m1", seat)
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(Thinks, script, matches=1)
    assert summary.matches == 1
    [line] = _forfeit_lines(caplog)
    assert line.endswith(
        "placed last) while the bot was away (its connection lost, or its "
        "process stopped): the arena forfeits a seat away longer than its "
        "grace for coming back, or whose decisions time out meanwhile"
    )


def test_arena_bot_runs_last_line_counts_the_forfeits(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: `arena-bot run`'s last line, what an author reads after hours of play, was
    "done (...): 537 match(es), 7616 decision(s), 0 rejected, 0 bot error(s)": the matches
    its seat forfeited (a freeze, a restart past the grace, strikes) were counted nowhere
    on its side. ``RunSummary.forfeits`` counts them, and the line says them."""
    from click.testing import CliRunner

    import sdk.cli
    import sdk.client

    def ran(bot: object, arena: str = "", token: str = "", **kw: object) -> sdk.client.RunSummary:
        return sdk.client.RunSummary(matches=5, decisions=40, reason="stub", forfeits=2)

    monkeypatch.setattr(sdk.client, "run", ran)
    monkeypatch.setattr(sdk.cli, "_setup_logging", lambda level: None)
    monkeypatch.setattr(sdk.cli, "_die_with_launcher", lambda: None)
    for var in ("ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_PARENT_PID"):
        monkeypatch.delenv(var, raising=False)
    with caplog.at_level(logging.INFO, logger="sdk"):
        r = CliRunner().invoke(sdk.cli.main, ["run", "random", "--token", "t", "--once"])
    assert r.exit_code == 0, r.output
    assert "done (stub): 5 match(es), 40 decision(s), 0 rejected, 0 bot error(s), 2 forfeited" in [
        rec.getMessage() for rec in caplog.records
    ]


def test_a_restarted_bot_joining_its_match_under_way_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot restarted mid-match (its process killed, `arena-bot run` again within
    the grace) logged "match m1 started: seat 1, classic, players ..." for the match the
    arena gave back to it under way; its counts ("ended after 12 deals (5 counted)") did
    not add up, and nothing said the bot had joined in the middle. The start of a match
    resumed (``MatchStarted.resumed``) that this process did not hold now says so."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        msg = started("m1", g)
        msg.match_started.resumed = True
        yield msg
        yield started("m2", g)  # (a match from its start: no such words)
        yield ended("m1")
        yield ended("m2")
        while await s.message() is not None:
            pass

    with caplog.at_level(logging.INFO, logger="sdk"):
        summary, _ = play(Thinks, script, matches=2)
    assert summary.matches == 2
    starts = [r.getMessage() for r in caplog.records if " started: seat " in r.getMessage()]
    assert len(starts) == 2, starts
    assert starts[0].endswith(
        "(joined under way in deal 1: a new instance of the bot, told nothing of what came before)"
    ), starts
    assert starts[1].startswith("match m2 started: seat ") and "joined" not in starts[1]
