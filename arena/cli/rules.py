"""``arena rules PRESET_OR_FILE [--players N] [--json]``: print a resolved ruleset.

The text form is TOML (it loads back with ``load_ruleset``), after a comment that says how
a ruleset other than a preset differs from its preset; a bad file or option prints
the key at fault and exits with code 2. ``--players`` resolves it for a table of that size
as a match of that size does (``1001`` for 4 is ``1001-4p``), and refuses a ruleset that
seats another number.
"""

from __future__ import annotations

import json as jsonlib

import click

from arena import strict_json
from engine import RulesetError, load_ruleset
from engine.rules import PRESETS, describe_ruleset

__all__ = ["rules", "to_toml"]


def to_toml(options: dict[str, object]) -> str:
    """A flat dict of str/int/bool values as TOML lines."""
    lines = []
    for key, value in options.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = jsonlib.dumps(str(value), ensure_ascii=False)
        lines.append(f"{key} = {text}")
    return "\n".join(lines)


@click.command("rules")
@click.argument("preset_or_file")
@click.option(
    "--players",
    type=click.IntRange(3, 4),
    help="Resolve it for a table of this many players, as a match of that size does "
    "(1001 for 4 is 1001-4p); a ruleset that seats another number is refused.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ruleset as JSON.")
@click.pass_context
def rules(ctx: click.Context, preset_or_file: str, players: int | None, as_json: bool) -> None:
    """Print the ruleset PRESET_OR_FILE (classic, 1001, 1001-4p, or a house-rule TOML file
    such as a checkout's rulesets/house-penalty.toml, rulesets/tournament-1001.toml and
    rulesets/classic-capped.toml) resolved, every option with its value."""
    try:
        ruleset = load_ruleset(preset_or_file, players)
    except RulesetError as e:
        # A file's error names the file itself (as every command prints it): not twice.
        what = str(e) if e.source is not None else f"{preset_or_file!r}: {e}"
        click.echo(f"error: bad ruleset {what}", err=True)
        ctx.exit(2)
    if players is not None and ruleset.players != players:
        # No ruleset of that size: printing the other one would show options no table of
        # `players` plays ("classic" seats 3 whatever the count asked for).
        sized = [name for name, p in PRESETS.items() if p.players == players]
        click.echo(
            f"error: ruleset {ruleset.name!r} seats {ruleset.players} players, not {players}; "
            f"the presets for {players}: {', '.join(sized)}",
            err=True,
        )
        ctx.exit(2)
    options = ruleset.to_dict()
    if as_json:
        click.echo(strict_json.dumps(options, indent=2, ensure_ascii=False))
    else:
        # A house file, or one that reuses a preset's name, says first how it differs from
        # its preset (a TOML comment: the text still loads back); a preset is its name.
        said = describe_ruleset(ruleset, deal_cap=True)
        if said != ruleset.name:
            click.echo(f"# {said}")
        click.echo(to_toml(options))
