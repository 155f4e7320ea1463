"""Round 37: a differential oracle of the rules, written from docs/RULES.md alone.

The oracle below was written from RULES.md (and the Interpretations of
docs/rules-engine.md, where RULES.md leaves a point open) before reading the engine's
bidding, scoring, barrel or match-end code. It follows a match action by action from the
public facts only (the dealt hands, the talon, the actions taken), and

- at every decision, computes the legal actions itself (bidding: opening bid, step, cap,
  final passes, all-pass; passing; contract range, concession, throw-in; play: follow
  suit, must trump, ``must_beat``, marriage and ace-marriage declarations) and compares
  them with ``Game.legal_actions()`` and ``Game.to_act``;
- at the end of each deal, computes each seat's card points, marriages, takes, score
  changes, new scores and barrel counters (entries, wins, falls, penalties, knock-offs,
  ``barrel_mode = "one"``, 4-player dealer's talon score, rounding half up), and compares
  them with ``game.deal_results[-1]``;
- at the match's end, computes the places, winner, shortfalls and reason and compares
  them with ``game.result``.

The matches run under rulesets drawn over every option of ``Ruleset`` (presets, shipped
ruleset files and random overrides), 3 and 4 players, from random start positions (scores
and barrel counters near the barrel / target, so the barrel and match-end rules are
reached), with seeded random legal play and partly crafted deals (marriages, four aces,
three nines in the talon).
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine import (
    Bid,
    Card,
    Concede,
    Contract,
    Game,
    GameOverError,
    Give,
    IllegalActionError,
    NotYourTurnError,
    Pass,
    Play,
    Ruleset,
    ThrowIn,
    load_ruleset,
    observe,
    parse_action,
    parse_cards,
    replay,
)

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------
# Cards (RULES.md "Cards"): card i is suit i // 6 (♠ ♣ ♦ ♥), rank i % 6 (9 J Q K 10 A).
NINE, JACK, QUEEN, KING, TEN, ACE = range(6)
POINTS = (0, 2, 3, 4, 10, 11)  # 9, J, Q, K, 10, A: also the order of strength
MARRIAGE = (40, 60, 80, 100)  # ♠ ♣ ♦ ♥
ACE_MARRIAGE = 200


def suit(c: int) -> int:
    return c // 6


def rank(c: int) -> int:
    return c % 6


def pts(c: int) -> int:
    return POINTS[rank(c)]


def marriages_in(hand: set[int], r: Ruleset) -> int:
    """RULES.md §2/§5: the marriages held, the ace marriage counting 200 when
    ``ace_marriage`` and ``ace_marriage_counts_for_bid``."""
    total = sum(MARRIAGE[s] for s in range(4) if s * 6 + KING in hand and s * 6 + QUEEN in hand)
    if (
        r.ace_marriage
        and r.ace_marriage_counts_for_bid
        and all(s * 6 + ACE in hand for s in range(4))
    ):
        total += ACE_MARRIAGE
    return total


def winner_pos(cards: list[int], trump: int | None) -> int:
    """RULES.md §7: the highest trump wins; without trumps, the highest of the led suit."""
    best = 0
    for i in range(1, len(cards)):
        if beats(cards[i], cards[best], trump):
            best = i
    return best


def beats(c: int, w: int, trump: int | None) -> bool:
    """Whether ``c`` beats the card ``w`` taking the trick so far (w is of the led suit
    or a trump)."""
    if suit(c) == suit(w):
        return pts(c) > pts(w)
    return trump is not None and suit(c) == trump


def round_half_up(x2: int, unit: int) -> int:
    """``x2 / 2`` rounded half up to a multiple of ``unit`` (x2 is twice the amount, so a
    half bid stays exact)."""
    # floor(x/unit + 1/2) * unit == floor((x2 + unit) / (2 unit)) * unit
    return ((x2 + unit) // (2 * unit)) * unit


# ---------------------------------------------------------------------------------------
# The oracle: one deal followed from its public facts.


@dataclass
class DealOracle:
    r: Ruleset
    dealer: int
    hands: dict[int, set[int]]
    talon: list[int]
    scores: list[int]
    barrel: list[int]
    number: int
    n: int = 0
    order: list[int] = field(default_factory=list)
    phase: str = "bidding"
    to_act: int = -1
    standing: int | None = None
    high: int | None = None
    passed: set[int] = field(default_factory=set)
    dealt: dict[int, set[int]] = field(default_factory=dict)
    declarer: int | None = None
    bid: int | None = None
    last_hand_take: bool = False
    given_to: set[int] = field(default_factory=set)
    contract: int | None = None
    trump: int | None = None
    trick: list[tuple[int, int]] = field(default_factory=list)
    tricks_done: int = 0
    won: set[int] = field(default_factory=set)
    won_non_ace: set[int] = field(default_factory=set)
    card_pts: dict[int, int] = field(default_factory=dict)
    marr_pts: dict[int, int] = field(default_factory=dict)
    outcome: str | None = None
    played: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.n = self.r.players
        first = (self.dealer + 1) % self.n
        self.order = [(first + i) % self.n for i in range(3)]  # 4 players: the dealer sits out
        self.dealt = {s: set(h) for s, h in self.hands.items()}
        self.card_pts = dict.fromkeys(range(self.n), 0)
        self.marr_pts = dict.fromkeys(range(self.n), 0)
        if self.r.first_hand_commits:  # §2: first hand committed without speaking
            self.standing = self.r.opening_bid
            self.high = self.order[0]
            self.to_act = self.order[1]
        else:  # 1001: the player left of the dealer bids or passes like everyone else
            self.to_act = self.order[0]

    # --- legality -----------------------------------------------------------------
    def legal(self) -> set[Any]:
        r = self.r
        s = self.to_act
        if self.phase == "bidding":
            out: set[Any] = {Pass()}
            low = r.opening_bid if self.standing is None else self.standing + r.bid_step
            cap = 120 + marriages_in(self.dealt[s], r)
            a = low
            while a <= cap:
                out.add(Bid(a))
                a += r.bid_step
            return out
        if self.phase == "passing":
            out = {
                Give(Card(c), to)
                for c in self.hands[s]
                for to in self.order
                if to != s and to not in self.given_to
            }
            if self.last_hand_take:
                out.add(ThrowIn())
            return out
        if self.phase == "contract":
            assert self.bid is not None
            top = max(self.bid, 120 + marriages_in(self.hands[s], r))
            out = {Contract(a) for a in range(self.bid, top + 1, 5)}
            if self.last_hand_take:
                out.add(ThrowIn())
            elif r.concede != "off":
                out.add(Concede())
            return out
        assert self.phase == "playing"
        hand = self.hands[s]
        if not self.trick:  # a lead: any card, maybe declaring
            out = {Play(Card(c)) for c in hand}
            for c in hand:
                if rank(c) in (KING, QUEEN):
                    partner = suit(c) * 6 + (QUEEN if rank(c) == KING else KING)
                    if partner in hand and (not r.marriage_needs_trick or s in self.won):
                        out.add(Play(Card(c), declare=True))
                elif (
                    rank(c) == ACE
                    and r.ace_marriage
                    and s in self.won_non_ace
                    and all(x * 6 + ACE in hand for x in range(4))
                ):
                    out.add(Play(Card(c), declare=True))
            return out
        return {Play(Card(c)) for c in self.follow()[1]}

    def follow(self) -> tuple[list[int], list[int]]:
        """A follower's cards: those §7 obliges him to play, and among them those
        ``must_beat`` leaves him (the same list when it is off or nothing beats)."""
        hand = self.hands[self.to_act]
        led = suit(self.trick[0][1])
        obliged = [c for c in hand if suit(c) == led]
        if not obliged and self.trump is not None:
            obliged = [c for c in hand if suit(c) == self.trump]
        if not obliged:
            obliged = list(hand)
        if self.r.must_beat:
            cards = [c for _, c in self.trick]
            w = cards[winner_pos(cards, self.trump)]
            beating = [c for c in obliged if beats(c, w, self.trump)]
            if beating:
                return obliged, beating
        return obliged, obliged

    # --- transitions ------------------------------------------------------------
    def _next_bidder(self, after: int) -> int:
        i = self.order.index(after)
        for k in range(1, 4):
            s = self.order[(i + k) % 3]
            if s not in self.passed:
                return s
        raise AssertionError("nobody left to bid")

    def _take(self, declarer: int, bid: int, last_hand: bool) -> None:
        self.declarer, self.bid, self.last_hand_take = declarer, bid, last_hand
        self.hands[declarer] |= set(self.talon)
        self.phase = "passing"
        self.to_act = declarer

    def apply(self, a: Any) -> None:
        r = self.r
        s = self.to_act
        if self.phase == "bidding":
            if isinstance(a, Pass):
                self.passed.add(s)
            else:
                self.standing, self.high = a.amount, s
            left = [x for x in self.order if x not in self.passed]
            if len(left) == 0:  # all passed (only when nobody is committed)
                self._take(self.order[0], r.opening_bid, False)
            elif len(left) == 1 and self.high is not None:
                assert self.high == left[0]
                assert self.standing is not None
                self._take(self.high, self.standing, False)
            elif (
                len(left) == 1 and r.all_pass == "last_hand" and left[0] == self.order[2]
            ):  # everyone before the last hand passed
                self._take(left[0], r.opening_bid, True)
            else:
                self.to_act = self._next_bidder(s)
            return
        if self.phase == "passing":
            if isinstance(a, ThrowIn):
                self.outcome = "thrown_in"
                return
            self.hands[s].remove(int(a.card))
            self.hands[a.to].add(int(a.card))
            self.given_to.add(a.to)
            if len(self.given_to) == 2:
                self.phase = "contract"
            return
        if self.phase == "contract":
            if isinstance(a, ThrowIn):
                self.outcome = "thrown_in"
            elif isinstance(a, Concede):
                self.outcome = "conceded"
            else:
                self.contract = a.amount
                self.phase = "playing"
            return
        c = int(a.card)
        self.hands[s].remove(c)
        if a.declare:
            if rank(c) == ACE:
                self.marr_pts[s] += ACE_MARRIAGE  # changes no trump
            else:
                self.marr_pts[s] += MARRIAGE[suit(c)]
                self.trump = suit(c)
        self.trick.append((s, c))
        self.played.add(c)
        if len(self.trick) < 3:
            self.to_act = self.order[(self.order.index(s) + 1) % 3]
            return
        cards = [x for _, x in self.trick]
        w_seat, w_card = self.trick[winner_pos(cards, self.trump)]
        self.card_pts[w_seat] += sum(pts(x) for x in cards)
        self.won.add(w_seat)
        if rank(w_card) != ACE:
            self.won_non_ace.add(w_seat)
        self.trick = []
        self.tricks_done += 1
        self.to_act = w_seat
        if self.tricks_done == 8:
            assert self.contract is not None and self.declarer is not None
            take = self.card_pts[self.declarer] + self.marr_pts[self.declarer]
            self.outcome = "made" if take >= self.contract else "failed"

    # --- scoring (RULES.md §10, the barrel, 1001) -------------------------------
    def score(self) -> dict[str, Any]:
        r, n = self.r, self.n
        d = self.declarer
        assert d is not None and self.bid is not None and self.outcome is not None
        takes = [self.card_pts[s] + self.marr_pts[s] for s in range(n)]
        sitting = [r.barrel and self.barrel[s] > 0 for s in range(n)]
        raw = [0] * n  # what each seat scores before the barrel rules
        defender_gain = [0] * n  # amounts a sitter does not score
        opponents = [s for s in self.order if s != d]
        out = self.outcome
        if out in ("made", "failed"):
            assert self.contract is not None
            raw[d] = self.contract if out == "made" else -self.contract
            for s in opponents:
                defender_gain[s] = round_half_up(2 * takes[s], r.rounding)
        elif out == "conceded":
            raw[d] = -self.bid if r.concede == "penalty" else 0
            if r.concede_pays == "half":
                for s in opponents:
                    defender_gain[s] = round_half_up(self.bid, r.rounding)
        else:  # thrown in: each other player dealt in scores the bonus, he 0
            for s in opponents:
                defender_gain[s] = r.throw_in_bonus
        if n == 4:  # the dealer sits out and scores the talon, every deal
            t = set(self.talon)
            value = r.nines_talon_value if all(rank(c) == NINE for c in t) else sum(map(pts, t))
            defender_gain[self.dealer] = value
        events: list[str] = []
        new = list(self.scores)
        barrel = list(self.barrel) if r.barrel else None
        winner_from_barrel = False
        if not r.barrel:
            for s in range(n):
                new[s] += raw[s] + defender_gain[s]
        else:
            assert barrel is not None
            fell = [False] * n
            for s in range(n):
                if not sitting[s]:
                    new[s] += raw[s] + defender_gain[s]
                    continue
                # a sitter: his defender takes, halves, bonus, talon are not scored
                if s == d and out == "made":
                    assert self.contract is not None
                    if self.contract >= 120:
                        new[s] = r.target
                        barrel[s] = 0
                        winner_from_barrel = True
                        events.append(f"seat {s} wins from the barrel")
                        continue
                elif s == d and out == "failed":
                    assert self.contract is not None
                    new[s] -= self.contract
                    barrel[s] = 0
                    fell[s] = True
                    events.append(f"seat {s} fails the contract and falls off the barrel")
                    continue
                elif s == d and out == "conceded" and r.concede == "penalty":
                    new[s] -= self.bid
                    barrel[s] = 0
                    fell[s] = True
                    events.append(f"seat {s} concedes and falls off the barrel")
                    continue
                barrel[s] -= 1
                if barrel[s] == 0:
                    new[s] -= r.barrel_penalty
                    fell[s] = True
                    deals = "deal" if r.barrel_deals == 1 else "deals"
                    pen = f": -{r.barrel_penalty}" if r.barrel_penalty else " (no penalty)"
                    events.append(f"seat {s} sat {r.barrel_deals} {deals} on the barrel{pen}")
            # "reach 880": the score after the deal, of a player not sitting (one who
            # fell off in this deal, at barrel_at when barrel_penalty = 0, is off: his
            # next deal that leaves him there seats him again; rules-engine.md)
            newcomers = [
                s for s in range(n) if barrel[s] == 0 and not fell[s] and new[s] >= r.barrel_at
            ]
            newcomers = [s for s in newcomers if not (s == d and winner_from_barrel)]
            # (a win from the barrel ends the match, but the deal is scored whole: two
            # newcomers of that deal still fall off together)
            together = r.barrel_mode == "one" and len(newcomers) >= 2
            for s in newcomers:
                new[s] = r.barrel_at
                barrel[s] = r.barrel_deals
                if not together:
                    events.append(f"seat {s} gets on the barrel")
            if r.barrel_mode == "one" and newcomers:
                pen = f": -{r.barrel_penalty}" if r.barrel_penalty else " (no penalty)"
                if together:
                    for s in newcomers:
                        new[s] = r.barrel_at - r.barrel_penalty
                        barrel[s] = 0
                        events.append(
                            f"seat {s} reaches the barrel with another and falls off{pen}"
                        )
                for s in range(n):
                    if s not in newcomers and barrel[s] > 0:
                        new[s] -= r.barrel_penalty
                        barrel[s] = 0
                        events.append(f"seat {s} is knocked off the barrel{pen}")
        return {
            "declarer": d,
            "bid": self.bid,
            "contract": self.contract if out in ("made", "failed") else None,
            "outcome": out,
            "card_points": tuple(self.card_pts[s] for s in range(n)),
            "marriage_points": tuple(self.marr_pts[s] for s in range(n)),
            "takes": tuple(takes),
            "deltas": tuple(new[s] - self.scores[s] for s in range(n)),
            "scores": tuple(new),
            "barrel": tuple(barrel) if barrel is not None else None,
            "events": events,
        }


def check_state(game: Game, o: DealOracle) -> tuple[str, Any, Any] | None:
    """The engine's state against the oracle's between actions: the standing bid, the
    trump, each seat's card points and marriages (a marriage scores "at once", §8), each
    hand; and what each seat's view shows of the talon (§3, ``talon_visible``) and of the
    passed cards (§4: only giver and receiver)."""
    pairs: list[tuple[str, Any, Any]] = []
    if o.phase == "bidding":
        pairs.append(("standing bid", game.bid, o.standing))
        pairs.append(("high bidder", game.high_bidder, o.high))
        return next(((w, g, m) for w, g, m in pairs if g != m), None)
    pairs.append(("declarer", game.declarer, o.declarer))
    pairs.append(("trump", None if game.trump is None else int(game.trump), o.trump))
    for s in range(o.n):
        pairs.append((f"hand of {s}", {int(c) for c in game.hand(s)}, o.hands[s]))
        pairs.append((f"card points of {s}", game.card_points(s), o.card_pts[s]))
        pairs.append((f"marriage points of {s}", game.marriage_points(s), o.marr_pts[s]))
    if o.phase in ("contract", "playing") and not o.trick and o.tricks_done in (0, 7):
        for s in range(o.n):
            view = observe(game, s)
            sees = o.r.talon_visible or s == o.declarer
            shown = None if view.talon is None else {int(c) for c in view.talon}
            pairs.append((f"talon seen by {s}", shown, set(o.talon) if sees else None))
            for to, card in view.gives:
                knows = s in (o.declarer, to)
                pairs.append((f"give to {to} seen by {s}", card is not None, knows))
            pairs.append((f"own hand of {s}", {int(c) for c in view.hand}, o.hands[s]))
            # a view never holds a card the seat was not allowed to see
            allowed = set(o.dealt[s]) | set(o.hands[s]) | o.played
            if sees:
                allowed |= set(o.talon)
            seen = {int(c) for c in view.hand} | (shown or set())
            seen |= {int(c) for _, c in view.gives if c is not None}
            seen |= {int(c) for _, c in view.trick}
            seen |= {int(c) for t in view.tricks for _, c in t.cards}
            pairs.append((f"cards seat {s} may not see", seen - allowed, set()))
    return next(((w, g, m) for w, g, m in pairs if g != m), None)


def scenarios(o: DealOracle, want: dict[str, Any]) -> list[str]:
    """Names of the rare situations a deal reached (for the coverage check)."""
    r, d, out = o.r, o.declarer, o.outcome
    found = []
    if r.barrel:
        sitting = [s for s in range(o.n) if o.barrel[s] > 0]
        new_on = [s for s in range(o.n) if o.barrel[s] == 0 and want["barrel"][s] > 0]
        if d in sitting:
            found.append(f"sitter declarer {out}")
            if o.last_hand_take:
                found.append("sitter takes the talon after all pass")
            if out == "made" and o.contract is not None and o.contract < 120:
                found.append("sitter makes below 120")
        if o.n == 4 and o.dealer in sitting:
            found.append("sitter deals (4 players)")
        if any(s != d for s in sitting) and out in ("made", "failed"):
            found.append("sitter defends")
        if out == "made" and d in sitting and new_on:
            found.append("win from the barrel as a newcomer arrives")
        if any(o.scores[s] == r.barrel_at and o.barrel[s] == 0 for s in range(o.n)):
            found.append("starts at barrel_at off the barrel")
        if len(sitting) >= 2:
            found.append("two sitters")
        events = " | ".join(want["events"])
        if "wins from the barrel" in events and " sat " in events:
            found.append("win as another sitter's time runs out")
        if "with another" in events and "knocked off" in events:
            found.append("two newcomers and a sitter all fall")
        if any(
            o.scores[s] == r.barrel_at and o.barrel[s] == 0 < want["barrel"][s] for s in range(o.n)
        ):
            found.append("seated again from barrel_at")
    top = max(want["scores"])
    if top >= r.target and list(want["scores"]).count(top) > 1:
        found.append("tie at the top")
    if sum(1 for x in want["scores"] if x >= r.target) > 1:
        found.append("several reach the target")
    half = out == "conceded" and r.concede_pays == "half"
    if half and o.bid is not None and o.bid % (2 * r.rounding):
        found.append("half bid rounded")
    return found


def oracle_result(r: Ruleset, scores: list[int], deals: int) -> dict[str, Any] | None:
    """RULES.md "the end": the match ends when a player reaches the target, or at the
    deal cap; places by score (1, 1, 3), winner the single best, shortfalls to the target
    (0 for the winner). ``None`` while the match goes on."""
    if any(x >= r.target for x in scores):
        reason = "target"
    elif r.max_deals and deals >= r.max_deals:
        reason = "max_deals"
    else:
        return None
    n = len(scores)
    places = tuple(1 + sum(1 for y in scores if y > x) for x in scores)
    best = [s for s in range(n) if places[s] == 1]
    winner = best[0] if len(best) == 1 else None
    shortfalls = tuple(0 if s == winner else max(0, r.target - scores[s]) for s in range(n))
    return {
        "scores": tuple(scores),
        "places": places,
        "winner": winner,
        "shortfalls": shortfalls,
        "reason": reason,
        "deals": deals,
    }


# ---------------------------------------------------------------------------------------
# Rulesets drawn over every option.

BASES = ("classic", "1001", "1001-4p", "house-penalty", "classic-capped", "tournament-1001")


def base_ruleset(name: str, players: int | None = None) -> Ruleset:
    if name in ("classic", "1001", "1001-4p"):
        return load_ruleset(name, players=players)
    return load_ruleset(str(ROOT / "rulesets" / f"{name}.toml"), players=players)


def draw_ruleset(rng: random.Random) -> Ruleset:
    """A valid ruleset: a preset or shipped file, then each option redrawn at random
    (about half of them each time), kept within the checks of docs/rules-engine.md."""
    base = rng.choice(BASES)
    r = base_ruleset(base, players=rng.choice((3, 4)) if "1001" in base else None)
    d = r.to_dict()

    def maybe(key: str, value: Any) -> None:
        if rng.random() < 0.5:
            d[key] = value

    maybe("players", rng.choice((3, 4)))
    maybe("bid_step", rng.choice((5, 5, 10, 15, 20)))
    step = d["bid_step"]
    maybe("opening_bid", rng.choice([x for x in range(step, 121, step)]))
    if d["opening_bid"] % step:
        d["opening_bid"] = step * max(1, min(120 // step, d["opening_bid"] // step))
    for key in (
        "first_hand_commits",
        "ace_marriage_counts_for_bid",
        "talon_visible",
        "must_beat",
        "marriage_needs_trick",
        "ace_marriage",
        "barrel",
        "ask_forced",
    ):
        maybe(key, rng.random() < 0.5)
    maybe("concede", rng.choice(("free", "penalty", "off")))
    maybe("concede_pays", rng.choice(("half", "none")))
    maybe("rounding", rng.choice((1, 1, 2, 3, 5, 5, 10)))
    maybe("barrel_mode", rng.choice(("many", "one")))
    maybe("all_pass", rng.choice(("first_hand", "last_hand")))
    maybe("barrel_deals", rng.choice((1, 2, 3, 3, 4)))
    maybe("barrel_penalty", rng.choice((0, 50, 120, 120, 200)))
    maybe("throw_in_bonus", rng.choice((0, 25, 50, 60)))
    maybe("nines_talon_value", rng.choice((0, 50, 100, 150)))
    maybe("target", rng.choice((1000, 1001, 600, 1200)))
    maybe("barrel_at", rng.choice((880, 500, 400)))
    if d["barrel"] and d["barrel_at"] >= d["target"]:
        d["barrel_at"] = d["target"] - rng.choice((1, 100, 120))
    d["max_deals"] = rng.choice((3, 5, 8, 12))
    return Ruleset(**d)


def draw_start(rng: random.Random, r: Ruleset) -> tuple[list[int], list[int]]:
    """Start scores (and barrel counters) near the barrel or the target."""
    n = r.players
    scores: list[int] = []
    barrel: list[int] = []
    for _ in range(n):
        if r.barrel:
            if rng.random() < 0.35 and (r.barrel_mode == "many" or not any(barrel)):
                scores.append(r.barrel_at)
                barrel.append(rng.randint(1, r.barrel_deals))
                continue
            top = r.barrel_at - 1
        else:
            top = r.target - 1
        scores.append(rng.choice((top - rng.randrange(0, 200), rng.randrange(-200, top + 1), 0)))
        barrel.append(0)
    if not r.barrel and rng.random() < 0.3:  # two level near the target: ties at the top
        a, b = rng.sample(range(n), 2)
        scores[a] = scores[b] = r.target - rng.choice((5, 10, 25, 50))
    return scores, barrel


def craft_deal(rng: random.Random, r: Ruleset, dealer: int) -> tuple[list[list[int]], list[int]]:
    """A deal biased toward marriages, four aces and a talon of nines."""
    deck = list(range(24))
    rng.shuffle(deck)
    n = r.players
    active = [(dealer + 1 + i) % n for i in range(3)]
    want: dict[int, list[int]] = {}
    talon: list[int] = []
    kind = rng.random()
    lucky = rng.choice(active)
    if kind < 0.3:
        want[lucky] = [s * 6 + ACE for s in range(4)]
    elif kind < 0.7:
        for s in rng.sample(range(4), rng.randint(1, 3)):
            want.setdefault(rng.choice(active), []).extend((s * 6 + KING, s * 6 + QUEEN))
    else:
        talon = [s * 6 + NINE for s in rng.sample(range(4), 3)]
    for seat, cards in list(want.items()):
        want[seat] = cards[:7]
    used = set(talon) | {c for cards in want.values() for c in cards}
    rest = [c for c in deck if c not in used]
    hands: list[list[int]] = [[] for _ in range(n)]
    for seat in active:
        hands[seat] = list(want.get(seat, []))
    for seat in active:
        while len(hands[seat]) < 7:
            hands[seat].append(rest.pop())
    talon = talon or [rest.pop() for _ in range(3)]
    while len(talon) < 3:
        talon.append(rest.pop())
    assert not rest
    return hands, talon


# ---------------------------------------------------------------------------------------
# The driver.


def choose(rng: random.Random, legal: tuple[Any, ...], o: DealOracle) -> Any:
    """A random legal action, weighted so that deals reach every outcome."""
    if o.phase == "bidding":
        bids = [a for a in legal if isinstance(a, Bid)]
        if not bids or rng.random() < 0.5:
            return Pass()
        return bids[0] if rng.random() < 0.6 else rng.choice(bids)
    if o.phase == "passing":
        if any(isinstance(a, ThrowIn) for a in legal) and rng.random() < 0.15:
            return ThrowIn()
        return rng.choice([a for a in legal if isinstance(a, Give)])
    if o.phase == "contract":
        special = [a for a in legal if isinstance(a, ThrowIn | Concede)]
        if special and rng.random() < 0.25:
            return rng.choice(special)
        contracts = [a for a in legal if isinstance(a, Contract)]
        sitter = o.r.barrel and o.barrel[o.to_act] > 0
        at120 = [a for a in contracts if a.amount == 120]
        if sitter and at120 and rng.random() < 0.7:
            return at120[0]
        return contracts[0] if rng.random() < 0.6 else rng.choice(contracts)
    declares = [a for a in legal if isinstance(a, Play) and a.declare]
    if declares and rng.random() < 0.7:
        return rng.choice(declares)
    return rng.choice(legal)


#: Actions of every kind, legal or not somewhere: probes for refusals (RULES.md "Bad input").
UNIVERSE: list[Any] = (
    [Pass(), Concede(), ThrowIn()]
    + [Bid(a) for a in range(0, 421, 5)] + [Bid(a) for a in (1, 42, 103, 121, 999)]
    + [Contract(a) for a in range(0, 421, 5)] + [Contract(a) for a in (1, 42, 103, 121)]
    + [Give(Card(c), to) for c in range(24) for to in range(4)]
    + [Play(Card(c), declare=d) for c in range(24) for d in (False, True)]
)  # fmt: skip


@dataclass
class Disagreement:
    where: str
    ruleset: dict[str, Any]
    seed: int
    deal: int
    engine: Any
    oracle: Any

    def __str__(self) -> str:
        return (
            f"{self.where} (seed {self.seed}, deal {self.deal}): engine {self.engine!r}"
            f" oracle {self.oracle!r}\n  {self.ruleset}"
        )


DEAL_FIELDS = ("declarer", "bid", "contract", "outcome", "card_points", "marriage_points",
               "takes", "deltas", "scores", "barrel", "events")  # fmt: skip


def play_match(seed: int, stats: dict[str, set[Any]]) -> list[Disagreement]:
    """One match under a drawn ruleset, checked against the oracle at every decision and
    every deal; returns the disagreements (the match stops at the first one)."""
    rng = random.Random(seed)
    r = draw_ruleset(rng)
    scores, barrel = draw_start(rng, r)
    names = [f"p{i}" for i in range(r.players)]
    dealer = rng.randrange(r.players)
    crafted: dict[int, Any] = {}
    for k in range(r.max_deals):
        if rng.random() < 0.5:
            hands, talon = craft_deal(rng, r, (dealer + k) % r.players)
            crafted[k] = ([[Card(c) for c in h] for h in hands], [Card(c) for c in talon])
    game = Game.new(
        r, seed, names, deals=crafted, scores=scores, barrel=barrel if r.barrel else None,
        dealer=dealer,
    )  # fmt: skip
    for key, value in r.to_dict().items():
        stats.setdefault(key, set()).add(value)
    out: list[Disagreement] = []

    def bad(where: str, engine: Any, oracle: Any) -> list[Disagreement]:
        out.append(Disagreement(where, r.to_dict(), seed, game.deal_number, engine, oracle))
        return out

    cur_scores = list(scores)
    cur_barrel = list(barrel) if r.barrel else [0] * r.players
    while True:
        o = DealOracle(
            r, game.dealer, {s: {int(c) for c in game.dealt_hands[s]} for s in range(r.players)},
            [int(c) for c in game.talon], list(cur_scores), list(cur_barrel), game.deal_number,
        )  # fmt: skip
        number = game.deal_number
        # §1: the deal passes clockwise; 7 cards to each seat dealt in, 3 to the talon
        if o.dealer != (dealer + number) % r.players:
            return bad("dealer", o.dealer, (dealer + number) % r.players)
        sizes = [len(o.hands[s]) for s in range(r.players)]
        want_sizes = [0 if s not in o.order else 7 for s in range(r.players)]
        cards = set(o.talon).union(*o.hands.values())
        if sizes != want_sizes or len(o.talon) != 3 or len(cards) != 24:
            return bad("deal", (sizes, len(o.talon), len(cards)), want_sizes)
        while o.outcome is None:
            if game.to_act != o.to_act:
                return bad(f"to_act in {o.phase}", game.to_act, o.to_act)
            if str(game.phase) != o.phase:
                return bad("phase", str(game.phase), o.phase)
            state = check_state(game, o)
            if state is not None:
                return bad(state[0], state[1], state[2])
            legal = game.legal_actions()
            mine = o.legal()
            if rng.random() < 0.1 and observe(game, o.to_act).legal_actions != legal:
                return bad("a view's legal actions", observe(game, o.to_act).legal_actions, legal)
            if set(legal) != mine:
                return bad(
                    f"legal actions in {o.phase} for seat {o.to_act}",
                    sorted(map(str, set(legal) - mine)),
                    sorted(map(str, mine - set(legal))),
                )
            for probe in rng.sample(UNIVERSE, 1 if rng.random() < 0.5 else 0):
                if probe in mine:
                    continue
                try:
                    game.apply(probe, seat=o.to_act)
                except IllegalActionError as e:
                    # "refused with an error that names the action, the rule broken and
                    # the legal actions"
                    if e.action != probe or not e.rule or set(e.legal) != mine:
                        return bad("refusal names", (e.action, e.rule, e.legal), probe)
                else:
                    return bad(
                        f"an action outside the rules accepted in {o.phase}", str(probe), None
                    )
                if game.legal_actions() != legal or game.to_act != o.to_act:
                    return bad(f"state changed by a refused {probe}", None, None)
            if rng.random() < 0.1:  # a legal action by a seat not to act: refused
                other = rng.choice([x for x in range(r.players) if x != o.to_act])
                try:
                    game.apply(legal[0], seat=other)
                except NotYourTurnError:
                    pass
                else:
                    return bad("an action out of turn accepted", other, o.to_act)
                if game.legal_actions() != legal or game.to_act != o.to_act:
                    return bad("state changed by an action out of turn", None, None)
            a = choose(rng, legal, o)
            kind = type(a).__name__
            if isinstance(a, Play) and a.declare:
                kind += " declare ace" if rank(int(a.card)) == ACE else " declare marriage"
                if rank(int(a.card)) == ACE and o.trump is not None:
                    kind += " under a trump"
            elif isinstance(a, Play) and o.trick:
                obliged, left = o.follow()
                if len(left) < len(obliged):
                    trumping = o.trump is not None and suit(left[0]) == o.trump
                    led = suit(o.trick[0][1])
                    kind += (
                        " must_beat: overtrump"
                        if trumping and led != o.trump
                        else " must_beat: beat"
                    )
            stats.setdefault("action", set()).add(kind)
            game.apply(a, seat=o.to_act)
            o.apply(a)
        want = o.score()
        stats.setdefault("deals", set()).add((seed, number))
        auction = "last hand takes" if o.last_hand_take else "bid"
        if o.high is None and not o.last_hand_take:
            auction = "all pass, first hand plays"
        elif r.first_hand_commits and o.declarer == o.order[0] and o.bid == r.opening_bid:
            auction = "others pass, first hand plays"
        stats.setdefault("auction", set()).add(auction)
        if r.players == 4:
            stats.setdefault("4p talon", set()).add(
                "nines" if all(rank(c) == NINE for c in o.talon) else "points"
            )
        got = game.deal_results[-1]
        if got.number != number:
            return bad("deal number", got.number, number)
        for f in DEAL_FIELDS:
            g = getattr(got, f)
            w = want[f]
            if f == "events":
                g, w = sorted(g), sorted(w)
            if g != w:
                return bad(f"deal result {f}", g, w)
        stats.setdefault("outcome", set()).add(want["outcome"])
        for name in scenarios(o, want):
            stats.setdefault("scenario", set()).add(name)
        for text in want["events"]:
            stats.setdefault("event", set()).add(text.split(" ", 2)[2].split(":")[0])
        cur_scores = list(want["scores"])
        if r.barrel:
            cur_barrel = list(want["barrel"])
        res = oracle_result(r, cur_scores, len(game.deal_results))
        if res is None:
            if game.is_over:
                return bad("match over", True, False)
            continue
        if not game.is_over:
            return bad("match over", False, True)
        gr = game.result
        for f, w in res.items():
            if getattr(gr, f) != w:
                return bad(f"result {f}", getattr(gr, f), w)
        stats.setdefault("reason", set()).add(res["reason"])
        try:
            game.apply(Pass(), seat=0)
        except GameOverError:
            pass
        else:
            return bad("an action after the match's end accepted", None, None)
        # RULES.md invariants: replaying the record (crafted deals and start position
        # included) reproduces every deal's scores and the result.
        again = replay(json.loads(json.dumps(game.record())))
        if again.deal_results != game.deal_results or again.result != game.result:
            return bad("replay of the record", again.result, game.result)
        return out


def sweep(seeds: range) -> tuple[list[Disagreement], dict[str, set[Any]]]:
    stats: dict[str, set[Any]] = {}
    found: list[Disagreement] = []
    for seed in seeds:
        found += play_match(seed, stats)
    return found, stats


#: What the default sweep must reach, so that it cannot pass by missing the rules it
#: checks: every value of every choice, both of every switch, and the rare situations.
MUST_COVER: dict[str, set[Any]] = {
    "players": {3, 4},
    "concede": {"free", "penalty", "off"},
    "concede_pays": {"half", "none"},
    "barrel_mode": {"many", "one"},
    "all_pass": {"first_hand", "last_hand"},
    "barrel_penalty": {0, 120},
    "rounding": {1, 3, 5, 10},
    "bid_step": {5, 10, 15, 20},
    "outcome": {"made", "failed", "conceded", "thrown_in"},
    "reason": {"target", "max_deals"},
    "4p talon": {"nines", "points"},
    "auction": {"bid", "last hand takes", "all pass, first hand plays",
                "others pass, first hand plays"},
    "action": {"Bid", "Pass", "Give", "Contract", "Concede", "ThrowIn", "Play",
               "Play declare ace", "Play declare marriage", "Play must_beat: beat",
               "Play declare ace under a trump"},
    "event": {"gets on the barrel", "wins from the barrel", "is knocked off the barrel",
              "fails the contract and falls off the barrel",
              "concedes and falls off the barrel", "reaches the barrel with another and falls off",
              "sat 3 deals on the barrel", "sat 1 deal on the barrel (no penalty)"},
    "scenario": {"half bid rounded", "several reach the target", "tie at the top",
                 "sitter deals (4 players)", "sitter declarer conceded",
                 "sitter declarer failed", "sitter declarer made", "sitter declarer thrown_in",
                 "sitter defends", "sitter makes below 120",
                 "sitter takes the talon after all pass", "starts at barrel_at off the barrel",
                 "two sitters", "win from the barrel as a newcomer arrives",
                 "seated again from barrel_at", "win as another sitter's time runs out"},
}  # fmt: skip
for _key in (
    "first_hand_commits",
    "ace_marriage_counts_for_bid",
    "talon_visible",
    "must_beat",
    "marriage_needs_trick",
    "ace_marriage",
    "barrel",
    "ask_forced",
):
    MUST_COVER[_key] = {False, True}  # fmt: skip
#: Rarer still: a follower void in the led suit who must overtrump a trump already played;
#: two newcomers under ``barrel_mode = "one"`` falling with the sitter already there.
SLOW_COVER = {
    "action": {"Play must_beat: overtrump"},
    "scenario": {"two newcomers and a sitter all fall"},
}


def uncovered(stats: dict[str, set[Any]], want: dict[str, set[Any]]) -> dict[str, set[Any]]:
    return {k: v - stats.get(k, set()) for k, v in want.items() if v - stats.get(k, set())}


def test_engine_agrees_with_the_oracle_under_drawn_rulesets() -> None:
    """About 4 000 deals of 800 matches under rulesets drawn over every option: the
    engine's legal actions, state, deal results and match results equal the oracle's.
    (No disagreement was found in round 37: this pins the behaviour checked.)"""
    found, stats = sweep(range(800))
    assert not found, "\n".join(map(str, found[:5]))
    assert len(stats["deals"]) > 4000
    assert not uncovered(stats, MUST_COVER)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # past the default 300 s on a busy machine
def test_engine_agrees_with_the_oracle_large_sweep() -> None:
    """The same as the default sweep over 15 000 further matches (some 75 000 deals)."""
    found, stats = sweep(range(100_000, 115_000))
    assert not found, "\n".join(map(str, found[:5]))
    assert len(stats["deals"]) > 70_000
    assert not uncovered(stats, MUST_COVER)
    assert not uncovered(stats, SLOW_COVER)


def test_the_oracle_catches_a_wrong_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle is not vacuous: taught a wrong rule (halves and takes rounded half
    down; trumps not beating other suits; the four aces counted for bids whatever
    ``ace_marriage_counts_for_bid`` says), it disagrees with the engine at once."""
    wrong_rounding = lambda x2, unit: ((x2 + unit - 1) // (2 * unit)) * unit  # noqa: E731
    monkeypatch.setattr(sys.modules[__name__], "round_half_up", wrong_rounding)
    found, _ = sweep(range(60))
    assert any(d.where == "deal result deltas" for d in found)
    monkeypatch.undo()

    monkeypatch.setattr(
        sys.modules[__name__], "beats", lambda c, w, trump: suit(c) == suit(w) and pts(c) > pts(w)
    )
    found, _ = sweep(range(60))
    assert any(d.where.startswith(("to_act in playing", "legal actions in playing")) for d in found)
    monkeypatch.undo()

    def always(hand: set[int], r: Ruleset) -> int:
        aces = r.ace_marriage and all(s * 6 + ACE in hand for s in range(4))
        extra = ACE_MARRIAGE if aces and not r.ace_marriage_counts_for_bid else 0
        return right(hand, r) + extra

    right = marriages_in
    monkeypatch.setattr(sys.modules[__name__], "marriages_in", always)
    found, _ = sweep(range(100))
    assert any(d.where.startswith("legal actions in bidding") for d in found)


def test_win_from_the_barrel_with_two_newcomers_under_barrel_mode_one() -> None:
    """A disagreement of round 37, decided for the engine: the oracle's first draft
    exempted the deal in which a sitter wins from the barrel from the ``barrel_mode =
    "one"`` rule ("two or more reaching it in the same deal all fall off at once, −120
    each from 880", RULES.md). RULES.md names no such exemption, and the deal that ends
    the match is scored whole (docs/rules-engine.md): the two newcomers fall off, −120
    each; the winner, whose win ends the match, is not knocked off."""
    rules = dataclasses.replace(
        load_ruleset("classic"), barrel_mode="one", marriage_needs_trick=False
    )
    hands = [
        parse_cards("K♥ Q♥ K♦ Q♦ 9♠ 9♣ J♠"),
        parse_cards("A♠ 10♠ K♠ Q♠ A♣ 10♣ 9♦"),
        parse_cards("K♣ Q♣ J♣ A♦ 10♦ J♦ 9♥"),
    ]
    game = Game.new(
        rules, 1, ["a", "b", "c"], deals={0: (hands, parse_cards("A♥ 10♥ J♥"))},
        scores=(880, 879, 879), barrel=(3, 0, 0), dealer=2,
    )  # fmt: skip
    o = DealOracle(
        rules, 2, {s: {int(c) for c in hands[s]} for s in range(3)},
        [int(c) for c in parse_cards("A♥ 10♥ J♥")], [880, 879, 879], [3, 0, 0], 0,
    )  # fmt: skip
    script = (
        "1 pass, 2 pass, 0 give 9♠ to 1, 0 give 9♣ to 2, 0 contract 120, 0 play K♥ declare,"
        " 1 play A♠, 2 play 9♥, 0 play K♦ declare, 1 play 9♦, 2 play A♦, 2 play 10♦,"
        " 0 play Q♦, 1 play Q♠, 2 play 9♣, 0 play J♠, 1 play A♣, 1 play 9♠, 2 play J♦,"
        " 0 play J♥, 2 play J♣, 0 play Q♥, 1 play 10♣, 1 play K♠, 2 play Q♣, 0 play 10♥,"
        " 1 play 10♠, 2 play K♣, 0 play A♥"
    )
    for step in script.split(", "):
        seat, text = step.split(" ", 1)
        assert set(game.legal_actions()) == o.legal()
        game.apply(parse_action(text), seat=int(seat))
        o.apply(parse_action(text))
    got = game.deal_results[-1]
    assert got.takes == (195, 70, 35)  # seat 0: 180 in marriages; 1 and 2 reach 880
    assert got.scores == (1000, 760, 760)
    assert got.barrel == (0, 0, 0)
    assert got.events == (
        "seat 0 wins from the barrel",
        "seat 1 reaches the barrel with another and falls off: -120",
        "seat 2 reaches the barrel with another and falls off: -120",
    )
    want = o.score()
    assert (want["scores"], want["barrel"], sorted(want["events"])) == (
        got.scores, got.barrel, sorted(got.events),
    )  # fmt: skip
    assert game.result is not None
    assert (game.result.winner, game.result.places, game.result.shortfalls) == (
        0, (1, 2, 2), (0, 240, 240),
    )  # fmt: skip
