"""The tournament runner against an in-process fake referee (no gRPC, no processes)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from arena.leaderboard import build_leaderboard
from arena.storage import Storage, StorageError, StorageLockedError
from arena.tournament import RunOptions, TournamentError, run, run_tournament
from arena.tournament.config import parse_config
from arena.tournament.runner import DatabaseLock, _BotProcess
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

QUIET = RunOptions(progress=False)


def _board(db: Path, tid: str) -> dict[str, Any]:
    with Storage(db) as st:
        d = build_leaderboard(st, tid).to_dict()
    d.pop("generated_at")
    for k in ("created_at", "finished_at"):
        d["tournament"].pop(k)
    return d


def test_full_run_stores_every_match_once(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    fake = FakeReferee()
    t0 = time.monotonic()
    out = _run(cfg, fake)
    took = time.monotonic() - t0
    assert out.finished and out.total == 24 and out.played_now == 24 and not out.failed
    assert set(fake.calls.values()) == {1} and len(fake.calls) == 24
    assert 1 < fake.max_running <= cfg.concurrency
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.completed == 24 and info.finished_at is not None
        results = st.match_results(cfg.tournament_id)
        assert [r.index for r in results] == list(range(24))
        assert len(st.rating_history(cfg.tournament_id)) == 24 * 3
    # The recording time is measured (what `arena bench tournament` reports as a share).
    assert 0 < out.finalize_s < out.record_s <= took


def test_independent_deals_reach_the_referee_and_the_store(tmp_path: Path) -> None:
    """``deals = "independent"``: every match is played (and stored) with a seed of its
    own; the default plays every seating of the set on one seed."""
    import sqlite3

    for deals, seeds in (("independent", 24), ("duplicate", 1)):
        cfg = make_config(tmp_path / deals, deals=deals)
        fake = FakeReferee()
        assert _run(cfg, fake).finished
        with sqlite3.connect(cfg.db) as db:
            stored = {s for (s,) in db.execute("SELECT seed FROM matches")}
        assert len(stored) == seeds and stored == {m.seed for m in cfg.schedule()}


def test_match_timeout_s_is_each_matchs_time_limit(tmp_path: Path) -> None:
    """(review) The config's ``match_timeout_s`` reaches every match as its time limit (the
    referee then ends it after the deal in progress); 0 gives none."""
    for timeout, want in ((7.5, 7.5), (0, None)):
        fake = FakeReferee()
        assert _run(make_config(tmp_path / str(timeout), match_timeout_s=timeout), fake).finished
        assert fake.time_limits == [want] * 24


def test_a_resumed_run_of_independent_deals_deals_from_fresh_seeds(tmp_path: Path) -> None:
    """Defect (hostile audit round 10): with ``deals = "independent"``, the matches under
    way when a run stopped were played again by the next run from their schedule's seeds:
    a bot held the same cards again and knew the others' hands and the talon from what it
    saw. A resumed run deals its matches from fresh seeds (stored with each match; a
    later resume accepts them); the first run, and duplicate deals, keep the schedule's."""
    import sqlite3

    cfg = make_config(tmp_path, deals="independent")
    schedule = {m.index: m.seed for m in cfg.schedule()}
    fake = FakeReferee()
    _run(cfg, fake, max_new_matches=7)
    second = FakeReferee()
    _run(cfg, second, max_new_matches=7)
    assert _run(cfg, FakeReferee()).finished  # a third run accepts the second's seeds
    with sqlite3.connect(cfg.db) as db:
        stored = dict(db.execute("SELECT idx, seed FROM matches"))
    assert len(stored) == 24
    same = [i for i, seed in stored.items() if seed == schedule[i]]
    assert len(same) == 7  # the first run's, and only those
    assert len(set(stored.values())) == 24
    # (review) each resumed run draws its own: the same stored state resumed twice does
    # not deal the same seeds

    from dataclasses import replace

    twins = [replace(cfg, db=tmp_path / f"twin{i}.sqlite") for i in range(2)]
    for t in twins:
        with sqlite3.connect(cfg.db) as src, sqlite3.connect(t.db) as dst:
            src.backup(dst)  # (the WAL's pages too)
            dst.execute("PRAGMA foreign_keys = ON")
            kept = ",".join(str(stored[i]) for i in same)
            dst.execute(f"DELETE FROM matches WHERE seed NOT IN ({kept})")
        _run(t, FakeReferee())
    seeds = [set(dict(sqlite3.connect(t.db).execute("SELECT idx, seed FROM matches")).values())
             for t in twins]  # fmt: skip
    assert len(seeds[0] & seeds[1]) == 7  # only the 7 stored before


def test_a_config_without_seed_plays_a_secret_one_and_resumes_with_it(tmp_path: Path) -> None:
    """Defect (leak audit): the shipped configs' seeds (1, 7, 2024) let a bot find the
    tournament seed from its first hand in milliseconds, and with it every deal. Without
    ``seed`` a secret one is drawn at the first run, stored (``drawn_seed``) and used again
    when the tournament resumes; ``--fresh`` draws another."""
    import sqlite3

    cfg = make_config(tmp_path, seed=None)
    assert cfg.seed is None
    first = _run(cfg, FakeReferee(), max_new_matches=7)
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None
        drawn = info.config["drawn_seed"]
    assert first.tournament_id == cfg.tournament_id and 0 <= drawn < 2**63
    assert info.config["seed"] is None  # the identity: the same config resumes
    assert _run(cfg, FakeReferee()).finished
    with sqlite3.connect(cfg.db) as db:
        stored = [s for (s,) in db.execute("SELECT seed FROM matches ORDER BY idx")]
    from dataclasses import replace

    want = [m.seed for m in replace(cfg, seed=drawn, seed_drawn=True).schedule()]
    assert stored == want and len(stored) == 24  # all 24 from the one drawn seed
    _run(cfg, FakeReferee(), fresh=True)
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.config["drawn_seed"] != drawn


def test_a_stored_tournament_without_its_drawn_seed_is_refused(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, seed=None)
    _run(cfg, FakeReferee(), max_new_matches=2)
    with Storage(cfg.db) as st:  # as if the row had been edited by hand
        st.conn.execute("UPDATE tournaments SET config_json = json_remove(config_json, "
                        "'$.drawn_seed')")  # fmt: skip
        st.conn.commit()
    with pytest.raises(TournamentError, match=r"no drawn seed stored.*--fresh"):
        _run(cfg, FakeReferee())


def test_live_display_shows_standings_and_ratings_stay_the_same(tmp_path: Path) -> None:
    """With the live display the standings are rated as matches end; without it they are
    not computed at all (nothing reads them). The stored ratings are the same either way."""
    import io

    from rich.console import Console

    shown = io.StringIO()
    live_cfg = make_config(tmp_path / "live")
    out = run(
        live_cfg,
        RunOptions(progress=True, console=Console(file=shown, force_terminal=True, width=120)),
        referee_factory=lambda _cfg: FakeReferee(),
        serve=False,
        launch_bots=False,
    )
    assert out.finished
    assert "live standings" in shown.getvalue()
    quiet_cfg = make_config(tmp_path / "quiet")
    assert _run(quiet_cfg, FakeReferee()).finished
    with Storage(live_cfg.db) as a, Storage(quiet_cfg.db) as b:
        assert a.rating_history(live_cfg.tournament_id) == b.rating_history(quiet_cfg.tournament_id)


def test_matches_are_stored_on_the_storage_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit of a finished match never runs on the event loop serving the tables."""
    import threading

    threads: list[str] = []
    save = Storage.save_matches

    def recording_save(self: Storage, tid: str, matches: Any) -> Any:
        # (every store of the runner, a group commit's or one match's, comes this way)
        threads.extend([threading.current_thread().name] * len(matches))
        return save(self, tid, matches)

    monkeypatch.setattr(Storage, "save_matches", recording_save)
    out = _run(make_config(tmp_path), FakeReferee())
    assert out.finished and len(threads) == 24
    assert all(t.startswith("arena-storage") for t in threads), set(threads)
    assert out.record_s > 0


def test_resume_after_stop_equals_uninterrupted_run(tmp_path: Path) -> None:
    a = make_config(tmp_path / "a")
    b = make_config(tmp_path / "b")
    assert a.tournament_id == b.tournament_id  # the db path is not part of the identity
    fake_a = FakeReferee()
    _run(a, fake_a)

    fake_b = FakeReferee()
    first = _run(b, fake_b, max_new_matches=7)
    assert first.interrupted and first.completed == 7 and not first.finished
    second = _run(b, fake_b)
    assert second.skipped == 7 and second.played_now == 17 and second.finished
    assert set(fake_b.calls.values()) == {1}, "a match was played twice"
    assert _board(a.db, a.tournament_id) == _board(b.db, b.tournament_id)


def test_cancel_mid_match_keeps_completed_and_replays_the_rest(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, concurrency=2)
    fake = FakeReferee(delay=0.02)

    async def interrupted() -> None:
        task = asyncio.create_task(
            run_tournament(
                cfg, QUIET, referee_factory=lambda _c: fake, serve=False, launch_bots=False
            )
        )
        while sum(fake.calls.values()) < 6:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    with Storage(cfg.db) as st:
        stored = st.completed_indices(cfg.tournament_id)
    assert 3 <= len(stored) < 24
    fake2 = FakeReferee()
    out = _run(cfg, fake2)
    assert out.finished and out.skipped == len(stored)
    replayed = {int(m.rsplit("-m", 1)[1]) for m in fake2.calls}
    assert replayed == set(range(24)) - stored


def test_failed_match_is_reported_and_retried_next_run(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    out = _run(cfg, FakeReferee(fail={3, 11}))
    assert sorted(i for i, _ in out.failed) == [3, 11]
    assert out.completed == 22 and not out.finished
    assert "scripted failure" in out.failed[0][1]
    fake = FakeReferee()
    again = _run(cfg, fake)
    assert again.finished and sorted(fake.calls) == [
        f"{cfg.tournament_id}-m00003",
        f"{cfg.tournament_id}-m00011",
    ]


def test_missing_bots_are_named(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, bot_wait_s=0.1)
    with pytest.raises(TournamentError, match=r"1 of 4 bots did not connect.*\n  cid"):
        _run(cfg, FakeReferee(absent={"cid"}))


def test_a_remote_bot_that_came_and_left_is_not_said_to_have_never_connected(
    tmp_path: Path,
) -> None:
    """Defect (hostile audit round 10): a remote bot that was welcomed and disconnected
    before the others were ready was reported "never connected with its token", which sent
    the organiser looking for a wrong token."""
    remote = {"remote": True, "token": "tok-cid-0123456789"}
    bots = {"ann": "random", "bob": "random", "cid": remote, "dan": "random"}
    for came, said in ((True, "connected with its token, then left"),
                       (False, "never connected with its token")):  # fmt: skip
        base = tmp_path / str(came)
        cfg = parse_config({"name": "t", "seed": 7, "bot_wait_s": 0.1, "bots": bots,
                            "db": str(base / "t.sqlite"), "out": str(base / "out")},
                           source="test.toml", base_dir=tmp_path)  # fmt: skip
        fake = FakeReferee(absent={"cid"})
        fake.welcomed_bots = lambda came=came: ["cid"] if came else []  # type: ignore[attr-defined]
        with pytest.raises(TournamentError, match=rf"did not connect.*\n  cid: remote bot, {said}"):
            _run(cfg, fake)


def test_a_fresh_run_that_cannot_start_loses_nothing(tmp_path: Path) -> None:
    """Defect (CLI audit): ``--fresh`` forgot the stored matches before the run had a
    chance to start: a bot that did not connect (or an --out that cannot be written, a
    host that cannot be served) left the database with nothing. They are forgotten once
    every bot is connected now; a first run that cannot start stores no empty tournament."""
    cfg = make_config(tmp_path, bots=3, bot_wait_s=0.1)
    assert _run(cfg, FakeReferee()).finished
    before = _board(cfg.db, cfg.tournament_id)
    with pytest.raises(TournamentError, match="did not connect"):
        _run(cfg, FakeReferee(absent={"cid"}), fresh=True)
    with Storage(cfg.db) as st:
        assert len(st.completed_indices(cfg.tournament_id)) == 6
    assert _board(cfg.db, cfg.tournament_id) == before
    other = make_config(tmp_path, bots=3, bot_wait_s=0.1, seed=99)  # another tournament
    with pytest.raises(TournamentError, match="did not connect"):
        _run(other, FakeReferee(absent={"cid"}))
    with Storage(cfg.db) as st:
        assert st.tournament(other.tournament_id) is None  # no empty row left behind
        assert [t.id for t in st.tournaments()] == [cfg.tournament_id]


def test_fresh_forgets_stored_matches(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, bots=3)
    _run(cfg, FakeReferee())
    fake = FakeReferee()
    out = _run(cfg, fake, fresh=True)
    assert out.played_now == 6 and out.skipped == 0 and len(fake.calls) == 6
    fake3 = FakeReferee()
    out = _run(cfg, fake3)  # nothing left: no match played, leaderboard still written
    assert out.played_now == 0 and out.finished and not fake3.calls


def test_same_id_other_config_is_refused(tmp_path: Path) -> None:
    _run(make_config(tmp_path, bots=3, id="fixed"), FakeReferee())
    with pytest.raises(StorageError, match="another config"):
        _run(make_config(tmp_path, bots=3, id="fixed", seed=99), FakeReferee())


def test_same_id_other_config_names_what_changed(tmp_path: Path) -> None:
    """The refusal said "bots, ruleset, seed or deadlines differ", not which."""
    _run(make_config(tmp_path, bots=3, id="fixed"), FakeReferee(), max_new_matches=2)
    changed = make_config(tmp_path, bots=4, id="fixed", max_deals=5,
                          deadlines={"decision_ms": 500})  # fmt: skip
    with pytest.raises(StorageError) as e:
        _run(changed, FakeReferee())
    text = str(e.value)
    assert "bots added: dan" in text and "max_deals 4 → 5" in text, text
    assert "deadlines.decision_ms 2000 → 500" in text, text
    # Defect (organiser audit 2): another `name` with the fixed id was "its settings"
    with pytest.raises(StorageError) as e:
        _run(make_config(tmp_path, bots=3, id="fixed", name="cup"), FakeReferee())
    assert 'another config: name "t" → "cup". Run it' in str(e.value)


def test_a_changed_config_beside_an_unfinished_namesake_is_said_at_the_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: "the same command" after an interruption, with the config edited meanwhile
    (a bot added, `max_deals`, a ruleset option), silently started a new tournament (its id
    is the config's fingerprint) and left the interrupted one unfinished for ever, without
    a word: the organiser thought it resumed. The start now names the unfinished one and
    what changed."""
    first = make_config(tmp_path, bots=3)
    _run(first, FakeReferee(), max_new_matches=2)
    edited = make_config(tmp_path, bots=4, max_deals=5)
    with caplog.at_level("WARNING", logger="arena.tournament.runner"):
        out = _run(edited, FakeReferee())
    assert out.finished and out.tournament_id != first.tournament_id
    # (WARNING only: a test before this one may leave the runner's logger at INFO, and the
    # first run's "2 matches played" line would be captured too)
    said = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and first.tournament_id in r.getMessage()
    ]
    assert len(said) == 1, caplog.text
    assert "is unfinished (2 of 6 matches stored)" in said[0]
    assert "bots added: dan; max_deals 4 → 5" in said[0] and edited.tournament_id in said[0]
    caplog.clear()
    with caplog.at_level("WARNING", logger="arena.tournament.runner"):
        _run(first, FakeReferee())  # resumed: the other is finished, and nothing is said
        _run(make_config(tmp_path, bots=3, seed=8), FakeReferee())
    assert "unfinished" not in caplog.text


def test_second_runner_on_same_db_is_refused(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, bots=3)
    lock = DatabaseLock(cfg.db)
    cfg.db.parent.mkdir(parents=True, exist_ok=True)
    lock.acquire()
    try:
        with pytest.raises(StorageLockedError, match="another `arena tournament`"):
            _run(cfg, FakeReferee())
    finally:
        lock.release()


def test_a_database_with_two_names_is_refused(tmp_path: Path) -> None:
    """Defect: the lock file is named after the database's path, and SQLite keeps its
    write-ahead log beside the name it opens: two runs through two hard links of one
    database both ran, each on a log of its own, and each said it had stored every match;
    the database held one run's results (the other's were lost). A database with more than
    one name is refused (through either name) until it has one again."""
    import os

    cfg = make_config(tmp_path, bots=3)
    _run(cfg, FakeReferee(), max_new_matches=2)
    other = tmp_path / "other.sqlite"
    os.link(cfg.db, other)
    for db in (cfg.db, other):
        with pytest.raises(StorageError, match="has 2 names \\(hard links\\)"):
            _run(make_config(tmp_path, bots=3, db=str(db)), FakeReferee())
    with Storage(cfg.db) as st:
        assert len(st.completed_indices(cfg.tournament_id)) == 2  # nothing was changed
    other.unlink()
    assert _run(cfg, FakeReferee()).finished


def test_four_player_ruleset_schedules_four_seats(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, bots=4, ruleset="1001-4p", max_deals=3)
    fake = FakeReferee()
    out = _run(cfg, fake)
    assert out.total == 24 and out.finished  # 1 table x 4! seatings
    with Storage(cfg.db) as st:
        lb = build_leaderboard(st, cfg.tournament_id)
    assert lb.players == 4 and all(sum(r.places) == 24 for r in lb.rows)


def test_forfeits_and_strikes_reach_the_leaderboard(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    _run(cfg, FakeReferee(faulty={"bob"}, forfeit={"dan"}))
    with Storage(cfg.db) as st:
        lb = build_leaderboard(st, cfg.tournament_id)
    rows = {r.bot: r for r in lb.rows}
    assert rows["bob"].strikes["timeouts"] == rows["bob"].matches == 18
    assert rows["dan"].strikes["forfeits"] == 18
    # a forfeiter always places last (3rd): never better
    assert rows["dan"].places[:2] == [0, 0]
    assert lb.rows[-1].bot == "dan"
    assert rows["bob"].median_ms == 900.0 and rows["ann"].median_ms is not None


def test_storage_failure_stops_cleanly_and_keeps_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.storage import StorageFullError

    cfg = make_config(tmp_path, concurrency=1)
    real = Storage.save_match
    calls = {"n": 0}

    def flaky(self: Storage, *a: Any, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] > 5:
            raise StorageFullError("disk full (simulated)")
        real(self, *a, **kw)

    monkeypatch.setattr(Storage, "save_match", flaky)
    with pytest.raises(TournamentError, match="can no longer be stored: disk full") as e:
        _run(cfg, FakeReferee())
    assert "logs" not in str(e.value)
    # Defect (bot-process audit): a bot writing without end filled the disk, and the error
    # named only the database: the bots' logs over 10 MB are named too.
    big = cfg.out / "logs" / "spammer.log"
    big.parent.mkdir(parents=True, exist_ok=True)
    with big.open("wb") as fh:
        fh.truncate(42_000_000)  # (sparse: no disk used)
    (cfg.out / "logs" / "quiet.log").write_text("fine\n")
    calls["n"] = 0
    with pytest.raises(TournamentError, match=r"bots' logs that large: .*spammer\.log \(42 MB\)"):
        _run(cfg, FakeReferee())
    monkeypatch.setattr(Storage, "save_match", real)
    with Storage(cfg.db) as st:
        assert len(st.completed_indices(cfg.tournament_id)) == 10  # 5 in each run
    out = _run(cfg, FakeReferee())
    assert out.finished and out.skipped == 10


def test_the_tail_of_a_huge_bot_log_reads_only_its_end(tmp_path: Path) -> None:
    """Defect: showing the last lines of a bot's log (on every restart, and when it fails to
    connect) read the whole log into memory, on the event loop: a bot that wrote 300 MB made
    the organiser peak at 930 MB. Only the end is read now."""
    import tracemalloc

    from arena.tournament.config import BotSpec

    log = tmp_path / "bot.log"
    with log.open("wb") as fh:
        fh.write(b"an earlier run\n")
        start = fh.tell()
        line = b"x" * 1023 + b"\n"
        for _ in range(20 * 1024):  # 20 MiB of this start's output
            fh.write(line)
        fh.write(b"the error\nits last line\n")
    p = _BotProcess(BotSpec(name="b", kind="sdk", bot="random"), [], "t", log)
    p._log_start = start
    tracemalloc.start()
    try:
        text = p.tail(2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == "the error\nits last line"
    assert peak < 2 * 1024 * 1024, peak
    # a short log: only this start's lines, not the earlier run's
    short = tmp_path / "short.log"
    short.write_bytes(b"old\nnew 1\nnew 2\n")
    q = _BotProcess(BotSpec(name="b", kind="sdk", bot="random"), [], "t", short)
    q._log_start = 4
    assert q.tail(8) == "new 1\nnew 2"


def test_a_bot_that_exits_after_its_last_match_is_not_restarted(tmp_path: Path) -> None:
    """Defect: a bot that left after its last match of the run (a `--matches N` bot) was
    restarted if the monitor saw it exit before the tournament ended: a process started for
    nothing, and a "restarting it" warning about a bot that did nothing wrong. A bot with
    matches still to play is restarted as before."""
    import sys
    from collections import Counter

    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _monitor

    async def scenario() -> tuple[_BotProcess, _BotProcess]:
        argv = [sys.executable, "-c", "pass"]  # exits at once, code 0
        spec = BotSpec(name="finished", kind="sdk", bot="random")
        finished = _BotProcess(spec, argv, "t", tmp_path / "finished.log")
        spec = BotSpec(name="busy", kind="sdk", bot="random")
        busy = _BotProcess(spec, argv, "t", tmp_path / "busy.log")
        for p in (finished, busy):
            await p.start()
            assert p.proc is not None
            await p.proc.wait()
        stopping = asyncio.Event()
        left = Counter({"busy": 1})
        monitor = asyncio.create_task(
            _monitor({"finished": finished, "busy": busy}, stopping, 1, left)
        )
        while not busy.restarts:
            await asyncio.sleep(0.05)
        stopping.set()
        await monitor
        await asyncio.gather(finished.stop(), busy.stop())
        return finished, busy

    finished, busy = asyncio.run(scenario())
    assert finished.done and finished.restarts == 0
    assert (tmp_path / "finished.log").read_text().count("starting finished") == 1
    assert busy.restarts == 1 and not busy.done
    assert (tmp_path / "busy.log").read_text().count("starting busy") == 2


def test_a_bot_writing_without_end_has_its_log_cut_and_plays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (known limit until 2026-12-02): a bot's log had no size limit, so a bot printing
    in a loop filled the disk that holds the results. The supervisor cuts a log past
    ``LOG_LIMIT_BYTES`` to its first and last ``LOG_KEEP_BYTES``, saying how much it
    dropped; the bot is not stopped and its later lines still land in the log."""
    import sys
    from collections import Counter

    from arena.tournament import runner
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _monitor

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 256 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 16 << 10)
    log = tmp_path / "chatty.log"
    code = (
        "import sys, time\n"
        "print('hello from the start', flush=True)\n"
        "for i in range(20000): print(f'line {i:06d} ' + 'x' * 60)\n"
        "print('the last line', flush=True)\n"
        "time.sleep(60)\n"
    )

    async def scenario() -> tuple[int, str, bool]:
        bot = _BotProcess(BotSpec(name="chatty", kind="command"), [sys.executable, "-c", code],
                          "t", log)  # fmt: skip
        await bot.start()
        stopping = asyncio.Event()
        monitor = asyncio.create_task(_monitor({"chatty": bot}, stopping, 0, Counter(chatty=1)))
        for _ in range(1200):  # (a guard, not a timing: waits for the last cut)
            text = log.read_bytes()
            if b"the last line" in text and b"dropped here" in text and len(text) < 256 << 10:
                break
            await asyncio.sleep(0.05)
        alive = not bot.exited
        stopping.set()
        await monitor
        tail = bot.tail(1)
        await bot.stop()
        return log.stat().st_size, tail, alive

    size, tail, alive = asyncio.run(scenario())
    text = log.read_text()
    assert alive  # cut, not stopped
    assert size < 256 << 10, size
    assert "hello from the start" in text  # the beginning is kept
    assert "bytes dropped here ---" in text
    assert tail == "the last line"
    assert "line 019999 " in text  # and the end
    numbers = [int(w[5:11]) for w in text.splitlines() if w.startswith("line ")]
    assert numbers[-1] == 19999 and len(numbers) < 20000


def test_a_restart_that_fails_gives_that_bot_up_and_the_others_are_still_watched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (tournament audit 3): a bot whose restart could not start (its launcher script
    removed, a full disk) ended the supervision of every bot, silently: later crashes were
    never restarted nor reported. The bot is given up, saying why, and the rest go on."""
    import logging
    import sys
    from collections import Counter

    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _monitor

    async def scenario() -> tuple[_BotProcess, _BotProcess]:
        argv = [sys.executable, "-c", "pass"]  # exits at once
        gone = _BotProcess(BotSpec(name="gone", kind="command"), argv, "t", tmp_path / "g.log")
        other = _BotProcess(BotSpec(name="other", kind="command"), argv, "t", tmp_path / "o.log")
        await gone.start()
        assert gone.proc is not None
        await gone.proc.wait()
        gone.argv = [str(tmp_path / "no-such-launcher")]  # the next start fails
        stopping = asyncio.Event()
        left = Counter({"gone": 1, "other": 1})
        monitor = asyncio.create_task(_monitor({"gone": gone, "other": other}, stopping, 3, left))
        for _ in range(600):  # (a guard, not a timing: the restart is tried at once)
            if gone.given_up or monitor.done():
                break
            await asyncio.sleep(0.05)
        assert gone.given_up and not monitor.done(), monitor
        await other.start()  # a second bot dies after the failed restart
        while not other.restarts:
            assert not monitor.done(), monitor
            await asyncio.sleep(0.05)
        stopping.set()
        await monitor
        await asyncio.gather(gone.stop(), other.stop())
        return gone, other

    with caplog.at_level(logging.WARNING):
        gone, other = asyncio.run(scenario())
    assert gone.given_up and gone.restarts == 1 and gone._fh is None
    assert other.restarts == 1
    assert any("cannot launch bot 'gone'" in r.getMessage() and "not restarted" in r.getMessage()
               for r in caplog.records)  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_bots_child_in_a_process_group_of_its_own_is_stopped_with_it(tmp_path: Path) -> None:
    """Defect (tournament audit 3): a child the bot put in a process group of its own (as a
    shell with job control, or Popen(process_group=0), does) outlived the tournament: only
    the bot's group was signalled. Every process of the bot's session is now."""
    import os
    import signal
    import sys

    from arena.tournament.config import BotSpec

    pid_file = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], "
        "process_group=0)\n"
        f"open({str(pid_file)!r}, 'w').write(str(c.pid))\n"
        "time.sleep(300)\n"
    )

    async def scenario() -> int:
        p = _BotProcess(BotSpec(name="b", kind="command"), [sys.executable, "-c", code], "t",
                        tmp_path / "b.log")  # fmt: skip
        await p.start()
        for _ in range(600):  # (a guard: the child starts at once)
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        child = int(pid_file.read_text())
        await p.stop(grace=1.0)
        for _ in range(100):  # dead a moment after it is killed (a zombie until reaped)
            try:
                state = Path(f"/proc/{child}/stat").read_bytes().rpartition(b")")[2].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                return child
            if state == b"Z":
                return child
            await asyncio.sleep(0.05)
        os.kill(child, signal.SIGKILL)  # (the test cleans up what it started)
        raise AssertionError(f"the bot's child {child} outlived it")

    asyncio.run(scenario())


def test_a_bot_out_of_restarts_before_the_start_stops_the_start_at_once() -> None:
    """Defect (code review): a bot that had connected, then died with no restart left while
    others were still starting, was only marked given up: the start waited the whole
    bot_wait_s for it, then called it "still starting or stuck", its log left open."""
    import types

    from arena.tournament.runner import TournamentError, _wait_for_bots

    class Dead:  # a _BotProcess that connected once and exited (code 1)
        spec = types.SimpleNamespace(name="crashy", cwd=None)
        argv = ("crashy",)  # (a program on PATH: no script of its own to read)
        proc = types.SimpleNamespace(returncode=1)
        restarts, given_up, stopped, exited = 0, False, False, True
        noted = ""
        log_path = Path("crashy.log")

        def tail(self, lines: int = 8) -> str:
            return "RuntimeError: boom"

        def trim_log(self) -> None:
            pass

        def note(self, text: str) -> None:  # (the runner's line in its log)
            self.noted = text

        async def stop(self) -> None:
            self.stopped = True

    class Referee:
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            await asyncio.sleep(timeout)
            return names

        def welcomed_bots(self) -> list[str]:
            return ["crashy"]

    cfg: Any = types.SimpleNamespace(bot_names=["crashy"], bot_wait_s=3.0, bots=[])
    dead = Dead()
    with pytest.raises(TournamentError, match=r"(?s)code 1 again, after 0 restarts.*boom"):
        asyncio.run(_wait_for_bots(cfg, Referee(), {"crashy": dead}, 0))  # type: ignore[dict-item]
    assert dead.stopped
    assert dead.noted == (
        "exited with code 1 again, after 0 restarts, before the tournament began: "
        "the tournament stops"
    )


def test_review_findings_of_the_deferred_store(tmp_path: Path) -> None:
    """A --fresh run of a fixed id that cannot start left the stored tournament as it was,
    but recomputed its ratings with the new config (another draw probability); and a
    tournament stored before the schedule's version (31-bit seeds) with a fixed id was
    refused as "a config that differs" (or one with no drawn seed as damaged). It is named
    as stored by an older version now, and --fresh starts it again."""
    cfg = make_config(tmp_path, bots=3, id="cup", bot_wait_s=0.1)
    assert _run(cfg, FakeReferee()).finished
    with Storage(cfg.db) as st:
        ratings = st.rating_history("cup")
    other = make_config(tmp_path, bots=3, id="cup", bot_wait_s=0.1,
                        ratings={"draw_probability": 0.5})  # fmt: skip
    with pytest.raises(TournamentError, match="did not connect"):
        _run(other, FakeReferee(absent={"cid"}), fresh=True)
    with Storage(cfg.db) as st:
        assert st.rating_history("cup") == ratings
        # as if stored by the version before the schedule's version existed
        st.conn.execute("UPDATE tournaments SET config_json = json_remove(config_json, "
                        "'$.schedule')")  # fmt: skip
        st.conn.commit()
    with pytest.raises(TournamentError, match=r"stored by an older version.*--fresh"):
        _run(cfg, FakeReferee())
    assert _run(cfg, FakeReferee(), fresh=True).finished


def test_two_runners_never_hold_the_lock_at_once(tmp_path: Path) -> None:
    """Defect (fault audit): a runner ending unlocked its lock file, then removed it; one
    that opened the file in between locked a file nobody else could see, and the next
    runner made a new one: two runs on one database. The file is removed while still
    locked now, and a lock taken on a file no longer at the path is taken again."""
    import fcntl

    from arena.storage import StorageLockedError

    db = tmp_path / "t.sqlite"
    a, b = DatabaseLock(db), DatabaseLock(db)
    a.acquire()
    real = b._lock_file
    calls = 0

    def racing() -> None:  # b opens a's file, a ends, b locks the file a removed
        nonlocal calls
        calls += 1
        if calls > 1:
            return real()
        fh = b.path.open("a+")
        a.release()
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        b._fh = fh

    b._lock_file = racing  # type: ignore[method-assign]
    b.acquire()
    assert calls == 2  # the removed file was let go, the one at the path locked
    with pytest.raises(StorageLockedError):
        DatabaseLock(db).acquire()
    b.release()
    c = DatabaseLock(db)
    c.acquire()
    c.release()
    assert not c.path.exists()


def test_a_reader_looking_at_the_lock_is_waited_out_not_taken_for_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (web audit): `arena web` and `arena leaderboard` take the lock shared for an
    instant to see whether a run holds it; a runner starting at that instant tried once,
    and refused to run ("another `arena tournament` ... is running", naming a dead run's
    pid): 37 of 2,000 starts failed beside a busy `arena web`. It tries again a few times;
    a real run holding the lock is still refused."""
    import fcntl

    from arena.storage import StorageLockedError, lock_owner
    from arena.tournament import runner

    db = tmp_path / "t.sqlite"
    reader = DatabaseLock(db).path.open("a+")
    fcntl.flock(reader.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)  # as lock_owner does
    waits: list[float] = []

    def reader_done(seconds: float) -> None:  # the reader lets go while the runner waits
        waits.append(seconds)
        fcntl.flock(reader.fileno(), fcntl.LOCK_UN)

    monkeypatch.setattr(runner.time, "sleep", reader_done)
    lock = DatabaseLock(db)
    lock.acquire("t-1")
    assert waits and lock_owner(db) == "t-1"
    monkeypatch.undo()
    with pytest.raises(StorageLockedError, match="another `arena tournament`"):
        DatabaseLock(db).acquire()  # a run holds it: tried again, then refused
    lock.release()
    reader.close()


def test_a_database_changed_by_hand_is_named_not_resumed_wrongly(tmp_path: Path) -> None:
    """Defects (fault audit): a drawn seed edited to another number resumed silently,
    playing some seatings twice and others never; a damaged stored config could not be
    replaced even with --fresh."""
    cfg = make_config(tmp_path, bots=3, seed=None)
    _run(cfg, FakeReferee(), max_new_matches=3)
    with Storage(cfg.db) as st:
        st.conn.execute("UPDATE tournaments SET config_json = json_set(config_json, "
                        "'$.drawn_seed', 12345)")  # fmt: skip
        st.conn.commit()
    with pytest.raises(TournamentError, match=r"is not this tournament's.*--fresh"):
        _run(cfg, FakeReferee())
    with Storage(cfg.db) as st:
        st.conn.execute("UPDATE tournaments SET config_json = '{\"broken'")
        st.conn.commit()
    with pytest.raises(StorageError, match="damaged"):
        _run(cfg, FakeReferee())
    assert _run(cfg, FakeReferee(), fresh=True).finished
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.completed == 6 and "drawn_seed" in info.config


# ----------------------------------------------------------- misbehaving bot processes
# (audit of local bot processes, 2026-12-01)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", "rb") as fh:  # a zombie is gone for our purpose
        return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"


def test_a_child_that_ignores_sigterm_is_killed_with_its_bot(tmp_path: Path) -> None:
    """Defect: stopping a bot sent SIGTERM to its session and waited for the bot alone; the
    bot left, so the SIGKILL never came, and a child that ignores SIGTERM (any child the SDK
    forks inherits asyncio's handler) outlived the tournament."""
    import sys

    from arena.tournament.config import BotSpec

    pid_file = tmp_path / "child.pid"
    code = (
        "import os, signal, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )

    async def scenario() -> int:
        p = _BotProcess(BotSpec(name="b", kind="command"), [sys.executable, "-c", code], "t",
                        tmp_path / "b.log")  # fmt: skip
        await p.start()
        for _ in range(600):  # (a guard, not a timing)
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.02)
        child = int(pid_file.read_text())
        await p.stop(grace=0.5)
        return child

    child = asyncio.run(scenario())
    for _ in range(100):
        if not _alive(child):
            break
        import time

        time.sleep(0.05)
    assert not _alive(child)


def test_no_bot_is_given_an_environment_variable_holding_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: local bots got the organiser's whole environment, so a remote bot's
    ``token_env`` (FRIEND_TOKEN) let a local bot connect as that bot and play its matches.
    No variable whose value is a bot's token is passed on; the bot's own is ARENA_TOKEN."""
    import sys

    from arena.tournament.config import BotSpec

    monkeypatch.setenv("FRIEND_TOKEN", "friend-secret-token-0123456789")
    monkeypatch.setenv("HARMLESS", "kept")
    out = tmp_path / "env.txt"
    code = f"import os; open({str(out)!r}, 'w').write(repr(sorted(os.environ.items())))"

    async def scenario() -> None:
        hidden = frozenset({"own-token", "friend-secret-token-0123456789"})
        p = _BotProcess(BotSpec(name="b", kind="command"), [sys.executable, "-c", code],
                        "own-token", tmp_path / "b.log", hidden=hidden)  # fmt: skip
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()

    asyncio.run(scenario())
    env = dict(eval(out.read_text()))  # (our own child's repr of a list of str pairs)
    assert "FRIEND_TOKEN" not in env
    assert env["HARMLESS"] == "kept" and env["ARENA_TOKEN"] == "own-token"


def test_a_bots_log_tail_shows_escape_sequences_as_text(tmp_path: Path) -> None:
    """Defect: the tail of a bot's log, printed in the runner's errors and warnings, passed
    a bot's terminal escape sequences (a reset, a window title) to the organiser's
    terminal."""
    from arena.tournament.config import BotSpec

    log = tmp_path / "b.log"
    log.write_bytes("fine\r\n\x1bc\x1b]0;owned\x07 Tournament \u202efinished OK\n".encode())
    p = _BotProcess(BotSpec(name="b", kind="command"), [], "t", log)
    tail = p.tail()
    assert "\x1b" not in tail and "\x07" not in tail and "\u202e" not in tail
    assert tail == "fine\n\\x1bc\\x1b]0;owned\\x07 Tournament \\u202efinished OK"


def test_a_log_replaced_by_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Defect: a bot that put a FIFO in place of its log and exited froze the arena (the
    restart opened the log on the event loop, blocking until someone opened the other
    end; Ctrl-C did nothing). The log is opened only if it is a regular file."""
    import os
    import sys

    from arena.tournament.config import BotSpec

    log = tmp_path / "b.log"
    os.mkfifo(log)
    p = _BotProcess(BotSpec(name="b", kind="command"), [sys.executable, "-c", "pass"], "t", log)
    assert p.tail() == ""
    with pytest.raises(TournamentError, match=r"cannot write the log of bot 'b'.*not a regular"):
        asyncio.run(p.start())


def test_every_bot_process_hides_every_bots_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(review) Each launched bot is given every bot's token to keep out of its
    environment (a remote bot's among them), not its own only."""
    from arena.tournament import load_config

    seen: list[frozenset[str]] = []

    async def started(self: _BotProcess) -> None:
        seen.append(self.hidden)
        raise TournamentError("stop here")

    monkeypatch.setattr(_BotProcess, "start", started)
    conf = tmp_path / "t.toml"
    conf.write_text(f'name = "t"\nseed = 1\ndb = "{tmp_path / "t.sqlite"}"\n'
                    f'out = "{tmp_path / "out"}"\n[bots]\na = "random"\nb = "random"\n'
                    'far = { remote = true, token = "far-token-0123456789" }\n')  # fmt: skip
    with pytest.raises(TournamentError, match="stop here"):
        run(load_config(conf), QUIET)
    assert len(seen) == 1 and "far-token-0123456789" in seen[0] and len(seen[0]) == 3


def _sleeper_bots(tmp: Path) -> Any:
    """A config whose bots are processes that only sleep (the fake referee plays them)."""
    import sys

    sleeper = {"command": [sys.executable, "-c", "import time; time.sleep(120)"]}
    return parse_config(
        {"name": "t", "ruleset": "classic", "max_deals": 2, "seed": 7, "concurrency": 2,
         "db": str(tmp / "t.sqlite"), "out": str(tmp / "out"),
         "bots": {n: sleeper for n in ("ann", "bob", "cid")}},
        source="test.toml", base_dir=tmp,
    )  # fmt: skip


def _signal_while_stopping(monkeypatch: pytest.MonkeyPatch, sig: int) -> list[_BotProcess]:
    """Send ``sig`` to this process as the runner starts stopping its bots; the bots whose
    stop ran to its end."""
    import signal
    import threading

    stopped: list[_BotProcess] = []
    sent: list[int] = []
    original = _BotProcess.stop

    async def stop(self: _BotProcess, grace: float = 3.0) -> None:
        if not sent:
            sent.append(sig)
            # (to the main thread, whose loop handles it: sent to the process, it may go to
            # a thread that runs late, after the handler is gone)
            signal.pthread_kill(threading.main_thread().ident or 0, sig)
            await asyncio.sleep(0)  # (the loop runs the handler: the run is cancelled now)
        await original(self, grace)
        stopped.append(self)

    monkeypatch.setattr(_BotProcess, "stop", stop)
    return stopped


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_stopping_after_the_last_match_does_not_cut_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: str
) -> None:
    """Defect: a Ctrl-C (or SIGTERM) that came while the runner was stopping its bots after
    the last match cancelled that stop halfway: the bots were not waited for, the gRPC
    server was never stopped (tracebacks as the event loop closed: "Exception ignored in
    Server.__del__", "Event loop is closed"), remote bots were not told the tournament was
    over, and a tournament with every match stored ended "Interrupted", exit 130. The stop
    now runs to its end, and a complete tournament ends as one."""
    import signal

    cfg = _sleeper_bots(tmp_path)
    from arena.tournament.runner import Interrupted

    stopped = _signal_while_stopping(monkeypatch, getattr(signal, sig))
    try:
        outcome = run(cfg, QUIET, referee_factory=lambda c: FakeReferee(), serve=False)
    except Interrupted:  # (a KeyboardInterrupt: pytest would stop the whole session)
        pytest.fail("a complete tournament ended Interrupted: the stop was cut")
    assert outcome.finished and outcome.played_now == 6 and not outcome.interrupted
    assert len(stopped) == 3
    assert all(p.proc is not None and p.proc.returncode is not None for p in stopped)


def test_a_signal_while_stopping_an_unfinished_run_interrupts_it_after_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same signal while an unfinished run stops (here: after 2 matches of 6) still
    interrupts it, but once every bot is stopped."""
    import signal

    from arena.tournament.runner import Interrupted

    cfg = _sleeper_bots(tmp_path)
    stopped = _signal_while_stopping(monkeypatch, signal.SIGTERM)
    with pytest.raises(Interrupted) as e:
        run(cfg, RunOptions(progress=False, max_new_matches=2),
            referee_factory=lambda c: FakeReferee(), serve=False)  # fmt: skip
    assert e.value.signum == signal.SIGTERM
    assert len(stopped) == 3
    assert all(p.proc is not None and p.proc.returncode is not None for p in stopped)
    with Storage(cfg.db) as st:
        assert len(st.completed_indices(cfg.tournament_id)) == 2


def test_a_bot_writing_without_end_while_the_others_connect_has_its_log_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (review of the log cut): logs were cut only by the supervisor, which starts
    once every bot has connected: a bot printing in a loop and never connecting wrote
    without bound for the whole of ``bot_wait_s`` (30 s by default; at 100 MB/s, 3 GB).
    The wait for the bots cuts them too."""
    import sys
    import types

    from arena.tournament import runner
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _wait_for_bots

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 256 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 16 << 10)
    log = tmp_path / "chatty.log"
    code = (
        "import time\nfor i in range(20000): print(f'line {i:06d} ' + 'x' * 60)\ntime.sleep(60)\n"
    )

    class Referee:  # the bot never connects; the wait ends once its log was cut
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            for _ in range(600):  # (a guard, not a timing)
                if b"dropped here" in log.read_bytes():
                    return []
                await asyncio.sleep(0.05)
            return names

        def welcomed_bots(self) -> list[str]:
            return []

    async def scenario() -> None:
        bot = _BotProcess(BotSpec(name="chatty", kind="command"), [sys.executable, "-c", code],
                          "t", log)  # fmt: skip
        await bot.start()
        try:
            cfg: Any = types.SimpleNamespace(bot_names=["chatty"], bot_wait_s=60.0, bots=[])
            await _wait_for_bots(cfg, Referee(), {"chatty": bot}, 0)
        finally:
            await bot.stop()

    asyncio.run(scenario())
    assert b"bytes dropped here ---" in log.read_bytes()


def test_a_cut_log_keeps_whole_lines_says_what_it_dropped_and_tails_this_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation audit: what the cut keeps of the end starts at a line's start, the count it
    says it dropped is what went, and the tail still finds this start's lines when they
    began past what was kept (a restarted bot whose earlier runs filled the log): none of
    it was tested (keeping half a line, miscounting, or a tail of "" all passed)."""
    import re

    from arena.tournament import runner
    from arena.tournament.config import BotSpec

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 64 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 8 << 10)
    log = tmp_path / "b.log"
    earlier = b"".join(b"earlier run %06d\n" % i for i in range(4000))  # 68 KiB
    this = b"--- starting b\n" + b"".join(b"line %06d %s\n" % (i, b"y" * i) for i in range(400))
    log.write_bytes(earlier)
    bot = _BotProcess(BotSpec(name="b", kind="command"), ["true"], "t", log)
    with open(log, "ab+") as fh:  # as start() leaves it, the lines of this start after
        bot._fh = fh
        bot._log_start = len(earlier)
        bot._fh.write(this)
        bot._fh.flush()
        bot.trim_log()
        text = log.read_bytes()
        head, marker, end = text[: 8 << 10], *text[8 << 10 :].split(b"---\n", 1)
        assert head == (earlier + this)[: 8 << 10]
        said = re.fullmatch(rb"\n--- \S+ log over 0 MiB: (\d+) bytes dropped here ", marker)
        assert said is not None, marker
        dropped = int(said[1])
        assert end.startswith(b"line ") and (earlier + this).endswith(end), end[:40]
        assert (8 << 10) + dropped + len(end) == len(earlier + this)
        assert bot.tail(1) == f"line 000399 {'y' * 399}"
        bot.trim_log()  # under the limit now: nothing more is cut
        assert log.read_bytes() == text


def test_a_log_of_the_limit_is_kept_whole_and_one_byte_more_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation audit: the limit itself was not tested (a cut only past twice the limit
    passed): a log of LOG_LIMIT_BYTES is left as it is; one byte more is cut."""
    from arena.tournament import runner
    from arena.tournament.config import BotSpec

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 64 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 8 << 10)
    log = tmp_path / "b.log"
    whole = b"".join(b"line %010d\n" % i for i in range(4096))  # 64 KiB
    assert len(whole) == 64 << 10
    log.write_bytes(whole)
    bot = _BotProcess(BotSpec(name="b", kind="command"), ["true"], "t", log)
    with open(log, "ab+") as fh:  # as start() leaves it
        bot._fh = fh
        bot.trim_log()
        assert log.read_bytes() == whole
        fh.write(b"!")
        fh.flush()
        bot.trim_log()
        assert b"bytes dropped here" in log.read_bytes()
        assert log.stat().st_size < 20 << 10


def test_a_bot_that_removes_its_log_still_has_it_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (review of the log cut): the cut read the log's end through its path; a bot
    that removed its log (or put something else there) went on writing to the file without
    a name, which was never cut (the disk filled all the same), and the supervisor logged a
    warning about it twice a second without end. The end is read from the file itself."""
    import sys
    from collections import Counter

    from arena.tournament import runner
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _monitor

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 256 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 16 << 10)
    log = tmp_path / "sly.log"
    code = (
        f"import os, time\nos.unlink({str(log)!r})\n"
        "for i in range(20000): print(f'line {i:06d} ' + 'x' * 60)\n"
        "print('the last line', flush=True)\ntime.sleep(60)\n"
    )

    async def scenario() -> bytes:
        bot = _BotProcess(BotSpec(name="sly", kind="command"), [sys.executable, "-c", code],
                          "t", log)  # fmt: skip
        await bot.start()
        assert bot._fh is not None
        stopping = asyncio.Event()
        monitor = asyncio.create_task(_monitor({"sly": bot}, stopping, 0, Counter(sly=1)))
        text = b""
        try:
            for _ in range(1200):  # (a guard, not a timing: waits for the last cut)
                with open(f"/proc/self/fd/{bot._fh.fileno()}", "rb") as f:
                    text = f.read()
                # (Until the cut after the last line: the bot may write past the limit
                # again between two checks of the monitor, before its last line.)
                if b"the last line" in text and b"dropped here" in text and len(text) < 256 << 10:
                    break
                await asyncio.sleep(0.05)
        finally:
            stopping.set()
            await monitor
            await bot.stop()
        return text

    text = asyncio.run(scenario())
    assert b"bytes dropped here ---" in text and text.endswith(b"the last line\n")
    assert len(text) < 256 << 10
    assert not [r for r in caplog.records if "could not cut the log" in r.getMessage()]


def test_a_bot_log_is_cut_once_more_when_the_bot_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (docs check of the log cut): the log was cut only by the twice-a-second
    check while the tournament ran; what a bot wrote after the last check (a bot printing
    fast writes gigabytes in half a second) stayed in its log once it was stopped: a
    1.2 GB log was left at the end of a tournament of 4 s. Stopping the bot cuts it too."""
    import sys

    from arena.tournament import runner
    from arena.tournament.config import BotSpec

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", 64 << 10)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", 8 << 10)
    log = tmp_path / "fast.log"
    code = (
        "import time\nfor i in range(5000): print(f'line {i:06d} ' + 'x' * 60)\n"
        "print('the last line', flush=True)\ntime.sleep(60)\n"
    )

    async def scenario() -> None:
        bot = _BotProcess(BotSpec(name="fast", kind="command"), [sys.executable, "-c", code],
                          "t", log)  # fmt: skip
        await bot.start()
        try:
            for _ in range(600):  # (a guard, not a timing) until it has written everything
                if b"the last line" in log.read_bytes():
                    break
                await asyncio.sleep(0.05)
        finally:
            await bot.stop()

    asyncio.run(scenario())
    text = log.read_bytes()
    assert b"bytes dropped here ---" in text
    assert len(text) < 20 << 10
    assert text.rstrip().endswith(b"the last line")


def test_a_pip_installed_arena_puts_no_site_packages_on_a_bots_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: every local bot got the arena's package directory first on its PYTHONPATH.
    From a checkout that is the repository (sdk for a `{python} mybot.py` command bot), but
    installed by pip it is the venv's site-packages: a command bot running another Python
    (its own venv, 3.12) imported this venv's grpc, built for 3.11, and failed ("cannot
    import name 'cygrpc'"). The checkout's root is still put first."""
    import os
    import site
    import sys

    from arena.tournament import runner
    from arena.tournament.config import BotSpec

    argv = [sys.executable, "-c", "import os; print('path', os.environ.get('PYTHONPATH'))"]

    def bot_path(root: Path, inherited: str | None) -> str:
        monkeypatch.setattr(runner, "_ROOT", root)
        if inherited is None:
            monkeypatch.delenv("PYTHONPATH", raising=False)
        else:
            monkeypatch.setenv("PYTHONPATH", inherited)
        log = tmp_path / f"{len(list(tmp_path.iterdir()))}.log"

        async def scenario() -> None:
            p = _BotProcess(BotSpec(name="b", kind="command"), argv, "t", log)
            await p.start()
            assert p.proc is not None
            await p.proc.wait()
            await p.stop()

        asyncio.run(scenario())
        (line,) = [s for s in log.read_text().splitlines() if s.startswith("path ")]
        return line.removeprefix("path ")

    installed = Path(site.getsitepackages()[0]).resolve()
    assert bot_path(installed, "/theirs") == "/theirs"
    assert bot_path(installed, None) == "None"  # (not set at all)
    checkout = tmp_path / "checkout"
    assert bot_path(checkout, "/theirs") == f"{checkout}{os.pathsep}/theirs"
    assert bot_path(checkout, None) == str(checkout)


def test_the_final_ratings_and_the_finish_are_one_commit(tmp_path: Path) -> None:
    """``finalize`` stores the ratings and marks a complete tournament finished in one
    transaction: one durable commit (it waited for two; the wait is part of the recording
    time `arena bench` reports)."""
    from arena.tournament.runner import finalize

    cfg = make_config(tmp_path)
    assert _run(cfg).finished
    tid = cfg.tournament_id
    with Storage(cfg.db) as st:
        ratings = st.rating_history(tid)
        st.conn.execute("UPDATE tournaments SET finished_at = NULL")
        st.conn.execute("DELETE FROM ratings")
        statements: list[str] = []
        st.conn.set_trace_callback(statements.append)
        finalize(st, cfg)
        st.conn.set_trace_callback(None)
        assert statements.count("BEGIN IMMEDIATE") == 1, statements  # (one write)
        info = st.tournament(tid)
        assert info is not None and info.finished_at is not None
        assert st.rating_history(tid) == ratings


def test_a_remote_bot_that_never_came_is_told_of_refused_tokens(tmp_path: Path) -> None:
    """Defect (left since faults round 34): a remote bot whose token was mistyped was
    reported only as "never connected with its token", though the arena had refused its
    streams; the organiser now reads how many streams came with an unknown token and from
    where. Without a refused stream, nothing is added."""
    remote = {"remote": True, "token": "tok-cid-0123456789"}
    bots = {"ann": "random", "bob": "random", "cid": remote}
    for refused in ((3, "ipv4:10.0.0.9:51234"), (0, "")):
        base = tmp_path / str(refused[0])
        cfg = parse_config({"name": "t", "seed": 7, "bot_wait_s": 0.1, "bots": bots,
                            "db": str(base / "t.sqlite"), "out": str(base / "out")},
                           source="test.toml", base_dir=tmp_path)  # fmt: skip
        fake = FakeReferee(absent={"cid"})
        fake.refused_tokens = lambda refused=refused: refused  # type: ignore[attr-defined]
        with pytest.raises(TournamentError) as info:
            _run(cfg, fake)
        said = str(info.value)
        assert "\n  cid: remote bot, never connected with its token" in said
        assert (
            "the arena refused 3 streams with an unknown or missing token, the last from "
            "ipv4:10.0.0.9:51234: is the remote bot's token right?" in said
        ) == bool(refused[0])


def test_the_referee_counts_streams_refused_for_their_token(tmp_path: Path) -> None:
    """What the message above reads: every stream with an unknown or missing token is
    counted, with its peer; a stream with a bot's token is not."""
    import grpc

    from arena.v1 import arena_pb2_grpc as pb_grpc
    from tests.support.harness import arena, welcomed_call

    async def go() -> None:
        async with arena(tmp_path) as a:
            a.referee.add_bot("ann", "tok-ann-0123456789")
            async with grpc.aio.insecure_channel(a.target) as channel:
                stub = pb_grpc.ArenaStub(channel)
                for metadata in ((("authorization", "Bearer tok-typo-0123456789"),), ()):
                    call = stub.Play(metadata=metadata)
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await call.read()
                    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
                good = await welcomed_call(channel, "tok-ann-0123456789", "ann")
                count, peer = a.referee.refused_tokens()
                assert count == 2 and "127.0.0.1" in peer
                good.cancel()

    asyncio.run(go())
