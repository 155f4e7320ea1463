"""Round 30: an organiser's and a reader's walkthrough of the tournament and replay side
(README.md, docs/tournament.md, docs/web.md, docs/record-format.md; `arena tournament`,
`arena serve`, `arena leaderboard`, `arena replay`, `arena web`, `arena rules`).

The defects it found are pinned first, each test saying what was wrong; then what the
walkthrough checked and found as the docs say it: the documented commands, and bad input
of every kind answered by an error naming what was wrong, with nothing lost.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.storage import Storage
from arena.web import DataSource
from arena.web.data import NotFound
from arena.web.demo import DEMO_BOTS, make_demo_db
from engine import Game, replay

BOTS = ("ann-the-long-named-bidder", "bob-the-careful-defender", "cid-the-random-one")


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished demo tournament of 6 matches whose bots have long names."""
    db = tmp_path_factory.mktemp("walk") / "walk.sqlite"
    make_demo_db(db, matches=6, bots=BOTS, tournament_id="walk", max_deals=6)
    return db


def _record(db: Path, match_id: str) -> dict[str, Any]:
    with Storage.open_readonly(db) as st:
        rec = st.load_record(match_id)
    assert isinstance(rec, dict)
    return rec


# --- defects found and fixed -----------------------------------------------------------


def test_replay_into_a_pipe_keeps_every_line_whole(demo: Path) -> None:
    """Defect: `arena replay` written to a file or a pipe (not a terminal) was wrapped at
    rich's default 80 columns, so a deal's result line was cut between "scores" and its
    numbers (`... scores \\n0, -105, 107`), an auction between "bid" and its amount, the
    forfeits line mid-phrase: `arena replay ID > match.txt` and `| grep scores` lost them.
    Now each line is written whole, the tables at their natural width."""
    match_id = "walk-m0000"
    res = _cli("replay", match_id, "--db", str(demo))
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    players = _record(demo, match_id)["players"]
    results = [ln for ln in lines if re.match(r"(made|failed|conceded|thrown in)\b", ln)]
    game = replay(_record(demo, match_id))
    assert len(results) == len(game.deal_results)
    for line, res_ in zip(results, game.deal_results, strict=True):
        assert len(line) > 80  # (long names: such a line was cut before)
        scores = ", ".join(str(s) for s in res_.scores)
        assert line.rstrip().endswith(f"scores {scores}"), line
        for name in players:
            assert f"{name} " in line
    # the auction of each deal is on one line too
    bidding = [ln for ln in lines if ln.startswith("Bidding:")]
    assert len(bidding) == len(game.deal_results)
    assert not any(ln.rstrip().endswith(("bid", ":")) for ln in bidding)
    # and nothing was cut: no line is a continuation starting with a bare number
    assert not any(re.fullmatch(r"-?\d+(, -?\d+)*", ln.strip()) for ln in lines)
    # nor padded: the hands' grid ended its lines with spaces, which diff and grep see
    assert [ln for ln in lines if ln != ln.rstrip()] == []
    assert any(ln.startswith("talon ") for ln in lines)


def test_the_matches_api_refuses_a_bot_the_tournament_never_seated(demo: Path) -> None:
    """Defect: `/api/matches?bot=NAME` with a name no match of the tournament seated (a
    typo) answered 200 with no matches, as if the bot existed and had not played yet,
    where `/api/bots/<name>` and `arena replay --list --bot` name the error (docs/web.md:
    404 for what does not exist). Now a 404 naming the bot and the tournament."""
    src = DataSource(demo)
    with pytest.raises(NotFound, match="no bot 'bbo' in tournament 'walk'"):
        src.matches(None, bot="bbo", limit=None)
    page = src.matches(None, bot=BOTS[0], limit=2)
    assert page["matches_total"] == 6 and len(page["matches"]) == 2
    assert all(BOTS[0] in m["players"] for m in page["matches"])
    assert src.matches(None, bot=None, limit=None)["matches_total"] == 6


def test_the_matches_api_still_serves_a_listed_bot_before_its_first_match(
    tmp_path: Path,
) -> None:
    """(What the fix keeps:) a bot the tournament lists but no stored match seats yet (a
    tournament just started) is no error: its page of matches is empty."""
    db = tmp_path / "early.sqlite"
    make_demo_db(db, matches=0, total=6, finished=False, tournament_id="early")
    page = DataSource(db).matches(None, bot=DEMO_BOTS[0], limit=None)
    assert page["matches"] == [] and page["matches_total"] == 0
    with pytest.raises(NotFound, match="no bot 'nobody'"):
        DataSource(db).matches(None, bot="nobody", limit=None)


def test_replay_of_a_record_whose_seed_was_edited_names_the_change(
    demo: Path, tmp_path: Path
) -> None:
    """Defect: `arena replay FILE` of a record the arena wrote whose seed was then edited
    (so another first dealer is drawn) stopped at the first action with "refused: ... it is
    seat 1's turn, not seat 0's" and exit 1, and said no more: the change itself, the cards
    no longer the seed's, was named only by `--check`. Now it is said under the refusal too,
    with the deals as the replay numbers them (from 1)."""
    rec = {**_record(demo, "walk-m0001"), "match_id": "walk-m0001"}  # as the referee's
    (tmp_path / "as-written.json").write_text(json.dumps(rec), encoding="utf-8")
    assert _cli("replay", str(tmp_path / "as-written.json")).exit_code == 0
    for k in range(1, 60):
        edited = {**rec, "seed": rec["seed"] + k}
        path = tmp_path / f"edited{k}.json"
        path.write_text(json.dumps(edited), encoding="utf-8")
        shown = _cli("replay", str(path))
        if "refused:" in shown.stdout:
            break
    else:
        pytest.fail("no edited seed draws another first dealer")
    assert shown.exit_code == 1
    assert "the record was changed" in shown.stderr, shown.output
    n = len(rec["deals"])  # (the display stops in Deal 1: the later deals are not shown)
    rest = ", ".join(str(i + 1) for i in range(1, n))
    said = f"(Deal 1 above; {rest} not shown: the display stops in Deal 1)"
    assert said in shown.stderr, shown.stderr
    checked = _cli("replay", "--check", str(path))
    assert checked.exit_code == 1 and "the record was changed" in checked.stderr


def _small_config(tmp_path: Path, **keys: str) -> Path:
    extra = "".join(f"{k} = {v}\n" for k, v in keys.items())
    path = tmp_path / "cup.toml"
    path.write_text(
        f'name = "cup"\nseed = 7\nmax_deals = 1\nconcurrency = 2\nbot_wait_s = 60\n{extra}'
        f'db = "{tmp_path / "cup.sqlite"}"\nout = "{tmp_path / "out"}"\n'
        '[bots]\nr1 = "random"\nr2 = "random"\nr3 = "random"\n',
        encoding="utf-8",
    )
    return path


def test_a_file_where_the_logs_directory_goes_is_named(tmp_path: Path) -> None:
    """Defect: with a file named `logs` in the `out` directory, `arena tournament` stopped
    with "cannot write the log of bot 'r1' to .../logs/r1.log: File exists", which names
    neither the file in the way nor what is wrong with it (mkdir's words). Now it says
    `.../logs is a file, not a directory`, as `arena leaderboard --out` says of its own."""
    config = _small_config(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "logs").write_text("not a directory\n", encoding="utf-8")
    res = _cli("tournament", "--config", str(config), "--no-progress")
    assert res.exit_code == 1, res.output
    assert f"{tmp_path / 'out' / 'logs'} is a file, not a directory" in res.output
    assert "Traceback" not in res.output
    # nothing started, nothing stored: the same command runs once the file is moved
    (tmp_path / "out" / "logs").unlink()
    res = _cli("tournament", "--config", str(config), "--no-progress")
    assert res.exit_code == 0, res.output
    with Storage.open_readonly(tmp_path / "cup.sqlite") as st:
        (info,) = st.tournaments()
        assert info.completed == info.total_matches == 6


def test_the_demo_script_leaves_a_results_database_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect: `python -m arena.web.demo runs/default.sqlite` (a results database named by
    mistake) wrote its made-up tournament of bold, careful and randy into it, where it
    became the latest tournament, the one `arena leaderboard`, `arena replay --list` and
    `arena web` show by default (and no command removes a tournament). Now it refuses,
    naming the tournaments there, and writes nothing; its own database it still tops up."""
    from arena.web.demo import main as demo

    results = tmp_path / "results.sqlite"
    make_demo_db(results, matches=2, tournament_id="cup-0123456789ab")
    before = results.read_bytes()
    with pytest.raises(SystemExit) as info:
        demo([str(results)])
    assert info.value.code == 2  # (the wrong file named, as `arena leaderboard` exits: round 58)
    assert "holds other tournaments (cup-0123456789ab)" in capsys.readouterr().err
    assert results.read_bytes() == before
    with Storage.open_readonly(results) as st:
        assert [t.id for t in st.tournaments()] == ["cup-0123456789ab"]
    own = tmp_path / "demo.sqlite"
    demo([str(own), "--matches", "2"])
    demo([str(own), "--matches", "3"])  # (the demo's own database: one match more)
    with Storage.open_readonly(own) as st:
        assert st.completed_indices("demo") == {0, 1, 2}


# --- bad input: checked, found answered as the docs say (pinned) ------------------------

_BOTS = '[bots]\na = "random"\nb = "random"\nc = "random"\n'


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('bots = ["random", "random", "heuristic"]\n', "bots[1]: duplicate bot name 'random'"),
        ('[bots]\na = "random"\na = "heuristic"\nb = "random"\n',
         "line 3 (a = ...) sets a key that the file already set (two bots of one name?)"),
        ('max_deals = "two"\n' + _BOTS, "max_deals: expected an integer, got a string 'two'"),
        ("concurrency = 1.5\n" + _BOTS, "concurrency: expected an integer, got a float 1.5"),
        ("max_deal = 3\n" + _BOTS, "max_deal: unknown key (did you mean 'max_deals'?)"),
        ("[deadlines]\ndecison_ms = 5\n" + _BOTS,
         "deadlines.decison_ms: unknown key (did you mean 'decision_ms'?)"),
        ('name = "x"\n', "bots: missing: name the bots"),
        ("matches_per_table = -1\n" + _BOTS,
         "matches_per_table: must be between 1 and 1000000, got -1"),
        ("matches_per_table = 100000000000000000000\n" + _BOTS,
         "matches_per_table: must be between 1 and 1000000, got 100000000000000000000"),
        ("seed = -5\n" + _BOTS, "seed: must be between 0 and 2**63-1, got -5"),
        ("match_timeout_s = -1\n" + _BOTS,
         "match_timeout_s: must be 0 (none) or positive, got -1\n"),
        ("bot_wait_s = nan\n" + _BOTS, "bot_wait_s"),
        ("[deadlines]\ndecision_ms = 0\n" + _BOTS,
         "deadlines.decision_ms: must be between 1 and 86400000 (a day), got 0"),
        ('ruleset = "clasic"\n' + _BOTS, "ruleset: unknown preset 'clasic' (did you mean"),
        ('ruleset = {preset = "classic", players = 4}\n' + _BOTS,
         "at least 4 bots are needed, got 3"),
        ('[bots]\na = "random"\nb = "random"\n', "at least 3 bots are needed, got 2"),
        ("bots = 5\n", "bots: expected a table of bots or an array of their names, got an"),
        ('[bots]\na = "random"\nb = "random"\nc = "herustic"\n',
         "bots.c.bot: unknown bundled bot 'herustic'"),
        ('[bots]\na = "random"\nb = "random"\nc = "missing.py:X"\n',
         "bots.c.bot: no such bot file: missing.py"),
        ('[bots]\na = "random"\nb = "random"\nc = { command = "{python} {nosuch}" }\n',
         "bots.c.command: bad placeholder in '{nosuch}'"),
        ('[bots]\na = "random"\nb = "random"\nc = { command = ["echo", "a\\u0000b"] }\n',
         "bots.c.command: a word with a NUL byte"),
        ('[bots]\na = "random"\nb = "random"\nc = { remote = true, token = "short" }\n',
         "bots.c.token: must be at least 8 characters"),
        ('[bots]\na = "random"\nb = "random"\nc = { bot = "random", workers = 0 }\n',
         "bots.c.workers: must be from 1 to 256, got 0"),
        ('[bots]\n"-c" = "random"\na = "random"\nb = "random"\n',
         "bots.-c: a bot name starts with a letter or a digit"),  # (a bare TOML key)
    ],
)  # fmt: skip
def test_a_bad_config_is_named_and_starts_nothing(tmp_path: Path, body: str, said: str) -> None:
    """Every bad config: exit 2, the file and the key named, no traceback, no database."""
    config = tmp_path / "cup.toml"
    config.write_text(body, encoding="utf-8")
    db = tmp_path / "cup.sqlite"
    res = _cli("tournament", "--config", str(config), "--db", str(db), "--no-progress")
    assert res.exit_code == 2, res.output
    assert said in res.output and "cup.toml" in res.output, res.output
    assert "Traceback" not in res.output
    assert not db.exists()


def test_a_config_that_is_not_text_is_named(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_bytes(b"\xff\xfe\x00name")
    res = _cli("tournament", "--config", str(config), "--no-progress")
    assert res.exit_code == 2
    assert "cup.toml: file: not valid TOML: not UTF-8 text" in res.output


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ('"/nonexistent/bot {arena}"', "cannot launch bot 'c' (/nonexistent/bot): No such file"),
        ('["sh", "-c", "echo boom >&2; exit 3"]', "bot 'c' exited with code 3 before connecting"),
    ],
)
def test_a_bot_that_cannot_start_stops_the_run_before_any_match(
    tmp_path: Path, command: str, said: str
) -> None:
    """A bot command that does not exist, or exits at start: exit 1 naming the bot (and
    what it wrote: `boom`), before any match; the first run stores no tournament."""
    config = _small_config(tmp_path)
    text = config.read_text(encoding="utf-8").replace(
        'r3 = "random"', f"c = {{ command = {command} }}"
    )
    config.write_text(text, encoding="utf-8")
    res = _cli("tournament", "--config", str(config), "--no-progress")
    assert res.exit_code == 1, res.output
    assert said in res.output and "Traceback" not in res.output
    if "exit 3" in command:
        assert "boom" in res.output
    with Storage.open_readonly(tmp_path / "cup.sqlite") as st:
        assert st.tournaments() == []


def test_reading_commands_on_empty_missing_and_foreign_databases(tmp_path: Path) -> None:
    """`arena leaderboard`, `arena replay` and `arena replay --list` on a database that is
    empty, missing, not the arena's or holds no tournament: an error naming it, no
    traceback, nothing written (docs/tournament.md, exit codes per command)."""
    import sqlite3

    zero = tmp_path / "zero.sqlite"
    zero.write_bytes(b"")
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE x (a)")
    bare = tmp_path / "bare.sqlite"
    Storage(bare).close()  # the arena's tables, no tournament
    missing = tmp_path / "missing.sqlite"
    cases = [
        (("leaderboard", "--db", str(zero)), 1, "is an empty database: no tournament is stored"),
        (("leaderboard", "--db", str(foreign)), 2, "is not a Thousand Arena database"),
        (("leaderboard", "--db", str(bare)), 2, "holds no tournament"),
        (("leaderboard", "--db", str(missing)), 2, "no database at"),
        (("replay", "m00001", "--db", str(zero)), 2, "is an empty database"),
        (("replay", "m00001", "--db", str(bare)), 2,
         "m00001: no such file, and no stored match with this id in"),
        (("replay", "--list", "--db", str(bare)), 2, "holds no tournament"),
        (("replay", "--list", "--db", str(foreign)), 2, "is not a Thousand Arena database"),
    ]  # fmt: skip
    sizes = {p: p.stat().st_size for p in (zero, foreign, bare)}
    for args, code, said in cases:
        res = _cli(*args)
        assert res.exit_code == code, (args, res.output)
        assert said in res.output and "Traceback" not in res.output, (args, res.output)
    assert {p: p.stat().st_size for p in (zero, foreign, bare)} == sizes
    assert not missing.exists()


def test_replay_of_unknown_ambiguous_and_empty_match_ids(demo: Path, tmp_path: Path) -> None:
    """An unknown id, a suffix two tournaments share, an empty id, an unknown --bot and
    flags that do not go together: exit 2, each named."""
    both = tmp_path / "both.sqlite"
    make_demo_db(both, matches=2, tournament_id="cup")
    make_demo_db(both, matches=2, tournament_id="bowl")
    cases = [
        (("replay", "m9999", "--db", str(demo)), "m9999: no such file, and no stored match"),
        (("replay", "0001", "--db", str(both)), "ambiguous, 2 matches in"),
        (("replay", "", "--db", str(demo)), "an empty match id or file name"),
        (("replay", "--list", "--bot", "bbo", "--db", str(demo)),
         "--bot: no bot 'bbo' in tournament walk"),
        (("replay", "--list", "--tournament", "nope", "--db", str(demo)),
         "--tournament: no tournament 'nope'"),
        (("replay", "m0001", "--bot", BOTS[0], "--db", str(demo)), "--bot goes with --list"),
        (("replay", "--list", "--check", "--db", str(demo)), "--check verifies one match"),
        (("leaderboard", "--db", str(demo), "--format", "xml"), "'xml' is not one of"),
        (("leaderboard", "--db", str(demo), "--format", "all"), "name a directory with --out"),
        (("leaderboard", "--db", str(demo), "--tournament", "nope"), "no tournament 'nope'"),
    ]  # fmt: skip
    for args, said in cases:
        res = _cli(*args)
        assert res.exit_code == 2, (args, res.output)
        assert said in res.output and "Traceback" not in res.output, (args, res.output)
    # the ambiguous suffix is named whole: either id works
    assert _cli("replay", "cup-m0001", "--db", str(both)).exit_code == 0


# --- what `arena replay` shows agrees with the rules (docs/RULES.md) ------------------

_ORDER = ["9", "J", "Q", "K", "10", "A"]  # low to high
_POINTS = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
_MARRIAGE = {"♥": 100, "♦": 80, "♣": 60, "♠": 40}


def _played_game(preset: str, seed: int) -> dict[str, Any]:
    """A match of random legal play that declares every marriage it may."""
    import random

    players = ["ann", "bob", "cid", "dan"][: 4 if preset.endswith("4p") else 3]
    g = Game.new(preset, seed, players)
    rng = random.Random(seed)
    while not g.is_over and len(g.deal_results) < 4:
        legal = g.legal_actions()
        declaring = [a for a in legal if str(a).endswith("declare")]
        g.apply(rng.choice(declaring or legal))
    return g.record()


def _card(text: str) -> tuple[str, str]:
    return text[:-1], text[-1]


@pytest.mark.parametrize(("preset", "seed"), [("classic", 9), ("1001", 8), ("1001-4p", 26)])
def test_replay_tricks_winners_takes_and_marriages_follow_the_rules(
    tmp_path: Path, preset: str, seed: int
) -> None:
    """Read back from `arena replay`'s own text (piped: one line each), deal by deal: each
    trick's winner is the highest trump in it, else the highest card of the suit led
    (A 10 K Q J 9); the winner leads the next trick, the declarer the first; a marriage is
    declared on a K or Q lead by a player who already won a trick, worth ♥100 ♦80 ♣60 ♠40,
    and its suit is trump from that trick on; the declarer's take is his tricks' card
    points plus his marriages; made means take ≥ contract; the deltas are the declarer's
    ± contract, each defender's take rounded (1001: to 5, half up) and, at a table of four,
    the dealer's the talon's points (100 for three nines)."""
    rec = _played_game(preset, seed)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    res = _cli("replay", str(path))
    assert res.exit_code == 0, res.output
    game = replay(rec)
    names = rec["players"]
    deals = res.output.split("\nDeal ")[1:]
    played = [d for d in game.deal_results if d.contract is not None]
    assert played, "no deal was played out"
    checked = marriages = 0
    for text, result in zip(deals, game.deal_results, strict=False):
        if result.contract is None:
            continue
        declarer = names[result.declarer]
        rows = [ln for ln in text.splitlines() if re.match(r"│\s*\d+ │", ln)]
        assert len(rows) == 8
        trump: str | None = None
        leader = declarer
        takes = {n: 0 for n in names}
        won: set[str] = set()
        for row in rows:
            cells = [c.strip() for c in row.strip("│").split("│")]
            plays = re.findall(r"(\S+) (10|[AKQJ9])([♠♣♦♥])\*?", cells[1])
            assert plays[0][0] == leader, row
            if m := re.search(r"\((\S+) declares the ([♠♣♦♥]) marriage: \+(\d+)\)", cells[1]):
                who, suit, value = m[1], m[2], int(m[3])
                assert who == leader and who in won and plays[0][2] == suit
                assert plays[0][1] in ("K", "Q") and value == _MARRIAGE[suit]
                trump = suit
                takes[who] += value
            assert cells[2] == (trump or "-"), row
            led = plays[0][2]
            pool = [p for p in plays if p[2] == trump] or [p for p in plays if p[2] == led]
            winner = max(pool, key=lambda p: _ORDER.index(p[1]))[0]
            assert cells[3] == winner, row
            takes[winner] += sum(_POINTS[p[1]] for p in plays)
            won.add(winner)
            leader = winner
        head = f"(contract {result.contract}, declarer took {takes[declarer]})"
        assert head in text
        assert (takes[declarer] >= result.contract) == (result.outcome == "made")
        # the deltas shown: the declarer ± the contract, each defender his take rounded
        # half up to the ruleset's unit (1001: 5), a dealer of four the talon's points
        shown = dict(re.findall(r"(\w+) ([+-]\d+)", text.split("  deltas ")[1].split("  ")[0]))
        unit = 5 if preset.startswith("1001") else 1
        for seat, name in enumerate(names):
            if name == declarer:
                want = result.contract if result.outcome == "made" else -result.contract
            elif len(names) == 4 and seat == result.dealer:
                talon = [_card(c) for c in rec["deals"][result.number]["talon"]]
                nines = all(rank == "9" for rank, _ in talon)
                want = 100 if nines else sum(_POINTS[rank] for rank, _ in talon)
            else:
                want = (takes[name] + unit // 2) // unit * unit
            assert int(shown[name]) == want, (name, text)
        checked += 1
        marriages += sum(1 for row in rows if "marriage" in row)
    assert checked == len(played)
    # (the seeds are chosen so that each match has a contract made, one failed and marriages)
    assert {"made", "failed"} <= {d.outcome for d in played} and marriages >= 2


def test_bots_of_the_wrong_type_is_told_both_forms(tmp_path: Path) -> None:
    """Defect: `bots = 5` (or a string) was refused as "expected a table of bots", though an
    array of names is the other form docs/tournament.md gives (`bots = ["random", ...]`):
    the message sent a user with an array in mind to the table alone. Now it names both."""
    for value in ("5", '"random, heuristic, counting"'):
        config = tmp_path / "cup.toml"
        config.write_text(f"bots = {value}\n", encoding="utf-8")
        res = _cli("tournament", "--config", str(config), "--no-progress")
        assert res.exit_code == 2
        assert "bots: expected a table of bots or an array of their names" in res.output
