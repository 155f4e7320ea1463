"""Round 54: limits of `arena replay` listed by the last closing note, fixed.

- ``arena replay --list`` had no ``--vs``: the web's bot page lists a bot's matches against
  one opponent (``?vs=NAME``), the command line could not. ``--bot A --vs B`` lists A's
  matches against B; several (``--vs B,C`` or ``--vs B --vs C``, as ``arena-bot try --vs``
  reads them) those against each of them.
- ``arena replay --list`` exited 2 for an empty or damaged database, where ``arena
  leaderboard`` and ``arena web`` exit 1 (2 is for what was named wrong: another program's
  SQLite file). A match id keeps 2: there 1 says the rules refuse the record.
- ``_held_back_note`` repeated ``resolve_record``'s rule of which stored match an id
  suffix names: one helper, ``storage.named_match``, serves both (and the web).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.cli.replay import _held_back_note
from arena.storage import Storage, named_match, resolve_record
from arena.tournament.schedule import SCHEDULE_VERSION
from arena.web.demo import demo_record

BOTS = ("a", "b", "c", "d")


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["replay", *args])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Tournament "four": one match of each three of a, b, c and d, in that order (m0: a b c,
    m1: a b d, m2: a c d, m3: b c d)."""
    path = tmp_path / "four.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("four", name="four", fingerprint="f", total_matches=4,
                             config={"name": "four", "ruleset": "classic"},
                             bots=[(b, "demo") for b in BOTS])  # fmt: skip
        for i, seats in enumerate(itertools.combinations(BOTS, 3)):
            record = demo_record(i, seats, max_deals=3)
            st.save_match("four", match_id=f"four-m{i}", index=i, table=i, set_no=i,
                          seed=record["seed"], seats=seats, record=record,
                          started_at=1.0, finished_at=2.0)  # fmt: skip
        st.finish_tournament("four")
    return path


def _ids(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [line.split()[0] for line in result.stdout.splitlines()]


def test_vs_lists_a_bots_matches_against_the_opponents_named(db: Path) -> None:
    shown = _run("--list", "--db", str(db), "--bot", "a", "--vs", "b")
    assert _ids(shown) == ["four-m0", "four-m1"]
    assert "2 match(es) played by a against b (4 of 4 stored)" in shown.stderr
    # against each of several: comma-separated or repeated, as `arena-bot try --vs`
    for vs in (["--vs", "b,d"], ["--vs", "d", "--vs", "b"], ["--vs", " b , d "]):
        assert _ids(_run("--list", "--db", str(db), "--bot", "a", *vs)) == ["four-m1"], vs
    # one named twice is one opponent
    assert _ids(_run("--list", "--db", str(db), "--bot", "a", "--vs", "c,c")) == [
        "four-m0", "four-m2"
    ]  # fmt: skip
    # none against them: said, exit 0
    none = _run("--list", "--db", str(db), "--bot", "a", "--vs", "b,c,d")
    assert none.exit_code == 0 and none.stdout == "", none.output
    assert "no stored match played by a against b, c, d in tournament four" in none.stderr


def test_the_worst_deal_and_the_export_are_of_the_matches_listed(db: Path, tmp_path: Path) -> None:
    every = _run("--list", "--db", str(db), "--bot", "a")
    against = _run("--list", "--db", str(db), "--bot", "a", "--vs", "d",
                   "--export", str(tmp_path / "exp"))  # fmt: skip
    assert _ids(against) == ["four-m1", "four-m2"]
    worst = [line for line in against.stderr.splitlines() if line.startswith("worst deal of a")]
    assert len(worst) == 1 and worst[0].split()[4].rstrip(",") in ("four-m1", "four-m2"), worst
    # (of all a's matches, its worst deal is in a match without d: else the test says nothing)
    assert "worst deal of a: four-m0," in every.stderr, every.stderr
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [
        "four-m1.json", "four-m2.json"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # an opponent the tournament never seated, named as --bot's is
        (["--bot", "a", "--vs", "zed"],
         "error: --vs: no bot 'zed' in tournament four (its bots: a, b, c, d)"),
        (["--bot", "a", "--vs", "b,zed"], "error: --vs: no bot 'zed' in tournament four"),
        # as the web refuses vs= without bot=, and naming the bot itself
        (["--vs", "b"], "Error: --vs b lists a bot's matches against others: give the bot too"),
        (["--bot", "a", "--vs", "b,a"], "Error: Invalid value for --vs: 'a' is the --bot itself"),
        (["--bot", "a", "--vs", "b,,c"], "Error: Invalid value for --vs: an empty name in 'b,,c'"),
        (["--bot", "a", "--vs", ""], "Error: Invalid value for --vs: empty"),
        (["--bot", "a", "--vs", ","], "Error: Invalid value for --vs: name at least one bot"),
    ],
)  # fmt: skip
def test_a_bad_vs_is_refused_naming_it(db: Path, args: list[str], said: str) -> None:
    bad = _run("--list", "--db", str(db), *args)
    assert bad.exit_code == 2 and bad.stdout == "", bad.output
    assert said in " ".join(bad.stderr.split()), bad.stderr


def test_vs_goes_with_list(db: Path) -> None:
    bad = _run("four-m0", "--db", str(db), "--vs", "b")
    assert bad.exit_code == 2 and "--vs goes with --list" in bad.stderr, bad.output


def test_vs_of_a_bot_elsewhere_names_where_it_plays(db: Path) -> None:
    with Storage(db) as st:
        st.ensure_tournament("other", name="other", fingerprint="o", total_matches=0,
                             config={}, bots=[("e", "demo"), ("a", "demo")])  # fmt: skip
    bad = _run("--list", "--db", str(db), "--tournament", "four", "--bot", "a", "--vs", "e")
    assert bad.exit_code == 2, bad.output
    assert "--vs: no bot 'e' in tournament four (its bots: a, b, c, d); e plays in other" in (
        " ".join(bad.stderr.split())
    )


def test_list_exits_as_the_leaderboard_for_a_database_it_cannot_read(tmp_path: Path) -> None:
    """An empty file, a damaged one: 1, as `arena leaderboard` (what was named cannot be
    read); another program's SQLite file: 2 (the file named is wrong). A match id looked up
    in them keeps 2 (its 1 is a record the rules refuse)."""
    import sqlite3

    empty, junk, foreign = (tmp_path / f"{n}.sqlite" for n in ("empty", "junk", "foreign"))
    empty.write_bytes(b"")
    junk.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE x (a)")
    conn.close()
    for path, code in ((empty, 1), (junk, 1), (foreign, 2)):
        listed = _run("--list", "--db", str(path))
        board = CliRunner().invoke(main, ["leaderboard", "--db", str(path)])
        assert (listed.exit_code, board.exit_code) == (code, code), (path, listed.output)
        assert listed.stderr.startswith(f"error: {path}"), listed.stderr
        assert _run("m1", "--db", str(path)).exit_code == 2


def test_an_export_that_meets_a_damaged_record_exits_1(db: Path, tmp_path: Path) -> None:
    with Storage(db) as st:
        st.conn.execute("UPDATE matches SET record_json = '{\"cut' WHERE id = 'four-m1'")
    bad = _run("--list", "--db", str(db), "--export", str(tmp_path / "exp"))
    assert bad.exit_code == 1, bad.output
    assert "error: --export: " in bad.stderr and "four-m1" in bad.stderr, bad.stderr


def test_the_held_back_note_and_resolve_record_read_a_suffix_alike(tmp_path: Path) -> None:
    """One rule: the id itself, else the only id ending with it; several: none."""
    path = tmp_path / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("t", name="t", fingerprint="t", total_matches=8,
                             config={"name": "t", "ruleset": "classic", "matches_per_table": 1,
                                     "schedule": SCHEDULE_VERSION},
                             bots=[(b, "demo") for b in BOTS[:3]])  # fmt: skip
        for i, match_id in enumerate(("t-m1", "xt-m1", "t-m2")):
            record = demo_record(i, BOTS[:3], max_deals=1)
            # (set 0 of two tables: the tournament unfinished, each is held back)
            st.save_match("t", match_id=match_id, index=i, table=i, set_no=0,
                          seed=record["seed"], seats=BOTS[:3], record=record,
                          started_at=1.0, finished_at=2.0)  # fmt: skip
    assert named_match("m2", ["t-m2"]) == "t-m2"
    assert named_match("t-m1", ["t-m1", "xt-m1"]) == "t-m1"
    assert named_match("m1", ["t-m1", "xt-m1"]) is None
    assert named_match("m9", []) is None
    assert json.dumps(resolve_record("m2", path)) == json.dumps(resolve_record("t-m2", path))
    assert "t-m2" in str(_held_back_note(path, "m2"))
    assert "t-m1 " in str(_held_back_note(path, "t-m1"))
    with pytest.raises(LookupError, match="ambiguous, 2 matches"):
        resolve_record("m1", path)
    assert _held_back_note(path, "m1") is None
