"""A perfect-information ("double-dummy") solver for the trick play of one deal of 1000.

Given every hand, the trump, the trick in progress and who has won a trick so far, it
computes the card points plus marriage values the declarer takes from here on when the
declarer maximizes and the defenders, as a coalition, minimize it. The coalition is the
usual "paranoid" simplification: in the real game the defenders score separately, but what
matters most for each of them is the declarer's result, and every point the declarer does
not take is a defender's.

The solver works on 24-bit masks (bit ``c`` is card ``c`` of ``engine.cards``: suit
``c // 6``, rank ``c % 6`` low to high 9, J, Q, K, 10, A), positions ``0, 1, 2`` in play
order (the caller maps the active seats onto them) and needs nothing of the engine but its
mask tables (``engine.tables``), so it can be tested on its own against brute force.

Modelled: following suit, the duty to trump, the ``must_beat`` option, marriages (a player
leading a K or Q while holding its partner declares it — always, see below — scoring its
value and making that suit trump from that trick on; optionally only after having won a
trick), the ace marriage (all four aces, led once a trick was won with a non-ace: 200 to
the declarer, no trump change). A defender's marriage only changes the trump here (its
points are not the declarer's). Not searched inside the tree: leading a K or Q of a held
marriage (or an ace of the four) *without* declaring — declaring is worth 40–200 points to
whoever does it, so a real player nearly always does; at the root both are scored.

Search: fail-soft alpha-beta over single card plays, a transposition table at trick starts
storing lower/upper bounds of the future value, a bound from the points still out, and move
ordering (winners first against the other side, cheap cards into the other side's tricks,
point cards onto the own side's tricks). Equivalent-card reduction is not used: adjacent
ranks carry different points in this game, so they are not interchangeable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from engine.cards import MARRIAGE_VALUES as MARRIAGE_VALUE
from engine.cards import bit_indices as _bits
from engine.tables import ACES as _ACES

if TYPE_CHECKING:
    from sdk.bot import Deadline
from engine.tables import MARRIAGE_MASK as _KQ
from engine.tables import POINTS
from engine.tables import SUIT_MASK as _SUIT_MASK

__all__ = [
    "MARRIAGE_VALUE",
    "NODES_PER_SECOND",
    "POINTS",
    "Budget",
    "PlayPosition",
    "SearchTimeout",
    "Solver",
    "brute_force",
    "position_from_view",
    "rule_options",
]

# Cards of the same suit strictly above card c (to find "can beat").
_ABOVE: tuple[int, ...] = tuple(_SUIT_MASK[c // 6] & ~((1 << (c + 1)) - 1) for c in range(24))
_INF = 10_000
# Card points of each 6-bit pattern of one suit (the ranks' points: POINTS of its first 6).
_PTS6: tuple[int, ...] = tuple(sum(POINTS[r] for r in range(6) if m >> r & 1) for m in range(64))
_POINTS_KEY = POINTS.__getitem__


class SearchTimeout(Exception):
    """The search used up its budget; the caller drops this sample."""


#: Solver nodes per second on the reference machine (one core of the 2-core development
#: machine, CPython 3.11): how a budget given in seconds becomes a budget of work.
NODES_PER_SECOND = 400_000


class Budget:
    """The search work one decision may do, counted in solver nodes.

    Counted in work, not time, so that a bot decides the same on any machine and under any
    load: a match between seeded bots replays exactly. ``seconds`` is the budget on the
    reference machine (``NODES_PER_SECOND``). A wall-clock limit of ``safety`` times that
    stays as a backstop, so that a very slow or overloaded machine cannot make the bot miss
    its deadline (only then do its decisions depend on the clock). ``within(seconds)`` is a
    share of this budget for one probe: it stops at its own nodes or at this budget's end.
    """

    __slots__ = ("clocked", "deadline", "left", "parent")

    def __init__(self, seconds: float, safety: float = 2.5) -> None:
        self.left = round(seconds * NODES_PER_SECOND)
        self.deadline = time.perf_counter() + seconds * safety
        self.parent: Budget | None = None
        #: The wall-clock backstop ended the search (not the nodes): the decision depended
        #: on the machine's speed.
        self.clocked = False

    def end_within(self, deadline: Deadline | None, margin_s: float) -> Budget:
        """The backstop moved up to end ``margin_s`` before an arena's per-decision limit
        runs out (``Bot.deadline``, counted from the request's arrival; the bank is left as
        the reserve for a loaded machine's overruns); unchanged without a deadline."""
        if deadline is not None:
            self.deadline = min(
                self.deadline, time.perf_counter() + deadline.left(bank=False) - margin_s
            )
        return self

    def within(self, seconds: float) -> Budget:
        part = Budget(0.0)
        part.left = min(round(seconds * NODES_PER_SECOND), max(0, self.left))
        part.deadline = self.deadline
        part.parent = self
        return part

    def spend(self, nodes: int) -> None:
        b: Budget | None = self
        while b is not None:
            b.left -= nodes
            b = b.parent

    @property
    def over(self) -> bool:
        if self.left <= 0:
            return True
        if time.perf_counter() <= self.deadline:
            return False
        b: Budget | None = self
        while b is not None:
            b.clocked = True
            b = b.parent
        return True


def _beats(card: int, best: int, trump: int) -> bool:
    """Does ``card`` beat the trick's current best card ``best``?"""
    if card // 6 == best // 6:
        return card > best
    return card // 6 == trump


class Solver:
    """Double-dummy solver for one position; reuse it for several root moves of the same position.

    ``hands``: masks of positions 0..2; ``declarer``: the declarer's position; ``leader``:
    who led the trick in progress (or leads the next one); ``trick``: cards already played to
    it, in order; ``trump``: suit or -1; ``won``: bit ``p`` set if position ``p`` has won a
    trick this deal. ``budget``: the search raises :class:`SearchTimeout` once it is used up
    (every node is charged to it: every 64 during a search, the rest when it ends).
    """

    def __init__(
        self,
        hands: Sequence[int],
        declarer: int,
        leader: int,
        trick: Sequence[int] = (),
        trump: int = -1,
        won: int = 0,
        *,
        marriage_needs_trick: bool = True,
        must_beat: bool = False,
        ace_marriage: bool = True,
        won_nonace: int = 0,
        budget: Budget | None = None,
    ) -> None:
        self.hands = list(hands)
        # The ace marriage needs all four aces in one hand: track it only then (bits 3..5
        # of ``won``: has won a trick with a card other than an ace).
        self.aces = ace_marriage and any(h & _ACES == _ACES for h in hands)
        self.declarer = declarer
        self.leader = leader
        self.trick = list(trick)
        self.trump = trump
        self.won = won | (won_nonace << 3 if self.aces else 0)
        self.needs_trick = marriage_needs_trick
        self.must_beat = must_beat
        self.budget = budget
        self.nodes = 0
        # Nodes already charged to a budget (every 64 during a search, the rest at its end).
        self._billed = 0
        self._tt: dict[tuple[int, int, int, int, int, int], tuple[int, int, int]] = {}

    # ------------------------------------------------------------------ public

    def to_move(self) -> int:
        return (self.leader + len(self.trick)) % 3

    def legal_cards(self) -> list[int]:
        """The cards the player to move may play (ascending)."""
        p = self.to_move()
        return _bits(self._candidates(self.hands[p], self.trick, self.trump))

    def value(self) -> int:
        """The exact future declarer take of the current position."""
        self._check_budget()
        hands = self.hands[:]
        try:
            return self._node(self.trick, self.trump, self.won, -_INF, _INF)
        except SearchTimeout:
            self._restore(hands)
            raise
        finally:
            self._settle()

    def _restore(self, hands: list[int]) -> None:
        # A search cut off by its budget unwinds without putting back the cards it had
        # taken out of the hands: restore them, so that the solver (and its table) can be
        # used again for the same position.
        self.hands[:] = hands

    def _check_budget(self) -> None:
        # A spent budget stops a search before it starts, not 64 nodes into it.
        if self.budget is not None and self.budget.over:
            raise SearchTimeout

    def _settle(self) -> None:
        # Charge the nodes of the search just ended that no multiple of 64 charged: every
        # node is charged, however many small searches a decision runs.
        if self.budget is not None and self.nodes > self._billed:
            self.budget.spend(self.nodes - self._billed)
        self._billed = self.nodes

    def root_values(
        self, moves: Sequence[tuple[int, bool]], alpha: int = -_INF, beta: int = _INF
    ) -> list[int]:
        """Future declarer take after each root move ``(card, declare)``.

        Exact with the default window; with a window ``(alpha, beta)`` a value ``<= alpha``
        is only an upper bound and one ``>= beta`` a lower bound (fail-soft), which is all a
        "does the declarer make it" test (``beta = need, alpha = need - 1``) needs and far
        cheaper. ``declare`` on a K/Q lead with its partner declares that marriage; on an ace
        it is the ace marriage (200 if the mover is the declarer; no trump change). The
        values include the points of the trick in progress.
        """
        self._check_budget()
        out = []
        p = self.to_move()
        saved = self.hands[:]
        for card, declare in moves:
            extra = 0
            trump = self.trump
            if declare and not self.trick:
                if card % 6 == 5:
                    if p == self.declarer:
                        extra = 200
                else:
                    trump = card // 6
                    if p == self.declarer:
                        extra = MARRIAGE_VALUE[trump]
            self.hands[p] = saved[p] & ~(1 << card)
            try:
                v = self._after_play(
                    [*self.trick, card], trump, self.won, alpha - extra, beta - extra
                )
            except SearchTimeout:
                self._restore(saved)
                raise
            finally:
                self._settle()
            self.hands[p] = saved[p]
            out.append(v + extra)
        return out

    def probe(self, need: int) -> bool:
        """Can the declarer take at least ``need`` more from the current position?

        Cut off by the budget (:class:`SearchTimeout`), the solver is left as it was, its
        table kept: a later call resumes the work (``pimc``'s contract search does)."""
        self._check_budget()
        hands = self.hands[:]
        try:
            return self._node(self.trick, self.trump, self.won, need - 1, need) >= need
        except SearchTimeout:
            self._restore(hands)
            raise
        finally:
            self._settle()

    # ---------------------------------------------------------------- internals

    def _candidates(self, hand: int, trick: Sequence[int], trump: int) -> int:
        if not trick:
            return hand
        led = trick[0] // 6
        best = trick[0]
        for c in trick[1:]:
            if _beats(c, best, trump):
                best = c
        follow = hand & _SUIT_MASK[led]
        if follow:
            if self.must_beat and best // 6 == led:
                higher = follow & _ABOVE[best]
                if higher:
                    return higher
            return follow
        if trump >= 0:
            trumps = hand & _SUIT_MASK[trump]
            if trumps:
                if self.must_beat and best // 6 == trump:
                    higher = trumps & _ABOVE[best]
                    if higher:
                        return higher
                return trumps
        return hand

    def _node(self, trick: list[int], trump: int, won: int, alpha: int, beta: int) -> int:
        """Value of the position with ``trick`` in progress; the player to move chooses."""
        if not trick:
            return self._tstart(self.leader, trump, won, alpha, beta)
        p = (self.leader + len(trick)) % 3
        hand = self.hands[p]
        cands = self._candidates(hand, trick, trump)
        best_i = 0
        for i in range(1, len(trick)):
            if _beats(trick[i], trick[best_i], trump):
                best_i = i
        winner = (self.leader + best_i) % 3
        order = _order_follow(cands, trick[best_i], winner, p, self.declarer, trump)
        maximize = p == self.declarer
        best_v = -_INF if maximize else _INF
        for c in order:
            self.hands[p] = hand & ~(1 << c)
            v = self._after_play([*trick, c], trump, won, alpha, beta)
            if maximize:
                if v > best_v:
                    best_v = v
                    if v > alpha:
                        alpha = v
            elif v < best_v:
                best_v = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        self.hands[p] = hand
        return best_v

    def _after_play(self, trick: list[int], trump: int, won: int, alpha: int, beta: int) -> int:
        if len(trick) < 3:
            return self._node(trick, trump, won, alpha, beta)
        # The trick is complete: its points go to the winner; the winner leads next.
        best_i = 0
        for i in (1, 2):
            if _beats(trick[i], trick[best_i], trump):
                best_i = i
        winner = (self.leader + best_i) % 3
        pts = POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]]
        gain = pts if winner == self.declarer else 0
        won |= 1 << winner
        if self.aces and trick[best_i] % 6 != 5:
            won |= 8 << winner
        saved = self.leader
        self.leader = winner
        try:
            v = self._tstart(self.leader, trump, won, alpha - gain, beta - gain)
        finally:
            self.leader = saved
        return v + gain

    def _tstart(self, leader: int, trump: int, won: int, alpha: int, beta: int) -> int:
        """Value at the start of a trick led by ``leader``; the whole trick is searched here
        with three nested loops (not one call per card), which is what makes Python fast
        enough for this."""
        h = self.hands
        h0 = h[leader]
        if not h0:
            return 0
        self.nodes += 1
        if not self.nodes & 63 and self.budget is not None:
            self.budget.spend(self.nodes - self._billed)
            self._billed = self.nodes
            if self.budget.over:
                raise SearchTimeout
        decl = self.declarer
        p1 = (leader + 1) % 3
        p2 = (leader + 2) % 3
        h1 = h[p1]
        h2 = h[p2]
        remaining = h0 | h1 | h2
        # The most the declarer can still take: every card point plus his marriages.
        hi = (
            _PTS6[remaining & 63]
            + _PTS6[remaining >> 6 & 63]
            + _PTS6[remaining >> 12 & 63]
            + _PTS6[remaining >> 18 & 63]
        )
        dh = h[decl]
        for s in range(4):
            if dh & _KQ[s] == _KQ[s]:
                hi += MARRIAGE_VALUE[s]
        aces = self.aces
        if aces and dh & _ACES == _ACES:
            hi += 200
        if hi <= alpha:
            return hi
        if beta <= 0:
            return 0
        if h0 & (h0 - 1) == 0:
            # The last trick: no choice left.
            c0 = h0.bit_length() - 1
            c1 = h1.bit_length() - 1
            c2 = h2.bit_length() - 1
            w, b = leader, c0
            if (c1 // 6 == b // 6 and c1 > b) or (c1 // 6 == trump and b // 6 != trump):
                w, b = p1, c1
            if (c2 // 6 == b // 6 and c2 > b) or (c2 // 6 == trump and b // 6 != trump):
                w = p2
            return POINTS[c0] + POINTS[c1] + POINTS[c2] if w == decl else 0
        if not self.needs_trick:
            won |= 7
        # Who has won a trick matters only for a player who can still declare: dropping the
        # other bits lets transpositions meet in the table.
        relevant = 0
        for p, hp in ((leader, h0), (p1, h1), (p2, h2)):
            if (
                hp & _KQ[0] == _KQ[0]
                or hp & _KQ[1] == _KQ[1]
                or hp & _KQ[2] == _KQ[2]
                or hp & _KQ[3] == _KQ[3]
            ):
                relevant |= 1 << p
            if aces and hp & _ACES == _ACES:
                relevant |= 9 << p
        won &= relevant
        key = (h0, h1, h2, leader, trump, won)
        tt = self._tt
        entry = tt.get(key)
        lo = 0
        first = -1
        if entry is not None:
            lo, hi2, first = entry
            if lo >= beta:
                return lo
            if hi2 <= alpha:
                return hi2
            if lo == hi2:
                return lo
            if hi2 < hi:
                hi = hi2
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
        a0, b0 = alpha, beta
        must_beat = self.must_beat
        max0 = leader == decl
        max1 = p1 == decl
        max2 = p2 == decl
        best0 = -_INF if max0 else _INF
        can_marry = not self.needs_trick or bool(won >> leader & 1)
        ace_now = aces and h0 & _ACES == _ACES and bool(won >> (3 + leader) & 1)
        order0 = self._order_lead(h0, trump, won, leader)
        if first > 0 and order0[0] != first:
            # The best lead of an earlier search of this position (another window) first.
            order0.remove(first)
            order0.insert(0, first)
        best_c = order0[0]
        for c0 in order0:
            t = trump
            extra = 0
            if can_marry and c0 % 6 in (2, 3) and h0 & _KQ[c0 // 6] == _KQ[c0 // 6]:
                t = c0 // 6
                if max0:
                    extra = MARRIAGE_VALUE[t]
            elif ace_now and c0 % 6 == 5 and max0:
                extra = 200
            h[leader] = h0 & ~(1 << c0)
            led = c0 // 6
            a1 = alpha - extra
            b1 = beta - extra
            best1 = -_INF if max1 else _INF
            # Second hand: follow, else trump, else anything (must_beat: beat if able).
            f = h1 & _SUIT_MASK[led]
            if f:
                if must_beat and f & _ABOVE[c0]:
                    f &= _ABOVE[c0]
            elif t >= 0 and h1 & _SUIT_MASK[t]:
                f = h1 & _SUIT_MASK[t]
            else:
                f = h1
            for c1 in _order_follow(f, c0, leader, p1, decl, t):
                if (c1 // 6 == led and c1 > c0) or (c1 // 6 == t and led != t):
                    wb, wp = c1, p1
                else:
                    wb, wp = c0, leader
                h[p1] = h1 & ~(1 << c1)
                a2 = a1
                b2 = b1
                best2 = -_INF if max2 else _INF
                f2 = h2 & _SUIT_MASK[led]
                if f2:
                    if must_beat and wb // 6 == led and f2 & _ABOVE[wb]:
                        f2 &= _ABOVE[wb]
                elif t >= 0 and h2 & _SUIT_MASK[t]:
                    f2 = h2 & _SUIT_MASK[t]
                    if must_beat and wb // 6 == t and f2 & _ABOVE[wb]:
                        f2 &= _ABOVE[wb]
                else:
                    f2 = h2
                pts01 = POINTS[c0] + POINTS[c1]
                for c2 in _order_follow(f2, wb, wp, p2, decl, t):
                    if (c2 // 6 == wb // 6 and c2 > wb) or (c2 // 6 == t and wb // 6 != t):
                        w = p2
                        wc = c2
                    else:
                        w = wp
                        wc = wb
                    nw = won | (1 << w)
                    if aces and wc % 6 != 5:
                        nw |= 8 << w
                    h[p2] = h2 & ~(1 << c2)
                    if w == decl:
                        gain = pts01 + POINTS[c2]
                        v = self._tstart(w, t, nw, a2 - gain, b2 - gain) + gain
                    else:
                        v = self._tstart(w, t, nw, a2, b2)
                    if max2:
                        if v > best2:
                            best2 = v
                            if v > a2:
                                a2 = v
                    elif v < best2:
                        best2 = v
                        if v < b2:
                            b2 = v
                    if a2 >= b2:
                        break
                h[p2] = h2
                v = best2
                if max1:
                    if v > best1:
                        best1 = v
                        if v > a1:
                            a1 = v
                elif v < best1:
                    best1 = v
                    if v < b1:
                        b1 = v
                if a1 >= b1:
                    break
            h[p1] = h1
            v = best1 + extra
            if max0:
                if v > best0:
                    best0 = v
                    best_c = c0
                    if v > alpha:
                        alpha = v
            elif v < best0:
                best0 = v
                best_c = c0
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        h[leader] = h0
        v = best0
        # Fail-soft bounds: v <= a0 is an upper bound, v >= b0 a lower bound.
        if v <= a0:
            tt[key] = (lo, v if v < hi else hi, best_c)
        elif v >= b0:
            tt[key] = (v if v > lo else lo, hi, best_c)
        else:
            tt[key] = (v, v, best_c)
        return v

    def can_declare_in(self, card: int, hand: int, p: int, won: int) -> bool:
        return (
            card % 6 in (2, 3)
            and hand & _KQ[card // 6] == _KQ[card // 6]
            and (not self.needs_trick or bool(won >> p & 1))
        )

    def _order_lead(self, hand: int, trump: int, won: int, p: int) -> list[int]:
        h = self.hands
        others = (h[0] | h[1] | h[2]) & ~hand
        scored = []
        for c in _bits(hand):
            if self.can_declare_in(c, hand, p, won):
                key = 300 + MARRIAGE_VALUE[c // 6]
            elif not others & _ABOVE[c]:
                # The top card of its suit still out: a likely winner.
                key = 100 + POINTS[c] + (20 if c // 6 == trump else 0)
            else:
                key = -POINTS[c]
            scored.append((key, c))
        scored.sort(reverse=True)
        return [c for _, c in scored]


def _order_follow(cands: int, best: int, winner: int, p: int, decl: int, trump: int) -> list[int]:
    """Order a follower's cards: against the other side's winning card, the cheapest
    winners first, then the cheapest losers; onto the own side's trick, points first."""
    same_side = (winner == decl) == (p == decl)
    wins = []
    loses = []
    m = cands
    bs = best // 6
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if (c // 6 == bs and c > best) or (c // 6 == trump and bs != trump):
            wins.append(c)
        else:
            loses.append(c)
    if same_side:
        loses.sort(key=_POINTS_KEY, reverse=True)
        return loses + wins
    if len(loses) > 1:
        loses.sort(key=_POINTS_KEY)
    return wins + loses


def brute_force(
    hands: Sequence[int],
    declarer: int,
    leader: int,
    trick: Sequence[int] = (),
    trump: int = -1,
    won: int = 0,
    *,
    marriage_needs_trick: bool = True,
    must_beat: bool = False,
    ace_marriage: bool = True,
    won_nonace: int = 0,
) -> int:
    """Plain minimax without pruning or tables: the reference the tests check the solver with."""
    s = Solver(
        hands, declarer, leader, trick, trump, won,
        marriage_needs_trick=marriage_needs_trick, must_beat=must_beat,
        ace_marriage=ace_marriage, won_nonace=won_nonace,
    )  # fmt: skip

    def rec(trick: list[int], trump: int, won: int) -> int:
        h = s.hands
        if not trick and not (h[0] | h[1] | h[2]):
            return 0
        p = (s.leader + len(trick)) % 3
        hand = h[p]
        vals = []
        for c in _bits(s._candidates(hand, trick, trump)):
            t, extra = trump, 0
            if not trick and s.can_declare_in(c, hand, p, won):
                t = c // 6
                extra = MARRIAGE_VALUE[t] if p == declarer else 0
            elif (
                not trick
                and s.aces
                and c % 6 == 5
                and hand & _ACES == _ACES
                and won >> (3 + p) & 1
                and p == declarer
            ):
                extra = 200
            h[p] = hand & ~(1 << c)
            nt = [*trick, c]
            if len(nt) == 3:
                bi = 0
                for i in (1, 2):
                    if _beats(nt[i], nt[bi], t):
                        bi = i
                w = (s.leader + bi) % 3
                pts = sum(POINTS[x] for x in nt) if w == declarer else 0
                saved = s.leader
                s.leader = w
                nw = won | (1 << w)
                if s.aces and nt[bi] % 6 != 5:
                    nw |= 8 << w
                v = rec([], t, nw) + pts
                s.leader = saved
            else:
                v = rec(nt, t, won)
            h[p] = hand
            vals.append(v + extra)
        return max(vals) if p == declarer else min(vals)

    return rec(list(trick), trump, s.won)


@dataclass(frozen=True, slots=True)
class PlayPosition:
    """What the solver needs from a play-phase view, in solver seats (0..2 = the active
    seats in table order): the searching bots build it once per decision."""

    active: tuple[int, ...]  # table seat of each solver seat
    declarer: int
    me: int
    leader: int  # of the trick in progress (``me`` when about to lead)
    trick: tuple[int, ...]  # cards of the trick in progress, in play order
    trump: int  # -1 while no trump is set
    won: int  # bit per solver seat that has won a trick this deal
    won_nonace: int  # bit per solver seat that has won a trick with a non-ace
    need: int  # points the declarer still lacks for the contract


def position_from_view(view: Any) -> PlayPosition:
    """The solver position of a 3-active-seat play-phase ``PlayerView``."""
    active = tuple(view.active_seats)
    pos = {s: i for i, s in enumerate(active)}
    declarer = view.declarer
    me = pos[view.seat]
    won = won_nonace = past = 0
    for t in view.tricks:
        won |= 1 << pos[t.winner]
        if all(int(c) % 6 != 5 for s, c in t.cards if s == t.winner):
            won_nonace |= 1 << pos[t.winner]
        if t.winner == declarer:
            past += sum(POINTS[int(c)] for _, c in t.cards)
    for s, suit in view.marriages:
        if s == declarer:
            past += 200 if suit is None else MARRIAGE_VALUE[int(suit)]
    return PlayPosition(
        active=active,
        declarer=pos[declarer],
        me=me,
        leader=pos[view.trick[0][0]] if view.trick else me,
        trick=tuple(int(c) for _, c in view.trick),
        trump=-1 if view.trump is None else int(view.trump),
        won=won,
        won_nonace=won_nonace,
        need=(view.contract or 0) - past,
    )


class RuleOptions(TypedDict):
    """The options of a ``Ruleset`` that the solver models: keywords of :class:`Solver`."""

    marriage_needs_trick: bool
    must_beat: bool
    ace_marriage: bool


def rule_options(rules: Any) -> RuleOptions:
    """The solver's keywords for the ``Ruleset`` ``rules``: ``Solver(..., **rule_options(r))``."""
    return {
        "marriage_needs_trick": rules.marriage_needs_trick,
        "must_beat": rules.must_beat,
        "ace_marriage": rules.ace_marriage,
    }
