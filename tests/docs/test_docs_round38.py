"""Round 38: what the docs show a reader (a session's messages, an example bot's play, the
numbers they give) against what the code sends, plays and uses today.

Found and fixed: writing-a-bot.md's ``Careful`` example, the one that shows how to read
``self.deadline``, ended in ``...`` and returned ``None``: pasted and tried as the guide
says (``arena-bot try mybot.py:Careful --vs random -n 3``), every one of its cards was a
``malformed`` incident (11,934 in three matches) and ``try`` exited 1. It returns a legal
card now, searching until its budget is spent.

Pinned, as run and found right: protocol.md's example session (the Welcome, the
MatchStarted at ``seq`` 0, request ids from "1", the default limit and bank, an illegal
give refused with the words and the strike counts it quotes, events numbered from 1 with
no gap, a deal's end followed by ``deal_started: 1`` in a message with no kind, the
places of ``MatchEnded``), every message and field protocol.md names against the proto,
the numbers protocol.md and referee.md give against the code's constants, the names the
guide takes from ``sdk`` against ``sdk.__all__`` and their signatures, the rehearsal of
``arena serve --port 0`` with ``port N`` on its own line, and every route and key of
web.md's JSON API on a small stored tournament.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sdk import Bot
from tests.docs.test_docs_round35 import DOCS, ROOT, _joined, _text

# --- the fix: the guide's Careful bot plays ----------------------------------------------


def _careful_block() -> str:
    guide = _text("writing-a-bot.md")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    return next(b for b in blocks if "class Careful(Bot):" in b)


def test_the_guides_careful_bot_plays_its_matches_without_an_incident(tmp_path: Path) -> None:
    """Defect: the ``Careful`` example (how to read ``self.deadline``) ended in ``...`` and
    returned None: tried as the guide says, every card it was asked for was a malformed
    answer, and ``arena-bot try`` exited 1 naming thousands of incidents."""
    (tmp_path / "careful.py").write_text(_careful_block(), encoding="utf-8")
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sdk.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), "try", "careful.py:Careful", "--vs", "random",
         "-n", "3", "--max-deals", "4"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if "│ Careful" in line)
    assert row.split("│")[-2].strip() == "0", row  # the incidents column


# --- protocol.md's example session, played against the referee ----------------------------


class _Passer38(Bot):
    """Bot's defaults: passes, plays its first legal card, names the bid as contract."""


def _session(seed: int) -> tuple[list[Any], int]:
    """A raw client at seat 2 of a classic match of 2 deals (its two opponents pass),
    answering as protocol.md's example does: a give to seat 7 at its first passing
    request, the first legal action otherwise, a bid of 105 first. Returns every message it
    got and its seat."""
    import grpc

    from arena.referee import Referee, RefereeConfig, start_server
    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc
    from engine import load_ruleset
    from sdk.client import run_async

    rules = dataclasses.replace(load_ruleset("classic"), max_deals=2)
    got: list[Any] = []

    async def raw(port: int) -> None:
        out: asyncio.Queue[Any] = asyncio.Queue()
        await out.put(pb.BotMessage(hello=pb.Hello(bot_name="mybot", protocol_version=1,
                                                   features=["batch"])))  # fmt: skip

        async def sending() -> Any:
            while (m := await out.get()) is not None:
                yield m

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = pb_grpc.ArenaStub(channel).Play(
                sending(), metadata=[("authorization", "Bearer token-mybot")]
            )
            gave = False
            async for msg in call:
                inner = list(msg.batch.messages) if msg.WhichOneof("kind") == "batch" else [msg]
                for m in inner:
                    got.append(m)
                    kind = m.WhichOneof("kind")
                    if kind == "match_ended":
                        await out.put(None)
                    if kind != "decision_request":
                        continue
                    req = m.decision_request
                    legal = list(req.view.legal_actions)
                    if req.request_id == "1":  # first without its match id (refused)
                        await out.put(pb.BotMessage(decision=pb.Decision(
                            request_id="1", action=legal[-1])))  # fmt: skip
                        await out.put(pb.BotMessage(decision=pb.Decision(
                            request_id="9", match_id=req.match_id, action=legal[-1])))  # fmt: skip
                    action = legal[0]
                    bids = [a for a in legal if a.WhichOneof("kind") == "bid"]
                    if bids and bids[0].bid.amount == 105:
                        action = bids[0]
                    if req.view.phase == pb.PHASE_PASSING and not gave:
                        gave = True
                        action = pb.Action(give=pb.Give(card=req.view.hand[0], to_seat=7))
                    await out.put(pb.BotMessage(decision=pb.Decision(
                        request_id=req.request_id, match_id=req.match_id, action=action)))  # fmt: skip

    async def main() -> None:
        ref = Referee(RefereeConfig())
        names = ("ann", "bob", "mybot")
        for name in names:
            ref.add_bot(name, f"token-{name}")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            tasks = [
                asyncio.create_task(run_async(_Passer38, f"127.0.0.1:{port}", f"token-{n}",
                                              matches=1, retry_for=30))  # fmt: skip
                for n in names[:2]
            ]
            tasks.append(asyncio.create_task(raw(port)))
            assert not await ref.wait_for_bots(list(names), timeout=30)
            await ref.run_match("m38", rules, seed=seed, seats=list(names))
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    asyncio.run(main())
    return got, 2


def test_protocol_mds_example_session_is_what_the_referee_sends() -> None:
    """Pinned: each message of protocol.md's example, as a raw client at seat 2 gets it
    from a referee of the defaults (dealer 2, so seat 0 holds classic's 100 and seat 1
    speaks first, as there)."""
    import sdk
    from arena.v1 import arena_pb2 as pb
    from engine.game import drawn_dealer

    doc = _joined(_text("protocol.md"))
    example = _text("protocol.md").split("## Example", 1)[1]
    seed = next(s for s in range(100) if drawn_dealer(s, 3) == 2)
    got, seat = _session(seed)
    kinds = [m.WhichOneof("kind") for m in got]

    welcome = got[0].welcome
    assert kinds[0] == "welcome"
    assert (welcome.bot_name, welcome.server_version, welcome.protocol_version) == (
        "mybot", sdk.__version__, 1)  # fmt: skip
    assert list(welcome.features) == ["batch"]
    assert f'server_version: "{sdk.__version__}", protocol_version: 1,' in example
    assert 'features: ["batch"]}' in example

    started = got[kinds.index("match_started")].match_started
    assert (started.seat, started.seq, started.view.deal_number) == (seat, 0, 0)
    assert started.view.phase == pb.PHASE_BIDDING and started.view.to_act == 1
    assert "view: {deal_number: 0, phase: BIDDING, to_act: 1, hand: [...]}}" in example

    first = got[kinds.index("decision_request")]
    req = first.decision_request
    assert (req.request_id, req.time_limit_ms, req.time_bank_ms) == ("1", 1000, 10000)
    assert 'DecisionRequest{request_id: "1",' in example
    assert "time_limit_ms: 1000, time_bank_ms: 10000}" in example
    assert [e.seq for e in first.events] == [1]  # seat 1 spoke (a pass here, a bid there)
    assert first.events[0].action.seat == 1
    assert "events: [{seq: 1, action: {seat: 1," in example

    wrong, early, rejected = (got[i].decision_rejected for i, k in enumerate(kinds)
                              if k == "decision_rejected")  # fmt: skip
    # an answer without match_id, and one for a request not sent yet
    assert wrong.incident == early.incident == pb.INCIDENT_WRONG_REQUEST
    assert wrong.message == "you have no seat in a running match ''"
    assert not wrong.legal_actions and wrong.strikes == 0
    assert early.message.startswith("decision 'pass' for request '9' refused: request '9' has "
                                    "not been sent to this seat (the pending request is '1')")
    assert list(early.legal_actions) == list(first.decision_request.view.legal_actions)
    assert early.strikes == 0
    assert "an answer without `match_id` is a `WRONG_REQUEST`" in doc
    assert ("or a match you do not sit in (the `message` says which, and names your pending "
            "request in the match it names, if any); `legal_actions` are those of that "
            "pending request") in doc
    assert rejected.incident == pb.INCIDENT_ILLEGAL
    assert (rejected.request_id, rejected.strikes, rejected.strikes_allowed) == ("2", 1, 3)
    assert re.match(r"illegal action 'give \S+ to 7' by seat 2: .*; legal: give \S+ to 0, ",
                    rejected.message), rejected.message  # fmt: skip
    assert rejected.fallback.WhichOneof("kind") == "give"
    assert 'bot ← DecisionRejected{request_id: "2", incident: ILLEGAL, message: "illegal' in (
        example)  # fmt: skip
    assert "strikes: 1, strikes_allowed: 3}" in example

    events = [e for m in got for e in m.events]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # from 1, no gap
    assert "`seq` counts the events of one match by one from 1, with no gap" in doc
    own = [e for e in events if e.WhichOneof("kind") == "action" and e.action.seat == seat]
    assert {e.source for e in own} >= {pb.ACTION_SOURCE_BOT, pb.ACTION_SOURCE_FALLBACK}
    assert all(e.source == pb.ACTION_SOURCE_UNSPECIFIED for e in events
               if e.WhichOneof("kind") == "action" and e.action.seat != seat)  # fmt: skip
    # the first deal's end and the second's start, in a message with no kind
    ended = next(i for i, e in enumerate(events) if e.WhichOneof("kind") == "deal_ended")
    assert events[ended + 1].WhichOneof("kind") == "deal_started"
    assert events[ended + 1].deal_started == 1
    carrier = next(m for m in got if any(e.WhichOneof("kind") == "deal_started" for e in m.events))
    assert carrier.WhichOneof("kind") is None
    assert "{seq: 33, deal_ended: {...}}, {seq: 34, deal_started: 1}]" in example
    # seq 33 there: 4 bids and passes, the talon, 2 gives, a contract and 24 cards before
    deal = events[:ended]
    texts = [e.action.action.WhichOneof("kind") if e.WhichOneof("kind") == "action" else
             e.WhichOneof("kind") for e in deal]  # fmt: skip
    assert texts.count("talon_taken") == 1 and texts.count("contract") == 1
    assert (texts.count("give"), texts.count("play")) == (2, 24)
    auction = texts.index("talon_taken")
    assert set(texts[:auction]) <= {"bid", "pass"}
    assert len(deal) - auction + 4 == 33 - 1  # the example's auction spoke 4 times
    assert "{seq: 5, talon_taken: {seat: 2," in example

    end = got[kinds.index("match_ended")].match_ended
    assert end.match_id == "m38" and len(end.result.places) == 3
    assert end.view.phase == pb.PHASE_GAME_OVER
    assert end.result.reason == "max_deals" and end.result.deals == 2
