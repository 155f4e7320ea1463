"""Referee memory at 100 concurrent tables (target: peak RSS under 200 MB).

The :mod:`arena.bench.referee` set-up (one referee process, three real SDK random bots, each
seated at every table) with 100 matches at once, always, until 100 matches have ended (so
that matches at every stage, up to their last deal, have been held at once); the referee
process reports its resident set before the first match (bots connected, server up) and
its peak (``VmHWM``) at the end. ``decisions_per_s`` is measured in the first ``seconds``.

::

    .venv/bin/python -m arena.bench.memory --tables 100 --seconds 3
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from arena import strict_json
from arena.bench.referee import measure_referee

__all__ = ["MEMORY_TARGET_MB", "bench_memory"]

#: The target for the referee's peak resident set at 100 tables.
MEMORY_TARGET_MB = 200.0


def bench_memory(seconds: float = 3.0, tables: int = 100) -> dict[str, Any]:
    """Peak and idle RSS (MB) of the referee process at ``tables`` concurrent matches, and
    the target (``targets``: value, target, met; the value must stay under the target)."""
    r = measure_referee(tables, None, seconds, min_matches=tables)
    peak, idle = r["peak_rss_mb"], r["rss_idle_mb"]
    return {
        f"tables_{tables}": {
            "peak_rss_mb": peak,
            "rss_idle_mb": idle,
            "kb_per_table": round((peak - idle) * 1024 / tables, 1),
            "decisions_per_s": r["decisions_per_s"],
        },
        "targets": {
            f"peak_rss_mb_tables_{tables}": {
                "value": peak,
                "target": MEMORY_TARGET_MB,
                "met": peak < MEMORY_TARGET_MB,
            }
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bench.memory [--tables N] [--seconds S]``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--tables", type=int, default=100)
    a = p.parse_args(argv)
    print(strict_json.dumps(bench_memory(a.seconds, a.tables), indent=2))


if __name__ == "__main__":
    main()
