"""Old v1 clients against today's referee, and today's SDK against an old referee.

docs/protocol.md "Versions": within v1 the protocol only grows, so a bot built on an older
SDK keeps playing at today's arena. Each older SDK here is the repository's own at a commit
from before one of the optional features ("batch", "results_once", "deal_once", "ahead";
the commits `git log -S '"FEATURE"' -- sdk/client.py` names): the files of that commit its
client and referee import, from tests/e2e/data/old_clients_round54/eras.tar.xz (made once
by `git archive`; its README says how, so the tests need no git history), with generated
code made by this environment's grpc_tools, run as its own `arena-bot run` (its own
engine, SDK and generated code first on the path). Three clients of different eras share
each match, so one referee serves them every feature set
at once. Each bot is tests/support/compat_bot.py, which notes every view that lacks what a
whole view holds (earlier deal results, the auction, the tricks): a referee that left out
for an old client what only a newer one asks to have left out would pass unnoticed
otherwise. The matches are short (2 matches of 2 deals), on port 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.compat_bot import holes
from tests.support.spawn import readline_within

ROOT = Path(__file__).parents[2]
COMPAT_BOT = ROOT / "tests" / "support" / "compat_bot.py"
#: Each era's files, in a folder named after it (README.md beside it: how it was made).
ERAS_ARCHIVE = ROOT / "tests" / "e2e" / "data" / "old_clients_round54" / "eras.tar.xz"

#: The eras: the last commit before each feature came (and the first SDK), by what it sends.
ERAS = {
    # The first SDK (2026-11-30): no Hello.features at all.
    "first-sdk": "b3a2e98d52fa91d0bf3b59164c48cd0fa00339dd",
    # Just before "batch" (d63fe104): no features either, a referee of a later day.
    "pre-batch": "675a365ad4eb314865b80db254764cbe3da4856b",
    # Just before "results_once" (5d6a78d1): asks for "batch".
    "pre-results-once": "961fe6bb46e9ea624f7280d91df9831254eab180",
    # Just before "deal_once" (52a9fbb6): "batch", "results_once".
    "pre-deal-once": "0207b5a57561fb732ff7fd376a3f5e62ec9204d4",
    # Just before "ahead" (bc41834d): "batch", "results_once", "deal_once".
    "pre-ahead": "5a3fa3622dfa081b17d4f46dace76d6b956950b7",
}
MATCHES = 2
RULESET = 'preset = "classic"\nname = "compat"\nmax_deals = 2\n'  # every era reads this


@pytest.fixture(scope="module")
def eras(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each era's files, extracted from ERAS_ARCHIVE, with its generated protobuf code."""
    base = tmp_path_factory.mktemp("eras")
    with tarfile.open(ERAS_ARCHIVE) as archive:
        archive.extractall(base, filter="data")
    assert sorted(p.name for p in base.iterdir()) == sorted(ERAS), ERAS_ARCHIVE
    trees = {era: base / era for era in ERAS}
    for era, tree in trees.items():
        # Every package the era runs is its own (PYTHONPATH): none comes from today's tree.
        for package in ("arena", "bots", "engine", "sdk"):
            assert (tree / package / "__init__.py").is_file(), f"{era} has no {package}/"
        gen = [sys.executable, "-m", "grpc_tools.protoc", "-Iproto", "--python_out=.",
               "--grpc_python_out=.", "proto/arena/v1/arena.proto"]  # fmt: skip
        subprocess.run(gen, cwd=tree, check=True)
    return trees


def _env(code: Path, log: Path | None = None) -> dict[str, str]:
    """Runs ``code``'s packages (engine, sdk, arena and their generated code): the
    checkout's own come first on the path, before the installed (editable) project."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    if log is not None:
        env["COMPAT_BOT_LOG"] = str(log)
    return env


def _serve(code: Path, tmp: Path, names: list[str], procs: list[subprocess.Popen[str]]) -> int:
    """``code``'s `arena serve` on port 0 for ``names``, stopping after MATCHES matches."""
    tokens = tmp / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'"{n}" = "token-{n}"\n' for n in names))
    tokens.chmod(0o600)
    (tmp / "compat.toml").write_text(RULESET)
    cmd = [sys.executable, "-c", "from arena.cli import main; main()", "serve", "--port", "0",
           "--tokens", str(tokens), "--record-dir", str(tmp / "rec"),
           "--ruleset", str(tmp / "compat.toml"), "--matches", str(MATCHES)]  # fmt: skip
    with (tmp / "serve.err").open("w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, cwd=code,
                             env=_env(code))  # fmt: skip
    procs.append(p)
    assert p.stdout is not None
    while (line := readline_within(p.stdout, 60)) is not None and line:
        if line.startswith("port "):
            return int(line.split()[1])
    p.kill()
    raise AssertionError(
        f"arena serve of {code} printed no port: {(tmp / 'serve.err').read_text()}"
    )


def _bot(
    code: Path, name: str, port: int, tmp: Path, procs: list[subprocess.Popen[str]], *extra: str
) -> None:
    """``code``'s `arena-bot run` of the checking bot, as ``name``."""
    bot = tmp / "compat_bot.py"  # a copy: the bot's folder is put on its SDK's path
    if not bot.exists():
        shutil.copy(COMPAT_BOT, bot)
    cmd = [sys.executable, "-c", "from sdk.cli import main; main()", "run", f"{bot}:Whole",
           "--arena", f"127.0.0.1:{port}", "--token", f"token-{name}", *extra]  # fmt: skip
    with (tmp / f"{name}.log").open("w") as out:
        procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                      cwd=code, env=_env(code, tmp / f"{name}.holes")))  # fmt: skip


def _play(
    tmp: Path, procs: list[subprocess.Popen[str]], referee: Path, bots: dict[str, Path],
    *bot_args: str,
) -> list[dict[str, Any]]:  # fmt: skip
    """MATCHES matches of ``bots`` (name: checkout) at ``referee``'s arena: every process
    exits 0 and every bot's views were whole; the match records' ends."""
    port = _serve(referee, tmp, list(bots), procs)
    for name, code in bots.items():
        _bot(code, name, port, tmp, procs, *bot_args)
    for p in procs[1:]:
        p.wait(timeout=120)
    procs[0].wait(timeout=60)
    logs = {name: (tmp / f"{name}.log").read_text() for name in bots}
    for p, name in zip(procs[1:], bots, strict=True):
        assert p.returncode == 0, f"{name}'s arena-bot exited {p.returncode}: {logs[name][-3000:]}"
    assert procs[0].returncode == 0, (tmp / "serve.err").read_text()[-3000:]
    for name in bots:
        seen = (tmp / f"{name}.holes").read_text().splitlines()
        assert seen, f"{name} was never asked to decide: {logs[name][-2000:]}"
        assert [s for s in seen if s != "ok"] == [], f"{name} was given views with holes"
        # Every SDK since the first ends with "done (...): N match(es), N decision(s), 0
        # rejected, ...": no decision of the bot's was refused.
        assert re.search(
            r"done \(.*\): 2 match\(es\), \d+ decision\(s\), 0 rejected,", logs[name]
        ), logs[name][-2000:]
    ends = []
    for f in sorted((tmp / "rec").glob("*.jsonl")):
        last = json.loads(f.read_text().splitlines()[-1])
        assert last["type"] == "end", f"{f.name} did not end: {last['type']}"
        ends.append(last["record"])
    assert len(ends) == MATCHES
    for rec in ends:
        assert rec["result"]["reason"] == "max_deals", rec["result"]
        assert rec["incidents"] == [] and rec["forfeits"] == [], rec["match_id"]
        assert sorted(rec["players"]) == sorted(bots), rec["players"]
    return ends


@pytest.mark.parametrize(
    "trio",
    [
        ["first-sdk", "pre-results-once", "pre-deal-once"],
        ["pre-batch", "pre-ahead", "today"],
    ],
    ids=["first-sdk+pre-results-once+pre-deal-once", "pre-batch+pre-ahead+today"],
)
def test_older_sdks_play_whole_matches_at_todays_referee(
    trio: list[str], eras: dict[str, Path], tmp_path: Path,
    procs: list[subprocess.Popen[str]],
) -> None:  # fmt: skip
    """Three clients of different eras at one match of today's referee: each asks for
    another set of features (none, "batch" alone, ... every one of today's), and each plays
    both matches to their end with no incident and whole views, then leaves on the OK the
    referee ends its stream with."""
    bots = {era: eras[era] if era != "today" else ROOT for era in trio}
    _play(tmp_path, procs, ROOT, bots)


def test_todays_sdk_plays_whole_matches_at_an_old_referee(
    eras: dict[str, Path], tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    """Today's SDK, which asks for "batch", "results_once", "deal_once" and "ahead", at the
    referee of the day before "batch" came, whose Welcome offers no feature: it plays
    one message at a time, as that referee speaks. (That referee drops its streams when it
    stops, without a status: the bots leave after their matches by --matches.)"""
    bots = {f"today-{k}": ROOT for k in "abc"}
    _play(tmp_path, procs, eras["pre-batch"], bots, "--matches", str(MATCHES))


def test_the_checking_bot_sees_a_hole() -> None:
    """compat_bot.holes names what a view lacks (so its silence above means something)."""
    from engine.cards import Card, Rank, Suit
    from engine.game import Phase

    class View:
        deal_number = 1
        deal_results: tuple[object, ...] = ()
        phase = Phase.PLAYING
        players = ("a", "b", "c")
        seat = 0
        hand = (Card.of(Rank.ACE, Suit.SPADES),)
        bids: tuple[object, ...] = ()
        trick: tuple[object, ...] = ()
        tricks: tuple[object, ...] = ()

    last = [1, 5]
    found = holes(View(), last)
    assert found == [
        "deal 1: 0 earlier deal results, not 1",
        "deal 1 (PLAYING): 0 bids in the view",
        "deal 1: 0 bids, fewer than the 5 of the view before",
        "deal 1: 1 cards held and 0 played in 0 completed tricks: not the 8 dealt",
    ]
    assert last == [1, 0]
