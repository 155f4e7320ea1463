"""A tournament killed (SIGKILL) while its stores are written in groups (round 54's group
commit): between two group commits, and inside a group's transaction. Every match counted
done before the kill is in the database, whole; a group killed before its commit left none
of its matches; and the same tournament run again ends with the ratings of a run never
killed."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.storage import Storage
from tests.arena.fake_referee import make_config
from tests.arena.fake_referee import run_fake as _run

ROOT = Path(__file__).resolve().parents[2]

#: A tournament of the fake referee at concurrency 8 (groups of 4 form), killed at the
#: 4th store: at its start ("between": 3 committed), or inside the transaction of the
#: first group of several from then on, its rows written and its COMMIT not yet
#: ("inside"). Each match counted is printed as it is counted.
_KILLED = """
import os, signal, sys
from pathlib import Path
from arena.storage import Storage
from arena.tournament import runner
from tests.arena.fake_referee import make_config, run_fake

where = sys.argv[2]
groups = []

def say(*words):  # (one write a line: the storage thread and the loop's do not mix)
    os.write(1, (" ".join(map(str, words)) + "\\n").encode())

def die():
    os.kill(os.getpid(), signal.SIGKILL)

real_group = Storage._save_group

def save_group(self, tid, matches):
    groups.append([m.match_id for m in matches])
    if len(groups) == 4 and where == "between":
        die()
    return real_group(self, tid, matches)

real_insert = Storage._insert_match

def insert(c, rows):
    real_insert(c, rows)
    last = groups[-1]
    if len(groups) >= 4 and where == "inside" and len(last) > 1 and rows.match_id == last[-1]:
        say("group", *last)
        die()

update = runner._Display.update

def counted(self, book, played):
    say("counted", played)
    update(self, book, played)

Storage._save_group = save_group
Storage._insert_match = staticmethod(insert)
runner._Display.update = counted
run_fake(make_config(Path(sys.argv[1]), concurrency=8, max_deals=2))
say("not killed", groups)
"""


@pytest.mark.parametrize("where", ["between", "inside"])
def test_a_crash_amid_group_commits_loses_no_counted_match(tmp_path: Path, where: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED, str(run), where],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr[-3000:]
    said = killed.stdout.split("\n")
    counted = max((int(s.split()[1]) for s in said if s.startswith("counted ")), default=0)
    cfg = make_config(run, concurrency=8, max_deals=2)
    with contextlib.closing(sqlite3.connect(f"{cfg.db.as_uri()}?mode=ro", uri=True)) as c:
        stored = {r[0]: r[1] for r in c.execute("SELECT id, deals FROM matches")}
        players = dict(c.execute("SELECT match_id, COUNT(*) FROM match_players GROUP BY 1"))
        deals = dict(c.execute("SELECT match_id, COUNT(*) FROM deals GROUP BY 1"))
    # Every match counted is stored (3 groups were committed: some were counted), each
    # whole: its players and its deals with it.
    assert 0 < counted <= len(stored) < 24, (counted, sorted(stored))
    assert all(players[m] == 3 and deals[m] == n for m, n in stored.items())
    if where == "inside":
        (group,) = [s.split()[1:] for s in said if s.startswith("group ")]
        assert len(group) > 1 and not set(group) & set(stored), (group, sorted(stored))
    again = _run(cfg)
    assert again.finished and again.played_now == 24 - len(stored)
    whole = make_config(tmp_path / "whole", concurrency=8, max_deals=2)
    assert _run(whole).finished
    with Storage(cfg.db) as a, Storage(whole.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(whole.tournament_id)
