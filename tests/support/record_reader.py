"""An outside reader of match records, written from docs/record-format.md and
docs/rules-engine.md alone (round 17): it rebuilds every deal with the public engine API
and checks every field the docs define. `read(record)` returns a list of findings (empty
when the record says what the docs say it says) and the rebuilt deals, trick by trick.

    python tests/support/record_reader.py FILE.json|FILE.jsonl|DB.sqlite ...
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import (
    Card,
    Game,
    Play,
    Ruleset,
    fallback_action,
    load_ruleset,
    parse_action,
    parse_card,
    trick_winner,
)
from engine.game import shuffled_deck

KINDS = {"timeout", "illegal", "malformed", "wrong_request", "disconnect", "forfeit", "bot_error"}
STRIKES = {"timeout", "illegal", "malformed"}


@dataclass
class Trick:
    leader: int
    cards: list[tuple[int, str]]
    winner: int
    marriage: tuple[int, str] | None = None


@dataclass
class Deal:
    number: int
    dealer: int
    hands: list[set[str]]
    talon: set[str]
    tricks: list[Trick] = field(default_factory=list)
    outcome: str | None = None
    deltas: list[int] | None = None
    scores: list[int] | None = None


def ruleset_of(record: dict[str, Any]) -> Ruleset:
    rs = record["ruleset"]
    players = len(record["players"])
    if isinstance(rs, str):
        return load_ruleset(rs, players=players)
    if "preset" in rs:
        base = load_ruleset(rs["preset"], players=players).to_dict()
        base.update({k: v for k, v in rs.items() if k != "preset"})
        return Ruleset.from_dict(base)
    return Ruleset.from_dict(rs)


def places_of(scores: list[int]) -> list[int]:
    return [1 + sum(o > s for o in scores) for s in scores]


def seed_deal(seed: int | str, k: int, dealer: int, n: int) -> tuple[list[set[str]], set[str]]:
    """docs/rules-engine.md, Deals: 7 cards to each active seat, first hand first, the
    last 3 to the talon (read as: 7 at a time, from the seat after the dealer)."""
    deck = [str(Card(c)) for c in shuffled_deck(seed, k)]
    hands: list[set[str]] = [set() for _ in range(n)]
    active = [(dealer + 1 + i) % n for i in range(n) if n == 3 or (dealer + 1 + i) % n != dealer]
    for j, seat in enumerate(active[:3]):
        hands[seat] = set(deck[7 * j : 7 * j + 7])
    return hands, set(deck[21:])


def read(record: dict[str, Any]) -> tuple[list[str], list[Deal]]:
    out: list[str] = []
    rules = ruleset_of(record)
    players = record["players"]
    n = len(players)
    seed = record["seed"]
    start = record.get("start") or {}
    first = start.get("dealer", random.Random(f"{seed}:dealer").randrange(n))
    refereed = "match_id" in record
    explicit = {
        d["number"]: (d["hands"], d["talon"])
        for d in record["deals"]
        if "hands" in d and d["hands"] is not None
    }
    game = Game.new(
        rules,
        seed,
        players,
        deals=explicit or None,
        scores=start.get("scores"),
        barrel=start.get("barrel"),
        dealer=start.get("dealer"),
    )
    if game.first_dealer != first:
        out.append(f"first dealer {game.first_dealer}, the docs' draw gives {first}")
    deals: list[Deal] = []
    fallbacks: dict[tuple[int, int], int] = {}
    for i, d in enumerate(record["deals"]):
        where = f"deal {i}"
        if d.get("number") != i:
            out.append(f"{where}: number {d.get('number')!r}")
        dealer = (first + i) % n
        if d.get("dealer") != dealer or game.dealer != dealer:
            out.append(f"{where}: dealer {d.get('dealer')} / engine {game.dealer}, docs {dealer}")
        hands = [set(h) for h in d["hands"]]
        talon = set(d["talon"])
        if n == 4 and hands[dealer]:
            out.append(f"{where}: the 4-player dealer holds cards")
        if len(talon) != 3 or any(
            len(h) != 7 for s, h in enumerate(hands) if not (n == 4 and s == dealer)
        ):
            out.append(f"{where}: hands/talon sizes")
        seeded = seed_deal(seed, i, dealer, n)
        if (hands, talon) != seeded and refereed:
            out.append(f"{where}: cards are not the ones the seed deals (docs' dealing order)")
        dealt = [{str(c) for c in h} for h in game.dealt_hands]
        if dealt != hands or {str(c) for c in game.talon} != talon:
            out.append(f"{where}: engine dealt other cards than the record")
        deal = Deal(i, dealer, hands, talon)
        trick: list[tuple[int, str]] = []
        marriage: tuple[int, str] | None = None
        for j, a in enumerate(d["actions"]):
            if game.is_over or game.deal_number != i:
                out.append(f"{where}: action {j} after the deal ended")
                break
            legal = game.legal_actions()
            act = parse_action(a["action"])
            seat = a["seat"]
            if seat != game.to_act:
                out.append(f"{where}: action {j} by seat {seat}, to act {game.to_act}")
            if act not in legal:
                out.append(f"{where}: action {j} {a['action']} not legal")
                break
            by = a.get("by")
            if refereed:
                if by not in ("bot", "forced", "fallback") or not isinstance(a.get("ms"), int):
                    out.append(f"{where}: action {j}: by {by!r} ms {a.get('ms')!r}")
                if by == "forced" and len(legal) != 1 and not rules.ask_forced:
                    out.append(f"{where}: action {j} forced with {len(legal)} legal actions")
                if by == "fallback":
                    fallbacks[(seat, i)] = fallbacks.get((seat, i), 0) + 1
                    if act != fallback_action(legal):
                        out.append(
                            f"{where}: action {j}: fallback {act}, not {fallback_action(legal)}"
                        )
            trump_before = game.trump
            game.apply(act, seat=seat)
            if isinstance(act, Play):
                if act.declare:
                    marriage = (seat, str(act.card))
                trick.append((seat, str(act.card)))
                if len(trick) == 3:
                    trump = (
                        game.trump if game.deal_number == i and not game.is_over else trump_before
                    )
                    w = trick_winner([parse_card(c) for _, c in trick], trump)
                    deal.tricks.append(Trick(trick[0][0], trick, trick[w][0], marriage))
                    trick, marriage = [], None
        if i < len(game.deal_results):
            r = game.deal_results[i]
            deal.outcome, deal.deltas, deal.scores = r.outcome, list(r.deltas), list(r.scores)
            for key in ("outcome", "deltas", "scores"):
                got = d.get(key)
                want = getattr(r, key)
                want = list(want) if isinstance(want, tuple) else want
                if (key != "outcome" or got is not None) and got != want:
                    out.append(f"{where}: {key} {got} != rules {want}")
            if r.deltas and d.get("scores") and i > 0 and record["deals"][i - 1].get("scores"):
                prev = record["deals"][i - 1]["scores"]
                if [p + x for p, x in zip(prev, r.deltas, strict=True)] != list(
                    r.scores
                ) and not rules.barrel:
                    out.append(f"{where}: scores are not the previous plus deltas")
        elif i != len(record["deals"]) - 1 or not (
            record.get("result") is None or record.get("abandoned")
        ):
            out.append(f"{where}: deal not finished")
        deals.append(deal)
    out += check_result(record, game, rules, fallbacks)
    return out, deals


def check_result(
    record: dict[str, Any], game: Game, rules: Ruleset, fallbacks: dict[tuple[int, int], int]
) -> list[str]:
    out: list[str] = []
    n = len(record["players"])
    result = record.get("result")
    forfeits = record.get("forfeits") or []
    rules_result = record.get("rules_result", result) if "match_id" in record else result
    if record.get("interrupted") or (result is None and not game.is_over):
        if result is not None:
            out.append("interrupted match with a result")
        return out
    if record.get("abandoned"):
        if rules_result is not None:
            out.append("abandoned with rules_result")
    elif game.result is None:
        out.append("a result, but the actions do not finish the match")
    else:
        g = game.result
        want: dict[str, Any] = {
            "scores": list(g.scores),
            "places": list(g.places),
            "shortfalls": list(g.shortfalls),
            "winner": g.winner,
            "deals": g.deals,
            "reason": g.reason,
        }
        got = {k: rules_result.get(k) for k in want} if rules_result else None
        if got != want:
            out.append(f"rules result {got} != {want}")
        if want["places"] != places_of(want["scores"]):
            out.append("places are not 1,1,3 style by score")
        if len(game.deal_results) != g.deals:
            out.append("result.deals is not the deals played")
    if result is None:
        return [*out, "no result"]
    scores = result["scores"]
    if forfeits:
        if result.get("forfeits") != sorted(forfeits):
            out.append(f"result.forfeits {result.get('forfeits')} != forfeits {forfeits}")
        rest = [s for s in range(n) if s not in forfeits]
        want_places = [0] * n
        for s in rest:
            want_places[s] = 1 + sum(scores[o] > scores[s] for o in rest)
        for s in forfeits:  # (every seat forfeited: all last, not all first)
            want_places[s] = len(rest) + 1 if rest else n
        if result["places"] != want_places:
            out.append(f"places with forfeits {result['places']} != {want_places}")
    target = rules.target
    win = result.get("winner")
    want_sf = [0 if s == win else max(0, target - sc) for s, sc in enumerate(scores)]
    if result["shortfalls"] != want_sf:
        out.append(f"shortfalls {result['shortfalls']} != {want_sf}")
    firsts = [s for s in range(n) if result["places"][s] == 1]
    if win != (firsts[0] if len(firsts) == 1 else None):
        out.append(f"winner {win} != first places {firsts}")
    if "match_id" in record:
        inc = record.get("incidents", [])
        strikes: dict[tuple[int, int], int] = {}
        for x in inc:
            if (
                x.get("kind") not in KINDS
                or not isinstance(x.get("seat"), int)
                or not isinstance(x.get("detail"), str)
            ):
                out.append(f"incident {x}")
            if x.get("kind") in STRIKES:
                strikes[(x["seat"], x["deal"])] = strikes.get((x["seat"], x["deal"]), 0) + 1
        for key, k in strikes.items():
            if fallbacks.get(key, 0) < k:
                out.append(
                    f"seat {key[0]} deal {key[1]}: {k} strikes, {fallbacks.get(key, 0)} fallbacks"
                )
        ff = sorted({x["seat"] for x in inc if x.get("kind") == "forfeit"})
        if ff != sorted(forfeits):
            out.append(f"forfeit incidents {ff} != forfeits {forfeits}")
        for name, kind in (("wrong_requests", "wrong_request"), ("disconnects", "disconnect")):
            counts = record.get(name)
            if not record.get("interrupted"):
                if not (isinstance(counts, list) and len(counts) == n):
                    out.append(f"{name} {counts!r}")
                    continue
                for s in range(n):
                    listed = sum(1 for x in inc if x.get("kind") == kind and x.get("seat") == s)
                    if listed > min(20, counts[s]):
                        out.append(f"{name}[{s}] {counts[s]} < {listed} listed")
    return out


def records_in(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if path.suffix == ".sqlite":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        found = []
        for mid, seed, seats, deals, rj in con.execute(
            "select id, seed, seats_json, deals, record_json from matches"
        ):
            rec = json.loads(rj)
            found.append((f"{path}:{mid}", rec))
            probs = []
            if (
                rec.get("match_id") != mid
                or rec["seed"] != seed
                or rec["players"] != json.loads(seats)
            ):
                probs.append("matches row != record")
            if rec["result"] and deals != rec["result"]["deals"]:
                probs.append(f"matches.deals {deals} != {rec['result']['deals']}")
            for seat, bot, score, place, shortfall, forfeit in con.execute(
                "select seat, bot, score, place, shortfall, forfeit from match_players"
                " where match_id=?",
                (mid,),
            ):
                r = rec["result"]
                want = (
                    rec["players"][seat],
                    r["scores"][seat],
                    r["places"][seat],
                    r["shortfalls"][seat],
                    int(seat in rec.get("forfeits", [])),
                )
                if (bot, score, place, shortfall, forfeit) != want:
                    probs.append(f"seat {seat}: {bot, score, place, shortfall, forfeit} != {want}")
            rows = con.execute(
                "select number, dealer, made, deltas_json from deals where match_id=?"
                " order by number",
                (mid,),
            ).fetchall()
            for number, dealer, made, deltas in rows:
                d = rec["deals"][number]
                if dealer != d["dealer"] or json.loads(deltas) != d.get("deltas", []):
                    probs.append(f"deals row {number} != record")
                if d.get("outcome") and made is not None and bool(made) != (d["outcome"] == "made"):
                    probs.append(f"deals row {number}: made {made}, outcome {d['outcome']}")
            if probs:
                found.append((f"{path}:{mid} (db)", {"_problems": probs}))
        return found
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        rec = next(x["record"] for x in lines if x["type"] in ("end", "interrupted"))
        probs = []
        start = lines[0]
        if start["type"] != "start" or any(
            start[k] != rec[k] for k in ("match_id", "seed", "players")
        ):
            probs.append("start line != record")
        acts = [x for x in lines if x["type"] == "action"]
        flat = [
            (i, a["seat"], a["action"], a.get("ms"), a.get("by"))
            for i, d in enumerate(rec["deals"])
            for a in d["actions"]
        ]
        if [(x["deal"], x["seat"], x["action"], x["ms"], x["by"]) for x in acts] != flat:
            probs.append("action lines != record actions")
        for x in lines:
            if x["type"] == "deal_end":
                d = rec["deals"][x["deal"]]
                if (x["deltas"], x["scores"], x["outcome"]) != (
                    d["deltas"],
                    d["scores"],
                    d["outcome"],
                ):
                    probs.append(f"deal_end {x['deal']} != record")
        incs = [
            {k: x[k] for k in ("kind", "seat", "deal", "detail")}
            for x in lines
            if x["type"] == "incident"
        ]
        if incs != rec.get("incidents"):
            probs.append("incident lines != record incidents")
        out = [(str(path), rec)]
        if probs:
            out.append((f"{path} (jsonl)", {"_problems": probs}))
        return out
    return [(str(path), json.loads(text))]


def main(paths: list[str]) -> int:
    bad = 0
    for p in paths:
        for name, rec in records_in(Path(p)):
            probs = rec["_problems"] if "_problems" in rec else read(rec)[0]
            for x in probs:
                bad += 1
                print(f"{name}: {x}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
