"""Round 42: every refusal names the rule actually broken (a property test over random states).

RULES.md "Bad input is part of the rules": every action is checked against the state; each
is refused with an error that names the action, the rule broken and the legal actions, and
the state is unchanged. ``test_rules_errors.py`` pins each kind of refusal once; here random
matches under drawn rulesets (the presets, ``rulesets/*.toml``, random overrides of every
option of ``Ruleset``, 3 and 4 players, 1001) are stopped at random states and offered a
universe of candidate actions: every ``Bid`` from 0 to 400 in steps of 1, ``Pass``, every
``Give`` of every card to every seat (the declarer himself, the 4-player dealer who sits out,
seats that do not exist), every ``Contract`` from 0 to 400, ``Concede``, ``ThrowIn``, every
``Play`` of every card with and without ``declare``, and actions sent by another seat than
``to_act``. For each one :func:`classify` (below, written from RULES.md and the
Interpretations of docs/rules-engine.md, not from ``engine/game.py``) says whether it is
legal and, if not, the *first* rule it breaks. Then:

- a legal action is in ``legal_actions()`` and ``apply`` accepts it;
- an illegal one is not in ``legal_actions()``, ``apply`` refuses it with exactly the error
  type of that rule (no other exception), whose ``rule`` names that rule and no other rule
  of its family, whose message is ``illegal action 'ACTION' by seat S: RULE; legal: ...``
  with the legal actions, and the state is unchanged.

The order in which the rules are checked (where an action breaks several, the first one is
named):

1. the match is over (``GameOverError``): no seat may act at all;
2. the wrong player (``NotYourTurnError``; ``AlreadyPassedError`` for a seat that passed in
   this deal's auction, RULES.md §2 "a pass is final"): the legal actions are those of the
   seat to act (docs/rules-engine.md: ``apply(action, seat)`` "also checks that the action
   comes from the seat to act"), so what another seat sends is refused whatever it is;
3. the wrong phase (``WrongPhaseError``): the kinds of each phase are RULES.md §2-§8's:
   bidding Bid/Pass; passing Give, and the 1001 throw-in (docs: "ThrowIn is among the
   legal actions of the passing phase ... and of the contract phase"); contract
   Contract/Concede/ThrowIn (a concession is "in place of naming the contract (after
   passing the two cards)"); playing Play;
4. within the phase, the rule text's own order, and a rule of the ruleset ("off") before a
   rule of the situation:

   - a bid (§2): a multiple of the step; at least the opening bid / a raise of at least the
     step over the standing bid; not above 120 + the marriages in his own (dealt) hand;
   - a give (§4): a card in his hand; to an opponent (not himself, not a seat out of the
     deal); one card to each opponent;
   - a contract (§5): a multiple of 5; at least the winning bid; at most the greater of
     the bid and 120 + the marriages in his 8 cards;
   - a concession (§6): ``concede = off`` (no concession in the ruleset); the last hand
     after an all-pass may throw in, not concede (docs' Interpretations);
   - a throw-in (1001): no throw-in in the ruleset (``all_pass`` is not ``last_hand``);
     only the last hand who took the talon after an all-pass;
   - a play (§7-§9): a card in his hand; then a declaration: only with a K, Q (marriage)
     or ace (ace marriage); the ace marriage off in the ruleset (§9, an option: without it
     an ace declares nothing, wherever it is played); only with a lead ("a player who
     leads"); the partner in hand / all four aces; a trick won first (for the ace
     marriage, won with a card other than an ace); then the trick: follow suit, else trump,
     then ``must_beat``.

Found by this test and fixed in ``engine/game.py`` (each with a direct test below): an ace
declared when following under ``ace_marriage = false`` was told it must be a lead, not that
the ace marriage is off.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Any

import pytest

from engine import (
    AlreadyPassedError,
    Bid,
    BidError,
    CardNotHeldError,
    Concede,
    ConcedeError,
    Contract,
    ContractError,
    Game,
    GameOverError,
    Give,
    GiveError,
    IllegalActionError,
    MarriageError,
    NotYourTurnError,
    Pass,
    Play,
    PlayError,
    Ruleset,
    ThrowIn,
    ThrowInError,
    WrongPhaseError,
)
from engine.cards import Card, Suit
from tests.engine.test_oracle_round37 import craft_deal, draw_ruleset, draw_start
from tests.engine.test_rules_bidding import BASE, BASE_TALON
from tests.engine.test_rules_marriages import H_TALON, H

from .conftest import assert_refused, rules, table

# Cards (RULES.md "Cards"): card i is suit i // 6 (♠ ♣ ♦ ♥), rank i % 6 (9 J Q K 10 A).
QUEEN, KING, ACE = 2, 3, 5
MARRIAGE = (40, 60, 80, 100)
RANK_ORDER = (0, 1, 2, 3, 4, 5)  # 9 J Q K 10 A: the index is the strength

UNIVERSE_STATIC: list[Any] = (
    [Pass(), Concede(), ThrowIn()]
    + [Bid(a) for a in range(0, 401)]
    + [Contract(a) for a in range(0, 401)]
    + [Play(Card(c), declare=d) for c in range(24) for d in (False, True)]
)  # fmt: skip


def universe(n: int) -> list[Any]:
    """Every candidate action: gives to every seat of the table and to seats that are not."""
    gives = [Give(Card(c), to) for c in range(24) for to in range(-1, n + 1)]
    return UNIVERSE_STATIC + gives


# ---------------------------------------------------------------------------------------
# The classifier, from the rule text.

#: The rules, each as (error type, a pattern its ``rule`` text must match). The pattern of
#: a rule is matched with the state's numbers filled in (``{...}``).
RULES: dict[str, tuple[type[IllegalActionError], str]] = {
    "over": (GameOverError, r"match is over"),
    "turn": (NotYourTurnError, r"seat {to_act}'s turn"),
    "passed": (AlreadyPassedError, r"passed and a pass is final"),
    "phase": (WrongPhaseError, r"not allowed in the {phase} phase"),
    "bid_step": (BidError, r"multiple of {step}\b"),
    "bid_low": (
        BidError, r"(raise the standing {standing} by at least {step}|opening bid is at least {lo})"
    ),
    "bid_cap": (BidError, r"above 120 \+ the marriages in his own hand \({cap}\)"),
    "contract_step": (ContractError, r"multiple of 5\b"),
    "contract_low": (ContractError, r"at least the winning bid {bid}\b"),
    "contract_cap": (ContractError, r"at most the greater of the bid and 120 \+ .*\({cap}\)"),
    "concede_off": (ConcedeError, r"conceding is off"),
    "concede_last_hand": (ConcedeError, r"last hand .* may throw in, not concede"),
    "throw_in_none": (ThrowInError, r"no throw-in in this ruleset"),
    "throw_in_not_last": (ThrowInError, r"only the last hand who took the talon after an all-pass"),
    "not_held": (CardNotHeldError, r"{card} is not in your hand"),
    "give_self": (GiveError, r"to yourself"),
    "give_not_opponent": (GiveError, r"seat {to} is not an opponent"),
    "give_twice": (GiveError, r"seat {to} already received a card"),
    "declare_rank": (MarriageError, r"only a K or Q .* or an ace .* can be declared"),
    "ace_off": (MarriageError, r"ace marriage is off"),
    "declare_not_lead": (MarriageError, r"only with a lead"),
    "ace_four": (MarriageError, r"all four aces"),
    "ace_trick": (MarriageError, r"trick won with a card other than an ace"),
    "partner": (MarriageError, r"needs its partner {partner}"),
    "marriage_trick": (MarriageError, r"only after winning a trick"),
    "follow": (PlayError, r"must follow suit {led}"),
    "trump": (PlayError, r"without {led} you must play a trump {trump}"),
    "beat": (PlayError, r"must_beat: you must beat the trick"),
}  # fmt: skip


#: The kinds of action of each phase (RULES.md §2-§8; the throw-in: docs' Interpretations).
PHASE_KINDS: dict[str, tuple[type, ...]] = {
    "bidding": (Bid, Pass),
    "passing": (Give, ThrowIn),
    "contract": (Contract, Concede, ThrowIn),
    "playing": (Play,),
}


def marriages_value(cards: set[int], r: Ruleset) -> int:
    """RULES.md §2: the marriages in a hand; the four aces count 200 if the ruleset says so."""
    v = sum(MARRIAGE[s] for s in range(4) if {s * 6 + QUEEN, s * 6 + KING} <= cards)
    if (
        r.ace_marriage
        and r.ace_marriage_counts_for_bid
        and {s * 6 + ACE for s in range(4)} <= cards
    ):
        v += 200
    return v


def beats(c: int, w: int, trump: int | None) -> bool:
    """RULES.md §7: does ``c`` beat the card ``w`` taking the trick so far?"""
    if c // 6 == w // 6:
        return c % 6 > w % 6
    return trump is not None and c // 6 == trump


def classify(game: Game, action: Any, seat: int | None) -> tuple[str | None, dict[str, Any]]:
    """``(None, {})`` for a legal action, else the first rule broken and the numbers its
    message must name. From RULES.md; the order is the module docstring's."""
    r = game.ruleset
    if game.is_over:
        return "over", {}
    to_act = game.to_act
    assert to_act is not None
    phase = str(game.phase)
    info: dict[str, Any] = {"to_act": to_act, "phase": phase}
    if seat is not None and seat != to_act:
        if phase == "bidding" and 0 <= seat < r.players and seat in game.passed:
            return "passed", info
        return "turn", info
    kinds = PHASE_KINDS[phase]
    if not isinstance(action, kinds):
        return "phase", info
    hand = {int(c) for c in game.hand(to_act)}
    if isinstance(action, Pass):
        return None, {}  # §2: any player to speak may pass
    if isinstance(action, Bid):
        # §2: the committed first hand holds the opening bid; otherwise nothing stands.
        standing = game.bid
        step = r.bid_step
        lo = standing + step if standing else r.opening_bid
        cap = 120 + marriages_value({int(c) for c in game.dealt_hands[to_act]}, r)
        info.update(step=step, standing=standing, lo=lo, cap=cap)
        if action.amount % step:
            return "bid_step", info
        if action.amount < lo:
            return "bid_low", info
        if action.amount > cap:
            return "bid_cap", info
        return None, {}
    if isinstance(action, ThrowIn):
        if r.all_pass != "last_hand":
            return "throw_in_none", info
        if not game.last_hand_take:
            return "throw_in_not_last", info
        return None, {}
    if isinstance(action, Give):
        c, to = int(action.card), action.to
        info.update(card=Card(c), to=to)
        if c not in hand:
            return "not_held", info
        if to == to_act:
            return "give_self", info
        if to not in game.active_seats:
            return "give_not_opponent", info
        if any(t == to for t, _ in game.gives):
            return "give_twice", info
        return None, {}
    if isinstance(action, Contract):
        bid = game.bid
        assert bid is not None
        cap = max(bid, 120 + marriages_value(hand, r))
        info.update(bid=bid, cap=cap)
        if action.amount % 5:
            return "contract_step", info
        if action.amount < bid:
            return "contract_low", info
        if action.amount > cap:
            return "contract_cap", info
        return None, {}
    if isinstance(action, Concede):
        if r.concede == "off":
            return "concede_off", info
        if game.last_hand_take:
            return "concede_last_hand", info
        return None, {}
    assert isinstance(action, Play)
    c = int(action.card)
    info.update(card=Card(c))
    if c not in hand:
        return "not_held", info
    trick = [int(x) for _, x in game.trick]
    tricks_won = [t for t in game.tricks if t.winner == to_act]
    if action.declare:
        rank = c % 6
        if rank not in (QUEEN, KING, ACE):
            return "declare_rank", info
        if rank == ACE and not r.ace_marriage:
            return "ace_off", info
        if trick:
            return "declare_not_lead", info
        if rank == ACE:
            if not {s * 6 + ACE for s in range(4)} <= hand:
                return "ace_four", info
            # §9: "once he has won a trick with a card other than an ace"
            won_nonace = any(int(dict(t.cards)[to_act]) % 6 != ACE for t in tricks_won)
            if not won_nonace:
                return "ace_trick", info
            return None, {}
        partner = c ^ 1  # Q (2) <-> K (3)
        info.update(partner=Card(partner))
        if partner not in hand:
            return "partner", info
        if r.marriage_needs_trick and not tricks_won:
            return "marriage_trick", info
        return None, {}
    if not trick:
        return None, {}  # §7: any card may be led
    led = trick[0] // 6
    trump = None if game.trump is None else int(game.trump)
    info.update(led=Suit(led), trump=None if trump is None else Suit(trump))
    best = trick[0]
    for x in trick[1:]:
        if beats(x, best, trump):
            best = x
    if any(x // 6 == led for x in hand):
        obliged = {x for x in hand if x // 6 == led}
        if c not in obliged:
            return "follow", info
    elif trump is not None and any(x // 6 == trump for x in hand):
        obliged = {x for x in hand if x // 6 == trump}
        if c not in obliged:
            return "trump", info
    else:
        return None, {}  # neither: any card
    if r.must_beat:
        # docs: among the obliged cards beat the card taking the trick, if one can
        beaters = {x for x in obliged if beats(x, best, trump)}
        if beaters and c not in beaters:
            return "beat", info
    return None, {}


# ---------------------------------------------------------------------------------------
# Checking the engine against it.


def fingerprint(game: Game) -> tuple[Any, ...]:
    """Every part of the full state a refusal could touch."""
    n = game.ruleset.players
    return (
        game.phase, game.to_act, game.deal_number, game.scores, game.barrel, game.is_over,
        tuple(game.hand_mask(s) for s in range(n)), game.talon, game.trick, game.tricks,
        game.marriages, game.gives, game.passed, game.bid, game.high_bidder, game.contract,
        game.trump, game.declarer, game.last_hand_take, game.actions,
        tuple(game.card_points(s) for s in range(n)),
        tuple(game.marriage_points(s) for s in range(n)), len(game.deal_results),
    )  # fmt: skip


def check_refusal(game: Game, action: Any, seat: int | None, legal: tuple[Any, ...]) -> str:
    """Apply a refused action; return "" or what is wrong with the refusal."""
    rule, info = classify(game, action, seat)
    assert rule is not None
    want_type, pattern = RULES[rule]
    before = (game.phase, game.to_act, len(game.actions), game.deal_number)
    try:
        game.apply(action, seat=seat)
    except IllegalActionError as e:
        err = e
    except Exception as e:  # any other exception is a finding
        return f"{action} by {seat}: crashed with {type(e).__name__}: {e}"
    else:
        return f"{action} by {seat}: accepted, but it breaks rule {rule!r}"
    if (game.phase, game.to_act, len(game.actions), game.deal_number) != before:
        return f"{action} by {seat}: refused but the state changed"
    if type(err) is not want_type:
        got = f"{type(err).__name__} ({err.rule})"
        return f"{action} by {seat}: {got}, want {want_type.__name__} ({rule})"
    want = pattern.format(**{k: re.escape(str(v)) for k, v in info.items()})
    if not re.search(want, err.rule):
        return f"{action} by {seat}: rule {err.rule!r} does not name {rule!r} ({want})"
    for other, (t, p) in RULES.items():
        # No other rule of the same kind of error is named beside it.
        if other != rule and t is want_type and "{" not in p and re.search(p, err.rule):
            return f"{action} by {seat}: rule {err.rule!r} also names {other!r}"
    if err.action is not action or err.legal != legal:
        return f"{action} by {seat}: the error's action or legal actions are wrong"
    sender = game.to_act if seat is None else seat
    legal_text = ", ".join(str(a) for a in legal) or "none (the match is over)"
    who = "" if sender is None else f" by seat {sender}"
    message = f"illegal action {str(action)!r}{who}: {err.rule}; legal: {legal_text}"
    if err.seat != sender or str(err) != message:
        return f"{action} by {seat}: message {str(err)!r}, want {message!r}"
    return ""


def probe_state(game: Game, rng: random.Random, counts: dict[str, int]) -> list[str]:
    """Offer the universe (and actions from other seats) at this state."""
    n = game.ruleset.players
    legal = game.legal_actions()
    before = fingerprint(game)
    problems: list[str] = []
    to_act = game.to_act
    acts = universe(n)
    # Every action of the phase's kinds; a sample of the others (each is a wrong phase, the
    # same refusal whatever its amount or card) to keep the run short.
    kinds = PHASE_KINDS.get(str(game.phase), ())
    mine = [a for a in acts if isinstance(a, kinds)]
    probes: list[tuple[Any, int | None]] = [(a, to_act) for a in mine]
    probes += [(a, to_act) for a in rng.sample(acts, 60)]
    # The same actions from the seat to act without naming it, and from every other seat.
    probes += [(a, None) for a in rng.sample(acts, 40)]
    others = [s for s in range(-1, n + 1) if s != to_act]
    probes += [(a, s) for s in others for a in list(legal[:2]) + rng.sample(acts, 6)]
    for action, seat in probes:
        rule, _ = classify(game, action, seat)
        in_legal = seat in (None, to_act) and any(
            a == action and type(a) is type(action) for a in legal
        )
        if rule is None:
            counts["legal"] = counts.get("legal", 0) + 1
            if not in_legal:
                problems.append(f"{action} by {seat}: legal by the rules, not in legal_actions()")
                continue
            g = game.clone()
            try:
                g.apply(action, seat=seat)
            except Exception as e:
                problems.append(f"{action} by {seat}: legal, refused: {e}")
            continue
        counts[rule] = counts.get(rule, 0) + 1
        if in_legal:
            problems.append(f"{action} by {seat}: in legal_actions() but breaks {rule!r}")
            continue
        problem = check_refusal(game, action, seat, legal)
        if problem:
            problems.append(problem)
    if fingerprint(game) != before or game.legal_actions() != legal:
        problems.append("the state changed after the refused actions")
    if game.is_over:
        return problems
    # Every legal action is accepted, and by the seat to act only.
    for action in legal:
        if classify(game, action, to_act)[0] is not None:
            problems.append(f"{action}: in legal_actions() but the rules refuse it")
    return problems


def choose(rng: random.Random, game: Game) -> Any:
    """A random legal action, weighted so that every phase and outcome is reached."""
    legal = game.legal_actions()
    phase = str(game.phase)
    if phase == "bidding":
        bids = [a for a in legal if isinstance(a, Bid)]
        if not bids or rng.random() < 0.6:  # (all-passes: the last hand's take)
            return Pass()
        return bids[0] if rng.random() < 0.6 else rng.choice(bids)
    if phase in ("passing", "contract"):
        special = [a for a in legal if isinstance(a, ThrowIn | Concede)]
        if special and rng.random() < 0.15:
            return rng.choice(special)
        rest = [a for a in legal if not isinstance(a, ThrowIn | Concede)]
        return rest[0] if phase == "contract" and rng.random() < 0.5 else rng.choice(rest)
    declares = [a for a in legal if a.declare]
    if declares and rng.random() < 0.7:
        return rng.choice(declares)
    return rng.choice(legal)


def run_match(seed: int, probe_rate: float, counts: dict[str, int]) -> list[str]:
    rng = random.Random(seed)
    r = draw_ruleset(rng)
    r = dataclasses.replace(r, max_deals=rng.choice((1, 2)))
    scores, barrel = draw_start(rng, r)
    dealer = rng.randrange(r.players)
    deals: dict[int, Any] = {}
    for k in range(r.max_deals):
        if rng.random() < 0.7:
            hands, talon = craft_deal(rng, r, (dealer + k) % r.players)
            deals[k] = ([[Card(c) for c in h] for h in hands], [Card(c) for c in talon])
    names = [f"p{i}" for i in range(r.players)]
    game = Game.new(
        r, seed, names, deals=deals, scores=scores, barrel=barrel if r.barrel else None,
        dealer=dealer,
    )  # fmt: skip
    while True:
        # Tricks hold the most rules (follow, trump, must_beat, marriages): probed the most.
        rate = 2 * probe_rate if str(game.phase) == "playing" else probe_rate
        if game.is_over or rng.random() < rate:
            problems = probe_state(game, rng, counts)
            if problems:
                return [f"seed {seed}, {r.to_dict()}, {game!r}:", *problems[:10]]
        if game.is_over:
            return []
        game.apply(choose(rng, game), seat=game.to_act)


def sweep(seeds: range, probe_rate: float) -> tuple[list[str], dict[str, int]]:
    counts: dict[str, int] = {}
    for seed in seeds:
        problems = run_match(seed, probe_rate, counts)
        if problems:
            return problems, counts
    return [], counts


def test_every_refusal_names_the_first_rule_broken() -> None:
    problems, counts = sweep(range(40), probe_rate=0.35)
    assert not problems, "\n".join(problems)
    # Every rule was met (the sweep is not vacuous).
    missed = [rule for rule in RULES if not counts.get(rule)]
    assert not missed, f"rules never probed: {missed} ({counts})"


@pytest.mark.slow
def test_every_refusal_names_the_first_rule_broken_large_sweep() -> None:
    problems, _ = sweep(range(100, 300), probe_rate=0.5)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------
# Direct tests: the corners where an action breaks two rules, and the fix.


def test_the_classifier_sees_a_wrong_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property test is not vacuous: an engine naming the wrong rule is caught."""
    from engine import game as game_module

    real = game_module.Game._refuse_play

    def swapped(self: Game, action: Any, seat: Any, legal: Any) -> None:
        try:
            real(self, action, seat, legal)
        except PlayError as e:
            if "follow suit" in e.rule:
                raise PlayError(action, seat, "this card is not allowed now", legal) from None
            raise

    monkeypatch.setattr(game_module.Game, "_refuse_play", swapped)
    problems, _ = sweep(range(3), probe_rate=0.35)
    assert problems and any("does not name 'follow'" in p for p in problems), problems


def _following_with_an_ace(**overrides: Any) -> Any:
    """Deal H (test_rules_marriages): F declares at 100 and leads A♠, S follows 9♠; D, void
    in ♠ and holding A♥, is to play."""
    t = table(rules(**overrides), H, H_TALON)
    t.act("S: pass", "D: pass", "give 9♦ to {S}", "give J♦ to {D}", "contract 100")
    t.act("F: play A♠", "S: play 9♠")
    assert t.game.to_act == t.D
    return t


def test_an_ace_declared_when_following_without_the_ace_marriage_is_told_it_is_off() -> None:
    """Found by the property test: under ``ace_marriage = false`` an ace declared when
    following was told "a marriage is declared only with a lead", as though leading it would
    do. RULES.md §9: the ace marriage is an option; off, an ace declares nothing anywhere."""
    t = _following_with_an_ace(ace_marriage=False)
    err = assert_refused(t.game, "play A♥ declare", seat=t.D, error=MarriageError)
    assert err.rule == "the ace marriage is off", err.rule
    assert "lead" not in err.rule


def test_an_ace_declared_when_following_with_the_ace_marriage_on_is_told_to_lead() -> None:
    # With the option on, the declaration's form comes first: it needs a lead.
    t = _following_with_an_ace()
    err = assert_refused(t.game, "play A♥ declare", seat=t.D, error=MarriageError)
    assert "only with a lead" in err.rule, err.rule


def test_a_bid_both_too_low_and_over_the_cap_is_told_too_low() -> None:
    """RULES.md §2's order: a raise of at least the step, then the cap. D (no marriage: cap
    120) facing a standing 125 bids 125: below the least raise (130) and over his cap."""
    t = table(rules(), BASE, BASE_TALON)
    t.act("S: bid 125")
    D = t.D
    assert t.game.to_act == D
    err = assert_refused(t.game, Bid(125), seat=D, error=BidError)
    assert "raise the standing 125 by at least 5" in err.rule, err.rule
    err = assert_refused(t.game, Bid(130), seat=D, error=BidError)
    assert "above 120 + the marriages in his own hand (120)" in err.rule, err.rule


def test_a_concession_by_the_last_hand_under_concede_off_is_told_it_is_off() -> None:
    """Both rules forbid it; the ruleset's rule (no concession at all) is named."""
    r = rules("1001", concede="off")
    t = table(r, BASE, BASE_TALON)
    t.act("F: pass", "S: pass")  # all before the last hand passed: he takes the talon
    assert t.game.last_hand_take
    g = t.game
    gives = [a for a in g.legal_actions() if isinstance(a, Give)]
    g.apply(gives[0])
    g.apply(next(a for a in g.legal_actions() if isinstance(a, Give)))
    assert str(g.phase) == "contract"
    err = assert_refused(g, Concede(), error=ConcedeError)
    assert err.rule == "conceding is off in this ruleset", err.rule
    t2 = table(rules("1001"), BASE, BASE_TALON).act("F: pass", "S: pass")
    g2 = t2.game
    for _ in range(2):
        g2.apply(next(a for a in g2.legal_actions() if isinstance(a, Give)))
    err = assert_refused(g2, Concede(), error=ConcedeError)
    assert "may throw in, not concede" in err.rule, err.rule


def test_a_card_not_held_given_to_himself_is_told_it_is_not_held() -> None:
    t = table(rules(), BASE, BASE_TALON).act("S: pass", "D: pass")
    F = t.F
    missing = next(c for c in Card if c not in t.game.hand(F))
    err = assert_refused(t.game, Give(missing, F), error=CardNotHeldError)
    assert f"{missing} is not in your hand" in err.rule


def test_another_seat_is_told_whose_turn_it_is_whatever_it_sends() -> None:
    """Wrong player before wrong phase: a play sent by another seat during the auction."""
    t = table(rules(), BASE, BASE_TALON)
    g = t.game
    other = next(s for s in range(3) if s != g.to_act)
    err = assert_refused(g, Play(Card.SA), seat=other, error=NotYourTurnError)
    assert type(err) is NotYourTurnError and f"seat {g.to_act}'s turn" in err.rule
