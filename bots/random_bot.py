"""The baseline: a uniformly random legal action, seeded per match.

The generator is this bot's own ``random.Random`` (never the global one), seeded from
``seed`` when given, else from the match's first view (seat, names, first hand), so a match
replays identically.
"""

from __future__ import annotations

import hashlib
import random

from engine import Action, PlayerView
from sdk.bot import Bot

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Picks uniformly among ``view.legal_actions``."""

    name = "random"
    quick = True  # a choice among the legal actions: microseconds

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self._seed = seed
        self.rng = random.Random(seed if seed is not None else 0)

    def on_match_start(self, view: PlayerView) -> None:
        if self._seed is None:
            key = f"{view.seat}|{','.join(view.players)}|{view.dealer}|{list(view.hand)}"
            self.rng.seed(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))

    def act(self, view: PlayerView) -> Action:
        return self.rng.choice(view.legal_actions)
