"""Round 51's docs, read as a user reads them: the README's rows for the round's features
run as written, and the numbers and names that round 51 said in several places (the
Hello's byte cap, the flood allowance, the protocol features) are the code's own.

Defects pinned here: the README's row for comparing two versions named `mybot.py:Better`,
a file and a class no doc defines (the README's own bot is `lowest.py:Lowest`), without
the `--max-deals` the guide gives; its `arena web` row did not name `--season`; and
`arena-bot try`'s margin line said "-0.0 points per deal ..., 95% interval [-0.0, +0.0]"
for two bots that played every deal alike (Python's format of a negative zero, where the
table beside it writes 0.0)."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.protocol import HELLO_MAX_BYTES
from arena.referee import RefereeConfig
from arena.referee.core import ANSWER_BYTES, FEATURES, MAX_DECISION_BATCH
from tests.docs.test_docs_round35 import ROOT, _joined
from tests.support.harness import get_json, web_server

README = (ROOT / "README.md").read_text(encoding="utf-8")
SEASON_DB = ROOT / "tests" / "arena" / "data" / "season_round50" / "club.sqlite"


def _row(words: str) -> str:
    """The README table's row that holds ``words``."""
    rows = [line for line in README.splitlines() if line.startswith("|") and words in line]
    assert len(rows) == 1, (words, rows)
    return rows[0]


def _commands(row: str) -> list[str]:
    """The command column's commands of a README row (each in backticks)."""
    return re.findall(r"`([^`]+)`", row.split(" | ")[1])


def _smallest_bot() -> str:
    section = README.split("## The smallest bot", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readmes_row_for_comparing_versions_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row's commands, pasted beside the README's `lowest.py`: the copy, unchanged,
    plays every deal as the original does, so its margin is zero, and said as +0.0."""
    from sdk.cli import main as bot_main

    monkeypatch.chdir(tmp_path)
    for name in ("lowest", "lowest2"):  # (another test may have imported its own)
        monkeypatch.delitem(sys.modules, name, raising=False)
    (tmp_path / "lowest.py").write_text(_smallest_bot(), encoding="utf-8")
    copy, attempt = _commands(_row("compare a new version of your bot"))
    assert shlex.split(copy)[0] == "cp"
    shutil.copy(*shlex.split(copy)[1:])
    argv = shlex.split(attempt)
    assert argv[0] == ".venv/bin/arena-bot"
    got = CliRunner().invoke(bot_main, argv[1:])
    assert got.exit_code == 0, got.output
    margin = next(x for x in got.output.splitlines() if x.startswith("margin of lowest: "))
    assert margin.startswith(
        "margin of lowest: +0.0 points per deal over the others' mean, 95% interval "
        "[+0.0, +0.0] (20 seeds, each played from every seat): no difference beyond chance"
    ), margin
    # (the guide gives the same command, options and all, for its own file)
    guide = _joined((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8"))
    assert argv[3] == "--vs"
    assert f"arena-bot try mybot.py:Better --vs mybot.py:Lowest {' '.join(argv[5:])} " in guide


def test_the_readmes_web_row_serves_a_season_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `arena web --season` command of the README's row, parsed by `arena web` itself,
    on a database of that path holding the club's weeks: every leaderboard links the
    season, whose standings are served; the row links web.md's section on it."""
    from arena.cli.web import web

    row = _row("browse the leaderboard")
    assert "(docs/web.md#a-season--seasonclub-w)" in row
    assert "### A season — `/?season=club-w`" in (ROOT / "docs" / "web.md").read_text(
        encoding="utf-8"
    )
    command = next(c for c in _commands(row) if "--season" in c)
    argv = shlex.split(command)
    assert argv[:2] == [".venv/bin/arena", "web"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    shutil.copy(SEASON_DB, tmp_path / "runs" / "club.sqlite")
    params = web.make_context("web", argv[2:]).params
    with web_server(params["db"], season=params["season"]) as server:
        assert get_json(server.url, "/api/leaderboard")["season"] == "club-w"
        season = get_json(server.url, "/api/season?season=club-w")
    assert season["title"].startswith("season club-w — classic")
    assert [w["name"] for w in season["weeks"]] == ["club-w1", "club-w2", "club-w3"]


def test_the_hello_cap_and_the_flood_allowance_are_said_as_the_code_has_them() -> None:
    """Each doc that states the first message's byte cap or the bytes an answer is allowed
    states the code's figure (protocol.md and the proto state the cap twice each)."""
    protocol = _joined((ROOT / "docs" / "protocol.md").read_text(encoding="utf-8"))
    referee = _joined((ROOT / "docs" / "referee.md").read_text(encoding="utf-8"))
    proto = _joined(
        " ".join(
            line.strip().removeprefix("//")
            for line in (ROOT / "proto/arena/v1/arena.proto").read_text("utf-8").splitlines()
        )
    )
    cap = f"{HELLO_MAX_BYTES:,} bytes"
    assert protocol.count(f"at most **{cap}**") == 1
    assert protocol.count(f"Hello of at most {cap} (its limits") == 1
    assert proto.count(f"at most {cap}, what these limits take") == 1
    assert proto.count(f"a Hello of at most {cap} ...") == 1
    kib = MAX_DECISION_BATCH * ANSWER_BYTES // 1024
    assert f"A message's bytes past {kib} KiB" in protocol
    assert f"(what {MAX_DECISION_BATCH} answers of {ANSWER_BYTES} bytes take)" in protocol
    assert f"A message's bytes past {kib} KiB count toward the flood limit" in proto
    assert f"KiB past {ANSWER_BYTES} bytes a decision" in referee
    assert f"KiB past {ANSWER_BYTES} bytes a decision" in protocol
    config = RefereeConfig()
    assert (
        f"more than {config.flood_limit} stray messages in {config.flood_window_s:g} s" in referee
    )
    assert f"`reconnect_limit` ({config.reconnect_limit}: more streams" in referee


def test_each_protocol_feature_is_said_where_the_features_are_listed() -> None:
    """The referee's FEATURES are the proto's known features of Hello and Welcome, each has
    its section in protocol.md saying a referee lists it, the Hello's first rule links
    those sections, and protocol.md counts them right."""
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    proto = (ROOT / "proto/arena/v1/arena.proto").read_text(encoding="utf-8")
    hello = proto.split("message Hello {", 1)[1].split("}", 1)[0]
    welcome = proto.split("message Welcome {", 1)[1].split("}", 1)[0]
    joined = _joined(protocol)
    for feature in FEATURES:
        assert f'"{feature}"' in hello and f'"{feature}" =' in welcome, feature
        assert f'`"{feature}"` in `Welcome.features`' in joined or (
            f'`Welcome.features` (`"{feature}"`)' in joined
        ), feature
    first_rule = joined.split("**Hello first**", 1)[1].split("and `matches`", 1)[0]
    assert first_rule.count("](#") == len(FEATURES)
    assert f"features: {list(FEATURES)}".replace("'", '"') in joined
    assert "The four features are independent" in joined and len(FEATURES) == 4
    comment = (ROOT / "arena" / "protocol.py").read_text(encoding="utf-8")
    assert "The SDK sends four features" in comment
