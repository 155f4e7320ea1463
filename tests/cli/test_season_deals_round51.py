"""Round 51: a season whose weeks were dealt both ways (duplicate and ``deals =
"independent"``) says so in its title, in every format and on the web, as a tournament of
independent deals does; its JSON says ``"deals": "mixed"`` and each week's way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.tournament.config import load_config
from tests.arena.fake_referee import run_fake
from tests.support.harness import get_json, web_server

CONFIG = """name = "club-w1"
ruleset = "classic"
max_deals = 1
matches_per_table = 1
seed = 7
db = "club.sqlite"
out = "out"
[bots]
a = "random"
b = "random"
c = "random"
"""

MIXED = "duplicate and independent deals"


@pytest.fixture
def club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """club-w1 (duplicate deals), club-w2 and club-w3 (independent)."""
    monkeypatch.chdir(tmp_path)
    Path("club.toml").write_text(CONFIG)
    assert run_fake(load_config("club.toml")).finished
    for week in ("club-w2", "club-w3"):
        cfg = load_config("club.toml", [f"name={week}", "deals=independent"])
        assert run_fake(cfg).finished
    return tmp_path / "club.sqlite"


def _board(db: Path, *args: str) -> Result:
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), *args])
    assert r.exit_code == 0, r.output
    return r


def test_a_season_of_both_ways_says_so_in_every_format(club: Path, tmp_path: Path) -> None:
    table = _board(club, "--season", "club-w").output
    said = " ".join(table.split())
    assert f"classic, 1 deal max, 3 players, {MIXED}, 3 tournaments" in said
    doc = json.loads(_board(club, "--season", "club-w", "--format", "json").stdout)
    assert doc["tournament"]["deals"] == "mixed"
    weeks = doc["season"]["tournaments"]
    assert [w["deals"] for w in weeks] == ["duplicate", "independent", "independent"]
    # One seed deals other cards to independent deals than to duplicate ones: club-w2 and
    # club-w3 were dealt the same (seed 7, independent), not club-w1's (it was said).
    (same,) = doc["season"]["notes"]
    _, w2, w3 = (w["id"] for w in weeks)
    assert same.startswith(f"{w3} was dealt the same cards as {w2} (seed 7)")
    _board(club, "--season", "club-w", "--format", "all", "--out", str(tmp_path / "site"))
    md = (tmp_path / "site" / "leaderboard.md").read_text()
    assert md.splitlines()[0].startswith("# season club-w — ") and MIXED in md.splitlines()[0]
    html = (tmp_path / "site" / "leaderboard.html").read_text()
    assert MIXED in html[html.index("<h1>") : html.index("</h1>")]
    with web_server(club) as server:
        shown = get_json(server.url, "/api/season?season=club-w")
    assert MIXED in shown["title"] and shown["deals"] == "mixed"
    assert [w["deals"] for w in shown["weeks"]] == ["duplicate", "independent", "independent"]


def test_a_season_of_one_way_says_it_as_a_tournament_does(club: Path) -> None:
    both = " ".join(_board(club, "--season", "club-w2,club-w3").output.split())
    assert "classic, 1 deal max, 3 players, independent deals, 2 tournaments" in both
    one = " ".join(_board(club, "--season", "club-w1").output.split())
    assert "deals" not in one.split("—")[1].split("(")[0]  # (duplicate: the default, unsaid)
    doc = json.loads(_board(club, "--season", "club-w1", "--format", "json").stdout)
    assert doc["tournament"]["deals"] == "duplicate"


def test_a_season_of_serve_sessions_says_no_deals_as_a_session_does() -> None:
    serve = Path(__file__).parents[1] / "arena" / "data" / "upgrade_round50" / "7200ac96"
    said = " ".join(_board(serve / "serve.sqlite", "--season", "club-serve").output.split())
    assert "season club-serve — classic, 2 deals max, 3 players, 2 tournaments" in said
