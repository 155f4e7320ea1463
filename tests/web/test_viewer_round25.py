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
from tests.support.harness import get_json
from tests.web.test_web_browser import load

#: (match id, preset) of the matches stored
MATCHES = (("r25-m00000", "classic"), ("r25-m00001", "1001"))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("r25") / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament(
            "r25", name="r25", fingerprint="r25", total_matches=len(MATCHES),
            config={"name": "r25", "ruleset": "classic", "deals": "independent"},
            bots=[(b, "demo") for b in DEMO_BOTS],
        )  # fmt: skip
        for i, (match_id, preset) in enumerate(MATCHES):
            record = demo_record(i, DEMO_BOTS, preset=preset, max_deals=3)
            st.save_match("r25", match_id=match_id, index=i, table=0, set_no=i, seed=i,
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
