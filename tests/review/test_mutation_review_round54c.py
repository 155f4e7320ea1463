"""Review round 54 (second batch): hand mutants of the changes merged in round 54 by rec54
(the recording share, the overlapped store: arena/tournament/runner.py,
arena/referee/match.py and core.py), journey54 (sdk/cli.py, client.py, human.py,
workers.py), proto54 (tests/support/proto_wire.py) and bots54 (arena/bench/forks.py,
strength.py). Each test names the mutants it kills (its id and the edit in the docstring).

72 hand mutants of the merged diffs (R 23 runner, M 6 referee, J 12 sdk, P 16 proto_wire,
F 12 forks, S 3 strength): the round's own tests killed 38; the tests here kill 29 more;
3 are equivalent (R15: a failed store's result asked for at a cancel, whose exception a
cancelled run drops anyway; R21: any store error in ``fatal``, where a non-storage one
propagates from its worker first; P02: ``or of["kind"] in (message, enum, group)``, dead
while only scalar types share a group); F09 and J11 stood in code these fixes rewrote, and
their mutants there (F09b, J11b) are killed, as are the 7 of the fixes themselves (X01-X07).

Defects, fixed (each with its test here):
- proto_wire held an enum value's names the wrong way round: an alias added
  (``allow_alias``) was called a rename, one taken away (a name JSON readers may send)
  passed;
- ``python -m arena.bench.forks`` took ``--workers 0`` or ``-2``, ``--pimc-budget 0``,
  ``-1`` or ``nan``, and variant values that are no finite number (``bid-confidence=nan``)
  or no chance (``free-concede=5``), and measured them, unsaid;
- ``sdk.run(Bot, workers=2)`` without ``spec=`` suggested the bot file's name alone,
  which the workers look for in the current directory (and a spec for a class made in a
  function, which none can name).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.tournament import RunOptions, run_tournament
from sdk import Bot
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run
from tests.support.harness import stored_matches

QUIET = RunOptions(progress=False)


def _burning_saves(monkeypatch: pytest.MonkeyPatch, cpu_s: float) -> list[float]:
    """Each match stored burns ``cpu_s`` of CPU on the storage thread (a group of n, n
    times that: every store of the runner passes through ``save_matches`` since rec54b's
    group commit); the CPU each match burnt."""
    save = Storage.save_matches
    burnt: list[float] = []

    def burning(self: Storage, tid: str, matches: Any) -> Any:
        t = time.thread_time()
        while time.thread_time() - t < cpu_s * len(matches):
            pass
        burnt.extend([(time.thread_time() - t) / len(matches)] * len(matches))
        return save(self, tid, matches)

    monkeypatch.setattr(Storage, "save_matches", burning)
    return burnt


def test_the_storing_cpu_counts_where_the_tables_did_not_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R04 (``save_cpu_s += save_cpu`` -> ``+= 0``): matches longer than their stores, so
    the tables hardly wait for them; the storage thread's CPU is what recording cost, and
    ``record_s`` holds all of it."""
    burnt = _burning_saves(monkeypatch, 0.01)
    out = _run(make_config(tmp_path, concurrency=3), FakeReferee(delay=0.15))
    assert out.finished and len(burnt) == 24
    assert out.record_s >= sum(burnt) + out.finalize_s


def test_the_tables_wait_is_a_mean_over_the_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R07 (``record_wait_s = waited_s / max(1, len(workers))`` -> ``waited_s``): three
    tables waiting for slow commits at once wait (summed) longer than the run lasts; the
    share divides by the tables, so a table's mean wait is within the time played."""
    save = Storage.save_match

    def slow(self: Storage, *args: Any, **kwargs: Any) -> None:
        save(self, *args, **kwargs)
        time.sleep(0.03)  # (a commit's fsync: time waited, no CPU)

    monkeypatch.setattr(Storage, "save_match", slow)
    out = _run(make_config(tmp_path, concurrency=3))
    assert out.finished and out.played_now == 24
    assert 0 < out.record_wait_s <= out.play_s


def _failing_store(monkeypatch: pytest.MonkeyPatch, nth: int, error: Exception) -> None:
    """The ``nth`` match stored fails with ``error`` (the others store): a StorageError
    keeps that match out of its group (``save_matches``' answer for it, as a row SQLite
    refuses), any other error is raised from the group's store (a defect)."""
    from arena.storage import StorageError

    save = Storage.save_matches
    saves: list[str] = []

    def failing(self: Storage, tid: str, matches: Any) -> Any:
        at = nth - len(saves) - 1  # (the failing match's place in this group, if in it)
        saves.extend(m.match_id for m in matches)
        if not 0 <= at < len(matches):
            return save(self, tid, matches)
        if not isinstance(error, StorageError):
            raise error
        others = [m for k, m in enumerate(matches) if k != at]
        kept = iter(save(self, tid, others) if others else [])
        return [error if k == at else next(kept) for k in range(len(matches))]

    monkeypatch.setattr(Storage, "save_matches", failing)


def test_a_store_failing_at_concurrency_3_starts_no_new_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R16 (``while not fatal:`` -> ``while True:``): the 4th store fails while the other
    tables play on; none of them starts a new match after it (at most the ones under way,
    and one each whose start raced the failure), and the stores before it are kept."""
    from arena.storage import StorageError
    from arena.tournament import TournamentError

    cfg = make_config(tmp_path, concurrency=3)
    _failing_store(monkeypatch, 4, StorageError("disk I/O error (scripted)"))
    fake = FakeReferee()
    with pytest.raises(TournamentError, match="scripted"):
        _run(cfg, fake)
    assert sum(fake.calls.values()) <= 4 + 2 * 3, fake.calls  # (of 24)
    assert stored_matches(cfg.db) >= 3


def _watching_stores(loop: asyncio.AbstractEventLoop) -> list[asyncio.Future[Any]]:
    """The futures of the stores the run hands to its storage thread, in order."""
    futures: list[asyncio.Future[Any]] = []
    handing = loop.run_in_executor

    def watched(executor: Any, fn: Any, *args: Any) -> asyncio.Future[Any]:
        future = handing(executor, fn, *args)
        futures.append(future)
        return future

    loop.run_in_executor = watched  # type: ignore[method-assign]
    return futures


def test_a_store_done_when_the_run_is_cancelled_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R14 (the count of a store already done at a cancel -> ``pass``): at concurrency 1
    the table plays its 3rd match, the 2nd's store done, when the run is cancelled (Ctrl-C):
    the progress counted it, as the database holds it (2 shown, 2 stored)."""
    from arena.tournament import runner

    cfg = make_config(tmp_path, concurrency=1)
    shown: list[int] = []
    update = runner._Display.update

    def noting(self: Any, book: Any, played: int) -> None:
        shown.append(played)
        update(self, book, played)

    monkeypatch.setattr(runner._Display, "update", noting)
    fake = FakeReferee()
    play = fake.run_match

    async def main() -> None:
        futures = _watching_stores(asyncio.get_running_loop())
        third = asyncio.Event()

        async def run_match(match_id: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
            if sum(fake.calls.values()) == 2:  # the 3rd: held until the run is cancelled
                fake.calls[match_id] += 1
                while not (len(futures) == 2 and futures[1].done()):
                    await asyncio.sleep(0.001)
                third.set()
                await asyncio.Event().wait()
            return await play(match_id, *args, **kwargs)

        fake.run_match = run_match  # type: ignore[method-assign]
        task = asyncio.create_task(
            run_tournament(cfg, QUIET, referee_factory=lambda _c: fake, serve=False,
                           launch_bots=False)
        )  # fmt: skip
        await third.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert stored_matches(cfg.db) == 2
    assert shown[-1:] == [2], shown


def test_a_cancel_while_a_table_waits_for_its_store_keeps_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """R02 (``None if saving.cancelled() else saving.exception()`` -> ``saving.exception()``)
    and R23 (``storage_thread.shutdown(wait=True)`` -> ``wait=False``): the run is cancelled
    while its table waits for the 1st match's store (a slow commit): the store is finished
    all the same (the run's stop waits for it: the match is in the database), the cancelled
    wait is no error in asyncio's log ("Exception in callback"), and the same command
    plays the rest."""
    cfg = make_config(tmp_path, concurrency=1)
    release = threading.Event()
    save = Storage.save_match

    def held(self: Storage, *args: Any, **kwargs: Any) -> None:
        release.wait(timeout=30)
        save(self, *args, **kwargs)

    monkeypatch.setattr(Storage, "save_match", held)
    fake = FakeReferee()

    async def main() -> None:
        task = asyncio.create_task(
            run_tournament(cfg, QUIET, referee_factory=lambda _c: fake, serve=False,
                           launch_bots=False)
        )  # fmt: skip
        # The 2nd match has ended (no match running): its table waits for the 1st's store.
        while not (sum(fake.calls.values()) == 2 and fake.running == 0):
            await asyncio.sleep(0.001)
        task.cancel()  # (the store is let go only once the run stops: its stop waits)
        threading.Timer(0.3, release.set).start()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
    assert stored_matches(cfg.db) == 1
    monkeypatch.setattr(Storage, "save_match", save)
    again = _run(cfg)
    assert again.finished and again.skipped == 1 and again.played_now == 23


def test_the_referee_counts_its_record_files_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M03 (``_write``'s ``self.record_cpu_s += time.thread_time() - t`` -> ``pass``): with
    ``record_dir`` a referee writes each event of a match to its record file as it happens;
    that CPU is the match's recording too (``Referee.record_cpu_s``), not only the final
    record's building."""
    import dataclasses

    import arena.referee.match as match_mod
    from sdk import Bot
    from tests.support import harness

    write_line = match_mod.MatchRunner._write_line
    burnt: list[float] = []

    def slow_line(self: Any, f: Any, obj: dict[str, Any]) -> None:
        t = time.thread_time()
        while time.thread_time() - t < 0.002:
            pass
        burnt.append(time.thread_time() - t)
        write_line(self, f, obj)

    referees: list[Any] = []

    class Recording(harness.Referee):  # type: ignore[name-defined,misc]
        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(dataclasses.replace(config, record_dir=tmp_path), *args, **kwargs)
            referees.append(self)

    monkeypatch.setattr(match_mod.MatchRunner, "_write_line", slow_line)
    monkeypatch.setattr(harness, "Referee", Recording)
    rec = harness.play_sdk_match(Bot, max_deals=1)
    assert rec["result"] is not None and len(referees) == 1
    assert len(burnt) > 2 and list(tmp_path.glob("*.jsonl"))
    assert referees[0].record_cpu_s >= sum(burnt)


# --- proto54: tests/support/proto_wire.py


def _proto(tmp: Path, *edits: tuple[str, str]) -> dict[str, Any]:
    from tests.support.proto_wire import PROTO, wire_surface

    text = PROTO.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp / "arena.proto"
    path.write_text(text, encoding="utf-8")
    return wire_surface(path)


ALIAS = ("RANK_NINE = 1;", "option allow_alias = true;\n  RANK_NINE = 1;\n  RANK_9 = 1;")


def test_an_enum_alias_added_is_an_addition_and_one_taken_away_a_break(tmp_path: Path) -> None:
    """Defect: ENUM_VALUE_SAME_NAME was held the wrong way round (``set(now) <= set(names)``):
    an alias added (``allow_alias``: RANK_9 beside RANK_NINE) was "renamed", and one taken
    away (a name JSON readers may send, which no longer parses) passed. As buf has it, every
    old name of the value must be kept; new ones may be added."""
    from tests.support.proto_wire import breaking_changes, wire_surface

    today = wire_surface()
    aliased = _proto(tmp_path, ALIAS)
    assert aliased["enums"]["arena.v1.Rank"]["values"]["1"] == ["RANK_NINE", "RANK_9"]
    assert breaking_changes(today, aliased) == []
    assert breaking_changes(aliased, today) == [
        "arena.v1.Rank value 1 was renamed from ['RANK_NINE', 'RANK_9'] to ['RANK_NINE']"
    ]


GET_INFO = "rpc GetInfo(GetInfoRequest) returns (ServerInfo);"


@pytest.mark.parametrize(
    ("mutants", "edit", "said"),
    [
        (
            "P07 (the idempotency level dropped from the methods' keys)",
            (GET_INFO, "rpc GetInfo(GetInfoRequest) returns (ServerInfo) {\n"
                       "    option idempotency_level = NO_SIDE_EFFECTS;\n  }"),
            "method arena.v1.Arena/GetInfo changed its idempotency level from "
            "IDEMPOTENCY_UNKNOWN to NO_SIDE_EFFECTS",
        ),
        (
            "P08 (client streaming dropped from the methods' keys)",
            (GET_INFO, "rpc GetInfo(stream GetInfoRequest) returns (ServerInfo);"),
            "method arena.v1.Arena/GetInfo changed its client streaming from False to True",
        ),
    ],
)  # fmt: skip
def test_a_methods_other_properties_are_held(
    mutants: str, edit: tuple[str, str], said: str, tmp_path: Path
) -> None:
    """P07, P08: each property of a method the record keeps is compared."""
    from tests.support.proto_wire import breaking_changes, wire_surface

    assert breaking_changes(wire_surface(), _proto(tmp_path, edit)) == [said], mutants


def test_the_syntax_and_enum_reservations_are_held(tmp_path: Path) -> None:
    """P09 (the syntax's comparison -> ``if False``), P10 (an enum's reserved numbers not
    compared), P11 (an enum's reserved names not compared), P16 (a message's reservation
    checked short of its end: a single number not at all), P04 (a reserved range's end
    taken as inclusive): each taken back or changed is named."""
    import copy

    from tests.support.proto_wire import breaking_changes, wire_surface

    today = wire_surface()
    reserved = _proto(
        tmp_path,
        ("INCIDENT_BOT_ERROR = 7;", 'INCIDENT_BOT_ERROR = 7; reserved 40 to 41; reserved "OLD";'),
    )
    assert breaking_changes(reserved, today) == [
        "arena.v1.Incident: reserved numbers 40..41 are no longer reserved",
        "arena.v1.Incident: reserved name 'OLD' is no longer reserved",
    ]
    # A message's single reserved number ([30, 31)) taken back, as a range's is.
    single = _proto(tmp_path, ("bool declare = 2;", "bool declare = 2; reserved 30;"))
    assert breaking_changes(single, today) == [
        "arena.v1.PlayCard: reserved number 30 is no longer reserved"
    ]
    proto2 = copy.deepcopy(today)
    proto2["syntax"] = "proto2"
    assert breaking_changes(today, proto2) == ["the syntax changed from proto3 to proto2"]
    # A field deleted next to a reservation's end (exclusive: ``reserved 1`` is [1, 2)) is
    # not covered by it.
    cut = _proto(
        tmp_path,
        ("Card card = 1;     // the card played (required)", 'reserved 1; reserved "card";'),
        ("bool declare = 2;", ""),
    )
    assert breaking_changes(today, cut) == [
        "arena.v1.PlayCard.declare (field 2) was deleted without reserving its number 2"
        " and name 'declare'"
    ]


# --- bots54: arena/bench/forks.py


def test_the_forks_figures_follow_the_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    """F06 (the gain as old - new), F07 (``better`` counting ties), F08 (the interval
    without the square root), F12 (one seed fewer): forks' figures are those of its rows.
    The rows are fork_seed's own (its play-outs under test elsewhere), scripted here."""
    import math

    from arena.bench import forks as forks_mod

    rows = {
        3: [(0.0, 0.0), (10.0, 25.0), (5.0, 5.0)],
        4: [(20.0, -10.0), (0.0, 0.0), (0.0, 0.0)],
        5: [(0.0, 30.0), (0.0, 0.0), (0.0, 0.0)],
    }

    def scripted(rules: Any, seed: int, spec: str, budget: Any = None) -> list[dict[str, Any]]:
        out = []
        for seat, (old, new) in enumerate(rows[seed]):
            row: dict[str, Any] = {"seed": seed, "seat": seat, "old": old, "new": new}
            if old != new or (seat, seed) == (2, 3):  # (a changed decision, equal outcomes)
                row["decision"] = "bidding at 100: pass -> bid 105"
            out.append(row)
        return out

    monkeypatch.setattr(forks_mod, "fork_seed", scripted)
    report = forks_mod.forks("bid-confidence=0.9", "classic", seed=3, matches=3, workers=1)
    diffs = [5.0, -10.0, 10.0]
    mean = statistics.fmean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(3)
    assert report["deals"] == 9 and report["changed"] == 4
    assert (report["better"], report["worse"]) == (2, 1)
    assert report["gain_per_deal"] == round(mean, 2) == 1.67
    assert report["ci95"] == [round(mean - half, 2), round(mean + half, 2)]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--matches", "0"], "--matches must be at least 1, got 0"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--workers", "-2"], "--workers must be at least 1, got -2"),
        (["--pimc-budget", "0"], "--pimc-budget must be a positive number of seconds, got 0"),
        (["--pimc-budget", "-1"], "--pimc-budget must be a positive number of seconds"),
        (["--pimc-budget", "nan"], "--pimc-budget must be a positive number of seconds, got nan"),
        (["--variant", "bid-confidence=nan"], "variant bid-confidence: 'nan' is not a finite"),
        (["--variant", "auction-offset=inf"], "variant auction-offset: 'inf' is not a finite"),
        (["--variant", "free-concede=5"], "free-concede=5: a chance, from 0 to 1"),
        (["--variant", "bid-confidence=-0.1"], "bid-confidence=-0.1: a chance, from 0 to 1"),
    ],
)
def test_forks_names_a_bad_argument(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """F09 (``args.matches < 1`` -> ``< 0``: 0 met fmean's "requires at least one data
    point"), and a defect: --workers 0 or -2 ran in this process, --pimc-budget 0, -1 or
    nan was pimc's budget, a variant's value of nan, inf or a chance out of 0..1 was
    measured, all unsaid. Each is refused (exit 2), naming it, before any deal is played."""
    from arena.bench.forks import main

    base = {"--variant": "raise-cap", "--matches": "1", "--workers": "1"}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        base[flag] = value
    with pytest.raises(SystemExit) as exc:
        main([x for kv in base.items() for x in kv])
    assert exc.value.code == 2
    assert said in capsys.readouterr().err


def test_forks_refuses_bad_arguments_called_as_a_function() -> None:
    """The same from ``forks()`` itself (a script's call): a ValueError naming the argument."""
    from arena.bench.forks import forks

    for kwargs, said in (
        ({"workers": 0}, "workers must be at least 1, got 0"),
        ({"matches": 0}, "matches must be at least 1, got 0"),
        ({"pimc_budget": float("nan")}, "pimc_budget must be a positive number"),
        ({"pimc_budget": float("inf")}, "pimc_budget must be a positive number"),
    ):
        with pytest.raises(ValueError, match=said):
            forks("raise-cap", "classic", **kwargs)  # type: ignore[arg-type]


def test_the_live_ratings_count_as_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R19 (the live rating's time, ``outcome.record_s += time.perf_counter() - t_rate``,
    dropped): with the live display each match is rated as it is counted, on the event
    loop the tables share; that time is recording as well (here a slow rating)."""
    from arena.ratings import RatingBook
    from arena.tournament import run

    rate = RatingBook.rate
    burnt: list[float] = []

    def slow(self: RatingBook, *args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.02:
            pass
        burnt.append(time.perf_counter() - t)
        return rate(self, *args, **kwargs)

    monkeypatch.setattr(RatingBook, "rate", slow)
    cfg = make_config(tmp_path, concurrency=1)
    fake = FakeReferee()
    out = run(cfg, RunOptions(progress=True), referee_factory=lambda _c: fake, serve=False,
              launch_bots=False)  # fmt: skip
    assert out.finished and len(burnt) == 2 * 24  # live, then finalize's
    assert out.record_s >= sum(burnt[:24]) + out.finalize_s


def test_a_store_that_breaks_otherwise_fails_the_run_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R20 (``stored``'s ``except StorageError`` -> ``except Exception``): a store that
    fails with something else than the storage's errors (a bug: here a RuntimeError) is no
    quiet end of the table (the run "over" with matches neither stored nor failed): the run
    fails with it, every match stored before it kept."""
    _failing_store(monkeypatch, 3, RuntimeError("a bug in the store (scripted)"))
    cfg = make_config(tmp_path, concurrency=1)
    with pytest.raises(RuntimeError, match="scripted"):
        _run(cfg)
    assert stored_matches(cfg.db) == 2


# --- journey54: sdk/client.py


def test_a_run_with_workers_that_ends_names_no_call_still_running(tmp_path: Path) -> None:
    """J09 (a call's ``_forget_call`` not added: every call ever made stayed in
    ``BotRunner._calls``) and J10 (``if stuck:`` -> ``if True:``): a run of ``arena-bot run
    --workers 1`` whose matches end as they should stops its workers with no call running,
    and says none is ("a bot call is still running in a worker process" is for a call that
    never returned: tests/docs/test_journeys_round54.py)."""
    import subprocess

    from tests.e2e.test_workers_e2e import _play

    procs: list[subprocess.Popen[str]] = []
    try:
        records, code, out, _ = asyncio.run(_play(tmp_path, procs, ("--workers", "1"), matches=1))
    finally:
        for p in procs:  # (the processes this test started, and only those)
            if p.poll() is None:
                p.kill()
                p.wait()
    assert code == 0, out
    assert [r["incidents"] for r in records] == [[]]
    assert "run in 1 worker process" in out, out
    assert "still running in a worker process" not in out, out


class _Named(Bot):
    """A bot class of this file, which a spec can name (``file.py:_Named``)."""


def test_the_spec_asked_for_names_the_bots_file_from_here() -> None:
    """Defect: ``sdk.run(Lowest, ..., workers=2)`` without ``spec=`` was told to give
    ``spec='mybot.py:Lowest'``, the file's name alone, which the workers look for in the
    current directory: run as ``python bots/mybot.py`` none would find it. The file is now
    named as seen from here; a class no spec can name (made in a function) gets the
    generic example rather than a spec that would not load."""
    import os

    from sdk.client import BotRunner

    here = Path(os.path.relpath(__file__)).as_posix()
    with pytest.raises(ValueError, match="give spec=") as e:
        BotRunner(_Named, "localhost:1", "t", workers=2)
    assert str(e.value).endswith(f"give spec='{here}:_Named'"), e.value

    def made() -> type[Bot]:
        class Local(Bot):
            pass

        return Local

    with pytest.raises(ValueError) as e:
        BotRunner(made(), "localhost:1", "t", workers=2)
    assert str(e.value).endswith("give spec='mybot.py:MyBot', say"), e.value


def test_a_bot_of_a_file_no_spec_loads_gets_the_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """X07 (``path.suffix != ".py"`` dropped): a class of a module read from a file that is
    no ``.py`` (a loader of one's own) is not told ``spec='odd.txt:Odd'``, which no worker
    could load: the example is given."""
    import importlib.machinery
    import importlib.util
    import sys

    from sdk.client import BotRunner

    path = tmp_path / "odd.txt"
    path.write_text("from sdk import Bot\n\n\nclass Odd(Bot):\n    pass\n")
    loader = importlib.machinery.SourceFileLoader("odd_round54c", str(path))
    spec = importlib.util.spec_from_loader("odd_round54c", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "odd_round54c", module)
    loader.exec_module(module)
    with pytest.raises(ValueError) as e:
        BotRunner(module.Odd, "localhost:1", "t", workers=2)
    assert str(e.value).endswith("give spec='mybot.py:MyBot', say"), e.value


def test_a_record_file_that_stops_short_is_left_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """M05 (``_write_line`` keeping ``self._file`` after its write failed): the disk fills
    after 3 lines of a match's record file; the match goes on, and the file is let go: its
    error is said once, not again at every later event (each retried on the closed file)."""
    import dataclasses

    from sdk import Bot as PlainBot
    from tests.support import harness

    class Recording(harness.Referee):  # type: ignore[name-defined,misc]
        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(dataclasses.replace(config, record_dir=tmp_path), *args, **kwargs)

    harness.record_fills_after(monkeypatch, 3)
    monkeypatch.setattr(harness, "Referee", Recording)
    with caplog.at_level(logging.ERROR, logger="arena.referee"):
        rec = harness.play_sdk_match(PlainBot, max_deals=1)
    assert rec["result"] is not None
    said = [r for r in caplog.records if "cannot write its record" in r.getMessage()]
    assert len(said) == 1, caplog.text


STDERR_PRINTER = (
    "import sys\nfrom sdk import Bot\n\n\n"
    "class Printer(Bot):\n"
    "    def play(self, view):\n"
    '        print("playing deal", view.deal_number, file=sys.stderr, flush=True)\n'
    "        return min(view.legal_actions, key=lambda a: (a.card.points, a.card))\n"
)


def test_a_bot_printing_to_stderr_whose_reader_left_plays_on(tmp_path: Path) -> None:
    """J02 (sys.stderr left as it was, without ``reader_may_leave``): a bot that prints to
    stderr, tried with stderr piped to a reader that stops reading (``2>&1 | head``, or
    ``2>`` a pipe closed early): its prints go nowhere and its decisions are its own, no
    incident (the table, on stdout, is read to its end)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    (tmp_path / "printer.py").write_text(STDERR_PRINTER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sdk.cli", "try", "printer.py", "-n", "2", "--max-deals", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**env, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = proc.stderr.readline()
        proc.stderr.close()  # the reader leaves
        out = proc.stdout.read().decode(errors="replace")
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert first.startswith(b"playing deal 0"), first
    assert code == 0, out
    row = next(line for line in out.splitlines() if "Printer" in line)
    assert row.split("│")[-2].strip() == "0", out  # its incidents: none


def test_a_bot_in_a_worker_process_prints_to_stderr_whose_reader_left(tmp_path: Path) -> None:
    """J06 (the worker's sys.stderr left as it was): the same in a worker process of
    ``--workers`` (its own descriptor of the runner's stderr): the decision is the bot's,
    not failed."""
    import os
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    (tmp_path / "printer.py").write_text(STDERR_PRINTER)
    script = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 2); os.close(w)  # a reader that left\n"
        "from engine import PRESETS, Game, fallback_action, observe\n"
        "from sdk.workers import Processes\n"
        "g = Game.new(PRESETS['classic'], 1, ('a', 'b', 'c'))\n"
        "while g.phase.name != 'PLAYING' or len(g.legal_actions()) < 2:\n"
        "    g.apply(fallback_action(g.legal_actions()))\n"
        "procs = Processes('printer.py:Printer', 1, 'printer')\n"
        "procs.wait_ready()\n"
        "bot = procs.make('m1')\n"
        "action, failed = bot.decide(observe(g, g.to_act), None)\n"
        "procs.shutdown()\n"
        "print(repr(failed), action, flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)}, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out
    assert out.stdout.splitlines()[-1].startswith("None play "), out


def test_a_nested_message_and_enum_are_held_too(tmp_path: Path) -> None:
    """P13 (a message's nested messages and enums not walked): v1 has none yet, but one
    added (``PlayCard.Why``, ``PlayCard.Kind``) is recorded with its fields and values, and
    its field deleted or value renamed later is named."""
    from tests.support.proto_wire import breaking_changes

    nest = "message PlayCard {"
    added = _proto(
        tmp_path,
        (nest, nest + "\n  message Why { uint32 code = 1; }\n  enum Kind { KIND_NONE = 0; }"),
    )
    assert added["messages"]["arena.v1.PlayCard.Why"]["fields"]["1"]["name"] == "code"
    assert added["enums"]["arena.v1.PlayCard.Kind"]["values"] == {"0": ["KIND_NONE"]}
    changed = _proto(
        tmp_path,
        (nest, nest + "\n  message Why { }\n  enum Kind { KIND_NO = 0; }"),
    )
    assert breaking_changes(added, changed) == [
        "arena.v1.PlayCard.Why.code (field 1) was deleted without reserving its number 1"
        " and name 'code'",
        "arena.v1.PlayCard.Kind value 0 was renamed from ['KIND_NONE'] to ['KIND_NO']",
    ]


def test_each_branch_is_played_by_its_own_delegate(monkeypatch: pytest.MonkeyPatch) -> None:
    """F05 (the new branch played out with the old delegate, ``_Delegate()``, instead of
    the variant's): classic, seed 25, where counting raises the 100 to 105 and raise-cap
    names 100 (tests/bench/test_forks_round54.py): the fork plays its old branch with the
    delegate, its new one with the variant (its later decisions are the variant's too), on
    the same pimc seed. (The play-outs are scripted: what they are handed is under test.)"""
    from arena.bench import forks as forks_mod
    from bots.pimc import _Delegate
    from engine import load_ruleset

    handed: list[tuple[Any, type, int]] = []

    def scripted(game: Any, seat: int, delegate: Any, seed: int, budget: Any) -> float:
        handed.append((game.clone(), type(delegate), seed))
        return 0.0

    monkeypatch.setattr(forks_mod, "_play_out", scripted)
    rows = forks_mod.fork_seed(load_ruleset("classic"), 25, "raise-cap")
    changed = [r for r in rows if "decision" in r]
    assert len(changed) == 1 and changed[0]["decision"].startswith("contract at 100")
    assert [t for _, t, _ in handed] == [_Delegate, forks_mod._RaiseCap]
    seat = changed[0]["seat"]
    assert [s for _, _, s in handed] == [25 * 10 + seat] * 2
    last = [g.record()["deals"][0]["actions"][-1] for g, _, _ in handed]
    assert last == [{"seat": seat, "action": "contract 105"},
                    {"seat": seat, "action": "contract 100"}]  # fmt: skip


def test_raise_cap_keeps_countings_level_for_four_aces_only() -> None:
    """F04 (the four aces' exception taken for three, ``>= 3``, without the ruleset's
    ``ace_marriage``): classic, seed 28, the declarer holds three aces; counting names 115
    over the bid of 105, and raise-cap caps it (105): only the four aces, a marriage of
    their own, keep counting's level."""
    from arena.bench.forks import _RaiseCap
    from bots.counting import CountingBot
    from bots.pimc import _Delegate
    from engine import Contract, Game, Phase, Rank, load_ruleset, observe

    game = Game.new(load_ruleset("classic"), 28, ["a", "b", "c"])
    bots = [CountingBot() for _ in range(3)]
    while game.phase is not Phase.CONTRACT:
        seat = game.to_act
        assert seat is not None
        game.apply(bots[seat].act(observe(game, seat)), seat=seat)
    assert game.declarer is not None
    view = observe(game, game.declarer)
    assert sum(c.rank == Rank.ACE for c in view.hand) == 3 and view.bid == 105
    assert _Delegate().act(view) == Contract(115)
    assert _RaiseCap().act(view) == Contract(105)


def test_each_seats_decision_times_are_its_own() -> None:
    """S03 (every decision's time put in seat 0's list): a seat's ``times`` are its own
    decisions, as many as it made, summing to its ``seconds``."""
    import dataclasses
    import math

    from arena.bench.strength import play_match
    from engine import load_ruleset

    rules = dataclasses.replace(load_ruleset("classic"), max_deals=1)
    r = play_match(rules, 3, ["random", "heuristic", "random"])
    assert [len(t) for t in r["times"]] == r["decisions"] and all(r["decisions"])
    assert all(
        math.isclose(sum(t), s, rel_tol=1e-9, abs_tol=1e-12)
        for t, s in zip(r["times"], r["seconds"], strict=True)
    )


def test_the_penalty_auction_variant_leaves_the_barrel_alone() -> None:
    """F01 (``_PenaltyAuction._changed`` without ``not self._on_barrel(view)``): 1001, seed
    1, seat 0's opening decision, where bid-confidence=0.99 passes the delegate's 40; the
    same view with seat 0 on the barrel (its ``barrel`` count set) is the barrel sitter's
    decision, which the variant leaves to the delegate's own barrel rule."""
    import dataclasses

    from arena.bench.forks import variant
    from bots.counting import CountingBot
    from bots.pimc import _Delegate
    from engine import Bid, Game, Pass, Phase, load_ruleset, observe

    game = Game.new(load_ruleset("1001"), 1, ["a", "b", "c"])
    bots = [CountingBot() for _ in range(3)]
    while True:
        seat = game.to_act
        assert seat is not None
        view = observe(game, seat)
        if view.phase is Phase.BIDDING and len(view.legal_actions) > 1:
            break
        game.apply(bots[seat].act(view), seat=seat)
    assert seat == 0 and view.bid is None and not view.barrel
    assert (_Delegate().act(view), variant("bid-confidence=0.99").act(view)) == (Bid(40), Pass())
    sitting = dataclasses.replace(view, barrel=(1, 0, 0))
    delegate = _Delegate().act(sitting)
    assert variant("bid-confidence=0.99").act(sitting) == delegate
