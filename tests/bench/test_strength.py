"""arena.bench.strength: the table names how many copies of the weaker bot were played."""

from __future__ import annotations

import io

from arena.bench.strength import bench_strength


def test_four_players_are_one_bot_against_three_copies() -> None:
    """Defect: with ``--ruleset 1001-4p`` the stronger bot plays three copies of the weaker
    one, but the table's column said ``vs 2x``."""
    for ruleset, players in (("classic", 3), ("1001-4p", 4)):
        out = io.StringIO()
        report = bench_strength(
            ("random", "heuristic"), matches=1, ruleset=ruleset, max_deals=1, workers=1, out=out
        )
        assert report["players"] == players
        assert report["pairs"][0]["games"] == players  # one match per seat of the stronger bot
        header = out.getvalue().splitlines()[1].split()
        assert header[:3] == ["bot", "vs", f"{players - 1}x"]
