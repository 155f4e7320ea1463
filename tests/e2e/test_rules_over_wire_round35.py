"""Rule cases over the wire (round 35): matches played through a real referee on port 0,
by raw ``grpc.aio`` clients (no SDK) that play given actions, checked against the engine,
against RULES.md read independently, and against the stored record.

For every match, :func:`_check_match` replays the record in a shadow engine and checks,
action by action:

- each decision request is the acting seat's ``observe`` view, its legal actions equal
  the engine's and RULES.md's (a model of §2-§9 written here from the rule book, not from
  the engine: bids, gives, contracts, concede and throw-in, following, trumping,
  ``must_beat``, marriages and the ace marriage);
- what the view hides and shows, read from the rule book (own hand only, the talon after
  the auction to all or to the declarer alone, a passed card to its giver and receiver
  only, the 4-player dealer's empty hand; the trump, marriages, scores and barrel);
- a move with one legal action is played without a request iff ``ask_forced`` is off, and
  every seat is told each move (its own with its source, ``FORCED`` included; a third seat
  a give without its card), the talon as it may see it, each deal's end and the next deal;
- the ``match_ended`` result and final view equal the engine's, the returned record and
  the record file (its action and ``deal_end`` lines too).

The rule cases are chosen seeds with scripted moves (found with the engine first; each test
asserts that its case did arise, so a changed shuffle fails loudly rather than passing).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.protocol import (
    action_from_pb,
    action_to_pb,
    card_to_pb,
    deal_result_to_pb,
    match_result_from_pb,
    match_result_to_pb,
    ruleset_from_pb,
    view_from_pb,
    view_to_pb,
)
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import (
    Bid,
    Card,
    Concede,
    Contract,
    Game,
    Give,
    HiddenGive,
    Pass,
    Phase,
    Play,
    Rank,
    Ruleset,
    Suit,
    ThrowIn,
    fallback_action,
    load_ruleset,
    observe,
    parse_action,
    parse_card,
    public_action,
    replay,
    trick_winner,
)
from engine.actions import Action

MARRIAGE = {Suit.SPADES: 40, Suit.CLUBS: 60, Suit.DIAMONDS: 80, Suit.HEARTS: 100}
SOURCE = {
    "bot": pb.ACTION_SOURCE_BOT,
    "forced": pb.ACTION_SOURCE_FORCED,
    "fallback": pb.ACTION_SOURCE_FALLBACK,
}
NAMES3 = ["ann", "bob", "cid"]
NAMES4 = ["ann", "bob", "cid", "dan"]

#: A policy: (seat, the request) -> the action to send (a pb.Action).
Policy = Callable[[int, pb.DecisionRequest], pb.Action]


# ----------------------------------------------------------------------------- playing


@dataclasses.dataclass
class Played:
    """A match played over the wire: the record ``run_match`` returned, the record file's
    lines, and every message each seat's bot read (those of a batch one by one; a bot in
    several matches at once reads theirs too: the accessors keep this match's)."""

    match_id: str
    ruleset: Ruleset
    seed: int | str
    names: list[str]
    record: dict[str, Any]
    lines: list[dict[str, Any]]
    messages: list[list[pb.ServerMessage]]

    def _of(self, seat: int, kind: str) -> list[Any]:
        out = []
        for m in self.messages[seat]:
            if m.WhichOneof("kind") == kind and getattr(m, kind).match_id == self.match_id:
                out.append(getattr(m, kind))
        return out

    def requests(self, seat: int) -> list[pb.DecisionRequest]:
        return self._of(seat, "decision_request")

    def rejections(self, seat: int) -> list[pb.DecisionRejected]:
        return self._of(seat, "decision_rejected")

    def started(self, seat: int) -> list[pb.MatchStarted]:
        return self._of(seat, "match_started")

    def events(self, seat: int) -> list[pb.Event]:
        return [e for m in self.messages[seat] for e in m.events if e.match_id == self.match_id]

    def ended(self, seat: int) -> pb.MatchEnded:
        ends = self._of(seat, "match_ended")
        assert len(ends) == 1, f"seat {seat}: {len(ends)} match_ended"
        return ends[0]


async def _client(
    port: int,
    name: str,
    seat_of: dict[tuple[str, str], int],
    policy: Policy,
    out: list[pb.ServerMessage],
    batch: bool,
    drop_at: tuple[str, str] | None = None,
) -> None:
    """A raw bot: says Hello (asking for batches with ``batch``), answers each request
    with ``policy``, keeps every message, and half-closes after its last ``match_ended``.
    ``drop_at`` (match id, request id): that request is not answered; the bot cancels its
    stream and opens another, which says Hello again (a dropped connection)."""
    left = sum(n == name for _, n in seat_of)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.ArenaStub(channel)

        async def hello() -> Any:
            call = stub.Play(metadata=(("authorization", f"Bearer tok-{name}"),))
            features = ["batch"] if batch else []
            await call.write(pb.BotMessage(hello=pb.Hello(bot_name=name, features=features)))
            welcome = await call.read()
            assert welcome.WhichOneof("kind") == "welcome", welcome
            return call

        call = await hello()
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            inner = list(msg.batch.messages) if msg.WhichOneof("kind") == "batch" else [msg]
            assert batch or (len(inner) == 1 and not msg.HasField("batch"))
            for m in inner:
                out.append(m)
                kind = m.WhichOneof("kind")
                if kind == "decision_request":
                    req = m.decision_request
                    if drop_at == (req.match_id, req.request_id):
                        drop_at = None
                        call.cancel()
                        call = await hello()
                        break  # (the rest of a batch went with the stream)
                    action = policy(seat_of[req.match_id, name], req)
                    decision = pb.Decision(
                        request_id=req.request_id, match_id=req.match_id, action=action
                    )
                    await call.write(pb.BotMessage(decision=decision))
                elif kind == "match_ended":
                    left -= 1
                    if not left:
                        await call.done_writing()


Spec = tuple[str, Ruleset, int | str, list[str]]


def play_many(
    tmp: Path,
    specs: list[Spec],
    policy: Policy,
    *,
    ask_forced: bool | None = None,
    batch: bool = False,
    drop_at: dict[str, tuple[str, str]] | None = None,
) -> list[Played]:
    """Matches ``(match id, ruleset, seed, names by seat)`` played at once through one
    referee on a free port, every seat played by ``policy``, each bot on one stream
    (``drop_at``: bot name -> the (match id, request id) at which its stream drops)."""
    names = sorted({n for *_, seats in specs for n in seats})
    seat_of = {(mid, n): i for mid, _, _, seats in specs for i, n in enumerate(seats)}
    messages: dict[str, list[pb.ServerMessage]] = {n: [] for n in names}

    async def main() -> list[dict[str, Any]]:
        # Generous limits: no timeout on a loaded machine (nothing here is timed).
        config = RefereeConfig(
            decision_ms=20_000, time_bank_ms=0, record_dir=tmp, ask_forced=ask_forced
        )
        ref = Referee(config)
        for n in names:
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref)
        try:
            tasks = [
                asyncio.create_task(
                    _client(port, n, seat_of, policy, messages[n], batch, (drop_at or {}).get(n))
                )
                for n in names
            ]
            assert not await ref.wait_for_bots(names, 20)
            records = await asyncio.gather(
                *(ref.run_match(mid, rules, seed, seats) for mid, rules, seed, seats in specs)
            )
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            return list(records)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    records = asyncio.run(main())
    out = []
    for (mid, rules, seed, seats), record in zip(specs, records, strict=True):
        lines = [json.loads(x) for x in (tmp / f"{mid}.jsonl").read_text().splitlines()]
        msgs = [messages[n] for n in seats]
        out.append(Played(mid, rules, seed, seats, record, lines, msgs))
    return out


def play(
    tmp: Path,
    ruleset: Ruleset,
    seed: int | str,
    policy: Policy,
    *,
    ask_forced: bool | None = None,
) -> Played:
    """One match of ``ruleset`` from ``seed`` through a referee on a free port, every seat
    played by ``policy``; the referee's record, its file and each seat's messages."""
    names = NAMES3 if ruleset.players == 3 else NAMES4
    (p,) = play_many(tmp, [("m1", ruleset, seed, names)], policy, ask_forced=ask_forced)
    return p


def _deal_index(view: pb.PlayerView) -> int:
    """How many actions of the deal were taken before this view (from the view alone)."""
    return (
        len(view.bids)
        + len(view.gives)
        + view.HasField("contract")
        + 3 * len(view.tricks)
        + len(view.trick)
    )


def scripted(
    script: dict[int, list[tuple[int, str]]] | None = None,
    *,
    salt: str = "",
    pass_p: float = 0.6,
    declare: bool = True,
    keep: bool = True,
    contract: str = "random",
) -> Policy:
    """Each deal's listed moves ``(seat, action text)``, in the deal's order (forced moves
    included: the referee plays those itself), then a legal action of the request drawn
    reproducibly: in the auction a pass with probability ``pass_p``; ``declare``: a
    marriage whenever one may be declared; ``keep``: the declarer passes away no ace, king
    or queen while he has another card (so marriages and four aces stay together);
    ``contract``: when naming the contract, ``"contract"`` (the lowest), ``"concede"`` or
    ``"throw_in"`` where legal, else a random one."""
    script = script or {}

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        view = req.view
        moves = script.get(view.deal_number, [])
        i = _deal_index(view)
        if i < len(moves):
            want_seat, text = moves[i]
            assert want_seat == seat, (
                f"deal {view.deal_number} move {i}: asked {seat}, not {want_seat}"
            )
            return action_to_pb(parse_action(text))
        legal = list(view.legal_actions)
        rng = random.Random(f"{salt}:{seat}:{view.deal_number}:{i}")
        kinds = {a.WhichOneof("kind") for a in legal}
        if view.phase == pb.PHASE_BIDDING and rng.random() < pass_p:
            return action_to_pb(Pass())  # short auctions: more deals reach the play
        if contract != "random" and view.phase == pb.PHASE_CONTRACT and contract in kinds:
            return next(a for a in legal if a.WhichOneof("kind") == contract)
        if declare and any(a.play.declare for a in legal):
            return rng.choice([a for a in legal if a.play.declare])
        if keep and "give" in kinds:
            low = [
                a for a in legal if a.give.card.rank in (pb.RANK_NINE, pb.RANK_JACK, pb.RANK_TEN)
            ]
            legal = low or legal
        return rng.choice(legal)

    return policy


def dry_run(rules: Ruleset, seed: int | str, policy: Policy) -> Game:
    """The match ``play`` would play, in the engine alone (no referee): to find seeds."""
    names = NAMES3 if rules.players == 3 else NAMES4
    g = Game.new(rules, seed, names)
    while not g.is_over:
        legal = g.legal_actions()
        seat = g.to_act
        assert seat is not None
        if len(legal) == 1 and not rules.ask_forced:
            g.apply(legal[0], seat=seat)
            continue
        req = pb.DecisionRequest(view=view_to_pb(observe(g, seat)), deal_number=g.deal_number)
        action = action_from_pb(policy(seat, req))
        g.apply(action if action in legal else fallback_action(legal), seat=seat)
    return g


# ----------------------------------------------------------------------------- RULES.md


def _marriages_in(hand: set[Card], r: Ruleset) -> int:
    total = sum(
        v
        for s, v in MARRIAGE.items()
        if Card.of(Rank.KING, s) in hand and Card.of(Rank.QUEEN, s) in hand
    )
    if (
        r.ace_marriage
        and r.ace_marriage_counts_for_bid
        and all(Card.of(Rank.ACE, s) in hand for s in Suit)
    ):
        total += 200
    return total


def _beats(c: Card, best: Card, trump: Suit | None) -> bool:
    if c.suit == best.suit:
        return c.rank > best.rank
    return trump is not None and c.suit == trump


def rules_legal(g: Game) -> set[Action]:
    """The legal actions of the seat to act, from RULES.md alone (not the engine's code)."""
    r = g.ruleset
    seat = g.to_act
    assert seat is not None
    hand = set(g.hand(seat))
    if g.phase is Phase.BIDDING:
        lo = r.opening_bid if g.bid is None else g.bid + r.bid_step
        cap = 120 + _marriages_in(hand, r)
        return {Pass(), *(Bid(x) for x in range(lo, cap + 1, r.bid_step))}
    lth = g.last_hand_take
    if g.phase is Phase.PASSING:
        given = {to for to, _ in g.gives}
        opps = [s for s in g.active_seats if s != seat and s not in given]
        return {Give(c, to) for c in hand for to in opps} | ({ThrowIn()} if lth else set())
    if g.phase is Phase.CONTRACT:
        bid = g.bid
        assert bid is not None
        top = max(bid, 120 + _marriages_in(hand, r))
        out: set[Action] = {Contract(x) for x in range(bid, top + 1, 5)}
        if lth:
            out.add(ThrowIn())
        elif r.concede != "off":
            out.add(Concede())
        return out
    assert g.phase is Phase.PLAYING
    trick = g.trick
    if not trick:
        won = [t for t in g.tricks if t.winner == seat]
        out = {Play(c) for c in hand}
        if won or not r.marriage_needs_trick:
            for s in Suit:
                k, q = Card.of(Rank.KING, s), Card.of(Rank.QUEEN, s)
                if k in hand and q in hand:
                    out |= {Play(k, declare=True), Play(q, declare=True)}
        aces = {Card.of(Rank.ACE, s) for s in Suit}
        won_not_ace = any(dict(t.cards)[seat].rank != Rank.ACE for t in won)
        if r.ace_marriage and aces <= hand and won_not_ace:
            out |= {Play(a, declare=True) for a in aces}
        return out
    led = trick[0][1].suit
    trump = g.trump
    obliged = {c for c in hand if c.suit == led}
    if not obliged and trump is not None:
        obliged = {c for c in hand if c.suit == trump}
    if not obliged:
        return {Play(c) for c in hand}
    if r.must_beat:
        best = trick[trick_winner([int(c) for _, c in trick], trump)][1]
        beat = {c for c in obliged if _beats(c, best, trump)}
        obliged = beat or obliged
    return {Play(c) for c in obliged}


def _cards(cards: Any) -> list[Card]:
    return [Card.of(Rank(c.rank - 1), Suit(c.suit - 1)) for c in cards]


def _round_half_up(x: int, unit: int) -> int:
    return (2 * x + unit) // (2 * unit) * unit


def rules_deal(deal: dict[str, Any], rules: Ruleset) -> dict[str, Any]:
    """A played deal of a record scored from RULES.md §7-§10 alone (not the engine's
    code): who wins each trick, card points and marriages per seat, and, when no barrel is
    in play, each seat's score change."""
    n = rules.players
    points, marr = [0] * n, [0] * n
    trump: Suit | None = None
    trick: list[tuple[int, Card]] = []
    declarer = contract = None
    for a in deal["actions"]:
        act = parse_action(a["action"])
        if isinstance(act, Give):
            declarer = a["seat"]
        elif isinstance(act, Contract):
            contract = act.amount
        elif isinstance(act, Play):
            if act.declare:
                if act.card.rank == Rank.ACE:
                    marr[a["seat"]] += 200  # no trump change
                else:
                    marr[a["seat"]] += MARRIAGE[act.card.suit]
                    trump = act.card.suit  # trump from this trick on
            trick.append((a["seat"], act.card))
            if len(trick) == 3:
                led = trick[0][1].suit
                trumps = [x for x in trick if x[1].suit == trump]
                pool = trumps or [x for x in trick if x[1].suit == led]
                winner = max(pool, key=lambda x: x[1].rank)[0]
                points[winner] += sum(c.points for _, c in trick)
                trick = []
    takes = [p + m for p, m in zip(points, marr, strict=True)]
    out: dict[str, Any] = {"card_points": points, "marriage_points": marr, "takes": takes}
    if declarer is not None and contract is not None:
        made = takes[declarer] >= contract
        deltas = [0] * n
        for s in range(n):
            if s == declarer:
                deltas[s] = contract if made else -contract
            elif deal["hands"][s]:  # (the 4-player dealer: the talon, below)
                deltas[s] = _round_half_up(takes[s], rules.rounding)
        if n == 4:
            deltas[deal["dealer"]] = _talon_points(deal["talon"], rules)
        out.update(made=made, deltas=deltas, declarer=declarer, contract=contract)
    return out


_KINDS = ("bid", "pass", "give", "contract", "concede", "throw_in", "play")


def _doc_order(a: pb.Action) -> tuple[int, int, int]:
    """docs/protocol.md: by kind (Action's field order), then amount, or card (suit, then
    rank), then ``to_seat``, or ``declare`` false before true."""
    kind = a.WhichOneof("kind")
    assert kind is not None
    msg = getattr(a, kind)
    if kind in ("bid", "contract"):
        return (_KINDS.index(kind), msg.amount, 0)
    if kind in ("give", "play"):
        rest = msg.to_seat if kind == "give" else int(msg.declare)
        return (_KINDS.index(kind), msg.card.suit * 10 + msg.card.rank, rest)
    return (_KINDS.index(kind), 0, 0)


def check_view_hides(view: pb.PlayerView, g: Game, seat: int) -> None:
    """What RULES.md lets ``seat`` see of ``g`` now, read from the wire view: its own hand
    only, the talon once taken to all or to the declarer alone, a passed card only to its
    giver and receiver; and the public state it must show."""
    r = g.ruleset
    assert view.seat == seat and view.deal_number == g.deal_number and view.dealer == g.dealer
    assert _cards(view.hand) == sorted(g.hand(seat)), "the view's hand is not the seat's"
    if r.players == 4 and seat == g.dealer:
        assert not view.hand and not view.legal_actions, "the 4-player dealer holds nothing"
    shown = g.phase is not Phase.BIDDING and (r.talon_visible or seat == g.declarer)
    assert view.talon_known is shown, (seat, g.phase, r.talon_visible)
    assert _cards(view.talon) == (sorted(g.talon) if shown else [])
    assert len(view.gives) == len(g.gives)
    for sa, (to, card) in zip(view.gives, g.gives, strict=True):
        assert sa.action.give.to_seat == to
        knows = seat in (g.declarer, to)
        assert sa.action.give.HasField("card") is knows, (seat, to, knows)
        if knows:
            assert _cards([sa.action.give.card]) == [card]
    assert list(view.scores) == list(g.scores)
    assert list(view.barrel) == ([] if g.barrel is None else [b or -1 for b in g.barrel])
    assert view.trump == (0 if g.trump is None else g.trump + 1)
    assert [(m.seat, m.suit) for m in view.marriages] == [
        (s, 0 if x is None else x + 1) for s, x in g.marriages
    ]
    for m in view.marriages:
        assert m.value == (200 if m.suit == 0 else MARRIAGE[Suit(m.suit - 1)])
    # the trick each was declared on: its declaring lead's, counted from the deal's plays
    plays = [a for _, a in g.actions if isinstance(a, Play)]
    assert [m.trick for m in view.marriages] == [i // 3 for i, a in enumerate(plays) if a.declare]
    assert [(sc.seat, _cards([sc.card])[0]) for sc in view.trick] == list(g.trick)
    if g.to_act != seat:
        assert not view.legal_actions


# ----------------------------------------------------------------------------- the check


def _event(seq_kind: str, **kw: Any) -> tuple[str, Any]:
    return (seq_kind, kw)


def _as_tuple(ev: pb.Event) -> tuple[str, Any]:
    kind = ev.WhichOneof("kind")
    if kind == "action":
        return ("action", {"seat": ev.action.seat, "action": ev.action.action, "source": ev.source})
    if kind == "talon_taken":
        return ("talon_taken", {"seat": ev.talon_taken.seat, "cards": list(ev.talon_taken.cards)})
    if kind == "deal_ended":
        return ("deal_ended", {"result": ev.deal_ended})
    if kind == "deal_started":
        return ("deal_started", {"deal": ev.deal_started})
    raise AssertionError(f"an event of kind {kind}")


def check_match(p: Played) -> Game:
    """Every check of the module docstring on one match; the shadow game at its end."""
    rec = p.record
    rules = Ruleset.from_dict(rec["ruleset"])
    ask_forced = rules.ask_forced
    n = rules.players
    g = Game.new(rules, p.seed, p.names)
    asked: list[list[pb.DecisionRequest]] = []
    for seat in range(n):
        first, *resumed = p.started(seat)
        assert first.seat == seat and not first.resumed and first.seq == 0
        assert first.view == view_to_pb(observe(g, seat))
        check_view_hides(first.view, g, seat)
        assert first.ruleset.ask_forced is ask_forced
        told = ruleset_from_pb(first.ruleset)
        assert told == rules
        assert view_from_pb(first.view, told) == observe(g, seat)
        # A request asked again after a reconnection: the same id and view, after a resumed
        # match_started whose view is that of the request (nobody else acts meanwhile).
        reqs: list[pb.DecisionRequest] = []
        again = []
        for req in p.requests(seat):
            if reqs and reqs[-1].request_id == req.request_id:
                assert req.view == reqs[-1].view
                again.append(req)
            else:
                reqs.append(req)
        assert len(resumed) == len(again)
        for st, req in zip(resumed, again, strict=True):
            assert st.resumed and not st.forfeited and st.view == req.view
        asked.append(reqs)
    requests: list[Iterator[pb.DecisionRequest]] = [iter(r) for r in asked]
    expected: list[list[tuple[str, Any]]] = [[] for _ in range(n)]
    file_actions = [x for x in p.lines if x["type"] == "action"]
    k = 0
    for d in rec["deals"]:
        for entry in d["actions"]:
            seat, by = entry["seat"], entry["by"]
            action = parse_action(entry["action"])
            assert file_actions[k] == {
                "type": "action",
                "deal": d["number"],
                "seat": seat,
                "action": entry["action"],
                "ms": entry["ms"],
                "by": by,
            }
            k += 1
            assert g.to_act == seat and g.deal_number == d["number"]
            legal = g.legal_actions()
            assert set(legal) == rules_legal(g), (g.phase, seat, legal)
            assert len(set(legal)) == len(legal)
            if by == "forced":
                assert len(legal) == 1 and not ask_forced, (entry, legal)
            else:
                assert len(legal) > 1 or ask_forced, f"{entry}: one legal action, yet asked"
                req = next(requests[seat], None)
                assert req is not None, f"seat {seat} was not asked for {entry}"
                assert req.match_id == p.match_id and req.deal_number == g.deal_number
                assert req.view == view_to_pb(observe(g, seat)), entry
                assert list(req.view.legal_actions) == [action_to_pb(a) for a in legal]
                wire = list(req.view.legal_actions)
                assert wire == sorted(wire, key=_doc_order), "not in docs/protocol.md's order"
                check_view_hides(req.view, g, seat)
                # and what a bot of the SDK reads of it is the view the engine made
                assert view_from_pb(req.view, told) == observe(g, seat)
            if by == "bot":
                assert action in legal
            was_bidding = g.phase is Phase.BIDDING
            deal = g.deal_number
            g.apply(action, seat=seat)
            for s in range(n):
                # RULES.md §4: only the giver and the receiver learn a passed card
                hidden = isinstance(action, Give) and s not in (seat, action.to)
                seen = HiddenGive(action.to) if hidden else action
                assert seen == public_action(action, seat, s)
                expected[s].append(
                    (
                        "action",
                        {
                            "seat": seat,
                            "action": action_to_pb(seen),
                            "source": SOURCE[by] if s == seat else 0,
                        },
                    )
                )
            if g.deal_number != deal or g.is_over:
                for s in range(n):
                    expected[s].append(
                        ("deal_ended", {"result": deal_result_to_pb(g.deal_results[deal])})
                    )
                    if not g.is_over:
                        expected[s].append(("deal_started", {"deal": g.deal_number}))
            elif was_bidding and g.phase is not Phase.BIDDING:
                for s in range(n):
                    sees = rules.talon_visible or s == g.declarer
                    cards = [card_to_pb(c) for c in g.talon] if sees else []
                    expected[s].append(("talon_taken", {"seat": g.declarer, "cards": cards}))
    assert k == len(file_actions)
    for s in range(n):
        assert next(requests[s], None) is None, f"seat {s} was asked more than was played"
        events = p.events(s)
        # every seat is told every event, in one numbering: no gap, none twice
        assert [e.seq for e in events] == list(range(1, len(events) + 1)), f"seat {s}'s seqs"
        assert all(e.match_id == p.match_id for e in events)
        assert [_as_tuple(e) for e in events] == expected[s], f"seat {s}'s events"
    # each played deal scored from the rule book, as every seat was told
    before = [0] * n
    for d, res in zip(rec["deals"], _deal_results(p, 0), strict=True):
        if res.outcome in ("made", "failed"):
            want = rules_deal(d, rules)
            assert sum(want["card_points"]) == 120 and len(d["actions"]) > 24
            assert list(res.card_points) == want["card_points"], d["number"]
            assert list(res.marriage_points) == want["marriage_points"]
            assert list(res.takes) == want["takes"]
            assert (res.declarer, res.contract, res.made) == (
                want["declarer"],
                want["contract"],
                want["made"],
            )
            barrel_in_play = rules.barrel and (
                any(b > 0 for b in before) or max(res.scores) >= rules.barrel_at or res.events
            )
            if not barrel_in_play:
                assert list(res.deltas) == want["deltas"], d["number"]
        before = list(res.barrel) if res.barrel else before
    # the end: the engine's, the record's, the file's and each seat's match_ended agree
    assert g.is_over and g.result is not None
    assert rec["result"] == g.result.to_dict() and rec["forfeits"] == []
    result = rec["result"]
    assert result["places"] == _places(result["scores"])  # 1, 1, 3
    firsts = [s for s, place in enumerate(result["places"]) if place == 1]
    assert result["shortfalls"] == [
        0 if firsts == [s] else max(0, rules.target - x) for s, x in enumerate(result["scores"])
    ]
    if result["reason"] == "target":
        assert max(result["scores"]) >= rules.target
    else:
        assert result["reason"] == "max_deals" and result["deals"] == rules.max_deals
    # the stored record replays to the same end (arena replay --check reads it so)
    assert replay(p.lines[-1]["record"]).result == g.result
    assert p.lines[-1] == {"type": "end", "record": json.loads(json.dumps(rec))}
    assert [
        (x["deal"], x["deltas"], x["scores"], x["outcome"])
        for x in p.lines
        if x["type"] == "deal_end"
    ] == [(r.number, list(r.deltas), list(r.scores), r.outcome) for r in g.deal_results]
    for s in range(n):
        me = p.ended(s)
        assert me.result == match_result_to_pb(rec["result"])
        assert list(me.result.places) == list(g.result.places)
        assert me.view == view_to_pb(observe(g, s, ended=True))
        assert view_from_pb(me.view, rules) == observe(g, s, ended=True)
        assert match_result_from_pb(me.result, n).places == g.result.places
        assert me.view.phase == pb.PHASE_GAME_OVER and not me.view.HasField("to_act")
        assert not me.view.hand and not me.view.talon_known
    return g


# ----------------------------------------------------------------------------- helpers


def _classic(**kw: Any) -> Ruleset:
    return dataclasses.replace(load_ruleset("classic"), **kw)


def _preset(name: str, **kw: Any) -> Ruleset:
    return dataclasses.replace(load_ruleset(name), **kw)


def _deal_results(p: Played, seat: int = 0) -> list[pb.DealResult]:
    return [e.deal_ended for e in p.events(seat) if e.WhichOneof("kind") == "deal_ended"]


def _own_events(p: Played, seat: int) -> list[pb.Event]:
    return [e for e in p.events(seat) if e.WhichOneof("kind") == "action" and e.action.seat == seat]


def _half_up(x: int, unit: int) -> int:
    """``x / 2`` rounded half up to a multiple of ``unit`` (RULES.md §6)."""
    q, r = divmod(x * 10 // 2, unit * 10)
    return q * unit + (unit if 2 * r >= unit * 10 else 0)


def _talon_points(talon: list[str], rules: Ruleset) -> int:
    """What the 4-player dealer scores for ``talon``: RULES.md, preset 1001."""
    cards = [parse_card(c) for c in talon]
    if all(c.rank == Rank.NINE for c in cards):
        return rules.nines_talon_value
    return sum(c.points for c in cards)


def _places(scores: list[int]) -> list[int]:
    """Places by score, equal scores sharing one (1, 1, 3): RULES.md, the end."""
    return [1 + sum(o > s for o in scores) for s in scores]


# ----------------------------------------------------------------------------- the matrix

MATRIX = {
    "classic": _classic(max_deals=3),
    "talon-hidden": _classic(max_deals=3, talon_visible=False),
    "must-beat": _classic(max_deals=3, must_beat=True),
    "marriage-any-trick": _classic(max_deals=3, marriage_needs_trick=False),
    "no-ace-marriage": _classic(max_deals=3, ace_marriage=False, ace_marriage_counts_for_bid=False),
    "concede-penalty-none": _classic(max_deals=3, concede="penalty", concede_pays="none"),
    "concede-off": _classic(max_deals=3, concede="off"),
    "no-commit": _classic(max_deals=3, first_hand_commits=False, bid_step=10, opening_bid=60),
    "ask-forced": _classic(max_deals=2, ask_forced=True),
    "1001": _preset("1001", max_deals=3),
    "1001-hidden-must-beat": _preset("1001", max_deals=3, talon_visible=False, must_beat=True),
    "1001-4p": _preset("1001-4p", max_deals=4),
    "1001-4p-hidden": _preset("1001-4p", max_deals=4, talon_visible=False, ask_forced=True),
}


@pytest.mark.parametrize("name", list(MATRIX))
def test_random_play_over_the_wire_agrees_with_engine_and_rules(tmp_path: Path, name: str) -> None:
    """A match of each ruleset, drawn moves with marriages declared where allowed: every
    request, view, event and end checked (``check_match``)."""
    rules = MATRIX[name]
    p = play(tmp_path, rules, 7, scripted(salt=name, pass_p=0.4))
    g = check_match(p)
    assert g.result is not None and g.result.reason == "max_deals"
    assert g.result.deals == rules.max_deals
    assert list(g.result.places) == _places(list(g.result.scores))
    # the options this ruleset is about did show on the wire
    views = [(s, r.view) for s in range(rules.players) for r in p.requests(s)]
    after = [(s, v) for s, v in views if v.phase != pb.PHASE_BIDDING]
    if not rules.talon_visible:
        assert any(not v.talon_known and v.declarer != s for s, v in after)
    assert all(v.talon_known for s, v in after if v.declarer == s)
    if rules.concede == "off":
        assert any(v.phase == pb.PHASE_CONTRACT for _, v in views)
    forced = [a for d in p.record["deals"] for a in d["actions"] if a["by"] == "forced"]
    assert bool(forced) is not rules.ask_forced
    if rules.players == 4:  # the dealer sits out, asked nothing, and scores the talon
        for d, res in zip(p.record["deals"], _deal_results(p), strict=True):
            assert d["hands"][res.dealer] == [] and res.takes[res.dealer] == 0
            assert res.deltas[res.dealer] == _talon_points(d["talon"], rules)
        for s in range(4):
            assert all(r.view.dealer != s for r in p.requests(s)), "the dealer was asked"


# ----------------------------------------------------------------------------- smoke


def test_classic_random_play_agrees_with_engine_and_rules(tmp_path: Path) -> None:
    rules = dataclasses.replace(load_ruleset("classic"), max_deals=3)
    p = play(tmp_path, rules, 11, scripted({}))
    g = check_match(p)
    assert g.result is not None and g.result.reason == "max_deals"


# ----------------------------------------------------------------------------- ask_forced


def test_ask_forced_of_the_referee_asks_every_move_the_ruleset_would_force(tmp_path: Path) -> None:
    """One seed, ``ask_forced`` off then on by the referee's setting: off, a move with one
    legal action is played unasked and the mover is told ``FORCED``; on, every move is
    asked, the same moves are played, and the match's ruleset says so to bots and record."""
    rules = _classic(max_deals=2)
    off = play(tmp_path / "off", rules, 5, scripted(salt="af"))
    on = play(tmp_path / "on", rules, 5, scripted(salt="af"), ask_forced=True)
    check_match(off)
    check_match(on)
    forced = [
        (d["number"], a["seat"])
        for d in off.record["deals"]
        for a in d["actions"]
        if a["by"] == "forced"
    ]
    assert forced, "no forced move in this match"
    assert (
        on.record["ruleset"]["ask_forced"] is True and off.record["ruleset"]["ask_forced"] is False
    )
    assert all(a["by"] == "bot" for d in on.record["deals"] for a in d["actions"])
    # the same moves (the policy draws from the request's legal actions: one is one)
    acts = [[(a["seat"], a["action"]) for a in d["actions"]] for d in off.record["deals"]]
    assert acts == [[(a["seat"], a["action"]) for a in d["actions"]] for d in on.record["deals"]]
    for s in range(3):
        told = [e for e in _own_events(off, s) if e.source == pb.ACTION_SOURCE_FORCED]
        assert len(told) == sum(seat == s for _, seat in forced)
        assert len(on.requests(s)) == len(off.requests(s)) + len(told)
        # the others are never told that a move was forced
        assert all(
            e.source == 0
            for e in off.events(s)
            if e.WhichOneof("kind") == "action" and e.action.seat != s
        )


# ----------------------------------------------------------------------------- several at once


def test_matches_at_once_on_one_stream_with_batches_each_agree(tmp_path: Path) -> None:
    """Four bots in three matches of three rulesets at once, each bot on one stream with
    batches: every match's requests, views and events (read out of other matches'
    messages and batches) are its own and agree with its engine and record."""
    specs: list[Spec] = [
        ("m1", _classic(max_deals=3, talon_visible=False), 21, ["ann", "bob", "cid"]),
        ("m2", _preset("1001", max_deals=3, must_beat=True), 22, ["dan", "cid", "ann"]),
        ("m3", _preset("1001-4p", max_deals=4, ask_forced=True), 23, ["bob", "dan", "ann", "cid"]),
    ]
    played = play_many(tmp_path, specs, scripted(salt="many"), batch=True)
    for p in played:
        check_match(p)
    # each bot was asked in every match it sat in
    for p in played:
        assert all(p.requests(s) for s in range(p.ruleset.players) if p.ruleset.players == 3)


def test_a_seat_back_after_a_dropped_stream_sees_what_it_saw_and_no_more(tmp_path: Path) -> None:
    """A defender drops its stream at a request in the play of a deal with the talon hidden
    and comes back: its resumed ``match_started`` and the request asked again show what
    ``observe`` shows it (no talon, no card passed to the other defender), and the match
    goes on to the same end."""
    rules = _classic(max_deals=2, talon_visible=False)
    policy = scripted(salt="drop", contract="contract")
    g0 = dry_run(rules, 9, policy)
    deal0 = g0.record()["deals"][0]
    declarer = next(a["seat"] for a in deal0["actions"] if a["action"].startswith("give"))
    defender = next(s for s in range(3) if s != declarer)
    # its first request in the play of deal 0 (forced moves are not asked)
    g, n_asked = Game.new(rules, 9, NAMES3), 0
    for a in deal0["actions"]:
        action = parse_action(a["action"])
        if a["seat"] == defender and len(g.legal_actions()) > 1:
            n_asked += 1
            if isinstance(action, Play):
                break
        g.apply(action, seat=a["seat"])
    (p,) = play_many(
        tmp_path,
        [("m1", rules, 9, NAMES3)],
        policy,
        drop_at={NAMES3[defender]: ("m1", str(n_asked))},
    )
    check_match(p)
    (resumed,) = p.started(defender)[1:]
    v = resumed.view
    assert v.phase == pb.PHASE_PLAYING and v.declarer == declarer and not v.talon_known
    assert [gv.action.give.HasField("card") for gv in v.gives] == [
        gv.action.give.to_seat == defender for gv in v.gives
    ]
    assert [i["kind"] for i in p.record["incidents"]] == ["disconnect"]
    assert g0.result is not None and p.record["result"] == g0.result.to_dict()


# ----------------------------------------------------------------------------- refusals


def test_illegal_and_malformed_answers_are_refused_and_the_fallback_played(tmp_path: Path) -> None:
    """An answer that is not legal now (a bid off the step, a card the seat does not hold,
    declaring with a card that cannot) or no action at all is refused as docs/referee.md
    says: ``DecisionRejected`` naming the action, the rule and the legal actions, the
    request's legal actions, the fallback (a pass where legal, else the first), the strike
    count; the fallback is played, the bot told ``FALLBACK``, the record holds the incident."""
    rules = _classic(max_deals=1)
    seed = 3
    g = Game.new(rules, seed, NAMES3)
    first, second, third = g.active_seats
    # the second seat bids off the step; the third says nothing; the first hand then plays 100
    policy_script: dict[int, list[tuple[int, Any]]] = {
        0: [(second, "bid 107"), (third, pb.Action())],
    }
    base = scripted(salt="ill", contract="contract")

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        view = req.view
        i = _deal_index(view)
        moves = policy_script.get(view.deal_number, [])
        if i < len(moves):
            assert moves[i][0] == seat
            move = moves[i][1]
            return move if isinstance(move, pb.Action) else action_to_pb(parse_action(move))
        if (
            view.phase == pb.PHASE_PLAYING
            and not view.trick
            and seat == first
            and len(view.tricks) == 0
        ):
            # the declarer's first lead: a card he does not hold, declared
            held = set(_cards(view.hand))
            other = next(c for c in sorted(Card) if c not in held)
            return action_to_pb(Play(other, declare=True))
        return base(seat, req)

    p = play(tmp_path, rules, seed, policy)
    check_match(p)
    rec = p.record
    assert [(i["kind"], i["seat"], i["deal"]) for i in rec["incidents"]] == [
        ("illegal", second, 0),
        ("malformed", third, 0),
        ("illegal", first, 0),
    ]
    for seat, kind, strikes in (
        (second, pb.INCIDENT_ILLEGAL, 1),
        (third, pb.INCIDENT_MALFORMED, 1),
        (first, pb.INCIDENT_ILLEGAL, 1),
    ):
        (rej,) = p.rejections(seat)
        req = next(r for r in p.requests(seat) if r.request_id == rej.request_id)
        legal = [action_from_pb(a) for a in req.view.legal_actions]
        assert rej.match_id == p.match_id and rej.incident == kind
        assert list(rej.legal_actions) == list(req.view.legal_actions)
        assert rej.fallback == action_to_pb(fallback_action(legal))
        assert (rej.strikes, rej.strikes_allowed) == (strikes, 3)
        assert "legal" in rej.message
        inc = next(i for i in rec["incidents"] if i["seat"] == seat)
        assert rej.message in inc["detail"] and "strike 1 of 3" in inc["detail"]
        # the fallback was played and its bot told so; the others see a plain move
        fb = [e for e in _own_events(p, seat) if e.source == pb.ACTION_SOURCE_FALLBACK]
        assert [e.action.action for e in fb] == [rej.fallback]
    bid_rej = p.rejections(second)[0]
    assert "bid 107" in bid_rej.message and "multiple" in bid_rej.message
    assert bid_rej.fallback == action_to_pb(Pass())
    assert "no kind" in p.rejections(third)[0].message
    lead_rej = p.rejections(first)[0]
    assert "not in" in lead_rej.message or "hold" in lead_rej.message, lead_rej.message
    # the first hand, committed to 100, took the talon after both passes
    d0 = _deal_results(p)[0]
    assert (d0.declarer, d0.bid) == (first, 100)


def _with_first_lead(text: str, base: Policy) -> Policy:
    """``base``, but the first lead of deal 0 is ``text``."""

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        v = req.view
        if v.deal_number == 0 and v.phase == pb.PHASE_PLAYING and not v.tricks and not v.trick:
            return action_to_pb(parse_action(text))
        return base(seat, req)

    return policy


# ----------------------------------------------------------------------------- marriages


@pytest.mark.parametrize("needs_trick", [True, False])
def test_a_marriage_on_the_first_lead_needs_marriage_needs_trick_off(
    tmp_path: Path, needs_trick: bool
) -> None:
    """RULES.md §8: the declarer leads K♠ holding Q♠ on the first trick and asks to declare.
    With ``marriage_needs_trick`` (default) the lead is not offered with ``declare`` and the
    answer is refused (the fallback, his first card, is played); without it he scores 40,
    spades are trump in every view from then on, and the deal's result counts the 40."""
    rules = _classic(max_deals=1, marriage_needs_trick=needs_trick)
    p = play(tmp_path, rules, 0, _with_first_lead("play K♠ declare", scripted()))
    g = check_match(p)
    d0 = p.record["deals"][0]
    lead_i = next(i for i, a in enumerate(d0["actions"]) if a["action"].startswith("play"))
    declarer = d0["actions"][lead_i]["seat"]
    lead_req = next(
        r for r in p.requests(declarer) if r.view.phase == pb.PHASE_PLAYING and not r.view.tricks
    )
    hand = _cards(lead_req.view.hand)
    assert Card.SK in hand and Card.SQ in hand, "the declarer holds the spade marriage"
    declares = [a for a in lead_req.view.legal_actions if a.play.declare]
    res = g.deal_results[0]
    if needs_trick:
        assert declares == []
        (rej,) = p.rejections(declarer)
        assert rej.incident == pb.INCIDENT_ILLEGAL and "trick" in rej.message, rej.message
        assert d0["actions"][lead_i]["by"] == "fallback"
    else:
        assert {(action_from_pb(a).card) for a in declares} >= {Card.SK, Card.SQ}
        assert p.rejections(declarer) == []
        assert d0["actions"][lead_i] | {"ms": 0} == {
            "seat": declarer,
            "action": "play K♠ declare",
            "ms": 0,
            "by": "bot",
        }
        assert res.marriage_points[declarer] >= 40
        # every later view of the deal shows the marriage and the spade trump
        for s in range(3):
            later = [
                r.view
                for r in p.requests(s)
                if r.view.phase == pb.PHASE_PLAYING and (r.view.tricks or r.view.trick)
            ]
            assert later
            for v in later:
                assert (
                    v.marriages[0].seat,
                    v.marriages[0].suit,
                    v.marriages[0].value,
                    v.marriages[0].trick,
                ) == (declarer, pb.SUIT_SPADES, 40, 0)
                assert v.trump != pb.SUIT_UNSPECIFIED


@pytest.mark.parametrize("ace_marriage", [True, False])
def test_the_ace_marriage_over_the_wire(tmp_path: Path, ace_marriage: bool) -> None:
    """RULES.md §9: seat 1 holds the four aces and, once it has won a trick with another
    card, may lead an ace declaring the ace marriage: 200, no trump change, shown to every
    seat as a marriage of no suit. With ``ace_marriage`` off no ace lead is ever offered
    with ``declare``."""
    rules = _classic(
        max_deals=1, ace_marriage=ace_marriage, ace_marriage_counts_for_bid=ace_marriage
    )
    p = play(tmp_path, rules, 122, scripted(pass_p=0.4))
    g = check_match(p)
    aces = {Card.of(Rank.ACE, s) for s in Suit}
    holder_views = [
        (s, r.view)
        for s in range(3)
        for r in p.requests(s)
        if r.view.phase == pb.PHASE_PLAYING and aces <= set(_cards(r.view.hand))
    ]
    assert holder_views, "nobody led with the four aces in hand"
    ace_declares = [
        a
        for _, v in holder_views
        for a in v.legal_actions
        if a.play.declare and a.play.card.rank == pb.RANK_ACE
    ]
    res = g.deal_results[0]
    if not ace_marriage:
        assert ace_declares == []
        return
    seat = holder_views[0][0]
    assert ace_declares
    declared = [
        a
        for a in p.record["deals"][0]["actions"]
        if a["seat"] == seat and a["action"].startswith("play A") and "declare" in a["action"]
    ]
    assert len(declared) == 1
    assert res.marriage_points[seat] >= 200
    for s in range(3):
        after = [
            r.view
            for r in p.requests(s)
            if any(m.suit == pb.SUIT_UNSPECIFIED for m in r.view.marriages)
        ]
        for v in after:
            m = next(m for m in v.marriages if m.suit == pb.SUIT_UNSPECIFIED)
            assert (m.seat, m.value) == (seat, 200)


# ----------------------------------------------------------------------------- the auction


def _bidding_requests(p: Played, seat: int, deal: int = 0) -> list[pb.PlayerView]:
    return [
        r.view
        for r in p.requests(seat)
        if r.view.deal_number == deal and r.view.phase == pb.PHASE_BIDDING
    ]


def test_the_committed_first_hand_is_not_asked_and_plays_100_after_two_passes(
    tmp_path: Path,
) -> None:
    """RULES.md §2, classic: the first hand holds 100 without speaking; the others see
    the standing 100 and may raise from 105; both pass, and he takes the talon at 100
    without ever being asked in the auction."""
    rules = _classic(max_deals=1)
    first, second, third = Game.new(rules, 3, NAMES3).active_seats
    p = play(
        tmp_path, rules, 3, scripted({0: [(second, "pass"), (third, "pass")]}, contract="contract")
    )
    check_match(p)
    assert _bidding_requests(p, first) == []
    (v2,) = _bidding_requests(p, second)
    assert v2.bid == 100 and list(v2.bids) == [] and v2.to_act == second
    assert action_from_pb(v2.legal_actions[0]) == Bid(105)
    (v3,) = _bidding_requests(p, third)
    assert v3.bid == 100 and [sa.seat for sa in v3.bids] == [second]
    res = _deal_results(p)[0]
    assert (res.declarer, res.bid) == (first, 100)
    first_req = p.requests(first)[0].view
    assert first_req.phase == pb.PHASE_PASSING and first_req.declarer == first
    assert len(first_req.hand) == 10


def test_without_the_commitment_every_seat_bids_and_an_all_pass_gives_the_first_hand_the_talon(
    tmp_path: Path,
) -> None:
    """``first_hand_commits`` off (``all_pass = "first_hand"``): the first hand is asked
    first, with no standing bid, from the opening bid; when all three pass he plays the
    opening bid."""
    rules = _classic(max_deals=1, first_hand_commits=False, opening_bid=80, bid_step=10)
    first, second, third = Game.new(rules, 3, NAMES3).active_seats
    moves = [(first, "pass"), (second, "pass"), (third, "pass")]
    p = play(tmp_path, rules, 3, scripted({0: moves}, contract="contract"))
    check_match(p)
    (v1,) = _bidding_requests(p, first)
    assert not v1.HasField("bid") and list(v1.bids) == []
    assert [action_from_pb(a) for a in v1.legal_actions][:2] == [Bid(80), Bid(90)]
    res = _deal_results(p)[0]
    assert (res.declarer, res.bid) == (first, 80)


@pytest.mark.parametrize(
    ("when", "players"), [("at-once", 3), ("after-the-gives", 3), ("after-the-gives", 4)]
)
def test_1001_all_pass_the_last_hand_may_throw_in(tmp_path: Path, when: str, players: int) -> None:
    """RULES.md, preset 1001: both seats before the last hand pass; he takes the talon at the
    opening bid (40) unasked in the auction, is offered the throw-in (not a concession)
    when he sees the talon and again after passing his cards, throws in: each other player
    dealt into the deal scores ``throw_in_bonus``, he 0; with 4 players the dealer scores
    the talon all the same."""
    rules = _preset("1001", max_deals=1, throw_in_bonus=30, players=players)
    names = NAMES3 if players == 3 else NAMES4
    g0 = Game.new(rules, 4, names)
    first, second, last = g0.active_seats
    moves: list[tuple[int, str]] = [(first, "pass"), (second, "pass")]
    if when == "at-once":
        moves.append((last, "throw-in"))
    p = play(tmp_path, rules, 4, scripted({0: moves}, contract="throw_in", keep=False))
    check_match(p)
    assert _bidding_requests(p, last) == []
    reqs = [r.view for r in p.requests(last)]
    kinds = [[a.WhichOneof("kind") for a in v.legal_actions] for v in reqs]
    assert reqs[0].phase == pb.PHASE_PASSING and reqs[0].bid == 40 and kinds[0][-1] == "throw_in"
    if when == "after-the-gives":
        assert [v.phase for v in reqs] == [pb.PHASE_PASSING] * 2 + [pb.PHASE_CONTRACT]
        assert kinds[2][-1] == "throw_in" and "concede" not in kinds[2]
    else:
        assert len(reqs) == 1
    res = _deal_results(p)[0]
    assert res.outcome == "thrown_in" and res.thrown_in and res.declarer == last and res.bid == 40
    want = [0 if s == last else 30 for s in range(players)]
    if players == 4:
        want[g0.dealer] = _talon_points([str(c) for c in g0.talon], rules)
    assert list(res.deltas) == want
    if players == 3:  # the two tied at 30 share the first place; nobody's shortfall is 0
        end = p.ended(last).result
        assert list(end.places) == [3 if s == last else 1 for s in range(3)]
        assert list(end.shortfalls) == [1001 if s == last else 971 for s in range(3)]


@pytest.mark.parametrize(
    ("concede", "pays", "rounding"),
    [
        ("free", "half", 1),
        ("penalty", "half", 1),
        ("penalty", "none", 1),
        ("free", "half", 5),
        ("off", "half", 1),
    ],
)
def test_a_concession_scores_as_the_ruleset_says(
    tmp_path: Path, concede: str, pays: str, rounding: int
) -> None:
    """RULES.md §6: the declarer of 105 concedes instead of naming a contract: he scores 0
    (``free``) or -105 (``penalty``); each opponent half the bid rounded half up to the
    rounding unit (53; 55 by fives) or nothing (``none``). ``off``: no concession is
    offered, and the deal is played."""
    rules = _classic(max_deals=1, concede=concede, concede_pays=pays, rounding=rounding)
    first, second, third = Game.new(rules, 3, NAMES3).active_seats
    moves = [(second, "bid 105"), (third, "pass"), (first, "pass")]
    p = play(tmp_path, rules, 3, scripted({0: moves}, contract="concede"))
    check_match(p)
    (req,) = [r.view for r in p.requests(second) if r.view.phase == pb.PHASE_CONTRACT]
    kinds = [a.WhichOneof("kind") for a in req.legal_actions]
    assert req.bid == 105 and kinds[0] == "contract"
    res = _deal_results(p)[0]
    if concede == "off":
        assert "concede" not in kinds and res.outcome in ("made", "failed")
        return
    assert kinds[-1] == "concede" and res.outcome == "conceded" and res.conceded
    assert res.declarer == second and res.contract == 105
    half = _half_up(105, rounding) if pays == "half" else 0
    want = [(-105 if concede == "penalty" else 0) if s == second else half for s in range(3)]
    assert list(res.deltas) == want


# ----------------------------------------------------------------------------- 4 players


@pytest.mark.parametrize("talon_visible", [True, False])
def test_4p_dealer_sits_out_sees_what_others_see_and_scores_three_nines(
    tmp_path: Path, talon_visible: bool
) -> None:
    """RULES.md, 1001 for 4: the dealer is dealt nothing and asked nothing; he sees a passed
    card of nobody's and the talon only under ``talon_visible``; the talon of three nines
    scores him ``nines_talon_value`` (here 77, not its 0 card points)."""
    rules = _preset("1001-4p", max_deals=1, nines_talon_value=77, talon_visible=talon_visible)
    g0 = Game.new(rules, 2565, NAMES4)
    assert sorted(c.rank for c in g0.talon) == [Rank.NINE] * 3
    dealer = g0.dealer
    p = play(tmp_path, rules, 2565, scripted(salt="4p"))
    check_match(p)
    assert p.requests(dealer) == []
    (started,) = p.started(dealer)
    assert list(started.view.hand) == [] and dealer not in started.view.active_seats
    evs = p.events(dealer)
    (talon,) = [e.talon_taken for e in evs if e.WhichOneof("kind") == "talon_taken"]
    assert len(talon.cards) == (3 if talon_visible else 0)
    gives = [e.action.action.give for e in evs if e.action.action.WhichOneof("kind") == "give"]
    assert len(gives) == 2 and not any(gv.HasField("card") for gv in gives)
    res = _deal_results(p, dealer)[0]
    assert res.deltas[dealer] == 77 and res.takes[dealer] == 0 and res.dealer == dealer


# ----------------------------------------------------------------------------- the barrel


BARREL = {"target": 500, "barrel_at": 300, "barrel_deals": 2, "max_deals": 10}


@pytest.mark.parametrize(
    ("mode", "seed", "event"),
    [
        ("many", 1, "sat 2 deals"),
        ("many", 7, "fails the contract"),
        ("many", 31, "wins from"),
        ("one", 361, "knocked off"),
    ],
)
def test_the_barrel_over_the_wire(tmp_path: Path, mode: str, seed: int, event: str) -> None:
    """RULES.md, the barrel (at 300 of 500 here, 2 deals): every view shows the deals left
    per seat; a seat reaching it is set to exactly 300; a sitter's defender takes are not
    scored; the events name what happened; a match ends at the target or the cap with
    places by score."""
    rules = _classic(barrel_mode=mode, **BARREL)
    p = play(tmp_path, rules, seed, scripted(pass_p=0.3))
    g = check_match(p)
    results = _deal_results(p)
    assert any(event in e for r in results for e in r.events), [list(r.events) for r in results]
    before = [-1, -1, -1]
    for r in results:
        named = " ".join(r.events)
        for s in range(3):
            if f"seat {s} gets on the barrel" in named:
                assert r.scores[s] == 300 and r.barrel[s] == 2
            if before[s] > 0 and s != r.declarer and f"seat {s} " not in named:
                assert r.deltas[s] == 0, (r.deal_number, s)  # a sitter's take is not scored
        before = list(r.barrel)
    seen = [b for s in range(3) for q in p.requests(s) for b in q.view.barrel]
    assert 2 in seen or 1 in seen, "no view showed a seat on the barrel"
    assert g.result is not None
    assert list(g.result.places) == _places(list(g.result.scores))
    if event == "wins from":
        assert g.result.reason == "target" and max(g.result.scores) == 500


def test_4p_a_card_given_to_the_dealer_or_twice_to_one_opponent_is_refused(tmp_path: Path) -> None:
    """RULES.md §4 and "bad input": with 4 players the declarer gives one card to each
    opponent dealt into the deal. A give to the dealer who sits out, and then a second card
    to the opponent who has one, are refused (``ILLEGAL``, the rule named), the fallback
    (the first legal give) played each time; the two cards still reach the two opponents."""
    rules = _preset("1001-4p", max_deals=1)
    g0 = Game.new(rules, 6, NAMES4)
    first, second, third = g0.active_seats
    dealer = g0.dealer
    # first hand bids 60, the others pass: he declares
    moves: list[tuple[int, str]] = [(first, "bid 60"), (second, "pass"), (third, "pass")]
    base = scripted({0: moves}, salt="4pg", contract="contract")

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        v = req.view
        if v.deal_number == 0 and v.phase == pb.PHASE_PASSING:
            card = _cards(v.hand)[-1]
            if not v.gives:
                return action_to_pb(Give(card, dealer))
            return action_to_pb(Give(card, v.gives[0].action.give.to_seat))
        return base(seat, req)

    p = play(tmp_path, rules, 6, policy)
    check_match(p)
    rejs = p.rejections(first)
    assert [r.incident for r in rejs] == [pb.INCIDENT_ILLEGAL] * 2
    assert f"seat {dealer} is not an opponent" in rejs[0].message
    assert "already received a card" in rejs[1].message
    assert [(r.strikes, r.strikes_allowed) for r in rejs] == [(1, 3), (2, 3)]
    gives = [a for a in p.record["deals"][0]["actions"] if a["action"].startswith("give")]
    assert [a["by"] for a in gives] == ["fallback", "fallback"]
    assert sorted(parse_action(a["action"]).to for a in gives) == sorted((second, third))
    passing = [r for r in p.requests(first) if r.view.phase == pb.PHASE_PASSING]
    for rej, req in zip(rejs, passing, strict=True):
        assert list(rej.legal_actions) == list(req.view.legal_actions)
        assert rej.fallback == req.view.legal_actions[0]


# ----------------------------------------------------------------------------- slow


def _random_rules(rng: random.Random) -> Ruleset:
    """A ruleset with options drawn at random (each valid combination RULES.md allows)."""
    base = load_ruleset(rng.choice(["classic", "1001", "1001-4p"]))
    kw: dict[str, Any] = {"max_deals": rng.randint(2, 5)}
    for key in (
        "talon_visible",
        "must_beat",
        "marriage_needs_trick",
        "ace_marriage",
        "ace_marriage_counts_for_bid",
        "first_hand_commits",
        "ask_forced",
        "barrel",
    ):
        if rng.random() < 0.3:
            kw[key] = not getattr(base, key)
    for key, values in (
        ("concede", ["free", "penalty", "off"]),
        ("concede_pays", ["half", "none"]),
        ("all_pass", ["first_hand", "last_hand"]),
        ("rounding", [1, 5, 10]),
        ("players", [3, 4]),
        ("opening_bid", [60, 80, 120]),
        ("bid_step", [5, 10, 20]),
    ):
        if rng.random() < 0.25:
            kw[key] = rng.choice(values)
    kw["opening_bid"] = (
        kw.get("opening_bid", base.opening_bid) // kw.get("bid_step", 5) * kw.get("bid_step", 5)
    )
    if rng.random() < 0.4:
        kw.update(
            target=rng.choice([300, 500]),
            barrel_at=rng.choice([150, 250]),
            barrel_deals=rng.randint(1, 3),
            barrel_mode=rng.choice(["many", "one"]),
            barrel_penalty=rng.choice([0, 120]),
        )
    return dataclasses.replace(base, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("k", range(40))
def test_random_rulesets_over_the_wire(tmp_path: Path, k: int) -> None:
    """Forty rulesets of options drawn at random, each a match played over the wire with
    drawn moves and the referee's ``ask_forced`` drawn too: every check of ``check_match``."""
    rng = random.Random(f"round35:{k}")
    rules = _random_rules(rng)
    ask_forced = rng.choice([None, None, True, False])
    policy = scripted(salt=str(k), pass_p=rng.choice([0.2, 0.5, 0.8]))
    g = check_match(play(tmp_path, rules, k, policy, ask_forced=ask_forced))
    assert g.result is not None


# ----------------------------------------------------------------------------- SDK bots


@pytest.mark.parametrize(
    "rules",
    [_classic(max_deals=2, talon_visible=False), _preset("1001-4p", max_deals=4)],
    ids=["classic-talon-hidden", "1001-4p"],
)
def test_sdk_bots_are_told_every_move_as_their_seat_may_see_it(
    tmp_path: Path, rules: Ruleset
) -> None:
    """Bots of the SDK (``BotRunner`` against the referee): each is asked with the engine's
    view of its seat, told every move (its own forced ones too; a third seat's give as a
    ``HiddenGive``), the talon only where its seat may see it, every deal's result and
    the match's places, as the record has them."""
    from sdk import Bot
    from tests.support.harness import arena

    logs: dict[int, list[tuple[Any, ...]]] = {}

    class Logger(Bot):
        def act(self, view: Any) -> Action:
            log = logs[view.seat]
            log.append(("act", view))
            rng = random.Random(f"{view.seat}:{len(log)}")
            if view.phase is Phase.BIDDING and rng.random() < 0.5:
                return Pass()
            return rng.choice(view.legal_actions)

        def on_match_start(self, view: Any) -> None:
            logs[view.seat] = [("start", view)]

        def on_action(self, view: Any, seat: int, action: Any) -> None:
            logs[view.seat].append(("action", seat, action))

        def on_talon_taken(self, view: Any, declarer: int, talon: Any) -> None:
            logs[view.seat].append(("talon", declarer, talon))

        def on_deal_end(self, view: Any, result: Any) -> None:
            logs[view.seat].append(("deal_end", result))

        def on_match_end(self, view: Any, result: Any) -> None:
            logs[view.seat].append(("end", result))

    names = NAMES3 if rules.players == 3 else NAMES4

    async def main() -> dict[str, Any]:
        async with arena(tmp_path, decision_ms=20_000, time_bank_ms=0) as a:
            tasks = await a.runners(names, [Logger] * len(names), matches=1)
            record = await a.referee.run_match("m1", rules, 17, names)
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            await a.referee.end_streams()
            return record

    record = asyncio.run(main())
    assert replay(record).result is not None
    g = Game.new(rules, 17, names)
    # (hooks get views without legal actions: docs of sdk.Bot)
    want: dict[int, list[tuple[Any, ...]]] = {
        s: [("start", dataclasses.replace(observe(g, s), legal_actions=()))]
        for s in range(len(names))
    }
    for d in record["deals"]:
        for entry in d["actions"]:
            seat, action = entry["seat"], parse_action(entry["action"])
            if entry["by"] != "forced":
                want[seat].append(("act", observe(g, seat)))
            was_bidding, deal = g.phase is Phase.BIDDING, g.deal_number
            g.apply(action, seat=seat)
            for s in want:
                hidden = isinstance(action, Give) and s not in (seat, action.to)
                want[s].append(("action", seat, HiddenGive(action.to) if hidden else action))
            if g.deal_number != deal or g.is_over:
                for s in want:
                    want[s].append(("deal_end", g.deal_results[deal]))
            elif was_bidding and g.phase is not Phase.BIDDING:
                for s in want:
                    sees = rules.talon_visible or s == g.declarer
                    want[s].append(("talon", g.declarer, g.talon if sees else None))
    assert g.result is not None
    for s in want:
        want[s].append(("end", g.result))
        diff = next(
            (i for i, (a, b) in enumerate(zip(logs[s], want[s], strict=False)) if a != b), None
        )
        assert diff is None, (s, diff, logs[s][diff:][:1], want[s][diff:][:1])
        assert len(logs[s]) == len(want[s])
