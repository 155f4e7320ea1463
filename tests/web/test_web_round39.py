"""Round 39 of the web audit: the leaderboard page and the replay viewer as their readers use
them.

Checked by hand in headless Chromium (1400 px and 375 px wide) on tournaments made here: 55
bots with two long names (one of 64 characters), 1001-4p with ``talon_visible = false``
(the dealer sitting out), a match with a forfeit, matches ended by the deal cap, deals
conceded and thrown in; every key docs/web.md names, deep links reloaded, the back and
forward buttons, a tournament left unfinished with a runner's lock (its rows against
`arena leaderboard --format json`: equal), and `arena leaderboard --format html` opened from
disk. The defects found are pinned below: the keys did other things once the slider or a
selector had the focus, Alt+← (the browser's Back) stepped the replay back instead, a deal
with no trick (conceded, thrown in) left its "Tricks" heading empty, the lines of the rating
plot did not say whose they were (55 bots: colours alone tell nobody apart), a 64-character
name widened the leaderboard past the window, and the HTML file's head to head of many bots
made the whole page scroll sideways.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as cli
from arena.ratings import rate_results
from arena.storage import Storage
from arena.web.demo import demo_record
from engine import PRESETS, Concede, Game
from engine.record import forfeit_result
from tests.web.test_web_browser import load, waiting

LONG = "L" + "o" * 62 + "g"  # the longest name a tournament config accepts
SEATS = ("ann", LONG, "cid")


def _conceding_record(seed: int) -> dict[str, Any]:
    """Classic, 2 deals, the declarer conceding each at once: deals with no trick."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed, list(SEATS))
    while not g.is_over:
        acts = g.legal_actions()
        concede = [a for a in acts if isinstance(a, Concede)]
        g.apply(concede[0] if concede else acts[-1 if g.phase.name == "BIDDING" else 0])
    rec = g.record()
    for deal in rec["deals"]:
        for a in deal["actions"]:
            a["ms"], a["by"] = 1.0, "bot"
    rec["incidents"], rec["forfeits"] = [], []
    return rec


def make_db(path: Path) -> None:
    """Tournament ``r39``: m0 conceded deals only, m1 (played out, 3 deals) with a forfeit."""
    with Storage(path) as st:
        st.ensure_tournament("r39", name="r39", fingerprint="r39", total_matches=2,
                             config={"name": "r39", "ruleset": "classic", "deals": "independent"},
                             bots=[(b, "demo") for b in SEATS])  # fmt: skip
        played = demo_record(1, SEATS, max_deals=3)
        played["rules_result"] = played["result"]
        played["result"] = forfeit_result(played["result"], [2], 1000)
        played["forfeits"] = [2]
        played["incidents"] += [{"kind": "forfeit", "seat": 2, "deal": 1, "detail": "3 strikes"}]
        for i, rec in enumerate((_conceding_record(0), played)):
            st.save_match("r39", match_id=f"r39-m{i}", index=i, table=0, set_no=i, seed=i,
                          seats=SEATS, record=rec, started_at=1.7e9 + i,
                          finished_at=1.7e9 + i + 1)  # fmt: skip
        _, history = rate_results(st.match_results("r39"), SEATS)
        st.save_ratings("r39", history, finished=True)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("r39") / "r39.sqlite"
    make_db(path)
    yield path


# --- the browser (driver and base: tests/web/conftest.py) -------------------------------


def _position(driver: Any) -> tuple[int, int]:
    """(deal, step) of the replay, 0-based, as the step line says it."""
    m = re.match(r"deal (\d+)/\d+ · step (\d+)/", driver.find_element("id", "step-label").text)
    assert m, driver.find_element("id", "step-label").text
    return int(m[1]) - 1, int(m[2])


def _press(driver: Any, key: str, *mods: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(driver)
    for m in mods:
        chain.key_down(m)
    chain.send_keys(key)
    for m in mods:
        chain.key_up(m)
    chain.perform()


@pytest.mark.browser
def test_every_key_steps_the_replay_wherever_the_focus_is(driver: Any, base: str) -> None:
    """Defect: once the slider or a selector had the focus (a click on it, a deal chosen),
    the keys docs/web.md names did what those controls do: → chose the next deal in the deal
    selector, PgDn moved the slider backwards, Shift+→ moved it by one action. And Alt+←,
    the browser's Back, stepped the replay back an action (the page took it for ←)."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    at = lambda want: waiting(driver).until(lambda d: _position(d) == want)  # noqa: E731
    load(driver, f"{base}replay/r39-m1#deal=0&step=3")
    bounds = driver.execute_script(  # the deal's trick ends, as the page finds them
        "return state.data.steps.map((s, i) => i && s.tricks_done !== state.data.steps[i - 1]"
        ".tricks_done ? i : null).filter((i) => i !== null)"
    )
    _press(driver, Keys.ARROW_RIGHT)
    at((0, 4))
    _press(driver, Keys.ARROW_LEFT)
    at((0, 3))
    _press(driver, Keys.ARROW_RIGHT, Keys.SHIFT)
    at((0, bounds[0]))
    _press(driver, Keys.ARROW_LEFT, Keys.SHIFT)
    at((0, 0))
    _press(driver, Keys.PAGE_DOWN)
    at((1, 0))
    _press(driver, Keys.PAGE_UP)
    at((0, 0))
    # a deal chosen in the selector: the focus stays there
    Select(driver.find_element("id", "deal-select")).select_by_value("1")
    at((1, 0))
    assert driver.switch_to.active_element.get_attribute("id") == "deal-select"
    _press(driver, Keys.ARROW_RIGHT)
    at((1, 1))
    _press(driver, Keys.PAGE_DOWN)
    at((2, 0))
    # the slider clicked (its middle): the focus stays there
    driver.find_element("id", "step-slider").click()
    assert driver.switch_to.active_element.get_attribute("id") == "step-slider"
    mid = _position(driver)[1]
    _press(driver, Keys.ARROW_LEFT)
    at((2, mid - 1))
    _press(driver, Keys.PAGE_UP)
    at((2, 0))
    _press(driver, Keys.PAGE_UP)
    at((1, 0))
    # Alt+← is the browser's: the replay does not step (the URL keeps the position)
    _press(driver, Keys.ARROW_RIGHT)
    at((1, 1))
    _press(driver, Keys.ARROW_LEFT, Keys.ALT)
    _press(driver, Keys.ARROW_RIGHT, Keys.CONTROL)
    _press(driver, Keys.ARROW_RIGHT)  # a key after them, to know they were handled
    at((1, 2))
    # the position is in the URL: a reload keeps it
    assert driver.current_url.endswith("#deal=1&step=2")
    driver.refresh()
    waiting(driver).until(
        lambda d: d.find_element("css selector", "body").get_attribute("data-ready") == "1"
    )
    at((1, 2))


@pytest.mark.browser
def test_a_conceded_deal_says_it_has_no_tricks(driver: Any, base: str) -> None:
    """Defect: a deal conceded (or thrown in) had its "Tricks" heading over nothing, where
    the other sections say "none"."""
    load(driver, f"{base}replay/r39-m0#deal=0&step=99")
    assert "conceded" in driver.find_element("id", "deal-outcome").text
    tricks = driver.find_element("id", "tricks")
    assert tricks.text == "none" and not tricks.find_elements("css selector", "li")
    # a deal played out lists its tricks there
    load(driver, f"{base}replay/r39-m1#deal=0&step=99")
    assert driver.find_elements("css selector", "#tricks li")
    assert "forfeited: cid (seat 2, in deal 2)" in driver.find_element("id", "match-meta").text


@pytest.mark.browser
def test_the_leaderboard_fits_a_long_name_and_its_plot_names_each_line(
    driver: Any, base: str
) -> None:
    """Defects: a 64-character name made the table wider than its panel (it scrolled
    sideways on a 1400 px window), and a line of the rating plot did not say whose it was."""
    load(driver, base)
    box = driver.execute_script(
        """const t = document.getElementById("leaderboard");
        return [t.getBoundingClientRect().width, t.parentElement.clientWidth];"""
    )
    assert box[0] <= box[1], box
    link = driver.find_element("css selector", f'#leaderboard tr[data-bot="{LONG}"] a')
    assert link.text.replace("\n", "") == LONG  # wrapped, not cut
    titles = driver.execute_script(
        """return [...document.querySelectorAll("#rating-plot polyline.mu")]
            .map((l) => [l.dataset.bot, l.querySelector("title").textContent]);"""
    )
    assert sorted(b for b, _ in titles) == sorted(SEATS)
    for bot, title in titles:
        assert title.startswith(f"{bot}: μ "), title


# --- `arena leaderboard --format html`, opened from disk ---------------------------------


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.tables: list[list[str]] = []  # per table: the classes of its ancestors
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables.append([c for _, c in self.stack])
        for k in ("src", "href", "action", "data"):
            if a.get(k):
                self.urls.append(str(a[k]))
        self.stack.append((tag, a.get("class") or ""))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass


def test_the_html_file_works_offline_and_scrolls_its_tables_in_their_box(db: Path) -> None:
    """Defect: the head to head table of the HTML file was not in a box of its own, as the
    leaderboard table is: of many bots (or one long name) it made the whole page scroll
    sideways, title and plot with it. The file fetches nothing (no script, no URL)."""
    r = CliRunner().invoke(cli, ["leaderboard", "--db", str(db), "--format", "html"])
    assert r.exit_code == 0, r.output
    page = _Page()
    page.feed(r.output)
    assert len(page.tables) == 2
    for ancestors in page.tables:
        assert "wrap" in ancestors
    assert page.urls == [] and "<script" not in r.output and "@import" not in r.output
    assert not re.search(r"url\(", r.output)
    # the one URL in the file is SVG's namespace, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", r.output)) == {"http://www.w3.org/2000/svg"}
