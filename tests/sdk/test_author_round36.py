"""A new bot author's local testing loop (round 36 of the bot-author audit): `arena-bot
try` and `play_local` as docs/writing-a-bot.md gives them, with bots that raise, answer
wrongly, are slow, print, keep state on the class, read the view and use the SDK's
helpers. Each test is a defect the walk met (its docstring says which), or what it checked
and found as the docs say."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from arena.render import fixed
from bots import load
from sdk import Action, Bid, Bot, Pass, Phase, Play, PlayerView, hand, play_local
from sdk.local import LocalMatch, SeriesEntry, _add, play_series, raise_site

ROOT = Path(__file__).parents[2]
#: ``arena-bot`` / ``arena`` of this checkout as processes, SIGINT set back to Python's
#: own handler (a child inherits an ignored SIGINT from a test run in a shell's background).
_PRELUDE = (f"import signal, sys; sys.path.insert(0, {str(ROOT)!r}); "
            "signal.signal(signal.SIGINT, signal.default_int_handler); ")  # fmt: skip
ARENA_BOT = [sys.executable, "-c", _PRELUDE + "from sdk.cli import main; sys.exit(main())"]
ARENA = [sys.executable, "-c", _PRELUDE + "from arena.cli import main; sys.exit(main())"]

LOWEST = '''from sdk import Bot


class Lowest(Bot):
    """Bids, passes and names contracts like Bot's defaults; plays its cheapest card."""

    name = "lowest"

    def play(self, view):
        return min(view.legal_actions, key=lambda a: (a.card.points, a.card))
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def _run(cmd: list[str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


def _table(out: str) -> dict[str, list[str]]:
    """The rows of `try`'s table by bot: matches, wins, win %, place, score, pts/deal,
    incidents."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 8:
            rows[cells[0]] = cells[1:]
    return rows


# ------------------------------------------------------------------- the table's wins


def test_a_shared_first_place_is_no_win_in_the_table() -> None:
    """Defect: a first place shared on equal scores (``GameResult.winner`` ``None``) was
    counted as a win of every seat sharing it, so a series' wins added up to more than its
    matches (19 wins in 14 matches capped at one deal, win % 36 + 43 + 57)."""
    entries = [SeriesEntry("tried"), SeriesEntry("a"), SeriesEntry("b")]
    shared = SimpleNamespace(
        result=SimpleNamespace(places=(1, 1, 3), scores=(60, 60, -120), deals=1, winner=None),
        incidents=(), slowest=(0.0, 0.0, 0.0), slowest_at=("", "", ""),
    )  # fmt: skip
    alone = SimpleNamespace(
        result=SimpleNamespace(places=(2, 3, 1), scores=(40, 0, 120), deals=1, winner=2),
        incidents=(), slowest=(0.0, 0.0, 0.0), slowest_at=("", "", ""),
    )  # fmt: skip
    _add(entries, [0, 1, 2], shared)  # type: ignore[arg-type]
    _add(entries, [0, 1, 2], alone)  # type: ignore[arg-type]
    assert [e.wins for e in entries] == [0, 0, 1]
    assert [e.places for e in entries] == [3, 4, 4]  # the shared place still counts


def test_the_tables_figures_are_the_records_figures() -> None:
    """The table of a series (one deal a match, where equal scores are common) is what the
    match records say: matches, sole wins, places, scores and deals per line-up position,
    each match played as its id says (seed, and the tried bot's seat by rotation)."""
    matches: list[tuple[str, LocalMatch]] = []
    lowest = _lowest()
    result = play_series(
        lowest, [("heuristic", load("heuristic"))], 9, seed=1, max_deals=1,
        on_match=lambda mid, m: matches.append((mid, m)),
    )  # fmt: skip
    assert [mid for mid, _ in matches] == [f"local-{1 + i // 3}-{i % 3}" for i in range(9)]
    names = [e.name for e in result.entries]
    assert names == ["lowest", "heuristic#1", "heuristic#2"]
    totals = {n: [0, 0, 0, 0, 0] for n in names}  # matches, wins, places, score, deals
    ties = 0
    for i, (_, m) in enumerate(matches):
        rec = m.record
        assert rec["seed"] == 1 + i // 3 and rec["players"][i % 3] == "lowest"
        res = rec["result"]
        ties += res["winner"] is None
        for seat, name in enumerate(rec["players"]):
            t = totals[name]
            t[0] += 1
            t[1] += res["winner"] == seat
            t[2] += res["places"][seat]
            t[3] += res["scores"][seat]
            t[4] += res["deals"]
    assert ties  # the case the old count got wrong is in the series
    for e in result.entries:
        assert [e.matches, e.wins, e.places, e.score, e.deals] == totals[e.name]
    assert sum(e.wins for e in result.entries) == 9 - ties


def _lowest() -> type[Bot]:
    class Lowest(Bot):
        name = "lowest"

        def play(self, view: PlayerView) -> Action:
            plays = [a for a in view.legal_actions if isinstance(a, Play)]
            return min(plays, key=lambda a: (a.card.points, a.card))

    return Lowest


# ------------------------------------------------------- where a bot's error is named


def _helper_misuse() -> None:
    hand.trick_winner([], None)  # the bot's line: a trick has 1 to 3 cards


def test_an_error_raised_in_an_sdk_helper_is_placed_at_the_bots_line() -> None:
    """Defect: a bot that called an SDK helper wrongly (``hand.trick_winner([], ...)``)
    had its error placed in the engine (``game.py:166``), not at its own line: the log's
    one-line repeats said "ValueError again in trick_winner (game.py:166)", and every line
    of the bot making that mistake counted as one place, so only the first got its
    traceback."""
    try:
        _helper_misuse()
    except ValueError as e:
        assert e.__traceback__ is not None
        site = raise_site(e.__traceback__)
    line = traceback.extract_stack(limit=1)  # (this file)
    assert site.filename == line[0].filename and site.name == "_helper_misuse"


HELPER_MISUSE = """from sdk import Bot, hand


class Misuse(Bot):
    def play(self, view):
        if view.deal_number % 2:
            hand.trick_winner([], view.trump)
        hand.trick_winner([], None)
        return view.legal_actions[0]
"""


def test_try_gives_each_line_of_the_bot_its_traceback_and_repeats_name_it(
    tmp_path: Path,
) -> None:
    """The same defect through `arena-bot try`: the two lines of the bot that misuse a
    helper each get a traceback ending in the engine, and the repeats name the bot's file
    and line, never the engine's."""
    (tmp_path / "misuse.py").write_text(HELPER_MISUSE)
    done = _run(ARENA_BOT, tmp_path, "try", "misuse.py", "-n", "1", "--max-deals", "4")
    assert done.returncode == 1, done.stderr
    log = done.stderr
    assert log.count("Traceback (most recent call last)") == 2, log
    assert 'misuse.py", line 8, in play' in log and 'misuse.py", line 7, in play' in log
    assert "again in play (misuse.py:8)" in log and "again in play (misuse.py:7)" in log
    assert "game.py" not in log.replace('game.py", line', "")  # only in the tracebacks


# ------------------------------------------------------------- try --records, replay


def test_try_records_each_match_for_arena_replay(tmp_path: Path) -> None:
    """Defect (a gap): `try`'s log lines and warnings name a match ("match local-0-1,
    deal 2") and say the same --seed plays it again, but nothing let the author see that
    match: `arena replay local-0-1` finds no record. `--records DIR` writes each finished
    match's record as DIR/<match id>.json, which `arena replay` shows and checks, and whose
    results are the table's."""
    (tmp_path / "mybot.py").write_text(LOWEST)
    done = _run(ARENA_BOT, tmp_path, "try", "mybot.py", "-n", "4", "--seed", "3",
                "--max-deals", "3", "--records", "out/recs")  # fmt: skip
    assert done.returncode == 0, done.stderr
    recs = tmp_path / "out" / "recs"
    assert sorted(p.name for p in recs.iterdir()) == [
        "local-3-0.json", "local-3-1.json", "local-3-2.json", "local-4-0.json"
    ]  # fmt: skip
    rows = _table(done.stdout)
    scores: dict[str, int] = {}
    for path in recs.iterdir():
        rec = json.loads(path.read_text())
        seat = int(path.stem.rsplit("-", 1)[1])
        assert rec["players"][seat] == "lowest" and rec["seed"] == int(path.stem.split("-")[1])
        for name, score in zip(rec["players"], rec["result"]["scores"], strict=True):
            scores[name] = scores.get(name, 0) + score
    for name, total in scores.items():
        # (halfway away from zero, as the leaderboard rounds: -250.5 is -251)
        assert rows[name][4] == fixed(total / 4, 0), (name, rows)
    check = _run(ARENA, tmp_path, "replay", "--check", "out/recs/local-3-1.json")
    assert check.returncode == 0 and "OK: every action is legal" in check.stdout, check
    shown = _run(ARENA, tmp_path, "replay", "out/recs/local-3-1.json")
    assert shown.returncode == 0, shown.stderr
    assert "seed 3, players heuristic, lowest, random" in shown.stdout


def test_try_records_refuses_a_directory_it_cannot_make_before_playing(tmp_path: Path) -> None:
    """A --records that is a file, or under one, is refused naming the option, before
    any match is played."""
    (tmp_path / "mybot.py").write_text(LOWEST)
    for bad in ("mybot.py", "mybot.py/recs"):
        done = _run(ARENA_BOT, tmp_path, "try", "mybot.py", "-n", "1", "--records", bad)
        assert done.returncode == 2, done
        assert "--records" in done.stderr and "matches, ruleset" not in done.stdout


SLOW = """import time
from sdk import Bot


class Slow(Bot):
    def play(self, view):
        time.sleep(0.02)
        return view.legal_actions[0]
"""


def test_ctrl_c_keeps_the_records_of_the_matches_the_table_counts(tmp_path: Path) -> None:
    """Ctrl-C mid-series: exit code 130, the table of the matches finished so far, and
    a record for each of them (none for the match dropped)."""
    (tmp_path / "slow.py").write_text(SLOW)
    proc = subprocess.Popen(
        [*ARENA_BOT, "try", "slow.py", "--vs", "heuristic", "-n", "500", "--max-deals", "2",
         "--records", "recs"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        recs = tmp_path / "recs"
        while len(list(recs.glob("*.json"))) < 2 and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted after " in out and " of 500 matches" in out
    played = int(out.split("interrupted after ")[1].split()[0])
    assert played >= 2 and len(list(recs.glob("*.json"))) == played
    assert _table(out)["Slow"][0] == str(played)


# ------------------------------------------------------------------ reproducibility


def test_try_twice_with_one_seed_gives_the_same_table(tmp_path: Path) -> None:
    """Found as the docs say: the same --seed, the same matches and results (the slowest
    decisions aside, which are times), and the same records. (Against heuristic and
    random: counting and pimc count their search in nodes, but a wall-clock backstop ends
    it on a machine loaded enough, bots/_dds.Budget, and then their moves differ.)"""
    (tmp_path / "mybot.py").write_text(LOWEST)
    args = ("try", "mybot.py", "--vs", "heuristic,random", "-n", "3", "--seed", "7",
            "--max-deals", "4", "--records")  # fmt: skip
    runs = [_run(ARENA_BOT, tmp_path, *args, f"r{i}") for i in range(2)]
    assert all(r.returncode == 0 for r in runs), runs
    # (the slowest decisions are times; the records line names each run's directory)
    tables = [
        [ln for ln in r.stdout.splitlines() if "slowest" not in ln and "records written" not in ln]
        for r in runs
    ]
    assert tables[0] == tables[1]
    for p in (tmp_path / "r0").iterdir():
        assert p.read_text() == (tmp_path / "r1" / p.name).read_text()


# ----------------------------------------------------------------- the view, helpers


class _Reader(Bot):
    """Reads the view's documented parts and plays with the SDK's helpers."""

    name = "reader"

    def __init__(self) -> None:
        self.seen_caps: set[int] = set()
        self.ended: list[tuple[int, int, int]] = []

    def act(self, view: PlayerView) -> Action:
        r = view.ruleset
        self.seen_caps.add(r.max_deals)
        assert view.to_act == view.seat and view.seat in view.active_seats
        assert len(view.players) == r.players == len(view.scores)
        assert not (hand.played_cards(view) & set(view.hand))
        assert not (hand.unseen_cards(view) & set(view.hand))
        assert len(hand.trumps_by_trick(view)) == len(view.tricks) + 1
        if view.phase == Phase.BIDDING:
            cap = hand.bid_cap(view.hand, r)
            bids = [a for a in view.legal_actions if isinstance(a, Bid) and a.amount <= cap]
            if bids and cap > 120:
                return max(bids, key=lambda b: b.amount)
            return Pass() if Pass() in view.legal_actions else view.legal_actions[0]
        if view.phase == Phase.PLAYING:
            plays = [a for a in view.legal_actions if isinstance(a, Play)]
            declaring = [p for p in plays if p.declare]
            if declaring:
                return declaring[0]
            if view.trick:
                _, best = hand.trick_winner(view.trick, view.trump)
                beating = [p for p in plays if hand.beats(p.card, best, view.trump)]
                if beating:
                    return min(beating, key=lambda p: p.card.points)
            return min(plays, key=lambda p: (p.card.points, p.card))
        return view.legal_actions[0]

    def on_match_end(self, view: PlayerView, result: Any) -> None:
        assert view.phase == Phase.GAME_OVER
        self.ended.append((view.deal_number, result.deals, view.ruleset.max_deals))


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("classic", 3), ("1001", 3), ("1001-4p", 4), (str(ROOT / "rulesets/house-penalty.toml"), 3)],
)
def test_a_bot_reading_the_view_and_using_the_helpers_plays_strictly_legal(
    ruleset: str, players: int
) -> None:
    """Found as the docs say: a bot built on the view's parts and sdk.hand's helpers plays
    every preset and a house-rule file without an incident (``strict=True`` would raise),
    and its view's ``ruleset.max_deals`` is the match's cap."""
    bots: list[Any] = [_Reader(), *[load("heuristic")] * (players - 1)]
    m = play_local(bots, ruleset, 2, strict=True, max_deals=12)
    assert m.incidents == () and m.record["result"]["scores"] == list(m.result.scores)
    reader = bots[0]
    assert reader.seen_caps == {12} and reader.ended == [(m.result.deals, m.result.deals, 12)]


# ------------------------------------------------------- state across matches, wrongly

DEFAULT_ARG = """from sdk import Bot


class Remembers(Bot):
    def __init__(self, seen=[], depth=3, names=()):
        super().__init__()
        self.seen = seen

    def on_action(self, view, seat, action):
        self.seen.append(action)

    def on_match_end(self, view, result):
        print(self.match_id, "saw", len(self.seen))
"""


def test_a_mutable_default_of_init_is_warned_of_as_shared_state(tmp_path: Path) -> None:
    """Defect: ``def __init__(self, seen=[])`` shares one list among every match's bot (the
    runners make each with no arguments), as ``seen = []`` on the class does, which is
    warned of; this was not: the second match's bot saw the first's actions too, and
    nothing said so. A default that is no container (a number, a tuple) is not warned of."""
    (tmp_path / "remembers.py").write_text(DEFAULT_ARG)
    done = _run(ARENA_BOT, tmp_path, "try", "remembers.py", "-n", "2", "--max-deals", "1")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert (
        "Remembers.__init__() (remembers.py:5) gives seen a list as its default: the bot "
        "is made with no arguments for every match, so every match's instance shares that "
        "one" in said
    )
    assert said.count("as its default") == 1  # not depth, not names
    first, second = (int(ln.split()[-1]) for ln in done.stdout.splitlines() if " saw " in ln)
    assert second > first  # (what the warning is about: the list went on growing)


# ---------------------------------------------------------- play_local's bad options


@pytest.mark.parametrize(
    ("names", "error", "words"),
    [
        ("abc", TypeError, "names must be a list of names, one per seat, got 'abc'"),
        (["mine"], ValueError, "1 names for 3 bots: give one name per seat"),
        (["a", "b", "c", "d"], ValueError, "4 names for 3 bots"),
    ],
)
def test_play_local_names_what_is_wrong_with_its_names(
    names: Any, error: type[Exception], words: str
) -> None:
    """Defect: ``play_local(..., names="abc")`` named the seats a, b and c, silently, and
    a list of the wrong length was refused as "ruleset 'classic' is for 3 players, got 1",
    which blamed the ruleset, not ``names``."""
    heuristic = load("heuristic")
    with pytest.raises(error, match="play_local: ") as caught:
        play_local([heuristic] * 3, names=names, max_deals=1)
    assert words in str(caught.value)
    assert play_local([heuristic] * 3, names=["x", "y", "z"], max_deals=1).names == ("x", "y", "z")
