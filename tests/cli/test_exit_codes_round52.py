"""Round 52: a refusal of what was named on the command line exits 2, a failure of the run
1 (docs/tournament.md's table; docs/web.md). Two refusals exited 1: another program's SQLite
file as an arena's database (`arena tournament`, `arena leaderboard`, `arena web`, `arena
tournament --forget`; `arena replay` and `arena serve` said 2), and a config with a fixed
`id` whose stored tournament another config started. Each is the user's to correct, as an
unknown key is: nothing failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage
from arena.tournament.config import load_config

CONFIG = """name = "x"
db = "{db}"
max_deals = 1
matches_per_table = 1
{extra}
[bots]
a = "random"
b = "random"
c = "random"
"""


def _other(tmp_path: Path) -> Path:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    return other


def _config(tmp_path: Path, db: Path, extra: str = "") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(CONFIG.format(db=db, extra=extra))
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["leaderboard", "--db", "{db}"],
        ["web", "--db", "{db}", "--port", "0"],
        ["tournament", "--forget", "x", "--yes", "--db", "{db}"],
        ["replay", "--list", "--db", "{db}"],
        ["tournament", "--config", "{config}"],
    ],
)
def test_another_programs_database_is_a_bad_argument(tmp_path: Path, args: list[str]) -> None:
    other = _other(tmp_path)
    config = _config(tmp_path, other)
    r = CliRunner().invoke(main, [a.format(db=other, config=config) for a in args])
    assert r.exit_code == 2, r.output
    assert "is not a Thousand Arena database (it holds other tables: t)" in r.output
    with sqlite3.connect(other) as con:  # (nothing written to it)
        assert con.execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]


def test_a_fixed_id_of_another_config_is_a_bad_config(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    config = _config(tmp_path, db, 'id = "cup"')
    cfg = load_config(config)
    with Storage(db) as st:  # (stored as a run of another config stores it)
        st.ensure_tournament("cup", name="x", fingerprint="another", config=cfg.to_json(),
                             total_matches=6, bots=[("a", "random")])  # fmt: skip
    r = CliRunner().invoke(main, ["tournament", "--config", str(config)])
    assert r.exit_code == 2, r.output
    assert "tournament cup in" in r.output and "was started with another config" in r.output
