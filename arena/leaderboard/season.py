"""A season: the matches of several stored tournaments (a club's weeks) rated together.

Each tournament's leaderboard rates its matches from the prior; a season rates those of
every tournament it selects one after another, in the order they were stored (played),
each one's in schedule order, with the same :class:`~arena.leaderboard.stats.LeaderboardBuilder`
(its TrueSkill ledger and its counts). Bots are told apart by name across tournaments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from arena.leaderboard.stats import Leaderboard, LeaderboardBuilder, StoredSince
from arena.ratings import DEFAULT_DRAW_PROBABILITY
from arena.storage import Storage, StorageError, TournamentInfo
from arena.tournament.config import as_current_code, identity_changes
from engine.rules import Ruleset, RulesetError, describe_run

__all__ = [
    "SeasonBuilder",
    "SeasonError",
    "build_season",
    "check_one_game",
    "select_season",
]


class SeasonError(LookupError):
    """A season that cannot be made of what was selected (the CLI's usage error)."""


def select_season(storage: Storage, spec: str) -> list[TournamentInfo]:
    """The tournaments ``spec`` selects, in the order they were stored: comma-separated
    items, each a tournament's id, else every tournament of that name, else every one whose
    name starts with it (``club-w`` selects ``club-w1`` .. ``club-w12``). A tournament
    selected twice is taken once. :class:`SeasonError` for an item that selects nothing
    (naming the stored tournaments), an empty ``spec``, or a database without tournaments."""
    infos = storage.tournaments()
    if not infos:
        raise SeasonError(f"{storage.path} holds no tournament")
    items = [i.strip() for i in spec.split(",")]
    if not any(items):
        raise SeasonError(f"--season {spec!r} names no tournament")
    chosen: set[str] = set()
    for item in filter(None, items):
        found = (
            [t for t in infos if t.id == item]
            or [t for t in infos if t.name == item]
            or [t for t in infos if t.name.startswith(item)]
        )
        if not found:
            stored = ", ".join(f"{t.id} ({t.name})" for t in infos)
            raise SeasonError(
                f"no tournament {item!r} in {storage.path}: neither an id, a name nor the "
                f"start of one (stored: {stored})"
            )
        chosen.update(t.id for t in found)
    selected = [t for t in infos if t.id in chosen]
    for t in selected:
        if "damaged" in t.config:
            raise StorageError(t.config["damaged"])
    return selected


@dataclass(frozen=True, slots=True)
class _Game:
    """What must be alike for ratings to compare: the rules in force and the draw rate."""

    rules: str  # (the rules in force as JSON: comparable, hashable)
    draw: Any
    #: For people, not compared: a house file named otherwise that plays classic's rules
    #: is described by its name, and plays the same game (it was refused as another).
    said: str = field(compare=False)

    @classmethod
    def of(cls, info: TournamentInfo) -> _Game:
        cfg = info.config
        stored = cfg.get("ruleset") or {}
        if not isinstance(stored, Mapping):  # (a preset named by a hand-made config)
            stored = {"name": str(stored)}
        try:
            rules: Mapping[str, Any] = Ruleset.from_dict(stored).in_force()
        except (RulesetError, TypeError, ValueError):
            rules = stored
        # (the name apart: a house file that plays classic's rules plays classic)
        key = json.dumps({k: v for k, v in rules.items() if k != "name"}, sort_keys=True,
                         default=str)  # fmt: skip
        draw = cfg.get("draw_probability", DEFAULT_DRAW_PROBABILITY)
        said = describe_run(stored)
        if draw != DEFAULT_DRAW_PROBABILITY:
            said += f", ratings.draw_probability {draw}"
        return cls(key, draw, said)


def _bot_changes(
    seen: dict[str, dict[str, Any]], info: TournamentInfo
) -> tuple[list[str], list[str]]:
    """What changed, since an earlier tournament of the season, in the bots of ``info``
    that one played too (``bot alice's code``), as ``arena tournament`` says it, and the
    names of those bots; ``seen`` (bot name -> its stored launch and code) is brought up to
    date."""
    now = {
        # (read as this arena's code: an older arena's digest of a bundled bot was of all
        # of bots/, and said a bot whose own modules did not change changed)
        str(b.get("name")): as_current_code(b)
        for b in info.config.get("bots") or ()
        if isinstance(b, Mapping) and b.get("kind") != "remote"  # (only a name: nothing to tell)
    }
    both = [n for n in now if n in seen and seen[n] != now[n]]
    changes = identity_changes({"bots": [seen[n] for n in both]},
                               {"bots": [now[n] for n in both]})  # fmt: skip
    seen.update(now)
    return changes, both


def check_one_game(infos: list[TournamentInfo]) -> None:
    """:class:`SeasonError` when the tournaments ``infos`` play different rules (a season
    rates one game), naming each game and its tournaments; checked by :func:`build_season`,
    and by ``arena web --season`` at its start (it was answered by the page alone, 400)."""
    games: dict[_Game, list[str]] = {}
    for t in infos:
        games.setdefault(_Game.of(t), []).append(t.id)
    if len(games) > 1:
        apart = "; ".join(f"{g.said}: {', '.join(ids)}" for g, ids in games.items())
        raise SeasonError(
            f"the selected tournaments play different rules ({apart}): a season rates one "
            "game, select the tournaments of one"
        )


def build_season(storage: Storage, name: str, infos: list[TournamentInfo]) -> Leaderboard:
    """The leaderboard of the matches of ``infos`` (:func:`select_season`'s) rated together.
    :class:`SeasonError` when they play different rules (a season rates one game)."""
    season = SeasonBuilder(storage, infos)
    with storage.reading():
        season.update(storage, infos)
        return season.build(name, infos)


class _Week(StoredSince):
    """One tournament of a season, read into the season's builder a batch at a time (its
    matches stored since it last read: :class:`StoredSince`), their schedule indices moved
    by ``offset``: past every index of the weeks before it."""

    def __init__(self, builder: LeaderboardBuilder, info: TournamentInfo, offset: int) -> None:
        super().__init__(info.id)
        self.builder = builder
        self.offset = offset
        self.bots: set[str] = set()  # the bots its matches read so far seated
        self.top = -1  # the highest schedule index of its matches read so far

    def span(self, info: TournamentInfo) -> int:
        """How many schedule indices it takes (the next week's begin after them): every
        one of its schedule and every one of its stored matches (an `arena serve`
        session's schedule is empty: 0 matches)."""
        return max(info.total_matches, self.top + 1)

    def _read_since(self, storage: Storage, new: int) -> bool:
        results = storage.match_results(self.tournament_id, stored_after=self.mark)
        if len(results) != new:
            return False
        self.builder.read_matches(
            storage, self.tournament_id, results, stored_after=self.mark, offset=self.offset
        )
        self.bots.update(b for m in results for b in m.seats)
        self.top = max([self.top, *(m.index for m in results)])
        return True


class SeasonBuilder:
    """:func:`build_season` kept up to date, as a tournament's
    :class:`~arena.leaderboard.stats.LeaderboardBuilder` is: :meth:`update` reads only the
    matches stored since it last did, in each tournament (a finished week's, once), and
    :meth:`build` makes the season's leaderboard of every match read so far. `arena web
    --season` follows a running week with one: reading every week again at each refresh
    took 11 s at 4,000 matches of 30 bots. :class:`SeasonError` when ``infos`` play
    different rules."""

    def __init__(self, storage: Storage, infos: list[TournamentInfo]) -> None:
        check_one_game(infos)
        #: What the builder was made for: the database file and each week as stored (its
        #: config, edited by hand, or the week stored again under its id: a new builder).
        self.made_for = self.made_for_of(storage, infos)
        # (the first's config: the ruleset and draw probability, alike in all)
        self.builder = LeaderboardBuilder(storage, _whole("", infos))
        self.weeks: list[_Week] = []

    @staticmethod
    def made_for_of(storage: Storage, infos: list[TournamentInfo]) -> tuple[Any, ...]:
        """What tells the season's weeks from others (see :attr:`made_for`)."""
        weeks = tuple((t.id, t.created_at, t.fingerprint, t.bots, t.config) for t in infos)
        return (storage.file_id, weeks)

    def update(self, storage: Storage, infos: list[TournamentInfo]) -> bool:
        """Read the matches of ``infos`` (those it was made for, as they are now) stored
        since the last update; ``False`` when only a new builder can count them: other
        weeks, a match deleted, or a week's schedule indices grown into the next one's (an
        `arena serve` session that is not the last: the next one's offset moves)."""
        if self.made_for_of(storage, infos) != self.made_for:
            return False
        with storage.reading():
            offset = 0
            for i, info in enumerate(infos):
                if i == len(self.weeks):
                    self.weeks.append(_Week(self.builder, info, offset))
                week = self.weeks[i]
                if week.offset != offset or not week.update(storage):
                    return False
                offset += week.span(info)
        return True

    def build(self, name: str, infos: list[TournamentInfo]) -> Leaderboard:
        """The season's leaderboard (named ``name``) of the matches read so far; ``infos``:
        its tournaments as they are (those :meth:`update` last read)."""
        whole = _whole(name, infos)
        seen: dict[str, dict[str, Any]] = {}
        weeks: list[dict[str, Any]] = []
        notes: list[str] = []
        seeds: dict[tuple[str, str], str] = {}
        for t, week in zip(infos, self.weeks, strict=True):
            changed, names = _bot_changes(seen, t)
            weeks.append({
                "id": t.id, "name": t.name, "deals": _dealt(t), "completed": t.completed,
                "total_matches": t.total_matches, "created_at": t.created_at,
                "finished_at": t.finished_at, "bots": sorted(week.bots),
                "bots_changed": names, "changes": changed,
            })  # fmt: skip
            if changed:
                notes.append(f"{t.id}: changed since an earlier tournament of the season: "
                             f"{'; '.join(changed)} (rated as the same bot, by name)")  # fmt: skip
            if t.finished_at is None:
                of = f"{t.completed}/{t.total_matches}" if t.total_matches > 0 else str(t.completed)
                notes.append(f"{t.id} is not finished ({of} matches stored): its stored "
                             "matches are counted")  # fmt: skip
            seed = t.config.get("seed")
            # (and dealt the same way: a seed deals other cards to independent deals than
            # to duplicate ones, and a week of each, of one seed, was said dealt the same)
            dealt = (json.dumps(seed, default=str), _dealt(t))
            if seed is not None and t.config.get("kind") != "serve":
                if dealt in seeds:
                    notes.append(f"{t.id} was dealt the same cards as {seeds[dealt]} (seed "
                                 f"{seed}): both count, as both were played")  # fmt: skip
                else:
                    seeds[dealt] = t.id
        board = self.builder.build(whole)
        # (the first's `deals` alone: a season of duplicate and independent weeks read as one
        # of duplicate deals, and one of independent weeks did not say so)
        ways = {w["deals"] for w in weeks}
        deals = ways.pop() if len(ways) == 1 else "mixed"
        return replace(board, season=weeks, notes=notes, deals=deals)


def _whole(name: str, infos: list[TournamentInfo]) -> TournamentInfo:
    """The season ``name`` of ``infos`` as one tournament (what its leaderboard says)."""
    unfinished = [t for t in infos if t.finished_at is None]
    sessions = all(t.config.get("kind") == "serve" for t in infos)
    return TournamentInfo(
        id=",".join(t.id for t in infos),
        name=name,
        fingerprint="",
        # The first's config (ruleset, draw probability: alike in all), marked a season; of
        # `arena serve` sessions alone, a serve's (whose title says no deals: each of its
        # matches has a seed of its own, and a season of sessions said "independent deals")
        config={**infos[0].config, "kind": "serve" if sessions else "season"},
        total_matches=sum(t.total_matches for t in infos),
        created_at=infos[0].created_at,
        finished_at=None if unfinished else max(str(t.finished_at) for t in infos),
        bots=tuple(dict.fromkeys(b for t in infos for b in t.bots)),
        completed=sum(t.completed for t in infos),
    )


def _dealt(info: TournamentInfo) -> str:
    """How a tournament's matches were dealt (its config's ``deals``), as the leaderboard
    reads it: ``"independent"`` (``arena serve``'s too) or ``"duplicate"``."""
    return "independent" if info.config.get("deals") == "independent" else "duplicate"
