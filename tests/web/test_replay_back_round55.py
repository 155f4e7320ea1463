"""Round 55 (review 55a): the replay's address after a held → key and Back, in a real
headless Chromium (skipped as tests/web/test_web_browser.py says without one).

Defect found and fixed: the address is written at most 20 times at once, then once every
400 ms (round 54), and Back within those 400 ms of the last step left it at a position
left before: Forward then opened that one, where docs/web.md says Forward opens the
replay where it was left. The write still waiting is made as the page is hidden."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_web_browser import load, waiting
from tests.web.test_web_browser_round54 import after, hash_position, make_db, position

pytestmark = pytest.mark.browser

#: Key presses as a held key sends them, one every `gap` ms, `n` in all; the script ends
#: (just) after the last one has been drawn, saying the address then and the table's position.
_HOLD_JS = """
const [n, gap, done] = arguments;
let sent = 0;
const id = setInterval(() => {
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
  if (++sent >= n) {
    clearInterval(id);
    setTimeout(() => {
      const t = document.getElementById("table");
      done([location.hash, +t.dataset.deal, +t.dataset.step]);
    }, 40);
  }
}, gap);
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Round 54's browser tests' database (tests/web/test_web_browser_round54.py)."""
    path = tmp_path_factory.mktemp("r55") / "r55.sqlite"
    make_db(path)
    yield path


BODY = ("css selector", "body")


def test_back_then_forward_after_a_held_key_opens_the_position_left(driver: Any, base: str) -> None:
    wide = driver
    wide.set_window_size(1400, 1000)
    load(wide, base)
    lagged = 0
    for presses in (45, 50, 55):
        load(wide, f"{base}replay/league-a-m0")
        want = after(base, "league-a-m0", presses)
        address, *shown = wide.execute_async_script(_HOLD_JS, presses, 10)
        assert shown == want
        lagged += address != f"#deal={want[0]}&step={want[1]}"
        wide.back()
        wide.forward()
        waiting(wide).until(lambda d: d.find_element(*BODY).get_attribute("data-ready") == "1")
        assert position(wide) == want
        assert hash_position(wide) == want
    # (the address was behind as Back was pressed: what the fix is for)
    assert lagged


def test_the_link_under_the_table_is_the_whole_address_of_the_position(
    driver: Any, base: str
) -> None:
    """Review 55a's J03 (the link written only when the address changed: opened at its
    position, the page's link stayed "#") and J15 (its text the path alone, not the
    address to copy)."""
    driver.set_window_size(1400, 1000)
    load(driver, f"{base}replay/league-a-m0#deal=3&step=20")
    link = driver.find_element("id", "share-link")
    want = f"{base}replay/league-a-m0#deal=3&step=20"
    assert link.get_attribute("href") == want
    assert link.text == want
