"""Round 52: every rule option end to end, through the referee, the SDK and the record.

Matches are played by SDK bots over gRPC against a real referee (in-process, port 0), with
rulesets given each way a user gives them: a preset name, a ruleset ``.toml`` file, an inline
table of a tournament config, a ``--set`` of one. For each match:

- each decision's view (legal actions included) the SDK hands the bot is the engine's
  ``observe`` of that seat, replayed from the record (so no other seat's card, and the talon
  only where the rules show it);
- the record stores the ruleset, ``arena replay --check`` reproduces it, and ``arena
  replay``'s header, the web's replay and ``describe_ruleset`` say the same rules;
- each bot is told each move, the talon (its cards only where it may see them), each
  deal's result and the match's as the engine has them;
- the engine alone, playing the record's actions, ends the match where the referee did,
  with the same result (two cases are chosen to end by the target, one from the barrel),
  and the oracle of round 51 (``tests/engine/oracle_round51.py``) agrees with every deal.

A move legal only under another value of an option is refused naming the rule, a strike and
the fallback, as docs/referee.md says; ``arena-bot try --ruleset`` (local play) is checked
the same way through its records and ``play_local``. A wide sweep of random rulesets is
marked slow.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from arena.cli.replay import replay as replay_cmd
from arena.render import rules_description
from arena.tournament.config import apply_overrides, parse_config
from arena.web.replay import match_summary
from bots.heuristic import HeuristicBot
from engine import (
    PRESETS,
    Bid,
    Card,
    Concede,
    DealResult,
    GameResult,
    Phase,
    Play,
    PlayerView,
    Rank,
    Ruleset,
    ThrowIn,
    load_ruleset,
    observe,
    parse_action,
    public_action,
)
from engine.record import start_game
from engine.rules import describe_ruleset, describe_run
from engine.view import visible_talon
from sdk import play_local
from tests.engine.oracle_round51 import check_record
from tests.support.harness import play_sdk_match

ROOT = Path(__file__).resolve().parents[2]


class _Seen(HeuristicBot):
    """The bundled heuristic bot (it makes contracts: matches reach the barrel and the
    target), keeping every view it is asked with and everything it is told."""

    views: ClassVar[dict[str, list[PlayerView]]] = defaultdict(list)
    ends: ClassVar[dict[str, list[Any]]] = defaultdict(list)
    told: ClassVar[dict[str, list[Any]]] = defaultdict(list)

    def on_match_start(self, view: PlayerView) -> None:
        super().on_match_start(view)
        self.mine = _Seen.views[view.players[view.seat]]

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        _Seen.told[view.players[view.seat]].append(("talon", declarer, talon))

    def on_action(self, view: PlayerView, seat: int, action: Any) -> None:
        _Seen.told[view.players[view.seat]].append((seat, action))

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        _Seen.ends[view.players[view.seat]].append(result)

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        _Seen.ends[view.players[view.seat]].append(result)
        _Seen.ends[view.players[view.seat]].append(view)

    def act(self, view: PlayerView) -> Any:
        self.mine.append(view)
        return super().act(view)


def _asked_views(rec: dict[str, Any]) -> tuple[dict[str, list[PlayerView]], dict[str, list[Any]]]:
    """Each seat's views of the decisions it was asked (a move the ruleset does not force
    on it, or every move under ``ask_forced``), and what it is told of each move and of
    the talon taken (its cards where the seat may see them), replayed from the record by
    the engine."""
    game = start_game(rec)
    names = rec["players"]
    out: dict[str, list[PlayerView]] = defaultdict(list)
    told: dict[str, list[Any]] = defaultdict(list)
    for deal in rec["deals"]:
        for entry in deal["actions"]:
            seat = entry["seat"]
            # (a local record, arena-bot try's, says no "by": a move the rules force is
            # not asked unless ask_forced)
            forced = len(game.legal_actions()) == 1 and not game.ruleset.ask_forced
            if entry.get("by", "forced" if forced else "bot") != "forced":
                out[names[seat]].append(observe(game, seat))
            action = parse_action(entry["action"])
            bidding = game.phase is Phase.BIDDING
            game.apply(action, seat=seat)
            for s, n in enumerate(names):
                told[n].append((seat, public_action(action, seat, s)))
            if bidding and game.phase is not Phase.BIDDING and game.deal_number == deal["number"]:
                for s, n in enumerate(names):
                    told[n].append(("talon", game.declarer, visible_talon(game, s)))
    return out, told


NAMES = ("ann", "bob", "cid", "dan")


def _clear() -> None:
    for kept in (_Seen.views, _Seen.ends, _Seen.told):
        kept.clear()


def _play(rules: Ruleset, seed: int = 3, max_deals: int = 0) -> dict[str, Any]:
    _clear()
    rec = play_sdk_match(_Seen, max_deals, seed=seed, rules=rules)
    return rec


def _check(rec: dict[str, Any], rules: Ruleset, tmp: Path, *, seen: bool = True) -> None:
    """``seen``: the bots were _Seen's, whose views are checked too."""
    # The record stores the ruleset the match was played under, option by option.
    assert rec["ruleset"] == rules.to_dict()
    if seen:
        # What each bot was asked with is the engine's view of its seat.
        asked, told_moves = _asked_views(rec)
        assert set(asked) == set(_Seen.views) == set(rec["players"])
        for name, views in asked.items():
            assert _Seen.views[name] == views, name
        assert told_moves == _Seen.told
    # The engine alone, on the record's actions, ends where the referee ended.
    game = start_game(rec)
    for deal in rec["deals"]:
        for entry in deal["actions"]:
            assert not game.is_over
            game.apply(parse_action(entry["action"]), seat=entry["seat"])
    assert game.is_over
    assert game.result is not None and game.result.to_dict() == rec["result"]
    assert len(rec["deals"]) == game.result.deals
    # Each bot is told each deal's result and the match's, as the engine has them.
    if seen:
        told = {n: [*game.deal_results, game.result, observe(game, s)]
                for s, n in enumerate(rec["players"])}  # fmt: skip
        assert told == _Seen.ends
    # An oracle written from RULES.md alone agrees with every deal and the end.
    assert check_record(rec, rec["ruleset"]) == len(rec["deals"])
    # `arena replay --check` reproduces it, and the header, the web's replay and the
    # ruleset's own description say the same rules.
    path = tmp / "m1.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    said = describe_run(rules, players=False)  # (with the deal cap, as the leaderboard)
    assert rules_description(rec) == said
    assert match_summary("m1", rec)["ruleset_description"] == said
    check = CliRunner().invoke(replay_cmd, ["--check", str(path)])
    assert check.exit_code == 0, check.output
    shown = CliRunner().invoke(replay_cmd, [str(path)])
    assert shown.exit_code == 0, shown.output
    assert f"Match: {said}," in shown.output


def _inline(table: str, bots: int = 3) -> Ruleset:
    """The ruleset of a tournament config holding ``ruleset = {table}`` inline."""
    names = "".join(f'[bots.b{i}]\nbot = "random"\n' for i in range(bots))
    return _config(f"ruleset = {table}\nmax_deals = 5\n{names}").ruleset


def _config(text: str, overrides: tuple[str, ...] = ()) -> Any:
    import tomllib

    data = apply_overrides(tomllib.loads(text), list(overrides))
    return parse_config(data, source="t.toml", base_dir=ROOT)


#: Each option at a value other than its preset's, given as a user gives it: a preset
#: name, a ruleset file (the shipped ones and one of the test's), a tournament config's
#: inline table, a ``--set`` of one. (The tournament's own deal cap, 20, is lowered.)
CASES: dict[str, Any] = {
    "preset classic": lambda tmp: load_ruleset("classic"),
    "preset 1001": lambda tmp: load_ruleset("1001"),
    "preset 1001 at four": lambda tmp: load_ruleset("1001", players=4),
    "file house-penalty": lambda tmp: load_ruleset(ROOT / "rulesets/house-penalty.toml"),
    "file tournament-1001 at four": lambda tmp: load_ruleset(
        ROOT / "rulesets/tournament-1001.toml", players=4
    ),
    "file barrel to 400": lambda tmp: load_ruleset(
        _file(
            tmp,
            "low.toml",
            """\
preset = "classic"
name = "low"
target = 400
barrel_at = 250
barrel_deals = 2
barrel_penalty = 0
barrel_mode = "one"
max_deals = 30
""",
        )
    ),
    "inline last hand": lambda tmp: _inline(
        '{ preset = "classic", first_hand_commits = false, all_pass = "last_hand", '
        "throw_in_bonus = 30, bid_step = 10, opening_bid = 60, max_deals = 8 }"
    ),
    "inline 1001 at four": lambda tmp: _inline(
        '{ preset = "1001", players = 4, nines_talon_value = 0, concede = "free", '
        'concede_pays = "half", rounding = 10, target = 400 }',
        bots=4,
    ),
    "inline strict play": lambda tmp: _inline(
        '{ preset = "1001", must_beat = true, marriage_needs_trick = false, '
        "ace_marriage = false, talon_visible = false, ask_forced = true, target = 300 }"
    ),
    "inline no concession": lambda tmp: _inline(
        '{ preset = "classic", ace_marriage_counts_for_bid = false, concede = "off", rounding = 5 }'
    ),
    "set barrel at four": lambda tmp: (
        _config(
            "".join(f'[bots.b{i}]\nbot = "random"\n' for i in range(4)),
            (
                'ruleset={preset = "1001", players = 4, barrel = true, barrel_mode = "one", '
                "target = 500, barrel_at = 400}",
                "max_deals=5",
            ),
        ).ruleset
    ),
    "set preset 1001": lambda tmp: (
        _config(
            "".join(f'[bots.b{i}]\nbot = "random"\n' for i in range(3)), ("ruleset=1001",)
        ).ruleset
    ),
}


def _file(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


#: The seed of a case that ends by its target (the barrel's: a win from it sets the
#: score to the target), else seed 5.
ENDS = {"file barrel to 400": (3, "target"), "inline strict play": (7, "target")}

#: The cases of the default run (a match each); the others are marked slow.
QUICK = ("file barrel to 400", "inline strict play", "set barrel at four")


@pytest.mark.parametrize(
    "case", [c if c in QUICK else pytest.param(c, marks=pytest.mark.slow) for c in CASES]
)
def test_each_option_reaches_the_bot_the_record_and_the_replay(case: str, tmp_path: Path) -> None:
    rules = CASES[case](tmp_path)
    seed, reason = ENDS.get(case, (5, None))
    rec = _play(rules, seed=seed, max_deals=0 if rules.max_deals else 6)
    if reason is not None:  # (the case is the end it plays to: asserted, not assumed)
        assert rec["result"]["reason"] == reason, rec["result"]
        assert max(rec["result"]["scores"]) == rules.target, rec["result"]
    if not rules.max_deals:
        rules = dataclasses.replace(rules, max_deals=6)
    _check(rec, rules, tmp_path)


def _lower_bid(view: PlayerView) -> Any:
    """A raise of 5 (legal at bid_step = 5) where the ruleset's step is larger."""
    bids = [a.amount for a in view.legal_actions if isinstance(a, Bid)]
    return Bid(min(bids) - 5) if bids and min(bids) - 5 > (view.bid or 0) else None


def _not_beating(view: PlayerView) -> Any:
    """A card of the led suit that does not beat the trick (legal without must_beat)."""
    if view.phase is not Phase.PLAYING or not view.trick:
        return None
    led = view.trick[0][1].suit
    legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
    other = [c for c in view.hand if c.suit is led and c not in legal]
    return Play(other[0]) if other else None


def _early_marriage(view: PlayerView) -> Any:
    """A marriage on a lead before the declarer took a trick (legal with
    marriage_needs_trick = false)."""
    if view.phase is not Phase.PLAYING or view.trick:
        return None
    for c in view.hand:
        declare = Play(c, declare=True)
        partner = Card.of(Rank.QUEEN, c.suit)
        if c.rank is Rank.KING and partner in view.hand and declare not in view.legal_actions:
            return declare
    return None


def _concede(view: PlayerView) -> Any:
    return Concede() if view.phase is Phase.CONTRACT else None


def _throw_in(view: PlayerView) -> Any:
    return ThrowIn() if view.phase is Phase.CONTRACT else None


def _aces_bid(view: PlayerView) -> Any:
    """A bid up to the cap the four aces held would give where they count (+200)."""
    bids = [a.amount for a in view.legal_actions if isinstance(a, Bid)]
    aces = sum(c.rank is Rank.ACE for c in view.hand) == 4
    return Bid(max(bids) + 200) if bids and aces else None


#: A move legal only under another value of an option, the ruleset refusing it, the words
#: the refusal names the rule with, and a seed whose deals offer the case.
WRONG: dict[str, tuple[Any, Ruleset, str, int]] = {
    "bid_step": (_lower_bid, Ruleset.from_dict({"preset": "1001", "bid_step": 10}),
                 "multiple of 10", 5),
    "must_beat": (_not_beating, Ruleset.from_dict({"preset": "classic", "must_beat": True}),
                  "must_beat: you must beat", 1),
    "marriage_needs_trick": (_early_marriage, load_ruleset("classic"), "trick", 5),
    "concede off": (_concede, Ruleset.from_dict({"preset": "classic", "concede": "off"}),
                    "conceding is off", 5),
    "throw-in of last_hand": (_throw_in, load_ruleset("classic"), "all_pass = first_hand", 5),
    # (seed 863: seat 1, the first to speak, is dealt the four aces)
    "ace_marriage_counts_for_bid": (
        _aces_bid,
        Ruleset.from_dict({"preset": "classic", "ace_marriage_counts_for_bid": False}),
        "(120): the four aces count nothing towards it (ace_marriage_counts_for_bid = false)", 863),
    "ace_marriage": (
        _aces_bid, Ruleset.from_dict({"preset": "classic", "ace_marriage": False}),
        "(120): the four aces count nothing towards it (ace_marriage = false)", 863),
}  # fmt: skip


class _Wrong(_Seen):
    """Once a match, the move ``wrong`` finds (refused under the ruleset); else as _Seen."""

    wrong: ClassVar[Any] = None
    tried: ClassVar[list[tuple[str, Any]]] = []

    def act(self, view: PlayerView) -> Any:
        action = type(self).wrong(view)
        if action is not None and not _Wrong.tried:
            self.mine.append(view)
            _Wrong.tried.append((view.players[view.seat], action))
            return action
        return super().act(view)


@pytest.mark.parametrize(
    "option",
    [o if o.startswith("ace") else pytest.param(o, marks=pytest.mark.slow) for o in WRONG],
)
def test_a_move_of_another_option_value_is_refused_with_the_rule(
    option: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    find, rules, words, seed = WRONG[option]
    _Wrong.wrong, _Wrong.tried = staticmethod(find), []
    _clear()
    caplog.set_level(logging.WARNING, logger="sdk")
    rec = play_sdk_match(_Wrong, 12, seed=seed, rules=rules, incidents=True)
    assert _Wrong.tried, f"no deal offered the case of {option}"
    [(name, action)] = _Wrong.tried
    seat = rec["players"].index(name)
    [incident] = rec["incidents"]
    assert (incident["kind"], incident["seat"]) == ("illegal", seat), incident
    assert str(action) in incident["detail"] and words in incident["detail"], incident
    said = [r.getMessage() for r in caplog.records if "decision rejected" in r.getMessage()]
    assert len(said) == 1 and words in said[0] and "strike 1 of 3" in said[0], said
    # The fallback stands in the record; it replays, as do the views each seat was shown.
    fallbacks = [e for d in rec["deals"] for e in d["actions"] if e.get("by") == "fallback"]
    assert [e["seat"] for e in fallbacks] == [seat]
    _check(rec, dataclasses.replace(rules, max_deals=12), tmp_path)


def _random_ruleset(rng: random.Random) -> Ruleset:
    """A ruleset of random options (every one of them drawn), valid by construction."""
    players = rng.choice((3, 4))
    step = rng.choice((5, 10, 20))
    barrel = rng.random() < 0.5
    target = rng.choice((200, 300, 500, 1000))
    options: dict[str, Any] = {
        "preset": rng.choice(("classic", "1001")),
        "players": players,
        "target": target,
        "bid_step": step,
        "opening_bid": step * rng.randint(1, 120 // step),
        "first_hand_commits": rng.random() < 0.5,
        "ace_marriage_counts_for_bid": rng.random() < 0.5,
        "talon_visible": rng.random() < 0.5,
        "concede": rng.choice(("free", "penalty", "off")),
        "concede_pays": rng.choice(("half", "none")),
        "must_beat": rng.random() < 0.5,
        "marriage_needs_trick": rng.random() < 0.5,
        "ace_marriage": rng.random() < 0.5,
        "rounding": rng.choice((1, 5, 10)),
        "barrel": barrel,
        "all_pass": rng.choice(("first_hand", "last_hand")),
        "throw_in_bonus": rng.choice((0, 50, 35)),
        "ask_forced": rng.random() < 0.3,
        "max_deals": rng.randint(3, 10),
    }
    if barrel:
        options |= {
            "barrel_at": rng.choice((target // 2, target - 20)),
            "barrel_deals": rng.randint(1, 3),
            "barrel_penalty": rng.choice((0, 60, 120)),
            "barrel_mode": rng.choice(("many", "one")),
        }
    if players == 4:
        options["nines_talon_value"] = rng.choice((0, 100, 150))
    return Ruleset.from_dict(options, unused=False)


@pytest.mark.slow
@pytest.mark.parametrize("k", range(24))
def test_random_rulesets_end_to_end(k: int, tmp_path: Path) -> None:
    rules = _random_ruleset(random.Random(f"round52:{k}"))
    _check(_play(rules, seed=k), rules, tmp_path)


@pytest.mark.parametrize(
    ("file", "vs"),
    [
        ("rulesets/tournament-1001.toml", ["random"] * 3),
        ("rulesets/house-penalty.toml", ["random"]),
    ],
)
def test_try_plays_a_ruleset_file_that_its_records_and_table_name(
    file: str, vs: list[str], tmp_path: Path
) -> None:
    """``arena-bot try --ruleset FILE`` (local play, no referee): each record holds the
    ruleset sized by the table, with try's deal cap, replays, and says the rules its table
    said; each view the SDK's local play gives a bot is the engine's (play_local, below)."""
    from sdk.cli import main as arena_bot

    args = ["try", "random", "--vs", ",".join(vs), "--ruleset", str(ROOT / file)]
    run = CliRunner().invoke(arena_bot, [*args, "-n", "2", "--seed", "4", "--max-deals", "3",
                                         "--records", str(tmp_path / "recs")])  # fmt: skip
    assert run.exit_code == 0, run.output
    rules = dataclasses.replace(load_ruleset(ROOT / file, players=len(vs) + 1), max_deals=3)
    said = describe_ruleset(rules)
    assert f"ruleset {said}, seed 4" in " ".join(run.output.split())
    records = sorted((tmp_path / "recs").glob("*.json"))
    assert len(records) == 2
    for path in records:
        _check(json.loads(path.read_text(encoding="utf-8")), rules, tmp_path, seen=False)
    _clear()
    match = play_local([_Seen] * rules.players, rules, seed=4, names=NAMES[: rules.players])
    _check(match.record, rules, tmp_path)


def test_try_with_three_vs_plays_the_4_player_game_of_1001(tmp_path: Path) -> None:
    """docs/writing-a-bot.md: "`--ruleset 1001` with three `--vs` opponents" is the 4-player
    game. Written as three ``--vs``, click kept the last alone: a 3-player 1001 was played,
    that opponent repeated, the two others never named."""
    from sdk.cli import main as arena_bot

    run = CliRunner().invoke(arena_bot, [
        "try", "random", "--vs", "heuristic", "--vs", "counting,random", "--ruleset", "1001",
        "-n", "1", "--max-deals", "1", "--records", str(tmp_path),
    ])  # fmt: skip
    assert run.exit_code == 0, run.output
    assert "ruleset 1001-4p, seed 0" in " ".join(run.output.split())
    [path] = tmp_path.glob("*.json")
    rec = json.loads(path.read_text(encoding="utf-8"))
    assert rec["players"] == ["random", "heuristic", "counting", "random#1"]
    assert rec["ruleset"] == dataclasses.replace(PRESETS["1001-4p"], max_deals=1).to_dict()
