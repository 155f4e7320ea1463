"""Mutation review, round 4: tests for the consolidation since 45fcb08 (arena/deadlines.py,
``engine.game.cap_of``, ``bots._dds.rule_options``, ``arena.render.plural`` and
``changed_cards``, ``--set`` keys read as TOML, the human seat's 1001 texts, the replay's
dealer row) that a plausible bug in it (a mutation) left passing. Each asserts behaviour
the code promises."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena.ratings import DEFAULT_DRAW_PROBABILITY
from arena.render import changed_cards, plural, render_record
from arena.tournament.config import (
    ConfigError,
    TournamentConfig,
    apply_overrides,
    load_config,
    parse_config,
)
from bots._dds import rule_options
from engine import PRESETS, Card, Game
from tests.arena.test_tournament_config import BASE


def _text(rec: dict) -> str:  # type: ignore[type-arg]
    console = Console(record=True, width=200)
    console.print(render_record(rec))
    return console.export_text()


def _set_error(tmp_path: Path, *overrides: str) -> ConfigError:
    p = tmp_path / "t.toml"
    p.write_text(BASE, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(p, overrides)
    return info.value


# ----------------------------------------------------------------------------- arena replay


def test_a_4_player_dealer_off_the_barrel_scores_the_talon_while_another_seat_sits_on_it() -> None:
    """With the barrel on, only a dealer who is himself on it scores none of the talon: the
    dealer of a deal where another player sits on the barrel is said to score it."""
    rules = dataclasses.replace(PRESETS["1001-4p"], barrel=True, name="1001-4p-barrel")
    g = Game.new(rules, 5, ["ann", "bob", "cid", "dan"], dealer=0, scores=[0, 880, 0, 0],
                 barrel=[0, 2, 0, 0])  # fmt: skip
    worth = g.talon_score
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    assert g.deal_results[0].deltas[0] == worth
    first = _text(g.record()).split("Deal 2")[0]
    assert re.search(rf"^ann \(0\)\s+sits out \(scores the talon: {worth}", first, re.M), first
    assert "on the barrel: the talon" not in first
    # and the one on the barrel, dealing (seat 2), is said to score none of it
    g = Game.new(rules, 5, ["ann", "bob", "cid", "dan"], dealer=2, scores=[0, 0, 880, 0],
                 barrel=[0, 0, 2, 0])  # fmt: skip
    worth = g.talon_score
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    first = _text(g.record()).split("Deal 2")[0]
    said = rf"^cid \(2\)\s+sits out \(on the barrel: the talon \({worth}\) is not scored\)"
    assert re.search(said, first, re.M)


def test_a_made_deal_is_green_and_a_failed_one_yellow_in_the_replay() -> None:
    """The outcome line's colour tells a made contract from the rest at a glance."""
    import random

    for seed in range(50):
        rng = random.Random(seed)
        g = Game.new("classic", seed, ["ann", "bob", "cid"])
        while g.deal_number < 4 and g.result is None:
            g.apply_trusted(rng.choice(g.legal_actions()))
        outcomes = {r.outcome for r in g.deal_results}
        if "made" in outcomes and len(outcomes) > 1:
            break  # (a deal made and one not)
    console = Console(record=True, width=200, force_terminal=True, color_system="standard")
    console.print(render_record(g.record()))
    out = console.export_text(styles=True)
    assert "made" in outcomes and len(outcomes) > 1, outcomes
    for outcome in outcomes:
        word = outcome.replace("_", " ")
        colour = "32" if outcome == "made" else "33"
        assert re.search(rf"\x1b\[{colour}m{word}\b", out), (outcome, out)


def test_plural_counts_zero_as_many() -> None:
    """`0 deals`, `0 matches` (a series interrupted before its first match ended)."""
    assert plural(0, "deal") == "0 deals"
    assert plural(0, "match") == "0 matches"
    assert plural(1, "match") == "1 match"


def test_a_changed_record_names_a_text_seed_as_text() -> None:
    """The seed is quoted as the record holds it: seed "42" (a string) deals other cards
    than seed 42, and the message must not make them look alike."""
    said = changed_cards({"match_id": "m", "seed": "42"}, [0, 2])
    assert said is not None and "seed '42' deals" in said and "deal(s) 1, 3" in said
    said = changed_cards({"match_id": "m", "seed": 42}, [1])
    assert said is not None and "seed 42 deals" in said


# ----------------------------------------------------------------------------- --set keys


def test_a_set_key_holding_a_delete_character_is_refused_saying_so(tmp_path: Path) -> None:
    """DEL (0x7f) is a control character as the ones below 0x20: the key is refused as
    holding one, not read as an odd bot name."""
    e = _set_error(tmp_path, "bots.a\x7fb.command=x")
    assert e.key == "--set" and "control character" in e.message, e.message


def test_set_splits_a_key_that_is_no_toml_at_its_dots_around_spaces() -> None:
    """`bots.my bot . x=2` is not TOML (a space in a bare key) and is split at its dots; the
    spaces around a dot are no part of a name, as TOML's own dotted keys have it."""
    assert apply_overrides({}, ["bots.my bot . x=2"]) == {"bots": {"my bot": {"x": 2}}}


def test_the_hint_for_a_key_set_inside_a_bots_string_keeps_every_part(tmp_path: Path) -> None:
    """A bot given as a string (`a = "random"`) and a key set inside it: the hint to set the
    table whole keeps the bundled bot and the key as the user meant it, ready to paste."""
    # a key named "bot" deeper down is not the bot's `bot`
    e = _set_error(tmp_path, "bots.a.env.bot=1")
    assert e.message.endswith("""set it whole: --set 'bots.a={bot = "random", env.bot = 1}'"""), (
        e.message
    )
    # a part holding a dot stays quoted
    e = _set_error(tmp_path, 'bots.a.env."X.Y"=1')
    assert e.message.endswith("""set it whole: --set 'bots.a={bot = "random", env."X.Y" = 1}'"""), (
        e.message
    )
    # the bot's `bot` in single quotes: the hint writes it in double ones (it sits between
    # the shell's single quotes)
    e = _set_error(tmp_path, "bots.a.bot='pimc'")
    assert e.message.endswith("""set it whole: --set 'bots.a="pimc"'"""), e.message


def test_an_unknown_table_made_by_a_quoted_set_key_is_said_to_come_from_it(
    tmp_path: Path,
) -> None:
    """`--set '"dedlines".decision_ms=5'` makes the table `dedlines`, which the file does
    not have: the error says which --set made it, whatever the quoting of its key."""
    e = _set_error(tmp_path, '"dedlines".decision_ms=5')
    assert e.key == "dedlines" and "unknown key" in e.message, e.message
    assert e.message.endswith("""(from --set "dedlines".decision_ms=5, not from the file)"""), (
        e.message
    )


def test_a_config_built_in_code_rates_draws_as_a_file_without_ratings() -> None:
    """`TournamentConfig`'s own default draw probability is the one a config file without
    `[ratings]` gets: the ratings' default."""
    (field,) = (f for f in dataclasses.fields(TournamentConfig) if f.name == "draw_probability")
    cfg = parse_config({"ruleset": "classic", "bots": dict.fromkeys("abc", "random")})
    assert field.default == cfg.draw_probability == DEFAULT_DRAW_PROBABILITY


# ----------------------------------------------------------------------------- bots


@pytest.mark.parametrize("flip", ["must_beat", "marriage_needs_trick", "ace_marriage"])
def test_the_searching_bots_solve_under_the_tables_rules(flip: str) -> None:
    """The double-dummy solver of the counting and PIMC bots is given each option it
    models as the ruleset has it, so a house rule changes what the bots search."""
    base = PRESETS["classic"]
    changed: dict[str, Any] = {flip: not getattr(base, flip)}
    rules = dataclasses.replace(base, **changed)
    options = rule_options(rules)
    assert options == {
        "must_beat": rules.must_beat,
        "marriage_needs_trick": rules.marriage_needs_trick,
        "ace_marriage": rules.ace_marriage,
    }
    assert options[flip] != rule_options(base)[flip]  # type: ignore[literal-required]


def test_the_heuristic_chance_of_a_take_is_the_normal_law() -> None:
    """`p_normal` (the heuristic's model and the searching bots' prior): a take predicted
    one spread above the amount reaches it 84% of the time, one below 16%, level 50%; and
    `p_make` uses the spread it is given, its own when given none."""
    from bots.heuristic import HeuristicBot, p_normal

    assert p_normal(100, 100, 10) == 0.5
    assert p_normal(110, 100, 10) == pytest.approx(0.8413, abs=1e-4)
    assert p_normal(90, 100, 10) == pytest.approx(0.1587, abs=1e-4)
    assert p_normal(120, 100, 10) == pytest.approx(0.9772, abs=1e-4)
    bot = HeuristicBot()
    assert bot.p_make(110, 100, 10) == pytest.approx(0.8413, abs=1e-4)
    wide = bot.take_sigma
    assert bot.p_make(100 + wide, 100) == pytest.approx(0.8413, abs=1e-4)


def test_pimc_samples_keep_a_bidder_who_bid_exactly_his_cap() -> None:
    """A bid of 160 proves marriages worth 40: a sampled hand holding just K♠ Q♠ (cap 160)
    is one the bidder may hold, and is kept (only a bid above the cap is impossible)."""
    from bots.pimc import _bid_accept
    from engine import Bid, observe, parse_cards
    from engine.tables import CARDS
    from sdk.sampling import SampledDeal

    strong = parse_cards("KS QS AS 10S AC 10C AD")
    rest = [c for c in CARDS if c not in strong]
    hands = [rest[:7], strong, rest[7:14]]
    g = Game.new("classic", 5, ["a", "b", "c"], dealer=2,
                 deals={0: (hands, tuple(rest[14:17]))})  # fmt: skip
    assert g.to_act == 1  # (first hand, seat 0, is committed: second hand speaks first)
    g.apply(Bid(160), seat=1)
    accept = _bid_accept(observe(g, 2))
    assert accept is not None

    def deal(first: Sequence[Card]) -> SampledDeal:
        others = [c for c in CARDS if c not in first]
        hs = (tuple(others[:7]), tuple(first), tuple(others[7:14]))
        return SampledDeal(hs, tuple(others[14:17]), tuple(sum(1 << c for c in h) for h in hs),
                           sum(1 << c for c in others[14:17]))  # fmt: skip

    assert accept(deal(strong))  # cap 160: may be his
    assert not accept(deal(parse_cards("JS QS AS 10S AC 10C AD")))  # cap 120: cannot be


def test_pimc_bids_on_the_heuristic_prior_when_it_has_no_samples() -> None:
    """With no sample searched the PIMC bot's chance to make the bid is the heuristic's
    prior alone: a hand predicted well above the bid is bid, one predicted below passed."""
    from bots.heuristic import HeuristicBot, p_normal
    from bots.pimc import PimcBot
    from engine import Bid, Pass, observe

    seen = set()
    for seed in range(60):
        g = Game.new("classic", seed, ["a", "b", "c"])
        g.apply(g.legal_actions()[-1] if Pass() in g.legal_actions() else Bid(100))
        seat = g.to_act
        assert seat is not None
        view = observe(g, seat)
        bids = [a for a in view.legal_actions if isinstance(a, Bid)]
        if not bids or Pass() not in view.legal_actions:
            continue
        pred = HeuristicBot().bid_estimate(view) + HeuristicBot.take_offset
        p = p_normal(pred, bids[0].amount, HeuristicBot.take_sigma)
        if 0.3 < p < 0.9:
            continue  # (near the threshold: either is fair)
        bot = PimcBot(samples=0)
        bot.delegate = frozenset()  # (the auction is the counting bot's by default)
        action = bot.act(view)
        assert isinstance(action, Bid) == (p >= 0.9), (seed, pred, action)
        seen.add(p >= 0.9)
    assert seen == {True, False}


# ----------------------------------------------------------------------------- referee


def test_waiting_for_bots_returns_the_missing_after_the_timeout_given_and_at_once_if_none() -> None:
    """`wait_for_bots` waits the timeout it is given (not the config's 30 s) and names the
    bots still not connected; with nobody to wait for it returns at once."""
    from arena.referee import Referee, RefereeConfig

    async def main() -> tuple[list[str], float, list[str]]:
        ref = Referee(RefereeConfig(join_timeout_s=3600.0))
        ref.add_bot("x", "tok-x")
        loop = asyncio.get_running_loop()
        t = loop.time()
        missing = await ref.wait_for_bots(["x"], 0.3)
        waited = loop.time() - t
        none = await ref.wait_for_bots([], 3600.0)
        return missing, waited, none

    # Its own 0.3 s, not the config's hour; with nobody to wait for, not the hour it is
    # given either: waiting for either hour would run into this bound, which is far from
    # anything a busy machine's pauses add to 0.3 s (a bound of 4 s on "at once" was not).
    missing, waited, none = asyncio.run(asyncio.wait_for(main(), 120))
    assert missing == ["x"] and waited >= 0.25, waited
    assert none == []


def test_a_referee_timeout_names_the_decision_time_and_the_bank_it_waited() -> None:
    """The incident of a timeout says how long the referee waited and of what: the decision
    time and the time bank the seat had left (`arena.deadlines.timeout_words`): all of it,
    when its earlier answers came within the decision time (`arena.deadlines.bank_left`)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "support"))
    from harness import attach_in_process  # type: ignore[import-not-found]

    from arena.referee import Referee, RefereeConfig
    from arena.v1 import arena_pb2 as pb

    async def main() -> dict:  # type: ignore[type-arg]
        ref = Referee(RefereeConfig(decision_ms=600, time_bank_ms=400, max_strikes=1000))
        asked = {"x": 0}

        def answer(bot: str, r: pb.DecisionRequest) -> None:
            if bot == "x":
                asked["x"] += 1
                if asked["x"] == 4:
                    return  # (its fourth decision: never answered; the three before at once)
            action = r.view.legal_actions[0]
            decision = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action)
            ref.on_decision(ref.session(bot), decision)

        attach_in_process(ref, ("a", "b", "x"), answer)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("m1", rules, 7, ["a", "b", "x"])

    for _ in range(10):
        rec = asyncio.run(main())
        # Every answer but x's fourth is given at once: one the referee measured at half the
        # decision time or more (it took of x's bank), or read past its deadline (refused, a
        # wrong_request after its timeout), was held up by a pause of this process (CI:
        # hundreds of ms): again.
        answered = [a["ms"] for d in rec["deals"] for a in d["actions"] if a["by"] == "bot"]
        refused = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
        if max(answered) < 300 and not refused:
            break
    timeouts = [i for i in rec["incidents"] if i["kind"] == "timeout"]
    assert len(timeouts) == 1, rec["incidents"]
    detail = timeouts[0]["detail"]
    assert detail.startswith("no decision within 1000 ms (600 ms + 400 ms of time bank); "), detail


def test_an_ace_marriage_goes_on_the_wire_worth_200() -> None:
    """A bot reads a declared ace marriage's value from the view message: 200."""
    from arena.protocol import view_to_pb
    from engine import observe
    from engine.actions import Play

    for seed in range(200):
        g = Game.new("1001", seed, ["a", "b", "c"])
        while g.phase.name != "OVER" and g.deal_number < 1:
            legal = g.legal_actions()
            aces = [a for a in legal if isinstance(a, Play) and a.declare and a.card.points == 11]
            g.apply_trusted(aces[0] if aces else legal[0])
            if any(suit is None for _, suit in g.marriages):
                m = view_to_pb(observe(g, 0))
                (value,) = [mm.value for mm in m.marriages if mm.suit == 0]
                assert value == 200
                return
    pytest.fail("no ace marriage in the sampled games (the seeds are fixed)")


def test_arena_serve_and_the_referee_default_to_one_time_bank() -> None:
    """`arena serve` without --time-bank-ms gives each seat the referee's default bank (and
    a local match timed by --decision-ms alone rehearses the same): 10 s."""
    from arena.cli.serve import serve
    from arena.referee import RefereeConfig

    (option,) = [p for p in serve.params if p.name == "time_bank_ms"]
    assert option.default == RefereeConfig().time_bank_ms == 10_000


def test_the_tournament_announces_a_cap_of_one_deal_in_the_singular() -> None:
    """`arena tournament` says "max 1 deal each", as every other count of deals."""
    from arena.cli.tournament import _announce

    cfg = parse_config({"ruleset": "classic", "bots": dict.fromkeys("abc", "random"),
                        "max_deals": 1})  # fmt: skip
    console = Console(record=True, width=300)
    _announce(cfg, console)
    text = console.export_text()
    assert "(max 1 deal each)" in text, text


def test_pimc_names_the_lowest_contract_on_a_hopeless_prior_when_it_has_no_samples() -> None:
    """With no sample searched the PIMC bot's chance to make each contract is the
    heuristic's prior alone: a hand predicted well short of the bid names the bid itself
    (or concedes), never a higher contract."""
    import random

    from bots.heuristic import HeuristicBot, estimate_take, p_normal
    from bots.pimc import PimcBot
    from engine import Concede, Contract, Phase, observe

    seen = 0
    for seed in range(80):
        rng = random.Random(seed)
        g = Game.new("classic", seed, ["a", "b", "c"])
        while g.phase is not Phase.CONTRACT:
            g.apply_trusted(rng.choice(g.legal_actions()))
        assert g.to_act is not None
        view = observe(g, g.to_act)
        levels = sorted(a.amount for a in view.legal_actions if isinstance(a, Contract))
        pred = estimate_take(view.hand, view.ruleset) + 3 * HeuristicBot.take_offset
        if len(levels) < 2 or p_normal(pred, levels[0], HeuristicBot.take_sigma) > 0.2:
            continue
        bot = PimcBot(samples=0)
        bot.delegate = frozenset()  # (the contract is the counting bot's by default)
        action = bot.act(view)
        assert action in (Contract(levels[0]), Concede()), (seed, pred, levels, action)
        seen += 1
    assert seen >= 3


def test_a_time_bank_of_zero_is_a_valid_tournament_deadline() -> None:
    """`[deadlines] time_bank_ms = 0` (no bank: every decision within decision_ms) is
    allowed, as `arena serve --time-bank-ms 0` is."""
    cfg = parse_config({"ruleset": "classic", "bots": dict.fromkeys("abc", "random"),
                        "deadlines": {"decision_ms": 500, "time_bank_ms": 0}})  # fmt: skip
    assert (cfg.deadlines.decision_ms, cfg.deadlines.time_bank_ms) == (500, 0)


def test_a_bad_bot_in_a_list_set_by_set_is_said_to_come_from_it(tmp_path: Path) -> None:
    """`--set 'bots=["random", 1, "pimc"]'`: the error names `bots[1]` and the --set that
    put it there."""
    e = _set_error(tmp_path, 'bots=["random", 1, "pimc"]')
    assert e.key == "bots[1]", e.key
    assert e.message.endswith("""(from --set bots=["random", 1, "pimc"], not from the file)"""), (
        e.message
    )


def test_the_counting_bot_searches_under_the_tables_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counting bot's endgame search is given the table's house rules (here `must_beat`
    on, `marriage_needs_trick` off), not the solver's defaults."""
    import bots._dds
    import bots.counting
    from bots.counting import CountingBot
    from engine import observe

    seen: list[dict[str, Any]] = []
    real = bots._dds.Solver

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(bots.counting, "Solver", spy)
    rules = dataclasses.replace(PRESETS["classic"], must_beat=True, marriage_needs_trick=False,
                                name="house")  # fmt: skip
    bot = CountingBot()
    for seed in range(20):
        g = Game.new(rules, seed, ["a", "b", "c"])
        while g.deal_number < 1 and not seen:
            assert g.to_act is not None
            g.apply(bot.act(observe(g, g.to_act)), seat=g.to_act)
        if seen:
            break
    assert seen, "the counting bot never searched"
    assert seen[0]["must_beat"] is True and seen[0]["marriage_needs_trick"] is False
    assert seen[0]["ace_marriage"] == rules.ace_marriage
