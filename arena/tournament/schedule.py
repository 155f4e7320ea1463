"""The round-robin schedule: every table × every seating × the same deal seeds.

A *table* is one combination of ``players`` bots out of the field; each table is played in
every seating permutation with the same match seed (duplicate format: every bot is dealt
every hand from every seat). ``matches_per_table`` deal-seed sets repeat that. With
``duplicate=False`` every match has a seed of its own instead: a bot that remembers the
hands it was dealt then learns nothing of another match's (in duplicate it knows, in every
later seating, the hand of whoever sits where it sat). The whole schedule is a pure
function of its arguments, so a resumed tournament plays exactly the matches an
uninterrupted one would.

>>> s = build_schedule(["a", "b", "c", "d"], players=3, matches_per_table=2, seed=1)
>>> len(s), len({m.seats for m in s})
(48, 24)
>>> len({m.seed for m in s})  # one seed per set, shared by all 24 seatings
2
>>> s = build_schedule(["a", "b", "c", "d"], 3, 2, seed=1, duplicate=False)
>>> len({m.seed for m in s})  # a seed per match
48
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "SCHEDULE_VERSION",
    "ScheduledMatch",
    "build_schedule",
    "deal_seed",
    "independent_seed",
    "match_id",
    "replay_seed",
]


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    """One match of the schedule. ``index`` orders the ratings; ``seats[i]`` sits at seat i."""

    index: int
    table: int
    set_no: int
    seats: tuple[str, ...]
    seed: int


#: Bumped when the match seeds of a schedule change, so that a tournament stored before
#: resumes under another id instead of mixing two kinds of seeds (2: 63-bit match seeds).
SCHEDULE_VERSION = 2


def _seed_of(key: str) -> int:
    # 63 bits, the most a SQLite INTEGER holds: a match seed is as hard to guess as the
    # tournament seed. (They were 31 bits: a bot could try them all against its first hand
    # in half an hour of one core, and then knew every hand and talon of its match.)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def deal_seed(tournament_seed: int, set_no: int) -> int:
    """The match seed of deal-seed set ``set_no``: shared by every table and seating."""
    return _seed_of(f"thousand-arena/{tournament_seed}/{set_no}")


def match_id(tournament_id: str, index: int) -> str:
    """The id of schedule entry ``index`` of a tournament (stable across resumes)."""
    return f"{tournament_id}-m{index:05d}"


def independent_seed(tournament_seed: int, set_no: int, seats: Sequence[str]) -> int:
    """The match seed of one seating of set ``set_no`` when deals are not duplicated."""
    return _seed_of(f"thousand-arena/{tournament_seed}/{set_no}/" + "\x00".join(seats))


def replay_seed(match_seed: int, nonce: int) -> int:
    """The seed of a match of independent deals played by a resumed run (``nonce``: drawn
    by that run): not its schedule's, whose cards a bot may have seen in a match that was
    interrupted and is now played again."""
    return _seed_of(f"thousand-arena/replay/{match_seed}/{nonce}")


def build_schedule(
    bots: Sequence[str],
    players: int,
    matches_per_table: int,
    seed: int,
    *,
    duplicate: bool = True,
) -> list[ScheduledMatch]:
    """Every ``players``-combination of ``bots`` × every seating × each deal-seed set.

    Within a set, the order of the matches is shuffled from ``seed`` so that the partial
    standings of an interrupted run are not biased towards the first tables. ``duplicate``:
    one match seed per set (see the module's docstring), else one per match.
    """
    if len(set(bots)) != len(bots):
        raise ValueError("bot names must be unique")
    if len(bots) < players:
        raise ValueError(f"{players} players need at least {players} bots, got {len(bots)}")
    if matches_per_table < 1:
        raise ValueError("matches_per_table must be at least 1")
    tables = list(itertools.combinations(bots, players))
    rng = random.Random(f"thousand-arena-schedule/{seed}")
    out: list[ScheduledMatch] = []
    for set_no in range(matches_per_table):
        s = deal_seed(seed, set_no)
        entries = [
            (t, perm) for t, table in enumerate(tables) for perm in itertools.permutations(table)
        ]
        rng.shuffle(entries)
        for t, perm in entries:
            ms = s if duplicate else independent_seed(seed, set_no, perm)
            out.append(ScheduledMatch(len(out), t, set_no, tuple(perm), ms))
    return out
