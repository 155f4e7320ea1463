"""Round 35 of the organiser's audit: `make tournament` and one's own small configs (more
bots than seats, concurrency above the match count, independent against duplicate deals,
`[ratings] draw_probability`, `matches_per_table`, `match_timeout_s`), `arena web` on the
results and `arena leaderboard` in every format, `--tournament` by name and by id, on a
database holding several tournaments."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.web.demo import make_demo_db


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone set to New York (UTC-5 in December), and back."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_leaderboard_says_when_it_was_generated_with_its_offset(
    tmp_path: Path, new_york: None
) -> None:
    """Defect: `leaderboard.json`'s `generated_at` (and the Markdown's and the HTML page's
    "generated ...") was the local time with no zone, `2026-12-04 19:43:53`, beside the
    tournament's `created_at` `2026-12-05T00:32:36+0000` (stored with its offset): in New
    York a leaderboard read as generated five hours before its tournament was created. It
    now carries its offset, as `created_at` does."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=3, max_deals=1)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    generated = datetime.strptime(doc["generated_at"], "%Y-%m-%dT%H:%M:%S%z")
    created = datetime.strptime(doc["tournament"]["created_at"], "%Y-%m-%dT%H:%M:%S%z")
    assert generated.utcoffset() is not None and generated.utcoffset().total_seconds() < 0
    assert 0 <= (generated - created).total_seconds() < 600
    # the Markdown and the page say the same
    md = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "md"])
    page = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "html"])
    assert f"generated {doc['generated_at'][:16]}" in md.output
    assert f"generated\n{doc['generated_at'][:16]}" in page.output


def test_long_names_alike_but_for_their_ends_stay_apart_on_the_screen(tmp_path: Path) -> None:
    """Defect: three bots of 62-character names that differ only in their last two (an
    author's `..._r1`, `..._h1`, `..._c1`) were all shown as `xxxxxxxxxxxxxxxxxxx…` in the
    130 columns of a piped `arena leaderboard` (a name was cut at its end): the table did
    not say which bot had which rank. A name is now cut in its middle, its start and its
    end shown."""
    long = "x" * 60
    bots = tuple(f"{long}{k}" for k in ("r1", "h1", "c1"))
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=3, max_deals=1, bots=bots)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db)])
    assert r.exit_code == 0, r.output
    names = [line.split("│")[2].strip() for line in r.output.splitlines() if "│" in line]
    names = [n for n in names if n != "bot"]
    assert len(names) == 3 and len(set(names)) == 3, names
    for name in names:
        head, cut, tail = name.partition("…")
        assert cut and len(head) >= 9 and len(tail) >= 2
        assert sum(b.startswith(head) and b.endswith(tail) for b in bots) == 1, name
    assert max(len(line) for line in r.output.splitlines()) <= 130
