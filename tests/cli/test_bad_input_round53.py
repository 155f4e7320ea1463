"""Bad input, round 53: what an organiser gives (config, ruleset and tokens files, options).

In-process through click's CliRunner, as ``tests/cli/test_bad_input.py``: each mistake ends
in one line naming the file, option or key and what was wrong, a documented exit code, and
nothing is lost (a file the organiser wrote is left byte for byte).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main as arena
from arena.web.demo import make_demo_db
from tests.cli.test_bad_input import BOTS, _fails, _invoke, _toml

RULESET = 'preset = "classic"\nmust_beat = true\n'


@pytest.mark.parametrize("command", ["tournament", "rules", "serve"])
def test_a_file_saved_in_latin_1_is_said_where_and_what_the_byte_was(
    tmp_path: Path, command: str
) -> None:
    """Defect: a config, ruleset or tokens file saved by an editor in Latin-1 (``café`` as
    the byte 0xE9) was refused as "not UTF-8 text (invalid continuation byte)": neither the
    line nor the byte named, in a file of any length. It now says the line, the column (in
    characters: an earlier Cyrillic letter is one) and the byte, as which character Latin-1
    reads it, and to save the file as UTF-8."""
    text = {
        "tournament": f'name = "cup"\n{BOTS}# ёж café\n',
        "rules": f"{RULESET}# ёж café\n",
        "serve": '[bots]\na = "tokentoken-a"\n# ёж café\n',
    }[command]
    path = tmp_path / "x.toml"
    path.write_bytes(text.replace("café", "caf\xe9").encode("utf-8").replace(b"\xc3\xa9", b"\xe9"))
    args = {
        "tournament": ["tournament", "--config", str(path), "--no-progress"],
        "rules": ["rules", str(path)],
        "serve": ["serve", "--tokens", str(path), "--port", "0"],
    }[command]
    line = text.count("\n")  # (the comment is the last line)
    _fails(_invoke(arena, args), 2, "x.toml", f"not UTF-8 text: line {line}, column 9 holds "
           "the byte 0xE9, 'é' in Latin-1 or Windows-1252", "save the file as UTF-8")  # fmt: skip


def test_a_byte_no_latin_1_text_has_is_named_alone(tmp_path: Path) -> None:
    """A byte that is no printable character in Windows-1252 either (0x81) is named by its
    value only, not guessed at."""
    path = tmp_path / "r.toml"
    path.write_bytes(b'preset = "classic"\nname = "\x81"\n')
    _fails(_invoke(arena, ["rules", str(path)]), 2,
           "not UTF-8 text: line 2, column 9 holds the byte 0x81 (invalid start byte)")  # fmt: skip


@pytest.mark.parametrize("value", ['"1001"', "1001"])
def test_setting_the_preset_inside_a_preset_string_is_told_a_whole_value(
    tmp_path: Path, value: str
) -> None:
    """Defect: ``--set ruleset.preset=1001`` over ``ruleset = "classic"`` was told to "set it
    whole: --set 'ruleset={preset = "classic", preset = "1001"}'": a key set twice, which
    pasted is refused as not TOML. The string is the preset: it is told ``--set
    'ruleset=1001'``, and that runs."""
    cfg = _toml(tmp_path, f'name = "cup"\nruleset = "classic"\nmax_deals = 1\n{BOTS}')
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--set", f"ruleset.preset={value}"])
    text = _fails(r, 2, "ruleset.preset: cannot set inside 'ruleset'",
                  f"set it whole: --set 'ruleset={value}'")  # fmt: skip
    assert "preset = " not in text
    # (another option inside it still gets the table with the preset)
    r = _invoke(arena, ["tournament", "--config", str(cfg), "--set", "ruleset.must_beat=true"])
    _fails(r, 2, """--set 'ruleset={preset = "classic", must_beat = true}'""")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f'name = "cup"\nseed = 3\n{BOTS}', "this is a tournament config"),
        ('[bots]\nsearch = { bot = "pimc", workers = 3 }\nb = "tokentoken-b"\n',
         "this is a tournament config"),
        (RULESET, "this is a ruleset file (it sets preset), not a tokens file: give it as "
         "--ruleset"),
    ],
)  # fmt: skip
def test_serve_says_what_a_file_given_as_tokens_is(tmp_path: Path, text: str, kind: str) -> None:
    """Defect: a tournament config given as ``arena serve --tokens`` was refused for its
    first key ("name: unknown key; the file holds a [bots] table"), a config's ``[bots]``
    of tables as "bots.search: the token must be a non-empty string", and a ruleset file
    as "preset: unknown key": each sent the organiser to edit a file that was right, for
    another option. The file is now said to be what it is (as `arena tournament` says of a
    tokens or ruleset file given as its config)."""
    tokens = _toml(tmp_path, text, "given.toml")
    before = tokens.read_bytes()
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                        "--record-dir", str(tmp_path / "records")])  # fmt: skip
    _fails(r, 2, "--tokens: ", "given.toml: ", kind)
    assert tokens.read_bytes() == before
    assert not (tmp_path / "records").exists()


def test_a_real_tokens_file_is_still_read(tmp_path: Path) -> None:
    """The check above refuses no tokens file: one whose token looks like a bot's name
    (``heuristic``, 9 characters) is a tokens file all the same (refused here only for its
    one bot, as before)."""
    tokens = _toml(tmp_path, '[bots]\na = "heuristic"\n', "tokens.toml")
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"])
    _fails(r, 2, "lists 1 bot(s), and a match of classic seats 3")


@pytest.mark.parametrize("name", ["cup.toml", "mybot.py", "CUP.TOML"])
def test_leaderboard_out_does_not_write_over_a_hand_written_file(tmp_path: Path, name: str) -> None:
    """Defect: ``arena leaderboard --db runs/x.sqlite --out tournaments/cup.toml`` (the shell
    completed the wrong file) replaced the config with the table, exit 0 ("wrote ..."): only
    a config named by ``--config`` was kept. An existing ``.toml`` (a config, ruleset or
    tokens file) or ``.py`` (a bot) is no leaderboard's: refused, exit 2, left as it was. A
    new file of that name is still written, and a leaderboard file written over."""
    db = tmp_path / "t.sqlite"
    make_demo_db(db)
    target = tmp_path / name
    target.write_text(f'name = "cup"\n{BOTS}', encoding="utf-8")
    for fmt in ([], ["--format", "json"]):
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(target), *fmt])
        _fails(r, 2, f"--out {target} would write over a", "name another file")
        assert target.read_text(encoding="utf-8") == f'name = "cup"\n{BOTS}'
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--season", "demo", "--out", str(target)])
    _fails(r, 2, "would write over a")
    fresh = tmp_path / f"new-{name}"
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(fresh)])
    assert r.exit_code == 0, r.output
    assert "μ" in fresh.read_text(encoding="utf-8")
    again = tmp_path / "lb.json"
    for _ in range(2):
        r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(again)])
        assert r.exit_code == 0, r.output
