"""Round 51: the season page of ``arena web`` in a headless Chromium (see
``test_web_browser.py`` for what it needs): ``/?season=club-w`` draws the season's
standings, links each of its tournaments' leaderboards and each bot's page of the latest
week it played in, says its notes; ``arena web --season`` links it from a tournament's
leaderboard; an unknown season says so. The fixture: tests/arena/data/season_round50."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from arena.storage import Storage
from arena.web import DataSource, make_server
from tests.web.test_web_browser import load, waiting

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(shutil.copy(FIXTURE, tmp_path_factory.mktemp("season") / "club.sqlite"))


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:  # (`arena web --season club-w`)
    server = make_server(DataSource(db, season="club-w"), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_the_season_page_links_its_tournaments_and_bots(driver: Any, base: str, db: Path) -> None:
    with Storage.open_readonly(db) as st:
        ids = {t.name: t.id for t in st.tournaments()}
    load(driver, base)  # a tournament's leaderboard links the season
    link = driver.find_element("id", "season-link")
    assert link.get_attribute("href") == f"{base}?season=club-w"
    load(driver, f"{base}?season=club-w")
    assert driver.find_element("css selector", "h1").text == "Season · club-w"
    assert driver.find_element("id", "progress").text.startswith("season club-w — classic")
    bots = {
        a.text: a.get_attribute("href")
        for a in driver.find_elements("css selector", "#leaderboard a.bot-link")
    }
    assert sorted(bots) == ["a", "b", "c"]
    for name, href in bots.items():  # (its page of the latest week it played in)
        url = urlsplit(href)
        assert url.path == f"/bot/{name}"
        assert parse_qs(url.query) == {"tournament": [ids["club-w3"]]}
    weeks = driver.find_elements("css selector", "#season-weeks a.tournament-link")
    assert [parse_qs(urlsplit(a.get_attribute("href")).query)["tournament"] for a in weeks] == [
        [ids["club-w1"]], [ids["club-w2"]], [ids["club-w3"]]
    ]  # fmt: skip
    assert "bot c's code" in driver.find_element("id", "season-weeks").text
    assert "changed since an earlier tournament" in driver.find_element("id", "season-notes").text
    weeks[1].click()  # a week's own leaderboard
    waiting(driver).until(lambda d: d.find_element("css selector", "h1").text.endswith("club-w2"))


def test_an_unknown_season_says_so(driver: Any, base: str) -> None:
    driver.get("about:blank")
    driver.get(f"{base}?season=club-x")
    waiting(driver).until(
        lambda d: d.find_element("css selector", "body").get_attribute("data-ready") == "error"
    )
    assert "no tournament 'club-x' in club.sqlite" in driver.find_element("id", "error").text
