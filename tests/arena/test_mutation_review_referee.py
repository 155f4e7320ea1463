"""Mutation review of the referee (arena/referee/*.py, arena/protocol.py,
arena/deadlines.py): plausible bugs made by hand one at a time, the existing tests run
against each; a test here for each mutant that they let live (its id and the edit in the
docstring). Matches are played in process (``attach_in_process``-like streams, no network,
bots answering on the next turn of the loop): no timed assertions.

The review: 156 mutants (ids D deadlines, C config, M match, S sessions, K core, L lobby,
P protocol, V server). 79 were killed by the existing tests (5 of them only by a test
hanging until a 200 s cap: M48, M71, S16, K6, L5; the tests here fail on each of them, M71
and S16 after a 60 s decision time) and 77 lived: 63 are killed here, 12 are equivalent
(M11: the time limit checked before each action is also checked after each answer, so only
CPU time between two awaits differs; M40: the engine counts the last deal too; M54: the
limit never exceeds the time left; M84: that id is a kept timed-out one; P2, P5, P8, S11,
S14, S19, K16: a case that cannot occur — a valid card is found before the range check,
the cache keeps its action alive, a talon is never empty, positions are unique, events are
cleared on detach, attach clears the grace deadlines, a replaced stream's reader is
cancelled before it reads again; P4: proto3 drops a zero field), S18 showed a defect
(fixed: see the test), and K13 (a replaced stream ended after its queued messages rather
than at once), alive at the review, is killed by the last test here: a client that grants
its stream no flow-control window.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from arena.deadlines import MAX_DEADLINE_MS, bank_left, deadline_problem, timeout_words
from arena.protocol import message_bytes
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Ruleset
from tests.support.harness import as_message, serve_one_bot

# (bot, its n-th request counted from 1, the request) -> the action sent, or None: no answer
Policy = Callable[[str, int, pb.DecisionRequest], pb.Action | None]


def first_legal(_bot: str, _n: int, r: pb.DecisionRequest) -> pb.Action | None:
    return r.view.legal_actions[0]


class Captured(Stream):
    """An in-process stream that keeps every message put on it, and hands each decision
    request to ``answer`` on the next turn of the loop."""

    __slots__ = ("answer", "bot", "log")

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        super().put(msg)
        self.log.append(msg)
        if msg.HasField("decision_request"):
            asyncio.get_running_loop().call_soon(self.answer, self.bot, msg.decision_request)


def seat_bots(ref: Referee, names: tuple[str, ...], policy: Policy) -> dict[str, Captured]:
    """Bots ``names`` of ``ref`` on captured in-process streams answering by ``policy``."""
    asked: dict[str, int] = {}

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        asked[bot] = asked.get(bot, 0) + 1
        action = policy(bot, asked[bot], r)
        if action is not None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(ref.session(bot), d)

    streams = {}
    for n in names:
        ref.add_bot(n, f"tok-{n}")
        s = Captured(f"fake-{n}")
        s.bot, s.answer, s.log = n, answer, []
        ref.session(n).attach(s)
        streams[n] = s
    return streams


def play(
    policy: Policy = first_legal,
    *,
    rules: Ruleset | None = None,
    seed: int | str = 5,
    names: tuple[str, ...] = ("a", "b", "c"),
    max_deals: int = 1,
    **config: Any,
) -> tuple[dict[str, Any], dict[str, list[pb.ServerMessage]]]:
    """One match played in process: its record, and every message each bot was sent."""
    config = {"decision_ms": 60_000, "time_bank_ms": 0, **config}
    rs = dataclasses.replace(rules or PRESETS["classic"], max_deals=max_deals)

    async def main() -> tuple[dict[str, Any], dict[str, Captured]]:
        ref = Referee(RefereeConfig(**config))
        streams = seat_bots(ref, names, policy)
        rec = await ref.run_match("m1", rs, seed, list(names))
        return rec, streams

    rec, streams = asyncio.run(main())
    return rec, {n: s.log for n, s in streams.items()}


def events(msgs: list[pb.ServerMessage]) -> list[pb.Event]:
    """Every event the messages carry, in order."""
    return [e for m in msgs for e in m.events]


def requests(msgs: list[pb.ServerMessage]) -> list[pb.DecisionRequest]:
    return [m.decision_request for m in msgs if m.HasField("decision_request")]


def rejections(msgs: list[pb.ServerMessage]) -> list[pb.DecisionRejected]:
    return [m.decision_rejected for m in msgs if m.HasField("decision_rejected")]


# ----------------------------------------------------------------------------- deadlines


def test_the_longest_deadline_is_allowed() -> None:
    """D2: ``low <= value <= MAX_DEADLINE_MS`` made ``< MAX_DEADLINE_MS``: a day, the
    documented longest decision time or bank, was refused."""
    assert deadline_problem(MAX_DEADLINE_MS, 1) is None
    assert deadline_problem(MAX_DEADLINE_MS, 0) is None
    assert deadline_problem(MAX_DEADLINE_MS + 1, 0) is not None
    assert RefereeConfig(decision_ms=MAX_DEADLINE_MS, time_bank_ms=MAX_DEADLINE_MS)


def test_a_grace_period_of_zero_is_allowed() -> None:
    """C3: ``reconnect_grace_s < 0`` made ``<= 0``: a referee that forfeits a dropped seat
    at once (grace 0, documented as "must not be negative") could not be configured."""
    assert RefereeConfig(reconnect_grace_s=0).reconnect_grace_s == 0
    with pytest.raises(ValueError, match="reconnect_grace_s"):
        RefereeConfig(reconnect_grace_s=-0.5)


def test_an_id_of_exactly_the_limit_is_not_cut() -> None:
    """M1: ``len(text) <= limit`` made ``<``: an id of exactly 64 characters was echoed cut."""
    from arena.referee.match import MAX_ID_CHARS, clip

    exact = "7" * MAX_ID_CHARS
    assert clip(exact) == exact
    assert clip(exact + "7") == "7" * (MAX_ID_CHARS - 1) + "…"


# ----------------------------------------------------------------------------- the start


def test_a_match_counts_against_the_matches_its_bots_will_play() -> None:
    """M7: the ``matches_left -= 1`` of a seating dropped: a bot whose Hello said
    ``matches: 1`` stayed idle (seatable) after its one match, and the lobby seated it
    again."""

    async def main() -> tuple[list[int | None], list[str]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
        seat_bots(ref, ("a", "b", "c"), first_legal)
        ref.session("a").matches_left = 1
        ref.session("b").matches_left = 3
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        return [ref.session(n).matches_left for n in "abc"], ref.idle_bots()

    left, idle = asyncio.run(main())
    assert left == [0, 2, None]
    assert idle == ["b", "c"]


def test_a_bot_away_at_the_start_forfeits_after_its_grace() -> None:
    """M8: the ``start_grace`` for a seat whose bot is not connected at the start dropped:
    the seat was never forfeited for being away; it timed out request after request (and
    forfeited on strikes, much later with a long decision time)."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=2000, time_bank_ms=0, reconnect_grace_s=0.05))
        seat_bots(ref, ("a", "b"), first_legal)
        ref.add_bot("c", "tok-c")  # registered, never connected
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"])

    rec = asyncio.run(main())
    mine = [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == 2]
    assert mine[0] == ("disconnect", "not connected at the start; 0.05 s to reconnect")
    assert mine[1] == ("forfeit", "disconnected for more than 0.05 s"), mine
    assert rec["forfeits"] == [2] and rec["result"]["places"][2] == 3


def test_match_started_says_the_seat_and_not_resumed() -> None:
    """M9, M48, M49, M50, M51: the first ``MatchStarted`` of each seat: not ``resumed``, its
    own seat (and the view of that seat: its own hand only), not forfeited, seq 0."""
    from engine import Game, observe

    _rec, msgs = play()
    game = Game.new(PRESETS["classic"], 5, ["a", "b", "c"])
    for seat, bot in enumerate("abc"):
        started = [m.match_started for m in msgs[bot] if m.HasField("match_started")]
        assert len(started) == 1
        ms = started[0]
        assert (ms.match_id, ms.seat, ms.resumed, ms.forfeited, ms.seq) == ("m1", seat, False,
                                                                          False, 0)  # fmt: skip
        assert list(ms.players) == ["a", "b", "c"]
        assert ms.view.seat == seat
        hand = sorted((c.suit, c.rank) for c in ms.view.hand)
        want = sorted((c.suit + 1, c.rank + 1) for c in observe(game, seat).hand)
        assert hand == want


# ----------------------------------------------------------------------------- events


def _expected_events(rec: dict[str, Any], rules: Ruleset, seed: int | str) -> list[list[Any]]:
    """What each seat should be told of the match of ``rec``, replayed on the engine: per
    seat, in order, ("action", seat, action as seen, source), ("talon", declarer, cards),
    ("ended", deal number), ("started", deal number)."""
    from arena.protocol import action_to_pb, card_to_pb
    from engine import Game, Phase, observe, parse_action, public_action

    n = len(rec["players"])
    game = Game.new(rules, seed, rec["players"])
    out: list[list[Any]] = [[] for _ in range(n)]
    sources = {"bot": pb.ACTION_SOURCE_BOT, "forced": pb.ACTION_SOURCE_FORCED,
               "fallback": pb.ACTION_SOURCE_FALLBACK}  # fmt: skip
    for d in rec["deals"]:
        for entry in d["actions"]:
            actor, action = entry["seat"], parse_action(entry["action"])
            legal = game.legal_actions()
            assert (entry["by"] == "forced") == (len(legal) == 1 and not rules.ask_forced)
            deal, bidding = game.deal_number, game.phase is Phase.BIDDING
            game.apply(action, seat=actor)
            for seat in range(n):
                seen = public_action(action, actor, seat)
                source = sources[entry["by"]] if seat == actor else pb.ACTION_SOURCE_UNSPECIFIED
                out[seat].append(("action", actor, action_to_pb(seen), source))
            if game.deal_number != deal or game.is_over:
                for seat in range(n):
                    out[seat].append(("ended", deal))
                    if not game.is_over:
                        out[seat].append(("started", game.deal_number))
            elif bidding and game.phase is not Phase.BIDDING:
                for seat in range(n):
                    talon = observe(game, seat).talon or ()
                    out[seat].append(("talon", game.declarer, [card_to_pb(c) for c in talon]))
    return out


def _told(msgs: list[pb.ServerMessage]) -> tuple[list[Any], list[int]]:
    told: list[Any] = []
    seqs = []
    for ev in events(msgs):
        seqs.append(ev.seq)
        kind = ev.WhichOneof("kind")
        if kind == "action":
            told.append(("action", ev.action.seat, ev.action.action, ev.source))
        elif kind == "talon_taken":
            told.append(("talon", ev.talon_taken.seat, list(ev.talon_taken.cards)))
        elif kind == "deal_ended":
            told.append(("ended", ev.deal_ended.deal_number))
        else:
            told.append(("started", ev.deal_started))
    return told, seqs


@pytest.mark.parametrize(
    ("preset", "ask_forced", "talon_visible", "seed"),
    [("classic", False, True, 5), ("classic", True, False, 11), ("1001-4p", False, True, 3)],
)
def test_every_seat_is_told_every_event_as_it_may_see_it(
    preset: str, ask_forced: bool, talon_visible: bool, seed: int
) -> None:
    """M12, M13, M14, M34, M35, M36, M37, M39, M40, M41, M42, M43, M44, M46: each seat's
    events, replayed on the engine: an action as ``public_action`` shows it to that seat
    (a third seat sees a give without its card), its source on the actor's own event only
    (bot, forced — exactly the moves with one legal action, unless ``ask_forced`` — or
    fallback), the talon to the declarer's seat with the cards ``observe`` shows, every deal
    ended and the next one started, numbered; seqs count the events one by one."""
    rules = dataclasses.replace(PRESETS[preset], ask_forced=ask_forced,
                                talon_visible=talon_visible)  # fmt: skip
    names = tuple("abcd"[: rules.players])

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        # the last legal action now and then: gives, concessions and bids happen too
        legal = r.view.legal_actions
        return legal[-1] if n % 3 == 0 else legal[0]

    rec, msgs = play(policy, rules=rules, seed=seed, names=names, max_deals=3)
    want = _expected_events(rec, dataclasses.replace(rules, max_deals=3), seed)
    assert any(e[0] == "talon" for e in want[0]) and any(e[0] == "started" for e in want[0])
    talons = [e[2] for w in want for e in w if e[0] == "talon"]
    assert any(talons) and (all(talons) if talon_visible else not all(talons))
    kinds = {e[3] for e in want[0] if e[0] == "action"}
    if not ask_forced:
        assert pb.ACTION_SOURCE_FORCED in kinds
    for seat, bot in enumerate(names):
        told, seqs = _told(msgs[bot])
        assert told == want[seat], bot
        assert seqs == list(range(1, len(seqs) + 1))
    if rules.players == 3:  # a give seen by the third seat: without its card
        gives = [e for w in want for e in w if e[0] == "action" and e[2].HasField("give")]
        assert gives and any(not e[2].give.HasField("card") for e in gives)


def test_forfeited_seats_moves_are_fallbacks() -> None:
    """M14: a forfeited seat's moves recorded (and told to it) as ``forced``."""

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        return pb.Action(bid=pb.Bid(amount=7)) if bot == "c" else r.view.legal_actions[0]

    rec, msgs = play(policy, max_strikes=1, max_deals=2)
    assert rec["forfeits"] == [2]
    mine = [e["by"] for d in rec["deals"] for e in d["actions"] if e["seat"] == 2]
    assert len(mine) > 5 and set(mine) == {"fallback"}  # its first, illegal: a fallback too
    told, _ = _told(msgs["c"])
    mine = [e for e in told if e[0] == "action" and e[1] == 2]
    assert mine and all(e[3] == pb.ACTION_SOURCE_FALLBACK for e in mine)


# ----------------------------------------------------------------------------- strikes


def test_strikes_are_counted_kinded_and_told() -> None:
    """M26, M27, M28, M29, M30, M31, M32, M33: bot c answers its 1st request with an
    illegal bid, its 2nd with an empty action, its 3rd illegally again (3 strikes allowed):
    each is recorded under its kind and told in a ``DecisionRejected`` with that kind, the
    strike's number, the legal actions, the fallback played; the engine's message already
    lists the legal actions (added only to a malformed one's); the 3rd strike forfeits."""

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        if bot != "c" or n > 3:
            return r.view.legal_actions[0]
        return pb.Action() if n == 2 else pb.Action(bid=pb.Bid(amount=7))

    rec, msgs = play(policy, max_strikes=3, max_deals=2)
    mine = [i for i in rec["incidents"] if i["seat"] == 2]
    assert [i["kind"] for i in mine] == ["illegal", "malformed", "illegal", "forfeit"]
    assert mine[3]["detail"] == "3 strikes"
    for k, inc in enumerate(mine[:3], 1):
        assert inc["detail"].endswith(f"; strike {k} of 3"), inc
    rej = rejections(msgs["c"])
    asked = requests(msgs["c"])
    assert [r.incident for r in rej] == [pb.INCIDENT_ILLEGAL, pb.INCIDENT_MALFORMED,
                                         pb.INCIDENT_ILLEGAL]  # fmt: skip
    assert [(r.strikes, r.strikes_allowed) for r in rej] == [(1, 3), (2, 3), (3, 3)]
    assert [r.request_id for r in rej] == ["1", "2", "3"]
    fallbacks = [e["action"] for d in rec["deals"] for e in d["actions"]
                 if e["seat"] == 2 and e["by"] == "fallback"]  # fmt: skip
    from arena.protocol import action_from_pb

    for r, q, fb in zip(rej, asked, fallbacks, strict=False):
        assert list(r.legal_actions) == list(q.view.legal_actions)
        assert r.HasField("fallback") and str(action_from_pb(r.fallback)) == fb
    assert rej[0].message.count("; legal: ") == 1 and rej[2].message.count("; legal: ") == 1
    legal_text = ", ".join(str(action_from_pb(a)) for a in asked[1].view.legal_actions)
    assert rej[1].message.endswith(f"; legal: {legal_text}"), rej[1].message
    assert rec["forfeits"] == [2]
    assert len(asked) == 3  # a forfeited seat is asked nothing more


def test_timeouts_use_the_bank_then_the_decision_time() -> None:
    """M16, M17, M19, M22, M55 (and the words of D5): bot c never answers (decision 20 ms,
    bank 30 ms): its 1st request states 20 + 30 ms and is cut off at 50 ms (the record's
    ms), which empties the bank; its 2nd states 20 + 0 ms and is cut off at 20 ms."""

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        return None if bot == "c" else r.view.legal_actions[0]

    rec, msgs = play(policy, decision_ms=20, time_bank_ms=30, max_strikes=2)
    asked = requests(msgs["c"])
    assert [(r.time_limit_ms, r.time_bank_ms) for r in asked] == [(20, 30), (20, 0)]
    mine = [i for i in rec["incidents"] if i["seat"] == 2]
    assert [i["kind"] for i in mine] == ["timeout", "timeout", "forfeit"]
    assert mine[0]["detail"].startswith(timeout_words(20, 30) + "; legal: ")
    assert mine[1]["detail"].startswith(timeout_words(20, 0) + "; legal: ")
    ms = [e["ms"] for d in rec["deals"] for e in d["actions"]
          if e["seat"] == 2 and e["by"] == "fallback"]  # fmt: skip
    assert ms[:3] == [50, 20, 0]  # the last: played for the forfeited seat


def test_a_quick_answer_keeps_the_whole_bank() -> None:
    """M24: ``bank_left``'s ``decision_ms`` and ``used_ms`` swapped: an answer well within
    the decision time emptied the bank. Every request here states the whole bank (and
    about the whole decision time: what passed between making a request and sending it
    is taken off, a millisecond or more on a loaded machine)."""
    _rec, msgs = play(decision_ms=60_000, time_bank_ms=10_000)
    for bot in "abc":
        asked = requests(msgs[bot])
        # both stated in whole ms rounded up from the same clock: a float's last bit may
        # move the bank by one
        assert asked and all(abs(r.time_bank_ms - 10_000) <= 1 for r in asked)
        assert all(50_000 < r.time_limit_ms <= 60_000 for r in asked)
    assert bank_left(10_000, 60_000, 5) == 10_000


def test_request_ids_count_each_seats_requests_from_one() -> None:
    """M15: request ids counted from 0, not 1 (the ids a bot may reason about: '1', '2')."""
    _rec, msgs = play(max_deals=1)
    for bot in "abc":
        ids = [r.request_id for r in requests(msgs[bot])]
        assert ids == [str(i) for i in range(1, len(ids) + 1)]


# ----------------------------------------------------------------------------- wrong answers


def test_wrong_answers_beyond_the_recorded_ones_are_counted_only() -> None:
    """M64, M65, M77: bot a answers its 1st request, then sends the same answer 4 times more
    (2 recorded, ``max_wrong_recorded``): 2 incidents and 2 refusals, told as wrong
    requests, all 4 counted in the record's ``wrong_requests`` (not in ``disconnects``)."""

    async def main() -> tuple[dict[str, Any], dict[str, Captured]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, max_wrong_recorded=2))

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            action = r.view.legal_actions[0]
            if bot == "a" and n == 1:
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
                for _ in range(5):
                    ref.on_decision(ref.session(bot), d)
                return None
            return action

        streams = seat_bots(ref, ("a", "b", "c"), policy)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"]), streams

    rec, streams = asyncio.run(main())
    assert rec["wrong_requests"] == [4, 0, 0] and rec["disconnects"] == [0, 0, 0]
    wrong = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
    assert [i["seat"] for i in wrong] == [0, 0]
    assert "request '1' was answered already" in wrong[0]["detail"]
    rej = rejections(streams["a"].log)
    assert [(r.incident, r.request_id, r.match_id) for r in rej] == [
        (pb.INCIDENT_WRONG_REQUEST, "1", "m1")
    ] * 2


def test_an_answer_to_a_request_timed_out_lists_no_legal_actions() -> None:
    """M66: an answer read after its request's deadline (the wait resolved, the match task
    not run yet) was refused listing the legal actions, as if it could still be answered."""
    from arena.referee.match import _TIMED_OUT, MatchRunner, Pending
    from arena.referee.sessions import BotSession

    async def go() -> pb.DecisionRejected:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        for s in sessions:
            s.attach(Captured(f"fake-{s.name}"))
            s.stream.log = []  # type: ignore[union-attr]
            s.stream.answer = None  # type: ignore[union-attr]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        st = runner.seats[runner.game.to_act]
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(_TIMED_OUT)
        st.pending = Pending("4", fut, pb.PlayerView(), 0, 0.0, 0.0)
        assert not runner.on_decision(st, pb.Decision(request_id="4", match_id="m"))
        return rejections(st.session.stream.log)[-1]  # type: ignore[union-attr]

    rej = asyncio.run(go())
    assert not rej.legal_actions
    assert rej.message.endswith("legal now: nothing (no request of yours pending)")


def test_disconnects_beyond_the_recorded_ones_are_counted_only() -> None:
    """M69, M70, M77: 3 disconnects of a seat, 2 recorded (``max_disconnects_recorded``),
    all 3 counted in ``disconnects`` (not in ``wrong_requests``); a forfeited seat's are not
    counted."""
    from arena.referee.match import MatchRunner
    from arena.referee.sessions import BotSession

    async def go() -> tuple[dict[str, Any], list[str]]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        config = RefereeConfig(max_disconnects_recorded=2)
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, config)
        for _ in range(3):
            runner.on_disconnect(runner.seats[1], "dropped")
        runner.forfeit(runner.seats[2], "gone")
        runner.on_disconnect(runner.seats[2], "dropped")
        return runner._final_record(), [i["kind"] for i in runner.incidents]

    rec, kinds = asyncio.run(go())
    assert rec["disconnects"] == [0, 3, 0] and rec["wrong_requests"] == [0, 0, 0]
    assert kinds == ["disconnect", "disconnect", "forfeit"]


# ----------------------------------------------------------------------------- the end


def test_the_time_limit_ends_the_match_after_the_deal_in_progress() -> None:
    """M75, M76: reaching the time limit in deal 0 caps the match at 1 deal (``max_deals``
    is a count); a cap the ruleset already has at that deal is no time limit's doing."""
    from arena.referee.match import MatchRunner
    from arena.referee.sessions import BotSession

    async def go(max_deals: int) -> tuple[int, bool]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        rules = dataclasses.replace(PRESETS["classic"], max_deals=max_deals)
        runner = MatchRunner("m", rules, 1, sessions, RefereeConfig(), time_limit_s=60)
        runner._end_after_this_deal()
        return runner.game.ruleset.max_deals, runner.time_limited

    assert asyncio.run(go(0)) == (1, True)
    assert asyncio.run(go(5)) == (1, True)
    assert asyncio.run(go(1)) == (1, False)


def test_a_time_limit_reached_on_a_deals_last_answer_ends_the_match_there() -> None:
    """M18: the time limit checked only before each action, not again once an answer came:
    reached while the deal's last card was being decided (``ask_forced``: it is asked),
    the match went on to deal the next one and ended only after it."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            v = r.view
            if (
                v.deal_number == 0
                and v.phase == pb.PHASE_PLAYING
                and len(v.hand) == 1
                and (len(v.trick) == 2)
            ):  # the deal's last card: the limit passes while it is decided
                ref._matches["m1"]._end_at = asyncio.get_running_loop().time() - 1
            return v.legal_actions[0]

        seat_bots(ref, ("a", "b", "c"), policy)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=3, ask_forced=True)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"], time_limit_s=3600)

    rec = asyncio.run(main())
    assert rec["result"]["deals"] == 1 and len(rec["deals"]) == 1
    assert rec["time_limit_s"] == 3600 and rec["ruleset"]["max_deals"] == 1


def test_a_match_every_seat_forfeited_places_nobody_first() -> None:
    """M78, M58: an abandoned match (every seat forfeited) placed every seat first; its
    final views showed the deal it stopped in (hands, a seat to act)."""

    def silent(_bot: str, _n: int, _r: pb.DecisionRequest) -> pb.Action | None:
        return None

    rec, msgs = play(silent, decision_ms=5, max_strikes=1)
    assert rec["abandoned"] is True and rec["rules_result"] is None
    for bot in "abc":  # M58: the final view is a finished game's, mid-deal as it stopped
        (ended,) = [m.match_ended for m in msgs[bot] if m.HasField("match_ended")]
        assert ended.view.phase == pb.PHASE_GAME_OVER and not ended.view.hand
        assert not ended.view.HasField("to_act") and not ended.view.legal_actions
    assert rec["result"]["places"] == [3, 3, 3] and rec["result"]["winner"] is None
    assert rec["result"]["reason"] == "forfeits" and rec["forfeits"] == [0, 1, 2]


def test_two_forfeiters_share_the_last_place() -> None:
    """M79: only the first forfeiter was placed last."""

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        return pb.Action(bid=pb.Bid(amount=7)) if bot != "a" else r.view.legal_actions[0]

    rec, msgs = play(policy, max_strikes=1)
    assert rec["forfeits"] == [1, 2]
    assert rec["result"]["places"] == [1, 2, 2] and rec["result"]["winner"] == 0
    assert rec["result"]["forfeits"] == [1, 2]
    assert rec["rules_result"]["reason"] == "max_deals"
    for bot in "abc":  # the bots are told the same
        ended = [m.match_ended for m in msgs[bot] if m.HasField("match_ended")]
        assert [list(e.result.places) for e in ended] == [[1, 2, 2]]
        assert list(ended[0].result.forfeits) == [1, 2]


def test_each_new_deal_is_sent_at_once_in_a_message_of_its_own() -> None:
    """M47: the flush at a new deal dropped: the end of a deal and the start of the next
    waited for the next message to the bot (a seat not asked soon, as the 4-player dealer,
    learnt them late). Each seat gets a message without a kind whose events end with the
    new deal (docs/protocol.md's example)."""
    _rec, msgs = play(rules=PRESETS["1001-4p"], names=("a", "b", "c", "d"), max_deals=3)
    for bot in "abcd":
        flushed = [m for m in msgs[bot] if m.WhichOneof("kind") is None and m.events]
        starts = [m.events[-1].deal_started for m in flushed
                  if m.events[-1].WhichOneof("kind") == "deal_started"]  # fmt: skip
        assert starts == [1, 2], bot


def test_a_bot_back_within_its_grace_is_asked_again() -> None:
    """M71, M72, S16: bot c's stream drops as its 2nd request comes; back at once (in its
    grace period) it is told the match again (``resumed``, the seq of the last event its
    view reflects, its own seat) and asked the same request again, which it answers."""

    async def main() -> tuple[dict[str, Any], Captured, Captured]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=30))
        streams: dict[str, Captured] = {}
        back = Captured("fake-c2")

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            if bot == "c" and n == 2:
                session = ref.session("c")
                session.detach(streams["c"], 30, "dropped")
                back.bot, back.answer, back.log = "c", streams["c"].answer, []
                asyncio.get_running_loop().call_soon(session.attach, back)
                return None
            return r.view.legal_actions[0]

        streams.update(seat_bots(ref, ("a", "b", "c"), policy))
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        rec = await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        return rec, streams["c"], back

    rec, first, back = asyncio.run(main())
    assert rec["disconnects"] == [0, 0, 1] and not rec["forfeits"]
    assert [i["kind"] for i in rec["incidents"]] == ["disconnect"]
    asked = requests(first.log)
    assert [r.request_id for r in asked] == ["1", "2"]
    kinds = [m.WhichOneof("kind") for m in back.log]
    assert kinds[:2] == ["match_started", "decision_request"], kinds
    ms = back.log[0].match_started
    assert (ms.resumed, ms.seat, ms.forfeited) == (True, 2, False)
    assert ms.seq == max(e.seq for e in events(first.log))
    again = back.log[1].decision_request
    assert again.request_id == "2" and again.view == asked[1].view
    assert [r.request_id for r in requests(back.log)][1] == "3"


def test_an_answer_to_a_request_asked_again_settles_no_end_kept() -> None:
    """M56: a request asked again on a new stream was taken as proof that the bot read that
    stream up to it: its answer (whose id the bot knew from the old stream) dropped the end
    of a match kept for the bot, queued on the new stream before it, though the bot may not
    have read it."""
    from arena.referee.match import MatchRunner, Pending
    from arena.referee.sessions import BotSession

    async def go() -> list[str]:
        loop = asyncio.get_running_loop()
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        st = runner.seats[runner.game.to_act]
        session = st.session
        session.seats["m"] = st
        session.ends["m0"] = (None, 0, pb.ServerMessage(match_ended=pb.MatchEnded(match_id="m0")))
        fut = loop.create_future()
        st.pending = Pending("2", fut, pb.PlayerView(), 0, loop.time() + 60, loop.time() + 60)
        session.attach(Stream("back"))  # the end again, then the request again
        legal = runner.game.legal_actions()[0]
        from arena.protocol import action_to_pb

        d = pb.Decision(request_id="2", match_id="m", action=action_to_pb(legal))
        assert runner.on_decision(st, d)
        return list(session.ends)

    assert asyncio.run(go()) == ["m0"]


def test_why_an_answer_is_refused() -> None:
    """M82, M83, M85: a forfeited seat's late answer is told it forfeited (not that it timed
    out); the id of the seat's last request is "answered already", not "not sent"; '0' is
    no request id (they count from 1)."""
    from arena.referee.match import SeatState, _not_pending

    st = SeatState.__new__(SeatState)
    st.forfeited, st.requests, st.timed_out = True, 5, ("5",)
    assert _not_pending(st, None, "5") == "the seat has forfeited: it is asked nothing more"
    st.forfeited, st.timed_out = False, ()
    assert _not_pending(st, None, "5").startswith("request '5' was answered already")
    assert _not_pending(st, None, "6").startswith("request '6' has not been sent")
    assert _not_pending(st, None, "0").startswith("'0' is no request id")


def test_a_record_file_is_never_overwritten_and_its_owners_only(tmp_path: Path) -> None:
    """M86, M87: the record of a match whose id has a file already (another run of the
    referee into the same directory) overwrote it rather than taking the next name; the
    file, which holds the seed, was readable by anyone."""

    async def main() -> None:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        seat_bots(ref, ("a", "b", "c"), first_legal)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        await ref.run_match("m1", rs, 6, ["a", "b", "c"])

    asyncio.run(main())
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["m1.2.jsonl", "m1.jsonl"]
    import json

    seeds = [json.loads((tmp_path / f).read_text().splitlines()[0])["seed"] for f in files]
    assert seeds == [6, 5]
    for f in files:
        assert (tmp_path / f).stat().st_mode & 0o077 == 0


def test_a_record_that_cannot_be_started_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M88: a record whose first line could not be written (a full disk) stayed behind as an
    empty file (and the next match of that id took the name ``.2``)."""
    import errno
    import io

    from arena.referee import match as match_mod

    class Full(io.StringIO):
        def write(self, _s: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    real = match_mod.os.fdopen

    def fdopen(fd: int, *args: Any, **kw: Any) -> Any:
        match_mod.os.close(fd)
        return Full()

    async def main() -> None:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        seat_bots(ref, ("a", "b", "c"), first_legal)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        monkeypatch.setattr(match_mod.os, "fdopen", fdopen)
        try:
            with pytest.raises(OSError, match="cannot write the record of match m1"):
                await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        finally:
            monkeypatch.setattr(match_mod.os, "fdopen", real)

    asyncio.run(main())
    assert list(tmp_path.iterdir()) == []


def test_a_forfeited_bot_back_is_told_it_forfeited() -> None:
    """M49: a seat that forfeited and then reconnected was told ``forfeited: false`` (its
    bot would wait for requests that never come, not knowing why)."""

    async def main() -> Captured:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, max_strikes=1))
        streams: dict[str, Captured] = {}
        back = Captured("fake-c2")

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            if bot == "c":
                return pb.Action(bid=pb.Bid(amount=7))  # forfeits at once
            if bot == "a" and n == 3:
                session = ref.session("c")
                session.detach(streams["c"], 30, "dropped")
                back.bot, back.answer, back.log = "c", streams["c"].answer, []
                session.attach(back)
            return r.view.legal_actions[0]

        streams.update(seat_bots(ref, ("a", "b", "c"), policy))
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        return back

    back = asyncio.run(main())
    ms = back.log[0].match_started
    assert (ms.resumed, ms.forfeited, ms.seat) == (True, True, 2)
    assert not requests(back.log)


# ----------------------------------------------------------------------------- sessions


def test_rate_meter_limits() -> None:
    """S2, S3: a window may hold exactly ``limit`` (more is over); ``full`` says 0 while one
    more event stays within the limit."""
    from arena.referee.sessions import RateMeter

    async def go() -> None:
        loop = asyncio.get_running_loop()
        m = RateMeter(3, 60.0)
        assert [m.over(loop) for _ in range(3)] == [False, False, False]
        assert m.over(loop)
        m = RateMeter(3, 60.0)
        m.add(loop)
        m.add(loop)
        assert m.full(loop) == 0.0
        m.add(loop)
        assert m.full(loop) > 0

    asyncio.run(go())


def _drain(stream: Stream) -> list[pb.ServerMessage]:
    out = []
    q = stream._queue
    while not q.empty():
        m = q.get_nowait()
        if m is not None:
            out.append(m)
    return out


def test_stream_queue_bound_and_batches() -> None:
    """S4, S5, S6, S7: a stream takes ``max_queued`` messages and overflows at the next; a
    batch holds at most ``MAX_BATCH`` messages and ``MAX_BATCH_BYTES`` (the message over it
    goes in the next, not lost); the first message (the Welcome) goes alone."""
    from arena.referee.sessions import MAX_BATCH, MAX_BATCH_BYTES

    async def go() -> None:
        s = Stream("p", max_queued=2)
        s.put(pb.ServerMessage())
        s.put(pb.ServerMessage())
        assert not s.overflowed
        s.put(pb.ServerMessage())
        assert s.overflowed and s.closed

        async def written(msgs: list[pb.ServerMessage]) -> list[list[pb.ServerMessage]]:
            s = Stream("p", batch=True)
            for m in msgs:
                s.put(m)
            s.close()
            out: list[list[pb.ServerMessage]] = []

            async def write(data: pb.ServerMessage | bytes) -> None:
                m = pb.ServerMessage.FromString(message_bytes(data))  # (a batch: its bytes)
                out.append(list(m.batch.messages) if m.HasField("batch") else [m])

            await s.write_loop(write)
            return out

        small = [pb.ServerMessage(match_started=pb.MatchStarted(match_id=f"m{i}"))
                 for i in range(MAX_BATCH + 6)]  # fmt: skip
        got = await written(small)
        assert [len(b) for b in got] == [1, MAX_BATCH, 5]
        assert [m for b in got for m in b] == small
        third = MAX_BATCH_BYTES // 3
        big = [pb.ServerMessage(match_started=pb.MatchStarted(match_id=f"{i}" * third))
               for i in range(5)]  # fmt: skip
        got = await written(big)
        assert [len(b) for b in got] == [1, 2, 2]
        assert [m for b in got for m in b] == big

    asyncio.run(go())


def test_session_events_ends_and_streams() -> None:
    """S8, S10, S12, S13, S17, S20: events go once (with the next message), none are kept
    while away; the latest ``MISSED_KEPT`` ends are kept; a lost stream's ends count as
    not delivered; the end of an old stream does not detach the new one; a bot seated
    somewhere is not idle."""
    from arena.referee.sessions import MISSED_KEPT, BotSession

    async def go() -> None:
        s = BotSession("x", "tok-x")
        first = Stream("one")
        s.attach(first)
        assert s.idle.is_set()
        s.add_event(pb.Event(match_id="m", seq=1))
        s.send(pb.ServerMessage())
        s.send(pb.ServerMessage())
        sent = _drain(first)
        assert [len(m.events) for m in sent] == [1, 0]
        for i in range(MISSED_KEPT + 1):
            s.send_end(f"m{i}", pb.ServerMessage(match_ended=pb.MatchEnded(match_id=f"m{i}")))
        assert list(s.ends) == [f"m{i}" for i in range(1, MISSED_KEPT + 1)]
        assert all(on is first for on, _, _ in s.ends.values())
        s.lost(first)
        assert all(on is None for on, _, _ in s.ends.values())
        second = Stream("two")
        s.attach(second)
        s.detach(first, 5.0)  # the old stream's end, late
        assert s.stream is second
        s.seats["m"] = object()  # type: ignore[assignment]
        s.update_idle()
        assert not s.idle.is_set()
        s.seats.clear()
        s.detach(second, 5.0)
        s.add_event(pb.Event(match_id="m", seq=2))  # away: dropped
        assert not s.events

    asyncio.run(go())


def test_run_match_refuses_a_bot_twice_and_a_running_id() -> None:
    """K3, K4: a bot in two seats of one match, or a second match of a running match's
    id, is refused."""

    async def main() -> None:
        # (2 s: a match seating a bot twice would time out, not hang, before it fails)
        ref = Referee(RefereeConfig(decision_ms=2000, time_bank_ms=0))
        gate = asyncio.Event()

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            gate.set()
            return r.view.legal_actions[0]

        seat_bots(ref, ("a", "b", "c"), policy)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        with pytest.raises(ValueError, match="only one seat"):
            await ref.run_match("m0", rs, 5, ["a", "a", "b"])
        task = asyncio.create_task(ref.run_match("m1", rs, 5, ["a", "b", "c"]))
        await gate.wait()
        with pytest.raises(ValueError, match="already running"):
            await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        await task

    asyncio.run(main())


# ----------------------------------------------------------------------------- more of a match


def test_a_seat_keeps_its_last_timed_out_ids_only() -> None:
    """M20: a seat kept its last 9 timed-out request ids, not ``_TIMED_OUT_KEPT`` (8): the
    bound that keeps what a late answer is told cheap to work out."""
    from arena.referee.match import _TIMED_OUT_KEPT

    kept: list[int] = []

    async def main() -> None:
        ref = Referee(RefereeConfig(decision_ms=2, time_bank_ms=0, max_strikes=100))

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            if bot != "c":
                return r.view.legal_actions[0]
            kept.append(len(ref._matches["m1"].seats[2].timed_out))
            return None

        seat_bots(ref, ("a", "b", "c"), policy)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=3)
        await ref.run_match("m1", rs, 5, ["a", "b", "c"])

    asyncio.run(main())
    assert len(kept) > _TIMED_OUT_KEPT + 2
    assert kept == [min(i, _TIMED_OUT_KEPT) for i in range(len(kept))]


def test_a_seat_forfeited_while_asked_gets_a_fallback() -> None:
    """M25, M74: the move of a seat that forfeited while its request waited (its grace ran
    out) was recorded as its bot's; or the wait went on to the deadline."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=0.01))
        streams: dict[str, Captured] = {}

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            if bot == "c":
                ref.session("c").detach(streams["c"], 0.01, "dropped")
                return None
            return r.view.legal_actions[0]

        streams.update(seat_bots(ref, ("a", "b", "c"), policy))
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"])

    rec = asyncio.run(main())
    assert [i["kind"] for i in rec["incidents"]] == ["disconnect", "forfeit"]
    mine = [e for d in rec["deals"] for e in d["actions"] if e["seat"] == 2]
    assert mine and {e["by"] for e in mine} == {"fallback"}
    # M74: the forfeit ends the wait at once (not at the 60 s deadline, as a timeout)
    assert mine[0]["ms"] < 60_000


def test_no_seat_forfeits_once_the_match_is_over() -> None:
    """M73: a forfeit after the match finished (a grace period running out as it ended)
    changed its forfeits and incidents."""
    from arena.referee.match import MatchRunner
    from arena.referee.sessions import BotSession

    async def go() -> tuple[list[int], list[dict[str, Any]]]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        runner.finished = True
        runner.forfeit(runner.seats[1], "disconnected for more than 5 s")
        return runner.forfeits, runner.incidents

    assert asyncio.run(go()) == ([], [])


def test_the_record_file_names_each_actions_deal(tmp_path: Path) -> None:
    """M38: the action line of a deal's last action named the next deal (the one its
    action dealt)."""
    import json

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        seat_bots(ref, ("a", "b", "c"), first_legal)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=2)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"])

    rec = asyncio.run(main())
    lines = [json.loads(x) for x in (tmp_path / "m1.jsonl").read_text().splitlines()]
    per_deal = [[x["action"] for x in lines if x["type"] == "action" and x["deal"] == d]
                for d in range(2)]  # fmt: skip
    assert per_deal == [[e["action"] for e in d["actions"]] for d in rec["deals"]]
    kinds = [x["type"] for x in lines]
    assert kinds[0] == "start" and kinds[-1] == "end" and kinds.count("deal_end") == 2


def test_a_request_asked_again_a_nanosecond_before_its_deadline_states_a_ms() -> None:
    """M53: the ``max(1, ...)`` of the time left dropped: asked again with under a
    nanosecond left (rounded up less float noise: 0 ms), the request stated no deadline."""
    from types import SimpleNamespace

    from arena.referee.match import MatchRunner, Pending

    sent: list[pb.ServerMessage] = []
    now = 100.0
    runner: Any = SimpleNamespace(_loop=SimpleNamespace(time=lambda: now), match_id="m1")
    session = SimpleNamespace(send=lambda msg: sent.append(msg) or False)
    pending = Pending("7", None, pb.PlayerView(seat=1), 0, now + 5e-10, now - 1)  # type: ignore[arg-type]
    MatchRunner._send_request(runner, SimpleNamespace(pending=pending, session=session))  # type: ignore[arg-type]
    req = sent[0].decision_request
    assert (req.time_limit_ms, req.time_bank_ms) == (0, 1)


def test_answers_settle_the_ends_before_them_and_count_as_answers() -> None:
    """M62, M63: an answer to a request proves the bot read its stream up to it, so the
    end of an earlier match queued before it is no longer kept for resending (kept, it
    went again on every new stream, up to 64 of them); and it answers a request (not
    counted toward the flood limit), where a duplicate does not."""
    counted: list[int] = []

    async def main() -> list[list[str]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
        streams: dict[str, Captured] = {}

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            counted.append(ref.on_message(ref.session(bot), pb.BotMessage(decision=d)))
            if bot == "a" and r.request_id == "1":
                counted.append(ref.on_message(ref.session(bot), pb.BotMessage(decision=d)))

        streams.update(seat_bots(ref, ("a", "b", "c"), first_legal))
        for s in streams.values():
            s.answer = answer
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        await ref.run_match("m1", rs, 5, ["a", "b", "c"])
        after_one = [list(ref.session(n).ends) for n in "abc"]
        await ref.run_match("m2", rs, 6, ["a", "b", "c"])
        return after_one + [list(ref.session(n).ends) for n in "abc"]

    ends = asyncio.run(main())
    assert ends[:3] == [["m1"]] * 3
    assert ends[3:] == [["m2"]] * 3
    assert counted.count(1) == 2 and set(counted) == {0, 1}  # two duplicates of a's '1'


def test_an_interrupted_match_is_recorded_and_told_as_such(tmp_path: Path) -> None:
    """M80, M81: a match cancelled in its first deal, after its time limit was reached:
    its record's last line keeps ``time_limit_s`` (its ruleset's ``max_deals`` is the
    limit's), and the bots are told it was interrupted after 0 deals, without a view."""
    import json

    async def main() -> dict[str, Captured]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        task: asyncio.Task[Any] | None = None

        def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
            if bot == "a" and n == 1:
                ref._matches["m1"]._end_at = asyncio.get_running_loop().time() - 1
            if bot == "a" and n == 3:
                assert task is not None
                task.cancel()
                return None
            return r.view.legal_actions[0]

        streams = seat_bots(ref, ("a", "b", "c"), policy)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=4)
        task = asyncio.create_task(ref.run_match("m1", rs, 5, ["a", "b", "c"], time_limit_s=99))
        with pytest.raises(asyncio.CancelledError):
            await task
        return streams

    streams = asyncio.run(main())
    last = json.loads((tmp_path / "m1.jsonl").read_text().splitlines()[-1])
    assert last["type"] == "interrupted" and last["record"]["interrupted"] is True
    assert last["record"]["time_limit_s"] == 99 and last["record"]["ruleset"]["max_deals"] == 1
    for s in streams.values():
        (ended,) = [m.match_ended for m in s.log if m.HasField("match_ended")]
        assert ended.result.reason == "interrupted" and ended.result.deals == 0
        assert list(ended.result.scores) == [0, 0, 0] and not ended.HasField("view")


def test_a_long_request_id_is_echoed_cut() -> None:
    """M68: the request id of a refused answer was echoed in full in the refusal, the
    record's incident and the log (a bot may send an id of up to a MiB)."""
    from arena.referee.match import MAX_ID_CHARS, MatchRunner
    from arena.referee.sessions import BotSession

    async def go() -> tuple[pb.DecisionRejected, str]:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        for s in sessions:
            stream = Captured(f"fake-{s.name}")
            stream.log, stream.answer, stream.bot = [], None, s.name
            s.attach(stream)
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        st = runner.seats[0]
        assert not runner.on_decision(st, pb.Decision(request_id="x" * 10_000, match_id="m"))
        log = st.session.stream.log  # type: ignore[union-attr]
        return rejections(log)[-1], runner.incidents[-1]["detail"]

    rej, detail = asyncio.run(go())
    assert rej.request_id == "x" * (MAX_ID_CHARS - 1) + "…"
    assert rej.incident == pb.INCIDENT_WRONG_REQUEST
    assert "x" * MAX_ID_CHARS not in detail and "x" * MAX_ID_CHARS not in rej.message


# ----------------------------------------------------------------------------- protocol


def test_a_give_with_half_a_card_is_malformed_not_hidden() -> None:
    """P3: a give whose card has a suit but no rank was taken for a hidden give (a third
    seat's view of it) rather than refused as malformed."""
    from arena.protocol import MalformedActionError, public_action_from_pb
    from engine.view import HiddenGive

    assert public_action_from_pb(pb.Action(give=pb.Give(to_seat=2))) == HiddenGive(2)
    half = pb.Action(give=pb.Give(card=pb.Card(suit=pb.SUIT_HEARTS), to_seat=2))
    with pytest.raises(MalformedActionError, match="rank missing"):
        public_action_from_pb(half)


def test_a_token_of_the_longest_length_is_allowed() -> None:
    """P11: ``len(token) > MAX_TOKEN`` made ``>=``: a token of exactly MAX_TOKEN characters
    was refused."""
    from arena.protocol import MAX_TOKEN, token_problem

    assert token_problem("t" * MAX_TOKEN) is None
    assert token_problem("t" * (MAX_TOKEN + 1)) is not None


# ----------------------------------------------------------------------------- streams


def test_a_hello_without_a_protocol_version_is_welcomed_and_others_refused() -> None:
    """K12: a Hello leaving ``protocol_version`` unset (0, read as 1: the proto says so) was
    refused; a version other than 1 still is."""
    import grpc

    from arena.v1 import arena_pb2_grpc as pb_grpc

    async def body(ref: Referee, port: int) -> list[str]:
        out = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            for version in (0, 1, 2):
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-x"),)
                )
                await call.write(
                    pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=version))
                )
                try:
                    first = await call.read()
                    out.append(first.WhichOneof("kind"))
                except grpc.aio.AioRpcError as e:
                    out.append(e.code().name)
                call.cancel()
                while ref.connected_bots():  # (the next stream would replace this one)
                    await ref.wait_changed(0.1)
        return out

    assert serve_one_bot(body) == ["welcome", "welcome", "INVALID_ARGUMENT"]


# ----------------------------------------------------------------------------- lobby


def test_the_lobby_plays_its_matches_one_table_at_a_time() -> None:
    """L1, L3, L5: a lobby of ``max_matches`` 2 with 3 bots starts exactly 2 matches, ids
    ``m00000`` and ``m00001``, the second once the first is over (the bots of a match being
    started are not seated again before it has seated them)."""
    from arena.referee.lobby import FinishedMatch, Lobby

    done: list[FinishedMatch] = []

    async def main() -> int:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
        seat_bots(ref, ("a", "b", "c"), first_legal)

        async def finished(m: FinishedMatch) -> None:
            done.append(m)

        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        lobby = Lobby(ref, rs, seed=1, max_matches=2, on_finished=finished)
        await asyncio.wait_for(lobby.run(), 60)
        return lobby.started

    assert asyncio.run(main()) == 2
    assert sorted(m.match_id for m in done) == ["m00000", "m00001"]
    first, second = sorted(done, key=lambda m: m.k)
    assert second.started_at >= first.finished_at
    assert not second.record["incidents"] and not first.record["incidents"]


def test_a_lone_table_is_not_held_and_failures_back_off() -> None:
    """L2, L4: a table that is exactly its last match's is held only while other matches
    are played (with none, at once); a failing match pauses the lobby 1 s, then 2 s, ...
    (doubling, to 60 s)."""
    from arena.referee.lobby import Lobby

    async def go() -> tuple[float, list[float]]:
        ref = Referee()
        lobby = Lobby(ref, PRESETS["classic"])
        lobby._last = {n: (frozenset("abc"), 30.0) for n in "abc"}
        held = lobby._hold(["a", "b", "c"], asyncio.get_running_loop().time())

        async def fail(*_args: Any, **_kw: Any) -> dict[str, Any]:
            raise RuntimeError("a bug")

        ref.run_match = fail  # type: ignore[method-assign]
        pauses = []
        for k in range(3):
            await lobby._play(f"m{k}", k, k, ["a", "b", "c"])
            pauses.append(lobby._pause_s)
        return held, pauses

    held, pauses = asyncio.run(go())
    assert held == 0.0
    assert pauses == [1.0, 2.0, 4.0]


def test_the_matches_a_bot_will_play_count_the_seat_it_resumes() -> None:
    """K10: a bot back (Hello ``matches: 2``) while seated in a running match finishes that
    one on this stream: only 1 more may be new; it was counted as 2."""
    import grpc

    from arena.v1 import arena_pb2_grpc as pb_grpc

    async def body(ref: Referee, port: int) -> int | None:
        seat_bots(ref, ("a", "b"), first_legal)
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        task = asyncio.create_task(ref.run_match("m1", rs, 5, ["a", "b", "x"]))
        while "m1" not in ref.session("x").seats:
            await asyncio.sleep(0.01)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.ArenaStub(channel).Play(
                    metadata=(("authorization", "Bearer tok-x"),)
                )
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, matches=2)))
                first = await call.read()
                assert first.WhichOneof("kind") == "welcome", first
                left = ref.session("x").matches_left
                call.cancel()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return left

    assert serve_one_bot(body, decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=60) == 1


# ----------------------------------------------------------------------------- clocks


def test_whole_ms_are_rounded_up_less_float_noise() -> None:
    """M3, M4: ``_ms_up`` without its nanosecond of float noise said 0.1 + 0.2 s was
    301 ms; rounded to nearest, it said 0.3 ms was none."""
    from arena.referee.match import _ms_up

    assert _ms_up(0.1 + 0.2) == 300
    assert _ms_up(1.0) == 1000
    assert _ms_up(0.0003) == 1


class _Clock:
    """A running loop whose ``time()`` runs ``offset`` seconds ahead of it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop, self.offset = loop, 0.0

    def time(self) -> float:
        return self.loop.time() + self.offset

    def call_at(self, when: float, *args: Any) -> asyncio.TimerHandle:
        return self.loop.call_at(when - self.offset, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loop, name)


def test_a_decision_takes_until_its_answer_is_read_not_until_the_match_runs() -> None:
    """M23: a decision's time ran until the match task next ran, not until its answer was
    read: a loop busy with other matches' work (here: its clock jumps 1000 s between the
    two) cost the bot its time bank."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
        clock = _Clock(asyncio.get_running_loop())
        streams = seat_bots(ref, ("a", "b", "c"), first_legal)
        asked: list[str] = []

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            runner = ref._matches["m1"]
            asked.append(bot)
            if len(asked) == 1:
                runner._loop = clock  # type: ignore[assignment]
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                            action=r.view.legal_actions[0])  # fmt: skip
            ref.on_decision(ref.session(bot), d)
            if len(asked) == 2:
                clock.offset += 1000  # read; the match task has not run yet

        for s in streams.values():
            s.answer = answer
        rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rs, 5, ["a", "b", "c"])

    rec = asyncio.run(main())
    ms = [e["ms"] for e in rec["deals"][0]["actions"] if e["by"] == "bot"]
    assert len(ms) > 2 and max(ms) < 1_000_000


def test_a_match_reusing_an_ended_ones_id_gets_a_whole_grace_period() -> None:
    """Defect (S18 showed it): a seat taken while away counts its grace period from its
    match's start, but one whose match id was that of a match just ended (``run_match``
    takes an id again once its match is over), the away bot's grace for the old one still
    counting, kept the old one's end: away at 0 in m1 (grace 1 s), m1 over, a new m1 at
    0.5 forfeited the bot at 1.0, after half a period. It now forfeits at 1.5."""
    from types import SimpleNamespace

    from arena.referee.sessions import BotSession
    from tests.support.paused import unpaused

    forfeited: list[str] = []

    def seat(name: str) -> Any:
        match = SimpleNamespace(forfeit=lambda _st, _why: forfeited.append(name))
        return SimpleNamespace(match=match)

    async def main() -> tuple[list[str], list[str]] | None:
        forfeited.clear()
        loop = asyncio.get_running_loop()
        session = BotSession("x", "tok-x")  # away all along
        session.seats["m1"] = seat("old")
        start = loop.time()
        session.start_grace(1.0, "m1")
        del session.seats["m1"]  # the old m1 ended
        await asyncio.sleep(0.5)
        session.seats["m1"] = seat("new")
        seated = loop.time()
        session.start_grace(1.0, "m1")
        await asyncio.sleep(1.25 - (seated - start))  # the old period is over, not the new
        if loop.time() >= seated + 1.0:
            return None  # (paused past the new period's end: again)
        early = list(forfeited)
        await asyncio.sleep(seated + 1.1 - loop.time())
        return early, list(forfeited)

    early, late = unpaused(main, 5, "past the grace period")
    assert early == []
    assert late == ["new"]


def test_a_play_without_a_card_names_what_is_missing() -> None:
    """P13: a play without a card was refused as "suit missing" (of no card it had)."""
    from arena.protocol import MalformedActionError, action_from_pb

    with pytest.raises(MalformedActionError, match="a play needs a card"):
        action_from_pb(pb.Action(play=pb.PlayCard()))


def test_a_conceded_deals_contract_on_the_wire_is_its_bid() -> None:
    """P10: a deal conceded before a contract was named went on the wire with contract 0;
    the proto says it is the bid on a concession or throw-in."""

    def policy(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action | None:
        concede = [a for a in r.view.legal_actions if a.HasField("concede")]
        return concede[0] if concede else r.view.legal_actions[0]

    _rec, msgs = play(policy, seed=3, max_deals=2)
    ended = [e.deal_ended for e in events(msgs["a"]) if e.WhichOneof("kind") == "deal_ended"]
    conceded = [d for d in ended if d.outcome == "conceded"]
    assert conceded, [d.outcome for d in ended]
    assert all(d.contract == d.bid > 0 for d in conceded)


def test_a_replaced_stream_whose_client_reads_nothing_is_ended_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """K13: ``old.end(ABORTED, REPLACED, now=True)`` made ``now=False``: the replaced
    stream was to end after its queued messages, which a client granting it no
    flow-control window never lets out; its reader kept waiting on a client that sends
    nothing, so the replaced call stayed open, a task pair and its queue held, for as long
    as the connection lived. Now it is ended when it is replaced: its handler says so."""
    from tests.support.harness import until
    from tests.support.raw_h2 import NoWindow

    hello = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
    closed = "stream of bot x closed: ABORTED: replaced by a newer stream"

    async def body(ref: Referee, port: int) -> int:
        conn = await asyncio.to_thread(NoWindow, port)
        session = ref.session("x")
        try:
            await asyncio.to_thread(conn.play, "tok-x", hello)
            await until(lambda: session.welcomes == 1, "the first stream welcomed")
            first = session.stream
            assert first is not None
            for _ in range(5):  # more to say to it, behind its unwritten Welcome
                first.put(pb.ServerMessage(welcome=pb.Welcome(bot_name="x")))
            await asyncio.to_thread(conn.play, "tok-x", hello)
            await until(lambda: session.welcomes == 2, "the second stream welcomed")
            await until(
                lambda: any(closed in r.getMessage() for r in caplog.records),
                "the replaced stream's handler ended",
            )
            assert session.stream is not first and first.closed
            return session.welcomes
        finally:
            await asyncio.to_thread(conn.close)

    caplog.set_level(logging.INFO, logger="arena")
    assert serve_one_bot(body) == 2
