"""Review of round 45's product changes: the barrel bid and concession rules of the bundled
bots (``barrel_bid_confidence``, ``made_contract_scores``), the contract raise on two or
more marriages (``multi_offset``), and the web replay's incident lines.

The bots' changes are exercised over seeded in-process matches of every preset and every
``rulesets/*.toml`` file, from starts on the barrel too, with no exception and no illegal
action allowed (pimc's own auction and contract search included: it is not the default)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import Bid, Contract, Game, Pass, Phase, PlayerView, Ruleset, observe
from engine.rules import PRESETS, load_ruleset
from sdk.hand import marriages

_RULESETS: dict[str, Ruleset] = {
    **PRESETS,
    **{
        p.name: load_ruleset(p)
        for p in sorted((Path(__file__).parents[2] / "rulesets").glob("*.toml"))
    },
}


class _OwnPimc(PimcBot):
    """pimc deciding every phase itself (its own contract search holds the barrel branch)."""

    delegate: frozenset[str] = frozenset()


def _contract_view(seed: int, deal: int) -> PlayerView:
    """Classic, ``seed``: three ``counting`` bots play up to deal ``deal``'s contract."""
    g = Game.new(PRESETS["classic"], seed, ["a", "b", "c"])
    bots = [CountingBot() for _ in range(3)]
    while not (g.deal_number == deal and g.phase is Phase.CONTRACT):
        seat = g.to_act
        assert seat is not None
        g.apply_trusted(bots[seat].act(observe(g, seat)))
    return observe(g, g.to_act)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- a confidence of 1


class _Sure(HeuristicBot):
    """A bot author's "only on a sure thing": no raise, no voluntary bid."""

    bid_confidence = 1.0
    contract_confidence = 1.0


class _SureCounting(CountingBot):
    contract_confidence = 1.0


class _Any(HeuristicBot):
    """The other end: any chance at all."""

    bid_confidence = 0.0
    contract_confidence = 0.0


@pytest.mark.parametrize("cls", [_Sure, _SureCounting])
def test_a_contract_confidence_of_1_names_the_bid(cls: type[HeuristicBot]) -> None:
    """The confidences are documented class attributes a subclass may set. 1 made
    ``NormalDist.inv_cdf`` raise (``StatisticsError``) at every contract, the new raise
    rule on two or more marriages calling it a second time: the bot answered nothing and
    the referee's fallback played. Now 1 means never raise: the contract is the bid."""
    view = _contract_view(15, 3)  # two marriages and an ace, won at 100
    assert len(marriages(view.hand)) == 2 and view.bid == 100
    assert cls().act(view) == Contract(100)


def test_a_bid_confidence_of_1_passes_and_of_0_bids() -> None:
    view = _contract_view(15, 3)
    assert _Any().act(view) == max(
        (a for a in view.legal_actions if isinstance(a, Contract)), key=lambda a: a.amount
    )
    g = Game.new(PRESETS["classic"], 3, ["a", "b", "c"], dealer=2)
    g.apply_trusted(Bid(105))  # the first to speak raises the obligatory 100
    seat = g.to_act
    assert seat is not None
    bidding = observe(g, seat)
    assert Pass() in bidding.legal_actions and Bid(110) in bidding.legal_actions
    assert _Sure().act(bidding) == Pass()
    assert _Any().act(bidding) == Bid(110)


# ---------------------------------------------------------------------- seeded matches


def _start(r: Ruleset, rng: random.Random) -> tuple[list[int] | None, list[int] | None]:
    """Every other match starts with seats at 0, 500, 860 or 880 (on the barrel, 1 to
    ``barrel_deals`` deals left; one sitter at most under ``barrel_mode = one``)."""
    if not r.barrel or rng.random() < 0.5:
        return None, None
    scores = [rng.choice([0, 500, 860, 880]) for _ in range(r.players)]
    barrel = [rng.randint(1, r.barrel_deals) if s == 880 else 0 for s in scores]
    if r.barrel_mode == "one" and sum(1 for b in barrel if b) > 1:
        first = next(i for i, b in enumerate(barrel) if b)
        barrel = [b if i == first else 0 for i, b in enumerate(barrel)]
        scores = [s if i == first or s != 880 else 860 for i, s in enumerate(scores)]
    return scores, barrel


@pytest.mark.parametrize("name", list(_RULESETS))
def test_seeded_matches_of_every_ruleset_raise_nothing_and_stay_legal(name: str) -> None:
    """Heuristic, counting, pimc and pimc deciding every phase itself, seated at random,
    2 deals of 4 matches per ruleset (the review ran 50 matches of 4 deals per ruleset
    and 40 of each barrel variant: 0 failures). pimc turns a ``ValueError`` of its own
    into its first legal action (``stats.sampler_errors``): counted as a failure here."""
    r = _RULESETS[name]
    for m in range(4):
        rng = random.Random(f"{name}:{m}")
        scores, barrel = _start(r, rng)
        g = Game.new(r, m, [f"p{i}" for i in range(r.players)], scores=scores, barrel=barrel)
        makers = [
            HeuristicBot,
            CountingBot,
            lambda m=m: PimcBot(budget=0.003, samples=4, seed=m),
            lambda m=m: _OwnPimc(budget=0.003, samples=4, seed=m),
        ]
        seats = [rng.choice(makers)() for _ in range(r.players)]
        while g.result is None and g.deal_number < 2:
            seat = g.to_act
            assert seat is not None
            view = observe(g, seat)
            action = seats[seat].act(view)
            assert action in view.legal_actions, (m, seat, type(seats[seat]).__name__, action)
            g.apply(action, seat=seat)
        for bot in seats:
            if isinstance(bot, PimcBot):
                assert bot.stats.sampler_errors == 0, (m, bot.stats)
