"""Group commit (round 54): the stores a tournament's tables hand over together are written
in ONE transaction and one durable commit (``Storage.save_matches``), each match counted
done only once the commit holding it has returned; and the CPU of a store cut where it
was spent once a match for what is the same every match (a ruleset's opening bid, the
encoder for a list of ints)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from arena.storage import (
    MatchToStore,
    Storage,
    StorageError,
    StorageLockedError,
    opening_bid_of,
)
from engine import Ruleset
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

SEATS = ("ann", "bob", "cid")


def _match(i: int, *, faulty: bool = False, **record: Any) -> MatchToStore:
    """Match ``i`` of tournament "t", its record played by the fake referee (a timeout
    incident in it when ``faulty``); ``record``: keys of the record replaced."""
    fake = FakeReferee(faulty={"bob"} if faulty else None)
    rec = fake.play(Ruleset.from_dict({"max_deals": 3}), 1000 + i, list(SEATS))
    rec.update(record)
    return MatchToStore(
        f"t-m{i:05d}", i, i % 3, 0, 1000 + i, SEATS, rec, 1.0e9 + i, 1.0e9 + i + 0.25
    )


def _storage(path: Path) -> Storage:
    st = Storage(path)
    st.ensure_tournament("t", name="t", fingerprint="f", config={}, total_matches=99,
                         bots=[(b, "random") for b in SEATS])  # fmt: skip
    return st


def _rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a match store writes, in a stable order."""
    tables = {"matches": "idx", "match_players": "match_id, seat", "incidents": "id",
              "deals": "match_id, number"}  # fmt: skip
    with contextlib.closing(sqlite3.connect(db)) as c:
        return {
            t: c.execute(f"SELECT * FROM {t} ORDER BY {o}").fetchall() for t, o in tables.items()
        }


def _ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as c:
        return [r[0] for r in c.execute("SELECT id FROM matches ORDER BY idx")]


def test_a_group_is_stored_byte_for_byte_as_one_match_at_a_time(tmp_path: Path) -> None:
    """Every row of every table, the records' JSON among them, is the same stored in one
    group commit as stored a match at a time (with incidents, and a ruleset given by name)."""
    matches = [_match(i, faulty=i % 2 == 1) for i in range(6)]
    matches[5] = _match(5, ruleset="classic")
    with _storage(tmp_path / "one.sqlite") as st:
        for m in matches:
            st.save_match("t", match_id=m.match_id, index=m.index, table=m.table,
                          set_no=m.set_no, seed=m.seed, seats=m.seats, record=m.record,
                          started_at=m.started_at, finished_at=m.finished_at)  # fmt: skip
    with _storage(tmp_path / "group.sqlite") as st:
        assert st.save_matches("t", matches) == [None] * 6
    one, group = _rows(tmp_path / "one.sqlite"), _rows(tmp_path / "group.sqlite")
    assert len(one["matches"]) == 6 and len(one["incidents"]) == 2
    assert one == group


def test_a_group_is_one_transaction_and_one_commit(tmp_path: Path) -> None:
    """Five matches: one BEGIN IMMEDIATE and one COMMIT (one fsync), not five of each."""
    with _storage(tmp_path / "t.sqlite") as st:
        said: list[str] = []
        st.conn.set_trace_callback(said.append)
        assert st.save_matches("t", [_match(i) for i in range(5)]) == [None] * 5
        st.conn.set_trace_callback(None)
    assert [s for s in said if s in ("BEGIN IMMEDIATE", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"]
    assert len(_ids(tmp_path / "t.sqlite")) == 5


def test_a_match_that_cannot_be_stored_is_named_and_the_rest_of_its_group_stored(
    tmp_path: Path,
) -> None:
    """In one group: a record that is not JSON, a row SQLite cannot take (an incident's deal
    that is a mapping) and a match stored already (its index taken). Each error names its
    match; the other matches of the group are stored, in one commit."""
    db = tmp_path / "t.sqlite"
    with _storage(db) as st:
        st.save_matches("t", [_match(0)])
        taken = dataclasses.replace(_match(0), match_id="t-m00077")
        group = [
            _match(1),
            _match(2, extra={1, 2}),
            _match(3),
            _match(4, incidents=[{"kind": "timeout", "seat": 1, "deal": {"no": 1}}]),
            taken,
            _match(5),
        ]
        errors = st.save_matches("t", group)
    assert [e is None for e in errors] == [True, False, True, False, False, True]
    assert "match t-m00002: the record is not JSON" in str(errors[1])
    assert "while storing match t-m00004:" in str(errors[3])
    assert "while storing match t-m00077:" in str(errors[4])
    assert "UNIQUE" in str(errors[4])
    assert _ids(db) == ["t-m00000", "t-m00001", "t-m00003", "t-m00005"]


def test_an_error_of_the_commit_is_every_matchs_of_the_group(tmp_path: Path) -> None:
    """The database locked by another program: none of the group is stored, and each
    match's error is the lock's, naming the group's matches."""
    db = tmp_path / "t.sqlite"
    _storage(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Storage(db, timeout=0.05) as st:
            errors = st.save_matches("t", [_match(1), _match(2)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert all(isinstance(e, StorageLockedError) for e in errors), errors
    assert "storing matches t-m00001, t-m00002" in str(errors[0])
    assert _ids(db) == []


@pytest.mark.parametrize(
    "ruleset",
    [
        "classic",
        "1001",
        "no such preset",
        {"name": "classic", "opening_bid": 120},
        {"name": "classic", "talon_visible": 1},  # (1 == True to a dict key, not to the rules)
        {"name": "classic", "talon_visible": True},
        {"name": "classic", "bids": [1, 2]},  # (unhashable: loaded every time)
    ],
)
def test_the_opening_bid_kept_is_the_one_the_ruleset_loads_to(ruleset: Any) -> None:
    from arena import storage

    for players in (["a", "b", "c"], ["a", "b", "c", "d"]):
        record = {"ruleset": ruleset, "players": players}
        for _ in range(2):  # (the second time from what was kept)
            assert storage._opening_bid(record) == opening_bid_of(record)


@pytest.mark.parametrize(
    "value", [[0, 120, -120], [], [2**70, -1], [True, 1], [1.5, 2], (1, 2), None, [None], "x"]
)
def test_a_deals_figures_are_the_json_they_were(value: Any) -> None:
    from arena.storage import _json_list

    assert _json_list(value) == json.dumps(value)


def _grouped_saves(monkeypatch: pytest.MonkeyPatch, pause_s: float = 0.0) -> list[list[str]]:
    """The groups the runner stores (their match ids), each store ``pause_s`` slower after
    its commit (a slow fsync: the tables go on playing meanwhile)."""
    groups: list[list[str]] = []
    save = Storage.save_matches

    def recorded(self: Storage, tid: str, matches: Any) -> Any:
        errors = save(self, tid, matches)
        groups.append([m.match_id for m in matches])
        time.sleep(pause_s)
        return errors

    monkeypatch.setattr(Storage, "save_matches", recorded)
    return groups


def test_the_tables_stores_are_written_in_groups_and_counted_once_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At concurrency 8 the stores handed over together go in one commit (fewer commits
    than matches), and every match counted done is in the database when it is counted;
    the ratings are those of a run at concurrency 1 (one commit a match)."""
    from arena.tournament import runner
    from tests.support.harness import stored_matches

    cfg = make_config(tmp_path / "a", concurrency=8)
    counted: list[tuple[int, int]] = []
    update = runner._Display.update

    def checking(self: Any, book: Any, played: int) -> None:
        counted.append((played, stored_matches(cfg.db)))
        update(self, book, played)

    monkeypatch.setattr(runner._Display, "update", checking)
    groups = _grouped_saves(monkeypatch, pause_s=0.02)
    out = _run(cfg)
    assert out.finished and out.played_now == 24
    assert sorted(m for g in groups for m in g) == sorted(_ids(cfg.db))
    assert max(len(g) for g in groups) > 1 and len(groups) < 24, groups
    assert [p for p, _ in counted] == list(range(1, 25))
    assert all(stored >= played for played, stored in counted), counted
    monkeypatch.undo()
    one = make_config(tmp_path / "b", concurrency=1)
    assert _run(one).finished
    with Storage(cfg.db) as a, Storage(one.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(one.tournament_id)


def test_a_store_failing_in_a_group_stops_the_run_naming_its_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One match of a group cannot be stored (a row SQLite refuses): the run stops with an
    error naming that match, the other matches of its group are stored, and the same
    command, once the match can be stored, resumes to the ratings of a run never stopped."""
    from arena.tournament import TournamentError
    from arena.tournament.schedule import match_id

    cfg = make_config(tmp_path / "a", concurrency=8)
    bad = match_id(cfg.tournament_id, 3)

    class Refused(FakeReferee):
        async def run_match(self, mid: str, *a: Any, **kw: Any) -> dict[str, Any]:
            record = await super().run_match(mid, *a, **kw)
            if mid == bad:  # (a deal SQLite cannot bind)
                record["incidents"] = [{"kind": "timeout", "seat": 0, "deal": [1]}]
            return record

    groups = _grouped_saves(monkeypatch)
    with pytest.raises(TournamentError) as info:
        _run(cfg, Refused())
    assert f"while storing match {bad}:" in str(info.value)
    (with_bad,) = [g for g in groups if bad in g]
    assert len(with_bad) > 1, groups  # (a group, not a store of its own)
    stored = _ids(cfg.db)
    assert bad not in stored
    assert set(with_bad) - {bad} <= set(stored)
    again = _run(cfg)
    assert again.finished
    whole = make_config(tmp_path / "b", concurrency=8)
    assert _run(whole).finished
    with Storage(cfg.db) as a, Storage(whole.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(whole.tournament_id)


def test_a_table_waiting_for_its_store_has_its_group_written_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group waits for more stores (half the tables) or :data:`_GROUP_WAIT_S`; a table
    whose next match has ended needs its last one stored before it hands over another: its
    group is written then, not after the wait. With the wait made an hour, the run still
    ends (each store written when its table needs it), and no group holds more matches
    than there are tables."""
    from arena.tournament import runner

    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 3600.0)
    cfg = make_config(tmp_path, concurrency=3)
    groups = _grouped_saves(monkeypatch)
    out = _run(cfg)
    assert out.finished and out.played_now == 24
    assert sum(len(g) for g in groups) == 24 and max(len(g) for g in groups) <= 3


def test_a_record_of_another_shape_is_a_storage_error_naming_its_match() -> None:
    """A record whose figures are not numbers (``result.deals`` a word) is a StorageError
    naming its match (the runner stops on those, saying why), not a ValueError raised on
    the storage thread, which ended the run with a traceback."""
    m = _match(1)
    result = {"scores": [1, 2, 3], "places": [1, 2, 3], "deals": "many"}
    odd = dataclasses.replace(m, record={**m.record, "result": result})
    from arena.storage import _match_rows

    with pytest.raises(StorageError, match="match t-m00001: the record cannot be stored"):
        _match_rows("t", odd)
