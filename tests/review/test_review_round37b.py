"""A second reader's review of round 37's late merges (``8a9190d..``): `arena serve`'s
closing of the tournaments an earlier serve left unfinished, the bots' concession weighed
against the defenders' takes, the look-alike host check, ``COLUMNS=0``, the SDK's capped
warnings and its storage's advice.

Defects found and fixed (each test's docstring says what happened before):

- a database named through a symbolic link (``--db link.sqlite``, the link to
  ``runs/arena.sqlite``) had its lock file beside the link, not beside the file: a run
  through the link and one through the file's own name each took "their" lock and both ran
  on one database (SQLite follows the link). The hard-link case was refused, this one not;
  since round 37 a second `arena serve` so started marked the running serve's tournament
  finished, or removed it while it had stored nothing (every later match of the running
  one then lost), and `arena web` through the link said no run held it;
- ``COLUMNS``/``LINES`` in digits that are no ASCII (a full-width ``０``, a superscript
  ``²``), which rich reads with ``str.isdigit`` as round 37's fix for 0 did not: width 0
  (nothing printed) or a ValueError traceback.

Checked and found fine (pinned where cheap): ``_close_dead_runs`` touches only tournaments
of kind ``serve`` (an `arena tournament` run's config has no top-level ``kind``), runs
with the lock held before this serve's own tournament exists, and deletes only one with
no match stored; two serves started at once on one --db: the second is refused at the
lock (and an id clash of one second needs the same 16 random bits); a copy of a database
served elsewhere only closes the copy's rows. Where locks are absent (an NFS mount with
``nolock``), nothing keeps two runs apart, this as every other write (SQLite's WAL needs
shared memory on one machine too). The lobby's ``interrupted`` counts a match cancelled
inside ``run_match`` only (one cancelled while its result is stored is counted played,
and stored: the save is shielded). The concession model (3 or 4 players alike: only the
two defenders score the takes, the halves or the throw-in bonus); a hopeless committed
hand under every concede/concede_pays option; never a concession where it is off.
``non_ascii_problem`` lets ``xn--`` names, unix socket paths in any script and ASCII
IPv6 zones through; ``_say_capped``; ``_translate``'s advice.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path

import click
import pytest

from arena.storage import Storage, StorageLockedError, lock_owner, lock_path
from arena.tournament.runner import DatabaseLock
from engine import PRESETS

# ------------------------------------------------------------------ the database's lock


def test_a_database_locked_through_its_name_is_locked_through_a_symlink_too(
    tmp_path: Path,
) -> None:
    """Defect: the lock file was made beside the name given, so a symbolic link to the
    database had a lock of its own: a second run through the link took it while the first
    ran (and `lock_owner` through the link said the second one held it). Now the lock is
    beside the file the link names, as SQLite's -wal is."""
    real = tmp_path / "runs" / "arena.sqlite"
    Storage(real).close()
    link = tmp_path / "link.sqlite"
    link.symlink_to(Path("runs") / "arena.sqlite")  # (relative, as `ln -s` makes one)
    assert lock_path(link) == lock_path(real).resolve()
    first = DatabaseLock(real)
    first.acquire("serve-first")
    try:
        assert lock_owner(link) == "serve-first"
        with pytest.raises(StorageLockedError, match="is running on"):
            DatabaseLock(link).acquire("serve-second")
    finally:
        first.release()
    # Released, the link's run takes it (and a run through the file's name is kept off).
    second = DatabaseLock(link)
    second.acquire("serve-second")
    try:
        with pytest.raises(StorageLockedError):
            DatabaseLock(real).acquire("serve-third")
    finally:
        second.release()
    assert not lock_path(real).exists()


def test_a_second_serve_through_a_symlink_leaves_the_running_serves_tournament(
    tmp_path: Path,
) -> None:
    """Defect: a second `arena serve --db` naming the database through a symbolic link
    got a lock of its own, and (round 37) took the running serve's tournament for one an
    earlier serve left unfinished: removed, as it had stored nothing yet, so every match
    the running serve stored after it was refused. Now the second serve is refused
    (--db: another run holds it) and the running one's tournament stays."""
    from arena.cli.serve import _Results

    real = tmp_path / "arena.sqlite"
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    bots = {"a": "t" * 20, "b": "u" * 20, "c": "v" * 20}
    running = _Results.open(real, PRESETS["classic"], bots, None)
    try:
        running.start("20261205-000000-aaaa")
        with pytest.raises(click.BadParameter, match="is running on"):
            _Results.open(link, PRESETS["classic"], bots, None)
        with Storage.open_readonly(real) as st:
            (info,) = st.tournaments()
            assert info.id == "serve-20261205-000000-aaaa"
            assert info.finished_at is None
    finally:
        running.close()


def test_a_dangling_or_looping_link_still_has_a_lock_path(tmp_path: Path) -> None:
    """Pinned (no defect): a link to no file yet has its lock beside its target (where
    SQLite creates the database), and a loop of links is not an error of the lock path
    (SQLite says what is wrong with it)."""
    target = tmp_path / "later" / "db.sqlite"
    dangling = tmp_path / "dangling.sqlite"
    dangling.symlink_to(target)
    assert lock_path(dangling) == target.with_name("db.sqlite.lock")
    loop_a, loop_b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    assert lock_path(loop_a).name.endswith(".sqlite.lock")
    plain = tmp_path / "plain.sqlite"
    assert lock_path(plain) == tmp_path / "plain.sqlite.lock"


# ------------------------------------------------------------------ the bots' concession


@pytest.mark.parametrize("name", ["heuristic", "counting", "pimc"])
@pytest.mark.parametrize(
    ("concede", "pays"),
    [("off", "half"), ("free", "half"), ("free", "none"), ("penalty", "half"),
     ("penalty", "none")],
)  # fmt: skip
def test_a_hopeless_committed_hand_under_every_concession_rule(
    name: str, concede: str, pays: str
) -> None:
    """Pinned (no defect): the first hand committed to 40 in 1001 on nines and jacks (a
    take of 0 double-dummy) concedes wherever conceding is legal, and where it is off
    names a legal contract (never a concession the engine would refuse)."""
    from engine import Concede, Contract, observe
    from tests.bots.test_blunders_round35 import _bot
    from tests.bots.test_judgement_round37 import _1001_COMMITTED, _at_contract, _pimc_own

    rules = dataclasses.replace(_1001_COMMITTED, concede=concede, concede_pays=pays)
    bot = _pimc_own() if name == "pimc" else _bot(name)
    g = _at_contract(rules, bot)
    view = observe(g, 0)
    act = bot.act(view)
    assert act in view.legal_actions
    if concede == "off":
        assert isinstance(act, Contract), act
    else:
        assert isinstance(act, Concede), act


def test_relative_score_of_play_against_a_concession() -> None:
    """Pinned (no defect): the model's limits. A sure make is the bid less what the
    defenders take of the rest; a sure failure of a hand taking nothing is −bid and 60 to
    each; a bid above 120 leaves the defenders nothing when made. A concession under
    penalty + half costs 1.5 bids, under free + none nothing. (The defenders' share ignores
    that the prediction counts the declarer's marriages: a hand with one is taken to leave
    them less than it does, so it concedes less, not more.)"""
    from bots.heuristic import conceded_relative, relative_score_of_play

    assert relative_score_of_play(1.0, 100, 500) == pytest.approx(100)
    assert 100 - 10 <= relative_score_of_play(1.0, 100, 60) < 100
    assert relative_score_of_play(0.0, 100, -500) == pytest.approx(-100 - 60)
    assert relative_score_of_play(1.0, 160, 400) == pytest.approx(160)
    # Playing on gets better with the chance and with the take predicted.
    values = [relative_score_of_play(p / 10, 100, 90) for p in range(11)]
    assert values == sorted(values)
    takes = [relative_score_of_play(0.5, 100, t) for t in range(40, 160, 10)]
    assert takes == sorted(takes)
    classic = PRESETS["classic"]
    ph = dataclasses.replace(classic, concede="penalty", concede_pays="half")
    assert conceded_relative(ph, 100) == -150
    assert conceded_relative(dataclasses.replace(classic, concede_pays="none"), 100) == 0


# ------------------------------------------------------------------ COLUMNS and LINES


@pytest.mark.parametrize("value", ["０", "²", "٠", "0", "00"])
def test_a_terminal_size_rich_would_misread_is_forgotten(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Defect: round 37 forgot ``COLUMNS``/``LINES`` of 0, in ASCII only, saying that rich
    ignores any other value that is no number. Rich takes whatever ``str.isdigit`` takes:
    a full-width ``０`` (or an Arabic-Indic ``٠``) was width 0 still, and the command printed
    nothing; a superscript ``²`` raised ValueError from rich (a traceback). Now they are
    forgotten as 0 is, and the console prints at its default width."""
    from rich.console import Console

    from arena.cli.options import _drop_zero_terminal_size

    monkeypatch.setenv("COLUMNS", value)
    monkeypatch.setenv("LINES", value)
    _drop_zero_terminal_size()
    assert "COLUMNS" not in os.environ and "LINES" not in os.environ
    console = Console(file=io.StringIO())
    console.print("hello")
    assert console.file.getvalue() == "hello\n"  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["100", " 0x", "-1", "abc"])
def test_a_terminal_size_rich_reads_or_ignores_is_kept(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Pinned (no defect): a width rich takes (a positive number) or ignores (no digits
    only) is left as it is."""
    from arena.cli.options import _drop_zero_terminal_size

    monkeypatch.setenv("COLUMNS", value)
    _drop_zero_terminal_size()
    assert os.environ["COLUMNS"] == value
