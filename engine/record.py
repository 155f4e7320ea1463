"""Match records: a match as JSON-safe data, and replaying it through the rules.

The format is documented in ``docs/record-format.md``. A record holds the ruleset, the seed,
the players and, per deal, the dealt hands and talon, every action as ``(seat, notation)``,
and the score deltas and scores; :func:`replay` rebuilds the :class:`~engine.game.Game` and
checks every stored figure.

>>> from engine.game import Game
>>> g = Game.new("1001", seed=3, players=["a", "b", "c"])
>>> while g.deal_number < 2:
...     g.apply_trusted(g.legal_actions()[0])
>>> rec = record(g)
>>> replay(rec).scores == g.scores
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.actions import ActionParseError, parse_action
from engine.cards import CardParseError
from engine.errors import IllegalActionError
from engine.game import Game
from engine.rules import Ruleset, RulesetError
from engine.tables import cards_of

__all__ = ["RECORD_FORMAT", "ReplayError", "record", "replay"]

RECORD_FORMAT = "thousand-arena/record/1"


class ReplayError(ValueError):
    """A record that does not replay: names the first deal/action/figure that differs.

    ``deal`` and ``index`` (the action's index within the deal) are set when known;
    ``cause`` is the refused action's :class:`~engine.errors.IllegalActionError`, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        deal: int | None = None,
        index: int | None = None,
        cause: IllegalActionError | None = None,
    ) -> None:
        super().__init__(message)
        self.deal = deal
        self.index = index
        self.cause = cause


def _cards(mask: int) -> list[str]:
    return [str(c) for c in cards_of(mask)]


def record(game: Game) -> dict[str, Any]:
    """The JSON-safe record of ``game`` so far (finished deals plus the one in progress)."""
    deals: list[dict[str, Any]] = []
    for log in game._logs:
        deals.append(
            {
                "number": log.number,
                "dealer": log.dealer,
                "hands": [_cards(m) for m in log.hands],
                "talon": _cards(log.talon),
                "actions": [{"seat": s, "action": str(a)} for s, a in log.actions],
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
    rec["deals"] = deals
    rec["result"] = game.result.to_dict() if game.result is not None else None
    return rec


def _get(d: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(d, Mapping) or key not in d:
        raise ReplayError(f"{where}: missing key {key!r}")
    return d[key]


def replay(rec: Mapping[str, Any]) -> Game:
    """Rebuild the game of a record, checking each action and each stored score.

    Raises :class:`ReplayError` naming the first action refused (wrapping its
    ``IllegalActionError``, with the deal number and action index) or the first stored
    figure (dealer, deltas, scores, result) that the rules do not reproduce.
    """
    if not isinstance(rec, Mapping):
        raise ReplayError(f"a record is a JSON object, got {type(rec).__name__}")
    fmt = rec.get("format", RECORD_FORMAT)
    if fmt != RECORD_FORMAT:
        raise ReplayError(f"format: expected {RECORD_FORMAT!r}, got {fmt!r}")
    rs = _get(rec, "ruleset", "record")
    try:
        ruleset = load_ruleset_value(rs)
    except RulesetError as e:
        raise ReplayError(f"ruleset: {e}") from e
    seed = _get(rec, "seed", "record")
    players = _get(rec, "players", "record")
    deals = _get(rec, "deals", "record")
    if not isinstance(deals, Sequence):
        raise ReplayError("deals: expected a list")
    explicit: dict[int, tuple[Any, Any]] = {}
    for i, d in enumerate(deals):
        if isinstance(d, Mapping) and "hands" in d and "talon" in d:
            num = d.get("number", i)
            explicit[num] = (d["hands"], d["talon"])
    try:
        start = rec.get("start") or {}
        if not isinstance(start, Mapping):
            raise ReplayError("start: expected an object with scores and barrel")
        game = Game.new(
            ruleset,
            seed,
            players,
            deals=explicit,
            scores=start.get("scores"),
            barrel=start.get("barrel"),
        )
    except (ValueError, TypeError, CardParseError) as e:
        raise ReplayError(f"cannot start the match: {e}") from e
    for i, d in enumerate(deals):
        where = f"deal {i}"
        num = d.get("number", i) if isinstance(d, Mapping) else i
        if num != i:
            raise ReplayError(f"{where}: numbered {num}, expected {i}", deal=i)
        if game.is_over:
            raise ReplayError(f"{where}: the match was already over", deal=i)
        if "dealer" in d and d["dealer"] != game.dealer:
            raise ReplayError(
                f"{where}: dealer is {game.dealer}, the record says {d['dealer']}", deal=i
            )
        actions = _get(d, "actions", where)
        for j, entry in enumerate(actions):
            text = _get(entry, "action", f"{where}, action {j}")
            seat = _get(entry, "seat", f"{where}, action {j}")
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
            try:
                game.apply(action, seat=seat)
            except IllegalActionError as e:
                raise ReplayError(
                    f"{where}, action {j} (seat {seat}: {text}) refused: {e}",
                    deal=i,
                    index=j,
                    cause=e,
                ) from e
        if "deltas" in d or "scores" in d:
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
    # A referee that placed forfeiters last keeps the rules' own result as "rules_result".
    stored = rec.get("rules_result") or rec.get("result")
    if stored is not None:
        if game.result is None:
            raise ReplayError("result: the record has a result but the match is not over")
        mine_d = game.result.to_dict()
        for key in ("scores", "places", "shortfalls", "winner", "deals"):
            if key in stored and stored[key] != mine_d[key]:
                raise ReplayError(f"result: {key} is {mine_d[key]}, the record says {stored[key]}")
    return game


def load_ruleset_value(value: Any) -> Ruleset:
    """A ruleset as a record stores it: a full dict, or a preset name."""
    if isinstance(value, str):
        from engine.rules import PRESETS

        if value in PRESETS:
            return PRESETS[value]
        raise RulesetError("preset", f"unknown preset {value!r}")
    return Ruleset.from_dict(value)
