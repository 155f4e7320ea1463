"""Round 18: README.md and docs/ read as a user would paste them.

What can be checked without running the commands: every relative link and ``#anchor``
resolves, every Python block compiles, every ``--flag`` written after a command exists in
that command, and the reverse: every option of ``arena`` and ``arena-bot``, and every key
of a tournament config, a tokens file's rules and a ruleset, is named in the docs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_main
from arena.tournament import config as tconfig
from arena.tournament.config import ConfigError, load_config
from engine import load_ruleset
from sdk.cli import main as bot_main
from tests.conftest import TALLY
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _prose(path: Path) -> str:
    """The file without its fenced blocks (a link or heading in a block is no link)."""
    return FENCE.sub("", _text(path))


def _all_docs() -> str:
    return "\n".join(_text(p) for p in DOCS)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(path).splitlines():
        m = re.match(r"#+\s+(.*)", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")  # GitHub numbers a repeated heading
    return out


def test_slug_is_githubs() -> None:
    assert _slug("`arena-bot human`: a person in a seat") == "arena-bot-human-a-person-in-a-seat"
    assert _slug("`[tls]` (optional)") == "tls-optional"


def _links() -> Iterator[tuple[Path, str]]:
    for path in DOCS:
        for m in re.finditer(r"\]\(([^)\s]+)\)", _prose(path)):
            if not m.group(1).startswith(("http://", "https://", "mailto:")):
                yield path, m.group(1)


def test_every_link_resolves() -> None:
    links = list(_links())
    assert len(links) > 30  # the docs link to each other: the search finds them
    broken = []
    for path, link in links:
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{path.name}: {link} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{path.name}: {link} (no such heading)")
    assert not broken


def test_every_python_block_compiles() -> None:
    blocks = [(p, b) for p in DOCS for lang, b in FENCE.findall(_text(p)) if lang == "python"]
    assert len(blocks) >= 10
    for path, block in blocks:
        compile(block, str(path), "exec")  # a SyntaxError names the file and line


# --- flags ----------------------------------------------------------------------------

COMMAND = re.compile(
    r"(?:\.venv/bin/)?(arena-bot|arena) +(tournament|serve|replay|leaderboard|rules|web|bench"
    r"|try|run|human)\b([^`\n]*)"
    r"|python -m (arena\.soak|arena\.bench\.strength|arena\.bench\.referee|arena\.bench\.breakdown"
    r"|arena\.bench\.referee_logic|arena\.web\.demo)\b([^`\n]*)"
)


def _click_options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def _argparse_options(main: Callable[[list[str]], object]) -> set[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["--help"])
    return set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", out.getvalue()))


def _options_of(name: str) -> set[str]:
    if name.startswith("python -m "):
        module = __import__(name.split()[-1], fromlist=["main"])
        return _argparse_options(module.main)
    group, sub = name.split()
    cmd = (arena_main if group == "arena" else bot_main).get_command(click.Context(arena_main), sub)
    assert cmd is not None, name
    return _click_options(cmd) | {"--help"}


def _named_flags() -> Iterator[tuple[str, str, str]]:
    for path in DOCS:
        for line in _text(path).splitlines():
            for m in COMMAND.finditer(line):
                name = f"{m.group(1)} {m.group(2)}" if m.group(1) else f"python -m {m.group(4)}"
                rest = re.split(r"\||&&|;|\)|#", m.group(3) if m.group(1) else m.group(5))[0]
                for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                    yield path.name, name, flag


def test_every_flag_named_after_a_command_exists() -> None:
    named = list(_named_flags())
    assert len(named) > 80
    options: dict[str, set[str]] = {}
    missing = []
    for doc, name, flag in named:
        if name not in options:
            options[name] = _options_of(name)
        if flag not in options[name]:
            missing.append(f"{doc}: {name} {flag}")
    assert not missing


def _commands() -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(arena_main)
    for prefix, group in (("arena", arena_main), ("arena-bot", bot_main)):
        assert isinstance(group, click.Group)
        yield prefix, group
        for sub in group.list_commands(ctx):
            cmd = group.get_command(ctx, sub)
            assert cmd is not None
            yield f"{prefix} {sub}", cmd


def test_every_option_of_arena_and_arena_bot_is_documented() -> None:
    """The reverse: an option no doc names does not exist for the users (one of its names
    is enough: `-v` for `--verbose`). `--version` of both commands was named nowhere."""
    docs = _all_docs()

    def named(opt: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", docs) is not None

    undocumented = [
        f"{name} {'/'.join(p.opts)}"
        for name, cmd in _commands()
        for p in cmd.params
        if p.opts[0].startswith("-") and p.opts != ["--help"] and not any(map(named, p.opts))
    ]
    assert not undocumented


def test_version_option_prints_what_the_readme_says() -> None:
    readme = _text(ROOT / "README.md")
    for prog, group in (("arena", arena_main), ("arena-bot", bot_main)):
        assert f"{prog} --version" in readme
        result = CliRunner().invoke(group, ["--version"], prog_name=prog)
        assert result.exit_code == 0
        assert re.fullmatch(rf"{prog}, version \d+\.\d+\.\d+\n", result.output)


# --- config keys --------------------------------------------------------------------


def test_every_tournament_config_key_is_documented() -> None:
    doc = _text(ROOT / "docs" / "tournament.md")
    keys = (
        tconfig._TOP_KEYS | tconfig._BOT_KEYS | tconfig._DEADLINE_KEYS | tconfig._RATING_KEYS
        | tconfig._REFEREE_KEYS | tconfig._TLS_KEYS
    )  # fmt: skip
    assert not [
        k for k in sorted(keys) if not any(f in doc for f in (f"`{k}`", f"`{k} =", f"`[{k}]`"))
    ]


def test_every_ruleset_option_is_in_the_table_with_its_preset_values() -> None:
    doc = _text(ROOT / "docs" / "rules-engine.md")
    rows = {
        m.group(1): [v.strip() for v in m.group(2, 3, 4)]
        for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", doc, re.M)
    }
    presets = [load_ruleset(p).to_dict() for p in ("classic", "1001", "1001-4p")]
    assert set(rows) == set(presets[0])
    for key, values in rows.items():
        shown = [str(d[key]).lower() if isinstance(d[key], bool) else str(d[key]) for d in presets]
        assert values == shown, key


NAME_ROW = re.compile(r"^\| `name` \| string \|[^\n]*$", re.M)


@pytest.mark.parametrize("name", ["-x", "_x", "a" * 65])
def test_the_name_rule_says_what_a_config_refuses(name: str) -> None:
    """tournament.md said a `name` was "letters, digits, `.`, `_`, `-`": `-x`, `_x` and a
    name of 65 characters are all that, and each was refused (it must start with a letter or
    a digit and have at most 64 characters), as are bot names in `[bots]`."""
    for override in (f'name="{name}"', f'bots."{name}"="random"'):
        with pytest.raises(ConfigError):
            load_config(ROOT / "tournaments" / "default.toml", [override])
    doc = _text(ROOT / "docs" / "tournament.md")
    row = NAME_ROW.search(doc)
    assert row is not None
    assert "a letter or a digit" in row.group(0) and "at most 64" in row.group(0)
    bots = doc[doc.index("### `[bots]`") :]
    assert "a letter or a digit" in bots.split("\n\n")[1]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[bots]\na = "token-aa"\nb = "token-aa"\nc = "token-cc"\n', "two bots one token"),
        (
            '[bots]\na = "token-aa"\nb = "token-bb"\nc = "token-cc"\n[x]\n',
            "anything besides its `[bots]` and `[members]` tables",
        ),
    ],
)
def test_the_tokens_file_rules_say_what_serve_refuses(tmp_path: Path, text: str, said: str) -> None:
    """referee.md listed the rules of a tokens file (names, tokens, enough bots) but not
    that two bots may not share a token, nor that the file holds nothing but `[bots]` (and
    `[members]`, round 49):
    `arena serve` refuses both at start."""
    from arena.cli.serve import load_tokens

    path = tmp_path / "bots.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(click.BadParameter):
        load_tokens(path)
    assert said in " ".join(_text(ROOT / "docs" / "referee.md").split())


def _fuzz_figures_not_said(tally: Mapping[str, int]) -> list[str]:
    """What docs/reliability.md says of the fuzz runs that a fuzz ``tally`` does not bear
    out: the sizes of the runs (set by the tests: matches, openings, mutations, command
    lines), that every input is accounted for, and the same for the figures it quotes.

    The split of a run's inputs (how many refused, ignored, struck) is one run's, dated:
    Hypothesis draws on the constants of every module of the code under test, so any
    change of the arena's literals moves it (a quoted split that had to equal the run's
    failed the suite at every such change)."""
    doc = " ".join(_text(ROOT / "docs" / "reliability.md").split())
    t = {k.split(": ", 1)[-1] if k.startswith(("engine: ", "servicer: ")) else k: v
         for k, v in tally.items()}  # fmt: skip
    try:
        runs = {
            "engine": (t["actions tried"], t["actions refused (state unchanged)"]
                       + t["legal actions applied"]),
            "servicer messages": (t["messages tried"],
                                  t["refused as wrong request (state unchanged)"]
                                  + t["non-decisions ignored (state unchanged)"]
                                  + t.get("illegal answers struck (fallback played)", 0)
                                  + t.get("legal answers applied", 0)),
            "servicer openings": (t["stream openings tried"],
                                  t["openings refused"] + t["openings welcomed"]),
        }  # fmt: skip
        sizes = [
            f"in {t['matches played under fuzz']} fuzzed matches",
            f"+ {t['stream openings tried']} fuzzed stream openings (",
            f"| {t['config mutations tried']} mutations of the four",
            f"| {t['cli command lines tried']} command lines of every",
        ]
        refused = {
            "config": (t["config mutations refused"], t["config mutations tried"]),
            "cli": (t["cli command lines refused"], t["cli command lines tried"]),
        }
    except KeyError as e:
        return [f"no {e} in the tally"]
    missing = [f"the run accounts for every input of {k}: {a} != {b}"
               for k, (a, b) in runs.items() if a != b]  # fmt: skip
    missing += [f"some refused of {k}: {n} of {of}" for k, (n, of) in refused.items()
                if not 0 < n <= of]  # fmt: skip
    missing += [s for s in sizes if s not in doc]
    row = doc[doc.index("| Bad inputs: servicer") :].split(" | ")[1]
    quoted = re.match(
        r"(\d+) random protobuf messages in \d+ fuzzed matches \((\d+) wrong-request "
        r"refusals with state unchanged, (\d+) ignored non-decisions(?:, (\d+) illegal "
        r"answers? struck with the fallback played)?(?:, (\d+) legal answers? applied)?\)",
        row,
    )
    if quoted is None:
        missing.append(f"the servicer row in its form: {row[:120]}")
    else:
        total, *parts = (int(n or 0) for n in quoted.groups())
        if total != sum(parts):
            missing.append(f"the servicer row's figures add up: {total} != {sum(parts)}")
    return missing


def test_the_fuzz_figures_are_what_the_short_fuzz_run_prints() -> None:
    """reliability.md quotes the tallies `pytest -q tests/fuzz -m "not slow"` prints: the
    sizes must be the run's and every input accounted for (see above). Its servicer row said
    812 messages, 301 wrong-request refusals, 510 ignored, 1 legal answer applied; the run
    printed 784, 303, 479 and 2 illegal answers struck.

    When this process has just made the short fuzz run (``pytest -m "not slow"`` in one
    process: tests/fuzz comes first), its tally is read, not made again (25 s). Any other
    selection (a part of tests/fuzz, the slow runs too, or an xdist worker, which has only
    its share of the fuzz tests: ``make test``) tallies other figures: then the run is made
    here."""
    if not _fuzz_figures_not_said(TALLY):
        return
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/fuzz",
         "-m", "not slow"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    tally = {k: int(v) for k, v in re.findall(r"^([a-z][^\n]*): (\d+)$", run.stdout, re.M)}
    assert _fuzz_figures_not_said(tally) == []


LAUNCHER = """
import os, subprocess, sys, time
env = dict(os.environ, ARENA_PARENT_PID=str(os.getpid()), ARENA_TOKEN="t" * 8)
cmds = ([sys.executable, "-P", "-m", "sdk.cli", "run", "random", "--arena", "127.0.0.1:9",
         "--retry-for", "600", "--log-level", "error"], ["sleep", "600"])
for cmd in cmds:  # as the runner launches a bundled bot and a command bot
    print(subprocess.Popen(cmd, env=env, start_new_session=True).pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_what_a_killed_tournament_leaves_running_is_what_the_docs_say() -> None:
    """tournament.md said a hang-up left the run's bot processes "to find out on their own
    that their arena is gone", and reliability.md's known gaps that bot processes outlive
    a SIGKILL of the tournament: a bot that runs as `arena-bot` (every bundled, module or
    file bot) is stopped at once by the parent-death signal; only a `command` bot of
    another kind is left running."""
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    pids: list[int] = []
    try:
        for _ in range(2):
            # (a deadline: a launcher that says no pid fails here, not at pytest's timeout)
            line = readline_within(launcher.stdout, 60)
            assert line, f"the launcher said no pid in 60 s (got {line!r} after {pids})"
            pids.append(int(line))
    finally:
        if len(pids) < 2:
            launcher.kill()
            launcher.wait(10)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    bot, other = pids
    try:
        time.sleep(1.0)  # the bot arms the signal at its start
        assert _alive(bot) and _alive(other)
        launcher.kill()
        launcher.wait(10)
        # (a guard, not a timing: the bot may take seconds to start on a loaded machine,
        # and only then arms the signal and finds its launcher gone)
        gone_by = time.monotonic() + 60
        while _alive(bot) and time.monotonic() < gone_by:
            time.sleep(0.1)
        assert not _alive(bot), "the arena-bot process outlived its launcher"
        assert _alive(other)
    finally:
        for pid in (bot, other):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        launcher.kill()
        launcher.wait(10)
    hangup = " ".join(_text(ROOT / "docs" / "tournament.md").split())
    assert "stopped with it by Linux's parent-death signal" in hangup
    assert "a `command` bot of another kind is left to find out on its own" in hangup
    gaps = " ".join(_text(ROOT / "docs" / "reliability.md").split())
    gaps = gaps[gaps.index("## Known gaps") : gaps.index("## Fixed after the first")]
    assert "Bot processes outlive a SIGKILL" not in gaps
    assert "A `command` bot that does not run as `arena-bot` outlives a SIGKILL" in gaps


def test_every_make_target_is_documented() -> None:
    """README.md named `make test` as "run the test suite", but it leaves out the tests
    marked `slow`; `make test-all` (every test), `make help` and `make clean` were named
    nowhere."""
    phony = re.search(r"^\.PHONY:(.*)$", _text(ROOT / "Makefile"), re.M)
    assert phony is not None
    targets = phony.group(1).split()
    assert {"test", "test-all", "clean"} <= set(targets)
    docs = _all_docs()
    assert not [t for t in targets if not re.search(rf"make {re.escape(t)}(?![\w-])", docs)]
    assert "`make test` leaves out those marked `slow`" in docs


def test_the_api_table_names_every_endpoint_that_takes_a_tournament(tmp_path: Path) -> None:
    """web.md's JSON API table gave `?tournament=T` to `/api/leaderboard` only; `/api/bots/
    <name>` and `/api/matches` take it too (default: the latest tournament), and a script
    reading an older tournament of the database needs it."""
    import json
    import urllib.request

    from arena.web.demo import make_demo_db
    from tests.support.harness import web_server

    db = tmp_path / "two.sqlite"
    first = make_demo_db(db, matches=2, max_deals=2, tournament_id="first")
    make_demo_db(db, matches=1, max_deals=2, tournament_id="second")
    with web_server(db) as server:

        def get(path: str) -> Any:
            with urllib.request.urlopen(server.url + path, timeout=10) as r:
                return json.loads(r.read().decode())

        listed = get("api/matches?tournament=first")["matches"]
        assert sorted(m["match_id"] for m in listed) == sorted(first)
        assert len(get("api/matches")["matches"]) == 1  # the latest: second
        bot = listed[0]["players"][0]
        assert len(get(f"api/bots/{bot}?tournament=first")["matches"]) == 2
        assert len(get(f"api/bots/{bot}")["matches"]) == 1
    rows = {
        m.group(1).split("?")[0]: m.group(1)
        for m in re.finditer(r"^\| `(/api/[^`]+)` \|", _text(ROOT / "docs" / "web.md"), re.M)
    }
    for endpoint in ("/api/leaderboard", "/api/bots/<name>", "/api/matches"):
        assert "tournament=T" in rows[endpoint], endpoint


def _imports_from_arena(package: str) -> set[tuple[str, str]]:
    import ast

    out = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena"):
                out |= {(node.module or "", a.name) for a in node.names}
            elif isinstance(node, ast.Import):
                out |= {(a.name, "") for a in node.names if a.name.startswith("arena")}
    return out


def test_architecture_names_everything_sdk_and_bots_import_from_arena() -> None:
    """The dependency paragraph of architecture.md lists what `sdk` takes from `arena`
    (module by module; `arena.render` name by name); `sdk.human` imported
    `arena.render.sitter_talon`, which it did not name. `bots` imports nothing of it."""
    doc = " ".join(_text(ROOT / "docs" / "architecture.md").split())
    paragraph = doc[doc.index("Dependency direction:") : doc.index("## Seats, deals")]
    assert not _imports_from_arena("bots")
    imported = _imports_from_arena("sdk")
    assert imported
    modules = {m for m, _ in imported}
    assert not [m for m in sorted(modules) if f"`{m}" not in paragraph]
    render = sorted(n for m, n in imported if m == "arena.render")
    assert not [n for n in render if f"`{n}`" not in paragraph and f".{n}`" not in paragraph]


def test_the_screenshot_command_of_web_md_imports_as_written() -> None:
    """web.md regenerated its screenshots with `.venv/bin/python tests/web/test_web_browser.py`:
    run as a file, its folder (not the checkout) is the import path's first entry, and the
    module's `from tests.support.harness import ...` stopped it with ModuleNotFoundError.
    The command is imported here as Python would run it, without its `__main__` part (which
    needs a browser) and without the PYTHONPATH of the test run."""
    line = next(s for s in _text(ROOT / "docs" / "web.md").splitlines() if "docs/img/" in s)
    argv = line.split("#")[0].split()
    assert argv[0] == ".venv/bin/python"
    if argv[1] == "-m":  # sys.path[0] is the current directory, as for -c
        code = f"import runpy; runpy.run_module({argv[2]!r}, run_name='docs_check')"
    else:
        code = (
            f"import os, runpy, sys; sys.path[0] = os.path.dirname(os.path.abspath({argv[1]!r}));"
            f" runpy.run_path({argv[1]!r}, run_name='docs_check')"
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-1500:]


def _default_column(doc: str, heading: str) -> dict[str, str]:
    """key -> its default, as a table under ``heading`` in tournament.md writes it."""
    section = doc[doc.index(heading) :]
    table = section[: section.index("\n\n", section.index("|"))]
    out = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[0].startswith("`") and len(cells) >= 3:
            out[cells[0].strip("`")] = cells[-2]
    return out


def test_the_documented_config_defaults_are_the_loaded_ones(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text('bots = ["random", "heuristic", "counting"]\n', encoding="utf-8")
    c = load_config(cfg)
    doc = _text(ROOT / "docs" / "tournament.md")
    top = _default_column(doc, "### Top-level keys")
    assert top["name"] == f'`"{c.name}"`'
    assert top["id"] == "`<name>-<fingerprint>`"
    assert top["ruleset"] == f'`"{c.ruleset.name}"`'
    assert top["matches_per_table"] == str(c.matches_per_table)
    assert top["max_deals"] == f"the ruleset's, else {c.max_deals}"
    assert top["seed"] == "drawn at random" and c.seed is None
    assert top["deals"] == f'`"{c.deals}"`'
    assert top["concurrency"] == str(c.concurrency)
    assert top["db"] == "`runs/<name>.sqlite`" and c.db.name == f"{c.name}.sqlite"
    assert top["out"] == "`out/<name>`" and c.out.name == c.name
    assert top["host"] == f'`"{c.host}"`'
    assert top["port"] == str(c.port)
    assert float(top["bot_wait_s"]) == c.bot_wait_s
    assert float(top["match_timeout_s"]) == c.match_timeout_s
    deadlines = _default_column(doc, "### `[deadlines]`")
    assert int(deadlines["decision_ms"]) == c.deadlines.decision_ms
    assert int(deadlines["time_bank_ms"]) == c.deadlines.time_bank_ms
    ratings = _default_column(doc, "### `[ratings]`")
    assert float(ratings["draw_probability"]) == c.draw_probability
    referee = _default_column(doc, "### `[referee]`")
    from arena.referee import RefereeConfig

    assert c.referee == ()  # unset: the referee's own defaults
    assert int(referee["max_strikes"]) == RefereeConfig().max_strikes
    assert float(referee["reconnect_grace_s"]) == RefereeConfig().reconnect_grace_s


def test_the_serve_synopsis_shows_the_defaults() -> None:
    """referee.md's synopsis of `arena serve` writes each optional option with its default
    (`[--port 50051]`); placeholders (`N`, `K`, a file) are no defaults."""
    doc = _text(ROOT / "docs" / "referee.md")
    start = doc.index("arena serve --tokens bots.toml [")
    synopsis = doc[start : doc.index("```", start)]
    shown = dict(re.findall(r"\[(--[a-z-]+) ([a-z0-9.]+)\]", synopsis))
    serve = arena_main.get_command(click.Context(arena_main), "serve")
    assert serve is not None
    defaults = {o: p.default for p in serve.params for o in p.opts}
    assert len(shown) >= 8
    for opt, value in shown.items():
        default = defaults[opt]
        if default is None and re.search(r"\.[a-z]+$", value):
            continue  # a file named as an example (`--db results.sqlite`)
        same = str(default) == value or (isinstance(default, float) and default == float(value))
        assert same, opt


def test_every_test_file_and_module_the_docs_name_exists() -> None:
    """Paths in backticks (`tests/...`, `arena/...`), the tests named (`test_...`) and the
    dotted names of the product's modules (`arena.referee.server.MAX_OPEN_CALLS`)."""
    import importlib

    docs = _all_docs()
    top = "tests|arena|sdk|bots|engine|docs|tournaments|rulesets"
    paths = set(re.findall(rf"`((?:{top})/[\w./-]*)`", docs))
    assert len(paths) > 20
    assert not [p for p in sorted(paths) if not (ROOT / p.split(":")[0]).exists()]
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))
    tests = set(re.findall(r"`(test_\w+)`", docs))
    assert tests
    assert not [t for t in sorted(tests) if f"def {t}(" not in sources]
    proto = _text(ROOT / "proto" / "arena" / "v1" / "arena.proto")
    unresolved = []
    names = set(re.findall(r"`((?:arena|sdk|bots|engine)(?:\.\w+)+)`", docs))
    assert len(names) > 40
    for name in sorted(names):
        parts = name.split(".")
        if parts[-1] in ("toml", "py", "json", "jsonl", "md", "sqlite", "pem"):
            continue  # a file
        if name.startswith("arena.v1.") and parts[2][0].isupper():  # the proto's full names
            assert re.search(rf"(service|message) {parts[2]} ", proto), name
            continue
        for i in range(len(parts), 0, -1):  # the longest importable prefix, then attributes
            try:
                obj: Any = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr, None)
            if obj is None:
                unresolved.append(name)
            break
    assert not unresolved


def test_every_docs_reference_in_the_code_and_configs_resolves() -> None:
    """Help texts, messages and config comments send readers to `docs/X.md` (and
    `#anchor`s: remote.toml's `docs/tournament.md#tls-optional`)."""
    refs = []
    for top in ("arena", "sdk", "bots", "engine", "tournaments", "rulesets", "proto"):
        for path in (ROOT / top).rglob("*"):
            if path.suffix in (".py", ".toml", ".proto", ".js", ".html"):
                text = path.read_text(encoding="utf-8")
                refs += [(path, m) for m in re.findall(r"docs/([\w-]+\.md(?:#[\w-]+)?)", text)]
    assert len(refs) > 20
    broken = []
    for path, ref in refs:
        name, _, anchor = ref.partition("#")
        doc = ROOT / "docs" / name
        if not doc.exists() or (anchor and anchor not in _anchors(doc)):
            broken.append(f"{path.relative_to(ROOT)}: docs/{ref}")
    assert not broken
