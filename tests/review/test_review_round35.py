"""Review round 35: a fresh reading of the day's changes (ffc70fa..), each defect found
pinned by a test that failed before its fix, and what was checked without a defect."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from pathlib import Path

import pytest

import sdk.client
from arena.protocol import ruleset_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game
from engine.view import observe
from sdk import Bot, PlayerView


class _SlowStart(Bot):
    """Made at once, but loads its "model" in ``on_match_start``: 1 s, in every match."""

    def on_match_start(self, view: PlayerView) -> None:
        threading.Event().wait(1.0)


class _SlowInit(Bot):
    """Made in 1 s (its "model" loaded in ``__init__``)."""

    def __init__(self) -> None:
        super().__init__()
        threading.Event().wait(1.0)


def _first_request_behind_the_make(kind: type[Bot]) -> list[str]:
    """What the runner logs (sdk.client, warnings) of a match of ``kind`` whose first
    decision request, of 300 ms and no bank, comes with its MatchStarted: while the bot
    is being made, as a first hand's does. Nothing else comes, so it is the request that
    waits (no later one replaces it)."""
    g = Game.new(PRESETS["classic"], 1, ("a", "b", "c"))
    seat = g.to_act
    started = pb.MatchStarted(match_id="m1", seat=seat, players=list(g.players),
                              ruleset=ruleset_to_pb(g.ruleset),
                              view=view_to_pb(observe(g, seat)))  # fmt: skip
    request = pb.DecisionRequest(request_id="r1", match_id="m1", view=view_to_pb(observe(g, seat)),
                                 time_limit_ms=300)  # fmt: skip
    records: list[logging.LogRecord] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                records.append(record)

    async def main() -> None:
        runner = sdk.client.BotRunner(kind, "127.0.0.1:1", "t")
        out = sdk.client._Outbox()
        runner._out = out
        runner._on_match_started(started)
        runner._on_request(request, out)  # (the bot is still being made)
        while (tail := runner._matches["m1"].tail) is not None and not tail.done():
            await tail
        if runner._pool is not None:
            runner._pool.shutdown()

    handler = _Keep()
    logger = logging.getLogger("sdk.client")
    logger.addHandler(handler)
    try:
        asyncio.run(main())
    finally:
        logger.removeHandler(handler)
    return [r.getMessage() for r in records]


def test_a_slow_on_match_start_is_not_blamed_on_init() -> None:
    """Defect: this round's slow-``__init__`` warning fired for any first request that came
    while the bot was being made and then ran out of its time; but the runner makes the
    bot and runs its ``on_match_start`` in one job. A bot made at once whose
    ``on_match_start`` took the decision's time was told "making the bot took 0.0 s
    (_SlowStart()), while the match's first request waited for it, over its limit of 300
    ms: ... load big things once, at import", and its request "expired while the bot was
    still being made (its __init__)": an ``__init__`` it does not have, a time that
    contradicts the warning. The hook is named now, with its time and line."""
    said = _first_request_behind_the_make(_SlowStart)
    assert not [m for m in said if "making the bot took" in m], said
    assert not [m for m in said if "its __init__" in m], said
    line = _SlowStart.on_match_start.__code__.co_firstlineno
    told = [m for m in said if "on_match_start() (" in m and " took " in m]
    assert len(told) == 1, said
    # (the hook's time as measured: at least its 1 s, more on a busy machine)
    assert re.fullmatch(
        rf"match m1: _SlowStart\.on_match_start\(\) \({Path(__file__).name}:{line}\) took "
        r"[1-9][0-9]*\.[0-9] s, while .*",
        told[0],
    ), told
    assert told[0].endswith(
        " s, while the match's first request waited for it, over its limit of 300 ms: it "
        "runs at the start of every match, and its time counts against the match's first "
        "decisions; load big things once, at import"
    ), told
    expired = [m for m in said if "expired while" in m]
    assert expired == [
        "match m1: request r1 (deal 1, bidding) expired while the bot was still in its "
        "on_match_start: not asked (the referee played its fallback)"
    ], said


def test_a_slow_init_is_still_named_as_init() -> None:
    """The other side of the fix above, as this round's author test has it over a real
    arena: an ``__init__`` that took the time is named, once, and the request it held up
    expired "while the bot was still being made (its __init__)"."""
    said = _first_request_behind_the_make(_SlowInit)
    line = _SlowInit.__init__.__code__.co_firstlineno
    told = [m for m in said if "making the bot took" in m]
    assert len(told) == 1, said
    assert re.match(r"match m1: making the bot took [1-9][0-9]*\.[0-9] s \(", told[0]), said
    assert f"(_SlowInit.__init__() ({Path(__file__).name}:{line}))" in told[0]
    assert [m for m in said if "expired while" in m] == [
        "match m1: request r1 (deal 1, bidding) expired while the bot was still being made "
        "(its __init__): not asked (the referee played its fallback)"
    ], said


def test_own_declaration_is_what_the_engine_scores_a_declaration() -> None:
    """Checked, no defect (its 200 is now the engine's ``ACE_MARRIAGE_VALUE``, not a copy):
    ``bots.counting.own_declaration``, which counting and pimc add to a defender's
    declaring lead, is the engine's value of the marriage the card declares (a K or Q:
    its suit's pair; an ace: the four aces, where the ace marriage is played), and 0 for
    a card led without declaring."""
    from bots.counting import own_declaration
    from engine import Card, Play, Rank, Suit
    from engine.cards import mask_of
    from engine.tables import marriages_value

    for suit in Suit:
        pair = marriages_value(
            mask_of([Card.of(Rank.KING, suit), Card.of(Rank.QUEEN, suit)]), False
        )
        aces = marriages_value(mask_of([Card.of(Rank.ACE, s) for s in Suit]), True)
        for rank in Rank:
            card = Card.of(rank, suit)
            assert own_declaration(Play(card)) == 0.0
            if rank in (Rank.KING, Rank.QUEEN):
                assert own_declaration(Play(card, declare=True)) == pair > 0
            elif rank == Rank.ACE:
                assert own_declaration(Play(card, declare=True)) == aces > 0


@pytest.mark.parametrize("flag", ["interrupted", "abandoned"])
def test_a_match_stopped_before_its_first_deal_is_in_deal_1(tmp_path: Path, flag: str) -> None:
    """Defect: this round's ``--check`` line for a match that did not end counted the deal
    as the record's deals less one, so a record that stops before its first deal (no
    deals) read "interrupted in deal -1", and ``arena replay`` "in deal 0", though it
    numbers deals from 1. Both now say the deal the game is in: 1 (``--check`` counted
    from 0 until round 44). A referee's record always holds
    the deal under way, so its lines are as before (this round's replay audit checks
    them on real matches)."""
    from click.testing import CliRunner

    from arena.cli import main

    rec = {"ruleset": "classic", "seed": 5, "players": ["ann", "bob", "cid"], "deals": [],
           flag: True, "forfeits": [0, 1, 2] if flag == "abandoned" else []}  # fmt: skip
    f = tmp_path / "m.json"
    f.write_text(json.dumps(rec), encoding="utf-8")
    checked = CliRunner().invoke(main, ["replay", "--check", str(f)])
    shown = CliRunner().invoke(main, ["replay", str(f)])
    assert f"{flag} in deal 1: " in checked.output, checked.output
    assert "deal -1" not in checked.output
    assert f"{flag} in deal 1: " in shown.output, shown.output
    assert "deal 0" not in shown.output


class _DeclaredOnTheClass(Bot):
    """Declares its state on the class, as many authors do, and makes its own in
    ``__init__``: nothing is shared."""

    seen: list[str] = []  # noqa: RUF012 (the pattern under test)
    counts: dict[str, int] = {}  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__()
        self.seen = []
        self.counts = {}


class _SharedOnTheClass(Bot):
    """Fills a list of its class: every instance's."""

    seen: list[str] = []  # noqa: RUF012 (the pattern under test)

    def on_match_start(self, view: PlayerView) -> None:
        self.seen.append(str(view.hand))


def test_state_declared_on_the_class_but_made_in_init_is_not_warned_of() -> None:
    """Defect: this round's warning of a list, dict or set on the bot's class fired for a
    class that only declares it there (``seen: list[str] = []``) and makes its own in
    ``__init__`` (``self.seen = []``): "every match's instance of the bot shares it, so
    what one match puts in it is there in the next", which is false; each instance has its
    own. An attribute the instance made for itself is left out now; one it uses from the
    class is still warned of."""
    from sdk.local import method_mistakes

    _, warnings = method_mistakes(_DeclaredOnTheClass())
    assert not [w for w in warnings if "on the class" in w], warnings
    _, warnings = method_mistakes(_SharedOnTheClass())
    told = [w for w in warnings if "on the class" in w]
    assert len(told) == 1 and told[0].startswith("_SharedOnTheClass.seen is a list on the class")
