"""Round 25 of the replay audit, the web's side: the replay page of matches other than the
classic game's usual ones, against `arena replay` (tests/arena/test_viewer_round25.py).

The browser tests need Chromium (see tests/web/test_web_browser.py); the API tests do not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web.demo import DEMO_BOTS, demo_record
from engine.record import forfeit_result
from tests.support.harness import get_json
from tests.web.test_web_browser import load

#: (match id, preset) of the matches stored
MATCHES = (  # (and r25-m00002, below)
    ("r25-m00000", "classic"),
    ("r25-m00001", "1001"),
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("r25") / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament(
            "r25", name="r25", fingerprint="r25", total_matches=3,
            config={"name": "r25", "ruleset": "classic", "deals": "independent"},
            bots=[(b, "demo") for b in DEMO_BOTS],
        )  # fmt: skip
        for i, (match_id, preset) in enumerate(MATCHES):
            record = demo_record(i, DEMO_BOTS, preset=preset, max_deals=3)
            st.save_match("r25", match_id=match_id, index=i, table=0, set_no=i, seed=i,
                          seats=DEMO_BOTS, record=record, started_at=1, finished_at=2)  # fmt: skip
        # every seat forfeited on the match's last action: all placed last, a tie of each
        # pair (the referee's result; the rules' own is kept beside it)
        record = demo_record(2, DEMO_BOTS, max_deals=3)
        record.update(rules_result=record["result"], forfeits=[0, 1, 2],
                      result=forfeit_result(record["result"], [0, 1, 2], 1000))  # fmt: skip
        last = len(record["deals"]) - 1
        record["incidents"] = [{"kind": "forfeit", "seat": s, "deal": last, "detail": "test"}
                               for s in range(3)]  # fmt: skip
        st.save_match("r25", match_id="r25-m00002", index=2, table=0, set_no=2, seed=2,
                      seats=DEMO_BOTS, record=record, started_at=1, finished_at=2)  # fmt: skip
        st.finish_tournament("r25")
    yield path


def test_the_summary_says_how_the_match_ended_and_the_obligatory_bid(base: str) -> None:
    """Defect: the replay page's header said the result's reason as the record keys it
    ("ended: max_deals", "ended: forfeits"), and its bids had no word of classic's
    obligatory bid, which first hand holds without speaking: a deal whose two others
    passed showed "Bids: bob pass, cid pass" beside "bid 100 · declarer ann". The summary
    now says both, as `arena replay` does."""
    for match_id, preset in MATCHES:
        summary = get_json(base, f"/api/matches/{match_id}")
        assert summary["result"]["reason"] == "max_deals"
        assert summary["ended"] == "the deal cap (max_deals 3) after deal 3: placed by score"
        assert summary["obligatory_bid"] == (100 if preset == "classic" else None)


def test_the_replay_page_shows_the_obligatory_bid_and_the_end_in_words(
    driver: Any, base: str
) -> None:
    """The page reads them: the bids of a classic deal start with first hand's obligatory
    bid from the deal's first step on (1001 has none: "none yet"), and the header says the
    end as `arena replay` does."""
    for match_id, preset in MATCHES:
        record = get_json(base, f"/api/matches/{match_id}/record")
        load(driver, f"{base}replay/{match_id}#deal=0&step=0")
        bids = driver.find_element("id", "bids").text
        if preset == "classic":
            first_hand = (record["deals"][0]["dealer"] + 1) % 3
            assert bids == f"{record['players'][first_hand]} 100 (obligatory)"
        else:
            assert bids == "none yet"
        meta = driver.find_element("id", "match-meta").text
        assert "ended: the deal cap (max_deals 3) after deal 3: placed by score" in meta, meta
        # the deal's auction as the rules replay it: the obligatory bid, then every spoken one
        last = get_json(base, f"/api/matches/{match_id}/deals/0")["steps"][-1]["i"]
        load(driver, f"{base}replay/{match_id}#deal=0&step={last}")
        spoken = [a["action"] for a in record["deals"][0]["actions"]
                  if a["action"] == "pass" or a["action"].startswith("bid ")]  # fmt: skip
        said = driver.find_element("id", "bids").text.split(", ")
        assert len(said) == len(spoken) + (preset == "classic")


def test_a_give_names_its_receiver_in_the_action_log(driver: Any, base: str) -> None:
    """Defect: the replay page's action log and step line said a passed card as the record
    writes it, "careful: give 9♠ to 0", a seat number where the page names every seat by
    its bot and `arena replay` says "gives 9♠ to bold (0)" (with four players, whose
    dealer sits out, the numbers are harder still to follow)."""
    for match_id, _ in MATCHES:
        record = get_json(base, f"/api/matches/{match_id}/record")
        actions = record["deals"][0]["actions"]
        k = next(i for i, a in enumerate(actions) if a["action"].startswith("give "))
        card, to = actions[k]["action"].split()[1], int(actions[k]["action"].split()[-1])
        said = f"give {card} to {record['players'][to]}"
        load(driver, f"{base}replay/{match_id}#deal=0&step={k + 1}")
        giver = record["players"][actions[k]["seat"]]
        line = driver.find_element("css selector", "#action-log li.current").text
        assert line == f"{giver}: {said}", line
        assert driver.find_element("id", "step-label").text.endswith(f"{giver}: {said}")


def test_head_to_head_says_its_ties(driver: Any, base: str) -> None:
    """Defect: a head-to-head cell said "ahead/played (share)", the share counting a tie as
    half, and not the ties: two bots that shared every place (two forfeiters of four, say)
    read "0/24 (50%)". The cell now says the ties beside it."""
    board = get_json(base, "/api/leaderboard")
    load(driver, base)
    cells = board["head_to_head"]["cells"]
    seen = 0
    for a, row in cells.items():
        for b, c in row.items():
            col = 2 + board["head_to_head"]["bots"].index(b)  # (the first is the row's name)
            td = driver.find_element(
                "css selector", f'#head-to-head tr[data-bot="{a}"] td:nth-child({col})'
            )
            pct = round(100 * (c["ahead"] + c["tied"] / 2) / c["played"])
            tied = f", {c['tied']} tied" if c["tied"] else ""
            assert td.text == f"{c['ahead']}/{c['played']}{tied} ({pct}%)", td.text
            seen += bool(c["tied"])
    assert seen == 6  # every ordered pair tied in r25-m00002
