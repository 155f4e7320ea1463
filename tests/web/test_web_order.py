"""The order of `arena web`'s match lists: the newest match first (docs/web.md)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web import DataSource
from arena.web.demo import demo_record
from tests.support.harness import get_json

BOTS = ("a", "b", "c", "d")
MATCHES = 8
TABLES = list(itertools.combinations(BOTS, 3))
# match i: table i % 4 (so each bot sits in 6 of the 8, and "?bot=" picks a subset)
SEATS = [TABLES[i % len(TABLES)] for i in range(MATCHES)]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web-order") / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("ord", name="ord", fingerprint="f", total_matches=MATCHES,
                             config={"name": "ord", "ruleset": "classic"},
                             bots=[(b, "demo") for b in BOTS])  # fmt: skip
        for i, seats in enumerate(SEATS):  # later in the schedule = finished later
            st.save_match("ord", match_id=f"ord-m{i:05d}", index=i, table=i % len(TABLES),
                          set_no=0, seed=i, seats=seats,
                          record=demo_record(i, seats, max_deals=2),
                          started_at=1_700_000_000.0 + 60 * i,
                          finished_at=1_700_000_030.0 + 60 * i)  # fmt: skip
    return path


def _indices(doc: Any) -> list[int]:
    return [m["index"] for m in doc["matches"]]


def _newest_first(bot: str | None = None, limit: int | None = None) -> list[int]:
    out = [i for i in reversed(range(MATCHES)) if bot is None or bot in SEATS[i]]
    return out if limit is None else out[:limit]


def test_api_matches_lists_the_newest_first(base: str) -> None:
    """Mutation audit: without ``results.reverse()``, ``/api/matches`` listed the oldest
    match first, and ``?limit=N`` then gave the oldest N (of the latest N read, with no
    ``bot``) or the first N (with a ``bot``). The newest (latest in the schedule, finished
    last) comes first in every form."""
    assert _indices(get_json(base, "/api/matches")) == _newest_first() == [7, 6, 5, 4, 3, 2, 1, 0]
    assert _indices(get_json(base, "/api/matches?limit=3")) == _newest_first(limit=3) == [7, 6, 5]
    assert _indices(get_json(base, "/api/matches?limit=1")) == [7]
    assert _indices(get_json(base, "/api/matches?limit=0")) == []
    for bot in BOTS:
        want = _newest_first(bot)
        assert len(want) == 6 and want == sorted(want, reverse=True)
        assert _indices(get_json(base, f"/api/matches?bot={bot}")) == want, bot
        assert _indices(get_json(base, f"/api/matches?bot={bot}&limit=2")) == want[:2], bot
    d = get_json(base, "/api/matches?bot=d&limit=4")["matches"]
    assert [m["match_id"] for m in d] == [f"ord-m{i:05d}" for i in _newest_first("d", 4)]
    assert all("d" in m["players"] for m in d)


def test_data_source_matches_newest_first(db: Path) -> None:
    """Mutation audit (as above, without the HTTP server): ``DataSource.matches``."""
    src = DataSource(db)
    assert _indices(src.matches(None, bot=None, limit=None)) == _newest_first()
    assert _indices(src.matches("ord", bot=None, limit=2)) == [7, 6]
    assert _indices(src.matches(None, bot="a", limit=None)) == _newest_first("a")
    assert _indices(src.matches(None, bot="a", limit=3)) == _newest_first("a", 3)


def test_limit_zero_points_at_the_first_page(db: Path) -> None:
    """Defect: ``/api/matches?limit=0`` (only the totals asked) answered ``next_before:
    null``, "the last page", of a tournament with matches; its next page now begins with the
    newest match below ``before`` (all of them, without it)."""
    src = DataSource(db)
    page = src.matches(None, bot=None, limit=0)
    assert page["matches"] == [] and page["matches_total"] == MATCHES
    assert page["next_before"] == 8
    assert _indices(src.matches(None, bot=None, limit=2, before=page["next_before"])) == [7, 6]
    below = src.matches(None, bot="a", limit=0, before=5)
    want = [i for i in _newest_first("a") if i < 5]
    assert _indices(src.matches(None, bot="a", limit=9, before=below["next_before"])) == want
    last = src.matches(None, bot=None, limit=0, before=0)
    assert last["matches"] == [] and last["next_before"] is None
