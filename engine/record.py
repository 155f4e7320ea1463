"""Match records: a match as JSON-safe data, and replaying it through the rules.

The format is documented in ``docs/record-format.md``. A record holds the ruleset, the seed,
the players and, per deal, the dealt hands and talon, every action as ``(seat, notation)``,
and the score deltas and scores; :func:`replay` rebuilds the :class:`~engine.game.Game` and
checks every stored figure.

>>> from engine.game import OUTCOMES, Game
>>> g = Game.new("1001", seed=3, players=["a", "b", "c"])
>>> while g.deal_number < 2:
...     g.apply_trusted(g.legal_actions()[0])
>>> rec = record(g)
>>> replay(rec).scores == g.scores
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.actions import Action, ActionParseError, fallback_action, parse_action
from engine.cards import CardParseError, card_texts
from engine.errors import IllegalActionError
from engine.game import OUTCOMES, Game, drawn_dealer
from engine.rules import Ruleset, RulesetError, preset

__all__ = [
    "COUNTED_INCIDENTS",
    "INCIDENT_KINDS",
    "RECORD_FORMAT",
    "ReplayError",
    "check_record_shape",
    "forfeit_result",
    "load_ruleset_value",
    "ordinal",
    "record",
    "replay",
    "seed_mismatches",
    "start_game",
]

RECORD_FORMAT = "thousand-arena/record/1"


class ReplayError(ValueError):
    """A record that does not replay: names the first deal/action/figure that differs.

    ``deal`` and ``index`` (the action's index within the deal) are set when known;
    ``cause`` is the refused action's :class:`~engine.errors.IllegalActionError`, if any;
    ``newer``: the record is of a later format, written by a newer version (not damaged).
    """

    def __init__(
        self,
        message: str,
        *,
        deal: int | None = None,
        index: int | None = None,
        cause: IllegalActionError | None = None,
        newer: bool = False,
    ) -> None:
        super().__init__(message)
        self.deal = deal
        self.index = index
        self.cause = cause
        self.newer = newer

    def for_people(self) -> str:
        """The message with its deal numbered for people as well: ``deal 1, action 4: ...``
        (the record's number, from 0, as every engine message counts) reads ``Deal 2
        (record deal 1), action 4: ...``, the words of `arena replay`'s refusals. What a
        user reads (``arena replay --check``, the web replay) counts deals from 1."""
        text = str(self)
        if self.deal is None:
            return text
        return re.sub(
            rf"\bdeal {self.deal}\b",
            f"Deal {self.deal + 1} (record deal {self.deal})",
            text,
            count=1,
        )


def ordinal(place: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... (``11th``, ``21st``)."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def _cards(mask: int) -> list[str]:
    return card_texts(mask)


def record(game: Game) -> dict[str, Any]:
    """The JSON-safe record of ``game`` so far (finished deals plus the one in progress)."""
    deals: list[dict[str, Any]] = []
    for log, res in zip(game._logs, game.deal_results, strict=True):
        deals.append(
            {
                "number": log.number,
                "dealer": log.dealer,
                "hands": [_cards(m) for m in log.hands],
                "talon": _cards(log.talon),
                "actions": [{"seat": s, "action": str(a)} for s, a in log.actions],
                # Derived, like the scores: what a reader cannot tell from the deltas (a
                # made contract on the barrel's last deal scores -120) without the rules.
                "outcome": res.outcome,
                "deltas": list(log.deltas),
                "scores": list(log.scores),
            }
        )
    if not game.is_over:
        deals.append(
            {
                "number": game.deal_number,
                "dealer": game.dealer,
                "hands": [_cards(m) for m in game._dealt],
                "talon": _cards(game._talon),
                "actions": [{"seat": s, "action": str(a)} for s, a in game.actions],
            }
        )
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "ruleset": game.ruleset.to_dict(),
        "seed": game.seed,
        "players": list(game.players),
    }
    scores, barrel = game.start
    if any(scores) or any(barrel):
        rec["start"] = {"scores": list(scores), "barrel": list(barrel)}
    if game.first_dealer != drawn_dealer(game.seed, game.n):  # given to Game.new
        rec.setdefault("start", {})["dealer"] = game.first_dealer
    rec["deals"] = deals
    rec["result"] = game.result.to_dict() if game.result is not None else None
    return rec


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _ints(value: Any) -> bool:
    return _is_list(value) and all(_is_int(v) for v in value)


#: The keys without which a record cannot be replayed.
REPLAY_KEYS = ("ruleset", "seed", "players", "deals")


def _newer_format(fmt: object) -> bool:
    """Whether ``fmt`` names a later version of this record format ("…/record/2")."""
    head, _, version = RECORD_FORMAT.rpartition("/")
    if not isinstance(fmt, str) or not fmt.startswith(head + "/"):
        return False
    later = fmt[len(head) + 1 :]
    return later.isascii() and later.isdigit() and int(later) > int(version)


def check_record_shape(rec: Any, required: Sequence[str] = REPLAY_KEYS) -> None:
    """Raise :class:`ReplayError` ("not a match record: ...", with ``deal``/``index`` when
    known) if ``rec`` does not have the shape of a match record: the ``required`` keys and
    the type of every value that ``replay``, the renderers and the leaderboard read
    (docs/record-format.md).

    Only the shape: whether the actions are legal and the figures right is :func:`replay`'s
    business (it calls this first). The storage checks what it reads with ``required=()``:
    the statistics need no seed or ruleset.
    """

    def bad(what: str, deal: int | None = None, index: int | None = None) -> ReplayError:
        return ReplayError(f"not a match record: {what}", deal=deal, index=index)

    if not isinstance(rec, Mapping):
        raise bad(f"a record is a JSON object, got {type(rec).__name__}")
    fmt = rec.get("format", RECORD_FORMAT)
    if fmt != RECORD_FORMAT:
        if _newer_format(fmt):  # not damaged: from a later version of the product
            raise ReplayError(
                f"a record of format {fmt!r}, written by a newer Thousand Arena: this one "
                f"reads {RECORD_FORMAT!r} (upgrade to read it)",
                newer=True,
            )
        raise bad(f"'format' must be {RECORD_FORMAT!r}, got {fmt!r:.60}")
    for key in required:
        if key not in rec:
            raise bad(f"no {key!r} key")
    if "seed" in rec and not (_is_int(rec["seed"]) or isinstance(rec["seed"], str)):
        # (NaN, 1e400 as infinity, 1.5, true, a list: else "cannot start the match", exit 1,
        # as if the rules had refused an action of a record, not named as its wrong shape)
        raise bad(f"'seed' must be an integer or a string, got {rec['seed']!r:.60}")
    if "ruleset" in rec and not isinstance(rec["ruleset"], str | Mapping):
        kind = type(rec["ruleset"]).__name__
        raise bad(f"'ruleset' must be an object or a preset name, got {kind}")
    players = rec.get("players", ())
    if not _is_list(players) or not all(isinstance(p, str) for p in players):
        raise bad(f"'players' must be a list of names, got {players!r:.60}")
    start = rec.get("start")
    if start is not None and not isinstance(start, Mapping):
        raise bad(f"'start' must be an object with 'scores' and 'barrel', got {start!r:.60}")
    if start is not None and "dealer" in start and not _is_int(start["dealer"]):
        raise bad(f"'start.dealer' must be a seat number, got {start['dealer']!r:.60}")
    for key in ("result", "rules_result"):
        res = rec.get(key)
        if res is None:
            continue
        if not isinstance(res, Mapping):
            raise bad(f"{key!r} must be an object or null, got {res!r:.60}")
        if "deals" in res and not _is_int(res["deals"]):
            raise bad(f"'{key}.deals' must be an integer, got {res['deals']!r:.60}")
        if res.get("winner") is not None and not _is_int(res["winner"]):
            raise bad(f"'{key}.winner' must be a seat number or null, got {res['winner']!r:.60}")
        if "reason" in res and not isinstance(res["reason"], str):
            raise bad(f"'{key}.reason' must be a string, got {res['reason']!r:.60}")
        for name in ("scores", "places", "shortfalls"):
            if name not in res:
                continue
            value = res[name]
            if not (_ints(value) and ("players" not in rec or len(value) == len(players))):
                count = "integers" if "players" not in rec else f"{len(players)} integers"
                raise bad(
                    f"'{key}.{name}' must be a list of {count} (one per seat), got {value!r:.60}"
                )
    incidents = rec.get("incidents")
    if incidents is not None and not (
        _is_list(incidents) and all(isinstance(x, Mapping) for x in incidents)
    ):
        raise bad(f"'incidents' must be a list of objects, got {incidents!r:.60}")
    _check_referee_shape(rec, players, bad)
    deals = rec.get("deals", ())
    if not _is_list(deals):
        raise bad(f"'deals' must be a list, got {type(deals).__name__}")
    for i, d in enumerate(deals):
        actions: Any = d.get("actions") if isinstance(d, Mapping) else None
        if not _is_list(actions) or not all(isinstance(a, Mapping) for a in actions):
            raise bad(f"deal {i} must be an object with a list of 'actions' objects", i)
        for key in ("number", "dealer"):
            if key in d and not _is_int(d[key]):
                raise bad(f"deal {i}: {key!r} must be an integer, got {d[key]!r:.60}", i)
        if "hands" in d and not (_is_list(d["hands"]) and all(map(_is_list, d["hands"]))):
            raise bad(f"deal {i}: 'hands' must be a list of card lists, one per seat", i)
        if "talon" in d and not _is_list(d["talon"]):
            raise bad(f"deal {i}: 'talon' must be a list of cards, got {d['talon']!r:.60}", i)
        if ("hands" in d) != ("talon" in d):
            raise bad(f"deal {i}: 'hands' and 'talon' go together (both, or neither)", i)
        for key in ("deltas", "scores"):
            if key in d and not _ints(d[key]):
                raise bad(f"deal {i}: {key!r} must be a list of integers, got {d[key]!r:.60}", i)
        if "outcome" in d and d["outcome"] not in OUTCOMES:
            raise bad(f"deal {i}: 'outcome' must be one of {', '.join(OUTCOMES)}, got "
                      f"{d['outcome']!r:.60}", i)  # fmt: skip
        for j, a in enumerate(actions):
            seat = a.get("seat")
            if type(seat) is not int and not _is_int(seat):  # (the common case first)
                raise bad(f"deal {i}, action {j}: 'seat' must be a seat number, got {seat!r:.60}",
                          i, j)  # fmt: skip
            if not isinstance(a.get("action"), str | Action):
                raise bad(
                    f"deal {i}, action {j}: 'action' must be an action in notation (such as "
                    f"'bid 105'), got {a.get('action')!r:.60}",
                    i,
                    j,
                )
            if "by" in a and a["by"] not in BY:
                raise bad(f"deal {i}, action {j}: 'by' must be one of {', '.join(BY)}, got "
                          f"{a['by']!r:.60}", i, j)  # fmt: skip
            if "failed" in a and (a["failed"] is not True or a.get("by", "bot") != "bot"):
                # (a decision the bot failed, its client's fallback applied as its answer)
                raise bad(f"deal {i}, action {j}: 'failed' must be true, on an action 'by' "
                          f"'bot', got {a['failed']!r:.60} by {a.get('by', 'bot')!r:.20}",
                          i, j)  # fmt: skip
            ms = a.get("ms", 0)
            if not (isinstance(ms, int | float) and not isinstance(ms, bool) and 0 <= ms < _INF):
                raise bad(f"deal {i}, action {j}: 'ms' must be a number of milliseconds, got "
                          f"{ms!r:.60}", i, j)  # fmt: skip


#: Who chose an action, in a referee's record (docs/record-format.md).
BY = ("bot", "forced", "fallback")
_INF = float("inf")


def _check_referee_shape(
    rec: Mapping[str, Any], players: Sequence[str], bad: Callable[[str], ReplayError]
) -> None:
    """The types of what the referee adds to a record (docs/record-format.md, "Additions by
    the referee"): the renderers read them, and one of another type would be left out of
    what they show (an incident whose seat is a string, a fallback's reason with it)."""
    for key in ("match_id",):
        if key in rec and not isinstance(rec[key], str):
            raise bad(f"{key!r} must be a string, got {rec[key]!r:.60}")
    for key in ("interrupted", "abandoned"):
        if key in rec and not isinstance(rec[key], bool):
            raise bad(f"{key!r} must be true or false, got {rec[key]!r:.60}")
    for key, _ in COUNTED_INCIDENTS:
        if key in rec and not (
            _ints(rec[key]) and ("players" not in rec or len(rec[key]) == len(players))
        ):
            raise bad(f"{key!r} must be a list of {len(players)} integers (one per seat), "
                      f"got {rec[key]!r:.60}")  # fmt: skip
    if "forfeits" in rec and not _ints(rec["forfeits"]):
        raise bad(f"'forfeits' must be a list of seat numbers, got {rec['forfeits']!r:.60}")
    for n, inc in enumerate(rec.get("incidents") or ()):
        for key, ok, what in (
            ("kind", _is_str, "a string"),
            ("seat", _is_int, "a seat number"),
            ("deal", _is_int, "a deal number"),
            ("detail", _is_str, "a string"),
        ):
            if key in inc and not ok(inc[key]):
                raise bad(f"incident {n}: {key!r} must be {what}, got {inc[key]!r:.60}")


def start_game(rec: Mapping[str, Any]) -> Game:
    """The game of a record (shaped as :func:`check_record_shape` checks) before its first
    action: its ruleset, seed and players, its ``start`` position and the cards its deals
    give. Raises :class:`ReplayError` ("ruleset: ..." or "cannot start the match: ...")."""
    try:
        ruleset = load_ruleset_value(rec["ruleset"], len(rec["players"]))
    except RulesetError as e:
        raise ReplayError(f"ruleset: {e}") from e
    explicit = {
        d.get("number", i): (d["hands"], d["talon"])
        for i, d in enumerate(rec["deals"])
        if "hands" in d and "talon" in d
    }
    start = rec.get("start") or {}
    try:
        return Game.new(
            ruleset,
            rec["seed"],
            list(rec["players"]),
            deals=explicit,
            scores=start.get("scores"),
            barrel=start.get("barrel"),
            dealer=start.get("dealer"),
        )
    except (ValueError, TypeError, CardParseError) as e:
        raise ReplayError(f"cannot start the match: {e}") from e


def replay(rec: Mapping[str, Any]) -> Game:
    """Rebuild the game of a record, checking each action and each stored score.

    Raises :class:`ReplayError` naming the first action refused (wrapping its
    ``IllegalActionError``, with the deal number and action index) or the first stored
    figure (dealer, deltas, scores, result) that the rules do not reproduce.
    """
    check_record_shape(rec)
    game = start_game(rec)
    deals: Sequence[Mapping[str, Any]] = rec["deals"]
    fallbacks: dict[tuple[int, int], int] = {}  # (seat, deal): the referee's moves
    for i, d in enumerate(deals):
        where = f"deal {i}"
        num = d.get("number", i)
        if num != i:
            raise ReplayError(f"{where}: numbered {num}, expected {i}", deal=i)
        if game.is_over:
            raise ReplayError(f"{where}: the match was already over", deal=i)
        if "dealer" in d and d["dealer"] != game.dealer:
            raise ReplayError(
                f"{where}: dealer is {game.dealer}, the record says {d['dealer']}", deal=i
            )
        for j, entry in enumerate(d["actions"]):
            text, seat = entry["action"], entry["seat"]
            if game.is_over or game.deal_number != i:
                raise ReplayError(
                    f"{where}, action {j} (seat {seat}: {text}): the deal was already over",
                    deal=i,
                    index=j,
                )
            try:
                action = parse_action(text) if isinstance(text, str) else text
            except ActionParseError as e:
                raise ReplayError(f"{where}, action {j}: {e}", deal=i, index=j) from e
            by = entry.get("by")
            if by == "fallback" or by == "forced":
                _check_by(game, action, entry, f"{where}, action {j} (seat {seat}: {text})", i, j)
                fallbacks[seat, i] = fallbacks.get((seat, i), 0) + (by == "fallback")
            try:
                game.apply(action, seat=seat)
            except IllegalActionError as e:
                raise ReplayError(
                    f"{where}, action {j} (seat {seat}: {text}) refused: {e}",
                    deal=i,
                    index=j,
                    cause=e,
                ) from e
        if "deltas" in d or "scores" in d or "outcome" in d:
            results = game.deal_results
            if len(results) <= i:
                raise ReplayError(
                    f"{where}: the record scores the deal but its actions do not finish it",
                    deal=i,
                )
            res = results[i]
            for key, mine in (("deltas", res.deltas), ("scores", res.scores)):
                if key in d and list(d[key]) != list(mine):
                    raise ReplayError(
                        f"{where}: {key} are {list(mine)}, the record says {list(d[key])}",
                        deal=i,
                    )
            if "outcome" in d and d["outcome"] != res.outcome:
                raise ReplayError(
                    f"{where}: the outcome is {res.outcome!r}, the record says {d['outcome']!r}",
                    deal=i,
                )
    _check_referee(rec, game, len(deals), fallbacks)
    # Every seat forfeited: the match stopped unfinished. Referees before 2026-12-01 09:42
    # wrote no rules_result for it and placed every seat 1st, not last (a record of theirs
    # is read as written: `abandoned` says what it is). One with no result at all (a record
    # cut before its end) is checked as any other without one.
    older_abandoned = (
        bool(rec.get("abandoned")) and "rules_result" not in rec and rec.get("result") is not None
    )
    if "rules_result" not in rec and not older_abandoned:
        _check_result(rec, "result", game)
        forfeits = rec.get("forfeits")
        if game.result is not None and _is_list(forfeits) and forfeits:
            # The referee keeps the rules' result in rules_result whenever a seat forfeited a
            # finished match: without it, "result" (the rules' order) un-forfeited the seats
            # and passed the check (the leaderboard reads it).
            raise ReplayError(
                f"rules_result: missing, but the record lists forfeits {forfeits!r:.60}: its "
                "result must place them last, and rules_result keep the rules' own"
            )
    elif older_abandoned or rec["rules_result"] is None:
        if not rec.get("abandoned"):
            raise ReplayError("rules_result: null is only for an abandoned match")
        if game.result is not None:
            raise ReplayError("rules_result: null, but the actions finish the match")
        final = rec.get("result")
        n = game.n
        if (
            not isinstance(final, Mapping)
            or final.get("places") not in ([n] * n, *([[1] * n] if older_abandoned else []))
            or list(final.get("scores", ())) != list(game.scores)
        ):
            raise ReplayError(
                f"result: an abandoned match places every seat {ordinal(n)} with the scores "
                f"{list(game.scores)}, the record says {final!r:.120}"
            )
    else:
        # A referee that placed forfeiters last keeps the rules' own result as
        # "rules_result"; "result" must be that result with the forfeiters placed last.
        _check_result(rec, "rules_result", game)
        if rec.get("result") == rec["rules_result"]:
            return game  # "result" replaced by "rules_result" (an edited record): accepted
        forfeits = rec.get("forfeits")
        if (
            not _is_list(forfeits)
            or not forfeits
            or not all(_is_int(s) and 0 <= s < game.n for s in forfeits)
        ):
            raise ReplayError(
                f"forfeits: a record with a rules_result lists them, got {forfeits!r:.60}"
            )
        assert game.result is not None  # (checked: rules_result is not null)
        expected = forfeit_result(game.result.to_dict(), list(forfeits), game.ruleset.target)
        final = rec.get("result")
        if not isinstance(final, Mapping):
            raise ReplayError("result: a record with a rules_result has the forfeit result")
        if set(forfeits) == set(range(game.n)) and final.get("places") == [1] * game.n:
            # Every seat forfeited (the last on the match's final action): a referee before
            # 2026-12-02 placed them all first, as its forfeit_result did. Its record is
            # genuine, not changed: it replays.
            expected = {**expected, "places": [1] * game.n}
        for key in (*_RESULT_KEYS, "forfeits"):
            if key in final and final[key] != expected[key]:
                raise ReplayError(f"result: {key} is {expected[key]}, the record says {final[key]}")
    return game


_RESULT_KEYS = ("scores", "places", "shortfalls", "winner", "deals", "reason")

#: The kinds of a referee's incidents (docs/referee.md, "What is recorded"), in the order of
#: the protocol's ``Incident`` enum. ``bot_error``: the bot's client said its decision failed
#: and sent its own fallback (``Decision.failed``), no strike.
INCIDENT_KINDS = (
    "timeout", "illegal", "malformed", "wrong_request", "disconnect", "forfeit", "bot_error",
)  # fmt: skip
_STRIKES = ("timeout", "illegal", "malformed")
#: The incidents a client can cause without limit, which a referee lists one by one only
#: up to a limit per seat and match (the record stays bounded) and counts in full in the
#: record's per-seat list: ``(key of that list, kind)``. Readers take the totals.
COUNTED_INCIDENTS = (
    ("wrong_requests", "wrong_request"),
    ("disconnects", "disconnect"),
    ("bot_errors", "bot_error"),
)
#: The detail of the disconnect incident older referees listed but did not count (above).
_UNCOUNTED_START = "not connected at the start"


def _check_by(
    game: Game, action: Action, entry: Mapping[str, Any], where: str, i: int, j: int
) -> None:
    """A move the record says the referee made (``"by": "fallback"``) is the one it plays
    (``fallback_action``), and a ``"forced"`` one was the only legal action: `arena replay`
    and the web mark the moves by these words, and the leaderboard's decision times leave
    them out."""
    legal = game.legal_actions()
    if action not in legal or entry["seat"] != game.to_act:
        # The rules refuse it, whoever made it: the caller's apply names the rule broken
        # (a ruleset edited to must_beat was reported as "not the referee's fallback").
        return
    if entry["by"] == "forced" and len(legal) != 1:
        raise ReplayError(
            f"{where}: marked forced (the only legal action), but {len(legal)} were legal",
            deal=i,
            index=j,
        )
    if entry["by"] == "fallback" and action != fallback_action(legal):
        raise ReplayError(
            f"{where}: marked as the referee's fallback, which is {fallback_action(legal)}",
            deal=i,
            index=j,
        )


def _check_referee(
    rec: Mapping[str, Any], game: Game, deals: int, fallbacks: Mapping[tuple[int, int], int]
) -> None:
    """What the referee adds agrees with the match (docs/record-format.md): each incident
    names a kind, a seat and a deal of it; every strike of a seat in a deal was answered by
    a fallback there (`arena replay` and the web pair them, in order; in a record whose
    actions say who chose them, ``by``); the forfeit
    incidents are the ``forfeits``; the per-seat counts hold the incidents listed; an
    abandoned match has no rules' result and an interrupted one no result."""
    incidents = rec.get("incidents") or ()
    strikes: dict[tuple[int, int], int] = {}
    for n, inc in enumerate(incidents):
        kind, seat, deal = inc.get("kind"), inc.get("seat"), inc.get("deal")
        if kind not in INCIDENT_KINDS:
            raise ReplayError(
                f"incident {n}: kind {kind!r:.60} is none of {', '.join(INCIDENT_KINDS)}"
            )
        if not (_is_int(seat) and 0 <= seat < game.n):
            raise ReplayError(f"incident {n} ({kind}): seat {seat!r:.60} is no seat of the match")
        # (an answer that comes once the last deal is over is counted in the next one's
        # number, as the engine numbers the state after a deal)
        if deal is not None and not 0 <= deal <= deals:
            raise ReplayError(
                f"incident {n} ({kind}): deal {deal} is past the record's {deals} deal(s)"
            )
        if kind in _STRIKES and deal is not None:  # (one with no deal pairs with none)
            strikes[seat, deal] = strikes.get((seat, deal), 0) + 1
    says_by = any("by" in a for d in rec["deals"] for a in d["actions"])
    for (seat, deal), count in sorted(strikes.items()) if says_by else ():
        played = fallbacks.get((seat, deal), 0)
        if played < count and _ends_in_unpaired_fallback(rec, strikes, fallbacks, seat, deal - 1):
            # Records of older referees (still read) note a strike after its fallback is
            # played: one on a deal's last move carries the next deal's number (past the
            # last one, at the match's last move: let through above as well).
            played += 1
        if played < count:
            raise ReplayError(
                f"incidents: seat {seat} has {count} strike(s) in deal {deal}, but the referee "
                f"played {played} fallback(s) for it there",
                deal=deal,
            )
    if "forfeits" in rec and "incidents" in rec:
        by_incident = sorted({inc["seat"] for inc in incidents if inc.get("kind") == "forfeit"})
        if by_incident != sorted(rec["forfeits"]):
            raise ReplayError(
                f"forfeits: {sorted(rec['forfeits'])}, but the forfeit incidents name {by_incident}"
            )
    # Referees before 2026-12-01 23:05 listed a seat "not connected at the start" of a match
    # without counting it in `disconnects`: their records (from before bot_errors, which
    # every referee since 2026-12-05 writes) are read as those referees counted.
    uncounted = "" if "bot_errors" in rec else _UNCOUNTED_START
    for key, kind in COUNTED_INCIDENTS:  # (an older record has no bot_errors: none checked)
        counts = rec.get(key)
        if counts is None:
            continue
        for seat, count in enumerate(counts):
            listed = sum(
                1
                for x in incidents
                if x.get("kind") == kind
                and x.get("seat") == seat
                and not (uncounted and str(x.get("detail", "")).startswith(uncounted))
            )
            if count < listed:
                raise ReplayError(f"{key}: seat {seat} counts {count}, {listed} are listed")
    if rec.get("abandoned") and rec.get("rules_result") is not None:
        raise ReplayError("abandoned: an abandoned match has a null rules_result")
    if rec.get("abandoned") and sorted(set(rec.get("forfeits") or ())) != list(range(game.n)):
        # The referee stops a match only once every seat has forfeited (every referee wrote
        # `forfeits`): without this, a record cut short and marked abandoned passed, its
        # result placing the seats as it liked (all 1st, in an older referee's form).
        raise ReplayError(
            f"abandoned: a match is abandoned once every seat has forfeited, but forfeits "
            f"lists {rec.get('forfeits')!r:.60}"
        )
    if rec.get("interrupted") and rec.get("result") is not None:
        raise ReplayError("interrupted: an interrupted match has a null result")


def _ends_in_unpaired_fallback(
    rec: Mapping[str, Any],
    strikes: Mapping[tuple[int, int], int],
    fallbacks: Mapping[tuple[int, int], int],
    seat: int,
    deal: int,
) -> bool:
    """Whether deal ``deal`` of the record ends in a fallback of ``seat`` that no strike
    of that deal answers."""
    if not 0 <= deal < len(rec["deals"]) or not rec["deals"][deal]["actions"]:
        return False
    last = rec["deals"][deal]["actions"][-1]
    return (
        last.get("seat") == seat
        and last.get("by") == "fallback"
        and fallbacks.get((seat, deal), 0) > strikes.get((seat, deal), 0)
    )


def _check_result(rec: Mapping[str, Any], key: str, game: Game) -> None:
    """``rec[key]`` is the rules' result of ``game`` (or null while it is unfinished)."""
    stored = rec.get(key)
    if stored is None:
        if key in rec and game.result is not None:
            raise ReplayError(f"{key}: null, but the match is over")
        return
    if game.result is None:
        raise ReplayError(f"{key}: the record has a result but the match is not over")
    mine = game.result.to_dict()
    for k in _RESULT_KEYS:
        if k in stored and stored[k] != mine[k]:
            raise ReplayError(f"{key}: {k} is {mine[k]!r}, the record says {stored[k]!r}")


def forfeit_result(result: Mapping[str, Any], forfeits: list[int], target: int) -> dict[str, Any]:
    """A result with the ``forfeits`` seats placed last (sharing the last place) and the
    others ranked by score; ``winner`` and ``shortfalls`` follow. The referee's result of a
    match in which seats forfeited (the rules know nothing of forfeits). When every seat
    forfeited, each is placed n-th, as in an abandoned match: nobody is credited a first
    place (the last seat may forfeit on the match's last action, which ends it)."""
    scores: list[int] = list(result["scores"])
    out = dict(result)
    n = len(scores)
    fset = set(forfeits)
    stay = [s for s in range(n) if s not in fset]
    places = [0] * n
    for s in stay:
        places[s] = 1 + sum(1 for o in stay if scores[o] > scores[s])
    for s in fset:
        places[s] = len(stay) + 1 if stay else n
    firsts = [s for s in range(n) if places[s] == 1]
    winner = firsts[0] if len(firsts) == 1 else None
    out["places"] = places
    out["winner"] = winner
    out["shortfalls"] = [0 if s == winner else max(0, target - scores[s]) for s in range(n)]
    out["forfeits"] = sorted(forfeits)
    return out


def seed_mismatches(rec: Mapping[str, Any]) -> list[int]:
    """The deals of a record whose stored ``hands``/``talon`` are not the ones its seed
    deals. Not an error (a record may give its own cards: a constructed rule case, say), but
    a record the referee wrote always matches: ``arena replay --check`` says so."""
    check_record_shape(rec)
    game = start_game(rec)
    # Of the deals numbered as their place (another number is the replay's to name: a deal
    # whose number was changed to 5 was said to hold cards "deal 5" is not dealt).
    placed = {i for i, d in enumerate(rec["deals"]) if d.get("number", i) == i}
    return sorted(
        n for n, cards in game._explicit.items() if n in placed and cards != game._seed_deal(n)
    )


def load_ruleset_value(value: Any, players: int | None = None) -> Ruleset:
    """A ruleset as a record stores it: a full dict, or a preset name (or a dict naming a
    preset, without ``players``), for a table of ``players`` (see :func:`engine.rules.preset`:
    "1001" with 4 players is "1001-4p")."""
    if isinstance(value, str):
        return preset(value, players)
    return Ruleset.from_dict(value, players)
