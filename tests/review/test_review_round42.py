"""Review round 42: ``Decision.failed`` and the ``bot_error`` incident, as a hostile client
uses them.

A client may set ``failed`` on every answer: the referee recorded a ``bot_error`` incident
for each (hundreds a match, in memory, the JSONL and the database), where the other
incidents a client can cause without limit are listed only up to a limit and counted in
full. Its text went into the record, the referee's log and the web as sent (an escape
sequence, a right-to-left override). The leaderboard's caption named every bot that failed
(a paragraph under the table), and the CSV, Markdown and HTML files did not say it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import sys
from pathlib import Path
from typing import Any

import grpc
from click.testing import CliRunner
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from harness import attach_in_process, get_json, web_server, welcomed_call

from arena.leaderboard import build_leaderboard
from arena.leaderboard.html import to_html
from arena.leaderboard.render import to_csv, to_markdown, to_screen
from arena.referee import Referee, RefereeConfig
from arena.referee.server import start_server
from arena.storage import Storage
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from engine.record import check_record_shape, replay

#: What the hostile client's first failed answer says: a terminal's escape sequence (a
#: window title), a right-to-left override, and 300,000 Cyrillic letters.
LOUD = "\u202e\x1b]0;pwned\x07" + "Е" * 300_000
LIMIT = 3


def _hostile_match() -> tuple[dict[str, Any], int]:
    """Classic, two deals, seed 5; ``x`` (seat 0) on a real gRPC stream, the others on
    in-process streams answering their first legal action. ``x`` answers its first legal
    action with ``failed`` set: 1st LOUD; 2nd an illegal bid (7); 3rd inside a
    ``DecisionBatch``; 4th after a stray answer to request "nope" (``failed`` set on the
    stray only); from the 5th on an empty ``failed``. The record and how many of x's
    answers to pending requests said ``failed``."""
    ref = Referee(RefereeConfig(decision_ms=20_000, max_bot_errors_recorded=LIMIT))
    rules = dataclasses.replace(PRESETS["classic"], max_deals=2)

    def others(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id)
        d.action.CopyFrom(r.view.legal_actions[0])
        ref.on_decision(ref.session(bot), d)

    async def main() -> tuple[dict[str, Any], int]:
        attach_in_process(ref, ("a", "b"), others)
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        failed = 0
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                call = await welcomed_call(ch, "tok-x", "x")
                match = asyncio.create_task(ref.run_match("h42", rules, 5, ["x", "a", "b"]))
                n = 0
                while True:
                    msg = await asyncio.wait_for(call.read(), 60)
                    assert msg is not grpc.aio.EOF
                    kind = msg.WhichOneof("kind")
                    if kind == "match_ended":
                        break
                    if kind != "decision_request":
                        continue
                    r = msg.decision_request
                    n += 1
                    d = pb.Decision(request_id=r.request_id, match_id=r.match_id)
                    d.action.CopyFrom(r.view.legal_actions[0])
                    d.failed = {1: LOUD, 2: "Boom", 3: "Batch"}.get(n, "")
                    if n == 2:
                        d.action.CopyFrom(pb.Action(bid=pb.Bid(amount=7)))
                    if n == 3:
                        await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=[d])))
                    elif n == 4:
                        stray = pb.Decision(request_id="nope", match_id=r.match_id, failed="Stray")
                        stray.action.CopyFrom(r.view.legal_actions[0])
                        await call.write(pb.BotMessage(decision=stray))
                        d.ClearField("failed")
                        await call.write(pb.BotMessage(decision=d))
                    else:
                        await call.write(pb.BotMessage(decision=d))
                    failed += n != 4
                rec = await asyncio.wait_for(match, 60)
                await call.done_writing()
                return rec, failed
        finally:
            await ref.end_streams()
            await server.stop(0.5)

    return asyncio.run(main())


def _store(tmp: Path, rec: dict[str, Any]) -> Path:
    path = tmp / "lb.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("t", name="t", fingerprint="f", total_matches=1,
                             config={"ruleset": {"name": "classic", "players": 3}},
                             bots=[("x", "r"), ("a", "r"), ("b", "r")])  # fmt: skip
        st.save_match("t", match_id=rec["match_id"], index=0, table=0, set_no=0, seed=5,
                      seats=rec["players"], record=rec, started_at=0.0,
                      finished_at=1.0)  # fmt: skip
    return path


def test_a_client_failing_every_answer_is_counted_not_listed_and_its_text_escaped(
    tmp_path: Path,
) -> None:
    """Defects: every answer with ``failed`` set was a ``bot_error`` incident (no limit),
    its text recorded and logged as sent. Now the first ``max_bot_errors_recorded`` of a
    seat are listed and the record's ``bot_errors`` counts them all, as ``wrong_requests``
    and ``disconnects`` do; the text is cut to 64 characters with what a terminal would obey
    written out. Checked the while: ``failed`` on an illegal answer is a ``bot_error`` and
    the illegal strike (its fallback played), in a ``DecisionBatch`` as alone, and on an
    answer to no pending request only a ``wrong_request``; an empty one says "no reason
    given". The record replays; ``arena replay``, the leaderboard (screen, CSV, Markdown,
    HTML) and the web bot page count the totals."""
    rec, failed = _hostile_match()
    assert failed > LIMIT + 2  # (the test means something: more than are listed)
    assert rec["bot_errors"] == [failed, 0, 0]
    errors = [i for i in rec["incidents"] if i["kind"] == "bot_error"]
    assert len(errors) == LIMIT and {i["seat"] for i in errors} == {0}
    first, boom, batch = (i["detail"] for i in errors)
    assert first.startswith("the bot's decision failed (\\u202e\\x1b]0;pwned\\x07ЕЕЕ"), first
    assert "…); its client sent its fallback" in first and len(first) < 200
    assert all(c.isprintable() for i in rec["incidents"] for c in i["detail"])
    assert boom.startswith("the bot's decision failed (Boom); its client sent its fallback")
    assert batch.startswith("the bot's decision failed (Batch)")
    # the illegal answer: its strike too, after the bot_error, and the fallback played
    kinds = [i["kind"] for i in rec["incidents"]]
    at = next(n for n, i in enumerate(rec["incidents"]) if i["detail"] == boom)
    assert rec["incidents"][at + 1]["kind"] == "illegal", kinds
    assert "strike 1 of 3" in rec["incidents"][at + 1]["detail"]
    assert kinds.count("illegal") == 1 and rec["forfeits"] == []
    by = [a["by"] for d in rec["deals"] for a in d["actions"] if a["seat"] == 0]
    assert by.count("fallback") == 1
    # the stray answer: a wrong_request, no bot_error (the count above holds it out)
    assert rec["wrong_requests"] == [1, 0, 0] and kinds.count("wrong_request") == 1
    check_record_shape(rec)
    replay(rec)

    path = tmp_path / "h42.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    from arena.cli import main as arena_main

    shown = CliRunner().invoke(arena_main, ["replay", str(path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"not strikes: {failed} bot_errors, 1 wrong_request" in shown.output, shown.output
    checked = CliRunner().invoke(arena_main, ["replay", "--check", str(path)])
    assert checked.exit_code == 0, checked.output
    # an older record (no bot_errors key) is still read, its listed incidents counted
    old = {k: v for k, v in rec.items() if k != "bot_errors"}
    check_record_shape(old)
    # a count below the incidents listed is refused, as for the other totals
    bad = {**rec, "bot_errors": [1, 0, 0]}
    path.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    refused = CliRunner().invoke(arena_main, ["replay", "--check", str(path)])
    assert refused.exit_code == 1 and "bot_errors: seat 0 counts 1, 3 are listed" in refused.output

    db = _store(tmp_path, rec)
    with Storage(db) as st:
        lb = build_leaderboard(st, "t")
    row = next(r for r in lb.rows if r.bot == "x")
    assert row.bot_errors == failed and row.strikes["other"] == failed + 1
    out = io.StringIO()
    Console(file=out, width=200).print(to_screen(lb, 200))
    words = " ".join(out.getvalue().split())  # (the caption wraps at the table's width)
    assert f"decisions failed (bot_error, no strike): x {failed}" in words
    csv_rows = [line.split(",") for line in to_csv(lb).splitlines()]
    assert csv_rows[0][-2:] == ["ruleset", "bot_errors"]
    assert [r[-1] for r in csv_rows[1:] if r[1] == "x"] == [str(failed)]
    assert f"decisions failed (bot\\_error, no strike): x {failed}." in to_markdown(lb)
    assert f"decisions failed (bot_error, no strike): x {failed}.</p>" in to_html(lb)
    with web_server(db) as server:
        page = get_json(server.url, "/api/bots/x?tournament=t")
        board = get_json(server.url, "/api/leaderboard?tournament=t")
    assert next(r for r in board["rows"] if r["bot"] == "x")["bot_errors"] == failed
    assert len(page["other_incidents"]) == LIMIT + 1
    assert page["other_incidents_not_listed"] == failed - LIMIT


def test_the_caption_names_the_bots_that_failed_most_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    """Defect: the screen's caption named every bot that failed a decision: with 40 of
    them, a paragraph of names under the table. Now the 5 that failed most, and how many
    more (the files count each)."""
    with Storage(tmp_path / "many.sqlite") as st:  # (its rows, made over below)
        st.ensure_tournament("t", name="t", fingerprint="f", total_matches=1,
                             config={"ruleset": {"name": "classic", "players": 3}},
                             bots=[("x", "r"), ("a", "r"), ("b", "r")])  # fmt: skip
        lb = build_leaderboard(st, "t")
    row = lb.rows[0]
    lb.rows = [
        dataclasses.replace(row, bot=f"bot-{i:02d}-{'n' * 40}", bot_errors=i + 1) for i in range(40)
    ]
    out = io.StringIO()
    Console(file=out, width=120).print(to_screen(lb, 120))
    text = out.getvalue()
    caption = text[text.index("decisions failed") :]
    words = " ".join(caption.split())
    assert "bot-39-" in words and "bot-35-" in words and "bot-34-" not in words
    assert "and 35 more bots (each row's bot_errors in the JSON and CSV files)" in words
    assert caption.count("\n") <= 4, caption
