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

from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from arena.v1 import arena_pb2 as pb
from engine import Bid, Card, Pass, Ruleset, parse_card
from tests.e2e.test_rule_cases_round43 import check_scores, declarer_of
from tests.e2e.test_rules_over_wire_round35 import (
    Played,
    _cards,
    _classic,
    _deal_results,
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
