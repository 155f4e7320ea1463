"""Round 22: README.md and docs/ read as a user would paste them, after the web API's
ETags and paged bot matches, the wheel's stubs and the bench's breakdown."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _api_rows() -> dict[str, str]:
    """endpoint (without its query) -> its row of web.md's JSON API table."""
    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    return {
        m.group(1).split("?")[0]: m.group(0)
        for m in re.finditer(r"^\| `(/api/[^`]+)` \|.*$", text, re.M)
    }


def test_the_api_table_names_every_key_of_the_answers(tmp_path: Path) -> None:
    """The table said "the leaderboard's and a bot's `tournament` and `tournaments`": a
    bot's answer has no `tournaments`; and it named neither the leaderboard's `seats` (which
    the page reads for its places column) nor a bot's `bot`; a match's summary did not name
    its `match_id`, `format`, `seats`, `forfeits`, `deals` or `stored`."""
    from arena.web.demo import make_demo_db
    from tests.support.harness import web_server

    db = tmp_path / "demo.sqlite"
    make_demo_db(db, matches=3, max_deals=2)
    rows = _api_rows()
    tournaments = rows["/api/tournaments"]
    said = re.search(r"the leaderboard's (.*?), hold the same", tournaments)
    assert said, tournaments
    with web_server(db) as server:

        def get(path: str) -> Any:
            with urllib.request.urlopen(server.url + path, timeout=10) as r:
                return json.loads(r.read().decode())

        board = get("api/leaderboard")
        bot = get(f"api/bots/{board['rows'][0]['bot']}")
        matches = get("api/matches")
        match = get(f"api/matches/{matches['matches'][0]['match_id']}")
    # what the tournaments row says each answer holds, and nothing more
    board_said, bot_said = said.group(1).split(", and a bot's ")
    assert set(re.findall(r"`(\w+)`", board_said)) == {"tournament", "tournaments"} & set(board)
    assert set(re.findall(r"`(\w+)`", bot_said)) == {"tournament", "tournaments"} & set(bot)
    for endpoint, answer in (
        ("/api/leaderboard", board),
        ("/api/bots/<name>", bot),
        ("/api/matches", matches),
        ("/api/matches/<id>", match),
    ):
        named = set(re.findall(r"`(\w+)`", rows[endpoint])) | {"tournament", "tournaments"}
        assert not sorted(set(answer) - named), endpoint


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def test_every_python_block_for_bot_authors_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """writing-a-bot.md's `play_local([Lowest, ...])` block used a `Lowest` it never
    imported (a NameError pasted into a notebook), and its `class Careful(Bot)` sketch a
    `Bot` it never imported. Each block of README.md and writing-a-bot.md runs here on its
    own, beside the `mybot.py` the guide has the reader write (and the records of its
    `arena-bot try mybot.py --records recs`, which a block reads)."""
    import os
    import subprocess
    import sys

    from click.testing import CliRunner

    from sdk.cli import main as bot_main

    guide = (ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8")
    mybot = guide[guide.index("`mybot.py`:") :]
    (tmp_path / "mybot.py").write_text(FENCE.findall(mybot)[0][1], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    tried = CliRunner().invoke(
        bot_main, ["try", "mybot.py", "-n", "2", "--max-deals", "2", "--records", "recs"]
    )
    assert tried.exit_code == 0, tried.output
    sys.modules.pop("mybot", None)  # (imported by `try`: the blocks run in processes of their own)
    blocks = [
        (path.name, block)
        for path in (ROOT / "README.md", ROOT / "docs" / "writing-a-bot.md")
        for lang, block in FENCE.findall(path.read_text(encoding="utf-8"))
        if lang == "python"
    ]
    assert len(blocks) >= 6
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, block in blocks:
        run = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, (name, block[:200], run.stderr[-1500:])


def test_every_option_of_the_python_m_commands_is_documented() -> None:
    """The docs name `python -m arena.web.demo`, `arena.bench.referee_logic`, ...; the demo's
    `--matches` and referee_logic's `--tables`, `--matches` and `--max-deals` were named
    nowhere (the check of round 18 covers `arena` and `arena-bot` only)."""
    import contextlib
    import importlib
    import io

    import pytest

    paragraphs = [
        para
        for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
        for para in re.split(r"\n\s*\n", p.read_text(encoding="utf-8"))
    ]
    missing = []
    for module in (
        "arena.soak",
        "arena.bench.strength",
        "arena.bench.referee",
        "arena.bench.breakdown",
        "arena.bench.referee_logic",
        "arena.web.demo",
    ):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            importlib.import_module(module).main(["--help"])
        # (a paragraph that names the module names its options)
        about = [x for x in paragraphs if re.search(rf"{re.escape(module)}(?![\w.])", x)]
        assert about, module
        for flag in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out.getvalue()))):
            if flag != "--help" and not any(re.search(rf"{flag}(?![\w-])", x) for x in about):
                missing.append(f"{module} {flag}")
    assert not missing


def test_the_leaderboards_line_under_the_title_is_quoted_as_the_page_writes_it() -> None:
    """web.md quoted `12 matches · ruleset house ... · finished`: the page writes the
    played count of a tournament with a set number of matches as `12 of 12 matches`
    (`playedMatches` in common.js; the browser test of the leaderboard compares the line)."""
    doc = " ".join((ROOT / "docs" / "web.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"Under the title the page names the rules that ran: `([^`]+)`", doc)
    assert quoted, "the quote moved"
    assert re.fullmatch(r"(\d+) of \1 matches · ruleset .+ · finished", quoted.group(1))
    js = (ROOT / "arena" / "web" / "static" / "common.js").read_text(encoding="utf-8")
    assert "`${playedOf(t)} matches`" in js and 'sep = " of "' in js


def test_make_help_lists_every_target() -> None:
    """README.md: "list the targets: `make help`"; it listed six of the ten (not
    `test-all`, `venv`, `proto` nor `clean`)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.M)
    recipe = re.search(r"^help:\n((?:\t.*\n)+)", makefile, re.M)
    assert phony and recipe
    listed = set(re.findall(r'@echo "make (\S+)', recipe.group(1)))
    assert not sorted(set(phony.group(1).split()) - {"help"} - listed)


def test_the_layout_names_every_module_of_arena_bench() -> None:
    """architecture.md's layout listed the bench's modules; `breakdown` (issue #7) was
    added without it."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    line = next(x for x in doc.splitlines() if x.startswith("arena/bench/"))
    modules = {p.stem for p in (ROOT / "arena" / "bench").glob("*.py")} - {"__init__"}
    assert not sorted(m for m in modules if not re.search(rf"\b{m}\b", line))


def test_every_parameter_of_play_local_and_run_is_in_the_guide() -> None:
    """writing-a-bot.md named `strict`, `decision_ms`, `time_bank_ms` and `timed_seats` of
    `play_local`, not `max_deals` (without it a match of weak bots under a preset has no
    cap), `names` nor `match_id`."""
    import inspect

    import sdk

    guide = (ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8")
    missing = [
        f"{f.__name__}({p})"
        for f in (sdk.play_local, sdk.run)
        for p in inspect.signature(f).parameters
        if not re.search(rf"(?<![\w.]){p}=", guide) and p not in ("bot", "bots")
    ]
    assert not missing


def test_play_local_names_a_repeated_bot_as_the_guide_says() -> None:
    """The guide said only how `arena-bot try` numbers a repeated opponent (`random#1`,
    `random#2`); `play_local` keeps the first name and numbers from the second seat on."""
    from bots import load
    from sdk import play_local

    guide = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    said = re.search(r"a repeated one numbered from the second on: `(\S+)`, `(\S+)`\)", guide)
    assert said
    m = play_local([load("heuristic"), load("heuristic"), load("random")], seed=1, max_deals=1)
    assert m.names[:2] == said.groups()


def test_try_names_the_tried_bot_in_its_incidents_verdict_as_the_guide_quotes_it(
    tmp_path: Path,
) -> None:
    """writing-a-bot.md quoted `arena-bot try`'s verdict on its `Lowest` (`name =
    "lowest"`) as "error: Lowest had 3 incidents ...": the line names the bot as the table
    does, by its `name`."""
    from click.testing import CliRunner

    from sdk.cli import main

    guide = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    said = re.search(r'`try` ends with "error: (\S+) had \d+ incidents in \d+ matches', guide)
    assert said
    bot = tmp_path / "mybot.py"
    bot.write_text(
        "from sdk import Bot\n\n\nclass Lowest(Bot):\n"
        '    name = "lowest"\n\n'
        "    def play(self, view):\n"
        '        raise ValueError("boom")\n'
    )
    r = CliRunner().invoke(main, ["try", str(bot), "--vs", "random", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 1, r.output
    assert f"error: {said.group(1)} had " in " ".join(r.output.split()), r.output
