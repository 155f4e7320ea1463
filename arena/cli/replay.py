"""``arena replay [--check] RECORD``: show or verify a match, from a record file or a database.

``RECORD`` is a record JSON file, or a stored match id (a unique suffix such as ``m00012``
is enough) looked up in ``--db`` (default: the newest ``runs/*.sqlite``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from arena.cli.options import NonEmptyPath, reading_newest
from engine import ReplayError
from engine import replay as replay_record
from engine.record import check_record_shape, seed_mismatches

__all__ = ["replay"]


@click.command("replay")
@click.argument("record_ref", metavar="RECORD")
@click.option("--check", is_flag=True, help="Replay through the rules and verify every score.")
@click.option(
    "--db",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="Tournament database to look match ids up in (default: the newest runs/*.sqlite).",
)
@click.pass_context
def replay(ctx: click.Context, record_ref: str, check: bool, db: Path | None) -> None:
    """Pretty-print a match deal by deal and trick by trick, or --check it against the rules."""
    from arena.storage import StorageError, newest_database, resolve_record

    if db is None and not Path(record_ref).is_file():
        db = newest_database()
        if db is None:
            click.echo(
                f"error: {record_ref}: no such record file, and no database to look the match "
                "id up in (none in runs/; pass --db)",
                err=True,
            )
            ctx.exit(2)
        click.echo(reading_newest(db), err=True)  # as `arena leaderboard` does
    try:
        record = resolve_record(record_ref, db)
    except (LookupError, StorageError) as e:
        click.echo(f"error: {e}", err=True)
        ctx.exit(2)
    try:
        check_record_shape(record)  # "not a match record: ..." (docs/record-format.md)
    except ReplayError as e:
        click.echo(f"error: {record_ref}: {e}", err=True)
        ctx.exit(2)
    console = Console()
    if not check:
        from rich.text import Text

        from arena.render import render_record

        try:
            rendered = render_record(record)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
            click.echo(f"error: {record_ref}: malformed match record: {e!r}", err=True)
            ctx.exit(2)
        if isinstance(rendered, Text) and rendered.plain.startswith("cannot render"):
            click.echo(f"error: {record_ref}: {rendered.plain}", err=True)
            ctx.exit(2)
        console.print(rendered)
        parts = getattr(rendered, "renderables", ())
        if parts and isinstance(parts[-1], Text) and parts[-1].plain.startswith("refused:"):
            ctx.exit(1)  # shown up to the action the rules refuse, as --check would say
        # What is shown is what the rules make of the actions; a record whose own figures
        # (deltas, scores, result) say otherwise is not passed over in silence.
        try:
            replay_record(record)
        except ReplayError as e:
            # The engine names deals from 0 (the record's numbers); the deals above are
            # numbered from 1.
            above = "" if e.deal is None else f" (Deal {e.deal + 1} above)"
            click.echo(
                f"error: {record_ref}: the record's own figures differ from the replay shown "
                f"above: {e}{above} (arena replay --check {record_ref})",
                err=True,
            )
            ctx.exit(1)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
            click.echo(f"error: {record_ref}: malformed match record: {e!r}", err=True)
            ctx.exit(2)
        changed = _changed_cards(record, seed_mismatches(record))
        if changed:
            click.echo(f"error: {record_ref}: {changed}", err=True)
            ctx.exit(1)
        return
    try:
        game = replay_record(record)
    except ReplayError as e:
        click.echo(f"REFUSED: {e}", err=True)
        if e.cause is not None:
            click.echo(f"rule broken: {e.cause.rule}", err=True)
        ctx.exit(1)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
        click.echo(f"error: {record_ref}: malformed match record: {e!r}", err=True)
        ctx.exit(2)
    own = seed_mismatches(record)
    changed = _changed_cards(record, own)
    if changed:
        click.echo(f"REFUSED: {changed}", err=True)
        ctx.exit(1)
    players = list(game.players)
    for res in game.deal_results:
        click.echo(
            f"deal {res.number}: dealer {res.dealer}, declarer {res.declarer}, "
            f"{res.outcome}"
            + (f" {res.contract}" if res.contract is not None else f" (bid {res.bid})")
            + f"; deltas {list(res.deltas)}; scores {list(res.scores)}"
        )
    if game.result is not None:
        r = game.result
        click.echo(f"final ({r.reason}, {r.deals} deals):")
        for seat in sorted(range(len(players)), key=lambda s: (r.places[s], s)):
            click.echo(
                f"  {r.places[seat]}. {players[seat]}: {r.scores[seat]} "
                f"(shortfall {r.shortfalls[seat]})"
            )
    else:
        click.echo(f"match not finished; scores {list(game.scores)}")
    forfeits = record.get("forfeits") if record.get("rules_result") is not None else None
    forfeits = [s for s in forfeits or () if type(s) is int and 0 <= s < len(players)]
    if forfeits:
        # The rules' result is the one above; the record's own (the referee's, which
        # `arena replay` and the leaderboard show) places the forfeiters last.
        who = ", ".join(players[s] for s in forfeits)
        click.echo(f"forfeited: {who} (the record's result, checked too, places them last)")
    click.echo("OK: every action is legal and every stored score matches")
    if own:
        # Not refused: a constructed record may deal its own cards; a referee's never does.
        click.echo(
            f"note: the hands and talon of deal(s) {', '.join(map(str, own))} are the "
            f"record's own, not the ones seed {record['seed']!r} deals",
            err=True,
        )


def _changed_cards(record: dict[str, Any], own: list[int]) -> str | None:
    """Why a record the arena wrote (it names its ``match_id``) was changed, when deals
    ``own`` hold cards its seed does not deal: the referee deals every match from its seed.
    A record without ``match_id`` may deal its own cards (a constructed rule case)."""
    if not own or "match_id" not in record:
        return None
    return (
        f"the hands and talon of deal(s) {', '.join(map(str, own))} are not the ones seed "
        f"{record['seed']!r} deals, and the arena deals every match it records from its "
        "seed: the record was changed"
    )
