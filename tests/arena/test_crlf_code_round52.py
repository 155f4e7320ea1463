"""Round 52: a bot's code digest is of its text with LF line ends. A checkout writing CRLF
(git's ``core.autocrlf`` on Windows) digested other code than an LF one: a tournament
interrupted on one and resumed on the other read every bot as changed and started again.
The digests an arena before round 52 stored (the files' bytes, CRLF or not) are still read
as the same bots: such a tournament resumes (``as_stored``) and a bundled bot's stored
digest reads as this arena's (``code_now``, which a season's "changed since" uses)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from arena.storage import Storage
from arena.tournament.bundled import bundled_files, code_now
from arena.tournament.config import code_digest, load_config
from arena.tournament.runner import as_stored

BOT = (
    "from sdk import Bot\n\n\nclass Mine(Bot):\n"
    "    def act(self, view):\n        return view.legal_actions[0]\n"
)


def _config(tmp_path: Path, newline: str) -> Path:
    (tmp_path / "mine.py").write_bytes(BOT.replace("\n", newline).encode())
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "club"\ndb = "{tmp_path / "t.sqlite"}"\nmax_deals = 1\n\n'
        '[bots]\nmine = "mine.py:Mine"\nr1 = "random"\nr2 = "random"\n'
    )
    return path


def test_the_digest_is_of_the_text_not_its_line_ends(tmp_path: Path) -> None:
    lf, crlf = tmp_path / "lf" / "mine.py", tmp_path / "crlf" / "mine.py"
    for f, nl in ((lf, "\n"), (crlf, "\r\n")):
        f.parent.mkdir()
        f.write_bytes(BOT.replace("\n", nl).encode())
    assert code_digest([lf]) == code_digest([crlf]) is not None
    assert code_digest([lf], lines="raw") != code_digest([crlf], lines="raw")
    # (an LF file's digest is what an arena before round 52 stored of it)
    assert code_digest([lf]) == code_digest([lf], lines="raw")
    crlf.write_bytes(BOT.replace("Mine", "Yours").encode())  # (an edit is seen as ever)
    assert code_digest([lf]) != code_digest([crlf])


@pytest.mark.parametrize(("played", "resumed"), [("\r\n", "\n"), ("\n", "\r\n")])
def test_a_tournament_an_older_arena_stored_resumes_on_the_other_checkout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, played: str, resumed: str
) -> None:
    older = load_config(_config(tmp_path, played))
    # What an arena before round 52 stored: the digest of the bytes of that checkout.
    stored_code = code_digest([tmp_path / "mine.py"], lines="raw")
    bots = tuple(
        dataclasses.replace(b, code=stored_code) if b.name == "mine" else b for b in older.bots
    )
    older = dataclasses.replace(older, bots=bots)
    with Storage(older.db) as st:
        st.ensure_tournament(older.tournament_id, name="club", fingerprint=older.fingerprint,
                             config=older.to_json(), total_matches=6,
                             bots=[(b.name, b.bot or "") for b in older.bots])  # fmt: skip
    now = load_config(_config(tmp_path, resumed))
    with caplog.at_level(logging.INFO):
        adopted = as_stored(now)
    assert adopted.tournament_id == older.tournament_id
    if played == "\r\n":  # (its bytes are not the text's: read as the same code, and said)
        assert now.tournament_id != older.tournament_id
        assert "digested the code of mine with its line ends as they were" in caplog.text
    else:  # (an LF file's bytes are its text: the same digest, nothing to say)
        assert now.tournament_id == older.tournament_id
    # an edit is another bot, as ever
    (tmp_path / "mine.py").write_bytes((BOT + "# edited\n").replace("\n", resumed).encode())
    edited = load_config(tmp_path / "t.toml")
    assert as_stored(edited).tournament_id == edited.tournament_id != older.tournament_id


def test_a_bundled_bots_digest_from_a_crlf_checkout_reads_as_this_arenas(tmp_path: Path) -> None:
    files = bundled_files("counting")
    assert len(files) > 1
    crlf = code_digest(files, lines="crlf")
    assert crlf != code_digest(files)
    assert code_now("counting", crlf) == code_digest(files)
    assert code_now("counting", "0123456789abcdef") == "0123456789abcdef"  # (unknown: as is)
