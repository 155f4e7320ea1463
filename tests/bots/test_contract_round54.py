"""pimc's raise above the bid, round 54: kept where its weak-hand take model would concede.

Round 53's model of pimc's take as declarer (the estimate + 0, spread 24:
``bots.pimc._Delegate.concede_offset`` / ``concede_sigma``) was fitted on weak hands (estimate
below 90), where it decides 1001's concessions. Applied to a raise it would concede or name
less: over deal 0 of 1001 seeds 0–299 it scored below a concession or the bid 19 of counting's
139 raises — all of them on hands estimated at 116 or more, outside the model's range. Named as
that model says (``arena.bench.forks --variant raise-cap``) the raises lost in 1001 and classic
(of 37 changed contracts, 35 worse, each a raise pimc made in play); and the four aces with a
ten, which counting raises by its own measured model (``aces_ten_offset``), were made by pimc
in all 15 such contracts of 1001 seeds 0–700. docs/bots.md, round 54. So pimc names counting's
raise; these positions pin it, judged against the real deal double-dummy.

Positions come from seeded deals whose auction three counting bots play; the contract is
arithmetic (no search), so every answer here is deterministic.
"""

from __future__ import annotations

from bots._dds import Solver, rule_options
from bots.counting import CountingBot
from bots.heuristic import conceded_relative, made_contract_scores, relative_score_of_play
from bots.pimc import PimcBot, _Delegate
from engine import Contract, Game, Phase, PlayerView, load_ruleset, observe
from engine.cards import mask_of


def _at_contract(preset: str, seed: int) -> tuple[Game, PlayerView]:
    """Deal 0 of ``seed`` with three counting bots bidding and passing, at the contract, and
    the declarer's view."""
    rules = load_ruleset(preset)
    game = Game.new(rules, seed, [f"c{i}" for i in range(rules.players)])
    bots = [CountingBot() for _ in range(rules.players)]
    while game.phase is not Phase.CONTRACT:
        seat = game.to_act
        assert seat is not None and not game.deal_results
        game.apply(bots[seat].act(observe(game, seat)), seat=seat)
    assert game.declarer is not None
    return game, observe(game, game.declarer)


def _weak_model_score(view: PlayerView, level: int) -> float:
    """The relative score of playing ``level`` under pimc's weak-hand take model."""
    d = _Delegate()
    pred = d.contract_estimate(view) + d.concede_offset
    p = d.p_make(pred, level, d.concede_sigma)
    return relative_score_of_play(
        p, level, pred, d.concede_sigma, made_scores=made_contract_scores(view, level)
    )


def _double_dummy(game: Game, view: PlayerView) -> int:
    masks = [mask_of(observe(game, s).hand) for s in range(3)]
    return Solver(masks, view.seat, view.seat, **rule_options(game.ruleset)).value()


def test_pimc_names_the_four_aces_raise_its_weak_hand_model_would_concede() -> None:
    """1001, seed 18: the 45 bought by seat 2 holding A♠ K♣ A♣ K♦ A♦ Q♥ 10♥ A♥
    (estimate 257). Counting names 265 (the four aces with a ten: the estimate + 27.5,
    spread 12); under the weak-hand model 265 scores −69 against a concession's −45. The
    ten wins a trick, the 200 is declared: the deal makes 265 double-dummy, and pimc made
    it in play (round 54)."""
    game, view = _at_contract("1001", 18)
    assert view.bid == 45
    assert _weak_model_score(view, 265) < conceded_relative(view.ruleset, 45)
    assert PimcBot().act(view) == Contract(265)
    assert _double_dummy(game, view) >= 265


def test_pimc_names_the_raise_its_weak_hand_model_scores_below_the_bid() -> None:
    """classic, seed 25: the 100 bought with J♣ K♣ 10♣ Q♦ Q♥ K♥ 10♥ A♥ after passing
    (estimate 139.5). Counting raises to 105; the weak-hand model scores 100 above 105 (its
    spread 24 is a weak hand's, not this one's). The deal makes 105 double-dummy, and pimc
    made it in play (round 54: naming 100 lost the 5)."""
    game, view = _at_contract("classic", 25)
    assert view.bid == 100
    assert _weak_model_score(view, 105) < _weak_model_score(view, 100)
    assert PimcBot().act(view) == Contract(105)
    assert _double_dummy(game, view) >= 105
