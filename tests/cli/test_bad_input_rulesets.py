"""Bad ruleset files (organiser audit): every command that reads one says the same line,
naming the file, the key and what was wrong. In-process through click's CliRunner; each
command refuses the file before it serves or plays anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from sdk.cli import main as arena_bot

TOKENS = '[bots]\na = "token-aaaaaaaaaaaaaaaa"\nb = "token-bbbbbbbbbbbbbbbb"\n'
TOKENS += 'c = "token-cccccccccccccccc"\n'


def _commands(tmp: Path, ruleset: Path) -> dict[str, list[str]]:
    """Each command that reads a ruleset file, given ``ruleset``."""
    tokens = tmp / "tokens.toml"
    tokens.write_text(TOKENS, encoding="utf-8")
    config = tmp / "t.toml"
    config.write_text(f'name = "t"\nruleset = "{ruleset}"\ndb = "{tmp / "t.sqlite"}"\n'
                      f'out = "{tmp / "out"}"\n[bots]\na = "random"\nb = "random"\n'
                      'c = "random"\n', encoding="utf-8")  # fmt: skip
    return {
        "arena rules": ["rules", str(ruleset)],
        "arena serve": [
            "serve",
            "--tokens",
            str(tokens),
            "--ruleset",
            str(ruleset),
            "--port",
            "0",
            "--record-dir",
            str(tmp / "records"),
        ],
        "arena tournament": ["tournament", "--config", str(config)],
        "arena-bot try": ["try", "random", "--ruleset", str(ruleset), "-n", "1"],
    }


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('preset = "classic"\nmust_bet = true\n',
         "must_bet: unknown option (did you mean 'must_beat'?); known options: name, players,"),
        ('preset = "classic"\nconcede = "penalty"\nconcede = "off"\n',
         "not valid TOML: Cannot overwrite a value (at line 3, column 16): "
         'line 3 (concede = ...) sets a key that the file already set'),
        ('preset = "classic"\ntarget = "x"\n', "target: expected an integer, got 'x'"),
        ('preset = "classic"\nrounding = 1.5\n', "rounding: expected an integer, got 1.5"),
        ('preset = "classic"\nbarrel_at = 2000\n',
         "barrel_at: must be below target 1000 when barrel = true, got 2000"),
        ('preset = "classic"\nbid_step = 10\nopening_bid = 105\n',
         "opening_bid: must be a multiple of bid_step 10, got 105"),
        ('preset = "clasic"\n',
         "preset: unknown preset 'clasic' (did you mean 'classic'?); known: classic, 1001"),
        ("preset = 1001\n", 'preset: expected a string, got 1001 (quote it: preset = "1001")'),
        ('preset = "classic"\nconcede = "penalt"\n',
         "concede: must be one of 'free', 'penalty', 'off', got 'penalt' "
         "(did you mean 'penalty'?)"),
    ],
    ids=["typo", "set-twice", "type", "float", "range", "contradiction", "preset",
         "preset-number", "choice"],
)  # fmt: skip
def test_every_command_says_the_same_line_of_a_bad_ruleset_file(
    tmp_path: Path, text: str, words: str
) -> None:
    """Defect (organiser audit): `arena-bot try --ruleset FILE` and `arena serve --ruleset
    FILE` named the key but not the file, `arena rules FILE` and a tournament's `ruleset =
    "FILE"` did, each in its own words (the file twice in one line for a bad TOML file); a
    misspelt option had no "did you mean", a key set twice no line. One line now, in the
    same words from every command, naming the file first."""
    ruleset = tmp_path / "house.toml"
    ruleset.write_text(text, encoding="utf-8")
    for command, args in _commands(tmp_path, ruleset).items():
        main = arena_bot if command.startswith("arena-bot") else arena
        r = CliRunner().invoke(main, args)
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        output = " ".join(r.output.split())  # (in case a line is wrapped)
        assert r.exit_code == 2, (command, output)
        assert f"{ruleset}: {words}" in output, (command, output)
        assert output.count(str(ruleset)) == 1, (command, output)  # (not twice)
    assert not (tmp_path / "records").exists() and not (tmp_path / "out").exists()


def test_a_bot_named_twice_in_a_tokens_file_is_named_with_its_line(tmp_path: Path) -> None:
    """Defect (organiser audit): `arena serve --tokens FILE` with one bot named twice said
    only tomllib's "Cannot overwrite a value (at line 5, column 29)", naming no bot. The
    line is quoted without its value (docs check: it printed the bot's secret token)."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS + 'a = "token-dddddddddddddddd"\n', encoding="utf-8")
    r = CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"])
    output = " ".join(r.output.split())
    assert r.exit_code == 2, output
    assert "Invalid value for --tokens" in output
    assert "line 5 (a = ...) sets a key that the file already set" in output
    assert "token-dddd" not in output  # (a token is a secret: its key is quoted, not it)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("target = true", "target: expected an integer, got true"),
        ("must_beat = { a = 1 }", "must_beat: expected true or false, got { a = 1 }"),
        ('barrel_mode = ["one"]', "got ['one']"),
        ("max_deals = 2020-01-01", "max_deals: expected an integer, got 2020-01-01"),
    ],
)
def test_a_ruleset_files_value_of_the_wrong_type_is_quoted_as_toml(
    tmp_path: Path, line: str, said: str
) -> None:
    """Defect (organiser audit 24): a ruleset file's wrong value was quoted as Python
    writes it (got True, {'a': 1}, datetime.date(2020, 1, 1)), not as the organiser wrote
    it; the tournament config's errors quote TOML, and both use the same function now."""
    f = tmp_path / "house.toml"
    f.write_text(f'preset = "classic"\n{line}\n', encoding="utf-8")
    r = CliRunner().invoke(arena, ["rules", str(f)])
    assert r.exit_code == 2, r.output
    assert said in " ".join(r.output.split()), r.output
