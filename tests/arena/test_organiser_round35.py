"""Round 35 of the organiser's audit: `make tournament` and one's own small configs (more
bots than seats, concurrency above the match count, independent against duplicate deals,
`[ratings] draw_probability`, `matches_per_table`, `match_timeout_s`), `arena web` on the
results and `arena leaderboard` in every format, `--tournament` by name and by id, on a
database holding several tournaments."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.leaderboard import BotStats
from arena.leaderboard.render import _made, _mean_ci
from arena.storage import Storage
from arena.web.data import DataSource, _match_page
from arena.web.demo import make_demo_db
from arena.web.server import STATIC_DIR


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


def test_the_pages_write_a_row_s_figures_as_the_screen_and_the_files_do() -> None:
    """Defect: `arena web` wrote a bot's score per deal unsigned, `54.9 ± 5.2` where the
    screen, the Markdown and the HTML file write `+54.9 ± 5.2`, and `54.9 ± –` of a single
    deal (`+54.9` there); the bot page wrote contracts made `1/26` (the leaderboard page
    and the files `1/26 (4%)`), `0` for none (`0/0`), and its median `12.0 ms` beside the
    leaderboard page's `12 ms`. Both pages now use common.js's `meanPerDealText`,
    `madeText` and `medianMsText`, which write them as `arena leaderboard` does (run in
    node against arena/leaderboard/render.py's own functions)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node runs the pages' common.js here (tests/web/test_web_audit_round33.py too)")
    rows = [
        BotStats(
            rank=1,
            bot="a",
            mu=25,
            sigma=1,
            conservative=22,
            matches=3,
            places=[1, 1, 1],
            deals=9,
            mean_per_deal=mean,
            ci95=ci,
            bids_won=3,
            contracts=contracts,
            contracts_made=made,
            concessions=0,
            strikes={},
            decisions=9,
            median_ms=ms,
            mean_score=0.0,
        )
        for mean, ci, contracts, made, ms in (
            (54.94, 5.25, 26, 1, 12.0),
            (-31.25, 0.05, 8, 1, 4.0),
            (2.25, None, 0, 0, 12.5),
            (-0.04, 1.0, 3, 3, None),
            (None, None, 0, 0, 0.75),
            (0.0, 0.0, 7, 2, 9.96),
        )
    ]
    fields = ("mean_per_deal", "ci95", "contracts", "contracts_made", "median_ms")
    data = [{f: getattr(r, f) for f in fields} for r in rows]
    js = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    script = js + (
        f"\nconst rows = {json.dumps(data)};\n"
        "process.stdout.write(JSON.stringify(rows.map((r) => "
        "[meanPerDealText(r), madeText(r), medianMsText(r)])));\n"
    )
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert [g[:2] for g in got] == [[_mean_ci(r), _made(r)] for r in rows]
    assert got[0][:2] == ["+54.9 ± 5.3", "1/26 (4%)"] and got[2][:2] == ["+2.3", "0/0"]
    assert [g[2] for g in got] == ["12 ms", "4.0 ms", "13 ms", "–", "0.8 ms", "10.0 ms"]
    # and both pages write them so
    for page in ("leaderboard.js", "bot.js"):
        text = (STATIC_DIR / page).read_text(encoding="utf-8")
        assert all(f in text for f in ("meanPerDealText", "madeText", "medianMsText")), page
        assert "r.mean_per_deal === null" not in text, page


def test_a_match_its_time_limit_ended_is_marked_in_the_match_lists(tmp_path: Path) -> None:
    """Defect: with `match_timeout_s`, `arena replay --list` showed a match cut by the time
    limit as `1 deal` of a 3-deal cap and nothing more, and the web's match lists (the
    leaderboard's latest matches, a bot's matches, `/api/matches`) an empty status: the
    organiser could not tell a match the clock ended from one the cap or the target did.
    `--list` now says `! ended by its time limit (30 s)` and the lists' status `time limit
    (30 s)` (`forfeit, time limit (30 s)` with a forfeit)."""
    db = tmp_path / "t.sqlite"
    ids = make_demo_db(db, matches=3, max_deals=1)
    cut = ids[1]
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE matches SET record_json = json_set(record_json, '$.time_limit_s', 30.0)"
            " WHERE id = ?",
            (cut,),
        )
    conn.close()
    r = CliRunner().invoke(main, ["replay", "--list", "--db", str(db)])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.stdout.splitlines() if line.startswith("demo-")]
    assert len(lines) == 3
    for line in lines:
        marked = "  ! ended by its time limit (30 s)" in line
        assert marked == line.startswith(cut), line
    assert "! forfeits, incidents and time limits" in r.stderr
    with Storage.open_readonly(db) as st:
        assert st.time_limits("demo") == {cut: 30.0}
        page = _match_page(st, "demo", None, None, None)
    status = {m["match_id"]: m["status"] for m in page["matches"]}
    assert status[cut] == "time limit (30 s)" and {status[i] for i in ids if i != cut} == {""}
    source = DataSource(db)
    assert {m["match_id"]: m["status"] for m in source.leaderboard(None)["recent"]} == status
    assert source.matches(None, bot=None, limit=None)["matches"] == page["matches"]


def test_a_tournament_of_independent_deals_says_so_where_its_rules_are_said(
    tmp_path: Path,
) -> None:
    """Defect (round 37): one config run with `deals = "independent"` and again with
    `--set 'deals="duplicate"'` (two tournaments `big` in one database) read the same in
    the screen's title, the Markdown's and the HTML page's (`big — classic, 2 deals max, 3
    players, 60 matches (finished)`), in `leaderboard.json`'s `tournament` and in `arena
    web` (the API, the page's line and its tournament picker): only the id told them
    apart, though the two are not read alike (independent deals put the luck of the cards
    back in the standings). The title now says `independent deals`, the JSON `deals`, the
    web API `deals` and `deals_note` (shown by the page)."""
    indep = tmp_path / "indep.sqlite"
    make_demo_db(indep, matches=3, max_deals=1)  # the demo's config: deals = "independent"
    dup = tmp_path / "dup.sqlite"
    make_demo_db(dup, matches=3, max_deals=1)
    with sqlite3.connect(dup) as conn:
        conn.execute(
            "UPDATE tournaments SET config_json = json_set(config_json, '$.deals', 'duplicate')"
        )
    conn.close()
    said = {}
    for db in (indep, dup):
        screen = CliRunner().invoke(main, ["leaderboard", "--db", str(db)])
        md = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "md"])
        page = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "html"])
        doc = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "json"])
        assert {r.exit_code for r in (screen, md, page, doc)} == {0}, screen.output
        title = md.output.splitlines()[0]
        assert title in screen.output.replace("\n", "") or title[2:] in screen.output
        assert f"<h1>{title[2:]}</h1>" in page.output
        api = DataSource(db).leaderboard(None)["tournament"]
        said[db] = (
            title,
            json.loads(doc.output)["tournament"]["deals"],
            api["deals"],
            api["deals_note"],
        )
    assert said[indep] == (
        "# demo — classic, 3 players, independent deals, 3 matches (finished)",
        "independent",
        "independent",
        "independent deals",
    )
    assert said[dup] == (
        "# demo — classic, 3 players, 3 matches (finished)",
        "duplicate",
        "duplicate",
        None,
    )
    js = (STATIC_DIR / "leaderboard.js").read_text(encoding="utf-8")
    # (the picker tells namesakes apart by `deals`: a serve session's `deals_note` is null
    # too, round 49)
    assert "t.deals_note ?" in js and 'x.deals === "independent"' in js


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "[ratings]\ndraw_probability = 1",
            "ratings.draw_probability: must be above 0 and at most 0.99, got 1\n",
        ),
        (
            "[ratings]\ndraw_probability = 0",
            "ratings.draw_probability: must be above 0 and at most 0.99, got 0\n",
        ),
        ("match_timeout_s = -1", "match_timeout_s: must be 0 (none) or positive, got -1\n"),
        ("bot_wait_s = 0", "bot_wait_s: must be positive, got 0\n"),
        (
            "[referee]\nreconnect_grace_s = -2",
            "referee.reconnect_grace_s: must not be negative, got -2\n",
        ),
        ("match_timeout_s = -0.5", "match_timeout_s: must be 0 (none) or positive, got -0.5\n"),
    ],
)
def test_a_number_out_of_range_is_quoted_as_the_config_wrote_it(
    tmp_path: Path, body: str, said: str
) -> None:
    """Defect (round 37): `draw_probability = 1` was refused as `got 1.0`, `match_timeout_s
    = -1` as `got -1.0`, `bot_wait_s = 0` as `got 0.0` (the value after float()), where
    the config's every other key out of range is quoted as written (`matches_per_table:
    ... got 0`, `concurrency: ... got 0`): the organiser looked for a `1.0` in a file that
    says `1`. The four seconds/probability keys now quote the value as written."""
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'bots = ["random", "heuristic", "counting"]\n{body}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["tournament", "--config", str(cfg)])
    assert r.exit_code == 2, r.output
    assert f"t.toml: {said}" in r.output, r.output
