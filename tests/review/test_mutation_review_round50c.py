"""Round 50c review: tests that kill the hand mutants of round 50's journey changes (the
LAN address of a server on every address, `arena replay --check` of several records,
`--list --export DIR`, the worst deal of `--list --bot`, the exported-record hint, a
command bot not in PATH) that the journey tests let live, and the defects the review
found: `--check` of one file named twice counted it once; a bot program found in PATH
whose #! interpreter is missing was said to be in no directory of PATH; the worst deal of
a game of four could be one the bot dealt and sat out; `--export` wrote a stored match id
holding a "/" outside DIR (and one holding a NUL raised a traceback). The mutants and their
fate are listed in the round's report; each test names what it pins."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from arena.addresses import lan_address
from arena.cli import main as arena
from arena.storage import Storage
from arena.tournament import runner
from arena.tournament.schedule import SCHEDULE_VERSION
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db


def _arena(*args: str) -> tuple[int, str, str]:
    got = CliRunner().invoke(arena, list(args))
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout, got.stderr


# --- lan_address ---------------------------------------------------------------------


class _FakeSocket:
    """A socket whose "connect" gives ``address`` as its own (or raises ``error``)."""

    made: ClassVar[list[tuple[int, int]]] = []

    def __init__(self, family: int, kind: int, address: str, error: OSError | None) -> None:
        self.made.append((family, kind))
        self.address, self.error = address, error

    def __enter__(self) -> _FakeSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def connect(self, where: tuple[str, int]) -> None:
        if self.error is not None:
            raise self.error

    def getsockname(self) -> tuple[str, int]:
        return (self.address, 40000)


@pytest.mark.parametrize(
    ("address", "error", "expected"),
    [
        ("10.1.2.3", None, "10.1.2.3"),
        ("127.0.1.1", None, None),  # (a hosts file's name of this machine: no LAN address)
        ("0.0.0.0", None, None),
        ("10.1.2.3", OSError(101, "Network is unreachable"), None),  # (offline)
    ],
)
def test_the_lan_address_is_the_default_routes_and_none_offline_or_loopback(
    monkeypatch: pytest.MonkeyPatch, address: str, error: OSError | None, expected: str | None
) -> None:
    _FakeSocket.made = []
    monkeypatch.setattr(
        socket, "socket", lambda family, kind: _FakeSocket(family, kind, address, error)
    )
    assert lan_address() == expected
    # (UDP: a "connect" sends nothing and cannot wait on a network that does not answer)
    assert _FakeSocket.made == [(socket.AF_INET, socket.SOCK_DGRAM)]


# --- arena replay --check of several ---------------------------------------------------


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """In the current folder: good.json (checks), refused.json (a card the rules refuse:
    exit 1), shape.json (no record: exit 2); gone.json is not there (exit 2)."""
    monkeypatch.chdir(tmp_path)
    record = demo_record(3, DEMO_BOTS, max_deals=2)
    Path("good.json").write_text(json.dumps(record), encoding="utf-8")
    bad: dict[str, Any] = json.loads(json.dumps(record))
    bad["result"]["scores"] = [s + 5 for s in bad["result"]["scores"]]
    Path("refused.json").write_text(json.dumps(bad), encoding="utf-8")
    Path("shape.json").write_text("{}", encoding="utf-8")
    code, _, err = _arena("replay", "--check", "refused.json")
    assert code == 1, err  # (what the fixture promises)
    return {"good": "good.json", "refused": "refused.json", "shape": "shape.json",
            "gone": "gone.json"}  # fmt: skip


def test_check_of_several_exits_with_the_worst_code_and_counts_each(
    records: dict[str, str],
) -> None:
    code, out, _ = _arena("replay", "--check", records["good"], records["refused"])
    assert code == 1
    assert out.rstrip().splitlines()[-1] == "checked 2 records: 1 OK, 1 not: refused.json (exit 1)"
    code, out, _ = _arena("replay", "--check", records["refused"], records["gone"],
                          records["good"])  # fmt: skip
    assert code == 2  # (the worst: 2 over 1, whatever their order)
    assert out.rstrip().splitlines()[-1] == (
        "checked 3 records: 1 OK, 2 not: refused.json (exit 1), gone.json (exit 2)"
    )
    code, out, _ = _arena("replay", "--check", records["good"], records["good"])
    assert code == 0 and out.rstrip().splitlines()[-1] == "checked 2 records: 2 OK"


def test_check_of_one_file_named_twice_counts_it_twice(records: dict[str, str]) -> None:
    """(A defect: the failures were kept by name, so `--check bad.json bad.json` said
    "checked 2 records: 1 OK, 1 not", one OK that was not.)"""
    code, out, _ = _arena("replay", "--check", records["refused"], records["refused"],
                          records["shape"])  # fmt: skip
    assert code == 2
    assert out.rstrip().splitlines()[-1] == (
        "checked 3 records: 0 OK, 3 not: refused.json (exit 1), refused.json (exit 1), "
        "shape.json (exit 2)"
    )


# --- arena replay --list --export --------------------------------------------------------


def _duplicate_cup(db: Path) -> None:
    """An unfinished tournament of duplicate deals: set 0 played out (2 of 2), set 1 half
    (1 of 2); bot ann is in every match."""
    config = {"name": "cup", "ruleset": "classic", "deals": "duplicate",
              "schedule": SCHEDULE_VERSION, "matches_per_table": 2}  # fmt: skip
    with Storage(db) as st:
        st.ensure_tournament("cup-1", name="cup", fingerprint="cup-1", config=config,
                             total_matches=4, bots=[(b, "demo") for b in DEMO_BOTS])  # fmt: skip
        for i, set_no in enumerate((0, 0, 1)):
            st.save_match("cup-1", match_id=f"cup-1-m0000{i}", index=i, table=0,
                          set_no=set_no, seed=7 + set_no, seats=DEMO_BOTS,
                          record=demo_record(7 + set_no, DEMO_BOTS, max_deals=1),
                          started_at=1.7e9 + i, finished_at=1.7e9 + i + 1)  # fmt: skip


def test_export_leaves_out_only_the_sets_still_to_be_played(tmp_path: Path) -> None:
    db, out_dir = tmp_path / "cup.sqlite", tmp_path / "exp"
    _duplicate_cup(db)
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(out_dir))
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["cup-1-m00000.json", "cup-1-m00001.json"]
    assert "wrote 2 record(s)" in err and "; 1 match(es) left out" in " ".join(err.split())


def test_export_with_a_bot_writes_only_its_matches_and_counts_none_left_out(
    tmp_path: Path,
) -> None:
    db, out_dir = tmp_path / "club.sqlite", tmp_path / "exp"
    a, b, c = DEMO_BOTS
    with Storage(db) as st:
        st.ensure_tournament(
            "t",
            name="t",
            fingerprint="t",
            config={"deals": "independent"},
            total_matches=3,
            bots=[(x, "demo") for x in (a, b, c, "zed")],
        )
        for i, seats in enumerate([(a, b, c), (a, b, "zed"), ("zed", b, c)]):
            st.save_match("t", match_id=f"t-m{i}", index=i, table=i, set_no=i, seed=i,
                          seats=seats, record=demo_record(i, seats, max_deals=1),
                          started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
    theirs = ["t-m1", "t-m2"]
    code, _, err = _arena("replay", "--list", "--db", str(db), "--bot", "zed",
                          "--export", str(out_dir))  # fmt: skip
    assert code == 0, err
    assert sorted(p.stem for p in out_dir.iterdir()) == theirs
    assert f"wrote {len(theirs)} record(s)" in err and "left out" not in err


def test_a_write_cut_short_keeps_the_record_already_there_and_no_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, out_dir = tmp_path / "club.sqlite", tmp_path / "exp"
    ids = make_demo_db(db, matches=1, max_deals=1)
    out_dir.mkdir()
    (out_dir / f"{ids[0]}.json").write_text("the copy already there", encoding="utf-8")
    real = Path.write_text

    def half_then_full(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        real(self, data[:10], *args, **kwargs)  # (a disk full after the first bytes)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(out_dir))
    monkeypatch.undo()
    assert code == 1 and "cannot write there: No space left on device" in err
    assert [p.name for p in out_dir.iterdir()] == [f"{ids[0]}.json"]  # (no .part left)
    assert (out_dir / f"{ids[0]}.json").read_text(encoding="utf-8") == "the copy already there"


def test_a_match_gone_or_damaged_meanwhile_is_an_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=1)

    def gone(self: Storage, match_id: str) -> dict[str, Any]:
        raise KeyError(match_id)

    monkeypatch.setattr(Storage, "load_record", gone)
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(tmp_path / "x"))
    # (1 since round 54: what was named cannot be read, as `arena leaderboard` says it)
    assert code == 1 and "error: --export: " in err


def test_export_and_bot_beside_a_record_say_what_each_does() -> None:
    code, _, err = _arena("replay", "a.json", "--export", "x")
    assert code == 2 and "--export goes with --list (it writes the records of the matches " \
        "listed)" in " ".join(err.split())  # fmt: skip
    code, _, err = _arena("replay", "a.json", "--bot", "x")
    assert code == 2 and "--bot goes with --list (it chooses the matches listed)" in " ".join(
        err.split()
    )
    code, _, err = _arena("replay", "--list", "--tournament", "")
    assert code == 2 and "Invalid value for --tournament: empty: name one" in err


# --- the worst deal of --list --bot ------------------------------------------------------


def _set_deltas(db: Path, table: dict[tuple[str, int], int], bot: str) -> None:
    """Every deal scores 10 for everyone, but ``bot``'s deltas in ``table``."""
    with sqlite3.connect(db) as conn:
        seats = dict(conn.execute("SELECT match_id, seat FROM match_players WHERE bot = ?",
                                  (bot,)).fetchall())  # fmt: skip
        for match_id, number, deltas in conn.execute(
            "SELECT match_id, number, deltas_json FROM deals"
        ).fetchall():
            new = [10] * len(json.loads(deltas))
            if match_id in seats:
                new[seats[match_id]] = table.get((match_id, number), 10)
            conn.execute("UPDATE deals SET deltas_json = ? WHERE match_id = ? AND number = ?",
                         (json.dumps(new), match_id, number))  # fmt: skip


def _worst_line(db: Path, bot: str) -> str:
    code, _, err = _arena("replay", "--list", "--db", str(db), "--bot", bot)
    assert code == 0, err
    return err.rstrip().splitlines()[-1]


def test_the_worst_deal_of_ties_is_the_first_in_schedule_order(tmp_path: Path) -> None:
    db = tmp_path / "club.sqlite"
    bot = DEMO_BOTS[2]  # (seated at 2, 1 and 0 in turn)
    # the matches stored out of their schedule order, as concurrent tables finish them
    with Storage(db) as st:
        st.ensure_tournament("t", name="t", fingerprint="t", config={"deals": "independent"},
                             total_matches=2, bots=[(b, "demo") for b in DEMO_BOTS])  # fmt: skip
        for i in (1, 0):
            seats = tuple(DEMO_BOTS[(i + j) % 3] for j in range(3))
            st.save_match("t", match_id=f"t-m{i}", index=i, table=i, set_no=i, seed=i,
                          seats=seats, record=demo_record(i, seats, max_deals=3),
                          started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
    _set_deltas(db, {("t-m1", 0): -60, ("t-m0", 2): -60, ("t-m0", 1): -60}, bot)
    assert _worst_line(db, bot) == f"worst deal of {bot}: t-m0, deal 2 (-60): arena replay t-m0"
    # a positive worst is said with its sign; another tournament's worse deal is not its
    make_demo_db(db, matches=1, max_deals=2, tournament_id="other")
    _set_deltas(db, {("t-m1", 1): 5, ("other-m0000", 0): -200}, bot)
    assert "other-m0000, deal 1 (-200)" in _worst_line(db, bot)  # (the latest, by default)
    code, _, err = _arena("replay", "--list", "--db", str(db), "--bot", bot, "--tournament", "t")
    assert code == 0 and err.rstrip().splitlines()[-1] == (
        f"worst deal of {bot}: t-m1, deal 2 (+5): arena replay t-m1"
    )


# --- the exported-record hint ------------------------------------------------------------


def test_the_hint_prefers_the_folder_here_and_counts_several(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exported").mkdir()
    (tmp_path / "exported" / "cup-m00003.json").write_text("{}", encoding="utf-8")
    (tmp_path / "cup-m00003.json").write_text("{}", encoding="utf-8")
    code, _, err = _arena("replay", "m00003")
    assert code == 2
    said = " ".join(err.split())
    assert "its record is the file cup-m00003.json: arena replay cup-m00003.json" in said
    (tmp_path / "old-m00003.json").write_text("{}", encoding="utf-8")
    code, _, err = _arena("replay", "m00003")
    said = " ".join(err.split())
    assert code == 2 and "; 2 record files of ids ending in m00003 (cup-m00003.json, ...): " \
        "name one, arena replay FILE" in said  # fmt: skip


# --- a command bot not in PATH -------------------------------------------------------------


def test_a_bare_name_not_in_path_is_said_so_and_the_arenas_copy_only_if_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin").mkdir()
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    missing = FileNotFoundError(2, "No such file or directory")
    (tmp_path / "bin" / "mybot").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "bin" / "mybot").chmod(0o644)  # (there, but no program to run)
    said = runner._launch_error("mybot", missing, None)
    assert said == "No such file or directory: not found in any directory of PATH"
    (tmp_path / "bin" / "mybot").chmod(0o755)
    said = runner._launch_error("mybot", missing, None)
    assert f"(this arena's Python has it in {tmp_path / 'bin'}, which PATH lacks: " in said
    # a bare name refused for another reason is not "not found"
    said = runner._launch_error("mybot", PermissionError(13, "Permission denied"), None)
    assert "PATH" not in said


def test_a_program_found_in_path_whose_interpreter_is_missing_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(A defect: a script in PATH whose #! interpreter is gone, such as the arena-bot of a
    virtual environment moved elsewhere, fails with "No such file or directory" too, and
    was said to be in no directory of PATH, though `which` names it.)"""
    (tmp_path / "bin").mkdir()
    bot = tmp_path / "bin" / "mybot"
    bot.write_text("#!/nowhere/venv/bin/python\n", encoding="utf-8")
    bot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    said = runner._launch_error("mybot", FileNotFoundError(2, "No such file or directory"), None)
    assert said == "its interpreter (the #! line: /nowhere/venv/bin/python) was not found"


def test_the_worst_deal_of_four_is_not_one_it_sat_out_as_dealer(tmp_path: Path) -> None:
    """(A defect: in a game of four the dealer sits out and scores the talon; a bot that
    scored more in every deal it played was sent to replay one it dealt, where it made no
    decision.)"""
    db = tmp_path / "four.sqlite"
    seats = ("ann", "bob", "cid", "dan")
    with Storage(db) as st:
        st.ensure_tournament("f", name="f", fingerprint="f",
                             config={"deals": "independent", "ruleset": "1001-4p"},
                             total_matches=1, bots=[(b, "demo") for b in seats])  # fmt: skip
        st.save_match("f", match_id="f-m0", index=0, table=0, set_no=0, seed=5, seats=seats,
                      record=demo_record(5, seats, preset="1001-4p", max_deals=4),
                      started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT number, dealer FROM deals WHERE match_id = 'f-m0'").fetchall()
        for number, dealer in rows:  # ann: 2 as the dealer, 30 + the deal's number playing
            deltas = [10, 10, 10, 10]
            deltas[0] = 2 if dealer == 0 else 30 + number
            conn.execute("UPDATE deals SET deltas_json = ? WHERE match_id = 'f-m0' AND "
                         "number = ?", (json.dumps(deltas), number))  # fmt: skip
    assert any(dealer == 0 for _, dealer in rows) and len(rows) == 4
    first_played = min(n for n, dealer in rows if dealer != 0)
    assert _worst_line(db, "ann") == (
        f"worst deal of ann: f-m0, deal {first_played + 1} (+{30 + first_played}): "
        "arena replay f-m0"
    )


def test_the_worst_deal_of_three_may_be_one_it_dealt(tmp_path: Path) -> None:
    """Of three, the dealer plays: the deal it dealt is one of its own."""
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=3)
    bot = DEMO_BOTS[1]
    with sqlite3.connect(db) as conn:
        (match_id, seat), *_ = conn.execute(
            "SELECT match_id, seat FROM match_players WHERE bot = ?", (bot,)
        ).fetchall()
        dealt = [
            n
            for (n,) in conn.execute(
                "SELECT number FROM deals WHERE match_id = ? AND dealer = ?", (match_id, seat)
            )
        ]
    assert dealt  # (in three deals each seat deals once)
    _set_deltas(db, {(match_id, dealt[0]): -40}, bot)
    assert f"{match_id}, deal {dealt[0] + 1} (-40)" in _worst_line(db, bot)


@pytest.mark.parametrize(("stored", "shown"), [("../../x", "'../../x'"), ("x\0y", "'x\\x00y'")])
def test_export_refuses_a_stored_match_id_that_is_no_file_name(
    tmp_path: Path, stored: str, shown: str
) -> None:
    """(A defect: a database changed outside the arena, a match id `../../x`, wrote
    `DIR/../../x.json`, outside DIR; one holding a NUL ended in a traceback.)"""
    db = tmp_path / "club.sqlite"
    ids = make_demo_db(db, matches=2, max_deals=1)
    with sqlite3.connect(db) as conn:
        for table, key in (
            ("matches", "id"),
            ("deals", "match_id"),
            ("match_players", "match_id"),
            ("incidents", "match_id"),
        ):
            conn.execute(f"UPDATE {table} SET {key} = ? WHERE {key} = ?", (stored, ids[1]))
    out_dir = tmp_path / "a" / "b" / "exp"
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(out_dir))
    assert code == 2
    assert f"error: --export: match {shown} of " in err and "nothing written" in err
    assert not (tmp_path / "a" / "x.json").exists() and not out_dir.exists()


def test_a_tournament_on_every_address_with_no_lan_address_names_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline (no default route) the waiting line says "this machine's address, port N"
    and names no address (it said "(None:N ...)" had the check gone)."""
    import logging

    from arena.tournament import RunOptions, TournamentError, load_config, run

    monkeypatch.setattr(runner, "lan_address", lambda: None)
    path = tmp_path / "wild.toml"
    path.write_text(
        f'name = "wild"\nhost = "0.0.0.0"\nbot_wait_s = 0.2\ndb = "{tmp_path / "w.sqlite"}"\n'
        f'out = "{tmp_path / "o"}"\n[bots]\nfar = {{ remote = true, token = '
        '"0123456789abcdef" }\na = "random"\nb = "random"\n',
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING), pytest.raises(TournamentError, match="never connected"):
        run(load_config(path), RunOptions(progress=False))
    waiting = next(r.getMessage() for r in caplog.records if "remote bots" in r.getMessage())
    assert "this machine's address, port " in waiting and "None" not in waiting, waiting
    assert "default route" not in waiting


def test_web_and_serve_on_every_ipv6_address_say_what_to_hand_out(tmp_path: Path) -> None:
    """`--host ::` listens on every address too (IPv4 as well, on a dual-stack system): the
    note of what to hand out follows as for 0.0.0.0."""
    import signal
    import subprocess

    from tests.support.spawn import readline_within

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    tokens = tmp_path / "bots.toml"
    tokens.write_text(
        '[bots]\nann = "tok-ann-123456"\nbob = "tok-bob-123456"\ncid = "tok-cid-123456"\n',
        encoding="utf-8",
    )
    tokens.chmod(0o600)
    commands = {
        "web": ["web", "--db", str(db), "--host", "::", "--port", "0"],
        "serve": ["serve", "--tokens", str(tokens), "--host", "::", "--port", "0",
                  "--record-dir", str(tmp_path / "records")],
    }  # fmt: skip
    children = {
        name: subprocess.Popen(
            [sys.executable, "-m", "arena.cli", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=tmp_path,
        )
        for name, argv in commands.items()
    }
    try:
        got = {}
        for name, child in children.items():
            lines = [readline_within(child.stdout, 60) if child.stdout else None
                     for _ in range(2 if name == "web" else 3)]  # fmt: skip
            got[name] = lines
        assert "at http://[::]:" in (got["web"][0] or ""), got
        assert (got["web"][1] or "").startswith("every address of this machine: "), got
        assert (got["serve"][2] or "").startswith("bots on other machines connect to "), got
    finally:
        for child in children.values():
            child.send_signal(signal.SIGTERM)
        for child in children.values():
            child.wait(60)
            if child.stdout:
                child.stdout.close()


def test_the_program_is_looked_for_in_the_path_the_bot_was_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot's `env` may set its own PATH: the program is looked for there, as the kernel
    looked for it, not in the arena's."""
    (tmp_path / "own").mkdir()
    bot = tmp_path / "own" / "mybot"
    bot.write_text("#!/nowhere/python\n", encoding="utf-8")
    bot.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # (no copy beside it)
    missing = FileNotFoundError(2, "No such file or directory")
    said = runner._launch_error("mybot", missing, None, str(tmp_path / "own"))
    assert said == "its interpreter (the #! line: /nowhere/python) was not found"
    said = runner._launch_error("mybot", missing, None, str(tmp_path))
    assert said == "No such file or directory: not found in any directory of PATH"
