"""The tournament process of the fault tests: the real runner and referee, in one process.

    python tests/faults/tournament_proc.py CONFIG.toml

Logs (with each bot's pid) go to stderr; the last stdout line is the outcome as JSON.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys

from arena.tournament import RunOptions, load_config, run

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
cfg = load_config(sys.argv[1])
outcome = run(cfg, RunOptions(progress=False))
out = {k: v for k, v in dataclasses.asdict(outcome).items() if k != "db"}
sys.stdout.write(json.dumps(out, default=str) + "\n")
