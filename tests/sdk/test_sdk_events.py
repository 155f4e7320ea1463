"""What a bot learns besides its views: every action (``on_action``) and the talon taken
(``on_talon_taken``), the same through a real referee as in local play."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena

import sdk.client
import sdk.local
from arena.protocol import action_event_to_pb, ruleset_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import (
    PRESETS,
    Action,
    Card,
    DealResult,
    Game,
    HiddenGive,
    Pass,
    PlayerView,
    observe,
    parse_action,
)
from engine import parse_card as card
from sdk import Bot, play_local

RULES = dataclasses.replace(PRESETS["1001-4p"], max_deals=4)


class Listener(Bot):
    """Plays the base class's moves (the same for the same seed); notes what it is told."""

    def __init__(self) -> None:
        super().__init__()
        self.seat = -1
        self.told: list[tuple[Any, ...]] = []

    def on_match_start(self, view: PlayerView) -> None:
        self.seat = view.seat

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        self.told.append(("action", seat, action))

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        self.told.append(("talon", declarer, talon))

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        self.told.append(("deal_end", result.number))


def _in_arena(tmp: Path, seed: int) -> tuple[list[Listener], dict[str, Any]]:
    """Four listeners through the referee, in one match of RULES: by seat, and the record."""
    made: list[Listener] = []

    def factory() -> Listener:
        made.append(Listener())
        return made[-1]

    async def main() -> dict[str, Any]:
        async with arena(tmp) as a:
            names = ["v0", "v1", "v2", "v3"]
            tasks = await a.runners(names, [factory] * 4, 1)
            rec = await a.referee.run_match("ev", RULES, seed, names)
            summaries = await asyncio.wait_for(asyncio.gather(*tasks), 60)
            assert [s.errors for s in summaries] == [0] * 4
            return rec

    rec = asyncio.run(main())
    return sorted(made, key=lambda b: b.seat), rec


def test_the_four_player_dealer_is_told_the_talon_and_every_action_through_the_referee(
    tmp_path: Path,
) -> None:
    """Defect: the SDK dropped the referee's ``talon_taken`` and action events, so a seat
    not asked again in the deal (the 4-player dealer, who sits it out; any seat after its
    last decision) never learned the talon shown, nor the cards played after it last
    acted. Now ``on_talon_taken`` and ``on_action`` tell them, as play_local does: the
    same calls, in the same order, for the same seed."""
    remote, rec = _in_arena(tmp_path, seed=7)
    local = [Listener() for _ in range(4)]
    match = play_local(local, ruleset=RULES, seed=7)
    deals = rec["deals"]
    assert len(deals) == 4
    assert [(d["talon"], d["actions"]) for d in match.record["deals"]] == [
        (d["talon"], [{"seat": a["seat"], "action": a["action"]} for a in d["actions"]])
        for d in deals
    ]
    assert [b.seat for b in remote] == [0, 1, 2, 3]
    # (the declarer gives the first card)
    declarers = [
        next(a["seat"] for a in d["actions"] if a["action"].startswith("give")) for d in deals
    ]
    for seat, (here, there) in enumerate(zip(local, remote, strict=True)):
        assert there.told == here.told, seat
        talons = [t[1:] for t in here.told if t[0] == "talon"]  # 1001 shows it to all
        assert talons == [
            (s, tuple(map(card, d["talon"]))) for s, d in zip(declarers, deals, strict=True)
        ]
        acts = [t[1:] for t in here.told if t[0] == "action"]
        want = [(a["seat"], parse_action(a["action"])) for d in deals for a in d["actions"]]
        assert len(acts) == len(want)
        for (s, got), (ws, w) in zip(acts, want, strict=True):
            assert s == ws
            # a give is shown to its giver and receiver only
            assert got == w or (isinstance(got, HiddenGive) and seat not in (ws, got.to))
    # The dealer, asked nothing in the deal he sits out, hears its talon and its 24 plays
    # (before the deal's end).
    for n, d in enumerate(deals):
        told = remote[d["dealer"]].told
        end = told.index(("deal_end", n))
        start = told.index(("deal_end", n - 1)) if n else 0
        assert ("talon", declarers[n], tuple(map(card, d["talon"]))) in told[start:end]
        plays = [t for t in told[start:end] if t[0] == "action" and str(t[2]).startswith("play")]
        assert len(plays) == 24


def test_a_bot_without_the_hooks_pays_no_lookup_per_action_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: every action and talon_taken event asked ``overrides`` (a few hundred ns,
    several events per decision) whether the bot had its own hook, even for a bot that
    has none (nearly all). Now it is asked once per match, when the bot is made."""
    asked: list[str] = []
    real = sdk.local.overrides

    def counted(bot: object, hook: str) -> bool:
        asked.append(hook)
        return real(bot, hook)

    monkeypatch.setattr(sdk.client, "overrides", counted)
    g = Game.new(PRESETS["classic"], 1, ("a", "b", "c"))
    started = pb.MatchStarted(
        match_id="m1",
        seat=0,
        players=list(g.players),
        ruleset=ruleset_to_pb(g.ruleset),
        view=view_to_pb(observe(g, 0)),
    )
    talon = pb.Event(match_id="m1", seq=2)
    talon.talon_taken.seat = 1

    async def main() -> None:
        runner = sdk.client.BotRunner(RandomBot, "127.0.0.1:1", "t")
        runner._on_match_started(started)
        tail = runner._matches["m1"].tail
        assert tail is not None
        await tail  # the bot is made
        asked.clear()
        for _ in range(100):
            runner._on_event(action_event_to_pb("m1", 1, pb.ACTION_SOURCE_UNSPECIFIED, 1, Pass()))
            runner._on_event(talon)
        if runner._pool is not None:
            runner._pool.shutdown()

    asyncio.run(main())
    assert asked == []
