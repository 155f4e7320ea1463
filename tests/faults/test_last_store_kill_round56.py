"""SIGKILL while the tables' last stores wait for company (limits round 56: a check).

Since round 55 a table with no match left hands its last store over without needing it:
it may wait (up to ``_GROUP_WAIT_S``, half a second) to be written with others while other
tables still play (docs/performance.md, "The end of a run, stored together"). Checked here
that a crash in that wait loses no match and counts none twice: the run is killed while
three tables' last stores wait (the fourth table still plays, and the stores are written
only when a table needs one, so they surely wait). Every match counted before the kill
is in the database; the three that waited are not (handed over, never committed, never
counted); the same command run again plays exactly the matches not stored, each once,
and ends with the ratings of a run never killed, one match at a time. (A stop by a signal,
SIGINT, writes them instead: tests/arena/test_run_ends_round55.py.)
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from arena.storage import Storage
from tests.arena.fake_referee import make_config
from tests.arena.fake_referee import run_fake as _run
from tests.arena.test_run_ends_round55 import _config, _stored_ids

ROOT = Path(__file__).resolve().parents[2]

#: The tournament of ``_config`` (4 tables, 24 matches), its stores written only when a
#: table needs one, killed by itself once every match but the last one playing has been
#: handed over. Prints a JSON line at each count (the matches stored then) and, before the
#: kill, the matches handed over and the stores waiting.
_KILLED_WHILE_ENDS_WAIT = """
import asyncio, contextlib, json, os, signal, sqlite3, sys
from pathlib import Path
import pytest
from arena.tournament import runner
from tests.arena.test_run_ends_round55 import _Handed, _config, _no_group_but_needs
from tests.arena.fake_referee import FakeReferee, run_fake

cfg = _config(Path(sys.argv[1]))
mp = pytest.MonkeyPatch()
_no_group_but_needs(mp)
handed = _Handed(mp)

def say(**what):  # (one write a line: the storage thread's and the loop's do not mix)
    os.write(1, (json.dumps(what) + "\\n").encode())

def stored():
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        return c.execute("SELECT COUNT(*) FROM matches").fetchone()[0]

class Killed(FakeReferee):
    async def run_match(self, mid, *args, **kwargs):
        last = sum(self.calls.values()) == 23  # (the last match to start)
        record = await super().run_match(mid, *args, **kwargs)
        if last:
            while len(handed.ids) < 23:
                await asyncio.sleep(0.001)
            waiting = [m.match_id for m, _ in handed.stores[0]._waiting]
            say(handed=handed.ids, waiting=waiting, writing=handed.writing())
            os.kill(os.getpid(), signal.SIGKILL)
        return record

update = runner._Display.update

def count(self, book, played):
    say(counted=played, stored=stored())
    update(self, book, played)

mp.setattr(runner._Display, "update", count)
run_fake(cfg, Killed())
say(not_killed=True)
"""


def test_a_kill_while_the_ends_wait_loses_no_match_and_counts_none_twice(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    killed = subprocess.run([sys.executable, "-c", _KILLED_WHILE_ENDS_WAIT, str(run)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr[-3000:]
    lines = [json.loads(line) for line in killed.stdout.splitlines()]
    (before,) = [s for s in lines if "handed" in s]
    counted = [s for s in lines if "counted" in s]
    # three tables had stopped, their last stores waiting (not on the storage thread)
    assert len(before["handed"]) == 23 and len(before["waiting"]) >= 3, before
    assert not before["writing"], before
    cfg = _config(run)
    stored = _stored_ids(cfg.db)
    # every match counted was stored when counted, and is stored now; the waiting ones
    # were never committed: not stored, not counted
    assert all(s["stored"] >= s["counted"] for s in counted), counted
    assert len(stored) >= max((s["counted"] for s in counted), default=0)
    assert not set(before["waiting"]) & set(stored), (before, stored)
    assert set(stored) == set(before["handed"]) - set(before["waiting"])
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        rows = c.execute("SELECT m.deals, (SELECT COUNT(*) FROM deals d"
                         " WHERE d.match_id = m.id) FROM matches m").fetchall()  # fmt: skip
    assert rows and all(deals == n for deals, n in rows)  # each stored match whole
    # the resume plays the 24 - stored matches left, each once (the waiting ones again)
    again = _run(cfg)
    assert again.finished and again.played_now == 24 - len(stored)
    assert len(_stored_ids(cfg.db)) == len(set(_stored_ids(cfg.db))) == 24
    one = make_config(tmp_path / "one", concurrency=1, max_deals=2)
    assert _run(one).finished
    with Storage(cfg.db) as a, Storage(one.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(one.tournament_id)
