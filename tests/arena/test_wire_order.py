"""The orders a bot in any language may rely on, as the proto and docs/protocol.md now state
them, hold in the views the referee sends (`view_to_pb` of `observe`).

Defect (found writing docs/examples/node-bot from the proto and docs alone): the proto said
only that `hand` is "sorted" and the docs that legal actions are "sorted by amount / card"
(sorted how: by suit or rank first? where do pass, concede and a `declare` twin go?), and
nothing said that a lead which may declare is listed twice. A bot keeping "the first legal
action" (the referee's own fallback) or the lowest card could not know what it got."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.protocol import view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Game, observe

ROOT = Path(__file__).parents[2]
KINDS = [f.name for f in pb.Action.DESCRIPTOR.oneofs_by_name["kind"].fields]


def _card_key(card: pb.Card) -> tuple[int, int]:
    return (card.suit, card.rank)  # the enums' numbers: ♠ ♣ ♦ ♥, then 9 J Q K 10 A


def _action_key(action: pb.Action) -> tuple[int, tuple[int, int], int]:
    kind = action.WhichOneof("kind")
    assert kind is not None
    if kind in ("bid", "contract"):
        return (KINDS.index(kind), (getattr(action, kind).amount, 0), 0)
    if kind == "give":
        return (KINDS.index(kind), _card_key(action.give.card), action.give.to_seat)
    if kind == "play":
        return (KINDS.index(kind), _card_key(action.play.card), int(action.play.declare))
    return (KINDS.index(kind), (0, 0), 0)


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_hand_and_legal_actions_are_in_the_documented_order(preset: str) -> None:
    rng = random.Random(7)
    declare_twins = 0
    for seed in range(6):
        game = Game.new(
            preset, seed=seed, players=["a", "b", "c", "d"][: 4 if "4p" in preset else 3]
        )
        for _ in range(400):
            if game.is_over:
                break
            seat = game.to_act
            assert seat is not None
            view = view_to_pb(observe(game, seat))
            keys = [_card_key(c) for c in view.hand]
            assert keys == sorted(keys)
            legal = list(view.legal_actions)
            order = [_action_key(a) for a in legal]
            assert order == sorted(order) and len(set(order)) == len(order), legal
            for a in legal:  # a lead that may declare is there twice: false, then true
                if a.WhichOneof("kind") == "play" and a.play.declare:
                    plain = pb.Action(play=pb.PlayCard(card=a.play.card, declare=False))
                    assert plain in legal
                    declare_twins += 1
            game.apply(game.legal_actions()[rng.randrange(len(legal))], seat=seat)
    assert declare_twins > 0  # the twins were seen, not only vacuously true


def test_the_proto_and_the_docs_state_these_orders() -> None:
    proto_text = (ROOT / "proto" / "arena" / "v1" / "arena.proto").read_text()
    proto = " ".join(proto_text.replace("//", " ").split())  # comments joined across lines
    docs = " ".join((ROOT / "docs" / "protocol.md").read_text().split())
    assert "sorted by suit (the Suit enum's order) then rank (low to high)" in proto
    assert "ordered by kind (Action's field order), then amount, or card" in proto
    assert "in `legal_actions` twice, false and true" in proto
    assert "by kind (bid, pass, give, contract, concede, throw in, play)" in docs
    assert "is listed twice, with `declare` false and true" in docs
