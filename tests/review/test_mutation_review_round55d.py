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
review55d. Tally: 78 hand mutants (74 of round 55's code, 4 of this review's fixes); 48
killed by existing tests (43 by round 55's own; the referee's H8, H11-H14 by older ones:
the protocol machine does not look at events, plays no foresight on a stale view and
stays under the refusal cap), 27 by the tests here (H4 by the machine's new check of
wrong requests in the record), 3 equivalent (D2: click guesses at no short option; D4:
a word the hint names starts with "-" as an option's spelling does; B11: every run of
the section has the same concurrencies).
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


# --- mutants of the refusal of an option given an option (arena/cli/options.py) --------------


def _subcommands() -> list[tuple[click.Group, click.Command, str]]:
    out = []
    for group in (arena_main, arena_bot_main):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            assert cmd is not None
            out.append((group, cmd, name))
    return out


def _resolve(group: click.Group, name: str, args: list[str]) -> None:
    """The group's own ``resolve_command`` of ``name args`` (where the refusal is made)."""
    group.resolve_command(click.Context(group, info_name=group.name), [name, *args])


def _names(cmd: click.Command) -> list[str]:
    return [o for p in cmd.params for o in (*p.opts, *p.secondary_opts)] + ["--help"]


def test_M_O2_O3_O8_a_flag_or_count_before_another_option_is_no_refusal() -> None:
    """Mutants O2 (flags counted as options taking a value), O3 (counts so counted), O8
    (any option before another refused): of every subcommand of both CLIs, a flag or a
    count followed by each of the command's options is no refusal."""
    checked = 0
    for group, cmd, name in _subcommands():
        flags = [o for p in cmd.params if isinstance(p, click.Option) and (p.is_flag or p.count)
                 for o in p.opts]  # fmt: skip
        for flag in flags:
            for other in _names(cmd):
                _resolve(group, name, [flag, other])
                checked += 1
    assert checked > 50
    counted = [(g, c, n) for g, c, n in _subcommands()
               if any(isinstance(p, click.Option) and p.count for p in c.params)]  # fmt: skip
    assert counted, "no count option left to check (arena tournament -v was one)"


def test_M_O4_O5_every_option_taking_a_value_is_refused_before_each_other() -> None:
    """Mutants O4 (an option's ``--no-x`` spelling not counted as an option), O5 (--help not
    counted): every option of every subcommand that takes a value, followed by each of the
    command's options (a ``--no-x`` spelling and --help among them), is refused naming both.
    (No subcommand has a ``--x/--no-x`` flag today: a command of FileErrorsGroup's with one
    is checked too.)"""
    checked = 0
    for group, cmd, name in _subcommands():
        valued = [o for p in cmd.params if isinstance(p, click.Option) and not p.is_flag
                  and not p.count for o in p.opts]  # fmt: skip
        for opt in valued:
            for other in _names(cmd):
                with pytest.raises(click.UsageError) as e:
                    _resolve(group, name, [opt, other])
                assert f"Option '{opt}' requires an argument: {other}, after it" in str(e.value)
                checked += 1
    assert checked > 100

    @click.group(cls=FileErrorsGroup)
    def g() -> None:
        pass

    @g.command()
    @click.option("--name")
    @click.option("--tls/--no-tls")
    def c(name: str | None, tls: bool) -> None:
        click.echo(f"{name} {tls}")

    r = CliRunner().invoke(g, ["c", "--name", "--no-tls"])
    assert r.exit_code == 2 and "'--name' requires an argument: --no-tls" in r.output, r.output
    r = CliRunner().invoke(g, ["c", "--name=--no-tls", "--tls"])
    assert r.exit_code == 0 and r.output == "--no-tls True\n", r.output


def test_M_O6_what_follows_a_double_dash_is_arguments_not_options(tmp_path: Path) -> None:
    """Mutant O6 (the scan not stopped at ``--``): ``arena replay -- --db --list`` names two
    record files "--db" and "--list" (click's own reading): refused as two references, not
    as an option given an option."""
    line = _refusal(_invoke("arena", ["replay", "--", "--db", "--list"], tmp_path))
    assert "one match is shown at a time, not 2 (--db, --list)" in line, line
    for group, cmd, name in _subcommands():
        valued = [o for p in cmd.params if isinstance(p, click.Option) and not p.is_flag
                  and not p.count for o in p.opts]  # fmt: skip
        for opt in valued:
            _resolve(group, name, ["--", opt, "--help"])


# --- mutants of the one-dash hint -------------------------------------------------------------


def test_the_hint_where_another_option_is_a_near_spelling_of_the_letter() -> None:
    """Of ``-json`` where ``--js`` is a near spelling of ``-j``, the hint, and no guess.
    (Mutant D2, click's guess kept, is equivalent with click 8.5: it guesses at a long
    option only, never at the letter of a short one.)"""

    @click.group(cls=FileErrorsGroup)
    def g() -> None:
        pass

    @g.command()
    @click.option("--json", is_flag=True)
    @click.option("--js", is_flag=True)
    def c(json: bool, js: bool) -> None:
        pass

    r = CliRunner().invoke(g, ["c", "-json"])
    assert r.exit_code == 2
    assert "No such option '-j'. (-json has one dash: the option is --json)" in r.output
    assert "Did you mean" not in r.output, r.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # D3: the hint only for a word that holds the letter click did not know
        (["tournament", "-vx", "-verbose"], "Error: No such option '-x'."),
        # D6: of an unknown long option, no hint at a one-dash word after it
        (["tournament", "--bogus", "-no-progress"],
         "Error: No such option '--bogus'. (Did you mean one of: '--out', '--verbose'?)"),
        # D7: nothing after `--` is an option
        (["tournament", "-e", "--", "-verbose"], "Error: No such option '-e'."),
    ],
)  # fmt: skip
def test_M_D3_D6_D7_no_hint_where_the_word_is_not_what_click_refused(
    tmp_path: Path, args: list[str], line: str
) -> None:
    """Mutants D3 (the letter not looked for in the word), D6 (any unknown option, not a
    letter of a short one), D7 (words after ``--`` looked at): click's words alone."""
    assert _refusal(_invoke("arena", args, tmp_path)) == line


def test_M_D5_D9_a_one_dash_word_with_its_value_after_an_equals_sign(tmp_path: Path) -> None:
    """Mutants D5 (the word's ``=value`` kept) and D9 (the hint naming the word, not what
    was typed): ``-seed=3`` is named as typed, and its option."""
    line = _refusal(_invoke("arena-bot", ["try", "random", "-seed=3"], tmp_path))
    assert line == ("Error: No such option '-s'. (-seed=3 has one dash: the option is --seed)"), (
        line
    )


def test_M_D8_a_no_spelling_is_a_long_option_of_the_hint() -> None:
    """Mutant D8 (a flag's ``--no-x`` spelling not among the long options): ``-no-tls``
    is hinted as ``--no-tls``."""

    @click.group(cls=FileErrorsGroup)
    def g() -> None:
        pass

    @g.command()
    @click.option("--tls/--no-tls")
    def c(tls: bool) -> None:
        pass

    r = CliRunner().invoke(g, ["c", "-no-tls"])
    assert r.exit_code == 2
    assert "(-no-tls has one dash: the option is --no-tls)" in r.output, r.output


# --- mutants of arena replay's references and arena-bot try --records ------------------------


def test_M_R5_the_first_database_named_is_the_hint(tmp_path: Path) -> None:
    """Mutant R5 (the last database named in the hint): of ``a.sqlite b.db``, the first."""
    line = _refusal(_invoke("arena", ["replay", "a.sqlite", "b.db"], tmp_path))
    assert line.endswith("; a database is given as --db a.sqlite"), line


LEAVER = """import os
from sdk import Bot

os.chdir(os.environ["REVIEW55D_ELSEWHERE"])  # (its import changes the working directory)


class Leaver(Bot):
    name = "leaver"
"""


def test_M_T2_records_go_where_try_was_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant T2 (``--records`` kept relative): a bot whose import changes the working
    directory still has its records written into ``--records`` of the directory ``try``
    was started in."""
    (tmp_path / "leaver.py").write_text(LEAVER, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("REVIEW55D_ELSEWHERE", str(elsewhere))
    r = _invoke("arena-bot", ["try", "leaver.py", "-n", "1", "--max-deals", "1",
                              "--records", "recs"], tmp_path)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [p.name for p in (tmp_path / "recs").iterdir()] == ["local-0-0.json"]
    assert not (elsewhere / "recs").exists()


def test_M_T3_T4_a_records_directory_refused_names_it_as_given(tmp_path: Path) -> None:
    """Mutants T3 (no check that the directory takes a file) and T4 (the directory named
    as made absolute): refused before any match, named as typed. (As root no mode bits
    refuse a file: /proc/self is a directory that takes none.)"""
    (tmp_path / "afile.txt").write_text("x\n", encoding="utf-8")
    line = _refusal(_invoke("arena-bot", ["try", "random", "-n", "1", "--records",
                                          "afile.txt/x"], tmp_path))  # fmt: skip
    assert "cannot make the directory 'afile.txt/x': Not a directory" in line, line
    line = _refusal(_invoke("arena-bot", ["try", "random", "-n", "1", "--records",
                                          "/proc/self"], tmp_path))  # fmt: skip
    assert "cannot write records into '/proc/self'" in line, line


# --- mutants of the recording parts (arena/tournament/runner.py, arena/bench/tournament.py) ---


#: The last store's wait (the others' are a few milliseconds together).
LAST_STORE_S = 0.5


def test_M_P3_P12_the_last_stores_wait_is_within_the_whole_and_not_all_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutants P3 (every wait counted as a last store's) and P12 (a last store's wait left
    out of the whole): at concurrency 1 with only the last store slow, its wait is at least
    that store's, within the tables' whole wait, and less than it (23 other waits)."""
    import time

    from arena.storage import Storage
    from tests.arena.fake_referee import make_config
    from tests.arena.fake_referee import run_fake as run

    save = Storage.save_matches
    calls: list[int] = []

    def last_slow(self: Storage, tid: str, matches: Any) -> Any:
        errors = save(self, tid, matches)
        calls.append(len(matches))
        if sum(calls) == 24:
            time.sleep(LAST_STORE_S)
        return errors

    monkeypatch.setattr(Storage, "save_matches", last_slow)
    out = run(make_config(tmp_path, concurrency=1))
    assert out.finished and out.commits == out.played_now == 24
    assert LAST_STORE_S <= out.record_last_wait_s < out.record_wait_s


def _outcome(**parts: float) -> Any:
    from types import SimpleNamespace

    base = dict(play_s=2.0, finalize_s=0.0, record_s=0.06, played_now=48, failed=[],
                store_cpu_s=0.0, record_wait_s=0.0, record_last_wait_s=0.0, build_cpu_s=0.0,
                rate_s=0.0, commits=1, record_idle_wait_s=0.0)  # fmt: skip
    return SimpleNamespace(**{**base, **parts})


def test_M_B3_each_part_is_its_own() -> None:
    """Mutant B3 (``rate_ms`` of the finalize's time): every part of a distinct value is
    printed under its own name."""
    outcome = _outcome(store_cpu_s=0.001, record_wait_s=0.002, record_last_wait_s=0.0015,
                       build_cpu_s=0.003, finalize_s=0.004, rate_s=0.005, commits=7,
                       record_idle_wait_s=0.006)  # fmt: skip
    assert bench_mod.recording_parts(outcome) == {
        "store_cpu_ms": 1.0, "tables_wait_ms": 2.0, "of_it_last_stores_ms": 1.5,
        "build_cpu_ms": 3.0, "finalize_ms": 4.0, "rate_ms": 5.0, "commits": 7,
        "idle_last_waits_ms": 6.0,
    }  # fmt: skip


def test_M_B5_a_share_of_exactly_5_percent_misses_the_target() -> None:
    """Mutant B5 (5.0 counted as under the target): the target is "under 5 %", and the
    section's own ``met`` says 5.0 is not (judged as printed)."""
    runs = [{"concurrency 16": {"recording_share_percent": s}} for s in (5.0, 4.99, 5.01)]
    assert bench_mod.share_summary(runs) == {
        "concurrency 16": {"runs": 3, "median_percent": 5.0, "worst_percent": 5.01,
                           "under_5_percent": 1}
    }  # fmt: skip
    assert bench_mod.share_summary([]) == {}


# --- mutants of the CSV's rounding (arena/leaderboard/render.py, arena/render.fixed) ----------


def test_M_C4_C5_C6_the_csv_rounds_every_column_halfway_away_from_zero(tmp_path: Path) -> None:
    """Mutants C4 (``-0.0000`` of a tiny negative), C5 (the float's shortest repr rounded,
    not its value) and C6 (``mean_final_score`` to 3
    decimals): a leaderboard's figures set to halves of each column's last decimal
    (negative ones too), and tiny negatives: each rounded away from zero to the column's
    decimals (four; ``median_ms`` and ``mean_final_score`` two), never ``-0``. Rounded is
    the float's exact value, as JavaScript's toFixed rounds it: 0.005 is
    0.005000000000000000104 (0.01), 0.00015 is 0.000149999... (0.0001, as toFixed: not
    its shortest repr's rounding, mutant C5), 105.625 and 12.125 are exact."""
    import csv
    import dataclasses
    import io

    from arena.leaderboard import build_leaderboard, to_csv
    from arena.storage import Storage
    from arena.web.demo import make_demo_db

    make_demo_db(tmp_path / "t.sqlite", matches=2, max_deals=1)
    with Storage(tmp_path / "t.sqlite") as storage:
        tid = storage.tournaments()[0].id
        lb = build_leaderboard(storage, tid)
    figures = dict(conservative=-0.00005, mu=2.00125, sigma=-0.0000004, mean_per_deal=-3.03125,
                   ci95=0.00025, median_ms=12.125, mean_score=-105.625)  # fmt: skip
    second = dict(mean_score=0.005, median_ms=-0.004, ci95=0.00015)
    rows_set = [dataclasses.replace(lb.rows[0], **figures),
                dataclasses.replace(lb.rows[1], **second)]  # fmt: skip
    lb = dataclasses.replace(lb, rows=rows_set)
    rows = list(csv.DictReader(io.StringIO(to_csv(lb))))
    got = {k: rows[0][k] for k in ("conservative", "mu", "sigma", "mean_per_deal", "ci95",
                                   "median_ms", "mean_final_score")}  # fmt: skip
    assert got == {"conservative": "-0.0001", "mu": "2.0013", "sigma": "0.0000",
                   "mean_per_deal": "-3.0313", "ci95": "0.0003", "median_ms": "12.13",
                   "mean_final_score": "-105.63"}  # fmt: skip
    assert (rows[1]["mean_final_score"], rows[1]["median_ms"], rows[1]["ci95"]) == (
        "0.01",
        "0.00",
        "0.0001",
    )
