"""Round 48: the SDK's per-decision work made smaller (docs/performance.md, "Changes of
2026-12-07") keeps what it did: the checks of a request's legal actions, the answer's
bytes, and the checks of an answer that is not one of the legal actions given."""

from __future__ import annotations

import dataclasses
import logging
import random

import pytest

from arena.protocol import MalformedMessageError, action_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Bid, Game, Phase, Play, PlayerView, observe
from engine.rules import PRESETS
from sdk.bot import Bot
from sdk.client import BotRunner, _check_request_view, _Match, _Outbox
from sdk.local import decide_failed


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
