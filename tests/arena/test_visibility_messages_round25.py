"""Everything the referee sends a bot, audited against what its seat may know (round 25).

Whole matches are played in-process (no network) by bots that now and then answer
illegally, with a malformed action or for a request that is not pending, so that every
kind of message is sent: ``match_started``, ``decision_request``, ``decision_rejected``
(ILLEGAL, MALFORMED, WRONG_REQUEST), the events (actions, ``talon_taken``, ``deal_ended``,
``deal_started``) and ``match_ended``. The match's game is an instrumented ``Game`` that
keeps, from RULES.md and independently of ``observe``, what each seat has been allowed to
learn in each deal so far. At the moment each message is queued, every card in it (in
fields, and named in its texts) must be one its seat may know for the deal it belongs to;
a passed card must not reach a third seat; the talon must reach a seat exactly when the
rules show it to it; and every seat must get every action of the match.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

import arena.referee.match as match_module
from arena.protocol import (
    MalformedActionError,
    action_from_pb,
    action_to_pb,
    card_from_pb,
    card_to_pb,
)
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, Phase, Ruleset
from engine.actions import Action, Give, Pass, Play
from engine.cards import Card, parse_card
from tests.support.harness import as_message

NAMES = ("a", "b", "c", "d")
CARD_TEXT = re.compile(r"(?:10|[9JQKA])[♠♣♦♥]")


class TrackedGame(Game):
    """A ``Game`` that keeps, per deal and seat, the cards the rules let the seat know so
    far (RULES.md §1, §3, §4, §7): its dealt hand, every card played, a passed card for its
    giver and receiver, the talon once taken for everyone (``talon_visible``) or the
    declarer."""

    known: dict[int, list[set[Card]]]
    talon_shown: dict[int, list[bool]]
    current: TrackedGame | None = None

    def _deal(self) -> None:
        super()._deal()
        if not hasattr(self, "known"):
            self.known, self.talon_shown = {}, {}
            TrackedGame.current = self
        self.known[self.deal_number] = [set(h) for h in self.dealt_hands]
        self.talon_shown[self.deal_number] = [False] * self.n

    def apply_trusted(self, action: Action) -> None:
        deal, phase, actor = self.deal_number, self.phase, self.to_act
        known = self.known[deal]
        if isinstance(action, Play):
            for k in known:
                k.add(action.card)
        elif isinstance(action, Give):
            assert actor is not None
            known[actor].add(action.card)
            known[action.to].add(action.card)
        super().apply_trusted(action)
        if phase is Phase.BIDDING and self.deal_number == deal and self.phase is not Phase.BIDDING:
            for s in range(self.n):
                if self.ruleset.talon_visible or s == self.declarer:
                    known[s] |= set(self.talon)
                    self.talon_shown[deal][s] = True


def pb_cards(msg: Any) -> set[Card]:
    """Every ``Card`` anywhere in a protobuf message."""
    if isinstance(msg, pb.Card):
        return {card_from_pb(msg)}
    out: set[Card] = set()
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            out |= pb_cards(item)
    return out


def text_cards(text: str) -> set[Card]:
    return {parse_card(t) for t in CARD_TEXT.findall(text)}


@dataclasses.dataclass
class Seat:
    """What one bot has been sent, as the checks follow it."""

    seat: int
    deal: int = 0  # the deal its events are in (deal_started moves it)
    actions: int = 0
    talons: list[tuple[int, tuple[Card, ...]]] = dataclasses.field(default_factory=list)
    request_deal: dict[str, int] = dataclasses.field(default_factory=dict)
    sent: dict[str, Action | None] = dataclasses.field(default_factory=dict)
    kinds: set[str] = dataclasses.field(default_factory=set)
    ended: bool = False


class Checker:
    def __init__(self, names: tuple[str, ...]) -> None:
        self.seats = {n: Seat(i) for i, n in enumerate(names)}
        #: What failed, kept rather than raised: an exception inside the referee's send
        #: would stop the match, not the test.
        self.problems: list[str] = []

    def known(self, st: Seat, deal: int) -> set[Card]:
        g = TrackedGame.current
        assert g is not None
        return g.known[deal][st.seat]

    def check(self, bot: str, msg: pb.ServerMessage) -> None:
        try:
            self._check(bot, msg)
        except AssertionError as e:
            self.problems.append(f"{bot}: {e}")

    def _check(self, bot: str, msg: pb.ServerMessage) -> None:
        st = self.seats[bot]
        g = TrackedGame.current
        assert g is not None
        for ev in msg.events:
            ev_kind = ev.WhichOneof("kind")
            st.kinds.add(ev_kind or "")
            if ev_kind == "deal_started":
                st.deal = ev.deal_started
                continue
            assert pb_cards(ev) <= self.known(st, st.deal), (bot, ev)
            if ev_kind == "action":
                st.actions += 1
                act = ev.action
                if act.action.WhichOneof("kind") == "give":
                    third = st.seat not in (act.seat, act.action.give.to_seat)
                    assert act.action.give.HasField("card") is not third, (bot, ev)
                if act.seat != st.seat:  # who chose another seat's move is not told
                    assert ev.source == pb.ACTION_SOURCE_UNSPECIFIED
            elif ev_kind == "talon_taken":
                cards = tuple(card_from_pb(c) for c in ev.talon_taken.cards)
                shown = g.talon_shown[st.deal][st.seat]
                assert bool(cards) is shown, (bot, st.deal, ev)
                st.talons.append((st.deal, cards))
        kind = msg.WhichOneof("kind")
        st.kinds.add(kind or "")
        if kind in ("match_started", "decision_request"):
            view = getattr(msg, kind).view
            if kind == "match_started":  # (resumed: the events missed are not sent again)
                st.deal = view.deal_number
            assert pb_cards(view) <= self.known(st, view.deal_number), (bot, kind, view)
            assert view.talon_known is g.talon_shown[view.deal_number][st.seat]
            assert sorted(card_from_pb(c) for c in view.hand) == list(g.hand(st.seat))
        if kind == "decision_request":
            req = msg.decision_request
            st.request_deal[req.request_id] = req.deal_number
            assert req.deal_number == req.view.deal_number
        elif kind == "decision_rejected":
            rej = msg.decision_rejected
            deal = st.request_deal.get(rej.request_id, g.deal_number)
            own = st.sent.get(rej.request_id)  # the bot's own card, echoed, is no news
            mine = {own.card} if isinstance(own, Play | Give) else set()
            allowed = self.known(st, deal) | mine
            assert pb_cards(rej) <= allowed, (bot, rej)
            assert text_cards(rej.message) <= allowed, (bot, rej.message)
        elif kind == "match_ended":
            st.ended = True
            assert pb_cards(msg.match_ended) == set(), (bot, msg.match_ended.view)


class CheckedStream(Stream):
    """A bot's stream without a network: every message is checked as it is queued, and a
    decision request is answered on the next turn of the loop, as a read would bring it."""

    __slots__ = ("answer", "bot", "checker")

    def __init__(self, bot: str, checker: Checker, answer: Callable[..., None]) -> None:
        super().__init__(f"fake-{bot}")
        self.bot, self.checker, self.answer = bot, checker, answer

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        self.checker.check(self.bot, msg)
        super().put(msg)
        if msg.HasField("decision_request"):
            asyncio.get_running_loop().call_soon(self.answer, self.bot, msg.decision_request)


def _misbehaving_answer(
    ref: Referee, checker: Checker, rng: random.Random, reconnects: bool
) -> Callable[[str, pb.DecisionRequest], None]:
    def answer(bot: str, r: pb.DecisionRequest) -> None:
        st = checker.seats[bot]
        session = ref.session(bot)
        if reconnects and rng.random() < 0.1:
            # The connection drops as the request comes, and the bot is back at once: the
            # resumed match_started and the request sent again are checked too.
            assert session.stream is not None
            session.detach(session.stream, 60.0, "dropped")
            session.attach(CheckedStream(bot, checker, answer))
            return
        if rng.random() < 0.2:
            # Another seat, not to act, answers an old request: its refusal must not list
            # the legal actions of the seat to act.
            idle = rng.choice([n for n in checker.seats if n != bot])
            old = pb.Decision(request_id="1", match_id=r.match_id, action=action_to_pb(Pass()))
            ref.on_decision(ref.session(idle), old)
        action = rng.choice(r.view.legal_actions)
        roll = rng.random()
        if roll < 0.06:  # an answer for a request that is not pending (sent first)
            wrong = pb.Decision(request_id="x" + r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(session, wrong)
        elif roll < 0.12:
            action = pb.Action()  # malformed
        elif roll < 0.2:  # illegal: a card not held, a bid or contract off the step
            held = {card_from_pb(c) for c in r.view.hand}
            other = rng.choice([c for c in Card if c not in held])
            ph = r.view.phase
            if ph == pb.PHASE_PLAYING:
                action = pb.Action(play=pb.PlayCard(card=card_to_pb(other)))
            elif ph == pb.PHASE_PASSING:
                to = next(s for s in r.view.active_seats if s != st.seat)
                action = pb.Action(give=pb.Give(card=card_to_pb(other), to_seat=to))
            elif ph == pb.PHASE_BIDDING:
                action = pb.Action(bid=pb.Bid(amount=7))
            else:
                action = pb.Action(contract=pb.NameContract(amount=7))
        st.sent[r.request_id] = _engine_action(action)
        ref.on_decision(
            session, pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
        )

    return answer


def _engine_action(action: pb.Action) -> Action | None:
    try:
        return action_from_pb(action)
    except MalformedActionError:
        return None


def _play(
    rules: Ruleset, seed: int, monkeypatch: pytest.MonkeyPatch, reconnects: bool = False
) -> tuple[Checker, Any]:
    monkeypatch.setattr(match_module, "Game", TrackedGame)
    names = NAMES[: rules.players]
    checker = Checker(names)
    rng = random.Random(f"{rules.name}/{seed}")

    async def main() -> Any:
        ref = Referee(RefereeConfig(decision_ms=60_000, max_strikes=10_000))
        answer = _misbehaving_answer(ref, checker, rng, reconnects)
        for n in names:
            ref.add_bot(n, f"tok-{n}")
            ref.session(n).attach(CheckedStream(n, checker, answer))
        return await ref.run_match("m1", rules, seed, list(names))

    return checker, asyncio.run(main())


def _variants() -> list[Ruleset]:
    out = []
    for name in ("classic", "1001", "1001-4p"):
        for visible in (True, False):
            for ask_forced in (False, True):
                out.append(
                    dataclasses.replace(
                        PRESETS[name],
                        name=f"{name}-talon{int(visible)}-ask{int(ask_forced)}",
                        talon_visible=visible,
                        ask_forced=ask_forced,
                        max_deals=4,
                    )
                )
    return out


@pytest.mark.parametrize("rules", _variants(), ids=lambda r: r.name)
def test_every_message_to_every_seat_holds_only_what_it_may_know(
    rules: Ruleset, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker, rec = _play(rules, 11, monkeypatch)
    assert checker.problems == []
    actions = sum(len(d["actions"]) for d in rec["deals"])
    kinds = set()
    for st in checker.seats.values():
        kinds |= st.kinds
        assert st.ended
        assert st.actions == actions  # every seat is told every action
        # ... and every talon taken: its cards when it may see them (checked as sent)
        assert [d for d, _ in st.talons] == list(range(len(rec["deals"])))
        for d, cards in st.talons:
            talon = {parse_card(c) for c in rec["deals"][d]["talon"]}
            assert not cards or set(cards) == talon
    incidents = {i["kind"] for i in rec["incidents"]}
    assert {"illegal", "malformed", "wrong_request"} <= incidents, incidents
    assert {"decision_request", "decision_rejected", "match_started", "match_ended"} <= kinds


@pytest.mark.parametrize("rules", _variants()[::2], ids=lambda r: r.name)
def test_what_a_bot_is_sent_again_after_a_reconnect_holds_only_what_it_may_know(
    rules: Ruleset, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker, rec = _play(rules, 12, monkeypatch, reconnects=True)
    assert checker.problems == []
    assert any(i["kind"] == "disconnect" for i in rec["incidents"])
    assert all(st.ended for st in checker.seats.values())


# --- beyond the messages: an arena open to a network without TLS --------------------------


def test_an_arena_open_beyond_loopback_without_tls_says_the_hands_travel_in_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak (round 25): `arena serve --host 0.0.0.0` and a tournament with remote bots on
    `host = "0.0.0.0"` (as tournaments/remote.toml) serve plain gRPC by default, and said
    nothing: every view, each bot's hand in it, and every token crossed the network in
    clear, for any other bot on the same network to read. Both now say so at the start,
    as they say what a remote bot could learn from a known seed or duplicate deals; not on
    loopback, with TLS, or with local bots only (they connect over loopback)."""
    from arena.cli import main as arena
    from arena.cli import serve as serve_module
    from arena.cli.tournament import _announce
    from arena.tournament.config import load_config
    from tests.support.certs import make_cert

    monkeypatch.setenv("FRIEND_TOKEN", "0123456789abcdef")
    local = 'name = "t"\nruleset = "classic"\ndeals = "independent"\n[bots]\na = "random"\n'
    remote = local + 'b = "random"\nfriend = { remote = true, token_env = "FRIEND_TOKEN" }\n'
    make_cert(tmp_path / "certs")
    tls = '[tls]\ncert = "certs/arena.pem"\nkey = "certs/arena.key"\n'

    def said(text: str) -> str:
        path = tmp_path / "t.toml"
        path.write_text(text, encoding="utf-8")
        out = StringIO()
        _announce(load_config(path), Console(file=out, width=1000))
        return " ".join(out.getvalue().split())

    note = "without TLS: every message between the arena and remote bots (friend) travels in"
    assert note in said('host = "0.0.0.0"\n' + remote)
    assert "a [tls] table serves TLS" in said('host = "0.0.0.0"\n' + remote)
    assert "in clear" not in said(remote)  # 127.0.0.1
    assert "in clear" not in said('host = "0.0.0.0"\n' + remote + tls)
    two_local = local + 'b = "random"\nc = "random"\n'
    assert "in clear" not in said('host = "0.0.0.0"\n' + two_local)

    async def no_server(*args: Any) -> None:
        pass

    monkeypatch.setattr(serve_module, "_serve", no_server)
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "t1-token"\nb = "t2-token"\nc = "t3-token"\n')

    def serve(*args: str) -> str:
        common = ["--tokens", str(tokens), "--port", "0", "--record-dir", str(tmp_path / "r")]
        r = CliRunner().invoke(arena, ["serve", *common, "--max-deals", "5", *args])
        assert r.exit_code == 0, r.output
        return " ".join(r.output.split())

    assert "0.0.0.0 without TLS" in serve("--host", "0.0.0.0")
    assert "--tls-cert with --tls-key serves TLS" in serve("--host", "0.0.0.0")
    certs = ["--tls-cert", str(tmp_path / "certs/arena.pem")]
    certs += ["--tls-key", str(tmp_path / "certs/arena.key")]
    assert "in clear" not in serve("--host", "0.0.0.0", *certs)
    assert "in clear" not in serve()  # 127.0.0.1
    assert "in clear" not in serve("--host", "::1")
