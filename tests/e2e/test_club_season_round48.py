"""A club's season, lived through from the docs (round 48): a 4-player 1001 league and a
3-player classic league in one database, a tournament a week, members' bots changing
between weeks, results read in `arena web`.

What a club met that the product did not say or did wrong is pinned here; what it found
right is in the round's report.
"""

from __future__ import annotations

import json
from typing import Any

from tests.web.test_web_round38 import _run_page_js


def _summary(tournament_id: str | None) -> dict[str, Any]:
    """A replay summary as `/api/matches/<id>` answers it, of a stored match of
    ``tournament_id`` (None: a record file's, which belongs to no stored tournament)."""
    stored = {} if tournament_id is None else {"stored": {"tournament_id": tournament_id}}
    return {
        "match_id": "w1-m00003", "players": ["alice", "bob", "carol", "dan"],
        "seats": ["alice", "bob", "carol", "dan"], "deals": [], "result": None,
        "incident_lines": [], **stored,
    }  # fmt: skip


def _replay_links(summary: dict[str, Any], search: str = "") -> Any:
    """The hrefs of a replay page's header and of its players' names, with ``search`` as the
    address's query (replay.js run in node over tests/web's small DOM)."""
    return _run_page_js(
        "replay.js",
        f"""
location.search = {json.dumps(search)};
document.body.prepend = () => {{}};  // (the small DOM has no prepend)
header();
summaryCame({json.dumps(summary)});
state.seat = null;
const links = [];
const walk = (n) => {{ if (n.tag === "a") links.push(n.attrs.href); n.children.forEach(walk); }};
matchHead().filter(Boolean).forEach(walk);
process.stdout.write(JSON.stringify([headerLinks.map((a) => a.attrs.href), links]));
""",
    )


def test_a_replays_links_lead_to_its_own_tournament_not_the_latest() -> None:
    """Defect: the replay page's links followed the address's ``?tournament=`` alone. A
    replay opened by its id (`arena replay --list` names it, the club's site links it),
    or from a leaderboard shown by default, has none: each player's name then led to his
    page in the database's latest tournament (this week's classic league, from last week's
    1001 match: another tournament's figures under his name; "no bot 'dan' in tournament
    ..." for a member not in it) and the header's Leaderboard to the latest table. They
    now lead to the match's own tournament, which `/api/matches/<id>` names
    (``stored.tournament_id``)."""
    heads, players = _replay_links(_summary("club1001-w1-e00e0c84f2b9"))
    week1 = "?tournament=club1001-w1-e00e0c84f2b9"
    assert heads == ["/" + week1] * 2
    assert players == [f"/bot/{p}{week1}" for p in ("alice", "bob", "carol", "dan")]
    # an address naming another tournament (a hand-edited link) does not lead elsewhere
    heads, players = _replay_links(_summary("club1001-w1-e00e0c84f2b9"), "?tournament=cl-w2")
    assert heads == ["/" + week1] * 2 and players[0] == f"/bot/alice{week1}"
    # a record served from a file belongs to no stored tournament: the address's, as before
    heads, players = _replay_links(_summary(None), "?tournament=cl-w2")
    assert heads == ["/?tournament=cl-w2"] * 2 and players[0] == "/bot/alice?tournament=cl-w2"
    heads, players = _replay_links(_summary(None))
    assert heads == ["/", "/"] and players[0] == "/bot/alice"
