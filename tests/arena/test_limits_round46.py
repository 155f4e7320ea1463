"""Round 46: small known limits an organiser or bot author meets.

1. A bot's hook that raises in an arena: the runner logs it with its traceback, as
   `arena-bot try` does, counts it, and the match goes on (no incident, no strike); no
   arena record holds it (a hook's failure reaches no referee), which the docs say.
2. A bot class that sets ``act`` in ``__init__`` (an instance attribute) and has an
   ``async def play`` helper was refused before any match ("play() is `async def`"): the
   class was judged as if the runners asked its ``play``. Such a class is judged by a bot
   made of it now; one whose ``play`` the runners do call is still refused.
4. The last deal on the barrel: a made contract below 120 scores nothing, and the third
   deal without a win costs the barrel's −120 (RULES.md): the engine agrees, in every
   ruleset with a barrel; the bots' concession test values such a contract at 0 (a known
   limit of the bots, docs/bots.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import Game, Ruleset, load_ruleset, parse_action, parse_cards
from engine.game import DealResult, GameResult
from engine.view import PlayerView, observe
from sdk import Action, Bot
from sdk import cli as sdk_cli
from sdk.local import BotMakeError, factory_problem, method_mistakes, play_local

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ 2. act set in __init__


class ActInInit(Bot):
    """A correct bot: its ``act`` is set in ``__init__``; ``play`` is its own helper, run
    to its end with ``asyncio.run``."""

    def __init__(self) -> None:
        super().__init__()
        self.act = self._decide  # type: ignore[method-assign]

    def _decide(self, view: PlayerView) -> Action:
        return asyncio.run(self.play(view, 1))

    async def play(self, view: PlayerView, depth: int) -> Action:  # type: ignore[override]
        return view.legal_actions[-1]


class AsyncPlay(Bot):
    """A wrong bot: the runners call its ``play``, a coroutine that would never run."""

    async def play(self, view: PlayerView) -> Action:  # type: ignore[override]
        return view.legal_actions[0]


def test_a_bot_setting_act_in_init_with_an_async_play_helper_is_accepted() -> None:
    """Defect: ``play_local`` (and `arena-bot try`/`run`, ``sdk.run``) refused the class:
    "play() is `async def`: the runners call a bot's methods as plain functions", though
    they never call it (an ``act`` of the bot's own answers every decision)."""
    assert factory_problem(ActInInit) is None
    errors, _ = method_mistakes(ActInInit())  # (its helper's signature is its own)
    assert errors == []
    match = play_local([ActInInit, Bot, Bot], seed=3, max_deals=2)
    assert not match.incidents


def test_a_bot_whose_play_the_runners_call_is_still_refused_saying_why() -> None:
    problem = factory_problem(AsyncPlay)
    assert problem is not None
    assert "the class AsyncPlay, whose play() (test_limits_round46.py:" in problem
    assert "is `async def`: the runners call a bot's methods as plain functions" in problem
    with pytest.raises(TypeError, match=r"seat 0 is the class AsyncPlay, whose play\(\)"):
        play_local([AsyncPlay, Bot, Bot], seed=3, max_deals=1)


def test_arena_bot_try_accepts_the_act_in_init_bot_and_names_its_act(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`arena-bot try` loads the file the same way; a decision that raises is named as
    the bot's ``act`` (the method that answered), not ``Bot.bid()`` of the SDK."""
    path = tmp_path / "instact.py"
    path.write_text(
        textwrap.dedent(
            """\
            import asyncio
            from sdk import Bot


            class Inst(Bot):
                def __init__(self):
                    super().__init__()
                    self.act = self._decide

                def _decide(self, view):
                    return asyncio.run(self.play(view))

                async def play(self, view):
                    if view.deal_number == 1:
                        raise ValueError("deal two")
                    return view.legal_actions[0]
            """
        )
    )
    result = CliRunner().invoke(
        sdk_cli.main, ["try", str(path), "-n", "1", "--max-deals", "2"], catch_exceptions=False
    )
    text = result.output + "\n".join(r.getMessage() for r in caplog.records)
    assert "is `async def`" not in text, text
    assert "Inst.act() (instact.py:10) raised in deal 2" in text, text
    assert result.exit_code == 1  # (its incidents: the decisions of deal 2 that raised)


def test_an_async_play_helper_with_act_set_in_init_by_a_factory_is_made() -> None:
    """The check at make time (a factory's bot) judged the instance already: unchanged."""
    match = play_local([lambda: ActInInit(), Bot, Bot], seed=4, max_deals=1)
    assert not match.incidents
    with pytest.raises(BotMakeError):
        play_local([lambda: AsyncPlay(), Bot, Bot], seed=4, max_deals=1)


# ------------------------------------------------------------------ 4. the barrel's last deal

NAMES3 = ["ann", "bob", "cid"]
# Dealer 2: seat 0 (first hand, committed to 100) holds every spade with the ♠ marriage.
HANDS = ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "A♣ 10♣ K♣ Q♣ J♣ 9♣ 10♥", "A♦ 10♦ K♦ Q♦ J♦ 9♦ K♥"]
TALON = "Q♥ J♥ 9♥"


def _barrel_rulesets() -> list[Ruleset]:
    """Every preset with a barrel, and every bundled ruleset file with one."""
    from engine.rules import PRESETS

    found = [r for r in PRESETS.values() if r.barrel]
    found += [load_ruleset(p) for p in sorted((ROOT / "rulesets").glob("*.toml"))]
    return [r for r in found if r.barrel and r.players == 3]


def _sitter_declares(rules: Ruleset, contract: int, barrel: int) -> Game:
    """Seat 0, on the barrel at 880 with ``barrel`` deals left, declares at 100 and names
    ``contract``; he declares the ♠ marriage and plays out his spades: made."""
    g = Game.new(
        rules, 1, NAMES3, deals={0: ([parse_cards(h) for h in HANDS], parse_cards(TALON))},
        dealer=2, scores=(880, 300, 200), barrel=(barrel, 0, 0),
    )  # fmt: skip
    for step in ("1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2", f"0: contract {contract}"):
        seat, text = step.split(":", 1)
        g.apply(parse_action(text.strip()), seat=int(seat))
    while not g.deal_results:
        seat = g.to_act
        legal = g.legal_actions()
        if seat == 0:
            texts = [str(a) for a in legal]
            pick = next((t for t in texts if t.endswith("declare")), texts[0])
            action = legal[texts.index(pick)]
        else:
            action = legal[0]
        g.apply(action, seat=seat)
    return g


@pytest.mark.parametrize("rules", _barrel_rulesets(), ids=lambda r: r.name)
def test_a_made_contract_below_120_on_the_barrels_last_deal_costs_the_barrel(
    rules: Ruleset,
) -> None:
    """RULES.md, the barrel: "a made contract below 120 scores nothing" and "Three deals on
    the barrel without a win: −120 (option `barrel_penalty`) and off". On the last deal a
    made 100 is no win: the sitter ends at 880 − 120 = 760, off the barrel; on an earlier
    deal it scores nothing and he sits on; 120 made wins the game."""
    last = _sitter_declares(rules, 100, 1)
    res = last.deal_results[0]
    assert res.outcome == "made" and res.contract == 100
    assert last.scores[0] == 880 - rules.barrel_penalty == 760
    assert res.barrel == (0, 0, 0)
    assert res.events == ("seat 0 sat 3 deals on the barrel: -120",)
    earlier = _sitter_declares(rules, 100, 2)
    assert earlier.deal_results[0].outcome == "made"
    assert earlier.scores[0] == 880 and earlier.deal_results[0].barrel == (1, 0, 0)
    won = _sitter_declares(rules, 120, 1)
    assert won.deal_results[0].outcome == "made" and won.is_over
    assert won.scores[0] == rules.target


def test_the_bots_value_a_made_contract_below_120_on_the_barrel_at_nothing() -> None:
    """The bots' concession test (``made_contract_scores``) values such a contract at 0,
    also on the last deal, where it costs the barrel's −120 (left as is: valued at −120
    the sitter would concede hands that win the game by naming 120; docs/bots.md)."""
    from bots.heuristic import made_contract_scores

    rules = load_ruleset("classic")
    g = Game.new(rules, 1, NAMES3, dealer=2, scores=(880, 300, 200), barrel=(1, 0, 0))
    view = observe(g, 0)
    assert made_contract_scores(view, 100) == 0.0
    assert made_contract_scores(view, 120) == 120.0
