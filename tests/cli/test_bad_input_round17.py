"""Bad input, round 17: what a generator of bad configs, records and databases found that
the earlier rounds (tests/test_bad_input*.py) did not try. Each test names the defect it was
written for; in-process through click's CliRunner, no server and no bot process."""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from arena.storage import Storage, StorageError
from arena.tournament import load_config
from engine import Game, ReplayError, Ruleset, replay
from engine.record import forfeit_result
from sdk.cli import main as arena_bot
from tests.arena.test_storage import _record as _stored_record
from tests.arena.test_storage import _save, _setup
from tests.cli.test_bad_input import _fails

#: A name longer than any file system takes (255 bytes a name on Linux): Python 3.11's
#: ``Path.exists`` and ``is_file`` raise ``OSError`` for it rather than answer.
LONG = "a" * 300
BOTS = 'bots = ["random", "heuristic", "counting"]\n'


def _config(tmp: Path, body: str) -> Path:
    p = tmp / "t.toml"
    p.write_text(f'name = "r17"\ndb = "{tmp / "t.sqlite"}"\nout = "{tmp / "out"}"\n{body}')
    return p


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (f'ruleset = "{LONG}"\n{BOTS}', "ruleset"),
        (f'ruleset = "{LONG}.toml"\n{BOTS}', "ruleset"),
        (f'bots = ["random", "heuristic", "{LONG}.py:Mine"]\n', "bots[2]"),
        (f'{BOTS}[tls]\ncert = "{LONG}.pem"\nkey = "k.pem"\n', "tls.cert"),
    ],
)
def test_a_path_too_long_for_the_file_system_is_a_config_error_naming_the_key(
    tmp_path: Path, body: str, key: str
) -> None:
    """Defect: a ruleset, bot file or certificate named in a config by a name too long for
    the file system ended in ``Error: /abs/path/aaaa…: File name too long``, exit 1: not the
    config's file, nor its key, and not the exit code of a bad config (2). Python 3.11's
    ``Path.exists`` raises for such a name where the config asked whether the file exists."""
    config = _config(tmp_path, body)
    text = _fails(
        CliRunner().invoke(arena, ["tournament", "--config", str(config), "--no-progress"]),
        2,
        f"t.toml: {key}:",
        "File name too long",
    )
    assert not (tmp_path / "t.sqlite").exists(), text  # refused before anything started


def test_a_command_word_too_long_for_a_file_name_is_no_config_error(tmp_path: Path) -> None:
    """Defect: a command bot's words are looked up as files (their contents make the bot's
    code, part of the tournament id); one longer than a file name may be (a long argument,
    a JSON option) made the whole config fail with ``Error: …: File name too long``, exit 1.
    It is an argument, not a file: the config loads."""
    config = _config(
        tmp_path,
        '[bots]\nrandom = "random"\nheuristic = "heuristic"\n'
        f"mine = {{ command = \"{{python}} -m sdk.cli run random --name '{LONG}'\" }}\n",
    )
    cfg = load_config(config)
    assert cfg.bot_names == ("random", "heuristic", "mine")


def _forfeited_record() -> dict[str, Any]:
    """A finished match as the referee records it when seat 1 forfeited: ``rules_result``
    keeps the rules' result, ``result`` places the forfeiter last."""
    g = Game.new(Ruleset.from_dict({"preset": "classic", "max_deals": 2}), 7, ["ann", "bob", "cid"])
    while not g.is_over:
        g.apply(g.legal_actions()[-1])
    rec = g.record()
    rec["forfeits"] = [1]
    rec["rules_result"] = dict(rec["result"])
    rec["result"] = forfeit_result(rec["result"], [1], 1000)
    return rec


def test_a_record_whose_forfeits_lost_their_rules_result_is_refused(tmp_path: Path) -> None:
    """Defect: deleting ``rules_result`` from the record of a match a seat forfeited, and
    putting the rules' result back as ``result``, un-forfeited the seat (first place, as the
    leaderboard reads it) and ``arena replay --check`` said OK: the referee always keeps
    ``rules_result`` when a seat forfeited a finished match, so its absence is an edit."""
    genuine = _forfeited_record()
    path = tmp_path / "m.json"
    path.write_text(json.dumps(genuine))
    assert CliRunner().invoke(arena, ["replay", "--check", str(path)]).exit_code == 0
    edited = copy.deepcopy(genuine)
    edited["result"] = edited.pop("rules_result")
    path.write_text(json.dumps(edited))
    _fails(CliRunner().invoke(arena, ["replay", "--check", str(path)]), 1,
           "rules_result: missing", "forfeits [1]")  # fmt: skip
    with pytest.raises(ReplayError, match="rules_result: missing"):
        replay(edited)


def test_check_does_not_say_a_result_places_forfeiters_last_when_it_does_not(
    tmp_path: Path,
) -> None:
    """Defect: a record whose ``result`` is its ``rules_result`` (accepted: the forfeit is
    then not applied) made ``arena replay --check`` print "forfeited: bob (the record's
    result, checked too, places them last)", which that result does not."""
    rec = _forfeited_record()
    rec["result"] = dict(rec["rules_result"])
    path = tmp_path / "m.json"
    path.write_text(json.dumps(rec))
    text = _fails(CliRunner().invoke(arena, ["replay", "--check", str(path)]), 0, "forfeited: bob")
    assert "places them last" not in text


@pytest.fixture(scope="module")
def _stored_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one tournament of two matches (the storage's own test helpers)."""
    db = tmp_path_factory.mktemp("db") / "t.sqlite"
    with _setup(db) as st:
        for index, seed in ((0, 1), (1, 2)):
            _save(st, index, _stored_record(seed=seed))
    return db


@pytest.mark.parametrize(
    ("update", "words"),
    [
        ('UPDATE matches SET seats_json = \'["a", "b", NaN]\' WHERE idx = 1', "seats of match"),
        ("UPDATE matches SET seats_json = '[0, [], \"c\"]' WHERE idx = 1", "seats of match"),
        ("UPDATE match_players SET place = 'x' WHERE seat = 1", "player place of match"),
        ("UPDATE match_players SET score = X'00ff' WHERE seat = 0", "player score of match"),
        (
            "UPDATE match_players SET match_id = 'gone' WHERE seat = 2 AND match_id = 't1-m00001'",
            "players of match",
        ),
        ("UPDATE matches SET id = 7 WHERE idx = 0", "players of match 7"),
        ("UPDATE tournaments SET total_matches = '{}'", "total_matches of tournament"),
        ("UPDATE tournaments SET finished_at = X'00ff'", "finished_at of tournament"),
        ("UPDATE tournament_bots SET bot = X'00ff' WHERE position = 0", "bot of tournament"),
    ],
)
def test_a_column_changed_by_hand_is_named_not_a_traceback(
    tmp_path: Path, _stored_db: Path, update: str, words: str
) -> None:
    """Defect: SQLite keeps any value in any column, and a row edited by hand (text in a
    place, a NaN among the seats, a match's players moved to another id, a BLOB as a
    date) ended ``arena leaderboard`` and ``arena replay --list`` in a traceback
    (``ValueError: invalid literal for int()``, ``TypeError: object of type 'float' has no
    len()``, ``need one place per seat``). docs/tournament.md: a damaged match stops the
    leaderboard with an error naming it and the database (exit 1); nothing is changed."""
    db = tmp_path / "t.sqlite"
    shutil.copy(_stored_db, db)
    with sqlite3.connect(db) as c:
        c.execute(update)
    c.close()
    before = db.read_bytes()
    # (replay --list: exit 1 since round 54, as the leaderboard)
    for args, code in ((["leaderboard"], 1), (["leaderboard", "--list"], 1),
                       (["replay", "--list"], 1)):  # fmt: skip
        r = CliRunner().invoke(arena, [*args, "--db", str(db)])
        if r.exit_code == 0:  # (a listing that does not read the damaged column)
            assert "Traceback" not in r.output
            continue
        _fails(r, code, "damaged", words, str(db))
    assert db.read_bytes() == before


@pytest.mark.parametrize("host", ["[::1", "::1]", "[127.0.0.1]", "[localhost]", "[::1]]"])
def test_a_host_with_misplaced_brackets_is_refused_as_the_option(tmp_path: Path, host: str) -> None:
    """Defect: brackets anywhere but around a whole IPv6 address passed the host check,
    and gRPC could not parse the address once the server was starting: its own log line
    ("Unparsable name: [::1:0"), then ``cannot listen on [::1:0``, exit 1, not naming
    ``--host``."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "abcdefgh1"\nb = "abcdefgh2"\nc = "abcdefgh3"\n')
    records = str(tmp_path / "records")
    r = CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                                   "--record-dir", records, "--host", host])  # fmt: skip
    _fails(r, 2, "--host", "brackets go around a whole IPv6 address")


@pytest.mark.parametrize("host", ["[::1", "::1]", "[::1]]"])
def test_a_config_host_with_unbalanced_brackets_is_a_config_error(
    tmp_path: Path, host: str
) -> None:
    """Defect: the same in a tournament config (which takes ``[::1]`` and ``[127.0.0.1]``
    as the address inside): ``host = "[::1"`` started the bots, then ended in ``cannot start
    the referee on [::1:0``, exit 1, not naming the config's ``host``."""
    config = _config(tmp_path, f'host = "{host}"\n{BOTS}')
    r = CliRunner().invoke(arena, ["tournament", "--config", str(config), "--no-progress"])
    _fails(r, 2, "t.toml: host:", "brackets go around a whole IPv6 address")
    assert load_config(_config(tmp_path, f'host = "[::1]"\n{BOTS}')).host == "::1"


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("http://localhost:50051", "give the arena as HOST:PORT, 'localhost:50051'"),
        ("https://arena.example:443/", "'arena.example:443' with --tls"),
    ],
)
def test_a_web_address_as_the_arena_is_refused_not_retried(address: str, words: str) -> None:
    """Defect: ``--arena http://host:50051`` (a URL pasted from a browser) passed as a gRPC
    target URI; gRPC has no ``http`` scheme, looked the whole text up as a host name, and
    the bot retried it for --retry-for seconds (ten minutes by default) as an arena that
    was down. It is refused at once, saying the HOST:PORT to give."""
    r = CliRunner().invoke(
        arena_bot, ["run", "random", "--arena", address, "--token", "abcdefgh", "--retry-for", "0"]
    )
    _fails(r, 2, "--arena", "is a web address", words)


_BOT_NAMES = """\
from sdk import Bot


class NumberName(Bot):
    name = 5


class NoneNoSuper(Bot):
    name = None

    def __init__(self):  # Bot.__init__ skipped: name stays None
        pass


class Escapes(Bot):
    name = "\\x1b]0;owned\\x07red"
"""


@pytest.mark.parametrize("cls", ["NumberName", "NoneNoSuper"])
def test_a_bot_whose_name_is_no_text_plays_under_its_class_name(tmp_path: Path, cls: str) -> None:
    """Defect: ``arena-bot try`` of a bot with ``name = 5`` (or ``None`` with an
    ``__init__`` that skipped Bot's) ended in a traceback, ``ValueError: players must be
    names (texts)``; ``arena-bot run`` names such a bot by its class, and so does ``try``."""
    (tmp_path / "names.py").write_text(_BOT_NAMES)
    r = CliRunner().invoke(
        arena_bot, ["try", f"{tmp_path / 'names.py'}:{cls}", "-n", "1", "--max-deals", "1"]
    )
    _fails(r, 0, cls, "random", "heuristic")


def test_a_bots_name_is_written_out_not_sent_to_the_terminal(tmp_path: Path) -> None:
    """Defect: ``arena-bot try`` printed a bot's own name as it is in its table and its
    "slowest decision" line: a bot file (anyone's: ``--vs their.py:Bot``) whose name holds
    an escape sequence set the terminal's title (or worse). It is written out (``\\x1b``)."""
    (tmp_path / "names.py").write_text(_BOT_NAMES)
    r = CliRunner().invoke(
        arena_bot,
        ["try", f"{tmp_path / 'names.py'}:Escapes", "-n", "1", "--max-deals", "1",
         "--decision-ms", "60000"],
    )  # fmt: skip
    text = _fails(r, 0, "\\x1b]0;owned\\x07red")
    assert "\x1b" not in r.output and "\x07" not in r.output, text


def test_a_leaderboard_out_too_long_for_the_file_system_is_named_as_out(
    tmp_path: Path, _stored_db: Path
) -> None:
    """Defect: ``arena leaderboard --out NAME`` with a name too long for the file system
    stopped before the write, where it asked whether NAME is a directory (Python 3.11's
    ``is_dir`` raises): ``Error: NAME: File name too long``, without ``--out``, unlike every
    other --out that cannot be written (``error: --out NAME: cannot write ...``)."""
    r = CliRunner().invoke(
        arena, ["leaderboard", "--db", str(_stored_db), "--out", str(tmp_path / LONG)]
    )
    _fails(r, 1, "--out", "cannot write", "File name too long")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (f'"" = 1\n{BOTS}', 't.toml: "": unknown key'),
        (f'{BOTS}[deadlines]\n"" = 1\n', 't.toml: deadlines."": unknown key'),
        (
            f'ruleset = {{ preset = "classic", "" = 1 }}\n{BOTS}',
            't.toml: ruleset."": unknown option',
        ),
    ],
)
def test_an_empty_key_is_named_as_such(tmp_path: Path, body: str, words: str) -> None:
    """Defect: an empty key (``"" = 1``, valid TOML) was named as nothing: ``t.toml: :
    unknown key``, ``deadlines.: unknown key``, and ``bad ruleset r.toml: : unknown
    option`` (found by tests/fuzz/test_config_fuzz.py)."""
    r = CliRunner().invoke(arena, ["tournament", "--config", str(_config(tmp_path, body))])
    _fails(r, 2, words)
    (tmp_path / "r.toml").write_text('preset = "classic"\n"" = 1\n')
    _fails(CliRunner().invoke(arena, ["rules", str(tmp_path / "r.toml")]), 2,
           'r.toml: "": unknown option')  # fmt: skip


@pytest.mark.parametrize("seed", ["NaN", "Infinity", "1.5", "true", "[1]", "null"])
def test_a_record_whose_seed_is_no_seed_is_not_a_match_record(tmp_path: Path, seed: str) -> None:
    """Defect: a record whose ``seed`` is no integer nor string (``NaN``, ``1e400`` read as
    infinity, ``true``) was refused by ``arena replay --check`` as if the rules had refused
    it ("REFUSED: cannot start the match", exit 1), not as a record of the wrong shape
    (exit 2, naming the key), as every other wrong type is (docs/record-format.md)."""
    rec = _forfeited_record()
    path = tmp_path / "m.json"
    path.write_text(json.dumps(rec).replace('"seed": 7', f'"seed": {seed}', 1))
    for args in (["replay", "--check", str(path)], ["replay", str(path)]):
        _fails(CliRunner().invoke(arena, args), 2, "not a match record: 'seed' must be")


def test_a_database_with_a_byte_changed_in_its_schema_is_named_damaged(
    tmp_path: Path, _stored_db: Path
) -> None:
    """Defect: one byte changed in the file (a disk error, a bad copy) where SQLite keeps
    a table's name made sqlite3 raise ``UnicodeDecodeError`` building its own message
    ("malformed database schema (\\xceatch_players)"), not a ``DatabaseError``: a traceback
    in ``arena leaderboard``, ``arena replay`` and a resumed ``arena tournament``, where
    every other damage is named."""
    data = bytearray(_stored_db.read_bytes())
    at = data.find(b"tablematch_players")  # (sqlite_master's row: type, name, ...)
    assert at > 0
    data[at + len("table")] = 0xCE  # (the table's name no longer UTF-8)
    db = tmp_path / "t.sqlite"
    db.write_bytes(bytes(data))
    for args, code in ((["leaderboard"], 1), (["replay", "--list"], 1), (["replay", "m00001"], 2)):
        r = CliRunner().invoke(arena, [*args, "--db", str(db)])
        _fails(r, code, str(db), "is damaged")
    with pytest.raises(StorageError, match="is damaged"):
        Storage(db)
