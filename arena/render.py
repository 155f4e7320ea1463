"""Render a match record for people: deal by deal, trick by trick (rich renderables).

Used by ``arena replay FILE.json`` and reusable for stored matches. The record is replayed
through the engine so that trick winners, trumps and marriages are the engine's; if a
record does not replay, what could be rendered is shown followed by the error.

Deals are numbered from 1 here ("Deal 1"), as the web viewer and the human seat number
them for people; the record's ``number``, ``arena replay --check`` and the engine's
messages count from 0, so the one place that names a deal for both (a refused action)
gives both numbers.
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from engine import (
    ACE_MARRIAGE_VALUE,
    Bid,
    Card,
    DealResult,
    Game,
    Give,
    IllegalActionError,
    Pass,
    Play,
    Rank,
    ReplayError,
    Ruleset,
    Suit,
    parse_action,
    talon_score,
    trick_winner,
)
from engine.record import (
    COUNTED_INCIDENTS,
    check_record_shape,
    forfeit_result,
    load_ruleset_value,
    start_game,
)
from engine.rules import describe_ruleset, describe_run, written_out

__all__ = [
    "CLIENT_FALLBACK_NOTE",
    "PrintableFormatter",
    "abandoned_places",
    "changed_cards",
    "end_reason",
    "fallback_reasons",
    "fallback_why",
    "fitted",
    "incident_summary",
    "plural",
    "printable",
    "render_record",
    "rules_description",
    "shown_result",
    "sitter_talon",
    "standings_table",
    "talon_taken_why",
    "time_limit_note",
    "time_limit_of",
]

_RED = {Suit.HEARTS, Suit.DIAMONDS}

#: Incident kinds that count as strikes (``max_strikes`` of them forfeit the match:
#: docs/tournament.md). An answer to no pending request (``wrong_request``) and a
#: disconnect are not strikes; a disconnect longer than the grace period forfeits at once.
#: Nor is a decision the bot's client said failed (``bot_error``: its own fallback sent).
_STRIKES = ("timeout", "illegal", "malformed")
_NOT_STRIKES = ("bot_error", "wrong_request", "disconnect")

#: What follows an action the bot's client sent as its own fallback, the bot having failed
#: the decision (the record's ``"failed": true``, ``"by": "bot"``; a ``bot_error`` incident).
CLIENT_FALLBACK_NOTE = "(fallback of the bot's client: its decision failed)"

#: The mark of a card the referee played for a seat (``"by": "fallback"``) in a trick
#: cell; a legend under the deal's tricks says whose and why.
FALLBACK_MARK = "*"


def fixed(x: float, digits: int, sign: str = "") -> str:
    """``x`` with ``digits`` decimals as the pages of ``arena web`` write it, and the
    leaderboard and ``arena-bot try``'s table (JavaScript's
    ``toFixed`` and ``Math.round``): a value exactly halfway rounds away from zero. Python's
    format rounds it to even: 1 contract made of 8 showed as 12% here and 13% there, a
    median of 12.5 ms as 12 and 13.

    >>> fixed(12.5, 0), fixed(2.25, 1, "+"), fixed(-2.25, 1, "+"), fixed(0.125, 2)
    ('13', '+2.3', '-2.3', '0.13')
    >>> fixed(-0.04, 1), fixed(-0.04, 1, "+")
    ('0.0', '+0.0')
    """
    q = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{q:{sign}z.{digits}f}"  # (z: -0.04 is "0.0", not "-0.0")


def fitted(table: Table) -> RenderableType:
    """``table`` where it fits the width it is printed in, else the same figures as
    ``header: value`` lines, a block per row, between the table's title and caption.

    In a narrow terminal (``COLUMNS=40``) rich squeezed a table to headers and cells of
    ``…`` alone: every figure lost, with no word. The table fits when it shows every word
    of its headers and cells whole (rich may still wrap a cell at its spaces), but for the
    cells of a column made to fold its long words (``overflow="fold"``); the words of the
    title and caption do not count for the cells.
    """
    return _Fitted(table)


#: What separates the words of a table drawn as text: spaces and rich's box lines.
_TABLE_GAPS = re.compile(r"[\s\u2500-\u257f]+")


class _Fitted:
    def __init__(self, table: Table) -> None:
        self.table = table

    def _fits(self, console: Console, lines: list[list[Segment]]) -> bool:
        """Whether the table drawn as ``lines`` shows every word it is to show whole."""
        want: Counter[str] = Counter()
        for column in self.table.columns:
            folds = column.overflow == "fold"  # (its cells' words may be split: its header's not)
            for cell in (column.header, *(() if folds else column.cells)):
                if isinstance(cell, str | Text):
                    want.update(_words(_plain(console, cell)))
        shown = Counter(_words("".join(s.text for line in lines for s in line)))
        # The title's and caption's words are drawn too, above and below: a word of theirs
        # is not a cell's shown whole (a bot's name cut in its cell, whole in the title).
        for label in (self.table.title, self.table.caption):
            if isinstance(label, str | Text):
                shown -= Counter(_words(_plain(console, label)))
        return want <= shown

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        t = self.table
        # Drawn once: the lines looked at are the lines shown (drawn again to be shown,
        # `arena replay` of a long match, a tricks table a deal, took half as long again).
        lines = console.render_lines(t, options, pad=False, new_lines=True)
        if self._fits(console, lines):
            for line in lines:
                yield from line
            return

        # Highlighted as the table highlights its texts: its title, caption and headers
        # never, a cell as its column says (rich's default, no: the blocks coloured every
        # number, "pts/deal ±95%"'s 95 and "(100%)"'s brackets among them).
        def text(cell: RenderableType, style: str = "", highlight: bool = False) -> RenderableType:
            if isinstance(cell, str):
                return console.render_str(cell, style=style, highlight=highlight)
            return cell

        if t.title is not None:
            yield text(t.title, "table.title")
        headers = [text(c.header, "bold") for c in t.columns]
        lit = [c.highlight for c in t.columns]
        for i, cells in enumerate(zip(*(c.cells for c in t.columns), strict=True)):
            if i or t.title is not None:
                yield Text()
            for header, cell, highlight in zip(headers, cells, lit, strict=True):
                value = text(cell, highlight=highlight)
                if isinstance(header, Text) and isinstance(value, Text):
                    yield Text.assemble(header, ": ", value)
                else:  # (a cell that is no text: a table in a cell, under its header)
                    yield header
                    yield value
        if t.caption is not None:
            yield Text()
            yield text(t.caption, "table.caption")


def _words(text: str) -> list[str]:
    return [w for w in _TABLE_GAPS.split(text) if w]


def _plain(console: Console, cell: str | Text) -> str:
    """The text a table shows of ``cell`` (a string is read as rich markup, as tables do)."""
    return cell.plain if isinstance(cell, Text) else console.render_str(cell).plain


def printable(text: str, keep: str = "") -> str:
    """``text`` with every character a terminal would obey rather than show (escape
    sequences: a window title, a cleared screen, the clipboard) written out as ``\\x1b``,
    ``\\u200f`` and the like; ``keep``: characters left as they are (``"\\n\\t"``).

    For text from outside shown on a terminal: a record file's names, an arena's, a bot's
    log.

    >>> printable("ann\\x1b]0;title\\x07"), printable("a\\nb", keep="\\n")
    ('ann\\\\x1b]0;title\\\\x07', 'a\\nb')
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else written_out(c) for c in text)


#: The combining marks in a row that :func:`few_marks` leaves as they are: a letter of any
#: script takes up to three (Vietnamese two; Hebrew's points and cantillation three).
_MARKS_KEPT = 3


def few_marks(text: str, kept: int = _MARKS_KEPT) -> str:
    """``text`` with each combining mark past the ``kept``-th in a row written out
    (``\\u0301``): a bot's text of one letter under 60 marks draws a tower over the lines
    around it, on a web page and on a terminal alike.

    >>> print(ascii(few_marks("e" + "\\u0301" * 4)))
    'e\\u0301\\u0301\\u0301\\\\u0301'
    """
    out: list[str] = []
    run = 0
    for c in text:
        if unicodedata.category(c) in ("Mn", "Me"):  # (Mc takes room of its own)
            run += 1
            out.append(c if run <= kept else written_out(c))  # (U+E0100: \\U, 8 digits)
        else:
            run = 0
            out.append(c)
    return "".join(out)


#: The longest line of a traceback a log shows (a bot's exception message can be megabytes).
_TRACEBACK_LINE_MAX = 2000


def clipped_traceback(text: str, limit: int = _TRACEBACK_LINE_MAX) -> str:
    """``text`` (a formatted traceback) with each line longer than ``limit`` cut, saying how
    much was left out: a bot raising ``ValueError(repr(state))`` of megabytes wrote them to
    the log, whole, and to every worker's pipe.

    >>> clipped_traceback("ValueError: " + "x" * 30, limit=20)
    'ValueError: xxxxxxxx… (22 more characters)'
    """
    if len(text) <= limit:
        return text
    return "\n".join(
        line if len(line) <= limit else f"{line[:limit]}… ({len(line) - limit:,} more characters)"
        for line in text.split("\n")
    )


class PrintableFormatter(logging.Formatter):
    """Log lines with their control characters written out (``\\x1b``): they name what the
    other side sent (an arena's server version, match ids and reasons; a bot's name and
    errors), and escape sequences there would be obeyed by the terminal (a window title, a
    cleared screen, the clipboard). Line breaks and tabs (tracebacks) stay; the lines of a
    message (unless ``clip_messages`` is false) and of a traceback are cut to
    :data:`_TRACEBACK_LINE_MAX` characters (a hostile arena's 20 MB request id or refusal,
    named in a line, wrote the log a line of 20 MB)."""

    def __init__(self, *args: Any, clip_messages: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clip_messages = clip_messages

    def formatMessage(self, record: logging.LogRecord) -> str:
        text = super().formatMessage(record)
        return clipped_traceback(text) if self.clip_messages else text

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_text:  # (formatted already: a worker process's, sdk.workers)
            record.exc_text = clipped_traceback(record.exc_text)
        return printable(super().format(record), keep="\n\t")

    def formatException(self, ei: Any) -> str:
        return clipped_traceback(super().formatException(ei))


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


def standings_table(
    players: Sequence[str], result: Mapping[str, Any], title: str = "Final standings"
) -> Table:
    """The final standings: place, player, score, shortfall."""
    table = Table(title=title)
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
    game: Game,
    players: Sequence[str],
    deal: Mapping[str, Any],
    index: int,
    fallbacks: Mapping[int, str] | None = None,
) -> tuple[list[RenderableType], str | None]:
    """Apply one deal's actions to ``game`` and describe it; returns (parts, error).

    ``fallbacks``: the indices of the deal's actions the referee played for their seat
    (``"by": "fallback"``), with the reason (``"timeout"``, ..., ``""`` when unknown):
    marked where they are shown (:func:`fallback_reasons`)."""
    fallbacks = fallbacks or {}
    parts: list[RenderableType] = []
    dealer = game.dealer
    parts.append(
        Text(f"Deal {index + 1} — dealer {_name(players, dealer)}", style="bold underline")
    )
    hands = Table.grid(padding=(0, 2))
    for seat, hand in enumerate(game.dealt_hands):
        if hand:
            hands.add_row(Text(_name(players, seat)), _cards(hand))  # a name is no markup
        elif seat not in game.active_seats:  # the 4-player dealer, dealt no cards
            on_barrel = game.barrel is not None and game.barrel[seat] > 0
            said = f"sits out ({sitter_talon(game.talon, game.ruleset, on_barrel)})"
            hands.add_row(Text(_name(players, seat)), Text(said, style="dim"))
    talon = _cards(game.talon)
    if not game.ruleset.talon_visible:
        # The cards are shown here as dealt; the table saw them only in the declarer's
        # hand (the web's seat views draw none): said where they are, not only in the
        # header's "talon_visible off".
        talon.append("  (shown to the declarer only: talon_visible off)", style="dim")
    hands.add_row("talon", talon)
    parts.append(hands)

    bids = [Text(b) for b in _opening_bid(game, players)]  # before any action
    tricks = Table(show_header=True, header_style="dim")
    tricks.add_column("#", justify="right")
    tricks.add_column("cards")
    tricks.add_column("trump")
    tricks.add_column("winner")
    trick: list[tuple[int, Card, bool]] = []  # (seat, card, played by the referee)
    marks: list[str] = []
    referee: list[tuple[int, int, str]] = []  # (seat, trick number, reason): the legend
    failed_plays: list[tuple[int, int]] = []  # (seat, trick number): the client's fallbacks
    lines: list[Text] = []
    error: str | None = None
    ntrick = 0
    for j, entry in enumerate(deal.get("actions", [])):
        seat, text = entry.get("seat"), entry.get("action")
        # The trump during a trick: a declaration sets it on the lead, before any card
        # is compared; after the last trick the game has already moved to the next deal.
        trump = game.trump
        if game.is_over or game.deal_number != index:
            # (applied, it was drawn in this deal: the next deal's bid in this auction)
            error = (
                f"Deal {index + 1} (record deal {index}), action {j} (seat {seat}: {text}): "
                "the deal was already over"
            )
            break
        try:
            action = parse_action(str(text))
            game.apply(action, seat=seat)
        except (ValueError, IllegalActionError) as e:
            error = f"Deal {index + 1} (record deal {index}), action {j} (seat {seat}: {text}): {e}"
            break
        fallback = _fallback_note(fallbacks[j]) if j in fallbacks else None
        if fallback is None and entry.get("failed") is True:
            # (the bot's client's own fallback, "by": "bot": no strike, no referee's move)
            fallback = CLIENT_FALLBACK_NOTE
            if isinstance(action, Play):
                failed_plays.append((seat, ntrick + 1))
        if isinstance(action, Bid | Pass):
            bid = Text(f"{players[seat]}: {action}")
            if fallback:
                bid.append(f" {fallback}", style="yellow")
            bids.append(bid)
            if game.declarer is not None and not lines:
                lines.append(Text(_talon_taken(game, players), style="cyan"))
        elif isinstance(action, Play):
            trick.append((seat, action.card, j in fallbacks))
            if j in fallbacks:
                referee.append((seat, ntrick + 1, fallbacks[j]))
            if action.declare:
                marks.append(f"{players[seat]} declares the {_marriage(action.card)}")
            if len(trick) == 3:
                ntrick += 1
                w = trick[trick_winner([c for _, c, _ in trick], trump)][0]
                cells = _trick_cells(players, trick)
                if marks:
                    cells.append(f"  ({'; '.join(marks)})", style="magenta")
                # (Suit.SPADES is 0: "trump or '-'" would show a spade trump as none.)
                tricks.add_row(str(ntrick), cells, "-" if trump is None else str(trump),
                               Text(players[w]))  # fmt: skip
                trick, marks = [], []
        else:
            line = Text(f"{_name(players, seat)}: ")
            if isinstance(action, Give):
                line.append("gives ")
                line.append_text(_card(action.card))
                line.append(f" to {_name(players, action.to)}")
            else:
                line.append(str(action))
            if fallback:
                line.append(f" {fallback}", style="yellow")
            lines.append(line)
    if trick:  # a trick under way when the record ends (an interrupted match)
        trump = game.trump
        cells = _trick_cells(players, trick)
        if marks:  # its lead declared a marriage: as in a finished trick's row
            cells.append(f"  ({'; '.join(marks)})", style="magenta")
        tricks.add_row(str(ntrick + 1), cells,
                       "-" if trump is None else str(trump), "(unfinished)")  # fmt: skip
    bidding = Text("Bidding: ")
    bidding.append_text(Text(", ").join(bids) if bids else Text("-"))
    parts.append(bidding)
    parts.extend(lines)
    if ntrick or trick:
        parts.append(fitted(tricks))
    if referee:
        parts.append(_fallback_legend(players, referee))
    if failed_plays:
        seats = dict.fromkeys(seat for seat, _ in failed_plays)
        said = "; ".join(
            f"{_name(players, seat)} in trick{'s' if len(ns) > 1 else ''} {_runs(ns)}"
            for seat in seats
            if (ns := [n for s, n in failed_plays if s == seat])
        )
        parts.append(Text(f"cards {CLIENT_FALLBACK_NOTE}: {said}", style="yellow"))
    return parts, error


def _marriage(lead: Card) -> str:
    """What a declaring lead declares, with what it scores (the web's marriages say
    ``+80`` too): ``"♦ marriage: +80"``, ``"ace marriage: +200"``."""
    if lead.rank is Rank.ACE:
        return f"ace marriage: +{ACE_MARRIAGE_VALUE}"
    return f"{lead.suit} marriage: +{lead.suit.marriage_value}"


def _opening_bid(game: Game, players: Sequence[str]) -> list[str]:
    """The auction's first entry when first hand is committed to the opening bid without
    speaking (``first_hand_commits``, classic: 100): no action of the record holds it, and
    without it "pass, pass / X takes the talon at 100" would not say where 100 came from."""
    r = game.ruleset
    if not r.first_hand_commits:
        return []
    return [f"{players[game.first_hand]}: {r.opening_bid} (obligatory)"]


def rules_description(record: Mapping[str, Any]) -> str:
    """Which rules the match ran, in one line (:func:`engine.rules.describe_run`: with its
    deal cap, ``classic, 20 deals max``), as `arena replay`'s header and the replay page
    say it; the players are named beside it. Without the cap a match stopped or capped
    short of the target did not say it had one. A time-limited match's record
    (``time_limit_s``) names the deal its clock stopped it at as its cap: none is said.

    A full ruleset dict is described as stored, so that an older record lacking an option
    says what it holds. A preset named by the record (``"1001"``, or ``{"preset": "1001",
    ...}`` with overrides: docs/record-format.md) is described as the ruleset it loads: the
    dict as stored has no name, and read as one it was ``? (classic + talon_visible off)``
    for a 1001 with the talon hidden; ``"1001"`` for four players is ``1001-4p``."""
    describe = describe_ruleset if "time_limit_s" in record else describe_run
    stored = record.get("ruleset")
    if isinstance(stored, Mapping) and "preset" not in stored:
        return describe(stored, players=False)
    players = record.get("players")
    try:
        rules = load_ruleset_value(stored, len(players) if isinstance(players, list) else None)
    except (ValueError, TypeError):  # (RulesetError is a ValueError)
        return describe(stored, players=False)
    return describe(rules, players=False)


def sitter_talon(talon: Sequence[Card] | None, ruleset: Ruleset, on_barrel: bool) -> str:
    """What the dealer of four, who sits the deal out, scores of the talon, in words
    (``arena replay``, the replay page, the human seat): "scores the talon: 14", or
    "100, three nines", which the cards alone would not explain (RULES.md, preset 1001).
    ``talon``: ``None`` for a reader not allowed to see it (then its worth is not said);
    ``on_barrel``: he sat on the barrel when the deal began, and a sitter scores none of it
    (RULES.md, "The barrel")."""
    worth = ""
    if talon is not None:
        worth = str(talon_score(talon, ruleset))
        if all(c.rank is Rank.NINE for c in talon):
            worth += ", three nines"
    if not on_barrel:
        return f"scores the talon: {worth}" if worth else "scores the talon"
    if worth:
        return f"on the barrel: the talon ({worth}) is not scored"
    return "on the barrel: scores nothing of the talon"


def _talon_taken(game: Game, players: Sequence[str]) -> str:
    """Who takes the talon at what, and why when nobody bid it (``game``: the auction has
    just ended)."""
    assert game.declarer is not None
    line = f"{_name(players, game.declarer)} takes the talon at {game.bid}"
    why = talon_taken_why(game)
    return f"{line} ({why})" if why else line


def talon_taken_why(game: Game) -> str:
    """Why the declarer holds the talon when nobody bid it, in words (`arena replay`'s line
    ``cid (2) takes the talon at 40 (...)``, the replay page's table); "" when he won it by
    a bid, or before the auction is over. ``game``: in the deal, the auction over."""
    if game.declarer is None:
        return ""
    if game.last_hand_take:  # 1001 (all_pass = "last_hand"): may throw in
        # (he need not play it: "plays the opening bid" was followed by his throw-in)
        return (
            "everybody before him passed: the last hand takes it at the opening bid, to play "
            "it, raise the contract or throw in"
        )
    if any(isinstance(a, Bid) for _, a in game.actions):
        return ""
    if game.ruleset.first_hand_commits:
        return "his obligatory bid: the others passed"
    # (nor need he play it: he may concede, where the ruleset lets a declarer)
    return "everybody passed: first hand takes it at the opening bid"


def _trick_cells(players: Sequence[str], trick: Sequence[tuple[int, Card, bool]]) -> Text:
    """A trick's cards in play order, each after its player's name; a card the referee
    played for its seat is followed by :data:`FALLBACK_MARK`."""
    cells = Text()
    for k, (seat, card, by_referee) in enumerate(trick):
        if k:
            cells.append("  ")
        cells.append(f"{players[seat]} ")
        cells.append_text(_card(card))
        if by_referee:
            cells.append(FALLBACK_MARK, style="bold yellow")
    return cells


#: How a fallback's reason reads: the incident kind that caused it, or the forfeit.
_FALLBACK_WHY = {
    "timeout": "timeout",
    "malformed": "malformed answer",
    "illegal": "illegal answer",
    "forfeited": "forfeited",
}


def fallback_why(reason: str) -> str:
    """A reason of :func:`fallback_reasons` in words: ``"malformed"`` → ``"malformed
    answer"`` (``""``: the record does not say)."""
    return _FALLBACK_WHY.get(reason, reason)


def _fallback_note(reason: str) -> str:
    """``"(fallback: timeout)"``, after a bid, pass, give or contract the referee made."""
    why = fallback_why(reason)
    return f"(fallback: {why})" if why else "(fallback)"


def _fallback_legend(players: Sequence[str], referee: Sequence[tuple[int, int, str]]) -> Text:
    """The line under a deal's tricks that explains its :data:`FALLBACK_MARK` cards:
    ``* played by the referee (fallback): mine (1) in trick 4 (timeout) and in tricks 5-8
    (forfeited); cid (2) in trick 2 (illegal answer)``, from ``(seat, trick number,
    reason)`` in play order."""
    by_seat: dict[int, dict[str, list[int]]] = {}
    for seat, number, reason in referee:
        by_seat.setdefault(seat, {}).setdefault(reason, []).append(number)
    bits = []
    for seat, reasons in by_seat.items():
        said = []
        for reason, numbers in reasons.items():
            which = f"trick {numbers[0]}" if len(numbers) == 1 else f"tricks {_runs(numbers)}"
            why = fallback_why(reason)
            said.append(f"in {which}" + (f" ({why})" if why else ""))
        bits.append(f"{_name(players, seat)} " + " and ".join(said))
    return Text(
        f"{FALLBACK_MARK} played by the referee (fallback): " + "; ".join(bits),
        style="yellow",
    )


def _runs(numbers: Sequence[int]) -> str:
    """``"1-3, 5, 7-8"``: ascending ``numbers`` with their runs shortened."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def fallback_reasons(record: Mapping[str, Any]) -> list[dict[int, str]]:
    """Per deal, the index of each action the referee played for its seat (``"by":
    "fallback"``) and why: the kind of the strike that caused it (``"timeout"``,
    ``"malformed"``, ``"illegal"``), ``"forfeited"`` once the seat has forfeited, or ``""``
    when the incidents do not say (a record without them).

    The referee records a strike's incident (its seat and deal) just before it plays the
    fallback, and no strike once the seat has forfeited: a seat's strikes in a deal match
    its fallbacks in that deal in order; a fallback with no strike left is the forfeit's."""
    incidents = record.get("incidents")
    strikes: dict[tuple[int, int], list[str]] = {}
    forfeited_in: dict[int, int] = {}  # seat -> the deal of its forfeit
    for inc in incidents if isinstance(incidents, list) else ():
        if not isinstance(inc, Mapping):
            continue
        seat, deal, kind = inc.get("seat"), inc.get("deal"), inc.get("kind")
        if type(seat) is not int or type(deal) is not int:
            continue
        if kind in _STRIKES:
            strikes.setdefault((seat, deal), []).append(str(kind))
        elif kind == "forfeit":
            forfeited_in.setdefault(seat, deal)
    out: list[dict[int, str]] = []
    for number, deal in enumerate(record.get("deals") or ()):
        marked: dict[int, str] = {}
        actions = deal.get("actions") if isinstance(deal, Mapping) else None
        for j, entry in enumerate(actions if isinstance(actions, list) else ()):
            if not isinstance(entry, Mapping) or entry.get("by") != "fallback":
                continue
            seat = entry.get("seat")
            queue = strikes.get((seat, number), []) if type(seat) is int else []
            if queue:
                marked[j] = queue.pop(0)
            elif type(seat) is int and forfeited_in.get(seat, number + 1) <= number:
                marked[j] = "forfeited"
            else:
                marked[j] = ""
        out.append(marked)
    return out


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
            f"Match: {rules_description(record)}, seed {record.get('seed')!r}, players "
            f"{', '.join(players)}",
            style="bold",
        )
    )
    start = _start_line(game, players)
    if start is not None:
        parts.append(start)
    deals = record["deals"]
    fallbacks = fallback_reasons(record)
    for i, d in enumerate(deals):
        if game.is_over:
            break
        refused = None
        if game.deal_number != i:
            # The deal before is not over (its actions stop short of its end, and the
            # record does not score it): this deal's cards and dealer are not yet the
            # game's, and drawing them from it showed the deal before again.
            refused = "the deal before it is not over: its actions do not finish it"
        elif d.get("number", i) != i:
            # (as `--check` says it: two deals swapped were refused at the first action,
            # "it is seat 2's turn", the other deal's actions on this deal's cards)
            refused = f"numbered {d.get('number')!r:.20}, expected {i}"
        if refused:
            parts.append(
                Text(f"refused: Deal {i + 1} (record deal {i}): {refused}", style="bold red")
            )
            return Group(*parts)
        deal_parts, error = _render_deal(game, players, d, i, fallbacks[i])
        parts.extend(deal_parts)
        scored = "deltas" in d or "scores" in d or "outcome" in d
        if not error and scored and len(game.deal_results) <= i:
            # (as `--check` says it; the next deal's actions went on with this one's cards)
            error = (
                f"Deal {i + 1} (record deal {i}): the record scores the deal but its "
                "actions do not finish it"
            )
        if error:
            parts.append(Text(f"refused: {error}", style="bold red"))
            return Group(*parts)
        if len(game.deal_results) > i:
            res = game.deal_results[i]
            if res.outcome in ("made", "failed"):
                parts.append(Text(_takes_line(res, players, game.ruleset.players)))
            summary = Text(  # ("thrown in": the record's "thrown_in", as words)
                res.outcome.replace("_", " "), style="green" if res.outcome == "made" else "yellow"
            )
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
            sitters = _sitters(players, res.barrel)
            if sitters:
                # who sits there, and for how long: what scores a sitter's next deals (his
                # defender takes are not scored, a made contract below 120 scores nothing)
                parts.append(Text(f"on the barrel after this deal: {sitters}", style="magenta"))
        parts.append(Text(""))
    parts.extend(_ending(record, game, players))
    return Group(*parts)


def _takes_line(res: DealResult, players: Sequence[str], seated: int) -> str:
    """``takes heu 15, cnt 99 (cards 59, marriages 40), rnd 46``: what each seat that played the
    deal took, unrounded, from which a reader checks the deltas by hand (a defender's is
    his take rounded; the tricks' table gives only their winners). A dealer of four, who
    sat the deal out, is left out: his delta is the talon's."""
    said = []
    for s, name in enumerate(players):
        if seated == 4 and s == res.dealer:
            continue
        take = f"{name} {res.takes[s]}"
        if res.marriage_points[s]:
            take += f" (cards {res.card_points[s]}, marriages {res.marriage_points[s]})"
        said.append(take)
    return "takes " + ", ".join(said)


def _start_line(game: Game, players: Sequence[str]) -> Text | None:
    """``Started from ann (0) 860, bob (1) 840, cid (2) 700; on the barrel: ann (0), 2 deals
    left``: the position a record's ``start`` gives (``game``: before any action), which
    no deal's line says; None for a match from zero."""
    scores, barrel = game.start
    if not any(scores) and not any(barrel):
        return None
    line = "Started from " + ", ".join(f"{_name(players, s)} {x}" for s, x in enumerate(scores))
    sitters = _sitters(players, barrel)
    if sitters:
        line += "; on the barrel: " + sitters
    return Text(line, style="bold")


def _sitters(players: Sequence[str], barrel: Sequence[int] | None) -> str:
    """``ann (0), 2 deals left; cid (2), 1 deal left``: who sits on the barrel, or ""."""
    return "; ".join(f"{_name(players, s)}, {plural(k, 'deal')} left"
                     for s, k in enumerate(barrel or ()) if k)  # fmt: skip


def _ending(record: Mapping[str, Any], game: Game, players: Sequence[str]) -> list[RenderableType]:
    """The standings, then why they are what they are: forfeits, an interrupted or
    abandoned match, and the referee's incidents (``game``: after the record's actions)."""
    parts: list[RenderableType] = []
    forfeits = _forfeits(record, len(players))
    result, rules_result = shown_result(record, game)
    if result:
        title = "Final standings" if game.is_over else "Standings when the match stopped"
        parts.append(fitted(standings_table(players, result, title)))
    if rules_result is not None and forfeits:
        parts.append(_forfeits_applied(players, forfeits, rules_result, result or {}))
    limit = time_limit_note(record)
    if game.is_over and limit:
        parts.append(Text(f"ended {limit}", style="yellow"))
    elif rules_result is not None:
        # why the match is over: a player's target, or the deal cap (the web says it too)
        parts.append(Text(f"ended: {end_reason(record, rules_result)}", style="yellow"))
    stopped = _stopped(record, game)
    if stopped:
        parts.append(Text(stopped, style="yellow"))
    parts.extend(_incident_lines(record, players))
    return parts


def shown_result(
    record: Mapping[str, Any], game: Game
) -> tuple[Mapping[str, Any] | None, dict[str, Any] | None]:
    """The result a reader is shown of ``record`` (``game``: after its actions), and the
    rules' own (None while the rules have not ended the match). Once the rules ended it,
    the standings as they make them (forfeiters placed last, as the referee does), like
    every deal: not the record's own figures, which may say otherwise or be left out (a
    record made by hand); else the record's (an interrupted, abandoned or time-limited
    match). `arena replay` and the replay page both show this one."""
    if not game.is_over:
        result = record.get("result")
        return (result if isinstance(result, Mapping) else None), None
    rules_result: dict[str, Any] = game.record()["result"]
    forfeits = _forfeits(record, len(game.players))
    if forfeits:
        return forfeit_result(rules_result, forfeits, game.ruleset.target), rules_result
    return rules_result, rules_result


def abandoned_places(record: Mapping[str, Any]) -> str:
    """Where an abandoned match (every seat forfeited) places its seats, in words: last,
    or 1st in a record of a referee before 2026-12-01 (no ``rules_result``), which placed
    them so: said as the record has it, not as a referee places them today.

    >>> abandoned_places({"abandoned": True, "rules_result": None})
    'last'
    >>> abandoned_places({"abandoned": True, "result": {"places": [1, 1, 1]}})
    '1st (as referees before 2026-12-01 placed an abandoned match)'
    """
    result = record.get("result")
    places = result.get("places") if isinstance(result, Mapping) else None
    if "rules_result" not in record and isinstance(places, list) and set(places) == {1}:
        return "1st (as referees before 2026-12-01 placed an abandoned match)"
    return "last"


def end_reason(record: Mapping[str, Any], result: Mapping[str, Any] | None = None) -> str | None:
    """How the match ended, in words (``arena replay``'s ``ended:`` line, the replay
    page's header): who reached the target, the deal cap, the time limit, every seat
    forfeited (abandoned), the referee stopped (interrupted); None without a result.
    ``result``: the one to read (default the record's: ``arena replay`` passes the rules'
    own, which it shows). Deals are numbered from 1, as everywhere people read them.

    >>> rec = {"players": ["ann", "bob", "cid"], "ruleset": "classic", "deals": [{}] * 9,
    ...        "result": {"reason": "target", "scores": [1000, 420, -35]}}
    >>> end_reason(rec)
    'ann reached the target (1000) in deal 9'
    >>> end_reason({**rec, "ruleset": {"name": "classic", "max_deals": 9},
    ...             "result": {"reason": "max_deals", "scores": [600, 420, -35]}})
    'the deal cap (max_deals 9) after deal 9: placed by score'
    """
    result = record.get("result") if result is None else result
    if not isinstance(result, Mapping):
        return None
    reason = result.get("reason")
    deals = len(record.get("deals") or ())
    limit = time_limit_of(record)
    if limit is not None and reason == "max_deals":
        return f"time limit (match_timeout_s {limit:g} s) after deal {deals}: placed by score"
    players = record.get("players")
    players = list(players) if isinstance(players, list) else []
    try:
        rules: Ruleset | None = load_ruleset_value(record.get("ruleset"), len(players) or None)
    except (ValueError, TypeError):
        rules = None
    if reason == "target":
        scores = result.get("scores")
        scores = scores if isinstance(scores, list) else []
        who = [players[s] for s, x in enumerate(scores[: len(players)])
               if rules is not None and type(x) is int and x >= rules.target]  # fmt: skip
        if rules is None or not who:
            return f"the target was reached in deal {deals}"
        # (several in one deal: the places above say who won, the highest score)
        return f"{' and '.join(who)} reached the target ({rules.target}) in deal {deals}"
    if reason == "max_deals":
        cap = f" (max_deals {rules.max_deals})" if rules is not None and rules.max_deals else ""
        return f"the deal cap{cap} after deal {deals}: placed by score"
    if reason == "forfeits":
        # (the referee's result places all last, an older one's all 1st; the rules give none)
        placed = abandoned_places(record)
        return f"every seat forfeited: abandoned in deal {deals}, all placed {placed}"
    if reason == "interrupted":
        return f"the referee was stopped: interrupted in deal {deals}"
    return None if reason is None else str(reason)


def time_limit_of(record: Mapping[str, Any]) -> float | None:
    """The time limit that ended the match (the record's ``time_limit_s``), else None.

    The limit makes the deal in progress the last: it ended the match only when its result
    says ``max_deals``. A player who reached the target in that deal won it (``target``),
    and a match every seat forfeited was abandoned (``forfeits``): they read as such (they
    were said to be "placed by score as at a deal cap", the result's reason "max_deals")."""
    result = record.get("result")
    if not isinstance(result, Mapping) or result.get("reason") != "max_deals":
        return None
    limit = record.get("time_limit_s")
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        return None
    if not 0 < limit < math.inf:  # (a record edited by hand: NaN or Infinity is no limit)
        return None
    return float(limit)


def time_limit_note(record: Mapping[str, Any]) -> str:
    """``by its time limit (match_timeout_s 30 s) after deal 4, ...`` for a match its time
    limit ended (the record's ``time_limit_s``), else "". Its result says ``max_deals``,
    as at a deal cap (so it replays like one): a match cut at 4 deals of a 20-deal cap
    read as if the cap were 4, with nothing to say a clock stopped it."""
    limit = time_limit_of(record)
    if limit is None:
        return ""
    deals = len(record.get("deals") or ())
    return (
        f"by its time limit (match_timeout_s {limit:g} s) after deal {deals}, placed by "
        "score as at a deal cap (the result's reason says max_deals)"
    )


def _forfeits(record: Mapping[str, Any], n: int) -> list[int]:
    """The seats the record says forfeited (only seats of this table: the shape check does
    not look inside ``forfeits``)."""
    raw = record.get("forfeits") or []
    if not isinstance(raw, list):
        return []
    return sorted({s for s in raw if type(s) is int and 0 <= s < n})


def _forfeits_applied(
    players: Sequence[str],
    forfeits: Sequence[int],
    rules_result: Mapping[str, Any],
    result: Mapping[str, Any],
) -> Text:
    """Why the standings are not what ``arena replay --check`` prints (the rules' result),
    or that they are the same."""
    who = ", ".join(_name(players, s) for s in forfeits)
    if list(rules_result["places"]) == list(result.get("places", ())):
        return Text(
            f"forfeits applied: {who} forfeited and placed last, where the rules alone "
            "place them too",
            style="yellow",
        )
    scores, places = rules_result["scores"], rules_result["places"]
    order = sorted(range(len(scores)), key=lambda s: (places[s], s))
    rules = ", ".join(f"{places[s]}. {_name(players, s)} {scores[s]}" for s in order)
    return Text(
        f"forfeits applied: {who} forfeited and placed last; the rules alone would give "
        f"{rules} (as arena replay --check prints)",
        style="yellow",
    )


def _stopped(record: Mapping[str, Any], game: Game) -> str | None:
    """A line for a match that did not reach its end: abandoned (every seat forfeited),
    interrupted (the referee was stopped), or a record that simply stops."""
    if game.is_over:
        return None
    # The deal under way, numbered for people like above (the game's: a record of no
    # deals was "in deal 0"; a referee's record always has the deal under way).
    deal = game.deal_number + 1
    if record.get("abandoned"):
        return (
            f"abandoned in deal {deal}: every seat forfeited, so the match stopped there; all "
            f"are placed {abandoned_places(record)} and the rules give no result"
        )
    if record.get("interrupted"):
        return (
            f"interrupted in deal {deal}: the referee was stopped (a shutdown) before the "
            "match ended; it has no result"
        )
    if record.get("result") is None:
        return f"not finished: the record stops in deal {deal}, with no result"
    return None


def _incident_lines(record: Mapping[str, Any], players: Sequence[str]) -> list[Text]:
    """Per seat: its forfeit (why, in which deal) and how many incidents of each kind, the
    strikes told apart. Nothing for a record no referee watched (no ``incidents`` key)."""
    lines = incident_summary(record, players)
    if lines is None:
        return []
    if not lines:
        return [Text("Incidents: none")]
    head = (
        "Incidents (strikes: timeouts, illegal and malformed answers; not strikes: "
        "bot_error, a decision the bot failed (its client sent a fallback), "
        "wrong_request, an answer to no pending request, and disconnects)"
    )
    return [Text(head, style="bold"), *(Text(f"  {line}") for line in lines)]


def incident_summary(record: Mapping[str, Any], players: Sequence[str]) -> list[str] | None:
    """The lines `arena replay` ends a referee's record with, one per seat that had any:
    ``"mine (1): forfeited in deal 4 (3 strikes); strikes: 3 timeouts; not strikes: 25
    disconnects"``; the web's replay page says the same. The counts are the record's
    per-seat totals where it has them (its ``incidents`` list only the first 20 answers to
    no pending request, disconnects and failed decisions of a seat). ``[]`` for a match
    without incidents, None for a record no referee watched (no ``incidents`` key)."""
    if "incidents" not in record or not isinstance(record["incidents"], list):
        return None
    n = len(players)
    counts: list[dict[str, int]] = [dict.fromkeys((*_STRIKES, *_NOT_STRIKES), 0) for _ in range(n)]
    forfeited: dict[int, str] = {s: "forfeited" for s in _forfeits(record, n)}
    for inc in record["incidents"]:
        seat, kind = inc.get("seat"), str(inc.get("kind"))
        if type(seat) is not int or not 0 <= seat < n:
            continue
        deal = inc.get("deal")
        if kind == "forfeit":
            when = f" in deal {deal + 1}" if type(deal) is int else ""  # numbered from 1
            why = str(inc.get("detail") or "no reason given")[:120]  # the referee's are short
            forfeited[seat] = f"forfeited{when} ({why})"
        elif kind in counts[seat]:
            counts[seat][kind] += 1
    # Only the first 20 answers to no pending request, disconnects and failed decisions
    # of a seat are recorded one by one: the per-seat totals count them all.
    for key, kind in COUNTED_INCIDENTS:
        totals = record.get(key)
        if isinstance(totals, list) and len(totals) == n:
            for seat, total in enumerate(totals):
                if type(total) is int:
                    counts[seat][kind] = max(counts[seat][kind], total)
    lines = []
    for seat in range(n):
        bits = [forfeited[seat]] if seat in forfeited else []
        strikes = counted(counts[seat], _STRIKES)
        if strikes:
            bits.append("strikes: " + strikes)
        others = counted(counts[seat], _NOT_STRIKES)
        if others:
            bits.append("not strikes: " + others)
        if bits:
            lines.append(f"{_name(players, seat)}: " + "; ".join(bits))
    return lines


def counted(counts: Mapping[str, int], kinds: Sequence[str]) -> str:
    """``"2 timeouts, 1 illegal"``: the kinds of ``kinds`` that occurred, with their count."""
    plural = {
        "timeout": "timeouts",
        "disconnect": "disconnects",
        "wrong_request": "wrong_requests",
        "bot_error": "bot_errors",
    }
    out = []
    for kind in kinds:
        k = counts[kind]
        if k:
            out.append(f"{k} {plural.get(kind, kind) if k > 1 else kind}")
    return ", ".join(out)


def plural(n: int, word: str) -> str:
    """``1 match``, ``2 matches``, ``1 deal``, ``40 deals``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('ch') else 's'}"


def changed_cards(record: Mapping[str, Any], own: Sequence[int]) -> str | None:
    """Why a record the arena wrote (it names its ``match_id``) was changed, when deals
    ``own`` hold cards its seed does not deal (``engine.record.seed_mismatches``): the
    referee deals every match from its seed. A record without ``match_id`` may deal its own
    cards (a constructed rule case). ``arena replay`` and the web viewer refuse it alike."""
    if not own or "match_id" not in record:
        return None
    numbers = ", ".join(str(n + 1) for n in own)  # (numbered from 1, as shown)
    return (
        f"the hands and talon of deal(s) {numbers} are not the ones seed "
        f"{record.get('seed')!r} deals, and the arena deals every match it records from its "
        "seed: the record was changed"
    )
