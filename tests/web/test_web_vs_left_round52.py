"""Round 52 (review b): the opponent selector of a bot's page names an opponent who left.

Defect: a tournament's head to head links each cell's matches (``/bot/a?vs=e``), and a
bot that played in it and is no longer seated (a member who left) has its cells. Its page
listed the matches against him under "Matches against e (1)" while the selector over
them said "every opponent": it offered the seated bots only.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.review.test_mutation_review_round52b import left

__all__ = ["left"]  # (the fixture: a tournament of bots a to d, and e who left)


@pytest.mark.browser
def test_the_selector_names_an_opponent_who_left(driver: Any, left: str) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.web.test_web_browser import load

    load(driver, left + "bot/a?vs=e")
    heading = [h.text for h in driver.find_elements("css selector", "h2")]
    assert "Matches against e (1)" in heading, heading
    pick = Select(driver.find_element("id", "vs-select"))
    assert pick.first_selected_option.get_attribute("value") == "e"
    assert [o.get_attribute("value") for o in pick.options] == ["", "b", "c", "d", "e"]
