"""Round 51: a plain reference of the rules, written from /work/shared/RULES.md alone.

Nothing here is taken from ``engine/``: cards are their texts (``"K♥"``, ``"10♠"``),
actions are the texts ``str(action)`` writes (docs/rules-engine.md: ``bid 105``, ``pass``,
``give K♥ to 2``, ``contract 120``, ``concede``, ``throw-in``, ``play K♥``, ``play K♥
declare``), and the ruleset is the plain dict of ``Ruleset.to_dict()``. Each rule quotes
the sentence of RULES.md it implements (§ numbers are RULES.md's list items); where
RULES.md leaves a point open, the reading is docs/rules-engine.md's "Interpretations" and
says so. :class:`DealOracle` follows one deal from its dealt hands; :func:`match_end`
decides the end of the match and the places.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MARRIAGE",
    "ORDER",
    "POINTS",
    "DealOracle",
    "Expected",
    "beats",
    "check_record",
    "legal_follow",
    "match_end",
    "points",
    "rank",
    "round_half_up",
    "trick_winner_of",
]

# "Rank, high to low: A, 10, K, Q, J, 9. Points: A 11, 10 10, K 4, Q 3, J 2, 9 0."
ORDER = ("9", "J", "Q", "K", "10", "A")
POINTS = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
# "Marriage (K+Q of one suit): ♥ 100, ♦ 80, ♣ 60, ♠ 40. Ace marriage: 200."
MARRIAGE = {"♥": 100, "♦": 80, "♣": 60, "♠": 40}
ACE_MARRIAGE = 200
SUITS = ("♠", "♣", "♦", "♥")


def rank(card: str) -> str:
    return card[:-1]


def suit(card: str) -> str:
    return card[-1]


def points(cards: list[str] | tuple[str, ...]) -> int:
    return sum(POINTS[rank(c)] for c in cards)


def round_half_up(numerator: int, denominator: int, unit: int) -> int:
    """``numerator / denominator`` rounded half up to a multiple of ``unit`` (non-negative).

    "rounded half up to the ruleset's rounding unit"; done in integers so that a half of
    an odd bid (52.5) is exact: floor(x / unit + 1/2) * unit = floor((2x + unit) / 2unit).
    """
    return (2 * numerator + unit * denominator) // (2 * unit * denominator) * unit


def beats(card: str, best: str, led: str, trump: str | None) -> bool:
    """§7: "The highest trump wins the trick; without trumps in it, the highest card of the
    led suit." Does ``card`` take the trick from ``best`` (the card taking it so far)?"""
    if trump is not None and suit(card) == trump:
        if suit(best) != trump:
            return True
        return ORDER.index(rank(card)) > ORDER.index(rank(best))
    if trump is not None and suit(best) == trump:
        return False
    return suit(card) == led and ORDER.index(rank(card)) > ORDER.index(rank(best))


def trick_winner_of(cards: list[str], trump: str | None) -> int:
    """The position in ``cards`` (play order) of the card that takes the trick."""
    best = 0
    for i in range(1, len(cards)):
        if beats(cards[i], cards[best], suit(cards[0]), trump):
            best = i
    return best


def legal_follow(hand: list[str], trick: list[str], trump: str | None, must_beat: bool) -> set[str]:
    """§7 for a player who does not lead. "Each player must follow the led suit; without it
    he must play a trump if a trump is set and he has one; otherwise any card." With
    ``must_beat``: "among the cards he is obliged to play he must choose one that beats the
    trick if he can — it never obliges him to trump" (a player with neither the led suit
    nor a trump is obliged to nothing, so plays any card: the Interpretations)."""
    led = suit(trick[0])
    same = [c for c in hand if suit(c) == led]
    trumps = [c for c in hand if trump is not None and suit(c) == trump]
    if same:
        obliged = same
    elif trumps:
        obliged = trumps
    else:
        return set(hand)
    if must_beat:
        best = trick[trick_winner_of(trick, trump)]
        beating = [c for c in obliged if beats(c, best, led, trump)]
        if beating:
            return set(beating)
    return set(obliged)


@dataclass
class Expected:
    """What a deal's DealResult must say (docs/rules-engine.md's fields)."""

    declarer: int
    bid: int
    contract: int | None
    outcome: str
    card_points: list[int]
    marriage_points: list[int]
    takes: list[int]
    deltas: list[int]
    scores: list[int]
    barrel: list[int] | None
    events: list[str]


@dataclass
class DealOracle:
    """One deal, followed action by action from the dealt hands (RULES.md "A deal")."""

    rules: dict[str, Any]
    dealer: int
    hands: list[list[str]]
    talon: list[str]
    scores: list[int]
    barrel: list[int]
    phase: str = "bidding"
    to_act: int = -1
    bid: int | None = None
    high: int | None = None
    passed: set[int] = field(default_factory=set)
    spoken: set[int] = field(default_factory=set)
    declarer: int | None = None
    last_hand_take: bool = False
    gives: dict[int, str] = field(default_factory=dict)
    contract: int | None = None
    trump: str | None = None
    trick: list[tuple[int, str]] = field(default_factory=list)
    tricks: int = 0
    won: list[list[str]] = field(default_factory=list)
    won_trick: set[int] = field(default_factory=set)
    won_with_non_ace: set[int] = field(default_factory=set)
    marriages: list[int] = field(default_factory=list)
    result: Expected | None = None

    def __post_init__(self) -> None:
        n = self.rules["players"]
        self.n = n
        self.hands = [list(h) for h in self.hands]
        self.dealt = [list(h) for h in self.hands]
        # "4 players: the dealer is dealt no cards and sits out the deal."
        self.active = [s for s in range(n) if n == 3 or s != self.dealer]
        self.first = self.next_seat(self.dealer)
        self.won = [[] for _ in range(n)]
        self.marriages = [0] * n
        if self.rules["first_hand_commits"]:
            # §2 "First hand is committed to 100 without speaking. Then, clockwise, ..."
            self.bid = self.rules["opening_bid"]
            self.high = self.first
            self.to_act = self.next_seat(self.first)
        else:
            self.to_act = self.first

    # -- seats ---------------------------------------------------------------------------
    def next_seat(self, seat: int) -> int:
        s = (seat + 1) % self.n
        while s not in self.active:
            s = (s + 1) % self.n
        return s

    @property
    def last(self) -> int:
        """The last hand: the active seat that speaks last in the first round."""
        return next(s for s in self.active if self.next_seat(s) == self.first)

    @property
    def opponents(self) -> list[int]:
        return [s for s in self.active if s != self.declarer]

    # -- caps ----------------------------------------------------------------------------
    def cap(self, cards: list[str]) -> int:
        """§2 "Nobody may bid above 120 + the marriages in his own hand (an ace marriage
        counts as 200; option ace_marriage_counts_for_bid)"; §5 likewise for the contract."""
        total = 120
        for s in SUITS:
            if f"K{s}" in cards and f"Q{s}" in cards:
                total += MARRIAGE[s]
        aces = sum(1 for c in cards if rank(c) == "A")
        if aces == 4 and self.rules["ace_marriage"] and self.rules["ace_marriage_counts_for_bid"]:
            total += ACE_MARRIAGE
        return total

    # -- legal actions -------------------------------------------------------------------
    def legal(self) -> set[str]:
        r = self.rules
        if self.phase == "bidding":
            step = r["bid_step"]
            low = r["opening_bid"] if self.bid is None else self.bid + step
            # "Bids are multiples of the step"; the cap counts the 7 dealt cards.
            top = self.cap(self.hands[self.to_act])
            out = {"pass"}
            amount = (low + step - 1) // step * step
            while amount <= top:
                out.add(f"bid {amount}")
                amount += step
            return out
        if self.phase == "passing":
            out = {
                f"give {c} to {o}"
                for c in self.hands[self.to_act]
                for o in self.opponents
                if o not in self.gives
            }
            if self.last_hand_take:
                out.add("throw-in")
            return out
        if self.phase == "contract":
            assert self.bid is not None
            # §5 "a multiple of 5, at least the winning bid, at most the greater of the
            # winning bid and 120 + the marriages in his 8 cards now".
            top = max(self.bid, self.cap(self.hands[self.to_act]))
            out = {f"contract {x}" for x in range(self.bid, top + 1, 5)}
            if self.last_hand_take:
                out.add("throw-in")  # 1001: "may play, raise the contract, or throw in"
            elif r["concede"] != "off":
                out.add("concede")  # the last hand after an all-pass "cannot concede"
            return out
        if self.phase == "playing":
            hand = self.hands[self.to_act]
            if self.trick:
                plays = legal_follow(hand, [c for _, c in self.trick], self.trump, r["must_beat"])
                return {f"play {c}" for c in plays}
            out = {f"play {c}" for c in hand}
            seat = self.to_act
            # §8 "A player who leads a K or Q while holding its partner may declare the
            # marriage ... only by a player who has already won a trick in this deal".
            if seat in self.won_trick or not r["marriage_needs_trick"]:
                for c in hand:
                    if rank(c) in ("K", "Q"):
                        partner = ("Q" if rank(c) == "K" else "K") + suit(c)
                        if partner in hand:
                            out.add(f"play {c} declare")
            # §9 "A player holding all four aces may declare it by leading an ace, once he
            # has won a trick with a card other than an ace."
            aces = [c for c in hand if rank(c) == "A"]
            if r["ace_marriage"] and len(aces) == 4 and seat in self.won_with_non_ace:
                out |= {f"play {c} declare" for c in aces}
            return out
        return set()

    # -- applying ------------------------------------------------------------------------
    def apply(self, text: str) -> None:
        assert text in self.legal(), (text, sorted(self.legal()))
        seat = self.to_act
        words = text.split()
        if self.phase == "bidding":
            self._speak(seat, None if words[0] == "pass" else int(words[1]))
        elif self.phase in ("passing", "contract") and text == "throw-in":
            self._score_throw_in()
        elif self.phase == "passing":
            card, to = words[1], int(words[3])
            self.hands[seat].remove(card)
            self.hands[to].append(card)
            self.gives[to] = card
            if len(self.gives) == len(self.opponents):
                self.phase = "contract"
        elif self.phase == "contract":
            if text == "concede":
                self._score_concession()
            else:
                self.contract = int(words[1])
                self.phase = "playing"  # "The declarer leads the first"
        else:
            self._play(seat, words[1], len(words) == 3)

    def _speak(self, seat: int, amount: int | None) -> None:
        r = self.rules
        self.spoken.add(seat)
        if amount is None:
            self.passed.add(seat)  # "a pass is final"
        else:
            self.bid, self.high = amount, seat
        left = [s for s in self.active if s not in self.passed]
        if len(self.passed) == len(self.active) - 1 and self.high is not None:
            # "Bidding ends when two players have passed; the third is the declarer"
            self._take_talon(self.high, last_hand=False)
            return
        if not r["first_hand_commits"] and self.high is None:
            if r["all_pass"] == "last_hand" and self.passed == set(self.active) - {self.last}:
                # 1001: "If every player before the last hand passes, the last hand takes
                # the talon at the opening bid"
                self.bid = r["opening_bid"]
                self._take_talon(self.last, last_hand=True)
                return
            if len(self.passed) == len(self.active):
                # all_pass = first_hand: "if all pass, first hand plays the opening bid"
                self.bid = r["opening_bid"]
                self._take_talon(self.first, last_hand=False)
                return
        nxt = self.next_seat(seat)
        while nxt in self.passed:
            nxt = self.next_seat(nxt)
        assert nxt in left
        self.to_act = nxt

    def _take_talon(self, seat: int, last_hand: bool) -> None:
        # §3 "The declarer takes the talon ... He now holds 10."
        self.declarer = seat
        self.last_hand_take = last_hand
        self.hands[seat] += self.talon
        self.phase = "passing"
        self.to_act = seat

    def _play(self, seat: int, card: str, declare: bool) -> None:
        hand = self.hands[seat]
        if declare:
            if rank(card) == "A":
                self.marriages[seat] += ACE_MARRIAGE  # "changes no trump"
            else:
                self.marriages[seat] += MARRIAGE[suit(card)]
                self.trump = suit(card)  # "its suit is trump from that trick on"
        hand.remove(card)
        self.trick.append((seat, card))
        if len(self.trick) < len(self.active):
            self.to_act = self.next_seat(seat)
            return
        cards = [c for _, c in self.trick]
        winner, winning = self.trick[trick_winner_of(cards, self.trump)]
        self.won[winner] += cards
        self.won_trick.add(winner)
        if rank(winning) != "A":
            self.won_with_non_ace.add(winner)
        self.trick = []
        self.tricks += 1
        self.to_act = winner  # "the winner of a trick leads the next"
        if self.tricks == 8:
            self._score_play()

    # -- scoring -------------------------------------------------------------------------
    def _talon_score(self) -> list[int]:
        """4 players: "Every deal, whatever happens at the table, he [the dealer] scores
        the talon: 100 if it is three nines, else its card points (not rounded)." """
        out = [0] * self.n
        if self.n == 4:
            nines = all(rank(c) == "9" for c in self.talon)
            out[self.dealer] = self.rules["nines_talon_value"] if nines else points(self.talon)
        return out

    def _score_play(self) -> None:
        r = self.rules
        assert self.declarer is not None and self.contract is not None
        card_points = [points(w) for w in self.won]
        takes = [card_points[s] + self.marriages[s] for s in range(self.n)]
        raw = self._talon_score()
        made = takes[self.declarer] >= self.contract
        # §10 "Declarer: take ≥ contract → +contract (never more); else −contract."
        raw[self.declarer] = self.contract if made else -self.contract
        for s in self.opponents:
            raw[s] = round_half_up(takes[s], 1, r["rounding"])  # "Each opponent: + his take"
        outcome = "made" if made else "failed"
        self._finish(outcome, card_points, list(self.marriages), takes, raw)

    def _score_concession(self) -> None:
        r = self.rules
        assert self.declarer is not None and self.bid is not None
        raw = self._talon_score()
        # §6 "free — he scores 0; penalty — he scores −bid"
        raw[self.declarer] = -self.bid if r["concede"] == "penalty" else 0
        if r["concede_pays"] == "half":
            for s in self.opponents:  # "Each opponent then scores half the bid"
                raw[s] = round_half_up(self.bid, 2, r["rounding"])
        zero = [0] * self.n
        self._finish("conceded", zero, list(zero), list(zero), raw)

    def _score_throw_in(self) -> None:
        assert self.declarer is not None
        raw = self._talon_score()
        for s in self.opponents:  # "each other player dealt into the deal scores +50"
            raw[s] = self.rules["throw_in_bonus"]
        zero = [0] * self.n
        self._finish("thrown_in", zero, list(zero), list(zero), raw)

    def _finish(
        self,
        outcome: str,
        card_points: list[int],
        marriages: list[int],
        takes: list[int],
        raw: list[int],
    ) -> None:
        r = self.rules
        d = self.declarer
        assert d is not None and self.bid is not None
        old = list(self.scores)
        new = [old[s] + raw[s] for s in range(self.n)]
        barrel: list[int] | None = None
        events: list[str] = []
        if r["barrel"]:
            new, barrel, events = self._barrel(outcome, raw)
        self.phase = "done"
        self.result = Expected(
            declarer=d,
            bid=self.bid,
            contract=self.contract if outcome in ("made", "failed") else None,
            outcome=outcome,
            card_points=card_points,
            marriage_points=marriages,
            takes=takes,
            deltas=[new[s] - old[s] for s in range(self.n)],
            scores=new,
            barrel=barrel,
            events=events,
        )

    def _barrel(self, outcome: str, raw: list[int]) -> tuple[list[int], list[int], list[str]]:
        """RULES.md "The barrel"."""
        r = self.rules
        at, penalty, deals = r["barrel_at"], r["barrel_penalty"], r["barrel_deals"]
        fine = f": -{penalty}" if penalty else " (no penalty)"
        d = self.declarer
        new = list(self.scores)
        left = list(self.barrel)
        events: list[str] = []
        fell: set[int] = set()
        won = False
        sitters = [s for s in range(self.n) if self.barrel[s] > 0]
        for s in range(self.n):
            if s not in sitters:
                new[s] += raw[s]
                continue
            if s == d and outcome == "made" and self.contract is not None and self.contract >= 120:
                # "He wins the game (score 1000) by ... making a contract of at least 120"
                new[s] = r["target"]
                left[s] = 0
                won = True
                events.append(f"seat {s} wins from the barrel")
                continue
            if s == d and outcome == "failed":
                # "A failed contract costs the contract and drops him off the barrel"
                new[s] += raw[s]
                left[s] = 0
                fell.add(s)
                events.append(f"seat {s} fails the contract and falls off the barrel")
                continue
            if s == d and outcome == "conceded" and r["concede"] == "penalty":
                new[s] += raw[s]
                left[s] = 0
                fell.add(s)
                events.append(f"seat {s} concedes and falls off the barrel")
                continue
            # "On the barrel his defender takes are not scored"; "a made contract below
            # 120 scores nothing"; the halves / bonus / talon paid to a sitter likewise.
            left[s] -= 1
            if left[s] == 0:
                # "Three deals on the barrel without a win: −120 and off."
                new[s] -= penalty
                fell.add(s)
                word = "deal" if deals == 1 else "deals"
                events.append(f"seat {s} sat {deals} {word} on the barrel{fine}")
        # "A player whose score would reach 880 or more is set to exactly 880 and is on
        # the barrel" (the score after the deal; a seat that fell in this deal is not
        # seated again by it: the Interpretations' "one fall, one charge").
        comers = [s for s in range(self.n) if left[s] == 0 and s not in fell and new[s] >= at]
        comers = [s for s in comers if not (won and s == d)]
        if r["barrel_mode"] == "one" and comers:
            still = [s for s in range(self.n) if left[s] > 0]
            if len(comers) >= 2:
                # "two or more reaching it in the same deal all fall off at once, −120
                # each from 880, and so does any sitter already there"
                for s in comers:
                    new[s] = at - penalty
                    events.append(f"seat {s} reaches the barrel with another and falls off{fine}")
                comers = []
            for s in [] if won else still:
                # (a sitter who wins "is not knocked off: the match is over")
                new[s] -= penalty
                left[s] = 0
                events.append(f"seat {s} is knocked off the barrel{fine}")
        for s in comers:
            new[s] = at
            left[s] = deals
            events.append(f"seat {s} gets on the barrel")
        return new, left, events


def match_end(
    rules: dict[str, Any], scores: list[int], deals_played: int
) -> tuple[str, list[int], list[int], int | None] | None:
    """The end of the match after a deal: (reason, places, shortfalls, winner), or None.

    "The game ends when a player reaches 1000 (option target). Final places are by score
    (... equal scores share a place, numbered 1, 1, 3); the result also states each
    loser's shortfall to the target"; "at the cap, the standings decide the places"."""
    target = rules["target"]
    if max(scores) >= target:
        reason = "target"
    elif rules["max_deals"] and deals_played >= rules["max_deals"]:
        reason = "max_deals"
    else:
        return None
    places = [1 + sum(1 for o in scores if o > s) for s in scores]
    firsts = [s for s in range(len(scores)) if places[s] == 1]
    winner = firsts[0] if len(firsts) == 1 else None
    shortfalls = [0 if s == winner else max(0, target - scores[s]) for s in range(len(scores))]
    return reason, places, shortfalls, winner


def check_record(record: dict[str, Any], rules: dict[str, Any]) -> int:
    """Follow a match record (docs/record-format.md: hands as dealt, talon, actions) with
    the oracle alone and assert every figure it states: each deal's outcome, deltas and
    scores, and the result (its places, shortfalls and winner where the match ended by
    the rules). ``rules`` is the record's ruleset as a full dict. Returns the deals checked."""
    n = rules["players"]
    start = record.get("start") or {}
    scores = list(start.get("scores") or [0] * n)
    barrel = list(start.get("barrel") or [0] * n)
    deals = record["deals"]
    end = None
    for k, deal in enumerate(deals):
        where = f"deal {k}"
        assert deal["number"] == k, where
        # "the deal then passes clockwise each deal"
        assert deal["dealer"] == (deals[0]["dealer"] + k) % n, where
        oracle = DealOracle(rules, deal["dealer"], deal["hands"], deal["talon"], scores, barrel)
        for i, step in enumerate(deal["actions"]):
            assert step["seat"] == oracle.to_act, (where, i, step)
            assert step["action"] in oracle.legal(), (where, i, step, sorted(oracle.legal()))
            oracle.apply(step["action"])
        exp = oracle.result
        if exp is None:  # a match stopped mid-deal (forfeits): nothing was scored
            assert k == len(deals) - 1 and "deltas" not in deal, where
            break
        for key in ("outcome", "deltas", "scores"):
            if key in deal:
                assert deal[key] == getattr(exp, key), (where, key, deal[key], exp)
        scores, barrel = exp.scores, exp.barrel or [0] * n
        end = match_end(rules, scores, k + 1)
        assert end is None or k == len(deals) - 1, (where, "the match ended here")
    result = record.get("result")
    if result and result.get("reason") in ("target", "max_deals"):
        assert end is not None, "the record says the match ended, the rules do not"
        reason, places, shortfalls, winner = end
        assert (result["reason"], result["places"], result["shortfalls"], result["winner"]) == (
            reason,
            places,
            shortfalls,
            winner,
        ), (result, end)
        assert result["scores"] == scores and result["deals"] == len(deals)
    return len(deals)
