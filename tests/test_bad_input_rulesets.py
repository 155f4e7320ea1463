"""Bad ruleset files (organiser audit): every command that reads one says the same line,
naming the file, the key and what was wrong. In-process through click's CliRunner; each
command refuses the file before it serves or plays anything."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main as arena

TOKENS = '[bots]\na = "token-aaaaaaaaaaaaaaaa"\nb = "token-bbbbbbbbbbbbbbbb"\n'
TOKENS += 'c = "token-cccccccccccccccc"\n'


def test_a_bot_named_twice_in_a_tokens_file_is_named_with_its_line(tmp_path: Path) -> None:
    """Defect (organiser audit): `arena serve --tokens FILE` with one bot named twice said
    only tomllib's "Cannot overwrite a value (at line 5, column 29)", naming no bot."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS + 'a = "token-dddddddddddddddd"\n', encoding="utf-8")
    r = CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"])
    output = " ".join(r.output.split())
    assert r.exit_code == 2, output
    assert "Invalid value for --tokens" in output
    assert 'line 5 (a = "token-dddddddddddddddd") sets a key that the file already set' in output
