"""Round 54: a bot's other incidents in ``arena web`` come a page at a time, as its strikes.

Limit left by round 53: a bot's strikes were paged (``/api/bots/<name>/strikes``), but the
incidents that are no strike (answers to no pending request, decisions the bot failed) were
all listed on its page at once, in schedule order: a bot that failed every decision of
thousands of matches made a page of every one. Its newest ``STRIKE_PAGE`` now come with the
page, newest first, ``other_incidents_total`` says how many there are, and the older ones
come from ``/api/bots/<name>/other_incidents?before=I`` (``other_incidents_next_before``),
by the strikes' own paging code; the page's "older incidents" button adds them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web import DataSource
from arena.web.data import STRIKE_PAGE
from tests.support.harness import get_json
from tests.web.test_strike_pages_round53 import refused, store_tournament
from tests.web.test_web_round38 import _run_page_js

BOTS = ("a", "b", "c")
MATCHES = 30


def others_of(index: int) -> int:
    """How many answers to no pending request a's seat has in match ``index``: 1 to 4."""
    return 1 + index % 4


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def incidents(index: int) -> list[dict[str, Any]]:
        return [
            {"kind": "wrong_request", "seat": 0, "deal": 0, "detail": f"m{index} late {k}"}
            for k in range(others_of(index))
        ] + [{"kind": "timeout", "seat": 0, "deal": 0, "detail": f"m{index} strike"}]

    return store_tournament(tmp_path_factory.mktemp("others") / "t.sqlite", MATCHES, incidents)


def every_other(db: Path) -> list[tuple[int, str]]:
    """(schedule index, detail) of each of a's incidents that are no strike, newest first."""
    with Storage.open_readonly(db) as st:
        listed = [i for i in st.incidents("t", bot="a") if i["kind"] == "wrong_request"]
    return [(i["idx"], i["detail"]) for i in reversed(listed)]


def test_the_bot_page_lists_its_newest_other_incidents_and_pages_the_rest(
    db: Path, base: str
) -> None:
    want = every_other(db)
    assert len(want) > STRIKE_PAGE  # (else nothing to page)
    page = get_json(base, "/api/bots/a")
    assert page["other_incidents_total"] == len(want) == page["row"]["other_incidents"]
    first = [(i["idx"], i["detail"]) for i in page["other_incidents"]]
    # the newest STRIKE_PAGE, and the rest of the oldest match among them
    assert STRIKE_PAGE <= len(first) < STRIKE_PAGE + 4 and first == want[: len(first)]
    assert {i for i, _ in first}.isdisjoint(i for i, _ in want[len(first) :])
    assert page["other_incidents_next_before"] == first[-1][0]
    assert page["other_incidents_not_listed"] == 0
    # the strikes as before: every one of the 30 on the first page
    assert page["strikes_total"] == MATCHES and page["strikes_next_before"] is None
    shown, before, pages = first, page["other_incidents_next_before"], 0
    while before is not None:
        older = get_json(base, f"/api/bots/a/other_incidents?tournament=t&limit=5&before={before}")
        got = [(i["idx"], i["detail"]) for i in older["other_incidents"]]
        assert got and all(i < before for i, _ in got)
        assert older["other_incidents_total"] == len(want) and older["bot"] == "a"
        assert "strikes" not in older
        shown, before = shown + got, older["other_incidents_next_before"]
        pages += 1
    assert shown == want and pages > 1
    # the first page of the route is the bot page's
    assert (
        get_json(base, "/api/bots/a/other_incidents")["other_incidents"]
        == (page["other_incidents"])
    )


def test_only_the_two_lists_are_paged(base: str, db: Path) -> None:
    """(Refused as the strikes are: test_strike_pages_round53.py.)"""
    code, body = refused(base, "/api/bots/a/incidents")
    assert code == 404 and "no such API endpoint" in body["error"], body
    with pytest.raises(ValueError, match="no list of incidents 'rows'"):
        DataSource(db).incidents("a", None, "rows", before=None)


#: bot.js's render over a fake page element, the API answering the older page; then a
#: click on the "older incidents" button: what the page shows before and after, and what
#: it asked the API.
# The bot page's script run in node over the fake DOM of round 38's helper, with what a
# click and a paged list need (round 54's review tests run bot.js over it too).
FAKE_DOM_JS = """
Node.prototype.querySelector = function (tag) {
  for (const c of this.children) {
    if (c.tag === tag) return c;
    const found = c.querySelector ? c.querySelector(tag) : null;
    if (found) return found;
  }
  return null;
};
const clicks = new Map();
Node.prototype.addEventListener = function (type, fn) {
  if (type === "click") clicks.set(this, fn);
};
Node.prototype.replaceChildren = function (...cs) {
  this.children = [];
  this.append(...cs.flat());
};
"""

PAGE_JS = (
    FAKE_DOM_JS
    + """const page = new Node("main");
document.getElementById = (id) => (id === "main" ? page : null);
const byId = (n, id) => {
  if (n.attrs && n.attrs.id === id) return n;
  for (const c of n.children) { const f = byId(c, id); if (f) return f; }
  return null;
};
const asked = [];
api = async (path) => {
  asked.push(path);
  return { other_incidents: [{ match_id: "t-m1", deal: 0, kind: "bot_error", detail: "old" }],
           other_incidents_next_before: null };
};
const inc = (m, k) => ({ match_id: m, idx: 9, deal: 0, kind: k, detail: "" });
render({ bot: "a", tournament: { id: "t", name: "t", bots: ["a", "b"] }, row: {}, history: [],
  plays_in: [], matches: [], matches_total: 0, next_before: null, deal_score_counts: [[5, 1]],
  strikes: [], strikes_total: 0, strikes_next_before: null, strikes_not_listed: 0,
  other_incidents: [inc("t-m9", "wrong_request"), inc("t-m9", "bot_error")],
  other_incidents_total: 3, other_incidents_next_before: 9, other_incidents_not_listed: 0 });
const rows = () => byId(page, "other-incidents").querySelector("tbody").children.length;
const more = byId(page, "older-incidents");
const before = [rows(), byId(page, "incidents-shown").textContent, more.hidden];
(async () => {
  await clicks.get(more)();
  const after = [rows(), byId(page, "incidents-shown").textContent, more.hidden];
  process.stdout.write(JSON.stringify({ before, after, asked }));
})();
"""
)


def test_the_page_adds_the_older_other_incidents_at_a_click() -> None:
    got = _run_page_js("bot.js", PAGE_JS)
    assert got["before"] == [2, "newest first: 2 of 3 shown", False]
    assert got["asked"] == ["/api/bots/a/other_incidents?tournament=t&limit=50&before=9"]
    assert got["after"] == [3, "newest first: 3 of 3 shown", True]
