"""Turn a match record into the steps the replay viewer draws.

A record is replayed action by action with the engine (the validated door, so a record
that does not replay is reported, not drawn). After every action the table is captured
twice over:

* as each seat saw it — exactly :func:`engine.observe` for that seat, normalized to JSON
  (:func:`view_json`); nothing else is added but ``talon_score``, what the talon it shows
  scores the sitting-out dealer of four (null with no talon shown, or no sitter), so a
  seat's steps never carry a card, or a talon's worth, that seat was not allowed to see,
  and what the table knows of all (``hand_sizes``; ``taken``: why the declarer holds the
  talon when nobody bid it, :func:`arena.render.talon_taken_why`);
* face up — every seat's own hand (from its own view), the dealt talon and the passed
  cards from the record, and the public part of the table.

Each step but the first also carries its action (as that seat learnt it, in a seat view)
with ``by`` from the record and, for a move the referee played for its seat (``"by":
"fallback"``), ``fallback``: why, from the record's incidents as ``arena replay`` tells it
(:func:`arena.render.fallback_reasons`); ``failed`` is true for a decision the bot failed,
whose fallback its client sent (the record's ``"failed": true``; its ``bot_error``
incident is public as well). A seat's strikes and forfeit are public (the match
summary serves the incidents to every view), so the reason goes to seat views too; it names
no card.

Step 0 of a deal is the table as dealt; step ``i`` is the table after the deal's ``i``-th
action. The engine scores a deal and deals the next one inside the call that ends it, so
the last step of a deal is built from the step before it plus that last action (the
finished trick and the scores the record states).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from arena.render import (
    changed_cards,
    end_reason,
    fallback_reasons,
    fallback_why,
    incident_summary,
    rules_description,
    shown_result,
    talon_taken_why,
    time_limit_of,
)
from arena.storage import deal_summary as auction_summary
from arena.storage import opening_bid_of
from engine import (
    DealResult,
    Game,
    PlayerView,
    ReplayError,
    Trick,
    observe,
    public_action,
    talon_score,
    trick_winner,
)
from engine import replay as engine_replay
from engine.actions import Action, Concede, Contract, Give, Play, ThrowIn, parse_action
from engine.cards import ACE_MARRIAGE_VALUE, Card, Suit, card_points, parse_card
from engine.record import load_ruleset_value, seed_mismatches, start_game

__all__ = [
    "MatchReplay",
    "ReplayCache",
    "ReplayFailed",
    "deal_summary",
    "match_summary",
    "view_json",
]

JSON = dict[str, Any]


class ReplayFailed(ValueError):
    """The record does not replay with the engine (names the deal and the action)."""


# ---------------------------------------------------------------------------------------
# normalizing engine values to JSON


def _card(c: Any) -> str | None:
    if c is None:
        return None
    return str(Card(int(c)))


def _cards(cs: Iterable[Any] | None) -> list[str | None] | None:
    if cs is None:
        return None
    return [_card(c) for c in cs]


def _suit(s: Any) -> str | None:
    if s is None:
        return None
    return Suit(int(s)).symbol


def _gives(gives: Iterable[tuple[int, Card | None]], declarer: int | None) -> list[JSON]:
    """Passed cards as ``{"from", "to", "card"}`` (card None when hidden from this seat)."""
    return [{"from": declarer, "to": to, "card": _card(card)} for to, card in gives]


def _marriages(items: Iterable[tuple[int, Suit | None]]) -> list[JSON]:
    out: list[JSON] = []
    for seat, suit in items:
        if suit is None:
            out.append({"seat": seat, "suit": None, "value": ACE_MARRIAGE_VALUE})
        else:
            out.append({"seat": seat, "suit": _suit(suit), "value": Suit(int(suit)).marriage_value})
    return out


def _trick(items: Iterable[tuple[int, Card]]) -> list[JSON]:
    return [{"seat": s, "card": _card(c)} for s, c in items]


def _completed_tricks(tricks: Iterable[Trick]) -> list[JSON]:
    return [{"leader": t.leader, "cards": _trick(t.cards), "winner": t.winner} for t in tricks]


def _takes(tricks: Sequence[JSON], marriages: Sequence[JSON], n: int) -> list[int]:
    """Each seat's take so far in this deal: card points of tricks won + declared marriages."""
    takes = [0] * n
    for t in tricks:
        w = t.get("winner")
        if isinstance(w, int) and 0 <= w < n:
            takes[w] += card_points(parse_card(c["card"]) for c in t["cards"] if c["card"])
    for m in marriages:
        if isinstance(m["seat"], int) and 0 <= m["seat"] < n:
            takes[m["seat"]] += int(m["value"])
    return takes


def view_json(view: PlayerView) -> JSON:
    """One seat's :class:`engine.PlayerView` as JSON (cards as ``"K♥"``); nothing added but
    ``talon_score``, the worth of the talon the view shows to the dealer who sits the deal
    out (4 players; :func:`engine.talon_score`), null when it shows none or nobody sits
    out (3 players: no one scores the talon as such)."""
    n = len(view.players)
    tricks = _completed_tricks(view.tricks)
    marriages = _marriages(view.marriages)
    hands: list[list[str | None] | None] = [None] * n
    hands[view.seat] = _cards(sorted(view.hand))
    return {
        "seat": view.seat,
        "phase": view.phase.name,
        "to_act": view.to_act,
        "deal_number": view.deal_number,
        "dealer": view.dealer,
        "active_seats": list(view.active_seats),
        "hands": hands,
        "talon": _cards(view.talon),
        "talon_score": None
        if view.talon is None or n != 4
        else talon_score(view.talon, view.ruleset),
        "bids": [{"seat": s, "action": str(a)} for s, a in view.bids],
        "declarer": view.declarer,
        "bid": view.bid,
        "contract": view.contract,
        "gives": _gives(view.gives, view.declarer),
        "trump": _suit(view.trump),
        "marriages": marriages,
        "trick": _trick(view.trick),
        "tricks": tricks,
        "takes": _takes(tricks, marriages, n),
        "scores": list(view.scores),
        "barrel": list(view.barrel) if view.barrel is not None else None,
        "legal": [str(a) for a in view.legal_actions],
    }


# ---------------------------------------------------------------------------------------
# the replay


def _declarer_of(actions: Sequence[JSON]) -> int | None:
    for a in actions:
        if str(a["action"]).split()[0] in ("give", "contract", "concede", "throw-in"):
            return int(a["seat"])
    return None


def deal_summary(deal: JSON, opening_bid: int | None = None) -> JSON:
    """Who declared what in a recorded deal, and how it ended (from the record alone).

    ``bid`` is what the talon was taken at (None before it was), as ``deals.bid`` of the
    database: for an unfinished deal too (the engine's figure replaces it for a finished one).
    """
    actions = list(deal.get("actions", ()))
    declarer = _declarer_of(actions)
    auction = auction_summary(deal, opening_bid)
    contract: int | None = None
    # the deal a record stops in (an abandoned or interrupted match) has no result
    outcome = "played" if "deltas" in deal else "unfinished"
    for a in actions:
        act = parse_action(str(a["action"]))
        if isinstance(act, Contract):
            contract = act.amount
        elif isinstance(act, Concede):
            outcome = "conceded"
        elif isinstance(act, ThrowIn):
            outcome = "thrown in"
    deltas = deal.get("deltas")
    # As the leaderboard reads it: the deal's recorded outcome (a sitter's made contract
    # scores 0, or -120 on his last barrel deal: the sign of the delta does not say).
    made = auction.made if contract is not None and deltas is not None else None
    return {
        "number": deal.get("number"),
        "dealer": deal.get("dealer"),
        "declarer": declarer,
        "bid": auction.bid,
        "contract": contract,
        "made": made,
        "outcome": outcome,
        "actions": len(actions),
        "steps": len(actions) + 1,
        "deltas": deltas,
        "scores": deal.get("scores"),
    }


def match_summary(match_id: str, record: JSON) -> JSON:
    """What the replay page needs before any deal is drawn."""
    n = len(record["players"])
    opening = opening_bid_of(record)
    deals = [deal_summary(d, opening) for d in record.get("deals", ())]
    result = record.get("result")
    played = result.get("deals") if isinstance(result, Mapping) else None
    if not isinstance(played, int) or isinstance(played, bool):
        played = sum(d["outcome"] != "unfinished" for d in deals)
    return {
        "match_id": match_id,
        "format": record.get("format"),
        "players": list(record["players"]),
        "seats": n,
        # as text: a 63-bit seed is past what a JavaScript number holds exactly (2**53)
        "seed": None if record.get("seed") is None else str(record.get("seed")),
        "ruleset": record.get("ruleset"),
        # which rules ran, for people (the page showed the name alone): the players are
        # named beside it
        "ruleset_description": rules_description(record),
        "result": record.get("result"),
        "incidents": record.get("incidents", []),
        # per seat, in `arena replay`'s words and with the record's totals: the page said
        # "4 incident(s)", the length of `incidents`, which lists only the first 20
        # disconnects (answers to no pending request, failed decisions) of a seat, and
        # said neither whose they were nor what
        "incident_lines": incident_summary(record, record["players"]),
        "forfeits": record.get("forfeits", []),
        "deals": deals,
        # as `arena replay --list` counts them: the record's result.deals, which leaves out
        # the unfinished deal an abandoned match stopped in
        "deals_played": played,
        # the limit that ended the match (a tournament's match_timeout_s), else null: its
        # result's reason says max_deals, as at a deal cap, and the page said only that
        "time_limit_s": time_limit_of(record),
        # how the match ended, in words, as `arena replay` says it (the page said the
        # result's reason as a key: "ended: max_deals", "ended: forfeits")
        "ended": end_reason(record),
        # the bid first hand holds without speaking (classic's 100), which no record action
        # and no view's bids hold: the page's bids put it first, as `arena replay` does
        "obligatory_bid": _obligatory_bid(record),
        # whether the table saw the talon once taken (else the declarer alone): the face-up
        # view draws it in every deal, and said nothing of it but the ruleset's line
        "talon_visible": _talon_visible(record),
    }


def _obligatory_bid(record: JSON) -> int | None:
    """The ruleset's opening bid when first hand is committed to it (``first_hand_commits``),
    else None (a ruleset that does not load: None too)."""
    players = record.get("players")
    try:
        rules = load_ruleset_value(record.get("ruleset"), len(players) if players else None)
    except (ValueError, TypeError):
        return None
    return rules.opening_bid if rules.first_hand_commits else None


def _talon_visible(record: JSON) -> bool | None:
    """The ruleset's ``talon_visible`` (None for a ruleset that does not load)."""
    players = record.get("players")
    try:
        rules = load_ruleset_value(record.get("ruleset"), len(players) if players else None)
    except (ValueError, TypeError):
        return None
    return rules.talon_visible


@dataclasses.dataclass
class _Deal:
    full: list[JSON]
    seats: list[list[JSON]]  # seats[s][step]
    actions: list[JSON]


class MatchReplay:
    """Every step of every deal of one record, face up and per seat.

    The record is checked once with :func:`engine.replay`; the game at the start of each
    deal is kept, and a deal's steps are captured the first time they are asked for.
    """

    def __init__(self, match_id: str, record: JSON) -> None:
        self.match_id = match_id
        self.record = record
        self.players: list[str] = list(record["players"])
        self.n = len(self.players)
        self._starts: list[Game] = []
        self._results: list[DealResult | None] = []
        self._end: Game | None = None  # the game after the record's last action, if unfinished
        self._final: Game  # the game after the record's last action
        self._deals: dict[int, _Deal] = {}
        self._lock = threading.Lock()
        self._check()
        self._fallbacks = fallback_reasons(record)
        self.summary = match_summary(match_id, record)
        for k, res in enumerate(self._results):
            if res is None and self._end is not None and self._end.declarer is not None:
                # The deal the record stops in: who took the talon at what, as the engine
                # has it (the record alone names the declarer only from his first give on).
                end = self._end
                self.summary["deals"][k].update(
                    declarer=end.declarer, bid=end.bid, contract=end.contract
                )
            if res is not None:
                self.summary["deals"][k].update(
                    declarer=res.declarer,
                    bid=res.bid,
                    contract=res.contract,
                    outcome=res.outcome,
                    made=res.outcome == "made" if res.contract is not None else None,
                    takes=list(res.takes),
                    # (a record may leave a deal's figures out, docs/record-format.md: the
                    # engine's, as the deal's last step and `arena replay` show them)
                    deltas=list(res.deltas),
                    scores=list(res.scores),
                    events=list(res.events),
                )
        # The result and the deals played as `arena replay` reads them: the rules' once
        # they ended the match (a record made by hand may leave its result out, and the
        # page showed no places, said no end and counted only deals with their own figures).
        result, rules_result = shown_result(record, self._final)
        self.summary["result"] = result
        if rules_result is not None:
            self.summary["ended"] = end_reason(record, rules_result)
        played = result.get("deals") if result is not None else None
        if not isinstance(played, int) or isinstance(played, bool):
            played = sum(res is not None for res in self._results)
        self.summary["deals_played"] = played

    def deal(self, index: int, seat: int | None = None) -> JSON:
        """The steps of deal ``index`` (position in the record), face up or as ``seat`` saw them."""
        if not 0 <= index < len(self._starts):
            raise IndexError(f"no deal {index} in match {self.match_id}")
        if seat is not None and not 0 <= seat < self.n:
            raise IndexError(f"no seat {seat} in match {self.match_id}")
        with self._lock:
            d = self._deals.get(index)
            if d is None:
                d = self._deals[index] = self._capture_deal(index)
        views = d.full if seat is None else d.seats[seat]
        rec = self.record["deals"][index]
        steps = []
        for i, view in enumerate(views):
            steps.append(
                {
                    "i": i,
                    "action": self._action_json(index, i - 1, d.actions[i - 1], seat)
                    if i
                    else None,
                    "tricks_done": len(view["tricks"]),
                    "view": view,
                }
            )
        return {
            "match_id": self.match_id,
            "index": index,
            "number": rec.get("number", index),
            "seat": seat,
            "players": self.players,
            # The deal's outcome, face up only: a seat learns it at the deal's last step
            # (its view's ``result``), and every step of a seat view holds only what that
            # seat knew after that step's action.
            "summary": self.summary["deals"][index] if seat is None else None,
            "steps": steps,
        }

    def _action_json(self, index: int, j: int, a: JSON, seat: int | None) -> JSON:
        """Action ``j`` of deal ``index``; ``fallback``: why the referee played it for its
        seat (``"timeout"``, ``"malformed"``, ``"illegal"``, ``"forfeited"``, ``""`` when
        the incidents do not say), None for the bot's own move and a forced one;
        ``fallback_why``: the same in words, as ``arena replay`` says it; ``failed``: the
        bot failed this decision (it raised, timed out in its client, answered no action)
        and its client sent the fallback as its answer (the record's ``"failed": true`` on
        a ``"by": "bot"`` move: no strike, not the referee's), as ``arena replay`` marks
        it (:data:`arena.render.CLIENT_FALLBACK_NOTE`)."""
        reason = self._fallbacks[index].get(j)
        text = str(a["action"])
        if seat is not None:
            # what this seat learnt of the action: a third seat sees a pass, not its card
            text = str(public_action(parse_action(text), int(a["seat"]), seat))
        return {
            "seat": a["seat"],
            "text": text,
            "ms": a.get("ms"),
            "by": a.get("by"),
            "fallback": reason,
            "fallback_why": None if reason is None else fallback_why(reason),
            # (as arena.render reads it: only a mark the referee's fallback does not take)
            "failed": reason is None and a.get("failed") is True,
        }

    # -- replaying ----------------------------------------------------------------------

    def _check(self) -> None:
        """Replay the record once (validated), keeping the game at each deal's start."""
        try:
            # (the changed cards first: what the replay would refuse then follows from them)
            own = seed_mismatches(self.record) if "match_id" in self.record else []
        except ReplayError:
            own = []  # the replay below says what is wrong
        changed = changed_cards(self.record, own)
        if changed:
            # Other cards were put in the record afterwards (they replay: a record carries
            # its cards), and drawing them would show a match never played.
            raise ReplayFailed(f"match {self.match_id}: {changed}")
        try:
            engine_replay(self.record)
        except ReplayError as e:
            raise ReplayFailed(f"match {self.match_id} does not replay: {e.for_people()}") from e
        game = start_game(self.record)
        for index, rec in enumerate(self.record.get("deals", ())):
            number = int(rec.get("number", index))
            if game.deal_number != number:
                raise ReplayFailed(
                    f"Deal {number + 1} (record deal {number}): the engine is at record deal "
                    f"{game.deal_number}"
                )
            self._starts.append(game.clone())
            for k, a in enumerate(rec.get("actions", ())):
                try:
                    game.apply(parse_action(str(a["action"])), seat=int(a["seat"]))
                except ValueError as e:
                    # (numbered as the engine's refusals: the action from 0)
                    raise ReplayFailed(
                        f"Deal {number + 1} (record deal {number}), action {k}: {e}"
                    ) from e
            done = game.deal_results
            self._results.append(done[-1] if done and done[-1].number == number else None)
        self._final = game
        self._end = None if game.is_over else game

    def _capture_deal(self, index: int) -> _Deal:
        game = self._starts[index].clone()
        rec = self.record["deals"][index]
        number = int(rec.get("number", index))
        actions = list(rec.get("actions", ()))
        talon = _cards(game.talon)  # as dealt: the game is at the deal's start
        d = _Deal(full=[], seats=[[] for _ in range(self.n)], actions=actions)
        self._capture(game, d, talon, [])
        for k, a in enumerate(actions):
            seat = int(a["seat"])
            action = parse_action(str(a["action"]))
            before_full = d.full[-1]
            before_seats = [s[-1] for s in d.seats]
            game.apply(action, seat=seat)
            gives = _record_gives(actions[: k + 1])
            if game.is_over or game.deal_number != number:
                self._capture_end(
                    d, before_full, before_seats, seat, action, rec, gives, self._results[index]
                )
            else:
                self._capture(game, d, talon, gives)
        return d

    def _capture(
        self, game: Game, d: _Deal, talon: list[str | None] | None, gives: list[JSON]
    ) -> None:
        views = [view_json(observe(game, s)) for s in range(self.n)]
        full = dict(views[0])
        full["seat"] = None
        full["hands"] = [views[s]["hands"][s] for s in range(self.n)]
        full["talon"] = talon if talon is not None else views[0]["talon"]
        # (of the dealt talon, shown face up; a game of three has no sitter to score it)
        full["talon_score"] = game.talon_score if self.n == 4 else None
        full["gives"] = gives
        full["legal"] = views[game.to_act]["legal"] if game.to_act is not None else []
        sizes = [len(h or ()) for h in full["hands"]]
        full["hand_sizes"] = sizes
        # why the declarer holds the talon when nobody bid it (public: the auction is),
        # in `arena replay`'s words: a 1001 last hand's take after an all-pass, say
        taken = talon_taken_why(game)
        full["taken"] = taken
        for s, v in enumerate(views):
            v["hand_sizes"] = sizes  # how many cards each holds is public
            v["taken"] = taken
            d.seats[s].append(v)
        d.full.append(full)

    def _capture_end(
        self,
        d: _Deal,
        before_full: JSON,
        before_seats: list[JSON],
        actor: int,
        action: Action,
        rec: JSON,
        gives: list[JSON],
        scored: DealResult | None,
    ) -> None:
        """The table after the action that ended the deal (the engine has moved on): its
        result, with the scores and barrel counters after it, how it ended (``outcome``:
        made, failed, conceded, thrown_in) and what happened on the barrel (``events``)."""
        result: JSON = {
            "deltas": rec.get("deltas"),
            "scores": rec.get("scores"),
            "events": [],
            "outcome": deal_summary(rec)["outcome"],
        }
        if scored is not None:
            result["outcome"] = scored.outcome
            result["deltas"], result["scores"] = list(scored.deltas), list(scored.scores)
            result["events"] = list(scored.events)
            if scored.barrel is not None:
                result["barrel"] = list(scored.barrel)
        for k, before in enumerate([before_full, *before_seats]):
            v = _finish(before, actor, action, result, self.n)
            if k == 0:
                v["gives"] = gives
                d.full.append(v)
            else:
                d.seats[k - 1].append(v)


def _record_gives(actions: Sequence[JSON]) -> list[JSON]:
    out = []
    for a in actions:
        act = parse_action(str(a["action"]))
        if isinstance(act, Give):
            out.append({"from": int(a["seat"]), "to": act.to, "card": str(act.card)})
    return out


def _finish(before: JSON, actor: int, action: Action, result: JSON, n: int) -> JSON:
    v: JSON = {**before}
    v["phase"] = "DEAL_OVER"
    v["to_act"] = None
    v["legal"] = []
    v["result"] = result
    if isinstance(action, Play):
        card = str(action.card)
        hands = [list(h) if h is not None else None for h in before["hands"]]
        held = hands[actor]
        if held is not None:
            hands[actor] = [c for c in held if c != card]
        v["hands"] = hands
        sizes = list(before.get("hand_sizes", [0] * n))
        sizes[actor] = max(0, sizes[actor] - 1)
        v["hand_sizes"] = sizes
        trick = [*before["trick"], {"seat": actor, "card": card}]
        trump = next((s for s in Suit if s.symbol == before["trump"]), None)
        won = trick_winner([parse_card(t["card"]) for t in trick], trump)
        winner = int(trick[won]["seat"])
        tricks = [*before["tricks"], {"leader": trick[0]["seat"], "cards": trick, "winner": winner}]
        v["trick"] = []
        v["tricks"] = tricks
        v["takes"] = _takes(tricks, before["marriages"], n)
    if result.get("scores") is not None:
        v["scores"] = list(result["scores"])
    if result.get("barrel") is not None:
        v["barrel"] = list(result["barrel"])
    return v


class ReplayCache:
    """The last few replayed matches, so stepping through one does not replay it each time."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, Hashable], MatchReplay] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: str, load: Any, version: Hashable = None) -> MatchReplay:
        """The replay of ``match_id`` as stored in ``version`` (see
        ``DataSource.stored_version``); ``load()`` returns its record when not cached."""
        key = (match_id, version)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit
        replay = MatchReplay(match_id, load())
        with self._lock:
            self._items[key] = replay
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return replay
