"""Review round 55c: hand mutants of round 55's limits55 and rec55 changes (strict JSON and
its users, the web's held-back rows, the runner's exit-137 hint, the engine's reprs and
card notation in ``Card``, the record's ``"failed": true``, the card and play texts read
from tables). Each test names the mutants it kills (J: arena/strict_json.py, U: its users,
B: bench strength/forks, W: the web's held-back rows, R: the runner's exit words, C: cards
and texts, F: failed decisions), with the edit.

79 hand mutants: the existing tests killed 51; the tests here kill 20 (J03, J09, U02, B06,
B08, B09, W05, W06, W12, F06, F09-F15, F18-F20); 8 are equivalent: J06 (the fallback's
``allow_nan=False`` dropped: every float is finite by then; only a float *key* differs,
which no answer of the arena has), U04 and U05 (``json.dumps`` for strength's and forks'
``--json``: their reports hold no infinite number since ``ci95`` is null), W07 (no held
set: the query of an empty list finds no match either), C08 (a byte table's texts made by
``str``: the same texts), C15 (``CARD_TEXT[self % 24]``: a card is below 24), F02 (the
referee's "accepted though not in the legal list" return: the engine accepts no action
outside its legal list, every candidate action tried at every step of 12 matches), F08
(``entry.get("failed")`` for ``is True``: ``render_record`` checks the shape first, which
refuses a ``failed`` that is not true).

Defects, fixed: a ``Play`` of no ``Card`` (``test_a_play_of_no_card_is_refused_...``);
the match file's action lines, which carry ``"failed"``, were not said in
docs/referee.md; a bot page's incidents had ``held_back`` only when true.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena import strict_json
from arena.bench import forks as forks_mod
from arena.bench import strength as strength_mod
from arena.leaderboard import build_leaderboard, to_json
from arena.render import CLIENT_FALLBACK_NOTE, FALLBACK_MARK, render_record
from arena.storage import Storage
from arena.web.demo import make_demo_db
from engine import Game
from engine.actions import Play
from engine.errors import IllegalActionError
from engine.record import check_record_shape
from sdk import Bot, Phase, PlayerView
from sdk.bot import Action
from tests.arena.fake_referee import FakeReferee, make_config, run_fake
from tests.support.harness import get_json, play_sdk_match, web_server
from tests.web.test_held_back_links_round55 import _status
from tests.web.test_web_round38 import _run_page_js

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")


def strict(text: str) -> Any:
    """``text`` parsed as a strict parser does: ``NaN``, ``Infinity`` refused."""
    return json.loads(text, parse_constant=_refuse)


# --- strict JSON ---------------------------------------------------------------------------


class _Float(float):
    """A float of another type (numpy's ``float64`` is one): a number all the same."""


def test_every_float_at_any_depth_of_lists_tuples_and_dicts_is_written_null() -> None:
    """J03 (tuples left as they were), J08 (a list's items not walked), J09 (only exact
    ``float``: a float of a subclass, numpy's, kept its infinity and the answer failed)."""
    value = {
        "t": (1.0, float("inf")),
        "deep": [[{"x": (float("nan"), 2)}]],
        "sub": _Float("-inf"),
        "ok": _Float(2.5),
    }
    assert strict(strict_json.dumps(value)) == {
        "t": [1.0, None], "deep": [[{"x": [None, 2]}]], "sub": None, "ok": 2.5,
    }  # fmt: skip
    assert strict_json.finite((float("nan"), [float("inf")])) == [None, [None]]


def test_the_leaderboards_json_writes_a_figure_that_is_no_number_null(tmp_path: Path) -> None:
    """U02: ``to_json`` through ``json.dumps`` (round 55's own test stored an infinite
    duration, which the leaderboard's JSON does not hold, so it passed either way)."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=2, max_deals=2)
    with Storage.open_readonly(db) as st:
        lb = build_leaderboard(st, st.tournaments()[0].id)
    lb.rows[0] = dataclasses.replace(lb.rows[0], median_ms=math.nan, mean_score=math.inf)
    bot = lb.rows[0].bot
    row = next(r for r in strict(to_json(lb))["rows"] if r["bot"] == bot)
    assert (row["median_ms"], row["mean_score"]) == (None, None)


# --- bench: strength and forks -------------------------------------------------------------


def test_forks_interval_of_unequal_seeds_in_json_and_in_its_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """B06 (the interval's high end its low end), B08 (the line printing the low end
    twice): round 55's two seeds were equal, an interval of no width."""

    def scripted(rules: Any, seed: int, spec: str, budget: Any = None) -> list[dict[str, Any]]:
        gain = 30.0 if seed % 2 else 0.0  # seed 1: +10 a deal; seed 2: 0
        return [
            {"seed": seed, "seat": 0, "old": 0.0, "new": gain, "decision": "bidding at 45"},
            {"seed": seed, "seat": 1, "old": 0.0, "new": 0.0},
            {"seed": seed, "seat": 2, "old": 0.0, "new": 0.0},
        ]

    monkeypatch.setattr(forks_mod, "fork_seed", scripted)
    argv = ["--variant", "bid-confidence=0.9", "--matches", "2", "--workers", "1", "--seed", "1"]
    assert forks_mod.main([*argv, "--json"]) == 0
    report = strict(capsys.readouterr().out)
    # diffs 10 and 0: mean 5, half 1.96 * stdev(10, 0) / sqrt(2) = 1.96 * 5
    assert report["gain_per_deal"] == 5.0
    assert report["ci95"] == [round(5 - 9.8, 2), round(5 + 9.8, 2)] == [-4.8, 14.8]
    assert forks_mod.main(argv) == 0
    assert "+5.00 [-4.80, +14.80] per deal" in capsys.readouterr().out


def test_strengths_row_prints_both_ends_of_an_interval() -> None:
    """B09: the table's interval printed its low end twice (round 55's test read the
    interval of two seeds from ``--json`` only, and the table of one seed)."""
    pair = {
        "bot": "heuristic", "vs": "random", "games": 6, "diff_per_deal": 5.0,
        "ci95": [-4.8, 14.8], "bot_per_deal": 20.0, "opp_per_deal": 15.0, "win_rate": 0.5,
        "ms_per_decision": 0.4, "ms_p99": 2.0, "ms_max": 3.0,
    }  # fmt: skip
    report = {"ruleset": "classic", "matches": 2, "seed": 0, "max_deals": 1, "seconds": 0.5,
              "pairs": [pair]}  # fmt: skip
    out = io.StringIO()
    strength_mod._print(report, out)
    row = out.getvalue().splitlines()[2]
    assert "[-4.8, +14.8]" in row, row


# --- the web's held-back rows --------------------------------------------------------------


def test_two_sets_held_back_at_once_and_the_incidents_of_their_matches(tmp_path: Path) -> None:
    """W05 (only the first held set's matches marked), W06 (a bot page's strikes of a match
    held back not marked: the page linked their deals, a 403): a match of the first set
    failed, so that set waits for it while the second set is played, each held back; ann
    has a strike (a timeout) in every match she plays."""
    cfg = make_config(tmp_path, matches_per_table=2, deals="duplicate")
    run_fake(cfg, FakeReferee(fail={3}, faulty={"ann"}), max_new_matches=30)
    tid = cfg.tournament_id
    with Storage.open_readonly(cfg.db) as st:
        per_set = dict(
            st.conn.execute("SELECT set_no, COUNT(*) FROM matches GROUP BY set_no").fetchall()
        )
    assert len(per_set) == 2 and per_set[0] == 23  # (the failed match is still to play)
    with web_server(cfg.db) as server:
        url = server.url
        matches = get_json(url, f"/api/matches?tournament={tid}")["matches"]
        assert len(matches) == sum(per_set.values())
        for m in matches:
            assert m["held_back"] is True
            assert _status(url, f"/api/matches/{m['match_id']}") == 403
        page = get_json(url, f"/api/bots/ann?tournament={tid}&limit=1000")
        older = get_json(url, f"/api/bots/ann/strikes?tournament={tid}&limit=1000")
        for strikes in (page["strikes"], older["strikes"]):
            assert len(strikes) > 20  # (of both sets)
            assert all(s["held_back"] is True for s in strikes), strikes[:2]
        run_fake(cfg, FakeReferee(faulty={"ann"}))  # the rest: every set played out
        page = get_json(url, f"/api/bots/ann?tournament={tid}&limit=1000")
        # (each incident has the key, false too, as each match of a list has)
        assert page["strikes"] and all(s["held_back"] is False for s in page["strikes"])
        assert not any(m["held_back"] for m in page["matches"])


def test_the_held_back_label_says_why_in_its_title() -> None:
    """W12: the label's title (what a pointer over it reads) left out."""
    got = _run_page_js(
        "bot.js",
        """
const m = { match_id: "t-m0001", players: ["a", "b", "c"], places: [1, 2, 3],
  scores: [5, 0, -5], deals: 4, status: "", held_back: true };
const spans = (n) => (n.tag === "span" ? [n] : []).concat(n.children.flatMap(spans));
const label = spans(matchesTable([m])).find((s) => s.textContent === "held back");
process.stdout.write(JSON.stringify(label ? label.attrs.title : null));
""",
    )
    assert isinstance(got, str) and got.startswith("held back: dealt the same cards as matches")


# --- cards and texts -----------------------------------------------------------------------


@pytest.mark.parametrize("card", ["10♣", -1, 99, None, 5.0, True])
def test_a_play_of_no_card_is_refused_naming_it_as_given(card: Any) -> None:
    """Defect (round 55's play texts read from a table by the card): ``str(Play(x))`` of
    an ``x`` that is no ``Card`` raised ``TypeError`` (``Play("10♣")``, ``Play(None)``: the
    engine's validated door ``Game.apply`` then raised that, not its
    ``NotAnActionError``), ``IndexError`` (``Play(99)``), or named another card
    (``Play(-1)`` read "play A♥", ``Play(True)`` "play J♠"): the refusal quotes it as given
    again, as before round 55."""
    game = Game.new("classic", seed=1, players=["a", "b", "c"])
    while game.phase is not Phase.PLAYING:
        game.apply_trusted(game.legal_actions()[0])
    play = Play(card)
    assert str(play) == f"play {card}"
    assert str(Play(card, declare=True)) == f"play {card} declare"
    with pytest.raises(IllegalActionError) as refused:
        game.apply(play, seat=game.to_act)
    assert str(refused.value).startswith(f"illegal action 'play {card}' by seat ")


# --- failed decisions ----------------------------------------------------------------------

#: (player, trick number) of the plays whose decision the bot fails; bob fails first, so
#: the line under the tricks names him first (the referee's legend is in play order too).
FAILED_PLAYS = {("bob", 1), ("ann", 2), ("ann", 4), ("ann", 5), ("cid", 3)}


class FailsSomeDecisions(Bot):
    """Raises at its gives and contract, and at the plays of :data:`FAILED_PLAYS` (its
    client then sends the first legal action, saying the decision failed)."""

    def act(self, view: PlayerView) -> Action:
        me = view.players[view.seat]
        if view.phase in (Phase.PASSING, Phase.CONTRACT):
            raise RuntimeError("boom")
        if view.phase is Phase.PLAYING and (me, len(view.tricks) + 1) in FAILED_PLAYS:
            raise RuntimeError("boom")
        return view.legal_actions[0]


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The record of a deal of failed gives, contract and plays, and its JSONL file."""
    where = tmp_path_factory.mktemp("recs")
    rec = play_sdk_match(FailsSomeDecisions, max_deals=1, incidents=True, record_dir=where)
    (jsonl,) = where.glob("*.jsonl")
    return rec, jsonl


def _text(record: dict[str, Any]) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(render_record(record))
    return out.getvalue()


def _runs(numbers: list[int]) -> str:
    """``1-2, 4``: the oracle's own shortening of ascending numbers."""
    groups: list[list[int]] = []
    for n in numbers:
        if groups and n == groups[-1][-1] + 1:
            groups[-1].append(n)
        else:
            groups.append([n])
    return ", ".join(str(g[0]) if len(g) == 1 else f"{g[0]}-{g[-1]}" for g in groups)


def test_arena_replay_names_each_seats_failed_plays_by_trick_in_play_order(
    failing: tuple[dict[str, Any], Path],
) -> None:
    """F09 (a failed play not listed), F10 (its card marked as the referee's), F11/F12
    (one trick said "tricks"; several not as runs), F13 (the trick before), F14 (every
    seat's tricks under each), F19 (the line's words), F20 (the seats sorted, not in play
    order). The line under the tricks is worked out here from the record."""
    rec, _ = failing
    players = rec["players"]
    failed: list[tuple[int, int]] = []  # (seat, trick number) in play order
    plays = 0
    for a in rec["deals"][0]["actions"]:
        if a["action"].startswith("play "):
            plays += 1
            if a.get("failed") is True:
                failed.append((a["seat"], (plays - 1) // 3 + 1))
    seats = list(dict.fromkeys(s for s, _ in failed))
    assert players[seats[0]] == "bob" and len(seats) == 3  # (the run: bob failed first)
    assert any(sum(s == x for s, _ in failed) > 2 for x in seats)  # (ann's: a run and one)
    said = "; ".join(
        f"{players[s]} ({s}) in trick{'s' if len(ns) > 1 else ''} {_runs(ns)}"
        for s in seats
        if (ns := [n for x, n in failed if x == s])
    )
    text = _text(rec)
    assert f"cards {CLIENT_FALLBACK_NOTE}: {said}\n" in text, text
    assert "played by the referee" not in text
    trick_rows = [line for line in text.splitlines() if line.startswith("│")]
    assert trick_rows and not any(FALLBACK_MARK in row for row in trick_rows), trick_rows


def test_arena_replay_says_a_failed_give_and_contract_after_them(
    failing: tuple[dict[str, Any], Path],
) -> None:
    """F18: the note after a give or a contract (the bids' is round 55's test)."""
    rec, _ = failing
    text = _text(rec)
    actions = rec["deals"][0]["actions"]
    gives = [a for a in actions if a["action"].startswith("give ")]
    contract = next(a for a in actions if a["action"].startswith("contract "))
    assert len(gives) == 2 and all(a.get("failed") is True for a in [*gives, contract])
    players = rec["players"]
    for a in gives:
        _, card, _, to = a["action"].split()
        line = f"{players[a['seat']]} ({a['seat']}): gives {card} to {players[int(to)]} ({to})"
        assert f"{line} {CLIENT_FALLBACK_NOTE}\n" in text, text
    line = f"{players[contract['seat']]} ({contract['seat']}): {contract['action']}"
    assert f"{line} {CLIENT_FALLBACK_NOTE}\n" in text, text


def test_the_match_files_action_lines_say_a_failed_decision(
    failing: tuple[dict[str, Any], Path],
) -> None:
    """F15: the ``record_dir`` file's ``action`` lines (read as they come, before the end
    line's record) lacked ``"failed": true``; docs/referee.md's schema says it."""
    rec, jsonl = failing
    lines = [json.loads(x) for x in jsonl.read_text(encoding="utf-8").splitlines()]
    actions = [x for x in lines if x["type"] == "action"]
    recorded = [a for d in rec["deals"] for a in d["actions"]]
    assert [x.get("failed") for x in actions] == [a.get("failed") for a in recorded]
    assert sum(x.get("failed") is True for x in actions) == len(FAILED_PLAYS) + 3
    assert lines[-1]["type"] == "end" and lines[-1]["record"]["deals"] == rec["deals"]
    schema = (DOCS / "referee.md").read_text(encoding="utf-8")
    # (the braces hold the keys every line has: tests/docs/test_docs_round33.py reads them)
    assert 'one per action (and "failed": true as the record has it)' in schema


def test_a_failed_mark_on_an_action_without_by_is_the_bots(
    failing: tuple[dict[str, Any], Path],
) -> None:
    """F06: ``by`` absent reads as the bot's (docs/record-format.md: "true on an action
    `by` `bot` (or absent)"): a record made by hand without ``by`` is not refused."""
    rec, _ = failing
    bare = copy.deepcopy(rec)
    for d in bare["deals"]:
        for a in d["actions"]:
            a.pop("by", None)
            a.pop("ms", None)
    check_record_shape(bare)
    contract = next(a for a in bare["deals"][0]["actions"] if a["action"].startswith("contract"))
    assert f"{contract['action']} {CLIENT_FALLBACK_NOTE}\n" in _text(bare)
