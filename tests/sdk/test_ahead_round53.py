"""Round 53 (performance): the SDK answers ahead ("ahead" in docs/protocol.md). A quick
bot is asked, with each decision whose next one it can foresee (``own_next_view``), that
next decision too, through its same ``act``; the answers go with the first and the referee
plays them without a round trip. The bot cannot tell: every view it is asked on is the
engine's own view at one of its decisions, in order, once each. A bot that is not quick
(it may take its whole limit) is never asked ahead, and an arena that does not list the
feature is never sent an answer ahead."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, ClassVar

import pytest

from arena.referee import core as core_mod
from arena.referee import match as match_mod
from arena.referee.core import Referee
from engine import Action, PlayerView, observe, parse_action, replay
from engine.record import start_game
from sdk.bot import Bot
from tests.support.harness import play_sdk_match


class _Quick(Bot):
    """A deterministic random bot that keeps every view it is asked on (by its name)."""

    quick = True
    seen: ClassVar[dict[str, list[PlayerView]]] = defaultdict(list)

    def act(self, view: PlayerView) -> Action:
        self.seen[view.players[view.seat]].append(view)
        key = len(view.hand) * 31 + len(view.tricks) * 7 + len(view.bids) + view.deal_number
        return random.Random(key).choice(view.legal_actions)


class _Slow(_Quick):
    quick = False
    seen: ClassVar[dict[str, list[PlayerView]]] = defaultdict(list)


def _count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the answers that came with actions ahead, and the actions played from them."""
    counts = {"with_ahead": 0, "played": 0}
    on_decision = Referee.on_decision
    play_ahead = match_mod.MatchRunner._ahead

    def counted_on_decision(self: Referee, session: Any, d: Any) -> bool:
        counts["with_ahead"] += bool(d.ahead)
        return on_decision(self, session, d)

    def counted_ahead(self: Any, *args: Any) -> Any:
        played = play_ahead(self, *args)
        counts["played"] += played is not None
        return played

    monkeypatch.setattr(Referee, "on_decision", counted_on_decision)
    monkeypatch.setattr(match_mod.MatchRunner, "_ahead", counted_ahead)
    return counts


def _views_of_the_bots_decisions(rec: dict[str, Any]) -> dict[str, list[PlayerView]]:
    """The engine's view of each decision a bot made in the record, by name, in order (the
    record replayed first: it holds together, as ``arena replay --check`` needs)."""
    replay(rec)
    game = start_game(rec)
    out: dict[str, list[PlayerView]] = defaultdict(list)
    for deal in rec["deals"]:
        for a in deal["actions"]:
            seat = a["seat"]
            if a["by"] == "bot":
                out[rec["players"][seat]].append(observe(game, seat))
            game.apply(parse_action(a["action"]), seat=seat)
    return out


def test_a_quick_bot_is_asked_ahead_on_exactly_the_views_of_its_decisions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = _count(monkeypatch)
    _Quick.seen = defaultdict(list)
    rec = play_sdk_match(_Quick, max_deals=3, seed=12)
    decisions = _views_of_the_bots_decisions(rec)
    assert counts["played"] >= 3 * len(rec["deals"]), counts
    assert counts["with_ahead"] > 0
    for name in rec["players"]:
        assert _Quick.seen[name] == decisions[name], name


def test_a_bot_that_is_not_quick_is_never_asked_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _count(monkeypatch)
    _Slow.seen = defaultdict(list)
    rec = play_sdk_match(_Slow, max_deals=2, seed=12)
    assert counts == {"with_ahead": 0, "played": 0}
    decisions = _views_of_the_bots_decisions(rec)
    for name in rec["players"]:
        assert _Slow.seen[name] == decisions[name], name


def test_an_arena_without_the_feature_is_sent_no_answer_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A referee before round 53 (its Welcome lists no "ahead"): plain answers only, and
    the bot is asked on the requests' views alone."""
    counts = _count(monkeypatch)
    monkeypatch.setattr(core_mod, "FEATURES", tuple(f for f in core_mod.FEATURES if f != "ahead"))
    _Quick.seen = defaultdict(list)
    rec = play_sdk_match(_Quick, max_deals=2, seed=12)
    assert counts == {"with_ahead": 0, "played": 0}
    decisions = _views_of_the_bots_decisions(rec)
    for name in rec["players"]:
        assert _Quick.seen[name] == decisions[name], name
