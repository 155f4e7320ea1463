"""`arena-bot try --records`: records that say who chose each action, named unambiguously.

Defects (limits round 56):

* its records had no ``by`` / ``failed`` on their actions, which an arena's record
  has (docs/record-format.md): a move the bot failed (it raised, or answered no action:
  its client's fallback, ``"by": "bot", "failed": true`` in an arena), the referee's
  fallback after an illegal answer (``"by": "fallback"``) and a forced move read as the
  bot's own, and `arena replay` could not mark them. They say it now, as an arena's record
  of the same match does, action for action;
* a negative ``--seed`` named its matches and their files ``local--1-0`` (a dash too many:
  split at its dashes, a seed "" and a rotation 1); a negative seed is written ``minus1``
  now: ``local-minus1-0.json``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena_main
from engine import PRESETS, Pass, Phase, replay
from sdk import Bot, PlayerView
from sdk.bot import Action
from sdk.cli import main as arena_bot_main
from sdk.local import arena_record, play_local
from tests.support.harness import play_sdk_match


class Erratic(Bot):
    """Answers from the view alone (the same in an arena, where the SDK may ask ahead, and
    here): raises at its first bid of an even deal, answers ``None`` with three cards left
    and an illegal pass with five cards left in deal 1; the first legal action otherwise."""

    def act(self, view: PlayerView) -> Action:
        own_bids = sum(1 for seat, _ in view.bids if seat == view.seat)
        if view.phase is Phase.BIDDING and view.deal_number % 2 == 0 and own_bids == 0:
            raise RuntimeError("boom")
        if view.phase is Phase.PLAYING and view.deal_number == 0 and len(view.hand) == 3:
            return None  # type: ignore[return-value]  # (no action: the SDK's fallback)
        if view.phase is Phase.PLAYING and view.deal_number == 0 and len(view.hand) == 5:
            return Pass()  # illegal while playing: the referee's fallback, a strike
        return view.legal_actions[0]


def _said(record: dict[str, Any]) -> list[tuple[int, str, str, bool]]:
    return [
        (a["seat"], a["action"], a["by"], a.get("failed", False))
        for d in record["deals"]
        for a in d["actions"]
    ]


def test_a_local_record_says_who_chose_each_action_as_the_arenas_record_does() -> None:
    arena = play_sdk_match(Erratic, max_deals=2, incidents=True)
    rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
    local = arena_record(play_local([Erratic] * 3, rules, 9, names=["ann", "bob", "cid"]))
    said = _said(local)
    assert said == _said(arena)
    # every kind is there: the bot's own, forced, the referee's fallback, a failed decision
    assert {(by, failed) for _, _, by, failed in said} == {
        ("bot", False),
        ("bot", True),
        ("forced", False),
        ("fallback", False),
    }
    # no times: two runs of one seed write the same records (tests/sdk/test_author_round36.py)
    assert not any("ms" in a for d in local["deals"] for a in d["actions"])
    kinds = sorted(i["kind"] for i in local["incidents"])
    assert kinds == sorted(i["kind"] for i in arena["incidents"])
    replay(local)  # the marks are checked: fallbacks and strikes pair, forced is forced


def _try(tmp_path: Path, bot: str, *args: str, code: int = 0) -> list[str]:
    """Run `arena-bot try BOT --records DIR ARGS` (``code``: its exit code: 1 when BOT had
    incidents); the names of the files written."""
    recs = tmp_path / "recs"
    r = CliRunner().invoke(
        arena_bot_main, ["try", bot, "--vs", "random", "--records", str(recs), *args]
    )
    assert r.exit_code == code, r.output
    return sorted(p.name for p in recs.iterdir())


def test_try_records_carry_by_and_failed_and_arena_replay_checks_them(tmp_path: Path) -> None:
    names = _try(tmp_path, f"{__file__}:Erratic", "-n", "3", "--max-deals", "2", code=1)
    assert names == ["local-0-0.json", "local-0-1.json", "local-0-2.json"]
    for name in names:
        path = tmp_path / "recs" / name
        rec = json.loads(path.read_text(encoding="utf-8"))
        actions = [a for d in rec["deals"] for a in d["actions"]]
        assert all(a["by"] in ("bot", "forced", "fallback") for a in actions), name
        failed = [a for a in actions if a.get("failed")]
        errors = [i for i in rec["incidents"] if i["kind"] == "bot_error"]
        assert failed and len(failed) == len(errors), name
        assert sum(a["by"] == "fallback" for a in actions) == sum(
            i["kind"] == "illegal" for i in rec["incidents"]
        )
        r = CliRunner().invoke(arena_main, ["replay", "--check", str(path)])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(arena_main, ["replay", str(path)])
        assert r.exit_code == 0 and "(fallback of the bot's client: its decision failed)" in (
            r.output
        ), r.output


@pytest.mark.parametrize(
    ("seed", "ids"),
    [
        ("-1", ["local-0-0", "local-0-1", "local-0-2", "local-minus1-0", "local-minus1-1",
                "local-minus1-2"]),
        ("-10", ["local-minus10-0", "local-minus10-1", "local-minus10-2", "local-minus9-0",
                 "local-minus9-1", "local-minus9-2"]),
    ],
)  # fmt: skip
def test_a_negative_seed_names_its_records_without_a_double_dash(
    tmp_path: Path, seed: str, ids: list[str]
) -> None:
    names = _try(tmp_path, "random", "-n", "6", "--seed", seed, "--max-deals", "1")
    assert names == [f"{i}.json" for i in ids]
    assert not any("--" in n for n in names)


def test_play_local_tells_its_bots_the_same_id() -> None:
    seen: list[str] = []

    class Tells(Bot):
        def act(self, view: PlayerView) -> Action:
            seen.append(self.match_id)
            return view.legal_actions[0]

    play_local([Tells] * 3, "classic", -3, max_deals=1)
    play_local([Tells] * 3, "classic", 3, max_deals=1)
    assert sorted(set(seen)) == ["local-3", "local-minus3"]
