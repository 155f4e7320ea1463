"""Round 51 review (mutation testing) of round 51's "deal_once" views (perf51) and the bot
author's tools (journey51: ``sdk.local.mean_ci95``, the margin of ``arena-bot try``,
``sdk.local.record_decisions``). Each test here kills hand mutants the round's own tests
let live; the report lists them."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import BotSession
from arena.v1 import arena_pb2 as pb
from bots import load
from engine import Game, IllegalActionError, PlayerView, ReplayError, Ruleset
from engine.rules import PRESETS
from engine.view import observe
from sdk.local import mean_ci95, play_local, play_series, record_decisions
from tests.support.harness import as_message
from tests.support.streams import referee_with_streams

ROOT = Path(__file__).resolve().parents[2]


class _Concedes(_AnswerAtOnce):
    """A bot that concedes whenever it declares and passes whenever it may (``concedes``;
    else it plays the first legal action), keeping every view it is sent (its starts' and
    requests', in order)."""

    __slots__ = ("concedes", "views")

    def __init__(self, referee: Referee, session: BotSession, concedes: bool = True) -> None:
        super().__init__(referee, session)
        self.results_once = self.deal_once = True
        self.concedes = concedes
        self.views: list[pb.PlayerView] = []

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        kind = msg.WhichOneof("kind")
        if kind == "match_started":
            self.views.append(_copy(msg.match_started.view))
        if kind != "decision_request":
            return
        r = msg.decision_request
        self.views.append(_copy(r.view))
        legal = list(r.view.legal_actions)
        pick = (
            legal[0]
            if not self.concedes
            else next(
                (a for a in legal if a.HasField("concede")),
                next((a for a in legal if a.HasField("pass")), legal[0]),
            )
        )
        answer = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=pick)
        asyncio.get_running_loop().call_soon(self.referee.on_decision, self.session, answer)


def _copy(view: pb.PlayerView) -> pb.PlayerView:
    kept = pb.PlayerView()
    kept.CopyFrom(view)
    return kept


def _play_conceding(rules: Ruleset, seed: int) -> list[_Concedes]:
    async def main() -> list[_Concedes]:
        names = ["a", "b", "c", "d"][: rules.players]
        referee, streams = referee_with_streams(
            lambda referee, _name, session: _Concedes(referee, session), names=names
        )
        rec = await referee.run_match("m1", rules, seed, names)
        assert not rec["incidents"]
        return streams

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("preset", "opening_bid", "seed"), [("classic", 120, 3), ("1001-4p", 40, 2)]
)
def test_a_seat_unasked_for_whole_deals_gets_a_new_deals_auction_whole(
    preset: str, opening_bid: int, seed: int
) -> None:
    """The referee's own same-deal check is what keeps a view of a new deal whole when the
    seat was last sent a view of an earlier deal with the very same auction: a seat asked
    nothing for two deals (every bid forced: an opening bid at the cap, 120, under a ruleset
    of one's own; the declarers conceding) is asked again three deals on, as the same hand,
    after the same passes. The prefix check alone left those bids out of the new deal's
    view (``bids_omitted`` 2 in deal 8), which the SDK refuses as malformed ("2 bids left
    out, 0 known from the match's last view of deal 8"). At four
    players the dealer, who sits out, is asked nothing for a deal: the same holds."""
    rules = dataclasses.replace(PRESETS[preset], opening_bid=opening_bid, max_deals=9)
    streams = _play_conceding(rules, seed)
    across = 0
    for stream in streams:
        previous: PlayerView | None = None
        for msg in stream.views:
            if previous is not None and previous.deal_number != msg.deal_number:
                assert msg.bids_omitted == msg.tricks_omitted == 0
                got = view_from_pb(msg, rules, previous)  # (refused when it left any out)
                # The case: the earlier deal's auction is the very one of this deal's view.
                across += bool(previous.bids) and got.bids[: len(previous.bids)] == previous.bids
                previous = got
            else:
                previous = view_from_pb(msg, rules, previous)
    assert across >= 2 if preset == "classic" else across == 0


class _Resumes(_Concedes):
    """Seat c's bot: it has seat a's bot (``watched``, its stream) come back on a new stream
    (``then``) while seat a has no request pending: once a trick of a deal is played, or
    (``first_of_deal``) once a deal's auction has begun before seat a was asked in it."""

    __slots__ = ("first_of_deal", "other", "then", "watched")

    def __init__(self, referee: Referee, session: BotSession, other: BotSession,
                 watched: _Concedes, then: _Concedes, first_of_deal: bool) -> None:  # fmt: skip
        super().__init__(referee, session, concedes=False)
        self.other, self.watched, self.first_of_deal = other, watched, first_of_deal
        self.then: _Concedes | None = then

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        r = msg.decision_request if msg.HasField("decision_request") else None
        if r is not None and self.then is not None:
            v = r.view
            asked = {w.deal_number for w in self.watched.views if w.legal_actions}
            if v.bids and v.deal_number not in asked if self.first_of_deal else v.tricks:
                then, self.then = self.then, None
                asyncio.get_running_loop().call_soon(self.other.attach, then)
        super().put(msg)


@pytest.mark.parametrize("first_of_deal", [False, True])
def test_a_resumed_match_starts_the_new_streams_deal_from_its_view(first_of_deal: bool) -> None:
    """A bot back on a new stream, with no request pending, is sent ``MatchStarted``
    (resumed) with the deal so far: its next request of that deal leaves out the bids and
    tricks that view held (docs/protocol.md: "the match's last view it sent that bot on
    this stream (`MatchStarted`'s, or an earlier request's)"), and is rebuilt from it; its
    first request of a deal, too, when that view came before it (the doc said the first
    request of each deal always held the whole auction)."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=3)

    async def main() -> tuple[_Concedes, _Concedes]:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        sessions = {}
        for name in ("a", "b", "c"):
            referee.add_bot(name, f"token-{name}")
            sessions[name] = referee.session(name)
        later = _Concedes(referee, sessions["a"], concedes=False)
        before = _Concedes(referee, sessions["a"], concedes=False)
        sessions["a"].attach(before)
        sessions["b"].attach(_Concedes(referee, sessions["b"], concedes=False))
        # (seat c speaks just before seat a when a is first hand: committed, asked last)
        sessions["c"].attach(
            _Resumes(referee, sessions["c"], sessions["a"], before, later, first_of_deal)
        )
        await referee.run_match("m1", rules, 4, ["a", "b", "c"])
        return before, later

    before, later = asyncio.run(main())
    started, first = later.views[0], later.views[1]
    assert not started.legal_actions  # (MatchStarted's)
    assert started.bids if first_of_deal else started.tricks
    assert first.deal_number == started.deal_number
    assert (first.bids_omitted, first.tricks_omitted) == (len(started.bids), len(started.tricks))
    asked_before = {v.deal_number for v in before.views if v.legal_actions}
    assert (first.deal_number not in asked_before) == first_of_deal
    doc = " ".join((ROOT / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "in the first view of each deal it is sent (its first request of the deal, unless" in doc
    previous: PlayerView | None = None
    for msg in later.views:
        previous = view_from_pb(msg, rules, previous)


def _views(seed: int, preset: str = "classic") -> list[PlayerView]:
    rng = random.Random(seed)
    rules = PRESETS[preset]
    g = Game.new(preset, seed=seed, players=[f"p{i}" for i in range(rules.players)])
    out = []
    while not g.is_over and len(g.deal_results) < 2:
        seat = g.to_act
        assert seat is not None
        out.append(observe(g, seat))
        g.apply(rng.choice(g.legal_actions()), seat=seat)
    return out


def test_a_view_may_leave_out_every_trick_and_fewer_than_the_last_view_held() -> None:
    """The protocol's lists are "the first N of that last view": all of them (no trick
    completed since) encodes, and a view leaving out fewer than the bot holds takes only
    that many of them (another referee, or one that keeps less, may)."""
    views = [v for seed in range(6) for v in _views(seed)]
    late = next(v for v in views if len(v.tricks) >= 3)
    whole = view_from_pb(view_to_pb(late), late.ruleset)
    every = view_to_pb(late, bids_omitted=len(late.bids), tricks_omitted=len(late.tricks))
    assert not every.bids and not every.tricks
    assert view_from_pb(every, late.ruleset, late) == whole
    fewer = view_to_pb(late, bids_omitted=len(late.bids) - 1, tricks_omitted=2)
    assert len(fewer.tricks) == len(late.tricks) - 2
    assert view_from_pb(fewer, late.ruleset, late) == whole
    with pytest.raises(MalformedMessageError, match=rf"of deal {late.deal_number + 1}$"):
        view_from_pb(view_to_pb(late, tricks_omitted=len(late.tricks)), late.ruleset, None)


# ----------------------------------------------------------------- journey51's tools


def test_mean_ci95_is_students_t_over_the_values() -> None:
    """Values chosen for each branch: t of 1, 5 and 30 degrees of freedom (the table's
    first, a middle and its last entry) and past the table (the normal with its first
    correction); the sample variance divides by n - 1."""
    quantiles = {2: 12.706, 6: 2.571, 31: 2.042}
    for n, t in quantiles.items():
        xs = [float(i % 3) for i in range(n)]
        mean = sum(xs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
        got = mean_ci95(xs)
        assert got == pytest.approx(
            (mean, mean - t * sd / math.sqrt(n), mean + t * sd / math.sqrt(n))
        )
    xs = [float(i % 2) for i in range(61)]  # 60 degrees of freedom: t 2.000
    mean, low, high = mean_ci95(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / 60)
    assert (high - low) / 2 == pytest.approx(2.000 * sd / math.sqrt(61), abs=1e-3)
    assert mean_ci95([3.0]) == (3.0, -math.inf, math.inf)


def test_trys_margin_at_four_players_is_over_the_three_others_mean() -> None:
    """At four players (the dealer sitting out a deal in four) the margin is the bot's
    points per deal less the mean of the three others', each seed averaged over its four
    seats, as the records say; a rotation cut short counts for nothing."""
    by_seed: dict[int, list[float]] = defaultdict(list)

    def seen(match_id: str, m: Any) -> None:
        per_deal = [s / m.result.deals for s in m.result.scores]
        me = m.record["players"].index("random")
        others = [x for seat, x in enumerate(per_deal) if seat != me]
        by_seed[m.record["seed"]].append(per_deal[me] - sum(others) / 3)

    result = play_series(load("random"), [("heuristic", load("heuristic"))], 9, "1001-4p",
                         seed=1, max_deals=3, on_match=seen)  # fmt: skip
    assert [len(v) for v in by_seed.values()] == [4, 4, 1]
    by_seed.popitem()  # (the ninth match: its seed was not played from every seat)
    assert result.margins == pytest.approx([sum(v) / 4 for v in by_seed.values()])
    assert result.margin() == pytest.approx(mean_ci95(result.margins))


def test_record_decisions_of_a_four_player_record_number_deals_and_actions() -> None:
    """A 1001-4p record: every action once, in order, each with its deal, its index in the
    deal and the view the engine gives its seat then (the dealer who sits out never acts)."""
    m = play_local([load("random")] * 4, "1001-4p", 6, max_deals=3)
    got = list(record_decisions(m.record))
    expected = [(i, j, a["seat"], a["action"]) for i, d in enumerate(m.record["deals"])
                for j, a in enumerate(d["actions"])]  # fmt: skip
    assert [(d.deal, d.index, d.seat, str(d.action)) for d in got] == expected
    assert {d.deal for d in got} == {0, 1, 2}
    assert all(d.view.seat == d.seat and d.action in d.view.legal_actions for d in got)
    assert all(d.by == "" for d in got)  # (play_local's record says no "by": the referee's do)
    for deal in range(3):
        dealer = m.record["deals"][deal]["dealer"]
        assert dealer not in {d.seat for d in got if d.deal == deal}


def test_record_decisions_gives_an_action_by_the_wrong_seat_with_that_seats_view() -> None:
    """An action the rules refuse (here a seat acting out of turn) comes with the view of
    the seat the record names, then raises at it, as the docstring says."""
    m = play_local([load("random")] * 3, "classic", 2, max_deals=1)
    rec = copy.deepcopy(m.record)
    first = rec["deals"][0]["actions"][0]
    wrong = (first["seat"] + 1) % 3
    first["seat"] = wrong
    got = []
    with pytest.raises(IllegalActionError):
        for d in record_decisions(rec):
            got.append(d)
    assert [(d.seat, d.view.seat) for d in got] == [(wrong, wrong)]


def test_record_decisions_refuses_what_is_no_record_as_replay_does() -> None:
    """Not a record: ``ReplayError`` naming the key, as its docstring says (not a KeyError
    from the middle of the game)."""
    m = play_local([load("random")] * 3, "classic", 1, max_deals=1)
    broken = {**m.record, "deals": [{"actions": [{"seat": "0", "action": "pass"}]}]}
    with pytest.raises(ReplayError, match="not a match record"):
        next(record_decisions(broken))


@pytest.mark.parametrize(
    ("margins", "verdict"),
    [
        ([4.0, 5.0, 6.0], "ahead, beyond chance"),
        ([-4.0, -5.0, -6.0], "behind, beyond chance"),
        ([-4.0, 5.0, 0.5], "no difference beyond chance"),
        ([0.0, 0.0], "no difference beyond chance"),
    ],
)
def test_trys_margin_line_says_beyond_chance_only_outside_the_interval(
    margins: list[float], verdict: str
) -> None:
    """An interval touching 0 (here [0, 0]: two seeds of no margin at all) is no
    difference; one wholly above or below it is."""
    from rich.console import Console

    from sdk.cli import _print_results
    from sdk.local import SeriesEntry, SeriesResult

    console = Console(record=True, width=400)
    entries = [SeriesEntry("mine", matches=3), SeriesEntry("other", matches=3)]
    _print_results(console, SeriesResult("classic", 3, entries, 0, margins), "t")
    line = next(x for x in console.export_text().splitlines() if x.startswith("margin of "))
    assert line.startswith("margin of mine: ") and line.endswith(
        verdict + (" (a larger -n narrows the interval)" if verdict.startswith("no") else "")
    ), line
