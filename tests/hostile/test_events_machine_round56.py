"""Hostile round 56: round 55's machine, with every event checked and the refusal cap reached.

Round 55's stateful machine (``test_protocol_machine_round55.py``: raw hostile clients
against a live referee, honest SDK bots beside them) checked the views its clients read,
not the events, and its answers never passed the referee's cap of refusals answered and
recorded one by one (``max_wrong_recorded``, 20 per seat and match). This machine is that
one with one more rule, a burst of wrong answers past the cap, and these checks:

- **Every event any client read** (the hostile clients' on every stream, the honest SDK
  bots' as their runner handed them over, for the hostile table and the honest one alike)
  is the event the recorded game gives that seat at its ``seq``, as docs/protocol.md says:
  ``seq`` one more than the stream's last of the match (from its ``match_started``'s on),
  the actor's own action with its ``source`` (``bot``, ``fallback``, ``forced`` as the
  record's ``by``), the others' with none; a give's card only to its giver and receiver,
  the talon's cards only under ``talon_visible`` or to the declarer, once ``observe`` shows
  them; ``talon_taken`` right after the auction's last bid or pass, ``deal_ended`` right
  after the deal's last action, ``deal_started`` after it unless the match is over.
- **Each view** (a start's, a request's with its omitted parts put back) is ``observe`` at
  exactly the point of the last event the stream read (events come before their message's
  content), an end's is the finished game's, and a stream's end of a match comes after the
  match's every event; nothing of a match on a stream after its end, and no start, request
  or event of it on a stream opened after the bot read its end. A stream that resumes a
  match gets its ``match_started`` (``resumed``, its ``seq``, ``forfeited`` only for a seat
  the record forfeits) once, then only what comes after that ``seq``.
- **Past the cap**: a seat that sent more wrong answers than ``max_wrong_recorded`` has
  exactly that many ``wrong_request`` incidents, all of them counted in the record's
  ``wrong_requests`` (what ``arena replay`` shows), and read at most that many refusals;
  the arena answers the others meanwhile (round 55's invariants, run after every step).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import grpc
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from arena.protocol import card_to_pb, deal_result_to_pb, seat_action_to_pb, view_to_pb
from arena.referee.match import clip
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Give, HiddenGive, observe, parse_action, public_action
from engine import Phase as GamePhase
from engine.record import start_game
from tests.hostile import test_hostile_round36 as r36
from tests.hostile import test_protocol_machine_round55 as r55
from tests.hostile.test_views_round53 import _rebuilt
from tests.support.harness import on_the_loop

SOURCE = {"bot": pb.ACTION_SOURCE_BOT, "forced": pb.ACTION_SOURCE_FORCED,
          "fallback": pb.ACTION_SOURCE_FALLBACK}  # fmt: skip
#: the honest SDK bots' messages, as their runners handled them (batches opened)
HONEST_READ: dict[str, list[pb.ServerMessage]] = {}


@dataclasses.dataclass
class Told:
    """What seat ``seat`` of a recorded match is to be told: its events by ``seq`` (the
    ``k``-th at ``events[k - 1]``), its view after each count of them (``views[k]``,
    serialized), and its view of the match's end."""

    events: list[pb.Event]
    views: list[bytes]
    end: bytes


def _view(game: Any, seat: int, ended: bool = False) -> bytes:
    return view_to_pb(observe(game, seat, ended=ended)).SerializeToString(deterministic=True)


def told(rec: dict[str, Any], seat: int) -> Told:
    """The events and views of seat ``seat`` of match ``rec``, from the record alone."""
    game = start_game(rec)
    mid = rec["match_id"]
    out = Told([], [_view(game, seat)], b"")

    def add(ev: pb.Event) -> None:
        ev.match_id, ev.seq = mid, len(out.events) + 1
        out.events.append(ev)
        out.views.append(_view(game, seat))

    for deal in rec["deals"]:
        for a in deal["actions"]:
            action, actor = parse_action(a["action"]), a["seat"]
            number, phase = game.deal_number, game.phase
            game.apply(action, seat=actor)
            seen = public_action(action, actor, seat)
            # RULES: a passed card is its giver's and its receiver's alone
            if isinstance(action, Give) and seat not in (actor, action.to):
                assert isinstance(seen, HiddenGive), (action, actor, seat)
            mine = actor == seat
            add(
                pb.Event(
                    action=seat_action_to_pb(actor, seen),
                    source=SOURCE[a["by"]] if mine else pb.ACTION_SOURCE_UNSPECIFIED,
                )
            )
            if game.deal_number != number or game.is_over:
                for res in game.deal_results[number:]:
                    add(pb.Event(deal_ended=deal_result_to_pb(res)))
                if not game.is_over:
                    add(pb.Event(deal_started=game.deal_number))
            elif phase is GamePhase.BIDDING and game.phase is not GamePhase.BIDDING:
                ev = pb.Event()
                assert game.declarer is not None
                ev.talon_taken.seat = game.declarer
                talon = observe(game, seat).talon or ()
                # the talon's cards: under talon_visible, or to the declarer alone
                assert not talon or game.ruleset.talon_visible or seat == game.declarer
                ev.talon_taken.cards.extend(card_to_pb(c) for c in talon)
                add(ev)
    out.end = _view(game, seat, ended=True)
    return out


@dataclasses.dataclass
class Seen:
    """What one bot's streams showed of one match, across them (in the order opened)."""

    started: bool = False  # a match_started of it was read (one not resumed only first)
    ended_on: int | None = None  # the stream its end was first read on
    events: int = 0
    deals: int = 0  # deal_started events read
    again: int = 0  # ends read again on a later stream


def check_stream(msgs: Sequence[pb.ServerMessage], where: str, rec: dict[str, Any],
                 seat: int, t: Told, seen: Seen, n: int) -> None:  # fmt: skip
    """Check stream ``n`` of a bot (its messages ``msgs``, batches opened) against what
    seat ``seat`` of match ``rec`` is to be told (``t``); ``seen`` carries what the bot's
    earlier streams showed of the match."""
    mid = rec["match_id"]
    start: int | None = None  # the seq of this stream's match_started
    last = 0
    ended = False
    view: pb.PlayerView | None = None  # the stream's last view of the match (rebuilt)
    for k, m in enumerate(msgs):
        at = f"{where} stream {n} message {k}"
        kind = m.WhichOneof("kind")
        for ev in m.events:
            if ev.match_id != mid:
                continue
            assert start is not None, f"{at}: event {ev.seq} of {mid} before its match_started"
            assert not ended, f"{at}: event {ev.seq} of {mid} after its match_ended"
            assert ev.seq == last + 1, f"{at}: event seq {ev.seq} after {last}"
            assert ev.seq <= len(t.events), f"{at}: event {ev.seq}: the match had {len(t.events)}"
            want = t.events[ev.seq - 1]
            assert ev == want, f"{at}: read event\n{ev}\nthe record's is\n{want}"
            last = ev.seq
            seen.events += 1
            seen.deals += ev.HasField("deal_started")
        if kind not in ("match_started", "decision_request", "match_ended"):
            continue
        body = getattr(m, kind)
        if body.match_id != mid:
            continue
        # (a stream opened after the bot read the end: at most the end again)
        assert seen.ended_on is None or seen.ended_on == n or kind == "match_ended", (
            f"{at}: a {kind} of {mid} after the bot read its end on stream {seen.ended_on}"
        )
        assert not ended, f"{at}: a {kind} of {mid} after its match_ended on this stream"
        if body.HasField("view"):
            view = _rebuilt(body.view, view, at)
        got = view.SerializeToString(deterministic=True) if view is not None else b""
        if kind == "match_started":
            assert start is None, f"{at}: {mid} started twice on one stream"
            assert body.resumed or (body.seq == 0 and not seen.started), (at, body.seq)
            assert 0 <= body.seq <= len(t.events), (at, body.seq)
            assert got == t.views[body.seq], f"{at}: a start's view not the record's at {body.seq}"
            assert not body.forfeited or seat in rec["forfeits"], at
            assert body.seat == seat, at
            start = last = body.seq
            seen.started = True
        elif kind == "decision_request":
            assert start is not None, f"{at}: a request of {mid} before its match_started"
            assert got == t.views[last], (
                f"{at}: request {body.request_id}'s view is not the record's after event {last}"
            )
        else:
            if start is not None:  # (its first sending carries the last deal's events)
                assert last == len(t.events), f"{at}: ended after event {last} of {len(t.events)}"
            elif body.result.reason != "interrupted":
                # An end kept for the bot comes again right after the Welcome of a new
                # stream (before its resumes); ends of `running` it no longer keeps are
                # answered "interrupted", after them (docs/protocol.md).
                before = {x.WhichOneof("kind") for x in msgs[:k]}
                assert before <= {"welcome", "match_ended"}, f"{at}: an end again after {before}"
                seen.again += 1
            if body.HasField("view"):
                assert got == t.end, f"{at}: an end's view not the finished game's"
            ended = True
            if seen.ended_on is None:
                seen.ended_on = n


def check_bot(name: str, streams: Sequence[Sequence[pb.ServerMessage]],
              rec: dict[str, Any]) -> Seen:  # fmt: skip
    """Check every stream of bot ``name`` for match ``rec``; what they showed of it."""
    seat = list(rec["players"]).index(name)
    t = told(rec, seat)
    seen = Seen()
    for n, msgs in enumerate(streams):
        check_stream(msgs, name, rec, seat, t, seen, n)
    return seen


def by_match(msgs: Sequence[pb.ServerMessage]) -> dict[str, list[pb.ServerMessage]]:
    """The messages of one stream that say anything of each match (its events, or a
    start, request or end of it), in order: a long stream checked match by match."""
    out: dict[str, list[pb.ServerMessage]] = {}
    for m in msgs:
        kind = m.WhichOneof("kind")
        mids = {e.match_id for e in m.events}
        if kind in ("match_started", "decision_request", "match_ended"):
            mids.add(getattr(m, kind).match_id)
        for mid in mids:
            out.setdefault(mid, []).append(m)
    return out


def _capturing(runner: Any) -> Any:
    """Round 36's ``on_the_loop``, and each message the runner handles kept (the runner
    opens batches by calling its ``_on_message`` again, so each inner one is kept)."""
    runner = on_the_loop(runner)
    read = HONEST_READ.setdefault(runner.name, [])
    handle = runner._on_message

    def keep(msg: pb.ServerMessage, out: Any, *rest: Any) -> None:
        if msg.WhichOneof("kind") != "batch":
            read.append(msg)
        # (rest: the message as sdk.wire_view parses it, or None, and its kind if read)
        handle(msg, out, *rest)

    runner._on_message = keep
    return runner


#: Round 55's rulesets, and matches of two deals (a deal's end, then a ``deal_started``),
#: 1001's among them (an all-pass there gives the last hand the talon by no action).
RULESETS = (
    *r55.RULESETS,
    dataclasses.replace(PRESETS["classic"], max_deals=2),
    dataclasses.replace(PRESETS["1001"], max_deals=2, talon_visible=False),
)
#: Wrong answers sent in one burst past the cap (the World's flood limit is 40 a window).
BURST = (r55.WRONG_ANSWERED + 1, r55.WRONG_ANSWERED + 6)


class Deaf(r36.Call):
    """A call that never reads: no reader task (its status is not awaited either)."""

    async def open(self, channel: Any, metadata: tuple[tuple[str, str], ...]) -> None:
        method = channel.stream_stream(
            r36.PLAY,
            request_serializer=lambda b: b,
            response_deserializer=pb.ServerMessage.FromString,
        )
        self.call = method(metadata=metadata)


def _tokens() -> dict[str, Any]:
    def md(*values: str) -> tuple[tuple[str, str], ...]:
        return tuple(("authorization", v) for v in values)

    return {
        "huge": lambda t: (md(f"Bearer {t}{'x' * 7000}"), "wrong"),
        "wrong_ones_first": lambda t: (
            md(*[f"Bearer {t}-{k}" for k in range(64)], f"Bearer {t}"),
            "wrong",
        ),
        "other_scheme_first": lambda t: (md(f"Basic {t}", f"Bearer {t}"), "hello"),
        "right_first": lambda t: (md(f"Bearer {t}", f"Bearer {t}-x"), "hello"),
        "right_repeated": lambda t: (md(*[f"Bearer {t}"] * 64), "hello"),
        # (spaces only: grpcio refuses a tab in metadata, client side: "Invalid metadata";
        # tabs are test_metadata_round56.py's, over raw HTTP/2)
        "blanks_around": lambda t: (md(f" Bearer   {t}  "), "hello"),
    }


TOKENS = _tokens()


class Machine(r55.Machine):
    """Round 55's machine; its examples' events checked at their end, and more rules."""

    def __init__(self) -> None:
        super().__init__()
        self.deaf_channels: list[Any] = []

    @rule(i=r55.Machine.bot, n=st.sampled_from(BURST), batch=st.booleans())
    def past_the_cap(self, i: int, n: int, batch: bool) -> None:
        """More wrong answers for the bot's match than the referee answers and records one
        by one: the first 20 are, the rest only counted (and weighed as strays)."""
        b = self.bots[i % len(self.bots)]
        req = self._latest(b)
        call = self._live(b)
        if req is None or req.match_id in b.ended() or call is None:
            return
        mid, base = req.match_id, int(req.request_id)
        action = req.view.legal_actions[0].SerializeToString()
        rids = [str(base + 1000 + k) for k in range(n)]  # never sent: none is pending
        for rid in rids:
            b.sent[(clip(mid), clip(rid))].add("unsent")
        self.wrong[(b.name, mid)] += n  # (no refusal is waited for past the cap)
        self.w.seen["burst past the cap"] += 1
        decisions = [r55._decision(rid, mid, action) for rid in rids]

        async def go() -> None:
            if batch:
                await call.write(r55._message(decisions, True))
            else:
                for d in decisions:
                    await call.write(r55._message([d], False))

        self.run(go())
        self.run(asyncio.sleep(0.05))

    @rule(i=r55.Machine.bot, features=st.booleans())
    def deaf(self, i: int, features: bool) -> None:
        """A new stream of the bot (it replaces the live one and resumes its seats) on a
        connection of its own whose window is 1 KiB, never read: HTTP/2 flow control
        holds the referee's writes. Its seats' deadlines still fire (round 55's invariant),
        the referee queues at most ``max_queued`` for it (below), and the next stream of
        the bot takes over from it."""
        b = self.bots[i % len(self.bots)]
        b.named |= set(self.matches)
        hello = pb.Hello(bot_name=b.name, protocol_version=1, running=sorted(b.named),
                         features=["batch", "results_once"] if features else [])  # fmt: skip
        opts = (("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0))

        async def go() -> None:
            ch = grpc.aio.insecure_channel(self.w.target, options=opts)
            self.deaf_channels.append(ch)
            c = Deaf(b, "hello")
            b.calls.append(c)
            await c.open(ch, self._md(b))
            await c.write(pb.BotMessage(hello=hello).SerializeToString())
            await asyncio.sleep(0.1)

        self.w.seen["deaf stream"] += 1
        self.run(go())

    @rule(i=r55.Machine.bot, kind=st.sampled_from(sorted(TOKENS)))
    def token_abuse(self, i: int, kind: str) -> None:
        """A stream whose ``authorization`` metadata is abused: a token of 7,000
        characters, 64 entries of wrong tokens before the right one, another scheme or the
        right token first and a wrong one after (docs/protocol.md: the first ``Bearer``
        entry counts), the same right entry 64 times."""
        b = self.bots[i % len(self.bots)]
        md, how = TOKENS[kind](b.token)
        if how == "hello":
            b.named |= set(self.matches)
        hello = pb.Hello(bot_name=b.name, protocol_version=1, running=sorted(b.named))
        self.w.seen[f"token {kind}"] += 1
        self.run(self._open(b, how, pb.BotMessage(hello=hello).SerializeToString(), md))

    @r55.invariant()
    def queues_bounded(self) -> None:
        """No stream of the referee holds more than ``max_queued`` messages unwritten."""
        most = self.w.ref.config.max_queued

        async def depths() -> list[int]:
            return [s.stream._queue.qsize() for s in self.w.ref._by_name.values()
                    if s.stream is not None]  # fmt: skip

        deepest = max(self.run(depths()), default=0)
        assert deepest <= most, deepest
        self.w.seen["deepest queue"] = max(self.w.seen["deepest queue"], deepest)

    def teardown(self) -> None:
        # (a burst at each example's end too, whatever its steps drew: the run must pass
        # the cap, and which rules a derandomized run draws changes with every edit)
        self.past_the_cap(0, BURST[0], batch=True)
        try:
            super().teardown()
        finally:
            for ch in self.deaf_channels:
                self.run(ch.close())
        for mid in self.matches:
            rec = self.w.records[mid]
            for b in self.bots:
                if b.name in rec["players"]:
                    streams = [c.msgs for c in b.calls if c.how == "hello"]
                    got = check_bot(b.name, streams, rec)
                    self.w.seen["events checked"] += got.events
                    self.w.seen["deal_started read"] += got.deals
                    self.w.seen["ends read again"] += got.again
                    seat = rec["players"].index(b.name)
                    total = rec["wrong_requests"][seat]
                    listed = [i for i in rec["incidents"]
                              if i["seat"] == seat and i["kind"] == "wrong_request"]  # fmt: skip
                    if total > r55.WRONG_ANSWERED:
                        assert len(listed) == r55.WRONG_ANSWERED, (mid, seat, len(listed))
                        self.w.seen["seats past the cap"] += 1


def _run(tmp: Path, examples: int, steps: int) -> None:
    HONEST_READ.clear()
    with mock.patch.object(r36, "on_the_loop", _capturing):
        world = r55.WORLD = r36.World(tmp)
    ok = False
    try:
        with mock.patch.object(r55, "RULESETS", RULESETS):
            run_state_machine_as_test(Machine, settings=settings(
                max_examples=examples, stateful_step_count=steps, derandomize=True,
                deadline=None, database=None, print_blob=True,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate],  # (no shrinking: see round 55)
            ))  # fmt: skip
        # The honest bots' events, of every match they sat in that they saw start (the
        # honest table's first may have started before the capture was in place).
        seen: Counter[str] = world.seen
        records = [*world.honest_records, *world.records.values()]
        for name, read in HONEST_READ.items():
            of = by_match(read)
            for rec in records:
                msgs = of.get(rec["match_id"], [])
                if name in rec["players"] and any(m.HasField("match_started") for m in msgs):
                    seen["honest events checked"] += check_bot(name, [msgs], rec).events
                    seen["honest matches checked"] += 1
        for k, v in sorted(seen.items()):
            print(f"{v:6d}  {k}")
        assert seen["events checked"] > 0 and seen["honest events checked"] > 0, seen
        assert seen["seats past the cap"] > 0, f"no seat passed the cap: {seen}"
        assert seen["deal_started read"] > 0, f"no match of two deals was followed: {seen}"
        ok = True
    finally:
        r55.WORLD = None
        world.stop(check=ok)


def test_every_event_is_the_records_and_the_cap_holds(tmp_path: Path) -> None:
    """The default run: a few short examples, derandomized."""
    _run(tmp_path, examples=5, steps=16)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_every_event_is_the_records_at_length(tmp_path: Path) -> None:
    _run(tmp_path, examples=30, steps=40)
