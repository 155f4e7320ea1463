"""Replay audit, round 37: what round 35 did not play (tests/arena/test_replay_audit_round35.py).

Real tournaments of every ruleset file in rulesets/ (classic-capped, house-penalty with its
penalty concessions and one seat on the barrel, tournament-1001 with the talon hidden) and of
four players with the barrel on (the dealer sitting out, on the barrel too), each stored
match cross-checked as round 35 does (the engine, `arena replay`, `--check`, the web replay,
deal by deal and trick by trick) and further: the barrel events of the web's deal result in
`arena replay`'s text, the sitter's row against the web's ``talon_score``, the web's
``ended`` against the text's, the talon hidden from the defenders' web views. A real
referee's match interrupted mid-deal (4 players). Each kind of edit to a real record named
by `--check` with where; the record alone (every other row and the out dir deleted) replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

from arena.web import MatchReplay
from tests.arena.test_replay_audit_round35 import (
    _BOTS,
    _cross_check,
    _random_match,
    _run,
    _tournament,
    _write,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena

ROOT = Path(__file__).parents[2]


def _deal_blocks(text: str) -> list[str]:
    return re.split(r"(?m)^Deal \d+ — ", text)[1:]


def _more_checks(mid: str, rec: dict[str, Any], db: Path) -> set[str]:
    """What round 35's cross-check leaves out, against the web replay's JSON: each deal's
    barrel events, the 4-player sitter's row and talon, how the match ended, the talon a
    ``talon_visible = false`` ruleset hides. What was seen, for the caller to require."""
    shown = _run("--db", str(db), mid)
    names, n = rec["players"], len(rec["players"])
    blocks = _deal_blocks(shown.stdout)
    web = MatchReplay(mid, rec)
    seen: set[str] = set()
    for k, d in enumerate(rec["deals"]):
        blk, page = blocks[k], web.deal(k)
        res = page["steps"][-1]["view"].get("result")
        for ev in res["events"] if res else ():
            named = re.sub(r"\bseat (\d+)", lambda m: names[int(m[1])], ev)
            assert named in blk, (mid, k, named)
            seen.add("barrel event")
        if n == 4:
            dl = d["dealer"]
            row = re.search(rf"(?m)^{names[dl]} \({dl}\)\s+sits out \((.*)\)$", blk)
            assert row, (mid, k, blk[:200])
            worth = page["steps"][0]["view"]["talon_score"]
            on_barrel = "on the barrel" in row[1]
            assert (f"the talon ({worth}) is not scored" if on_barrel else
                    f"scores the talon: {worth}") in row[1], (mid, k, row[1])  # fmt: skip
            seen.add("sitter on the barrel" if on_barrel else "sitter")
            if res and not on_barrel and not res["events"]:
                assert res["deltas"][dl] == worth, (mid, k)
        if not rec["ruleset"]["talon_visible"] and d["actions"]:
            last = page["steps"][-1]
            taker = page["summary"]["declarer"]
            if taker is not None and d["dealer"] != (taker + 1) % n:
                seat_views = web.deal(k, seat=(taker + 1) % n)["steps"]
                assert seat_views[-1]["view"]["talon"] is None, (mid, k)
                assert last["view"]["talon"] is not None
                seen.add("talon hidden")
    ended = web.summary["ended"]
    assert ended and f"ended: {ended}" in " ".join(shown.stdout.split()), (mid, ended)
    return seen


def test_every_ruleset_file_and_four_on_the_barrel_read_the_same_everywhere(
    tmp_path: Path,
) -> None:
    """Pinned (no defect found): every stored match of small real tournaments of each
    ruleset file in rulesets/ (a bot conceding under house-penalty's penalty), and of four
    players with the barrel on, replays in the engine, `--check`, `arena replay` and the
    web replay alike (round 35's cross-check), and the web's barrel events, sitter's talon,
    ending and hidden talon are what `arena replay` says; every row of the database but the
    matches' deleted, and the out dir too (the record is enough)."""
    bots = tmp_path / "bots.py"
    bots.write_text(_BOTS, encoding="utf-8")
    three = {"random": "random", "heuristic": "heuristic", "giver": f"{bots}:Giver"}
    four = tmp_path / "four.toml"
    four.write_text(
        'preset = "1001-4p"\nname = "four-barrel"\nbarrel = true\nbarrel_at = 200\n',
        encoding="utf-8",
    )
    matches = []
    for name, ruleset, who, deals in [
        ("cc", ROOT / "rulesets" / "classic-capped.toml", three, 3),
        ("hp", ROOT / "rulesets" / "house-penalty.toml", three, 5),
        ("t1", ROOT / "rulesets" / "tournament-1001.toml", three, 4),
        ("fb", four, {"random": "random", "h1": "heuristic", "h2": "heuristic", "h3": "heuristic"},
         10),
    ]:  # fmt: skip
        played = _tournament(tmp_path, name, str(ruleset), who, max_deals=deals)
        matches += played[::8] if name == "fb" else played[::3]
    shutil.rmtree(tmp_path / "out")
    for db in {db for _, _, db in matches}:
        con = sqlite3.connect(db)
        with con:
            for table in ("bots", "tournaments", "tournament_bots"):
                con.execute(f"DELETE FROM {table}")  # (fixed names)
        con.close()
    seen: set[str] = set()
    outcomes: set[str] = set()
    rulesets: set[str] = set()
    for mid, rec, db in matches:
        tricks, _, _ = _cross_check(mid, rec, db)
        assert tricks > 0 or rec["result"]["deals"] == 0
        seen |= _more_checks(mid, rec, db)
        outcomes |= {d.get("outcome") for d in rec["deals"]}
        rulesets.add(rec["ruleset"]["name"])
    assert rulesets == {"classic-capped", "house-penalty", "tournament-1001", "four-barrel"}
    assert {"made", "failed", "conceded"} <= outcomes, outcomes
    assert {"barrel event", "sitter", "sitter on the barrel", "talon hidden"} <= seen, seen


def test_a_real_match_interrupted_mid_deal_replays_and_says_so(tmp_path: Path) -> None:
    """Pinned (no defect found): a real referee's 4-player match cancelled in the middle
    of a deal (a shutdown) leaves a `.jsonl` whose `interrupted` record passes `--check`,
    which says where it stopped (deals from 0), `arena replay` shows every deal played up
    to the last trick and says it was interrupted (deals from 1), and the web replay gives
    the same tricks, its last deal unfinished and no ending."""
    names = ["ann", "bob", "cid", "dan"]

    async def main() -> None:
        async with arena(tmp_path, record_dir=tmp_path / "rec") as a:
            await a.bots(names)
            task = asyncio.create_task(a.referee.run_match("m-int", "1001-4p", 7, names))
            f = tmp_path / "rec" / "m-int.jsonl"
            while not f.exists() or f.read_text(encoding="utf-8").count('"action"') < 70:
                await asyncio.sleep(0.01)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(main())
    f = tmp_path / "rec" / "m-int.jsonl"
    last = json.loads(f.read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "interrupted"
    rec = last["record"]
    assert rec["interrupted"] is True and rec["result"] is None
    k = len(rec["deals"]) - 1
    check = _run("--check", str(f))
    assert check.exit_code == 0, check.output
    assert f"interrupted in deal {k + 1}: the referee was stopped" in check.output
    shown = _run(str(f))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert f"interrupted in deal {k + 1}: the referee was stopped" in text
    web = MatchReplay("m-int", rec)
    assert web.summary["ended"] is None
    assert web.summary["deals"][k]["outcome"] == "unfinished"
    blocks = _deal_blocks(shown.stdout)
    assert len(blocks) == len(rec["deals"])
    for j, blk in enumerate(blocks):
        rows = re.findall(r"(?m)^│ *\d+ │ (.*?) *│ \S+ *│ (\S*) *│$", blk)
        tricks = web.deal(j)["steps"][-1]["view"]["tricks"]
        assert len(rows) == len(tricks) + (j == k and bool(web.deal(j)["steps"][-1]["view"]
                                                            ["trick"]))  # fmt: skip
        for (cells, winner), tr in zip(rows, tricks, strict=False):
            assert [f"{names[c['seat']]} {c['card']}" for c in tr["cards"]] == [
                " ".join(p) for p in re.findall(r"(\S+) (\S+?)\*?(?=  |$)", cells)
            ]
            assert winner == names[tr["winner"]]
        worth = web.deal(j)["steps"][0]["view"]["talon_score"]
        assert f"sits out (scores the talon: {worth})" in blk, (j, worth)


def _edited(tmp_path: Path, rec: dict[str, Any], name: str, edit: Any) -> tuple[Any, Any]:
    r = copy.deepcopy(rec)
    edit(r)
    path = _write(tmp_path, r, f"{name}.json")
    return _run("--check", path), _run(path)


def test_each_kind_of_edit_to_a_real_record_is_named_with_where(tmp_path: Path) -> None:
    """Pinned (no defect found): a real house-penalty record edited — a card played, two
    plays swapped, a card moved between hands, a deal's score, a delta with its score, the
    result, the seed, a rule (concede, target), a deal removed, an action removed — is
    refused by `--check` (exit 1) naming the deal and action or figure, and `arena replay`
    shows it up to there, or whole with the difference on stderr (exit 1); a truncated
    file and a newer format are refused (exit 2) by both. No traceback anywhere."""
    bots = tmp_path / "bots.py"
    bots.write_text(_BOTS, encoding="utf-8")
    three = {"random": "random", "heuristic": "heuristic", "giver": f"{bots}:Giver"}
    ruleset = str(ROOT / "rulesets" / "house-penalty.toml")
    mid, rec, _ = _tournament(tmp_path, "e", ruleset, three, max_deals=4)[0]
    acts = rec["deals"][1]["actions"]
    plays = [i for i, a in enumerate(acts) if a["action"].startswith("play")]
    i = plays[4]
    other = rec["deals"][1]["hands"][(acts[i]["seat"] + 1) % 3][0]

    def swap(r: dict[str, Any]) -> None:
        a = r["deals"][1]["actions"]
        a[i], a[i + 1] = a[i + 1], a[i]

    def give(r: dict[str, Any]) -> None:
        h = r["deals"][1]["hands"]
        h[0][0], h[1][0] = h[1][0], h[0][0]

    cases: list[tuple[str, Any, int, str]] = [
        ("card", lambda r: r["deals"][1]["actions"][i].update(action=f"play {other}"), 1,
         f"Deal 2 (record deal 1), action {i} (seat {acts[i]['seat']}: play {other}) refused"),
        ("order", swap, 1, f"Deal 2 (record deal 1), action {i} (seat {acts[i + 1]['seat']}: "),
        ("hands", give, 1, "the hands and talon of deal(s) 2 are not the ones seed"),
        ("score", lambda r: r["deals"][1]["scores"].__setitem__(0, 7777), 1,
         "Deal 2 (record deal 1): scores are"),
        ("delta", lambda r: (r["deals"][1]["deltas"].__setitem__(0, 7777),
                             r["deals"][1]["scores"].__setitem__(0, 7777)), 1,
         "Deal 2 (record deal 1): deltas are"),
        ("result", lambda r: r["result"]["scores"].__setitem__(1, 7777), 1, "result: scores is"),
        ("seed", lambda r: r.update(seed=str(r["seed"]) + "1"), 1,
         "are not the ones seed"),
        ("concede", lambda r: r["ruleset"].update(concede="free"), 1, "deltas are"),
        ("target", lambda r: r["ruleset"].update(target=900), 1, "result: "),
        ("no deal", lambda r: r["deals"].pop(1), 1,
         "Deal 2 (record deal 1): numbered 2, expected 1"),
        ("no action", lambda r: r["deals"][1]["actions"].pop(i), 1,
         f"Deal 2 (record deal 1), action {i} "),
        ("newer", lambda r: r.update(format="thousand-arena/record/2"), 2,
         "written by a newer Thousand Arena"),
    ]  # fmt: skip
    for name, edit, code, said in cases:
        check, shown = _edited(tmp_path, rec, name, edit)
        assert check.exit_code == code, (name, check.output)
        assert said in check.output, (name, check.output)
        assert shown.exit_code == code, (name, shown.output)
        if code == 1:
            assert shown.stdout.startswith("Match: "), (name, shown.output[:200])
            assert "refused: Deal" in shown.stdout or "error: " in shown.stderr, name
    raw = json.dumps(rec, ensure_ascii=False)
    cut = tmp_path / "cut.json"
    cut.write_text(raw[: len(raw) // 2], encoding="utf-8")
    for args in (("--check", str(cut)), (str(cut),)):
        r = _run(*args)
        assert r.exit_code == 2 and "not a readable match record" in r.output, r.output
    assert mid in rec["match_id"]


def test_an_edited_seed_names_only_the_deals_shown_as_above(tmp_path: Path) -> None:
    """Defect: `arena replay` of an arena's record whose seed was edited stops at the
    first deal's first action (another dealer), then said the record was changed "(Deals
    1, 2, 3 above)": deals it had not shown. It names those shown as above and the others
    as not shown now; an edit the display shows whole still names its deal as above."""
    rec = _random_match(11, deals=3).record()
    rec["match_id"] = "t-m00001"
    assert len(rec["deals"]) >= 3
    seed = copy.deepcopy(rec)
    seed["seed"] = 14  # (draws another first dealer: the display stops at its first bid)
    r = _run(_write(tmp_path, seed, "seed.json"))
    assert r.exit_code == 1 and "refused: Deal 1 (record deal 0)" in r.stdout, r.output
    n = len(rec["deals"])
    later = ", ".join(str(k) for k in range(2, n + 1))
    assert f"(Deal 1 above; {later} not shown: the display stops in Deal 1)" in r.stderr
    assert "Deals 1, 2" not in r.stderr
    hands = copy.deepcopy(rec)
    h = hands["deals"][n - 1]["hands"]
    h[0][0], h[1][0] = h[1][0], h[0][0]
    r = _run(_write(tmp_path, hands, "hands.json"))
    assert r.exit_code == 1 and f"(Deal {n} above)" in r.stderr, r.output


def test_a_deal_refused_at_its_start_is_not_named_as_shown(tmp_path: Path) -> None:
    """Defect (round 38's review): when the display stopped at a deal's start ("refused:
    Deal 2 (record deal 1): the deal before it is not over"), that deal was never shown,
    yet a change of its cards was named "(Deal 2 above)". It is named as not shown now,
    the display stopping before it; a change in the deal shown is still "above"."""
    rec = _random_match(11, deals=3).record()
    rec["match_id"] = "t-m00001"
    edited = copy.deepcopy(rec)
    first = edited["deals"][0]  # (its last action gone, and unscored: not over)
    first["actions"].pop()
    for key in ("deltas", "scores", "outcome"):
        del first[key]
    h = edited["deals"][1]["hands"]
    h[0][0], h[1][0] = h[1][0], h[0][0]
    r = _run(_write(tmp_path, edited, "second.json"))
    assert r.exit_code == 1, r.output
    assert "refused: Deal 2 (record deal 1): the deal before it is not over" in r.stdout
    assert "Deal 2 above" not in r.stderr, r.stderr
    assert "(Deal 2 not shown: the display stops before Deal 2)" in r.stderr, r.stderr
    h = edited["deals"][0]["hands"]
    h[0][0], h[1][0] = h[1][0], h[0][0]
    r = _run(_write(tmp_path, edited, "both.json"))
    assert r.exit_code == 1, r.output
    # (now refused inside Deal 1, whose cards changed under its actions)
    assert "(Deal 1 above; 2 not shown: the display stops in Deal 1)" in r.stderr, r.stderr
