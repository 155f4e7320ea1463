"""``arena serve``: run the referee with a lobby that seats connected bots into matches."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import math
import os
import secrets
import shlex
import stat
import sys
import tempfile
import time
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from arena.cli.options import (
    Host,
    NonEmptyPath,
    Seconds,
    check_grpc_environment,
    in_clear_note,
    no_cap_note,
    no_directory,
    raise_open_files_limit,
    table_size_note,
)
from arena.deadlines import DEFAULT_TIME_BANK_MS, MAX_DEADLINE_MS
from arena.protocol import MIN_TOKEN, token_problem, weak_token
from arena.referee import Lobby, Referee, RefereeConfig, TLSConfig, start_server
from arena.referee.config import (
    MAX_STRIKES,
    cert_expired_problem,
    cert_names,
    key_pair_problem,
    loopback_only_note,
    names_not_reaching,
    pem_problem,
)
from arena.referee.lobby import FinishedMatch
from arena.referee.server import host_port, port_problem
from arena.render import printable
from arena.stopping import ignore_stop_signals, stop_signals
from arena.tournament.config import (
    BOT_NAME_RE,
    BOT_NAME_RULE,
    CONFIG_KEYS,
    error_key,
    holds_tokens,
)
from engine import RulesetError, load_ruleset
from engine.rules import TomlFileError, describe_ruleset, did_you_mean, read_toml_file

__all__ = ["load_tokens", "read_tokens_file", "serve", "tables_possible"]

#: What the storage's errors advise under `arena serve` (its own words: a tournament's
#: "run the same command again to resume" would be wrong, a new serve is a new tournament).
SERVE_RESUME = "start arena serve again to store results again (a new tournament)"


class _Results:
    """``--db``: every finished match of the lobby stored as a match of one tournament
    (``serve-<start>``; independent deals, so nothing is held back from `arena web`), on one
    storage thread as the tournament runner does; the database is locked as a runner locks
    it. A match that cannot be stored is said and skipped: its record stays in the record
    directory."""

    def __init__(self, db: Path, storage: Any, lock: Any, config: dict[str, Any],
                 bots: list[tuple[str, str]]) -> None:  # fmt: skip
        self.db = db
        self.tid = ""
        self.name = "serve"  # (--name: the tournament is <name>-<start time>-<hex>)
        self._storage = storage
        self._lock = lock
        self._config = config
        self._bots = bots
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-storage")
        #: Finished matches that could not be stored (their records are in the directory).
        self.lost = 0
        #: No match was stored: the tournament was removed again at the end.
        self.empty = False
        #: The tournament is registered, and not yet finished (see :meth:`close`).
        self._open = False
        #: The database file was made by this run (so ``close`` removes it when ``empty``).
        self.made = False
        #: Where it was made: the file itself, not a symbolic link to it that was there.
        self._made_at = db
        #: The directories made for it, outermost first (removed with it, when empty).
        self._made_dirs: list[Path] = []

    @classmethod
    def open(cls, db: Path, rs: Any, tokens: dict[str, str], max_matches: int | None) -> _Results:
        from arena.storage import Storage, StorageError, make_directory_of
        from arena.tournament.runner import DatabaseLock

        lock = DatabaseLock(db)
        try:
            made_dirs = make_directory_of(db)
            lock.acquire()
            made = not db.exists()  # (under the lock: no other writer makes it meanwhile)
            # (a new `arena serve` is a new tournament: the storage's errors must not say
            # that running it again resumes this one)
            storage = Storage(db, resume=SERVE_RESUME)
            try:  # (a read-only file, -wal or -shm; a write lock held: before listening)
                storage.check_writable()
            except StorageError:
                storage.close()
                raise
        except (OSError, StorageError) as e:
            with contextlib.suppress(OSError):  # (a full disk refuses the unlock's write too)
                lock.release()
            why = e if isinstance(e, StorageError) else f"{e.filename or db}: {e.strerror or e}"
            raise click.BadParameter(str(why), param_hint="--db") from e
        config = {"kind": "serve", "ruleset": rs.to_dict(), "deals": "independent",
                  "max_matches": max_matches}  # fmt: skip
        results = cls(db, storage, lock, config, [(name, "serve") for name in tokens])
        results.made = made
        results._made_dirs = made_dirs
        with contextlib.suppress(OSError, RuntimeError):  # (a loop: the file was not made)
            results._made_at = db.resolve()
        return results

    def start(self, stamp: str) -> str:
        """Register the tournament ``<name>-<stamp>`` (``name``: ``--name``); its id."""
        from arena.storage import StorageError

        self.tid = f"{self.name}-{stamp}"
        with contextlib.suppress(OSError):
            self._lock.name(self.tid)
        try:
            self._close_dead_runs()
        except StorageError as e:
            raise click.ClickException(f"--db {self.db}: {e}") from e
        try:
            self._storage.ensure_tournament(
                self.tid, name=self.name, fingerprint=self.tid, config=self._config,
                total_matches=self._config["max_matches"] or 0, bots=self._bots,
            )  # fmt: skip
        except StorageError as e:
            raise click.ClickException(f"--db {self.db}: {e}") from e
        self._open = True
        return self.tid

    def _close_dead_runs(self) -> None:
        """Mark finished the serve tournaments an earlier `arena serve` left unfinished: it
        held this database's lock while it ran, and we hold it now, so it ended without
        finishing them (SIGKILL, a crash, the machine down). Left as they were, they showed
        as ``not finished`` for ever, like a running arena's; one that stored nothing was
        the latest, the one the leaderboard, replay and web show by default, once a later
        run stored nothing either. Each is said."""
        for info in self._storage.tournaments():
            if info.finished_at is not None or info.config.get("kind") != "serve":
                continue
            if info.completed == 0:
                self._storage.delete_tournament(info.id)
                done = "removed (no match stored)"
            else:
                self._storage.finish_tournament(info.id, total=info.completed)
                done = f"marked finished with its {info.completed} match(es)"
            click.echo(printable(
                f"note: {self.db}: tournament {info.id} was left unfinished (its arena "
                f"stopped without ending: killed, or its machine went down): {done}"
            ), err=True)  # fmt: skip

    async def store(self, m: FinishedMatch) -> None:
        from arena.storage import StorageError

        if self._storage.file_lost:  # (said when it was found: it would go to the lost file)
            self.lost += 1
            return
        save = functools.partial(
            self._storage.save_match, self.tid, match_id=m.match_id, index=m.k, table=0,
            set_no=m.k, seed=m.seed, seats=m.seats, record=m.record,
            started_at=m.started_at, finished_at=m.finished_at,
        )  # fmt: skip
        fut = asyncio.get_running_loop().run_in_executor(self._io, save)
        try:
            await asyncio.shield(fut)  # (a stop does not cut a save in the middle)
        except StorageError as e:
            if self._storage.file_lost:
                # This match is in what was written back (said, with where), if that worked.
                # SQLite would write every later one into the deleted file, and the run end
                # "stored" (70 matches of 131 lost, one counted, in a test run).
                if self._storage.written_back is None:
                    self.lost += 1
                log.error("no match after %s is stored in %s: the arena plays on, and each "
                          "match keeps its record file; start arena serve again to store "
                          "results again (a new tournament)", m.match_id, self.db)  # fmt: skip
                return
            self.lost += 1
            # (Not the storage's advice to run the command again: a new `arena serve` is a
            # new tournament.)
            log.error("match %s is not stored in %s (%s); its record is in the record "
                      "directory", m.match_id, self.db, str(e).split(". ")[0])  # fmt: skip

    async def add_bots(self, names: list[str]) -> None:
        """List bots added to the tokens file while the arena runs among the tournament's
        (a failure is said: their matches are stored all the same)."""
        from arena.storage import StorageError

        if self._storage.file_lost or not self._open:
            return
        add = functools.partial(self._storage.add_tournament_bots, self.tid,
                                [(name, "serve") for name in names])  # fmt: skip
        try:
            await asyncio.get_running_loop().run_in_executor(self._io, add)
        except StorageError as e:
            log.error("bots %s are not listed in %s (%s); their matches are stored",
                      ", ".join(names), self.db, str(e).split(". ")[0])  # fmt: skip

    def finish(self) -> bool:
        """The lobby is done: mark the tournament finished, with the matches stored (or
        remove it if none was: ``empty``); whether it could be (else said, and ``lost``
        counts one more)."""
        from arena.storage import StorageError

        self._open = False
        self._io.shutdown(wait=True)
        if self._storage.file_lost:  # (not the file at the path: said already)
            log.error("%d finished match(es) are not in %s: their records are in the record "
                      "directory", self.lost, self.db)  # fmt: skip
            return False
        try:
            info = self._storage.tournament(self.tid)
            if info is not None and info.completed == 0 and not self.lost:
                # A run that stored nothing leaves nothing: an empty tournament would be the
                # latest, the one leaderboard, replay and web show by default, hiding the
                # results of the runs before it.
                self._storage.delete_tournament(self.tid)
                self.empty = True
            elif info is not None:
                self._storage.finish_tournament(self.tid, total=info.completed)
        except StorageError as e:
            self.lost += 1
            log.error("tournament %s could not be marked finished in %s (%s)", self.tid,
                      self.db, str(e).split(". ")[0])  # fmt: skip
            return False
        if self.lost:
            log.error("%d finished match(es) are not in %s: their records are in the record "
                      "directory", self.lost, self.db)  # fmt: skip
        return True

    def close(self) -> None:
        """Close the database and its lock; a tournament not finished yet is finished first
        (the serve ended before its end: it could not listen, say), so that an empty one is
        not left as the latest, nor found by the next serve as one an arena killed left."""
        if self._open:
            with contextlib.suppress(Exception):  # (the error that ended the serve is said)
                self.finish()
        self._io.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self._storage.close()
        if self.made and (self.empty or not self.tid):
            # "no match stored: ... is left as it was": a database this run made, holding
            # nothing (or made before the arena could start: a busy port), is removed
            # (while the lock is held), as it was not there before.
            # (A dangling link named by --db: the file made at its target, not the link.)
            made = self._made_at
            for path in (made, *(made.with_name(made.name + s) for s in
                                 ("-wal", "-shm", "-journal"))):  # fmt: skip
                with contextlib.suppress(OSError):
                    path.unlink()
        with contextlib.suppress(OSError):
            self._lock.release()
        if self.made and (self.empty or not self.tid):
            # (after the lock's file is gone: `--db runs/x.sqlite` left an empty runs/)
            from arena.storage import remove_empty

            remove_empty(self._made_dirs)


log = logging.getLogger("arena.referee")


def load_tokens(path: Path) -> dict[str, str]:
    """Bot name -> token from a TOML file's ``[bots]`` table (``name = "token"``)."""
    return read_tokens_file(path)[0]


def _another_kind_of_file(data: dict[str, Any]) -> str | None:
    """What the file given as ``--tokens`` is, when it is another of the product's: a
    ruleset file (it sets ``preset``) or a tournament config (its keys, or a ``[bots]``
    table of tables). Each was told of its first key alone ("name: unknown key", "bots.pimc:
    the token must be a non-empty string"), which sent the organiser to edit the file."""
    bots = data.get("bots")
    if "preset" in data and bots is None:
        return ("this is a ruleset file (it sets preset), not a tokens file: give it as "
                "--ruleset, and the bots' tokens as --tokens")  # fmt: skip
    tables = isinstance(bots, dict) and any(isinstance(v, dict) for v in bots.values())
    # (a config's key beside a [bots] of tokens is a tokens file with a key too many, `port =
    # 50051` meant for `arena serve --port`: said as an unknown key, not as a config)
    if tables or ((data.keys() - {"bots", "members"}) & CONFIG_KEYS and not holds_tokens(bots)):
        return ("this is a tournament config (`arena tournament --config` runs it), not a "
                'tokens file: --tokens takes a [bots] table of name = "token"')  # fmt: skip
    return None


def read_tokens_file(
    path: Path, *, empty_ok: bool = False, known: Collection[str] = ()
) -> tuple[dict[str, str], dict[str, str]]:
    """A tokens file: bot name -> token (its ``[bots]`` table), and bot -> its member (its
    optional ``[members]`` table, ``member = ["bot", ...]``: the bots of one person, never
    seated at one table; a bot listed in no member is a member of its own). ``empty_ok``
    (the file read again while the arena runs): a ``[bots]`` table with no bot in it is
    taken (every bot removed); a file without one is refused all the same. ``known``: the
    bots read before (the file read again): a ``[members]`` entry naming one of them that
    ``[bots]`` no longer lists is left out, not refused. An organiser who removed a bot, or
    emptied ``[bots]`` to let no bot in, and left its member's line as it was had the file
    refused: the bots it removed kept their tokens, a cheater's among them. A name never
    read in ``[bots]`` (a typo) is refused as at the start."""

    def bad(message: str) -> click.BadParameter:
        return click.BadParameter(message, param_hint="--tokens")

    try:
        data = read_toml_file(path)
    except TomlFileError as e:
        raise bad(f"{path}: {e}") from None
    other = _another_kind_of_file(data)
    if other is not None:
        raise bad(f"{path}: {other}")
    for key in data:
        if key not in ("bots", "members"):
            raise bad(f"{path}: {key}: unknown key{did_you_mean(key, ['bots', 'members'])}; "
                      "the file holds a [bots] table (and a [members] table)")  # fmt: skip
    bots = data.get("bots")
    if not isinstance(bots, dict) or not (bots or empty_ok):
        raise bad(f'{path}: expected a [bots] table of name = "token"')
    out: dict[str, str] = {}
    owner: dict[str, str] = {}  # token -> the first bot that has it
    for name, token in bots.items():
        if not BOT_NAME_RE.match(name):
            # Names reach logs, records and people's terminals: no control characters.
            raise bad(f"{path}: {error_key('bots', name)}: {BOT_NAME_RULE}")
        # (each key as a config's errors write it: bots."v1.2", not bots.v1.2, the key
        # "2" of a bot "v1")
        key = error_key("bots", name)
        if not isinstance(token, str) or not token:
            raise bad(f"{path}: {key}: the token must be a non-empty string")
        problem = token_problem(token)
        if problem is not None:  # no bot could ever present it
            raise bad(f"{path}: {key}: {problem}")
        if token in owner:
            raise bad(f"{path}: {key}: the same token as {error_key('bots', owner[token])} "
                      "(each bot needs a token of its own)")  # fmt: skip
        owner[token] = name
        out[name] = token
    members = data.get("members", {})
    if not isinstance(members, dict):
        raise bad(f'{path}: expected a [members] table of member = ["bot", ...]')
    member_of: dict[str, str] = {}
    for member, listed in members.items():
        if not BOT_NAME_RE.match(member):
            raise bad(f"{path}: {error_key('members', member)}: {BOT_NAME_RULE}")
        at = error_key("members", member)
        if (not isinstance(listed, list) or not listed
                or not all(isinstance(b, str) for b in listed)):  # fmt: skip
            raise bad(f'{path}: {at}: expected a list of its bots ["bot", ...]')
        for bot in listed:
            if bot not in out and bot in known:  # (removed from [bots]: it has no member)
                continue
            if bot not in out:
                raise bad(printable(f"{path}: {at}: {bot!r} is no bot of [bots]"
                                    f"{did_you_mean(bot, list(out))}"))  # fmt: skip
            if bot in member_of:
                raise bad(f"{path}: {at}: {bot} is a bot of "
                          f"{error_key('members', member_of[bot])} too (a bot has one "
                          "member)")  # fmt: skip
            member_of[bot] = member
    return out, member_of


def tables_possible(tokens: dict[str, str], members: dict[str, str]) -> int:
    """How many players of distinct members ``tokens`` lists (a bot of no member counts
    alone): the most one table may seat."""
    return len({("member", members[b]) if b in members else ("bot", b) for b in tokens})


#: How often (s) `arena serve` looks whether its tokens file changed. A change is read
#: once the file has looked the same at two looks in a row: an editor's save, or a
#: script writing it, is then done, and half a file is not taken for one that removes bots.
TOKENS_POLL_S = 0.5


class _TokensWatch:
    """The tokens file, read again whenever it changes while the arena runs: a bot removed
    from it is refused from then on (its seats in running matches forfeit at once), one
    added may connect, one whose token changed must use the new one. A file that cannot be
    read, or no longer holds a valid ``[bots]`` table, changes nothing: the error is
    logged, and the bots read before stay as they were until the file is fixed."""

    def __init__(self, path: Path, tokens: dict[str, str], lobby: Lobby,
                 results: _Results | None) -> None:  # fmt: skip
        self.path = path
        self.tokens = dict(tokens)
        #: Every bot the file has listed (see read_tokens_file's ``known``).
        self._known = set(tokens)
        self._lobby = lobby
        self._referee = lobby.referee
        self._results = results
        self._seen = self._look()  # (as it was read at the start)
        self._pending: object = self._seen
        #: How many members' bots the file listed when it was last said to be too few for a
        #: table (None: enough, as at the start): said again only when that changes, not
        #: at every edit of the file.
        self._short: int | None = None

    def _look(self) -> object:
        """What tells a change of the file: its inode, size and time of change, or why it
        cannot be looked at."""
        try:
            st = os.stat(self.path)
        except OSError as e:
            return f"{self.path}: {e.strerror or e}"
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TOKENS_POLL_S)
            await self.poll()

    async def poll(self) -> None:
        seen = self._look()
        if seen == self._seen:
            self._pending = seen
            return
        if seen != self._pending:  # still being written, maybe: look again first
            self._pending = seen
            return
        self._seen = seen
        kept = f"the {len(self.tokens)} bot(s) read before are kept until it is fixed"
        if isinstance(seen, str):
            log.error("tokens file %s; %s", printable(seen), kept)
            return
        try:
            # A `[bots]` table emptied is every bot removed (the organiser's way to let no
            # bot in and stop no running serve), its `[members]` left as it was or not; a
            # file without one is refused as before: truncated, or being rewritten, it
            # removed everyone.
            tokens, members = read_tokens_file(self.path, empty_ok=True, known=self._known)
        except click.BadParameter as e:
            log.error("tokens file changed, not taken: %s; %s", printable(e.message),
                      kept)  # fmt: skip
            return
        self._known.update(tokens)
        if members != self._lobby.members:  # (before a bot added is seated)
            self._lobby.members = members
            log.warning("tokens file %s: [members] changed: %s", self.path,
                        printable(_members_said(members)))  # fmt: skip
        players = self._lobby.ruleset.players
        possible = tables_possible(tokens, members)
        if possible < players and possible != self._short:
            log.warning("tokens file %s lists %s: no match starts until there are %d (the "
                        "running ones go on)", self.path,
                        f"bots of {possible} member(s)" if tokens else "no bot",
                        players)  # fmt: skip
        elif possible >= players and self._short is not None:
            log.warning("tokens file %s lists bots of %d members again: matches may start",
                        self.path, possible)  # fmt: skip
        self._short = possible if possible < players else None
        if tokens == self.tokens:
            return
        added, removed, changed = self._referee.update_bots(
            tokens, "bot {name!r} was removed from the arena's tokens file"
        )
        self.tokens = tokens
        for name, matches in removed.items():
            forfeits = (f"; it forfeits its seat in {', '.join(matches)} (played out for it)"
                        if matches else "")  # fmt: skip
            log.warning("tokens file %s: bot %s removed: its token is refused from now "
                        "on%s", self.path, name, forfeits)  # fmt: skip
        for name in changed:
            log.warning("tokens file %s: bot %s has a new token: the old one is refused from "
                        "now on", self.path, name)  # fmt: skip
        for name in added:
            # (a bot renamed in [bots] and not in [members] left its member's entry, which
            # is dropped: it is a member of its own, and may sit beside its owner's others)
            alone = (" (in no [members] entry: a member of its own, which may sit at a table "
                     "with any bot)" if members and name not in members else "")  # fmt: skip
            log.warning("tokens file %s: bot %s added: it may connect now%s", self.path, name,
                        alone)  # fmt: skip
        weak = [n for n in added + changed if weak_token(tokens[n])]
        if weak:
            named = ", ".join(error_key("bots", n) for n in weak)
            log.warning("tokens file %s: %s: a token shorter than %d characters is easy to "
                        "guess", self.path, named, MIN_TOKEN)  # fmt: skip
        if self._results is not None and added:
            await self._results.add_bots(added)


#: How often at most (s) `arena serve` says whom it waits for while no match can start:
#: without -v it said nothing until a match started, and an organiser could not tell a
#: bot that never came from an arena that was stuck.
WAITING_NOTE_S = 30.0
#: The names a waiting line lists of each kind; the rest are counted.
_WAITING_NAMED = 12


async def _say_waiting(lobby: Lobby, every: float = WAITING_NOTE_S, look: float = 1.0) -> None:
    """While no match can start (:meth:`Lobby.waiting_for_bots`), a line saying which bots
    are connected and which are awaited: when that changes, at most every ``every`` s
    (and at once the first time, and the first time after matches were played); looked
    at every ``look`` s."""
    referee = lobby.referee
    loop = asyncio.get_running_loop()
    said: object = None
    last = -math.inf
    while True:
        if not lobby.waiting_for_bots():
            said = None  # (matches were played: the next wait is said as it starts)
        else:
            active = referee.active_bots()
            connected = [b for b in referee.connected_bots() if b in active]
            state = (tuple(connected), tuple(active))
            if state != said and (said is None or loop.time() - last >= every):
                awaited = [b for b in active if b not in connected]
                # Two bots of one member never share a table ([members]): "3 connected;
                # awaited: none" did not say why no match started.
                of = tables_possible(dict.fromkeys(connected, ""), lobby.members)
                members = (
                    f" (of {of} member{'' if of == 1 else 's'})" if of < len(connected) else ""
                )
                log.warning("waiting for bots (a match seats %d): %d connected%s%s; awaited%s",
                            lobby.ruleset.players, len(connected), members, _named(connected),
                            _named(awaited) if awaited else ": none")  # fmt: skip
                said, last = state, loop.time()
        await asyncio.sleep(look)


def _named(bots: list[str]) -> str:
    """``: a, b, c`` (the first few of ``bots``, the rest counted), or ``""`` for none."""
    if not bots:
        return ""
    more = len(bots) - _WAITING_NAMED
    return (
        ": "
        + printable(", ".join(bots[:_WAITING_NAMED]))
        + (f" and {more} more" if more > 0 else "")
    )


def _members_said(members: dict[str, str]) -> str:
    """``[members]`` in a line: ``alice (alice-v1, alice-v2); bob (bob-a, bob-b)``."""
    of: dict[str, list[str]] = {}
    for bot, member in members.items():
        of.setdefault(member, []).append(bot)
    return "; ".join(f"{m} ({', '.join(bots)})" for m, bots in of.items()) or "none"


def _readable_by_others(path: Path) -> str | None:
    """Who besides its owner may read ``path`` ("every user of this machine", "the users of
    its group"), or ``None``."""
    try:
        mode = path.stat().st_mode
    except OSError:  # (read a moment ago: gone since, the read said what it could)
        return None
    if mode & stat.S_IROTH:
        return "every user of this machine"
    if mode & stat.S_IRGRP:
        return "the users of its group"
    return None


def _shared_tokens_note(path: Path) -> str | None:
    """The note on a tokens file that other users may read (as of a key file: whoever
    reads a token plays as its bot, and is sent its hands), or ``None``. Its command is
    one to paste: the path quoted as a shell reads it ("chmod 600 my bots.toml" named
    two files), after ``--`` when it starts with ``-`` (``--tokens=-bots.toml``: "chmod
    600 -bots.toml" is chmod's "invalid option")."""
    shared = _readable_by_others(path)
    if shared is None:
        return None
    end = "-- " if str(path).startswith("-") else ""
    return printable(f"note: {path} is readable by {shared}: whoever reads "
                     "a token there plays as its bot and is sent its hands "
                     f"(chmod 600 {end}{shlex.quote(str(path))})")  # fmt: skip


def _tls_names(names: list[str], host: str) -> str:
    """What the line "arena referee listening on HOST:PORT" adds over TLS: the names of
    the certificate (``names``) a bot connects by, those of them that lead elsewhere when
    it listens on one address (``host``) said apart.

    >>> _tls_names(["localhost", "arena.example", "192.0.2.2"], "0.0.0.0")
    ' (TLS: bots connect by a name its certificate lists: localhost, arena.example, 192.0.2.2)'
    >>> _tls_names(["localhost", "192.0.2.2"], "192.0.2.2").split("; ")[1]
    'not by localhost, which it lists too: it listens on 192.0.2.2 only)'
    """
    if not names:
        return " (TLS)"
    away = names_not_reaching(names, host)
    by = [n for n in names if n not in away]
    listed = f": bots connect by a name its certificate lists: {', '.join(by)}"
    if away:
        # Listening on one address: a name of the certificate for another one (its
        # localhost, with --host of the network) leads a bot nowhere.
        alone = host_port(host, 0).rpartition(":")[0]
        listed = (
            f"{listed}; not by {', '.join(away)}, which it lists too: it listens on "
            f"{alone} only" if by else f": its certificate lists {', '.join(away)}, none "
            f"of which leads to {alone}, the one address it listens on: no bot can "
            f"connect (make one that lists {alone}, or give --host to match it)"
        )  # fmt: skip
    return f" (TLS{listed})"


def _keep_seed(path: Path, seed: int) -> Path:
    """Write the drawn ``seed`` to ``path``, readable by its owner only; ``path``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{seed}\n")
    except OSError as e:
        raise click.ClickException(
            f"cannot keep the drawn seed in {path}: {e.strerror or e}"
        ) from e
    return path


def _check_pem(path: Path | None, what: str, param: str) -> None:
    """Refuse at once a TLS file that is no PEM (gRPC would only fail to bind, unexplained)."""
    problem = None if path is None else pem_problem(path, what)
    if problem is not None:
        raise click.BadParameter(problem, param_hint=param)


def _tournament_name(ctx: click.Context, param: click.Parameter, name: str) -> str:
    """``--name``: written as a tournament config's ``name`` is."""
    if not BOT_NAME_RE.match(name):
        raise click.BadParameter(
            f"{printable(name[:100])!r}: a tournament name starts with a letter or a digit, "
            "then letters, digits, '.', '_' or '-' (at most 64 characters)"
        )
    return name


@click.command()
@click.option("--host", type=Host(), default="127.0.0.1", show_default=True,
              help="Address to listen on.")  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True,
              help="Port; 0 picks a free one.")  # fmt: skip
@click.option(
    "--tokens",
    "tokens_file",
    type=NonEmptyPath(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help='TOML file with a [bots] table: name = "token" (and [members]: member = ["bot", '
    "...], never seated together); read again when it changes.",
)
@click.option("--ruleset", default="classic", show_default=True, help="Preset or TOML file.")
@click.option(
    "--max-deals", type=click.IntRange(min=1, max=1_000_000), default=None,
    help="Cap each match at N deals (default: the ruleset's; the presets have none, and "
    "weak bots can play for ever: in classic on the barrel, in 1001 conceding).",
)  # fmt: skip
@click.option(
    "--record-dir",
    type=NonEmptyPath(file_okay=False, path_type=Path),
    default=Path("records"),
    show_default=True,
    help="Each match is written here as <match_id>.jsonl while it is played (never appended "
    "to: <match_id>.2.jsonl if that file exists).",
)
@click.option("--decision-ms", type=click.IntRange(1, MAX_DEADLINE_MS), default=1000,
              show_default=True, help="Time per decision.")  # fmt: skip
@click.option("--time-bank-ms", type=click.IntRange(0, MAX_DEADLINE_MS),
              default=DEFAULT_TIME_BANK_MS, show_default=True,
              help="Time bank per match.")  # fmt: skip
@click.option("--max-strikes", type=click.IntRange(1, MAX_STRIKES), default=3,
              show_default=True, help="Strikes before a forfeit.")  # fmt: skip
@click.option("--grace-s", type=Seconds(min=0), default=5.0, show_default=True,
              help="Reconnect grace period.")  # fmt: skip
# (at most what SQLite stores: with --db, a larger K would be an OverflowError at start)
@click.option("--matches", "max_matches", type=click.IntRange(1, 2**63 - 1), default=None,
              help="Stop after K matches started (a failed one counts).")  # fmt: skip
@click.option(
    "--seed", type=int, default=None,
    help="Seeds the seating and the deals (default: a new one each run, kept in "
    "<record-dir>/serve-<start time>-<hex>.seed, readable by you only; the same seed deals "
    "the same matches again, which bots that saw them could exploit).",
)  # fmt: skip
@click.option(
    "--tls-cert", type=NonEmptyPath(exists=True, dir_okay=False, path_type=Path), default=None,
    help="PEM certificate chain (with --tls-key: serve TLS only).",
)  # fmt: skip
@click.option(
    "--tls-key", type=NonEmptyPath(exists=True, dir_okay=False, path_type=Path), default=None,
    help="PEM private key.",
)  # fmt: skip
@click.option(
    "--drain-s", type=Seconds(min=0), default=30.0, show_default=True,
    help="On SIGINT/SIGTERM/SIGHUP: how long running matches may take to finish before they are "
    "interrupted (and recorded as interrupted); a second signal interrupts them at once.",
)  # fmt: skip
@click.option(
    "--db", type=NonEmptyPath(dir_okay=False, path_type=Path), default=None,
    help="Also store every finished match in this SQLite database, as a tournament named "
    "serve-<start time>-<hex> (--name: another name), for `arena leaderboard`, `arena web` "
    "and `arena replay`.",
)  # fmt: skip
@click.option(
    "--name", "tournament_name", default="serve", show_default=True, callback=_tournament_name,
    help="The name of the tournament --db stores (its id: NAME-<start time>-<hex>), so that a "
    "club's sessions are told apart: `arena leaderboard --tournament NAME` shows the latest.",
)  # fmt: skip
@click.option("-v", "--verbose", is_flag=True, help="Log every connection and incident.")
def serve(
    host: str,
    port: int,
    tokens_file: Path,
    ruleset: str,
    max_deals: int | None,
    record_dir: Path,
    decision_ms: int,
    time_bank_ms: int,
    max_strikes: int,
    grace_s: float,
    max_matches: int | None,
    seed: int | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    drain_s: float,
    db: Path | None,
    tournament_name: str,
    verbose: bool,
) -> None:
    """Run the referee: bots connect with their tokens and are seated into matches (3 or 4
    per the ruleset) as long as enough of them are idle; every match is recorded."""
    check_grpc_environment()
    source = click.get_current_context().get_parameter_source("tournament_name")
    if db is None and source is not ParameterSource.DEFAULT:
        # (it names nothing else: a name given and stored nowhere would be lost in silence)
        raise click.UsageError("--name names the tournament that --db stores: give --db too")
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        rs = load_ruleset(ruleset)
    except RulesetError as e:
        raise click.BadParameter(str(e), param_hint="--ruleset") from e
    if max_deals is not None:
        rs = dataclasses.replace(rs, max_deals=max_deals)
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    _check_pem(tls_cert, "certificate", "--tls-cert")
    _check_pem(tls_key, "private key", "--tls-key")
    if tls_cert is not None and tls_key is not None:
        problem = key_pair_problem(tls_cert, tls_key)
        if problem is not None:
            raise click.BadParameter(problem, param_hint="--tls-key")
        problem = cert_expired_problem(tls_cert)
        if problem is not None:
            raise click.BadParameter(problem, param_hint="--tls-cert")
    tls = TLSConfig(tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    tokens, members = read_tokens_file(tokens_file)
    if len(tokens) < rs.players:
        raise click.BadParameter(
            f"{tokens_file} lists {len(tokens)} bot(s), and a match of {rs.name} seats "
            f"{rs.players}: no match could ever start",
            param_hint="--tokens",
        )
    if tables_possible(tokens, members) < rs.players:
        raise click.BadParameter(
            f"{tokens_file} lists bots of {tables_possible(tokens, members)} member(s) (its "
            f"[members]: two bots of one member never sit at one table), and a match of "
            f"{rs.name} seats {rs.players}: no match could ever start",
            param_hint="--tokens",
        )
    from arena.storage import directories_missing, remove_empty

    # (removed again if the serve is refused below: a bad --db left an empty record dir)
    record_dirs_made = directories_missing(record_dir)
    try:  # every match appends its record there: find out now, not at the first match
        record_dir.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=record_dir).close()
    except OSError as e:
        # (mkdir says "File exists" of what is there and no directory: a device, a FIFO,
        # a link to nothing; click names a regular file itself)
        why = no_directory(record_dir) if isinstance(e, FileExistsError) else None
        raise click.BadParameter(
            f"cannot write records into {record_dir}: {why or e.strerror or e}",
            param_hint="--record-dir",
        ) from e
    sized = table_size_note(rs, ruleset, len(tokens), "--ruleset")
    if sized:  # (a club that tried its file at four would otherwise find matches of three)
        click.echo(sized, err=True)
    endless = no_cap_note(rs, "--max-deals N caps them")
    if endless:  # (said once the options are all good)
        # Said at once: an organiser whose first bots never bid high enough would otherwise
        # watch a match run for ever (no bot can win from the barrel without a 120).
        click.echo(endless, err=True)
    weak = [name for name, token in tokens.items() if weak_token(token)]
    if weak:  # fine for a rehearsal on one machine; said, since anyone could be these bots
        click.echo(
            printable(f"note: {tokens_file}: " + ", ".join(error_key("bots", n) for n in weak)
                      + f": a token shorter than {MIN_TOKEN} characters is easy to guess, and "
                      "whoever presents it plays as that bot"),
            err=True,
        )  # fmt: skip
    shared = _shared_tokens_note(tokens_file)
    if shared:
        click.echo(shared, err=True)
    clear = None if tls is not None else in_clear_note(host, "bots", "--tls-cert with --tls-key")
    if clear is not None:
        click.echo(clear, err=True)
    only_here = None if tls_cert is None else loopback_only_note(tls_cert, host)
    if only_here is not None:
        click.echo(printable(only_here), err=True)
    try:
        config = RefereeConfig(
            decision_ms=decision_ms,
            time_bank_ms=time_bank_ms,
            max_strikes=max_strikes,
            reconnect_grace_s=grace_s,
            record_dir=record_dir,
        )
        results = None if db is None else _Results.open(db, rs, tokens, max_matches)
        if results is not None:
            results.name = tournament_name
    except (ValueError, click.ClickException) as e:
        remove_empty(record_dirs_made)
        if isinstance(e, click.ClickException):
            raise
        raise click.UsageError(str(e)) from e
    drawn = seed is None
    if seed is None:
        seed = secrets.randbelow(2**62)
    raise_open_files_limit()
    try:
        short = asyncio.run(_serve(config, tokens, rs, host, port, tls, max_matches, seed,
                                   drain_s, results, drawn, tokens_file, members))  # fmt: skip
    finally:
        # The loop's signal handlers are gone: a late second signal must not cut the
        # closing of the database and its lock (it gave exit 0 or 143 at random), nor
        # kill the process in Python's teardown of gRPC's server (-2 in place of 0).
        ignore_stop_signals()
        if results is not None:
            results.close()
    if (results is not None and results.lost) or short:
        sys.exit(1)  # said above: matches played that the database does not hold, or that
        # failed, or whose record files are incomplete


async def _serve(
    config: RefereeConfig,
    tokens: dict[str, str],
    ruleset: object,
    host: str,
    port: int,
    tls: TLSConfig | None,
    max_matches: int | None,
    seed: int,
    drain_s: float,
    results: _Results | None = None,
    drawn: bool = False,
    tokens_file: Path | None = None,
    members: dict[str, str] | None = None,
) -> bool:
    """Serve until stopped or ``max_matches`` were started; whether some match fell short:
    it failed (its record file could not be made: a full disk), or its record file stopped
    short while it was played."""
    from engine import Ruleset

    assert isinstance(ruleset, Ruleset)
    problem = port_problem(host, port)
    if problem is not None:
        raise click.ClickException(
            f"{problem} (is the port free, and --host an address of this machine?)"
        )
    referee = Referee(config)
    for name, token in tokens.items():
        referee.add_bot(name, token)
    # Match ids start with this run's start time (and 16 random bits, for two runs started
    # in one second): a bot that stays connected across a restart (or keeps results by
    # match id) must never see one id name two matches.
    prefix = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + f"{secrets.randbits(16):04x}-m"
    stamp = prefix[: -len("-m")]  # (the start time and its 4 hex digits)
    seed_file = None
    if drawn:  # before listening: a file that cannot be written stops us first
        assert config.record_dir is not None
        seed_file = _keep_seed(Path(config.record_dir) / f"serve-{stamp}.seed", seed)
    if results is not None:  # (and a database that refuses)
        results.start(stamp)
    # Before listening: a signal once the port is open (a supervisor stopping it at once)
    # stops it as any other, not by Python's default action (killed, nothing closed).
    stop, now = asyncio.Event(), asyncio.Event()  # a first signal, and a second one

    def on_signal() -> None:
        (now if stop.is_set() else stop).set()

    loop = asyncio.get_running_loop()
    for sig in stop_signals():
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, on_signal)
    try:
        server, bound = await start_server(referee, host, port, tls)
    except (RuntimeError, OSError, ValueError) as e:
        raise click.ClickException(
            f"cannot listen on {host_port(host, port)}: {e} (is the port free, and --host an "
            "address of this machine?)"
        ) from e
    served = ""
    if tls is not None:
        # The address it listens on is not one a bot may connect by over TLS (a certificate
        # for localhost fails a bot's handshake at 127.0.0.1:PORT, exit 2): the names are.
        served = _tls_names(cert_names(Path(tls.cert_file)) or [], host)
    click.echo(printable(f"arena referee listening on {host_port(host, bound)}{served}"))
    click.echo(f"port {bound}")
    from arena.addresses import is_every_address, lan_address

    if is_every_address(host) and tls is None:  # (no bot elsewhere connects to 0.0.0.0)
        address = lan_address()
        click.echo(
            f"bots on other machines connect to {address}:{bound} (this machine's address on "
            "its default route; `hostname -I` lists them all)" if address is not None else
            f"bots on other machines connect to this machine's address, port {bound} "
            "(`hostname -I` lists them)"
        )  # fmt: skip
    if seed_file is not None:
        # Not printed: whoever reads this output (a log file others may read) would know
        # every hand of every match; kept as the records are, for its owner only.
        click.echo(
            printable(f"seed drawn, kept in {seed_file} (readable by you only: it tells every "
                      "hand; --seed with it deals the same matches again)")
        )  # fmt: skip
    else:
        click.echo(f"seed {seed} (--seed {seed} deals the same matches again)")
    # Which rules the matches run (the name alone told two house files of one name apart
    # nowhere); the cap too: here it is the ruleset's or --max-deals, said nowhere else.
    click.echo(f"ruleset {describe_ruleset(ruleset, deal_cap=True)}")
    click.echo(f"match ids {prefix}00000, {prefix}00001, ...")
    on_finished = None
    if results is not None:
        click.echo(printable(f"storing results in {results.db} as tournament {results.tid}"))
        on_finished = results.store
    lobby = Lobby(referee, ruleset, seed=seed, max_matches=max_matches, prefix=prefix,
                  on_finished=on_finished, members=members)  # fmt: skip
    lobby_task = asyncio.create_task(lobby.run())
    watch = None
    if tokens_file is not None:
        watch = asyncio.create_task(_TokensWatch(tokens_file, tokens, lobby, results).run())
    waiting = asyncio.create_task(_say_waiting(lobby))
    stop_task = asyncio.create_task(stop.wait())
    await asyncio.wait({lobby_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    if stop.is_set():
        log.warning("stopping: no new matches; %d running may finish within %g s (signal "
                    "again to interrupt them now)", lobby.running, drain_s)  # fmt: skip
        lobby.stop()
        now_task = asyncio.create_task(now.wait())
        await asyncio.wait({lobby_task, now_task}, timeout=drain_s,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        now_task.cancel()
        if not lobby_task.done():
            await lobby.cancel_running()
            await lobby_task
    stop_task.cancel()
    waiting.cancel()
    if watch is not None:
        watch.cancel()  # (the bots are let in as they were until the streams end)
    # (a stream that ended a moment ago, in its settle, is judged first: a reset there
    # makes its bot away with a result, which was not waited for; a second signal skips it)
    if not now.is_set():
        await referee.streams_settled()
    if referee.away_with_results() and not now.is_set():
        # A bot that lost its connection in a last deal gets its grace period to come back
        # for its result (a second signal stops at once).
        log.warning("waiting up to %g s for %s to come back for their results (a signal "
                    "stops the wait)",
                    config.reconnect_grace_s, ", ".join(referee.away_with_results()))  # fmt: skip
        signalled = asyncio.create_task((now if stop.is_set() else stop).wait())
        back = asyncio.create_task(referee.wait_for_away_results(config.reconnect_grace_s))
        await asyncio.wait({back, signalled}, return_when=asyncio.FIRST_COMPLETED)
        signalled.cancel()
        back.cancel()
    if stop.is_set() or max_matches is None:  # by a signal: it may come back; bots wait
        await referee.end_streams()
    else:  # --matches played: done for good; bots stop
        await referee.end_streams(f"the arena has played its {max_matches} match(es)", final=True)
    await server.stop(1.0)
    # Marked finished before anything is printed: after a hang-up the terminal is gone,
    # and the first write (EIO) would end the run with the tournament left unfinished.
    finished = results is not None and results.finish()
    with contextlib.suppress(OSError):
        played = f"{lobby.finished} match(es) played"
        if lobby.failed:  # (each said in the log as it failed)
            played += f", {lobby.failed} failed (see the log above)"
        if lobby.interrupted:  # (not played to their end: no result, stored nowhere)
            played += (f", {lobby.interrupted} interrupted by the stop (recorded as "
                       "interrupted, no result)")  # fmt: skip
        if referee.records_cut:
            played += (f"; the record files of {referee.records_cut} stopped short (see the log "
                       "above)")  # fmt: skip
        click.echo(printable(f"{played}; records in {config.record_dir}"))
        if finished:
            assert results is not None
            if results.empty:
                click.echo(printable(f"no match stored: {results.db} is left as it was"))
            else:
                where = f"--db {results.db} --tournament {results.tid}"
                click.echo(printable(f"standings: arena leaderboard {where}"))
    return bool(lobby.failed or referee.records_cut)
