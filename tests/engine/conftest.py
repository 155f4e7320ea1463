"""Helpers for the engine's rule-case, property and golden tests.

The tests are written from ``docs/RULES.md`` and ``docs/architecture.md``, not from
the engine's code. Seats are never assumed: a :class:`Table` reads ``game.dealer`` and
names the seats of the current deal by role:

* ``F`` — first hand, ``(dealer + 1) % n``;
* ``S`` — second hand, ``(dealer + 2) % n``;
* ``L`` — the last active hand: the dealer with 3 players, ``(dealer + 3) % 4`` with 4;
* ``D`` — the dealer (with 4 players he sits the deal out).

Action texts may start with a role (``"S: bid 105"``: also checks that it is that seat's
turn) and may name seats by role in braces (``"give K♥ to {S}"``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from engine import PRESETS, Game, IllegalActionError, Phase, observe
from engine.actions import Action, Play, parse_action
from engine.cards import DECK, Card, Suit, parse_cards

PLAYERS3 = ["ann", "bob", "cid"]
PLAYERS4 = ["ann", "bob", "cid", "dan"]

ROLE_OFFSETS3 = {"F": 1, "S": 2, "L": 0, "D": 0}
ROLE_OFFSETS4 = {"F": 1, "S": 2, "L": 3, "D": 0}


def rules(preset: str = "classic", **overrides: Any):
    """A preset with some options replaced."""
    return dataclasses.replace(PRESETS[preset], **overrides)


def players_for(ruleset) -> list[str]:
    return PLAYERS3 if ruleset.players == 3 else PLAYERS4


def role_seat(role: str, dealer: int, n: int) -> int:
    offsets = ROLE_OFFSETS3 if n == 3 else ROLE_OFFSETS4
    return (dealer + offsets[role]) % n


def _cards(x: str | Iterable[Card]) -> tuple[Card, ...]:
    return parse_cards(x) if isinstance(x, str) else tuple(x)


def build_deal(
    n: int,
    dealer: int,
    hands: Mapping[str | int, str | Iterable[Card]],
    talon: str | Iterable[Card],
) -> tuple[list[tuple[Card, ...]], tuple[Card, ...]]:
    """Explicit ``(hands, talon)`` from hands given by role or seat; checks the partition."""
    out: list[tuple[Card, ...]] = [() for _ in range(n)]
    for who, cards in hands.items():
        seat = who if isinstance(who, int) else role_seat(who, dealer, n)
        out[seat] = _cards(cards)
    tal = _cards(talon)
    every = [c for h in out for c in h] + list(tal)
    # A mistake in a test's own deal must not pass for an engine bug.
    assert sorted(every) == sorted(DECK), f"test deal is not a partition of the deck: {out} {tal}"
    assert len(tal) == 3
    for seat, h in enumerate(out):
        expected = 0 if (n == 4 and seat == dealer) else 7
        assert len(h) == expected, f"test deal: seat {seat} holds {len(h)} cards"
    return out, tal


def dealer_of(ruleset, seed: int) -> int:
    return Game.new(ruleset, seed, players_for(ruleset)).dealer


def new_game(
    ruleset,
    deals: Sequence[tuple[Mapping[str | int, Any], Any]] | None = None,
    *,
    seed: int = 7,
    scores: Sequence[int] | None = None,
) -> Game:
    """A game whose deals 0, 1, ... use the given hands (roles relative to each deal's dealer)."""
    players = players_for(ruleset)
    n = ruleset.players
    d0 = dealer_of(ruleset, seed)
    explicit = {}
    for k, (hands, talon) in enumerate(deals or ()):
        explicit[k] = build_deal(n, (d0 + k) % n, hands, talon)
    kwargs: dict[str, Any] = {}
    if explicit:
        kwargs["deals"] = explicit
    if scores is not None:
        kwargs["scores"] = tuple(scores)
    game = Game.new(ruleset, seed, players, **kwargs)
    assert game.dealer == d0
    if scores is not None:
        assert tuple(game.scores) == tuple(scores)
    return game


class Table:
    """A game plus role-named seats and a small action language."""

    def __init__(self, game: Game) -> None:
        self.game = game

    # seats by role, for the deal in progress
    @property
    def n(self) -> int:
        return len(self.game.players)

    def seat(self, role: str) -> int:
        return role_seat(role, self.game.dealer, self.n)

    @property
    def F(self) -> int:
        return self.seat("F")

    @property
    def S(self) -> int:
        return self.seat("S")

    @property
    def L(self) -> int:
        return self.seat("L")

    @property
    def D(self) -> int:
        return self.seat("D")

    def roles(self) -> dict[str, int]:
        return {r: self.seat(r) for r in ("F", "S", "L", "D")}

    def action(self, text: str) -> tuple[int | None, Action]:
        text = text.format(**self.roles())
        m = re.match(r"^\s*([FSLD0-3])\s*:\s*(.*)$", text)
        seat = None
        if m:
            who, text = m.group(1), m.group(2)
            seat = int(who) if who.isdigit() else self.seat(who)
        return seat, parse_action(text)

    def act(self, *texts: str) -> Table:
        for text in texts:
            seat, action = self.action(text)
            if seat is None:
                self.game.apply(action)
            else:
                self.game.apply(action, seat=seat)
        return self

    def legal(self) -> set[str]:
        return {str(a) for a in self.game.legal_actions()}

    def legal_plays(self) -> set[Card]:
        return {a.card for a in self.game.legal_actions() if isinstance(a, Play) and not a.declare}

    def view(self, seat: int | str):
        if isinstance(seat, str):
            seat = self.seat(seat)
        return observe(self.game, seat)

    def hand(self, seat: int | str) -> set[Card]:
        return set(self.view(seat).hand)

    def finish_deal(self) -> None:
        """Play the rest of the deal: each player plays his lowest legal card, declaring nothing."""
        number = self.game.deal_number
        while not self.game.is_over and self.game.deal_number == number:
            assert self.game.phase == Phase.PLAYING, self.game.phase
            plays = [a for a in self.game.legal_actions() if isinstance(a, Play) and not a.declare]
            self.game.apply(plays[0])


def table(
    ruleset,
    hands: Mapping[str | int, Any] | None = None,
    talon: Any = None,
    *,
    more: Sequence[tuple[Mapping[str | int, Any], Any]] = (),
    seed: int = 7,
    scores: Sequence[int] | None = None,
) -> Table:
    deals = []
    if hands is not None:
        deals.append((hands, talon))
    deals.extend(more)
    return Table(new_game(ruleset, deals, seed=seed, scores=scores))


def snapshot(game: Game) -> dict[str, Any]:
    """Everything observable about a game, for "the state is unchanged" checks."""
    n = len(game.players)
    return {
        "record": game.record(),
        "views": [observe(game, s) for s in range(n)],
        "legal": game.legal_actions(),
        "phase": game.phase,
        "to_act": game.to_act,
        "scores": game.scores,
        "deal_number": game.deal_number,
        "dealer": game.dealer,
        "is_over": game.is_over,
        "deal_results": list(game.deal_results),
    }


def assert_refused(game: Game, action: Action | str, *, seat: int | None = None, error=None):
    """Apply must raise (a subclass of ``error``), name action/rule/legal, and change nothing."""
    if isinstance(action, str):
        action = parse_action(action)
    before = snapshot(game)
    legal = game.legal_actions()
    error = error or IllegalActionError
    with pytest.raises(IllegalActionError) as info:
        if seat is None:
            game.apply(action)
        else:
            game.apply(action, seat=seat)
    err = info.value
    assert isinstance(err, error), f"{type(err).__name__} is not a {error.__name__}"
    assert err.action == action
    assert err.rule, "the error must name the rule broken"
    assert tuple(err.legal) == tuple(legal)
    msg = str(err)
    assert str(action) in msg, msg
    assert str(err.rule) in msg, msg
    if legal and len(legal) <= 12:
        for a in legal:
            assert str(a) in msg, f"legal action {a} not named in: {msg}"
    after = snapshot(game)
    assert after == before, "a refused action changed the state"
    return err


# --- an independent oracle of the trick rules (RULES.md §7), for property tests -------------


def oracle_winner(trick: Sequence[tuple[int, Card]], trump: Suit | None) -> int:
    """The seat that wins a complete trick."""
    led = trick[0][1].suit
    best_seat, best = trick[0]
    for seat, card in trick[1:]:
        if _beats(card, best, led, trump):
            best_seat, best = seat, card
    return best_seat


def _beats(card: Card, best: Card, led: Suit, trump: Suit | None) -> bool:
    if trump is not None and card.suit == trump:
        return best.suit != trump or card.rank > best.rank
    if trump is not None and best.suit == trump:
        return False
    return card.suit == led and (best.suit != led or card.rank > best.rank)


def oracle_legal_cards(
    hand: Iterable[Card], trick: Sequence[tuple[int, Card]], trump: Suit | None, must_beat: bool
) -> set[Card]:
    """Which cards a player may play to the trick in progress."""
    hand = set(hand)
    if not trick:
        return hand
    led = trick[0][1].suit
    follow = {c for c in hand if c.suit == led}
    if follow:
        obliged = follow
    else:
        trumps = {c for c in hand if trump is not None and c.suit == trump}
        obliged = trumps or hand
    if must_beat:
        best = trick[0][1]
        for _, c in trick[1:]:
            if _beats(c, best, led, trump):
                best = c
        beating = {c for c in obliged if _beats(c, best, led, trump)}
        if beating:
            return beating
    return obliged


def round_half_up(x: float, unit: int) -> int:
    import math

    return math.floor(x / unit + 0.5) * unit
