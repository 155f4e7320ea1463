"""Round 33: README.md, docs/ and docs/examples/ pasted as a reader would, command by command.

What a reader could not find out, or found wrong, and is pinned here: the ``python -m``
tools' ``--help`` named a file (``usage: referee.py``) and hid every default; ``arena bench
--help`` named no section, and ``make bench`` cut section and measurement names in 80
columns; ``arena-bot human --help`` claimed to be ``try human``, whose opponents differ; the
leaderboard files' column names were written nowhere (the CSV's ``mean_final_score`` is
the JSON's ``mean_score``); raw_bot.py retried for ever without a token, and was not "under
200 lines"; the Node.js bot's exit status without a token. And what was checked and found
right, pinned: the option tables, the Python blocks (run as written), the referee's record
lines, the storage columns, the API lists of writing-a-bot.md and architecture.md and the
limits of protocol.md, against the code.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_main
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
ENV = {**{k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}, "PYTHONPATH": str(ROOT)}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _joined(text: str) -> str:
    return " ".join(text.split())


# --- the python -m tools -------------------------------------------------------------

TOOLS = (
    "arena.soak",
    "arena.bench.strength",
    "arena.bench.referee",
    "arena.bench.breakdown",
    "arena.bench.referee_logic",
    "arena.web.demo",
)


class _Parser(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _parser_of(module: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser a tool's ``main`` builds, caught as it parses (nothing is run)."""

    def caught(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parser(self)

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", caught)
        with pytest.raises(_Parser) as got:
            importlib.import_module(module).main([])
    return got.value.parser


@pytest.mark.parametrize("module", TOOLS)
def test_each_python_m_tool_names_its_command_and_its_defaults(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m arena.bench.referee --help` printed `usage: referee.py ...` (so did
    breakdown and referee_logic): a command nobody can run. referee_logic's description was
    half a sentence ("...: the real ``Referee``, ``MatchRunner``"), and the defaults of
    soak, referee, breakdown, referee_logic and the demo were shown nowhere (`make soak`
    runs them: 300 bot streams, 1000 matches, 120 s)."""
    parser = _parser_of(module, monkeypatch)
    assert parser.prog == f"python -m {module}"
    assert parser.format_usage().startswith(f"usage: python -m {module} ")
    description = parser.description or ""
    assert description.endswith(".") and "``" not in description, description
    missing = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or action.default in (None, False, argparse.SUPPRESS):
            continue
        shown = parser._get_formatter()._expand_help(action)
        if "default:" not in shown or str(action.default) not in shown:
            missing.append(f"{'/'.join(action.option_strings) or action.dest}: {shown!r}")
    assert not missing


def test_the_documented_soak_and_referee_logic_runs_are_the_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """reliability.md's `make soak` row (it runs `python -m arena.soak` as is) and
    performance.md's defaults of `arena.bench.referee_logic`, against the parsers."""
    soak = {a.dest: a.default for a in _parser_of("arena.soak", monkeypatch)._actions}
    row = next(ln for ln in _text(DOCS / "reliability.md").splitlines() if "| `make soak`" in ln)
    m = re.search(r"(\d+) matches, (\d+) at once, (\d+) bot streams \((\d+) client processes\), "
                  r"(\d+) % hostile", row)  # fmt: skip
    assert m is not None, row
    matches, at_once, streams, procs, hostile = map(int, m.groups())
    assert (matches, streams, procs) == (soak["matches"], soak["bots"], soak["procs"])
    assert at_once == soak["bots"] // 3 and hostile / 100 == soak["hostile"]
    parser = _parser_of("arena.bench.referee_logic", monkeypatch)
    logic = {a.dest: a.default for a in parser._actions}
    doc = _joined(_text(DOCS / "performance.md"))
    m = re.search(r"`--tables` (\d+), `--matches` (\d+) per table, `--max-deals` (\d+) by default",
                  doc)  # fmt: skip
    assert m is not None
    assert tuple(map(int, m.groups())) == (logic["tables"], logic["matches"], logic["max_deals"])


def test_arena_bench_help_names_every_section() -> None:
    """`arena bench --help` said "Run the benchmarks (engine, and any other section
    available)": which SECTIONS there are (and so what `--only` takes) was in no help. And
    `arena --help` said `arena web` serves "on localhost", which `--host` does not keep to."""
    from arena.bench import SECTIONS

    result = CliRunner().invoke(arena_main, ["bench", "--help"], prog_name="arena")
    assert result.exit_code == 0
    text = _joined(result.output)
    assert not [s for s in SECTIONS if s not in text]
    listing = CliRunner().invoke(arena_main, ["--help"], prog_name="arena").output
    web = next(ln for ln in listing.splitlines() if ln.strip().startswith("web "))
    assert "localhost" not in web


# --- option tables -------------------------------------------------------------------


def _table_options(doc: str, heading: str) -> set[str]:
    """The options in the first column of the table under ``heading``."""
    section = doc[doc.index(heading) :]
    table = section[section.index("| option |") :]
    table = table[: table.index("\n\n")]
    out: set[str] = set()
    for row in table.splitlines()[2:]:
        first = row.strip("|").split("|")[0]
        out |= set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", first))
    return out


@pytest.mark.parametrize("command", ["tournament", "leaderboard"])
def test_the_option_table_of_tournament_md_is_the_commands(command: str) -> None:
    """Each option of `arena tournament` / `arena leaderboard` has its row in
    tournament.md's table (one of its names: `-v` for `--verbose`), and each row names an
    option that exists (`-vv` is `-v` given twice)."""
    cmd = arena_main.get_command(click.Context(arena_main), command)
    assert cmd is not None
    shown = _table_options(_text(DOCS / "tournament.md"), f"### `arena {command}`")
    params = [p for p in cmd.params if isinstance(p, click.Option) and p.opts != ["--help"]]
    names = {o for p in params for o in (*p.opts, *p.secondary_opts)}
    assert not [p.opts for p in params if not shown & {*p.opts, *p.secondary_opts}]
    assert not (shown - {"-vv"}) - names


def test_the_serve_synopsis_names_every_option_of_arena_serve() -> None:
    doc = _text(DOCS / "referee.md")
    start = doc.index("arena serve --tokens bots.toml [")
    synopsis = doc[start : doc.index("```", start)]
    serve = arena_main.get_command(click.Context(arena_main), "serve")
    assert serve is not None
    named = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", synopsis))
    missing = [p.opts for p in serve.params if p.opts != ["--help"] and not named & set(p.opts)]
    assert not missing


NODE = DOCS / "examples" / "node-bot"


def test_the_node_bots_option_table_is_its_parse_args() -> None:
    """docs/examples/node-bot/README.md's table against `parseArgs` in bot.js: the same
    options, and each literal default as the table writes it."""
    source = _text(NODE / "bot.js")
    block = source[source.index("parseArgs({") : source.index("});", source.index("parseArgs({"))]
    options = dict(re.findall(r"^\s{4}(\w+): \{(.*?)\}?,?$", block, re.M))
    assert {"arena", "token", "name", "matches", "ca", "tls", "proto"} <= set(options)
    readme = _text(NODE / "README.md")
    table = readme[readme.index("| option | default |") :]
    table = table[: table.index("\n\n")]
    rows = {}
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for name in re.findall(r"--([a-z]+)", cells[0]):
            rows[name] = cells[1]
    assert set(rows) == set(options)
    for name, spec in options.items():
        literal = re.search(r"default: '([^']*)'", spec)
        if literal:
            assert rows[name] == f"`{literal.group(1)}`", name
        elif "process.env.ARENA_TOKEN" in spec:
            assert rows[name] == "`$ARENA_TOKEN`"
        elif "process.env.ARENA_PROTO" in spec:
            assert rows[name].startswith("`$ARENA_PROTO`")


def test_the_node_bots_exit_status_without_a_token_is_the_readmes() -> None:
    """bot.js exits 2 when it has no token at all (before any connection); its README
    gave 2 "for a refused token" and 1 "for any other end"."""
    source = _text(NODE / "bot.js")
    m = re.search(r"if \(!opt\.token\) \{.*?process\.exit\((\d)\)", source, re.S)
    assert m is not None and m.group(1) == "2"
    status = _joined(_text(NODE / "README.md"))
    assert "2 for a refused token (or none given)" in status


# --- the example bots ----------------------------------------------------------------

RAW_BOT = DOCS / "examples" / "raw_bot.py"


def test_raw_bot_without_a_token_says_so_at_once() -> None:
    """raw_bot.py without `--token` and `ARENA_TOKEN` sent `Bearer None` and retried for ever
    (with no arena there, `UNAVAILABLE` after `UNAVAILABLE`): now it stops at once, exit 2,
    as `arena-bot run` and the Node.js bot do. Its usage line names the token variable."""
    run = subprocess.run(
        [sys.executable, str(RAW_BOT), "--arena", "127.0.0.1:1"],
        env=ENV, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-500:]
    assert "no token: set ARENA_TOKEN or give --token" in run.stderr
    usage = _text(RAW_BOT).split('"""')[1]
    assert "ARENA_TOKEN=TOKEN .venv/bin/python docs/examples/raw_bot.py --arena HOST:PORT" in usage


def test_the_example_bots_are_as_long_as_protocol_md_says() -> None:
    """protocol.md: raw_bot.py "under 200 lines" (it was 202); both are "about 200"."""
    doc = _joined(_text(DOCS / "protocol.md"))
    assert "generated code only, about 200 lines)" in doc
    assert "`@grpc/proto-loader`, about 200 lines)" in doc
    for path in (RAW_BOT, NODE / "bot.js"):
        assert 170 <= len(_text(path).splitlines()) <= 230, path


# --- the leaderboard files -----------------------------------------------------------


def test_the_leaderboard_files_columns_are_the_documented_ones(tmp_path: Path) -> None:
    """tournament.md said what the screen's columns mean but named no column of
    `leaderboard.csv` and no key of `leaderboard.json`'s rows: a script had to guess them
    (and that the CSV's `mean_final_score`, shown on no screen, is the JSON's
    `mean_score`)."""
    from arena.web.demo import make_demo_db

    db = tmp_path / "d.sqlite"
    make_demo_db(db, matches=3, max_deals=2)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        arena_main, ["leaderboard", "--db", str(db), "--format", "all", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    doc = _text(DOCS / "tournament.md")
    part = doc[doc.index("`leaderboard.csv`'s header") :]
    documented = FENCE.findall(part)[0][1].strip()
    header = next(csv.reader(io.StringIO(_text(out / "leaderboard.csv"))))
    assert ",".join(header) == documented
    data = json.loads(_text(out / "leaderboard.json"))
    prose = _joined(part[: part.index("## Ratings")])
    rows = prose[prose.index("`rows` holds the same under") : prose.index("`made_pct`;") + 11]
    assert set(re.findall(r"`(\w+)`", rows)) - {"rows", "mean_final_score"} == {
        *data["rows"][0],
        *data["rows"][0]["strikes"],
    }
    rest = prose[prose.index("`made_pct`;") :]
    named = re.findall(r"`(format|generated_at|sort|head_to_head|rating_history)`", rest)
    assert set(data) == {"rows", "tournament", *named}
    assert f'`"{data["format"]}"`' in rest
    first = next(iter(data["head_to_head"].values()))
    assert set(next(iter(first.values()))) == {"matches", "ahead", "behind", "ties"}
    history = next(iter(data["rating_history"].values()))
    assert set(history[0]) == {"index", "mu", "sigma"} and history[0]["index"] == -1


# --- python blocks run as written ----------------------------------------------------


def _blocks(name: str) -> list[str]:
    return [b for lang, b in FENCE.findall(_text(DOCS / name)) if lang == "python"]


def test_the_python_blocks_of_rules_engine_md_run_as_written(tmp_path: Path) -> None:
    """The three blocks (a capped match, a rule case from a position, dealing by hand)."""
    blocks = _blocks("rules-engine.md")
    assert len(blocks) == 3
    printed = []
    for block in blocks:
        run = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=ENV, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, (block[:200], run.stderr[-1500:])
        printed.append(run.stdout)
    assert re.fullmatch(r"GameResult\(scores=.*, deals=3, reason='max_deals'\)\n", printed[0])


def _check_jsonl_keys(path: Path) -> None:
    """Each line of a referee's `<match_id>.jsonl` has the keys referee.md's schema gives
    its type (a clean match has no `incident` line)."""
    doc = _text(DOCS / "referee.md")
    schema = {
        m.group(1): {"type", *re.findall(r'"(\w+)"', m.group(2))}
        for m in re.finditer(r'^\{"type": "(\w+)"(.*?)\}', doc, re.M)
    }
    assert {"start", "action", "incident", "deal_end", "end", "interrupted"} <= set(schema)
    lines = [json.loads(line) for line in _text(path).splitlines()]
    assert (lines[0]["type"], lines[-1]["type"]) == ("start", "end")
    assert not [d for d in lines if set(d) != schema[d["type"]]]


def test_the_referee_library_example_plays_its_match(tmp_path: Path) -> None:
    """referee.md's "As a library" block, with the three bots its comment names
    (`arena-bot run random --arena 127.0.0.1:PORT --token token-bob`) connecting to it;
    the record file it writes has the keys of referee.md's schema."""
    (block,) = _blocks("referee.md")
    script = subprocess.Popen(
        [sys.executable, "-u", "-c", block], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    bots: list[subprocess.Popen[str]] = []
    try:
        assert script.stdout is not None
        first = readline_within(script.stdout, 60)  # (a deadline: a script that hangs)
        m = re.fullmatch(r"port (\d+)\n", first or "")
        assert m is not None, (first, script.stderr.read() if script.stderr else "")
        for name in ("alice", "bob", "cid"):
            bot = [sys.executable, "-c", "from sdk.cli import main; main()", "run", "random",
                   "--arena", f"127.0.0.1:{m.group(1)}", "--token", f"token-{name}",
                   "--retry-for", "5"]  # fmt: skip
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            bots.append(
                subprocess.Popen(bot, cwd=tmp_path, env=ENV, start_new_session=True, **quiet)
            )
        out, err = script.communicate(timeout=120)
        assert script.returncode == 0, err[-1500:]
        assert re.fullmatch(r"\{'scores': .*'deals': 12, 'reason': 'max_deals'\}\n", out), out
        _check_jsonl_keys(tmp_path / "records" / "m1.jsonl")
    finally:
        for proc in (script, *bots):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_arena_bot_human_says_it_differs_from_try_human_in_its_opponents() -> None:
    """`arena-bot human --help` said it is "the same as `arena-bot try human`"; without
    `--vs` that plays random and heuristic, `arena-bot human` two heuristics."""
    from sdk.cli import main as bot_main

    ctx = click.Context(bot_main)
    assert isinstance(bot_main, click.Group)
    human, try_ = bot_main.get_command(ctx, "human"), bot_main.get_command(ctx, "try")
    assert human is not None and try_ is not None
    defaults = [",".join(next(p.default for p in c.params if p.name == "vs"))
                for c in (human, try_)]  # fmt: skip
    assert defaults[0] != defaults[1]
    text = _joined(CliRunner().invoke(bot_main, ["human", "--help"]).output)
    assert "same as" not in text
    assert f"try's own --vs default is {defaults[1]}" in text


def test_make_bench_cuts_no_section_or_measurement_name_in_80_columns() -> None:
    """`make bench` piped (or in an 80-column terminal) printed `grpc_baseli…` for the
    section and `event_engine…` for both `event_engine_off tables_1` and `..._10`, and
    `targets recording_sh…`: which measurement a row held could not be read. Folded now."""
    from rich.console import Console

    from arena.cli.bench import _figures_table

    results: dict[str, dict[str, Any]] = {
        "grpc_baseline": {
            "event_engine_off tables_1": {"round_trips": 419, "clients_cpu_us_per_rt": 405.7},
            "event_engine_off tables_10": {"round_trips": 666},
            "grpc_experiments": {"event_engine_off": "-event_engine_client,-event_engine_listener"},
        },
        "tournament": {"targets": {"recording_share_percent": {"value": 1.5, "target": 5.0}}},
    }
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(_figures_table(results))
    text = console.export_text()
    assert "…" not in text
    assert "grpc_baseline" in text and "tables_10" in text


def test_the_storage_columns_of_tournament_md_are_the_schemas(tmp_path: Path) -> None:
    """tournament.md's "Storage" lists every table with its columns, for a query of one's
    own (`sqlite3 -readonly runs/default.sqlite "SELECT record_json FROM matches ..."`)."""
    import sqlite3

    from arena.storage import Storage

    Storage(tmp_path / "s.sqlite").close()
    con = sqlite3.connect(f"file:{tmp_path / 's.sqlite'}?mode=ro", uri=True)
    try:
        tables = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        actual = {
            t: [row[1] for row in con.execute(f"PRAGMA table_info({t})")]
            for t in tables
            if not t.startswith("sqlite_")
        }
    finally:
        con.close()
    doc = _text(DOCS / "tournament.md")
    block = doc[doc.index("meta(key, value)") :]
    block = block[: block.index("```")]
    documented = {
        m.group(1): [c.strip() for c in m.group(2).split(",")]
        for m in re.finditer(r"(\w+)\(([^)]*)\)", block)
    }
    assert documented == actual


def _named_between(doc: str, start: str, end: str) -> set[str]:
    part = doc[doc.index(start) :]
    spans = re.findall(r"`([^`]+)`", part[: part.index(end)])
    return {m.group() for s in spans if (m := re.match(r"\w+", s))}


def test_writing_a_bot_names_every_field_of_what_a_bot_gets() -> None:
    """The guide's lists of `sdk.PlayerView`, `sdk.DealResult`, `sdk.GameResult`,
    `sdk.RunSummary`, `sdk.LocalIncident` and `sdk.hand`, against the code."""
    import dataclasses

    import sdk
    import sdk.hand

    doc = _joined(_text(DOCS / "writing-a-bot.md"))

    def fields(cls: Any) -> set[str]:
        return {f.name for f in dataclasses.fields(cls)}

    view = _named_between(doc, "`view` (an `sdk.PlayerView`, frozen) holds:", "Besides the view")
    assert fields(sdk.PlayerView) <= view
    assert _named_between(doc, "`sdk.DealResult` has", ";") - {"sdk"} == fields(sdk.DealResult)
    game = _named_between(doc, "`sdk.GameResult` has", " (`target`")
    assert game - {"sdk", "None"} == fields(sdk.GameResult)
    assert _named_between(doc, "`sdk.RunSummary` (", ")") - {"sdk"} == fields(sdk.RunSummary)
    incident = _named_between(doc, "(`sdk.LocalIncident`s:", ": what the bot did")
    assert incident - {"sdk"} == fields(sdk.LocalIncident)
    helpers = _named_between(doc, "are in `sdk.hand`:", "### The game 1001")
    assert helpers - {"sdk"} == set(sdk.hand.__all__)


def test_architecture_md_lists_every_ruleset_option_and_view_field() -> None:
    """architecture.md's engine API: the `Options:` of `Ruleset` and the fields of
    `PlayerView`, each list whole and nothing else, against the dataclasses."""
    import dataclasses

    from engine import PlayerView, Ruleset

    def listed(text: str) -> set[str]:
        """The names of a backticked list `a, b (what b is, (x, y)), c`, asides dropped."""
        span = text[text.index("`") + 1 :]
        span = span[: span.index("`")]
        while re.search(r"\([^()]*\)", span):
            span = re.sub(r"\([^()]*\)", "", span)
        return {item.strip() for item in span.split(",")}

    doc = _joined(_text(DOCS / "architecture.md"))
    options = listed(doc[doc.index("Options: `name,") :])
    assert options == {f.name for f in dataclasses.fields(Ruleset)}
    head = "`PlayerView` (frozen): "
    view = listed(doc[doc.index(head + "`seat,") + len(head) :])
    assert view == {f.name for f in dataclasses.fields(PlayerView)}


def test_the_numbers_protocol_md_gives_bot_authors_are_the_referees() -> None:
    """Each limit protocol.md states, in its words, against the constant that sets it."""
    import arena.referee.core as core
    import arena.referee.match as match
    import arena.referee.server as server
    import arena.referee.sessions as sessions
    from arena.protocol import MAX_TOKEN
    from arena.referee import RefereeConfig

    c = RefereeConfig()
    options = dict(server._OPTIONS)
    doc = _joined(_text(DOCS / "protocol.md"))
    said = [
        f"a token is at most {MAX_TOKEN} characters",
        f"at most {sessions.MAX_BATCH} and at most {sessions.MAX_BATCH_BYTES >> 20} MiB",
        f"`DecisionBatch{{decisions}}` of up to {core.MAX_DECISION_BATCH}",
        f"The latest {sessions.MISSED_KEPT} such ends are kept per bot",
        f"at most {core.MAX_OPEN_STREAMS_PER_BOT} `Play` calls open at once",
        f"More than {c.reconnect_limit} streams of one token let in within {c.flood_window_s:g} s",
        f"with more than {c.max_queued} waiting (the referee's `max_queued`)",
        f"more than {c.flood_limit} messages answering no pending request within "
        f"{c.flood_window_s:g} s",
        f"only the first {c.max_wrong_recorded} are recorded",
        f"cut to {match.MAX_ID_CHARS} characters",
        f"A message over {options['grpc.max_receive_message_length'] >> 20} MiB",
        f"The referee pings every {options['grpc.keepalive_time_ms'] // 1000} s",
        f"at most every {options['grpc.http2.min_ping_interval_without_data_ms'] // 1000} s",
        f"`time_limit_ms` (the referee's `decision_ms`, {c.decision_ms} by default)",
        f"(`time_bank_ms`, {c.time_bank_ms // 1000} 000 ms at the start)",
        f"At `strikes_allowed` strikes ({c.max_strikes} by default)",
        f"keeps your seats for the grace period ({c.reconnect_grace_s:g} s by default)",
    ]
    assert not [phrase for phrase in said if phrase not in doc]


def test_the_readmes_strength_ladder_quotes_bots_md() -> None:
    """README.md's Status quotes the strength table of docs/bots.md: each Δ with its
    interval, and pimc's win rate against two heuristics, as that page prints them."""
    bots = _text(DOCS / "bots.md")
    table = bots[bots.index("strength: ruleset=classic matches=64") :]
    table = table[: table.index("```")]
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\s+(\w+)\s+\w+\s+\d+\s+(\S+)\s+(\[[^\]]+\])", table, re.M)
    }
    assert set(rows) == {"heuristic", "counting", "pimc"}
    pimc_vs_heuristic = re.search(r"^\s+pimc\s+heuristic\s.*?(\d+\.\d)%", bots, re.M)
    assert pimc_vs_heuristic is not None
    readme = _joined(_text(ROOT / "README.md"))
    status = readme[readme.index("Bot strength ladder") : readme.index("Known shortfalls")]
    for bot in ("heuristic", "counting", "pimc"):
        delta, interval = rows[bot]
        said = rf"{bot} beats 2×\w+ by {re.escape(delta)}( points per deal)? {re.escape(interval)}"
        assert re.search(said, status), bot
    assert f"pimc wins {pimc_vs_heuristic.group(1)}% of its matches against 2×heuristic" in status
