"""Round 48: the SDK's per-decision work made smaller (docs/performance.md, "Changes of
2026-12-07") keeps what it did: the checks of a request's legal actions, the answer's
bytes, and the checks of an answer that is not one of the legal actions given; a quick
bot's hooks run on the event loop, in the match's order."""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest

from arena.protocol import MalformedMessageError, action_to_pb, seat_action_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, Bid, Game, Pass, Phase, Play, PlayerView, observe
from engine.rules import PRESETS
from sdk import client
from sdk.bot import Bot
from sdk.client import BotRunner, _check_request_view, _Match, _Outbox
from sdk.local import decide_failed
from tests.sdk.test_hostile_arena import WELCOME, Out, Stream, _game, ended, play, request, started


def _playing_view() -> PlayerView:
    """A view of a seat to play, offered more than one card."""
    rng = random.Random(3)
    for seed in range(50):
        g = Game.new("classic", seed=seed, players=["a", "b", "c"])
        while not g.is_over:
            seat = g.to_act
            assert seat is not None
            legal = g.legal_actions()
            if g.phase is Phase.PLAYING and len(legal) > 2:
                return observe(g, seat)
            g.apply(rng.choice(legal), seat=seat)
    raise AssertionError("no playing view found")


def test_a_play_listed_twice_is_refused_and_a_declaring_play_is_not_its_repeat() -> None:
    view = _playing_view()
    plays = [a for a in view.legal_actions if isinstance(a, Play)]
    _check_request_view(view)  # as the engine offers it: nothing to refuse
    again = dataclasses.replace(view, legal_actions=(*view.legal_actions, Play(plays[1].card)))
    with pytest.raises(MalformedMessageError, match=f"{plays[1]} twice"):
        _check_request_view(again)
    # Play(c) and Play(c, declare=True) are two actions (the check compares fields, not
    # the cards alone): a queen whose king is held may be led either way.
    view = dataclasses.replace(view, trick=())
    hand = set(view.hand)
    queen = next((c for c in hand if c.rank.name == "QUEEN"), None)
    if queen is not None and any(c.rank.name == "KING" and c.suit == queen.suit for c in hand):
        both = dataclasses.replace(view, legal_actions=(Play(queen), Play(queen, declare=True)))
        _check_request_view(both)


class _Fresh(Bot):
    """Answers an action equal to a legal one, not the one given: checked in full."""

    def act(self, view: PlayerView) -> Play:
        a = view.legal_actions[0]
        assert isinstance(a, Play)
        return Play(a.card, a.declare)


class _Wrong(Bot):
    """Answers a play of a card given as text: no action, the fallback is played."""

    def act(self, view: PlayerView) -> Play:
        return Play("10♣")  # type: ignore[arg-type]


class _Same(Bot):
    def act(self, view: PlayerView) -> Play:
        a = view.legal_actions[-1]
        assert isinstance(a, Play)
        return a


def test_an_answer_is_checked_unless_it_is_one_of_the_legal_actions_given(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view = _playing_view()
    assert decide_failed(_Same(), view) == (view.legal_actions[-1], None)
    action, failed = decide_failed(_Fresh(), view)
    assert action == view.legal_actions[0] and failed is None
    with caplog.at_level(logging.ERROR, logger="sdk"):
        action, failed = decide_failed(_Wrong(), view, match_id="m7")
    assert failed == "no action: Play" and action in view.legal_actions
    assert "match m7: _Wrong.act()" in caplog.text and "its card must be" in caplog.text


def test_the_answer_on_the_wire_is_the_decision_built_field_by_field() -> None:
    runner = BotRunner(_Same, "127.0.0.1:1", "tok")
    out = _Outbox()
    runner._out = out
    m = _Match("m-1", 0, PRESETS["classic"], None, _playing_view())
    view = m.view
    for action, failed in ((view.legal_actions[0], None), (Bid(120), "ValueError")):
        runner._send_answer(m, "17", action, out, failed)
        want = pb.Decision(request_id="17", match_id="m-1", action=action_to_pb(action))
        if failed is not None:
            want.failed = failed
        got = out._buf.pop()
        assert got is not None
        assert got.SerializeToString() == pb.BotMessage(decision=want).SerializeToString()
    # No action at all (none foreseen): an action of no kind, which the referee refuses.
    runner._send_answer(m, "18", object(), out)  # type: ignore[arg-type]
    got = out._buf.pop()
    assert got is not None and got.decision.HasField("action")
    assert got.decision.action.WhichOneof("kind") is None


# ----------------------------------------------------------------------------- hooks


def _hooked(quick: bool, slow_s: float = 0.0) -> type[Bot]:
    """A bot recording its calls and the thread each ran on."""

    class Hooked(Bot):
        calls: ClassVar[list[tuple[str, int]]] = []

        def act(self, view: PlayerView) -> Action:
            self.calls.append(("act", threading.get_ident()))
            return view.legal_actions[0]

        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            assert not view.legal_actions
            self.calls.append((f"on_action {seat}", threading.get_ident()))
            time.sleep(slow_s)

    Hooked.quick = quick
    return Hooked


def _script_with_events() -> Any:
    g = _game()
    seat = g.to_act
    assert seat is not None
    others = [s for s in range(3) if s != seat]

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")  # (the bot is made, in the match's chain)
        await s.decision()
        for rid in ("1", "2"):  # (the same view asked again, after two events each time)
            msg = request("m1", g, rid)
            base = 2 * int(rid) - 2
            for i, other in enumerate(others):
                ev = pb.Event(match_id="m1", seq=base + i + 1)
                ev.action.CopyFrom(seat_action_to_pb(other, Pass()))
                msg.events.append(ev)
            yield msg
            await s.decision()
        yield ended("m1")

    return script, others


def test_a_quick_bots_hooks_run_on_the_event_loop_in_order_before_its_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A quick bot's hooks are called on the event loop, as its decisions are (they took a
    step task and a worker thread's round trip each: 0.45 ms of CPU per decision for four
    to five action events, against 0.1 ms now); a bot that is not quick still has them in a
    worker thread. Either way in the match's order, before the decision they precede."""
    # (A loaded machine may hold up a call past the 5 ms that send a quick bot to the
    # worker thread: this failed one run in a few under a load of 15 on 2 cores.)
    monkeypatch.setattr(client, "_SLOW_S", 60.0)
    for quick in (True, False):
        bot = _hooked(quick)
        script, others = _script_with_events()
        _, arena = play(bot, script)
        assert arena.streams[0].decided() == [("m1", "0"), ("m1", "1"), ("m1", "2")]
        order = [what for what, _ in bot.calls]
        hooks = [f"on_action {s}" for s in others]
        assert order == ["act", *hooks, "act", *hooks, "act"]
        loop_thread = threading.get_ident()  # (play() runs its loop in this thread)
        on_loop = [t == loop_thread for what, t in bot.calls if what != "act"]
        assert on_loop == [quick] * 4, (quick, bot.calls)


def test_a_quick_bots_slow_hook_sends_it_to_the_worker_thread(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quick bot whose hook takes over 5 ms (every match of the bot waits meanwhile) is
    asked in a worker thread from then on, as after slow decisions, and told so: at the
    second such call (round 52: one alone may be a busy machine's pause)."""
    # (the bound 20 times the real one, the hook 15 times as slow: a loaded machine holding
    # up the first decision past 5 ms sent the bot to the worker thread before its hook)
    monkeypatch.setattr(client, "_SLOW_S", 0.1)
    bot = _hooked(True, slow_s=0.3)
    script, _ = _script_with_events()
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        _, arena = play(bot, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "1"), ("m1", "2")]
    assert "says it is quick, but its on_action took" in caplog.text
    loop_thread = threading.get_ident()
    on_loop = [t == loop_thread for _, t in bot.calls]
    assert on_loop == [True, True, True, False, False, False, False], bot.calls
