"""SQLite storage of tournaments, match records and ratings (stdlib ``sqlite3``, WAL).

One file holds any number of tournaments. A finished match is written in one transaction
(match row, its players, deals, incidents and the full record JSON): it is stored whole or
not at all, so an interrupted tournament resumes without losing or repeating a match.

Schema (``SCHEMA_VERSION`` 1)::

    meta(key, value)                               schema version
    bots(name, spec, first_seen)                   every bot ever seen
    tournaments(id, name, fingerprint, config_json, total_matches, created_at, finished_at)
    tournament_bots(tournament_id, position, bot)
    matches(id, tournament_id, idx, table_no, set_no, seed, seats_json, started_at,
            finished_at, duration_s, deals, record_json)          UNIQUE(tournament_id, idx)
    match_players(match_id, seat, bot, score, place, shortfall, forfeit)
    deals(match_id, number, dealer, declarer, bid, contract, made, conceded, deltas_json,
          scores_json)
    incidents(id, match_id, tournament_id, seat, bot, kind, deal, detail)   the strikes
    ratings(tournament_id, idx, match_id, bot, mu, sigma)      history, in schedule order

Actions are not duplicated in a table: they live in the record (``load_record``), with
the referee's ``ms`` and ``by`` per action.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import sqlite3
import stat
import struct
import time
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import ReplayError
from engine.record import COUNTED_INCIDENTS, check_record_shape, load_ruleset_value

__all__ = [
    "SCHEMA_VERSION",
    "DealSummary",
    "ForeignDatabase",
    "MatchResult",
    "MatchToStore",
    "RatingPoint",
    "Storage",
    "StorageError",
    "StorageFullError",
    "StorageLockedError",
    "TournamentInfo",
    "deal_summary",
    "directories_missing",
    "file_in_the_way",
    "holds_database",
    "lock_owner",
    "lock_path",
    "make_directory_of",
    "named_match",
    "newest_database",
    "opening_bid_of",
    "remove_empty",
    "resolve_record",
    "sidecar_problem",
    "sidecars",
    "state_of",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY, spec TEXT NOT NULL DEFAULT '', first_seen TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, fingerprint TEXT NOT NULL,
    config_json TEXT NOT NULL, total_matches INTEGER NOT NULL,
    created_at TEXT NOT NULL, finished_at TEXT);
CREATE TABLE IF NOT EXISTS tournament_bots (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    position INTEGER NOT NULL, bot TEXT NOT NULL REFERENCES bots(name),
    PRIMARY KEY (tournament_id, bot));
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    tournament_id TEXT NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, table_no INTEGER NOT NULL, set_no INTEGER NOT NULL,
    seed INTEGER NOT NULL, seats_json TEXT NOT NULL,
    started_at TEXT NOT NULL, finished_at TEXT NOT NULL, duration_s REAL NOT NULL,
    deals INTEGER NOT NULL, record_json TEXT NOT NULL,
    UNIQUE (tournament_id, idx));
CREATE TABLE IF NOT EXISTS match_players (
    match_id TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    seat INTEGER NOT NULL, bot TEXT NOT NULL, score INTEGER NOT NULL,
    place INTEGER NOT NULL, shortfall INTEGER, forfeit INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (match_id, seat));
CREATE INDEX IF NOT EXISTS match_players_bot ON match_players(bot);
CREATE TABLE IF NOT EXISTS deals (
    match_id TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    number INTEGER NOT NULL, dealer INTEGER NOT NULL, declarer INTEGER,
    bid INTEGER, contract INTEGER, made INTEGER, conceded INTEGER NOT NULL DEFAULT 0,
    deltas_json TEXT NOT NULL, scores_json TEXT NOT NULL,
    PRIMARY KEY (match_id, number));
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    tournament_id TEXT NOT NULL, seat INTEGER, bot TEXT, kind TEXT NOT NULL,
    deal INTEGER, detail TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS incidents_tournament ON incidents(tournament_id, bot);
CREATE TABLE IF NOT EXISTS ratings (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, match_id TEXT NOT NULL, bot TEXT NOT NULL,
    mu REAL NOT NULL, sigma REAL NOT NULL,
    PRIMARY KEY (tournament_id, idx, bot));
"""


#: Match records read from SQLite at a time by :meth:`Storage.iter_records`.
_RECORDS_PER_READ = 32

#: The Python types of the columns the readers use, as SQLite gives them back (it stores
#: any value in any column: a row changed by hand may hold text where a number was).
_Types = dict[str, type | tuple[type, ...]]
_INCIDENT_TYPES: _Types = {
    "match_id": str, "seat": (int, type(None)), "bot": (str, type(None)),
    "kind": str, "deal": (int, type(None)), "detail": str,
}  # fmt: skip
_TOURNAMENT_TYPES: _Types = {
    "id": str, "name": str, "fingerprint": str, "total_matches": int, "created_at": str,
    "finished_at": (str, type(None)),
}  # fmt: skip
_MATCH_TYPES: _Types = {"id": str, "deals": int, "duration_s": (int, float)}
_PLAYER_TYPES: _Types = {"seat": int, "bot": str, "score": int, "place": int, "forfeit": int}


#: The largest whole number a stored figure may be: a score, a delta or a decision time
#: beyond it (SQLite's own integers stop there) is no match's, and the leaderboard's
#: arithmetic in floats raised OverflowError on one of a few hundred digits.
_MAX_FIGURE = 2**63 - 1


def _check_magnitudes(record: Mapping[str, Any]) -> None:
    """A ReplayError if a deal's ``deltas`` or ``scores``, or an action's ``ms``, holds a
    whole number beyond :data:`_MAX_FIGURE` (the shape check takes any integer)."""
    for i, deal in enumerate(record.get("deals") or ()):
        figures = [*(deal.get("deltas") or ()), *(deal.get("scores") or ())]
        figures += [a.get("ms") for a in deal.get("actions") or ()]
        for v in figures:
            if type(v) is int and abs(v) > _MAX_FIGURE:
                raise ReplayError(
                    f"deal {i}: a figure of about {v.bit_length() * 3 // 10 + 1} digits, beyond "
                    "what any match scores or takes",
                    deal=i,
                )


def _sql_type(value: Any) -> str:
    """What SQLite holds, in its words (a value, or the Python types of a column)."""
    names = {bytes: "a BLOB", str: "text", int: "an integer", float: "a real number",
             type(None): "NULL"}  # fmt: skip
    if isinstance(value, type):
        return names.get(value, value.__name__)
    if isinstance(value, tuple):
        return " or ".join(names.get(t, t.__name__) for t in value)
    return names.get(type(value), type(value).__name__)


#: What a run is told to do once its database is put right.
_RESUME = "run the same command again to resume"


class StorageError(RuntimeError):
    """The database cannot be used: the message says why and what to do."""


class ForeignDatabase(StorageError):
    """The file named is another program's SQLite database (tables, not the arena's): what
    was named is wrong, not the storage failing, so every command refuses it as a bad
    argument (exit 2), as `arena replay` and `arena serve` did and `arena tournament`,
    `arena leaderboard` and `arena web` did not (exit 1)."""


class StorageLockedError(StorageError):
    """Another process holds the database (or the tournament) for writing."""


class StorageFullError(StorageError):
    """The disk (or the database's size limit) is full. Nothing already stored is lost."""


@dataclass(frozen=True, slots=True)
class TournamentInfo:
    id: str
    name: str
    fingerprint: str
    config: dict[str, Any]
    total_matches: int
    created_at: str
    finished_at: str | None
    bots: tuple[str, ...]
    completed: int


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The outcome of one stored match, enough to rate it."""

    match_id: str
    index: int
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    places: tuple[int, ...]
    forfeits: tuple[int, ...]
    deals: int
    duration_s: float


@dataclass(frozen=True, slots=True)
class RatingPoint:
    index: int
    match_id: str
    bot: str
    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class DealSummary:
    """What a deal's actions say about its auction: who declared, at what, and how it went."""

    declarer: int | None
    bid: int | None
    contract: int | None
    made: bool | None
    #: The declarer conceded or (1001's last hand) threw in: no contract was played.
    conceded: bool


@dataclass(frozen=True, slots=True)
class MatchToStore:
    """One finished match for :meth:`Storage.save_matches` (the arguments of
    :meth:`Storage.save_match`)."""

    match_id: str
    index: int
    table: int
    set_no: int
    seed: int
    seats: tuple[str, ...]
    record: Mapping[str, Any]
    started_at: float
    finished_at: float


@dataclass(frozen=True, slots=True)
class _MatchRows:
    """The rows of one match, built before its transaction (the CPU of a store, outside
    the write lock): ``matches``, ``match_players``, ``deals`` and ``incidents``."""

    match_id: str
    match: tuple[Any, ...]
    players: list[tuple[Any, ...]]
    deals: list[tuple[Any, ...]]
    incidents: list[tuple[Any, ...]]


def _match_rows(tournament_id: str, m: MatchToStore) -> _MatchRows:
    """The rows of ``m``; a StorageError naming it if its record cannot give them."""
    record, seats, match_id = m.record, m.seats, m.match_id
    try:
        result = record.get("result") or {}
        n = len(seats)
        scores = _int_list(result.get("scores"), n, "result.scores")
        places = _int_list(result.get("places"), n, "result.places")
        shortfalls = result.get("shortfalls") or [None] * n
        forfeits = {int(s) for s in record.get("forfeits") or ()}
        deals = record.get("deals") or []
        try:
            blob = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            raise StorageError(f"the record is not JSON: {e}") from e
        match = (match_id, tournament_id, m.index, m.table, m.set_no, m.seed,
                 json.dumps(list(seats)), _iso(m.started_at), _iso(m.finished_at),
                 max(0.0, m.finished_at - m.started_at),
                 int(result.get("deals", len(deals))), blob)  # fmt: skip
        players = [(match_id, s, seats[s], scores[s], places[s],
                    shortfalls[s] if s < len(shortfalls) else None, int(s in forfeits))
                   for s in range(n)]  # fmt: skip
        rows: list[tuple[Any, ...]] = []
        opening_bid = _opening_bid(record)
        for d in deals:
            summ = deal_summary(d, opening_bid)
            rows.append(
                (match_id, int(d.get("number", len(rows))), int(d.get("dealer", -1)),
                 summ.declarer, summ.bid, summ.contract,
                 None if summ.made is None else int(summ.made), int(summ.conceded),
                 _json_list(d.get("deltas", [])), _json_list(d.get("scores", [])))
            )  # fmt: skip
        incidents = []
        for inc in record.get("incidents") or ():
            seat = inc.get("seat")
            bot = seats[seat] if isinstance(seat, int) and 0 <= seat < n else None
            incidents.append(
                (match_id, tournament_id, seat, bot, str(inc.get("kind", "unknown")),
                 inc.get("deal"), str(inc.get("detail", "")))
            )  # fmt: skip
    except StorageError as e:
        raise StorageError(f"match {match_id}: {e}") from e
    except (TypeError, ValueError, AttributeError, IndexError) as e:
        # (a record of another shape than the referee's: said, not a traceback on the
        # storage thread)
        raise StorageError(f"match {match_id}: the record cannot be stored: {e!r}") from e
    return _MatchRows(match_id, match, players, rows, incidents)


def _json_list(value: Any) -> str:
    """``json.dumps(value)``, the same text; a list of ints (a deal's deltas and scores)
    without the encoder's machinery (a tenth of a store's CPU went to these)."""
    if type(value) is list and all(type(v) is int for v in value):
        return "[" + ", ".join(map(str, value)) + "]"
    return json.dumps(value)


def _storing(matches: Sequence[MatchToStore], rows: Sequence[tuple[int, Any]]) -> str:
    """What a group's transaction does, for its error: "storing match m00003", or the
    matches' ids (the first few of a large group)."""
    ids = [matches[i].match_id for i, _ in rows]
    if len(ids) == 1:
        return f"storing match {ids[0]}"
    more = f", ... ({len(ids)} in all)" if len(ids) > 8 else ""
    return f"storing matches {', '.join(ids[:8])}{more}"


#: The errors of one match's rows (a constraint, a value SQLite cannot bind), not of the
#: file or its commit: the rest of its group is stored without it.
_ONE_MATCHS = (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError,
               sqlite3.DataError)  # fmt: skip


#: :func:`opening_bid_of` the rulesets stored (a record's ruleset dict, its players): the
#: same few in every match of a run, and loading one took a tenth of a store's Python.
_OPENING_BIDS: dict[Any, int | None] = {}


def _opening_bid(record: Mapping[str, Any]) -> int | None:
    """:func:`opening_bid_of` ``record``, from :data:`_OPENING_BIDS` when it was seen."""
    value, players = record.get("ruleset"), record.get("players")
    try:
        key = (
            # (the types too: 1 is True to a dict, not to the ruleset's type check)
            tuple((k, type(v), v) for k, v in value.items()) if isinstance(value, dict) else value,
            len(players) if isinstance(players, list) else None,
        )
        hash(key)
    except TypeError:  # (a ruleset holding a list: loaded every time)
        return opening_bid_of(record)
    if key not in _OPENING_BIDS:
        if len(_OPENING_BIDS) >= 64:
            _OPENING_BIDS.clear()
        _OPENING_BIDS[key] = opening_bid_of(record)
    return _OPENING_BIDS[key]


def _delete_tournament(c: sqlite3.Connection, tournament_id: str) -> None:
    c.execute("DELETE FROM incidents WHERE tournament_id = ?", (tournament_id,))
    c.execute("DELETE FROM tournaments WHERE id = ?", (tournament_id,))  # cascades


#: The files beside a database ``DB`` that are not databases: SQLite's write-ahead log and
#: its index, its rollback journal, and the runner's lock file (:func:`lock_path`).
_SIDECARS = {
    "-wal": "write-ahead log (-wal)",
    "-shm": "shared-memory index (-shm)",
    "-journal": "rollback journal (-journal)",
    ".lock": "lock file (.lock)",
}

#: The first bytes of every SQLite database file (a -wal, -shm or lock file has others).
_SQLITE_HEADER = b"SQLite format 3\x00"


def holds_database(path: Path) -> bool:
    """Whether the regular file at ``path`` (a link followed) is an SQLite database: its
    first bytes say so. A FIFO is not opened (it would wait for a writer)."""
    with contextlib.suppress(OSError, ValueError):
        if path.is_file():
            with path.open("rb") as fh:
                return fh.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    return False


def sidecars(db: Path) -> dict[Path, str]:
    """The files SQLite (or the runner) keeps beside the database ``db``, each with what it
    is. Written over, they lose what they hold: the matches a write-ahead log has not yet
    given the database (a run killed, or one under way)."""
    return {db.with_name(db.name + suffix): what for suffix, what in _SIDECARS.items()}


def sidecar_problem(db: Path) -> str | None:
    """Why ``db`` may not be written as a database, or None: it is a file SQLite (or the
    runner) keeps beside another database (``runs/x.sqlite-wal``, a slip of the shell's
    completion), or such a file of ``db``'s own holds a database. A -wal written as a
    database of its own (an empty one, as a reader leaves it, took the arena's tables) was
    the log of the other: SQLite, at that one's next write, starts its log again over it
    and the results stored in it are lost; and a lock file is rewritten and removed by
    every run on its database."""
    if not db.name:
        return None
    for suffix, what in _SIDECARS.items():
        if db.name.endswith(suffix) and len(db.name) > len(suffix):
            owner = db.with_name(db.name[: -len(suffix)])
            with contextlib.suppress(OSError, ValueError):
                if owner.is_file():
                    return (
                        f"{db} is not a database: it is the {what} that SQLite (or the "
                        f"arena) keeps beside the database {owner}; name that one, or another "
                        "file"
                    )
        side = db.with_name(db.name + suffix)
        if holds_database(side):
            return (
                f"{side} holds a database of its own, and SQLite (or the arena) would write "
                f"over it as the {what} of {db}: move it away (`mv`), then run again"
            )
    return None


def make_directory_of(db: Path) -> list[Path]:
    """Make the directory a database goes in (a StorageError naming what is in the way);
    the directories made, outermost first (for a run that stores nothing to remove)."""
    made = directories_missing(db.parent)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = file_in_the_way(db.parent)
        why = f"{blocker} is a file, not a directory" if blocker is not None else e
        raise StorageError(f"cannot create the directory of {db}: {why}") from e
    return made


def directories_missing(directory: Path) -> list[Path]:
    """``directory`` and those of its parents that are not there, outermost first: what
    making it makes (and a run that leaves nothing in them removes: :func:`remove_empty`)."""
    missing = []
    for p in (directory, *directory.parents):
        if p.exists() or p.is_symlink():
            break
        missing.append(p)
    return missing[::-1]


def remove_empty(made: list[Path]) -> None:
    """Remove the directories ``made`` (outermost first) that are empty, innermost first."""
    for d in reversed(made):
        with contextlib.suppress(OSError):  # (not empty: something else is there)
            d.rmdir()


def file_in_the_way(path: Path) -> Path | None:
    """The file (not a directory) that is ``path`` or one of its parents, if one is: why a
    directory cannot be made there. ``mkdir`` says only "File exists" (or "Not a
    directory"), naming no file or the one it was asked for."""
    for p in (path, *path.parents):
        try:
            if p.exists() or p.is_symlink():
                return None if p.is_dir() else p
        except OSError:  # a name too long, say: that is not about a file in the way
            return None
    return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def deal_summary(deal: Mapping[str, Any], opening_bid: int | None = None) -> DealSummary:
    """Derive the auction of one record deal from its actions and deltas.

    The declarer is the seat that gives cards, names the contract, concedes or throws in;
    ``bid`` is what the declarer took the talon at: his last bid, or, when he never spoke
    (classic's obligatory first hand, 1001's last hand after all passed), the ruleset's
    ``opening_bid`` (:func:`opening_bid_of` the record; None when not given);
    ``made`` is the deal's ``outcome`` (``"made"`` or ``"failed"``), or, in a record
    without outcomes, whether the declarer's delta is not negative. Explicit keys
    ``declarer``/``contract``/``made`` in the deal, when an engine writes them, win.

    >>> deal_summary({"actions": [{"seat": 1, "action": "bid 110"},
    ...     {"seat": 2, "action": "pass"}, {"seat": 0, "action": "pass"},
    ...     {"seat": 1, "action": "give 9♠ to 2"}, {"seat": 1, "action": "contract 120"}],
    ...     "deltas": [30, 120, 10]})
    DealSummary(declarer=1, bid=110, contract=120, made=True, conceded=False)
    """
    declarer: int | None = None
    bid: int | None = None
    contract: int | None = None
    conceded = False
    last_bid: dict[int, int] = {}
    for a in deal.get("actions", ()):
        seat = a.get("seat")
        text = str(a.get("action", ""))
        word, _, rest = text.partition(" ")
        if word == "play":
            break  # the auction, the talon and the contract all come before the first card
        if word == "bid" and isinstance(seat, int):
            with contextlib.suppress(ValueError):
                last_bid[seat] = int(rest.split()[0])
        elif word in ("give", "contract", "concede", "throw-in") and isinstance(seat, int):
            if declarer is None:
                declarer = seat
            if word == "contract":
                with contextlib.suppress(ValueError, IndexError):
                    contract = int(rest.split()[0])
            elif word in ("concede", "throw-in"):
                conceded = True
    if declarer is not None:
        # Who took the talon without a word of his own took it at the opening bid.
        bid = last_bid.get(declarer, opening_bid)
    if isinstance(deal.get("declarer"), int):
        declarer = deal["declarer"]
    if isinstance(deal.get("contract"), int):
        contract = deal["contract"]
    made: bool | None = None
    outcome = deal.get("outcome")
    if isinstance(deal.get("made"), bool):
        made = deal["made"]
    elif outcome in ("made", "failed"):
        made = outcome == "made"
    elif declarer is not None and contract is not None and not conceded:
        # A record without outcomes (written before they were): a made contract on the
        # barrel's last deal (-120) reads as failed here.
        deltas = deal.get("deltas") or []
        if declarer < len(deltas):
            made = int(deltas[declarer]) >= 0
    return DealSummary(declarer, bid, contract, made, conceded)


def opening_bid_of(record: Mapping[str, Any]) -> int | None:
    """The opening bid of a record's ruleset; None when the ruleset does not load.

    >>> opening_bid_of({"ruleset": "1001", "players": ["a", "b", "c"]})
    40
    """
    players = record.get("players")
    try:
        size = len(players) if isinstance(players, list) else None
        return load_ruleset_value(record.get("ruleset"), size).opening_bid
    except (ValueError, TypeError):
        return None


class Storage:
    """The tournament database. Use as a context manager, or call :meth:`close`."""

    #: Of a database opened read-only: its file's (device, inode), as found just before it
    #: was opened (a reader that keeps what it computed tells another file put at the path
    #: from the one it read; None if it could not tell).
    file_id: tuple[int, int] | None = None
    #: False for :meth:`open_readonly`'s: an error is then never one of a write.
    _writing = True

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float = 5.0,
        resume: str = _RESUME,
    ) -> None:
        self.path = Path(path)
        #: What the errors of a lost or overwritten file advise (`arena serve` has its own:
        #: a new serve is a new tournament, not this one resumed).
        self.resume = resume
        problem = sidecar_problem(self.path)
        if problem is not None:
            raise StorageError(problem)
        try:
            mode: int | None = os.stat(self.path).st_mode
        except (OSError, ValueError):
            mode = None  # not there yet (made below), or SQLite says why not
        if mode is not None and not stat.S_ISREG(mode):
            # (a FIFO, /dev/null: SQLite said only "disk I/O error" of it, `arena serve --db`)
            raise StorageError(f"{self.path}: not a regular file (a directory, FIFO, device "
                               "or socket): a database is one")  # fmt: skip
        make_directory_of(self.path)
        with self._guard("opening"):
            # A new database is readable by its owner only (SQLite gives its -wal and -shm
            # files the same mode): it holds the seeds of matches still to be played (a
            # drawn tournament seed among them), and every hand they deal follows from them.
            with contextlib.suppress(OSError):  # there already; or SQLite says why not
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            # Usable from another thread (the tournament stores results on a worker thread),
            # one thread at a time: callers keep its use serial.
            self.conn = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self.conn.row_factory = sqlite3.Row
        #: The file opened (device, inode): see :meth:`_still_at_its_path`.
        self._file = _file_id(self.path)
        #: This file's mark (:meth:`_file_mark`), and whether its header on disk has shown
        #: it yet (see :meth:`_overwritten_in_place`).
        self._mark = 0
        self._mark_seen = False
        self._header_uri: str | None = None  # (the file's, read-only and immutable)
        #: Set once the file was found overwritten in place: closing must not checkpoint
        #: this connection's log into the other database now in it.
        self._overwritten = False
        self._overwritten_file: tuple[int, int] | None = None
        #: Set once the file written was found deleted or replaced (the error said then):
        #: every later write goes to that lost file, so a caller that goes on (`arena
        #: serve`) must write no more. ``written_back``: where what it held (the write that
        #: found it included) was saved then, None if that failed too.
        self.file_lost = False
        self.written_back: Path | None = None
        try:
            with self._guard("opening"):
                self.conn.execute("PRAGMA foreign_keys = ON")
                version = self._check_identity()  # before anything is written to the file
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    log.warning("SQLite journal mode is %s, not WAL, for %s", mode, self.path)
                self.conn.execute("PRAGMA synchronous = FULL")
                if version is None:
                    self._init_schema()
                self._mark = self._file_mark()
        except BaseException:
            self.close()
            raise
        #: The write-ahead log and its index this connection keeps open (device, inode; by
        #: now the reads above made them): see :meth:`_drop_lost_log`.
        self._log_files = {
            suffix: _file_id(self.path.with_name(self.path.name + suffix))
            for suffix in ("-wal", "-shm")
        }

    @classmethod
    def open_readonly(cls, path: str | Path, *, timeout: float = 5.0) -> Storage:
        """The same read methods over a read-only connection: opening never writes.

        ``Storage(path)`` creates the schema and sets WAL mode, which the readers (the
        leaderboard, a replay, the web viewer) must not do: beside a running tournament, or
        on read-only storage, where it failed ("cannot open"). There SQLite cannot create
        the WAL's shared-memory file either, so the file is opened as immutable: nothing
        can change it on such a medium.
        """
        p = Path(path)
        if not p.is_file():
            if p.exists():  # (a FIFO, a device: "no database at" would say nothing is there)
                raise StorageError(f"{p}: not a regular file (a directory, FIFO, device or "
                                   "socket): no database")  # fmt: skip
            raise StorageError(f"no database at {p} (run a tournament first, or pass --db)")
        uri = f"{p.resolve().as_uri()}?mode=ro"
        if not os.access(p.resolve().parent, os.W_OK) and not _reads_its_log(uri, timeout):
            uri += "&immutable=1"
        st = cls.__new__(cls)
        st.path = p
        st._file = None  # (it writes nothing: nothing to lose)
        st._writing = False
        st.resume = _RESUME  # (read by _guard: a file that is no SQLite database was an
        # AttributeError traceback from every reader, arena leaderboard/replay/web --db)
        # (before connecting: a file put in its place meanwhile is read under the old id,
        # and the next reader finds the new one, not the reverse)
        st.file_id = _file_id(p)
        logs = [p.with_name(p.name + suffix) for suffix in ("-wal", "-shm")]
        absent = [f for f in logs if not f.exists()]
        with st._guard("opening read-only"):
            st.conn = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
            st.conn.row_factory = sqlite3.Row
        try:
            with st._guard("opening read-only"):
                if st._check_identity() is None:
                    raise StorageError(f"{p} is an empty database: no tournament is stored in it")
        except BaseException as e:
            st.close()
            # Only a file SQLite could not read: one it read whole and refused (empty, as
            # `arena run` leaves it between setting WAL mode and writing its schema, or
            # another program's) may have a writer that opened its log meanwhile, still empty.
            # (nor a locked one: its writer is there)
            # (not an OperationalError: locked, busy, an I/O error say nothing of the file,
            # and a writer may have opened the log meanwhile; SQLite says a file is no
            # database or malformed by a DatabaseError of its own)
            cause = e.__cause__
            damaged = isinstance(cause, UnicodeDecodeError) or (
                isinstance(cause, sqlite3.DatabaseError)
                and not isinstance(cause, sqlite3.OperationalError)
            )
            if damaged and not isinstance(e, StorageLockedError):
                _remove_empty_logs(absent)
            raise
        return st

    # ----------------------------------------------------------------- plumbing

    def close(self) -> None:
        if getattr(self, "_overwritten", False):
            self._close_without_checkpoint()
            return
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def _close_without_checkpoint(self) -> None:
        """Close a connection whose file was overwritten in place: SQLite's last connection
        to a file copies its write-ahead log into it on closing, which would write this
        run's pages into the other database put there (a mix of both), or into a file that
        is no database. A read lock on SQLite's bytes of the file (:func:`_hold_off_writers`,
        Linux), else another connection to it, reading, holds off the lock that closing
        needs for that, so the log is left (it was removed from beside the path already:
        :meth:`_drop_lost_log`)."""
        fd = _hold_off_writers(self.path, self._overwritten_file)
        holder = None
        with contextlib.suppress(sqlite3.Error, OSError):
            # (a file that is no database gives SQLite nothing to lock: only the lock above
            # holds it; connecting where no file is would create a database there)
            if fd is None and self.path.is_file():
                holder = sqlite3.connect(str(self.path), timeout=0)
                holder.execute("BEGIN")
                holder.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        if holder is not None:
            with contextlib.suppress(sqlite3.Error):
                holder.rollback()
            with contextlib.suppress(sqlite3.Error):
                holder.close()
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> Storage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """Turn sqlite3 errors into :class:`StorageError` with a message a user can act on."""
        try:
            yield
        except sqlite3.Error as e:
            raise _translate(e, self.path, what, self.resume, writing=self._writing) from e
        except UnicodeDecodeError as e:
            # A byte changed in the file: sqlite3 raises this, not a DatabaseError, for text
            # that is not UTF-8, in a row it reads or in its own message naming a damaged
            # table ("malformed database schema (\xceatch_players)"): a traceback before.
            raise StorageError(
                f"{self.path} is not a Thousand Arena database or is damaged ({what}: text "
                f"that is not UTF-8, {bytes(e.object[e.start : e.end + 12])!r})"
            ) from e

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Reads that must agree with each other, in one read transaction: a match stored
        meanwhile is in all of them or in none (each statement alone is its own, and a match
        stored between two of them would be in one and not in the other)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any error)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
                raise

    def _still_at_its_path(self) -> None:
        """After a write: the file written is still the one at the database's path. One
        deleted (or replaced) while a tournament runs would take every result stored after
        that with it: SQLite writes on in the file it has open, which no path names any
        more, and the run would end "stored" with an empty database in its place. What the
        file holds is written back (SQLite's ``VACUUM INTO``) to the path, or beside it when
        another file is there now, and a StorageError says where: the run stops, and resumes
        from it."""
        if self._file is None:
            return
        if _file_id(self.path) == self._file:
            if self._overwritten_in_place():
                self._refuse_overwritten()
            return
        self._file = None  # (said once; every later write goes to the same lost file)
        self.file_lost = True
        taken = not self.path.exists()
        target = self.path if taken else self.path.with_name(
            f"{self.path.name}.recovered-{time.strftime('%Y%m%d-%H%M%S')}"
        )  # fmt: skip
        stored: Any = "?"
        try:
            with contextlib.suppress(sqlite3.Error):
                stored = self.conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # (an empty file of the owner's mode first: it holds the seeds; VACUUM INTO
            # accepts an empty file)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self.conn.execute("VACUUM INTO ?", (str(target),))
            self.written_back = target
            saved = f"everything it held ({stored} matches) is written to {target}" + (
                "" if taken else f" (another file is at {self.path} now: put it in its place)"
            )
        except (sqlite3.Error, OSError) as e:
            saved = f"writing what it held back to {target} failed too ({e})"
        self._drop_lost_log()
        message = (
            f"{self.path} was deleted or replaced while this run was writing to it: {saved}; "
            f"{self.resume}"
        )
        log.error("%s", message)
        raise StorageError(message)

    def check_writable(self) -> None:
        """Refuse a database that cannot be written now: one this user may read but not
        write, the file or its ``-wal`` or ``-shm`` left by a run that was killed (mode
        0444, another user's, ``chattr +i``). SQLite opens it read-only without a word, and
        the first write failed: for a resumed tournament after every bot had started and
        the first matches were played, then thrown away, naming the database where its
        ``-wal`` was the file to make writable. (`arena tournament` calls it, not the
        opening: its own reads of the database, for the leaderboard after a run, need no
        write.)"""
        blocked = _unwritable(self.path)
        if blocked is not None:
            raise StorageError(
                f"{blocked} is read-only to this user (its mode, its owner or `chattr +i`): "
                "make it writable, or use a writable --db path (arena leaderboard, replay and "
                "web read it where it is); nothing stored in it was changed"
            )
        # A write transaction held by another program (a `sqlite3` shell left in a BEGIN):
        # waited for as any write is, then refused now rather than at the first result.
        with self._guard("opening it to store results"):
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("ROLLBACK")

    def _file_mark(self) -> int:
        """This database's mark: a random number in its header's ``user_version`` (set once,
        in a write transaction, where it is 0), copied into the file itself at once (a
        checkpoint; else the next one does). Another database copied over the file in
        place (``cp other.sqlite runs/t.sqlite``: the same device and inode, which
        :meth:`_still_at_its_path` compares) has another mark, or none."""
        mark = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if mark != 0:
            return mark
        try:
            with self._tx() as c:
                mark = int(c.execute("PRAGMA user_version").fetchone()[0])
                if mark == 0:
                    mark = int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF or 1
                    c.execute(f"PRAGMA user_version = {mark}")
        except sqlite3.OperationalError:
            return 0  # (locked: the first write says so; this run goes without the check)
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        return mark

    def _overwritten_in_place(self) -> bool:
        """Whether the file at the path, the one opened, holds another database now: its
        header in the file itself (SQLite keeps writes in its log and would not see it)
        shows another mark than this database's, or none, or is no database's, once it has
        shown this one (until a checkpoint copies the mark in, it may show none).

        The header is read through SQLite (a connection of its own, read-only and
        immutable: it reads the file, not the log), not by opening the file: closing a
        descriptor of a file drops every POSIX lock this process holds on it, SQLite's
        among them, and a reader in another process that closed then took itself for the
        file's last connection and removed the log this run writes on (its next matches
        were seen by no other process, and lost if it did not close cleanly)."""
        if self._mark == 0:
            return False
        try:
            if self._header_uri is None:
                self._header_uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
            reader = sqlite3.connect(self._header_uri, uri=True, timeout=0)
        except (sqlite3.Error, OSError, ValueError):
            return False  # (gone, or cannot be opened now: the other checks say it)
        try:
            mark = int(reader.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as e:
            code = getattr(e, "sqlite_errorcode", None)
            if not (isinstance(code, int) and code & 0xFF in (11, 26)):
                return False  # (an I/O error, say: it cannot tell)
            mark = -1  # (not a database, or a damaged one: not this one)
        finally:
            reader.close()
        if mark == self._mark:
            self._mark_seen = True
            return False
        return self._mark_seen

    def _refuse_overwritten(self) -> None:
        """The file was overwritten in place: what it held is gone from it (the pages not
        yet copied from the log are all that is left), and no copy can be made that is not
        a mix of both databases. It is left as it is, this connection's log is removed
        from beside it and never copied into it, and a StorageError says so."""
        self._overwritten_file = self._file
        self._file = None
        self.file_lost = True
        self._overwritten = True
        self._drop_lost_log()
        message = (
            f"{self.path} was overwritten in place while this run was writing to it (another "
            "database copied over it?): the matches stored in it are no longer in the file, "
            "and the file is left as it is; put the database back (a copy, if you have one) "
            f"and {self.resume}"
            + (" (what is not in it is played again)" if self.resume == _RESUME else "")
        )
        log.error("%s", message)
        raise StorageError(message)

    def _drop_lost_log(self) -> None:
        """Remove this connection's ``-wal`` and ``-shm`` from beside the path, once its file
        was found deleted or replaced. SQLite keeps them open, and never checkpoints or
        removes them for a moved file: left there, they were the log of another file than
        the one at the path, which SQLite then applied to it on the next open — the file
        put in place of the lost one, or the recovered copy moved there as the message
        says, read as a mix of both ("database disk image is malformed"), and the next
        write made that mix its content. Only files that are still this connection's (the
        same device and inode) are removed: a log another program started there since is
        left alone."""
        for suffix, opened in getattr(self, "_log_files", {}).items():
            f = self.path.with_name(self.path.name + suffix)
            if opened is not None and _file_id(f) == opened:
                with contextlib.suppress(OSError):
                    f.unlink()

    def _check_identity(self) -> str | None:
        """The arena schema version of the file, or None for an empty database (the schema
        is then created). Refuses, reading only, a database of another program (tables but
        not the arena's) and another schema version."""
        row = None
        with contextlib.suppress(sqlite3.OperationalError):  # no (or another) meta table
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
        if row is None:
            tables = [
                str(r[0])
                for r in self.conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name NOT LIKE 'sqlite%' ORDER BY name"
                )
            ]
            if tables:
                shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
                raise ForeignDatabase(
                    f"{self.path} is not a Thousand Arena database (it holds other tables: "
                    f"{shown}); nothing was written to it: use another --db file"
                )
            return None
        if str(row[0]) != str(SCHEMA_VERSION):
            stored = str(row[0]).strip()
            if stored.isdigit() and stored.isascii() and int(stored) > SCHEMA_VERSION:
                # (as a record of a newer format says: not damaged, and not to be replaced)
                raise StorageError(
                    f"{self.path} was written by a newer Thousand Arena (schema version "
                    f"{stored}; this one reads {SCHEMA_VERSION}): upgrade to read it or add "
                    "to it; nothing was written to it"
                )
            raise StorageError(
                f"{self.path} has schema version {row[0]!r:.40}, this arena "
                f"reads {SCHEMA_VERSION}: it was changed outside the arena; nothing was "
                "written to it: use another --db file"
            )
        return str(row[0])

    def _init_schema(self) -> None:
        with self._guard("creating the schema"), self._tx() as c:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )

    def _json(self, text: Any, what: str) -> Any:
        """A JSON column read back; a row changed outside the arena is a StorageError."""
        try:
            if isinstance(text, bytes):  # read as a BLOB (below): bytes that are not UTF-8
                text = text.decode("utf-8")  # are a damaged row, named, not a database error
            return json.loads(text)
        except (TypeError, ValueError) as e:
            raise StorageError(
                f"{self.path}: the stored {what} is damaged (not valid JSON: {e}); it was "
                "changed outside the arena. Nothing in the database was changed"
            ) from e

    def _typed(
        self, row: sqlite3.Row | Mapping[str, Any], types: _Types, what: str, kind: str = ""
    ) -> None:
        """Every column of ``types`` in ``row`` holds a value of its type; a StorageError
        naming the column of ``what`` otherwise (a traceback in the leaderboard before)."""
        for key, want in types.items():
            value = row[key]
            if not isinstance(value, want) or isinstance(value, bool):
                raise StorageError(
                    f"{self.path}: the stored {kind}{key} of {what} is damaged ({_sql_type(value)} "
                    f"{value!r:.40}, not {_sql_type(want)}); it was changed outside the arena"
                )

    def _seats(self, text: Any, match_id: str) -> list[str]:
        """A match's stored seats: one bot name per seat."""
        seats = self._json(text, f"seats of match {match_id}")
        if not isinstance(seats, list) or not seats or not all(isinstance(b, str) for b in seats):
            raise StorageError(
                f"{self.path}: the stored seats of match {match_id} are damaged ({seats!r:.60}, "
                "not a list of bot names); they were changed outside the arena"
            )
        if len(set(seats)) != len(seats):  # (the referee seats a bot once: rating it raised)
            raise StorageError(
                f"{self.path}: the stored seats of match {match_id} are damaged ({seats!r:.60}: "
                "a bot sits twice); they were changed outside the arena"
            )
        return seats

    def _record(self, text: Any, match_id: str) -> dict[str, Any]:
        record = self._json(text, f"record of match {match_id}")
        if not isinstance(record, dict):
            raise StorageError(
                f"{self.path}: the stored record of match {match_id} is damaged (JSON "
                f"{type(record).__name__}, not an object); it was changed outside the arena"
            )
        try:
            # What the leaderboard, replays and renderers read has the types they expect
            # (valid JSON of the wrong shape would otherwise crash them, or be miscounted).
            check_record_shape(record, required=())
            _check_magnitudes(record)
        except ReplayError as e:
            if e.newer:  # stored by a newer version sharing this database: not damaged
                raise StorageError(f"{self.path}: match {match_id}: {e}") from e
            raise StorageError(
                f"{self.path}: the stored record of match {match_id} is damaged ({e}); it was "
                "changed outside the arena"
            ) from e
        return record

    # ----------------------------------------------------------------- tournaments

    def ensure_tournament(
        self,
        tournament_id: str,
        *,
        name: str,
        fingerprint: str,
        config: Mapping[str, Any],
        total_matches: int,
        bots: Sequence[tuple[str, str]],
        replace: bool = False,
    ) -> bool:
        """Create the tournament (True), or check that the stored one is the same (False).

        ``bots`` is ``[(name, spec), ...]`` in config order. A stored tournament with this
        id but another fingerprint is refused: its matches would not be comparable.
        ``replace``: forget the stored one first (``--fresh``), in the same transaction:
        never a moment with neither.
        """
        with self._guard(f"registering tournament {tournament_id}"):
            row = self.conn.execute(
                "SELECT fingerprint FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
            if row is not None and not replace:
                if row["fingerprint"] != fingerprint:
                    raise StorageError(
                        f"tournament {tournament_id!r} in {self.path} was started with another "
                        "config (bots, ruleset, seed or deadlines differ): use --fresh to "
                        "start it again, or give this config another name/id"
                    )
                return False
            with self._tx() as c:
                if replace:
                    _delete_tournament(c, tournament_id)
                for bot, spec in bots:
                    c.execute(
                        "INSERT OR IGNORE INTO bots(name, spec, first_seen) VALUES (?, ?, ?)",
                        (bot, spec, _now()),
                    )
                c.execute(
                    "INSERT INTO tournaments(id, name, fingerprint, config_json, total_matches,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (tournament_id, name, fingerprint, json.dumps(config, ensure_ascii=False),
                     total_matches, _now()),
                )  # fmt: skip
                c.executemany(
                    "INSERT INTO tournament_bots(tournament_id, position, bot) VALUES (?, ?, ?)",
                    [(tournament_id, i, bot) for i, (bot, _) in enumerate(bots)],
                )
        self._still_at_its_path()
        return True

    def add_tournament_bots(self, tournament_id: str, bots: Sequence[tuple[str, str]]) -> None:
        """List more bots (``[(name, spec), ...]``) among the tournament's, after those it
        has (a bot added to a running `arena serve`'s tokens file)."""
        with self._guard(f"registering bots of tournament {tournament_id}"), self._tx() as c:
            # After the last position, counting only the bots not listed yet (one removed
            # and listed again is there already): a count of rows gave two bots one
            # position after such a one, and their order was then SQLite's.
            (n,) = c.execute(
                "SELECT COALESCE(MAX(position) + 1, 0) FROM tournament_bots"
                " WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
            for bot, spec in bots:
                c.execute("INSERT OR IGNORE INTO bots(name, spec, first_seen) VALUES (?, ?, ?)",
                          (bot, spec, _now()))  # fmt: skip
                n += c.execute(
                    "INSERT OR IGNORE INTO tournament_bots(tournament_id, position, bot)"
                    " VALUES (?, ?, ?)",
                    (tournament_id, n, bot),
                ).rowcount
        self._still_at_its_path()

    def delete_tournament(self, tournament_id: str) -> None:
        """Forget a tournament and everything stored for it. (``--fresh`` does not come
        here: :meth:`ensure_tournament` with ``replace`` deletes in the transaction that
        stores the new one.)"""
        with self._guard(f"deleting tournament {tournament_id}"), self._tx() as c:
            _delete_tournament(c, tournament_id)
        self._still_at_its_path()

    def finish_tournament(self, tournament_id: str, *, total: int | None = None) -> None:
        """Mark the tournament finished (``total``: its number of matches, now known: an
        `arena serve --db` plays as many as its bots do)."""
        with self._guard("marking the tournament finished"), self._tx() as c:
            c.execute(
                "UPDATE tournaments SET finished_at = ?, total_matches = COALESCE(?, "
                "total_matches) WHERE id = ?",
                (_now(), total, tournament_id),
            )
        self._still_at_its_path()

    def tournament(self, tournament_id: str, *, listing: bool = False) -> TournamentInfo | None:
        """The stored tournament ``tournament_id``, or None. A damaged config is a
        StorageError, but with ``listing`` (what lists and looks tournaments up needs, not
        their config) it reads as ``{"damaged": "<why>"}``: one damaged row must not hide
        every other tournament of the database."""
        with self._guard("reading tournaments"):
            row = self.conn.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM matches m WHERE m.tournament_id = t.id)"
                " AS completed FROM tournaments t WHERE id = ?",
                (tournament_id,),
            ).fetchone()
            if row is None:
                return None
            bots = tuple(
                r[0]
                for r in self.conn.execute(
                    "SELECT bot FROM tournament_bots WHERE tournament_id = ? ORDER BY position",
                    (tournament_id,),
                )
            )
        try:
            self._typed(row, _TOURNAMENT_TYPES, f"tournament {tournament_id!r:.80}")
            for bot in bots:
                self._typed({"bot": bot}, {"bot": str}, f"tournament {tournament_id}")
        except StorageError as e:
            if not listing:
                raise
            return self._damaged_tournament(row, str(e))
        try:
            config = self._json(row["config_json"], f"config of tournament {tournament_id}")
            if not isinstance(config, dict):  # (what reads it calls config.get)
                raise StorageError(
                    f"{self.path}: the stored config of tournament {tournament_id} is damaged "
                    f"(JSON {type(config).__name__}, not an object); it was changed outside "
                    "the arena"
                )
        except StorageError as e:
            if not listing:
                raise
            config = {"damaged": str(e)}
        return TournamentInfo(
            id=row["id"],
            name=row["name"],
            fingerprint=row["fingerprint"],
            config=config,
            total_matches=row["total_matches"],
            created_at=row["created_at"],
            finished_at=row["finished_at"],
            bots=bots,
            completed=row["completed"],
        )

    @staticmethod
    def _damaged_tournament(row: sqlite3.Row, why: str) -> TournamentInfo:
        """A listing's entry for a tournament row whose columns were changed outside the
        arena: listed as damaged (its text columns as they read), not hiding the others."""

        def text(key: str) -> str:
            return row[key] if isinstance(row[key], str) else f"(damaged: {row[key]!r:.40})"

        total = row["total_matches"]
        finished = row["finished_at"]
        return TournamentInfo(
            id=text("id"), name=text("name"), fingerprint=text("fingerprint"),
            config={"damaged": why},
            total_matches=total if isinstance(total, int) and not isinstance(total, bool) else 0,
            created_at=text("created_at"),
            finished_at=finished if finished is None else text("finished_at"),
            bots=(), completed=row["completed"],
        )  # fmt: skip

    def tournaments(self) -> list[TournamentInfo]:
        """Every stored tournament, the most recently created last. In the order they were
        stored (``rowid``), not by ``created_at``: that is the wall clock, with the local
        zone's offset, so a run under another ``TZ`` (cron, a container, daylight saving's
        end) or after the clock was set back sorted a newer tournament before an older one,
        and the "latest" (``arena leaderboard``'s default) was an older one."""
        with self._guard("reading tournaments"):
            ids = [r[0] for r in self.conn.execute("SELECT id FROM tournaments ORDER BY rowid")]
        return [t for i in ids if (t := self.tournament(i, listing=True)) is not None]

    def tournaments_of(self, bot: str) -> list[str]:
        """The ids of the stored tournaments ``bot`` plays in (listed among its bots, or
        seated in a stored match: `arena serve --db` lists none), the latest created first.
        A club's database holds a tournament a week and a league beside another: what names
        them when a bot is looked for in one it did not play in, and on its page."""
        try:
            bot.encode("utf-8")
        except UnicodeEncodeError:  # (a lone surrogate, from argv's undecodable bytes: no
            return []  # stored name has one, and SQLite's binding raised a traceback)
        with self._guard("reading tournaments"):
            rows = self.conn.execute(
                "SELECT id FROM tournaments WHERE id IN (SELECT tournament_id FROM"
                " tournament_bots WHERE bot = ?) OR id IN (SELECT m.tournament_id FROM"
                " match_players p JOIN matches m ON m.id = p.match_id WHERE p.bot = ?)"
                " ORDER BY rowid DESC",
                (bot, bot),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def resolve_tournament(self, ref: str | None) -> str:
        """The id of tournament ``ref``: its id, or its name (the config's ``name``; ids add
        the config's fingerprint, ``default-bd07867d053f``), the latest created of that name;
        ``None``: the latest created. :class:`LookupError` naming the stored ones otherwise;
        a StorageError naming the damage when that one is damaged (a stand-in id of a row
        whose id was damaged finds nothing: it was "no tournament", though listed)."""
        infos = self.tournaments()
        if not infos:
            raise LookupError(f"{self.path} holds no tournament")
        found = infos
        if ref is not None:
            found = [t for t in infos if t.id == ref] or [t for t in infos if t.name == ref]
        if not found:
            stored = ", ".join(f"{t.id} ({t.name})" for t in infos)
            raise LookupError(f"no tournament {ref!r} in {self.path} (stored: {stored})")
        if "damaged" in found[-1].config:
            raise StorageError(found[-1].config["damaged"])
        return found[-1].id

    def named_too(self, ref: str) -> list[str]:
        """When ``ref`` is one stored tournament's id, the ids of the others whose *name* is
        ``ref`` (which :meth:`resolve_tournament` passes over: the id wins); else ``[]``.
        The commands that take ``--tournament REF`` say so in a note (docs/tournament.md)."""
        infos = self.tournaments()
        if not any(t.id == ref for t in infos):
            return []
        return [t.id for t in infos if t.name == ref and t.id != ref]

    def latest_tournament(self) -> str | None:
        with self._guard("reading tournaments"):
            row = self.conn.execute(
                "SELECT id FROM tournaments ORDER BY rowid DESC LIMIT 1"  # (see tournaments)
            ).fetchone()
        if row is not None:  # (else a BLOB's repr is looked up: "no tournament \"b'..'\"")
            self._typed(row, {"id": str}, "the latest tournament")
        return None if row is None else str(row[0])

    # ----------------------------------------------------------------- matches

    def stored_seatings(self, tournament_id: str) -> dict[int, tuple[str, int, tuple[str, ...]]]:
        """Schedule index -> (match id, seed, seats) of every stored match of the tournament:
        what a resumed run checks against the schedule it rebuilds."""
        with self._guard("reading completed matches"):
            rows = self.conn.execute(
                "SELECT id, idx, seed, seats_json FROM matches WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchall()
        out: dict[int, tuple[str, int, tuple[str, ...]]] = {}
        for r in rows:
            seats = self._seats(r["seats_json"], r["id"])
            out[int(r["idx"])] = (str(r["id"]), int(r["seed"]), tuple(map(str, seats)))
        return out

    def completed_indices(self, tournament_id: str) -> set[int]:
        with self._guard("reading completed matches"):
            return {
                int(r[0])
                for r in self.conn.execute(
                    "SELECT idx FROM matches WHERE tournament_id = ?", (tournament_id,)
                )
            }

    def save_match(
        self,
        tournament_id: str,
        *,
        match_id: str,
        index: int,
        table: int,
        set_no: int,
        seed: int,
        seats: Sequence[str],
        record: Mapping[str, Any],
        started_at: float,
        finished_at: float,
    ) -> None:
        """Store one finished match, whole or not at all (one transaction)."""
        match = MatchToStore(match_id, index, table, set_no, seed, tuple(seats), record,
                             started_at, finished_at)  # fmt: skip
        error = self._save_group(tournament_id, [match])[0]
        if error is not None:
            raise error

    def save_matches(
        self, tournament_id: str, matches: Sequence[MatchToStore]
    ) -> list[StorageError | None]:
        """Store finished matches in ONE transaction, one durable commit (a group commit):
        each whole or not at all. What became of each, in order: None (stored, its commit
        returned) or the StorageError that kept it out, naming it.

        A match that cannot be stored (a record that is not JSON, a row SQLite refuses)
        does not take the others with it: its error names it, and the rest of the group is
        stored without it. An error of the file or of the commit (a full disk, a lock, the
        file deleted) is every match's of the group: none of them is stored (or, for a file
        lost after the commit, none is in the file at the path). Stored the same, byte for
        byte, as one at a time. (A group of one is :meth:`save_match`'s.)"""
        if len(matches) == 1:
            m = matches[0]
            try:
                self.save_match(tournament_id, match_id=m.match_id, index=m.index,
                                table=m.table, set_no=m.set_no, seed=m.seed, seats=m.seats,
                                record=m.record, started_at=m.started_at,
                                finished_at=m.finished_at)  # fmt: skip
            except StorageError as e:
                return [e]
            return [None]
        return self._save_group(tournament_id, matches)

    def _save_group(
        self, tournament_id: str, matches: Sequence[MatchToStore]
    ) -> list[StorageError | None]:
        """:meth:`save_matches`, one transaction for them all."""
        errors: list[StorageError | None] = [None] * len(matches)
        rows: list[tuple[int, _MatchRows]] = []
        for i, m in enumerate(matches):
            try:
                rows.append((i, _match_rows(tournament_id, m)))
            except StorageError as e:
                errors[i] = e
        while rows:
            at: int | None = None  # (the match being inserted; None: the commit)
            try:
                with self._guard(_storing(matches, rows)), self._tx() as c:
                    for k, (_, r) in enumerate(rows):
                        at = k
                        self._insert_match(c, r)
                    at = None
            except StorageError as e:
                cause = e.__cause__
                if at is None or len(rows) == 1 or not isinstance(cause, _ONE_MATCHS):
                    # (the file's or the commit's: a full disk, a lock, a file lost)
                    for i, _ in rows:
                        errors[i] = e
                    return errors
                # One match SQLite refused (rolled back with the group): it is said, naming
                # it, and the others are stored without it.
                i, r = rows.pop(at)
                errors[i] = _translate(cause, self.path, _storing(matches, [(i, r)]),
                                       self.resume, writing=True)  # fmt: skip
                continue
            return self._checked(errors, rows)
        return errors

    def _checked(
        self, errors: list[StorageError | None], rows: Sequence[tuple[int, _MatchRows]]
    ) -> list[StorageError | None]:
        """``errors`` with the :meth:`_still_at_its_path` check of the commit that stored
        ``rows`` (once a commit, not once a match): a file lost takes them all."""
        try:
            self._still_at_its_path()
        except StorageError as e:
            for i, _ in rows:
                errors[i] = e
        return errors

    @staticmethod
    def _insert_match(c: sqlite3.Connection, r: _MatchRows) -> None:
        """The rows of one match, in the caller's transaction."""
        # Rows of a match row deleted by hand without foreign keys (the sqlite3 shell's
        # default) would refuse these (UNIQUE) for ever: only such orphans can be here,
        # for if the match itself is stored the INSERT below fails and this rolls back.
        if c.execute(
            "SELECT 1 FROM match_players WHERE match_id = ? UNION ALL "
            "SELECT 1 FROM deals WHERE match_id = ? LIMIT 1",
            (r.match_id, r.match_id),
        ).fetchone():  # (two index lookups: the rest only when there are orphans)
            for orphans in ("match_players", "deals", "incidents"):
                c.execute(f"DELETE FROM {orphans} WHERE match_id = ?", (r.match_id,))
        c.execute(
            "INSERT INTO matches(id, tournament_id, idx, table_no, set_no, seed, seats_json,"
            " started_at, finished_at, duration_s, deals, record_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            r.match,
        )
        c.executemany(
            "INSERT INTO match_players(match_id, seat, bot, score, place, shortfall, forfeit)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            r.players,
        )
        c.executemany(
            "INSERT OR REPLACE INTO deals(match_id, number, dealer, declarer, bid, contract,"
            " made, conceded, deltas_json, scores_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
            r.deals,
        )
        if r.incidents:
            c.executemany(
                "INSERT INTO incidents(match_id, tournament_id, seat, bot, kind, deal, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                r.incidents,
            )

    def stored_state(self, tournament_id: str) -> tuple[int, int]:
        """How many matches of the tournament are stored, and where the latest of them is
        in the order matches were stored (SQLite's rowid; 0: none): with ``stored_after``
        below, what was stored since."""
        with self._guard("reading match results"):
            row = self.conn.execute(
                "SELECT COUNT(*), MAX(rowid) FROM matches WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
        return int(row[0]), int(row[1] or 0)

    def stored_at(self, position: int) -> tuple[str, str] | None:
        """The match stored at ``position`` (of :meth:`stored_state`): its id and when it
        finished, or None. SQLite gives a new row the highest rowid + 1: a match deleted
        by hand and stored again (a resume replays it) before anything else takes the very
        position it had, so only this tells the replay from the match read before."""
        with self._guard("reading match results"):
            row = self.conn.execute(
                "SELECT id, finished_at FROM matches WHERE rowid = ?", (position,)
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def match_results(
        self,
        tournament_id: str,
        last: int | None = None,
        *,
        stored_after: int = 0,
        bot: str | None = None,
        before: int | None = None,
        vs: str | None = None,
    ) -> list[MatchResult]:
        """Every stored match of the tournament, in schedule order; with ``last``, only the
        ``last`` latest in that order (read as such: a viewer shows 25 of 20,000); with
        ``stored_after`` (a position of :meth:`stored_state`), only those stored since; with
        ``bot``, only those it played (looked up by bot, not filtered from every match), and
        with ``vs`` too, only those both played; with ``before``, only those of a schedule
        index below it (a page of older ones)."""
        # Without ``last``: every match (LIMIT -1 is SQLite's "no limit").
        played = [b for b in (bot, vs) if b is not None]
        chosen = (
            "SELECT id, idx, seats_json, deals, duration_s FROM matches"
            " WHERE tournament_id = ? AND rowid > ?"
            + " AND id IN (SELECT match_id FROM match_players WHERE bot = ?)" * len(played)
            + ("" if before is None else " AND idx < ?")
            + " ORDER BY idx DESC LIMIT ?"
        )
        limit = -1 if last is None else max(0, last)
        args = (
            tournament_id,
            stored_after,
            *played,
            *(() if before is None else (before,)),
            limit,
        )
        with self._guard("reading match results"), self.reading():
            matches = self.conn.execute(f"SELECT * FROM ({chosen}) ORDER BY idx", args).fetchall()
            players: dict[str, list[sqlite3.Row]] = {}
            for r in self.conn.execute(
                f"SELECT p.* FROM match_players p JOIN ({chosen}) m ON m.id = p.match_id"
                " ORDER BY p.match_id, p.seat",
                args,
            ):
                players.setdefault(r["match_id"], []).append(r)
        out = []
        for m in matches:
            self._typed(m, _MATCH_TYPES, f"match {m['id']!r:.80}")
            seats = self._seats(m["seats_json"], m["id"])
            ps = players.get(m["id"], [])
            for p in ps:
                self._typed(p, _PLAYER_TYPES, f"match {m['id']}", "player ")
            if [p["seat"] for p in ps] != list(range(len(seats))):
                raise StorageError(
                    f"{self.path}: the stored players of match {m['id']} are damaged (seats "
                    f"{[p['seat'] for p in ps]!r:.60} for {len(seats)} bots); they were changed "
                    "outside the arena"
                )
            for p in ps:
                # A place outside 1..seats (edited by hand) was rated as it stood: -1 as a
                # better place than 1st, and the leaderboard said nothing.
                if not 1 <= p["place"] <= len(seats):
                    raise StorageError(
                        f"{self.path}: the stored place of seat {p['seat']} in match {m['id']} "
                        f"is damaged ({p['place']!r:.40}, not 1 to {len(seats)}); it was "
                        "changed outside the arena"
                    )
            out.append(
                MatchResult(
                    match_id=m["id"],
                    index=self._index(m["idx"], m["id"]),
                    seats=tuple(seats),
                    scores=tuple(p["score"] for p in ps),
                    places=tuple(p["place"] for p in ps),
                    forfeits=tuple(p["seat"] for p in ps if p["forfeit"]),
                    deals=m["deals"],
                    duration_s=m["duration_s"],
                )
            )
        return out

    def iter_records(
        self, tournament_id: str, *, stored_after: int = 0
    ) -> Generator[tuple[int, list[str], dict[str, Any]], None, None]:
        """``(index, seats, record)`` of every stored match of the tournament (with
        ``stored_after``, a position of :meth:`stored_state`: those stored since), in order.

        Rows are read a few at a time: a tournament's records together can be far larger
        than the statistics made from them (10,000 matches held about 400 MB at once).
        """
        with self._guard("reading match records"):
            cursor = self.conn.execute(
                "SELECT id, idx, seats_json, CAST(record_json AS BLOB) AS record_json"
                " FROM matches WHERE tournament_id = ? AND rowid > ?"
                " ORDER BY idx",
                (tournament_id, stored_after),
            )
        try:
            while True:
                with self._guard("reading match records"):
                    rows = cursor.fetchmany(_RECORDS_PER_READ)
                if not rows:
                    return
                for r in rows:
                    seats = self._seats(r["seats_json"], r["id"])
                    record = self._record(r["record_json"], r["id"])
                    yield self._index(r["idx"], r["id"]), seats, record
        finally:
            # Also when the caller stops early: an open cursor keeps SQLite's read snapshot.
            cursor.close()

    def load_record(self, match_id: str) -> dict[str, Any]:
        """The full record of a stored match (for ``arena replay MATCH_ID``)."""
        with self._guard(f"reading match {match_id}"):
            row = self.conn.execute(
                "SELECT CAST(record_json AS BLOB), seed, seats_json FROM matches WHERE id = ?",
                (match_id,),
            ).fetchone()
        if row is None:
            raise KeyError(match_id)
        record = self._record(row[0], match_id)
        # The row keeps the seed and seats the match was scheduled with: a record that
        # disagrees was edited (its cards would still replay: records carry them).
        seats = self._seats(row[2], match_id)
        for key, stored in (("seed", row[1]), ("players", seats)):
            if record.get(key) != stored:
                raise StorageError(
                    f"{self.path}: the stored record of match {match_id} is damaged (its "
                    f"{key} is {record.get(key)!r:.80}, the match was scheduled with "
                    f"{stored!r:.80}); it was changed outside the arena"
                )
        return record

    def find_match_ids(self, pattern: str) -> list[str]:
        """Match ids equal to ``pattern`` or ending with it (``m00012``)."""
        # The last len(pattern) characters of each id, compared (substr counts characters,
        # as Python does; the exact test is still Python's). A LIKE '%pattern' needed its
        # wildcards and escape character escaped, ignored ASCII case, and past 50,000
        # characters SQLite refused it ("LIKE or GLOB pattern too complex"): a database
        # error (the web's 500) for a reference that merely names no match.
        try:
            pattern.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8 (from argv): no id holds them
            return []  # (SQLite cannot even be asked: a traceback before)
        with self._guard("looking up matches"):
            rows = self.conn.execute(
                "SELECT id FROM matches WHERE id = ? OR substr(id, ?) = ? ORDER BY id",
                (pattern, -len(pattern), pattern),
            ).fetchall()
        return [str(r[0]) for r in rows if str(r[0]).endswith(pattern)]

    def time_limits(
        self, tournament_id: str, match_ids: Collection[str] | None = None
    ) -> dict[str, float]:
        """The stored matches of the tournament (``match_ids``: of those only) that a time
        limit ended (a tournament's ``match_timeout_s``): match id → the record's
        ``time_limit_s``. Only the records that name the key are parsed; every other is
        still searched for it, so a list of a few matches names them (the web's polled
        leaderboard searched every record of the tournament, 45 MB for 3,000 short
        matches, at each match stored)."""
        select = (
            "SELECT id, CASE WHEN instr(record_json, '\"time_limit_s\"') > 0"
            " AND json_valid(record_json) THEN json_extract(record_json, '$.time_limit_s')"
            " END FROM matches WHERE tournament_id = ?"
        )
        with self._guard("reading match results"), self.reading():
            if match_ids is None:
                rows = self.conn.execute(select, (tournament_id,)).fetchall()
            else:
                ids, rows = list(match_ids), []
                for i in range(0, len(ids), 500):  # (SQLite's limit on parameters)
                    part = ids[i : i + 500]
                    rows += self.conn.execute(
                        f"{select} AND id IN ({','.join('?' * len(part))})",
                        (tournament_id, *part),
                    ).fetchall()
        return {
            str(match_id): float(v)
            for match_id, v in rows
            if type(v) in (int, float) and math.isfinite(v) and v > 0
        }

    def incident_totals(
        self, tournament_id: str, match_ids: Collection[str]
    ) -> dict[str, dict[str, list[int]]]:
        """The per-seat totals of the incidents a referee lists only up to a limit
        (``engine.record.COUNTED_INCIDENTS``: ``wrong_requests``, ``disconnects``,
        ``bot_errors``) of those stored matches: match id → kind → one count per seat. The
        ``incidents`` table holds only the ones the record lists (the first 20 of a seat):
        ``arena replay --list`` said "20 bot_errors" of a match that had 26. A key that
        is missing or not a list of whole numbers is left out (an older record)."""
        paths = ", ".join(f"json_extract(record_json, '$.{key}')" for key, _ in COUNTED_INCIDENTS)
        select = (
            f"SELECT id, {paths} FROM matches WHERE tournament_id = ? AND json_valid(record_json)"
        )
        ids, rows = list(match_ids), []
        with self._guard("reading match results"), self.reading():
            for i in range(0, len(ids), 500):  # (SQLite's limit on parameters)
                part = ids[i : i + 500]
                rows += self.conn.execute(
                    f"{select} AND id IN ({','.join('?' * len(part))})", (tournament_id, *part)
                ).fetchall()
        totals: dict[str, dict[str, list[int]]] = {}
        for match_id, *values in rows:
            for (_, kind), text in zip(COUNTED_INCIDENTS, values, strict=True):
                try:
                    counts = json.loads(text) if isinstance(text, str) else None
                except ValueError:
                    counts = None
                if isinstance(counts, list) and all(type(c) is int for c in counts):
                    totals.setdefault(str(match_id), {})[kind] = counts
        return totals

    def incidents(self, tournament_id: str, bot: str | None = None) -> list[dict[str, Any]]:
        """The incidents of the tournament's stored matches (``bot``: of its seats only)."""
        with self._guard("reading incidents"):
            rows = [
                dict(r)
                for r in self.conn.execute(
                    "SELECT i.match_id, m.idx, i.seat, i.bot, i.kind, i.deal, i.detail"
                    " FROM incidents i JOIN matches m ON m.id = i.match_id"
                    " WHERE i.tournament_id = ?"
                    + ("" if bot is None else " AND i.bot = ?")
                    + " ORDER BY m.idx, i.id",
                    (tournament_id,) if bot is None else (tournament_id, bot),
                )
            ]
        for r in rows:  # a column of another type (a BLOB detail) was written by hand
            self._index(r["idx"], r["match_id"])
            self._typed(r, _INCIDENT_TYPES, f"match {r['match_id']}", "incident ")
        return rows

    def _index(self, idx: Any, match_id: str) -> int:
        """A match's schedule index (its order in the tournament) as read back."""
        if type(idx) is not int:
            raise StorageError(
                f"{self.path}: the stored index of match {match_id} is damaged "
                f"({_sql_type(idx)} {idx!r:.40}, not a whole number); it was changed outside "
                "the arena"
            )
        return idx

    # ----------------------------------------------------------------- ratings

    def save_ratings(
        self, tournament_id: str, history: Sequence[RatingPoint], *, finished: bool = False
    ) -> None:
        """Replace the rating history of the tournament (recomputed in schedule order);
        ``finished``: and mark the tournament finished (as :meth:`finish_tournament`), in
        the same transaction (one durable commit, not two)."""
        with self._guard("storing ratings"), self._tx() as c:
            c.execute("DELETE FROM ratings WHERE tournament_id = ?", (tournament_id,))
            c.executemany(
                "INSERT INTO ratings(tournament_id, idx, match_id, bot, mu, sigma)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(tournament_id, p.index, p.match_id, p.bot, p.mu, p.sigma) for p in history],
            )
            if finished:
                c.execute(
                    "UPDATE tournaments SET finished_at = ? WHERE id = ?", (_now(), tournament_id)
                )
        self._still_at_its_path()

    def rating_history(self, tournament_id: str) -> list[RatingPoint]:
        with self._guard("reading ratings"):
            return [
                RatingPoint(r["idx"], r["match_id"], r["bot"], r["mu"], r["sigma"])
                for r in self.conn.execute(
                    "SELECT * FROM ratings WHERE tournament_id = ? ORDER BY idx, bot",
                    (tournament_id,),
                )
            ]


def lock_path(db: Path) -> Path:
    """The lock file that keeps two tournament runs off database ``db`` (the runner holds
    an exclusive ``flock`` on it while it runs). Beside the file itself when ``db`` is a
    symbolic link (SQLite follows it, and keeps its -wal there too): a run through the link
    and one through the file's own name locked two files, and both ran on the database (a
    new `arena serve` marked the running one's tournament finished, or removed it while it
    had stored nothing, and its later matches were lost)."""
    with contextlib.suppress(OSError, RuntimeError):  # (RuntimeError: a loop, Python < 3.13)
        if db.is_symlink():
            db = db.resolve()
    return db.with_name(db.name + ".lock")


def lock_owner(db: Path) -> str | None:
    """The tournament whose runner (`arena tournament`, `arena serve --db`) holds ``db``'s
    lock now ("" when its lock file does not say), or None when none does."""
    try:
        with lock_path(Path(db)).open("rb") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return fh.read(1000).decode(errors="replace").strip().partition(" ")[2]
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except OSError:  # no lock file (nobody runs), or one we cannot read
        return None
    return None


def state_of(t: TournamentInfo, owner: str | None) -> str:
    """What a tournament is: "finished"; "running" (unfinished, and ``owner``, the
    database's :func:`lock_owner`, is its runner or does not say which); or "stopped"
    (unfinished, no runner at work on it: it may be resumed)."""
    if t.finished_at:
        return "finished"
    return "running" if owner in ("", t.id) else "stopped"


def newest_database(folder: Path = Path("runs")) -> Path | None:
    """The most recently written ``*.sqlite`` in ``folder`` (where tournaments store by default)
    that holds a tournament, else the most recently written one: regular files only (a
    directory or a dangling link of that name would be picked, and every reader would fail on
    it, beside a good database). (A first run that could not start leaves its database empty:
    as the newest it hid the one that holds the results, "holds no tournament".)"""
    found: list[tuple[float, Path]] = []
    for path in folder.glob("*.sqlite"):
        try:
            st = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((st.st_mtime, path))
    found.sort(reverse=True)
    return next((p for _, p in found if _holds_a_tournament(p)), found[0][1] if found else None)


def _holds_a_tournament(path: Path) -> bool:
    """Whether ``path`` has a tournament stored; a file that cannot be read as a database
    counts as one (the reader then says what is wrong with it, rather than another file
    being read in its place)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return True
    try:
        tables = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tournaments'"
        ).fetchall()
        return bool(tables) and bool(conn.execute("SELECT 1 FROM tournaments LIMIT 1").fetchall())
    except sqlite3.Error:
        return True
    finally:
        conn.close()


#: The largest record file ``arena replay`` reads (it is read whole, then parsed; a record
#: takes a few KiB a deal).
MAX_RECORD_FILE_BYTES = 1 << 30


def named_match(ref: str, ids: Sequence[str]) -> str | None:
    """The stored match a reference names, of the ids :meth:`Storage.find_match_ids` found
    for it: ``ref`` itself, else the one id ending with it (a unique suffix, ``m00012``);
    None for none, or for several (ambiguous). The one rule of `arena replay MATCH_ID`, its
    held-back note and `arena web`'s ``/api/matches/<ref>``.

    >>> named_match("m00012", ["cup-m00012"]), named_match("m1", ["a-m1", "b-m1"])
    ('cup-m00012', None)
    >>> named_match("a-m1", ["a-m1", "xa-m1"])
    'a-m1'
    """
    if ref in ids:
        return ref
    return ids[0] if len(ids) == 1 else None


def resolve_record(arg: str, db: Path | None) -> dict[str, Any]:
    """The record named by ``arg``: a record JSON file, or a match id stored in ``db``.

    A unique suffix of a match id (``m00012``) is enough. Raises ``LookupError`` with a
    message naming what was tried.
    """
    if not arg.strip():
        raise LookupError("an empty match id or file name: name a match (m00003) or a record")
    path = Path(arg)
    if path.is_dir():
        raise LookupError(f"{arg}: a directory, not a record file or a match id")
    if path.is_file():
        size = _size(path)
        too_large = f"{arg}: not a readable match record: too large to read into memory"
        if size is not None and size > MAX_RECORD_FILE_BYTES:  # (a disk image, say)
            raise LookupError(f"{too_large} ({size:,} bytes; at most {MAX_RECORD_FILE_BYTES:,})")
        if holds_database(path):  # (it said "can't decode")
            raise LookupError(
                f"{arg}: a database, not a record file: `arena replay --db {arg} "
                "MATCH_ID` shows one of its matches (`--list` lists them)"
            )
        try:
            text = path.read_text(encoding="utf-8")
            if not text.strip():  # (json said "Expecting value: line 1 column 1 (char 0)")
                raise ValueError("the file is empty" + (" (whitespace only)" if text else ""))
            data = _jsonl_record(text) if path.suffix == ".jsonl" else json.loads(text)
        except (OSError, ValueError, RecursionError) as e:
            cut = f"{_CUT_SHORT}; " if _ends_early(e) else ""
            raise LookupError(f"{arg}: not a readable match record: {cut}{e}") from e
        except MemoryError:  # read whole: a MemoryError traceback
            raise LookupError(too_large + (f" ({size:,} bytes)" if size else "")) from None
        if not isinstance(data, dict):
            raise LookupError(f"{arg}: a match record is a JSON object")
        return data
    # (a FIFO, a device, a link to nowhere: "no such file" would say nothing is there)
    what = "no such file"
    if path.is_symlink() and not path.exists():
        what = "a link to a file that does not exist"
    elif path.exists():
        what = "not a regular file (a FIFO, device or socket)"
    if db is None or not Path(db).exists():
        raise LookupError(f"{arg}: {what}, and no database at {db} to look the match up")
    with Storage.open_readonly(db) as st:
        ids = st.find_match_ids(arg)
        match_id = named_match(arg, ids)
        if not ids:
            # (a database a run made but stored nothing in: "no stored match with this id"
            # sent the reader looking for a mistyped id; `--list` says it holds none)
            none = "" if st.latest_tournament() is not None else ": it holds no tournament"
            raise LookupError(f"{arg}: {what}, and no stored match with this id in {db}{none}")
        if match_id is None:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            raise LookupError(f"{arg}: ambiguous, {len(ids)} matches in {db}: {shown}")
        return st.load_record(match_id)


# --------------------------------------------------------------------- helpers


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


#: What a record file that ends before its JSON does is: JSON's own words ("Expecting
#: value: line 1 column 1913") did not say the file was cut, the likely cause.
_CUT_SHORT = (
    "the file ends before the record does (cut short: a copy or download that stopped, a full disk)"
)


def _ends_early(e: BaseException) -> bool:
    """Whether a record file's read or parse failed because the file stops too soon: in the
    middle of a character (a suit is 3 bytes of UTF-8), a string or a value."""
    if isinstance(e, UnicodeDecodeError):
        return e.reason == "unexpected end of data" and e.end >= len(e.object)
    if isinstance(e, json.JSONDecodeError):
        # (a JSON string only goes unterminated at the end: a raw newline in one is
        # "Invalid control character")
        return e.msg.startswith("Unterminated string") or e.pos >= len(e.doc.rstrip())
    return False


def _jsonl_record(text: str) -> Any:
    """The record in a referee's ``<match_id>.jsonl`` (``arena serve --record-dir``): that of
    its last ``end`` or ``interrupted`` line (a file holds one match)."""
    found: Any = None
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as e:
            if n == len(lines) and not text.endswith("\n"):
                raise ValueError(
                    f"line {n}: the file ends in the middle of a line (cut short: its disk "
                    "was full, or the referee was killed while writing it); no 'end' or "
                    "'interrupted' line"
                ) from None
            raise ValueError(f"line {n}: {e}") from None
        if isinstance(entry, dict) and entry.get("type") in ("end", "interrupted"):
            found = entry.get("record")
    if found is None:
        # (a spectator replaying the file of a match still being played met "was not over
        # when written", as if the file were final)
        raise ValueError(
            "no 'end' or 'interrupted' line: the match is still being played (replay it once "
            "it has ended), or its referee stopped without writing its end (killed, a full disk)"
        )
    return found


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


#: SQLite's lock bytes on a database file (its unix VFS): a writer that would take the file
#: for itself (the last connection closing, to copy its log in) locks this range for writing.
_SQLITE_SHARED_FIRST = 0x40000000 + 2
_SQLITE_SHARED_SIZE = 510


def _hold_off_writers(path: Path, opened: tuple[int, int] | None) -> int | None:
    """A descriptor of the file at ``path`` (if it is still the one ``opened``) holding a
    read lock on SQLite's shared bytes, which keeps a connection of this process closing
    from taking the file for itself; None where it cannot (not Linux, another file there).

    The lock is an open file description's (Linux): a classic POSIX lock would be this
    process's, as SQLite's are, and hold nothing against them."""
    ofd = getattr(fcntl, "F_OFD_SETLK", None)
    if ofd is None or opened is None or struct.calcsize("P") != 8:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != opened or not stat.S_ISREG(st.st_mode):
            raise OSError("another file")
        flock = struct.pack(
            "hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, _SQLITE_SHARED_FIRST, _SQLITE_SHARED_SIZE, 0
        )
        fcntl.fcntl(fd, ofd, flock)
    except OSError:
        os.close(fd)
        return None
    return fd


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t)) + f".{int(t % 1 * 1000):03d}"


def _int_list(value: Any, n: int, what: str) -> list[int]:
    if not isinstance(value, list) or len(value) != n:
        raise StorageError(f"match record has no valid {what} for {n} players: {value!r}")
    return [int(v) for v in value]


def _little_room(path: Path) -> bool:
    """Whether the file system of ``path`` has less than 1 MiB left for its user: an I/O
    error there is most likely the want of room."""
    for where in (path, path.parent):
        try:
            st = os.statvfs(where)
        except (OSError, ValueError):
            continue
        return st.f_bavail * st.f_frsize < 1 << 20
    return False


def _file_size_limit_reached(path: Path) -> tuple[int, Path] | None:
    """This process's file size limit (RLIMIT_FSIZE, in bytes) and the file of the database
    (it, its ``-wal`` or ``-journal``) that is within a write of it (a write that failed
    there met it), else None."""
    try:
        import resource
    except ImportError:  # (not POSIX)
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY:
        return None
    for f in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-journal")):
        size = _size(f)
        if size is not None and size + (1 << 16) >= soft:  # (a WAL frame is a page + 24)
            return int(soft), f
    return None


def _remove_empty_logs(made: Sequence[Path]) -> None:
    """Remove the ``-wal`` and ``-shm`` that a read-only connection to a damaged database
    (its header says WAL, its pages are cut or garbled) made beside it before SQLite found
    the damage: a reader that refused the file left two files there. Kept when the log is
    not empty: a writer (a run on the same file) has used it since."""
    wal = [f for f in made if f.name.endswith("-wal")]
    with contextlib.suppress(OSError):
        if any(f.exists() and f.stat().st_size > 0 for f in wal):
            return
    for f in made:
        with contextlib.suppress(OSError):
            f.unlink()


def _reads_its_log(uri: str, timeout: float) -> bool:
    """Whether a read-only connection to ``uri``, in a directory this user cannot write,
    reads the database with its write-ahead log: it can where the ``-wal`` and ``-shm`` of a
    writer (a running or killed tournament) are there to be read. Opened as immutable
    instead, it read the file alone: `arena leaderboard --list` (and `arena web`) from a
    read-only mount of a running tournament's directory, or as another user, said "no
    tournament" of one with 16 matches stored, and after a `kill -9` every match since the
    last checkpoint was missing. Only where they are not (no writer: the file is all there
    is) is immutable needed, SQLite being unable to make them."""
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=timeout)) as c:
            c.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return True
    except sqlite3.Error:
        return False


def _unwritable(path: Path) -> Path | None:
    """The first of the database ``path``, its ``-wal`` and its ``-shm`` that is there and
    this user may not write (a read-only mount is said as such where SQLite meets it)."""
    for f in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
        if f.exists() and not os.access(f, os.W_OK) and not _on_read_only_storage(f):
            return f
    return None


def _on_read_only_storage(path: Path) -> bool:
    """Whether ``path`` (or, not there yet, its directory) is on a file system mounted
    read-only: a database there can be read, but not written, nor its -wal and -shm made."""
    for where in (path, path.parent):
        try:
            return bool(os.statvfs(where).f_flag & os.ST_RDONLY)
        except (OSError, ValueError):
            continue
    return False


def _translate(
    e: sqlite3.Error, path: Path, what: str, resume: str = _RESUME, *, writing: bool = False
) -> StorageError:
    """The user's words for a sqlite3 error met while `what`; `resume` is the advice for
    going on once the cause is gone (the storage's own: the runner's or serve's)."""
    code = getattr(e, "sqlite_errorcode", None)
    text = str(e).lower()
    base = code & 0xFF if isinstance(code, int) else None
    if base in (5, 6) or "locked" in text or "busy" in text:
        return StorageLockedError(
            f"{path} is locked by another process while {what} (another tournament, or a "
            "program holding a write transaction on it: the arena's readers only read). "
            "Nothing stored was lost; try again when it is done, or use another --db file"
        )
    # A file-size limit (`ulimit -f`, RLIMIT_FSIZE: a batch system's, a container's) stops a
    # write as a full disk would, but SQLite says only "disk I/O error" of it (EFBIG), or
    # "database or disk is full" of the write it cut short: said as what it is, not a disk.
    at_limit = _file_size_limit_reached(path) if base in (10, 13) else None
    if at_limit is not None:
        limit, grown = at_limit
        return StorageError(
            f"{path if grown == path else f'{path}: {grown.name}'} reached this process's "
            f"file size limit ({limit} bytes: `ulimit -f`) while {what}. Everything stored "
            f"before is kept; raise the limit (`ulimit -f unlimited`) and {resume}"
        )
    # SQLite says "disk I/O error" of a write that found no room where it is not a write
    # of the database's pages (its -shm index growing, on tmpfs among others).
    if base == 13 or "full" in text or (base == 10 and _little_room(path)):
        return StorageFullError(
            f"{path}: the disk is full while {what}. Everything stored before is kept; free "
            f"some space and {resume}"
        )
    if base == 8 or "readonly" in text:
        return StorageError(f"{path} is read-only ({what}): use a writable --db path")
    # A write refused by the file system while the run plays (SQLite: "disk I/O error"): the
    # file made `chattr +i`, or the file system remounted read-only (as Linux does on disk
    # errors); everything stored before is kept.
    refused = writing and base == 10
    blocked = _unwritable(path) if refused else None
    if blocked is not None or (refused and _on_read_only_storage(path)):
        where = f"{blocked} can no longer be written" if blocked is not None else (
            f"{path} is on a file system that is read-only now")  # fmt: skip
        return StorageError(
            f"{where} ({what}). Everything stored before is kept; make it writable and {resume}"
        )
    if base == 14 or "unable to open" in text:
        if _on_read_only_storage(path):  # (SQLite says only "unable to open")
            return StorageError(
                f"{path} is on a read-only file system ({what}): use a writable --db path "
                "(arena leaderboard, replay and web read it where it is)"
            )
        return StorageError(f"cannot open {path} ({what}): check the path and permissions")
    if base in (11, 26) or "not a database" in text or "malformed" in text:
        # (SQLite's words tell a file that is no database from a damaged one: "file is not
        # a database", "database disk image is malformed")
        return StorageError(
            f'{path} is not a Thousand Arena database or is damaged ({what}: SQLite says "{e}")'
        )
    if "no such table" in text:  # a read-only viewer that skipped Storage's own check
        return StorageError(f"{path} is not a Thousand Arena database ({e}; {what})")
    return StorageError(f"{path}: database error while {what}: {e}")
