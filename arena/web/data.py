"""What the web pages show, read from the tournament database without ever writing to it.

The database is opened read-only (``file:...?mode=ro``), one connection per request, so
``arena web`` runs beside a tournament that is writing the same file. The queries are the
storage's own (:class:`arena.storage.Storage` methods bound to a read-only connection);
the statistics and ratings are the leaderboard's (:mod:`arena.leaderboard`). What the
leaderboard computes is cached per tournament until the next match is stored, then brought
up to date from the matches stored since (:class:`LeaderboardBuilder`); while a tournament
runs, a document that takes long to compute (a bot page reads every incident of its bot)
is recomputed at most every few times its cost. A bot's score-per-deal counts are kept the
same way as the leaderboard (:class:`_DealScores`).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import json
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from arena.leaderboard.render import board_title, source_line
from arena.leaderboard.season import SeasonBuilder, SeasonError, select_season
from arena.leaderboard.stats import STRIKE_GROUPS, LeaderboardBuilder, StoredSince
from arena.storage import (
    MatchResult,
    Storage,
    StorageError,
    TournamentInfo,
    lock_owner,
    named_match,
    state_of,
)
from arena.tournament.schedule import SCHEDULE_VERSION
from arena.web import board
from engine.rules import describe_run

__all__ = [
    "BOT_PAGE",
    "INCIDENT_LISTS",
    "STRIKE_PAGE",
    "DataSource",
    "Document",
    "HeldBack",
    "NotFound",
    "held_back",
    "held_matches",
    "sets_held_back",
]

JSON = dict[str, Any]


class Document(dict[str, Any]):
    """An answer of the API with ``state``: what decides it (the tournament's stored state
    the cached parts were made for, and the parts made at each request), from which the
    server makes its ETag without serializing it (see ``server.py``)."""

    state: tuple[Any, ...] | None = None

    def __init__(self, doc: JSON, state: tuple[Any, ...]) -> None:
        super().__init__(doc)
        self.state = state


#: How many of a bot's matches its page lists at once, newest first (``limit``; the
#: older ones page by page, ``before``): a bot of 12,000 matches made a 3 MB page.
BOT_PAGE = 50

#: How many of a bot's strikes (and of its other incidents) its page lists at once, newest
#: first (the older ones page by page, ``before``, as its matches): a bot that timed out in
#: every deal of 12,000 matches listed each of its strikes on one page.
STRIKE_PAGE = 50

#: The bot page's lists of incidents, each paged as its matches are (``/api/bots/<name>/<list>``):
#: its strikes, and the incidents that are no strike (a bot that failed every decision of
#: thousands of matches listed each ``bot_error`` on one page).
INCIDENT_LISTS = ("strikes", "other_incidents")

#: How many of the latest matches the leaderboard page lists.
RECENT = 25

#: The incident kinds that are strikes (the leaderboard's strike columns); any other kind
#: (``wrong_request``: an answer to no pending request) is listed apart, as no strike.
STRIKE_KINDS = frozenset(k for kinds in STRIKE_GROUPS.values() for k in kinds)

#: The documents kept (leaderboards and bot pages, the latest used): each was kept for
#: ever, and a server left running beside a database that gains a tournament a day (each
#: `arena serve --db` run is one) held every page it had shown (a tournament of 12,000
#: matches and 6 bots: 57 MB).
DOCS_KEPT = 32

#: The leaderboard builders kept (one per tournament shown lately): each holds what its
#: tournament's leaderboard counts so far (13 MB at 10,000 matches of 3 bots).
BUILDERS_KEPT = 4

#: The season builders kept (one per season shown lately; see ``DataSource.season``): each
#: holds what a leaderboard builder does, of every match of its weeks.
SEASONS_KEPT = 2

#: While a tournament runs, a document that cost at least ``SLOW_S`` to compute is kept for
#: ``THROTTLE`` times its cost before new results make it computed again: a bot's page
#: reads every incident of its bot (and did every deal, before _DealScores; the leaderboard
#: did every stored match: 6–7 s at 15,000 matches, longer than the page's 3 s poll, and
#: computed at every poll, as each poll found a new match).
SLOW_S = 0.1
THROTTLE = 4.0


class NotFound(LookupError):
    """No such tournament, bot or match (the server answers 404)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "not found"


class HeldBack(LookupError):
    """A match whose deals are not shown yet (the server answers 403); see
    :meth:`DataSource.check_shown`."""

    def __str__(self) -> str:
        return str(self.args[0])


class _Flight:
    """One computation of a document under way, which other requests wait for."""

    __slots__ = ("doc", "done", "error", "made_for", "waiters")

    def __init__(self, made_for: tuple[Any, ...]) -> None:
        self.made_for = made_for  # the tournament's state it is computed for
        self.done = threading.Event()
        self.doc: JSON | None = None
        self.error: BaseException | None = None
        self.waiters = 0  # requests that waited for it (the tests read it)


class DataSource:
    """The JSON documents of the API, for one database (and a default tournament)."""

    def __init__(
        self, db: str | Path, tournament: str | None = None, season: str | None = None
    ) -> None:
        self.db = Path(db)
        self.default_tournament = tournament
        #: ``arena web --season S``: the season every leaderboard links (``season``).
        self.default_season = season
        self._lock = threading.Lock()
        # what -> (the tournament's state it was made for, the document, when, its cost)
        # (the latest used last; at most DOCS_KEPT)
        self._docs: OrderedDict[tuple[str, ...], tuple[tuple[Any, ...], JSON, float, float]] = (
            OrderedDict()
        )
        # what -> the computation of it under way (see _cached_keyed)
        self._flights: dict[tuple[str, ...], _Flight] = {}
        # tournament id -> its leaderboard so far (see _builder), the latest used last
        # (with the file it read: see _state_key)
        self._builders: OrderedDict[str, tuple[Any, LeaderboardBuilder]] = OrderedDict()
        # a season's tournament ids -> its standings so far (see _season_builder)
        self._seasons: OrderedDict[tuple[str, ...], SeasonBuilder] = OrderedDict()
        # (tournament id, bot) -> its score-per-deal counts so far (see _deal_scores)
        self._scores: OrderedDict[tuple[str, str], _DealScores] = OrderedDict()
        with self._open():  # fail early on a path that is no database
            pass

    @contextlib.contextmanager
    def _open(self) -> Iterator[Storage]:
        """The database, read-only. A document whose ETag is made from the tournament's
        state (the leaderboard, a bot page) is read in one read transaction
        (``st.reading()``): read statement by statement, a page of matches read before the
        latest match its ETag names could miss a match stored in between, and be answered
        304 as if it had it."""
        st = Storage.open_readonly(self.db)
        try:
            yield st
        finally:
            st.close()

    # -- tournaments ----------------------------------------------------------------------

    def tournaments(self) -> list[JSON]:
        with self._open() as st:
            return _tournaments_json(st, self.db)

    def _tournament(self, st: Storage, tournament: str | None) -> TournamentInfo:
        ref = tournament or self.default_tournament
        try:
            tid = st.latest_tournament() if ref is None else st.resolve_tournament(ref)
        except LookupError:
            tid = None
        if tid is None:
            raise NotFound(
                f"no tournament {ref!r} in {self.db}" if ref else f"no tournament in {self.db} yet"
            )
        info = st.tournament(tid)
        if info is None:
            raise NotFound(f"no tournament {tid!r} in {self.db}")
        return info

    # -- leaderboard ----------------------------------------------------------------------

    def leaderboard(self, tournament: str | None) -> Document:
        """Rows, rating history, head-to-head and the latest matches of a tournament."""
        with self._open() as st, st.reading():  # (see _open)
            info = self._tournament(st, tournament)
            doc, made_for = self._board(st, info)
            counted = _as_counted(info, made_for)
            shown = {
                "tournament": _tournament_json(counted, lock_owner(self.db)),
                "tournaments": _tournaments_json(st, self.db, counted),
                "season": self.default_season,
            }
            return Document({**shown, **doc}, ("board", info.id, made_for, shown))

    def _cached_keyed(
        self,
        what: tuple[str, ...],
        info: TournamentInfo,
        compute: Callable[[], JSON],
        once: Callable[[], float] | None = None,
        *,
        st: Storage | None = None,
        key: tuple[Any, ...] | None = None,
    ) -> tuple[JSON, tuple[Any, ...]]:
        """``compute()`` for the tournament as it is now, or the document made for it as it
        was, if nothing was stored since, or if it is still running and that document is
        fresh for its cost (``SLOW_S``, ``THROTTLE``). ``once()``: the seconds of the
        computation just made that the next one will not spend again (not counted in its
        cost). ``st``: the database, to tell the latest match stored (see ``key``).
        ``key``: what the document is made for, in place of ``info``'s state (a season's:
        its tournaments'); its last item is None while that is unfinished.

        One computation of ``what`` at a time (single flight): a request that finds it
        being computed waits for it and shares its document (or its exception; the next
        request computes again). Eight requests of a cold leaderboard at 10,000 matches
        each computed it, side by side: 230-261 s each instead of 16, 5.1 GB.

        Returned with the document: the state of the tournament it was made for (see
        :func:`_state_key`), which is not the state now when it is kept while running."""
        if key is None:
            key = _state_key(info, st)
        while True:
            with self._lock:
                hit = self._docs.get(what)
                if hit is not None:
                    self._docs.move_to_end(what)
                    made_for, doc, made_at, cost = hit
                    if made_for == key:
                        return doc, made_for
                    running = made_for[-1] is None and key[-1] is None
                    if running and cost >= SLOW_S and time.monotonic() - made_at < THROTTLE * cost:
                        return doc, made_for
                flight = self._flights.get(what)
                if flight is None:  # this request computes it
                    flight = self._flights[what] = _Flight(key)
                    break
                flight.waiters += 1
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            if flight.made_for == key and flight.doc is not None:
                return flight.doc, key
            # made for another state of the tournament (one more match stored since it
            # began): the cache above decides whether that one will do
        try:
            start = time.monotonic()
            doc = compute()
            now = time.monotonic()
            flight.doc = doc
            cost = now - start - (once() if once is not None else 0.0)
            with self._lock:
                self._docs[what] = (key, doc, now, cost)
                self._docs.move_to_end(what)
                while len(self._docs) > DOCS_KEPT:
                    self._docs.popitem(last=False)
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                del self._flights[what]
            flight.done.set()
        return doc, key

    def _board(self, st: Storage, info: TournamentInfo) -> tuple[JSON, tuple[Any, ...]]:
        # A new builder reads every stored match (12 s at 10,000): kept for 4x that, the page
        # of a running tournament stood still for a minute after it was first asked for.
        caught_up = 0.0

        def compute() -> JSON:
            nonlocal caught_up
            start = time.monotonic()
            builder, new = self._builder(st, info)
            if new:
                caught_up = time.monotonic() - start
            doc = board.compute(builder.build(info))
            recent = st.match_results(info.id, last=RECENT)
            limits = st.time_limits(info.id, [m.match_id for m in recent])
            held = held_matches(st, info)
            doc["recent"] = [_match_json(m, limits, held) for m in reversed(recent)]
            doc["version"] = f"{info.id}:{info.completed}:{info.finished_at}"
            return doc

        return self._cached_keyed(("board", info.id), info, compute, lambda: caught_up, st=st)

    def _builder(self, st: Storage, info: TournamentInfo) -> tuple[LeaderboardBuilder, bool]:
        """The tournament's leaderboard builder, brought up to date: only the matches stored
        since its last update are read (called by one request at a time per tournament:
        the board's single flight); whether it is a new one (that read every match)."""
        made_for = (info.created_at, info.fingerprint, info.bots, info.config)
        with self._lock:  # (taken out: one that fails half-way is not kept)
            file, builder = self._builders.pop(info.id, (None, None))
        new = (
            builder is None
            or file != st.file_id  # (another database at the path: see _state_key)
            or builder.made_for != made_for
            or not builder.update(st)
        )
        if new:  # (or matches were deleted)
            builder = LeaderboardBuilder(st, info)
            builder.update(st)
        assert builder is not None
        with self._lock:
            self._builders[info.id] = (st.file_id, builder)
            while len(self._builders) > BUILDERS_KEPT:
                self._builders.popitem(last=False)
        return builder, new

    # -- a season -------------------------------------------------------------------------

    def season(self, spec: str) -> Document:
        """A season's standings (``arena leaderboard --season``'s: :func:`build_season`) as
        the leaderboard page draws a tournament's, with its tournaments (``weeks``: each
        as ``/api/tournaments`` lists it, with the bots that played and those whose code or
        launch changed since an earlier one), its ``title`` and ``notes``, and the week
        whose page each bot's link opens (``bot_tournament``: the latest it played in).
        :class:`NotFound` for a selection of no stored tournament; ``SeasonError`` for
        tournaments of different rules (the request's fault)."""
        with self._open() as st, st.reading():
            try:
                infos = select_season(st, spec)
            except SeasonError as e:  # (no such tournament, or none stored)
                raise NotFound(str(e)) from None
            # Computed as a tournament's leaderboard is (_cached_keyed): by one request at a
            # time, and while a week runs, again at most every THROTTLE times its cost; from
            # the matches stored since (_season_builder). The first reads every match of
            # every week (11 s at 4,000 matches of 30 bots): computed at each request whose
            # weeks had a match stored since, a season page polling beside a running week
            # started it at every poll, each reader's side by side.
            # (The tournaments selected are part of ``what``: a week that joins the
            # selection is a season of its own, never one kept for fewer weeks.)
            keys = tuple(_state_key(t, st) for t in infos)
            running = any(t.finished_at is None for t in infos)
            caught_up = 0.0  # (as _board's: a new builder's reading of every match)

            def compute() -> JSON:
                nonlocal caught_up
                start = time.monotonic()
                season, new = self._season_builder(st, infos)
                if new:
                    caught_up = time.monotonic() - start
                lb = season.build(spec, infos)
                doc = board.compute(lb)
                played = {w["id"]: w for w in lb.season}
                latest = {b: w["id"] for w in lb.season for b in w["bots"]}
                doc.update({
                    "season": spec, "title": board_title(lb), "source": source_line(lb),
                    "deals": lb.deals, "deals_note": lb.deals_note or None,
                    "ruleset_description": lb.ruleset_heading or lb.ruleset,
                    "completed": lb.completed, "notes": lb.notes, "played": played,
                    "bot_tournament": {r["bot"]: latest.get(r["bot"]) for r in doc["rows"]},
                    "version": f"season:{spec}:{lb.completed}:{lb.finished_at}",
                })  # fmt: skip
                return doc

            # (and those finished: a week that ends is counted at once even while another
            # runs, which the throttle of the one document kept would have held off)
            what = ("season", spec, *(t.id for t in infos), "finished",
                    *(t.id for t in infos if t.finished_at is not None))  # fmt: skip
            doc, made_for = self._cached_keyed(
                what, infos[0], compute, lambda: caught_up, key=(*keys, None if running else True)
            )
            # Each week as /api/tournaments lists it, read at each request (whether a
            # runner is at work on it changes with no match stored), with what it played.
            owner = lock_owner(self.db)
            # (with the matches the standings count: see _as_counted)
            weeks = [{**_tournament_json(_as_counted(t, k), owner),
                      "bots_played": doc["played"][t.id]["bots"],
                      "bots_changed": doc["played"][t.id]["bots_changed"],
                      "changes": doc["played"][t.id]["changes"]}
                     for t, k in zip(infos, made_for, strict=False)]  # fmt: skip
            shown = {k: v for k, v in doc.items() if k != "played"}
            # The page draws the season again when its version changes: with the weeks'
            # states, as one taken up again, or a new one of its prefix, changes no match.
            version = f"{doc['version']}:{','.join(w['state'] for w in weeks)}"
            return Document({**shown, "weeks": weeks, "version": version},
                            ("season", spec, made_for, weeks))  # fmt: skip

    def _season_builder(
        self, st: Storage, infos: list[TournamentInfo]
    ) -> tuple[SeasonBuilder, bool]:
        """The season's builder, brought up to date: only the matches stored since its last
        update are read (a finished week's, never again); whether it is a new one (that
        read every match). Called by one request at a time per season (its single flight;
        two documents of one season, one request each: each takes the builder out)."""
        ids = tuple(t.id for t in infos)
        with self._lock:  # (taken out: one that fails half-way is not kept)
            season = self._seasons.pop(ids, None)
        new = season is None or not season.update(st, infos)
        if new:  # (or other weeks under those ids, or matches deleted)
            season = SeasonBuilder(st, infos)
            season.update(st, infos)
        assert season is not None
        with self._lock:
            self._seasons[ids] = season
            while len(self._seasons) > SEASONS_KEPT:
                self._seasons.popitem(last=False)
        return season, new

    # -- one bot --------------------------------------------------------------------------

    def bot(
        self,
        name: str,
        tournament: str | None,
        *,
        limit: int = BOT_PAGE,
        before: int | None = None,
        vs: str | None = None,
    ) -> Document:
        """One bot's page: its row, history, incidents and deal scores, and its matches
        newest first, ``limit`` of them (those of a schedule index below ``before``; those
        against ``vs`` only: the head to head's cell of the two)."""
        with self._open() as st, st.reading():  # (see _open)
            info = self._tournament(st, tournament)
            doc, board_for = self._board(st, info)
            row = next((r for r in doc["rows"] if r["bot"] == name), None)
            if row is None and name not in info.bots:
                raise NotFound(_no_bot(st, name, info))
            if vs is not None and vs not in info.bots and vs not in doc["head_to_head"]["bots"]:
                raise NotFound(_no_bot(st, vs, info))

            listed, listed_for = self._listed(st, info, name)
            # (read at each request: a page of matches is cheap, and the latest is shown)
            page = _match_page(st, info.id, name, limit, before, vs, held_matches(st, info))
            tournament_json = _tournament_json(info, lock_owner(self.db))
            # (every tournament it plays in, the latest first: its page links the others)
            tournaments = _tournaments_of(st, name)
            state = ("bot", info.id, name, board_for, listed_for, _state_key(info, st),
                     tournament_json, limit, before, tournaments, vs)  # fmt: skip
            return Document({
                "tournament": tournament_json,
                "bot": name,
                "vs": vs,
                # (a club's database: a tournament a week, two leagues side by side)
                "plays_in": tournaments,
                "row": row,
                "history": doc["history"].get(name, []),
                **page,
                **{k: v for k, v in listed.items() if k not in INCIDENT_LISTS},
                # (the newest STRIKE_PAGE of each; the older ones page by page: see incidents)
                **_incident_page(listed["strikes"], STRIKE_PAGE, None, "strikes"),
                **_incident_page(listed["other_incidents"], STRIKE_PAGE, None, "other_incidents"),
                # A match's record lists a seat's first 20 disconnects, failed decisions and
                # answers to no pending request one by one, and counts them all: the row
                # counts them all
                # (else the page lists 136 other incidents under a row of 404, silently)
                "strikes_not_listed": _not_listed(row, "strikes", listed["strikes"]),
                "other_incidents_not_listed": _not_listed(
                    row, "other_incidents", listed["other_incidents"]
                ),
            }, state)  # fmt: skip

    def _listed(self, st: Storage, info: TournamentInfo, name: str) -> tuple[JSON, tuple[Any, ...]]:
        """The parts of bot ``name``'s page read from every match of it: its strikes and
        other incidents (in schedule order) and its deal scores, kept as the leaderboard is
        (``_cached_keyed``), and the state they were made for."""

        def compute() -> JSON:
            incidents = st.incidents(info.id, bot=name)
            # An incident's detail names cards (the legal actions: on lead, the hand):
            # not shown while its match is held back (see check_shown).
            held = sets_held_back(st, info)
            scores, hidden = self._deal_scores(st, info, name).shown(st, held)
            ids = held_matches(st, info, held) if held else frozenset()
            for i in incidents:
                # (the page links no replay of one held back: it is a 403; false too, as
                # every match of a list says it: an API client reads the key of each)
                i["held_back"] = i.get("match_id") in ids
                if i["held_back"]:
                    i["detail"] = HELD_BACK_DETAIL
            return {
                "strikes": [i for i in incidents if i.get("kind") in STRIKE_KINDS],
                "other_incidents": [i for i in incidents if i.get("kind") not in STRIKE_KINDS],
                "deal_score_counts": scores,
                # deals of matches held back: their deltas are not shown (see shown)
                "deal_scores_held_back": hidden,
            }

        return self._cached_keyed(("bot", info.id, name), info, compute, st=st)

    def incidents(
        self,
        name: str,
        tournament: str | None,
        which: str = "strikes",
        *,
        limit: int = STRIKE_PAGE,
        before: int | None,
    ) -> JSON:
        """A page of bot ``name``'s strikes (``which``; or its ``other_incidents``), as its
        page lists them (see :func:`_incident_page`): the older pages of a bot page's."""
        if which not in INCIDENT_LISTS:
            raise ValueError(f"no list of incidents {which!r}: {', '.join(INCIDENT_LISTS)}")
        with self._open() as st, st.reading():  # (see _open)
            info = self._tournament(st, tournament)
            if name not in info.bots and not st.match_results(info.id, 1, bot=name):
                raise NotFound(_no_bot(st, name, info))
            listed, _ = self._listed(st, info, name)
            return {
                "tournament": _tournament_json(info, lock_owner(self.db)),
                "bot": name,
                **_incident_page(listed[which], limit, before, which),
            }

    def _deal_scores(self, st: Storage, info: TournamentInfo, bot: str) -> _DealScores:
        """The bot's score-per-deal counts, brought up to date (called by one request at a
        time per bot and tournament: the bot page's single flight)."""
        with self._lock:  # (taken out: counts that fail half-way are not kept)
            scores = self._scores.pop((info.id, bot), None)
        if (
            scores is None
            or scores.made_for != _DealScores.made_for_of(info, st)
            or not scores.update(st)
        ):  # (or matches were deleted)
            scores = _DealScores(info, bot, st)
            scores.update(st)
        with self._lock:
            self._scores[info.id, bot] = scores
            while len(self._scores) > DOCS_KEPT:
                self._scores.popitem(last=False)
        return scores

    def matches(
        self,
        tournament: str | None,
        *,
        bot: str | None,
        limit: int | None,
        before: int | None = None,
        vs: str | None = None,
    ) -> JSON:
        """The tournament's matches (``bot``'s only; with ``vs``, those both played), newest
        first: ``limit`` of them (None: all), of a schedule index below ``before``."""
        with self._open() as st, st.reading():
            info = self._tournament(st, tournament)
            page = _match_page(st, info.id, bot, limit, before, vs, held_matches(st, info))
            # a name the tournament never seated (a typo) is not "no matches yet": 404, as
            # /api/bots/<name> and `arena replay --list --bot` say it
            for who in (bot, vs):
                if (
                    who is not None
                    and not page["matches_total"]
                    and who not in info.bots
                    and not st.match_results(info.id, 1, bot=who)
                ):
                    raise NotFound(_no_bot(st, who, info))
            return {"tournament": _tournament_json(info, lock_owner(self.db)), **page}

    # -- one match ------------------------------------------------------------------------

    def match_id(self, ref: str) -> str:
        """The stored match ``ref`` names: its id, or a unique suffix of one (``m00003``),
        as ``arena replay`` takes them."""
        with self._open() as st:
            ids = st.find_match_ids(ref)
        match_id = named_match(ref, ids)
        if match_id is not None:
            return match_id
        if ids:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            raise NotFound(f"match {ref!r} is ambiguous in {self.db}: {shown}")
        raise NotFound(f"no match {ref!r} in {self.db}")

    def check_shown(self, match_id: str) -> None:
        """Raise :class:`HeldBack` while the deals of ``match_id`` must not be shown: its
        tournament is unfinished and deals other matches still to play the same cards (the
        duplicate format: every match of a deal-seed set). Whoever plays in one of those and
        read this record would know his opponents' hands there."""
        with self._open() as st:
            held = held_back(st, match_id)
        if held is not None:
            raise HeldBack(f"{held}: its deals are shown once they are played or the "
                           "tournament has ended")  # fmt: skip

    def stored_version(self, match_id: str) -> tuple[Any, ...]:
        """What tells one stored version of ``match_id`` from another (a tournament played
        again with ``--fresh``, a database replaced under the server): for caching."""
        with self._open() as st:
            row = st.conn.execute(
                "SELECT started_at, finished_at, seed, seats_json FROM matches WHERE id = ?",
                (match_id,),
            ).fetchone()
        return () if row is None else tuple(row)

    def record(self, match_id: str) -> JSON:
        with self._open() as st:
            try:
                return st.load_record(self.match_id(match_id))
            except KeyError:
                raise NotFound(f"no match {match_id!r} in {self.db}") from None

    def match_info(self, match_id: str) -> JSON:
        """Where a stored match belongs (tournament, schedule index, times)."""
        match_id = self.match_id(match_id)
        with self._open() as st:
            row = st.conn.execute(
                "SELECT tournament_id, idx, table_no, set_no, started_at, finished_at, duration_s"
                " FROM matches WHERE id = ?",
                (match_id,),
            ).fetchone()
        if row is None:
            return {}
        for key in row.keys():  # noqa: SIM118 (a Row iterates its values; a BLOB is no JSON)
            if isinstance(row[key], bytes):
                raise StorageError(
                    f"{self.db}: the stored {key} of match {match_id} is damaged (a BLOB); it "
                    "was changed outside the arena"
                )
        return {"stored": dict(row)}


# ---------------------------------------------------------------------------------------


def _tournaments_of(st: Storage, bot: str) -> list[JSON]:
    """The tournaments ``bot`` plays in, the latest first: id, name, created_at."""
    infos = {t.id: t for t in st.tournaments()}
    return [
        {"id": t.id, "name": t.name, "created_at": t.created_at}
        for tid in st.tournaments_of(bot)
        if (t := infos.get(tid)) is not None
    ]


def _no_bot(st: Storage, bot: str, info: TournamentInfo) -> str:
    """A 404's words for a bot not in tournament ``info``, naming those it plays in: a
    replay's or a shared link's bot page of another week, a member who left."""
    played = st.tournaments_of(bot)
    return f"no bot {bot!r} in tournament {info.id!r}" + (
        f"; {bot} plays in {', '.join(played)}" if played else ""
    )


def _state_key(info: TournamentInfo, st: Storage | None) -> tuple[Any, ...]:
    """What the tournament's documents are made for: what tells a tournament stored again
    under the same id (--fresh, or a database replaced under the server) from the old one,
    its config (edited by hand: the draw probability rates, the ruleset is shown; a
    finished tournament's leaderboard and its ETag stayed those of the old one), and the
    latest match stored (``st``: a match deleted by hand and another stored leave the count
    as it was); whether it is finished is the last (``_cached_keyed`` reads it). And the file
    (``Storage.file_id``): a demo database put in the place of another made in the same
    second (its tournament's ``created_at``) with as many matches was served the old one's
    leaderboard, and 304s."""
    if st is None:
        file, latest = None, None
    else:
        file, latest = st.file_id, st.stored_at(st.stored_state(info.id)[1])
    return (file, info.created_at, info.fingerprint, info.bots, info.config, info.completed,
            latest, info.finished_at)  # fmt: skip


def _match_page(
    st: Storage,
    tid: str,
    bot: str | None,
    limit: int | None,
    before: int | None,
    vs: str | None = None,
    held: Collection[str] = frozenset(),
) -> JSON:
    """``limit`` matches (None: all) of the tournament (``bot``'s only; and ``vs``'s: those
    both played), newest first in schedule order, of an index below ``before``, those
    among ``held`` marked held back (:func:`held_matches`); ``matches_total``: how many
    there are in all; ``next_before``: the ``before`` of the next (older) page, None on
    the last."""
    # one more than asked tells whether there is a next page
    results = st.match_results(
        tid, None if limit is None else limit + 1, bot=bot, before=before, vs=vs
    )
    results.reverse()
    more = limit is not None and len(results) > limit
    shown = results[:limit] if more else results
    limits = st.time_limits(tid, [m.match_id for m in shown])
    played = [b for b in (bot, vs) if b is not None]
    total = st.conn.execute(
        "SELECT COUNT(*) FROM matches WHERE tournament_id = ?"
        + " AND id IN (SELECT match_id FROM match_players WHERE bot = ?)" * len(played),
        (tid, *played),
    ).fetchone()[0]
    return {
        "matches": [_match_json(m, limits, held) for m in shown],
        "matches_total": int(total),
        # (limit 0 shows none: the next page begins with the newest one there is)
        "next_before": (shown[-1].index if shown else results[0].index + 1) if more else None,
    }


def _incident_page(incidents: list[JSON], limit: int, before: int | None, key: str) -> JSON:
    """A page of ``incidents`` (a bot's strikes or other incidents, listed as ``key``, in
    schedule order: ``idx``), newest first, as a bot's matches are paged
    (:func:`_match_page`): the newest ``limit`` of those of a match of a schedule index
    below ``before``, and the others of the oldest match of them (a match's are on one page:
    the next begins below its index); ``<key>_total``: how many there are in all;
    ``<key>_next_before``: the ``before`` of the next (older) page, None on the last."""
    end = len(incidents) if before is None else bisect.bisect_left(incidents, before, key=_idx)
    start = max(0, end - limit)
    if start > 0:  # (the whole of its oldest match)
        start = bisect.bisect_left(incidents, _idx(incidents[start]), hi=start, key=_idx)
    return {
        key: incidents[start:end][::-1],
        f"{key}_total": len(incidents),
        f"{key}_next_before": _idx(incidents[start]) if start > 0 else None,
    }


def _idx(incident: JSON) -> int:
    """An incident's match's schedule index (``Storage.incidents`` reads it a whole number)."""
    return int(incident["idx"])


def _as_counted(info: TournamentInfo, made_for: tuple[Any, ...]) -> TournamentInfo:
    """``info`` with the count of stored matches a cached document was made for (its
    ``_state_key``): a running tournament's leaderboard, slow to compute, is kept a moment
    while matches are stored, and its ``completed`` said the count of now over rows and a
    rating history of fewer matches."""
    return dataclasses.replace(info, completed=made_for[5])


def _tournaments_json(st: Storage, db: Path, counted: TournamentInfo | None = None) -> list[JSON]:
    """Every stored tournament, ``counted`` (see :func:`_as_counted`) in place of its own."""
    owner = lock_owner(db)
    return [
        _tournament_json(counted if counted is not None and t.id == counted.id else t, owner)
        for t in st.tournaments()
    ]


def _tournament_json(t: TournamentInfo, owner: str | None) -> JSON:
    """``owner``: the tournament whose runner holds the database's lock ("" when its lock
    file does not say; None when none does): only that one is running."""
    state = state_of(t, owner)
    cfg: dict[str, Any] = t.config if isinstance(t.config, dict) else {}
    rules = cfg.get("ruleset")
    return {
        "id": t.id,
        "name": t.name,
        "bots": list(t.bots),
        "total_matches": t.total_matches,
        "completed": t.completed,
        "created_at": t.created_at,
        "finished_at": t.finished_at,
        # Unfinished and a runner at work on the database: a tournament stopped before its
        # end (a remote bot never came) is not "live" for ever.
        "running": state == "running",
        # what the pages say of it: "running", "finished", or "stopped" (unfinished, and no
        # runner at work: stopped at `completed` of `total_matches`; it may be resumed)
        "state": state,
        "ruleset": _ruleset_name(rules),
        # which rules ran, for people: two tournaments of one name and ruleset name whose
        # options differ are told apart by it
        "ruleset_description": None if rules is None else describe_run(rules),
        # how its matches were dealt (the config's `deals`): the page says "independent
        # deals" of a tournament's, as the leaderboard's title does
        "deals": "independent" if cfg.get("deals") == "independent" else "duplicate",
        # "independent deals", as the title of `arena leaderboard` says it; null for duplicate
        # deals and for `arena serve`, whose matches all have seeds of their own
        "deals_note": (
            "independent deals"
            if cfg.get("deals") == "independent" and cfg.get("kind") != "serve"
            else None
        ),
    }


def _ruleset_name(ruleset: Any) -> str | None:
    """The name of a stored config's ruleset: a tournament stores the whole ruleset (an
    object), the demo a preset name; the page shows a name (it showed [object Object])."""
    if isinstance(ruleset, dict):
        name = ruleset.get("name")
        return name if isinstance(name, str) else None
    return ruleset if isinstance(ruleset, str) else None


#: An incident's detail while its match's deals are held back (its cards are those of
#: matches still to be played).
HELD_BACK_DETAIL = "(held back until the matches dealt the same cards are played)"


def sets_held_back(st: Storage, info: TournamentInfo) -> dict[int, int]:
    """Deal-seed sets of tournament ``info`` whose deals must not be shown yet, each with
    the number of its matches still to be played: all of them while the tournament is
    unfinished and deals duplicated, except the sets played out."""
    if info.finished_at is not None:
        return {}
    cfg = info.config if isinstance(info.config, dict) else {}
    if cfg.get("deals") == "independent":  # no other match has these cards
        return {}
    if cfg.get("schedule") != SCHEDULE_VERSION:
        # stored by an older version: it can no longer be resumed, nothing of it is still
        # to be played (and its 31-bit seeds are no secret anyway)
        return {}
    per_set = cfg.get("matches_per_table")
    if isinstance(per_set, int) and not isinstance(per_set, bool) and per_set >= 1:
        same_cards = info.total_matches // per_set
    else:  # a config that does not say: every match may share them
        same_cards = info.total_matches
    played = st.conn.execute(
        "SELECT set_no, COUNT(*) FROM matches WHERE tournament_id = ? GROUP BY set_no",
        (info.id,),
    ).fetchall()
    return {s: same_cards - n for s, n in played if n < same_cards}


def held_back(st: Storage, match_id: str) -> str | None:
    """Why the deals of stored match ``match_id`` must not be shown yet (its tournament is
    unfinished and other matches still to be played are dealt the same cards: whoever plays
    in one of those and read this record would know his opponents' hands there), in words:
    ``match ... is dealt the same cards as 5 matches of tournament ... still to be played
    (duplicate deals)``; ``None`` when they may be shown (or no such match is stored)."""
    row = st.conn.execute(
        "SELECT tournament_id, set_no FROM matches WHERE id = ?", (match_id,)
    ).fetchone()
    info = None if row is None else st.tournament(row["tournament_id"])
    if row is None or info is None:
        return None
    waiting = sets_held_back(st, info).get(row["set_no"])
    if not waiting:
        return None
    return (f"match {match_id} is dealt the same cards as {waiting} matches of tournament "
            f"{info.id} still to be played (duplicate deals)")  # fmt: skip


def held_matches(
    st: Storage, info: TournamentInfo, held: Mapping[int, int] | None = None
) -> frozenset[str]:
    """The stored matches of tournament ``info`` held back (see :func:`held_back`): a page
    lists them with no replay link, which would open a 403; ``held``: its
    :func:`sets_held_back`, when read already."""
    held = sets_held_back(st, info) if held is None else held
    if not held:
        return frozenset()
    rows = st.conn.execute(
        "SELECT id FROM matches WHERE tournament_id = ?"
        " AND set_no IN (SELECT value FROM json_each(?))",
        (info.id, json.dumps(sorted(held))),
    ).fetchall()
    return frozenset(r[0] for r in rows)


def _not_listed(row: JSON | None, key: str, listed: list[JSON]) -> int:
    """How many of the incidents the bot's row counts under ``key`` are not in ``listed``."""
    counted = row.get(key) if row else None
    return max(0, counted - len(listed)) if isinstance(counted, int) else 0


def _match_json(
    m: MatchResult, time_limits: Mapping[str, float], held: Collection[str] = ()
) -> JSON:
    """A match of a list; its ``status`` says a forfeit and a time limit that ended it
    (``match_timeout_s``: its deals alone, 1 of a 3-deal cap, said nothing of why);
    ``held_back``: whether it is among ``held`` (:func:`held_matches`), its deals not shown
    yet."""
    status = ["forfeit"] if m.forfeits else []
    if m.match_id in time_limits:
        status.append(f"time limit ({time_limits[m.match_id]:g} s)")
    return {
        "match_id": m.match_id,
        "index": m.index,
        "players": list(m.seats),
        "scores": list(m.scores),
        "places": list(m.places),
        "forfeits": list(m.forfeits),
        "deals": m.deals,
        "duration_s": m.duration_s,
        "status": ", ".join(status),
        "held_back": m.match_id in held,
    }


#: A bot's score in a deal: its element of the deal's stored deltas, typed by SQLite's JSON
#: functions ("damaged": not a JSON array of text; NULL: no element for its seat, as an
#: unfinished deal stored with no deltas).
_DELTA_TYPE = """CASE WHEN typeof(d.deltas_json) != 'text' OR NOT json_valid(d.deltas_json)
    OR json_type(d.deltas_json) != 'array' THEN 'damaged'
  WHEN typeof(p.seat) = 'integer' AND p.seat >= 0
    THEN json_type(d.deltas_json, '$[' || p.seat || ']') END"""


def _score_counts(
    st: Storage, tid: str, bot: str, *, after: int = 0, sets: Collection[int] | None = None
) -> tuple[Counter[int], int]:
    """How many deals of the tournament the bot scored each score in, and how many deals
    it played (its matches', counted by SQLite: the deltas are not read into Python one by
    one): of the matches stored after ``after`` (a position of ``Storage.stored_state``),
    or of the deal-seed sets ``sets`` only. A delta that is no whole number is the data's
    fault (a StorageError naming the deal, a 500), not the request's."""
    where = "m.tournament_id = ? AND m.rowid > ?"
    args: list[Any] = [bot, tid, after]
    if sets is not None:
        where += " AND m.set_no IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(sorted(sets)))
    # (from the matches, by their rowid: the ones stored since are read, not every match
    # of the bot; +p.bot: no lookup of every match of the bot by the bot's index)
    rows = f"""FROM matches m CROSS JOIN match_players p ON p.match_id = m.id AND +p.bot = ?
        CROSS JOIN deals d ON d.match_id = m.id WHERE {where}"""
    counts: Counter[int] = Counter()
    played = 0
    with st.reading():
        for kind, value, n in st.conn.execute(
            "SELECT t, CASE t WHEN 'integer' THEN json_extract(x, '$[' || seat || ']') END AS v,"
            f" COUNT(*) FROM (SELECT {_DELTA_TYPE} AS t, d.deltas_json AS x, p.seat AS seat"
            f" {rows}) GROUP BY t, v",
            args,
        ):
            played += n
            if kind == "integer":
                counts[value] += n
            elif kind is not None:  # damaged, or another type: say which deal
                bad = st.conn.execute(
                    f"SELECT d.match_id, d.number, d.deltas_json {rows} AND ({_DELTA_TYPE})"
                    " != 'integer' ORDER BY m.idx, d.number LIMIT 1",
                    args,
                ).fetchone()
                try:
                    json.loads(bad[2])
                    why = "not a list of whole numbers"
                except (TypeError, ValueError) as e:
                    why = str(e)
                raise StorageError(
                    f"{st.path}: the stored deltas of deal {bad[1]} of match {bad[0]} are "
                    f"damaged ({why}); they were changed outside the arena"
                )
    return counts, played


class _DealScores(StoredSince):
    """The score-per-deal counts of one bot in one tournament (the bot page's histogram),
    kept up to date as the leaderboard's builder is: :meth:`update` counts the deals of the
    matches stored since it last did only. Read at each refresh, a bot's every deal (24,000
    at 12,000 matches) cost 90 to 200 ms and sent 24,000 numbers; the counts are a few
    hundred (one per score)."""

    def __init__(self, info: TournamentInfo, bot: str, st: Storage) -> None:
        super().__init__(info.id)
        self.made_for = self.made_for_of(info, st)
        self.bot = bot
        self.counts: Counter[int] = Counter()

    @staticmethod
    def made_for_of(info: TournamentInfo, st: Storage) -> tuple[Any, ...]:
        """What tells this tournament from another stored later under its id (--fresh, or
        in another database put at the path: see :func:`_state_key`)."""
        return (st.file_id, info.created_at, info.fingerprint, info.bots)

    def _read_since(self, st: Storage, new: int) -> bool:
        tid = self.tournament_id
        stored = st.conn.execute(
            "SELECT COUNT(*) FROM matches WHERE tournament_id = ? AND rowid > ?", (tid, self.mark)
        ).fetchone()[0]
        if stored != new:
            return False
        self.counts.update(_score_counts(st, tid, self.bot, after=self.mark)[0])
        return True

    def shown(self, st: Storage, held: Collection[int]) -> tuple[list[list[int]], int]:
        """``[score, deals]`` of every score, ascending, but the deals of matches in the
        deal-seed sets ``held`` (see :func:`sets_held_back`), and how many those were. A
        delta tells who bid and made or failed what in that deal, and the matches left of
        its set deal the same cards: in order, beside the match list (the deals of each
        match), the deltas of a match's three bots gave every deal's result."""
        counts, hidden = self.counts, 0
        if held:  # (the sets being played: their matches only are read)
            left_out, hidden = _score_counts(st, self.tournament_id, self.bot, sets=held)
            counts = counts - left_out
        return [[v, n] for v, n in sorted(counts.items())], hidden
