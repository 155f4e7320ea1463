"""End to end over real gRPC: the referee on localhost, raw-protocol bots as processes.

Full matches to the target, concurrent and multiplexed matches, the record, and the
hidden-information audit of every message each bot received.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import BotProc, arena

from arena.cli import main as arena_cli
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, parse_action, parse_card, replay
from engine.actions import Give, Play


def _check_record(rec: dict[str, Any], *, forfeits: int = 0) -> None:
    assert rec["format"] == "thousand-arena/record/1"
    assert len(rec["forfeits"]) == forfeits
    for d in rec["deals"]:
        for a in d["actions"]:
            assert a["by"] in ("bot", "forced", "fallback")
            assert isinstance(a["ms"], int) and a["ms"] >= 0
    for inc in rec["incidents"]:
        assert inc["kind"] in (
            "timeout", "illegal", "malformed", "wrong_request", "disconnect", "forfeit",
        )  # fmt: skip
        assert {"seat", "deal", "detail"} <= inc.keys()
    clean = rec if not rec["forfeits"] else {**rec, "result": rec["rules_result"]}
    g = replay(clean)
    assert list(g.scores) == rec["result"]["scores"]


def test_full_1001_match_to_target_with_record_file(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with arena(tmp_path, record_dir=tmp_path / "rec") as a:
            procs = await a.bots(["ann", "bob", "cid"], matches=1)
            rec = await a.referee.run_match("m-1001", "1001", 5, ["ann", "bob", "cid"])
            for p in procs:
                s = await p.finish()
                assert s["status"] == "OK" and s["matches"] == 1 and not s["rejected"]
            return rec

    rec = asyncio.run(main())
    _check_record(rec)
    assert rec["result"]["reason"] == "target"
    assert max(rec["result"]["scores"]) >= 1001
    assert rec["incidents"] == [] and rec["match_id"] == "m-1001"
    by = Counter(a["by"] for d in rec["deals"] for a in d["actions"])
    assert by["bot"] > 0 and by["forced"] > 0 and by["fallback"] == 0
    lines = [json.loads(x) for x in (tmp_path / "rec" / "m-1001.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "start" and lines[0]["seed"] == 5
    assert lines[-1]["type"] == "end" and lines[-1]["record"] == rec
    n_actions = sum(len(d["actions"]) for d in rec["deals"])
    assert sum(1 for x in lines if x["type"] == "action") == n_actions


def test_a_record_file_is_never_appended_to(tmp_path: Path) -> None:
    """Defect: ``<match_id>.jsonl`` was opened for appending, so a second ``arena serve``
    run into the same directory (its match ids start again) wrote a second match into the
    first one's file. Now the second gets ``<match_id>.2.jsonl``; each replays alone."""
    short = dataclasses.replace(PRESETS["classic"], max_deals=1)

    async def main() -> list[dict[str, Any]]:
        async with arena(tmp_path, record_dir=tmp_path / "rec") as a:
            await a.bots(["ann", "bob", "cid"])
            return [
                await a.referee.run_match("m00000", short, seed, ["ann", "bob", "cid"])
                for seed in (1, 2)
            ]

    recs = asyncio.run(main())
    files = sorted(p.name for p in (tmp_path / "rec").iterdir())
    assert files == ["m00000.2.jsonl", "m00000.jsonl"]
    for name, rec in zip(files[::-1], recs, strict=True):
        lines = (tmp_path / "rec" / name).read_text().splitlines()
        assert sum(json.loads(x)["type"] == "start" for x in lines) == 1
        assert json.loads(lines[-1])["record"] == rec
        r = CliRunner().invoke(arena_cli, ["replay", "--check", str(tmp_path / "rec" / name)])
        assert r.exit_code == 0, r.output


def test_full_classic_match_to_target(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with arena(tmp_path) as a:
            procs = await a.bots(["ann", "bob", "cid"], matches=1)
            rec = await a.referee.run_match("m-classic", "classic", 25, ["ann", "bob", "cid"])
            for p in procs:
                assert (await p.finish())["status"] == "OK"
            return rec

    rec = asyncio.run(main())
    _check_record(rec)
    assert rec["result"]["reason"] == "target" and rec["result"]["winner"] is not None
    assert rec["result"]["scores"][rec["result"]["winner"]] >= 1000


def test_concurrent_and_multiplexed_matches(tmp_path: Path) -> None:
    """Two 3-player matches and one 4-player match at once; ann and bob sit in all three."""
    rs = dataclasses.replace(PRESETS["1001"], max_deals=3)
    rs4 = dataclasses.replace(PRESETS["1001-4p"], max_deals=4)

    async def main() -> list[dict[str, Any]]:
        async with arena(tmp_path) as a:
            names = ["ann", "bob", "cid", "dan", "eve"]
            await a.bots(names)
            recs = await asyncio.gather(
                a.referee.run_match("x1", rs, 1, ["ann", "bob", "cid"]),
                a.referee.run_match("x2", rs, 2, ["dan", "ann", "bob"]),
                a.referee.run_match("x3", rs4, 3, ["bob", "eve", "ann", "cid"]),
            )
            assert a.referee.running_matches() == []
            return list(recs)

    for rec in asyncio.run(main()):
        _check_record(rec)
        assert rec["incidents"] == []
        assert rec["result"]["reason"] == "max_deals"


# ----------------------------------------------------------------------------- audit


def _visible_moments(deal: dict[str, Any], seat: int, talon_visible: bool) -> dict[int, int]:
    """card -> the number of the deal's actions after which ``seat`` may know it."""
    when: dict[int, int] = {}
    for c in deal["hands"][seat]:
        when[int(parse_card(c))] = 0
    actions = [(a["seat"], parse_action(a["action"])) for a in deal["actions"]]
    # The talon shows when the auction ends: at the first action that is not a bid/pass.
    end_of_bidding = next(
        (i for i, (_, a) in enumerate(actions) if type(a).__name__ not in ("Bid", "Pass")),
        len(actions),
    )
    declarer = actions[end_of_bidding][0] if end_of_bidding < len(actions) else None
    for c in deal["talon"]:
        if talon_visible or seat == declarer:
            when.setdefault(int(parse_card(c)), end_of_bidding)
    for i, (_s, a) in enumerate(actions):
        if isinstance(a, Give) and a.to == seat:
            when.setdefault(int(a.card), i + 1)
        if isinstance(a, Play):
            when.setdefault(int(a.card), i + 1)
    return when


def _cards_in(msg: Any) -> set[int]:
    """Every Card message anywhere inside ``msg``."""
    out: set[int] = set()
    if isinstance(msg, pb.Card):
        if msg.suit and msg.rank:
            out.add((msg.suit - 1) * 6 + msg.rank - 1)
        return out
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        items = value if fd.is_repeated else [value]
        for v in items:
            out |= _cards_in(v)
    return out


def _audit(bot: BotProc, recs: dict[str, dict[str, Any]], sources: Counter[str]) -> int:
    """Walk the bot's messages in order; each card it was shown must be visible by then.

    Nor may anything else tell what another seat holds: another seat's action comes without
    its source (a forced move means the actor had nothing else to play), and the bot's own
    request ids count its own requests, 1, 2, 3, ... (gaps in a match-wide count would show
    the others' forced moves). ``sources`` counts the sources of the bot's own actions.
    """
    checked = 0
    pos: dict[str, tuple[int, int]] = {}  # match -> (deal, actions seen in this deal)
    seats: dict[str, int] = {}
    asked: dict[str, int] = {}
    for msg in bot.messages():
        for ev in msg.events:
            deal, n = pos[ev.match_id]
            kind = ev.WhichOneof("kind")
            if kind == "deal_started":
                pos[ev.match_id] = (ev.deal_started, 0)
            elif kind == "action":
                pos[ev.match_id] = (deal, n + 1)
                _check(ev, recs[ev.match_id], seats[ev.match_id], deal, n + 1)
                if ev.action.seat == seats[ev.match_id]:
                    assert ev.source != pb.ACTION_SOURCE_UNSPECIFIED, ev
                    sources[pb.ActionSource.Name(ev.source)] += 1
                else:
                    assert ev.source == pb.ACTION_SOURCE_UNSPECIFIED, ev
                checked += 1
        kind = msg.WhichOneof("kind")
        if kind in (None, "welcome", "decision_rejected"):
            continue
        body = getattr(msg, kind)
        mid = body.match_id
        if kind == "match_started":
            seats[mid] = body.seat
            pos[mid] = (0, 0)
        if kind == "decision_request":
            asked[mid] = asked.get(mid, 0) + 1
            assert body.request_id == str(asked[mid]), (mid, body.request_id, asked[mid])
        deal, n = pos[mid]
        if kind == "match_ended":
            continue  # the final view carries no hand, trick or talon (checked below)
        assert body.view.deal_number == deal
        _check(body, recs[mid], seats[mid], deal, n)
        checked += 1
    return checked


def _check(msg: Any, rec: dict[str, Any], seat: int, deal: int, n: int) -> None:
    when = _visible_moments(rec["deals"][deal], seat, rec["ruleset"]["talon_visible"])
    for c in _cards_in(msg):
        assert c in when and when[c] <= n, (
            f"seat {seat} was shown card {c} in deal {deal} after {n} actions, visible "
            f"only after {when.get(c)}: {msg}"
        )


@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
def test_hidden_information_audit(tmp_path: Path, batch: bool) -> None:
    """Capture every message to every bot over several matches: no card ever appears in a
    bot's messages before that bot may see it (own hand, the talon once shown, cards given
    to it, cards played), and the final views show no cards at all. With ``batch`` the bots
    ask for the "batch" feature: the messages that come inside batches pass the same audit
    (a match's first request always shares a batch with its MatchStarted)."""
    classic = dataclasses.replace(PRESETS["classic"], max_deals=8)
    hidden_talon = dataclasses.replace(PRESETS["classic"], max_deals=6, talon_visible=False)
    four = dataclasses.replace(PRESETS["1001-4p"], max_deals=8)

    async def main() -> tuple[list[BotProc], dict[str, dict[str, Any]]]:
        async with arena(tmp_path) as a:
            names = ["ann", "bob", "cid", "dan"]
            args = ("--batch",) if batch else ()
            procs = await a.bots(names, capture=True, args=args)
            recs = await asyncio.gather(
                a.referee.run_match("a1", "1001", 11, ["ann", "bob", "cid"]),
                a.referee.run_match("a2", classic, 12, ["dan", "ann", "bob"]),
                a.referee.run_match("a3", hidden_talon, 13, ["cid", "dan", "ann"]),
                a.referee.run_match("a4", four, 14, ["bob", "cid", "dan", "ann"]),
            )
            await asyncio.sleep(0.2)  # the last messages reach the capture files
            return procs, {r["match_id"]: r for r in recs}

    procs, recs = asyncio.run(main())
    total = 0
    sources: Counter[str] = Counter()
    for p in procs:
        total += _audit(p, recs, sources)
        for msg in p.messages():
            if msg.WhichOneof("kind") == "match_ended":
                assert not _cards_in(msg.match_ended.view)
            # The seed never goes out.
            assert b"seed" not in msg.SerializeToString()
        assert (p.batched() > 0) is batch, (p.name, p.batched())
    assert total > 1000
    # Each bot is still told how its own actions were chosen.
    assert sources["ACTION_SOURCE_BOT"] > 100 and sources["ACTION_SOURCE_FORCED"] > 10, sources


def test_run_match_refuses_bad_seating(tmp_path: Path) -> None:
    async def main() -> None:
        async with arena(tmp_path) as a:
            a.referee.add_bot("ann", "t1")
            a.referee.add_bot("bob", "t2")
            with pytest.raises(KeyError, match="zed"):
                await a.referee.run_match("m", "1001", 1, ["ann", "bob", "zed"])
            with pytest.raises(ValueError, match="one seat"):
                await a.referee.run_match("m", "1001", 1, ["ann", "bob", "ann"])
            assert await a.referee.wait_for_bots(["ann"], 0.2) == ["ann"]

    asyncio.run(main())


def test_bot_not_connected_forfeits_after_grace(tmp_path: Path) -> None:
    rs = dataclasses.replace(PRESETS["1001"], max_deals=2)

    async def main() -> dict[str, Any]:
        async with arena(tmp_path, reconnect_grace_s=0.3) as a:
            await a.bots(["ann", "bob"])
            a.referee.add_bot("ghost", "tok-ghost")
            return await a.referee.run_match("g", rs, 4, ["ann", "ghost", "bob"])

    rec = asyncio.run(main())
    _check_record(rec, forfeits=1)
    kinds = [i["kind"] for i in rec["incidents"]]
    assert kinds[0] == "disconnect" and "forfeit" in kinds
    # Forfeited at the grace's end, not by strikes: no request of its timed out (each would
    # have waited its limit and bank, 11 s). (This was a bound on the match's time, 20 s.)
    ghost = [i for i in rec["incidents"] if i["seat"] == 1]
    assert [i["kind"] for i in ghost] == ["disconnect", "forfeit"], ghost
    assert "disconnected for more than 0.3 s" in ghost[1]["detail"], ghost
    assert rec["forfeits"] == [1] and rec["result"]["places"][1] == 3
