"""What a tournament counts as recording (``TournamentOutcome.record_s``, the share `arena
bench tournament` holds to under 5 %): everything its results cost the tables, not only the
storage thread's CPU time."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

#: Seconds each store waits without using the CPU, as a commit's fsync on a slow disk does.
SLOW_COMMIT_S = 0.05


def _slow_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    save = Storage.save_match

    def save_then_wait(self: Storage, *args: Any, **kwargs: Any) -> None:
        save(self, *args, **kwargs)
        time.sleep(SLOW_COMMIT_S)

    monkeypatch.setattr(Storage, "save_match", save_then_wait)


def test_a_commit_the_table_waits_for_counts_as_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At concurrency 1 the next match waits for the store of the one before: a commit's
    fsync (time waited, not CPU) is tournament time spent recording. Only the storing's CPU
    time was counted: a tournament that spent most of its time waiting for its commits
    reported a share of a few percent."""
    _slow_commits(monkeypatch)
    out = _run(make_config(tmp_path, concurrency=1))
    assert out.finished and out.played_now == 24
    # The fake matches take a few ms of engine work each: the stores' waits are most of
    # the run, and at least 20 of the 24 (the last one's always: nothing overlaps it).
    assert out.record_wait_s >= 20 * SLOW_COMMIT_S
    assert out.record_s >= out.record_wait_s + out.finalize_s
    assert out.record_s > 0.5 * out.play_s


def test_the_referees_record_building_counts_as_recording(tmp_path: Path) -> None:
    """The record a referee builds at a match's end (and its record file's lines) is the
    match's recording too: the runner adds what the referee measured of it."""

    class Measured(FakeReferee):
        record_cpu_s = 3.0  # (as Referee sums its matches' MatchRunner.record_cpu_s)

    out = _run(make_config(tmp_path), Measured())
    assert out.finished
    assert out.record_s >= 3.0 + out.finalize_s


def test_a_referee_measures_the_building_of_each_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Referee.record_cpu_s``: the CPU time its matches spent building their records at
    their end (``MatchRunner._final_record``), summed over its matches."""
    import arena.referee.match as match_mod
    from sdk import Bot
    from tests.support import harness

    built = match_mod.engine_record
    burnt: list[float] = []

    def slow_record(game: Any) -> dict[str, Any]:
        t = time.thread_time()
        while time.thread_time() - t < 0.03:  # CPU, as a large record's building takes
            pass
        burnt.append(time.thread_time() - t)
        return built(game)

    referees: list[Any] = []

    class Kept(harness.Referee):  # type: ignore[name-defined,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            referees.append(self)

    monkeypatch.setattr(match_mod, "engine_record", slow_record)
    monkeypatch.setattr(harness, "Referee", Kept)
    rec = harness.play_sdk_match(Bot, max_deals=1)
    assert rec["result"] is not None and len(referees) == 1
    assert burnt and referees[0].record_cpu_s >= sum(burnt)


def test_a_table_plays_its_next_match_while_its_last_one_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At concurrency 1 the store of a match (its commit's fsync) overlaps the next match:
    the first store waits until the next match has started. Before, the table waited for
    every store, so this store waited in vain (its wait's bound) and the run took longer."""
    import threading

    fake = FakeReferee()
    next_started = threading.Event()
    run_match = fake.run_match

    async def noting(match_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if fake.calls:  # (a match before this one was played: its store is under way)
            next_started.set()
        return await run_match(match_id, *args, **kwargs)

    fake.run_match = noting  # type: ignore[method-assign]
    seen: list[bool] = []
    save = Storage.save_match

    def first_waits(self: Storage, *args: Any, **kwargs: Any) -> None:
        save(self, *args, **kwargs)
        if not seen:
            seen.append(next_started.wait(timeout=10))

    monkeypatch.setattr(Storage, "save_match", first_waits)
    out = _run(make_config(tmp_path, concurrency=1), fake)
    assert out.finished and out.played_now == 24
    assert seen == [True]


def test_a_match_is_counted_only_once_it_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever overlaps, every match counted done (the progress, ``played_now``) is in the
    database by then: the count follows the commit, never the end of the match."""
    from arena.tournament import runner
    from tests.support.harness import stored_matches

    cfg = make_config(tmp_path, concurrency=3)
    counted: list[tuple[int, int]] = []
    update = runner._Display.update

    def checking(self: Any, book: Any, played: int) -> None:
        counted.append((played, stored_matches(cfg.db)))
        update(self, book, played)

    monkeypatch.setattr(runner._Display, "update", checking)
    _slow_commits(monkeypatch)  # (stores finish well after their matches)
    out = _run(cfg)
    assert out.finished and [p for p, _ in counted] == list(range(1, 25))
    assert all(stored >= played for played, stored in counted), counted


def test_a_store_that_fails_stops_the_run_and_loses_no_stored_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store failing while its table plays the next match: the run stops with the error
    (no new match is started after it), every match stored before it is kept, and the
    same command resumes the tournament to the same results as a run never stopped."""
    from arena.storage import StorageError
    from arena.tournament import TournamentError

    cfg = make_config(tmp_path / "a", concurrency=1)
    save = Storage.save_match
    saves: list[str] = []

    def fails_fourth(self: Storage, *args: Any, **kwargs: Any) -> None:
        saves.append(kwargs["match_id"])
        if len(saves) == 4:
            raise StorageError("disk I/O error (scripted)")
        save(self, *args, **kwargs)

    monkeypatch.setattr(Storage, "save_match", fails_fourth)
    fake = FakeReferee()
    with pytest.raises(TournamentError, match="scripted"):
        _run(cfg, fake)
    assert len(saves) == 4 and sum(fake.calls.values()) <= 5  # (the 5th was under way)
    with Storage(cfg.db) as st:
        assert sorted(st.completed_indices(cfg.tournament_id)) == [0, 1, 2]
    monkeypatch.setattr(Storage, "save_match", save)
    again = _run(cfg)
    assert again.finished and again.played_now == 21
    whole = make_config(tmp_path / "b", concurrency=1)
    assert _run(whole).finished
    with Storage(cfg.db) as a, Storage(whole.db) as b:
        assert a.rating_history(cfg.tournament_id) == b.rating_history(whole.tournament_id)
