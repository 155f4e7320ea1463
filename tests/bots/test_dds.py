"""The double-dummy solver against plain minimax on small random endgames."""

from __future__ import annotations

import random

import pytest

from bots._dds import Solver, brute_force

_ACES = (1 << 5) | (1 << 11) | (1 << 17) | (1 << 23)


def _deal(rng: random.Random, n: int, aces_to: int | None = None) -> list[int]:
    cards = list(range(24))
    rng.shuffle(cards)
    if aces_to is not None:
        # Put the four aces in one hand (the ace marriage), the rest at random.
        rest = [c for c in cards if c % 6 != 5]
        hands = [0, 0, 0]
        hands[aces_to] = _ACES
        for c in rest[: n - 4]:
            hands[aces_to] |= 1 << c
        others = rest[n - 4 :]
        j = 0
        for p in range(3):
            if p != aces_to:
                for c in others[j : j + n]:
                    hands[p] |= 1 << c
                j += n
        return hands
    return [sum(1 << c for c in cards[i * n : (i + 1) * n]) for i in range(3)]


@pytest.mark.parametrize("seed", range(3))
def test_exact_value_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        n = rng.randint(1, 4)
        hands = _deal(rng, n)
        kw = dict(
            trump=rng.choice([-1, 0, 1, 2, 3]),
            won=rng.randint(0, 7),
            marriage_needs_trick=rng.random() < 0.7,
            must_beat=rng.random() < 0.3,
        )
        decl, leader = rng.randint(0, 2), rng.randint(0, 2)
        want = brute_force(hands, decl, leader, **kw)  # type: ignore[arg-type]
        assert Solver(hands, decl, leader, **kw).value() == want  # type: ignore[arg-type]


def test_ace_marriage_and_partial_tricks_match_brute_force() -> None:
    rng = random.Random(99)
    for _ in range(30):
        n = 4
        decl = rng.randint(0, 2)
        hands = _deal(rng, n, aces_to=decl if rng.random() < 0.7 else None)
        leader = rng.randint(0, 2)
        won_nonace = rng.randint(0, 7)
        # Play one or two legal cards first so the root has a trick in progress.
        s = Solver(hands, decl, leader, won=7, won_nonace=won_nonace)
        trick: list[int] = []
        for _ in range(rng.randint(0, 2)):
            card = rng.choice(s.legal_cards())
            p = s.to_move()
            s.hands[p] &= ~(1 << card)
            s.trick.append(card)
            trick.append(card)
        h = list(s.hands)
        want = brute_force(h, decl, leader, trick, won=7, won_nonace=won_nonace)
        got = Solver(h, decl, leader, trick, won=7, won_nonace=won_nonace).value()
        assert got == want


def test_root_values_and_zero_window_probe_agree_with_exact() -> None:
    rng = random.Random(7)
    for _ in range(12):
        hands = _deal(rng, 4)
        s = Solver(hands, 0, 1, won=7)
        moves = [(c, False) for c in s.legal_cards()]
        exact = s.root_values(moves)
        for (card, _), v in zip(moves, exact, strict=True):
            p = s.to_move()
            h = list(hands)
            h[p] &= ~(1 << card)
            assert brute_force(h, 0, 1, [card], won=7) == v
        best = max(exact) if s.to_move() == 0 else min(exact)
        assert Solver(hands, 0, 1, won=7).value() == best
        for need in (best - 5, best, best + 1):
            assert Solver(hands, 0, 1, won=7).probe(need) == (best >= need)
        windowed = Solver(hands, 0, 1, won=7).root_values(moves, best - 1, best)
        for v, w in zip(exact, windowed, strict=True):
            assert (v >= best) == (w >= best)


def test_known_endgame_marriage_counts_and_sets_trump() -> None:
    # Declarer (0) holds K♥ Q♥; he has won a trick, so leading K♥ declares 100 and makes
    # hearts trump: his Q♥ then ruffs nothing but wins the last trick as trump.
    hk, hq, sa, s10, c9, cj = 21, 20, 5, 4, 6, 7
    hands = [(1 << hk) | (1 << hq), (1 << sa) | (1 << c9), (1 << s10) | (1 << cj)]
    v = Solver(hands, 0, 0, won=1).value()
    assert v == 100 + 4 + 3 + 11 + 10 + 0 + 2
    # Without a won trick there is no marriage: the hearts still win (nobody else has any).
    assert Solver(hands, 0, 0, won=0).value() == 4 + 3 + 11 + 10 + 0 + 2
