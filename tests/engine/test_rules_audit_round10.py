"""Rules audit, round 10: docs/RULES.md read sentence by sentence.

Every normative sentence of RULES.md was looked up in the tests; the table in this round's
report maps each section to the tests that pin it. This file holds what that walk found
unpinned or pinned only for the three presets:

1. An oracle written from RULES.md's sentences alone (``Oracle`` below: its methods quote
   the sentence each one implements) follows random matches under random rulesets (every
   option drawn, 3 and 4 players) from random starting positions near the barrel and the
   target, and checks at every step the engine's legal actions (bids, gives, contracts,
   concessions, throw-ins, plays and declarations), and at every deal's end its takes,
   deltas, barrel counters, the end of the match, the places and the shortfalls. The
   property tests (``test_properties.py``) check the trick rules over the presets only and
   the scores only for adding up; here every option combination is scored from the text.
2. Single sentences that had no test of their own, each quoting its sentence.

Seats are written as in rounds 8 and 9: 3 players with dealer 2 (first hand 0); 4 players
with dealer 3, who sits the deal out (first hand 0). Card points: A 11, 10 10, K 4, Q 3, J 2.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from engine import (
    Game,
    IllegalActionError,
    Phase,
    Ruleset,
    load_ruleset,
    observe,
    parse_cards,
    replay,
    trick_winner,
)
from engine import parse_action as action
from engine.actions import Concede, Play, ThrowIn
from engine.errors import (
    BidError,
    CardNotHeldError,
    ConcedeError,
    ContractError,
    GiveError,
    MarriageError,
    NotYourTurnError,
    PlayError,
    ThrowInError,
    WrongPhaseError,
)
from tests.engine.conftest import oracle_legal_cards, oracle_winner
from tests.engine.test_rules_audit_round8 import act, check_record, deal, last, new, rs

# --- the oracle: RULES.md's sentences, in their own words ---------------------------------------

# "Points: A 11, 10 10, K 4, Q 3, J 2, 9 0 — 120 in the deck."
POINTS = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
# "Marriage (K+Q of one suit): ♥ 100, ♦ 80, ♣ 60, ♠ 40. Ace marriage (all four aces): 200."
MARRIAGE = {"♥": 100, "♦": 80, "♣": 60, "♠": 40}
ACE_MARRIAGE = 200


def rank(card: Any) -> str:
    return str(card)[:-1]


def suit(card: Any) -> str:
    return str(card)[-1]


def points(cards: Any) -> int:
    return sum(POINTS[rank(c)] for c in cards)


def marriages_in(cards: Any, r: Ruleset) -> int:
    """ "120 + the marriages in his own hand (an ace marriage counts as 200; option
    ace_marriage_counts_for_bid, default on)"."""
    held = {str(c) for c in cards}
    total = sum(v for s, v in MARRIAGE.items() if f"K{s}" in held and f"Q{s}" in held)
    if r.ace_marriage and r.ace_marriage_counts_for_bid and all(f"A{s}" in held for s in MARRIAGE):
        total += ACE_MARRIAGE
    return total


def half_up(num: int, den: int, unit: int) -> int:
    """num/den "rounded half up to the ruleset's rounding unit" (1001: "2.5 and above up")."""
    q, rem = divmod(2 * num, 2 * den * unit)  # num/den = unit * (q + rem / (2 den unit))
    return (q + (1 if 2 * rem >= 2 * den * unit else 0)) * unit


class Oracle:
    """One match followed from RULES.md's text (only what a seat at the table can see is
    used: the dealt hands, the talon and the actions)."""

    def __init__(self, game: Game) -> None:
        self.r = game.ruleset
        self.n = self.r.players
        self.scores = list(game.scores)
        self.barrel = list(game.barrel) if self.r.barrel else [0] * self.n
        self.over = False

    # "The first dealer is drawn ...; the deal then passes clockwise each deal; the player
    # left of the dealer is 'first hand'." "4 players: the dealer is dealt no cards and sits
    # out the deal."
    def start_deal(self, game: Game) -> None:
        n = self.n
        self.dealer = game.dealer
        self.active = [(self.dealer + k) % n for k in range(1, 4)]
        assert tuple(self.active) == tuple(game.active_seats)
        self.hands = {s: {str(c) for c in game.hand(s)} for s in self.active}
        assert all(len(h) == 7 for h in self.hands.values()), "7 cards each"
        if n == 4:
            assert game.hand(self.dealer) == (), "the 4-player dealer is dealt no cards"
        self.talon = [str(c) for c in game.talon]
        assert len(self.talon) == 3, "3 to the talon"
        # Invariants: "Hands and the talon partition the 24 cards"
        dealt = [c for h in self.hands.values() for c in h] + self.talon
        assert len(set(dealt)) == len(dealt) == 24
        self.caps = {s: 120 + marriages_in(self.hands[s], self.r) for s in self.active}
        self.passed: set[int] = set()
        # "First hand is committed to 100 without speaking." (first_hand_commits)
        self.standing = self.r.opening_bid if self.r.first_hand_commits else 0
        self.high = self.active[0] if self.r.first_hand_commits else None
        self.turn = self.active[1] if self.r.first_hand_commits else self.active[0]
        self.phase = "bidding"
        self.declarer: int | None = None
        self.bid = 0
        self.last_hand_take = False
        self.given: set[int] = set()
        self.contract: int | None = None
        self.trump: str | None = None
        self.trick: list[tuple[int, str]] = []
        self.card_points = [0] * n
        self.marriage_points = [0] * n
        self.won: set[int] = set()
        self.won_nonace: set[int] = set()
        self.tricks = 0

    def next_seat(self, seat: int) -> int:
        a = self.active
        return a[(a.index(seat) + 1) % 3]

    # --- the legal actions, sentence by sentence
    def legal(self) -> set[str]:
        r = self.r
        if self.phase == "bidding":
            # "each player either raises (a multiple of 5, at least 5 above the standing
            # bid) or passes"; "Bids are multiples of the step"; "Nobody may bid above 120 +
            # the marriages in his own hand"; 1001: "the player left of the dealer bids or
            # passes like everyone else", from the opening bid.
            lo = self.standing + r.bid_step if self.standing else r.opening_bid
            bids = {f"bid {b}" for b in range(lo, self.caps[self.turn] + 1, r.bid_step)}
            return bids | {"pass"}
        if self.phase == "passing":
            # "The declarer gives one card, face down, to each opponent (one each, any of his
            # 10 cards)." 1001: the last hand "may play, raise the contract, or throw in".
            d = self.declarer
            assert d is not None
            out = {
                f"give {c} to {o}"
                for o in self.active
                if o != d and o not in self.given
                for c in self.hands[d]
            }
            return out | ({"throw-in"} if self.last_hand_take else set())
        if self.phase == "contract":
            # "a multiple of 5, at least the winning bid, at most the greater of the winning
            # bid and 120 + the marriages in his 8 cards now"; "Instead of naming a contract,
            # the declarer may concede at the winning bid (option concede: ... off)"; the
            # all-pass take: "may play, raise the contract, or throw in" ("a different action").
            d = self.declarer
            assert d is not None
            top = max(self.bid, 120 + marriages_in(self.hands[d], r))
            out = {f"contract {x}" for x in range(self.bid, top + 1, 5)}
            if self.last_hand_take:
                out.add("throw-in")
            elif r.concede != "off":
                out.add("concede")
            return out
        assert self.phase == "playing"
        seat = self.turn
        hand = self.hands[seat]
        if self.trick:
            # "Each player must follow the led suit; without it he must play a trump if a
            # trump is set and he has one; otherwise any card." (and must_beat: conftest's
            # independent oracle)
            cards = oracle_legal_cards(
                parse_cards(" ".join(hand)),
                [(s, parse_cards(c)[0]) for s, c in self.trick],
                None if self.trump is None else parse_cards("A" + self.trump)[0].suit,
                r.must_beat,
            )
            return {f"play {c}" for c in cards}
        out = {f"play {c}" for c in hand}
        # "A player who leads a K or Q while holding its partner may declare the marriage
        # with that lead (his choice)"; "only by a player who has already won a trick in
        # this deal (option marriage_needs_trick)"; the ace marriage: "A player holding all
        # four aces may declare it by leading an ace, once he has won a trick with a card
        # other than an ace."
        if not r.marriage_needs_trick or seat in self.won:
            for s in MARRIAGE:
                if f"K{s}" in hand and f"Q{s}" in hand:
                    out |= {f"play K{s} declare", f"play Q{s} declare"}
        if r.ace_marriage and seat in self.won_nonace and all(f"A{s}" in hand for s in MARRIAGE):
            out |= {f"play A{s} declare" for s in MARRIAGE}
        return out

    def illegal(self, game: Game) -> list[tuple[int, str, type[IllegalActionError]]]:
        """ "Bad input is part of the rules": "wrong phase, wrong player, a card not in hand,
        a bid off the step or over the cap, a second card passed to the same opponent, an
        illegal card in a trick, a marriage without its partner or before a won trick" (and
        the options' refusals: a concession under concede = off, a throw-in by anyone but the
        last hand after an all-pass), each with the error class docs/rules-engine.md names."""
        r, seat = self.r, self.to_act()
        others = [s for s in self.active if s != seat]
        out: list[tuple[int, str, type[IllegalActionError]]] = []
        some_legal = sorted(self.legal())[0]
        out += [(o, some_legal, NotYourTurnError) for o in others]  # "wrong player"
        hand = self.hands[seat]
        unheld = sorted({str(c) for c in parse_cards("9♠ J♠ Q♠ K♠ 10♠ A♠ 9♥ J♥ Q♥ K♥ 10♥ A♥ "
                                                     "9♦ J♦ Q♦ K♦ 10♦ A♦ 9♣ J♣ Q♣ K♣ 10♣ A♣")}
                        - hand)  # fmt: skip
        if self.phase == "bidding":
            lo = self.standing + r.bid_step if self.standing else r.opening_bid
            out += [(seat, f"bid {lo + 1}", BidError), (seat, f"bid {lo - 5}", BidError)]
            top = self.caps[seat] // r.bid_step * r.bid_step + r.bid_step
            out += [(seat, f"bid {max(top, lo)}", BidError)]  # over the cap
            out += [(seat, f"contract {lo}", WrongPhaseError), (seat, "concede", WrongPhaseError)]
            out += [(seat, f"play {min(hand)}", WrongPhaseError)]
        elif self.phase == "passing":
            out += [(seat, f"give {unheld[0]} to {others[0]}", CardNotHeldError)]
            out += [(seat, f"give {min(hand)} to {o}", GiveError) for o in self.given]
            out += [(seat, f"give {min(hand)} to {seat}", GiveError)]
            if self.n == 4:
                out += [(seat, f"give {min(hand)} to {self.dealer}", GiveError)]
            out += [(seat, f"contract {self.bid}", WrongPhaseError)]
            out += [(seat, "pass", WrongPhaseError)]
            if not self.last_hand_take:
                out += [(seat, "throw-in", ThrowInError)]
        elif self.phase == "contract":
            top = max(self.bid, 120 + marriages_in(hand, r))
            out += [(seat, f"contract {top + 5}", ContractError)]
            out += [(seat, f"contract {self.bid - 5}", ContractError)]
            out += [(seat, f"contract {self.bid + 1}", ContractError)]
            if r.concede == "off" or self.last_hand_take:
                out += [(seat, "concede", ConcedeError)]
            if not self.last_hand_take:
                out += [(seat, "throw-in", ThrowInError)]
            out += [(seat, f"give {min(hand)} to {others[0]}", WrongPhaseError)]
        else:
            legal = self.legal()
            out += [(seat, f"play {unheld[0]}", CardNotHeldError), (seat, "pass", WrongPhaseError)]
            out += [(seat, f"play {c}", PlayError) for c in hand if f"play {c}" not in legal]
            out += [
                (seat, f"play {c} declare", MarriageError)
                for c in sorted(hand)
                if f"play {c}" in legal and f"play {c} declare" not in legal
            ]
        return out

    def to_act(self) -> int:
        if self.phase in ("passing", "contract"):
            assert self.declarer is not None
            return self.declarer
        return self.turn

    # --- the actions
    def apply(self, seat: int, text: str) -> str | None:
        """Follow one action; returns the deal's outcome when it ends the deal."""
        r = self.r
        words = text.split()
        if self.phase == "bidding":
            if words[0] == "bid":
                self.standing, self.high = int(words[1]), seat
            else:
                self.passed.add(seat)  # "a pass is final"
            # "Bidding ends when two players have passed; the third is the declarer at the
            # standing bid (if both others pass at once, first hand plays 100)."
            if len(self.passed) == 2 and self.high is not None:
                self.take(self.high, self.standing, False)
                return None
            if len(self.passed) == 3:  # all_pass = first_hand: "first hand plays" the opening
                self.take(self.active[0], r.opening_bid, False)
                return None
            if len(self.passed) == 2 and r.all_pass == "last_hand":
                # "If every player before the last hand passes, the last hand takes the
                # talon at the opening bid"
                assert self.active[2] not in self.passed
                self.take(self.active[2], r.opening_bid, True)
                return None
            s = self.next_seat(seat)
            while s in self.passed:
                s = self.next_seat(s)
            self.turn = s
            return None
        if self.phase in ("passing", "contract") and words[0] == "give":
            card, to = words[1], int(words[3])
            self.hands[seat].remove(card)
            self.hands[to].add(card)
            self.given.add(to)
            if len(self.given) == 2:
                self.phase = "contract"
                # "Everyone holds 8."
                assert all(len(h) == 8 for h in self.hands.values())
            return None
        if words[0] == "contract":
            self.contract = int(words[1])
            self.phase = "playing"
            self.turn = seat  # "The declarer leads the first"
            return None
        if words[0] == "concede":
            return "conceded"
        if words[0] == "throw-in":
            return "thrown_in"
        card = words[1]
        self.hands[seat].remove(card)
        if not self.trick and len(words) == 3:
            # "He scores its value at once; its suit is trump from that trick on, until
            # another marriage is declared." / ace marriage: "It scores 200 and changes no
            # trump."
            if rank(card) == "A":
                self.marriage_points[seat] += ACE_MARRIAGE
            else:
                self.marriage_points[seat] += MARRIAGE[suit(card)]
                self.trump = suit(card)
        self.trick.append((seat, card))
        if len(self.trick) < 3:
            self.turn = self.next_seat(seat)
            return None
        trump = None if self.trump is None else parse_cards("A" + self.trump)[0].suit
        trick = [(s, parse_cards(c)[0]) for s, c in self.trick]
        w = oracle_winner(trick, trump)  # "The highest trump wins the trick; ..."
        self.card_points[w] += points(c for _, c in self.trick)
        self.won.add(w)
        if rank(dict(self.trick)[w]) != "A":
            self.won_nonace.add(w)
        self.trick = []
        self.tricks += 1
        self.turn = w  # "the winner of a trick leads the next"
        return "played" if self.tricks == 8 else None  # "8 tricks."

    def take(self, declarer: int, bid: int, last_hand: bool) -> None:
        # "The declarer takes the talon ... He now holds 10."
        self.declarer, self.bid, self.last_hand_take = declarer, bid, last_hand
        self.hands[declarer] |= set(self.talon)
        assert len(self.hands[declarer]) == 10
        self.phase = "passing"

    # --- the deal's scoring
    def score(self, outcome: str) -> dict[str, Any]:
        r, n, d = self.r, self.n, self.declarer
        assert d is not None
        opps = [s for s in self.active if s != d]
        takes = [self.card_points[s] + self.marriage_points[s] for s in range(n)]
        raw = [0] * n
        contract = self.contract if outcome == "played" else None
        if outcome == "played":
            # "Declarer: take ≥ contract → +contract (never more); else −contract. Each
            # opponent: + his take (rounded to option rounding)".
            assert self.contract is not None
            # Invariants: "The card points taken in a deal sum to 120"
            assert sum(self.card_points) == 120
            outcome = "made" if takes[d] >= self.contract else "failed"
            raw[d] = self.contract if outcome == "made" else -self.contract
            for s in opps:
                raw[s] = half_up(takes[s], 1, r.rounding)
        elif outcome == "thrown_in":
            # "then each other player dealt into the deal scores +50 and he scores 0"
            for s in opps:
                raw[s] = r.throw_in_bonus
        else:
            # "(option concede: free — default — he scores 0; penalty — he scores −bid; off).
            # Each opponent then scores half the bid, rounded half up to the ruleset's
            # rounding unit (option concede_pays: half, default; none)."
            raw[d] = -self.bid if r.concede == "penalty" else 0
            if r.concede_pays == "half":
                for s in opps:
                    raw[s] = half_up(self.bid, 2, r.rounding)
        if n == 4:
            # "Every deal, whatever happens at the table, he scores the talon: 100 if it is
            # three nines, else its card points (not rounded)."
            nines = all(rank(c) == "9" for c in self.talon)
            raw[self.dealer] = r.nines_talon_value if nines else points(self.talon)
        old = self.scores
        after = [o + x for o, x in zip(old, raw, strict=True)]
        barrel = self.barrel[:]
        if r.barrel:
            after = self.barrel_rules(raw, outcome, contract, old, barrel)
        self.scores, self.barrel = after, barrel
        deltas = tuple(a - b for a, b in zip(after, old, strict=True))
        return {
            "outcome": outcome,
            "contract": contract,
            "card_points": tuple(self.card_points),
            "marriage_points": tuple(self.marriage_points),
            "takes": tuple(takes),
            "deltas": deltas,
            "scores": tuple(after),
            "barrel": tuple(barrel) if r.barrel else None,
        }

    def barrel_rules(
        self, raw: list[int], outcome: str, contract: int | None, old: list[int], barrel: list[int]
    ) -> list[int]:
        r, d = self.r, self.declarer
        sc = old[:]  # (the scores after the deal)
        sat = [b > 0 for b in barrel]
        for s in range(self.n):
            if not sat[s]:
                sc[s] += raw[s]
                continue
            # "On the barrel his defender takes are not scored." "He wins the game (score
            # 1000) by winning the bidding and making a contract of at least 120; a made
            # contract below 120 scores nothing. A failed contract costs the contract and
            # drops him off the barrel; so does conceding under concede = penalty (a free
            # concession leaves him sitting, and the halves paid to a sitter are not scored)."
            if s == d and outcome == "made" and contract is not None and contract >= 120:
                sc[s], barrel[s] = r.target, 0
                continue
            if s == d and outcome == "failed":
                assert contract is not None
                sc[s], barrel[s] = sc[s] - contract, 0
                continue
            if s == d and outcome == "conceded" and r.concede == "penalty":
                sc[s], barrel[s] = sc[s] - self.bid, 0
                continue
            # "Three deals on the barrel without a win: −120 (option barrel_penalty) and off."
            barrel[s] -= 1
            if barrel[s] == 0:
                sc[s] -= r.barrel_penalty
        # "A player whose score would reach 880 or more (option barrel_at) is set to exactly
        # 880 and is 'on the barrel' for the next 3 deals (option barrel_deals)."
        come = [s for s in range(self.n) if not sat[s] and sc[s] >= r.barrel_at]
        for s in come:
            sc[s] = r.barrel_at
        if r.barrel_mode == "many" or not come:
            # "many (default: several players may sit on it)"
            for s in come:
                barrel[s] = r.barrel_deals
            return sc
        # "one (a newcomer knocks the sitter off, −120; two or more reaching it in the same
        # deal all fall off at once, −120 each from 880, and so does any sitter already
        # there)."
        for s in range(self.n):
            if barrel[s] > 0:
                sc[s], barrel[s] = sc[s] - r.barrel_penalty, 0
        if len(come) == 1:
            barrel[come[0]] = r.barrel_deals
        else:
            for s in come:
                sc[s] -= r.barrel_penalty
        return sc

    def end(self, deals_played: int) -> dict[str, Any] | None:
        """ "The game ends when a player reaches 1000 (option target). Final places are by
        score (several reaching the target in one deal: the highest wins; equal scores share
        a place, numbered 1, 1, 3); the result also states each loser's shortfall to the
        target". "at the cap, the standings decide the places"."""
        r, sc = self.r, self.scores
        if max(sc) >= r.target:
            reason = "target"
        elif r.max_deals and deals_played >= r.max_deals:
            reason = "max_deals"
        else:
            return None
        places = tuple(1 + sum(o > s for o in sc) for s in sc)
        firsts = [s for s in range(self.n) if places[s] == 1]
        winner = firsts[0] if len(firsts) == 1 else None
        shortfalls = tuple(0 if s == winner else max(0, r.target - x) for s, x in enumerate(sc))
        return {"scores": tuple(sc), "places": places, "winner": winner,
                "shortfalls": shortfalls, "reason": reason}  # fmt: skip


# --- random rulesets, positions and play ---------------------------------------------------------


def random_ruleset(rng: random.Random) -> Ruleset:
    players = rng.choice((3, 3, 4))
    step = rng.choice((5, 5, 10))
    barrel = rng.random() < 0.7
    target = rng.choice((1000, 1001, 500))
    options: dict[str, Any] = {
        "players": players,
        "target": target,
        "bid_step": step,
        "opening_bid": rng.choice([b for b in (40, 60, 100, 120) if b % step == 0]),
        "first_hand_commits": rng.random() < 0.5,
        "ace_marriage_counts_for_bid": rng.random() < 0.5,
        "talon_visible": rng.random() < 0.5,
        "concede": rng.choice(("free", "penalty", "off")),
        "concede_pays": rng.choice(("half", "none")),
        "must_beat": rng.random() < 0.5,
        "marriage_needs_trick": rng.random() < 0.7,
        "ace_marriage": rng.random() < 0.7,
        "rounding": rng.choice((1, 5, 10)),
        "barrel": barrel,
        "barrel_at": rng.choice((target - 120, target - 300)),
        "barrel_deals": rng.choice((1, 2, 3)),
        "barrel_penalty": rng.choice((0, 120, 50)),
        "barrel_mode": rng.choice(("many", "one")),
        "all_pass": rng.choice(("first_hand", "last_hand")),
        "throw_in_bonus": rng.choice((50, 0, 35)),
        "nines_talon_value": rng.choice((100, 7)),
        "max_deals": rng.choice((0, 2, 4)),
    }
    return dataclasses.replace(load_ruleset("classic"), name="random", **options)


def random_start(r: Ruleset, rng: random.Random) -> tuple[list[int], list[int] | None]:
    """Scores below the target; with the barrel, sitters at exactly barrel_at, the others
    below it (RULES.md: reaching it seats a player), at most one sitter under "one".
    (docs/rules-engine.md lists the positions ``Game.new`` accepts.)"""
    n = r.players
    top = r.barrel_at if r.barrel else r.target
    scores = [max(-200, top - rng.choice((1, 5, 30, 90, 200, 600))) for _ in range(n)]
    if not r.barrel:
        return scores, None
    barrel = [0] * n
    sitters = rng.sample(range(n), rng.choice((0, 1, 1, 2)))
    if r.barrel_mode == "one":
        sitters = sitters[:1]
    for s in sitters:
        scores[s], barrel[s] = r.barrel_at, rng.randint(1, r.barrel_deals)
    if r.barrel_penalty == 0 and rng.random() < 0.5:
        # a sitter fallen off at barrel_at (only a ruleset without the penalty has one):
        # "A player whose score would reach 880 or more" gets on again
        off = [s for s in range(n) if not barrel[s]]
        scores[rng.choice(off)] = r.barrel_at
    return scores, barrel


def pick(game: Game, rng: random.Random) -> Any:
    acts = game.legal_actions()
    if game.phase == Phase.BIDDING and rng.random() < 0.45:
        return next(a for a in acts if str(a) == "pass")
    plays = [a for a in acts if not isinstance(a, Concede | ThrowIn)]
    if plays and rng.random() < 0.7:
        acts = tuple(plays)
    declares = [a for a in acts if isinstance(a, Play) and a.declare]
    if declares and rng.random() < 0.7:
        return rng.choice(declares)
    return rng.choice(acts)


def snapshot(game: Game) -> tuple[Any, ...]:
    hands = tuple(game.hand(s) for s in range(len(game.players)))
    return (game.actions, game.phase, game.to_act, game.scores, game.barrel, game.trump,
            hands, game.trick, game.gives)  # fmt: skip


def check_refusals(game: Game, oracle: Oracle, rng: random.Random) -> None:
    """ "Each is refused with an error that names the action, the rule broken and the legal
    actions; the state is unchanged after a refused action." """
    cases = oracle.illegal(game)
    for seat, text, error in rng.sample(cases, min(4, len(cases))):
        before = snapshot(game)
        with pytest.raises(error) as info:
            game.apply(action(text), seat=seat)
        e = info.value
        if error is PlayError:
            assert not isinstance(e, MarriageError), (text, e)
        assert f"'{text}'" in str(e) and e.rule and e.rule in str(e), (text, str(e))
        assert e.legal == game.legal_actions(), text
        assert f"legal: {e.legal[0]}" in str(e), str(e)  # (the legal actions, named)
        assert snapshot(game) == before, text


def check_views(game: Game, oracle: Oracle) -> None:
    """ "all players see its three cards (option talon_visible, default on)" (else the
    declarer only); "Only the giver and the receiver learn that card"; each sees his own
    hand, and legal actions only when it is his turn."""
    d = oracle.declarer
    for s in range(oracle.n):
        v = observe(game, s)
        assert {str(c) for c in v.hand} == oracle.hands.get(s, set())
        shown = oracle.r.talon_visible or s == d
        assert (v.talon is not None) == shown
        if shown:
            assert v.talon is not None and sorted(map(str, v.talon)) == sorted(oracle.talon)
        for (to, card), (to2, card2) in zip(v.gives, game.gives, strict=True):
            assert to == to2 and card == (card2 if s in (d, to) else None)
        assert v.legal_actions == (game.legal_actions() if s == game.to_act else ())


def follow_match(seed: int) -> int:
    """Play one random match (at most 6 deals), checking it against the oracle; returns the
    number of deals checked."""
    rng = random.Random(seed)
    r = random_ruleset(rng)
    scores, barrel = random_start(r, rng)
    names = ["ann", "bob", "cid", "dan"][: r.players]
    game = Game.new(r, seed, names, scores=scores, barrel=barrel,
                    dealer=rng.randrange(r.players))  # fmt: skip
    oracle = Oracle(game)
    oracle.start_deal(game)
    deals = 0
    while not game.is_over and deals < 6:
        seat = game.to_act
        assert seat == oracle.to_act(), (seat, oracle.to_act())
        assert {str(a) for a in game.legal_actions()} == oracle.legal(), (r, oracle.phase)
        if rng.random() < 0.3:
            check_refusals(game, oracle, rng)
        if oracle.phase in ("passing", "contract"):
            check_views(game, oracle)
        action = pick(game, rng)
        number = game.deal_number
        game.apply(action, seat=seat)
        outcome = oracle.apply(seat, str(action))
        if outcome is None:
            assert game.deal_number == number
            if oracle.phase == "playing":
                assert game.trump == (
                    None if oracle.trump is None else parse_cards("A" + oracle.trump)[0].suit
                )
            continue
        deals += 1
        want = oracle.score(outcome)
        res = game.deal_results[-1]
        got = {k: getattr(res, k) for k in want}
        assert got == want, (r, res)
        assert game.scores == want["scores"]
        end = oracle.end(number + 1)
        if end is None:
            assert not game.is_over
            assert game.deal_number == number + 1
            oracle.start_deal(game)
        else:
            assert game.is_over and game.result is not None
            got_end = {k: getattr(game.result, k) for k in end}
            assert got_end == end, (r, game.result)
    # Invariants: "Replaying a recorded deal's actions from its seed reproduces every state
    # and score."
    again = replay(game.record())
    assert again.deal_results == game.deal_results and again.scores == game.scores
    assert again.result == game.result and again.barrel == game.barrel
    return deals


@pytest.mark.parametrize("block", range(6))
def test_random_matches_under_random_rulesets_follow_the_text_of_rules_md(block: int) -> None:
    """Every option of RULES.md drawn at random (the classic and 1001 sections' options, 3
    and 4 players, the barrel in both modes, near the barrel and the target): the engine's
    legal actions at every step, and its scoring, barrel and end of match at every deal,
    are those the oracle above reads from RULES.md's sentences."""
    checked = sum(follow_match(1000 * block + k) for k in range(30))
    assert checked > 30


# --- 2. sentences that had no test of their own --------------------------------------------------

NAMES3 = ["ann", "bob", "cid"]


def test_the_deck_is_the_24_cards_rules_md_names() -> None:
    """RULES.md, Cards: "24 cards: 9, J, Q, K, 10, A in ♠ ♣ ♦ ♥." and Deal: "7 cards each,
    3 to the talon" (the 4-player dealer none): every deal of a few seeds, both table sizes,
    deals exactly those 24 cards."""
    names = {f"{r}{s}" for r in ("9", "J", "Q", "K", "10", "A") for s in "♠♣♦♥"}
    assert len(names) == 24
    for preset, players in (("classic", NAMES3), ("1001-4p", [*NAMES3, "dan"])):
        for seed in range(5):
            game = Game.new(preset, seed, players)
            dealt = [str(c) for h in game.dealt_hands for c in h] + [str(c) for c in game.talon]
            assert sorted(dealt) == sorted(names)
            sizes = sorted(len(h) for h in game.dealt_hands)
            assert sizes == ([7, 7, 7] if len(players) == 3 else [0, 7, 7, 7])
            assert len(game.talon) == 3


def _finish_deal(game: Game, how: str) -> None:
    """End the current classic deal: ``concede`` at once, or play it out taking the first
    (``low``) or the last (``high``) legal action at every step."""
    number = game.deal_number
    while game.deal_number == number and not game.is_over:
        acts = game.legal_actions()
        if how == "concede" and Concede() in acts:
            game.apply(Concede(), seat=game.to_act)
            continue
        plays = [a for a in acts if not isinstance(a, Concede)]
        game.apply(plays[0] if how != "high" else plays[-1], seat=game.to_act)


def test_a_deal_is_reproducible_from_the_match_seed_and_its_number_alone() -> None:
    """RULES.md §1: "The referee shuffles from a seeded RNG, so a deal is reproducible from
    (match seed, deal number)": deal 1 of seed 77 holds the same cards whatever happened in
    deal 0 (a concession at once, a deal played out low, one played out high, an explicit
    deal 0), and another seed deals other cards."""
    seconds = []
    for how in ("concede", "low", "high", "explicit"):
        deals = None
        if how == "explicit":
            hands = ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "A♣ 10♣ K♣ Q♣ J♣ 10♦ K♦", "Q♦ J♦ 9♥ J♥ Q♥ K♥ 10♥"]
            deals = {0: ([parse_cards(h) for h in hands], parse_cards("A♦ 9♣ 9♦"))}
        game = Game.new("classic", 77, NAMES3, dealer=2, deals=deals)
        _finish_deal(game, "concede" if how == "explicit" else how)
        assert game.deal_number == 1 and not game.is_over
        seconds.append((game.dealer, game.dealt_hands, game.talon))
    assert all(s == seconds[0] for s in seconds), seconds
    other = Game.new("classic", 78, NAMES3, dealer=2)
    _finish_deal(other, "concede")
    assert (other.dealt_hands, other.talon) != seconds[0][1:]


def test_eight_tricks_the_declarer_leads_the_first_the_winner_the_next() -> None:
    """RULES.md §7: "8 tricks. The declarer leads the first; the winner of a trick leads the
    next." The declarer here is the last hand (seat 2, the dealer), not first hand: he
    leads; each trick is led by the previous trick's winner; the deal is scored on the 24th
    card and not before, each seat's card points being those of the tricks he won."""
    game = Game.new("classic", 5, NAMES3, dealer=2)
    for seat, text in ((1, "pass"), (2, "bid 105"), (0, "pass")):
        game.apply(action(text), seat=seat)
    assert game.declarer == 2 and game.bid == 105 and game.phase == Phase.PASSING
    game.apply(game.legal_actions()[0], seat=2)
    game.apply(game.legal_actions()[0], seat=2)
    game.apply(action("contract 105"), seat=2)
    assert game.to_act == 2 and game.trick == ()
    leader, won = 2, [0, 0, 0]
    for number in range(8):
        assert game.to_act == leader and game.deal_number == 0
        cards = []
        for k in range(3):
            play = game.legal_actions()[0]
            assert isinstance(play, Play) and game.to_act == (leader + k) % 3
            cards.append(play.card)
            game.apply(play, seat=game.to_act)
        if number < 7:
            assert len(game.tricks) == number + 1 and game.tricks[-1].leader == leader
            winner = game.tricks[-1].winner
            assert winner == (leader + trick_winner(cards, game.trump)) % 3
        else:
            assert game.deal_number == 1  # scored on the 24th card
            winner = -1
        if winner >= 0:
            won[winner] += points(cards)
            leader = winner
    res = game.deal_results[-1]
    assert res.declarer == 2 and res.contract == 105 and res.outcome in ("made", "failed")
    assert sum(res.card_points) == 120
    last_trick = 120 - sum(won)
    assert sorted(a - b for a, b in zip(res.card_points, won, strict=True)) == [0, 0, last_trick]


def test_scores_may_go_negative_and_the_shortfall_counts_from_there() -> None:
    """RULES.md §10: "Scores may go negative." and the end: "the result also states each
    loser's shortfall to the target": under concede = penalty ("he scores −bid") a player
    at −300 conceding 100 goes to −400; at the deal cap ("the standings decide the places")
    he is third, and his shortfall is 1400."""
    rules = dataclasses.replace(load_ruleset("classic"), concede="penalty", max_deals=1)
    game = Game.new(rules, 3, NAMES3, dealer=2, scores=(-300, 40, 0))
    for seat, text in ((1, "pass"), (2, "pass")):
        game.apply(action(text), seat=seat)
    game.apply(game.legal_actions()[0], seat=0)
    game.apply(game.legal_actions()[0], seat=0)
    game.apply(action("concede"), seat=0)
    res = game.deal_results[-1]
    assert res.outcome == "conceded" and res.deltas == (-100, 50, 50)
    assert game.is_over and game.result is not None
    assert game.result.scores == (-400, 90, 50) and game.result.reason == "max_deals"
    assert game.result.places == (3, 1, 2) and game.result.winner == 1
    assert game.result.shortfalls == (1400, 0, 950)


def test_1001_a_declarer_reaching_the_target_first_in_the_play_loses_to_a_higher_defender(
    tmp_path: Path,
) -> None:
    """RULES.md, the end: "several reaching the target in one deal: the highest wins"; the
    1001 source says "Игрок, который первым набрал 1001 очко или более, считается
    победителем" (who first reaches 1001 wins) and writes the declarer's contract "как только"
    (as soon as) his take reaches it (docs/rules-engine.md lists this reading). Here the
    declarer (970) has made his 40 by the second trick, the defender (880) crosses only when
    the deal is scored, and the defender wins, being higher.

    Seat 0 bids 40 (1001: he speaks first), the others pass; talon Q♥ J♥ 9♥; he passes 9♥
    to 1 and J♥ to 2. Tricks: A♠ 9♣ 9♦ (11 to 0); K♠* J♣ J♦ (♠ marriage 40, trump ♠; 8 to
    0); Q♥ 10♥ K♥ (17 to 1); K♣* Q♦ 9♠ (♣ marriage 60, trump ♣; 7 to 1); A♣ J♥ J♠ (15 to 1);
    10♣ K♦ Q♠ (17 to 1); Q♣ 10♦ 10♠ (23 to 1); 9♥ A♦ A♥ (22 to 0). Seat 0: 41 + 40 = 81 ≥ 40,
    +40 → 1010; seat 1: 79 + 60 = 139, rounded to 140 → 1020; seat 2: 0."""
    game = new(
        rs("1001"),
        deal(
            "A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥",
            "A♣ 10♣ K♣ Q♣ J♣ 9♣ 10♥",
            "A♦ 10♦ K♦ Q♦ J♦ 9♦ K♥",
            talon="Q♥ J♥ 9♥",
        ),
        scores=(970, 880, 500),
    )
    act(game, "0: bid 40", "1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
    act(game, "0: contract 40", "0: A♠ 9♣ 9♦", "0: K♠* J♣ J♦")
    assert game.marriage_points(0) + game.card_points(0) == 59  # the contract is made already
    act(game, "0: Q♥ 10♥ K♥", "1: K♣* Q♦ 9♠", "1: A♣ J♥ J♠", "1: 10♣ K♦ Q♠", "1: Q♣ 10♦ 10♠")
    act(game, "1: 9♥ A♦ A♥")
    res = last(game)
    assert res.outcome == "made" and res.card_points == (41, 79, 0)
    assert res.marriage_points == (40, 60, 0) and res.deltas == (40, 140, 0)
    assert game.is_over and game.result is not None
    assert game.result.scores == (1010, 1020, 500) and game.result.reason == "target"
    assert game.result.winner == 1 and game.result.places == (2, 1, 3)
    assert game.result.shortfalls == (0, 0, 501)
    check_record(game, tmp_path)
