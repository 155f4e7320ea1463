"""Round 53: a bot's strikes in ``arena web`` come a page at a time, as its matches do.

Limit left by round 52: a bot's page (``/api/bots/<name>``) listed every strike of the bot
at once, though its matches came 50 at a time: a bot that timed out in every deal of
thousands of matches made a page of every one. Its newest ``STRIKE_PAGE`` strikes now come
with the page, newest first, ``strikes_total`` says how many there are, and the older ones
come from ``/api/bots/<name>/strikes?before=I`` (``strikes_next_before``), a match's strikes
on one page; the page's "older strikes" button adds them under the first.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web import DataSource
from arena.web.data import STRIKE_PAGE
from arena.web.demo import demo_record
from tests.support.harness import get_json, web_server

BOTS = ("a", "b", "c")
MATCHES = 40


def strikes_of(index: int) -> int:
    """How many strikes a's seat has in match ``index``: 0 to 4, most matches some."""
    return index % 5


def store_tournament(
    path: Path, matches: int, incidents: Callable[[int], list[dict[str, Any]]]
) -> Path:
    """At ``path``, finished tournament "t" of a, b and c: ``matches`` demo matches of one
    deal, stored out of schedule order (the pages go by schedule index), match ``index``
    with the incidents ``incidents(index)``."""
    with Storage(path) as st:
        st.ensure_tournament("t", name="t", fingerprint="s", total_matches=matches,
                             config={"name": "t", "ruleset": "classic"},
                             bots=[(b, "demo") for b in BOTS])  # fmt: skip
        for i in range(matches):
            index = i * 7 % matches
            record = demo_record(index, BOTS, max_deals=1)
            record["incidents"] = incidents(index)
            st.save_match("t", match_id=f"t-m{index:04d}", index=index, table=0, set_no=index,
                          seed=index, seats=BOTS, record=record,
                          started_at=1.7e9 + i, finished_at=1.7e9 + i + 1)  # fmt: skip
        st.finish_tournament("t")
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def incidents(index: int) -> list[dict[str, Any]]:
        return [
            {"kind": "timeout", "seat": 0, "deal": 0, "detail": f"match {index} strike {k}"}
            for k in range(strikes_of(index))
        ] + [{"kind": "wrong_request", "seat": 0, "deal": 0, "detail": "no strike"}]

    return store_tournament(tmp_path_factory.mktemp("strikes") / "t.sqlite", MATCHES, incidents)


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    with web_server(db) as server:
        yield server.url


def every_strike(db: Path) -> list[tuple[int, str]]:
    """(schedule index, detail) of each of a's strikes, newest first (as stored: in
    schedule order, then as its match's record lists them, reversed)."""
    with Storage.open_readonly(db) as st:
        listed = [i for i in st.incidents("t", bot="a") if i["kind"] == "timeout"]
    return [(i["idx"], i["detail"]) for i in reversed(listed)]


def test_the_bot_page_lists_its_newest_strikes_and_pages_the_rest(db: Path, base: str) -> None:
    want = every_strike(db)
    assert len(want) > STRIKE_PAGE  # (else nothing to page)
    page = get_json(base, "/api/bots/a")
    assert page["strikes_total"] == len(want) == page["row"]["strikes"]
    first = [(s["idx"], s["detail"]) for s in page["strikes"]]
    # the newest STRIKE_PAGE, and the rest of the oldest match among them
    assert len(first) >= STRIKE_PAGE and first == want[: len(first)]
    assert {i for i, _ in first}.isdisjoint(i for i, _ in want[len(first) :])
    assert page["strikes_next_before"] == first[-1][0]
    assert page["strikes_not_listed"] == 0
    assert [i["kind"] for i in page["other_incidents"]] == ["wrong_request"] * MATCHES
    # the older ones, page by page: every strike once, newest first
    shown, before = first, page["strikes_next_before"]
    pages = 0
    while before is not None:
        older = get_json(base, f"/api/bots/a/strikes?tournament=t&limit=7&before={before}")
        got = [(s["idx"], s["detail"]) for s in older["strikes"]]
        assert got and all(i < before for i, _ in got)
        assert older["strikes_total"] == len(want) and older["bot"] == "a"
        shown, before, pages = shown + got, older["strikes_next_before"], pages + 1
    assert shown == want and pages > 1
    # the first page of the route is the bot page's
    assert get_json(base, "/api/bots/a/strikes")["strikes"] == page["strikes"]


def test_a_match_of_more_strikes_than_a_page_is_listed_whole() -> None:
    from arena.web.data import _incident_page

    # (round 54: the paging of strikes pages the other incidents too, named by key)
    def _strike_page(strikes: list[dict[str, int]], limit: int, before: int | None) -> Any:
        return _incident_page(strikes, limit, before, "strikes")

    strikes = [{"idx": i, "n": k} for i in (1, 2, 3) for k in range(4)]
    page = _strike_page(strikes, 2, None)
    assert [(s["idx"], s["n"]) for s in page["strikes"]] == [(3, 3), (3, 2), (3, 1), (3, 0)]
    assert page["strikes_next_before"] == 3
    page = _strike_page(strikes, 5, 3)
    assert [s["idx"] for s in page["strikes"]] == [2] * 4 + [1] * 4
    assert page["strikes_next_before"] is None and page["strikes_total"] == 12
    assert _strike_page([], 5, None) == {
        "strikes": [], "strikes_total": 0, "strikes_next_before": None
    }  # fmt: skip


def refused(base: str, path: str) -> tuple[int, dict[str, Any]]:
    try:
        urllib.request.urlopen(base + path.lstrip("/"), timeout=10)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())
    raise AssertionError(f"{path} was answered")


# (round 54: the other incidents are paged by the same route, and refused alike)
@pytest.mark.parametrize("which", ["strikes", "other_incidents"])
def test_bad_requests_of_strikes_are_refused_by_name(base: str, db: Path, which: str) -> None:
    code, body = refused(base, f"/api/bots/a/{which}?limit=0")
    assert code == 400 and "limit must be a whole number from 1 to 1000" in body["error"]
    code, body = refused(base, f"/api/bots/a/{which}?before=soon")
    assert code == 400 and "before must be a whole number" in body["error"]
    code, body = refused(base, f"/api/bots/zed/{which}")
    assert code == 404 and "no bot 'zed' in tournament 't'" in body["error"]
    # a bot with none: an empty page
    assert DataSource(db).incidents("b", None, which, before=None) == {
        "tournament": get_json(base, "/api/bots/b")["tournament"],
        "bot": "b",
        which: [],
        f"{which}_total": 0,
        f"{which}_next_before": None,
    }


def test_the_page_adds_the_older_strikes_at_each_click(driver: Any, base: str, db: Path) -> None:
    from tests.web.test_web_browser import load, waiting

    load(driver, base + "bot/a")
    rows = lambda: driver.find_elements("css selector", "#strikes tbody tr")  # noqa: E731
    first = len(rows())
    assert STRIKE_PAGE <= first < len(every_strike(db))
    count = driver.find_element("id", "strikes-shown")
    assert count.text == f"newest first: {first} of {len(every_strike(db))} shown"
    more = driver.find_element("id", "older-strikes")
    while more.is_displayed():
        shown = len(rows())
        more.click()
        waiting(driver).until(lambda d, shown=shown: len(rows()) > shown)
    assert len(rows()) == len(every_strike(db))
    assert count.text == f"newest first: {len(rows())} of {len(rows())} shown"
