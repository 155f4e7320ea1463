"""``arena replay [--check] RECORD``: show or verify a match, from a record file or a database;
``arena replay --list``: the stored matches of a tournament, one line each.

``RECORD`` is a record JSON file, or a stored match id (a unique suffix such as ``m00012``
is enough) looked up in ``--db`` (default: the newest ``runs/*.sqlite``).
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.cells import cell_len
from rich.console import Console

from arena.cli.options import (
    NonEmptyPath,
    comma_names,
    file_option,
    id_over_name_note,
    reading_newest,
    refuse_empty,
)
from arena.render import abandoned_places, changed_cards, plural, printable, time_limit_note
from engine import ReplayError
from engine import replay as replay_record
from engine.record import COUNTED_INCIDENTS, check_record_shape, seed_mismatches
from engine.rules import describe_run

#: The kinds a referee's record lists only up to a limit per seat (and counts in full).
_COUNTED_KINDS = frozenset(kind for _, kind in COUNTED_INCIDENTS)

__all__ = ["replay"]


@click.command("replay")
@click.argument("record_refs", metavar="[RECORD]...", nargs=-1)
@click.option("--check", is_flag=True, help="Replay through the rules and verify every score.")
@click.option(
    "--db",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="Tournament database to look match ids up in (default: the newest runs/*.sqlite).",
)
@click.option(
    "--list", "list_only", is_flag=True,
    help="List the stored matches of a tournament (no RECORD): one line per match.",
)  # fmt: skip
@click.option(
    "--tournament", "tournament_ref", metavar="REF",
    help="With --list: the tournament's id or name (default: the latest).",
)  # fmt: skip
@click.option("--bot", metavar="NAME", help="With --list: only the matches this bot played.")
@click.option(
    "--vs", "vs", metavar="NAME", multiple=True,
    help="With --list --bot: only its matches against this bot (comma-separated or "
    "repeated: against each of them), as `arena web`'s vs=.",
)  # fmt: skip
@click.option(
    "--export", "export_dir", metavar="DIR",
    type=NonEmptyPath(file_okay=False, path_type=Path),
    help="With --list: also write each listed match's record into DIR as <match id>.json "
    "(arena replay and --check read it on any machine, without the database).",
)  # fmt: skip
@click.pass_context
def replay(
    ctx: click.Context,
    record_refs: tuple[str, ...],
    check: bool,
    db: Path | None,
    list_only: bool,
    tournament_ref: str | None,
    bot: str | None,
    vs: tuple[str, ...],
    export_dir: Path | None,
) -> None:
    """Pretty-print a match deal by deal and trick by trick, or --check it against the rules;
    --list the match ids of a stored tournament.

    RECORD is a record file (a match's .json, or the <match_id>.jsonl that `arena serve`
    writes in its --record-dir) or a stored match id (a unique suffix such as m00003 is
    enough), looked up in --db. --check takes several (`--check exported/*.json`).
    """
    record_ref = record_refs[0] if record_refs else None

    for name, value in (("--tournament", tournament_ref), ("--bot", bot),
                        ("--vs", ",".join(vs) if vs else None),
                        ("--export", export_dir)):  # fmt: skip
        if value is not None and not list_only:
            does = "writes the records of" if name == "--export" else "chooses"
            raise click.UsageError(
                f"{name} goes with --list (it {does} the matches listed); RECORD names one "
                "match already"
            )
        refuse_empty(value if isinstance(value, str) else None, name)
    if list_only:
        if record_ref is not None:
            raise click.UsageError(
                f"--list lists a tournament's matches: not with RECORD ({record_ref!r}); "
                "`arena replay RECORD` shows that match"
            )
        if check:
            raise click.UsageError(
                "--check verifies one match: not with --list (list the ids, then "
                "`arena replay --check MATCH_ID`)"
            )
        _list_matches(ctx, db, tournament_ref, bot, _opponents(vs, bot), export_dir)
        return
    if record_ref is None:
        raise click.UsageError(
            "Missing argument 'RECORD': a record file or a stored match id (--list lists them)"
        )
    if len(record_refs) > 1:
        if not check:
            # (named: `--db --x t.sqlite m00003` took "--x" for the database, and the
            # two it was given were no two the user had meant as matches)
            shown = ", ".join(shlex.quote(printable(r)[:100]) for r in record_refs[:3])
            shown += ", ..." * (len(record_refs) > 3)
            databases = [r for r in record_refs if file_option(r) == "--db"]
            hint = f"; a database is given as --db {shlex.quote(databases[0])}" if databases else ""
            raise click.UsageError(
                f"one match is shown at a time, not {len(record_refs)} ({shown}); --check "
                f"checks several (arena replay --check FILE...){hint}"
            )
        _check_each(ctx, record_refs, db)
        return
    _one(ctx, record_ref, check, db)


def _check_each(ctx: click.Context, record_refs: tuple[str, ...], db: Path | None) -> None:
    """``--check A B ...``: each checked as if alone, under a ``== A`` line, then one line
    counting them and naming those that failed; the exit code is the worst of theirs (2 for
    one that is no record, else 1 for one the rules refuse). Records taken to another
    machine (``--list --export``) are checked so in one command, ``exported/*.json``."""
    # (a list, not a dict by name: one file named twice, failing, is two that failed)
    failed: list[tuple[str, int]] = []
    for ref in record_refs:
        click.echo(printable(f"== {ref}"))
        try:
            _one(ctx, ref, True, db)
        except click.exceptions.Exit as e:
            if e.exit_code:
                failed.append((ref, e.exit_code))
    bad = ", ".join(f"{ref} (exit {code})" for ref, code in failed)
    click.echo(printable(f"checked {len(record_refs)} records: {len(record_refs) - len(failed)} "
                         f"OK" + (f", {len(failed)} not: {bad}" if failed else "")))  # fmt: skip
    ctx.exit(max((code for _, code in failed), default=0))


def _one(ctx: click.Context, record_ref: str, check: bool, db: Path | None) -> None:
    """Show or ``check`` the one match ``record_ref`` names (a file, or an id in ``db``)."""
    from arena.storage import StorageError, newest_database, resolve_record

    if db is None and not Path(record_ref).is_file():
        db = newest_database()
        if db is None:
            # (a directory, a FIFO, /dev/null: "no such record file" would say nothing is there)
            what = "no such record file"
            if Path(record_ref).exists():
                what = "not a regular file (a directory, FIFO, device or socket)"
            _error(
                f"{record_ref}: {what}, and no database to look the match id up in (none "
                f"in runs/; pass --db){_served_record_hint(record_ref)}"
            )
            ctx.exit(2)
        click.echo(reading_newest(db), err=True)  # as `arena leaderboard` does
    try:
        record = resolve_record(record_ref, db)
    except (LookupError, StorageError) as e:
        _error(f"{e}{_served_record_hint(record_ref)}")
        ctx.exit(2)
    if db is not None and not Path(record_ref).is_file():
        note = _held_back_note(db, record_ref)
        if note is not None:
            click.echo(printable(note), err=True)
    # Everything below ends on the terminal, and a record file may come from anyone: its
    # names, actions and incidents are shown with escape sequences written out, not obeyed.
    record = _for_terminal(record)
    try:
        check_record_shape(record)  # "not a match record: ..." (docs/record-format.md)
    except ReplayError as e:
        _error(f"{record_ref}: {e.for_people()}")
        ctx.exit(2)
    if check:
        _check(ctx, record_ref, record)
    else:
        _show(ctx, record_ref, record)


def _held_back_note(db: Path, record_ref: str) -> str | None:
    """A note for stderr when the stored match ``record_ref`` is one `arena web` holds back
    (403) and ``--list --export`` leaves out: its tournament is unfinished and matches still
    to be played are dealt its cards (duplicate deals). The organiser may read it (the
    database is his); shown to a player of those matches, it tells him his opponents'
    hands there, and nothing else on the screen said so."""
    import sqlite3

    from arena.storage import Storage, StorageError, named_match
    from arena.web.data import held_back

    try:
        with Storage.open_readonly(db) as st:
            match_id = named_match(record_ref, st.find_match_ids(record_ref))
            why = None if match_id is None else held_back(st, match_id)
    except (StorageError, sqlite3.Error, OSError):  # (a note is no reason to fail the replay)
        return None
    if why is None:
        return None
    return (
        f"note: {why}: do not show it to their players before they are played (`arena "
        "web` holds its deals back, `arena replay --list --export` leaves it out)"
    )


def _show(ctx: click.Context, record_ref: str, record: dict[str, Any]) -> None:
    """Print the match deal by deal; exit 1 when the rules refuse an action or the match
    itself (it cannot start), or the record's own figures or cards differ from what the
    rules make of it."""
    from rich.text import Text

    from arena.render import render_record

    console = Console()
    if not console.is_terminal:
        # Into a file or a pipe (`> match.txt`, `| less`, `| grep`): every line whole. At
        # rich's 80 columns a deal's result line was cut between "scores" and its numbers,
        # an auction between "bid" and its amount; the tables keep their natural width.
        console = Console(file=console.file, width=_UNWRAPPED)
    try:
        rendered = render_record(record)
    except _MALFORMED as e:
        _malformed(ctx, record_ref, e)
    if isinstance(rendered, Text) and rendered.plain.startswith("cannot render"):
        # The shape was checked above (exit 2): what is left is a match the rules cannot
        # start (a ruleset that does not load, a card dealt twice, 1001-4p with 3 players),
        # which --check refuses with exit 1 ("REFUSED: ..."): the same code here. It was 2,
        # so the two commands disagreed on one file (docs/record-format.md).
        _error(f"{record_ref}: {rendered.plain}")
        ctx.exit(1)
    if console.is_terminal:
        console.print(rendered)
    else:  # (and without the tables' padding at the ends of lines: diff and grep see text)
        with console.capture() as captured:
            console.print(rendered)
        console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))
    parts = getattr(rendered, "renderables", ())
    if parts and isinstance(parts[-1], Text) and parts[-1].plain.startswith("refused:"):
        # Shown up to the action the rules refuse, as --check would say. When the record's
        # cards are not its seed's (its seed or hands were edited), that is the change, and
        # the refusal follows from it (a turn that is not the seat's, under another dealer):
        # say it, as --check does (naming as "above" only the deals shown up to there).
        stop = re.match(r"refused: Deal (\d+) \(record deal \d+\)(: numbered |: the deal bef)?",
                        parts[-1].plain)  # fmt: skip
        if stop is None:
            _changed_cards(record_ref, record)
        else:  # (refused at its start, "numbered ..." or "the deal before ...": not shown)
            _changed_cards(record_ref, record, int(stop[1]), at_start=stop[2] is not None)
        ctx.exit(1)
    # What is shown is what the rules make of the actions; a record whose own figures
    # (deltas, scores, result) say otherwise is not passed over in silence.
    try:
        replay_record(record)
    except ReplayError as e:
        # (its deal as numbered above, from 1, and as the record numbers it)
        _error(
            f"{record_ref}: the record's own figures differ from the replay shown "
            f"above: {e.for_people()} (arena replay --check {record_ref})",
        )
        ctx.exit(1)
    except _MALFORMED as e:
        _malformed(ctx, record_ref, e)
    if _changed_cards(record_ref, record):
        ctx.exit(1)


def _changed_cards(
    record_ref: str, record: dict[str, Any], shown_to: int | None = None, at_start: bool = False
) -> bool:
    """Say (``error: ...``) that a record the arena wrote holds cards its seed does not
    deal, naming the deals as shown above (from 1); whether it does. ``shown_to``: the deal
    (from 1) where the display stopped at a refusal; the deals after it are named as not
    shown (an edited seed changed every deal: "Deals 1, ..., 25 above" named 24 deals the
    display had not reached), and ``shown_to`` itself too when it was refused ``at_start``,
    before any of it was shown."""
    try:
        own = seed_mismatches(record)
    except (ReplayError, *_MALFORMED):
        return False  # (what is wrong with it is said otherwise)
    changed = changed_cards(record, own)
    if changed:
        last = len(record["deals"]) if shown_to is None else shown_to
        seen = last - 1 if at_start else last
        above = [str(n + 1) for n in own if n + 1 <= seen]
        later = [str(n + 1) for n in own if n + 1 > seen]
        where = []
        if above:
            where.append(f"Deal{'s' if len(above) > 1 else ''} {', '.join(above)} above")
        if later:
            where.append(
                f"{'' if above else 'Deal' + ('s' if len(later) > 1 else '') + ' '}"
                f"{', '.join(later)} not shown: the display stops "
                f"{'before' if at_start else 'in'} Deal {last}"
            )
        _error(f"{record_ref}: {changed} ({'; '.join(where)})")
    return changed is not None


def _check(ctx: click.Context, record_ref: str, record: dict[str, Any]) -> None:
    """``--check``: replay the match under the rules and say OK or REFUSED (exit 1)."""
    # Cards the seed does not deal, in a record the arena wrote, are said first: they are
    # the change, and whatever the replay then refuses (a card no longer held, a fallback
    # that is no longer the fallback) follows from it.
    try:
        own = seed_mismatches(record)
    except (ReplayError, *_MALFORMED):
        own = []  # (the replay below names what is wrong)
    changed = changed_cards(record, own)
    if changed:
        click.echo(f"REFUSED: {changed}", err=True)
        ctx.exit(1)
    try:
        game = replay_record(record)
    except ReplayError as e:
        click.echo(f"REFUSED: {e.for_people()}", err=True)
        if e.cause is not None:
            click.echo(f"rule broken: {e.cause.rule}", err=True)
        ctx.exit(1)
    except _MALFORMED as e:
        _malformed(ctx, record_ref, e)
    players = list(game.players)
    for res in game.deal_results:
        click.echo(
            f"deal {res.number + 1}: dealer {res.dealer}, declarer {res.declarer}, "
            f"{res.outcome}"
            + (f" {res.contract}" if res.contract is not None else f" (bid {res.bid})")
            + f"; deltas {list(res.deltas)}; scores {list(res.scores)}"
        )
    if game.result is not None:
        r = game.result
        click.echo(f"final ({r.reason}, {plural(r.deals, 'deal')}):")
        for seat in sorted(range(len(players)), key=lambda s: (r.places[s], s)):
            click.echo(
                f"  {r.places[seat]}. {players[seat]}: {r.scores[seat]} "
                f"(shortfall {r.shortfalls[seat]})"
            )
        limit = time_limit_note(record)
        if limit:
            click.echo(f"ended {limit}")
    else:
        click.echo(f"match not finished; scores {list(game.scores)}")
        # Why (as `arena replay` says it under the standings), its deal counted from 1 as
        # the deals above and `arena replay`'s (it said "deal 1" of what this said "deal
        # 0"): an abandoned match was read as one merely cut short, and its forfeits,
        # which --check names for a finished match, were not said. (The deal the game is
        # in: a record without deals was "in deal -1".)
        stopped = game.deal_number + 1
        if record.get("abandoned"):
            who = ", ".join(players[s] for s in _seats(record.get("forfeits"), len(players)))
            click.echo(
                f"abandoned in deal {stopped}: every seat forfeited ({who}); the record's "
                f"result, checked too, places them all {abandoned_places(record)}"
            )
        elif record.get("interrupted"):
            click.echo(
                f"interrupted in deal {stopped}: the referee was stopped before the match "
                "ended (no result)"
            )
    forfeits = record.get("forfeits") if record.get("rules_result") is not None else None
    forfeits = _seats(forfeits, len(players))
    if forfeits:
        # The rules' result is the one above; the record's own (the referee's, which
        # `arena replay` and the leaderboard show) places the forfeiters last.
        who = ", ".join(players[s] for s in forfeits)
        if record.get("result") == record.get("rules_result"):  # (accepted: see replay())
            click.echo(f"forfeited: {who} (the record's result is the rules' own, as shown)")
        else:
            click.echo(f"forfeited: {who} (the record's result, checked too, places them last)")
    click.echo("OK: every action is legal and every stored score matches")
    if own:
        # Not refused: a constructed record may deal its own cards; a referee's never does.
        click.echo(
            f"note: the hands and talon of deal(s) {', '.join(str(n + 1) for n in own)} are the "
            f"record's own, not the ones seed {record['seed']!r} deals",
            err=True,
        )


def _seats(value: Any, n: int) -> list[int]:
    """The seats of a record's ``forfeits`` (a list the shape check let through)."""
    return [s for s in value or () if type(s) is int and 0 <= s < n]


#: The width `arena replay` lays its tables out in when it does not write to a terminal:
#: wider than any (four names of 64 characters and their cards in a trick, a marriage), so
#: none is squeezed and no line is wrapped.
_UNWRAPPED = 1000

#: What a record of the right shape with values the renderer or the rules cannot use raises.
_MALFORMED = (AttributeError, TypeError, KeyError, ValueError, IndexError)


def _malformed(ctx: click.Context, record_ref: str, e: Exception) -> NoReturn:
    _error(f"{record_ref}: malformed match record: {e!r}")
    ctx.exit(2)


def _served_record_hint(record_ref: str) -> str:
    """Where `arena serve` (without --db) left the match ``record_ref`` names, when it did:
    its id alone is looked up in a database only, and the message sent a reader who had
    run the guide's rehearsal to a --db there is none of, the record lying in records/."""
    if not record_ref or Path(record_ref).name != record_ref:
        return ""  # (a path: it names the file itself)
    # serve's default --record-dir; the id in full, or a suffix of it after a '-' (m00003),
    # as a database's ids are looked up
    try:
        served = sorted(
            f
            for f in Path("records").iterdir()
            if f.suffix == ".jsonl" and (f.stem == record_ref or f.stem.endswith(f"-{record_ref}"))
        )
    except OSError:
        served = []
    if len(served) == 1 and served[0].is_file():
        return f"; arena serve recorded that match as {served[0]}: arena replay {served[0]}"
    if len(served) > 1:
        return (
            f"; arena serve recorded {len(served)} matches of ids ending in {record_ref} in "
            f"records/ ({served[0].name}, ...): name one, arena replay records/FILE"
        )
    return _exported_record_hint(record_ref)


def _exported_record_hint(record_ref: str) -> str:
    """Where a record of the match ``record_ref`` names lies as ``<match id>.json`` (what
    ``--list --export`` and ``arena-bot try --records`` write) in the current directory or
    one below it: records taken to another machine are read there by their file, and the
    match id alone, as at home, said only that no database was found."""

    def named(f: Path) -> bool:
        return f.suffix == ".json" and (f.stem == record_ref or f.stem.endswith(f"-{record_ref}"))

    found: list[Path] = []
    try:
        here = sorted(Path(".").iterdir())
        found = [f for f in here if named(f)]
        for sub in [d for d in here if d.is_dir() and not d.name.startswith(".")][:100]:
            if not found:  # (one level down, a folder of them: exported/, records/)
                with contextlib.suppress(OSError):
                    found = sorted(f for f in sub.iterdir() if named(f))
    except OSError:
        return ""
    if len(found) == 1 and found[0].is_file():
        return f"; its record is the file {found[0]}: arena replay {found[0]}"
    if len(found) > 1:
        return (f"; {len(found)} record files of ids ending in {record_ref} ({found[0]}, ...):"
                " name one, arena replay FILE")  # fmt: skip
    return ""


def _error(text: str) -> None:
    """``error: text`` on stderr, with what it quotes (a record's file name, a match id, a
    --bot name) :func:`printable`: an escape sequence there was obeyed by the terminal."""
    click.echo(printable(f"error: {text}", keep="\n"), err=True)


def _for_terminal(value: Any) -> Any:
    """``value`` (a record, parsed JSON) with every string but the seed :func:`printable`
    (the seed deals the cards; it is only ever shown by its ``repr``)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_for_terminal(v) for v in value]
    if isinstance(value, dict):
        return {printable(str(k)): v if k == "seed" else _for_terminal(v) for k, v in value.items()}
    return value


def _opponents(vs: tuple[str, ...], bot: str | None) -> list[str]:
    """The bots ``--vs`` names (:func:`comma_names`), as `arena web`'s ``vs=`` takes one:
    refused without ``--bot`` (whose matches against them are listed) and naming ``--bot``
    itself (its every match would be one "against" itself)."""
    names = comma_names(vs, "--vs", "bot")
    if names and bot is None:
        raise click.UsageError(
            f"--vs {','.join(names)} lists a bot's matches against others: give the bot too "
            "(--bot NAME --vs OTHER)"
        )
    if bot in names:
        raise click.BadParameter(
            f"{bot!r} is the --bot itself: name another bot of the tournament", param_hint="--vs"
        )
    return list(dict.fromkeys(names))  # (one named twice is one opponent)


def _list_matches(
    ctx: click.Context,
    db: Path | None,
    ref: str | None,
    bot: str | None,
    vs: list[str],
    export: Path | None,
) -> None:
    """``arena replay --list``: one line per stored match of the tournament, in schedule
    order, on stdout (what the tournament and the filter are goes to stderr, so that
    ``| cut -d' ' -f1`` gives the ids): ``ID  N deals  ann 37 (2nd)  bob ...  [! ...]``.
    ``bot``: its matches only; ``vs``: of those, the ones it played against each of them.
    With ``export``, each listed match's record is written there too (:func:`_export`)."""
    from arena.storage import ForeignDatabase, Storage, StorageError, newest_database
    from arena.web.data import sets_held_back
    from engine.record import ordinal

    if db is None:
        db = newest_database()
        if db is None:
            _error("no database to list matches from (none in runs/; pass --db)")
            ctx.exit(2)
        click.echo(reading_newest(db), err=True)  # as `arena leaderboard` does
    if not db.exists():
        _error(f"no database at {db} (run `arena tournament` first, or --db)")
        ctx.exit(2)
    try:
        with Storage.open_readonly(db) as st:
            try:
                tid = st.resolve_tournament(ref)
            except LookupError as e:
                # (the option is blamed only when given: an empty database is no option's)
                which = "--tournament: " if ref is not None else ""
                _error(f"{which}{e.args[0] if e.args else e}")
                ctx.exit(2)
            if ref is not None:  # (an id and another's name: said, not in silence)
                note = id_over_name_note(ref, st.named_too(ref))
                if note is not None:
                    click.echo(note, err=True)
            info = st.tournament(tid)
            named = [b for b in (bot, *vs) if b is not None]
            elsewhere = {b: st.tournaments_of(b) for b in named}
            results = st.match_results(tid)
            incidents = st.incidents(tid)
            limits = st.time_limits(tid)
            # (the records of the matches with such incidents only: they list the first 20)
            counted = {str(i["match_id"]) for i in incidents if i["kind"] in _COUNTED_KINDS}
            totals = st.incident_totals(tid, counted) if counted else {}
            # (an unfinished tournament's matches dealt the cards of matches still to be
            # played are not exported, as `arena web` does not show them: see _export)
            held = sets_held_back(st, info) if export is not None and info is not None else {}
            sets = dict(st.conn.execute(
                "SELECT id, set_no FROM matches WHERE tournament_id = ?", (tid,)
            ).fetchall()) if held else {}  # fmt: skip
            worst = _worst_deal(st, tid, bot, vs) if bot is not None else None
            exported = [
                r.match_id
                for r in results
                if export is not None
                and all(b in r.seats for b in named)
                and sets.get(r.match_id) not in held
            ]
    except StorageError as e:
        _error(str(e))
        # As `arena leaderboard` and `arena web` say it: 2 for the file named wrong (another
        # program's SQLite file), 1 for a database that cannot be read (empty, damaged).
        # (Not so for a match id: there 1 says the rules refuse the record, and a damaged
        # database must not read as a refused record in a script's --check.)
        ctx.exit(2 if isinstance(e, ForeignDatabase) else 1)
    bots = list(info.bots) if info is not None else []
    for r in results:  # (a stored match may seat a bot the tournament no longer lists)
        bots.extend(b for b in r.seats if b not in bots)
    for option, name in [("--bot", bot)] + [("--vs", v) for v in vs]:
        if name is not None and name not in bots:
            known = ", ".join(bots) or "none"
            # (a club's database holds a tournament a week: say where the bot did play)
            where = elsewhere.get(name)
            played = f"; {name} plays in {', '.join(where)} (--tournament ID)" if where else ""
            _error(f"{option}: no bot {name!r} in tournament {tid} (its bots: {known}){played}")
            ctx.exit(2)
    shown = [r for r in results if all(b in r.seats for b in named)]
    total = info.total_matches if info is not None else len(results)
    # `arena serve --db` stores a tournament with no set number of matches (total 0): "3 of
    # 0 stored" read as a count gone wrong; `arena leaderboard --list` shows it as "3/–".
    stored = (f"{len(results)} of {total} stored" if total
              else f"{len(results)} stored, no set number of matches")  # fmt: skip
    whose = "" if bot is None else f" played by {bot}" + (f" against {', '.join(vs)}" if vs else "")
    if not shown:
        click.echo(printable(f"no stored match{whose} in tournament {tid} in {db} ({stored})"),
                   err=True)  # fmt: skip
        return
    # which rules ran: two tournaments of one name may differ in their house rules
    config = info.config if info is not None and isinstance(info.config, dict) else {}
    rules = f" ({printable(describe_run(config['ruleset']))})" if "ruleset" in config else ""
    click.echo(printable(f"tournament {tid}{rules} in {db}: {len(shown)} match(es){whose} "
                         f"({stored}); per seat: bot score (place); ! forfeits, incidents and time "
                         "limits"),
               err=True)  # fmt: skip
    per_match: dict[str, list[dict[str, Any]]] = {}
    for inc in incidents:
        per_match.setdefault(str(inc["match_id"]), []).append(inc)
    # The names, ids and incidents are shown with the escape sequences a terminal would obey
    # written out (\x1b), as `arena replay MATCH_ID` shows them (a stored name holding one,
    # from a database written elsewhere, was obeyed here), and padded to the columns they
    # take on the screen: a wide character (🦔, 千) takes two, and shifted the columns after.
    rows = []
    for r in shown:
        seats = zip(r.seats, r.scores, r.places, strict=False)
        cells = [printable(f"{name} {score} ({ordinal(place)})") for name, score, place in seats]
        trouble = _trouble(
            r.seats, r.forfeits, per_match.get(r.match_id, []), totals.get(r.match_id, {})
        )
        if r.match_id in limits:
            # (the deals alone, "1 deal" of a 3-deal cap, said nothing of why it stopped)
            limit = f"ended by its time limit ({limits[r.match_id]:g} s)"
            trouble = f"{limit}; {trouble}" if trouble else limit
        trouble = printable(trouble)
        rows.append((printable(r.match_id), plural(r.deals, "deal"), cells, trouble))
    widths = [max(cell_len(row[0]) for row in rows), max(len(row[1]) for row in rows)]
    most = max(len(row[2]) for row in rows)
    cell_widths = [max((cell_len(row[2][k]) for row in rows if k < len(row[2])), default=0)
                   for k in range(most)]  # fmt: skip
    for match_id, deals, cells, trouble in rows:
        line = f"{_pad(match_id, widths[0])}  {deals:>{widths[1]}}  " + "  ".join(
            _pad(c, w) for c, w in zip(cells, cell_widths, strict=False)
        )
        click.echo((line + (f"  ! {trouble}" if trouble else "")).rstrip())
    if worst is not None:  # (why a bot lost: its worst deal, to replay first)
        match_id, number, delta = worst
        click.echo(printable(f"worst deal of {bot}: {match_id}, deal {number + 1} ({delta:+d}): "
                             f"arena replay {match_id}"), err=True)  # fmt: skip
    if export is not None:
        _export(ctx, export, db, exported, len(shown) - len(exported), tid)


def _worst_deal(
    st: Any, tid: str, bot: str, vs: list[str] | None = None
) -> tuple[str, int, int] | None:
    """``(match id, deal number from 0, score)`` of the deal of tournament ``tid`` in which
    ``bot`` scored least (the first such in schedule order; not one it dealt and sat out, in
    a game of four; with ``vs``, of its matches against each of them, those listed), or
    None: the deal a bot author
    reading why his bot lost replays first, which the list of final scores does not show."""
    vs = vs or []
    try:
        for name in (bot, *vs):
            name.encode("utf-8")
    except UnicodeEncodeError:  # (no stored name holds a lone surrogate: SQLite refuses it)
        return None
    delta = "json_extract(d.deltas_json, '$[' || p.seat || ']')"
    row = st.conn.execute(
        f"SELECT d.match_id, d.number, {delta} FROM deals d"
        " JOIN match_players p ON p.match_id = d.match_id"
        " JOIN matches m ON m.id = d.match_id"
        " WHERE m.tournament_id = ? AND p.bot = ? AND typeof(p.seat) = 'integer'"
        " AND typeof(d.deltas_json) = 'text' AND json_valid(d.deltas_json)"
        # (not a deal it sat out, the dealer of four: it scored the talon, made no decision)
        " AND NOT (d.dealer IS p.seat AND json_array_length(d.deltas_json) = 4)"
        f" AND typeof(d.number) = 'integer' AND typeof({delta}) = 'integer'"
        + " AND d.match_id IN (SELECT match_id FROM match_players WHERE bot = ?)" * len(vs)
        + f" ORDER BY {delta}, m.idx, d.number LIMIT 1",
        (tid, bot, *vs),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def _export(
    ctx: click.Context, directory: Path, db: Path, match_ids: list[str], held: int, tid: str
) -> None:
    """``--list --export DIR``: each record as ``DIR/<match id>.json`` (made if missing; a
    file of that name replaced), the format ``arena replay`` and ``--check`` read, and
    ``arena-bot try --records`` writes: a tournament's matches taken to another machine
    and checked there need no database. Matches dealt the same cards as matches of the
    tournament still to be played (duplicate deals, the tournament unfinished) are left
    out, saying how many: whoever read them would know his opponents' hands there. One
    record is read at a time (a tournament's records together can be hundreds of MB)."""
    import json
    import os

    from arena.storage import Storage, StorageError

    # The arena's ids are file names; one of a database edited or written elsewhere that
    # holds a "/" (or is "..") was written as DIR/<id>.json outside DIR, one with a NUL
    # ended in a traceback: refused before anything is written.
    strange = next((m for m in match_ids if m in ("", ".", "..") or "/" in m or "\0" in m
                    or (os.altsep is not None and os.altsep in m)), None)  # fmt: skip
    if strange is not None:
        _error(f"--export: match {printable(repr(strange))} of {printable(str(db))} has an id "
               "that is no file name (the database was changed outside the arena): nothing "
               "written")  # fmt: skip
        ctx.exit(2)
    written: list[str] = []
    unread: list[str] = []  # (the messages of the records that could not be read)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with Storage.open_readonly(db) as st:
            for match_id in match_ids:
                try:
                    record = st.load_record(match_id)
                except (StorageError, LookupError) as e:
                    # (a damaged record, a match deleted meanwhile: the others are still
                    # written; the first one met stopped the export, the rest unwritten)
                    unread.append(f"--export: {e}")
                    continue
                path = directory / f"{match_id}.json"
                # (beside it, then in its place: a write cut short leaves no half a record)
                part = directory / f".{match_id}.json.part"
                part.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
                os.replace(part, path)
                written.append(match_id)
    except OSError as e:
        for part in directory.glob(".*.json.part") if directory.is_dir() else ():
            with contextlib.suppress(OSError):  # (no half-written record left behind)
                part.unlink()
        _error(f"--export {directory}: cannot write there: {e.strerror or e}")
        ctx.exit(1)
    except (StorageError, LookupError) as e:  # (the database itself)
        _error(f"--export: {e}")
        ctx.exit(1)  # (what was named cannot be read, as the list's own reading says)
    said = printable(
        f"wrote {len(written)} record(s) into {directory}"
        + (f" ({directory / written[0]}.json, ...): arena replay FILE, "
           "arena replay --check FILE read them anywhere, no database needed"
           if written else "")
    )  # fmt: skip
    if held:
        said += (
            f"; {held} match(es) left out: tournament {printable(tid)} is unfinished and "
            "they are dealt the same cards as matches still to be played (duplicate "
            "deals): export them once it has ended"
        )
    click.echo(said, err=True)
    if unread:
        for message in unread:
            _error(message)
        _error(f"--export: {len(unread)} of the {len(match_ids)} record(s) listed could not be "
               "read, and were not written")  # fmt: skip
        ctx.exit(1)  # (what was named cannot be read, as the list's own reading says)


def _pad(text: str, width: int) -> str:
    """``text`` and spaces up to ``width`` columns of a terminal (:func:`rich.cells.cell_len`)."""
    return text + " " * max(0, width - cell_len(text))


def _trouble(
    seats: tuple[str, ...],
    forfeits: tuple[int, ...],
    incidents: list[dict[str, Any]],
    totals: Mapping[str, list[int]] | None = None,
) -> str:
    """``"mine forfeited; mine: 2 timeouts, 1 malformed; cid: 1 disconnect"``, or ``""``.
    ``totals``: the record's per-seat counts of the incidents it lists only up to a limit
    (kind → one count per seat), which win over the ones listed, as in `arena replay`."""
    from arena.render import counted

    bits = [f"{seats[s]} forfeited" for s in forfeits if 0 <= s < len(seats)]
    counts: dict[str, dict[str, int]] = {}
    listed: dict[tuple[int, str], str] = {}  # (seat, kind) -> who, of the counted kinds
    for inc in incidents:
        kind = str(inc.get("kind"))
        if kind == "forfeit":
            continue  # said above
        who = str(inc.get("bot") or f"seat {inc.get('seat')}")
        counts.setdefault(who, {}).setdefault(kind, 0)
        counts[who][kind] += 1
        if isinstance(inc.get("seat"), int):
            listed[inc["seat"], kind] = who
    for (seat, kind), who in listed.items():
        per_seat = (totals or {}).get(kind, [])
        if 0 <= seat < len(per_seat) and per_seat[seat] > counts[who][kind]:
            counts[who][kind] = per_seat[seat]
    for who, kinds in counts.items():
        bits.append(f"{who}: {counted(kinds, list(kinds))}")
    return "; ".join(bits)
