"""A bot author whose club plays house rules, at three and at four (audit round 47).

The club writes a ruleset file of its own, writes a bot that reads the rules from its
view, tries it against the bundled bots, replays and checks the records, and serves it.
What an author can get wrong here (an option of a part of the game the ruleset has not:
``barrel_mode`` on preset 1001, a 4-player dealer's ``nines_talon_value`` in a ruleset that
seats 3) is refused with the option and the way out, wherever the file is read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.options import table_size_note
from arena.tournament.config import ConfigError, parse_config
from engine import Ruleset, RulesetError, load_ruleset
from sdk import Action, Bot, Card, Phase, PlayerView, hand, play_local
from tests.support.record_reader import main as check_records
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]

#: The club's rules at four: 1001 with a barrel of one sitter, stricter play, to 500.
CLUB4 = """\
preset = "1001"
name = "club4"
players = 4
must_beat = true
concede = "penalty"
talon_visible = false
marriage_needs_trick = false
barrel = true
barrel_mode = "one"
bid_step = 10
target = 500
barrel_at = 440
nines_talon_value = 50
"""


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------- options of a part the game has not


def test_barrel_options_on_a_ruleset_without_the_barrel_are_refused(tmp_path: Path) -> None:
    """Defect: ``barrel_mode = "one"`` on preset 1001 (which has no barrel) was accepted,
    described as "1001 (barrel_mode one)" by every command, and played with no barrel at
    all: the club's house rule silently not in force."""
    path = _file(tmp_path, "club.toml", 'preset = "1001"\nname = "club"\nbarrel_mode = "one"\n')
    with pytest.raises(RulesetError) as e:
        load_ruleset(path)
    assert e.value.key == "barrel_mode"
    assert "no barrel (barrel = false): set barrel = true" in str(e.value)
    assert str(e.value).startswith(f"{path}: barrel_mode: has no effect")
    # Switched on, the same option is in force.
    path.write_text('preset = "1001"\nname = "club"\nbarrel = true\nbarrel_mode = "one"\n')
    assert (load_ruleset(path).barrel, load_ruleset(path).barrel_mode) == (True, "one")
    # The same in a tournament config's inline table, named by its key there.
    with pytest.raises(ConfigError, match=r"ruleset\.barrel_deals.*no barrel"):
        parse_config({"ruleset": {"preset": "1001", "barrel_deals": 2},
                      "bots": ["random", "heuristic", "counting"]})  # fmt: skip


def test_a_4_player_option_in_a_ruleset_seating_3_is_refused(tmp_path: Path) -> None:
    """Defect: ``nines_talon_value`` (what the 4-player dealer scores for three nines) in a
    3-player ruleset was accepted and never used. A file on preset 1001 that sets no
    ``players`` is sized by its table: four take it, three are told why not (so `arena
    serve` and a tournament, which seat 3 for such a file, say so where the club meant 4)."""
    classic = _file(tmp_path, "c.toml", 'preset = "classic"\nname = "c"\nnines_talon_value = 50\n')
    with pytest.raises(RulesetError, match="nines_talon_value: has no effect: only the dealer "
                       "of a 4-player table scores the talon, and this ruleset seats 3: set "
                       "players = 4"):  # fmt: skip
        load_ruleset(classic)
    sized = _file(tmp_path, "s.toml", 'preset = "1001"\nname = "s"\nnines_talon_value = 50\n')
    with pytest.raises(RulesetError, match="nines_talon_value"):
        load_ruleset(sized)
    assert load_ruleset(sized, players=4).nines_talon_value == 50
    # The preset's own value, written out (`arena rules` prints every option), loads back.
    assert (
        load_ruleset(
            _file(
                tmp_path,
                "p.toml",
                'preset = "1001"\nname = "p"\nnines_talon_value = 100\nbarrel_mode = "many"\n',
            )
        ).players
        == 3
    )
    # A stored ruleset (a record's, every option) is read whatever it holds.
    odd = {**load_ruleset("1001").to_dict(), "barrel_mode": "one", "nines_talon_value": 7}
    assert Ruleset.from_dict(odd).barrel_mode == "one"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("talon_visible = off", "a yes or no is written true or false (lower case, no quotes)"),
        ("must_beat = True  # the club's", "a yes or no is written true or false"),
        ("concede = penalty", 'a text value is written in quotes (concede = "...")'),
        ("barrel_mode = one", 'a text value is written in quotes (barrel_mode = "...")'),
    ],
)
def test_a_bare_word_for_a_value_says_how_to_write_it(
    tmp_path: Path, line: str, words: str
) -> None:
    """Defect: the club wrote its options as the product describes them ("talon_visible
    off", `arena rules`' first line) or as words (`concede = penalty`) and was told only
    "not valid TOML: Invalid value (at line 3, column 17)"."""
    path = _file(tmp_path, "club.toml", f'preset = "1001"\nname = "club"\n{line}\n')
    with pytest.raises(RulesetError) as e:
        load_ruleset(path)
    key = line.split(" =")[0]
    assert (
        f"Invalid value (at line 3, column {len(key) + 4}): line 3 ({key} = ...): {words}"
        in str(e.value)
    )
    # A tokens file's bare token is not shown: the key is.
    tokens = _file(tmp_path, "tokens.toml", "[bots]\nmine = t1secret\n")
    from engine.rules import TomlFileError, read_toml_file

    with pytest.raises(TomlFileError) as t:
        read_toml_file(tokens)
    assert "line 2 (mine = ...): a text value is written in quotes" in str(t.value)
    assert "t1secret" not in str(t.value) and not t.value.key_set_twice


# ------------------------------------------------ the club's bot, in process, at four


class Club(Bot):
    """The author's bot: checks what the docs say its view holds, plays cheap and legal."""

    name = "club"

    def act(self, view: PlayerView) -> Action:
        r = view.ruleset
        assert (r.players, r.must_beat, r.talon_visible, r.barrel_mode) == (4, True, False, "one")
        assert view.seat != view.dealer and view.dealer not in view.active_seats
        assert view.talon is None or view.declarer == view.seat
        assert view.barrel is not None and len(view.barrel) == 4
        if view.phase is Phase.BIDDING:
            return next(a for a in view.legal_actions if type(a).__name__ == "Pass")
        plays = hand.legal_plays(view)
        if plays:
            return min(plays, key=lambda p: (p.card.points, p.card))
        return view.legal_actions[0]

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        assert talon is None or declarer == view.seat


def test_house_rules_at_four_in_process(tmp_path: Path) -> None:
    """The club's file at four with the bundled bots: every option in the view, the talon
    shown to nobody but its taker, the dealer never asked, every move legal (strict)."""
    from bots import load

    rules = load_ruleset(_file(tmp_path, "club4.toml", CLUB4))
    m = play_local([Club, load("heuristic"), load("counting"), load("random")], rules,
                   seed=3, max_deals=3, strict=True)  # fmt: skip
    assert not m.incidents
    assert m.record["ruleset"] == {**rules.to_dict(), "max_deals": 3}
    out = tmp_path / "m.json"
    out.write_text(json.dumps(m.record), encoding="utf-8")
    assert check_records([str(out)]) == 0


# ------------------------------------------------------------ the commands, as the author


def test_try_with_three_opponents_under_a_3_player_ruleset_says_how_to_seat_4() -> None:
    """Defect: a club of four trying classic (3 players only) with three opponents was
    told only to name at most 2; `arena rules classic --players 4` names the way to four."""
    from click.testing import CliRunner

    from sdk import cli

    out = CliRunner().invoke(cli.main, ["try", "random", "--vs", "random,random,random"])
    assert out.exit_code == 2
    assert (
        "name at most 2 (fewer are repeated); for 4 players: 1001-4p, or players = 4 in a "
        "ruleset file" in " ".join(out.output.split())
    ), out.output


def test_a_file_sized_by_its_table_is_said_to_seat_3_where_4_bots_meet(tmp_path: Path) -> None:
    """Defect: a club that tried its file on preset 1001 (no ``players``) with three
    opponents played it at four; `arena serve` and `arena tournament` with four bots seat
    the same file at three, and said nothing of it (the start line read as the same
    rules). Now they say why and what to write; a preset, a file that sets its
    ``players``, and fewer than four bots get no note."""
    shipped = str(ROOT / "rulesets" / "tournament-1001.toml")
    rs = load_ruleset(shipped)
    note = table_size_note(rs, shipped, 4, "--ruleset")
    assert note is not None
    assert note.startswith(f"note: {shipped} (--ruleset) sets no players, so it seats 3 a match")
    assert note.endswith("for 4-player matches, write players = 4 in it")
    assert table_size_note(rs, shipped, 3, "--ruleset") is None
    assert table_size_note(load_ruleset("1001"), "1001", 4, "--ruleset") is None
    fixed = _file(tmp_path, "three.toml", 'preset = "1001"\nname = "three"\nplayers = 3\n')
    assert table_size_note(load_ruleset(fixed), str(fixed), 5, "ruleset") is None
    house = _file(tmp_path, "h.toml", 'preset = "classic"\nname = "h"\n')
    assert table_size_note(load_ruleset(house), str(house), 4, "ruleset") is None


def test_try_titles_a_house_file_with_its_options_and_table_size(tmp_path: Path) -> None:
    """Defect: `arena-bot try --ruleset FILE` titled its table with the file's name alone
    ("ruleset tournament-1001"), where every other output describes a ruleset: the house
    options in force did not show, nor that three opponents made the file a 4-player
    game (the title says `1001-4p` for the preset `1001`)."""
    from click.testing import CliRunner

    from sdk import cli

    shipped = str(ROOT / "rulesets" / "tournament-1001.toml")
    for vs, title in (
        ("random,random,random", "ruleset tournament-1001 (1001-4p + talon_visible off), seed"),
        ("random,random", "ruleset tournament-1001 (1001 + talon_visible off), seed"),
    ):
        out = CliRunner().invoke(
            cli.main, ["try", "random", "--vs", vs, "--ruleset", shipped, "-n", "1",
                       "--max-deals", "1"], terminal_width=200,
        )  # fmt: skip
        assert out.exit_code == 0, out.output
        assert f"1 match, {title} 0" in out.output, out.output


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                               "COLUMNS": "120"})  # fmt: skip


@pytest.mark.slow
def test_the_commands_refuse_an_unused_option_and_play_the_club_file(tmp_path: Path) -> None:
    """`arena serve`, `arena rules` and `arena-bot try` name the option and the way out
    (exit code 2); the club's file plays under `try --records`, and `arena replay --check`
    passes its records."""
    bad = _file(tmp_path, "b.toml", 'preset = "1001"\nname = "b"\nbarrel_mode = "one"\n')
    _file(tmp_path, "tokens.toml", '[bots]\na = "tok-aaaa-1"\nb = "tok-bbbb-2"\nc = "tok-cccc-3"\n')
    words = "barrel_mode: has no effect: this ruleset has no barrel"
    serve = ["arena.cli", "serve", "--tokens", "tokens.toml", "--port", "0"]
    for args in ([*serve, "--ruleset", str(bad)],
                 ["arena.cli", "rules", str(bad)],
                 ["sdk.cli", "try", "random", "--ruleset", str(bad)]):  # fmt: skip
        done = _cli(*args, cwd=tmp_path, timeout=60)  # (a serve that took it would run on)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
    # Four tokens and a file sized by its table: the start says it seats 3.
    _file(tmp_path, "four.toml", '[bots]\na = "tok-aaaa-1"\nb = "tok-bbbb-2"\n'
          'c = "tok-cccc-3"\nd = "tok-dddd-4"\n')  # fmt: skip
    shipped = str(ROOT / "rulesets" / "tournament-1001.toml")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--tokens", "four.toml", "--port", "0",
         "--ruleset", shipped], cwd=tmp_path, stderr=subprocess.PIPE, text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    try:
        first = readline_within(server.stderr, 60) if server.stderr else None
    finally:
        server.kill()
        server.communicate()
    assert first is not None and "sets no players, so it seats 3 a match here" in first, first
    _file(tmp_path, "club4.toml", CLUB4)
    done = _cli(
        "sdk.cli",
        "try",
        "heuristic",
        "--vs",
        "random,counting,random",
        "--ruleset",
        "club4.toml",
        "-n",
        "4",
        "--max-deals",
        "2",
        "--records",
        "recs",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "4 records written" in done.stdout + done.stderr
    for record in sorted((tmp_path / "recs").glob("*.json")):
        check = _cli("arena.cli", "replay", "--check", str(record), cwd=tmp_path)
        assert check.returncode == 0 and "OK: every action is legal" in check.stdout, check.stdout
