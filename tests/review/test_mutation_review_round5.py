"""Mutation review, round 5: the checks added in round 17 (the record checks of `arena replay
--check`, engine/record.py), each mutated by hand; a test here for each mutant that the
suite let live.

The records are the referee's own (an in-process referee, bots answering on the next turn
of the loop): a check that refuses one of them is wrong, whatever the edits below show.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from support.harness import attach_in_process

from arena.referee import Referee, RefereeConfig
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Action, PlayerView
from engine.record import RECORD_FORMAT, ReplayError, check_record_shape, replay
from sdk import Bot
from tests.sdk.test_bot_context import LateOnce, only_the_timeout_is_recorded

#: An answer no request takes: a bid of 7 (bids go in steps of 5; in play, no bid at all).
_ILLEGAL = pb.Action(bid=pb.Bid(amount=7))

# (bot, its n-th request counted from 1, the request) -> the action sent, or None: no answer
Policy = Callable[[str, int, pb.DecisionRequest], pb.Action | None]


def _referee_record(
    tmp: Path,
    policy: Policy,
    *,
    cancel_at: int | None = None,
    max_deals: int = 2,
    ask_forced: bool = False,
) -> dict[str, Any]:
    """The record a referee writes of one classic match (string seed "r5") between bots
    a, b and x answering by ``policy``: its last line (``end``, or ``interrupted`` when
    the match is cancelled as bot a's request ``cancel_at`` comes)."""

    async def main() -> None:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, max_strikes=3,
                                    record_dir=tmp))  # fmt: skip
        asked: dict[str, int] = {}
        task: asyncio.Task[Any] | None = None

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            asked[bot] = asked.get(bot, 0) + 1
            if bot == "a" and asked[bot] == cancel_at and task is not None:
                task.cancel()
                return
            action = policy(bot, asked[bot], r)
            if action is not None:
                decision = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                       action=action)  # fmt: skip
                ref.on_decision(ref.session(bot), decision)

        attach_in_process(ref, ("a", "b", "x"), answer)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=max_deals, ask_forced=ask_forced)
        task = asyncio.create_task(ref.run_match("r5-m", rules, "r5", ["a", "b", "x"]))
        try:
            await task
        except asyncio.CancelledError:
            assert cancel_at is not None

    asyncio.run(main())
    (path,) = tmp.glob("*.jsonl")
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["type"] == ("end" if cancel_at is None else "interrupted"), last["type"]
    record: dict[str, Any] = last["record"]
    return record


def _first_legal(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action:
    return r.view.legal_actions[0]


def _strikes(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action:
    """x answers illegally at its first request and sends an empty action (malformed) at
    its second; no more strikes than that."""
    if bot == "x" and n == 1:
        return _ILLEGAL
    if bot == "x" and n == 2:
        return pb.Action()
    return r.view.legal_actions[0]


@pytest.fixture(scope="module")
def struck(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rec = _referee_record(tmp_path_factory.mktemp("struck"), _strikes)
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("illegal", 2), ("malformed", 2)]
    assert rec["forfeits"] == [] and rec["result"] is not None
    return rec


def _refused(rec: dict[str, Any], words: str) -> ReplayError:
    with pytest.raises(ReplayError) as e:
        replay(rec)
    assert words in str(e.value), str(e.value)
    return e.value


def test_a_referee_record_with_a_string_seed_and_strikes_replays(struck: dict[str, Any]) -> None:
    """Mutant: 'seed' refused unless an integer (the referee takes a string seed too)."""
    assert struck["seed"] == "r5"
    replay(struck)


def test_an_interrupted_record_with_a_forfeit_replays(tmp_path: Path) -> None:
    """Mutant: "rules_result: missing, but the record lists forfeits" also for a match that
    has no result: an interrupted one keeps its forfeits, and neither result has a place."""

    def illegal_x(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action:
        return _ILLEGAL if bot == "x" else r.view.legal_actions[0]

    rec = _referee_record(tmp_path, illegal_x, cancel_at=12)
    assert rec["interrupted"] is True and rec["result"] is None and rec["forfeits"] == [2]
    assert "rules_result" not in rec
    replay(rec)


@pytest.mark.parametrize(
    ("fmt", "newer"),
    [
        (RECORD_FORMAT.rpartition("/")[0] + "/2", True),
        (RECORD_FORMAT.rpartition("/")[0] + "/01", False),  # the same version, misspelt
        (RECORD_FORMAT.rpartition("/")[0] + "/²", False),  # a digit to isdigit(), not to int()
        (RECORD_FORMAT.rpartition("/")[0] + "X2", False),  # another format's name
    ],
)
def test_only_a_later_version_of_the_format_is_newer(
    struck: dict[str, Any], fmt: str, newer: bool
) -> None:
    """Mutants: version 01 read as newer (``>=``), "²" crashing int() (no isascii), and a
    name that only begins as ours ("…/recordX2") read as a later version of it."""
    rec = dict(struck, format=fmt)
    e = _refused(rec, "newer Thousand Arena" if newer else "'format' must be")
    assert e.newer is newer


@pytest.mark.parametrize("ms", [float("inf"), -0.5, True])
def test_ms_is_a_finite_number_not_below_zero(struck: dict[str, Any], ms: Any) -> None:
    """Mutants: ``0 <= ms`` (infinity passed), ``-1 < ms`` (-0.5 passed), and the bool
    test dropped (true passed as 1)."""
    rec = copy.deepcopy(struck)
    rec["deals"][0]["actions"][0]["ms"] = ms
    _refused(rec, "deal 0, action 0: 'ms' must be a number of milliseconds")


def test_the_per_seat_counts_are_not_held_to_a_seat_count_a_record_does_not_give() -> None:
    """Mutant: the counts' length compared with the players when there are none (storage
    checks the shape of a stored record with no key required)."""
    check_record_shape({"wrong_requests": [0, 1, 0], "disconnects": [2, 0, 0]}, required=())
    with pytest.raises(ReplayError, match="'disconnects' must be a list of 3 integers"):
        check_record_shape({"players": ["a", "b", "c"], "disconnects": [0, 0]}, required=())


def _with_incident(rec: dict[str, Any], **inc: Any) -> dict[str, Any]:
    rec = copy.deepcopy(rec)
    rec["incidents"].append({"kind": "wrong_request", "seat": 0, "deal": 0, "detail": "", **inc})
    if inc.get("kind", "wrong_request") == "wrong_request" and _is_seat(inc.get("seat", 0)):
        rec["wrong_requests"][inc.get("seat", 0)] += 1  # (listed: counted too)
    return rec


def _is_seat(seat: object) -> bool:
    return isinstance(seat, int) and 0 <= seat < 3


@pytest.mark.parametrize("seat", [3, -1])
def test_an_incident_names_a_seat_of_the_match(struck: dict[str, Any], seat: int) -> None:
    """Mutants: ``seat <= n`` and ``-1 <= seat``."""
    _refused(_with_incident(struck, seat=seat), f"seat {seat} is no seat of the match")


def test_an_incident_names_a_deal_of_the_record_or_the_one_after(struck: dict[str, Any]) -> None:
    """Mutants: ``deal <= deals + 1``, ``-1 <= deal``, and ``deal < deals``: an answer that
    comes once the last deal is over is numbered as the next deal (the engine numbers the
    state after a deal so), and older referees so numbered a strike on a deal's last move."""
    deals = len(struck["deals"])
    replay(_with_incident(struck, deal=deals))
    for deal in (deals + 1, -1):
        _refused(_with_incident(struck, deal=deal), f"deal {deal} is past the record's")


@pytest.mark.parametrize("kind", ["timeout", "illegal", "malformed"])
def test_every_kind_of_strike_needs_its_fallback(struck: dict[str, Any], kind: str) -> None:
    """Mutants: one kind left out of the strikes. Seat 0 answered every request: a strike
    of its has no fallback to answer it."""
    assert not any(
        a.get("by") == "fallback" and a["seat"] == 0 for a in struck["deals"][0]["actions"]
    )
    _refused(_with_incident(struck, kind=kind), "seat 0 has 1 strike(s) in deal 0")


def test_strikes_are_paired_when_only_some_actions_say_who_chose_them(
    struck: dict[str, Any],
) -> None:
    """Mutant: ``all`` for ``any`` (a record whose actions say who chose them, but for one,
    skipped the pairing of strikes and fallbacks)."""
    rec = _with_incident(struck, kind="timeout")
    del rec["deals"][1]["actions"][0]["by"]
    _refused(rec, "seat 0 has 1 strike(s) in deal 0")


def test_the_disconnects_listed_are_counted(struck: dict[str, Any]) -> None:
    """Mutant: the disconnects left out of the per-seat counts' check."""
    rec = _with_incident(struck, kind="disconnect", seat=1)
    assert rec["disconnects"] == [0, 0, 0]
    _refused(rec, "disconnects: seat 1 counts 0, 1 are listed")
    rec["disconnects"][1] = 1
    replay(rec)


def test_a_prefix_of_several_names_is_no_guess_by_their_order() -> None:
    """Mutant: ``if not found`` for ``if len(found) != 1``: "match" begins both
    match_timeout_s and matches_per_table, and the first in sorted order was offered as
    if it were meant; one name it begins is."""
    from engine.rules import did_you_mean

    known = ("match_timeout_s", "matches_per_table", "max_deals", "bots", "bot_wait_s")
    assert did_you_mean("match", known) == ""
    assert did_you_mean("matches", known) == " (did you mean 'matches_per_table'?)"


def test_an_empty_word_is_no_prefix_of_every_name() -> None:
    """Mutant: the ``word and`` dropped: "" begins every name, and with one name known it
    was offered for an empty key (`"" = 1`)."""
    from engine.rules import did_you_mean

    assert did_you_mean("", ("seed",)) == ""


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ({"ruleset": "nonesuch"}, "ruleset: preset: unknown preset 'nonesuch'"),
        ({"start": {"scores": [1, 2], "barrel": [0, 0, 0]}}, "cannot start the match: scores"),
    ],
)
def test_a_record_that_cannot_start_is_refused_by_name_by_check_and_the_web(
    struck: dict[str, Any], tmp_path: Path, edit: dict[str, Any], named: str
) -> None:
    """Mutants: the seed's cards, now compared before the replay, re-raising when the match
    cannot even start (a ruleset no longer known, a start of two scores): `--check` ended
    in a traceback, and the web answered "ReplayError: ..." as a fault of its own, not
    "does not replay", as it does for a record the rules refuse."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.web.replay import MatchReplay, ReplayFailed

    rec = {**copy.deepcopy(struck), **edit}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert f"REFUSED: {named}" in result.output, result.output
    with pytest.raises(ReplayFailed, match=f"match r5-m does not replay: {named}"):
        MatchReplay("r5-m", rec)


def test_an_answer_is_dropped_only_past_the_clock_doubt_of_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant: the margin's 1 ms per second of budget (two clocks may run apart by NTP's
    500 ppm slew, and a re-sent request's time left is rounded) dropped: an answer 10 ms
    past a 20 s budget by this process's clock may still be inside the referee's deadline,
    and dropping it costs a strike; 50 ms past is past it for certain."""
    from types import SimpleNamespace

    import sdk.client
    from sdk.bot import Deadline
    from sdk.client import _too_late

    # The clock held still: by the real one, a pause of this process of 10 ms between the
    # deadline's start and the check made the answer 10 ms past a late one.
    monkeypatch.setattr(sdk.client, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    m = SimpleNamespace(match_id="m1")
    for past, late in ((0.010, False), (0.050, True)):
        d = Deadline(limit_s=10.0, bank_s=10.0, received=1000.0 - 20.0 - past)
        assert _too_late(m, "1", d) is late, past  # type: ignore[arg-type]


class _QuickLateOnce(LateOnce):
    """Says it is quick (asked on the event loop, no thread); its first decision of the
    match takes 1 s, past a 250 ms limit with no bank."""

    quick = True


def test_a_quick_bots_answer_past_its_deadline_is_not_sent_either(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Mutant: the answer of a decision made inline (a quick bot's) sent whatever its
    lateness: the referee, which had played its fallback, refused it as a wrong request (a
    second warning, and a ``wrong_request`` incident), as for a bot asked in a thread
    (tests/sdk/test_bot_context.py) before the runner dropped such answers."""
    only_the_timeout_is_recorded(tmp_path, caplog, _QuickLateOnce)


def test_a_web_address_in_capitals_is_refused_too() -> None:
    """Mutant: the scheme compared as typed (URI schemes are case-insensitive: HTTP://
    passed as a gRPC target, and the bot retried a host named "HTTP://..." as an arena
    that was down)."""
    from click.testing import CliRunner

    from sdk.cli import main as arena_bot

    args = ["run", "random", "--arena", "HTTP://localhost:50051", "--token", "abcdefgh"]
    r = CliRunner().invoke(arena_bot, [*args, "--retry-for", "0"])
    assert r.exit_code == 2, r.output
    assert "is a web address" in r.output and "'localhost:50051'" in r.output, r.output


class _ReturnsStrings(Bot):
    def play(self, view: PlayerView) -> Action:
        return ["a", "b"]  # type: ignore[return-value]


def test_a_list_of_what_is_no_action_is_shown_as_python_writes_it() -> None:
    """Mutants: a list of anything written in the actions' notation (['a', 'b'] as
    "[a, b]"), and the hint "a list of 2 actions; return one of them" for a list of no
    actions at all."""
    from sdk import play_local

    m = play_local([_ReturnsStrings, Bot, Bot], seed=3, max_deals=1)
    [detail, *_] = [i.detail for i in m.incidents if i.seat == 0]
    assert "returned ['a', 'b'], which is not an Action" in detail, detail
    assert "return one of them" not in detail, detail


def test_a_rehearsal_within_its_limits_says_nothing_of_the_time_bank(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Mutant: ``now <= left_ms``: a decision inside its limit, which takes nothing from
    the bank, was said to have used it ("the time bank paid 0 ms"), once per seat."""
    from sdk import play_local

    with caplog.at_level(logging.WARNING):
        play_local([Bot, Bot, Bot], seed=3, max_deals=1, decision_ms=60_000, time_bank_ms=1000)
    assert "time bank" not in caplog.text, caplog.text


def test_a_traceback_wholly_in_the_sdk_is_kept_whole() -> None:
    """Mutant: ``tb`` for ``tb or e.__traceback__``: an exception whose every frame is the
    SDK's (a bug of its own) was logged with no traceback at all."""
    from sdk.local import _limits, bot_exc_info

    try:
        _limits(-1, 0)
    except ValueError as e:
        caught = e
    assert caught.__traceback__ is not None
    sdk_only = caught.__traceback__.tb_next  # (this test's frame dropped)
    assert sdk_only is not None
    caught.__traceback__ = sdk_only
    assert bot_exc_info(caught) == (ValueError, caught, sdk_only)


def _last_card_illegal(bot: str, n: int, r: pb.DecisionRequest) -> pb.Action:
    """x answers illegally when it plays a trick's last card with its last card (the move
    that ends the deal; ask_forced: it is asked)."""
    last = r.view.phase == pb.PHASE_PLAYING and len(r.view.hand) == 1
    if bot == "x" and last and len(r.view.trick) == 2:
        return _ILLEGAL
    return r.view.legal_actions[0]


def test_a_strike_numbered_as_referees_before_round_7_numbered_it_replays(
    tmp_path: Path,
) -> None:
    """Defect (review of round 17's record checks): a referee before round 7 recorded a
    strike after playing its fallback, so a strike on a deal's last move was numbered with
    the next deal (past the last one at the match's last move, which the check lets
    through for that reason). The new pairing of strikes with fallbacks refused every
    such record (`arena replay --check` and the web: "seat 2 has 1 strike(s) in deal 1,
    but the referee played 0 fallback(s) for it there"), stored tournaments among them. A
    strike one deal past a deal that ends in an unanswered fallback of its seat is paired
    with it; one past a deal that does not is still refused."""
    rec = _referee_record(tmp_path, _last_card_illegal, max_deals=3, ask_forced=True)
    old = copy.deepcopy(rec)
    moved = 0
    for inc in old["incidents"]:
        last = old["deals"][inc["deal"]]["actions"][-1]
        if inc["kind"] == "illegal" and last["seat"] == inc["seat"] and last["by"] == "fallback":
            inc["deal"] += 1
            moved += 1
    assert moved, rec["incidents"]  # x ended some deal with a strike
    replay(rec)
    replay(old)
    # Moved one deal further, it answers no fallback at all.
    further = copy.deepcopy(old)
    for inc in further["incidents"]:
        inc["deal"] = min(inc["deal"] + 1, len(further["deals"]))
    _refused(further, "fallback(s) for it there")


def test_a_strike_with_no_deal_is_no_crash(struck: dict[str, Any]) -> None:
    """Defect (review of round 17's record checks): an incident may leave out its deal (the
    check lets it), but a strike without one, beside a strike of the same seat with one,
    made the pairing sort None against a number: `arena replay --check` said "malformed
    match record: TypeError(...)" and the web answered a 500 "TypeError" with a traceback
    in its log. A strike with no deal pairs with no fallback: it is left out of the
    pairing, as the rest of the check leaves it."""
    from arena.web.replay import MatchReplay

    rec = copy.deepcopy(struck)
    del rec["incidents"][0]["deal"]  # seat 2's first strike; its second says deal 0
    replay(rec)
    MatchReplay("r5-m", rec)


@pytest.mark.parametrize(
    ("update", "words"),
    [
        ("UPDATE matches SET duration_s = 'x'", "the stored duration_s of match 'r5-m' is damaged"),
        ("UPDATE matches SET deals = 2.5", "the stored deals of match 'r5-m' is damaged"),
        ("UPDATE matches SET seats_json = '[]'", "the stored seats of match r5-m are damaged"),
    ],
)
def test_a_match_row_changed_by_hand_is_named_damaged(
    struck: dict[str, Any], tmp_path: Path, update: str, words: str
) -> None:
    """Mutants: the match row's types left unchecked (a text duration, a float count of
    deals), and an empty list of seats read as seats."""
    import sqlite3

    from arena.storage import Storage, StorageError

    db = tmp_path / "t.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("r5", name="r5", fingerprint="f", config={"name": "r5"},
                             total_matches=1, bots=[("a", "random"), ("b", "random"),
                                                    ("x", "random")])  # fmt: skip
        st.save_match("r5", match_id="r5-m", index=0, table=0, set_no=0, seed=5,
                      seats=["a", "b", "x"], record=struck, started_at=0.0,
                      finished_at=1.5)  # fmt: skip
        assert [m.match_id for m in st.match_results("r5")] == ["r5-m"]
    with sqlite3.connect(db) as c:
        c.execute(update)
    c.close()
    with Storage(db) as st, pytest.raises(StorageError, match=re.escape(words)):
        st.match_results("r5")


def test_a_fallback_a_strike_of_its_own_deal_answers_pairs_with_no_later_strike(
    tmp_path: Path,
) -> None:
    """Mutant of the fix above: ``>=`` for ``>`` (a deal's last fallback, answered by a
    strike of that deal, also answered one numbered with the next deal)."""
    rec = _referee_record(tmp_path, _last_card_illegal, max_deals=3, ask_forced=True)
    x = 2
    mine = {(i["deal"], i["kind"]) for i in rec["incidents"] if i["seat"] == x}
    ends = [
        d
        for d, deal in enumerate(rec["deals"][:-1])
        if deal["actions"][-1]["seat"] == x
        and deal["actions"][-1]["by"] == "fallback"
        and not any(
            a["seat"] == x and a["by"] == "fallback" for a in rec["deals"][d + 1]["actions"]
        )
    ]
    assert ends and all((d, "illegal") in mine for d in ends), (ends, mine)
    extra = copy.deepcopy(rec)
    extra["incidents"].append({"kind": "timeout", "seat": x, "deal": ends[0] + 1, "detail": ""})
    _refused(extra, f"seat 2 has 1 strike(s) in deal {ends[0] + 1}")
