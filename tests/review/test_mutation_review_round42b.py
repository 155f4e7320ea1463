"""Mutation review of round 42's product changes: ``Decision.failed`` and the ``bot_error``
incident (referee, SDK, record, leaderboard, ``arena replay``), the bounded recording, the
reset/half-close verdict of the referee's ``Play`` handler, the engine's refusal order,
``arena.render.fixed``/``fitted``, ``arena-bot``'s help texts.

Mutants were made by hand one at a time and the round's tests run against each (the table
is in the round's report). Each test here kills one or more that lived, through the
public surface where it can: the leaderboard's renderers, ``arena replay --check``,
``sdk.play_local``/``arena_record``, a referee and the SDK's runner over gRPC.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import grpc
from click.testing import CliRunner
from rich.console import Console

from arena.leaderboard import build_leaderboard
from arena.leaderboard.html import to_html
from arena.leaderboard.render import to_markdown, to_screen
from arena.referee import Referee, RefereeConfig
from arena.storage import Storage
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, PlayerView
from engine.actions import Action
from sdk import Bot
from tests.support.harness import arena, attach_in_process


def _board(tmp: Path, errors: list[int], names: list[str] | None = None) -> Any:
    """A leaderboard whose rows are bots ``names`` (default ``b0``, ``b1``...) that failed
    ``errors`` decisions each."""
    with Storage(tmp / "lb.sqlite") as st:
        st.ensure_tournament("t", name="t", fingerprint="f", total_matches=1,
                             config={"ruleset": {"name": "classic", "players": 3}},
                             bots=[("x", "r"), ("a", "r"), ("b", "r")])  # fmt: skip
        lb = build_leaderboard(st, "t")
    row = lb.rows[0]
    names = names or [f"b{i}" for i in range(len(errors))]
    lb.rows = [
        dataclasses.replace(row, bot=n, bot_errors=e) for n, e in zip(names, errors, strict=True)
    ]
    return lb


def _screen(lb: Any, width: int = 200) -> str:
    out = io.StringIO()
    Console(file=out, width=width).print(to_screen(lb, width))
    return " ".join(out.getvalue().split())


def test_the_failed_line_counts_one_more_bot_and_names_only_those_that_failed(
    tmp_path: Path,
) -> None:
    """Six bots failed: five named, "and 1 more bot" (one, no plural); seven: "2 more
    bots". A bot that failed nothing is never named; a board where none failed has no such
    line in any format. (Mutants ``more > 1`` for ``more > 0``, the plural at one, and the
    filter of bots that failed dropped, lived.)"""
    six = _board(tmp_path, [0, 6, 5, 4, 3, 2, 1, 0])
    words = _screen(six)
    assert (
        "decisions failed (bot_error, no strike): b1 6, b2 5, b3 4, b4 3, b5 2 and 1 more bot ("
        in (words)
    ), words
    assert "b0 0" not in words and "b7 0" not in words
    seven = _board(tmp_path, [7, 6, 5, 4, 3, 2, 1])
    assert "b4 3 and 2 more bots (each row's bot_errors in the JSON and CSV files)" in _screen(
        seven
    )
    none = _board(tmp_path, [0, 0, 0])
    assert "decisions failed" not in _screen(none)
    assert "decisions failed" not in to_markdown(none)
    assert "decisions failed" not in to_html(none)


def test_the_captions_failed_names_are_written_out_and_cut(tmp_path: Path) -> None:
    """The screen's line of failed decisions shows a bot's name as its row does: escape
    sequences written out (a name is a bot's text), and a long one cut in the middle.
    (The mutant naming them raw lived.)"""
    evil = "\x1b]0;pwned\x07" + "n" * 60
    lb = _board(tmp_path, [3, 0], [evil, "plain"])
    out = io.StringIO()
    Console(file=out, width=200).print(to_screen(lb, 200))
    text = out.getvalue()
    caption = " ".join(text[text.index("decisions failed") :].split())
    assert "\x1b]0;" not in text and "\x07" not in text
    assert caption.startswith("decisions failed (bot_error, no strike): \\x1b]0;pw…nnn"), caption
    assert "n" * 40 not in caption, caption


def _record_with(tmp: Path, **extra: Any) -> Path:
    rec = {**_one_match_record(), **extra}
    path = tmp / "m.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    return path


_RECORD: dict[str, Any] = {}


def _one_match_record() -> dict[str, Any]:
    """A referee's record of a 1-deal classic match whose seat 0 said ``failed`` twice."""
    if not _RECORD:

        async def main() -> dict[str, Any]:
            ref = Referee(RefereeConfig(decision_ms=5000))
            said = 0

            def answer(bot: str, req: pb.DecisionRequest) -> None:
                nonlocal said
                d = pb.Decision(request_id=req.request_id, match_id=req.match_id)
                d.action.CopyFrom(req.view.legal_actions[0])
                if bot == "x" and said < 2:
                    said += 1
                    d.failed = "KeyError"
                ref.on_decision(ref.session(bot), d)

            attach_in_process(ref, ("x", "a", "b"), answer)
            one = dataclasses.replace(PRESETS["classic"], max_deals=1)
            return await ref.run_match("mr42b", one, 3, ["x", "a", "b"])

        _RECORD.update(asyncio.run(main()))
    return dict(_RECORD)


def test_replay_check_refuses_a_bot_errors_list_of_the_wrong_shape(tmp_path: Path) -> None:
    """``bot_errors`` is checked as ``wrong_requests`` and ``disconnects`` are: a list of
    one integer per seat, else ``arena replay --check`` says what is wrong (the mutant
    checking the shape of the first two totals only lived: a string there passed the shape
    check and failed later, unclearly)."""
    from arena.cli import main as arena_main

    good = _record_with(tmp_path)
    assert json.loads(good.read_text())["bot_errors"] == [2, 0, 0]
    ok = CliRunner().invoke(arena_main, ["replay", "--check", str(good)])
    assert ok.exit_code == 0, ok.output
    for bad in ("two", [2, 0], [2, "0", 0]):
        path = _record_with(tmp_path, bot_errors=bad)
        r = CliRunner().invoke(arena_main, ["replay", "--check", str(path)])
        assert r.exit_code == 2, (bad, r.output)  # (not a record: an error, not a mismatch)
        said = " ".join(r.output.split())
        assert "'bot_errors' must be a list of 3 integers (one per seat)" in said, (bad, said)


class _NoneOnce(Bot):
    """Answers no action at its first bid."""

    done = False

    def bid(self, view: PlayerView) -> Action:
        if not self.done:
            self.done = True
            return None  # type: ignore[return-value]
        return super().bid(view)


class _SlowOnce(Bot):
    """Thinks past its limit and bank at its first bid."""

    done = False

    def bid(self, view: PlayerView) -> Action:
        if not self.done:
            self.done = True
            time.sleep(0.3)
        return super().bid(view)


def test_arena_record_lists_no_action_as_a_bot_error_and_a_late_answer_as_a_timeout() -> None:
    """``sdk.local.arena_record``: a bot that answered no action failed its decision (the
    SDK sends the fallback with ``Decision.failed``: a ``bot_error``, as for a raise); a
    timed match's late answer is a ``timeout``, as the referee records it (both mutants of
    the kind map lived)."""
    from engine import replay
    from sdk import play_local
    from sdk.local import arena_record

    match = play_local([_NoneOnce, Bot, Bot], PRESETS["classic"], seed=5, max_deals=1)
    record = arena_record(match)
    assert [(i["kind"], i["seat"]) for i in record["incidents"]] == [("bot_error", 0)]
    assert (
        "not an Action" in record["incidents"][0]["detail"]
        or "None" in (record["incidents"][0]["detail"])
    )
    assert replay(record).is_over

    timed = play_local(
        [_SlowOnce, Bot, Bot], PRESETS["classic"], seed=5, max_deals=1, decision_ms=50,
        time_bank_ms=0, timed_seats={0},
    )  # fmt: skip
    kinds = [(i["kind"], i["seat"]) for i in arena_record(timed)["incidents"]]
    assert kinds and set(kinds) == {("timeout", 0)}, kinds


def test_the_referee_lists_twenty_failed_decisions_of_a_seat_by_default() -> None:
    """docs/referee.md: the first 20 ``bot_error`` incidents of a seat are listed, all are
    counted. (The default made 21 lived: every test set its own limit.)"""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=5000))

        def answer(bot: str, req: pb.DecisionRequest) -> None:
            d = pb.Decision(request_id=req.request_id, match_id=req.match_id)
            d.action.CopyFrom(req.view.legal_actions[0])
            if bot == "x":
                d.failed = "E"
            ref.on_decision(ref.session(bot), d)

        attach_in_process(ref, ("x", "a", "b"), answer)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
        return await ref.run_match("twenty", rules, 3, ["x", "a", "b"])

    record = asyncio.run(main())
    listed = [i for i in record["incidents"] if i["kind"] == "bot_error"]
    assert record["bot_errors"][0] > 21, record["bot_errors"]
    assert len(listed) == 20 and {i["seat"] for i in listed} == {0}
    assert record["bot_errors"][1:] == [0, 0]


def test_trys_table_rounds_points_a_deal_halfway_away_from_zero() -> None:
    """``arena-bot try``'s points a deal, 0.25 (1 point in 4 deals), is 0.3 as the
    leaderboard writes it, not Python's 0.2 (the mutant formatting it so lived)."""
    from sdk.cli import _print_results
    from sdk.local import SeriesEntry, SeriesResult

    entry = SeriesEntry(name="lowest", matches=1, wins=0, places=2, score=1, deals=4)
    out = io.StringIO()
    _print_results(
        Console(file=out, width=120),
        SeriesResult(ruleset="classic", matches=1, entries=[entry]),
        "t",
    )
    row = next(line for line in out.getvalue().splitlines() if "lowest" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[5:7] == ["1", "0.3"], cells


class _FailsAcrossADrop(Bot):
    """At its first card: has the referee drop its stream, waits until its runner is back
    on a new one, then raises. Its other decisions are its own."""

    referee: Referee
    loop: asyncio.AbstractEventLoop
    raised = threading.Event()

    def play(self, view: PlayerView) -> Action:
        if self.raised.is_set():
            return super().play(view)
        session = self.referee.session("x")
        old = session.stream
        assert old is not None
        self.loop.call_soon_threadsafe(old.end, grpc.StatusCode.UNAVAILABLE, "dropped", True)
        give_up = time.monotonic() + 30
        while time.monotonic() < give_up and session.stream in (old, None):
            time.sleep(0.01)
        self.raised.set()
        raise ValueError("after the drop")


def test_a_failed_decision_answered_after_a_reconnect_is_still_a_bot_error(
    tmp_path: Path,
) -> None:
    """The SDK's runner keeps an answer whose stream went away while the bot decided, and
    sends it when the referee asks again on the new stream: it sends ``failed`` with it,
    so the referee records the ``bot_error`` (the mutants dropping ``failed`` from the
    kept answer lived)."""

    async def main() -> tuple[dict[str, Any], list[Any]]:
        async with arena(tmp_path, decision_ms=30_000, reconnect_grace_s=30) as a:
            _FailsAcrossADrop.referee = a.referee
            _FailsAcrossADrop.loop = asyncio.get_running_loop()
            names = ["x", "a", "b"]
            tasks = await a.runners(names, [_FailsAcrossADrop, Bot, Bot], 1)
            one = dataclasses.replace(PRESETS["classic"], max_deals=1)
            record = await a.referee.run_match("drop42b", one, 3, names)
            return record, list(await asyncio.wait_for(asyncio.gather(*tasks), 60))

    record, summaries = asyncio.run(main())
    assert _FailsAcrossADrop.raised.is_set()
    assert summaries[0].errors == 1
    kinds = [(i["kind"], i["seat"]) for i in record["incidents"]]
    assert ("disconnect", 0) in kinds, kinds
    errors = [i for i in record["incidents"] if i["kind"] == "bot_error"]
    assert len(errors) == 1 and errors[0]["seat"] == 0, record["incidents"]
    assert errors[0]["detail"].startswith("the bot's decision failed (ValueError)")
    assert record["forfeits"] == []


def test_the_html_failed_line_escapes_the_bots_names(tmp_path: Path) -> None:
    """A bot's name in the HTML file's line of failed decisions is text, not markup (the
    mutant writing the line unescaped lived)."""
    lb = _board(tmp_path, [3, 0], ["<b>x</b>", "plain"])
    page = to_html(lb)
    assert "decisions failed (bot_error, no strike): &lt;b&gt;x&lt;/b&gt; 3.</p>" in page
    assert "<b>x</b> 3" not in page
