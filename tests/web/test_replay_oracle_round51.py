"""Round 51: what the replay page is served, and what it draws, against the oracle of the
rules (``tests/engine/oracle_round51.py``, written from RULES.md alone).

``tests/cli/test_replay_oracle_round51.py`` compares ``arena replay``'s text and
:class:`arena.web.replay.MatchReplay` with the oracle over many matches; here the same
records are stored in a tournament database and read as a spectator reads them: the JSON
``arena web`` serves over HTTP (face up and as each seat saw it), and (slow: a headless
browser) the replay page at the end of every deal: each seat's take and score, the deal's
result and outcome, the last trick's winner, the tricks' winners and the marriages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from bots.heuristic import HeuristicBot
from bots.random_bot import RandomBot
from tests.cli.test_replay_oracle_round51 import (
    COVERING,
    bot_record,
    check_web,
    drawn_record,
    follow,
)
from tests.support.harness import get_json, web_server
from tests.web.test_web_browser import load

#: The records stored: drawn matches of four (a dealer sitting on the barrel, three nines,
#: the ace marriage, barrel events) and of three, and bots of four playing 1001-4p.
MATCHES = {
    "r51-m00000": lambda: drawn_record(COVERING[0]),
    "r51-m00001": lambda: drawn_record(COVERING[1]),
    "r51-m00002": lambda: bot_record("1001-4p", [HeuristicBot, RandomBot] * 2, 7, 6),
}


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    return {match_id: make() for match_id, make in MATCHES.items()}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, records: dict[str, Any]) -> Iterator[str]:
    db: Path = tmp_path_factory.mktemp("r51") / "r51.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("r51", name="r51", fingerprint="r51", total_matches=len(records),
                             config={"name": "r51"}, bots=[])  # fmt: skip
        for index, (match_id, rec) in enumerate(records.items()):
            st.save_match("r51", match_id=match_id, index=index, table=0, set_no=0,
                          seed=int(rec["seed"]), seats=tuple(rec["players"]), record=rec,
                          started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
        st.finish_tournament("r51")
    with web_server(db) as server:
        yield server.url


@pytest.mark.parametrize("match_id", MATCHES)
def test_the_replay_api_serves_what_the_oracle_finds(
    base: str, records: dict[str, Any], match_id: str
) -> None:
    record = records[match_id]
    summary = get_json(base, f"api/matches/{match_id}")

    def steps(k: int, seat: int | None) -> list[dict[str, Any]]:
        query = "" if seat is None else f"?seat={seat}"
        deal: dict[str, Any] = get_json(base, f"api/matches/{match_id}/deals/{k}{query}")
        return list(deal["steps"])

    check_web(record, follow(record), (summary, steps))


@pytest.mark.slow
@pytest.mark.parametrize("match_id", MATCHES)
def test_the_replay_page_draws_what_the_oracle_finds(
    driver: Any, base: str, records: dict[str, Any], match_id: str
) -> None:
    record = records[match_id]
    seen = follow(record)
    players = list(record["players"])
    n = len(players)
    for k, deal in enumerate(seen.deals):
        exp = deal.result
        assert exp is not None
        where = f"{match_id} deal {k + 1}"
        load(driver, f"{base}replay/{match_id}#deal={k}&step=99999")  # its last step
        text = {e: driver.find_element("id", e).text for e in ("deal-result", "tricks",
                                                                "marriages")}  # fmt: skip
        result = text["deal-result"].split("\n")
        deltas = " ".join(f"{players[s]} {exp.deltas[s]:+d}" for s in range(n))
        assert " ".join(result[0].split()) == f"deal result: {deltas}", where
        assert result[1] == exp.outcome.replace("_", " "), where
        named = [re.sub(r"\bseat (\d+)", lambda m: players[int(m[1])], e) for e in exp.events]
        assert sorted(result[2:]) == sorted(named), where
        dealer = record["deals"][k]["dealer"]
        for s in range(n):
            score = driver.find_element("id", f"score-{s}").text
            assert score == f"score {exp.scores[s]}", where
            take = driver.find_element("css selector", f".take[data-seat='{s}']").text
            sits_out = n == 4 and s == dealer
            assert take == ("sits out" if sits_out else f"take {exp.takes[s]}"), where
        winners = [line.rsplit("→ ", 1)[1] for line in text["tricks"].split("\n") if "→" in line]
        assert winners == [players[w] for _, w, _ in deal.tricks], where
        if deal.tricks:
            caption = driver.find_element("id", "trick-caption").text
            assert caption == f"trick 8 won by {players[deal.tricks[-1][1]]}", where
        worth = {100: "♥ marriage", 80: "♦ marriage", 60: "♣ marriage", 40: "♠ marriage"}
        said = [f"{players[s]}: {worth.get(v, 'ace marriage')} +{v}" for s, v in deal.marriages]
        assert text["marriages"] == ("\n".join(said) or "none"), where
    places = driver.find_element("id", "match-players").text
    if seen.end is not None:
        _, ranks, _, _ = seen.end
        for s in range(n):
            assert f"{players[s]} {seen.scores[s]} (#{ranks[s]})" in places, places
