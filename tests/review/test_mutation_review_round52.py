"""Review round 52: a coverage-guided mutation review of the tournament runner, storage and
ratings (arena/tournament/runner.py, schedule.py, config.py, arena/storage.py,
arena/ratings.py, arena/ffa_trueskill.py). Each test names the mutant it kills (its id and
the edit in the docstring); tournaments are played in process against the fake referee.

Coverage first (``coverage run --branch`` over tests/arena and tests/cli, not slow): 87% of
those modules' statements and branches (runner 81%, storage 84%), the mutants then made
mostly where it is thin. 74 hand mutants (R 31 runner, D 22 storage, T 6 ratings, F 5
ffa_trueskill, S 2 schedule, C 8 config): the existing tests killed 33 (C1 by round 51's
review test); the tests here kill 36 more; 3 are equivalent (R23: the store of a
tournament of no match, which no config schedules; D9: a listed bot's position counted
again, positions being only sorted; T1: a match of one seat refused by trueskill's
ValueError instead of ours); F2 and F4 are left (the fast path's guard against an infinite
precision and its ValueError fallback: no input was found that reaches them and tells the
two apart).

A defect, fixed (the last test but one): a bot that connected, died while the others were
still starting and could not even be launched again was given up in silence, and the
start waited all of ``bot_wait_s`` to call it "still starting or stuck".
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import sqlite3
import types
from pathlib import Path
from typing import Any

import pytest

from arena import storage
from arena.referee import RefereeConfig
from arena.storage import (
    Storage,
    StorageError,
    StorageFullError,
    StorageLockedError,
    lock_path,
    newest_database,
    state_of,
)
from arena.tournament import RunOptions, TournamentError, run, runner
from arena.tournament.config import BotSpec, ConfigError, identity_changes
from arena.tournament.schedule import independent_seed
from tests.arena.fake_referee import FakeReferee, make_config, run_fake
from tests.support.dead_bot import DeadBot, WaitingReferee


class _EndingReferee(FakeReferee):
    """The fake referee, with the real one's ``end_streams``: what remote bots are told."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.ended: list[tuple[str | None, bool]] = []

    async def end_streams(self, why: str | None = None, *, final: bool = False) -> None:
        self.ended.append((why, final))


class _Server:
    async def stop(self, grace: float | None) -> None:
        return None


def _served(tmp: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeReferee) -> Any:
    """A tournament of three local bots and a remote one, run with ``serve`` on against
    ``fake`` (no gRPC server: a stand-in that stops), the bots not launched."""

    async def server(*_: Any) -> tuple[_Server, int]:
        return _Server(), 50051

    monkeypatch.setattr(runner, "_real_server", server)
    cfg = make_config(tmp, bots=3)
    remote = BotSpec("rem", "remote", token="tok-rem-1234567890")
    cfg = dataclasses.replace(cfg, bots=(*cfg.bots, remote))
    return run(cfg, RunOptions(progress=False), referee_factory=lambda _c: fake,
               serve=True, launch_bots=False)  # fmt: skip


def test_r5_remote_bots_are_told_the_tournament_is_over_only_when_no_match_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R5 (``over = not outcome.interrupted``, the failed matches left out): a run in which
    a match failed (to be played again by the next run) told the remote bots "the
    tournament is over" for good, and they stopped: the next run waited for them in vain.
    They are told to wait for the next run (``end_streams()``, not final); a run of no
    failure ends them for good."""
    failing = _EndingReferee(fail={3})
    out = _served(tmp_path / "a", monkeypatch, failing)
    assert [i for i, _ in out.failed] == [3] and not out.finished
    assert failing.ended == [(None, False)]
    clean = _EndingReferee()
    out = _served(tmp_path / "b", monkeypatch, clean)
    assert out.finished and not out.failed
    assert clean.ended == [("the tournament is over", True)]


def test_r6_a_partial_run_that_plays_every_match_left_is_not_interrupted(tmp_path: Path) -> None:
    """R6 (``interrupted`` whenever ``max_new_matches`` is given): a run allowed as many
    new matches as were left played them all, and still ended "interrupted" (exit 130,
    remote bots told to wait for a next run that has nothing to play). One allowed fewer
    is interrupted."""
    cfg = make_config(tmp_path, bots=3)  # 6 matches
    part = run_fake(cfg, max_new_matches=4)
    assert part.interrupted and part.completed == 4
    rest = run_fake(cfg, max_new_matches=2)
    assert rest.finished and not rest.interrupted and rest.played_now == 2


def test_r9_a_full_disk_names_the_largest_logs_first(tmp_path: Path) -> None:
    """R9 (the logs sorted smallest first): the disk-full error names "bots' logs that
    large" to point at the bot that filled the disk, the three largest, largest first; the
    smallest three were named, the one that filled the disk left out."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, mib in (("a", 11), ("b", 40), ("c", 12), ("d", 30), ("e", 5)):
        with (logs / f"{name}.log").open("wb") as fh:
            fh.truncate(mib << 20)  # (sparse: no disk used)
    said = runner._largest_logs(logs)
    names = [Path(part.split(" (")[0]).name for part in said.split(": ", 1)[1].split(", ")]
    assert names == ["b.log", "d.log", "c.log"], said
    assert "42 MB" in said  # 40 MiB, said in MB


def test_r10_running_a_finished_tournament_again_keeps_when_it_finished(tmp_path: Path) -> None:
    """R10 (finalize marks it finished whenever every match is stored, not only the first
    time): the same command run again on a finished tournament (to see its leaderboard)
    moved its finish time to now, and `arena leaderboard --list` and the web showed it
    finished today."""
    cfg = make_config(tmp_path, bots=3)
    assert run_fake(cfg).finished
    with Storage.open_readonly(cfg.db) as st:
        first = st.tournament(cfg.tournament_id)
    assert first is not None and first.finished_at is not None
    # (Stored to the second: the time it finished is moved back, so that a run again in
    # the same second would not keep it by chance.)
    finished = "2026-01-02T03:04:05+0000"
    with sqlite3.connect(cfg.db) as c:
        c.execute("UPDATE tournaments SET finished_at = ?", (finished,))
    c.close()
    again = run_fake(cfg)
    assert again.played_now == 0 and again.finished
    with Storage.open_readonly(cfg.db) as st:
        later = st.tournament(cfg.tournament_id)
        assert st.rating_history(cfg.tournament_id)  # (rated again all the same)
    assert later is not None and later.finished_at == finished


def test_r12_a_drawn_seed_stored_as_true_is_no_seed(tmp_path: Path) -> None:
    """R12 (the ``bool`` check of the stored ``drawn_seed`` dropped): a config whose
    ``drawn_seed`` was changed by hand to ``true`` resumed with seed 1, a schedule of other
    seatings and seeds than the stored matches'. It is refused, with --fresh named."""
    cfg = make_config(tmp_path, bots=3, seed=None)
    run_fake(cfg, max_new_matches=2)
    with sqlite3.connect(cfg.db) as c:
        (text,) = c.execute("SELECT config_json FROM tournaments").fetchone()
        c.execute("UPDATE tournaments SET config_json = ?",
                  (text.replace('"drawn_seed":', '"drawn_seed": true, "was":'),))  # fmt: skip
    c.close()
    with pytest.raises(TournamentError, match=r"no drawn seed stored \(found True\).*--fresh"):
        run_fake(cfg)


def test_r27_ratings_that_cannot_be_stored_after_a_good_run_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R27 (``if played`` made ``if False``): a run that played every match and then could
    not store the ratings (the disk filled as it ended) exited 0, its tournament left
    unfinished and unrated. It is an error that says every match is stored and that the
    same command stores the ratings; that command then does, playing nothing."""
    cfg = make_config(tmp_path, bots=3)

    def full(*_: Any, **__: Any) -> None:
        raise StorageFullError(f"{cfg.db}: the disk is full while storing ratings")

    monkeypatch.setattr(Storage, "save_ratings", full)
    with pytest.raises(TournamentError) as ei:
        run_fake(cfg)
    said = str(ei.value)
    assert said.startswith("every match played is stored, but not the ratings: ")
    assert "the disk is full" in said and "marks the tournament finished" in said
    monkeypatch.undo()
    again = run_fake(cfg)
    assert again.played_now == 0 and again.finished
    with Storage.open_readonly(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.finished_at is not None
        assert {p.bot for p in st.rating_history(cfg.tournament_id)} == {"ann", "bob", "cid"}


def test_d2_a_match_deleted_by_hand_is_stored_again_without_doubled_incidents(
    tmp_path: Path,
) -> None:
    """D2 (the orphans' ``incidents`` left when a match is stored again): a match row
    deleted by hand in the sqlite3 shell (foreign keys off, so its players, deals and
    incidents stay) is played again by the next run; its old incidents stayed beside the
    new ones, and the replay and the leaderboard counted its timeouts twice."""
    cfg = make_config(tmp_path, bots=3)
    fake = FakeReferee(faulty={"ann"})  # a timeout incident in each match ann plays
    assert run_fake(cfg, fake).finished
    tid = cfg.tournament_id
    with Storage.open_readonly(cfg.db) as st:
        before = st.incidents(tid)
    gone = before[0]["match_id"]
    c = sqlite3.connect(cfg.db)
    c.execute("DELETE FROM matches WHERE id = ?", (gone,))  # (foreign keys off: the default)
    c.commit()
    c.close()
    again = run_fake(cfg, FakeReferee(faulty={"ann"}))
    assert again.played_now == 1 and again.finished
    with Storage.open_readonly(cfg.db) as st:
        after = st.incidents(tid)
        assert len(st.match_results(tid)) == 6
    assert sorted((i["match_id"], i["kind"]) for i in after) == sorted(
        (i["match_id"], i["kind"]) for i in before
    )


def test_c5_c6_c7_what_changed_is_said_in_the_configs_words() -> None:
    """C5 (a changed setting named by its stored key, ``draw_probability``, not the
    config's ``ratings.draw_probability``), C6 (bots in another order said as nothing but
    "its settings") and C7 (a ``[referee]`` key set on one side only said as JSON's
    ``null``, not as the referee's default): what a changed config is told ("this config
    is not its own (...)", "run it with the config it was started with") names what the
    organiser wrote."""
    bots = [{"name": "a", "kind": "sdk"}, {"name": "b", "kind": "sdk"}]
    stored = {"bots": bots, "matches_per_table": 1, "draw_probability": 0.02,
              "referee": {}}  # fmt: skip
    new = {"bots": bots[::-1], "matches_per_table": 3, "draw_probability": 0.1,
           "referee": {"max_strikes": 5}}  # fmt: skip
    strikes = RefereeConfig().max_strikes
    assert identity_changes(stored, new) == [
        "the order of the bots",
        "matches_per_table 1 → 3",
        "ratings.draw_probability 0.02 → 0.1",
        f"referee.max_strikes unset ({strikes}) → 5",
    ]


def _stored_one(tmp: Path, change: Any = None, **when: float) -> tuple[Storage, str]:
    """A database holding one tournament and its first match (the fake referee's record,
    ``change(record)`` applied first), stored with ``when`` (started_at, finished_at)."""
    cfg = make_config(tmp, bots=3)
    m = cfg.schedule()[0]
    record = FakeReferee().play(cfg.ruleset, m.seed, list(m.seats))
    if change is not None:
        change(record)
    st = Storage(cfg.db)
    st.ensure_tournament(cfg.tournament_id, name=cfg.name, fingerprint=cfg.fingerprint,
                         config=cfg.to_json(), total_matches=6,
                         bots=[(b, "random") for b in cfg.bot_names])  # fmt: skip
    times = {"started_at": 1000.0, "finished_at": 1010.0, **when}
    st.save_match(cfg.tournament_id, match_id="m0", index=0, table=m.table, set_no=0,
                  seed=m.seed, seats=m.seats, record=record, **times)  # fmt: skip
    return st, cfg.tournament_id


def test_d1_a_clock_set_back_during_a_match_stores_no_negative_duration(tmp_path: Path) -> None:
    """D1 (``max(0.0, ...)`` dropped): a match during which the wall clock was set back
    (NTP, daylight saving by hand) was stored as lasting -3600 s, and the leaderboard's
    mean match time went down with it."""
    st, tid = _stored_one(tmp_path, started_at=5000.0, finished_at=1400.0)
    with st:
        (r,) = st.match_results(tid)
    assert r.duration_s == 0.0


def test_d19_a_result_with_too_few_places_is_refused_whole(tmp_path: Path) -> None:
    """D19 (``_int_list`` checking only that it is a list): a result with two places for
    three seats failed half-way with an IndexError, not the StorageError that stops the
    run cleanly and names the record."""

    def short(record: dict[str, Any]) -> None:
        record["result"]["places"] = record["result"]["places"][:2]

    with pytest.raises(StorageError, match=r"no valid result\.places for 3 players"):
        _stored_one(tmp_path, short)


def test_d17_d18_a_held_lock_that_names_no_tournament_is_a_run_and_the_newest_database_holds_one(
    tmp_path: Path,
) -> None:
    """D17 (``state_of`` taking a lock that names no tournament, an older runner's, for no
    run) and D18 (``newest_database`` taking the newest file even when it holds no
    tournament: a first run that could not start left an empty one, which then hid the
    database of results from every reader)."""
    st, tid = _stored_one(tmp_path / "runs")
    with st:
        info = st.tournament(tid)
    assert info is not None
    assert state_of(info, "") == "running"
    assert state_of(info, "another-id") == "stopped"
    assert state_of(info, None) == "stopped"
    db = tmp_path / "runs" / "t.sqlite"
    empty = tmp_path / "runs" / "new.sqlite"
    Storage(empty).close()
    os.utime(db, (1_000_000, 1_000_000))  # (the empty one is the newest)
    assert newest_database(tmp_path / "runs") == db


def test_d10_a_time_limit_of_zero_is_no_time_limit(tmp_path: Path) -> None:
    """D10 (``v >= 0``): a record whose ``time_limit_s`` is 0 (none: ``match_timeout_s``'s
    0) was listed as ended by a time limit."""

    def limited(value: float) -> Any:
        return lambda record: record.__setitem__("time_limit_s", value)

    st, tid = _stored_one(tmp_path / "zero", limited(0))
    with st:
        assert st.time_limits(tid) == {}
    st, tid = _stored_one(tmp_path / "set", limited(2.5))
    with st:
        assert st.time_limits(tid) == {"m0": 2.5}


def test_r29_a_bot_that_connected_then_died_before_the_start_is_restarted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R29 (the restart before the start dropped): a bot that had connected and then died
    while the others were still starting (a crash in its first seconds, a reload) stopped
    the whole start as "exited before connecting", with restarts left. It is restarted, as
    it would be a moment later, and the start goes on."""
    restarted: list[tuple[str, int | None, int]] = []

    class Died:  # a _BotProcess that connected once and exited (code 1)
        spec = types.SimpleNamespace(name="crashy", cwd=None)
        proc = types.SimpleNamespace(returncode=1)
        restarts, given_up = 0, False

        @property
        def exited(self) -> bool:
            return self.proc.returncode is not None

        def trim_log(self) -> None:
            pass

    async def restart(p: Any, code: int | None, max_restarts: int, *, begun: bool) -> None:
        assert not begun  # (before the tournament began: see _restart's log line)
        restarted.append((p.spec.name, code, max_restarts))
        p.restarts += 1
        p.proc = types.SimpleNamespace(returncode=None)  # running again

    class Referee:
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            while not restarted:  # (connected again once restarted)
                await asyncio.sleep(0.01)
            return []

        def welcomed_bots(self) -> list[str]:
            return ["crashy"]

    monkeypatch.setattr(runner, "_restart", restart)
    cfg: Any = types.SimpleNamespace(bot_names=["crashy"], bot_wait_s=60.0, bots=[])
    bot = Died()
    referee: Any = Referee()
    asyncio.run(runner._wait_for_bots(cfg, referee, {"crashy": bot}, 3))  # type: ignore[dict-item]
    assert restarted == [("crashy", 1, 3)] and bot.restarts == 1


def test_r19_a_line_a_little_over_the_tail_width_is_shown_whole() -> None:
    """R19 (``cut <= 0``): a bot's line a few characters longer than what a tail line
    keeps was cut all the same, its " ... 30 characters cut ... " as long as what it
    left out; up to 40 over it is shown whole, past that cut."""
    head, end = runner._TAIL_LINE_HEAD, runner._TAIL_LINE_END
    line = "x" * (head + end + 40)
    assert runner._cut_line(line) == line
    longer = "y" * (head + end + 41)
    assert runner._cut_line(longer) == f"{'y' * head} ... 41 characters cut ... {'y' * end}"


def test_r22_a_disk_full_while_recording_is_said_as_such_not_as_the_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R22 (``if played`` made ``if True``): the disk filled while a result was stored, so
    the ratings that the stop then tries to store could not be stored either; the error
    said "every match played is stored, but not the ratings ... it plays no stored match
    again", hiding that the run had stopped half-way on a full disk. It says that results
    can no longer be stored, and that what was stored is kept."""
    cfg = make_config(tmp_path, bots=3, concurrency=1)
    save = Storage.save_match
    saved: list[str] = []

    def filling(self: Storage, tid: str, **kw: Any) -> None:
        if len(saved) == 2:
            raise StorageFullError(f"{cfg.db}: the disk is full while storing match")
        save(self, tid, **kw)
        saved.append(kw["match_id"])

    def full(*_: Any, **__: Any) -> None:
        raise StorageFullError(f"{cfg.db}: the disk is full while storing ratings")

    monkeypatch.setattr(Storage, "save_match", filling)
    monkeypatch.setattr(Storage, "save_ratings", full)
    with pytest.raises(TournamentError) as ei:
        run_fake(cfg)
    assert str(ei.value).startswith("stopping: results can no longer be stored: ")
    assert "while storing match" in str(ei.value)
    with Storage.open_readonly(cfg.db) as st:
        assert len(st.match_results(cfg.tournament_id)) == 2


def test_r28_a_low_open_files_limit_is_raised_to_1024_or_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R28 (the soft limit raised to the bare need): under a container's `ulimit -n` of 64
    a tournament's limit was raised to what it needs at its start, about 40, which every
    bot inherits, and a bot opening a few files more failed ("Too many open files"); it is
    raised to 1,024 (or the hard limit, if lower). A hard limit under the need is refused
    before anything starts, the limit and the command named."""
    import resource

    limits = {"now": (64, 4096)}
    set_to: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _which: limits["now"])
    monkeypatch.setattr(resource, "setrlimit", lambda _which, pair: set_to.append(pair))
    monkeypatch.setattr(runner, "_open_files", lambda: 10)
    cfg: Any = types.SimpleNamespace(bots=[object()] * 20)  # needs 10 + 16 + 60 = 86
    runner._check_open_files(cfg)
    assert set_to == [(1024, 4096)]
    limits["now"] = (64, 500)
    runner._check_open_files(cfg)
    assert set_to[-1] == (500, 500)
    limits["now"] = (64, 80)
    with pytest.raises(TournamentError, match=r"may open 64 files .*80 at most.*about 86"):
        runner._check_open_files(cfg)
    limits["now"] = (86, 4096)  # (enough: left as it is)
    runner._check_open_files(cfg)
    assert len(set_to) == 2


def test_r25_the_bots_of_a_killed_run_are_looked_for_by_its_pid_in_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R25 (the pid a killed run left in the lock file not read): the next run never
    looked for the bots that run left running (a bot not run by `arena-bot`, retrying its
    arena for minutes, or one stopped with SIGSTOP), and they took seats of its matches
    with their old tokens refused. A lock file that names no pid is no killed run."""
    cfg = make_config(tmp_path, bots=3)
    looked: list[int] = []
    monkeypatch.setattr(runner, "_stop_bots_left_by", looked.append)
    lock = lock_path(cfg.db)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(f"4194000 {cfg.tournament_id}")  # (what a killed run leaves)
    assert run_fake(cfg, max_new_matches=1).completed == 1
    assert looked == [4194000]
    lock.write_text("not-a-pid")
    run_fake(cfg)
    assert looked == [4194000]


def test_r26_a_second_signal_only_says_to_wait(caplog: pytest.LogCaptureFixture) -> None:
    """R26 (every signal cancelling the run, not the first only): a second Ctrl-C while the
    run stopped cancelled its stop again, halfway through stopping the bots and the
    server, and said nothing; it only says to wait (the first one is kept as the one that
    stopped the run)."""
    cancelled: list[str] = []
    signals = runner._Signals()
    signals._task = types.SimpleNamespace(cancel=lambda: cancelled.append("cancel"))  # type: ignore[assignment]
    signals._on_signal(signal.SIGTERM)
    with caplog.at_level(logging.WARNING, logger="arena.tournament.runner"):
        signals._on_signal(signal.SIGINT)
    assert cancelled == ["cancel"] and signals.first == signal.SIGTERM and signals.count == 2
    assert "already stopping" in caplog.text


def test_d11_a_database_another_program_is_writing_is_refused_before_the_start(
    tmp_path: Path,
) -> None:
    """D11 (``check_writable``'s write transaction dropped): a database held by another
    program's write transaction (a `sqlite3` shell left in a BEGIN) was found only at the
    first result, after every bot had started and a match had been played and thrown away.
    It is refused at the start, as locked; once the other program is done, it is taken."""
    db = tmp_path / "t.sqlite"
    Storage(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    st = Storage(db, timeout=0.05)
    try:
        with pytest.raises(StorageLockedError, match="locked by another process"):
            st.check_writable()
        other.execute("ROLLBACK")
        st.check_writable()
    finally:
        st.close()
        other.close()


def test_r31_no_remote_bot_away_is_no_wait_at_the_end() -> None:
    """R31 (the wait for remote bots away with their results made whether any is away or
    not): every tournament with remote bots waited their whole reconnect grace at its end,
    with a warning naming none, though every one had its result."""
    waited: list[float] = []

    class Referee:
        config = types.SimpleNamespace(reconnect_grace_s=30.0)

        def away_with_results(self, names: list[str]) -> list[str]:
            return [n for n in names if n in self.away]

        async def wait_for_away_results(self, grace: float, names: list[str]) -> None:
            waited.append(grace)

        away: tuple[str, ...] = ()

    referee: Any = Referee()
    asyncio.run(runner._wait_for_remote_results(referee, ["rem"], asyncio.Event()))
    assert waited == []
    referee.away = ("rem",)
    asyncio.run(runner._wait_for_remote_results(referee, ["rem"], asyncio.Event()))
    assert waited == [30.0]


@pytest.mark.slow  # (the bound is bot_wait_s and 5 s more)
def test_r30_a_referee_that_never_answers_ends_the_wait_for_the_bots() -> None:
    """R30 (the start's own bound dropped): a referee whose wait for the bots never ended
    kept the start waiting for ever; it ends at ``bot_wait_s`` and 5 s, every bot named as
    not connected."""

    class Referee:
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            await asyncio.Event().wait()
            return names

    referee: Any = Referee()
    cfg: Any = types.SimpleNamespace(bot_names=["ann"], bot_wait_s=0.01, bots=[])
    with pytest.raises(TournamentError, match=r"1 of 1 bots did not connect within 0\.01s"):
        asyncio.run(runner._wait_for_bots(cfg, referee, {}, 3))


def test_d3_a_result_with_fewer_shortfalls_than_seats_is_stored(tmp_path: Path) -> None:
    """D3 (each seat's shortfall read without the bound): a result that lists the
    shortfalls of fewer seats than it has (a record of another referee version) failed
    with an IndexError inside the storing transaction, which stopped the run as a crash
    (not a StorageError); the seats it does not list have none."""

    def fewer(record: dict[str, Any]) -> None:
        record["result"]["shortfalls"] = [120]

    st, _ = _stored_one(tmp_path, fewer)
    with st:
        rows = st.conn.execute("SELECT shortfall FROM match_players ORDER BY seat").fetchall()
    assert [r[0] for r in rows] == [120, None, None]


def test_d21_an_incident_of_no_seat_is_no_bots(tmp_path: Path) -> None:
    """D21 (a seat only checked against its upper bound): an incident whose seat is -1
    (none: a match's own) was put to the last seat's bot, Python's ``seats[-1]``, and
    counted among its strikes on the leaderboard."""

    def own(record: dict[str, Any]) -> None:
        record["incidents"] = [{"kind": "note", "seat": -1, "deal": 0, "detail": "match"}]

    st, tid = _stored_one(tmp_path, own)
    with st:
        (incident,) = st.incidents(tid)
        assert st.incidents(tid, bot=st.match_results(tid)[0].seats[-1]) == []
    assert incident["seat"] == -1 and incident["bot"] is None


def test_d4_a_match_counts_the_deals_its_result_says(tmp_path: Path) -> None:
    """D4 (the deals counted from the record's list): a match every seat forfeited stops
    in the middle of a deal, which its record does not list; its result counts that deal
    (``deals``: the deal it stopped in), and the leaderboard's deals per match counted one
    fewer."""

    def abandoned(record: dict[str, Any]) -> None:
        record["result"]["deals"] = len(record["deals"]) + 1

    st, tid = _stored_one(tmp_path, abandoned)
    with st:
        (result,) = st.match_results(tid)
        listed = len(st.load_record(result.match_id)["deals"])
    assert result.deals == listed + 1


def test_d14_a_disk_io_error_on_a_disk_with_no_room_left_is_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D14 (``_little_room`` never true): SQLite says only "disk I/O error" of a write that
    found no room outside the database's pages (its -shm growing, on tmpfs): with less than
    1 MiB left that is a full disk (StorageFullError: the run names the bots' largest logs
    and says to free space), not a database error; with room left it is not."""
    e = sqlite3.OperationalError("disk I/O error")
    e.sqlite_errorcode = 10  # SQLITE_IOERR
    free = {"blocks": 100}

    def statvfs(_path: Any) -> Any:
        return types.SimpleNamespace(f_bavail=free["blocks"], f_frsize=4096, f_flag=0)

    monkeypatch.setattr(os, "statvfs", statvfs)
    said = storage._translate(e, tmp_path / "t.sqlite", "storing match m1")
    assert isinstance(said, StorageFullError) and "the disk is full" in str(said)
    free["blocks"] = 1 << 20  # (4 GiB)
    said = storage._translate(e, tmp_path / "t.sqlite", "storing match m1")
    assert not isinstance(said, StorageFullError) and "disk I/O error" in str(said)


def test_d6_d8_the_latest_results_and_tournaments_are_counted_from_the_end(
    tmp_path: Path,
) -> None:
    """D6 (``last`` taken as it is: a negative count is SQLite's "no limit") and D8 (a
    bot's tournaments oldest first): asking for the last -1 results read every match of
    the tournament, and a bot's page named its first tournament as its latest."""
    cfg = make_config(tmp_path, bots=3)
    run_fake(cfg)
    other = make_config(tmp_path, bots=3, name="later")
    run_fake(other)
    with Storage.open_readonly(cfg.db) as st:
        assert st.match_results(cfg.tournament_id, last=-1) == []
        assert len(st.match_results(cfg.tournament_id, last=2)) == 2
        assert st.tournaments_of("ann") == [other.tournament_id, cfg.tournament_id]


def test_d15_a_write_cut_short_by_the_file_size_limit_is_said_as_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D15 (the limit met only by a file already at it): a write that the file size limit
    (`ulimit -f`) cut short leaves the file short of the limit by less than the write (a
    WAL frame: a page and its header); it was said as a disk error, not as the limit."""
    import resource

    db = tmp_path / "t.sqlite"
    db.write_bytes(b"\0" * 100_000)
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (104_096, resource.RLIM_INFINITY))
    assert storage._file_size_limit_reached(db) == (104_096, db)
    db.write_bytes(b"\0" * 10_000)
    assert storage._file_size_limit_reached(db) is None


def test_d16_a_file_on_a_read_only_mount_is_not_said_to_be_read_only_to_this_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D16 (the read-only mount not told apart): a database on a file system mounted
    read-only was said to be "read-only to this user (its mode, its owner or chattr +i)",
    advice that changes nothing there; SQLite's own error then names the mount."""
    db = tmp_path / "t.sqlite"
    db.write_bytes(b"")
    monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    monkeypatch.setattr(storage, "_on_read_only_storage", lambda _p: True)
    assert storage._unwritable(db) is None
    monkeypatch.setattr(storage, "_on_read_only_storage", lambda _p: False)
    assert storage._unwritable(db) == db


def test_a_bot_that_cannot_be_started_again_before_the_start_stops_the_start_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot that had connected, then died while the others were still starting,
    and whose restart could not even be launched (its program or its `cwd` removed
    meanwhile) was given up in silence: the start waited the whole ``bot_wait_s`` for it,
    then called it "local bot, still starting or stuck", of a bot that was not running at
    all. The start stops at once, saying it could not be started again and why."""

    referee: Any = WaitingReferee("crashy")
    cfg: Any = types.SimpleNamespace(bot_names=["crashy"], bot_wait_s=2.0, bots=[])
    bot = DeadBot("crashy", "cannot launch bot 'crashy' (crashy): No such file",
                  tail="RuntimeError: boom")  # fmt: skip
    with pytest.raises(TournamentError) as ei:
        asyncio.run(runner._wait_for_bots(cfg, referee, {"crashy": bot}, 3))  # type: ignore[dict-item]
    assert str(ei.value).startswith(
        "bot 'crashy' exited with code 1 before the tournament began, and could not be "
        "started again: cannot launch bot 'crashy' (crashy): No such file (log crashy.log)"
    )
    assert bot.given_up and bot.restarts == 1 and bot.stopped == 2
    # (and its log line says nothing of seats the referee plays to the end: none will be)
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == [
        "cannot launch bot 'crashy' (crashy): No such file: not restarted, before the "
        "tournament began"
    ], errors


def test_s2_two_seatings_whose_names_run_together_get_seeds_of_their_own() -> None:
    """S2 (the seats joined with nothing between them): with independent deals, bots
    named ``ab``, ``c``, ``a`` and ``bc`` made seatings ``ab c d`` and ``a bc d`` one key,
    and so one seed: the same cards dealt in two matches that were to deal their own."""
    assert independent_seed(1, 0, ["ab", "c", "d"]) != independent_seed(1, 0, ["a", "bc", "d"])


def test_c2_a_wait_for_the_bots_of_zero_is_refused(tmp_path: Path) -> None:
    """C2 (``bot_wait_s < 0``): a config with ``bot_wait_s = 0`` was taken, and every run of
    it stopped at once, "3 of 3 bots did not connect within 0s", of bots that had no time
    to start; it is refused as the config is read, naming the key. A small wait is taken."""
    with pytest.raises(ConfigError) as ei:
        make_config(tmp_path, bots=3, bot_wait_s=0)
    assert ei.value.key == "bot_wait_s" and "must be positive, got 0" in str(ei.value)
    assert make_config(tmp_path, bots=3, bot_wait_s=0.5).bot_wait_s == 0.5
