"""``arena serve --db`` refuses a database it could not write before it listens, as
``arena tournament`` does (:meth:`arena.storage.Storage.check_writable`)."""

from __future__ import annotations

from pathlib import Path

from arena.cli import main as arena
from arena.web.demo import make_demo_db
from tests.cli.test_bad_input import _fails, _invoke, _toml
from tests.support.read_only import read_only


def test_serve_refuses_a_read_only_database_as_a_bad_db_before_listening(tmp_path: Path) -> None:
    """Before: SQLite opened the immutable file read-only without a word and serve went on
    to register its tournament, failing there with exit 1 and no option named. Now exit 2,
    naming --db and the file, and the database is left as it was."""
    db = tmp_path / "ro.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    with read_only(db):
        before = db.read_bytes()
        tokens = _toml(tmp_path, '[bots]\na = "tokentoken-a"\nb = "tokentoken-b"\n'
                                 'c = "tokentoken-c"\n', "tokens.toml")  # fmt: skip
        tokens.chmod(0o600)
        r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0", "--db", str(db)])
        text = _fails(r, 2, f"{db} is read-only to this user")
        assert "--db" in text
        assert "listening" not in text.lower()
        assert db.read_bytes() == before
