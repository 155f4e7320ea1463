"""Round 52: the matches of two bots, found from the head to head.

Defect: with a club's 30 bots nothing led to the matches two bots played together: the
head to head counted them, and a bot's page listed all its matches 50 at a time (a bot of
a 1,000-match week: 100 of them; of a season's week, the one against a given opponent
somewhere in the pages). ``/api/matches?bot=A&vs=B`` and ``/api/bots/A?vs=B`` list those
only (``matches_total`` of them, paged as before); each head to head cell of a
tournament's leaderboard links ``/bot/A?vs=B``, whose page has a selector of opponents.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web.demo import demo_record
from tests.support.harness import get_json, web_server

BOTS = ("a", "b", "c", "d")
#: three seats of four bots: each pair meets in some matches, not in all
TABLES = [("a", "b", "c"), ("a", "c", "d"), ("b", "a", "d"), ("c", "d", "b"), ("a", "d", "c")]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("vs") / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("demo", name="demo", fingerprint="vs", total_matches=len(TABLES),
                             config={"name": "demo", "ruleset": "classic"},
                             bots=[(b, "demo") for b in BOTS])  # fmt: skip
        for i, seats in enumerate(TABLES):
            st.save_match("demo", match_id=f"demo-m{i:04d}", index=i, table=0, set_no=i,
                          seed=i, seats=seats, record=demo_record(i, seats, max_deals=1),
                          started_at=1.7e9 + i, finished_at=1.7e9 + i + 1)  # fmt: skip
        st.finish_tournament("demo")
    with web_server(path) as server:
        yield server.url


def together(base: str, a: str, b: str) -> list[str]:
    every = get_json(base, "/api/matches")["matches"]
    return [m["match_id"] for m in every if a in m["players"] and b in m["players"]]


def test_the_matches_of_two_bots(base: str) -> None:
    expected = together(base, "a", "b")
    assert 0 < len(expected) < len(get_json(base, "/api/matches?bot=a")["matches"])
    page = get_json(base, "/api/matches?bot=a&vs=b")
    assert [m["match_id"] for m in page["matches"]] == expected
    assert page["matches_total"] == len(expected) and page["next_before"] is None
    # paged as without vs, newest first
    first = get_json(base, "/api/matches?bot=a&vs=b&limit=1")
    assert [m["match_id"] for m in first["matches"]] == expected[:1]
    assert first["matches_total"] == len(expected)
    rest = get_json(base, f"/api/matches?bot=a&vs=b&before={first['next_before']}")
    assert [m["match_id"] for m in rest["matches"]] == expected[1:]
    # the bot page's first page, and the head to head it comes from
    bot = get_json(base, "/api/bots/a?vs=b")
    assert bot["vs"] == "b" and bot["matches_total"] == len(expected)
    assert [m["match_id"] for m in bot["matches"]] == expected
    assert get_json(base, "/api/bots/a")["vs"] is None
    cell = get_json(base, "/api/leaderboard")["head_to_head"]["cells"]["a"]["b"]
    assert cell["played"] == len(expected)


def _refused(base: str, path: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(base + path.lstrip("/"), timeout=10)
    return e.value.code, json.loads(e.value.read().decode())


def test_an_opponent_the_tournament_never_seated_is_a_404(base: str) -> None:
    for path in ("/api/matches?bot=a&vs=zed", "/api/bots/a?vs=zed"):
        status, body = _refused(base, path)
        assert status == 404 and "no bot 'zed' in tournament 'demo'" in body["error"]


@pytest.mark.browser
def test_a_head_to_head_cell_opens_the_matches_of_the_two(driver: Any, base: str) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.web.test_web_browser import load, waiting

    load(driver, base)
    link = driver.find_element(
        "css selector", '#head-to-head tr[data-bot="a"] a.h2h-link[href*="vs=b"]'
    )
    driver.get(link.get_attribute("href"))
    load(driver, driver.current_url)
    assert driver.find_element("css selector", "#bot-matches").is_displayed()
    heading = [h.text for h in driver.find_elements("css selector", "h2")]
    assert "Matches against b (2)" in heading, heading
    rows = driver.find_elements("css selector", "#bot-matches tbody tr")
    assert len(rows) == 2 and all(" b #" in r.text or r.text.startswith("b #") for r in rows)
    pick = Select(driver.find_element("id", "vs-select"))
    assert pick.first_selected_option.get_attribute("value") == "b"
    pick.select_by_value("")  # every opponent: the page again, without vs
    waiting(driver).until(lambda d: "vs=" not in d.current_url)
    load(driver, driver.current_url)
    assert len(driver.find_elements("css selector", "#bot-matches tbody tr")) == 4


def test_vs_without_a_bot_or_naming_the_bot_itself_is_refused(base: str) -> None:
    """(Round 52's review) ``?vs=C`` alone was read as ``?bot=C``, and ``vs`` naming the
    bot listed all its matches as "against" itself: both a 400 naming what to give."""
    status, body = _refused(base, "/api/matches?vs=b")
    assert status == 400 and "give the bot too (bot=B&vs=C)" in body["error"], body
    for path in ("/api/matches?bot=a&vs=a", "/api/bots/a?vs=a"):
        status, body = _refused(base, path)
        assert status == 400 and "names the bot itself" in body["error"], (path, body)
    # (an empty vs is none: the page's "every opponent")
    assert get_json(base, "/api/bots/a?vs=")["vs"] is None
