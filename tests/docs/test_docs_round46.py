"""Round 46 of the docs audit: the docs as a reader pastes them.

Pasted as a reader would (in a clone after `make proto`, small sizes, free ports): the
commands of docs/writing-a-bot.md (the first bot, `arena-bot try` and its table, the
local rehearsal with `arena serve` and three `arena-bot run`, the class-state and
misnamed-method warnings, a bot returning None, `--records` and `arena replay` of them),
docs/tournament.md (a config like its first line's `cup`, `arena leaderboard --list`,
`--format all --out DIR/`, `--out x.txt`, `--format all` without `--out`, a bot that raises
and the leaderboard's "decisions failed" line in the table, the Markdown and the JSON),
docs/referee.md (`--port 0`, the `ruleset house (1001 + must_beat on, max_deals 5)` line,
`--db` and its `storing results` / `standings:` lines, the no-cap note, `--host` refusals,
a busy port), docs/record-format.md (`--check`'s deals counted from 1, `arena replay --list`
and its filters) and docs/rules-engine.md (`arena rules` and the errors of a ruleset file it
quotes). What did not hold is pinned here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli import main as cli
from arena.storage import Storage
from arena.web.demo import demo_record

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _counted_record() -> dict[str, Any]:
    """A referee's record in which bob's decisions failed 26 times and cid disconnected
    25 times: the record lists the first 20 of each and counts them all."""
    rec = demo_record(2, ("ann", "bob", "cid"), max_deals=3)
    rec["incidents"] = [
        *({"kind": "bot_error", "seat": 1, "deal": 0, "detail": "raised"} for _ in range(20)),
        *({"kind": "disconnect", "seat": 2, "deal": 0, "detail": "closed"} for _ in range(20)),
        {"kind": "wrong_request", "seat": 0, "deal": 1, "detail": "late"},
    ]
    rec["bot_errors"], rec["disconnects"], rec["wrong_requests"] = [0, 26, 0], [0, 0, 25], [1, 0, 0]
    rec["forfeits"] = []
    return rec


def test_replay_list_counts_what_the_record_counts_not_the_first_20_it_lists(
    tmp_path: Path,
) -> None:
    """`arena replay --list` counted the incidents stored, which a referee's record holds
    only the first 20 of per seat and kind: a bot whose decisions failed 26 times in a match
    read "20 bot_errors" there, and "26 bot_errors" in `arena replay` of that match, the
    leaderboard's `bot_errors` and the web's bot page. It now says the record's counts, as
    docs/record-format.md says."""
    db = tmp_path / "r46.sqlite"
    rec = _counted_record()
    with Storage(db) as st:
        st.ensure_tournament("cup", name="cup", fingerprint="cup", total_matches=1,
                             config={"name": "cup", "ruleset": "classic"},
                             bots=[(b, "demo") for b in rec["players"]])  # fmt: skip
        st.save_match("cup", match_id="cup-m00000", index=0, table=0, set_no=0,
                      seed=rec["seed"], seats=tuple(rec["players"]), record=rec,
                      started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
        st.finish_tournament("cup")
    listed = CliRunner().invoke(cli, ["replay", "--list", "--db", str(db)])
    assert listed.exit_code == 0, listed.output
    line = listed.stdout.strip()
    assert "bob: 26 bot_errors" in line
    assert "cid: 25 disconnects" in line
    assert "ann: 1 wrong_request" in line
    assert " 20 " not in line
    # the same counts as the replay of the match says them
    shown = CliRunner().invoke(cli, ["replay", "--db", str(db), "cup-m00000"])
    assert "bob (1): not strikes: 26 bot_errors" in shown.stdout
    assert "cid (2): not strikes: 25 disconnects" in shown.stdout
    doc = _joined(DOCS / "record-format.md")
    assert "`--list` says them all, `mine: 26 bot_errors`" in doc
    assert "(of the incidents stored: at most 20" not in doc


def test_replay_list_of_an_older_record_without_the_counts_says_the_ones_listed(
    tmp_path: Path,
) -> None:
    """A record of a referee before `bot_errors` (no per-seat count) is listed by its
    incidents, as before."""
    db = tmp_path / "old.sqlite"
    rec = _counted_record()
    del rec["bot_errors"]
    with Storage(db) as st:
        st.ensure_tournament("old", name="old", fingerprint="old", total_matches=1,
                             config={"name": "old", "ruleset": "classic"},
                             bots=[(b, "demo") for b in rec["players"]])  # fmt: skip
        st.save_match("old", match_id="old-m00000", index=0, table=0, set_no=0,
                      seed=rec["seed"], seats=tuple(rec["players"]), record=rec,
                      started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
        totals = st.incident_totals("old", ["old-m00000"])
    assert totals == {"old-m00000": {"disconnect": [0, 0, 25], "wrong_request": [1, 0, 0]}}
    listed = CliRunner().invoke(cli, ["replay", "--list", "--db", str(db)])
    assert listed.exit_code == 0, listed.output
    assert re.search(r"bob: 20 bot_errors; cid: 25 disconnects", listed.stdout)


def test_the_incidents_column_of_try_counts_an_answer_that_is_no_action(tmp_path: Path) -> None:
    """writing-a-bot.md said `try`'s `incidents` column counts the times the bot raised or
    answered illegally; a bot answering `None` (no action) counts there too, and makes `try`
    exit 1, as its section 5 says. The sentence now names it."""
    from sdk.cli import main as bot_main

    bot = tmp_path / "none_bot.py"
    bot.write_text(
        "from sdk import Bot\n\n\nclass NoneBot(Bot):\n    name = 'nonebot'\n\n"
        "    def play(self, view):\n        return None\n",
        encoding="utf-8",
    )
    r = CliRunner().invoke(bot_main, ["try", str(bot), "-n", "1", "--max-deals", "2"])
    assert r.exit_code == 1, r.output
    m = re.search(
        r"error: nonebot had (\d+) incidents? in 1 match \(the incidents column\)", r.output
    )
    assert m is not None and int(m.group(1)) > 0, r.output
    doc = _joined(DOCS / "writing-a-bot.md")
    assert (
        "`incidents` counts the times your bot raised (in `act` or a hook), answered no action"
        in doc
    )
