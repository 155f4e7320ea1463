"""A human seat in the terminal: the table is printed, the person picks the action.

>>> import io
>>> from sdk import play_local
>>> from bots import load                                        # doctest: +SKIP
>>> human = HumanBot(stdin=io.StringIO("1\\n" * 500), stdout=io.StringIO())
>>> m = play_local([human, load("heuristic"), load("heuristic")], max_deals=1)  # doctest: +SKIP

``arena-bot try human --vs heuristic,heuristic`` plays against bots locally;
``arena-bot run human --arena HOST:PORT --token T`` takes a seat in an arena.

At each decision the bot prints the table (scores, auction, talon, passed cards, trump and
marriages, the trick in progress and the last trick, each seat's take so far), the hand
sorted by suit, and the legal actions numbered. At a deal's end it prints the tricks
completed after the last table (told by ``on_action``: the last trick, or the whole deal
for the dealer of four who sits it out), the talon if no table showed it, and the deal's
result. The person answers with a number, with
the action's notation (``play K♥``, ``bid 110``, ``give 9♠ to 2``; ASCII ``play KH``
works too), with a bare card (``KH`` plays it; ``KH declare`` declares the marriage) or
with a bare amount (``110``), a give by name (``give KH to bob``), in Russian (``Кч``
is K♥, ``пас``). Anything else is explained and asked again. ``help`` lists
this; ``table`` prints the table again; ``quit`` (or end of input, or an output that
cannot be written: the terminal closed) leaves the match.
A timed decision (``Bot.deadline``) shows the time left in the prompt; at a terminal the
seat stops waiting when it has passed and says what is played instead (an answer past it,
from a pipe, is said not to be used).
"""

from __future__ import annotations

import codecs
import os
import re
import select
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import TextIO

from arena.render import plural, printable, sitter_talon
from engine import (
    DECK,
    Action,
    Bid,
    Card,
    Concede,
    Contract,
    DealResult,
    GameResult,
    Give,
    HiddenGive,
    Phase,
    Play,
    PlayerView,
    Rank,
    Suit,
    ThrowIn,
    fallback_action,
    parse_action,
    parse_card,
)
from engine.actions import ActionParseError
from engine.cards import ACE_MARRIAGE_VALUE, CardParseError
from engine.rules import describe_ruleset
from engine.tables import round_half_up
from sdk.bot import Bot, Deadline
from sdk.hand import takes as hand_takes
from sdk.hand import trick_winner

__all__ = ["HumanBot", "choose", "format_hand", "render_view"]

_PHASES = {
    Phase.BIDDING: "bidding",
    Phase.PASSING: "passing cards",
    Phase.CONTRACT: "naming the contract",
    Phase.PLAYING: "playing",
    Phase.GAME_OVER: "match over",
}

_RED = "\x1b[31m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"

HELP = """\
Answer with:
  a number from the list            e.g. 3
  the action as written in the list e.g. play K♥, bid 110, give 9♠ to 2, pass
                                    (ASCII suits work: play KH, give 9s to 2)
  a card alone to play it           e.g. KH   (KH declare: declare the marriage)
  an amount alone                   e.g. 110  (a bid or the contract)
  a card to give and to whom        e.g. give KH to bob, KH 2 (alone: to the one left)
  cards in Russian, rank then suit  e.g. Кч (K♥), Тт (A♣), 10б (10♦); пас, сдаюсь
                                    (ranks Т К Д В 10 9, suits п т/к б ч)
  table                             print the table again
  quit                              leave the match
"""


class HumanBot(Bot):
    """A person at the terminal. Reads ``stdin`` and writes ``stdout`` (any text streams)."""

    name = "human"

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        color: bool | None = None,
    ) -> None:
        super().__init__()
        #: (deal number, tricks completed) at the last table printed
        self._seen = (-1, 0)
        #: (deal number, deals left on the barrel per seat when it began): the dealer of four
        #: is not asked in the deal he sits out, so his last view is of an earlier deal.
        self._barrel_at: tuple[int, tuple[int, ...] | None] = (-1, None)
        #: The view of the last table printed (``None``: none in this deal's play yet), and
        #: the cards played since, as ``on_action`` tells them: the tricks completed after
        #: the seat's last decision (the last trick, or the whole deal for the dealer of
        #: four who sits it out) are printed from them when the deal ends.
        self._shown: PlayerView | None = None
        self._plays: list[tuple[int, Play]] = []
        #: The talon taken in the deal under way, when shown to this seat (``None``: not).
        self._talon: tuple[int, tuple[Card, ...]] | None = None
        #: Typed and not yet read, from a terminal (``_read_line``).
        self._pending = ""
        self.stdin = stdin if stdin is not None else sys.stdin
        # Under arena-bot, sys.stdout writes nowhere once its reader left (for a bot's
        # prints); the table goes to the stream itself, whose EPIPE makes the seat leave.
        self.stdout = (
            stdout if stdout is not None else getattr(sys.stdout, "kept_original", sys.stdout)
        )
        encoding = getattr(self.stdin, "encoding", None) or "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        if color is None:
            color = (
                "NO_COLOR" not in os.environ
                and os.environ.get("TERM") != "dumb"
                and _isatty(self.stdout)
            )
        self.color = color

    # -- the decisions --------------------------------------------------------------------

    def act(self, view: PlayerView) -> Action:
        legal = view.legal_actions
        # The tricks completed since this seat last saw the table: a seat whose only legal
        # card is played for it (a forced move: it is not asked) would not see those tricks.
        since = self._seen[1] if self._seen[0] == view.deal_number else 0
        self._seen = (view.deal_number, len(view.tricks))
        self._shown, self._plays = view, []
        self._print(render_view(view, color=self.color, since=since))
        self._print(self._menu(legal, _names(view)) + _giving_up(view))
        while True:
            # A timed decision (an arena, or `arena-bot try --decision-ms`): the person sees
            # at every prompt how long is left, as a bot reads self.deadline.
            clock = ""
            if self.deadline is not None:
                clock = f"; {_time_left(self.deadline, fallback_action(legal))}"
            got = self._ask(
                f"Your move, {_names(view)[view.seat]} (1-{len(legal)}, or 'help'{clock}): ",
                None if self.deadline is None else self.deadline.left(),
            )
            if got is None:  # nothing typed in time: say so now, not at the next Enter
                fallback = fallback_action(legal)
                self._print(f"\n  Time ran out: {fallback} is played for you.")
                return fallback
            text = got
            word = text.strip().lower()
            if word in ("help", "?", "h", "помощь"):
                self._print(HELP)
                continue
            if word in ("table", "t"):
                self._print(render_view(view, color=self.color, since=since))
                self._print(self._menu(legal, _names(view)) + _giving_up(view))
                continue
            if word in ("quit", "exit", "q"):
                self._print("Leaving the match.")
                raise SystemExit(1)
            action, problem = choose(text, legal, _names(view), view)
            if action is not None:
                if self.deadline is not None and self.deadline.left() <= 0:
                    # Past the limit and the bank the arena (or the timed local match) does
                    # not use the answer: saying "→ bid 110" would be a lie.
                    self._print(
                        f"  Time ran out: your {action} came too late and is not used; "
                        f"{fallback_action(legal)} is played for you instead."
                    )
                else:
                    self._print(f"  → {action}")
                return action
            self._print(f"  {problem}")

    # -- hooks ----------------------------------------------------------------------------

    def on_match_start(self, view: PlayerView) -> None:
        self._seen = (-1, 0)  # deal numbers start again: the last match's count is no use
        self._shown, self._plays, self._talon = None, [], None
        self._barrel_at = (view.deal_number, view.barrel)
        names = _names(view)
        others = ", ".join(f"{p} (seat {s})" for s, p in enumerate(names) if s != view.seat)
        self._print(
            # (the house rules said, not the name alone: a house file may call itself
            # "classic" and differ; the players are named below)
            f"Match of {printable(describe_ruleset(view.ruleset, players=False))} to "
            f"{view.ruleset.target}: you are "
            f"{names[view.seat]} (seat {view.seat}), against {others}."
        )

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        if isinstance(action, Play):
            self._plays.append((seat, action))

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        # The auction is over: the deal's play starts from no trick (a table printed
        # before it, or in an earlier deal, says nothing of the tricks to come).
        self._shown, self._plays = None, []
        self._talon = None if talon is None else (declarer, talon)

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        names = _names(view)
        outcome = result.outcome.replace("_", " ")
        who = "you" if result.declarer == view.seat else names[result.declarer]
        contract = (
            f"contract {result.contract}" if result.contract is not None else f"bid {result.bid}"
        )
        lines = self._unseen(view, result.number)
        lines.append(f"Deal {result.number + 1} over: {who} {contract}, {outcome}.")
        takes: list[object] = list(result.takes)
        if len(names) == 4:
            # The dealer was dealt nothing: no take (a 0 would read as tricks lost); his score
            # is the talon's, which nobody's lines said (not even his: he was never asked).
            takes[result.dealer] = "-"
            me = result.dealer == view.seat
            d = result.dealer
            said = f"  ({'you' if me else names[d]} dealt and sat out this deal: "
            # With the barrel on, the delta is the talon's only for a dealer who did not sit
            # on it (a sitter scores none of it) and whom no barrel event names (he got on
            # it, his score set to 880, or fell off).
            at_start = view.barrel if view.deal_number == result.number else None
            if at_start is None and self._barrel_at[0] == result.number:
                at_start = self._barrel_at[1]
            named = any(re.search(rf"\bseat {d}\b", e) for e in result.events)
            if not view.ruleset.barrel or (at_start is not None and not at_start[d] and not named):
                said += f"the talon scores {'you' if me else 'him'} {result.deltas[d]:+d})"
            elif at_start is None:  # (a deal's end missed: which deal began how is unknown)
                said += f"{'you score' if me else 'he scores'} the talon unless on the barrel)"
            elif at_start[d]:
                said += f"on the barrel, {'you score' if me else 'he scores'} nothing of the talon)"
            else:
                said += f"{'you score' if me else 'he scores'} the talon)"
            lines.append(said)
        self._barrel_at = (result.number + 1, result.barrel)
        lines.append("  takes:  " + _per_seat(names, takes, view.seat))
        lines.append("  scored: " + _per_seat(names, [f"{d:+d}" for d in result.deltas], view.seat))
        lines.append("  scores: " + _per_seat(names, result.scores, view.seat))
        for e in result.events:
            # The engine's events name seats by number ("seat 1 gets on the barrel"); the
            # table names players.
            lines.append(f"  {_name_seats(printable(e), names, view.seat)}")
        self._print("\n".join(lines) + "\n")

    def _unseen(self, view: PlayerView, deal: int) -> list[str]:
        """What of deal ``deal`` the person was not shown at a table: the talon (a seat not
        asked after the auction) and every trick completed after the last table."""
        names, me = _names(view), view.seat
        shown = self._shown if self._shown is not None and self._shown.deal_number == deal else None
        plays, talon = self._plays, self._talon
        self._shown, self._plays, self._talon = None, [], None
        lines = []
        if talon is not None and (shown is None or shown.talon is None):
            took = "you" if talon[0] == me else names[talon[0]]
            cards = " ".join(_card(c, self.color) for c in talon[1])
            lines.append(f"Talon:    {cards} (taken by {took})")
        trick = list(shown.trick) if shown is not None else []
        trump = shown.trump if shown is not None else None
        done = len(shown.tricks) if shown is not None else 0
        per_trick = len(view.active_seats)
        if len(trick) + len(plays) != (len(DECK) // per_trick - done) * per_trick:
            # Not the rest of a deal played out: given up (no plays), or plays missed (the
            # seat was away: a reconnect does not send events again). Tricks put together
            # from them would be wrong.
            return lines
        for seat, play in plays:
            if play.declare and play.card.rank is not Rank.ACE:
                trump = play.card.suit  # a marriage declared: trump from this trick on
            trick.append((seat, play.card))
            if len(trick) == per_trick:
                winner = trick_winner(trick, trump)[0]
                done += 1
                lines.append(_trick_line(f"Trick {done}: ", trick, winner, names, me, self.color))
                trick = []
        return lines

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        names = _names(view)
        order = sorted(range(len(names)), key=lambda s: (result.places[s], s))
        deals = plural(result.deals, "deal")
        if result.reason == "max_deals":  # say so: no one reached the target
            why = f"the cap of {deals} was reached before anyone had {view.ruleset.target}"
        else:
            why = f"{deals} played"
        lines = [f"Match over: {why}."]
        for s in order:
            me = "  ← you" if s == view.seat else ""
            lines.append(f"  {result.places[s]}. {names[s]:<12} {result.scores[s]:>6}{me}")
        self._print("\n".join(lines))

    # -- I/O ------------------------------------------------------------------------------

    def _menu(self, legal: Sequence[Action], names: Sequence[str] = ()) -> str:
        # A give names its receiver ("give 9♠ to 2 (bob)"): the table shows names only.
        labels = [
            f"{a} ({names[a.to]})" if isinstance(a, Give) and a.to < len(names) else str(a)
            for a in legal
        ]
        items = [f"{i + 1:>3}) {self._paint(label)}" for i, label in enumerate(labels)]
        width = max((len(label) for label in labels), default=0) + 7
        per_row = max(1, 78 // max(width, 1))
        rows = []
        for k in range(0, len(items), per_row):
            chunk = items[k : k + per_row]
            texts = labels[k : k + per_row]
            rows.append(
                "".join(
                    it + " " * (width - len(t) - 5) for it, t in zip(chunk, texts, strict=True)
                ).rstrip()
            )
        return "Legal actions:\n" + "\n".join(rows)

    def _paint(self, text: str) -> str:
        if not self.color:
            return text
        return "".join(f"{_RED}{ch}{_RESET}" if ch in "♥♦" else ch for ch in text)

    def _print(self, text: str) -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        if self.stdout is None:
            # Started with its output closed (`>&-`: Python has no sys.stdout): no one sees
            # the table. An AttributeError would be a bot error, and the match played on
            # with fallbacks, a traceback a decision.
            raise SystemExit("human: the output is closed: leaving the match")
        try:
            self.stdout.write(text)
            self.stdout.flush()
        except OSError as e:
            # The terminal closed (EIO, with SIGHUP ignored: nohup) or the output's reader
            # left (EPIPE): no one sees the table. Raised as any other bot error, it would make
            # the match play on with fallbacks, a traceback a decision, as if the person were
            # there.
            raise SystemExit(f"human: the output is gone ({e.strerror}): leaving the match") from e

    def _ask(self, prompt: str, wait_s: float | None = None) -> str | None:
        """The line typed, or ``None`` when ``wait_s`` seconds passed first (a terminal on
        POSIX only: other input is read as it comes)."""
        self._write(prompt)
        fd = self._terminal()
        if self.stdin is None:  # started with it closed (`<&-`): no one can answer
            line = ""
        elif fd is None:
            line = self.stdin.readline()
        else:
            got = self._read_line(fd, wait_s)
            if got is None:
                return None
            line = got
        if not line:
            self._print("\nEnd of input: leaving the match.")
            raise SystemExit(1)
        return line.rstrip("\r\n")

    def _terminal(self) -> int | None:
        """stdin's descriptor when it is a terminal that ``select`` can wait on."""
        if os.name != "posix":
            return None
        try:
            fd = self.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            return None
        return fd if os.isatty(fd) else None

    def _read_line(self, fd: int, wait_s: float | None) -> str | None:
        """A line from the terminal (``""`` at its end), or ``None`` after ``wait_s``.
        Read from the descriptor with a buffer of our own: a line pasted with the one
        before would sit in ``self.stdin``'s buffer, where ``select`` does not see it."""
        end = None if wait_s is None else time.monotonic() + wait_s
        while "\n" not in self._pending:
            if end is not None:
                left = max(0.0, end - time.monotonic())
                if not select.select([fd], [], [], left)[0]:
                    # A line half typed when the time ran out is dropped: it would
                    # otherwise begin the answer to the next question.
                    import termios  # POSIX only, as _terminal()

                    termios.tcflush(fd, termios.TCIFLUSH)
                    self._pending = ""
                    # and the half of a character read of it (a terminal not in line
                    # mode gives bytes as typed): it would spoil the next answer's start
                    self._decoder.reset()
                    return None
            data = os.read(fd, 4096)
            if not data:  # end of input: what was typed before it, then ""
                line, self._pending = self._pending, ""
                return line
            self._pending += self._decoder.decode(data)
        line, _, self._pending = self._pending.partition("\n")
        return line + "\n"


def choose(
    text: str,
    legal: Sequence[Action],
    names: Sequence[str] = (),
    view: PlayerView | None = None,
) -> tuple[Action | None, str]:
    """The legal action the person meant by ``text``, or ``None`` and why not. ``names``
    (the players', by seat) lets a give name its receiver (``give KH to bob``); ``view``
    (the seat's) lets a marriage refused say which rule refuses it.

    >>> from engine import Pass, Bid
    >>> choose("2", (Bid(105), Pass()))
    (Pass(), '')
    >>> choose("bid 107", (Bid(105), Pass()))[1]
    "'bid 107' is not legal now. Legal: bid 105, pass"
    >>> str(choose("Кч", (Play(parse_card("KH")),))[0])
    'play K♥'
    """
    t = _latin(text)
    if not t:
        return None, "Type a number from the list (or 'help')."
    if re.fullmatch(r"\d{1,6}[.)]", t):  # "3." or "3)", as the menu writes it
        t = t[:-1]
    if t.isdigit() and not (t.isascii() and len(t) <= 6):
        # "²", "①" or a 5000-digit number: str.isdigit() says yes, int() refuses.
        return None, f"Not a number from the list: {t[:20]!r}. Type one (or 'help')."
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(legal):
            return legal[k - 1], ""
        amounts = [a for a in legal if isinstance(a, Bid | Contract) and a.amount == k]
        if amounts:
            return amounts[0], ""
        if any(isinstance(a, Bid | Contract) for a in legal) and k > len(legal):
            # "130" where contracts go to 125: an amount, not a menu number
            return None, (
                f"No action number {k}: choose 1-{len(legal)}; nor is {k} an amount you may "
                "name now. " + _legal_text(legal)
            )
        return None, f"No action number {k}: choose 1-{len(legal)} (or 'help')."
    amount = re.fullmatch(r"(bid|contract) +(\S+)", t, re.IGNORECASE)
    if amount and not re.fullmatch(r"[+-]?[0-9]+", amount[2]):
        # (said with the legal actions, which parse_action cannot know)
        return None, f"Not an amount: {amount[2]!r}. " + _legal_text(legal)
    if any(isinstance(a, Give) for a in legal):
        given = _give(t, legal, names)
        if given is not None:
            return given
    action: Action | None = None
    try:
        action = parse_action(t)
    except ActionParseError as e:
        words = t.split()
        try:
            card = parse_card(words[0])
        except CardParseError:
            return None, f"{e}. Type a number from the list, or 'help'."
        declare = len(words) > 1 and words[1].lower() in ("declare", "d", "marriage")
        if len(words) > 2 or (len(words) == 2 and not declare):
            return None, f"Not understood: {t!r}. Type a number from the list, or 'help'."
        action = Play(card, declare=declare)
    if action in legal:
        return action, ""
    if isinstance(action, Give):
        gives = [a for a in legal if isinstance(a, Give)]
        if gives and not any(a.card == action.card for a in gives):
            return None, f"You do not hold {action.card}. " + _legal_text(legal)
    if isinstance(action, Play):
        plays = [a for a in legal if isinstance(a, Play)]
        if not plays:
            return None, "No card is played now. " + _legal_text(legal)
        if not any(a.card == action.card for a in plays):
            if view is not None and action.card not in view.hand:
                # "cannot be played now" of a card not held read as "wait till later"
                return None, f"You do not hold {action.card}. " + _legal_text(legal)
            return None, f"{action.card} cannot be played now. " + _legal_text(legal)
        if action.declare:
            return None, _no_marriage(action.card, view) + _legal_text(legal)
    # The two ways to give a deal up are easily taken for each other ("сдаюсь" reads as
    # concede): say which one this deal has.
    if isinstance(action, Concede) and ThrowIn() in legal:
        return None, (
            "'concede' is not legal now: after everybody passed, the last hand gives the deal "
            "up with 'throw-in'. " + _legal_text(legal)
        )
    if isinstance(action, ThrowIn) and Concede() in legal:
        return None, (
            "'throw-in' is only for the last hand after everybody passed: a declarer who "
            "won the bidding gives the deal up with 'concede'. " + _legal_text(legal)
        )
    return None, f"'{action}' is not legal now. " + _legal_text(legal)


def _time_left(deadline: Deadline, fallback: Action) -> str:
    """What the prompt says of a timed decision: ``9.2 s left (+10.0 s bank)``, then the
    bank, then that the time is up (the answer will not be used)."""
    own, total = deadline.left(bank=False), deadline.left()
    if total <= 0:
        return f"time is up: {fallback} is played for you"
    if own > 0:
        bank = f" (+{deadline.bank_s:.1f} s bank)" if deadline.bank_s else ""
        return f"{own:.1f} s left{bank}"
    return f"{total:.1f} s of time bank left"


_RU_WORD = {"пас": "pass", "пасс": "pass", "сдаюсь": "concede", "марьяж": "declare"}


def _latin(text: str) -> str:
    """``text`` stripped, with Russian words in the notation ``choose`` reads (cards in
    Russian, ``Кч``, and with an emoji suit, ``K♥️``, ``parse_card`` reads itself)."""
    return " ".join(_RU_WORD.get(w.lower(), w) for w in text.split())


def _give(
    t: str, legal: Sequence[Action], names: Sequence[str]
) -> tuple[Action | None, str] | None:
    """A give as a person may type it: ``KH`` (to the one opponent left), ``give KH``,
    ``KH 2``, ``give KH to bob``; ``None`` for text that names no card to give."""
    words = t.split()
    if words[0].lower() == "give":
        words = words[1:]
    if len(words) >= 2 and words[-1].startswith("(") and words[-1].endswith(")"):
        del words[-1]  # "give 9♠ to 2 (bob)", as the menu writes it
    if len(words) >= 2 and words[-2].lower() == "to":
        del words[-2]
    if not 1 <= len(words) <= 2:
        return None
    try:
        card = parse_card(words[0])
    except CardParseError:
        return None
    gives = [a for a in legal if isinstance(a, Give)]
    mine = [a for a in gives if a.card == card]
    if not mine:
        return None, f"You do not hold {card}. " + _legal_text(legal)
    if len(words) == 1:
        if len(mine) == 1:
            return mine[0], ""
        options = " or ".join(f"'give {card} to {_to_whom(a.to, names)}'" for a in mine)
        return None, f"To whom? Type {options}."
    to = words[1]
    for a in mine:
        if to == str(a.to) or (a.to < len(names) and to.lower() == names[a.to].lower()):
            return a, ""
    whom = ", ".join(_to_whom(a.to, names) for a in mine)
    return None, f"You cannot give to {to!r} now: give {card} to {whom}."


def _to_whom(seat: int, names: Sequence[str]) -> str:
    """``2 (bob)``: a give's receiver by seat number and name."""
    return f"{seat} ({names[seat]})" if seat < len(names) else str(seat)


def _giving_up(view: PlayerView) -> str:
    """What a throw-in or a concession among the legal actions would score (``""`` when
    neither is): the menu's one word did not say, nor that an all-pass had put the talon
    in this seat's hands at the opening bid."""
    legal = view.legal_actions
    r = view.ruleset
    names = _names(view)
    seats = [s for s in view.active_seats if s != view.seat]
    each = " and ".join(names[s] for s in seats)
    bid = view.bid
    # (a seat on the barrel scores neither what the others pay nor the talon: RULES.md)
    barrel = view.barrel if view.barrel is not None else (0,) * len(names)
    not_scored = " (not scored on the barrel)" if any(barrel[s] for s in seats) else ""
    sat_out = ""
    if view.dealer not in view.active_seats:
        sat_out = f" ({names[view.dealer]}, who dealt, scores the talon either way)"
        if barrel[view.dealer]:
            sat_out = f" ({names[view.dealer]}, who dealt, is on the barrel: no talon for him)"
    lines = []
    if ThrowIn() in legal:
        # (he may throw in before passing his cards too: then play means giving them first)
        play = "pass on your cards, then name" if view.phase is Phase.PASSING else "name"
        lines.append(
            f"throw-in: everybody before you passed, so you took the talon at the opening bid "
            f"of {bid}; {play} a contract of {bid} or more and play it, or throw in: you score "
            f"0 and {each} score +{r.throw_in_bonus} each{not_scored}{sat_out}."
        )
    if Concede() in legal and bid is not None:
        mine = f"you score -{bid}" if r.concede == "penalty" else "you score 0"
        theirs = "the others score nothing"
        if r.concede_pays == "half":
            theirs = f"{each} score +{round_half_up(bid, 2, r.rounding)} each{not_scored}"
        lines.append(f"concede (in place of a contract): {mine} and {theirs}{sat_out}.")
    return "".join("\n" + textwrap.fill(line, 78, subsequent_indent="  ") for line in lines)


def _no_marriage(card: Card, view: PlayerView | None) -> str:
    """Why leading ``card`` (a legal play) declares no marriage, as the rules say it
    (RULES.md §8, §9): "No marriage to declare with K♥" did not say that a marriage held
    must wait for a won trick (``marriage_needs_trick``), nor what the ace marriage needs."""
    plain = f"No marriage to declare with {card}. "
    if view is None or view.trick or card.rank not in (Rank.KING, Rank.QUEEN, Rank.ACE):
        return plain
    r, me = view.ruleset, view.seat
    won = [t for t in view.tricks if t.winner == me]
    if card.rank is Rank.ACE:
        if not r.ace_marriage or not all(Card.of(Rank.ACE, s) in view.hand for s in Suit):
            return plain
        if not any(c.rank is not Rank.ACE for t in won for s, c in t.cards if s == me):
            return (
                "The ace marriage may be declared only once you have won a trick in this "
                "deal with a card other than an ace. "
            )
        return plain
    partner = Card.of(Rank.QUEEN if card.rank is Rank.KING else Rank.KING, card.suit)
    if partner in view.hand and r.marriage_needs_trick and not won:
        return (
            f"The {card.suit} marriage may be declared only after you have won a trick in "
            f"this deal (this ruleset's marriage_needs_trick). "
        )
    return plain


def _legal_text(legal: Sequence[Action]) -> str:
    text = ", ".join(str(a) for a in legal)
    if len(text) > 200:
        text = text[:200] + " ..."
    return "Legal: " + text


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _names(view: PlayerView) -> list[str]:
    """The players' names as the terminal may show them: an arena chooses them, and one
    that sent escape sequences (a window title, a cleared screen, the clipboard) in a name
    would have had them obeyed."""
    return [printable(p) for p in view.players]


def _name_seats(text: str, names: Sequence[str], me: int) -> str:
    """``seat 1 gets on the barrel`` as ``bob gets on the barrel`` (``me (you)`` for the
    seat's own)."""

    def name(m: re.Match[str]) -> str:
        s = int(m[1])
        if s >= len(names):
            return m[0]
        return f"{names[s]} (you)" if s == me else names[s]

    # ASCII digits, a few: an arena's event text with 5000 digits would make int() raise,
    # and the whole deal's summary be lost.
    return re.sub(r"\bseat ([0-9]{1,6})\b", name, text)


def _per_seat(names: Sequence[str], values: Sequence[object], me: int) -> str:
    return "  ".join(f"{'you' if s == me else names[s]} {v}" for s, v in enumerate(values))


def format_hand(cards: Sequence[Card], *, color: bool = False) -> str:
    """The hand grouped by suit, high to low: ``♠ A 10 9   ♥ K Q``.

    >>> from engine import parse_cards
    >>> format_hand(parse_cards("9♠ A♠ K♥ Q♥ 10♠"))
    '♠ A 10 9   ♥ K Q'
    """
    groups = []
    for suit in Suit:
        mine = sorted((c for c in cards if c.suit == suit), reverse=True)
        if not mine:
            continue
        sym = (
            f"{_RED}{suit.symbol}{_RESET}"
            if color and suit in (Suit.HEARTS, Suit.DIAMONDS)
            else suit.symbol
        )
        groups.append(sym + " " + " ".join(c.rank.label for c in mine))
    return "   ".join(groups) if groups else "(no cards)"


def _card(c: Card | None, color: bool) -> str:
    if c is None:
        return "??"
    s = str(c)
    if color and c.suit in (Suit.HEARTS, Suit.DIAMONDS):
        return f"{_RED}{s}{_RESET}"
    return s


def _trick_line(
    head: str,
    cards: Sequence[tuple[int, Card]],
    winner: int,
    names: Sequence[str],
    me: int,
    color: bool,
) -> str:
    """``Trick 3: you K♥, bob A♥, cid 9♥  → bob``."""

    def who(s: int) -> str:
        return "you" if s == me else names[s]

    played = ", ".join(f"{who(s)} {_card(c, color)}" for s, c in cards)
    return f"{head}{played}  → {who(winner)}"


def render_view(view: PlayerView, *, color: bool = False, since: int | None = None) -> str:
    """The table as this seat sees it, as text (what :class:`HumanBot` prints): the last
    trick, or with ``since`` every trick from that index on when there are several."""
    names = _names(view)
    me = view.seat

    def who(s: int | None) -> str:
        if s is None:
            return "-"
        return "you" if s == me else names[s]

    n = len(names)
    bold = (lambda t: f"{_BOLD}{t}{_RESET}") if color else (lambda t: t)
    lines = [
        "",
        bold(
            f"── Deal {view.deal_number + 1} · dealer {who(view.dealer)} · "
            f"{_PHASES.get(view.phase, str(view.phase))} "
        ).ljust(60, "─"),
    ]
    scores = "  ".join(f"{who(s)} {view.scores[s]}" for s in range(n))
    if view.barrel is not None and any(view.barrel):
        scores += "   barrel: " + ", ".join(
            f"{who(s)} ({plural(view.barrel[s], 'deal')} left)" for s in range(n) if view.barrel[s]
        )
    lines.append(f"Scores:   {scores}")
    if n == 4:
        out = [s for s in range(n) if s not in view.active_seats]
        if out:
            # (view.barrel is as the deal began: the engine moves it when scoring a deal)
            on = view.barrel is not None and view.barrel[out[0]] > 0
            lines.append(
                f"Sitting out: {who(out[0])} ({sitter_talon(view.talon, view.ruleset, on)})"
            )
    if view.bids:
        lines.append("Bids:     " + ", ".join(f"{who(s)} {a}" for s, a in view.bids))
    else:
        lines.append("Bids:     none yet")
    if view.declarer is not None:
        deal = f"Declarer: {who(view.declarer)}, bid {view.bid}"
        if view.contract is None and not any(isinstance(a, Bid) for _, a in view.bids):
            # Nobody bid: say where the bid came from (as `arena replay` does), until the
            # contract is named.
            r = view.ruleset
            if r.first_hand_commits:
                deal += " (the obligatory bid: the others passed)"
            elif r.all_pass == "last_hand":
                deal += (
                    f" (everybody before {who(view.declarer)} passed: "
                    "the last hand plays the opening bid)"
                )
            else:
                deal += " (everybody passed: first hand plays the opening bid)"
        if view.contract is not None:
            deal += f", contract {view.contract}"
        lines.append(deal)
    elif view.bid is not None and view.phase is Phase.BIDDING:
        # Whose it is: the last bidder's, or first hand's (committed to the opening bid
        # without speaking, so "Bids: none yet" did not say who would play it).
        bidders = [s for s, a in view.bids if isinstance(a, Bid)]
        holder = f"{who(bidders[-1])}" if bidders else f"{who(view.first_hand)}, first hand"
        lines.append(f"Standing bid: {view.bid} ({holder})")
    if view.talon is not None:
        lines.append("Talon:    " + " ".join(_card(c, color) for c in view.talon))
    if view.gives:
        frm = who(view.declarer)
        lines.append(
            "Passed:   "
            + ", ".join(f"{frm} → {who(to)}: {_card(c, color)}" for to, c in view.gives)
        )
    if view.phase is Phase.PLAYING or view.tricks:
        trump = view.trump.symbol if view.trump is not None else "none"
        marr = ", ".join(
            f"{who(s)} {suit.symbol if suit is not None else 'aces'}"
            f" {suit.marriage_value if suit is not None else ACE_MARRIAGE_VALUE}"
            for s, suit in view.marriages
        )
        lines.append(f"Trump:    {trump}" + (f"   marriages: {marr}" if marr else ""))
        takes = hand_takes(view)
        lines.append(
            f"Tricks:   {len(view.tricks)} played; takes so far: "
            + "  ".join(f"{who(s)} {takes[s]}" for s in view.active_seats)
        )
        first = len(view.tricks) - 1  # the last trick; every new one if several are new
        if since is not None and len(view.tricks) - since >= 2:
            first = since
        for k in range(max(first, 0), len(view.tricks)):
            last = view.tricks[k]
            head = "Last trick: " if k == first == len(view.tricks) - 1 else f"Trick {k + 1}: "
            lines.append(_trick_line(head, last.cards, last.winner, names, me, color))
        if view.trick:
            lines.append(
                "On the table: " + ", ".join(f"{who(s)} {_card(c, color)}" for s, c in view.trick)
            )
        elif view.to_act == me:
            lines.append("On the table: nothing — your lead")
    lines.append(bold("Your hand: ") + format_hand(view.hand, color=color))
    return "\n".join(lines)
