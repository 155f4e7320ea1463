"""Review 55d: round 55's merged changes read, and mutated by hand.

Reviewed: the CLI's refusal of an option given another option as its value and its hint at
a long option typed with one dash (arena/cli/options.py), ``arena replay`` naming several
references, ``arena-bot try --records`` made once the options are checked (sdk/cli.py);
the recording share's parts (``TournamentOutcome``, ``recording_parts``, ``share_summary``,
``python -m arena.bench.tournament``); the CSV's rounding (arena/leaderboard/render.py);
hostile round 55's protocol machine against mutants of the referee's checks.

Defects found, each with its test below: a Tab of the shell after ``arena tournament
--config --fresh`` was a traceback (the refusal ran in click's completion too); an option
whose value may be left out (click's ``is_flag=False, flag_value=...``) would have been
refused before another option, where click gives it its flag value; ``arena replay`` named
a database of two references only when spelled ``.sqlite`` or ``.db`` (not ``.sqlite3``,
not ``T.SQLITE``, which ``arena tournament``'s hint knows); ``python -m
arena.bench.tournament --seconds inf`` ended in an OverflowError's traceback.

The mutants, each named by the test that kills it (``M<id>``), are listed in the report of
review55d; the tally is at the end of this docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import arena.bench.tournament as bench_mod
from arena.cli import main as arena_main
from arena.cli.options import FileErrorsGroup
from sdk.cli import main as arena_bot_main
from tests.cli.test_bad_input_round55 import _invoke, _refusal

# --- defects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "prog", "words"),
    [
        (arena_main, "arena", "arena tournament --config --fresh --"),
        (arena_bot_main, "arena-bot", "arena-bot run random --token --tls --"),
    ],
)
def test_shell_completion_after_an_option_given_an_option_is_no_traceback(
    group: click.Group, prog: str, words: str
) -> None:
    """Defect: the refusal of an option given another option as its value ran while the
    shell completed a word (click's resilient parsing): a Tab there printed a traceback.
    Completion offers the command's options, as before round 55."""
    env = {f"_{prog.upper().replace('-', '_')}_COMPLETE": "bash_complete",
           "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}  # fmt: skip
    r = CliRunner().invoke(group, [], env=env, prog_name=prog)
    assert r.exit_code == 0, (r.output, r.exception)
    assert "Traceback" not in r.output and "requires an argument" not in r.output
    offered = {line.split(",", 1)[1] for line in r.stdout.splitlines()}
    assert "--help" in offered, r.stdout


def _optional_value_group() -> click.Group:
    seen: dict[str, Any] = {}

    @click.group(cls=FileErrorsGroup)
    def g() -> None:
        pass

    @g.command()
    @click.option("--level", is_flag=False, flag_value="info", default="off")
    @click.option("--name")
    @click.option("--json", "as_json", is_flag=True)
    def c(level: str, name: str | None, as_json: bool) -> None:
        seen.update(level=level, name=name, json=as_json)
        click.echo(repr(sorted(seen.items())))

    return g


def test_an_option_whose_value_may_be_left_out_takes_none_before_another() -> None:
    """Defect: an option whose value may be left out (``is_flag=False, flag_value=...``)
    was counted among those that take one: ``--level --json`` (click: level "info", the
    flag set) would be refused. A plain option given an option is still refused."""
    g = _optional_value_group()
    r = CliRunner().invoke(g, ["c", "--level", "--json"])
    assert r.exit_code == 0, r.output
    assert "('json', True), ('level', 'info')" in r.output, r.output
    r = CliRunner().invoke(g, ["c", "--name", "--json"])
    assert r.exit_code == 2, r.output
    assert "Option '--name' requires an argument: --json, after it, is an option" in r.output


@pytest.mark.parametrize("db", ["t.sqlite3", "T.SQLITE", "runs/x.DB"])
def test_replay_names_a_database_by_any_suffix_the_arena_knows(tmp_path: Path, db: str) -> None:
    """Defect: ``arena replay`` given two references named one as a database only when
    spelled ``.sqlite`` or ``.db``: ``t.sqlite3`` (a suffix ``arena tournament``'s hint
    knows) and an upper-case suffix were not."""
    line = _refusal(_invoke("arena", ["replay", db, "m00000"], tmp_path))
    assert f"a database is given as --db {db}" in line, line


def test_bench_tournament_refuses_infinite_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    """Defect: ``python -m arena.bench.tournament --seconds inf`` passed the check (inf > 0)
    and ended in ``round(inf)``'s OverflowError traceback."""
    with pytest.raises(SystemExit) as e:
        bench_mod.main(["--seconds", "inf"])
    assert e.value.code == 2
    assert "--seconds must be a finite number, not inf" in capsys.readouterr().err
