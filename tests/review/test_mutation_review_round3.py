"""Mutation review, round 3: tests for today's code (engine input checks, SDK local
deadlines and bank warning, try's messages, tournament config and runner checks, the
referee's token-less calls) that a plausible bug in it (a mutation) left passing. Each
asserts behaviour the code promises."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import re
import resource
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import engine.actions
import sdk.local
from arena.deadlines import MAX_DEADLINE_MS
from engine import (
    PRESETS,
    Action,
    Card,
    Game,
    Phase,
    PlayerView,
    fallback_action,
    observe,
    parse_cards,
    trick_winner,
)
from sdk import Bot, Deadline, play_local
from sdk.cli import _OncePerSite
from sdk.cli import main as sdk_main
from sdk.local import play_series
from tests.arena.test_tournament_config import BASE
from tests.engine.test_rule_cases_external import NAMES3, SOLID, F, L, S
from tests.sdk.test_bot_context import SlowOnce
from tests.sdk.test_local_deadline import Sleeper

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from harness import arena  # noqa: E402


@pytest.mark.parametrize(
    ("cards", "trump", "words"),
    [
        # _BEATS has a fifth row, the no-trump one, which both 4 and -1 index
        ([21, 23], 4, "trump must be a Suit or None, got 4"),
        ([21, 23], -1, "trump must be a Suit or None, got -1"),
        ([0, 24], None, "not a card: 24"),  # past the table: a bare IndexError
        ([24], None, "not a card: 24"),  # alone: position 0, as if a card
    ],
)
def test_trick_winner_refuses_the_values_just_past_the_tables(
    cards: list[int], trump: int | None, words: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        trick_winner(cards, trump)
    assert trick_winner([21, 23], 3) == 1 and trick_winner([0, 23], None) == 0


def _hands() -> list[tuple[Card, ...]]:
    return [parse_cards(SOLID[0][s]) for s in (F, S, L)]


@pytest.mark.parametrize(
    ("deal", "words"),
    [
        # a text of two letters is no (hands, talon) pair
        ("ab", "deal 0 must be a pair (hands, talon)"),
        # a mapping of two keys would unpack as its keys
        ({"hands": 1, "talon": 2}, "deal 0 must be a pair (hands, talon)"),
    ],
)
def test_a_deal_that_only_has_two_items_is_not_a_pair(deal: object, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        Game.new("classic", 1, NAMES3, deals={0: deal})  # type: ignore[dict-item]


def test_a_hand_given_as_a_dict_is_refused_not_read_as_its_keys() -> None:
    hands: list[object] = list(_hands())
    hands[S] = dict.fromkeys(_hands()[S])  # the right cards, as a dict's keys
    with pytest.raises(ValueError, match=re.escape(f"seat {S}'s hand must be a sequence")):
        Game.new("classic", 1, NAMES3, deals={0: (hands, parse_cards(SOLID[1]))})  # type: ignore[dict-item]
    talon = dict.fromkeys(parse_cards(SOLID[1]))
    with pytest.raises(ValueError, match="the talon must be a sequence of cards"):
        Game.new("classic", 1, NAMES3, deals={0: (_hands(), talon)})  # type: ignore[dict-item]


def test_fallback_action_is_exported_by_engine_actions_star() -> None:
    """engine exports it and the docs present it: ``from engine.actions import *`` too."""
    space: dict[str, object] = {}
    exec("from engine.actions import *", space)
    assert space["fallback_action"] is engine.actions.fallback_action


def test_a_day_is_the_longest_local_deadline_and_is_allowed() -> None:
    """The arena allows a deadline of a day (MAX_DEADLINE_MS) and a bank as long: so does
    local play, and refuses a millisecond more."""
    day = MAX_DEADLINE_MS
    bot = Sleeper()
    m = play_local([bot, Bot, Bot], seed=1, max_deals=1, decision_ms=day, time_bank_ms=day)
    assert m.incidents == () and bot.seen[0] is not None
    assert (bot.seen[0].limit_s, bot.seen[0].bank_s) == (86_400.0, 86_400.0)
    too_long: list[dict[str, Any]] = [
        {"decision_ms": day + 1},
        {"decision_ms": 1, "time_bank_ms": day + 1},
    ]
    for kwargs in too_long:
        with pytest.raises(ValueError, match=f"must be between . and {day} \\(a day\\)"):
            play_local([Bot, Bot, Bot], seed=1, max_deals=1, **kwargs)


def test_a_timeout_again_is_one_short_line_under_arena_bot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """arena-bot's filter (_OncePerSite) explains a local timeout once; the same method
    timing out again is one line with a count (a slow bot times out at every decision)."""

    class Late(Sleeper):
        # Past 15 ms and no bank, every time; by less than 15 ms, so that the next decision
        # comes before the call ends, and is asked (else it times out unasked:
        # test_author_round39.py).
        naps = (0.02,) * 100

    once = _OncePerSite()
    logger = logging.getLogger("sdk.local")
    logger.addFilter(once)
    try:
        with caplog.at_level(logging.WARNING, logger="sdk.local"):
            play_local([Late, Bot, Bot], seed=1, max_deals=1, decision_ms=15, time_bank_ms=0)
    finally:
        logger.removeFilter(once)
    said = [r.getMessage() for r in caplog.records if "Late." in r.getMessage()]
    assert len(said) >= 2 and "past its deadline of 15 ms" in said[0]
    again = r"Late\.act\(\) \(.*\) timed out \(\d+ ms\) again, 2 times so far \(deal 1, "
    assert any(re.search(again, line) for line in said[1:])


class _Clock:
    """sdk.local's ``time`` for a match: ``monotonic()`` is read twice per decision (asked,
    answered); the answer comes ``step`` seconds after the ask (binary fractions: exact),
    or ``next_step`` once when a bot sets it."""

    def __init__(self, step: float) -> None:
        self.now, self.calls, self.step = 1000.0, 0, step
        self.next_step: float | None = None

    def monotonic(self) -> float:
        self.calls += 1
        if self.calls % 2 == 0:  # the answer
            self.now += self.step if self.next_step is None else self.next_step
            self.next_step = None
        return self.now


def test_a_decision_that_takes_exactly_the_limit_and_the_bank_is_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The referee's timer fires at start + budget: an answer at that instant is late."""
    monkeypatch.setattr(sdk.local, "time", _Clock(0.5))
    m = play_local([Sleeper, Bot, Bot], seed=1, max_deals=1, decision_ms=500, time_bank_ms=0,
                   timed_seats=[0])  # fmt: skip
    assert m.incidents and m.incidents[0].seat == 0 and m.incidents[0].kind == "timeout"


def test_the_bank_is_charged_in_rounded_ms_and_what_is_left_of_it_is_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each decision takes 15.625 ms against 1 ms and a bank of 30: the referee charges
    round(15.625) - 1 = 15 ms, twice; the third decision, with the bank empty, times out."""
    monkeypatch.setattr(sdk.local, "time", _Clock(2**-6))
    bot = Sleeper()
    m = play_local([bot, Bot, Bot], seed=1, max_deals=1, decision_ms=1, time_bank_ms=30,
                   timed_seats=[0])  # fmt: skip
    banks = [round(d.bank_s * 1000) for d in bot.seen[:3] if d is not None]
    assert banks == [30, 15, 0]
    timeouts = [x for x in m.incidents if x.kind == "timeout"]
    assert timeouts and timeouts[0].detail.startswith("no decision within 1 ms (1 ms + 0 ms")


class _SlowOnce(Bot):
    """Answers the last legal action; its first decision of deal 2 in the play takes 250 ms
    by ``clock`` (every other one 1 ms)."""

    clock: _Clock
    slow_done = False

    def act(self, view: PlayerView) -> Action:
        if view.deal_number == 1 and view.phase is Phase.PLAYING and not self.slow_done:
            self.slow_done = True
            self.clock.next_step = 0.25
        return view.legal_actions[-1]


def test_the_slowest_decision_is_named_by_match_deal_phase_and_method(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock(2**-10)
    monkeypatch.setattr(sdk.local, "time", clock)
    _SlowOnce.clock = clock
    m = play_local([_SlowOnce, Bot, Bot], seed=1, max_deals=2)
    assert m.slowest[0] == 0.25
    assert re.fullmatch(
        r"match local-1, deal 2, playing: _SlowOnce\.act\(\) \(.*\)", m.slowest_at[0]
    )
    r = play_series(_SlowOnce, [("bot", Bot)], 2, max_deals=2)
    tried = r.entries[0]
    assert tried.slowest == 0.25 and re.match(
        r"match local-\d-\d, deal 2, playing", tried.slowest_at
    )


def test_a_series_refuses_bad_timing_before_making_any_bot() -> None:
    made = []

    class Counted(Bot):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    for n in (0, 2):  # (no match to play: refused all the same)
        with pytest.raises(ValueError, match="decision_ms must be between 1 and"):
            play_series(Counted, [("bot", Bot)], n, decision_ms=0)
    assert made == []


@pytest.mark.parametrize("seat", [True, -1])
def test_timed_seats_takes_seat_numbers_only(seat: object) -> None:
    """True would time seat 1 and -1 the last seat, each unasked for."""
    with pytest.raises(
        ValueError, match=re.escape(f"timed_seats: no seat {seat!r} in a match of 3")
    ):
        play_local([Bot, Bot, Bot], seed=1, max_deals=1, decision_ms=10, timed_seats=[seat])  # type: ignore[list-item]


def test_a_series_counts_as_timeouts_only_the_timeouts() -> None:
    class Raises(Bot):
        def act(self, view: PlayerView) -> Action:
            raise ValueError("boom")

    r = play_series(Raises, [("bot", Bot)], 2, max_deals=1, decision_ms=60_000)
    assert r.entries[0].incidents > 0 and r.entries[0].timeouts == 0


@pytest.mark.parametrize(
    ("vs", "ruleset", "words"),
    [
        # classic seats 3 at any count: said as such, not "at most 3 players"
        ("random,random,random", "classic", "the ruleset seats 3 players: name at most 2 ("),
        # a house-rule file on 1001 keeps its name at 4 players: no "(as ...)" of itself
        (
            "random,random,random,random",
            str(ROOT / "rulesets" / "tournament-1001.toml"),
            "the ruleset seats at most 4 players: name at most 3 (",
        ),
    ],
)
def test_try_too_many_opponents_names_the_seats_without_a_redundant_name(
    vs: str, ruleset: str, words: str
) -> None:
    r = CliRunner().invoke(sdk_main, ["try", "random", "--vs", vs, "--ruleset", ruleset, "-n", "1"])
    said = " ".join(r.output.split())
    assert r.exit_code == 2 and words in said, said


STOPS_FILE = """
from sdk import Bot

class Stop(Bot):
    def act(self, view):
        raise KeyboardInterrupt  # as Ctrl-C in the first decision
"""


def test_try_interrupted_in_its_only_match_says_1_match(tmp_path: Path) -> None:
    (tmp_path / "stop.py").write_text(STOPS_FILE)
    bot = f"{tmp_path / 'stop.py'}:Stop"
    r = CliRunner().invoke(sdk_main, ["try", bot, "--vs", "random", "-n", "1"])
    assert r.exit_code == 130
    assert "interrupted after 0 of 1 match: no results" in r.output, r.output


@pytest.mark.parametrize("command", ["try", "human"])
def test_seed_help_says_how_the_matches_deal_from_it(command: str) -> None:
    r = CliRunner().invoke(sdk_main, [command, "--help"])
    assert r.exit_code == 0 and "SEED + i // players" in " ".join(r.output.split())


def test_the_bank_warning_says_what_the_bank_paid_and_what_is_left(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """By a fixed clock (100.75 s): 750 ms taken. At exactly the limit nothing is said (the
    bank paid nothing); over it, the bank pays the excess up to what it holds."""
    import sdk.client
    from sdk.client import _Match, _tell_bank

    monkeypatch.setattr(sdk.client, "time", SimpleNamespace(monotonic=lambda: 100.75))
    game = Game.new("classic", 1, NAMES3)
    assert game.to_act is not None
    view = observe(game, game.to_act)
    said = []
    for limit, bank in ((0.75, 1.0), (0.25, 1.0), (0.25, 0.125)):
        m = _Match("h1", 0, game.ruleset, None, view)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="sdk.client"):
            _tell_bank(m, Bot(), view, Deadline(limit, bank, 100.0))
        said.append(" ".join(r.getMessage() for r in caplog.records))
        assert m.bank_told == bool(said[-1])
    assert said[0] == ""
    assert "took 750 ms" in said[1] and "the time bank paid 500 ms, 500 ms of it left" in said[1]
    # past the limit and the bank: a timeout, not a payment (review of the day's changes)
    assert "past the limit of 250 ms and the 125 ms left of the time bank: a timeout" in said[2]


def test_a_refusal_names_the_decision_only_when_it_is_the_one_the_bot_was_last_asked() -> None:
    """The match's last view is request r2's: a refusal of r1 (a late answer, a timeout
    met as r2 came) is not said to be r2's decision; a fallback no action can be read
    from still leaves the decision named."""
    from arena.protocol import action_to_pb
    from arena.v1 import arena_pb2 as pb
    from sdk.client import BotRunner, _Match

    game = Game.new("classic", 1, NAMES3)
    assert game.to_act is not None
    view = observe(game, game.to_act)
    runner = BotRunner(Bot, "127.0.0.1:1", "tok")
    runner._matches["m1"] = _Match(
        "m1", view.seat, game.ruleset, Bot(), view, view_rid="r2", asked_rid="r2"
    )
    played = action_to_pb(fallback_action(view.legal_actions))

    def context(rid: str, fallback: pb.Action | None) -> str:
        r = pb.DecisionRejected(match_id="m1", request_id=rid)
        if fallback is not None:
            r.fallback.CopyFrom(fallback)
        return runner._rejected_context(r)

    which = context("r2", None)
    assert re.fullmatch(r" \(Bot\.\w+\(\) \(bot\.py:\d+\), deal 1, bidding\)", which), which
    assert context("r2", played) == f"{which}; the referee played pass instead"
    assert context("r1", played) == "; the referee played pass instead"
    assert context("r2", pb.Action()) == which  # (an action of no kind)


def test_the_hidden_folder_hint_for_a_nested_module_and_not_for_the_arena_s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """./bots/sub/mybot.py named as bots.sub.mybot is hidden by the bundled ``bots`` too
    (its first part is what is imported already); run from the arena's own folder, where
    ./bots *is* the bundled package, or from one with no ./bots, "no module" is all there
    is to say."""
    import bots
    from sdk.loader import BotLoadError, load_bot

    (tmp_path / "bots" / "sub").mkdir(parents=True)
    (tmp_path / "bots" / "sub" / "mybot.py").write_text("from sdk import Bot\nclass B(Bot): ...\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BotLoadError) as info:
        load_bot("bots.sub.mybot:B")
    assert f"bots is imported already, from {Path(bots.__file__).parent}" in str(info.value)
    assert "name the file, bots/sub/mybot.py:Class" in str(info.value)
    (tmp_path / "empty").mkdir()  # (no ./bots at all: nothing is hidden)
    for cwd in (Path(bots.__file__).parents[1], tmp_path / "empty"):
        monkeypatch.chdir(cwd)
        with pytest.raises(BotLoadError) as info:
            load_bot("bots.no_such_bot_xyz:B")
        assert "imported already" not in str(info.value) and "no module" in str(info.value)


class _QuickButSlowOnce(SlowOnce):
    """Says it is quick (asked on the event loop); its first decision takes 30 ms."""

    quick = True
    first_s = 0.03


def test_a_quick_bot_that_used_the_time_bank_is_told_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``quick`` bot's decision is made on the event loop, not in the worker thread: the
    bank warning is said there too (its first decision is its only slow one)."""

    async def one_match() -> None:
        async with arena(tmp_path, decision_ms=5, time_bank_ms=600_000) as a:
            names = ["q0", "q1", "q2"]
            tasks = await a.runners(names, [_QuickButSlowOnce, Bot, Bot], 1)
            rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
            await a.referee.run_match("q1", rules, 1, names)
            await asyncio.wait_for(asyncio.gather(*tasks), 60)

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(one_match())
    said = [r.getMessage() for r in caplog.records if "the time bank paid" in r.getMessage()]
    assert any("_QuickButSlowOnce.act()" in s and "over the limit of 5 ms" in s for s in said)


def test_leaderboard_out_a_file_that_cannot_be_written_says_why_not_that_it_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "a file, not a directory" is for mkdir's "File exists": a file that is there to be
    written but cannot be (read-only for this user; root may write any) says its reason."""
    import os

    from arena.cli import main as arena_main
    from tests.cli.test_bad_input import _stored_tournament

    path = _stored_tournament(tmp_path)
    target = tmp_path / "lb.json"
    target.write_text("old")
    write_text = Path.write_text

    def refused(self: Path, *args: Any, **kwargs: Any) -> int:
        if self == target:
            raise PermissionError(13, "Permission denied", str(self))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refused)
    # (the file is now written beside and renamed over: whether it may be written is asked)
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **k: p != target and access(p, m, **k))
    args = ["leaderboard", "--config", str(path), "--format", "json", "--out", str(target)]
    r = CliRunner().invoke(arena_main, args)
    said = " ".join(r.output.split())
    assert r.exit_code == 1, said
    assert f"--out {target}: cannot write {target}: Permission denied" in said
    assert target.read_text() == "old"


@pytest.mark.parametrize(
    ("limits", "set_to"),
    [
        ((1024, 4096), (4096, 4096)),
        # an unlimited hard limit cannot be the soft one (Linux caps both at fs.nr_open)
        ((1024, resource.RLIM_INFINITY), (1 << 20, resource.RLIM_INFINITY)),
        ((resource.RLIM_INFINITY, resource.RLIM_INFINITY), None),  # never lowered
        ((4096, 4096), None),
        ((1 << 20, resource.RLIM_INFINITY), None),
    ],
)
def test_raise_open_files_limit_raises_the_soft_limit_only(
    monkeypatch: pytest.MonkeyPatch, limits: tuple[int, int], set_to: tuple[int, int] | None
) -> None:
    import arena.cli.options as options

    calls: list[tuple[int, int]] = []
    fake = SimpleNamespace(
        RLIMIT_NOFILE=resource.RLIMIT_NOFILE,
        RLIM_INFINITY=resource.RLIM_INFINITY,
        getrlimit=lambda _which: limits,
        setrlimit=lambda _which, new: calls.append(new),
    )
    monkeypatch.setattr(options, "resource", fake)
    options.raise_open_files_limit()
    assert calls == ([] if set_to is None else [set_to])


def test_raise_open_files_limit_keeps_the_soft_limit_when_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import arena.cli.options as options

    def refuse(_which: int, _new: tuple[int, int]) -> None:
        raise PermissionError(1, "Operation not permitted")

    fake = SimpleNamespace(RLIMIT_NOFILE=resource.RLIMIT_NOFILE, RLIM_INFINITY=-1,
                           getrlimit=lambda _which: (1024, 4096), setrlimit=refuse)  # fmt: skip
    monkeypatch.setattr(options, "resource", fake)
    options.raise_open_files_limit()  # (said nothing, raised nothing: as before)


def test_file_in_the_way_finds_a_dangling_link_and_passes_over_a_name_too_long(
    tmp_path: Path,
) -> None:
    from arena.storage import file_in_the_way

    (tmp_path / "file").write_text("")
    assert file_in_the_way(tmp_path / "file" / "a" / "b") == tmp_path / "file"
    assert file_in_the_way(tmp_path / "a" / "b") is None  # nothing there yet: no file
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")  # mkdir says "File exists" too
    assert file_in_the_way(tmp_path / "link" / "db.sqlite") == tmp_path / "link"
    # (os.stat says "File name too long": that is no file in the way)
    assert file_in_the_way(tmp_path / ("x" * 300) / "db.sqlite") is None


def _bad_metadata_record(value: bytes) -> logging.LogRecord:
    """A record as grpc.aio logs a metadata value that is not UTF-8: an ERROR with a
    traceback."""
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        "grpc._cython.cygrpc", logging.ERROR, "cygrpc", 1, "Invalid encoding on %s", (value,),
        exc_info,
    )  # fmt: skip


def test_the_bad_metadata_filter_counts_what_it_left_out_and_leaves_other_lines_be() -> None:
    """The filter's own arithmetic (the transport test sees only "at most 20 in 10 s"):
    past the limit a line is dropped and counted; the next one logged says how many, once;
    a value is shown cut to 100 characters; other lines of gRPC's pass untouched."""
    from arena.referee.server import _BadMetadataLogged
    from arena.referee.sessions import RateMeter

    async def main() -> list[str | None]:
        # The event loop's clock set by hand: a pause of this process between two lines
        # must not move the window (by the real clock, a pause of 0.2 s between the first
        # and the third line let the third one through).
        now = [0.0]
        loop = asyncio.get_running_loop()
        loop.time = lambda: now[0]  # type: ignore[method-assign]
        f = _BadMetadataLogged()
        f.logged = RateMeter(2, 0.2)  # (20 in 10 s, shortened)
        said: list[str | None] = []
        for i in range(5):
            if i == 3:
                now[0] = 0.25  # the window has passed
            r = _bad_metadata_record(b"\xff" * (60 if i == 0 else 1))
            if f.filter(r):
                assert r.levelno == logging.WARNING and r.exc_info is None
                said.append(r.getMessage())
            else:
                said.append(None)
        other = logging.LogRecord("grpc._cython.cygrpc", logging.ERROR, "x", 1, "other", (), None)
        assert f.filter(other) and other.getMessage() == "other"
        assert other.levelno == logging.ERROR
        return said

    said = asyncio.run(main())
    head = "a call's metadata holds a value that is not UTF-8 (read as Latin-1): "
    assert said[0] == head + repr(b"\xff" * 60)[:100]
    assert said[1] == head + "b'\\xff'" and said[2] is None
    assert said[3] == head + "b'\\xff' (1 more not logged)"
    assert said[4] == head + "b'\\xff'"  # (counted once)
    # Off an event loop (no window to count in) the line is kept, as one line all the same.
    f = _BadMetadataLogged()
    r = _bad_metadata_record(b"\xfe")
    assert f.filter(r) and r.levelno == logging.WARNING and r.exc_info is None


def test_the_tokenless_request_wait_is_the_one_the_referee_doc_states() -> None:
    from arena.referee.server import TOKENLESS_REQUEST_S

    doc = " ".join((ROOT / "docs" / "referee.md").read_text(encoding="utf-8").split())
    assert f"within {TOKENLESS_REQUEST_S:g} s (`TOKENLESS_REQUEST_S`)" in doc


def test_the_bad_metadata_filter_logs_20_lines_per_10_s() -> None:
    """As docs/referee.md states, by the event loop's clock (set by hand here): the 21st
    line within 10 s is left out, and so is one at 9.9 s; one at 10.1 s is logged."""
    from arena.referee.core import REFUSALS_LOGGED
    from arena.referee.server import _BadMetadataLogged

    async def main() -> list[bool]:
        now = [0.0]
        loop = asyncio.get_running_loop()
        loop.time = lambda: now[0]  # type: ignore[method-assign]
        f = _BadMetadataLogged()
        kept = [f.filter(_bad_metadata_record(b"\xff")) for _ in range(REFUSALS_LOGGED + 1)]
        now[0] = 9.9
        kept.append(f.filter(_bad_metadata_record(b"\xff")))
        now[0] = 10.1
        kept.append(f.filter(_bad_metadata_record(b"\xff")))
        return kept

    assert REFUSALS_LOGGED == 20
    assert asyncio.run(main()) == [True] * 20 + [False, False, True]


def test_a_command_bot_s_files_are_its_py_files_named_with_or_without_a_class(
    tmp_path: Path,
) -> None:
    """`mybot.py:Lowest` names mybot.py (the last colon parts the class off, so a file
    name with a colon in it is one too); `data:x` names no file "data": only a .py file
    is taken from before a colon."""
    from arena.tournament.config import _code_files

    for name in ("mybot.py", "a:b.py", "data"):
        (tmp_path / name).write_text("")
    command = ["arena-bot", "run", "mybot.py:Lowest", "a:b.py:Cls", "data:x", "--seed", "1"]
    assert _code_files(None, command, tmp_path) == [tmp_path / "mybot.py", tmp_path / "a:b.py"]


def test_a_key_set_inside_an_inline_table_already_written_is_named_with_its_line(
    tmp_path: Path,
) -> None:
    """tomllib's third words for a key given twice, "Cannot mutate immutable namespace":
    ``bots.a = {bot = "random"}`` then ``bots.a.env.X = "1"``, one line too many; and a
    key with a bidi control in it is shown escaped (the key only: a value may be a secret)."""
    from tests.arena.test_tournament_config import _error

    text = BASE.replace('a = "random"', 'a = {bot = "random"}') + 'a.env."X\u202e" = "1"\n'
    e = _error(tmp_path, text)
    assert e.key == "file"
    assert "Cannot mutate immutable namespace" in str(e)
    assert 'line 8 (a.env."X\\u202e" = ...) sets a key that the file already set' in str(e)


def test_identity_changes_names_a_name_only_when_both_have_one() -> None:
    from arena.tournament.config import identity_changes

    assert identity_changes({"name": "t"}, {"name": "cup"}) == ['name "t" → "cup"']
    assert identity_changes({"seed": 1}, {"name": "cup", "seed": 1}) == []
    assert identity_changes({"name": "t", "seed": 1}, {"seed": 1}) == []


@pytest.mark.parametrize(
    ("text", "override", "words"),
    [
        # a ruleset file is no preset: no `preset = "rules.toml"` is suggested (the file is
        # named as the place to set it, round 47)
        (
            BASE.replace('ruleset = "classic"', 'ruleset = "rules.toml"'),
            "ruleset.must_beat=true",
            "cannot set inside 'ruleset': it is a string ('rules.toml'), not a table; it names "
            "a ruleset file: set must_beat = true in that file (or in a copy of it, named by "
            "--set ruleset=PATH)",
        ),
        # a string deeper than the bot's own entry is no bot: no `bot = "x"` is suggested
        (
            BASE.replace('a = "random"', 'a = {bot = "random", env = "x"}'),
            "bots.a.env.X=1",
            "cannot set inside 'env': it is a string ('x'), not a table",
        ),
    ],
)
def test_the_set_it_whole_hint_is_only_for_a_preset_or_a_bot_s_entry(
    tmp_path: Path, text: str, override: str, words: str
) -> None:
    from tests.arena.test_tournament_config import _error

    e = _error(tmp_path, text, (override,))
    assert str(e).endswith(words), str(e)


def test_a_bot_file_past_the_digest_s_size_is_not_compiled_with_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compile check reads the file whole: one past _DIGEST_MAX_BYTES (4 MiB) is left to
    the bot's launch, as its docs say (shortened to 64 bytes here)."""
    import arena.tournament.config as config
    from tests.arena.test_tournament_config import _write

    (tmp_path / "big.py").write_text("def broken(:\n" + "#" * 100 + "\n")
    text = BASE.replace('a = "random"', 'a = "big.py"')
    with pytest.raises(config.ConfigError, match=r"big\.py, line 1: SyntaxError"):
        config.load_config(_write(tmp_path, text))
    monkeypatch.setattr(config, "_DIGEST_MAX_BYTES", 64)
    assert config.load_config(_write(tmp_path, text)).bots[0].name == "a"


def test_a_bot_file_with_a_nul_byte_is_refused_naming_no_line(tmp_path: Path) -> None:
    """compile() names no line for a NUL byte (SyntaxError.lineno None): the refusal says
    no "line None"."""
    from arena.tournament.config import ConfigError, load_config
    from tests.arena.test_tournament_config import _write

    (tmp_path / "nul.py").write_bytes(b"from sdk import Bot\nx = 1\0\n")
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, BASE.replace('a = "random"', 'a = "nul.py"')))
    said = str(e.value)  # (SyntaxError; a ValueError from older Pythons: "not Python source")
    assert f"bots.a.bot: {tmp_path / 'nul.py'}: " in said, said
    assert said.endswith("source code string cannot contain null bytes") and ", line " not in said


def test_a_bot_file_is_compiled_without_the_config_module_s_future_imports(
    tmp_path: Path,
) -> None:
    """arena/tournament/config.py has ``from __future__ import annotations``; the bot file
    does not, and is valid Python without it (a yield in an annotation is not, with it)."""
    from arena.tournament.config import load_config
    from tests.arena.test_tournament_config import _write

    (tmp_path / "gen.py").write_text(
        "from bots.random_bot import RandomBot as BOT\n\ndef f():\n    x: (yield) = 1\n"
    )
    cfg = load_config(_write(tmp_path, BASE.replace('a = "random"', 'a = "gen.py"')))
    assert cfg.bots[0].name == "a"


def _tls_cfg(server_name: str, kinds: tuple[str, ...]) -> Any:
    """What _check_server_name reads of a config: its [tls] and its bots' kinds."""
    return SimpleNamespace(
        tls=SimpleNamespace(server_name=server_name),
        bots=[SimpleNamespace(kind=k) for k in kinds],
    )


def test_the_tls_server_name_check_is_for_the_bots_that_connect_to_it() -> None:
    """The bundled and module:Class bots (kind "sdk") connect to [tls] server_name, as the
    runner's docs say: a name no resolver knows is refused with them, not with command or
    remote bots alone; a label too long for IDNA is refused naming it, not a UnicodeError."""
    from arena.tournament.runner import TournamentError, _check_server_name

    unknown = "nosuchhost.invalid"
    _check_server_name(_tls_cfg(unknown, ("command", "remote", "command")))
    with pytest.raises(TournamentError, match=r"cannot resolve tls\.server_name 'nosuchhost"):
        _check_server_name(_tls_cfg(unknown, ("command", "sdk", "remote")))
    too_long = "x" * 64 + ".example"
    with pytest.raises(TournamentError, match=r"cannot resolve tls\.server_name 'xxx.*label"):
        _check_server_name(_tls_cfg(too_long, ("sdk",)))


def test_an_out_directory_there_but_read_only_is_found_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdir succeeds on a directory that is there: a read-only mount (or, for another
    user, a directory not theirs) is found by writing a file in it, as the leaderboard's
    .tmp files are written (made to fail here: root writes anywhere)."""
    import arena.tournament.runner as runner

    def read_only(**_kwargs: Any) -> Any:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(runner, "tempfile", SimpleNamespace(NamedTemporaryFile=read_only))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(runner.TournamentError) as e:
        runner._check_out(out)
    assert str(e.value) == (
        f"cannot write the leaderboard files to {out}: Read-only file system "
        "(check the `out` directory, --out)"
    )


def test_an_out_directory_under_a_file_names_the_file(tmp_path: Path) -> None:
    import arena.tournament.runner as runner

    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out"
    with pytest.raises(runner.TournamentError) as e:
        runner._check_out(out)
    assert str(e.value) == (
        f"cannot write the leaderboard files to {out}: {tmp_path / 'file'} is a file "
        "(check the `out` directory, --out)"
    )


class _TokenlessContext:
    """What a token-less call's handler reads of its grpc.aio context."""

    def peer(self) -> str:
        return "ipv4:127.0.0.1:5000"

    async def read(self) -> Any:
        from arena.v1 import arena_pb2 as pb

        return pb.GetInfoRequest()

    async def abort(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"refused: {args}")


def _streaming(gate: asyncio.Event) -> Any:
    """A unary-stream handler (as health's Watch) that raises once ``gate`` is set,
    wrapped as the referee serves it."""
    import grpc

    from arena.referee.server import _OpenCalls, _parsing_refused
    from arena.v1 import arena_pb2 as pb

    async def failing(_request: Any, _context: Any) -> None:
        await gate.wait()
        raise ValueError("boom")

    handler = grpc.unary_stream_rpc_method_handler(
        failing, request_deserializer=pb.GetInfoRequest.FromString
    )
    return _parsing_refused(handler, _OpenCalls(asyncio.Event())).stream_stream


def test_a_streaming_tokenless_handler_s_error_is_left_to_grpc_and_always_retrieved() -> None:
    """Its error is raised from the wrapper (gRPC reports it, the call ends with a status);
    when the call is cancelled just as it fails, the error is still retrieved: no "Task
    exception was never retrieved" from asyncio."""
    never_retrieved: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, ctx: never_retrieved.append(str(ctx.get("message")))
        )
        gate = asyncio.Event()
        gate.set()
        with pytest.raises(ValueError, match="boom"):
            await _streaming(gate)(None, _TokenlessContext())
        gate = asyncio.Event()
        call = asyncio.ensure_future(_streaming(gate)(None, _TokenlessContext()))
        for _ in range(5):  # (to its wait for the inner call)
            await asyncio.sleep(0)
        gate.set()  # the inner call fails first, then the call is cancelled
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        del call
        gc.collect()

    asyncio.run(main())
    gc.collect()
    assert never_retrieved == []
