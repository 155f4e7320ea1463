"""Round 47 in the browser: the replay page of a match of rare rules says what `arena
replay` says (tests/arena/test_replay_rare_round47.py has the defects and the data).

A 1001 match of four whose record names its ruleset as a preset with overrides (``{"preset":
"1001", "talon_visible": false}``): the header said ``? (classic + talon_visible off)``;
the last hand who took the talon after an all-pass (and threw in) was shown as declarer at
40 with nothing to say why; face up, the hidden talon was drawn as any other.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from engine import PRESETS
from tests.arena.test_replay_rare_round47 import FOUR, HIDDEN, LAST_HAND, _play
from tests.support.harness import web_server
from tests.web.test_web_browser import load

MATCH = "t4-m00000"


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    rec = _play(PRESETS["1001-4p"], 5, 4)  # deal 1: pass, pass, the last hand throws in
    rec["ruleset"] = {"preset": "1001", "talon_visible": False, "max_deals": 4}
    return rec


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, record: dict[str, Any]) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("r47") / "r47.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("t4", name="t4", fingerprint="t4", total_matches=1,
                             config={"name": "t4", "ruleset": "1001-4p"},
                             bots=[(b, "demo") for b in FOUR])  # fmt: skip
        st.save_match("t4", match_id=MATCH, index=0, table=0, set_no=0, seed=record["seed"],
                      seats=tuple(FOUR), record=record, started_at=1.7e9,
                      finished_at=1.7e9 + 0.5)  # fmt: skip
        st.finish_tournament("t4")
    with web_server(db) as server:
        yield server.url


def _text(driver: Any, element_id: str) -> str | None:
    found = driver.find_elements("id", element_id)
    return found[0].text if found else None


def test_the_page_says_the_rules_the_last_hands_take_and_the_hidden_talon(
    driver: Any, base: str, record: dict[str, Any]
) -> None:
    acts = [a["action"] for a in record["deals"][0]["actions"]]
    assert acts == ["pass", "pass", "throw-in"]  # (the data: see the fixture)
    declarer = record["deals"][0]["actions"][-1]["seat"]
    load(driver, f"{base}replay/{MATCH}#deal=0&step=2")  # the auction just over
    meta = _text(driver, "match-meta") or ""
    assert meta.startswith("1001-4p (talon_visible off), 4 deals max · seed 5"), meta
    assert _text(driver, "talon-why") == LAST_HAND
    assert _text(driver, "talon-hidden") == HIDDEN
    load(driver, f"{base}replay/{MATCH}#deal=0&step=1")  # still bidding: nobody took it
    assert _text(driver, "talon-why") is None
    other = next(s for s in range(4) if s not in (declarer, record["deals"][0]["dealer"]))
    load(driver, f"{base}replay/{MATCH}#deal=0&step=3&seat={other}")  # as a defender saw it
    assert _text(driver, "talon-why") == LAST_HAND
    assert _text(driver, "talon-hidden") is None  # (he sees no talon: nothing drawn to explain)
    assert "(not shown to this seat)" in (_text(driver, "talon") or "")
