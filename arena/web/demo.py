"""A small recorded tournament for the web view's tests, screenshots and a quick look.

``python -m arena.web.demo out.sqlite`` writes one. The matches are played by the engine
alone with three simple styles of player (a bold bidder, a cautious one, a random one),
so it takes a second and needs no gRPC; the records carry decision times and one
incident like the referee's do. It is stored through :class:`arena.storage.Storage`, the
same way the tournament stores its matches.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from pathlib import Path
from typing import Any

from arena.ratings import rate_results
from arena.storage import ForeignDatabase, Storage, StorageError
from engine import (
    PRESETS,
    Action,
    Bid,
    Concede,
    Contract,
    Game,
    Pass,
    Play,
    ThrowIn,
    fallback_action,
)
from engine.cards import Card

__all__ = ["DEMO_BOTS", "demo_record", "make_demo_db"]

DEMO_BOTS = ("bold", "careful", "randy")


def _choose(style: str, game: Game, rng: random.Random) -> Action:
    acts = game.legal_actions()
    bids = [a for a in acts if isinstance(a, Bid)]
    can_pass = any(isinstance(a, Pass) for a in acts)
    if bids or can_pass:
        keen = {"bold": 0.55, "careful": 0.15, "randy": 0.3}[style]
        if bids and (not can_pass or rng.random() < keen):
            return bids[0]
        return Pass()
    contracts = [a for a in acts if isinstance(a, Contract)]
    if contracts:
        return contracts[0]
    if any(isinstance(a, Concede | ThrowIn) for a in acts) and not contracts:
        return acts[0]
    plays = [a for a in acts if isinstance(a, Play)]
    declares = [a for a in plays if a.declare]
    if declares and style != "randy":
        return declares[0]
    if plays and style != "randy":
        # high cards first: a crude way to take tricks
        return max((a for a in plays if not a.declare), key=lambda a: Card(a.card).rank)
    return rng.choice(acts)


def demo_record(
    seed: int, seats: tuple[str, ...], *, preset: str = "classic", max_deals: int = 8
) -> dict[str, Any]:
    """One match record, with ``ms``/``by`` per action as the referee writes them."""
    ruleset = dataclasses.replace(PRESETS[preset], max_deals=max_deals)
    game = Game.new(ruleset, seed, list(seats))
    rng = random.Random(seed)
    times: list[float] = []
    bys: list[str] = []
    late_deal = 0
    # Every fourth match, randy (or seat 0) times out on its first decision: the referee
    # plays the fallback for it there, as the record's incident says (`arena replay --check`
    # pairs each strike with a fallback of that seat in that deal).
    late = (seats.index("randy") if "randy" in seats else 0) if seed % 4 == 1 else None
    while not game.is_over:
        seat = game.to_act
        assert seat is not None
        style = seats[seat] if seats[seat] in DEMO_BOTS else "randy"
        if seat == late:
            late_deal = game.deal_number
            game.apply(fallback_action(game.legal_actions()), seat=seat)
            times.append(2000)
            bys.append("fallback")
            late = None
            continue
        game.apply(_choose(style, game, rng), seat=seat)
        times.append(round(rng.uniform(0.2, 3.0) * (1 + DEMO_BOTS.index(style)), 2))
        bys.append("bot")
    record = game.record()
    k = 0
    for deal in record["deals"]:
        for a in deal["actions"]:
            a["ms"] = times[k]
            a["by"] = bys[k]
            k += 1
    record["incidents"] = []
    record["forfeits"] = []
    if "fallback" in bys:
        seat = seats.index("randy") if "randy" in seats else 0
        record["incidents"].append(
            {"kind": "timeout", "seat": seat, "deal": late_deal, "detail": "no answer in 2000 ms"}
        )
    return record


def make_demo_db(
    path: str | Path,
    *,
    matches: int = 6,
    bots: tuple[str, ...] = DEMO_BOTS,
    tournament_id: str = "demo",
    max_deals: int = 8,
    total: int | None = None,
    finished: bool = True,
) -> list[str]:
    """Write a demo tournament of ``matches`` matches (of ``total`` scheduled); returns the
    ids of the matches written. ``finished=False`` leaves it looking like a tournament still
    running. Matches already in the database are kept (a second run writes nothing)."""
    path = Path(path)
    ids: list[str] = []
    with Storage(path) as st:
        st.ensure_tournament(
            tournament_id,
            name=tournament_id,
            fingerprint="demo",
            # every demo match has its own seed: nothing to hold back while it "runs"
            config={"name": tournament_id, "ruleset": "classic", "deals": "independent"},
            total_matches=total if total is not None else matches,
            bots=[(b, "demo") for b in bots],
        )
        stored = st.completed_indices(tournament_id)
        for i in range(matches):
            if i in stored:
                continue
            seats = tuple(bots[(i + j) % len(bots)] for j in range(len(bots)))
            record = demo_record(i, seats, max_deals=max_deals)
            match_id = f"{tournament_id}-m{i:04d}"
            st.save_match(
                tournament_id,
                match_id=match_id,
                index=i,
                table=0,
                set_no=i // len(bots),
                seed=i,
                seats=seats,
                record=record,
                started_at=1_700_000_000.0 + 60 * i,
                finished_at=1_700_000_030.0 + 60 * i,
            )
            ids.append(match_id)
        _, history = rate_results(st.match_results(tournament_id), bots)
        st.save_ratings(tournament_id, history, finished=finished)
    return ids


def _other_tournaments(path: Path) -> list[str]:
    """The tournaments other than the demo's stored in ``path``, if it is an arena
    database (whatever else it is, :func:`make_demo_db` says)."""
    if not path.is_file():
        return []
    try:
        with Storage.open_readonly(path) as st:
            return [t.id for t in st.tournaments() if t.id != "demo"]
    except StorageError:
        return []


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.web.demo [PATH] [--matches N]``."""
    p = argparse.ArgumentParser(
        prog="python -m arena.web.demo", description="Write a small demo tournament database."
    )
    p.add_argument("path", nargs="?", default="runs/demo.sqlite", type=Path,
                   help="a new database file (default: %(default)s)")  # fmt: skip
    p.add_argument("--matches", type=int, default=6,
                   help="matches in the demo tournament (default: %(default)s)")  # fmt: skip
    a = p.parse_args(argv)
    if a.matches < 1:
        p.error("--matches must be at least 1")
    others = _other_tournaments(a.path)
    if others:
        # (a results database named by mistake, runs/default.sqlite say: its made-up
        # tournament became the latest, the one `arena leaderboard` and `arena web` show)
        shown = ", ".join(others[:5]) + (" ..." if len(others) > 5 else "")
        p.exit(2, f"error: {a.path} holds other tournaments ({shown}): the demo's made-up "
                  "matches go into a database of their own; name a new file\n")  # fmt: skip
    try:
        ids = make_demo_db(a.path, matches=a.matches)
    except StorageError as e:  # (exit codes as `arena leaderboard`'s: 2 for the wrong file)
        p.exit(2 if isinstance(e, ForeignDatabase) else 1, f"error: {e}\n")
    print("\n".join(ids) if ids else f"{a.path} already holds the demo tournament")
    print(f"view it with: arena web --db {a.path}")


if __name__ == "__main__":
    main(sys.argv[1:])
