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
