"""Bad input, round 55: every ``arena`` and ``arena-bot`` subcommand's command line, and
tournament configs, generated broken by hypothesis.

The commands and their options are read from click itself (a new option is fed junk
without this file changing). Each command line starts valid and is broken one way: an
unknown flag (a near miss of a real one, or none at all), an option that takes a value
given none, a value its type refuses, an extra argument, or two options together. The
property (the CLI's conventions, docs/tournament.md's exit codes): it runs (here: what
would play, serve or connect is a stub that raises ``_WouldRun``), or it exits 2 with one
``Error:`` line on stderr, nothing on stdout, naming the flag (or the value it quotes) and
what was wrong; never a traceback; and nothing in its directory written or changed (the
database byte for byte).

Configs: a valid one broken by a wrong type, an unknown key, a missing one, a number out
of range, a bot named twice, a path that is missing or a directory, an unknown preset or
house-rule option or value, invalid UTF-8 or a huge file: exit 2, one line naming the file
and the key, nothing written.

Fast by default; ``-m slow`` runs the long profile (more examples, a random seed).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main as arena
from arena.web.demo import make_demo_db
from sdk.cli import main as arena_bot
from tests.cli.test_bad_input_round35 import _stubbed, _WouldRun

GROUPS: dict[str, click.Group] = {"arena": arena, "arena-bot": arena_bot}

# --- the directory the commands run in -------------------------------------------------------

BOTS3 = 'bots = ["random", "heuristic", "counting"]\n'
HOUSE = 'preset = "classic"\nmust_beat = true\n'
TOKENS = '[bots]\na = "aaaaaaaa1"\nb = "bbbbbbbb2"\nc = "cccccccc3"\n'


def _make_where(d: Path) -> list[str]:
    """Fill ``d`` with what the command lines name; the match ids stored in its database."""
    ids = make_demo_db(d / "t.sqlite", matches=2, max_deals=1)
    (d / "t.toml").write_text(f'name = "cup"\nmax_deals = 1\n{BOTS3}', encoding="utf-8")
    (d / "house.toml").write_text(HOUSE, encoding="utf-8")
    (d / "tokens.toml").write_text(TOKENS, encoding="utf-8")
    (d / "afile.txt").write_text("not toml {\n", encoding="utf-8")
    (d / "adir").mkdir()
    (d / "lowest.py").write_text(
        "from sdk import Bot\n\n\nclass Lowest(Bot):\n    name = 'lowest'\n", encoding="utf-8"
    )
    return ids


def _snapshot(d: Path) -> dict[str, str]:
    """Every file under ``d`` and a digest of its bytes; SQLite's ``-shm`` beside the
    database is left out (a read-only reader may leave that index of the log), and so is
    an empty ``-wal`` (a log with no page in it: nothing was written)."""
    seen: dict[str, str] = {}
    for root, dirs, files in os.walk(d):
        for name in dirs:
            seen[os.path.relpath(os.path.join(root, name), d) + "/"] = "dir"
        for name in files:
            path = Path(root, name)
            data = path.read_bytes()
            if name.endswith("-shm") or (name.endswith("-wal") and not data):
                continue
            seen[os.path.relpath(path, d)] = hashlib.sha256(data).hexdigest()
    return seen


@contextlib.contextmanager
def _all_stubbed() -> Iterator[None]:
    """``arena``'s stubs (round 35) and ``arena-bot``'s: what would connect to an arena or
    play matches raises ``_WouldRun``; nothing is set on this process (its parent-death
    signal, its logging) that ``arena-bot run`` sets on its own."""
    import sdk.cli
    import sdk.client

    def would_run(*args: Any, **kw: Any) -> Any:
        raise _WouldRun

    mp = pytest.MonkeyPatch()
    mp.setattr(sdk.client, "run", would_run)
    mp.setattr(sdk.cli, "_play_series", would_run)
    mp.setattr(sdk.cli, "_die_with_launcher", lambda: None)
    mp.setattr(sdk.cli, "_setup_logging", lambda level: None)
    try:
        with _stubbed():
            yield
    finally:
        mp.undo()


def _invoke(group: str, args: list[str], cwd: Path) -> Result:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        # (no ARENA_TOKEN or ARENA_ADDRESS from the environment the tests run in)
        env: dict[str, str | None] = {"ARENA_TOKEN": None, "ARENA_ADDRESS": None}
        return CliRunner().invoke(GROUPS[group], args, env=env)
    finally:
        os.chdir(old)


# --- the command lines -----------------------------------------------------------------------


def _command(group: str, name: str) -> click.Command:
    g = GROUPS[group]
    cmd = g.get_command(click.Context(g), name)
    assert cmd is not None, name
    return cmd


def _options(group: str, name: str) -> list[click.Option]:
    return [p for p in _command(group, name).params
            if isinstance(p, click.Option) and "--help" not in p.opts]  # fmt: skip


#: Each subcommand's valid command line in the directory ``_make_where`` fills (a match id
#: of its database, ``m00000``, for ``replay``).
VALID: dict[tuple[str, str], list[str]] = {
    ("arena", "tournament"): ["--config", "t.toml", "--no-progress"],
    ("arena", "leaderboard"): ["--db", "t.sqlite"],
    ("arena", "replay"): ["--db", "t.sqlite", "m00000"],
    ("arena", "rules"): ["classic"],
    ("arena", "serve"): ["--tokens", "tokens.toml", "--port", "0"],
    ("arena", "web"): ["--db", "t.sqlite", "--port", "0"],
    ("arena", "bench"): ["--only", "engine"],
    ("arena-bot", "run"): ["random", "--arena", "127.0.0.1:1", "--token", "abcdefgh"],
    ("arena-bot", "try"): ["random", "-n", "1", "--max-deals", "1"],
    ("arena-bot", "human"): ["--vs", "random,random"],
}


def test_every_subcommand_has_a_valid_command_line() -> None:
    """Every subcommand of both commands is fed (a new one must be added to VALID)."""
    every = {(g, n) for g, grp in GROUPS.items() for n in grp.list_commands(click.Context(grp))}
    assert every == set(VALID)


def _junk(opt: click.Option) -> list[str]:
    """Values ``opt``'s type refuses, whatever else is given."""
    t = opt.type
    if isinstance(t, click.IntRange):
        junk = ["x", "1.5", "", "1e3", "0x10", "one", "--"]
        if t.min is not None:
            junk.append(str(t.min - 1))
        if t.max is not None:
            junk.append(str(t.max + 1))
        return junk
    if isinstance(t, click.types.IntParamType):
        return ["x", "1.5", "", "1e3", "one"]
    if isinstance(t, click.Choice):
        return ["zzz", "", str(t.choices[0]).upper() + "X"]
    if type(t).__name__ == "Seconds":
        return ["x", "", "nan", "inf", "-inf", "1e400", "-1"]
    if type(t).__name__ == "NonEmptyPath":
        junk = ["", "   "]
        if getattr(t, "exists", False):
            junk.append("missing/nope")
        if not getattr(t, "dir_okay", True):
            junk.append("adir")
        if not getattr(t, "file_okay", True):
            junk.append("afile.txt")
        return junk
    if type(t).__name__ in ("Host", "HostName"):
        return ["", "a:b", "localhost:80", "lоcalhost", "x" * 300]
    return []


#: Values that may well be valid, to combine options: each type's own, then words.
def _plausible(opt: click.Option) -> list[str]:
    t = opt.type
    if isinstance(t, click.IntRange):
        lo = t.min if t.min is not None else 0
        return [str(lo), str(lo + 1)]
    if isinstance(t, click.Choice):
        return [str(c) for c in t.choices]
    if type(t).__name__ == "Seconds":
        return ["0", "1", "0.5"]
    if type(t).__name__ == "NonEmptyPath":
        return ["t.sqlite", "t.toml", "adir", "out/x", "house.toml", "tokens.toml"]
    if type(t).__name__ in ("Host", "HostName"):
        return ["127.0.0.1", "localhost", "::1"]
    return ["random", "classic", "house.toml", "cup", "demo", "m00000", "x", "a,b"]


def _all_flags(group: str, name: str) -> list[str]:
    return [o for opt in _options(group, name) for o in (*opt.opts, *opt.secondary_opts)]


def _near(flag: str, i: int, how: int) -> str:
    """A near miss of ``flag``: a letter dropped or doubled, '_' for '-', one dash, an 's'."""
    body = flag.lstrip("-")
    i %= len(body)
    return [
        "--" + body[:i] + body[i + 1 :],
        "--" + body[:i] + body[i] + body[i:],
        "--" + body.replace("-", "_"),
        "-" + body if len(body) > 1 else "--" + body + body,
        "--" + body + "s",
    ][how]


@st.composite
def broken_command_line(draw: st.DrawFn) -> tuple[str, str, list[str], str, list[str]]:
    """(group, subcommand, argv, how it was broken, the words one of which the refusal
    must name)."""
    group, name = draw(st.sampled_from(sorted(VALID)))
    args = list(VALID[(group, name)])
    options = _options(group, name)
    valued = [o for o in options if not o.is_flag and not o.count]
    flags = set(_all_flags(group, name))
    how = draw(st.sampled_from(["unknown", "no value", "junk", "extra", "two"]))
    if how == "unknown":
        real = draw(st.sampled_from(sorted(flags)))
        flag = _near(real, draw(st.integers(0, 30)), draw(st.integers(0, 4)))
        if flag in flags or len(flag.strip("-")) < 2:  # (an option itself, or "--": none)
            flag = "--no-such-option"
        at = draw(st.integers(0, len(args)))
        args[at:at] = [flag]
        return group, name, args, how, [flag]
    if how == "no value":
        opt = draw(st.sampled_from(valued))
        flag = draw(st.sampled_from(opt.opts))
        return group, name, [*args, flag], how, [flag]
    if how == "junk":
        opt = draw(st.sampled_from([o for o in valued if _junk(o)]))
        value = draw(st.sampled_from(_junk(opt)))
        flag = draw(st.sampled_from(opt.opts))
        # the option last: an earlier valid one of the same name is overridden
        return group, name, [*args, flag, value], how, [*opt.opts, *_quoted(value)]
    if how == "extra":
        takes = [p for p in _command(group, name).params if isinstance(p, click.Argument)]
        if any(p.nargs == -1 for p in takes):  # (replay, bench: any number of arguments)
            how = "two"
        else:
            extra = draw(st.sampled_from(["extra", "m00001", "t.toml", "-"]))
            return group, name, [*args, extra], how, [extra]
    # two options together, each with a value that may be valid: many run (stubbed)
    chosen = draw(st.lists(st.sampled_from(options), min_size=2, max_size=2, unique_by=id))
    words: list[str] = []
    for opt in chosen:
        flag = draw(st.sampled_from(opt.opts))
        words += [*opt.opts, *opt.secondary_opts]
        if opt.is_flag or opt.count:
            args.append(flag)
        else:
            value = draw(st.sampled_from(_plausible(opt)))
            args += [flag, value]
            words += _quoted(value)
    return group, name, args, how, words


def _quoted(value: str) -> list[str]:
    """How an error may quote ``value`` (whole, or its first 60 characters, cut)."""
    return [value[:60]] if value.strip() else []


def _database_named_wrong(r: Result) -> bool:
    """A file that is no database (a config) given as ``--db``: SQLite cannot tell it from
    a damaged one, which the docs give exit code 1 (docs/tournament.md, ``arena
    leaderboard``; docs/web.md)."""
    return "is not a Thousand Arena database or is damaged" in r.stderr


def _refusal(r: Result, unreadable: bool = False) -> str:
    """The one ``Error:`` line of a refused command line: exit 2 (1 for what cannot be
    read, ``unreadable``, or 2 of a match id looked up in it), no traceback, on stderr,
    stdout empty."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in ((1, 2) if unreadable else (2,)), (r.exit_code, r.output)
    assert "Traceback" not in r.output, r.output
    assert r.stdout == "", r.stdout
    errors = [ln for ln in r.stderr.splitlines() if ln.lower().startswith("error:")]
    assert len(errors) == 1, r.stderr
    return errors[0]


def _check_command_line(
    template: Path, case: tuple[str, str, list[str], str, list[str]], tally: Any
) -> None:
    group, name, args, how, words = case
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "w"
        shutil.copytree(template, where, symlinks=True)
        before = _snapshot(where)
        r = _invoke(group, [name, *args], where)
        tally[f"round 55 {group} command lines tried"] += 1
        if isinstance(r.exception, _WouldRun) or r.exit_code == 0:
            # Only two options that may both be valid can run (what plays is a stub; a
            # reader, `arena rules`, prints): a line broken otherwise never does.
            assert how == "two", (group, name, args, r.output)
            tally[f"round 55 {group} command lines accepted"] += 1
            return
        line = _refusal(r, _database_named_wrong(r) and how == "two")
        assert _snapshot(where) == before, (group, name, args, line)
    assert any(w in line for w in words) or any(f in line for f in _named_in(args)), (
        group, name, args, line,
    )  # fmt: skip
    tally[f"round 55 {group} command lines refused"] += 1


def _named_in(args: list[str]) -> list[str]:
    """The values of a command line a refusal may name instead of its flag (a file it read,
    a ruleset, a match id)."""
    return [a for a in args if a.strip() and not a.startswith("-")]


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("r55")
    _make_where(d)
    return d


FAST = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])  # fmt: skip
LONG = settings(max_examples=2000, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])  # fmt: skip


@FAST
@given(case=broken_command_line())
def test_a_broken_command_line_is_refused_in_one_line_naming_the_flag(
    where: Path, tally: Any, case: tuple[str, str, list[str], str, list[str]]
) -> None:
    """Each subcommand of ``arena`` and ``arena-bot``, its valid command line broken one
    way: exit 2, one ``Error:`` line on stderr naming the flag or the value, nothing on
    stdout, no traceback, nothing written."""
    with _all_stubbed():
        _check_command_line(where, case, tally)


@pytest.mark.slow
@LONG
@given(case=broken_command_line())
def test_a_broken_command_line_is_refused_in_one_line_naming_the_flag_long(
    where: Path, tally: Any, case: tuple[str, str, list[str], str, list[str]]
) -> None:
    """The long profile of the test above, from a random seed each time."""
    with _all_stubbed():
        _check_command_line(where, case, tally)


# --- what the command lines found, each as its minimal case ----------------------------------


def test_try_refused_for_its_opponents_makes_no_records_directory(tmp_path: Path) -> None:
    """Defect: ``arena-bot try BOT --records DIR`` made DIR before it checked the bot, its
    opponents and the ruleset: a command line refused for ``--vs nosuchbot`` (exit 2) left
    an empty DIR behind. It is made once every option is known good, before any match."""
    for extra in (["--vs", "nosuchbot"], ["--ruleset", "clasic"], ["--vs", "random,"]):
        r = _invoke("arena-bot", ["try", "random", "-n", "1", "--records", "recs", *extra],
                    tmp_path)  # fmt: skip
        _refusal(r)
        assert not (tmp_path / "recs").exists(), extra
    # (a good command line still makes it, and writes the record into it)
    r = _invoke("arena-bot", ["try", "random", "-n", "1", "--max-deals", "1", "--records",
                              "recs/a"], tmp_path)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [p.name for p in (tmp_path / "recs" / "a").iterdir()] == ["local-0-0.json"]


@pytest.mark.parametrize(
    ("group", "args", "flag", "after"),
    [
        ("arena-bot", ["run", "random", "--token", "--tls"], "--token", "--tls"),
        ("arena", ["tournament", "--config", "--fresh"], "--config", "--fresh"),
        (
            "arena",
            ["leaderboard", "--db", "t.sqlite", "--tournament", "--list"],
            "--tournament",
            "--list",
        ),
        ("arena", ["replay", "--db", "--list"], "--db", "--list"),
        ("arena-bot", ["try", "random", "--vs", "-n", "3"], "--vs", "-n"),
    ],
)
def test_an_option_given_another_option_as_its_value_is_refused(
    tmp_path: Path, group: str, args: list[str], flag: str, after: str
) -> None:
    """Defect: an option whose value was left out took the next option's name for it:
    ``arena-bot run BOT --token --tls`` connected with the token "--tls" for the ten
    minutes of --retry-for, ``arena tournament --config --fresh`` said "--fresh: file: no
    such file", ``--tournament --list`` "no tournament '--list'". Each is refused, exit 2,
    naming the option and what followed it; ``--token=--tls`` still gives such a value."""
    _make_where(tmp_path)
    with _all_stubbed():
        line = _refusal(_invoke(group, args, tmp_path))
        assert f"Option '{flag}' requires an argument: {after}, after it, is an option" in line
        assert f"{flag}={after}" in line
        spelled = [a if a != flag else f"{flag}={after}" for a in args if a != after]
        r = _invoke(group, spelled, tmp_path)
    assert "requires an argument" not in r.output, r.output


@pytest.mark.parametrize(
    ("group", "args", "said"),
    [
        ("arena", ["bench", "-json"], "(-json has one dash: the option is --json)"),
        (
            "arena",
            ["leaderboard", "-season", "x"],
            "(-season has one dash: the option is --season)",
        ),
        ("arena", ["tournament", "-verbose"], "(-verbose has one dash: the option is --verbose)"),
        (
            "arena-bot",
            ["try", "random", "-seed", "3"],
            "(-seed has one dash: the option is --seed)",
        ),
    ],
)
def test_a_long_option_given_one_dash_is_named(
    tmp_path: Path, group: str, args: list[str], said: str
) -> None:
    """Defect: click reads ``-json`` as the short options ``-j -s -o -n`` and said "No such
    option '-j'", a flag never typed. The refusal names what was typed and the option."""
    line = _refusal(_invoke(group, args, tmp_path))
    assert said in line, line
    assert "Did you mean" not in line, line


def test_short_flags_run_together_get_no_such_hint(tmp_path: Path) -> None:
    """``-vx`` is ``-v -x`` (no long option ``--vx``): click's own words alone."""
    line = _refusal(_invoke("arena", ["tournament", "-vx"], tmp_path))
    assert line == "Error: No such option '-x'.", line


def test_replay_given_two_references_names_them(tmp_path: Path) -> None:
    """Defect: ``arena replay --db --x t.sqlite m00000`` (an unknown flag taken for the
    database) said "one match is shown at a time, not 2", naming neither: it names them, and
    says how a database is given."""
    _make_where(tmp_path)
    line = _refusal(_invoke("arena", ["replay", "--db", "--x", "t.sqlite", "m00000"], tmp_path))
    assert "not 2 (t.sqlite, m00000)" in line, line
    assert "a database is given as --db t.sqlite" in line, line
    line = _refusal(_invoke("arena", ["replay", "a.json", "b c.json", "x", "y"], tmp_path))
    assert "not 4 (a.json, 'b c.json', x, ...); --check checks several" in line, line
    assert "--db" not in line, line


# --- tournament configs, broken one way each -------------------------------------------------

#: A valid config (relative to the directory ``_make_where`` fills), as TOML lines.
CONFIG: dict[str, str] = {
    "name": '"cup"',
    "ruleset": '{ preset = "classic", must_beat = true }',
    "seed": "7",
    "matches_per_table": "1",
    "max_deals": "2",
    "concurrency": "2",
    "db": '"runs/cup.sqlite"',
    "out": '"out/cup"',
    "bot_wait_s": "30",
    "match_timeout_s": "0",
    "port": "0",
}
TABLES: dict[str, dict[str, str]] = {
    "deadlines": {"decision_ms": "1000", "time_bank_ms": "10000"},
    "referee": {"max_strikes": "3", "reconnect_grace_s": "5"},
    "ratings": {"draw_probability": "0.02"},
    "bots": {
        "r": '"random"',
        "h": '{ bot = "heuristic", workers = 2 }',
        "mine": '{ bot = "lowest.py:Lowest", env = { X = "1" } }',
        "exe": '{ command = "{python} -m sdk.cli run random --arena {arena}", cwd = "." }',
    },
}

#: Values out of range, each with the key it is given to.
OUT_OF_RANGE: list[tuple[str, str]] = [
    ("concurrency", "0"), ("concurrency", "257"), ("max_deals", "-1"),
    ("max_deals", "1000001"), ("matches_per_table", "0"), ("matches_per_table", "2000000"),
    ("seed", "-1"), ("seed", str(2**63)), ("port", "-1"), ("port", "65536"),
    ("bot_wait_s", "-1"), ("match_timeout_s", "-0.5"), ("deadlines.decision_ms", "0"),
    ("deadlines.decision_ms", "86400001"), ("deadlines.time_bank_ms", "-1"),
    ("referee.max_strikes", "0"), ("referee.max_strikes", "1000001"),
    ("referee.reconnect_grace_s", "-1"), ("ratings.draw_probability", "0"),
    ("ratings.draw_probability", "1"), ("bots.h.workers", "0"), ("bots.h.workers", "257"),
    ("bot_wait_s", "nan"), ("deadlines.time_bank_ms", "1e400"),
]  # fmt: skip
#: Values of a wrong type for each key.
WRONG_TYPES = ['"7"', "7", "1.5", "true", "[1]", "{ a = 1 }", "1979-05-27", '""']
#: Paths that name nothing, or a directory, or a file where a directory goes.
BAD_PATHS: list[tuple[str, str]] = [
    ("ruleset", '"missing.toml"'), ("ruleset", '"adir"'), ("db", '"adir"'),
    ("out", '"afile.txt"'), ("bots.mine.bot", '"missing.py:Lowest"'),
    ("bots.mine.bot", '"adir/x.py"'), ("bots.exe.cwd", '"missing"'),
    ("bots.exe.cwd", '"afile.txt"'), ("db", '"out/cup/logs/r.log"'),
]  # fmt: skip
#: Unknown presets, options and option values of an inline ruleset.
BAD_RULES: list[str] = [
    '"clasic"', '"1001-3p"', '{ preset = "classic", must_beet = true }',
    '{ preset = "classic", barrel_mode = "three" }', '{ preset = "nope" }',
    '{ preset = "classic", must_beat = "yes" }', '{ must_beat = "true" }',
    '{ preset = "classic", players = 5 }', '{ preset = "classic", target = -1000 }',
    '{ preset = "1001", barrel_mode = "one" }',
]  # fmt: skip


def _config_text(top: dict[str, str], tables: dict[str, dict[str, str]]) -> str:
    lines = [f"{k} = {v}" for k, v in top.items()]
    for table, keys in tables.items():
        lines.append(f"[{table}]")
        lines += [f"{k} = {v}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def _set(top: dict[str, str], tables: dict[str, dict[str, str]], key: str, value: str) -> None:
    """Set the dotted ``key`` (``bots.h.workers`` inside an inline table: rewritten)."""
    parts = key.split(".")
    if len(parts) == 1:
        top[key] = value
    elif len(parts) == 2:
        tables[parts[0]][parts[1]] = value
    else:  # a key of a bot's inline table: the bot written as a table of its own keys
        table, bot, inner = parts
        tables[f"{table}.{bot}"] = {**_inline(tables[table].pop(bot)), inner: value}


def _inline(value: str) -> dict[str, str]:
    import tomllib

    data = tomllib.loads(f"v = {value}")["v"]
    if isinstance(data, str):
        return {"bot": f'"{data}"'}
    return {k: _as_toml(v) for k, v in data.items()}


def _as_toml(v: Any) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_as_toml(x)}" for k, x in v.items()) + " }"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


@st.composite
def broken_config(draw: st.DrawFn) -> tuple[bytes, str, str]:
    """(the file's bytes, how it was broken, the key the refusal must name: a dotted path,
    ``file`` for the whole file)."""
    top = dict(CONFIG)
    tables = {k: dict(v) for k, v in TABLES.items()}
    how = draw(st.sampled_from(["type", "unknown", "missing", "range", "twice", "path",
                                "rules", "utf-8"]))  # fmt: skip
    key = ""
    if how == "type":
        key = draw(st.sampled_from([*CONFIG, "deadlines.decision_ms", "referee.max_strikes",
                                    "ratings.draw_probability", "bots.h.workers"]))  # fmt: skip
        # (what the key's own type takes is left out: a name "7", a bot_wait_s of 1.5)
        takes = {"name": '"7"', "db": '"7"', "out": '"7"', "ruleset": '"7" ""'}.get(
            key, "7 1.5" if key in ("bot_wait_s", "match_timeout_s") else "7"
        )
        value = draw(st.sampled_from([v for v in WRONG_TYPES if v not in takes.split()]))
        _set(top, tables, key, value)
    elif how == "unknown":
        key = draw(st.sampled_from(["nmae", "max_deal", "concurency", "deadlines.decision",
                                    "referee.max_strike", "ratings.draw", "bots.h.worker",
                                    "bots.exe.cmd", "bots.h.remote_", "tls"]))  # fmt: skip
        if key == "tls":
            tables["tls"] = {"certfile": '"x.pem"'}
            key = "tls"
        else:
            _set(top, tables, key, "1")
    elif how == "missing":
        what = draw(st.sampled_from(["bots", "command", "token"]))
        if what == "bots":
            del tables["bots"]
            key = "bots"
        elif what == "command":
            tables["bots"]["exe"] = '{ cwd = "." }'
            key = "bots.exe"
        else:
            tables["bots"]["far"] = "{ remote = true }"
            key = "bots.far"
    elif how == "range":
        key, value = draw(st.sampled_from(OUT_OF_RANGE))
        _set(top, tables, key, value)
    elif how == "twice":
        if draw(st.booleans()):
            top["bots"] = '["random", "heuristic", "random"]'
            del tables["bots"]
            key = "bots[2]"
        else:
            key = "file"  # (a key twice is no TOML: the line is named)
    elif how == "path":
        key, value = draw(st.sampled_from(BAD_PATHS))
        _set(top, tables, key, value)
    elif how == "rules":
        _set(top, tables, "ruleset", draw(st.sampled_from(BAD_RULES)))
        key = "ruleset"
    text = _config_text(top, tables)
    if how == "twice" and key == "file":
        text = text.replace("[bots]\n", '[bots]\nr = "random"\n')
    raw = text.encode("utf-8")
    if how == "utf-8":
        at = draw(st.integers(0, len(raw)))
        raw = (
            raw[:at]
            + draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3", b"\xed\xa0\x80"]))
            + raw[at:]
        )
        key = "file"
    return raw, how, key


def _check_config(template: Path, case: tuple[bytes, str, str], tally: Any) -> None:
    raw, how, key = case
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "w"
        shutil.copytree(template, where, symlinks=True)
        (where / "cfg.toml").write_bytes(raw)
        before = _snapshot(where)
        with _all_stubbed():
            r = _invoke("arena", ["tournament", "--config", "cfg.toml", "--no-progress"], where)
        tally["round 55 broken configs tried"] += 1
        assert not isinstance(r.exception, _WouldRun), (how, key, raw.decode("utf-8", "replace"))
        line = _refusal(r)
        assert _snapshot(where) == before, (how, key, line)
    assert line.startswith("Error: cfg.toml: "), line
    said = line.removeprefix("Error: cfg.toml: ").partition(": ")[0]
    # the key at fault, or (a table refused as a whole: a bot's) the table holding it
    assert said == key or key.startswith(said + ".") or said.startswith(key), (how, key, line)
    assert len(line) <= 700, line


def test_the_valid_config_runs(where: Path) -> None:
    """The config the broken ones start from is accepted (what plays is stubbed)."""
    (where / "ok.toml").write_text(_config_text(CONFIG, TABLES), encoding="utf-8")
    with _all_stubbed():
        r = _invoke("arena", ["tournament", "--config", "ok.toml", "--no-progress"], where)
    (where / "ok.toml").unlink()
    assert isinstance(r.exception, _WouldRun), r.output


@FAST
@given(case=broken_config())
def test_a_broken_config_is_refused_in_one_line_naming_its_key(
    where: Path, tally: Any, case: tuple[bytes, str, str]
) -> None:
    """A valid config broken one way (a wrong type, an unknown or missing key, a number
    out of range, a bot twice, a path that names nothing or a directory, an unknown preset
    or house rule, a byte that is no UTF-8): exit 2, one line on stderr naming the file
    and the key, nothing written."""
    _check_config(where, case, tally)


@pytest.mark.slow
@LONG
@given(case=broken_config())
def test_a_broken_config_is_refused_in_one_line_naming_its_key_long(
    where: Path, tally: Any, case: tuple[bytes, str, str]
) -> None:
    """The long profile of the test above."""
    _check_config(where, case, tally)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (
            "huge.toml",
            "huge.toml: file: too large for a TOML file here: 16,777,343 bytes "
            "(at most 16,777,216)",
        ),
        ("adir", "Invalid value for '--config': File 'adir' is a directory."),
        ("missing.toml", "missing.toml: file: no such file"),
        ("t.sqlite", "t.sqlite: file: not valid TOML: not UTF-8 text"),
    ],
)
def test_a_config_that_is_huge_a_directory_missing_or_no_text(
    tmp_path: Path, name: str, said: str
) -> None:
    """Pinned (checked, found right): a config past 16 MiB (a comment, say: not read), a
    directory, a missing file and a database given as the config are refused in one line
    naming the file, exit 2, nothing written."""
    _make_where(tmp_path)
    (tmp_path / "huge.toml").write_bytes(
        b"# " + b"x" * (16 * 1024 * 1024 + 81) + b"\n" + BOTS3.encode()
    )
    before = _snapshot(tmp_path)
    with _all_stubbed():
        line = _refusal(_invoke("arena", ["tournament", "--config", name], tmp_path))
    assert said in line, line
    assert _snapshot(tmp_path) == before
