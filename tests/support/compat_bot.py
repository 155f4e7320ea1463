"""A bot that checks every view it is given is whole, for the protocol compatibility tests.

tests/e2e/test_old_clients_round54.py runs it with the SDK of older commits (loaded as
``compat_bot.py:Whole`` by their ``arena-bot run``) against today's referee, and with
today's SDK against an older referee. A referee that sent an older client less than it
asked for (the deal results, bids or tricks that the "results_once" and "deal_once"
features leave out, to a client that did not ask for them) would not make that client's
SDK fail: the bot would only decide on a view missing them. So this bot writes each hole
it finds to the file ``COMPAT_BOT_LOG`` names, and plays a random legal action.

It uses only what every SDK since the first has: ``Bot.act`` and the view's ``seat``,
``phase``, ``deal_number``, ``hand``, ``bids``, ``trick``, ``tricks``, ``deal_results``
and ``legal_actions``.
"""

from __future__ import annotations

import os
import random
from typing import Any

from sdk import Bot

__all__ = ["Whole", "holes"]

#: The cards a seat holds at the start of the play, 3 at the table (after the passing).
HAND_AT_PLAY = 8


def holes(view: Any, last: list[int]) -> list[str]:
    """What ``view`` lacks that a whole view has. ``last`` is ``[deal, bids]`` of the view
    before (updated): within a deal the auction only grows. (A bot of ``arena serve`` plays
    one match at a time: a new match starts at deal 0, another deal than the last's.)"""
    found: list[str] = []
    if len(view.deal_results) != view.deal_number:
        found.append(
            f"deal {view.deal_number}: {len(view.deal_results)} earlier deal results,"
            f" not {view.deal_number}"
        )
    phase = view.phase.name
    if phase != "BIDDING" and len(view.bids) < 2:
        # 3 at the table: the auction ends after two passes at least.
        found.append(f"deal {view.deal_number} ({phase}): {len(view.bids)} bids in the view")
    if last[0] == view.deal_number and len(view.bids) < last[1]:
        found.append(
            f"deal {view.deal_number}: {len(view.bids)} bids, fewer than the"
            f" {last[1]} of the view before"
        )
    last[:] = [view.deal_number, len(view.bids)]
    if phase == "PLAYING" and len(view.players) == 3:
        played = sum(1 for t in view.tricks for s, _ in t.cards if s == view.seat)
        played += sum(1 for s, _ in view.trick if s == view.seat)
        if len(view.hand) + played != HAND_AT_PLAY:
            found.append(
                f"deal {view.deal_number}: {len(view.hand)} cards held and {played} played"
                f" in {len(view.tricks)} completed tricks: not the {HAND_AT_PLAY} dealt"
            )
    return found


class Whole(Bot):
    """Random legal actions; every hole in a view written to ``$COMPAT_BOT_LOG``."""

    name = "whole"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last = [-1, 0]
        self._rng = random.Random(54)

    def act(self, view: Any) -> Any:
        found = holes(view, self._last)
        log = os.environ.get("COMPAT_BOT_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write("".join(f"{line}\n" for line in found) or "ok\n")
        return self._rng.choice(view.legal_actions)
