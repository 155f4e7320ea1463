"""Review round 56b: hand mutants of round 56's merged changes (perf56s: the SDK's view
items read from the bytes read, ``sdk.wire_view.wire_items``, protobuf lists read by a
slice; hostile56: a stuck stream's refusal status sent by ``context.abort``; limits56:
the replay page's failed decisions, ``arena-bot try --records``' ``by``/``failed``, config
keys quoted as TOML quotes them, negative seeds' ids, strict JSON). Each test names the
mutants it kills; the report of the round lists every mutant tried.

W: sdk/wire_view.py and sdk/client.py's ``_on_read``/``_on_message``/``_on_request``;
L: sdk/local.py's ``LocalMatch.chosen``, ``arena_record`` and ``_local_id``; C:
arena/tournament/config.py's ``_key_part``/``_key_parts``/``_override_of``; B: the bench
parts' and ``arena rules``' strict JSON; R, J: arena/web/replay.py and static/replay.js;
H: arena/referee/core.py's ``serve_stream`` and ``_status_behind_a_held_write``, and the
referee's decisions read by a slice.

75 hand mutants: the existing tests killed 48; the tests here kill 17 more (W2, W3, W5,
W8, W9, L1, L4, L5, L6, L13, C3, C5, C8, C9, C13, J7, H4); 10 are equivalent: L9 (a
``bool`` seed let through to ``< 0``: never below 0), C7 (a key that is no TOML key
taken whole rather than split at its dots: the only such keys, ``bots[i]``, hold none),
R1, R2 (``failed`` read on a referee's fallback, or as any truthy value: the engine's
replay refuses such a record before the page reads it), J1 (the page's own check that a
failed move is not the referee's: the server sends ``failed`` false on those), H2 (a
writer that failed or was cancelled taken as held: the call is over, no status goes out
either way), H3 (the code also set before ``abort``: abort's code and details are the
ones sent), H5 (``abort`` for a refusal not held too: the same code and details), H8,
H9 (a batch's decisions iterated rather than sliced: the same decisions, only slower).

Checked besides: a view's items as sent (an unknown field in an item, an item sent twice
over, an item that does not decode), cold and warm, give ``view_from_pb``'s view or its
error. No defect was found: every mutant that lived was a missing test or is equivalent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import tomllib
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc._cython import cygrpc

from arena.protocol import view_from_pb
from arena.referee.core import _Refusal, _status_behind_a_held_write
from arena.tournament.config import ConfigError, load_config
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PRESETS, Action, Phase, PlayerView, replay
from sdk import Bot, client, wire_view
from sdk.client import BotRunner, _Outbox
from sdk.local import BotMakeError, arena_record, play_local
from sdk.wire_view import request_view, wire_items
from tests.sdk.test_wire_view_round54 import _matches
from tests.support.browser import driver, paths
from tests.support.harness import get_json
from tests.web.test_failed_decisions_web_round56 import record, served
from tests.web.test_web_browser import load

__all__ = ["driver", "paths", "record", "served"]  # (fixtures of other modules, used here)

# ---------------------------------------------------------------------- W: wire items


def _request(view: pb.PlayerView, rid: str) -> pb.ServerMessage:
    return pb.ServerMessage(
        decision_request=pb.DecisionRequest(request_id=rid, match_id="m", view=view)
    )


def _feed(monkeypatch: pytest.MonkeyPatch, messages: list[pb.ServerMessage]) -> list[Any]:
    """Each message's bytes read by a runner holding match "m" (its bot never made: the
    requests wait for it, then are dropped); what ``request_view`` was handed, in order:
    (the view, what it returned, its ``items``)."""
    views, _ = _matches()[0]
    given: list[Any] = []

    # (round 58: the runner calls request_view_of, which reads req.view only if needed)
    def spy(req: Any, ruleset: Any, previous: Any, items: Any = None) -> PlayerView:
        msg = req.view
        got = request_view(msg, ruleset, previous, items)
        given.append((msg, got, items))
        return got

    monkeypatch.setattr(client, "request_view_of", spy)

    async def run() -> None:
        runner = BotRunner(RandomBot, "in-process", "token", name="spy")
        runner._welcomed = True
        runner._matches["m"] = client._Match("m", views[0].seat, views[0].ruleset, None, views[0])
        out = _Outbox()
        for msg in messages:
            runner._on_read(msg.SerializeToString(), out)
        for task in list(runner._tasks):
            task.cancel()
        await asyncio.gather(*runner._tasks, return_exceptions=True)

    asyncio.run(run())
    return given


def test_a_single_request_is_read_from_the_bytes_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """W3 (``_WITH_REQUESTS`` without ``decision_request``: a lone request's view was
    serialized again, as before the change; only batches were read from the bytes)."""
    _, sent = _matches()[0]
    given = _feed(monkeypatch, [_request(sent[0], "r1")])
    assert len(given) == 1
    items = given[0][2]
    wired = wire_view._ItemView.FromString(sent[0].SerializeToString())
    assert items is not None and items.SerializeToString() == wired.SerializeToString()


def test_without_wire_items_each_view_is_serialized_again_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``wire_items`` answers None for bytes its copy cannot parse (a DecodeError): each
    request's view, a lone one's and a batch's, is then read as before, the same view.
    W5 (the batch's ``wire.batch`` read from None: an AttributeError out of ``_on_read``),
    W8 (a lone request's ``wire.decision_request`` read from None: the request dropped)."""
    views, sent = _matches()[0]
    monkeypatch.setattr(client, "wire_items", lambda data: None)
    batch = pb.ServerMessage(
        batch=pb.Batch(messages=[_request(sent[0], "r1"), _request(sent[1], "r2")])
    )
    given = _feed(monkeypatch, [batch, _request(sent[2], "r3")])
    assert [g[0] for g in given] == sent[:3]
    for (_, got, items), v in zip(given, views[:3], strict=True):
        assert items is None
        assert got == v
    assert given[0][1] == view_from_pb(sent[0], views[0].ruleset, views[0])


def test_wire_items_of_bytes_that_do_not_parse_is_none() -> None:
    """``wire_items`` answers None, not an error, for bytes its copy cannot parse (the
    runner then reads each view as before). Never seen from bytes that parsed as a
    ``ServerMessage`` (the copy reads no deeper, in the same wire types); here, a request
    cut short and a wire type that does not exist. W2 (the DecodeError raised)."""
    whole = _request(_matches()[0][1][0], "r").SerializeToString()
    assert wire_items(whole) is not None
    for data in (whole[:-1], b"\x0f"):
        assert wire_items(data) is None


def test_request_view_reads_the_items_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """W9 (``items`` ignored: the view serialized and parsed again, what the change saves):
    with the copy's own parse made to fail, a whole match's views still come right from
    the items handed in (each parsed from a request's bytes by ``wire_items``)."""
    views, sent = _matches()[0]
    data = [_request(v, "r").SerializeToString() for v in sent]
    wired = [wire_items(d).decision_request.view for d in data]

    class _NoParse:
        @staticmethod
        def FromString(data: bytes) -> Any:  # (protobuf's name)
            raise AssertionError("the view serialized and parsed again")

    monkeypatch.setattr(wire_view, "_ItemView", _NoParse)
    ruleset, previous = views[0].ruleset, None
    for v, msg, items in zip(views, sent, wired, strict=True):
        got = request_view(msg, ruleset, previous, items)
        assert got == v == view_from_pb(msg, ruleset, previous)
        previous = got


def _odd_request(view: pb.PlayerView, change: Any) -> bytes:
    """A request's bytes whose view's hand and legal actions are ``change(item)`` of each
    item's bytes: encodings a parse takes, which serializing the parsed view again would
    not give back (so not the bytes learnt before)."""
    items = wire_view._ItemView.FromString(view.SerializeToString())
    for name in ("hand", "legal_actions"):
        odd = [change(b) for b in getattr(items, name)]
        del getattr(items, name)[:]
        getattr(items, name).extend(odd)
    msg = wire_view._ItemServer()
    msg.decision_request.match_id = b"m"
    msg.decision_request.view.CopyFrom(items)
    return bytes(msg.SerializeToString())


def test_items_as_sent_unknown_fields_and_all_give_view_from_pbs_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Items read from the bytes read are the bytes sent, not the parsed view's own
    encoding: an item with an unknown field, or sent twice over (merged), is another key,
    decoded by ``view_from_pb`` the first time (cold) and found the next (warm), the same
    view; an item that does not decode (a rank no card has) raises view_from_pb's error."""
    monkeypatch.setattr(wire_view, "_KNOWN", {})
    views, sent = _matches()[0]
    ruleset = views[0].ruleset
    for change in (lambda b: b + b"\x78\x01", lambda b: b + b):  # field 15; merged twice
        for _ in ("cold", "warm"):
            previous = None
            for v, msg in zip(views[:12], sent[:12], strict=True):
                data = _odd_request(msg, change)
                parsed = pb.ServerMessage.FromString(data).decision_request.view
                wired = wire_items(data).decision_request.view
                got = request_view(parsed, ruleset, previous, wired)
                assert got == view_from_pb(parsed, ruleset, previous) == v
                previous = got
    data = _odd_request(sent[0], lambda b: b + b"\x10\x63")  # rank 99
    parsed = pb.ServerMessage.FromString(data).decision_request.view
    with pytest.raises(Exception) as expected:
        view_from_pb(parsed, ruleset, None)
    with pytest.raises(type(expected.value)) as got:
        request_view(parsed, ruleset, None, wire_items(data).decision_request.view)
    assert str(got.value) == str(expected.value) and "rank" in str(got.value)


# ---------------------------------------------------------------------- L: local records


def test_a_match_whose_chosen_does_not_fit_its_record_is_written_unmarked() -> None:
    """L1 (the length check dropped: ``chosen`` shorter than the actions ran out, a
    StopIteration out of ``arena_record``; longer, it marked the wrong actions)."""
    m = play_local([RandomBot] * 3, "classic", 4, max_deals=1)
    full = arena_record(m)
    assert all("by" in a for d in full["deals"] for a in d["actions"])
    for chosen in (m.chosen[:-1], (*m.chosen, ("bot", False)), ()):
        rec = arena_record(dataclasses.replace(m, chosen=chosen))
        assert not any("by" in a for d in rec["deals"] for a in d["actions"])
        assert rec["deals"] == m.record["deals"]


class _LateFailure(Bot):
    """Its first decision of a trick's play: 0.4 s, then it raises (at 50 ms a decision,
    no bank: late whatever the machine's load); the first legal action otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.late = False

    def act(self, view: PlayerView) -> Action:
        if view.phase is Phase.PLAYING and not self.late:
            self.late = True
            time.sleep(0.4)
            raise RuntimeError("late and failed")
        return view.legal_actions[0]


def test_a_late_decision_is_the_referees_fallback_and_not_a_failed_one() -> None:
    """A decision that came too late is the referee's fallback (``"by": "fallback"``, a
    timeout), even when the bot also failed it: the client's answer came too late to be
    its fallback. The turns that came while the late call still ran are the referee's too.
    L5 (a late answer recorded ``"by": "bot"``), L6 (a late failed one ``"failed": true``),
    L4 (a turn that expired while the call still ran recorded ``"by": "bot"``)."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
    m = play_local([_LateFailure, RandomBot, RandomBot], rules, 3,
                   decision_ms=50, time_bank_ms=0)  # fmt: skip
    rec = arena_record(m)
    actions = [a for d in rec["deals"] for a in d["actions"]]
    plays = [a for a in actions if a["seat"] == 0 and a["action"].startswith("play")
             and a["by"] != "forced"]  # fmt: skip
    assert plays[0]["by"] == "fallback" and "failed" not in plays[0], plays[0]
    timeouts = [i for i in rec["incidents"] if i["kind"] == "timeout"]
    assert any(i["seat"] == 0 for i in timeouts), timeouts
    assert not any(i["kind"] == "bot_error" for i in rec["incidents"]), rec["incidents"]
    assert not any(a.get("failed") for a in actions)
    # every fallback is the referee's, for a timeout or a strike: one incident each
    fallbacks = sum(a["by"] == "fallback" for a in actions)
    assert fallbacks == sum(i["kind"] in ("timeout", "illegal") for i in rec["incidents"])
    replay(rec)


def test_a_bot_that_cannot_be_made_names_a_negative_seeds_match_as_its_bots_are_told() -> None:
    """L13 (the error named the match ``local--2``, its bots being told ``local-minus2``)."""

    class Unmade(Bot):
        def __init__(self) -> None:
            raise ValueError("no")

    with pytest.raises(BotMakeError, match=r"for match local-minus2 raised"):
        play_local([Unmade, RandomBot, RandomBot], "classic", -2, max_deals=1)


# ---------------------------------------------------------------------- C: config keys

HEAD = 'name = "q"\nruleset = "classic"\n[bots]\nb = "random"\nc = "random"\n'


def _error(tmp_path: Path, bots: str, overrides: tuple[str, ...] = ()) -> ConfigError:
    path = tmp_path / "t.toml"
    path.write_text(HEAD + bots, encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_config(path, overrides)
    return ei.value


def _parts(key: str) -> list[str]:
    node: Any = tomllib.loads(f"{key} = 0")
    parts = []
    while isinstance(node, dict):
        ((part, node),) = node.items()
        parts.append(part)
    return parts


def test_a_backslash_in_a_key_is_escaped_as_toml_escapes_it(tmp_path: Path) -> None:
    """C3 (a backslash written bare: ``"A\\B"`` read back by TOML as an escape, or not at
    all)."""
    e = _error(tmp_path, "a = { bot = \"random\", env = { 'A\\B' = 1 } }\n")
    assert e.key == 'bots.a.env."A\\\\B"', e.key
    assert _parts(e.key) == ["bots", "a", "env", "A\\B"]


def test_a_bad_value_of_a_quoted_variable_names_it_quoted(tmp_path: Path) -> None:
    """C13 (the NUL byte's error named ``env.MY VAR`` bare)."""
    e = _error(tmp_path, 'a = { bot = "random", env = { "MY VAR" = "x\\u0000y" } }\n')
    assert e.key == 'bots.a.env."MY VAR"' and "NUL" in e.message, str(e)


def test_a_long_bare_key_is_cut_as_before(tmp_path: Path) -> None:
    """C5 (a bare part no longer cut at 100 characters: an unknown key of 5,000 letters
    quoted whole, one line of 5 KB)."""
    e = _error(tmp_path, f'a = {{ bot = "random", {"k" * 5000} = 1 }}\n')
    assert e.key == f"bots.a.{'k' * 100}... (5,000 characters)", e.key[:200]


def test_a_table_made_by_set_under_a_quoted_name_is_said_to_come_from_it(
    tmp_path: Path,
) -> None:
    """``--set 'bots."v1.2".workers=2'`` makes a bot "v1.2" the file does not have, with
    no ``bot``: the error, on ``bots."v1.2"``, says which ``--set`` made it (the error's key
    read back into its parts as TOML reads them). C8 (the key split at its dots:
    ``"v1`` and ``2"``, no override found), C9 (the missing part named unquoted)."""
    item = 'bots."v1.2".workers=2'
    e = _error(tmp_path, "", (item,))
    assert e.key.startswith('bots."v1.2"'), str(e)
    assert e.message.endswith(f"(from --set {item}, not from the file)"), e.message


# ---------------------------------------------------------------------- H: a held status


class _Context:
    """A call's context whose ``abort`` raises what grpc.aio's raises."""

    def __init__(self, raises: BaseException) -> None:
        self.raises = raises
        self.aborted: list[tuple[Any, str]] = []

    async def abort(self, code: Any, details: str) -> None:
        self.aborted.append((code, details))
        raise self.raises


def test_a_held_status_that_cannot_go_out_ends_the_call_as_cancelled() -> None:
    """The status of a refused stream whose last write is held is sent by ``abort``: sent,
    the handler ends as grpc.aio's abort ends it; failed (the client reset the call while
    the status waited), the handler ends as cancelled, not returning as if it had gone (a
    handler that returned had grpc.aio send a status core refuses: an ERROR with a
    traceback). H4 (the failure swallowed: the handler returned)."""
    refusal = _Refusal(grpc.StatusCode.ABORTED, "replaced")
    failed = _Context(cygrpc.ExecuteBatchError("reset"))
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(_status_behind_a_held_write(failed, refusal))
    assert failed.aborted == [(grpc.StatusCode.ABORTED, "replaced")]
    sent = _Context(grpc.aio.AbortError())
    with pytest.raises(grpc.aio.AbortError):
        asyncio.run(_status_behind_a_held_write(sent, refusal))


# ---------------------------------------------------------------------- J: the replay page


@pytest.mark.browser
def test_the_action_logs_title_says_a_decision_failed(driver: Any, served: str) -> None:
    """An action log entry's title (its time and who chose it) ends in " (failed)" for a
    decision the bot failed, and for no other. J7 (the mark left out of the title)."""
    data = get_json(served, "/api/matches/f-m00000/deals/0")
    last = len(data["steps"]) - 1
    load(driver, f"{served}replay/f-m00000#deal=0&step={last}")
    titles = {
        int(li.get_attribute("data-step")): li.get_attribute("title")
        for li in driver.find_elements("css selector", "#action-log li")
    }
    failed = {st["i"] for st in data["steps"][1:] if st["action"]["failed"]}
    assert failed and set(titles) == {st["i"] for st in data["steps"][1:]}
    marked = {i for i, t in titles.items() if t.endswith(" (failed)")}
    assert marked == failed, titles
    assert all(" ms · " in titles[i] for i in failed), titles
