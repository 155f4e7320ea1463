"""Review round 54e: hand mutants of round 54's group commit (``Storage.save_matches``,
``MatchToStore``, the runner's ``_GroupStores``; commits b9efafc6, 83ed6e00, 22fc1b84).
Each test names the mutants it kills (S: arena/storage.py, R: arena/tournament/runner.py;
the edit in the docstring). ``_GroupStores`` is driven here with an executor that holds
each group until the test says how its commit went (:class:`_Gate`): when a group is
written, and with which matches, is then a fact of the code, not of the machine's speed.

60 hand mutants (S01-S30 storage, R01-R30 runner; R27-R30 of this round's fixes): the
existing tests killed 15 (S24 only through the recording test's hook on ``save_match``);
the tests here and in tests/faults/test_group_commit_faults_round54.py kill 34 (the runner's
were run against these first: a few, R11 say, the round's own tests kill too); 11 are
equivalent: S03 (a tuple's JSON is a list's), S06 (no group of no match), S09
(``InterfaceError``: Python 3.11 raises ``ProgrammingError`` for a value it cannot bind),
S12 (no ruleset's opening bid depends on its number of players today), S13 (the opening
bids' cache cleared each time: slower, the same), S17 (foreign keys are immediate: a
COMMIT raises no error of one match's), S18 (a group of one refused: the same error either
way), S26 (``executemany`` of no incident), R02 (a group of 0 writes as one of 1 does),
R14 (the timer re-armed after a write: unreachable since the fix), R25 (nothing is handed
over after ``close``).

A defect, fixed (``test_a_group_due_while_another_is_written_goes_next``): a store whose
wait ran out while another group was being written waited a whole ``_GROUP_WAIT_S`` again
once that write returned (the timer's write found the thread busy and was forgotten).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sqlite3
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest

from arena.storage import MatchToStore, Storage, StorageError, StorageLockedError
from arena.tournament import RunOptions, run_tournament, runner
from engine import Ruleset
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

SEATS = ("ann", "bob", "cid")


class _Gate:
    """A storage "thread" that holds every group handed to it until :meth:`finish`."""

    def __init__(self) -> None:
        self.jobs: list[tuple[tuple[Any, ...], Future[Any]]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        assert fn is runner._store_group
        done: Future[Any] = Future()
        self.jobs.append((args, done))
        return done

    def groups(self) -> list[list[str]]:
        return [[m.match_id for m in args[2]] for args, _ in self.jobs]

    def finish(self, k: int, errors: list[StorageError | None] | None = None,
               cpu: float = 0.0, raised: BaseException | None = None) -> None:  # fmt: skip
        args, done = self.jobs[k]
        if raised is not None:
            done.set_exception(raised)
        else:
            done.set_result((errors or [None] * len(args[2]), cpu))


def _m(name: str) -> MatchToStore:
    return MatchToStore(name, 0, 0, 0, 1, SEATS, {}, 0.0, 0.0)


async def _turns() -> None:
    """Let the loop run what is due now (a finished group's callback, a 0 s timer)."""
    for _ in range(5):
        await asyncio.sleep(0)


def _drive(
    test: Callable[[runner._GroupStores, _Gate, list[StorageError]], Coroutine[Any, Any, None]],
    group: int,
) -> list[StorageError]:
    """Run ``test`` with a fresh ``_GroupStores`` of group size ``group`` on a gate; the
    errors it reported to the run (its ``on_error``)."""
    fatal: list[StorageError] = []

    async def main() -> None:
        gate = _Gate()
        thread = cast(ThreadPoolExecutor, gate)
        stores = runner._GroupStores(cast(Storage, None), "t", thread, group, fatal.append)
        await test(stores, gate, fatal)

    asyncio.run(main())
    return fatal


@pytest.fixture
def long_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wait for company no test lives to see: a group written is written for a reason."""
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 3600.0)


@pytest.mark.usefixtures("long_wait")
def test_a_group_is_written_once_it_holds_its_size() -> None:
    """R03 (``len(waiting) > group``: a group waited for one more than its size)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        stores.submit(_m("a"))
        assert gate.groups() == []
        stores.submit(_m("b"))
        assert gate.groups() == [["a", "b"]]

    _drive(test, group=2)


def test_a_lone_store_is_written_once_its_wait_is_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """R04 (no timer armed by ``submit``: a store waited for a table to need it or for a
    full group, however long its table's next match took: uncommitted all that time)."""
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 0.0)

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        stores.submit(_m("a"))
        await _turns()
        assert gate.groups() == [["a"]]

    _drive(test, group=4)


@pytest.mark.usefixtures("long_wait")
def test_a_store_a_table_needs_is_written_at_once() -> None:
    """R06 (``need`` sets ``_asked`` and does not write: the table waited for the timer)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        a = stores.submit(_m("a"))
        stores.need(a)
        assert gate.groups() == [["a"]]
        gate.finish(0, cpu=0.5)
        await _turns()
        assert a.result() == 0.5

    _drive(test, group=4)


@pytest.mark.usefixtures("long_wait")
def test_a_store_needed_while_a_group_is_written_goes_next() -> None:
    """R05 (``need`` does not set ``_asked``: the store needed while the thread was busy
    waited the whole ``_GROUP_WAIT_S`` after that write) and R13 (nothing written when a
    group returns: the same)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        for name in "abcd":
            stores.submit(_m(name))
        e = stores.submit(_m("e"))
        stores.need(e)
        assert gate.groups() == [["a", "b", "c", "d"]]  # (one group at a time)
        gate.finish(0)
        await _turns()
        assert gate.groups() == [["a", "b", "c", "d"], ["e"]]

    _drive(test, group=4)


@pytest.mark.usefixtures("long_wait")
def test_a_store_on_the_thread_needed_does_not_hurry_the_next_group() -> None:
    """R07 (``need`` of any future hurries the waiting ones: a table waiting for a store
    already on the thread had the next group written in pieces) and R09 (``_asked`` not
    cleared when a group is taken: every later group written alone, at once)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        a = stores.submit(_m("a"))
        stores.need(a)  # (written alone: asked, then cleared)
        b = stores.submit(_m("b"))
        stores.need(a)  # (on the thread: b keeps waiting for company)
        gate.finish(0)
        await _turns()
        assert gate.groups() == [["a"]] and not b.done()
        for name in "cde":
            stores.submit(_m(name))
        assert gate.groups() == [["a"], ["b", "c", "d", "e"]]

    _drive(test, group=4)


@pytest.mark.usefixtures("long_wait")
def test_one_group_at_a_time_on_the_thread_the_next_gathering() -> None:
    """R08 (no ``_writing`` check: a second group handed to the thread while the first was
    written, each smaller; the stores gather while a group is written)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        for name in "abcde":
            stores.submit(_m(name))
        assert gate.groups() == [["a", "b"]]
        gate.finish(0)
        await _turns()
        assert gate.groups() == [["a", "b"], ["c", "d", "e"]]

    _drive(test, group=2)


@pytest.mark.usefixtures("long_wait")
def test_each_match_is_given_its_share_of_the_groups_cpu() -> None:
    """R10 (each match given the whole group's CPU: the recording share counted a group's
    CPU once a match)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        futures = [stores.submit(_m(name)) for name in "abcd"]
        gate.finish(0, cpu=0.5)
        await _turns()
        assert [f.result() for f in futures] == [0.125] * 4

    _drive(test, group=4)


@pytest.mark.usefixtures("long_wait")
def test_a_refused_match_is_the_runs_error_and_its_own_only() -> None:
    """R11 (``on_error`` not called: the run went on, and ended "finished" without the
    match); the other matches of the group are stored."""
    refused = StorageError("match b refused")

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        a, b = stores.submit(_m("a")), stores.submit(_m("b"))
        gate.finish(0, errors=[None, refused])
        await _turns()
        assert a.result() == 0.0 and b.exception() is refused

    assert _drive(test, group=2) == [refused]


@pytest.mark.usefixtures("long_wait")
def test_a_table_stopped_meanwhile_takes_nothing_from_the_others() -> None:
    """R12 (a cancelled future given its result: InvalidStateError in the callback, the
    group's other matches never told they were stored, the next group never written)."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        a, b = stores.submit(_m("a")), stores.submit(_m("b"))
        c = stores.submit(_m("c"))
        stores.need(c)
        a.cancel()
        gate.finish(0)
        await _turns()
        assert b.result() == 0.0
        assert gate.groups() == [["a", "b"], ["c"]]

    _drive(test, group=2)


@pytest.mark.usefixtures("long_wait")
def test_a_store_that_raises_raises_for_each_match_of_its_group() -> None:
    """R15 (an error that is not a StorageError, a defect, given to none of the group's
    matches: their tables waited for ever)."""
    bug = RuntimeError("a defect")

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        futures = [stores.submit(_m(name)) for name in "ab"]
        gate.finish(0, raised=bug)
        await _turns()
        assert [f.exception() for f in futures] == [bug, bug]

    _drive(test, group=2)


@pytest.mark.usefixtures("long_wait")
def test_a_defect_in_a_store_no_table_awaits_any_more_is_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """R28 (this round's fix: an error that is not a StorageError, of a group whose
    tables were all stopped meanwhile, said nowhere)."""
    bug = RuntimeError("a defect in the store")

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        futures = [stores.submit(_m(name)) for name in "ab"]
        for f in futures:
            f.cancel()
        with caplog.at_level(logging.ERROR, logger=runner.log.name):
            gate.finish(0, raised=bug)
            await _turns()

    _drive(test, group=2)
    assert [r.getMessage() for r in caplog.records] == [str(bug)]


@pytest.mark.usefixtures("long_wait")
def test_close_writes_what_waits_uncounted_and_says_why_it_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """R16 (``close`` writes nothing: the stores waiting when a signal came were lost and
    played again), R18 (their futures left pending, not cancelled: counted by nobody, but
    never said to be uncounted) and R17/R26 (the error of that last write not logged).
    The group's error, every match's, is said once (fixed with the round's other logging,
    see tests/faults/test_group_commit_faults_round54.py)."""
    full = StorageError("the disk is full while storing matches a, b")

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        futures = [stores.submit(_m(name)) for name in "ab"]
        stores.close()
        assert gate.groups() == [["a", "b"]]
        assert all(f.cancelled() for f in futures)
        with caplog.at_level(logging.ERROR, logger=runner.log.name):
            gate.finish(0, errors=[full, full])
        await _turns()

    _drive(test, group=4)
    assert [r.getMessage() for r in caplog.records] == [str(full)]


@pytest.mark.usefixtures("long_wait")
def test_a_group_due_while_another_is_written_goes_next() -> None:
    """Defect: a store's wait that ran out while another group was on the thread was
    forgotten (the timer's write found the thread busy, and did nothing), and a whole new
    ``_GROUP_WAIT_S`` began when that write returned: the store stayed uncommitted for
    the length of a write plus two waits, not one. Now a group due is written as soon as
    the thread is free, as a group a table needs is."""

    async def test(stores: runner._GroupStores, gate: _Gate, _: Any) -> None:
        for name in "abcd":
            stores.submit(_m(name))
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(runner, "_GROUP_WAIT_S", 0.0)  # (e's wait runs out at once...)
            e = stores.submit(_m("e"))
            await _turns()
        assert gate.groups() == [["a", "b", "c", "d"]]  # (...while a-d are written)
        gate.finish(0)
        await _turns()
        assert gate.groups() == [["a", "b", "c", "d"], ["e"]], "e waits another hour"
        gate.finish(1)
        await _turns()
        assert e.result() == 0.0

    _drive(test, group=4)


def test_a_groups_cpu_is_its_threads_not_its_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """R22 (``perf_counter`` for ``thread_time``: the commit's fsync, a wait, counted as
    the storage thread's CPU)."""
    clock = iter([10.0, 10.25])
    monkeypatch.setattr(time, "thread_time", lambda: next(clock))

    class Saving:
        def save_matches(self, tid: str, matches: Any) -> list[None]:
            return [None] * len(matches)

    errors, cpu = runner._store_group(cast(Storage, Saving()), "t", [_m("a"), _m("b")])
    assert errors == [None, None] and cpu == 0.25


def test_a_group_is_half_the_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """R01 (the group is the concurrency: a group was written only when every table had a
    store waiting, never while some play; each store waited for its table's need or the
    timer)."""
    sizes: list[int] = []
    real = runner._GroupStores.__init__

    def init(self: runner._GroupStores, *a: Any, **kw: Any) -> None:
        real(self, *a, **kw)
        sizes.append(self._group)

    monkeypatch.setattr(runner._GroupStores, "__init__", init)
    for c in (2, 8):
        assert _run(make_config(tmp_path / str(c), concurrency=c, max_deals=1)).finished
    assert sizes == [1, 4]


async def _guarded(cfg: Any, referee: Any) -> Any:
    """The tournament on ``referee``; a run that hangs fails the test (in a minute)."""
    return await asyncio.wait_for(
        run_tournament(cfg, RunOptions(progress=False), referee_factory=lambda _c: referee,
                       serve=False, launch_bots=False),
        60,
    )  # fmt: skip


@pytest.mark.usefixtures("long_wait")
def test_the_last_matches_are_stored_without_waiting_for_company(tmp_path: Path) -> None:
    """R20 (the table's last store not needed: with more tables than matches no group
    fills, and the run's end waited ``_GROUP_WAIT_S`` for its last stores; an hour here)."""
    cfg = make_config(tmp_path, bots=3, concurrency=16, max_deals=1)
    out = asyncio.run(_guarded(cfg, FakeReferee()))
    assert out.finished and out.played_now == out.total == 6


@pytest.mark.usefixtures("long_wait")
def test_a_table_whose_next_match_ended_has_its_store_written(tmp_path: Path) -> None:
    """R19 (a table's store not needed when its next match ends: the table waited for its
    group to fill or for the timer). One table plays its matches while the three others
    wait for it to start its third: it can only if its first two were stored without a
    group (the others have none to add) and without the hour's wait."""
    cfg = make_config(tmp_path, concurrency=4, max_deals=1)

    class OneTable(FakeReferee):
        def __init__(self) -> None:
            super().__init__()
            self.fast: asyncio.Task[Any] | None = None
            self.third = asyncio.Event()
            self.its: list[str] = []

        async def run_match(self, mid: str, *a: Any, **kw: Any) -> dict[str, Any]:
            me = asyncio.current_task()
            if self.fast is None:
                self.fast = me
            if me is self.fast:
                self.its.append(mid)
                if len(self.its) == 3:
                    self.third.set()
            else:
                await self.third.wait()
            return await super().run_match(mid, *a, **kw)

    referee = OneTable()
    out = asyncio.run(_guarded(cfg, referee))
    assert out.finished and out.played_now == 24 and len(referee.its) >= 3


@pytest.mark.usefixtures("long_wait")
def test_a_signal_while_stores_wait_stores_them(tmp_path: Path) -> None:
    """R21 (``stores.close()`` not called when the run stops: the matches handed over and
    waiting for company were never written, and were played again). The run is cancelled
    as its first store waits alone: that match is stored, and not counted."""
    cfg = make_config(tmp_path, concurrency=8, max_deals=1)
    handed: list[str] = []

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        stop = task.cancel

        class Stopping(FakeReferee):
            async def run_match(self, mid: str, *a: Any, **kw: Any) -> dict[str, Any]:
                record = await super().run_match(mid, *a, **kw)
                if not handed:
                    handed.append(mid)
                    asyncio.get_running_loop().call_soon(stop)  # (once it is handed)
                else:
                    await asyncio.sleep(3600)  # (the others: still playing)
                return record

        with pytest.raises(asyncio.CancelledError):
            await _guarded(cfg, Stopping())

    asyncio.run(main())
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        assert [r[0] for r in c.execute("SELECT id FROM matches")] == handed


def test_the_stored_times_and_table_are_the_matchs(tmp_path: Path) -> None:
    """R23 (started and finished swapped: every match stored as lasting 0 s, finished
    before it started) and R24 (table and deal set swapped in the match handed over)."""
    cfg = make_config(tmp_path, concurrency=8, matches_per_table=2)

    class Slow(FakeReferee):
        async def run_match(self, *a: Any, **kw: Any) -> dict[str, Any]:
            await asyncio.sleep(0.01)  # (a match lasts: its end is after its start)
            return await super().run_match(*a, **kw)

    assert _run(cfg, Slow()).finished
    want = {m.index: (m.table, m.set_no) for m in cfg.schedule()}
    assert len({t for t, _ in want.values()}) > 1 and len({s for _, s in want.values()}) > 1
    with contextlib.closing(sqlite3.connect(cfg.db)) as c:
        rows = c.execute(
            "SELECT idx, table_no, set_no, started_at < finished_at, duration_s FROM matches"
        ).fetchall()
    assert {i: (t, s) for i, t, s, _, _ in rows} == want
    assert all(before and d > 0 for _, _, _, before, d in rows), rows


# ---------------------------------------------------------------- Storage.save_matches


def _match(i: int, **record: Any) -> MatchToStore:
    rec = FakeReferee().play(Ruleset.from_dict({"max_deals": 3}), 1000 + i, list(SEATS))
    rec.update(record)
    return MatchToStore(f"t-m{i:05d}", i, 0, 0, 1000 + i, SEATS, rec, 1.0e9, 1.0e9 + 1)


def _storage(path: Path, **kw: Any) -> Storage:
    st = Storage(path, **kw)
    st.ensure_tournament("t", name="t", fingerprint="f", config={}, total_matches=99,
                         bots=[(b, "random") for b in SEATS])  # fmt: skip
    return st


def _ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return [r[0] for r in c.execute("SELECT id FROM matches ORDER BY idx")]


@pytest.mark.parametrize("n", [8, 9])
def test_a_groups_error_names_its_first_eight_matches_and_counts_them(
    tmp_path: Path, n: int
) -> None:
    """S04 (``len(ids) >= 8``: a group of eight named as "... (8 in all)") and S05 (every
    match of a large group named, however many)."""
    db = tmp_path / "t.sqlite"
    _storage(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Storage(db, timeout=0.05) as st:
            errors = st.save_matches("t", [_match(i) for i in range(n)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert all(isinstance(e, StorageLockedError) for e in errors)
    named = ", ".join(f"t-m{i:05d}" for i in range(8))
    said = str(errors[0])
    assert f"storing matches {named}" + (f", ... ({n} in all) (" if n > 8 else " (") in said, said
    assert "t-m00008" not in said


def test_a_record_too_big_for_sqlite_is_its_own_error(tmp_path: Path) -> None:
    """S10 (``sqlite3.DataError`` not one match's: a record over SQLite's length limit
    kept its whole group out, every match of it named)."""
    db = tmp_path / "t.sqlite"
    with _storage(db) as st:
        st.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 20_000)
        group = [_match(1), _match(2, padding="x" * 30_000), _match(3)]
        errors = st.save_matches("t", group)
    assert [e is None for e in errors] == [True, False, True]
    assert "match t-m00002" in str(errors[1]) and "t-m00001" not in str(errors[1])
    assert _ids(db) == ["t-m00001", "t-m00003"]


def test_a_record_whose_incidents_are_not_mappings_is_its_own_error(tmp_path: Path) -> None:
    """S16 (AttributeError not caught while building the rows: a record whose incident is
    a word raised on the storage thread, its group and the run ended by a traceback)."""
    db = tmp_path / "t.sqlite"
    with _storage(db) as st:
        errors = st.save_matches("t", [_match(1), _match(2, incidents=["timeout"]), _match(3)])
    assert [e is None for e in errors] == [True, False, True]
    assert "match t-m00002: the record cannot be stored" in str(errors[1])
    assert _ids(db) == ["t-m00001", "t-m00003"]


def test_deals_without_numbers_are_numbered_in_order(tmp_path: Path) -> None:
    """S15 (a deal without ``number`` numbered from 1: the record's deals are 0-based, as
    ``deal_summary``'s readers and the replay count them)."""
    m = _match(1)
    deals = [{k: v for k, v in d.items() if k != "number"} for d in m.record["deals"]]
    db = tmp_path / "t.sqlite"
    with _storage(db) as st:
        assert st.save_matches("t", [dataclasses.replace(m, record={**m.record, "deals": deals}),
                                     _match(2)]) == [None, None]  # fmt: skip
    with contextlib.closing(sqlite3.connect(db)) as c:
        numbers = [r[0] for r in c.execute(
            "SELECT number FROM deals WHERE match_id = 't-m00001' ORDER BY number")]  # fmt: skip
    assert numbers == list(range(len(deals))) and len(deals) > 1


def test_a_file_lost_under_a_group_is_every_matchs_error(tmp_path: Path) -> None:
    """S22 (the file-identity check skipped after a group's commit: a database deleted
    while the run wrote on was never said, the run ended "stored" with nothing at its
    path) and S23 (only the first match of the group given the error: the others counted
    done, in no file at the path)."""
    db = tmp_path / "t.sqlite"
    with _storage(db) as st:
        st.save_matches("t", [_match(0), _match(1)])
        for p in tmp_path.glob("t.sqlite*"):
            p.unlink()
        errors = st.save_matches("t", [_match(2), _match(3), _match(4)])
    assert all(e is not None and "deleted or replaced" in str(e) for e in errors), errors
    assert errors[0] is errors[1] is errors[2]
    assert _ids(db) == [f"t-m{i:05d}" for i in range(5)]  # (written back to the path)
