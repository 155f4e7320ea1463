"""Mutation review (round 46) of round 45's product changes: the barrel rules of the
bundled bots (``made_contract_scores``, ``barrel_bid_confidence``), pimc's own contract
choice on the barrel, and the incident lines `arena replay` and the replay API share
(``incident_summary``, ``incident_lines``).

Each test here kills a hand-made mutant that round 45's tests let live:

- ``made_contract_scores`` read seat 0's barrel (every test's sitter sat in seat 0), or
  treated every seat as a sitter: a sitter in another seat, and the seats that do not sit,
  tell them apart.
- pimc deciding its contract itself (``delegate`` without "CONTRACT"; round 45's tests ran
  it only for legality): the branch that names the bid on the barrel when 120 is out of
  reach, and its concession test's value of a made contract on the barrel (nothing).
- ``incident_summary`` on a record whose ``incidents`` is not a list, the replay API's
  ``incident_lines`` for a record no referee watched (null, as docs/web.md says, not ``[]``),
  and the replay page's header where there are no incident lines to show (the empty slot
  filtered out, not written as "null").

Positions are built through the engine from a seeded deal; pimc's searches end on their
nodes (no wall-clock cut) and draw from a seeded generator: every answer is deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from arena.render import incident_summary
from arena.storage import Storage
from arena.web.demo import demo_record
from bots.counting import CountingBot
from bots.heuristic import HeuristicBot, made_contract_scores
from bots.pimc import PimcBot
from engine import Bid, Concede, Contract, Game, Pass, Phase, PlayerView, Ruleset, observe
from engine.rules import PRESETS
from tests.bots.test_judgement_round37 import _dd_takes
from tests.support.browser import driver, paths
from tests.support.harness import get_json, web_server
from tests.web.test_web_browser import load

__all__ = ["driver", "paths"]  # (the shared browser fixtures, used here)

_CLASSIC = PRESETS["classic"]
_OFF = dataclasses.replace(_CLASSIC, concede="off")
_PENALTY_NONE = dataclasses.replace(_CLASSIC, concede="penalty", concede_pays="none")


def _counting() -> CountingBot:
    c = CountingBot()
    c.safety = 1e6
    return c


class _OwnPimc(PimcBot):
    """pimc deciding every phase itself (by default counting names its contract)."""

    delegate: frozenset[str] = frozenset()


def _own_pimc() -> PimcBot:
    p = _OwnPimc(budget=0.1, samples=16, seed=0)
    p.safety = 1e6
    p._counting.safety = 1e6
    return p


def _declares_100(rules: Ruleset, seed: int, seat: int, sitter: int | None) -> PlayerView:
    """Deal ``seed``: ``seat`` is the first hand (committed to 100) and ``sitter`` (if any)
    sits on the barrel at 880 with 3 deals left; the others pass, and ``seat`` takes the
    talon and passes two cards as counting does. The first hand is dealt the same cards
    whichever seat he is (round 45's positions had him, and the sitter, in seat 0)."""
    scores, barrel = [0, 0, 0], [0, 0, 0]
    if sitter is not None:
        scores[sitter], barrel[sitter] = 880, 3
    g = Game.new(rules, seed, ["a", "b", "c"], dealer=(seat - 1) % 3, scores=scores,
                 barrel=barrel)  # fmt: skip
    while g.phase is Phase.BIDDING:
        g.apply_trusted(next(a for a in g.legal_actions() if isinstance(a, Pass)))
    passer = _counting()
    while g.phase is Phase.PASSING:
        g.apply_trusted(passer.act(observe(g, seat)))
    view = observe(g, seat)
    assert view.phase is Phase.CONTRACT and view.bid == 100 and view.seat == seat
    return view


# ---------------------------------------------------------------------- made_contract_scores


@pytest.mark.parametrize("seat", [1, 2])
def test_a_sitter_in_any_seat_values_a_made_100_at_nothing(seat: int) -> None:
    """RULES.md, the barrel: a made contract below 120 scores the sitter nothing, whichever
    seat he sits in; a seat that does not sit scores the contract."""
    view = _declares_100(_PENALTY_NONE, 7, seat, sitter=seat)
    assert made_contract_scores(view, 100) == 0
    assert made_contract_scores(view, 120) == 120
    for sitter in (None, (seat + 1) % 3):  # nobody sits, or another seat does
        other = _declares_100(_PENALTY_NONE, 7, seat, sitter=sitter)
        assert made_contract_scores(other, 100) == 100, sitter


@pytest.mark.parametrize("name", ["heuristic", "counting"])
@pytest.mark.parametrize("seat", [1, 2])
def test_a_sitter_in_any_seat_concedes_a_hand_that_cannot_make_100(name: str, seat: int) -> None:
    """Round 45's position (deal 7: the hand fails 100 in each of 12 deals consistent with
    the view, double-dummy) with the sitter in seat 1 or 2. Classic with ``concede =
    penalty, concede_pays = none``: playing 100 scores nothing made (on the barrel) and
    −100 failed, the defenders their takes; conceding costs the same 100 and leaves them
    nothing. With the barrel read at seat 0 the bots valued the made 100 at +100 and
    played on."""
    view = _declares_100(_PENALTY_NONE, 7, seat, sitter=seat)
    assert max(_dd_takes(view, 12)) < 100
    bot = HeuristicBot() if name == "heuristic" else _counting()
    assert bot.act(view) == Concede()


# ---------------------------------------------------------------------- pimc's own contract


def test_pimc_on_the_barrel_names_the_bid_when_120_is_out_of_reach() -> None:
    """RULES.md, the barrel: made, a contract below 120 scores the sitter nothing; failed,
    it costs its amount. Between the bid and 120 a higher contract only risks more: the
    bid is the one to name. Deal 4, the sitter committed to 100 with two marriages (Q♠ K♠,
    Q♥ K♥), no concession allowed (``concede = off``): pimc finds 120 out of reach and
    names 100 (without the branch it named 110, its best level off the barrel)."""
    view = _declares_100(_OFF, 4, 0, sitter=0)
    assert " ".join(map(str, view.hand)) == "Q♠ K♠ Q♣ A♣ K♦ J♥ Q♥ K♥"
    assert not any(isinstance(a, Concede) for a in view.legal_actions)
    assert _own_pimc().act(view) == Contract(100)


def test_pimc_on_the_barrel_values_a_made_100_at_nothing_when_it_may_concede() -> None:
    """Deal 70 under ``concede = penalty, concede_pays = none``: the sitter committed to
    100 holds J♠ Q♠ K♠ A♠ 9♦ 10♦ J♥ 10♥, which pimc gives 0.17 to make 100. Conceding
    costs 100 and the defenders score nothing; playing scores nothing made (the barrel)
    and costs 100 plus the defenders' takes failed: pimc concedes. Valuing the made 100 at
    +100, as off the barrel, it played on."""
    view = _declares_100(_PENALTY_NONE, 70, 0, sitter=0)
    assert " ".join(map(str, view.hand)) == "J♠ Q♠ K♠ A♠ 9♦ 10♦ J♥ 10♥"
    assert sum(t >= 100 for t in _dd_takes(view, 12)) <= 3
    assert _own_pimc().act(view) == Concede()


# ---------------------------------------------------------------------- incident lines


def test_incident_summary_of_a_record_whose_incidents_are_not_a_list() -> None:
    """The exported helper says nothing (None) of a record whose ``incidents`` is not a
    list, as of one without them, rather than iterate a mapping's keys or a string."""
    players = ["ann", "bob", "cid"]
    for bad in ({"seat": 0, "kind": "timeout"}, "timeout", None):
        assert incident_summary({"incidents": bad}, players) is None
    assert incident_summary({}, players) is None
    assert incident_summary({"incidents": []}, players) == []
    one = [{"kind": "timeout", "seat": 1, "deal": 0}]
    assert incident_summary({"incidents": one}, players) == ["bob (1): strikes: 1 timeout"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A web server on two classic matches: one a referee watched (no incident), one
    without ``incidents`` at all (an engine's own record)."""
    path = tmp_path_factory.mktemp("r46") / "r46.sqlite"
    players = ("ann", "bob", "cid")
    with Storage(path) as st:
        st.ensure_tournament("t", name="t", fingerprint="t", total_matches=2,
                             config={"name": "t", "ruleset": "classic"},
                             bots=[(b, "demo") for b in players])  # fmt: skip
        for i in range(2):
            rec = demo_record(i, players, max_deals=2)
            if i:
                del rec["incidents"]
            st.save_match("t", match_id=f"t-m{i:05d}", index=i, table=0, set_no=0, seed=i,
                          seats=players, record=rec, started_at=1.7e9 + i,
                          finished_at=1.7e9 + i + 1)  # fmt: skip
    with web_server(path) as server:
        yield server.url


def test_the_replay_api_says_null_for_a_record_no_referee_watched(base: str) -> None:
    """docs/web.md: ``incident_lines`` is ``[]`` for a match without incidents and null for
    a record no referee watched, as `arena replay` says "Incidents: none" of the one and
    nothing of the other."""
    assert get_json(base, "/api/matches/t-m00000")["incident_lines"] == []
    assert get_json(base, "/api/matches/t-m00001")["incident_lines"] is None


@pytest.mark.parametrize("match_id", ["t-m00000", "t-m00001"])
def test_the_replay_header_without_incident_lines_says_no_null(
    driver: Any, base: str, match_id: str
) -> None:
    """The header's incident block is left out where there is nothing to show (no lines,
    or a seat view before the match's end); the slot it leaves is not written out as the
    text "null" after the match's line."""
    for hash_ in ("", "#deal=0&step=0&seat=0"):
        load(driver, f"{base}replay/{match_id}{hash_}")
        head = driver.find_element("id", "match-head").text
        assert "seed" in head and "null" not in head, (hash_, head)
        assert not driver.find_elements("id", "match-incidents"), hash_


# ---------------------------------------------------------------------- the sitter's bid


@pytest.mark.parametrize("concede", ["free", "penalty", "off"])
def test_heuristic_sitter_bids_at_even_odds_only_under_the_free_concession(concede: str) -> None:
    """RULES.md, the barrel: the sitter wins only by a contract of 120+. Deal 55, the sitter
    in seat 1 speaks first over the first hand's 100 with 9♠ J♠ Q♣ K♣ A♦ J♥ A♥: heuristic
    gives it 120 at better than even odds but under 0.65. Under the free concession he may
    concede a bad talon for nothing, keeping his seat: he bids. Where a won auction commits
    him (``penalty``: conceding costs the contract and the barrel; ``off``: he must play)
    his bid needs an ordinary bid's confidence: he passes. Read at the barrel's even odds
    under every rule, he bid 105 there too."""
    rules = dataclasses.replace(_CLASSIC, concede=concede)
    g = Game.new(rules, 55, ["a", "b", "c"], dealer=2, scores=[0, 880, 0], barrel=[0, 3, 0])
    view = observe(g, 1)
    assert g.to_act == 1 and " ".join(map(str, view.hand)) == "9♠ J♠ Q♣ K♣ A♦ J♥ A♥"
    assert HeuristicBot().act(view) == (Bid(105) if concede == "free" else Pass())
