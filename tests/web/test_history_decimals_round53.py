"""Round 53: a rating history is sent to 4 decimals, but its last point, the table's, whole.

Limit left by round 52: ``history`` came at full float precision (``25.123456789012345``),
and its digits were most of a poll (a club's season of 30 bots: 256,216 bytes gzipped, now
106,567). Every point but the last is sent to 4 decimals (far below a pixel of the plot);
the last is the current rating, sent whole, so the plot still ends at the table's μ and σ
exactly (the row's are sent whole: they are ``arena leaderboard``'s figures).
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.leaderboard import build_leaderboard
from arena.storage import Storage
from arena.web import DataSource
from arena.web.board import HISTORY_DECIMALS
from arena.web.demo import DEMO_BOTS, make_demo_db


def test_history_is_sent_to_four_decimals_and_ends_at_the_rows_rating(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=30, max_deals=1, tournament_id="club-w1")
    make_demo_db(db, matches=12, max_deals=1, tournament_id="club-w2")
    with Storage.open_readonly(db) as st:
        full = build_leaderboard(st, "club-w2").history
    source = DataSource(db)
    board = source.leaderboard("club-w2")
    assert HISTORY_DECIMALS == 4
    for bot in DEMO_BOTS:
        want = [p for p in full[bot] if p[0] >= 0]
        sent = [(p["index"], p["mu"], p["sigma"]) for p in board["history"][bot]]
        rounded = [(i, round(mu, 4), round(sigma, 4)) for i, mu, sigma in want[:-1]]
        assert sent == [*rounded, want[-1]]
        assert sent[:-1] != want[:-1]  # (rounded: the full floats have more digits)
        row = next(r for r in board["rows"] if r["bot"] == bot)
        assert (row["mu"], row["sigma"]) == sent[-1][1:] == want[-1][1:]
        assert source.bot(bot, "club-w2")["history"] == board["history"][bot]
    # a season's plot the same way, ending at its rows' ratings
    season = source.season("club-w")
    for row in season["rows"]:
        points = season["history"][row["bot"]]
        assert (points[-1]["mu"], points[-1]["sigma"]) == (row["mu"], row["sigma"])
        assert all(
            len(repr(p[k]).partition(".")[2]) <= 4 for p in points[:-1] for k in ("mu", "sigma")
        )
    # and the answer is shorter for it
    whole = {b: [{"index": i, "mu": mu, "sigma": s} for i, mu, s in full[b] if i >= 0]
             for b in DEMO_BOTS}  # fmt: skip
    assert len(json.dumps(board["history"])) < 0.8 * len(json.dumps(whole))
