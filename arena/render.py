"""Render a match record for people: deal by deal, trick by trick (rich renderables).

Used by ``arena replay FILE.json`` and reusable for stored matches. The record is replayed
through the engine so that trick winners, trumps and marriages are the engine's; if a
record does not replay, what could be rendered is shown followed by the error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from engine import (
    Card,
    Game,
    IllegalActionError,
    Play,
    ReplayError,
    Suit,
    parse_action,
    trick_winner,
)
from engine.record import check_record_shape, forfeit_result, start_game

__all__ = ["render_record", "standings_table"]

_RED = {Suit.HEARTS, Suit.DIAMONDS}


def _card(card: Card) -> Text:
    return Text(str(card), style="red" if card.suit in _RED else "bold")


def _cards(cards: Sequence[Card]) -> Text:
    out = Text()
    for i, c in enumerate(sorted(cards)):
        if i:
            out.append(" ")
        out.append_text(_card(c))
    return out


def _name(players: Sequence[str], seat: int) -> str:
    return f"{players[seat]} ({seat})" if 0 <= seat < len(players) else f"seat {seat}"


def standings_table(players: Sequence[str], result: Mapping[str, Any]) -> Table:
    """The final standings: place, player, score, shortfall."""
    table = Table(title="Final standings")
    table.add_column("place", justify="right")
    table.add_column("player")
    table.add_column("score", justify="right")
    table.add_column("shortfall", justify="right")
    scores = result.get("scores", [])
    places = result.get("places", [0] * len(scores))
    shortfalls = result.get("shortfalls", [0] * len(scores))
    for seat in sorted(range(len(scores)), key=lambda s: (places[s], s)):
        table.add_row(
            str(places[seat]), Text(_name(players, seat)), str(scores[seat]), str(shortfalls[seat])
        )
    return table


def _render_deal(
    game: Game, players: Sequence[str], deal: Mapping[str, Any], index: int
) -> tuple[list[RenderableType], str | None]:
    """Apply one deal's actions to ``game`` and describe it; returns (parts, error)."""
    parts: list[RenderableType] = []
    dealer = game.dealer
    parts.append(Text(f"Deal {index} — dealer {_name(players, dealer)}", style="bold underline"))
    hands = Table.grid(padding=(0, 2))
    for seat, hand in enumerate(game.dealt_hands):
        if hand:
            hands.add_row(Text(_name(players, seat)), _cards(hand))  # a name is no markup
    hands.add_row("talon", _cards(game.talon))
    parts.append(hands)

    bids: list[str] = []
    tricks = Table(show_header=True, header_style="dim")
    tricks.add_column("#", justify="right")
    tricks.add_column("cards")
    tricks.add_column("trump")
    tricks.add_column("winner")
    trick: list[tuple[int, Card]] = []
    marks: list[str] = []
    lines: list[Text] = []
    error: str | None = None
    ntrick = 0
    for j, entry in enumerate(deal.get("actions", [])):
        seat, text = entry.get("seat"), entry.get("action")
        # The trump during a trick: a declaration sets it on the lead, before any card
        # is compared; after the last trick the game has already moved to the next deal.
        trump = game.trump
        try:
            action = parse_action(str(text))
            game.apply(action, seat=seat)
        except (ValueError, IllegalActionError) as e:
            error = f"deal {index}, action {j} (seat {seat}: {text}): {e}"
            break
        kind = type(action).__name__
        if kind in ("Bid", "Pass"):
            bids.append(f"{players[seat]}: {action}")
            if game.declarer is not None and not lines:
                lines.append(
                    Text(
                        f"{_name(players, game.declarer)} takes the talon at {game.bid}",
                        style="cyan",
                    )
                )
        elif isinstance(action, Play):
            trick.append((seat, action.card))
            if action.declare:
                what = "ace marriage" if action.card.rank == 5 else f"{action.card.suit} marriage"
                marks.append(f"{players[seat]} declares the {what}")
            if len(trick) == 3:
                ntrick += 1
                w = trick[trick_winner([c for _, c in trick], trump)][0]
                cells = _trick_cells(players, trick)
                if marks:
                    cells.append(f"  ({'; '.join(marks)})", style="magenta")
                # (Suit.SPADES is 0: "trump or '-'" showed a spade trump as none.)
                tricks.add_row(str(ntrick), cells, "-" if trump is None else str(trump),
                               Text(players[w]))  # fmt: skip
                trick, marks = [], []
        else:
            line = Text(f"{_name(players, seat)}: ")
            if kind == "Give":
                line.append("gives ")
                line.append_text(_card(action.card))  # type: ignore[union-attr]
                line.append(f" to {_name(players, action.to)}")  # type: ignore[union-attr]
            else:
                line.append(str(action))
            lines.append(line)
    if trick:  # a trick under way when the record ends (an interrupted match)
        trump = game.trump
        tricks.add_row(str(ntrick + 1), _trick_cells(players, trick),
                       "-" if trump is None else str(trump), "(unfinished)")  # fmt: skip
    parts.append(Text("Bidding: " + (", ".join(bids) or "-")))
    parts.extend(lines)
    if ntrick or trick:
        parts.append(tricks)
    return parts, error


def _trick_cells(players: Sequence[str], trick: Sequence[tuple[int, Any]]) -> Text:
    """A trick's cards in play order, each after its player's name."""
    cells = Text()
    for k, (seat, card) in enumerate(trick):
        if k:
            cells.append("  ")
        cells.append(f"{players[seat]} ")
        cells.append_text(_card(card))
    return cells


def render_record(record: Mapping[str, Any]) -> RenderableType:
    """A rich renderable of a whole match record (hands, bids, talon, passes, tricks,
    marriages, scores per deal, final standings).

    A record without the shape of one (:func:`engine.record.check_record_shape`) or whose
    match cannot start renders as a single red line starting with "cannot render"."""
    try:
        check_record_shape(record)
    except ReplayError as e:
        return Text(f"cannot render: {e}", style="red")
    players = list(record["players"])
    parts: list[RenderableType] = []
    try:
        game = start_game(record)
    except ReplayError as e:
        return Text(f"cannot render: {e}", style="red")
    parts.append(
        Text(
            f"Match: {game.ruleset.name}, seed {record.get('seed')!r}, players "
            f"{', '.join(players)}",
            style="bold",
        )
    )
    deals = record["deals"]
    for i, d in enumerate(deals):
        if game.is_over:
            break
        deal_parts, error = _render_deal(game, players, d, i)
        parts.extend(deal_parts)
        if error:
            parts.append(Text(f"refused: {error}", style="bold red"))
            return Group(*parts)
        if len(game.deal_results) > i:
            res = game.deal_results[i]
            summary = Text(f"{res.outcome}", style="green" if res.outcome == "made" else "yellow")
            if res.contract is not None:
                summary.append(
                    f" (contract {res.contract}, declarer took {res.takes[res.declarer]})"
                )
            summary.append(
                "  deltas "
                + ", ".join(f"{players[s]} {res.deltas[s]:+d}" for s in range(len(players)))
            )
            summary.append("  scores " + ", ".join(str(x) for x in res.scores))
            parts.append(summary)
            for ev in res.events:  # the engine names seats; a reader knows the bots
                named = re.sub(r"\bseat (\d+)", lambda m: players[int(m[1])], ev)
                parts.append(Text(named, style="magenta"))
        parts.append(Text(""))
    # The standings as the rules make them (forfeiters placed last, as the referee does),
    # like every deal above: not the record's own figures, which may say otherwise.
    result = record.get("result")
    if game.is_over:
        result = game.record()["result"]
        forfeits = record.get("forfeits") or []
        if forfeits:
            result = forfeit_result(result, list(forfeits), game.ruleset.target)
    if result:
        parts.append(standings_table(players, result))
    return Group(*parts)
