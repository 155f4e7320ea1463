"""Review of round 54 (review54b): a bot's other incidents paged in Chromium, as its strikes
are (tests/web/test_strike_pages_round53.py): round 54 tested the "older incidents" button
over a fake page in node only, with one click of a list whose next page was its last."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.web.data import STRIKE_PAGE
from tests.web.test_incident_pages_round54 import db, every_other  # noqa: F401 (the fixture)


def test_the_page_adds_the_older_other_incidents_at_each_click(
    driver: Any,
    base: str,
    db: Path,  # noqa: F811
) -> None:
    from tests.web.test_web_browser import load, waiting

    want = every_other(db)
    load(driver, base + "bot/a")
    rows = lambda: driver.find_elements("css selector", "#other-incidents tbody tr")  # noqa: E731
    first = len(rows())
    assert STRIKE_PAGE <= first < len(want)
    count = driver.find_element("id", "incidents-shown")
    assert count.text == f"newest first: {first} of {len(want)} shown"
    # the strikes' own list and button are apart, all of them on the first page
    assert not driver.find_element("id", "older-strikes").is_displayed()
    more = driver.find_element("id", "older-incidents")
    assert more.text.startswith("older incidents")
    clicks = 0
    while more.is_displayed():
        shown = len(rows())
        more.click()
        waiting(driver).until(lambda d, shown=shown: len(rows()) > shown)
        clicks += 1
    assert clicks >= 1 and len(rows()) == len(want)
    assert count.text == f"newest first: {len(want)} of {len(want)} shown"
    # newest first, as the API lists them: the last row is the oldest incident
    cells = rows()[-1].find_elements("css selector", "td")
    assert any(want[-1][1] in c.text for c in cells), [c.text for c in cells]
