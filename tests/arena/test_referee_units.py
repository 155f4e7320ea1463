"""Referee pieces without a network: config, token parsing, forfeit places, tokens file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import attach_in_process

from arena.cli.serve import load_tokens
from arena.referee import INCIDENT_KINDS, Referee, RefereeConfig
from arena.referee.sessions import bearer_token
from arena.v1 import arena_pb2 as pb
from engine.record import forfeit_result as _forfeit_result
from tests.support.paused import unpaused


def test_config_defaults_and_validation() -> None:
    c = RefereeConfig()
    assert (c.decision_ms, c.time_bank_ms, c.max_strikes) == (1000, 10000, 3)
    with pytest.raises(ValueError, match="decision_ms"):
        RefereeConfig(decision_ms=0)
    with pytest.raises(ValueError, match="max_strikes"):
        RefereeConfig(max_strikes=0)


def test_incident_kinds_match_the_proto() -> None:
    assert [f"INCIDENT_{k.upper()}" for k in INCIDENT_KINDS] == [
        pb.Incident.Name(v) for v in pb.Incident.values() if v
    ]


@pytest.mark.parametrize(
    ("md", "token"),
    [
        ([("authorization", "Bearer abc")], "abc"),
        ([("Authorization", "bearer  abc ")], "abc"),
        ([("authorization", "Basic abc")], None),
        ([("authorization", "Bearer ")], None),
        ([("authorization", "Bearer abc\t")], "abc"),
        # Not HTTP blanks: kept, so that the token is compared as presented (it is no
        # printable ASCII, so no bot has it).
        ([("authorization", "Bearer abc\u00a0")], "abc\u00a0"),
        ([("authorization", "Bearer \u2003abc")], "\u2003abc"),
        ([], None),
        (None, None),
    ],
)
def test_bearer_token(md: list[tuple[str, str]] | None, token: str | None) -> None:
    assert bearer_token(md) == token


def test_forfeiters_place_last_and_others_rerank() -> None:
    res = {"scores": [1010, 600, 600], "places": [1, 2, 2], "shortfalls": [0, 400, 400],
           "winner": 0, "deals": 20, "reason": "target"}  # fmt: skip
    out = _forfeit_result(res, [0], 1000)
    assert out["places"] == [3, 1, 1] and out["winner"] is None
    assert out["shortfalls"] == [0, 400, 400] and out["forfeits"] == [0]
    out = _forfeit_result(res, [1], 1000)
    assert out["places"] == [1, 3, 2] and out["winner"] == 0
    out = _forfeit_result(res, [1, 2], 1000)
    assert out["places"] == [1, 2, 2]
    assert res["places"] == [1, 2, 2]  # the input is not changed


def test_add_bot_rules() -> None:
    ref = Referee()
    ref.add_bot("a", "t1")
    ref.add_bot("a", "t1")  # idempotent
    with pytest.raises(ValueError, match="already registered"):
        ref.add_bot("b", "t1")
    ref.add_bot("a", "t2")  # a new token replaces the old one (refused, saying so: round 49)
    with pytest.raises(Exception, match="token revoked: bot 'a' has another token now"):
        ref.authenticate([("authorization", "Bearer t1")])
    assert ref.authenticate([("authorization", "Bearer t2")]).name == "a"


def test_load_tokens(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text('[bots]\nann = "x"\nbob = "y"\n')
    assert load_tokens(f) == {"ann": "x", "bob": "y"}
    f.write_text('[bots]\nann = "x"\nbob = "x"\n')
    with pytest.raises(click.BadParameter, match=r"bots\.bob: the same token as bots\.ann"):
        load_tokens(f)
    f.write_text("[other]\n")
    with pytest.raises(click.BadParameter, match=r"\[bots\]"):
        load_tokens(f)


def test_an_answer_racing_its_deadline_is_told_so() -> None:
    """Defect: an answer that arrived as the deadline's timer fired (the wait resolved, the
    match not moved on yet) was refused as "unknown, stale or not yours (the pending request
    is '9')" — its own id. It now says that request 9 timed out."""
    import asyncio

    from arena.referee.match import _TIMED_OUT, MatchRunner, Pending
    from arena.referee.sessions import BotSession
    from engine import PRESETS

    async def go() -> str:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        st = runner.seats[runner.game.to_act]
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(_TIMED_OUT)  # the timer fired; the match task has not run yet
        st.pending = Pending("9", fut, pb.PlayerView(), 0, 0.0, 0.0)
        answered = runner.on_decision(st, pb.Decision(request_id="9", match_id="m"))
        assert not answered
        return str(runner.incidents[-1]["detail"])

    detail = asyncio.run(go())
    assert "request '9' timed out: the fallback is played" in detail, detail


def test_a_match_end_sent_again_carries_no_events_already_delivered() -> None:
    """Defect (protocol audit): the end of a match, sent again on a new stream (it may not
    have arrived), carried again the events that had ridden along with it the first time,
    another running match's among them: a raw client applied those actions twice. The end
    is kept without them; each event is delivered once."""
    import asyncio

    from arena.referee.sessions import BotSession, Stream

    def queued(stream: Stream) -> list[pb.ServerMessage]:
        q = stream._queue
        out = []
        while not q.empty():
            m = q.get_nowait()
            if m is not None:
                out.append(m)
        return out

    async def go() -> tuple[list[pb.ServerMessage], list[pb.ServerMessage]]:
        s = BotSession("x", "tok-x")
        first = Stream("one")
        s.attach(first)
        s.add_event(pb.Event(match_id="m2", seq=91))  # another match, still running
        end = pb.ServerMessage(match_ended=pb.MatchEnded(match_id="m1"))
        s.send_end("m1", end)
        s.detach(first, 5.0)
        second = Stream("two")
        s.attach(second)
        return queued(first), queued(second)

    before, after = asyncio.run(go())
    assert [e.seq for e in before[0].events] == [91]  # delivered with the end, once
    assert [m.match_ended.match_id for m in after] == ["m1"]  # the end again ...
    assert not after[0].events  # ... without the events


def test_the_referees_ask_forced_is_the_rule_the_match_shows() -> None:
    """Defect (protocol audit): `RefereeConfig(ask_forced=True)` asked bots for forced moves
    while the ruleset sent in `MatchStarted` (and written in the record) said
    `ask_forced: false`. The override is now part of the match's ruleset."""
    import asyncio

    from arena.referee.match import MatchRunner
    from arena.referee.sessions import BotSession
    from engine import PRESETS

    async def go() -> tuple[bool, bool]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig(ask_forced=True))
        return runner._ruleset_pb.ask_forced, bool(runner.game.record()["ruleset"]["ask_forced"])

    assert asyncio.run(go()) == (True, True)


def test_a_seat_taken_while_away_gets_a_whole_grace_period() -> None:
    """Defect (hostile audit round 5): a match that seated a bot while it was away shared the
    grace timer of the bot's earlier disconnect: away at t=0 (grace 5 s), seated in m2 at
    t=4.5, back at t=5.5: m2 was forfeited ("disconnected for more than 5 s") after 0.5 s.
    Each seat now counts its own period: m1's ends at 1.0 here, m2's (seated at 0.5) at 1.5."""
    import asyncio
    from types import SimpleNamespace

    from arena.referee.sessions import BotSession

    forfeited: list[str] = []

    def seat(mid: str) -> SimpleNamespace:
        match = SimpleNamespace(
            forfeit=lambda _st, _why: forfeited.append(mid), on_disconnect=lambda _st, _why: None
        )
        return SimpleNamespace(match=match)

    async def main() -> tuple[list[str], list[str]] | None:
        forfeited.clear()
        loop = asyncio.get_running_loop()
        session = BotSession("x", "tok-x")
        stream: Any = SimpleNamespace()
        session.stream = stream
        session.seats["m1"] = seat("m1")  # type: ignore[assignment]
        session.detach(stream, 1.0)
        away = loop.time()
        await asyncio.sleep(0.5)
        session.seats["m2"] = seat("m2")  # type: ignore[assignment]
        seated = loop.time()
        session.start_grace(1.0, "m2")  # as MatchRunner does for a bot away at the start
        await asyncio.sleep(0.75)  # m1's period is over, m2's is not
        if seated >= away + 1.0 or loop.time() >= seated + 1.0:
            return None  # (the process was paused past a period's end: no check; again)
        at_1_25 = list(forfeited)
        await asyncio.sleep(0.75)
        return at_1_25, forfeited

    got = unpaused(main, 5, "past a grace period")
    at_1_25, at_2 = got
    assert at_1_25 == ["m1"]
    assert at_2 == ["m1", "m2"]


def test_a_strike_on_the_last_move_of_a_deal_names_that_deal() -> None:
    """Defect (hostile audit round 7): a strike's fallback was played before its incident
    was recorded, so a strike on the move that ended a deal (ask_forced: the last card is
    asked) named the next deal, one that may not exist (deal 6 of a 6-deal match)."""
    import asyncio
    import dataclasses

    from engine import PRESETS

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, max_strikes=1000))

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            action = r.view.legal_actions[0]
            last = r.view.phase == pb.PHASE_PLAYING and len(r.view.hand) == 1
            if bot == "x" and last and len(r.view.trick) == 2:
                held = r.view.hand[0]  # the deal's last card: answered with one not held
                action = pb.Action(play=pb.PlayCard(card=pb.Card(suit=held.suit % 4 + 1,
                                                                 rank=held.rank)))  # fmt: skip
            decision = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(ref.session(bot), decision)

        attach_in_process(ref, ("a", "b", "x"), answer)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=2, ask_forced=True)
        return await ref.run_match("m1", rules, 7, ["a", "b", "x"])

    rec = asyncio.run(main())
    illegal = [i for i in rec["incidents"] if i["kind"] == "illegal"]
    assert illegal  # x was asked the last card of some deal
    assert all(i["deal"] < len(rec["deals"]) for i in rec["incidents"]), rec["incidents"]
    for i in illegal:  # the deal named holds x's fallback at its last card
        assert rec["deals"][i["deal"]]["actions"][-1]["by"] == "fallback"


def test_a_seat_that_forfeits_as_its_deadline_passes_gets_no_strike_after() -> None:
    """Defect (hostile audit round 7): the bot's stream dropped as its request was sent,
    with a grace period equal to the decision time: both timers fired in one pass of the
    loop, the seat forfeited, and then its timeout was recorded as a strike as well (and a
    DecisionRejected queued for a bot that was gone)."""
    import asyncio
    import dataclasses

    from engine import PRESETS

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=0, reconnect_grace_s=0.3))
        streams: dict[str, Any] = {}

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            session = ref.session(bot)
            if bot == "x":
                if session.stream is streams["x"]:
                    session.detach(streams["x"], 0.3, "dropped")  # as the request is sent
                return
            decision = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                   action=r.view.legal_actions[0])  # fmt: skip
            ref.on_decision(session, decision)

        streams.update(attach_in_process(ref, ("a", "b", "x"), answer))
        rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rules, 3, ["a", "b", "x"])

    rec = asyncio.run(main())
    kinds = [i["kind"] for i in rec["incidents"] if i["seat"] == 2]
    assert "forfeit" in kinds
    assert "timeout" not in kinds[kinds.index("forfeit") :], kinds


def test_a_forfeited_seat_leaving_is_no_disconnect() -> None:
    """Defect (review): a seat that had forfeited and then left was counted in the
    record's ``disconnects`` (though not recorded as an incident), and the leaderboard, which
    reads the totals, showed a disconnect the referee meant to leave out."""
    import asyncio

    from arena.referee.match import MatchRunner
    from arena.referee.sessions import BotSession
    from engine import PRESETS

    async def go() -> tuple[list[int], list[str]]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        a, b = runner.seats[0], runner.seats[1]
        runner.on_disconnect(a)  # playing: counted and recorded
        runner.forfeit(b, "three strikes")
        runner.on_disconnect(b)  # forfeited: it may leave
        return [st.disconnects for st in runner.seats], [i["kind"] for i in runner.incidents]

    totals, kinds = asyncio.run(go())
    assert totals == [1, 0, 0]
    assert kinds == ["disconnect", "forfeit"]


def test_a_second_disconnect_gets_a_whole_grace_period_again() -> None:
    """Mutation audit: nothing checked that a reconnect clears the bot's grace deadlines;
    kept, a bot that dropped, came back and dropped again later than one grace period after
    its first drop forfeited at once. Here: away at 0 (grace 1 s), back at 0.1, away again
    at 1.3: its seat forfeits a whole second later, not at once."""
    import asyncio
    from types import SimpleNamespace

    from arena.referee.sessions import BotSession

    forfeited: list[float] = []

    async def main() -> tuple[list[float], float] | None:
        forfeited.clear()
        loop = asyncio.get_running_loop()
        match = SimpleNamespace(
            forfeit=lambda _st, _why: forfeited.append(loop.time()),
            on_disconnect=lambda _st, _why: None,
            on_reconnect=lambda _st: None,
        )
        session = BotSession("x", "tok-x")
        first: Any = SimpleNamespace()
        session.stream = first
        session.seats["m1"] = SimpleNamespace(match=match)  # type: ignore[assignment]
        session.detach(first, 1.0)
        gone = loop.time()
        await asyncio.sleep(0.1)
        if loop.time() >= gone + 1.0:
            return None  # (paused past the first period's end before the reconnect: again)
        second: Any = SimpleNamespace()
        session.attach(second)
        await asyncio.sleep(1.2)
        away = loop.time()
        session.detach(second, 1.0)
        await asyncio.sleep(0.1)
        if loop.time() >= away + 0.95:
            return None  # (the process was paused past the new period's end: again)
        early = list(forfeited)
        await asyncio.sleep(1.1)
        return early, away

    got = unpaused(main, 5, "past the grace period")
    early, away = got
    assert early == []
    assert len(forfeited) == 1 and forfeited[0] - away >= 0.95


def test_a_late_answer_to_an_earlier_timed_out_request_is_told_so() -> None:
    """Defect (walkthrough 3): only the last timed-out request was remembered: a bot still
    busy when its requests 15 and 16 both timed out, answering 15 at last, was told "the
    request is unknown, stale or not yours". A seat keeps its last few timed-out ids."""
    from arena.referee.match import _TIMED_OUT_KEPT, SeatState, _not_pending

    st = SeatState.__new__(SeatState)  # the fields _not_pending reads
    st.forfeited = False
    st.requests = 16
    st.timed_out = ("15", "16")
    assert _not_pending(st, None, "15") == "request '15' timed out: the fallback was played"
    assert _not_pending(st, None, "14").startswith("request '14' was answered already")
    # Past the ids kept, an earlier one may have timed out too.
    st.requests, st.timed_out = 30, tuple(str(i) for i in range(20, 20 + _TIMED_OUT_KEPT))
    assert _not_pending(st, None, "19").startswith("request '19' was answered or timed out")
    assert _not_pending(st, None, "29").startswith("request '29' was answered already")
    assert _not_pending(st, None, "31").startswith("request '31' has not been sent")
    big = "9" * 100_000  # (no int() of it: refused, named cut)
    assert _not_pending(st, None, big).startswith(f"'{'9' * 63}…' is no request id")
    assert _TIMED_OUT_KEPT >= 2


def test_a_request_asked_again_states_its_time_left_never_as_none() -> None:
    """Defect (session 17's note): a request asked again after a reconnect stated what was
    left in whole ms rounded to nearest: with under half a ms left it said "0 ms and 0 ms
    of bank", which the wire reads as a request stating no deadline (an SDK bot then
    thinks without limit); past the deadline, before its timer ran, it was sent the same.
    Now the time left is rounded up, and a request past its deadline is not asked again
    (its timer plays the fallback)."""
    from types import SimpleNamespace

    from arena.referee.match import MatchRunner, Pending

    sent: list[pb.ServerMessage] = []
    now = 100.0
    runner: Any = SimpleNamespace(_loop=SimpleNamespace(time=lambda: now), match_id="m1")
    session = SimpleNamespace(send=lambda msg: sent.append(msg) or False)

    def ask_again(deadline: float, limit_at: float) -> pb.DecisionRequest | None:
        sent.clear()
        pending = Pending("7", None, pb.PlayerView(seat=1), 0, deadline, limit_at)  # type: ignore[arg-type]
        MatchRunner._send_request(runner, SimpleNamespace(pending=pending, session=session))  # type: ignore[arg-type]
        return sent[0].decision_request if sent else None

    req = ask_again(now + 0.0003, now - 0.5)
    assert req is not None and (req.time_limit_ms, req.time_bank_ms) == (0, 1)
    req = ask_again(now + 2.0004, now + 0.0002)
    assert req is not None and (req.time_limit_ms, req.time_bank_ms) == (1, 2000)
    assert req.request_id == "7" and req.view.seat == 1
    assert ask_again(now, now - 1) is None
    assert ask_again(now - 0.001, now - 1) is None
    # The first send states the limits exactly (not 1001 ms); it goes as wire bytes.
    sent.clear()
    view = pb.PlayerView(seat=1).SerializeToString()
    pending = Pending("8", None, view, 0, now + 11.0, now + 1.0, start=now)  # type: ignore[arg-type]
    MatchRunner._send_request(runner, SimpleNamespace(pending=pending, session=session), True)  # type: ignore[arg-type]
    req = pb.ServerMessage.FromString(sent[0]).decision_request
    assert (req.time_limit_ms, req.time_bank_ms) == (1000, 10000)
    assert req.request_id == "8" and req.view.seat == 1
