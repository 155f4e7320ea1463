"""The web replay marks a decision the bot failed as its client's fallback (limits round 56).

Defect: a move whose record says ``"by": "bot", "failed": true`` (the bot raised, or
answered no action, and its client sent the fallback as its answer; a ``bot_error``, no
strike) was drawn on the replay page as the bot's own move, where ``arena replay`` follows
it with "(fallback of the bot's client: its decision failed)". Each step's action now
carries ``failed`` (no browser: the first test), and the page marks such a move apart from
the referee's fallbacks: a badge in the action log, the words in the step line, a dotted
outline and a ``failed`` mark on its card in the trick and in the list of tricks, face up
and in a seat view (the second, in a real headless Chromium: skipped as
tests/web/test_web_browser.py says without one). The record is a real arena's, of the
bot of tests/sdk/test_try_records_round56.py: failed bids and plays, an illegal answer the
referee replaced, forced moves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from arena.storage import Storage
from arena.web import MatchReplay
from tests.sdk.test_try_records_round56 import Erratic
from tests.support.harness import get_json, play_sdk_match, web_server
from tests.web.test_web_browser import load, waiting

NOTE = "fallback of the bot's client: its decision failed"


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    return play_sdk_match(Erratic, max_deals=2, incidents=True)


def test_each_step_says_whether_the_bot_failed_the_decision(record: dict[str, Any]) -> None:
    replay = MatchReplay("f-m1", record)
    seen = {"failed": 0, "referee": 0}
    for k, deal in enumerate(record["deals"]):
        for seat in (None, 0, 1, 2):  # face up and every seat view: the same marks
            steps = replay.deal(k, seat)["steps"][1:]
            for st, a in zip(steps, deal["actions"], strict=True):
                got = st["action"]
                assert got["failed"] is (a.get("failed") is True), (k, seat, a, got)
                if got["failed"]:
                    assert got["by"] == "bot" and got["fallback"] is None
                    seen["failed"] += seat is None
                if a["by"] == "fallback":
                    assert not got["failed"] and got["fallback"] is not None
                    seen["referee"] += seat is None
    assert seen["failed"] >= 3 and seen["referee"] >= 1, seen


@pytest.fixture(scope="module")
def served(record: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("failed") / "f.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("f", name="f", fingerprint="f", total_matches=1,
                             config={"name": "f", "ruleset": "classic"},
                             bots=[(b, "demo") for b in record["players"]])  # fmt: skip
        st.save_match("f", match_id="f-m00000", index=0, table=0, set_no=0,
                      seed=record["seed"], seats=tuple(record["players"]), record=record,
                      started_at=1.7e9, finished_at=1.7e9 + 1)  # fmt: skip
        st.finish_tournament("f")
    with web_server(path) as server:
        yield server.url


@pytest.mark.browser
def test_the_replay_page_marks_a_failed_decision_as_its_clients_fallback(
    driver: Any, served: str
) -> None:
    url = served
    data = get_json(url, "/api/matches/f-m00000/deals/0")
    last = len(data["steps"]) - 1
    failed = {st["i"]: st["action"] for st in data["steps"][1:] if st["action"]["failed"]}
    referee = {st["i"] for st in data["steps"][1:] if st["action"]["fallback"] is not None}
    plays = [i for i, a in failed.items() if a["text"].startswith("play")]
    assert plays and any(not a["text"].startswith("play") for a in failed.values()), failed
    assert referee, data  # (the referee's fallbacks in the same deal keep their marks)
    step = plays[0]
    card = failed[step]["text"].split()[1]
    for seat in ("", f"&seat={failed[step]['seat']}"):  # face up, and as the seat saw it
        load(driver, f"{url}replay/f-m00000#deal=0&step={step}{seat}")
        log = driver.find_elements("css selector", "#action-log li")
        badges = {
            int(li.get_attribute("data-step")): b[0].text
            for li in log
            if (b := li.find_elements("css selector", ".client-fallback-badge"))
        }
        shown = {i for i in failed if seat == "" or i <= step}
        assert badges == dict.fromkeys(shown, "fallback: decision failed"), badges
        # the referee's moves keep their own badge; a failed decision has none of it
        ref_badges = {
            int(li.get_attribute("data-step"))
            for li in log
            if li.find_elements("css selector", ".referee-badge")
        }
        assert ref_badges == {i for i in referee if seat == "" or i <= step}
        assert not ref_badges & set(badges)
        assert f"({NOTE})" in driver.find_element("id", "step-label").text
        cards = driver.find_elements("css selector", "#trick .card.client-fallback")
        assert [c.get_attribute("data-card") for c in cards] == [card]
        assert NOTE in cards[0].get_attribute("title")
        assert not driver.find_elements("css selector", "#trick .card.referee")
        mark = driver.find_element(
            "css selector", "#trick .played-by.client-fallback .client-fallback-mark"
        )
        assert mark.text == "failed" and "bot_error, no strike" in mark.get_attribute("title")
    # at the deal's end: each failed play's card is outlined in the list of tricks
    load(driver, f"{url}replay/f-m00000#deal=0&step={last}")
    waiting(driver).until(lambda d: d.find_elements("css selector", "#tricks .card"))
    outlined = driver.find_elements("css selector", "#tricks .card.client-fallback")
    assert [c.get_attribute("data-card") for c in outlined] == [
        failed[i]["text"].split()[1] for i in plays
    ]
    name = record_player(data, failed[plays[-1]]["seat"])
    assert f"played by {name}'s client ({NOTE}" in outlined[-1].get_attribute("title")


def record_player(data: dict[str, Any], seat: int) -> str:
    return str(data["players"][seat])
