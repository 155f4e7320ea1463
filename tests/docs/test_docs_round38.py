"""Round 38: what the docs show a reader (a session's messages, an example bot's play, a
record excerpt, a message quoted, the numbers they give) against what the code sends,
plays, writes and uses today, run for real with small sizes in temp dirs.

Found and fixed: writing-a-bot.md's ``Careful`` example (how to read ``self.deadline``)
ended in ``...`` and returned ``None``: tried as the guide says, every card was a
malformed answer and ``arena-bot try`` exited 1; it returns a legal card now. The record
examples of architecture.md and record-format.md showed deals without ``outcome``, which
the engine writes in every scored deal. protocol.md's ``WRONG_REQUEST`` row said the
refusal names the bot's pending request also for a match it does not sit in (an answer
without ``match_id`` among them): it names none and carries no legal actions there.
``arena serve --db NEW`` that stored no match (or could not start: a busy port) said
"no match stored: NEW is left as it was" and left an empty database of its own making
there: it removes it now (referee.md says so).

Pinned, as run and found right: protocol.md's example session (Welcome, MatchStarted at
``seq`` 0, request ids from "1", the default limit and bank, an illegal give refused with
the quoted words and strike counts, events from 1 without a gap, ``deal_started: 1`` in a
message with no kind), GetInfo, health and three refusals of a stream; the limits and
defaults protocol.md and referee.md state against the code's constants; the guide's SDK
names, signatures and fields against ``sdk``; three of its quotes of what ``arena-bot
try`` says of a misbehaving bot; its rehearsal on ``--port 0``; every key and error of
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
from pathlib import Path
from typing import Any

import pytest

from sdk import Bot
from tests.docs.test_docs_round35 import ROOT, _joined, _text
from tests.support.spawn import readline_within

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
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sdk.cli import main; main()"
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
                    answer = pb.Decision(request_id=req.request_id, match_id=req.match_id,
                                         action=action)  # fmt: skip
                    await out.put(pb.BotMessage(decision=answer))

    async def main() -> None:
        ref = Referee(RefereeConfig())
        names = ("ann", "bob", "mybot")
        for name in names:
            ref.add_bot(name, f"token-{name}")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            tasks = [
                asyncio.create_task(
                    run_async(_Passer38, f"127.0.0.1:{port}", f"token-{n}", matches=1, retry_for=30)
                )
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
    assert list(welcome.features) == ["batch", "results_once", "deal_once", "ahead"]
    assert f'server_version: "{sdk.__version__}", protocol_version: 1,' in example
    assert 'features: ["batch", "results_once", "deal_once", "ahead"]}' in example

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
    assert early.message.startswith(
        "decision 'pass' for request '9' refused: request '9' has "
        "not been sent to this seat (the pending request is '1')"
    )
    assert list(early.legal_actions) == list(first.decision_request.view.legal_actions)
    assert early.strikes == 0
    assert "an answer without `match_id` is a `WRONG_REQUEST`" in doc
    assert (
        "or a match you do not sit in (the `message` says which, and names your pending "
        "request in the match it names, if any); `legal_actions` are those of that "
        "pending request"
    ) in doc
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


# --- web.md's JSON API, fetched -------------------------------------------------------------


def _row(endpoint: str) -> set[str]:
    row = next(line for line in _text("web.md").splitlines()
               if line.startswith(f"| `{endpoint}` |"))  # fmt: skip
    return set(re.findall(r"`(\w+)`", row))


def test_every_key_the_json_api_serves_is_named_in_web_md(tmp_path: Path) -> None:
    """Pinned: each route of web.md's table answers, and every key of its answer (and of
    the rows, matches, steps and views in it) is named in its row or in the list of the
    deals JSON below the table; the errors quoted are the server's words."""
    import urllib.error

    from arena.web.demo import make_demo_db
    from tests.support.harness import web_server

    db = tmp_path / "demo.sqlite"
    make_demo_db(db, matches=3, max_deals=2)

    def get(path: str) -> Any:
        with urllib.request.urlopen(server.url + path, timeout=10) as r:
            return json.loads(r.read().decode())

    def error(path: str) -> tuple[int, str]:
        try:
            urllib.request.urlopen(server.url + path, timeout=10)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode())["error"]
        raise AssertionError(f"{path} answered 200")

    with web_server(db) as server:
        board = get("api/leaderboard")
        bot = get("api/bots/bold?limit=2")
        matches = get("api/matches?limit=2")
        match_id = matches["matches"][0]["match_id"]
        summary = get(f"api/matches/{match_id}")
        record = get(f"api/matches/{match_id}/record")
        face_up = get(f"api/matches/{match_id}/deals/0")
        seat = get(f"api/matches/{match_id}/deals/0?seat=1")
        errors = [error(f"api/matches/{match_id}/deals/abc"), error("api/bots/bold?limit=0"),
                  error("api/bots/bold?before=-1"),
                  error("api/matches?limit=9223372036854775808")]  # fmt: skip
    tables = _row("/api/tournaments")
    named = _row("/api/leaderboard?tournament=T") | tables
    assert not sorted(set(board) - named)
    assert not sorted(set(board["history"]["bold"][0]) - named)
    bots = _row("/api/bots/<name>?tournament=T&limit=N&before=I") | tables
    assert not sorted(set(bot) - bots) and not sorted(set(bot["history"][0]) - named)
    assert not sorted(set(matches) - _row("/api/matches?tournament=T&bot=B&limit=N&before=I")
                      - tables)  # fmt: skip
    one = _row("/api/matches/<id>")
    assert not sorted(set(summary) - one)
    assert not sorted(set(summary["stored"]) - one)
    assert "format" in record and "deals" in record  # the stored record, as record-format.md

    deals = _text("web.md").split("The JSON of `/api/matches/<id>/deals/<k>`", 1)[1]
    deals = deals.split("Every `200` of the API", 1)[0]
    listed = set(re.findall(r"`(\w+)`", deals)) | _row("/api/matches/<id>/deals/<k>?seat=S")
    assert not sorted(set(face_up) - listed) and seat["summary"] is None
    assert not sorted(set(face_up["summary"]) - listed)
    assert set(summary["deals"][0]) == set(face_up["summary"])  # "as the summary of /deals/<k>"
    steps = face_up["steps"]
    assert steps[0]["action"] is None and steps[-1]["view"]["phase"] == "DEAL_OVER"
    for step in (steps[0], steps[-1], seat["steps"][1]):
        assert not sorted(set(step) - listed)
        assert not sorted(set(step["view"]) - listed)
    assert not sorted(set(steps[-1]["view"]["result"]) - listed)
    assert not sorted(set(steps[1]["action"]) - listed)

    doc = _joined(_text("web.md"))
    for code, words in errors:
        assert code == 400
        # (the doc's match has 4 deals)
        assert re.sub(r"from 0 to \d+ \(the deal's", "from 0 to 3 (the deal's", words) in doc


# --- writing-a-bot.md's names, as a bot author on another machine imports them --------------


def _listed(text: str, after: str) -> list[str]:
    """The backquoted names in the parenthesis that follows ``after``."""
    tail = text.split(after, 1)[1]
    depth = 0
    for end, ch in enumerate(tail):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return re.findall(r"`(\w+)`", tail[:end])
    raise AssertionError(f"no closing parenthesis after {after!r}")


def test_every_sdk_name_the_guide_uses_is_sdks_with_that_signature() -> None:
    """Pinned: each ``sdk.X`` the guide names is in ``sdk.__all__`` (or a module of the
    SDK), ``sdk.run``'s keywords and defaults are those the guide lists, and the fields it
    names of ``RunSummary``, ``LocalMatch``, ``DealResult``, ``GameResult``, ``Trick`` and
    ``PlayerView`` are theirs."""
    import importlib

    import sdk
    import sdk.client
    import sdk.hand

    guide = _joined(_text("writing-a-bot.md"))
    used = set(re.findall(r"\bsdk\.([A-Za-z_]\w*)", guide))
    modules = {n for n in used if importlib.util.find_spec(f"sdk.{n}") is not None}
    assert {"client", "hand"} <= modules
    assert not sorted(used - modules - set(sdk.__all__))
    for name in (
        "Bid",
        "Pass",
        "Give",
        "Contract",
        "Concede",
        "ThrowIn",
        "Play",
        "Card",
        "PlayerView",
        "DealResult",
        "GameResult",
        "HiddenGive",
        "play_local",
    ):
        assert name in sdk.__all__  # fmt: skip
    assert {"bot_calls_running", "run_async"} <= set(dir(sdk.client))

    run = inspect.signature(sdk.run)
    assert run.parameters == inspect.signature(sdk.client.run_async).parameters
    said: dict[str, str] = {}
    for key, value in re.findall(
        r"`(\w+)=([\w.]+|\"[^\"]*\")`", guide.split("From Python:", 1)[1].split("To rehearse", 1)[0]
    ):
        said.setdefault(key, value)  # (the first: "`--once` is `matches=1`" follows)
    assert set(said) == {"tls", "ca", "matches", "name", "retry_for", "workers", "spec"}
    for key, value in said.items():
        if key != "spec":
            assert repr(run.parameters[key].default) == value, key
    assert run.parameters["spec"].kind is inspect.Parameter.KEYWORD_ONLY
    local = inspect.signature(sdk.play_local).parameters
    assert {"decision_ms", "time_bank_ms", "timed_seats", "strict"} <= set(local)
    assert str(inspect.signature(sdk.Play)) == "(card: 'Card', declare: 'bool' = False) -> None"
    assert "`Play(card, declare=False)`" in guide

    def fields(cls: type) -> set[str]:
        return (
            {f.name for f in dataclasses.fields(cls)}
            if dataclasses.is_dataclass(cls)
            else (
                set(getattr(cls, "_fields", ())) or {n for n in dir(cls) if not n.startswith("_")}
            )
        )

    assert _listed(guide, "returns an `sdk.RunSummary` (") == [
        f.name for f in dataclasses.fields(sdk.RunSummary)]  # fmt: skip
    local_match = guide.split("`play_local(...)` returns an `sdk.LocalMatch`: ", 1)[1]
    local_match = local_match.split("shortcuts", 1)[0]
    assert fields(sdk.LocalMatch) <= set(re.findall(r"`(\w+)`", local_match))
    assert {"scores", "places"} <= set(dir(sdk.LocalMatch))
    deal = guide.split("An `sdk.DealResult` has ", 1)[1].split(";", 1)[0]
    assert set(re.findall(r"`(\w+)`", deal)) == fields(sdk.DealResult)
    game = guide.split("an `sdk.GameResult` has ", 1)[1].split("(`target`", 1)[0]
    assert set(re.findall(r"`(\w+)`", game)) - {"None"} == fields(sdk.GameResult)
    assert {"leader", "cards", "winner"} <= fields(sdk.Trick)
    view = guide.split("`view` (an `sdk.PlayerView`, frozen) holds: ", 1)[1].split(
        "Besides the view", 1)[0]  # fmt: skip
    named = set(re.findall(r"`(\w+)`", view))
    assert not sorted(fields(sdk.PlayerView) - named)
    helpers = guide.split("Helpers for common questions are in `sdk.hand`: ", 1)[1]
    helpers = helpers.split("### The game 1001", 1)[0]
    assert all(callable(getattr(sdk.hand, n)) for n in re.findall(r"`(\w+)`", helpers))


# --- the numbers protocol.md and referee.md state, against the code's --------------------


def test_the_limits_and_defaults_protocol_md_and_referee_md_state_are_the_codes() -> None:
    """Pinned: each default or limit the two pages give, as the code holds it."""
    from arena import protocol
    from arena.referee import RefereeConfig, core, server, sessions
    from arena.referee.lag import LoopLag
    from arena.referee.match import MAX_ID_CHARS
    from sdk import client

    proto_md = _joined(_text("protocol.md"))
    referee_md = _joined(_text("referee.md"))
    config = RefereeConfig()
    options = dict(server._OPTIONS)
    checks = [
        (proto_md, "a token is at most 4096 characters", protocol.MAX_TOKEN == 4096),
        (
            proto_md,
            "More than 30 streams of one token let in within 10 s",
            (config.reconnect_limit, config.flood_window_s) == (30, 10.0),
        ),
        (
            proto_md,
            "One token may hold at most 16 `Play` calls open at once",
            core.MAX_OPEN_STREAMS_PER_BOT == 16,
        ),
        (proto_md, "`retry-after-ms: 1000`", core.OPEN_STREAMS_RETRY_MS == 1000),
        (
            proto_md,
            "The one saying Hello then has 1 s left to say it",
            core.HELLO_AFTER_RIVAL_S == 1.0,
        ),
        (proto_md, "or nothing within 10 s, closes the stream", core.HELLO_TIMEOUT_S == 10.0),
        (
            proto_md,
            "A message over 1 MiB is refused by gRPC",
            options["grpc.max_receive_message_length"] == 1 << 20,
        ),
        (
            proto_md,
            "`grpc.keepalive_time_ms` 10000, `grpc.keepalive_timeout_ms` 5000, and "
            "`grpc.http2.ping_timeout_ms` 5000",
            (
                options["grpc.keepalive_time_ms"],
                options["grpc.keepalive_timeout_ms"],
                options["grpc.http2.ping_timeout_ms"],
            )
            == (10_000, 5_000, 5_000),
        ),
        (
            proto_md,
            "takes a client's pings at most every 5 s while no data flows",
            options["grpc.http2.min_ping_interval_without_data_ms"] == 5_000,
        ),
        (proto_md, "ping every 10 s as the SDK does", client._KEEPALIVE_MS == 10_000),
        (proto_md, "up to every 320 s", client._MAX_KEEPALIVE_MS == 320_000),
        (
            proto_md,
            "the SDK and the Node.js example take up to 64 MiB",
            client._MAX_RECEIVE_BYTES == 64 << 20,
        ),
        (proto_md, "over the 67108864 bytes this bot reads", client._MAX_RECEIVE_BYTES == 67108864),
        (
            proto_md,
            "with more than 1000 waiting (the referee's `max_queued`)",
            config.max_queued == 1000,
        ),
        (
            proto_md,
            "You have `time_limit_ms` (the referee's `decision_ms`, 1000 by default)",
            config.decision_ms == 1000,
        ),
        (proto_md, "(`time_bank_ms`, 10 000 ms at the start)", config.time_bank_ms == 10_000),
        (
            proto_md,
            "a stall is counted from 5 ms on, up to 15 ms short",
            (LoopLag.TOLERANCE, LoopLag.PERIOD + LoopLag.TOLERANCE) == (0.005, 0.015),
        ),
        (
            proto_md,
            "at most 20 of those (`max_wrong_recorded`) are answered per 10 s",
            config.max_wrong_recorded == 20,
        ),
        (proto_md, "At `strikes_allowed` strikes (3 by default)", config.max_strikes == 3),
        (
            proto_md,
            "more than 1000 messages answering no pending request within 10 s",
            config.flood_limit == 1000,
        ),
        (proto_md, "only its KiB past 512 bytes a decision", core.ANSWER_BYTES == 512),
        (proto_md, 'cut to 64 characters (marked "…") when longer', MAX_ID_CHARS == 64),
        (
            proto_md,
            "at most 64 and at most 1 MiB of them",
            (sessions.MAX_BATCH, sessions.MAX_BATCH_BYTES) == (64, 1 << 20),
        ),
        (
            proto_md,
            "a `DecisionBatch{decisions}` of up to 256 decisions",
            core.MAX_DECISION_BATCH == 256,
        ),
        (proto_md, "The latest 64 such ends are kept per bot", sessions.MISSED_KEPT == 64),
        (proto_md, "(5 s by default, `arena serve --grace-s`", config.reconnect_grace_s == 5.0),
        (proto_md, "(a quarter of a second after your half-close)", core.CORE_END_SETTLE_S == 0.25),
        (
            proto_md,
            "no status and no `Welcome` within 30 s of your Hello",
            client._WELCOME_TIMEOUT_S == 30.0,
        ),
        (
            proto_md,
            "only the first 20 disconnects are recorded",
            config.max_disconnects_recorded == 20,
        ),
        (
            referee_md,
            "at 1,000 open at once, 100 from one client address",
            (server.MAX_OPEN_CALLS, server.MAX_OPEN_CALLS_PER_ADDRESS) == (1000, 100),
        ),
        (
            referee_md,
            "up to 200 per client address within 2 s",
            (server.TOKENLESS_LIMIT, server.TOKENLESS_WINDOW_S) == (200, 2.0),
        ),
        (referee_md, "must send its request within 10 s", server.TOKENLESS_REQUEST_S == 10.0),
        (referee_md, "Such a request takes at most 4 KiB", server.TOKENLESS_MAX_BYTES == 4096),
        (
            referee_md,
            "One HTTP/2 connection holds at most 100 streams open at once",
            server.MAX_STREAMS_PER_CONNECTION == 100,
        ),
        (referee_md, "`max_strikes` (3; at most 1,000,000)", config.max_strikes == 3),
        (
            referee_md,
            "`join_timeout_s` (30, the default for `wait_for_bots`)",
            config.join_timeout_s == 30.0,
        ),
    ]
    for doc, phrase, holds in checks:
        assert phrase in doc, phrase
        assert holds, phrase
    backoff = inspect.signature(client.BotRunner.__init__).parameters
    assert "The SDK's back-off: 0.5 s, doubling up to 30 s" in proto_md
    assert (backoff["initial_backoff"].default, backoff["max_backoff"].default) == (0.5, 30.0)


# --- the guide's rehearsal, pasted with --port 0 --------------------------------------------


def test_the_guides_rehearsal_on_port_0_plays_its_match(tmp_path: Path) -> None:
    """Pinned: the rehearsal of writing-a-bot.md §3 as a reader runs it when 50051 is
    taken: ``arena serve --port 0`` prints ``port N`` on a line of its own, each bot is
    started with ``ARENA_ADDRESS=localhost:N`` and the ``ARENA_TOKEN`` of its line, the
    three ``--once`` bots and the arena (``--matches 1``) end with exit code 0, and the
    arena's last line says the match was played."""
    import os

    guide = _text("writing-a-bot.md")
    mine = guide[guide.index("`mybot.py`:") :]
    (tmp_path / "mybot.py").write_text(re.findall(r"```python\n(.*?)```", mine, re.S)[0],
                                       encoding="utf-8")  # fmt: skip
    m = re.search(r"^printf '(\[bots\][^']*)' > tokens\.toml\n(.*?)```", guide, re.M | re.S)
    assert m
    (tmp_path / "tokens.toml").write_text(m.group(1).replace("\\n", "\n"), encoding="utf-8")
    lines = [line.rstrip(" &") for line in m.group(2).strip().splitlines()]
    assert lines[0] == "arena serve --tokens tokens.toml --max-deals 12 --port 50051 --matches 1"
    assert "`arena serve --port 0` picks a free port and prints `port N`" in _joined(guide)
    assert "`--arena localhost:N` or with `export ARENA_ADDRESS=localhost:N`" in _joined(guide)

    def command(line: str) -> tuple[list[str], dict[str, str]]:
        env = {**os.environ}
        words = line.split()
        while "=" in words[0]:
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        module = {"arena": "arena.cli", "arena-bot": "sdk.cli"}[words[0]]
        code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from {module} import main; "
                f"sys.argv[0] = {words[0]!r}; sys.exit(main())")  # fmt: skip
        return [sys.executable, "-c", code, *words[1:]], env

    argv, env = command(lines[0].replace("--port 50051", "--port 0"))
    serve = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    bots: list[subprocess.Popen[str]] = []
    try:
        assert serve.stdout is not None
        port = None
        while port is None:
            # (a deadline per line: a server that stopped saying its port fails here)
            line = readline_within(serve.stdout, 60)
            assert line is not None, "arena serve said no `port N` line in 60 s"
            assert line, serve.stderr.read() if serve.stderr else ""
            if re.fullmatch(r"port \d+\n", line):
                port = int(line.split()[1])
        for line in lines[1:]:
            argv, env = command(line)
            env["ARENA_ADDRESS"] = f"localhost:{port}"
            bot = subprocess.Popen(argv, cwd=tmp_path, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
            bots.append(bot)
        assert len(bots) == 3
        for bot in bots:
            out, _ = bot.communicate(timeout=60)
            assert bot.returncode == 0, out
            assert f"connected to localhost:{port} as " in out
        rest, err = serve.communicate(timeout=60)
        assert serve.returncode == 0, err
        assert rest.splitlines()[-1] == "1 match(es) played; records in records"
    finally:
        for proc in (serve, *bots):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# --- the record excerpts of the docs, against a record the engine writes --------------------


@pytest.mark.parametrize("doc", ["architecture.md", "record-format.md"])
def test_a_docs_record_excerpt_has_every_key_the_engine_writes(doc: str) -> None:
    """Defect (docs): the record examples of architecture.md and record-format.md showed
    deals without ``outcome``, which the engine writes in every scored deal (and which the
    leaderboard and the replay read): a reader writing a record by the example, or looking
    for the field, was shown a record of before 2026-12-01."""
    from engine import Game, observe

    text = _text(doc)
    m = re.search(r"```json\n(\{\s*\"format\": \"thousand-arena/record/1\",.*?)```", text, re.S)
    assert m
    example = m.group(1)
    game = Game.new("classic", seed=1, players=["a", "b", "c"])
    while not game.deal_results:
        game.apply(observe(game, game.to_act).legal_actions[0], seat=game.to_act)
    record = game.record()
    deal = record["deals"][0]
    shown = example.split('"deals": [', 1)[1].split('"result"', 1)[0]
    assert set(re.findall(r'"(\w+)": ', shown)) - {"seat", "action"} == set(deal), doc
    result = example.split('"result": ', 1)[1]
    assert set(re.findall(r'"(\w+)": ', result)) >= {"scores", "places", "shortfalls",
                                                    "winner", "deals", "reason"}  # fmt: skip
    assert f'"outcome": "{deal["outcome"]}"' in shown or '"outcome": "made"' in shown


# --- what `arena-bot try` says of a misbehaving bot, as the guide quotes it ------------------

_MISBEHAVING = """\
import itertools
import threading
import time

from sdk import Bot

MADE = itertools.count()


class Mine(Bot):
    def __init__(self) -> None:
        if next(MADE) == 3:
            raise RuntimeError("no model")
        super().__init__()


class Carder(Bot):
    def play(self, view):
        return view.legal_actions[0].card


class Leaver(Bot):
    def on_match_start(self, view):
        threading.Thread(target=time.sleep, args=(2,), name="searcher").start()
"""


def _try(tmp_path: Path, bot: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sdk.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, str(ROOT), "try", f"mybot.py:{bot}", "--vs", "random",
         "--max-deals", "3", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_what_try_says_of_a_misbehaving_bot_is_what_the_guide_quotes(tmp_path: Path) -> None:
    """Pinned: three of writing-a-bot.md §5's quotes, as ``arena-bot try`` says them: an
    ``__init__`` that raises at a later match (exit code 1, no table), a card returned
    instead of an action, a thread the bot left running."""
    (tmp_path / "mybot.py").write_text(_MISBEHAVING, encoding="utf-8")
    guide = _joined(_text("writing-a-bot.md"))

    late = _try(tmp_path, "Mine", "-n", "3")
    quoted = ('"error: making the bot Mine for match local-0-2 raised RuntimeError: no model '
              '(mybot.py:9, in __init__); no results"')  # fmt: skip
    assert quoted in guide
    assert late.returncode == 1 and "┃ bot" not in late.stdout
    said = late.stdout.strip().splitlines()[-1]  # (try's report, the table's place)
    assert re.sub(r"mybot\.py:\d+", "mybot.py:9", said) == quoted.strip('"')

    card = _try(tmp_path, "Carder", "-n", "1")
    assert ('("returned Card.C10, which is not an Action: a Card; return Play(card) to play '
            "it (play 10♣)\")") in guide  # fmt: skip
    assert re.search(r"Carder\.play\(\) \(mybot\.py:\d+\) returned Card\.(\w+), which is not "
                     r"an Action: a Card; return Play\(card\) to play it \(play \S+\)",
                     card.stderr), card.stderr  # fmt: skip

    left = _try(tmp_path, "Leaver", "-n", "1")
    quoted = "the bot left 1 thread running (searcher): exiting without waiting for it"
    assert f'("{quoted}")' in guide
    assert left.returncode == 0 and quoted in left.stderr, left.stderr


# --- the fix: `arena serve --db NEW` that stored no match leaves no database ----------------


def _serve_stopped_at_once(tmp_path: Path, db: Path) -> tuple[int, str]:
    """``arena serve --db DB`` stopped by SIGTERM once it stores results: no bot came."""
    import signal

    (tmp_path / "tokens.toml").write_text('[bots]\na = "tok-a-123"\nb = "tok-b-123"\n'
                                          'c = "tok-c-123"\n', encoding="utf-8")  # fmt: skip
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from arena.cli import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(ROOT), "serve", "--tokens", "tokens.toml", "--port",
         "0", "--max-deals", "2", "--db", str(db)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        out = ""
        for line in proc.stdout:
            out += line
            if line.startswith("storing results"):
                break
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    return proc.returncode, out + rest


def test_serve_that_stored_nothing_leaves_a_database_it_made_as_it_was(tmp_path: Path) -> None:
    """Defect: ``arena serve --db runs/open.sqlite`` stopped before any match said "no
    match stored: runs/open.sqlite is left as it was", and left a database of its own
    making there, empty, where there had been none. It removes it now; one that was there
    before is kept, as referee.md says."""
    from arena.storage import Storage

    new = tmp_path / "runs" / "open.sqlite"
    _, out = _serve_stopped_at_once(tmp_path, new)
    assert f"no match stored: {new} is left as it was" in out
    assert not new.parent.exists()  # (nor the directory it made for it: round 47)
    assert ("A run that stored no match leaves none (it prints `no match stored: "
            "results.sqlite is left as it was`, and removes a database the run made, with the "
            "directories it made for it;"
            ) in _joined(_text("referee.md"))  # fmt: skip

    old = tmp_path / "old.sqlite"
    Storage(old).close()
    _, out = _serve_stopped_at_once(tmp_path, old)
    assert f"no match stored: {old} is left as it was" in out
    storage = Storage(old)
    try:
        assert storage.tournaments() == []
    finally:
        storage.close()


def test_serve_on_a_busy_port_leaves_no_database_it_made(tmp_path: Path) -> None:
    """Defect: ``arena serve --db NEW`` refused on a busy port (exit code 1, before
    anything started) left the database file it had made, empty."""
    import socket

    (tmp_path / "tokens.toml").write_text('[bots]\na = "tok-a-123"\nb = "tok-b-123"\n'
                                          'c = "tok-c-123"\n', encoding="utf-8")  # fmt: skip
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from arena.cli import main; main()"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        done = subprocess.run(
            [sys.executable, "-c", code, str(ROOT), "serve", "--tokens", "tokens.toml",
             "--port", str(busy.getsockname()[1]), "--db", "runs/open.sqlite"],
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1 and "cannot listen on" in done.stderr, done.stderr
    assert not (tmp_path / "runs").exists()  # (nor the directory it made for it)


# --- protocol.md's refusals of a stream and its tokenless calls, as the referee answers ------


def test_getinfo_health_and_the_refusals_protocol_md_quotes() -> None:
    """Pinned: ``GetInfo`` tells the versions and the presets, health says SERVING for ""
    and ``arena.v1.Arena``, and a stream is refused with the statuses and words protocol.md
    quotes: an unknown token, another protocol version, a first message that is no Hello."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    import sdk
    from arena.referee import Referee, RefereeConfig, start_server
    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    doc = _joined(_text("protocol.md"))
    said: list[tuple[grpc.StatusCode, str]] = []

    async def refused(channel: Any, token: str, first: Any) -> None:
        call = pb_grpc.ArenaStub(channel).Play(metadata=[("authorization", f"Bearer {token}")])
        try:  # (the write too: an unknown token may be refused before it is done)
            await call.write(first)
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as e:
            said.append((e.code(), e.details() or ""))

    async def main() -> tuple[Any, list[int]]:
        ref = Referee(RefereeConfig())
        ref.add_bot("a", "tok-a-123")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                info = await pb_grpc.ArenaStub(channel).GetInfo(pb.GetInfoRequest())
                health = health_pb2_grpc.HealthStub(channel)
                statuses = [
                    (await health.Check(health_pb2.HealthCheckRequest(service=s))).status
                    for s in ("", "arena.v1.Arena")
                ]
                hello = pb.BotMessage(hello=pb.Hello(protocol_version=1))
                await refused(channel, "nope", hello)
                await refused(channel, "tok-a-123",
                              pb.BotMessage(hello=pb.Hello(protocol_version=2)))  # fmt: skip
                await refused(channel, "tok-a-123", pb.BotMessage(decision=pb.Decision()))
        finally:
            await ref.end_streams()
            await server.stop(1.0)
        return info, statuses

    info, statuses = asyncio.run(main())
    assert (info.server_version, info.protocol_version) == (sdk.__version__, 1)
    assert list(info.presets) == ["classic", "1001", "1001-4p"]
    assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 2
    assert said[0][0] == grpc.StatusCode.UNAUTHENTICATED
    assert "Missing or unknown token: the stream is closed with `UNAUTHENTICATED`" in doc
    version = "protocol version 2 is not supported (this referee speaks 1)"
    assert said[1] == (grpc.StatusCode.INVALID_ARGUMENT, version) and f'("{version}")' in doc
    first = "the first message must be Hello, not decision"
    assert said[2] == (grpc.StatusCode.INVALID_ARGUMENT, first) and f'("{first}",' in doc
