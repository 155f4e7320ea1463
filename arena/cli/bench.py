"""``arena bench [SECTION...] [--only SECTION] [--json]``: print the benchmark figures.

Sections come from :data:`arena.bench.SECTIONS`; those whose module does not exist yet are
skipped when none is named.
"""

from __future__ import annotations

import re
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena import strict_json
from arena.bench import SECTIONS, run_sections
from arena.cli.options import Seconds, check_grpc_environment
from arena.render import fitted

__all__ = ["bench"]


def _rows(prefix: str, value: Any) -> list[tuple[str, str, str]]:
    """Flatten ``{"classic": {"deals_per_s": 1.0}}`` into (what, metric, value) rows."""
    if isinstance(value, dict):
        if all(not isinstance(v, dict) for v in value.values()):
            return [(prefix, str(k), _fmt(v)) for k, v in value.items()]
        rows: list[tuple[str, str, str]] = []
        for k, v in value.items():
            rows.extend(_rows(f"{prefix} {k}".strip(), v))
        return rows
    return [(prefix, "", _fmt(value))]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _target_rows(results: dict[str, dict[str, Any]]) -> list[tuple[str, str, str, str, str]]:
    """(section, target name, measured, target, met) for every section's ``targets`` dict:
    entries ``{"ratio": r, "target": t, "met": b}`` (at least t) or ``{"value": v, ...}``
    (under t)."""
    rows: list[tuple[str, str, str, str, str]] = []
    for section, figures in results.items():
        targets = figures.get("targets")
        if not isinstance(targets, dict):
            continue
        for name, t in targets.items():
            if not isinstance(t, dict) or "target" not in t:
                continue
            if "ratio" in t:
                measured, goal = f"{t['ratio']:.2f}x", f">= {t['target']:g}x"
            else:
                measured, goal = _fmt(t.get("value")), f"< {t['target']:g}"
            rows.append((section, name, measured, goal, "yes" if t.get("met") else "NO"))
    return rows


def _figures_table(results: dict[str, dict[str, Any]]) -> Table:
    """Every figure, a row each. The metric names are never cut (in 80 columns they were
    elided to "referee_cpu_us_pe…", and several read alike), nor the section names
    ("grpc_baseli…"), nor the figures; what was measured wraps, a long name folded
    rather than cut ("event_engine…" did not say which of the two measurements it was).
    Where even that does not fit, :func:`fitted` shows the rows as lines."""
    rows = [
        (name, what, metric, value)
        for name, figures in results.items()
        for what, metric, value in _rows("", figures)
    ]
    table = Table(title="Thousand Arena benchmarks")
    table.add_column("section", no_wrap=True, min_width=max((len(r[0]) for r in rows), default=7))
    table.add_column("what", overflow="fold")
    table.add_column("metric", no_wrap=True, min_width=max((len(r[2]) for r in rows), default=6))
    # A figure is never folded (in 40 columns "21,9" over "09.2" read as two); a setup's
    # words wrap.
    figures = [r[3] for r in rows if re.fullmatch(r"[-+]?[\d,]+(\.\d+)?", r[3])]
    table.add_column("value", justify="right", overflow="fold",
                     min_width=max(map(len, figures), default=5))  # fmt: skip
    for row in rows:
        table.add_row(*row)
    return table


@click.command(
    "bench",
    help=f"Run the benchmarks and print their figures: every section ({', '.join(SECTIONS)}), "
    "or only the SECTIONS named (or --only). docs/performance.md says what each measures.",
)
@click.argument("sections", nargs=-1)
@click.option("--only", "only", multiple=True, help="Run only this section (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--seconds", type=Seconds(min=0, min_open=True), default=2.0,
              show_default=True, help="Time per measurement.")  # fmt: skip
def bench(sections: tuple[str, ...], only: tuple[str, ...], as_json: bool, seconds: float) -> None:
    """Run the benchmark sections (help above: :data:`arena.bench.SECTIONS`)."""
    wanted = list(dict.fromkeys([*sections, *only]))
    for name in wanted:
        hint = "SECTION" if name in sections else "'--only'"  # where the reader typed it
        if name not in SECTIONS:
            raise click.BadParameter(
                f"unknown section {name!r} (known: {', '.join(SECTIONS)})", param_hint=hint
            )
    if set(wanted or SECTIONS) - {"engine"}:
        # (every section but the engine's starts gRPC, which aborted on a bad
        # GRPC_POLL_STRATEGY: a traceback, "baseline server did not start")
        check_grpc_environment()
    results = run_sections(wanted or None, seconds=seconds)
    if as_json:
        click.echo(strict_json.dumps(results, indent=2))
        return
    console = Console()
    console.print(fitted(_figures_table(results)))
    target_rows = _target_rows(results)
    if target_rows:
        targets = Table(title="Targets (ratios measured in this run)")
        for col in ("section", "target", "measured", "goal", "met"):
            targets.add_column(col, justify="right" if col in ("measured", "goal") else "left")
        for row in target_rows:
            targets.add_row(*row)
        console.print(fitted(targets))
