"""Round 48's seed rule cases (``tests/engine/test_rule_cases_seeds_round48.py``) end to
end: matches played through a real referee on port 0 by bots of the SDK (``BotRunner``)
whose every choice is given, the outcome worked out here by hand from RULES.md (by the
seats' roles in each deal: first hand F, second S, last L, the 4-player dealer D), and
held to every view the product gives of it: each bot's ``on_deal_end`` and
``on_match_end``, the record returned and the record file, the engine's ``replay`` of the
record, and ``arena replay`` (its table and ``--check``).

The referee deals from the match seed, so the cases are the ones whose outcome the
choices decide on any deal (a concession, a throw-in, the barrel reached by the halves
of a concession), and a deal played out, scored here trick by trick from the record.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena_cli
from engine import (
    ACE_MARRIAGE_VALUE,
    MARRIAGE_VALUES,
    PRESETS,
    Action,
    Bid,
    Concede,
    Contract,
    Give,
    Pass,
    Phase,
    Play,
    Ruleset,
    ThrowIn,
    parse_action,
    parse_card,
    replay,
)
from sdk import Bot
from tests.support.harness import arena

NAMES = ["ann", "bob", "cid", "dan"]
POINTS = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
ORDER = ["9", "J", "Q", "K", "10", "A"]  # low to high (000:2)

#: The bots' choices: (view) -> the action.
Choose = Callable[[Any], Action]


def roles(dealer: int, n: int) -> dict[str, int]:
    """The seats of a deal by role (RULES.md §1: first hand left of the dealer)."""
    out = {"F": (dealer + 1) % n, "S": (dealer + 2) % n, "L": (dealer + 3) % n}
    if n == 4:
        out["D"] = dealer
    return out


def chooser(
    *, raise_in: tuple[int, ...] = (), concede: bool = True, declare: bool = False
) -> Choose:
    """The bots' choices: in the auction S raises by one step in the deals ``raise_in``,
    everyone else passes; the declarer gives his lowest cards, then (with ``concede``)
    concedes or throws in where he may, else names the lowest contract; in play the first
    legal card (a marriage declared with it when ``declare``)."""

    def choose(view: Any) -> Action:
        legal = list(view.legal_actions)
        if view.phase is Phase.BIDDING:
            s = roles(view.dealer, len(view.players))["S"]
            if view.seat == s and view.deal_number in raise_in and isinstance(legal[0], Bid):
                return legal[0]
            return Pass()
        kinds = (Concede, ThrowIn, Give, Contract) if concede else (Give, Contract)
        for kind in kinds:
            for a in legal:
                if isinstance(a, kind):
                    return a
        if declare:
            for a in legal:
                if isinstance(a, Play) and a.declare:
                    return a
        return legal[0]

    return choose


@dataclasses.dataclass
class Played:
    record: dict[str, Any]
    path: Path
    told: dict[int, list[Any]]  # per seat: each DealResult told, then the GameResult


def play(tmp: Path, rules: Ruleset, seed: int, choose: Choose) -> Played:
    """One match through a referee on a free port, every seat an SDK bot calling
    ``choose``; the record, its file and what each bot was told of each deal's end."""
    told: dict[int, list[Any]] = {}

    class Given(Bot):
        def act(self, view: Any) -> Action:
            return choose(view)

        def on_deal_end(self, view: Any, result: Any) -> None:
            told.setdefault(view.seat, []).append(result)

        def on_match_end(self, view: Any, result: Any) -> None:
            told.setdefault(view.seat, []).append(result)

    names = NAMES[: rules.players]

    async def main() -> dict[str, Any]:
        async with arena(tmp, decision_ms=20_000, time_bank_ms=0, record_dir=tmp) as a:
            tasks = await a.runners(names, [Given] * len(names), matches=1)
            record = await a.referee.run_match("m48", rules, seed, names)
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            await a.referee.end_streams()
            return record

    record = asyncio.run(main())
    return Played(record, tmp / "m48.jsonl", told)


def replay_table(path: Path) -> list[tuple[list[int], list[int]]]:
    """(deltas, scores) per deal as ``arena replay`` prints them."""
    res = CliRunner().invoke(arena_cli, ["replay", str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = []
    for line in res.output.splitlines():
        m = re.search(r"deltas (.*?)\s+scores (.*)$", line)
        if m:
            deltas = [int(x) for x in re.findall(r"[+-]\d+", m.group(1))]
            out.append((deltas, [int(x) for x in m.group(2).split(",")]))
    return out


def check(p: Played, rules: Ruleset, want: list[list[int]], barrel: list[list[int]] | None) -> None:
    """Every view of the match against ``want`` (each deal's deltas, worked out by hand)
    and ``barrel`` (deals left per seat after each deal, 0 = off)."""
    n = rules.players
    scores = [0] * n
    table = []
    for deltas in want:
        scores = [a + b for a, b in zip(scores, deltas, strict=True)]
        table.append((deltas, scores))
    file_record = json.loads(p.path.read_text().splitlines()[-1])["record"]
    for rec in (p.record, file_record):
        assert [(d["deltas"], d["scores"]) for d in rec["deals"]] == table
        assert rec["result"]["scores"] == scores
    for seat in range(n):
        *deals, end = p.told[seat]
        assert [(list(r.deltas), list(r.scores)) for r in deals] == table, seat
        if barrel is not None:
            assert [list(r.barrel) for r in deals] == barrel, seat
        assert list(end.scores) == scores
    game = replay(p.record)  # the engine, from the seed and the actions
    assert list(game.scores) == scores and game.is_over
    assert replay_table(p.path) == table
    res = CliRunner().invoke(arena_cli, ["replay", "--check", str(p.path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def said(deal: dict[str, Any]) -> list[tuple[str, int]]:
    """The bids, concessions and throw-ins of a recorded deal, with their seats."""
    words = ("bid", "concede", "throw")
    return [(a["action"], a["seat"]) for a in deal["actions"] if a["action"].startswith(words)]


def _rules(preset: str, **options: Any) -> Ruleset:
    return dataclasses.replace(PRESETS[preset], **options)


# ----------------------------------------------------------------------------- the cases


def test_concessions_free_at_100_and_105_pay_halves_rounded_up(tmp_path: Path) -> None:
    """000:17 "Если двое игроков сразу скажут пас, то играет первый" and 000:18 "роспись
    ... первый без штрафа ... двум другим игрокам записывается на счет по половине очков
    заказанной игры": deal 0, both pass, F concedes at 100 (F 0, S 50, L 50); deal 1, S
    raises to 105 and wins it, concedes (half of 105 rounded half up: 53 each)."""
    rules = _rules("classic", max_deals=2)
    p = play(tmp_path, rules, 48, chooser(raise_in=(1,)))
    want = []
    for i, deal in enumerate(p.record["deals"]):
        r = roles(deal["dealer"], 3)
        deltas = [0, 0, 0]
        if i == 0:
            assert said(deal) == [("concede", r["F"])]
            deltas[r["S"]] = deltas[r["L"]] = 50
        else:
            assert said(deal) == [("bid 105", r["S"]), ("concede", r["S"])]
            deltas[r["F"]] = deltas[r["L"]] = 53
        want.append(deltas)
    check(p, rules, want, [[0, 0, 0]] * 2)


def test_a_penalty_concession_costs_the_bid(tmp_path: Path) -> None:
    """000:18 "второй со штрафом (при этом со счета игрока вычитаются очки равные сумме
    его заказа)": S wins at 105 and concedes: S -105, F and L 53 each."""
    rules = _rules("classic", max_deals=1, concede="penalty")
    p = play(tmp_path, rules, 7, chooser(raise_in=(0,)))
    (deal,) = p.record["deals"]
    r = roles(deal["dealer"], 3)
    assert said(deal) == [("bid 105", r["S"]), ("concede", r["S"])]
    deltas = [0, 0, 0]
    deltas[r["S"]], deltas[r["F"]], deltas[r["L"]] = -105, 53, 53
    check(p, rules, [deltas], [[0, 0, 0]])


@pytest.mark.parametrize("players", [3, 4])
def test_1001_all_pass_the_last_hand_throws_in(tmp_path: Path, players: int) -> None:
    """002:17 "Если пасуют 2 игрока из трех, то игрок на последней руке берет прикуп ...
    бросает свои карты (в этом случае все игроки кроме сидящего на прикупе, пишут себе в
    плюс по 50 очков)"; with 4 players "сдатчик записывает себе за прикуп ... за 3
    девятки — 100 очков, за другие карты — сумму очков на картах"."""
    rules = _rules("1001" if players == 3 else "1001-4p", max_deals=2)
    p = play(tmp_path, rules, 11, chooser())
    want = []
    for deal in p.record["deals"]:
        r = roles(deal["dealer"], players)
        assert said(deal) == [("throw-in", r["L"])]
        deltas = [0] * players
        deltas[r["F"]] = deltas[r["S"]] = 50
        if players == 4:
            talon = [parse_card(c) for c in deal["talon"]]
            nines = all(str(c).startswith("9") for c in talon)
            deltas[r["D"]] = 100 if nines else sum(POINTS[str(c)[:-1]] for c in talon)
            assert deal["hands"][r["D"]] == []  # the dealer was dealt nothing
        want.append(deltas)
    check(p, rules, want, None)


@pytest.mark.parametrize("mode", ["many", "one"])
def test_two_reaching_the_barrel_together(tmp_path: Path, mode: str) -> None:
    """000:26-28 with the barrel at 50 (000:31: the house rules): F concedes at 100, S and L
    take 50 each and reach the barrel together: ``many``, both sit (3 deals each); ``one``
    ("если два игрока набирают 880 очков одновременно, то они оба сразу же слетают"), both
    fall, 000:29 "При любом случае слета с бочки у игрока списывается 120 очков": -70."""
    rules = _rules("classic", max_deals=1, barrel_at=50, barrel_mode=mode)
    p = play(tmp_path, rules, 5, chooser())
    (deal,) = p.record["deals"]
    r = roles(deal["dealer"], 3)
    assert said(deal) == [("concede", r["F"])]
    deltas, barrel = [0, 0, 0], [0, 0, 0]
    for s in (r["S"], r["L"]):
        deltas[s] = 50 if mode == "many" else 50 - 120
        barrel[s] = 3 if mode == "many" else 0
    check(p, rules, [deltas], [barrel])


def hand_score(deal: dict[str, Any], rules: Ruleset) -> list[int]:
    """A played deal scored from its record by RULES.md alone: each trick to the highest
    trump, else the highest card of the led suit (000:20); a declared marriage's value to
    its declarer and its suit trumps from that trick on (000:11-16); the declarer +contract
    if his take reaches it, else -contract (000:21); each opponent his take, rounded to
    ``rounding`` (002:15)."""
    n = rules.players
    points, marr = [0] * n, [0] * n
    trump = None
    trick: list[tuple[int, str, str]] = []  # (seat, rank, suit)
    contract = declarer = None
    for a in deal["actions"]:
        act = parse_action(a["action"])
        if isinstance(act, Contract):
            contract, declarer = act.amount, a["seat"]
        if not isinstance(act, Play):
            continue
        text = str(act.card)
        rank, suit = text[:-1], text[-1]
        if act.declare and rank == "A":
            marr[a["seat"]] += ACE_MARRIAGE_VALUE
        elif act.declare:
            marr[a["seat"]] += MARRIAGE_VALUES[act.card.suit]
            trump = suit
        trick.append((a["seat"], rank, suit))
        if len(trick) == 3:
            led = trick[0][2]
            best = max(
                trick,
                key=lambda t: (t[2] == trump, t[2] == led, ORDER.index(t[1])),
            )
            points[best[0]] += sum(POINTS[t[1]] for t in trick)
            trick = []
    assert sum(points) == 120 and contract is not None and declarer is not None
    out = [0] * n
    take = points[declarer] + marr[declarer]
    out[declarer] = contract if take >= contract else -contract
    unit = rules.rounding
    r = roles(deal["dealer"], n)
    for s in (r["F"], r["S"], r["L"]):
        if s != declarer:
            t = points[s] + marr[s]
            out[s] = (2 * t + unit) // (2 * unit) * unit
    return out


@pytest.mark.parametrize(
    ("preset", "declare", "seed"),
    [("classic", False, 3), ("classic", True, 24), ("1001", True, 10)],
)
def test_a_played_deal_scored_trick_by_trick(
    tmp_path: Path, preset: str, declare: bool, seed: int
) -> None:
    """000:19-22 and 002:15 on a deal played out: the first hand (classic, committed) or
    whoever wins the talon plays the lowest contract; each trick, each marriage declared
    (with ``declare``) and the score worked out from the record by hand."""
    rules = _rules(preset, max_deals=1)
    raise_in = (0,) if preset == "1001" else ()
    p = play(tmp_path, rules, seed, chooser(raise_in=raise_in, concede=False, declare=declare))
    (deal,) = p.record["deals"]
    assert deal["outcome"] in ("made", "failed")
    if declare:  # the case did arise: a second marriage changed the trumps
        assert sum(a["action"].endswith("declare") for a in deal["actions"]) >= 2
    check(p, rules, [hand_score(deal, rules)], None if not rules.barrel else [[0, 0, 0]])
