"""Round 49: the three users' journeys read from README.md and docs/*.md alone: a bot
author whose bot remembers (state across the deals, the hooks, the sampler, its own log,
`arena-bot try` against every bundled bot on classic, 1001, 1001-4p and house-rule files,
then crashing, slow, illegal and wrongly typed, then `arena-bot run` against an organiser's
`arena serve` from another directory); an organiser of a 1001 tournament at four with
house rules (every 1001 option of RULES.md across two ruleset files), a remote bot beside
local ones, Ctrl-C and a resume; a spectator reading the leaderboard's files and `arena
web`, and replaying matches deal by deal in `arena replay` and the replay page, two whole
deals checked by hand against RULES.md. What did not hold is pinned here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from arena.leaderboard.html import to_html
from arena.leaderboard.render import to_markdown, to_rich_table
from arena.leaderboard.stats import build_leaderboard
from arena.storage import Storage
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db
from bots import load as bundled
from sdk import Action, Bid, Bot, Play, PlayerView, play_local
from tests.support.harness import arena, until, web_server
from tests.web.conftest import driver, paths  # noqa: F401 (fixtures)
from tests.web.test_web_browser import load


def _joined(text: str) -> str:
    return " ".join(text.split())


def test_the_leaderboard_files_explain_contracts_made_forfeits_and_the_median(
    tmp_path: Path,
) -> None:
    """A spectator reading `leaderboard.md` of a 1001 tournament with `concede = "free"`:
    "bids won 143" beside "contracts made 2/113" for one bot, with nothing on the page to
    say where 30 bids went (conceded, or thrown in: bids won, but no contract played), and
    the Markdown file, unlike the HTML page, said nothing of its "median ms" or
    "forfeits" columns. Both files now carry one legend for every column a heading does
    not explain."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=3, max_deals=3)
    with Storage(db) as st:
        lb = build_leaderboard(st, "demo")
    md = _joined(to_markdown(lb))
    page = _joined(unescape(to_html(lb)))
    for said in (md, page):
        assert "Bids won: the deals the bot declared" in said
        assert "Contracts made: made / played (a concession or a throw-in is a bid won" in said
        assert "Forfeits: the matches the bot forfeited" in said
        assert "Median ms: the bot's median decision time" in said
    # and the screen's table, where its columns are shown (a narrow terminal drops them)
    wide, narrow = str(to_rich_table(lb, 200).caption), str(to_rich_table(lb, 60).caption)
    assert "made: contracts made/played (not conceded or thrown in) · ms: median" in wide
    assert "made:" not in narrow and "ms:" not in narrow


def _tournament(st: Storage, tid: str, config: dict[str, Any], seed: int) -> None:
    st.ensure_tournament(tid, name="club", fingerprint=tid, config=config, total_matches=1,
                         bots=[(b, "demo") for b in DEMO_BOTS])  # fmt: skip
    st.save_match(tid, match_id=f"{tid}-m00000", index=0, table=0, set_no=0, seed=seed,
                  seats=DEMO_BOTS, record=demo_record(seed, DEMO_BOTS, max_deals=2),
                  started_at=1.7e9 + seed, finished_at=1.7e9 + seed + 1)  # fmt: skip
    st.finish_tournament(tid)


@pytest.mark.slow
def test_the_tournament_picker_calls_an_arena_serve_session_independent(
    driver: Any,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """An organiser stored a club evening of `arena serve --db runs/club.sqlite --name club`
    and then the club's tournament of `deals = "independent"` in the same database, and a
    duplicate one: `arena web`'s picker, telling the three "club" apart, called the serve
    session "duplicate deals" (it read the `deals_note`, which is null for a serve session
    as for duplicate deals), though `arena serve` deals every match from a seed of its own
    and the API says `"deals": "independent"` of it."""
    db = tmp_path / "club.sqlite"
    with Storage(db) as st:
        _tournament(st, "club-serve", {"kind": "serve", "ruleset": "classic",
                                       "deals": "independent"}, 1)  # fmt: skip
        _tournament(st, "club-indep", {"name": "club", "ruleset": "classic",
                                       "deals": "independent"}, 2)  # fmt: skip
        _tournament(st, "club-dup", {"name": "club", "ruleset": "classic"}, 3)
    with web_server(db) as server:
        load(driver, server.url)
        options = {
            o.get_attribute("value"): o.text
            for o in driver.find_elements("css selector", "#tournament-select option")
        }
    assert set(options) == {"club-serve", "club-indep", "club-dup"}, options
    assert "independent deals" in options["club-serve"], options
    assert "independent deals" in options["club-indep"], options
    assert "duplicate deals" in options["club-dup"], options


@pytest.mark.slow
def test_a_bots_page_in_a_single_tournament_shows_no_null(
    driver: Any,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """A spectator opening a bot's page from the leaderboard (`/bot/friend`) of a database
    where the bot plays in one tournament only, the common case, read a line "null" under
    its name: the list of its other tournaments, empty, was handed to the page as null,
    which `replaceChildren` writes out as text."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=2, max_deals=2)
    with web_server(db) as server:
        load(driver, f"{server.url}bot/{DEMO_BOTS[0]}")
        main = driver.find_element("css selector", "main").text
    assert "null" not in main.split(), main[:300]
    assert "Also plays in" not in main


def test_a_bot_connected_to_an_arena_short_of_bots_says_what_it_waits_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot author connects to the organiser's `arena serve` of four seats while two bots
    are connected: the log said "connected to ... (server 0.1.0)" and then nothing, a bot
    that looked hung. The line now says the bot waits to be seated, and when."""
    caplog.set_level(logging.INFO, logger="sdk.client")

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if "connected to" in r.getMessage()]

    async def main() -> None:
        async with arena(tmp_path) as a:  # a referee that seats nobody: no lobby
            (task,) = await a.runners(["memory"], [Bot], 1)
            await until(said, "the line of the bot's connection")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(main())
    (line,) = said()
    assert line.startswith("connected to 127.0.0.1:") and "as 'memory'" in line
    assert "; waiting to be seated in a match (arena serve seats one once as many" in line


class _Texts(Bot):
    """Writes its actions' fields as text, as a bot author who read `Play("10♣")` in a
    record might: the bid's amount and the card."""

    name = "texts"

    def bid(self, view: PlayerView) -> Action:
        return Bid(str(view.ruleset.opening_bid + 5))  # type: ignore[arg-type]

    def play(self, view: PlayerView) -> Action:
        return Play(str(view.legal_actions[0].card))  # type: ignore[union-attr,arg-type]


def test_an_action_field_written_as_text_is_told_what_to_write() -> None:
    """A bot author makes the bot return a wrong type, `Play("9♦")`: told "its card must be
    a Card, not str" and nothing of how to make one, where the bare answer "9♦" is told
    `Play(sdk.parse_card('9♦'))`. The field's line now says what to write."""
    bots = [_Texts, bundled("random"), bundled("random")]
    m = play_local(bots, ruleset="1001", seed=3, max_deals=4)
    details = {i.detail.partition(" (deal")[0].partition("; played")[0] for i in m.incidents}
    assert any(d.endswith("its amount must be an int, not str: write 45") for d in details), details
    assert any(
        "its card must be a Card, not str: sdk.parse_card('" in d and d.endswith("') is the card")
        for d in details
    ), details
