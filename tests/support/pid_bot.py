"""A bot for the tests of ``arena-bot run --workers``: it plays the first legal action and
appends a line per call to the file ``PID_BOT_LOG`` names: ``<match id> <what> <pid>``.

``PID_BOT_MODE`` makes it misbehave when it plays a card: ``raise`` (ValueError),
``exit`` (it leaves: ``SystemExit(4)``), ``hang`` (it never returns), ``die`` (its
process exits, ``os._exit(3)``, the first time only: a file beside the log remembers it).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from engine import Action, Phase, PlayerView
from sdk import Bot


class PidBot(Bot):
    def _note(self, what: str) -> None:
        with open(os.environ["PID_BOT_LOG"], "a") as fh:
            fh.write(f"{self.match_id} {what} {os.getpid()}\n")

    def on_match_start(self, view: PlayerView) -> None:
        self._note("start")

    def act(self, view: PlayerView) -> Action:
        timed = self.deadline is not None and self.deadline.left() > 0
        self._note("act" if timed else "act-without-a-deadline")
        if view.phase == Phase.PLAYING:
            mode = os.environ.get("PID_BOT_MODE", "")
            if mode == "raise":
                raise ValueError("boom")
            if mode == "exit":
                raise SystemExit(4)
            if mode == "hang":  # a call that never returns
                self._note("hang")
                threading.Event().wait()
            died = Path(os.environ["PID_BOT_LOG"] + ".died")
            if mode == "die" and not died.exists():
                died.touch()
                os._exit(3)
        return view.legal_actions[0]
