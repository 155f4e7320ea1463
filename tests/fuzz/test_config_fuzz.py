"""Fuzzing the tournament config: the documented example configs, mutated (a key removed,
set to a value of any TOML type, an unknown key added, a table replaced), must load or be
refused with a ``ConfigError`` naming the file and a key: never another exception (a
traceback on the command line).

The short run is part of ``make test``; ``make fuzz`` runs the long one (``slow``).
"""

from __future__ import annotations

import copy
import datetime
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.tournament.config import ConfigError, parse_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [
    tomllib.loads((ROOT / "tournaments" / f"{name}.toml").read_text(encoding="utf-8"))
    for name in ("default", "1001", "1001-4p", "remote")
]
#: Keys the config has, or that a typo or a wrong nesting might give it.
KEYS = [
    "name", "id", "ruleset", "bots", "matches_per_table", "max_deals", "seed", "deals",
    "concurrency", "db", "out", "host", "port", "bot_wait_s", "match_timeout_s",
    "deadlines", "referee", "ratings", "tls", "decision_ms", "preset", "players", "bot",
    "command", "cwd", "env", "remote", "token", "token_env", "cert", "key", "server_name",
    "max_strikes", "reconnect_grace_s", "draw_probability", "time_bank_ms", "x", "é", "",
]  # fmt: skip

#: Every value TOML can give: a date or a time too, which JSON has not.
SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=12),
    st.sampled_from(
        [
            "classic",
            "1001",
            "1001-4p",
            "random",
            "pimc",
            "x.py:X",
            "m:C",
            "duplicate",
            "independent",
            "::1",
            "[::1]",
            "0.0.0.0",
            "runs/x.sqlite",
            "~",
            "/",
            ".",
            "{python} x.py {arena}",
            "FRIEND_TOKEN",
        ]
    ),
    st.dates(),
    st.times(),
    st.datetimes(timezones=st.none() | st.just(datetime.UTC)),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=8,
)


def _paths(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(EXAMPLES)))
    node: Any
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths)) if paths else ("name",)
        if draw(st.booleans()):  # somewhere new: an unknown key, or a known one misplaced
            path = (*path[:-1], draw(st.sampled_from(KEYS)))
        node = data
        for part in path[:-1]:
            node = node[part]
        if draw(st.integers(0, 3)) == 0:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = draw(VALUES)
    return data


def _check(data: dict[str, Any], tmp: Path, tally: Counter[str]) -> None:
    tally["config mutations tried"] += 1
    try:
        parse_config(data, source="fuzz.toml", base_dir=tmp)
    except ConfigError as e:
        tally["config mutations refused"] += 1
        assert str(e).startswith("fuzz.toml: "), e
        # (a key named: an empty one as "", not as nothing, "fuzz.toml: : unknown key")
        assert e.key and not e.key.endswith("."), e


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=mutated())
def test_a_mutated_config_loads_or_is_refused_naming_a_key(
    data: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, tally: Counter[str]
) -> None:
    _check(data, tmp_path_factory.getbasetemp(), tally)


@pytest.mark.slow
@pytest.mark.timeout(1500)  # 20,000 configs: past the default 300 s on a busy machine
@settings(max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated())
def test_a_mutated_config_loads_or_is_refused_naming_a_key_long(
    data: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, tally: Counter[str]
) -> None:
    _check(data, tmp_path_factory.getbasetemp(), tally)
