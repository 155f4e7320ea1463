"""Small user-facing limits left by the audits of round 35: `arena replay` and `--check`
on a match that cannot start, `--tournament REF` naming one tournament's id and another's
name, the web page's count of the latest matches, and `arena tournament`'s exit codes.

In-process through click's CliRunner; the page's script runs in node (as
tests/web/test_web_audit_round33.py runs it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from engine import Game


def _record() -> dict[str, Any]:
    g = Game.new("classic", 3, ["ann", "bob", "cid"])
    while not g.is_over and g.deal_number < 1:
        g.apply(g.legal_actions()[-1])
    return g.record()


def _no_traceback(r: Result) -> str:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return " ".join(r.output.split())


def _unknown_ruleset(rec: dict[str, Any]) -> None:
    rec["ruleset"] = {"preset": "nope"}


def _four_player_rules(rec: dict[str, Any]) -> None:
    rec["ruleset"] = "1001-4p"  # (3 players)


def _card_dealt_twice(rec: dict[str, Any]) -> None:
    hands = rec["deals"][0]["hands"]
    hands[0][0] = hands[1][0]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_unknown_ruleset, "ruleset: preset: unknown preset 'nope'"),
        (_four_player_rules, "cannot start the match: ruleset '1001-4p' is for 4 players"),
        (_card_dealt_twice, "cannot start the match: deal 0: card"),
    ],
)
def test_replay_and_check_agree_on_a_match_that_cannot_start(
    tmp_path: Path, edit: Any, words: str
) -> None:
    """Defect: of one record whose match cannot start (a ruleset that does not load, a
    card dealt twice, `1001-4p` with 3 players), `arena replay --check` said "REFUSED:
    ..." with exit 1 (the rules refuse it, docs/record-format.md) and plain `arena replay`
    "cannot render: ..." with exit 2 (the code of a file that is no match record at all).
    Both now exit 1; a record of the wrong shape stays exit 2 for both."""
    rec = _record()
    edit(rec)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    shown = CliRunner().invoke(arena, ["replay", str(path)])
    checked = CliRunner().invoke(arena, ["replay", "--check", str(path)])
    assert (shown.exit_code, checked.exit_code) == (1, 1), (shown.output, checked.output)
    assert f"error: {path}: cannot render: {words}" in _no_traceback(shown)
    assert f"REFUSED: {words}" in _no_traceback(checked)
    # (not a match record at all: still 2, for both)
    path.write_text(json.dumps({"players": rec["players"]}), encoding="utf-8")
    for args in (["replay", str(path)], ["replay", "--check", str(path)]):
        r = CliRunner().invoke(arena, args)
        assert r.exit_code == 2 and "not a match record" in _no_traceback(r), r.output


def _two_tournaments(db: Path) -> None:
    """Tournament ``cup`` (its id; named ``first``), then ``cup-2f1c6976b4d8``, named ``cup``."""
    from arena.storage import Storage

    bots = [("a", "random"), ("b", "random"), ("c", "random")]
    with Storage(db) as st:
        st.ensure_tournament("cup", name="first", fingerprint="fp", config={}, total_matches=1,
                             bots=bots)  # fmt: skip
        st.ensure_tournament("cup-2f1c6976b4d8", name="cup", fingerprint="fp2", config={},
                             total_matches=1, bots=bots)  # fmt: skip


NOTE = (
    "note: --tournament cup is a tournament's id, taken as such; tournament "
    "cup-2f1c6976b4d8 is named cup too (pass its id to show it)"
)


def test_a_tournament_ref_that_is_an_id_and_another_name_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `--tournament cup` of `arena leaderboard`, `arena replay --list` and `arena
    web`, where `cup` is one tournament's id and another's name (the latest of that name,
    as docs/tournament.md promises a name to mean), took the id without a word: the reader
    who meant the name saw another tournament. The id still wins; a note names the other."""
    import arena.web as web

    db = tmp_path / "t.sqlite"
    _two_tournaments(db)
    r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--tournament", "cup"])
    assert r.exit_code == 0 and NOTE in _no_traceback(r), r.output
    assert "first" in r.output  # (the id's tournament is the one shown)
    r = CliRunner().invoke(arena, ["replay", "--list", "--db", str(db), "--tournament", "cup"])
    assert r.exit_code == 0 and NOTE in _no_traceback(r), r.output
    assert "in tournament cup in" in r.output

    def no_server(*args: Any, **kw: Any) -> Any:
        raise OSError("not in a test")

    monkeypatch.setattr(web, "make_server", no_server)
    r = CliRunner().invoke(arena, ["web", "--db", str(db), "--tournament", "cup"])
    assert r.exit_code == 1 and NOTE in _no_traceback(r), r.output
    # An id that is no other's name, and a name: no note.
    for ref in ("cup-2f1c6976b4d8", "first"):
        r = CliRunner().invoke(arena, ["leaderboard", "--db", str(db), "--tournament", ref])
        assert r.exit_code == 0 and "note:" not in r.output, r.output


def test_the_web_page_says_how_many_matches_there_are_beside_the_latest(tmp_path: Path) -> None:
    """Defect: the leaderboard page's "Latest matches" listed the 25 latest (`recent` of
    /api/leaderboard) without saying how many were stored in all: of 27, two were out of
    sight with no word of it. Above the list it now says "the 25 latest of 27 matches
    stored; ..." (common.js's ``latestOf``, run here in node on the server's answer), and
    nothing when the list holds every match."""
    import shutil
    import subprocess

    from arena.web.demo import make_demo_db
    from arena.web.server import STATIC_DIR
    from tests.support.harness import get_json, web_server

    node = shutil.which("node")
    if node is None:
        pytest.fail("node runs the pages' common.js here (tests/web/test_web_audit_round33.py)")
    db = tmp_path / "demo.sqlite"
    make_demo_db(db, matches=27, max_deals=1)
    small = tmp_path / "small.sqlite"
    make_demo_db(small, matches=3, max_deals=1)
    answers = []
    for path in (db, small):
        with web_server(path) as server:
            answers.append(get_json(server.url, "/api/leaderboard"))
    assert [len(a["recent"]) for a in answers] == [25, 3]
    js = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    given = [[len(a["recent"]), a["tournament"]] for a in answers]
    script = js + (
        f"const given_ = {json.dumps(given)};\n"
        "process.stdout.write(JSON.stringify(given_.map(([n, t]) => latestOf(n, t))));\n"
    )
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [
        "the 25 latest of 27 matches stored; each bot's page lists all of its matches",
        "",
    ]
    page = (STATIC_DIR / "leaderboard.js").read_text(encoding="utf-8")
    assert "latestOf(data.recent.length, t)" in page and 'id: "recent-count"' in page


def test_the_exit_codes_of_arena_tournament_are_the_documented_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pins docs/tournament.md's table of `arena tournament`'s exit codes (it had none in
    one place: 0, 1, 2 and 128 + the signal were said across a paragraph): 0 with every
    match stored, 2 for a bad option or config, 1 for an error and for failed matches,
    130/143/129 for SIGINT/SIGTERM/SIGHUP, run in-process with what would play replaced."""
    import signal

    import arena.cli.tournament as cli
    from arena.tournament.runner import Interrupted, TournamentOutcome
    from tests.cli.test_bad_input import _stored_tournament

    path = _stored_tournament(tmp_path)

    def code(*extra: str) -> tuple[int, str]:
        r = CliRunner().invoke(arena, ["tournament", "--config", str(path), "--no-progress",
                                       *extra])  # fmt: skip
        return r.exit_code, _no_traceback(r)

    assert code()[0] == 0  # (every match stored: nothing to play)
    assert code("--max-deals", "-1")[0] == 2
    assert code("--set", "nonesuch=1")[0] == 2
    cfg = cli.load_config(path)
    plays: list[Any] = []
    monkeypatch.setattr(cli, "run", lambda cfg, options: plays.pop(0)())

    def failed() -> TournamentOutcome:
        total = cfg.total_matches
        return TournamentOutcome(cfg.tournament_id, cfg.db, total, total - 1, 0, 0,
                                 failed=[(0, "boom")])  # fmt: skip

    def error() -> None:
        raise cli.TournamentError("bot 'a' is gone")

    def stopped(signum: int) -> Any:
        def raising() -> None:
            raise Interrupted(signum)

        return raising

    plays.extend([failed, error])
    got, text = code()
    assert got == 1 and "1 match failed" in text, text
    got, text = code()
    assert got == 1 and text.endswith("error: bot 'a' is gone"), text
    for signum, expected in ((signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)):
        plays.append(stopped(signum))
        got, text = code()
        assert got == expected and f"Interrupted ({signal.Signals(signum).name})" in text, text
