"""``arena replay``'s rendering of a record (arena/render.py): what the trick table shows."""

from __future__ import annotations

import random
import re

from rich.console import Console

from arena.render import printable, render_record
from engine import PRESETS, Game, Phase, Ruleset, Suit, ThrowIn, parse_action


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


def _fallback_record() -> tuple[dict, int, dict[str, list]]:
    """A referee-like record of two deals: seat ``v`` (first hand of deal 1, who takes the
    talon at its obligatory 100 as the others pass) has its first give answered illegally,
    its contract timed out, its second card malformed (the third strike: it forfeits), and
    every move after that is the referee's. Moves with a single legal action are
    ``"forced"``. Returns (record, v, what the referee played for v, by phase)."""
    from engine import Pass, Play, fallback_action

    g = Game.new("classic", 4, ["ann", "bob", "cid"])
    rng = random.Random(4)
    v = g.first_hand
    bys: list[str] = []
    incidents: list[dict] = []
    played: dict[str, list] = {"give": [], "contract": [], "play": [], "bid": []}
    forfeited = False
    gives = plays = 0
    cards = [0, 0]  # cards played in each deal
    while g.deal_number < 2:
        seat, legal, deal = g.to_act, g.legal_actions(), g.deal_number
        assert seat is not None
        by, action = "bot", rng.choice(legal)
        passes = [a for a in legal if isinstance(a, Pass)]
        if passes and seat != v:
            action = passes[0]  # the others pass: v takes the talon
        strike = None
        if seat == v and forfeited:
            by, action = "fallback", fallback_action(legal)
        elif len(legal) == 1:
            by, action = "forced", legal[0]
        elif seat == v and g.phase is Phase.PASSING:
            gives += 1
            strike = "illegal" if gives == 1 else None
        elif seat == v and g.phase is Phase.CONTRACT:
            strike = "timeout"
        elif seat == v and g.phase is Phase.PLAYING:
            plays += 1
            strike = "malformed" if plays == 2 else None
        if strike is not None:
            by, action = "fallback", fallback_action(legal)
            incidents.append({"kind": strike, "seat": v, "deal": deal, "detail": "..."})
            if strike == "malformed":
                incidents.append({"kind": "forfeit", "seat": v, "deal": deal,
                                  "detail": "3 strikes"})  # fmt: skip
                forfeited = True
        if by == "fallback":
            kind = type(action).__name__.lower()
            ntrick = cards[deal] // 3 + 1
            played["play" if kind == "play" else kind if kind != "pass" else "bid"].append(
                (deal, action, ntrick)
            )
        cards[deal] += isinstance(action, Play)
        g.apply_trusted(action)
        bys.append(by)
    rec = g.record()
    entries = [a for d in rec["deals"] for a in d["actions"]]
    assert len(entries) == len(bys)
    for entry, by in zip(entries, bys, strict=True):
        entry.update(by=by, ms=0)
    rec.update(match_id="t-m1", incidents=incidents, forfeits=[v])
    return rec, v, played


def test_the_referees_fallback_moves_are_marked_with_their_reason() -> None:
    """Defect (a bot author's report): a pass, a give, a contract or a card the referee
    played for a seat (``"by": "fallback"``, after a timeout, a malformed or illegal answer,
    or once the seat forfeited) was shown like the bot's own move."""
    rec, v, played = _fallback_record()
    name = rec["players"][v]
    text = _text(rec)
    deal1 = text[: text.index("Deal 2 —")]
    lines = deal1.splitlines()
    ((_, give, _),) = played["give"]  # the first; the second is the bot's own
    to = f"{rec['players'][give.to]} ({give.to})"
    assert f"{name} ({v}): gives {give.card} to {to} (fallback: illegal answer)\n" in deal1
    gives = [ln for ln in lines if ln.startswith(f"{name} ({v}): gives")]
    assert len(gives) == 2 and "fallback" not in gives[1], gives
    ((_, contract, _),) = played["contract"]
    assert f"{name} ({v}): {contract} (fallback: timeout)\n" in deal1, deal1
    # the cards: marked in their cells, explained under the tricks
    cards = [p for p in played["play"] if p[0] == 0]
    for _, action, _ in cards:
        assert f"{name} {action.card}*" in deal1, action
    rows = [ln for ln in lines if ln.startswith("│")]
    assert sum(row.count("*") for row in rows) == len(cards)  # forced moves: no mark
    first, rest = cards[0][2], [n for _, _, n in cards[1:]]
    assert rest == list(range(rest[0], 9))
    legend = (
        f"* played by the referee (fallback): {name} ({v}) in trick {first} (malformed "
        f"answer) and in tricks {rest[0]}-8 (forfeited)"
    )
    assert legend in deal1, deal1
    # deal 2: every move of the forfeited seat is the referee's
    deal2 = text[text.index("Deal 2 —") :]
    bids = [p for p in played["bid"] if p[0] == 1]
    assert bids and f"{name}: pass (fallback: forfeited)" in deal2, deal2
    legend = f"* played by the referee (fallback): {name} ({v}) in tricks 1-8 (forfeited)"
    assert legend in deal2, deal2
    assert any(a.get("by") == "forced" for d in rec["deals"] for a in d["actions"])


def test_fallbacks_without_incidents_are_marked_without_a_reason() -> None:
    """A record whose incidents do not say why (none kept) still marks the referee's moves."""
    rec, v, played = _fallback_record()
    del rec["incidents"]
    text = _text(rec)
    name = rec["players"][v]
    ((_, contract, _),) = played["contract"]
    assert f"{name} ({v}): {contract} (fallback)\n" in text, text
    assert f"* played by the referee (fallback): {name} ({v}) in trick" in text
    assert "(timeout)" not in text and "forfeited)" not in text
    # an engine's record (no "by"): nothing is marked
    for d in rec["deals"]:
        for a in d["actions"]:
            del a["by"]
    text = _text(rec)
    assert "fallback" not in text and "*" not in text


def test_the_4_player_dealer_is_shown_sitting_out() -> None:
    """Defect: with four players the dealer's row was left out of the hands without a
    word, and his score change (the talon's points) came with no reason."""
    g = Game.new("1001-4p", 5, ["ann", "bob", "cid", "dan"])
    while g.deal_number < 2:
        g.apply_trusted(g.legal_actions()[0])
    text = _text(g.record())
    first, second = text.split("Deal 2")[:2]
    second = second.split("Deal 3")[0]
    for part, out in ((first, "ann (0)"), (second, "bob (1)")):
        assert re.findall(r"^(\w+ \(\d\))\s+sits out \(scores the talon: \d+\)", part, re.M) == [
            out
        ]


def test_the_4_player_dealers_talon_is_valued_three_nines_named() -> None:
    """Defect (organiser walk of 1001-4p): `arena replay` said the dealer "sits out (scores
    the talon)" and then gave him +100 for a talon of 9♠ 9♣ 9♦, no card points: nothing
    said why (RULES.md: 100 if it is three nines, else its card points)."""
    from engine import parse_cards

    hands = [parse_cards(h) for h in ("", "AS 10S KS QS JS AC 10C", "KC QC JC AD 10D KD QD",
                                      "JD AH 10H KH QH JH 9H")]  # fmt: skip
    g = Game.new("1001-4p", 5, ["ann", "bob", "cid", "dan"], dealer=0,
                 deals={0: (hands, parse_cards("9S 9C 9D"))})  # fmt: skip
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    assert g.deal_results[0].deltas[0] == 100
    text = _text(g.record())
    assert re.search(r"^ann \(0\)\s+sits out \(scores the talon: 100, three nines\)", text, re.M)
    g = Game.new("1001-4p", 5, ["ann", "bob", "cid", "dan"], dealer=0)
    worth = sum(c.points for c in g.talon)
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    assert worth and g.deal_results[0].deltas[0] == worth
    assert f"sits out (scores the talon: {worth})" in _text(g.record())


def test_printable_writes_a_character_past_u_ffff_unambiguously() -> None:
    """Defect: a character past U+FFFF was written as ``\\u`` and five hex digits, so
    U+E0001 (a tag, which no terminal shows) read as U+E000 followed by "1", exactly as
    that text was written. It is ``\\U`` and eight digits, as Python writes it."""
    assert printable("\U000e0001") == "\\U000e0001"
    assert printable("\ue000" + "1") == "\\ue0001"
    assert printable("\U000e0001") != printable("\ue000" + "1")
    assert printable("a\u202eb\x9b\x1b") == "a\\u202eb\\x9b\\x1b"
    assert printable("\U0001f0a1 ♠") == "\U0001f0a1 ♠"  # printable: as it is


def test_a_throw_in_reads_as_words_like_the_other_outcomes() -> None:
    """Defect: `arena replay` wrote the outcome of 1001's throw-in as "thrown_in" (the
    record's value), where "made", "failed" and "conceded" read as words."""
    g = _auction("1001", ["pass", "pass"])
    while g.deal_number < 1:
        legal = g.legal_actions()
        g.apply_trusted(next((a for a in legal if isinstance(a, ThrowIn)), legal[0]))
    assert g.deal_results[0].outcome == "thrown_in"
    text = _text(g.record())
    assert re.search(r"^thrown in\b", text, re.M) and "thrown_in" not in text


def test_a_dealer_on_the_barrel_is_not_said_to_score_the_talon() -> None:
    """Defect (review of a883e8e): with the barrel on (a house rule of 1001-4p) a dealer
    who sits on it scores nothing of the talon (RULES.md: a sitter's takes are not scored),
    but `arena replay` said he "scores the talon: 14" beside a delta of 0."""
    import dataclasses

    rules = dataclasses.replace(PRESETS["1001-4p"], barrel=True, name="1001-4p-barrel")
    g = Game.new(rules, 5, ["ann", "bob", "cid", "dan"], dealer=0, scores=[880, 0, 0, 0],
                 barrel=[2, 0, 0, 0])  # fmt: skip
    worth = g.talon_score
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    assert worth and g.deal_results[0].deltas[0] == 0
    first = _text(g.record()).split("Deal 2")[0]
    said = rf"^ann \(0\)\s+sits out \(on the barrel: the talon \({worth}\) is not scored\)"
    assert re.search(said, first, re.M)
    assert "scores the talon" not in first


def test_the_sitting_out_dealers_talon_with_the_barrel_on_in_every_case() -> None:
    """With the barrel on (a house rule of 1001-4p) the dealer's row says what the engine
    scores him: three nines while he sits on the barrel are named and not scored (the
    words of 1323a00 read "the talon's 100, three nines is not scored"); with another
    seat on the barrel the dealer scores his talon as without it."""
    import dataclasses

    from engine import parse_cards

    rules = dataclasses.replace(PRESETS["1001-4p"], barrel=True, name="1001-4p-barrel")
    hands = [parse_cards(h) for h in ("", "AS 10S KS QS JS AC 10C", "KC QC JC AD 10D KD QD",
                                      "JD AH 10H KH QH JH 9H")]  # fmt: skip
    nines = {0: (hands, parse_cards("9S 9C 9D"))}
    for on, dealer_scores in (([2, 0, 0, 0], 0), ([0, 2, 0, 0], 100)):
        g = Game.new(rules, 5, ["ann", "bob", "cid", "dan"], dealer=0, deals=nines,
                     scores=[880 if b else 0 for b in on], barrel=on)  # fmt: skip
        while g.deal_number < 1:
            g.apply_trusted(g.legal_actions()[0])
        assert g.deal_results[0].deltas[0] == dealer_scores  # (the engine, described)
        first = _text(g.record()).split("Deal 2")[0]
        said = (
            "on the barrel: the talon (100, three nines) is not scored"
            if on[0]
            else ("scores the talon: 100, three nines")
        )
        assert re.search(rf"^ann \((0|880)\)\s+sits out \({re.escape(said)}\)", first, re.M), first
