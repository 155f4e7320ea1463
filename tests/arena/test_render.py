"""``arena replay``'s rendering of a record (arena/render.py): what the trick table shows."""

from __future__ import annotations

import random
import re

from rich.console import Console

from arena.render import render_record
from engine import PRESETS, Game, Phase, Ruleset, Suit, parse_action


def _text(rec: dict) -> str:
    console = Console(record=True, width=200)
    console.print(render_record(rec))
    return console.export_text()


def test_a_spade_trump_is_shown_as_spades() -> None:
    """Defect: the trick table showed a ♠ trump as "-" (Suit.SPADES is 0, and the table
    wrote ``trump or "-"``)."""
    for seed in range(500):
        g = Game.new("classic", seed, ["ann", "bob", "cid"])
        rng = random.Random(seed)
        declared = False
        while not g.is_over and g.deal_number < 1:
            acts = g.legal_actions()
            spade = [
                a for a in acts if str(a).endswith("♠ declare") and not str(a).startswith("play A")
            ]
            if spade:
                declared = True
            g.apply_trusted(spade[0] if spade else rng.choice(acts))
        if declared and g.deal_results and g.deal_results[0]:
            break
    assert declared
    text = _text(g.record())
    assert "♠ marriage" in text
    # the trump column of the tricks after the declaration
    assert re.search(r"│ ♠\s+│", text), text


def test_a_trick_under_way_when_the_record_ends_is_shown() -> None:
    """Defect: an interrupted record's last, unfinished trick was left out."""
    g = Game.new("classic", 7, ["ann", "bob", "cid"])
    while g.phase is not Phase.PLAYING:
        g.apply_trusted(g.legal_actions()[0])
    g.apply_trusted(g.legal_actions()[0])  # the lead, and nothing more
    lead = g.trick[0][1]
    text = _text(g.record())
    assert "(unfinished)" in text and str(lead) in text
    assert Suit.SPADES == 0  # why "trump or '-'" was wrong


def test_player_names_are_not_rich_markup() -> None:
    """Defect: a player named "[/]" ended ``arena replay`` with a MarkupError traceback,
    and "[red]rich[/red]" was shown as "rich"."""
    g = Game.new("classic", 3, ["[/]", "[red]rich[/red]", "cid"])
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    text = _text(g.record())
    assert "[/]" in text and "[red]rich[/red]" in text


def _auction(ruleset: Ruleset | str, actions: list[str], seed: int = 5) -> Game:
    """A game whose first auction is ``actions`` (``"pass"``, ``"bid 110"``), then stops."""
    g = Game.new(ruleset, seed, ["ann", "bob", "cid", "dan"][: _players(ruleset)])
    for a in actions:
        g.apply(parse_action(a))
    return g


def _players(ruleset: Ruleset | str) -> int:
    return ruleset.players if isinstance(ruleset, Ruleset) else PRESETS[ruleset].players


def test_deals_are_numbered_from_1_for_people() -> None:
    """Defect: ``arena replay`` said "Deal 0" where the web viewer and the human seat say
    "deal 1". The refused line names both numbers: --check and the engine count from 0."""
    g = Game.new("classic", 3, ["ann", "bob", "cid"])
    while g.deal_number < 2:
        g.apply_trusted(g.legal_actions()[0])
    rec = g.record()
    text = _text(rec)
    assert "Deal 1 — dealer" in text and "Deal 2 — dealer" in text and "Deal 3 —" in text
    assert "Deal 0" not in text
    rec["deals"][1]["actions"][0]["action"] = "contract 100"  # refused: still bidding
    text = _text(rec)
    assert "refused: Deal 2 (record deal 1), action 0" in text, text


def test_the_obligatory_opening_bid_is_shown() -> None:
    """Defect: "Bidding: bob: pass, cid: pass" then "ann takes the talon at 100": the first
    hand's bid, committed without speaking (RULES.md), was left out."""
    g = _auction("classic", ["pass", "pass"])
    first, second, third = (g.players[s] for s in _order(g))
    text = _text(g.record())
    assert f"Bidding: {first}: 100 (obligatory), {second}: pass, {third}: pass" in text, text
    assert f"{first} ({g.first_hand}) takes the talon at 100 (his obligatory bid" in text
    # outbid: the obligatory bid is still the first entry, and the talon needs no comment
    g = _auction("classic", ["bid 110", "pass", "pass"])
    text = _text(g.record())
    assert f"Bidding: {first}: 100 (obligatory), {second}: bid 110, {third}: pass, " in text
    assert f"{second} ({_order(g)[1]}) takes the talon at 110\n" in text, text


def test_1001_has_no_obligatory_bid_and_says_who_takes_the_talon_after_an_all_pass() -> None:
    """1001: nobody is committed (first_hand_commits = false); after an all-pass the talon
    goes to someone who did not bid, at the opening bid (40): the line says why."""
    g = _auction("1001", ["pass", "pass"])  # all_pass = "last_hand"
    first, second, third = (g.players[s] for s in _order(g))
    text = _text(g.record())
    assert "obligatory" not in text
    assert f"Bidding: {first}: pass, {second}: pass\n" in text, text
    assert f"{third} ({_order(g)[2]}) takes the talon at 40 (everybody before him passed: " in text
    assert g.last_hand_take
    first_hand = Ruleset.from_dict({"preset": "1001", "all_pass": "first_hand"})
    g = _auction(first_hand, ["pass", "pass", "pass"])
    text = _text(g.record())
    assert f"{first} ({_order(g)[0]}) takes the talon at 40 (everybody passed: first hand" in text
    g = _auction("1001-4p", ["pass", "bid 45", "pass"])  # the dealer sits out
    text = _text(g.record())
    assert "obligatory" not in text and "takes the talon at 45\n" in text, text


def _order(g: Game) -> tuple[int, ...]:
    """The seats of the current deal in bidding order, first hand first."""
    return g.active_seats
