"""Bad records, databases and bots: a malformed match record, a damaged or foreign
database, a bot whose constructor fails at a later match. Each gets a clear error naming
what was wrong (no traceback, a non-zero exit code on the command line) and loses nothing.

In-process: click's CliRunner, the storage on temporary files, and the SDK runner fed
messages directly (no server, no bot process).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import io
import json
import logging
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from arena.cli import main as arena
from arena.protocol import ruleset_to_pb, view_to_pb
from arena.render import render_record
from arena.storage import Storage, StorageError
from arena.v1 import arena_pb2 as pb
from engine import Game, ReplayError, Ruleset, observe, replay
from sdk import Bot
from sdk.client import BotRunner, _Outbox
from tests.arena.test_storage import _record as _stored_record
from tests.arena.test_storage import _save, _setup
from tests.cli.test_bad_input import _fails, _invoke
from tests.cli.test_bad_input import _record as _one_deal_record
from tests.support.harness import errors_logged

# (path in the record, value, words of the error): each breaks one shape assumption.
MALFORMED: list[tuple[tuple[Any, ...], Any, str]] = [
    (("deals",), [5], "deal 0 must be an object with a list of 'actions'"),
    (("deals",), [None], "deal 0 must be an object"),
    (("deals",), "x", "'deals' must be a list, got str"),
    (("deals", 0, "actions"), 5, "deal 0 must be an object with a list of 'actions'"),
    (("deals", 0, "actions", 0), 5, "deal 0 must be an object"),
    (("deals", 0, "actions", 0, "seat"), None, "deal 0, action 0: 'seat' must be a seat"),
    (("deals", 0, "actions", 0, "seat"), "0", "deal 0, action 0: 'seat' must be a seat"),
    (("deals", 0, "actions", 0, "action"), 5, "deal 0, action 0: 'action' must be an action"),
    (("deals", 0, "number"), "0", "deal 0: 'number' must be an integer"),
    (("deals", 0, "number"), [0], "deal 0: 'number' must be an integer"),
    (("deals", 0, "dealer"), [], "deal 0: 'dealer' must be an integer"),
    (("deals", 0, "hands"), 5, "deal 0: 'hands' must be a list of card lists"),
    (("deals", 0, "talon"), 5, "deal 0: 'talon' must be a list of cards"),
    (("deals", 0, "deltas"), 5, "deal 0: 'deltas' must be a list of integers"),
    (("deals", 0, "scores"), None, "deal 0: 'scores' must be a list of integers"),
    (("players",), "abc", "'players' must be a list of names"),
    (("players",), [1, 2, 3], "'players' must be a list of names"),
    (("result",), 5, "'result' must be an object or null"),
    (("result",), {"scores": 5}, "'result.scores' must be a list of 3 integers"),
    (("result",), {"scores": [1, 2, 3], "places": [1]}, "'result.places' must be a list of 3"),
    (("rules_result",), [1], "'rules_result' must be an object or null"),
    (("ruleset",), 5, "'ruleset' must be an object or a preset name, got int"),
    (("ruleset",), None, "'ruleset' must be an object or a preset name"),
    (("start",), 5, "'start' must be an object"),
    # mutation audit: a given first dealer (Game.new(dealer=)) is checked with the shape
    (("start",), {"dealer": "2"}, "'start.dealer' must be a seat number, got '2'"),
    (("start",), {"dealer": True}, "'start.dealer' must be a seat number, got True"),
    (("format",), [], "'format' must be 'thousand-arena/record/1'"),
    (("incidents",), {"kind": "timeout"}, "'incidents' must be a list of objects"),
    # found by an audit ("deals is 2, the record says 2" before)
    (("result",), {"deals": "2"}, "'result.deals' must be an integer"),
    (("result",), {"winner": "0"}, "'result.winner' must be a seat number or null"),
    (("result",), {"reason": 5}, "'result.reason' must be a string"),
]


def _broken(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    rec = copy.deepcopy(_one_deal_record())
    target = rec
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return rec


def _ids(case: tuple[tuple[Any, ...], Any, str]) -> str:
    return ".".join(map(str, case[0])) + "=" + repr(case[1])


# ----------------------------------------------------------------------------- 1. replay


@pytest.mark.parametrize("case", MALFORMED, ids=_ids)
def test_replay_names_every_shape_problem_with_a_replay_error(
    case: tuple[tuple[Any, ...], Any, str],
) -> None:
    path, value, words = case
    with pytest.raises(ReplayError, match="not a match record") as info:
        replay(_broken(path, value))
    assert words in str(info.value)
    if path[0] == "deals" and len(path) > 1:
        assert info.value.deal == 0


def test_replay_still_takes_a_preset_name_and_a_record_without_hands() -> None:
    rec = _one_deal_record()
    rec["ruleset"] = "classic"
    for d in rec["deals"]:
        del d["hands"], d["talon"]
    assert replay(rec).record()["deals"][0]["actions"] == rec["deals"][0]["actions"]


# ----------------------------------------------------------------------------- 2. render


@pytest.mark.parametrize("case", MALFORMED, ids=_ids)
def test_render_record_refuses_a_malformed_record_without_raising(
    case: tuple[tuple[Any, ...], Any, str],
) -> None:
    path, value, words = case
    out = render_record(_broken(path, value))
    assert isinstance(out, Text)
    assert out.plain.startswith("cannot render: not a match record") and words in out.plain


def _plain(renderable: Any) -> str:
    buf = io.StringIO()
    Console(file=buf, width=200).print(renderable)
    return buf.getvalue()


def test_render_record_shows_a_record_whose_ruleset_is_a_preset_name(tmp_path: Path) -> None:
    rec = _one_deal_record()
    rec["ruleset"] = "classic"  # docs/record-format.md: "on input also a preset name"
    text = _plain(render_record(rec))
    assert "Match: classic" in text and "Deal 1 —" in text and "cannot render" not in text
    p = tmp_path / "preset.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    shown = _invoke(arena, ["replay", str(p)])
    assert shown.exit_code == 0 and "Deal 1 —" in shown.output, shown.output
    checked = _invoke(arena, ["replay", "--check", str(p)])
    assert checked.exit_code == 0 and "OK: every action is legal" in checked.output


@pytest.mark.parametrize("check", [False, True])
def test_a_records_escape_sequences_are_shown_not_obeyed(tmp_path: Path, check: bool) -> None:
    """Defect (web and human-seat audit): `arena replay FILE` printed a record's names (and
    its other texts) to the terminal as they were: a record file from anyone could set the
    window title, clear the screen or write the clipboard (OSC 52) of whoever replayed it.
    Every string but the seed is shown with its control characters written out."""
    rec = _one_deal_record()
    rec["players"] = ["ann\x1b]52;c;cHduZWQ=\x07", "bob\x1b[2J", "cid"]
    rec["incidents"] = [{"kind": "timeout", "seat": 1, "deal": 0, "detail": "x\x1b]0;t\x07"}]
    p = tmp_path / "evil.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    r = _invoke(arena, ["replay", *(["--check"] if check else []), str(p)])
    assert "\x1b" not in r.output and "\x07" not in r.output, r.output
    assert r.exit_code == 0, r.output
    if not check:
        assert "ann\\x1b]52;c;cHduZWQ=\\x07" in r.output and "bob\\x1b[2J" in r.output


@pytest.mark.parametrize(
    "case",
    [c for c in MALFORMED if c[0][-1] in ("seat", "action", "result", "talon", "ruleset")],
    ids=_ids,
)
@pytest.mark.parametrize("check", [False, True])
def test_arena_replay_uses_the_shared_shape_check(
    tmp_path: Path, case: tuple[tuple[Any, ...], Any, str], check: bool
) -> None:
    path, value, words = case
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(_broken(path, value)), encoding="utf-8")
    r = _invoke(arena, ["replay", *(["--check"] if check else []), str(p)])
    # (the deal numbered from 1 as well, as every deal a user reads: round 44)
    words = re.sub(r"\bdeal (\d+)", lambda m: f"Deal {int(m[1]) + 1} (record deal {m[1]})", words)
    _fails(r, 2, f"{p}: not a match record", words)


# ----------------------------------------------------------------------------- 3. damaged rows


# Valid JSON of the wrong shape: the leaderboard used to crash on some (incidents that are
# no objects) and, worse, to miscount others silently (places "123" read as [1, 2, 3]).
WRONG_TYPES: list[tuple[tuple[Any, ...], Any, str]] = [
    (("result", "places"), "123", "'result.places' must be a list of 3 integers"),
    (("deals", 0, "deltas"), "120", "deal 0: 'deltas' must be a list of integers"),
    (("incidents",), [5], "'incidents' must be a list of objects"),
    (("deals", 0, "actions", 0, "seat"), True, "deal 0, action 0: 'seat' must be a seat"),
]
# (what the row is damaged with: text, or (path, value) in the record; words of the error)
DAMAGES: list[tuple[str | tuple[tuple[Any, ...], Any], str]] = [
    ("{not json", "not valid JSON"),
    ("5", "int"),
    *(((path, value), words) for path, value, words in WRONG_TYPES),
]


@pytest.mark.parametrize(("damage", "words"), DAMAGES, ids=lambda d: str(d)[:40])
def test_a_damaged_record_row_is_an_error_naming_the_match(
    tmp_path: Path, damage: str | tuple[tuple[Any, ...], Any], words: str
) -> None:
    db = tmp_path / "x.sqlite"
    with _setup(db) as st:
        _save(st, 1, _stored_record(seed=1))
        _save(st, 2, _stored_record(seed=2))
    ok = _invoke(arena, ["leaderboard", "--db", str(db), "--format", "csv"])
    assert ok.exit_code == 0, ok.output
    if isinstance(damage, str):
        stored = damage
    else:
        path, value = damage
        broken = _stored_record(seed=2)
        target: Any = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        stored = json.dumps(broken)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE matches SET record_json = ? WHERE id = 't1-m00002'", (stored,))
    c.close()
    with Storage(db) as st:
        with pytest.raises(StorageError, match="record of match t1-m00002") as info:
            st.load_record("t1-m00002")
        assert words in str(info.value)
        with pytest.raises(StorageError, match="record of match t1-m00002"):
            list(st.iter_records("t1"))
        assert st.load_record("t1-m00001")["result"]  # the other match is intact
    _fails(_invoke(arena, ["replay", "m00002", "--db", str(db)]), 2, "match t1-m00002", words)
    _fails(_invoke(arena, ["replay", "--check", "m00002", "--db", str(db)]), 2, "t1-m00002")
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, "match t1-m00002", words)
    with Storage(db) as st:  # nothing was changed or dropped
        assert st.completed_indices("t1") == {1, 2}
        raw = st.conn.execute("SELECT record_json FROM matches WHERE id = 't1-m00002'")
        assert raw.fetchone()[0] == stored


def test_a_record_row_that_is_not_utf8_is_an_error_naming_the_match(tmp_path: Path) -> None:
    """Defect: bytes that are not UTF-8 in a record (a damaged page) were "database error
    while reading match records: Could not decode to UTF-8 column 'record_json' ...",
    naming no match and printing part of the record."""
    db = tmp_path / "x.sqlite"
    with _setup(db) as st:
        _save(st, 1, _stored_record(seed=1))
        _save(st, 2, _stored_record(seed=2))
    bad = json.dumps(_stored_record(seed=2)).encode().replace(b'"result"', b'"r\xffsult"')
    with sqlite3.connect(db) as c:
        c.execute("UPDATE matches SET record_json = CAST(? AS TEXT) WHERE id = 't1-m00002'", (bad,))
    c.close()
    with Storage(db) as st:
        with pytest.raises(StorageError, match="record of match t1-m00002 is damaged"):
            st.load_record("t1-m00002")
        with pytest.raises(StorageError, match="record of match t1-m00002 is damaged"):
            list(st.iter_records("t1"))
        assert st.load_record("t1-m00001")["result"]
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, "match t1-m00002", "damaged")


# ----------------------------------------------------------------------------- 4. foreign DBs


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_another_programs_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        c.execute("INSERT INTO notes (body) VALUES ('keep me')")
    c.close()
    before = _digest(other)
    with pytest.raises(StorageError, match="is not a Thousand Arena database") as info:
        Storage(other)
    assert "notes" in str(info.value) and str(other) in str(info.value)
    # (exit 2 everywhere since round 52, as ``arena replay`` always did: the wrong file given)
    _fails(_invoke(arena, ["leaderboard", "--db", str(other)]), 2,
           "not a Thousand Arena database")  # fmt: skip
    _fails(_invoke(arena, ["replay", "m00001", "--db", str(other)]), 2,
           "not a Thousand Arena database")  # fmt: skip
    _fails(_invoke(arena, ["web", "--db", str(other), "--port", "0"]), 2,
           "not a Thousand Arena database")  # fmt: skip
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]  # no -wal, no -shm
    with sqlite3.connect(other) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    c.close()
    assert tables == ["notes"]


def test_read_only_commands_do_not_create_a_missing_database(tmp_path: Path) -> None:
    missing = tmp_path / "sub" / "none.sqlite"
    _fails(_invoke(arena, ["leaderboard", "--db", str(missing)]), 2, f"no database at {missing}")
    _fails(_invoke(arena, ["replay", "m00001", "--db", str(missing)]), 2,
           f"no database at {missing}")  # fmt: skip
    _fails(_invoke(arena, ["web", "--db", str(missing), "--port", "0"]), 2,
           f"no database at {missing}")  # fmt: skip
    assert not missing.exists() and not missing.parent.exists()


# ----------------------------------------------------------------------------- 5. bots


class FlakyBot(Bot):
    """Made fine for the first match, raises when made for the second."""

    name = "flaky"
    made = 0

    def __init__(self) -> None:
        super().__init__()
        FlakyBot.made += 1
        if FlakyBot.made == 2:
            raise RuntimeError("out of memory in match two")


def _game() -> Game:
    return Game.new("classic", 1, ["x", "y", "flaky"])


def _seat_to_act(game: Game) -> int:
    seat = game.to_act
    assert seat is not None
    return seat


def _started(match_id: str) -> pb.ServerMessage:
    game = _game()
    seat = _seat_to_act(game)
    msg = pb.ServerMessage()
    ms = msg.match_started
    ms.match_id, ms.seat = match_id, seat
    ms.players.extend(game.players)
    ms.ruleset.CopyFrom(ruleset_to_pb(game.ruleset))
    view_to_pb(observe(game, seat), ms.view)
    return msg


def _request(match_id: str, request_id: str) -> pb.ServerMessage:
    game = _game()
    msg = pb.ServerMessage()
    req = msg.decision_request
    req.match_id, req.request_id = match_id, request_id
    view_to_pb(observe(game, _seat_to_act(game)), req.view)
    return msg


def _ended(match_id: str) -> pb.ServerMessage:
    msg = pb.ServerMessage()
    msg.match_ended.match_id = match_id
    msg.match_ended.result.scores.extend([0, 0, 0])
    msg.match_ended.result.places.extend([1, 1, 1])
    return msg


def test_a_bot_whose_constructor_raises_at_a_later_match_does_not_stop_the_runner(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(FlakyBot, "made", 0)

    async def play() -> tuple[BotRunner, list[str]]:
        runner = BotRunner(FlakyBot, "127.0.0.1:1", "tok", matches=3)
        out = _Outbox()
        out.held = True
        runner._out = out  # the stream the answers go to

        async def made(match_id: str) -> None:
            # Each match's bot is made in a thread of its own: the next match starts once
            # this one's is made (or has failed), so the second one made is m2's (with all
            # three started at once, m3's thread now and then made its bot before m2's:
            # one test process on 3.13, under load).
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                m = runner._matches.get(match_id)
                if (m is not None and m.bot is not None) or match_id in runner._unmade:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"match {match_id}: its bot was neither made nor refused")

        for msg in (_started("m1"), _started("m2"), _request("m2", "r2"),
                    _request("m1", "r1"), _started("m3"), _request("m3", "r3")):  # fmt: skip
            runner._on_message(msg, out)  # m2's bot raises: before the fix, this did too
            if msg.WhichOneof("kind") == "match_started":
                await made(msg.match_started.match_id)
        await runner._drain()
        for mid in ("m2", "m1", "m3"):
            runner._on_message(_ended(mid), out)
        await runner._drain()
        answered = [m.decision.match_id for m in out._buf if m is not None and m.decision.match_id]
        return runner, answered

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        runner, answered = asyncio.run(play())
    assert sorted(answered) == ["m1", "m3"]  # m2 is left to the referee's deadline
    errors = errors_logged(caplog.records)
    assert len(errors) == 1 and errors[0].exc_info is not None
    text = errors[0].getMessage()
    assert "match m2" in text and "flaky" in text and "RuntimeError: out of memory" in text
    assert "unknown match" not in caplog.text
    s = runner.summary
    assert (s.matches, s.decisions, s.errors) == (3, 2, 1)
    assert s.reason == "played 3 match(es)"


class Leaver(Bot):
    """Leaves at its first decision, as a person typing "quit" in the human seat does."""

    name = "leaver"

    def act(self, view: Any) -> Any:
        raise SystemExit(1)


@pytest.mark.parametrize("inline", [False, True])
def test_a_bot_that_exits_stops_the_runner_cleanly_with_its_exit_code(
    inline: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """``SystemExit`` from a bot (``arena-bot run human``, then "quit") used to escape the
    runner's task: "Task exception was never retrieved" and a traceback."""

    async def play() -> tuple[BotRunner, _Outbox]:
        runner = BotRunner(Leaver, "127.0.0.1:1", "tok")
        runner._inline = inline  # answered on the reading loop, or on a worker thread
        out = _Outbox()
        out.held = True
        runner._out = out
        runner._on_message(_started("m1"), out)
        runner._on_message(_request("m1", "r1"), out)
        await runner._drain()
        return runner, out

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        runner, out = asyncio.run(play())
    assert runner.summary.exit_code == 1
    assert runner.summary.reason == "the bot left (exit code 1)"
    assert not [m for m in out._buf if m is not None and m.WhichOneof("kind") == "decision"]
    assert not errors_logged(caplog.records)


def test_arena_bot_run_exits_with_the_code_of_a_bot_that_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sdk.client
    from sdk.cli import main as arena_bot
    from sdk.client import RunSummary

    def fake_run(*args: Any, **kwargs: Any) -> RunSummary:
        return RunSummary(decisions=3, reason="the bot left (exit code 1)", exit_code=1)

    monkeypatch.setattr(sdk.client, "run", fake_run)
    r = _invoke(arena_bot, ["run", "random", "--arena", "127.0.0.1:1", "--token", "t"])
    _fails(r, 1)


# ----------------------------------------------------------------------------- found by an audit


def test_hands_without_a_talon_are_refused_not_ignored() -> None:
    """Defect: a deal with ``hands`` but no ``talon`` had its hands ignored (any nonsense
    passed ``--check``, and the renderer showed the seed's cards)."""
    rec = copy.deepcopy(_one_deal_record())
    del rec["deals"][0]["talon"]
    with pytest.raises(ReplayError, match="'hands' and 'talon' go together"):
        replay(rec)


def test_arena_replay_reads_jsonl_and_refuses_deep_json(tmp_path: Path) -> None:
    """Defects: a referee's ``<match>.jsonl`` (the only record of an interrupted ``arena
    serve`` match) could not be replayed ("Extra data"); a deeply nested file was a
    RecursionError traceback."""
    rec = _one_deal_record()
    lines = [{"type": "start", "match_id": "m"}, {"type": "action", "deal": 0},
             {"type": "end", "record": rec}]  # fmt: skip
    f = tmp_path / "m.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = _invoke(arena, ["replay", "--check", str(f)])
    assert r.exit_code == 0 and "OK: every action is legal" in r.output, r.output
    (tmp_path / "open.jsonl").write_text(json.dumps(lines[0]) + "\n")
    _fails(
        _invoke(arena, ["replay", str(tmp_path / "open.jsonl")]),
        2,
        "no 'end' or 'interrupted' line",
    )
    cut = tmp_path / "cut.jsonl"  # a record cut short (a full disk, a killed referee)
    cut.write_text(json.dumps(lines[0]) + "\n" + json.dumps(lines[0])[:30])
    _fails(_invoke(arena, ["replay", str(cut)]), 2, "ends in the middle of a line")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _fails(_invoke(arena, ["replay", "--check", str(deep)]), 2, "not a readable match record")


def test_check_notes_cards_that_are_not_the_seeds(tmp_path: Path) -> None:
    """A record may give its own cards (a constructed rule case): accepted, but ``--check``
    says when they are not what the seed deals (a referee's record always is)."""
    rec = copy.deepcopy(_one_deal_record())
    from engine.record import seed_mismatches

    assert seed_mismatches(rec) == []
    last = len(rec["deals"]) - 1
    d = rec["deals"][last]  # dealt, no action yet: a swap breaks no action
    assert d["actions"] == [] and "hands" in d
    d["hands"][0][0], d["talon"][0] = d["talon"][0], d["hands"][0][0]
    replay(rec)
    assert seed_mismatches(rec) == [last]
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(rec, ensure_ascii=False))
    r = _invoke(arena, ["replay", "--check", str(f)])
    assert r.exit_code == 0 and f"deal(s) {last + 1} are the record's own" in " ".join(
        r.output.split()
    )


def test_a_referee_record_whose_cards_are_not_its_seeds_is_refused(tmp_path: Path) -> None:
    """Defect (replay audit): `--check` passed a referee's record whose seed had been
    changed (its cards still replay: records carry them), with only a note. A record the
    arena wrote (it names its `match_id`) is always dealt from its seed: refused, exit 1.
    A constructed record without `match_id` keeps the note (above)."""
    rec = copy.deepcopy(_one_deal_record())
    rec["match_id"] = "t1-m00003"
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(rec, ensure_ascii=False))
    assert _invoke(arena, ["replay", "--check", str(f)]).exit_code == 0
    seed = rec["seed"]
    while True:  # another seed with the same first dealer: every action still replays
        seed += 1
        rec["seed"] = seed
        try:
            replay(rec)
            break
        except ReplayError:
            continue
    f.write_text(json.dumps(rec, ensure_ascii=False))
    _fails(_invoke(arena, ["replay", "--check", str(f)]), 1, "REFUSED", "not the ones seed")
    _fails(_invoke(arena, ["replay", str(f)]), 1, "not the ones seed")  # shown, then refused


@pytest.mark.parametrize(
    ("path", "value", "words"),
    [
        (("deals", 0, "deltas", 0), 7, "deal 0"),
        (("result", "places"), [3, 1, 1], "result"),
    ],
)
def test_replay_without_check_says_when_the_records_figures_differ(
    tmp_path: Path, path: tuple[Any, ...], value: Any, words: str
) -> None:
    """Defect (replay audit): `arena replay` printed the deals as the rules score them but
    the final standings as the record states them, contradicting each other, with exit 0.
    It now says that the record's figures differ (as `--check` would) and exits 1."""
    g = Game.new(Ruleset.from_dict({"preset": "classic", "max_deals": 1}), 3, ["a", "b", "c"])
    while not g.is_over:
        g.apply(g.legal_actions()[-1])
    rec = g.record()
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(rec, ensure_ascii=False))
    assert _invoke(arena, ["replay", str(f)]).exit_code == 0
    shown = _plain(render_record(rec))
    target: Any = rec
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    f.write_text(json.dumps(rec, ensure_ascii=False))
    _fails(_invoke(arena, ["replay", str(f)]), 1, "figures differ", words)
    # what is shown is the rules' figures, standings included, not the record's
    assert _plain(render_record(rec)) == shown


@pytest.mark.parametrize(("key", "value"), [("seed", 99), ("players", ["b", "a", "c"])])
def test_a_stored_record_that_disagrees_with_its_row_is_damaged(
    tmp_path: Path, key: str, value: Any
) -> None:
    """Defect (replay audit): a stored record whose seed or players had been edited still
    replayed and passed `--check` (the row's seed and seats were never compared)."""
    db = tmp_path / "x.sqlite"
    with _setup(db) as st:
        _save(st, 1, _stored_record(seed=1))
    broken = _stored_record(seed=1)
    broken[key] = value
    with sqlite3.connect(db) as c:
        c.execute("UPDATE matches SET record_json = ?", (json.dumps(broken),))
    c.close()
    with Storage(db) as st, pytest.raises(StorageError, match=f"its {key} is"):
        st.load_record("t1-m00001")
    _fails(_invoke(arena, ["replay", "--check", "m00001", "--db", str(db)]), 2, "damaged", key)


def test_a_record_of_a_newer_format_is_named_as_such_not_as_damaged(tmp_path: Path) -> None:
    """Defect (outside organiser): a record of a later format (written by a newer version,
    in a file or in a database shared with it) was "damaged ('format' must be
    'thousand-arena/record/1', got '.../2'); it was changed outside the arena". It says
    which version wrote it now; a format that is no later version is still a wrong shape."""
    newer = dict(_one_deal_record(), format="thousand-arena/record/2")
    with pytest.raises(ReplayError, match="written by a newer Thousand Arena") as info:
        replay(newer)
    assert info.value.newer and "not a match record" not in str(info.value)
    for other in ("thousand-arena/record/0", "thousand-arena/record/x", "other/record/9"):
        with pytest.raises(ReplayError, match="not a match record: 'format' must be") as info:
            replay(dict(_one_deal_record(), format=other))
        assert not info.value.newer
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(newer), encoding="utf-8")
    _fails(_invoke(arena, ["replay", str(p)]), 2, "written by a newer Thousand Arena")
    db = tmp_path / "x.sqlite"
    with _setup(db) as st:
        _save(st, 1, _stored_record(seed=1))
        _save(st, 2, dict(_stored_record(seed=2), format="thousand-arena/record/2"))
    with Storage(db) as st:
        with pytest.raises(StorageError, match="match t1-m00002: a record of format") as e:
            st.load_record("t1-m00002")
        assert "damaged" not in str(e.value) and "outside the arena" not in str(e.value)
    _fails(_invoke(arena, ["leaderboard", "--db", str(db)]), 1, "written by a newer")
