"""Mutation review, round 2: tests for today's code that a plausible bug in it (a mutation)
left passing. Each asserts behaviour the code promises."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import ClassVar

import pytest

import engine.rules as rules
from arena.referee import Referee, RefereeConfig
from arena.v1 import arena_pb2 as pb
from engine import Action, DealResult, PlayerView
from engine.rules import TomlFileError, read_toml_file
from sdk import Bot


def test_the_wait_for_away_results_is_for_the_bots_named_only() -> None:
    """The runner waits for its remote bots only: a bot away with a result kept for it,
    not named, is not waited for (up to the grace period, which may be hours)."""

    async def main() -> tuple[list[str], list[str], list[str]]:
        ref = Referee(RefereeConfig())
        for n in ("x", "y"):
            ref.add_bot(n, f"tok-{n}")
            end = pb.ServerMessage(match_ended=pb.MatchEnded(match_id=f"m-{n}"))
            ref.session(n).send_end(f"m-{n}", end)  # while away: kept
        loop = asyncio.get_running_loop()
        t = loop.time()
        away = await ref.wait_for_away_results(0.2, ["y"])
        assert loop.time() - t >= 0.15  # (y stays away: waited for)
        return ref.away_with_results(["y"]), away, await ref.wait_for_away_results(0.2, [])

    assert asyncio.run(main()) == (["y"], ["y"], [])


def test_a_toml_file_past_the_limit_is_refused_with_its_size_and_one_at_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rules, "MAX_TOML_BYTES", 10)
    at = tmp_path / "at.toml"
    at.write_bytes(b"a = 12345\n")  # 10 bytes
    assert read_toml_file(at) == {"a": 12345}
    past = tmp_path / "past.toml"
    past.write_bytes(b"a = 123456\n")  # 11 bytes
    with pytest.raises(
        TomlFileError, match=r"too large for a TOML file here: 11 bytes \(at most 10\)"
    ):
        read_toml_file(past)


@pytest.mark.parametrize("bom", [b"\xff\xfe", b"\xfe\xff"])
def test_a_utf16_toml_file_of_either_byte_order_is_named_as_such(
    tmp_path: Path, bom: bytes
) -> None:
    path = tmp_path / "r.toml"
    codec = "utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"
    path.write_bytes(bom + 'name = "x"\n'.encode(codec))
    with pytest.raises(TomlFileError, match="not UTF-8 text but UTF-16"):
        read_toml_file(path)


def _config(tmp: Path, extra: str = "") -> Path:
    p = tmp / "t.toml"
    p.write_text(
        f'name = "m2"\nmax_deals = 2\ndb = "{tmp / "t.sqlite"}"\nout = "{tmp / "out"}"\n'
        f'{extra}bots = ["random", "greedy", "first"]\n',
        encoding="utf-8",
    )
    return p


def test_a_bad_value_set_twice_is_blamed_on_the_last_override(tmp_path: Path) -> None:
    """The last ``--set`` of a key wins, and so it is the one named."""
    from arena.tournament.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path), ["max_deals=5", "max_deals=-3"])
    assert "(from --set max_deals=-3, not from the file)" in str(e.value), str(e.value)


def test_an_unknown_table_made_by_an_override_is_blamed_on_it(tmp_path: Path) -> None:
    """Defect: `--set dedlines.decision_ms=5` said "t.toml: dedlines: unknown key ..." with
    nothing of the --set, as if the file held a `dedlines` table."""
    from arena.tournament.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path), ["dedlines.decision_ms=5"])
    assert "dedlines: unknown key (did you mean 'deadlines'?)" in str(e.value), str(e.value)
    assert "(from --set dedlines.decision_ms=5, not from the file)" in str(e.value)
    # the file's own unknown table stays the file's, whatever is set inside it
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, "dedlines = {x = 1}\n"), ["dedlines.decision_ms=5"])
    assert "not from the file" not in str(e.value), str(e.value)


def test_an_unreadable_ruleset_file_is_named_once_without_its_key(tmp_path: Path) -> None:
    """A ruleset file that is no TOML: the config's key and the file's path, and the reason
    once (not "<path>: file: '<path>': ...")."""
    from arena.tournament.config import ConfigError, load_config

    (tmp_path / "house.toml").write_text("not = = toml\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, 'ruleset = "house.toml"\n'))
    text = str(e.value)
    assert "ruleset:" in text and "not valid TOML" in text, text
    assert "file:" not in text and text.count("house.toml") == 1, text


def test_the_newest_database_is_the_one_written_last(tmp_path: Path) -> None:
    import os

    from arena.storage import newest_database

    for name, mtime in (
        ("old.sqlite", 1_000_000),
        ("new.sqlite", 2_000_000),
        ("mid.sqlite", 1_500_000),
    ):
        (tmp_path / name).write_bytes(b"")
        os.utime(tmp_path / name, (mtime, mtime))
    assert newest_database(tmp_path) == tmp_path / "new.sqlite"


def test_a_record_file_past_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused from its size, not from a MemoryError while reading it."""
    import arena.storage as storage

    path = tmp_path / "m.json"
    path.write_text('{"players": ["a", "b", "c"], "deals": []}', encoding="utf-8")
    size = path.stat().st_size
    monkeypatch.setattr(storage, "MAX_RECORD_FILE_BYTES", size - 1)
    with pytest.raises(
        LookupError,
        match=rf"too large to read into memory \({size:,} bytes; at most {size - 1:,}\)",
    ):
        storage.resolve_record(str(path), None)
    monkeypatch.setattr(storage, "MAX_RECORD_FILE_BYTES", size)
    assert storage.resolve_record(str(path), None)["players"] == ["a", "b", "c"]


def test_a_seat_one_deal_from_the_barrel_end_is_said_in_the_singular() -> None:
    import dataclasses

    from rich.console import Console

    from arena.render import render_record
    from engine import PRESETS, Game

    rules = dataclasses.replace(PRESETS["classic"], barrel_mode="one", max_deals=1)
    rec = Game.new(rules, 4, ["ann", "bob", "cid"], scores=[0, 880, 0], barrel=[0, 1, 0]).record()
    console = Console(width=200, record=True)
    console.print(render_record(rec))
    text = console.export_text()
    assert "on the barrel: bob (1), 1 deal left" in text, text


def test_an_open_arena_that_has_ended_is_finished_and_mu_sigma_are_in_their_columns(
    tmp_path: Path,
) -> None:
    """`arena serve --db` without --matches (0 matches in all) once it has finished, and
    the markdown row's μ and σ under their own headers."""
    import dataclasses

    from arena.leaderboard import build_leaderboard
    from arena.leaderboard.render import to_markdown
    from arena.storage import Storage
    from tests.arena.test_leaderboard_audit_round2 import _one_match_db

    db = _one_match_db(tmp_path / "open.sqlite", total=0)
    with Storage.open_readonly(db) as st:
        lb = build_leaderboard(st, "t1")
    assert lb.total_matches == 0
    done = dataclasses.replace(lb, finished_at="2026-12-02T05:00:00")
    assert to_markdown(done).splitlines()[0].endswith("(finished)")
    lb.rows[0] = dataclasses.replace(lb.rows[0], mu=31.25, sigma=4.5)
    lines = to_markdown(lb).splitlines()
    header = next(line for line in lines if line.startswith("| rank |"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in lines if f"| {lb.rows[0].bot} |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[cols.index("μ")] == "31.25" and cells[cols.index("σ")] == "4.50", (cols, cells)


@pytest.mark.parametrize("name", ["declarer", "dealer"])
def test_a_deal_result_naming_the_seat_past_the_last_is_refused(name: str) -> None:
    from arena.protocol import MalformedMessageError, deal_result_from_pb

    fields = {"deal_number": 0, "dealer": 0, "declarer": 1, "outcome": "made"}
    per_seat = ("card_points", "marriage_points", "takes", "deltas", "scores")
    msg = pb.DealResult(**fields, **{k: [0, 0, 0] for k in per_seat})  # type: ignore[arg-type]
    assert deal_result_from_pb(msg, 3).declarer == 1
    setattr(msg, name, 3)
    with pytest.raises(MalformedMessageError, match="no seat 3 at a 3-player table"):
        deal_result_from_pb(msg, 3)


def test_a_resumption_that_changes_the_ruleset_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    """As one that changes the seat: a match under way does not change its rules."""
    import dataclasses
    import logging
    from collections.abc import AsyncIterator

    from arena.protocol import ruleset_to_pb
    from tests.sdk.test_hostile_arena import WELCOME, Out, Stream, _game, play, request, started
    from tests.sdk.test_hostile_arena_round2 import Recorder

    Recorder.seen = []
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        again = started("m1", g)
        again.match_started.resumed = True
        other = dataclasses.replace(g.ruleset, name="other", target=g.ruleset.target + 500)
        again.match_started.ruleset.CopyFrom(ruleset_to_pb(other))
        yield again
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Recorder, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert "MatchStarted resumes the match under ruleset 'other'" in caplog.text, caplog.text
    assert "refused" in caplog.text and "match m1 resumed" not in caplog.text


def test_a_request_with_a_legal_give_of_a_card_not_held_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As a legal play of a card not held: a give is of a card of the hand too."""
    import logging
    from collections.abc import AsyncIterator

    from arena.protocol import action_to_pb
    from engine import DECK, Give
    from tests.sdk.test_hostile_arena import WELCOME, Out, Stream, _game, play, request, started
    from tests.sdk.test_hostile_arena_round2 import Recorder

    Recorder.seen = []
    g = _game()
    bad = request("m1", g, "1")
    v = bad.decision_request.view
    held = {(c.suit, c.rank) for c in v.hand}
    card = next(c for c in DECK if (c.suit + 1, c.rank + 1) not in held)
    del v.legal_actions[:]
    v.legal_actions.append(action_to_pb(Give(card, (v.seat + 1) % len(v.players))))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield bad
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Recorder, script)
    assert arena.streams[0].decided() == [("m1", "2")]
    assert (
        "malformed decision_request from the arena (match m1), ignored: view.legal_actions"
        in caplog.text
    )


def test_a_superseding_request_is_asked_with_its_own_view(caplog: pytest.LogCaptureFixture) -> None:
    """The newest request replaces the one waiting for the bot: its id, and its view (the
    bot decides on the view of the request it answers)."""
    import logging
    from collections.abc import AsyncIterator

    from tests.sdk.test_hostile_arena import (
        Out,
        Stream,
        _game,
        play,
        request,
    )
    from tests.sdk.test_hostile_arena_round2 import Blocked, busy_in_m1

    g = _game()
    Blocked.reset()
    newest = request("m1", g, "2")
    v = newest.decision_request.view
    assert len(v.legal_actions) > 1 and v.legal_actions[0] != v.legal_actions[-1]
    last = pb.Action()
    last.CopyFrom(v.legal_actions[-1])
    del v.legal_actions[:]
    v.legal_actions.append(last)
    got: list[pb.Decision] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        async for m in busy_in_m1(g):
            yield m
        yield pb.ServerMessage(batch=pb.Batch(messages=[request("m1", g, "1"), newest]))
        yield request("m2", g, "1")  # answered: the batch before it has been read
        d = await s.decision()
        assert d is not None
        got.append(d)
        Blocked.release.set()
        while (d := await s.decision()) is not None:
            got.append(d)
            if (d.match_id, d.request_id) == ("m1", "2"):
                break

    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            play(Blocked, script)
    finally:
        Blocked.release.set()
    assert [(d.match_id, d.request_id) for d in got] == [("m2", "1"), ("m1", "0"), ("m1", "2")]
    assert got[-1].action == last


def test_a_match_result_with_scores_but_no_places_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    from collections.abc import AsyncIterator

    from tests.sdk.test_hostile_arena import WELCOME, Out, Stream, _game, play, started
    from tests.sdk.test_hostile_arena_round2 import Results

    g = _game()
    Results.got = []
    bad_end = pb.ServerMessage(match_ended=pb.MatchEnded(
        match_id="m1", result=pb.MatchResult(deals=3, reason="target", scores=[1, 2, 3],
                                             places=[3, 2])))  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield bad_end

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Results, script, matches=1)
    assert summary.matches == 1 and Results.got == []
    assert ("match m1: malformed result from the arena (match_result.places: 2 values for 3 "
            "seats): the match ends without on_match_end") in caplog.text  # fmt: skip


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("db=' '", "db: must not be empty"),
        ("ruleset=' '", "ruleset: must not be empty: name a preset"),
        ("tls={cert=' ', key=' '}", "tls.cert: must not be empty: name a path"),
        (
            "bots={a={command='python x.py', cwd=' '}, b='random', c='greedy'}",
            "bots.a.cwd: must not be empty: name a path",
        ),
    ],
)
def test_a_path_of_blanks_is_refused_as_empty(tmp_path: Path, override: str, said: str) -> None:
    """A blank path (``cwd = " "``) named the config's folder, or a file of blanks in it (and
    ``ruleset = " "`` was looked for as one): a mistake, said to be empty."""
    from arena.tournament.config import ConfigError, load_config

    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path), [override])
    assert said in str(e.value), str(e.value)


def test_a_bot_file_whose_path_is_not_utf8_is_refused(tmp_path: Path) -> None:
    import os

    from arena.tournament.config import ConfigError, parse_config

    folder = tmp_path / os.fsdecode(b"bots-\xff")
    folder.mkdir()
    (folder / "mine.py").write_text("class Mine: ...\n", encoding="utf-8")
    data = {
        "name": "m2", "max_deals": 2, "db": str(tmp_path / "t.sqlite"),
        "out": str(tmp_path / "out"), "ruleset": "classic",
        "bots": {"mine": {"bot": "mine.py:Mine"}, "b": "random", "c": "greedy"},
    }  # fmt: skip
    with pytest.raises(ConfigError, match=r"mine\.bot: .*bots-\\xff.*not UTF-8 text"):
        parse_config(data, source="t.toml", base_dir=folder)


class _BlockedHooked(Bot):
    """Its first call waits until released; records its calls in order."""

    entered = threading.Event()
    release = threading.Event()
    calls: ClassVar[list[str]] = []

    def act(self, view: PlayerView) -> Action:
        if not _BlockedHooked.entered.is_set():
            _BlockedHooked.entered.set()
            _BlockedHooked.release.wait(30)
        _BlockedHooked.calls.append(f"act {view.legal_actions[0]}")
        return view.legal_actions[0]

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        _BlockedHooked.calls.append("on_deal_end")


def test_a_request_waiting_before_a_queued_hook_is_not_replaced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A newer request replaces a waiting one only when nothing is queued after it: with a
    deal's end queued between them, both are asked in the order they came (the hook is not
    overtaken by a request that came after it)."""
    import logging
    from collections.abc import AsyncIterator

    from tests.sdk.test_hostile_arena import (
        WELCOME,
        Out,
        Stream,
        _game,
        deal_ended,
        play,
        request,
        started,
    )

    g = _game()
    _BlockedHooked.entered.clear()
    _BlockedHooked.release.clear()
    _BlockedHooked.calls = []
    got: list[str] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await asyncio.to_thread(_BlockedHooked.entered.wait, 30)
        yield request("m1", g, "1")
        yield pb.ServerMessage(events=[deal_ended("m1")])
        yield request("m1", g, "2")
        await asyncio.sleep(0.2)  # (all read)
        _BlockedHooked.release.set()
        while (d := await s.decision()) is not None:
            got.append(d.request_id)
            if d.request_id == "2":
                break

    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            play(_BlockedHooked, script)
    finally:
        _BlockedHooked.release.set()
    assert got == ["0", "1", "2"]
    assert [c.split()[0] for c in _BlockedHooked.calls] == ["act", "act", "on_deal_end", "act"]
