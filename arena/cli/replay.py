"""``arena replay [--check] RECORD``: show or verify a match, from a record file or a database.

``RECORD`` is a record JSON file, or a stored match id (a unique suffix such as ``m00012``
is enough) looked up in ``--db`` (default: the newest ``runs/*.sqlite``).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from engine import ReplayError
from engine import replay as replay_record

__all__ = ["replay"]


@click.command("replay")
@click.argument("record_ref", metavar="RECORD")
@click.option("--check", is_flag=True, help="Replay through the rules and verify every score.")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Tournament database to look match ids up in (default: the newest runs/*.sqlite).",
)
@click.pass_context
def replay(ctx: click.Context, record_ref: str, check: bool, db: Path | None) -> None:
    """Pretty-print a match deal by deal and trick by trick, or --check it against the rules."""
    from arena.storage import StorageError, newest_database, resolve_record

    try:
        record = resolve_record(record_ref, db or newest_database())
    except (LookupError, StorageError) as e:
        click.echo(f"error: {e}", err=True)
        ctx.exit(2)
    console = Console()
    if not check:
        from arena.render import render_record

        console.print(render_record(record))
        return
    try:
        game = replay_record(record)
    except ReplayError as e:
        click.echo(f"REFUSED: {e}", err=True)
        if e.cause is not None:
            click.echo(f"rule broken: {e.cause.rule}", err=True)
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
    click.echo("OK: every action is legal and every stored score matches")
