"""Rule cases end to end (round 44): what each seat may SEE under each option, read from
every message the referee sent it, and the options rounds 35 and 43 left out end to end.

Round 35 (``test_rules_over_wire_round35.py``) compares each request's view with the
engine's ``observe``; here :func:`check_knowledge` reads RULES.md alone: it walks every
card in every message a seat was sent (requests, events, rejections, deal results, the
match's end) and holds it to what that seat may know at that moment — its own dealt hand,
the talon once taken (to all, or to the declarer alone under ``talon_visible = false``),
a passed card only to its giver and receiver, and the cards played so far. So a hidden
talon, a passed card seen by a third seat, the unplayed hands of a conceded deal or the
4-player dealer learning a hand would each fail it, wherever on the wire they leaked.

Then, scored by hand through round 43's :func:`check_scores` (every seat's deal results,
the record and ``arena replay``): ``must_beat`` (and its "never obliges him to trump"),
``concede_pays = none`` with a free concession, ``rounding = 5`` on takes ending in 2, 3,
7 and 8, and a custom ``opening_bid`` / ``bid_step`` under the first hand's commitment.
Each case asserts that its rule did arise on its seed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from arena.protocol import action_from_pb
from arena.v1 import arena_pb2 as pb
from arena.web.replay import MatchReplay
from engine import (
    Bid,
    Card,
    Contract,
    Give,
    Pass,
    Phase,
    Play,
    Ruleset,
    Suit,
    parse_action,
    parse_card,
)
from tests.e2e.test_rule_cases_round43 import check_scores, declarer_of
from tests.e2e.test_rules_over_wire_round35 import (
    Played,
    _cards,
    _classic,
    _deal_results,
    _marriages_in,
    _preset,
    check_match,
    play,
    scripted,
)

# ----------------------------------------------------------------------------- knowledge


def cards_in(msg: Message) -> list[Card]:
    """Every card anywhere in ``msg`` (a protobuf message), nested messages included."""
    out: list[Card] = []
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            if field.message_type.name == "Card":
                out.extend(_cards([item]))
            else:
                out.extend(cards_in(item))
    return out


class Knowledge:
    """What one seat may know of the deal in progress, from RULES.md: its dealt hand, the
    talon once taken if shown to it, the cards passed to it, the cards played."""

    def __init__(self, p: Played, seat: int) -> None:
        self.p, self.seat, self.rules = p, seat, p.ruleset
        self.deal = -1
        self.known: set[Card] = set()
        self.saw_talon: list[bool] = []
        self.got: list[list[Card]] = []  # per deal: the cards passed to this seat

    def start(self, deal: int) -> None:
        if deal == self.deal:
            return
        assert deal == self.deal + 1, (self.seat, deal, self.deal)
        self.deal = deal
        d = self.p.record["deals"][deal]
        self.known = {parse_card(c) for c in d["hands"][self.seat]}
        self.saw_talon.append(False)
        self.got.append([])

    def check(self, cards: list[Card], where: str) -> None:
        leaked = set(cards) - self.known
        assert not leaked, f"seat {self.seat}, deal {self.deal}, {where}: sees {leaked}"

    def event(self, ev: pb.Event) -> None:
        kind = ev.WhichOneof("kind")
        if kind == "deal_started":
            self.start(ev.deal_started)
            return
        d = self.p.record["deals"][self.deal]
        if kind == "talon_taken":
            t = ev.talon_taken
            assert t.seat == declarer_of(d)
            may = self.rules.talon_visible or self.seat == t.seat
            assert sorted(_cards(t.cards)) == (
                sorted(parse_card(c) for c in d["talon"]) if may else []
            ), (self.seat, self.deal, may)
            self.known |= set(_cards(t.cards))
            self.saw_talon[-1] = bool(t.cards)
        elif kind == "action":
            a = ev.action.action
            if a.WhichOneof("kind") == "play":
                self.known |= set(_cards([a.play.card]))
            elif a.WhichOneof("kind") == "give":
                giver = ev.action.seat
                # RULES.md §4: only the giver and the receiver learn the card
                assert a.give.HasField("card") is (self.seat in (giver, a.give.to_seat))
                if a.give.HasField("card") and self.seat == a.give.to_seat:
                    self.known |= set(_cards([a.give.card]))
                    self.got[-1] += _cards([a.give.card])
        self.check(cards_in(ev), f"event {ev.seq} ({kind})")


def check_knowledge(p: Played) -> list[Knowledge]:
    """Walk every message each seat was sent, in order, holding each card in it to what
    the seat may know then (:class:`Knowledge`); the match's end shows no card at all."""
    out = []
    for seat in range(p.ruleset.players):
        k = Knowledge(p, seat)
        for m in p.messages[seat]:
            for ev in m.events:
                if ev.match_id == p.match_id:
                    k.event(ev)
            kind = m.WhichOneof("kind")
            if kind is None:  # events alone
                continue
            body = getattr(m, kind)
            if kind == "welcome" or getattr(body, "match_id", p.match_id) != p.match_id:
                continue
            if kind == "match_ended":
                assert cards_in(body) == [], f"seat {seat}: the match's end shows cards"
                continue
            if kind in ("match_started", "decision_request"):
                k.start(body.view.deal_number)
                if body.view.talon_known:
                    assert k.saw_talon[-1], f"seat {seat}: a talon it was not shown"
            k.check(cards_in(body), kind)
        out.append(k)
    return out


CARD = re.compile(r"(10|[9JQKA])([♠♣♦♥])")


def cards_said(value: Any) -> set[Card]:
    """Every card named anywhere in a JSON value (strings such as ``"K♥"``, ``"play K♥"``)."""
    if isinstance(value, str):
        return {parse_card(m.group(0)) for m in CARD.finditer(value)}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*map(cards_said, value)) if value else set()
    return set()


def check_web_replay(p: Played) -> None:
    """The web replay of the record, as each seat saw it (``MatchReplay.deal(i, seat)``):
    step ``j`` (after the deal's ``j``-th action) names only the cards that seat knew then
    (RULES.md, as :class:`Knowledge`); the face-up replay shows every hand and the talon."""
    rules = p.ruleset
    replay = MatchReplay(p.match_id, p.record)
    for i, d in enumerate(p.record["deals"]):
        declarer = declarer_of(d)
        talon = {parse_card(c) for c in d["talon"]}
        acts = [(a["seat"], parse_action(a["action"])) for a in d["actions"]]
        auction = next(j for j, (s, a) in enumerate(acts) if not isinstance(a, Bid | Pass))
        for seat in range(rules.players):
            steps = replay.deal(i, seat)["steps"]
            assert len(steps) == len(acts) + 1
            for step in steps:
                j = step["i"]
                known = {parse_card(c) for c in d["hands"][seat]}
                if j >= auction and (rules.talon_visible or seat == declarer):
                    known |= talon
                for s, a in acts[:j]:
                    if isinstance(a, Play) or (isinstance(a, Give) and seat in (s, a.to)):
                        known.add(a.card)
                leaked = cards_said(step) - known
                assert not leaked, f"web replay, deal {i}, seat {seat}, step {j}: {leaked}"
        full = replay.deal(i)["steps"][0]
        assert cards_said(full) >= talon | {parse_card(c) for h in d["hands"] for c in h}


VISIBILITY = {
    # the talon to the declarer alone; some deals conceded (the unplayed hands stay hidden)
    "classic-hidden-talon": (_classic(max_deals=4, talon_visible=False), 11, "concede"),
    "classic-shown-talon": (_classic(max_deals=3), 12, "random"),
    "1001-hidden-talon": (_preset("1001", max_deals=4, talon_visible=False), 13, "concede"),
    "1001-4p-hidden-talon": (_preset("1001-4p", max_deals=4, talon_visible=False), 14, "random"),
    "1001-4p-shown-talon": (_preset("1001-4p", max_deals=4), 15, "concede"),
}


@pytest.mark.parametrize("name", list(VISIBILITY))
def test_no_seat_is_ever_sent_a_card_it_may_not_know(tmp_path: Path, name: str) -> None:
    """RULES.md §3, §4, §6 and 1001's 4 players: every card in every message to every seat
    (requests, events, deal results, the end) is one it may know at that moment."""
    rules, seed, contract = VISIBILITY[name]
    p = play(tmp_path, rules, seed, scripted(salt=name, pass_p=0.5, contract=contract))
    check_match(p)
    ks = check_knowledge(p)
    check_web_replay(p)
    results = _deal_results(p)
    for k in ks:
        for i, d in enumerate(p.record["deals"]):
            declarer = declarer_of(d)
            # the talon was shown to the seats RULES.md §3 names, at the auction's end
            assert k.saw_talon[i] is (rules.talon_visible or k.seat == declarer), (k.seat, i)
            if k.seat != declarer and d["hands"][k.seat]:
                assert len(k.got[i]) == 1, "each opponent dealt in receives one card"
            else:
                assert k.got[i] == []
    if rules.players == 4:
        for i, d in enumerate(p.record["deals"]):
            assert d["hands"][d["dealer"]] == [] and results[i].takes[d["dealer"]] == 0
    if contract == "concede":
        assert any(r.conceded for r in results), "no deal was conceded on this seed"
    if not rules.talon_visible:
        assert any(k.saw_talon[i] is False for k in ks for i in range(len(results)))


# ----------------------------------------------------------------------------- must_beat


def _winning(trick: list[Card], trump: Suit | None) -> Card:
    """The card winning ``trick`` so far (RULES.md §7)."""
    best = trick[0]
    for c in trick[1:]:
        if (c.suit == best.suit and c.rank > best.rank) or c.suit == trump != best.suit:
            best = c
    return best


def must_beat_follows(hand: list[Card], trick: list[Card], trump: Suit | None) -> set[Card]:
    """The cards a follower may play under ``must_beat`` (RULES.md §7): the led suit, else a
    trump, else any; among those obliged, one that beats the trick if he can. Holding the
    led suit he is never obliged to trump, even when no card of the suit beats."""
    best = _winning(trick, trump)
    suit = [c for c in hand if c.suit == trick[0].suit]
    trumps = [c for c in hand if c.suit == trump]
    obliged = suit or trumps or hand
    beating = [c for c in obliged if _winning([best, c], trump) == c]
    return set(beating or obliged)


def test_must_beat_obliges_to_beat_but_never_to_trump(tmp_path: Path) -> None:
    """``must_beat``: every follower's request offers exactly the cards RULES.md §7 leaves
    him, read from the wire view alone; on this seed a follower holds the led suit, none
    of it high enough, and trumps (offered his suit only), one holds higher and lower
    cards of the led suit (offered the higher), and one void of the suit holds trumps above
    and below a trump already in the trick (offered the higher). Scored by hand."""
    rules = _classic(max_deals=5, must_beat=True)
    p = play(tmp_path, rules, 543, scripted(salt="mb", pass_p=0.5, contract="contract"))
    check_scores(p, tmp_path)
    seen = set()
    for seat in range(3):
        for req in p.requests(seat):
            v = req.view
            if v.phase != pb.PHASE_PLAYING or not v.trick:
                continue
            hand = _cards(v.hand)
            trick = [c for _, c in ((sc.seat, _cards([sc.card])[0]) for sc in v.trick)]
            trump = None if v.trump == pb.SUIT_UNSPECIFIED else Suit(v.trump - 1)
            offered = {c for a in v.legal_actions for c in _cards([a.play.card])}
            want = must_beat_follows(hand, trick, trump)
            assert offered == want, (seat, hand, trick, trump)
            led = trick[0].suit
            suit = [c for c in hand if c.suit == led]
            trumps = [c for c in hand if c.suit == trump]
            best = _winning(trick, trump)
            low = all(_winning([best, c], trump) != c for c in suit)
            if suit and trumps and led != trump and want == set(suit) and low:
                seen.add("never obliged to trump")
            if suit and set(suit) > want:
                seen.add("beats in the suit")
            if not suit and trumps and set(trumps) > want:
                seen.add("overtrumps")
    assert seen == {"never obliged to trump", "beats in the suit", "overtrumps"}, seen


# ----------------------------------------------------------------------------- rounding


def _by_fives(take: int) -> int:
    """RULES.md (1001): a take rounded to a multiple of 5, "2.5 and above up": takes are
    whole points, so a remainder of 3 or 4 goes up, 1 or 2 down (57 -> 55, 58 -> 60)."""
    return take - take % 5 + (5 if take % 5 >= 3 else 0)


@pytest.mark.parametrize(
    ("rules", "seed"),
    [(_classic(max_deals=4, rounding=5), 7), (_preset("1001-4p", max_deals=4), 51)],
    ids=["classic-by-fives", "1001-4p"],
)
def test_rounding_by_fives_rounds_the_defenders_takes_only(
    tmp_path: Path, rules: Ruleset, seed: int
) -> None:
    """``rounding = 5``: each defender scores his take rounded by fives (a take ending in 2
    or 7 down, in 3 or 8 up); the declarer's take is compared with the contract unrounded
    (two points short fails); the 4-player dealer's talon points are not rounded. Every
    seat's deal results, the record and ``arena replay`` agree."""
    p = play(tmp_path, rules, seed, scripted(salt="r5", pass_p=0.5, contract="contract"))
    check_scores(p, tmp_path)
    seen = set()
    for seat in range(rules.players):
        for res in _deal_results(p, seat):
            if res.outcome not in ("made", "failed"):
                continue
            d = res.declarer
            take = res.takes[d]
            assert res.made is (take >= res.contract)
            assert res.deltas[d] == (res.contract if res.made else -res.contract)
            if not res.made and res.contract - take <= 2:
                seen.add("short by 1 or 2 fails")
            for s in range(rules.players):
                if rules.players == 4 and s == res.dealer:
                    if res.deltas[s] % 5:
                        seen.add("talon unrounded")
                    continue
                if s != d:
                    assert res.deltas[s] == _by_fives(res.takes[s]), (s, res.takes[s])
                    seen.add({2: "down from 2", 3: "up from 3"}.get(res.takes[s] % 5, ""))
    want = {"short by 1 or 2 fails", "down from 2", "up from 3"}
    if rules.players == 4:
        want.add("talon unrounded")
    assert want <= seen, seen


# ----------------------------------------------------------------------------- the auction


def test_a_custom_opening_bid_and_step_under_the_commitment(tmp_path: Path) -> None:
    """``opening_bid = 90``, ``bid_step = 15``, the first hand committed (RULES.md §2, §5):
    he holds 90 unasked; each raise is offered from the standing bid + 15 in steps of 15 up
    to 120 + the marriages in the bidder's hand (a cap between two steps, e.g. 160 from 90:
    up to 150); the contract from the winning bid in steps of 5, whatever the step; an
    all-pass plays 90.
    Every offer is computed from the wire view's hand; the deals scored by hand."""
    rules = _classic(max_deals=3, opening_bid=90, bid_step=15)
    p = play(tmp_path, rules, 0, scripted(salt="b15", pass_p=0.3, contract="random"))
    check_scores(p, tmp_path)
    off_step = []  # bidding requests whose cap is off the step of 15 from the standing bid
    for seat in range(3):
        for req in p.requests(seat):
            v = req.view
            hand = set(_cards(v.hand))
            cap = 120 + _marriages_in(hand, rules)
            offered = [action_from_pb(a) for a in v.legal_actions]
            if v.phase == pb.PHASE_BIDDING:
                assert v.HasField("bid") and v.bid % 15 == 0
                # the first hand speaks only once somebody has raised his 90
                assert seat != v.active_seats[0] or v.bid > 90
                want: list[Any] = [Bid(b) for b in range(v.bid + 15, cap + 1, 15)]
                assert offered == [*want, Pass()], (seat, v.bid, cap)
                if (cap - v.bid) % 15 and want:
                    off_step.append(cap)
            elif v.phase == pb.PHASE_CONTRACT:
                amounts = [a.amount for a in offered if isinstance(a, Contract)]
                assert amounts == list(range(v.bid, max(v.bid, cap) + 1, 5)), (v.bid, cap)
    assert off_step, "no bidder's cap fell between two steps"
    results = _deal_results(p)
    assert [r.bid for r in results] == [135, 150, 90]
    assert results[2].contract == 115 and results[0].contract == 145  # not multiples of 15
    for d, res in zip(p.record["deals"], results, strict=True):
        bids = [a["action"] for a in d["actions"] if a["action"].startswith("bid")]
        if res.bid == 90:  # nobody raised: the committed first hand plays the opening bid
            assert bids == [] and res.declarer == (d["dealer"] + 1) % 3


# ----------------------------------------------------------------------------- concession


def test_sdk_bots_a_free_concession_paying_none_reveals_nothing_and_scores_nothing(
    tmp_path: Path,
) -> None:
    """``concede = free``, ``concede_pays = none``, ``talon_visible = false``, played by
    bots of the SDK whose every choice is given (a pass or the lowest raise by a drawn
    number; concede whenever offered): every deal scores 0 for everyone (RULES.md §6), and
    what each bot learns through the SDK (views, ``on_talon_taken``, ``on_action``) is its
    own hand, the talon if it is the declarer, and the one card given to it: the unplayed
    hands of a conceded deal are shown to nobody, the other defender's card neither."""
    import asyncio
    import random

    from engine import Concede, Give, HiddenGive
    from engine.actions import Action
    from sdk import Bot
    from tests.e2e.test_rules_over_wire_round35 import NAMES3
    from tests.support.harness import arena

    saw: dict[tuple[int, int], set[Card]] = {}  # (seat, deal) -> cards it was shown
    talons: dict[tuple[int, int], Any] = {}
    given: dict[tuple[int, int], list[Any]] = {}
    told: dict[int, list[Any]] = {}

    def note(seat: int, deal: int, cards: Any) -> None:
        saw.setdefault((seat, deal), set()).update(cards)

    class Conceder(Bot):
        # The deal in progress, counted from the deal ends told: a hook's ``view`` is the
        # last one the seat was given (sdk/bot.py), of an earlier deal for a seat that
        # takes the talon unasked (the committed first hand after two passes).
        deal = 0

        def act(self, view: Any) -> Action:
            assert view.deal_number == self.deal
            note(view.seat, self.deal, view.hand)
            note(view.seat, self.deal, view.talon or ())
            note(view.seat, self.deal, [c for _, c in view.gives if c is not None])
            legal = list(view.legal_actions)
            if Concede() in legal:
                return Concede()
            rng = random.Random(f"{view.seat}:{view.deal_number}:{len(legal)}")
            if view.phase is Phase.BIDDING:
                return Pass() if rng.random() < 0.7 else legal[0]
            return rng.choice(legal)

        def on_talon_taken(self, view: Any, declarer: int, talon: Any) -> None:
            talons[view.seat, self.deal] = (declarer, talon)
            note(view.seat, self.deal, talon or ())

        def on_action(self, view: Any, seat: int, action: Any) -> None:
            if isinstance(action, Give | HiddenGive):
                given.setdefault((view.seat, self.deal), []).append(action)
                if isinstance(action, Give):
                    note(view.seat, self.deal, [action.card])

        def on_deal_end(self, view: Any, result: Any) -> None:
            told.setdefault(view.seat, []).append(result)
            self.deal += 1

    rules = _classic(max_deals=3, concede="free", concede_pays="none", talon_visible=False)

    async def main() -> dict[str, Any]:
        async with arena(tmp_path, decision_ms=20_000, time_bank_ms=0) as a:
            tasks = await a.runners(NAMES3, [Conceder] * 3, matches=1)
            record = await a.referee.run_match("m1", rules, 8, NAMES3)
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            await a.referee.end_streams()
            return record

    record = asyncio.run(main())
    assert [d["outcome"] for d in record["deals"]] == ["conceded"] * 3
    assert record["result"]["scores"] == [0, 0, 0]
    for seat in range(3):
        assert [list(r.deltas) for r in told[seat]] == [[0, 0, 0]] * 3
        assert all(r.outcome == "conceded" and r.contract is None for r in told[seat])
    for i, d in enumerate(record["deals"]):
        declarer = declarer_of(d)
        talon = {parse_card(c) for c in d["talon"]}
        gives = [parse_action(a["action"]) for a in d["actions"] if a["action"].startswith("give")]
        assert len(gives) == 2
        for seat in range(3):
            own = {parse_card(c) for c in d["hands"][seat]}
            got = {g.card for g in gives if isinstance(g, Give) and g.to == seat}
            may = own | (talon | {g.card for g in gives} if seat == declarer else got)
            assert saw.get((seat, i), own) <= may, (seat, i, saw.get((seat, i), set()) - may)
            who, shown = talons[seat, i]
            assert who == declarer and (set(shown) == talon if seat == declarer else shown is None)
            kinds = [type(g) for g in given[seat, i]]
            if seat == declarer:
                assert kinds == [Give, Give]
            else:  # his own card, and the other defender's hidden
                assert sorted(k.__name__ for k in kinds) == ["Give", "HiddenGive"]
        # somebody really held cards nobody else saw: the conceded deal's hands stay hidden
        for seat in range(3):
            others = {parse_card(c) for s in range(3) if s != seat for c in d["hands"][s]}
            assert others - saw.get((seat, i), set())
