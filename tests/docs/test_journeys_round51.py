"""Round 51: three users' journeys read from README.md and docs/*.md alone: a bot author
who iterates over an evening (the SDK's helpers for the game state, one bad decision
reproduced from a seed and a stored record, `arena-bot try` against each bundled bot, two
versions of the bot compared on duplicate deals); a researcher computing per-bot figures
from exported records with Python alone and checking them against the leaderboard; someone
installing a clean clone with pip alone, no make, and running a tournament and the tests.
What did not hold is pinned here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _recipe(target: str) -> list[str]:
    """The Makefile's commands for ``target``, with ``$(BIN)`` as `.venv/bin`."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    commands = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        commands.append(line.strip().replace("$(BIN)", ".venv/bin"))
    return commands


@pytest.mark.slow  # (a build: about 30 s)
def test_a_checkout_installed_by_pip_without_make_has_its_protobuf_code(tmp_path: Path) -> None:
    """Defect: on a machine without make, `pip install -e '.[dev]'` in a clean clone (the
    editable install the Makefile itself makes) installed a checkout that could not
    `import sdk`: the build skipped the protobuf code for an editable install, and the
    error said to run `make proto`. The editable build now writes it into the checkout, as
    `make proto` does, and the README gives each make target as a command without make."""
    src = tmp_path / "src"
    generated = shutil.ignore_patterns("__pycache__", "*_pb2*.py", "*_pb2*.pyi", "*.egg-info")
    for name in ("engine", "arena", "sdk", "bots", "proto"):
        shutil.copytree(ROOT / name, src / name, ignore=generated)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, src / name)
    assert not list(src.glob("arena/v1/*_pb2*"))
    # (the hook pip runs for `pip install -e .`, with the venv's build tools)
    (src / "meta").mkdir()
    hook = "import setuptools.build_meta as b, sys; print(b.build_editable(sys.argv[1]))"
    subprocess.run(
        [sys.executable, "-c", hook, str(src / "meta")],
        cwd=src, check=True, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    names = {p.name for p in (src / "arena" / "v1").iterdir()}
    assert {"arena_pb2.py", "arena_pb2_grpc.py", "arena_pb2.pyi", "arena_pb2_grpc.pyi"} <= names
    probe = "from arena.v1 import arena_pb2, arena_pb2_grpc; print(arena_pb2.Hello.__name__)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=src, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.strip()) == (0, "Hello"), done.stderr


def test_the_readme_gives_each_make_target_without_make() -> None:
    """The other half of the defect above: the README said only that "the tests and checks
    need the checkout", not how to run them there without make. Its commands are the
    Makefile's own, so that they cannot drift apart."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("Without make", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'" in block
    for target in ("tournament", "test", "check"):
        for command in _recipe(target):
            # (make's variables: TEST_JOBS is 2 by default, PYTEST_ARGS empty)
            command = command.replace("$(TEST_JOBS)", "2").replace(" $(PYTEST_ARGS)", "")
            assert command in block, (target, command)


VERSIONS = """
from sdk import Action, Bot, PlayerView, hand


class Lowest(Bot):
    name = "lowest"

    def play(self, view: PlayerView) -> Action:
        return min(hand.legal_plays(view), key=lambda a: (a.card.points, a.card))


class Better(Lowest):
    name = "better"

    def play(self, view: PlayerView) -> Action:
        masters = hand.masters(view)
        leads = [p for p in hand.legal_plays(view) if p.card in masters and not view.trick]
        return leads[0] if leads else super().play(view)
"""


def test_two_versions_of_a_bot_are_compared_on_duplicate_deals_with_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a bot author comparing a new version with the old found no way in the docs:
    `arena.bench.strength` (the duplicate benchmark) takes bundled bots only, and `try`'s
    table (which does play each seed from every seat) gave no figure with its confidence.
    `try` now prints the margin over the others' mean per deal, averaged over each seed's
    seats, with its 95% interval over the seeds, and writing-a-bot.md says how to use it.
    The figure is checked here against the records of the matches."""
    import json

    from click.testing import CliRunner

    from sdk.cli import main as bot_main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot.py").write_text(VERSIONS, encoding="utf-8")
    doc = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    assert "arena-bot try mybot.py:Better --vs mybot.py:Lowest -n 60 --max-deals 20" in doc

    args = ["try", "mybot.py:Better", "--vs", "mybot.py:Lowest", "--max-deals", "2"]
    got = CliRunner().invoke(bot_main, [*args, "-n", "7", "--records", "recs"])
    assert got.exit_code == 0, got.output
    line = next(x for x in got.output.splitlines() if x.startswith("margin of better: "))
    seeds: dict[int, list[float]] = {}
    for path in sorted((tmp_path / "recs").glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        me = rec["players"].index("better")
        per_deal = [s / rec["result"]["deals"] for s in rec["result"]["scores"]]
        others = [x for seat, x in enumerate(per_deal) if seat != me]
        seeds.setdefault(rec["seed"], []).append(per_deal[me] - sum(others) / 2)
    whole = [sum(v) / 3 for v in seeds.values() if len(v) == 3]  # (the 7th match: no seed)
    assert len(whole) == 2
    mean = sum(whole) / 2
    # (Student's t of 1 degree of freedom, times the standard error of two values)
    half = 12.706 * abs(whole[0] - whole[1]) / 2
    assert line.startswith(
        f"margin of better: {mean:+.1f} points per deal over the others' mean, 95% interval "
        f"[{mean - half:+.1f}, {mean + half:+.1f}] (2 seeds, each played from every seat): "
    ), line
    # (one seed played from every seat gives no interval: no line)
    fewer = CliRunner().invoke(bot_main, [*args, "-n", "5"])
    assert fewer.exit_code == 0, fewer.output
    assert "margin of" not in fewer.output


def test_a_decision_of_a_record_is_called_again_with_the_view_the_bot_had() -> None:
    """Defect: a bot author who saw a bad move in `arena replay` had no way in the docs to
    get the view the bot was given then, to call it again under a debugger: the engine's
    `replay` gives the game at its end, and rebuilding it from `Game.new` meant guessing the
    record's ruleset, start and dealt cards. `sdk.local.record_decisions(record)` gives
    every action with the view its seat had; here they are the views the bots were asked
    with, and the bot answers them again as it did."""
    from bots import load
    from sdk import Action, PlayerView, play_local
    from sdk.local import record_decisions

    asked: list[PlayerView] = []
    heuristic = load("heuristic")

    class Recording(heuristic):  # type: ignore[valid-type,misc]
        def act(self, view: PlayerView) -> Action:
            asked.append(view)
            return super().act(view)  # type: ignore[no-any-return]

    m = play_local([Recording, load("random"), load("counting")], seed=5, max_deals=3)
    mine = [d for d in record_decisions(m.record) if d.seat == 0 and len(d.view.legal_actions) > 1]
    assert [d.view for d in mine] == asked and len(asked) > 10
    assert all(heuristic().act(d.view) == d.action for d in mine)
    doc = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    assert "for d in record_decisions(rec):" in doc


def test_a_try_match_is_played_again_from_its_id_as_the_guide_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's other way to step through a decision: `try`'s match `local-S-R` played
    again with `play_local`, the seats as it says (`local-0-1` of `--vs heuristic,random` is
    `play_local([Random, Better, Heuristic], seed=0)`): the same actions."""
    import json

    from click.testing import CliRunner

    from bots import load
    from sdk import play_local
    from sdk.cli import main as bot_main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot.py").write_text(VERSIONS, encoding="utf-8")
    doc = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    said = "`play_local([Random, Better, Heuristic], seed=0)` is `local-0-1` of `--vs "
    said += "heuristic,random`"
    assert said in doc
    args = ["try", "mybot.py:Better", "--vs", "heuristic,random", "-n", "2", "--max-deals", "2"]
    got = CliRunner().invoke(bot_main, [*args, "--records", "recs"])
    assert got.exit_code == 0, got.output
    rec = json.loads((tmp_path / "recs" / "local-0-1.json").read_text(encoding="utf-8"))
    # (loaded from this file by path: another test of the same worker may have imported a
    # `mybot` of its own, which `import mybot` would return)
    spec = importlib.util.spec_from_file_location("mybot_round51", tmp_path / "mybot.py")
    assert spec is not None and spec.loader is not None
    mybot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mybot)
    again = play_local([load("random"), mybot.Better, load("heuristic")], seed=0, max_deals=2)
    assert again.record["players"] == rec["players"] == ["random", "better", "heuristic"]

    # (the same seat and action each; the record of `try` says who chose each too, `by`,
    # as an arena's does since round 56: play_local's record is the engine's)
    def moves(r: dict[str, Any]) -> list[list[tuple[int, str]]]:
        return [[(a["seat"], a["action"]) for a in d["actions"]] for d in r["deals"]]

    assert moves(again.record) == moves(rec)

    # The guide's snippet, pasted beside mybot.py and the records of its `try`: each move of
    # deal 2 asked again, answered as it was played.
    code = _doc_code((ROOT / "docs" / "writing-a-bot.md").read_text(), "### Replaying one decision")
    args = ["try", "mybot.py:Lowest", "-n", "2", "--max-deals", "2", "--records", "recs"]
    (tmp_path / "again").mkdir()
    shutil.copy(tmp_path / "mybot.py", tmp_path / "again" / "mybot.py")
    monkeypatch.chdir(tmp_path / "again")
    got = CliRunner().invoke(bot_main, args)
    assert got.exit_code == 0, got.output
    sys.modules.pop("mybot", None)
    printed = io.StringIO()
    sys.path.insert(0, str(tmp_path / "again"))
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, {})
    finally:
        sys.path.remove(str(tmp_path / "again"))
        sys.modules.pop("mybot", None)
    lines = printed.getvalue().splitlines()
    assert lines and all(
        line.split(" ", 1)[1].split(" -> ") == [line.split(" -> ")[1]] * 2 for line in lines
    )


def _doc_code(doc: str, heading: str) -> str:
    after = doc.split(heading, 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_per_bot_figures_computed_from_exported_records_as_the_doc_says_match_the_leaderboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a researcher with exported records found no declarer, take or trick winner
    in the record format, and nothing saying where they come from: record-format.md now
    says (engine.replay's deal results; from the JSON alone, the declarer and the
    marriages) and how the leaderboard's columns count. Its code, run on an exported
    tournament, gives the leaderboard's own figures; its rule for the declarer from the
    JSON alone agrees with the engine's, at three and at four players."""
    import json

    from click.testing import CliRunner

    from arena.cli import main as arena
    from arena.web.demo import make_demo_db
    from bots import load
    from engine import replay
    from sdk import play_local

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=4, max_deals=4)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(arena, ["replay", "--list", "--db", str(db), "--export", "exported"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(arena, ["leaderboard", "--db", str(db), "--out", "lb.json"])
    assert done.exit_code == 0, done.output
    rows = {r["bot"]: r for r in json.loads((tmp_path / "lb.json").read_text())["rows"]}

    doc = (ROOT / "docs" / "record-format.md").read_text(encoding="utf-8")
    scope: dict[str, object] = {}
    exec(_doc_code(doc, "## Figures from records"), scope)
    stats = scope["stats"]
    assert isinstance(stats, dict) and set(stats) <= set(rows) and stats
    for bot, row in rows.items():
        got = stats.get(bot, {})
        for key in ("bids_won", "contracts", "contracts_made"):
            assert got.get(key, 0) == row[key], (bot, key)
    assert sum(c["marriages"] for c in stats.values()) == sum(
        a["action"].endswith(" declare")
        for p in (tmp_path / "exported").glob("*.json")
        for d in json.loads(p.read_text())["deals"]
        for a in d["actions"]
    )

    records = [json.loads(p.read_text()) for p in (tmp_path / "exported").glob("*.json")]
    # (mean_per_deal: the deltas of its matches' finished deals, over their number)
    deltas: dict[str, list[int]] = {}
    for rec in records:
        for deal in rec["deals"]:
            for seat, delta in enumerate(deal.get("deltas", [])):
                deltas.setdefault(rec["players"][seat], []).append(delta)
    for bot, row in rows.items():
        assert sum(deltas[bot]) / len(deltas[bot]) == pytest.approx(row["mean_per_deal"])
    four = [load("random")] * 4
    records += [play_local(four, "1001-4p", seed, max_deals=6).record for seed in range(3)]
    compared = 0
    for rec in records:
        for deal, result in zip(rec["deals"], replay(rec).deal_results, strict=False):
            first = next(
                a for a in deal["actions"] if a["action"].split()[0] not in ("bid", "pass")
            )
            assert first["seat"] == result.declarer
            compared += 1
    assert compared > 20


def test_the_strength_benchmark_given_a_bot_file_says_what_measures_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Defect: `python -m arena.bench.strength --bots random,mybot.py:Better` (the README's
    "measure bot strength (duplicate deals)") ended in a KeyError's traceback. It takes the
    bundled bots only, and now says so, naming the command that measures one's own."""
    from arena.bench.strength import main as strength

    with pytest.raises(SystemExit) as exited:
        strength(["--bots", "random,mybot.py:Better", "--matches", "1"])
    assert exited.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--bots: mybot.py:Better is no bundled bot (random, heuristic, counting, pimc)" in err
    assert "arena-bot try mybot.py:New --vs mybot.py:Old -n 60" in err
