"""Round 53 (what spectators read): a stored match whose cards other matches of its
unfinished duplicate tournament are still to be dealt.

`arena web` refuses its deals (403) and `arena replay --list --export` leaves it out, so
that no player of those matches reads his opponents' hands there; `arena replay MATCH_ID`
showed it with nothing to say so, and an organiser who pasted it into the club's chat (the
first match's replay while the tournament runs) told every hand of the five seatings still
to come. It still shows it (the database is the organiser's), with a note on stderr naming
the matches still to be played; once they are, or the match is no duplicate, no note.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage
from tests.arena.fake_referee import make_config, run_fake

DOC = Path(__file__).parents[2] / "docs" / "record-format.md"


def _replay(db: Path, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["replay", "--db", str(db), *args])
    return r.exit_code, r.stdout, r.stderr


def _first_match(db: Path) -> str:
    with Storage.open_readonly(db) as st:
        return str(st.conn.execute("SELECT id FROM matches ORDER BY idx").fetchone()[0])


def test_a_match_whose_cards_are_still_to_be_dealt_is_shown_with_a_note(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "dup", deals="duplicate")
    run_fake(cfg, max_new_matches=7)  # 7 of 24: the first deal-seed set is unfinished
    mid = _first_match(cfg.db)
    for args in ((mid,), (mid[-6:],), ("--check", mid)):  # a suffix too; --check alike
        code, out, err = _replay(cfg.db, *args)
        assert code == 0, err
        assert out.startswith("Match: classic") or "OK: every action is legal" in out
        assert (
            f"note: match {mid} is dealt the same cards as 17 matches of tournament "
            f"{cfg.tournament_id} still to be played (duplicate deals): do not show it to "
            "their players before they are played" in err
        ), err
        assert "note:" not in out  # (stdout stays the match: `> match.txt` holds no note)
    run_fake(cfg)  # the rest is played: the tournament has ended
    code, _, err = _replay(cfg.db, mid)
    assert code == 0 and "note:" not in err, err


def test_no_note_for_independent_deals_or_a_record_file(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "ind", deals="independent")
    run_fake(cfg, max_new_matches=7)
    mid = _first_match(cfg.db)
    code, _, err = _replay(cfg.db, mid)
    assert code == 0 and "note:" not in err, err
    dup = make_config(tmp_path / "dup", deals="duplicate")
    run_fake(dup, max_new_matches=2)
    out = tmp_path / "exported"
    r = CliRunner().invoke(main, ["replay", "--list", "--db", str(dup.db), "--export", str(out)])
    assert r.exit_code == 0 and "2 match(es) left out" in r.stderr, r.stderr
    assert not list(out.glob("*.json"))  # (held back: a file of it is given by hand only)


def test_the_doc_says_so() -> None:
    doc = " ".join(DOC.read_text().split())
    assert "`arena replay MATCH_ID` still shows such a match" in doc
