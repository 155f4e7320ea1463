"""Round 55 (limits): a match held back is listed with no replay link.

While a duplicate tournament runs, a finished match whose deal-seed set still has matches to
play is held back: its replay is a 403 (``test_web_api.py``,
``test_deals_shared_with_matches_still_to_play_are_held_back``). The leaderboard's recent
matches and a bot page's matches and strikes still linked it ("replay ▸"), a link that
opened the 403's message. The API now marks such a match (``held_back``) and the pages list
it by its id alone, a "held back" label in place of the link.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from arena.storage import Storage
from tests.arena.fake_referee import make_config, run_fake
from tests.support.harness import get_json, web_server
from tests.web.test_web_round38 import _run_page_js


def _status(base: str, path: str) -> int:
    try:
        with urllib.request.urlopen(base + path.lstrip("/"), timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def _listed(url: str, tid: str, bot: str) -> list[dict[str, Any]]:
    """The matches of the tournament's three lists: its matches, the leaderboard's latest,
    ``bot``'s page's."""
    lists = [
        get_json(url, f"/api/matches?tournament={tid}")["matches"],
        get_json(url, f"/api/leaderboard?tournament={tid}")["recent"],
        get_json(url, f"/api/bots/{bot}?tournament={tid}")["matches"],
    ]
    assert all(lists)
    return [m for ms in lists for m in ms]


def test_the_api_marks_the_matches_whose_replay_is_held_back(tmp_path: Path) -> None:
    for deals in ("duplicate", "independent"):
        cfg = make_config(tmp_path / deals, deals=deals)
        run_fake(cfg, max_new_matches=7)
        tid = cfg.tournament_id
        with Storage.open_readonly(cfg.db) as st:
            seats = json.loads(st.conn.execute(
                "SELECT seats_json FROM matches ORDER BY idx LIMIT 1").fetchone()[0])  # fmt: skip
        with web_server(cfg.db) as server:
            url = server.url

            matches = _listed(url, tid, seats[0])
            for m in matches:
                # the mark says what the replay answers
                code = _status(url, f"/api/matches/{m['match_id']}")
                assert (code, m["held_back"]) in ((403, True), (200, False)), (m, code)
            assert {m["held_back"] for m in matches} == {deals == "duplicate"}
            run_fake(cfg)  # the rest: every set played, the tournament ends
            assert not any(m["held_back"] for m in _listed(url, tid, seats[0]))


#: common.js's matchesTable and bot.js's incidentTable over the fake DOM: the links and
#: the text of each row.
LINKS_JS = """
const links = (n) => n.tag === "a" ? [n.attrs.href] : n.children.flatMap(links);
const rows = (t) => t.children.find((c) => c.tag === "tbody").children;
const m = (id, held) => ({ match_id: id, players: ["a", "b", "c"], places: [1, 2, 3],
  scores: [5, 0, -5], deals: 4, status: "", held_back: held });
const table = matchesTable([m("t-m0001", true), m("t-m0002", false)]);
const s = (id, held) => ({ match_id: id, deal: 1, kind: "timeout", detail: "", held_back: held });
const strikes = incidentTable("strikes", [s("t-m0001", true), s("t-m0002", false)]);
process.stdout.write(JSON.stringify({
  matches: rows(table).map((r) => [links(r), r.textContent]),
  strikes: rows(strikes).map((r) => [links(r), r.textContent]),
}));
"""


def test_the_pages_link_no_replay_of_a_match_held_back() -> None:
    got = _run_page_js("bot.js", LINKS_JS)
    (held, held_text), (shown, shown_text) = got["matches"]
    assert held == [] and held_text.startswith("t-m0001") and held_text.endswith("held back")
    assert shown == ["/replay/t-m0002", "/replay/t-m0002"] and shown_text.endswith("replay ▸")
    (held, held_text), (shown, _) = got["strikes"]
    assert held == [] and held_text.startswith("t-m0001")
    assert shown == ["/replay/t-m0002#deal=1&step=0"]
