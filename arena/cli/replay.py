"""``arena replay [--check] RECORD``: show or verify a match record.

``RECORD`` is resolved to a record dict by :func:`resolve_record`, which tries each function
of :data:`RESOLVERS` in turn (today: a JSON file; a stored match id can be added by
appending a resolver, e.g. ``RESOLVERS.append(from_database)``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from engine import ReplayError
from engine import replay as replay_record

__all__ = ["RESOLVERS", "RecordNotFound", "replay", "resolve_record"]


class RecordNotFound(LookupError):
    """No resolver knows the reference."""


def from_json_file(ref: str) -> dict[str, Any] | None:
    """A record stored as a JSON file (``None`` if ``ref`` is not an existing file)."""
    path = Path(ref)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise click.ClickException(f"cannot read {ref}: {e}") from e
    if not isinstance(data, dict):
        raise click.ClickException(f"{ref}: a record is a JSON object")
    return data


#: Functions ``ref -> record | None``, tried in order.
RESOLVERS: list[Callable[[str], dict[str, Any] | None]] = [from_json_file]


def resolve_record(ref: str) -> dict[str, Any]:
    """The record that ``ref`` names (a JSON file path, or whatever a resolver accepts)."""
    for resolve in RESOLVERS:
        found = resolve(ref)
        if found is not None:
            return found
    raise RecordNotFound(f"no record {ref!r} (not a JSON file, nor a stored match)")


@click.command("replay")
@click.argument("record_ref", metavar="RECORD")
@click.option("--check", is_flag=True, help="Replay through the rules and verify every score.")
@click.pass_context
def replay(ctx: click.Context, record_ref: str, check: bool) -> None:
    """Pretty-print a match record deal by deal, or --check it against the rules."""
    try:
        record = resolve_record(record_ref)
    except RecordNotFound as e:
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
