"""Round 48 review: tests that kill the mutants of round 47's changes the other tests let
live (the mutants and their fate are listed in the round's report). Each test names the
line it pins: the SDK's bound on waiting hook calls (the match's end is never dropped,
and the bound counts only the calls still waiting), a ruleset file without ``name``
refusing an unused option as one with it does, a reader's I/O error not said to be a
write's, ``--set`` given twice alike or of keys that only begin alike, and pimc's and
counting's margins under an arena's deadline."""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import arena.storage as storage_mod
from arena.cli import main as arena
from arena.storage import Storage, StorageError
from arena.v1 import arena_pb2 as pb
from bots import counting, pimc
from bots.counting import CountingBot
from bots.pimc import PimcBot
from engine import (
    Action,
    GameResult,
    HiddenGive,
    Phase,
    PlayerView,
    RulesetError,
    load_ruleset,
)
from sdk.bot import Deadline
from sdk.sampling import Sampler
from tests.bots.test_pimc_clock_round47 import _Counted, _FakeClock, _first_lead, _five_cards, _view
from tests.cli.test_bad_input import BOTS, _invoke, _toml
from tests.sdk.test_hostile_arena import (
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    ended,
    play,
    request,
    started,
)

# ------------------------------------------------------- sdk: hook calls waiting for the bot


def test_the_bound_on_waiting_hooks_counts_only_those_waiting_and_spares_the_end() -> None:
    """``_HOOKS_WAITING_MOST`` (1,024 hook calls of a match waiting for the bot): a call
    leaves the count as it begins, so once a flood has been handled the next event's hook
    is called again (mutant: the count never going down dropped every later hook of the
    match); and ``on_match_end`` is scheduled even with the queue full, the match's end
    arriving in the same batch as a flood (mutant: dropped with the rest, the bot never
    told its match ended)."""
    g = _game()
    calls = [0]
    ends: list[GameResult] = []

    class Counting(FirstLegal):
        def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
            calls[0] += 1

        def on_match_end(self, view: PlayerView, result: GameResult) -> None:
            ends.append(result)

    def flood(first: pb.ServerMessage, seq: int, n: int) -> pb.ServerMessage:
        out = pb.ServerMessage()
        action = first.decision_request.view.legal_actions[0]
        for i in range(seq, seq + n):
            out.events.add(match_id="m1", seq=i, action=pb.SeatAction(seat=1, action=action))
        return out

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        first = request("m1", g, "0")
        yield first
        await s.decision()
        yield flood(first, 1, 2000)  # 1,024 called, the rest dropped
        yield request("m1", g, "1")
        await s.decision()  # (after the flood's hooks, in the match's order)
        yield flood(first, 2001, 1)  # called: none waits now
        yield request("m1", g, "2")
        await s.decision()
        batch = pb.ServerMessage()
        batch.batch.messages.extend([flood(first, 2002, 2000), ended("m1")])
        yield batch

    play(Counting, script)
    assert calls[0] == 1024 + 1 + 1024
    assert len(ends) == 1 and ends[0].scores == (1000, 0, 0)


# ------------------------------------------------------- a ruleset file without a name


def test_a_ruleset_file_without_a_name_refuses_an_unused_option_too(tmp_path: Path) -> None:
    """``load_ruleset`` reads a file without ``name`` by another call (the name taken from
    the file's): it refuses ``barrel_mode`` on preset 1001 (no barrel) as a named file does
    (mutant: that call without ``unused=False`` played the club's house rule not in force,
    the file described as setting it)."""
    path = tmp_path / "club.toml"
    path.write_text('preset = "1001"\nbarrel_mode = "one"\n', encoding="utf-8")
    with pytest.raises(RulesetError) as e:
        load_ruleset(path)
    assert e.value.key == "barrel_mode" and "has no effect" in str(e.value)
    path.write_text('preset = "1001"\nbarrel = true\nbarrel_mode = "one"\n', encoding="utf-8")
    rs = load_ruleset(path)
    assert (rs.name, rs.barrel, rs.barrel_mode) == ("club", True, "one")


# ------------------------------------------------------- storage: a reader's I/O error


def _io_error() -> sqlite3.OperationalError:
    e = sqlite3.OperationalError("disk I/O error")
    e.sqlite_errorcode = 10  # SQLITE_IOERR
    return e


def test_a_readers_io_error_is_not_said_to_be_a_refused_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_translate(..., writing=...)``: a disk I/O error met by a writer whose file can no
    longer be written says so ("make it writable and ..."); met by a reader
    (``Storage.open_readonly``: leaderboard, replay, web) it is no refused write, and is
    not said to be one (mutants: ``refused`` without ``writing``, and the reader's
    ``_writing = False`` dropped). The file is taken for unwritable (the tests run as
    root, whom no mode stops)."""
    db = tmp_path / "t.sqlite"
    Storage(db).close()
    monkeypatch.setattr(storage_mod, "_unwritable", lambda path: path)
    writer = Storage(db)
    try:
        with pytest.raises(StorageError) as e, writer._guard("storing a match"):
            raise _io_error()
        assert str(e.value).startswith(f"{db} can no longer be written (storing a match)")
    finally:
        writer.close()
    reader = Storage.open_readonly(db)
    try:
        with pytest.raises(StorageError) as e, reader._guard("reading the standings"):
            raise _io_error()
        assert "written" not in str(e.value)
        assert str(e.value) == f"{db}: database error while reading the standings: disk I/O error"
    finally:
        reader.close()


# ------------------------------------------------------- tournament --set given twice


@pytest.mark.parametrize(
    ("sets", "then"),
    [
        (["max_deals=2", "max_deals=2"], "ruleset: unknown"),  # the same --set twice
        (["seed=1", "seed_x=2"], "seed_x"),  # keys that only begin alike
    ],
    ids=["same-twice", "prefix-not-a-table"],
)
def test_sets_that_do_not_set_one_key_twice_are_not_refused_as_such(
    tmp_path: Path, sets: list[str], then: str
) -> None:
    """The check of two ``--set`` of one key (round 47) refuses a key and a key inside it,
    not: the same ``--set`` given twice (it sets one value; mutant: ``was != item``
    dropped), nor keys of which one only begins with the other (``seed`` and ``seed_x``;
    mutant: compared without the dot). Each goes on to the config's check, stopped here by
    a ruleset no preset names."""
    cfg = _toml(tmp_path, f'name = "s"\ndb = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path}/o"\n'
                          f"{BOTS}")  # fmt: skip
    args = ["tournament", "--config", str(cfg), "--no-progress"]
    for s in [*sets, "ruleset=no-such-preset"]:
        args += ["--set", s]
    r = _invoke(arena, args)
    text = " ".join(r.output.split())
    assert r.exit_code != 0 and "both set it" not in text, text
    if then != "ruleset: unknown":
        assert then in text, text
    else:
        assert "no-such-preset" in text, text
    assert not (tmp_path / "t.sqlite").exists()


# ------------------------------------------------------- pimc and counting under a deadline


def test_a_spent_limit_builds_no_sampler_either(monkeypatch: pytest.MonkeyPatch) -> None:
    """``if delegated or budget.over``: a spent limit is answered by counting at once, no
    sampler built (mutant: only delegated phases went to counting; the play's own search
    built its sampler of deals past the limit, then fell back)."""
    made = [0]

    class CountedSampler(Sampler):
        def __init__(self, *args: Any, **kw: Any) -> None:
            made[0] += 1
            super().__init__(*args, **kw)

    view = _view("classic", 3, _first_lead)
    monkeypatch.setattr(pimc, "Sampler", CountedSampler)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    bot = PimcBot(seed=1)
    bot.deadline = Deadline(limit_s=0.1, bank_s=10.0, received=clock.now - 0.1)
    assert bot.act(view) in view.legal_actions
    assert made[0] == 0
    assert bot.stats.fallbacks == 1


def test_a_delegated_decision_is_no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fallbacks += not delegated``: an auction decision (delegated to counting by
    default) with time left is no fallback (mutant: every counting decision counted one,
    and ``arena-bot``'s summary said pimc fell back on every bid)."""
    view = _view("classic", 3, lambda v: v.phase is Phase.BIDDING)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    bot = PimcBot(seed=1)
    bot.deadline = Deadline(limit_s=1.0, bank_s=10.0, received=clock.now)
    assert bot.act(view) in view.legal_actions
    assert bot.stats.fallbacks == 0


def test_counting_keeps_its_margin_share_of_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """counting's backstop ends ``margin_s + margin_share * limit`` before its limit (0.1 s
    of 1 s): with 70 ms left it does not search (mutant: the share dropped, 20 ms kept back,
    a search begun with 50 ms to go); with 150 ms left it does."""
    view = _view("classic", 3, _five_cards)
    monkeypatch.setattr(counting, "Solver", _Counted)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    assert CountingBot.margin_s + CountingBot.margin_share * 1.0 == pytest.approx(0.1)
    for left, searched in ((0.07, False), (0.15, True)):
        bot = CountingBot()
        bot.deadline = Deadline(limit_s=1.0, bank_s=1.0, received=clock.now - (1.0 - left))
        _Counted.made = 0
        assert bot.act(view) in view.legal_actions
        assert (_Counted.made > 0) is searched, left


# ------------------------------------------------------- the lock file at a disk quota


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT], ids=["ENOSPC", "EDQUOT"])
def test_a_quota_reached_writing_the_lock_file_is_said_as_a_full_disk(
    tmp_path: Path, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``DatabaseLock.name``: a user's disk quota reached (EDQUOT, as on a shared machine's
    home) is said as the full disk it is to that user, "free some space and run again"
    (mutant: ENOSPC alone, the quota said as "Disk quota exceeded ... check it, or use
    another --db"); the lock is released either way, its file removed."""
    from arena.storage import StorageFullError
    from arena.tournament import runner

    def refused(fd: int, data: bytes) -> int:
        raise OSError(code, os.strerror(code))

    db = tmp_path / "t.sqlite"
    lock = runner.DatabaseLock(db)
    # (os.write is the process's: refused only while the lock is taken)
    with monkeypatch.context() as m, pytest.raises(StorageFullError) as info:
        m.setattr(runner.os, "write", refused)
        lock.acquire("t")
    assert str(info.value).startswith(f"{db}.lock: the disk is full while writing the lock file")
    assert not Path(f"{db}.lock").exists()
    lock.acquire("t")  # (released: taken again at once)
    lock.release()
