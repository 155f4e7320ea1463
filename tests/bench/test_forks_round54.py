"""arena.bench.forks (round 54): a variant of pimc's delegated decisions is measured by forking
deal 0 at the first decision it changes; an unchanged deal counts 0; a bad variant is named."""

from __future__ import annotations

import pytest

from arena.bench.forks import _RaiseCap, fork_seed, main, variant
from bots.counting import CountingBot
from bots.pimc import _Delegate
from engine import Contract, Game, Phase, load_ruleset, observe


def test_the_delegates_own_confidence_changes_nothing() -> None:
    """bid-confidence=0.65 is counting's own: no decision differs, nothing is played out."""
    rows = fork_seed(load_ruleset("1001"), 1, "bid-confidence=0.65")
    assert [r["seat"] for r in rows] == [0, 1, 2]
    assert all("decision" not in r and r["old"] == r["new"] == 0.0 for r in rows)


def test_a_changed_bid_is_played_out_both_ways() -> None:
    """1001, seed 1: asking a 0.99 chance to bid turns pimc's opening bid (the first hand's
    40, seat 0) into a pass; both branches are played to the deal's end (a small budget:
    the play-outs' search, not its strength, is under test) and scored."""
    rows = fork_seed(load_ruleset("1001"), 1, "bid-confidence=0.99", pimc_budget=0.005)
    changed = [r for r in rows if "decision" in r]
    assert changed
    first = changed[0]
    assert first["decision"].startswith("bidding") and first["decision"].endswith("-> pass")
    assert all(isinstance(r["old"], float) and isinstance(r["new"], float) for r in changed)
    # a deal's relative score is a multiple of 2.5 (scores are multiples of 5, over 2
    # opponents); both branches were scored, not left at 0
    assert any(r["old"] != 0.0 or r["new"] != 0.0 for r in changed)
    assert all((r["new"] * 2) % 5 == 0 and (r["old"] * 2) % 5 == 0 for r in changed)


def test_raise_cap_names_the_level_pimcs_weak_hand_model_scores_best() -> None:
    """classic, seed 25: counting raises the 100 to 105 (estimate 139.5); the weak-hand model
    (the estimate + 0, spread 24) scores 100 above 105, so the variant names the bid. (The
    variant lost in every preset measured: docs/bots.md, round 54.)"""
    rules = load_ruleset("classic")
    game = Game.new(rules, 25, ["a", "b", "c"])
    bots = [CountingBot() for _ in range(3)]
    while game.phase is not Phase.CONTRACT:
        seat = game.to_act
        assert seat is not None
        game.apply(bots[seat].act(observe(game, seat)), seat=seat)
    assert game.declarer is not None
    view = observe(game, game.declarer)
    assert view.bid == 100
    assert _Delegate().act(view) == Contract(105)
    assert _RaiseCap().act(view) == Contract(100)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "unknown variant 'nope'"),
        ("raise-cap=3", "raise-cap takes no value"),
        ("bid-confidence", "bid-confidence needs a value"),
        ("auction-offset=x", "'x' is not a number"),
        ("free-concede", "free-concede needs a value"),
    ],
)
def test_a_bad_variant_is_named(
    spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match=message):
        variant(spec)
    with pytest.raises(SystemExit) as exc:
        main(["--variant", spec, "--matches", "1", "--workers", "1"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_bad_ruleset_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--variant", "raise-cap", "--ruleset", "nope", "--matches", "1", "--workers", "1"])
    assert "unknown preset 'nope'" in capsys.readouterr().err
