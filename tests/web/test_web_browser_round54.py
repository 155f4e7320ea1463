"""Round 54: `arena web` as a spectator uses it, in a real headless Chromium (skipped as
tests/web/test_web_browser.py says without one; one browser for the module).

Defects found so and fixed:

- A held → key (30 steps a second) changed the address more often than a browser lets a
  page (Chromium: 200 times in 10 s; it then ignores the calls and logs "Throttling
  navigation"): the address kept a position left seconds before, and a reload or a
  bookmark restored that one. The replay now writes it at most 20 times at once, then once
  every 400 ms, the latest position last.
- On a phone (the action log under the table) every step scrolled the window down to the
  log's current line (``scrollIntoView``): the table and the controls left the screen at the
  first step. The log now scrolls in its own box only.
- The tournament selector, as wide as its longest option (two tournaments of one name are
  listed with their id and date), made a phone's page scroll sideways; so did a bot page's
  opponent selector naming a long bot. Both are cut at the window's width.

And every page of the kinds spectators open logs nothing to the console.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.ratings import rate_results
from arena.storage import Storage
from arena.web.demo import demo_record
from tests.support.harness import get_json, web_server
from tests.web.test_web_browser import load, waiting

pytestmark = pytest.mark.browser

LONG = "L" + "o" * 62 + "g"  # the longest bot name a tournament config accepts
SEATS = ("ann", LONG, "cid")
FOUR = ("ann", "bob", "cid", "dan")
#: Two tournaments of this name: the selector lists them with their id and date.
LEAGUE = "league-of-the-north-spring-2026-division-one"


def make_db(path: Path) -> None:
    """``league-a`` and ``league-b`` (both named LEAGUE; classic, one match of 10 deals,
    300 steps), then ``four`` (1001-4p, one match of 3 deals)."""
    with Storage(path) as st:
        for tid, name, seats, preset, deals in (
            ("league-a", LEAGUE, SEATS, "classic", 10),
            ("league-b", LEAGUE, SEATS, "classic", 10),
            ("four", "four", FOUR, "1001-4p", 3),
        ):
            st.ensure_tournament(tid, name=name, fingerprint=tid, total_matches=1,
                                 config={"name": name, "ruleset": preset, "deals": "independent"},
                                 bots=[(b, "demo") for b in seats])  # fmt: skip
            st.save_match(tid, match_id=f"{tid}-m0", index=0, table=0, set_no=0, seed=0,
                          seats=seats, record=demo_record(0, seats, preset=preset, max_deals=deals),
                          started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
            _, history = rate_results(st.match_results(tid), seats)
            st.save_ratings(tid, history, finished=True)
            st.finish_tournament(tid)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("r54") / "r54.sqlite"
    make_db(path)
    yield path


@pytest.fixture
def wide(driver: Any) -> Iterator[Any]:
    """The module's browser at a desktop's size (a test may make it a phone's)."""
    driver.set_window_size(1400, 1000)
    driver.get_log("browser")  # (what pages before logged is theirs)
    yield driver
    driver.set_window_size(1400, 1000)


def position(driver: Any) -> list[int]:
    table = driver.find_element("css selector", "#table")
    return [int(table.get_attribute("data-deal")), int(table.get_attribute("data-step"))]


def hash_position(driver: Any) -> list[int] | None:
    got = urllib.parse.parse_qs(driver.execute_script("return location.hash.slice(1)"))
    return [int(got["deal"][0]), int(got["step"][0])] if "deal" in got else None


def after(base: str, match: str, presses: int) -> list[int]:
    """[deal, step] that `presses` of → lead to from the match's start."""
    steps = [len(d["actions"]) + 1 for d in get_json(base, f"/api/matches/{match}/record")["deals"]]
    assert sum(steps) > presses + 1
    deal = 0
    while presses >= steps[deal]:
        presses -= steps[deal]
        deal += 1
    return [deal, presses]


#: Key presses as a held key sends them: one every `gap` ms, `n` in all; the script ends
#: once every press has been handled and the page moved no more.
_HOLD_JS = """
const [n, gap, done] = arguments;
let sent = 0;
const id = setInterval(() => {
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
  if (++sent >= n) { clearInterval(id); setTimeout(done, 200); }
}, gap);
"""


#: Counts the page's changes of its address, and the time the presses took.
_COUNT_JS = """
const replace = history.replaceState.bind(history);
window.addressChanges = 0;
history.replaceState = (...args) => { window.addressChanges += 1; return replace(...args); };
window.pressesFrom = performance.now();
"""


def test_the_address_changes_at_most_twenty_times_at_once_then_every_400_ms(
    wide: Any, base: str
) -> None:
    presses = 60
    load(wide, f"{base}replay/league-a-m0")
    wide.execute_script(_COUNT_JS)
    wide.execute_async_script(_HOLD_JS, presses, 10)
    took = wide.execute_script("return performance.now() - window.pressesFrom")
    written = wide.execute_script("return window.addressChanges")
    # a burst of 20, then one a 400 ms (each step changed it: 60)
    assert written <= 20 + 1 + took / 400, (written, took)
    # the last position is written all the same
    want = after(base, "league-a-m0", presses)
    waiting(wide).until(lambda d: hash_position(d) == position(d) == want)


@pytest.mark.slow  # (past Chromium's own limit: 260 steps, 10 s)
def test_a_held_arrow_key_keeps_the_address_at_the_position_shown(wide: Any, base: str) -> None:
    match, presses = "league-b-m0", 260  # past Chromium's 200 changes of the address in 10 s
    want = after(base, match, presses)
    load(wide, f"{base}replay/{match}")
    wide.execute_async_script(_HOLD_JS, presses, 10)
    waiting(wide).until(lambda d: position(d) == want)
    # the address follows (the last position is written once the presses stop)...
    waiting(wide).until(lambda d: hash_position(d) == want)
    link = wide.find_element("id", "share-link").get_attribute("href")
    assert link.endswith(f"#deal={want[0]}&step={want[1]}"), link
    throttled = [e["message"] for e in wide.get_log("browser") if "Throttling" in e["message"]]
    assert not throttled, throttled
    # ... and a reload opens that position
    wide.refresh()
    body = ("css selector", "body")
    waiting(wide).until(lambda d: d.find_element(*body).get_attribute("data-ready") == "1")
    assert position(wide) == want


def test_stepping_on_a_phone_keeps_the_table_in_view(wide: Any, base: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    deals = get_json(base, "/api/matches/league-a-m0/record")["deals"]
    deal = next(k for k, d in enumerate(deals) if len(d["actions"]) >= 25)
    wide.set_window_size(375, 800)
    load(wide, f"{base}replay/league-a-m0#deal={deal}&step=20")  # the log's current line far down
    assert wide.execute_script("return window.scrollY") == 0
    for _ in range(5):
        ActionChains(wide).send_keys(Keys.ARROW_RIGHT).perform()
    waiting(wide).until(lambda d: position(d) == [deal, 25])
    seen = wide.execute_script(
        """const log = document.getElementById("action-log");
        const cur = log.querySelector("li.current").getBoundingClientRect();
        const box = log.getBoundingClientRect();
        return {scrolled: window.scrollY, logScrolled: log.scrollTop,
                inBox: cur.top >= box.top - 1 && cur.bottom <= box.bottom + 1,
                table: document.getElementById("table").getBoundingClientRect().top};"""
    )
    # the window stays where the reader left it: the table is in view
    assert seen["scrolled"] == 0 and 0 < seen["table"] < 800, seen
    # the log scrolled its own box to the current action
    assert seen["logScrolled"] > 0 and seen["inBox"], seen


@pytest.mark.parametrize(
    "page",
    ["?tournament=four", "bot/ann?tournament=league-b", "bot/cid?tournament=league-a&vs=ann"],
    ids=["tournament-selector", "opponent-selector", "opponent-selector-vs"],
)
def test_a_selector_of_long_options_does_not_widen_a_phone_page(
    wide: Any, base: str, page: str
) -> None:
    wide.set_window_size(375, 800)
    load(wide, base + page)
    seen = wide.execute_script(
        """return {page: document.documentElement.scrollWidth,
                   width: document.documentElement.clientWidth,
                   selects: [...document.querySelectorAll("main select")].map(
                     (s) => [s.id, s.getBoundingClientRect().right])};"""
    )
    assert seen["selects"], seen  # (the page has its selector)
    assert seen["page"] <= seen["width"], seen
    for _, right in seen["selects"]:
        assert right <= seen["width"], seen


def _quoted(name: str) -> str:
    return urllib.parse.quote(name, safe="")


@pytest.mark.parametrize(
    "page",
    [
        "",
        "?tournament=league-a",
        "?tournament=four",
        f"bot/{_quoted(LONG)}?tournament=league-b",
        "bot/ann?tournament=league-a&vs=cid",
        "bot/dan?tournament=four",
        "replay/league-a-m0#deal=3&step=20",
        "replay/league-a-m0#deal=9&step=0&seat=1",
        "replay/four-m0#deal=1&step=12",
        "replay/four-m0#deal=2&step=0&seat=2",
    ],
)
def test_the_pages_log_nothing_to_the_console(wide: Any, base: str, page: str) -> None:
    load(wide, base + page)
    logged = [(e["level"], e["message"]) for e in wide.get_log("browser")]
    assert not logged, logged


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Tournament "t" (tests/web/test_strike_pages_round53.py) of 64 matches, a's seat with
    a strike and 1 to 3 answers to no pending request in each: both lists paged."""
    from tests.web.test_strike_pages_round53 import store_tournament

    def incidents(index: int) -> list[dict[str, Any]]:
        late = [{"kind": "wrong_request", "seat": 0, "deal": 0, "detail": f"m{index} late {k}"}
                for k in range(1 + index % 3)]  # fmt: skip
        return [*late, {"kind": "timeout", "seat": 0, "deal": 0, "detail": f"m{index} strike"}]

    path = store_tournament(tmp_path_factory.mktemp("paged") / "t.sqlite", 64, incidents)
    with web_server(path) as server:
        yield server.url, path


def test_the_strikes_and_the_other_incidents_page_apart_in_a_browser(
    wide: Any, paged: tuple[str, Path]
) -> None:
    """The round-54 "older incidents" (bot.js, ``incidentList``) in a real browser, beside
    the "older strikes" of the same page: each button adds its own list's next page, says
    how many are shown, and is gone after the last; the page logs nothing."""
    base, path = paged
    with Storage.open_readonly(path) as st:
        listed = list(reversed(st.incidents("t", bot="a")))  # newest first
    want = {
        "strikes": [i["detail"] for i in listed if i["kind"] == "timeout"],
        "other-incidents": [i["detail"] for i in listed if i["kind"] == "wrong_request"],
    }
    load(wide, base + "bot/a")

    def details(table: str) -> list[str]:
        css = f"#{table} tbody td:last-child"  # (in one call: a call a cell took seconds)
        got: list[str] = wide.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((c) => c.textContent)", css
        )
        return got

    for table, what in (("other-incidents", "incidents"), ("strikes", "strikes")):
        other = "strikes" if table == "other-incidents" else "other-incidents"
        others_before = details(other)
        more = wide.find_element("id", f"older-{what}")
        first = len(details(table))
        assert first < len(want[table]) and more.is_displayed()
        clicks = 0
        while more.is_displayed():
            shown = len(details(table))
            more.click()
            clicks += 1
            waiting(wide).until(lambda d, t=table, n=shown: len(details(t)) > n)
        assert clicks >= 1 and details(table) == want[table]
        count = wide.find_element("id", f"{what}-shown").text
        assert count == f"newest first: {len(want[table])} of {len(want[table])} shown"
        assert details(other) == others_before  # (the other list is left as it was)
    logged = [(e["level"], e["message"]) for e in wide.get_log("browser")]
    assert not logged, logged
