"""Round 52: `arena web --season S` refuses at its start a selection of tournaments of
different rules, as `arena leaderboard --season S` does and with its words (exit 2). It
checked only that the selection existed: the server started, printed the season's URL, and
its page answered 400."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"


def test_a_season_of_two_games_is_refused_at_the_start(tmp_path: Path) -> None:
    db = Path(shutil.copy(FIXTURE, tmp_path / "club.sqlite"))
    board = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--season", "club-w1,cup"])
    assert board.exit_code == 2, board.output
    said = board.output.split("play different rules", 1)[1].split(": a season rates")[0]
    web = CliRunner().invoke(
        main, ["web", "--db", str(db), "--season", "club-w1,cup", "--port", "0"]
    )
    assert web.exit_code == 2, web.output
    assert "--season" in web.output and "play different rules" + said in web.output
    assert "http://" not in web.output  # (nothing was served)
