"""Review round 53: a coverage-guided mutation review of the modules the earlier rounds
reached least (the referee's match loop, sessions and tokenless limits, the lobby; the
SDK's client; the engine's scoring). Each test names the mutant it kills (its id and the
edit in its docstring); matches are played in process (``seat_bots``: no network, bots
answering on the next turn of the loop), no timed assertions.

Coverage first (``coverage run --branch``, not slow, each package over its own test
folders): arena/referee over tests/arena and tests/hostile 92% (match 98%, sessions 98%,
core 92%, server 87%, lobby 82%, config 71%: the lobby's and config's gaps are played by
tests/cli); sdk over tests/sdk 87% (client 94%; cli and workers run in subprocesses);
engine over tests/engine and tests/bots 90% (game 98%, record 74%). After: match 99%; the
address table of server.py's tokenless limit, never reached before, is played here.

94 hand mutants (M 38 match, S 24 sessions, V 6 the tokenless limit, E 26 the engine's
scoring and barrel): the existing tests killed 64 (M4, M5, M15 and S18 only by tests
outside the files first run: test_limits_round43, test_limits_round49,
test_review_round42); the tests here kill 12 (M1, M3, M31, S1, S2, S21, V3, V4, V6, V7,
E8, E23); 14 are equivalent (M9, M10: a view's omissions are made again for a stream
other than the one they were counted on, and a deal's first bid is another seat's; M18:
the engine counts the last deal too; M24: the limit never exceeds the time left; M34,
M35, S17: a timer equal or early by the clock's resolution is armed again; M36, S3: a
stall of 0, a time at the window's very edge; S11: positions are unique; S16: a bot with
seats counting down has no stream to detach; S22: events are cleared on detach; S24: a
deal's start always buffers an event; V2: pruning on a known address's new window forgets
only what the table may); 4 are left (S7: a batch of exactly ``MAX_BATCH_BYTES``; S9: a
message alone wrapped in a Batch when the next is over the bytes or the end mark; S13,
S14: the 65th interrupted end told, an id of exactly 200 characters: bounds off by one).

A defect, fixed (V1): a client refused for asking too often without a token was let in
again, its count wiped, whenever 4,096 other addresses asked within the window.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from arena.referee import Referee, RefereeConfig
from arena.referee import match as match_module
from arena.referee.sessions import RateMeter
from engine import PRESETS
from tests.arena.test_mutation_review_referee import first_legal, seat_bots

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


class _Clock:
    """A loop stand-in whose ``time()`` the test sets (``RateMeter`` reads only that)."""

    def __init__(self) -> None:
        self.now = 100.0

    def time(self) -> float:
        return self.now


# ------------------------------------------------------------------ the match's own fault


def test_a_match_that_fails_mid_deal_tells_its_bots_and_frees_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M1 (``run``'s ``except Exception`` without ``self._interrupted()``) and M2 (its
    ``finally`` not popping the seats): a match that fails mid-deal (a bug; here the
    engine raising at the tenth action) must still tell each bot that it ended, as
    interrupted (a bot keeps a match, and its instance of the bot, until it hears that),
    write that to its record file, and leave its bots idle for the next match, which
    plays to its end."""
    calls = [0]
    after = match_module.MatchRunner._after

    def failing(self: Any, *args: Any) -> None:
        calls[0] += 1
        if self.match_id == "m1" and calls[0] == 10:
            raise RuntimeError("a bug in the middle of the deal")
        after(self, *args)

    monkeypatch.setattr(match_module.MatchRunner, "_after", failing)

    async def main() -> tuple[dict[str, Any], dict[str, Any], list[bool]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        streams = seat_bots(ref, ("a", "b", "c"), first_legal)
        with pytest.raises(RuntimeError, match="a bug in the middle"):
            await ref.run_match("m1", ONE_DEAL, 5, ["a", "b", "c"])
        free = [ref.session(n).idle.is_set() and not ref.session(n).seats for n in "abc"]
        ends = {
            n: [m.match_ended for m in s.log if m.HasField("match_ended")]
            for n, s in streams.items()
        }
        rec = await ref.run_match("m2", ONE_DEAL, 6, ["c", "a", "b"])
        return ends, rec, free

    ends, rec, free = asyncio.run(main())
    assert free == [True, True, True]
    for n in "abc":
        (end,) = ends[n]
        assert end.match_id == "m1" and end.result.reason == "interrupted"
        assert not end.HasField("view")  # (interrupted: no final view)
    lines = [json.loads(x) for x in (tmp_path / "m1.jsonl").read_text().splitlines()]
    assert lines[-1]["type"] == "interrupted" and lines[-1]["record"]["interrupted"] is True
    assert rec["result"]["deals"] == 1 and rec["match_id"] == "m2"


# ------------------------------------------------------------------ the rate meter


def test_a_rate_meter_over_its_limit_says_when_one_more_fits() -> None:
    """S1 (``full``: the loop's ``total < self._limit`` made ``<=``), S2 (the loop returning
    after the first event whatever it weighed):
    ``RateMeter.full`` of a window holding more than the limit (``over`` counts every
    event, refused or not) is the time until enough of the oldest have left for one more
    to fit, not until the oldest alone has; 0 once they have."""
    clock = _Clock()
    loop: Any = clock
    meter = RateMeter(3, 10.0)
    for at in (100.0, 101.0, 102.0, 103.0, 104.0):  # five in a window of three
        clock.now = at
        meter.add(loop)
    clock.now = 105.0
    # One more fits when the window holds 2: the oldest three gone (102 leaves at 112).
    assert meter.full(loop) == pytest.approx(7.0)
    assert meter.over(loop) is True
    clock.now = 112.0  # 100 and 101 gone; 103 leaves at 113
    assert meter.full(loop) == pytest.approx(1.0)
    clock.now = 113.5  # 100, 101, 102 and 103 gone: 104 and 105 left
    assert meter.full(loop) == 0.0
    heavy = RateMeter(4, 10.0)
    clock.now = 0.0
    heavy.add(loop, 3)
    clock.now = 1.0
    heavy.add(loop, 3)
    clock.now = 2.0
    assert heavy.full(loop) == pytest.approx(8.0)  # the 3 of t=0 leave at 10: 3 < 4


def test_a_rate_meter_below_its_limit_is_not_full() -> None:
    """S4 (``full``'s ``total < self._limit`` made ``<=`` before the loop): a window one
    short of the limit lets one more in at once."""
    clock = _Clock()
    loop: Any = clock
    meter = RateMeter(2, 10.0)
    meter.add(loop)
    assert meter.full(loop) == 0.0
    meter.add(loop)
    assert meter.full(loop) == pytest.approx(10.0)


# ------------------------------------------------------------------ tokenless requests


class _Refused(Exception):
    pass


class _Caller:
    """A tokenless call's context from ``address``: ``abort`` raises as grpc.aio's does."""

    def __init__(self, address: str) -> None:
        self.address = address

    def peer(self) -> str:
        return f"ipv4:{self.address}:5000"

    async def abort(self, code: Any, details: str, trailing_metadata: Any = ()) -> None:
        raise _Refused(f"{code.name}: {details}")


def test_the_tokenless_counts_stay_bounded_and_a_refused_address_stays_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """V1 (defect, fixed): with the table of addresses full (``_MAX_ADDRESSES`` counted at
    once), the next new address made it forget every count not over, and, if none was,
    all: an address refused for asking too often was let in again, its count wiped,
    whenever that many others asked within the window. Now the windows over go first,
    then those within the limit; a refused one is kept to its window's end. Also V2
    (``window is None and`` dropped: a known address's new window pruned the table), V3
    (the first prune keeping the windows over, ``<`` made ``>=``) and V4 (the table let
    grow past its bound, ``>=`` made ``>``), V6 (a known address's window never renewed:
    refused for good once over its limit)."""
    from arena.referee import server as server_mod

    monkeypatch.setattr(server_mod, "_MAX_ADDRESSES", 4)
    monkeypatch.setattr(server_mod, "TOKENLESS_LIMIT", 2)
    monkeypatch.setattr(server_mod, "TOKENLESS_WINDOW_S", 1000.0)  # (none ends by itself)

    async def main() -> tuple[list[str], list[int]]:
        calls = server_mod._OpenCalls(asyncio.Event())
        said: list[str] = []
        sizes: list[int] = []

        async def ask(address: str) -> None:
            try:
                await calls.request(_Caller(address))
                said.append(f"{address} ok")
            except _Refused as e:
                said.append(f"{address} refused: {e}")
            sizes.append(len(calls.recent))

        for a in ("10.0.0.1",) * 3 + ("10.0.0.2", "10.0.0.3", "10.0.0.4"):
            await ask(a)
        await ask("10.0.0.5")  # the table is full: 2, 3 and 4 (within the limit) forgotten
        await ask("10.0.0.1")  # still refused
        await ask("10.0.0.5")
        await ask("10.0.0.6")
        await ask("10.0.0.7")  # the table is full again
        calls.recent["10.0.0.1"][0] -= 2000.0  # its window is over
        await ask("10.0.0.8")  # 1 (over) goes; 5 (at its limit), 6 and 7 are kept
        await ask("10.0.0.5")  # refused: its count was kept
        await ask("10.0.0.6")  # its second
        await ask("10.0.0.1")  # a new window
        calls.recent["10.0.0.5"][0] -= 2000.0  # its window is over: it asks again
        await ask("10.0.0.5")
        return said, sizes

    said, sizes = asyncio.run(main())
    assert [s.split(":")[0] for s in said] == [
        "10.0.0.1 ok", "10.0.0.1 ok", "10.0.0.1 refused", "10.0.0.2 ok", "10.0.0.3 ok",
        "10.0.0.4 ok", "10.0.0.5 ok", "10.0.0.1 refused", "10.0.0.5 ok", "10.0.0.6 ok",
        "10.0.0.7 ok", "10.0.0.8 ok", "10.0.0.5 refused", "10.0.0.6 ok", "10.0.0.1 ok",
        "10.0.0.5 ok",
    ]  # fmt: skip
    assert "more than 2 requests without a token" in said[2] and "from ipv4:10.0.0.1" in said[2]
    assert max(sizes) == 4 and sizes[6] == 2 and sizes[11] == 4  # (1, 5; then 5 to 8)


# ------------------------------------------------------------------ a bot away


def test_a_bot_away_from_a_match_that_ended_meanwhile_is_not_taken_for_gone() -> None:
    """S21 (``_grace_over`` without its ``seat is None`` case): a bot away from a match
    that ended (here, was interrupted) before its grace ran out has no seat left to
    forfeit, and is not taken for gone: the next match that starts without it waits its
    grace for it ("not connected at the start; 0.05 s to reconnect") rather than forfeit
    its seat at once, as docs/referee.md has it (taken for gone when its grace runs out
    while it is away, the forfeit naming the match it stayed away from)."""

    async def main() -> tuple[str | None, list[str]]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=0.05))
        streams = seat_bots(ref, ("a", "b", "c"), first_legal)
        task = asyncio.ensure_future(ref.run_match("m1", ONE_DEAL, 5, ["a", "b", "c"]))
        for _ in range(3):
            await asyncio.sleep(0)
        assert "m1" in ref.session("c").seats
        ref.session("c").detach(streams["c"], 0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.2)  # (a timer after the grace's: it runs first)
        gone = ref.session("c").gone
        rec = await ref.run_match("m2", ONE_DEAL, 6, ["a", "b", "c"])
        return gone, [i["detail"] for i in rec["incidents"] if i["seat"] == 2][:2]

    gone, details = asyncio.run(main())
    assert gone is None
    assert details == [
        "not connected at the start; 0.05 s to reconnect",
        "disconnected for more than 0.05 s",
    ]


# ------------------------------------------------------------------ the engine's result


def test_the_winner_at_a_deal_cap_pays_nobody_and_each_loser_owes_his_shortfall() -> None:
    """E23 (``_finish``'s shortfalls without the winner's 0): a match ended by its
    ``max_deals`` cap with a single leader below the target names him the winner and
    gives him no shortfall (RULES.md: the result states each loser's shortfall to the
    target, what he pays the winner); each other seat owes ``target - score``."""
    from engine import Game, fallback_action

    for seed in range(20):
        game = Game.new(ONE_DEAL, seed, ["a", "b", "c"], scores=[500, 300, 100])
        while not game.is_over:
            game.apply_trusted(fallback_action(game.legal_actions()))
        result = game.result
        assert result is not None and result.reason == "max_deals"
        if result.winner is None:
            continue
        w = result.winner
        assert result.places[w] == 1 and result.scores[w] < 1000
        assert result.shortfalls[w] == 0
        assert all(result.shortfalls[s] == 1000 - result.scores[s] for s in range(3) if s != w)
        return
    raise AssertionError("no seed of 20 gave a single leader")


def test_reaching_exactly_880_puts_a_player_on_the_barrel() -> None:
    """E8 (``_score``'s ``max(new) >= r.barrel_at`` made ``>``): a player whose score
    reaches exactly 880, nobody on the barrel yet, sits on it for 3 deals (RULES.md: "880
    or more"); he was left at 880 off the barrel, his defender takes scored on. Seed 0,
    seat 0 at 828, the fallback playing: seat 0 takes exactly 52 as a defender."""
    from engine import Game, fallback_action

    rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
    game = Game.new(rules, 0, ["a", "b", "c"], scores=[828, 0, 0])
    while game.deal_number == 0:
        game.apply_trusted(fallback_action(game.legal_actions()))
    (deal,) = game.deal_results
    assert deal.deltas == (52, -100, 32) and deal.scores == (880, -100, 32)
    assert deal.barrel == (3, 0, 0) and deal.events == ("seat 0 gets on the barrel",)


def test_a_record_without_forfeits_has_no_rules_result() -> None:
    """M31 (``_final_record``'s ``self.forfeits and`` dropped): a match nobody forfeited
    has one result, the rules'; ``rules_result`` is written only when a seat forfeited
    (docs/record-format.md), and every record of a clean match carried it."""
    from tests.arena.test_mutation_review_referee import play

    rec, _ = play()
    assert rec["forfeits"] == [] and "rules_result" not in rec
    assert rec["result"]["deals"] == 1 and sorted(rec["result"]["places"])[0] == 1
