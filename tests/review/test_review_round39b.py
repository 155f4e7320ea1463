"""Review of round 39's changes (second pass): defects found in them, each pinned here."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from sdk.cli import _load_made


@pytest.fixture
def clean_imports() -> Iterator[None]:
    """The loader imports a bot file under its own name and puts its folder first on
    ``sys.path``: both undone, so that no later test imports these files."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def _refusal(tmp_path: Path, stem: str, source: str) -> str:
    file = tmp_path / f"{stem}.py"
    file.write_text(source, encoding="utf-8")
    with pytest.raises(click.BadParameter) as info:
        _load_made(f"{file}:Mine")
    return str(info.value.message)


def test_a_new_that_needs_arguments_is_named_not_the_sdks_init(
    tmp_path: Path, clean_imports: None
) -> None:
    """Defect: a bot whose ``__new__`` needs an argument was refused naming "(bot.py:117,
    its __init__)": the SDK's own ``Bot.__init__``, which takes none, in the SDK's file. The
    constructor that cannot be called with no arguments is named, at its own line."""
    said = _refusal(
        tmp_path,
        "review39b_new",
        "from sdk import Bot\n\n\nclass Mine(Bot):\n    def __new__(cls, depth):\n"
        "        return super().__new__(cls)\n\n    def act(self, view):\n"
        "        return view.legal_actions[0]\n",
    )
    assert "(review39b_new.py:5, its __new__)" in said, said
    assert "bot.py" not in said, said


def test_a_dataclass_bot_with_fields_is_named_at_its_class(
    tmp_path: Path, clean_imports: None
) -> None:
    """Defect: a ``@dataclass`` bot with a field and no default was refused naming
    "(<string>:2, its __init__)": the file of the code dataclasses generate, which is no
    file. Its class's line is named."""
    said = _refusal(
        tmp_path,
        "review39b_dc",
        "from dataclasses import dataclass\n\nfrom sdk import Bot\n\n\n@dataclass\n"
        "class Mine(Bot):\n    depth: int\n\n    def act(self, view):\n"
        "        return view.legal_actions[0]\n",
    )
    assert "<string>" not in said, said
    assert "missing 1 required positional argument: 'depth'" in said, said
    assert "(review39b_dc.py:6, its generated __init__)" in said, said


def test_an_init_that_needs_arguments_is_still_named(tmp_path: Path, clean_imports: None) -> None:
    """Pinned (what the change keeps): an ``__init__`` that needs a keyword-only argument
    is named at its line."""
    said = _refusal(
        tmp_path,
        "review39b_kw",
        "from sdk import Bot\n\n\nclass Mine(Bot):\n    def __init__(self, *, depth):\n"
        "        super().__init__()\n\n    def act(self, view):\n"
        "        return view.legal_actions[0]\n",
    )
    assert "(review39b_kw.py:5, its __init__)" in said, said


def test_the_tokens_file_note_gives_a_command_that_can_be_pasted(tmp_path: Path) -> None:
    """Defect: `arena serve`'s note on a tokens file others can read ended "(chmod 600
    my bots.toml)" for a path with a space: pasted, that command names two files that do
    not exist, and the tokens stay readable. The path is quoted as a shell reads it; a
    plain path stays as it was."""
    from arena.cli.serve import _shared_tokens_note

    spaced = tmp_path / "my bots.toml"
    plain = tmp_path / "bots.toml"
    for f in (spaced, plain):
        f.write_text('[bots]\na = "x"\n')
        f.chmod(0o644)
    note = _shared_tokens_note(spaced)
    assert note is not None and note.endswith(f"(chmod 600 '{spaced}')"), note
    assert f"note: {spaced} is readable by every user of this machine" in note
    assert str(_shared_tokens_note(plain)).endswith(f"(chmod 600 {plain})")
    plain.chmod(0o600)
    assert _shared_tokens_note(plain) is None
