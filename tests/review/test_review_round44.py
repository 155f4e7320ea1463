"""Review of round 44's product changes (the SDK's checks of a hostile arena's requests
and results, the stop, settling streams, replay deal numbers, ``arena-bot try`` Ctrl-C).

The key risk of the SDK's new request checks (sdk.client._check_request_view) is a false
refusal: a view a real referee sends, refused as malformed, so that the bot is never
asked and the referee's deadline plays the seat by fallback, unnoticed. Checked here over
the real wire encoding (every preset, every house-rule file, random option combinations,
starts on the barrel and deals rich in marriages and aces) and over a real referee."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))
sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))

from harness import arena
from test_oracle_round37 import BASES, base_ruleset, craft_deal, draw_ruleset, draw_start

from arena.protocol import (
    MalformedMessageError,
    match_result_from_pb,
    match_result_to_pb,
    view_from_pb,
    view_to_pb,
)
from arena.v1 import arena_pb2 as pb
from engine import Action, Bid, Concede, Game, Pass, Phase, Play, PlayerView, Ruleset, ThrowIn
from engine.record import forfeit_result
from engine.view import observe
from sdk.bot import Bot
from sdk.client import BotRunner, _check_request_view


def _pick(rng: random.Random, legal: tuple[Action, ...]) -> Action:
    """A legal action, weighted so that auctions climb, deals are thrown in or conceded
    and marriages (ace marriages too) are declared."""
    bids = [a for a in legal if isinstance(a, Bid)]
    if bids and rng.random() < 0.5:
        return bids[0] if rng.random() < 0.6 else rng.choice(bids)
    if Pass() in legal:
        return Pass()
    special = [a for a in legal if isinstance(a, ThrowIn | Concede)]
    if special and rng.random() < 0.15:
        return rng.choice(special)
    declares = [a for a in legal if isinstance(a, Play) and a.declare]
    if declares and rng.random() < 0.7:
        return rng.choice(declares)
    return rng.choice(legal)


def _rulesets(rng: random.Random) -> list[Ruleset]:
    """Every preset and house-rule file (at 3 and 4 players where it seats both), then
    random option combinations."""
    out = []
    for base in BASES:
        for players in (3, 4) if "1001" in base else (None,):
            out.append(base_ruleset(base, players=players))
    out += [draw_ruleset(rng) for _ in range(40)]
    return out


def _game(rng: random.Random, r: Ruleset) -> Game:
    """A match of ``r``, often from scores near the barrel or the target, with deals
    biased toward marriages, four aces and a talon of nines."""
    n = r.players
    dealer = rng.randrange(n)
    start: dict[str, Any] = {}
    if rng.random() < 0.5:
        scores, barrel = draw_start(rng, r)
        start = {"scores": scores, "barrel": barrel}
    deals = {k: craft_deal(rng, r, (dealer + k) % n) for k in range(10) if rng.random() < 0.6}
    names = [f"p{i}" for i in range(n)]
    return Game.new(r, rng.randrange(10**9), names, dealer=dealer, deals=deals, **start)


def test_no_real_view_is_refused_over_the_wire() -> None:
    """Every view the referee sends a seat to act (``view_to_pb(observe(...))``, as
    arena.referee.match builds a DecisionRequest), read back as the SDK reads it, passes
    the SDK's check: every preset and house-rule file, random options (1001's opening
    bid 40 with nobody committed, the last hand's throw-in after an all-pass, the
    4-player dealer sitting out, ace marriages on and off, marriage_needs_trick,
    must_beat, seats on the barrel). Each kind of offer the checks judge is seen."""
    rng = random.Random(44)
    seen: set[str] = set()
    views = 0
    for r in _rulesets(rng):
        for _ in range(3):
            game = _game(rng, dataclasses.replace(r, max_deals=r.max_deals or 12))
            before: dict[int, PlayerView] = {}
            while not game.is_over:
                seat = game.to_act
                assert seat is not None
                wire = view_to_pb(observe(game, seat)).SerializeToString()
                view = view_from_pb(pb.PlayerView.FromString(wire), r, before.get(seat))
                try:
                    _check_request_view(view)
                except MalformedMessageError as e:  # pragma: no cover - the defect
                    pytest.fail(f"{r} deal {view.deal_number + 1}: a real view refused: {e}")
                before[seat] = view
                views += 1
                for a in view.legal_actions:
                    if isinstance(a, Play) and a.declare:
                        seen.add("ace marriage" if a.card.rank.name == "ACE" else "marriage")
                    elif isinstance(a, ThrowIn):
                        seen.add(f"throw-in ({view.phase})")
                    elif isinstance(a, Bid) and view.bid is None:
                        seen.add(f"first bid {r.opening_bid}")
                if r.players == 4 and view.phase is Phase.PASSING:
                    seen.add("4-player give")
                if view.barrel is not None and view.barrel[seat]:
                    seen.add("on the barrel")
                game.apply(_pick(rng, game.legal_actions()))
    assert views > 10_000
    for kind in ("marriage", "ace marriage", "throw-in (passing)", "throw-in (contract)",
                 "first bid 40", "first bid 100", "4-player give", "on the barrel"):  # fmt: skip
        assert kind in seen, (kind, sorted(seen))


class _Counting(Bot):
    """A bot that declares and throws in where it can (as _pick), counting its calls.

    The count is of every bot of the process (each runner calls its bot in a thread of its
    own: counted under a lock, ``+=`` from two threads could lose one); reset by the test
    that reads it."""

    calls = 0
    lock = threading.Lock()

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(7)

    def act(self, view: PlayerView) -> Action:
        with _Counting.lock:
            _Counting.calls += 1
        return _pick(self.rng, view.legal_actions)


def test_no_request_of_a_real_referee_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Over a real referee (gRPC, the SDK's runner) under every preset and house-rule file
    and a few random option sets: every request reaches the bot (no decision by the
    referee's fallback, no incident), no message is refused as malformed, and every
    match's result (places, shortfalls) reaches ``on_match_end``."""
    rng = random.Random(4404)
    tables = [dataclasses.replace(r, max_deals=6) for r in _rulesets(rng)[:8]]
    tables += [dataclasses.replace(draw_ruleset(rng), max_deals=6) for _ in range(4)]
    names = ["v0", "v1", "v2", "v3"]
    counts = {n: sum(1 for r in tables if i < r.players) for i, n in enumerate(names)}
    ended: list[Any] = []
    _Counting.calls = 0  # (another test's bots counted too, had it run first)

    class Bot_(_Counting):
        def on_match_end(self, view: PlayerView, result: Any) -> None:
            ended.append(result)

    async def main() -> list[dict[str, Any]]:
        async with arena(tmp_path, decision_ms=5000) as a:
            runners = []
            for n in names:
                a.referee.add_bot(n, f"tok-{n}")
                runners.append(BotRunner(Bot_, a.target, f"tok-{n}", matches=counts[n], name=n))
            tasks = [asyncio.create_task(r.run()) for r in runners]
            assert not await a.referee.wait_for_bots(names, 20)
            recs = await asyncio.gather(*(
                a.referee.run_match(f"r44-{i}", r, i, names[: r.players])
                for i, r in enumerate(tables)
            ))  # fmt: skip
            summaries = await asyncio.wait_for(asyncio.gather(*tasks), 60)
            assert [s.matches for s in summaries] == [counts[n] for n in names]
            assert not any(s.errors or s.rejected for s in summaries)
            return list(recs)

    with caplog.at_level(logging.WARNING):
        records = asyncio.run(main())
    by = [a.get("by") for rec in records for d in rec["deals"] for a in d["actions"]]
    assert by and set(by) <= {"bot", "forced"}, sorted(set(by))
    assert all(not rec["incidents"] for rec in records)
    assert _Counting.calls == by.count("bot")
    assert len(ended) == sum(r.players for r in tables)
    bad = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert not bad, bad[:3]


@pytest.mark.parametrize("players", [3, 4])
def test_a_forfeit_or_abandoned_result_is_taken(players: int) -> None:
    """A referee's result with forfeits (forfeiters sharing the last place, shortfalls per
    seat) or of an abandoned match (all placed last) passes the SDK's result checks."""
    scores = [420, 1010, -35, 300][:players]
    base = {"scores": scores, "places": [2, 1, 3, 3][:players], "reason": "target",
            "shortfalls": [580, 0, 1035, 700][:players], "deals": 9}  # fmt: skip
    for forfeits in ([0], [1], list(range(players)), [0, 2]):
        result = forfeit_result(base, forfeits, 1000)
        got = match_result_from_pb(match_result_to_pb(result, forfeits), players)
        assert got.places == tuple(result["places"])
        assert got.shortfalls == tuple(result["shortfalls"])
    abandoned = {"scores": scores, "places": [players] * players,
                 "shortfalls": [max(0, 1000 - s) for s in scores], "deals": 3}  # fmt: skip
    got = match_result_from_pb(match_result_to_pb(abandoned, range(players)), players)
    assert got.places == (players,) * players and got.winner is None


def test_a_tournament_log_line_is_not_cut() -> None:
    """Defect: round 44 cut every message line of PrintableFormatter to 2,000 characters
    (for a hostile arena's 20 MB ids in ``arena-bot run``'s log), and ``arena tournament``
    writes its plain log (a file, a pipe, CI) with it too: its own line "waiting up to 60s
    for remote bots b1, b2, ...: connect them to HOST:PORT with their token" lost the
    address with a class's hundred remote bots, though a terminal showed it whole. The
    tournament's lines are its own (what bots send is cut where it is read): kept whole."""
    import io

    from rich.console import Console

    from arena.cli.tournament import setup_logging

    root = logging.getLogger()
    before = list(root.handlers), root.level
    for h in before[0]:
        root.removeHandler(h)
    out = io.StringIO()
    try:
        setup_logging(0, Console(file=out, force_terminal=False))
        remote = ", ".join(f"student-bot-{i:03d}" for i in range(150))
        logging.getLogger("arena.tournament.runner").warning(
            "waiting up to %gs for remote bots %s: connect them to %s with their token",
            60.0, remote, "arena.example.org:50051",
        )  # fmt: skip
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in before[0]:
            root.addHandler(h)
        root.setLevel(before[1])
    text = out.getvalue()
    assert len(remote) > 2000
    assert "student-bot-149: connect them to arena.example.org:50051 with their token" in text


def test_the_longest_tournament_match_id_is_taken() -> None:
    """The longest match id a tournament makes (a 64-character name, its fingerprint, a
    six-digit match number) is within what the SDK echoes (docs/protocol.md said the
    referee's ids are "at most 64" characters; a tournament's reach 85) and what the
    referee reads back in a Hello's ``running``."""
    from arena.referee.sessions import MAX_MATCH_ID_CHARS
    from arena.tournament.schedule import match_id
    from sdk.client import _ID_MOST, _check_id

    longest = match_id("t" * 64 + "-" + "f" * 12, 999_999)
    assert len(longest) > 64
    _check_id("match_started.match_id", longest)  # (raises if refused)
    assert len(longest) <= min(_ID_MOST, MAX_MATCH_ID_CHARS)
    with pytest.raises(MalformedMessageError, match="over the 256"):
        _check_id("request_id", "r" * 257)


def test_resumed_matches_after_cuts_are_not_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot whose connection is cut (RST) again and again during its matches (1001 at 4
    players: the dealer sits out) reconnects, and the referee's resumed MatchStarted and
    requests sent again pass the SDK's new checks (players, seat, rules, ids, offered
    actions): nothing from the arena is refused as malformed or for another match's
    players, and every match ends with its result for the bot."""
    from netproxy import FaultProxy

    from engine import PRESETS

    rules = dataclasses.replace(PRESETS["1001-4p"], max_deals=8)
    names = ["v0", "v1", "v2", "v3"]
    ended: list[Any] = []

    class Ends(_Counting):
        def on_match_end(self, view: PlayerView, result: Any) -> None:
            ended.append(result)

    class Slow(Ends):  # (the cut bot's: its matches last long enough to be cut in)
        def act(self, view: PlayerView) -> Action:
            time.sleep(0.01)
            return super().act(view)

    async def main() -> list[dict[str, Any]]:
        async with (
            arena(tmp_path, decision_ms=3000, reconnect_grace_s=30) as a,
            FaultProxy(a.port) as px,
        ):
            runners = []
            for i, n in enumerate(names):
                a.referee.add_bot(n, f"tok-{n}")
                target = f"127.0.0.1:{px.port}" if i == 0 else a.target
                runners.append(BotRunner(Slow if i == 0 else Ends, target, f"tok-{n}",
                                         matches=3, name=n, retry_for=30,
                                         initial_backoff=0.05, max_backoff=0.2))  # fmt: skip
            tasks = [asyncio.create_task(r.run()) for r in runners]
            assert not await a.referee.wait_for_bots(names, 20)
            games = asyncio.gather(*(
                a.referee.run_match(f"cut-{k}", rules, k, names) for k in range(3)
            ))  # fmt: skip
            cuts = 0
            while not games.done() and cuts < 4:
                await asyncio.sleep(0.3)
                await a.referee.wait_for_bots(["v0"], 20)  # (back: cut it again)
                conns = [c for c in px._conns if not c.done]
                for c in conns:
                    c.close(rst=True)
                cuts += bool(conns)
            recs = await asyncio.wait_for(games, 120)
            summaries = await asyncio.wait_for(asyncio.gather(*tasks), 60)
            assert [s.matches for s in summaries] == [3] * 4
            assert cuts and summaries[0].connections > 1
            return list(recs)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        records = asyncio.run(main())
    assert all(rec["result"] is not None for rec in records)
    assert len(ended) == 12
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [m for m in said if "malformed" in m or "refused" in m], said[:3]
    assert any("resum" in r.getMessage() for r in caplog.records)
