"""Round 48, upgrades: what an older arena left behind is read by this one.

The fixture ``data/abandoned_6960bee0.json`` is a record as the arena of commit 6960bee0
(2026-12-01 03:46) stored it in a tournament whose three bot processes died (``os._exit``)
during a match: every seat forfeited. A referee of then (a) listed a seat "not connected
at the start" of a match as a disconnect incident without counting it in ``disconnects``
(counted since 2026-12-01 23:05), and (b) wrote an abandoned match with no
``rules_result`` and every seat placed 1st (since 2026-12-01 09:42: ``rules_result``
null, every seat last). This arena refused the record: ``arena replay --check`` exit 1
("disconnects: seat 1 counts 0, 1 are listed", then "result: the record has a result
but the match is not over"), plain ``arena replay`` called its figures wrong, and
``arena web`` answered its replay with a 500 ("does not replay").
"""

from __future__ import annotations

import copy
import json
import urllib.error
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.storage import Storage
from engine import replay
from engine.record import ReplayError
from tests.support.harness import get_json, web_server

OLD = Path(__file__).parent / "data" / "abandoned_6960bee0.json"
FIRST = "1st (as referees before 2026-12-01 placed an abandoned match)"


@pytest.fixture
def old() -> dict[str, Any]:
    rec: dict[str, Any] = json.loads(OLD.read_text(encoding="utf-8"))
    return rec


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["replay", *args])


def test_the_fixture_is_what_that_referee_wrote(old: dict[str, Any]) -> None:
    # (what makes it old: the tests below mean nothing on a record of today's form)
    assert old["abandoned"] is True and "rules_result" not in old and "bot_errors" not in old
    assert old["result"]["places"] == [1, 1, 1]
    start = [i for i in old["incidents"] if i["detail"] == "not connected at the start"]
    assert start and all(old["disconnects"][i["seat"]] == 0 for i in start)


def test_an_older_abandoned_record_checks_and_says_where_it_places_the_seats() -> None:
    check = _run("--check", str(OLD))
    assert check.exit_code == 0, check.output
    assert "OK: every action is legal" in check.output
    assert (
        "abandoned in deal 2: every seat forfeited (d1, d2, d3); the record's result, "
        f"checked too, places them all {FIRST}"
    ) in check.output
    shown = _run(str(OLD))
    assert shown.exit_code == 0, shown.output
    assert f"all are placed {FIRST} and the rules give no result" in shown.output


def test_the_allowances_are_for_older_records_only(old: dict[str, Any]) -> None:
    replay(old)  # as written: accepted
    # A record of a referee that writes bot_errors (since 2026-12-05) counts every
    # disconnect it lists.
    with pytest.raises(ReplayError, match="disconnects: seat 1 counts 0, 1 are listed"):
        replay({**old, "bot_errors": [0, 0, 0]})
    # One that writes rules_result null places every seat last, as before.
    with pytest.raises(ReplayError, match="places every seat 3rd"):
        replay({**old, "rules_result": None, "disconnects": [1, 1, 1]})
    # An older abandoned record still holds the scores the actions make.
    edited = copy.deepcopy(old)
    edited["result"]["scores"][0] += 10
    with pytest.raises(ReplayError, match="places every seat 3rd with the scores"):
        replay(edited)


def test_arena_web_replays_a_stored_older_abandoned_match(
    tmp_path: Path, old: dict[str, Any]
) -> None:
    db = tmp_path / "old.sqlite"
    seats = tuple(old["players"])
    with Storage(db) as st:
        st.ensure_tournament("ab", name="ab", fingerprint="ab", total_matches=1,
                             config={"name": "ab", "ruleset": "classic"},
                             bots=[(b, "demo") for b in seats])  # fmt: skip
        st.save_match("ab", match_id="ab-m00000", index=0, table=0, set_no=0,
                      seed=old["seed"], seats=seats, record=old, started_at=1.7e9,
                      finished_at=1.7e9 + 0.5)  # fmt: skip
        st.finish_tournament("ab")
    with web_server(db) as server:
        try:
            summary = get_json(server.url, "/api/matches/ab-m00000")
            deal = get_json(server.url, "/api/matches/ab-m00000/deals/1?seat=0")
        except urllib.error.HTTPError as e:  # (a 500: "does not replay")
            pytest.fail(f"{e.code}: {e.read().decode()}")
    assert summary["ended"] == f"every seat forfeited: abandoned in deal 2, all placed {FIRST}"
    assert deal["steps"]
