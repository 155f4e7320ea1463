"""Round 49: the SDK answers with the wire bytes of a view's legal action kept by the
action's identity (docs/performance.md, "Changes of 2026-12-08"): the answer's bytes are
the ``Decision`` built field by field, for every kind of action, and an action that is not
the very object a view gave (an equal one made anew, none at all) is built as before."""

from __future__ import annotations

import dataclasses
import random

from arena.protocol import action_to_pb, decoded_action_bytes, view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Action, Bid, Game, observe
from engine.rules import PRESETS
from sdk.bot import Bot
from sdk.client import BotRunner, _Match, _Outbox


class _Same(Bot):
    def act(self, view):  # type: ignore[no-untyped-def]
        return view.legal_actions[0]


def _views(preset: str, players: int) -> list[tuple[Game, object]]:
    """The decoded views of every decision of a few random matches (every kind of action)."""
    rng = random.Random(49)
    rules = dataclasses.replace(PRESETS[preset], max_deals=6)
    out = []
    for seed in range(3):
        g = Game.new(rules, seed=seed, players=[f"p{i}" for i in range(players)])
        while not g.is_over:
            seat = g.to_act
            assert seat is not None
            legal = g.legal_actions()
            if len(legal) > 1:
                out.append((g, view_from_pb(view_to_pb(observe(g, seat)), rules)))
            g.apply(rng.choice(legal), seat=seat)
    return out


def test_a_decoded_action_has_the_bytes_action_to_pb_gives() -> None:
    kinds = set()
    for preset, players in (("classic", 3), ("1001-4p", 4)):
        for _, view in _views(preset, players):
            for a in view.legal_actions:  # type: ignore[attr-defined]
                kinds.add(type(a).__name__)
                assert decoded_action_bytes(a) == action_to_pb(a).SerializeToString()
                # an equal action made anew is not the decoded one: built as before
                assert decoded_action_bytes(dataclasses.replace(a)) is None
    assert {"Bid", "Pass", "Give", "Contract", "Play"} <= kinds
    assert decoded_action_bytes(object()) is None


def test_an_arenas_unknown_fields_are_not_echoed() -> None:
    """A legal action sent with a field this protocol does not know decodes to an action
    whose answer carries only what ``action_to_pb`` writes."""
    for _, view in _views("classic", 3)[:1]:
        rules = view.ruleset  # type: ignore[attr-defined]
        msg = view_to_pb(view)  # type: ignore[arg-type]
        clean = [a.SerializeToString() for a in msg.legal_actions]
        del msg.legal_actions[:]
        for data in clean:
            # field 127, a varint: unknown to every protocol version so far
            msg.legal_actions.append(pb.Action.FromString(data + b"\xf8\x07\x01"))
        decoded = view_from_pb(msg, rules)
        for a, data in zip(decoded.legal_actions, clean, strict=True):
            assert decoded_action_bytes(a) == data


def test_the_answer_is_the_decision_built_field_by_field() -> None:
    runner = BotRunner(_Same, "127.0.0.1:1", "tok")
    out = _Outbox()
    runner._out = out
    for g, view in _views("1001-4p", 4)[::7]:
        m = _Match("m-9", view.seat, g.ruleset, None, view)  # type: ignore[attr-defined]
        legal: tuple[Action, ...] = view.legal_actions  # type: ignore[attr-defined]
        for action in (legal[0], legal[-1], dataclasses.replace(legal[-1]), Bid(-5)):
            runner._send_answer(m, "23", action, out)
            got = out._buf.pop()
            assert got is not None
            sent = Bid(0) if action == Bid(-5) else action  # (a bid no wire field holds)
            want = pb.Decision(request_id="23", match_id="m-9", action=action_to_pb(sent))
            assert got.SerializeToString() == pb.BotMessage(decision=want).SerializeToString()
