"""Hostile bots in real tournaments beside honest bots (tests/hostile/hostile_bot.py).

Each test runs the real tournament runner — referee, gRPC on a loopback port, one process
per bot — with three honest bots (h1, h2, h3) and one hostile bot ``x``: 24 matches (every
table in its six seatings), six of them honest-only. For every hostile kind it checks:

- the referee stays up: all 24 matches are played and recorded, none fails, and
  ``GetInfo`` answers after the stream attacks;
- no honest bot's result changes: each honest-only match equals the engine-only
  simulation of honest play from its seed (``common.simulate``); no honest seat has an
  incident or a forfeit in any match; a forfeiting ``x`` places below every honest seat;
- honest timings are unaffected: no honest timeout, and the honest decision times stay near
  those of an all-honest baseline run;
- the hostile bot gets a clear error: a ``DecisionRejected`` naming the incident, with a
  message, its strikes and the forfeit, or a gRPC status with details for stream attacks.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from common import (
    HONEST,
    Run,
    bot_entry,
    check_common,
    make_config,
    run,
    simulate,
)
from hostile_bot import KINDS, Bot

from arena.bench.grpc_baseline import percentile

STRIKE_KINDS = {"illegal-card": "illegal", "not-held": "illegal", "off-step": "illegal",
                "malformed": "malformed", "silent": "timeout", "late": "timeout"}  # fmt: skip
NO_STRIKE_KINDS = {"stale", "other-seat", "replay"}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The same tournament with an honest fourth bot: the timings to compare with."""
    tmp = tmp_path_factory.mktemp("baseline")
    r = run(make_config(tmp, {"x": bot_entry("honest")}, tid="baseline"))
    check_common(r, set())
    return r


def _kind_for(mode: str, match_id: str) -> str:
    class A:
        pass

    a = A()
    a.mode = mode  # type: ignore[attr-defined]
    a.max_seconds = 1  # type: ignore[attr-defined]
    return Bot(a).kind_for(match_id)  # type: ignore[arg-type]


def _check_timings(r: Run, baseline: Run) -> None:
    ms, base = r.honest_ms(), baseline.honest_ms()
    p50, p99 = percentile(ms, 0.5), percentile(ms, 0.99)
    b50, b99 = percentile(base, 0.5), percentile(base, 0.99)
    print(f"honest decision ms: p50 {p50:.0f} p99 {p99:.0f} (baseline p50 {b50:.0f} p99 {b99:.0f})")
    # What "unaffected" must mean on a shared, noisy 2-core machine: no honest decision
    # comes anywhere near its deadline (check_common already asserts no honest incident).
    # The figures above are for reading; make soak and arena bench measure latency properly.
    deadline = r.cfg.deadlines.decision_ms
    assert p50 <= max(b50 + 100, deadline / 4), (p50, b50)
    assert p99 <= max(5 * b99, b99 + 500, deadline / 2), (p99, b99)


def _check_decision_run(r: Run, mode: str) -> Counter[str]:
    check_common(r, {"x"})
    seen: Counter[str] = Counter()
    for _, seats, rec in r.records:
        if "x" not in seats:
            continue
        x = seats.index("x")
        kind = _kind_for(mode, rec["match_id"])
        kinds = Counter(i["kind"] for i in rec["incidents"] if i["seat"] == x)
        seen.update(kinds)
        if kind in STRIKE_KINDS:
            assert kinds[STRIKE_KINDS[kind]] == 3, (kind, kinds)  # three strikes ...
            assert rec["forfeits"] == [x] and kinds["forfeit"] == 1  # ... and out
        else:
            assert kind in NO_STRIKE_KINDS
            assert set(kinds) <= {"wrong_request"} and kinds["wrong_request"] > 0, kinds
            assert rec["forfeits"] == []
            # a refused answer changes nothing: the match is the honest one
            want = simulate(r.cfg.ruleset, rec["seed"], tuple(seats))
            assert rec["result"]["scores"] == list(want.scores), (kind, rec["match_id"])
    rejected = [e for e in r.log_events("x") if e["event"] == "rejected"]
    assert rejected, "the hostile bot was told"
    for e in rejected:
        assert e["message"] and e["incident"] != "INCIDENT_UNSPECIFIED"
        assert e["allowed"] == 3 and e["strikes"] <= 3
    return seen


def test_decision_hostility_in_a_tournament(tmp_path: Path, baseline: Run) -> None:
    """Illegal cards, cards not held, bids off the step, malformed actions, stale and
    other seats' request ids, replays and out-of-turn answers, silence, late answers."""
    r = run(make_config(tmp_path, {"x": bot_entry("decisions")}))
    seen = _check_decision_run(r, "decisions")
    for kind in ("illegal", "malformed", "timeout", "wrong_request", "forfeit"):
        assert seen[kind] > 0, seen
    _check_timings(r, baseline)
    print(f"decision hostility: incidents {dict(seen)}; {r.elapsed_s:.1f} s")


def test_stream_attacks_in_a_tournament(tmp_path: Path, baseline: Run) -> None:
    """Garbage and oversized messages, missing/wrong token, no Hello, the token used twice
    at once, 300 streams opened at once, a flood of 5000 decisions, a disconnect mid-trick
    and a reconnect — from a bot that also plays its seats."""
    # x holds its answers while its attacks run (up to its time bank), so the tournament
    # cannot end before they do
    r = run(make_config(tmp_path, {"x": bot_entry("streams")}, time_bank_ms=60_000))
    check_common(r, {"x"})
    ev = r.log_events("x")
    attacks = {e["what"]: e for e in ev if e["event"] == "attack"}
    assert attacks["garbage"]["code"] == "INVALID_ARGUMENT"
    assert "pars" in attacks["garbage"]["details"].lower()  # says it could not parse
    assert attacks["oversized"]["code"] == "RESOURCE_EXHAUSTED"
    assert attacks["missing-token"]["code"] == "UNAUTHENTICATED"
    assert "missing token" in attacks["missing-token"]["details"]
    assert attacks["wrong-token"]["code"] == "UNAUTHENTICATED"
    assert attacks["no-hello"]["code"] == "INVALID_ARGUMENT"
    assert attacks["token-twice"]["code"] == "ALREADY_EXISTS"
    codes = dict(kv.split(":") for kv in attacks["many-streams"]["code"].split(","))
    assert "OK" not in codes and "NO-ANSWER" not in codes, codes  # every one refused, at once
    # (INVALID_ARGUMENT: a stream of the valid token still without its Hello a second after
    # another one of the token came, taken for dead.)
    clear = sum(int(codes.get(c, 0)) for c in ("ALREADY_EXISTS", "UNAUTHENTICATED",
                                                "INVALID_ARGUMENT"))  # fmt: skip
    # A few streams of the burst get INTERNAL "Internal error from Core" (reported): allowed,
    # but the bulk must carry the referee's own clear status.
    assert clear >= 290, (codes, [e for e in ev if e["event"] == "odd-status"][:3])
    assert attacks["flood"]["count"] == 5000
    assert attacks["after-attacks-getinfo"]["code"] == "OK"
    assert sum(1 for e in ev if e["event"] == "welcome") >= 2, "dropped mid-trick, came back"
    assert any(e["event"] == "dropping" for e in ev)
    flood_rejections = [e for e in ev if e["event"] == "rejected" and e["match_id"] == "x"]
    assert flood_rejections and all(e["incident"] == "INCIDENT_WRONG_REQUEST"
                                    for e in flood_rejections)  # fmt: skip
    incidents = r.incidents()
    assert incidents[("x", "disconnect")] >= 1
    assert incidents[("x", "forfeit")] == 0, "back within the grace period: no forfeit"
    _check_timings(r, baseline)
    print(f"stream attacks: {len(flood_rejections)} flood rejections seen; incidents "
          f"{dict(incidents)}; {r.elapsed_s:.1f} s")  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_each_hostile_kind_alone(tmp_path: Path, kind: str, baseline: Run) -> None:
    r = run(make_config(tmp_path, {"x": bot_entry(kind)}, tid=f"k-{kind}"))
    seen = _check_decision_run(r, kind)
    # late answers that arrive after the fallback was played are refused as stale
    assert set(seen) <= {STRIKE_KINDS.get(kind, "wrong_request"), "forfeit", "wrong_request"}
    _check_timings(r, baseline)


def test_honest_names_are_the_honest_bots() -> None:
    assert HONEST == ("h1", "h2", "h3") and len(KINDS) == 9
